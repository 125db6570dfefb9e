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
    for family in families() {
        // `check_here` also asks whether the family works on this host.
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
/// its module, and is left out rather than stopping a session), each naming the kernel's
/// congestion control where it has that option: the two parties' hosts may have different
/// defaults, so `tcp` alone would name different transports on each.
fn settings(family: &'static Family, path: &Path) -> Vec<TransportSpec> {
    family
        .names()
        .map(str::to_string)
        .chain((family.tuned)(path))
        .filter_map(|s| s.parse::<TransportSpec>().ok())
        .filter_map(|s| with_explicit_cc(s).ok())
        .collect()
}

/// `spec` with `cc` set to this host's default if it has that option unset.
pub fn with_explicit_cc(spec: TransportSpec) -> crate::Result<TransportSpec> {
    with_cc_if_unset(spec, &crate::default_congestion_control())
}

/// `spec` with `cc` set to `cc` if it has that option and leaves it unset.
pub fn with_cc_if_unset(spec: TransportSpec, cc: &str) -> crate::Result<TransportSpec> {
    if spec.family().option("cc").is_none() || spec.values().text("cc").is_some() {
        return Ok(spec);
    }
    let text = spec.to_string();
    let sep = if text.contains(':') { ',' } else { ':' };
    format!("{text}{sep}cc={cc}").parse()
}

#[cfg(test)]
mod tests;
