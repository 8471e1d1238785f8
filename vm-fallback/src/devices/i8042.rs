//! The i8042 keyboard controller, reduced to what a guest without ACPI
//! uses to reboot: a write of the pulse-reset command to its command port.
//! Reads say "no key, controller ready" so the kernel's probe moves on.

/// The controller's command/status port.
pub const RESET_PORT: u16 = 0x64;
/// The data port.
const DATA_PORT: u16 = 0x60;
/// Command "pulse output line 0": the CPU reset line (8042 datasheet).
const CMD_RESET: u8 = 0xFE;

pub(super) fn is_reset(port: u16, data: &[u8]) -> bool {
    port == RESET_PORT && data.first() == Some(&CMD_RESET)
}

/// Status and data reads: an idle controller with empty buffers.
pub(super) fn read(port: u16) -> Option<u8> {
    match port {
        RESET_PORT | DATA_PORT => Some(0),
        _ => None,
    }
}
