//! The `shell` tool as every executor (and every sandbox's caller) uses
//! it: one command in a sandbox, its output streamed to the timeline as it comes
//! (`shell.command`, `shell.output`…, `shell.exit`), and the result kept
//! for whoever asked (the model, or the script's answer).

use std::time::Duration;

use ephemeral_runtime::Stream;
use serde_json::json;

use tokio::sync::mpsc;

use super::RunContext;
use crate::sandbox::{Command, ExecEvent, Sandbox};
use crate::timeline::{EventKind, RunEvents};

/// Largest `shell.output` event: chunks arriving together are merged up to this.
const MAX_OUTPUT_EVENT: usize = 64 << 10;

/// What a shell command did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShellResult {
    pub exit_code: i32,
    pub stdout: String,
    pub stderr: String,
    /// Both streams merged in the order the command wrote them, as a
    /// terminal (or `2>&1`) shows them: what the model reads.
    pub output: String,
    pub truncated: bool,
    /// The limit the command hit, by name (`command_timeout`, `memory`, …).
    pub limit: Option<String>,
    pub duration_ms: u64,
}

/// Where a command's decoded output goes as it arrives, besides the
/// timeline: a sandbox command streamed to its caller.
pub type OutputTap = mpsc::UnboundedSender<(Stream, String)>;

/// How a command is run: where its output also goes, and whether its
/// timeout is what was left of the sandbox's life (then hitting it is
/// `sandbox_timeout`, not `command_timeout`).
#[derive(Default)]
pub struct Runs<'a> {
    pub tap: Option<&'a OutputTap>,
    pub timeout_is_the_sandboxs: bool,
}

impl RunContext {
    /// Runs `command` in the run's sandbox with at most `timeout`.
    pub async fn shell(&self, call_id: &str, command: &str, timeout: Duration) -> ShellResult {
        // The permission is checked here too, where every executor's
        // commands pass: with the shell off no command runs, whatever
        // the executor (and the run has no sandbox anyway).
        let sandbox = match &self.sandbox {
            Some(sandbox) if self.spec.permissions.shell => Some(sandbox.as_ref()),
            _ => None,
        };
        let command = Command {
            command: command.to_string(),
            timeout,
            ..Command::default()
        };
        run_command(sandbox, &self.events, call_id, command, Runs::default()).await
    }
}

/// Runs `command` in `sandbox` (none: the shell is off), its output
/// streamed to `events` as it comes (`shell.command`, `shell.output`…,
/// `shell.exit`) and to the tap when there is one.
pub async fn run_command(
    sandbox: Option<&dyn Sandbox>,
    events: &RunEvents,
    call_id: &str,
    command: Command,
    how: Runs<'_>,
) -> ShellResult {
    events
        .emit(
            EventKind::ShellCommand,
            json!({"call_id": call_id, "command": command.command}),
        )
        .await;
    let mut streamed = Streamed {
        events,
        call_id,
        tap: how.tap,
        decoders: Default::default(),
        result: ShellResult::not_run(),
    };
    let mut result = match sandbox {
        Some(sandbox) => streamed.run(sandbox, command).await,
        None => {
            let mut result = ShellResult::not_run();
            result.stderr = "the shell is off for this run\n".into();
            result.output.clone_from(&result.stderr);
            result
        }
    };
    if how.timeout_is_the_sandboxs && result.limit.as_deref() == Some("command_timeout") {
        result.limit = Some("sandbox_timeout".into());
    }
    events
        .emit(
            EventKind::ShellExit,
            json!({
                "call_id": call_id,
                "exit_code": result.exit_code,
                "duration_ms": result.duration_ms,
                "truncated": result.truncated,
                "limit": result.limit,
            }),
        )
        .await;
    result
}

impl ShellResult {
    /// What a command that never ran gave: nothing, and exit 126.
    fn not_run() -> ShellResult {
        ShellResult {
            exit_code: 126,
            stdout: String::new(),
            stderr: String::new(),
            output: String::new(),
            truncated: false,
            limit: None,
            duration_ms: 0,
        }
    }

    fn push(&mut self, stream: Stream, text: &str) {
        match stream {
            Stream::Stdout => self.stdout.push_str(text),
            Stream::Stderr => self.stderr.push_str(text),
        }
        self.output.push_str(text);
    }
}

