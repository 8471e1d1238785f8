//! An archive whose member names lead out (`../`, an absolute path, `..`
//! in the middle) is extracted inside the target folder only, with
//! UnZip's warnings and exit status 1; nothing appears beside it.

mod parity;

use std::io::Write;

use parity::run_script;

#[test]
fn hostile_member_names_land_inside_the_folder() {
    let dir = tempfile::tempdir().unwrap();
    let mut zip = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let options = zip::write::SimpleFileOptions::default();
    for name in [
        "../evil.txt",
        "/abs.txt",
        "a/../../../up.txt",
        "ok/fine.txt",
    ] {
        zip.start_file(name, options).unwrap();
        zip.write_all(b"x\n").unwrap();
    }
    let bytes = zip.finish().unwrap().into_inner();
    std::fs::write(dir.path().join("evil.zip"), bytes).unwrap();
    let ran = run_script(
        dir.path(),
        "mkdir in && cd in && unzip -q ../evil.zip; echo rc=$?; find . -type f | sort",
    );
    assert_eq!(
        ran.stdout,
        "rc=1\n./a/up.txt\n./abs.txt\n./evil.txt\n./ok/fine.txt\n"
    );
    assert!(
        ran.stderr
            .contains("warning:  skipped \"../\" path component(s) in ../evil.txt")
    );
    assert!(
        ran.stderr
            .contains("warning:  stripped absolute path spec from /abs.txt")
    );
    for outside in ["evil.txt", "abs.txt", "up.txt"] {
        assert!(!dir.path().join(outside).exists(), "{outside} escaped");
    }
    assert!(!std::path::Path::new("/abs.txt").exists());
}
