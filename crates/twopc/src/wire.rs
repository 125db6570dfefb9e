//! A party's end of the session: typed [`Message`]s over a [`Framed`] channel, counted by
//! part, and the session's lanes (channels beside it that coarse-grained frames travel on,
//! opened when first used). A receiver checks each announced length against what the
//! expected message may have ([`Message::length`]) before it reads or allocates anything.

use transputation_transport::{ByteCounts, Channel, Framed};

use crate::error::Error;
use crate::header::{name_protection_mismatch, SessionHeader};
use crate::messages::{check_length, Message};
use crate::report::ByteParts;

/// A connected channel that sends and receives the session's messages and counts their
/// bytes.
pub(crate) struct Wire<C: Channel> {
    /// The session's lanes, once opened (declared first: dropped before the channel, which
    /// may end the connection they run on).
    lanes: Vec<Lane>,
    /// Lanes the headers agreed on, not opened yet.
    lanes_due: usize,
    ch: Framed<C>,
    /// Bytes sent so far, by part.
    pub(crate) sent: ByteParts,
    /// Bytes received so far, by part.
    pub(crate) received: ByteParts,
    /// The receive buffer of [`Wire::recv`].
    buf: Vec<u8>,
    /// Times this party turned from sending (or from its start) to waiting for the peer:
    /// its round trips.
    pub(crate) round_trips: u32,
    /// Whether this party sent since it last received (true at the start, so that a party
    /// that begins by receiving counts that wait).
    sent_since_recv: bool,
}

impl<C: Channel> Wire<C> {
    /// A wire over `ch` that receives into `buf` (a buffer made before the session, large
    /// enough for the messages that are not tables).
    pub(crate) fn new(ch: C, buf: Vec<u8>) -> Self {
        Wire {
            lanes: Vec::new(),
            lanes_due: 0,
            ch: Framed::new(ch),
            sent: ByteParts::default(),
            received: ByteParts::default(),
            buf,
            round_trips: 0,
            sent_since_recv: true,
        }
    }

    /// Counts a round trip where a receive follows a send.
    fn turn_to_receive(&mut self) {
        if self.sent_since_recv {
            self.round_trips += 1;
            self.sent_since_recv = false;
        }
    }

    /// Queues one message (see the transport's docs on flushing).
    pub(crate) fn send<'m, M: Message<'m>>(&mut self, msg: &M) -> Result<(), Error> {
        let payload = msg.encode();
        self.sent_since_recv = true;
        self.ch.send_message(&payload)?;
        self.sent.add(M::PART, payload.len());
        Ok(())
    }

    /// Receives the next message, which must be an `M` (see [`Message::decode`]), into the
    /// wire's own buffer.
    pub(crate) fn recv<'w, M: Message<'w>>(&'w mut self, cx: M::Context) -> Result<M, Error> {
        self.turn_to_receive();
        let Wire {
            ch, received, buf, ..
        } = self;
        recv_payload::<M, C>(ch, received, buf, cx)?;
        let buf: &'w Vec<u8> = buf;
        M::decode(buf, cx)
    }

    /// Receives the peer's session header (message 1), naming a difference in protection
    /// where it shows (see [`name_protection_mismatch`]).
    pub(crate) fn recv_header(&mut self) -> Result<SessionHeader, Error> {
        let header = self.recv::<SessionHeader>(());
        header.map_err(|e| name_protection_mismatch(e, self.ch.stats().received))
    }

    /// Receives the next message, which must be an `M`, into `buf` (replacing its contents,
    /// reusing its allocation).
    pub(crate) fn recv_into<'b, M: Message<'b>>(
        &mut self,
        buf: &'b mut Vec<u8>,
        cx: M::Context,
    ) -> Result<M, Error> {
        self.turn_to_receive();
        recv_payload::<M, C>(&mut self.ch, &mut self.received, buf, cx)?;
        let buf: &'b Vec<u8> = buf;
        M::decode(buf, cx)
    }

    /// Sends what is queued.
    pub(crate) fn flush(&mut self) -> Result<(), Error> {
        Ok(self.ch.flush()?)
    }

    /// Closes the sending direction of the lanes, then of the channel.
    pub(crate) fn close(&mut self) -> Result<(), transputation_transport::Error> {
        let mut lanes = Ok(());
        for lane in &mut self.lanes {
            let closed = lane.close();
            lanes = lanes.and(closed);
        }
        let closed = self.ch.close();
        lanes.and(closed)
    }

    /// The channel's own counts, its lanes' included.
    pub(crate) fn stats(&self) -> ByteCounts {
        let mut counts = self.ch.stats();
        for lane in &self.lanes {
            let c = lane.stats();
            counts.sent += c.sent;
            counts.received += c.received;
        }
        counts
    }

    /// Sets the lanes the headers agreed on (0: none), to be opened when first used.
    pub(crate) fn agree_lanes(&mut self, n: usize) {
        if self.lanes.is_empty() {
            self.lanes_due = n;
        }
    }

