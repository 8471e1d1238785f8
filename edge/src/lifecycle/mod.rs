//! A run from admission to settlement: the path of API.md's timeline.
//!
//! [`admit`] (after [`within_rate`], and the API's refusal of a draining
//! node): the run's record, model and idempotency claim, then one store
//! transaction that checks the claim and the organisation's runs in
//! flight, reserves the budget, creates the run and stores its first event
//! (`budget.reserved`) — and the run starts in the background.
//!
//! Then: sandbox up (`vm.ready`, `worker.started`) → the executor's work,
//! raced against the deadline, a cancel and the budget → sandbox down
//! (`vm.destroyed`) → settle → outcome → `worker.destroyed`. Usage is
//! persisted every tick, so a crash loses at most a tick of it. A run
//! whose shell is off has no sandbox at all: nothing can run a command.
//!
//! `sandbox.rs` admits the sandboxes callers drive themselves.

pub mod sandbox;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ephemeral_runtime::Limits;
use serde_json::{Map, Value, json};
use tokio::sync::watch;
use tracing::Instrument;

use crate::agent::budget::Prices;
use crate::agent::{AgentExecutor, ModelBackend};
use crate::executor::{Executor, Meter, Outcome, RunContext, RunSpec, ScriptExecutor, Unavailable};
use crate::ids::new_run_id;
use crate::models::{self, Provider};
use crate::outputs;
use crate::retention::{IDEMPOTENCY_TTL, expires_at};
use crate::run::{Permissions, RunError, RunRecord, RunRequest, RunStatus, Usage};
use crate::sandbox::Sandbox;
use crate::state::Edge;
use crate::store::{Created, Finish, IdempotencyClaim, NewRun, Org, StoreError};
use crate::timeline::{
    Event, EventKind, LiveTimeline, RunEvents, Timeline, destroyed_data, outcome_data,
};
use crate::timestamp::now_ms;

/// How often usage is persisted and a cancel from another node is noticed.
const TICK: Duration = Duration::from_secs(1);
/// The run object's `isolation` when the run had no sandbox (shell off).
const NO_SANDBOX: &str = "none";
/// The most a run's output (its final answer) keeps: the `script` model
/// answers with everything its commands printed, and a run may make any
/// number of commands (finding G3). Past it the output is cut, and the
/// outcome event says `output_truncated` with this figure.
pub const MAX_RUN_OUTPUT_BYTES: usize = 1 << 20;

/// Why a run was not taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// This node is stopping.
    Draining,
    /// The organisation is over its rate; a token is free after this long.
    RateLimited {
        /// The organisation's rate (`limits.runs_per_minute`).
        per_minute: u32,
        /// Until the next token.
        wait: Duration,
    },
    /// The `Idempotency-Key` was used with another request.
    KeyReused,
    /// The organisation's free balance is below the run's budget.
    InsufficientFunds {
        /// The run's budget (`max_cost_micros`).
        asked: i64,
        /// The balance less what its runs in flight hold.
        available: i64,
    },
    /// The organisation has as many runs in flight as it may.
    TooManyInFlight {
        /// Its limit (`limits.concurrent_runs`).
        limit: u32,
    },
}

/// What admission gave.
#[derive(Debug)]
pub enum Admission {
    /// A new run, started.
    Admitted(Box<RunRecord>),
    /// The key was used before with the same request: that run's response.
    Replayed {
        /// The run the key created.
        run_id: String,
        /// The response given then (the run object at creation).
        response: String,
    },
    /// Not taken, and why.
    Refused(Refusal),
}

/// A request as admission takes it: the organisation's, checked, with its
/// body's fingerprint (for the idempotency claim).
pub struct Asked<'a> {
    /// The organisation asking.
    pub org: &'a Org,
    /// The request, checked.
    pub request: RunRequest,
    /// The request body as parsed: what an `Idempotency-Key` is bound to.
    pub body: &'a Map<String, Value>,
    /// The `Idempotency-Key` header, if sent.
    pub idempotency_key: Option<String>,
}

/// Whether `org` is within its rate of runs on this node (one is taken):
/// asked before a request's body is read.
pub fn within_rate(edge: &Edge, org: &Org) -> Result<(), Refusal> {
    let per_minute = edge.config.limits.runs_per_minute;
    edge.rate
        .take(&org.id)
        .map_err(|wait| Refusal::RateLimited { per_minute, wait })
}

