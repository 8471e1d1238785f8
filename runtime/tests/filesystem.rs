//! The in-memory filesystem behaves as ordinary programs expect from Linux:
//! a std::fs transcript in the sandbox matches the one the same program
//! (`runtime/test-guests/src/bin/fs_ops.rs`) prints natively on Linux
//! (`cargo run -p ephemeral-test-guests --bin fs_ops -- "$(mktemp -d)"`).

mod common;

use common::{guest, sandbox, text};

const EXPECTED: &str = "\
mkdir -p: ok
write: ok
append: ok
read: hello
world

seek+overwrite: hEllo|world|
set_len: 3
rename: ok
old gone: error No such file or directory
readdir: c,g.txt
is_dir: true false
mtime recent: true
hard link: ok
read link: hEl
rmdir non-empty: error Directory not empty
remove file: ok
remove_dir_all: ok
gone: error No such file or directory
create_new twice: error File exists
dev null: ok
tmp writable: ok
cwd: BASE
";

#[test]
fn std_fs_transcript_matches_linux() {
    let mut sb = sandbox();
    let scratch = sb.scratch_dir().to_owned();
    let out = sb
        .run_captured(&guest("fs_ops"), &["fs_ops", &scratch])
        .unwrap();
    assert_eq!(text(&out.stderr), "");
    assert_eq!(text(&out.stdout), EXPECTED);
    assert_eq!(out.outcome.exit_code, 0);
}
