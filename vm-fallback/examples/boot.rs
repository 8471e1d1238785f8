//! Boots a Linux kernel in a microVM and prints its console:
//! `cargo run -p ephemeral-vm --example boot -- VMLINUX [INIT|INITRAMFS.cpio] [TIMEOUT_S]`
//! (an ELF is packed as `/init` of a generated initramfs).

use std::time::Duration;

use std::sync::mpsc;
use std::time::Instant;

use ephemeral_vm::Kvm;
use ephemeral_vm::linux::{DEFAULT_CMDLINE, GuestEnd, LinuxGuest, LinuxVm, cmdline_with_channel};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(kernel) = args.first() else {
        eprintln!("usage: boot VMLINUX [INITRAMFS] [TIMEOUT_S]");
        std::process::exit(2);
    };
    let initramfs = args
        .get(1)
        .filter(|p| !p.is_empty())
        .map(|p| {
            let bytes = std::fs::read(p).expect("read the init or initramfs");
            if bytes.starts_with(b"\x7fELF") {
                ephemeral_vm::initramfs::build(&bytes, &[]).expect("initramfs")
            } else {
                bytes
            }
        })
        .unwrap_or_default();
    let timeout = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(20);
    // `EPHEMERAL_ECHO=N`: send N bytes over the virtio channel; the guest
    // init echoes them back, and they must come back intact.
    let echo: usize = std::env::var("EPHEMERAL_ECHO")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0);
    let mut cmdline =
        std::env::var("EPHEMERAL_GUEST_CMDLINE").unwrap_or_else(|_| DEFAULT_CMDLINE.into());
    if echo > 0 {
        cmdline = format!("{} ephemeral.echo={echo}", cmdline_with_channel(&cmdline));
    }
    // `EPHEMERAL_DISK=IMAGE`: a read-only disk the guest init reads back.
    let disk = std::env::var_os("EPHEMERAL_DISK").map(std::path::PathBuf::from);
    if disk.is_some() {
        cmdline.push_str(" ephemeral.disk=1");
    }
    let guest = LinuxGuest {
        kernel: kernel.into(),
        initramfs,
        cmdline,
        memory_mib: 256,
        disk,
    };
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    // The guest says "R" once its end is open; then the bytes go.
    let (ready_tx, ready_rx) = mpsc::channel::<()>();
    let sink = Sink {
        data: tx,
        ready: Some(ready_tx),
    };
    let kvm = Kvm::open().expect("/dev/kvm");
    let started = Instant::now();
    let mut vm = match LinuxVm::new(&kvm, &guest, Box::new(sink)) {
        Ok(vm) => vm,
        Err(e) => {
            eprintln!("boot: {e}");
            std::process::exit(1);
        }
    };
    let pattern: Vec<u8> = (0..echo).map(|i| (i * 7 + i / 251) as u8).collect();
    if echo > 0 {
        let channel = vm.channel();
        let data = pattern.clone();
        std::thread::spawn(move || {
            if ready_rx.recv().is_err() {
                return;
            }
            let mut sent = 0;
            while sent < data.len() {
                let n = channel.push(&data[sent..]);
                sent += n;
                if n == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        });
    }
    let end = vm.run_until(started + Duration::from_secs(timeout));
    print!("{}", vm.console());
    let end = match end {
        Ok(end) => end,
        Err(e) => {
            eprintln!("boot: {e}");
            std::process::exit(1);
        }
    };
    println!("\n--- {end:?} after {} ms", started.elapsed().as_millis());
    if end == GuestEnd::Deadline {
        println!("--- {}", vm.vcpu_report(Some(std::path::Path::new(kernel))));
    }
    let mut ok = end == GuestEnd::Reset;
    if echo > 0 {
        let back: Vec<u8> = rx.try_iter().flatten().collect();
        let (to, from, notifies) = vm.channel().counters();
        let same = back == pattern;
        println!(
            "--- channel: {to} bytes to the guest, {from} back, {notifies} queue notifications, echo {}",
            if same { "intact" } else { "CORRUPT" }
        );
        ok &= same;
    }
    std::process::exit(if ok { 0 } else { 1 });
}

struct Sink {
    data: mpsc::Sender<Vec<u8>>,
    ready: Option<mpsc::Sender<()>>,
}

impl std::io::Write for Sink {
    fn write(&mut self, data: &[u8]) -> std::io::Result<usize> {
        let mut bytes = data;
        if let Some(ready) = self.ready.take() {
            bytes = bytes.strip_prefix(b"R").unwrap_or(bytes);
            let _ = ready.send(());
        }
        let _ = self.data.send(bytes.to_vec());
        Ok(data.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
