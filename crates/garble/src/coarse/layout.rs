//! Cutting a circuit with parallel regions into the pieces a coarse-grained garbler garbles
//! one per thread ([`Layout`]): the stages in gate order (each run of glue one piece, each
//! section its regions grouped into pieces), every piece a circuit of its own whose inputs
//! and outputs are the wires that cross piece boundaries, kept by number in the driver's
//! label store.

use std::collections::HashMap;

use transputation_circuits::{
    BitOrder, Circuit, Gate, InputGroup, OutputGroup, Party, Stats, WireId,
};
use transputation_core::aes::Backend;
use transputation_core::prg::Prg;
use transputation_core::Block;

use crate::schemes::prf::{label_roots, PieceStart, PrfEvaluator, PrfGarbler};
use crate::{Evaluate, Garble, GarbleStart, Scheme};

/// Adjacent regions of a section are grouped into pieces of at least this many gates (the
/// last piece of a section takes what is left): a piece costs a plan of its own and a frame
/// header per batch, which regions of a few thousand gates (a `biomatch` template) would
/// not repay. Fixed, not tuned to the threads: both parties must cut the same pieces.
pub(crate) const MIN_PIECE_GATES: u64 = 1 << 16;

/// What stops a circuit from being garbled by regions.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CoarseError {
    /// It has no parallel regions.
    #[error(
        "the circuit has no parallel regions (a built-in that declares them, or a circuit \
         file with a .regions side file, is needed for coarse-grained parallelism)"
    )]
    NoSections,
}

/// One piece: consecutive gates of the circuit, as a circuit of its own.
pub(crate) struct Piece {
    /// Its gates, renumbered: its inputs first (one group), then each gate's output.
    pub(crate) circuit: Circuit,
    /// The store slot of each of its input wires, in order.
    pub(crate) inputs: Vec<u32>,
    /// The store slot of each of its output bits, in order.
    pub(crate) outputs: Vec<u32>,
    /// Where it sits in the circuit for `prf` (in a layout cut for it): its first gate's
    /// index (the PRF inputs continue from it) and its inputs' label sets (so that AND
    /// gates of one label set are known as degenerate across pieces).
    pub(crate) prf: Option<PieceStart>,
    /// The AND gates before it in the circuit (the half-gates tweaks continue from them).
    pub(crate) and_base: u64,
}

impl Piece {
    /// The bytes of its garbled tables under `scheme`.
    pub(crate) fn table_bytes(&self, scheme: Scheme) -> u64 {
        let stats = Stats::counts(&self.circuit);
        scheme.table_bytes(&stats) + scheme.mask_bytes(&stats)
    }

    fn prf_start(&self) -> &PieceStart {
        self.prf.as_ref().expect("a piece of a layout cut for prf")
    }

    /// The scheme's garbler of the piece, continuing the whole circuit's garbling from
    /// `start` (its offset, hash key and tweak base): the half-gates tweaks from the AND
    /// gates before the piece, `prf`'s gate indices and label sets from [`Piece::prf`].
    pub(crate) fn garbler(
        &self,
        scheme: Scheme,
        prg: &mut Prg,
        backend: Backend,
        start: GarbleStart,
    ) -> Box<dyn Garble + '_> {
        match scheme {
            Scheme::Prf => Box::new(PrfGarbler::for_piece(
                &self.circuit,
                prg,
                backend,
                self.prf_start(),
            )),
            scheme => scheme.garbler_with(
                &self.circuit,
                prg,
                backend,
                GarbleStart {
                    tweak_base: start.tweak_base + self.and_base,
                    ..start
                },
            ),
        }
    }

    /// The evaluator of [`Piece::garbler`]'s tables, from one label per input wire.
    pub(crate) fn evaluator(
        &self,
        scheme: Scheme,
        inputs: &[Block],
        backend: Backend,
        (tweak_base, hash_key): (u64, Option<Block>),
    ) -> Box<dyn Evaluate + '_> {
        let mut ev: Box<dyn Evaluate + '_> = match scheme {
            Scheme::Prf => Box::new(PrfEvaluator::for_piece(
                &self.circuit,
                inputs,
                backend,
                self.prf_start(),
            )),
            scheme => {
                scheme.evaluator_with(&self.circuit, inputs, backend, tweak_base + self.and_base)
            }
        };
        if let Some(key) = hash_key {
            ev.set_hash_key(key);
        }
        ev
    }
}

/// Pieces garbled side by side; stages run one after another.
pub(crate) struct Stage {
    pub(crate) pieces: Vec<Piece>,
}

/// A circuit cut into stages of pieces; see the module documentation. The label store
/// holds one entry per *slot*: the circuit's input wires are slots `0 .. n_inputs`, and
/// every wire that a piece writes and a later piece reads (or that is an output of the
/// circuit) gets a slot of its own.
pub struct Layout {
    /// The scheme it was cut for.
    pub(crate) scheme: Scheme,
    pub(crate) stages: Vec<Stage>,
    pub(crate) slots: usize,
    pub(crate) n_inputs: usize,
    /// The store slot of each output bit of the circuit, groups in order.
    pub(crate) outputs: Vec<u32>,
    gates: u64,
    digest: [u8; 32],
}

