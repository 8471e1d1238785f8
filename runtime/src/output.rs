//! The command's stdout and stderr: streamed to the caller chunk by chunk as
//! the guest writes them, in the order written, up to the output cap.

use std::sync::{Arc, Mutex, PoisonError};

use bytes::Bytes;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};
use wasmtime_wasi::p2::{OutputStream, Pollable, StreamError, StreamResult};

/// Which of the command's streams a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Stream {
    /// The command's standard output.
    Stdout,
    /// The command's standard error.
    Stderr,
}

impl Stream {
    /// The stream's name: `"stdout"` or `"stderr"`.
    pub fn name(self) -> &'static str {
        match self {
            Stream::Stdout => "stdout",
            Stream::Stderr => "stderr",
        }
    }
}

/// Receives a command's output as it is produced.
pub trait OutputSink: Send + 'static {
    /// Takes one chunk of `stream`, in the order the guest wrote it.
    fn write(&mut self, stream: Stream, data: &[u8]);
}

impl<F: FnMut(Stream, &[u8]) + Send + 'static> OutputSink for F {
    fn write(&mut self, stream: Stream, data: &[u8]) {
        self(stream, data)
    }
}

/// The largest piece a sink gets in one call, so a reader sees a flood
/// arrive in pieces.
const MAX_CHUNK: usize = 64 << 10;

/// What the guest may hand over in one write: all of any write it makes.
/// A smaller permit makes a short write, which CPython's unbuffered
/// stdout drops silently (finding G5); the cap still holds in `push`.
const WRITE_PERMIT: usize = 1 << 30;

struct Shared {
    sink: Box<dyn OutputSink>,
    written: usize,
    cap: usize,
    truncated: bool,
}

/// Both output pipes of one command, sharing one sink and one cap.
#[derive(Clone)]
pub(crate) struct OutputPipes(Arc<Mutex<Shared>>);

impl OutputPipes {
    pub(crate) fn new(sink: Box<dyn OutputSink>, cap: usize) -> OutputPipes {
        OutputPipes(Arc::new(Mutex::new(Shared {
            sink,
            written: 0,
            cap,
            truncated: false,
        })))
    }

    pub(crate) fn pipe(&self, stream: Stream) -> OutputPipe {
        OutputPipe {
            shared: self.clone(),
            stream,
        }
    }

    pub(crate) fn truncated(&self) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .truncated
    }
}

/// One of the two pipes; the guest's `wasi:cli/stdout` or `stderr`.
#[derive(Clone)]
pub(crate) struct OutputPipe {
    shared: OutputPipes,
    stream: Stream,
}

impl OutputPipe {
    /// A line from the host itself (why a program ended), subject to the
    /// cap like anything else.
    pub(crate) fn write_line(&self, line: &str) {
        let mut pipe = self.clone();
        let _ = pipe.push(format!("{line}\n").as_bytes());
    }

    fn push(&mut self, bytes: &[u8]) -> StreamResult<()> {
        let mut shared = self.shared.0.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.truncated {
            return Err(StreamError::Closed);
        }
        let room = shared.cap.saturating_sub(shared.written);
        let take = bytes.len().min(room);
        if take > 0 {
            shared.written += take;
            let stream = self.stream;
            for chunk in bytes[..take].chunks(MAX_CHUNK) {
                shared.sink.write(stream, chunk);
            }
        }
        if take < bytes.len() {
            // Closing the stream is what a full pipe's reader going away
            // looks like to the guest: `yes` and friends stop at once.
            shared.truncated = true;
            return Err(StreamError::Closed);
        }
        Ok(())
    }
}

#[wasmtime_wasi::async_trait]
impl OutputStream for OutputPipe {
    fn write(&mut self, bytes: Bytes) -> StreamResult<()> {
        self.push(&bytes)
    }

    fn flush(&mut self) -> StreamResult<()> {
        Ok(())
    }

    fn check_write(&mut self) -> StreamResult<usize> {
        let shared = self.shared.0.lock().unwrap_or_else(PoisonError::into_inner);
        if shared.truncated {
            return Err(StreamError::Closed);
        }
        Ok(WRITE_PERMIT)
    }
}

#[wasmtime_wasi::async_trait]
impl Pollable for OutputPipe {
    async fn ready(&mut self) {}
}

impl IsTerminal for OutputPipe {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for OutputPipe {
    fn p2_stream(&self) -> Box<dyn OutputStream> {
        Box::new(OutputPipe {
            shared: self.shared.clone(),
            stream: self.stream,
        })
    }

    /// WASI 0.3's streams are not offered to sandboxed components.
    fn async_stream(&self) -> Box<dyn tokio::io::AsyncWrite + Send + Sync> {
        Box::new(tokio::io::sink())
    }
}

/// Collects a program's output in memory, for `process.run`'s `capture`.
#[derive(Clone, Default)]
pub(crate) struct Capture(Arc<Mutex<(Vec<u8>, Vec<u8>)>>);

impl Capture {
    /// The collected stdout and stderr.
    pub(crate) fn take(&self) -> (Vec<u8>, Vec<u8>) {
        std::mem::take(&mut *self.0.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

impl OutputSink for Capture {
    fn write(&mut self, stream: Stream, data: &[u8]) {
        let mut both = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match stream {
            Stream::Stdout => both.0.extend_from_slice(data),
            Stream::Stderr => both.1.extend_from_slice(data),
        }
    }
}
