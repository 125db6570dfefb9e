//! The circuit representation every other part of Transputation computes on.
//!
//! A [`Circuit`] is a list of XOR, AND and INV gates in topological order over numbered wires.
//! Input wires are numbered first, `0..n_inputs`, group after group; every other wire is
//! written by exactly one gate. The position of a gate in [`Circuit::gates`] is its *gate
//! index*, which the garbling schemes use as a tweak (see docs/garbling.md §1.2), so the order
//! is part of the circuit's identity and is never changed once a circuit is built.
//!
//! Inputs come in groups, each owned by one [`Party`]; outputs come in groups of arbitrary
//! wires. Each group carries the [`BitOrder`] in which its value is written as hex, so that
//! the same hex string means the same value whether a circuit came from a Bristol file or
//! from the built-in library.

use std::fmt;
use std::sync::Arc;

pub use crate::gate::{Gate, WireId};
use crate::sections::{Sections, SectionsError};
use crate::source::{for_each_gate, GateBatch, GateSource, Generate, END_A, END_B, END_OUT};

/// The largest number of wires a circuit may have (2^31): enough for circuits of a billion
/// gates, small enough that per-wire tables of a hostile header cannot exhaust memory.
pub const MAX_WIRES: u64 = 1 << 31;

/// One of the two parties of a 2PC session.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Party {
    /// The party that garbles the circuit (Alice, the "server" in the paper).
    Garbler,
    /// The party that evaluates the garbled circuit (Bob, the "client").
    Evaluator,
}

impl Party {
    /// The lower-case name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Party::Garbler => "garbler",
            Party::Evaluator => "evaluator",
        }
    }

    /// The other party.
    pub fn other(self) -> Party {
        match self {
            Party::Garbler => Party::Evaluator,
            Party::Evaluator => Party::Garbler,
        }
    }
}

impl fmt::Display for Party {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Party {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "garbler" | "g" => Ok(Party::Garbler),
            "evaluator" | "e" => Ok(Party::Evaluator),
            other => Err(format!(
                "unknown party '{other}' (expected garbler or evaluator)"
            )),
        }
    }
}

/// How the wires of a group map to the bits of its hex representation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BitOrder {
    /// Wire `k` of the group is the `k`-th bit of the hex string written out as bits, left to
    /// right (old Bristol; FIPS-197 byte order; the built-in library).
    MsbFirst,
    /// Wire `k` of the group is bit `k` (weight 2^k) of the hex string read as one big-endian
    /// integer (Bristol Fashion).
    LsbFirst,
}

/// A group of input wires owned by one party. Its wires are consecutive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputGroup {
    /// Who provides this input.
    pub party: Party,
    /// Number of bits (wires).
    pub len: u32,
    /// How hex strings map to the wires.
    pub order: BitOrder,
    /// A short description, e.g. "key" or "input 1".
    pub name: String,
}

/// A group of output wires, decoded together as one hex value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputGroup {
    /// The wires, in group order; any wire, possibly repeated.
    pub wires: Vec<WireId>,
    /// How the wires map to the hex string.
    pub order: BitOrder,
    /// A short description, e.g. "ciphertext".
    pub name: String,
}

/// What makes a list of gates not a valid circuit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CircuitError {
    /// More wires than [`MAX_WIRES`].
    #[error("{0} wires is more than the supported maximum of 2^31")]
    TooManyWires(u64),
    /// The input groups need more wires than the circuit has.
    #[error("the input groups have {inputs} bits but the circuit has only {wires} wires")]
    InputsExceedWires {
        /// Total input bits.
        inputs: u64,
        /// Declared wires.
        wires: u32,
    },
    /// A gate refers to a wire beyond the circuit's wire count.
    #[error("gate {gate}: wire {wire} is out of range (the circuit has {wires} wires)")]
    WireOutOfRange {
        /// Gate index.
        gate: usize,
        /// The offending wire.
        wire: WireId,
        /// Declared wires.
        wires: u32,
    },
    /// A gate reads a wire that no input and no earlier gate provides.
    #[error("gate {gate}: wire {wire} is read before it is written")]
    ReadBeforeWritten {
        /// Gate index.
        gate: usize,
        /// The offending wire.
        wire: WireId,
    },
    /// A gate writes a wire that is an input or was written before.
    #[error("gate {gate}: wire {wire} is written twice")]
    WrittenTwice {
        /// Gate index.
        gate: usize,
        /// The offending wire.
        wire: WireId,
    },
    /// An output wire is out of range or never written.
    #[error("output group {group}: wire {wire} is never written")]
    OutputNotWritten {
        /// Output group index.
        group: usize,
        /// The offending wire.
        wire: WireId,
    },
}

