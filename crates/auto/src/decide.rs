//! The decision: the candidates both parties can run (the evaluator's, on the measured
//! path, that the garbler's card serves), predicted for the circuit's traffic and ranked
//! by the model ([`transputation_model::choose`]); and the garbler's admission of it.

use transputation_circuits::Circuit;
use transputation_garble::Scheme;
use transputation_model::{choose, Calibration, Candidate, Conditions, Decision, Path, Workload};
use transputation_transport::sizing::{size_buffers, PathEstimate};
use transputation_transport::TransportSpec;

use crate::wire::{Card, Predicted, Statement};

/// How many ranked candidates an answer carries.
const RANKED: usize = 5;

/// What a party decides and admits with: its circuit's traffic and the model's constants.
#[derive(Debug, Clone)]
pub struct Planner {
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
            scheme,
            work: transputation_2pc::workload(circuit, &options)?,
            calibration,
        })
    }

    /// The same planner with the evaluator's set-up (loading and planning, seconds) in its
    /// predictions, for a caller that measured it (`select`, the evaluator).
    pub fn with_setup(mut self, seconds: f64) -> Self {
        self.work.setup = seconds;
        self
    }

    /// Whether an early connection, made before the decision with a listener's plain
    /// setting ([`crate::Client::connect_early`]), serves this session as well as one made
    /// for the choice: the evaluator's bulk sending fits in any first window (12 kB, quinn's
    /// smallest), so its own controller does not matter, and the garbler's tables fit in the
    /// receive windows a connection starts with (4 MiB).
    pub fn fits_early(&self) -> bool {
        self.work.evaluator_bytes() <= 12_000 && self.work.garbler_bytes() <= 4 << 20
    }

    /// The scheme.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The socket buffer for `path` (paper §4.2), as [`Planner::plan`] sizes it: for the
    /// path at up to four times the rate measured, so that a rate read low does not make
    /// the window the limit (on a 5 ms, 500 Mbit/s link read as 149 Mbit/s, the buffer
    /// for the rate read held `tcp:cc=bbr` to about 300 Mbit/s: SHA-256's `prf` tables
    /// took 27–45 ms longer than over the same transport with the link's buffer). A
    /// larger buffer costs memory only; the volume still caps it.
    pub fn buffer(&self, path: &Path) -> u64 {
        let faster = Path {
            rate: path.rate * FASTER,
            ..*path
        };
        buffer_for(&faster, self.work.garbler_bytes())
    }

    /// The session's traffic the predictions are for.
    pub fn workload(&self) -> &Workload {
        &self.work
    }

    /// Predicts `candidates` on `path` for this circuit, with buffers sized for the path and
    /// the garbler's bytes (paper §4.2) as a session sizes them, and chooses.
    pub fn plan(&self, path: &Path, candidates: &[Candidate]) -> Plan {
        self.plan_with_buffer(path, candidates, self.buffer(path))
    }

    /// [`Planner::plan`] with buffers of `buffer_bytes`.
    fn plan_with_buffer(&self, path: &Path, candidates: &[Candidate], buffer_bytes: u64) -> Plan {
        let cond = Conditions {
            buffer: buffer_bytes as f64,
        };
        Plan {
            decision: choose(path, &self.work, candidates, &self.calibration, &cond),
            buffer_bytes,
        }
    }

    /// The evaluator's decision with the garbler's `card`: the candidates this host runs on
    /// `path` that the garbler listens for (and whose kernel congestion control it may
    /// set), without `exclude`, predicted and ranked; or why there is no session.
    pub fn choose_with(
        &self,
        card: &Card,
        path: &Path,
        exclude: &[String],
    ) -> Result<Plan, String> {
        self.choose_connected(card, path, exclude, &[])
    }

    /// [`Planner::choose_with`] for an evaluator that already holds connections to the
    /// garbler's listeners `connected` (each a listen key and its port, made early,
    /// [`crate::Client::connect_early`]): a candidate that a held connection serves (its
    /// listen key, on the port the card names for it) spends no round trips connecting
    /// after the decision, so its prediction counts none. (A cold session of AES-128 decided
    /// for `blast`, which connects after the decision, where an early `quic` or `tcp`
    /// connection was at hand: its connection's round trip came on top of the probe's, and
    /// the session took one round trip longer than over `blast` named.)
    pub fn choose_connected(
        &self,
        card: &Card,
        path: &Path,
        exclude: &[String],
        connected: &[(String, u16)],
    ) -> Result<Plan, String> {
        path.check().map_err(|e| format!("the path: {e}"))?;
        let candidates: Vec<Candidate> = transputation_transport::auto::candidates(path)
            .into_iter()
            .filter(|c| !exclude.contains(&c.name) && served(card, &c.name))
            .map(|mut c| {
                if held(card, &c.name, connected) {
                    c.model.connect_round_trips = 0.0;
                }
                c
            })
            .collect();
        let plan = self.plan(path, &candidates);
        if plan.decision.choice.is_none() {
            let listening: Vec<&str> = card
                .listeners
                .iter()
                .map(|l| l.transport.as_str())
                .collect();
            return Err(format!(
                "{} (the garbler listens for {}{})",
                plan.decision.why,
                listening.join(", "),
                if exclude.is_empty() {
                    String::new()
                } else {
                    format!("; failed: {}", exclude.join(", "))
                }
            ));
        }
        Ok(plan)
    }

    /// Whether the decision on `path` (a probe's measurement so far) is settled: measuring
    /// more, costing `cost` seconds, could not gain more than it costs. What a larger
    /// train may show is a faster and cleaner path than a short one: a rate up to
    /// `headroom` times what it read ([`crate::rate_headroom`]: a train that passed the
    /// bottleneck within a busy host's timing noise may have read it low) and a loss
    /// bound an eighth as high (eight times the packets). The gain is what the choice
    /// made now loses there against the best choice there, both predicted on that path.
    /// Not settled while no choice is possible.
    pub fn settled(&self, card: &Card, path: &Path, cost: f64, headroom: f64) -> bool {
        let Ok(now) = self.choose_with(card, path, &[]) else {
            return false;
        };
        let Some(chosen) = now.decision.choice.as_deref() else {
            return false;
        };
        let Some(kept) = transputation_transport::auto::candidates(path)
            .into_iter()
            .find(|c| c.name == chosen)
        else {
            return false;
        };
        let better = Path {
            rate: path.rate * headroom.clamp(1.0, FASTER),
            loss_upper: (path.loss_upper / 8.0).max(path.loss),
            ..*path
        };
        let mut candidates: Vec<Candidate> = transputation_transport::auto::candidates(&better)
            .into_iter()
            .filter(|c| c.name != chosen && served(card, &c.name))
            .collect();
        candidates.push(kept);
        // With the buffers this session would have on `path` (already sized for a path
        // that fast), not sized again for `better`.
        let there = self
            .plan_with_buffer(&better, &candidates, self.buffer(path))
            .decision;
        let best = there
            .ranked
            .iter()
            .filter(|r| r.eligible)
            .filter_map(|r| r.seconds())
            .fold(f64::INFINITY, f64::min);
        let kept = there
            .ranked
            .iter()
            .find(|r| r.name == chosen)
            .and_then(|r| r.seconds());
        kept.is_some_and(|k| k - best <= cost)
    }

    /// The garbler's check of a statement that arrived on its listener for `key`, its card
    /// being `card_id`: its card, the same scheme, a setting of that listener,
    /// and one that this garbler would itself consider on the stated path (a transport it
    /// runs here, with options from the registry's settings for that path). It does not
    /// decide again: the evaluator's ranking is the model's, and the choice only ever
    /// affects speed. A provisional statement ([`Statement::moves`]) needs only a reliable
    /// setting of that listener. Gives the transport, or why not.
    pub fn admit(&self, st: &Statement, card_id: &str, key: &str) -> Result<TransportSpec, String> {
        if st.card != card_id {
            return Err(
                "the evaluator decided with another card than this garbler's (a cached one from \
                 before its flags changed, or a forged one)"
                    .into(),
            );
        }
        if st.scheme != self.scheme.to_string() {
            return Err(format!(
                "the evaluator garbles under {}, the garbler under {}",
                st.scheme, self.scheme
            ));
        }
        st.path
            .check()
            .map_err(|e| format!("the stated path: {e}"))?;
        let name = &st.decision.transport;
        let spec: TransportSpec = name.parse().map_err(|e| format!("{name}: {e}"))?;
        if spec.listen_key().to_string() != key {
            return Err(format!("{name} arrived on the listener for {key}"));
        }
        // A provisional start names the setting it connected with and a placeholder path;
        // the garbler sends as accepted until the move, whose own choice is checked here
        // on the path it states. So any reliable setting of the listener will do (the two
        // hosts' default congestion controls may differ).
        if st.moves.is_some() {
            return if spec.family().delivery.is_reliable() {
                Ok(spec)
            } else {
                Err(format!("{name} does not carry a session"))
            };
        }
        if !transputation_transport::auto::candidates(&st.path)
            .iter()
            .any(|c| c.eligible && &c.name == name)
        {
            return Err(format!(
                "{name} is not a setting this garbler runs on the stated path"
            ));
        }
        Ok(spec)
    }
}

/// Whether the garbler of `card` serves `name`: it listens for its setting without the
/// sender options, and may set its kernel congestion control.
/// Whether one of the `connected` listeners (listen key, port) serves the candidate `name`
/// on the port the card names for its listen key.
fn held(card: &Card, name: &str, connected: &[(String, u16)]) -> bool {
    let Ok(spec) = name.parse::<TransportSpec>() else {
        return false;
    };
    let key = spec.listen_key().to_string();
    card.port_of(&key)
        .is_some_and(|port| connected.iter().any(|(k, p)| *k == key && *p == port))
}

fn served(card: &Card, name: &str) -> bool {
    let Ok(spec) = name.parse::<TransportSpec>() else {
        return false;
    };
    card.port_of(&spec.listen_key().to_string()).is_some()
        && spec
            .congestion_control()
            .is_none_or(|cc| card.congestion.iter().any(|k| k == cc))
}

/// How much faster than measured a path may be at most: a short train reads a fast link
/// low (a 32-packet train passes 500 Mbit/s in 0.6 ms, and read it as 84–146 Mbit/s on
/// the testbed's emulator).
pub(crate) const FASTER: f64 = 4.0;

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
