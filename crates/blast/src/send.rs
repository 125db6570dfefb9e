//! The sending half of a `blast` connection: keeps the stream's bytes until the receiver
//! has them, sends them paced, and sends again what the receiver reports missing.
//!
//! Loss is found from the receiver's FEEDBACK (see [`crate::wire`]): a packet whose bytes
//! lie in a reported hole is lost once a packet numbered [`REORDERING`] higher has
//! arrived, or once it was sent more than 9/8 of a round trip before the newest arrival
//! (the thresholds of RFC 9002 §6.1). Its missing bytes go again under a new packet
//! number, once: the old number is forgotten, so a hole reported again by later FEEDBACKs
//! costs nothing until the new copy is judged in turn. A lost packet thus costs about one
//! round trip, and no burst of repeats follows a burst of loss.
//!
//! At the stream's tail (every byte sent once) on a path that loses more than
//! [`TAIL_LOSS`], each repair goes twice: nothing sent after it would show its loss, and
//! waiting for the probe timeout would cost more than the copy.
//!
//! A loss at the tail (nothing sent after it, so no hole shows) and a lost FEEDBACK are
//! covered by the probe timeout (RFC 9002 §6.2): a round trip plus four deviations plus
//! the receiver's acknowledgement delay after the last send with nothing heard, doubling
//! each time, the lowest packet in flight goes again asking for a FEEDBACK at once.
//!
//! The pace is a token bucket at the controller's rate. Credit is capped at a millisecond
//! of the rate after the sender had nothing to send (no burst after an idle spell), but at
//! [`CATCH_UP`] (and [`CATCH_UP_PACKETS`]) while packets waited for the pace: a sender woken late (a loaded machine
//! wakes a sleeping thread milliseconds late) then sends what the pace allowed meanwhile,
//! instead of losing it and delivering less than its rate, which the controller would
//! take for the path's rate and follow down.
//!
//! Packets in flight are kept by stream offset; a FEEDBACK removes those it covers, so
//! that it costs time in proportion to what it newly covers and to the packets in its
//! holes, not to everything in flight.

use std::collections::{BTreeMap, VecDeque};
use std::time::{Duration, Instant};

use crate::fec::{Fec, Outlook, ParityBuilder};
use crate::rate::RateControl;
use crate::recv::MAX_ACK_DELAY;
use crate::wire::{Feedback, MAX_HOLES};
use crate::ProtocolError;

/// How many packet numbers later an arrival makes a packet in a hole lost.
pub const REORDERING: u64 = 3;
/// The loss above which repairs at the stream's tail go twice.
pub const TAIL_LOSS: f64 = 0.002;
/// The pace's credit at most after the sender had nothing to send.
pub const IDLE_BURST: Duration = Duration::from_millis(1);
/// The pace's credit at most while packets wait for it: how late a wake-up may be made up.
pub const CATCH_UP: Duration = Duration::from_millis(8);
/// ... and in packets at most (at 1 Gbit/s, 8 ms would be a megabyte sent back to back,
/// more than a shallow queue or a socket buffer takes).
pub const CATCH_UP_PACKETS: f64 = 256.0;

/// One DATA packet to send: the caller copies its bytes with [`Sender::copy_payload`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Transmit {
    /// Its packet number.
    pub number: u64,
    /// Where its bytes start in the stream.
    pub offset: u64,
    /// How many bytes it carries.
    pub len: usize,
    /// The stream ends with it.
    pub fin: bool,
    /// The receiver should answer at once.
    pub ack_now: bool,
    /// A parity packet will cover it.
    pub member: bool,
}

/// What the sender sends next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outgoing {
    /// A DATA packet (its bytes: [`Sender::copy_payload`]).
    Data(Transmit),
    /// The parity of the group of DATA packets `first .. first + count`.
    Parity {
        /// Its packet number (among the DATA packets').
        number: u64,
        /// The group's first packet number.
        first: u64,
        /// The group's size.
        count: u16,
        /// The XOR of the members' encodings.
        block: Vec<u8>,
    },
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    end: u64,
    number: u64,
    at: Instant,
}

