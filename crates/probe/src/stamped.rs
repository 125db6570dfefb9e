//! Datagrams with the kernel's receive time (Linux's `SO_TIMESTAMPNS`): a receiver that
//! times a train of packets (the probe server, `blast`'s client timing the path's rate)
//! keeps each packet's arrival time however late its thread reads it, where timing by
//! reads gives the reader's pace whenever packets wait in the socket.

use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant, SystemTime};

/// Asks the kernel to stamp each datagram's arrival on `sock`; whether it took the option
/// (an old kernel or another system may not: then arrivals are timed by reads alone).
pub fn stamp_arrivals(sock: &UdpSocket) -> bool {
    use nix::sys::socket::{setsockopt, sockopt::ReceiveTimestampns};
    setsockopt(sock, ReceiveTimestampns, &true).is_ok()
}

/// Stops [`stamp_arrivals`] on `sock`.
pub fn stop_stamping(sock: &UdpSocket) {
    use nix::sys::socket::{setsockopt, sockopt::ReceiveTimestampns};
    let _ = setsockopt(sock, ReceiveTimestampns, &false);
}

/// Receives one datagram without blocking: its length, its sender and the kernel's time
/// of its arrival (by the real-time clock) if the socket stamps them.
pub fn recv_stamped(
    sock: &UdpSocket,
    buf: &mut [u8],
) -> io::Result<(usize, SocketAddr, Option<SystemTime>)> {
    use nix::sys::socket::{recvmsg, ControlMessageOwned, MsgFlags, SockaddrStorage};
    use std::os::fd::AsRawFd;
    let mut iov = [io::IoSliceMut::new(buf)];
    let mut space = nix::cmsg_space!(nix::sys::time::TimeSpec);
    let msg = recvmsg::<SockaddrStorage>(
        sock.as_raw_fd(),
        &mut iov,
        Some(&mut space),
        MsgFlags::MSG_DONTWAIT,
    )
    .map_err(io::Error::from)?;
    let from = msg.address.and_then(|a| {
        a.as_sockaddr_in()
            .map(|v4| SocketAddr::from(std::net::SocketAddrV4::from(*v4)))
            .or_else(|| {
                a.as_sockaddr_in6()
                    .map(|v6| SocketAddr::from(std::net::SocketAddrV6::from(*v6)))
            })
    });
    let stamp = msg.cmsgs().ok().and_then(|mut all| {
        all.find_map(|c| match c {
            ControlMessageOwned::ScmTimestampns(t) => Some(
                SystemTime::UNIX_EPOCH
                    + Duration::new(
                        u64::try_from(t.tv_sec()).ok()?,
                        u32::try_from(t.tv_nsec()).ok()?,
                    ),
            ),
            _ => None,
        })
    });
    let from = from.ok_or_else(|| io::Error::other("a datagram without a sender's address"))?;
    Ok((msg.bytes, from, stamp))
}

/// A kernel receive time as an [`Instant`]: `now` less how long ago it was by the
/// real-time clock, read at once. `None` for a time in the future or `trusted` or more
/// ago: a step of the real-time clock between the arrival and the read would show so.
pub fn arrival_instant(stamp: SystemTime, now: Instant, trusted: Duration) -> Option<Instant> {
    let ago = SystemTime::now().duration_since(stamp).ok()?;
    (ago < trusted).then(|| now.checked_sub(ago)).flatten()
}
