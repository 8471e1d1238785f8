//! Measures python3-sci.wasm under wasmtime 48 (see ../README.md):
//!
//!   ephemeral-python-sci-measure OUT_DIR [--runs N] [--recompile]
//!
//! OUT_DIR is build.sh's: python3-sci.wasm, python3-sci.root/ and
//! python3-sci.preopens. Compiles the component (unless OUT_DIR holds a
//! python3-sci.cwasm this engine loads; --recompile forces it), saves and
//! loads the .cwasm, then runs each case on N fresh instances (default 5)
//! made from one InstancePre, and reports the p50s and each instance's peak
//! linear memory and the process's peak RSS. Exits non-zero when a case's
//! check fails.
use anyhow::{Context, Result, bail, ensure};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use wasmtime::component::{Component, InstancePre, Linker};
use wasmtime::{Collector, Config, Engine, ResourceLimiter, Store};
use wasmtime_wasi::p2::bindings::sync::CommandPre;
use wasmtime_wasi::p2::pipe::MemoryOutputPipe;
use wasmtime_wasi::{FsPerms, I32Exit, ResourceTable, WasiCtx, WasiCtxBuilder, WasiCtxView, WasiView};

/// wasmtime 48 has its own error type; this harness reports with anyhow.
trait W<T> {
    fn w(self) -> Result<T>;
}

impl<T> W<T> for wasmtime::Result<T> {
    fn w(self) -> Result<T> {
        self.map_err(|e| anyhow::anyhow!("{e:?}"))
    }
}

struct State {
    ctx: WasiCtx,
    table: ResourceTable,
    limits: PeakMemory,
}

impl WasiView for State {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView { ctx: &mut self.ctx, table: &mut self.table }
    }
}

/// Records the largest linear memory the instance asked for; refuses nothing.
#[derive(Default)]
struct PeakMemory {
    peak: usize,
}

impl ResourceLimiter for PeakMemory {
    fn memory_growing(&mut self, current: usize, desired: usize, _max: Option<usize>) -> wasmtime::Result<bool> {
        self.peak = self.peak.max(current).max(desired);
        Ok(true)
    }
    fn table_growing(&mut self, _current: usize, _desired: usize, _max: Option<usize>) -> wasmtime::Result<bool> {
        Ok(true)
    }
}

struct Outcome {
    exit: i32,
    stdout: String,
    stderr: String,
    instantiate: Duration,
    run: Duration,
    peak_memory: usize,
    /// The process's peak RSS during the instance less its RSS before it.
    peak_rss: Option<u64>,
}

struct Runner {
    engine: Engine,
    pre: CommandPre<State>,
    /// (host folder, guest path), in python3-sci.preopens' order.
    preopens: Vec<(PathBuf, String)>,
}

impl Runner {
    /// One fresh instance running `python3 ARGS...`; `tmp` (if any) is
    /// preopened writable at /tmp, after the read-only root.
    fn run(&self, args: &[&str], tmp: Option<&Path>) -> Result<Outcome> {
        let stdout = MemoryOutputPipe::new(1 << 20);
        let stderr = MemoryOutputPipe::new(1 << 20);
        let mut b = WasiCtxBuilder::new();
        let mut argv = vec!["python3"];
        argv.extend_from_slice(args);
        b.args(&argv)
            .env("HOME", "/tmp")
            .env("TMPDIR", "/tmp")
            .env("MPLCONFIGDIR", "/tmp/matplotlib")
            .stdout(stdout.clone())
            .stderr(stderr.clone())
            // No network: every socket operation is refused (and the
            // component imports no wasi:sockets anyway).
            .allow_tcp(false)
            .allow_udp(false)
            .allow_ip_name_lookup(false);
        for (host, guest) in &self.preopens {
            b.preopened_dir(host, guest, FsPerms::ReadOnly)
                .w()
                .with_context(|| format!("preopening {}", host.display()))?;
        }
        if let Some(tmp) = tmp {
            b.preopened_dir(tmp, "/tmp", FsPerms::ReadWrite).w()?;
        }
        let state = State { ctx: b.build(), table: ResourceTable::new(), limits: PeakMemory::default() };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|s| &mut s.limits);
        reset_peak_rss();
        let rss_before = rss();
        let t0 = Instant::now();
        let command = self.pre.instantiate(&mut store).w()?;
        let t1 = Instant::now();
        let result = command.wasi_cli_run().call_run(&mut store);
        let t2 = Instant::now();
        let exit = match result {
            Ok(Ok(())) => 0,
            Ok(Err(())) => 1,
            Err(e) => match e.downcast_ref::<I32Exit>() {
                Some(I32Exit(code)) => *code,
                None => {
                    let err = String::from_utf8_lossy(&stderr.contents()).into_owned();
                    bail!("trapped: {e:#}\n--- stderr ---\n{err}");
                }
            },
        };
        let peak_memory = store.data().limits.peak;
        Ok(Outcome {
            exit,
            stdout: String::from_utf8_lossy(&stdout.contents()).into_owned(),
            stderr: String::from_utf8_lossy(&stderr.contents()).into_owned(),
            instantiate: t1 - t0,
            run: t2 - t1,
            peak_memory,
            peak_rss: peak_rss().zip(rss_before).map(|(peak, before)| peak.saturating_sub(before)),
        })
    }
}

