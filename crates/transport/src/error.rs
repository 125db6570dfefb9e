//! The one error type of the transport layer.

use std::io;
use std::net::SocketAddr;
use std::time::Duration;

/// What went wrong in a transport, and on whose side.
///
/// After any error other than the [`Error::UnknownTransport`], [`Error::UnknownOption`] and
/// [`Error::BadOption`] parse errors, the channel is in an unknown state (a frame may be half
/// read or half written): the only safe step is to drop it.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The transport name is not one this build knows.
    #[error("unknown transport '{name}' (valid: {valid})")]
    UnknownTransport {
        /// The name as given.
        name: String,
        /// The valid names, comma-separated.
        valid: String,
    },
    /// A transport this build was compiled without.
    #[error(
        "transport '{name}' is not in this build (built without the Cargo feature \
         '{feature}'; valid: {valid})"
    )]
    NotBuilt {
        /// The name as given.
        name: String,
        /// The feature that adds it.
        feature: &'static str,
        /// The valid names, comma-separated.
        valid: String,
    },
    /// An option that the named transport does not take.
    #[error("transport '{transport}' has no option '{option}' (valid: {valid})")]
    UnknownOption {
        /// The transport's name.
        transport: &'static str,
        /// The option as given.
        option: String,
        /// The valid options, comma-separated.
        valid: String,
    },
    /// A known option with a value it cannot take.
    #[error("transport '{transport}': bad value '{value}' for option '{option}': {reason}")]
    BadOption {
        /// The transport's name.
        transport: &'static str,
        /// The option's name.
        option: String,
        /// The value as given.
        value: String,
        /// What a valid value looks like.
        reason: String,
    },
    /// The kernel refused the requested TCP congestion control algorithm.
    #[error(
        "TCP congestion control '{algorithm}' is not available in this kernel \
         (available: {available})"
    )]
    CongestionControl {
        /// The algorithm asked for.
        algorithm: String,
        /// The kernel's list, from /proc/sys/net/ipv4/tcp_available_congestion_control.
        available: String,
        /// The error of setsockopt(TCP_CONGESTION).
        #[source]
        source: io::Error,
    },
    /// Connecting to the server failed on every attempt.
    #[error(
        "could not connect to {addr} after {attempts} attempt{}",
        if *attempts == 1 { "" } else { "s" }
    )]
    Connect {
        /// The server's address.
        addr: SocketAddr,
        /// How many times we tried.
        attempts: u32,
        /// The error of the last attempt.
        #[source]
        source: io::Error,
    },
    /// The peer sent or accepted nothing for the configured timeout.
    #[error("the peer was silent for {after:?} while {during}")]
    Timeout {
        /// What we were doing.
        during: &'static str,
        /// The configured timeout.
        after: Duration,
    },
    /// The peer closed the connection (or reset it) before we were done.
    #[error("the peer closed the connection while {during}")]
    Closed {
        /// What we were doing.
        during: &'static str,
    },
    /// The peer announced a message longer than our configured maximum; nothing was allocated.
    #[error("the peer announced a message of {len} bytes, more than the maximum of {max} bytes")]
    MessageTooLarge {
        /// The announced length.
        len: u64,
        /// The configured maximum.
        max: u64,
    },
    /// We were asked to send a message longer than the configured maximum; nothing was sent.
    #[error("refusing to send a message of {len} bytes, more than the maximum of {max} bytes")]
    SendTooLarge {
        /// The message's length.
        len: u64,
        /// The configured maximum.
        max: u64,
    },
    /// The peer broke this transport's own wire protocol (a bad handshake or chunk header).
    #[error("malformed data from the peer: {what}")]
    Malformed {
        /// What was wrong.
        what: String,
    },
    /// A datagram transport (`udp`) saw loss, duplication or reordering, which it does not
    /// repair; nothing after the gap was delivered.
    #[error("the network lost or reordered data, which this transport does not repair: {what}")]
    Unreliable {
        /// What was missing or out of order.
        what: String,
    },
    /// Both ends were configured differently (for example mtcp stream counts).
    #[error("the two ends disagree: {what}")]
    Mismatch {
        /// What differs.
        what: String,
    },
    /// The authenticated key exchange of a protected session failed: the peer could not
    /// prove the expected key, or does not protect its session, or broke the handshake.
    #[error("protected session refused: {what}")]
    Handshake {
        /// What went wrong.
        what: String,
    },
    /// A protected record failed its check (altered, replayed, reordered, dropped or cut
    /// short): the session is aborted.
    #[error("protected session aborted: {what}")]
    Integrity {
        /// What went wrong.
        what: String,
    },
    /// A channel used after an earlier error.
    #[error("the channel failed earlier and cannot be used again")]
    Poisoned,
    /// Any other I/O error from the operating system.
    #[error("I/O error while {during}")]
    Io {
        /// What we were doing.
        during: &'static str,
        /// The operating system's error.
        #[source]
        source: io::Error,
    },
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Classifies an I/O error of a read or write on a connected socket.
    pub(crate) fn from_io(e: io::Error, during: &'static str, timeout: Duration) -> Error {
        use io::ErrorKind::*;
        match e.kind() {
            WouldBlock | TimedOut => Error::Timeout {
                during,
                after: timeout,
            },
            UnexpectedEof | ConnectionReset | ConnectionAborted | BrokenPipe | WriteZero => {
                Error::Closed { during }
            }
            _ => Error::Io { during, source: e },
        }
    }
}