impl Layout {
    /// Cuts `circuit` by its sections ([`Circuit::sections`]) for garbling under `scheme`
    /// (`prf` needs its pieces' places in the circuit, the others do not).
    ///
    /// # Errors
    /// If it has none.
    pub fn of(circuit: &Circuit, scheme: Scheme) -> Result<Layout, CoarseError> {
        Layout::cut(circuit, scheme, MIN_PIECE_GATES)
    }

    /// As [`Layout::of`], grouping regions into pieces of at least `min_piece` gates (1: a
    /// piece per region) instead of 65,536. Both parties of a session must cut alike (the
    /// session header carries [`Layout::digest`], which tells).
    pub fn cut(circuit: &Circuit, scheme: Scheme, min_piece: u64) -> Result<Layout, CoarseError> {
        let sections = circuit.sections().ok_or(CoarseError::NoSections)?;
        let gates = circuit.gates();
        let n = gates.len() as u64;
        // Stages as gate ranges: glue before, between and after the sections.
        let mut stages: Vec<Vec<(u64, u64)>> = Vec::new();
        let mut at = 0;
        for section in sections.sections() {
            let range = section.gates();
            if range.start > at {
                stages.push(vec![(at, range.start)]);
            }
            stages.push(group(section.bounds(), min_piece));
            at = range.end;
        }
        if n > at {
            stages.push(vec![(at, n)]);
        }
        let digest = digest_of(&stages);
        let mut cutter = Cutter::new(circuit, scheme == Scheme::Prf);
        let stages = stages
            .into_iter()
            .map(|ranges| Stage {
                pieces: ranges
                    .into_iter()
                    .map(|(s, e)| cutter.piece(s, e))
                    .collect(),
            })
            .collect();
        let outputs = circuit
            .outputs()
            .iter()
            .flat_map(|o| o.wires.iter())
            .map(|&w| cutter.slot(w))
            .collect();
        Ok(Layout {
            scheme,
            stages,
            slots: cutter.slots as usize,
            n_inputs: circuit.n_inputs(),
            outputs,
            gates: n,
            digest,
        })
    }

    /// SHA-256 of its stages' pieces as gate ranges: two layouts of one circuit with the
    /// same digest cut it into the same pieces (what two parties must agree on; a session
    /// header carries it).
    pub fn digest(&self) -> [u8; 32] {
        self.digest
    }

    /// The number of pieces in all stages.
    pub fn pieces(&self) -> usize {
        self.stages.iter().map(|s| s.pieces.len()).sum()
    }

    /// The bytes of all pieces' tables (frame headers not counted): the circuit's tables,
    /// but for `prf`'s mask bytes, of which each piece with an odd number of AND gates has
    /// one more than its share.
    pub fn table_bytes(&self) -> u64 {
        self.stages
            .iter()
            .flat_map(|s| &s.pieces)
            .map(|p| p.table_bytes(self.scheme))
            .sum()
    }

    /// The table bytes of each stage's pieces (frame headers not counted), stage by stage,
    /// piece by piece: what the frames of each piece carry in all.
    pub fn piece_table_bytes(&self) -> Vec<Vec<u64>> {
        self.stages
            .iter()
            .map(|s| {
                s.pieces
                    .iter()
                    .map(|p| p.table_bytes(self.scheme))
                    .collect()
            })
            .collect()
    }

    /// Whether it could have been cut from `circuit`: the same gates, input and output
    /// wires in number (a cheap check against a layout of another circuit, not a proof).
    pub fn fits(&self, circuit: &Circuit) -> bool {
        self.gates == circuit.num_gates()
            && self.n_inputs == circuit.n_inputs()
            && self.outputs.len() == circuit.n_outputs()
    }

    /// The scheme it was cut for.
    pub fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// The number of stages.
    pub fn stages(&self) -> usize {
        self.stages.len()
    }

    /// The circuit's gates.
    pub(crate) fn gates(&self) -> u64 {
        self.gates
    }
}

/// The digest of stages given as the gate ranges of their pieces ([`Layout::digest`]):
/// the tag `transputation-layout-v1`, the stage count, then per stage its piece count and
/// each piece's first and end gate (all u64 little-endian).
fn digest_of(stages: &[Vec<(u64, u64)>]) -> [u8; 32] {
    use sha2::{Digest, Sha256};
    let mut h = Sha256::new();
    h.update(b"transputation-layout-v1");
    h.update((stages.len() as u64).to_le_bytes());
    for stage in stages {
        h.update((stage.len() as u64).to_le_bytes());
        for &(start, end) in stage {
            h.update(start.to_le_bytes());
            h.update(end.to_le_bytes());
        }
    }
    h.finalize().into()
}

/// A section's regions grouped into pieces of at least `min_piece` gates.
fn group(bounds: &[u64], min_piece: u64) -> Vec<(u64, u64)> {
    let mut pieces: Vec<(u64, u64)> = Vec::new();
    let mut start = bounds[0];
    for &b in &bounds[1..] {
        if b - start >= min_piece {
            pieces.push((start, b));
            start = b;
        }
    }
    let end = bounds[bounds.len() - 1];
    if start < end {
        match pieces.last_mut() {
            Some(last) => last.1 = end,
            None => pieces.push((start, end)),
        }
    }
    pieces
}

