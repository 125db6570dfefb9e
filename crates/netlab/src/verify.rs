//! Measuring what a topology delivers and comparing it with its [`LinkSpec`](crate::LinkSpec).
//!
//! [`measure`] runs the UDP probe (`transputation-probe`) with its server's socket in B and
//! its prober's in A, on two threads of this process: 20 pings for the round trip, then a
//! train of UDP packets A→B for loss and rate (train dispersion; see the probe's docs).
//! [`check`] compares: the median round trip within 5 % + 0.3 ms of the link's round trip
//! (including the two pings' serialization at the link rate), the train's loss within
//! binomial bounds at probability 1e-6, and the rate within 10 %. The train is kept to what
//! the bottleneck queue holds, so that queue overflow does not count as random loss; the
//! rate is still measured, because a train that fits in the queue still leaves it at the
//! link rate.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde::Serialize;
use transputation_probe::{self as probe, Settings};

use crate::{ns, Error, Side, Topology};

/// Bytes of each train packet on the wire: the probe's 1200-byte payload plus IP and UDP.
const TRAIN_PACKET_IP_BYTES: u64 = 1228;
/// Bytes of a ping on the wire (64-byte payload plus IP and UDP).
const PING_IP_BYTES: u64 = 92;
/// The UDP port of the probe server in B.
const PORT: u16 = 7101;

/// What `probe` measured.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    /// Smallest round trip, ms.
    pub rtt_ms_min: f64,
    /// Median round trip, ms.
    pub rtt_ms_median: f64,
    /// Train packets sent A→B.
    pub train_sent: u64,
    /// Train packets that arrived.
    pub train_received: u64,
    /// Rate of the train's arrivals, Mbit/s.
    pub bandwidth_mbps: Option<f64>,
}

/// One verified property.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// `rtt`, `loss` or `rate`.
    pub what: &'static str,
    /// The expected value, in `unit`.
    pub expected: f64,
    /// The accepted range.
    pub range: (f64, f64),
    /// The measured value.
    pub measured: f64,
    /// ms, %, Mbit/s.
    pub unit: &'static str,
    /// Whether `measured` is in `range`.
    pub pass: bool,
}

/// The train length [`check`] uses: what the A→B queue holds (so no packet is dropped by
/// overflow), at most `max`, at least 16.
pub fn train_len(topo: &Topology, max: u64) -> u64 {
    let d = topo.link().a_to_b;
    d.queue_bytes()
        .map_or(max, |q| q / TRAIN_PACKET_IP_BYTES)
        .clamp(16, max.max(16))
}

/// Runs the probe across the topology (server in B, prober in A, each on a thread of this
/// process with its socket bound inside its namespace); the prober gives up on a silent
/// server after `timeout`, and the server is stopped when the prober is done.
pub fn measure(
    topo: &Topology,
    pings: u32,
    train: u64,
    timeout: Duration,
) -> Result<Measurement, Error> {
    let server_addr = SocketAddr::from((topo.addr(Side::B), PORT));
    let server = ns::within(topo.namespace(Side::B), || UdpSocket::bind(server_addr))?;
    let prober = ns::within(topo.namespace(Side::A), || {
        probe::prober_socket(server_addr)
    })?;
    let settings = Settings {
        pings,
        train: u32::try_from(train).unwrap_or(u32::MAX),
        patience: timeout.max(Duration::from_secs(1)),
        ..Settings::default()
    };
    let stop = AtomicBool::new(false);
    let (served, measured) = std::thread::scope(|s| {
        let served = s.spawn(|| {
            raise_priority();
            probe::serve(&server, settings.patience, &stop)
        });
        let measured = s
            .spawn(|| {
                raise_priority();
                probe::probe(prober, server_addr, &settings, || {})
            })
            .join();
        stop.store(true, Ordering::Relaxed);
        (served.join(), measured)
    });
    let join_failed = |who| Error::Measure(format!("the probe's {who} thread panicked"));
    let measured = measured.map_err(|_| join_failed("prober"))?;
    let m = measured.map_err(|e| Error::Measure(format!("the probe failed: {}", chain(&e))))?;
    if let Err(e) = served.map_err(|_| join_failed("server"))? {
        return Err(Error::Measure(format!(
            "the probe server failed: {}",
            chain(&e)
        )));
    }
    Ok(Measurement {
        rtt_ms_min: m.rtt_ms_min,
        rtt_ms_median: m.rtt_ms_median,
        train_sent: u64::from(m.train_sent),
        train_received: u64::from(m.train_received),
        bandwidth_mbps: m.bandwidth_mbps,
    })
}

