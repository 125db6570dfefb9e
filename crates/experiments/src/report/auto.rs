//! What a report says of `auto`: per row, the transport it chose (the most common choice
//! of its successful runs, and how many made it) and how far its time to the output was
//! from the fastest transport of the row; per report, a summary against the bar
//! (within 10 % or 30 ms of the fastest, never more than 10 % slower than `tcp`) and the
//! model's prediction against what its choice measured.
//!
//! The time to the output is what a user waits for: the evaluator's `first_output_ms`
//! (its process start until it held the output; for `auto`, probing and agreeing
//! included), else `total_ms + connect_ms`, each run's median over the cell. The fastest is
//! the lowest median among the row's other transports whose every run succeeded (a
//! transport that failed a run is not the one to beat, as it is not the row's best). A
//! cell where `auto` failed a run is counted, and never as within.
//!
//! The model's ratio is, per successful `auto` run, its `auto_predicted_ms` over what the
//! chosen transport took to the output in that run: `total_ms + connect_ms` less the
//! probe and the agreement (which the prediction leaves out).

use serde::Serialize;

use crate::db::{RunRecord, Status};
use crate::stats::median;

/// Within this fraction of the fastest, `auto` chose well enough (or [`WITHIN_MS`]).
pub const WITHIN_FRACTION: f64 = 0.10;

/// Within this many ms of the fastest, `auto` chose well enough (or [`WITHIN_FRACTION`],
/// whichever is larger).
pub const WITHIN_MS: f64 = 30.0;

/// More than this fraction slower than `tcp` is a choice worse than the default.
pub const SLOWER_THAN_TCP_FRACTION: f64 = 0.10;

/// A run's time to the output, ms: `first_output_ms`, else `total_ms + connect_ms`.
pub fn time_to_output(r: &RunRecord) -> Option<f64> {
    r.first_output_ms
        .or_else(|| Some(r.total_ms? + r.connect_ms?))
}

/// The median time to the output of `runs`' successful runs.
pub fn output_median(runs: &[&RunRecord]) -> Option<f64> {
    let times: Vec<f64> = runs
        .iter()
        .filter(|r| r.status == Status::Ok)
        .filter_map(|r| time_to_output(r))
        .collect();
    median(&times)
}

/// The model's prediction over what the choice measured, in a successful `auto` run.
fn predicted_ratio(r: &RunRecord) -> Option<f64> {
    let predicted = r.auto_predicted_ms?;
    let measured = r.total_ms? + r.connect_ms?
        - r.auto_probe_ms.unwrap_or(0.0)
        - r.auto_agree_ms.unwrap_or(0.0);
    (r.status == Status::Ok && measured > 0.0).then(|| predicted / measured)
}

/// Another transport of the row, as the comparison needs it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rival {
    /// Its column.
    pub column: usize,
    /// Its name as written.
    pub transport: String,
    /// Its median time to the output.
    pub output_median_ms: Option<f64>,
    /// Whether every one of its runs succeeded.
    pub all_ok: bool,
}

/// `auto` in one row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct AutoCell {
    /// The `auto` column.
    pub column: usize,
    /// The choice most of its successful runs made (the first by name among equals).
    pub choice: Option<String>,
    /// How many runs made it.
    pub choice_runs: usize,
    /// Its successful runs.
    pub ok_runs: usize,
    /// Its runs.
    pub runs: usize,
    /// Its median time to the output, ms.
    pub output_median_ms: Option<f64>,
    /// The fastest other transport (as written), if one succeeded every run.
    pub fastest: Option<String>,
    /// Its median time to the output, ms.
    pub fastest_output_ms: Option<f64>,
    /// `auto`'s median less the fastest's, ms (negative: `auto` was faster).
    pub gap_ms: Option<f64>,
    /// The gap over the fastest's median, %.
    pub gap_pct: Option<f64>,
    /// Whether every run succeeded within 10 % or 30 ms (whichever is larger) of the
    /// fastest; `None` without a fastest.
    pub within: Option<bool>,
    /// Whether `auto` was more than 10 % slower than `tcp` (a column of the row whose every
    /// run succeeded); `None` without it.
    pub slower_than_tcp: Option<bool>,
    /// The model's predicted over measured time of the choice, each run's (see the module
    /// docs).
    pub predicted_ratios: Vec<f64>,
}

