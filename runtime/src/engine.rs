//! The process-wide wasm engine: one `Runtime` per process, shared by every
//! sandbox.
//!
//! Configured for many short-lived instances: the pooling allocator (slots
//! reserved up front, memory reset copy-on-write), epoch interruption for
//! deadlines (a ticker thread advances the epoch), and a linker that holds
//! exactly the capabilities a sandbox gets (`linker.rs`). The shell
//! component is compiled once (or loaded from the on-disk cache) and
//! pre-linked, so a command's instantiation does no linking work; the
//! other programs are found and loaded on first use (`programs.rs`).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::component::Linker;
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

use crate::Error;
use crate::component_cache::{CacheOutcome, ComponentCache, Wasm};
use crate::launch::StoreState;
pub use crate::linker::Program;
use crate::linker::{prelink, sandbox_linker};
use crate::memfs::Tree;
use crate::program_root::Preopen;
use crate::programs::{
    ProgramSlot, default_programs_dir, find_programs, find_programs_where, record,
};
use crate::sandbox::SandboxBuilder;

/// How often the epoch advances: the granularity of every deadline.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(1);

/// Process-wide settings.
#[derive(Debug, Clone)]
pub struct RuntimeConfig {
    /// Where compiled components are cached. `None`: `$EPHEMERAL_CACHE_DIR`,
    /// else `$XDG_CACHE_HOME/ephemeral`, else `~/.cache/ephemeral`.
    pub cache_dir: Option<PathBuf>,
    /// Sandboxes that may run a command at the same time in this process.
    pub max_concurrent: u32,
    /// The largest memory any sandbox may be given (bytes); each sandbox's
    /// own cap is at most this.
    pub max_memory_bytes: usize,
    /// A folder of command components (`python3.wasm`, …) the shell can
    /// run by name. `None`: `$EPHEMERAL_PROGRAMS_DIR`, else
    /// `/var/cache/ephemeral/programs` (where `./dev` builds them).
    pub programs_dir: Option<PathBuf>,
    /// Compile for this target triple with a portable CPU baseline
    /// ([`PORTABLE_CPU_FLAGS`]) instead of this CPU's own features: for
    /// components precompiled here and run elsewhere (a microVM guest,
    /// whose CPU may offer less). `None`: this machine, all its features.
    pub portable_target: Option<String>,
    /// A read-only folder of entries precompiled for this configuration
    /// (a release's `lib/ephemeral/components`): the cache takes what it
    /// lacks from there instead of compiling it. `None`: none.
    pub seed_cache_dir: Option<PathBuf>,
}

impl RuntimeConfig {
    /// Where programs are looked for when `programs_dir` is `None`.
    pub fn default_programs_dir() -> PathBuf {
        default_programs_dir()
    }
}

/// The CPU features a portable engine may use: what any x86-64 server of
/// the last decade, and QEMU's emulated CPUs, have.
pub const PORTABLE_CPU_FLAGS: &[&str] = &[
    "has_sse3",
    "has_ssse3",
    "has_sse41",
    "has_sse42",
    "has_popcnt",
];

/// Default number of commands running at once.
pub const DEFAULT_MAX_CONCURRENT: u32 = 128;
/// Default ceiling of one component's memory.
pub const DEFAULT_MAX_MEMORY_BYTES: usize = 1 << 30;
/// Core instances, memories and tables one component may have: the shell
/// has a handful; CPython built by componentize-py has a few dozen.
const PER_COMPONENT_ITEMS: u32 = 64;
/// Elements of one table: room for the scientific python's 47,157.
const MAX_TABLE_ELEMENTS: usize = 1 << 17;
/// Size of one core instance's own data (vmctx): room for its 1.5 MB.
const MAX_CORE_INSTANCE_BYTES: usize = 4 << 20;

