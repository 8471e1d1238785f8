//! Compiled components, kept on disk so a fresh process never recompiles.
//!
//! An entry is named by a hash of the component's bytes and the engine's
//! compatibility hash (the wasmtime version and its compilation settings), so a changed component or
//! an upgraded engine simply misses. Each file ends with a BLAKE3 checksum of
//! its body: a truncated or corrupted entry is detected before wasmtime ever
//! sees it, then deleted and rebuilt rather than trusted.
//!
//! Naming an entry means hashing the component, and checking it means
//! reading it whole: for the scientific python that is 150 MB and 320 MB,
//! every time a new worker process or microVM first runs it. So whoever
//! compiles or checks a program's entry (the server before it starts its
//! workers, the host before it boots a microVM template) writes it down in
//! the cache's index, `programs.index`: the program's file (by name, length
//! and modification second) and its checked entry. A process that finds its
//! program there maps the entry at once (see [`ComponentCache::indexed`]).
//!
//! A release ships its components precompiled (for a portable CPU) in a
//! read-only folder: the cache's *seed*. An entry missing here but present
//! there is linked in (copied across filesystems) before it is used, so a
//! fresh install compiles nothing and the writable cache still gets its
//! "checked" notes, locks and index.

use std::fs;
use std::hash::{Hash, Hasher};
use std::io::Write;
use std::path::{Path, PathBuf};

use wasmtime::Engine;
use wasmtime::component::Component;

use crate::Error;

const CHECKSUM_LEN: usize = 32;
/// The index of programs' checked entries (see the module docs).
const INDEX: &str = "programs.index";

/// How a component was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CacheOutcome {
    /// Loaded from a valid cache entry.
    Hit,
    /// Not cached yet: compiled and stored.
    Compiled,
    /// A cache entry was stale or corrupt: compiled again and replaced.
    Rebuilt,
}

/// A component's bytes, as the cache names them: by a hash of the bytes,
/// or by a digest computed ahead (the embedded shell's, at build time),
/// so that naming its entry reads none of the 8 MB it would hash — which
/// every new worker process and `ephemeral exec` did.
#[derive(Debug, Clone, Copy)]
pub struct Wasm<'a> {
    bytes: &'a [u8],
    digest: Option<&'a [u8; 32]>,
}

impl<'a> Wasm<'a> {
    /// `bytes`, named by `digest`: their BLAKE3 digest, computed ahead
    /// (the caller's promise; a wrong one names the entry of other bytes).
    /// The entry is not the one the bytes alone would name.
    pub const fn with_digest(bytes: &'a [u8], digest: &'a [u8; 32]) -> Wasm<'a> {
        Wasm {
            bytes,
            digest: Some(digest),
        }
    }

    /// The component's bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
}

impl<'a> From<&'a [u8]> for Wasm<'a> {
    fn from(bytes: &'a [u8]) -> Wasm<'a> {
        Wasm {
            bytes,
            digest: None,
        }
    }
}

impl<'a> From<&'a Vec<u8>> for Wasm<'a> {
    fn from(bytes: &'a Vec<u8>) -> Wasm<'a> {
        Wasm::from(bytes.as_slice())
    }
}

/// The on-disk cache of precompiled components.
pub struct ComponentCache {
    dir: PathBuf,
    seed: Option<PathBuf>,
    /// Names the engine's settings in the index: one folder may hold
    /// entries of several engines (a change of settings, a portable and
    /// a native engine), and a program's line must name its engine's.
    engine_tag: String,
}

impl ComponentCache {
    /// A cache in `dir`, made on first use.
    pub fn new(dir: impl Into<PathBuf>) -> ComponentCache {
        ComponentCache {
            dir: dir.into(),
            seed: None,
            engine_tag: String::new(),
        }
    }

