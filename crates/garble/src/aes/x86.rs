//! AES-128 on x86 and x86-64: AES-NI (one block per 128-bit register) and VAES with AVX-512
//! (four blocks per 512-bit register).
//!
//! The entry points are methods of two zero-sized tokens, [`AesNi`] and [`Vaes`], that can
//! only be obtained from their `detect` functions, i.e. after `is_x86_feature_detected!` has
//! confirmed every target feature the kernels are compiled with. Holding a token is the proof
//! on which every call into a `#[target_feature]` kernel rests.
//!
//! Fixed-key encryption keeps the round keys in registers and `WIDTH` (8) blocks or 4-block
//! registers in flight, enough to cover the latency of `AESENC` at full throughput.
//!
//! Per-key encryption expands the keys on the fly, each round key used as soon as it is made
//! and never stored, with `NI_KEYS` (8) keys or `VAES_KEYS` (8) registers of four keys
//! interleaved so that the latency of one key's schedule is hidden behind the others'. The
//! schedule round is the `AESENCLAST` construction of Gueron–Lindell–Nof–Pinkas ("Fast
//! Garbling of Circuits Under Standard Assumptions", CCS 2015, eprint 2015/751) instead of
//! `AESKEYGENASSIST`: `AESENCLAST` with the round constant as key applies `SubBytes` to every
//! byte, and one byte shuffle (before it for AES-NI, after it for VAES) puts
//! `SubWord(RotWord(w3)) ⊕ Rcon` in every column; a prefix XOR of the previous key's words
//! completes the round. With VAES each instruction does this for four keys.
//!
//! The half-gates AND gates under the TCCR hash also have fused VAES kernels
//! (`garble_and_gates`, `eval_and_gates`): they read the input labels straight from the
//! label table by the gates' packed slots, hash in registers, and write tables and output labels, so
//! that no label or hash goes through a staging buffer. Staged inputs written as 64-bit
//! halves and read back as vectors stall on store forwarding; on the MinCut-size circuit
//! fusing took garbling from about 20 to 18.5 ns per AND gate and evaluation from 15 to 14.
//! So do `prf`'s garbled XOR and AND gates (`prf_garble_gates`):
//! each gate's two label pairs ordered by signal bit in one register of four keys, its PRF
//! inputs made from the gate index in registers, eight gates' key schedules interleaved;
//! a last group of fewer gates runs its unused registers on zeros, as latency would
//! otherwise bound it.
//!
//! Other remainders of a batch go 1, 2 or 4 blocks (AES-NI) or registers (VAES) at a time,
//! with per-block loads and stores (AES-NI) or masked ones for a partial register (VAES),
//! never a copy to a buffer (`memcpy` into a buffer read back as vectors costs a
//! store-forwarding stall). Batches of at most `SMALL_BLOCKS` blocks or `SMALL_KEYS` keys
//! run the AES-NI kernels even on the VAES backend: latency, not throughput, bounds them.

// `unsafe` is denied in the workspace and allowed only here: the AES instructions are reached
// through `core::arch` intrinsics, and calling a `#[target_feature]` function from code
// compiled without those features, or loading and storing a vector through a raw pointer, are
// `unsafe` operations. Each is a small block whose `// SAFETY:` comment gives its argument:
// run-time detection (a token) for the former, a reference to whole `Block`s for the latter.
#![allow(unsafe_code)]
// The AVX-512 and VAES intrinsics are stable since Rust 1.89 (and safe `#[target_feature]`
// functions since 1.86), later than the workspace's declared `rust-version`; this module needs
// Rust 1.89, which is why the MSRV lint is silenced here and nowhere else.
#![allow(clippy::incompatible_msrv)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use core::ops::Range;

use super::PrfOp;
use crate::block::Block;
use crate::schemes::prf::set_nibble;
use crate::schemes::waves::unpack_slots;

/// The expanded key: round keys 0 to 10, as blocks.
pub(super) type RoundKeys = [Block; 11];

