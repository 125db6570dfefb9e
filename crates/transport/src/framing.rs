//! Messages over any [`Channel`]: N messages sent are N messages received, in order.
//!
//! Wire format of one message: its length as an 8-byte unsigned big-endian integer (network
//! byte order), then the bytes. A receiver checks the announced length against its maximum,
//! and against what it expects next if it says so ([`Framed::recv_message_into_checked`]),
//! before allocating anything.

use crate::{ByteCounts, Channel, Error, Result};

/// The default largest message accepted or sent: 64 MiB.
pub const DEFAULT_MAX_MESSAGE: u64 = 64 << 20;

/// Length-prefixed messages on top of a [`Channel`].
#[derive(Debug)]
pub struct Framed<C> {
    inner: C,
    max_message: u64,
    poisoned: bool,
}

impl<C: Channel> Framed<C> {
    /// Frames `inner` with the [`DEFAULT_MAX_MESSAGE`] limit.
    pub fn new(inner: C) -> Self {
        Self::with_max_message(inner, DEFAULT_MAX_MESSAGE)
    }

    /// Frames `inner`, refusing messages longer than `max_message` bytes either way.
    pub fn with_max_message(inner: C, max_message: u64) -> Self {
        Framed {
            inner,
            max_message,
            poisoned: false,
        }
    }

    /// The largest message this end sends or accepts.
    pub fn max_message(&self) -> u64 {
        self.max_message
    }

    /// Queues one message (see the crate docs on flushing).
    pub fn send_message(&mut self, msg: &[u8]) -> Result<()> {
        let len = msg.len() as u64;
        if len > self.max_message {
            return Err(Error::SendTooLarge {
                len,
                max: self.max_message,
            });
        }
        self.guard(|c| {
            c.send(&len.to_be_bytes())?;
            c.send(msg)
        })
    }

    /// Receives the next message.
    pub fn recv_message(&mut self) -> Result<Vec<u8>> {
        let mut buf = Vec::new();
        self.recv_message_into(&mut buf)?;
        Ok(buf)
    }

    /// Receives the next message into `buf`, replacing its contents (reuses its allocation).
    pub fn recv_message_into(&mut self, buf: &mut Vec<u8>) -> Result<()> {
        self.recv_message_into_checked(buf, |_| Ok::<(), Error>(()))
    }

    /// Receives the next message into `buf` as [`Framed::recv_message_into`] does, once
    /// `accept` has taken the length its frame announces (within the maximum): a receiver
    /// that knows which message comes next refuses another length before it reads or
    /// allocates anything. An error of `accept` is returned as it is, and poisons the
    /// channel like any other.
    pub fn recv_message_into_checked<E: From<Error>>(
        &mut self,
        buf: &mut Vec<u8>,
        accept: impl FnOnce(u64) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        let max = self.max_message;
        self.guard(|c| {
            let mut header = [0u8; 8];
            c.recv(&mut header)?;
            let len = u64::from_be_bytes(header);
            let too_large = Error::MessageTooLarge { len, max };
            if len > max {
                return Err(too_large.into());
            }
            accept(len)?;
            let len = usize::try_from(len).map_err(|_| too_large)?;
            // Only growth is zeroed: `recv` overwrites all `len` bytes or fails (and then
            // poisons this channel), so old contents never show.
            buf.resize(len, 0);
            Ok(c.recv(buf)?)
        })
    }

    /// Flushes the channel.
    pub fn flush(&mut self) -> Result<()> {
        self.guard(|c| c.flush())
    }

    /// Closes the channel's sending direction (see the crate docs).
    pub fn close(&mut self) -> Result<()> {
        self.guard(|c| c.close())
    }

    /// Bytes moved so far, framing headers included.
    pub fn stats(&self) -> ByteCounts {
        self.inner.stats()
    }

    /// The channel underneath.
    pub fn get_ref(&self) -> &C {
        &self.inner
    }

    /// Opens `n` lanes of the channel underneath ([`Channel::open_lanes`]), each framed as
    /// this one is (the same largest message); a failure poisons this channel too.
    pub fn open_lanes(&mut self, n: usize) -> Result<Vec<Framed<Box<dyn Channel>>>> {
        let max = self.max_message;
        let lanes = self.guard(|c| c.open_lanes(n))?;
        Ok(lanes
            .into_iter()
            .map(|lane| Framed::with_max_message(lane, max))
            .collect())
    }

    /// The channel, given back.
    pub fn into_inner(self) -> C {
        self.inner
    }

    fn guard<T, E: From<Error>>(
        &mut self,
        f: impl FnOnce(&mut C) -> std::result::Result<T, E>,
    ) -> std::result::Result<T, E> {
        if self.poisoned {
            return Err(Error::Poisoned.into());
        }
        let r = f(&mut self.inner);
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, Instant};

    use super::*;
    use crate::memory_pair;

    const TIMEOUT: Duration = Duration::from_secs(5);

    /// A receiver's own error, as `accept` gives it.
    #[derive(Debug)]
    enum ReceiverError {
        Length(u64),
        Transport(Error),
    }

    impl From<Error> for ReceiverError {
        fn from(e: Error) -> Self {
            ReceiverError::Transport(e)
        }
    }

    fn exactly_four(len: u64) -> std::result::Result<(), ReceiverError> {
        match len {
            4 => Ok(()),
            n => Err(ReceiverError::Length(n)),
        }
    }

    #[test]
    fn a_length_the_receiver_refuses_is_refused_before_the_body_is_read() {
        let (a, mut raw) = memory_pair(TIMEOUT);
        let mut ch = Framed::new(a);
        // A frame of 5 bytes, announced but never sent: the refusal must not wait for them.
        raw.send(&5u64.to_be_bytes()).unwrap();
        raw.flush().unwrap();
        let mut buf = Vec::new();
        let start = Instant::now();
        let r = ch.recv_message_into_checked(&mut buf, exactly_four);
        assert!(start.elapsed() < TIMEOUT / 2);
        assert!(matches!(r, Err(ReceiverError::Length(5))), "{r:?}");
        assert!(buf.is_empty());
        let r = ch.recv_message_into_checked(&mut buf, exactly_four);
        assert!(
            matches!(r, Err(ReceiverError::Transport(Error::Poisoned))),
            "{r:?}"
        );
    }

    #[test]
    fn a_length_the_receiver_accepts_is_read() {
        let (a, b) = memory_pair(TIMEOUT);
        let (mut rx, mut tx) = (Framed::new(a), Framed::new(b));
        tx.send_message(b"four").unwrap();
        tx.send_message(&[0; 65]).unwrap();
        tx.flush().unwrap();
        let mut buf = Vec::new();
        rx.recv_message_into_checked(&mut buf, exactly_four)
            .unwrap();
        assert_eq!(buf, b"four");
        // Past the maximum: the transport's error, before `accept` is asked.
        let mut rx = Framed::with_max_message(rx.into_inner(), 64);
        let r =
            rx.recv_message_into_checked(&mut buf, |_| -> std::result::Result<(), ReceiverError> {
                panic!("asked about a length past the maximum")
            });
        assert!(
            matches!(
                r,
                Err(ReceiverError::Transport(Error::MessageTooLarge {
                    len: 65,
                    max: 64
                }))
            ),
            "{r:?}"
        );
    }
}
