//! `vm-tests`: builds this crate's tests and examples as static musl
//! executables (a nested `cargo build` with a target folder of its own, so
//! it never waits on the lock of a `cargo test` that runs us) and runs them
//! one after another in a single lab boot, then sums up.

use std::ffi::OsString;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::ensure::{self, MUSL_TARGET};
use crate::initramfs::{GuestFile, Plan, shell_quote};
use crate::{Common, finish, lab, print_line, step};

/// The lab's own integration test: built like the others, never run inside
/// (there is no QEMU in the guest).
pub const LAB_TEST: &str = "lab_runs_vm_tests_under_real_svm";

/// Where the nested cargo builds, in the project's cache, unless
/// `$EPHEMERAL_LAB_TARGET_DIR` says.
const TARGET_DIR: &str = "target-musl";

/// Marks the start of one program's output in the guest.
const BEGIN: &str = "==> ";
/// Marks its end: `<== LABEL: exit CODE`.
const END: &str = "<== ";

/// One executable to run in the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// `example` or `test` (`lib` for the library's unit tests).
    pub kind: String,
    pub name: String,
    pub host: PathBuf,
}

impl Program {
    fn label(&self) -> String {
        format!("{} {}", self.kind, self.name)
    }

    fn guest(&self) -> String {
        format!("/lab/{}-{}", self.kind, self.name)
    }
}

pub fn main(args: &[String]) -> Result<u8> {
    let mut common = Common::default();
    let mut release = false;
    let mut selection: Vec<String> = Vec::new();
    let mut test_args: Option<Vec<String>> = None;
    let mut i = 0;
    while i < args.len() {
        if common.take(args, &mut i)? {
            continue;
        }
        match args[i].as_str() {
            "--release" => release = true,
            "--lib" => selection.push("--lib".into()),
            flag @ ("--example" | "--test") => {
                let name = args
                    .get(i + 1)
                    .with_context(|| format!("{flag} needs a name"))?;
                selection.extend([flag.to_owned(), name.clone()]);
                i += 1;
            }
            "--" => {
                test_args = Some(args[i + 1..].to_vec());
                break;
            }
            other => bail!("vm-tests: unknown argument {other}"),
        }
        i += 1;
    }
    if selection.is_empty() {
        selection = ["--lib", "--tests", "--example", "selftest"]
            .map(String::from)
            .to_vec();
    }
    let test_args = test_args.unwrap_or_else(|| vec!["--test-threads=1".into()]);

    ensure::musl_target()?;
    let programs = build(&selection, release)?;
    if programs.is_empty() {
        bail!("cargo built no test or example executables for {selection:?}");
    }
    let script_path = ensure::cache_dir()
        .join("runs")
        .join(format!("vm-tests-{}.sh", std::process::id()));
    std::fs::create_dir_all(script_path.parent().unwrap_or(&script_path))?;
    std::fs::write(&script_path, script(&programs, &test_args))?;
    let mut files: Vec<GuestFile> = programs
        .iter()
        .map(|p| GuestFile {
            host: p.host.clone(),
            guest: p.guest(),
        })
        .collect();
    let script_guest = "/lab/.vm-tests.sh".to_owned();
    files.push(GuestFile {
        host: script_path.clone(),
        guest: script_guest.clone(),
    });
    let plan = Plan {
        files,
        argv: vec!["/bin/sh".into(), script_guest],
        verbose: common.verbose,
    };
    let mut lines = Vec::new();
    let outcome = lab(&plan, &common, &mut |line| {
        print_line(line);
        lines.push(line.to_owned());
    });
    let _ = std::fs::remove_file(&script_path);
    let code = finish(&outcome?)?;
    let results = summarize(&lines);
    for r in &results {
        step(format!(
            "vm-tests: {:<36} {}",
            r.label,
            match (&r.exit, &r.verdicts[..]) {
                (None, _) => "did not finish".to_owned(),
                (Some(code), []) => format!("exit {code}"),
                (Some(code), v) => format!("exit {code}; {}", v.join(" / ")),
            }
        ));
    }
    let passed = results.iter().filter(|r| r.exit == Some(0)).count();
    step(format!(
        "vm-tests: {passed} of {} programs passed inside the lab",
        programs.len()
    ));
    Ok(if code == 0 && passed == programs.len() {
        0
    } else if code == 0 {
        1
    } else {
        code
    })
}

