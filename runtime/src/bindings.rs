//! Host bindings generated from `wit/`: the WASI filesystem that the
//! in-memory tree implements, and Ephemeral's own `fs-meta` and `session`.
//!
//! Everything else a component may import (cli, clocks, random, io) is
//! wasmtime-wasi's; the `with` map below makes our filesystem speak in
//! exactly its stream and clock types.

wasmtime::component::bindgen!({
    path: "wit",
    world: "ephemeral:sandbox/host",
    with: {
        "wasi:io": wasmtime_wasi::p2::bindings::sync::io,
        "wasi:clocks": wasmtime_wasi::p2::bindings::clocks,
        "wasi:filesystem/types.descriptor": crate::memfs::Descriptor,
        "wasi:filesystem/types.directory-entry-stream": crate::memfs::DirEntries,
    },
    require_store_data_send: true,
});

pub use self::ephemeral::sandbox::{fs_meta, process, session, types as sandbox_types};
pub use self::wasi::filesystem::{preopens, types as fs_types};
