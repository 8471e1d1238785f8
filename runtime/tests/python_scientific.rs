//! `python3` with numpy, pandas and matplotlib: the scientific build
//! (`python3-sci.wasm` with its read-only root, made by
//! `runtime/python/scientific/build.sh` into the programs folder; `./dev
//! test` builds it) run through the shell as an agent runs it. A missing
//! build is a failure, not a skip.

mod common;

use base64::Engine as _;
use common::{runtime, sandbox, sh};
use ephemeral_runtime::{LimitHit, Limits};
use std::time::{Duration, Instant};

fn scientific_python_is_built() {
    let names = runtime().program_names();
    assert!(
        names.iter().any(|n| n == "python3-sci"),
        "no python3-sci in the programs folder ({names:?}): run ./dev test, or runtime/python/scientific/build.sh DIR"
    );
    // Compiled (about a minute, once per machine) or loaded here, outside
    // any command's time limit.
    runtime()
        .program("python3-sci")
        .expect("python3-sci links against the sandbox");
}

#[test]
fn the_three_packages_import_with_their_versions() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        "python3 -c 'import numpy, pandas, matplotlib; print(numpy.__version__, pandas.__version__, matplotlib.__version__)'",
    );
    assert_eq!(
        (out.as_str(), code),
        ("2.5.2 3.0.6 3.11.2\n", 0),
        "stderr: {err}"
    );
}

/// The agent's usual analysis: a CSV written by the shell, a heredoc
/// script that groups it with pandas and plots it with matplotlib (Agg),
/// the numbers checked, the chart read back as base64 and decoded here.
#[test]
fn a_heredoc_script_groups_a_csv_and_saves_a_chart() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let script = r#"printf 'city,sales\nOslo,10\nLima,5\nOslo,7\nLima,1\nRome,4\n' > sales.csv
python3 <<'EOF'
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
df = pd.read_csv("sales.csv")
g = df.groupby("city")["sales"].agg(["count", "sum", "mean"])
for city, row in g.iterrows():
    print(city, int(row["count"]), int(row["sum"]), round(float(row["mean"]), 2))
fig, ax = plt.subplots(figsize=(4, 3), dpi=50)
g["sum"].plot.bar(ax=ax)
fig.savefig("chart.png")
print("saved")
EOF
echo "status $?"
base64 -w0 chart.png"#;
    let (out, err, code) = sh(&mut sb, script);
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let mut lines = out.lines();
    let printed: Vec<&str> = lines.by_ref().take(5).collect();
    assert_eq!(
        printed,
        [
            "Lima 2 6 3.0",
            "Oslo 2 17 8.5",
            "Rome 1 4 4.0",
            "saved",
            "status 0"
        ],
        "stderr: {err}"
    );
    let png = base64::engine::general_purpose::STANDARD
        .decode(lines.next().expect("the chart's base64").trim())
        .expect("valid base64");
    assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n", "a PNG signature");
    assert_eq!(&png[12..16], b"IHDR");
    let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
    let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
    assert_eq!((width, height), (200, 150), "4x3 inches at 50 dpi");
    assert!(png.len() > 1000, "a real chart, not an empty image");
}

#[test]
fn exit_statuses_are_kept() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, _) = sh(
        &mut sb,
        "python3 -c 'import numpy, sys; sys.exit(3)'; echo $?; \
         python3-sci -c 'import os; os._exit(7)'; echo $?; \
         python3-sci -c 'raise ValueError(\"no\")' 2>/dev/null; echo $?; \
         python3-sci -c 'print(\"ok\")'; echo $?",
    );
    assert_eq!(out, "3\n7\n1\nok\n0\n", "stderr: {err}");
}

#[test]
fn a_script_importing_a_local_module_that_uses_pandas_runs() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        "printf 'import pandas as pd\\ndef total(xs):\\n    return int(pd.Series(xs).sum())\\n' > helpers.py; \
         printf 'import sys\\nfrom helpers import total\\nprint(total([int(a) for a in sys.argv[1:]]))\\n' > main.py; \
         python3 main.py 1 2 39",
    );
    assert_eq!((out.as_str(), code), ("42\n", 0), "stderr: {err}");
}

#[test]
fn stdlib_only_code_stays_on_the_small_python() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        "python3 -c 'import sys, subprocess; print(sys.version_info[:2]); print(subprocess.run([\"echo\", \"hi\"], capture_output=True, text=True).stdout.strip())'",
    );
    assert_eq!((out.as_str(), code), ("(3, 14)\nhi\n", 0), "stderr: {err}");
}

