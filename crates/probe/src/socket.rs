//! Socket set-up shared by the server and the prober: big buffers, and a prober's socket.

use std::net::{SocketAddr, UdpSocket};

/// Asks the kernel for 16 MiB socket buffers (forced where allowed): a train must not be
/// dropped by the receiving socket.
pub fn big_buffers(s: &UdpSocket) {
    use rustix::net::sockopt;
    if sockopt::set_socket_recv_buffer_size_force(s, 16 << 20).is_err() {
        let _ = sockopt::set_socket_recv_buffer_size(s, 16 << 20);
    }
    if sockopt::set_socket_send_buffer_size_force(s, 16 << 20).is_err() {
        let _ = sockopt::set_socket_send_buffer_size(s, 16 << 20);
    }
}

/// Bytes the IPv4 and UDP headers add to a datagram (20 + 8).
pub(crate) const IPV4_UDP_HEADERS: usize = 28;

/// Bytes the IP and UDP headers add to a datagram on `addr`'s family (IPv6: 40 + 8): what a
/// rate counted in IP bytes adds to the payload.
pub(crate) fn ip_udp_headers(addr: SocketAddr) -> usize {
    if addr.is_ipv6() {
        48
    } else {
        IPV4_UDP_HEADERS
    }
}

/// A socket for a prober on `server`'s address family (any local address and port).
pub fn prober_socket(server: SocketAddr) -> std::io::Result<UdpSocket> {
    let any: SocketAddr = if server.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    UdpSocket::bind(any)
}
