//! Errors of the interpreter and their bash wording.
//!
//! Two kinds of failure exist. `ShellError` is a failed expansion or a limit
//! that bash reports with its own message and that aborts the current
//! command line. `Unwind` is not an error but control flow (`exit`, `break`,
//! `return`, aborting a line) travelling up the Rust stack.

use std::fmt;
use std::io;

/// A failure bash reports as `bash: line N: MESSAGE`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum ShellError {
    /// `${a b}` and other expansions bash cannot parse.
    BadSubstitution(String),
    /// `${x:?msg}` on an unset or empty variable.
    ParameterUnset { name: String, message: String },
    /// `set -u` and a reference to an unset variable.
    UnboundVariable(String),
    /// An arithmetic expression bash rejects.
    Arithmetic { expr: String, detail: String },
    /// Too many nested function calls, subshells or substitutions.
    NestingLimit,
    /// An expansion that would exceed the memory budget of one word.
    ExpansionTooLarge,
    /// Assigning to a readonly variable.
    Readonly(String),
    /// `shopt -s failglob` and a pattern that matched nothing.
    NoMatch(String),
    /// Writing through a nameref that names itself in a loop.
    CircularRef(String),
    /// `ref='a[@]'; ref=x` and other subscripts that name no element.
    BadSubscript(String),
}

impl fmt::Display for ShellError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadSubstitution(text) => write!(f, "{text}: bad substitution"),
            Self::ParameterUnset { name, message } => write!(f, "{name}: {message}"),
            Self::UnboundVariable(name) => write!(f, "{name}: unbound variable"),
            Self::Arithmetic { expr, detail } => write!(f, "{expr}: {detail}"),
            Self::NestingLimit => write!(f, "maximum nesting level exceeded"),
            Self::ExpansionTooLarge => write!(f, "expansion too large"),
            Self::Readonly(name) => write!(f, "{name}: readonly variable"),
            Self::NoMatch(pattern) => write!(f, "no match: {pattern}"),
            Self::CircularRef(name) => write!(f, "warning: {name}: circular name reference"),
            Self::BadSubscript(text) => write!(f, "{text}: bad array subscript"),
        }
    }
}

impl ShellError {
    /// What the failure does to the shell: bash -c exits on some, and only
    /// abandons the current line on others.
    pub(crate) fn unwind(&self) -> Unwind {
        match self {
            // Observed with bash 5.2: `bash -c 'echo ${x:?}'` exits 127.
            Self::ParameterUnset { .. } => Unwind::Exit(127),
            Self::UnboundVariable(_) => Unwind::Exit(127),
            Self::NestingLimit | Self::ExpansionTooLarge => Unwind::Exit(1),
            Self::BadSubstitution(_)
            | Self::Arithmetic { .. }
            | Self::Readonly(_)
            | Self::NoMatch(_)
            | Self::CircularRef(_)
            | Self::BadSubscript(_) => Unwind::Abort(1),
        }
    }
}

/// Control flow that leaves the current command early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unwind {
    /// `exit N`, or a fatal error: leave the (sub)shell with this status.
    Exit(i32),
    /// An expansion error: abandon the rest of this top-level line.
    Abort(i32),
    /// `break N` with N loops still to leave.
    Break(u32),
    /// `continue N`.
    Continue(u32),
    /// `return N` from a function or sourced file.
    Return(i32),
}

/// errno values whose `io::ErrorKind` is shared with another errno (EPERM
/// and EACCES are both `PermissionDenied`) or not stable: told apart by
/// number, which on WASI is wasi-libc's numbering.
#[cfg(target_os = "wasi")]
mod errno {
    pub(super) const EPERM: i32 = 63;
    pub(super) const ELOOP: i32 = 32;
    pub(super) const EDQUOT: i32 = 19;
    pub(super) const ENAMETOOLONG: i32 = 37;
    pub(super) const EMLINK: i32 = 35;
    pub(super) const EBUSY: i32 = 10;
}
#[cfg(not(target_os = "wasi"))]
mod errno {
    pub(super) const EPERM: i32 = 1;
    pub(super) const ELOOP: i32 = 40;
    pub(super) const EDQUOT: i32 = 122;
    pub(super) const ENAMETOOLONG: i32 = 36;
    pub(super) const EMLINK: i32 = 31;
    pub(super) const EBUSY: i32 = 16;
}

/// The strerror(3) text of an I/O error, as GNU tools print it.
pub(crate) fn strerror(err: &io::Error) -> &'static str {
    use io::ErrorKind as K;
    match err.raw_os_error() {
        Some(errno::EPERM) => return "Operation not permitted",
        Some(errno::ELOOP) => return "Too many levels of symbolic links",
        Some(errno::EDQUOT) => return "Disk quota exceeded",
        Some(errno::ENAMETOOLONG) => return "File name too long",
        Some(errno::EMLINK) => return "Too many links",
        Some(errno::EBUSY) => return "Device or resource busy",
        _ => {}
    }
    match err.kind() {
        K::NotFound => "No such file or directory",
        K::PermissionDenied => "Permission denied",
        K::AlreadyExists => "File exists",
        K::NotADirectory => "Not a directory",
        K::IsADirectory => "Is a directory",
        K::DirectoryNotEmpty => "Directory not empty",
        K::InvalidInput | K::InvalidFilename => "Invalid argument",
        K::ReadOnlyFilesystem => "Read-only file system",
        K::StorageFull => "No space left on device",
        K::FileTooLarge => "File too large",
        K::CrossesDevices => "Invalid cross-device link",
        K::BrokenPipe => "Broken pipe",
        K::Unsupported => "Operation not supported",
        K::QuotaExceeded => "Disk quota exceeded",
        K::ResourceBusy => "Device or resource busy",
        _ => "Input/output error",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_use_strerror_wording() {
        let err = io::Error::from(io::ErrorKind::NotFound);
        assert_eq!(strerror(&err), "No such file or directory");
        let err = io::Error::from(io::ErrorKind::AlreadyExists);
        assert_eq!(strerror(&err), "File exists");
    }

    #[test]
    fn shell_errors_read_like_bash() {
        let err = ShellError::BadSubstitution("${a b}".into());
        assert_eq!(err.to_string(), "${a b}: bad substitution");
        assert_eq!(err.unwind(), Unwind::Abort(1));
    }
}
