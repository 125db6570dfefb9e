//! The runs a calibration of the completion-time model reads (`transputation select
//! --calibrate`): every successful one-computation run on a shaped link, with its path,
//! its transport, what it carried and its time to the output, grouped into cells
//! (experiment, circuit, scheme, transport, condition) so the caller fits medians. Runs of
//! `auto` are not read: their time includes the probe, and their transport is a choice the
//! fit would have to follow run by run.

use rusqlite::{params, Connection};
use serde::Serialize;

use crate::Error;

/// One cell's successful runs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CalibrationCell {
    /// The experiment's name.
    pub experiment: String,
    /// The circuit, as the experiment named it.
    pub circuit: String,
    /// The scheme.
    pub scheme: String,
    /// The transport string.
    pub transport: String,
    /// The condition's name.
    pub condition: String,
    /// The emulated round-trip time, microseconds.
    pub rtt_us: i64,
    /// The emulated rate, bits per second.
    pub rate_bps: i64,
    /// The emulated loss rate.
    pub loss: f64,
    /// The bottleneck queue, bytes, if recorded.
    pub queue_bytes: Option<i64>,
    /// The buffer the parties sized, bytes, if recorded.
    pub buffer_bytes: Option<i64>,
    /// The emulated hosts' default TCP congestion control, if recorded.
    pub host_cc: Option<String>,
    /// The wire protocol's version the parties spoke, if recorded.
    pub protocol_version: Option<i64>,
    /// The experiment's host, CPU and commit.
    pub host: String,
    /// Its CPU.
    pub cpu: String,
    /// Its commit, if known.
    pub git_commit: Option<String>,
    /// Each run's time to the output as the garbler measured it plus the connection the
    /// evaluator measured: `total_ms + connect_ms`, ms.
    pub output_ms: Vec<f64>,
}

/// The cells of successful runs with a shaped rate and the times a calibration needs
/// (report version 2 or later), in a stable order (`Db::calibration_cells`). The schema is
/// the current one: opening the file migrated it.
pub(super) fn cells(conn: &Connection) -> Result<Vec<CalibrationCell>, Error> {
    let db_err = |source| Error::Database {
        context: "reading the runs to calibrate from".into(),
        source,
    };
    let sql = "SELECT e.name, r.circuit, r.scheme, r.transport, r.condition, r.rtt_us, \
         r.rate_bps, r.loss, r.queue_bytes, r.buffer_bytes, e.host_cc, r.protocol_version, \
         e.host, \
         e.cpu, e.git_commit, r.total_ms + r.connect_ms \
         FROM runs r JOIN experiments e ON e.id = r.experiment_id \
         WHERE r.status = 'ok' AND r.rate_bps IS NOT NULL AND r.rate_bps > 0 \
         AND r.total_ms IS NOT NULL AND r.connect_ms IS NOT NULL AND r.computations = 1 \
         AND r.transport <> 'auto' \
         ORDER BY e.id, r.circuit, r.scheme, r.transport, r.condition, r.repetition";
    let mut stmt = conn.prepare(sql).map_err(db_err)?;
    let rows = stmt
        .query_map(params![], |r| {
            Ok(CalibrationCell {
                experiment: r.get(0)?,
                circuit: r.get(1)?,
                scheme: r.get(2)?,
                transport: r.get(3)?,
                condition: r.get(4)?,
                rtt_us: r.get(5)?,
                rate_bps: r.get(6)?,
                loss: r.get(7)?,
                queue_bytes: r.get(8)?,
                buffer_bytes: r.get(9)?,
                host_cc: r.get(10)?,
                protocol_version: r.get(11)?,
                host: r.get(12)?,
                cpu: r.get(13)?,
                git_commit: r.get(14)?,
                output_ms: vec![r.get(15)?],
            })
        })
        .map_err(db_err)?;
    let mut cells: Vec<CalibrationCell> = Vec::new();
    for row in rows {
        let run = row.map_err(db_err)?;
        match cells.last_mut() {
            Some(c) if same_cell(c, &run) => c.output_ms.extend(run.output_ms),
            _ => cells.push(run),
        }
    }
    Ok(cells)
}

fn same_cell(a: &CalibrationCell, b: &CalibrationCell) -> bool {
    (
        &a.experiment,
        &a.circuit,
        &a.scheme,
        &a.transport,
        &a.condition,
        a.git_commit.as_ref(),
    ) == (
        &b.experiment,
        &b.circuit,
        &b.scheme,
        &b.transport,
        &b.condition,
        b.git_commit.as_ref(),
    )
}