/// Builds the selected targets for musl; the executables cargo reports.
fn build(selection: &[String], release: bool) -> Result<Vec<Program>> {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| OsString::from("cargo"));
    let target_dir = std::env::var_os("EPHEMERAL_LAB_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| ensure::project_cache().join(TARGET_DIR));
    let manifest = crate_dir().join("Cargo.toml");
    let mut cmd = Command::new(&cargo);
    cmd.args(["build", "--locked", "--quiet", "-p", "ephemeral-vm"])
        .arg("--manifest-path")
        .arg(&manifest)
        .args(["--target", MUSL_TARGET])
        .arg("--message-format=json-render-diagnostics")
        .args(selection)
        .env("CARGO_TARGET_DIR", &target_dir)
        .env_remove("CARGO_BUILD_TARGET")
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("MAKEFLAGS")
        .env_remove("MFLAGS")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    if release {
        cmd.arg("--release");
    }
    step(format!(
        "build: cargo build {} --target {MUSL_TARGET}{} (target folder {})",
        selection.join(" "),
        if release { " --release" } else { "" },
        target_dir.display()
    ));
    let mut child = cmd
        .spawn()
        .with_context(|| format!("cannot run {}", PathBuf::from(&cargo).display()))?;
    let stdout = child.stdout.take().context("cargo's stdout")?;
    let mut programs = Vec::new();
    for line in BufReader::new(stdout).lines() {
        if let Some(p) = program(&line?)
            && !programs.contains(&p)
        {
            programs.push(p);
        }
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("the musl build failed ({status}); cargo's errors are above");
    }
    // Examples first (the self-test says which KVM this is), then the
    // library's unit tests, then the integration tests, each by name.
    let rank = |p: &Program| ["example", "lib", "test"].iter().position(|k| *k == p.kind);
    programs.sort_by(|a, b| (rank(a), &a.name).cmp(&(rank(b), &b.name)));
    for p in &programs {
        step(format!("build: {} -> {}", p.label(), p.host.display()));
    }
    Ok(programs)
}

/// The program in one line of cargo's JSON output, if it is an executable
/// to run: an example, or a test harness (the library's unit tests or an
/// integration test) other than the lab's own.
fn program(line: &str) -> Option<Program> {
    let msg: Value = serde_json::from_str(line).ok()?;
    if msg["reason"] != "compiler-artifact" {
        return None;
    }
    let host = PathBuf::from(msg["executable"].as_str()?);
    let target = &msg["target"];
    let name = target["name"].as_str()?.to_owned();
    let kinds: Vec<&str> = target["kind"]
        .as_array()?
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let is_test = msg["profile"]["test"].as_bool() == Some(true);
    let kind = if kinds.contains(&"example") {
        "example"
    } else if is_test && kinds.contains(&"test") && name != LAB_TEST {
        "test"
    } else if is_test && kinds.iter().any(|k| k.ends_with("lib")) {
        "lib"
    } else {
        return None;
    };
    Some(Program {
        kind: kind.into(),
        name,
        host,
    })
}

/// The guest script: each program in turn, framed by markers, test
/// harnesses with `test_args`; exits 1 if any failed.
fn script(programs: &[Program], test_args: &[String]) -> String {
    let mut s = String::from(
        "# vm-tests: generated by ephemeral-lab\n\
         export RUST_BACKTRACE=1\n\
         failed=0\n\
         run() {\n\
         \x20   label=$1; shift\n",
    );
    s.push_str(&format!(
        "    echo \"{BEGIN}$label\"\n    \"$@\" </dev/null\n    code=$?\n    \
         echo \"{END}$label: exit $code\"\n    [ \"$code\" -eq 0 ] || failed=$((failed + 1))\n}}\n"
    ));
    for p in programs {
        let mut words = vec![shell_quote(&p.label()), shell_quote(&p.guest())];
        if p.kind != "example" {
            words.extend(test_args.iter().map(|a| shell_quote(a)));
        }
        s.push_str(&format!("run {}\n", words.join(" ")));
    }
    s.push_str("[ \"$failed\" -eq 0 ]\n");
    s
}

