//! A run from reservation to settlement: the path of API.md's timeline.
//!
//! `budget.reserved` → sandbox up (`vm.ready`, `worker.started`) → the
//! executor's work, raced against the deadline, a cancel and the budget →
//! sandbox down (`vm.destroyed`) → settle → outcome → `worker.destroyed`.
//! Usage is persisted every tick, so a crash loses at most a tick of it.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ephemeral_runtime::Limits;
use serde_json::json;
use tokio::sync::watch;
use tracing::Instrument;

use crate::agent::budget::Prices;
use crate::agent::scripted::Script;
use crate::agent::{AgentExecutor, ModelBackend};
use crate::executor::{
    Executor, Meter, Outcome, RunContext, RunEvents, RunSpec, ScriptExecutor, Unavailable,
};
use crate::run::{RunError, RunRecord, RunStatus, Usage};
use crate::sandbox_host::SandboxHandle;
use crate::server::Edge;
use crate::store::Finish;
use crate::timeline::{Event, LiveTimeline};
use crate::timestamp::now_ms;

/// How often usage is persisted and a cancel from another node is noticed.
const TICK: Duration = Duration::from_secs(1);
/// The run object's `isolation` when the run had no sandbox (shell off).
const NO_SANDBOX: &str = "none";

/// Why a run stopped, before it is written down.
enum Ended {
    Executor(Outcome),
    TimedOut,
    Cancelled,
    BudgetExceeded,
}

/// A run's first event, `budget.reserved`: the store writes it in the
/// transaction that creates the run, `spawn` hands it to live readers.
pub fn first_event(record: &RunRecord) -> Event {
    Event::new(
        1,
        "budget.reserved",
        record.created_at,
        json!({"reserved_micros": record.reserved_micros}),
    )
}

/// Starts a created run in the background; `first` is its first event,
/// already stored with the run.
pub fn spawn(
    edge: Arc<Edge>,
    record: RunRecord,
    spec: RunSpec,
    files: Vec<(String, Vec<u8>)>,
    first: Event,
) {
    let cancel = edge.register_run(&record.id);
    // Live before the response goes out, so a reader never misses the start.
    let live = edge.hub.open(&record.id);
    live.push(first);
    // Every log line of the run carries its id.
    let span = tracing::info_span!("run", run_id = %record.id);
    let task = async move {
        let id = record.id.clone();
        drive(&edge, record, spec, files, cancel, live).await;
        edge.forget_run(&id);
    };
    tokio::spawn(task.instrument(span));
}

async fn drive(
    edge: &Arc<Edge>,
    record: RunRecord,
    spec: RunSpec,
    files: Vec<(String, Vec<u8>)>,
    cancel: watch::Receiver<bool>,
    live: Arc<LiveTimeline>,
) {
    let started = Instant::now();
    let zdr = record.permissions.zero_data_retention;
    // `budget.reserved` (seq 1) was stored with the run.
    let events = RunEvents::new(
        &record.id,
        record.created_at,
        zdr,
        edge.store.clone(),
        live,
        2,
        edge.broker.scrubber(),
    );
    edge.metrics.stage("reserve", started.elapsed());

    let deadline = started + Duration::from_secs(record.permissions.timeout_seconds);
    let meter = Meter::new(record.reserved_micros, Usage::default(), Default::default());
    let limits = Limits {
        sandbox_timeout: Duration::from_secs(record.permissions.timeout_seconds),
        ..Limits::default()
    };
    // No shell, no sandbox: nothing can run a command, and nothing is
    // billed for a sandbox the run never had.
    let sandbox = if record.permissions.shell {
        match edge.sandboxes.start(limits, files).await {
            Ok(sandbox) => Some(sandbox),
            Err(e) => {
                let error = RunError::new("sandbox_failed", e.to_string());
                let ended = Ended::Executor(Outcome::Failed(error));
                return finish(edge, &record, &events, &meter, ended, None).await;
            }
        }
    } else {
        None
    };
    let isolation = match sandbox {
        Some(_) => edge.isolation.timeline_name(),
        None => NO_SANDBOX,
    };
    if let Err(e) = edge.store.start_run(&record.id, isolation, now_ms()).await {
        tracing::error!(run_id = %record.id, error = %e, "cannot mark the run started");
    }
    if sandbox.is_some() {
        let ready_ms = started.elapsed().as_millis() as u64;
        events
            .emit(
                "vm.ready",
                json!({"isolation": isolation, "ready_ms": ready_ms}),
            )
            .await;
        edge.metrics.stage("vm_ready", started.elapsed());
    }
    let p = &record.permissions;
    events
        .emit(
            "worker.started",
            json!({"shell": p.shell, "web": p.web, "connections": p.connections, "files": p.files}),
        )
        .await;

    let vm_started = Instant::now();
    let sandbox_failed = sandbox.as_ref().map(SandboxHandle::failure);
    let sandbox_failed = async move {
        match sandbox_failed {
            Some(failure) => failure.await,
            None => std::future::pending().await,
        }
    };
    let with_sandbox = sandbox.is_some();
    let mut ctx = RunContext {
        spec,
        events: events.clone(),
        meter: meter.clone(),
        sandbox,
        deadline,
    };
    let ended = {
        let executor = executor_for(edge, &ctx.spec).await;
        let work = executor.execute(&ctx);
        tokio::select! {
            outcome = work => Ended::Executor(outcome),
            _ = tokio::time::sleep_until(deadline.into()) => Ended::TimedOut,
            _ = wait_true(cancel) => Ended::Cancelled,
            _ = wait_true(meter.exceeded()) => Ended::BudgetExceeded,
            failure = sandbox_failed => Ended::Executor(Outcome::Failed(RunError::new(
                "sandbox_failed",
                format!("{}: {}", failure.cause, failure.message),
            ))),
            ended = tick(edge, &record.id, &meter, with_sandbox.then_some(vm_started)) => ended,
        }
    };
    // A jailed worker is killed and reaped now; an in-process command
    // still running finishes within its own limit on its thread.
    if let Some(sandbox) = ctx.sandbox.take() {
        if sandbox.worker_pid().is_some() {
            sandbox.destroy().await;
        } else {
            tokio::spawn(sandbox.destroy());
        }
        let lifetime = vm_started.elapsed();
        meter.set_compute(compute_micros(edge, lifetime));
        events
            .emit(
                "vm.destroyed",
                json!({"lifetime_ms": lifetime.as_millis() as u64}),
            )
            .await;
    }
    finish(edge, &record, &events, &meter, ended, Some(started)).await;
}

