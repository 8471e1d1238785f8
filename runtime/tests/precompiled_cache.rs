//! Components are compiled once and loaded precompiled afterwards; a stale
//! or damaged cache entry is detected and rebuilt, never trusted.

mod common;

use ephemeral_runtime::component_cache::ComponentCache;
use ephemeral_runtime::{CacheOutcome, Runtime, RuntimeConfig, SHELL_WASM};

fn fresh_cache() -> (tempfile::TempDir, ComponentCache) {
    let dir = tempfile::tempdir().unwrap();
    let cache = ComponentCache::new(dir.path());
    (dir, cache)
}

#[test]
fn second_load_comes_from_the_cache() {
    let engine = common::runtime().engine().clone();
    let (_dir, cache) = fresh_cache();
    let (_, first) = cache.load_or_compile(&engine, "shell", SHELL_WASM).unwrap();
    let (_, second) = cache.load_or_compile(&engine, "shell", SHELL_WASM).unwrap();
    assert_eq!((first, second), (CacheOutcome::Compiled, CacheOutcome::Hit));
}

#[test]
fn a_new_runtime_loads_the_shell_precompiled() {
    let dir = tempfile::tempdir().unwrap();
    let config = RuntimeConfig {
        cache_dir: Some(dir.path().to_owned()),
        ..RuntimeConfig::default()
    };
    let first = Runtime::new(config.clone()).unwrap();
    assert_eq!(first.shell_cache_outcome(), CacheOutcome::Compiled);
    drop(first);
    let second = Runtime::new(config).unwrap();
    assert_eq!(second.shell_cache_outcome(), CacheOutcome::Hit);
}

#[test]
fn corrupt_entries_are_rebuilt() {
    let engine = common::runtime().engine().clone();
    let (_dir, cache) = fresh_cache();
    cache.load_or_compile(&engine, "shell", SHELL_WASM).unwrap();
    let path = cache.entry_path(&engine, "shell", SHELL_WASM);
    let good = std::fs::read(&path).unwrap();

    let mut flipped = good.clone();
    let middle = flipped.len() / 2;
    flipped[middle] ^= 0x40;
    let truncated = good[..good.len() / 3].to_vec();
    for damaged in [flipped, truncated, Vec::new(), b"not a cwasm".to_vec()] {
        std::fs::write(&path, &damaged).unwrap();
        let (_, outcome) = cache.load_or_compile(&engine, "shell", SHELL_WASM).unwrap();
        assert_eq!(outcome, CacheOutcome::Rebuilt);
        assert_eq!(std::fs::read(&path).unwrap(), good, "entry rewritten whole");
    }
}

#[test]
fn a_checked_entry_is_trusted_until_it_is_replaced() {
    let engine = common::runtime().engine().clone();
    let (_dir, cache) = fresh_cache();
    cache.load_or_compile(&engine, "shell", SHELL_WASM).unwrap();
    let path = cache.entry_path(&engine, "shell", SHELL_WASM);
    let marker = path.with_extension("checked");
    assert!(marker.exists(), "an entry just written whole is noted");
    std::fs::remove_file(&marker).unwrap();
    let (_, outcome) = cache.load_or_compile(&engine, "shell", SHELL_WASM).unwrap();
    assert_eq!(outcome, CacheOutcome::Hit);
    assert!(marker.exists(), "a load that checked the entry notes it");
    let (_, outcome) = cache.load_or_compile(&engine, "shell", SHELL_WASM).unwrap();
    assert_eq!(outcome, CacheOutcome::Hit);

    // Replaced by rename, as entries are: the note is for another file.
    let mut damaged = std::fs::read(&path).unwrap();
    let middle = damaged.len() / 2;
    damaged[middle] ^= 0x40;
    let other = path.with_extension("tmp");
    std::fs::write(&other, &damaged).unwrap();
    std::fs::rename(&other, &path).unwrap();
    let (_, outcome) = cache.load_or_compile(&engine, "shell", SHELL_WASM).unwrap();
    assert_eq!(outcome, CacheOutcome::Rebuilt);
}

#[test]
fn another_component_gets_another_entry() {
    let engine = common::runtime().engine().clone();
    let (_dir, cache) = fresh_cache();
    let other = common::guest_wasm("env_dump");
    assert_ne!(
        cache.entry_path(&engine, "x", SHELL_WASM),
        cache.entry_path(&engine, "x", &other)
    );
}

/// What lets `ephemeral exec` leave the loading to a worker: after one
/// runtime was made, the cache says it is warm (checked without making
/// a runtime), and the shell's utilities are written down, not asked again.
#[test]
fn a_runtime_leaves_the_cache_warm_for_the_next_process() {
    let cache = tempfile::tempdir().unwrap();
    let programs = tempfile::tempdir().unwrap();
    let config = RuntimeConfig {
        cache_dir: Some(cache.path().to_owned()),
        programs_dir: Some(programs.path().to_owned()),
        ..RuntimeConfig::default()
    };
    assert_eq!(Runtime::warm_cache_dir(&config).unwrap(), None, "cold");
    let first = Runtime::new(config.clone()).unwrap();
    let utilities = first.utilities().to_vec();
    assert!(utilities.iter().any(|u| u == "grep"), "{utilities:?}");
    drop(first);
    assert_eq!(
        Runtime::warm_cache_dir(&config).unwrap().as_deref(),
        Some(cache.path())
    );

    let listing = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "utilities"))
        .expect("the shell's utilities written down");
    // A damaged listing is not trusted: the shell is asked again.
    for damaged in ["", "\n\n", "/bin/x\n"] {
        std::fs::write(&listing, damaged).unwrap();
        let again = Runtime::new(config.clone()).unwrap();
        assert_eq!(again.utilities(), utilities.as_slice());
    }
    // A listing is what the next runtime believes: none asks the shell.
    std::fs::write(&listing, "grep\nonly-this-one\n").unwrap();
    let believed = Runtime::new(config).unwrap();
    assert_eq!(believed.utilities(), ["grep", "only-this-one"]);
}
