//! Reports of an experiment in the shape of the paper's Table 4: one row per circuit ×
//! scheme × condition, one column per transport, each cell the mean ± sample standard
//! deviation of the protocol time (`total_ms`) over the successful runs, the row's best
//! transport marked and its speed-up over `tcp` given.
//!
//! The best of a row is the lowest mean among the cells whose every run succeeded (a
//! transport that failed a run is not the one to recommend). A cell with failures says so:
//! `81.2 ± 3.0 (1 of 3 failed)`, or `failed` / `timeout` when no run succeeded; a cell not
//! run yet is `–`. Text, Markdown, CSV (one line per cell) and JSON come from the same
//! [`Report`]. Where a run failed or timed out, the text and Markdown reports add the
//! failure table of Choose Wisely ([`crate::failures`]); JSON always has it.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::Serialize;

use crate::db::{Environment, ExperimentRow, RunRecord, Status};
use crate::experiment::PROGRAM_SCHEME;
use crate::failures::FailureTable;
use crate::stats::{index_or_push, mean_sd};

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
    /// The first error, if a run failed.
    pub error: Option<String>,
}

impl CellStats {
    fn of(runs: &[&RunRecord]) -> Self {
        let times: Vec<f64> = runs
            .iter()
            .filter(|r| r.status == Status::Ok)
            .filter_map(|r| r.total_ms)
            .collect();
        let (mean, sd) = mean_sd(&times);
        CellStats {
            runs: runs.len(),
            ok: times.len(),
            failed: runs.iter().filter(|r| r.status == Status::Failed).count(),
            timeouts: runs.iter().filter(|r| r.status == Status::Timeout).count(),
            mean_ms: mean,
            sd_ms: sd,
            error: runs.iter().find_map(|r| r.error.clone()),
        }
    }

    /// Whether every recorded run succeeded (and there is one).
    pub fn all_ok(&self) -> bool {
        self.runs > 0 && self.ok == self.runs
    }

