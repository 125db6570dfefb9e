//! Pluggable, measured transports for garbled-circuit 2PC.
//!
//! 2PC code talks to a [`Channel`] (send raw bytes, receive raw bytes, flush, close, count
//! bytes) or, on top of any channel, to [`Framed`] messages, and never learns which transport
//! carries them. The transport is picked at run time by a string parsed into a
//! [`TransportSpec`]: `NAME` or `NAME:key=value,...`, for example `tcp`, `tcp-bbr`,
//! `tcp:cc=bbr`, `mtcp:streams=4`, `udp:rate=500mbit`, `udt:mss=9000` or `quic:cc=bbr`.
//! Adding a transport touches no 2PC code. The names: `tcp` and `tcp-bbr` (kernel TCP),
//! `mtcp` (N TCP connections, one stream), `udp` (paced datagrams, no retransmission),
//! `udt` (the reference UDT4 library, libudt, which the build links: install the Debian
//! package libudt-dev), `quic` (quinn; encrypted with TLS 1.3, the server not authenticated
//! by QUIC); [`transports`] lists them with their options. This is the wrapper of the
//! Transputation paper (§3): set up a server
//! ([`TransportSpec::listen`], [`Listener::accept`]), set up a client
//! ([`TransportSpec::connect`], with a timeout and retries), send raw bytes, receive raw
//! bytes; and message framing so that N messages sent are N messages received, in order,
//! any size, the length in network byte order.
//!
//! ```
//! use transputation_transport::{Config, Framed, TransportSpec};
//!
//! let spec: TransportSpec = "mtcp:streams=3".parse()?;
//! let cfg = Config::default();
//! let listener = spec.listen("127.0.0.1:0".parse().unwrap(), &cfg)?;
//! let addr = listener.local_addr();
//! let server = std::thread::spawn(move || -> transputation_transport::Result<Vec<u8>> {
//!     let mut ch = Framed::new(listener.accept()?);
//!     ch.recv_message()
//! });
//! let mut ch = Framed::new(spec.connect(addr, &cfg)?);
//! ch.send_message(b"garbled tables")?;
//! ch.close()?;
//! assert_eq!(server.join().unwrap()?, b"garbled tables");
//! # Ok::<(), transputation_transport::Error>(())
//! ```
//!
//! For tests of 2PC code, [`memory_pair`] gives two connected in-process channels under the
//! same contract, without sockets.
//!
//! # Protected sessions
//!
//! [`SecureChannel`] wraps any channel (of any transport) after it is connected: a Noise
//! handshake authenticates the peer by a pre-shared key or a pinned static key, then every
//! byte travels in AES-GCM records, and replayed, reordered, altered or truncated data is
//! an error ([`Error::Integrity`]). See the [`secure`] module.
//!
//! # Flushing
//!
//! [`Channel::send`] may keep bytes in a user-space buffer. They are guaranteed to be on
//! their way to the peer only after [`Channel::flush`] (or [`Channel::close`]) returns.
//! To rule out the deadlock in which both parties wait for bytes the other still buffers
//! (emp-tool's documented one), every receive flushes this side's pending output first:
//! a party that sends a request and then waits for the answer needs no explicit flush.
//! A party that sends and then does something other than receive on the same channel
//! (computes, sleeps, waits on another channel) must flush.
//!
//! # Closing
//!
//! [`Channel::close`] flushes, then shuts down the sending direction: the peer reads what
//! was sent, then sees the end of the stream. Receiving is still possible after `close`.
//! Dropping a channel without `close` flushes on a best-effort basis and drops any error;
//! call `close` to learn whether the last bytes left. Neither waits for the peer to have
//! read them: for that, the protocol needs an acknowledgement (as `transport-bench` does).
//! One exception: `udt` sends from the library's threads inside this process, so dropping
//! a `udt` channel waits until the peer's library has acknowledged every byte (each wait
//! for progress bounded by [`Config::io_timeout`]); otherwise an exiting process would
//! lose the tail. `quic` too waits, at most the I/O timeout, until the peer's QUIC stack has
//! acknowledged them, because quinn discards unacknowledged data when a connection closes.
//!
//! # Errors and hostile peers
//!
//! Peer input is untrusted. A malformed or oversized frame, a connection closed or reset
//! early, or a peer silent for longer than [`Config::io_timeout`] gives an [`Error`] naming
//! what happened ([`Error::Malformed`], [`Error::MessageTooLarge`], [`Error::Closed`],
//! [`Error::Timeout`]), and for `udp` lost, duplicated or reordered datagrams
//! ([`Error::Unreliable`]) and damaged ones ([`Error::Malformed`]); no peer input makes this
//! crate panic or block forever, and an announced length is checked against the maximum before anything is allocated. The
//! timeout bounds each wait for progress, not a whole transfer: a peer that keeps
//! trickling bytes keeps the channel alive. After an error the channel is in an unknown
//! state (a frame may be half read or half written): the only safe step is to drop it;
//! [`Framed`] enforces this by answering [`Error::Poisoned`].
//!
//! # Buffers
//!
//! [`Config::buffer_bytes`] sets the buffering of one direction (kernel socket buffers for
//! `tcp`, `mtcp` and `udp`), normally chosen by [`sizing::size_buffers`] from the path's
//! round-trip time and bandwidth and the volume to send (paper §4.2);
//! [`Channel::socket_buffers`] reads back what the kernel granted.
//!
//! # Byte counters
//!
//! [`Channel::stats`] counts the bytes this channel handed to and took from its sockets
//! after connection set-up, per direction: payload plus framing headers plus the
//! transport's own per-chunk headers (`mtcp`, `udt`) or per-datagram headers (`udp`, which
//! counts data datagrams only), without TCP/IP or UDP/IP headers, UDT's packet headers,
//! handshakes or FINs (nor `udt`'s end-of-stream marker, its FIN). For `quic` they count
//! the stream's bytes only: QUIC packet and frame headers, encryption overhead,
//! acknowledgements and retransmissions are not counted.

pub mod auto;
mod channel;
mod config;
mod error;
pub mod family;
mod framing;
mod memory;
mod registry;
pub mod secure;
pub mod sizing;
mod tcp_socket;
mod transports;

pub use channel::{ByteCounts, Channel, SenderHint, SocketBuffers, TuneSender};
pub use config::Config;
pub use error::{Error, Result};
pub use family::{Delivery, Family};
pub use framing::{Framed, DEFAULT_MAX_MESSAGE};
pub use memory::{memory_pair, MemoryChannel};
pub use registry::{
    describe_options, families, family, not_built, transports, Listener, TransportInfo,
    TransportSpec,
};
pub use secure::early::EarlyClient;
pub use secure::{Credentials, SecureChannel};
pub use tcp_socket::{
    available_congestion_controls, check_congestion_control, default_congestion_control,
    settable_congestion_controls,
};

/// The transport a party runs when none is given: kernel TCP with the host's congestion
/// control (and what `--transport auto` leaves only for a clear gain).
pub const DEFAULT_TRANSPORT: &str = "tcp";
