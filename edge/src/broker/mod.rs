//! The broker: the only part of the server that holds credentials. Model
//! provider keys are read from the server's environment when a call is
//! made (never from a request, never stored, never in a sandbox or on the
//! timeline), and the web is reached only through `web_fetch`, GET only,
//! to public addresses.

mod connection;
mod html;
mod ssrf;
mod web;

use std::time::Duration;

pub use connection::{ConnectionCall, allowed as connection_allows};
pub use ssrf::is_public;

use serde_json::{Value, json};

use crate::agent::openai::OpenAiClient;
use crate::agent::transcript::ToolOutput;
use crate::agent::truncate_for_model;
use crate::config::ModelConfig;
use crate::executor::RunContext;

/// `EPHEMERAL_MODEL_URL` / `EPHEMERAL_MODEL_KEY`: send the default model's
/// calls to this OpenAI-compatible server instead.
pub const MODEL_URL_ENV: &str = "EPHEMERAL_MODEL_URL";
pub const MODEL_KEY_ENV: &str = "EPHEMERAL_MODEL_KEY";

pub struct Broker {
    http: reqwest::Client,
    web_price_micros: i64,
}

impl Broker {
    pub fn new(web_price_micros: i64) -> Broker {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .build()
            .unwrap_or_default();
        Broker {
            http,
            web_price_micros,
        }
    }

    /// A client for `model`'s provider with its key attached, or why not.
    pub fn provider(
        &self,
        model_id: &str,
        model: &ModelConfig,
        is_default: bool,
    ) -> Result<OpenAiClient, String> {
        if is_default && let Ok(url) = std::env::var(MODEL_URL_ENV) {
            let key = std::env::var(MODEL_KEY_ENV).ok().filter(|k| !k.is_empty());
            return Ok(OpenAiClient {
                http: self.http.clone(),
                base_url: url,
                key,
            });
        }
        let base_url = model
            .base_url
            .clone()
            .ok_or_else(|| format!("model {model_id} has no base_url configured"))?;
        let key = match &model.api_key_env {
            Some(var) => Some(
                std::env::var(var)
                    .ok()
                    .filter(|k| !k.is_empty())
                    .ok_or_else(|| {
                        format!(
                            "model {model_id} needs a provider key: {var} is not set on the server"
                        )
                    })?,
            ),
            None => None,
        };
        Ok(OpenAiClient {
            http: self.http.clone(),
            base_url,
            key,
        })
    }

    pub fn web_price_micros(&self) -> i64 {
        self.web_price_micros
    }
}

/// An HTTP call's outcome as `(status, body)` or the reason it was refused
/// or failed.
pub type HttpResult = Result<(u16, String), String>;

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
    run.events.emit("web.response", event).await;
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
