//! A party's end of the session: typed [`Message`]s over a [`Framed`] channel, counted by
//! part. A receiver checks each announced length against what the expected message may
//! have ([`Message::length`]) before it reads or allocates anything.

use transputation_transport::{ByteCounts, Channel, Framed};

use crate::error::Error;
use crate::header::{name_protection_mismatch, SessionHeader};
use crate::messages::{check_length, Message};
use crate::report::ByteParts;

/// A connected channel that sends and receives the session's messages and counts their
/// bytes.
pub(crate) struct Wire<C: Channel> {
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

    /// Closes the sending direction.
    pub(crate) fn close(&mut self) -> Result<(), transputation_transport::Error> {
        self.ch.close()
    }

    /// The channel's own counts.
    pub(crate) fn stats(&self) -> ByteCounts {
        self.ch.stats()
    }

    /// The channel underneath.
    pub(crate) fn channel(&self) -> &C {
        self.ch.get_ref()
    }
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