#[test]
fn the_network_is_not_there() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        r#"python3-sci - <<'EOF'
import socket
try:
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(("127.0.0.1", 80))
    print("connected")
except OSError as e:
    print("refused", type(e).__name__)
EOF"#,
    );
    assert_eq!(
        (out.as_str(), code),
        ("refused OSError\n", 0),
        "stderr: {err}"
    );
}

/// A data script that downloads first meets what a machine without a
/// network says (a name that does not resolve, an address that cannot be
/// reached), as on the small python, never an AttributeError.
#[test]
fn a_download_in_a_pandas_script_fails_as_without_a_network() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        r#"python3 - <<'EOF'
import socket, urllib.request
import pandas
try:
    urllib.request.urlopen("http://example.com/data.csv", timeout=5)
except Exception as e:
    print(type(e).__name__, e)
try:
    socket.create_connection(("10.1.1.1", 80), timeout=5)
except Exception as e:
    print(type(e).__name__, e)
EOF"#,
    );
    assert_eq!(
        (out.as_str(), code),
        (
            "URLError <urlopen error [Errno -3] Temporary failure in name resolution>\n\
             gaierror [Errno -3] Temporary failure in name resolution\n",
            0
        ),
        "stderr: {err}"
    );
}

#[test]
fn a_numpy_memory_bomb_is_stopped_at_the_cap() {
    scientific_python_is_built();
    let mut sb = common::sandbox_with(Limits {
        memory_bytes: 256 << 20,
        ..Limits::default()
    });
    let outcome = sb
        .exec_captured("python3 -c 'import numpy as np; a = np.ones(10**8); print(a.sum())'")
        .expect("exec");
    let err = String::from_utf8_lossy(&outcome.stderr).into_owned();
    assert_ne!(outcome.outcome.exit_code, 0, "stderr: {err}");
    assert_eq!(
        outcome.outcome.limit,
        Some(LimitHit::Memory),
        "stderr: {err}"
    );
    assert!(err.contains("MemoryError"), "stderr: {err}");
}

#[test]
fn its_library_is_read_only_and_shared() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (before, _) = sb.disk_usage();
    let (out, err, _) = sh(
        &mut sb,
        r#"python3-sci - <<'EOF'
for path, mode in [("/usr/local/lib/new.txt", "w"), ("/usr/local/lib/python315.zip", "ab")]:
    try:
        open(path, mode).write("x")
        print("wrote", path)
    except OSError as e:
        print("refused", type(e).__name__)
EOF
echo x >> /usr/local/lib/python315.zip; echo "shell $?"
ls -l /usr/local/lib/python315.zip | cut -d' ' -f1,3"#,
    );
    assert_eq!(
        out, "refused PermissionError\nrefused PermissionError\nshell 1\n-r--r--r-- root\n",
        "stderr: {err}"
    );
    let (after, _) = sb.disk_usage();
    assert!(
        after < before + (1 << 20),
        "the 54 MB library does not count against the sandbox's disk: {before} -> {after}"
    );
}

#[test]
fn it_sees_the_commands_folder_environment_and_arguments() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        "mkdir -p work && cd work && echo 'a,b' > t.csv && export GREETING=hej && \
         python3-sci -c 'import os, sys; print(os.getcwd() == os.environ[\"PWD\"], os.environ.get(\"GREETING\"), sys.argv[1:], open(\"t.csv\").read().strip())' x y",
    );
    assert_eq!(
        (out.as_str(), code),
        ("True hej ['x', 'y'] a,b\n", 0),
        "stderr: {err}"
    );
}

