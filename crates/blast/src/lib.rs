//! `blast`: a reliable, ordered, checked byte stream over UDP, made for one long stream
//! whose size and path are known before it starts (the garbled tables) beside small
//! messages in both directions (the oblivious transfers, the output). This crate is the
//! protocol without I/O: [`Connection`] takes datagrams and the time as arguments and
//! gives datagrams and deadlines back, so that it is tested on a simulated path in
//! virtual time (`src/tests.rs`). The transport crate's `blast` module runs it over a
//! UDP socket, one thread per connection.
//!
//! # Why another transport
//!
//! TCP and QUIC find a path's rate by growing a window from a few packets, which on a
//! long fat path takes many round trips, and their loss-based controllers (cubic) take
//! random loss for congestion and collapse on a long lossy path. A garbled-circuit
//! sender knows how much it will send and can measure the path first (the probe of
//! `--transport auto`), so it can start at the path's rate. The design follows Reliable
//! Blast UDP (He, Leigh, Yu and DeFanti, IEEE Cluster 2002: send at a known rate, repair
//! with selective negative acknowledgements) with the pacing of modern rate-based
//! controllers.
//!
//! # The session
//!
//! 1. The client sends HELLO (its random session number, its largest datagram and
//!    receive window) every retry interval until WELCOME comes, for at most its connect
//!    budget. The server (a new socket per session, see the transport crate) answers
//!    WELCOME, again each retry interval until the client's first packet shows it
//!    arrived; a WELCOME carries the number of the HELLO it answers. Each side takes its
//!    first round trip from this exchange. A server that was not given a rate sends a
//!    TRAIN of [`Params::train`] packets right behind its first WELCOME; the client times
//!    their arrival (by the kernel's arrival stamps where the caller has them, else by
//!    reads that were prompt, see [`Connection::handle_datagram_timed`]) and reports the
//!    rate (RATE), which both
//!    sides start at (the path taken as the same both ways; slow start if it could not
//!    be timed). The train costs no round trip: in a 2PC session the garbler sends its
//!    tables after the handshake and the oblivious transfers. A client whose HELLO asks
//!    for no train gets none: it was given a rate, or the path is measured by other
//!    means while it connects (`--transport auto`'s probe, which a train would disturb),
//!    and each side is then told the rate to start at ([`Connection::start_at`]).
//! 2. Both send DATA (the stream) and FEEDBACK (what arrived; [`recv`] says when) in
//!    either direction; the formats are in [`wire`]. A sender paces its DATA at the
//!    rate of [`rate`] and sends again what FEEDBACK reports missing ([`send`]); with
//!    parity ([`fec`]) a group's one lost packet is rebuilt without waiting for that.
//! 3. A side that has written everything ends its stream (a FIN flag on the last DATA);
//!    the stream is done when the FEEDBACK says that every byte and the end arrived.
//!    A side that goes away sends a last FEEDBACK and then CLOSE (a few copies of each,
//!    unanswered: it is leaving). The CLOSE says done if it holds the peer's whole stream
//!    and end (the peer then knows its bytes arrived even if their last FEEDBACK never
//!    comes), else that it reads no more, and why (what it sent still arrives; the
//!    peer's further sending fails; a peer whose bytes the FEEDBACK acknowledged all
//!    has delivered what there was, its end aside).
//!
//! Every datagram carries the session number and a CRC-32; a datagram of another
//! session, or damaged, truncated or of an unknown kind, is dropped and counted
//! ([`Connection::dropped`]). A well-formed datagram that contradicts the protocol (bytes
//! past the stream's end, a FEEDBACK for bytes never sent) fails the connection with a
//! [`ProtocolError`]. Protected sessions run on top, as on every transport, so a forged
//! datagram can delay or end a session but never change what it computes.
//!
//! # Parameters
//!
//! [`Params`]: the datagram size, the receive window and send buffer, the rate to start at
//! (else the train's), the rate never to exceed, the idle timeout, the handshake's retry
//! interval, the train's length and the parity ([`Fec`]). The transport's options set the
//! datagram size (`mtu`), the rate (`rate`) and the parity (`fec`); the rest come from
//! its configuration (buffers, timeouts).
//!
//! # What it assumes of the path
//!
//! That its round trip is stable within a few milliseconds (a queue that builds is read
//! as a shared bottleneck, see [`rate`]), that it carries the datagram size given (no
//! fragmentation: the transport sets don't-fragment), and that random loss stays below
//! about 10 % (above that, FEEDBACK itself is lost often enough that repairs wait for the
//! probe timeout).

