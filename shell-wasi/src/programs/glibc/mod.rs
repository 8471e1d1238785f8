//! Programs Debian ships with glibc (`libc-bin`): `getconf` and `iconv`,
//! following glibc 2.36's output and messages.

mod getconf;
mod iconv;
mod iconv_tables;

use super::{Process, Table};

/// This family's programs, sorted by name.
pub(crate) const TABLE: Table = &[("getconf", getconf::getconf), ("iconv", iconv::iconv)];
