//! The fused VAES kernels of the garbling schemes' gates: AES work and table rows in
//! registers, built on the AES kernels' blocks (`transputation_core::aes::x86`).
//!
//! The half-gates AND gates under the TCCR hash (`garble_and_gates`, `eval_and_gates`)
//! read the input labels straight from the label table by the gates' packed slots, hash in
//! registers, and write tables and output labels, so that no label or hash goes through a
//! staging buffer. Staged inputs written as 64-bit halves and read back as vectors stall on
//! store forwarding; on the MinCut-size circuit fusing took garbling from about 20 to 18.5
//! ns per AND gate and evaluation from 15 to 14. `tccr_and_gates` and `tccr_eval_gates`
//! make the hashes' inputs and tweaks in registers for the staged path. So do `prf`'s
//! garbled XOR and AND gates (`prf_garble_gates`): each gate's two label pairs ordered by
//! signal bit in one register of four keys, its PRF inputs made from the gate index in
//! registers, eight gates' key schedules interleaved; a last group of fewer gates runs its
//! unused registers on zeros, as latency would otherwise bound it. The other backends'
//! kernels and the evaluator's of `prf` are reached from here too (`narrow`, `ymm`).
//!
//! The entry points take the [`Vaes`] token, the proof that the CPU has every target
//! feature the kernels are compiled with.

// `unsafe` is denied in the workspace and allowed only where a module needs it; of the
// cryptography, only in the AES kernels: here and in `transputation_core::aes::x86`.
// Calling a `#[target_feature]` function from code compiled without those features, or
// loading and storing a vector through a raw pointer, are `unsafe` operations; each is a
// small block whose `// SAFETY:` comment gives its argument: the token for the former, a
// reference to whole `Block`s or bytes for the latter.
#![allow(unsafe_code)]
// The AVX-512 and VAES intrinsics are stable since Rust 1.89, later than the workspace's
// declared `rust-version` (see `transputation_core::aes::x86`).
#![allow(clippy::incompatible_msrv)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use core::ops::Range;

use transputation_core::aes::x86::vaes::{
    broadcast_keys, byte_reverse_64, keys_core, load4, load_part, store4, store_part, tccr_core,
};
use transputation_core::aes::x86::{ni, RoundKeys, Token};
use transputation_core::Block;

use super::{set_nibble, PrfEvalOp, PrfOp};
use crate::schemes::waves::unpack_slots;

/// Gates (AND-gate TCCR, half-gates garbling) or gate pairs (evaluation) per group: eight
/// registers of state and eight of `π(x)`, with 11 round keys, fit the 32 AVX-512 registers.
const WIDTH: usize = 8;

/// Registers of two evaluated AND gates each per group of the fused evaluator. Measured on
/// Zen 4 (`garble-bench`, `ideal`, medians of 7, 2026-11-30): 2, 3, 4 and 5 registers
/// 10.0–10.6 ns per AND gate on the MinCut size and 7.75–8.27 on sha-256.txt, 6 registers
/// 10.89 and 8.27, 8 registers 10.78 and 8.30, within this VM's noise of each other; four
/// keep eight gates in flight, as the 256-bit kernels do.
const EVAL_WIDTH: usize = 4;

/// `prf` gates per group: `PRF_GROUP` key registers in flight hide the latency of the key
/// schedules' rounds.
const PRF_GROUP: usize = 8;

/// The four TCCR hashes of each half-gates AND gate (see `fused::tccr_and_gates`).
pub(super) fn tccr_and_gates(
    t: Token,
    rk: &RoundKeys,
    delta: Block,
    inputs: &[[Block; 2]],
    and_index: &[u32],
    tweak_base: u64,
    out: &mut [[Block; 4]],
) {
    debug_assert!(inputs.len() == and_index.len() && inputs.len() == out.len());
    let gates = (inputs, and_index, tweak_base);
    // SAFETY (each arm): the token proves that the CPU has the kernel's target features.
    match t {
        Token::Vaes(_) => unsafe {
            kernels::tccr_and_gates(rk, delta, inputs, and_index, tweak_base, out)
        },
        Token::Vaes256(t) => unsafe { narrow::vaes256::tccr_and_gates(t, rk, delta, gates, out) },
        Token::AesNi(t) => unsafe { narrow::ni::tccr_and_gates(t, rk, delta, gates, out) },
    }
}

/// The two TCCR hashes of each evaluated AND gate (see `fused::tccr_eval_gates`).
pub(super) fn tccr_eval_gates(
    t: Token,
    rk: &RoundKeys,
    inputs: &[[Block; 2]],
    and_index: &[u32],
    tweak_base: u64,
    out: &mut [[Block; 2]],
) {
    debug_assert!(inputs.len() == and_index.len() && inputs.len() == out.len());
    let gates = (inputs, and_index, tweak_base);
    // SAFETY (each arm): the token proves that the CPU has the kernel's target features.
    match t {
        Token::Vaes(_) => unsafe {
            kernels::tccr_eval_gates(rk, inputs, and_index, tweak_base, out)
        },
        Token::Vaes256(t) => unsafe { narrow::vaes256::tccr_eval_gates(t, rk, gates, out) },
        Token::AesNi(t) => unsafe { narrow::ni::tccr_eval_gates(t, rk, gates, out) },
    }
}

