//! What every runtime test needs: one runtime per test binary (with its
//! compiled-component cache in cargo's temporary folder) and the test guests.

#![allow(dead_code)]

use std::sync::{Arc, OnceLock};

use ephemeral_runtime::{Captured, Limits, Program, Runtime, RuntimeConfig, Sandbox};

pub fn runtime() -> Arc<Runtime> {
    static RUNTIME: OnceLock<Arc<Runtime>> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            let config = RuntimeConfig {
                cache_dir: Some(cache_dir()),
                ..RuntimeConfig::default()
            };
            Runtime::new(config).expect("runtime starts")
        })
        .clone()
}

/// `./dev` names one cache for every test and server
/// (`$EPHEMERAL_CACHE_DIR`), so the scientific python is compiled once per
/// machine; elsewhere, one in cargo's temporary folder.
pub fn cache_dir() -> std::path::PathBuf {
    match std::env::var_os("EPHEMERAL_CACHE_DIR") {
        Some(dir) => dir.into(),
        None => std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("component-cache"),
    }
}

/// The bytes of a test guest built from `runtime/test-guests`.
pub fn guest_wasm(name: &str) -> Vec<u8> {
    let path = format!("{}/{name}.wasm", env!("EPHEMERAL_TEST_GUESTS_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("test guest {path}: {e}"))
}

pub fn guest(name: &str) -> Program {
    runtime()
        .load_program(name, &guest_wasm(name))
        .unwrap_or_else(|e| panic!("guest {name}: {e}"))
}

pub fn sandbox() -> Sandbox {
    runtime().sandbox().build().expect("sandbox")
}

pub fn sandbox_with(limits: Limits) -> Sandbox {
    runtime().sandbox().limits(limits).build().expect("sandbox")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// Runs a shell command and returns (stdout, stderr, exit code).
pub fn sh(sandbox: &mut Sandbox, command: &str) -> (String, String, i32) {
    let Captured {
        outcome,
        stdout,
        stderr,
    } = sandbox.exec_captured(command).expect("exec");
    (text(&stdout), text(&stderr), outcome.exit_code)
}
