//! Where a command's bytes go and come from.
//!
//! Every command runs in-process, so a pipe is a byte buffer and a
//! redirection is a file handle. A `Sink` is shared (`Rc<RefCell<_>>`)
//! because `2>&1` makes two descriptors write to one place in order. The
//! real stdout and stderr are written in chunks (on WASI every write is a
//! host call) through one `Terminal`, so what a command wrote to them
//! comes out in the order it was written, across both streams.

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

thread_local! {
    /// Whether a pipe filled up: the stages of a pipeline run one after
    /// another, so this is where a longer stream was cut, and the command
    /// says so (limit `pipe`) rather than end as if nothing happened.
    static PIPE_FILLED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// A reader came to the end of a pipe that was cut: what it read is not
/// all its writer wrote.
fn reached_a_cut(cut: bool) {
    if cut {
        PIPE_FILLED.with(|f| f.set(true));
    }
}

/// Whether a pipe filled up since the last call (see `PIPE_FILLED`).
pub(crate) fn take_pipe_filled() -> bool {
    PIPE_FILLED.with(|f| f.replace(false))
}

/// One of the process's own two output streams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Which {
    Stdout,
    Stderr,
}

/// The process's real stdout and stderr behind one buffer of chunks, kept
/// in write order: `echo out; echo err >&2` must reach the reader as
/// `out` then `err`, as from a process writing straight to two pipes.
pub(crate) struct Terminal {
    stdout: Box<dyn Write>,
    stderr: Box<dyn Write>,
    /// Chunks not written yet, oldest first; neighbours on the same stream
    /// are merged.
    pending: Vec<(Which, Vec<u8>)>,
    pending_bytes: usize,
    last_flush: Instant,
}

pub(crate) type TerminalRef = Rc<RefCell<Terminal>>;

impl Terminal {
    pub(crate) fn new(stdout: Box<dyn Write>, stderr: Box<dyn Write>) -> TerminalRef {
        Rc::new(RefCell::new(Terminal {
            stdout,
            stderr,
            pending: Vec::new(),
            pending_bytes: 0,
            last_flush: Instant::now(),
        }))
    }

    fn write(&mut self, which: Which, bytes: &[u8]) -> io::Result<()> {
        match self.pending.last_mut() {
            Some((last, chunk)) if *last == which => chunk.extend_from_slice(bytes),
            _ => self.pending.push((which, bytes.to_vec())),
        }
        self.pending_bytes += bytes.len();
        if self.pending_bytes >= FLUSH_THRESHOLD || self.last_flush.elapsed() >= FLUSH_INTERVAL {
            self.write_pending()?;
        }
        Ok(())
    }

    fn write_pending(&mut self) -> io::Result<()> {
        let pending = std::mem::take(&mut self.pending);
        self.pending_bytes = 0;
        self.last_flush = Instant::now();
        // Each chunk is flushed before the next: Rust's stdout is line
        // buffered, so `printf a; printf b >&2` would otherwise leave `a`
        // behind `b`.
        for (which, chunk) in pending {
            let stream = match which {
                Which::Stdout => &mut self.stdout,
                Which::Stderr => &mut self.stderr,
            };
            stream.write_all(&chunk)?;
            stream.flush()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.write_pending()?;
        self.stdout.flush()?;
        self.stderr.flush()
    }
}

/// Somewhere output goes.
pub(crate) enum Sink {
    /// The process's own stdout or stderr (or a test's buffer), chunked.
    Stream { terminal: TerminalRef, which: Which },
    /// A pipe to the next stage (`pipe`) or a command substitution.
    /// A full command substitution says so at once; a full pipe only if
    /// its reader reads up to the cut (`head` never does).
    Memory {
        data: Vec<u8>,
        broken: bool,
        pipe: bool,
    },
    /// A redirection to a file.
    File(BufWriter<File>),
    /// `/dev/null`.
    Null,
    /// `/dev/full`: every write fails, the disk is full (the flag: one was
    /// tried, which the flush reports).
    Full(bool),
}

impl Sink {
    /// A sink that collects bytes in memory.
    pub(crate) fn memory() -> SinkRef {
        Rc::new(RefCell::new(Self::Memory {
            data: Vec::new(),
            broken: false,
            pipe: false,
        }))
    }

    /// The pipe from one stage of a pipeline to the next.
    pub(crate) fn pipe() -> SinkRef {
        Rc::new(RefCell::new(Self::Memory {
            data: Vec::new(),
            broken: false,
            pipe: true,
        }))
    }

