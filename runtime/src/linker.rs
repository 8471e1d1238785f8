//! The capabilities a sandboxed component gets, as a linker: wasmtime-wasi's
//! cli, clocks, random and io, our in-memory filesystem, and Ephemeral's
//! own interfaces — nothing else, so a component that imports sockets or
//! HTTP fails to link. A [`Program`] is a component linked against it once,
//! ready to instantiate in any sandbox of the runtime.

use std::sync::Arc;

use wasmtime::Engine;
use wasmtime::component::{Component, HasSelf, Linker};
use wasmtime_wasi::cli::{WasiCli, WasiCliCtxView};
use wasmtime_wasi::clocks::{WasiClocks, WasiClocksCtxView};
use wasmtime_wasi::p2::bindings::sync::CommandPre;
use wasmtime_wasi::random::WasiRandom;

use crate::deadline_clock::{DeadlineClock, HasDeadlineClock};
use crate::launch::StoreState;
use crate::memfs;
use crate::program_root::Preopen;
use crate::{Error, bindings};

/// Every capability a sandboxed component may import, and nothing else:
/// wasmtime-wasi's cli, clocks, random and io, our in-memory filesystem,
/// and Ephemeral's `fs-meta` and `session`. `wasi:sockets` and `wasi:http`
/// are absent, so a component importing them fails to link.
pub(crate) fn sandbox_linker(engine: &Engine) -> wasmtime::Result<Linker<StoreState>> {
    use wasmtime_wasi::p2::bindings::{cli, clocks, random, sync::io};
    let mut l = Linker::<StoreState>::new(engine);
    io::error::add_to_linker::<_, HasTable>(&mut l, table)?;
    io::poll::add_to_linker::<_, HasTable>(&mut l, table)?;
    io::streams::add_to_linker::<_, HasTable>(&mut l, table)?;

    clocks::wall_clock::add_to_linker::<_, WasiClocks>(&mut l, clocks_view)?;
    clocks::monotonic_clock::add_to_linker::<_, HasDeadlineClock>(&mut l, deadline_clock)?;

    random::random::add_to_linker::<_, WasiRandom>(&mut l, random_view)?;
    random::insecure::add_to_linker::<_, WasiRandom>(&mut l, random_view)?;
    random::insecure_seed::add_to_linker::<_, WasiRandom>(&mut l, random_view)?;

    cli::exit::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::environment::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::stdin::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::stdout::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::stderr::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::terminal_input::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::terminal_output::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::terminal_stdin::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::terminal_stdout::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;
    cli::terminal_stderr::add_to_linker::<_, WasiCli>(&mut l, cli_view)?;

    memfs::add_to_linker(&mut l, |s| memfs::MemFsView {
        fs: &s.fs,
        preopens: &s.preopens,
        table: &mut s.table,
        umask: s.umask,
        stdio: &s.stdio,
    })?;
    bindings::fs_meta::add_to_linker::<_, HasSelf<StoreState>>(&mut l, |s| s)?;
    bindings::session::add_to_linker::<_, HasSelf<StoreState>>(&mut l, |s| s)?;
    bindings::process::add_to_linker::<_, HasSelf<StoreState>>(&mut l, |s| s)?;
    Ok(l)
}

fn table(s: &mut StoreState) -> &mut wasmtime::component::ResourceTable {
    &mut s.table
}

fn clocks_view(s: &mut StoreState) -> WasiClocksCtxView<'_> {
    WasiClocksCtxView {
        ctx: s.wasi.clocks(),
        table: &mut s.table,
    }
}

fn deadline_clock(s: &mut StoreState) -> DeadlineClock<'_> {
    DeadlineClock {
        clocks: WasiClocksCtxView {
            ctx: s.wasi.clocks(),
            table: &mut s.table,
        },
        stop: &s.stop,
    }
}

fn random_view(s: &mut StoreState) -> &mut wasmtime_wasi::random::WasiRandomCtx {
    s.wasi.random()
}

fn cli_view(s: &mut StoreState) -> WasiCliCtxView<'_> {
    WasiCliCtxView {
        ctx: s.wasi.cli(),
        table: &mut s.table,
    }
}

struct HasTable;

impl wasmtime::component::HasData for HasTable {
    type Data<'a> = &'a mut wasmtime::component::ResourceTable;
}

/// A command component compiled and linked against the sandbox's
/// capabilities, ready to instantiate in any sandbox of this runtime.
#[derive(Clone)]
pub struct Program {
    pub(crate) name: String,
    pub(crate) pre: CommandPre<StoreState>,
    /// The folders it is given before `/` (see `program_root`); empty for
    /// most programs, which see only `/`.
    pub(crate) preopens: Arc<[Preopen]>,
}

impl Program {
    /// The name it was loaded under (`shell`, `python3`, ...).
    pub fn name(&self) -> &str {
        &self.name
    }
}

pub(crate) fn prelink(
    linker: &Linker<StoreState>,
    name: &str,
    component: &Component,
) -> Result<Program, Error> {
    let pre = linker
        .instantiate_pre(component)
        .map_err(|e| Error::Capability(name.to_owned(), format!("{e:#}")))?;
    let pre =
        CommandPre::new(pre).map_err(|e| Error::Component(name.to_owned(), format!("{e:#}")))?;
    Ok(Program {
        name: name.to_owned(),
        pre,
        preopens: Arc::new([]),
    })
}
