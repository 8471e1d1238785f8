//! Reading the sandbox's devices: `/dev/zero` and `/dev/urandom` never
//! end, so a utility that would read a whole file reads them only as far
//! as it needs, or as far as a pipe holds.

use std::io::Read;
use std::path::Path;

use super::Process;
use crate::host::{S_IFCHR, S_IFMT};
use crate::streams::MAX_PIPE_BYTES;

/// Bytes read from a device per call.
const CHUNK: usize = 64 << 10;

/// Whether `name` is a character device (the host tells; WASI does not).
pub(crate) fn is_device(p: &Process<'_>, name: &str) -> bool {
    p.host
        .get_mode(&p.host_path(name), true)
        .is_ok_and(|m| m & S_IFMT == S_IFCHR)
}

/// Reads a device until `enough` says so on what was read, its end, or
/// [`MAX_PIPE_BYTES`].
pub(crate) fn read_device(
    path: &Path,
    mut enough: impl FnMut(&[u8]) -> bool,
) -> std::io::Result<Vec<u8>> {
    let mut file = std::fs::File::open(path)?;
    let mut data = Vec::new();
    let mut chunk = vec![0; CHUNK];
    while data.len() < MAX_PIPE_BYTES && !enough(&data) {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        data.extend_from_slice(&chunk[..n]);
    }
    Ok(data)
}
