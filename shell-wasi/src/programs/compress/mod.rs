//! Compressors beyond gzip (which is in `coreutils/`): bzip2 and xz/lzma,
//! and the z-family wrappers (`zgrep`, `zdiff`, `bzgrep`, `xzless`, …)
//! Debian installs with gzip, bzip2 and xz-utils.

mod bzip2;
pub(crate) mod codec;
mod xz;
mod xz_list;
mod zutils;

use super::{Process, Table};
use crate::errors::strerror;

/// This family's programs, sorted by name.
pub(crate) const TABLE: Table = &[
    ("bunzip2", bzip2::bunzip2),
    ("bzcat", bzip2::bzcat),
    ("bzcmp", zutils::zdiff),
    ("bzdiff", zutils::zdiff),
    ("bzegrep", zutils::zgrep),
    ("bzfgrep", zutils::zgrep),
    ("bzgrep", zutils::zgrep),
    ("bzip2", bzip2::bzip2),
    ("bzless", zutils::zmore),
    ("bzmore", zutils::zmore),
    ("lzcat", xz::lzcat),
    ("lzcmp", zutils::zdiff),
    ("lzdiff", zutils::zdiff),
    ("lzegrep", zutils::zgrep),
    ("lzfgrep", zutils::zgrep),
    ("lzgrep", zutils::zgrep),
    ("lzless", zutils::zmore),
    ("lzma", xz::lzma),
    ("lzmore", zutils::zmore),
    ("unlzma", xz::unlzma),
    ("unxz", xz::unxz),
    ("xz", xz::xz),
    ("xzcat", xz::xzcat),
    ("xzcmp", zutils::zdiff),
    ("xzdiff", zutils::zdiff),
    ("xzegrep", zutils::zgrep),
    ("xzfgrep", zutils::zgrep),
    ("xzgrep", zutils::zgrep),
    ("xzless", zutils::zmore),
    ("xzmore", zutils::zmore),
    ("zcmp", zutils::zdiff),
    ("zdiff", zutils::zdiff),
    ("zegrep", zutils::zgrep),
    ("zfgrep", zutils::zgrep),
    ("zgrep", zutils::zgrep),
    ("zless", zutils::zmore),
    ("zmore", zutils::zmore),
];

/// Why an operand could not be read.
pub(crate) enum OperandError {
    Directory,
    /// strerror's text.
    Io(&'static str),
}

fn read_operand(p: &Process<'_>, name: &str) -> Result<Vec<u8>, OperandError> {
    let path = p.resolve(name);
    if path.is_dir() {
        return Err(OperandError::Directory);
    }
    std::fs::read(path).map_err(|e| OperandError::Io(strerror(&e)))
}

fn exists(p: &Process<'_>, name: &str) -> bool {
    p.resolve(name).symlink_metadata().is_ok()
}

fn write_file(p: &Process<'_>, name: &str, bytes: &[u8]) -> Result<(), &'static str> {
    std::fs::write(p.resolve(name), bytes).map_err(|e| strerror(&e))
}

/// The output file gets the input's permission bits, as the tools do.
fn copy_mode(p: &Process<'_>, from: &str, to: &str) {
    if let Ok(mode) = p.host.get_mode(&p.host_path(from), true) {
        let _ = p.host.set_mode(&p.host_path(to), mode & 0o7777);
    }
}
