//! Calibration: refits each key's constants to measured runs, and says how well they fit.
//!
//! The objective is the Huber loss (δ = 0.3) of the log ratio of predicted to measured
//! time, weighted per run: log, because runs span milliseconds to minutes and the selector
//! compares ratios; Huber, because a loss-based controller under random loss varies twofold
//! from run to run and one such pair must not drag the constants. The model is piecewise
//! (slow-start rounds are whole), so it has no useful gradient: each constant moves by
//! multiplicative steps within its physical bounds, one at a time, while that lowers the
//! objective, and the step halves when none does (coordinate descent). A constant that no
//! run depends on stays where it was.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::{predict, Calibration, Conditions, Constants, Control, Path, TransportModel, Workload};

/// One measured run.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// What it was (`aes128/ideal/tcp @ eu-us`), for the report.
    pub label: String,
    /// The network condition's name (runs of one condition are held out together in the
    /// cross-validation).
    pub condition: String,
    /// The path.
    pub path: Path,
    /// The session's traffic.
    pub work: Workload,
    /// The transport.
    pub model: TransportModel,
    /// The buffers.
    pub cond: Conditions,
    /// The measured time to the output, seconds.
    pub measured: f64,
    /// Its weight (1 for a median of steady runs, less for a spread cell).
    pub weight: f64,
}

/// How well one key fits.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct KeyFit {
    /// The calibration key.
    pub key: String,
    /// Runs fitted.
    pub runs: usize,
    /// Distinct conditions among them.
    pub conditions: usize,
    /// Root mean square of the log error with the starting constants.
    pub rms_before: f64,
    /// The same with the fitted constants.
    pub rms_after: f64,
    /// The same for each condition's runs predicted by constants fitted without them
    /// (leave one condition out); `None` with fewer than two conditions.
    pub rms_cross: Option<f64>,
    /// The run predicted worst after the fit, and its predicted/measured ratio.
    pub worst: Option<(String, f64)>,
    /// The fitted constants.
    pub constants: Constants,
    /// Every run fitted: measured and predicted, before and after the fit.
    pub cells: Vec<CellFit>,
}

/// One run's prediction against its measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CellFit {
    /// What it was (`aes128/ideal/tcp @ eu-us`).
    pub label: String,
    /// The measured time to the output, seconds.
    pub measured: f64,
    /// The prediction with the starting constants, seconds (`None`: unsuitable).
    pub before: Option<f64>,
    /// The prediction with the fitted constants, seconds.
    pub after: Option<f64>,
}

/// The result of a calibration.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FitReport {
    /// Per key, in key order.
    pub keys: Vec<KeyFit>,
    /// Runs the model could not predict (a setting it calls unsuitable), with why.
    pub skipped: Vec<(String, String)>,
}

/// Refits the constants of every key in `runs`, starting from `start` (a key it lacks
/// starts from its transport's declared defaults). Returns the new calibration (keys
/// without runs keep their start) and the report.
pub fn fit(runs: &[Observation], start: &Calibration) -> (Calibration, FitReport) {
    let mut by_key: BTreeMap<&str, Vec<&Observation>> = BTreeMap::new();
    let mut skipped = Vec::new();
    for o in runs {
        let k = start.constants(&o.model.key, &o.model.defaults);
        match predict(&o.path, &o.work, &o.model, &k, &start.host, &o.cond) {
            Ok(_) if o.measured > 0.0 && o.weight > 0.0 => {
                by_key.entry(&o.model.key).or_default().push(o)
            }
            Ok(_) => skipped.push((o.label.clone(), "no positive time or weight".into())),
            Err(e) => skipped.push((o.label.clone(), e.0)),
        }
    }
    let mut cal = start.clone();
    let mut keys = Vec::new();
    for (key, obs) in by_key {
        let k0 = start.constants(key, &obs[0].model.defaults);
        let mut fitted = descend(&obs, k0, start);
        let rms_before = rms(&obs, &k0, start);
        let rms_after = rms(&obs, &fitted, start);
        let rms_cross = cross_validate(&obs, k0, start);
        // What the choice holds against the key: its error on runs it was not fitted to
        // where that can be told.
        fitted.error = rms_cross.unwrap_or(rms_after);
        let worst = obs
            .iter()
            .filter_map(|o| Some((o.label.clone(), ratio(o, &fitted, start)?)))
            .max_by(|a, b| a.1.ln().abs().total_cmp(&b.1.ln().abs()));
        keys.push(KeyFit {
            key: key.to_string(),
            runs: obs.len(),
            conditions: conditions(&obs).len(),
            rms_before,
            rms_after,
            rms_cross,
            worst,
            constants: fitted,
            cells: obs
                .iter()
                .map(|o| CellFit {
                    label: o.label.clone(),
                    measured: o.measured,
                    before: ratio(o, &k0, start).map(|r| r * o.measured),
                    after: ratio(o, &fitted, start).map(|r| r * o.measured),
                })
                .collect(),
        });
        cal.keys.insert(key.to_string(), fitted);
    }
    (cal, FitReport { keys, skipped })
}

/// A constant the fit may move, with its bounds.
struct Knob {
    get: fn(&Constants) -> f64,
    set: fn(&mut Constants, f64),
    min: f64,
    max: f64,
}

