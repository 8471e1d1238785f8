//! The worker protocol: what the host and a worker say to each other over
//! one byte stream (a socket pair today, the microVM's virtio channel
//! later). Pure code over bytes, no I/O, so it can be fuzzed and reused on
//! any transport.
//!
//! A frame is `[length: u32 LE][version: u8][postcard body]`, where
//! `length` counts the version byte and the body. A frame longer than
//! [`MAX_FRAME_BYTES`] is refused before anything is allocated for it, and
//! postcard checks every length inside the body against the bytes that are
//! really there, so a hostile frame costs at most one frame's memory.

use serde::{Deserialize, Serialize};

/// Bumped whenever a message changes shape. Both sides refuse a frame of
/// another version.
pub const VERSION: u8 = 3;
/// The largest frame either side accepts: a put file (the API caps a
/// request at 1 MiB) or an output chunk fits many times over.
pub const MAX_FRAME_BYTES: usize = 16 << 20;
/// Bytes before the body: the length and the version.
pub const HEADER_BYTES: usize = 5;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProtocolError {
    #[error("frame of {0} bytes is over the {MAX_FRAME_BYTES}-byte limit")]
    TooLarge(usize),
    #[error("empty frame")]
    Empty,
    #[error("protocol version {0} is not {VERSION}")]
    Version(u8),
    #[error("malformed frame: {0}")]
    Malformed(String),
}

/// What the host asks of a worker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum ToWorker {
    /// Build the run's sandbox with these limits (once per worker). A
    /// microVM's worker also gets who and when it is (`guest`), before any
    /// untrusted code runs.
    Start {
        limits: WireLimits,
        guest: Option<GuestIdentity>,
    },
    /// Write a file into the sandbox before its first command.
    PutFile { path: String, contents: Vec<u8> },
    /// Run one shell command; output frames then one `Exit` answer it.
    /// `stdin` is its standard input; `env` is added to its environment
    /// for this command only.
    Exec {
        id: u32,
        command: String,
        timeout_ms: u64,
        stdin: Vec<u8>,
        env: Vec<(String, String)>,
    },
    /// A file operation of the sandbox's user (answered `File` or
    /// `FileRefused`).
    File { op: FileOp },
    /// Report usage so far.
    Usage,
    /// Tear the sandbox down, answer `Destroyed` and exit.
    Destroy,
    /// Jail self-check: attempt something the jail must refuse and say
    /// whether it was refused. Only the host can ask; guest code cannot.
    Probe { probe: Probe },
}

/// What a worker tells the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker is jailed, its engine warm: the first frame it sends.
    Ready { version: u8, pid: u32 },
    /// The sandbox is built.
    Started,
    /// A put file was written.
    FileWritten { path: String },
    /// A chunk of a running command's output, in order.
    Output {
        id: u32,
        stream: WireStream,
        data: Vec<u8>,
    },
    /// A command ended.
    Exit { id: u32, exit: WireExit },
    /// Usage so far, or at destruction.
    Usage { usage: WireUsage },
    /// The sandbox is gone; the worker exits next.
    Destroyed { usage: WireUsage },
    /// A request could not be carried out (the worker carries on).
    Error { message: String },
    /// What a file operation gave.
    File { reply: FileReply },
    /// Why a file operation was refused.
    FileRefused {
        refusal: FileRefusal,
        message: String,
    },
    /// The answer to a probe.
    ProbeResult {
        probe: Probe,
        refused: bool,
        detail: String,
    },
}

