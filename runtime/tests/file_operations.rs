//! The file operations the API's sandboxes and run outputs use, as the
//! sandbox's own user: one spelling of each path, nothing outside `/tmp`,
//! folders made on the way, the disk quota counted as bytes arrive and a
//! write that does not fit leaving nothing behind, globs that find only
//! regular files.

mod common;

use common::runtime;
use ephemeral_runtime::{FileError, FileKind, Limits};

#[test]
fn paths_have_one_spelling_and_stay_under_tmp() {
    let sb = runtime().sandbox().build().unwrap();
    let scratch = sb.user_path(".").unwrap();
    assert!(
        scratch.starts_with("/tmp/ephemeral-run-") && scratch.ends_with("/scratch"),
        "{scratch}"
    );
    assert_eq!(sb.user_path("./a//b/").unwrap(), format!("{scratch}/a/b"));
    assert_eq!(sb.user_path("/tmp/./x").unwrap(), "/tmp/x");
    for bad in [
        "",
        "../x",
        "a/../../etc",
        "/etc/passwd",
        "/proc/self/environ",
        "x\0y",
        "/",
    ] {
        assert!(
            matches!(sb.user_path(bad), Err(FileError::BadPath(_))),
            "{bad:?}"
        );
    }
}

#[test]
fn writes_make_folders_and_read_back() {
    let mut sb = runtime().sandbox().build().unwrap();
    assert_eq!(sb.write_file_at("deep/er/f.txt", 0, b"hello ").unwrap(), 6);
    assert_eq!(sb.write_file_at("deep/er/f.txt", 6, b"world").unwrap(), 11);
    assert_eq!(
        sb.read_file_at("deep/er/f.txt", 0, 100).unwrap(),
        b"hello world"
    );
    assert_eq!(sb.read_file_at("deep/er/f.txt", 6, 3).unwrap(), b"wor");
    let info = sb.file_info("deep").unwrap();
    assert_eq!(info.kind, FileKind::Dir);
    let listed = sb.list_dir("deep/er").unwrap();
    assert_eq!(listed.len(), 1);
    assert!(
        listed[0].path.ends_with("/scratch/deep/er/f.txt"),
        "{listed:?}"
    );
    sb.remove_file("deep/er/f.txt").unwrap();
    assert!(matches!(
        sb.file_info("deep/er/f.txt"),
        Err(FileError::NotFound(_))
    ));
    assert!(matches!(
        sb.remove_file("deep"),
        Err(FileError::IsFolder(_))
    ));
}

#[test]
fn a_write_over_the_quota_leaves_nothing() {
    let limits = Limits {
        disk_bytes: 1 << 20,
        ..Limits::default()
    };
    let mut sb = runtime().sandbox().limits(limits).build().unwrap();
    let half = vec![7u8; 600 << 10];
    sb.write_file_at("big.bin", 0, &half).unwrap();
    let over = sb.write_file_at("big.bin", half.len() as u64, &half);
    assert!(matches!(over, Err(FileError::Quota { .. })), "{over:?}");
    assert!(matches!(
        sb.file_info("big.bin"),
        Err(FileError::NotFound(_))
    ));
    // The room is free again.
    sb.write_file_at("fits.bin", 0, &half).unwrap();
}

#[test]
fn globs_find_regular_files_only() {
    let mut sb = runtime().sandbox().build().unwrap();
    for path in ["a.txt", "out/b.txt", "out/sub/c.png", "/tmp/elsewhere.txt"] {
        sb.write_file_at(path, 0, b"x").unwrap();
    }
    let patterns = ["*.txt", "out/**", "/tmp/*.txt"].map(String::from);
    let (found, _others) = sb.glob(&patterns).unwrap();
    let scratch = sb.user_path(".").unwrap();
    let mut names: Vec<String> = found
        .iter()
        .map(|f| {
            f.path
                .strip_prefix(&format!("{scratch}/"))
                .unwrap_or(&f.path)
                .to_string()
        })
        .collect();
    names.sort();
    assert_eq!(
        names,
        ["/tmp/elsewhere.txt", "a.txt", "out/b.txt", "out/sub/c.png"]
    );
}