impl Knob {
    /// `k` with this constant moved by `stride` (a fraction of its range; of the log of its
    /// range for a rate, which spans decades), or `None` if that moves nothing.
    fn moved(&self, k: &Constants, stride: f64) -> Option<Constants> {
        let x = (self.get)(k);
        let to = if self.min > 1e3 {
            (x.ln() + stride * (self.max / self.min).ln()).exp()
        } else {
            x + stride * (self.max - self.min)
        }
        .clamp(self.min, self.max);
        if (to - x).abs() <= 1e-12 * x.abs().max(1.0) {
            return None;
        }
        let mut moved = *k;
        (self.set)(&mut moved, to);
        Some(moved)
    }
}

/// A [`Knob`] on the field `$field` of [`Constants`], within `$min..=$max`.
macro_rules! knob {
    ($field:ident, $min:expr, $max:expr) => {
        Knob {
            get: |k| k.$field,
            set: |k, x| k.$field = x,
            min: $min,
            max: $max,
        }
    };
}

/// The constants a controller's runs can tell apart.
fn knobs(control: &Control) -> Vec<Knob> {
    let mut v = vec![knob!(fixed, 0.0, 0.3), knob!(host_cap, 6e6, 5e9)];
    if matches!(control, Control::Paced { .. }) {
        return v;
    }
    v.push(knob!(growth, 1.3, 2.2));
    v.push(knob!(tail, 0.0, 6.0));
    match control {
        Control::Cubic | Control::Reno => {
            v.push(knob!(loss_factor, 0.3, 3.0));
            v.push(knob!(slow_start_exit, 0.2, 1.0));
        }
        Control::Bbr => {
            v.push(knob!(startup_lag, 0.0, 1.5));
            v.push(knob!(steady_share, 0.5, 1.0));
        }
        Control::RateBased => v.push(knob!(loss_factor, 0.0, 300.0)),
        Control::Paced { .. } => {}
    }
    v
}

/// Coordinate descent from `k0` (see the module docs).
fn descend(obs: &[&Observation], k0: Constants, cal: &Calibration) -> Constants {
    let knobs = knobs(&obs[0].model.control);
    let mut best = k0;
    // A ceiling above every link seen changes no prediction, so the descent could not
    // move it: start it at the fastest link, and call it none again if it stays there.
    let fastest = obs.iter().map(|o| o.path.rate).fold(0.0, f64::max);
    best.host_cap = best.host_cap.min(fastest).clamp(6e6, 5e9);
    let mut score = objective(obs, &best, cal);
    let mut step = 0.25;
    for _ in 0..200 {
        let mut moved = false;
        for knob in &knobs {
            // A line search along this knob: the first direction that improves, then
            // doubling strides while they still improve.
            for dir in [1.0, -1.0] {
                let mut stride = step * dir;
                while let Some(k) = knob.moved(&best, stride) {
                    let s = objective(obs, &k, cal);
                    if s >= score - 1e-12 {
                        break;
                    }
                    (best, score, moved) = (k, s, true);
                    stride *= 2.0;
                }
                if moved {
                    break;
                }
            }
        }
        if !moved {
            step /= 2.0;
            if step < 1e-4 {
                break;
            }
        }
    }
    if best.host_cap >= 0.99 * fastest {
        best.host_cap = f64::INFINITY;
    }
    best
}

/// Predicted over measured, or `None` if the model calls the run's setting unsuitable.
fn ratio(o: &Observation, k: &Constants, cal: &Calibration) -> Option<f64> {
    let p = predict(&o.path, &o.work, &o.model, k, &cal.host, &o.cond).ok()?;
    Some(p.total / o.measured)
}

/// The weighted Huber loss of the log ratios.
fn objective(obs: &[&Observation], k: &Constants, cal: &Calibration) -> f64 {
    const DELTA: f64 = 0.3;
    obs.iter()
        .map(|o| {
            let e = ratio(o, k, cal).map_or(3.0, |r| r.ln().abs());
            let h = if e <= DELTA {
                0.5 * e * e
            } else {
                DELTA * (e - 0.5 * DELTA)
            };
            o.weight * h
        })
        .sum()
}

/// Root mean square of the log errors.
fn rms(obs: &[&Observation], k: &Constants, cal: &Calibration) -> f64 {
    rms_of(obs.iter().filter_map(|o| ratio(o, k, cal).map(f64::ln)))
}

/// The root mean square of `errs` (0 for none).
fn rms_of(errs: impl IntoIterator<Item = f64>) -> f64 {
    let (sum, n) = errs
        .into_iter()
        .fold((0.0, 0usize), |(s, n), e| (s + e * e, n + 1));
    (sum / n.max(1) as f64).sqrt()
}

fn conditions<'a>(obs: &[&'a Observation]) -> Vec<&'a str> {
    let mut c: Vec<&str> = obs.iter().map(|o| o.condition.as_str()).collect();
    c.sort_unstable();
    c.dedup();
    c
}

/// Leave-one-condition-out: each condition's runs predicted by constants fitted on the
/// others.
fn cross_validate(obs: &[&Observation], k0: Constants, cal: &Calibration) -> Option<f64> {
    let conds = conditions(obs);
    if conds.len() < 2 {
        return None;
    }
    let mut errs = Vec::new();
    for c in conds {
        let (held, train): (Vec<&Observation>, Vec<&Observation>) =
            obs.iter().partition(|o| o.condition == c);
        let k = descend(&train, k0, cal);
        errs.extend(held.iter().filter_map(|o| ratio(o, &k, cal).map(f64::ln)));
    }
    Some(rms_of(errs))
}
