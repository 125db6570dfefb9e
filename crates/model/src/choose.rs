//! The choice among candidate transports: each predicted at the loss estimate and at its
//! upper bound, ranked by minimax regret, with one line on why the first beat the second.

use serde::{Deserialize, Serialize};

use crate::{predict, Calibration, Conditions, Limit, Path, Prediction, TransportModel, Workload};

/// A transport the selector may choose: its name as a user writes it, and its model.
#[derive(Debug, Clone, PartialEq)]
pub struct Candidate {
    /// The canonical transport string (`quic:cc=bbr,iw=15000000`).
    pub name: String,
    /// Its model.
    pub model: TransportModel,
    /// Whether it may be chosen (a transport that fails on any loss is predicted, for the
    /// table, but never chosen).
    pub eligible: bool,
    /// Whether it is the *incumbent*: what a session without `auto` runs (kernel TCP with
    /// the host's congestion control). The choice leaves it only for a clear gain
    /// ([`LEAVE_AT_ESTIMATE`], [`LEAVE_AT_BOUND`], [`LEAVE_SECONDS`]).
    pub incumbent: bool,
    /// Whether it is the *fallback*: the incumbent's transport with a loss-tolerant
    /// congestion control (kernel TCP with BBR, where the host runs another). A choice
    /// that leaves the incumbent leaves the fallback too only for a clear gain over it, by
    /// narrower margins ([`FALLBACK_AT_ESTIMATE`], [`FALLBACK_AT_BOUND`]): leaving the host's controller (for a loss its probe could not rule
    /// out, mostly) is the smaller step within the same kernel stack, whose fixed costs
    /// and CPU time per byte the model fits best.
    pub fallback: bool,
}

/// One candidate's place in a decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Ranked {
    /// The transport string.
    pub name: String,
    /// Its calibration key.
    pub key: String,
    /// The prediction at the loss estimate, or why it cannot carry the session.
    pub expected: Result<Prediction, String>,
    /// The prediction at the loss bound (absent when the bound is the estimate).
    pub at_bound: Option<Result<Prediction, String>>,
    /// Its worse ratio to the best candidate at either loss (1 = best at both), each
    /// time weighed by its model's error ([`CAUTION`]).
    pub regret: Option<f64>,
    /// Its model's error, the rms of ln(predicted / measured) ([`crate::Constants::error`]).
    #[serde(default)]
    pub error: f64,
    /// Whether it may be chosen.
    pub eligible: bool,
}

impl Ranked {
    /// Its predicted seconds at the loss estimate, if it can carry the session.
    pub fn seconds(&self) -> Option<f64> {
        self.expected.as_ref().ok().map(|p| p.total)
    }

    /// Its predicted seconds at the loss bound (at the estimate where there is no bound),
    /// if it can carry the session there.
    fn seconds_at_bound(&self) -> Option<f64> {
        match &self.at_bound {
            Some(b) => b.as_ref().ok().map(|p| p.total),
            None => self.seconds(),
        }
    }
}

/// A decision: the candidates best first, the choice, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The path it was made for.
    pub path: Path,
    /// Every candidate, the chosen first, then by regret, then the unsuitable.
    pub ranked: Vec<Ranked>,
    /// The chosen transport string (`None` if no candidate can carry the session).
    pub choice: Option<String>,
    /// One line on why.
    pub why: String,
}

impl Decision {
    /// The ranked entry of the choice.
    pub fn chosen(&self) -> Option<&Ranked> {
        let c = self.choice.as_deref()?;
        self.ranked.iter().find(|r| r.name == c)
    }

    /// The eligible candidates that can carry the session, best first: the order in which
    /// to fall back when a transport does not connect.
    pub fn fallbacks(&self) -> impl Iterator<Item = &str> {
        self.ranked
            .iter()
            .filter(|r| r.eligible && r.regret.is_some())
            .map(|r| r.name.as_str())
    }
}