/// A validated Boolean circuit. See the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circuit {
    num_wires: u32,
    inputs: Vec<InputGroup>,
    outputs: Vec<OutputGroup>,
    body: Body,
    /// AND, XOR and INV gates: counted while a held circuit is checked, given by a
    /// generator.
    counts: [u64; 3],
    /// Its parallel regions, if it has any (checked against it).
    sections: Option<Arc<Sections>>,
}

impl Sections {
    /// Checks that the sections fit `circuit`: within its gates, and every region of a
    /// section independent of the section's other regions. (Written here rather than in
    /// `sections`, so that the sections need not know the circuit that holds them.)
    ///
    /// # Errors
    /// The first thing that does not fit, by section, gate and wire; a generated circuit,
    /// whose gates are not held, has no sections.
    pub fn check(&self, circuit: &Circuit) -> Result<(), SectionsError> {
        if circuit.is_generated() {
            return Err(SectionsError::Generated);
        }
        self.check_gates(circuit.gates(), circuit.num_wires)
    }
}

/// Where a circuit's gates are: held in memory, or written by a generator as they are read.
#[derive(Clone, Debug)]
enum Body {
    Held(Vec<Gate>),
    Generated(Arc<dyn Generate>),
}

impl PartialEq for Body {
    fn eq(&self, other: &Body) -> bool {
        match (self, other) {
            (Body::Held(a), Body::Held(b)) => a == b,
            (Body::Generated(a), Body::Generated(b)) => a.identity() == b.identity(),
            _ => false,
        }
    }
}

impl Eq for Body {}

impl Circuit {
    /// Checks and assembles a circuit: every wire in range, every gate input written before it
    /// is read, every wire written once (inputs count as written), every output written.
    pub fn new(
        num_wires: u64,
        inputs: Vec<InputGroup>,
        outputs: Vec<OutputGroup>,
        gates: Vec<Gate>,
    ) -> Result<Circuit, CircuitError> {
        if num_wires > MAX_WIRES {
            return Err(CircuitError::TooManyWires(num_wires));
        }
        let wires = num_wires as u32;
        let n_inputs: u64 = inputs.iter().map(|g| u64::from(g.len)).sum();
        if n_inputs > num_wires {
            return Err(CircuitError::InputsExceedWires {
                inputs: n_inputs,
                wires,
            });
        }
        let mut written = WireSet::new(wires);
        for w in 0..n_inputs as u32 {
            written.insert(w);
        }
        let mut counts = [0u64; 3];
        for (gate, g) in gates.iter().enumerate() {
            counts[g.kind_index()] += 1;
            let (a, b) = g.inputs();
            for wire in std::iter::once(a).chain(b) {
                if wire >= wires {
                    return Err(CircuitError::WireOutOfRange { gate, wire, wires });
                }
                if !written.contains(wire) {
                    return Err(CircuitError::ReadBeforeWritten { gate, wire });
                }
            }
            let wire = g.output();
            if wire >= wires {
                return Err(CircuitError::WireOutOfRange { gate, wire, wires });
            }
            if !written.insert(wire) {
                return Err(CircuitError::WrittenTwice { gate, wire });
            }
        }
        for (group, o) in outputs.iter().enumerate() {
            if let Some(&wire) = o
                .wires
                .iter()
                .find(|&&w| w >= wires || !written.contains(w))
            {
                return Err(CircuitError::OutputNotWritten { group, wire });
            }
        }
        Ok(Circuit {
            num_wires: wires,
            inputs,
            outputs,
            body: Body::Held(gates),
            counts,
            sections: None,
        })
    }

