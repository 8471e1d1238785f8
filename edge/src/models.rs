//! What a model id means. The catalogue (the configuration's models and
//! the built-in ones) names each model's provider; this module is the only
//! one that knows the providers: `script` (no model: the prompt's lines
//! are the commands), `scripted` (a script of turns the operator wrote, or
//! the seed's) and `openai` (any chat-completions server, reached through
//! the broker). A request's model is resolved once, when the run is
//! admitted; the run carries the result. No request names a file: a
//! scripted model's file is the operator's configuration, read off the
//! request threads.

use std::sync::Arc;

use crate::agent::scripted::{Script, ScriptError};
use crate::config::{Config, ModelConfig};

/// A model of the catalogue, resolved.
#[derive(Debug, Clone)]
pub struct Model {
    /// The catalogue id the request named.
    pub id: String,
    /// Its catalogue entry.
    pub config: ModelConfig,
    /// Who answers for it.
    pub provider: Provider,
}

/// Who answers for a model.
#[derive(Debug, Clone)]
pub enum Provider {
    /// `ephemeral/script`: no model; the prompt's lines are the commands.
    Script,
    /// A scripted model, its script read when the run was admitted.
    Scripted(Arc<Script>),
    /// An OpenAI-compatible provider; the broker holds its key.
    OpenAi,
    /// A model this server cannot serve now (its script is unreadable, say):
    /// the run fails with the reason and is settled like any other.
    Unavailable(String),
}

/// Why a model id cannot be served.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// Not in the catalogue.
    #[error("model {0} is not in this server's catalogue")]
    Unknown(String),
    /// The reason names a file of the server: the log has it, the run
    /// only says that the script is not readable.
    #[error("model {id} is not available: its script cannot be read (the server's log says why)")]
    Unreadable {
        /// The model's catalogue id.
        id: String,
        /// Why its script cannot be read.
        why: ScriptError,
    },
    /// A configured script cannot be read (checked when the server starts).
    #[error("model {id:?}: {why}")]
    Script {
        /// The model's catalogue id.
        id: String,
        /// Why its script cannot be read.
        why: ScriptError,
    },
    /// The catalogue entry names a provider this server does not know.
    #[error("model {id} has an unknown provider {provider:?}")]
    UnknownProvider {
        /// The model's catalogue id.
        id: String,
        /// The provider it names.
        provider: String,
    },
}

impl Model {
    /// A model that failed to resolve: runs of it fail with `error`.
    pub fn unavailable(id: &str, error: ModelError) -> Model {
        Model {
            id: id.to_string(),
            config: ModelConfig::default(),
            provider: Provider::Unavailable(error.to_string()),
        }
    }
}

/// Whether `id` is in the catalogue (what a request may name).
pub fn is_known(config: &Config, id: &str) -> bool {
    config.resolve_model(id).is_some()
}

/// The model behind `id`. A scripted model's file is read here, on a
/// blocking thread: an operator's script, at most 1 MiB, a regular file.
pub async fn resolve(config: &Config, id: &str) -> Result<Model, ModelError> {
    let model = config
        .resolve_model(id)
        .ok_or_else(|| ModelError::Unknown(id.to_string()))?;
    let provider = match model.provider.as_str() {
        "script" => Provider::Script,
        "scripted" => {
            let script = Script::for_upstream(&model.upstream).await.map_err(|why| {
                tracing::error!(model = %id, error = %why, "cannot load a scripted model");
                ModelError::Unreadable {
                    id: id.to_string(),
                    why,
                }
            })?;
            Provider::Scripted(Arc::new(script))
        }
        "openai" => Provider::OpenAi,
        other => {
            return Err(ModelError::UnknownProvider {
                id: id.to_string(),
                provider: other.to_string(),
            });
        }
    };
    Ok(Model {
        id: id.to_string(),
        config: model,
        provider,
    })
}

/// Every scripted model the operator configured can be read: checked when
/// the server starts, so a bad path is an error then, not in a run.
/// Blocking.
pub fn check_scripts(config: &Config) -> Result<(), ModelError> {
    for (id, model) in &config.models {
        if model.provider == "scripted" && model.upstream != "seed" {
            Script::load(std::path::Path::new(&model.upstream)).map_err(|why| {
                ModelError::Script {
                    id: id.clone(),
                    why,
                }
            })?;
        }
    }
    Ok(())
}
