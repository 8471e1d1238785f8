//! The shell against a public conformance corpus: brush's bash-compatibility
//! cases (github.com/reubeno/brush, MIT; see `compat/README.md`), converted
//! by `compat/import_brush.py`, recorded from real `bash -c` on Debian by
//! `compat/record.py`, replayed here in fresh sandboxes and compared byte
//! for byte (stdout, stderr unless the case ignores it, exit status).
//!
//! Many cases do not pass yet; the pass count may only go up. The floor is
//! `compat/min_passing.txt`. `--nocapture` prints the pass rate per suite
//! and every failing case with both outputs. With `BRUSH_COMPAT_REPORT=FILE`
//! the failures are also written to FILE as JSON lines (for grouping them).

mod common;

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ephemeral_runtime::Limits;

/// A recorded case.
struct Case {
    suite: String,
    name: String,
    cmd: String,
    files: Vec<(String, String)>,
    executable: Vec<String>,
    ignore_stderr: bool,
    stdout: String,
    stderr: String,
    status: i32,
}

fn cases() -> Vec<Case> {
    let text = include_str!("compat/expected.jsonl");
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("valid jsonl");
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            let files = v["files"]
                .as_object()
                .map(|m| {
                    m.iter()
                        .map(|(k, c)| (k.clone(), c.as_str().unwrap_or_default().to_owned()))
                        .collect()
                })
                .unwrap_or_default();
            let executable = v["executable"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|p| p.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default();
            Case {
                suite: s("suite"),
                name: s("name"),
                cmd: s("cmd"),
                files,
                executable,
                ignore_stderr: v["ignore_stderr"].as_bool().unwrap_or(false),
                stdout: s("stdout"),
                stderr: s("stderr"),
                status: v["status"].as_i64().unwrap_or(-1) as i32,
            }
        })
        .collect()
}

/// What a failing case printed: (stdout, stderr, status), or why it could
/// not run.
type Got = Result<(String, String, i32), String>;

/// Runs one case the way record.py ran it, returning what differs.
fn replay(case: &Case) -> Option<(String, Got)> {
    let limits = Limits {
        // bash took at most 5 s on every recorded case.
        command_timeout: Duration::from_secs(10),
        ..Limits::default()
    };
    let mut sb = common::sandbox_with(limits);
    for (path, contents) in &case.files {
        if let Err(e) = sb.put_file(path, contents.as_bytes()) {
            let why = format!("put_file {path}: {e}");
            return Some((why.clone(), Err(why)));
        }
    }
    if !case.executable.is_empty() {
        let paths: Vec<String> = case
            .executable
            .iter()
            .map(|p| format!("'{}'", p.replace('\'', r"'\''")))
            .collect();
        let out = sb
            .exec_captured(&format!("chmod +x {}", paths.join(" ")))
            .expect("exec");
        if out.outcome.exit_code != 0 {
            let why = format!("chmod +x failed: {}", common::text(&out.stderr));
            return Some((why.clone(), Err(why)));
        }
    }
    let scratch = sb.scratch_dir().to_owned();
    let run_dir = scratch
        .rsplit_once('/')
        .map(|(d, _)| d.to_owned())
        .unwrap_or_default();
    let out = sb.exec_captured(&case.cmd).expect("exec");
    let norm = |b: &[u8]| {
        common::text(b)
            .replace(&scratch, "$SCRATCH")
            .replace(&run_dir, "$RUNDIR")
    };
    let (stdout, mut stderr) = (norm(&out.stdout), norm(&out.stderr));
    let mut want_stderr = case.stderr.clone();
    if case.ignore_stderr {
        stderr = String::from("(ignored)");
        want_stderr = stderr.clone();
    }
    let got = (stdout, stderr, out.outcome.exit_code);
    let want = (case.stdout.clone(), want_stderr, case.status);
    (got != want).then(|| {
        let text = format!(
            "--- [{}] {}\n$ {}\n  want {want:?}\n  got  {got:?}",
            case.suite,
            case.name,
            case.cmd.trim_end().replace('\n', "\n  ")
        );
        let raw = (norm(&out.stdout), norm(&out.stderr), out.outcome.exit_code);
        (text, Ok(raw))
    })
}

#[test]
fn shell_passes_brush_compat_cases() {
    let cases = cases();
    let started = Instant::now();
    // Cases are independent: two workers (the machine has two cores).
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get().min(2));
    let next = AtomicUsize::new(0);
    let results: Mutex<Vec<Option<(String, Got)>>> = Mutex::new(vec![None; cases.len()]);
    std::thread::scope(|s| {
        for _ in 0..workers {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(case) = cases.get(i) else { break };
                    let diff = replay(case);
                    results.lock().unwrap()[i] = diff;
                }
            });
        }
    });
    // A case that differed runs once more, alone: cases with `sleep`,
    // `time` and timeouts measure time, and a machine busy with other work
    // can push one over its mark. A case wrong in behaviour differs twice.
    let mut results = results.into_inner().unwrap();
    for (case, result) in cases.iter().zip(results.iter_mut()) {
        if result.is_some() {
            *result = replay(case);
        }
    }

    let mut per_suite: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for (case, diff) in cases.iter().zip(&results) {
        let e = per_suite.entry(&case.suite).or_default();
        e.1 += 1;
        if diff.is_none() {
            e.0 += 1;
        }
    }
    let passed = results.iter().filter(|d| d.is_none()).count();
    for (diff, _) in results.iter().flatten() {
        println!("{diff}");
    }
    if let Ok(path) = std::env::var("BRUSH_COMPAT_REPORT") {
        let lines: Vec<String> = cases
            .iter()
            .zip(&results)
            .filter_map(|(case, r)| {
                let (_, got) = r.as_ref()?;
                let got = match got {
                    Ok((out, err, status)) => {
                        serde_json::json!({"stdout": out, "stderr": err, "status": status})
                    }
                    Err(why) => serde_json::json!({"error": why}),
                };
                let row = serde_json::json!({
                    "suite": case.suite, "name": case.name, "cmd": case.cmd,
                    "ignore_stderr": case.ignore_stderr,
                    "want": {"stdout": case.stdout, "stderr": case.stderr, "status": case.status},
                    "got": got,
                });
                Some(row.to_string())
            })
            .collect();
        std::fs::write(&path, lines.join("\n") + "\n").expect("write the report");
    }
    println!("\nper suite (passed/total):");
    for (suite, (p, t)) in &per_suite {
        println!(
            "  {suite:40} {p:4}/{t:<4} {:5.1}%",
            100.0 * *p as f64 / *t as f64
        );
    }
    println!(
        "brush compat: {passed}/{} cases pass ({:.1}%) in {:.1} s",
        cases.len(),
        100.0 * passed as f64 / cases.len() as f64,
        started.elapsed().as_secs_f64()
    );
    let floor: usize = include_str!("compat/min_passing.txt")
        .trim()
        .parse()
        .expect("a number");
    assert!(
        passed >= floor,
        "{passed} cases pass, fewer than the floor of {floor} (run with --nocapture to see them)"
    );
}
