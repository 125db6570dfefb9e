//! Reports of an experiment in the shape of the paper's Table 4: one row per circuit ×
//! scheme × condition, one column per transport, each cell the mean ± sample standard
//! deviation of the protocol time (`total_ms`) over the successful runs, the row's best
//! transport marked and its speed-up over `tcp` given.
//!
//! Beside each transport's column, a column of its own gives the paper's measure
//! (`paper_ms`: the paper's Table 4 times garbling, the transfer of the tables and the
//! output, OT and set-up excluded; recorded as the garbler's time from the end of its OT
//! until the output arrived), so that a row compares like with like with the paper's. Text
//! and Markdown show these columns when a run of the report has the measure (runs recorded
//! before report version 2 have not, and a line says so); CSV and JSON always have them.
//!
//! Runs whose sessions held several computations (the experiment's `repeat`) recorded the
//! evaluator's online time of the further ones (`online_ms`: a computation's input given
//! until its output held, the median over computations 2, 3, ...). Text and Markdown then
//! show a column `TRANSPORT online` beside each transport: the median of its runs'
//! `online_ms`; CSV and JSON always have it (`online_median_ms`).
//!
//! Times are in milliseconds, or with [`Unit::Rtt`] in round-trip times of each row's
//! condition (its emulated RTT): how many round trips a session costs. A condition without
//! an RTT (0, e.g. a rate limit alone) cannot be counted in RTTs: its times stay in
//! milliseconds, and a line under the table names such conditions. CSV then adds the RTT
//! columns beside the millisecond ones, and JSON the `*_rtt` fields, empty or absent for
//! such a condition.
//!
//! The best of a row is the lowest mean among the cells whose every run succeeded (a
//! transport that failed a run is not the one to recommend). A cell with failures says so:
//! `81.2 ± 3.0 (1 of 3 failed)`, or `failed` / `timeout` when no run succeeded; a cell not
//! run yet is `–`. Text, Markdown, CSV (one line per cell) and JSON come from the same
//! [`Report`]. Where a run failed or timed out, the text and Markdown reports add the
//! failure table of Choose Wisely ([`crate::failures`]); JSON always has it.
//!
//! A column is a transport as the experiment wrote it: `quic:cc=bbr,iw={bdp}` is one
//! column across the conditions, each cell saying what ran (`ran`, in CSV `transport_ran`).
//! Every cell has its median time to the output (`output_median_ms`: what a user waits for,
//! see [`time_to_output`]). A column `auto` is not a transport to recommend, so never a row's best;
//! beside it, text and Markdown show `auto chose` (its most common choice, and how many
//! runs made it) and `auto gap` (its time to the output against the fastest transport of
//! the row), and a line under the units sums up every row ([`AutoSummary`]); CSV has the
//! `auto_*` columns, JSON `auto` per row and for the report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::db::{Environment, ExperimentRow, RunRecord, Status};
use crate::experiment::{is_agreed, is_auto, PROGRAM_SCHEME};
use crate::failures::FailureTable;
use crate::stats::{index_or_push, mean_sd, median};

mod auto;

pub use auto::{output_median, time_to_output, AutoCell, AutoSummary, Rival};

/// The unit of a report's times.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Unit {
    /// Milliseconds.
    #[default]
    Ms,
    /// Round-trip times of the row's condition.
    Rtt,
}

/// The runs of one cell, summarised.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct CellStats {
    /// Runs recorded.
    pub runs: usize,
    /// Runs that succeeded.
    pub ok: usize,
    /// Runs that failed.
    pub failed: usize,
    /// Runs killed at the time limit.
    pub timeouts: usize,
    /// Mean protocol time of the successful runs, ms.
    pub mean_ms: Option<f64>,
    /// Their sample standard deviation (n − 1), ms; none below two runs.
    pub sd_ms: Option<f64>,
    /// Mean of the paper's measure (see the module docs) over the successful runs that
    /// recorded it, ms.
    pub paper_mean_ms: Option<f64>,
    /// Its sample standard deviation, ms.
    pub paper_sd_ms: Option<f64>,
    /// The median of the successful runs' online time (`online_ms`: each run's median over
    /// the further computations of its session), over the runs that recorded it, ms.
    pub online_median_ms: Option<f64>,
    /// `mean_ms` in RTTs of the condition, with [`Unit::Rtt`] and a condition with an RTT.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mean_rtt: Option<f64>,
    /// `sd_ms` in RTTs, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sd_rtt: Option<f64>,
    /// `paper_mean_ms` in RTTs, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper_mean_rtt: Option<f64>,
    /// `paper_sd_ms` in RTTs, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paper_sd_rtt: Option<f64>,
    /// `online_median_ms` in RTTs, likewise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub online_median_rtt: Option<f64>,
    /// The first error, if a run failed.
    pub error: Option<String>,
    /// The median of the successful runs' time to the output ([`time_to_output`]), ms.
    pub output_median_ms: Option<f64>,
    /// The transport that ran, where it is not the column's (a `{bdp}` template's value in
    /// this row's condition).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ran: Option<String>,
}

