//! Buffer sizing from the path and the volume to send (paper §4.2).
//!
//! A transport fills a path only if one direction's buffering (kernel socket buffers,
//! flow-control windows) holds at least the bandwidth-delay product (BDP): the bytes in
//! flight during one round trip. Less, and the window, not the link, sets the rate; much
//! more than the transfer itself buys nothing and costs memory. [`size_buffers`] picks the
//! per-direction size that [`crate::Config::buffer_bytes`] takes:
//!
//! ```text
//! bdp    = bandwidth × rtt
//! buffer = clamp(min(HEADROOM × bdp, volume + SLACK), MIN_BUFFER, MAX_BUFFER)
//! ```
//!
//! [`HEADROOM`] is 2: the kernel keeps part of a socket buffer for its own bookkeeping
//! (Linux advertises roughly half to two-thirds of a receive buffer as TCP window), a
//! congestion controller probes above the BDP (BBR's gain is 1.25), and a receiver that
//! pauses must not stall the sender at once. The volume cap adds [`SLACK`] for framing
//! and transport headers.
//!
//! # The paper's bound
//!
//! The paper (§4.2) limits what is sent in one window, given a receive buffer of `B`
//! bytes into which data arrives at `R_arrival` (the rate the network delivers: the
//! bottleneck bandwidth unless measured otherwise) and from which the application reads
//! at `R_read` (its depletion rate), to the sum of the geometric series
//! `B · Σ (R_arrival/R_read)^k`, that is
//!
//! ```text
//! L = B / (1 − R_arrival/R_read)
//! ```
//!
//! The series converges only when `R_arrival < R_read`; when `R_read ≤ R_arrival` it
//! diverges and the formula gives no bound ([`Sizing::paper_bound_bytes`] is `None`).
//! Taken as a fill-up argument the ratio reads the other way round: a burst arriving at
//! `R_arrival` into `B` drained at `R_read < R_arrival` overflows after
//! `B / (1 − R_read/R_arrival)` bytes, and never when `R_read ≥ R_arrival`. Both are
//! computed ([`Sizing::fill_bound_bytes`] is the second) so callers can print them side by
//! side; neither changes the chosen buffer, which the BDP and the volume set.

use std::time::Duration;

/// Buffer bytes per byte of bandwidth-delay product.
pub const HEADROOM: u64 = 2;
/// Bytes allowed beyond the volume itself, for framing and transport headers.
pub const SLACK: u64 = 64 << 10;
/// The smallest buffer chosen: 64 KiB.
pub const MIN_BUFFER: u64 = 64 << 10;
/// The largest buffer chosen: 256 MiB.
pub const MAX_BUFFER: u64 = 256 << 20;

/// What is known of the path, from a probe or the user.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PathEstimate {
    /// The round-trip time.
    pub rtt: Duration,
    /// The bottleneck bandwidth, bits per second.
    pub bandwidth_bps: u64,
    /// `R_arrival`: the rate data arrives at the receiver's buffer, bits per second
    /// (`None`: the bottleneck bandwidth).
    pub arrival_bps: Option<u64>,
    /// `R_read`: the rate the receiving application drains its buffer, bits per second
    /// (`None`: unknown, and the paper's bound is not computed).
    pub read_bps: Option<u64>,
}

/// The chosen sizes, with the inputs they came from; every field is a plain number so
/// that callers can print or serialize them.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sizing {
    /// The round-trip time, milliseconds (input).
    pub rtt_ms: f64,
    /// The bottleneck bandwidth, bits per second (input).
    pub bandwidth_bps: u64,
    /// The bytes the transfer will move in this direction (input).
    pub volume_bytes: u64,
    /// `R_arrival`, bits per second (input, or the bandwidth).
    pub arrival_bps: u64,
    /// `R_read`, bits per second (input), if known.
    pub read_bps: Option<u64>,
    /// The bandwidth-delay product, bytes.
    pub bdp_bytes: u64,
    /// [`HEADROOM`] × the bandwidth-delay product, bytes.
    pub wanted_bytes: u64,
    /// The chosen per-direction buffer, bytes: [`crate::Config::buffer_bytes`].
    pub buffer_bytes: u64,
    /// What limited the choice.
    pub limited_by: Limit,
    /// The paper's `L = B / (1 − R_arrival/R_read)` with `B` = [`Sizing::buffer_bytes`]:
    /// `None` when `R_read` is unknown or `R_read ≤ R_arrival` (no bound).
    pub paper_bound_bytes: Option<u64>,
    /// The bytes that can arrive in one burst before `B` overflows,
    /// `B / (1 − R_read/R_arrival)`: `None` when `R_read` is unknown or
    /// `R_read ≥ R_arrival` (it never overflows).
    pub fill_bound_bytes: Option<u64>,
}