pub mod fec;
pub mod rate;
pub mod recv;
pub mod send;
mod stats;
mod train;
pub mod wire;

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use thiserror::Error;

use fec::Fec;
use rate::RateControl;
use recv::Receiver;
use send::{Outgoing, Sender};
pub use stats::Stats;
use train::{TrainMeter, TRAIN_WAIT};
use wire::{Body, Packet};

/// A well-formed datagram that the protocol does not allow.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("{0}")]
pub struct ProtocolError(pub String);

/// Why a connection failed.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum Error {
    /// The peer broke the protocol.
    #[error("the peer broke the blast protocol: {0}")]
    Protocol(#[from] ProtocolError),
    /// Nothing came from the peer while it owed an answer.
    #[error("no answer from the blast peer for {0:?}")]
    Silent(Duration),
}

/// What a connection is set up with.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Params {
    /// UDP payload bytes per datagram at most.
    pub max_datagram: usize,
    /// IP and UDP header bytes per datagram (28 over IPv4, 48 over IPv6), for the pace.
    pub ip_overhead: usize,
    /// Bytes this side buffers ahead of its reader.
    pub receive_window: u64,
    /// Bytes this side keeps unacknowledged at most.
    pub send_buffer: u64,
    /// The rate to start at, bytes per second (else slow start).
    pub rate: Option<f64>,
    /// The rate never to exceed, bytes per second.
    pub max_rate: f64,
    /// How long the peer may stay silent while it owes an answer.
    pub idle_timeout: Duration,
    /// How often HELLO and WELCOME are repeated while unanswered (at least 10 ms).
    pub retry: Duration,
    /// Packets in the train a server sends behind its WELCOME for the client to time
    /// the path's rate (0: none). A client with 0 asks the server for none.
    pub train: u16,
    /// Forward error correction of this side's DATA (see [`fec`]).
    pub fec: Fec,
}

impl Default for Params {
    fn default() -> Self {
        Params {
            max_datagram: 1472,
            ip_overhead: 28,
            receive_window: 64 << 20,
            send_buffer: 64 << 20,
            rate: None,
            max_rate: 1.25e9,
            idle_timeout: Duration::from_secs(30),
            retry: Duration::from_millis(100),
            train: 48,
            fec: Fec::Auto,
        }
    }
}

#[derive(Debug)]
enum State {
    /// The client, sending HELLO since `since`; the last at `last`.
    Hello {
        since: Instant,
        last: Option<Instant>,
        /// Each HELLO's number and send time (a WELCOME names the one it answers).
        sent: Vec<(u64, Instant)>,
    },
    /// The server, sending WELCOME since `first` until the client's first packet; the
    /// last at `last`.
    Welcome {
        first: Option<Instant>,
        last: Option<Instant>,
    },
    Open,
    Failed(Error),
}

/// One side of a `blast` session. Call order: feed every datagram from the peer to
/// [`handle_datagram`](Self::handle_datagram); then take datagrams from
/// [`poll_transmit`](Self::poll_transmit) until it gives none; sleep until
/// [`poll_timeout`](Self::poll_timeout) or the next datagram, calling
/// [`handle_timeout`](Self::handle_timeout) when that time comes. Reading and writing
/// ([`read`](Self::read), [`write`](Self::write)) may come at any point between.
#[derive(Debug)]
pub struct Connection {
    session: u64,
    params: Params,
    state: State,
    receiver: Receiver,
    /// Made once the first round trip is known.
    sender: Option<Sender>,
    /// Written before the sender was made.
    early: Vec<u8>,
    early_flush: bool,
    early_finish: bool,
    peer_window: u64,
    peer_datagram: usize,
    feedback_number: u64,
    control_number: u64,
    /// The server: the number of the HELLO it answers (its WELCOME carries it back).
    hello_number: u64,
    last_heard: Instant,
    /// The client: the server's train as it arrives, and when the WELCOME came.
    meter: Option<TrainMeter>,
    /// Whether the handshake's train is still to be timed: the client asked for one and
    /// has not reported it, the server sends one and has not heard its RATE.
    train_awaited: bool,
    /// A rate given before the sender was made while the train is awaited
    /// ([`Connection::start_at`]).
    hint: Option<f64>,
    opened_at: Option<Instant>,
    /// CLOSE to send, and whether it was.
    close: Option<(bool, String)>,
    closed_sent: bool,
    /// The peer left before this side's stream ended, and why.
    peer_stopped: Option<String>,
    dropped: u64,
    queued: VecDeque<Vec<u8>>,
}

