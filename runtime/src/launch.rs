//! Running one program to its end: a fresh store with the sandbox's
//! filesystem and limits, the program instantiated from its pre-linked
//! form, and how it ended turned into an exit status and a named limit.
//!
//! Used for every command a sandbox runs, and again, nested inside a host
//! call or on a thread of its own, when a program asks for another one
//! (`process.run`, `process.spawn`).

use std::sync::Arc;
use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime::{Store, Trap, UpdateDeadline};
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{I32Exit, WasiCtx};

use crate::Error;
use crate::engine::{Program, Runtime};
use crate::limits::{LimitHit, Limits, MemoryLimiter};
use crate::memfs::{MemFs, NodeId, ROOT, Stdio};
use crate::output::{OutputPipe, OutputPipes};
use crate::process::ProcessTable;
use crate::stop::{Stop, StopReason};

/// Exit status of a command stopped at its time limit (as GNU `timeout`).
pub const EXIT_TIMEOUT: i32 = 124;
/// Exit status of a command stopped at its memory cap (as after SIGKILL
/// from the kernel's OOM killer).
pub const EXIT_MEMORY: i32 = 137;
/// Exit status of a command whose component trapped (as after SIGABRT).
pub const EXIT_TRAP: i32 = 134;

/// What the shell leaves for the next command.
#[derive(Debug, Clone)]
pub(crate) struct SavedState {
    pub(crate) cwd: String,
    pub(crate) exported: Vec<(String, String)>,
}

/// The data of a store while one program runs.
pub(crate) struct StoreState {
    pub(crate) wasi: WasiCtx,
    pub(crate) table: ResourceTable,
    pub(crate) fs: MemFs,
    /// The folders the program is given before `/` (see `program_root`).
    pub(crate) preopens: Vec<(NodeId, String)>,
    /// The program's umask (`umask` in the shell), which what it creates
    /// and what it starts inherit.
    pub(crate) umask: u32,
    /// Its own streams, for the `/dev/std*` it opens.
    pub(crate) stdio: Stdio,
    pub(crate) limiter: MemoryLimiter,
    pub(crate) saved: Option<SavedState>,
    /// What ends the running program: deadlines and signals (for the epoch
    /// callback and for timers, see `deadline_clock`).
    pub(crate) stop: Arc<Stop>,
    /// What a program started from this one needs: the runtime, the limits,
    /// this command's output pipes and its processes.
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) limits: Limits,
    pub(crate) pipes: OutputPipes,
    pub(crate) processes: Arc<ProcessTable>,
    /// A limit a program started from this one ran into.
    pub(crate) child_limit: Option<LimitHit>,
}

/// Everything one program run needs. It owns all of it, so a program can
/// run on a thread of its own (`process.spawn`).
pub(crate) struct Launch {
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) fs: MemFs,
    pub(crate) limits: Limits,
    pub(crate) argv: Vec<String>,
    pub(crate) env: Vec<(String, String)>,
    pub(crate) cwd: String,
    pub(crate) stdin: Vec<u8>,
    pub(crate) stdout: OutputPipe,
    pub(crate) stderr: OutputPipe,
    /// The pipes a nested program's `inherit` output goes to.
    pub(crate) pipes: OutputPipes,
    pub(crate) umask: u32,
    pub(crate) stop: Arc<Stop>,
    /// The command's processes, which programs started from this one join.
    pub(crate) processes: Arc<ProcessTable>,
}

/// How one program run ended.
pub(crate) struct Ended {
    pub(crate) exit_code: i32,
    pub(crate) limit: Option<LimitHit>,
    pub(crate) duration: Duration,
    pub(crate) saved: Option<SavedState>,
}

impl Launch {
    /// Runs `program` to its end. Errors are the host's (no free slot),
    /// never the guest's: a guest that misbehaves just ends.
    pub(crate) fn run(self, program: &Program) -> Result<Ended, Error> {
        let stop = self.stop.clone();
        let stderr = self.stderr.clone();
        let name = self.argv.first().cloned().unwrap_or_default();
        let preopens = resolve_preopens(&self.fs, program);
        let mut store = self.store(preopens);
        // Every tick, the store asks whether its program must end: its
        // deadline passed, or a signal came (`kill`, or a parent ending).
        store.epoch_deadline_callback(|ctx| match ctx.data().stop.reason() {
            Some(_) => Err(Trap::Interrupt.into()),
            None => Ok(UpdateDeadline::Continue(1)),
        });
        store.set_epoch_deadline(1);
        let started = std::time::Instant::now();
        let result = program
            .pre
            .instantiate(&mut store)
            .and_then(|cmd| cmd.wasi_cli_run().call_run(&mut store));
        let duration = started.elapsed();
        let state = store.into_data();
        let (exit_code, limit) = classify(result, &state.limiter, &stop)?;
        if limit == Some(LimitHit::Stack) {
            // A trap leaves no message of its own; say what happened, as
            // a crashed program's shell would.
            stderr.write_line(&format!(
                "{name}: stack overflow: the program ran out of stack (sandbox limit `stack`)"
            ));
        }
        Ok(Ended {
            exit_code,
            limit: limit.or(state.child_limit),
            duration,
            saved: state.saved,
        })
    }

