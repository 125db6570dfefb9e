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

    /// Whether this setting can be used here now: its family needs no start-up or has
    /// had it in this process ([`Family::started`]), and works on this host
    /// ([`TransportSpec::check_here`]).
    pub fn usable_now(&self) -> bool {
        started(self.family()) && self.check_here().is_ok()
    }
}

/// Whether `family` has no start-up to wait for in this process.
fn started(family: &Family) -> bool {
    family.started.is_none_or(|done| done())
}

/// Starts every family that has a start-up ([`Family::started`]) and waits for it, so
/// that [`candidates`] sees every transport of this host: for a prediction that shows
/// them all (`select`), never beside a session.
pub fn finish_start_ups() {
    for family in families().iter().filter(|f| f.started.is_some()) {
        // Its answer, good or bad, is what `check_here` gives from now on.
        let _ = (family.available)();
    }
}

/// Every transport setting worth predicting on `path` that works on this host now: each
/// available family's plain name, its aliases and its tuned settings, without repeats (two
/// names the model cannot tell apart, such as `tcp` and `tcp:cc=cubic` on a cubic host,
/// count once, under the first). A transport that does not repair loss is predicted but
/// marked ineligible; kernel TCP as this host runs it by default is the incumbent
/// ([`Candidate::incumbent`]), and with BBR the fallback ([`Candidate::fallback`]). A
/// family not yet started in this process is left out ([`Family::started`];
/// [`finish_start_ups`] starts them).
pub fn candidates(path: &Path) -> Vec<Candidate> {
    candidates_on_hosts(path, &crate::default_congestion_control())
}

/// [`candidates`] as for hosts whose kernel TCP runs `host_cc` by default (this host's
/// transports, named and judged as there: `tcp` is `tcp:cc=HOST_CC`, the incumbent):
/// what `select --host-cc` predicts for, such as the testbed's emulated hosts, which run
/// cubic.
pub fn candidates_on_hosts(path: &Path, host_cc: &str) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = Vec::new();
    let incumbent = incumbent_on(host_cc).map(|s| s.model());
    let fallback = fallback().map(|s| s.model());
    for family in families() {
        if !started(family) {
            continue;
        }
        // `check_here` also asks whether the family works on this host.
        for spec in settings(family, path, host_cc) {
            if spec.check_here().is_err() {
                continue;
            }
            let model = spec.model();
            if out.iter().any(|c| c.model == model) {
                continue;
            }
            out.push(Candidate {
                name: spec.to_string(),
                incumbent: incumbent.as_ref() == Some(&model),
                fallback: fallback.as_ref() == Some(&model) && incumbent.as_ref() != Some(&model),
                model,
                eligible: family.delivery.is_reliable() && family.auto,
            });
        }
    }
    out
}

/// The listen keys ([`TransportSpec::listen_key`]) of every setting `--transport auto` may
/// choose on any of `paths`, once each, path by path in the registry's order, whether or
/// not it works on this host now: what a garbler numbers its listeners by, so that an
/// evaluator of the same build knows the ports before it has the card (a host's missing
/// transport leaves its port unused).
pub fn choosable_listen_keys(paths: &[Path]) -> Vec<TransportSpec> {
    let mut keys: Vec<TransportSpec> = Vec::new();
    let host_cc = crate::default_congestion_control();
    for path in paths {
        for family in families()
            .iter()
            .filter(|f| f.delivery.is_reliable() && f.auto)
        {
            for key in settings(family, path, &host_cc)
                .iter()
                .map(TransportSpec::listen_key)
            {
                if !keys.contains(&key) {
                    keys.push(key);
                }
            }
        }
    }
    keys
}

/// A family's settings for `path`, parsed (a tuned string that does not parse is a bug in
/// its module, and is left out rather than stopping a session), each naming the kernel's
/// congestion control where it has that option (`host_cc` where unset): the two parties'
/// hosts may have different defaults, so `tcp` alone would name different transports on
/// each.
fn settings(family: &'static Family, path: &Path, host_cc: &str) -> Vec<TransportSpec> {
    family
        .names()
        .map(str::to_string)
        .chain((family.tuned)(path))
        .filter_map(|s| s.parse::<TransportSpec>().ok())
        .filter_map(|s| with_cc_if_unset(s, host_cc).ok())
        .collect()
}

/// What a session without `auto` runs, as this host runs it ([`crate::DEFAULT_TRANSPORT`]
/// with the host's congestion control named): the incumbent of [`candidates`].
pub fn incumbent() -> Option<TransportSpec> {
    incumbent_on(&crate::default_congestion_control())
}

/// [`incumbent`] on hosts that run `host_cc` by default.
fn incumbent_on(host_cc: &str) -> Option<TransportSpec> {
    let spec: TransportSpec = crate::DEFAULT_TRANSPORT.parse().ok()?;
    with_cc_if_unset(spec, host_cc).ok()
}

/// The incumbent's transport with BBR, kernel TCP's loss-tolerant congestion control:
/// the fallback of [`candidates`] ([`Candidate::fallback`]) where the host runs another.
pub fn fallback() -> Option<TransportSpec> {
    incumbent_on("bbr")
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