    /// The same cache, its index keeping the lines of `engine`'s entries
    /// apart from other engines'.
    pub fn for_engine(mut self, engine: &Engine) -> ComponentCache {
        let mut key = KeyHasher(blake3::Hasher::new());
        engine.precompile_compatibility_hash().hash(&mut key);
        self.engine_tag = key.0.finalize().to_hex()[..12].to_string();
        self
    }

    /// A program's key in the index.
    fn index_key(&self, name: &str) -> String {
        if self.engine_tag.is_empty() {
            name.to_owned()
        } else {
            format!("{name}@{}", self.engine_tag)
        }
    }

    /// The same cache, taking entries it lacks from the read-only folder
    /// `seed` (a release's precompiled components) when that has them.
    pub fn with_seed(mut self, seed: Option<PathBuf>) -> ComponentCache {
        self.seed = seed;
        self
    }

    /// The folder the entries are kept in.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file that holds (or will hold) `wasm` compiled for `engine`,
    /// taken from the seed if this folder lacks it and the seed has it.
    pub fn entry_path<'a>(
        &self,
        engine: &Engine,
        name: &str,
        wasm: impl Into<Wasm<'a>>,
    ) -> PathBuf {
        let wasm = wasm.into();
        let mut key = KeyHasher(blake3::Hasher::new());
        match wasm.digest {
            // Tagged, so that no component's bytes name the same entry.
            Some(digest) => {
                key.0.update(b"blake3 digest\0");
                key.0.update(digest);
            }
            None => {
                key.0.update(wasm.bytes);
            }
        }
        engine.precompile_compatibility_hash().hash(&mut key);
        let hex = key.0.finalize().to_hex();
        let path = self.dir.join(format!("{name}-{}.cwasm", &hex[..32]));
        self.adopt(&path);
        path
    }

    /// The entry of `wasm` for `engine` if it is there and already
    /// checked, so that a process that may not write here (a worker) maps
    /// it at once: what a client that leaves the loading to workers asks
    /// before it does (see `Runtime::warm_cache_dir`).
    pub fn checked_entry<'a>(
        &self,
        engine: &Engine,
        name: &str,
        wasm: impl Into<Wasm<'a>>,
    ) -> Option<PathBuf> {
        let path = self.entry_path(engine, name, wasm);
        self.checked_before(&path).then_some(path)
    }

    /// Brings the seed's copy of entry `path` in if this folder lacks it:
    /// a hard link (the same pages for every process), else a copy. A
    /// failure only leaves the entry to be compiled.
    fn adopt(&self, path: &Path) {
        let (Some(seed), Some(file)) = (&self.seed, path.file_name()) else {
            return;
        };
        let from = seed.join(file);
        if path.exists() || !from.is_file() {
            return;
        }
        let adopted = fs::create_dir_all(&self.dir).and_then(|()| {
            let tmp = self.dir.join(format!(".{}.seed", file.to_string_lossy()));
            let _ = fs::remove_file(&tmp);
            if fs::hard_link(&from, &tmp).is_err() {
                fs::copy(&from, &tmp)?;
            }
            fs::rename(&tmp, path)
        });
        match adopted {
            Ok(()) => tracing::debug!(entry = %path.display(), "taken from the seed"),
            Err(e) => {
                tracing::warn!(entry = %path.display(), error = %e, "cannot take the seed's entry")
            }
        }
    }

    /// Makes sure an entry for `wasm` exists, compiling it if not, without
    /// loading it (the engine may target another machine).
    pub fn ensure_compiled<'a>(
        &self,
        engine: &Engine,
        name: &str,
        wasm: impl Into<Wasm<'a>>,
    ) -> Result<PathBuf, Error> {
        let wasm = wasm.into();
        let path = self.entry_path(engine, name, wasm);
        let wasm = wasm.bytes;
        let _lock = self.compile_lock(&path);
        if !path.exists() {
            let compiled = engine
                .precompile_component(wasm)
                .map_err(|e| Error::Component(name.to_owned(), format!("{e:#}")))?;
            self.store(&path, &compiled).map_err(|e| {
                Error::Component(name.to_owned(), format!("{}: {e}", path.display()))
            })?;
        }
        Ok(path)
    }

    /// The component for `wasm`, from the cache when a valid entry exists.
    pub fn load_or_compile<'a>(
        &self,
        engine: &Engine,
        name: &str,
        wasm: impl Into<Wasm<'a>>,
    ) -> Result<(Component, CacheOutcome), Error> {
        let wasm = wasm.into();
        let path = self.entry_path(engine, name, wasm);
        let wasm = wasm.bytes;
        let mut outcome = CacheOutcome::Compiled;
        if path.exists() {
            match self.load(engine, &path) {
                Some(component) => return Ok((component, CacheOutcome::Hit)),
                None => {
                    tracing::warn!(path = %path.display(), "cache entry invalid; rebuilding");
                    let _ = fs::remove_file(&path);
                    outcome = CacheOutcome::Rebuilt;
                }
            }
        }
        let _lock = self.compile_lock(&path);
        if outcome == CacheOutcome::Compiled && path.exists() {
            // Another process (or runtime) compiled it while we waited.
            if let Some(component) = self.load(engine, &path) {
                return Ok((component, CacheOutcome::Hit));
            }
        }
        let compiled = engine
            .precompile_component(wasm)
            .map_err(|e| Error::Component(name.to_owned(), format!("{e:#}")))?;
        if let Err(e) = self.store(&path, &compiled) {
            // A read-only or full cache folder only costs speed next time.
            tracing::warn!(path = %path.display(), error = %e, "cannot write cache entry");
        }
        // SAFETY: `compiled` was produced just now by this very engine.
        let component = unsafe { Component::deserialize(engine, &compiled) }
            .map_err(|e| Error::Component(name.to_owned(), format!("{e:#}")))?;
        Ok((component, outcome))
    }

    /// Held while an entry is compiled, so that processes starting together
    /// (a test suite's servers, a pool's workers) compile a component once
    /// and the others wait for it: the scientific python takes a minute and
    /// two GiB to compile. `None` (no lock, compile anyway) where the cache
    /// folder is read-only.
    /// The checked entry of program `name` whose component is the file
    /// `wasm`, if the index has one for that file as it is now (same
    /// length, same modification second) and the entry is there.
    pub fn indexed(&self, name: &str, wasm: &Path) -> Option<PathBuf> {
        // Not the seed's index: an entry taken from the seed is checked
        // (and so noted for the workers) before this index names it.
        index_lookup(&self.dir, &self.index_key(name), wasm)
    }

    /// Writes down in the index that `entry` (checked or just compiled) is
    /// program `name`'s for the file `wasm` as it is now.
    pub fn record(&self, name: &str, wasm: &Path, entry: &Path) -> std::io::Result<()> {
        let name = self.index_key(name);
        let name = name.as_str();
        let stamp = FileStamp::of(wasm)
            .ok_or_else(|| std::io::Error::other(format!("{}: no such file", wasm.display())))?;
        let file = entry
            .file_name()
            .and_then(|f| f.to_str())
            .filter(|f| !f.contains(' '))
            .ok_or_else(|| std::io::Error::other("an entry's name"))?;
        let path = self.dir.join(INDEX);
        let _lock = self.compile_lock(&path);
        let old = fs::read_to_string(&path).unwrap_or_default();
        let mut lines: Vec<&str> = old
            .lines()
            .filter(|l| l.split(' ').next() != Some(name))
            .collect();
        let line = format!("{name} {} {} {file}", stamp.len, stamp.mtime);
        lines.push(&line);
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        for line in lines {
            writeln!(tmp, "{line}")?;
        }
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o644))?;
        tmp.persist(&path).map_err(|e| e.error)?;
        Ok(())
    }

    fn compile_lock(&self, entry: &Path) -> Option<fs::File> {
        fs::create_dir_all(&self.dir).ok()?;
        let file = fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(entry.with_extension("lock"))
            .ok()?;
        file.lock().ok()?;
        Some(file)
    }

    /// A valid entry's component, or `None` if the file is damaged or was
    /// made by an incompatible engine.
    fn load(&self, engine: &Engine, path: &Path) -> Option<Component> {
        if !self.checked_before(path) {
            let bytes = fs::read(path).ok()?;
            let body_len = bytes.len().checked_sub(CHECKSUM_LEN)?;
            let (body, checksum) = bytes.split_at(body_len);
            if blake3::hash(body).as_bytes() != checksum {
                return None;
            }
            drop(bytes);
            self.mark_checked(path);
        }
        // SAFETY: wasmtime requires that deserialized bytes come from
        // `Engine::precompile_*` of a compatible engine and were not
        // tampered with. The checksum proves the body is exactly what
        // `store` wrote — checked just now, or by an earlier load of this
        // very file (same inode, length and modification time: entries are
        // replaced by rename, never rewritten in place) — the file name
        // encodes the engine's compatibility hash, and wasmtime re-checks
        // that compatibility on load. Mapping the file rather than copying
        // it lets every process that loads the same entry share its code
        // pages.
        unsafe { Component::deserialize_file(engine, path) }.ok()
    }

    /// Whether an earlier load verified this very file. Reading and hashing
    /// the shell's entry was a third of a jailed worker's start; the server
    /// checks it once and its workers map it.
    fn checked_before(&self, path: &Path) -> bool {
        let Some(identity) = EntryIdentity::of(path) else {
            return false;
        };
        fs::read_to_string(checked_marker(path)).is_ok_and(|said| said.trim() == identity)
    }

    /// Notes that `path` as it is now passed its checksum (where the folder
    /// is writable; a read-only cache only costs the check next time).
    fn mark_checked(&self, path: &Path) {
        let Some(identity) = EntryIdentity::of(path) else {
            return;
        };
        let written = tempfile::NamedTempFile::new_in(&self.dir).and_then(|mut tmp| {
            writeln!(tmp, "{identity}")?;
            use std::os::unix::fs::PermissionsExt;
            tmp.as_file()
                .set_permissions(fs::Permissions::from_mode(0o644))?;
            tmp.persist(checked_marker(path)).map_err(|e| e.error)?;
            Ok(())
        });
        if let Err(e) = written {
            tracing::debug!(path = %path.display(), error = %e, "cannot note a checked entry");
        }
    }

    /// Writes an entry atomically: a reader sees the old file, no file, or
    /// the whole new one.
    fn store(&self, path: &Path, compiled: &[u8]) -> std::io::Result<()> {
        fs::create_dir_all(&self.dir)?;
        let mut tmp = tempfile::NamedTempFile::new_in(&self.dir)?;
        tmp.write_all(compiled)?;
        tmp.write_all(blake3::hash(compiled).as_bytes())?;
        // Readable by the jailed workers, which run as their own users.
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(fs::Permissions::from_mode(0o644))?;
        tmp.persist(path).map_err(|e| e.error)?;
        // Just written whole: a worker (which may not write the note) must
        // not read and hash it all again before it maps it.
        self.mark_checked(path);
        Ok(())
    }
}