impl AutoCell {
    /// `auto` in column `column`, from its runs and the row's other transports.
    pub fn of(column: usize, runs: &[&RunRecord], rivals: &[Rival]) -> AutoCell {
        let ok: Vec<&RunRecord> = runs
            .iter()
            .copied()
            .filter(|r| r.status == Status::Ok)
            .collect();
        let mut choices: Vec<(&str, usize)> = Vec::new();
        for c in ok.iter().filter_map(|r| r.auto_choice.as_deref()) {
            match choices.iter_mut().find(|(x, _)| *x == c) {
                Some((_, n)) => *n += 1,
                None => choices.push((c, 1)),
            }
        }
        // Most runs first, then by name, so that a tie reads the same every time.
        choices.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
        let output_median_ms = output_median(runs);
        let fastest = rivals
            .iter()
            .filter(|r| r.all_ok && r.column != column)
            .filter_map(|r| r.output_median_ms.map(|m| (r, m)))
            .min_by(|a, b| a.1.total_cmp(&b.1));
        let all_ok = !runs.is_empty() && ok.len() == runs.len();
        let gap_ms = match (output_median_ms, fastest) {
            (Some(a), Some((_, f))) => Some(a - f),
            _ => None,
        };
        let gap_pct = match (gap_ms, fastest) {
            (Some(g), Some((_, f))) if f > 0.0 => Some(g / f * 100.0),
            _ => None,
        };
        let within = fastest.map(|(_, f)| {
            all_ok && gap_ms.is_some_and(|g| g <= (WITHIN_FRACTION * f).max(WITHIN_MS))
        });
        let tcp = rivals
            .iter()
            .find(|r| r.transport == "tcp" && r.all_ok)
            .and_then(|r| r.output_median_ms);
        let slower_than_tcp = match (output_median_ms, tcp) {
            (Some(a), Some(t)) => Some(a > t * (1.0 + SLOWER_THAN_TCP_FRACTION)),
            _ => None,
        };
        AutoCell {
            column,
            choice: choices.first().map(|(c, _)| c.to_string()),
            choice_runs: choices.first().map_or(0, |(_, n)| *n),
            ok_runs: ok.len(),
            runs: runs.len(),
            output_median_ms,
            fastest: fastest.map(|(r, _)| r.transport.clone()),
            fastest_output_ms: fastest.map(|(_, m)| m),
            gap_ms,
            gap_pct,
            within,
            slower_than_tcp,
            predicted_ratios: ok.iter().filter_map(|r| predicted_ratio(r)).collect(),
        }
    }

    /// The choice as shown: `quic:cc=bbr,iw=2500000 (3 of 3)`, or `–`.
    pub fn choice_text(&self) -> String {
        match &self.choice {
            Some(c) => format!("{c} ({} of {})", self.choice_runs, self.ok_runs),
            None => "–".into(),
        }
    }

    /// The gap as shown: `+4.2 % (+31.0 ms) vs tcp-bbr`, or `–`.
    pub fn gap_text(&self) -> String {
        match (self.gap_pct, self.gap_ms, &self.fastest) {
            (Some(p), Some(ms), Some(f)) => format!("{p:+.1} % ({ms:+.1} ms) vs {f}"),
            _ => "–".into(),
        }
    }
}

/// The report's summary of `auto` over its rows.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct AutoSummary {
    /// Rows with `auto` and a fastest transport to compare with.
    pub cells: usize,
    /// Of those, rows where `auto` was within 10 % or 30 ms of the fastest.
    pub within: usize,
    /// Rows with `auto` and `tcp` both measured.
    pub cells_with_tcp: usize,
    /// Of those, rows where `auto` was more than 10 % slower than `tcp`.
    pub slower_than_tcp: usize,
    /// Rows where an `auto` run failed or timed out.
    pub failed: usize,
    /// The median over every successful `auto` run of the model's predicted over measured
    /// time of its choice.
    pub predicted_ratio_median: Option<f64>,
}