    /// The cell's text: `123.4 ± 5.6`, `123.4 ± 5.6 (1 of 3 failed)`, `failed`, `timeout`, `–`.
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
        let mut s = match self.sd_ms {
            Some(sd) => format!("{} ± {}", fmt_ms(mean), fmt_ms(sd)),
            None => fmt_ms(mean),
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

/// One row: a circuit, scheme and condition across the transports.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// The circuit (or user program).
    pub circuit: String,
    /// The scheme (`program` for a user program).
    pub scheme: String,
    /// The condition's label.
    pub condition: String,
    /// One per transport, in [`Report::transports`] order.
    pub cells: Vec<CellStats>,
    /// The index of the best transport, if any transport succeeded every run.
    pub best: Option<usize>,
    /// The mean time of `tcp` over that of the best, where both exist.
    pub speedup_vs_tcp: Option<f64>,
}

/// An experiment's table.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Report {
    /// The experiment, when the report comes from the database.
    pub experiment: Option<ExperimentSummary>,
    /// The columns.
    pub transports: Vec<String>,
    /// The rows, in the order the runs first appear.
    pub rows: Vec<Row>,
    /// How emulated links differed from their requests (rate caps), per condition.
    pub link_notes: BTreeMap<String, String>,
    /// Failed and timed-out settings per condition and choice.
    pub failures: FailureTable,
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

/// Builds the table from an experiment's runs.
pub fn build(experiment: Option<&ExperimentRow>, runs: &[RunRecord]) -> Report {
    let mut transports = Vec::new();
    let mut keys: Vec<(String, String, String)> = Vec::new();
    let mut link_notes = BTreeMap::new();
    for r in runs {
        index_or_push(&mut transports, r.cell.transport.clone());
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
            let cells: Vec<CellStats> = transports
                .iter()
                .map(|t| {
                    let rs: Vec<&RunRecord> = runs
                        .iter()
                        .filter(|r| {
                            r.cell.circuit == circuit
                                && r.cell.scheme == scheme
                                && r.cell.condition == condition
                                && &r.cell.transport == t
                        })
                        .collect();
                    CellStats::of(&rs)
                })
                .collect();
            let best = cells
                .iter()
                .enumerate()
                .filter(|(_, c)| c.all_ok())
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
                cells,
                best,
                speedup_vs_tcp,
            }
        })
        .collect();
    Report {
        experiment: experiment.map(ExperimentSummary::from),
        transports,
        rows,
        link_notes,
        failures: FailureTable::build(runs),
    }
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
    fn headers(&self) -> Vec<String> {
        let mut h: Vec<String> = vec!["circuit".into(), "scheme".into(), "condition".into()];
        h.extend(self.transports.iter().cloned());
        h.push("best".into());
        h
    }

    fn cells(&self, mark: impl Fn(&str) -> String) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|r| {
                let mut v = vec![r.circuit.clone(), r.scheme.clone(), r.condition.clone()];
                for (i, c) in r.cells.iter().enumerate() {
                    let t = c.text();
                    v.push(if r.best == Some(i) { mark(&t) } else { t });
                }
                v.push(r.best_text(&self.transports));
                v
            })
            .collect()
    }

    fn preamble(&self) -> Vec<String> {
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
        lines.push(
            "protocol time in ms (connection to the garbler receiving the output), mean ± \
             standard deviation; best: lowest mean among transports whose every run succeeded"
                .into(),
        );
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

    /// CSV, one line per cell.
    pub fn csv(&self) -> String {
        let mut out = String::from(
            "circuit,scheme,condition,transport,runs,ok,failed,timeouts,mean_ms,sd_ms,best,\
             speedup_vs_tcp,error\n",
        );
        let num = |v: Option<f64>| v.map(|x| format!("{x:.3}")).unwrap_or_default();
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
                    num(c.mean_ms),
                    num(c.sd_ms),
                    best.to_string(),
                    if best {
                        num(r.speedup_vs_tcp)
                    } else {
                        String::new()
                    },
                    csv_field(c.error.as_deref().unwrap_or("")),
                ];
                out.push_str(&fields.join(","));
                out.push('\n');
            }
        }
        out
    }

    /// The report as JSON.
    pub fn json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::{Db, LinkRecord};
    use crate::experiment::Cell;

    fn run(
        circuit: &str,
        transport: &str,
        condition: &str,
        rep: u32,
        total: Option<f64>,
    ) -> RunRecord {
        let cell = Cell {
            circuit: circuit.into(),
            scheme: "ideal".into(),
            transport: transport.into(),
            condition: condition.into(),
        };
        let link = LinkRecord {
            rtt_us: 40_000,
            rate_bps: Some(16_000_000),
            emulator: "emu".into(),
            ..LinkRecord::default()
        };
        match total {
            Some(t) => RunRecord {
                total_ms: Some(t),
                ..RunRecord::ok(cell, rep, link)
            },
            None => RunRecord::failed(cell, rep, link, Status::Failed, "connection refused".into()),
        }
    }

    /// A database filled by hand, read back, reported.
    fn filled() -> Report {
        let mut db = Db::in_memory().unwrap();
        let env = Environment::detect("0.1.0", None, "emu", "reno", "off");
        let id = db.create_experiment("t4", "{}", 12, &env).unwrap();
        let runs = [
            run("aes128", "tcp", "cw-wan", 0, Some(100.0)),
            run("aes128", "udt", "cw-wan", 0, Some(300.0)),
            run("aes128", "tcp", "cw-wan", 1, Some(110.0)),
            run("aes128", "udt", "cw-wan", 1, Some(320.0)),
            run("mincut", "tcp", "cw-wan", 0, Some(8000.0)),
            run("mincut", "udt", "cw-wan", 0, Some(1000.0)),
            run("mincut", "tcp", "cw-wan", 1, Some(8400.0)),
            run("mincut", "udt", "cw-wan", 1, Some(1100.0)),
            // A row where the fastest transport failed once: not the best.
            run("sha256", "tcp", "eu-us", 0, Some(200.0)),
            run("sha256", "udt", "eu-us", 0, Some(150.0)),
            run("sha256", "tcp", "eu-us", 1, Some(210.0)),
            run("sha256", "udt", "eu-us", 1, None),
        ];
        for r in &runs {
            db.insert_run(id, r).unwrap();
        }
        let row = db.experiment(id).unwrap().unwrap();
        build(Some(&row), &db.runs(id).unwrap())
    }

    #[test]
    fn mean_and_sample_standard_deviation() {
        let (m, s) = mean_sd(&[100.0, 110.0]);
        assert_eq!(m, Some(105.0));
        assert!((s.unwrap() - 7.0710678).abs() < 1e-6);
        assert_eq!(mean_sd(&[5.0]), (Some(5.0), None));
        assert_eq!(mean_sd(&[]), (None, None));
    }

    #[test]
    fn rows_mark_the_best_and_its_speedup() {
        let r = filled();
        assert_eq!(r.transports, ["tcp", "udt"]);
        assert_eq!(r.rows.len(), 3);
        let aes = &r.rows[0];
        assert_eq!(
            (aes.circuit.as_str(), aes.condition.as_str()),
            ("aes128", "cw-wan")
        );
        assert_eq!(aes.best, Some(0));
        assert_eq!(aes.speedup_vs_tcp, Some(1.0));
        assert_eq!(aes.cells[0].text(), "105.0 ± 7.1");
        let mc = &r.rows[1];
        assert_eq!(mc.best, Some(1));
        assert!((mc.speedup_vs_tcp.unwrap() - 8200.0 / 1050.0).abs() < 1e-9);
        assert_eq!(mc.best_text(&r.transports), "udt (7.81× tcp)");
        let sha = &r.rows[2];
        assert_eq!(sha.best, Some(0), "udt failed a run");
        assert_eq!(sha.cells[1].text(), "150.0 (1 of 2 failed)");
        assert_eq!(sha.cells[1].error.as_deref(), Some("connection refused"));

        let text = r.text();
        assert!(
            text.contains("experiment 1 \"t4\": 12 of 12 runs"),
            "{text}"
        );
        assert!(
            text.contains(
                ", emulator emu, hosts' TCP congestion control reno, session protection off\n"
            ),
            "{text}"
        );
        assert!(text.contains("105.0 ± 7.1 *"), "{text}");
        assert!(text.contains("1050.0 ± 70.7 *"), "{text}");
        assert!(!text.contains("150.0 (1 of 2 failed) *"), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let header = lines.iter().position(|l| l.starts_with("circuit")).unwrap();
        assert!(lines[header].contains("tcp") && lines[header].ends_with("best"));
        assert!(lines[header + 1].starts_with("-------"));

        let md = r.markdown();
        assert!(md.contains("hosts' TCP congestion control reno, "), "{md}");
        assert!(md.contains("| mincut | ideal | cw-wan | 8200.0 ± 282.8 | **1050.0 ± 70.7** | udt (7.81× tcp) |"), "{md}");

        let csv = r.csv();
        let lines: Vec<&str> = csv.lines().collect();
        assert_eq!(lines.len(), 1 + 3 * 2);
        assert_eq!(
            lines[4],
            "mincut,ideal,cw-wan,udt,2,2,0,0,1050.000,70.711,true,7.810,"
        );
        assert_eq!(
            lines[6],
            "sha256,ideal,eu-us,udt,2,1,1,0,150.000,,false,,connection refused"
        );
        // udt failed one sha256 run on eu-us: the failure table follows.
        assert!(text.contains("condition  tcp          udt\n"), "{text}");
        assert!(
            text.contains("eu-us      0.0* / 0.0*  100.0 / 100.0\n"),
            "{text}"
        );
        assert!(
            md.contains("| condition | tcp | udt |\n|---|---:|---:|\n"),
            "{md}"
        );
        assert!(
            md.contains("| average | **0.0** / **0.0** | 33.3 / 33.3 |"),
            "{md}"
        );
        let j = r.json();
        assert_eq!(j["failures"]["rows"][1]["cells"][1]["failed"], 1);
        assert_eq!(j["rows"][1]["best"], 1);
        assert_eq!(j["transports"][1], "udt");
        assert_eq!(j["experiment"]["environment"]["host_cc"], "reno");
        assert_eq!(j["experiment"]["environment"]["emulator"], "emu");

        // An experiment recorded before the hosts' congestion control was: unknown.
        let mut old = r.clone();
        if let Some(e) = old.experiment.as_mut() {
            e.environment.host_cc = None;
        }
        assert!(
            old.text()
                .contains("hosts' TCP congestion control unknown, "),
            "{}",
            old.text()
        );
        assert!(old.json()["experiment"]["environment"]["host_cc"].is_null());
    }

    #[test]
    fn cells_without_success_say_why() {
        let one = |status, n| CellStats {
            runs: n,
            failed: if status == Status::Failed { n } else { 0 },
            timeouts: if status == Status::Timeout { n } else { 0 },
            ..CellStats::default()
        };
        assert_eq!(one(Status::Failed, 1).text(), "failed");
        assert_eq!(one(Status::Timeout, 3).text(), "timeout ×3");
        assert_eq!(CellStats::default().text(), "–");
        assert_eq!(csv_field("a,\"b\""), "\"a,\"\"b\"\"\"");
    }
}