impl Connection {
    /// The client of session `session`, starting at `now`.
    pub fn client(now: Instant, session: u64, params: Params) -> Self {
        Self::new(
            now,
            session,
            params,
            State::Hello {
                since: now,
                last: None,
                sent: Vec::new(),
            },
        )
    }

    /// The server of the session whose HELLO (`hello`, a datagram) arrived at `now`.
    /// Gives `None` if it is not a HELLO.
    pub fn server(now: Instant, hello: &[u8], params: Params) -> Option<Self> {
        let p = wire::decode(hello).ok()?;
        let Body::Hello {
            max_datagram,
            window,
            train,
        } = p.body
        else {
            return None;
        };
        // A client that asks for no train gets none, whatever this side's parameters.
        let params = Params {
            train: if train { params.train } else { 0 },
            ..params
        };
        let mut c = Self::new(
            now,
            p.session,
            params,
            State::Welcome {
                first: None,
                last: None,
            },
        );
        c.peer_window = window;
        c.peer_datagram = usize::from(max_datagram);
        c.hello_number = p.number;
        Some(c)
    }

    fn new(now: Instant, session: u64, params: Params, state: State) -> Self {
        // The client asks for a train with any; the server sends one of two or more (none
        // if its client asked for none).
        let train_awaited = if matches!(state, State::Hello { .. }) {
            params.train > 0
        } else {
            params.train >= 2
        };
        Connection {
            session,
            params,
            state,
            receiver: Receiver::new(params.receive_window),
            sender: None,
            early: Vec::new(),
            early_flush: false,
            early_finish: false,
            peer_window: 0,
            peer_datagram: params.max_datagram,
            feedback_number: 0,
            control_number: 0,
            hello_number: 0,
            last_heard: now,
            meter: None,
            train_awaited,
            hint: None,
            opened_at: None,
            close: None,
            closed_sent: false,
            peer_stopped: None,
            dropped: 0,
            queued: VecDeque::new(),
        }
    }

    /// The session number.
    pub fn session(&self) -> u64 {
        self.session
    }

    /// Datagrams dropped as damaged, foreign or out of place.
    pub fn dropped(&self) -> u64 {
        self.dropped
    }

    /// Whether the handshake is done on this side.
    pub fn is_open(&self) -> bool {
        matches!(self.state, State::Open)
    }

    /// The error the connection failed with, if it did.
    pub fn error(&self) -> Option<&Error> {
        match &self.state {
            State::Failed(e) => Some(e),
            _ => None,
        }
    }

    fn fail(&mut self, e: Error) -> Error {
        if !matches!(self.state, State::Failed(_)) {
            self.state = State::Failed(e.clone());
        }
        e
    }

    /// Starts the sender at `rate` bytes per second, a rate the path was measured at by
    /// other means (`--transport auto`'s probe). Where the handshake's train is still to be
    /// timed, the sender starts at the larger of the two once it is (`rate.rs`,
    /// `RateControl::hint`: each reads a fast path low, never high). Otherwise: before
    /// the handshake ends, as if [`Params::rate`] had been given; after it, if the sender
    /// is still in its first phase (it has neither timed a train nor left slow start), as
    /// a timed train's rate would. Later it changes nothing: the sender has measured the
    /// path itself.
    pub fn start_at(&mut self, rate: f64) {
        if !(rate.is_finite() && rate > 0.0) {
            return;
        }
        let rate = rate.min(self.params.max_rate);
        match self.sender.as_mut() {
            Some(s) if self.train_awaited => s.hint(rate),
            Some(s) => s.measured(rate),
            None if self.train_awaited => self.hint = Some(self.hint.map_or(rate, |h| h.max(rate))),
            None => self.params.rate = Some(rate),
        }
    }

    /// The pacing rate now, bytes per second (none before the first round trip).
    pub fn rate(&self) -> Option<f64> {
        self.sender.as_ref().map(Sender::rate)
    }

