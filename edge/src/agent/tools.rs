//! The agent's tools: the `shell` in the run's sandbox, `web_fetch` and
//! the organisation's connections through the broker. Each is on the
//! timeline (`shell.*`, `web.request`/`web.response`), priced, refused
//! when the run does not allow it, and its output shaped for the model.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::prompt;
use super::transcript::{ToolCall, ToolOutput};
use crate::broker::{Broker, ConnectionCall, HttpResult};
use crate::config::ConnectionConfig;
use crate::executor::RunContext;
use crate::timeline::EventKind;

/// A shell command's time limit when the model gives none, and the most it may ask.
const DEFAULT_COMMAND_TIMEOUT: Duration = Duration::from_secs(60);
const MAX_COMMAND_TIMEOUT: Duration = Duration::from_secs(300);
/// Tool output given back to the model; more is cut in the middle.
const MAX_TOOL_OUTPUT: usize = 16_000;

/// Runs one tool call of the model, within what the run allows.
pub(super) async fn run(
    broker: &Broker,
    connections: &[(String, ConnectionConfig)],
    run: &RunContext,
    call: &ToolCall,
) -> ToolOutput {
    let args: Value = serde_json::from_str(&call.arguments).unwrap_or(Value::Null);
    let permissions = &run.spec.permissions;
    match call.name.as_str() {
        "shell" if permissions.shell => match args["command"].as_str() {
            Some(command) => shell(run, call, command, &args).await,
            None => refusal("the shell tool needs {\"command\": \"…\"}"),
        },
        "web_fetch" if permissions.web => match args["url"].as_str() {
            Some(url) => web_fetch(broker, run, call, url).await,
            None => refusal("web_fetch needs {\"url\": \"…\"}"),
        },
        "shell" | "web_fetch" => refusal(&format!(
            "the {} tool is not allowed in this run",
            call.name
        )),
        name if name.starts_with("conn_") => {
            connection(broker, connections, run, call, &args).await
        }
        other => refusal(&format!("there is no tool named {other:?}")),
    }
}

/// `web_fetch`: through the broker, on the timeline, priced.
async fn web_fetch(broker: &Broker, run: &RunContext, call: &ToolCall, url: &str) -> ToolOutput {
    let request = json!({"call_id": call.id, "url": url, "method": "GET"});
    run.events.emit(EventKind::WebRequest, request).await;
    run.meter.web(broker.web_price_micros());
    let result = broker.web_fetch(url).await;
    respond(run, json!({"call_id": call.id, "url": url}), result).await
}

/// A call to one of the run's connections, through the broker.
async fn connection(
    broker: &Broker,
    connections: &[(String, ConnectionConfig)],
    run: &RunContext,
    call: &ToolCall,
    args: &Value,
) -> ToolOutput {
    let Some((name, conn)) = connections
        .iter()
        .find(|(n, _)| prompt::connection_tool(n) == call.name)
    else {
        return refusal(&format!(
            "there is no connection behind {:?} in this run",
            call.name
        ));
    };
    let (Some(method), Some(path)) = (args["method"].as_str(), args["path"].as_str()) else {
        return refusal("a connection call needs {\"method\": \"…\", \"path\": \"…\"}");
    };
    let request = ConnectionCall {
        name,
        method,
        path,
        body: args["body"].as_str(),
    };
    let method = method.to_ascii_uppercase();
    let shown = json!({"call_id": call.id, "connection": name, "method": method, "url": path});
    run.events.emit(EventKind::WebRequest, shown).await;
    let result = broker.call_connection(conn, &request).await;
    run.meter.web(broker.web_price_micros());
    respond(
        run,
        json!({"call_id": call.id, "connection": name, "url": path}),
        result,
    )
    .await
}

async fn shell(run: &RunContext, call: &ToolCall, command: &str, args: &Value) -> ToolOutput {
    let asked = args["timeout_seconds"]
        .as_u64()
        .map(Duration::from_secs)
        .unwrap_or(DEFAULT_COMMAND_TIMEOUT);
    let left = run.deadline.saturating_duration_since(Instant::now());
    let timeout = asked
        .min(MAX_COMMAND_TIMEOUT)
        .min(left)
        .max(Duration::from_millis(1));
    let result = run.shell(&call.id, command, timeout).await;
    let mut text = format!("exit code: {}\n", result.exit_code);
    if let Some(limit) = &result.limit {
        text.push_str(&format!("limit hit: {limit}\n"));
    }
    // One sequence, as a terminal shows it: which lines were errors is
    // told by their order next to the rest, not by two separate buffers.
    text.push_str("output (stdout and stderr, in the order written):\n");
    text.push_str(&result.output);
    ToolOutput {
        stdout: result.stdout,
        stderr: result.stderr,
        exit_code: i64::from(result.exit_code),
        for_model: truncate_for_model(&text),
        refused: false,
    }
}

fn refusal(message: &str) -> ToolOutput {
    ToolOutput {
        stderr: message.to_string(),
        exit_code: 1,
        for_model: format!("error: {message}"),
        refused: true,
        ..Default::default()
    }
}

/// Keeps the start and the end of a long output, saying what was cut.
pub fn truncate_for_model(text: &str) -> String {
    if text.len() <= MAX_TOOL_OUTPUT {
        return text.to_string();
    }
    let half = MAX_TOOL_OUTPUT / 2;
    let head_end = (0..=half)
        .rev()
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(0);
    let tail_start = (text.len() - half..text.len())
        .find(|&i| text.is_char_boundary(i))
        .unwrap_or(text.len());
    let omitted = tail_start - head_end;
    format!(
        "{}\n[… {omitted} bytes omitted: the output was {} bytes; narrow the command (head, grep, tail) to see more …]\n{}",
        &text[..head_end],
        text.len(),
        &text[tail_start..]
    )
}

/// Writes the `web.response` event of a call (`event` holds its
/// identifying fields) and shapes the result for the model.
async fn respond(run: &RunContext, mut event: Value, result: HttpResult) -> ToolOutput {
    match &result {
        Ok((status, body)) => {
            event["status"] = json!(status);
            event["bytes"] = json!(body.len());
        }
        Err(reason) => {
            event["status"] = Value::Null;
            event["bytes"] = json!(0);
            event["error"] = json!(reason);
        }
    }
    run.events.emit(EventKind::WebResponse, event).await;
    match result {
        Ok((status, body)) => ToolOutput {
            for_model: truncate_for_model(&format!("HTTP {status}\n{body}")),
            stdout: body,
            exit_code: if (200..400).contains(&status) { 0 } else { 1 },
            ..Default::default()
        },
        Err(reason) => ToolOutput {
            for_model: format!("error: {reason}"),
            stderr: reason,
            exit_code: 1,
            ..Default::default()
        },
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_outputs_keep_both_ends_with_a_note() {
        let text = format!("{}{}", "a".repeat(20_000), "zend");
        let cut = super::truncate_for_model(&text);
        assert!(cut.len() < 17_000);
        assert!(cut.starts_with("aaa") && cut.ends_with("zend"));
        assert!(cut.contains("bytes omitted"));
        assert_eq!(super::truncate_for_model("short"), "short");
    }
}
