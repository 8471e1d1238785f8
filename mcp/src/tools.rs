//! The tools: their schemas and descriptions, their arguments, what they do
//! with a sandbox, and how their results read. Pure but for the sandbox's
//! calls.

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::{About, CommandOutput, FileEntry, SessionSandbox, ToolFailure};

/// The longest `timeout_seconds` a command may ask for.
pub(crate) const MAX_TIMEOUT_SECONDS: u64 = 600;
/// The most of a file `read_file` returns; the rest is cut, and it says so.
pub(crate) const MAX_READ_BYTES: usize = 1024 * 1024;
/// Where `run_python` puts its snippets.
pub(crate) const SNIPPET_DIR: &str = "/tmp/.mcp";

/// The tools, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ToolName {
    RunShell,
    RunPython,
    WriteFile,
    ReadFile,
    ListFiles,
}

impl ToolName {
    pub(crate) const ALL: [ToolName; 5] = [
        ToolName::RunShell,
        ToolName::RunPython,
        ToolName::WriteFile,
        ToolName::ReadFile,
        ToolName::ListFiles,
    ];

    pub(crate) fn as_str(self) -> &'static str {
        match self {
            ToolName::RunShell => "run_shell",
            ToolName::RunPython => "run_python",
            ToolName::WriteFile => "write_file",
            ToolName::ReadFile => "read_file",
            ToolName::ListFiles => "list_files",
        }
    }

    pub(crate) fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|tool| tool.as_str() == name)
    }
}

/// What the sandbox is, in a few sentences every tool description has;
/// `subject` says what runs there ("It runs", "These tools run").
fn sandbox_summary(about: &About, subject: &str) -> String {
    let isolation = if about.isolation.is_empty() {
        String::new()
    } else {
        format!(" (isolation: {})", about.isolation)
    };
    format!(
        "{subject} in this MCP session's own sandbox: a Debian-like POSIX shell with everyday \
         utilities, running as WebAssembly{isolation}. The sandbox has no network access of any \
         kind (no internet, no DNS, no package downloads: pip and apt cannot fetch anything). \
         Files persist for this session only: the sandbox starts empty on the session's first \
         tool call and ends with the session."
    )
}

fn python_summary(about: &About) -> String {
    let Some(version) = &about.python_version else {
        return "Python is not installed in this sandbox.".into();
    };
    let mut text = format!("python3 is Python {version}");
    if about.python_packages.is_empty() {
        text.push_str(" with its standard library only.");
    } else {
        let packages: Vec<String> = about
            .python_packages
            .iter()
            .map(|(name, version)| format!("{name} {version}"))
            .collect();
        text.push_str(&format!(
            " with the standard library and these packages: {}.",
            packages.join(", ")
        ));
    }
    text
}

fn programs_summary(about: &About) -> String {
    let mut text = String::new();
    if !about.shell_programs.is_empty() {
        text.push_str(&format!(
            "Programs installed: {}.",
            about.shell_programs.join(", ")
        ));
    }
    if let Some(node) = &about.node_version {
        if !text.is_empty() {
            text.push(' ');
        }
        text.push_str(&format!("Node.js {node} is installed as node."));
    }
    text
}

/// The server's `instructions` (what `initialize` answers with).
pub(crate) fn instructions(about: &About) -> String {
    let mut text = format!(
        "{} {}",
        sandbox_summary(about, "These tools run"),
        python_summary(about)
    );
    let programs = programs_summary(about);
    if !programs.is_empty() {
        text.push(' ');
        text.push_str(&programs);
    }
    text
}

fn schema(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => Arc::new(JsonObject::new()),
    }
}

fn timeout_property() -> Value {
    json!({
        "type": "integer",
        "minimum": 1,
        "maximum": MAX_TIMEOUT_SECONDS,
        "description": "Stop the command after this many seconds (1 to 600; the sandbox's default when absent)."
    })
}

fn encoding_property(what: &str) -> Value {
    json!({
        "type": "string",
        "enum": ["utf-8", "base64"],
        "default": "utf-8",
        "description": what,
    })
}

