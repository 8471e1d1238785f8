//! The outer VM's initramfs: a newc cpio archive (what the kernel unpacks
//! into its root tmpfs) holding busybox and its applet links, the KVM
//! modules, an `/init` script, and the files of the command to run.
//!
//! [`Archive`] is the generic part (folders, files, links, device nodes,
//! written with the `cpio` crate); [`outer`] fills one for a lab run and
//! [`init_script`] writes its `/init`.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use cpio::newc::{Builder, ModeFileType};

use crate::elf;
use crate::ensure::Kit;

/// Lines the guest prints for the host to read; everything else on the
/// console is either the kernel's or the command's.
pub mod marker {
    /// `/init` started; followed by the guest's uptime in seconds.
    pub const INIT: &str = "EPHEMERAL-LAB-INIT";
    /// KVM modules loaded and `/dev/kvm` there; uptime, then `npt=Y|N`.
    pub const MODULES: &str = "EPHEMERAL-LAB-MODULES";
    /// The lab could not get ready; a reason follows.
    pub const FAIL: &str = "EPHEMERAL-LAB-FAIL";
    /// The command starts; its output follows.
    pub const START: &str = "EPHEMERAL-LAB-START";
    /// The command ended; its exit code, then the guest's uptime.
    pub const EXIT: &str = "EPHEMERAL-LAB-EXIT";
}

/// Where the command's files go in the guest, and its working folder.
pub const GUEST_DIR: &str = "/lab";

/// Where the KVM modules go in the guest.
const MODULE_DIR: &str = "/lib/modules/lab";

/// One entry of the archive.
#[derive(Debug, Clone)]
enum Entry {
    Dir,
    File { source: Source, mode: u32 },
    Symlink(String),
    CharDevice { major: u32, minor: u32, mode: u32 },
}

#[derive(Debug, Clone)]
enum Source {
    Host(PathBuf),
    Bytes(Vec<u8>),
}

/// A newc archive being put together; paths are absolute guest paths.
/// Parent folders are added as needed.
#[derive(Debug, Default)]
pub struct Archive {
    entries: BTreeMap<String, Entry>,
}

impl Archive {
    pub fn new() -> Self {
        Self::default()
    }

    /// `path` without its leading `/`, checked, with its parents added as
    /// folders; fails if a folder is already there.
    fn place(&mut self, path: &str) -> Result<String> {
        let rel = path.trim_start_matches('/');
        if !path.starts_with('/')
            || rel.is_empty()
            || rel
                .split('/')
                .any(|c| c.is_empty() || c == "." || c == "..")
        {
            bail!("bad guest path {path:?}: give an absolute path with no . or .. parts");
        }
        let mut end = 0;
        while let Some(slash) = rel[end..].find('/') {
            end += slash;
            let parent = &rel[..end];
            match self.entries.get(parent) {
                None => {
                    self.entries.insert(parent.to_owned(), Entry::Dir);
                }
                Some(Entry::Dir) => {}
                Some(_) => bail!("{path:?}: /{parent} is already a file, not a folder"),
            }
            end += 1;
        }
        if matches!(self.entries.get(rel), Some(Entry::Dir)) {
            bail!("{path:?} is already a folder");
        }
        Ok(rel.to_owned())
    }

    /// A folder (and its parents); fine if it is already there.
    pub fn dir(&mut self, path: &str) -> Result<()> {
        match self.entries.get(path.trim_start_matches('/')) {
            Some(Entry::Dir) => Ok(()),
            Some(_) => bail!("{path:?} is already a file, not a folder"),
            None => {
                let rel = self.place(path)?;
                self.entries.insert(rel, Entry::Dir);
                Ok(())
            }
        }
    }

    /// A file with the given contents and permission bits.
    pub fn bytes(&mut self, path: &str, data: impl Into<Vec<u8>>, mode: u32) -> Result<()> {
        let rel = self.place(path)?;
        let source = Source::Bytes(data.into());
        self.entries.insert(rel, Entry::File { source, mode });
        Ok(())
    }

    /// A copy of a host file, keeping its permission bits; read when the
    /// archive is written.
    pub fn host_file(&mut self, path: &str, host: &Path) -> Result<()> {
        use std::os::unix::fs::PermissionsExt;
        let meta = host
            .metadata()
            .with_context(|| format!("cannot read {}", host.display()))?;
        if !meta.is_file() {
            bail!("{} is not a regular file", host.display());
        }
        let rel = self.place(path)?;
        let source = Source::Host(host.to_owned());
        let mode = meta.permissions().mode() & 0o7777;
        self.entries.insert(rel, Entry::File { source, mode });
        Ok(())
    }

