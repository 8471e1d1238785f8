//! Criterion benchmarks of the sandbox's hot paths.

use criterion::{Criterion, criterion_group, criterion_main};
use ephemeral_runtime::SHELL_WASM;
use ephemeral_runtime::component_cache::ComponentCache;

fn fresh_sandbox_echo(c: &mut Criterion) {
    let rt = ephemeral_benches::runtime();
    c.bench_function("fresh sandbox + echo hi + destroy", |b| {
        b.iter(|| {
            let mut sb = rt.sandbox().build().unwrap();
            let out = sb.exec_captured("echo hi").unwrap();
            assert_eq!(out.stdout, b"hi\n");
            sb.destroy()
        })
    });
}

fn exec_in_existing_sandbox(c: &mut Criterion) {
    let rt = ephemeral_benches::runtime();
    let mut sb = rt.sandbox().build().unwrap();
    c.bench_function("exec echo hi in an existing sandbox", |b| {
        b.iter(|| sb.exec_captured("echo hi").unwrap())
    });
}

fn shell_load(c: &mut Criterion) {
    let rt = ephemeral_benches::runtime();
    let engine = rt.engine();
    let dir = tempdir();
    let cache = ComponentCache::new(&dir);
    cache.load_or_compile(engine, "shell", SHELL_WASM).unwrap();
    let mut group = c.benchmark_group("shell component");
    group.sample_size(10);
    group.bench_function("load precompiled from the cache", |b| {
        b.iter(|| cache.load_or_compile(engine, "shell", SHELL_WASM).unwrap())
    });
    group.bench_function("compile from wasm", |b| {
        b.iter(|| engine.precompile_component(SHELL_WASM).unwrap())
    });
    group.finish();
    let _ = std::fs::remove_dir_all(dir);
}

fn tempdir() -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("ephemeral-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

criterion_group!(
    benches,
    fresh_sandbox_echo,
    exec_in_existing_sandbox,
    shell_load
);
criterion_main!(benches);