/// The half-gates garbler's AND gates, fused (see `fused::garble_and_gates`).
///
/// With round keys `rk`, under the TCCR hash; without, under the label-keyed hash, which
/// has kernels on 128- and 256-bit registers only (the `vaes` backend takes the latter).
pub(super) fn garble_and_gates(
    t: Token,
    rk: Option<&RoundKeys>,
    delta: Block,
    tweak_base: u64,
    zero: &mut [Block],
    ands: (&[u64], &[u32], u32),
    window: &mut [u8],
) {
    debug_assert_eq!(ands.0.len(), ands.1.len());
    let d = (delta, tweak_base);
    // SAFETY (each arm): the token proves that the CPU has the kernel's target features.
    match (t, rk) {
        (Token::Vaes(_), Some(rk)) => unsafe {
            kernels::garble_and_gates(rk, delta, tweak_base, zero, ands, window)
        },
        (Token::Vaes(t), None) => ymm::garble_and_gates(t.narrow(), None, d, zero, ands, window),
        (Token::Vaes256(t), rk) => ymm::garble_and_gates(t, rk, d, zero, ands, window),
        (Token::AesNi(t), rk) => unsafe {
            narrow::ni::garble_and_gates(t, rk, d, zero, ands, window)
        },
    }
}

/// The half-gates evaluator's AND gates, fused (see `fused::eval_and_gates`).
///
/// Under either hash, as [`garble_and_gates`].
pub(super) fn eval_and_gates(
    t: Token,
    rk: Option<&RoundKeys>,
    tweak_base: u64,
    labels: &mut [Block],
    ands: (&[u64], &[u32], u32),
    window: &[u8],
) {
    debug_assert_eq!(ands.0.len(), ands.1.len());
    let base = tweak_base;
    // SAFETY (each arm): the token proves that the CPU has the kernel's target features.
    match (t, rk) {
        (Token::Vaes(_), Some(rk)) => unsafe {
            kernels::eval_and_gates(rk, base, labels, ands, window)
        },
        (Token::Vaes(t), None) => ymm::eval_and_gates(t.narrow(), None, base, labels, ands, window),
        (Token::Vaes256(t), rk) => ymm::eval_and_gates(t, rk, base, labels, ands, window),
        (Token::AesNi(t), rk) => unsafe {
            narrow::ni::eval_and_gates(t, rk, base, labels, ands, window)
        },
    }
}

/// Asks for the cache lines of the `bytes` bytes at address `at` (at most 64: the first and
/// last line).
#[inline(always)]
pub(super) fn prefetch(at: usize, bytes: usize) {
    let first = at as *const i8;
    // SAFETY: a prefetch is a hint that reads nothing architecturally and faults on no
    // address; SSE is in every x86-64 CPU.
    unsafe {
        _mm_prefetch::<_MM_HINT_T0>(first);
        _mm_prefetch::<_MM_HINT_T0>(first.wrapping_add(bytes - 1));
    }
}

/// `prf`'s AND or XOR gates, fused (see `fused::prf_garble_gates`).
pub(super) fn prf_garble_gates(
    t: Token,
    and: bool,
    n: usize,
    op: impl Fn(usize) -> PrfOp,
    labels: &mut [[Block; 2]],
    out: &mut [u8],
) {
    // SAFETY (each call): the token proves that the CPU has the kernels' target features.
    unsafe {
        match (t, and) {
            (Token::Vaes(_), true) => kernels::prf_garble_gates::<true>(n, op, labels, out),
            (Token::Vaes(_), false) => kernels::prf_garble_gates::<false>(n, op, labels, out),
            (Token::Vaes256(t), true) => {
                narrow::vaes256::prf_garble_gates::<true>(t, n, op, labels, out)
            }
            (Token::Vaes256(t), false) => {
                narrow::vaes256::prf_garble_gates::<false>(t, n, op, labels, out)
            }
            (Token::AesNi(t), true) => narrow::ni::prf_garble_gates::<true>(t, n, op, labels, out),
            (Token::AesNi(t), false) => {
                narrow::ni::prf_garble_gates::<false>(t, n, op, labels, out)
            }
        }
    }
}

/// `prf`'s crypto gates evaluated, fused (see `fused::prf_eval_gates`): on 256-bit registers
/// for both VAES backends, on 128-bit ones for `aes-ni`.
pub(super) fn prf_eval_gates(
    t: Token,
    n: usize,
    op: impl Fn(usize) -> PrfEvalOp,
    labels: &mut [Block],
    window: &[u8],
) {
    // SAFETY (each call): the token proves that the CPU has the kernels' target features.
    unsafe {
        match t {
            Token::Vaes(t) => narrow::vaes256::prf_eval_gates(t.narrow(), n, op, labels, window),
            Token::Vaes256(t) => narrow::vaes256::prf_eval_gates(t, n, op, labels, window),
            Token::AesNi(t) => narrow::ni::prf_eval_gates(t, n, op, labels, window),
        }
    }
}

/// The kernels: `#[target_feature]` functions, reached through the token-taking functions
/// above.
mod kernels {
    use super::*;

