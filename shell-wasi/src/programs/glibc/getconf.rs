//! `getconf [-v SPEC] NAME [PATH]` and `getconf -a [PATH]`: the system
//! limits and configuration strings of glibc 2.36 on x86-64 (Debian 12),
//! with the sandbox's own processor count and memory (512 MiB, the
//! runtime's default cap) in place of the host's.

use super::Process;

/// Whether a name is a sysconf/confstr value or a pathconf one.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    System,
    Path,
}

/// Path values that glibc computes without looking at the path.
const PATH_CONSTANTS: &[&str] = &[
    "MAX_CANON",
    "_POSIX_MAX_CANON",
    "MAX_INPUT",
    "_POSIX_MAX_INPUT",
    "PATH_MAX",
    "_POSIX_PATH_MAX",
    "PIPE_BUF",
    "_POSIX_PIPE_BUF",
    "_POSIX_NO_TRUNC",
    "_POSIX_VDISABLE",
];

const USAGE: &str =
    "Usage: getconf [-v specification] variable_name [pathname]\n       getconf -a [pathname]";

/// Every name `getconf -a` lists, in its order, with its value
/// (`undefined` where glibc has none).
const VALUES: &[(&str, Kind, &str)] = &[
    ("LINK_MAX", Kind::Path, "65000"),
    ("_POSIX_LINK_MAX", Kind::Path, "65000"),
    ("MAX_CANON", Kind::Path, "255"),
    ("_POSIX_MAX_CANON", Kind::Path, "255"),
    ("MAX_INPUT", Kind::Path, "255"),
    ("_POSIX_MAX_INPUT", Kind::Path, "255"),
    ("NAME_MAX", Kind::Path, "255"),
    ("_POSIX_NAME_MAX", Kind::Path, "255"),
    ("PATH_MAX", Kind::Path, "4096"),
    ("_POSIX_PATH_MAX", Kind::Path, "4096"),
    ("PIPE_BUF", Kind::Path, "4096"),
    ("_POSIX_PIPE_BUF", Kind::Path, "4096"),
    ("SOCK_MAXBUF", Kind::Path, "undefined"),
    ("_POSIX_ASYNC_IO", Kind::Path, "undefined"),
    ("_POSIX_CHOWN_RESTRICTED", Kind::Path, "1"),
    ("_POSIX_NO_TRUNC", Kind::Path, "1"),
    ("_POSIX_PRIO_IO", Kind::Path, "undefined"),
    ("_POSIX_SYNC_IO", Kind::Path, "undefined"),
    ("_POSIX_VDISABLE", Kind::Path, "0"),
    ("ARG_MAX", Kind::System, "2097152"),
    ("ATEXIT_MAX", Kind::System, "2147483647"),
    ("CHAR_BIT", Kind::System, "8"),
    ("CHAR_MAX", Kind::System, "127"),
    ("CHAR_MIN", Kind::System, "-128"),
    ("CHILD_MAX", Kind::System, "96363"),
    ("CLK_TCK", Kind::System, "100"),
    ("INT_MAX", Kind::System, "2147483647"),
    ("INT_MIN", Kind::System, "-2147483648"),
    ("IOV_MAX", Kind::System, "1024"),
    ("LOGNAME_MAX", Kind::System, "256"),
    ("LONG_BIT", Kind::System, "64"),
    ("MB_LEN_MAX", Kind::System, "16"),
    ("NGROUPS_MAX", Kind::System, "65536"),
    ("NL_ARGMAX", Kind::System, "4096"),
    ("NL_LANGMAX", Kind::System, "2048"),
    ("NL_MSGMAX", Kind::System, "2147483647"),
    ("NL_NMAX", Kind::System, "2147483647"),
    ("NL_SETMAX", Kind::System, "2147483647"),
    ("NL_TEXTMAX", Kind::System, "2147483647"),
    ("NSS_BUFLEN_GROUP", Kind::System, "1024"),
    ("NSS_BUFLEN_PASSWD", Kind::System, "1024"),
    ("NZERO", Kind::System, "20"),
    ("OPEN_MAX", Kind::System, "20000"),
    ("PAGESIZE", Kind::System, "4096"),
    ("PAGE_SIZE", Kind::System, "4096"),
    ("PASS_MAX", Kind::System, "8192"),
    ("PTHREAD_DESTRUCTOR_ITERATIONS", Kind::System, "4"),
    ("PTHREAD_KEYS_MAX", Kind::System, "1024"),
    ("PTHREAD_STACK_MIN", Kind::System, "16384"),
    ("PTHREAD_THREADS_MAX", Kind::System, "undefined"),
    ("SCHAR_MAX", Kind::System, "127"),
    ("SCHAR_MIN", Kind::System, "-128"),
    ("SHRT_MAX", Kind::System, "32767"),
    ("SHRT_MIN", Kind::System, "-32768"),
    ("SSIZE_MAX", Kind::System, "32767"),
    ("TTY_NAME_MAX", Kind::System, "32"),
    ("TZNAME_MAX", Kind::System, "undefined"),
    ("UCHAR_MAX", Kind::System, "255"),
    ("UINT_MAX", Kind::System, "4294967295"),
    ("UIO_MAXIOV", Kind::System, "1024"),
    ("ULONG_MAX", Kind::System, "18446744073709551615"),
    ("USHRT_MAX", Kind::System, "65535"),
    ("WORD_BIT", Kind::System, "32"),
    ("_AVPHYS_PAGES", Kind::System, "131072"),
    ("_NPROCESSORS_CONF", Kind::System, "1"),
    ("_NPROCESSORS_ONLN", Kind::System, "1"),
    ("_PHYS_PAGES", Kind::System, "131072"),
    ("_POSIX_ARG_MAX", Kind::System, "2097152"),
    ("_POSIX_ASYNCHRONOUS_IO", Kind::System, "200809"),
    ("_POSIX_CHILD_MAX", Kind::System, "96363"),
    ("_POSIX_FSYNC", Kind::System, "200809"),
    ("_POSIX_JOB_CONTROL", Kind::System, "1"),
    ("_POSIX_MAPPED_FILES", Kind::System, "200809"),
    ("_POSIX_MEMLOCK", Kind::System, "200809"),
    ("_POSIX_MEMLOCK_RANGE", Kind::System, "200809"),
    ("_POSIX_MEMORY_PROTECTION", Kind::System, "200809"),
    ("_POSIX_MESSAGE_PASSING", Kind::System, "200809"),
    ("_POSIX_NGROUPS_MAX", Kind::System, "65536"),
    ("_POSIX_OPEN_MAX", Kind::System, "20000"),
    ("_POSIX_PII", Kind::System, "undefined"),
    ("_POSIX_PII_INTERNET", Kind::System, "undefined"),
    ("_POSIX_PII_INTERNET_DGRAM", Kind::System, "undefined"),
    ("_POSIX_PII_INTERNET_STREAM", Kind::System, "undefined"),
    ("_POSIX_PII_OSI", Kind::System, "undefined"),
    ("_POSIX_PII_OSI_CLTS", Kind::System, "undefined"),
    ("_POSIX_PII_OSI_COTS", Kind::System, "undefined"),
    ("_POSIX_PII_OSI_M", Kind::System, "undefined"),
    ("_POSIX_PII_SOCKET", Kind::System, "undefined"),
    ("_POSIX_PII_XTI", Kind::System, "undefined"),
    ("_POSIX_POLL", Kind::System, "undefined"),
    ("_POSIX_PRIORITIZED_IO", Kind::System, "200809"),
    ("_POSIX_PRIORITY_SCHEDULING", Kind::System, "200809"),
    ("_POSIX_REALTIME_SIGNALS", Kind::System, "200809"),
    ("_POSIX_SAVED_IDS", Kind::System, "1"),
    ("_POSIX_SELECT", Kind::System, "undefined"),
    ("_POSIX_SEMAPHORES", Kind::System, "200809"),
    ("_POSIX_SHARED_MEMORY_OBJECTS", Kind::System, "200809"),
    ("_POSIX_SSIZE_MAX", Kind::System, "32767"),
    ("_POSIX_STREAM_MAX", Kind::System, "16"),
    ("_POSIX_SYNCHRONIZED_IO", Kind::System, "200809"),
    ("_POSIX_THREADS", Kind::System, "200809"),
    ("_POSIX_THREAD_ATTR_STACKADDR", Kind::System, "200809"),
    ("_POSIX_THREAD_ATTR_STACKSIZE", Kind::System, "200809"),
    ("_POSIX_THREAD_PRIORITY_SCHEDULING", Kind::System, "200809"),
    ("_POSIX_THREAD_PRIO_INHERIT", Kind::System, "200809"),
    ("_POSIX_THREAD_PRIO_PROTECT", Kind::System, "200809"),
    (
        "_POSIX_THREAD_ROBUST_PRIO_INHERIT",
        Kind::System,
        "undefined",
    ),
    (
        "_POSIX_THREAD_ROBUST_PRIO_PROTECT",
        Kind::System,
        "undefined",
    ),
    ("_POSIX_THREAD_PROCESS_SHARED", Kind::System, "200809"),
    ("_POSIX_THREAD_SAFE_FUNCTIONS", Kind::System, "200809"),
    ("_POSIX_TIMERS", Kind::System, "200809"),
    ("TIMER_MAX", Kind::System, "undefined"),
    ("_POSIX_TZNAME_MAX", Kind::System, "undefined"),
    ("_POSIX_VERSION", Kind::System, "200809"),
    ("_T_IOV_MAX", Kind::System, "undefined"),
    ("_XOPEN_CRYPT", Kind::System, "undefined"),
    ("_XOPEN_ENH_I18N", Kind::System, "1"),
    ("_XOPEN_LEGACY", Kind::System, "1"),
    ("_XOPEN_REALTIME", Kind::System, "1"),
    ("_XOPEN_REALTIME_THREADS", Kind::System, "1"),
    ("_XOPEN_SHM", Kind::System, "1"),
    ("_XOPEN_UNIX", Kind::System, "1"),
    ("_XOPEN_VERSION", Kind::System, "700"),
    ("_XOPEN_XCU_VERSION", Kind::System, "4"),
    ("_XOPEN_XPG2", Kind::System, "1"),
    ("_XOPEN_XPG3", Kind::System, "1"),
    ("_XOPEN_XPG4", Kind::System, "1"),
    ("BC_BASE_MAX", Kind::System, "99"),
    ("BC_DIM_MAX", Kind::System, "2048"),
    ("BC_SCALE_MAX", Kind::System, "99"),
    ("BC_STRING_MAX", Kind::System, "1000"),
    ("CHARCLASS_NAME_MAX", Kind::System, "2048"),
    ("COLL_WEIGHTS_MAX", Kind::System, "255"),
    ("EQUIV_CLASS_MAX", Kind::System, "undefined"),
    ("EXPR_NEST_MAX", Kind::System, "32"),
    ("LINE_MAX", Kind::System, "2048"),
    ("POSIX2_BC_BASE_MAX", Kind::System, "99"),
    ("POSIX2_BC_DIM_MAX", Kind::System, "2048"),
    ("POSIX2_BC_SCALE_MAX", Kind::System, "99"),
    ("POSIX2_BC_STRING_MAX", Kind::System, "1000"),
    ("POSIX2_CHAR_TERM", Kind::System, "200809"),
    ("POSIX2_COLL_WEIGHTS_MAX", Kind::System, "255"),
    ("POSIX2_C_BIND", Kind::System, "200809"),
    ("POSIX2_C_DEV", Kind::System, "200809"),
    ("POSIX2_C_VERSION", Kind::System, "200809"),
    ("POSIX2_EXPR_NEST_MAX", Kind::System, "32"),
    ("POSIX2_FORT_DEV", Kind::System, "undefined"),
    ("POSIX2_FORT_RUN", Kind::System, "undefined"),
    ("_POSIX2_LINE_MAX", Kind::System, "2048"),
    ("POSIX2_LINE_MAX", Kind::System, "2048"),
    ("POSIX2_LOCALEDEF", Kind::System, "200809"),
    ("POSIX2_RE_DUP_MAX", Kind::System, "32767"),
    ("POSIX2_SW_DEV", Kind::System, "200809"),
    ("POSIX2_UPE", Kind::System, "undefined"),
    ("POSIX2_VERSION", Kind::System, "200809"),
    ("RE_DUP_MAX", Kind::System, "32767"),
    ("PATH", Kind::System, "/bin:/usr/bin"),
    ("CS_PATH", Kind::System, "/bin:/usr/bin"),
    ("LFS_CFLAGS", Kind::System, ""),
    ("LFS_LDFLAGS", Kind::System, ""),
    ("LFS_LIBS", Kind::System, ""),
    ("LFS_LINTFLAGS", Kind::System, ""),
    ("LFS64_CFLAGS", Kind::System, "-D_LARGEFILE64_SOURCE"),
    ("LFS64_LDFLAGS", Kind::System, ""),
    ("LFS64_LIBS", Kind::System, ""),
    ("LFS64_LINTFLAGS", Kind::System, "-D_LARGEFILE64_SOURCE"),
    (
        "_XBS5_WIDTH_RESTRICTED_ENVS",
        Kind::System,
        "XBS5_LP64_OFF64",
    ),
    (
        "XBS5_WIDTH_RESTRICTED_ENVS",
        Kind::System,
        "XBS5_LP64_OFF64",
    ),
    ("_XBS5_ILP32_OFF32", Kind::System, "undefined"),
    ("XBS5_ILP32_OFF32_CFLAGS", Kind::System, ""),
    ("XBS5_ILP32_OFF32_LDFLAGS", Kind::System, ""),
    ("XBS5_ILP32_OFF32_LIBS", Kind::System, ""),
    ("XBS5_ILP32_OFF32_LINTFLAGS", Kind::System, ""),
    ("_XBS5_ILP32_OFFBIG", Kind::System, "undefined"),
    ("XBS5_ILP32_OFFBIG_CFLAGS", Kind::System, ""),
    ("XBS5_ILP32_OFFBIG_LDFLAGS", Kind::System, ""),
    ("XBS5_ILP32_OFFBIG_LIBS", Kind::System, ""),
    ("XBS5_ILP32_OFFBIG_LINTFLAGS", Kind::System, ""),
    ("_XBS5_LP64_OFF64", Kind::System, "1"),
    ("XBS5_LP64_OFF64_CFLAGS", Kind::System, "-m64"),
    ("XBS5_LP64_OFF64_LDFLAGS", Kind::System, "-m64"),
    ("XBS5_LP64_OFF64_LIBS", Kind::System, ""),
    ("XBS5_LP64_OFF64_LINTFLAGS", Kind::System, ""),
    ("_XBS5_LPBIG_OFFBIG", Kind::System, "undefined"),
    ("XBS5_LPBIG_OFFBIG_CFLAGS", Kind::System, ""),
    ("XBS5_LPBIG_OFFBIG_LDFLAGS", Kind::System, ""),
    ("XBS5_LPBIG_OFFBIG_LIBS", Kind::System, ""),
    ("XBS5_LPBIG_OFFBIG_LINTFLAGS", Kind::System, ""),
    ("_POSIX_V6_ILP32_OFF32", Kind::System, "undefined"),
    ("POSIX_V6_ILP32_OFF32_CFLAGS", Kind::System, ""),
    ("POSIX_V6_ILP32_OFF32_LDFLAGS", Kind::System, ""),
    ("POSIX_V6_ILP32_OFF32_LIBS", Kind::System, ""),
    ("POSIX_V6_ILP32_OFF32_LINTFLAGS", Kind::System, ""),
    (
        "_POSIX_V6_WIDTH_RESTRICTED_ENVS",
        Kind::System,
        "POSIX_V6_LP64_OFF64",
    ),
    (
        "POSIX_V6_WIDTH_RESTRICTED_ENVS",
        Kind::System,
        "POSIX_V6_LP64_OFF64",
    ),
    ("_POSIX_V6_ILP32_OFFBIG", Kind::System, "undefined"),
    ("POSIX_V6_ILP32_OFFBIG_CFLAGS", Kind::System, ""),
    ("POSIX_V6_ILP32_OFFBIG_LDFLAGS", Kind::System, ""),
    ("POSIX_V6_ILP32_OFFBIG_LIBS", Kind::System, ""),
    ("POSIX_V6_ILP32_OFFBIG_LINTFLAGS", Kind::System, ""),
    ("_POSIX_V6_LP64_OFF64", Kind::System, "1"),
    ("POSIX_V6_LP64_OFF64_CFLAGS", Kind::System, "-m64"),
    ("POSIX_V6_LP64_OFF64_LDFLAGS", Kind::System, "-m64"),
    ("POSIX_V6_LP64_OFF64_LIBS", Kind::System, ""),
    ("POSIX_V6_LP64_OFF64_LINTFLAGS", Kind::System, ""),
    ("_POSIX_V6_LPBIG_OFFBIG", Kind::System, "undefined"),
    ("POSIX_V6_LPBIG_OFFBIG_CFLAGS", Kind::System, ""),
    ("POSIX_V6_LPBIG_OFFBIG_LDFLAGS", Kind::System, ""),
    ("POSIX_V6_LPBIG_OFFBIG_LIBS", Kind::System, ""),
    ("POSIX_V6_LPBIG_OFFBIG_LINTFLAGS", Kind::System, ""),
    ("_POSIX_V7_ILP32_OFF32", Kind::System, "undefined"),
    ("POSIX_V7_ILP32_OFF32_CFLAGS", Kind::System, ""),
    ("POSIX_V7_ILP32_OFF32_LDFLAGS", Kind::System, ""),
    ("POSIX_V7_ILP32_OFF32_LIBS", Kind::System, ""),
    ("POSIX_V7_ILP32_OFF32_LINTFLAGS", Kind::System, ""),
    (
        "_POSIX_V7_WIDTH_RESTRICTED_ENVS",
        Kind::System,
        "POSIX_V7_LP64_OFF64",
    ),
    (
        "POSIX_V7_WIDTH_RESTRICTED_ENVS",
        Kind::System,
        "POSIX_V7_LP64_OFF64",
    ),
    ("_POSIX_V7_ILP32_OFFBIG", Kind::System, "undefined"),
    ("POSIX_V7_ILP32_OFFBIG_CFLAGS", Kind::System, ""),
    ("POSIX_V7_ILP32_OFFBIG_LDFLAGS", Kind::System, ""),
    ("POSIX_V7_ILP32_OFFBIG_LIBS", Kind::System, ""),
    ("POSIX_V7_ILP32_OFFBIG_LINTFLAGS", Kind::System, ""),
    ("_POSIX_V7_LP64_OFF64", Kind::System, "1"),
    ("POSIX_V7_LP64_OFF64_CFLAGS", Kind::System, "-m64"),
    ("POSIX_V7_LP64_OFF64_LDFLAGS", Kind::System, "-m64"),
    ("POSIX_V7_LP64_OFF64_LIBS", Kind::System, ""),
    ("POSIX_V7_LP64_OFF64_LINTFLAGS", Kind::System, ""),
    ("_POSIX_V7_LPBIG_OFFBIG", Kind::System, "undefined"),
    ("POSIX_V7_LPBIG_OFFBIG_CFLAGS", Kind::System, ""),
    ("POSIX_V7_LPBIG_OFFBIG_LDFLAGS", Kind::System, ""),
    ("POSIX_V7_LPBIG_OFFBIG_LIBS", Kind::System, ""),
    ("POSIX_V7_LPBIG_OFFBIG_LINTFLAGS", Kind::System, ""),
    ("_POSIX_ADVISORY_INFO", Kind::System, "200809"),
    ("_POSIX_BARRIERS", Kind::System, "200809"),
    ("_POSIX_BASE", Kind::System, "undefined"),
    ("_POSIX_C_LANG_SUPPORT", Kind::System, "undefined"),
    ("_POSIX_C_LANG_SUPPORT_R", Kind::System, "undefined"),
    ("_POSIX_CLOCK_SELECTION", Kind::System, "200809"),
    ("_POSIX_CPUTIME", Kind::System, "200809"),
    ("_POSIX_THREAD_CPUTIME", Kind::System, "200809"),
    ("_POSIX_DEVICE_SPECIFIC", Kind::System, "undefined"),
    ("_POSIX_DEVICE_SPECIFIC_R", Kind::System, "undefined"),
    ("_POSIX_FD_MGMT", Kind::System, "undefined"),
    ("_POSIX_FIFO", Kind::System, "undefined"),
    ("_POSIX_PIPE", Kind::System, "undefined"),
    ("_POSIX_FILE_ATTRIBUTES", Kind::System, "undefined"),
    ("_POSIX_FILE_LOCKING", Kind::System, "undefined"),
    ("_POSIX_FILE_SYSTEM", Kind::System, "undefined"),
    ("_POSIX_MONOTONIC_CLOCK", Kind::System, "200809"),
    ("_POSIX_MULTI_PROCESS", Kind::System, "undefined"),
    ("_POSIX_SINGLE_PROCESS", Kind::System, "undefined"),
    ("_POSIX_NETWORKING", Kind::System, "undefined"),
    ("_POSIX_READER_WRITER_LOCKS", Kind::System, "200809"),
    ("_POSIX_SPIN_LOCKS", Kind::System, "200809"),
    ("_POSIX_REGEXP", Kind::System, "1"),
    ("_REGEX_VERSION", Kind::System, "undefined"),
    ("_POSIX_SHELL", Kind::System, "1"),
    ("_POSIX_SIGNALS", Kind::System, "undefined"),
    ("_POSIX_SPAWN", Kind::System, "200809"),
    ("_POSIX_SPORADIC_SERVER", Kind::System, "undefined"),
    ("_POSIX_THREAD_SPORADIC_SERVER", Kind::System, "undefined"),
    ("_POSIX_SYSTEM_DATABASE", Kind::System, "undefined"),
    ("_POSIX_SYSTEM_DATABASE_R", Kind::System, "undefined"),
    ("_POSIX_TIMEOUTS", Kind::System, "200809"),
    ("_POSIX_TYPED_MEMORY_OBJECTS", Kind::System, "undefined"),
    ("_POSIX_USER_GROUPS", Kind::System, "undefined"),
    ("_POSIX_USER_GROUPS_R", Kind::System, "undefined"),
    ("POSIX2_PBS", Kind::System, "undefined"),
    ("POSIX2_PBS_ACCOUNTING", Kind::System, "undefined"),
    ("POSIX2_PBS_LOCATE", Kind::System, "undefined"),
    ("POSIX2_PBS_TRACK", Kind::System, "undefined"),
    ("POSIX2_PBS_MESSAGE", Kind::System, "undefined"),
    ("SYMLOOP_MAX", Kind::System, "undefined"),
    ("STREAM_MAX", Kind::System, "16"),
    ("AIO_LISTIO_MAX", Kind::System, "undefined"),
    ("AIO_MAX", Kind::System, "undefined"),
    ("AIO_PRIO_DELTA_MAX", Kind::System, "20"),
    ("DELAYTIMER_MAX", Kind::System, "2147483647"),
    ("HOST_NAME_MAX", Kind::System, "64"),
    ("LOGIN_NAME_MAX", Kind::System, "256"),
    ("MQ_OPEN_MAX", Kind::System, "undefined"),
    ("MQ_PRIO_MAX", Kind::System, "32768"),
    ("_POSIX_DEVICE_IO", Kind::System, "undefined"),
    ("_POSIX_TRACE", Kind::System, "undefined"),
    ("_POSIX_TRACE_EVENT_FILTER", Kind::System, "undefined"),
    ("_POSIX_TRACE_INHERIT", Kind::System, "undefined"),
    ("_POSIX_TRACE_LOG", Kind::System, "undefined"),
    ("RTSIG_MAX", Kind::System, "32"),
    ("SEM_NSEMS_MAX", Kind::System, "undefined"),
    ("SEM_VALUE_MAX", Kind::System, "2147483647"),
    ("SIGQUEUE_MAX", Kind::System, "96363"),
    ("FILESIZEBITS", Kind::Path, "64"),
    ("POSIX_ALLOC_SIZE_MIN", Kind::Path, "4096"),
    ("POSIX_REC_INCR_XFER_SIZE", Kind::Path, "undefined"),
    ("POSIX_REC_MAX_XFER_SIZE", Kind::Path, "undefined"),
    ("POSIX_REC_MIN_XFER_SIZE", Kind::Path, "4096"),
    ("POSIX_REC_XFER_ALIGN", Kind::Path, "4096"),
    ("SYMLINK_MAX", Kind::Path, "undefined"),
    ("GNU_LIBC_VERSION", Kind::System, "glibc 2.36"),
    ("GNU_LIBPTHREAD_VERSION", Kind::System, "NPTL 2.36"),
    ("POSIX2_SYMLINKS", Kind::Path, "1"),
    ("LEVEL1_ICACHE_SIZE", Kind::System, "65536"),
    ("LEVEL1_ICACHE_ASSOC", Kind::System, "undefined"),
    ("LEVEL1_ICACHE_LINESIZE", Kind::System, "64"),
    ("LEVEL1_DCACHE_SIZE", Kind::System, "49152"),
    ("LEVEL1_DCACHE_ASSOC", Kind::System, "12"),
    ("LEVEL1_DCACHE_LINESIZE", Kind::System, "64"),
    ("LEVEL2_CACHE_SIZE", Kind::System, "2097152"),
    ("LEVEL2_CACHE_ASSOC", Kind::System, "16"),
    ("LEVEL2_CACHE_LINESIZE", Kind::System, "64"),
    ("LEVEL3_CACHE_SIZE", Kind::System, "503316480"),
    ("LEVEL3_CACHE_ASSOC", Kind::System, "16"),
    ("LEVEL3_CACHE_LINESIZE", Kind::System, "64"),
    ("LEVEL4_CACHE_SIZE", Kind::System, "undefined"),
    ("LEVEL4_CACHE_ASSOC", Kind::System, "undefined"),
    ("LEVEL4_CACHE_LINESIZE", Kind::System, "undefined"),
    ("IPV6", Kind::System, "200809"),
    ("RAW_SOCKETS", Kind::System, "200809"),
    ("_POSIX_IPV6", Kind::System, "200809"),
    ("_POSIX_RAW_SOCKETS", Kind::System, "200809"),
];