impl CellStats {
    fn of(runs: &[&RunRecord]) -> Self {
        let times: Vec<f64> = runs
            .iter()
            .filter(|r| r.status == Status::Ok)
            .filter_map(|r| r.total_ms)
            .collect();
        let paper: Vec<f64> = runs
            .iter()
            .filter(|r| r.status == Status::Ok)
            .filter_map(|r| r.paper_ms)
            .collect();
        let online: Vec<f64> = runs
            .iter()
            .filter(|r| r.status == Status::Ok)
            .filter_map(|r| r.online_ms)
            .collect();
        let (mean, sd) = mean_sd(&times);
        let (paper_mean, paper_sd) = mean_sd(&paper);
        CellStats {
            runs: runs.len(),
            ok: times.len(),
            failed: runs.iter().filter(|r| r.status == Status::Failed).count(),
            timeouts: runs.iter().filter(|r| r.status == Status::Timeout).count(),
            mean_ms: mean,
            sd_ms: sd,
            paper_mean_ms: paper_mean,
            paper_sd_ms: paper_sd,
            online_median_ms: median(&online),
            error: runs.iter().find_map(|r| r.error.clone()),
            output_median_ms: output_median(runs),
            ran: runs
                .iter()
                .find(|r| r.transport_as_written() != r.cell.transport)
                .map(|r| r.cell.transport.clone()),
            ..CellStats::default()
        }
    }

    /// Fills the `*_rtt` fields: the times in round trips of `rtt_ms` (a positive RTT).
    fn count_in_rtts(&mut self, rtt_ms: f64) {
        let per = |v: Option<f64>| v.map(|x| x / rtt_ms);
        self.mean_rtt = per(self.mean_ms);
        self.sd_rtt = per(self.sd_ms);
        self.paper_mean_rtt = per(self.paper_mean_ms);
        self.paper_sd_rtt = per(self.paper_sd_ms);
        self.online_median_rtt = per(self.online_median_ms);
    }

    /// The online time as shown: its median (in RTTs where counted in them), or `–` where
    /// no run recorded it.
    pub fn online_text(&self) -> String {
        match (self.online_median_rtt, self.online_median_ms) {
            (Some(m), _) => fmt_rtt(m),
            (None, Some(m)) => fmt_ms(m),
            (None, None) => "–".into(),
        }
    }

    /// The paper's measure as shown: `12.3 ± 0.4` (in RTTs where counted in them), or `–`
    /// where no run recorded it.
    pub fn paper_text(&self) -> String {
        match (self.paper_mean_rtt, self.paper_mean_ms) {
            (Some(m), _) => mean_sd_text(m, self.paper_sd_rtt, fmt_rtt),
            (None, Some(m)) => mean_sd_text(m, self.paper_sd_ms, fmt_ms),
            (None, None) => "–".into(),
        }
    }

    /// Whether every recorded run succeeded (and there is one).
    pub fn all_ok(&self) -> bool {
        self.runs > 0 && self.ok == self.runs
    }

