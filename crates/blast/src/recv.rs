//! The receiving half of a `blast` connection: puts the stream back in order, hands it to
//! the reader, and says what arrived and what did not (FEEDBACK).
//!
//! When a FEEDBACK goes: at once when a DATA asks for it (ACK_NOW: the end of what its
//! sender had, so a small message is acknowledged without a timer), when a hole opens
//! (a packet arrived beyond the highest byte so far: the sender learns of the loss in one
//! round trip), when the stream's end arrives, after every [`ACK_EVERY`] DATA packets, when
//! the reader has freed a quarter of the window, and otherwise [`MAX_ACK_DELAY`] after the
//! first DATA it has not reported.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use crate::fec::{decode_member, ParityCache};
use crate::wire::{Feedback, MAX_HOLES};
use crate::ProtocolError;

/// DATA packets between two FEEDBACKs at most.
pub const ACK_EVERY: u32 = 16;
/// How long a DATA waits at most before a FEEDBACK reports it.
pub const MAX_ACK_DELAY: Duration = Duration::from_millis(1);
/// Packet numbers below the highest one for which a duplicate is still told apart.
const SEEN_SPAN: u64 = 1 << 16;

/// The receiving half.
#[derive(Debug)]
pub struct Receiver {
    /// Bytes below this were handed to the reader.
    read: u64,
    /// Bytes below this have all arrived.
    contiguous: u64,
    /// Bytes that arrived and were not read, by offset; they do not overlap.
    chunks: BTreeMap<u64, Vec<u8>>,
    /// The end of the highest byte that arrived.
    highest: u64,
    /// The stream's length, once its end arrived.
    final_size: Option<u64>,
    /// Bytes buffered ahead of the reader at most.
    capacity: u64,
    /// The window last told to the sender.
    advertised: u64,
    seen: Seen,
    /// When the highest packet number arrived.
    largest_at: Option<Instant>,
    /// DATA packets that arrived and were not reported yet, and when the first of them did.
    unreported: u32,
    unreported_since: Option<Instant>,
    /// A FEEDBACK is due at once.
    urgent: bool,
    /// Where the next FEEDBACK's list of holes starts (see [`Receiver::holes`]).
    cursor: u64,
    /// Recent DATA packets that a parity packet covers.
    parity: ParityCache,
    /// Packets rebuilt from parity.
    rebuilt: u64,
}

impl Receiver {
    /// A receiver that buffers up to `capacity` bytes ahead of its reader.
    pub fn new(capacity: u64) -> Self {
        Receiver {
            read: 0,
            contiguous: 0,
            chunks: BTreeMap::new(),
            highest: 0,
            final_size: None,
            capacity,
            advertised: capacity,
            seen: Seen::default(),
            largest_at: None,
            unreported: 0,
            unreported_since: None,
            urgent: false,
            cursor: 0,
            parity: ParityCache::default(),
            rebuilt: 0,
        }
    }

    /// Takes a DATA packet that a parity packet will cover (see [`Receiver::handle_data`]),
    /// keeping its encoding to rebuild another member of its group.
    pub fn handle_member(
        &mut self,
        now: Instant,
        number: u64,
        offset: u64,
        payload: &[u8],
        fin: bool,
        ack_now: bool,
    ) -> Result<(), ProtocolError> {
        if !self.seen.has(number) {
            self.parity.keep(number, offset, fin, payload);
        }
        self.handle_data(now, number, offset, payload, fin, ack_now)
    }

    /// Takes a parity packet (numbered `number`) of the group `first .. first + count`:
    /// the one member of the group that did not arrive, if only one did not, is rebuilt
    /// and taken as if it had arrived.
    pub fn handle_parity(
        &mut self,
        now: Instant,
        number: u64,
        first: u64,
        count: u16,
        block: &[u8],
    ) -> Result<(), ProtocolError> {
        if !self.seen.insert(number) {
            return Ok(());
        }
        if self.seen.largest == Some(number) {
            self.largest_at = Some(now);
        }
        self.unreported += 1;
        self.unreported_since.get_or_insert(now);
        let seen = &self.seen;
        let Some((missing, e)) = self.parity.rebuild(first, count, block, |n| seen.has(n)) else {
            return Ok(());
        };
        let Some((offset, fin, payload)) = decode_member(&e) else {
            return Ok(()); // a parity that does not add up: the repair will come
        };
        let payload = payload.to_vec();
        self.rebuilt += 1;
        self.handle_member(now, missing, offset, &payload, fin, false)
    }

