//! The processes of one command: programs started with `process.spawn`
//! that run alongside their caller on threads of their own.
//!
//! A command's table outlives every program in it: when the command ends,
//! what is still running is sent SIGKILL and joined, so nothing a command
//! started writes to its output or its files afterwards.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex, PoisonError};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::bindings::process::Finished;
use crate::stop::Stop;

/// Programs one command may have running alongside it at once.
pub(crate) const MAX_PROCESSES: usize = 32;
/// The first process id handed out (the shell's `$$` is 2, see the shell).
const FIRST_PID: u32 = 100;
/// Signal sent to what is left running when the command ends.
const SIGKILL: u32 = 9;
/// How often a blocked `wait` checks whether its caller must stop.
const WAIT_SLICE: Duration = Duration::from_millis(10);
/// Stack of a spawned program's thread: wasm frames and host calls.
const THREAD_STACK: usize = 8 << 20;

/// One spawned program: how to stop it, and its outcome once it ended.
struct Child {
    stop: Arc<Stop>,
    outcome: Arc<(Mutex<Option<Finished>>, Condvar)>,
    thread: Option<JoinHandle<()>>,
}

/// Why a process call was refused.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProcessError {
    #[error("too many processes: at most {MAX_PROCESSES} may run at once")]
    TooMany,
    #[error("no such process: {0}")]
    NoSuchProcess(u32),
    #[error("cannot start a thread for the program: {0}")]
    Thread(String),
}

#[derive(Default)]
struct Inner {
    next_pid: u32,
    children: HashMap<u32, Child>,
}

/// The processes of one command.
#[derive(Default)]
pub(crate) struct ProcessTable {
    inner: Mutex<Inner>,
}

impl ProcessTable {
    pub(crate) fn new() -> Arc<ProcessTable> {
        Arc::new(ProcessTable::default())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Runs `body` on a thread of its own as a new process; its id.
    pub(crate) fn spawn(
        &self,
        stop: Arc<Stop>,
        body: impl FnOnce() -> Finished + Send + 'static,
    ) -> Result<u32, ProcessError> {
        let mut inner = self.lock();
        let running = inner
            .children
            .values()
            .filter(|c| !c.outcome.0.lock().is_ok_and(|o| o.is_some()))
            .count();
        if running >= MAX_PROCESSES {
            return Err(ProcessError::TooMany);
        }
        let pid = FIRST_PID + inner.next_pid;
        inner.next_pid += 1;
        let outcome = Arc::new((Mutex::new(None), Condvar::new()));
        let done = outcome.clone();
        let thread = std::thread::Builder::new()
            .name(format!("ephemeral-pid-{pid}"))
            .stack_size(THREAD_STACK)
            .spawn(move || {
                let finished = body();
                let (slot, ended) = &*done;
                *slot.lock().unwrap_or_else(PoisonError::into_inner) = Some(finished);
                ended.notify_all();
            })
            .map_err(|e| ProcessError::Thread(e.to_string()))?;
        inner.children.insert(
            pid,
            Child {
                stop,
                outcome,
                thread: Some(thread),
            },
        );
        Ok(pid)
    }

    /// Waits for `pid` to end, at most `timeout`, and as long as `caller`
    /// may go on; `None` while it still runs. A process is waited for once.
    pub(crate) fn wait(
        &self,
        pid: u32,
        timeout: Option<Duration>,
        caller: &Stop,
    ) -> Result<Option<Finished>, ProcessError> {
        let outcome = {
            let inner = self.lock();
            let child = inner
                .children
                .get(&pid)
                .ok_or(ProcessError::NoSuchProcess(pid))?;
            child.outcome.clone()
        };
        let until = timeout.map(|t| Instant::now() + t);
        let (slot, ended) = &*outcome;
        let mut done = slot.lock().unwrap_or_else(PoisonError::into_inner);
        while done.is_none() {
            if caller.reason().is_some() || until.is_some_and(|u| Instant::now() >= u) {
                return Ok(None);
            }
            let slice = match until {
                Some(u) => WAIT_SLICE.min(u.saturating_duration_since(Instant::now())),
                None => WAIT_SLICE,
            };
            done = ended
                .wait_timeout(done, slice)
                .unwrap_or_else(PoisonError::into_inner)
                .0;
        }
        let finished = done.take();
        drop(done);
        if let Some(mut child) = self.lock().children.remove(&pid)
            && let Some(thread) = child.thread.take()
        {
            let _ = thread.join();
        }
        Ok(finished)
    }

    /// Sends `signal` to `pid`; 0 only asks whether it is still running.
    pub(crate) fn kill(&self, pid: u32, signal: u32) -> Result<(), ProcessError> {
        let inner = self.lock();
        let child = inner
            .children
            .get(&pid)
            .ok_or(ProcessError::NoSuchProcess(pid))?;
        let finished = child.outcome.0.lock().is_ok_and(|o| o.is_some());
        if signal == 0 {
            // Like kill(2): a process that ended but was not waited for
            // (a zombie) still exists.
            return Ok(());
        }
        if !finished {
            child.stop.send(signal);
        }
        Ok(())
    }

    /// Stops and joins everything still running: the command is over.
    pub(crate) fn end_all(&self) {
        let children: Vec<Child> = self.lock().children.drain().map(|(_, c)| c).collect();
        for child in &children {
            child.stop.send(SIGKILL);
        }
        for mut child in children {
            if let Some(thread) = child.thread.take() {
                let _ = thread.join();
            }
        }
    }
}

impl Drop for ProcessTable {
    fn drop(&mut self) {
        self.end_all();
    }
}