impl Default for RuntimeConfig {
    fn default() -> RuntimeConfig {
        RuntimeConfig {
            cache_dir: None,
            max_concurrent: DEFAULT_MAX_CONCURRENT,
            max_memory_bytes: DEFAULT_MAX_MEMORY_BYTES,
            programs_dir: None,
            portable_target: None,
            seed_cache_dir: None,
        }
    }
}

/// The shell component, built from `shell-wasi/` by this crate's build script.
pub static SHELL_WASM: &[u8] = include_bytes!(env!("EPHEMERAL_SHELL_WASM"));
include!(concat!(env!("OUT_DIR"), "/shell_digest.rs"));
/// The shell as the cache names it (by its digest: see [`Wasm`]).
static SHELL: Wasm<'static> = Wasm::with_digest(SHELL_WASM, &SHELL_DIGEST);

/// The engine, the linker and the pre-linked shell.
pub struct Runtime {
    pub(crate) engine: Engine,
    pub(crate) linker: Linker<StoreState>,
    pub(crate) shell: Program,
    pub(crate) config: RuntimeConfig,
    cache: ComponentCache,
    shell_cache: CacheOutcome,
    programs: BTreeMap<String, Arc<ProgramSlot>>,
    /// The system part of every sandbox's tree, built once (after the
    /// shell has said which utilities `/usr/bin` must list).
    system_tree: OnceLock<Tree>,
    /// The preopens of each program with a root of its own (by its own
    /// name), where `system_tree` laid its folders.
    program_preopens: OnceLock<BTreeMap<String, Arc<[Preopen]>>>,
    /// The shell's own utilities, as it listed them.
    utilities: OnceLock<Vec<String>>,
    /// Advances the epoch for as long as the runtime lives (none in a
    /// fork server: see [`Runtime::new_for_forking`]).
    ticker: Mutex<Option<EpochTicker>>,
}

impl Runtime {
    /// Builds the engine and loads the shell (compiling it only if the cache
    /// has no valid entry).
    pub fn new(config: RuntimeConfig) -> Result<Arc<Runtime>, Error> {
        let engine =
            Engine::new(&engine_config(&config)).map_err(|e| Error::Engine(format!("{e:#}")))?;
        let linker = sandbox_linker(&engine).map_err(|e| Error::Engine(format!("{e:#}")))?;
        let cache = cache_for(&config, &engine);
        let (component, shell_cache) = cache.load_or_compile(&engine, "shell", SHELL)?;
        let shell = prelink(&linker, "shell", &component)?;
        let ticker = EpochTicker::start(engine.clone());
        let programs = find_programs(
            config
                .programs_dir
                .clone()
                .unwrap_or_else(default_programs_dir),
        );
        let runtime = Arc::new(Runtime {
            engine,
            linker,
            shell,
            config,
            cache,
            shell_cache,
            programs,
            system_tree: OnceLock::new(),
            program_preopens: OnceLock::new(),
            utilities: OnceLock::new(),
            ticker: Mutex::new(Some(ticker)),
        });
        let utilities = runtime.shell_utilities()?;
        let mut bin_names = utilities.clone();
        let _ = runtime.utilities.set(utilities);
        bin_names.extend(runtime.program_names());
        bin_names.sort_unstable();
        bin_names.dedup();
        let mut tree = crate::sandbox::system_tree(&bin_names)?;
        let mut preopens = BTreeMap::new();
        for (name, slot) in runtime.programs.iter().filter(|(n, s)| *n == s.name()) {
            if let Some(root) = &slot.root {
                preopens.insert(name.clone(), root.lay_into(&mut tree)?.into());
            }
        }
        let _ = runtime.system_tree.set(tree);
        let _ = runtime.program_preopens.set(preopens);
        Ok(runtime)
    }

