//! The generic kernels (`super::super::generic`, `super::super::generic_prf`) on the
//! narrower x86 registers: the `aes-ni` backend's 128-bit [`Xmm`] and the `vaes256`
//! backend's 256-bit [`Ymm`], each behind a `#[target_feature]` entry point into which they
//! are inlined.

use super::super::{generic, generic_prf, PrfEvalOp, PrfOp};
use transputation_core::aes::register::broadcast_keys;
use transputation_core::aes::x86::registers::{Xmm, Ymm};
use transputation_core::aes::x86::{AesNi, RoundKeys, Vaes256};
use transputation_core::Block;

/// Generic kernels' widths per backend: garbled gates (four blocks each) and evaluated
/// gates (two blocks each) per group, and the registers they fill. AES-NI: eight blocks
/// in flight, as its fixed-key kernels (six measured slower evaluating: 11.5 against
/// 10.5 ns per AND gate on the MinCut size). `vaes256`: eight registers garbling (11.9
/// against 12.5 ns with six), six evaluating (8.7 against 9.3 with four, 9.6 with eight);
/// Zen 4 with the backend forced, `garble-bench`, 2026-11-28, under TCCR, whose fused
/// kernels `vaes256` now takes from `super::ymm`, as it does those of the label-keyed hash
/// (its widths here: the staged path's TCCR hashes).
const NI_GARBLE: (usize, usize) = (2, 8);
const NI_EVAL: (usize, usize) = (4, 8);
const Y_GARBLE: (usize, usize) = (4, 8);
const Y_EVAL: (usize, usize) = (6, 6);
/// `prf` gates per group and their key registers: eight keys in flight for AES-NI (as
/// its per-key kernels), four registers of two for `vaes256` (with two block registers
/// each for an AND gate's twelve live registers).
const NI_PRF: (usize, usize) = (2, 8);
const Y_PRF: (usize, usize) = (2, 4);
/// `prf`'s evaluated gates per group (two keys each) and their key registers: eight keys in
/// flight on both, as the per-key kernels. `vaes256` on Zen 3, sha-256.txt, fastest of 9–15
/// rounds, ns per AND gate: four registers 29.8–30.0, three 37.7, five 35.1, six 35.9; the
/// MinCut size: four 62.6, three 79.6, five 70.6.
const NI_PRF_EVAL: (usize, usize) = (4, 8);
const Y_PRF_EVAL: (usize, usize) = (4, 4);

macro_rules! entry_points {
    (
        $name:ident, $token:ty, $reg:ty, $features:literal, $garble:ident, $eval:ident,
        $prf:ident, $prf_eval:ident, {$($extra:item)*}
    ) => {
        /// The fused half-gates kernels of one backend.
        pub(in crate::schemes::fused) mod $name {
            use super::*;

            /// `prf`'s AND gates (`AND`) or XOR gates (see `fused::prf_garble_gates`).
            #[target_feature(enable = $features)]
            pub fn prf_garble_gates<const AND: bool>(
                t: $token,
                n: usize,
                op: impl Fn(usize) -> PrfOp,
                labels: &mut [[Block; 2]],
                out: &mut [u8],
            ) {
                const G: usize = $prf.0;
                const KR: usize = $prf.1;
                generic_prf::prf_garble_gates::<$reg, AND, G, KR>(t, n, op, labels, out);
            }

            /// `prf`'s crypto gates evaluated (see `fused::prf_eval_gates`).
            #[target_feature(enable = $features)]
            pub fn prf_eval_gates(
                t: $token,
                n: usize,
                op: impl Fn(usize) -> PrfEvalOp,
                labels: &mut [Block],
                window: &[u8],
            ) {
                const G: usize = $prf_eval.0;
                const KR: usize = $prf_eval.1;
                generic_prf::prf_eval_gates::<$reg, G, KR>(t, n, op, labels, window);
            }

            /// The four TCCR hashes of each garbled AND gate (see
            /// `fused::tccr_and_gates`).
            #[target_feature(enable = $features)]
            pub fn tccr_and_gates(
                t: $token,
                rk: &RoundKeys,
                delta: Block,
                gates: (&[[Block; 2]], &[u32], u64),
                out: &mut [[Block; 4]],
            ) {
                let k = broadcast_keys::<$reg>(t, rk);
                const G: usize = $garble.0;
                const R: usize = $garble.1;
                generic::tccr_and_gates::<$reg, G, R>(t, &k, delta, gates, out);
            }

            /// The two TCCR hashes of each evaluated AND gate (see
            /// `fused::tccr_eval_gates`).
            #[target_feature(enable = $features)]
            pub fn tccr_eval_gates(
                t: $token,
                rk: &RoundKeys,
                gates: (&[[Block; 2]], &[u32], u64),
                out: &mut [[Block; 2]],
            ) {
                let k = broadcast_keys::<$reg>(t, rk);
                const G: usize = $eval.0;
                const R: usize = $eval.1;
                generic::tccr_eval_gates::<$reg, G, R>(t, &k, gates, out);
            }

            $($extra)*
        }
    };
}

entry_points!(
    ni,
    AesNi,
    Xmm,
    "aes,sse2,ssse3",
    NI_GARBLE,
    NI_EVAL,
    NI_PRF,
    NI_PRF_EVAL,
    {
        /// The garbler's AND gates (see `fused::garble_and_gates`): under the TCCR hash with
        /// the round keys `rk`, under the label-keyed hash (`circular`) without (`vaes256`
        /// has its own: `super::ymm`).
        #[target_feature(enable = "aes,sse2,ssse3")]
        pub fn garble_and_gates(
            t: AesNi,
            rk: Option<&RoundKeys>,
            d: (Block, u64),
            zero: &mut [Block],
            ands: (&[u64], &[u32], u32),
            window: &mut [u8],
        ) {
            const G: usize = NI_GARBLE.0;
            const R: usize = NI_GARBLE.1;
            match rk {
                Some(rk) => {
                    let k = broadcast_keys::<Xmm>(t, rk);
                    let h = generic::FixedKey(&k);
                    generic::garble_and_gates::<Xmm, _, G, R>(t, h, d, zero, ands, window);
                }
                None => {
                    let h = generic::KeyedByLabel;
                    generic::garble_and_gates::<Xmm, _, G, R>(t, h, d, zero, ands, window);
                }
            }
        }

        /// The evaluator's AND gates (see `fused::eval_and_gates`), under either hash as
        /// `garble_and_gates`.
        #[target_feature(enable = "aes,sse2,ssse3")]
        pub fn eval_and_gates(
            t: AesNi,
            rk: Option<&RoundKeys>,
            base: u64,
            labels: &mut [Block],
            ands: (&[u64], &[u32], u32),
            window: &[u8],
        ) {
            const G: usize = NI_EVAL.0;
            const R: usize = NI_EVAL.1;
            match rk {
                Some(rk) => {
                    let k = broadcast_keys::<Xmm>(t, rk);
                    let h = generic::FixedKey(&k);
                    generic::eval_and_gates::<Xmm, _, G, R>(t, h, base, labels, ands, window);
                }
                None => {
                    let h = generic::KeyedByLabel;
                    generic::eval_and_gates::<Xmm, _, G, R>(t, h, base, labels, ands, window);
                }
            }
        }
    }
);
entry_points!(
    vaes256,
    Vaes256,
    Ymm,
    "aes,sse2,ssse3,sse4.1,avx,avx2,vaes",
    Y_GARBLE,
    Y_EVAL,
    Y_PRF,
    Y_PRF_EVAL,
    {}
);