/// The smoothed round trip (RFC 6298).
#[derive(Debug, Clone, Copy)]
struct Rtt {
    smoothed: Duration,
    variation: Duration,
    latest: Duration,
}

impl Rtt {
    fn new(first: Duration) -> Self {
        Rtt {
            smoothed: first,
            variation: first / 2,
            latest: first,
        }
    }
    fn update(&mut self, sample: Duration) {
        let diff = self.smoothed.abs_diff(sample);
        self.variation = (self.variation * 3 + diff) / 4;
        self.smoothed = (self.smoothed * 7 + sample) / 8;
        self.latest = sample;
    }
}

/// The sending half.
#[derive(Debug)]
pub struct Sender {
    /// The stream's bytes from `acked` to `written`.
    queue: VecDeque<u8>,
    acked: u64,
    written: u64,
    capacity: u64,
    /// The next byte never sent.
    next_new: u64,
    /// The end of the highest bytes sent (for the counts).
    sent_high: u64,
    /// Bytes below this go out even in a packet that is not full.
    flushed: u64,
    finished: bool,
    /// A packet with the FIN went.
    fin_sent: bool,
    end_acked: bool,
    /// The FIN must go again (lost at the tail).
    fin_again: bool,
    /// Packets in flight by stream offset, not yet judged.
    in_flight: BTreeMap<u64, Sent>,
    /// Ranges to send again: start → end.
    lost: BTreeMap<u64, u64>,
    /// A repair to send a second time, next.
    second_copy: Option<(u64, usize)>,
    next_number: u64,
    /// Send times of the packet numbers above the largest acknowledged.
    sent_times: VecDeque<(u64, Instant)>,
    largest_acked: Option<u64>,
    last_feedback: Option<u64>,
    /// Packets the receiver had counted as lost so far (numbered, not arrived).
    peer_lost: u64,
    peer_counted: u64,
    peer_received: u64,
    peer_window: u64,
    payload: usize,
    packet_bytes: f64,
    rtt: Rtt,
    control: RateControl,
    tokens: f64,
    refilled: Instant,
    /// Whether a packet waited for the pace at the last poll (credit then builds up to
    /// [`CATCH_UP`]).
    waiting_for_pace: bool,
    /// The last packet that asks for an answer, for the probe timeout.
    last_eliciting: Option<Instant>,
    probes: u32,
    /// A window probe is due (the receiver's window is full and its update may be lost).
    window_probe: bool,
    fec: Fec,
    /// The parity group being built, and a finished one's parity to send next.
    parity: Option<ParityBuilder>,
    parity_ready: Option<(u64, u16, Vec<u8>)>,
    scratch: Vec<u8>,
    counts: SendCounts,
}

/// What a sender sent, for diagnosis.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SendCounts {
    /// DATA packets with bytes never sent before.
    pub new: u64,
    /// DATA packets sent again (repairs, their second copies, probes).
    pub repairs: u64,
    /// PARITY packets.
    pub parity: u64,
    /// Probe timeouts fired.
    pub probe_timeouts: u64,
}

