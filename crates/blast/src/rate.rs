//! How fast a `blast` sender paces: from the rate it is given (or measures), held at what
//! the path delivers, and lower when the path says it is shared.
//!
//! The sender works in epochs of one minimum round trip (at least [`MIN_EPOCH`]). In each
//! it counts the bytes the receiver reported as arrived (the delivery rate), the DATA
//! packets lost (the receiver's count against the packet numbers sent) and the smallest
//! round trip of the epoch. Then:
//!
//! - **The bottleneck's rate** is the largest delivery rate of the last
//!   [`FILTER_EPOCHS`] epochs in which the sender always had bytes to send, started at
//!   the rate it was given: a path faster than measured shows in the epochs that probe
//!   above it, a slower one as the given rate ages out of the filter.
//! - **The pacing rate** is that rate times a gain that cycles over eight epochs: 1 + g
//!   once (to find more rate if the path has it), 1 − g once (to drain what that queued),
//!   1 otherwise (the scheme of BBR's bandwidth probing, Cardwell et al., ACM Queue
//!   14(5), 2016). The probe's g is at most 0.1 and small enough that it queues at most
//!   [`PROBE_QUEUE`] (4 ms of the rate on any path: g = 4 ms / round trip), so that it
//!   fits a shallow bottleneck queue on a long path and does not read as congestion.
//!   A probe that finds more rate (the delivery rate rises by more than half the gain)
//!   is repeated at once with twice the gain, up to 0.25, so that a path much faster
//!   than the rate measured is found within a few epochs.
//! - **Random loss is not congestion.** The loss of an epoch counts only when it is well
//!   above the path's own: more than the expected count at the long-run rate (at least
//!   [`LOSS_FLOOR`], 1 %) plus three standard deviations plus two packets. A lossy long
//!   path (0.1 % or 1 %) is thus sent at its full rate, where TCP's cubic collapses.
//! - **Congestion** (such loss, or the epoch's smallest round trip above the path's by
//!   more than [`queue_allowance`]: a queue that does not drain) lowers the rate to 0.85
//!   of what the epoch delivered (but to no less than 0.6 of the rate: an epoch of heavy
//!   loss delivers little of what it sent) and forgets the filter's larger rates; it is
//!   cut at most once per two epochs, the time its effect takes to show (the epoch after a
//!   cut delivers what was sent before it and is no sample of the path). Two `blast`
//!   flows, or one beside TCP, on one bottleneck thus each give way when the queue builds
//!   instead of flooding it.
//! - **A standing queue is another flow's.** A queue this sender made drains after its
//!   cuts: after [`STANDING_CUTS`] of them its rate is at most 0.85³ ≈ 0.61 of what the path
//!   delivered, so a queue of its own empties within an epoch or two. A queue still there
//!   then is kept by a flow that does not answer delay (TCP's cubic fills the buffer until
//!   it drops; BBR keeps up to a round trip's worth queued): giving way to it further only
//!   starves this sender (measured: 12 Mbit/s of 100 beside kernel BBR, and falling). The
//!   sender then competes: the queue stops counting as congestion until it has been gone
//!   (within half the allowance) for [`CLEAR_EPOCHS`] epochs in a row, and only loss lowers the rate (the mode switch of
//!   Copa's competitive mode, Arun and Balakrishnan, NSDI 2018, by this sender's own
//!   signals).
//! - **Without a given rate** the sender starts from 32 packets per round trip and
//!   doubles each epoch until a queue builds, loss rises, or the delivery rate grows by
//!   less than a quarter in three epochs (slow start, as TCP's, but paced); it then goes
//!   on at the best delivery rate it saw, a tenth below it for a round trip if a queue
//!   built.

use std::time::{Duration, Instant};

