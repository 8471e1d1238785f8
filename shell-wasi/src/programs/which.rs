//! `which [-a] NAME...`: utilities live in `/usr/bin`.

use super::Process;

pub(crate) fn which(p: &mut Process<'_>, argv: &[String]) -> i32 {
    let mut status = 0;
    for name in argv.get(1..).unwrap_or_default() {
        if name.starts_with('-') {
            continue;
        }
        if let Some(path) = locate(p, name) {
            p.out(format!("{path}\n").as_bytes());
        } else {
            status = 1;
        }
    }
    status
}

/// Where `name` would be found on `$PATH`, as `command -v` and `type`
/// report it.
pub(crate) fn locate(p: &Process<'_>, name: &str) -> Option<String> {
    if name.contains('/') {
        let mode = p.host.get_mode(&p.host_path(name), true).ok()?;
        let is_file = mode & crate::host::S_IFMT == crate::host::S_IFREG;
        return (is_file && mode & 0o111 != 0).then(|| name.to_string());
    }
    super::find(p.host, name).map(|_| format!("/usr/bin/{name}"))
}
