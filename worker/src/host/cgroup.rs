//! A worker's cgroup: memory, pids and CPU caps the worker cannot lift,
//! and the evidence of which cap killed it. cgroup v2 where the host has
//! it; v1 (one folder per controller, as these machines mount) otherwise.
//! Folders live under `ephemeral/` in each hierarchy and are removed when
//! the worker is reaped.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

const ROOT: &str = "/sys/fs/cgroup";
const PARENT: &str = "ephemeral";
const V1_CONTROLLERS: [&str; 3] = ["memory", "pids", "cpu"];
/// The CFS period the CPU quota is expressed in.
const CPU_PERIOD_US: u64 = 100_000;

/// Caps for one worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CgroupLimits {
    /// Memory of everything in it together, swap included where accounted.
    pub memory_bytes: u64,
    /// Threads and processes in it together.
    pub max_tasks: u64,
    /// CPU time per wall second, in thousandths of a CPU.
    pub cpu_millis: u64,
}

/// Which cgroup layout the host has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    /// One hierarchy per controller (`memory`, `pids`, `cpu`).
    V1,
    /// The unified hierarchy.
    V2,
}

/// Which cgroup layout this host offers, if any usable.
pub fn detect() -> Option<CgroupVersion> {
    let v2 = fs::read_to_string(Path::new(ROOT).join("cgroup.controllers")).ok();
    if let Some(controllers) = v2 {
        let has = |c: &str| controllers.split_whitespace().any(|x| x == c);
        if has("memory") && has("pids") {
            return Some(CgroupVersion::V2);
        }
    }
    V1_CONTROLLERS
        .iter()
        .all(|c| Path::new(ROOT).join(c).join("tasks").exists())
        .then_some(CgroupVersion::V1)
}

/// One worker's cgroup: a folder under `ephemeral/` in each hierarchy.
#[derive(Debug)]
pub struct Cgroup {
    version: CgroupVersion,
    /// One folder (v2) or one per controller (v1).
    dirs: Vec<PathBuf>,
}

static NEXT: AtomicU64 = AtomicU64::new(0);

impl Cgroup {
    /// Creates a fresh cgroup with `limits`, for a worker.
    pub fn create(version: CgroupVersion, limits: CgroupLimits) -> io::Result<Cgroup> {
        Cgroup::create_as('w', version, limits)
    }

    /// Creates a fresh cgroup named `<kind><server pid>-<n>`: `w` for a
    /// worker, `f` for a fork server.
    pub(crate) fn create_as(
        kind: char,
        version: CgroupVersion,
        limits: CgroupLimits,
    ) -> io::Result<Cgroup> {
        let name = format!(
            "{kind}{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let dirs = match version {
            CgroupVersion::V2 => {
                enable_v2_controllers()?;
                vec![Path::new(ROOT).join(PARENT).join(&name)]
            }
            CgroupVersion::V1 => V1_CONTROLLERS
                .iter()
                .map(|c| Path::new(ROOT).join(c).join(PARENT).join(&name))
                .collect(),
        };
        for dir in &dirs {
            fs::create_dir_all(dir)?;
        }
        let cgroup = Cgroup { version, dirs };
        cgroup.set_limits(limits)?;
        Ok(cgroup)
    }

    fn dir(&self, controller: &str) -> &Path {
        match self.version {
            CgroupVersion::V2 => &self.dirs[0],
            CgroupVersion::V1 => {
                let i = V1_CONTROLLERS
                    .iter()
                    .position(|c| *c == controller)
                    .unwrap_or(0);
                &self.dirs[i]
            }
        }
    }

