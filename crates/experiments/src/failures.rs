//! The failure table of Choose Wisely (Ziegeldorf et al., Table IV): per network condition
//! and per choice (here a transport as the experiment wrote it with a garbling scheme, there
//! a framework), the share
//! of evaluation settings that failed, once without and once with the settings that only
//! ran out of time.
//!
//! An evaluation setting is one circuit (a benchmark at one input size) under one
//! condition with one choice. It counts as failed if any of its runs failed with an error,
//! and as failed-or-timed-out if any run failed or hit the time limit: a setting a user
//! cannot rely on. The last row averages over every setting of the experiment (Choose
//! Wisely averages its rows, which is the same when every row has as many settings). In
//! each row the lowest percentage of each kind is marked, as the paper marks its minima.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::db::{RunRecord, Status};
use crate::stats::index_or_push;

/// The settings of one row and column, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct FailureCell {
    /// Evaluation settings with at least one recorded run.
    pub settings: usize,
    /// Of those, settings where a run failed with an error.
    pub failed: usize,
    /// Of those, settings where a run failed or timed out.
    pub failed_or_timed_out: usize,
}

impl FailureCell {
    /// Percent of settings that failed, timeouts excluded.
    pub fn failed_pct(&self) -> Option<f64> {
        pct(self.failed, self.settings)
    }

    /// Percent of settings that failed or timed out.
    pub fn with_timeouts_pct(&self) -> Option<f64> {
        pct(self.failed_or_timed_out, self.settings)
    }

    fn add(&mut self, other: FailureCell) {
        self.settings += other.settings;
        self.failed += other.failed;
        self.failed_or_timed_out += other.failed_or_timed_out;
    }
}

fn pct(n: usize, of: usize) -> Option<f64> {
    (of > 0).then(|| 100.0 * n as f64 / of as f64)
}

/// One condition across the choices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureRow {
    /// The condition's label, or `average`.
    pub condition: String,
    /// One per column of [`FailureTable::columns`].
    pub cells: Vec<FailureCell>,
}

/// Conditions × choices, as Choose Wisely's Table IV.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct FailureTable {
    /// The choices: `transport` when the experiment used one scheme, else
    /// `transport scheme`.
    pub columns: Vec<String>,
    /// One row per condition, in the order the runs first appear, then the average.
    pub rows: Vec<FailureRow>,
}

impl FailureTable {
    /// Counts the settings of `runs`.
    pub fn build(runs: &[RunRecord]) -> Self {
        let (mut schemes, mut conditions) = (Vec::new(), Vec::new());
        let mut choices: Vec<(&str, &str)> = Vec::new();
        // Per setting (condition, choice, circuit): whether a run failed, and whether any
        // run did not succeed.
        let mut settings: BTreeMap<(usize, usize, &str), (bool, bool)> = BTreeMap::new();
        for r in runs {
            let c = &r.cell;
            index_or_push(&mut schemes, c.scheme.as_str());
            let row = index_or_push(&mut conditions, c.condition.as_str());
            // A transport with `{bdp}` is one choice across the conditions.
            let col = index_or_push(&mut choices, (r.transport_as_written(), c.scheme.as_str()));
            let s = settings.entry((row, col, &c.circuit)).or_default();
            s.0 |= r.status == Status::Failed;
            s.1 |= r.status != Status::Ok;
        }
        let mut rows: Vec<FailureRow> = conditions
            .iter()
            .map(|c| FailureRow {
                condition: c.to_string(),
                cells: vec![FailureCell::default(); choices.len()],
            })
            .collect();
        let mut average = vec![FailureCell::default(); choices.len()];
        for (&(row, col, _), &(failed, bad)) in &settings {
            let one = FailureCell {
                settings: 1,
                failed: usize::from(failed),
                failed_or_timed_out: usize::from(bad),
            };
            rows[row].cells[col].add(one);
            average[col].add(one);
        }
        rows.push(FailureRow {
            condition: "average".into(),
            cells: average,
        });
        let columns = choices
            .iter()
            .map(|(t, s)| {
                if schemes.len() > 1 {
                    format!("{t} {s}")
                } else {
                    t.to_string()
                }
            })
            .collect();
        FailureTable { columns, rows }
    }

    /// Whether any setting failed or timed out.
    pub fn any(&self) -> bool {
        self.rows
            .iter()
            .flat_map(|r| &r.cells)
            .any(|c| c.failed_or_timed_out > 0)
    }