    fn open(&mut self, now: Instant, rtt: Duration) {
        // A PARITY packet carries a member's encoding whole, 13 bytes more than its DATA:
        // with parity, DATA leaves that room so that PARITY fits the datagram too.
        let parity_room = if self.params.fec == Fec::Off {
            0
        } else {
            fec::PARITY_EXTRA
        };
        let payload =
            self.params.max_datagram.min(self.peer_datagram) - wire::DATA_OVERHEAD - parity_room;
        let packet = payload + wire::DATA_OVERHEAD + self.params.ip_overhead;
        let control = RateControl::new(now, self.params.rate, self.params.max_rate, packet, rtt);
        let mut s = Sender::new(
            now,
            payload,
            packet,
            self.params.send_buffer,
            self.peer_window,
            rtt,
            control,
        )
        .with_fec(self.params.fec);
        if let Some(h) = self.hint.take() {
            s.hint(h);
        }
        let mut at = 0;
        while at < self.early.len() {
            at += s.write(&self.early[at..]);
        }
        self.early = Vec::new();
        if self.early_flush {
            s.flush();
        }
        if self.early_finish {
            s.finish();
        }
        self.sender = Some(s);
        self.state = State::Open;
    }

    /// Takes a datagram that arrived at `now`. Damaged, foreign and misplaced datagrams
    /// are dropped; one that breaks the protocol fails the connection.
    pub fn handle_datagram(&mut self, now: Instant, d: &[u8]) -> Result<(), Error> {
        self.handle_datagram_timed(now, d, true)
    }

    /// [`handle_datagram`](Self::handle_datagram) for a caller that knows whether `now`
    /// is the datagram's arrival to within the gap between packets: `prompt` if it is the
    /// kernel's arrival stamp, or if its reader was waiting for it and nothing else was
    /// waiting behind it (a read after a pause reads many datagrams at once, at the
    /// reader's pace, not the path's). Only prompt arrivals time the train.
    pub fn handle_datagram_timed(
        &mut self,
        now: Instant,
        d: &[u8],
        prompt: bool,
    ) -> Result<(), Error> {
        if let State::Failed(e) = &self.state {
            return Err(e.clone());
        }
        let Ok(p) = wire::decode(d) else {
            self.dropped += 1;
            return Ok(());
        };
        if p.session != self.session {
            self.dropped += 1;
            return Ok(());
        }
        self.last_heard = now;
        if let Body::Train { count, .. } = p.body {
            if self.is_open() && count > 1 {
                let size = d.len() + self.params.ip_overhead;
                let meter = self
                    .meter
                    .get_or_insert_with(|| TrainMeter::new(now, count));
                meter.arrived(now, p.number, size, prompt);
                if meter.complete() {
                    self.train_timed(now);
                }
            }
            return Ok(());
        }
        let r = self.take(now, p);
        r.map_err(|e| self.fail(e))
    }

    fn take(&mut self, now: Instant, p: Packet<'_>) -> Result<(), Error> {
        match (&self.state, p.body) {
            (
                State::Hello { sent, .. },
                Body::Welcome {
                    max_datagram,
                    window,
                },
            ) => {
                let Some(&(_, at)) = sent.iter().find(|(n, _)| *n == p.number) else {
                    self.dropped += 1; // it names no HELLO of ours
                    return Ok(());
                };
                let rtt = now - at;
                self.opened_at = Some(now);
                self.peer_window = window;
                self.peer_datagram = usize::from(max_datagram).max(wire::DATA_OVERHEAD + 1);
                self.open(now, rtt);
                // The first packet after WELCOME confirms it to the server.
                self.queue_feedback(now);
            }
            (State::Hello { .. }, _) | (_, Body::Hello { .. }) => self.dropped += 1,
            (State::Welcome { first, .. }, body) => {
                // From the first WELCOME: a later one may have crossed the answer.
                let rtt = first.map_or(Duration::from_millis(100), |t| now - t);
                self.open(now, rtt);
                return self.take(now, Packet { body, ..p });
            }
            // Taken in `handle_datagram_timed`.
            (_, Body::Train { .. }) => {}
            (_, Body::Rate(rate)) => {
                self.train_awaited = false;
                if let Some(s) = self.sender.as_mut() {
                    if rate > 0 {
                        s.measured(rate as f64);
                    } else {
                        s.untimed();
                    }
                }
            }
            (State::Open, Body::Welcome { .. }) => {
                // A repeated WELCOME: its FEEDBACK was lost.
                self.queue_feedback(now);
            }
            (
                State::Open,
                Body::Data {
                    offset,
                    fin,
                    ack_now,
                    member,
                    payload,
                },
            ) => {
                if member {
                    self.receiver
                        .handle_member(now, p.number, offset, payload, fin, ack_now)?;
                } else {
                    self.receiver
                        .handle_data(now, p.number, offset, payload, fin, ack_now)?;
                }
            }
            (
                State::Open,
                Body::Parity {
                    first,
                    count,
                    block,
                },
            ) => {
                self.receiver
                    .handle_parity(now, p.number, first, count, block)?;
            }
            (State::Open, Body::Feedback(f)) => {
                if let Some(s) = self.sender.as_mut() {
                    s.handle_feedback(now, p.number, &f)?;
                }
            }
            (_, Body::Close { done, reason }) => {
                if done {
                    // The peer holds this side's whole stream and its end.
                    if let Some(s) = self.sender.as_mut() {
                        s.all_arrived();
                    }
                } else {
                    // The peer reads no more: what it sent still arrives, but this
                    // side's bytes will not be read.
                    self.peer_stopped = Some(reason);
                }
            }
            (State::Failed(_), _) => {}
        }
        Ok(())
    }