impl AutoSummary {
    /// The summary of the rows' `auto` cells; `None` without any.
    pub fn of<'a>(cells: impl IntoIterator<Item = &'a AutoCell>) -> Option<AutoSummary> {
        let mut s = AutoSummary::default();
        let mut ratios = Vec::new();
        let mut any = false;
        for c in cells {
            any = true;
            if let Some(w) = c.within {
                s.cells += 1;
                s.within += usize::from(w);
            }
            if let Some(slower) = c.slower_than_tcp {
                s.cells_with_tcp += 1;
                s.slower_than_tcp += usize::from(slower);
            }
            s.failed += usize::from(c.ok_runs < c.runs);
            ratios.extend_from_slice(&c.predicted_ratios);
        }
        s.predicted_ratio_median = median(&ratios);
        any.then_some(s)
    }

    /// The summary line.
    pub fn text(&self) -> String {
        let mut line = format!(
            "auto within {:.0} % or {WITHIN_MS:.0} ms of the fastest in {} of {} cells; more \
             than {:.0} % slower than tcp in {} of {} cells",
            WITHIN_FRACTION * 100.0,
            self.within,
            self.cells,
            SLOWER_THAN_TCP_FRACTION * 100.0,
            self.slower_than_tcp,
            self.cells_with_tcp
        );
        if self.failed > 0 {
            line.push_str(&format!("; a run of auto failed in {} cells", self.failed));
        }
        match self.predicted_ratio_median {
            Some(r) => line.push_str(&format!(
                "; model's predicted/measured for the chosen transport: median ratio {r:.2}"
            )),
            None => line.push_str("; no prediction recorded"),
        }
        line
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::LinkRecord;
    use crate::experiment::Cell;

    fn run(transport: &str, first_output: f64) -> RunRecord {
        let cell = Cell {
            circuit: "aes128".into(),
            scheme: "ideal".into(),
            transport: transport.into(),
            condition: "wan".into(),
        };
        RunRecord {
            total_ms: Some(first_output - 300.0),
            connect_ms: Some(100.0),
            first_output_ms: Some(first_output),
            ..RunRecord::ok(cell, 0, LinkRecord::default())
        }
    }

    fn auto_run(chosen: &str, first_output: f64) -> RunRecord {
        RunRecord {
            auto_choice: Some(chosen.into()),
            auto_predicted_ms: Some(550.0),
            auto_probe_ms: Some(40.0),
            auto_agree_ms: Some(10.0),
            ..run("auto", first_output)
        }
    }

    fn rival(column: usize, transport: &str, median: f64, all_ok: bool) -> Rival {
        Rival {
            column,
            transport: transport.into(),
            output_median_ms: Some(median),
            all_ok,
        }
    }

    #[test]
    fn the_time_to_the_output_is_the_evaluators_else_the_protocol_and_connection() {
        let r = run("tcp", 900.0);
        assert_eq!(time_to_output(&r), Some(900.0));
        let older = RunRecord {
            first_output_ms: None,
            ..r.clone()
        };
        assert_eq!(time_to_output(&older), Some(700.0));
        let oldest = RunRecord {
            connect_ms: None,
            ..older
        };
        assert_eq!(time_to_output(&oldest), None);
    }

    #[test]
    fn the_choice_the_gap_and_the_verdicts_of_a_cell() {
        let runs = [
            auto_run("quic:cc=bbr,iw=2500000", 1000.0),
            auto_run("tcp-bbr", 1100.0),
            auto_run("quic:cc=bbr,iw=2500000", 1040.0),
        ];
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let rivals = [
            rival(0, "tcp", 2000.0, true),
            // Faster, but it failed a run: not the one to beat.
            rival(1, "udt", 500.0, false),
            rival(2, "tcp-bbr", 980.0, true),
        ];
        let c = AutoCell::of(3, &refs, &rivals);
        assert_eq!(c.choice_text(), "quic:cc=bbr,iw=2500000 (2 of 3)");
        assert_eq!(c.output_median_ms, Some(1040.0));
        assert_eq!(c.fastest.as_deref(), Some("tcp-bbr"));
        assert_eq!(c.gap_ms, Some(60.0));
        assert_eq!(c.gap_text(), "+6.1 % (+60.0 ms) vs tcp-bbr");
        // 60 ms is within 10 % of 980 ms (98 ms); far from tcp's 2 s.
        assert_eq!((c.within, c.slower_than_tcp), (Some(true), Some(false)));
        // 550 predicted over (1040 − 300 + 100 − 40 − 10) = 790 measured, and so on.
        assert_eq!(c.predicted_ratios.len(), 3);
        assert!((c.predicted_ratios[2] - 550.0 / 790.0).abs() < 1e-12);

        // Beyond both 10 % and 30 ms: not within; and slower than tcp by more than 10 %.
        let slow = [auto_run("udt", 1200.0)];
        let c = AutoCell::of(
            1,
            &slow.iter().collect::<Vec<_>>(),
            &[rival(0, "tcp", 1000.0, true)],
        );
        assert_eq!((c.within, c.slower_than_tcp), (Some(false), Some(true)));
        assert_eq!(c.gap_text(), "+20.0 % (+200.0 ms) vs tcp");
        // On a fast cell the 30 ms count: 125 ms against 100 ms is within.
        let fast = [auto_run("tcp", 125.0)];
        let c = AutoCell::of(
            1,
            &fast.iter().collect::<Vec<_>>(),
            &[rival(0, "tcp", 100.0, true)],
        );
        assert_eq!(c.within, Some(true));
        assert_eq!(c.slower_than_tcp, Some(true));
        // Faster than the fastest: a negative gap.
        let c = AutoCell::of(
            1,
            &fast.iter().collect::<Vec<_>>(),
            &[rival(0, "udt", 150.0, true)],
        );
        assert_eq!(c.gap_text(), "-16.7 % (-25.0 ms) vs udt");
        assert_eq!(c.slower_than_tcp, None);
    }

    #[test]
    fn a_failed_run_of_auto_is_never_within() {
        let runs = [
            auto_run("tcp", 1000.0),
            RunRecord::failed(
                run("auto", 0.0).cell,
                1,
                LinkRecord::default(),
                Status::Failed,
                "auto: no transport connected".into(),
            ),
        ];
        let refs: Vec<&RunRecord> = runs.iter().collect();
        let c = AutoCell::of(1, &refs, &[rival(0, "tcp", 1000.0, true)]);
        assert_eq!((c.ok_runs, c.runs, c.within), (1, 2, Some(false)));
        // No rival succeeded every run: nothing to compare with.
        let none = AutoCell::of(1, &refs, &[rival(0, "tcp", 1000.0, false)]);
        assert_eq!((none.within, none.gap_text().as_str()), (None, "–"));

        let good = auto_run("tcp", 1000.0);
        let within = AutoCell::of(1, &[&good], &[rival(0, "tcp", 1000.0, true)]);
        let s = AutoSummary::of([&c, &within]).unwrap();
        assert_eq!(
            (
                s.cells,
                s.within,
                s.cells_with_tcp,
                s.slower_than_tcp,
                s.failed
            ),
            (2, 1, 2, 0, 1)
        );
        // 550 predicted over 700 + 100 − 40 − 10 = 750 measured in both successful runs.
        assert_eq!(
            s.text(),
            "auto within 10 % or 30 ms of the fastest in 1 of 2 cells; more than 10 % slower \
             than tcp in 0 of 2 cells; a run of auto failed in 1 cells; model's \
             predicted/measured for the chosen transport: median ratio 0.73"
        );
        assert_eq!(AutoSummary::of([]), None);
    }
}
