//! `wasi:sockets` for a sandbox without a network: the one `network`
//! handle exists, but creating a socket fails with `access-denied` and
//! every name lookup fails, so C code sees EACCES / EAI_FAIL and Python
//! raises `PermissionError` / `socket.gaierror` instead of trapping.
//! No socket or lookup resource is ever created, so their methods are
//! unreachable.

wit_bindgen::generate!({
    path: "wit",
    world: "socket-stub",
    generate_all,
});

use exports::wasi::sockets::{
    instance_network, ip_name_lookup, network, tcp, tcp_create_socket, udp, udp_create_socket,
};
use network::{ErrorCode, IpAddress, IpAddressFamily, IpSocketAddress, NetworkBorrow};
use wasi::clocks::monotonic_clock::Duration;
use wasi::io::poll::Pollable;
use wasi::io::streams::{InputStream, OutputStream};

struct Stub;

/// The handle `instance-network` returns; it grants nothing.
struct NoNetwork;

/// Never constructed: every constructor below fails first.
enum Never {}

impl network::Guest for Stub {
    type Network = NoNetwork;
    fn network_error_code(_err: &wasi::io::error::Error) -> Option<ErrorCode> {
        None
    }
}
impl network::GuestNetwork for NoNetwork {}

impl instance_network::Guest for Stub {
    fn instance_network() -> network::Network {
        network::Network::new(NoNetwork)
    }
}

impl ip_name_lookup::Guest for Stub {
    type ResolveAddressStream = Never;
    fn resolve_addresses(
        _network: NetworkBorrow<'_>,
        _name: String,
    ) -> Result<ip_name_lookup::ResolveAddressStream, ErrorCode> {
        Err(ErrorCode::PermanentResolverFailure)
    }
}
impl ip_name_lookup::GuestResolveAddressStream for Never {
    fn resolve_next_address(&self) -> Result<Option<IpAddress>, ErrorCode> {
        match *self {}
    }
    fn subscribe(&self) -> Pollable {
        match *self {}
    }
}

impl tcp_create_socket::Guest for Stub {
    fn create_tcp_socket(_family: IpAddressFamily) -> Result<tcp::TcpSocket, ErrorCode> {
        Err(ErrorCode::AccessDenied)
    }
}
impl udp_create_socket::Guest for Stub {
    fn create_udp_socket(_family: IpAddressFamily) -> Result<udp::UdpSocket, ErrorCode> {
        Err(ErrorCode::AccessDenied)
    }
}

impl tcp::Guest for Stub {
    type TcpSocket = Never;
}
impl tcp::GuestTcpSocket for Never {
    fn start_bind(&self, _: NetworkBorrow<'_>, _: IpSocketAddress) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn finish_bind(&self) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn start_connect(&self, _: NetworkBorrow<'_>, _: IpSocketAddress) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn finish_connect(&self) -> Result<(InputStream, OutputStream), ErrorCode> {
        match *self {}
    }
    fn start_listen(&self) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn finish_listen(&self) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn accept(&self) -> Result<(tcp::TcpSocket, InputStream, OutputStream), ErrorCode> {
        match *self {}
    }
    fn local_address(&self) -> Result<IpSocketAddress, ErrorCode> {
        match *self {}
    }
    fn remote_address(&self) -> Result<IpSocketAddress, ErrorCode> {
        match *self {}
    }
    fn is_listening(&self) -> bool {
        match *self {}
    }
    fn address_family(&self) -> IpAddressFamily {
        match *self {}
    }
    fn set_listen_backlog_size(&self, _: u64) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn keep_alive_enabled(&self) -> Result<bool, ErrorCode> {
        match *self {}
    }
    fn set_keep_alive_enabled(&self, _: bool) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn keep_alive_idle_time(&self) -> Result<Duration, ErrorCode> {
        match *self {}
    }
    fn set_keep_alive_idle_time(&self, _: Duration) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn keep_alive_interval(&self) -> Result<Duration, ErrorCode> {
        match *self {}
    }
    fn set_keep_alive_interval(&self, _: Duration) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn keep_alive_count(&self) -> Result<u32, ErrorCode> {
        match *self {}
    }
    fn set_keep_alive_count(&self, _: u32) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn hop_limit(&self) -> Result<u8, ErrorCode> {
        match *self {}
    }
    fn set_hop_limit(&self, _: u8) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn receive_buffer_size(&self) -> Result<u64, ErrorCode> {
        match *self {}
    }
    fn set_receive_buffer_size(&self, _: u64) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn send_buffer_size(&self) -> Result<u64, ErrorCode> {
        match *self {}
    }
    fn set_send_buffer_size(&self, _: u64) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn subscribe(&self) -> Pollable {
        match *self {}
    }
    fn shutdown(&self, _: tcp::ShutdownType) -> Result<(), ErrorCode> {
        match *self {}
    }
}

impl udp::Guest for Stub {
    type UdpSocket = Never;
    type IncomingDatagramStream = Never;
    type OutgoingDatagramStream = Never;
}
impl udp::GuestUdpSocket for Never {
    fn start_bind(&self, _: NetworkBorrow<'_>, _: IpSocketAddress) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn finish_bind(&self) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn stream(
        &self,
        _: Option<IpSocketAddress>,
    ) -> Result<(udp::IncomingDatagramStream, udp::OutgoingDatagramStream), ErrorCode> {
        match *self {}
    }
    fn local_address(&self) -> Result<IpSocketAddress, ErrorCode> {
        match *self {}
    }
    fn remote_address(&self) -> Result<IpSocketAddress, ErrorCode> {
        match *self {}
    }
    fn address_family(&self) -> IpAddressFamily {
        match *self {}
    }
    fn unicast_hop_limit(&self) -> Result<u8, ErrorCode> {
        match *self {}
    }
    fn set_unicast_hop_limit(&self, _: u8) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn receive_buffer_size(&self) -> Result<u64, ErrorCode> {
        match *self {}
    }
    fn set_receive_buffer_size(&self, _: u64) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn send_buffer_size(&self) -> Result<u64, ErrorCode> {
        match *self {}
    }
    fn set_send_buffer_size(&self, _: u64) -> Result<(), ErrorCode> {
        match *self {}
    }
    fn subscribe(&self) -> Pollable {
        match *self {}
    }
}
impl udp::GuestIncomingDatagramStream for Never {
    fn receive(&self, _: u64) -> Result<Vec<udp::IncomingDatagram>, ErrorCode> {
        match *self {}
    }
    fn subscribe(&self) -> Pollable {
        match *self {}
    }
}
impl udp::GuestOutgoingDatagramStream for Never {
    fn check_send(&self) -> Result<u64, ErrorCode> {
        match *self {}
    }
    fn send(&self, _: Vec<udp::OutgoingDatagram>) -> Result<u64, ErrorCode> {
        match *self {}
    }
    fn subscribe(&self) -> Pollable {
        match *self {}
    }
}

export!(Stub);
