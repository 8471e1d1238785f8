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
        authorization,
        body,
    });
    let reply = shared
        .replies
        .lock()
        .unwrap()
        .pop_front()
        .unwrap_or(Reply::Answer("(no more replies)".into(), (1, 1)));
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