/// The round constants of rounds 1 to 10.
const RCON: [i32; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

/// Blocks (AES-NI) or 4-block registers (VAES) encrypted together by the fixed-key kernels.
const WIDTH: usize = 8;

/// `prf` gates per group of the fused kernels: `PRF_GROUP` key registers in flight hide the
/// latency of the key schedules' rounds.
const PRF_GROUP: usize = 8;

/// Keys (AES-NI) or 4-key registers (VAES) expanded together by the per-key kernels.
const NI_KEYS: usize = 8;
const VAES_KEYS: usize = 8;

/// Batches of at most this many blocks (fixed key) or keys (per key) take the AES-NI kernels
/// on the VAES backend too: their 128-bit instructions have the lower latency (measured on
/// Zen 4: 4 blocks in 13.5 ns against 17 ns, 1 key in 17 ns against 22 ns).
const SMALL_BLOCKS: usize = 4;
const SMALL_KEYS: usize = 1;

/// Proof that the CPU has AES-NI (with SSE2 and SSSE3).
#[derive(Clone, Copy, Debug)]
pub(super) struct AesNi(());

/// Proof that the CPU has VAES with AVX-512F, AVX-512BW and AVX-512VL (and AES-NI).
#[derive(Clone, Copy, Debug)]
pub(super) struct Vaes(AesNi);

impl AesNi {
    /// The token if the CPU has `aes`, `sse2` and `ssse3` (the one `PSHUFB` of the key
    /// schedule; every CPU with AES-NI has SSSE3).
    pub(super) fn detect() -> Option<AesNi> {
        (is_x86_feature_detected!("aes")
            && is_x86_feature_detected!("sse2")
            && is_x86_feature_detected!("ssse3"))
        .then_some(AesNi(()))
    }

    /// The AES-128 key schedule of `key`.
    pub(super) fn expand(self, key: Block) -> RoundKeys {
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { ni::expand(key) }
    }

    /// Encrypts every block in place under the expanded key `rk`.
    pub(super) fn encrypt_blocks(self, rk: &RoundKeys, blocks: &mut [Block]) {
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { ni::encrypt_blocks(rk, blocks) }
    }

    /// Encrypts `blocks[i]` under `keys[i / per_key]`; `blocks.len() == keys.len() * per_key`.
    pub(super) fn encrypt_under_keys(self, keys: &[Block], blocks: &mut [Block], per_key: usize) {
        debug_assert_eq!(blocks.len(), keys.len() * per_key);
        match per_key {
            // SAFETY: the token proves that the CPU has the kernel's target features.
            1 => unsafe { ni::under_keys::<1>(keys, blocks) },
            // SAFETY: as above.
            2 => unsafe { ni::under_keys::<2>(keys, blocks) },
            _ => one_key_at_a_time(keys, blocks, per_key, |k, b| {
                self.encrypt_blocks(&self.expand(k), b)
            }),
        }
    }

    /// The TCCR hash `π(π(x) ⊕ tw(t)) ⊕ π(x)` of every `(xs[i], tweaks[i])` into `out[i]`,
    /// `π` encryption under `rk` (see `FixedKeyAes::tccr`); the slices have equal lengths.
    pub(super) fn tccr(self, rk: &RoundKeys, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        debug_assert!(xs.len() == tweaks.len() && xs.len() == out.len());
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { ni::tccr(rk, xs, tweaks, out) }
    }
}

impl Vaes {
    /// The token if the CPU has `vaes`, `avx512f` and `avx512bw` (the one `VPSHUFB` of the
    /// key schedule; every CPU with 512-bit VAES has it) as well as AES-NI, and `avx`,
    /// `avx2` and `sse4.1`, which the fused half-gates kernels are compiled with too (every
    /// CPU with AVX-512 has them; checked all the same, as the token is the proof).
    pub(super) fn detect() -> Option<Vaes> {
        let ni = AesNi::detect()?;
        (is_x86_feature_detected!("vaes")
            && is_x86_feature_detected!("avx512f")
            && is_x86_feature_detected!("avx512bw")
            && is_x86_feature_detected!("avx512vl")
            && is_x86_feature_detected!("avx")
            && is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("sse4.1"))
        .then_some(Vaes(ni))
    }

    /// The AES-128 key schedule of `key`.
    pub(super) fn expand(self, key: Block) -> RoundKeys {
        self.0.expand(key)
    }

    /// Encrypts every block in place under the expanded key `rk`.
    pub(super) fn encrypt_blocks(self, rk: &RoundKeys, blocks: &mut [Block]) {
        if blocks.len() <= SMALL_BLOCKS {
            return self.0.encrypt_blocks(rk, blocks);
        }
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { vaes::encrypt_blocks(rk, blocks) }
    }

    /// Encrypts `blocks[i]` under `keys[i / per_key]`; `blocks.len() == keys.len() * per_key`.
    pub(super) fn encrypt_under_keys(self, keys: &[Block], blocks: &mut [Block], per_key: usize) {
        debug_assert_eq!(blocks.len(), keys.len() * per_key);
        match per_key {
            _ if keys.len() <= SMALL_KEYS => self.0.encrypt_under_keys(keys, blocks, per_key),
            // SAFETY: the token proves that the CPU has the kernel's target features.
            1 => unsafe { vaes::under_keys::<1>(keys, blocks) },
            // SAFETY: as above.
            2 => unsafe { vaes::under_keys::<2>(keys, blocks) },
            _ => one_key_at_a_time(keys, blocks, per_key, |k, b| {
                self.encrypt_blocks(&self.expand(k), b)
            }),
        }
    }

    /// As [`AesNi::tccr`].
    pub(super) fn tccr(self, rk: &RoundKeys, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        debug_assert!(xs.len() == tweaks.len() && xs.len() == out.len());
        if xs.len() <= SMALL_BLOCKS {
            return self.0.tccr(rk, xs, tweaks, out);
        }
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { vaes::tccr(rk, xs, tweaks, out) }
    }

    /// The four TCCR hashes of each half-gates AND gate (see `FixedKeyAes::tccr_and_gates`).
    pub(super) fn tccr_and_gates(
        self,
        rk: &RoundKeys,
        delta: Block,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        out: &mut [[Block; 4]],
    ) {
        debug_assert!(inputs.len() == and_index.len() && inputs.len() == out.len());
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { vaes::tccr_and_gates(rk, delta, inputs, and_index, out) }
    }

    /// The half-gates garbler's AND gates, fused (see `FixedKeyAes::garble_and_gates`).
    pub(super) fn garble_and_gates(
        self,
        rk: &RoundKeys,
        delta: Block,
        zero: &mut [Block],
        ands: (&[u64], &[u32], u32),
        window: &mut [u8],
    ) {
        debug_assert_eq!(ands.0.len(), ands.1.len());
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { vaes::garble_and_gates(rk, delta, zero, ands, window) }
    }

    /// The half-gates evaluator's AND gates, fused (see `FixedKeyAes::eval_and_gates`).
    pub(super) fn eval_and_gates(
        self,
        rk: &RoundKeys,
        labels: &mut [Block],
        ands: (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        debug_assert_eq!(ands.0.len(), ands.1.len());
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { vaes::eval_and_gates(rk, labels, ands, window) }
    }

    /// `prf`'s AND or XOR gates, fused (see `prf_garble_gates`).
    pub(super) fn prf_garble_gates(
        self,
        and: bool,
        n: usize,
        op: impl Fn(usize) -> PrfOp,
        labels: &mut [[Block; 2]],
        out: &mut [u8],
    ) {
        // SAFETY: the token proves that the CPU has the kernels' target features.
        unsafe {
            if and {
                vaes::prf_garble_gates::<true>(n, op, labels, out);
            } else {
                vaes::prf_garble_gates::<false>(n, op, labels, out);
            }
        }
    }

    /// The two TCCR hashes of each evaluated AND gate (see `FixedKeyAes::tccr_eval_gates`).
    pub(super) fn tccr_eval_gates(
        self,
        rk: &RoundKeys,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        out: &mut [[Block; 2]],
    ) {
        debug_assert!(inputs.len() == and_index.len() && inputs.len() == out.len());
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { vaes::tccr_eval_gates(rk, inputs, and_index, out) }
    }
}

/// Any `per_key` other than 1 and 2 (unused by the schemes): one key schedule, then the
/// fixed-key kernel, per key.
fn one_key_at_a_time(
    keys: &[Block],
    blocks: &mut [Block],
    per_key: usize,
    mut f: impl FnMut(Block, &mut [Block]),
) {
    if per_key == 0 {
        return;
    }
    for (&k, chunk) in keys.iter().zip(blocks.chunks_mut(per_key)) {
        f(k, chunk);
    }
}

/// Test access to the multi-key schedules, which otherwise never store their round keys.
#[cfg(test)]
pub(super) mod testing {
    use super::*;

    /// The round keys of `keys` by the interleaved AES-NI schedule of the per-key path.
    pub fn ni_round_keys(_: AesNi, keys: &[Block; 4]) -> [RoundKeys; 4] {
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { ni::round_keys_x4(keys) }
    }

    /// The round keys of `keys` by the 4-keys-per-register VAES schedule of the per-key path.
    pub fn vaes_round_keys(_: Vaes, keys: &[Block; 4]) -> [RoundKeys; 4] {
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { vaes::round_keys_x4(keys) }
    }
}

/// AES-NI kernels: one block per `__m128i`.
mod ni {
    use super::*;

    /// Loads a block.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn load(b: &Block) -> __m128i {
        // SAFETY: `b` points to 16 readable bytes (`Block` is a transparent `u128`), and
        // `_mm_loadu_si128` has no alignment requirement.
        unsafe { _mm_loadu_si128((b as *const Block).cast()) }
    }

    /// Stores a block.
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn store(b: &mut Block, v: __m128i) {
        // SAFETY: `b` points to 16 writable bytes (`Block` is a transparent `u128`), and
        // `_mm_storeu_si128` has no alignment requirement.
        unsafe { _mm_storeu_si128((b as *mut Block).cast(), v) }
    }

    /// The next round key after `k` with round constant `rcon` (GLNP15's schedule).
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(super) fn next_key(k: __m128i, rcon: i32) -> __m128i {
        // RotWord(w3) in every column (bytes 13, 14, 15, 12); then SubWord and ⊕ Rcon.
        let rot = _mm_shuffle_epi8(k, _mm_set1_epi32(0x0c0f_0e0d));
        let t = _mm_aesenclast_si128(rot, _mm_set1_epi32(rcon));
        // Prefix XOR of the four words: (w0, w0⊕w1, w0⊕w1⊕w2, w0⊕w1⊕w2⊕w3).
        let y = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        let y = _mm_xor_si128(y, _mm_slli_si128::<8>(y));
        _mm_xor_si128(y, t)
    }

    /// The key schedule of one key.
    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(super) fn expand(key: Block) -> RoundKeys {
        let mut rk = [Block::ZERO; 11];
        let mut k = load(&key);
        store(&mut rk[0], k);
        for (r, &rcon) in RCON.iter().enumerate() {
            k = next_key(k, rcon);
            store(&mut rk[r + 1], k);
        }
        rk
    }

    /// The key schedule of four keys, interleaved as in [`keys_core`].
    #[cfg(test)]
    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(super) fn round_keys_x4(keys: &[Block; 4]) -> [RoundKeys; 4] {
        let mut out = [[Block::ZERO; 11]; 4];
        let mut k = load_n(keys);
        for (o, &kj) in out.iter_mut().zip(&k) {
            store(&mut o[0], kj);
        }
        for (r, &rcon) in RCON.iter().enumerate() {
            for (o, kj) in out.iter_mut().zip(k.iter_mut()) {
                *kj = next_key(*kj, rcon);
                store(&mut o[r + 1], *kj);
            }
        }
        out
    }

    /// Loads `N` blocks. (Loops here and below rather than `array::map`, whose closure calls
    /// would not be inlined: `map` itself lacks the target features.)
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn load_n<const N: usize>(b: &[Block; N]) -> [__m128i; N] {
        let mut x = [_mm_setzero_si128(); N];
        for (x, b) in x.iter_mut().zip(b) {
            *x = load(b);
        }
        x
    }

    /// Loads the at most `N` blocks of `b`, zero for the rest. (Indexed with a test per block,
    /// not as a copy loop, which LLVM would turn into a `memcpy` call and a store-forwarding
    /// stall.)
    #[inline]
    #[target_feature(enable = "sse2")]
    #[allow(clippy::needless_range_loop)]
    fn load_part<const N: usize>(b: &[Block]) -> [__m128i; N] {
        let mut x = [_mm_setzero_si128(); N];
        for i in 0..N {
            if i < b.len() {
                x[i] = load(&b[i]);
            }
        }
        x
    }

    /// Stores the first `b.len()` (at most `N`) blocks of `x`, as [`load_part`].
    #[inline]
    #[target_feature(enable = "sse2")]
    #[allow(clippy::needless_range_loop)]
    fn store_part<const N: usize>(b: &mut [Block], x: &[__m128i; N]) {
        for i in 0..N {
            if i < b.len() {
                store(&mut b[i], x[i]);
            }
        }
    }

    /// Encrypts `N` blocks together.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3")]
    fn blocks_core<const N: usize>(rk: &[__m128i; 11], out: &mut [__m128i; N]) {
        // Local copies, kept in registers even where this function is not inlined.
        let (rk, mut s) = (*rk, *out);
        for x in s.iter_mut() {
            *x = _mm_xor_si128(*x, rk[0]);
        }
        for &k in &rk[1..10] {
            for x in s.iter_mut() {
                *x = _mm_aesenc_si128(*x, k);
            }
        }
        for x in s.iter_mut() {
            *x = _mm_aesenclast_si128(*x, rk[10]);
        }
        *out = s;
    }

    /// Encrypts the at most `N` blocks of `blocks` together.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3")]
    fn blocks_part<const N: usize>(rk: &[__m128i; 11], blocks: &mut [Block]) {
        let mut s = load_part(blocks);
        blocks_core::<N>(rk, &mut s);
        store_part(blocks, &s);
    }

    /// Fixed-key encryption, `WIDTH` blocks at a time.
    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(super) fn encrypt_blocks(rk: &RoundKeys, blocks: &mut [Block]) {
        let rk = load_n(rk);
        let (chunks, tail) = blocks.as_chunks_mut::<WIDTH>();
        for c in chunks {
            let mut s = load_n(c);
            blocks_core(&rk, &mut s);
            store_part(c, &s);
        }
        // At most 7 blocks left: 1, 2 or 4 at a time. (Other widths than the main loop's keep
        // each `blocks_core` instance with one caller, which inlines it.)
        for c in tail.chunks_mut(4) {
            match c.len() {
                1 => blocks_part::<1>(&rk, c),
                2 => blocks_part::<2>(&rk, c),
                _ => blocks_part::<4>(&rk, c),
            }
        }
    }

    /// The tweak block of `t`: the 128-bit big-endian integer `t` (`super::tccr_tweak`), i.e.
    /// `t` byte-reversed in the high 64-bit half and zero in the low one.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn tweak(t: u64) -> __m128i {
        _mm_set_epi64x(t.swap_bytes() as i64, 0)
    }

    /// TCCR of `N` blocks: `u = π(x)` stays in registers between the two passes, and the
    /// final `⊕ u` is folded into the last round key (`AESENCLAST` ends with `⊕ key`).
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3")]
    fn tccr_core<const N: usize>(rk: &[__m128i; 11], x: &mut [__m128i; N], t: &[__m128i; N]) {
        let mut u = *x;
        blocks_core(rk, &mut u);
        let (rk, mut s) = (*rk, [_mm_setzero_si128(); N]);
        for ((s, &u), &t) in s.iter_mut().zip(&u).zip(t) {
            *s = _mm_xor_si128(_mm_xor_si128(u, t), rk[0]);
        }
        for &k in &rk[1..10] {
            for s in s.iter_mut() {
                *s = _mm_aesenc_si128(*s, k);
            }
        }
        for (s, &u) in s.iter_mut().zip(&u) {
            *s = _mm_aesenclast_si128(*s, _mm_xor_si128(rk[10], u));
        }
        *x = s;
    }

    /// Fused TCCR, `WIDTH` blocks at a time, then one at a time.
    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(super) fn tccr(rk: &RoundKeys, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        let rk = load_n(rk);
        let (xc, xt) = xs.as_chunks::<WIDTH>();
        let (tc, tt) = tweaks.as_chunks::<WIDTH>();
        let (oc, ot) = out.as_chunks_mut::<WIDTH>();
        for ((x, t), o) in xc.iter().zip(tc).zip(oc.iter_mut()) {
            let mut s = load_n(x);
            let mut tw = [_mm_setzero_si128(); WIDTH];
            for (tw, &t) in tw.iter_mut().zip(t) {
                *tw = tweak(t);
            }
            tccr_core(&rk, &mut s, &tw);
            store_part(o, &s);
        }
        for ((x, &t), o) in xt.iter().zip(tt).zip(ot.iter_mut()) {
            let mut s = [load(x)];
            tccr_core(&rk, &mut s, &[tweak(t)]);
            store(o, s[0]);
        }
    }

    /// Encrypts `P` blocks under each of the `G` keys in `k`, the `G` schedules interleaved
    /// and each round key used as soon as it is computed. `s[g]` holds the blocks of `k[g]`.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3")]
    fn keys_core<const G: usize, const P: usize>(k: &[__m128i; G], out: &mut [[__m128i; P]; G]) {
        // Local copies, kept in registers even where this function is not inlined.
        let (mut k, mut s) = (*k, *out);
        for (sg, &kg) in s.iter_mut().zip(&k) {
            for x in sg.iter_mut() {
                *x = _mm_xor_si128(*x, kg);
            }
        }
        for &rcon in &RCON[..9] {
            for (sg, kg) in s.iter_mut().zip(k.iter_mut()) {
                *kg = next_key(*kg, rcon);
                for x in sg.iter_mut() {
                    *x = _mm_aesenc_si128(*x, *kg);
                }
            }
        }
        for (sg, kg) in s.iter_mut().zip(k.iter_mut()) {
            *kg = next_key(*kg, RCON[9]);
            for x in sg.iter_mut() {
                *x = _mm_aesenclast_si128(*x, *kg);
            }
        }
        *out = s;
    }

    /// [`keys_core`] on `G` keys and their blocks.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3")]
    fn keys_full<const G: usize, const P: usize>(keys: &[Block; G], blocks: &mut [[Block; P]; G]) {
        let k = load_n(keys);
        let mut s = [[_mm_setzero_si128(); P]; G];
        for (sg, bg) in s.iter_mut().zip(&*blocks) {
            *sg = load_n(bg);
        }
        keys_core(&k, &mut s);
        for (bg, sg) in blocks.iter_mut().zip(&s) {
            store_part(bg, sg);
        }
    }

    /// [`keys_core`] on at most `G` keys and their blocks.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3")]
    fn keys_part<const G: usize, const P: usize>(keys: &[Block], blocks: &mut [Block]) {
        let k = load_part(keys);
        let mut s = [[_mm_setzero_si128(); P]; G];
        for (sg, bg) in s.iter_mut().zip(blocks.chunks(P)) {
            *sg = load_part(bg);
        }
        keys_core(&k, &mut s);
        for (bg, sg) in blocks.chunks_mut(P).zip(&s) {
            store_part(bg, sg);
        }
    }

    /// Per-key encryption with `P` blocks per key, `NI_KEYS` keys at a time.
    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(super) fn under_keys<const P: usize>(keys: &[Block], blocks: &mut [Block]) {
        const { assert!(P == 1 || P == 2) };
        let (kchunks, ktail) = keys.as_chunks::<NI_KEYS>();
        let (bchunks, btail) = blocks.as_chunks_mut::<P>().0.as_chunks_mut::<NI_KEYS>();
        debug_assert_eq!(kchunks.len(), bchunks.len());
        for (k, b) in kchunks.iter().zip(bchunks) {
            keys_full(k, b);
        }
        // At most 7 keys left: 1, 2 or 4 at a time (widths other than the main loop's, as in
        // `encrypt_blocks`).
        let btail = btail.as_flattened_mut();
        for (k, b) in ktail.chunks(4).zip(btail.chunks_mut(4 * P)) {
            match k.len() {
                1 => keys_part::<1, P>(k, b),
                2 => keys_part::<2, P>(k, b),
                _ => keys_part::<4, P>(k, b),
            }
        }
    }
}

