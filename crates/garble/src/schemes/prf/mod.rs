//! `prf`: garbling under the sole assumption that AES is a pseudorandom function
//! (Gueron–Lindell–Nof–Pinkas, "Fast Garbling of Circuits Under Standard Assumptions",
//! CCS 2015, eprint 2015/751), as specified in docs/garbling.md §2.
//!
//! Every wire has two independent labels (no global offset), used only as AES keys:
//! - AND gates: the XOR-based 4-to-2 garbled row reduction (§2.3): two ciphertexts
//!   `T1, T2` and a 4-bit mask of encrypted signal bits, one per row.
//! - XOR gates: one ciphertext `T` that moves the second input onto the first input's
//!   translated offset (§2.5).
//! - INV gates: the two labels swap; nothing is sent.
//!
//! The PRF input is `blk(g, r)`: the gate index `g` as LE64 in bytes 0..7 and a row tag `r`
//! as LE32 in bytes 12..15 (§2.2). Every (label, input) pair is used by one gate row only:
//! gate indices are unique and the row tag holds both signal bits (§2.7, rules 1 and 2).
//!
//! `prf` takes no tweak base ([`GarbleStart::tweak_base`](crate::GarbleStart::tweak_base)
//! is ignored, and an offset refused): what its security needs is that no PRF key sees one
//! input twice, and its keys are the wire labels, fresh for every garbling (input labels
//! from the garbler's PRG, every other label derived from them and from fresh randomness),
//! with no secret shared between garblings as `Δ` is under half gates. The same gate index
//! in two garblings is an input to two independent keys, which PRF security allows; so the
//! gate index restarts at 0 in every garbling and the bytes stay those of a garbling on its
//! own.
//!
//! Degenerate AND gates, whose inputs carry the same label set (`AND(a, a)`, or
//! `AND(a, NOT a)`, through any chain of INV gates and of such copies), would let the
//! evaluator learn both output labels (§2.7, rule 3: `T1 ⊕ T2` is the other label). Both
//! parties recognise them from the circuit alone and garble them without cryptography,
//! keeping the wire format: `AND(a, a)` copies `a`'s labels and sends 32 zero bytes;
//! `AND(a, NOT a)` is the constant 0, whose output gets fresh labels and whose `T1` is the
//! 0-label (which the evaluator may know, as the value is public); the mask nibble is 0.
//! Same-label-set XOR gates need nothing special: their output label is the public
//! constant's, and the other label stays hidden.

#[cfg(test)]
mod call_log;
mod eval_chunk;
mod evaluator;
mod garbler;
mod gates;
mod layout;
mod split;
mod staged;
#[cfg(test)]
mod tests;

pub use evaluator::PrfEvaluator;
pub use garbler::PrfGarbler;
pub use gates::{blk, eval_and, eval_xor, garble_and, garble_xor};
#[cfg(test)]
pub(crate) use layout::op_kinds;
pub(crate) use layout::{label_roots, PieceStart};

/// `prf`'s planner of `circuit` in the windows and segments `parallel` gives.
pub(crate) fn planner<'c>(
    circuit: &'c transputation_circuits::Circuit,
    parallel: &super::parallel::Parallel,
) -> super::planner::Planner<'c, layout::PrfRules> {
    layout::planner(circuit, parallel)
}
