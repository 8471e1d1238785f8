//! A fake sandbox factory for tests and the interop harness: an in-memory
//! filesystem per sandbox and a command runner that knows `echo`, `cat`,
//! `ls`, `exit N`, `sleep N`, `panic` and a `python3 FILE` that can only
//! `print(...)` integers sums and string literals.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ephemeral_mcp::{
    About, BoxFuture, CommandOutput, FileEntry, SandboxFactory, SessionSandbox, ToolFailure,
};

/// What the factory has done, for tests to look at.
#[derive(Default)]
pub struct Stats {
    pub created: AtomicUsize,
    pub ended: AtomicUsize,
    pub callers: Mutex<Vec<Option<String>>>,
}

impl Stats {
    pub fn created(&self) -> usize {
        self.created.load(Ordering::SeqCst)
    }
    pub fn ended(&self) -> usize {
        self.ended.load(Ordering::SeqCst)
    }
    pub fn callers(&self) -> Vec<Option<String>> {
        self.callers.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

/// Makes [`FakeSandbox`]es; accepts the keys it was given.
pub struct FakeFactory {
    pub stats: Arc<Stats>,
    pub keys: Vec<String>,
    /// When set, `create` fails with this message.
    pub fail_create: Option<String>,
}

impl FakeFactory {
    pub fn new(keys: &[&str]) -> Arc<Self> {
        Arc::new(Self {
            stats: Arc::new(Stats::default()),
            keys: keys.iter().map(|k| (*k).to_owned()).collect(),
            fail_create: None,
        })
    }
}

pub fn about() -> About {
    About {
        isolation: "wasm".into(),
        shell_programs: vec!["echo".into(), "cat".into(), "ls".into()],
        python_version: Some("3.12.0".into()),
        python_packages: vec![("fake".into(), "1.0".into())],
        node_version: None,
    }
}

impl SandboxFactory for FakeFactory {
    fn create(
        &self,
        caller: Option<&str>,
    ) -> BoxFuture<'_, Result<Box<dyn SessionSandbox>, ToolFailure>> {
        let caller = caller.map(str::to_owned);
        Box::pin(async move {
            if let Some(message) = &self.fail_create {
                return Err(ToolFailure(message.clone()));
            }
            if let Ok(mut callers) = self.stats.callers.lock() {
                callers.push(caller);
            }
            self.stats.created.fetch_add(1, Ordering::SeqCst);
            Ok(Box::new(FakeSandbox {
                files: Mutex::new(BTreeMap::new()),
                stats: self.stats.clone(),
                ended: AtomicBool::new(false),
            }) as Box<dyn SessionSandbox>)
        })
    }

    fn authorize<'a>(&'a self, key: &'a str) -> BoxFuture<'a, bool> {
        Box::pin(async move { self.keys.iter().any(|k| k == key) })
    }
}

/// One fake sandbox: files in a map, commands by hand.
pub struct FakeSandbox {
    files: Mutex<BTreeMap<String, Vec<u8>>>,
    stats: Arc<Stats>,
    ended: AtomicBool,
}

const WORKDIR: &str = "/work";

fn absolute(path: &str) -> String {
    let joined = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("{WORKDIR}/{path}")
    };
    let mut parts: Vec<&str> = Vec::new();
    for part in joined.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            part => parts.push(part),
        }
    }
    format!("/{}", parts.join("/"))
}

fn output(exit_code: i32, stdout: String, stderr: String, started: Instant) -> CommandOutput {
    CommandOutput {
        exit_code,
        stdout,
        stderr,
        duration_ms: started.elapsed().as_millis() as u64,
        truncated: false,
        limit: None,
    }
}

/// `print(...)` of an integer sum or a quoted string, line by line.
fn fake_python(source: &str) -> Result<String, String> {
    let mut out = String::new();
    for line in source.lines().map(str::trim).filter(|l| !l.is_empty()) {
        let inner = line
            .strip_prefix("print(")
            .and_then(|l| l.strip_suffix(')'))
            .ok_or_else(|| format!("fake python: cannot run {line:?}"))?
            .trim();
        if let Some(text) = inner
            .strip_prefix('\'')
            .and_then(|s| s.strip_suffix('\''))
            .or_else(|| inner.strip_prefix('"').and_then(|s| s.strip_suffix('"')))
        {
            out.push_str(text);
        } else {
            let mut sum: i64 = 0;
            for term in inner.split('+') {
                sum += term
                    .trim()
                    .parse::<i64>()
                    .map_err(|_| format!("fake python: cannot evaluate {inner:?}"))?;
            }
            out.push_str(&sum.to_string());
        }
        out.push('\n');
    }
    Ok(out)
}

impl FakeSandbox {
    fn check(&self) -> Result<(), ToolFailure> {
        if self.ended.load(Ordering::SeqCst) {
            Err(ToolFailure("the sandbox has ended".into()))
        } else {
            Ok(())
        }
    }

