//! One sandbox its caller drives, from start to settlement.
//!
//! Its state is a `watch`: starting, ready (with the sandbox), ending,
//! ended. Every command and file operation takes the session's turn (a
//! fair mutex: one at a time, in the order they arrived) and marks the
//! session active, which holds off the idle timeout. A supervisor task
//! waits for the first ending — a `DELETE`, the lifetime, the budget, the
//! idle timeout, the sandbox failing, the node stopping — and ends it:
//! the sandbox destroyed, compute billed to the millisecond, the record
//! settled, then `sandbox.ended` and `worker.destroyed`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use ephemeral_runtime::Limits;
use serde_json::json;
use tokio::sync::watch;
use tracing::Instrument;

use crate::executor::{Meter, OutputTap, Runs, ShellResult, run_command};
use crate::pricing::{budget_lasts, compute_micros};
use crate::run::{RunError, RunRecord, RunStatus, Usage};
use crate::sandbox::{Command, Sandbox};
use crate::store::Finish;
use crate::timeline::{Event, EventKind, RunEvents, Timeline, destroyed_data};

use super::Node;
use crate::timestamp::now_ms;

/// How often compute is persisted: a crash loses at most this much of it.
const TICK: Duration = Duration::from_secs(1);
/// How long a command running when the lifetime or budget runs out gets
/// to report its own end (its timeout was cut to the same moment) before
/// the sandbox is destroyed under it.
const LAST_COMMAND_GRACE: Duration = Duration::from_millis(500);

/// Why a sandbox ended (API.md: `end_reason`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// Deleted by its caller.
    Deleted,
    /// Its lifetime (`timeout_seconds`) ran out.
    Timeout,
    /// No request came for `idle_timeout_seconds`.
    IdleTimeout,
    /// One more tick of compute would have crossed its budget.
    BudgetExceeded,
    /// The sandbox failed, or could not start.
    Failed,
}

impl EndReason {
    /// The API's `end_reason`.
    pub fn name(self) -> &'static str {
        match self {
            EndReason::Deleted => "deleted",
            EndReason::Timeout => "timeout",
            EndReason::IdleTimeout => "idle_timeout",
            EndReason::BudgetExceeded => "budget_exceeded",
            EndReason::Failed => "failed",
        }
    }

    /// The record's status: what a run ending the same way would show.
    fn status(self) -> RunStatus {
        match self {
            EndReason::Deleted => RunStatus::Cancelled,
            EndReason::Timeout | EndReason::IdleTimeout => RunStatus::TimedOut,
            EndReason::BudgetExceeded => RunStatus::BudgetExceeded,
            EndReason::Failed => RunStatus::Failed,
        }
    }
}

/// Why an operation on a session did not happen.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The sandbox has ended, and why.
    #[error("the sandbox has ended ({})", .0.name())]
    Ended(EndReason),
    /// Not a path a user of the sandbox may name.
    #[error("{0}")]
    BadPath(String),
    /// Nothing at the path.
    #[error("no such file: {0}")]
    NotFound(String),
    /// A folder where a file was wanted.
    #[error("{0} is a folder")]
    IsFolder(String),
    /// Something else where a folder was wanted.
    #[error("{0} is not a folder")]
    NotFolder(String),
    /// The sandbox's user may not.
    #[error("permission denied: {0}")]
    Denied(String),
    /// The file would not fit in the sandbox's disk quota.
    #[error("over the sandbox's disk quota of {limit} bytes")]
    Quota {
        /// The quota, in bytes.
        limit: u64,
    },
    /// The caller's body broke off or stalled.
    #[error("{0}")]
    Body(String),
    /// The sandbox failed under the operation.
    #[error("the sandbox failed: {0}")]
    Sandbox(String),
}

/// One command as the API takes it.
#[derive(Debug, Clone, Default)]
pub struct CommandRequest {
    /// The command line, run as `sh -c`.
    pub command: String,
    /// Its wall-time limit; `None`: the sandbox's command timeout.
    pub timeout: Option<Duration>,
    /// All of its standard input.
    pub stdin: Vec<u8>,
    /// Variables added for this command only.
    pub env: Vec<(String, String)>,
}

enum State {
    Starting,
    Ready(Arc<dyn Sandbox>),
    /// No new operation starts; the sandbox is being destroyed.
    Ending(EndReason),
    Ended(EndReason),
}

