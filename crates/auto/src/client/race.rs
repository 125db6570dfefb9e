//! A raced session (`--transport auto:race`), the paper's empirical mode: the settings the
//! model ranks nearly as fast as its choice carry the first part of the garbler's tables
//! side by side, and the rest goes over the one that delivered most ([`crate::racing`]).
//! The model narrows the field and the path decides among what is left, where a
//! prediction can be wrong by more than the candidates differ.
//!
//! Racing pays only where the tables are large: the race is [`RACE_SHARE`] of them, so
//! that the rest, over the winner, is most of the session; the lanes' connections and
//! handshakes are made while the session's own handshake and oblivious transfers run.
//! Where the tables are smaller than [`MIN_RACED_TABLES`], or no second setting is
//! predicted within [`RACE_SPREAD`] of the choice, the session is not raced
//! ([`Client::connect_race`] says so and the caller connects as under `auto`).

use std::net::SocketAddr;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use transputation_model::Path;
use transputation_transport::{Channel, Config, TransportSpec};

use super::{attempt, decision_of, stated, tune_sender, Agreement, Client, Stated};
use crate::decide::{Plan, Planner};
use crate::racing::{RaceFollowing, RaceOutcome, MAX_BUDGET, MAX_HELD};
use crate::service::MAX_LANES;
use crate::wire::{self, Card, Decision, Move, Statement};
use crate::Error;

/// The most settings that race.
pub const RACE_LANES: usize = 2;
/// A setting races only if its predicted time to the output is within this factor of the
/// choice's.
pub const RACE_SPREAD: f64 = 1.5;
/// The part of the tables the race carries before its verdict (at most
/// [`MAX_BUDGET`]).
pub const RACE_SHARE: f64 = 0.25;
/// Tables smaller than this are not raced (the race would be most of the transfer).
pub const MIN_RACED_TABLES: u64 = 4 << 20;

/// A raced session as the evaluator starts it.
pub struct Raced {
    /// The agreement on its first connection (the model's choice).
    pub agreement: Agreement,
    /// Its channel ([`RaceFollowing`]).
    pub channel: Box<dyn Channel>,
    /// The lanes' settings, in lane order.
    pub lanes: Vec<String>,
    /// The stream bytes raced before the verdict.
    pub budget: u64,
    /// What the race came to (filled in as it goes).
    pub outcome: Arc<Mutex<RaceOutcome>>,
}

/// The settings that race, in the model's order (the choice first), each with its
/// decision as its lane states it; and the race's budget. `Err` says why the session is
/// not raced.
pub fn race_plan(
    planner: &Planner,
    card: &Card,
    plan: &Plan,
) -> Result<(Vec<(TransportSpec, Decision)>, u64), String> {
    let tables = planner.workload().garbler_bytes();
    if tables < MIN_RACED_TABLES {
        return Err(format!(
            "its tables ({:.1} MB) are too small to race (at least {:.1} MB)",
            tables as f64 / 1e6,
            MIN_RACED_TABLES as f64 / 1e6
        ));
    }
    let (first, decision) = decision_of(card, plan);
    let best = decision.predicted_ms;
    let mut lanes = vec![(first, decision)];
    for p in plan.ranked().into_iter().skip(1) {
        let Some(ms) = p.ms.filter(|ms| *ms <= best * RACE_SPREAD) else {
            continue;
        };
        let Ok(spec) = p.transport.parse::<TransportSpec>() else {
            continue;
        };
        let Some(port) = card.port_of(&spec.listen_key().to_string()) else {
            continue;
        };
        if lanes.len() >= RACE_LANES.min(MAX_LANES) {
            break;
        }
        lanes.push((
            spec,
            Decision {
                transport: p.transport.clone(),
                port,
                buffer_bytes: plan.buffer_bytes,
                predicted_ms: ms,
                why: format!("a lane of the race, predicted {ms:.0} ms against {best:.0}"),
                ranked: Vec::new(),
            },
        ));
    }
    if lanes.len() < 2 {
        return Err(format!(
            "no second setting is predicted within {RACE_SPREAD}x of {}'s {best:.0} ms",
            lanes[0].0
        ));
    }
    Ok((lanes, ((tables as f64 * RACE_SHARE) as u64).min(MAX_BUDGET)))
}