/// The shortest epoch.
pub const MIN_EPOCH: Duration = Duration::from_millis(5);
/// Epochs the bottleneck rate's filter spans.
pub const FILTER_EPOCHS: usize = 8;
/// Epochs in a cycle of the pacing gain: one probing above the rate, one draining, the
/// rest at it.
const CYCLE: usize = 8;
/// The queue one probing epoch may build at most: its gain above 1 times its length.
pub const PROBE_QUEUE: Duration = Duration::from_millis(4);
/// The share of packets lost that an epoch may show without it counting as congestion,
/// whatever the path's own loss.
pub const LOSS_FLOOR: f64 = 0.01;
/// The slowest pace, bytes per second (a few packets per round trip on any path).
pub const MIN_RATE: f64 = 12_500.0;
/// Cuts for a queue, with no [`CLEAR_EPOCHS`] without one between them, after which the
/// queue is taken for another flow's and stops counting as congestion.
pub const STANDING_CUTS: u32 = 3;
/// Epochs in a row without a queue (within half the allowance) after which a queue counts
/// as congestion again.
pub const CLEAR_EPOCHS: u32 = 4;

/// How far above the path's smallest round trip an epoch's smallest one may be before the
/// queue counts as building: an eighth of the round trip, between 2 and 10 ms.
pub fn queue_allowance(min_rtt: Duration) -> Duration {
    (min_rtt / 8).clamp(Duration::from_millis(2), Duration::from_millis(10))
}

/// The pacing rate's controller.
#[derive(Debug, Clone)]
pub struct RateControl {
    /// Bytes per second now.
    rate: f64,
    max_rate: f64,
    startup: bool,
    /// Delivery rates of the recent epochs that were not short of bytes.
    filter: Vec<f64>,
    cycle: usize,
    min_rtt: Option<Duration>,
    first_rtt: Duration,
    epoch: Epoch,
    /// Long-run loss: packets lost and packets counted.
    lost_total: f64,
    counted_total: f64,
    /// Epochs left before the next cut may come.
    hold: u32,
    /// Delivery rates at the ends of the last startup epochs.
    startup_history: Vec<f64>,
    /// The bottleneck rate at the last epoch's end.
    bottleneck: f64,
    /// The probe's gain above 1 (grows while probes find more rate).
    g: f64,
    /// When it started, and the record of its epochs (the first [`HISTORY`]).
    created: Instant,
    history: Vec<EpochRecord>,
    cuts: u32,
    /// Cuts for a queue since the queue was last gone for [`CLEAR_EPOCHS`] epochs.
    standing_cuts: u32,
    /// Epochs in a row without a queue.
    clear_run: u32,
    /// Whether the queue is taken for another flow's (it does not count as congestion).
    competing: bool,
    /// A rate measured by other means, held while the handshake's train is timed
    /// ([`RateControl::hint`]).
    hint: Option<f64>,
}

/// Epochs kept in [`RateControl::history`].
pub const HISTORY: usize = 400;

/// One epoch as the controller saw it, for diagnosis.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EpochRecord {
    /// Its end, from the controller's start.
    pub at: Duration,
    /// Bytes per second the receiver reported as arrived in it.
    pub delivery: f64,
    /// DATA packets lost of those counted in it.
    pub lost: u64,
    /// DATA packets counted in it.
    pub counted: u64,
    /// Its smallest round trip.
    pub min_rtt: Option<Duration>,
    /// Whether its loss or queue counted as congestion.
    pub congested: bool,
    /// Whether, at its end, a standing queue was taken for another flow's.
    pub competing: bool,
    /// The pacing rate set at its end, bytes per second.
    pub rate: f64,
}

#[derive(Debug, Clone)]
struct Epoch {
    start: Instant,
    delivered: u64,
    lost: u64,
    counted: u64,
    min_rtt: Option<Duration>,
    short_of_bytes: bool,
}

impl Epoch {
    fn new(start: Instant) -> Self {
        Epoch {
            start,
            delivered: 0,
            lost: 0,
            counted: 0,
            min_rtt: None,
            short_of_bytes: false,
        }
    }
}

