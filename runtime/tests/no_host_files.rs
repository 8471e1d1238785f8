//! A sandbox sees only its own in-memory tree: not the host's files, not
//! another sandbox's, and it leaves nothing on the host disk.

mod common;

use common::{guest, sandbox, sh, text};

fn probe(sb: &mut ephemeral_runtime::Sandbox, paths: &[&str]) -> String {
    let fs_probe = guest("fs_probe");
    let mut argv = vec!["fs_probe"];
    argv.extend_from_slice(paths);
    text(&sb.run_captured(&fs_probe, &argv).expect("run").stdout)
}

#[test]
fn host_paths_are_unreachable() {
    let mut sb = sandbox();
    let out = probe(
        &mut sb,
        &["/etc/shadow", "/work", "/sys", "/root", "/proc/1/environ"],
    );
    for line in out.lines() {
        assert!(line.contains(": err "), "host path reached: {line}");
    }
    // What a Linux system has there exists, and is the sandbox's own:
    // `/proc/self` describes the sandbox's program, not this test process,
    // and the system's folders hold only what the sandbox lays in itself
    // (the scientific python's read-only data under /usr/lib).
    let host_status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let host_name = host_status.lines().next().unwrap_or("Name:\t?").to_string();
    let out = probe(
        &mut sb,
        &["/proc/self/status", "/var/cache", "/usr/lib", "/opt"],
    );
    assert!(out.contains("/proc/self/status: ok Name:\tbash"), "{out}");
    assert!(!out.contains(&host_name), "host's /proc reached: {out}");
    for dir in ["/var/cache", "/opt"] {
        assert!(
            out.contains(&format!("{dir}: dir \n")),
            "{dir} holds something: {out}"
        );
    }
    let sandbox_own = ["/usr/lib: dir \n", "/usr/lib: dir python3-sci\n"];
    assert!(
        sandbox_own.iter().any(|own| out.contains(own)),
        "/usr/lib holds the host's: {out}"
    );
}

#[test]
fn etc_passwd_is_the_sandboxes_own() {
    let mut sb = sandbox();
    let out = probe(&mut sb, &["/etc/passwd"]);
    assert!(
        out.starts_with("/etc/passwd: ok root:x:0:0:root:/root:/bin/bash"),
        "{out}"
    );
    let host = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let fake = "daemon:";
    assert!(host.contains(fake) && !out.contains(fake));
}

#[test]
fn dot_dot_never_leaves_the_root() {
    let mut sb = sandbox();
    let out = probe(
        &mut sb,
        &[
            "../../../../../../..",
            "/../../..",
            "../../../../../../etc/hostname",
        ],
    );
    let root = "dir bin,dev,etc,home,lib,mnt,opt,proc,root,run,sbin,srv,tmp,usr,var";
    assert!(
        out.contains(&format!("../../../../../../..: {root}")),
        "{out}"
    );
    assert!(out.contains(&format!("/../../..: {root}")), "{out}");
    assert!(out.contains("etc/hostname: ok sandbox"), "{out}");
}

#[test]
fn a_file_in_one_sandbox_is_invisible_to_another() {
    let mut a = sandbox();
    let mut b = sandbox();
    let fs_probe = guest("fs_probe");
    let wrote = a
        .run_captured(&fs_probe, &["fs_probe", "--write", "/tmp/secret", "6"])
        .unwrap();
    assert_eq!(text(&wrote.stdout), "wrote 6\n");
    assert!(probe(&mut a, &["/tmp/secret"]).contains("ok xxxxxx"));
    assert!(probe(&mut b, &["/tmp/secret"]).contains("/tmp/secret: err"));
    assert_ne!(a.scratch_dir(), b.scratch_dir());
}

#[test]
fn nothing_is_left_on_the_host_disk() {
    let marker = format!("ephemeral-marker-{}", std::process::id());
    let before = host_files();
    let mut sb = sandbox();
    let fs_probe = guest("fs_probe");
    for path in [
        format!("/tmp/{marker}"),
        format!("{}/{marker}", sb.scratch_dir()),
    ] {
        let out = sb
            .run_captured(&fs_probe, &["fs_probe", "--write", &path, "4096"])
            .unwrap();
        assert_eq!(text(&out.stdout), "wrote 4096\n");
    }
    let _ = sh(
        &mut sb,
        &format!("echo {marker} > {marker}.txt; mkdir -p d/e"),
    );
    sb.destroy();
    let after = host_files();
    let new: Vec<_> = after
        .difference(&before)
        .filter(|p| p.contains(&marker))
        .collect();
    assert!(new.is_empty(), "sandbox files on the host: {new:?}");
}

/// Every path under the host's temporary folder, the working folder and
/// the user's cache folder.
fn host_files() -> std::collections::BTreeSet<String> {
    let mut seen = std::collections::BTreeSet::new();
    let mut todo: Vec<std::path::PathBuf> =
        vec![std::env::temp_dir(), std::env::current_dir().unwrap()];
    if let Some(home) = std::env::var_os("HOME") {
        todo.push(std::path::Path::new(&home).join(".cache"));
    }
    let mut budget = 200_000;
    while let Some(dir) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            budget -= 1;
            if budget == 0 {
                return seen;
            }
            let path = entry.path();
            if entry.file_type().map(|t| t.is_dir()).unwrap_or(false) {
                todo.push(path.clone());
            }
            seen.insert(path.display().to_string());
        }
    }
    seen
}
