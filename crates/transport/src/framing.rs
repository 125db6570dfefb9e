//! Messages over any [`Channel`]: N messages sent are N messages received, in order.
//!
//! Wire format of one message: its length as an 8-byte unsigned big-endian integer (network
//! byte order), then the bytes. A receiver checks the announced length against its maximum
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
        let max = self.max_message;
        self.guard(|c| {
            let mut header = [0u8; 8];
            c.recv(&mut header)?;
            let len = u64::from_be_bytes(header);
            let too_large = Error::MessageTooLarge { len, max };
            if len > max {
                return Err(too_large);
            }
            let len = usize::try_from(len).map_err(|_| too_large)?;
            // Only growth is zeroed: `recv` overwrites all `len` bytes or fails (and then
            // poisons this channel), so old contents never show.
            buf.resize(len, 0);
            c.recv(buf)
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
    pub fn into_inner(self) -> C {
        self.inner
    }

    fn guard<T>(&mut self, f: impl FnOnce(&mut C) -> Result<T>) -> Result<T> {
        if self.poisoned {
            return Err(Error::Poisoned);
        }
        let r = f(&mut self.inner);
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }
}