    /// Packets rebuilt from parity so far.
    pub fn rebuilt(&self) -> u64 {
        self.rebuilt
    }

    /// Takes a DATA packet. Bytes beyond the window are dropped (the sender never sends
    /// them); a stream end that contradicts another, or bytes past it, are an error.
    pub fn handle_data(
        &mut self,
        now: Instant,
        number: u64,
        offset: u64,
        payload: &[u8],
        fin: bool,
        ack_now: bool,
    ) -> Result<(), ProtocolError> {
        let end = offset + payload.len() as u64;
        if fin {
            match self.final_size {
                Some(f) if f != end => {
                    return Err(ProtocolError(format!(
                        "the stream's end said at {end} after {f}"
                    )))
                }
                _ if self.highest > end => {
                    return Err(ProtocolError(format!(
                        "the stream's end said at {end}, below bytes that arrived up to {}",
                        self.highest
                    )))
                }
                _ => self.final_size = Some(end),
            }
        }
        if self.final_size.is_some_and(|f| end > f) {
            return Err(ProtocolError(format!(
                "bytes up to {end} past the stream's end"
            )));
        }
        if end > self.read + self.capacity {
            return Ok(());
        }
        if !self.seen.insert(number) {
            // A duplicate: perhaps the sender missed a FEEDBACK.
            self.urgent |= ack_now;
            return Ok(());
        }
        if self.seen.largest == Some(number) {
            self.largest_at = Some(now);
        }
        if offset > self.highest {
            self.urgent = true; // a hole opened
        }
        self.urgent |= ack_now || fin;
        self.highest = self.highest.max(end);
        self.insert(offset, payload);
        while let Some(len) = self.chunks.get(&self.contiguous).map(|c| c.len() as u64) {
            self.contiguous += len;
        }
        self.unreported += 1;
        self.unreported_since.get_or_insert(now);
        Ok(())
    }

    /// Stores the parts of `payload` (at `offset`) that are neither read nor stored.
    fn insert(&mut self, offset: u64, payload: &[u8]) {
        let end = offset + payload.len() as u64;
        let mut at = offset.max(self.contiguous);
        while at < end {
            // The stored chunk at or before `at`, if it covers `at`, is skipped over.
            if let Some((&k, c)) = self.chunks.range(..=at).next_back() {
                let c_end = k + c.len() as u64;
                if c_end > at {
                    at = c_end;
                    continue;
                }
            }
            let next = self
                .chunks
                .range(at..)
                .next()
                .map_or(end, |(&k, _)| k.min(end));
            if next > at {
                let from = (at - offset) as usize;
                let to = (next - offset) as usize;
                self.chunks.insert(at, payload[from..to].to_vec());
            }
            at = next;
        }
    }

    /// Copies up to `buf.len()` bytes of the stream, in order, into `buf`; how many.
    pub fn read(&mut self, buf: &mut [u8]) -> usize {
        let mut n = 0;
        while n < buf.len() && self.read < self.contiguous {
            let Some(mut chunk) = self.chunks.remove(&self.read) else {
                break;
            };
            let take = chunk.len().min(buf.len() - n);
            buf[n..n + take].copy_from_slice(&chunk[..take]);
            n += take;
            self.read += take as u64;
            if take < chunk.len() {
                chunk.drain(..take);
                self.chunks.insert(self.read, chunk);
            }
        }
        if self.read + self.capacity >= self.advertised + self.capacity / 4 {
            self.urgent = true; // the window opened by a quarter
        }
        n
    }

    /// Bytes that can be read now.
    pub fn readable(&self) -> u64 {
        self.contiguous - self.read
    }

