//! A session that starts at once over one connection and moves the garbler's sending to
//! another once the evaluator's probe has decided (a cold `--transport auto` session,
//! docs/protocol.md §6): [`Moving`] is the garbler's end, [`Following`] the evaluator's.
//! Both sit under the protected channel, so the session's bytes, whichever connection
//! carries them, are the one protected stream, and a connection that a stranger slipped
//! in could only break the session, never change what it computes.
//!
//! Wire format on the first connection. Garbler to evaluator: frames, each a length
//! (u32, big-endian, 1 to [`MAX_FRAME`]) and that many bytes of the stream; a length of 0
//! says that the garbler's sending has moved: nothing more of the garbler's comes on
//! this connection, and the stream goes on, unframed, on the connection the evaluator
//! offered ([`crate::wire::Move`]). Evaluator to garbler: the stream, unframed, on the
//! first connection for the whole session (the evaluator's sending is small: its OT
//! messages and the output). A marker of the move with no connection offered, or a length
//! out of range, is an error that says so.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Weak};
use std::time::Duration;

use transputation_transport::{ByteCounts, Channel, Error, Result, SocketBuffers, TuneSender};

/// The most stream bytes in one frame on the first connection.
pub const MAX_FRAME: usize = 1 << 20;

/// The length that marks the move.
const MOVED: [u8; 4] = [0; 4];

/// Sends `bytes` on `ch` in frames of the first connection's format (a race's start uses
/// it too: [`crate::racing`]).
pub(crate) fn send_framed(ch: &mut dyn Channel, bytes: &[u8]) -> Result<()> {
    for chunk in bytes.chunks(MAX_FRAME) {
        ch.send(&(chunk.len() as u32).to_be_bytes())?;
        ch.send(chunk)?;
    }
    Ok(())
}

/// A frame's length as `header` announces it, from `whose` side: at most [`MAX_FRAME`].
pub(crate) fn frame_length(header: [u8; 4], whose: &str) -> Result<usize> {
    let n = u32::from_be_bytes(header) as usize;
    if n > MAX_FRAME {
        return Err(Error::Malformed {
            what: format!("a frame of {n} bytes from the {whose} (at most {MAX_FRAME})"),
        });
    }
    Ok(n)
}

/// The garbler's end: sends framed on `first` until a connection is offered on `offered`,
/// then marks the move on `first` and sends on the offered one; receives on `first`.
pub struct Moving {
    first: Box<dyn Channel>,
    offered: Option<Receiver<Box<dyn Channel>>>,
    moved: Option<Box<dyn Channel>>,
    switched: Arc<AtomicBool>,
    alive: Arc<()>,
}

impl Moving {
    /// `first`, whose sending moves to the connection that arrives on `offered` (at the
    /// garbler's next send after it arrived).
    pub fn new(first: Box<dyn Channel>, offered: Receiver<Box<dyn Channel>>) -> Self {
        Moving {
            first,
            offered: Some(offered),
            moved: None,
            switched: Arc::default(),
            alive: Arc::new(()),
        }
    }

    /// Gone once this end is dropped (the service forgets a session waiting for a move
    /// that can no longer come).
    pub fn alive(&self) -> Weak<()> {
        Arc::downgrade(&self.alive)
    }

    /// Set once the sending has moved (for the reports: both parties tell what carried
    /// the tables).
    pub fn switched(&self) -> Arc<AtomicBool> {
        self.switched.clone()
    }

    /// Moves if a connection has been offered; a closed offer ends the chance.
    fn take_offer(&mut self) -> Result<()> {
        let Some(offered) = &self.offered else {
            return Ok(());
        };
        match offered.try_recv() {
            Ok(next) => {
                self.offered = None;
                self.first.send(&MOVED)?;
                self.first.flush()?;
                self.moved = Some(next);
                self.switched.store(true, Ordering::Release);
            }
            Err(TryRecvError::Disconnected) => self.offered = None,
            Err(TryRecvError::Empty) => {}
        }
        Ok(())
    }

    /// The connection the garbler sends on now.
    fn sending(&mut self) -> &mut dyn Channel {
        match &mut self.moved {
            Some(next) => &mut **next,
            None => &mut *self.first,
        }
    }
}

