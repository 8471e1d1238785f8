//! The release `./dev dist` makes, as an operator gets it: the tarball
//! unpacked, installed by its `install.sh`, and the `.deb` unpacked. The
//! static `ephemeral` runs in a root that holds nothing but the release
//! (no libc, no loader) and runs a sandbox there; every copy finds its
//! parts by its own layout with no variable set; the release's jailed
//! workers load the components it ships (compiled for a portable CPU)
//! without compiling anything.
//!
//! The tarball is `$EPHEMERAL_DIST_TARBALL` (`./dev test` builds it
//! first), else `./dev dist` is run for it.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The tarball, unpacked once for this test binary.
fn release() -> &'static Path {
    static UNPACKED: OnceLock<(tempfile::TempDir, PathBuf)> = OnceLock::new();
    let (_, tree) = UNPACKED.get_or_init(|| {
        let tarball = tarball();
        let dir = tempfile::tempdir().unwrap();
        run_ok(
            Command::new("tar")
                .arg("-xzf")
                .arg(&tarball)
                .arg("-C")
                .arg(dir.path()),
        );
        let tree = std::fs::read_dir(dir.path())
            .unwrap()
            .flatten()
            .map(|e| e.path())
            .find(|p| p.join("bin/ephemeral").is_file())
            .expect("the tarball has one top folder with bin/ephemeral");
        (dir, tree)
    });
    tree
}

