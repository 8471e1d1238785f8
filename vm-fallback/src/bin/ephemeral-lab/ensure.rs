//! Everything the lab needs on the host, installed or fetched when missing,
//! with one progress line per step on stderr:
//!
//! - QEMU (`qemu-system-x86`): installed with apt, or — when apt could
//!   install it only by removing a package, or we are not root — the
//!   packages apt would install are unpacked into the cache and QEMU runs
//!   from there;
//! - Debian's kernel and the KVM modules it needs for AMD SVM (the package
//!   `linux-image-amd64` depends on, downloaded with `apt-get download` and
//!   unpacked with `dpkg-deb -x` into the cache, never installed);
//! - a static busybox (`busybox-static`, unpacked the same way) for the
//!   outer VM's userland;
//! - for `vm-tests`, the rustup target `x86_64-unknown-linux-musl`.
//!
//! The cache is `/var/cache/ephemeral/lab` (see [`cache_dir`]); once
//! it is filled, no step asks apt anything and a run starts at once.

use std::collections::{BTreeMap, HashSet};
use std::fs;
use std::io::Read;
use std::os::fd::AsFd;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, Result, bail};

use crate::elf;
use crate::step;

/// The module that gives `/dev/kvm` on AMD; everything it depends on is
/// loaded before it.
pub const KVM_AMD_MODULE: &str = "kvm_amd";

/// The Debian package whose dependency is the current kernel image.
const KERNEL_META_PACKAGE: &str = "linux-image-amd64";

/// The rustup target the guest programs are built for: static executables.
pub const MUSL_TARGET: &str = "x86_64-unknown-linux-musl";

/// A marker written last into a cache entry: its absence means a fill was
/// interrupted and is redone.
const COMPLETE: &str = "complete";

/// What a lab run needs, all on local disk.
#[derive(Debug, Clone)]
pub struct Kit {
    /// `qemu-system-x86_64`.
    pub qemu: Qemu,
    /// The kernel image (bzImage).
    pub kernel: PathBuf,
    /// Which kernel this is (its Debian package name).
    pub kernel_package: String,
    /// The KVM modules, uncompressed, in the order to load them.
    pub modules: Vec<PathBuf>,
    /// A static busybox.
    pub busybox: PathBuf,
    /// Busybox's applets as paths relative to `/` (`bin/sh`, `sbin/insmod`).
    pub applets: Vec<String>,
}

/// The project's cache folder, as `./dev` picks it: `$EPHEMERAL_CACHE`, else
/// `/var/cache/ephemeral` where writable, else `~/.cache/ephemeral`.
pub fn project_cache() -> PathBuf {
    if let Some(dir) = std::env::var_os("EPHEMERAL_CACHE") {
        return PathBuf::from(dir);
    }
    let system = PathBuf::from("/var/cache/ephemeral");
    if fs::create_dir_all(&system).is_ok() && !is_read_only(&system) {
        return system;
    }
    let home = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    home.join("ephemeral")
}

fn is_read_only(dir: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: access(2) on a NUL-terminated path we own.
    unsafe { libc::access(path.as_ptr(), libc::W_OK) != 0 }
}

/// Where the lab keeps what it fetched: `$EPHEMERAL_LAB_CACHE`, else `lab`
/// in the project's cache.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("EPHEMERAL_LAB_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_cache().join("lab"))
}

/// Makes sure QEMU, the kernel with its KVM modules, and busybox are here.
pub fn kit() -> Result<Kit> {
    let cache = cache_dir();
    fs::create_dir_all(&cache).with_context(|| format!("cannot create {}", cache.display()))?;
    let _lock = lock(&cache.join("lock"))?;
    let qemu = qemu(&cache.join("qemu"))?;
    let (kernel_package, kernel, modules) = kernel(&cache.join("kernel"))?;
    let (busybox, applets) = busybox(&cache.join("busybox"))?;
    Ok(Kit {
        qemu,
        kernel,
        kernel_package,
        modules,
        busybox,
        applets,
    })
}