/// A sandbox its caller drives.
pub struct Session {
    /// `sbx_…`.
    pub id: String,
    /// The organisation it belongs to.
    pub org_id: String,
    pub(super) node: Arc<dyn Node>,
    record: RunRecord,
    pub(super) events: RunEvents,
    meter: Meter,
    pub(super) limits: Limits,
    state: watch::Sender<State>,
    /// One operation at a time, in arrival order (tokio's mutex is fair).
    pub(super) turn: tokio::sync::Mutex<()>,
    activity: Mutex<Activity>,
    /// The first ending asked for from outside (a `DELETE`).
    end_asked: watch::Sender<Option<EndReason>>,
    /// Made when the record was; the lifetime counts from here.
    created: Instant,
    /// When the sandbox came up; compute counts from here.
    ready_at: OnceLock<Instant>,
    commands: AtomicU64,
}

/// Operations in progress and when the last one ended.
struct Activity {
    busy: usize,
    last: Instant,
}

/// Held while an operation is in progress: the session is not idle.
pub(super) struct Active<'a>(&'a Session);

impl Drop for Active<'_> {
    fn drop(&mut self) {
        let mut activity = self.0.activity();
        activity.busy -= 1;
        activity.last = Instant::now();
    }
}

impl Session {
    /// A session for a record just created; `first` is its stored first
    /// event (`budget.reserved`).
    pub(crate) fn open(node: Arc<dyn Node>, record: RunRecord, first: Event) -> Arc<Session> {
        let live = node.hub().open(&record.id);
        live.push(first);
        let timeline = Timeline {
            run_id: &record.id,
            created_at: record.created_at,
            zero_data_retention: record.permissions.zero_data_retention,
            next_seq: 2,
        };
        let events = RunEvents::new(timeline, node.store().clone(), live, node.scrubber());
        let lifetime = Duration::from_secs(record.permissions.timeout_seconds);
        let limits = Limits {
            // The worker's own bound, a little past ours: the session
            // ends the sandbox itself, on time.
            sandbox_timeout: lifetime + Duration::from_secs(5),
            ..Limits::default()
        };
        let now = Instant::now();
        Arc::new(Session {
            id: record.id.clone(),
            org_id: record.org_id.clone(),
            meter: Meter::new(record.reserved_micros, Usage::default(), Default::default()),
            events,
            limits,
            state: watch::channel(State::Starting).0,
            turn: tokio::sync::Mutex::new(()),
            activity: Mutex::new(Activity { busy: 0, last: now }),
            end_asked: watch::channel(None).0,
            created: now,
            ready_at: OnceLock::new(),
            commands: AtomicU64::new(0),
            record,
            node,
        })
    }

    /// Starts the sandbox with `files` and its supervisor; on failure the
    /// session is ended `failed` (and settled) before this returns.
    pub(crate) async fn start(self: Arc<Self>, files: Vec<(String, Vec<u8>)>) {
        let node = &self.node;
        let cancel = node.in_flight().register(&self.id);
        node.metrics().run_started();
        let started = Instant::now();
        let sandbox = match node.sandboxes().start(self.limits, files).await {
            Ok(sandbox) => Arc::<dyn Sandbox>::from(sandbox),
            Err(e) => {
                tracing::warn!(sandbox_id = %self.id, error = %e, "sandbox did not start");
                return self.end(EndReason::Failed, &e.to_string(), None).await;
            }
        };
        let _ = self.ready_at.set(Instant::now());
        let isolation = node.sandboxes().isolation().timeline_name();
        if let Err(e) = node.store().start_run(&self.id, isolation, now_ms()).await {
            tracing::error!(sandbox_id = %self.id, error = %e, "cannot mark the sandbox started");
        }
        let ready_ms = started.elapsed().as_millis() as u64;
        let ready = json!({"isolation": isolation, "ready_ms": ready_ms});
        self.events.emit(EventKind::VmReady, ready).await;
        let p = &self.record.permissions;
        let worker =
            json!({"shell": p.shell, "web": p.web, "connections": p.connections, "files": p.files});
        self.events.emit(EventKind::WorkerStarted, worker).await;
        self.state.send_replace(State::Ready(sandbox.clone()));
        let span = tracing::info_span!("sandbox", sandbox_id = %self.id);
        tokio::spawn(self.clone().supervise(sandbox, cancel).instrument(span));
    }

