//! Blocking frame I/O for the worker's side of the stream: read one whole
//! frame, write one whole frame. The host's async side is in `host`.

use std::io::{self, Read, Write};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::protocol::{self, ProtocolError};

/// Why a frame could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum ChannelError {
    /// The stream ended cleanly between frames.
    #[error("the stream closed")]
    Closed,
    /// Reading or writing the stream failed, or it ended inside a frame.
    #[error("stream I/O: {0}")]
    Io(#[from] io::Error),
    /// The frame itself is bad.
    #[error(transparent)]
    Protocol(#[from] ProtocolError),
}

/// Reads the next frame; `Closed` at a clean end of stream between frames.
pub fn read_frame<R: Read, T: DeserializeOwned>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> Result<T, ChannelError> {
    let mut header = [0u8; 4];
    match reader.read_exact(&mut header) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Err(ChannelError::Closed),
        Err(e) => return Err(e.into()),
    }
    let length = protocol::frame_length(header)?;
    buf.clear();
    buf.resize(length, 0);
    reader.read_exact(buf)?;
    Ok(protocol::decode_body(buf)?)
}

/// Writes one frame in a single `write_all`, so frames from two threads
/// never interleave when the writer is behind a lock.
pub fn write_frame<W: Write, T: Serialize>(
    writer: &mut W,
    message: &T,
) -> Result<(), ChannelError> {
    let frame = protocol::encode(message)?;
    writer.write_all(&frame)?;
    writer.flush()?;
    Ok(())
}
