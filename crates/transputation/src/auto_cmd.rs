//! `garbler --transport auto`: listens for every transport the model may choose, answers
//! the evaluators' probes and card asks on its port (the `transputation-auto` crate's
//! service), and runs the session of the first evaluator admitted.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use transputation_auto::{Planner, RaceNews, Service};
use transputation_contract::{AutoReport, RaceReport};
use transputation_transport::{Config, Credentials};

use crate::auto_connect::{race_carrier, report};
use crate::calibration::load_calibration;
use crate::party_cmd::{
    run_garbler_session, AroundSession, GarblerArgs, Loaded, SessionArgs, SettledLater,
};
use crate::secure_cmd::Protection;

/// `garbler --transport auto`: serves its card and listeners, runs the first session whose
/// evaluator is admitted.
pub(crate) fn garbler(args: GarblerArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    let mut start = args.start()?;
    let protection_name = start.creds.as_ref().map(|k| k.protection());
    let creds = start.creds.take().map(Arc::new);
    let (garbler, setup_ms) = start.garbler(s)?;
    let (loaded, cfg, accept_wait) = (&start.loaded, &start.cfg, start.accept_wait);
    let service = garbler_service(s, loaded, args.listen, cfg, creds)?;
    let c = loop {
        match service.next(accept_wait) {
            None => bail!(
                "no evaluator agreed on a transport and connected to {} within {:.0} s \
                 (--accept-timeout)",
                service.local_addr(),
                accept_wait.as_secs_f64()
            ),
            Some(Ok(c)) => break c,
            Some(Err(e)) => eprintln!("auto: {:#}", anyhow::Error::from(e)),
        }
    };
    eprintln!(
        "auto: evaluator at {} connected over {} (session {:x})",
        c.peer
            .map_or_else(|| "an unknown address".into(), |p| p.to_string()),
        c.transport,
        c.session
    );
    let protection = match protection_name {
        Some(name) => Protection {
            name,
            handshake_ms: c.handshake.as_secs_f64() * 1e3,
        },
        None => Protection::NONE,
    };
    let mut stated = report(&c.decision, &c.path, "statement", None, None, &c.failed);
    stated.race = c.race.as_ref().map(|r| RaceReport {
        lanes: r.lanes.clone(),
        budget_bytes: None,
        started: false,
        winner: None,
        lane_bytes: Vec::new(),
        resent_chunks: None,
    });
    let around = AroundSession {
        setup_ms,
        connect_ms: None,
        protection,
        started,
        transport: c.transport.to_string(),
        auto: Some(stated.clone()),
        settled: match (c.moved, c.race) {
            (Some(news), _) => Some(Box::new(move || {
                let moved = news.moved()?;
                let r = report(&moved.decision, &moved.path, "move", None, None, &[]);
                Some((moved.transport.to_string(), r))
            })),
            (None, Some(race)) => Some(race_settled(race, stated)),
            (None, None) => None,
        },
    };
    run_garbler_session(garbler, c.channel, s, loaded, &around)
}

/// A raced session's transport and report once its verdict is in: the winner, and what
/// each lane took and what went again.
fn race_settled(race: RaceNews, stated: AutoReport) -> SettledLater {
    Box::new(move || {
        let o = race.outcome.lock().ok()?.clone();
        let (carrier, winner) = race_carrier(&race.lanes, &o)?;
        let mut r = stated.clone();
        r.chosen = carrier.clone();
        if let Some(told) = &mut r.race {
            told.started = o.started;
            told.winner = winner;
            told.lane_bytes = o.lane_bytes;
            told.resent_chunks = Some(o.resent_chunks);
        }
        Some((carrier, r))
    })
}

/// The garbler's agreement service on `addr` for `loaded`'s circuit.
pub(crate) fn garbler_service(
    s: &SessionArgs,
    loaded: &Loaded,
    addr: SocketAddr,
    cfg: &Config,
    creds: Option<Arc<Credentials>>,
) -> Result<Service> {
    let (calibration, source) = load_calibration(None)?;
    let planner = Planner::new(&loaded.circuit, s.scheme(), calibration)?;
    let service = Service::start(addr, planner, cfg.clone(), creds)
        .with_context(|| format!("starting the auto service on {addr}"))?;
    // The announcement `run` and the testbed wait for, then what it means.
    eprintln!("listening on {}", service.local_addr());
    let listening: Vec<String> = service
        .card()
        .listeners
        .iter()
        .map(|l| format!("{} on {}", l.transport, l.port))
        .collect();
    eprintln!(
        "auto: answering probes and card asks there over UDP; listening for {} (model \
         constants: {source})",
        listening.join(", ")
    );
    Ok(service)
}