/// The tool definitions, as `tools/list` answers.
pub(crate) fn definitions(about: &About) -> Vec<Tool> {
    let sandbox = sandbox_summary(about, "It runs");
    let python = python_summary(about);
    let programs = programs_summary(about);
    ToolName::ALL
        .into_iter()
        .map(|tool| {
            let (description, input, annotations) = match tool {
                ToolName::RunShell => (
                    format!(
                        "Run a shell command with sh -c in the sandbox and return its stdout, \
                         stderr and exit code (a non-zero exit code is a normal result). The \
                         working folder and files persist between calls. {sandbox} {programs} \
                         {python}"
                    ),
                    json!({
                        "type": "object",
                        "properties": {
                            "command": {"type": "string", "description": "The command line, run by sh -c (pipes, redirections and && work)."},
                            "timeout_seconds": timeout_property(),
                            "stdin": {"type": "string", "description": "Text given to the command as its standard input."}
                        },
                        "required": ["command"],
                        "additionalProperties": false
                    }),
                    ToolAnnotations::with_title("Run a shell command")
                        .read_only(false)
                        .destructive(true)
                        .idempotent(false)
                        .open_world(false),
                ),
                ToolName::RunPython => (
                    format!(
                        "Run a Python program with python3 in the sandbox and return its stdout, \
                         stderr and exit code; print() what you want to see. The code is saved \
                         under {SNIPPET_DIR}/ and runs in the working folder, where files persist \
                         between calls. {python} {sandbox}"
                    ),
                    json!({
                        "type": "object",
                        "properties": {
                            "code": {"type": "string", "description": "The Python source to run."},
                            "timeout_seconds": timeout_property()
                        },
                        "required": ["code"],
                        "additionalProperties": false
                    }),
                    ToolAnnotations::with_title("Run Python code")
                        .read_only(false)
                        .destructive(true)
                        .idempotent(false)
                        .open_world(false),
                ),
                ToolName::WriteFile => (
                    format!(
                        "Write a file in the sandbox (replacing it if it exists, creating missing \
                         folders) and return its absolute path. A relative path is taken from the \
                         working folder. {sandbox}"
                    ),
                    json!({
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "Where to write: absolute, or relative to the working folder."},
                            "content": {"type": "string", "description": "The file's content, as text or, with encoding base64, as base64."},
                            "encoding": encoding_property("How content is given: utf-8 text (default) or base64 for binary data.")
                        },
                        "required": ["path", "content"],
                        "additionalProperties": false
                    }),
                    ToolAnnotations::with_title("Write a file")
                        .read_only(false)
                        .destructive(true)
                        .idempotent(true)
                        .open_world(false),
                ),
                ToolName::ReadFile => (
                    format!(
                        "Read a file in the sandbox. Returns its text; a file that is not UTF-8 \
                         comes back base64-encoded, and the result says so. At most {} bytes are \
                         returned. {sandbox}",
                        MAX_READ_BYTES
                    ),
                    json!({
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "The file: absolute, or relative to the working folder."},
                            "encoding": encoding_property("How to return the content: utf-8 text (default; base64 anyway when the bytes are not UTF-8) or base64.")
                        },
                        "required": ["path"],
                        "additionalProperties": false
                    }),
                    ToolAnnotations::with_title("Read a file")
                        .read_only(true)
                        .idempotent(true)
                        .open_world(false),
                ),
                ToolName::ListFiles => (
                    format!(
                        "List a folder in the sandbox: each entry's kind, permissions, size, \
                         modification time and path. {sandbox}"
                    ),
                    json!({
                        "type": "object",
                        "properties": {
                            "path": {"type": "string", "description": "The folder: absolute, or relative to the working folder (the working folder when absent)."}
                        },
                        "additionalProperties": false
                    }),
                    ToolAnnotations::with_title("List files")
                        .read_only(true)
                        .idempotent(true)
                        .open_world(false),
                ),
            };
            Tool::new(tool.as_str(), description.trim_end().to_owned(), schema(input))
                .with_annotations(annotations)
        })
        .collect()
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub(crate) enum Encoding {
    #[default]
    #[serde(rename = "utf-8", alias = "utf8", alias = "UTF-8", alias = "text")]
    Utf8,
    #[serde(rename = "base64")]
    Base64,
}