fn usage(p: &Process<'_>) -> i32 {
    p.io.err_line(USAGE);
    2
}

pub(crate) fn getconf(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut args: Vec<&str> = argv.iter().skip(1).map(String::as_str).collect();
    if args.first() == Some(&"--") {
        args.remove(0);
    }
    match args.as_slice() {
        ["-a" | "--all"] => list(p, None),
        ["-a" | "--all", path] => list(p, Some(path)),
        ["-v", _spec, rest @ ..] => one(p, rest),
        rest => one(p, rest),
    }
}

fn exists(p: &Process<'_>, path: &str) -> bool {
    p.resolve(path).symlink_metadata().is_ok()
}

fn list(p: &Process<'_>, path: Option<&str>) -> i32 {
    let path_ok = path.is_none_or(|path| exists(p, path));
    let mut out = String::new();
    for &(name, kind, value) in VALUES {
        let shown = if value == "undefined"
            || (kind == Kind::Path && !path_ok && !PATH_CONSTANTS.contains(&name))
        {
            ""
        } else {
            value
        };
        out.push_str(&format!("{name:<35}{shown}\n"));
    }
    super::super::coreutils::write_all(p, out.as_bytes());
    0
}

fn one(p: &Process<'_>, rest: &[&str]) -> i32 {
    let (name, path) = match rest {
        [name] => (*name, None),
        [name, path] => (*name, Some(*path)),
        _ => return usage(p),
    };
    let Some(&(_, kind, value)) = VALUES.iter().find(|(n, _, _)| *n == name) else {
        p.error(&format!("Unrecognized variable `{name}'"));
        return 2;
    };
    match (kind, path) {
        (Kind::System, Some(_)) | (Kind::Path, None) => usage(p),
        (Kind::Path, Some(path)) if !exists(p, path) && !PATH_CONSTANTS.contains(&name) => {
            p.error(&format!("pathconf: {path}: No such file or directory"));
            3
        }
        _ => {
            p.out(format!("{value}\n").as_bytes());
            0
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique() {
        let mut names: Vec<&str> = VALUES.iter().map(|v| v.0).collect();
        let total = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), total);
    }
}