impl Client {
    /// Decides on `path` with the garbler's card, connects over the choice and states a
    /// race of the settings [`race_plan`] keeps; connects each lane beside the session and
    /// joins it to the race. `Ok(None)` (nothing sent) where the session is not raced, with
    /// why on standard error, or where the choice does not connect: the caller connects as
    /// under `auto`, with its fallbacks.
    pub fn connect_race(
        &mut self,
        planner: &Planner,
        path: &Path,
        cfg: &Config,
        patience: Duration,
    ) -> Result<Option<Raced>, Error> {
        let first_wait = Duration::from_secs_f64((path.rtt * 3.0).max(0.05));
        let (card, card_json) = self.card(first_wait, patience)?;
        let plan = planner
            .choose_connected(&card, path, &[], &[])
            .map_err(Error::Refused)?;
        let (lanes, budget) = match race_plan(planner, &card, &plan) {
            Ok(raced) => raced,
            Err(why) => {
                eprintln!("auto:race: not racing: {why}; connecting as auto does");
                return Ok(None);
            }
        };
        let (transport, decision) = lanes[0].clone();
        let addr = SocketAddr::new(self.server.ip(), decision.port);
        let mut ch = match transport.connect(addr, &attempt(cfg, &transport, &plan, path, patience))
        {
            Ok(ch) => ch,
            Err(e) => {
                eprintln!("auto:race: {transport} did not connect to {addr} ({e}); not racing");
                return Ok(None);
            }
        };
        tune_sender(&*ch, &transport, path);
        let (secret, commitment) = wire::move_secret();
        let statement = Statement {
            moves: Some(commitment),
            race: lanes.iter().map(|(_, d)| d.transport.clone()).collect(),
            ..stated(self.session, &card_json, planner, path, decision.clone())
        };
        let (bytes, json) = wire::statement_bytes(&statement)
            .map_err(|e| Error::Refused(format!("stating the race: {e}")))?;
        // Sent now, not with the handshake's first message: the lanes follow at once.
        ch.send(&bytes)
            .and_then(|()| ch.flush())
            .map_err(|source| Error::Connect {
                transport: transport.to_string(),
                source,
            })?;
        let (offer, offered) = mpsc::channel();
        let channel = RaceFollowing::new(
            Box::new(Stated::new(ch)),
            lanes.len(),
            offered,
            cfg.io_timeout,
            budget,
        )
        // Beyond the race's budget, what the winner's connection already carries when
        // the chunks sent again follow it: its buffers at both ends.
        .holding_at_most(MAX_HELD.max((budget + 2 * plan.buffer_bytes) as usize));
        let outcome = channel.outcome();
        let names: Vec<String> = lanes.iter().map(|(_, d)| d.transport.clone()).collect();
        let lane_cfg = Config {
            buffer_bytes: Some(plan.buffer_bytes as usize),
            short_path_timers: true,
            ..cfg.clone()
        };
        for (lane, (spec, d)) in lanes.into_iter().enumerate() {
            let (offer, server, session) = (offer.clone(), self.server, self.session);
            let (secret, path, cfg) = (secret.clone(), *path, lane_cfg.clone());
            let joining = thread::Builder::new()
                .name(format!("race-join-{lane}"))
                .spawn(move || {
                    let joined = join_lane(server, session, secret, lane, &spec, d, &path, &cfg);
                    match joined {
                        Ok(ch) => {
                            let _ = offer.send((lane, ch));
                        }
                        // The race never starts: the session stays on its first connection.
                        Err(e) => eprintln!(
                            "warning: auto:race: lane {lane} ({spec}) did not join ({e}); \
                             the session runs without the race"
                        ),
                    }
                });
            if joining.is_err() {
                eprintln!("warning: auto:race: could not start a lane's thread; not racing");
            }
        }
        let agreement = Agreement {
            session: self.session,
            transport,
            addr,
            binding: wire::binding(self.session, &card_json, &json),
            decision,
            failed: Vec::new(),
            card_json,
            card_from: "garbler",
            early: false,
        };
        Ok(Some(Raced {
            agreement,
            channel: Box::new(channel),
            lanes: names,
            budget,
            outcome,
        }))
    }
}

/// Connects lane `lane` over `spec`, tunes it and states its join (a [`Move`] naming the
/// lane, with the session's secret). A join whose sending failed part way is still the
/// lane (the garbler may have read it, and then the race waits for it here); one that did
/// not connect is an error.
#[allow(clippy::too_many_arguments)]
fn join_lane(
    server: SocketAddr,
    session: u64,
    secret: String,
    lane: usize,
    spec: &TransportSpec,
    decision: Decision,
    path: &Path,
    cfg: &Config,
) -> Result<Box<dyn Channel>, String> {
    let addr = SocketAddr::new(server.ip(), decision.port);
    let mut ch = spec.connect(addr, cfg).map_err(|e| e.to_string())?;
    tune_sender(&*ch, spec, path);
    let bytes = wire::move_bytes(&Move {
        session,
        secret,
        path: *path,
        decision,
        lane: Some(lane),
    })
    .map_err(|e| e.to_string())?;
    if let Err(e) = ch.send(&bytes).and_then(|()| ch.flush()) {
        eprintln!("warning: auto:race: stating lane {lane}'s join failed ({e})");
    }
    Ok(ch)
}

#[cfg(test)]
mod tests;