#[derive(Debug, Deserialize)]
struct RunShellArgs {
    command: String,
    #[serde(default)]
    timeout_seconds: Option<u64>,
    #[serde(default)]
    stdin: Option<String>,
}

#[derive(Debug, Deserialize)]
struct RunPythonArgs {
    code: String,
    #[serde(default)]
    timeout_seconds: Option<u64>,
}

#[derive(Debug, Deserialize)]
struct WriteFileArgs {
    path: String,
    content: String,
    #[serde(default)]
    encoding: Option<Encoding>,
}

#[derive(Debug, Deserialize)]
struct ReadFileArgs {
    path: String,
    #[serde(default)]
    encoding: Option<Encoding>,
}

#[derive(Debug, Default, Deserialize)]
struct ListFilesArgs {
    #[serde(default)]
    path: Option<String>,
}

/// A tool call with its arguments checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Call {
    RunShell {
        command: String,
        stdin: Option<String>,
        timeout: Option<Duration>,
    },
    RunPython {
        code: String,
        timeout: Option<Duration>,
    },
    WriteFile {
        path: String,
        data: Vec<u8>,
    },
    ReadFile {
        path: String,
        encoding: Encoding,
    },
    ListFiles {
        path: Option<String>,
    },
}

fn args<T: serde::de::DeserializeOwned>(
    tool: ToolName,
    arguments: Option<JsonObject>,
) -> Result<T, ToolFailure> {
    serde_json::from_value(Value::Object(arguments.unwrap_or_default()))
        .map_err(|e| ToolFailure(format!("invalid arguments for {}: {e}", tool.as_str())))
}

fn timeout(seconds: Option<u64>) -> Result<Option<Duration>, ToolFailure> {
    match seconds {
        None => Ok(None),
        Some(s) if (1..=MAX_TIMEOUT_SECONDS).contains(&s) => Ok(Some(Duration::from_secs(s))),
        Some(s) => Err(ToolFailure(format!(
            "timeout_seconds must be between 1 and {MAX_TIMEOUT_SECONDS}, not {s}"
        ))),
    }
}

fn non_empty(what: &str, value: String) -> Result<String, ToolFailure> {
    if value.trim().is_empty() {
        Err(ToolFailure(format!("{what} must not be empty")))
    } else {
        Ok(value)
    }
}

/// Checks a call's arguments (before any sandbox is made for it).
pub(crate) fn parse(tool: ToolName, arguments: Option<JsonObject>) -> Result<Call, ToolFailure> {
    Ok(match tool {
        ToolName::RunShell => {
            let a: RunShellArgs = args(tool, arguments)?;
            Call::RunShell {
                command: non_empty("command", a.command)?,
                stdin: a.stdin,
                timeout: timeout(a.timeout_seconds)?,
            }
        }
        ToolName::RunPython => {
            let a: RunPythonArgs = args(tool, arguments)?;
            Call::RunPython {
                code: a.code,
                timeout: timeout(a.timeout_seconds)?,
            }
        }
        ToolName::WriteFile => {
            let a: WriteFileArgs = args(tool, arguments)?;
            let data = match a.encoding.unwrap_or_default() {
                Encoding::Utf8 => a.content.into_bytes(),
                Encoding::Base64 => base64::engine::general_purpose::STANDARD
                    .decode(a.content.trim())
                    .map_err(|e| ToolFailure(format!("content is not valid base64: {e}")))?,
            };
            Call::WriteFile {
                path: non_empty("path", a.path)?,
                data,
            }
        }
        ToolName::ReadFile => {
            let a: ReadFileArgs = args(tool, arguments)?;
            Call::ReadFile {
                path: non_empty("path", a.path)?,
                encoding: a.encoding.unwrap_or_default(),
            }
        }
        ToolName::ListFiles => {
            let a: ListFilesArgs = args(tool, arguments)?;
            Call::ListFiles {
                path: a.path.filter(|p| !p.trim().is_empty()),
            }
        }
    })
}

