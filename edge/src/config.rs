//! The server's configuration: one TOML file, every field optional, every
//! default named here. `README.md` documents each setting; keep them in step.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::isolation::Isolation;

/// Errors reading the configuration file.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {source}")]
    Read {
        /// The file.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
    /// The file is not TOML of this configuration's shape.
    #[error("{path}: {message}")]
    Parse {
        /// The file.
        path: PathBuf,
        /// What the TOML parser said.
        message: String,
    },
    /// The values do not fit together (a default timeout over the maximum, a
    /// negative price, ...).
    #[error("{0}")]
    Invalid(String),
}

/// The server's configuration file (`--config`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Config {
    /// Address the API listens on.
    pub listen: SocketAddr,
    /// Folder for the SQLite file and other state (`--data` overrides it).
    pub data_dir: PathBuf,
    /// `postgres://…` to share state between edge nodes; SQLite under
    /// `data_dir` when absent.
    pub database_url: Option<String>,
    /// This node's name in a multi-node set-up (defaults to the host name).
    pub node_id: Option<String>,
    /// Refuse to run below this isolation (`wasm`, `jail`, `kvm`).
    pub min_isolation: Isolation,
    /// Use exactly this isolation; the strongest the host supports when
    /// absent.
    pub isolation: Option<Isolation>,
    /// `[workers]`: the jailed workers.
    pub workers: WorkersConfig,
    /// `[runs]`: what runs may ask for.
    pub runs: RunsConfig,
    /// The `/mcp` route's sessions.
    pub mcp: McpConfig,
    /// `[orgs]`: what a new organisation starts with.
    pub orgs: OrgsConfig,
    /// `[limits]`: rates, runs in flight and connections.
    pub limits: LimitsConfig,
    /// `[retention]`: how long records are kept.
    pub retention: RetentionConfig,
    /// `[prices]`: what compute, memory and the web cost.
    pub prices: PricesConfig,
    /// Model used when a request names none.
    pub default_model: String,
    /// The model catalogue, by id (`provider/name`), added to the built-in one.
    pub models: BTreeMap<String, ModelConfig>,
    /// Connections runs may use through the broker, by name.
    pub connections: BTreeMap<String, ConnectionConfig>,
    /// Seconds in-flight runs get to finish on SIGTERM before they are cancelled.
    pub shutdown_grace_seconds: u64,
}

/// What runs may ask for, and what their `outputs` collect.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RunsConfig {
    /// Largest `timeout_seconds` a request may ask for.
    pub max_timeout_seconds: u64,
    /// `timeout_seconds` when a request gives none.
    pub default_timeout_seconds: u64,
    /// Files a run's `outputs` collect at most; more are named, skipped.
    pub max_output_files: usize,
    /// Bytes a run's `outputs` collect at most, all files together.
    pub max_output_bytes: u64,
}

/// MCP sessions of `/mcp`: each holds one sandbox.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct McpConfig {
    /// An MCP session (and its sandbox) ends after this long without a
    /// request.
    pub idle_timeout_seconds: u64,
    /// Budget of one session's sandbox (at most the organisation's cap).
    pub max_cost_micros: i64,
}

impl Default for McpConfig {
    fn default() -> Self {
        McpConfig {
            idle_timeout_seconds: 600,
            max_cost_micros: 100_000,
        }
    }
}

/// What an organisation created by the CLI starts with.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct OrgsConfig {
    /// Balance of an organisation created by `ephemeral keys create`.
    pub initial_balance_micros: i64,
    /// Per-run cap of a new organisation (largest `max_cost_micros`).
    pub per_run_cap_micros: i64,
}

/// Rates, runs in flight and connection limits.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct LimitsConfig {
    /// Run creations per organisation per minute (token bucket).
    pub runs_per_minute: u32,
    /// Runs in flight per organisation.
    pub concurrent_runs: u32,
    /// Open connections in all; one more is closed at once.
    pub connections: usize,
    /// Open connections from one peer address.
    pub connections_per_peer: usize,
    /// Seconds a client has to send a request's headers, also between two
    /// requests of a kept-alive connection; then the connection is closed.
    pub header_read_timeout_seconds: u64,
    /// Seconds a client has to send a request's whole body.
    pub body_read_timeout_seconds: u64,
    /// Seconds a response may wait on a client that reads nothing (a
    /// stalled event stream); then the connection is closed and the
    /// client resumes with `Last-Event-ID`.
    pub write_stall_seconds: u64,
}

