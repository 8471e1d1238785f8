//! Parity of `grep`, `sed`, `awk` and `jq` with the tools on the
//! development machine (GNU grep 3.8, GNU sed 4.9, mawk 1.3.4 20200120 as
//! `awk`, jq 1.6; GNU bash 5.2.15, Debian 12). Each case runs `SETUP` and
//! then its script through the interpreter in a fresh temporary folder, and
//! must produce the stdout, stderr and exit status that
//! `env -i HOME=$DIR PATH=/usr/bin:/bin USER=worker LANG=C.UTF-8 bash -c`
//! produced for the same text there. Cases whose output depends on the
//! order of a directory listing pipe through `sort`, since GNU grep -r
//! follows readdir order and ours walks names in sorted order.

use std::cell::RefCell;
use std::io::Write;
use std::rc::Rc;

use ephemeral_shell::{FakeHost, Invocation};

/// Files every case starts with.
const SETUP: &str = "mkdir -p src/sub\nprintf 'name,age,score\\nalice,30,85\\nbob,25,92\\ncarol,35,78\\ndave,25,88\\n' > data.csv\nprintf 'USER PID %%CPU CMD\\nroot 1 0.0 /sbin/init\\nworker 42 1.5 python3 app.py\\nworker 43 12.0 node server.js\\nroot 77 0.1 sshd\\nworker 99 0.0 grep node\\n' > ps.txt\nprintf '2024-01-01 INFO start\\n2024-01-01 ERROR disk full\\n2024-01-02 WARN slow\\n2024-01-02 ERROR timeout\\n2024-01-03 INFO done\\n' > log.txt\nprintf 'def f():\\n    # TODO: fix\\n    return 1\\n' > src/a.py\nprintf 'fn main() {\\n    // TODO later\\n    // FIXME now\\n}\\n' > src/b.rs\nprintf 'nothing here\\ntodo lower\\n' > src/sub/c.txt\nprintf 'foo\\nbar\\nfoo bar\\nbaz\\nfoo\\n' > words.txt\nprintf '{\"items\":[{\"name\":\"a\",\"n\":1,\"tags\":[\"x\"]},{\"name\":\"b\",\"n\":2,\"tags\":[]}],\"meta\":{\"count\":2,\"ok\":true,\"pi\":3.14}}\\n' > items.json\n";

struct Case {
    script: &'static str,
    stdout: &'static str,
    stderr: &'static str,
    status: i32,
}

/// A `Write` whose bytes the test can read after the run.
#[derive(Clone, Default)]
struct Capture(Rc<RefCell<Vec<u8>>>);

impl Write for Capture {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.borrow_mut().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Capture {
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.borrow()).into_owned()
    }
}

fn run_case(case: &Case) -> Result<(), String> {
    let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
    let path = dir.path().to_string_lossy().into_owned();
    let env = vec![
        ("HOME".to_string(), path.clone()),
        ("PATH".to_string(), "/usr/bin:/bin".to_string()),
        ("USER".to_string(), "worker".to_string()),
        ("LANG".to_string(), "C.UTF-8".to_string()),
        ("PWD".to_string(), path.clone()),
    ];
    let invocation = Invocation {
        script: format!("{SETUP}{}", case.script),
        arg0: "bash".to_string(),
        args: Vec::new(),
        env,
        stdin: Some(Vec::new()),
    };
    let (out, err) = (Capture::default(), Capture::default());
    let status = ephemeral_shell::run(
        invocation,
        Rc::new(FakeHost::new()),
        Box::new(out.clone()),
        Box::new(err.clone()),
    );
    let stdout = out.text().replace(&path, "$DIR");
    let stderr = err.text().replace(&path, "$DIR");
    if stdout == case.stdout && stderr == case.stderr && status == case.status {
        return Ok(());
    }
    Err(format!(
        "script: {:?}\n  stdout: {:?}\n  wanted: {:?}\n  stderr: {:?}\n  wanted: {:?}\n  status: {status}, wanted {}",
        case.script, stdout, case.stdout, stderr, case.stderr, case.status
    ))
}

fn check(cases: &[Case], tool: &str) {
    let selected: Vec<&Case> = cases.iter().filter(|c| uses(c.script, tool)).collect();
    assert!(!selected.is_empty(), "no {tool} cases");
    let failures: Vec<String> = selected.iter().filter_map(|c| run_case(c).err()).collect();
    assert!(
        failures.is_empty(),
        "{} of {} {tool} cases differ from the real tools:\n{}",
        failures.len(),
        selected.len(),
        failures.join("\n")
    );
}

/// Whether `tool` is the first text processor the script runs.
fn uses(script: &str, tool: &str) -> bool {
    script
        .split(|c: char| c.is_whitespace() || matches!(c, '|' | ';' | '&' | '(' | ')'))
        .find_map(|word| match word {
            "grep" | "egrep" | "fgrep" => Some("grep"),
            "sed" | "awk" | "jq" => Some(word),
            _ => None,
        })
        == Some(tool)
}

#[test]
fn grep_matches_gnu_grep() {
    check(RECORDED, "grep");
}

#[test]
fn sed_matches_gnu_sed() {
    check(RECORDED, "sed");
}

#[test]
fn awk_matches_mawk() {
    check(RECORDED, "awk");
}

#[test]
fn jq_matches_jq() {
    check(RECORDED, "jq");
}

#[test]
fn every_case_belongs_to_a_tool() {
    let orphans: Vec<&str> = RECORDED
        .iter()
        .filter(|c| {
            !["grep", "sed", "awk", "jq"]
                .iter()
                .any(|t| uses(c.script, t))
        })
        .map(|c| c.script)
        .collect();
    assert!(orphans.is_empty(), "cases no test runs: {orphans:?}");
    assert!(RECORDED.len() >= 150);
}

