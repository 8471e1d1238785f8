//! The text processors agents lean on: `grep`, `sed`, `awk`, `jq`.

use super::Table;

/// This family's utilities, sorted by name.
pub(crate) const TABLE: Table = &[];