    /// Asks the session to end (a `DELETE`) and waits until it has been
    /// settled. Ending an ended session is not an error.
    pub async fn end_and_wait(&self, reason: EndReason) {
        self.end_asked.send_if_modified(|asked| {
            let first = asked.is_none();
            if first {
                *asked = Some(reason);
            }
            first
        });
        let mut state = self.state.subscribe();
        let _ = state.wait_for(|s| matches!(s, State::Ended(_))).await;
    }

    /// Compute metered so far, for the sandbox object.
    pub fn compute_so_far(&self) -> i64 {
        match self.ready_at.get() {
            Some(at) => compute_micros(self.node.prices(), at.elapsed()),
            None => 0,
        }
    }

    /// Runs one command after those asked before it; its output goes to
    /// the timeline and to `tap`.
    pub async fn command(
        &self,
        request: CommandRequest,
        tap: Option<&OutputTap>,
    ) -> Result<ShellResult, SessionError> {
        let _active = self.active();
        let _turn = self.turn.lock().await;
        let sandbox = self.sandbox().await?;
        let asked = request.timeout.unwrap_or(self.limits.command_timeout);
        let left = self.time_left();
        let cut = asked > left;
        let command = Command {
            command: request.command,
            timeout: asked.min(left),
            stdin: request.stdin,
            env: request.env,
        };
        let n = self.commands.fetch_add(1, Ordering::Relaxed) + 1;
        let call_id = format!("cmd_{n}");
        // A command cut to what was left of the sandbox's life runs out of
        // that, not of its own timeout.
        let how = Runs {
            tap,
            timeout_is_the_sandboxs: cut,
        };
        Ok(run_command(Some(&*sandbox), &self.events, &call_id, command, how).await)
    }

    /// The sandbox, once started; an error once it is ending.
    pub(super) async fn sandbox(&self) -> Result<Arc<dyn Sandbox>, SessionError> {
        let mut state = self.state.subscribe();
        let state = state
            .wait_for(|s| !matches!(s, State::Starting))
            .await
            .map_err(|_| SessionError::Ended(EndReason::Failed))?;
        match &*state {
            State::Ready(sandbox) => Ok(sandbox.clone()),
            State::Ending(reason) | State::Ended(reason) => Err(SessionError::Ended(*reason)),
            State::Starting => Err(SessionError::Ended(EndReason::Failed)),
        }
    }