fn tarball() -> PathBuf {
    if let Some(path) = std::env::var_os("EPHEMERAL_DIST_TARBALL") {
        return path.into();
    }
    let repo = crate_dir().join("..");
    let out = run_ok(
        Command::new(repo.join("dev"))
            .arg("dist")
            .env_remove("CARGO_TARGET_DIR")
            .env_remove("CARGO_MAKEFLAGS")
            .env_remove("MAKEFLAGS"),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    PathBuf::from(
        stdout
            .lines()
            .last()
            .expect("./dev dist prints the tarball")
            .trim(),
    )
}

fn run_ok(command: &mut Command) -> Output {
    let out = command.output().expect("cannot run the command");
    assert!(
        out.status.success(),
        "{command:?}: {}\n{}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// `program ARGS` with no `EPHEMERAL_*` variable: what an installed
/// server sees.
fn bare(program: &Path) -> Command {
    let mut command = Command::new(program);
    for (var, _) in std::env::vars_os() {
        if var.to_string_lossy().starts_with("EPHEMERAL_") {
            command.env_remove(var);
        }
    }
    command
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// What `doctor` says of each part of a release whose library folder is
/// `lib`.
fn assert_doctor_finds_the_release(doctor: &str, lib: &Path) {
    let lib = lib.canonicalize().unwrap();
    assert!(
        doctor.contains(&format!("release: parts under {}", lib.display())),
        "{doctor}"
    );
    for (part, path) in [
        ("guest", "guest/vmlinux"),
        ("guest-init", "guest/ephemeral-worker"),
        ("programs", "programs"),
    ] {
        let line = doctor
            .lines()
            .find(|l| l.split_whitespace().nth(1) == Some(part))
            .unwrap_or_else(|| panic!("no {part} line in:\n{doctor}"));
        assert!(line.starts_with("ok "), "{line}");
        assert!(
            line.contains(&lib.join(path).display().to_string())
                && line.contains("from the release"),
            "{line}"
        );
    }
    let vmm = doctor.lines().find(|l| l.contains(" vmm ")).unwrap();
    assert!(
        vmm.starts_with("ok ") && vmm.contains("bin/ephemeral-vmm"),
        "{vmm}"
    );
    let programs = doctor.lines().find(|l| l.contains(" programs ")).unwrap();
    for name in ["python3", "node", "python3-sci"] {
        assert!(programs.contains(name), "{programs}");
    }
    // Each isolation, with a verdict; the tests run as root with cgroups.
    assert!(doctor.contains("yes  wasm"), "{doctor}");
    assert!(doctor.contains("yes  jail+wasm"), "{doctor}");
    assert!(
        doctor.contains("yes  kvm+wasm") || doctor.contains("no   kvm+wasm "),
        "{doctor}"
    );
    if ephemeral_vm::KvmKind::detect() == ephemeral_vm::KvmKind::Pvm {
        assert!(
            doctor.contains("no   kvm+wasm   /dev/kvm here is PVM"),
            "{doctor}"
        );
    }
}

#[test]
fn the_tarball_holds_every_part_of_a_release() {
    let tree = release();
    for part in [
        "bin/ephemeral",
        "bin/ephemeral-vmm",
        "lib/ephemeral/guest/vmlinux",
        "lib/ephemeral/guest/ephemeral-worker",
        "lib/ephemeral/guest/disk.img",
        "lib/ephemeral/guest/disk.img.list",
        "lib/ephemeral/programs/python3.wasm",
        "lib/ephemeral/programs/node.wasm",
        "lib/ephemeral/programs/python3-sci.wasm",
        "lib/ephemeral/components/programs.index",
        "etc/ephemeral/ephemeral.toml",
        "lib/systemd/system/ephemeral.service",
        "share/doc/ephemeral/THIRD-PARTY-LICENSES.md",
        "install.sh",
    ] {
        assert!(tree.join(part).is_file(), "{part} missing from the release");
    }
    let components: Vec<String> = std::fs::read_dir(tree.join("lib/ephemeral/components"))
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    for name in ["shell-", "python3-", "node-", "python3-sci-"] {
        assert!(
            components
                .iter()
                .any(|c| c.starts_with(name) && c.ends_with(".cwasm")),
            "no precompiled {name}* in {components:?}"
        );
    }
    let unit = std::fs::read_to_string(tree.join("lib/systemd/system/ephemeral.service")).unwrap();
    for line in [
        "Restart=on-failure",
        "StateDirectory=ephemeral",
        "CacheDirectory=ephemeral",
    ] {
        assert!(unit.contains(line), "{line} missing from the unit:\n{unit}");
    }
    assert!(unit.contains("/usr/local/bin/ephemeral serve"), "{unit}");
    // The shipped config is one the server takes.
    let data = tempfile::tempdir().unwrap();
    let out = bare(&tree.join("bin/ephemeral"))
        .args(["orgs", "set", "--org", "acme", "--balance-micros", "1000"])
        .arg("--config")
        .arg(tree.join("etc/ephemeral/ephemeral.toml"))
        .arg("--data")
        .arg(data.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}

#[test]
fn the_static_binary_runs_a_sandbox_in_a_root_with_no_libraries() {
    let tree = release();
    let exe = tree.join("bin/ephemeral");
    assert!(
        !elf_has_interpreter(&exe),
        "{} asks for a dynamic loader",
        exe.display()
    );
    // A root holding the release and nothing else: no /lib, no /usr, no
    // loader, no libc. Its own mount namespace gets /proc and /dev.
    let root = tempfile::tempdir().unwrap();
    let opt = root.path().join("opt");
    std::fs::create_dir_all(&opt).unwrap();
    // Hard links: the same files, no copy of the 1.5 GB.
    run_ok(Command::new("cp").arg("-al").arg(tree).arg(&opt));
    for dir in ["proc", "dev", "tmp"] {
        std::fs::create_dir_all(root.path().join(dir)).unwrap();
    }
    let name = tree.file_name().unwrap().to_string_lossy();
    let script = format!(
        "mount -t proc proc {root}/proc && mount -t devtmpfs dev {root}/dev && \
         exec chroot {root} /opt/{name}/bin/ephemeral exec --isolation wasm -- \
         'echo hi from a bare root' -- 'python3 -c \"print(6 * 7)\"' -- 'ls /usr/lib /lib 2>&1 | head -3'",
        root = root.path().display()
    );
    let out = bare(Path::new("unshare"))
        .args(["--mount", "--propagation", "private", "sh", "-c", &script])
        .env("HOME", "/tmp")
        .output()
        .unwrap();
    let stdout = text(&out.stdout);
    assert!(out.status.success(), "{stdout}\n{}", text(&out.stderr));
    assert!(stdout.contains("hi from a bare root"), "{stdout}");
    assert!(stdout.contains("42"), "{stdout}");
    // It found its components in the release and compiled nothing.
    let cache = root.path().join("var/cache/ephemeral/components-portable");
    assert!(
        cache.join("programs.index").is_file() || cache.is_dir(),
        "{}",
        cache.display()
    );
}

/// Whether `path` is an ELF executable with a `PT_INTERP` header (a
/// dynamic loader to run it).
fn elf_has_interpreter(path: &Path) -> bool {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF", "{} is not ELF", path.display());
    let u16_at = |o: usize| u16::from_le_bytes([bytes[o], bytes[o + 1]]) as usize;
    let u64_at = |o: usize| u64::from_le_bytes(bytes[o..o + 8].try_into().unwrap()) as usize;
    let (phoff, phentsize, phnum) = (u64_at(0x20), u16_at(0x36), u16_at(0x38));
    (0..phnum).any(|i| {
        let header = phoff + i * phentsize;
        u32::from_le_bytes(bytes[header..header + 4].try_into().unwrap()) == 3
    })
}

#[test]
fn doctor_finds_the_unpacked_release_by_its_layout() {
    let tree = release();
    let out = run_ok(bare(&tree.join("bin/ephemeral")).arg("doctor"));
    assert_doctor_finds_the_release(&text(&out.stdout), &tree.join("lib/ephemeral"));
}

#[test]
fn install_sh_puts_the_release_under_its_prefix_and_doctor_finds_it_there() {
    let tree = release();
    let dest = tempfile::tempdir().unwrap();
    let out = run_ok(
        bare(&tree.join("install.sh"))
            .args(["--prefix", "/usr/local"])
            .env("DESTDIR", dest.path()),
    );
    let installed = dest.path().join("usr/local");
    assert!(
        installed.join("bin/ephemeral").is_file(),
        "{}",
        text(&out.stderr)
    );
    assert!(dest.path().join("etc/ephemeral/ephemeral.toml").is_file());
    assert!(
        dest.path()
            .join("etc/systemd/system/ephemeral.service")
            .is_file()
    );
    let doctor = run_ok(bare(&installed.join("bin/ephemeral")).arg("doctor"));
    assert_doctor_finds_the_release(&text(&doctor.stdout), &installed.join("lib/ephemeral"));
}

#[test]
fn the_deb_installs_the_same_release_under_usr() {
    let tarball = tarball();
    let deb = std::fs::read_dir(tarball.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|e| e == "deb"))
        .expect("a .deb beside the tarball");
    let info = text(&run_ok(Command::new("dpkg-deb").arg("--info").arg(&deb)).stdout);
    assert!(info.contains("Package: ephemeral"), "{info}");
    let root = tempfile::tempdir().unwrap();
    run_ok(
        Command::new("dpkg-deb")
            .arg("-x")
            .arg(&deb)
            .arg(root.path()),
    );
    for part in [
        "usr/bin/ephemeral",
        "usr/bin/ephemeral-vmm",
        "usr/lib/ephemeral/guest/vmlinux",
        "etc/ephemeral/ephemeral.toml",
        "lib/systemd/system/ephemeral.service",
    ] {
        assert!(
            root.path().join(part).is_file(),
            "{part} missing from the .deb"
        );
    }
    let unit =
        std::fs::read_to_string(root.path().join("lib/systemd/system/ephemeral.service")).unwrap();
    assert!(unit.contains("/usr/bin/ephemeral serve"), "{unit}");
    let doctor = run_ok(bare(&root.path().join("usr/bin/ephemeral")).arg("doctor"));
    assert_doctor_finds_the_release(
        &text(&doctor.stdout),
        &root.path().join("usr/lib/ephemeral"),
    );
}

#[test]
fn the_releases_jailed_workers_load_its_precompiled_components() {
    let tree = release();
    let cache = tempfile::tempdir().unwrap();
    // Its own cache folder (the one documented override): seeded from the
    // release, so nothing is compiled.
    let out = run_ok(
        bare(&tree.join("bin/ephemeral"))
            .args(["exec", "--isolation", "jail", "--"])
            .arg("echo jailed; python3 -c 'import sys; print(sys.version_info[0])'")
            .env("EPHEMERAL_CACHE_DIR", cache.path()),
    );
    let stdout = text(&out.stdout);
    assert!(
        stdout.contains("jailed") && stdout.contains('3'),
        "{stdout}"
    );
    let entries: Vec<String> = std::fs::read_dir(cache.path())
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".cwasm"))
        .collect();
    for entry in &entries {
        assert!(
            tree.join("lib/ephemeral/components").join(entry).is_file(),
            "{entry} was compiled, not taken from the release"
        );
    }
    assert!(
        entries.iter().any(|e| e.starts_with("shell-")),
        "{entries:?}"
    );
}

/// This crate's folder: where `cargo test` says it is now, not where this
/// binary was built (a shared build cache serves clones at other paths).
fn crate_dir() -> std::path::PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_MANIFEST_DIR").into())
}
