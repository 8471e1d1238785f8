//! The sandbox's user is `worker` (uid 1000), not root, and the
//! in-memory filesystem holds it to an unprivileged user's rules: each
//! test tries to break one of them.

mod common;

use common::{sandbox, sh};

#[test]
fn the_system_is_read_only_to_the_sandbox_user() {
    let mut sb = sandbox();
    for cmd in [
        "echo x > /etc/passwd",
        "touch /usr/bin/evil",
        "rm /etc/hostname",
        "mkdir /bin/new",
        "mv /etc/passwd /tmp/p",
        "chmod 777 /etc",
        "ln -s /tmp /usr/local/bin/link",
    ] {
        let (_, err, code) = sh(&mut sb, cmd);
        assert_ne!(code, 0, "{cmd} succeeded");
        assert!(
            err.contains("Permission denied") || err.contains("Operation not permitted"),
            "{cmd}: {err}"
        );
    }
    let (out, _, _) = sh(&mut sb, "cat /etc/hostname; ls /usr/bin/evil 2>&1 | wc -l");
    assert_eq!(out, "sandbox\n1\n");
}

#[test]
fn a_file_without_read_permission_cannot_be_read_by_any_program() {
    let mut sb = sandbox();
    let (out, err, _) = sh(
        &mut sb,
        "printf secret > f; chmod 000 f\n\
         cat f; echo \"cat $?\"\n\
         python3 -c \"open('f').read()\" 2>&1 | tail -1 | sed 's/Errno [0-9]*/Errno N/'\n\
         node -e \"require('fs').readFileSync('f')\" 2>&1 | grep -o EACCES | head -1\n\
         chmod 600 f; cat f; echo",
    );
    assert_eq!(
        out,
        "cat 1\nPermissionError: [Errno N] Permission denied: 'f'\nEACCES\nsecret\n"
    );
    assert_eq!(err, "cat: f: Permission denied\n");
}

#[test]
fn read_only_folders_refuse_changes() {
    let mut sb = sandbox();
    let (out, err, _) = sh(
        &mut sb,
        "mkdir ro; touch ro/kept; chmod 555 ro\n\
         touch ro/new; rm ro/kept; mkdir ro/sub; echo x > ro/f\n\
         ls ro; chmod 755 ro; rm ro/kept && echo removed",
    );
    assert_eq!(out, "kept\nremoved\n");
    assert_eq!(
        err,
        "touch: cannot touch 'ro/new': Permission denied\n\
         rm: cannot remove 'ro/kept': Permission denied\n\
         mkdir: cannot create directory ‘ro/sub’: Permission denied\n\
         bash: line 2: ro/f: Permission denied\n"
    );
}

#[test]
fn umask_applies_to_what_every_program_creates() {
    let mut sb = sandbox();
    let (out, _, _) = sh(
        &mut sb,
        "umask 077; touch a; mkdir b; python3 -c \"open('c','w').write('x')\"\n\
         (umask 000; touch d); touch e\n\
         stat -c '%a %n' a b c d e; umask",
    );
    assert_eq!(out, "600 a\n700 b\n600 c\n666 d\n600 e\n0077\n");
    // The next command starts from the default again, as a new shell does.
    let (out, _, _) = sh(&mut sb, "umask; touch f; stat -c %a f");
    assert_eq!(out, "0022\n644\n");
}

#[test]
fn tmp_is_sticky() {
    let mut sb = sandbox();
    let (out, _, code) = sh(
        &mut sb,
        "ls -ld /tmp | cut -c1-10; touch /tmp/mine && rm /tmp/mine && echo own-file-removed",
    );
    assert_eq!((out.as_str(), code), ("drwxrwxrwt\nown-file-removed\n", 0));
}

#[test]
fn noclobber_refuses_to_overwrite() {
    let mut sb = sandbox();
    let (out, err, _) = sh(
        &mut sb,
        "set -o noclobber; echo one > f; echo two > f; echo \"$?\"; echo three >| f; cat f; echo ok > /dev/null && echo dev-ok",
    );
    assert_eq!(out, "1\nthree\ndev-ok\n");
    assert_eq!(err, "bash: line 1: f: cannot overwrite existing file\n");
}