impl Sender {
    /// A sender of `payload`-byte packets (`packet_bytes` on the wire, headers included)
    /// that buffers up to `capacity` unacknowledged bytes, paced by `control`, for a
    /// receiver whose window is `peer_window`, on a path of round trip `rtt`.
    pub fn new(
        now: Instant,
        payload: usize,
        packet_bytes: usize,
        capacity: u64,
        peer_window: u64,
        rtt: Duration,
        control: RateControl,
    ) -> Self {
        Sender {
            queue: VecDeque::new(),
            acked: 0,
            written: 0,
            capacity,
            next_new: 0,
            sent_high: 0,
            flushed: 0,
            finished: false,
            fin_sent: false,
            end_acked: false,
            fin_again: false,
            in_flight: BTreeMap::new(),
            lost: BTreeMap::new(),
            second_copy: None,
            next_number: 0,
            sent_times: VecDeque::new(),
            largest_acked: None,
            last_feedback: None,
            peer_lost: 0,
            peer_counted: 0,
            peer_received: 0,
            peer_window,
            payload: payload.max(1),
            packet_bytes: packet_bytes as f64,
            rtt: Rtt::new(rtt.max(Duration::from_micros(100))),
            control,
            tokens: 2.0 * packet_bytes as f64,
            refilled: now,
            waiting_for_pace: false,
            last_eliciting: None,
            probes: 0,
            window_probe: false,
            fec: Fec::Off,
            parity: None,
            parity_ready: None,
            scratch: Vec::new(),
            counts: SendCounts::default(),
        }
    }

    /// What it sent so far.
    pub fn counts(&self) -> SendCounts {
        self.counts
    }

    /// The rate controller (its history, for diagnosis).
    pub fn control(&self) -> &RateControl {
        &self.control
    }

    /// Sends parity packets as `fec` says.
    pub fn with_fec(mut self, fec: Fec) -> Self {
        self.fec = fec;
        self
    }

    /// What parity `auto` weighs for the next group (see [`crate::fec`]).
    fn outlook(&self) -> Outlook {
        let rate = self.control.rate().max(1.0);
        let rtt = self.rtt.smoothed.as_secs_f64();
        Outlook {
            // The receiver's count with a prior of 0.1 % weighing as 1,000 packets.
            loss: (self.peer_lost as f64 + 1.0) / (self.peer_counted as f64 + 1000.0),
            remaining: (self.written - self.next_new) as f64 / self.payload as f64 + 1.0,
            outstanding: (self.written - self.acked) as f64 / self.payload as f64 + 1.0,
            per_round_trip: rate * rtt / self.packet_bytes,
            gap: self.packet_bytes / rate,
            rtt,
        }
    }

    /// Closes the group being built: its parity goes next.
    fn close_group(&mut self) -> bool {
        match self.parity.take() {
            // A group of one gets its parity too: a copy, for a message of one packet.
            Some(b) if b.members >= 1 => {
                self.parity_ready = Some((b.first, b.members, b.acc));
                true
            }
            _ => false,
        }
    }

    /// Queues as much of `bytes` as the buffer takes; how much.
    pub fn write(&mut self, bytes: &[u8]) -> usize {
        if self.finished {
            return 0;
        }
        let room = self.capacity.saturating_sub(self.written - self.acked) as usize;
        let n = room.min(bytes.len());
        self.queue.extend(&bytes[..n]);
        self.written += n as u64;
        n
    }

    /// Room in the buffer, bytes.
    pub fn writable(&self) -> u64 {
        self.capacity.saturating_sub(self.written - self.acked)
    }

    /// Lets every byte written so far go without waiting to fill a packet; the last
    /// packet asks for an answer at once.
    pub fn flush(&mut self) {
        self.flushed = self.written;
    }

    /// Ends the stream after the bytes written.
    pub fn finish(&mut self) {
        self.finished = true;
        self.flushed = self.written;
    }

    /// Whether the receiver has every byte and the end.
    pub fn done(&self) -> bool {
        self.finished && self.end_acked && self.acked == self.written
    }

    /// The peer said it has every byte and the end (its CLOSE): nothing is outstanding.
    pub fn all_arrived(&mut self) {
        if !self.finished {
            return; // it cannot have the end of a stream not ended
        }
        self.queue.clear();
        self.acked = self.written;
        self.end_acked = true;
        self.in_flight.clear();
        self.lost.clear();
        self.second_copy = None;
    }

    /// The path's rate as measured, bytes per second (see [`RateControl::measured`]).
    pub fn measured(&mut self, rate: f64) {
        self.control.measured(rate);
    }

    /// A rate measured by other means while the train is timed (see [`RateControl::hint`]).
    pub fn hint(&mut self, rate: f64) {
        self.control.hint(rate);
    }

