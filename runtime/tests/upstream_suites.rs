//! The scientific python computes right, by tests nobody here wrote:
//! files of numpy's, pandas' and matplotlib's own test suites (from their
//! sdists, chosen in `runtime/python/scientific/upstream/suites.txt` and
//! laid out by its `fetch.py`, which `./dev` runs) are put in a sandbox
//! with pytest's wheels, pip installs pytest offline, and `python3-sci -m
//! pytest` runs them. Each package must pass at least its floor (the
//! `floor` lines of suites.txt); the README lists the counts and why the
//! rest fail. A missing layout is a failure, not a skip.

mod common;

use common::{runtime, sh};
use ephemeral_runtime::Limits;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Laid in front of the tests: the test folders of the sdists become
/// subpackages of the installed packages (`pandas.tests.groupby`,
/// `matplotlib.testing`), as they are in a source checkout.
const CONFTEST: &str = r#"import importlib, os
here = os.path.dirname(os.path.abspath(__file__))
for root, dirs, files in os.walk(here):
    rel = os.path.relpath(root, here)
    if rel != "." and ("tests" in dirs or "testing" in dirs) and "__init__.py" not in files:
        module = importlib.import_module(rel.replace(os.sep, "."))
        if root not in module.__path__:
            module.__path__.append(root)
"#;

fn upstream_dir() -> PathBuf {
    let dir = match std::env::var_os("EPHEMERAL_CACHE") {
        Some(cache) => PathBuf::from(cache).join("sci-upstream"),
        None => PathBuf::from("/var/cache/ephemeral/sci-upstream"),
    };
    assert!(
        dir.join("stamp").exists(),
        "no upstream test layout in {}: run ./dev test, or runtime/python/scientific/upstream/fetch.py {0}",
        dir.display()
    );
    dir
}

fn floor(package: &str) -> u64 {
    let suites = crate_dir().join("python/scientific/upstream/suites.txt");
    std::fs::read_to_string(suites)
        .expect("suites.txt")
        .lines()
        .find_map(|l| {
            let w: Vec<&str> = l.split_whitespace().collect();
            (w.len() == 3 && w[0] == "floor" && w[1] == package).then(|| w[2].parse().ok())?
        })
        .unwrap_or_else(|| panic!("no `floor {package} N` line in suites.txt"))
}

fn put_tree(sb: &mut ephemeral_runtime::Sandbox, from: &Path, to: &str) {
    for entry in std::fs::read_dir(from).expect("upstream folder") {
        let entry = entry.expect("entry");
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = format!("{to}/{name}");
        if entry.file_type().expect("type").is_dir() {
            put_tree(sb, &entry.path(), &path);
        } else {
            let bytes = std::fs::read(entry.path()).expect("file");
            sb.put_file(&path, &bytes).expect("put_file");
        }
    }
}

/// pytest's counts from its last line: `12 passed, 3 failed, 1 skipped in 4.5s`.
fn counts(summary: &str) -> Vec<(String, u64)> {
    let line = summary.trim().trim_matches('=').trim();
    line.split(" in ")
        .next()
        .unwrap_or("")
        .split(", ")
        .filter_map(|part| {
            let (n, what) = part.trim().split_once(' ')?;
            Some((what.to_string(), n.parse().ok()?))
        })
        .collect()
}

fn run_suite(package: &str) {
    let layout = upstream_dir();
    runtime()
        .program("python3-sci")
        .expect("python3-sci links against the sandbox");
    let limits = Limits {
        command_timeout: Duration::from_secs(900),
        sandbox_timeout: Duration::from_secs(1200),
        memory_bytes: 2 << 30,
        output_bytes: 8 << 20,
        disk_bytes: 512 << 20,
        disk_files: 50_000,
    };
    let mut sb = runtime().sandbox().limits(limits).build().expect("sandbox");
    let home = sb.cwd().to_string();
    put_tree(&mut sb, &layout.join("wheels"), &format!("{home}/wheels"));
    put_tree(&mut sb, &layout.join(package), &format!("{home}/suite"));
    sb.put_file(&format!("{home}/suite/conftest.py"), CONFTEST.as_bytes())
        .expect("conftest");
    let (out, err, code) = sh(
        &mut sb,
        &format!(
            "pip install -q --no-index --find-links wheels pytest hypothesis && cd suite && \
             python3-sci -m pytest -q --tb=line -rfE -p no:cacheprovider -p no:faulthandler --capture=sys \
             --import-mode=importlib -o addopts= -W ignore {package}"
        ),
    );
    let summary = out.lines().last().unwrap_or("");
    let counts = counts(summary);
    let passed = counts
        .iter()
        .find(|(w, _)| w == "passed")
        .map_or(0, |c| c.1);
    // With --tb=line each failure is one `file.py:LINE: Error: message`
    // line; -rfE adds the `FAILED test-id` summary.
    let failures: Vec<&str> = out
        .lines()
        .filter(|l| l.starts_with("FAILED ") || l.starts_with("ERROR ") || l.contains(".py:"))
        .collect();
    eprintln!(
        "{package}: {summary}\n{}\n(exit {code}; stderr: {})",
        failures.join("\n"),
        err.trim()
    );
    let floor = floor(package);
    assert!(
        passed >= floor,
        "{package}: {passed} passed, below the floor of {floor}: {summary}\n{out}\n{err}"
    );
}

#[test]
fn numpy_passes_its_own_tests() {
    run_suite("numpy");
}

#[test]
fn pandas_passes_its_own_tests() {
    run_suite("pandas");
}

#[test]
fn matplotlib_passes_its_own_tests() {
    run_suite("matplotlib");
}

#[test]
fn pytest_summaries_are_read() {
    assert_eq!(
        counts("=== 12 passed, 3 failed, 1 skipped in 4.50s ==="),
        [
            ("passed".to_string(), 12),
            ("failed".to_string(), 3),
            ("skipped".to_string(), 1)
        ]
    );
    assert_eq!(counts("5 passed in 0.1s"), [("passed".to_string(), 5)]);
}

/// This crate's folder: where `cargo test` says it is now, not where this
/// binary was built (a shared build cache serves clones at other paths).
fn crate_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