/// One command's output on its way to the timeline and its tap.
struct Streamed<'a> {
    events: &'a RunEvents,
    call_id: &'a str,
    tap: Option<&'a OutputTap>,
    decoders: [Utf8Carry; 2],
    result: ShellResult,
}

impl Streamed<'_> {
    async fn run(&mut self, sandbox: &dyn Sandbox, command: Command) -> ShellResult {
        let mut rx = sandbox.run(command);
        let mut next = rx.recv().await;
        while let Some(event) = next.take() {
            let ExecEvent::Output(stream, mut data) = event else {
                if let Some(done) = self.finish(event) {
                    return done;
                }
                next = rx.recv().await;
                continue;
            };
            // Merge what is already waiting on the same stream, so a chatty
            // command makes a few events rather than thousands.
            while data.len() < MAX_OUTPUT_EVENT {
                match rx.try_recv() {
                    Ok(ExecEvent::Output(s, more)) if s == stream => data.extend(more),
                    Ok(other) => {
                        next = Some(other);
                        break;
                    }
                    Err(_) => break,
                }
            }
            self.output(stream, &data).await;
            if next.is_none() {
                next = rx.recv().await;
            }
        }
        self.result
            .push(Stream::Stderr, "the sandbox ended unexpectedly\n");
        self.result.clone()
    }

    fn finish(&mut self, event: ExecEvent) -> Option<ShellResult> {
        let result = &mut self.result;
        match event {
            ExecEvent::Exit(outcome) => {
                result.exit_code = outcome.exit_code;
                result.truncated = outcome.truncated;
                result.limit = outcome.limit.map(|l| l.name().to_string());
                result.duration_ms =
                    u64::try_from(outcome.duration.as_millis()).unwrap_or(u64::MAX);
                Some(result.clone())
            }
            ExecEvent::Failed(message) => {
                result.push(Stream::Stderr, &format!("sandbox error: {message}\n"));
                Some(result.clone())
            }
            ExecEvent::Output(..) => None,
        }
    }

    async fn output(&mut self, stream: Stream, data: &[u8]) {
        let (index, name) = match stream {
            Stream::Stdout => (0, "stdout"),
            Stream::Stderr => (1, "stderr"),
        };
        let text = self.decoders[index].decode(data);
        if text.is_empty() {
            return;
        }
        self.result.push(stream, &text);
        if let Some(tap) = self.tap {
            // A caller that went away stops listening, not the command.
            let _ = tap.send((stream, text.clone()));
        }
        self.events
            .emit(
                EventKind::ShellOutput,
                json!({"call_id": self.call_id, "stream": name, "data": text}),
            )
            .await;
    }
}

/// Decodes a byte stream cut at arbitrary points: an incomplete UTF-8
/// sequence at the end of a chunk waits for the next one; invalid bytes
/// become U+FFFD.
#[derive(Default)]
struct Utf8Carry {
    pending: Vec<u8>,
}

impl Utf8Carry {
    fn decode(&mut self, data: &[u8]) -> String {
        self.pending.extend_from_slice(data);
        let cut = incomplete_tail(&self.pending);
        let complete: Vec<u8> = self.pending.drain(..self.pending.len() - cut).collect();
        String::from_utf8_lossy(&complete).into_owned()
    }
}