    pub fn symlink(&mut self, path: &str, target: &str) -> Result<()> {
        let rel = self.place(path)?;
        self.entries.insert(rel, Entry::Symlink(target.to_owned()));
        Ok(())
    }

    pub fn char_device(&mut self, path: &str, major: u32, minor: u32, mode: u32) -> Result<()> {
        let rel = self.place(path)?;
        let dev = Entry::CharDevice { major, minor, mode };
        self.entries.insert(rel, dev);
        Ok(())
    }

    /// Whether something is at `path`.
    pub fn contains(&self, path: &str) -> bool {
        self.entries.contains_key(path.trim_start_matches('/'))
    }

    /// Writes the archive (sorted, so every folder precedes its contents)
    /// and its trailer.
    pub fn write_to<W: Write>(&self, mut out: W) -> Result<W> {
        for (ino, (name, entry)) in (1u32..).zip(&self.entries) {
            // A host file keeps its modification second (what a component
            // cache's index knows a program by); the rest have none.
            let mtime = match entry {
                Entry::File {
                    source: Source::Host(path),
                    ..
                } => ephemeral_vm::initramfs::mtime_seconds(path),
                _ => 0,
            };
            let header = Builder::new(name).ino(ino).uid(0).gid(0).mtime(mtime);
            out = match entry {
                Entry::Dir => {
                    let h = header
                        .mode(0o755)
                        .set_mode_file_type(ModeFileType::Directory);
                    h.nlink(2).write(out, 0).finish()?
                }
                Entry::Symlink(target) => {
                    let h = header.mode(0o777).set_mode_file_type(ModeFileType::Symlink);
                    write_all(h, out, target.as_bytes())?
                }
                Entry::CharDevice { major, minor, mode } => {
                    let h = header.mode(*mode).set_mode_file_type(ModeFileType::Char);
                    h.rdev_major(*major)
                        .rdev_minor(*minor)
                        .write(out, 0)
                        .finish()?
                }
                Entry::File { source, mode } => {
                    let h = header.mode(*mode).set_mode_file_type(ModeFileType::Regular);
                    match source {
                        Source::Bytes(data) => write_all(h, out, data)?,
                        Source::Host(path) => {
                            let mut file = File::open(path)
                                .with_context(|| format!("cannot read {}", path.display()))?;
                            let len = file.metadata()?.len();
                            let len = u32::try_from(len).with_context(|| {
                                format!("{} is too big for a cpio archive", path.display())
                            })?;
                            let mut w = h.write(out, len);
                            let copied = io::copy(&mut file, &mut w)?;
                            if copied != u64::from(len) {
                                bail!("{} changed size while being read", path.display());
                            }
                            w.finish()?
                        }
                    }
                }
            };
        }
        Ok(cpio::newc::trailer(out)?)
    }
}

fn write_all<W: Write>(header: Builder, out: W, data: &[u8]) -> Result<W> {
    let len = u32::try_from(data.len()).context("entry too big for a cpio archive")?;
    let mut w = header.write(out, len);
    w.write_all(data)?;
    Ok(w.finish()?)
}

/// One file to copy into the guest.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestFile {
    pub host: PathBuf,
    pub guest: String,
}

impl GuestFile {
    /// `HOST[:GUEST]`; without `GUEST`, the file goes to `/lab/<name>`.
    pub fn parse(spec: &str) -> Result<Self> {
        let (host, guest) = match spec.split_once(':') {
            Some((host, guest)) => (host, guest.to_owned()),
            None => (spec, in_lab(Path::new(spec))?),
        };
        if !guest.starts_with('/') {
            bail!("--file {spec}: the guest path must be absolute");
        }
        Ok(GuestFile {
            host: PathBuf::from(host),
            guest,
        })
    }
}

/// `/lab/<file name of host>`.
pub fn in_lab(host: &Path) -> Result<String> {
    let name = host
        .file_name()
        .and_then(|n| n.to_str())
        .with_context(|| format!("{} has no usable file name", host.display()))?;
    Ok(format!("{GUEST_DIR}/{name}"))
}

/// What goes into one outer VM.
#[derive(Debug, Clone)]
pub struct Plan {
    /// Files copied in (the command's own among them).
    pub files: Vec<GuestFile>,
    /// The command as the guest runs it: guest paths and arguments.
    pub argv: Vec<String>,
    /// Leave the kernel's console messages on while the command runs.
    pub verbose: bool,
}

