//! The `vaes256` backend's half-gates AND kernels, under `ideal`'s TCCR hash and under
//! `circular`'s label-keyed one, written out for 256-bit registers: a garbled gate's four
//! hash inputs in two registers (`a0 ‖ a0 ⊕ Δ`, `b0 ‖ b0 ⊕ Δ`), an evaluated gate's two in
//! one (`a ‖ b`), tweaks made from the AND index with one broadcast, one add and one byte
//! shuffle, and the evaluator's table rows selected and folded in the register the hash
//! left. The two hashes differ only in what the registers are to the AES ([`YmmHash`]):
//! TCCR's inputs are plaintexts under fixed round keys, the label-keyed hash's are keys
//! (their schedules interleaved, `keys_core`) and the tweaks the plaintexts.
//!
//! The generic kernels (`super::super::generic`) compute the same bytes lane by lane through
//! 128-bit halves, which on Zen 3 cost more than the AES: extracting and reinserting halves,
//! tweaks built in general registers and moved over, labels spilled between them. The AES
//! itself is the floor's kernel on [`Ymm`]: `transputation_core::aes::register::tccr_core`
//! or `keys_core`.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use transputation_core::aes::register::{broadcast_keys, keys_core, tccr_core, Register};
use transputation_core::aes::x86::registers::Ymm;
use transputation_core::aes::x86::{ni, RoundKeys, Vaes256};
use transputation_core::Block;

use super::kernels::{table_at, table_at_mut};
use crate::schemes::waves::unpack_slots;

/// TCCR's garbled gates per group: two registers each, so twelve of state and twelve of
/// `π(x)`, some spilled, the round keys read from memory by `VAESENC`. Measured on Zen 3
/// (`garble-bench`, `ideal`, the MinCut size, medians of 7): 4 gates 16.4–18.1 ns per AND
/// gate, 5 16.0, 6 15.7–16.3, 8 28.6 (LLVM no longer keeps the rounds in registers).
const TCCR_GARBLE: usize = 6;
/// TCCR's evaluated gates per group: one register each (6 gates 12.0 ns, 8 11.3–12.0, 10
/// 11.8, 12 11.8, as above).
const TCCR_EVAL: usize = 8;
/// The label-keyed hash's groups: a key register and a state register per two hash inputs.
/// Measured on Zen 3 (`circular`, sha-256.txt and the MinCut size, 9–11 rounds, fastest
/// and lower quartile): garbling 4 gates (8 key registers) 27.2–27.8 ns per AND gate
/// against 28.5–29.1 with 2; evaluating 4 gates 16.0–17.1 against 16.9–17.9 with 6.
const KEYED_GARBLE: usize = 4;
const KEYED_EVAL: usize = 4;

/// A half-gates hash on 256-bit registers: how the tweaks are laid out in a register, and
/// the hash of registers of inputs under registers of tweaks.
trait YmmHash: Copy {
    /// Whether a tweak's 64 bits go to the high half of each 128-bit lane (TCCR's
    /// big-endian 128-bit tweak, `transputation_core::aes::tccr_tweak`) or the low half
    /// (the label-keyed hash's plaintext, LE64 in bytes 0..8, docs/garbling.md §4).
    const HIGH: bool;
    /// Hashes the inputs `s` under the tweaks `tw`, in place.
    fn hash<const R: usize>(self, s: &mut [Ymm; R], tw: &[Ymm; R]);
}

/// `ideal`'s TCCR hash `π(π(X) ⊕ tw) ⊕ π(X)` under the broadcast round keys.
#[derive(Clone, Copy)]
struct Tccr<'a>(&'a [Ymm; 11]);

impl YmmHash for Tccr<'_> {
    const HIGH: bool = true;
    #[inline(always)]
    fn hash<const R: usize>(self, s: &mut [Ymm; R], tw: &[Ymm; R]) {
        tccr_core(self.0, s, tw);
    }
}

/// `circular`'s hash `AES_X(tw)`: the inputs are the keys.
#[derive(Clone, Copy)]
struct KeyedByLabel;

