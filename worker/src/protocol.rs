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

/// Why a frame could not be encoded or decoded.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ProtocolError {
    /// The frame's length is over [`MAX_FRAME_BYTES`].
    #[error("frame of {0} bytes is over the {MAX_FRAME_BYTES}-byte limit")]
    TooLarge(usize),
    /// A length of 0: not even the version byte.
    #[error("empty frame")]
    Empty,
    /// The frame is of another [`VERSION`].
    #[error("protocol version {0} is not {VERSION}")]
    Version(u8),
    /// The body is not a message of this version.
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
        /// The sandbox's limits.
        limits: WireLimits,
        /// Set for a microVM's worker only.
        guest: Option<GuestIdentity>,
    },
    /// Write a file into the sandbox before its first command.
    PutFile {
        /// Relative to the scratch folder, or absolute.
        path: String,
        /// The whole file.
        contents: Vec<u8>,
    },
    /// Run one shell command; output frames then one `Exit` answer it.
    /// `stdin` is its standard input; `env` is added to its environment
    /// for this command only.
    Exec {
        /// The host's number for it, echoed in its `Output` and `Exit`.
        id: u32,
        /// The command line, run as `sh -c`.
        command: String,
        /// Its wall-time limit, in milliseconds.
        timeout_ms: u64,
        /// All of its standard input.
        stdin: Vec<u8>,
        /// Variables added for this command only.
        env: Vec<(String, String)>,
    },
    /// A file operation of the sandbox's user (answered `File` or
    /// `FileRefused`).
    File {
        /// The operation.
        op: FileOp,
    },
    /// Report usage so far.
    Usage,
    /// Tear the sandbox down, answer `Destroyed` and exit.
    Destroy,
    /// Jail self-check: attempt something the jail must refuse and say
    /// whether it was refused. Only the host can ask; guest code cannot.
    Probe {
        /// What to attempt.
        probe: Probe,
    },
}

/// What a worker tells the host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub enum FromWorker {
    /// The worker is jailed, its engine warm: the first frame it sends.
    Ready {
        /// The worker's protocol [`VERSION`].
        version: u8,
        /// The worker's process id, as it sees it.
        pid: u32,
    },
    /// The sandbox is built.
    Started,
    /// A put file was written.
    FileWritten {
        /// The path as it was put.
        path: String,
    },
    /// A chunk of a running command's output, in order.
    Output {
        /// The command's `id`.
        id: u32,
        /// Which stream it came from.
        stream: WireStream,
        /// The bytes.
        data: Vec<u8>,
    },
    /// A command ended.
    Exit {
        /// The command's `id`.
        id: u32,
        /// How it ended.
        exit: WireExit,
    },
    /// Usage so far, or at destruction.
    Usage {
        /// The totals.
        usage: WireUsage,
    },
    /// The sandbox is gone; the worker exits next.
    Destroyed {
        /// The sandbox's final totals.
        usage: WireUsage,
    },
    /// A request could not be carried out (the worker carries on).
    Error {
        /// What went wrong.
        message: String,
    },
    /// What a file operation gave.
    File {
        /// The result.
        reply: FileReply,
    },
    /// Why a file operation was refused.
    FileRefused {
        /// The reason, as the API names it.
        refusal: FileRefusal,
        /// The runtime's message, with the path.
        message: String,
    },
    /// The answer to a probe.
    ProbeResult {
        /// The probe it answers.
        probe: Probe,
        /// Whether the jail refused it, as it must.
        refused: bool,
        /// What happened, for the record.
        detail: String,
    },
}

/// What a microVM guest cannot know by itself after a boot or a snapshot
/// restore: the time, fresh entropy for its RNGs, and the run it serves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GuestIdentity {
    /// The run it serves; the guest's hostname.
    pub run_id: String,
    /// The host's wall clock, which the guest sets its own to.
    pub unix_time_ns: u64,
    /// Random bytes credited to the guest kernel's pool (32 to 512).
    pub entropy: Vec<u8>,
}

/// The runtime's `Limits`, as sent to a worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireLimits {
    /// Wall time of one command.
    pub command_timeout_ms: u64,
    /// Wall time of all the sandbox's commands together.
    pub sandbox_timeout_ms: u64,
    /// Linear memory of one running component.
    pub memory_bytes: u64,
    /// stdout and stderr of one command together.
    pub output_bytes: u64,
    /// File contents stored in the sandbox.
    pub disk_bytes: u64,
    /// Files, folders and symlinks in the sandbox.
    pub disk_files: u64,
}

