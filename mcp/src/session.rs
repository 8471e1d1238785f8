//! One MCP session: its sandbox, made on first use and ended once, and the
//! activity that its idle timeout counts from.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use rmcp::model::Tool;

use crate::{About, SandboxFactory, SessionSandbox, ToolFailure};

/// What every session of one server shares.
pub(crate) struct Shared {
    pub(crate) factory: Arc<dyn SandboxFactory>,
    pub(crate) tools: Vec<Tool>,
    pub(crate) instructions: String,
    pub(crate) idle_timeout: Duration,
}

impl Shared {
    pub(crate) fn new(
        factory: Arc<dyn SandboxFactory>,
        about: About,
        idle_timeout: Duration,
    ) -> Arc<Self> {
        Arc::new(Self {
            factory,
            tools: crate::tools::definitions(&about),
            instructions: crate::tools::instructions(&about),
            idle_timeout,
        })
    }
}

/// The sandbox slot of a session.
#[derive(Default)]
struct Slot {
    sandbox: Option<Arc<dyn SessionSandbox>>,
    /// The session ended: no sandbox is made any more.
    ended: bool,
    /// The last sandbox was ended for idleness (stdio); the next one says so.
    idled: bool,
}

/// How busy a session is.
struct Activity {
    last: Instant,
    in_flight: usize,
}

/// One MCP session.
pub(crate) struct Session {
    shared: Arc<Shared>,
    caller: Option<String>,
    slot: tokio::sync::Mutex<Slot>,
    activity: Mutex<Activity>,
    /// Signalled on every request (for a watcher waiting for one).
    woken: tokio::sync::Notify,
    snippets: AtomicU64,
}

/// A sandbox handed to one tool call, and what the result should say first.
pub(crate) struct Lease {
    pub(crate) sandbox: Arc<dyn SessionSandbox>,
    pub(crate) note: Option<String>,
}

impl Session {
    pub(crate) fn new(shared: Arc<Shared>, caller: Option<String>) -> Arc<Self> {
        Arc::new(Self {
            shared,
            caller,
            slot: tokio::sync::Mutex::new(Slot::default()),
            activity: Mutex::new(Activity {
                last: Instant::now(),
                in_flight: 0,
            }),
            woken: tokio::sync::Notify::new(),
            snippets: AtomicU64::new(0),
        })
    }

    /// Who opened the session (`None` over stdio), for comparing keys.
    pub(crate) fn caller(&self) -> Option<&str> {
        self.caller.as_deref()
    }

    /// The session's sandbox, made now if this is its first use.
    pub(crate) async fn sandbox(&self) -> Result<Lease, ToolFailure> {
        let mut slot = self.slot.lock().await;
        if slot.ended {
            return Err(ToolFailure(
                "this MCP session has ended, and its sandbox with it: start a new session".into(),
            ));
        }
        if let Some(sandbox) = &slot.sandbox {
            return Ok(Lease {
                sandbox: sandbox.clone(),
                note: None,
            });
        }
        let sandbox: Arc<dyn SessionSandbox> = Arc::from(
            self.shared
                .factory
                .create(self.caller.as_deref())
                .await
                .map_err(|e| ToolFailure(format!("could not start the sandbox: {e}")))?,
        );
        tracing::debug!("mcp session: sandbox started");
        slot.sandbox = Some(sandbox.clone());
        let note = std::mem::take(&mut slot.idled).then(|| {
            format!(
                "[a new sandbox: the previous one ended after {} s without a request, and its files went with it]",
                self.shared.idle_timeout.as_secs()
            )
        });
        Ok(Lease { sandbox, note })
    }

    /// Whether the session has a live sandbox.
    pub(crate) async fn has_sandbox(&self) -> bool {
        self.slot.lock().await.sandbox.is_some()
    }

