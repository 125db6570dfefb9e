//! What the parties of a run reported: each party's reports (one per computation of the
//! run's session, read through the contract's [`PartyReport`]), checked against each other
//! and summed up in the run's record.
//!
//! The record keeps computation 1's times and bytes (a fresh session: what these columns
//! have always meant), the number of computations, and the evaluator's online time of the
//! further ones (their median and maximum). A party that printed another number of reports
//! than the session held or printed them out of order, outputs the parties disagree on, an
//! output that differs from computation 1's (the runner gives every computation the same
//! inputs, so the function gives the same output), or a garbler whose reports name
//! different sessions fail the run with a message naming the computation.
//!
//! A run of `auto` records what the evaluator's report says of the choice (computation 1's:
//! the session's one agreement); a party that reports no choice, or parties that report
//! different ones, fail it.

use transputation_contract::PartyReport;

use crate::db::{LinkRecord, RunRecord};
use crate::experiment::PlannedRun;
use crate::stats::median;

/// What two successful parties reported, checked.
pub(super) struct Measured {
    /// The garbler's reports, computation 1 first.
    garbler: Vec<PartyReport>,
    /// The evaluator's, likewise.
    evaluator: Vec<PartyReport>,
    /// The evaluator's online times of computations 2, 3, ..., ms.
    further_online_ms: Vec<f64>,
}