    /// A circuit whose gates `generator` writes as they are read (see [`Generate`]):
    /// `num_wires` wire numbers, reused after their ends, the first `n_inputs` the inputs.
    /// The generator is trusted to write a valid circuit (a built-in, tested as one):
    /// only the groups are checked here.
    pub fn generated(
        num_wires: u32,
        inputs: Vec<InputGroup>,
        outputs: Vec<OutputGroup>,
        generator: Arc<dyn Generate>,
    ) -> Result<Circuit, CircuitError> {
        let n_inputs: u64 = inputs.iter().map(|g| u64::from(g.len)).sum();
        if n_inputs > u64::from(num_wires) {
            return Err(CircuitError::InputsExceedWires {
                inputs: n_inputs,
                wires: num_wires,
            });
        }
        for (group, o) in outputs.iter().enumerate() {
            if let Some(&wire) = o.wires.iter().find(|&&w| w >= num_wires) {
                return Err(CircuitError::OutputNotWritten { group, wire });
            }
        }
        let counts = generator.counts();
        Ok(Circuit {
            num_wires,
            inputs,
            outputs,
            body: Body::Generated(generator),
            counts,
            sections: None,
        })
    }

    /// The circuit with every gate held in memory: itself if it is held; if it is
    /// generated, its gates read once and its wires renumbered so that each is written
    /// once (the inputs keep their numbers, each gate's output takes the next), as a file
    /// or [`Circuit::gates`] needs them. It computes the same function with the same gates
    /// in the same order.
    ///
    /// # Errors
    /// If the renumbered circuit would have more than [`MAX_WIRES`] wires.
    pub fn to_held(&self) -> Result<Circuit, CircuitError> {
        if !self.is_generated() {
            return Ok(self.clone());
        }
        let n_inputs = self.n_inputs() as u64;
        let wires = n_inputs + self.num_gates();
        if wires > MAX_WIRES {
            return Err(CircuitError::TooManyWires(wires));
        }
        // What each wire number names now: its number in the held circuit.
        let mut now: Vec<WireId> = (0..self.num_wires).collect();
        let mut gates = Vec::with_capacity(self.num_gates() as usize);
        let mut next = n_inputs as WireId;
        let mut source = self.source(false);
        let mut batch = GateBatch::default();
        while source.next_batch(1 << 16, &mut batch) {
            for g in &batch.gates {
                gates.push(g.renumbered(|w| now[w as usize], next));
                now[g.output() as usize] = next;
                next += 1;
            }
        }
        let outputs = self
            .outputs
            .iter()
            .map(|o| OutputGroup {
                wires: o.wires.iter().map(|&w| now[w as usize]).collect(),
                ..o.clone()
            })
            .collect();
        Circuit::new(wires, self.inputs.clone(), outputs, gates)
    }

    /// Its parallel regions ([`Sections`]), if it has any.
    pub fn sections(&self) -> Option<&Sections> {
        self.sections.as_deref()
    }

    /// The circuit with `sections` as its parallel regions (none if `sections` is empty).
    ///
    /// # Errors
    /// If they do not fit it ([`Sections::check`]).
    pub fn with_sections(mut self, sections: Sections) -> Result<Circuit, SectionsError> {
        sections.check(&self)?;
        self.sections = (!sections.is_empty()).then(|| Arc::new(sections));
        Ok(self)
    }

    /// The circuit without parallel regions.
    pub fn without_sections(mut self) -> Circuit {
        self.sections = None;
        self
    }

    /// Whether the circuit's gates are generated as they are read rather than held
    /// ([`Circuit::generated`]); such a circuit has no [`Circuit::gates`].
    pub fn is_generated(&self) -> bool {
        matches!(self.body, Body::Generated(_))
    }

    /// The number of gates.
    pub fn num_gates(&self) -> u64 {
        self.counts.iter().sum()
    }

    /// The numbers of AND, XOR and INV gates.
    pub fn gate_counts(&self) -> [u64; 3] {
        self.counts
    }