/// How many bytes at the end of `bytes` start a UTF-8 sequence that is not
/// finished yet.
fn incomplete_tail(bytes: &[u8]) -> usize {
    for back in 1..=3.min(bytes.len()) {
        let b = bytes[bytes.len() - back];
        if b & 0b1100_0000 != 0b1000_0000 {
            let need = match b {
                0xC0..=0xDF => 2,
                0xE0..=0xEF => 3,
                0xF0..=0xF7 => 4,
                _ => 1,
            };
            return if need > back { back } else { 0 };
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    use ephemeral_runtime::{ExecOutcome, Stream};
    use serde_json::Value;
    use tokio::sync::mpsc;

    use super::Utf8Carry;
    use crate::broker::Scrubber;
    use crate::config::ModelConfig;
    use crate::executor::{Meter, RunContext, RunSpec};
    use crate::run::Permissions;
    use crate::sandbox::{
        BoxFuture, Command, ExecEvent, FileFailure, FileOp, FileReply, Sandbox, SandboxFailure,
    };
    use crate::timeline::{EventKind, Hub, RunEvents, Timeline};

    /// A sandbox that answers every command with the same chunks: what the
    /// `Sandbox` seam lets a test stand in for a real one.
    struct Scripted(Vec<ExecEvent>);

    impl Sandbox for Scripted {
        fn run(&self, _: Command) -> mpsc::UnboundedReceiver<ExecEvent> {
            let (tx, rx) = mpsc::unbounded_channel();
            for event in &self.0 {
                let event = match event {
                    ExecEvent::Output(s, d) => ExecEvent::Output(*s, d.clone()),
                    ExecEvent::Exit(o) => ExecEvent::Exit(o.clone()),
                    ExecEvent::Failed(w) => ExecEvent::Failed(w.clone()),
                };
                let _ = tx.send(event);
            }
            rx
        }

        fn failure(&self) -> BoxFuture<'static, SandboxFailure> {
            Box::pin(std::future::pending())
        }

        fn file(&self, _: FileOp) -> BoxFuture<'_, Result<FileReply, FileFailure>> {
            Box::pin(async { Err(FileFailure::Gone("scripted".into())) })
        }

        fn destroy(&self) -> BoxFuture<'static, ()> {
            Box::pin(async {})
        }
    }

    #[tokio::test]
    async fn a_commands_output_reaches_the_timeline_in_order_with_its_exit() {
        let dir = tempfile::tempdir().unwrap();
        let store = crate::store::open(None, &dir.path().join("runs.db"))
            .await
            .unwrap();
        let live = Hub::default().open("run_x");
        let timeline = Timeline {
            run_id: "run_x",
            created_at: 0,
            zero_data_retention: false,
            next_seq: 1,
        };
        let events = RunEvents::new(timeline, store, live.clone(), Arc::new(Scrubber::new()));
        let exit = ExecOutcome {
            exit_code: 3,
            duration: Duration::from_millis(5),
            limit: None,
            truncated: false,
        };
        let sandbox = Scripted(vec![
            ExecEvent::Output(Stream::Stdout, b"one\n".to_vec()),
            ExecEvent::Output(Stream::Stderr, b"two\n".to_vec()),
            ExecEvent::Output(Stream::Stdout, b"three\n".to_vec()),
            ExecEvent::Exit(exit),
        ]);
        let ctx = RunContext {
            spec: RunSpec {
                run_id: "run_x".into(),
                prompt: String::new(),
                model_id: "ephemeral/script".into(),
                model: ModelConfig::default(),
                permissions: Permissions {
                    shell: true,
                    web: false,
                    connections: Vec::new(),
                    files: Vec::new(),
                    timeout_seconds: 10,
                    max_cost_micros: 1,
                    zero_data_retention: false,
                    idle_timeout_seconds: None,
                    outputs: Vec::new(),
                },
            },
            events,
            meter: Meter::new(1, Default::default(), Default::default()),
            sandbox: Some(Box::new(sandbox)),
            deadline: Instant::now() + Duration::from_secs(10),
        };
        let result = ctx
            .shell("call_1", "anything", Duration::from_secs(1))
            .await;
        assert_eq!(result.exit_code, 3);
        assert_eq!(result.output, "one\ntwo\nthree\n");
        assert_eq!(
            (result.stdout.as_str(), result.stderr.as_str()),
            ("one\nthree\n", "two\n")
        );
        let kinds: Vec<EventKind> = live.after(0).iter().map(|e| e.kind).collect();
        use EventKind::{ShellCommand, ShellExit, ShellOutput};
        assert_eq!(
            kinds,
            [
                ShellCommand,
                ShellOutput,
                ShellOutput,
                ShellOutput,
                ShellExit
            ]
        );
        let streams: Vec<Value> = live
            .after(0)
            .iter()
            .map(|e| e.data["stream"].clone())
            .collect();
        assert_eq!(streams[1..4], ["stdout", "stderr", "stdout"]);
    }

    #[test]
    fn split_characters_wait_for_their_end() {
        let mut d = Utf8Carry::default();
        let bytes = "añ€😀".as_bytes();
        let mut out = String::new();
        for b in bytes {
            out.push_str(&d.decode(&[*b]));
        }
        assert_eq!(out, "añ€😀");
        assert_eq!(d.decode(&[0xff, b'x']), "\u{fffd}x");
    }
}
