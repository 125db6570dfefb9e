//! A party's end of the session: typed [`Message`]s over a [`Channel`], framed, counted by
//! part.
//!
//! The frames are those of `transputation_transport::Framed` (an 8-byte big-endian length,
//! then the payload, with the same 64 MiB limit either way), written here rather than
//! through it so that a receiver checks each announced length against what the expected
//! message may have ([`Message::length`]) before it reads or allocates anything.

use transputation_transport::{ByteCounts, Channel, DEFAULT_MAX_MESSAGE};

use crate::error::Error;
use crate::header::{name_protection_mismatch, SessionHeader};
use crate::messages::{check_length, Message};
use crate::report::{ByteParts, Part};

/// A connected channel that sends and receives the session's messages and counts their
/// bytes.
pub(crate) struct Wire<C: Channel> {
    ch: C,
    /// Bytes sent so far, by part.
    pub(crate) sent: ByteParts,
    /// Bytes received so far, by part.
    pub(crate) received: ByteParts,
    /// The receive buffer of [`Wire::recv`].
    buf: Vec<u8>,
}

impl<C: Channel> Wire<C> {
    /// A wire over `ch` that receives into `buf` (a buffer made before the session, large
    /// enough for the messages that are not tables).
    pub(crate) fn new(ch: C, buf: Vec<u8>) -> Self {
        Wire {
            ch,
            sent: ByteParts::default(),
            received: ByteParts::default(),
            buf,
        }
    }

    /// Queues one message (see the transport's docs on flushing).
    pub(crate) fn send<'m, M: Message<'m>>(&mut self, msg: &M) -> Result<(), Error> {
        self.send_payload(M::PART, &msg.encode())
    }

    fn send_payload(&mut self, part: Part, payload: &[u8]) -> Result<(), Error> {
        let len = payload.len() as u64;
        if len > DEFAULT_MAX_MESSAGE {
            return Err(transputation_transport::Error::SendTooLarge {
                len,
                max: DEFAULT_MAX_MESSAGE,
            }
            .into());
        }
        self.ch.send(&len.to_be_bytes())?;
        self.ch.send(payload)?;
        self.sent.add(part, payload.len());
        Ok(())
    }

    /// Receives the next message, which must be an `M` (see [`Message::decode`]), into the
    /// wire's own buffer.
    pub(crate) fn recv<'w, M: Message<'w>>(&'w mut self, cx: M::Context) -> Result<M, Error> {
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
        let Wire {
            ch, received, buf, ..
        } = self;
        recv_payload::<SessionHeader, C>(ch, received, buf, ())
            .map_err(|e| name_protection_mismatch(e, ch.stats().received))?;
        SessionHeader::decode(buf)
    }

    /// Receives the next message, which must be an `M`, into `buf` (replacing its contents,
    /// reusing its allocation).
    pub(crate) fn recv_into<'b, M: Message<'b>>(
        &mut self,
        buf: &'b mut Vec<u8>,
        cx: M::Context,
    ) -> Result<M, Error> {
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
}

/// Reads one frame into `buf`: its length first, checked against the transport's limit and
/// then against what an `M` may have, then the payload.
fn recv_payload<'a, M: Message<'a>, C: Channel>(
    ch: &mut C,
    received: &mut ByteParts,
    buf: &mut Vec<u8>,
    cx: M::Context,
) -> Result<(), Error> {
    let mut prefix = [0u8; 8];
    ch.recv(&mut prefix)?;
    let len = u64::from_be_bytes(prefix);
    if len > DEFAULT_MAX_MESSAGE {
        return Err(transputation_transport::Error::MessageTooLarge {
            len,
            max: DEFAULT_MAX_MESSAGE,
        }
        .into());
    }
    let len = check_length::<M>(len, cx)?;
    // Only growth is zeroed: `recv` overwrites all `len` bytes or fails (and the session
    // then ends), so old contents never show.
    buf.resize(len, 0);
    ch.recv(buf)?;
    received.add(M::PART, len);
    Ok(())
}
