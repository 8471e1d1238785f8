//! Dumps of bytes: `xxd` (vim's) and `hexdump`/`hd` (util-linux's), as
//! Debian 12 ships them. `od` is a coreutils program and lives there.

mod hexdump;
mod xxd;

use super::{Process, Table};

/// This family's programs, sorted by name.
pub(crate) const TABLE: Table = &[
    ("hd", hexdump::hd),
    ("hexdump", hexdump::hexdump),
    ("xxd", xxd::xxd),
];
