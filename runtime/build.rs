//! Builds the WebAssembly components this crate embeds: the shell every
//! sandbox runs (`shell-wasi`, for `wasm32-wasip2`) and the small test
//! guests that try to break the sandbox's rules. Doing it here means a plain
//! `cargo build` from a fresh clone gives a runtime with its shell inside.
//!
//! The nested cargo uses its own target folder, so it never waits on the
//! lock of the build that runs this script.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const WASM_TARGET: &str = "wasm32-wasip2";
const GUESTS: &[&str] = &["ephemeral-shell", "ephemeral-test-guests"];

fn main() {
    let manifest_dir = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("set by cargo"));
    let workspace = manifest_dir
        .parent()
        .expect("runtime/ sits in the workspace");
    for watched in [
        "shell-wasi/src",
        "shell-wasi/Cargo.toml",
        "runtime/wit",
        "runtime/test-guests",
        "Cargo.lock",
    ] {
        println!(
            "cargo:rerun-if-changed={}",
            workspace.join(watched).display()
        );
    }
    println!("cargo:rerun-if-env-changed=EPHEMERAL_WASM_TARGET_DIR");

    let target_dir = wasm_target_dir();
    build_guests(workspace, &target_dir);
    let artifacts = target_dir.join(WASM_TARGET).join("release");
    let shell = artifacts.join("ephemeral-shell.wasm");
    println!("cargo:rustc-env=EPHEMERAL_SHELL_WASM={}", shell.display());
    write_shell_digest(&shell);
    println!(
        "cargo:rustc-env=EPHEMERAL_TEST_GUESTS_DIR={}",
        artifacts.display()
    );
}

/// `$OUT_DIR/shell_digest.rs`: the shell's BLAKE3 digest, so that a
/// process names the shell's cache entry without hashing its 8 MB.
fn write_shell_digest(shell: &Path) {
    let bytes = std::fs::read(shell)
        .unwrap_or_else(|e| panic!("cannot read the shell {}: {e}", shell.display()));
    let digest = blake3::hash(&bytes);
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    let code = format!(
        "/// BLAKE3 of [`SHELL_WASM`], computed by the build script.\n\
         pub static SHELL_DIGEST: [u8; 32] = {:?};\n",
        digest.as_bytes()
    );
    std::fs::write(out.join("shell_digest.rs"), code)
        .unwrap_or_else(|e| panic!("cannot write the shell's digest: {e}"));
}

/// `<cargo target dir>/wasm`, found from OUT_DIR
/// (`<target>/<profile>/build/<pkg>-<hash>/out`), unless overridden.
fn wasm_target_dir() -> PathBuf {
    if let Some(dir) = env::var_os("EPHEMERAL_WASM_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").expect("set by cargo"));
    let target = out_dir.ancestors().nth(4).unwrap_or(&out_dir);
    target.join("wasm")
}

fn build_guests(workspace: &Path, target_dir: &Path) {
    let cargo = env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(workspace)
        .args([
            "build",
            "--release",
            "--target",
            WASM_TARGET,
            "--target-dir",
        ])
        .arg(target_dir);
    for pkg in GUESTS {
        cmd.args(["-p", pkg]);
    }
    // The outer build's settings (its target, wrappers such as clippy's,
    // its flags) must not leak into the guest build.
    for (key, _) in env::vars_os() {
        let key = key.to_string_lossy();
        let keep = key == "CARGO_HOME" || key == "CARGO_MAKEFLAGS";
        if (key.starts_with("CARGO_") && !keep)
            || matches!(
                &*key,
                "RUSTC_WRAPPER" | "RUSTC_WORKSPACE_WRAPPER" | "RUSTFLAGS" | "TARGET"
            )
        {
            cmd.env_remove(&*key);
        }
    }
    cmd.env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("CARGO_PROFILE_RELEASE_STRIP", "debuginfo")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "3");
    let status = cmd
        .status()
        .unwrap_or_else(|e| panic!("cannot run cargo to build the guests: {e}"));
    if !status.success() {
        panic!(
            "building the WebAssembly guests failed (see above). If the target is missing, \
             run `rustup target add {WASM_TARGET}` (the README's commands do this)."
        );
    }
}
