//! What a transport declares about itself for the model: how it connects, how large its
//! packets and first window are, how its congestion control answers loss, what bounds its
//! window, and the default constants of its calibration key. Each transport module builds
//! one from its options (`Family::model` in the transport crate).

use serde::{Deserialize, Serialize};

use crate::Constants;

/// How a transport's sender sets its rate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Control {
    /// Reno or NewReno: the window halves on a loss, `√(3/(2p))` packets a round trip on
    /// average (Mathis et al. 1997).
    Reno,
    /// CUBIC (RFC 9438): `max(1.054·(R/p)^¾, √(3/(2p)))` packets a round trip; slow
    /// start ends at the first loss or where HyStart leaves it.
    Cubic,
    /// BBR (v1): paced at the measured bottleneck rate, which random loss below about
    /// 20 % does not lower.
    Bbr,
    /// A rate-based controller (UDT's DAIMD): raises its rate on a timer, cuts it on a loss
    /// report; `C / (1 + k·√p)`.
    RateBased,
    /// A fixed pacing rate in bytes per second and no repair: any loss fails the session
    /// (`udp`), and a rate above the link's loses packets.
    Paced {
        /// The pacing rate, bytes per second.
        rate: f64,
    },
}

impl Control {
    /// Whether the transport repairs loss (every byte arrives on a lossy path).
    pub fn repairs_loss(&self) -> bool {
        !matches!(self, Control::Paced { .. })
    }

    /// A short name for listings.
    pub fn name(&self) -> &'static str {
        match self {
            Control::Reno => "reno",
            Control::Cubic => "cubic",
            Control::Bbr => "bbr",
            Control::RateBased => "rate-based",
            Control::Paced { .. } => "paced",
        }
    }
}

/// What bounds the bytes in flight besides congestion control.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Window {
    /// Kernel socket buffers of the session's configured size; the kernel keeps part of a
    /// receive buffer for itself, so the window is this share of it.
    SocketBuffer {
        /// The share of the buffer that is window (Linux advertises about half).
        share: f64,
    },
    /// A flow-control window of this many bytes (the transport's own).
    Bytes(f64),
    /// Nothing beyond congestion control.
    Unbounded,
}

/// A transport as the model sees it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TransportModel {
    /// The key of its calibrated constants (`tcp/cubic`, `quic/bbr`, `udt`): transports
    /// that behave alike share one.
    pub key: String,
    /// Round trips to connect, before the first byte of the protocol can go.
    pub connect_round_trips: f64,
    /// Payload bytes per packet.
    pub segment: f64,
    /// The first congestion window of one connection, bytes.
    pub initial_window: f64,
    /// Parallel connections carrying one stream (1 but for `mtcp`).
    pub streams: u32,
    /// Bytes per stripe when several connections carry one stream: a message of `B`
    /// bytes uses `min(streams, ⌈B/stripe⌉)` of them.
    pub stripe: f64,
    /// The congestion control.
    pub control: Control,
    /// The window bound.
    pub window: Window,
    /// The most gaps its receiver's reassembly buffer holds before it fails the
    /// connection (quinn's 1,024 pieces of a stream), if it has such a limit.
    pub reassembly_limit: Option<f64>,
    /// A sender that paces sends a window over the round trip at this many times
    /// `window / RTT` (quinn: 1.25) rather than at the link's rate; `None`: it bursts.
    pub pacing_gain: Option<f64>,
    /// A pacing sender whose controller stalls when a message's first flight is still
    /// being paced out some time after it began (quinn's BBR; see [`FirstFlightStall`]);
    /// `None` for the others.
    #[serde(default)]
    pub first_flight_stall: Option<FirstFlightStall>,
    /// A limit on long streams over a large window (quinn's BBR, see
    /// [`crate::predict`]'s reassembly check): the product of the packets in flight (the
    /// path's bandwidth-delay product) and the round trips a message lasts above which
    /// its receiver's reassembly limit was exceeded; `None` where none was seen.
    #[serde(default)]
    pub long_stream_gaps: Option<f64>,
    /// The constants to use where no calibration covers [`Self::key`].
    pub defaults: Constants,
}

/// A controller's stall in a message's first flight: if its first acknowledgements come
/// back while some of the message still waits (it is larger than the first window, or
/// the pacer takes longer than a round trip to release it), the message is late by `cost`
/// seconds and a round trip, or by what the rest takes at `min_window` bytes a round trip
/// if that is less.
///
/// quinn-proto 0.11's BBR has one: its ProbeRTT timer starts unset and counts as expired,
/// so the first acknowledgement it processes while data waits (held by the window or the
/// pacer) puts it in ProbeRTT, whose window is 0.75 of the bandwidth estimate times the
/// minimum round trip (at least 4 packets), for 200 ms and a round trip; with an estimate
/// made of the small messages before the tables, that is the 4 packets. quinn's pacer
/// spreads a window over its smoothed round trip, which after the handshake exceeds the
/// path's (`srtt_excess`, fitted): the first flight of `B` bytes in a window `W` takes
/// `B/(1.25·W) × (R + srtt_excess)`. Measured on the testbed (clean, 500 Mbit/s unless
/// said): at 50 ms, 593 kB of tables under `quic:cc=bbr,iw=717463` arrive in 350–378 ms,
/// under `quic:cc=cubic,iw=717463` in 103–107 ms, under either with `iw=3125000` in
/// 63–65 ms; at 5 ms, AES-128's 205 kB under `quic:cc=bbr` (quinn's 240 kB window) took
/// 60 and 166 ms to the output in two runs, under `iw=312500` 34–38 ms in four and 118 in
/// a fifth, against 33–39 ms over `quic:cc=cubic,iw=250000`; at 300 ms the same 205 kB
/// showed no stall (829 ms of protocol time); on a 0.5 ms LAN, 48 ms under a 31 kB BBR
/// window against 23 under cubic with 25 kB, not 200 more (4 packets a round trip carry
/// the rest sooner). On slower bottlenecks it hardly came (`min_rate`): in the grid of
/// docs/results/auto (2026-11-27), the 58 runs of `quic:cc=bbr,iw=BDP` on links of
/// 50 Mbit/s or less that the rule called stalled were predicted with an rms log error of
/// quinn's BBR over all its cells of 0.526 with the stall and 0.464 without (AES-128's
/// `prf` tables at 50 ms and 50 Mbit/s took 306–389 ms to the output, predicted 537–715
/// with it and 287–465 without), where at 500 Mbit/s the same windows stalled.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct FirstFlightStall {
    /// Seconds by which the pacer's round trip exceeds the path's.
    pub srtt_excess: f64,
    /// Seconds the stall adds besides a round trip, at most.
    pub cost: f64,
    /// Bytes a round trip while stalled.
    pub min_window: f64,
    /// The slowest bottleneck, bytes per second, on which the stall comes (0: any).
    #[serde(default)]
    pub min_rate: f64,
}

impl TransportModel {
    /// The connections a message of `bytes` uses.
    pub fn streams_for(&self, bytes: f64) -> f64 {
        let stripes = (bytes / self.stripe.max(1.0)).ceil().max(1.0);
        f64::from(self.streams.max(1)).min(stripes)
    }
}