/// Predictions this close (seconds) are a tie whatever their ratio: on a LAN, where a
/// session takes 20–40 ms, the transports' fixed costs (fitted per calibration key at
/// 11–17 ms) differ by about this much, below what their fits tell apart (the LAN's
/// AES-128 went to `mtcp:streams=4` for a predicted 2 ms, and took 32 ms against `tcp`'s
/// 25).
const TIE_SECONDS: f64 = 0.003;

/// How much of a key's prediction error ([`crate::Constants::error`], an rms of log
/// ratios) the choice holds against it: a candidate's time is ranked as `T·e^(CAUTION·σ)`.
/// Two predictions a few percent apart are a toss-up when one of them is often off by
/// half; the one whose model has held should win it. Set on the grid of docs/results/auto
/// (144 cells, 2026-11-27), choosing among the seven fixed transports measured there by
/// their predictions: the measured time was within 10 % (or 30 ms) of the cell's fastest
/// in 112 cells with no caution, 129 with 0.1, 132 with 0.25, 128 with 0.5 (a plateau
/// between 0.1 and 0.5, and chosen on the same runs the errors came from).
pub const CAUTION: f64 = 0.25;

/// How much faster than the incumbent ([`Candidate::incumbent`]) at the loss estimate a
/// candidate must be predicted for the choice to leave it: the incumbent's time over the
/// candidate's above `1 + LEAVE_AT_ESTIMATE`; or at the loss bound, above `1 +`
/// [`LEAVE_AT_BOUND`]; and either by more than [`LEAVE_SECONDS`]. A user compares `auto`
/// with what they would have run; a choice a few percent ahead in the model is one its
/// error (an rms of 10 to 35 % per transport) can reverse. On short paths the transports'
/// fixed costs decide, and those the model fits least well: on the 2-vCPU Zen 3 VM of
/// docs/results/auto, `blast`, ranked first on the LAN, took 33 ms for AES-128 where
/// kernel TCP took 30, and 114 for SHA-256 under `prf` against 96. The bound's margin is
/// wider, since the bound is what a short probe cannot rule out, not what it measured (a
/// LAN's 32 clean packets still allow 9 % loss, which makes kernel TCP look 12 % slower
/// there); where the bound matters (a lossy path, a large circuit), it is by factors (the
/// MinCut size at 5 ms, 500 Mbit/s and 0.1 % loss: 3.1 s over kernel TCP with cubic,
/// 1.0 s over `blast`, 0.85 s with BBR). Set by
/// replaying the decisions of both grids on their recorded paths against the measured
/// transports (scripts/auto-replay.py): 0.2 and anything from 0.25 to 2 left no cell
/// more than 10 % slower than kernel TCP on the Zen 3 VM's LAN (3 of 12 without the rule)
/// and kept the Zen 4 grid's 139 of 141 cells within 10 % of the fastest.
pub const LEAVE_AT_ESTIMATE: f64 = 0.2;

/// See [`LEAVE_AT_ESTIMATE`]: the margin at the loss bound.
pub const LEAVE_AT_BOUND: f64 = 0.5;

/// The margins that leave the fallback ([`Candidate::fallback`]), as [`LEAVE_AT_ESTIMATE`]
/// and [`LEAVE_AT_BOUND`] do the incumbent (with [`LEAVE_SECONDS`]). Narrower: kernel TCP
/// with BBR and `blast`, what the choice weighs here, are the two transports the model fits
/// best (an rms of 0.07 to 0.11), and the bound tells them apart less than it tells either
/// from cubic. Where the probe could not rule out loss on a short path, the choice used to
/// leave cubic for `blast`, which on the 2-vCPU Zen 3 VM paid for its userspace sending
/// beside a CPU-bound garbler (the MinCut size under `prf` at 5 ms and 500 Mbit/s: 2.16 s
/// against 1.68 over kernel TCP with BBR, 1.70 with cubic). Set by replaying the decisions
/// of both grids of docs/results/auto (scripts/auto-replay.py): with each pair tried here
/// and at the bound (0.05/0.25, 0.1/0.15, 0.1/0.25, 0.1/0.5, 0.15/0.25), the Zen 3 grid's
/// first 54 cells all within 10 % of the fastest and none more than 10 % behind kernel
/// TCP (52 and 2 without the fallback); the Zen 4 grid 139 to 142 of 144 within (141
/// without), 1 behind kernel TCP as before; 0.2/0.5 (the incumbent's) gave 135, losing
/// Choose Wisely's WAN and the MinCut size on lossy or 50 Mbit/s links to BBR, where
/// `blast` was measured 10 to 26 % ahead of it.
pub const FALLBACK_AT_ESTIMATE: f64 = 0.1;