/// Marks a wire numbered as a piece's gate output rather than as one of its inputs.
const WRITTEN: u32 = 1 << 31;

/// What cutting pieces out of one circuit keeps between pieces.
struct Cutter<'c> {
    circuit: &'c Circuit,
    /// One past the last gate that reads each wire; `u64::MAX` for the circuit's outputs.
    read_until: Vec<u64>,
    /// Each wire's label-set root under `prf` ([`label_roots`]), when cutting for it.
    roots: Option<Vec<u64>>,
    /// The piece that last numbered each wire, and the number: an input index, or a gate
    /// position with [`WRITTEN`].
    owner: Vec<u32>,
    local: Vec<u32>,
    /// The slot of every wire a piece wrote that is read past it.
    slot_of: HashMap<WireId, u32>,
    slots: u32,
    pieces: u32,
    ands: u64,
}

impl<'c> Cutter<'c> {
    fn new(circuit: &'c Circuit, prf: bool) -> Cutter<'c> {
        let wires = circuit.num_wires() as usize;
        let mut read_until = vec![0u64; wires];
        for (g, gate) in circuit.gates().iter().enumerate() {
            let (a, b) = gate.inputs();
            for w in std::iter::once(a).chain(b) {
                read_until[w as usize] = g as u64 + 1;
            }
        }
        for o in circuit.outputs() {
            for &w in &o.wires {
                read_until[w as usize] = u64::MAX;
            }
        }
        Cutter {
            circuit,
            read_until,
            roots: prf.then(|| label_roots(circuit)),
            owner: vec![u32::MAX; wires],
            local: vec![0; wires],
            slot_of: HashMap::new(),
            slots: circuit.n_inputs() as u32,
            pieces: 0,
            ands: 0,
        }
    }

    /// The slot of a wire that an earlier piece wrote, or of an input wire.
    fn slot(&self, w: WireId) -> u32 {
        if (w as usize) < self.circuit.n_inputs() {
            w
        } else {
            self.slot_of[&w]
        }
    }

    /// Gates `start .. end` as a piece.
    fn piece(&mut self, start: u64, end: u64) -> Piece {
        let id = self.pieces;
        self.pieces += 1;
        let circuit: &'c Circuit = self.circuit;
        let gates = &circuit.gates()[start as usize..end as usize];
        let mut inputs: Vec<WireId> = Vec::new();
        for (k, gate) in gates.iter().enumerate() {
            let (a, b) = gate.inputs();
            for w in std::iter::once(a).chain(b) {
                if self.owner[w as usize] != id {
                    self.owner[w as usize] = id;
                    self.local[w as usize] = inputs.len() as u32;
                    inputs.push(w);
                }
            }
            self.owner[gate.output() as usize] = id;
            self.local[gate.output() as usize] = WRITTEN | k as u32;
        }
        let n_in = inputs.len() as u32;
        let number = |local: u32| {
            if local & WRITTEN != 0 {
                n_in + (local & !WRITTEN)
            } else {
                local
            }
        };
        let mut out_wires = Vec::new();
        let mut out_slots = Vec::new();
        let mut ands = 0;
        let renumbered: Vec<Gate> = gates
            .iter()
            .map(|g| {
                ands += u64::from(matches!(g, Gate::And { .. }));
                let out = g.output();
                if self.read_until[out as usize] > end {
                    out_wires.push(number(self.local[out as usize]));
                    out_slots.push(self.slots);
                    self.slot_of.insert(out, self.slots);
                    self.slots += 1;
                }
                g.renumbered(
                    |w| number(self.local[w as usize]),
                    number(self.local[out as usize]),
                )
            })
            .collect();
        let input_slots = inputs.iter().map(|&w| self.slot(w)).collect();
        let group = |len: usize| InputGroup {
            party: Party::Garbler,
            len: len as u32,
            order: BitOrder::LsbFirst,
            name: "crossing wires".into(),
        };
        let outputs = if out_wires.is_empty() {
            Vec::new()
        } else {
            vec![OutputGroup {
                wires: out_wires,
                order: BitOrder::LsbFirst,
                name: "crossing wires".into(),
            }]
        };
        let circuit = Circuit::new(
            u64::from(n_in) + gates.len() as u64,
            vec![group(inputs.len())],
            outputs,
            renumbered,
        )
        .expect("a run of a valid circuit's gates, its outside wires as inputs, is valid");
        let piece = Piece {
            circuit,
            inputs: input_slots,
            outputs: out_slots,
            prf: self.roots.as_ref().map(|roots| PieceStart {
                gate_base: start,
                fresh_base: self.circuit.n_inputs() as u64 + start,
                input_roots: inputs.iter().map(|&w| roots[w as usize]).collect(),
            }),
            and_base: self.ands,
        };
        self.ands += ands;
        piece
    }
}