/// One program's result, read back from the console.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProgramResult {
    pub label: String,
    pub exit: Option<i32>,
    /// Its `test result: …` lines, without the prefix.
    pub verdicts: Vec<String>,
}

fn summarize(lines: &[String]) -> Vec<ProgramResult> {
    let mut results: Vec<ProgramResult> = Vec::new();
    for line in lines {
        if let Some(label) = line.strip_prefix(BEGIN) {
            results.push(ProgramResult {
                label: label.to_owned(),
                exit: None,
                verdicts: Vec::new(),
            });
        } else if let Some(rest) = line.strip_prefix(END)
            && let Some((label, code)) = rest.rsplit_once(": exit ")
            && let Some(r) = results.iter_mut().rev().find(|r| r.label == label)
        {
            r.exit = code.trim().parse().ok();
        } else if let Some(verdict) = line.strip_prefix("test result: ")
            && let Some(r) = results.last_mut()
        {
            r.verdicts.push(verdict.to_owned());
        }
    }
    results
}

/// This crate's folder: where cargo says it is now (a test that runs this
/// tool, `lab/run`), else where the tool was built. A shared build cache
/// serves clones at other paths, so the path built in may be another's.
fn crate_dir() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(PathBuf::from)
        .filter(|dir| dir.join("lab").is_dir() && dir.join("Cargo.toml").is_file())
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cargo_artifacts_pick_examples_and_test_harnesses_only() {
        let msg = |kind: &str, name: &str, test: bool, exe: &str| {
            format!(
                r#"{{"reason":"compiler-artifact","target":{{"kind":["{kind}"],"name":"{name}"}},"profile":{{"test":{test}}},"executable":{exe}}}"#
            )
        };
        let p = program(&msg("example", "selftest", false, r#""/t/selftest""#)).unwrap();
        assert_eq!(
            (p.kind.as_str(), p.guest()),
            ("example", "/lab/example-selftest".into())
        );
        let p = program(&msg("test", "port_io_exits", true, r#""/t/p-1""#)).unwrap();
        assert_eq!(p.label(), "test port_io_exits");
        assert_eq!(
            program(&msg("lib", "ephemeral_vm", true, r#""/t/e""#))
                .unwrap()
                .kind,
            "lib"
        );
        assert!(program(&msg("lib", "ephemeral_vm", false, "null")).is_none());
        assert!(program(&msg("bin", "ephemeral-lab", false, r#""/t/l""#)).is_none());
        assert!(program(&msg("bin", "ephemeral-lab", true, r#""/t/l""#)).is_none());
        assert!(program(&msg("test", LAB_TEST, true, r#""/t/x""#)).is_none());
        assert!(program(r#"{"reason":"build-finished","success":true}"#).is_none());
    }

    #[test]
    fn script_frames_each_program_and_gives_test_args_to_harnesses_only() {
        let programs = [
            Program {
                kind: "example".into(),
                name: "selftest".into(),
                host: "/h/s".into(),
            },
            Program {
                kind: "test".into(),
                name: "port_io_exits".into(),
                host: "/h/p".into(),
            },
        ];
        let s = script(&programs, &["--test-threads=1".into()]);
        assert!(s.contains("run 'example selftest' '/lab/example-selftest'\n"));
        assert!(
            s.contains("run 'test port_io_exits' '/lab/test-port_io_exits' '--test-threads=1'\n")
        );
    }

    #[test]
    fn summary_reads_exit_codes_and_verdicts_per_program() {
        let lines: Vec<String> = [
            "==> example selftest",
            "AMD SVM (hardware virtualisation): guest ran to done",
            "<== example selftest: exit 0",
            "==> test port_io_exits",
            "test result: ok. 5 passed; 0 failed; 0 ignored",
            "<== test port_io_exits: exit 0",
            "==> test vcpu_state_roundtrip",
        ]
        .map(String::from)
        .to_vec();
        let r = summarize(&lines);
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].exit, Some(0));
        assert!(r[0].verdicts.is_empty());
        assert_eq!(r[1].verdicts, ["ok. 5 passed; 0 failed; 0 ignored"]);
        assert_eq!(r[2].exit, None);
    }
}