    /// The handshake's train could not be timed (see [`RateControl::untimed`]).
    pub fn untimed(&mut self) {
        self.control.untimed();
    }

    /// Whether some written byte is not yet known to have arrived.
    pub fn bytes_outstanding(&self) -> bool {
        self.acked < self.written
    }

    /// Whether anything sent is not yet known to have arrived.
    pub fn outstanding(&self) -> bool {
        self.acked < self.written || (self.finished && !self.end_acked)
    }

    /// The pacing rate now, bytes per second.
    pub fn rate(&self) -> f64 {
        self.control.rate()
    }

    /// The smoothed round trip.
    pub fn srtt(&self) -> Duration {
        self.rtt.smoothed
    }

    fn refill(&mut self, now: Instant) {
        let rate = self.control.rate();
        let span = if self.waiting_for_pace {
            CATCH_UP
        } else {
            IDLE_BURST
        };
        let burst = (rate * span.as_secs_f64())
            .min(CATCH_UP_PACKETS * self.packet_bytes)
            .max(2.0 * self.packet_bytes);
        let earned = now.saturating_duration_since(self.refilled).as_secs_f64() * rate;
        self.tokens = (self.tokens + earned).min(burst);
        self.refilled = now;
    }

    /// The next DATA packet to send at `now`, if the pace allows one and there is one.
    pub fn poll_transmit(&mut self, now: Instant) -> Option<Outgoing> {
        self.refill(now);
        if self.tokens < self.packet_bytes {
            self.waiting_for_pace = self.has_packet();
            return None;
        }
        if let Some((first, count, block)) = self.parity_ready.take() {
            let number = self.next_number;
            self.next_number += 1;
            self.sent_times.push_back((number, now));
            self.tokens -= block.len() as f64 + self.packet_bytes - self.payload as f64;
            self.counts.parity += 1;
            return Some(Outgoing::Parity {
                number,
                first,
                count,
                block,
            });
        }
        let again_copy = self.second_copy.is_some();
        let (offset, len) = match self.next_range() {
            // A group's members are numbered without a gap: a packet outside the group
            // (a lone FIN, a window probe) waits for its parity.
            Some((_, 0)) if self.close_group() => return self.poll_transmit(now),
            Some(r) => r,
            None => {
                // Nothing follows: the group so far gets its parity now.
                if self.close_group() {
                    return self.poll_transmit(now);
                }
                if self.written == self.next_new && self.lost.is_empty() {
                    self.control.short_of_bytes();
                }
                self.waiting_for_pace = false;
                return None;
            }
        };
        let end = offset + len as u64;
        if end > self.sent_high {
            self.counts.new += 1;
            self.sent_high = end;
        } else if len > 0 {
            self.counts.repairs += 1;
        }
        let fin = self.finished && end == self.written;
        if fin {
            self.fin_again = false;
            self.fin_sent = true;
            // The last packet of a lossy path goes twice too: its loss would show only
            // at the probe timeout.
            if self.tail_is_lossy() && self.second_copy.is_none() && !again_copy {
                self.second_copy = Some((offset, len));
            }
        }
        let ack_now = (end >= self.flushed && self.lost.is_empty() && end >= self.next_new)
            || fin
            || self.window_probe
            || self.probes > 0;
        self.window_probe = false;
        let number = self.next_number;
        self.next_number += 1;
        let sent = Sent {
            end,
            number,
            at: now,
        };
        if len > 0 {
            self.in_flight.insert(offset, sent);
        }
        self.sent_times.push_back((number, now));
        self.tokens -= len as f64 + self.packet_bytes - self.payload as f64;
        self.last_eliciting = Some(now);
        let mut t = Transmit {
            number,
            offset,
            len,
            fin,
            ack_now,
            member: false,
        };
        if len > 0 {
            if self.parity.is_none() {
                if let Some(size) = self.fec.group_size(&self.outlook()) {
                    self.parity = Some(ParityBuilder::new(number, size));
                }
            }
            if self.parity.is_some() {
                t.member = true;
                let mut bytes = std::mem::take(&mut self.scratch);
                bytes.clear();
                self.copy_payload(&t, &mut bytes);
                let full = self
                    .parity
                    .as_mut()
                    .is_some_and(|b| b.add(offset, fin, &bytes));
                self.scratch = bytes;
                if full {
                    self.close_group();
                }
            }
        }
        Some(Outgoing::Data(t))
    }

