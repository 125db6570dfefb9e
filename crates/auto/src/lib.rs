//! `--transport auto`: the two parties agree on the transport that the completion-time
//! model (`transputation-model`) predicts fastest to the output for this circuit on this
//! path, without a round trip of their own, and confirm the agreement inside the protected
//! session's handshake.
//!
//! # The agreement
//!
//! 1. The garbler listens, before any evaluator comes, on every transport setting the
//!    model may choose, once per setting without its sender options (one `quic` listener
//!    serves `quic:cc=bbr,iw=15000000` and plain `quic`), and describes them on its
//!    [`Card`]: each listener's setting and port, and the kernel congestion controls it
//!    may set (nothing of its circuit, so that a cached card stays good when the garbler
//!    at that address computes another function). Its UDP port answers probe packets and card asks.
//! 2. The evaluator asks for the card as it starts, and knows the path: from its cache of
//!    earlier sessions with this garbler, or by probing the garbler's UDP port (round-trip
//!    time, loss with its upper confidence bound, bottleneck rate: `transputation-probe`)
//!    while the card comes back and its circuit loads. With a card and a path from its
//!    cache it does not wait for anything. With nothing cached, it asks after each probe
//!    train whether the decision is settled ([`Planner::settled`]: a larger train could
//!    not gain more than it costs), and goes ahead once it is (the probe may measure on
//!    beside the session, for the cache, where that is cheap); and for a session
//!    whose own sending is small ([`Planner::fits_early`]) it has already connected at
//!    its start to where a garbler of this build listens for `tcp`, `quic` (on a path
//!    longer than [`PROVISIONAL_RTT`]) and `blast` ([`Client::connect_early`]), so the
//!    connection's round trip passes during the probe's first one. Such a connection is used only if the decision chooses a
//!    setting of its listener and the card names the same port. It sends nothing that
//!    would disturb the probe (`blast` connects with `train=off`, without its
//!    rate-timing train, and both sides start it at the rate the probe measured).
//! 3. The evaluator decides ([`Planner::choose_with`]): the settings both can run,
//!    predicted for the circuit's traffic on the path and ranked by minimax regret over
//!    the loss estimate and its bound. It connects to the garbler's listener for the choice
//!    and sends its [`Statement`] (the session, the card's digest, the path, the decision)
//!    as the connection's first bytes, in the same flight as the handshake's first
//!    message. The evaluator decides because it holds the path measurement, so no message
//!    has to wait for another; the garbler still holds the policy: it admits only a
//!    statement naming its own card and scheme and a setting it would itself
//!    consider on the stated path ([`Planner::admit`]); otherwise it answers with the
//!    reason in place of its handshake, and the evaluator's first read is an error that
//!    says it.
//! 4. A choice that does not connect is excluded and the next best taken (a warning on
//!    standard error). A cached card that no longer matches the garbler's answer is
//!    dropped and the decision made again.
//! 5. The protected session's handshake mixes [`wire::binding`] (the session number and
//!    the digests of the exact card and statement) into its prologue, which Noise hashes
//!    into every key (Noise §6). A stranger who answers the card ask in the garbler's place
//!    (with fewer transports, or other ports), or changes the statement on its way, makes
//!    the two bindings differ: the garbler refuses the evaluator's first handshake message
//!    and sends nothing. At worst a stranger on the path denies the session, as it could
//!    by dropping packets; it cannot make the parties run a transport the garbler's card
//!    did not offer, and the choice only ever affects speed, never what is computed.
//!    Without protection (`--protection none`) nothing is authenticated, the choice
//!    included.
//! 6. Only after the handshake passed does the garbler tune its sending side to the
//!    choice (`Channel::sender_tuning`: the kernel's congestion control and send buffer,
//!    quinn's controller and initial window, or the rate `blast` starts at where it did
//!    not time the path itself), at least a round trip before the garbled tables leave:
//!    from then on the connection sends as one set up with the chosen options. The
//!    evaluator tunes its own side of a connection alike.
//! 7. A cold session on a short path (its early `tcp` connection made within
//!    [`PROVISIONAL_RTT`]) does not wait for the probe: it starts at once over that
//!    connection, stated as provisional, and once the probe has settled the evaluator moves the garbler's
//!    sending to the choice where that pays ([`Client::start_provisional`],
//!    [`Mover::settle`], the stream's side in [`moving`]); the move shows a secret whose
//!    SHA-256 the bound statement carried.
//! 8. Under `auto:race` the evaluator states a race instead ([`Client::connect_race`]):
//!    the settings predicted within [`RACE_SPREAD`] of the choice each connect a lane
//!    beside the session and join with the same secret, the first part of the tables goes
//!    over all lanes side by side, and the rest over the one that delivered most
//!    ([`racing`]).
//!
//! The card ask and the card are UDP datagrams ([`wire`]); the ask is sent again after a
//! few round trips while no card comes.

