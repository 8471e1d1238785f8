//! `node` for the sandbox: the Boa JavaScript engine (pure Rust) with a
//! small Node-style runtime written in JavaScript (`runtime.js`: process,
//! console, require with fs/path/os/util/events/…, timers, Buffer). This
//! file gives that runtime its few host powers (files, stdio, clock, exit)
//! and runs the event loop: microtasks, then one macrotask at a time, sleeping
//! in slices of at most 50 ms so the host's deadline can stop us.

use std::cell::RefCell;
use std::io::{Read, Write};
use std::rc::Rc;
use std::time::{Duration, Instant, UNIX_EPOCH};

use boa_engine::builtins::promise::{OperationType, PromiseState};
use boa_engine::context::HostHooks;
use boa_engine::object::ObjectInitializer;
use boa_engine::object::builtins::{AlignedVec, JsArray, JsArrayBuffer, JsPromise, JsUint8Array};
use boa_engine::property::Attribute;
use boa_engine::{
    Context, JsError, JsObject, JsResult, JsString, JsValue, NativeFunction, Source, js_string,
};

#[cfg(target_os = "wasi")]
mod wasi_imports {
    wit_bindgen::generate!({
        path: "wit",
        world: "node",
        with: {
            "wasi:cli/exit@0.2.12": generate,
            "wasi:random/random@0.2.12": generate,
            "ephemeral:sandbox/process@0.1.0": generate,
        },
    });
    pub use self::ephemeral::sandbox::process;
    pub use self::wasi::cli::exit::exit_with_code;
    pub use self::wasi::random::random::get_random_bytes;
}

const RUNTIME_JS: &str = include_str!("runtime.js");

/// Ends the process with `code` (mod 256), flushing stdio first. On WASI
/// this is `exit-with-code`: wasi-libc's `exit` only says success/failure.
fn exit(code: i32) -> ! {
    let _ = std::io::stdout().flush();
    let _ = std::io::stderr().flush();
    #[cfg(target_os = "wasi")]
    wasi_imports::exit_with_code((code & 0xff) as u8);
    std::process::exit(code & 0xff)
}

fn random_bytes(n: u64) -> Vec<u8> {
    #[cfg(target_os = "wasi")]
    {
        wasi_imports::get_random_bytes(n)
    }
    #[cfg(not(target_os = "wasi"))]
    {
        let mut buf = vec![0u8; n as usize];
        std::fs::File::open("/dev/urandom")
            .and_then(|mut f| f.read_exact(&mut buf))
            .expect("/dev/urandom");
        buf
    }
}

/// Promises rejected with no handler yet; the runtime reports the ones still
/// unhandled after the microtasks have drained.
#[derive(Default)]
struct Hooks {
    rejected: RefCell<Vec<JsObject>>,
}

impl HostHooks for Hooks {
    fn promise_rejection_tracker(
        &self,
        promise: &JsObject<boa_engine::builtins::promise::Promise>,
        operation: OperationType,
        _context: &mut Context,
    ) {
        let promise = promise.clone().upcast();
        let mut list = self.rejected.borrow_mut();
        match operation {
            OperationType::Reject => list.push(promise),
            OperationType::Handle => list.retain(|p| !JsObject::equals(p, &promise)),
        }
    }
}

thread_local! {
    static HOOKS: Rc<Hooks> = Rc::new(Hooks::default());
    static START: Instant = Instant::now();
}

fn arg(args: &[JsValue], i: usize) -> JsValue {
    args.get(i).cloned().unwrap_or_default()
}

