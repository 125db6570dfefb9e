//! What a session carries, as the model needs it: the protocol's round trips before the
//! bulk messages, the bulk messages in order, and the evaluator's set-up that overlaps the
//! connection. The 2PC crate derives it from the circuit, the scheme and its message flow.

use serde::{Deserialize, Serialize};

/// Which party sends a bulk message.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Sender {
    /// The garbler (labels, tables, decoding bits).
    Garbler,
    /// The evaluator (the OT extension matrix).
    Evaluator,
}

/// One bulk message: sent in one direction once the message before it has arrived.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Bulk {
    /// Who sends it.
    pub from: Sender,
    /// Its bytes, framing included.
    pub bytes: u64,
    /// Whether it is produced as it goes (garbled tables): its delivery is then no faster
    /// than the host's garbling pipeline ([`crate::HostConstants::pipeline_rate`]).
    pub computed: bool,
    /// What it is, for explanations (`OT extension`, `tables`).
    pub what: String,
}

/// A session's traffic to its (first) output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Workload {
    /// The protocol's round trips after the connection and before the first bulk message.
    pub waits: u32,
    /// The bulk messages, in order; each starts when the one before it has arrived.
    pub bulk: Vec<Bulk>,
    /// The evaluator's own work before it can send (loading and planning the circuit),
    /// seconds; it overlaps the connection.
    pub setup: f64,
}

impl Workload {
    /// Bytes the garbler sends in bulk.
    pub fn garbler_bytes(&self) -> u64 {
        self.bytes_from(Sender::Garbler)
    }

    /// Bytes the evaluator sends in bulk.
    pub fn evaluator_bytes(&self) -> u64 {
        self.bytes_from(Sender::Evaluator)
    }

    fn bytes_from(&self, s: Sender) -> u64 {
        self.bulk
            .iter()
            .filter(|b| b.from == s)
            .map(|b| b.bytes)
            .sum()
    }
}