/// The jailed workers (isolation `jail`).
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkersConfig {
    /// Workers kept ready (jailed, engine warm) for the next runs.
    pub pool_size: usize,
    /// The binary run as `BINARY worker`; this executable when absent.
    pub binary: Option<PathBuf>,
    /// Memory a worker may use beyond its sandbox's cap (engine, compiled
    /// components), in MiB: the cgroup's cap is the sum.
    pub memory_overhead_mib: u64,
    /// Threads (and processes) one worker may have.
    pub max_tasks: u64,
    /// CPU one worker may use, in thousandths of a CPU.
    pub cpu_millis: u64,
    /// Make workers as copies of a jailed, warm fork server (a `clone`,
    /// ~2 ms) rather than spawning each (an `execve` and a warm-up, tens
    /// of ms). Where the fork server cannot start, workers are spawned.
    pub fork_server: bool,
}

impl Default for WorkersConfig {
    fn default() -> Self {
        WorkersConfig {
            pool_size: 2,
            binary: None,
            memory_overhead_mib: ephemeral_worker::host::DEFAULT_MEMORY_OVERHEAD_BYTES >> 20,
            max_tasks: ephemeral_worker::host::DEFAULT_MAX_TASKS,
            cpu_millis: ephemeral_worker::host::DEFAULT_CPU_MILLIS,
            fork_server: true,
        }
    }
}

/// How long runs are kept, and how often expired ones are purged.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RetentionConfig {
    /// Days runs and timelines are kept.
    pub days: u32,
    /// How often the purge task runs, in seconds.
    pub purge_interval_seconds: u64,
}

/// Prices of what runs use besides their model, in micros.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PricesConfig {
    /// Compute price: micros per vCPU-second of sandbox lifetime (a
    /// sandbox runs on one vCPU).
    pub compute_micros_per_second: i64,
    /// Memory price: micros per GiB-second of the sandbox's memory cap.
    pub memory_micros_per_gib_second: i64,
    /// Price of one `web_fetch`.
    pub web_fetch_micros: i64,
}

/// An organisation's service that runs may call through the broker: the
/// credential stays in the server; only the listed methods and paths pass.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ConnectionConfig {
    /// Organisations (by name) whose runs may use it.
    pub orgs: Vec<String>,
    /// e.g. `https://api.github.com`
    pub base_url: String,
    /// Environment variable holding the credential.
    pub credential_env: Option<String>,
    /// Header the credential goes in; its value is `Bearer <credential>`
    /// for `Authorization`, the bare credential otherwise.
    #[serde(default = "default_auth_header")]
    pub auth_header: String,
    /// Allowed methods, e.g. `["GET"]`.
    pub methods: Vec<String>,
    /// Allowed paths; `*` matches one path segment, a final `**` the rest.
    pub paths: Vec<String>,
}

fn default_auth_header() -> String {
    "Authorization".into()
}

impl ConnectionConfig {
    /// Whether runs of the organisation named `org_name` may use it.
    pub fn allows_org(&self, org_name: &str) -> bool {
        self.orgs.iter().any(|o| o == org_name)
    }
}

/// One entry of the model catalogue.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ModelConfig {
    /// `openai` (any chat-completions server), `script` (built in, no
    /// LLM) or `scripted` (a script of turns: `upstream` is `seed` or the
    /// path of a TOML file on the server, at most 1 MiB).
    pub provider: String,
    /// The model's name upstream.
    #[serde(default)]
    pub upstream: String,
    /// Base URL of the provider's API, e.g. `https://api.openai.com/v1`.
    #[serde(default)]
    pub base_url: Option<String>,
    /// Environment variable holding the provider key (read by the broker).
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// Price of a million input tokens, in micros.
    #[serde(default)]
    pub input_micros_per_million: i64,
    /// Price of a million output tokens, in micros.
    #[serde(default)]
    pub output_micros_per_million: i64,
    /// Tokens the model takes in at most, as the catalogue shows it.
    #[serde(default = "default_context")]
    pub context_window: u32,
    /// Tokens one model call may write at most.
    #[serde(default = "default_output_cap")]
    pub max_output_tokens: u32,
}

fn default_context() -> u32 {
    128_000
}

fn default_output_cap() -> u32 {
    4_096
}

impl Default for Config {
    fn default() -> Self {
        Config {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            data_dir: PathBuf::from("ephemeral-data"),
            database_url: None,
            node_id: None,
            min_isolation: Isolation::Wasm,
            isolation: None,
            workers: WorkersConfig::default(),
            runs: RunsConfig::default(),
            mcp: McpConfig::default(),
            orgs: OrgsConfig::default(),
            limits: LimitsConfig::default(),
            retention: RetentionConfig::default(),
            prices: PricesConfig::default(),
            default_model: "openai/gpt-6-luna".to_string(),
            models: BTreeMap::new(),
            connections: BTreeMap::new(),
            shutdown_grace_seconds: 30,
        }
    }
}

impl Default for RunsConfig {
    fn default() -> Self {
        RunsConfig {
            max_timeout_seconds: 900,
            default_timeout_seconds: 120,
            max_output_files: 100,
            max_output_bytes: 20 << 20,
        }
    }
}