    /// The server's train, queued behind its first WELCOME.
    fn queue_train(&mut self) {
        let count = self.params.train;
        if count < 2 {
            return;
        }
        let size = self.params.max_datagram.min(self.peer_datagram);
        let padding = size.saturating_sub(wire::HEADER + 2);
        for i in 0..count {
            let d = self.packet(u64::from(i), Body::Train { count, padding });
            self.queued.push_back(d);
        }
    }

    /// The client timed the train (or gave up waiting for the rest of it): the rate goes
    /// to the server, and to this side's own sender (the path taken as the same both ways).
    fn train_timed(&mut self, _now: Instant) {
        let Some(meter) = self.meter.as_mut().filter(|m| !m.reported) else {
            return;
        };
        meter.reported = true;
        self.train_awaited = false;
        let rate = meter.rate().filter(|r| *r <= self.params.max_rate);
        match (rate, self.sender.as_mut()) {
            (Some(r), Some(s)) => s.measured(r),
            (None, Some(s)) => s.untimed(),
            _ => {}
        }
        let d = self.packet(0, Body::Rate(rate.map_or(0, |r| r as u64)));
        self.queued.push_back(d);
    }

    fn queue_feedback(&mut self, now: Instant) {
        let d = self.feedback_packet(now);
        self.queued.push_back(d);
    }

    /// The receiver's FEEDBACK at `now`, under the next FEEDBACK number.
    fn feedback_packet(&mut self, now: Instant) -> Vec<u8> {
        let f = self.receiver.feedback(now);
        self.feedback_number += 1;
        self.packet(self.feedback_number - 1, Body::Feedback(f))
    }

    fn packet(&self, number: u64, body: Body<'_>) -> Vec<u8> {
        let mut out = Vec::new();
        wire::encode(
            &Packet {
                session: self.session,
                number,
                body,
            },
            &mut out,
        );
        out
    }

    /// The next datagram to send at `now` into `out` (cleared first); false if none now.
    pub fn poll_transmit(&mut self, now: Instant, out: &mut Vec<u8>) -> bool {
        out.clear();
        if let Some(d) = self.queued.pop_front() {
            *out = d;
            return true;
        }
        let hello = Body::Hello {
            max_datagram: u16::try_from(self.params.max_datagram).unwrap_or(u16::MAX),
            window: self.params.receive_window,
            train: self.params.train > 0,
        };
        let retry = self.params.retry.max(Duration::from_millis(10));
        match &mut self.state {
            State::Failed(_) => return false,
            State::Hello { last, .. } | State::Welcome { last, .. } => {
                if last.is_some_and(|t| now < t + retry) {
                    return false;
                }
                *last = Some(now);
                let number = match &mut self.state {
                    State::Welcome { first, .. } => {
                        if first.is_none() {
                            *first = Some(now);
                            self.queue_train();
                        }
                        self.hello_number
                    }
                    State::Hello { sent, .. } => {
                        self.control_number += 1;
                        sent.push((self.control_number, now));
                        self.control_number
                    }
                    _ => unreachable!("in the handshake"),
                };
                let body = match self.state {
                    State::Hello { .. } => hello,
                    _ => Body::Welcome {
                        max_datagram: u16::try_from(self.params.max_datagram).unwrap_or(u16::MAX),
                        window: self.params.receive_window,
                    },
                };
                *out = self.packet(number, body);
                return true;
            }
            State::Open => {}
        }
        if let Some((done, reason)) = self.close.clone().filter(|_| !self.closed_sent) {
            self.closed_sent = true;
            *out = self.packet(0, Body::Close { done, reason });
            return true;
        }
        if self.receiver.feedback_due(now) {
            *out = self.feedback_packet(now);
            return true;
        }
        let Some(s) = self.sender.as_mut() else {
            return false;
        };
        match s.poll_transmit(now) {
            None => false,
            Some(Outgoing::Data(t)) => {
                let mut payload = Vec::with_capacity(t.len);
                s.copy_payload(&t, &mut payload);
                *out = self.packet(
                    t.number,
                    Body::Data {
                        offset: t.offset,
                        fin: t.fin,
                        ack_now: t.ack_now,
                        member: t.member,
                        payload: &payload,
                    },
                );
                true
            }
            Some(Outgoing::Parity {
                number,
                first,
                count,
                block,
            }) => {
                *out = self.packet(
                    number,
                    Body::Parity {
                        first,
                        count,
                        block: &block,
                    },
                );
                true
            }
        }
    }

