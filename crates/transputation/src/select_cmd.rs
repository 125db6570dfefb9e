//! `transputation select`: what `--transport auto` would choose for a circuit on a path,
//! and why. `--simulate` takes the path from the command line (the paper's simulation);
//! every transport of this build that works here is predicted by the completion-time model
//! (`transputation_model`, docs/transport-model.md) with the constants of the calibration
//! file, or its transport's declared defaults. The web UI's simulation (`crate::web`) checks
//! its path with the same [`simulated_path`], runs `select --simulate --json` and reads its
//! [`Selection`], and shows the same [`HEADER`] and [`rows`].

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{bail, Context, Result};
use clap::Args;
use serde::{Deserialize, Serialize};
use transputation_auto::Planner;
use transputation_circuits::{library, Circuit, Party};
use transputation_garble::Scheme;
use transputation_model::{Calibration, Decision, Path, Workload};

use crate::auto_connect::{describe_path, know_path};
use crate::garble_cmd::parse_scheme;
use crate::report::table;
use crate::transport_cmd::parse_rate;

mod calibrate;
mod parse;

pub(crate) use parse::{parse_duration, parse_loss};

#[derive(Args, Debug)]
pub struct SelectArgs {
    /// Predict for the path given by --rtt, --rate and --loss, without a network.
    #[arg(long, requires_all = ["rtt", "rate", "circuit"])]
    simulate: bool,
    /// Measure the path to this address with the quick probe (a garbler with --transport
    /// auto, or `transputation probe --listen`, answers there), then predict for it.
    #[arg(long, value_name = "ADDR", conflicts_with_all = ["simulate", "calibrate"], requires = "circuit")]
    connect: Option<std::net::SocketAddr>,
    /// With --connect: use a measurement of that address at most this many seconds old
    /// from the probe cache instead of probing (0: always probe).
    #[arg(long, default_value_t = 0.0, value_name = "SECONDS")]
    probe_cache: f64,
    /// Refit the model's constants to the successful runs in --db, say how well they fit,
    /// and write them to --calibration (default: the calibration file named below).
    #[arg(long, conflicts_with = "simulate", requires = "db", required_unless_present_any = ["simulate", "connect"])]
    calibrate: bool,
    /// The testbed's results database to calibrate from.
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// The path's round-trip time, e.g. 300ms, 0.5ms or 1s.
    #[arg(long, value_parser = parse_duration)]
    rtt: Option<f64>,
    /// The path's bottleneck rate, e.g. 500mbit or 1gbit.
    #[arg(long, value_parser = parse_rate)]
    rate: Option<u64>,
    /// The path's random loss, e.g. 0.1% or 0.001.
    #[arg(long, value_parser = parse_loss, default_value = "0")]
    loss: f64,
    /// An upper bound on the loss, as a probe's confidence bound gives it (default: the
    /// loss is known exactly).
    #[arg(long, value_parser = parse_loss)]
    loss_bound: Option<f64>,
    /// Predict for hosts whose kernel TCP runs this congestion control by default (`tcp`
    /// is then `tcp:cc=CC`, what a session without auto runs there), e.g. cubic, the
    /// default of most Linux hosts and of the testbed's emulated ones (default: this
    /// host's).
    #[arg(long, value_name = "CC", value_parser = parse_host_cc)]
    host_cc: Option<String>,
    /// The bottleneck's queue, e.g. 20ms (of the rate); unknown if not given.
    #[arg(long, value_parser = parse_duration)]
    queue: Option<f64>,
    /// The circuit: a Bristol / Bristol Fashion file or a built-in such as `aes128`.
    #[arg(long)]
    circuit: Option<String>,
    /// For circuit files: the owner of each input group, in order, e.g. `evaluator,garbler`.
    #[arg(long, value_delimiter = ',', value_name = "PARTY,...")]
    parties: Option<Vec<Party>>,
    /// The garbling scheme: prf, circular or ideal.
    #[arg(long, value_parser = parse_scheme, default_value = "ideal")]
    scheme: Scheme,
    /// The model's constants (default: $XDG_CONFIG_HOME/transputation/calibration.json, or
    /// ~/.config/..., if it exists; else each transport's declared defaults). With
    /// --calibrate, where to write them.
    #[arg(long, value_name = "FILE")]
    calibration: Option<PathBuf>,
    /// Print JSON: the path, every transport's prediction (total and parts, seconds) and
    /// regret, the choice and why (with --calibrate: the fit per key).
    #[arg(long)]
    json: bool,
}