    /// A runtime for a process that will fork copies of itself (a worker
    /// fork server): made as [`Runtime::new`] makes one, but leaving this
    /// process with no thread of the runtime's or of wasi's, since a copy
    /// has only the forking thread, and a lock held by a thread it lacks
    /// would stay held forever. Deadlines do not fire and wasi's timers
    /// do not run here until [`Runtime::after_fork`] (in each copy).
    pub fn new_for_forking(config: RuntimeConfig) -> Result<Arc<Runtime>, Error> {
        // wasi's blocking calls run on the caller's tokio runtime if there
        // is one, else on a global one it starts with its own threads:
        // give the warm-up (the shell's probe) one that ends here.
        let ambient = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .map_err(|e| Error::Engine(format!("a tokio runtime for the warm-up: {e}")))?;
        let runtime = {
            let _entered = ambient.enter();
            Runtime::new(config)?
        };
        drop(ambient);
        let ticker = runtime
            .ticker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        drop(ticker);
        Ok(runtime)
    }

    /// Whether the cache `config` names holds, for the engine `config`
    /// makes, a checked entry of the shell (its utilities written down) and an
    /// indexed one of every program —
    /// checked without loading any: what lets a process that only hands
    /// its sandboxes to workers (`ephemeral exec` in `jail+wasm`) skip
    /// making a runtime of its own. Returns the cache's folder if so.
    pub fn warm_cache_dir(config: &RuntimeConfig) -> Result<Option<PathBuf>, Error> {
        // Only for its compatibility hash, which the allocation strategy
        // is no part of: reserving a pool's slots would be most of the cost.
        let mut engine_config = engine_config(config);
        engine_config.allocation_strategy(InstanceAllocationStrategy::OnDemand);
        let engine = Engine::new(&engine_config).map_err(|e| Error::Engine(format!("{e:#}")))?;
        let cache = cache_for(config, &engine);
        if cache.checked_entry(&engine, "shell", SHELL).is_none()
            || !utilities_listing(&cache, &engine).exists()
        {
            return Ok(None);
        }
        let dir = config
            .programs_dir
            .clone()
            .unwrap_or_else(default_programs_dir);
        let programs = find_programs(dir);
        let every_one = programs
            .iter()
            .filter(|(n, s)| *n == s.name())
            .all(|(name, slot)| cache.indexed(name, &slot.path).is_some());
        Ok(every_one.then(|| cache.dir().to_path_buf()))
    }

    /// In a copy of a process made with [`Runtime::new_for_forking`]:
    /// starts its own epoch thread. wasi's I/O runtime (a tokio runtime
    /// with its threads) starts lazily, the first time a command needs it
    /// — many never do — so the copy must allow what making it takes
    /// (the worker's seccomp list does: threads, epoll, an `AF_UNIX`
    /// socket pair).
    pub fn after_fork(&self) {
        let mut ticker = self.ticker.lock().unwrap_or_else(PoisonError::into_inner);
        if ticker.is_none() {
            *ticker = Some(EpochTicker::start(self.engine.clone()));
        }
    }

    /// Starts describing a new sandbox.
    pub fn sandbox(self: &Arc<Self>) -> SandboxBuilder {
        SandboxBuilder::new(self.clone())
    }

    /// Whether the shell came from the on-disk cache.
    pub fn shell_cache_outcome(&self) -> CacheOutcome {
        self.shell_cache
    }

    /// The on-disk cache of compiled components.
    pub fn cache(&self) -> &ComponentCache {
        &self.cache
    }

    /// Compiles (or loads from the cache) and links any command component,
    /// exactly as the shell is. Fails with [`Error::Capability`] if it
    /// imports something the sandbox does not offer, such as sockets.
    pub fn load_program(&self, name: &str, wasm: &[u8]) -> Result<Program, Error> {
        let (component, _) = self.cache.load_or_compile(&self.engine, name, wasm)?;
        prelink(&self.linker, name, &component)
    }