    /// The gates in order, a batch at a time; with `ends`, each batch says which wires no
    /// later gate reads (the `source` module documentation). Every circuit, held or
    /// generated, is read this way.
    pub fn source(&self, ends: bool) -> Box<dyn GateSource + '_> {
        match &self.body {
            Body::Held(gates) => Box::new(HeldSource::new(self, gates, ends)),
            Body::Generated(generator) => generator.source(),
        }
    }

    /// Number of wires (the size of a per-wire label table).
    pub fn num_wires(&self) -> u32 {
        self.num_wires
    }

    /// The gates, in evaluation order; a gate's position is its gate index.
    ///
    /// # Panics
    /// If the circuit is generated ([`Circuit::is_generated`]): read it through
    /// [`Circuit::source`], as every part of Transputation that handles any circuit does.
    pub fn gates(&self) -> &[Gate] {
        match &self.body {
            Body::Held(gates) => gates,
            Body::Generated(generator) => panic!(
                "{} is generated as it is read and holds no gates: read it through \
                 Circuit::source",
                generator.identity()
            ),
        }
    }

    /// The input groups; their wires are `0..n_inputs()` in group order.
    pub fn inputs(&self) -> &[InputGroup] {
        &self.inputs
    }

    /// The output groups.
    pub fn outputs(&self) -> &[OutputGroup] {
        &self.outputs
    }

    /// Total number of input bits.
    pub fn n_inputs(&self) -> usize {
        self.inputs.iter().map(|g| g.len as usize).sum()
    }

    /// Total number of output bits.
    pub fn n_outputs(&self) -> usize {
        self.outputs.iter().map(|g| g.wires.len()).sum()
    }

    /// Number of input bits the given party provides.
    pub fn party_input_bits(&self, party: Party) -> usize {
        self.inputs
            .iter()
            .filter(|g| g.party == party)
            .map(|g| g.len as usize)
            .sum()
    }

    /// The input wires of each group, as ranges.
    pub fn input_ranges(&self) -> impl Iterator<Item = (&InputGroup, std::ops::Range<WireId>)> {
        let mut start = 0u32;
        self.inputs.iter().map(move |g| {
            let r = start..start + g.len;
            start += g.len;
            (g, r)
        })
    }

    /// Reassigns the input groups to parties, one party per group in order (the `--parties`
    /// flag for circuit files).
    pub fn set_input_parties(&mut self, parties: &[Party]) -> Result<(), String> {
        if parties.len() != self.inputs.len() {
            return Err(format!(
                "{} parties given but the circuit has {} input groups",
                parties.len(),
                self.inputs.len()
            ));
        }
        for (g, &p) in self.inputs.iter_mut().zip(parties) {
            g.party = p;
        }
        Ok(())
    }

    /// Plain evaluation of 64 independent instances at once: `inputs[w]` holds bit `i` of
    /// input wire `w` for instance `i`. Returns one word per output bit, groups in order.
    pub fn eval_words(&self, inputs: &[u64]) -> Vec<u64> {
        assert_eq!(inputs.len(), self.n_inputs(), "one word per input wire");
        let mut v = vec![0u64; self.num_wires as usize];
        v[..inputs.len()].copy_from_slice(inputs);
        for_each_gate(&mut *self.source(false), |g| match *g {
            Gate::Xor { a, b, out } => v[out as usize] = v[a as usize] ^ v[b as usize],
            Gate::And { a, b, out } => v[out as usize] = v[a as usize] & v[b as usize],
            Gate::Inv { a, out } => v[out as usize] = !v[a as usize],
        });
        self.outputs
            .iter()
            .flat_map(|o| o.wires.iter().map(|&w| v[w as usize]))
            .collect()
    }

    /// Plain evaluation on one input: one bool per input wire, one per output bit.
    pub fn eval_bits(&self, inputs: &[bool]) -> Vec<bool> {
        let words: Vec<u64> = inputs.iter().map(|&b| u64::from(b)).collect();
        self.eval_words(&words)
            .into_iter()
            .map(|w| w & 1 == 1)
            .collect()
    }

    /// SHA-256 of the circuit's canonical encoding: what two parties compare before a 2PC
    /// session starts, so that different circuits (or input/output layouts) are caught
    /// before any input is used. Two circuits have the same digest exactly when they have
    /// the same wires, input groups (length, owner, bit order), output groups (wires, bit
    /// order) and gates in the same order; names are not included.
    ///
    /// Encoding (all integers little-endian): the tag `transputation-circuit-v1`, the wire
    /// count (u32), the input group count (u32) and per group its length (u32), owner (u8:
    /// 0 garbler, 1 evaluator) and bit order (u8: 0 MSB first, 1 LSB first); the output
    /// group count (u32) and per group its bit order (u8), wire count (u32) and wires
    /// (u32 each); the gate count (u64) and per gate a tag (u8: 0 XOR, 1 AND, 2 INV) and its
    /// wires `a`, `b` (not for INV) and `out` (u32 each). A generated circuit
    /// ([`Circuit::generated`]) has, after the output groups, the tag `generated`, its gate
    /// count (u64) and its generator's identity (UTF-8) instead of its gates.
    pub fn digest(&self) -> [u8; 32] {
        self.digest_of(false)
    }

    /// [`Circuit::digest`], but of a generated circuit's gates as they are read (as if it
    /// were held), not of its identity: what names its gates exactly whatever build wrote
    /// them, at the cost of reading every gate (a plan kept on disk is keyed by it).
    pub fn content_digest(&self) -> [u8; 32] {
        self.digest_of(true)
    }

    fn digest_of(&self, generated_gates: bool) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let order = |o: BitOrder| match o {
            BitOrder::MsbFirst => 0u8,
            BitOrder::LsbFirst => 1,
        };
        let mut h = Sha256::new();
        h.update(b"transputation-circuit-v1");
        h.update(self.num_wires.to_le_bytes());
        h.update((self.inputs.len() as u32).to_le_bytes());
        for g in &self.inputs {
            h.update(g.len.to_le_bytes());
            h.update([u8::from(g.party == Party::Evaluator), order(g.order)]);
        }
        h.update((self.outputs.len() as u32).to_le_bytes());
        for o in &self.outputs {
            h.update([order(o.order)]);
            h.update((o.wires.len() as u32).to_le_bytes());
            for w in &o.wires {
                h.update(w.to_le_bytes());
            }
        }
        if let Body::Generated(generator) = &self.body {
            if !generated_gates {
                // A generator's gates follow from its identity; hashing billions of them
                // would cost both parties seconds before every session.
                h.update(b"generated");
                h.update(self.num_gates().to_le_bytes());
                h.update(generator.identity().as_bytes());
                return h.finalize().into();
            }
        }
        h.update(self.num_gates().to_le_bytes());
        // Hash the gates through a buffer: one update per gate would dominate the time.
        let mut buf = Vec::with_capacity(13 * 4096);
        let mut hash = |gates: &[Gate]| {
            buf.clear();
            for g in gates {
                match *g {
                    Gate::Xor { a, b, out } | Gate::And { a, b, out } => {
                        buf.push(u8::from(matches!(g, Gate::And { .. })));
                        buf.extend_from_slice(&a.to_le_bytes());
                        buf.extend_from_slice(&b.to_le_bytes());
                        buf.extend_from_slice(&out.to_le_bytes());
                    }
                    Gate::Inv { a, out } => {
                        buf.push(2);
                        buf.extend_from_slice(&a.to_le_bytes());
                        buf.extend_from_slice(&out.to_le_bytes());
                    }
                }
            }
            h.update(&buf);
        };
        match &self.body {
            Body::Held(gates) => gates.chunks(4096).for_each(&mut hash),
            Body::Generated(_) => {
                let mut source = self.source(false);
                let mut batch = GateBatch::default();
                while source.next_batch(4096, &mut batch) {
                    hash(&batch.gates);
                }
            }
        }
        h.finalize().into()
    }
}

