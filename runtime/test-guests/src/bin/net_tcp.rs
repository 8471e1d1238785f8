//! Opens a TCP connection. In the sandbox this component must not even
//! instantiate: `wasi:sockets` is not linked.
fn main() {
    match std::net::TcpStream::connect("127.0.0.1:80") {
        Ok(_) => println!("connected"),
        Err(e) => println!("error: {e}"),
    }
}
