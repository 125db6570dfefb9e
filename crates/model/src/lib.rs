//! The completion-time model behind `--transport auto`: how long a 2PC session takes, from
//! the evaluator's first connection attempt to its output, over each transport on a path of
//! measured round-trip time, loss and bottleneck rate; which transport to choose when the
//! loss is only known to lie below a bound; and the refit of the model's constants from
//! measured runs.
//!
//! The crate is pure arithmetic (no I/O, no clock), so that a decision can be replayed
//! from recorded measurements and tested exactly. Each transport describes itself with a
//! [`TransportModel`] (its transport module declares it, so a new transport joins the
//! prediction without any change here); the session's traffic is a [`Workload`] (the
//! 2PC crate derives it from the circuit, the scheme and the message flow).
//! docs/transport-model.md explains the model with its sources, a worked example and its
//! measured fit.
//!
//! # The model
//!
//! A fresh session's time to the output over transport `t`, on a path of round-trip time
//! `R`, bottleneck rate `C` and loss `p`:
//!
//! ```text
//! T(t) = T0_t + max(T_setup, N_conn(t)·R) + N_wait·R + Σ_bulk D_t(bytes)
//! ```
//!
//! - `N_conn`: the round trips the transport spends connecting (TCP 1, QUIC 1 with its
//!   TLS 1.3 handshake, UDT 2, `mtcp` one per connection plus one). The evaluator loads and
//!   plans the circuit (`T_setup`) while it connects.
//! - `N_wait`: the protocol's own round trips before the bulk messages (one in protocol
//!   version 6: the headers and the base OT).
//! - `D_t(B)`: the delivery of one bulk message of `B` bytes on a cold window, first byte
//!   sent to last byte received: round-by-round slow start from the initial window
//!   (Cardwell, Savage and Anderson, "Modeling TCP latency", INFOCOM 2000), growing by a
//!   factor `g` per round trip, until the window holds the path's pipe `r·R` — the paper's
//!   rule that the window stops limiting once `W·t > R` (§4.1) — then the steady rate
//!
//!   ```text
//!   r = min(σ·C, window/R, r_loss(p), H_t)
//!   ```
//!
//!   where `window` is the flow-control or socket buffer (sized as the paper's §4.2
//!   says), `σ` the share of a clean link the controller holds (1 but for a BBR that
//!   paces below its estimate, such as quinn's), `H_t` the host's own ceiling for the
//!   transport (CPU, pacing), and `r_loss` the
//!   congestion controller's response to random loss: Reno `√(3/(2p))` packets a round
//!   trip (Mathis et al. 1997), CUBIC `1.054·(R/p)^¾` packets (RFC 9438 §5.1: with
//!   `R` in seconds it falls as `p^-¾` and collapses on long lossy paths), BBR the link
//!   rate `σ·C·(1 − p)` up to `p ≈ 20 %` (its rate, not its window, answers loss), a
//!   rate-based controller such as UDT's `C / (1 + k·√p)`. Slow start ends at the first
//!   loss for the loss-based controllers (after about `1/p` packets) and, without loss,
//!   where HyStart leaves it (a fraction of the pipe). Half a round trip of propagation,
//!   BBR's paced start-up lag and a tail repair (a round trip or more when the message lost
//!   a packet) complete `D`.
//!
//! Every constant that is not physics (`T0`, `g`, the start-up lag, the tail, the loss
//! multiplier, the HyStart exit, `σ`, `H_t`) is a [`Constants`] entry under the transport's
//! calibration key, with a default its module declares; [`fit`] refits them from measured
//! runs. The host's garbling pipeline rate is a [`HostConstants`] entry, which [`fit`]
//! keeps as it starts.
//!
//! # Choosing under an uncertain loss rate
//!
//! A short probe cannot tell 0 % from 0.1 % loss, and a loss-based controller is ten times
//! slower at the second on a long path. [`choose`] predicts every candidate at the loss
//! estimate and at its upper confidence bound and picks the one whose worse ratio to the
//! best candidate at that loss is smallest (minimax regret): a loss-tolerant transport
//! costs little when the path is clean, a loss-sensitive one a great deal when it is not.

mod choose;
mod constants;
mod fit;
mod path;
mod predict;
mod transport;
mod workload;

pub use choose::{
    choose, Candidate, Decision, Ranked, CAUTION, FALLBACK_AT_BOUND, FALLBACK_AT_ESTIMATE,
    LEAVE_AT_BOUND, LEAVE_AT_ESTIMATE, LEAVE_SECONDS,
};
pub use constants::{Calibration, Constants, HostConstants, Provenance};
pub use fit::{fit, CellFit, FitReport, KeyFit, Observation};
pub use path::Path;
pub use predict::{predict, Conditions, Delivery, Limit, Prediction, Unsuitable};
pub use transport::{Control, FirstFlightStall, TransportModel, Window};
pub use workload::{Bulk, Sender, Workload};

#[cfg(test)]
mod tests;