    /// The number of lanes the session has or will open.
    pub(crate) fn lane_count(&self) -> usize {
        self.lanes.len().max(self.lanes_due)
    }

    /// The session's lanes, opened now if they are not yet (the connecting party's open
    /// at once, the accepting party's wait for them: see
    /// `transputation_transport::Channel::open_lanes`).
    pub(crate) fn lanes(&mut self) -> Result<&mut [Lane], Error> {
        if self.lanes_due > 0 {
            let n = std::mem::take(&mut self.lanes_due);
            self.lanes = self.ch.open_lanes(n)?;
        }
        Ok(&mut self.lanes)
    }

    /// The session's lanes taken out (opened now if they are not yet, as [`Wire::lanes`]),
    /// for readers on threads of their own; [`Wire::restore_lanes`] puts them back.
    pub(crate) fn take_lanes(&mut self) -> Result<Vec<Lane>, Error> {
        self.lanes()?;
        Ok(std::mem::take(&mut self.lanes))
    }

    /// Puts back the lanes [`Wire::take_lanes`] took.
    pub(crate) fn restore_lanes(&mut self, lanes: Vec<Lane>) {
        self.lanes = lanes;
    }

    /// Sends one message on lane `lane` (see [`Wire::lanes`]), counted as the session's.
    pub(crate) fn send_on_lane<'m, M: Message<'m>>(
        &mut self,
        lane: usize,
        msg: &M,
    ) -> Result<(), Error> {
        let payload = msg.encode();
        self.sent_since_recv = true;
        self.lanes()?[lane].send_message(&payload)?;
        self.sent.add(M::PART, payload.len());
        Ok(())
    }

    /// Flushes every lane.
    pub(crate) fn flush_lanes(&mut self) -> Result<(), Error> {
        for lane in &mut self.lanes {
            lane.flush()?;
        }
        Ok(())
    }

    /// Counts `bytes` of `M`s received on the lanes (by threads that read them apart from
    /// the wire).
    pub(crate) fn count_received<'m, M: Message<'m>>(&mut self, bytes: usize) {
        self.turn_to_receive();
        self.received.add(M::PART, bytes);
    }

    /// The channel underneath.
    pub(crate) fn channel(&self) -> &C {
        self.ch.get_ref()
    }
}

/// A lane of the session: a channel beside its first, framed as it is.
pub(crate) type Lane = Framed<Box<dyn Channel>>;

/// Reads lane messages: one frame into `buf`, its announced length checked against what an
/// `M` may have before anything else is read; the message is then `M::decode(buf, cx)`.
pub(crate) fn recv_on_lane<'a, M: Message<'a>>(
    lane: &mut Lane,
    buf: &mut Vec<u8>,
    cx: M::Context,
) -> Result<(), Error> {
    lane.recv_message_into_checked(buf, |len| check_length::<M>(len, cx))
}

/// A wire's counts at one moment, from which a computation of an open session reports
/// what it alone sent, received and waited.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Snapshot {
    pub(crate) round_trips: u32,
    pub(crate) sent: ByteParts,
    pub(crate) received: ByteParts,
    pub(crate) channel: ByteCounts,
}

impl Snapshot {
    /// `wire`'s counts now.
    pub(crate) fn of<C: Channel>(wire: &Wire<C>) -> Self {
        Snapshot {
            round_trips: wire.round_trips,
            sent: wire.sent,
            received: wire.received,
            channel: wire.stats(),
        }
    }

    /// What `wire` counted since this snapshot.
    pub(crate) fn until_now<C: Channel>(&self, wire: &Wire<C>) -> Snapshot {
        let now = Snapshot::of(wire);
        Snapshot {
            round_trips: now.round_trips - self.round_trips,
            sent: now.sent.since(&self.sent),
            received: now.received.since(&self.received),
            channel: ByteCounts {
                sent: now.channel.sent - self.channel.sent,
                received: now.channel.received - self.channel.received,
            },
        }
    }
}

/// Reads one frame into `buf`, its announced length checked against what an `M` may have
/// before anything else is read.
fn recv_payload<'a, M: Message<'a>, C: Channel>(
    ch: &mut Framed<C>,
    received: &mut ByteParts,
    buf: &mut Vec<u8>,
    cx: M::Context,
) -> Result<(), Error> {
    ch.recv_message_into_checked(buf, |len| check_length::<M>(len, cx))?;
    received.add(M::PART, buf.len());
    Ok(())
}

/// After a session's last message: closes this side. The peer has what it needs and may
/// have closed its end, or the whole connection, already (a `udt` socket then refuses
/// further bytes, a QUIC connection reports it closed): a peer that is gone can no longer
/// be told that our stream ends, and it needs nothing more from us. Used by the garbler
/// once the output arrived, and by the evaluator once its output or message 11's end went
/// out in full (flushed).
pub(crate) fn close_after_the_last_message<C: Channel>(wire: &mut Wire<C>) -> Result<(), Error> {
    match wire.close() {
        Ok(()) | Err(transputation_transport::Error::Closed { .. }) => Ok(()),
        Err(e) => Err(e.into()),
    }
}
