//! Free-XOR with half gates (Zahur–Rosulek–Evans, "Two Halves Make a Whole", EUROCRYPT 2015,
//! eprint 2014/756, §3): two ciphertexts per AND gate, XOR and INV free. The `ideal` and
//! `circular` schemes are this construction with different hashes (docs/garbling.md §4 and §5):
//!
//! - [`Tccr`] (`ideal`): the tweakable circular correlation-robust hash of Guo–Katz–Wang–Yu
//!   (S&P 2020, eprint 2019/074, §7.4), `H(X, t) = π(π(X) ⊕ t) ⊕ π(X)` with `π` AES under one
//!   fixed public key; secure if fixed-key AES is an ideal permutation.
//! - [`LabelKeyed`] (`circular`): `H(X, t) = AES_X(t)`, AES keyed with the wire label itself
//!   (libscapi's "NoFixedKey" half gates); it relies on related-key and circular security of
//!   AES, since AES is keyed with `X` and `X ⊕ Δ` and `Δ` appears in the tables.
//!
//! Labels: a global offset `Δ` with `lsb(Δ) = 1`; wire `w` has `W_w^1 = W_w^0 ⊕ Δ`, so the
//! permute bit `lsb(W_w^0)` differs between the two labels. The `n`-th AND gate of a session
//! (from 0) hashes its first input under tweak `j = 2n + 1` and its second under
//! `j' = 2n + 2` (the counter of mpz's TCCR profile, docs/garbling.md §5.1): no tweak repeats in a
//! session, which the security of both hashes requires (docs/garbling.md §3.4).
//!
//! Tables are written in circuit order, but the hashes of AND gates are computed in batches
//! of independent gates planned over windows of the circuit (module `waves`). Batching
//! changes when hashes are computed, never which, so garbler and evaluator need not batch
//! alike.

mod evaluator;
mod garbler;
mod gates;
mod hash;
mod program;
#[cfg(test)]
pub(crate) mod tests;

pub use evaluator::HalfGatesEvaluator;
pub use garbler::HalfGatesGarbler;
pub use gates::{eval_and, garble_and};
pub use hash::{HalfGateHash, LabelKeyed, Tccr};