    /// The wasmtime engine every component is compiled for and run on.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// The system layout every sandbox starts from (empty until the shell
    /// has been asked for its utilities, which is all a probe needs).
    pub(crate) fn system_tree(&self) -> &Tree {
        static EMPTY: OnceLock<Tree> = OnceLock::new();
        self.system_tree
            .get()
            .unwrap_or_else(|| EMPTY.get_or_init(|| Tree::new(crate::memfs::Quota::UNLIMITED)))
    }

    /// The shell's utilities: as written down beside its cache entry by
    /// the first process that asked it, else asked now (and written down
    /// where the cache is writable; a worker's is not, its server's is).
    /// Asking means running the shell once, a few milliseconds of every
    /// worker process's start.
    fn shell_utilities(self: &Arc<Self>) -> Result<Vec<String>, Error> {
        let listing = self.utilities_listing();
        if let Some(names) = std::fs::read_to_string(&listing)
            .ok()
            .and_then(|text| parse_utilities(&text))
        {
            return Ok(names);
        }
        let names = self.ask_shell_for_utilities()?;
        let written = tempfile::NamedTempFile::new_in(self.cache.dir()).and_then(|mut tmp| {
            use std::io::Write;
            use std::os::unix::fs::PermissionsExt;
            writeln!(tmp, "{}", names.join("\n"))?;
            tmp.as_file()
                .set_permissions(std::fs::Permissions::from_mode(0o644))?;
            tmp.persist(&listing).map(drop).map_err(|e| e.error)
        });
        if let Err(e) = written {
            tracing::debug!(path = %listing.display(), error = %e, "utilities not written down");
        }
        Ok(names)
    }

    /// Where the shell's utilities are written down: beside its entry,
    /// named as it is, so a new shell (or engine) never reads an old list.
    fn utilities_listing(&self) -> PathBuf {
        utilities_listing(&self.cache, &self.engine)
    }

    /// Runs the shell once with `--ephemeral-utilities` (before any
    /// sandbox lists `/usr/bin`).
    fn ask_shell_for_utilities(self: &Arc<Self>) -> Result<Vec<String>, Error> {
        let mut probe = self.sandbox().build()?;
        let shell = self.shell.clone();
        let out = probe.run_captured(&shell, &["bash", "--ephemeral-utilities"])?;
        parse_utilities(&String::from_utf8_lossy(&out.stdout))
            .ok_or_else(|| Error::Engine("the shell listed no utilities".into()))
    }

    /// The target this runtime compiles for with a portable CPU baseline,
    /// if it does (see [`RuntimeConfig::portable_target`]): its workers
    /// must compile the same way to share its cache.
    pub fn portable_target(&self) -> Option<&str> {
        self.config.portable_target.as_deref()
    }

    /// The folder the programs (`python3.wasm`, …) are found in.
    pub fn programs_dir(&self) -> PathBuf {
        self.config
            .programs_dir
            .clone()
            .unwrap_or_else(default_programs_dir)
    }

    /// Makes sure every program has a compiled entry in the cache without
    /// keeping it loaded here: what a worker process (which may not write
    /// the cache) will load. Returns the names compiled now.
    pub fn warm_cache(&self) -> Result<Vec<String>, Error> {
        let mut compiled = Vec::new();
        for (name, slot) in self.programs.iter().filter(|(n, s)| *n == s.name()) {
            if self.cache.indexed(name, &slot.path).is_some() {
                continue;
            }
            let wasm = std::fs::read(&slot.path).map_err(|e| {
                Error::Component(name.clone(), format!("{}: {e}", slot.path.display()))
            })?;
            let entry = self.cache.entry_path(&self.engine, name, &wasm);
            if entry.exists() {
                // Entries from before workers existed were private to us.
                use std::os::unix::fs::PermissionsExt;
                let _ = std::fs::set_permissions(&entry, std::fs::Permissions::from_mode(0o644));
            }
            // Loaded (compiled if need be) and so checked before indexed.
            let (_, outcome) = self.cache.load_or_compile(&self.engine, name, &wasm)?;
            if outcome != CacheOutcome::Hit {
                compiled.push(name.clone());
            }
            record(&self.cache, name, &slot.path, &entry);
        }
        Ok(compiled)
    }

