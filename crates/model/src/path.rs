//! What is known of the path between the two parties: the figures a probe measures (or a
//! user gives to `select --simulate`), in SI units.

use serde::{Deserialize, Serialize};

/// A path's round-trip time, bottleneck rate and loss.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Path {
    /// The round-trip time without queueing, seconds.
    pub rtt: f64,
    /// The bottleneck rate, bytes per second.
    pub rate: f64,
    /// The loss rate per packet, the best estimate.
    pub loss: f64,
    /// An upper confidence bound on the loss rate (equal to `loss` when it is known
    /// exactly, as in a simulation).
    pub loss_upper: f64,
    /// The bottleneck's queue, bytes, if known.
    pub queue: Option<f64>,
}

impl Path {
    /// A path whose loss is known exactly.
    pub fn exact(rtt: f64, rate: f64, loss: f64) -> Path {
        Path {
            rtt,
            rate,
            loss,
            loss_upper: loss,
            queue: None,
        }
    }

    /// The bandwidth-delay product, bytes: what one round trip holds in flight.
    pub fn bdp(&self) -> f64 {
        self.rate * self.rtt
    }

    /// The same path at loss rate `p` (known exactly).
    pub fn at_loss(&self, p: f64) -> Path {
        Path {
            loss: p,
            loss_upper: p,
            ..*self
        }
    }

    /// Why the figures cannot describe a path, if they cannot.
    pub fn check(&self) -> Result<(), String> {
        if !(self.rtt.is_finite() && self.rtt >= 0.0) {
            return Err(format!("round-trip time {} s is not a time", self.rtt));
        }
        if !(self.rate.is_finite() && self.rate > 0.0) {
            return Err(format!("rate {} B/s is not a positive rate", self.rate));
        }
        for (what, p) in [("loss", self.loss), ("loss bound", self.loss_upper)] {
            if !(0.0..1.0).contains(&p) {
                return Err(format!("{what} {p} is not a fraction below 1"));
            }
        }
        if self.loss_upper < self.loss {
            return Err("the loss bound is below the loss estimate".into());
        }
        Ok(())
    }
}
