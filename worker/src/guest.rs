//! The worker's main loop: one sandbox, driven by frames from the host.
//!
//! The loop runs after the jail is in place (or, in the microVM, as the
//! guest's init); it knows nothing of either. Requests are handled in
//! order; a command's output goes out as frames while it runs, on the same
//! stream, and its `Exit` follows its last output. A frame the worker
//! cannot decode ends the worker: the host sees the stream close and the
//! process exit, and fails the run with that cause.

use std::io::{Read, Write};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use ephemeral_runtime::{Runtime, Sandbox, Stream};

use crate::channel::{ChannelError, read_frame, write_frame};
use crate::probe;
use crate::protocol::{
    FileOp, FileRefusal, FileReply, FromWorker, ToWorker, VERSION, WireExit, WireFileInfo,
    WireUsage,
};

/// The writing half, shared with the output sink of the running command.
type Outbox<W> = Arc<Mutex<W>>;

fn send<W: Write>(out: &Outbox<W>, message: &FromWorker) -> Result<(), ChannelError> {
    let mut writer = out.lock().unwrap_or_else(PoisonError::into_inner);
    write_frame(&mut *writer, message)
}

/// Serves one run: announces `Ready`, then answers requests until
/// `Destroy` or the end of the stream.
pub fn serve<R, W>(
    runtime: Arc<Runtime>,
    mut reader: R,
    writer: W,
    in_guest: bool,
) -> Result<(), ChannelError>
where
    R: Read,
    W: Write + Send + 'static,
{
    let out: Outbox<W> = Arc::new(Mutex::new(writer));
    send(
        &out,
        &FromWorker::Ready {
            version: VERSION,
            pid: std::process::id(),
        },
    )?;
    let mut sandbox: Option<Sandbox> = None;
    let mut buf = Vec::new();
    loop {
        let request: ToWorker = match read_frame(&mut reader, &mut buf) {
            Ok(request) => request,
            Err(ChannelError::Closed) => return Ok(()),
            Err(e) => return Err(e),
        };
        let reply = match request {
            ToWorker::Start { limits, guest } => match guest.map(|g| adopt(&g, in_guest)) {
                Some(Err(message)) => FromWorker::Error { message },
                _ => start(&runtime, &mut sandbox, limits.into()),
            },
            ToWorker::PutFile { path, contents } => match sandbox.as_mut() {
                None => not_started(),
                Some(s) => match s.put_file(&path, &contents) {
                    Ok(()) => FromWorker::FileWritten { path },
                    Err(e) => FromWorker::Error {
                        message: format!("{path}: {e}"),
                    },
                },
            },
            ToWorker::Exec {
                id,
                command,
                timeout_ms,
                stdin,
                env,
            } => match sandbox.as_mut() {
                None => not_started(),
                Some(s) => exec(
                    s,
                    &out,
                    Command {
                        id,
                        command: &command,
                        timeout_ms,
                        stdin,
                        env,
                    },
                ),
            },
            ToWorker::File { op } => match sandbox.as_mut() {
                None => not_started(),
                Some(s) => file(s, op),
            },
            ToWorker::Usage => FromWorker::Usage {
                usage: sandbox
                    .as_ref()
                    .map(|s| WireUsage::from(&s.usage()))
                    .unwrap_or_default(),
            },
            ToWorker::Destroy => {
                let usage = sandbox
                    .take()
                    .map(|s| WireUsage::from(&s.destroy()))
                    .unwrap_or_default();
                return send(&out, &FromWorker::Destroyed { usage });
            }
            ToWorker::Probe { probe } => {
                let (refused, detail) = probe::attempt(&probe);
                FromWorker::ProbeResult {
                    probe,
                    refused,
                    detail,
                }
            }
        };
        send(&out, &reply)?;
    }
}

/// Takes on a microVM guest's identity; refused outside one (a jailed
/// worker may not set the host's clock, and its seccomp filter says so).
fn adopt(identity: &crate::protocol::GuestIdentity, in_guest: bool) -> Result<(), String> {
    if !in_guest {
        return Err("a guest identity is only for a microVM's worker".into());
    }
    crate::guest_init::adopt(identity)
}

fn not_started() -> FromWorker {
    FromWorker::Error {
        message: "the sandbox is not started".into(),
    }
}

fn start(
    runtime: &Arc<Runtime>,
    sandbox: &mut Option<Sandbox>,
    limits: ephemeral_runtime::Limits,
) -> FromWorker {
    if sandbox.is_some() {
        // One worker, one sandbox: never reused for another run.
        return FromWorker::Error {
            message: "this worker already has a sandbox".into(),
        };
    }
    match runtime.sandbox().limits(limits).build() {
        Ok(s) => {
            *sandbox = Some(s);
            FromWorker::Started
        }
        Err(e) => FromWorker::Error {
            message: e.to_string(),
        },
    }
}

/// One command of the host's.
struct Command<'a> {
    id: u32,
    command: &'a str,
    timeout_ms: u64,
    stdin: Vec<u8>,
    env: Vec<(String, String)>,
}

fn exec<W: Write + Send + 'static>(
    sandbox: &mut Sandbox,
    out: &Outbox<W>,
    c: Command<'_>,
) -> FromWorker {
    let Command {
        id,
        command,
        timeout_ms,
        stdin,
        env,
    } = c;
    sandbox.set_command_timeout(Duration::from_millis(timeout_ms));
    let sink = {
        let out = out.clone();
        move |stream: Stream, data: &[u8]| {
            let chunk = FromWorker::Output {
                id,
                stream: stream.into(),
                data: data.to_vec(),
            };
            // A host that stopped reading will see the worker killed; the
            // command itself carries on to its limit.
            let _ = send(&out, &chunk);
        }
    };
    let exit = match sandbox.exec_with(command, stdin, &env, sink) {
        Ok(outcome) => WireExit::from(&outcome),
        Err(e) => WireExit {
            exit_code: 1,
            duration_us: 0,
            limit: None,
            truncated: false,
            error: Some(e.to_string()),
        },
    };
    FromWorker::Exit { id, exit }
}

/// A file operation of the host's, as the sandbox's user.
fn file(sandbox: &mut Sandbox, op: FileOp) -> FromWorker {
    let done = match op {
        FileOp::Write { path, offset, data } => sandbox
            .write_file_at(&path, offset, &data)
            .map(|size| FileReply::Written { size }),
        FileOp::Read { path, offset, len } => sandbox
            .read_file_at(&path, offset, len as usize)
            .map(|data| FileReply::Data { data }),
        FileOp::Info { path } => sandbox.file_info(&path).map(|i| FileReply::Info {
            info: WireFileInfo::from(&i),
        }),
        FileOp::List { path } => sandbox.list_dir(&path).map(|entries| FileReply::Listing {
            entries: entries.iter().map(WireFileInfo::from).collect(),
        }),
        FileOp::Remove { path } => sandbox.remove_file(&path).map(|()| FileReply::Removed),
        FileOp::Glob { patterns } => {
            sandbox
                .glob(&patterns)
                .map(|(files, others)| FileReply::Globbed {
                    files: files.iter().map(WireFileInfo::from).collect(),
                    others,
                })
        }
    };
    match done {
        Ok(reply) => FromWorker::File { reply },
        Err(e) => FromWorker::FileRefused {
            refusal: FileRefusal::from(&e),
            message: e.to_string(),
        },
    }
}