/// Resets the process's peak RSS (VmHWM), so the next reading is this
/// instance's (Linux: /proc/self/clear_refs, 5).
fn reset_peak_rss() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

fn peak_rss() -> Option<u64> {
    status_bytes("VmHWM:")
}

fn rss() -> Option<u64> {
    status_bytes("VmRSS:")
}

fn status_bytes(key: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(key))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb * 1024)
}

fn engine() -> Result<Engine> {
    let mut c = Config::new();
    // CPython 3.15 for wasm32-wasip1 (wasi-sdk 34) uses wasm exceptions;
    // wasmtime 48 has them only with its `gc` feature and a collector.
    c.wasm_component_model(true)
        .wasm_exceptions(true)
        .gc_support(true)
        .collector(Collector::DeferredReferenceCounting)
        .parallel_compilation(true);
    Engine::new(&c).w()
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1 << 20) as f64)
}

fn ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1000.0;
    if ms < 10.0 { format!("{ms:.2} ms") } else { format!("{ms:.0} ms") }
}

fn p50(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

const GROUPBY: &str = r#"
import numpy as np, pandas as pd, matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
df = pd.DataFrame({"k": np.arange(1000) % 7, "v": np.arange(1000, dtype=float)})
g = df.groupby("k")["v"].agg(["count", "sum", "mean"])
for k, row in g.iterrows():
    print(f"{k} {int(row['count'])} {row['sum']:.1f} {row['mean']:.6f}")
fig, ax = plt.subplots()
g["sum"].plot.bar(ax=ax)
fig.savefig("/tmp/groupby.png")
with open("/tmp/groupby.png", "rb") as f:
    head = f.read(8)
print("png", head.hex())
"#;

/// The lines GROUPBY must print for k = 0..7 (v = 0..1000, k = v % 7).
fn groupby_expected() -> Vec<String> {
    (0..7u64)
        .map(|k| {
            let vs: Vec<u64> = (0..1000).filter(|v| v % 7 == k).collect();
            let sum: u64 = vs.iter().sum();
            format!("{k} {} {sum}.0 {:.6}", vs.len(), sum as f64 / vs.len() as f64)
        })
        .collect()
}

const PNG_MAGIC: [u8; 8] = [0x89, b'P', b'N', b'G', 0x0d, 0x0a, 0x1a, 0x0a];

const SOCKET: &str = r#"
import socket, urllib.request
def create_connection():
    socket.create_connection(("127.0.0.1", 80), timeout=5)
def socket_connect():
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.connect(("127.0.0.1", 80))
def urlopen():
    urllib.request.urlopen("http://127.0.0.1/", timeout=5)
for f in (create_connection, socket_connect, urlopen):
    try:
        f()
        print(f.__name__, "CONNECTED")
    except Exception as e:
        print(f.__name__, "OSError" if isinstance(e, OSError) else "not-OSError", type(e).__name__, e)
"#;

const READ_ONLY: &str = r#"
for path in ("/usr/local/lib/new.txt", "/usr/local/lib/python315.zip",
             "/usr/local/lib/python315.zip/matplotlib/mpl-data/matplotlibrc"):
    try:
        with open(path, "a") as f:
            f.write("x")
        print("WROTE", path)
    except OSError as e:
        print("OSError", path, type(e).__name__, e)
"#;

const SNAPSHOT_STATE: &str = r#"
import sys
print(len(sys.modules), *(m in sys.modules for m in ("numpy", "pandas", "matplotlib")))
print(sys.version.split()[0], sys.prefix, sys.path)
"#;

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1);
    let mut out_dir = None;
    let mut runs = 5usize;
    let mut recompile = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--runs" => runs = args.next().context("--runs N")?.parse()?,
            "--recompile" => recompile = true,
            _ if out_dir.is_none() => out_dir = Some(PathBuf::from(a)),
            _ => bail!("usage: ephemeral-python-sci-measure OUT_DIR [--runs N] [--recompile]"),
        }
    }
    let out = out_dir.context("usage: ephemeral-python-sci-measure OUT_DIR [--runs N] [--recompile]")?;
    ensure!(runs >= 1, "--runs must be at least 1");
    let wasm_path = out.join("python3-sci.wasm");
    let cwasm_path = out.join("python3-sci.cwasm");
    let root = out.join("python3-sci.root");
    let preopens: Vec<(PathBuf, String)> = std::fs::read_to_string(out.join("python3-sci.preopens"))
        .context("reading python3-sci.preopens")?
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| {
            let (host, guest) = l.split_once(' ').context("a preopens line is HOST GUEST")?;
            Ok((root.join(host), guest.to_string()))
        })
        .collect::<Result<_>>()?;

    let engine = engine()?;
    let wasm_size = std::fs::metadata(&wasm_path).with_context(|| format!("{}", wasm_path.display()))?.len();
    println!("component {}: {} bytes ({})", wasm_path.display(), wasm_size, mib(wasm_size));

    // Compile (or reuse a .cwasm this engine accepts), save, load.
    // A .cwasm older than the component is stale.
    let stale = match (std::fs::metadata(&cwasm_path), std::fs::metadata(&wasm_path)) {
        (Ok(c), Ok(w)) => c.modified()? < w.modified()?,
        _ => true,
    };
    let loaded = if recompile || stale {
        None
    } else {
        // SAFETY: the file is this harness's own output for this engine.
        unsafe { Component::deserialize_file(&engine, &cwasm_path) }.ok()
    };
    let component = match loaded {
        Some(c) => {
            println!("reused {} (pass --recompile to time the compile)", cwasm_path.display());
            c
        }
        None => {
            let wasm = std::fs::read(&wasm_path)?;
            reset_peak_rss();
            let t = Instant::now();
            let cwasm = engine.precompile_component(&wasm).w().context("compiling the component")?;
            let compile = t.elapsed();
            println!(
                "compile: {:.1} s (Cranelift, parallel, under nice); peak RSS while compiling {}",
                compile.as_secs_f64(),
                peak_rss().map(mib).unwrap_or_else(|| "?".into())
            );
            std::fs::write(&cwasm_path, &cwasm)?;
            println!("cwasm {}: {} bytes ({})", cwasm_path.display(), cwasm.len(), mib(cwasm.len() as u64));
            let t = Instant::now();
            // SAFETY: written just above by this engine.
            let c = unsafe { Component::deserialize_file(&engine, &cwasm_path) }.w()?;
            println!("load .cwasm (deserialize_file): {}", ms(t.elapsed()));
            c
        }
    };
    let cwasm_size = std::fs::metadata(&cwasm_path)?.len();
    println!("cwasm size: {} bytes ({})", cwasm_size, mib(cwasm_size));

    let mut linker: Linker<State> = Linker::new(&engine);
    wasmtime_wasi::p2::add_to_linker_sync(&mut linker).w()?;
    let t = Instant::now();
    let pre: InstancePre<State> = linker.instantiate_pre(&component).w()?;
    let pre = CommandPre::new(pre).w()?;
    println!("instantiate_pre: {}", ms(t.elapsed()));
    let runner = Runner { engine: engine.clone(), pre, preopens };

    let scratch = std::env::temp_dir().join(format!("py-sci-measure-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let fresh_tmp = |i: usize, case: &str| -> Result<PathBuf> {
        let d = scratch.join(format!("{case}-{i}"));
        std::fs::create_dir_all(&d)?;
        Ok(d)
    };

    let mut failures = Vec::new();
    let mut table = Vec::new();

    // What the snapshot holds (one run, not timed).
    let o = runner.run(&["-c", SNAPSHOT_STATE], Some(&fresh_tmp(0, "state")?))?;
    println!("snapshot state (modules, numpy/pandas/matplotlib imported?):\n{}{}", o.stdout, o.stderr);

    type Check = Box<dyn Fn(&Outcome, &Path) -> Result<()>>;
    let cases: Vec<(&str, Vec<&str>, bool, Check)> = vec![
        (
            "print(1)",
            vec!["-c", "print(1)"],
            false,
            Box::new(|o: &Outcome, _: &Path| {
                ensure!(o.exit == 0 && o.stdout == "1\n", "exit {} stdout {:?}", o.exit, o.stdout);
                Ok(())
            }),
        ),
        (
            "import numpy, pandas, matplotlib.pyplot",
            vec!["-c", "import numpy, pandas, matplotlib.pyplot"],
            true,
            Box::new(|o: &Outcome, _: &Path| {
                ensure!(o.exit == 0, "exit {}", o.exit);
                Ok(())
            }),
        ),
        (
            "print(1) then os._exit(0) (no interpreter finalization)",
            vec!["-c", "import os; print(1, flush=True); os._exit(0)"],
            false,
            Box::new(|o: &Outcome, _: &Path| {
                ensure!(o.exit == 0 && o.stdout == "1\n", "exit {} stdout {:?}", o.exit, o.stdout);
                Ok(())
            }),
        ),
        (
            "import numpy",
            vec!["-c", "import numpy"],
            false,
            Box::new(|o: &Outcome, _: &Path| {
                ensure!(o.exit == 0, "exit {}", o.exit);
                Ok(())
            }),
        ),
        (
            "pandas groupby (1,000 rows) + Agg PNG, fresh /tmp",
            vec!["-c", GROUPBY],
            true,
            Box::new(check_groupby),
        ),
    ];
    for (name, argv, needs_tmp, check) in &cases {
        let mut inst = Vec::new();
        let mut run = Vec::new();
        let mut total = Vec::new();
        let mut mem = 0usize;
        let mut rss = 0u64;
        for i in 0..runs {
            let tmp = fresh_tmp(i, &name.replace(|c: char| !c.is_ascii_alphanumeric(), "_"))?;
            let o = runner.run(argv, needs_tmp.then_some(tmp.as_path()))?;
            if let Err(e) = check(&o, &tmp) {
                println!("FAIL {name}: {e:#}\n--- stdout ---\n{}--- stderr ---\n{}", o.stdout, o.stderr);
                failures.push(format!("{name}: {e:#}"));
                break;
            }
            if i == 0 && !o.stderr.is_empty() {
                println!("{name}: stderr of run 1:\n{}", o.stderr);
            }
            println!(
                "  {name} #{}: instantiate {} run {} peak linear memory {} RSS growth {}",
                i + 1,
                ms(o.instantiate),
                ms(o.run),
                mib(o.peak_memory as u64),
                o.peak_rss.map(mib).unwrap_or_else(|| "?".into())
            );
            mem = mem.max(o.peak_memory);
            rss = rss.max(o.peak_rss.unwrap_or(0));
            inst.push(o.instantiate);
            run.push(o.run);
            total.push(o.instantiate + o.run);
        }
        if !total.is_empty() {
            table.push(format!(
                "| {name} | {} | {} | {} | {} | {} | {} |",
                total.len(),
                ms(p50(inst)),
                ms(p50(run)),
                ms(p50(total)),
                mib(mem as u64),
                mib(rss)
            ));
        }
    }

    // The same groupby with a matplotlib cache kept between runs (its first
    // run fills it; the p50 is over the runs after it).
    {
        let keep = fresh_tmp(0, "kept-cache")?;
        let mut total = Vec::new();
        for i in 0..=runs {
            let o = runner.run(&["-c", GROUPBY], Some(&keep))?;
            if let Err(e) = check_groupby(&o, &keep) {
                failures.push(format!("groupby, kept cache: {e:#}"));
                println!("FAIL groupby, kept cache: {e:#}\n{}{}", o.stdout, o.stderr);
                break;
            }
            println!("  groupby, kept /tmp #{}: instantiate {} run {}", i, ms(o.instantiate), ms(o.run));
            if i > 0 {
                total.push(o.instantiate + o.run);
            }
        }
        if !total.is_empty() {
            table.push(format!(
                "| pandas groupby + Agg PNG, /tmp kept (matplotlib cache warm) | {} | | | {} | | |",
                total.len(),
                ms(p50(total))
            ));
        }
    }

    // No network, read-only root.
    let o = runner.run(&["-c", SOCKET], Some(&fresh_tmp(0, "socket")?))?;
    println!("sockets: exit {}\n{}{}", o.exit, o.stdout, o.stderr);
    if o.exit != 0 || o.stdout.contains("CONNECTED") || o.stdout.lines().count() != 3 {
        failures.push(format!("sockets: something connected or the probe failed: {:?} {:?}", o.stdout, o.stderr));
    }
    for line in o.stdout.lines().filter(|l| l.contains("not-OSError")) {
        failures.push(format!("sockets: refused, but not with an OSError: {line}"));
    }
    let o = runner.run(&["-c", READ_ONLY], Some(&fresh_tmp(0, "ro")?))?;
    println!("writes into the root: exit {}\n{}{}", o.exit, o.stdout, o.stderr);
    if o.stdout.contains("WROTE") || o.stdout.lines().count() != 3 {
        failures.push(format!("read-only root: {:?} {:?}", o.stdout, o.stderr));
    }
    // Random state baked into a snapshot is shared by every instance.
    let rand = "import random, numpy; print(random.random(), numpy.random.rand(), hash('abc'))";
    let a = runner.run(&["-c", rand], None)?;
    let b = runner.run(&["-c", rand], None)?;
    println!(
        "random.random(), numpy.random.rand(), hash('abc') in two fresh instances: {:?} / {:?} -> {}",
        a.stdout.trim(),
        b.stdout.trim(),
        if a.stdout == b.stdout { "IDENTICAL (seeded in the snapshot)" } else { "different" }
    );
    let o = runner.run(&["-c", "import sys; sys.exit(3)"], None)?;
    println!("sys.exit(3): exit status seen by the host {}", o.exit);

    println!("\n| case | runs | instantiate p50 | run p50 | total p50 | peak linear memory | peak RSS growth |");
    println!("|---|---|---|---|---|---|---|");
    for row in &table {
        println!("{row}");
    }
    let _ = std::fs::remove_dir_all(&scratch);
    if !failures.is_empty() {
        bail!("failed: {}", failures.join("; "));
    }
    Ok(())
}

fn check_groupby(o: &Outcome, tmp: &Path) -> Result<()> {
    ensure!(o.exit == 0, "exit {}", o.exit);
    let lines: Vec<&str> = o.stdout.lines().collect();
    let want = groupby_expected();
    ensure!(lines.len() == want.len() + 1, "{} lines, not {}", lines.len(), want.len() + 1);
    for (got, want) in lines.iter().zip(&want) {
        ensure!(got == want, "printed {got:?}, expected {want:?}");
    }
    ensure!(lines[7] == "png 89504e470d0a1a0a", "in-guest PNG header {:?}", lines[7]);
    let png = std::fs::read(tmp.join("groupby.png")).context("reading groupby.png on the host")?;
    ensure!(png.len() > 1000 && png[..8] == PNG_MAGIC, "groupby.png: {} bytes, header {:02x?}", png.len(), &png[..8.min(png.len())]);
    Ok(())
}