impl YmmHash for KeyedByLabel {
    const HIGH: bool = false;
    #[inline(always)]
    fn hash<const R: usize>(self, s: &mut [Ymm; R], tw: &[Ymm; R]) {
        let mut p = tw.map(|x| [x]);
        keys_core(s, &mut p);
        for (s, p) in s.iter_mut().zip(&p) {
            *s = p[0];
        }
    }
}

/// The kernels proper, compiled for the `vaes256` backend's features and reached through
/// the entry points below.
mod kernels {
    use super::*;

    /// The byte shuffle that makes tweaks of `H`'s form from the sums of [`tweaks`]. TCCR:
    /// within each 128-bit lane, zero in bytes 0..8, bytes 8..16 those of the source in
    /// reverse, so that a 64-bit `t` in the high half becomes the 128-bit big-endian tweak
    /// (`transputation_core::aes::tccr_tweak`). Label-keyed: bytes 0..8 kept, 8..16 zero.
    #[inline]
    #[target_feature(enable = "avx")]
    fn tweak_shuffle<H: YmmHash>() -> __m256i {
        // Control bytes with the high bit set (0xff) write zero.
        if H::HIGH {
            _mm256_set_epi64x(0x0809_0a0b_0c0d_0e0f, -1, 0x0809_0a0b_0c0d_0e0f, -1)
        } else {
            _mm256_set_epi64x(-1, 0x0706_0504_0302_0100, -1, 0x0706_0504_0302_0100)
        }
    }