/// Holds an exclusive `flock` on `path` (created if missing) until
/// dropped, so that two lab runs never fill the cache at the same time.
fn lock(path: &Path) -> Result<fs::File> {
    use std::os::fd::AsRawFd;
    let file = fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(path)
        .with_context(|| format!("cannot open {}", path.display()))?;
    // SAFETY: flock on a descriptor we own; it blocks until the lock is ours.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(std::io::Error::last_os_error())
            .with_context(|| format!("cannot lock {}", path.display()));
    }
    Ok(file)
}

/// The QEMU binary name.
const QEMU_BINARY: &str = "qemu-system-x86_64";

/// The Debian package that has it.
const QEMU_PACKAGE: &str = "qemu-system-x86";

/// `qemu-system-x86_64` and how to start it.
#[derive(Debug, Clone, Default)]
pub struct Qemu {
    pub binary: PathBuf,
    /// Environment for an unpacked QEMU: its libraries and modules.
    pub env: Vec<(String, PathBuf)>,
    /// Firmware folders for an unpacked QEMU (`-L`).
    pub data_dirs: Vec<PathBuf>,
}

impl Qemu {
    /// A command starting this QEMU.
    pub fn command(&self) -> Command {
        let mut cmd = Command::new(&self.binary);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        for dir in &self.data_dirs {
            cmd.arg("-L").arg(dir);
        }
        cmd
    }

    fn version(&self) -> Result<String> {
        let out = self
            .command()
            .arg("--version")
            .stdin(Stdio::null())
            .output()
            .with_context(|| format!("cannot run {}", self.binary.display()))?;
        if !out.status.success() {
            bail!(
                "{} --version failed ({}): {}",
                self.binary.display(),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        let text = String::from_utf8_lossy(&out.stdout);
        Ok(text.lines().next().unwrap_or("version unknown").to_owned())
    }
}

/// QEMU: the system's; else one unpacked earlier into the cache; else
/// Debian's `qemu-system-x86`, installed with apt when apt can do so
/// without removing anything. When it cannot (here a newer `qemu-utils`
/// from backports breaks the older `qemu-system-common`), or we are not
/// root, the packages apt would install are unpacked into the cache
/// instead and QEMU runs from there, leaving the system as it was.
fn qemu(root: &Path) -> Result<Qemu> {
    if let Some(binary) = which(QEMU_BINARY) {
        let qemu = Qemu {
            binary,
            ..Qemu::default()
        };
        step(format!(
            "qemu: {} ({})",
            qemu.binary.display(),
            qemu.version()?
        ));
        return Ok(qemu);
    }
    let unpacked = unpacked_qemu(root);
    let show_unpacked = |how: &str| -> Result<Qemu> {
        step(format!(
            "qemu: {} ({}; {how})",
            unpacked.binary.display(),
            unpacked.version()?
        ));
        Ok(unpacked.clone())
    };
    if root.join(COMPLETE).exists() {
        return show_unpacked("unpacked in the cache");
    }
    apt_lists_know(&[QEMU_PACKAGE])?;
    let plan = output(
        Command::new("apt-get")
            .args([
                "install",
                "-s",
                "-q",
                "--no-install-recommends",
                QEMU_PACKAGE,
            ])
            .env("DEBIAN_FRONTEND", "noninteractive"),
    )?;
    let listed = |action: &str| -> Vec<String> {
        plan.lines()
            .filter_map(|l| l.strip_prefix(action)?.split_whitespace().next())
            .map(str::to_owned)
            .collect()
    };
    let (installs, removals) = (listed("Inst "), listed("Remv "));
    let why_not_apt = if !removals.is_empty() {
        format!("apt would remove {} for it", removals.join(", "))
    } else if !is_root() {
        "not root".to_owned()
    } else {
        step(format!(
            "qemu: not found; installing {QEMU_PACKAGE} with apt-get ({} packages)",
            installs.len()
        ));
        match apt_install(&[QEMU_PACKAGE]).and_then(|()| {
            which(QEMU_BINARY).with_context(|| format!("{QEMU_BINARY} is still not on PATH"))
        }) {
            Ok(binary) => {
                let qemu = Qemu {
                    binary,
                    ..Qemu::default()
                };
                step(format!(
                    "qemu: installed {} ({})",
                    qemu.binary.display(),
                    qemu.version()?
                ));
                return Ok(qemu);
            }
            Err(e) => format!("{e:#}"),
        }
    };
    step(format!(
        "qemu: not installing {QEMU_PACKAGE} ({why_not_apt}); unpacking it and the {} \
         packages it needs into {} instead",
        installs.len().saturating_sub(1),
        root.display()
    ));
    unpack(root, &installs)?;
    show_unpacked("unpacked in the cache")
}

/// How to start the QEMU unpacked under `root`.
fn unpacked_qemu(root: &Path) -> Qemu {
    let tree = root.join("tree");
    let libs = ["usr/lib/x86_64-linux-gnu", "lib/x86_64-linux-gnu"];
    let library_path = std::env::join_paths(libs.map(|l| tree.join(l))).unwrap_or_default();
    Qemu {
        binary: tree.join("usr/bin").join(QEMU_BINARY),
        env: vec![
            ("LD_LIBRARY_PATH".into(), PathBuf::from(library_path)),
            (
                "QEMU_MODULE_DIR".into(),
                tree.join("usr/lib/x86_64-linux-gnu/qemu"),
            ),
        ],
        data_dirs: ["usr/share/seabios", "usr/share/qemu", "usr/lib/ipxe/qemu"]
            .map(|d| tree.join(d))
            .to_vec(),
    }
}

/// Downloads `packages` and unpacks them all under `root/tree`.
fn unpack(root: &Path, packages: &[String]) -> Result<()> {
    if packages.is_empty() {
        bail!("nothing to unpack");
    }
    let _ = fs::remove_dir_all(root);
    let work = scratch(root)?;
    step(format!("apt: downloading {}", packages.join(" ")));
    run(Command::new("apt-get")
        .args(["-q", "-o", "APT::Sandbox::User=root", "download"])
        .args(packages)
        .current_dir(&work))?;
    let tree = root.join("tree");
    for entry in fs::read_dir(&work)? {
        let deb = entry?.path();
        if deb.extension().is_some_and(|e| e == "deb") {
            run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&tree))?;
        }
    }
    fs::remove_dir_all(&work)?;
    fs::write(root.join(COMPLETE), packages.join("\n") + "\n")?;
    Ok(())
}