    /// Whether the whole stream arrived and was read.
    pub fn finished(&self) -> bool {
        self.final_size == Some(self.read)
    }

    /// Whether the whole stream arrived.
    pub fn complete(&self) -> bool {
        self.final_size == Some(self.contiguous)
    }

    /// Whether a FEEDBACK is due at `now`.
    pub fn feedback_due(&self, now: Instant) -> bool {
        self.urgent
            || self.unreported >= ACK_EVERY
            || self.feedback_deadline().is_some_and(|d| d <= now)
    }

    /// When a FEEDBACK will be due if nothing else comes.
    pub fn feedback_deadline(&self) -> Option<Instant> {
        self.unreported_since.map(|t| t + MAX_ACK_DELAY)
    }

    /// The FEEDBACK to send at `now`; counts as sent.
    pub fn feedback(&mut self, now: Instant) -> Feedback {
        self.urgent = false;
        self.unreported = 0;
        self.unreported_since = None;
        self.advertised = self.read + self.capacity;
        let (from, holes) = self.holes();
        Feedback {
            delivered: self.contiguous,
            window: self.advertised,
            highest: self.highest,
            largest: self.seen.largest,
            ack_delay_us: self.largest_at.map_or(0, |t| {
                u32::try_from(now.saturating_duration_since(t).as_micros()).unwrap_or(u32::MAX)
            }),
            received: self.seen.count,
            holes,
            from,
            end: self.final_size.is_some(),
        }
    }

    /// Where this FEEDBACK's list of holes starts, and the holes (ranges below `highest`
    /// that have not arrived) from there, lowest first: from `contiguous`, or where the
    /// last full list ended (so that a sender learns of many holes within a round trip).
    fn holes(&mut self) -> (u64, Vec<(u64, u64)>) {
        let from = if self.cursor > self.contiguous && self.cursor < self.highest {
            self.cursor
        } else {
            self.contiguous
        };
        let mut at = from;
        if let Some((&k, c)) = self.chunks.range(..=from).next_back() {
            at = at.max(k + c.len() as u64);
        }
        let mut holes = Vec::new();
        for (&k, c) in self.chunks.range(at..) {
            if holes.len() == MAX_HOLES {
                break;
            }
            if k > at {
                holes.push((at, k));
            }
            at = at.max(k + c.len() as u64);
        }
        self.cursor = match holes.last() {
            Some(&(_, end)) if holes.len() == MAX_HOLES => end,
            _ => self.contiguous,
        };
        (from, holes)
    }
}

/// The DATA packet numbers that arrived: how many, the highest, and which of the last
/// [`SEEN_SPAN`] below it (older ones count as duplicates).
#[derive(Debug, Default)]
struct Seen {
    largest: Option<u64>,
    count: u64,
    /// Bit `n % SEEN_SPAN` for the numbers in (largest − SEEN_SPAN, largest].
    bits: Vec<u64>,
}

