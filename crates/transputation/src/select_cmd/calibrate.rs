//! `select --calibrate`: refits the model's constants to the testbed's runs and writes the
//! calibration file the selector reads (`crate::calibration`).
//!
//! Each cell (experiment, circuit, scheme, transport, condition) is one observation: the
//! median of its runs' `total_ms + connect_ms` (the garbler's protocol time plus the
//! evaluator's connection, which leaves out the evaluator's loading: a selector adds that
//! from its own measurement), weighted by `1/(1 + cv²)` so that a cell whose runs scatter
//! (cubic under random loss) counts less. A transport without a congestion control named
//! (`tcp`) is modelled with the emulated hosts' default that the experiment recorded.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path as FsPath;

use anyhow::{bail, Context, Result};
use transputation_auto::buffer_for;
use transputation_circuits::library;
use transputation_experiments::db::{CalibrationCell, Db};
use transputation_experiments::stats::{mean_sd, median};
use transputation_garble::Scheme;
use transputation_model::{fit, Calibration, Conditions, FitReport, Observation, Path, Provenance};
use transputation_transport::TransportSpec;

use crate::calibration::{calibration_file, load_calibration};
use crate::report::table;

/// Fits the runs in `db_path`, writes the calibration to `file` (default: the calibration
/// file) and reports the fit.
pub(super) fn run(db_path: &FsPath, file: Option<&FsPath>, json: bool) -> Result<()> {
    if !db_path.exists() {
        bail!("{}: no such results database", db_path.display());
    }
    let db = Db::open(db_path)?;
    let cells = db.calibration_cells()?;
    // Refit from the file being written if it exists, else from the declared defaults.
    let start = match file {
        Some(f) if f.exists() => load_calibration(Some(f))?.0,
        Some(_) => Calibration::default(),
        None => load_calibration(None)?.0,
    };
    let (observations, mut skipped) = observations(&cells)?;
    if observations.is_empty() {
        bail!(
            "{}: no successful run on a shaped link with the times a calibration needs \
             (testbed runs of report version 2 or later)",
            db_path.display()
        );
    }
    let (mut cal, report) = fit(&observations, &start);
    skipped.extend(report.skipped.iter().cloned());
    cal.provenance = Some(provenance(&cells, observations.len()));
    let out = match file.map(FsPath::to_path_buf).or_else(calibration_file) {
        Some(f) => f,
        None => bail!("no place for the calibration: set --calibration, or HOME"),
    };
    write_atomically(&out, &serde_json::to_string_pretty(&cal)?)?;
    if json {
        let v = serde_json::json!({"written": out, "fit": report, "skipped": skipped});
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    print_report(&report, &skipped, observations.len(), &out)
}

/// Cells left out of a fit: (cell, why).
type Skipped = Vec<(String, String)>;

/// The cells as observations, and the cells left out with why.
fn observations(cells: &[CalibrationCell]) -> Result<(Vec<Observation>, Skipped)> {
    let mut workloads = BTreeMap::new();
    let mut out = Vec::new();
    let mut skipped = Vec::new();
    // Versions whose message flow is this binary's (`SAME_FLOW_SINCE`).
    let flow = i64::from(transputation_2pc::SAME_FLOW_SINCE)
        ..=i64::from(transputation_2pc::PROTOCOL_VERSION);
    for c in cells {
        let label = format!(
            "{}/{}/{} @ {}",
            c.circuit, c.scheme, c.transport, c.condition
        );
        if let Some(v) = c.protocol_version.filter(|v| !flow.contains(v)) {
            skipped.push((
                label,
                format!(
                    "protocol version {v}, whose message flow is not this one's ({} to {})",
                    flow.start(),
                    flow.end()
                ),
            ));
            continue;
        }
        let key = (c.circuit.clone(), c.scheme.clone());
        if !workloads.contains_key(&key) {
            workloads.insert(key.clone(), workload_of(&c.circuit, &c.scheme));
        }
        let work = match &workloads[&key] {
            Ok(w) => w.clone(),
            Err(why) => {
                skipped.push((label, why.clone()));
                continue;
            }
        };
        let model = match spec_with_host_cc(&c.transport, c.host_cc.as_deref()) {
            Ok(s) => s.model(),
            Err(why) => {
                skipped.push((label, why));
                continue;
            }
        };
        let path = Path {
            rtt: c.rtt_us as f64 / 1e6,
            rate: c.rate_bps as f64 / 8.0,
            loss: c.loss,
            loss_upper: c.loss,
            queue: c.queue_bytes.map(|q| q as f64),
        };
        let buffer = c.buffer_bytes.map_or_else(
            || buffer_for(&path, work.garbler_bytes()) as f64,
            |b| b as f64,
        );
        let (mean, sd) = mean_sd(&c.output_ms);
        let cv = match (mean, sd) {
            (Some(m), Some(s)) if m > 0.0 => s / m,
            _ => 0.0,
        };
        out.push(Observation {
            label,
            condition: c.condition.clone(),
            path,
            work,
            model,
            cond: Conditions { buffer },
            measured: median(&c.output_ms).unwrap_or(0.0) / 1e3,
            weight: 1.0 / (1.0 + cv * cv),
        });
    }
    Ok((out, skipped))
}

/// The traffic of a circuit and scheme as the runs named them; the evaluator's set-up is
/// zero because the time fitted leaves it out.
fn workload_of(circuit: &str, scheme: &str) -> Result<transputation_model::Workload, String> {
    let scheme: Scheme = scheme.parse()?;
    let c = library::load_with_parties(circuit, None).map_err(|e| format!("circuit: {e}"))?;
    let options = transputation_2pc::Options::new(scheme);
    transputation_2pc::workload(&c, &options).map_err(|e| e.to_string())
}

/// The transport string, with the hosts' default congestion control named where it names
/// none (so that `tcp` on cubic hosts is fitted as cubic, whatever this host's default).
fn spec_with_host_cc(transport: &str, host_cc: Option<&str>) -> Result<TransportSpec, String> {
    let spec: TransportSpec = transport.parse().map_err(|e| format!("transport: {e}"))?;
    match host_cc {
        Some(cc) => transputation_transport::auto::with_cc_if_unset(spec, cc)
            .map_err(|e| format!("transport: {e}")),
        None => Ok(spec),
    }
}

fn provenance(cells: &[CalibrationCell], runs: usize) -> Provenance {
    let first = cells.first();
    let mut commits: Vec<String> = cells.iter().filter_map(|c| c.git_commit.clone()).collect();
    commits.sort();
    commits.dedup();
    Provenance {
        host: first.map(|c| c.host.clone()).unwrap_or_default(),
        cpu: first.map(|c| c.cpu.clone()).unwrap_or_default(),
        host_cc: first.and_then(|c| c.host_cc.clone()).unwrap_or_default(),
        commits,
        fitted_unix_s: std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
        runs,
    }
}

/// Writes `text` to `path` through a temporary file in its directory and a rename, so a
/// reader never sees half a calibration.
fn write_atomically(path: &FsPath, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(FsPath::new("."));
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut tmp = tempfile::NamedTempFile::new_in(dir)
        .with_context(|| format!("creating a file in {}", dir.display()))?;
    tmp.write_all(text.as_bytes())
        .and_then(|()| tmp.as_file().sync_all())
        .with_context(|| format!("writing {}", tmp.path().display()))?;
    tmp.persist(path)
        .with_context(|| format!("writing {}", path.display()))?;
    Ok(())
}

fn print_report(
    report: &FitReport,
    skipped: &[(String, String)],
    cells: usize,
    out: &FsPath,
) -> Result<()> {
    let rows: Vec<Vec<String>> = report
        .keys
        .iter()
        .map(|k| {
            vec![
                k.key.clone(),
                k.runs.to_string(),
                k.conditions.to_string(),
                format!("{:.3}", k.rms_before),
                format!("{:.3}", k.rms_after),
                k.rms_cross.map_or("-".into(), |x| format!("{x:.3}")),
                k.worst.as_ref().map_or("-".into(), |(l, r)| {
                    format!("{:+.0} % {l}", (r - 1.0) * 100.0)
                }),
            ]
        })
        .collect();
    outln!("fitted {cells} cells (median of each cell's runs); rms of ln(predicted/measured):")?;
    out!(
        "{}",
        table(
            &[
                "key",
                "cells",
                "conditions",
                "before",
                "after",
                "held out",
                "worst after"
            ],
            &rows
        )
    )?;
    if !skipped.is_empty() {
        outln!(
            "left out: {} cells, e.g. {}: {}",
            skipped.len(),
            skipped[0].0,
            skipped[0].1
        )?;
    }
    outln!("wrote {}", out.display())?;
    Ok(())
}