impl RateControl {
    /// A controller starting at `given` bytes per second (else slow start from 32
    /// packets of `packet` bytes per round trip, `rtt` as the handshake measured it),
    /// never above `max_rate`.
    pub fn new(
        now: Instant,
        given: Option<f64>,
        max_rate: f64,
        packet: usize,
        rtt: Duration,
    ) -> Self {
        let max_rate = max_rate.max(MIN_RATE);
        let (rate, startup) = match given {
            Some(r) => (r.clamp(MIN_RATE, max_rate), false),
            None => (
                (32.0 * packet as f64 / rtt.as_secs_f64().max(1e-4)).clamp(MIN_RATE, max_rate),
                true,
            ),
        };
        RateControl {
            rate,
            max_rate,
            startup,
            filter: if startup { Vec::new() } else { vec![rate] },
            cycle: 0,
            // The handshake's round trip may be off (a repeated HELLO or WELCOME): the
            // smallest round trip is taken from DATA only; until then the epochs are as
            // long as the handshake's.
            min_rtt: None,
            first_rtt: rtt.max(MIN_EPOCH),
            epoch: Epoch::new(now),
            lost_total: 0.0,
            counted_total: 0.0,
            hold: 0,
            startup_history: Vec::new(),
            bottleneck: rate,
            g: 0.0,
            created: now,
            history: Vec::new(),
            cuts: 0,
            standing_cuts: 0,
            clear_run: 0,
            competing: false,
            hint: None,
        }
    }

    /// The first [`HISTORY`] epochs.
    pub fn history(&self) -> &[EpochRecord] {
        &self.history
    }

    /// How often congestion lowered the rate.
    pub fn cuts(&self) -> u32 {
        self.cuts
    }

    /// The pacing rate, bytes per second.
    pub fn rate(&self) -> f64 {
        self.rate
    }

    /// Whether it takes the queue it sees for another flow's and competes with it.
    pub fn competing(&self) -> bool {
        self.competing
    }

    /// Whether it is still in slow start.
    pub fn in_startup(&self) -> bool {
        self.startup
    }

    /// The smallest round trip seen.
    pub fn min_rtt(&self) -> Option<Duration> {
        self.min_rtt
    }

    /// The path's rate as measured (the handshake's train), bytes per second: a sender
    /// still in slow start goes on from there (a rate it was given stands), or from the
    /// [`hint`](RateControl::hint) where that is higher.
    pub fn measured(&mut self, rate: f64) {
        if !self.startup {
            return;
        }
        let rate = self.hint.take().map_or(rate, |h| h.max(rate));
        self.startup = false;
        self.rate = rate.clamp(MIN_RATE, self.max_rate);
        self.filter = vec![self.rate];
        self.cycle = CYCLE - 1; // the next epoch probes above it
    }

    /// A rate the path was measured at by other means (`--transport auto`'s probe), bytes
    /// per second, while the handshake's train is still being timed: the sender starts at
    /// the larger of the two ([`measured`](RateControl::measured)), at the hint alone if
    /// the train could not be timed ([`untimed`](RateControl::untimed)) or its report does
    /// not come before the first FEEDBACK. The larger, because each reads a fast path low
    /// and neither reads it high: a train's rate is its packets over the time they took to
    /// pass the bottleneck, which a busy host's timing lengthens (the probe's 32-packet
    /// train read 500 Mbit/s links at 131–147 Mbit/s in the grid of docs/results/auto, and
    /// `blast` started there took 2–15 times as long to deliver the tables as with its own
    /// 48-packet train's rate).
    pub fn hint(&mut self, rate: f64) {
        if self.startup {
            self.hint = Some(self.hint.map_or(rate, |h| h.max(rate)));
        }
    }

    /// The handshake's train could not be timed: a sender with a
    /// [`hint`](RateControl::hint) starts at it, else it stays in slow start.
    pub fn untimed(&mut self) {
        if let Some(h) = self.hint {
            self.measured(h);
        }
    }

