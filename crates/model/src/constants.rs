//! The model's calibrated constants: one [`Constants`] per calibration key (a transport and
//! its congestion control), the host's own ([`HostConstants`]), and where they were fitted.
//! A [`Calibration`] is what `transputation select --calibrate` writes and the selector
//! reads; keys it lacks fall back to the defaults their transports declare.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The constants of one calibration key.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Constants {
    /// A fixed cost per session (process, cryptography, TLS), seconds.
    pub fixed: f64,
    /// The window's growth per round trip in slow start (2 with an ACK per packet, 1.5
    /// with delayed ACKs).
    pub growth: f64,
    /// Where slow start ends on a lossless path, as a share of the pipe (HyStart leaves it
    /// early on long paths; 1 for controllers that fill the pipe).
    pub slow_start_exit: f64,
    /// Round trips a paced start-up adds to a message that needed slow start (BBR's
    /// STARTUP spreads each round over the round trip).
    pub startup_lag: f64,
    /// Round trips to repair a message that lost a packet.
    pub tail: f64,
    /// The multiplier on the loss response (window-based: on the window; rate-based: the
    /// `k` of `C / (1 + k·√p)`).
    pub loss_factor: f64,
    /// The host's ceiling for this transport, bytes per second (CPU, pacing; infinite when
    /// none was seen).
    #[serde(with = "finite_or_null")]
    pub host_cap: f64,
    /// The share of a clean bottleneck a BBR sender holds once past its start-up (1 for
    /// the kernel's; quinn's paces below the link it measured). Calibrations written before
    /// it existed read 1.
    #[serde(default = "one")]
    pub steady_share: f64,
    /// How far this key's predictions have been from measured runs: the root mean square
    /// of ln(predicted / measured) over a grid of testbed runs (for a calibration, held
    /// out by condition). The choice holds it against a transport ([`crate::choose`]).
    /// Calibrations written before it existed read 0.
    #[serde(default)]
    pub error: f64,
}

fn one() -> f64 {
    1.0
}

impl Constants {
    /// Textbook values: no fixed cost, doubling per round trip, no lag, a round trip of
    /// repair, the textbook loss response, no host ceiling, the whole link.
    pub const TEXTBOOK: Constants = Constants {
        fixed: 0.0,
        growth: 2.0,
        slow_start_exit: 1.0,
        startup_lag: 0.0,
        tail: 1.0,
        loss_factor: 1.0,
        host_cap: f64::INFINITY,
        steady_share: 1.0,
        error: 0.0,
    };
}

/// The host's constants, shared by every transport.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct HostConstants {
    /// Bytes of garbled tables a second that the garbler's pipeline (garble, send; receive,
    /// evaluate) sustains on this host.
    #[serde(with = "finite_or_null")]
    pub pipeline_rate: f64,
}

impl Default for HostConstants {
    fn default() -> Self {
        // The MinCut-size circuit's 32 MB of tables cross the loopback in 42-47 ms of
        // protocol time on the 2-vCPU machine of docs/BENCHMARKS.md (20-24 million AND
        // gates a second): about 700 MB/s. A calibration (`fit`) does not refit it.
        HostConstants {
            pipeline_rate: 700e6,
        }
    }
}

/// Where a calibration was fitted.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Provenance {
    /// The host name.
    pub host: String,
    /// Its CPU.
    pub cpu: String,
    /// The kernel's default TCP congestion control.
    pub host_cc: String,
    /// The commits of the runs fitted.
    pub commits: Vec<String>,
    /// When, in seconds since the Unix epoch.
    pub fitted_unix_s: u64,
    /// The runs fitted.
    pub runs: usize,
}

/// Fitted constants by key, and the host's.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Constants by calibration key.
    pub keys: BTreeMap<String, Constants>,
    /// The host's constants.
    pub host: HostConstants,
    /// Where they were fitted (none for the declared defaults).
    pub provenance: Option<Provenance>,
}

impl Calibration {
    /// The constants for `key`, or `defaults` if it was not fitted.
    pub fn constants(&self, key: &str, defaults: &Constants) -> Constants {
        self.keys.get(key).copied().unwrap_or(*defaults)
    }
}

/// JSON has no infinity: an infinite ceiling is written as `null`.
mod finite_or_null {
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        if v.is_finite() {
            s.serialize_f64(*v)
        } else {
            s.serialize_none()
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        Ok(Option::<f64>::deserialize(d)?.unwrap_or(f64::INFINITY))
    }
}