/// What a microVM guest cannot know by itself after a boot or a snapshot
/// restore: the time, fresh entropy for its RNGs, and the run it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestIdentity {
    pub run_id: String,
    pub unix_time_ns: u64,
    pub entropy: Vec<u8>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireLimits {
    pub command_timeout_ms: u64,
    pub sandbox_timeout_ms: u64,
    pub memory_bytes: u64,
    pub output_bytes: u64,
    pub disk_bytes: u64,
    pub disk_files: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireStream {
    Stdout,
    Stderr,
}

/// The limit a command ran into, as the runtime names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireLimit {
    CommandTimeout,
    SandboxTimeout,
    Memory,
    Output,
    DiskBytes,
    DiskFiles,
    Pipe,
    Stack,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireExit {
    pub exit_code: i32,
    pub duration_us: u64,
    pub limit: Option<WireLimit>,
    pub truncated: bool,
    /// Set when the runtime failed rather than the command.
    pub error: Option<String>,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireUsage {
    pub commands: u64,
    pub busy_us: u64,
    pub lifetime_us: u64,
}

/// A file operation, as the sandbox's own user (runtime's `files.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileOp {
    /// `data` at `offset` of the file (created or emptied at offset 0).
    Write {
        path: String,
        offset: u64,
        data: Vec<u8>,
    },
    /// At most `len` bytes from `offset`.
    Read {
        path: String,
        offset: u64,
        len: u32,
    },
    Info {
        path: String,
    },
    List {
        path: String,
    },
    Remove {
        path: String,
    },
    /// The regular files matching any pattern.
    Glob {
        patterns: Vec<String>,
    },
}

/// What a file operation gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileReply {
    /// The file's size after the write.
    Written {
        size: u64,
    },
    Data {
        data: Vec<u8>,
    },
    Info {
        info: WireFileInfo,
    },
    Listing {
        entries: Vec<WireFileInfo>,
    },
    Removed,
    Globbed {
        files: Vec<WireFileInfo>,
        /// Paths that matched but are not regular files.
        others: Vec<String>,
    },
}

/// Why a file operation was refused, as the API tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileRefusal {
    BadPath,
    NotFound,
    IsFolder,
    NotFolder,
    Denied,
    Quota,
    Other,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireFileInfo {
    pub path: String,
    pub kind: WireFileKind,
    pub size: u64,
    pub mode: u32,
    pub modified_ms: u64,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireFileKind {
    File,
    Dir,
    Symlink,
}

/// What a probe attempts from inside the jailed worker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Probe {
    /// `socket(AF_INET, SOCK_STREAM)`.
    InetSocket,
    /// `socket(AF_INET6, SOCK_DGRAM)`.
    Inet6Socket,
    /// `connect` of a Unix socket to the host's D-Bus/systemd paths.
    ConnectUnix,
    /// `ptrace(PTRACE_ATTACH)` of the host process with this pid.
    Ptrace { pid: u32 },
    /// `kill(pid, 0)` of a host process.
    Kill { pid: u32 },
    /// `mount` of a tmpfs.
    Mount,
    /// Open a host path for reading.
    OpenHostPath { path: String },
    /// Create a file in the worker's root.
    WriteRoot,
    /// `unshare(CLONE_NEWUSER)`: a way back to capabilities.
    Unshare,
    /// `bpf`, `perf_event_open`, `keyctl`, `userfaultfd`, `init_module`,
    /// `reboot`: each must be refused.
    ForbiddenSyscalls,
    /// Start a new process (`fork`): the worker has no business doing so.
    Fork,
    /// Spawn threads until refused; `detail` says how many got through.
    ThreadFlood,
}

/// Encodes one frame.
pub fn encode<T: Serialize>(message: &T) -> Result<Vec<u8>, ProtocolError> {
    let mut frame = vec![0u8; HEADER_BYTES];
    frame[4] = VERSION;
    let frame =
        postcard::to_extend(message, frame).map_err(|e| ProtocolError::Malformed(e.to_string()))?;
    let length = frame.len() - 4;
    if length > MAX_FRAME_BYTES {
        return Err(ProtocolError::TooLarge(length));
    }
    let mut frame = frame;
    frame[..4].copy_from_slice(&(length as u32).to_le_bytes());
    Ok(frame)
}

/// The length a frame header announces (version byte and body), checked
/// against the limit: how many bytes to read after the 4 length bytes.
pub fn frame_length(header: [u8; 4]) -> Result<usize, ProtocolError> {
    let length = u32::from_le_bytes(header) as usize;
    match length {
        0 => Err(ProtocolError::Empty),
        n if n > MAX_FRAME_BYTES => Err(ProtocolError::TooLarge(n)),
        n => Ok(n),
    }
}

/// Decodes the part of a frame after its length: the version and body.
pub fn decode_body<'a, T: Deserialize<'a>>(body: &'a [u8]) -> Result<T, ProtocolError> {
    let (&version, rest) = body.split_first().ok_or(ProtocolError::Empty)?;
    if version != VERSION {
        return Err(ProtocolError::Version(version));
    }
    let (message, left) =
        postcard::take_from_bytes(rest).map_err(|e| ProtocolError::Malformed(e.to_string()))?;
    if !left.is_empty() {
        return Err(ProtocolError::Malformed(format!(
            "{} bytes after the message",
            left.len()
        )));
    }
    Ok(message)
}

