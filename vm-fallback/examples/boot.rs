//! Boots a Linux kernel in a microVM and prints its console:
//! `cargo run -p ephemeral-vm --example boot -- VMLINUX [INIT|INITRAMFS.cpio] [TIMEOUT_S]`
//! (an ELF is packed as `/init` of a generated initramfs).

use std::time::Duration;

use ephemeral_vm::linux::{DEFAULT_CMDLINE, LinuxGuest, boot_and_run};

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
    let guest = LinuxGuest {
        kernel: kernel.into(),
        initramfs,
        cmdline: std::env::var("EPHEMERAL_GUEST_CMDLINE")
            .unwrap_or_else(|_| DEFAULT_CMDLINE.into()),
        memory_mib: 256,
    };
    match boot_and_run(&guest, Duration::from_secs(timeout)) {
        Ok((end, console, took)) => {
            print!("{console}");
            println!("\n--- {end:?} after {} ms", took.as_millis());
            std::process::exit(if end == ephemeral_vm::linux::GuestEnd::Reset {
                0
            } else {
                1
            });
        }
        Err(e) => {
            eprintln!("boot: {e}");
            std::process::exit(1);
        }
    }
}
