//! Where this host's microVMs come from, for `kvm+wasm`: the guest kernel,
//! the static (musl) worker that is the guest's init, the VMM binary
//! (`ephemeral-vmm`), the guest's components precompiled for a portable
//! CPU, and the template snapshot every run's VM is restored from — or,
//! in one line, why this host cannot have them.
//!
//! The runs themselves go through the same worker pool as `jail+wasm`: its
//! program is `ephemeral-vmm serve --snapshot DIR --jail`, spawned into the
//! same namespaces and cgroup, speaking the same protocol on its fd 3; the
//! pool only adds the guest identity to `Start` (`WorkerConfig::microvm`).

use std::path::{Path, PathBuf};
use std::process::Command;

use ephemeral_runtime::{Runtime, RuntimeConfig, precompile_for_target};
use ephemeral_vm::microvm::DEFAULT_MEMORY_MIB;
use ephemeral_worker::WorkerConfig;

use super::Unavailable;
use super::binaries::beside_this_executable;
use crate::install::{CACHE_ROOT, Layout};

/// The guest worker's target: static, so it needs nothing in the guest.
const GUEST_TARGET: &str = "x86_64-unknown-linux-musl";

/// The pool configuration for microVM runs, the template snapshot made
/// (once per set of inputs) if needed; or why not. Blocking: the
/// self-test, compiling the guest's components, booting the template.
pub(crate) fn kvm_config(runtime: &Runtime) -> Result<WorkerConfig, Unavailable> {
    crate::isolation::kvm_ready()?;
    let assets = Assets::find(runtime)?;
    let snapshot = assets.template()?;
    let args = vec![
        "serve".into(),
        "--snapshot".into(),
        snapshot.display().to_string(),
        "--jail".into(),
    ];
    let mut config =
        WorkerConfig::detect(assets.vmm, args, assets.guest_cache, runtime.programs_dir())
            .map_err(Unavailable::Host)?;
    config.microvm = true;
    // The guest's RAM is the VMM's memory (what the guest writes is copied
    // out of the snapshot into the VMM's cgroup).
    config.memory_overhead_bytes = (DEFAULT_MEMORY_MIB as u64) << 20;
    Ok(config)
}

/// What a microVM is made of on this host.
struct Assets {
    vmm: PathBuf,
    kernel: PathBuf,
    guest_worker: PathBuf,
    guest_cache: PathBuf,
    programs: PathBuf,
    /// A release's ready-made disk of the programs with files of their
    /// own; `None`: the template makes its own.
    disk: Option<PathBuf>,
    /// The guest cache's entries, for the template's key.
    entries: Vec<PathBuf>,
}

impl Assets {
    fn find(runtime: &Runtime) -> Result<Assets, Unavailable> {
        let layout = Layout::detect();
        let vmm = beside_this_executable("EPHEMERAL_VMM_BIN", "ephemeral-vmm")?;
        let kernel = layout.guest_kernel().path;
        if !kernel.is_file() {
            return Err(Unavailable::NoKernel(kernel));
        }
        let guest_worker = layout.guest_worker().path;
        if !guest_worker.is_file() {
            return Err(Unavailable::NoGuestWorker(guest_worker));
        }
        let guest_cache = Path::new(CACHE_ROOT).join("guest-cache");
        let programs = runtime.programs_dir();
        let entries = precompile_for_target(
            &RuntimeConfig {
                cache_dir: Some(guest_cache.clone()),
                programs_dir: Some(programs.clone()),
                portable_target: Some(GUEST_TARGET.into()),
                // A release's components were compiled for exactly this.
                seed_cache_dir: layout.precompiled_components(),
                ..RuntimeConfig::default()
            },
            true,
        )
        .map_err(Unavailable::Precompile)?;
        Ok(Assets {
            vmm,
            kernel,
            guest_worker,
            guest_cache,
            programs,
            disk: layout.guest_disk(),
            entries,
        })
    }

    /// The template's snapshot folder, booted now if no snapshot of these
    /// exact inputs exists yet.
    fn template(&self) -> Result<PathBuf, Unavailable> {
        let dir = Path::new(CACHE_ROOT).join("snapshots").join(self.key());
        if dir.join("state").is_file() {
            return Ok(dir);
        }
        tracing::info!(dir = %dir.display(), "booting the microVM template (once per build)");
        let mut vmm = Command::new(&self.vmm);
        if let Some(disk) = &self.disk {
            vmm.arg("template").arg("--disk-image").arg(disk);
        } else {
            vmm.arg("template");
        }
        let out = vmm
            .arg("--kernel")
            .arg(&self.kernel)
            .arg("--worker")
            .arg(&self.guest_worker)
            .arg("--cache")
            .arg(&self.guest_cache)
            .arg("--programs")
            .arg(&self.programs)
            .arg("--out")
            .arg(&dir)
            .output()
            .map_err(|source| Unavailable::Vmm {
                path: self.vmm.clone(),
                source,
            })?;
        if !out.status.success() {
            let why = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(Unavailable::Template(why));
        }
        tracing::info!("{}", String::from_utf8_lossy(&out.stdout).trim());
        Ok(dir)
    }

    /// Names the inputs of a template: a new kernel, worker, VMM or
    /// component makes a new snapshot instead of restoring a stale one.
    fn key(&self) -> String {
        let mut hasher = blake3::Hasher::new();
        let files = [&self.kernel, &self.guest_worker, &self.vmm]
            .into_iter()
            .chain(&self.disk)
            .chain(&self.entries);
        for path in files {
            hasher.update(path.as_os_str().as_encoded_bytes());
            if let Ok(meta) = std::fs::metadata(path) {
                hasher.update(&meta.len().to_le_bytes());
                let modified = meta
                    .modified()
                    .ok()
                    .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                    .unwrap_or_default();
                hasher.update(&modified.as_nanos().to_le_bytes());
            }
        }
        hasher.finalize().to_hex()[..16].to_string()
    }
}
