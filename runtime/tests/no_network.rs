//! A sandbox has no network at all: no socket, no name lookup, no HTTP.
//! Each test is a component that tries, and must fail.

mod common;

use common::{guest_wasm, runtime, sandbox, sh};
use ephemeral_runtime::Error;

fn refused(name: &str, wasm: &[u8]) -> String {
    match runtime().load_program(name, wasm) {
        Err(Error::Capability(_, why)) => why,
        Err(other) => panic!("{name}: wrong error: {other}"),
        Ok(_) => panic!("{name}: a component using the network was accepted"),
    }
}

#[test]
fn tcp_socket_component_cannot_even_link() {
    let why = refused("net_tcp", &guest_wasm("net_tcp"));
    assert!(why.contains("wasi:sockets"), "{why}");
}

#[test]
fn name_lookup_component_cannot_even_link() {
    let why = refused("net_dns", &guest_wasm("net_dns"));
    assert!(why.contains("wasi:sockets"), "{why}");
}

#[test]
fn http_component_cannot_even_link() {
    let wat = r#"(component
        (import "wasi:http/outgoing-handler@0.2.0" (instance
            (export "handle" (func (param "url" string) (result u32)))))
    )"#;
    let why = refused("http", wat.as_bytes());
    assert!(why.contains("wasi:http"), "{why}");
}

#[test]
fn every_socket_interface_is_absent() {
    for (iface, func) in [
        ("wasi:sockets/tcp-create-socket@0.2.0", "create-tcp-socket"),
        ("wasi:sockets/udp-create-socket@0.2.0", "create-udp-socket"),
        ("wasi:sockets/ip-name-lookup@0.2.0", "resolve-addresses"),
        ("wasi:sockets/instance-network@0.2.0", "instance-network"),
        ("wasi:http/outgoing-handler@0.2.0", "handle"),
    ] {
        let wat = format!(r#"(component (import "{iface}" (instance (export "{func}" (func)))))"#);
        let why = refused(iface, wat.as_bytes());
        assert!(
            why.contains(iface.split('@').next().unwrap()),
            "{iface}: {why}"
        );
    }
}

#[test]
fn curl_cannot_resolve_any_host() {
    let mut sb = sandbox();
    let (out, err, code) = sh(&mut sb, "curl -sS -m 8 https://example.com");
    assert_eq!(
        (out.as_str(), err.as_str(), code),
        ("", "curl: (6) Could not resolve host: example.com\n", 6)
    );
    let (_, err, code) = sh(
        &mut sb,
        "command -v curl && curl -sS -m 8 https://example.com",
    );
    assert_eq!(code, 6, "{err}");
}