    /// One of the process's own streams, through the shared `terminal`.
    pub(crate) fn stream(terminal: &TerminalRef, which: Which) -> SinkRef {
        Rc::new(RefCell::new(Self::Stream {
            terminal: Rc::clone(terminal),
            which,
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
            Self::Stream { terminal, which } => terminal.borrow_mut().write(*which, bytes),
            Self::Memory { data, broken, pipe } => {
                if *broken || data.len() + bytes.len() > MAX_PIPE_BYTES {
                    if !*broken && !*pipe {
                        PIPE_FILLED.with(|f| f.set(true));
                    }
                    *broken = true;
                    return Err(io::Error::from(io::ErrorKind::BrokenPipe));
                }
                data.extend_from_slice(bytes);
                Ok(())
            }
            Self::File(w) => w.write_all(bytes),
            Self::Null => Ok(()),
            Self::Full(tried) => {
                *tried = true;
                Err(io::Error::from(io::ErrorKind::StorageFull))
            }
        }
    }

    pub(crate) fn flush(&mut self) -> io::Result<()> {
        match self {
            Self::Stream { terminal, .. } => terminal.borrow_mut().flush(),
            Self::File(w) => w.flush(),
            Self::Full(true) => Err(io::Error::from(io::ErrorKind::StorageFull)),
            Self::Memory { .. } | Self::Null | Self::Full(false) => Ok(()),
        }
    }

    /// How a program the host runs should write into this sink: straight
    /// to the process's own stream, thrown away, or collected for it.
    pub(crate) fn host_output(&self) -> crate::host::Output {
        match self {
            Self::Stream { .. } => crate::host::Output::Inherit,
            Self::Null => crate::host::Output::Discard,
            Self::Memory { .. } | Self::File(_) | Self::Full(_) => crate::host::Output::Capture,
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
    /// A pipe, file or here-document, with a read position. `cut`: a pipe
    /// that filled up; reading up to its end is reading a cut stream.
    Bytes {
        data: Vec<u8>,
        pos: usize,
        cut: bool,
    },
}

pub(crate) type InputRef = Rc<RefCell<Source>>;

impl Source {
    pub(crate) fn bytes(data: Vec<u8>) -> InputRef {
        Rc::new(RefCell::new(Self::Bytes {
            data,
            pos: 0,
            cut: false,
        }))
    }

    /// What a pipeline stage wrote, for the next; `cut` when it filled the
    /// pipe and the rest was lost.
    pub(crate) fn piped(data: Vec<u8>, cut: bool) -> InputRef {
        Rc::new(RefCell::new(Self::Bytes { data, pos: 0, cut }))
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
            *self = Self::Bytes {
                data,
                pos: 0,
                cut: false,
            };
        }
    }

    /// Everything not yet read.
    pub(crate) fn read_all(&mut self) -> Vec<u8> {
        self.materialize();
        match self {
            Self::Bytes { data, pos, cut } => {
                let rest = data.get(*pos..).unwrap_or_default().to_vec();
                *pos = data.len();
                reached_a_cut(*cut);
                rest
            }
            Self::Process => Vec::new(),
        }
    }

    /// What is not yet read, a piece at a time, until `enough` says the
    /// reader has what it needs (or the input ends): `head -n 3` takes
    /// the start of a pipe and leaves the rest, so it never reads up to
    /// where a full pipe was cut.
    pub(crate) fn read_until(&mut self, mut enough: impl FnMut(&[u8]) -> bool) -> Vec<u8> {
        self.materialize();
        let Self::Bytes { data, pos, cut } = self else {
            return Vec::new();
        };
        let start = (*pos).min(data.len());
        let mut end = start;
        // Pieces double, so `enough` (which looks at all it got) scans the
        // input a bounded number of times whatever its length.
        let mut piece = 64 << 10;
        while end < data.len() {
            end = end.saturating_add(piece).min(data.len());
            piece = piece.saturating_mul(2);
            if enough(&data[start..end]) {
                break;
            }
        }
        *pos = end;
        if end == data.len() {
            reached_a_cut(*cut);
        }
        data[start..end].to_vec()
    }

    /// The next byte, or `None` at end of input.
    pub(crate) fn read_byte(&mut self) -> Option<u8> {
        self.materialize();
        let Self::Bytes { data, pos, cut } = self else {
            return None;
        };
        let Some(&byte) = data.get(*pos) else {
            reached_a_cut(*cut);
            return None;
        };
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
