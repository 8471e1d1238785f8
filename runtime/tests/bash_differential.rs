//! The shell against real bash: every case of `differential/cases/*.txt`,
//! recorded from `bash -c` on Debian by `differential/record.py`, replayed
//! in a fresh sandbox and compared byte for byte (stdout, stderr, status).
//!
//! Not every case passes yet; the pass count may only go up. The floor is
//! `differential/min_passing.txt`; the seed run's commands must always pass.
//! `--nocapture` lists every failing case with both outputs.
//! `EPHEMERAL_DIFF_THEME=NAME` replays only that theme's cases (then the
//! floor does not apply).

mod common;

use std::time::Duration;

use ephemeral_runtime::Limits;

/// A recorded case.
struct Case {
    /// The file of `differential/cases/` it comes from.
    theme: String,
    cmd: String,
    stdout: String,
    stderr: String,
    status: i32,
}

fn cases() -> Vec<Case> {
    let text = include_str!("differential/expected.jsonl");
    text.lines()
        .map(|line| {
            let v: serde_json::Value = serde_json::from_str(line).expect("valid jsonl");
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            Case {
                theme: s("theme"),
                cmd: s("cmd"),
                stdout: s("stdout"),
                stderr: s("stderr"),
                status: v["status"].as_i64().unwrap_or(-1) as i32,
            }
        })
        .collect()
}

/// Runs one case the way record.py ran it, returning what differs.
fn replay(case: &Case) -> Option<String> {
    let limits = Limits {
        command_timeout: Duration::from_secs(20),
        ..Limits::default()
    };
    let mut sb = common::sandbox_with(limits);
    let scratch = sb.scratch_dir().to_owned();
    let out = sb.exec_captured(&case.cmd).expect("exec");
    let norm = |b: &[u8]| common::text(b).replace(&scratch, "$SCRATCH");
    let got = (norm(&out.stdout), norm(&out.stderr), out.outcome.exit_code);
    let want = (case.stdout.clone(), case.stderr.clone(), case.status);
    (got != want).then(|| format!("$ {}\n  want {want:?}\n  got  {got:?}", case.cmd))
}

/// Cases from SEED.md: the product's own demo must match bash exactly.
const MUST_PASS: &[&str] = &[
    "whoami",
    "command -v curl && curl -sS -m 8 https://example.com",
    "printf 'sandbox proof\\n' > /tmp/proof.txt && ls -l /tmp/proof.txt | cut -d' ' -f1-5",
];

#[test]
fn shell_matches_bash() {
    let only = std::env::var("EPHEMERAL_DIFF_THEME").ok();
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| only.as_deref().is_none_or(|t| c.theme == t))
        .collect();
    let mut failures = Vec::new();
    let mut themes: std::collections::BTreeMap<&str, (usize, usize)> = Default::default();
    for case in &cases {
        let tally = themes.entry(case.theme.as_str()).or_default();
        tally.1 += 1;
        // A case that differs runs once more: cases with jobs, `sleep` and
        // `timeout` measure time, and a machine busy with other work can
        // push one over its mark. A case wrong in behaviour differs twice.
        match replay(case).and_then(|_| replay(case)) {
            Some(diff) => failures.push((case.cmd.clone(), diff)),
            None => tally.0 += 1,
        }
    }
    let passed = cases.len() - failures.len();
    println!("bash differential: {passed}/{} cases pass", cases.len());
    for (theme, (ok, all)) in &themes {
        println!("  {theme}: {ok}/{all}");
    }
    for (_, diff) in &failures {
        println!("{diff}");
    }
    for must in MUST_PASS {
        assert!(
            !failures.iter().any(|(cmd, _)| cmd == must),
            "seed case fails: {must}"
        );
    }
    if only.is_some() {
        return;
    }
    let floor: usize = include_str!("differential/min_passing.txt")
        .trim()
        .parse()
        .expect("a number");
    assert!(
        passed >= floor,
        "{passed} cases pass, fewer than the floor of {floor} (run with --nocapture to see them)"
    );
}
