//! An in-process channel pair: a test double for 2PC code that needs no sockets.

use std::collections::VecDeque;
use std::io;
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use crate::{ByteCounts, Channel, Error, Result};

/// One end of a pair made by [`memory_pair`].
///
/// Sending never blocks (memory is unbounded: this is for tests); receiving waits at most
/// the timeout given to [`memory_pair`]. Flush, close and errors follow the crate contract:
/// bytes cross on flush (or on the next receive), and after `close` (or a drop) the peer
/// receives what was flushed, then [`Error::Closed`].
#[derive(Debug)]
pub struct MemoryChannel {
    tx: Option<Sender<Vec<u8>>>,
    rx: Receiver<Vec<u8>>,
    pending: Vec<u8>,
    incoming: VecDeque<u8>,
    timeout: Duration,
    counts: ByteCounts,
}

/// Two connected in-process channels; a receive waits at most `timeout`.
pub fn memory_pair(timeout: Duration) -> (MemoryChannel, MemoryChannel) {
    let (atx, brx) = channel();
    let (btx, arx) = channel();
    let end = |tx, rx| MemoryChannel {
        tx: Some(tx),
        rx,
        pending: Vec::new(),
        incoming: VecDeque::new(),
        timeout,
        counts: ByteCounts::default(),
    };
    (end(atx, arx), end(btx, brx))
}

impl Channel for MemoryChannel {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        if self.tx.is_none() {
            return Err(Error::Io {
                during: "sending",
                source: io::Error::new(io::ErrorKind::BrokenPipe, "this end was closed"),
            });
        }
        self.pending.extend_from_slice(bytes);
        self.counts.sent += bytes.len() as u64;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.flush()?;
        while self.incoming.len() < buf.len() {
            match self.rx.recv_timeout(self.timeout) {
                Ok(chunk) => self.incoming.extend(chunk),
                Err(RecvTimeoutError::Timeout) => {
                    return Err(Error::Timeout {
                        during: "receiving",
                        after: self.timeout,
                    })
                }
                Err(RecvTimeoutError::Disconnected) => {
                    return Err(Error::Closed {
                        during: "receiving",
                    })
                }
            }
        }
        let n = buf.len();
        for (b, x) in buf.iter_mut().zip(self.incoming.drain(..n)) {
            *b = x;
        }
        self.counts.received += buf.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let chunk = std::mem::take(&mut self.pending);
        match &self.tx {
            Some(tx) => tx
                .send(chunk)
                .map_err(|_| Error::Closed { during: "sending" }),
            None => Ok(()),
        }
    }

    fn close(&mut self) -> Result<()> {
        self.flush()?;
        self.tx = None;
        Ok(())
    }

    fn stats(&self) -> ByteCounts {
        self.counts
    }
}

impl Drop for MemoryChannel {
    fn drop(&mut self) {
        // Best effort, as the crate docs say.
        let _ = self.flush();
    }
}
