//! The garbler's decision on an offer: the candidates both parties can run (its own, on
//! the offered path, that the evaluator listed and did not exclude), predicted for its
//! circuit's traffic and ranked by the model ([`transputation_model::choose`]).

use transputation_circuits::Circuit;
use transputation_garble::Scheme;
use transputation_model::{choose, Calibration, Candidate, Conditions, Decision, Path, Workload};
use transputation_transport::sizing::{size_buffers, PathEstimate};

use crate::wire::{Offer, Predicted};

/// How many ranked candidates an answer carries.
const RANKED: usize = 5;

/// What the garbler decides with: its circuit's traffic and the model's constants.
#[derive(Debug, Clone)]
pub struct Planner {
    digest: String,
    scheme: Scheme,
    work: Workload,
    calibration: Calibration,
}

/// A decision and the buffer the session uses.
#[derive(Debug, Clone)]
pub struct Plan {
    /// The model's decision.
    pub decision: Decision,
    /// The socket buffer per direction, bytes.
    pub buffer_bytes: u64,
}

impl Plan {
    /// The best candidates as the answer lists them.
    pub fn ranked(&self) -> Vec<Predicted> {
        self.decision
            .ranked
            .iter()
            .filter(|r| r.eligible)
            .take(RANKED)
            .map(|r| Predicted {
                transport: r.name.clone(),
                ms: r.seconds().map(|s| s * 1e3),
            })
            .collect()
    }
}

impl Planner {
    /// A planner for `circuit` under `scheme`.
    pub fn new(
        circuit: &Circuit,
        scheme: Scheme,
        calibration: Calibration,
    ) -> Result<Self, transputation_2pc::Error> {
        let options = transputation_2pc::Options::new(scheme);
        Ok(Planner {
            digest: crate::wire::circuit_id(circuit),
            scheme,
            work: transputation_2pc::workload(circuit, &options)?,
            calibration,
        })
    }

    /// The circuit's digest, hex, as offers name it.
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// The same planner with the evaluator's set-up (loading and planning, seconds) in its
    /// predictions, for a caller that measured it (`select`); the garbler's decisions leave
    /// it at 0, which it cannot know.
    pub fn with_setup(mut self, seconds: f64) -> Self {
        self.work.setup = seconds;
        self
    }

    /// The session's traffic the predictions are for.
    pub fn workload(&self) -> &Workload {
        &self.work
    }

    /// Predicts `candidates` on `path` for this circuit, with buffers sized for the path and
    /// the garbler's bytes (paper §4.2) as a session sizes them, and chooses.
    pub fn plan(&self, path: &Path, candidates: &[Candidate]) -> Plan {
        let buffer_bytes = buffer_for(path, self.work.garbler_bytes());
        let cond = Conditions {
            buffer: buffer_bytes as f64,
        };
        Plan {
            decision: choose(path, &self.work, candidates, &self.calibration, &cond),
            buffer_bytes,
        }
    }

    /// Decides on `offer`, or says why there is no session.
    pub fn decide(&self, offer: &Offer) -> Result<Plan, String> {
        if offer.circuit != self.digest {
            return Err("the evaluator's circuit differs from the garbler's".into());
        }
        if offer.scheme != self.scheme.to_string() {
            return Err(format!(
                "the evaluator garbles under {}, the garbler under {}",
                offer.scheme, self.scheme
            ));
        }
        offer
            .path
            .check()
            .map_err(|e| format!("the offered path: {e}"))?;
        let candidates: Vec<Candidate> = transputation_transport::auto::candidates(&offer.path)
            .into_iter()
            .filter(|c| offer.transports.contains(&c.name) && !offer.exclude.contains(&c.name))
            .collect();
        let plan = self.plan(&offer.path, &candidates);
        if plan.decision.choice.is_none() {
            return Err(format!(
                "{} (the evaluator offered {}{})",
                plan.decision.why,
                offer.transports.join(", "),
                if offer.exclude.is_empty() {
                    String::new()
                } else {
                    format!("; failed: {}", offer.exclude.join(", "))
                }
            ));
        }
        Ok(plan)
    }
}

/// The paper's §4.2 buffer for the garbler's bytes on `path`.
pub fn buffer_for(path: &Path, volume: u64) -> u64 {
    let est = PathEstimate {
        rtt: std::time::Duration::from_secs_f64(path.rtt),
        bandwidth_bps: (path.rate * 8.0) as u64,
        arrival_bps: None,
        read_bps: None,
    };
    size_buffers(&est, volume).buffer_bytes
}