    /// The shell's own utilities (`ls`, `grep`, `tar`, …), sorted.
    pub fn utilities(&self) -> &[String] {
        self.utilities.get().map(Vec::as_slice).unwrap_or_default()
    }

    /// What a program's build says it bundles: the lines of `NAME.MANIFEST`
    /// beside `NAME.wasm` (the scientific python's: `python 3.15.0`,
    /// `package numpy 2.5.2`, …), if there is one.
    pub fn program_manifest(&self, name: &str) -> Option<String> {
        let slot = self.programs.get(name)?;
        std::fs::read_to_string(slot.path.with_extension("MANIFEST")).ok()
    }

    /// The names of the programs the shell can run besides its own
    /// utilities, e.g. `python3`.
    pub fn program_names(&self) -> Vec<String> {
        self.programs.keys().cloned().collect()
    }

    /// A program by name, compiled (or loaded from the cache) on first use.
    pub fn program(&self, name: &str) -> Result<Program, Error> {
        let slot = self
            .programs
            .get(name)
            .ok_or_else(|| Error::Component(name.to_owned(), "no such program".into()))?;
        slot.loaded
            .get_or_init(|| {
                // Aliases (`python` → python3.wasm) share one cache entry.
                let mut program = self.load_slot(slot).map_err(|e| e.to_string())?;
                if let Some(preopens) = self.program_preopens.get().and_then(|p| p.get(slot.name()))
                {
                    program.preopens = preopens.clone();
                }
                Ok(program)
            })
            .clone()
            .map_err(|e| Error::Component(name.to_owned(), e))
    }
}

fn engine_config(config: &RuntimeConfig) -> Config {
    let mut pool = PoolingAllocationConfig::new();
    let slots = config.max_concurrent.max(1);
    pool.total_component_instances(slots)
        .total_core_instances(slots * PER_COMPONENT_ITEMS)
        .total_memories(slots * 4)
        .total_tables(slots * 4)
        .total_stacks(slots)
        .max_core_instances_per_component(PER_COMPONENT_ITEMS)
        .max_memories_per_component(PER_COMPONENT_ITEMS)
        .max_tables_per_component(PER_COMPONENT_ITEMS)
        .max_memory_size(config.max_memory_bytes)
        // The scientific python's function table has ~47,000 entries
        // (wasmtime's default cap is 20,000).
        .table_elements(MAX_TABLE_ELEMENTS)
        // ... and its core instance's metadata takes 1.5 MB (default 1 MiB).
        .max_core_instance_size(MAX_CORE_INSTANCE_BYTES)
        .max_component_instance_size(MAX_CORE_INSTANCE_BYTES)
        // Keep a little of each freed memory mapped, so the next
        // instance's first pages cost no page faults.
        .linear_memory_keep_resident(64 << 10);
    let mut c = Config::new();
    // Exceptions: the scientific python's C++ (matplotlib, kiwisolver,
    // contourpy) throws them; wasmtime implements them on its GC heap.
    c.wasm_component_model(true)
        .wasm_exceptions(true)
        .epoch_interruption(true)
        .parallel_compilation(true)
        .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    // musl's libunwind takes a module's unwind entries one at a time and
    // drops them in time quadratic in their number (17 s for the
    // scientific python in the static release). Wasmtime walks wasm
    // frames by frame pointers and stops host panics at the boundary, so
    // code for musl goes without. Decided by the target, not this build:
    // a glibc host precompiles for a musl guest.
    let target = config.portable_target.as_deref();
    if target.map_or(cfg!(target_env = "musl"), |t| t.ends_with("-musl")) {
        c.native_unwind_info(false);
    }
    if let Some(triple) = &config.portable_target {
        if let Err(e) = c.target(triple) {
            tracing::warn!(%triple, error = %e, "unknown target; compiling for this machine");
        }
        for flag in PORTABLE_CPU_FLAGS {
            // SAFETY: each flag is a baseline feature of every CPU the
            // portable code is meant for; wasmtime re-checks on load.
            unsafe { c.cranelift_flag_enable(flag) };
        }
    }
    c
}