    fn write(&self, controller: &str, file: &str, value: &str) -> io::Result<()> {
        let path = self.dir(controller).join(file);
        fs::write(&path, value)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))
    }

    fn read(&self, controller: &str, file: &str) -> String {
        fs::read_to_string(self.dir(controller).join(file)).unwrap_or_default()
    }

    /// Writes `limits` to the cgroup's controllers.
    pub fn set_limits(&self, limits: CgroupLimits) -> io::Result<()> {
        self.set_memory(limits.memory_bytes)?;
        let quota = limits.cpu_millis * CPU_PERIOD_US / 1000;
        match self.version {
            CgroupVersion::V2 => {
                self.write("pids", "pids.max", &limits.max_tasks.to_string())?;
                // cpu may not be delegated; memory and pids are what protect.
                let _ = self.write("cpu", "cpu.max", &format!("{quota} {CPU_PERIOD_US}"));
            }
            CgroupVersion::V1 => {
                self.write("pids", "pids.max", &limits.max_tasks.to_string())?;
                self.write("cpu", "cpu.cfs_period_us", &CPU_PERIOD_US.to_string())?;
                self.write("cpu", "cpu.cfs_quota_us", &quota.to_string())?;
            }
        }
        Ok(())
    }

    /// Sets the memory cap (swap included where the host accounts it).
    pub fn set_memory(&self, bytes: u64) -> io::Result<()> {
        let bytes = bytes.to_string();
        match self.version {
            CgroupVersion::V2 => {
                self.write("memory", "memory.max", &bytes)?;
                let _ = self.write("memory", "memory.swap.max", "0");
            }
            CgroupVersion::V1 => {
                // memsw must stay >= the memory cap: raise or lower in order.
                let memsw = self
                    .dir("memory")
                    .join("memory.memsw.limit_in_bytes")
                    .exists();
                if memsw {
                    let _ = self.write("memory", "memory.memsw.limit_in_bytes", &bytes);
                }
                self.write("memory", "memory.limit_in_bytes", &bytes)?;
                if memsw {
                    self.write("memory", "memory.memsw.limit_in_bytes", &bytes)?;
                }
            }
        }
        Ok(())
    }

    /// Moves `pid` in.
    pub fn add(&self, pid: libc::pid_t) -> io::Result<()> {
        for dir in &self.dirs {
            let path = dir.join("cgroup.procs");
            fs::write(&path, pid.to_string())
                .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        }
        Ok(())
    }

    /// The memory cap as set, in bytes.
    pub fn memory_limit(&self) -> u64 {
        let file = match self.version {
            CgroupVersion::V2 => "memory.max",
            CgroupVersion::V1 => "memory.limit_in_bytes",
        };
        self.read("memory", file).trim().parse().unwrap_or(u64::MAX)
    }

    /// Whether the kernel's OOM killer acted in this cgroup.
    pub fn oom_killed(&self) -> bool {
        let (file, key) = match self.version {
            CgroupVersion::V2 => ("memory.events", "oom_kill"),
            CgroupVersion::V1 => ("memory.oom_control", "oom_kill"),
        };
        counter(&self.read("memory", file), key) > 0
    }

    /// Whether a task was refused for the pids cap.
    pub fn tasks_refused(&self) -> bool {
        counter(&self.read("pids", "pids.events"), "max") > 0
    }

    /// The folders, for tests and diagnostics.
    pub fn paths(&self) -> &[PathBuf] {
        &self.dirs
    }

    /// Removes the folders; the processes must be gone.
    pub fn remove(&self) {
        for dir in &self.dirs {
            // A dying process may linger for a moment in the cgroup.
            for _ in 0..50 {
                match fs::remove_dir(dir) {
                    Err(e) if e.raw_os_error() == Some(libc::EBUSY) => {
                        std::thread::sleep(std::time::Duration::from_millis(2))
                    }
                    _ => break,
                }
            }
        }
    }
}

/// `key N` in a flat-keyed cgroup file.
fn counter(text: &str, key: &str) -> u64 {
    text.lines()
        .filter_map(|l| l.split_once(' '))
        .find(|(k, _)| *k == key)
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0)
}

fn enable_v2_controllers() -> io::Result<()> {
    let parent = Path::new(ROOT).join(PARENT);
    fs::create_dir_all(&parent)?;
    for dir in [Path::new(ROOT), parent.as_path()] {
        // cpu may be missing or busy; memory and pids are required.
        let _ = fs::write(dir.join("cgroup.subtree_control"), "+cpu");
        fs::write(dir.join("cgroup.subtree_control"), "+memory +pids")?;
    }
    Ok(())
}

/// Removes empty worker cgroups a crashed server left behind.
pub fn remove_stale(version: CgroupVersion) {
    let parents: Vec<PathBuf> = match version {
        CgroupVersion::V2 => vec![Path::new(ROOT).join(PARENT)],
        CgroupVersion::V1 => V1_CONTROLLERS
            .iter()
            .map(|c| Path::new(ROOT).join(c).join(PARENT))
            .collect(),
    };
    for parent in parents {
        let Ok(entries) = fs::read_dir(&parent) else {
            continue;
        };
        for entry in entries.flatten() {
            // Only those of servers that are gone (`w<server pid>-<n>`,
            // `f…` for fork servers).
            let name = entry.file_name().to_string_lossy().into_owned();
            let owner = name
                .strip_prefix(['w', 'f'])
                .and_then(|rest| rest.split_once('-'))
                .map(|(pid, _)| pid.to_string());
            if let Some(pid) = owner
                && !Path::new("/proc").join(&pid).exists()
            {
                let _ = fs::remove_dir(entry.path());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn counters_are_read_by_key() {
        let text = "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n";
        assert_eq!(super::counter(text, "oom_kill"), 2);
        assert_eq!(super::counter(text, "missing"), 0);
    }
}
