//! Where a command's bytes go and come from.
//!
//! Every command runs in-process, so a pipe is a byte buffer and a
//! redirection is a file handle. A `Sink` is shared (`Rc<RefCell<_>>`)
//! because `2>&1` makes two descriptors write to one place in order. The
//! real stdout is written in chunks: on WASI every write is a host call.

use std::cell::RefCell;
use std::fs::File;
use std::io::{self, BufWriter, Read, Write};
use std::rc::Rc;
use std::time::{Duration, Instant};

/// Bytes buffered before the real stdout/stderr is written to.
const FLUSH_THRESHOLD: usize = 64 * 1024;

/// Longest time output may sit in the buffer: a slow loop's output still
/// reaches the caller as it goes, not only when the command ends.
const FLUSH_INTERVAL: Duration = Duration::from_millis(50);

/// Most bytes a pipe or command substitution may hold; past this the
/// writer sees a broken pipe, as a process would when its reader is gone.
pub(crate) const MAX_PIPE_BYTES: usize = 64 * 1024 * 1024;

/// Somewhere output goes.
pub(crate) enum Sink {
    /// The process's own stdout or stderr (or a test's buffer), chunked.
    Stream {
        inner: Box<dyn Write>,
        pending: Vec<u8>,
        last_flush: Instant,
    },
    /// A pipe to the next stage or a command substitution.
    Memory { data: Vec<u8>, broken: bool },
    /// A redirection to a file.
    File(BufWriter<File>),
    /// `/dev/null`.
    Null,
}

impl Sink {
    /// A sink that collects bytes in memory.
    pub(crate) fn memory() -> SinkRef {
        Rc::new(RefCell::new(Self::Memory {
            data: Vec::new(),
            broken: false,
        }))
    }

    /// A chunked sink over a writer such as `std::io::stdout()`.
    pub(crate) fn stream(inner: Box<dyn Write>) -> SinkRef {
        Rc::new(RefCell::new(Self::Stream {
            inner,
            pending: Vec::new(),
            last_flush: Instant::now(),
        }))
    }

    pub(crate) fn file(file: File) -> SinkRef {
        Rc::new(RefCell::new(Self::File(BufWriter::new(file))))
    }

    pub(crate) fn null() -> SinkRef {
        Rc::new(RefCell::new(Self::Null))
    }

    pub(crate) fn write_bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Self::Stream {
                inner,
                pending,
                last_flush,
            } => {
                pending.extend_from_slice(bytes);
                if pending.len() >= FLUSH_THRESHOLD || last_flush.elapsed() >= FLUSH_INTERVAL {
                    inner.write_all(pending)?;
                    pending.clear();
                    *last_flush = Instant::now();
                }
                Ok(())
            }
            Self::Memory { data, broken } => {
                if *broken || data.len() + bytes.len() > MAX_PIPE_BYTES {
                    *broken = true;
                    return Err(io::Error::from(io::ErrorKind::BrokenPipe));
                }
                data.extend_from_slice(bytes);
                Ok(())
            }
            Self::File(w) => w.write_all(bytes),
            Self::Null => Ok(()),
        }
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Stream {
                inner,
                pending,
                last_flush,
            } => {
                if !pending.is_empty() {
                    inner.write_all(pending)?;
                    pending.clear();
                }
                *last_flush = Instant::now();
                inner.flush()
            }
            Self::File(w) => w.flush(),
            Self::Memory { .. } | Self::Null => Ok(()),
        }
    }

    /// True once a memory sink refused bytes (the pipe is "closed").
    pub(crate) fn is_broken(&self) -> bool {
        matches!(self, Self::Memory { broken: true, .. })
    }

    /// Takes the collected bytes out of a memory sink.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        match self {
            Self::Memory { data, .. } => std::mem::take(data),
            _ => Vec::new(),
        }
    }
}

pub(crate) type SinkRef = Rc<RefCell<Sink>>;

/// Where stdin bytes come from. Shared by clones so that successive
/// `read`s in a `while read` loop consume one stream.
pub(crate) enum Source {
    /// The process's own stdin, read on first use.
    Process,
    /// A pipe, file or here-document, with a read position.
    Bytes { data: Vec<u8>, pos: usize },
}