    /// What to send next: a lost range first, then new bytes, then a lone FIN or window
    /// probe.
    fn next_range(&mut self) -> Option<(u64, usize)> {
        if let Some((start, len)) = self.second_copy.take() {
            if start >= self.acked {
                return Some((start, len));
            }
        }
        while let Some((&start, &end)) = self.lost.iter().next() {
            self.lost.remove(&start);
            let start = start.max(self.acked);
            if end <= start {
                continue;
            }
            let len = (end - start).min(self.payload as u64);
            if start + len < end {
                self.lost.insert(start + len, end);
            }
            if self.tail_is_lossy() {
                self.second_copy = Some((start, len as usize));
            }
            return Some((start, len as usize));
        }
        let limit = self.written.min(self.peer_window);
        if self.next_new < limit {
            let len = (limit - self.next_new).min(self.payload as u64);
            let end = self.next_new + len;
            if len == self.payload as u64 || end <= self.flushed {
                let offset = self.next_new;
                self.next_new = end;
                return Some((offset, len as usize));
            }
            return None;
        }
        if self.finished && self.next_new == self.written && (self.fin_again || !self.fin_sent) {
            // The end alone: after its packet was lost at the tail, or when it was written
            // after the last byte went.
            return Some((self.written, 0));
        }
        if self.window_probe {
            return Some((self.next_new, 0));
        }
        None
    }

    /// Copies the bytes of `t` into `out` (appended).
    pub fn copy_payload(&self, t: &Transmit, out: &mut Vec<u8>) {
        let from = (t.offset - self.acked) as usize;
        let (a, b) = self.queue.as_slices();
        let mut left = t.len;
        let mut at = from;
        for part in [a, b] {
            if at >= part.len() {
                at -= part.len();
                continue;
            }
            let take = (part.len() - at).min(left);
            out.extend_from_slice(&part[at..at + take]);
            left -= take;
            at = 0;
            if left == 0 {
                break;
            }
        }
    }

    /// Whether a repair goes twice: when nothing new follows it (a repair lost again at
    /// the tail would wait for the probe timeout) on a path that loses more than
    /// [`TAIL_LOSS`].
    fn tail_is_lossy(&self) -> bool {
        self.next_new == self.written
            && self.peer_counted > 0
            && self.peer_lost as f64 > TAIL_LOSS * self.peer_counted as f64
    }

    /// Whether a packet is waiting for the pace (or could go now).
    fn has_packet(&self) -> bool {
        let limit = self.written.min(self.peer_window);
        !self.lost.is_empty()
            || self.second_copy.is_some()
            || self.parity_ready.is_some()
            || self.parity.as_ref().is_some_and(|b| b.members >= 1)
            || (self.next_new < limit
                && (limit - self.next_new >= self.payload as u64 || limit <= self.flushed))
            || (self.finished
                && self.next_new == self.written
                && (self.fin_again || !self.fin_sent))
            || self.window_probe
    }

