//! Where this executable's parts are: the VMM, the guest kernel and
//! worker, the sandbox programs and their precompiled components.
//!
//! A release (`./dev dist`) is one tree — `bin/ephemeral`,
//! `bin/ephemeral-vmm`, `lib/ephemeral/{guest,programs,components}` —
//! unpacked anywhere, or installed under `/usr/local` (`install.sh`) or
//! `/usr` (the `.deb`). The binary finds the rest from its own path, so an
//! installed server needs no environment variable. A variable still names
//! any one part (development, tests); a build from a source checkout falls
//! back to `/var/cache/ephemeral`, where `./dev` builds them.

use std::path::{Path, PathBuf};

use ephemeral_runtime::RuntimeConfig;

/// Where the heavy caches live: compiled components, microVM templates.
pub const CACHE_ROOT: &str = "/var/cache/ephemeral";

/// The folder of a release's own parts, under its prefix.
const RELEASE_LIB: &str = "lib/ephemeral";

/// Where one part was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// The environment variable of that name.
    Variable(&'static str),
    /// The release this executable belongs to.
    Release,
    /// The build cache `./dev` fills (a source checkout).
    BuildCache,
}

impl std::fmt::Display for Origin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Origin::Variable(var) => write!(f, "from ${var}"),
            Origin::Release => f.write_str("from the release"),
            Origin::BuildCache => f.write_str("from the build cache"),
        }
    }
}

/// A part's path and where that came from; it may not exist.
#[derive(Debug, Clone)]
pub struct Part {
    /// Where it is (or would be).
    pub path: PathBuf,
    /// Why there.
    pub origin: Origin,
}

/// This executable's layout: a release's, or a source checkout's.
#[derive(Debug, Clone)]
pub struct Layout {
    /// `PREFIX/lib/ephemeral` when this executable is `PREFIX/bin/…` of a
    /// release.
    release: Option<PathBuf>,
}

impl Layout {
    /// The layout of the running executable.
    pub fn detect() -> Layout {
        let exe = std::env::current_exe().and_then(|p| p.canonicalize());
        Layout::of_executable(exe.as_deref().ok())
    }

    /// The layout an executable at `exe` belongs to.
    pub fn of_executable(exe: Option<&Path>) -> Layout {
        let release = exe
            .and_then(Path::parent)
            .filter(|bin| bin.file_name().is_some_and(|n| n == "bin"))
            .and_then(Path::parent)
            .map(|prefix| prefix.join(RELEASE_LIB))
            .filter(|lib| lib.join("guest").is_dir() || lib.join("programs").is_dir());
        Layout { release }
    }

    /// `PREFIX/lib/ephemeral` of the release this executable is part of.
    pub fn release(&self) -> Option<&Path> {
        self.release.as_deref()
    }

    /// `$var`, else `release_path` in the release, else `cached` in the
    /// build cache.
    fn part(&self, var: &'static str, release_path: &str, cached: &str) -> Part {
        if let Some(path) = std::env::var_os(var) {
            return Part {
                path: path.into(),
                origin: Origin::Variable(var),
            };
        }
        match &self.release {
            Some(lib) => Part {
                path: lib.join(release_path),
                origin: Origin::Release,
            },
            None => Part {
                path: Path::new(CACHE_ROOT).join(cached),
                origin: Origin::BuildCache,
            },
        }
    }

    /// The sandbox programs (`python3.wasm`, `node.wasm`, …).
    pub fn programs_dir(&self) -> Part {
        self.part("EPHEMERAL_PROGRAMS_DIR", "programs", "programs")
    }

    /// The microVM's guest kernel.
    pub fn guest_kernel(&self) -> Part {
        let mut part = self.part("EPHEMERAL_GUEST_DIR", "guest", "guest");
        part.path.push("vmlinux");
        part
    }

    /// The static worker that is the microVM guest's init.
    pub fn guest_worker(&self) -> Part {
        self.part(
            "EPHEMERAL_GUEST_WORKER",
            "guest/ephemeral-worker",
            "target-musl/x86_64-unknown-linux-musl/release/ephemeral-worker",
        )
    }

    /// A release's read-only disk for the guest's programs with files of
    /// their own, made at build time (elsewhere the server makes it).
    pub fn guest_disk(&self) -> Option<PathBuf> {
        let disk = self.release.as_ref()?.join("guest/disk.img");
        disk.is_file().then_some(disk)
    }

    /// A release's components, precompiled for a portable CPU.
    pub fn precompiled_components(&self) -> Option<PathBuf> {
        let dir = self.release.as_ref()?.join("components");
        dir.is_dir().then_some(dir)
    }

    /// How the server's runtime (and so its workers) compile and find
    /// components: in a release, for the portable CPU its shipped
    /// components were compiled for, into
    /// `/var/cache/ephemeral/components-portable` seeded from them (a folder
    /// of its own: a source build's native entries for the same programs
    /// must not meet them in one index); elsewhere the runtime's defaults.
    pub fn runtime_config(&self) -> RuntimeConfig {
        let programs = self.programs_dir();
        let mut config = RuntimeConfig {
            programs_dir: Some(programs.path),
            ..RuntimeConfig::default()
        };
        if let Some(seed) = self.precompiled_components() {
            if std::env::var_os("EPHEMERAL_CACHE_DIR").is_none() {
                config.cache_dir = Some(Path::new(CACHE_ROOT).join("components-portable"));
            }
            config.portable_target = Some(ephemeral_worker::entry::TARGET_TRIPLE.into());
            config.seed_cache_dir = Some(seed);
        }
        config
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_release_is_found_from_its_binarys_path() {
        let root = tempfile::tempdir().unwrap();
        let prefix = root.path().join("ephemeral-1.0.0-x86_64-linux");
        std::fs::create_dir_all(prefix.join("bin")).unwrap();
        std::fs::create_dir_all(prefix.join("lib/ephemeral/guest")).unwrap();
        let layout = Layout::of_executable(Some(&prefix.join("bin/ephemeral")));
        assert_eq!(
            layout.release(),
            Some(prefix.join("lib/ephemeral").as_path())
        );
        if std::env::var_os("EPHEMERAL_GUEST_WORKER").is_none() {
            let worker = layout.guest_worker();
            assert_eq!(worker.origin, Origin::Release);
            assert_eq!(
                worker.path,
                prefix.join("lib/ephemeral/guest/ephemeral-worker")
            );
        }
    }

    #[test]
    fn a_binary_outside_a_release_uses_the_build_cache() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(root.path().join("bin")).unwrap();
        for exe in [
            root.path().join("bin/ephemeral"),
            root.path().join("ephemeral"),
        ] {
            let layout = Layout::of_executable(Some(&exe));
            assert!(layout.release().is_none());
            assert!(layout.precompiled_components().is_none());
        }
        assert!(Layout::of_executable(None).release().is_none());
    }
}
