//! Free-XOR with half gates (Zahur–Rosulek–Evans, "Two Halves Make a Whole", EUROCRYPT 2015,
//! eprint 2014/756, §3): two ciphertexts per AND gate, XOR and INV free. The `ideal` and
//! `circular` schemes are this construction with different hashes (docs/garbling.md §4 and §5):
//!
//! - [`Tccr`] (`ideal`): the tweakable circular correlation-robust hash of Guo–Katz–Wang–Yu
//!   (S&P 2020, eprint 2019/074, §7.4), `H(X, t) = π(π(X) ⊕ t) ⊕ π(X)` with `π` AES under a
//!   public key fixed for the garbling ([`GarbleStart::hash_key`](crate::GarbleStart::hash_key):
//!   a 2PC session draws its own); secure if AES under that key is an ideal permutation.
//!   [`Mitccrh`], the multi-instance hash of GKWWY20, is here to be measured against it
//!   (docs/garbling.md §5.3).
//! - [`LabelKeyed`] (`circular`): `H(X, t) = AES_X(t)`, AES keyed with the wire label itself
//!   (libscapi's "NoFixedKey" half gates); it relies on related-key and circular security of
//!   AES, since AES is keyed with `X` and `X ⊕ Δ` and `Δ` appears in the tables.
//!
//! Labels: a global offset `Δ` with `lsb(Δ) = 1`, drawn by the garbler or given by a session
//! ([`GarbleStart::offset`](crate::GarbleStart::offset)); wire `w` has `W_w^1 = W_w^0 ⊕ Δ`,
//! so the permute bit `lsb(W_w^0)` differs between the two labels.
//!
//! Tables are written in circuit order, but the hashes of AND gates are computed in batches
//! of independent gates planned over windows of the circuit (module `waves`). Batching
//! changes when hashes are computed, never which, so garbler and evaluator need not batch
//! alike.
//!
//! # Tweaks
//! AND gate `n` of a garbling (from 0, in circuit order) hashes its first input under tweak
//! `j = 2(B + n) + 1` and its second under `j' = 2(B + n) + 2`, where `B` is the garbling's
//! tweak base ([`GarbleStart::tweak_base`](crate::GarbleStart::tweak_base)); `B = 0`, a
//! garbling on its own, is the counter of mpz's TCCR profile (docs/garbling.md §5.1).
//!
//! The rule: **under one `Δ`, no tweak is hashed for two label pairs `{X, X ⊕ Δ}`, across
//! all the garblings that share that `Δ`.** The security arguments of both hashes take every
//! hash query made under one `Δ` as one experiment and give each pair a tweak of its own:
//! ZRE15's proof of half gates with a correlation-robust hash, and GKWY20's TCCR hash in
//! half gates (§7.4 there), whose security is stated for distinct tweaks; `circular`'s
//! `AES_X(t)` needs the same of related-key AES. Within one garbling the counter gives it
//! (docs/garbling.md §3.4: two AND gates with one tweak and one first input would give away
//! `Δ` with probability 1/2). A session that keeps `Δ` for many computations, as one whose
//! `Δ` is the IKNP OT extension's correlation (fixed by its base OTs) must, gives each
//! garbling the number of AND gates garbled before it in the session as `B`: the tweaks
//! then follow on as if the session garbled one circuit, the concatenation of its
//! garblings, and the one-circuit argument applies unchanged. Restarting at 0 for every
//! garbling would repeat every tweak under one `Δ`.

mod evaluator;
mod garbler;
mod gates;
pub(crate) mod hash;
mod program;
mod split;
#[cfg(test)]
pub(crate) mod tests;

pub use evaluator::HalfGatesEvaluator;
pub use garbler::HalfGatesGarbler;
pub use gates::{eval_and, garble_and};
pub use hash::{HalfGateHash, LabelKeyed, Mitccrh, Tccr};

/// The half-gates planner of `circuit` in the windows and segments `parallel` gives.
pub(crate) fn planner<'c>(
    circuit: &'c transputation_circuits::Circuit,
    parallel: &super::parallel::Parallel,
) -> super::planner::Planner<'c, program::HalfGatesRules> {
    program::planner(circuit, parallel)
}