fn is_root() -> bool {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() == 0 }
}

/// The first executable called `name` on `PATH` (plus the sbin folders,
/// which a non-login root shell may lack).
pub fn which(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from))
        .map(|dir| dir.join(name))
        .find(|p| {
            use std::os::unix::fs::PermissionsExt;
            p.metadata()
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// The kernel image and KVM modules, from the cache or from Debian.
fn kernel(root: &Path) -> Result<(String, PathBuf, Vec<PathBuf>)> {
    let load = |package: &str| -> Option<(String, PathBuf, Vec<PathBuf>)> {
        let dir = root.join(package);
        if !dir.join(COMPLETE).exists() {
            return None;
        }
        let order = fs::read_to_string(dir.join("modules.order")).ok()?;
        let modules = order.lines().map(|m| dir.join("modules").join(m)).collect();
        Some((package.to_owned(), dir.join("vmlinuz"), modules))
    };
    if let Ok(current) = fs::read_to_string(root.join("current"))
        && let Some(found) = load(current.trim())
    {
        step(format!(
            "kernel: {} with {} KVM modules (cached in {})",
            found.0,
            found.2.len(),
            root.display()
        ));
        return Ok(found);
    }
    let package = kernel_package()?;
    step(format!(
        "kernel: downloading {package} (Debian's kernel and modules; unpacked, not installed)"
    ));
    let dir = root.join(&package);
    let _ = fs::remove_dir_all(&dir);
    let work = scratch(root)?;
    let deb = apt_download(&work, &package)?;
    let tree = work.join("tree");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&tree))?;
    let vmlinuz = only_entry(&tree.join("boot"), "vmlinuz-")?;
    let release_dir = only_dir(&tree.join("lib/modules"))?;
    let order = module_order(&release_dir, KVM_AMD_MODULE)?;
    fs::create_dir_all(dir.join("modules"))?;
    fs::copy(&vmlinuz, dir.join("vmlinuz"))?;
    let mut names = Vec::new();
    for (name, path) in &order {
        let file = format!("{name}.ko");
        fs::write(dir.join("modules").join(&file), read_module(path)?)?;
        names.push(file);
    }
    fs::write(dir.join("modules.order"), names.join("\n") + "\n")?;
    fs::write(dir.join(COMPLETE), "")?;
    fs::write(root.join("current"), format!("{package}\n"))?;
    fs::remove_dir_all(&work)?;
    step(format!(
        "kernel: cached {package} and modules {} in {}",
        names.join(", "),
        dir.display()
    ));
    load(&package).context("the kernel cache was written but cannot be read back")
}