    /// The header line of the table.
    pub fn title() -> &'static str {
        "failed settings (circuit × condition × choice) in %, without / with timeouts, as \
         Choose Wisely's Table IV; the lowest of a row marked"
    }

    /// The column headers.
    pub fn headers(&self) -> Vec<String> {
        let mut h = vec!["condition".to_string()];
        h.extend(self.columns.iter().cloned());
        h
    }

    /// The cells as text, `failed / with timeouts`, each lowest of its row passed through
    /// `mark`.
    pub fn cells(&self, mark: impl Fn(&str) -> String) -> Vec<Vec<String>> {
        self.cells_with(|t| t.to_string(), mark)
    }

    /// [`FailureTable::cells`], every text that is not a row's lowest passed through
    /// `plain` (for a format that escapes its text, such as HTML).
    pub fn cells_with(
        &self,
        plain: impl Fn(&str) -> String,
        mark: impl Fn(&str) -> String,
    ) -> Vec<Vec<String>> {
        self.rows
            .iter()
            .map(|row| {
                let low = |f: fn(&FailureCell) -> Option<f64>| {
                    row.cells.iter().filter_map(f).min_by(f64::total_cmp)
                };
                let (low_failed, low_with) = (
                    low(FailureCell::failed_pct),
                    low(FailureCell::with_timeouts_pct),
                );
                let mut v = vec![plain(&row.condition)];
                for c in &row.cells {
                    let one = |p: Option<f64>, low: Option<f64>| match p {
                        None => plain("–"),
                        Some(p) if Some(p) == low => mark(&format!("{p:.1}")),
                        Some(p) => plain(&format!("{p:.1}")),
                    };
                    v.push(format!(
                        "{}{}{}",
                        one(c.failed_pct(), low_failed),
                        plain(" / "),
                        one(c.with_timeouts_pct(), low_with)
                    ));
                }
                v
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::LinkRecord;
    use crate::experiment::Cell;

    fn run(circuit: &str, scheme: &str, transport: &str, condition: &str, s: Status) -> RunRecord {
        let cell = Cell {
            circuit: circuit.into(),
            scheme: scheme.into(),
            transport: transport.into(),
            condition: condition.into(),
        };
        let r = RunRecord::failed(cell, 0, LinkRecord::default(), s, String::new());
        RunRecord {
            total_ms: (s == Status::Ok).then_some(1.0),
            ..r
        }
    }

    #[test]
    fn settings_count_once_whatever_their_runs() {
        use Status::{Failed, Ok, Timeout};
        let runs = [
            // tcp on cw-lan: add fine, min failed once of two runs, argmin timed out.
            run("add", "ideal", "tcp", "cw-lan", Ok),
            run("add", "ideal", "tcp", "cw-lan", Ok),
            run("min", "ideal", "tcp", "cw-lan", Ok),
            run("min", "ideal", "tcp", "cw-lan", Failed),
            run("argmin", "ideal", "tcp", "cw-lan", Timeout),
            run("add", "ideal", "udt", "cw-lan", Ok),
            run("min", "ideal", "udt", "cw-lan", Ok),
            run("argmin", "ideal", "udt", "cw-lan", Ok),
            // cw-3g: everything times out on tcp, udt fails one.
            run("add", "ideal", "tcp", "cw-3g", Timeout),
            run("add", "ideal", "udt", "cw-3g", Failed),
        ];
        let t = FailureTable::build(&runs);
        assert_eq!(t.columns, ["tcp", "udt"]);
        assert_eq!(t.rows.len(), 3);
        let lan = &t.rows[0];
        assert_eq!(lan.condition, "cw-lan");
        assert_eq!(
            lan.cells[0],
            FailureCell {
                settings: 3,
                failed: 1,
                failed_or_timed_out: 2
            }
        );
        assert_eq!(lan.cells[1].failed_or_timed_out, 0);
        let avg = &t.rows[2];
        assert_eq!(avg.condition, "average");
        assert_eq!(
            avg.cells[0],
            FailureCell {
                settings: 4,
                failed: 1,
                failed_or_timed_out: 3
            }
        );
        assert_eq!(avg.cells[1].failed_pct(), Some(25.0));
        assert!(t.any());
        let text = t.cells(|s| format!("{s}*"));
        assert_eq!(text[0], ["cw-lan", "33.3 / 66.7", "0.0* / 0.0*"]);
        assert_eq!(text[1], ["cw-3g", "0.0* / 100.0*", "100.0 / 100.0*"]);
        assert_eq!(text[2], ["average", "25.0* / 75.0", "25.0* / 25.0*"]);
        // Every text but the marked ones goes through `plain`, the marked ones through `mark`.
        let escaped = t.cells_with(|s| format!("[{s}]"), |s| format!("<{s}>"));
        assert_eq!(
            escaped[0],
            ["[cw-lan]", "[33.3][ / ][66.7]", "<0.0>[ / ]<0.0>"]
        );
    }

    #[test]
    fn a_transport_with_bdp_is_one_choice_across_the_conditions() {
        let mut runs = Vec::new();
        for (condition, iw, status) in [
            ("wan", 2_500_000, Status::Failed),
            ("lan", 3750, Status::Ok),
        ] {
            let mut r = run("add", "ideal", &format!("quic:iw={iw}"), condition, status);
            r.transport_written = Some("quic:iw={bdp}".into());
            runs.push(r);
        }
        let t = FailureTable::build(&runs);
        assert_eq!(t.columns, ["quic:iw={bdp}"]);
        assert_eq!(t.rows[2].cells[0].failed_pct(), Some(50.0));
    }

    #[test]
    fn columns_name_the_scheme_when_there_are_several() {
        let runs = [
            run("add", "ideal", "tcp", "lan", Status::Ok),
            run("add", "prf", "tcp", "lan", Status::Ok),
        ];
        let t = FailureTable::build(&runs);
        assert_eq!(t.columns, ["tcp ideal", "tcp prf"]);
        assert!(!t.any());
        assert_eq!(FailureTable::build(&[]).rows.len(), 1);
    }
}