    fn file(&self, path: &str) -> Option<Vec<u8>> {
        self.files.lock().ok()?.get(&absolute(path)).cloned()
    }
}

impl SessionSandbox for FakeSandbox {
    fn run(
        &self,
        command: String,
        stdin: Option<String>,
        _timeout: Option<Duration>,
    ) -> BoxFuture<'_, Result<CommandOutput, ToolFailure>> {
        Box::pin(async move {
            self.check()?;
            let started = Instant::now();
            let words: Vec<&str> = command.split_whitespace().collect();
            let Some((program, args)) = words.split_first() else {
                return Ok(output(0, String::new(), String::new(), started));
            };
            Ok(match *program {
                "echo" => output(0, format!("{}\n", args.join(" ")), String::new(), started),
                "cat" if args.is_empty() => {
                    output(0, stdin.unwrap_or_default(), String::new(), started)
                }
                "cat" => match self.file(args[0]) {
                    Some(data) => output(
                        0,
                        String::from_utf8_lossy(&data).into_owned(),
                        String::new(),
                        started,
                    ),
                    None => output(
                        1,
                        String::new(),
                        format!("cat: {}: No such file or directory\n", args[0]),
                        started,
                    ),
                },
                "ls" => {
                    let files = self.files.lock().map(|f| f.clone()).unwrap_or_default();
                    let names: Vec<String> = files.keys().cloned().collect();
                    output(0, format!("{}\n", names.join("\n")), String::new(), started)
                }
                "exit" => output(
                    args.first().and_then(|a| a.parse().ok()).unwrap_or(0),
                    String::new(),
                    String::new(),
                    started,
                ),
                "sleep" => {
                    let seconds: f64 = args.first().and_then(|a| a.parse().ok()).unwrap_or(0.0);
                    tokio::time::sleep(Duration::from_secs_f64(seconds)).await;
                    // Ended while it slept: say so (the idle tests look).
                    self.check()?;
                    output(0, String::new(), String::new(), started)
                }
                "panic" => panic!("the fake sandbox was asked to panic"),
                "python3" => match args.first().and_then(|path| self.file(path)) {
                    None => output(
                        2,
                        String::new(),
                        "python3: can't open file\n".into(),
                        started,
                    ),
                    Some(source) => match fake_python(&String::from_utf8_lossy(&source)) {
                        Ok(stdout) => output(0, stdout, String::new(), started),
                        Err(stderr) => output(1, String::new(), stderr, started),
                    },
                },
                other => output(
                    127,
                    String::new(),
                    format!("sh: {other}: not found\n"),
                    started,
                ),
            })
        })
    }

    fn write_file(
        &self,
        path: String,
        data: Vec<u8>,
    ) -> BoxFuture<'_, Result<String, ToolFailure>> {
        Box::pin(async move {
            self.check()?;
            let path = absolute(&path);
            self.files
                .lock()
                .map_err(|_| ToolFailure("poisoned".into()))?
                .insert(path.clone(), data);
            Ok(path)
        })
    }

    fn read_file(&self, path: String) -> BoxFuture<'_, Result<Vec<u8>, ToolFailure>> {
        Box::pin(async move {
            self.check()?;
            self.file(&path)
                .ok_or_else(|| ToolFailure(format!("no such file: {}", absolute(&path))))
        })
    }

    fn list_files(
        &self,
        dir: Option<String>,
    ) -> BoxFuture<'_, Result<Vec<FileEntry>, ToolFailure>> {
        Box::pin(async move {
            self.check()?;
            let dir = absolute(dir.as_deref().unwrap_or(WORKDIR));
            let files = self
                .files
                .lock()
                .map_err(|_| ToolFailure("poisoned".into()))?
                .clone();
            let prefix = format!("{}/", dir.trim_end_matches('/'));
            let mut entries: BTreeMap<String, FileEntry> = BTreeMap::new();
            for (path, data) in &files {
                let Some(rest) = path.strip_prefix(&prefix) else {
                    continue;
                };
                let (name, kind, size) = match rest.split_once('/') {
                    Some((folder, _)) => (folder, "dir", 0),
                    None => (rest, "file", data.len() as u64),
                };
                let full = format!("{prefix}{name}");
                entries.entry(full.clone()).or_insert(FileEntry {
                    path: full,
                    kind: kind.into(),
                    size,
                    mode: if kind == "dir" { "0755" } else { "0644" }.into(),
                    modified_at: "2025-01-01T00:00:00Z".into(),
                });
            }
            Ok(entries.into_values().collect())
        })
    }

    fn end(&self) -> BoxFuture<'static, ()> {
        let first = !self.ended.swap(true, Ordering::SeqCst);
        let stats = self.stats.clone();
        Box::pin(async move {
            if first {
                stats.ended.fetch_add(1, Ordering::SeqCst);
            }
        })
    }
}