/// Reads both parties' reports of a session of `computations` computations and checks
/// them (see the module docs).
pub(super) fn measured(
    garbler_out: &str,
    evaluator_out: &str,
    computations: u32,
) -> Result<Measured, String> {
    let g = PartyReport::stream_from_json("garbler", garbler_out).map_err(|e| e.to_string())?;
    let e = PartyReport::stream_from_json("evaluator", evaluator_out).map_err(|e| e.to_string())?;
    check_numbering("garbler", &g, computations)?;
    check_numbering("evaluator", &e, computations)?;
    check_outputs(&g, &e)?;
    check_one_session(&g)?;
    let further_online_ms = e[1..]
        .iter()
        .map(|r| {
            r.online_ms.ok_or_else(|| {
                format!(
                    "the evaluator's report of computation {} has no online_ms",
                    r.computation
                )
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(Measured {
        garbler: g,
        evaluator: e,
        further_online_ms,
    })
}

/// `1 report`, `3 reports`.
fn count(n: usize, what: &str) -> String {
    if n == 1 {
        format!("1 {what}")
    } else {
        format!("{n} {what}s")
    }
}

/// Checks that `who` printed one report per computation, numbered 1, 2, ... in order.
fn check_numbering(who: &str, reports: &[PartyReport], computations: u32) -> Result<(), String> {
    if reports.len() != computations as usize {
        return Err(format!(
            "the {who} printed {} for a session of {}",
            count(reports.len(), "report"),
            count(computations as usize, "computation")
        ));
    }
    for (expected, r) in (1..).zip(reports) {
        if r.computation != expected {
            return Err(format!(
                "the {who}'s report {expected} is of computation {} (its reports must be of \
                 computations 1 to {computations}, in order)",
                r.computation
            ));
        }
    }
    Ok(())
}

/// An output for a message: `"66e9..."` or `null`.
fn show(o: &Option<String>) -> String {
    o.as_deref().map_or("null".into(), |s| format!("{s:?}"))
}

/// Checks, computation by computation, that a garbler that learns the output agrees with
/// the evaluator, and that the evaluator's output is computation 1's (the same inputs).
fn check_outputs(g: &[PartyReport], e: &[PartyReport]) -> Result<(), String> {
    let several = e.len() > 1;
    for (n, (g, e_n)) in (1..).zip(g.iter().zip(e)) {
        let which = if several {
            format!("computation {n}: ")
        } else {
            String::new()
        };
        if g.output.is_some() && g.output != e_n.output {
            return Err(format!(
                "{which}the parties disagree on the output: garbler {}, evaluator {}",
                show(&g.output),
                show(&e_n.output)
            ));
        }
        if e_n.output != e[0].output {
            return Err(format!(
                "{which}the evaluator's output {} differs from computation 1's {} (every \
                 computation of a run has the same inputs)",
                show(&e_n.output),
                show(&e[0].output)
            ));
        }
    }
    Ok(())
}

/// Checks that the garbler served every computation in one session.
fn check_one_session(g: &[PartyReport]) -> Result<(), String> {
    let session = |s: Option<u64>| s.map_or("none".into(), |s| s.to_string());
    match g.iter().find(|r| r.session != g[0].session) {
        Some(r) => Err(format!(
            "the garbler's report of computation {} is of session {}, that of computation 1 \
             of session {}: a run's computations share one session",
            r.computation,
            session(r.session),
            session(g[0].session)
        )),
        None => Ok(()),
    }
}

impl Measured {
    /// Checks, for a run of `auto`, that both parties report the choice and the same one.
    pub(super) fn checked_auto(self, auto: bool) -> Result<Self, String> {
        if !auto {
            return Ok(self);
        }
        let choice = |who: &str, r: &PartyReport| {
            r.auto.as_ref().map(|a| a.chosen.clone()).ok_or_else(|| {
                format!(
                    "the {who}'s report says nothing of auto's choice (its transport: {}): \
                     was it run with --transport auto?",
                    r.transport
                )
            })
        };
        let g = choice("garbler", &self.garbler[0])?;
        let e = choice("evaluator", &self.evaluator[0])?;
        if g != e {
            return Err(format!(
                "the parties report different choices of auto: garbler {g}, evaluator {e}"
            ));
        }
        Ok(self)
    }
}

/// Reports as the database keeps them: one compact JSON line per computation.
fn lines(reports: &[PartyReport]) -> String {
    reports
        .iter()
        .map(|r| r.to_json_value().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

impl Measured {
    /// The run's record (computation 1's times: the garbler's total, garbling and paper
    /// measure, the evaluator's OT, evaluation, connect, handshake and first output; each
    /// party's round trips; bytes as the garbler counted them; then the computations and
    /// the evaluator's online time of the further ones).
    pub(super) fn into_record(self, p: &PlannedRun, link: &LinkRecord) -> RunRecord {
        let (g, e) = (&self.garbler[0], &self.evaluator[0]);
        let transfer = (g.total_ms - e.ot_ms - g.garble_ms - e.eval_ms).max(0.0);
        let auto = e.auto.as_ref();
        RunRecord {
            total_ms: Some(g.total_ms),
            ot_ms: Some(e.ot_ms),
            garble_ms: Some(g.garble_ms),
            eval_ms: Some(e.eval_ms),
            transfer_ms: Some(transfer),
            bytes_garbler_to_evaluator: Some(g.bytes_garbler_to_evaluator),
            bytes_evaluator_to_garbler: Some(g.bytes_evaluator_to_garbler),
            buffer_bytes: g.buffer_bytes.or(e.buffer_bytes),
            connect_ms: e.connect_ms,
            handshake_ms: Some(e.handshake_ms),
            first_output_ms: e.first_output_ms,
            paper_ms: Some(g.paper_ms),
            garbler_round_trips: Some(g.round_trips),
            evaluator_round_trips: Some(e.round_trips),
            computations: u32::try_from(self.evaluator.len()).unwrap_or(u32::MAX),
            online_ms: median(&self.further_online_ms),
            online_max_ms: self.further_online_ms.iter().copied().reduce(f64::max),
            auto_choice: auto.map(|a| a.chosen.clone()),
            auto_predicted_ms: auto.map(|a| a.predicted_ms),
            auto_probe_ms: auto.and_then(|a| a.probe_ms),
            auto_agree_ms: auto.and_then(|a| a.agree_ms),
            garbler_backend: Some(g.backend.clone()),
            evaluator_backend: Some(e.backend.clone()),
            // The last report's: a high-water mark, it covers every computation before it.
            garbler_peak_rss_bytes: self.garbler.last().and_then(|r| r.peak_rss_bytes),
            evaluator_peak_rss_bytes: self.evaluator.last().and_then(|r| r.peak_rss_bytes),
            garbler_report: Some(lines(&self.garbler)),
            evaluator_report: Some(lines(&self.evaluator)),
            ..RunRecord::ok(p.cell.clone(), p.repetition, link.clone())
        }
    }
}

#[cfg(test)]
mod tests;
