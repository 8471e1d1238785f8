//! GNU coreutils beyond the shell's first few: file, text and system
//! utilities, with GNU's flags, messages and exit codes.

use super::Table;

/// This family's utilities, sorted by name.
pub(crate) const TABLE: Table = &[];
