//! The one allowed fake: a real HTTP server on loopback speaking the OpenAI
//! chat-completions wire format, streamed, with scripted replies — tool
//! calls cut into fragments, usage, errors, 429s and slow answers. It
//! records every request it gets.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::Router;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::post;
use serde_json::{Value, json};

/// One scripted reply.
#[derive(Clone, Debug)]
pub enum Reply {
    /// Tool calls `(name, arguments JSON)`, with usage `(prompt, completion)`.
    Tools(Vec<(&'static str, Value)>, (i64, i64)),
    /// A final answer.
    Answer(String, (i64, i64)),
    /// An HTTP error status with an optional `Retry-After`.
    Status(u16, Option<u64>),
    /// Waits, then gives the inner reply.
    Slow(Duration, Box<Reply>),
    /// An answer quoting every tool result the request carried, one per
    /// line as `[tool N] …` (so what the model was given lands in `output`).
    EchoTools,
    /// One tool call whose arguments have `{{last_b64}}` replaced by the
    /// base64 of the last tool result the request carried.
    ToolWithLast(&'static str, Value),
    /// A provider that repeats the `Authorization` header it got: in an
    /// error body with this status, or (with `None`) in its answer.
    EchoAuth(Option<u16>),
    /// A model that puts the `Authorization` header it got into a shell command.
    EchoAuthInShell,
}

#[derive(Clone, Debug)]
pub struct Seen {
    pub authorization: Option<String>,
    pub body: Value,
}

#[derive(Clone, Default)]
struct Shared {
    replies: Arc<Mutex<VecDeque<Reply>>>,
    seen: Arc<Mutex<Vec<Seen>>>,
}

pub struct FakeLlm {
    pub base_url: String,
    shared: Shared,
}

impl FakeLlm {
    pub async fn start(replies: Vec<Reply>) -> FakeLlm {
        let shared = Shared {
            replies: Arc::new(Mutex::new(replies.into())),
            seen: Arc::default(),
        };
        let app = Router::new()
            .route("/v1/chat/completions", post(complete))
            .with_state(shared.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        FakeLlm {
            base_url: format!("http://{addr}/v1"),
            shared,
        }
    }

    pub fn seen(&self) -> Vec<Seen> {
        self.shared.seen.lock().unwrap().clone()
    }
}

async fn complete(State(shared): State<Shared>, headers: HeaderMap, body: String) -> Response {
    let body: Value = serde_json::from_str(&body).unwrap_or(Value::Null);
    let authorization = headers
        .get("authorization")
        .and_then(|v| v.to_str().ok())
        .map(str::to_string);
    shared.seen.lock().unwrap().push(Seen {
        authorization: authorization.clone(),
        body: body.clone(),
    });
    let reply = shared
        .replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(Reply::Answer("(no more replies)".into(), (1, 1)));
    let auth = authorization.unwrap_or_default();
    let tools: Vec<String> = body["messages"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap_or_default().to_string())
        .collect();
    let reply = match reply {
        Reply::EchoTools => {
            let text = tools
                .iter()
                .enumerate()
                .map(|(i, t)| format!("[tool {i}] {t}"))
                .collect::<Vec<_>>()
                .join("\n");
            Reply::Answer(text, (10, 5))
        }
        Reply::ToolWithLast(name, args) => {
            use base64::Engine;
            let last = tools.last().cloned().unwrap_or_default();
            let b64 = base64::engine::general_purpose::STANDARD.encode(last);
            let args = args.to_string().replace("{{last_b64}}", &b64);
            Reply::Tools(vec![(name, serde_json::from_str(&args).unwrap())], (10, 5))
        }
        Reply::EchoAuth(Some(code)) => {
            let body = json!({"error": {"message": format!("bad key: {auth}")}}).to_string();
            return (StatusCode::from_u16(code).unwrap(), body).into_response();
        }
        Reply::EchoAuth(None) => Reply::Answer(format!("my key: {auth}"), (10, 5)),
        Reply::EchoAuthInShell => Reply::Tools(
            vec![(
                "shell",
                json!({"command": format!("echo '{auth}' > k.txt; cat k.txt")}),
            )],
            (10, 5),
        ),
        other => other,
    };
    respond(reply).await
}

async fn respond(reply: Reply) -> Response {
    match reply {
        Reply::Slow(wait, inner) => {
            tokio::time::sleep(wait).await;
            Box::pin(respond(*inner)).await
        }
        Reply::Status(code, retry_after) => {
            let mut response = (
                StatusCode::from_u16(code).unwrap(),
                json!({"error": {"message": format!("fake provider error {code}"), "type": "server_error"}}).to_string(),
            )
                .into_response();
            if let Some(secs) = retry_after {
                response
                    .headers_mut()
                    .insert("retry-after", secs.to_string().parse().unwrap());
            }
            response
        }
        Reply::Tools(calls, usage) => sse(tool_chunks(&calls), usage),
        Reply::EchoTools
        | Reply::ToolWithLast(..)
        | Reply::EchoAuth(_)
        | Reply::EchoAuthInShell => unreachable!("resolved from the request first"),
        Reply::Answer(text, usage) => {
            let mid = text.len() / 2;
            let mid = (0..=mid)
                .rev()
                .find(|&i| text.is_char_boundary(i))
                .unwrap_or(0);
            let chunks = vec![
                json!({"choices": [{"index": 0, "delta": {"role": "assistant", "content": &text[..mid]}}]}),
                json!({"choices": [{"index": 0, "delta": {"content": &text[mid..]}, "finish_reason": "stop"}]}),
            ];
            sse(chunks, usage)
        }
    }
}

/// Each call's arguments cut in two fragments, interleaved across calls.
fn tool_chunks(calls: &[(&'static str, Value)]) -> Vec<Value> {
    let mut chunks = Vec::new();
    let args: Vec<String> = calls.iter().map(|(_, a)| a.to_string()).collect();
    for (i, (name, _)) in calls.iter().enumerate() {
        let half = args[i].len() / 2;
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": i, "id": format!("call_fake_{i}"), "type": "function",
            "function": {"name": name, "arguments": &args[i][..half]}}]}}]}));
    }
    for (i, a) in args.iter().enumerate() {
        let half = a.len() / 2;
        chunks.push(json!({"choices": [{"index": 0, "delta": {"tool_calls": [{
            "index": i, "function": {"arguments": &a[half..]}}]}}]}));
    }
    chunks.push(json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}));
    chunks
}

fn sse(chunks: Vec<Value>, (prompt, completion): (i64, i64)) -> Response {
    let mut body = String::new();
    for chunk in chunks {
        body.push_str(&format!("data: {chunk}\n\n"));
    }
    let usage = json!({"choices": [], "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}});
    body.push_str(&format!("data: {usage}\n\ndata: [DONE]\n\n"));
    ([("content-type", "text/event-stream")], body).into_response()
}

/// A catalogue entry for a fake OpenAI-wire provider at `base_url`, free
/// (no prices), its key read from `key_env`.
pub fn free_openai_model(base_url: &str, key_env: &str) -> ephemeral_edge::config::ModelConfig {
    ephemeral_edge::config::ModelConfig {
        provider: "openai".into(),
        upstream: "fake-1".into(),
        base_url: Some(base_url.into()),
        api_key_env: Some(key_env.into()),
        input_micros_per_million: 0,
        output_micros_per_million: 0,
        context_window: 128_000,
        max_output_tokens: 4_096,
    }
}