/// Offline pip: a wheel brought into the sandbox installs and imports in
/// both pythons; a download fails at once, in one line, saying why.
#[test]
fn pip_installs_a_brought_wheel_and_refuses_downloads() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        r#"mkdir -p w && cd w && mkdir -p hello hello-1.0.dist-info &&
echo 'GREETING = "hi from a wheel"' > hello/__init__.py &&
printf 'Metadata-Version: 2.1\nName: hello\nVersion: 1.0\n' > hello-1.0.dist-info/METADATA &&
printf 'Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n' > hello-1.0.dist-info/WHEEL &&
printf 'hello/__init__.py,,\nhello-1.0.dist-info/METADATA,,\n' > hello-1.0.dist-info/RECORD &&
zip -qr ../hello-1.0-py3-none-any.whl hello hello-1.0.dist-info && cd .. &&
pip install ./hello-1.0-py3-none-any.whl; echo "install $?"
python3 -c 'import hello; print(hello.GREETING)'
python3 -c 'import numpy, hello; print(hello.GREETING, numpy.__name__)'
pip install numpy; echo "numpy $?"
pip install requests 2>&1; echo "requests $?"
pip list --format=freeze | grep -E '^(hello|pandas)=='"#,
    );
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.contains(&"Successfully installed hello-1.0"), "{out}");
    assert!(lines.contains(&"install 0"), "{out}");
    assert!(lines.contains(&"hi from a wheel"), "{out}");
    assert!(lines.contains(&"hi from a wheel numpy"), "{out}");
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("Requirement already satisfied: numpy")),
        "{out}"
    );
    assert!(lines.contains(&"numpy 0"), "{out}");
    let refused: Vec<&&str> = lines.iter().filter(|l| l.contains("no network")).collect();
    assert_eq!(refused.len(), 1, "one line: {out}");
    assert!(
        refused[0].contains("requests") && refused[0].contains("--find-links"),
        "{out}"
    );
    assert!(lines.contains(&"requests 1"), "{out}");
    assert!(
        lines.contains(&"hello==1.0") && lines.contains(&"pandas==3.0.6"),
        "{out}"
    );
}

/// A wheel's dependencies count only where their markers hold (PEP 508):
/// pytest's `colorama; sys_platform == "win32"` must not send pip to a
/// network it does not have.
#[test]
fn pip_follows_the_markers_of_dependencies() {
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        r#"wheel() { # NAME VERSION [Requires-Dist lines...]
  n=$1 v=$2; shift 2; mkdir -p src/$n src/$n-$v.dist-info
  echo "NAME = '$n'" > src/$n/__init__.py
  { printf 'Metadata-Version: 2.1\nName: %s\nVersion: %s\n' $n $v; for r in "$@"; do echo "Requires-Dist: $r"; done; } > src/$n-$v.dist-info/METADATA
  printf 'Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n' > src/$n-$v.dist-info/WHEEL
  printf '%s/__init__.py,,\n' $n > src/$n-$v.dist-info/RECORD
  (cd src && zip -qr ../wheels/$n-$v-py3-none-any.whl $n $n-$v.dist-info)
}
mkdir -p wheels
wheel tool 1.0 'colorama>=0.4; sys_platform == "win32"' 'dep>=1' 'extraonly; extra == "test"' 'backport; python_version < "3.8" and os_name == "posix"'
wheel dep 1.2
pip install --no-index --find-links wheels tool; echo "tool $?"
python3 -c 'import tool, dep; print(tool.NAME, dep.NAME)'
printf 'tomli; python_version < "3.0"\ndep\n' > req.txt
pip install --no-index -f wheels -r req.txt; echo "req $?"
pip install --no-index -f wheels 'tool[test]' 2>&1; echo "extra $?""#,
    );
    assert_eq!(code, 0, "stdout: {out}\nstderr: {err}");
    let lines: Vec<&str> = out.lines().collect();
    assert!(lines.contains(&"Successfully installed dep-1.2"), "{out}");
    assert!(
        lines.contains(&"tool 0") && lines.contains(&"tool dep"),
        "{out}"
    );
    assert!(
        !out.contains("colorama") && !out.contains("backport"),
        "{out}"
    );
    assert!(
        lines.contains(
            &"Ignoring tomli: markers 'python_version < \"3.0\"' don't match your environment"
        ),
        "{out}"
    );
    assert!(lines.contains(&"req 0"), "{out}");
    // Asking for the extra brings its dependency in, which is not there.
    assert!(
        out.contains("cannot download extraonly") && lines.contains(&"extra 1"),
        "{out}"
    );
}

/// WASI has no users; the sandbox has one. Both pythons answer for it as
/// Linux does (`os.getuid`, `pwd`, `grp`, `getpass`), as `id` does.
#[test]
fn both_pythons_know_the_sandbox_user() {
    scientific_python_is_built();
    let (out, err, code) = sh(
        &mut sandbox(),
        r#"id -u; for p in python3 python3-sci; do $p -c '
import os, pwd, grp, getpass
me = pwd.getpwuid(os.getuid())
print(os.getuid(), os.getgid(), me.pw_name, grp.getgrgid(os.getgid()).gr_name, getpass.getuser())
try:
    pwd.getpwnam("nobody-here")
except KeyError as e:
    print(e)
'; done"#,
    );
    let each = "1000 1000 worker worker worker\n\"getpwnam(): name not found: 'nobody-here'\"\n";
    assert_eq!(
        (out.as_str(), code),
        (format!("1000\n{each}{each}").as_str(), 0),
        "stderr: {err}"
    );
}

