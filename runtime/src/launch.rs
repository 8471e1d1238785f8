//! Running one program to its end: a fresh store with the sandbox's
//! filesystem and limits, the program instantiated from its pre-linked
//! form, and how it ended turned into an exit status and a named limit.
//!
//! Used for every command a sandbox runs, and again, nested inside a host
//! call, when the shell asks for another program (`process.run`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use wasmtime::component::ResourceTable;
use wasmtime::{Store, Trap};
use wasmtime_wasi::p2::pipe::MemoryInputPipe;
use wasmtime_wasi::{I32Exit, WasiCtx};

use crate::Error;
use crate::engine::{Program, Runtime};
use crate::limits::{LimitHit, Limits, MemoryLimiter};
use crate::memfs::MemFs;
use crate::output::{OutputPipe, OutputPipes};

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
    pub(crate) limiter: MemoryLimiter,
    pub(crate) saved: Option<SavedState>,
    /// When the running command must stop (for timers, see `deadline_clock`).
    pub(crate) deadline: Instant,
    /// What a program started from this one needs: the runtime, the limits
    /// and this command's output pipes.
    pub(crate) runtime: Arc<Runtime>,
    pub(crate) limits: Limits,
    pub(crate) pipes: OutputPipes,
    /// A limit a program started from this one ran into.
    pub(crate) child_limit: Option<LimitHit>,
}

/// Everything one program run needs.
pub(crate) struct Launch<'a> {
    pub(crate) runtime: &'a Arc<Runtime>,
    pub(crate) fs: &'a MemFs,
    pub(crate) limits: Limits,
    pub(crate) argv: &'a [String],
    pub(crate) env: &'a [(String, String)],
    pub(crate) cwd: &'a str,
    pub(crate) stdin: Vec<u8>,
    pub(crate) stdout: OutputPipe,
    pub(crate) stderr: OutputPipe,
    /// The pipes a nested program's `inherit` output goes to.
    pub(crate) pipes: OutputPipes,
    pub(crate) deadline: Instant,
}

/// How one program run ended.
pub(crate) struct Ended {
    pub(crate) exit_code: i32,
    pub(crate) limit: Option<LimitHit>,
    pub(crate) duration: Duration,
    pub(crate) saved: Option<SavedState>,
}

impl Launch<'_> {
    /// Runs `program` to its end. Errors are the host's (no free slot),
    /// never the guest's: a guest that misbehaves just ends.
    pub(crate) fn run(self, program: &Program) -> Result<Ended, Error> {
        let deadline = self.deadline;
        let ticks = self.runtime.epoch_deadline(deadline);
        let mut store = self.store();
        store.set_epoch_deadline(ticks);
        let started = Instant::now();
        let result = program
            .pre
            .instantiate(&mut store)
            .and_then(|cmd| cmd.wasi_cli_run().call_run(&mut store));
        let duration = started.elapsed();
        let state = store.into_data();
        let (exit_code, limit) = classify(result, &state.limiter, deadline)?;
        Ok(Ended {
            exit_code,
            limit: limit.or(state.child_limit),
            duration,
            saved: state.saved,
        })
    }

    fn store(self) -> Store<StoreState> {
        let mut wasi = WasiCtx::builder();
        wasi.args(self.argv)
            .envs(self.env)
            .env("PWD", self.cwd)
            .stdout(self.stdout)
            .stderr(self.stderr)
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false)
            .secure_random(crate::entropy::kernel_random())
            .insecure_random(crate::entropy::kernel_random())
            .insecure_random_seed(crate::entropy::random_u128());
        if !self.stdin.is_empty() {
            wasi.stdin(MemoryInputPipe::new(self.stdin));
        }
        let state = StoreState {
            wasi: wasi.build(),
            table: ResourceTable::new(),
            fs: self.fs.clone(),
            limiter: MemoryLimiter::new(self.limits.memory_bytes),
            saved: None,
            deadline: self.deadline,
            runtime: self.runtime.clone(),
            limits: self.limits,
            pipes: self.pipes,
            child_limit: None,
        };
        let mut store = Store::new(self.runtime.engine(), state);
        store.limiter(|s| &mut s.limiter);
        store
    }
}

/// Turns how the guest ended into an exit status and the limit it hit.
/// A timeout is reported as `CommandTimeout`; the sandbox decides whether
/// it was really its own time that ran out.
fn classify(
    result: wasmtime::Result<Result<(), ()>>,
    limiter: &MemoryLimiter,
    deadline: Instant,
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
    if let Some(Trap::Interrupt) = err.downcast_ref::<Trap>() {
        return Ok((EXIT_TIMEOUT, Some(LimitHit::CommandTimeout)));
    }
    if limiter.hit {
        return Ok((EXIT_MEMORY, Some(LimitHit::Memory)));
    }
    if is_pool_exhausted(&err) {
        return Err(Error::Busy);
    }
    if Instant::now() >= deadline {
        // A host call cut short at the deadline can surface as another
        // error; it is still the deadline that ended the program.
        return Ok((EXIT_TIMEOUT, Some(LimitHit::CommandTimeout)));
    }
    // Any other trap is the guest's own crash (e.g. `unreachable` after a
    // panic): the command failed, the host is fine.
    tracing::debug!(error = %format!("{err:#}"), "guest trapped");
    Ok((EXIT_TRAP, None))
}

fn is_pool_exhausted(err: &wasmtime::Error) -> bool {
    let text = format!("{err:#}");
    text.contains("maximum concurrent") || text.contains("pooling allocator")
}