/// VAES kernels: four blocks per `__m512i`.
mod vaes {
    use super::*;

    /// Loads four blocks.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load4(b: &[Block; 4]) -> __m512i {
        // SAFETY: `b` points to 64 readable bytes (four transparent `u128`s), and
        // `_mm512_loadu_si512` has no alignment requirement.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    }

    /// Stores four blocks.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store4(b: &mut [Block; 4], v: __m512i) {
        // SAFETY: `b` points to 64 writable bytes (four transparent `u128`s), and
        // `_mm512_storeu_si512` has no alignment requirement.
        unsafe { _mm512_storeu_si512(b.as_mut_ptr().cast(), v) }
    }

    /// Keeps the emitted instructions round by round: an empty `asm!` that takes and gives
    /// back each register. Volatile `asm!` statements keep their order among themselves, and
    /// LLVM's machine scheduler does not move instructions across them (they bound its
    /// scheduling regions), so in practice each round of every register is emitted before
    /// the next round of any (not a language guarantee: only the speed depends on it).
    /// Without it LLVM emitted the half-gates garbler's groups register after register, two
    /// chains of ten dependent `VAESENC` per gate, which the out-of-order window overlapped
    /// only in part (MinCut size, `ideal`: 15.4 → 13.4 ns per AND garbling).
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn round_barrier<const N: usize>(s: &mut [__m512i; N]) {
        for x in s.iter_mut() {
            // SAFETY: the template is empty: it reads and writes nothing but the register.
            unsafe {
                core::arch::asm!(
                    "/* {0} */",
                    inout(zmm_reg) * x,
                    options(nomem, nostack, preserves_flags)
                )
            };
        }
    }

    /// The 64-bit lanes of the first `min(n, 4)` blocks.
    #[inline(always)]
    fn lanes(n: usize) -> __mmask8 {
        (0xffff_u32 >> (16 - 2 * n.min(4))) as __mmask8
    }

    /// Loads the first `min(b.len(), 4)` blocks of `b`, zero in the other lanes. Four blocks
    /// or more take a plain load; fewer a masked one.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn load_part(b: &[Block]) -> __m512i {
        if let Some(b4) = b.first_chunk() {
            return load4(b4);
        }
        // SAFETY: the mask enables only the 64-bit lanes of the first `b.len() < 4` blocks,
        // which lie in `b`; a masked load neither reads nor faults on disabled lanes, and
        // `loadu` has no alignment requirement.
        unsafe { _mm512_maskz_loadu_epi64(lanes(b.len()), b.as_ptr().cast()) }
    }

    /// Stores the first `min(b.len(), 4)` blocks of `v` to `b`. Four blocks or more take a
    /// plain store (masked stores are slow on some CPUs); fewer a masked one.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn store_part(b: &mut [Block], v: __m512i) {
        if let Some(b4) = b.first_chunk_mut() {
            return store4(b4, v);
        }
        // SAFETY: the mask enables only the 64-bit lanes of the first `b.len() < 4` blocks,
        // which lie in `b`; a masked store leaves disabled lanes untouched, and `storeu` has
        // no alignment requirement.
        unsafe { _mm512_mask_storeu_epi64(b.as_mut_ptr().cast(), lanes(b.len()), v) }
    }

    /// The blocks of `b` from `from` on (none if `from` is past the end).
    #[inline(always)]
    fn from(b: &[Block], from: usize) -> &[Block] {
        &b[from.min(b.len())..]
    }

    /// As [`from`], mutable.
    #[inline(always)]
    fn from_mut(b: &mut [Block], from: usize) -> &mut [Block] {
        let n = b.len();
        &mut b[from.min(n)..]
    }

    /// The next round key after each of the four keys in `k`, round constant `rcon`.
    ///
    /// GLNP15's round with its byte shuffle moved after `AESENCLAST`: on the key itself,
    /// `AESENCLAST` gives `SubBytes(ShiftRows(k)) ⊕ K`, and as `SubBytes` works bytewise one
    /// `VPSHUFB` then gathers `SubWord(RotWord(w3))` into every column: the bytes of `w3` at
    /// rows 1, 2, 3, 0, which `ShiftRows` moved to bytes 9, 6, 3, 12. `K` holds `Rcon` at byte
    /// 9, which the shuffle brings to byte 0 of every column.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn next_key(k: __m512i, rcon: i32) -> __m512i {
        let rc = i64::from(rcon) << 8;
        let t = _mm512_aesenclast_epi128(k, _mm512_set4_epi64(rc, 0, rc, 0));
        let t = _mm512_shuffle_epi8(t, _mm512_set1_epi32(0x0c03_0609));
        // Prefix XOR of the words of each key: (w0, w0⊕w1, w2, w2⊕w3) by a shift within
        // 64-bit halves, then word 1 XORed into words 2 and 3 (a shuffle zeroing words 0, 1).
        let y = _mm512_xor_si512(k, _mm512_slli_epi64::<32>(k));
        let y2 = _mm512_maskz_shuffle_epi32::<0x50>(0xcccc, y);
        _mm512_ternarylogic_epi32::<0x96>(y, y2, t)
    }

    /// The key schedule of four keys in one register, as in [`keys_core`].
    #[cfg(test)]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    pub(super) fn round_keys_x4(keys: &[Block; 4]) -> [RoundKeys; 4] {
        let mut rk = [[Block::ZERO; 4]; 11];
        let mut k = load4(keys);
        store4(&mut rk[0], k);
        for (r, &rcon) in RCON.iter().enumerate() {
            k = next_key(k, rcon);
            store4(&mut rk[r + 1], k);
        }
        core::array::from_fn(|j| core::array::from_fn(|r| rk[r][j]))
    }

    /// Each round key in all four 128-bit lanes of a register.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn broadcast_keys(rk: &RoundKeys) -> [__m512i; 11] {
        core::array::from_fn(|r| _mm512_broadcast_i32x4(ni::load(&rk[r])))
    }

    /// Encrypts `N` registers of four blocks together under the broadcast round keys.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn blocks_core<const N: usize>(rk: &[__m512i; 11], out: &mut [__m512i; N]) {
        // Local copies, kept in registers even where this function is not inlined.
        let (rk, mut s) = (*rk, *out);
        for x in s.iter_mut() {
            *x = _mm512_xor_si512(*x, rk[0]);
        }
        for &k in &rk[1..10] {
            for x in s.iter_mut() {
                *x = _mm512_aesenc_epi128(*x, k);
            }
            round_barrier(&mut s);
        }
        for x in s.iter_mut() {
            *x = _mm512_aesenclast_epi128(*x, rk[10]);
        }
        *out = s;
    }

    /// Encrypts the at most `4 * N` blocks of `blocks`, `N` registers together.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn blocks_part<const N: usize>(rk: &[__m512i; 11], blocks: &mut [Block]) {
        let mut s = [_mm512_setzero_si512(); N];
        for (i, x) in s.iter_mut().enumerate() {
            *x = load_part(from(blocks, 4 * i));
        }
        blocks_core(rk, &mut s);
        for (i, &x) in s.iter().enumerate() {
            store_part(from_mut(blocks, 4 * i), x);
        }
    }

    /// Fixed-key encryption, `WIDTH` registers (32 blocks) at a time.
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    pub(super) fn encrypt_blocks(rk: &RoundKeys, blocks: &mut [Block]) {
        let k = broadcast_keys(rk);
        let (chunks, _) = blocks.as_chunks_mut::<4>().0.as_chunks_mut::<WIDTH>();
        let done = chunks.len() * 4 * WIDTH;
        for c in chunks {
            let mut s = [_mm512_setzero_si512(); WIDTH];
            for (x, b) in s.iter_mut().zip(c.iter()) {
                *x = load4(b);
            }
            blocks_core(&k, &mut s);
            for (b, &x) in c.iter_mut().zip(&s) {
                store4(b, x);
            }
        }
        // At most 31 blocks left: up to 16 at a time in 1, 2 or 4 registers, with masked loads
        // and stores for a partial one. (Other widths than the main loop's keep each
        // `blocks_core` instance with one caller, which inlines it.)
        for c in blocks[done..].chunks_mut(16) {
            match c.len().div_ceil(4) {
                1 => blocks_part::<1>(&k, c),
                2 => blocks_part::<2>(&k, c),
                _ => blocks_part::<4>(&k, c),
            }
        }
    }

    /// The tweak blocks of the first `min(t.len(), 4)` tweaks, zero for the rest: each the
    /// 128-bit big-endian integer `t` (`super::tccr_tweak`), `t` byte-reversed in the high 64-bit
    /// half of its block and zero in the low one.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn tweaks4(t: &[u64]) -> __m512i {
        // The tweaks of the blocks present go to the odd (high) 64-bit lanes.
        let mask = 0xaa & lanes(t.len());
        // SAFETY: an expanding load reads only as many consecutive `u64`s from the pointer as
        // the mask has bits set, here `min(t.len(), 4)`, all in `t`; disabled lanes neither
        // read nor fault, and there is no alignment requirement.
        let v = unsafe { _mm512_maskz_expandloadu_epi64(mask, t.as_ptr().cast()) };
        // Reverse the bytes of each 64-bit lane (the zero lanes stay zero).
        _mm512_shuffle_epi8(v, byte_reverse_64())
    }

    /// TCCR of `N` registers of four blocks, as `ni::tccr_core`: `u = π(x)` stays in
    /// registers, the final `⊕ u` is folded into the last round key.
    ///
    /// `SITE` only tells the callers' instances apart: an instance with one caller is
    /// inlined, one with several is not, and then its registers go through memory and the
    /// round keys are reloaded after every call.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn tccr_core<const N: usize, const SITE: u8>(
        rk: &[__m512i; 11],
        x: &mut [__m512i; N],
        t: &[__m512i; N],
    ) {
        let mut u = *x;
        blocks_core(rk, &mut u);
        let (rk, mut s) = (*rk, [_mm512_setzero_si512(); N]);
        for ((s, &u), &t) in s.iter_mut().zip(&u).zip(t) {
            *s = _mm512_ternarylogic_epi64::<0x96>(u, t, rk[0]);
        }
        for &k in &rk[1..10] {
            for s in s.iter_mut() {
                *s = _mm512_aesenc_epi128(*s, k);
            }
            round_barrier(&mut s);
        }
        for (s, &u) in s.iter_mut().zip(&u) {
            *s = _mm512_aesenclast_epi128(*s, _mm512_xor_si512(rk[10], u));
        }
        *x = s;
    }

    /// The fused TCCR of the at most `4 * N` blocks of `xs`, `N` registers together.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn tccr_part<const N: usize>(
        rk: &[__m512i; 11],
        xs: &[Block],
        tweaks: &[u64],
        out: &mut [Block],
    ) {
        let (mut s, mut t) = ([_mm512_setzero_si512(); N], [_mm512_setzero_si512(); N]);
        for (i, (s, t)) in s.iter_mut().zip(t.iter_mut()).enumerate() {
            *s = load_part(from(xs, 4 * i));
            *t = tweaks4(&tweaks[(4 * i).min(tweaks.len())..]);
        }
        tccr_core::<_, 1>(rk, &mut s, &t);
        for (i, &x) in s.iter().enumerate() {
            store_part(from_mut(out, 4 * i), x);
        }
    }

    /// Fused TCCR, `WIDTH` registers (32 blocks) at a time: 8 registers of `u`, 8 of state
    /// and 11 round keys fit the 32 AVX-512 registers.
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    pub(super) fn tccr(rk: &RoundKeys, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        let k = broadcast_keys(rk);
        let n = xs.len().min(tweaks.len()).min(out.len());
        let (xs, tweaks, out) = (&xs[..n], &tweaks[..n], &mut out[..n]);
        let (xc, _) = xs.as_chunks::<4>().0.as_chunks::<WIDTH>();
        let (tc, _) = tweaks.as_chunks::<4>().0.as_chunks::<WIDTH>();
        let (oc, _) = out.as_chunks_mut::<4>().0.as_chunks_mut::<WIDTH>();
        let done = xc.len() * 4 * WIDTH;
        for ((x, t), o) in xc.iter().zip(tc).zip(oc.iter_mut()) {
            let (mut s, mut tw) = (
                [_mm512_setzero_si512(); WIDTH],
                [_mm512_setzero_si512(); WIDTH],
            );
            for (((s, tw), x), t) in s.iter_mut().zip(tw.iter_mut()).zip(x).zip(t) {
                *s = load4(x);
                *tw = tweaks4(t);
            }
            tccr_core::<_, 2>(&k, &mut s, &tw);
            for (o, &s) in o.iter_mut().zip(&s) {
                store4(o, s);
            }
        }
        // At most 31 blocks left, as in `encrypt_blocks`.
        let (xs, tweaks, out) = (&xs[done..], &tweaks[done..], &mut out[done..]);
        for ((x, t), o) in xs.chunks(16).zip(tweaks.chunks(16)).zip(out.chunks_mut(16)) {
            match x.len().div_ceil(4) {
                1 => tccr_part::<1>(&k, x, t, o),
                2 => tccr_part::<2>(&k, x, t, o),
                _ => tccr_part::<4>(&k, x, t, o),
            }
        }
    }

    /// The TCCR inputs and tweaks of one AND gate in one register each: blocks
    /// `(a0, a0 ⊕ Δ, b0, b0 ⊕ Δ)` from `[a0, b0]` and `dmask = (0, Δ, 0, Δ)`, and tweaks
    /// `(j, j, j', j')` with `j = 2n + 1`, `j' = 2n + 2` for the AND index `n`.
    #[inline]
    #[target_feature(enable = "avx,avx2,avx512f,avx512bw")]
    fn and_gate_inputs(ab: &[Block; 2], n: u32, dmask: __m512i) -> (__m512i, __m512i) {
        // SAFETY: `ab` points to 32 readable bytes (two transparent `u128`s), and
        // `_mm256_loadu_si256` has no alignment requirement.
        let ab = unsafe { _mm256_loadu_si256(ab.as_ptr().cast()) };
        (
            and_gate_block(_mm512_castsi256_si512(ab), dmask),
            and_gate_tweaks(n),
        )
    }

    /// `(a0, a0 ⊕ Δ, b0, b0 ⊕ Δ)` from a register whose 128-bit lanes 0 and 1 hold `a0`
    /// and `b0`, with `dmask = (0, Δ, 0, Δ)`.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn and_gate_block(ab: __m512i, dmask: __m512i) -> __m512i {
        // 128-bit lanes (a0, a0, b0, b0), then Δ XORed into lanes 1 and 3.
        _mm512_xor_si512(_mm512_shuffle_i64x2::<0x50>(ab, ab), dmask)
    }

    /// The `VPSHUFB` control reversing the bytes of each 64-bit lane.
    #[inline]
    #[target_feature(enable = "avx512f")]
    fn byte_reverse_64() -> __m512i {
        _mm512_set4_epi64(
            0x0809_0a0b_0c0d_0e0f,
            0x0001_0203_0405_0607,
            0x0809_0a0b_0c0d_0e0f,
            0x0001_0203_0405_0607,
        )
    }

    /// The four TCCR hashes of each half-gates AND gate, one register per gate, `WIDTH`
    /// gates at a time: inputs and tweaks are made in registers from the two 0-labels and
    /// the AND index, never staged in memory.
    #[target_feature(enable = "aes,sse2,ssse3,avx,avx2,vaes,avx512f,avx512bw")]
    pub(super) fn tccr_and_gates(
        rk: &RoundKeys,
        delta: Block,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        out: &mut [[Block; 4]],
    ) {
        let k = broadcast_keys(rk);
        let dmask = _mm512_maskz_broadcast_i32x4(0xf0f0, ni::load(&delta));
        let (ic, it) = inputs.as_chunks::<WIDTH>();
        let (nc, nt) = and_index.as_chunks::<WIDTH>();
        let (oc, ot) = out.as_chunks_mut::<WIDTH>();
        for ((ab, n), o) in ic.iter().zip(nc).zip(oc.iter_mut()) {
            let (mut s, mut t) = (
                [_mm512_setzero_si512(); WIDTH],
                [_mm512_setzero_si512(); WIDTH],
            );
            for (((s, t), ab), &n) in s.iter_mut().zip(t.iter_mut()).zip(ab).zip(n) {
                (*s, *t) = and_gate_inputs(ab, n, dmask);
            }
            tccr_core::<_, 3>(&k, &mut s, &t);
            for (o, &s) in o.iter_mut().zip(&s) {
                store4(o, s);
            }
        }
        // At most 7 gates left, one register each.
        for ((ab, &n), o) in it.iter().zip(nt).zip(ot.iter_mut()) {
            let (s, t) = and_gate_inputs(ab, n, dmask);
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

    /// Loads the 32 bytes of a table as `(lo, hi)`.
    #[inline]
    #[target_feature(enable = "sse2")]
    fn load_table(table: &[u8; 32]) -> (__m128i, __m128i) {
        // SAFETY: `table` is 32 readable bytes, the two 16-byte loads cover them, and
        // `_mm_loadu_si128` has no alignment requirement.
        unsafe {
            (
                _mm_loadu_si128(table.as_ptr().cast()),
                _mm_loadu_si128(table.as_ptr().add(16).cast()),
            )
        }
    }

    /// The 32 bytes of `window` at `pos` (panics past its end, like any slice index).
    #[inline(always)]
    fn table_at(window: &[u8], pos: u32) -> &[u8; 32] {
        let pos = pos as usize;
        window[pos..pos + 32].try_into().expect("32 bytes")
    }

    /// As [`table_at`], mutable.
    #[inline(always)]
    fn table_at_mut(window: &mut [u8], pos: u32) -> &mut [u8; 32] {
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
    /// [`garble_and_gates`]): every input is read before any output is written.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,avx,avx2,vaes,avx512f,avx512bw")]
    fn garble_group<const N: usize, const SITE: u8>(
        k: &[__m512i; 11],
        delta: __m128i,
        dmask: __m512i,
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
            t[g] = and_gate_tweaks(op.n);
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

    /// The tweaks `(j, j, j', j')` of an AND gate with AND index `n`: `2n + (1, 1, 2, 2)`
    /// in the high 64-bit half of each block, zero in the low half, then byte-reversed
    /// within each half: the 128-bit big-endian tweak (`tccr_tweak`).
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn and_gate_tweaks(n: u32) -> __m512i {
        let two_n = _mm512_slli_epi64::<1>(_mm512_set1_epi64(i64::from(n)));
        let t = _mm512_maskz_add_epi64(0xaa, two_n, _mm512_set_epi64(2, 0, 2, 0, 1, 0, 1, 0));
        _mm512_shuffle_epi8(t, byte_reverse_64())
    }

    /// The half-gates garbler's AND gates with the TCCR hash, fused: for each gate of
    /// `(slots, index, first)` ([`and_ops`]), its 0-labels read from `zero`, its four
    /// hashes, its table `TG ‖ TE` written to `window[32 · (n − first)..][..32]` and its
    /// output 0-label to `zero[out]`, `WIDTH` gates at a time with nothing staged in memory.
    /// The gates must be independent (one wave's): they are processed in order, every input
    /// of a group read before its outputs are written.
    #[target_feature(enable = "aes,sse2,ssse3,avx,avx2,vaes,avx512f,avx512bw")]
    pub(super) fn garble_and_gates(
        rk: &RoundKeys,
        delta: Block,
        zero: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &mut [u8],
    ) {
        let k = broadcast_keys(rk);
        let d = ni::load(&delta);
        let dmask = _mm512_maskz_broadcast_i32x4(0xf0f0, d);
        let (ands, index) = (ands.chunks_exact(WIDTH), index.chunks_exact(WIDTH));
        let rest = ands.remainder().chunks(1).zip(index.remainder().chunks(1));
        for (a, n) in ands.zip(index) {
            garble_group::<WIDTH, 7>(&k, d, dmask, zero, (a, n, first), window);
        }
        for (a, n) in rest {
            garble_group::<1, 8>(&k, d, dmask, zero, (a, n, first), window);
        }
    }

    /// Evaluates the first `2 * N` (or fewer) AND gates of `ands`, two per register (see
    /// [`eval_and_gates`]): every input is read before any output is written.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes,avx512f,avx512bw")]
    fn eval_group<const N: usize, const SITE: u8>(
        k: &[__m512i; 11],
        labels: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        let (mut s, mut t) = ([_mm512_setzero_si512(); N], [_mm512_setzero_si512(); N]);
        // Per register, the labels [a, b] of its two gates.
        let mut ins = [[[_mm_setzero_si128(); 2]; 2]; N];
        for (g, op) in and_ops(ands, index, first).enumerate().take(2 * N) {
            ins[g / 2][g % 2] = [ni::load(&labels[op.a]), ni::load(&labels[op.b])];
        }
        for (r, (s, t)) in s.iter_mut().zip(t.iter_mut()).enumerate() {
            let [[a0, b0], [a1, b1]] = ins[r];
            let lo = _mm512_inserti32x4::<1>(_mm512_castsi128_si512(a0), b0);
            let hi = _mm256_inserti128_si256::<1>(_mm256_castsi128_si256(a1), b1);
            *s = _mm512_inserti64x4::<1>(lo, hi);
            let n = |g: usize| index.get(g).copied().unwrap_or(0);
            *t = eval_tweaks(n(2 * r), n(2 * r + 1));
        }
        tccr_core::<N, SITE>(k, &mut s, &t);
        for (g, op) in and_ops(ands, index, first).enumerate().take(2 * N) {
            let h = s[g / 2];
            let (ha, hb) = if g % 2 == 0 {
                (_mm512_castsi512_si128(h), _mm512_extracti32x4_epi32::<1>(h))
            } else {
                (
                    _mm512_extracti32x4_epi32::<2>(h),
                    _mm512_extracti32x4_epi32::<3>(h),
                )
            };
            let [a, b] = ins[g / 2][g % 2];
            let (tg, te) = load_table(table_at(window, op.pos));
            // `half_gates::eval_and`: (H(a) ⊕ sa·TG) ⊕ (H(b) ⊕ sb·(TE ⊕ a)).
            let out = _mm_xor_si128(
                _mm_xor_si128(ha, _mm_and_si128(tg, lsb_mask(a))),
                _mm_xor_si128(hb, _mm_and_si128(_mm_xor_si128(te, a), lsb_mask(b))),
            );
            ni::store(&mut labels[op.out], out);
        }
    }

    /// The half-gates evaluator's AND gates with the TCCR hash, fused: for each gate of
    /// `(slots, index, first)` ([`and_ops`]), its labels read from `labels`, its two hashes,
    /// and its output label from its table at `window[32 · (n − first)..][..32]` written to
    /// `labels[out]`, `2 * WIDTH` gates at a time with nothing staged in memory. The gates
    /// must be independent, as in [`garble_and_gates`].
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes,avx512f,avx512bw")]
    pub(super) fn eval_and_gates(
        rk: &RoundKeys,
        labels: &mut [Block],
        (ands, index, first): (&[u64], &[u32], u32),
        window: &[u8],
    ) {
        let k = broadcast_keys(rk);
        let (ands, index) = (ands.chunks_exact(2 * WIDTH), index.chunks_exact(2 * WIDTH));
        let rest = ands.remainder().chunks(2).zip(index.remainder().chunks(2));
        for (a, n) in ands.zip(index) {
            eval_group::<WIDTH, 9>(&k, labels, (a, n, first), window);
        }
        for (a, n) in rest {
            eval_group::<1, 10>(&k, labels, (a, n, first), window);
        }
    }

    /// The tweaks of two evaluated AND gates with AND indices `n0`, `n1` in one register:
    /// `(2n0 + 1, 2n0 + 2, 2n1 + 1, 2n1 + 2)`, each the 128-bit big-endian integer.
    #[inline]
    #[target_feature(enable = "avx512f,avx512bw")]
    fn eval_tweaks(n0: u32, n1: u32) -> __m512i {
        let n = _mm512_castsi128_si512(_mm_set_epi32(0, 0, n1 as i32, n0 as i32));
        // n0 to the low 32 bits of 64-bit lanes 1 and 3, n1 to those of lanes 5 and 7, zero
        // elsewhere (mask 0x4444: 32-bit lanes 2, 6, 10, 14).
        let pick = _mm512_set_epi32(0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
        let n = _mm512_maskz_permutexvar_epi32(0x4444, pick, n);
        let two_n = _mm512_slli_epi64::<1>(n);
        let t = _mm512_maskz_add_epi64(0xaa, two_n, _mm512_set_epi64(2, 0, 1, 0, 2, 0, 1, 0));
        _mm512_shuffle_epi8(t, byte_reverse_64())
    }

    /// The two TCCR hashes `[H(a, j), H(b, j')]` of each evaluated AND gate from its labels
    /// `[a, b]` and AND index, two gates per register and `WIDTH` registers at a time; the
    /// tweaks are made in registers.
    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,vaes,avx512f,avx512bw")]
    pub(super) fn tccr_eval_gates(
        rk: &RoundKeys,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        out: &mut [[Block; 2]],
    ) {
        let k = broadcast_keys(rk);
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
                *t = eval_tweaks(n0, n1);
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
            let t = eval_tweaks(n[0], n.get(1).copied().unwrap_or(0));
            tccr_core::<_, 6>(&k, &mut s, &[t]);
            store_part(o, s[0]);
        }
    }

    /// Encrypts `P` blocks under each of the `4 * G` keys in `k`, four keys per register and
    /// `G` registers interleaved, each round key used as soon as it is computed. `s[g]` holds
    /// the blocks of the keys in `k[g]`: with `P == 2`, grouped into their first blocks and
    /// their second blocks ([`group`]), so that both registers use `k[g]` as it is. `SITE`
    /// gives each caller its own instance, which it then inlines (as in [`tccr_core`]).
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn keys_core<const G: usize, const P: usize, const SITE: u8>(
        k: &[__m512i; G],
        out: &mut [[__m512i; P]; G],
    ) {
        // Local copies, kept in registers even where this function is not inlined.
        let (mut k, mut s) = (*k, *out);
        for (sg, &kg) in s.iter_mut().zip(&k) {
            for x in sg.iter_mut() {
                *x = _mm512_xor_si512(*x, kg);
            }
        }
        for &rcon in &RCON[..9] {
            for (sg, kg) in s.iter_mut().zip(k.iter_mut()) {
                *kg = next_key(*kg, rcon);
                for x in sg.iter_mut() {
                    *x = _mm512_aesenc_epi128(*x, *kg);
                }
            }
        }
        for (sg, kg) in s.iter_mut().zip(k.iter_mut()) {
            *kg = next_key(*kg, RCON[9]);
            for x in sg.iter_mut() {
                *x = _mm512_aesenclast_epi128(*x, *kg);
            }
        }
        *out = s;
    }

    /// With `P == 2`, the registers `(b0, b1, b2, b3), (b4, b5, b6, b7)` holding two blocks
    /// for each of four keys, regrouped as `(b0, b2, b4, b6), (b1, b3, b5, b7)`.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn group<const P: usize>(mut x: [__m512i; P]) -> [__m512i; P] {
        if P == 2 {
            let even = _mm512_set_epi64(13, 12, 9, 8, 5, 4, 1, 0);
            let odd = _mm512_set_epi64(15, 14, 11, 10, 7, 6, 3, 2);
            let (a, b) = (x[0], x[1]);
            x[0] = _mm512_permutex2var_epi64(a, even, b);
            x[1] = _mm512_permutex2var_epi64(a, odd, b);
        }
        x
    }

    /// The inverse of [`group`].
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn ungroup<const P: usize>(mut x: [__m512i; P]) -> [__m512i; P] {
        if P == 2 {
            let first = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
            let second = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
            let (a, b) = (x[0], x[1]);
            x[0] = _mm512_permutex2var_epi64(a, first, b);
            x[1] = _mm512_permutex2var_epi64(a, second, b);
        }
        x
    }

    /// [`keys_core`] on `4 * G` keys and their blocks.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn keys_full<const G: usize, const P: usize>(
        keys: &[[Block; 4]; G],
        blocks: &mut [[[Block; 4]; P]; G],
    ) {
        let mut k = [_mm512_setzero_si512(); G];
        let mut s = [[_mm512_setzero_si512(); P]; G];
        for ((kg, sg), (key, bg)) in k.iter_mut().zip(&mut s).zip(keys.iter().zip(&*blocks)) {
            *kg = load4(key);
            for (x, b) in sg.iter_mut().zip(bg) {
                *x = load4(b);
            }
            *sg = group(*sg);
        }
        keys_core::<_, _, 0>(&k, &mut s);
        for (bg, &sg) in blocks.iter_mut().zip(&s) {
            for (b, &x) in bg.iter_mut().zip(&ungroup(sg)) {
                store4(b, x);
            }
        }
    }

    /// [`keys_core`] on at most `4 * G` keys and their blocks, with masked loads and stores
    /// for a partial register.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    fn keys_part<const G: usize, const P: usize>(keys: &[Block], blocks: &mut [Block]) {
        let mut k = [_mm512_setzero_si512(); G];
        let mut s = [[_mm512_setzero_si512(); P]; G];
        for (g, (kg, sg)) in k.iter_mut().zip(&mut s).enumerate() {
            *kg = load_part(from(keys, 4 * g));
            for (j, x) in sg.iter_mut().enumerate() {
                *x = load_part(from(blocks, 4 * (g * P + j)));
            }
            *sg = group(*sg);
        }
        keys_core::<_, _, 1>(&k, &mut s);
        for (g, &sg) in s.iter().enumerate() {
            for (j, &x) in ungroup(sg).iter().enumerate() {
                store_part(from_mut(blocks, 4 * (g * P + j)), x);
            }
        }
    }

    /// Per-key encryption with `P` blocks per key, `4 * VAES_KEYS` keys at a time.
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    pub(super) fn under_keys<const P: usize>(keys: &[Block], blocks: &mut [Block]) {
        const { assert!(P == 1 || P == 2) };
        let (kchunks, _) = keys.as_chunks::<4>().0.as_chunks::<VAES_KEYS>();
        let (bchunks, _) = blocks
            .as_chunks_mut::<4>()
            .0
            .as_chunks_mut::<P>()
            .0
            .as_chunks_mut::<VAES_KEYS>();
        debug_assert_eq!(kchunks.len(), bchunks.len());
        let done = kchunks.len() * 4 * VAES_KEYS;
        for (k, b) in kchunks.iter().zip(bchunks) {
            keys_full(k, b);
        }
        // At most 31 keys left: up to 16 at a time in 1, 2 or 4 key registers, with masked
        // loads and stores for a partial one. (Other widths than the main loop's keep each
        // `keys_core` instance with one caller, which inlines it.)
        let blocks = blocks[done * P..].chunks_mut(16 * P);
        for (k, b) in keys[done..].chunks(16).zip(blocks) {
            match k.len().div_ceil(4) {
                1 => keys_part::<1, P>(k, b),
                2 => keys_part::<2, P>(k, b),
                _ => keys_part::<4, P>(k, b),
            }
        }
    }

    /// The PRF inputs `blk(g, r)` of `prf` (GARBLING.md §1.3) in the four lanes of a
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
            // K[r] in lanes (K0, K2, K1, K3); its lsbs pad the mask bits (§1.4.2).
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
            // w = (Ã[0] ⊕ B̃[0], ·, ·, ·) (§1.5).
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