/// The gates of a circuit held in memory.
pub(crate) struct HeldSource<'c> {
    gates: &'c [Gate],
    next: usize,
    /// Per gate, which wires end there ([`END_A`], [`END_B`], [`END_OUT`]); empty when no
    /// ends were asked for.
    ends: Vec<u8>,
}

impl<'c> HeldSource<'c> {
    /// With `ends`, finds each wire's end in one pass over the gates from the last, with one
    /// bit per wire (a wire's first reader seen from the end is its last): a bit table stays
    /// in a core's cache where a table of reader indices (32 bits a wire) would not.
    pub(crate) fn new(circuit: &'c Circuit, gates: &'c [Gate], ends: bool) -> Self {
        let mut flags = Vec::new();
        if ends {
            // Read later (or never ending: inputs, outputs).
            let mut seen = WireSet::new(circuit.num_wires());
            for w in 0..circuit.n_inputs() as WireId {
                seen.insert(w);
            }
            for o in circuit.outputs() {
                for &w in &o.wires {
                    seen.insert(w);
                }
            }
            flags = vec![0u8; gates.len()];
            for (g, f) in gates.iter().zip(flags.iter_mut()).rev() {
                let (a, b) = g.inputs();
                // The output is written here and read only after: its bit is cleared for the
                // gates before, which cannot read it.
                if !seen.remove(g.output()) {
                    *f |= END_OUT;
                }
                if seen.insert(a) {
                    *f |= END_A;
                }
                if let Some(b) = b.filter(|&b| b != a) {
                    if seen.insert(b) {
                        *f |= END_B;
                    }
                }
            }
        }
        HeldSource {
            gates,
            next: 0,
            ends: flags,
        }
    }
}

