//! Real jailed workers for the tests: the `ephemeral-worker` binary of this
//! crate, the machine's component cache (warmed once per test process).

#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

use ephemeral_runtime::{Limits, Runtime, RuntimeConfig};
use ephemeral_worker::host::WorkerConfig;
use ephemeral_worker::{ExecEvent, IdleWorker, WorkerHandle};

pub fn config() -> WorkerConfig {
    static DIRS: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    // On a thread of its own: the runtime blocks on tokio internally and
    // the tests call this from async code.
    let (cache, programs) = DIRS.get_or_init(|| {
        std::thread::spawn(|| {
            let runtime = Runtime::new(RuntimeConfig::default()).expect("runtime");
            runtime.warm_cache().expect("warm the cache");
            (runtime.cache().dir().to_path_buf(), runtime.programs_dir())
        })
        .join()
        .expect("warm-up thread")
    });
    WorkerConfig::detect(
        PathBuf::from(env!("CARGO_BIN_EXE_ephemeral-worker")),
        Vec::new(),
        cache.clone(),
        programs.clone(),
    )
    .expect("this host can jail workers (root, user namespaces, cgroups)")
}

pub async fn worker_with(config: &WorkerConfig, limits: Limits) -> WorkerHandle {
    let idle = IdleWorker::spawn(config).await.expect("spawn a worker");
    idle.start(limits, Vec::new()).await.expect("start the run")
}

pub async fn worker() -> WorkerHandle {
    worker_with(&config(), Limits::default()).await
}

/// A command's stdout, stderr and exit code (or its failure).
#[derive(Debug, Default)]
pub struct Ran {
    pub stdout: String,
    pub stderr: String,
    pub exit: Option<ephemeral_runtime::ExecOutcome>,
    pub failed: Option<String>,
}

pub async fn run(worker: &WorkerHandle, command: &str) -> Ran {
    run_for(worker, command, Duration::from_secs(30)).await
}

pub async fn run_for(worker: &WorkerHandle, command: &str, timeout: Duration) -> Ran {
    let mut events = worker.exec(command, timeout);
    let mut ran = Ran::default();
    while let Some(event) = events.recv().await {
        match event {
            ExecEvent::Output(ephemeral_runtime::Stream::Stdout, d) => {
                ran.stdout.push_str(&String::from_utf8_lossy(&d))
            }
            ExecEvent::Output(_, d) => ran.stderr.push_str(&String::from_utf8_lossy(&d)),
            ExecEvent::Exit(o) => ran.exit = Some(o),
            ExecEvent::Failed(f) => ran.failed = Some(f),
        }
    }
    ran
}

/// `/proc/PID/status` as `key → value`.
pub fn status(pid: u32) -> std::collections::HashMap<String, String> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.to_string(), v.trim().to_string()))
        .collect()
}

/// The worker's process is reaped and its cgroup folders removed.
pub async fn assert_gone(pid: u32, cgroups: &[PathBuf]) {
    // The driver reaps and removes right after the failure is reported.
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        !std::path::Path::new(&format!("/proc/{pid}")).exists(),
        "worker {pid} not reaped"
    );
    for dir in cgroups {
        assert!(!dir.exists(), "cgroup {} left behind", dir.display());
    }
}

/// An unjailed worker process (the protocol and its decoder are the
/// jailed one's) with its stream on fd 3, past its `Ready`: for tests that
/// speak raw frames to it. stderr is kept for inspection.
pub fn start_unjailed() -> (std::process::Child, std::os::unix::net::UnixStream) {
    use ephemeral_worker::channel::read_frame;
    use ephemeral_worker::protocol::{FromWorker, VERSION};
    use std::os::fd::AsRawFd;
    use std::os::unix::process::CommandExt;

    let config = config();
    let (ours, theirs) = std::os::unix::net::UnixStream::pair().unwrap();
    let fd = theirs.as_raw_fd();
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_ephemeral-worker"));
    command
        .args(["--no-jail", "--fd", "3", "--bind"])
        .arg(format!("{}=cache", config.cache_dir.display()))
        .stderr(std::process::Stdio::piped());
    // SAFETY: dup2 is async-signal-safe; `fd` stays open until the spawn.
    unsafe {
        command.pre_exec(move || {
            if libc::dup2(fd, 3) == -1 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let child = command.spawn().unwrap();
    drop(theirs);
    let mut reader = ours.try_clone().unwrap();
    let ready: FromWorker = read_frame(&mut reader, &mut Vec::new()).unwrap();
    assert!(matches!(
        ready,
        FromWorker::Ready {
            version: VERSION,
            ..
        }
    ));
    (child, ours)
}