impl Channel for Moving {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.take_offer()?;
        if let Some(next) = &mut self.moved {
            return next.send(bytes);
        }
        send_framed(&mut *self.first, bytes)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        // What waits to be sent on the moved connection must leave before this waits for
        // an answer (`first.recv` flushes only `first`).
        if let Some(next) = &mut self.moved {
            next.flush()?;
        }
        self.first.recv(buf)
    }

    fn flush(&mut self) -> Result<()> {
        self.sending().flush()
    }

    fn close(&mut self) -> Result<()> {
        if let Some(next) = &mut self.moved {
            next.close()?;
        }
        self.first.close()
    }

    /// No move after this: the peer reads the end of the stream where it reads the rest
    /// (a protected close record sent on a connection taken only now would be on one the
    /// evaluator never reads, and the parties would tell different carriers).
    fn closing(&mut self) {
        self.offered = None;
    }

    fn stats(&self) -> ByteCounts {
        sum(&*self.first, self.moved.as_deref())
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        self.first.socket_buffers()
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        self.first.peer_addr()
    }

    fn sender_tuning(&self) -> Option<Arc<dyn TuneSender>> {
        None
    }
}

/// The evaluator's end: reads the garbler's frames on `first` until the move, then the
/// connection it offered (which arrives on `offered`, at most `wait` after the marker);
/// sends on `first`.
pub struct Following {
    first: Box<dyn Channel>,
    offered: Receiver<Box<dyn Channel>>,
    wait: Duration,
    moved: Option<Box<dyn Channel>>,
    switched: Arc<AtomicBool>,
    /// Bytes left of the frame being read.
    left: usize,
}

impl Following {
    /// `first`, whose peer may move its sending to the connection this side offers on
    /// `offered`.
    pub fn new(
        first: Box<dyn Channel>,
        offered: Receiver<Box<dyn Channel>>,
        wait: Duration,
    ) -> Self {
        Following {
            first,
            offered,
            wait,
            moved: None,
            switched: Arc::default(),
            left: 0,
        }
    }

    /// Set once the peer's sending has moved here.
    pub fn switched(&self) -> Arc<AtomicBool> {
        self.switched.clone()
    }

    /// The next frame's length from `first`, or the move.
    fn next_frame(&mut self) -> Result<()> {
        let mut header = [0u8; 4];
        self.first.recv(&mut header)?;
        let n = frame_length(header, "garbler")?;
        if n > 0 {
            self.left = n;
            return Ok(());
        }
        let wait = self.wait;
        let next = self
            .offered
            .recv_timeout(wait)
            .map_err(|e| Error::Malformed {
                what: match e {
                    RecvTimeoutError::Disconnected => {
                        "the garbler moved its sending, but this evaluator offered no connection"
                            .into()
                    }
                    RecvTimeoutError::Timeout => format!(
                        "the garbler moved its sending; no connection offered within {:.1} s",
                        wait.as_secs_f64()
                    ),
                },
            })?;
        self.moved = Some(next);
        self.switched.store(true, Ordering::Release);
        Ok(())
    }
}

impl Channel for Following {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.first.send(bytes)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        let mut filled = 0;
        while filled < buf.len() {
            if let Some(next) = &mut self.moved {
                // `next.recv` flushes only `next`: what this side sent waits on `first`.
                self.first.flush()?;
                return next.recv(&mut buf[filled..]);
            }
            if self.left == 0 {
                self.next_frame()?;
                continue;
            }
            let k = self.left.min(buf.len() - filled);
            self.first.recv(&mut buf[filled..filled + k])?;
            self.left -= k;
            filled += k;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.first.flush()
    }

    /// Ends this side's sending on the first connection, then on the moved one (which
    /// carried none of the session from this side, but whose close the garbler's own close
    /// of it waits for, as on a connection chosen at the start).
    fn close(&mut self) -> Result<()> {
        let first = self.first.close();
        match &mut self.moved {
            Some(next) => first.and(next.close()),
            None => first,
        }
    }

    fn stats(&self) -> ByteCounts {
        sum(&*self.first, self.moved.as_deref())
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        self.first.socket_buffers()
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        self.first.peer_addr()
    }
}

fn sum(first: &dyn Channel, next: Option<&dyn Channel>) -> ByteCounts {
    let a = first.stats();
    let b = next.map(Channel::stats).unwrap_or_default();
    ByteCounts {
        sent: a.sent + b.sent,
        received: a.received + b.received,
    }
}

#[cfg(test)]
mod tests;
