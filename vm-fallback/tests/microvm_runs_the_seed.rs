//! A run's commands in a microVM, end to end, under the lab's AMD SVM: the
//! worker (static, musl) is the guest's init, its shell and python3
//! precompiled on this host for a portable CPU; the worker protocol goes,
//! unchanged, over the virtio console. The seed's four commands — `pwd;
//! whoami`, curl with no network, the python primes script, a file in
//! `/tmp` — give the seed's answers; the guest took the host's clock (and
//! fresh entropy) with `Start`; the VM ends by itself.

mod support;

use std::path::PathBuf;

use ephemeral_runtime::{RuntimeConfig, precompile_for_target};
use support::{build_musl, file, kernel, lab, section, stripped};

/// The guest's components: the shell and python3, compiled here for the
/// guest worker's target and a portable CPU, in a cache of their own.
fn guest_components() -> Vec<(PathBuf, String)> {
    let cache = PathBuf::from("/var/cache/ephemeral/guest-cache");
    let programs = PathBuf::from("/var/cache/ephemeral/guest-programs");
    std::fs::create_dir_all(&programs).unwrap();
    let python = RuntimeConfig::default_programs_dir().join("python3.wasm");
    assert!(
        python.is_file(),
        "no {}: run ./dev to build it",
        python.display()
    );
    let wanted = programs.join("python3.wasm");
    if std::fs::metadata(&wanted).map(|m| m.len()).ok()
        != std::fs::metadata(&python).map(|m| m.len()).ok()
    {
        std::fs::copy(&python, &wanted).unwrap();
    }
    let config = RuntimeConfig {
        cache_dir: Some(cache),
        programs_dir: Some(programs),
        portable_target: Some("x86_64-unknown-linux-musl".into()),
        ..RuntimeConfig::default()
    };
    let mut files: Vec<(PathBuf, String)> = precompile_for_target(&config)
        .expect("precompile for the guest")
        .into_iter()
        .map(|entry| {
            let name = entry.file_name().unwrap().to_string_lossy().into_owned();
            (entry, format!("/gcache/{name}"))
        })
        .collect();
    files.push((wanted, "/gprog/python3.wasm".into()));
    files
}

#[test]
fn the_seed_commands_run_in_a_microvm_through_the_worker_protocol() {
    let kernel = kernel();
    let built = build_musl(&[
        "-p",
        "ephemeral-worker",
        "--bin",
        "ephemeral-worker",
        "-p",
        "ephemeral-vm",
        "--example",
        "microvm_run",
    ]);
    let worker = stripped(&built.join("ephemeral-worker"));
    let runner = stripped(&built.join("examples/microvm_run"));
    let mut files = vec![
        file(&kernel, "/vmlinux"),
        file(&worker, "/worker"),
        file(&runner, "/microvm_run"),
    ];
    for (host, guest) in guest_components() {
        files.push(file(&host, &guest));
    }
    let script = r#"echo "==> seed"
/microvm_run /vmlinux /worker /gcache /gprog 400 -- 'pwd; whoami' -- 'command -v curl && curl -sS -m 8 https://example.com' -- "printf '%s\n' '#!/usr/bin/env python3' 'primes = []' 'n = 2' 'while len(primes) < 15:' '    if all(n % p for p in primes):' '        primes.append(n)' '    n += 1' 'print(*primes)' > primes.py && chmod +x primes.py && ./primes.py" -- "printf 'sandbox proof\n' > /tmp/proof.txt && ls -l /tmp/proof.txt" -- 'ls /; cat /etc/passwd; echo $?' -- 'date -u +year=%Y'
echo "<== seed: exit $?"
"#;
    let out = lab(&files, script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let seed = section(&stdout, "seed");
    let has = |line: &str| seed.iter().any(|l| l.contains(line));
    assert!(has("--- worker ready in the guest"), "{seed:?}");
    assert!(
        seed.iter()
            .any(|l| l.starts_with("/tmp/ephemeral-run-") && l.ends_with("/scratch")),
        "{seed:?}"
    );
    assert!(seed.contains(&"worker"), "{seed:?}");
    assert!(
        has("curl: (6) Could not resolve host: example.com"),
        "{seed:?}"
    );
    assert!(has("--- exit 6"), "{seed:?}");
    assert!(
        seed.contains(&"2 3 5 7 11 13 17 19 23 29 31 37 41 43 47"),
        "{seed:?}"
    );
    assert!(has("worker worker 14") && has("/tmp/proof.txt"), "{seed:?}");
    // The sandbox's own tree (its passwd names the run's scratch folder),
    // not the guest's initramfs, which has no /etc at all.
    assert!(
        has("worker:x:1000:1000:worker:/tmp/ephemeral-run-"),
        "{seed:?}"
    );
    // The guest took the host's clock: not 1970.
    let year = 1970
        + std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
            / 31_556_952;
    assert!(seed.contains(&format!("year={year}").as_str()), "{seed:?}");
    assert!(has("--- Reset after"), "{seed:?}");
    assert_eq!(seed.last(), Some(&"<== seed: exit 0"), "{seed:?}");
}
