//! The OpenAI chat-completions wire format, streamed: what OpenAI,
//! OpenRouter, vLLM, llama.cpp's server and Ollama speak. `Assembler` is
//! the pure part (chunks in, one assistant turn out: text, tool calls
//! reassembled by index, usage); `OpenAiClient` moves the bytes, with
//! retries on 429/5xx inside the run's deadline.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use eventsource_stream::Eventsource;
use futures_util::StreamExt;
use serde_json::{Value, json};

use super::transcript::ToolCall;
use super::{ModelError, ModelRequest, ModelTurn};
use crate::broker::ProviderAccess;

/// Tries of one call: the first and three retries.
const ATTEMPTS: u32 = 4;
const FIRST_BACKOFF: Duration = Duration::from_millis(500);
/// Largest provider response accepted (text and tool arguments).
const MAX_RESPONSE_BYTES: usize = 4 << 20;

/// Builds one assistant turn from streamed chunks.
#[derive(Default, Debug)]
pub struct Assembler {
    content: String,
    calls: BTreeMap<u64, (String, String, String)>,
    usage: Option<(i64, i64)>,
    bytes: usize,
}

impl Assembler {
    /// Feeds one `data:` payload (a JSON chunk); `[DONE]` is ignored.
    pub fn feed(&mut self, data: &str) -> Result<(), ModelError> {
        if data.trim() == "[DONE]" {
            return Ok(());
        }
        self.bytes += data.len();
        if self.bytes > MAX_RESPONSE_BYTES {
            return Err(ModelError::Protocol("the response is too large".into()));
        }
        let chunk: Value = serde_json::from_str(data)
            .map_err(|e| ModelError::Protocol(format!("a stream chunk is not JSON: {e}")))?;
        if let Some(error) = chunk.get("error") {
            let message = error["message"].as_str().unwrap_or("unknown error");
            return Err(ModelError::Provider(format!(
                "the provider reported an error: {message}"
            )));
        }
        if let Some(usage) = chunk.get("usage").filter(|u| u.is_object()) {
            let get = |k: &str| usage[k].as_i64().unwrap_or(0);
            self.usage = Some((get("prompt_tokens"), get("completion_tokens")));
        }
        for choice in chunk["choices"].as_array().into_iter().flatten() {
            let delta = &choice["delta"];
            if let Some(text) = delta["content"].as_str() {
                self.content.push_str(text);
            }
            for call in delta["tool_calls"].as_array().into_iter().flatten() {
                let index = call["index"].as_u64().unwrap_or(0);
                let entry = self.calls.entry(index).or_default();
                if let Some(id) = call["id"].as_str() {
                    entry.0.push_str(id);
                }
                if let Some(name) = call["function"]["name"].as_str() {
                    entry.1.push_str(name);
                }
                if let Some(args) = call["function"]["arguments"].as_str() {
                    entry.2.push_str(args);
                }
            }
        }
        Ok(())
    }

    pub fn finish(self) -> ModelTurn {
        let tool_calls = self
            .calls
            .into_iter()
            .map(|(index, (id, name, arguments))| ToolCall {
                id: if id.is_empty() {
                    format!("call_{index}")
                } else {
                    id
                },
                name,
                arguments,
            })
            .collect();
        ModelTurn {
            content: self.content,
            tool_calls,
            usage: self.usage,
        }
    }
}

/// A provider at `base_url` with the broker's key.
pub struct OpenAiClient {
    http: reqwest::Client,
    base_url: String,
    key: Option<String>,
    /// Cuts the key (and every other secret) out of what the provider
    /// says: its errors and its turns (an echoing gateway, a model that
    /// repeats its own headers).
    scrubber: std::sync::Arc<crate::broker::Scrubber>,
}

impl OpenAiClient {
    /// A client over the broker's access to a provider.
    pub fn new(access: ProviderAccess) -> OpenAiClient {
        OpenAiClient {
            http: access.http,
            base_url: access.base_url,
            key: access.key,
            scrubber: access.scrubber,
        }
    }

    pub async fn complete(
        &self,
        request: &ModelRequest,
        deadline: Instant,
    ) -> Result<ModelTurn, ModelError> {
        match self.complete_raw(request, deadline).await {
            Ok(turn) => Ok(self.scrub_turn(turn)),
            Err(e) => Err(match e {
                ModelError::Retryable(m) => ModelError::Retryable(self.scrubber.scrub(&m)),
                ModelError::Provider(m) => ModelError::Provider(self.scrubber.scrub(&m)),
                ModelError::Protocol(m) => ModelError::Protocol(self.scrubber.scrub(&m)),
            }),
        }
    }

    fn scrub_turn(&self, mut turn: ModelTurn) -> ModelTurn {
        turn.content = self.scrubber.scrub(&turn.content);
        for call in &mut turn.tool_calls {
            call.name = self.scrubber.scrub(&call.name);
            call.arguments = self.scrubber.scrub(&call.arguments);
        }
        turn
    }