    /// The sender had nothing to send while the pace allowed it: this epoch's delivery
    /// rate says nothing of the path.
    pub fn short_of_bytes(&mut self) {
        self.epoch.short_of_bytes = true;
    }

    /// A FEEDBACK's news at `now`: `delivered` bytes newly reported as arrived, `lost`
    /// of `counted` DATA packets lost, and a round-trip sample.
    pub fn on_feedback(
        &mut self,
        now: Instant,
        delivered: u64,
        lost: u64,
        counted: u64,
        rtt: Option<Duration>,
    ) {
        // The train's report did not come first (lost, or the peer sent no train).
        self.untimed();
        self.epoch.delivered += delivered;
        self.epoch.lost += lost;
        self.epoch.counted += counted;
        if let Some(r) = rtt.filter(|r| !r.is_zero()) {
            self.min_rtt = Some(self.min_rtt.map_or(r, |m| m.min(r)));
            self.epoch.min_rtt = Some(self.epoch.min_rtt.map_or(r, |m| m.min(r)));
        }
        let length = self.min_rtt.unwrap_or(self.first_rtt).max(MIN_EPOCH);
        if now.saturating_duration_since(self.epoch.start) >= length {
            self.end_epoch(now);
        }
    }

    fn end_epoch(&mut self, now: Instant) {
        if self.history.len() >= HISTORY {
            return self.judge_epoch(now);
        }
        let e = self.epoch.clone();
        let cuts = self.cuts;
        self.judge_epoch(now);
        let secs = now
            .saturating_duration_since(e.start)
            .as_secs_f64()
            .max(1e-6);
        self.history.push(EpochRecord {
            at: now.saturating_duration_since(self.created),
            delivery: e.delivered as f64 / secs,
            lost: e.lost,
            counted: e.counted,
            min_rtt: e.min_rtt,
            congested: self.cuts > cuts,
            competing: self.competing,
            rate: self.rate,
        });
    }

    /// Counts the epochs in a row whose queue was gone (`None`: no round-trip sample, no
    /// news); after [`CLEAR_EPOCHS`] of them a queue counts as congestion again.
    fn track_drain(&mut self, drained: Option<bool>) {
        match drained {
            Some(false) => self.clear_run = 0,
            Some(true) => {
                self.clear_run += 1;
                if self.clear_run >= CLEAR_EPOCHS {
                    self.standing_cuts = 0;
                    self.competing = false;
                }
            }
            None => {}
        }
    }