    /// The cell's text: `123.4 ± 5.6`, `123.4 ± 5.6 (1 of 3 failed)`, `failed`, `timeout`,
    /// `–`; in RTTs (`6.06 ± 0.03`) where counted in them.
    pub fn text(&self) -> String {
        if self.runs == 0 {
            return "–".into();
        }
        let Some(mean) = self.mean_ms else {
            let what = match (self.failed, self.timeouts) {
                (0, _) => "timeout",
                (_, 0) => "failed",
                _ => "failed/timeout",
            };
            return if self.runs > 1 {
                format!("{what} ×{}", self.runs)
            } else {
                what.to_string()
            };
        };
        let mut s = match self.mean_rtt {
            Some(m) => mean_sd_text(m, self.sd_rtt, fmt_rtt),
            None => mean_sd_text(mean, self.sd_ms, fmt_ms),
        };
        if self.ok < self.runs {
            let bad = self.runs - self.ok;
            let what = if self.timeouts == bad {
                "timed out"
            } else {
                "failed"
            };
            write!(s, " ({bad} of {} {what})", self.runs).unwrap();
        }
        s
    }
}

/// Milliseconds with one decimal.
fn fmt_ms(v: f64) -> String {
    format!("{v:.1}")
}

/// Round trips with two decimals.
fn fmt_rtt(v: f64) -> String {
    format!("{v:.2}")
}

/// `mean ± sd`, or the mean alone, each formatted by `fmt`.
fn mean_sd_text(mean: f64, sd: Option<f64>, fmt: fn(f64) -> String) -> String {
    match sd {
        Some(sd) => format!("{} ± {}", fmt(mean), fmt(sd)),
        None => fmt(mean),
    }
}

/// One row: a circuit, scheme and condition across the transports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The circuit (or user program).
    pub circuit: String,
    /// The scheme (`program` for a user program).
    pub scheme: String,
    /// The condition's label.
    pub condition: String,
    /// The condition's emulated round-trip time, ms (0: none).
    pub rtt_ms: f64,
    /// One per transport, in [`Report::transports`] order.
    pub cells: Vec<CellStats>,
    /// The index of the best transport, if any transport succeeded every run (`auto` is
    /// never the best: it is not a transport to recommend).
    pub best: Option<usize>,
    /// The mean time of `tcp` over that of the best, where both exist.
    pub speedup_vs_tcp: Option<f64>,
    /// What `auto` chose and how far it was from the fastest, if the row has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto: Option<AutoCell>,
}

/// An experiment's table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The experiment, when the report comes from the database.
    pub experiment: Option<ExperimentSummary>,
    /// The unit the text, Markdown and CSV show times in.
    pub unit: Unit,
    /// The columns.
    pub transports: Vec<String>,
    /// The rows, in the order the runs first appear.
    pub rows: Vec<Row>,
    /// How emulated links differed from their requests (rate caps), per condition.
    pub link_notes: BTreeMap<String, String>,
    /// Failed and timed-out settings per condition and choice.
    pub failures: FailureTable,
    /// `auto` over every row, if a row has it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auto: Option<AutoSummary>,
}

/// The experiment a report is of.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentSummary {
    /// Its id.
    pub id: i64,
    /// Its name.
    pub name: String,
    /// Created (UTC).
    pub created_at: String,
    /// Finished (UTC), if it has.
    pub finished_at: Option<String>,
    /// Runs planned.
    pub planned_runs: i64,
    /// Runs recorded.
    pub recorded_runs: i64,
    /// Where it ran.
    pub environment: Environment,
}

impl From<&ExperimentRow> for ExperimentSummary {
    fn from(e: &ExperimentRow) -> Self {
        ExperimentSummary {
            id: e.id,
            name: e.name.clone(),
            created_at: e.created_at.clone(),
            finished_at: e.finished_at.clone(),
            planned_runs: e.planned_runs,
            recorded_runs: e.recorded_runs,
            environment: e.environment.clone(),
        }
    }
}

/// Builds the table from an experiment's runs, times in milliseconds.
pub fn build(experiment: Option<&ExperimentRow>, runs: &[RunRecord]) -> Report {
    build_in(experiment, runs, Unit::Ms)
}