/// Decodes the first whole frame in `buf`: `Ok(None)` if more bytes are
/// needed, else the message and how many bytes it took.
pub fn decode<'a, T: Deserialize<'a>>(buf: &'a [u8]) -> Result<Option<(T, usize)>, ProtocolError> {
    let Some(header) = buf.first_chunk::<4>() else {
        return Ok(None);
    };
    let length = frame_length(*header)?;
    let Some(body) = buf.get(4..4 + length) else {
        return Ok(None);
    };
    Ok(Some((decode_body(body)?, 4 + length)))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip<T>(message: T)
    where
        T: Serialize + for<'a> Deserialize<'a> + PartialEq + std::fmt::Debug,
    {
        let frame = encode(&message).unwrap();
        let (back, used): (T, usize) = decode(&frame).unwrap().unwrap();
        assert_eq!(back, message);
        assert_eq!(used, frame.len());
        // Every strict prefix asks for more bytes, never errs or panics.
        for cut in 0..frame.len() {
            assert_eq!(decode::<T>(&frame[..cut]).unwrap(), None, "prefix {cut}");
        }
    }

    #[test]
    fn every_message_round_trips() {
        round_trip(ToWorker::Exec {
            id: 7,
            command: "echo hi".into(),
            timeout_ms: 1000,
            stdin: b"input".to_vec(),
            env: vec![("A".into(), "b".into())],
        });
        round_trip(ToWorker::File {
            op: FileOp::Write {
                path: "a.txt".into(),
                offset: 4,
                data: vec![1, 2],
            },
        });
        round_trip(FromWorker::File {
            reply: FileReply::Globbed {
                files: vec![WireFileInfo {
                    path: "/tmp/x".into(),
                    kind: WireFileKind::File,
                    size: 3,
                    mode: 0o644,
                    modified_ms: 9,
                }],
                others: vec!["/tmp/l".into()],
            },
        });
        round_trip(FromWorker::FileRefused {
            refusal: FileRefusal::Quota,
            message: "a.txt: Disk quota exceeded".into(),
        });
        round_trip(ToWorker::PutFile {
            path: "/tmp/a".into(),
            contents: vec![0, 1, 2, 255],
        });
        round_trip(ToWorker::Probe {
            probe: Probe::OpenHostPath {
                path: "/etc/shadow".into(),
            },
        });
        round_trip(FromWorker::Output {
            id: 1,
            stream: WireStream::Stderr,
            data: b"oops\n".to_vec(),
        });
        round_trip(FromWorker::Exit {
            id: 1,
            exit: WireExit {
                exit_code: 137,
                duration_us: 12,
                limit: Some(WireLimit::Memory),
                truncated: false,
                error: None,
            },
        });
        round_trip(FromWorker::Ready {
            version: VERSION,
            pid: 1,
        });
    }

    #[test]
    fn oversized_length_is_refused_before_reading_the_body() {
        let header = ((MAX_FRAME_BYTES + 1) as u32).to_le_bytes();
        assert_eq!(
            decode::<ToWorker>(&header),
            Err(ProtocolError::TooLarge(MAX_FRAME_BYTES + 1))
        );
    }

    #[test]
    fn other_versions_and_garbage_are_errors() {
        let mut frame = encode(&ToWorker::Usage).unwrap();
        frame[4] = VERSION + 1;
        assert_eq!(
            decode::<ToWorker>(&frame),
            Err(ProtocolError::Version(VERSION + 1))
        );
        assert!(decode::<ToWorker>(&[1, 0, 0, 0, VERSION]).is_err());
        assert!(decode::<ToWorker>(&[0, 0, 0, 0]).is_err());
        // A vector claiming four billion elements in a tiny frame.
        let hostile = [7, 0, 0, 0, VERSION, 1, 0xff, 0xff, 0xff, 0xff, 0x0f];
        assert!(decode::<ToWorker>(&hostile).is_err());
    }

    #[test]
    fn trailing_bytes_in_a_frame_are_an_error() {
        let mut frame = encode(&ToWorker::Usage).unwrap();
        frame.push(0);
        frame[0] += 1;
        assert!(decode::<ToWorker>(&frame).is_err());
    }
}
