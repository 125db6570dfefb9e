//! `--transport auto`: the two parties agree on the transport that the completion-time
//! model (`transputation-model`) predicts fastest to the output for this circuit on this
//! path, and confirm the agreement inside the protected session's handshake.
//!
//! # The agreement
//!
//! 1. The evaluator knows the path: from its cache of earlier sessions with this garbler,
//!    or by probing the garbler's UDP port (round-trip time, loss with its upper
//!    confidence bound, bottleneck rate: `transputation-probe`), while it loads its circuit.
//! 2. It sends an [`Offer`] to the same port: the transport settings it can run on that
//!    path (the registry's candidates, `transputation_transport::auto`), the path, the
//!    circuit's digest and the scheme.
//! 3. The garbler decides ([`Planner`]): its own candidates that the evaluator offered,
//!    predicted for the circuit's traffic and ranked by minimax regret over the loss
//!    estimate and its bound. It listens for the choice on a port of its own, built with
//!    the chosen options, and replies with a [`Decision`]: the transport, its port, the
//!    buffer both use (paper §4.2), the prediction and one line on why. The garbler
//!    decides because it sends the bulk of the bytes and may serve many evaluators under
//!    one policy; one decider means the parties cannot disagree.
//! 4. The evaluator connects over the choice. If it cannot, it offers again without it
//!    (a warning on standard error), and the garbler chooses the next best.
//! 5. The protected session's handshake mixes [`wire::binding`] (the session number and
//!    the digests of the exact offer and reply) into its prologue, which Noise hashes into
//!    every key (Noise §6). A stranger who answers the evaluator in the garbler's place
//!    with another choice, or changes the offer on its way, makes the two bindings differ:
//!    the garbler refuses the evaluator's first handshake message and sends nothing. At
//!    worst a stranger on the path denies the session, as it could by dropping packets;
//!    it cannot make the parties run a transport the garbler did not choose, and the
//!    choice only ever affects speed, never what is computed. Without protection
//!    (`--protection none`) nothing is authenticated, the choice included.
//!
//! The offer and the reply are UDP datagrams ([`wire`]), sent again after a few round
//! trips while no reply comes; a garbler answers a repeated offer with the same reply.

mod client;
mod decide;
mod service;
pub mod wire;

pub use client::{Agreement, Negotiation};
pub use decide::{buffer_for, Plan, Planner};
pub use service::{Connected, Service};
pub use wire::{Decision, Offer};

use std::net::SocketAddr;
use std::time::Duration;

use transputation_model::Path;
use transputation_probe::Measurement;

/// The model's path from a probe's measurement: the smallest round trip, the rate the
/// server timed (else the rate the path certainly has, by the prober's clock), the random
/// loss and its 95 % upper bound; why not, if the probe measured no rate.
pub fn path_of(m: &Measurement) -> Result<Path, String> {
    let Some(mbps) = m
        .bandwidth_mbps
        .or(m.bandwidth_floor_mbps)
        .filter(|r| *r > 0.0)
    else {
        return Err("the probe measured no rate (fewer than two train packets arrived)".into());
    };
    let path = Path {
        rtt: m.rtt_ms_min / 1e3,
        rate: mbps * 1e6 / 8.0,
        loss: m.loss_evidence.rate(),
        loss_upper: m.loss_upper_bound_95().max(m.loss_evidence.rate()),
        queue: None,
    };
    path.check()?;
    Ok(path)
}

/// What can go wrong agreeing on a transport.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A socket operation failed.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// No garbler answered the offer.
    #[error(
        "no answer from a garbler at {addr} for {patience:?} (is a garbler with --transport \
         auto listening there, and does UDP reach it?)"
    )]
    NoService {
        /// Where the offer went.
        addr: SocketAddr,
        /// How long it was sent.
        patience: Duration,
    },
    /// The garbler refused the session.
    #[error("the garbler refused the session: {0}")]
    Refused(String),
    /// The garbler chose a transport the evaluator did not offer.
    #[error("the garbler's answer names {0}, which this evaluator did not offer")]
    NotOffered(String),
    /// The offer does not fit in a datagram.
    #[error("the offer does not fit in one datagram")]
    OfferTooLarge,
    /// No offered transport connected.
    #[error("could not connect with {transport}, the last choice left")]
    Connect {
        /// The transport.
        transport: String,
        /// Why.
        #[source]
        source: transputation_transport::Error,
    },
    /// A chosen transport's listener failed.
    #[error("waiting for the evaluator over {transport}")]
    Accept {
        /// The transport.
        transport: String,
        /// Why.
        #[source]
        source: transputation_transport::Error,
    },
}

#[cfg(test)]
mod tests;