/// Takes a run: its record and reservation in one transaction, then its
/// start in the background.
pub async fn admit(edge: &Arc<Edge>, asked: Asked<'_>) -> Result<Admission, StoreError> {
    let Asked {
        org,
        request,
        body,
        idempotency_key,
    } = asked;
    let zdr = request.zero_data_retention || org.zero_data_retention;
    let record = new_record(edge, org, &request, zdr);
    let claim =
        idempotency_key.map(|key| idempotency_claim(key, body, record.to_json().to_string()));
    let first = Event::new(
        1,
        EventKind::BudgetReserved,
        record.created_at,
        json!({"reserved_micros": record.reserved_micros}),
    );
    let new = NewRun {
        record: record.clone(),
        idempotency: claim,
        max_in_flight: i64::from(edge.config.limits.concurrent_runs),
        first_event: Some(first.to_stored()),
        // Kept for "the exact request" and "Open in playground"; never
        // under zero data retention.
        request: (!zdr).then(|| Value::Object(body.clone()).to_string()),
    };
    let model = match models::resolve(&edge.config, &request.model).await {
        Ok(model) => model,
        Err(e) => models::Model::unavailable(&request.model, e),
    };
    let admission = match edge.store.create_run(&new).await? {
        Created::Created => {
            tracing::info!(run_id = %record.id, org = %org.id, "run created");
            let spec = RunSpec {
                run_id: record.id.clone(),
                prompt: request.prompt,
                model_id: model.id.clone(),
                model: model.config.clone(),
                permissions: record.permissions.clone(),
            };
            let executor = executor_for(edge, &model, &spec);
            spawn(
                edge.clone(),
                record.clone(),
                (spec, executor),
                request.files,
                first,
            );
            Admission::Admitted(Box::new(record))
        }
        Created::Replayed { run_id, response } => Admission::Replayed { run_id, response },
        Created::KeyReused => Admission::Refused(Refusal::KeyReused),
        Created::InsufficientFunds { available } => {
            Admission::Refused(Refusal::InsufficientFunds {
                asked: request.max_cost_micros,
                available,
            })
        }
        Created::TooManyInFlight => Admission::Refused(Refusal::TooManyInFlight {
            limit: edge.config.limits.concurrent_runs,
        }),
    };
    Ok(admission)
}

/// An `Idempotency-Key` bound to `body`, replayed with `response`.
pub(crate) fn idempotency_claim(
    key: String,
    body: &Map<String, Value>,
    response: String,
) -> IdempotencyClaim {
    IdempotencyClaim {
        key,
        fingerprint: blake3::hash(Value::Object(body.clone()).to_string().as_bytes())
            .to_hex()
            .to_string(),
        response,
        not_before: now_ms() - IDEMPOTENCY_TTL.as_millis() as i64,
    }
}

fn new_record(edge: &Edge, org: &Org, request: &RunRequest, zdr: bool) -> RunRecord {
    let created_at = now_ms();
    RunRecord {
        id: new_run_id(),
        org_id: org.id.clone(),
        status: RunStatus::Queued,
        created_at,
        started_at: None,
        ended_at: None,
        expires_at: expires_at(created_at, edge.config.retention.days),
        model: request.model.clone(),
        isolation: None,
        permissions: Permissions {
            shell: request.shell,
            web: request.web,
            connections: request.connections.clone(),
            files: request.files.iter().map(|(p, _)| p.clone()).collect(),
            timeout_seconds: request.timeout_seconds,
            max_cost_micros: request.max_cost_micros,
            zero_data_retention: zdr,
            idle_timeout_seconds: None,
            outputs: request.outputs.clone(),
        },
        usage: Usage::default(),
        reserved_micros: request.max_cost_micros,
        metered: Default::default(),
        settlement: None,
        output: None,
        error: None,
        metadata: request.metadata.clone(),
        prompt: (!zdr).then(|| request.prompt.clone()),
        node_id: edge.node_id.clone(),
    }
}

/// Why a run stopped, before it is written down.
enum Ended {
    Executor(Outcome),
    /// The sandbox failed under the run (nothing can be read from it).
    SandboxFailed(RunError),
    TimedOut,
    Cancelled,
    BudgetExceeded,
}