/// An error with its causes, `: `-separated.
fn chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        s.push_str(&format!(": {c}"));
        cause = c.source();
    }
    s
}

/// Nice -10 for the calling thread, where allowed (as for the relay): the server's receive
/// times are the measurement, and other work on a small machine would stretch them.
fn raise_priority() {
    let tid = rustix::thread::gettid();
    let _ = rustix::process::setpriority_process(Some(tid), -10);
}

/// Compares a measurement with the topology's link.
pub fn check(topo: &Topology, m: &Measurement) -> Vec<Verdict> {
    let link = topo.link();
    let mut v = Vec::new();
    let ping_ser =
        link.a_to_b.serialization(PING_IP_BYTES) + link.b_to_a.serialization(PING_IP_BYTES);
    let rtt = (link.rtt() + ping_ser).as_secs_f64() * 1e3;
    let tol = rtt * 0.05 + 0.3;
    v.push(Verdict {
        what: "rtt",
        expected: rtt,
        range: (rtt - tol, rtt + tol),
        measured: m.rtt_ms_median,
        unit: "ms",
        pass: (m.rtt_ms_median - rtt).abs() <= tol,
    });
    if m.train_sent > 0 {
        let p = link.a_to_b.loss;
        let (lo, hi) = binomial_bounds(m.train_sent, p, 1e-6);
        let lost = m.train_sent.saturating_sub(m.train_received);
        let pct = |k: u64| k as f64 / m.train_sent as f64 * 100.0;
        v.push(Verdict {
            what: "loss",
            expected: p * 100.0,
            range: (pct(lo), pct(hi)),
            measured: pct(lost),
            unit: "%",
            pass: (lo..=hi).contains(&lost),
        });
    }
    if let Some(rate) = link.a_to_b.rate_bps {
        let want = rate as f64 / 1e6;
        let got = m.bandwidth_mbps.unwrap_or(0.0);
        v.push(Verdict {
            what: "rate",
            expected: want,
            range: (want * 0.9, want * 1.1),
            measured: got,
            unit: "Mbit/s",
            pass: (got - want).abs() <= want * 0.1,
        });
    }
    v
}

/// The smallest `lo` and largest `hi` with P(X < lo) ≤ α/2 and P(X > hi) ≤ α/2 for
/// X ~ Binomial(n, p): a count of losses outside `lo..=hi` has probability at most α.
pub fn binomial_bounds(n: u64, p: f64, alpha: f64) -> (u64, u64) {
    if p <= 0.0 {
        return (0, 0);
    }
    // log P(X = k) by the recurrence P(k+1) = P(k) (n-k)/(k+1) p/(1-p), in log space.
    let mut log_pk = n as f64 * (1.0 - p).ln();
    let ratio = (p / (1.0 - p)).ln();
    let mut pmf = Vec::with_capacity(n as usize + 1);
    for k in 0..=n {
        pmf.push(log_pk.exp());
        log_pk += ((n - k) as f64).ln() - ((k + 1) as f64).ln() + ratio;
    }
    let half = alpha / 2.0;
    let (mut lo, mut below) = (0u64, 0.0);
    while lo <= n && below + pmf[lo as usize] <= half {
        below += pmf[lo as usize];
        lo += 1;
    }
    let (mut hi, mut above) = (n, 0.0);
    while hi > 0 && above + pmf[hi as usize] <= half {
        above += pmf[hi as usize];
        hi -= 1;
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_bounds_match_known_tails() {
        // 1 % of 2000: mean 20, sd 4.45.
        let (lo, hi) = binomial_bounds(2000, 0.01, 1e-6);
        assert!((2..=5).contains(&lo), "{lo}");
        assert!((42..=48).contains(&hi), "{hi}");
        assert_eq!(binomial_bounds(2000, 0.0, 1e-6), (0, 0));
        // Wider alpha, narrower range.
        let (lo2, hi2) = binomial_bounds(2000, 0.01, 0.05);
        assert!(lo2 > lo && hi2 < hi && (11..=13).contains(&lo2) && (28..=30).contains(&hi2));
    }
}