async fn executor_for(edge: &Edge, spec: &RunSpec) -> Box<dyn Executor> {
    let model = &spec.model;
    let prices = Prices {
        input_micros_per_million: model.input_micros_per_million,
        output_micros_per_million: model.output_micros_per_million,
    };
    let backend = match model.provider.as_str() {
        "script" => return Box::new(ScriptExecutor),
        "scripted" => match Script::for_upstream(&model.upstream).await {
            Ok(script) => ModelBackend::Scripted(script),
            Err(e) => {
                // The reason names a file of the server: the log has it,
                // the run only says that the script is not readable.
                tracing::error!(model = %spec.model_id, error = %e, "cannot load a scripted model");
                return Box::new(Unavailable(format!(
                    "model {} is not available: its script cannot be read (the server's log says why)",
                    spec.model_id
                )));
            }
        },
        "openai" => {
            let is_default = spec.model_id == edge.config.default_model;
            match edge.broker.provider(&spec.model_id, model, is_default) {
                Ok(client) => ModelBackend::OpenAi(client),
                Err(e) => return Box::new(Unavailable(e)),
            }
        }
        other => return Box::new(Unavailable(format!("unknown provider {other:?}"))),
    };
    Box::new(AgentExecutor {
        backend,
        broker: edge.broker.clone(),
        prices,
        max_output_tokens: model.max_output_tokens,
        connections: spec
            .permissions
            .connections
            .iter()
            .filter_map(|name| Some((name.clone(), edge.config.connections.get(name)?.clone())))
            .collect(),
    })
}

/// Settles the run and writes its last two events.
async fn finish(
    edge: &Arc<Edge>,
    record: &RunRecord,
    events: &RunEvents,
    meter: &Meter,
    ended: Ended,
    started: Option<Instant>,
) {
    let timeout = record.permissions.timeout_seconds;
    let (status, output, error) = match ended {
        Ended::Executor(Outcome::Succeeded { output }) => {
            (RunStatus::Succeeded, Some(output), None)
        }
        Ended::Executor(Outcome::Failed(error)) => (RunStatus::Failed, None, Some(error)),
        Ended::Executor(Outcome::BudgetExceeded(message)) => (
            RunStatus::BudgetExceeded,
            None,
            Some(RunError::new("budget_exceeded", message)),
        ),
        Ended::TimedOut => (
            RunStatus::TimedOut,
            None,
            Some(RunError::new(
                "timeout",
                format!("the run reached its timeout of {timeout} s"),
            )),
        ),
        Ended::Cancelled => (
            RunStatus::Cancelled,
            None,
            Some(RunError::new("cancelled", "the run was cancelled")),
        ),
        Ended::BudgetExceeded => (
            RunStatus::BudgetExceeded,
            None,
            Some(RunError::new(
                "budget_exceeded",
                format!(
                    "the run used its whole budget of {} micros",
                    record.reserved_micros
                ),
            )),
        ),
    };
    // What is stored and shown never carries a secret the broker attached
    // (a provider that echoes its key in an error or an answer).
    let scrubber = edge.broker.scrubber();
    let output = output.map(|o| scrubber.scrub(&o));
    let (output, output_cut) = match output {
        Some(o) => {
            let (o, cut) = capped_output(o);
            (Some(o), cut)
        }
        None => (None, false),
    };
    let error = error.map(|e| RunError::new(&e.code, scrubber.scrub(&e.message)));
    let (usage, metered) = meter.snapshot();
    let zdr = record.permissions.zero_data_retention;
    let finish = Finish {
        status,
        output: if zdr { None } else { output.clone() },
        error: error.clone(),
        ended_at: now_ms(),
        usage,
        metered,
    };
    let settlement = match edge.store.finish_run(&record.id, &finish).await {
        Ok(Some(s)) => s,
        Ok(None) => {
            tracing::warn!(run_id = %record.id, "run was already settled");
            return;
        }
        Err(e) => {
            // Left in flight: the next start (or another node) settles it.
            tracing::error!(run_id = %record.id, error = %e, "cannot settle the run");
            return;
        }
    };
    let mut outcome = outcome_event(&usage, output.as_deref(), error.as_ref());
    if output_cut {
        outcome["output_truncated"] = json!(MAX_RUN_OUTPUT_BYTES);
    }
    events.emit(status.event_type(), outcome).await;
    events
        .emit("worker.destroyed", destroyed_event(&settlement))
        .await;
    if let Some(started) = started {
        edge.metrics.run_ended(status, started.elapsed());
    }
    tracing::info!(run_id = %record.id, status = status.as_str(), charged = settlement.charged, "run ended");
}