/// What the index knows a program's file by: its length and the second it
/// was last modified (all a disk image keeps of the time).
struct FileStamp {
    len: u64,
    mtime: i64,
}

impl FileStamp {
    fn of(path: &Path) -> Option<FileStamp> {
        use std::os::unix::fs::MetadataExt;
        let meta = fs::metadata(path).ok()?;
        Some(FileStamp {
            len: meta.len(),
            mtime: meta.mtime(),
        })
    }
}

/// An entry file's identity: a rename makes a new one.
struct EntryIdentity;

impl EntryIdentity {
    fn of(path: &Path) -> Option<String> {
        use std::os::unix::fs::MetadataExt;
        let meta = fs::metadata(path).ok()?;
        Some(format!(
            "{} {} {} {}.{}",
            meta.dev(),
            meta.ino(),
            meta.len(),
            meta.mtime(),
            meta.mtime_nsec()
        ))
    }
}

/// The entry the index in `dir` names for program `name` as the file
/// `wasm` is now, if that entry is there.
fn index_lookup(dir: &Path, name: &str, wasm: &Path) -> Option<PathBuf> {
    let stamp = FileStamp::of(wasm)?;
    let index = fs::read_to_string(dir.join(INDEX)).ok()?;
    let entry = index.lines().find_map(|line| {
        let words: Vec<&str> = line.split(' ').collect();
        let [program, len, mtime, file] = words.as_slice() else {
            return None;
        };
        let fresh =
            *program == name && len.parse() == Ok(stamp.len) && mtime.parse() == Ok(stamp.mtime);
        // An entry is a file name of this folder, nothing else.
        (fresh && !file.contains('/') && file.ends_with(".cwasm")).then(|| dir.join(file))
    })?;
    entry.is_file().then_some(entry)
}

