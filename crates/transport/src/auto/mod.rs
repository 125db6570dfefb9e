//! `--transport auto`: the transports it may choose on this host and how the
//! completion-time model sees each (`transputation_model`). Candidates come from the
//! registry alone, each family's plain name, aliases and [`Family::tuned`] settings for the
//! measured path, so a new transport is predicted and may be chosen as soon as it declares
//! its [`Family::model`].

use transputation_model::{Candidate, Path, TransportModel};

use crate::registry::{families, TransportSpec};
use crate::Family;

impl TransportSpec {
    /// How the completion-time model sees this transport with its options.
    pub fn model(&self) -> TransportModel {
        (self.family().model)(self.values())
    }
}

/// Every transport setting worth predicting on `path` that works on this host: each
/// available family's plain name, its aliases and its tuned settings, without repeats (two
/// names the model cannot tell apart, such as `tcp` and `tcp:cc=cubic` on a cubic host,
/// count once, under the first). A transport that does not repair loss is predicted but
/// marked ineligible.
pub fn candidates(path: &Path) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    for family in families().iter().filter(|f| (f.available)().is_ok()) {
        for spec in settings(family, path) {
            if spec.check_here().is_err() {
                continue;
            }
            let model = spec.model();
            if out.iter().any(|c| c.model == model) {
                continue;
            }
            out.push(Candidate {
                name: spec.to_string(),
                model,
                eligible: family.delivery.is_reliable(),
            });
        }
    }
    out
}

/// A family's settings for `path`, parsed (a tuned string that does not parse is a bug in
/// its module, and is left out rather than stopping a session).
fn settings(family: &'static Family, path: &Path) -> Vec<TransportSpec> {
    family
        .names()
        .map(str::to_string)
        .chain((family.tuned)(path))
        .filter_map(|s| s.parse::<TransportSpec>().ok())
        .collect()
}

#[cfg(test)]
mod tests;
