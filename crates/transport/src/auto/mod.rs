//! `--transport auto`: the transports it may choose on this host and how the
//! completion-time model sees each (`transputation_model`). Candidates come from the
//! registry alone, each family's plain name, aliases and [`Family::tuned`] settings for the
//! measured path, so a new transport is predicted and may be chosen as soon as it declares
//! its [`Family::model`].

use transputation_model::{Candidate, Path, TransportModel};

use crate::registry::{families, TransportSpec};
use crate::{Family, SenderHint};

impl TransportSpec {
    /// How the completion-time model sees this transport with its options.
    pub fn model(&self) -> TransportModel {
        (self.family().model)(self.values())
    }

    /// This setting without its family's [`Family::sender_options`]: what a listener must
    /// be built with to accept a client of this setting and then tune the channel to it
    /// ([`TransportSpec::sender_hint`]). `quic:cc=bbr,iw=2500000` gives `quic`,
    /// `mtcp:streams=8,cc=bbr` gives `mtcp:streams=8`.
    pub fn listen_key(&self) -> TransportSpec {
        let mut values = self.values().clone();
        for key in self.family().sender_options {
            values.reset(key);
        }
        // The family built these options already, with more of them set.
        TransportSpec::from_values(values).unwrap_or_else(|_| self.clone())
    }

    /// The sender options of this setting, for an accepted channel's
    /// [`crate::TuneSender`], with `send_buffer` bytes of send buffer.
    pub fn sender_hint(&self, send_buffer: Option<usize>) -> SenderHint {
        let has = |k: &str| self.family().sender_options.contains(&k);
        SenderHint {
            congestion: has("cc")
                .then(|| self.values().text("cc").map(str::to_string))
                .flatten(),
            initial_window: has("iw").then(|| self.values().int("iw")).flatten(),
            send_buffer,
            start_rate: None,
        }
    }

    /// This setting as a connection made while the path is still being probed takes it
    /// ([`Family::while_probing`]): `blast` becomes `blast:train=off`, the others stay.
    pub fn while_probing(&self) -> TransportSpec {
        let extra = self.family().while_probing;
        if extra.is_empty() {
            return self.clone();
        }
        let mut values = self.values().clone();
        let set = extra
            .split(',')
            .filter_map(|p| p.split_once('='))
            .try_for_each(|(k, v)| values.set(k, v));
        // The family declares options it has, with values they take.
        match set.and_then(|()| TransportSpec::from_values(values)) {
            Ok(spec) => spec,
            Err(_) => self.clone(),
        }
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
                eligible: family.delivery.is_reliable() && family.auto,
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