/// A tool's result: the text the model reads and the same as fields.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Reply {
    pub(crate) text: String,
    pub(crate) structured: Value,
}

/// Does `call` with `sandbox`. `snippet` numbers a `run_python` file.
pub(crate) async fn execute(
    call: Call,
    sandbox: &dyn SessionSandbox,
    snippet: u64,
) -> Result<Reply, ToolFailure> {
    match call {
        Call::RunShell {
            command,
            stdin,
            timeout,
        } => Ok(command_reply(&sandbox.run(command, stdin, timeout).await?)),
        Call::RunPython { code, timeout } => {
            let path = format!("{SNIPPET_DIR}/snippet-{snippet}.py");
            let written = sandbox
                .write_file(path.clone(), code.into_bytes())
                .await
                .map_err(|e| ToolFailure(format!("could not save the code to {path}: {e}")))?;
            let command = format!("python3 {}", shell_quote(&written));
            Ok(command_reply(&sandbox.run(command, None, timeout).await?))
        }
        Call::WriteFile { path, data } => {
            let size = data.len();
            let written = sandbox.write_file(path, data).await?;
            Ok(Reply {
                text: format!("Wrote {size} bytes to {written}"),
                structured: json!({"path": written, "size": size}),
            })
        }
        Call::ReadFile { path, encoding } => {
            let data = sandbox.read_file(path.clone()).await?;
            Ok(file_reply(&path, data, encoding))
        }
        Call::ListFiles { path } => {
            let entries = sandbox.list_files(path.clone()).await?;
            Ok(listing_reply(path.as_deref(), &entries))
        }
    }
}

/// `s` quoted for `sh`.
pub(crate) fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+=:,@%".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// How a command's result reads: stdout, then stderr marked, then the exit
/// code and any limit.
pub(crate) fn command_reply(out: &CommandOutput) -> Reply {
    let mut text = String::new();
    if !out.stdout.is_empty() {
        text.push_str(&out.stdout);
        if !out.stdout.ends_with('\n') {
            text.push('\n');
        }
    }
    if !out.stderr.is_empty() {
        text.push_str("[stderr]\n");
        text.push_str(&out.stderr);
        if !out.stderr.ends_with('\n') {
            text.push('\n');
        }
    }
    if out.stdout.is_empty() && out.stderr.is_empty() {
        text.push_str("[no output]\n");
    }
    text.push_str(&format!(
        "[exit code {} after {} ms]",
        out.exit_code, out.duration_ms
    ));
    if let Some(limit) = &out.limit {
        text.push_str(&format!("\n[stopped by the sandbox's {limit} limit]"));
    }
    if out.truncated {
        text.push_str("\n[output truncated: it was longer than the sandbox keeps]");
    }
    Reply {
        text,
        structured: json!({
            "exit_code": out.exit_code,
            "stdout": out.stdout,
            "stderr": out.stderr,
            "duration_ms": out.duration_ms,
            "truncated": out.truncated,
            "limit": out.limit,
        }),
    }
}

/// How a file's content reads.
pub(crate) fn file_reply(path: &str, mut data: Vec<u8>, encoding: Encoding) -> Reply {
    let size = data.len();
    let truncated = size > MAX_READ_BYTES;
    data.truncate(MAX_READ_BYTES);
    let (content, encoding, mut text) = match encoding {
        Encoding::Utf8 => match String::from_utf8(data) {
            Ok(text) => (text.clone(), "utf-8", text),
            Err(e) => {
                let utf8 = e.utf8_error();
                let bytes = e.into_bytes();
                if truncated && utf8.error_len().is_none() {
                    // The cut fell inside a character: what comes before it is text.
                    let text = String::from_utf8_lossy(&bytes[..utf8.valid_up_to()]).into_owned();
                    (text.clone(), "utf-8", text)
                } else {
                    let b64 = base64::engine::general_purpose::STANDARD.encode(&bytes);
                    let note = format!(
                        "[{path} is not UTF-8 text: its {} bytes are base64-encoded below]\n{b64}",
                        bytes.len()
                    );
                    (b64, "base64", note)
                }
            }
        },
        Encoding::Base64 => {
            let b64 = base64::engine::general_purpose::STANDARD.encode(&data);
            (b64.clone(), "base64", b64)
        }
    };
    if truncated {
        text.push_str(&format!(
            "\n[truncated: showing the first {MAX_READ_BYTES} of {size} bytes]"
        ));
    }
    Reply {
        text,
        structured: json!({
            "path": path,
            "encoding": encoding,
            "content": content,
            "size": size,
            "truncated": truncated,
        }),
    }
}