/// See [`FALLBACK_AT_ESTIMATE`]: the margin at the loss bound.
pub const FALLBACK_AT_BOUND: f64 = 0.15;

/// See [`LEAVE_AT_ESTIMATE`]: the least gain, seconds, that leaves the incumbent. What the
/// model leaves out of a session's fixed costs (processes, handshakes, the CPU time of
/// small messages) is common to every transport and shrinks the ratios that decide;
/// on a short path it is most of the session (the Zen 3 VM's LAN: AES-128 predicted at
/// 17 ms, measured at 30–33), so a predicted gain smaller than that error is not one:
/// with 10 ms, a first session decided on the LAN's first probe train (its rate read low)
/// left kernel TCP for `blast` (predicted at 20 ms, kernel TCP with BBR at 29.5; cubic's
/// prediction is not in the report) and took 40 ms against 28. The
/// replays of both grids choose the same at 0 and at 30 ms.
pub const LEAVE_SECONDS: f64 = 0.020;

/// Predicts every candidate and chooses: the smallest worse ratio to the best at the loss
/// estimate and at its bound, each time weighed by its model's error ([`CAUTION`]; ties:
/// the faster at the estimate); then the incumbent instead, unless that choice is clearly
/// faster ([`LEAVE_AT_ESTIMATE`]); and, leaving it, the fallback instead, unless the
/// choice is clearly faster than that ([`FALLBACK_AT_ESTIMATE`]).
pub fn choose(
    path: &Path,
    work: &Workload,
    candidates: &[Candidate],
    cal: &Calibration,
    cond: &Conditions,
) -> Decision {
    let bound = (path.loss_upper > path.loss).then(|| path.at_loss(path.loss_upper));
    let run = |p: &Path, c: &Candidate| {
        let k = cal.constants(&c.model.key, &c.model.defaults);
        predict(p, work, &c.model, &k, &cal.host, cond).map_err(|e| e.0)
    };
    let error = |c: &Candidate| {
        cal.constants(&c.model.key, &c.model.defaults)
            .error
            .max(0.0)
    };
    let caution: Vec<f64> = candidates
        .iter()
        .map(|c| (CAUTION * error(c)).exp())
        .collect();
    let mut ranked: Vec<Ranked> = candidates
        .iter()
        .map(|c| Ranked {
            name: c.name.clone(),
            key: c.model.key.clone(),
            expected: run(&path.at_loss(path.loss), c),
            at_bound: bound.as_ref().map(|b| run(b, c)),
            regret: None,
            error: error(c),
            eligible: c.eligible,
        })
        .collect();
    let best_at = |pick: &dyn Fn(&Ranked) -> Option<f64>| {
        ranked
            .iter()
            .zip(&caution)
            .filter(|(r, _)| r.eligible)
            .filter_map(|(r, f)| Some(pick(r)? * f))
            .fold(f64::INFINITY, f64::min)
    };
    let (best_e, best_b) = (
        best_at(&Ranked::seconds),
        best_at(&Ranked::seconds_at_bound),
    );
    for (r, f) in ranked.iter_mut().zip(&caution) {
        r.regret = match (r.seconds(), r.seconds_at_bound()) {
            (Some(e), Some(b)) => Some((e * f / best_e).max(b * f / best_b)),
            _ => None,
        };
    }
    // Within 1 % of the least regret, or within [`TIE_SECONDS`] of its times, the model
    // cannot tell candidates apart: the one over the fewest connections is chosen (what the
    // model leaves out of several connections, their set-up, striping and competing with
    // each other on a small pipe, only costs), then the one of least regret, then the
    // faster at the estimate, then the first in the registry's order.
    let least = ranked
        .iter()
        .filter(|r| r.eligible)
        .filter_map(|r| Some((r.regret?, r)))
        .min_by(|(a, _), (b, _)| a.total_cmp(b));
    let tied = |r: &Ranked| {
        let Some((least, l)) = least else {
            return false;
        };
        let close = |x: Option<f64>, y: Option<f64>| matches!((x, y), (Some(x), Some(y)) if x <= y + TIE_SECONDS);
        r.regret.is_some_and(|x| x <= least * 1.01)
            || (close(r.seconds(), l.seconds())
                && close(r.seconds_at_bound(), l.seconds_at_bound()))
    };
    let choice = candidates
        .iter()
        .zip(&ranked)
        .filter(|(_, r)| r.eligible && tied(r))
        .min_by(|(ca, ra), (cb, rb)| {
            let regret = |r: &Ranked| r.regret.unwrap_or(f64::INFINITY);
            ca.model
                .streams
                .cmp(&cb.model.streams)
                .then(regret(ra).total_cmp(&regret(rb)))
                .then(seconds(ra).total_cmp(&seconds(rb)))
        })
        .map(|(_, r)| r.name.clone());
    let kept = choice
        .as_deref()
        .and_then(|c| keeps_incumbent(candidates, &ranked, c));
    let choice = kept.as_ref().map(|k| k.holder.name.clone()).or(choice);
    ranked.sort_by(|a, b| {
        let not_chosen = |r: &Ranked| Some(&r.name) != choice.as_ref();
        not_chosen(a)
            .cmp(&not_chosen(b))
            .then(order(a).total_cmp(&order(b)))
            .then(seconds(a).total_cmp(&seconds(b)))
    });
    let why = match kept {
        Some(k) => k.why(),
        None => explain(path, &ranked, choice.is_some()),
    };
    Decision {
        path: *path,
        ranked,
        choice,
        why,
    }
}