/// Starts a created run in the background; `first` is its first event,
/// already stored with the run.
fn spawn(
    edge: Arc<Edge>,
    record: RunRecord,
    work: (RunSpec, Box<dyn Executor>),
    files: Vec<(String, Vec<u8>)>,
    first: Event,
) {
    let cancel = edge.in_flight.register(&record.id);
    edge.metrics.run_started();
    // Live before the response goes out, so a reader never misses the start.
    let live = edge.hub.open(&record.id);
    live.push(first);
    // Every log line of the run carries its id.
    let span = tracing::info_span!("run", run_id = %record.id);
    let task = async move {
        let id = record.id.clone();
        drive(&edge, record, work, files, cancel, live).await;
        edge.hub.close(&id);
        edge.in_flight.forget(&id);
        edge.metrics.run_forgotten();
    };
    tokio::spawn(task.instrument(span));
}

async fn drive(
    edge: &Arc<Edge>,
    record: RunRecord,
    (spec, executor): (RunSpec, Box<dyn Executor>),
    files: Vec<(String, Vec<u8>)>,
    cancel: watch::Receiver<bool>,
    live: Arc<LiveTimeline>,
) {
    let started = Instant::now();
    let zdr = record.permissions.zero_data_retention;
    // `budget.reserved` (seq 1) was stored with the run.
    let timeline = Timeline {
        run_id: &record.id,
        created_at: record.created_at,
        zero_data_retention: zdr,
        next_seq: 2,
    };
    let events = RunEvents::new(timeline, edge.store.clone(), live, edge.broker.scrubber());
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
        Some(_) => edge.isolation().timeline_name(),
        None => NO_SANDBOX,
    };
    if let Err(e) = edge.store.start_run(&record.id, isolation, now_ms()).await {
        tracing::error!(run_id = %record.id, error = %e, "cannot mark the run started");
    }
    if sandbox.is_some() {
        let ready_ms = started.elapsed().as_millis() as u64;
        let ready = json!({"isolation": isolation, "ready_ms": ready_ms});
        events.emit(EventKind::VmReady, ready).await;
        edge.metrics.stage("vm_ready", started.elapsed());
    }
    let p = &record.permissions;
    let worker =
        json!({"shell": p.shell, "web": p.web, "connections": p.connections, "files": p.files});
    events.emit(EventKind::WorkerStarted, worker).await;

    let vm_started = Instant::now();
    let sandbox_failed = sandbox.as_ref().map(|s| s.failure());
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
        let work = executor.execute(&ctx);
        // A sandbox that failed under a command also cuts that command
        // short, and the executor may finish on it: the failure is known
        // first (the worker's driver says it before the command hears of
        // it) and is looked at first, so the run ends `sandbox_failed`.
        tokio::select! {
            biased;
            failure = sandbox_failed => Ended::SandboxFailed(RunError::new(
                "sandbox_failed",
                format!("{}: {}", failure.cause, failure.message),
            )),
            outcome = work => Ended::Executor(outcome),
            _ = tokio::time::sleep_until(deadline.into()) => Ended::TimedOut,
            _ = wait_true(cancel) => Ended::Cancelled,
            _ = wait_true(meter.exceeded()) => Ended::BudgetExceeded,
            ended = tick(edge, &record.id, &meter, with_sandbox.then_some(vm_started)) => ended,
        }
    };
    if let Some(sandbox) = ctx.sandbox.take() {
        let within = match ended {
            Ended::SandboxFailed(_) => None,
            Ended::Executor(_) => Some(COLLECT_TIMEOUT),
            // A command may still be running, and the run is over: what
            // can be read at once is collected.
            _ => Some(COLLECT_AFTER_CUT_TIMEOUT),
        };
        if let Some(within) = within.filter(|_| !record.permissions.outputs.is_empty()) {
            collect_outputs(edge, &record, &*sandbox, &events, within).await;
        }
        destroy(edge, sandbox, vm_started, &meter, &events).await;
    }
    finish(edge, &record, &events, &meter, ended, Some(started)).await;
}

/// How long collecting a run's outputs may take: a sandbox that does not
/// answer must not keep the run from ending.
const COLLECT_TIMEOUT: Duration = Duration::from_secs(60);
/// The same, for a run cut short (timeout, cancel, budget).
const COLLECT_AFTER_CUT_TIMEOUT: Duration = Duration::from_secs(5);

