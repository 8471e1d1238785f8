//! The sandbox looks like a Linux system from inside, made only of its own
//! in-memory nodes: the devices, `/etc` saying honestly what it is,
//! `/proc` with the sandbox's own limits, `df` with its own quota.

mod common;

use common::{sandbox, sandbox_with, sh};
use ephemeral_runtime::Limits;

#[test]
fn devices_behave_as_on_linux() {
    let mut sb = sandbox();
    let (out, err, code) = sh(
        &mut sb,
        "head -c 4 /dev/zero | od -An -tx1\n\
         head -c 32 /dev/urandom | wc -c\n\
         a=$(head -c 16 /dev/urandom | od -An -tx1); b=$(head -c 16 /dev/urandom | od -An -tx1); [ \"$a\" != \"$b\" ] && echo differ\n\
         echo x > /dev/full; echo \"full: $?\"\n\
         ls -l /dev/null | cut -c1\n\
         stat -c '%F %U' /dev/zero",
    );
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        (
            " 00 00 00 00\n32\ndiffer\nfull: 1\nc\ncharacter special file root\n",
            "bash: line 4: echo: write error: No space left on device\n",
            0
        )
    );
}

#[test]
fn dev_std_streams_are_each_programs_own() {
    let mut sb = sandbox();
    let (out, err, _) = sh(
        &mut sb,
        "echo to-out > /dev/stdout; echo to-err > /dev/stderr\n\
         echo piped | cat /dev/stdin\n\
         python3 -c \"open('/dev/stdout','w').write('py-out\\n'); open('/dev/stderr','w').write('py-err\\n')\"\n\
         echo fed | python3 -c \"print(open('/dev/stdin').read().strip())\"",
    );
    assert_eq!(out, "to-out\npiped\npy-out\nfed\n");
    assert_eq!(err, "to-err\npy-err\n");
}

#[test]
fn etc_says_what_the_sandbox_is() {
    let mut sb = sandbox();
    let (out, _, code) = sh(
        &mut sb,
        ". /etc/os-release; echo \"$ID $ID_LIKE $VERSION_ID\"; cat /etc/hostname; \
         cut -d. -f1 /etc/debian_version; ls -ld /etc | cut -d' ' -f3",
    );
    assert_eq!(
        (out.as_str(), code),
        ("ephemeral debian 12\nsandbox\n12\nroot\n", 0)
    );
}

#[test]
fn proc_tells_the_sandboxs_own_limits() {
    let mut sb = sandbox_with(Limits {
        memory_bytes: 256 << 20,
        ..Limits::default()
    });
    let (out, _, _) = sh(
        &mut sb,
        "grep MemTotal /proc/meminfo; grep -c ^processor /proc/cpuinfo; grep ^Uid /proc/self/status",
    );
    assert_eq!(
        out,
        "MemTotal:         262144 kB\n1\nUid:\t1000\t1000\t1000\t1000\n"
    );
}

#[test]
fn df_shows_the_disk_quota() {
    let mut sb = sandbox_with(Limits {
        disk_bytes: 64 << 20,
        disk_files: 10_000,
        ..Limits::default()
    });
    let (out, _, _) = sh(
        &mut sb,
        "head -c 1048576 /dev/zero > big; df | tail -1 | awk '{print $2, $3, $4}'; df -i | tail -1 | awk '{print $2}'",
    );
    assert_eq!(out, "65536 1024 64512\n10000\n");
}

#[test]
fn quota_and_loop_errors_read_as_on_linux() {
    let mut sb = sandbox_with(Limits {
        disk_files: 20,
        ..Limits::default()
    });
    let (_, err, _) = sh(
        &mut sb,
        "ln -s a b; ln -s b a; cat a; for i in $(seq 1 30); do { : > f$i; } 2>/dev/null; done; touch g",
    );
    assert_eq!(
        err,
        "cat: a: Too many levels of symbolic links\ntouch: cannot touch 'g': Disk quota exceeded\n"
    );
}

#[test]
fn layout_folders_exist_with_linux_modes() {
    let mut sb = sandbox();
    let (out, _, _) = sh(
        &mut sb,
        "stat -c '%a %U %n' /tmp /var/tmp /etc /usr/bin /root /opt /usr/local/bin /home; readlink /bin",
    );
    assert_eq!(
        out,
        "1777 root /tmp\n1777 root /var/tmp\n755 root /etc\n755 root /usr/bin\n700 root /root\n\
         755 root /opt\n755 root /usr/local/bin\n755 root /home\nusr/bin\n"
    );
}
