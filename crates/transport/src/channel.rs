//! The interface every transport implements.

use crate::Result;

/// Bytes a channel moved, per direction.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ByteCounts {
    /// Bytes handed to the sockets.
    pub sent: u64,
    /// Bytes taken from the sockets.
    pub received: u64,
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
    /// Bytes moved so far, per direction.
    fn stats(&self) -> ByteCounts;
}

impl<C: Channel + ?Sized> Channel for Box<C> {
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
    fn stats(&self) -> ByteCounts {
        (**self).stats()
    }
}