impl Default for OrgsConfig {
    fn default() -> Self {
        OrgsConfig {
            initial_balance_micros: 10_000_000,
            per_run_cap_micros: 1_000_000,
        }
    }
}

impl Default for LimitsConfig {
    fn default() -> Self {
        LimitsConfig {
            runs_per_minute: 600,
            concurrent_runs: 50,
            connections: 10_000,
            connections_per_peer: 1_000,
            header_read_timeout_seconds: 10,
            body_read_timeout_seconds: 30,
            write_stall_seconds: 60,
        }
    }
}

impl Default for RetentionConfig {
    fn default() -> Self {
        RetentionConfig {
            days: 30,
            purge_interval_seconds: 3600,
        }
    }
}

impl Default for PricesConfig {
    fn default() -> Self {
        PricesConfig {
            compute_micros_per_second: 100,
            memory_micros_per_gib_second: 20,
            web_fetch_micros: 1_000,
        }
    }
}

impl Config {
    /// Reads `path`, or the defaults when `None`.
    pub fn load(path: Option<&Path>) -> Result<Config, ConfigError> {
        let Some(path) = path else {
            return Ok(Config::default());
        };
        let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        let config: Config = toml::from_str(&text).map_err(|e| ConfigError::Parse {
            path: path.to_path_buf(),
            message: e.message().to_string(),
        })?;
        config.validate()?;
        Ok(config)
    }

    /// Checks what the types cannot: timeouts, balances and prices in range,
    /// the default model in the catalogue.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |m: &str| Err(ConfigError::Invalid(m.to_string()));
        if self.runs.max_timeout_seconds == 0 {
            return bad("runs.max_timeout_seconds must be at least 1");
        }
        if self.runs.default_timeout_seconds == 0
            || self.runs.default_timeout_seconds > self.runs.max_timeout_seconds
        {
            return bad(
                "runs.default_timeout_seconds must be between 1 and runs.max_timeout_seconds",
            );
        }
        if self.orgs.initial_balance_micros < 0 || self.orgs.per_run_cap_micros < 1 {
            return bad("orgs: balances are >= 0 and the per-run cap >= 1");
        }
        if self.prices.compute_micros_per_second < 0
            || self.prices.memory_micros_per_gib_second < 0
            || self.prices.web_fetch_micros < 0
        {
            return bad("prices must not be negative");
        }
        if !self.catalogue().contains_key(&self.default_model) {
            return Err(ConfigError::Invalid(format!(
                "default_model {:?} is not in the model catalogue",
                self.default_model
            )));
        }
        Ok(())
    }

    /// The model catalogue: the built-in models plus the configured ones.
    pub fn catalogue(&self) -> BTreeMap<String, ModelConfig> {
        let mut models = builtin_models();
        models.extend(self.models.clone());
        models
    }

    /// The model behind an id, from the catalogue only.
    pub fn resolve_model(&self, id: &str) -> Option<ModelConfig> {
        self.catalogue().remove(id)
    }

    /// The SQLite file under `data_dir`.
    pub fn sqlite_path(&self) -> PathBuf {
        self.data_dir.join("ephemeral.sqlite3")
    }
}

/// Models every server knows without configuration.
fn builtin_models() -> BTreeMap<String, ModelConfig> {
    let openai = |upstream: &str, input: i64, output: i64| ModelConfig {
        provider: "openai".into(),
        upstream: upstream.into(),
        base_url: Some("https://api.openai.com/v1".into()),
        api_key_env: Some("OPENAI_API_KEY".into()),
        input_micros_per_million: input,
        output_micros_per_million: output,
        context_window: 400_000,
        max_output_tokens: 16_384,
    };
    let mut models = BTreeMap::new();
    models.insert(
        "openai/gpt-6-luna".into(),
        openai("gpt-6-luna", 50_000, 200_000),
    );
    models.insert(
        "openai/gpt-4o-mini".into(),
        openai("gpt-4o-mini", 150_000, 600_000),
    );
    models.insert(
        "scripted/seed".into(),
        ModelConfig {
            provider: "scripted".into(),
            upstream: "seed".into(),
            base_url: None,
            api_key_env: None,
            // Priced like the seed run's model, so its figures read alike.
            input_micros_per_million: 50_000,
            output_micros_per_million: 200_000,
            context_window: default_context(),
            max_output_tokens: default_output_cap(),
        },
    );
    models.insert(
        "ephemeral/script".into(),
        ModelConfig {
            provider: "script".into(),
            upstream: String::new(),
            base_url: None,
            api_key_env: None,
            input_micros_per_million: 0,
            output_micros_per_million: 0,
            context_window: default_context(),
            max_output_tokens: default_output_cap(),
        },
    );
    models
}