/// Which rule set [`Sizing::buffer_bytes`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    /// [`HEADROOM`] × the bandwidth-delay product.
    Bdp,
    /// The volume plus [`SLACK`]: the whole transfer fits.
    Volume,
    /// [`MIN_BUFFER`].
    Minimum,
    /// [`MAX_BUFFER`].
    Maximum,
}

impl Limit {
    /// A short name for reports: `bdp`, `volume`, `minimum` or `maximum`.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::Bdp => "bdp",
            Limit::Volume => "volume",
            Limit::Minimum => "minimum",
            Limit::Maximum => "maximum",
        }
    }
}

/// Chooses the per-direction buffer for moving `volume_bytes` over `path`.
pub fn size_buffers(path: &PathEstimate, volume_bytes: u64) -> Sizing {
    // bits/s × ns / (8 bits × 1e9 ns/s), rounded up, in integers: exact for known answers.
    let bdp = (u128::from(path.bandwidth_bps) * path.rtt.as_nanos()).div_ceil(8_000_000_000);
    let bdp_bytes = u64::try_from(bdp).unwrap_or(u64::MAX);
    let wanted_bytes = bdp_bytes.saturating_mul(HEADROOM);
    let by_volume = volume_bytes.saturating_add(SLACK);
    let (mut buffer, mut limited_by) = if wanted_bytes <= by_volume {
        (wanted_bytes, Limit::Bdp)
    } else {
        (by_volume, Limit::Volume)
    };
    if buffer < MIN_BUFFER {
        (buffer, limited_by) = (MIN_BUFFER, Limit::Minimum);
    } else if buffer > MAX_BUFFER {
        (buffer, limited_by) = (MAX_BUFFER, Limit::Maximum);
    }
    let arrival = path.arrival_bps.unwrap_or(path.bandwidth_bps);
    let (paper, fill) = match path.read_bps {
        Some(read) => bounds(buffer, arrival, read),
        None => (None, None),
    };
    Sizing {
        rtt_ms: path.rtt.as_secs_f64() * 1e3,
        bandwidth_bps: path.bandwidth_bps,
        volume_bytes,
        arrival_bps: arrival,
        read_bps: path.read_bps,
        bdp_bytes,
        wanted_bytes,
        buffer_bytes: buffer,
        limited_by,
        paper_bound_bytes: paper,
        fill_bound_bytes: fill,
    }
}

/// The paper's bound and the fill-up bound for a buffer of `b` bytes.
fn bounds(b: u64, arrival: u64, read: u64) -> (Option<u64>, Option<u64>) {
    let b = b as f64;
    let (a, r) = (arrival as f64, read as f64);
    // L = B / (1 − a/r), finite only for a < r.
    let paper = (a < r).then(|| to_u64(b / (1.0 - a / r)));
    // B / (1 − r/a), finite only for r < a.
    let fill = (r < a).then(|| to_u64(b / (1.0 - r / a)));
    (paper, fill)
}

/// Rounds a non-negative byte count up, saturating at `u64::MAX`.
fn to_u64(x: f64) -> u64 {
    if x.is_finite() && x < u64::MAX as f64 {
        x.ceil().max(0.0) as u64
    } else {
        u64::MAX
    }
}

/// A rate in bits per second as the transports' options write it: digits with an optional
/// unit `bit`, `kbit`, `mbit` or `gbit` (decimal, as in tc), from 8 kbit to 1000 gbit;
/// `None` for anything else, including `unlimited` and 0.
pub fn parse_rate(s: &str) -> Option<u64> {
    crate::family::parse_rate(s).filter(|&r| r > 0)
}