/// The incumbent or fallback kept against a choice ([`keeps_incumbent`]).
struct Kept<'c> {
    holder: &'c Candidate,
    /// The choice it was kept against.
    choice: String,
    /// The choice's gains over it at the loss estimate and at the bound.
    gains: (f64, f64),
    /// The gains that would have left it, at the estimate and at the bound.
    margins: (f64, f64),
}

impl Kept<'_> {
    /// The one line on why it was kept.
    fn why(&self) -> String {
        let (gain_e, gain_b) = self.gains;
        let (at_estimate, at_bound) = self.margins;
        let best = &self.choice;
        let incumbent = self.holder;
        format!(
            "{} ({}) is kept: {best}'s predicted gain over it, \
             {:.0} % at the measured loss and {:.0} % at its bound, is short of the {:.0} % \
             or {:.0} % (and {}) that would leave it",
            incumbent.name,
            if incumbent.incumbent {
                "what a session without auto runs"
            } else {
                "kernel TCP with a loss-tolerant controller, for the host's"
            },
            100.0 * gain_e,
            100.0 * gain_b,
            100.0 * at_estimate,
            100.0 * at_bound,
            fmt_seconds(LEAVE_SECONDS)
        )
    }
}

/// The incumbent, where `choice` is another candidate not clearly faster than it (see
/// [`LEAVE_AT_ESTIMATE`]), else the fallback ([`Candidate::fallback`]) where `choice` is
/// not clearly faster than that; with `choice` and its gains over the one kept at the loss
/// estimate and at the bound (its time over the choice's, less 1), and the margins that
/// would have left it.
fn keeps_incumbent<'c>(
    candidates: &'c [Candidate],
    ranked: &[Ranked],
    choice: &str,
) -> Option<Kept<'c>> {
    let holder = |holds: fn(&Candidate) -> bool| candidates.iter().find(|c| holds(c) && c.eligible);
    let standing = [
        (holder(|c| c.incumbent), LEAVE_AT_ESTIMATE, LEAVE_AT_BOUND),
        (
            holder(|c| c.fallback),
            FALLBACK_AT_ESTIMATE,
            FALLBACK_AT_BOUND,
        ),
    ];
    let find = |name: &str| ranked.iter().find(|r| r.name == name);
    for (incumbent, at_estimate, at_bound) in standing {
        let Some(incumbent) = incumbent else {
            continue;
        };
        if incumbent.name == choice {
            return None;
        }
        let (Some(i), Some(c)) = (find(&incumbent.name), find(choice)) else {
            continue;
        };
        // One that cannot carry the session (or not at the bound) is left.
        let (Some(ie), Some(ib)) = (i.seconds(), i.seconds_at_bound()) else {
            continue;
        };
        let (ce, cb) = (c.seconds()?, c.seconds_at_bound()?);
        let (gain_e, gain_b) = (ie / ce - 1.0, ib / cb - 1.0);
        let leaves = (gain_e > at_estimate && ie - ce > LEAVE_SECONDS)
            || (gain_b > at_bound && ib - cb > LEAVE_SECONDS);
        if !leaves {
            return Some(Kept {
                holder: incumbent,
                choice: choice.to_string(),
                gains: (gain_e, gain_b),
                margins: (at_estimate, at_bound),
            });
        }
    }
    None
}

