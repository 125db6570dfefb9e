//! The program `prf`'s garbler and evaluator both follow: which AND gates are degenerate
//! (the same label set on both inputs; see the `prf` module documentation), which gates
//! need AES, and where every gate's table and mask nibble go in the stream
//! (docs/garbling.md §2.8).

use transputation_circuits::{Circuit, Gate, WireId};

use crate::schemes::parallel::Parallel;
use crate::schemes::planner::{Planner, Rules};
use crate::schemes::waves::{OpKind, Schedule};

/// Bytes of an AND gate's ciphertexts.
const AND_BYTES: usize = 32;
/// Bytes of an XOR gate's ciphertext.
const XOR_BYTES: usize = 16;

/// How an AND gate's inputs relate: independent, or the same label set.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum AndKind {
    Normal,
    /// `AND(a, a)`: the output is `a`.
    Copy,
    /// `AND(a, NOT a)`: the output is 0.
    Zero,
}

/// Marks the label set of an odd number of inversions in a root ([`PrfRules`]).
const PARITY: u64 = 1 << 63;

/// For every wire of `circuit`, the wire whose label set it shares and the parity of
/// inversions in between, as [`PrfRules`] tracks them: what a piece of the circuit
/// garbled on its own ([`PieceStart`]) needs of its input wires.
pub(crate) fn label_roots(circuit: &Circuit) -> Vec<u64> {
    let mut rules = PrfRules::new(circuit);
    for (i, g) in circuit.gates().iter().enumerate() {
        rules.kind(g, i as u64);
    }
    rules.roots
}

/// The kind `prf` gives each gate of `circuit`, or of it as a piece of a larger circuit
/// (for tests).
#[cfg(test)]
pub(crate) fn op_kinds(circuit: &Circuit, piece: Option<&PieceStart>) -> Vec<OpKind> {
    let mut rules = match piece {
        Some(p) => PrfRules::for_piece(circuit, p),
        None => PrfRules::new(circuit),
    };
    let gates = circuit.gates().iter().enumerate();
    gates.map(|(i, g)| rules.kind(g, i as u64)).collect()
}

pub(super) fn and_kind(roots: &[u64], a: WireId, b: WireId) -> AndKind {
    let (ra, rb) = (roots[a as usize], roots[b as usize]);
    if ra == rb {
        AndKind::Copy
    } else if ra ^ rb == PARITY {
        AndKind::Zero
    } else {
        AndKind::Normal
    }
}

/// Where the mask of the `n`-th AND gate goes: a new byte before even gates.
fn mask_byte_first(n: u64) -> bool {
    n.is_multiple_of(2)
}

/// Crypto gates per AES call: their keys, inputs and outputs stay in the L1 cache.
pub(super) const CHUNK: usize = 128;

/// Marks an AND gate whose mask byte is in an earlier window ([`Schedule::extra`]).
pub(super) const CARRIED: u32 = u32::MAX;

/// Bytes of a gate in the stream, given the number of AND gates before it.
fn table_len(kind: OpKind, ands_before: u64) -> usize {
    match kind {
        OpKind::And | OpKind::AndCopy | OpKind::AndZero => {
            AND_BYTES + usize::from(mask_byte_first(ands_before))
        }
        OpKind::Xor => XOR_BYTES,
        OpKind::Inv => 0,
    }
}

fn is_and(kind: OpKind) -> bool {
    matches!(kind, OpKind::And | OpKind::AndCopy | OpKind::AndZero)
}

/// The rules of `prf`'s program: normal AND gates and XOR gates are the crypto gates;
/// `aux` is the gate index (the PRF inputs' `g`); `extra` of an AND gate is the offset of
/// its mask byte in the window: its own offset for the first gate of a pair (the byte
/// precedes its table), the first gate's for the second, or [`CARRIED`] when the pair is
/// split by a window boundary.
///
/// An AND gate is degenerate when its inputs share one label set: label sets are shared
/// through INV gates (swapped) and through `AND(a, a)` gates (copied), in any combination.
/// Per wire number the rules keep its label set's *root*: the creation number of the wire
/// that drew it (input `i` is `i`, gate `g`'s output `n_inputs + g`), with [`PARITY`] set
/// after an odd number of inversions. Creation numbers, unlike wire numbers, are never
/// reused, so roots stay apart in a generated circuit too.
pub(crate) struct PrfRules {
    roots: Vec<u64>,
    /// The creation number of gate 0's output: `n_inputs`, or a piece's place in its
    /// circuit ([`PieceStart::fresh_base`]).
    fresh_base: u64,
    last_even: u32,
}

