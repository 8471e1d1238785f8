//! The microVM layer: a small VMM on KVM, the guest kernel and initramfs, the
//! guest agent, the host↔guest channel, snapshot and restore.
//!
//! Empty on purpose: the microVM issue fills it. Until then every sandbox
//! runs with isolation `wasm` (in-process) and says so.