/// Sort key: eligible by regret, then ineligible by regret, then the unsuitable.
fn order(r: &Ranked) -> f64 {
    match r.regret {
        Some(x) if r.eligible => x,
        Some(x) => 1e6 + x,
        None => 1e12,
    }
}

fn seconds(r: &Ranked) -> f64 {
    r.seconds().unwrap_or(f64::INFINITY)
}

/// One line: the choice, its margin over the next eligible candidate, and the part of the
/// model that made the difference.
fn explain(path: &Path, ranked: &[Ranked], chosen: bool) -> String {
    if !chosen {
        return "no transport offered by both sides can carry the session on this path".into();
    }
    let first = &ranked[0];
    let Some(second) = ranked[1..]
        .iter()
        .find(|r| r.eligible && r.regret.is_some())
    else {
        return format!(
            "{} is the only transport that can carry the session",
            first.name
        );
    };
    let (Ok(a), Ok(b)) = (&first.expected, &second.expected) else {
        return format!("{} is predicted fastest", first.name);
    };
    let margin = b.total - a.total;
    // A tie is told as one only where their times at the loss bound are as close too, or
    // the bound decided.
    let bound_gap = match (first.seconds_at_bound(), second.seconds_at_bound()) {
        (Some(x), Some(y)) => Some((y - x).abs()),
        _ => None,
    };
    let close = |within: f64| margin.abs() <= within && bound_gap.is_some_and(|g| g <= within);
    if close(0.01 * a.total.max(b.total)) {
        return format!(
            "{} and {} are predicted within 1 % of each other ({}); of such, the one over \
             the fewest connections, then the least regret, is chosen",
            first.name,
            second.name,
            fmt_seconds(a.total)
        );
    }
    if close(TIE_SECONDS) {
        return format!(
            "{} and {} are predicted within {} of each other ({} and {}), closer than the \
             model tells apart; of such, the one over the fewest connections, then the \
             least regret, is chosen",
            first.name,
            second.name,
            fmt_seconds(TIE_SECONDS),
            fmt_seconds(a.total),
            fmt_seconds(b.total)
        );
    }
    let mut line = format!(
        "{} is predicted {} ahead of {}",
        first.name,
        fmt_seconds(margin),
        second.name
    );
    let behind_at_bound = match (first.seconds_at_bound(), second.seconds_at_bound()) {
        (Some(x), Some(y)) => x >= y,
        _ => false,
    };
    if margin < 0.0 && behind_at_bound {
        // Slower at the estimate and at the bound: chosen for its model's record.
        return format!(
            "{} is predicted {} behind {}, within what {}'s model has been off by \
             (an rms of {:.0} % against {:.0} %): the prediction that has held is taken",
            first.name,
            fmt_seconds(-margin),
            second.name,
            second.name,
            100.0 * (second.error.exp() - 1.0),
            100.0 * (first.error.exp() - 1.0),
        );
    }
    if margin < 0.0 {
        // Slower at the estimate, chosen for the bound.
        let p = path.loss_upper * 100.0;
        line = format!(
            "{} is predicted {} behind {} if the path is as clean as measured, but far ahead \
             if it loses up to {p:.2} % of packets",
            first.name,
            fmt_seconds(-margin),
            second.name
        );
        return line;
    }
    line.push_str(": ");
    line.push_str(&difference(path, first, a, second, b));
    line
}

