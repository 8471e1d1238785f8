//! `ephemeral-python-plug SOCKET PLUG OUT`: plugs the exports of the PLUG
//! component (the sockets stub) into the matching imports of the SOCKET
//! component (python3), writes the composition to OUT, and lists the
//! composition's imports on stdout, one a line.

use anyhow::{Context, Result, bail};
use wac_graph::types::Package;
use wac_graph::{CompositionGraph, EncodeOptions, plug};

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [socket, plug_path, out] = args.as_slice() else {
        bail!("usage: ephemeral-python-plug SOCKET.wasm PLUG.wasm OUT.wasm");
    };
    let mut graph = CompositionGraph::new();
    let pkg = Package::from_file("ephemeral:python", None, socket, graph.types_mut())
        .with_context(|| format!("reading {socket}"))?;
    let socket_id = graph.register_package(pkg)?;
    let pkg = Package::from_file("ephemeral:socket-stub", None, plug_path, graph.types_mut())
        .with_context(|| format!("reading {plug_path}"))?;
    let plug_id = graph.register_package(pkg)?;
    plug(&mut graph, vec![plug_id], socket_id)?;
    let bytes = graph.encode(EncodeOptions::default())?;
    std::fs::write(out, &bytes).with_context(|| format!("writing {out}"))?;

    let check = Package::from_bytes("out", None, bytes, graph.types_mut())?;
    for name in graph.types()[check.ty()].imports.keys() {
        println!("{name}");
    }
    Ok(())
}
