//! The scientific python in a microVM, end to end, under the lab's AMD SVM
//! (issue 14): python3-sci's component, its read-only files and its
//! compiled entry (over 500 MB) go on a read-only virtio disk instead of
//! the template's memory — made here on the host (the lab has no
//! e2fsprogs), handed to `ephemeral-vmm template --disk-image`, which links
//! the guest's `/programs` and `/cache` into it; a VM restored from the
//! template mounts the disk and maps the entry through the cache's index
//! without reading it whole. In that VM, a shell heredoc reads a CSV with
//! pandas, groups it, plots it with matplotlib (Agg) into `chart.png`: the
//! sums are right and the PNG is whole (its signature and size). The disk
//! cannot be written from the guest, and the VMM's run needs nothing but
//! the descriptors it opened before it ran.

mod support;

use ephemeral_vm::microvm::WorkerGuest;
use support::{build_musl, file, kernel, lab, scientific_guest_components, section, stripped};

/// The heredoc a data agent would write: CSV in, sums and a chart out.
const SCRIPT: &str = r#"cat > sales.csv <<'CSV'
region,units
north,3
south,5
north,4
east,1
south,2
CSV
python3 - <<'PY'
import pandas as pd
import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt
df = pd.read_csv("sales.csv")
sums = df.groupby("region")["units"].sum()
print("sums", {k: int(v) for k, v in sums.items()})
ax = sums.plot.bar()
ax.figure.set_size_inches(2, 1)
ax.figure.savefig("chart.png", dpi=50)
print("numpy", __import__("numpy").__version__, "pandas", pd.__version__)
PY"#;

/// Reads the PNG back: its signature and the size in its header.
const CHECK: &str = r#"python3 -c "import struct; d = open('chart.png', 'rb').read(); print('png', d[:8] == bytes([137, 80, 78, 71, 13, 10, 26, 10]), struct.unpack('>II', d[16:24]))""#;

#[test]
fn a_microvm_run_imports_pandas_and_saves_a_chart() {
    let kernel = kernel();
    let built = build_musl(&[
        "-p",
        "ephemeral-worker",
        "--bin",
        "ephemeral-worker",
        "-p",
        "ephemeral-vm",
        "--bin",
        "ephemeral-vmm",
        "--example",
        "microvm_run",
    ]);
    let mut files = vec![
        file(&kernel, "/vmlinux"),
        file(&stripped(&built.join("ephemeral-worker")), "/worker"),
        file(&stripped(&built.join("ephemeral-vmm")), "/ephemeral-vmm"),
        file(
            &stripped(&built.join("examples/microvm_run")),
            "/microvm_run",
        ),
    ];
    let components = scientific_guest_components();
    let disk = tempfile::tempdir().unwrap();
    let image = disk.path().join("disk.img");
    let made = WorkerGuest {
        kernel: kernel.clone(),
        worker: built.join("ephemeral-worker"),
        cache_dir: "/var/cache/ephemeral/guest-cache".into(),
        programs_dir: "/var/cache/ephemeral/guest-programs".into(),
        memory_mib: ephemeral_vm::microvm::DEFAULT_MEMORY_MIB,
    }
    .make_disk(&image)
    .expect("the disk of programs with files of their own");
    assert!(made, "python3-sci has files of its own: it needs the disk");
    let on_disk = std::fs::read_to_string(disk.path().join("disk.img.list")).unwrap();
    for (host, guest) in components {
        // Only what the initramfs takes: the rest is on the disk.
        let on_the_disk = on_disk.lines().any(|d| {
            let lab = d
                .replacen("programs/", "/gprog/", 1)
                .replacen("cache/", "/gcache/", 1);
            guest == lab || guest.starts_with(&format!("{lab}/"))
        });
        if !on_the_disk {
            files.push(file(&host, &guest));
        }
    }
    files.push(file(&image, "/disk.img"));
    files.push(file(&disk.path().join("disk.img.list"), "/disk.img.list"));
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let script = format!(
        "echo '==> template'\n\
         /ephemeral-vmm template --kernel /vmlinux --worker /worker --cache /gcache \
           --programs /gprog --disk-image /disk.img --out /snapshot 2>&1\n\
         echo \"<== template: exit $?\"\n\
         ls -l /snapshot\n\
         echo '==> chart'\n\
         EPHEMERAL_COMMAND_TIMEOUT_S=600 /microvm_run vmm /ephemeral-vmm /snapshot 1 1800 \
           -- {} -- {} -- {} -- {} 2>&1\n\
         echo \"<== chart: exit $?\"\n",
        quote(SCRIPT),
        quote(CHECK),
        quote(
            "ls -l /usr/local/lib/python315.zip; echo x > /usr/local/lib/python315.zip; echo status=$?"
        ),
        quote("python3 -c 'import os; print(os.listdir(\"/disk\"))'; echo status=$?"),
    );
    let out = lab(&files, &script);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let template = section(&stdout, "template").join("\n");
    assert!(template.contains("template ready"), "{template}");
    assert!(template.ends_with("<== template: exit 0"), "{template}");

    let chart = section(&stdout, "chart").join("\n");
    let run = section(&chart, "vmm 1");
    let has = |line: &str| run.iter().any(|l| l.contains(line));
    assert!(has("sums {'east': 1, 'north': 7, 'south': 7}"), "{run:#?}");
    assert!(has("numpy 2.5.2 pandas 3.0.6"), "{run:#?}");
    assert!(has("png True (100, 50)"), "{run:#?}");
    // The program's files are read-only, and the disk is not the sandbox's.
    assert!(has("Permission denied") || has("Read-only"), "{run:#?}");
    assert!(has("No such file or directory"), "{run:#?}");
    assert_eq!(run.last(), Some(&"<== vmm 1: exit 0"), "{run:#?}");
}
