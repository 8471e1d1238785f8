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
    let manifest = crate_dir().join("../Cargo.toml");
    let status = Command::new(cargo)
        .args(["build", "--locked", "--release", "--manifest-path"])
        .arg(&manifest)
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
    lab_for(files, script, 900)
}

/// [`lab`], the whole boot bounded by `timeout_secs`.
pub fn lab_for(files: &[String], script: &str, timeout_secs: u32) -> Output {
    let path = std::env::temp_dir().join(format!("lab-{}-{}.sh", std::process::id(), script.len()));
    std::fs::write(&path, script).expect("write the lab script");
    let mut command = Command::new(env!("CARGO_BIN_EXE_ephemeral-lab"));
    // A frozen QEMU (the outer VM stops beating: never the command's
    // doing) boots once more, loudly; see `vm-fallback/lab/README.md`.
    let timeout = timeout_secs.to_string();
    command.args(["run", "--timeout", &timeout, "--retry-stalled", "1"]);
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
    guest_programs(&["python3"])
}

/// The guest's components with the scientific python too (its component,
/// its read-only files and its compiled entry, 500 MB and more), and the
/// cache's index that lets the guest map its entry without reading it.
pub fn scientific_guest_components() -> Vec<(PathBuf, String)> {
    guest_programs(&["python3", "python3-sci"])
}

/// `names`' files from the programs `./dev` builds, in a guest programs
/// folder (hard links: the same files, the same times), each precompiled
/// for the guest into `/var/cache/ephemeral/guest-cache`; the lab's paths
/// for all of it: `/gprog/…` and `/gcache/…`.
fn guest_programs(names: &[&str]) -> Vec<(PathBuf, String)> {
    let cache = PathBuf::from("/var/cache/ephemeral/guest-cache");
    let programs = PathBuf::from("/var/cache/ephemeral/guest-programs");
    std::fs::create_dir_all(&programs).unwrap();
    let source = RuntimeConfig::default_programs_dir();
    let mut files = Vec::new();
    for name in names {
        let wasm = source.join(format!("{name}.wasm"));
        assert!(
            wasm.is_file(),
            "no {}: run ./dev to build it",
            wasm.display()
        );
        for entry in std::fs::read_dir(&source).unwrap().flatten() {
            let file = entry.file_name().to_string_lossy().into_owned();
            if file.split('.').next() == Some(*name) {
                mirror(
                    &entry.path(),
                    &programs.join(&file),
                    &format!("/gprog/{file}"),
                    &mut files,
                );
            }
        }
    }
    let config = RuntimeConfig {
        cache_dir: Some(cache.clone()),
        programs_dir: Some(programs),
        portable_target: Some("x86_64-unknown-linux-musl".into()),
        ..RuntimeConfig::default()
    };
    let with_roots = names.contains(&"python3-sci");
    for entry in precompile_for_target(&config, with_roots).expect("precompile for the guest") {
        let name = entry.file_name().unwrap().to_string_lossy().into_owned();
        files.push((entry, format!("/gcache/{name}")));
    }
    files.push((
        cache.join("programs.index"),
        "/gcache/programs.index".into(),
    ));
    files
}

/// `to` made the same as `from` (a file or a folder), by hard links where
/// it is not already; each file's lab path (under `lab`) added to `files`.
fn mirror(from: &Path, to: &Path, lab: &str, files: &mut Vec<(PathBuf, String)>) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        for entry in std::fs::read_dir(from).unwrap().flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            mirror(
                &entry.path(),
                &to.join(&name),
                &format!("{lab}/{name}"),
                files,
            );
        }
        return;
    }
    use std::os::unix::fs::MetadataExt;
    let same = |a: &Path, b: &Path| match (std::fs::metadata(a), std::fs::metadata(b)) {
        (Ok(a), Ok(b)) => a.ino() == b.ino() && a.dev() == b.dev(),
        _ => false,
    };
    if !same(from, to) {
        let _ = std::fs::remove_file(to);
        if std::fs::hard_link(from, to).is_err() {
            std::fs::copy(from, to).unwrap();
        }
    }
    files.push((to.to_path_buf(), lab.to_string()));
}

/// This crate's folder: where `cargo test` says it is now, not where this
/// binary was built (a shared build cache serves clones at other paths).
pub fn crate_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
