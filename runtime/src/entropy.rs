//! Randomness for sandboxes, from the kernel on every request.
//!
//! Why not a generator in this process, seeded once: a worker restored
//! from a microVM snapshot shares its memory, every userspace generator's
//! state included, with every other worker restored from the same
//! snapshot. The guest kernel's pool is reseeded with fresh host entropy
//! before any run starts (the worker protocol's guest identity); asking
//! the kernel each time is what makes two restored copies differ.

use rand_wasi::Rng;
use rand_wasi::rand_core::UnwrapErr;
use rand_wasi::rngs::SysRng;

/// `getrandom(2)` for every request, as wasmtime-wasi's generator trait.
/// (`getrandom` does not fail on Linux once the pool is initialised,
/// which the kernel does before any user space runs here.)
pub(crate) fn kernel_random() -> UnwrapErr<SysRng> {
    UnwrapErr(SysRng)
}

/// A fresh `u128` from the kernel.
pub(crate) fn random_u128() -> u128 {
    let mut bytes = [0u8; 16];
    kernel_random().fill_bytes(&mut bytes);
    u128::from_le_bytes(bytes)
}

/// `n` fresh bytes from the kernel.
pub(crate) fn random_bytes<const N: usize>() -> [u8; N] {
    let mut bytes = [0u8; N];
    kernel_random().fill_bytes(&mut bytes);
    bytes
}

/// Fills `bytes` from the kernel (`/dev/urandom` in a sandbox).
pub(crate) fn fill(bytes: &mut [u8]) {
    kernel_random().fill_bytes(bytes);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_draws_differ() {
        assert_ne!(random_u128(), random_u128());
        assert_ne!(random_bytes::<16>(), random_bytes::<16>());
    }
}