    /// When [`handle_timeout`](Self::handle_timeout) should next be called (a repeat of
    /// the handshake, a FEEDBACK's delay, the pace, the probe timeout, the peer's silence).
    pub fn poll_timeout(&self, now: Instant) -> Option<Instant> {
        let retry = self.params.retry.max(Duration::from_millis(10));
        let silence = self
            .owes_answer()
            .then(|| self.last_heard + self.params.idle_timeout);
        let own = match &self.state {
            State::Failed(_) => return None,
            State::Hello { last, .. } | State::Welcome { last, .. } => {
                Some(last.map_or(now, |t| t + retry))
            }
            State::Open
                if !self.queued.is_empty()
                    || self.receiver.feedback_due(now)
                    || self.close.is_some() && !self.closed_sent =>
            {
                Some(now)
            }
            State::Open => {
                let feedback = self.receiver.feedback_deadline();
                let send = self.sender.as_ref().and_then(|s| s.next_timeout(now));
                let train = self
                    .meter
                    .as_ref()
                    .filter(|m| !m.reported)
                    .map(TrainMeter::deadline);
                [feedback, send, train].into_iter().flatten().min()
            }
        };
        [own, silence].into_iter().flatten().min()
    }

    /// Whether the peer owes this side an answer (a handshake, or FEEDBACK for bytes).
    fn owes_answer(&self) -> bool {
        match &self.state {
            State::Hello { .. } | State::Welcome { .. } => true,
            State::Open => self.sender.as_ref().is_some_and(Sender::outstanding),
            State::Failed(_) => false,
        }
    }

    /// Handles what is due at `now`; fails if the peer has been silent too long.
    pub fn handle_timeout(&mut self, now: Instant) -> Result<(), Error> {
        if let State::Failed(e) = &self.state {
            return Err(e.clone());
        }
        if let State::Hello { since, .. } = self.state {
            if now.saturating_duration_since(since) >= self.params.idle_timeout {
                return Err(self.fail(Error::Silent(self.params.idle_timeout)));
            }
        }
        if self.owes_answer()
            && now.saturating_duration_since(self.last_heard) >= self.params.idle_timeout
        {
            return Err(self.fail(Error::Silent(self.params.idle_timeout)));
        }
        if self
            .meter
            .as_ref()
            .is_some_and(|m| !m.reported && now >= m.deadline())
        {
            self.train_timed(now);
        }
        if let Some(s) = self.sender.as_mut() {
            s.handle_timeout(now);
        }
        Ok(())
    }

    /// Queues bytes of the stream; how many it took (the send buffer may be full).
    pub fn write(&mut self, bytes: &[u8]) -> usize {
        match self.sender.as_mut() {
            Some(s) => s.write(bytes),
            None => {
                let room = (self.params.send_buffer as usize).saturating_sub(self.early.len());
                let n = room.min(bytes.len());
                self.early.extend_from_slice(&bytes[..n]);
                n
            }
        }
    }

    /// Sends what was written without waiting to fill a datagram.
    pub fn flush(&mut self) {
        match self.sender.as_mut() {
            Some(s) => s.flush(),
            None => self.early_flush = true,
        }
    }