impl Seen {
    /// Records `n`; false if it arrived before (or is too old to tell).
    fn insert(&mut self, n: u64) -> bool {
        if self.bits.is_empty() {
            self.bits = vec![0; (SEEN_SPAN / 64) as usize];
        }
        let largest = match self.largest {
            None => {
                self.largest = Some(n);
                self.set(n);
                self.count += 1;
                return true;
            }
            Some(l) => l,
        };
        if n > largest {
            // Clear the bits of the numbers that leave the span.
            let from = largest + 1;
            let upto = n.min(largest.saturating_add(SEEN_SPAN));
            for m in from..=upto {
                self.clear(m);
            }
            self.largest = Some(n);
        } else if largest - n >= SEEN_SPAN || self.get(n) {
            return false;
        }
        self.set(n);
        self.count += 1;
        true
    }
    /// Whether `n` arrived (as far as the span tells: an older one counts as arrived).
    fn has(&self, n: u64) -> bool {
        match self.largest {
            None => false,
            Some(l) if n > l => false,
            Some(l) if l - n >= SEEN_SPAN => true,
            Some(_) => !self.bits.is_empty() && self.get(n),
        }
    }
    fn slot(n: u64) -> (usize, u64) {
        let i = n % SEEN_SPAN;
        ((i / 64) as usize, 1 << (i % 64))
    }
    fn get(&self, n: u64) -> bool {
        let (w, b) = Self::slot(n);
        self.bits[w] & b != 0
    }
    fn set(&mut self, n: u64) {
        let (w, b) = Self::slot(n);
        self.bits[w] |= b;
    }
    fn clear(&mut self, n: u64) {
        let (w, b) = Self::slot(n);
        self.bits[w] &= !b;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn data(r: &mut Receiver, n: u64, off: u64, bytes: &[u8]) {
        r.handle_data(Instant::now(), n, off, bytes, false, false)
            .unwrap();
    }

    #[test]
    fn out_of_order_overlapping_and_duplicate_data_read_in_order_once() {
        let mut r = Receiver::new(1000);
        data(&mut r, 1, 4, b"4567");
        let f = r.feedback(Instant::now());
        assert_eq!(
            (f.delivered, f.highest, f.holes.clone()),
            (0, 8, vec![(0, 4)])
        );
        data(&mut r, 2, 2, b"234567"); // overlaps what is stored
        data(&mut r, 2, 2, b"234567"); // a duplicate
        data(&mut r, 3, 0, b"01");
        data(&mut r, 4, 8, b"89");
        let mut buf = [0u8; 16];
        let n = r.read(&mut buf);
        assert_eq!(&buf[..n], b"0123456789");
        let f = r.feedback(Instant::now());
        assert_eq!((f.delivered, f.received, f.holes.len()), (10, 4, 0));
        assert_eq!(f.largest, Some(4));
    }

    #[test]
    fn a_read_in_small_pieces_and_the_end() {
        let mut r = Receiver::new(100);
        r.handle_data(Instant::now(), 0, 0, b"abcdef", true, false)
            .unwrap();
        assert!(r.complete() && !r.finished());
        let mut b = [0u8; 4];
        assert_eq!(r.read(&mut b), 4);
        assert_eq!(&b, b"abcd");
        assert_eq!(r.read(&mut b), 2);
        assert_eq!(&b[..2], b"ef");
        assert!(r.finished());
        // Bytes past the end, or another end, are errors.
        assert!(r
            .handle_data(Instant::now(), 1, 6, b"x", false, false)
            .is_err());
        assert!(r
            .handle_data(Instant::now(), 2, 0, b"abc", true, false)
            .is_err());
    }

    #[test]
    fn bytes_beyond_the_window_are_dropped() {
        let mut r = Receiver::new(8);
        data(&mut r, 0, 6, b"6789");
        assert_eq!(r.feedback(Instant::now()).received, 0);
    }

    #[test]
    fn holes_are_reported_lowest_first_and_capped() {
        let mut r = Receiver::new(1 << 20);
        for i in 0..100u64 {
            data(&mut r, i, 10 * i + 5, b"x");
        }
        let f = r.feedback(Instant::now());
        assert_eq!((f.from, f.holes.len()), (0, MAX_HOLES));
        assert_eq!(f.holes[0], (0, 5));
        assert_eq!(f.holes[1], (6, 15));
        // The next list goes on where this one ended, then starts again.
        let f = r.feedback(Instant::now());
        assert_eq!(f.from, 10 * 63 + 5);
        assert_eq!(f.holes[0], (10 * 63 + 6, 10 * 64 + 5));
        assert_eq!(f.holes.len(), 100 - MAX_HOLES);
        assert_eq!(r.feedback(Instant::now()).from, 0);
    }

    #[test]
    fn packet_numbers_are_counted_once_across_the_span() {
        let mut s = Seen::default();
        assert!(s.insert(5));
        assert!(!s.insert(5));
        assert!(s.insert(3));
        assert!(s.insert(5 + SEEN_SPAN));
        assert!(!s.insert(5), "too old to tell: not counted");
        assert!(s.insert(4 + SEEN_SPAN));
        assert_eq!(s.count, 4);
    }
}