impl Plan {
    /// Fails early, before anything is fetched or booted, on a file that
    /// is missing or a dynamically linked executable.
    pub fn check(&self) -> Result<()> {
        for file in &self.files {
            let meta = file
                .host
                .metadata()
                .with_context(|| format!("cannot read {}", file.host.display()))?;
            if !meta.is_file() {
                bail!("{} is not a regular file", file.host.display());
            }
            check_static(&file.host)?;
        }
        Ok(())
    }
}

/// The outer VM's initramfs for `plan`, written to `out`.
pub fn outer(kit: &Kit, plan: &Plan, out: &Path) -> Result<()> {
    let mut a = Archive::new();
    for dir in ["/dev", "/proc", "/sys", "/tmp", "/root", "/etc", GUEST_DIR] {
        a.dir(dir)?;
    }
    // The kernel opens /dev/console for /init before anything is mounted.
    a.char_device("/dev/console", 5, 1, 0o600)?;
    a.host_file("/bin/busybox", &kit.busybox)?;
    for applet in &kit.applets {
        let applet = applet.trim();
        // Our own /init comes later; `linuxrc` is busybox's init, unused.
        if applet.is_empty() || applet == "bin/busybox" || applet == "linuxrc" {
            continue;
        }
        a.symlink(&format!("/{applet}"), "/bin/busybox")?;
    }
    let mut modules = Vec::new();
    for module in &kit.modules {
        let name = module
            .file_name()
            .context("a module path without a file name")?;
        let guest = format!("{MODULE_DIR}/{}", name.to_string_lossy());
        a.host_file(&guest, module)?;
        modules.push(guest);
    }
    plan.check()?;
    for file in &plan.files {
        if a.contains(&file.guest) {
            bail!(
                "{} would replace the lab's own {}",
                file.host.display(),
                file.guest
            );
        }
        a.host_file(&file.guest, &file.host)?;
    }
    a.bytes(
        "/init",
        init_script(&modules, &plan.argv, plan.verbose),
        0o755,
    )?;
    a.bytes("/etc/passwd", "root:x:0:0:root:/root:/bin/sh\n", 0o644)?;
    let file = File::create(out).with_context(|| format!("cannot create {}", out.display()))?;
    let mut file = a.write_to(io::BufWriter::new(file))?;
    file.flush()?;
    Ok(())
}

/// Refuses dynamically linked executables: the guest has no libraries.
fn check_static(path: &Path) -> Result<()> {
    use std::io::Read;
    let mut head = Vec::new();
    File::open(path)
        .and_then(|f| f.take(64 * 1024).read_to_end(&mut head))
        .with_context(|| format!("cannot read {}", path.display()))?;
    if elf::is_dynamic(&head) == Some(true) {
        bail!(
            "{} is dynamically linked; the lab runs static executables only \
             (build with --target x86_64-unknown-linux-musl)",
            path.display()
        );
    }
    Ok(())
}

/// Quotes `s` for the shell: single quotes, with `'` spelled `'\''`.
pub fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