/// Builds the table from an experiment's runs, times in `unit`.
pub fn build_in(experiment: Option<&ExperimentRow>, runs: &[RunRecord], unit: Unit) -> Report {
    let mut transports = Vec::new();
    let mut keys: Vec<(String, String, String)> = Vec::new();
    let mut link_notes = BTreeMap::new();
    for r in runs {
        index_or_push(&mut transports, r.transport_as_written().to_string());
        let k = (
            r.cell.circuit.clone(),
            r.cell.scheme.clone(),
            r.cell.condition.clone(),
        );
        if !keys.contains(&k) {
            keys.push(k);
        }
        if let Some(n) = &r.link.note {
            link_notes.insert(r.cell.condition.clone(), n.clone());
        }
    }
    let rows = keys
        .into_iter()
        .map(|(circuit, scheme, condition)| {
            // The condition fixes the link, so every run of the row has its RTT.
            let rtt_ms = runs
                .iter()
                .find(|r| r.cell.condition == condition)
                .map_or(0.0, |r| r.link.rtt_us as f64 / 1e3);
            let column_runs: Vec<Vec<&RunRecord>> = transports
                .iter()
                .map(|t| {
                    runs.iter()
                        .filter(|r| {
                            r.cell.circuit == circuit
                                && r.cell.scheme == scheme
                                && r.cell.condition == condition
                                && r.transport_as_written() == t
                        })
                        .collect()
                })
                .collect();
            let mut cells: Vec<CellStats> =
                column_runs.iter().map(|rs| CellStats::of(rs)).collect();
            if unit == Unit::Rtt && rtt_ms > 0.0 {
                cells.iter_mut().for_each(|c| c.count_in_rtts(rtt_ms));
            }
            let auto = auto_cell(&transports, &column_runs, &cells);
            let best = cells
                .iter()
                .enumerate()
                .filter(|(i, c)| c.all_ok() && !is_agreed(&transports[*i]))
                .filter_map(|(i, c)| c.mean_ms.map(|m| (i, m)))
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(i, _)| i);
            let tcp = transports
                .iter()
                .position(|t| t == "tcp")
                .and_then(|i| cells[i].mean_ms);
            let speedup_vs_tcp = match (best, tcp) {
                (Some(b), Some(t)) => cells[b].mean_ms.map(|m| t / m),
                _ => None,
            };
            Row {
                circuit,
                scheme,
                condition,
                rtt_ms,
                cells,
                best,
                speedup_vs_tcp,
                auto,
            }
        })
        .collect::<Vec<Row>>();
    Report {
        experiment: experiment.map(ExperimentSummary::from),
        unit,
        transports,
        auto: AutoSummary::of(rows.iter().filter_map(|r| r.auto.as_ref())),
        rows,
        link_notes,
        failures: FailureTable::build(runs),
    }
}

/// `auto` in a row, if the row has a column of it with runs: compared with the row's other
/// columns.
fn auto_cell(
    transports: &[String],
    column_runs: &[Vec<&RunRecord>],
    cells: &[CellStats],
) -> Option<AutoCell> {
    let column = transports.iter().position(|t| is_auto(t))?;
    if column_runs[column].is_empty() {
        return None;
    }
    let rivals: Vec<Rival> = transports
        .iter()
        .zip(cells)
        .enumerate()
        .filter(|(i, (t, c))| *i != column && !is_agreed(t) && c.runs > 0)
        .map(|(i, (t, c))| Rival {
            column: i,
            transport: t.clone(),
            output_median_ms: c.output_median_ms,
            all_ok: c.all_ok(),
        })
        .collect();
    Some(AutoCell::of(column, &column_runs[column], &rivals))
}

/// Columns aligned with spaces, a rule under the header.
pub fn text_table(headers: &[String], rows: &[Vec<String>]) -> String {
    let width = |s: &str| s.chars().count();
    let mut w: Vec<usize> = headers.iter().map(|h| width(h)).collect();
    for r in rows {
        for (i, c) in r.iter().enumerate() {
            w[i] = w[i].max(width(c));
        }
    }
    let line = |cells: &[String]| {
        let mut s = String::new();
        for (i, c) in cells.iter().enumerate() {
            if i > 0 {
                s.push_str("  ");
            }
            s.push_str(c);
            if i + 1 < cells.len() {
                s.push_str(&" ".repeat(w[i] - width(c)));
            }
        }
        s.push('\n');
        s
    };
    let mut out = line(headers);
    let rule: Vec<String> = w.iter().map(|&n| "-".repeat(n)).collect();
    out.push_str(&line(&rule));
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

/// A Markdown table: the first `text_columns` left-aligned, the rest right-aligned.
fn markdown_table(headers: &[String], rows: &[Vec<String>], text_columns: usize) -> String {
    let esc = |s: &str| s.replace('|', "\\|");
    let line = |cells: &[String]| {
        format!(
            "| {} |\n",
            cells.iter().map(|s| esc(s)).collect::<Vec<_>>().join(" | ")
        )
    };
    let mut out = line(headers);
    out.push('|');
    for i in 0..headers.len() {
        out.push_str(if i < text_columns { "---|" } else { "---:|" });
    }
    out.push('\n');
    for r in rows {
        out.push_str(&line(r));
    }
    out
}

/// A number for a CSV cell, three decimals; empty where there is none.
fn csv_num(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.3}")).unwrap_or_default()
}

fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

impl Row {
    /// The last column: the best transport and its speed-up over tcp.
    pub fn best_text(&self, transports: &[String]) -> String {
        match (self.best, self.speedup_vs_tcp) {
            (None, _) => "–".into(),
            (Some(b), Some(x)) if transports[b] != "tcp" => {
                format!("{} ({:.2}× tcp)", transports[b], x)
            }
            (Some(b), _) => transports[b].clone(),
        }
    }
}

impl Report {
    /// Whether a run of the report recorded the paper's measure: then text and Markdown
    /// show its columns.
    pub fn has_paper_measure(&self) -> bool {
        self.rows
            .iter()
            .flat_map(|r| &r.cells)
            .any(|c| c.paper_mean_ms.is_some())
    }

    /// Whether a run of the report recorded an online time (a session of several
    /// computations): then text and Markdown show its columns.
    pub fn has_online_time(&self) -> bool {
        self.rows
            .iter()
            .flat_map(|r| &r.cells)
            .any(|c| c.online_median_ms.is_some())
    }

    /// The table's column headers: circuit, scheme, condition, the transports (each with
    /// the columns of its paper measure, online time and `auto`'s choice where the report
    /// has them), best.
    pub fn headers(&self) -> Vec<String> {
        let mut h: Vec<String> = vec!["circuit".into(), "scheme".into(), "condition".into()];
        let paper = self.has_paper_measure();
        let online = self.has_online_time();
        for t in &self.transports {
            h.push(t.clone());
            if paper {
                h.push(format!("{t} paper"));
            }
            if online {
                h.push(format!("{t} online"));
            }
            if self.auto.is_some() && is_auto(t) {
                h.push(format!("{t} chose"));
                h.push(format!("{t} gap"));
            }
        }
        h.push("best".into());
        h
    }

    fn cells(&self, mark: impl Fn(&str) -> String) -> Vec<Vec<String>> {
        self.cells_with(|t| t.to_string(), mark)
    }

    /// The table's cells under [`Report::headers`], row by row: each row's best cell
    /// passed through `mark`, every other through `plain` (for a format that escapes its
    /// text, such as HTML).
    pub fn cells_with(
        &self,
        plain: impl Fn(&str) -> String,
        mark: impl Fn(&str) -> String,
    ) -> Vec<Vec<String>> {
        let paper = self.has_paper_measure();
        let online = self.has_online_time();
        self.rows
            .iter()
            .map(|r| {
                let mut v = vec![plain(&r.circuit), plain(&r.scheme), plain(&r.condition)];
                for (i, c) in r.cells.iter().enumerate() {
                    let t = c.text();
                    v.push(if r.best == Some(i) {
                        mark(&t)
                    } else {
                        plain(&t)
                    });
                    if paper {
                        v.push(plain(&c.paper_text()));
                    }
                    if online {
                        v.push(plain(&c.online_text()));
                    }
                    if self.auto.is_some() && is_auto(&self.transports[i]) {
                        let auto = r.auto.as_ref().filter(|a| a.column == i);
                        v.push(plain(
                            &auto.map_or_else(|| "–".into(), AutoCell::choice_text),
                        ));
                        v.push(plain(&auto.map_or_else(|| "–".into(), AutoCell::gap_text)));
                    }
                }
                v.push(plain(&r.best_text(&self.transports)));
                v
            })
            .collect()
    }