/// The package `linux-image-amd64` depends on, e.g. `linux-image-6.1.0-57-amd64`.
fn kernel_package() -> Result<String> {
    apt_lists_know(&[KERNEL_META_PACKAGE])?;
    let out = output(Command::new("apt-cache").args(["depends", KERNEL_META_PACKAGE]))?;
    out.lines()
        .filter_map(|l| l.trim().strip_prefix("Depends: "))
        .find(|dep| dep.starts_with("linux-image-") && !dep.starts_with('<'))
        .map(str::to_owned)
        .with_context(|| format!("apt knows no kernel package behind {KERNEL_META_PACKAGE}"))
}

/// A static busybox and its applet list, from the cache or from Debian.
fn busybox(root: &Path) -> Result<(PathBuf, Vec<String>)> {
    let read_applets = |dir: &Path| -> Option<Vec<String>> {
        if !dir.join(COMPLETE).exists() {
            return None;
        }
        let list = fs::read_to_string(dir.join("applets")).ok()?;
        Some(list.lines().map(str::to_owned).collect())
    };
    let dir = root.join("current");
    if let Some(applets) = read_applets(&dir) {
        step(format!(
            "busybox: static, {} applets (cached in {})",
            applets.len(),
            dir.display()
        ));
        return Ok((dir.join("busybox"), applets));
    }
    step("busybox: downloading busybox-static (Debian; unpacked, not installed)");
    let _ = fs::remove_dir_all(&dir);
    let work = scratch(root)?;
    let deb = apt_download(&work, "busybox-static")?;
    let tree = work.join("tree");
    run(Command::new("dpkg-deb").arg("-x").arg(&deb).arg(&tree))?;
    let binary = tree.join("bin/busybox");
    let bytes = fs::read(&binary).with_context(|| format!("{} missing", binary.display()))?;
    if elf::is_dynamic(&bytes) != Some(false) {
        bail!(
            "{} from busybox-static is not a static executable",
            binary.display()
        );
    }
    let list = output(Command::new(&binary).arg("--list-full"))?;
    fs::create_dir_all(&dir)?;
    fs::copy(&binary, dir.join("busybox"))?;
    fs::write(dir.join("applets"), list)?;
    fs::write(dir.join(COMPLETE), "")?;
    fs::remove_dir_all(&work)?;
    let applets = read_applets(&dir).context("the busybox cache cannot be read back")?;
    step(format!("busybox: cached, {} applets", applets.len()));
    Ok((dir.join("busybox"), applets))
}

/// Adds the rustup target for static guest programs if it is missing.
pub fn musl_target() -> Result<()> {
    let installed = output(Command::new("rustup").args(["target", "list", "--installed"]))
        .context("rustup is needed to add the musl target")?;
    if installed.lines().any(|t| t.trim() == MUSL_TARGET) {
        step(format!("rust: target {MUSL_TARGET} present"));
        return Ok(());
    }
    step(format!("rust: adding target {MUSL_TARGET} with rustup"));
    run(Command::new("rustup").args(["target", "add", MUSL_TARGET]))
}