    fn judge_epoch(&mut self, now: Instant) {
        let e = std::mem::replace(&mut self.epoch, Epoch::new(now));
        let secs = now
            .saturating_duration_since(e.start)
            .as_secs_f64()
            .max(1e-6);
        let delivery = e.delivered as f64 / secs;
        let base = if self.counted_total > 0.0 {
            self.lost_total / self.counted_total
        } else {
            0.0
        };
        // Loss below 1 % is never taken for congestion (a queue overflowing drops more),
        // except while competing with a flow that keeps a queue standing: its losses then
        // are the buffer overflowing, the only signal left to give way on.
        let floor = if self.competing { 0.0 } else { LOSS_FLOOR };
        let expected = base.max(floor) * e.counted as f64;
        let lossy = e.lost as f64 > expected + 3.0 * expected.sqrt() + 2.0;
        let queued = match (e.min_rtt, self.min_rtt) {
            (Some(now_rtt), Some(min)) => now_rtt > min + queue_allowance(min),
            _ => false,
        };
        // Gone, for a standing queue, is within half the allowance (a queue hovering at
        // the allowance, as BBR's does, is not gone).
        // An epoch without a round-trip sample says nothing either way.
        let drained = match (e.min_rtt, self.min_rtt) {
            (Some(now_rtt), Some(min)) => Some(now_rtt <= min + queue_allowance(min) / 2),
            _ => None,
        };
        if !lossy {
            // Congestion's losses are kept out of the path's own rate.
            self.lost_total += e.lost as f64;
            self.counted_total += e.counted as f64;
        }
        self.hold = self.hold.saturating_sub(1);
        if self.startup {
            self.startup_history.push(delivery);
            let n = self.startup_history.len();
            let best = self
                .startup_history
                .iter()
                .copied()
                .fold(MIN_RATE, f64::max);
            let stalled = n >= 4 && delivery < 1.25 * self.startup_history[n - 4];
            if lossy || queued || stalled || self.rate >= self.max_rate {
                // What the path delivered at best is its rate (a delivery rate cannot
                // exceed the bottleneck's); after a queue or loss, a little below it to
                // drain the queue the doubling built.
                self.startup = false;
                self.filter = vec![best];
                let drain = if lossy || queued { 0.9 } else { 1.0 };
                self.rate = (best * drain).clamp(MIN_RATE, self.max_rate);
                self.cycle = 1;
                self.hold = 2;
            } else {
                self.rate = (self.rate * 2.0).min(self.max_rate);
            }
            return;
        }
        self.track_drain(drained);
        let queue_counts = queued && !self.competing;
        if (lossy || queue_counts) && self.hold == 0 && e.delivered > 0 {
            self.cuts += 1;
            if queue_counts && !lossy {
                self.standing_cuts += 1;
                self.competing = self.standing_cuts >= STANDING_CUTS;
            }
            // An epoch of heavy loss delivers little of what it sent: the cut is taken
            // from the rate where the delivery rate says less than 0.7 of it.
            self.rate = (0.85 * delivery.max(0.7 * self.rate))
                .min(self.rate)
                .max(MIN_RATE);
            self.filter = vec![self.rate];
            self.hold = 2;
            self.cycle = 1; // the cycle goes on from its draining epoch's successor
            return;
        }
        // The first epoch after a cut delivers what was sent before it (a round trip
        // late): as a sample of the path it would undo the cut at once. (The same holds
        // after slow start ends, whose filter starts from its best delivery rate.)
        let before_cut_took_effect = self.hold == 1;
        if !e.short_of_bytes && !before_cut_took_effect {
            self.filter.push(delivery);
            if self.filter.len() > FILTER_EPOCHS {
                self.filter.remove(0);
            }
        }
        let before = self.bottleneck;
        let bottleneck = self.filter.iter().copied().fold(MIN_RATE, f64::max);
        self.bottleneck = bottleneck;
        let g0 = (PROBE_QUEUE.as_secs_f64() / self.min_rtt.unwrap_or(self.first_rtt).as_secs_f64())
            .min(0.1);
        // A probe that found more rate (the delivery rate rose by more than half the
        // probe's gain) probes again at once, with twice the gain, up to a quarter: a path
        // much faster than measured is found in a few epochs, not a few cycles.
        let probed = self.g.max(g0);
        if self.cycle == 1 && !e.short_of_bytes && bottleneck > before * (1.0 + probed / 2.0) {
            self.g = (probed * 2.0).min(0.25);
            self.cycle = CYCLE - 1;
        } else if self.cycle == 1 {
            self.g = g0;
        }
        self.cycle = (self.cycle + 1) % CYCLE;
        let g = self.g.max(g0);
        let gain = match self.cycle {
            0 => 1.0 + g,
            1 => 1.0 - g,
            _ => 1.0,
        };
        self.rate = (bottleneck * gain).clamp(MIN_RATE, self.max_rate);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// Feeds `epochs` epochs of `rtt` delivering `rate` bytes/s with `lost` of 1,000
    /// packets lost each and the given smallest round trip.
    fn feed(
        c: &mut RateControl,
        t: &mut Instant,
        epochs: u32,
        rate: f64,
        lost: u64,
        rtt: Duration,
    ) {
        for _ in 0..epochs {
            *t += Duration::from_millis(50);
            c.on_feedback(*t, (rate * 0.05) as u64, lost, 1000, Some(rtt));
        }
    }

    #[test]
    fn a_hint_held_while_the_train_is_timed_starts_the_larger_of_the_two() {
        let t = Instant::now();
        let fresh = || RateControl::new(t, None, 1e12, 1400, 50 * MS);
        // The train read the path faster than the hint, or slower: the larger stands.
        let mut c = fresh();
        c.hint(17.5e6);
        assert!(c.in_startup(), "a hint alone does not end slow start");
        c.measured(62.5e6);
        assert_eq!((c.rate(), c.in_startup()), (62.5e6, false));
        let mut c = fresh();
        c.hint(62.5e6);
        c.hint(17.5e6);
        c.measured(17.5e6);
        assert_eq!(c.rate(), 62.5e6);
        // A train that could not be timed: the hint; none either: slow start goes on.
        let mut c = fresh();
        c.hint(40e6);
        c.untimed();
        assert_eq!((c.rate(), c.in_startup()), (40e6, false));
        let mut c = fresh();
        let start = c.rate();
        c.untimed();
        assert_eq!((c.rate(), c.in_startup()), (start, true));
        // No report before the first FEEDBACK: the hint.
        let mut c = fresh();
        c.hint(40e6);
        c.on_feedback(t + 50 * MS, 1400, 0, 1, Some(50 * MS));
        assert!(!c.in_startup());
        assert!(c.rate() >= 40e6, "{}", c.rate());
        // A hint after the train's rate changes nothing.
        let mut c = fresh();
        c.measured(17.5e6);
        c.hint(62.5e6);
        c.untimed();
        assert_eq!(c.rate(), 17.5e6);
    }

    #[test]
    fn random_loss_at_the_paths_own_rate_does_not_lower_the_pace() {
        let mut t = Instant::now();
        let mut c = RateControl::new(t, Some(62.5e6), 1e12, 1400, 50 * MS);
        feed(&mut c, &mut t, 40, 62.5e6, 10, 50 * MS); // 1 % loss throughout
        assert!(c.rate() > 0.85 * 62.5e6, "{}", c.rate());
    }

    #[test]
    fn a_building_queue_or_a_burst_of_loss_lowers_it() {
        let mut t = Instant::now();
        let mut c = RateControl::new(t, Some(62.5e6), 1e12, 1400, 50 * MS);
        feed(&mut c, &mut t, 10, 62.5e6, 1, 50 * MS);
        feed(&mut c, &mut t, 1, 50e6, 1, 70 * MS);
        assert!(c.rate() <= 0.85 * 50e6 + 1.0, "{}", c.rate());
        let mut c = RateControl::new(t, Some(62.5e6), 1e12, 1400, 50 * MS);
        feed(&mut c, &mut t, 10, 62.5e6, 1, 50 * MS);
        feed(&mut c, &mut t, 1, 50e6, 60, 50 * MS);
        assert!(c.rate() <= 0.85 * 50e6 + 1.0, "{}", c.rate());
        // 0.3 % in a first epoch is not congestion.
        let mut c = RateControl::new(t, Some(62.5e6), 1e12, 1400, 50 * MS);
        feed(&mut c, &mut t, 2, 62.5e6, 3, 50 * MS);
        assert!(c.rate() >= 0.95 * 62.5e6, "{}", c.rate());
        // An epoch that delivered little (heavy loss) cuts to no less than 0.6 of the rate.
        let mut c = RateControl::new(t, Some(62.5e6), 1e12, 1400, 50 * MS);
        feed(&mut c, &mut t, 10, 62.5e6, 1, 50 * MS);
        feed(&mut c, &mut t, 1, 5e6, 600, 50 * MS);
        assert!(c.rate() >= 0.59 * 62.5e6, "{}", c.rate());
    }

    #[test]
    fn a_queue_that_outlives_the_cuts_is_competed_with_until_it_drains() {
        let mut t = Instant::now();
        let mut c = RateControl::new(t, Some(62.5e6), 1e12, 1400, 50 * MS);
        feed(&mut c, &mut t, 10, 62.5e6, 1, 50 * MS);
        // Another flow keeps 20 ms queued whatever this one does: it delivers its rate.
        for _ in 0..2 * STANDING_CUTS + 2 {
            let r = c.rate();
            feed(&mut c, &mut t, 1, r, 1, 70 * MS);
        }
        assert!(c.competing());
        assert_eq!(c.cuts(), STANDING_CUTS);
        let held = c.rate();
        assert!(held >= 0.5 * 62.5e6, "{held}");
        // While competing, a queue costs nothing more; a loss burst under 1 % does.
        for _ in 0..20 {
            let r = c.rate();
            feed(&mut c, &mut t, 1, r, 1, 70 * MS);
        }
        assert_eq!(c.cuts(), STANDING_CUTS);
        assert!(c.rate() >= 0.9 * held, "{} against {held}", c.rate());
        let r = c.rate();
        feed(&mut c, &mut t, 1, r, 9, 70 * MS);
        assert_eq!(c.cuts(), STANDING_CUTS + 1);
        // The queue gone for CLEAR_EPOCHS epochs: a queue counts as congestion again.
        for _ in 0..CLEAR_EPOCHS {
            let r = c.rate();
            feed(&mut c, &mut t, 1, r, 0, 51 * MS);
        }
        assert!(!c.competing());
        let cuts = c.cuts();
        let r = c.rate();
        feed(&mut c, &mut t, 1, r, 0, 70 * MS);
        assert_eq!(c.cuts(), cuts + 1);
    }

    #[test]
    fn a_queue_that_hovers_at_the_allowance_is_not_gone() {
        let mut t = Instant::now();
        let mut c = RateControl::new(t, Some(62.5e6), 1e12, 1400, 40 * MS);
        feed(&mut c, &mut t, 10, 62.5e6, 0, 40 * MS);
        for _ in 0..2 * STANDING_CUTS + 2 {
            let r = c.rate();
            feed(&mut c, &mut t, 1, r, 0, 55 * MS);
        }
        assert!(c.competing());
        // 44 ms: under the allowance (5 ms), above half of it.
        for _ in 0..2 * CLEAR_EPOCHS {
            let r = c.rate();
            feed(&mut c, &mut t, 1, r, 0, 44 * MS);
        }
        assert!(c.competing());
    }

    #[test]
    fn a_faster_path_than_given_is_found_and_a_slower_one_followed() {
        let mut t = Instant::now();
        let mut c = RateControl::new(t, Some(10e6), 1e12, 1400, 50 * MS);
        // The path delivers whatever is sent, up to 50 MB/s.
        for _ in 0..200 {
            let r = c.rate().min(50e6);
            feed(&mut c, &mut t, 1, r, 0, 50 * MS);
        }
        assert!(c.rate() > 40e6, "{}", c.rate());
        let mut c = RateControl::new(t, Some(50e6), 1e12, 1400, 50 * MS);
        feed(&mut c, &mut t, 20, 20e6, 0, 50 * MS);
        assert!(c.rate() < 25e6, "{}", c.rate());
    }

    #[test]
    fn slow_start_doubles_until_the_delivery_rate_stops_growing() {
        let mut t = Instant::now();
        let mut c = RateControl::new(t, None, 1e12, 1400, 50 * MS);
        assert!(c.in_startup());
        for _ in 0..30 {
            let r = c.rate().min(30e6);
            feed(&mut c, &mut t, 1, r, 0, 50 * MS);
        }
        assert!(!c.in_startup());
        assert!((25e6..34e6).contains(&c.rate()), "{}", c.rate());
    }
}