    /// `(x ‖ x ⊕ Δ)` with `dmask = (0 ‖ Δ)`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn with_delta(x: __m128i, dmask: __m256i) -> __m256i {
        _mm256_xor_si256(_mm256_broadcastsi128_si256(x), dmask)
    }

    /// Per 128-bit lane, all ones if bit 0 of the lane is set, else zero: the
    /// point-and-permute select masks of two labels at once.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn lsb_masks(x: __m256i) -> __m256i {
        _mm256_srai_epi32::<31>(_mm256_shuffle_epi32::<0>(_mm256_slli_epi32::<31>(x)))
    }

    /// `2n + addends` through [`tweak_shuffle`]: the tweaks of AND index `n` in both lanes
    /// (their constants in the 64-bit half of each lane of `addends` that the hash's form
    /// takes; the other half is zeroed by the shuffle).
    #[inline]
    #[target_feature(enable = "avx2")]
    fn tweaks(n: u32, addends: __m256i, shuffle: __m256i) -> __m256i {
        let two_n = _mm256_set1_epi64x(i64::from(n) << 1);
        _mm256_shuffle_epi8(_mm256_add_epi64(two_n, addends), shuffle)
    }

    /// `(c0 + 2B, c1 + 2B)` in the halves of the two lanes that `H`'s tweaks take:
    /// `2(B + n) + c` is `2n + (2B + c)` in wrapping 64-bit arithmetic, as `tweaks_of`.
    #[inline]
    #[target_feature(enable = "avx2")]
    fn addends<H: YmmHash>(tweak_base: u64, c0: u64, c1: u64) -> __m256i {
        let two_b = tweak_base.wrapping_mul(2);
        let (t0, t1) = (two_b.wrapping_add(c0) as i64, two_b.wrapping_add(c1) as i64);
        if H::HIGH {
            _mm256_set_epi64x(t1, 0, t0, 0)
        } else {
            _mm256_set_epi64x(0, t1, 0, t0)
        }
    }

    /// Garbles at most `G` AND gates of `(ands, index, first)` under `h`, in `R = 2G`
    /// registers: every input is read before any output is written.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    fn garble_group<H: YmmHash, const G: usize, const R: usize>(
        t: Vaes256,
        h: H,
        (delta, dmask): (__m128i, __m256i),
        (add_a, add_b, shuffle): (__m256i, __m256i, __m256i),
        zero: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &mut [u8],
    ) {
        debug_assert_eq!(R, 2 * G);
        let z = Ymm::zero(t);
        let (mut s, mut tw) = ([z; R], [z; R]);
        let mut ab0 = [[_mm_setzero_si128(); 2]; G];
        for (g, (&p, &n)) in ands.iter().zip(index).enumerate().take(G) {
            let (a, b, _) = unpack_slots(p);
            let (a0, b0) = (ni::load(&zero[a]), ni::load(&zero[b]));
            ab0[g] = [a0, b0];
            // (a0 ‖ a0 ⊕ Δ) and (b0 ‖ b0 ⊕ Δ), tweaks (j ‖ j) and (j' ‖ j').
            s[2 * g] = Ymm::from_raw(t, with_delta(a0, dmask));
            s[2 * g + 1] = Ymm::from_raw(t, with_delta(b0, dmask));
            tw[2 * g] = Ymm::from_raw(t, tweaks(n, add_a, shuffle));
            tw[2 * g + 1] = Ymm::from_raw(t, tweaks(n, add_b, shuffle));
        }
        h.hash(&mut s, &tw);
        for (g, (&p, &n)) in ands.iter().zip(index).enumerate().take(G) {
            let [a0, b0] = ab0[g];
            let (ha, hb) = (s[2 * g].raw(), s[2 * g + 1].raw());
            let (h0, h2) = (_mm256_castsi256_si128(ha), _mm256_castsi256_si128(hb));
            let d01 = _mm_xor_si128(h0, _mm256_extracti128_si256::<1>(ha));
            let d23 = _mm_xor_si128(h2, _mm256_extracti128_si256::<1>(hb));
            let m = lsb_masks(_mm256_set_m128i(b0, a0));
            let (ma, mb) = (_mm256_castsi256_si128(m), _mm256_extracti128_si256::<1>(m));
            // `half_gates::garble_and`: TG = h0 ⊕ h1 ⊕ pb·Δ, TE = h2 ⊕ h3 ⊕ a0,
            // C0 = h0 ⊕ pa·TG ⊕ h2 ⊕ pb·(h2 ⊕ h3).
            let tg = _mm_xor_si128(d01, _mm_and_si128(delta, mb));
            let te = _mm_xor_si128(d23, a0);
            let c0 = _mm_xor_si128(
                _mm_xor_si128(h0, h2),
                _mm_xor_si128(_mm_and_si128(tg, ma), _mm_and_si128(d23, mb)),
            );
            let table = table_at_mut(window, 32 * (n - first));
            // SAFETY: `table` is 32 writable bytes; no alignment requirement.
            unsafe { _mm256_storeu_si256(table.as_mut_ptr().cast(), _mm256_set_m128i(te, tg)) };
            let (_, _, out) = unpack_slots(p);
            ni::store(&mut zero[out], c0);
        }
    }

    /// The garbler's AND gates (see `fused::garble_and_gates`) under `h`, `G` at a time in
    /// `R = 2G` registers.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    fn garble_and_gates<H: YmmHash, const G: usize, const R: usize>(
        t: Vaes256,
        h: H,
        (delta, tweak_base): (Block, u64),
        zero: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &mut [u8],
    ) {
        let delta = ni::load(&delta);
        let dmask = _mm256_inserti128_si256::<1>(_mm256_setzero_si256(), delta);
        let adds = (
            addends::<H>(tweak_base, 1, 1),
            addends::<H>(tweak_base, 2, 2),
            tweak_shuffle::<H>(),
        );
        for (a, n) in ands.chunks(G).zip(index.chunks(G)) {
            let gates = (a, n, first);
            garble_group::<H, G, R>(t, h, (delta, dmask), adds, zero, gates, window);
        }
    }

    /// [`garble_and_gates`] under TCCR with the round keys `rk`, under the label-keyed hash
    /// without.
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    pub(super) fn garble_under(
        t: Vaes256,
        rk: Option<&RoundKeys>,
        d: (Block, u64),
        zero: &mut [Block],
        ands: (&[u64], &[u32], u32),
        window: &mut [u8],
    ) {
        const T: usize = TCCR_GARBLE;
        const K: usize = KEYED_GARBLE;
        match rk {
            Some(rk) => {
                let k = broadcast_keys::<Ymm>(t, rk);
                garble_and_gates::<_, T, { 2 * T }>(t, Tccr(&k), d, zero, ands, window);
            }
            None => garble_and_gates::<_, K, { 2 * K }>(t, KeyedByLabel, d, zero, ands, window),
        }
    }

    /// Evaluates at most `G` AND gates of `(ands, index, first)` under `h`, one register
    /// each: every input is read before any output is written.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    fn eval_group<H: YmmHash, const G: usize>(
        t: Vaes256,
        h: H,
        (add, shuffle): (__m256i, __m256i),
        labels: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        let z = Ymm::zero(t);
        let (mut s, mut tw) = ([z; G], [z; G]);
        let mut ab = [_mm256_setzero_si256(); G];
        for (g, (&p, &n)) in ands.iter().zip(index).enumerate().take(G) {
            let (a, b, _) = unpack_slots(p);
            ab[g] = _mm256_set_m128i(ni::load(&labels[b]), ni::load(&labels[a]));
            s[g] = Ymm::from_raw(t, ab[g]);
            tw[g] = Ymm::from_raw(t, tweaks(n, add, shuffle));
        }
        h.hash(&mut s, &tw);
        for (g, (&p, &n)) in ands.iter().zip(index).enumerate().take(G) {
            // `half_gates::eval_and`: (H(a) ⊕ sa·TG) ⊕ (H(b) ⊕ sb·(TE ⊕ a)), as
            // (H(a) ‖ H(b)) ⊕ ((TG ‖ TE ⊕ a) ∧ (sa ‖ sb)) folded into one lane.
            let x = ab[g];
            let a_high = _mm256_permute2x128_si256::<0x08>(x, x);
            let table = table_at(window, 32 * (n - first));
            // SAFETY: `table` is 32 readable bytes; no alignment requirement.
            let rows = unsafe { _mm256_loadu_si256(table.as_ptr().cast()) };
            let sel = _mm256_and_si256(_mm256_xor_si256(rows, a_high), lsb_masks(x));
            let w = _mm256_xor_si256(s[g].raw(), sel);
            let out = _mm_xor_si128(_mm256_castsi256_si128(w), _mm256_extracti128_si256::<1>(w));
            let (_, _, o) = unpack_slots(p);
            ni::store(&mut labels[o], out);
        }
    }

    /// The evaluator's AND gates (see `fused::eval_and_gates`) under `h`, `G` at a time.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    fn eval_and_gates<H: YmmHash, const G: usize>(
        t: Vaes256,
        h: H,
        tweak_base: u64,
        labels: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        let add = (addends::<H>(tweak_base, 1, 2), tweak_shuffle::<H>());
        for (a, n) in ands.chunks(G).zip(index.chunks(G)) {
            eval_group::<H, G>(t, h, add, labels, (a, n, first), window);
        }
    }

    /// [`eval_and_gates`] under TCCR with the round keys `rk`, under the label-keyed hash
    /// without.
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    pub(super) fn eval_under(
        t: Vaes256,
        rk: Option<&RoundKeys>,
        base: u64,
        labels: &mut [Block],
        ands: (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        match rk {
            Some(rk) => {
                let k = broadcast_keys::<Ymm>(t, rk);
                eval_and_gates::<_, TCCR_EVAL>(t, Tccr(&k), base, labels, ands, window);
            }
            None => eval_and_gates::<_, KEYED_EVAL>(t, KeyedByLabel, base, labels, ands, window),
        }
    }
}

/// The half-gates garbler's AND gates (see `fused::garble_and_gates`): under TCCR with
/// round keys `rk`, under the label-keyed hash without.
pub(super) fn garble_and_gates(
    t: Vaes256,
    rk: Option<&RoundKeys>,
    d: (Block, u64),
    zero: &mut [Block],
    ands: (&[u64], &[u32], u32),
    window: &mut [u8],
) {
    // SAFETY: the token proves that the CPU has the kernel's target features.
    unsafe { kernels::garble_under(t, rk, d, zero, ands, window) }
}

/// The half-gates evaluator's AND gates (see `fused::eval_and_gates`), under either hash as
/// [`garble_and_gates`].
pub(super) fn eval_and_gates(
    t: Vaes256,
    rk: Option<&RoundKeys>,
    tweak_base: u64,
    labels: &mut [Block],
    ands: (&[u64], &[u32], u32),
    window: &[u8],
) {
    // SAFETY: as in `garble_and_gates`.
    unsafe { kernels::eval_under(t, rk, tweak_base, labels, ands, window) }
}