/// Orders `root` (a module name such as `kvm_amd`) after everything it
/// depends on, from each module's `.modinfo` `depends=`, searching the
/// modules under `release_dir` (`lib/modules/<release>`).
pub fn module_order(release_dir: &Path, root: &str) -> Result<Vec<(String, PathBuf)>> {
    let mut index = BTreeMap::new();
    index_modules(&release_dir.join("kernel"), &mut index)?;
    let mut order = Vec::new();
    let mut placed = HashSet::new();
    visit(root, &index, &mut Vec::new(), &mut placed, &mut order)?;
    Ok(order)
}

/// Depth-first: dependencies first, each module once.
fn visit(
    name: &str,
    index: &BTreeMap<String, PathBuf>,
    path: &mut Vec<String>,
    placed: &mut HashSet<String>,
    order: &mut Vec<(String, PathBuf)>,
) -> Result<()> {
    if placed.contains(name) {
        return Ok(());
    }
    if path.iter().any(|p| p == name) {
        bail!("module dependency cycle: {} -> {name}", path.join(" -> "));
    }
    let file = index
        .get(name)
        .with_context(|| format!("module {name} not found in the kernel package"))?;
    let bytes = read_module(file)?;
    let depends: Vec<String> = elf::modinfo(&bytes, "depends")
        .iter()
        .flat_map(|d| d.split(','))
        .filter(|d| !d.is_empty())
        .map(module_name)
        .collect();
    path.push(name.to_owned());
    for dep in &depends {
        visit(dep, index, path, placed, order)?;
    }
    path.pop();
    placed.insert(name.to_owned());
    order.push((name.to_owned(), file.clone()));
    Ok(())
}

/// The kernel's spelling of a module name: `-` and `_` are the same.
fn module_name(file_stem: &str) -> String {
    file_stem.replace('-', "_")
}

/// Every `*.ko`, `*.ko.xz`, `*.ko.zst` below `dir`, by module name.
fn index_modules(dir: &Path, index: &mut BTreeMap<String, PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        let path = entry.path();
        if entry.file_type()?.is_dir() {
            index_modules(&path, index)?;
            continue;
        }
        let file = entry.file_name().to_string_lossy().into_owned();
        let stem = [".ko", ".ko.xz", ".ko.zst"]
            .iter()
            .find_map(|ext| file.strip_suffix(ext));
        if let Some(stem) = stem {
            index.insert(module_name(stem), path);
        }
    }
    Ok(())
}

/// A module's bytes, decompressed when it is stored as `.ko.xz` or
/// `.ko.zst` (busybox's `insmod` takes plain `.ko` only).
fn read_module(path: &Path) -> Result<Vec<u8>> {
    let name = path.to_string_lossy();
    let tool = if name.ends_with(".xz") {
        Some("xz")
    } else if name.ends_with(".zst") {
        Some("zstd")
    } else {
        None
    };
    let Some(tool) = tool else {
        return fs::read(path).with_context(|| format!("cannot read {}", path.display()));
    };
    let out = Command::new(tool)
        .args(["-d", "-c"])
        .arg(path)
        .stderr(Stdio::inherit())
        .output()
        .with_context(|| format!("cannot run {tool} to decompress {}", path.display()))?;
    if !out.status.success() {
        bail!("{tool} could not decompress {}", path.display());
    }
    Ok(out.stdout)
}

/// A fresh scratch folder inside `root`, for downloads and unpacking.
fn scratch(root: &Path) -> Result<PathBuf> {
    let dir = root.join(format!("tmp-{}", std::process::id()));
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    Ok(dir)
}

/// The single entry of `dir` whose name starts with `prefix`.
fn only_entry(dir: &Path, prefix: &str) -> Result<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        if entry.file_name().to_string_lossy().starts_with(prefix) {
            found.push(entry.path());
        }
    }
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!(
            "expected one {prefix}* in {}, found {}",
            dir.display(),
            found.len()
        ),
    }
}

