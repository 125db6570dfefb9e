//! Loss evidence: the packets sent and lost behind a loss estimate, the upper confidence
//! bound on the loss rate they support, and the split of a train's losses into random loss
//! and the overflow of a queue.
//!
//! A probe that lost none of its n packets has not shown that the path loses nothing: a
//! loss rate of about 3/n would go unseen in one train one time in twenty. A transport
//! chooser that treats 0 of 32 as "no loss" would pick a loss-sensitive congestion
//! controller on a path where 1 % loss (well within what 32 packets can miss) cuts it to a
//! crawl, so the evidence travels with the estimate and the bound says how bad the loss may
//! still be.

use serde::{Deserialize, Serialize};

/// Packets the evidence merged over sessions keeps at most: beyond it, the older evidence
/// is scaled down (its loss rate kept) so that the newest measurements always weigh in and
/// a path that changed shows it after a few sessions. It also bounds the cost of
/// [`LossEvidence::upper_bound`], which is linear in the packets lost.
pub const MAX_EVIDENCE_PACKETS: u64 = 100_000;

/// A likelihood-ratio statistic (twice the log-likelihood gain) a change of loss rate
/// inside a train must reach to count as a queue's overflow: about what three losses in a
/// row at the end of a train with 1 % loss reach, which random loss produces in about one
/// train in a million. Two in a row at the end (1 in 10,000) stay below it.
const OVERFLOW_LIKELIHOOD_RATIO: f64 = 20.0;

/// The loss rate after a queue overflows must be at least this: a drop-tail queue fed
/// faster than it drains drops `1 − drain/arrival` of what arrives, which for a train sent
/// back to back is most of it.
const OVERFLOW_MIN_LOSS: f64 = 0.3;

/// Packets sent and lost behind a loss estimate.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LossEvidence {
    /// Packets sent (and not excluded, see [`crate::Measurement::overflow_packets`]).
    pub sent: u64,
    /// Of them, lost.
    pub lost: u64,
}

impl LossEvidence {
    /// Evidence of `lost` losses in `sent` packets (`lost` is capped at `sent`).
    pub fn new(sent: u64, lost: u64) -> Self {
        LossEvidence {
            sent,
            lost: lost.min(sent),
        }
    }

    /// The point estimate, lost / sent (0 without evidence).
    pub fn rate(&self) -> f64 {
        if self.sent == 0 {
            0.0
        } else {
            self.lost.min(self.sent) as f64 / self.sent as f64
        }
    }

    /// The one-sided upper confidence bound on the loss rate at 95 %; see
    /// [`upper_bound`](Self::upper_bound). 0 lost of 1000 gives 0.00299.
    pub fn upper_bound_95(&self) -> f64 {
        self.upper_bound(0.95)
    }

    /// The one-sided Clopper–Pearson upper bound on the loss rate at `confidence`
    /// (clamped to 0.5 ..= 1 − 10⁻⁹): the largest rate p under which seeing at most
    /// `lost` losses in `sent` packets still has probability at least `1 − confidence`.
    /// 1 without evidence.
    ///
    /// Clopper–Pearson rather than Wilson because it is exact: its coverage is never below
    /// the confidence asked for, where Wilson's dips below it at the small counts a probe
    /// lives at (0 to a few losses). A chooser that errs should err towards a
    /// loss-tolerant transport, so the conservative bound is the right one. At 0 losses it
    /// is `1 − (1 − confidence)^(1/sent)`, the "rule of three" (≈ 3/n at 95 %).
    /// One-sided because only the upper side matters for the choice.
    pub fn upper_bound(&self, confidence: f64) -> f64 {
        let confidence = if confidence.is_nan() {
            0.95
        } else {
            confidence.clamp(0.5, 1.0 - 1e-9)
        };
        let alpha = 1.0 - confidence;
        let (n, k) = (self.sent, self.lost.min(self.sent));
        if n == 0 || k == n {
            return 1.0;
        }
        if k == 0 {
            // (1 − p)^n = α.
            return -(alpha.ln() / n as f64).exp_m1();
        }
        // The binomial CDF at k falls as p rises: bisect for where it crosses α.
        let log_choose = log_binomial_coefficients(n, k);
        let (mut lo, mut hi) = (k as f64 / n as f64, 1.0f64);
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if log_binomial_cdf(&log_choose, n, mid) > alpha.ln() {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        0.5 * (lo + hi)
    }

    /// This evidence followed by `later`'s: the packets add up, so the estimate sharpens
    /// across sessions. Past [`MAX_EVIDENCE_PACKETS`] the older part (this one) is scaled
    /// down, keeping its loss rate, to make room for the later.
    pub fn merged(self, later: LossEvidence) -> LossEvidence {
        let later = later.capped(MAX_EVIDENCE_PACKETS);
        let older = self.capped(MAX_EVIDENCE_PACKETS - later.sent);
        LossEvidence::new(older.sent + later.sent, older.lost + later.lost)
    }

    /// This evidence scaled down to at most `packets` packets, its loss rate kept.
    fn capped(self, packets: u64) -> LossEvidence {
        if self.sent <= packets {
            return LossEvidence::new(self.sent, self.lost);
        }
        let lost = (self.rate() * packets as f64).round() as u64;
        LossEvidence::new(packets, lost)
    }
}

/// ln C(n, j) for j in 0..=k.
fn log_binomial_coefficients(n: u64, k: u64) -> Vec<f64> {
    let mut out = Vec::with_capacity(k as usize + 1);
    let mut acc = 0.0f64;
    out.push(acc);
    for j in 0..k {
        acc += ((n - j) as f64).ln() - ((j + 1) as f64).ln();
        out.push(acc);
    }
    out
}

/// ln P(X ≤ k) for X binomial(n, p), 0 < p < 1, k = `log_choose.len() − 1`, summed in the
/// log domain (terms such as (1 − p)^n underflow for large n).
fn log_binomial_cdf(log_choose: &[f64], n: u64, p: f64) -> f64 {
    let (ln_p, ln_q) = (p.ln(), (-p).ln_1p());
    let mut total = f64::NEG_INFINITY;
    for (j, c) in log_choose.iter().enumerate() {
        let term = c + j as f64 * ln_p + (n - j as u64) as f64 * ln_q;
        total = log_add(total, term);
    }
    total
}

/// ln(eᵃ + eᵇ).
fn log_add(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if lo == f64::NEG_INFINITY {
        hi
    } else {
        hi + (lo - hi).exp().ln_1p()
    }
}

/// How a train's losses divide: the random-loss evidence, and the packets left out of it
/// because they were sent after the bottleneck's queue overflowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TrainLoss {
    pub(crate) evidence: LossEvidence,
    pub(crate) overflow_packets: u64,
}