/// Which of a command's streams a chunk came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireStream {
    /// Standard output.
    Stdout,
    /// Standard error.
    Stderr,
}

/// The limit a command ran into, as the runtime names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireLimit {
    /// The command's own wall time.
    CommandTimeout,
    /// The sandbox's total wall time.
    SandboxTimeout,
    /// The memory cap.
    Memory,
    /// The output cap.
    Output,
    /// The disk byte quota.
    DiskBytes,
    /// The file-count quota.
    DiskFiles,
    /// A full pipe between pipeline stages.
    Pipe,
    /// A program's wasm stack.
    Stack,
}

/// How a command ended: the runtime's `ExecOutcome`, as sent to the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireExit {
    /// The exit status (124 after a timeout, 137 after the memory cap).
    pub exit_code: i32,
    /// Wall time from instantiation to exit, in microseconds.
    pub duration_us: u64,
    /// The limit it ran into, if any.
    pub limit: Option<WireLimit>,
    /// Whether its output was cut at the output cap.
    pub truncated: bool,
    /// Set when the runtime failed rather than the command.
    pub error: Option<String>,
}

/// A sandbox's totals: the runtime's `SandboxUsage`, as sent to the host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireUsage {
    /// Commands run.
    pub commands: u64,
    /// Wall time spent running commands, in microseconds.
    pub busy_us: u64,
    /// Wall time since the sandbox was made, in microseconds.
    pub lifetime_us: u64,
}

/// A file operation, as the sandbox's own user (runtime's `files.rs`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileOp {
    /// `data` at `offset` of the file (created or emptied at offset 0).
    Write {
        /// The file.
        path: String,
        /// Where the bytes go.
        offset: u64,
        /// The bytes: one chunk of the file.
        data: Vec<u8>,
    },
    /// At most `len` bytes from `offset`.
    Read {
        /// The file.
        path: String,
        /// Where to start.
        offset: u64,
        /// The most to read.
        len: u32,
    },
    /// What is at a path (a link is not followed).
    Info {
        /// The path.
        path: String,
    },
    /// A folder's entries, sorted by name.
    List {
        /// The folder.
        path: String,
    },
    /// Removes a file or a link; a folder is refused.
    Remove {
        /// The path.
        path: String,
    },
    /// The regular files matching any pattern.
    Glob {
        /// Glob patterns (`*` and `?` within a name, `**` across folders).
        patterns: Vec<String>,
    },
}

/// What a file operation gave.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileReply {
    /// The file's size after the write.
    Written {
        /// In bytes.
        size: u64,
    },
    /// What a `Read` read.
    Data {
        /// The bytes; fewer than asked at the end of the file.
        data: Vec<u8>,
    },
    /// What `Info` found.
    Info {
        /// The file or folder.
        info: WireFileInfo,
    },
    /// What `List` found.
    Listing {
        /// The folder's entries.
        entries: Vec<WireFileInfo>,
    },
    /// `Remove` removed it.
    Removed,
    /// What `Glob` matched.
    Globbed {
        /// The regular files that matched.
        files: Vec<WireFileInfo>,
        /// Paths that matched but are not regular files.
        others: Vec<String>,
    },
}

/// Why a file operation was refused, as the API tells it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum FileRefusal {
    /// Not a path a user of the sandbox may name.
    BadPath,
    /// Nothing at the path.
    NotFound,
    /// A folder where a file was wanted.
    IsFolder,
    /// Something else where a folder was wanted.
    NotFolder,
    /// The sandbox's user may not.
    Denied,
    /// The disk quota is used up.
    Quota,
    /// Any other filesystem failure.
    Other,
}

/// One file or folder: the runtime's `FileInfo`, as sent to the host.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireFileInfo {
    /// The absolute path, as the sandbox sees it.
    pub path: String,
    /// What it is.
    pub kind: WireFileKind,
    /// In bytes.
    pub size: u64,
    /// Permission bits (`0o644`).
    pub mode: u32,
    /// Last modified, in milliseconds since the Unix epoch.
    pub modified_ms: u64,
}

/// What kind of thing a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum WireFileKind {
    /// A regular file (or a device).
    File,
    /// A folder.
    Dir,
    /// A symlink.
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
    Ptrace {
        /// The host process.
        pid: u32,
    },
    /// `kill(pid, 0)` of a host process.
    Kill {
        /// The host process.
        pid: u32,
    },
    /// `mount` of a tmpfs.
    Mount,
    /// Open a host path for reading.
    OpenHostPath {
        /// The host path.
        path: String,
    },
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