pub(crate) type InputRef = Rc<RefCell<Source>>;

impl Source {
    pub(crate) fn bytes(data: Vec<u8>) -> InputRef {
        Rc::new(RefCell::new(Self::Bytes { data, pos: 0 }))
    }

    pub(crate) fn process() -> InputRef {
        Rc::new(RefCell::new(Self::Process))
    }

    /// Loads the process's stdin into memory the first time it is needed.
    fn materialize(&mut self) {
        if matches!(self, Self::Process) {
            let mut data = Vec::new();
            // A closed or absent stdin reads as empty, like `< /dev/null`.
            let _ = io::stdin().lock().read_to_end(&mut data);
            *self = Self::Bytes { data, pos: 0 };
        }
    }

    /// Everything not yet read.
    pub(crate) fn read_all(&mut self) -> Vec<u8> {
        self.materialize();
        match self {
            Self::Bytes { data, pos } => {
                let rest = data.get(*pos..).unwrap_or_default().to_vec();
                *pos = data.len();
                rest
            }
            Self::Process => Vec::new(),
        }
    }

    /// The next byte, or `None` at end of input.
    pub(crate) fn read_byte(&mut self) -> Option<u8> {
        self.materialize();
        let Self::Bytes { data, pos } = self else {
            return None;
        };
        let byte = *data.get(*pos)?;
        *pos += 1;
        Some(byte)
    }
}

/// A descriptor above 2 (`exec 3<file`, `4>out`).
#[derive(Clone)]
pub(crate) enum Fd {
    In(InputRef),
    Out(SinkRef),
}

/// The descriptors of one command: the three standard ones and any
/// others its redirections (or `exec`) opened.
#[derive(Clone)]
pub(crate) struct Io {
    pub(crate) stdin: InputRef,
    pub(crate) stdout: SinkRef,
    pub(crate) stderr: SinkRef,
    pub(crate) extra: std::collections::BTreeMap<i32, Fd>,
}

impl Io {
    /// Writes to stdout; a failed write (closed pipe) is the writer's
    /// problem only, as with SIGPIPE ignored, so it is reported, not raised.
    pub(crate) fn out(&self, bytes: &[u8]) -> bool {
        self.stdout.borrow_mut().write_bytes(bytes).is_ok()
    }

    pub(crate) fn err(&self, bytes: &[u8]) {
        // What was printed before this error must come out before it, as
        // from a real process writing straight to its descriptors.
        if !Rc::ptr_eq(&self.stdout, &self.stderr)
            && let Ok(mut out) = self.stdout.try_borrow_mut()
            && matches!(*out, Sink::Stream { .. })
        {
            let _ = out.flush();
        }
        let mut sink = self.stderr.borrow_mut();
        let _ = sink.write_bytes(bytes);
        // Errors are rare and should appear promptly next to stdout.
        if matches!(*sink, Sink::Stream { .. }) {
            let _ = sink.flush();
        }
    }

    /// Writes `msg` and a newline to stderr.
    pub(crate) fn err_line(&self, msg: &str) {
        let mut line = String::with_capacity(msg.len() + 1);
        line.push_str(msg);
        line.push('\n');
        self.err(line.as_bytes());
    }

    pub(crate) fn flush(&self) {
        let _ = self.stdout.borrow_mut().flush();
        let _ = self.stderr.borrow_mut().flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_sink_breaks_past_its_cap() {
        let sink = Sink::memory();
        let chunk = vec![b'x'; MAX_PIPE_BYTES];
        assert!(sink.borrow_mut().write_bytes(&chunk).is_ok());
        assert!(sink.borrow_mut().write_bytes(b"y").is_err());
        assert!(sink.borrow().is_broken());
    }

    #[test]
    fn source_reads_bytes_then_rest() {
        let src = Source::bytes(b"a\nb\nc".to_vec());
        assert_eq!(src.borrow_mut().read_byte(), Some(b'a'));
        assert_eq!(src.borrow_mut().read_all(), b"\nb\nc".to_vec());
        assert_eq!(src.borrow_mut().read_byte(), None);
    }
}