    fn store(self, preopens: Vec<(NodeId, String)>) -> Store<StoreState> {
        let mut wasi = WasiCtx::builder();
        let stdin = MemoryInputPipe::new(self.stdin);
        let stdio = {
            let (input, out, err) = (stdin.clone(), self.stdout.clone(), self.stderr.clone());
            Stdio {
                stdin: Box::new(move || Box::new(input.clone())),
                stdout: Box::new(move || Box::new(out.clone())),
                stderr: Box::new(move || Box::new(err.clone())),
            }
        };
        wasi.args(&self.argv)
            .envs(&self.env)
            .env("PWD", &self.cwd)
            .stdin(stdin)
            .stdout(self.stdout)
            .stderr(self.stderr)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .secure_random(crate::entropy::kernel_random())
            .insecure_random(crate::entropy::kernel_random())
            .insecure_random_seed(crate::entropy::random_u128());
        let state = StoreState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            fs: self.fs,
            preopens,
            umask: self.umask,
            stdio,
            limiter: MemoryLimiter::new(self.limits.memory_bytes),
            saved: None,
            stop: self.stop,
            runtime: self.runtime.clone(),
            limits: self.limits,
            pipes: self.pipes,
            processes: self.processes,
            child_limit: None,
        };
        let mut store = Store::new(self.runtime.engine(), state);
        store.limiter(|s| &mut s.limiter);
        store
    }
}

/// The program's own folders as nodes of this sandbox's tree. One that is
/// gone (it cannot be: they are root's, read-only) is left out.
fn resolve_preopens(fs: &MemFs, program: &Program) -> Vec<(NodeId, String)> {
    if program.preopens.is_empty() {
        return Vec::new();
    }
    let tree = fs.lock();
    program
        .preopens
        .iter()
        .filter_map(|p| {
            let id = tree.lookup(ROOT, &p.tree_path, true).ok()?;
            Some((id, p.guest.clone()))
        })
        .collect()
}

/// Turns how the guest ended into an exit status and the limit it hit.
/// A timeout is reported as `CommandTimeout`; the sandbox decides whether
/// it was really its own time that ran out.
fn classify(
    result: wasmtime::Result<Result<(), ()>>,
    limiter: &MemoryLimiter,
    stop: &Stop,
) -> Result<(i32, Option<LimitHit>), Error> {
    // A guest that failed after the cap refused it memory (CPython's
    // `MemoryError`, say) ran into the cap, even if it exited by itself.
    let memory = |code: i32| (code != 0 && limiter.hit).then_some(LimitHit::Memory);
    let err = match result {
        Ok(Ok(())) => return Ok((0, None)),
        Ok(Err(())) => return Ok((1, memory(1))),
        Err(e) => e,
    };
    if let Some(exit) = err.downcast_ref::<I32Exit>() {
        return Ok((exit.0, memory(exit.0)));
    }
    let stopped = stop.reason();
    if let Some(Trap::Interrupt) = err.downcast_ref::<Trap>() {
        return Ok(stopped_status(
            stopped.unwrap_or(StopReason::CommandDeadline),
        ));
    }
    if limiter.hit {
        return Ok((EXIT_MEMORY, Some(LimitHit::Memory)));
    }
    if let Some(Trap::StackOverflow) = err.downcast_ref::<Trap>() {
        return Ok((EXIT_TRAP, Some(LimitHit::Stack)));
    }
    if is_pool_exhausted(&err) {
        return Err(Error::Busy);
    }
    if let Some(reason) = stopped {
        // A host call cut short at the deadline or by a signal can surface
        // as another error; it is still the stop that ended the program.
        return Ok(stopped_status(reason));
    }
    // Any other trap is the guest's own crash (e.g. `unreachable` after a
    // panic): the command failed, the host is fine.
    tracing::debug!(error = %format!("{err:#}"), "guest trapped");
    Ok((EXIT_TRAP, None))
}

/// The status and limit of a program that was stopped.
fn stopped_status(reason: StopReason) -> (i32, Option<LimitHit>) {
    match reason {
        StopReason::CommandDeadline => (EXIT_TIMEOUT, Some(LimitHit::CommandTimeout)),
        StopReason::OwnTimeout => (EXIT_TIMEOUT, None),
        StopReason::Signal(signal) => (128 + i32::try_from(signal).unwrap_or(0), None),
    }
}

fn is_pool_exhausted(err: &wasmtime::Error) -> bool {
    let text = format!("{err:#}");
    text.contains("maximum concurrent") || text.contains("pooling allocator")
}