impl GateSource for HeldSource<'_> {
    fn next_batch(&mut self, max: usize, batch: &mut GateBatch) -> bool {
        batch.clear();
        let end = (self.next + max.max(1)).min(self.gates.len());
        let gates = &self.gates[self.next..end];
        batch.gates.extend_from_slice(gates);
        if !self.ends.is_empty() {
            for (pos, (g, &f)) in gates.iter().zip(&self.ends[self.next..end]).enumerate() {
                batch.push_ends(pos as u32, g, f);
            }
        }
        self.next = end;
        !batch.gates.is_empty()
    }
}

/// A fixed-size set of wires, one bit each.
pub(crate) struct WireSet(Vec<u64>);

impl WireSet {
    pub(crate) fn new(wires: u32) -> Self {
        WireSet(vec![0; (wires as usize).div_ceil(64)])
    }

    /// Inserts `w`; returns false if it was already there.
    pub(crate) fn insert(&mut self, w: WireId) -> bool {
        let (i, m) = (w as usize / 64, 1u64 << (w % 64));
        let fresh = self.0[i] & m == 0;
        self.0[i] |= m;
        fresh
    }

    /// Removes `w`; returns whether it was there.
    pub(crate) fn remove(&mut self, w: WireId) -> bool {
        let (i, m) = (w as usize / 64, 1u64 << (w % 64));
        let was = self.0[i] & m != 0;
        self.0[i] &= !m;
        was
    }

    pub(crate) fn contains(&self, w: WireId) -> bool {
        self.0[w as usize / 64] & (1u64 << (w % 64)) != 0
    }
}