/// Recorded from real bash (see the module comment).
const RECORDED: &[Case] = &[
    Case {
        script: "grep ERROR log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -c ERROR log.txt",
        stdout: "2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -n ERROR log.txt",
        stdout: "2:2024-01-01 ERROR disk full\n4:2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -v INFO log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -i error log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -ci info log.txt",
        stdout: "2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep nope log.txt; echo \"status=$?\"",
        stdout: "status=1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep ERROR nope.txt; echo \"status=$?\"",
        stdout: "status=2\n",
        stderr: "grep: nope.txt: No such file or directory\n",
        status: 0,
    },
    Case {
        script: "grep -s ERROR nope.txt; echo \"status=$?\"",
        stdout: "status=2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -q ERROR log.txt && echo found",
        stdout: "found\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -q nothing log.txt || echo absent",
        stdout: "absent\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rn TODO .",
        stdout: "./src/a.py:2:    # TODO: fix\n./src/b.rs:2:    // TODO later\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rn TODO src",
        stdout: "src/a.py:2:    # TODO: fix\nsrc/b.rs:2:    // TODO later\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -r TODO",
        stdout: "src/a.py:    # TODO: fix\nsrc/b.rs:    // TODO later\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rl TODO .",
        stdout: "./src/a.py\n./src/b.rs\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rL TODO src",
        stdout: "src/sub/c.txt\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -ri todo src | sort",
        stdout: "src/a.py:    # TODO: fix\nsrc/b.rs:    // TODO later\nsrc/sub/c.txt:todo lower\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rn --include='*.py' TODO .",
        stdout: "./src/a.py:2:    # TODO: fix\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rn --exclude='*.py' TODO src",
        stdout: "src/b.rs:2:    // TODO later\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rn --exclude-dir=sub -i todo src",
        stdout: "src/a.py:2:    # TODO: fix\nsrc/b.rs:2:    // TODO later\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rc TODO src | sort",
        stdout: "src/a.py:1\nsrc/b.rs:1\nsrc/sub/c.txt:0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -l ERROR log.txt data.csv words.txt",
        stdout: "log.txt\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -L ERROR log.txt data.csv",
        stdout: "data.csv\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep foo words.txt data.csv",
        stdout: "words.txt:foo\nwords.txt:foo bar\nwords.txt:foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -h foo words.txt log.txt words.txt",
        stdout: "foo\nfoo bar\nfoo\nfoo\nfoo bar\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -H foo words.txt",
        stdout: "words.txt:foo\nwords.txt:foo bar\nwords.txt:foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -o 'o\\+' words.txt",
        stdout: "oo\noo\noo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -o '[0-9]*-[0-9]*' log.txt",
        stdout: "2024-01\n-01\n2024-01\n-01\n2024-01\n-02\n2024-01\n-02\n2024-01\n-03\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -on ERROR log.txt",
        stdout: "2:ERROR\n4:ERROR\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -w foo words.txt",
        stdout: "foo\nfoo bar\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -x foo words.txt",
        stdout: "foo\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -wc ba words.txt",
        stdout: "0\n",
        stderr: "",
        status: 1,
    },
    Case {
        script: "grep -E 'ERROR|WARN' log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep 'ERROR\\|WARN' log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -E '^2024-01-0[12] (INFO|WARN)' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-02 WARN slow\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -F 'a.b' words.txt; echo $?",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -e foo -e baz words.txt",
        stdout: "foo\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "printf 'foo\\nbaz\\n' > pats; grep -f pats words.txt",
        stdout: "foo\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -A1 ERROR log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -B1 ERROR log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -C1 WARN log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -n -A1 'disk' log.txt",
        stdout: "2:2024-01-01 ERROR disk full\n3-2024-01-02 WARN slow\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -m1 ERROR log.txt",
        stdout: "2024-01-01 ERROR disk full\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -c foo words.txt nope.txt; echo $?",
        stdout: "words.txt:3\n2\n",
        stderr: "grep: nope.txt: No such file or directory\n",
        status: 0,
    },
    Case {
        script: "cat ps.txt | grep node",
        stdout: "worker 43 12.0 node server.js\nworker 99 0.0 grep node\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "cat ps.txt | grep node | grep -v grep",
        stdout: "worker 43 12.0 node server.js\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "cat ps.txt | grep -v grep | grep -c worker",
        stdout: "2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep '^root' ps.txt",
        stdout: "root 1 0.0 /sbin/init\nroot 77 0.1 sshd\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep 'js$' ps.txt",
        stdout: "worker 43 12.0 node server.js\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -E '[0-9]+\\.[0-9]+' -o ps.txt",
        stdout: "0.0\n1.5\n12.0\n0.1\n0.0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep '\\(foo\\) bar' words.txt",
        stdout: "foo bar\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep 'fo\\{2\\}' words.txt",
        stdout: "foo\nfoo bar\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -E 'fo{2}' words.txt",
        stdout: "foo\nfoo bar\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -E 'a{1' words.txt; echo $?",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep 'a\\{1' words.txt; echo $?",
        stdout: "2\n",
        stderr: "grep: Unmatched \\{\n",
        status: 0,
    },
    Case {
        script: "grep -E '(foo' words.txt; echo $?",
        stdout: "2\n",
        stderr: "grep: Unmatched ( or \\(\n",
        status: 0,
    },
    Case {
        script: "grep '[[:digit:]]\\{4\\}' log.txt | head -2",
        stdout: "2024-01-01 INFO start\n2024-01-01 ERROR disk full\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep '[[:upper:]]\\{4,\\}' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep src log.txt; grep -r nonexistentword src; echo $?",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep foo src; echo $?",
        stdout: "2\n",
        stderr: "grep: src: Is a directory\n",
        status: 0,
    },
    Case {
        script: "printf 'a\\0b\\nfoo\\n' > bin.dat; grep foo bin.dat; echo $?",
        stdout: "0\n",
        stderr: "grep: bin.dat: binary file matches\n",
        status: 0,
    },
    Case {
        script: "printf 'a\\0b\\nfoo\\n' > bin.dat; grep -c foo bin.dat",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep; echo $?",
        stdout: "2\n",
        stderr: "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n",
        status: 0,
    },
    Case {
        script: "grep -Z; echo $?",
        stdout: "2\n",
        stderr: "Usage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n",
        status: 0,
    },
    Case {
        script: "grep --bogus x log.txt; echo $?",
        stdout: "2\n",
        stderr: "grep: unrecognized option '--bogus'\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n",
        status: 0,
    },
    Case {
        script: "grep -e; echo $?",
        stdout: "2\n",
        stderr: "grep: option requires an argument -- 'e'\nUsage: grep [OPTION]... PATTERNS [FILE]...\nTry 'grep --help' for more information.\n",
        status: 0,
    },
    Case {
        script: "echo hello | grep -o l",
        stdout: "l\nl\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'a.b.c' | grep -F -o .",
        stdout: ".\n.\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'Hello World' | grep -io o",
        stdout: "o\no\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "printf 'x1\\nx2\\nx3\\nx4\\nx5\\nx6\\nx7\\n' | grep -A1 -e x2 -e x6",
        stdout: "x2\nx3\n--\nx6\nx7\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "printf 'x1\\nx2\\nx3\\nx4\\n' | grep -C1 -e x2 -e x3",
        stdout: "x1\nx2\nx3\nx4\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo abc | grep --color=never b",
        stdout: "abc\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo abc | grep --color=always b",
        stdout: "a\u{1b}[01;31m\u{1b}[Kb\u{1b}[m\u{1b}[Kc\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo abc | egrep 'b|z'",
        stdout: "abc\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'a+b' | fgrep '+'",
        stdout: "a+b\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -n '' words.txt",
        stdout: "1:foo\n2:bar\n3:foo bar\n4:baz\n5:foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -c '' data.csv",
        stdout: "5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo foo | grep -v foo; echo $?",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -b foo words.txt",
        stdout: "0:foo\n8:foo bar\n20:foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rh TODO src",
        stdout: "    # TODO: fix\n    // TODO later\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -r TODO src/a.py",
        stdout: "    # TODO: fix\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -rn TODO src/ | wc -l",
        stdout: "2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "printf 'no newline' | grep new",
        stdout: "no newline\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "grep -E '^$' words.txt; echo $?",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '2,4p' data.csv",
        stdout: "alice,30,85\nbob,25,92\ncarol,35,78\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '2p' data.csv",
        stdout: "alice,30,85\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '$p' data.csv",
        stdout: "dave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '1d' data.csv",
        stdout: "alice,30,85\nbob,25,92\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '$d' data.csv",
        stdout: "name,age,score\nalice,30,85\nbob,25,92\ncarol,35,78\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/,/;/' data.csv",
        stdout: "name;age,score\nalice;30,85\nbob;25,92\ncarol;35,78\ndave;25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/,/;/g' data.csv",
        stdout: "name;age;score\nalice;30;85\nbob;25;92\ncarol;35;78\ndave;25;88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/a/A/2' data.csv",
        stdout: "name,Age,score\nalice,30,85\nbob,25,92\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/a/A/2g' data.csv",
        stdout: "name,Age,score\nalice,30,85\nbob,25,92\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -e 's/alice/ALICE/' -e 's/bob/BOB/' data.csv",
        stdout: "name,age,score\nALICE,30,85\nBOB,25,92\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/alice/ALICE/; s/bob/BOB/' data.csv",
        stdout: "name,age,score\nALICE,30,85\nBOB,25,92\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's|/sbin/init|INIT|' ps.txt",
        stdout: "USER PID %CPU CMD\nroot 1 0.0 INIT\nworker 42 1.5 python3 app.py\nworker 43 12.0 node server.js\nroot 77 0.1 sshd\nworker 99 0.0 grep node\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's#foo#[&]#g' words.txt",
        stdout: "[foo]\nbar\n[foo] bar\nbaz\n[foo]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/\\(foo\\) \\(bar\\)/\\2 \\1/' words.txt",
        stdout: "foo\nbar\nbar foo\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -E 's/(foo) (bar)/\\2 \\1/' words.txt",
        stdout: "foo\nbar\nbar foo\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -r 's/o+/0/g' words.txt",
        stdout: "f0\nbar\nf0 bar\nbaz\nf0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/FOO/x/I' words.txt",
        stdout: "x\nbar\nx bar\nbaz\nx\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/foo/x/gi' words.txt",
        stdout: "x\nbar\nx bar\nbaz\nx\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n 's/foo/X/p' words.txt",
        stdout: "X\nX bar\nX\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '/ERROR/p' log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 ERROR timeout\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '/ERROR/d' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-02 WARN slow\n2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '/WARN/,/INFO/p' log.txt",
        stdout: "2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '/ERROR/!p' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-02 WARN slow\n2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '2,3!d' log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '2,+1p' log.txt",
        stdout: "2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '1~2p' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-02 WARN slow\n2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '0,/ERROR/p' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-01 ERROR disk full\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '3q' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '3Q' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-01 ERROR disk full\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '/ERROR/{p;q}' log.txt",
        stdout: "2024-01-01 ERROR disk full\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '2i\\inserted' words.txt",
        stdout: "foo\ninserted\nbar\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '2a appended' words.txt",
        stdout: "foo\nbar\nappended\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '/baz/c\\changed' words.txt",
        stdout: "foo\nbar\nfoo bar\nchanged\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '$a\\END' words.txt",
        stdout: "foo\nbar\nfoo bar\nbaz\nfoo\nEND\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '1i HEADER' data.csv",
        stdout: "HEADER\nname,age,score\nalice,30,85\nbob,25,92\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed = words.txt",
        stdout: "1\nfoo\n2\nbar\n3\nfoo bar\n4\nbaz\n5\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '$=' log.txt",
        stdout: "5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 'y/abc/ABC/' words.txt",
        stdout: "foo\nBAr\nfoo BAr\nBAz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n 'h;n;G;p' words.txt",
        stdout: "bar\nfoo\nbaz\nfoo bar\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 'N;s/\\n/ /' words.txt",
        stdout: "foo bar\nfoo bar baz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed ':a;N;$!ba;s/\\n/,/g' words.txt",
        stdout: "foo,bar,foo bar,baz,foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '$!N;P;D' words.txt",
        stdout: "foo\nbar\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '1!G;h;$p' words.txt",
        stdout: "foo\nbaz\nfoo bar\nbar\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 'x;$!d' words.txt",
        stdout: "baz\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '/foo/{s/foo/F/;s/bar/B/}' words.txt",
        stdout: "F\nbar\nF B\nbaz\nF\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -e '/foo/{' -e 's/o/0/g' -e '}' words.txt",
        stdout: "f00\nbar\nf00 bar\nbaz\nf00\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/o/0/;t;s/a/@/' words.txt",
        stdout: "f0o\nb@r\nf0o bar\nb@z\nf0o\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/o/0/;T;s/$/!/' words.txt",
        stdout: "f0o!\nbar\nf0o bar!\nbaz\nf0o!\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '# comment\ns/foo/X/' words.txt",
        stdout: "X\nbar\nX bar\nbaz\nX\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/.*/\\U&/' words.txt",
        stdout: "FOO\nBAR\nFOO BAR\nBAZ\nFOO\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/\\(.\\)\\(.*\\)/\\u\\1\\2/' words.txt",
        stdout: "Foo\nBar\nFoo bar\nBaz\nFoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/[aeiou]//g' words.txt",
        stdout: "f\nbr\nf br\nbz\nf\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/^/> /' words.txt",
        stdout: "> foo\n> bar\n> foo bar\n> baz\n> foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/$/;/' words.txt",
        stdout: "foo;\nbar;\nfoo bar;\nbaz;\nfoo;\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/x*/-/g' words.txt",
        stdout: "-f-o-o-\n-b-a-r-\n-f-o-o- -b-a-r-\n-b-a-z-\n-f-o-o-\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -i 's/foo/bar/g' words.txt && cat words.txt",
        stdout: "bar\nbar\nbar bar\nbaz\nbar\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -i.bak 's/foo/qux/' words.txt && cat words.txt words.txt.bak",
        stdout: "qux\nbar\nqux bar\nbaz\nqux\nfoo\nbar\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -i '1d' data.csv log.txt && cat data.csv log.txt",
        stdout: "alice,30,85\nbob,25,92\ncarol,35,78\ndave,25,88\n2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '2{p;p}' words.txt",
        stdout: "bar\nbar\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '/foo/=' words.txt",
        stdout: "1\n3\n5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/a/b' words.txt; echo $?",
        stdout: "1\n",
        stderr: "sed: -e expression #1, char 5: unterminated `s' command\n",
        status: 0,
    },
    Case {
        script: "sed 'k' words.txt; echo $?",
        stdout: "1\n",
        stderr: "sed: -e expression #1, char 1: unknown command: `k'\n",
        status: 0,
    },
    Case {
        script: "sed 's/a/b/q' words.txt; echo $?",
        stdout: "1\n",
        stderr: "sed: -e expression #1, char 7: unknown option to `s'\n",
        status: 0,
    },
    Case {
        script: "sed 'b nowhere' words.txt; echo $?",
        stdout: "4\n",
        stderr: "sed: can't find label for jump to `nowhere'\n",
        status: 0,
    },
    Case {
        script: "sed p nope.txt; echo $?",
        stdout: "2\n",
        stderr: "sed: can't read nope.txt: No such file or directory\n",
        status: 0,
    },
    Case {
        script: "sed; echo $?",
        stdout: "1\n",
        stderr: "Usage: sed [OPTION]... {script-only-if-no-other-script} [input-file]...\n\n  -n, --quiet, --silent\n                 suppress automatic printing of pattern space\n      --debug\n                 annotate program execution\n  -e script, --expression=script\n                 add the script to the commands to be executed\n  -f script-file, --file=script-file\n                 add the contents of script-file to the commands to be executed\n  --follow-symlinks\n                 follow symlinks when processing in place\n  -i[SUFFIX], --in-place[=SUFFIX]\n                 edit files in place (makes backup if SUFFIX supplied)\n  -l N, --line-length=N\n                 specify the desired line-wrap length for the `l' command\n  --posix\n                 disable all GNU extensions.\n  -E, -r, --regexp-extended\n                 use extended regular expressions in the script\n                 (for portability use POSIX -E).\n  -s, --separate\n                 consider files as separate rather than as a single,\n                 continuous long stream.\n      --sandbox\n                 operate in sandbox mode (disable e/r/w commands).\n  -u, --unbuffered\n                 load minimal amounts of data from the input files and flush\n                 the output buffers more often\n  -z, --null-data\n                 separate lines by NUL characters\n      --help     display this help and exit\n      --version  output version information and exit\n\nIf no -e, --expression, -f, or --file option is given, then the first\nnon-option argument is taken as the sed script to interpret.  All\nremaining arguments are names of input files; if no input files are\nspecified, then the standard input is read.\n\nGNU sed home page: <https://www.gnu.org/software/sed/>.\nGeneral help using GNU software: <https://www.gnu.org/gethelp/>.\n",
        status: 0,
    },
    Case {
        script: "sed -n p words.txt nope.txt log.txt; echo $?",
        stdout: "foo\nbar\nfoo bar\nbaz\nfoo\n2024-01-01 INFO start\n2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n2024-01-02 ERROR timeout\n2024-01-03 INFO done\n2\n",
        stderr: "sed: can't read nope.txt: No such file or directory\n",
        status: 0,
    },
    Case {
        script: "printf 'a\\nb' | sed 's/b/c/'",
        stdout: "a\nc",
        stderr: "",
        status: 0,
    },
    Case {
        script: "printf 'one two\\n' | sed 's/\\w\\+/[&]/g'",
        stdout: "[one] [two]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'path/to/file.txt' | sed 's/.*\\///'",
        stdout: "file.txt\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'key = value' | sed 's/ *= */=/'",
        stdout: "key=value\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'aaa' | sed 's/a/b/3'",
        stdout: "aab\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo hello | sed 's/l/L/g;s/h/H/'",
        stdout: "HeLLo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'x,y,z' | sed 's/,/\\n/g'",
        stdout: "x\ny\nz\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo abc | sed 'y/abc/\\n\\t-/' | tr '\\n\\t' 'NT'",
        stdout: "NT-N",
        stderr: "",
        status: 0,
    },
    Case {
        script: "seq 1 10 | sed -n '3,5p'",
        stdout: "3\n4\n5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "seq 1 10 | sed '0~3d'",
        stdout: "1\n2\n4\n5\n7\n8\n10\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "seq 1 5 | sed -n '2,4!p'",
        stdout: "1\n5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "seq 1 6 | sed 'n;d'",
        stdout: "1\n3\n5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "seq 1 3 | sed 'l'",
        stdout: "1$\n1\n2$\n2\n3$\n3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'tab\there' | sed -n l",
        stdout: "tab\\there$\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n -e 2p -e 4p data.csv",
        stdout: "alice,30,85\ncarol,35,78\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed --expression=1d data.csv",
        stdout: "alice,30,85\nbob,25,92\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -s -n '$p' data.csv log.txt",
        stdout: "dave,25,88\n2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '$p' data.csv log.txt",
        stdout: "2024-01-03 INFO done\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 'w out.txt' words.txt > /dev/null; cat out.txt",
        stdout: "foo\nbar\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '/foo/w found.txt' words.txt; cat found.txt",
        stdout: "foo\nfoo bar\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed '2r data.csv' words.txt",
        stdout: "foo\nbar\nname,age,score\nalice,30,85\nbob,25,92\ncarol,35,78\ndave,25,88\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -E 's/([a-z]+),([0-9]+)/\\2:\\1/' data.csv",
        stdout: "name,age,score\n30:alice,85\n25:bob,92\n35:carol,78\n25:dave,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed 's/[0-9]\\{2\\}/NN/g' data.csv",
        stdout: "name,age,score\nalice,NN,NN\nbob,NN,NN\ncarol,NN,NN\ndave,NN,NN\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "sed -n '/^bob/,$p' data.csv",
        stdout: "bob,25,92\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F, '{s+=$3} END {print s}' data.csv",
        stdout: "343\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F, 'NR>1 {s+=$3} END {print s/(NR-1)}' data.csv",
        stdout: "85.75\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print $1}' words.txt | sort | uniq -c",
        stdout: "      1 bar\n      1 baz\n      3 foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F, 'NR>1 && $2 > 26' data.csv",
        stdout: "alice,30,85\ncarol,35,78\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F, 'NR>1 && $2 > 26 {print $1}' data.csv",
        stdout: "alice\ncarol\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print NR\": \"$0}' words.txt",
        stdout: "1: foo\n2: bar\n3: foo bar\n4: baz\n5: foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print NF}' words.txt",
        stdout: "1\n1\n2\n1\n1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print $NF}' ps.txt",
        stdout: "CMD\n/sbin/init\napp.py\nserver.js\nsshd\nnode\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print $(NF-1)}' ps.txt",
        stdout: "%CPU\n0.0\npython3\nnode\n0.1\ngrep\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'END {print NR}' log.txt",
        stdout: "5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '/ERROR/ {n++} END {print n+0}' log.txt",
        stdout: "2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '$3 == \"ERROR\" {print $4, $5}' log.txt",
        stdout: "",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{count[$3]++} END {for (k in count) print k, count[k]}' log.txt | sort",
        stdout: "disk 1\ndone 1\nslow 1\nstart 1\ntimeout 1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print \"start\"} {n++} END {print \"end\", n}' words.txt",
        stdout: "start\nend 5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F, -v OFS='|' '{$1=$1; print}' data.csv",
        stdout: "name|age|score\nalice|30|85\nbob|25|92\ncarol|35|78\ndave|25|88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F, 'BEGIN{OFS=\"\\t\"} {print $1,$3}' data.csv",
        stdout: "name\tscore\nalice\t85\nbob\t92\ncarol\t78\ndave\t88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -v x=5 'BEGIN {print x * 2}'",
        stdout: "10\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {printf \"%5.2f|%-5s|%05d|%x|%c\\n\", 3.14159, \"ab\", 42, 255, 65}'",
        stdout: " 3.14|ab   |00042|ff|A\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {printf \"%e %g %g %i\\n\", 1234.5, 0.0001234, 100000000, 7.9}'",
        stdout: "1.234500e+03 0.0001234 1e+08 7\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {x = sprintf(\"%03d-%s\", 7, \"x\"); print x}'",
        stdout: "007-x\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print length(\"hello\"), substr(\"hello\", 2, 3), index(\"hello\", \"l\")}'",
        stdout: "5 ell 3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print toupper(\"abc\"), tolower(\"ABC\")}'",
        stdout: "ABC abc\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {n = split(\"a:b:c\", arr, \":\"); print n, arr[1], arr[3]}'",
        stdout: "3 a c\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {s = \"foo bar foo\"; n = gsub(/foo/, \"baz\", s); print n, s}'",
        stdout: "2 baz bar baz\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {s = \"foo bar foo\"; sub(/foo/, \"[&]\", s); print s}'",
        stdout: "[foo] bar foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{gsub(/o/, \"0\"); print}' words.txt",
        stdout: "f00\nbar\nf00 bar\nbaz\nf00\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {if (match(\"foobar\", /ob+/)) print RSTART, RLENGTH}'",
        stdout: "3 2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print int(3.9), int(-3.9), sqrt(16), exp(0), log(1)}'",
        stdout: "3 -3 4 1 0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print 1/3, 2^10, 7%3, -7%3, 1e6, 1e20, 0.1+0.2}'",
        stdout: "0.333333 1024 1 -1 1000000 1e+20 0.3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print 2^31, 2^53, 100000 * 100000}'",
        stdout: "2.14748e+09 9.0072e+15 1e+10\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {x[\"a\"]=1; x[\"b\"]=2; delete x[\"a\"]; print (\"a\" in x), (\"b\" in x), length(x)}'",
        stdout: "0 1 1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {for (i = 0; i < 3; i++) print i}'",
        stdout: "0\n1\n2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {i = 0; while (i < 3) {print i; i++}}'",
        stdout: "0\n1\n2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {i = 5; do {print i; i++} while (i < 3)}'",
        stdout: "5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {for (i = 0; i < 10; i++) {if (i == 2) continue; if (i == 4) break; print i}}'",
        stdout: "0\n1\n3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'NR == 2 {next} {print}' words.txt",
        stdout: "foo\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'NR == 3 {exit} {print}' words.txt",
        stdout: "foo\nbar\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {exit 3} END {print \"end\"}'; echo $?",
        stdout: "end\n3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{exit 4} END {print \"in end\"}' words.txt; echo $?",
        stdout: "in end\n4\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'function double(x) {return x * 2} BEGIN {print double(21)}'",
        stdout: "42\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'function fact(n) {return n <= 1 ? 1 : n * fact(n - 1)} BEGIN {print fact(10)}'",
        stdout: "3628800\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'function fill(a) {a[\"k\"] = 1} BEGIN {fill(arr); print arr[\"k\"]}'",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print > \"out.txt\"} END {close(\"out.txt\"); while ((getline line < \"out.txt\") > 0) print \"got\", line}' words.txt",
        stdout: "got foo\ngot bar\ngot foo bar\ngot baz\ngot foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print $1 >> \"app.txt\"}' words.txt; awk '{print $1 >> \"app.txt\"}' words.txt; wc -l < app.txt",
        stdout: "10\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {while ((getline line < \"data.csv\") > 0) n++; print n}'",
        stdout: "5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'NR==1 {getline; print \"after getline:\", $0}' words.txt",
        stdout: "after getline: bar\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { \"echo hi\" | getline x; print \"got\", x }'",
        stdout: "got hi\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { r = system(\"echo from system\"); print \"rc\", r }'",
        stdout: "from system\nrc 0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { print \"b\\na\" | \"sort\" }'",
        stdout: "a\nb\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '$2 ~ /^[0-9]+$/ {print $2}' ps.txt",
        stdout: "1\n42\n43\n77\n99\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '$1 !~ /root/' ps.txt",
        stdout: "USER PID %CPU CMD\nworker 42 1.5 python3 app.py\nworker 43 12.0 node server.js\nworker 99 0.0 grep node\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'NR==1, NR==3' log.txt",
        stdout: "2024-01-01 INFO start\n2024-01-01 ERROR disk full\n2024-01-02 WARN slow\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '/INFO/,/WARN/ {print NR}' log.txt",
        stdout: "1\n2\n3\n5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F, '$2 == 25' data.csv",
        stdout: "bob,25,92\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F, '$1 > \"c\"' data.csv",
        stdout: "name,age,score\ncarol,35,78\ndave,25,88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '$2 > 10' ps.txt",
        stdout: "USER PID %CPU CMD\nworker 42 1.5 python3 app.py\nworker 43 12.0 node server.js\nroot 77 0.1 sshd\nworker 99 0.0 grep node\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{ $2 = \"X\"; print }' words.txt",
        stdout: "foo X\nbar X\nfoo X\nbaz X\nfoo X\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{ $5 = \"E\"; print; print NF }' words.txt",
        stdout: "foo    E\n5\nbar    E\n5\nfoo bar   E\n5\nbaz    E\n5\nfoo    E\n5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{ NF = 1; print }' ps.txt",
        stdout: "USER\nroot\nworker\nworker\nroot\nworker\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {FS=\",\"} {print $2}' data.csv",
        stdout: "age\n30\n25\n35\n25\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F: '{print $1}' /dev/null; echo $?",
        stdout: "0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F'[,]' '{print $1 \"-\" $3}' data.csv",
        stdout: "name-score\nalice-85\nbob-92\ncarol-78\ndave-88\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F', *' '{print $2}' data.csv",
        stdout: "age\n30\n25\n35\n25\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "printf 'a b\\n\\nc d\\ne f\\n' | awk 'BEGIN {RS=\"\"} {print NR\": \"$1\" \"NF}'",
        stdout: "1: a 2\n2: c 4\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "printf 'a;b;c' | awk 'BEGIN {RS=\";\"} {print}'",
        stdout: "a\nb\nc\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print FILENAME, FNR}' words.txt data.csv | tail -3",
        stdout: "data.csv 3\ndata.csv 4\ndata.csv 5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {printf \"%s\\n\"}'; echo $?",
        stdout: "2\n",
        stderr: "awk: run time error: not enough arguments passed to printf(\"%s\n\")\n\tFILENAME=\"\" FNR=0 NR=0\n",
        status: 0,
    },
    Case {
        script: "awk '{' ; echo $?",
        stdout: "2\n",
        stderr: "awk: line 2: missing } near end of file\n",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print \"unterminated}' ; echo $?",
        stdout: "2\n",
        stderr: "awk: line 1: runaway string constant \"unterminat ...\n",
        status: 0,
    },
    Case {
        script: "awk '{print $1}' nope.txt; echo $?",
        stdout: "2\n",
        stderr: "awk: cannot open nope.txt (No such file or directory)\n",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print length()}' < /dev/null",
        stdout: "0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '3 4' | awk '{print $1 * $2, $1 $2, $1 + $2}'",
        stdout: "12 34 7\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '10 9' | awk '{print ($1 > $2), (\"10\" > \"9\")}'",
        stdout: "1 0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'x' | awk '{print (x == 0), (x == \"\"), length(x)}'",
        stdout: "1 1 0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '1e3 0x10 010' | awk '{print $1 + 0, $2 + 0, $3 + 0}'",
        stdout: "1000 16 10\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'a b c' | awk '{$2 = \"\"; print; print NF}'",
        stdout: "a  c\n3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'hello' | awk '{print substr($0, 0, 2), substr($0, -1), substr($0, 3)}'",
        stdout: "he hello llo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'abc' | awk '{print length}'",
        stdout: "3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo | awk '{print 1/0}'",
        stdout: "inf\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {x = \"3x\"; print x + 1, -x, !x}'",
        stdout: "4 -3 0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {a = 1; a += 2; a *= 3; a -= 1; a /= 2; a %= 3; a ^= 2; print a}'",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {a = 5; print a++, a, ++a, a--, --a}'",
        stdout: "5 6 7 7 5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print 1 == 1.0, \"a\" < \"b\", 2 < 10, \"2\" < \"10\"}'",
        stdout: "1 1 1 0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {print substr(\"hello\", 2)}'",
        stdout: "ello\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {OFS = \"-\"; $0 = \"a b c\"; $1 = $1; print; print NF}'",
        stdout: "a-b-c\n3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {CONVFMT = \"%.2f\"; x = 3.14159; y = x \"\"; print y}'",
        stdout: "3.14\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN {OFMT = \"%.2f\"; print 3.14159, 3}'",
        stdout: "3.14 3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { printf \"%s %s %s\\n\", \"a\", \"b\", \"c\" }'",
        stdout: "a b c\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { printf(\"%d items\\n\", 3) }'",
        stdout: "3 items\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { print (1,2) in a }'",
        stdout: "0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { a[1,2] = 3; for (k in a) { split(k, p, SUBSEP); print p[1], p[2] } }'",
        stdout: "1 2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { print index(\"abc\", \"\"), length(12345), 1 \" \" 2 }'",
        stdout: "1 5 1 2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { s = \"aaa\"; print gsub(/a/, \"b\", s), s; t = \"abc\"; gsub(\"\", \"-\", t); print t }'",
        stdout: "3 bbb\n-a-b-c-\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { printf \"%5s|%-5d|%.3s\\n\", \"ab\", 42, \"abcdef\" }'",
        stdout: "   ab|42   |abc\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { printf \"%c%c\\n\", \"hello\", 10 }' | tr '\\n' 'N'",
        stdout: "hNN",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -f nope.awk; echo $?",
        stdout: "2\n",
        stderr: "awk: cannot open nope.awk (No such file or directory)\n",
        status: 0,
    },
    Case {
        script: "printf '{print $2}\\n' > prog.awk; awk -f prog.awk words.txt",
        stdout: "\n\nbar\n\n\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { getline line < \"nope\"; print \"r\" }'",
        stdout: "r\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { print ENVIRON[\"USER\"] }'",
        stdout: "worker\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { print ARGC, ARGV[1] }' foo",
        stdout: "2 foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{print v, $1}' v=1 words.txt | head -2",
        stdout: "1 foo\n1 bar\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { x = 1; x = x \"\" ; print (x < 10) }'",
        stdout: "1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { print -3 % 2, 2 ** 3, 2 ^ 3 ^ 2 }'",
        stdout: "",
        stderr: "awk: line 1: syntax error at or near *\n",
        status: 2,
    },
    Case {
        script: "awk 'BEGIN { print 1 - -1, 1 - - 1 }'",
        stdout: "2 2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { print \"a\" > \"/dev/stderr\" }'",
        stdout: "",
        stderr: "a\n",
        status: 0,
    },
    Case {
        script: "awk '{ print $0 > ($1 \".out\") } END { close(\"foo.out\"); while ((getline l < \"foo.out\") > 0) print \"foo:\", l }' words.txt",
        stdout: "foo: foo\nfoo: foo bar\nfoo: foo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'length > 3' words.txt",
        stdout: "foo bar\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'NF' words.txt",
        stdout: "foo\nbar\nfoo bar\nbaz\nfoo\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '!seen[$0]++' words.txt",
        stdout: "foo\nbar\nfoo bar\nbaz\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk '{ sum[$1] += $3 } END { for (u in sum) printf \"%s %.1f\\n\", u, sum[u] }' ps.txt | sort",
        stdout: "USER 0.0\nroot 0.1\nworker 13.5\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { while (i++ < 3) s = s i; print s }'",
        stdout: "123\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN{x=0; if (x) print \"t\"; else print \"f\"}'",
        stdout: "f\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { if (!(3 in a)) print \"no\"; if (a[3] == \"\") print \"empty\"; if (3 in a) print \"now\" }'",
        stdout: "no\nempty\nnow\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk -F'\\t' '{print $2}' <<< $'a\\tb\\tc'",
        stdout: "b\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { printf \"%d %d\\n\", \"0x1A\", 3000000000 }'",
        stdout: "26 2147483647\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { n = split(\"  a  b  \", arr); print n, arr[1] arr[2] }'",
        stdout: "2 ab\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "awk 'BEGIN { n = split(\"a1b2c\", arr, /[0-9]/); print n, arr[3] }'",
        stdout: "3 c\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq . items.json",
        stdout: "{\n  \"items\": [\n    {\n      \"name\": \"a\",\n      \"n\": 1,\n      \"tags\": [\n        \"x\"\n      ]\n    },\n    {\n      \"name\": \"b\",\n      \"n\": 2,\n      \"tags\": []\n    }\n  ],\n  \"meta\": {\n    \"count\": 2,\n    \"ok\": true,\n    \"pi\": 3.14\n  }\n}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -c . items.json",
        stdout: "{\"items\":[{\"name\":\"a\",\"n\":1,\"tags\":[\"x\"]},{\"name\":\"b\",\"n\":2,\"tags\":[]}],\"meta\":{\"count\":2,\"ok\":true,\"pi\":3.14}}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.meta' items.json",
        stdout: "{\n  \"count\": 2,\n  \"ok\": true,\n  \"pi\": 3.14\n}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.meta.count' items.json",
        stdout: "2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -r '.items[].name' items.json",
        stdout: "a\nb\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.items[].name' items.json",
        stdout: "\"a\"\n\"b\"\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.items[0]' items.json",
        stdout: "{\n  \"name\": \"a\",\n  \"n\": 1,\n  \"tags\": [\n    \"x\"\n  ]\n}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.items | length' items.json",
        stdout: "2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq 'keys' items.json",
        stdout: "[\n  \"items\",\n  \"meta\"\n]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.items | map(.n)' items.json",
        stdout: "[\n  1,\n  2\n]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.items[] | select(.n > 1)' items.json",
        stdout: "{\n  \"name\": \"b\",\n  \"n\": 2,\n  \"tags\": []\n}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -c '.items[] | {name, n}' items.json",
        stdout: "{\"name\":\"a\",\"n\":1}\n{\"name\":\"b\",\"n\":2}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '[.items[].n] | add' items.json",
        stdout: "3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -r '.items[] | \"\\(.name)=\\(.n)\"' items.json",
        stdout: "a=1\nb=2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -r '.items[] | [.name, .n] | @csv' items.json",
        stdout: "\"a\",1\n\"b\",2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -r '.items[] | [.name, .n] | @tsv' items.json",
        stdout: "a\t1\nb\t2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.meta.pi' items.json",
        stdout: "3.14\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.missing' items.json",
        stdout: "null\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -e '.missing' items.json; echo $?",
        stdout: "null\n1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -e '.meta.ok' items.json; echo $?",
        stdout: "true\n0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -n '1 + 2'",
        stdout: "3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -n --arg x hello '$x'",
        stdout: "\"hello\"\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -n --argjson x '{\"a\":[1,2]}' '$x.a[1]'",
        stdout: "2\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '1 2 3' | jq -s .",
        stdout: "[\n  1,\n  2,\n  3\n]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '1 2 3' | jq -s 'add'",
        stdout: "6\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"b\":2,\"a\":1}' | jq -S .",
        stdout: "{\n  \"a\": 1,\n  \"b\": 2\n}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"b\":2,\"a\":1}' | jq -c 'to_entries'",
        stdout: "[{\"key\":\"b\",\"value\":2},{\"key\":\"a\",\"value\":1}]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[3,1,2]' | jq -c 'sort'",
        stdout: "[1,2,3]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[3,1,2]' | jq 'max, min'",
        stdout: "3\n1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":{\"b\":null}}' | jq '.a.b // \"default\"'",
        stdout: "\"default\"\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '\"hello\"' | jq -r 'ascii_upcase'",
        stdout: "HELLO\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '\"a,b,c\"' | jq -c 'split(\",\")'",
        stdout: "[\"a\",\"b\",\"c\"]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[\"a\",\"b\"]' | jq -r 'join(\"-\")'",
        stdout: "a-b\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":1}' | jq '.a.b'; echo $?",
        stdout: "5\n",
        stderr: "jq: error (at <stdin>:1): Cannot index number with string \"b\"\n",
        status: 0,
    },
    Case {
        script: "echo '[1]' | jq '.a'; echo $?",
        stdout: "5\n",
        stderr: "jq: error (at <stdin>:1): Cannot index array with string \"a\"\n",
        status: 0,
    },
    Case {
        script: "echo 5 | jq '.[]'; echo $?",
        stdout: "5\n",
        stderr: "jq: error (at <stdin>:1): Cannot iterate over number (5)\n",
        status: 0,
    },
    Case {
        script: "echo hello | jq .; echo $?",
        stdout: "4\n",
        stderr: "parse error: Invalid numeric literal at line 2, column 0\n",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":1' | jq .; echo $?",
        stdout: "4\n",
        stderr: "parse error: Unfinished JSON term at EOF at line 2, column 0\n",
        status: 0,
    },
    Case {
        script: "jq . nope.json; echo $?",
        stdout: "2\n",
        stderr: "jq: error: Could not open file nope.json: No such file or directory\n",
        status: 0,
    },
    Case {
        script: "jq '.[' items.json; echo $?",
        stdout: "3\n",
        stderr: "jq: error: syntax error, unexpected $end (Unix shell quoting issues?) at <top-level>, line 1:\n.[ \njq: 1 compile error\n",
        status: 0,
    },
    Case {
        script: "jq -n '$undefined'; echo $?",
        stdout: "3\n",
        stderr: "jq: error: $undefined is not defined at <top-level>, line 1:\n$undefined\njq: 1 compile error\n",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":[1,2,{\"b\":\"c\"}]}' | jq .",
        stdout: "{\n  \"a\": [\n    1,\n    2,\n    {\n      \"b\": \"c\"\n    }\n  ]\n}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[]' | jq '., {}'",
        stdout: "[]\n{}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"x\":1.5e300,\"y\":100000000000000000000,\"z\":0.00001}' | jq -c .",
        stdout: "{\"x\":1.5e+300,\"y\":1e+20,\"z\":1e-05}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '\"tab\\there\\u0001\"' | jq .",
        stdout: "\"tab\\there\\u0001\"\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":1}' | jq --tab .",
        stdout: "{\n\t\"a\": 1\n}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":[1,2]}' | jq --indent 4 .",
        stdout: "{\n    \"a\": [\n        1,\n        2\n    ]\n}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[1,2,3]' | jq -c 'map(. * 10) | .[1:]'",
        stdout: "[20,30]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"items\":[{\"id\":1,\"ok\":true},{\"id\":2,\"ok\":false}]}' | jq -c '[.items[] | select(.ok) | .id]'",
        stdout: "[1]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":1}' | jq -r 'has(\"a\"), has(\"b\")'",
        stdout: "true\nfalse\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[1,2]' | jq -j '.[]'; echo",
        stdout: "12\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '\"x\"' | jq -r '. + \"y\"'",
        stdout: "xy\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":1}' | jq '.a + \"x\"'; echo $?",
        stdout: "5\n",
        stderr: "jq: error (at <stdin>:1): number (1) and string (\"x\") cannot be added\n",
        status: 0,
    },
    Case {
        script: "jq -n 'error(\"boom\")'; echo $?",
        stdout: "5\n",
        stderr: "jq: error (at <unknown>): boom\n",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":\"\u{e9}\"}' | jq -c .",
        stdout: "{\"a\":\"\u{e9}\"}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":\"\u{e9}\"}' | jq -a -c .",
        stdout: "{\"a\":\"\\u00e9\"}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq -r '.items[] | select(.name == \"b\") | .tags | length' items.json",
        stdout: "0\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "jq '.items | first | .name' items.json",
        stdout: "\"a\"\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[{\"k\":\"a\",\"v\":1},{\"k\":\"b\",\"v\":2}]' | jq -c 'map({(.k): .v}) | add'",
        stdout: "{\"a\":1,\"b\":2}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":1,\"b\":2}' | jq -c 'with_entries(.value += 1)'",
        stdout: "{\"a\":2,\"b\":3}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[1,[2,[3]]]' | jq -c 'flatten'",
        stdout: "[1,2,3]\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":1}' | jq -c '.b = 2'",
        stdout: "{\"a\":1,\"b\":2}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":1,\"b\":2}' | jq -c 'del(.a)'",
        stdout: "{\"b\":2}\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[1,2,2,3]' | jq -c 'unique, length'",
        stdout: "[1,2,3]\n4\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '\"2\"' | jq 'tonumber + 1'",
        stdout: "3\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '12' | jq 'tostring'",
        stdout: "\"12\"\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '{\"a\":null}' | jq -r '.a'",
        stdout: "null\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo 'null' | jq -e . ; echo $?",
        stdout: "null\n1\n",
        stderr: "",
        status: 0,
    },
    Case {
        script: "echo '[1,2]' | jq 'type, (.[0] | type)'",
        stdout: "\"array\"\n\"number\"\n",
        stderr: "",
        status: 0,
    },
];
