//! The broker: the only part of the server that holds credentials. Model
//! provider keys are read from the server's environment when a call is
//! made (never from a request, never stored, never in a sandbox or on the
//! timeline), and the web is reached only through `web_fetch`, GET only,
//! to public addresses.

mod connection;
mod html;
pub mod scrub;
mod ssrf;
mod web;

use std::sync::Arc;
use std::time::Duration;

pub use connection::{
    ConnectionCall, allowed as connection_allows, checked_url,
    path_matches as connection_path_matches,
};
pub use scrub::Scrubber;

pub use ssrf::is_public;

use crate::config::{Config, ModelConfig};

/// `EPHEMERAL_MODEL_URL` / `EPHEMERAL_MODEL_KEY`: send the default model's
/// calls to this OpenAI-compatible server instead.
pub const MODEL_URL_ENV: &str = "EPHEMERAL_MODEL_URL";
/// The key sent with the calls to `EPHEMERAL_MODEL_URL`.
pub const MODEL_KEY_ENV: &str = "EPHEMERAL_MODEL_KEY";

/// A model provider's address, with the key the broker attached: what a
/// provider client is made from. The scrubber cuts the key (and every
/// other secret) out of what the provider says.
pub struct ProviderAccess {
    /// The broker's client for provider calls.
    pub http: reqwest::Client,
    /// The provider's API root, e.g. `https://api.openai.com/v1`.
    pub base_url: String,
    /// The provider key, if the model needs one.
    pub key: Option<String>,
    /// Cuts every secret the broker knows out of what the provider says.
    pub scrubber: Arc<Scrubber>,
}

/// The only holder of credentials: provider keys, connections' credentials, and
/// the way to the web.
pub struct Broker {
    /// Provider calls.
    http: reqwest::Client,
    /// Connection calls: redirects are not followed (a 3xx goes back to
    /// the model), so the credential never reaches another place.
    connections: reqwest::Client,
    web_price_micros: i64,
    scrubber: Arc<Scrubber>,
}

/// Every HTTP client of the broker starts here: proxy variables of the
/// server's environment (`HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY`) are
/// ignored, so a call goes where it was checked to go (`web_fetch` pins
/// the address it checked; a proxy would resolve the name again).
pub(crate) fn http_client() -> reqwest::ClientBuilder {
    reqwest::Client::builder()
        .no_proxy()
        .connect_timeout(Duration::from_secs(10))
}

impl Broker {
    /// A broker that knows no secrets yet; one `web_fetch` costs
    /// `web_price_micros`.
    pub fn new(web_price_micros: i64) -> Broker {
        let http = http_client().build().unwrap_or_default();
        let connections = http_client()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Broker {
            http,
            connections,
            web_price_micros,
            scrubber: Arc::new(Scrubber::new()),
        }
    }

    /// A broker for `config`, knowing every secret the configuration
    /// names that is set in the environment now (more are registered as
    /// they are attached).
    pub fn for_config(config: &Config) -> Broker {
        let broker = Broker::new(config.prices.web_fetch_micros);
        let vars = config
            .catalogue()
            .into_values()
            .filter_map(|m| m.api_key_env)
            .chain(
                config
                    .connections
                    .values()
                    .filter_map(|c| c.credential_env.clone()),
            )
            .chain([MODEL_KEY_ENV.to_string()]);
        for var in vars {
            if let Ok(value) = std::env::var(&var) {
                broker.scrubber.add(&value);
            }
        }
        broker
    }

    /// The scrubber holding every secret this broker has attached.
    pub fn scrubber(&self) -> Arc<Scrubber> {
        self.scrubber.clone()
    }

    /// Reads a secret from the environment, registering it with the scrubber.
    fn secret(&self, var: &str) -> Option<String> {
        let value = std::env::var(var).ok().filter(|k| !k.is_empty())?;
        self.scrubber.add(&value);
        Some(value)
    }

    /// Access to `model`'s provider with its key attached, or why not.
    pub fn provider(
        &self,
        model_id: &str,
        model: &ModelConfig,
        is_default: bool,
    ) -> Result<ProviderAccess, String> {
        if is_default && let Ok(url) = std::env::var(MODEL_URL_ENV) {
            let key = self.secret(MODEL_KEY_ENV);
            return Ok(ProviderAccess {
                http: self.http.clone(),
                base_url: url,
                key,
                scrubber: self.scrubber.clone(),
            });
        }
        let base_url = model
            .base_url
            .clone()
            .ok_or_else(|| format!("model {model_id} has no base_url configured"))?;
        let key = match &model.api_key_env {
            Some(var) => Some(self.secret(var).ok_or_else(|| {
                format!("model {model_id} needs a provider key: {var} is not set on the server")
            })?),
            None => None,
        };
        Ok(ProviderAccess {
            http: self.http.clone(),
            base_url,
            key,
            scrubber: self.scrubber.clone(),
        })
    }

    /// What one `web_fetch` costs, in micros.
    pub fn web_price_micros(&self) -> i64 {
        self.web_price_micros
    }

    /// `result` with every secret cut out of its body or its reason.
    fn scrubbed(&self, result: HttpResult) -> HttpResult {
        match result {
            Ok((status, body)) => Ok((status, self.scrubber.scrub(&body))),
            Err(reason) => Err(self.scrubber.scrub(&reason)),
        }
    }
}

/// An HTTP call's outcome as `(status, body)` or the reason it was refused
/// or failed.
pub type HttpResult = Result<(u16, String), String>;
