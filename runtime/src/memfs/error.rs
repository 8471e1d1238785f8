//! The errors of the in-memory filesystem, named after the errno each one is.

/// One filesystem failure; the message is the C library's `strerror` text,
/// which is what a guest would print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FsErr {
    #[error("No such file or directory")]
    NoEntry,
    #[error("Not a directory")]
    NotDirectory,
    #[error("Is a directory")]
    IsDirectory,
    #[error("File exists")]
    Exists,
    #[error("Directory not empty")]
    NotEmpty,
    #[error("Too many levels of symbolic links")]
    Loop,
    #[error("File name too long")]
    NameTooLong,
    #[error("Invalid argument")]
    Invalid,
    #[error("No space left on device")]
    NoSpace,
    #[error("Disk quota exceeded")]
    Quota,
    #[error("File too large")]
    FileTooLarge,
    #[error("Operation not permitted")]
    NotPermitted,
    #[error("Permission denied")]
    Access,
    #[error("Device or resource busy")]
    Busy,
    #[error("Bad file descriptor")]
    BadDescriptor,
}
