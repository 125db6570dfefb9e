//! [`EarlyClient`]: the initiator's side of a protected session whose first bytes ride in
//! the handshake's first message (see "Early data" in the module docs), so that a session
//! that opens with a request and waits for the answer pays one round trip, not two.

use std::net::SocketAddr;
use std::time::Duration;

use super::{Credentials, Prepared, SecureChannel, MAX_EARLY_DATA};
use crate::{ByteCounts, Channel, Error, Result, SocketBuffers};

/// A [`SecureChannel`] client whose handshake has not run yet: bytes sent before the first
/// `flush`, `recv` or `close` (up to [`MAX_EARLY_DATA`]) are kept and sent as early data in
/// the handshake's first message; the handshake then runs at that first call. A send that
/// would go beyond [`MAX_EARLY_DATA`] runs the handshake first (with what was kept) and
/// goes into records. Made by [`SecureChannel::client_early`] (or
/// [`SecureChannel::client_early_bound`], whose handshake carries a binding).
pub struct EarlyClient<C: Channel> {
    state: State<C>,
}

enum State<C: Channel> {
    /// Before the handshake: the channel below, the handshake and the early data so far.
    Pending {
        inner: C,
        prepared: Box<Prepared>,
        early: Vec<u8>,
    },
    Ready(SecureChannel<C>),
    /// The handshake failed; every call fails.
    Failed,
}

impl<C: Channel> SecureChannel<C> {
    /// Starts the handshake as the connecting party (initiator) over `inner`, sending
    /// nothing yet: the bytes sent before the first `flush` or `recv` go as early data in
    /// the handshake's first message (see "Early data" in the module docs).
    pub fn client_early(inner: C, creds: &Credentials) -> Result<EarlyClient<C>> {
        Ok(EarlyClient::new(inner, creds.prepare(true, None)?))
    }

    /// As [`SecureChannel::client_early`], with `binding` (at most
    /// [`MAX_BINDING`](super::MAX_BINDING) bytes) mixed into the handshake, as
    /// [`SecureChannel::client_bound`] does: the early data are sent only to a responder
    /// given the same bytes (one that was not refuses message 1 and sends nothing).
    pub fn client_early_bound(
        inner: C,
        creds: &Credentials,
        binding: &[u8],
    ) -> Result<EarlyClient<C>> {
        Ok(EarlyClient::new(inner, creds.prepare(true, Some(binding))?))
    }
}

impl<C: Channel> EarlyClient<C> {
    fn new(inner: C, prepared: Prepared) -> Self {
        EarlyClient {
            state: State::Pending {
                inner,
                prepared: Box::new(prepared),
                early: Vec::new(),
            },
        }
    }

    /// Whether the handshake has run (and succeeded).
    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready(_))
    }

    /// How long the handshake took: from sending its first message (with the early data)
    /// until the peer's answer was read and checked, the one round trip it costs. `None`
    /// until it ran successfully. The session's first exchange rides on that round trip, so
    /// this time is part of the session's, not before it.
    pub fn handshake_time(&self) -> Option<Duration> {
        match &self.state {
            State::Ready(channel) => Some(channel.handshake_time()),
            State::Pending { .. } | State::Failed => None,
        }
    }

    /// The channel, running the handshake first if it has not run.
    fn ready(&mut self) -> Result<&mut SecureChannel<C>> {
        if matches!(self.state, State::Pending { .. }) {
            // Failed until the handshake succeeds: a failed one leaves nothing to retry.
            if let State::Pending {
                inner,
                prepared,
                early,
            } = std::mem::replace(&mut self.state, State::Failed)
            {
                self.state = State::Ready(SecureChannel::initiate(inner, *prepared, &early)?);
            }
        }
        match &mut self.state {
            State::Ready(channel) => Ok(channel),
            State::Pending { .. } | State::Failed => Err(Error::Poisoned),
        }
    }
}

impl<C: Channel> std::fmt::Debug for EarlyClient<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EarlyClient")
            .field("ready", &self.is_ready())
            .finish_non_exhaustive()
    }
}

impl<C: Channel> Channel for EarlyClient<C> {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        if let State::Pending { early, .. } = &mut self.state {
            if early.len() + bytes.len() <= MAX_EARLY_DATA {
                early.extend_from_slice(bytes);
                return Ok(());
            }
        }
        self.ready()?.send(bytes)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.ready()?.recv(buf)
    }

    fn flush(&mut self) -> Result<()> {
        self.ready()?.flush()
    }

    fn close(&mut self) -> Result<()> {
        self.ready()?.close()
    }

    fn stats(&self) -> ByteCounts {
        match &self.state {
            State::Ready(channel) => channel.stats(),
            State::Pending { .. } | State::Failed => ByteCounts::default(),
        }
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        match &self.state {
            State::Pending { inner, .. } => inner.socket_buffers(),
            State::Ready(channel) => channel.socket_buffers(),
            State::Failed => None,
        }
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        match &self.state {
            State::Pending { inner, .. } => inner.peer_addr(),
            State::Ready(channel) => channel.peer_addr(),
            State::Failed => None,
        }
    }

    fn max_lanes(&self) -> usize {
        match &self.state {
            State::Pending { inner, .. } => inner.max_lanes(),
            State::Ready(channel) => channel.max_lanes(),
            State::Failed => 0,
        }
    }

    /// Runs the handshake first if it has not run: a lane's keys come from it.
    fn open_lanes(&mut self, n: usize) -> Result<Vec<Box<dyn Channel>>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        self.ready()?.open_lanes(n)
    }
}