    /// Ends the session and its sandbox (if it had one); later tool calls fail.
    pub(crate) async fn end(&self) {
        let sandbox = {
            let mut slot = self.slot.lock().await;
            slot.ended = true;
            slot.sandbox.take()
        };
        if let Some(sandbox) = sandbox {
            tracing::debug!("mcp session ended: ending its sandbox");
            sandbox.end().await;
        }
    }

    /// Ends the sandbox for idleness; the session goes on, and its next tool
    /// call makes a new sandbox.
    pub(crate) async fn end_idle_sandbox(&self) {
        let sandbox = {
            let mut slot = self.slot.lock().await;
            let sandbox = slot.sandbox.take();
            if sandbox.is_some() {
                slot.idled = true;
            }
            sandbox
        };
        if let Some(sandbox) = sandbox {
            tracing::debug!("mcp session idle: ending its sandbox");
            sandbox.end().await;
        }
    }

    /// The number of the next `run_python` snippet.
    pub(crate) fn next_snippet(&self) -> u64 {
        self.snippets.fetch_add(1, Ordering::Relaxed) + 1
    }

    /// A request arrived.
    pub(crate) fn touch(&self) {
        if let Ok(mut activity) = self.activity.lock() {
            activity.last = Instant::now();
        }
        self.woken.notify_one();
    }

    /// A tool call starts; it counts as activity until the guard drops.
    pub(crate) fn begin_call(self: &Arc<Self>) -> CallGuard {
        if let Ok(mut activity) = self.activity.lock() {
            activity.in_flight += 1;
            activity.last = Instant::now();
        }
        self.woken.notify_one();
        CallGuard(self.clone())
    }

    /// How long until the session counts as idle: `None` when it is idle now.
    fn until_idle(&self, idle_timeout: Duration) -> Option<Duration> {
        let Ok(activity) = self.activity.lock() else {
            return Some(idle_timeout);
        };
        if activity.in_flight > 0 {
            return Some(idle_timeout);
        }
        idle_timeout
            .checked_sub(activity.last.elapsed())
            .filter(|d| !d.is_zero())
    }

    /// Waits until the session has been idle for `idle_timeout`: no request
    /// and no tool call running. Returns `false` without waiting that long
    /// when the session is gone or ended.
    pub(crate) async fn wait_idle(session: &Weak<Self>, idle_timeout: Duration) -> bool {
        loop {
            let wait = {
                let Some(session) = session.upgrade() else {
                    return false;
                };
                if session.slot.lock().await.ended {
                    return false;
                }
                match session.until_idle(idle_timeout) {
                    None => return true,
                    Some(wait) => wait,
                }
            };
            tokio::time::sleep(wait).await;
        }
    }

    /// Waits for the next request.
    pub(crate) async fn woken(&self) {
        self.woken.notified().await;
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        // A backstop: every path that ends a session ends its sandbox first.
        let slot = self.slot.get_mut();
        if let Some(sandbox) = slot.sandbox.take() {
            let ending = sandbox.end();
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    runtime.spawn(ending);
                }
                Err(_) => tracing::warn!(
                    "mcp session dropped outside a runtime: its sandbox was not ended"
                ),
            }
        }
    }
}

/// A tool call in progress (see [`Session::begin_call`]).
pub(crate) struct CallGuard(Arc<Session>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        if let Ok(mut activity) = self.0.activity.lock() {
            activity.in_flight = activity.in_flight.saturating_sub(1);
            activity.last = Instant::now();
        }
    }
}

/// Ends a stdio session's sandbox after every stretch of `idle_timeout`
/// without a request; runs until aborted.
pub(crate) async fn reap_idle_sandboxes(session: Arc<Session>, idle_timeout: Duration) {
    let weak = Arc::downgrade(&session);
    loop {
        if !Session::wait_idle(&weak, idle_timeout).await {
            return;
        }
        if session.has_sandbox().await {
            session.end_idle_sandbox().await;
        }
        // Nothing to end until a request comes.
        session.woken().await;
    }
}