    /// Marks an operation in progress until the guard drops.
    pub(super) fn active(&self) -> Active<'_> {
        self.activity().busy += 1;
        Active(self)
    }

    fn activity(&self) -> std::sync::MutexGuard<'_, Activity> {
        self.activity.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// What is left before the sandbox must end: its lifetime, or its
    /// budget, whichever comes first.
    fn time_left(&self) -> Duration {
        self.end_at().saturating_duration_since(Instant::now())
    }

    /// When the lifetime or the budget ends, and which.
    fn deadline(&self) -> (Instant, EndReason) {
        let lifetime = self.created + Duration::from_secs(self.record.permissions.timeout_seconds);
        let ready = self.ready_at.get().copied().unwrap_or(self.created);
        let budget = budget_lasts(self.node.prices(), self.record.reserved_micros)
            .map_or(ready, |lasts| ready.checked_add(lasts).unwrap_or(lifetime));
        if budget < lifetime {
            (budget, EndReason::BudgetExceeded)
        } else {
            (lifetime, EndReason::Timeout)
        }
    }

    fn end_at(&self) -> Instant {
        self.deadline().0
    }

    /// Waits for the first ending, then ends the session.
    async fn supervise(self: Arc<Self>, sandbox: Arc<dyn Sandbox>, cancel: watch::Receiver<bool>) {
        let (end_at, at_end) = self.deadline();
        let mut asked = self.end_asked.subscribe();
        let (reason, message) = tokio::select! {
            Ok(reason) = async { asked.wait_for(Option::is_some).await.map(|r| r.unwrap_or(EndReason::Deleted)) } => {
                (reason, "deleted by its caller".to_string())
            }
            _ = tokio::time::sleep_until(end_at.into()) => (at_end, self.deadline_message(at_end)),
            _ = self.idle() => (EndReason::IdleTimeout, format!(
                "no request for {} s", self.idle_timeout().as_secs()
            )),
            failure = sandbox.failure() => (EndReason::Failed, format!("{}: {}", failure.cause, failure.message)),
            _ = wait_true(cancel) => (EndReason::Failed, "the server stopped".to_string()),
            _ = self.tick() => (EndReason::Failed, String::new()),
        };
        if matches!(reason, EndReason::Timeout | EndReason::BudgetExceeded) {
            // Stop new work, and let a command cut to this moment report
            // its own limit.
            self.state.send_replace(State::Ending(reason));
            let _ = tokio::time::timeout(LAST_COMMAND_GRACE, self.turn.lock()).await;
        }
        self.end(reason, &message, Some(sandbox)).await;
    }

    fn deadline_message(&self, reason: EndReason) -> String {
        match reason {
            EndReason::BudgetExceeded => format!(
                "another second of compute would cross the budget of {} micros",
                self.record.reserved_micros
            ),
            _ => format!(
                "the sandbox reached its timeout of {} s",
                self.record.permissions.timeout_seconds
            ),
        }
    }

    fn idle_timeout(&self) -> Duration {
        let seconds = self.record.permissions.idle_timeout_seconds;
        Duration::from_secs(seconds.unwrap_or(self.record.permissions.timeout_seconds))
    }

    /// Resolves once nothing has been asked of the session for its idle
    /// timeout (an operation in progress is not idleness).
    async fn idle(&self) {
        let idle = self.idle_timeout();
        loop {
            let wait = {
                let activity = self.activity();
                let since = activity.last.elapsed();
                match activity.busy {
                    0 if since >= idle => return,
                    0 => idle - since,
                    _ => idle,
                }
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// Persists compute every tick, so a crash settles what was used.
    async fn tick(&self) {
        let mut interval = tokio::time::interval(TICK);
        interval.tick().await;
        loop {
            interval.tick().await;
            self.meter.set_compute(self.compute_so_far());
            let (usage, metered) = self.meter.snapshot();
            if let Err(e) = self
                .node
                .store()
                .record_usage(&self.id, &usage, &metered)
                .await
            {
                tracing::warn!(sandbox_id = %self.id, error = %e, "cannot persist usage");
            }
        }
    }

    /// Ends the session once: the sandbox (if it came up) destroyed,
    /// compute billed, the record settled, the last events written.
    async fn end(&self, reason: EndReason, message: &str, sandbox: Option<Arc<dyn Sandbox>>) {
        self.state.send_replace(State::Ending(reason));
        if let Some(sandbox) = sandbox {
            sandbox.destroy().await;
            let lifetime = self.ready_at.get().map_or(Duration::ZERO, Instant::elapsed);
            let destroyed = json!({"lifetime_ms": lifetime.as_millis() as u64});
            self.events.emit(EventKind::VmDestroyed, destroyed).await;
        }
        self.meter.set_compute(self.compute_so_far());
        let (usage, metered) = self.meter.snapshot();
        let finish = Finish {
            status: reason.status(),
            output: None,
            error: Some(RunError::new(reason.name(), message)),
            ended_at: now_ms(),
            usage,
            metered,
        };
        match self.node.store().finish_run(&self.id, &finish).await {
            Ok(Some(settlement)) => {
                let ended = json!({"end_reason": reason.name()});
                self.events.emit(EventKind::SandboxEnded, ended).await;
                let destroyed = destroyed_data(&settlement);
                self.events
                    .emit(EventKind::WorkerDestroyed, destroyed)
                    .await;
                tracing::info!(sandbox_id = %self.id, end_reason = reason.name(), charged = settlement.charged, "sandbox ended");
            }
            Ok(None) => tracing::warn!(sandbox_id = %self.id, "sandbox was already settled"),
            // Left in flight: the next start (or another node) settles it.
            Err(e) => {
                tracing::error!(sandbox_id = %self.id, error = %e, "cannot settle the sandbox")
            }
        }
        let node = &self.node;
        node.metrics()
            .run_ended(reason.status(), self.created.elapsed());
        node.hub().close(&self.id);
        node.sessions().remove(&self.id);
        node.in_flight().forget(&self.id);
        node.metrics().run_forgotten();
        self.state.send_replace(State::Ended(reason));
    }
}

async fn wait_true(mut rx: watch::Receiver<bool>) {
    if rx.wait_for(|v| *v).await.is_err() {
        std::future::pending::<()>().await;
    }
}