/// Precompiles the shell and every program in `config`'s programs folder
/// into its cache for `config.portable_target`, without running anything
/// (the target may not be this machine's), and indexes each program's
/// entry (see `component_cache`). Programs with read-only files of their
/// own are included only `with_roots` (a microVM carries them on its
/// disk). Returns the cache entries.
pub fn precompile_for_target(
    config: &RuntimeConfig,
    with_roots: bool,
) -> Result<Vec<PathBuf>, Error> {
    let engine =
        Engine::new(&engine_config(config)).map_err(|e| Error::Engine(format!("{e:#}")))?;
    let cache = cache_for(config, &engine);
    let mut entries = vec![cache.ensure_compiled(&engine, "shell", SHELL)?];
    let programs = config
        .programs_dir
        .clone()
        .unwrap_or_else(default_programs_dir);
    for (name, slot) in find_programs_where(programs, with_roots)
        .into_iter()
        .filter(|(n, s)| n == s.name())
    {
        let entry = match cache.indexed(&name, &slot.path) {
            Some(entry) => entry,
            None => {
                let wasm = std::fs::read(&slot.path).map_err(|e| {
                    Error::Component(name.clone(), format!("{}: {e}", slot.path.display()))
                })?;
                let entry = cache.ensure_compiled(&engine, &name, &wasm)?;
                record(&cache, &name, &slot.path, &entry);
                entry
            }
        };
        entries.push(entry);
    }
    Ok(entries)
}

/// The shell's utilities as it lists them (one a line), or `None` if it
/// listed none.
fn parse_utilities(text: &str) -> Option<Vec<String>> {
    let names: Vec<String> = text
        .lines()
        .filter(|n| !n.is_empty() && !n.contains('/'))
        .map(str::to_owned)
        .collect();
    (!names.is_empty()).then_some(names)
}

/// See [`Runtime::utilities_listing`].
fn utilities_listing(cache: &ComponentCache, engine: &Engine) -> PathBuf {
    cache
        .entry_path(engine, "shell", SHELL)
        .with_extension("utilities")
}

/// The cache `config` names for `engine`, with its seed.
fn cache_for(config: &RuntimeConfig, engine: &Engine) -> ComponentCache {
    ComponentCache::new(config.cache_dir.clone().unwrap_or_else(default_cache_dir))
        .with_seed(config.seed_cache_dir.clone())
        .for_engine(engine)
}

fn default_cache_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("EPHEMERAL_CACHE_DIR") {
        return PathBuf::from(dir);
    }
    if let Some(dir) = std::env::var_os("XDG_CACHE_HOME") {
        return PathBuf::from(dir).join("ephemeral");
    }
    match std::env::var_os("HOME") {
        Some(home) => PathBuf::from(home).join(".cache").join("ephemeral"),
        None => std::env::temp_dir().join("ephemeral-cache"),
    }
}

/// Advances the engine's epoch about every [`EPOCH_TICK`] until dropped.
/// Each tick, a running store asks its `Stop` whether to end (see
/// `launch.rs`); deadlines are read from the clock there, so a late
/// wake-up of a busy host delays a stop by at most a tick.
struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    fn start(engine: Engine) -> EpochTicker {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("ephemeral-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .ok();
        EpochTicker { stop, thread }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shell_digest_is_the_shells() {
        assert_eq!(blake3::hash(SHELL_WASM).as_bytes(), &SHELL_DIGEST);
    }
}
