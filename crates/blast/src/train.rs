//! The client's timing of the server's train (see the crate docs' session): which of its
//! packets arrived when, and the rate they passed the bottleneck at.

use std::time::{Duration, Instant};

/// The client's record of the server's train: which packets arrived when, and whether
/// each arrival was timed promptly (see [`crate::Connection::handle_datagram_timed`]).
#[derive(Debug)]
pub(crate) struct TrainMeter {
    count: u16,
    first: Instant,
    /// (index, arrival, wire bytes, prompt) of each packet, in arrival order.
    arrivals: Vec<(u64, Instant, usize, bool)>,
    pub(crate) reported: bool,
}

impl TrainMeter {
    pub(crate) fn new(now: Instant, count: u16) -> Self {
        TrainMeter {
            count,
            first: now,
            arrivals: Vec::with_capacity(usize::from(count)),
            reported: false,
        }
    }

    pub(crate) fn arrived(&mut self, now: Instant, index: u64, size: usize, prompt: bool) {
        if index < u64::from(self.count) && self.arrivals.len() < usize::from(self.count) {
            self.arrivals.push((index, now, size, prompt));
        }
    }

    /// The last packet arrived (or as many as were sent).
    pub(crate) fn complete(&self) -> bool {
        self.arrivals.len() == usize::from(self.count)
            || self
                .arrivals
                .last()
                .is_some_and(|a| a.0 + 1 == u64::from(self.count))
    }

    /// When to stop waiting for the rest of a train that lost its tail.
    pub(crate) fn deadline(&self) -> Instant {
        self.first + TRAIN_WAIT
    }

    /// The rate the train passed the bottleneck at, bytes per second: the bytes that
    /// arrived after the first prompt arrival at or past a quarter of the train (a token
    /// bucket lets its first packets through at the sender's speed) up to the last prompt
    /// arrival, over the time between those two. None without two such arrivals at least
    /// 50 µs apart.
    pub(crate) fn rate(&self) -> Option<f64> {
        let quarter = u64::from(self.count) / 4;
        let start = self.arrivals.iter().position(|a| a.3 && a.0 >= quarter)?;
        let end = self.arrivals.iter().rposition(|a| a.3)?;
        if end <= start {
            return None;
        }
        let span = self.arrivals[end]
            .1
            .saturating_duration_since(self.arrivals[start].1);
        if span < Duration::from_micros(50) {
            return None;
        }
        let bytes: usize = self.arrivals[start + 1..=end].iter().map(|a| a.2).sum();
        Some(bytes as f64 / span.as_secs_f64())
    }
}

/// How long the client waits for the rest of the server's train after its first packet.
pub(crate) const TRAIN_WAIT: Duration = Duration::from_millis(30);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_is_timed_by_prompt_arrivals_past_the_first_quarter() {
        let t0 = Instant::now();
        let mut m = TrainMeter::new(t0, 8);
        // The first two (a quarter) arrive at once (a token bucket's burst): left out.
        // Then one packet of 1500 bytes every 100 µs: 15 MB/s. One late read, not prompt.
        for i in 0..8u64 {
            let at = t0 + Duration::from_micros(if i < 2 { 0 } else { 100 * i });
            m.arrived(at, i, 1500, i != 5);
        }
        assert!(m.complete());
        let r = m.rate().unwrap();
        assert!((r - 15e6).abs() < 1e3, "{r}");
        // Without two prompt arrivals there is no rate.
        let mut m = TrainMeter::new(t0, 8);
        for i in 0..8u64 {
            m.arrived(t0 + Duration::from_micros(10 * i), i, 1500, i == 3);
        }
        assert_eq!(m.rate(), None);
        // Indices beyond the train are not counted.
        m.arrived(t0, 99, 1500, true);
        assert_eq!(m.arrivals.len(), 8);
    }
}
