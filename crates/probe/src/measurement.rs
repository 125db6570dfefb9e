//! [`Measurement`]: what a probe found, the JSON of `transputation probe --json` and of the
//! probe cache. Fields added after the first version default when absent, so JSON written
//! by an older build still reads.

use serde::{Deserialize, Serialize};

use crate::loss::LossEvidence;

/// What a prober measured (the JSON of `transputation probe --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Smallest round trip, ms.
    pub rtt_ms_min: f64,
    /// Median round trip, ms.
    pub rtt_ms_median: f64,
    /// Largest round trip, ms.
    pub rtt_ms_max: f64,
    /// Train packets lost, as a fraction of those sent (every loss, a queue's overflow
    /// included; [`loss_evidence`](Self::loss_evidence) has the random loss alone).
    pub loss_rate: f64,
    /// Rate of the train's arrivals (its dispersion), Mbit/s: the bottleneck's rate if the
    /// sender was faster. With several trains, the last (largest) train's that the server
    /// could time. `None` if fewer than two packets arrived, or (quick probe) the server
    /// read them as a backlog and not as they came, so that it could not time them (the
    /// full probe then falls back to the span of every read; see the crate docs).
    pub bandwidth_mbps: Option<f64>,
    /// Pings sent.
    pub pings_sent: u32,
    /// Pings answered.
    pub pings_answered: usize,
    /// Train packets sent (over all trains).
    pub train_sent: u32,
    /// Train packets the server received (over all trains).
    pub train_received: u32,
    /// Bytes per train packet (UDP payload).
    pub packet_bytes: usize,
    /// The evidence behind the random-loss estimate: the train packets sent before the
    /// bottleneck's queue overflowed (all of them if it did not) and how many of those
    /// were lost. Its [`upper_bound_95`](LossEvidence::upper_bound_95) says how much loss
    /// the probe could have missed. From a server that sends no arrival map (an older
    /// build), every train packet and every loss. In the probe cache, summed over the
    /// sessions that measured the peer.
    #[serde(default)]
    pub loss_evidence: LossEvidence,
    /// Train packets left out of the evidence because they were sent after the
    /// bottleneck's queue overflowed (see the crate docs); 0 if none overflowed.
    #[serde(default)]
    pub overflow_packets: u64,
    /// A rate the path certainly has, Mbit/s, by the prober's clock alone: a train's bytes
    /// over the time from its first packet's send to its report's arrival less the
    /// shortest round trip (the best of the trains). Close to the bottleneck's rate where
    /// the train takes long to pass it (a slow path, a long train), far below it where the
    /// send time and the wait before the report request dominate (a fast path), and it
    /// holds when the server's host is too busy to time the arrivals. From the quick probe
    /// only; `None` from the full probe.
    #[serde(default)]
    pub bandwidth_floor_mbps: Option<f64>,
    /// Trains sent and reported on.
    #[serde(default = "one")]
    pub trains: u32,
    /// Wall time of the probe once the server answered, ms: from the first ping it
    /// answered (the quick probe) or the first measured ping (the full probe) to the last
    /// report (0 in JSON from a build that did not record it).
    #[serde(default)]
    pub duration_ms: f64,
    /// Whether the server timed [`bandwidth_mbps`](Self::bandwidth_mbps)'s train by the
    /// kernel's receive times (Linux's `SO_TIMESTAMPNS`), which hold however late it read
    /// the packets: then the rate is exact to within the link's own jitter, where a rate
    /// timed by the server's reads may read the passage of a short train up to a few
    /// milliseconds long on a busy host. False from an older server or build.
    #[serde(default)]
    pub rate_kernel_timed: bool,
}

fn one() -> u32 {
    1
}

impl Measurement {
    /// The one-sided 95 % upper confidence bound on the random loss rate
    /// ([`LossEvidence::upper_bound_95`] of [`loss_evidence`](Self::loss_evidence)).
    pub fn loss_upper_bound_95(&self) -> f64 {
        self.loss_evidence.upper_bound_95()
    }

    /// The first field that is not a finite number, if any (JSON has no NaN or infinity,
    /// so such a measurement would not read back).
    pub(crate) fn non_finite_field(&self) -> Option<(&'static str, f64)> {
        [
            ("rtt_ms_min", self.rtt_ms_min),
            ("rtt_ms_median", self.rtt_ms_median),
            ("rtt_ms_max", self.rtt_ms_max),
            ("loss_rate", self.loss_rate),
            ("bandwidth_mbps", self.bandwidth_mbps.unwrap_or(0.0)),
            (
                "bandwidth_floor_mbps",
                self.bandwidth_floor_mbps.unwrap_or(0.0),
            ),
            ("duration_ms", self.duration_ms),
        ]
        .into_iter()
        .find(|(_, v)| !v.is_finite())
    }
}
