//! Resolves a name. In the sandbox this component must not instantiate:
//! `wasi:sockets/ip-name-lookup` is not linked.
use std::net::ToSocketAddrs;

fn main() {
    match "example.com:80".to_socket_addrs() {
        Ok(addrs) => println!("resolved {:?}", addrs.collect::<Vec<_>>()),
        Err(e) => println!("error: {e}"),
    }
}
