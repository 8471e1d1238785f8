//! Running our static programs in the lab from a test: a nested cargo
//! builds them for musl in a target folder of its own (never the lock of
//! the `cargo test` that runs us), and `ephemeral-lab run` boots them.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use ephemeral_runtime::{RuntimeConfig, precompile_for_target};

/// The nested cargo's target folder, shared by every musl build.
pub fn target_dir() -> PathBuf {
    std::env::var_os("EPHEMERAL_LAB_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/ephemeral/target-musl"))
}

/// `cargo build --release --target x86_64-unknown-linux-musl ARGS…`; the
/// folder the programs land in.
pub fn build_musl(args: &[&str]) -> PathBuf {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml");
    let status = Command::new(cargo)
        .args([
            "build",
            "--locked",
            "--release",
            "--manifest-path",
            manifest,
        ])
        .args(["--target", "x86_64-unknown-linux-musl"])
        .args(args)
        .env("CARGO_TARGET_DIR", target_dir())
        .env_remove("CARGO_MAKEFLAGS")
        .env_remove("MAKEFLAGS")
        .stdin(Stdio::null())
        .status()
        .expect("cannot run cargo");
    assert!(status.success(), "the musl build of {args:?} failed");
    target_dir().join("x86_64-unknown-linux-musl/release")
}

/// A copy of `program` without debug information (the initramfs stays
/// small), in the nested target folder.
pub fn stripped(program: &Path) -> PathBuf {
    let out = target_dir().join(format!(
        "stripped-{}",
        program.file_name().unwrap().to_string_lossy()
    ));
    let status = Command::new("strip")
        .arg("-o")
        .arg(&out)
        .arg(program)
        .status()
        .expect("cannot run strip (binutils)");
    assert!(status.success(), "strip {} failed", program.display());
    out
}

/// `HOST:GUEST` for `--file`.
pub fn file(host: &Path, guest: &str) -> String {
    format!("{}:{guest}", host.display())
}

/// Boots the lab with `files` and runs `script` (busybox sh) there.
pub fn lab(files: &[String], script: &str) -> Output {
    let path = std::env::temp_dir().join(format!("lab-{}-{}.sh", std::process::id(), script.len()));
    std::fs::write(&path, script).expect("write the lab script");
    let mut command = Command::new(env!("CARGO_BIN_EXE_ephemeral-lab"));
    command.args(["run", "--timeout", "900"]);
    for f in files {
        command.args(["--file", f]);
    }
    let out = command
        .args(["--script", path.to_str().unwrap()])
        .output()
        .expect("cannot start ephemeral-lab");
    println!("{}", String::from_utf8_lossy(&out.stdout));
    eprintln!("{}", String::from_utf8_lossy(&out.stderr));
    out
}

/// The lines between `==> LABEL` and `<== LABEL: exit N` (included).
pub fn section<'a>(stdout: &'a str, label: &str) -> Vec<&'a str> {
    let begin = format!("==> {label}");
    let end = format!("<== {label}: exit ");
    let mut out = Vec::new();
    for line in stdout.lines().skip_while(|l| *l != begin).skip(1) {
        out.push(line);
        if line.starts_with(&end) {
            break;
        }
    }
    out
}

/// The guest kernel, which must have been built.
pub fn kernel() -> PathBuf {
    let kernel = ephemeral_vm::linux::default_kernel();
    assert!(
        kernel.is_file(),
        "no guest kernel at {}: run vm-fallback/guest/build-kernel",
        kernel.display()
    );
    kernel
}

/// The guest's components: the shell and python3, compiled here for the
/// guest worker's target and a portable CPU, in a cache of their own.
pub fn guest_components() -> Vec<(PathBuf, String)> {
    let cache = PathBuf::from("/var/cache/ephemeral/guest-cache");
    let programs = PathBuf::from("/var/cache/ephemeral/guest-programs");
    std::fs::create_dir_all(&programs).unwrap();
    let python = RuntimeConfig::default_programs_dir().join("python3.wasm");
    assert!(
        python.is_file(),
        "no {}: run ./dev to build it",
        python.display()
    );
    let wanted = programs.join("python3.wasm");
    if std::fs::metadata(&wanted).map(|m| m.len()).ok()
        != std::fs::metadata(&python).map(|m| m.len()).ok()
    {
        std::fs::copy(&python, &wanted).unwrap();
    }
    let config = RuntimeConfig {
        cache_dir: Some(cache),
        programs_dir: Some(programs),
        portable_target: Some("x86_64-unknown-linux-musl".into()),
        ..RuntimeConfig::default()
    };
    let mut files: Vec<(PathBuf, String)> = precompile_for_target(&config)
        .expect("precompile for the guest")
        .into_iter()
        .map(|entry| {
            let name = entry.file_name().unwrap().to_string_lossy().into_owned();
            (entry, format!("/gcache/{name}"))
        })
        .collect();
    files.push((wanted, "/gprog/python3.wasm".into()));
    files
}