    /// The lines that say what the times are: their unit and the paper's measure.
    fn units_lines(&self) -> Vec<String> {
        let mut lines = vec![match self.unit {
            Unit::Ms => "protocol time in ms (connection to the garbler receiving the output), \
                         mean ± standard deviation; best: lowest mean among transports whose \
                         every run succeeded"
                .to_string(),
            Unit::Rtt => "protocol time in RTTs of the row's condition (connection to the \
                          garbler receiving the output, over the condition's emulated \
                          round-trip time), mean ± standard deviation; best: lowest mean among \
                          transports whose every run succeeded"
                .to_string(),
        }];
        if self.unit == Unit::Rtt {
            let mut without: Vec<&str> = self
                .rows
                .iter()
                .filter(|r| r.rtt_ms <= 0.0)
                .map(|r| r.condition.as_str())
                .collect();
            without.dedup();
            if !without.is_empty() {
                lines.push(format!(
                    "no RTT to count in (0 ms), so in ms: condition {}",
                    without.join(", ")
                ));
            }
        }
        if self.has_paper_measure() {
            lines.push(
                "TRANSPORT paper: the paper's measure (its Table 4 times garbling, the tables' \
                 transfer and the output; OT and set-up excluded): the garbler's time from the \
                 end of its OT until the output arrived, mean ± standard deviation"
                    .into(),
            );
        } else if self.rows.iter().any(|r| r.scheme != PROGRAM_SCHEME) {
            lines.push(
                "the paper's measure (garbling, the tables' transfer and the output) was not \
                 recorded for these runs (parties of report version 1)"
                    .into(),
            );
        }
        if self.has_online_time() {
            lines.push(
                "TRANSPORT online: what a computation costs in a session that stays open: the \
                 evaluator's time from a computation's input to its output, the median over a \
                 run's computations after the first, then the median over the runs"
                    .into(),
            );
        }
        if let Some(summary) = &self.auto {
            lines.push(
                "auto: the parties' choice, never the best (its protocol time leaves out the \
                 probe and the agreement, which come before the connection); auto chose: its \
                 most common choice (runs that made it, of the successful runs); auto gap: its \
                 median time to the output (the evaluator's start until it held the output, \
                 probing included) against the fastest transport of the row whose every run \
                 succeeded"
                    .into(),
            );
            lines.push(summary.text());
        }
        lines
    }

    /// The lines above the table: the experiment and where it ran, rate caps, what the
    /// times are.
    pub fn preamble(&self) -> Vec<String> {
        let mut lines = Vec::new();
        if let Some(e) = &self.experiment {
            let env = &e.environment;
            lines.push(format!(
                "experiment {} \"{}\": {} of {} runs, created {} UTC{}",
                e.id,
                e.name,
                e.recorded_runs,
                e.planned_runs,
                e.created_at,
                e.finished_at
                    .as_deref()
                    .map(|f| format!(", finished {f} UTC"))
                    .unwrap_or_else(|| ", not finished".into())
            ));
            lines.push(format!(
                "transputation {}{}, Linux {}, {}, emulator {}, hosts' TCP congestion control {}, \
                 session protection {}",
                env.version,
                env.git_commit
                    .as_deref()
                    .map(|c| format!(" ({c})"))
                    .unwrap_or_default(),
                env.kernel,
                env.cpu,
                env.emulator,
                env.host_cc.as_deref().unwrap_or("unknown"),
                env.protection
            ));
        }
        for (c, n) in &self.link_notes {
            lines.push(format!("{c}: {n}"));
        }
        lines.extend(self.units_lines());
        if self.rows.iter().any(|r| r.scheme == PROGRAM_SCHEME) {
            lines.push(
                "user programs (scheme `program`): wall time from starting the client until \
                 both sides exited"
                    .into(),
            );
        }
        lines
    }

    /// An aligned text table; the best cell of a row ends with `*`.
    pub fn text(&self) -> String {
        let mut out = String::new();
        for l in self.preamble() {
            out.push_str(&l);
            out.push('\n');
        }
        out.push('\n');
        out.push_str(&text_table(
            &self.headers(),
            &self.cells(|t| format!("{t} *")),
        ));
        if self.failures.any() {
            out.push('\n');
            out.push_str(FailureTable::title());
            out.push_str(" (*)\n\n");
            out.push_str(&text_table(
                &self.failures.headers(),
                &self.failures.cells(|t| format!("{t}*")),
            ));
        }
        out
    }

