//! The interface every transport implements.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

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
    /// Says that what this side sends from now on only ends the stream (a protected
    /// channel's close record, sent before it closes its inner channel): a channel whose
    /// sending could still move to another connection (`--transport auto`'s provisional
    /// session) stays where it is, so that the peer reads the end where it reads the rest.
    fn closing(&mut self) {}
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
    /// The round trip the kernel has measured on this channel's connection (kernel TCP's
    /// smoothed RTT; right after connecting, its handshake's), or `None` where the
    /// transport does not tell. Unlike a connect timed by the caller, it leaves out the
    /// time a busy process took to run.
    fn kernel_rtt(&self) -> Option<Duration> {
        None
    }
    /// A handle that retunes how this channel sends (its congestion controller, initial
    /// window, send buffer, the rate it starts at) after set-up, or `None` for a channel
    /// that cannot be retuned (`udt`, `udp`, and a `quic` client: only a `quic` listener
    /// gives each connection a controller it can replace). The options it takes are the family's
    /// [`crate::Family::sender_options`]. Take it before wrapping the channel (in
    /// [`crate::Framed`] or [`crate::SecureChannel`], which do not forward it); it stays
    /// usable while the channel lives.
    fn sender_tuning(&self) -> Option<Arc<dyn TuneSender>> {
        None
    }
    /// The most *lanes* this channel can open (see [`Channel::open_lanes`]); 0 for a
    /// transport without streams of its own (every one but `quic`) and for a wrapper that
    /// does not pass them on.
    fn max_lanes(&self) -> usize {
        0
    }
    /// Opens `n` (at most [`Channel::max_lanes`]) further channels to the same peer beside
    /// this one, its *lanes*: each a [`Channel`] of its own, under the same contract, over
    /// the same connection where the transport has streams (`quic`: a stream each), so that
    /// what one lane waits for (a lost packet, a slow reader) holds up no other. Both ends
    /// call it once with the same `n` (agreed beforehand over this channel); lane `i` of one
    /// end is lane `i` of the other. It flushes this channel first (the peer may wait for
    /// what is buffered before it reads a lane). The connecting end opens them and returns at once; the
    /// accepting end waits for each (at most the I/O timeout) and checks what opens it. A
    /// protected channel ([`crate::SecureChannel`]) protects each lane with keys of its own.
    /// Closing or dropping a lane leaves this channel and the other lanes open.
    fn open_lanes(&mut self, n: usize) -> Result<Vec<Box<dyn Channel>>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        Err(crate::Error::Mismatch {
            what: format!("{n} lanes asked of a channel that opens none"),
        })
    }
}

/// How the sending side of an accepted channel should behave from now on: as if it had
/// been set up with these options (for `quic`: as `quic:cc=CONGESTION,iw=INITIAL_WINDOW`;
/// for `tcp` and `mtcp`: as `tcp:cc=CONGESTION` with a send buffer of `send_buffer`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SenderHint {
    /// The congestion controller, by the name the transport's `cc` option gives it;
    /// `None`: the transport's default (kernel TCP: the socket keeps its own; `quic`:
    /// cubic, as `quic` alone).
    pub congestion: Option<String>,
    /// The initial congestion window in bytes; `None`: the controller's default.
    pub initial_window: Option<u64>,
    /// The socket send buffer in bytes (kernel sockets); `None`: leave it.
    pub send_buffer: Option<usize>,
    /// The path's bottleneck rate as measured (by `--transport auto`'s probe), bytes per
    /// second: a sender that starts at a rate rather than a window (`blast`, connected
    /// without timing the path itself) starts at it. Window-based senders ignore it.
    pub start_rate: Option<u64>,
}

/// Retunes the sending side of one channel; see [`Channel::sender_tuning`].
pub trait TuneSender: Send + Sync + fmt::Debug {
    /// Checks `hint` against what the transport can do (an unknown controller or a window
    /// out of range is an error that names it, and changes nothing), then asks the
    /// channel's sender to switch to it. When the switch takes effect, and when a hint comes
    /// too late to be taken, is the transport's to say (for `quic`, see its module docs).
    fn apply(&self, hint: &SenderHint) -> Result<()>;
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
            fn closing(&mut self) {
                (**self).closing()
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
            fn kernel_rtt(&self) -> Option<Duration> {
                (**self).kernel_rtt()
            }
            fn sender_tuning(&self) -> Option<Arc<dyn TuneSender>> {
                (**self).sender_tuning()
            }
            fn max_lanes(&self) -> usize {
                (**self).max_lanes()
            }
            fn open_lanes(&mut self, n: usize) -> Result<Vec<Box<dyn Channel>>> {
                (**self).open_lanes(n)
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