/// What `select --json` prints for a prediction: the contract with its readers, among them
/// the web UI, which runs `select --simulate --json` in a process of its own.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) struct Selection {
    /// The path predicted for.
    pub(crate) path: Path,
    /// Where the path came from: `given`, or the address measured and how.
    pub(crate) path_from: String,
    /// The circuit as named.
    pub(crate) circuit: String,
    /// The garbling scheme.
    pub(crate) scheme: String,
    /// The session's traffic the predictions are for.
    pub(crate) workload: Workload,
    /// Where the model's constants came from.
    pub(crate) calibration: String,
    /// Every transport's prediction, the choice and why.
    pub(crate) decision: Decision,
}

pub fn run(args: SelectArgs) -> Result<()> {
    if args.calibrate {
        let db = args.db.as_deref().expect("clap requires --db");
        return calibrate::run(db, args.calibration.as_deref(), args.json);
    }
    let (path, measured) = match args.connect {
        Some(addr) => {
            if !(args.probe_cache >= 0.0 && args.probe_cache.is_finite()) {
                bail!(
                    "--probe-cache must be a number of seconds, not {}",
                    args.probe_cache
                );
            }
            let ttl = std::time::Duration::from_secs_f64(args.probe_cache);
            let known = know_path(addr, ttl)?;
            let how = format!(
                "measured at {addr} ({}, {:.0} ms)",
                known.from, known.probe_ms
            );
            (known.path, how)
        }
        None => (simulated_path_of(&args)?, "given".to_string()),
    };
    let circuit_name = args.circuit.as_deref().expect("clap requires --circuit");
    let circuit = library::load_with_parties(circuit_name, args.parties.as_deref())?;
    let (cal, cal_source) = crate::calibration::load_calibration(args.calibration.as_deref())?;
    let host_cc = args
        .host_cc
        .clone()
        .unwrap_or_else(transputation_transport::default_congestion_control);
    let (decision, work) = predict(&circuit, args.scheme, cal, &path, &host_cc)?;
    if args.json {
        let v = Selection {
            path,
            path_from: measured,
            circuit: circuit_name.to_string(),
            scheme: args.scheme.to_string(),
            workload: work,
            calibration: cal_source,
            decision,
        };
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    outln!(
        "path: {} ({measured}); {} kB from the evaluator, {} kB from the garbler; constants: \
         {cal_source}",
        describe_path(&path),
        work.evaluator_bytes().div_ceil(1000),
        work.garbler_bytes().div_ceil(1000),
    )?;
    out!("{}", table(&HEADER, &rows(&decision)))?;
    match &decision.choice {
        Some(c) => outln!("choice: {c}\nwhy: {}", decision.why)?,
        None => outln!("no choice: {}", decision.why)?,
    }
    Ok(())
}

/// Every transport of this build that works here, predicted for `circuit` under `scheme` on
/// `path` with the model's constants `cal`, ranked and chosen from as `--transport auto`
/// does on hosts whose TCP runs `host_cc`; and the session's traffic the predictions are
/// for.
fn predict(
    circuit: &Circuit,
    scheme: Scheme,
    cal: Calibration,
    path: &Path,
    host_cc: &str,
) -> Result<(Decision, Workload)> {
    let planner = Planner::new(circuit, scheme, cal)?.with_setup(evaluator_setup(circuit, scheme)?);
    // A prediction shows every transport, also one that a session would not wait for.
    transputation_transport::auto::finish_start_ups();
    let decision = planner
        .plan(
            path,
            &transputation_transport::auto::candidates_on_hosts(path, host_cc),
        )
        .decision;
    Ok((decision, planner.workload().clone()))
}

/// A `--host-cc` value: a congestion control kernel TCP can run here (so that its model
/// and its settings exist).
fn parse_host_cc(cc: &str) -> std::result::Result<String, String> {
    let spec: transputation_transport::TransportSpec =
        format!("tcp:cc={cc}").parse().map_err(|e| format!("{e}"))?;
    spec.check_here().map_err(|e| format!("{e}"))?;
    Ok(cc.to_string())
}

/// The path of --simulate.
fn simulated_path_of(args: &SelectArgs) -> Result<Path> {
    simulated_path(
        args.rtt.expect("clap requires --rtt"),
        args.rate.expect("clap requires --rate"),
        args.loss,
        args.loss_bound,
        args.queue,
    )
}

/// A simulated path: `rtt` and `queue` in seconds, `rate_bps` in bits per second, `loss`
/// and its upper bound (default: `loss`, known exactly) as fractions.
pub(crate) fn simulated_path(
    rtt: f64,
    rate_bps: u64,
    loss: f64,
    loss_bound: Option<f64>,
    queue: Option<f64>,
) -> Result<Path> {
    let rate = rate_bps as f64 / 8.0;
    if rate <= 0.0 {
        bail!("--rate must be a rate, not unlimited");
    }
    let loss_upper = loss_bound.unwrap_or(loss);
    if loss_upper < loss {
        bail!("--loss-bound must be at least --loss");
    }
    let path = Path {
        rtt,
        rate,
        loss,
        loss_upper,
        queue: queue.map(|q| q * rate),
    };
    path.check().map_err(anyhow::Error::msg)?;
    Ok(path)
}

/// The evaluator's set-up, measured here: planning the circuit's evaluation, as an
/// evaluator does before it sends (seconds).
fn evaluator_setup(circuit: &Circuit, scheme: Scheme) -> Result<f64> {
    let start = Instant::now();
    let zeros = vec![false; circuit.party_input_bits(Party::Evaluator)];
    transputation_2pc::Evaluator::new(circuit, transputation_2pc::Options::new(scheme), &zeros)
        .context("planning the evaluation")?;
    Ok(start.elapsed().as_secs_f64())
}

/// The columns of [`rows`].
pub(crate) const HEADER: [&str; 7] = [
    "transport",
    "predicted ms",
    "at loss bound",
    "connect ms",
    "slow-start rounds",
    "held by",
    "regret",
];

/// Why `auto` never chooses the transport `name`.
fn ineligible(name: &str) -> &'static str {
    match name.parse::<transputation_transport::TransportSpec>() {
        Ok(spec) if spec.family().delivery.is_reliable() => "its model is not yet calibrated",
        _ => "no repair of loss",
    }
}