/// Where a piece of a larger circuit, garbled on its own (coarse-grained parallelism,
/// `crate::coarse`), sits in it: what keeps its PRF inputs and its degenerate gates those
/// of the whole circuit's garbling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct PieceStart {
    /// The index of its first gate in the circuit: gate `g` of the piece uses the PRF
    /// inputs `blk(gate_base + g, r)`, unique across pieces whose input labels are keys
    /// in several of them (§2.7 rule 1).
    pub(crate) gate_base: u64,
    /// The creation number of its first gate's output in the circuit (the circuit's
    /// inputs plus `gate_base`).
    pub(crate) fresh_base: u64,
    /// The label-set root of each of its input wires in the circuit ([`label_roots`]):
    /// two inputs that carry one label set (a wire and its negation, or a copy made by
    /// `AND(a, a)`, in another piece) are known as such, so that an AND gate of both is
    /// garbled as degenerate, as the whole circuit's garbling does (§2.7 rule 3).
    pub(crate) input_roots: Vec<u64>,
}

impl PrfRules {
    fn new(circuit: &Circuit) -> Self {
        PrfRules {
            roots: (0..u64::from(circuit.num_wires())).collect(),
            fresh_base: circuit.n_inputs() as u64,
            last_even: CARRIED,
        }
    }

    fn for_piece(circuit: &Circuit, piece: &PieceStart) -> Self {
        let mut rules = PrfRules::new(circuit);
        rules.roots[..piece.input_roots.len()].copy_from_slice(&piece.input_roots);
        rules.fresh_base = piece.fresh_base;
        rules
    }
}

impl Rules for PrfRules {
    const NAME: &'static str = "prf";
    const INV_AS_XOR: bool = false;

    fn kind(&mut self, gate: &Gate, index: u64) -> OpKind {
        let fresh = self.fresh_base + index;
        let roots = &mut self.roots;
        let (kind, root) = match *gate {
            Gate::Inv { a, .. } => (OpKind::Inv, roots[a as usize] ^ PARITY),
            Gate::And { a, b, .. } => match and_kind(roots, a, b) {
                AndKind::Normal => (OpKind::And, fresh),
                AndKind::Copy => (OpKind::AndCopy, roots[a as usize]),
                AndKind::Zero => (OpKind::AndZero, fresh),
            },
            Gate::Xor { .. } => (OpKind::Xor, fresh),
        };
        roots[gate.output() as usize] = root;
        kind
    }

    fn crypto(kind: OpKind) -> bool {
        matches!(kind, OpKind::And | OpKind::Xor)
    }

    fn table_len(kind: OpKind, ands: u64) -> usize {
        table_len(kind, ands)
    }

    const AUX_IS_GATE: bool = true;

    fn release(&mut self) {
        self.roots = Vec::new();
    }

    fn table_end(kind: OpKind, offset: u32, extra: u32) -> usize {
        match kind {
            OpKind::And | OpKind::AndCopy | OpKind::AndZero => {
                AND_BYTES + usize::from(extra == offset)
            }
            OpKind::Xor => XOR_BYTES,
            OpKind::Inv => 0,
        }
    }

    fn aux(
        &mut self,
        kind: OpKind,
        index: u64,
        ands: u64,
        offset: usize,
        pos: usize,
    ) -> (u32, u32) {
        if pos == 0 {
            self.last_even = CARRIED;
        }
        let mask = if !is_and(kind) {
            0
        } else if mask_byte_first(ands) {
            self.last_even = offset as u32;
            self.last_even
        } else {
            self.last_even
        };
        // The gate index fits: a planned circuit has fewer than 2^32 gates.
        (index as u32, mask)
    }
}

/// `prf`'s planner of `circuit`, in the windows and segments `parallel` gives.
pub(crate) fn planner<'c>(circuit: &'c Circuit, parallel: &Parallel) -> Planner<'c, PrfRules> {
    Planner::new(circuit, parallel, PrfRules::new(circuit))
}

/// The planner of a piece of a larger circuit ([`PieceStart`]), on one thread.
pub(crate) fn piece_planner<'c>(circuit: &'c Circuit, piece: &PieceStart) -> Planner<'c, PrfRules> {
    Planner::new(
        circuit,
        &Parallel::none(),
        PrfRules::for_piece(circuit, piece),
    )
}

/// Where a mask byte is in the output: `base + mask` in the window at `base`, or the
/// position of a byte carried from the window before.
#[inline(always)]
pub(super) fn mask_position(mask: u32, base: usize, carried: usize) -> usize {
    if mask == CARRIED {
        carried
    } else {
        base + mask as usize
    }
}

/// Where op `i`'s table starts in its window, and where its mask nibble is:
/// `(table, mask byte or CARRIED, high nibble)`.
#[inline(always)]
pub(super) fn table_and_mask(schedule: &Schedule, i: usize) -> (usize, u32, bool) {
    let (offset, mask) = (schedule.offset[i], schedule.extra[i]);
    let own_byte = is_and(schedule.ops[i].kind()) && mask == offset;
    (offset as usize + usize::from(own_byte), mask, !own_byte)
}