mod client;
mod decide;
pub mod moving;
pub mod racing;
mod service;
pub mod wire;

pub use client::provisional::{Mover, Settled, Started, PROVISIONAL_RTT};
pub use client::race::{race_plan, Raced, MIN_RACED_TABLES, RACE_LANES, RACE_SHARE, RACE_SPREAD};
pub use client::{Agreement, Client};
pub use decide::{buffer_for, Plan, Planner};
pub use service::{
    predicted_listeners, Connected, MoveNews, MovedTo, RaceNews, Service, MAX_ADMITTING, MAX_LANES,
};
pub use wire::{Card, Decision, Statement};

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

/// How much faster than `m` read it the path may be, for [`Planner::settled`]: a train's
/// rate is its packets over the time they took to pass the bottleneck, and a server that
/// times the packets by its reads may read that time up to [`TIMING_NOISE`] long on a busy
/// host (in the grid of docs/results/auto, the first train, 0.63 ms at 500 Mbit/s, read
/// 84–146 Mbit/s: 1.5–3.1 ms too long; at 50 Mbit/s, 6.3 ms, it read 48.5–50.1); a server
/// that has the kernel's receive times ([`Measurement::rate_kernel_timed`]) reads it to
/// within [`KERNEL_TIMING_NOISE`]. So a train that took `d` may have taken `d − noise`: the
/// rate read times `d / (d − noise)`, at most 4. 1 without a rate.
///
/// [`Measurement::rate_kernel_timed`]: transputation_probe::Measurement::rate_kernel_timed
pub fn rate_headroom(m: &Measurement) -> f64 {
    let Some(mbps) = m
        .bandwidth_mbps
        .or(m.bandwidth_floor_mbps)
        .filter(|r| *r > 0.0)
    else {
        return 1.0;
    };
    let Some(bytes) = transputation_probe::QuickSettings::default()
        .train_bytes(m.trains.saturating_sub(1) as usize)
    else {
        return decide::FASTER;
    };
    let took = bytes * 8.0 / (mbps * 1e6);
    let noise = if m.rate_kernel_timed && m.bandwidth_mbps.is_some() {
        KERNEL_TIMING_NOISE
    } else {
        TIMING_NOISE
    };
    let noise = noise.as_secs_f64();
    (took / (took - noise).max(took / decide::FASTER)).clamp(1.0, decide::FASTER)
}

/// How much longer than it took a train's passage of the bottleneck may read when the
/// server times it by its reads: see [`rate_headroom`].
pub const TIMING_NOISE: Duration = Duration::from_millis(3);

/// The same when the server times it by the kernel's receive times: the link's own jitter
/// and the kernel's batching of received packets. Of 34 first trains of cold sessions on
/// emulated links (2-core VM, `emu`, the parties starting beside the probe), 26 read their
/// passage within 0.02 ms, 6 read it 0.04–0.26 ms long, 2 up to 0.13 ms short; 0.3 ms,
/// which would cover them all, left a cold MinCut-size session at 200 ms and 500 Mbit/s
/// unsettled after the first train (a second probe round trip: 1,660 against 1,450 ms to
/// the output). 0.1 ms covers most readings; one it does not costs at worst a choice made
/// on a rate somewhat low, where a larger allowance costs every such session a round trip.
pub const KERNEL_TIMING_NOISE: Duration = Duration::from_micros(100);

/// What measuring the path again costs a session at least, seconds: a fresh quick probe's
/// burst with the first train behind it and the second train, two round trips and both
/// trains' passage of the bottleneck, with their report requests' guards (1 ms each).
pub fn reprobe_cost(path: &Path) -> f64 {
    let settings = transputation_probe::QuickSettings::default();
    let trains: f64 = (0..2).filter_map(|i| settings.train_bytes(i)).sum();
    2.0 * path.rtt + trains / path.rate + 0.002
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
    /// No garbler answered the card ask.
    #[error(
        "no answer from a garbler at {addr} for {patience:?} (is a garbler with --transport \
         auto listening there, and does UDP reach it?)"
    )]
    NoService {
        /// Where the ask went.
        addr: SocketAddr,
        /// How long it was sent.
        patience: Duration,
    },
    /// No session with this garbler: why (no transport in common, ...).
    #[error("no session with this garbler: {0}")]
    Refused(String),
    /// The card does not fit in a datagram.
    #[error("the garbler's card does not fit in one datagram")]
    CardTooLarge,
    /// No offered transport connected.
    #[error("could not connect with {transport}, the last choice left")]
    Connect {
        /// The transport.
        transport: String,
        /// Why.
        #[source]
        source: transputation_transport::Error,
    },
}

#[cfg(test)]
mod tests;