/// The single folder inside `dir`.
fn only_dir(dir: &Path) -> Result<PathBuf> {
    let mut found = Vec::new();
    for entry in fs::read_dir(dir).with_context(|| format!("cannot list {}", dir.display()))? {
        let entry = entry?;
        if entry.file_type()?.is_dir() {
            found.push(entry.path());
        }
    }
    match found.as_slice() {
        [one] => Ok(one.clone()),
        _ => bail!(
            "expected one folder in {}, found {}",
            dir.display(),
            found.len()
        ),
    }
}

/// `apt-get download PACKAGE` into `dir`; the path of the `.deb`.
fn apt_download(dir: &Path, package: &str) -> Result<PathBuf> {
    apt_lists_know(&[package])?;
    run(Command::new("apt-get")
        .args(["-q", "-o", "APT::Sandbox::User=root", "download", package])
        .current_dir(dir))?;
    only_entry(dir, &format!("{package}_"))
}

/// `apt-get install -y --no-install-recommends --no-remove PACKAGES`.
fn apt_install(packages: &[&str]) -> Result<()> {
    apt_lists_know(packages)?;
    run(Command::new("apt-get")
        .args([
            "install",
            "-y",
            "-q",
            "--no-install-recommends",
            "--no-remove",
        ])
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive"))
}

/// Refreshes apt's package lists (`apt-get update`) unless they already
/// have a candidate for each of `packages`.
fn apt_lists_know(packages: &[&str]) -> Result<()> {
    let known = |p: &&str| {
        Command::new("apt-cache")
            .args(["show", "--no-all-versions", p])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if packages.iter().all(known) {
        return Ok(());
    }
    step("apt: refreshing the package lists (apt-get update)");
    run(Command::new("apt-get").args(["update", "-q"]))
}

/// Runs `cmd`, its output going to our stderr; fails unless it exits 0.
fn run(cmd: &mut Command) -> Result<()> {
    let shown = format!("{cmd:?}");
    let status = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::from(std::io::stderr().as_fd().try_clone_to_owned()?))
        .status()
        .with_context(|| format!("cannot run {shown}"))?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(())
}

/// Runs `cmd` and returns what it printed; fails unless it exits 0.
fn output(cmd: &mut Command) -> Result<String> {
    let shown = format!("{cmd:?}");
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot run {shown}"))?;
    let mut out = String::new();
    if let Some(mut stdout) = child.stdout.take() {
        stdout.read_to_string(&mut out)?;
    }
    let status = child.wait()?;
    if !status.success() {
        bail!("{shown} failed ({status})");
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::elf::tests::tiny_elf;

    fn fake_module(dir: &Path, file: &str, depends: &str) {
        let info = format!("depends={depends}\0");
        fs::create_dir_all(dir).unwrap();
        fs::write(
            dir.join(file),
            tiny_elf(&[], &[(".modinfo", info.as_bytes())]),
        )
        .unwrap();
    }

    #[test]
    fn modules_load_after_their_dependencies_each_once() {
        let release =
            std::env::temp_dir().join(format!("ephemeral-lab-mods-{}", std::process::id()));
        let _ = fs::remove_dir_all(&release);
        let k = release.join("kernel");
        fake_module(&k.join("virt/lib"), "irqbypass.ko", "");
        fake_module(&k.join("arch/x86/kvm"), "kvm.ko", "irqbypass");
        fake_module(&k.join("arch/x86/kvm"), "kvm-amd.ko", "kvm,ccp");
        fake_module(&k.join("drivers/crypto/ccp"), "ccp.ko", "");
        fake_module(&k.join("drivers/unrelated"), "other.ko", "kvm");
        let order: Vec<String> = module_order(&release, "kvm_amd")
            .unwrap()
            .into_iter()
            .map(|(name, _)| name)
            .collect();
        assert_eq!(order, ["irqbypass", "kvm", "ccp", "kvm_amd"]);

        fake_module(&k.join("drivers/crypto/ccp"), "ccp.ko", "kvm_amd");
        let err = module_order(&release, "kvm_amd").unwrap_err();
        assert!(err.to_string().contains("cycle"), "{err}");
        fs::remove_dir_all(&release).unwrap();
    }
}
