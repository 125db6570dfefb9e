//! What a party measured in a session: times by phase and bytes by part of the message
//! flow, counted as the messages cross the wire.

use std::time::{Duration, Instant};

use transputation_circuits::Party;
use transputation_transport::ByteCounts;

/// Bytes of one direction of a session, by part (payload of the messages in the crate
/// docs; `framing` is their 8-byte length prefixes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteParts {
    /// The session header (message 1 or 3).
    pub header: u64,
    /// The OT's messages of this direction (2 and 6, or 4 and 7).
    pub ot: u64,
    /// The seed of the garbler's input labels (message 5).
    pub labels: u64,
    /// Garbled tables and masks (message 8).
    pub tables: u64,
    /// Decoding bits (message 9).
    pub decoding: u64,
    /// The output sent back (message 10).
    pub output: u64,
    /// 8 bytes per frame.
    pub framing: u64,
}

impl ByteParts {
    /// Every part together: what the framed messages took, before the transport's own
    /// headers.
    pub fn total(&self) -> u64 {
        self.header
            + self.ot
            + self.labels
            + self.tables
            + self.decoding
            + self.output
            + self.framing
    }

    /// What was counted since `earlier`, a count of the same direction before.
    pub fn since(&self, earlier: &ByteParts) -> ByteParts {
        ByteParts {
            header: self.header - earlier.header,
            ot: self.ot - earlier.ot,
            labels: self.labels - earlier.labels,
            tables: self.tables - earlier.tables,
            decoding: self.decoding - earlier.decoding,
            output: self.output - earlier.output,
            framing: self.framing - earlier.framing,
        }
    }

    /// Counts one framed message of `payload` bytes under `part`.
    pub fn add(&mut self, part: Part, payload: usize) {
        let n = payload as u64;
        match part {
            Part::Header => self.header += n,
            Part::Ot => self.ot += n,
            Part::Labels => self.labels += n,
            Part::Tables => self.tables += n,
            Part::Decoding => self.decoding += n,
            Part::Output => self.output += n,
        }
        self.framing += 8;
    }
}

/// Which field of [`ByteParts`] a message's payload counts in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part {
    /// [`ByteParts::header`].
    Header,
    /// [`ByteParts::ot`].
    Ot,
    /// [`ByteParts::labels`].
    Labels,
    /// [`ByteParts::tables`].
    Tables,
    /// [`ByteParts::decoding`].
    Decoding,
    /// [`ByteParts::output`].
    Output,
}

/// What one party measured in one computation of a session.
#[derive(Clone, Debug)]
pub struct Report {
    /// The party.
    pub role: Party,
    /// Which computation of its session this is: 1 for the first (a fresh session's only
    /// one), 2, 3, … for the further computations of an open session, whose times, waits
    /// and bytes are theirs alone.
    pub computation: u64,
    /// The evaluator's time from being given this computation's input until it held the
    /// output: the protocol time `total` for the first computation, whose session starts
    /// with it; for a further one, its call to
    /// [`EvaluatorSession::compute`](crate::EvaluatorSession::compute) to its output.
    /// `None` for the garbler.
    pub online: Option<Duration>,
    /// The output bits, groups in order; `None` for a garbler under
    /// [`OutputMode::Evaluator`](crate::OutputMode::Evaluator).
    pub output: Option<Vec<bool>>,
    /// Protocol time until this party holds its output (the garbler: until the evaluator's
    /// last message arrived): the evaluator's from the call to `run` on a connected
    /// channel, the garbler's from the evaluator's first message (its header), so that
    /// an evaluator that connects while it still prepares does not count here. For a
    /// further computation of an open session: the evaluator's from its call to
    /// `compute`, the garbler's from the evaluator's message 11.
    pub total: Duration,
    /// Oblivious transfer: the evaluator from sending its first OT message until it holds
    /// its labels (the garbler's header and label seed, which arrive in between,
    /// included); the garbler its own OT computation (answering the base OT, then the
    /// extension), not the waits in between.
    pub ot: Duration,
    /// Times this party waited for the peer: each turn from sending (or, for the garbler,
    /// from its start) to receiving. The message table in the crate docs fixes it: 2 for
    /// the evaluator, 3 for the garbler, one less each when the evaluator has no input bits
    /// (no extension matrix to send).
    pub round_trips: u32,
    /// The paper's measure (Table 4 of the Transputation paper times garbling, the transfer
    /// of the tables and the output; OT and set-up excluded): the garbler from the end of
    /// its OT (it has read every extension matrix and, under `prf`, sent its replies), when
    /// it starts garbling and sending the tables (message 8), until the evaluator's last
    /// message (10) arrived; the evaluator from holding its input labels (the end of its
    /// OT) until it holds its output. Under `prf` the garbler garbles ahead during the OT
    /// (see the crate docs): those tables, garbled while the OT ran, are sent at the start
    /// of this time but their garbling is not in it.
    pub paper: Duration,
    /// When this party held its output (the garbler: when the evaluator's last message
    /// arrived, whether or not it carries the output), on this process's clock; what a
    /// caller measures from its own start to the output with.
    pub output_at: Instant,
    /// Time inside the garbling scheme (the garbler): wall time of its calls, so it counts
    /// the time the garbling threads waited for a core, too.
    pub garble: Duration,
    /// Time inside evaluation (the evaluator).
    pub eval: Duration,
    /// Whether the tables came as the frames of coarse-grained parallelism (both parties
    /// gave `Options::coarse`, one of them at least required it or both were willing),
    /// rather than in the circuit's order.
    pub frames: bool,
    /// The lanes the frames travelled on (channels of the session beside its first, one
    /// per piece modulo their number; both parties offered them and the transport opens
    /// them: `quic`'s streams), or 0: on the session's channel.
    pub lanes: usize,
    /// Bytes this party sent, by part.
    pub sent: ByteParts,
    /// Bytes this party received, by part.
    pub received: ByteParts,
    /// The channel's own counts (framed messages plus any transport headers).
    pub channel: ByteCounts,
}
