//! The scripted model: a deterministic stand-in for an LLM that drives the
//! same agent loop through the same interface. Its script is data — a
//! TOML file of turns, each either tool calls or an answer whose
//! templates quote the tools' real outputs (`models/seed.toml`, built in
//! as `scripted/seed`). An operator adds others in the model catalogue
//! (`provider = "scripted"`, `upstream = "/path/file.toml"`): a request
//! names a catalogue id, never a file. Token counts are estimated from the
//! text, so budgets and `model.call` events behave as with a real model.

use std::path::Path;

use serde::Deserialize;

use super::budget::estimate_tokens;
use super::transcript::{ToolCall, ToolOutput, Transcript};
use super::{ModelError, ModelTurn};

/// The seed run's script (SEED.md).
pub const SEED: &str = include_str!("../../models/seed.toml");

/// Largest script file read.
pub const MAX_SCRIPT_BYTES: u64 = 1 << 20;

/// Why a script cannot be had.
#[derive(Debug, thiserror::Error)]
pub enum ScriptError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: String,
        source: std::io::Error,
    },
    #[error("{0} is not a regular file")]
    NotRegular(String),
    #[error("{0} is over {MAX_SCRIPT_BYTES} bytes, the largest script read")]
    TooBig(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{path}: {why}")]
    InvalidFile { path: String, why: String },
    #[error("the script could not be read")]
    Task,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Script {
    turn: Vec<Turn>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Turn {
    #[serde(default)]
    call: Vec<Call>,
    answer: Option<String>,
}

#[derive(Debug, Clone, Deserialize)]
struct Call {
    tool: String,
    #[serde(flatten)]
    arguments: toml::Table,
}

impl Script {
    pub fn parse(text: &str) -> Result<Script, ScriptError> {
        let script: Script =
            toml::from_str(text).map_err(|e| ScriptError::Invalid(e.message().to_string()))?;
        if script.turn.is_empty() {
            return Err(ScriptError::Invalid(
                "a script needs at least one [[turn]]".into(),
            ));
        }
        Ok(script)
    }

    /// Reads a script file the operator configured. Blocking: call it at
    /// start-up or off the async threads. Only a regular file of at most
    /// `MAX_SCRIPT_BYTES` is read; it is opened without blocking and
    /// checked on the open file, so a FIFO, a device or a file swapped in
    /// after a check can neither hang the reader nor fill its memory.
    pub fn load(path: &Path) -> Result<Script, ScriptError> {
        use std::io::Read;
        use std::os::unix::fs::OpenOptionsExt;
        let shown = path.display().to_string();
        let read = |source| ScriptError::Read {
            path: shown.clone(),
            source,
        };
        let file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
            .open(path)
            .map_err(read)?;
        let meta = file.metadata().map_err(read)?;
        if !meta.is_file() {
            return Err(ScriptError::NotRegular(shown));
        }
        if meta.len() > MAX_SCRIPT_BYTES {
            return Err(ScriptError::TooBig(shown));
        }
        let mut text = String::new();
        file.take(MAX_SCRIPT_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(read)?;
        if text.len() as u64 > MAX_SCRIPT_BYTES {
            return Err(ScriptError::TooBig(shown));
        }
        Script::parse(&text).map_err(|e| ScriptError::InvalidFile {
            path: shown,
            why: e.to_string(),
        })
    }

    /// The script of a `scripted` model: `seed` is built in, anything else
    /// is a file the operator configured, read on a blocking thread.
    pub async fn for_upstream(upstream: &str) -> Result<Script, ScriptError> {
        if upstream == "seed" {
            return Script::parse(SEED);
        }
        let path = std::path::PathBuf::from(upstream);
        tokio::task::spawn_blocking(move || Script::load(&path))
            .await
            .map_err(|_| ScriptError::Task)?
    }

    /// The model's next turn given the conversation so far.
    pub fn next_turn(&self, transcript: &Transcript) -> Result<ModelTurn, ModelError> {
        let n = transcript.assistant_turns();
        let outputs = transcript.tool_outputs();
        let turn = self.turn.get(n);
        let (content, tool_calls) = match turn {
            Some(turn) if !turn.call.is_empty() => {
                let first = outputs.len() + 1;
                let calls = turn
                    .call
                    .iter()
                    .enumerate()
                    .map(|(i, call)| ToolCall {
                        id: format!("call_{}", first + i),
                        name: call.tool.clone(),
                        arguments: serde_json::to_string(&call.arguments)
                            .unwrap_or_else(|_| "{}".into()),
                    })
                    .collect();
                (String::new(), calls)
            }
            Some(turn) => (
                answer(turn.answer.as_deref().unwrap_or(""), &outputs),
                Vec::new(),
            ),
            None => ("(the script has no more turns)".to_string(), Vec::new()),
        };
        let output_chars = content.len()
            + tool_calls
                .iter()
                .map(|c: &ToolCall| c.arguments.len() + c.name.len())
                .sum::<usize>();
        Ok(ModelTurn {
            content,
            tool_calls,
            usage: Some((
                estimate_tokens(transcript.chars()),
                estimate_tokens(output_chars),
            )),
        })
    }
}

/// The final answer. A template quotes real results; when a tool was
/// refused there are none, and the answer says so instead of claiming
/// what did not happen (finding G15).
fn answer(template: &str, outputs: &[&ToolOutput]) -> String {
    if let Some(refused) = outputs.iter().find(|o| o.refused) {
        return format!(
            "I could not do what was asked: {}. No command ran, so there are no results to report.",
            refused.stderr.trim_end().trim_end_matches('.')
        );
    }
    render(template, outputs)
}

/// Fills `{{call_N.field}}` and `{{call_N.field.lineK}}` from tool outputs.
fn render(template: &str, outputs: &[&ToolOutput]) -> String {
    let mut out = String::new();
    let mut rest = template.trim_start_matches('\n');
    while let Some(start) = rest.find("{{") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find("}}") else {
            out.push_str(&rest[start..]);
            return out;
        };
        out.push_str(&lookup(after[..end].trim(), outputs));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

fn lookup(path: &str, outputs: &[&ToolOutput]) -> String {
    let mut parts = path.split('.');
    let call = parts
        .next()
        .and_then(|c| c.strip_prefix("call_"))
        .and_then(|n| n.parse::<usize>().ok());
    let Some(output) = call
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| outputs.get(i))
    else {
        return format!("(no {path})");
    };
    let text = match parts.next() {
        Some("stdout") => output.stdout.clone(),
        Some("stderr") => output.stderr.clone(),
        Some("exit_code") => output.exit_code.to_string(),
        Some("output") | None => output.for_model.clone(),
        Some(other) => return format!("(unknown field {other})"),
    };
    let text = match parts
        .next()
        .and_then(|l| l.strip_prefix("line"))
        .and_then(|n| n.parse::<usize>().ok())
    {
        Some(k) => text
            .lines()
            .nth(k.saturating_sub(1))
            .unwrap_or("")
            .to_string(),
        None => text,
    };
    text.trim_end().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::transcript::Step;

    #[test]
    fn the_seed_script_parses_and_plays_in_three_turns() {
        let script = Script::parse(SEED).unwrap();
        let mut t = Transcript {
            system: "s".into(),
            user: "u".into(),
            steps: vec![],
        };
        let first = script.next_turn(&t).unwrap();
        assert_eq!(first.tool_calls.len(), 2);
        assert!(first.tool_calls[0].arguments.contains("pwd; whoami"));
        t.steps.push(Step::Assistant {
            content: String::new(),
            tool_calls: first.tool_calls.clone(),
        });
        let out = |stdout: &str, stderr: &str, code| ToolOutput {
            stdout: stdout.into(),
            stderr: stderr.into(),
            exit_code: code,
            for_model: String::new(),
            refused: false,
        };
        t.steps.push(Step::Tool {
            call_id: "call_1".into(),
            output: out("/tmp/x/scratch\nworker\n", "", 0),
        });
        t.steps.push(Step::Tool {
            call_id: "call_2".into(),
            output: out(
                "/usr/bin/curl\n",
                "curl: (6) Could not resolve host: example.com\n",
                6,
            ),
        });
        let second = script.next_turn(&t).unwrap();
        assert_eq!(second.tool_calls[0].id, "call_3");
        t.steps.push(Step::Assistant {
            content: String::new(),
            tool_calls: second.tool_calls,
        });
        t.steps.push(Step::Tool {
            call_id: "call_3".into(),
            output: out("2 3 5\n", "", 0),
        });
        t.steps.push(Step::Tool {
            call_id: "call_4".into(),
            output: out(
                "-rw-r--r-- 1 worker worker 14 Oct 7 15:02 /tmp/proof.txt\n",
                "",
                0,
            ),
        });
        let answer = script.next_turn(&t).unwrap();
        assert!(answer.tool_calls.is_empty());
        assert!(
            answer
                .content
                .starts_with("- Prime script output: 2 3 5\n- whoami:worker;pwd:/tmp/x/scratch\n"),
            "{}",
            answer.content
        );
        assert!(
            answer
                .content
                .contains("curl error: curl: (6) Could not resolve host: example.com\n")
        );
        assert!(answer.content.contains("curl exited 6"));
        assert!(answer.usage.unwrap().0 > 0);
    }

    #[test]
    fn refused_tools_are_not_reported_as_results() {
        let refused = ToolOutput {
            stderr: "the shell tool is not allowed in this run".into(),
            exit_code: 1,
            refused: true,
            ..Default::default()
        };
        let text = answer("curl exited {{call_1.exit_code}}", &[&refused]);
        assert!(!text.contains("curl exited"), "{text}");
        assert!(
            text.starts_with("I could not do what was asked: the shell tool is not allowed"),
            "{text}"
        );
    }

    #[test]
    fn bad_scripts_are_refused_with_a_reason() {
        assert!(Script::parse("").is_err());
        assert!(Script::parse("[[turn]]\nanswr = 'x'").is_err());
    }
}