/// Reads the run's `outputs` out of its sandbox (`outputs.rs`).
async fn collect_outputs(
    edge: &Edge,
    record: &RunRecord,
    sandbox: &dyn Sandbox,
    events: &RunEvents,
    within: Duration,
) {
    let what = outputs::Collect {
        run_id: &record.id,
        patterns: &record.permissions.outputs,
        max_files: edge.config.runs.max_output_files,
        max_bytes: edge.config.runs.max_output_bytes,
        zero_data_retention: record.permissions.zero_data_retention,
    };
    let collecting = outputs::collect(sandbox, edge.store.as_ref(), events, what);
    if tokio::time::timeout(within, collecting).await.is_err() {
        tracing::warn!(run_id = %record.id, "collecting the run's outputs timed out");
    }
}

/// Destroys the run's sandbox, bills its lifetime, says so on the timeline.
async fn destroy(
    edge: &Edge,
    sandbox: Box<dyn Sandbox>,
    since: Instant,
    meter: &Meter,
    events: &RunEvents,
) {
    sandbox.destroy().await;
    let lifetime = since.elapsed();
    meter.set_compute(compute_micros(edge, lifetime));
    let destroyed = json!({"lifetime_ms": lifetime.as_millis() as u64});
    events.emit(EventKind::VmDestroyed, destroyed).await;
}

/// The executor of a run's model.
fn executor_for(edge: &Edge, model: &models::Model, spec: &RunSpec) -> Box<dyn Executor> {
    let backend = match &model.provider {
        Provider::Script => return Box::new(ScriptExecutor),
        Provider::Unavailable(why) => return Box::new(Unavailable(why.clone())),
        Provider::Scripted(script) => ModelBackend::Scripted(script.clone()),
        Provider::OpenAi => {
            let is_default = model.id == edge.config.default_model;
            match edge.broker.provider(&model.id, &model.config, is_default) {
                Ok(access) => ModelBackend::OpenAi(crate::agent::openai::OpenAiClient::new(access)),
                Err(e) => return Box::new(Unavailable(e)),
            }
        }
    };
    let config = &model.config;
    Box::new(AgentExecutor {
        backend,
        broker: edge.broker.clone(),
        prices: Prices {
            input_micros_per_million: config.input_micros_per_million,
            output_micros_per_million: config.output_micros_per_million,
        },
        max_output_tokens: config.max_output_tokens,
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
    let (status, output, error) = outcome_of(ended, record);
    // What is stored and shown never carries a secret the broker attached
    // (a provider that echoes its key in an error or an answer).
    let scrubber = edge.broker.scrubber();
    let (output, output_cut) = match output.map(|o| capped_output(scrubber.scrub(&o))) {
        Some((o, cut)) => (Some(o), cut),
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
    let mut outcome = outcome_data(&usage, output.as_deref(), error.as_ref());
    if output_cut {
        outcome["output_truncated"] = json!(MAX_RUN_OUTPUT_BYTES);
    }
    events.emit(EventKind::ending(status), outcome).await;
    let destroyed = destroyed_data(&settlement);
    events.emit(EventKind::WorkerDestroyed, destroyed).await;
    if let Some(started) = started {
        edge.metrics.run_ended(status, started.elapsed());
    }
    tracing::info!(run_id = %record.id, status = status.as_str(), charged = settlement.charged, "run ended");
}

/// The status, output and error a way of ending gives.
fn outcome_of(ended: Ended, record: &RunRecord) -> (RunStatus, Option<String>, Option<RunError>) {
    let timeout = record.permissions.timeout_seconds;
    match ended {
        Ended::Executor(Outcome::Succeeded { output }) => {
            (RunStatus::Succeeded, Some(output), None)
        }
        Ended::Executor(Outcome::Failed(error)) | Ended::SandboxFailed(error) => {
            (RunStatus::Failed, None, Some(error))
        }
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
    }
}

/// `output` cut to `MAX_RUN_OUTPUT_BYTES` at a character boundary, and
/// whether it was.
fn capped_output(mut output: String) -> (String, bool) {
    if output.len() <= MAX_RUN_OUTPUT_BYTES {
        return (output, false);
    }
    output.truncate(output.floor_char_boundary(MAX_RUN_OUTPUT_BYTES));
    (output, true)
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

fn compute_micros(edge: &Edge, lifetime: Duration) -> i64 {
    crate::pricing::compute_micros(&edge.config.prices, lifetime)
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