fn string_arg(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<String> {
    Ok(arg(args, i).to_string(ctx)?.to_std_string_lossy())
}

/// Bytes of a string (UTF-8), a Uint8Array or an ArrayBuffer.
fn bytes_arg(args: &[JsValue], i: usize, ctx: &mut Context) -> JsResult<Vec<u8>> {
    let value = arg(args, i);
    if let Some(obj) = value.as_object() {
        if let Ok(array) = JsUint8Array::from_object(obj.clone()) {
            return array.to_vec(ctx);
        }
        if let Ok(buffer) = JsArrayBuffer::from_object(obj.clone()) {
            return Ok(buffer.to_vec().unwrap_or_default());
        }
    }
    Ok(value.to_string(ctx)?.to_std_string_lossy().into_bytes())
}

fn array_buffer(bytes: Vec<u8>, ctx: &mut Context) -> JsResult<JsValue> {
    let block = AlignedVec::from_iter(0, bytes);
    Ok(JsArrayBuffer::from_byte_block(block, ctx)?.into())
}

/// An I/O error as the errno name the runtime turns into a Node error.
fn io_error(e: std::io::Error) -> JsError {
    use std::io::ErrorKind as K;
    let code = match e.kind() {
        K::NotFound => "ENOENT",
        K::AlreadyExists => "EEXIST",
        K::PermissionDenied => "EACCES",
        K::NotADirectory => "ENOTDIR",
        K::IsADirectory => "EISDIR",
        K::DirectoryNotEmpty => "ENOTEMPTY",
        K::InvalidInput => "EINVAL",
        K::StorageFull => "ENOSPC",
        K::QuotaExceeded => "EDQUOT",
        K::ReadOnlyFilesystem => "EROFS",
        K::CrossesDevices => "EXDEV",
        K::Unsupported => "ENOSYS",
        K::InvalidFilename => "ENAMETOOLONG",
        _ => match e.raw_os_error() {
            Some(n) => return JsError::from_opaque(JsValue::from(js_string!(format!("EIO:{n}")))),
            None => "EIO",
        },
    };
    JsError::from_opaque(JsValue::from(js_string!(code)))
}

type Native = fn(&JsValue, &[JsValue], &mut Context) -> JsResult<JsValue>;

/// `child_process`'s one host power: runs a program to its end through the
/// sandbox's process interface. Arguments: argv, env as `[k, v, …]`, cwd,
/// stdin bytes, the stdout and stderr modes (`pipe`, `inherit`, `ignore`),
/// whether stderr joins stdout, and a timeout in ms (0: none). Answers
/// `{status, stdout, stderr, limit, timedOut}` or throws the host's refusal.
fn run_program(args: &[JsValue], ctx: &mut Context) -> JsResult<JsValue> {
    let strings = |i: usize, ctx: &mut Context| -> JsResult<Vec<String>> {
        let value = arg(args, i);
        let Some(obj) = value.as_object() else {
            return Ok(Vec::new());
        };
        let array = JsArray::from_object(obj.clone())?;
        let len = array.length(ctx)?;
        (0..len)
            .map(|k| Ok(array.get(k, ctx)?.to_string(ctx)?.to_std_string_lossy()))
            .collect()
    };
    let argv = strings(0, ctx)?;
    let flat_env = strings(1, ctx)?;
    let env: Vec<(String, String)> = flat_env
        .chunks(2)
        .filter_map(|kv| Some((kv.first()?.clone(), kv.get(1)?.clone())))
        .collect();
    let cwd = string_arg(args, 2, ctx)?;
    let stdin = bytes_arg(args, 3, ctx)?;
    let stdout = string_arg(args, 4, ctx)?;
    let stderr = string_arg(args, 5, ctx)?;
    let merge = arg(args, 6).to_boolean();
    let timeout = arg(args, 7).to_number(ctx)?;
    let timeout_ms = (timeout > 0.0).then(|| timeout.ceil() as u64);
    let finished = host_run(argv, env, cwd, stdin, &stdout, &stderr, merge, timeout_ms)
        .map_err(|msg| JsError::from_opaque(js_string!(msg).into()))?;
    let mut result = ObjectInitializer::new(ctx);
    result.property(js_string!("status"), finished.0, Attribute::all());
    let (out, err) = (finished.1, finished.2);
    let out = array_buffer(out, result.context())?;
    result.property(js_string!("stdout"), out, Attribute::all());
    let err = array_buffer(err, result.context())?;
    result.property(js_string!("stderr"), err, Attribute::all());
    let limit: JsValue = match finished.3 {
        Some(l) => js_string!(l).into(),
        None => JsValue::null(),
    };
    result.property(js_string!("limit"), limit, Attribute::all());
    Ok(result.build().into())
}

/// (status, stdout, stderr, limit) of a program run by the host.
type Ran = (i32, Vec<u8>, Vec<u8>, Option<String>);

#[cfg(target_os = "wasi")]
#[allow(clippy::too_many_arguments)]
fn host_run(
    argv: Vec<String>,
    env: Vec<(String, String)>,
    cwd: String,
    stdin: Vec<u8>,
    stdout: &str,
    stderr: &str,
    merge: bool,
    timeout_ms: Option<u64>,
) -> Result<Ran, String> {
    use wasi_imports::process::{self, OutputMode};
    let mode = |m: &str| match m {
        "inherit" => OutputMode::Inherit,
        "ignore" => OutputMode::Discard,
        _ => OutputMode::Capture,
    };
    let _ = std::io::stdout().flush();
    let done = process::run(&process::Command {
        program: argv.first().cloned().unwrap_or_default(),
        args: argv,
        env,
        cwd,
        stdin,
        stdout: mode(stdout),
        stderr: mode(stderr),
        stderr_to_stdout: merge,
        timeout_ms,
    })?;
    Ok((done.status, done.stdout, done.stderr, done.limit))
}

/// Natively (for debugging the runtime) there is no sandbox to ask.
#[cfg(not(target_os = "wasi"))]
#[allow(clippy::too_many_arguments)]
fn host_run(
    _argv: Vec<String>,
    _env: Vec<(String, String)>,
    _cwd: String,
    _stdin: Vec<u8>,
    _stdout: &str,
    _stderr: &str,
    _merge: bool,
    _timeout_ms: Option<u64>,
) -> Result<Ran, String> {
    Err("ENOSYS".into())
}

fn natives() -> Vec<(&'static str, usize, Native)> {
    vec![
        ("run", 8, |_, a, ctx| run_program(a, ctx)),
        ("write", 2, |_, a, ctx| {
            let fd = arg(a, 0).to_i32(ctx)?;
            let bytes = bytes_arg(a, 1, ctx)?;
            // A closed stream (output limit) is not the script's fault.
            let _ = if fd == 2 {
                std::io::stderr().write_all(&bytes)
            } else {
                let mut out = std::io::stdout().lock();
                out.write_all(&bytes).and_then(|_| out.flush())
            };
            Ok(JsValue::undefined())
        }),
        ("readFile", 1, |_, a, ctx| {
            let path = string_arg(a, 0, ctx)?;
            let bytes = std::fs::read(&path).map_err(io_error)?;
            array_buffer(bytes, ctx)
        }),
        ("writeFile", 3, |_, a, ctx| {
            let path = string_arg(a, 0, ctx)?;
            let bytes = bytes_arg(a, 1, ctx)?;
            let flag = string_arg(a, 2, ctx)?;
            let mut opts = std::fs::OpenOptions::new();
            match flag.as_str() {
                "a" => opts.append(true).create(true),
                "ax" => opts.append(true).create_new(true),
                "wx" => opts.write(true).create_new(true),
                _ => opts.write(true).create(true).truncate(true),
            };
            let mut file = opts.open(&path).map_err(io_error)?;
            file.write_all(&bytes).map_err(io_error)?;
            Ok(JsValue::undefined())
        }),
        ("stat", 2, |_, a, ctx| {
            let path = string_arg(a, 0, ctx)?;
            let follow = arg(a, 1).to_boolean();
            let meta = if follow {
                std::fs::metadata(&path)
            } else {
                std::fs::symlink_metadata(&path)
            }
            .map_err(io_error)?;
            let ft = meta.file_type();
            let kind = if ft.is_symlink() {
                "symlink"
            } else if ft.is_dir() {
                "dir"
            } else if ft.is_file() {
                "file"
            } else {
                "other"
            };
            let ms = |t: std::io::Result<std::time::SystemTime>| {
                t.ok()
                    .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
                    .map_or(0.0, |d| d.as_secs_f64() * 1000.0)
            };
            let values = [
                JsValue::from(js_string!(kind)),
                JsValue::from(meta.len() as f64),
                JsValue::from(ms(meta.modified())),
                JsValue::from(ms(meta.accessed())),
                JsValue::from(ms(meta.created())),
            ];
            Ok(JsArray::from_iter(values, ctx).into())
        }),
        ("readdir", 1, |_, a, ctx| {
            let path = string_arg(a, 0, ctx)?;
            let mut names = Vec::new();
            for entry in std::fs::read_dir(&path).map_err(io_error)? {
                let entry = entry.map_err(io_error)?;
                let kind = match entry.file_type() {
                    Ok(t) if t.is_symlink() => "symlink",
                    Ok(t) if t.is_dir() => "dir",
                    Ok(t) if t.is_file() => "file",
                    _ => "other",
                };
                names.push((entry.file_name().to_string_lossy().into_owned(), kind));
            }
            names.sort();
            let values: Vec<JsValue> = names
                .into_iter()
                .map(|(n, k)| {
                    let pair = [JsValue::from(js_string!(n)), JsValue::from(js_string!(k))];
                    JsArray::from_iter(pair, ctx).into()
                })
                .collect();
            Ok(JsArray::from_iter(values, ctx).into())
        }),
        ("mkdir", 1, |_, a, ctx| {
            std::fs::create_dir(string_arg(a, 0, ctx)?).map_err(io_error)?;
            Ok(JsValue::undefined())
        }),
        ("unlink", 1, |_, a, ctx| {
            std::fs::remove_file(string_arg(a, 0, ctx)?).map_err(io_error)?;
            Ok(JsValue::undefined())
        }),
        ("rmdir", 1, |_, a, ctx| {
            std::fs::remove_dir(string_arg(a, 0, ctx)?).map_err(io_error)?;
            Ok(JsValue::undefined())
        }),
        ("rename", 2, |_, a, ctx| {
            let from = string_arg(a, 0, ctx)?;
            let to = string_arg(a, 1, ctx)?;
            std::fs::rename(from, to).map_err(io_error)?;
            Ok(JsValue::undefined())
        }),
        ("symlink", 2, |_, a, ctx| {
            let target = string_arg(a, 0, ctx)?;
            let link = string_arg(a, 1, ctx)?;
            #[cfg(unix)]
            std::os::unix::fs::symlink(target, link).map_err(io_error)?;
            #[cfg(target_os = "wasi")]
            {
                unsafe extern "C" {
                    fn symlink(
                        target: *const std::ffi::c_char,
                        link: *const std::ffi::c_char,
                    ) -> i32;
                }
                let t = std::ffi::CString::new(target)
                    .map_err(|_| JsError::from_opaque(js_string!("EINVAL").into()))?;
                let l = std::ffi::CString::new(link)
                    .map_err(|_| JsError::from_opaque(js_string!("EINVAL").into()))?;
                // SAFETY: both are valid NUL-terminated strings that outlive the call.
                if unsafe { symlink(t.as_ptr(), l.as_ptr()) } != 0 {
                    return Err(io_error(std::io::Error::last_os_error()));
                }
            }
            Ok(JsValue::undefined())
        }),
        ("readlink", 1, |_, a, ctx| {
            let target = std::fs::read_link(string_arg(a, 0, ctx)?).map_err(io_error)?;
            Ok(js_string!(target.to_string_lossy().into_owned()).into())
        }),
        ("chdir", 1, |_, a, ctx| {
            let path = string_arg(a, 0, ctx)?;
            change_dir(&path).map_err(io_error)?;
            Ok(JsValue::undefined())
        }),
        ("readStdin", 0, |_, _, ctx| {
            let mut bytes = Vec::new();
            let _ = std::io::stdin().lock().read_to_end(&mut bytes);
            array_buffer(bytes, ctx)
        }),
        ("sleep", 1, |_, a, ctx| {
            let ms = arg(a, 0).to_number(ctx)?;
            if ms > 0.0 {
                std::thread::sleep(Duration::from_secs_f64(ms.min(50.0) / 1000.0));
            }
            Ok(JsValue::undefined())
        }),
        ("hrtime", 0, |_, _, _| {
            Ok(JsValue::from(
                START.with(|s| s.elapsed().as_secs_f64() * 1000.0),
            ))
        }),
        ("exit", 1, |_, a, ctx| exit(arg(a, 0).to_i32(ctx)?)),
        ("utf8Decode", 1, |_, a, ctx| {
            let bytes = bytes_arg(a, 0, ctx)?;
            Ok(js_string!(String::from_utf8_lossy(&bytes).into_owned()).into())
        }),
        ("utf8Encode", 1, |_, a, ctx| {
            let bytes = bytes_arg(a, 0, ctx)?;
            array_buffer(bytes, ctx)
        }),
        ("randomBytes", 1, |_, a, ctx| {
            let n = arg(a, 0).to_length(ctx)?;
            array_buffer(random_bytes(n), ctx)
        }),
        ("compile", 2, |_, a, ctx| {
            // Evaluates `code` as a classic script named `filename`.
            let code = string_arg(a, 0, ctx)?;
            let filename = string_arg(a, 1, ctx)?;
            let source =
                Source::from_bytes(code.as_bytes()).with_path(std::path::Path::new(&filename));
            ctx.eval(source)
        }),
        ("promiseState", 1, |_, a, _| {
            let Some(obj) = arg(a, 0).as_object() else {
                return Ok(JsValue::undefined());
            };
            let Ok(promise) = JsPromise::from_object(obj.clone()) else {
                return Ok(JsValue::undefined());
            };
            Ok(match promise.state() {
                PromiseState::Pending => js_string!("pending").into(),
                PromiseState::Fulfilled(v) => v,
                PromiseState::Rejected(_) => js_string!("rejected").into(),
            })
        }),
        ("promiseResult", 1, |_, a, _| {
            let Some(obj) = arg(a, 0).as_object() else {
                return Ok(JsValue::undefined());
            };
            let Ok(promise) = JsPromise::from_object(obj.clone()) else {
                return Ok(JsValue::undefined());
            };
            Ok(match promise.state() {
                PromiseState::Pending => JsValue::undefined(),
                PromiseState::Fulfilled(v) | PromiseState::Rejected(v) => v,
            })
        }),
        ("isPromise", 1, |_, a, _| {
            Ok(JsValue::from(arg(a, 0).as_object().is_some_and(|o| {
                JsPromise::from_object(o.clone()).is_ok()
            })))
        }),
        ("takeUnhandled", 0, |_, _, ctx| {
            // [promise, reason, promise, reason, …] still rejected without a handler.
            let list = HOOKS.with(|h| std::mem::take(&mut *h.rejected.borrow_mut()));
            let mut values = Vec::new();
            for p in list {
                if let Ok(promise) = JsPromise::from_object(p.clone())
                    && let PromiseState::Rejected(reason) = promise.state()
                {
                    values.push(JsValue::from(p));
                    values.push(reason);
                }
            }
            Ok(JsArray::from_iter(values, ctx).into())
        }),
    ]
}

/// wasi-libc keeps a working folder that relative paths resolve against,
/// but Rust's std has no `chdir` on WASI.
fn change_dir(path: &str) -> std::io::Result<()> {
    #[cfg(target_os = "wasi")]
    {
        unsafe extern "C" {
            fn chdir(path: *const std::ffi::c_char) -> i32;
        }
        let c = std::ffi::CString::new(path).map_err(|_| std::io::ErrorKind::InvalidInput)?;
        // SAFETY: `c` is a valid NUL-terminated string that outlives the call.
        if unsafe { chdir(c.as_ptr()) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }
    #[cfg(not(target_os = "wasi"))]
    std::env::set_current_dir(path)
}

fn js_strings(items: impl IntoIterator<Item = String>, ctx: &mut Context) -> JsValue {
    let values: Vec<JsValue> = items.into_iter().map(|s| js_string!(s).into()).collect();
    JsArray::from_iter(values, ctx).into()
}

/// Calls `rt[name](args…)`; an exception is handed to `rt.fatal`, which
/// either runs `uncaughtException` listeners or prints it and exits 1.
fn call(rt: &JsObject, name: &str, args: &[JsValue], ctx: &mut Context) -> JsValue {
    let result = rt
        .get(JsString::from(name), ctx)
        .and_then(|f| match f.as_callable() {
            Some(f) => f.call(&JsValue::from(rt.clone()), args, ctx),
            None => panic!("runtime.js has no {name}"),
        });
    match result {
        Ok(v) => v,
        Err(err) => {
            fatal(rt, err, ctx);
            JsValue::undefined()
        }
    }
}

fn fatal(rt: &JsObject, err: JsError, ctx: &mut Context) {
    let value = match err.clone().into_opaque(ctx) {
        Ok(v) => v,
        Err(e) => {
            // Boa's runtime limits cannot be caught by scripts; report them
            // the way Node reports a stack overflow.
            let text = e.to_string();
            if text.contains("recursi") || text.contains("stack") {
                eprintln!("RangeError: Maximum call stack size exceeded");
            } else {
                eprintln!("{text}");
            }
            exit(1)
        }
    };
    let handler = rt.get(js_string!("fatal"), ctx).ok();
    let handled = handler
        .as_ref()
        .and_then(JsValue::as_callable)
        .map(|f| f.call(&JsValue::from(rt.clone()), &[value], ctx));
    match handled {
        Some(Ok(_)) => {}
        Some(Err(e)) => {
            eprintln!("node: error while reporting an uncaught exception: {e}");
            exit(7)
        }
        None => {
            eprintln!("{err}");
            exit(1)
        }
    }
}

fn drain(rt: &JsObject, ctx: &mut Context) {
    loop {
        // process.nextTick callbacks run before promise jobs, as in Node.
        call(rt, "runTicks", &[], ctx);
        if let Err(err) = ctx.run_jobs() {
            fatal(rt, err, ctx);
        }
        // Unhandled rejections (may schedule more microtasks via listeners).
        let more = call(rt, "afterMicrotasks", &[], ctx);
        if !more.to_boolean() {
            break;
        }
    }
}

fn main() {
    START.with(|_| {});
    let hooks = HOOKS.with(Rc::clone);
    let mut ctx = Context::builder()
        .host_hooks(hooks)
        .build()
        .expect("context");
    let ctx = &mut ctx;
    // Deep recursion is a RangeError, not a crash of the component.
    ctx.runtime_limits_mut().set_recursion_limit(10_000);
    ctx.runtime_limits_mut().set_stack_size_limit(256 * 1024);

    let mut native = ObjectInitializer::new(ctx);
    for (name, len, f) in natives() {
        native.function(NativeFunction::from_fn_ptr(f), JsString::from(name), len);
    }
    native.property(
        js_string!("platform"),
        js_string!(std::env::consts::OS),
        Attribute::all(),
    );
    let native = native.build();

    let argv = js_strings(std::env::args(), ctx);
    let env: Vec<String> = std::env::vars().flat_map(|(k, v)| [k, v]).collect();
    let env = js_strings(env, ctx);

    let source =
        Source::from_bytes(RUNTIME_JS).with_path(std::path::Path::new("node:internal/runtime"));
    let factory = match ctx.eval(source) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("node: runtime failed to load: {e}");
            exit(70)
        }
    };
    let rt = factory
        .as_callable()
        .expect("runtime.js evaluates to a function")
        .call(&JsValue::undefined(), &[native.into(), argv, env], ctx)
        .unwrap_or_else(|e| {
            eprintln!("node: runtime failed to start: {e}");
            exit(70)
        });
    let rt = rt.as_object().expect("runtime object").clone();

    call(&rt, "main", &[], ctx);
    loop {
        drain(&rt, ctx);
        let next = call(&rt, "next", &[], ctx).as_number().unwrap_or(-1.0);
        if next < 0.0 {
            // Nothing left: 'beforeExit' may schedule more.
            drain(&rt, ctx);
            if !call(&rt, "beforeExit", &[], ctx).to_boolean() {
                break;
            }
            continue;
        }
        if next > 0.0 {
            std::thread::sleep(Duration::from_secs_f64(next.min(50.0) / 1000.0));
            continue;
        }
        call(&rt, "runOne", &[], ctx);
    }
    let code = call(&rt, "exitCode", &[], ctx).as_number().unwrap_or(0.0);
    exit(code as i32)
}
