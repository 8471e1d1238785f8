//! Architecture-specific guest setup. Only x86-64 exists; the crate does not
//! build elsewhere on purpose (`lib.rs` refuses other targets).

pub mod x86_64;
