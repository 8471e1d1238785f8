//! Async frame I/O for the host's end of a worker's stream.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use crate::channel::ChannelError;
use crate::protocol::{self, FromWorker, ToWorker};

pub(crate) async fn read<R: AsyncRead + Unpin>(
    reader: &mut R,
    buf: &mut Vec<u8>,
) -> Result<FromWorker, ChannelError> {
    let mut header = [0u8; 4];
    match reader.read_exact(&mut header).await {
        Ok(_) => {}
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            return Err(ChannelError::Closed);
        }
        Err(e) => return Err(e.into()),
    }
    let length = protocol::frame_length(header)?;
    buf.clear();
    buf.resize(length, 0);
    reader.read_exact(buf).await?;
    Ok(protocol::decode_body(buf)?)
}

pub(crate) async fn write<W: AsyncWrite + Unpin>(
    writer: &mut W,
    message: &ToWorker,
) -> Result<(), ChannelError> {
    let frame = protocol::encode(message)?;
    writer.write_all(&frame).await?;
    Ok(())
}
