//! The program `prf`'s garbler and evaluator both follow: which AND gates are degenerate
//! (the same label set on both inputs; see the `prf` module documentation), which gates
//! need AES, and where every gate's table and mask nibble go in the stream
//! (docs/garbling.md §2.8).

use transputation_circuits::{Circuit, Gate, WireId};

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

/// For every wire, the wire whose label set it shares and the parity of inversions in
/// between, packed as `root | parity << 31` (wires are below 2^31). Label sets are shared
/// through INV gates (swapped) and through `AND(a, a)` gates (copied), in any combination.
pub(super) fn label_roots(circuit: &Circuit) -> Vec<u32> {
    let mut roots: Vec<u32> = (0..circuit.num_wires()).collect();
    for g in circuit.gates() {
        match *g {
            Gate::Inv { a, out } => roots[out as usize] = roots[a as usize] ^ (1 << 31),
            Gate::And { a, b, out } if and_kind(&roots, a, b) == AndKind::Copy => {
                roots[out as usize] = roots[a as usize];
            }
            _ => {}
        }
    }
    roots
}

pub(super) fn and_kind(roots: &[u32], a: WireId, b: WireId) -> AndKind {
    let (ra, rb) = (roots[a as usize], roots[b as usize]);
    if ra == rb {
        AndKind::Copy
    } else if ra ^ rb == 1 << 31 {
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

/// The program of `prf`: normal AND gates and XOR gates are the crypto gates; `aux` is the
/// gate index (the PRF inputs' `g`); `extra` of an AND gate is the offset of its mask byte
/// in the window: its own offset for the first gate of a pair (the byte precedes its table),
/// the first gate's for the second, or [`CARRIED`] when the pair is split by a window
/// boundary.
pub(super) fn schedule(circuit: &Circuit, window: usize) -> Schedule {
    let roots = label_roots(circuit);
    let mut last_even = CARRIED;
    Schedule::build(
        circuit,
        window,
        |g| match *g {
            Gate::And { a, b, .. } => match and_kind(&roots, a, b) {
                AndKind::Normal => OpKind::And,
                AndKind::Copy => OpKind::AndCopy,
                AndKind::Zero => OpKind::AndZero,
            },
            Gate::Xor { .. } => OpKind::Xor,
            Gate::Inv { .. } => OpKind::Inv,
        },
        |k| matches!(k, OpKind::And | OpKind::Xor),
        table_len,
        |k, gate, ands, offset, pos| {
            if pos == 0 {
                last_even = CARRIED;
            }
            let mask = if !is_and(k) {
                0
            } else if mask_byte_first(ands) {
                last_even = offset as u32;
                last_even
            } else {
                last_even
            };
            (gate as u32, mask)
        },
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
