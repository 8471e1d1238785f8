//! Which sandboxes this host gives, decided once at start: the strongest
//! it supports (or the one asked for), never below the operator's
//! minimum, and said in one line when refused.
//!
//! `kvm+wasm` when the KVM self-test passes on a hardware KVM and every
//! part of a microVM is here (`microvm.rs` makes its template); else
//! `jail+wasm` when workers can be jailed here; else `wasm`, in-process,
//! which is for development and never chosen silently.

use std::sync::Arc;

use ephemeral_runtime::{Runtime, RuntimeConfig};
use ephemeral_worker::{WorkerConfig, WorkerPool};

use super::in_process::InProcess;
use super::worker::{Pooled, jail_config, jail_config_for};
use super::{SandboxSource, Unavailable};
use crate::config::WorkersConfig;
use crate::isolation::Isolation;

/// What the operator asked for.
#[derive(Debug, Clone)]
pub struct Choice {
    /// This isolation and no other (`--isolation`), or the strongest here.
    pub wanted: Option<Isolation>,
    /// Refuse to serve below this (`--min-isolation`).
    pub minimum: Isolation,
    pub workers: WorkersConfig,
}

#[derive(Debug, thiserror::Error)]
pub enum ChooseError {
    #[error("isolation {} is not available here: {why}", .isolation.timeline_name())]
    Unavailable {
        isolation: Isolation,
        why: Unavailable,
    },
    #[error(
        "this host offers isolation {}, below the required minimum {}: {why}",
        .offered.timeline_name(),
        .required.timeline_name()
    )]
    BelowMinimum {
        offered: Isolation,
        required: Isolation,
        why: String,
    },
    #[error("cannot prepare the sandboxes: {0}")]
    Prepare(String),
}

/// The sandboxes for `choice` on this host. Blocking work (the KVM
/// self-test, compiling components, booting a template) runs off the
/// async threads.
pub async fn choose(
    choice: &Choice,
    runtime: &Arc<Runtime>,
) -> Result<Arc<dyn SandboxSource>, ChooseError> {
    let wanted = choice.wanted;
    let mut no_kvm: Option<Unavailable> = None;
    if matches!(wanted, None | Some(Isolation::Kvm)) {
        match microvms(choice, runtime).await? {
            Ok(pool) => return Ok(pool),
            Err(why) if wanted == Some(Isolation::Kvm) || choice.minimum == Isolation::Kvm => {
                let isolation = Isolation::Kvm;
                return Err(ChooseError::Unavailable { isolation, why });
            }
            Err(why) => {
                tracing::info!(why = %why, "no microVMs on this host");
                no_kvm = Some(why);
            }
        }
    }
    let source = match wanted {
        Some(Isolation::Wasm) => in_process(choice, runtime, "the configuration asks for it")?,
        _ => match jailed(choice, runtime).await? {
            Ok(pool) => pool,
            Err(why) if wanted == Some(Isolation::Jail) => {
                let isolation = Isolation::Jail;
                return Err(ChooseError::Unavailable { isolation, why });
            }
            Err(why) => in_process(choice, runtime, &why.to_string())?,
        },
    };
    if source.isolation() < choice.minimum {
        return Err(ChooseError::BelowMinimum {
            offered: source.isolation(),
            required: choice.minimum,
            why: no_kvm.map_or_else(crate::isolation::kvm_unavailable_reason, |w| w.to_string()),
        });
    }
    Ok(source)
}

/// Jailed workers without a runtime in this process, when the host can
/// jail them and the cache `config` names already holds every component:
/// a one-shot client (`ephemeral exec`) then spends nothing on an engine
/// of its own. `None`: use [`choose`].
pub async fn jailed_from_warm_cache(
    choice: &Choice,
    config: &RuntimeConfig,
) -> Option<Arc<dyn SandboxSource>> {
    let probe = config.clone();
    let cache_dir = tokio::task::spawn_blocking(move || Runtime::warm_cache_dir(&probe))
        .await
        .ok()?
        .ok()??;
    let programs_dir = config
        .programs_dir
        .clone()
        .unwrap_or_else(RuntimeConfig::default_programs_dir);
    let portable = config.portable_target.is_some();
    let workers = jail_config_for(
        cache_dir,
        programs_dir,
        portable,
        choice.workers.binary.clone(),
    )
    .ok()?;
    Some(pooled(choice, workers))
}

/// A pool of jailed VMMs serving microVMs, or why this host has none.
async fn microvms(
    choice: &Choice,
    runtime: &Arc<Runtime>,
) -> Result<Result<Arc<dyn SandboxSource>, Unavailable>, ChooseError> {
    let runtime = runtime.clone();
    let made = tokio::task::spawn_blocking(move || super::microvm::kvm_config(&runtime))
        .await
        .map_err(|e| ChooseError::Prepare(e.to_string()))?;
    Ok(made.map(|workers| pooled(choice, workers)))
}

/// A pool of jailed workers, or why this host cannot jail them.
async fn jailed(
    choice: &Choice,
    runtime: &Arc<Runtime>,
) -> Result<Result<Arc<dyn SandboxSource>, Unavailable>, ChooseError> {
    let mut workers = match jail_config(runtime, choice.workers.binary.clone()) {
        Ok(workers) => workers,
        Err(why) => return Ok(Err(why)),
    };
    workers.memory_overhead_bytes = choice.workers.memory_overhead_mib << 20;
    // Workers may not write the cache: every program is compiled into it
    // (and indexed) first.
    let warm = runtime.clone();
    tokio::task::spawn_blocking(move || warm.warm_cache())
        .await
        .map_err(|e| ChooseError::Prepare(e.to_string()))?
        .map_err(|e| ChooseError::Prepare(e.to_string()))?;
    Ok(Ok(pooled(choice, workers)))
}

fn pooled(choice: &Choice, mut workers: WorkerConfig) -> Arc<dyn SandboxSource> {
    workers.max_tasks = choice.workers.max_tasks;
    workers.cpu_millis = choice.workers.cpu_millis;
    workers.fork_server = choice.workers.fork_server;
    let pool = WorkerPool::start(workers, choice.workers.pool_size);
    Arc::new(Pooled { pool })
}

/// Sandboxes on the server's own threads, unless the minimum forbids it.
fn in_process(
    choice: &Choice,
    runtime: &Arc<Runtime>,
    why: &str,
) -> Result<Arc<dyn SandboxSource>, ChooseError> {
    if choice.minimum > Isolation::Wasm {
        return Err(ChooseError::BelowMinimum {
            offered: Isolation::Wasm,
            required: choice.minimum,
            why: why.to_string(),
        });
    }
    if choice.wanted.is_none() {
        tracing::warn!(why = %why, "no jailed workers on this host");
    }
    Ok(Arc::new(InProcess {
        runtime: runtime.clone(),
    }))
}
