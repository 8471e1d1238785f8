//! What the model is told: the system prompt describing the sandbox, and
//! the tools the request's permissions allow (no `web_fetch` at all when
//! web is off).

use serde_json::{Value, json};

use crate::config::ConnectionConfig;
use crate::run::Permissions;

pub fn system(permissions: &Permissions) -> String {
    let shell = if permissions.shell {
        "You work in a disposable sandbox through the `shell` tool: a bash-compatible shell with the \
         usual GNU utilities (grep, sed, awk, find, jq, tar, zip, …), python3 with its standard library \
         and numpy, pandas, matplotlib (save charts to files; no display), scipy, scikit-learn, \
         statsmodels, seaborn, openpyxl, lxml and sympy already installed (never pip install them), and \
         node. Your working folder is a scratch folder (also $HOME); /tmp is writable; everything is \
         deleted when the run ends. The sandbox has no network at all: curl, wget, pip and sockets fail."
    } else {
        "You have no shell in this run."
    };
    let web = if permissions.web {
        "You can read web pages with the `web_fetch` tool (GET only, text extracted)."
    } else {
        "You have no web access."
    };
    format!(
        "{shell} {web} Run commands to find things out instead of guessing, and report real outputs, \
         never what you expect. When you are done, reply with your final answer as plain text."
    )
}

/// The tool name of a connection: `conn_` and the name, in the
/// characters tool names allow.
pub fn connection_tool(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    format!("conn_{clean}")
}

pub fn tools(permissions: &Permissions, connections: &[(String, ConnectionConfig)]) -> Vec<Value> {
    let mut tools = Vec::new();
    if permissions.shell {
        tools.push(json!({"type": "function", "function": {
            "name": "shell",
            "description": "Run a bash command in the sandbox; returns its exit code and its output (stdout and stderr merged in the order written).",
            "parameters": {"type": "object", "properties": {
                "command": {"type": "string", "description": "The command line, run with bash -c."},
                "timeout_seconds": {"type": "integer", "minimum": 1, "maximum": 300, "description": "Time limit (default 60)."},
            }, "required": ["command"]},
        }}));
    }
    if permissions.web {
        tools.push(json!({"type": "function", "function": {
            "name": "web_fetch",
            "description": "GET a public http(s) URL; returns the status and the page's text.",
            "parameters": {"type": "object", "properties": {
                "url": {"type": "string"},
            }, "required": ["url"]},
        }}));
    }
    for (name, conn) in connections {
        tools.push(json!({"type": "function", "function": {
            "name": connection_tool(name),
            "description": format!(
                "Call the {name} connection through the credentials broker (base {}). Allowed methods: {}. Allowed paths: {} (`*` is one segment).",
                conn.base_url, conn.methods.join(", "), conn.paths.join(", ")
            ),
            "parameters": {"type": "object", "properties": {
                "method": {"type": "string"},
                "path": {"type": "string", "description": "Absolute path, with a query string if needed."},
                "body": {"type": "string", "description": "JSON body, for methods that take one."},
            }, "required": ["method", "path"]},
        }}));
    }
    tools
}