    /// Ends this side's stream after what was written.
    pub fn finish(&mut self) {
        match self.sender.as_mut() {
            Some(s) => s.finish(),
            None => self.early_finish = true,
        }
    }

    /// Whether the peer has all of this side's stream and its end.
    pub fn sent_all(&self) -> bool {
        self.sender.as_ref().is_some_and(Sender::done)
    }

    /// Whether the peer has every byte of this side's stream (its end perhaps not yet
    /// acknowledged).
    pub fn bytes_delivered(&self) -> bool {
        self.sender.as_ref().is_some_and(|s| !s.bytes_outstanding())
    }

    /// Reads the peer's stream into `buf`; how many bytes (0: none yet, or its end: see
    /// [`read_all`](Self::read_all)).
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        self.receiver.read(buf)
    }

    /// Whether the peer's whole stream was read.
    pub fn read_all(&self) -> bool {
        self.receiver.finished()
    }

    /// DATA packets of the peer's rebuilt from parity instead of waiting for a repair.
    pub fn rebuilt(&self) -> u64 {
        self.receiver.rebuilt()
    }

    /// Whether the peer's whole stream arrived (read or not).
    pub fn peer_complete(&self) -> bool {
        self.receiver.complete()
    }

    /// What this side sent and how it paced, for diagnosis (the transport prints it when
    /// `TRANSPUTATION_BLAST_STATS` is set).
    pub fn stats(&self) -> Stats {
        let s = self.sender.as_ref();
        Stats {
            sent: s.map(Sender::counts).unwrap_or_default(),
            rebuilt: self.receiver.rebuilt(),
            dropped: self.dropped,
            srtt: s.map(Sender::srtt),
            cuts: s.map_or(0, |s| s.control().cuts()),
            epochs: s
                .map(|s| s.control().history().to_vec())
                .unwrap_or_default(),
        }
    }

    /// The smoothed round trip, once known.
    pub fn srtt(&self) -> Option<Duration> {
        self.sender.as_ref().map(Sender::srtt)
    }

    /// Room left in the send buffer, bytes.
    pub fn writable(&self) -> u64 {
        match &self.sender {
            Some(s) => s.writable(),
            None => self
                .params
                .send_buffer
                .saturating_sub(self.early.len() as u64),
        }
    }

    /// Tells the peer this side is done (`done`: its stream read to the end) or gives up
    /// (`reason`).
    pub fn close(&mut self, done: bool, reason: &str) {
        self.close = Some((done, reason.to_string()));
    }

    /// Whether the client is still timing the server's train at `now`: its reader should
    /// then stay awake between datagrams (a reader woken from sleep reads late).
    pub fn timing_train(&self, now: Instant) -> bool {
        self.params.train > 0
            && self.opened_at.is_some_and(|t| now < t + TRAIN_WAIT)
            && self.meter.as_ref().is_none_or(|m| !m.reported)
    }

    /// Whether arrival times matter now: the client before its WELCOME and while it times
    /// the server's train. Its reader should then give
    /// [`handle_datagram_timed`](Self::handle_datagram_timed) the kernel's arrival time
    /// where it has one.
    pub fn times_arrivals(&self, now: Instant) -> bool {
        matches!(self.state, State::Hello { .. }) || self.timing_train(now)
    }

    /// Why the peer stopped reading this side's stream (its CLOSE before its end), if it
    /// did: what this side still sends will not be read.
    pub fn peer_stopped(&self) -> Option<&str> {
        self.peer_stopped.as_deref()
    }

    /// A FEEDBACK to send as this side leaves, before its CLOSE (None if not open): a
    /// peer whose bytes all arrived, its end still on its way, has nothing left to deliver.
    pub fn leaving_feedback(&mut self, now: Instant) -> Option<Vec<u8>> {
        matches!(self.state, State::Open).then(|| self.feedback_packet(now))
    }

    /// A CLOSE to send as this side leaves: done if the peer's whole stream arrived, else
    /// why this side gave up. Sent by the caller outside the packet flow, in a few copies
    /// at once (the side is going away, and nothing answers a lost one).
    pub fn close_datagram(&self) -> Vec<u8> {
        let done = self.receiver.complete();
        let reason = if done {
            String::new()
        } else {
            "the channel was dropped before the stream's end arrived".into()
        };
        self.packet(0, Body::Close { done, reason })
    }
}

#[cfg(test)]
mod tests;