/// Where an entry's "checked" note is kept.
fn checked_marker(entry: &Path) -> PathBuf {
    entry.with_extension("checked")
}

/// Feeds `Hash` output into BLAKE3, so the key is stable across processes
/// (unlike `DefaultHasher`'s).
struct KeyHasher(blake3::Hasher);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        let hash = self.0.finalize();
        let mut first = [0u8; 8];
        first.copy_from_slice(&hash.as_bytes()[..8]);
        u64::from_le_bytes(first)
    }

    fn write(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A cache folder with a program file and an entry for it.
    fn cache_with_entry() -> (tempfile::TempDir, ComponentCache, PathBuf, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let cache = ComponentCache::new(dir.path().join("cache"));
        fs::create_dir_all(cache.dir()).unwrap();
        let wasm = dir.path().join("prog.wasm");
        fs::write(&wasm, b"\0asm component bytes").unwrap();
        let entry = cache
            .dir()
            .join("prog-0123456789abcdef0123456789abcdef.cwasm");
        fs::write(&entry, b"compiled").unwrap();
        (dir, cache, wasm, entry)
    }

    #[test]
    fn an_indexed_entry_is_found_for_the_file_as_it_was() {
        let (_dir, cache, wasm, entry) = cache_with_entry();
        assert_eq!(cache.indexed("prog", &wasm), None);
        cache.record("prog", &wasm, &entry).unwrap();
        assert_eq!(cache.indexed("prog", &wasm), Some(entry.clone()));
        assert_eq!(cache.indexed("other", &wasm), None);
        // Recorded again (a rebuild): one line a program.
        cache.record("prog", &wasm, &entry).unwrap();
        let index = fs::read_to_string(cache.dir().join(INDEX)).unwrap();
        assert_eq!(index.lines().count(), 1, "{index}");
    }

    #[test]
    fn a_changed_file_or_a_missing_entry_is_not_trusted() {
        let (_dir, cache, wasm, entry) = cache_with_entry();
        cache.record("prog", &wasm, &entry).unwrap();
        fs::write(&wasm, b"\0asm other component, longer").unwrap();
        assert_eq!(
            cache.indexed("prog", &wasm),
            None,
            "a file of another length"
        );
        cache.record("prog", &wasm, &entry).unwrap();
        fs::remove_file(&entry).unwrap();
        assert_eq!(cache.indexed("prog", &wasm), None, "an entry that is gone");
    }

    #[test]
    fn an_index_line_cannot_point_outside_the_cache() {
        let (_dir, cache, wasm, _) = cache_with_entry();
        let stamp = FileStamp::of(&wasm).unwrap();
        let line = format!(
            "prog {} {} ../../etc/passwd.cwasm\n",
            stamp.len, stamp.mtime
        );
        fs::write(cache.dir().join(INDEX), line).unwrap();
        assert_eq!(cache.indexed("prog", &wasm), None);
    }
}