/// Checks a circuit's source against its ends (tests): every gate reads live wires and
/// writes one that is not, ends are in gate order at gates of their batch and end live
/// wires, no input ends, and every output is live at the end.
#[cfg(test)]
pub(crate) fn check_ends(circuit: &Circuit) {
    let mut alive = vec![false; circuit.num_wires() as usize];
    alive[..circuit.n_inputs()].fill(true);
    let mut source = circuit.source(true);
    let mut batch = GateBatch::default();
    let mut gate = 0usize;
    while source.next_batch(777, &mut batch) {
        assert!(
            batch.ends.windows(2).all(|e| e[0].0 <= e[1].0),
            "ends out of gate order"
        );
        assert!(
            batch
                .ends
                .last()
                .is_none_or(|&(p, _)| (p as usize) < batch.gates.len()),
            "an end past the batch's last gate"
        );
        let mut ends = batch.ends.iter().peekable();
        for (i, g) in batch.gates.iter().enumerate() {
            let (a, b) = g.inputs();
            for w in std::iter::once(a).chain(b) {
                assert!(alive[w as usize], "gate {gate} reads wire {w}, not alive");
            }
            assert!(
                !alive[g.output() as usize],
                "gate {gate} overwrites a live wire"
            );
            alive[g.output() as usize] = true;
            while let Some(&(_, w)) = ends.next_if(|&&(p, _)| p as usize == i) {
                assert!(w as usize >= circuit.n_inputs(), "input {w} ended");
                assert!(
                    alive[w as usize],
                    "wire {w} ended at gate {gate}, not alive"
                );
                alive[w as usize] = false;
            }
            gate += 1;
        }
    }
    assert_eq!(gate as u64, circuit.num_gates());
    for &w in circuit.outputs().iter().flat_map(|o| &o.wires) {
        assert!(alive[w as usize], "output wire {w} not alive at the end");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(party: Party, len: u32) -> InputGroup {
        InputGroup {
            party,
            len,
            order: BitOrder::MsbFirst,
            name: String::new(),
        }
    }

    fn out(wires: Vec<WireId>) -> OutputGroup {
        OutputGroup {
            wires,
            order: BitOrder::MsbFirst,
            name: String::new(),
        }
    }

    #[test]
    fn evaluates_a_small_circuit() {
        // (x AND y) XOR NOT x
        let c = Circuit::new(
            5,
            vec![group(Party::Garbler, 1), group(Party::Evaluator, 1)],
            vec![out(vec![4])],
            vec![
                Gate::And { a: 0, b: 1, out: 2 },
                Gate::Inv { a: 0, out: 3 },
                Gate::Xor { a: 2, b: 3, out: 4 },
            ],
        )
        .unwrap();
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            assert_eq!(c.eval_bits(&[x, y]), vec![(x & y) ^ !x]);
        }
    }

    #[test]
    fn rejects_invalid_gate_lists() {
        let ins = || vec![group(Party::Garbler, 2)];
        let err = |gates: Vec<Gate>, outs: Vec<WireId>| {
            Circuit::new(4, ins(), vec![out(outs)], gates).unwrap_err()
        };
        assert_eq!(
            err(vec![Gate::Xor { a: 0, b: 9, out: 2 }], vec![2]),
            CircuitError::WireOutOfRange {
                gate: 0,
                wire: 9,
                wires: 4
            }
        );
        assert_eq!(
            err(vec![Gate::Xor { a: 0, b: 3, out: 2 }], vec![2]),
            CircuitError::ReadBeforeWritten { gate: 0, wire: 3 }
        );
        assert_eq!(
            err(vec![Gate::Inv { a: 0, out: 1 }], vec![1]),
            CircuitError::WrittenTwice { gate: 0, wire: 1 }
        );
        assert_eq!(
            err(vec![Gate::Inv { a: 0, out: 2 }], vec![3]),
            CircuitError::OutputNotWritten { group: 0, wire: 3 }
        );
        assert!(matches!(
            Circuit::new(1, ins(), vec![], vec![]),
            Err(CircuitError::InputsExceedWires { .. })
        ));
    }

    #[test]
    fn the_digest_sees_every_part_but_names() {
        let build = |party: Party, order: BitOrder, gate: Gate, name: &str| {
            let mut g = group(party, 2);
            g.order = order;
            g.name = name.to_string();
            Circuit::new(3, vec![g], vec![out(vec![2])], vec![gate]).unwrap()
        };
        let and = Gate::And { a: 0, b: 1, out: 2 };
        let base = build(Party::Garbler, BitOrder::MsbFirst, and, "x");
        let d = base.digest();
        assert_eq!(d, base.digest());
        assert_eq!(
            d,
            build(Party::Garbler, BitOrder::MsbFirst, and, "renamed").digest()
        );
        assert_ne!(
            d,
            build(Party::Evaluator, BitOrder::MsbFirst, and, "x").digest()
        );
        assert_ne!(
            d,
            build(Party::Garbler, BitOrder::LsbFirst, and, "x").digest()
        );
        let xor = Gate::Xor { a: 0, b: 1, out: 2 };
        assert_ne!(
            d,
            build(Party::Garbler, BitOrder::MsbFirst, xor, "x").digest()
        );
        let swapped = Gate::And { a: 1, b: 0, out: 2 };
        assert_ne!(
            d,
            build(Party::Garbler, BitOrder::MsbFirst, swapped, "x").digest()
        );
    }

    #[test]
    fn a_held_circuit_ends_each_wire_at_its_last_reader() {
        // w2 = w0 & w1; w3 = !w2 (never read, not an output); w4 = w2 ^ w0 (output)
        let c = Circuit::new(
            5,
            vec![InputGroup {
                party: Party::Garbler,
                len: 2,
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            vec![OutputGroup {
                wires: vec![4],
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            vec![
                Gate::And { a: 0, b: 1, out: 2 },
                Gate::Inv { a: 2, out: 3 },
                Gate::Xor { a: 2, b: 0, out: 4 },
            ],
        )
        .unwrap();
        let mut source = c.source(true);
        let mut batch = crate::GateBatch::default();
        assert!(source.next_batch(2, &mut batch));
        assert_eq!(batch.gates.len(), 2);
        // Wire 3 ends where it is written; inputs never end.
        assert_eq!(batch.ends, vec![(1, 3)]);
        assert!(source.next_batch(2, &mut batch));
        assert_eq!(batch.ends, vec![(0, 2)]);
        assert!(!source.next_batch(2, &mut batch));
        assert!(batch.gates.is_empty());
    }
}