/// The most a run's output (its final answer) keeps: the `script` model
/// answers with everything its commands printed, and a run may make any
/// number of commands (finding G3). Past it the output is cut, and the
/// outcome event says `output_truncated` with this figure.
pub const MAX_RUN_OUTPUT_BYTES: usize = 1 << 20;

/// `output` cut to `MAX_RUN_OUTPUT_BYTES` at a character boundary, and
/// whether it was.
fn capped_output(mut output: String) -> (String, bool) {
    if output.len() <= MAX_RUN_OUTPUT_BYTES {
        return (output, false);
    }
    output.truncate(output.floor_char_boundary(MAX_RUN_OUTPUT_BYTES));
    (output, true)
}

/// The data of a run's outcome event (`run.succeeded`, `run.failed`, …):
/// its model calls and tokens, and its error or else its output.
pub fn outcome_event(
    usage: &Usage,
    output: Option<&str>,
    error: Option<&RunError>,
) -> serde_json::Value {
    let mut outcome = json!({
        "model_calls": usage.model_calls,
        "total_tokens": usage.input_tokens + usage.output_tokens,
    });
    match (output, error) {
        (_, Some(error)) => outcome["error"] = json!(error),
        (Some(output), None) => outcome["output"] = json!(output),
        _ => {}
    }
    outcome
}

pub fn destroyed_event(s: &crate::ledger::Settlement) -> serde_json::Value {
    json!({
        "charged_micros": s.charged,
        "released_micros": s.released,
        "cost": {"model": s.model, "web": s.web, "compute": s.compute},
    })
}

/// Every tick: compute metered (from the sandbox's start, when there is
/// one) and persisted, cancels from elsewhere seen.
async fn tick(edge: &Arc<Edge>, run_id: &str, meter: &Meter, since: Option<Instant>) -> Ended {
    let mut interval = tokio::time::interval(TICK);
    interval.tick().await;
    loop {
        interval.tick().await;
        if let Some(since) = since {
            meter.set_compute(compute_micros(edge, since.elapsed()));
        }
        let (usage, metered) = meter.snapshot();
        if let Err(e) = edge.store.record_usage(run_id, &usage, &metered).await {
            tracing::warn!(run_id, error = %e, "cannot persist usage");
        }
        if edge.store.cancel_requested(run_id).await.unwrap_or(false) {
            return Ended::Cancelled;
        }
    }
}

/// vCPU-seconds and GiB-seconds of the sandbox's lifetime, at the
/// configured prices, rounded up to the micro.
fn compute_micros(edge: &Edge, lifetime: Duration) -> i64 {
    let ms = i128::try_from(lifetime.as_millis()).unwrap_or(i128::MAX / 4);
    let prices = &edge.config.prices;
    let memory_mib = i128::try_from(Limits::default().memory_bytes >> 20).unwrap_or(0);
    // Micros per second in 1/1024ths: one vCPU and the memory cap.
    let per_second_1024 = i128::from(prices.compute_micros_per_second) * 1024
        + i128::from(prices.memory_micros_per_gib_second) * memory_mib;
    let micros = (ms.saturating_mul(per_second_1024) + 1_024_000 - 1) / 1_024_000;
    i64::try_from(micros).unwrap_or(i64::MAX)
}

async fn wait_true(mut rx: watch::Receiver<bool>) {
    if rx.wait_for(|v| *v).await.is_err() {
        std::future::pending::<()>().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_over_the_cap_is_cut_at_a_character() {
        let (short, cut) = capped_output("ok".into());
        assert_eq!((short.as_str(), cut), ("ok", false));
        let long = "é".repeat(MAX_RUN_OUTPUT_BYTES);
        let (kept, cut) = capped_output(long);
        assert!(cut);
        assert!(kept.len() <= MAX_RUN_OUTPUT_BYTES && kept.len() > MAX_RUN_OUTPUT_BYTES - 2);
    }
}
