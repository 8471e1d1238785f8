//! Prints what the VM self-test finds on this host:
//! `cargo run -p ephemeral-vm --example selftest`.

use std::time::Duration;

fn main() {
    match ephemeral_vm::Kvm::open() {
        Ok(kvm) => println!("{}: {:?}", kvm.kind(), kvm.capabilities()),
        Err(e) => println!("{e}"),
    }
    let report = ephemeral_vm::self_test(Duration::from_secs(2));
    println!("{report}");
    std::process::exit(if report.passed() { 0 } else { 1 });
}
