//! Any bytes as a shell command in the real sandbox: the shell may refuse
//! them, but must never crash (trap) and the host must never fail.
//!
//! cargo install cargo-fuzz
//! cd runtime/fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run shell_command -- -max_total_time=60
//! (RUSTC_BOOTSTRAP lets the stable toolchain take the sanitizer flags.)

#![no_main]

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use ephemeral_runtime::{EXIT_TRAP, Limits, Runtime, RuntimeConfig};
use libfuzzer_sys::fuzz_target;

fn runtime() -> Arc<Runtime> {
    static RT: OnceLock<Arc<Runtime>> = OnceLock::new();
    RT.get_or_init(|| Runtime::new(RuntimeConfig::default()).expect("runtime"))
        .clone()
}

fuzz_target!(|data: &[u8]| {
    let Ok(cmd) = std::str::from_utf8(data) else {
        return;
    };
    let limits = Limits {
        command_timeout: Duration::from_millis(100),
        ..Limits::default()
    };
    let mut sb = runtime().sandbox().limits(limits).build().expect("sandbox");
    let out = sb.exec_captured(cmd).expect("the host never fails");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.outcome.exit_code != EXIT_TRAP, "trap on {cmd:?}: {stderr}");
    assert!(!stderr.contains("panicked at"), "panic on {cmd:?}: {stderr}");
});
