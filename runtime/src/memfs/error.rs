//! The errors of the in-memory filesystem, named after the errno each one is.

/// One filesystem failure; the message is the C library's `strerror` text,
/// which is what a guest would print.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FsErr {
    /// `ENOENT`.
    #[error("No such file or directory")]
    NoEntry,
    /// `ENOTDIR`.
    #[error("Not a directory")]
    NotDirectory,
    /// `EISDIR`.
    #[error("Is a directory")]
    IsDirectory,
    /// `EEXIST`.
    #[error("File exists")]
    Exists,
    /// `ENOTEMPTY`.
    #[error("Directory not empty")]
    NotEmpty,
    /// `ELOOP`: too many symlinks in one path.
    #[error("Too many levels of symbolic links")]
    Loop,
    /// `ENAMETOOLONG`.
    #[error("File name too long")]
    NameTooLong,
    /// `EINVAL`.
    #[error("Invalid argument")]
    Invalid,
    /// `ENOSPC`: the byte quota is used up (and any write to `/dev/full`).
    #[error("No space left on device")]
    NoSpace,
    /// `EDQUOT`: the quota of files is used up.
    #[error("Disk quota exceeded")]
    Quota,
    /// `EFBIG`: an offset or size past what memory can hold.
    #[error("File too large")]
    FileTooLarge,
    /// `EPERM`: refused whatever the mode bits say (not the owner, a sticky
    /// folder, ...).
    #[error("Operation not permitted")]
    NotPermitted,
    /// `EACCES`: the mode bits forbid it.
    #[error("Permission denied")]
    Access,
    /// `EBUSY`: the root or `.`/`..` cannot be renamed or removed.
    #[error("Device or resource busy")]
    Busy,
    /// `EBADF`: no such node (freed), or the wrong kind for the call.
    #[error("Bad file descriptor")]
    BadDescriptor,
}