/// How a listing reads: one line an entry.
pub(crate) fn listing_reply(dir: Option<&str>, entries: &[FileEntry]) -> Reply {
    let text = if entries.is_empty() {
        format!("{} is empty", dir.unwrap_or("the working folder"))
    } else {
        let lines: Vec<String> = entries
            .iter()
            .map(|e| {
                format!(
                    "{:<7} {:>4} {:>10} {} {}",
                    e.kind, e.mode, e.size, e.modified_at, e.path
                )
            })
            .collect();
        lines.join("\n")
    };
    let structured: Vec<Value> = entries
        .iter()
        .map(|e| {
            json!({
                "path": e.path,
                "kind": e.kind,
                "size": e.size,
                "mode": e.mode,
                "modified_at": e.modified_at,
            })
        })
        .collect();
    Reply {
        text,
        structured: json!({ "entries": structured }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn obj(value: Value) -> Option<JsonObject> {
        match value {
            Value::Object(map) => Some(map),
            _ => None,
        }
    }

    #[test]
    fn every_tool_has_an_object_schema_and_says_what_the_sandbox_is() {
        let about = About {
            isolation: "wasm".into(),
            shell_programs: vec!["ls".into(), "jq".into()],
            python_version: Some("3.12.1".into()),
            python_packages: vec![("numpy".into(), "2.1.0".into())],
            node_version: None,
        };
        let tools = definitions(&about);
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        assert_eq!(
            names,
            [
                "run_shell",
                "run_python",
                "write_file",
                "read_file",
                "list_files"
            ]
        );
        for tool in &tools {
            assert_eq!(tool.input_schema.get("type"), Some(&json!("object")));
            let description = tool.description.as_deref().unwrap_or_default();
            assert!(description.contains("no network access"), "{description}");
            assert!(description.contains("WebAssembly"), "{description}");
            assert!(description.contains("this session only"), "{description}");
        }
        let shell = tools[0].description.as_deref().unwrap_or_default();
        assert!(shell.contains("ls, jq"), "{shell}");
        assert!(shell.contains("numpy 2.1.0"), "{shell}");
        assert!(
            tools[1]
                .description
                .as_deref()
                .unwrap_or_default()
                .contains("Python 3.12.1")
        );
        assert_eq!(
            tools[0].input_schema.get("required"),
            Some(&json!(["command"]))
        );
    }

    #[test]
    fn no_python_is_said_plainly() {
        let text = instructions(&About::default());
        assert!(text.contains("Python is not installed"), "{text}");
    }

    #[test]
    fn arguments_are_checked() {
        assert_eq!(
            parse(
                ToolName::RunShell,
                obj(json!({"command": "ls", "timeout_seconds": 5}))
            ),
            Ok(Call::RunShell {
                command: "ls".into(),
                stdin: None,
                timeout: Some(Duration::from_secs(5))
            })
        );
        for bad in [
            json!({}),
            json!({"command": 3}),
            json!({"command": "  "}),
            json!({"command": "ls", "timeout_seconds": 0}),
            json!({"command": "ls", "timeout_seconds": 601}),
            json!({"command": "ls", "timeout_seconds": -1}),
        ] {
            assert!(
                parse(ToolName::RunShell, obj(bad.clone())).is_err(),
                "{bad}"
            );
        }
        assert!(parse(ToolName::RunShell, None).is_err());
        assert_eq!(
            parse(
                ToolName::WriteFile,
                obj(json!({"path": "a", "content": "aGk=", "encoding": "base64"}))
            ),
            Ok(Call::WriteFile {
                path: "a".into(),
                data: b"hi".to_vec()
            })
        );
        assert!(
            parse(
                ToolName::WriteFile,
                obj(json!({"path": "a", "content": "!!", "encoding": "base64"}))
            )
            .is_err()
        );
        assert!(
            parse(
                ToolName::WriteFile,
                obj(json!({"path": "a", "content": "x", "encoding": "latin1"}))
            )
            .is_err()
        );
        assert_eq!(
            parse(ToolName::ListFiles, None),
            Ok(Call::ListFiles { path: None })
        );
        assert_eq!(
            parse(ToolName::ReadFile, obj(json!({"path": "f"}))),
            Ok(Call::ReadFile {
                path: "f".into(),
                encoding: Encoding::Utf8
            })
        );
    }

    #[test]
    fn a_command_reads_stdout_then_stderr_then_its_exit_code() {
        let reply = command_reply(&CommandOutput {
            exit_code: 2,
            stdout: "out".into(),
            stderr: "err\n".into(),
            duration_ms: 7,
            truncated: true,
            limit: Some("timeout".into()),
        });
        assert_eq!(
            reply.text,
            "out\n[stderr]\nerr\n[exit code 2 after 7 ms]\n[stopped by the sandbox's timeout limit]\n[output truncated: it was longer than the sandbox keeps]"
        );
        assert_eq!(reply.structured["exit_code"], json!(2));
        assert_eq!(reply.structured["limit"], json!("timeout"));
        let quiet = command_reply(&CommandOutput::default());
        assert_eq!(quiet.text, "[no output]\n[exit code 0 after 0 ms]");
        assert_eq!(quiet.structured["limit"], Value::Null);
    }

    #[test]
    fn files_that_are_not_utf8_come_back_as_base64() {
        let text = file_reply("a.txt", b"hello".to_vec(), Encoding::Utf8);
        assert_eq!(text.text, "hello");
        assert_eq!(text.structured["encoding"], json!("utf-8"));
        let binary = file_reply("b.bin", vec![0xff, 0x00, 0x01], Encoding::Utf8);
        assert!(binary.text.contains("not UTF-8"), "{}", binary.text);
        assert!(binary.text.ends_with("/wAB"), "{}", binary.text);
        assert_eq!(binary.structured["content"], json!("/wAB"));
        assert_eq!(binary.structured["encoding"], json!("base64"));
        let asked = file_reply("a.txt", b"hi".to_vec(), Encoding::Base64);
        assert_eq!(asked.text, "aGk=");
    }

    #[test]
    fn big_files_are_cut_and_say_so_even_mid_character() {
        let mut data = vec![b'a'; MAX_READ_BYTES - 1];
        data.extend_from_slice("é".as_bytes());
        data.extend_from_slice(b"tail");
        let reply = file_reply("big", data, Encoding::Utf8);
        assert_eq!(reply.structured["encoding"], json!("utf-8"));
        assert_eq!(reply.structured["truncated"], json!(true));
        assert!(reply.text.ends_with(&format!(
            "[truncated: showing the first {MAX_READ_BYTES} of {} bytes]",
            MAX_READ_BYTES + 5
        )));
    }

    #[test]
    fn listings_read_one_line_an_entry() {
        let reply = listing_reply(
            None,
            &[FileEntry {
                path: "/work/a".into(),
                kind: "file".into(),
                size: 3,
                mode: "0644".into(),
                modified_at: "2025-01-01T00:00:00Z".into(),
            }],
        );
        assert_eq!(
            reply.text,
            "file    0644          3 2025-01-01T00:00:00Z /work/a"
        );
        assert_eq!(reply.structured["entries"][0]["kind"], json!("file"));
        assert_eq!(listing_reply(Some("/x"), &[]).text, "/x is empty");
    }

    #[test]
    fn shell_quoting() {
        assert_eq!(
            shell_quote("/tmp/.mcp/snippet-1.py"),
            "/tmp/.mcp/snippet-1.py"
        );
        assert_eq!(shell_quote("a b"), "'a b'");
        assert_eq!(shell_quote("it's"), r"'it'\''s'");
        assert_eq!(shell_quote(""), "''");
    }
}