    /// A Markdown table; the best cell of a row is bold.
    pub fn markdown(&self) -> String {
        let mut out = String::new();
        for l in self.preamble() {
            out.push_str(&l);
            out.push_str("  \n");
        }
        out.push('\n');
        out.push_str(&markdown_table(
            &self.headers(),
            &self.cells(|t| format!("**{t}**")),
            3,
        ));
        if self.failures.any() {
            out.push('\n');
            out.push_str(FailureTable::title());
            out.push_str(" (bold):\n\n");
            out.push_str(&markdown_table(
                &self.failures.headers(),
                &self.failures.cells(|t| format!("**{t}**")),
                1,
            ));
        }
        out
    }

    /// CSV, one line per cell: the times in ms, the paper's measure and the online time in
    /// ms, with [`Unit::Rtt`] the condition's RTT and the same times in RTTs (empty for a
    /// condition without an RTT), then the time to the output, the transport that ran and
    /// what `auto` chose (filled on its lines).
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "circuit,scheme,condition,transport,runs,ok,failed,timeouts,mean_ms,sd_ms,best,\
             speedup_vs_tcp,error,paper_mean_ms,paper_sd_ms,online_median_ms",
        );
        if self.unit == Unit::Rtt {
            out.push_str(",rtt_ms,mean_rtt,sd_rtt,paper_mean_rtt,paper_sd_rtt,online_median_rtt");
        }
        out.push_str(
            ",output_median_ms,transport_ran,auto_choice,auto_choice_runs,auto_fastest,\
             auto_gap_ms,auto_gap_pct,auto_within,auto_slower_than_tcp,auto_predicted_ratio",
        );
        out.push('\n');
        for r in &self.rows {
            for (i, c) in r.cells.iter().enumerate() {
                let best = r.best == Some(i);
                let fields = [
                    csv_field(&r.circuit),
                    csv_field(&r.scheme),
                    csv_field(&r.condition),
                    csv_field(&self.transports[i]),
                    c.runs.to_string(),
                    c.ok.to_string(),
                    c.failed.to_string(),
                    c.timeouts.to_string(),
                    csv_num(c.mean_ms),
                    csv_num(c.sd_ms),
                    best.to_string(),
                    if best {
                        csv_num(r.speedup_vs_tcp)
                    } else {
                        String::new()
                    },
                    csv_field(c.error.as_deref().unwrap_or("")),
                    csv_num(c.paper_mean_ms),
                    csv_num(c.paper_sd_ms),
                    csv_num(c.online_median_ms),
                ];
                out.push_str(&fields.join(","));
                if self.unit == Unit::Rtt {
                    let rtt = [
                        csv_num(Some(r.rtt_ms)),
                        csv_num(c.mean_rtt),
                        csv_num(c.sd_rtt),
                        csv_num(c.paper_mean_rtt),
                        csv_num(c.paper_sd_rtt),
                        csv_num(c.online_median_rtt),
                    ];
                    out.push(',');
                    out.push_str(&rtt.join(","));
                }
                out.push(',');
                out.push_str(&csv_auto_fields(r, i, c).join(","));
                out.push('\n');
            }
        }
        out
    }

    /// The report as JSON (with `auto` per row and for the report where they have it).
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

/// A cell's last CSV fields: its time to the output, the transport that ran, and for
/// `auto`, its choice and comparison (empty elsewhere).
fn csv_auto_fields(row: &Row, column: usize, cell: &CellStats) -> Vec<String> {
    let flag = |v: Option<bool>| v.map(|b| b.to_string()).unwrap_or_default();
    let mut fields = vec![
        csv_num(cell.output_median_ms),
        csv_field(cell.ran.as_deref().unwrap_or("")),
    ];
    match row.auto.as_ref().filter(|a| a.column == column) {
        Some(a) => fields.extend([
            csv_field(a.choice.as_deref().unwrap_or("")),
            a.choice_runs.to_string(),
            csv_field(a.fastest.as_deref().unwrap_or("")),
            csv_num(a.gap_ms),
            csv_num(a.gap_pct),
            flag(a.within),
            flag(a.slower_than_tcp),
            csv_num(median(&a.predicted_ratios)),
        ]),
        None => fields.extend(std::iter::repeat_n(String::new(), 8)),
    }
    fields
}

#[cfg(test)]
mod tests;