/// The kernel's caps on socket buffers a process may ask for without privilege
/// (net.core.rmem_max and net.core.wmem_max, bytes), if readable. Asking for more is
/// silently capped unless the process may force it (CAP_NET_ADMIN).
pub fn kernel_buffer_caps() -> Option<(u64, u64)> {
    let read = |name: &str| {
        std::fs::read_to_string(format!("/proc/sys/net/core/{name}"))
            .ok()?
            .trim()
            .parse()
            .ok()
    };
    Some((read("rmem_max")?, read("wmem_max")?))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(rtt_ms: u64, mbit: u64) -> PathEstimate {
        PathEstimate {
            rtt: Duration::from_millis(rtt_ms),
            bandwidth_bps: mbit * 1_000_000,
            arrival_bps: None,
            read_bps: None,
        }
    }

    #[test]
    fn the_bdp_sets_the_buffer_for_a_large_volume() {
        // 100 Mbit/s × 100 ms = 12.5 MB in flight; twice that buffered.
        let s = size_buffers(&path(100, 100), 1 << 30);
        assert_eq!(s.bdp_bytes, 1_250_000);
        assert_eq!(s.wanted_bytes, 2_500_000);
        assert_eq!(s.buffer_bytes, 2_500_000);
        assert_eq!(s.limited_by, Limit::Bdp);
        assert_eq!((s.rtt_ms, s.arrival_bps), (100.0, 100_000_000));
        assert_eq!((s.paper_bound_bytes, s.fill_bound_bytes), (None, None));
        // 1 Gbit/s × 300 ms = 37.5 MB (the paper's EU–AUS link, its §7.2).
        let s = size_buffers(&path(300, 1000), 1 << 30);
        assert_eq!(s.bdp_bytes, 37_500_000);
        assert_eq!(s.buffer_bytes, 75_000_000);
    }

    #[test]
    fn a_small_volume_caps_the_buffer_and_bounds_clamp_it() {
        // 1 Gbit/s × 100 ms wants 25 MB, but the transfer is 1 MiB.
        let s = size_buffers(&path(100, 1000), 1 << 20);
        assert_eq!(s.buffer_bytes, (1 << 20) + SLACK);
        assert_eq!(s.limited_by, Limit::Volume);
        // Loopback-like: 10 Gbit/s × 50 µs = 62.5 kB, doubled: 125 kB.
        let s = size_buffers(
            &PathEstimate {
                rtt: Duration::from_micros(50),
                ..path(0, 10_000)
            },
            1 << 30,
        );
        assert_eq!((s.bdp_bytes, s.buffer_bytes), (62_500, 125_000));
        // Tiny paths and empty transfers get the minimum, huge ones the maximum.
        let s = size_buffers(&path(1, 1), 0);
        assert_eq!((s.bdp_bytes, s.buffer_bytes), (125, MIN_BUFFER));
        assert_eq!(s.limited_by, Limit::Minimum);
        let s = size_buffers(&path(10_000, 1_000_000), u64::MAX);
        assert_eq!((s.buffer_bytes, s.limited_by), (MAX_BUFFER, Limit::Maximum));
        assert_eq!(s.volume_bytes, u64::MAX);
    }

    #[test]
    fn the_papers_bound_converges_only_when_reading_is_faster() {
        let with = |arrival: Option<u64>, read: u64| PathEstimate {
            arrival_bps: arrival,
            read_bps: Some(read),
            ..path(100, 100)
        };
        // B = 2.5 MB, R_arrival = 100 Mbit/s, R_read = 400 Mbit/s:
        // L = 2.5 MB / (1 − 1/4) = 3,333,334 bytes (rounded up); never fills.
        let s = size_buffers(&with(None, 400_000_000), 1 << 30);
        assert_eq!(s.paper_bound_bytes, Some(3_333_334));
        assert_eq!(s.fill_bound_bytes, None);
        // R_read = R_arrival: the series diverges and the buffer never fills.
        let s = size_buffers(&with(None, 100_000_000), 1 << 30);
        assert_eq!((s.paper_bound_bytes, s.fill_bound_bytes), (None, None));
        // R_read = 50 < R_arrival = 100 Mbit/s: no paper bound; a burst overflows B after
        // B / (1 − 1/2) = 5 MB.
        let s = size_buffers(&with(None, 50_000_000), 1 << 30);
        assert_eq!(s.paper_bound_bytes, None);
        assert_eq!(s.fill_bound_bytes, Some(5_000_000));
        // An arrival rate below the bandwidth is taken as given: 25 of 100 Mbit/s read.
        let s = size_buffers(&with(Some(25_000_000), 100_000_000), 1 << 30);
        assert_eq!(s.arrival_bps, 25_000_000);
        assert_eq!(s.paper_bound_bytes, Some(3_333_334));
        // A reader that does not read: no paper bound; the buffer is all there is.
        let s = size_buffers(&with(None, 0), 1 << 30);
        assert_eq!(
            (s.paper_bound_bytes, s.fill_bound_bytes),
            (None, Some(2_500_000))
        );
    }

    #[test]
    fn rates_parse_as_the_transport_options_do() {
        assert_eq!(parse_rate("100mbit"), Some(100_000_000));
        assert_eq!(parse_rate("2gbit"), Some(2_000_000_000));
        assert_eq!(parse_rate("64kbit"), Some(64_000));
        assert_eq!(parse_rate("unlimited"), None);
        assert_eq!(parse_rate("0"), None);
        assert_eq!(parse_rate("fast"), None);
    }

    #[test]
    fn limits_have_names() {
        let names: Vec<_> = [Limit::Bdp, Limit::Volume, Limit::Minimum, Limit::Maximum]
            .iter()
            .map(|l| l.as_str())
            .collect();
        assert_eq!(names, ["bdp", "volume", "minimum", "maximum"]);
    }
}
