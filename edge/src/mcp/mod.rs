//! Where the sandboxes of MCP sessions come from (`ephemeral-mcp` owns the
//! protocol and the tools): `ephemeral mcp` on this machine's sandboxes
//! (`local.rs`) or on a server's API (`remote.rs`), and a server's own
//! `/mcp` route on its sandbox sessions (`hosted.rs`), so a session there
//! is a sandbox like any other: admitted, budgeted, on the timeline,
//! settled.

mod hosted;
mod local;
mod remote;

use std::sync::Arc;

use ephemeral_mcp::{About, CommandOutput, FileEntry, ToolFailure};
use ephemeral_runtime::Runtime;

pub use hosted::Hosted;
pub use local::Local;
pub use remote::Remote;

use crate::executor::ShellResult;
use crate::sandbox::{WireFileInfo, WireFileKind};
use crate::timestamp::rfc3339;

/// What the tools' descriptions say of this runtime's sandboxes, without
/// starting one: the programs, and python's packages from its manifest.
pub fn about(runtime: &Arc<Runtime>, isolation: &str) -> About {
    let programs = runtime.program_names();
    let manifest = runtime.program_manifest("python3-sci").unwrap_or_default();
    let mut python_version = None;
    let mut python_packages = Vec::new();
    for line in manifest.lines() {
        let mut words = line.split_whitespace();
        match (words.next(), words.next(), words.next()) {
            (Some("python"), Some(v), None) => python_version = Some(v.to_string()),
            (Some("package"), Some(name), Some(v)) => {
                python_packages.push((name.to_string(), v.to_string()));
            }
            _ => {}
        }
    }
    About {
        isolation: isolation.to_string(),
        shell_programs: programs,
        python_version,
        python_packages,
        node_version: None,
    }
}

/// A command's result as the tools show it.
fn command_output(r: ShellResult) -> CommandOutput {
    CommandOutput {
        exit_code: r.exit_code,
        stdout: r.stdout,
        stderr: r.stderr,
        duration_ms: r.duration_ms,
        truncated: r.truncated,
        limit: r.limit,
    }
}

/// A folder entry as the tools show it.
fn file_entry(info: &WireFileInfo) -> FileEntry {
    let kind = match info.kind {
        WireFileKind::File => "file",
        WireFileKind::Dir => "dir",
        WireFileKind::Symlink => "symlink",
    };
    FileEntry {
        path: info.path.clone(),
        kind: kind.to_string(),
        size: info.size,
        mode: format!("{:04o}", info.mode & 0o7777),
        modified_at: rfc3339(i64::try_from(info.modified_ms).unwrap_or(i64::MAX)),
    }
}

fn failure(e: impl std::fmt::Display) -> ToolFailure {
    ToolFailure(e.to_string())
}