    async fn complete_raw(
        &self,
        request: &ModelRequest,
        deadline: Instant,
    ) -> Result<ModelTurn, ModelError> {
        let mut body = json!({
            "model": request.upstream,
            "messages": request.messages,
            "tools": request.tools,
            "max_tokens": request.max_tokens,
            "stream": true,
            "stream_options": {"include_usage": true},
        });
        // With every tool off there are none: providers refuse `"tools": []`.
        if request.tools.is_empty()
            && let Some(map) = body.as_object_mut()
        {
            map.remove("tools");
        }
        let mut backoff = FIRST_BACKOFF;
        let mut last = ModelError::Provider("no attempt made".into());
        for attempt in 1..=ATTEMPTS {
            match self.attempt(&body).await {
                Ok(turn) => return Ok(turn),
                Err((error, retry_after)) => {
                    let wait = retry_after.unwrap_or(backoff);
                    let retryable = matches!(error, ModelError::Retryable(_));
                    last = error;
                    if !retryable || attempt == ATTEMPTS || Instant::now() + wait >= deadline {
                        break;
                    }
                    tracing::warn!(
                        attempt,
                        wait_ms = wait.as_millis() as u64,
                        "model call failed, retrying: {}",
                        self.scrubber.scrub(&last.to_string())
                    );
                    tokio::time::sleep(wait).await;
                    backoff *= 2;
                }
            }
        }
        Err(match last {
            ModelError::Retryable(message) => ModelError::Provider(message),
            other => other,
        })
    }

    async fn attempt(&self, body: &Value) -> Result<ModelTurn, (ModelError, Option<Duration>)> {
        let url = format!("{}/chat/completions", self.base_url.trim_end_matches('/'));
        let mut request = self.http.post(&url).json(body);
        if let Some(key) = &self.key {
            request = request.bearer_auth(key);
        }
        let response = request.send().await.map_err(|e| {
            (
                ModelError::Retryable(format!("cannot reach the provider: {}", without_url(&e))),
                None,
            )
        })?;
        let status = response.status();
        if !status.is_success() {
            let retry_after = response
                .headers()
                .get("retry-after")
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.parse::<u64>().ok())
                .map(Duration::from_secs);
            let text = response.text().await.unwrap_or_default();
            let message = format!(
                "the provider answered {}: {}",
                status.as_u16(),
                excerpt(&text)
            );
            let error = if status.as_u16() == 429 || status.is_server_error() {
                ModelError::Retryable(message)
            } else {
                ModelError::Provider(message)
            };
            return Err((error, retry_after));
        }
        let mut assembler = Assembler::default();
        let mut events = response.bytes_stream().eventsource();
        while let Some(event) = events.next().await {
            let event = event.map_err(|e| {
                (
                    ModelError::Retryable(format!("the stream broke: {e}")),
                    None,
                )
            })?;
            assembler.feed(&event.data).map_err(|e| (e, None))?;
        }
        Ok(assembler.finish())
    }
}

/// A reqwest error without the URL (which may carry a query secret).
fn without_url(e: &reqwest::Error) -> String {
    let mut text = e.to_string();
    if let Some(url) = e.url() {
        text = text.replace(url.as_str(), "the provider");
    }
    text
}

fn excerpt(text: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(text).ok();
    let message = parsed
        .as_ref()
        .and_then(|v| v["error"]["message"].as_str().map(str::to_string))
        .unwrap_or_else(|| text.chars().take(200).collect());
    message.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_call_fragments_are_reassembled_by_index() {
        let mut a = Assembler::default();
        let chunks = [
            r#"{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_a","type":"function","function":{"name":"shell","arguments":""}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"id":"call_b","function":{"name":"shell","arguments":"{\"command\":"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"function":{"arguments":"{\"command\": \"pwd\"}"}}]}}]}"#,
            r#"{"choices":[{"index":0,"delta":{"tool_calls":[{"index":1,"function":{"arguments":" \"ls\"}"}}]}}]}"#,
            r#"{"choices":[],"usage":{"prompt_tokens":120,"completion_tokens":30,"total_tokens":150}}"#,
            "[DONE]",
        ];
        for c in chunks {
            a.feed(c).unwrap();
        }
        let turn = a.finish();
        assert_eq!(turn.tool_calls.len(), 2);
        assert_eq!(turn.tool_calls[0].arguments, r#"{"command": "pwd"}"#);
        assert_eq!(turn.tool_calls[1].id, "call_b");
        assert_eq!(turn.tool_calls[1].arguments, r#"{"command": "ls"}"#);
        assert_eq!(turn.usage, Some((120, 30)));
    }

    #[test]
    fn text_accumulates_and_errors_surface() {
        let mut a = Assembler::default();
        a.feed(r#"{"choices":[{"delta":{"content":"Hel"}}]}"#)
            .unwrap();
        a.feed(r#"{"choices":[{"delta":{"content":"lo"}}]}"#)
            .unwrap();
        assert_eq!(a.finish().content, "Hello");
        let mut b = Assembler::default();
        assert!(b.feed("not json").is_err());
        assert!(b.feed(r#"{"error":{"message":"overloaded"}}"#).is_err());
    }
}