    /// The TCCR inputs and tweaks of one AND gate in one register each: blocks
    /// `(a0, a0 ⊕ Δ, b0, b0 ⊕ Δ)` from `[a0, b0]` and `dmask = (0, Δ, 0, Δ)`, and tweaks
    /// `(j, j, j', j')` with `j = 2(B + n) + 1`, `j' = 2(B + n) + 2` for the AND index `n`
    /// and `addends = and_tweak_addends(B)`.
    #[inline]
    #[target_feature(enable = "avx,avx2,avx512f,avx512bw")]
    fn and_gate_inputs(
        ab: &[Block; 2],
        n: u32,
        dmask: __m512i,
        addends: __m512i,
    ) -> (__m512i, __m512i) {
        // SAFETY: `ab` points to 32 readable bytes (two transparent `u128`s), and
        // `_mm256_loadu_si256` has no alignment requirement.
        let ab = unsafe { _mm256_loadu_si256(ab.as_ptr().cast()) };
        (
            and_gate_block(_mm512_castsi256_si512(ab), dmask),
            and_gate_tweaks(n, addends),
        )
    }

    /// The tweaks' addends under the tweak base `B`, once per batch: `2(B + n) + c` is
    /// `2n + (2B + c)`, so the per-gate work stays one shift and one masked add of
    /// `(·, 2B + c0, ·, 2B + c1, …)`, the constants `c` of the high 64-bit halves of
    /// `consts` with `2B` added (wrapping, as the staged path's `u64` arithmetic; the
    /// garbler and evaluator keep `B + n` below `2^63`). `B = 0` gives `consts`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn tweak_addends(tweak_base: u64, consts: __m512i) -> __m512i {
        let two_b = _mm512_set1_epi64(tweak_base.wrapping_mul(2) as i64);
        _mm512_mask_add_epi64(consts, 0xaa, consts, two_b)
    }

    /// [`tweak_addends`] for one garbled AND gate's tweaks `(j, j, j', j')`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn and_tweak_addends(tweak_base: u64) -> __m512i {
        tweak_addends(tweak_base, _mm512_set_epi64(2, 0, 2, 0, 1, 0, 1, 0))
    }

    /// [`tweak_addends`] for two evaluated AND gates' tweaks `(j0, j0', j1, j1')`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn eval_tweak_addends(tweak_base: u64) -> __m512i {
        tweak_addends(tweak_base, _mm512_set_epi64(2, 0, 1, 0, 2, 0, 1, 0))
    }

    /// `(a0, a0 ⊕ Δ, b0, b0 ⊕ Δ)` from a register whose 128-bit lanes 0 and 1 hold `a0`
    /// and `b0`, with `dmask = (0, Δ, 0, Δ)`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn and_gate_block(ab: __m512i, dmask: __m512i) -> __m512i {
        // 128-bit lanes (a0, a0, b0, b0), then Δ XORed into lanes 1 and 3.
        _mm512_xor_si512(_mm512_shuffle_i64x2::<0x50>(ab, ab), dmask)
    }

    /// The four TCCR hashes of each half-gates AND gate, one register per gate, `WIDTH`
    /// gates at a time: inputs and tweaks are made in registers from the two 0-labels, the
    /// AND index and the tweak base, never staged in memory.
    #[target_feature(enable = "aes,sse2,ssse3,avx,avx2,vaes,avx512f,avx512bw")]
    pub(super) fn tccr_and_gates(
        rk: &RoundKeys,
        delta: Block,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 4]],
    ) {
        let k = broadcast_keys(rk);
        let dmask = _mm512_maskz_broadcast_i32x4(0xf0f0, ni::load(&delta));
        let addends = and_tweak_addends(tweak_base);
        let (ic, it) = inputs.as_chunks::<WIDTH>();
        let (nc, nt) = and_index.as_chunks::<WIDTH>();
        let (oc, ot) = out.as_chunks_mut::<WIDTH>();
        for ((ab, n), o) in ic.iter().zip(nc).zip(oc.iter_mut()) {
            let (mut s, mut t) = (
                [_mm512_setzero_si512(); WIDTH],
                [_mm512_setzero_si512(); WIDTH],
            );
            for (((s, t), ab), &n) in s.iter_mut().zip(t.iter_mut()).zip(ab).zip(n) {
                (*s, *t) = and_gate_inputs(ab, n, dmask, addends);
            }
            tccr_core::<_, 3>(&k, &mut s, &t);
            for (o, &s) in o.iter_mut().zip(&s) {
                store4(o, s);
            }
        }
        // At most 7 gates left, one register each.
        for ((ab, &n), o) in it.iter().zip(nt).zip(ot.iter_mut()) {
            let (s, t) = and_gate_inputs(ab, n, dmask, addends);
            let mut s = [s];
            tccr_core::<_, 4>(&k, &mut s, &[t]);
            store4(o, s[0]);
        }
    }

    /// The `VSHUFI64X2` order `(1, 0, 3, 2)`: the blocks of a register swapped in pairs.
    const SWAP_PAIRS: i32 = 0b10_11_00_01;

    /// All ones if bit 0 of `x` is set, else zero: the point-and-permute select mask of a
    /// label.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn lsb_mask(x: __m128i) -> __m128i {
        // Bit 0 to the sign of dword 0, broadcast to every dword, spread over each dword:
        // three vector operations, no trip through a general register.
        _mm_srai_epi32::<31>(_mm_shuffle_epi32::<0>(_mm_slli_epi32::<31>(x)))
    }

    /// Stores `lo ‖ hi` to the 32 bytes of a table.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn store_table(table: &mut [u8; 32], lo: __m128i, hi: __m128i) {
        // SAFETY: `table` is 32 writable bytes, the two 16-byte stores cover them, and
        // `_mm_storeu_si128` has no alignment requirement.
        unsafe {
            _mm_storeu_si128(table.as_mut_ptr().cast(), lo);
            _mm_storeu_si128(table.as_mut_ptr().add(16).cast(), hi);
        }
    }

    /// The 32 bytes of `window` at `pos` (panics past its end, like any slice index).
    #[inline(always)]
    pub(super) fn table_at(window: &[u8], pos: u32) -> &[u8; 32] {
        let pos = pos as usize;
        window[pos..pos + 32].try_into().expect("32 bytes")
    }

    /// As [`table_at`], mutable.
    #[inline(always)]
    pub(super) fn table_at_mut(window: &mut [u8], pos: u32) -> &mut [u8; 32] {
        let pos = pos as usize;
        (&mut window[pos..pos + 32]).try_into().expect("32 bytes")
    }

    /// One AND gate of a packed program: its slots, its AND index `n` and the position of
    /// its table in the window, `32 · (n − first)` (tables are written in AND order).
    #[derive(Clone, Copy)]
    struct AndOp {
        a: usize,
        b: usize,
        out: usize,
        n: u32,
        pos: u32,
    }

    /// The AND gates of packed slots `ands` (`a | b << 21 | out << 42`) and AND indices
    /// `index`, in a window whose first AND gate has index `first`.
    #[inline(always)]
    fn and_ops<'a>(
        ands: &'a [u64],
        index: &'a [u32],
        first: u32,
    ) -> impl Iterator<Item = AndOp> + 'a {
        ands.iter().zip(index).map(move |(&p, &n)| {
            let (a, b, out) = unpack_slots(p);
            AndOp {
                a,
                b,
                out,
                n,
                pos: 32 * (n - first),
            }
        })
    }

    /// Garbles the first `N` (or fewer) AND gates of `ands`, one register each (see
    /// [`garble_and_gates`]), with `dmask = (0, Δ, 0, Δ)` and the tweak base's
    /// `addends` ([`and_tweak_addends`]): every input is read before any output is written.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,avx,avx2,vaes,avx512f,avx512bw")]
    fn garble_group<const N: usize, const SITE: u8>(
        k: &[__m512i; 11],
        delta: __m128i,
        (dmask, addends): (__m512i, __m512i),
        zero: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &mut [u8],
    ) {
        let (mut s, mut t) = ([_mm512_setzero_si512(); N], [_mm512_setzero_si512(); N]);
        let mut a0s = [_mm_setzero_si128(); N];
        let mut b0s = [_mm_setzero_si128(); N];
        for (g, op) in and_ops(ands, index, first).enumerate().take(N) {
            let (a0, b0) = (ni::load(&zero[op.a]), ni::load(&zero[op.b]));
            (a0s[g], b0s[g]) = (a0, b0);
            let ab = _mm512_inserti32x4::<1>(_mm512_castsi128_si512(a0), b0);
            s[g] = and_gate_block(ab, dmask);
            t[g] = and_gate_tweaks(op.n, addends);
        }
        tccr_core::<N, SITE>(k, &mut s, &t);
        for (g, op) in and_ops(ands, index, first).enumerate().take(N) {
            // h = (H(a0, j), H(a1, j), H(b0, j'), H(b1, j')); d = (h0 ⊕ h1, ·, h2 ⊕ h3, ·).
            let h = s[g];
            let d = _mm512_xor_si512(h, _mm512_shuffle_i64x2::<SWAP_PAIRS>(h, h));
            let (h0, h2) = (_mm512_castsi512_si128(h), _mm512_extracti32x4_epi32::<2>(h));
            let (d01, d23) = (_mm512_castsi512_si128(d), _mm512_extracti32x4_epi32::<2>(d));
            let (ma, mb) = (lsb_mask(a0s[g]), lsb_mask(b0s[g]));
            // `half_gates::garble_and`: TG = h0 ⊕ h1 ⊕ pb·Δ, TE = h2 ⊕ h3 ⊕ a0,
            // C0 = h0 ⊕ pa·TG ⊕ h2 ⊕ pb·(h2 ⊕ h3).
            let tg = _mm_xor_si128(d01, _mm_and_si128(delta, mb));
            let te = _mm_xor_si128(d23, a0s[g]);
            let c0 = _mm_xor_si128(
                _mm_xor_si128(h0, h2),
                _mm_xor_si128(_mm_and_si128(tg, ma), _mm_and_si128(d23, mb)),
            );
            store_table(table_at_mut(window, op.pos), tg, te);
            ni::store(&mut zero[op.out], c0);
        }
    }

    /// The tweaks `(j, j, j', j')` of an AND gate with AND index `n` under the tweak base
    /// `B` of `addends = and_tweak_addends(B)`: `2n + 2B + (1, 1, 2, 2)` in the high 64-bit
    /// half of each block, zero in the low half, then byte-reversed within each half: the
    /// 128-bit big-endian tweak (`tccr_tweak`).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn and_gate_tweaks(n: u32, addends: __m512i) -> __m512i {
        let two_n = _mm512_slli_epi64::<1>(_mm512_set1_epi64(i64::from(n)));
        let t = _mm512_maskz_add_epi64(0xaa, two_n, addends);
        _mm512_shuffle_epi8(t, byte_reverse_64())
    }

    /// The half-gates garbler's AND gates with the TCCR hash under tweak base `tweak_base`,
    /// fused: for each gate of `(slots, index, first)` ([`and_ops`]), its 0-labels read from
    /// `zero`, its four hashes, its table `TG ‖ TE` written to `window[32 · (n − first)..][..32]` and its
    /// output 0-label to `zero[out]`, `WIDTH` gates at a time with nothing staged in memory.
    /// The gates must be independent (one wave's): they are processed in order, every input
    /// of a group read before its outputs are written.
    #[target_feature(enable = "aes,sse2,ssse3,avx,avx2,vaes,avx512f,avx512bw")]
    pub(super) fn garble_and_gates(
        rk: &RoundKeys,
        delta: Block,
        tweak_base: u64,
        zero: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &mut [u8],
    ) {
        let k = broadcast_keys(rk);
        let d = ni::load(&delta);
        let dmask = _mm512_maskz_broadcast_i32x4(0xf0f0, d);
        let addends = and_tweak_addends(tweak_base);
        let (ands, index) = (ands.chunks_exact(WIDTH), index.chunks_exact(WIDTH));
        let rest = ands.remainder().chunks(1).zip(index.remainder().chunks(1));
        for (a, n) in ands.zip(index) {
            garble_group::<WIDTH, 7>(&k, d, (dmask, addends), zero, (a, n, first), window);
        }
        for (a, n) in rest {
            garble_group::<1, 8>(&k, d, (dmask, addends), zero, (a, n, first), window);
        }
    }

    /// Evaluates the first `2 * N` (or fewer) AND gates of `ands`, two per register (see
    /// [`eval_and_gates`]): every input is read before any output is written.
    ///
    /// A register holds two gates' labels `(a, b, a', b')`; after the hash, each gate's
    /// rows are selected and folded in the register the hash left, as the 256-bit kernels
    /// do (`ymm`): `(H(a), H(b), …) ⊕ ((TG, TE ⊕ a, …) ∧ (sa, sb, …))`, then the blocks
    /// XORed in pairs. Per gate that replaces a dozen 128-bit operations (two extracts,
    /// two select masks of three each, the XORs and ANDs) and two table loads with half
    /// of about ten 512-bit ones and one 256-bit load.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes,avx512f,avx512bw")]
    fn eval_group<const N: usize, const SITE: u8>(
        k: &[__m512i; 11],
        addends: __m512i,
        labels: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        // Per register, its two gates' labels (a, b, a', b') and tables (TG, TE, TG', TE').
        let mut x = [_mm512_setzero_si512(); N];
        let mut rows = [[_mm256_setzero_si256(); 2]; N];
        for (g, op) in and_ops(ands, index, first).enumerate().take(2 * N) {
            let ab = _mm256_set_m128i(ni::load(&labels[op.b]), ni::load(&labels[op.a]));
            x[g / 2] = if g % 2 == 0 {
                _mm512_castsi256_si512(ab)
            } else {
                _mm512_inserti64x4::<1>(x[g / 2], ab)
            };
            // SAFETY: the table is 32 readable bytes; no alignment requirement.
            rows[g / 2][g % 2] =
                unsafe { _mm256_loadu_si256(table_at(window, op.pos).as_ptr().cast()) };
        }
        let n = |g: usize| index.get(g).copied().unwrap_or(0);
        let mut t = [_mm512_setzero_si512(); N];
        for (r, t) in t.iter_mut().enumerate() {
            *t = eval_tweaks(n(2 * r), n(2 * r + 1), addends);
        }
        // The hashes, in place of a copy of the labels (kept for the rows' selection).
        let mut s = x;
        tccr_core::<N, SITE>(k, &mut s, &t);
        let mut out = [[_mm_setzero_si128(); 2]; N];
        for (r, o) in out.iter_mut().enumerate() {
            let x = x[r];
            let rows = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(rows[r][0]), rows[r][1]);
            // (0, a, 0, a'): lanes (0, 0, 2, 2) with lanes 0 and 2 zeroed.
            let a_high = _mm512_maskz_shuffle_i64x2::<0b10_10_00_00>(0xcc, x, x);
            let sel = _mm512_and_si512(_mm512_xor_si512(rows, a_high), lsb_masks(x));
            let w = _mm512_xor_si512(s[r], sel);
            let f = _mm512_xor_si512(w, _mm512_shuffle_i64x2::<SWAP_PAIRS>(w, w));
            *o = [_mm512_castsi512_si128(f), _mm512_extracti32x4_epi32::<2>(f)];
        }
        for (g, op) in and_ops(ands, index, first).enumerate().take(2 * N) {
            ni::store(&mut labels[op.out], out[g / 2][g % 2]);
        }
    }

    /// Per block, all ones if its bit 0 is set, else zero: the point-and-permute select
    /// masks of four labels at once.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn lsb_masks(x: __m512i) -> __m512i {
        _mm512_srai_epi32::<31>(_mm512_shuffle_epi32::<0>(_mm512_slli_epi32::<31>(x)))
    }

    /// The half-gates evaluator's AND gates with the TCCR hash under tweak base
    /// `tweak_base`, fused: for each gate of
    /// `(slots, index, first)` ([`and_ops`]), its labels read from `labels`, its two hashes,
    /// and its output label from its table at `window[32 · (n − first)..][..32]` written to
    /// `labels[out]`, `2 * EVAL_WIDTH` gates at a time with nothing staged in memory. The
    /// gates must be independent, as in [`garble_and_gates`].
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes,avx512f,avx512bw")]
    pub(super) fn eval_and_gates(
        rk: &RoundKeys,
        tweak_base: u64,
        labels: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        let k = broadcast_keys(rk);
        let addends = eval_tweak_addends(tweak_base);
        // A last group of fewer gates runs the unused registers on zeros: its gates' AES
        // then overlaps, where one register at a time would wait on each's latency.
        for (a, n) in ands
            .chunks(2 * EVAL_WIDTH)
            .zip(index.chunks(2 * EVAL_WIDTH))
        {
            eval_group::<EVAL_WIDTH, 9>(&k, addends, labels, (a, n, first), window);
        }
    }

    /// The tweaks of two evaluated AND gates with AND indices `n0`, `n1` in one register
    /// under the tweak base `B` of `addends = eval_tweak_addends(B)`:
    /// `(2(B + n0) + 1, 2(B + n0) + 2, 2(B + n1) + 1, 2(B + n1) + 2)`, each the 128-bit
    /// big-endian integer.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn eval_tweaks(n0: u32, n1: u32, addends: __m512i) -> __m512i {
        let n = _mm512_castsi128_si512(_mm_set_epi32(0, 0, n1 as i32, n0 as i32));
        // n0 to the low 32 bits of 64-bit lanes 1 and 3, n1 to those of lanes 5 and 7, zero
        // elsewhere (mask 0x4444: 32-bit lanes 2, 6, 10, 14).
        let pick = _mm512_set_epi32(0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        let n = _mm512_maskz_permutexvar_epi32(0x4444, pick, n);
        let two_n = _mm512_slli_epi64::<1>(n);
        let t = _mm512_maskz_add_epi64(0xaa, two_n, addends);
        _mm512_shuffle_epi8(t, byte_reverse_64())
    }

    /// The two TCCR hashes `[H(a, j), H(b, j')]` of each evaluated AND gate from its labels
    /// `[a, b]`, AND index and the tweak base, two gates per register and `WIDTH` registers
    /// at a time; the tweaks are made in registers.
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,vaes,avx512f,avx512bw")]
    pub(super) fn tccr_eval_gates(
        rk: &RoundKeys,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 2]],
    ) {
        let k = broadcast_keys(rk);
        let addends = eval_tweak_addends(tweak_base);
        let (xs, out) = (inputs.as_flattened(), out.as_flattened_mut());
        let (xc, _) = xs.as_chunks::<4>().0.as_chunks::<WIDTH>();
        let (nc, _) = and_index.as_chunks::<2>().0.as_chunks::<WIDTH>();
        let (oc, _) = out.as_chunks_mut::<4>().0.as_chunks_mut::<WIDTH>();
        let done = xc.len() * 2 * WIDTH;
        for ((x, n), o) in xc.iter().zip(nc).zip(oc.iter_mut()) {
            let (mut s, mut t) = (
                [_mm512_setzero_si512(); WIDTH],
                [_mm512_setzero_si512(); WIDTH],
            );
            for (((s, t), x), &[n0, n1]) in s.iter_mut().zip(t.iter_mut()).zip(x).zip(n) {
                *s = load4(x);
                *t = eval_tweaks(n0, n1, addends);
            }
            tccr_core::<_, 5>(&k, &mut s, &t);
            for (o, &s) in o.iter_mut().zip(&s) {
                store4(o, s);
            }
        }
        // At most 15 gates left: two per register, the last possibly alone (masked loads
        // and stores).
        let (xs, out) = (&xs[2 * done..], &mut out[2 * done..]);
        for ((x, n), o) in xs
            .chunks(4)
            .zip(and_index[done..].chunks(2))
            .zip(out.chunks_mut(4))
        {
            let mut s = [load_part(x)];
            let t = eval_tweaks(n[0], n.get(1).copied().unwrap_or(0), addends);
            tccr_core::<_, 6>(&k, &mut s, &[t]);
            store_part(o, s[0]);
        }
    }

    /// The PRF inputs `blk(g, r)` of `prf` (docs/garbling.md §2.2) in the four lanes of a
    /// register: `g` in the low 64 bits of every lane, over `tags` holding each lane's row
    /// tag `r` in bits 96..128.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn prf_inputs(g: u64, tags: __m512i) -> __m512i {
        _mm512_mask_set1_epi64(tags, 0x55, g as i64)
    }

    /// A row tag `r` in bits 96..128 of a block: in the high 64-bit half, shifted by 32.
    const fn tag(r: i64) -> i64 {
        r << 32
    }

    /// Bit 0 of every block.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn lsbs() -> __m512i {
        _mm512_set_epi64(0, 1, 0, 1, 0, 1, 0, 1)
    }

    /// `x` with bit 0 set to `bit`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn with_lsb(x: __m128i, bit: bool) -> __m128i {
        let x = _mm_andnot_si128(_mm_set_epi64x(0, 1), x);
        _mm_or_si128(x, _mm_set_epi64x(0, i64::from(bit)))
    }

    /// `b` if `cond`, else `a`.
    #[inline]
    #[target_feature(enable = "avx512f,avx512vl")]
    fn select(cond: bool, a: __m128i, b: __m128i) -> __m128i {
        _mm_mask_blend_epi64(if cond { 0b11 } else { 0 }, a, b)
    }

    /// Loads the labels `[k^0, k^1]` of both inputs of a `prf` gate and orders them by
    /// signal bit: `(ka[0], ka[1], kb[0], kb[1])` and the permute bits `(πa, πb)`.
    #[inline]
    #[target_feature(enable = "avx,avx2,avx512f")]
    fn prf_keys(labels: &[[Block; 2]], a: usize, b: usize) -> (__m512i, bool, bool) {
        let (la, lb) = (&labels[a], &labels[b]);
        // SAFETY: `la` and `lb` point to 32 readable bytes each (two transparent `u128`s),
        // and `_mm256_loadu_si256` has no alignment requirement.
        let (la, lb) = unsafe {
            (
                _mm256_loadu_si256(la.as_ptr().cast()),
                _mm256_loadu_si256(lb.as_ptr().cast()),
            )
        };
        let z = _mm512_inserti64x4::<1>(_mm512_castsi256_si512(la), lb);
        // The permute bits are the lsbs of k^0 (64-bit lanes 0 and 4); a pair is swapped
        // where its bit is set.
        let bits = _mm512_test_epi64_mask(z, lsbs());
        let (pa, pb) = (bits & 1 != 0, bits & 0x10 != 0);
        let swap = if pa { 0x0f } else { 0 } | if pb { 0xf0 } else { 0 };
        let swapped = _mm512_shuffle_i64x2::<SWAP_PAIRS>(z, z);
        (_mm512_mask_blend_epi64(swap, z, swapped), pa, pb)
    }

    /// Stores the labels `[k^0, k^1]` of a wire in one 32-byte store: a later gate loads
    /// them as one, which a store of two halves could not forward to.
    #[inline]
    #[target_feature(enable = "avx,avx2")]
    fn store_labels(labels: &mut [Block; 2], zero: __m128i, one: __m128i) {
        // SAFETY: `labels` is 32 writable bytes (two transparent `u128`s), and
        // `_mm256_storeu_si256` has no alignment requirement.
        unsafe { _mm256_storeu_si256(labels.as_mut_ptr().cast(), _mm256_set_m128i(one, zero)) }
    }

    /// Garbles `prf`'s AND gates `op(range)` (at most `N`; see [`prf_garble_gates`]): all
    /// their inputs read, then all their outputs written. A group of fewer gates still runs
    /// `N` registers (the others on zeros), so that the key schedules' latency stays hidden.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes,avx512f,avx512bw,avx512vl")]
    fn prf_and_group<const N: usize>(
        range: Range<usize>,
        op: &impl Fn(usize) -> PrfOp,
        labels: &mut [[Block; 2]],
        out: &mut [u8],
    ) {
        // Keys by signal bit (ka[0], ka[1], kb[0], kb[1]); ka[α] encrypts rows 2α and
        // 2α + 1, kb[β] rows β and 2 + β: the first blocks of the four keys, then the second.
        let tags0 = _mm512_set_epi64(tag(1), 0, 0, 0, tag(2), 0, 0, 0);
        let tags1 = _mm512_set_epi64(tag(3), 0, tag(2), 0, tag(3), 0, tag(1), 0);
        let mut ops = [PrfOp::default(); N];
        let mut k = [_mm512_setzero_si512(); N];
        let mut s = [[_mm512_setzero_si512(); 2]; N];
        let mut permute = [(false, false); N];
        for (j, i) in range.clone().enumerate() {
            ops[j] = op(i);
            let (keys, pa, pb) = prf_keys(labels, ops[j].a as usize, ops[j].b as usize);
            (k[j], permute[j]) = (keys, (pa, pb));
            s[j] = [prf_inputs(ops[j].g, tags0), prf_inputs(ops[j].g, tags1)];
        }
        keys_core::<_, _, 2>(&k, &mut s);
        // The rows' `AES_ka` and `AES_kb` outputs in row order (0, 2, 1, 3): lanes 0 and 1
        // of both registers, and lanes 2 of both then lanes 3 of both.
        let fb_rows = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
        // (By reference: iterating the arrays by value copies them.)
        for ((gate, &[s0, s1]), &(pa, pb)) in ops.iter().zip(&s).zip(&permute).take(range.len()) {
            let pc = gate.bit(PrfOp::PC);
            let fa = _mm512_shuffle_i64x2::<0b01_00_01_00>(s0, s1);
            let fb = _mm512_permutex2var_epi64(s0, fb_rows, s1);
            // K[r] in lanes (K0, K2, K1, K3); its lsbs pad the mask bits (docs/garbling.md §2.4).
            let kr = _mm512_xor_si512(fa, fb);
            let l = u32::from(_mm512_test_epi64_mask(kr, lsbs()));
            let raw = (l & 1) | ((l >> 3) & 2) | (l & 4) | ((l >> 3) & 8);
            let odd = 2 * (1 ^ u32::from(pa)) + (1 ^ u32::from(pb));
            let m = (raw ^ if pc { 0xf } else { 0 } ^ (1 << odd)) as u8;
            let kbar = _mm512_andnot_si512(lsbs(), kr);
            // x = (K̄0 ⊕ K̄1, K̄2 ⊕ K̄3, ·, ·): T1 = x[πa]; y = (K̄0 ⊕ K̄2, ·, K̄1 ⊕ K̄3, ·):
            // T2 = y[2πb].
            let x = _mm512_xor_si512(kbar, _mm512_shuffle_i64x2::<0b01_00_11_10>(kbar, kbar));
            let y = _mm512_xor_si512(kbar, _mm512_shuffle_i64x2::<SWAP_PAIRS>(kbar, kbar));
            let (x0, x1) = (_mm512_castsi512_si128(x), _mm512_extracti32x4_epi32::<1>(x));
            let (y0, y2) = (_mm512_castsi512_si128(y), _mm512_extracti32x4_epi32::<2>(y));
            let (t1, t2) = (select(pa, x0, x1), select(pb, y0, y2));
            // The labels K̄0 and K̄1 ⊕ K̄2 ⊕ K̄3: the 0-label is the first unless
            // v00 = πa ∧ πb; the 0-label's lsb is πc.
            let first = _mm512_castsi512_si128(kbar);
            let other = _mm_xor_si128(x1, _mm512_extracti32x4_epi32::<2>(kbar));
            let v00 = pa & pb;
            let zero = with_lsb(select(v00, first, other), pc);
            let one = with_lsb(select(v00, other, first), !pc);
            let table = (&mut out[gate.table..gate.table + 32]).try_into();
            store_table(table.expect("32 bytes"), t1, t2);
            store_labels(&mut labels[gate.out as usize], zero, one);
            set_nibble(out, gate.mask, gate.bit(PrfOp::HIGH), m);
        }
    }

    /// Garbles `prf`'s XOR gates `op(range)` (at most `N`; see [`prf_garble_gates`]), all
    /// inputs read before any output is written, `N` registers as in [`prf_and_group`].
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes,avx512f,avx512bw,avx512vl")]
    fn prf_xor_group<const N: usize>(
        range: Range<usize>,
        op: &impl Fn(usize) -> PrfOp,
        labels: &mut [[Block; 2]],
        out: &mut [u8],
    ) {
        // Keys by signal bit (ka[0], ka[1], kb[0], kb[1]); k[s] encrypts blk(g, s).
        let tags = _mm512_set_epi64(tag(1), 0, 0, 0, tag(1), 0, 0, 0);
        // The gates read as in `prf_and_group`, inline: a shared helper returning the
        // arrays measured slower (MinCut size 86.4 → 90.0 ns per AND, sha-256.txt 46.4 →
        // 52.0; `scripts/garble-compare.py 5 prf synthetic`).
        let mut ops = [PrfOp::default(); N];
        let mut k = [_mm512_setzero_si512(); N];
        let mut s = [[_mm512_setzero_si512(); 1]; N];
        let mut permute = [false; N];
        for (j, i) in range.clone().enumerate() {
            ops[j] = op(i);
            let (keys, pa, pb) = prf_keys(labels, ops[j].a as usize, ops[j].b as usize);
            (k[j], permute[j]) = (keys, pa ^ pb);
            s[j] = [prf_inputs(ops[j].g, tags)];
        }
        keys_core::<_, _, 3>(&k, &mut s);
        for ((gate, &[f]), &pab) in ops.iter().zip(&s).zip(&permute).take(range.len()) {
            // f = (Ã[0], Ã[1], B̃[0], B̃[1]); z = (D, ·, B̃[0] ⊕ B̃[1], ·);
            // w = (Ã[0] ⊕ B̃[0], ·, ·, ·) (docs/garbling.md §2.5).
            let z = _mm512_xor_si512(f, _mm512_shuffle_i64x2::<SWAP_PAIRS>(f, f));
            let w = _mm512_xor_si512(f, _mm512_shuffle_i64x2::<0b01_00_11_10>(f, f));
            let d = _mm512_castsi512_si128(z);
            let t = _mm_xor_si128(d, _mm512_extracti32x4_epi32::<2>(z));
            let w0 = _mm512_castsi512_si128(w);
            let zero = with_lsb(select(pab, w0, _mm_xor_si128(w0, d)), pab);
            let one = _mm_xor_si128(zero, with_lsb(d, true));
            let table: &mut [u8; 16] = (&mut out[gate.table..gate.table + 16])
                .try_into()
                .expect("16 bytes");
            // SAFETY: `table` is 16 writable bytes, and `_mm_storeu_si128` has no alignment
            // requirement.
            unsafe { _mm_storeu_si128(table.as_mut_ptr().cast(), t) };
            store_labels(&mut labels[gate.out as usize], zero, one);
        }
    }

    /// `prf`'s AND gates (`AND`) or XOR gates `op(0..n)`, fused (see `prf_garble_gates` in
    /// the parent), `PRF_GROUP` at a time.
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes,avx512f,avx512bw,avx512vl")]
    pub(super) fn prf_garble_gates<const AND: bool>(
        n: usize,
        op: impl Fn(usize) -> PrfOp,
        labels: &mut [[Block; 2]],
        out: &mut [u8],
    ) {
        for start in (0..n).step_by(PRF_GROUP) {
            let group = start..(start + PRF_GROUP).min(n);
            if AND {
                prf_and_group::<PRF_GROUP>(group, &op, labels, out);
            } else {
                prf_xor_group::<PRF_GROUP>(group, &op, labels, out);
            }
        }
    }
}

/// The generic kernels on the `aes-ni` and `vaes256` backends' registers.
mod narrow;
/// The `vaes256` backend's TCCR half-gates kernels, written out for its registers.
mod ymm;