/// What makes `a` faster than `b`, in words.
fn difference(
    path: &Path,
    first: &Ranked,
    a: &Prediction,
    second: &Ranked,
    b: &Prediction,
) -> String {
    let r = path.rtt.max(1e-9);
    let connect = (b.connect - a.connect) / r;
    let (la, lb) = (a.longest(), b.longest());
    if let (Some(da), Some(db)) = (la, lb) {
        if db.limit == Limit::Loss && da.limit != Limit::Loss {
            return format!(
                "at {:.2} % loss {} holds {} to {:.0} Mbit/s while {} keeps {:.0}",
                path.loss * 100.0,
                limit_owner(db.limit),
                second.name,
                db.steady_rate * 8e-6,
                first.name,
                da.steady_rate.min(path.rate) * 8e-6
            );
        }
        let rounds = i64::from(db.rounds) - i64::from(da.rounds);
        if rounds >= 1 && db.seconds - da.seconds > connect * r {
            return format!(
                "it reaches the path's {:.1} MB in flight in {} fewer round trips of slow start",
                path.bdp() / 1e6,
                rounds
            );
        }
        if db.limit != Limit::SlowStart && da.steady_rate > db.steady_rate * 1.05 {
            return format!(
                "{} is held to {:.0} Mbit/s by {}, {} reaches {:.0}",
                second.name,
                db.steady_rate * 8e-6,
                db.limit.describe(),
                first.name,
                da.steady_rate * 8e-6
            );
        }
    }
    if connect >= 0.5 {
        return format!(
            "{} needs {connect:.0} more round trips to connect",
            second.name
        );
    }
    let bulk = |p: &Prediction| p.bulk.iter().map(|d| d.seconds).sum::<f64>();
    let (bulk_a, bulk_b) = (bulk(a), bulk(b));
    if bulk_b - bulk_a > 0.5 * (b.total - a.total) {
        return format!(
            "it delivers the bulk messages in {}, {} in {} (its first window is paced or \
             smaller)",
            fmt_seconds(bulk_a),
            second.name,
            fmt_seconds(bulk_b)
        );
    }
    "the difference is in fixed costs (start, handshake), not in the network".into()
}

fn limit_owner(l: Limit) -> &'static str {
    match l {
        Limit::Loss => "its congestion control",
        other => other.describe(),
    }
}

/// Seconds as ms below 10 s.
pub(crate) fn fmt_seconds(s: f64) -> String {
    if s.abs() < 0.01 {
        format!("{:.1} ms", s * 1e3)
    } else if s.abs() < 10.0 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{s:.1} s")
    }
}
