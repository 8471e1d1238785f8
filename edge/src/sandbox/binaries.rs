//! Where the programs sandboxes are made of live: the worker (`ephemeral
//! worker`, this very executable) and the VMM (`ephemeral-vmm`), found
//! beside this executable unless an environment variable names them.

use std::path::PathBuf;

use super::Unavailable;

/// The worker binary: `$EPHEMERAL_WORKER_BIN`, else this executable when it
/// is `ephemeral`, else an `ephemeral` beside it (test and bench harnesses
/// live in `target/*/deps/`).
pub(crate) fn worker_binary() -> Result<PathBuf, Unavailable> {
    if std::env::var_os("EPHEMERAL_WORKER_BIN").is_none() {
        let exe = std::env::current_exe().map_err(Unavailable::CurrentExe)?;
        if exe.file_stem().is_some_and(|s| s == "ephemeral") {
            return Ok(exe);
        }
    }
    beside_this_executable("EPHEMERAL_WORKER_BIN", "ephemeral")
}

/// `$VAR`, else `name` in this executable's folder or the one above it
/// (test and bench harnesses live in `target/*/deps/`).
pub(crate) fn beside_this_executable(
    var: &'static str,
    name: &'static str,
) -> Result<PathBuf, Unavailable> {
    if let Some(path) = std::env::var_os(var) {
        return Ok(path.into());
    }
    let exe = std::env::current_exe().map_err(Unavailable::CurrentExe)?;
    exe.ancestors()
        .skip(1)
        .take(2)
        .map(|dir| dir.join(name))
        .find(|candidate| candidate.is_file())
        .ok_or(Unavailable::Binary { name, var })
}
