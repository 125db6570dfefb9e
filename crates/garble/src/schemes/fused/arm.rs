//! The fused half-gates kernels on 64-bit ARM: the generic kernels (`super::generic`) on the
//! `armv8` backend's NEON register, behind `#[target_feature]` entry points. Their speed has
//! not been measured on ARM hardware here; the tests run them under `qemu-user`.

// `unsafe` is denied in the workspace and allowed only where a module needs it: calling a
// `#[target_feature]` function from code compiled without those features is `unsafe`; each
// such call holds the `Armv8` token, the proof that the CPU has them.
#![allow(unsafe_code)]

use transputation_core::aes::arm::{Armv8, Neon};
use transputation_core::aes::register::{broadcast_keys, RoundKeys};
use transputation_core::Block;

use super::{generic, generic_prf, PrfEvalOp, PrfOp};

/// Gates per group: four garbled gates (16 blocks) or eight evaluated ones in flight, whose
/// states and `π(x)` with the round keys fit the 32 NEON registers.
const GARBLE: usize = 4;
const EVAL: usize = 8;
/// `prf` gates per group: eight keys in flight, with two blocks each for an AND gate;
/// evaluated, two keys per gate.
const PRF: usize = 2;
const PRF_EVAL: usize = 4;

/// The garbler's AND gates (see `fused::garble_and_gates`).
pub(super) fn garble_and_gates(
    t: Armv8,
    rk: Option<&RoundKeys>,
    d: (Block, u64),
    zero: &mut [Block],
    ands: (&[u64], &[u32], u32),
    window: &mut [u8],
) {
    // SAFETY: the token proves that the CPU has the kernel's target features.
    unsafe { kernels::garble_and_gates(t, rk, d, zero, ands, window) }
}

/// The evaluator's AND gates (see `fused::eval_and_gates`).
pub(super) fn eval_and_gates(
    t: Armv8,
    rk: Option<&RoundKeys>,
    tweak_base: u64,
    labels: &mut [Block],
    ands: (&[u64], &[u32], u32),
    window: &[u8],
) {
    // SAFETY: the token proves that the CPU has the kernel's target features.
    unsafe { kernels::eval_and_gates(t, rk, tweak_base, labels, ands, window) }
}

/// The four TCCR hashes of each garbled AND gate (see `fused::tccr_and_gates`).
pub(super) fn tccr_and_gates(
    t: Armv8,
    rk: &RoundKeys,
    delta: Block,
    gates: (&[[Block; 2]], &[u32], u64),
    out: &mut [[Block; 4]],
) {
    // SAFETY: the token proves that the CPU has the kernel's target features.
    unsafe { kernels::tccr_and_gates(t, rk, delta, gates, out) }
}

/// The two TCCR hashes of each evaluated AND gate (see `fused::tccr_eval_gates`).
pub(super) fn tccr_eval_gates(
    t: Armv8,
    rk: &RoundKeys,
    gates: (&[[Block; 2]], &[u32], u64),
    out: &mut [[Block; 2]],
) {
    // SAFETY: the token proves that the CPU has the kernel's target features.
    unsafe { kernels::tccr_eval_gates(t, rk, gates, out) }
}

/// `prf`'s AND gates (`and`) or XOR gates (see `fused::prf_garble_gates`).
pub(super) fn prf_garble_gates(
    t: Armv8,
    and: bool,
    n: usize,
    op: impl Fn(usize) -> PrfOp,
    labels: &mut [[Block; 2]],
    out: &mut [u8],
) {
    // SAFETY: the token proves that the CPU has the kernels' target features.
    unsafe {
        if and {
            kernels::prf_garble_gates::<true>(t, n, op, labels, out);
        } else {
            kernels::prf_garble_gates::<false>(t, n, op, labels, out);
        }
    }
}

/// `prf`'s crypto gates evaluated (see `fused::prf_eval_gates`).
pub(super) fn prf_eval_gates(
    t: Armv8,
    n: usize,
    op: impl Fn(usize) -> PrfEvalOp,
    labels: &mut [Block],
    window: &[u8],
) {
    // SAFETY: the token proves that the CPU has the kernels' target features.
    unsafe { kernels::prf_eval_gates(t, n, op, labels, window) }
}

mod kernels {
    use super::*;

    #[target_feature(enable = "neon,aes")]
    pub(super) fn prf_eval_gates(
        t: Armv8,
        n: usize,
        op: impl Fn(usize) -> PrfEvalOp,
        labels: &mut [Block],
        window: &[u8],
    ) {
        generic_prf::prf_eval_gates::<Neon, PRF_EVAL, { 2 * PRF_EVAL }>(t, n, op, labels, window);
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn prf_garble_gates<const AND: bool>(
        t: Armv8,
        n: usize,
        op: impl Fn(usize) -> PrfOp,
        labels: &mut [[Block; 2]],
        out: &mut [u8],
    ) {
        generic_prf::prf_garble_gates::<Neon, AND, PRF, { 4 * PRF }>(t, n, op, labels, out);
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn garble_and_gates(
        t: Armv8,
        rk: Option<&RoundKeys>,
        d: (Block, u64),
        zero: &mut [Block],
        ands: (&[u64], &[u32], u32),
        window: &mut [u8],
    ) {
        const R: usize = 4 * GARBLE;
        match rk {
            Some(rk) => {
                let k = broadcast_keys::<Neon>(t, rk);
                let h = generic::FixedKey(&k);
                generic::garble_and_gates::<Neon, _, GARBLE, R>(t, h, d, zero, ands, window);
            }
            None => {
                let h = generic::KeyedByLabel;
                generic::garble_and_gates::<Neon, _, GARBLE, R>(t, h, d, zero, ands, window);
            }
        }
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn eval_and_gates(
        t: Armv8,
        rk: Option<&RoundKeys>,
        base: u64,
        labels: &mut [Block],
        ands: (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        const R: usize = 2 * EVAL;
        match rk {
            Some(rk) => {
                let k = broadcast_keys::<Neon>(t, rk);
                let h = generic::FixedKey(&k);
                generic::eval_and_gates::<Neon, _, EVAL, R>(t, h, base, labels, ands, window);
            }
            None => {
                let h = generic::KeyedByLabel;
                generic::eval_and_gates::<Neon, _, EVAL, R>(t, h, base, labels, ands, window);
            }
        }
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn tccr_and_gates(
        t: Armv8,
        rk: &RoundKeys,
        delta: Block,
        gates: (&[[Block; 2]], &[u32], u64),
        out: &mut [[Block; 4]],
    ) {
        let k = broadcast_keys::<Neon>(t, rk);
        generic::tccr_and_gates::<Neon, GARBLE, { 4 * GARBLE }>(t, &k, delta, gates, out);
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn tccr_eval_gates(
        t: Armv8,
        rk: &RoundKeys,
        gates: (&[[Block; 2]], &[u32], u64),
        out: &mut [[Block; 2]],
    ) {
        let k = broadcast_keys::<Neon>(t, rk);
        generic::tccr_eval_gates::<Neon, EVAL, { 2 * EVAL }>(t, &k, gates, out);
    }
}