    /// When the next packet may go (`now` if one may go now), or the probe timeout fires.
    pub fn next_timeout(&self, now: Instant) -> Option<Instant> {
        let pace = self.has_packet().then(|| {
            let earned =
                now.saturating_duration_since(self.refilled).as_secs_f64() * self.control.rate();
            let short = self.packet_bytes - self.tokens - earned;
            if short <= 0.0 {
                now
            } else {
                now + Duration::from_secs_f64(short / self.control.rate().max(1.0))
            }
        });
        let probe = self.probe_deadline();
        match (pace, probe) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    fn probe_deadline(&self) -> Option<Instant> {
        let waiting = self.outstanding() && (self.next_new > self.acked || self.finished)
            || self.written > self.next_new && self.next_new >= self.peer_window;
        if !waiting {
            return None;
        }
        let pto = self.rtt.smoothed
            + (self.rtt.variation * 4).max(Duration::from_millis(1))
            + MAX_ACK_DELAY;
        let pto = pto * 2u32.saturating_pow(self.probes.min(10));
        self.last_eliciting.map(|t| t + pto)
    }

    /// Fires the probe timeout if it is due: the lowest packet in flight goes again (or
    /// the FIN, or a window probe), asking for an answer at once.
    pub fn handle_timeout(&mut self, now: Instant) {
        if self.probe_deadline().is_none_or(|d| d > now) {
            return;
        }
        self.probes += 1;
        self.counts.probe_timeouts += 1;
        self.last_eliciting = Some(now);
        if let Some((k, s)) = self.in_flight.pop_first() {
            self.lost.insert(k.max(self.acked), s.end);
        } else if self.finished && !self.end_acked {
            self.fin_again = true;
        } else {
            self.window_probe = true;
        }
    }

    /// Takes FEEDBACK number `number` received at `now`.
    pub fn handle_feedback(
        &mut self,
        now: Instant,
        number: u64,
        fb: &Feedback,
    ) -> Result<(), ProtocolError> {
        if self.last_feedback.is_some_and(|l| number <= l) {
            return Ok(()); // older than one already taken
        }
        if fb.highest > self.next_new
            || fb.largest.is_some_and(|l| l >= self.next_number)
            || fb.end && !self.finished
        {
            return Err(ProtocolError(
                "a FEEDBACK acknowledges bytes or packets never sent".into(),
            ));
        }
        self.last_feedback = Some(number);
        self.peer_window = self.peer_window.max(fb.window);
        let mut sample = None;
        if let Some(largest) = fb.largest {
            if self.largest_acked.is_none_or(|l| largest > l) {
                while let Some(&(n, at)) = self.sent_times.front() {
                    if n > largest {
                        break;
                    }
                    self.sent_times.pop_front();
                    if n == largest {
                        let delay = Duration::from_micros(u64::from(fb.ack_delay_us));
                        let raw = now.saturating_duration_since(at);
                        let rtt = if raw > delay { raw - delay } else { raw };
                        self.rtt.update(rtt);
                        sample = Some(rtt);
                    }
                }
                self.largest_acked = Some(largest);
            }
        }
        self.take_acks(now, fb);
        // What arrived, duplicates not counted, in packets on the wire: the delivery rate
        // (repairs included, which use the link as much).
        let arrived = fb.received.saturating_sub(self.peer_received);
        self.peer_received = self.peer_received.max(fb.received);
        let (lost, counted) = match fb.largest {
            Some(l) => {
                let numbered = l + 1;
                let lost_now = numbered.saturating_sub(fb.received);
                let lost = lost_now.saturating_sub(self.peer_lost);
                let counted = numbered.saturating_sub(self.peer_counted);
                self.peer_lost = self.peer_lost.max(lost_now);
                self.peer_counted = self.peer_counted.max(numbered);
                (lost, counted)
            }
            None => (0, 0),
        };
        if fb.end && fb.delivered == self.written {
            self.end_acked = true;
        }
        if arrived > 0 || fb.end {
            self.probes = 0;
        }
        let wire = (arrived as f64 * self.packet_bytes) as u64;
        self.control.on_feedback(now, wire, lost, counted, sample);
        Ok(())
    }

    /// Drops what `fb` says arrived and marks what it says is lost. A FEEDBACK speaks of
    /// the bytes below `delivered` and of those from `from` to `highest` (to its last hole
    /// if its list is full); a packet partly outside that is judged on the part inside,
    /// and the rest stays in flight to be judged by a later one.
    fn take_acks(&mut self, now: Instant, fb: &Feedback) {
        if fb.delivered > self.acked {
            let n = (fb.delivered - self.acked) as usize;
            self.queue.drain(..n.min(self.queue.len()));
            self.acked = fb.delivered;
        }
        while let Some(e) = self.in_flight.first_entry() {
            if e.get().end > self.acked {
                break;
            }
            e.remove();
        }
        let high = if fb.holes.len() == MAX_HOLES {
            fb.holes.last().map_or(fb.highest, |h| h.1)
        } else {
            fb.highest
        };
        let from = fb.from.max(self.acked);
        if high <= from {
            return;
        }
        let first = self
            .in_flight
            .range(..=from)
            .next_back()
            .map_or(from, |(&k, _)| k);
        let keys: Vec<u64> = self.in_flight.range(first..high).map(|(&k, _)| k).collect();
        let largest = fb.largest.unwrap_or(0);
        let late = (self.rtt.smoothed.max(self.rtt.latest) * 9 / 8).max(Duration::from_millis(1));
        for k in keys {
            let s = self.in_flight[&k];
            if s.end <= from {
                continue;
            }
            let (lo, hi) = (k.max(from), s.end.min(high));
            let i = fb.holes.partition_point(|h| h.1 <= lo);
            let touched: Vec<(u64, u64)> = fb.holes[i..]
                .iter()
                .take_while(|h| h.0 < hi)
                .map(|h| (h.0.max(lo), h.1.min(hi)))
                .collect();
            let lost = !touched.is_empty()
                && fb.largest.is_some_and(|l| l > s.number)
                && (s.number + REORDERING <= largest || now.saturating_duration_since(s.at) > late);
            if !touched.is_empty() && !lost {
                continue; // perhaps only late: judged again by a later FEEDBACK
            }
            // The part inside [lo, hi) is decided (arrived, or lost and sent again); the
            // parts outside stay in flight under the same number.
            self.in_flight.remove(&k);
            if k < lo {
                self.in_flight.insert(k, Sent { end: lo, ..s });
            }
            if s.end > hi {
                self.in_flight.insert(hi, s);
            }
            for (a, b) in touched {
                self.lost.insert(a, b);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// A sender of 1,000-byte payloads in 1,028-byte packets paced at one a millisecond.
    fn sender(t: Instant) -> Sender {
        let control = RateControl::new(t, Some(1.028e6), 1e12, 1028, 40 * MS);
        Sender::new(t, 1000, 1028, 1 << 24, 1 << 24, 40 * MS, control)
    }

    /// DATA packets that go at `now` before the pace stops them.
    fn sent_at(s: &mut Sender, now: Instant) -> usize {
        std::iter::from_fn(|| s.poll_transmit(now)).count()
    }

    #[test]
    fn a_late_wake_with_packets_waiting_makes_up_what_the_pace_allowed() {
        let t = Instant::now();
        let mut s = sender(t);
        s.write(&[7; 100_000]);
        assert_eq!(sent_at(&mut s, t), 2, "the first two go at once");
        // Woken 5 ms late while packets waited: the 5 the pace allowed meanwhile go.
        assert_eq!(sent_at(&mut s, t + 5 * MS), 5);
        // Woken 20 ms late: no more than CATCH_UP's worth.
        assert_eq!(sent_at(&mut s, t + 25 * MS), 8);
    }

    #[test]
    fn after_nothing_to_send_the_credit_is_a_millisecond() {
        let t = Instant::now();
        let mut s = sender(t);
        s.write(&[7; 2_000]);
        assert_eq!(sent_at(&mut s, t), 2);
        assert_eq!(sent_at(&mut s, t + 5 * MS), 0, "nothing written");
        s.write(&[7; 100_000]);
        assert_eq!(
            sent_at(&mut s, t + 20 * MS),
            2,
            "no burst after the idle spell"
        );
    }
}