/// One row per ranked transport of `d`: its predicted time to the output and its parts,
/// under [`HEADER`].
pub(crate) fn rows(d: &Decision) -> Vec<Vec<String>> {
    d.ranked
        .iter()
        .map(|r| {
            let mut row = vec![r.name.clone()];
            match &r.expected {
                Ok(p) => {
                    let bound = match &r.at_bound {
                        Some(Ok(b)) => format!("{:.0}", b.total * 1e3),
                        Some(Err(_)) => "unsuitable".into(),
                        None => "=".into(),
                    };
                    let longest = p.longest();
                    row.extend([
                        format!("{:.0}", p.total * 1e3),
                        bound,
                        format!("{:.0}", p.connect * 1e3),
                        p.bulk
                            .iter()
                            .map(|b| b.rounds.to_string())
                            .collect::<Vec<_>>()
                            .join("+"),
                        longest.map_or("-".into(), |l| l.limit.describe().to_string()),
                        match (r.regret, r.eligible) {
                            (Some(x), true) => format!("{x:.2}"),
                            (Some(_), false) => format!("never chosen: {}", ineligible(&r.name)),
                            (None, _) => "-".into(),
                        },
                    ]);
                }
                Err(why) => {
                    row.extend(["-", "-", "-", "-"].map(String::from));
                    row.push(format!("unsuitable: {why}"));
                    row.push("-".into());
                }
            }
            row
        })
        .collect()
}
