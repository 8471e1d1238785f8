//! The programs the shell can run besides its own utilities: every
//! `NAME.wasm` of the programs folder (`python3`, `node`, the scientific
//! python), with the names they also answer to, their read-only files
//! (`program_root`), and how each is loaded on first use — its indexed
//! compiled entry mapped as it is, or the long way through the cache.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use wasmtime::component::Component;

use crate::Error;
use crate::component_cache::ComponentCache;
use crate::engine::Runtime;
use crate::linker::{Program, prelink};
use crate::program_root::ProgramRoot;

impl Runtime {
    /// A program's component: its indexed entry mapped as it is, else the
    /// long way (read, hash, look up or compile, check).
    pub(crate) fn load_slot(&self, slot: &ProgramSlot) -> Result<Program, Error> {
        let name = slot.name();
        if let Some(entry) = self.cache().indexed(name, &slot.path) {
            // SAFETY: the entry was compiled by this cache's engine settings
            // and checked when it was indexed; wasmtime checks its header.
            match unsafe { Component::deserialize_file(&self.engine, &entry) } {
                Ok(component) => return prelink(&self.linker, name, &component),
                Err(e) => tracing::warn!(program = name, error = %e, "indexed entry refused"),
            }
        }
        let wasm = std::fs::read(&slot.path).map_err(|e| {
            Error::Component(name.to_owned(), format!("{}: {e}", slot.path.display()))
        })?;
        self.load_program(name, &wasm)
    }
}

/// A program found in the programs folder, loaded on first use.
pub(crate) struct ProgramSlot {
    pub(crate) path: PathBuf,
    /// Its read-only files, laid into every sandbox (see `program_root`).
    pub(crate) root: Option<ProgramRoot>,
    pub(crate) loaded: OnceLock<Result<Program, String>>,
}

impl ProgramSlot {
    /// The program's own name: its file's stem (`python3` for an alias
    /// `python`), which keys its cache entry.
    pub(crate) fn name(&self) -> &str {
        self.path
            .file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or_default()
    }
}

/// Other names a program answers to, as on Debian (`python` is `python3`).
const ALIASES: &[(&str, &str)] = &[("python", "python3"), ("nodejs", "node"), ("js", "node")];

/// Every `NAME.wasm` in `dir` is a program `NAME`; aliases share its slot.
/// A program whose read-only files are not all there is left out (with a
/// warning), as is, when `with_roots` is false, any program with such files.
pub(crate) fn find_programs(dir: PathBuf) -> BTreeMap<String, Arc<ProgramSlot>> {
    find_programs_where(dir, true)
}

pub(crate) fn find_programs_where(
    dir: PathBuf,
    with_roots: bool,
) -> BTreeMap<String, Arc<ProgramSlot>> {
    let mut found = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return found;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let (Some(stem), Some("wasm")) = (
            path.file_stem().and_then(|s| s.to_str()),
            path.extension().and_then(|s| s.to_str()),
        ) else {
            continue;
        };
        let root = match ProgramRoot::find(&path) {
            Ok(root) => root,
            Err(e) => {
                tracing::warn!(program = stem, error = %e, "program left out");
                continue;
            }
        };
        if root.is_some() && !with_roots {
            continue;
        }
        let slot = Arc::new(ProgramSlot {
            path: path.clone(),
            root,
            loaded: OnceLock::new(),
        });
        found.insert(stem.to_owned(), slot);
    }
    for (alias, name) in ALIASES {
        if let Some(slot) = found.get(*name).cloned() {
            found.entry((*alias).to_owned()).or_insert(slot);
        }
    }
    found
}

pub(crate) fn default_programs_dir() -> PathBuf {
    std::env::var_os("EPHEMERAL_PROGRAMS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/cache/ephemeral/programs"))
}

/// Writes a checked entry down in the cache's index; a cache that cannot
/// be written to only costs the next process the long way.
pub(crate) fn record(cache: &ComponentCache, name: &str, wasm: &Path, entry: &Path) {
    if let Err(e) = cache.record(name, wasm, entry) {
        tracing::debug!(program = name, error = %e, "cannot index the entry");
    }
}