#[test]
fn a_failing_scientific_script_shows_its_own_traceback() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        "printf 'import numpy as np\\nx = np.arange(3)\\nprint(x[5])\\n' > bad.py; python3 bad.py",
    );
    assert_eq!((out.as_str(), code), ("", 1), "stderr: {err}");
    assert!(
        err.starts_with("Traceback (most recent call last):\n"),
        "{err}"
    );
    assert!(err.contains("/bad.py\", line 3, in <module>"), "{err}");
    assert!(!err.contains("_run") && !err.contains("runpy"), "{err}");
    assert!(
        err.trim_end()
            .ends_with("IndexError: index 5 is out of bounds for axis 0 with size 3"),
        "{err}"
    );
}

/// The build imported the packages before it snapshotted the interpreter
/// (`build.sh`'s PREIMPORT_CODE): what they seeded then must not be the
/// same in every sandbox.
#[test]
fn random_draws_differ_between_sandboxes() {
    scientific_python_is_built();
    let draw = || {
        let (out, err, code) = sh(
            &mut sandbox(),
            "python3 -c 'import random, numpy, tempfile; print(random.random(), numpy.random.rand(), tempfile.mktemp())'",
        );
        assert_eq!(code, 0, "stderr: {err}");
        out
    };
    let (a, b) = (draw(), draw());
    let (a, b): (Vec<&str>, Vec<&str>) = (a.split(' ').collect(), b.split(' ').collect());
    assert_eq!(a.len(), 3, "{a:?}");
    for (x, y) in a.iter().zip(&b) {
        assert_ne!(x, y, "the same draw in two sandboxes: {a:?} {b:?}");
    }
}

/// A run ends without the interpreter's full finalization (see
/// HAND_OFF_BOOTSTRAP in `runtime/python/sandbox_python3.py`), but what a program can
/// see of it still happens: atexit handlers, files left open flushed, the
/// last line without a newline.
#[test]
fn the_end_of_a_run_keeps_what_exit_does() {
    scientific_python_is_built();
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        "printf 'import numpy, atexit\nlog = open(\"log.txt\", \"w\")\nlog.write(str(numpy.arange(4).sum()))\ndef keep():\n    return log\natexit.register(print, \"bye\")\nprint(\"no newline\", end=\"\")\n' > job.py; \
         python3 job.py; echo \" status $?\"; cat log.txt; echo; \
         python3 -c 'import pandas; data = open(\"c.txt\", \"w\"); data.write(\"from -c\")'; cat c.txt",
    );
    assert_eq!(
        (out.as_str(), code),
        ("no newlinebye\n status 0\n6\nfrom -c", 0),
        "stderr: {err}"
    );
}

/// The start-up figures of the README's table: each case in a fresh
/// sandbox, through the shell, as an agent runs it. Run with
/// `cargo test --release -p ephemeral-runtime --test python_scientific -- --ignored --nocapture startup_numbers`.
#[test]
#[ignore]
fn startup_numbers() {
    scientific_python_is_built();
    let groupby = r#"python3 <<'EOF'
import numpy as np, pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
rng = np.random.default_rng(1)
df = pd.DataFrame({"k": rng.integers(0, 7, 1000), "v": rng.random(1000)})
g = df.groupby("k")["v"].agg(["count", "sum", "mean"])
fig, ax = plt.subplots()
g["sum"].plot.bar(ax=ax)
fig.savefig("chart.png")
print(int(g["count"].sum()))
EOF"#;
    let cases = [
        ("python3 -c 'print(1)'", "1\n"),
        ("python3-sci -c 'print(1)'", "1\n"),
        ("python3 -c 'import numpy, pandas, matplotlib.pyplot'", ""),
        ("1,000-row pandas groupby + matplotlib PNG", "1000\n"),
    ];
    for (name, expected) in cases {
        let command = if name.starts_with("1,000") {
            groupby
        } else {
            name
        };
        let mut times: Vec<Duration> = (0..15)
            .map(|_| {
                let mut sb = sandbox();
                let t = Instant::now();
                let (out, err, code) = sh(&mut sb, command);
                let took = t.elapsed();
                assert_eq!((out.as_str(), code), (expected, 0), "{name}: {err}");
                took
            })
            .collect();
        times.sort();
        eprintln!(
            "{name}: p50 {:.1} ms, min {:.1} ms, p90 {:.1} ms (15 fresh sandboxes)",
            times[7].as_secs_f64() * 1e3,
            times[0].as_secs_f64() * 1e3,
            times[13].as_secs_f64() * 1e3
        );
    }
}
