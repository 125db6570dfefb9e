//! The interface every transport implements.

use std::net::SocketAddr;

use crate::Result;

/// Bytes a channel moved, per direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteCounts {
    /// Bytes handed to the sockets.
    pub sent: u64,
    /// Bytes taken from the sockets.
    pub received: u64,
}

/// Kernel socket buffer sizes of a channel, as `getsockopt` reads them back.
///
/// Linux doubles the value a program sets (the other half is its bookkeeping) and, unless
/// the program may force it (CAP_NET_ADMIN), caps it at net.core.wmem_max / rmem_max
/// first: asking for `b` bytes reads back `2 × min(b, cap)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SocketBuffers {
    /// SO_SNDBUF, bytes.
    pub send: usize,
    /// SO_RCVBUF, bytes.
    pub recv: usize,
}

/// A reliable, ordered, bidirectional byte stream to one peer.
///
/// See the crate docs for the flush, close and error contracts. Implementations are
/// blocking; every wait is bounded by the configured I/O timeout.
pub trait Channel: Send {
    /// Queues `bytes` for the peer; they may stay buffered until [`Channel::flush`].
    fn send(&mut self, bytes: &[u8]) -> Result<()>;
    /// Fills `buf` completely with the next bytes from the peer, flushing pending output
    /// first. Errors with [`crate::Error::Closed`] if the stream ends before `buf` is full.
    fn recv(&mut self, buf: &mut [u8]) -> Result<()>;
    /// Pushes every queued byte to the operating system.
    fn flush(&mut self) -> Result<()>;
    /// Flushes, then ends the sending direction; the peer sees the end of the stream.
    fn close(&mut self) -> Result<()>;
    /// Bytes moved so far, per direction.
    fn stats(&self) -> ByteCounts;
    /// The kernel socket buffers of this channel (of its first connection, for `mtcp`),
    /// or `None` for a transport without kernel sockets or one that does not tell.
    fn socket_buffers(&self) -> Option<SocketBuffers> {
        None
    }
    /// The peer's address (of the first connection, for `mtcp`), or `None` where the
    /// transport does not tell; for logs, not for authentication.
    fn peer_addr(&self) -> Option<SocketAddr> {
        None
    }
}

/// `Channel` for a pointer to a channel, by forwarding every call.
macro_rules! forward_channel {
    ($($(#[$doc:meta])* $ptr:ty;)*) => {$(
        $(#[$doc])*
        impl<C: Channel + ?Sized> Channel for $ptr {
            fn send(&mut self, bytes: &[u8]) -> Result<()> {
                (**self).send(bytes)
            }
            fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
                (**self).recv(buf)
            }
            fn flush(&mut self) -> Result<()> {
                (**self).flush()
            }
            fn close(&mut self) -> Result<()> {
                (**self).close()
            }
            fn stats(&self) -> ByteCounts {
                (**self).stats()
            }
            fn socket_buffers(&self) -> Option<SocketBuffers> {
                (**self).socket_buffers()
            }
            fn peer_addr(&self) -> Option<SocketAddr> {
                (**self).peer_addr()
            }
        }
    )*};
}

forward_channel! {
    Box<C>;
    /// A channel lent out: a caller that needs the channel after a session (to read what
    /// it measured, such as [`crate::EarlyClient::handshake_time`]) passes `&mut` to it.
    &mut C;
}

/// Reads SO_SNDBUF and SO_RCVBUF of a socket.
pub(crate) fn read_socket_buffers(fd: impl std::os::fd::AsFd) -> Option<SocketBuffers> {
    use rustix::net::sockopt;
    Some(SocketBuffers {
        send: sockopt::socket_send_buffer_size(&fd).ok()?,
        recv: sockopt::socket_recv_buffer_size(&fd).ok()?,
    })
}

/// Asks for `bytes` of send and receive buffer on a socket: forced past the system's cap
/// where this process may (CAP_NET_ADMIN), else up to net.core.wmem_max / rmem_max. Setting
/// either also turns off the kernel's buffer auto-tuning for that socket.
pub(crate) fn set_socket_buffers(fd: impl std::os::fd::AsFd, bytes: usize) -> std::io::Result<()> {
    use rustix::net::sockopt;
    if sockopt::set_socket_recv_buffer_size_force(&fd, bytes).is_err() {
        sockopt::set_socket_recv_buffer_size(&fd, bytes)?;
    }
    if sockopt::set_socket_send_buffer_size_force(&fd, bytes).is_err() {
        sockopt::set_socket_send_buffer_size(&fd, bytes)?;
    }
    Ok(())
}