/// The outer VM's `/init`: mounts, loads the KVM modules in order, checks
/// `/dev/kvm`, runs the command on the console, reports its exit code,
/// powers off. Each step the host waits for is a marker line.
pub fn init_script(modules: &[String], argv: &[String], verbose: bool) -> String {
    use marker::*;
    let insmods: String = modules
        .iter()
        .map(|m| format!("insmod {m} || fail \"insmod {m} failed\"\n"))
        .collect();
    let beat = crate::qemu::BEAT_SECS;
    let command: Vec<String> = argv.iter().map(|a| shell_quote(a)).collect();
    let command = command.join(" ");
    // Quiet the kernel while the command runs, so its output is its own.
    let printk = if verbose {
        ""
    } else {
        "echo 1 > /proc/sys/kernel/printk\n"
    };
    format!(
        r#"#!/bin/sh
# The lab's outer VM: generated by ephemeral-lab, not edited by hand.
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
export HOME=/root
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t tmpfs tmpfs /tmp
# The root is the unpacked initramfs, on a tmpfs capped at half the memory
# by default: the command's own files (snapshots, disk images) need more.
mount -o remount,size=90% / 2>/dev/null
uptime_s() {{ read -r up _ </proc/uptime; echo "$up"; }}
fail() {{ echo "{FAIL} $*"; poweroff -f; sleep 10; }}
# The heartbeat (second serial port, a file on the host): proof that this
# VM as a whole still runs, whatever the command does.
( while :; do uptime_s; sleep {beat}; done ) >/dev/ttyS1 2>/dev/null &
echo "{INIT} $(uptime_s)"
{insmods}[ -c /dev/kvm ] || fail "no /dev/kvm after loading the KVM modules"
[ -d /sys/module/kvm_amd ] || fail "kvm_amd is not loaded"
echo "{MODULES} $(uptime_s) npt=$(cat /sys/module/kvm_amd/parameters/npt)"
{printk}cd {GUEST_DIR}
echo "{START}"
{command} </dev/null
rc=$?
echo "{EXIT} $rc $(uptime_s)"
poweroff -f
sleep 10
"#
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Cursor, Read};

    /// (name, mode, rdev major, contents) of each entry of a newc archive.
    fn read_back(bytes: Vec<u8>) -> Vec<(String, u32, u32, Vec<u8>)> {
        let mut cursor = Cursor::new(bytes);
        let mut out = Vec::new();
        loop {
            let mut r = cpio::NewcReader::new(cursor).unwrap();
            if r.entry().is_trailer() {
                break;
            }
            let e = r.entry();
            let (name, mode, rdev) = (e.name().to_owned(), e.mode(), e.rdev_major());
            let mut data = Vec::new();
            r.read_to_end(&mut data).unwrap();
            out.push((name, mode, rdev, data));
            cursor = r.finish().unwrap();
        }
        out
    }

    #[test]
    fn archive_lists_parents_before_children_with_types_and_contents() {
        let host = std::env::temp_dir().join(format!("ephemeral-lab-cpio-{}", std::process::id()));
        std::fs::write(&host, b"host bytes").unwrap();
        let mut a = Archive::new();
        a.bytes("/init", "#!/bin/sh\n", 0o755).unwrap();
        a.host_file("/lab/deep/file", &host).unwrap();
        a.symlink("/bin/sh", "/bin/busybox").unwrap();
        a.char_device("/dev/console", 5, 1, 0o600).unwrap();
        let entries = read_back(a.write_to(Vec::new()).unwrap());
        std::fs::remove_file(&host).unwrap();
        let names: Vec<&str> = entries.iter().map(|e| e.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "bin",
                "bin/sh",
                "dev",
                "dev/console",
                "init",
                "lab",
                "lab/deep",
                "lab/deep/file"
            ]
        );
        let get = |n: &str| entries.iter().find(|e| e.0 == n).unwrap();
        assert_eq!(get("bin").1, 0o040755);
        assert_eq!(get("bin/sh").1 & 0o170000, 0o120000);
        assert_eq!(get("bin/sh").3, b"/bin/busybox");
        assert_eq!(get("dev/console").1, 0o020600);
        assert_eq!(get("dev/console").2, 5);
        assert_eq!(get("init").1, 0o100755);
        assert_eq!(get("lab/deep/file").3, b"host bytes");
    }

    #[test]
    fn bad_guest_paths_and_files_under_files_are_refused() {
        let mut a = Archive::new();
        for bad in ["/", "a", "/a/../b", "/a//b", "/a/./b", "/a/"] {
            assert!(a.bytes(bad, "", 0o644).is_err(), "{bad}");
        }
        a.bytes("/a", "", 0o644).unwrap();
        assert!(a.bytes("/a/b", "", 0o644).is_err());
        a.dir("/d").unwrap();
        assert!(a.bytes("/d", "", 0o644).is_err());
    }

    #[test]
    fn file_specs_default_to_the_lab_folder() {
        let f = GuestFile::parse("/x/y/prog").unwrap();
        assert_eq!(f.guest, "/lab/prog");
        let f = GuestFile::parse("data.txt:/etc/data").unwrap();
        assert_eq!(
            (f.host.to_str().unwrap(), f.guest.as_str()),
            ("data.txt", "/etc/data")
        );
        assert!(GuestFile::parse("a:relative").is_err());
    }

    #[test]
    fn init_loads_modules_in_order_and_quotes_the_command() {
        let modules = [
            "/lib/modules/lab/kvm.ko".to_owned(),
            "/lib/modules/lab/kvm_amd.ko".to_owned(),
        ];
        let argv = ["/lab/t".to_owned(), "it's".to_owned(), "$HOME".to_owned()];
        let script = init_script(&modules, &argv, false);
        let kvm = script.find("insmod /lib/modules/lab/kvm.ko").unwrap();
        let amd = script.find("insmod /lib/modules/lab/kvm_amd.ko").unwrap();
        assert!(kvm < amd);
        assert!(script.contains(r"'/lab/t' 'it'\''s' '$HOME' </dev/null"));
        assert!(script.contains("echo 1 > /proc/sys/kernel/printk"));
        assert!(!init_script(&modules, &argv, true).contains("printk"));
        let start = script.find(marker::START).unwrap();
        assert!(script.find(marker::EXIT).unwrap() > start);
    }
}