/// Splits the losses of a train sent back to back (`lost[i]` for the i-th packet sent, in
/// order) into random loss and a queue's overflow.
///
/// A train sent faster than the bottleneck drains fills its queue; once the queue is full,
/// a drop-tail queue drops most of the rest. Counting those drops as loss would make a
/// clean path with a short queue look like a lossy one (a 256-packet train into a
/// 20-ms queue at 100 Mbit/s loses a fifth of itself), and a transport chooser would flee
/// to loss-tolerant transports for nothing. The split is a change point: the index that
/// best divides the train into two stretches of constant loss rate (by likelihood), taken
/// as an overflow's onset when the later stretch loses far more (see
/// [`OVERFLOW_LIKELIHOOD_RATIO`] and [`OVERFLOW_MIN_LOSS`]). The packets before it are the
/// random-loss evidence; from it on they are overflow, left out.
pub(crate) fn split_train_loss(lost: &[bool]) -> TrainLoss {
    let n = lost.len();
    let all = LossEvidence::new(n as u64, lost.iter().filter(|&&l| l).count() as u64);
    let mut lost_before = Vec::with_capacity(n + 1);
    lost_before.push(0u64);
    for &l in lost {
        lost_before.push(lost_before.last().expect("pushed") + u64::from(l));
    }
    let whole = log_likelihood(all.lost, all.sent);
    let mut best: Option<(f64, usize)> = None;
    for (onset, &k1) in lost_before[..n].iter().enumerate() {
        let m1 = onset as u64;
        let (k2, m2) = (all.lost - k1, (n - onset) as u64);
        let later_rate = k2 as f64 / m2 as f64;
        let earlier_rate = if m1 == 0 { 0.0 } else { k1 as f64 / m1 as f64 };
        if later_rate < OVERFLOW_MIN_LOSS || later_rate <= earlier_rate {
            continue;
        }
        let gain = 2.0 * (log_likelihood(k1, m1) + log_likelihood(k2, m2) - whole);
        if best.is_none_or(|(g, _)| gain > g) {
            best = Some((gain, onset));
        }
    }
    match best {
        Some((gain, onset)) if gain >= OVERFLOW_LIKELIHOOD_RATIO => TrainLoss {
            evidence: LossEvidence::new(onset as u64, lost_before[onset]),
            overflow_packets: (n - onset) as u64,
        },
        _ => TrainLoss {
            evidence: all,
            overflow_packets: 0,
        },
    }
}

/// The log-likelihood of `k` losses in `m` packets at their own rate k/m (0 ln 0 = 0).
fn log_likelihood(k: u64, m: u64) -> f64 {
    if m == 0 || k == 0 || k == m {
        return 0.0;
    }
    let (k, m) = (k as f64, m as f64);
    k * (k / m).ln() + (m - k) * (1.0 - k / m).ln()
}

#[cfg(test)]
mod tests;
