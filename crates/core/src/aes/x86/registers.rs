//! The x86 [`Register`]s of the generic kernels: [`Xmm`], one block in a 128-bit register
//! (AES-NI), and [`Ymm`], two blocks in a 256-bit register (VAES with AVX2, no AVX-512), and
//! the `aes-ni` and `vaes256` backends' entry points.
//!
//! Each method is `#[inline(always)]` and calls its intrinsics in an `unsafe` block whose
//! argument is the type's invariant: a value exists only where its token, and so the CPU's
//! features, does (see [`super::super::register`]). The kernels built on them run inside
//! `#[target_feature]` entry points, where the intrinsics are inlined.

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::{AesNi, Vaes256};
use crate::aes::register::{self, Label, Register, RoundKeys};
use crate::block::Block;

/// One block in a 128-bit register; exists only on a CPU with AES-NI, SSE2 and SSSE3
/// (an [`AesNi`] token).
#[derive(Clone, Copy, Debug)]
pub struct Xmm(__m128i);

/// Two blocks in a 256-bit register; exists only on a CPU with VAES, AVX2 and AES-NI (a
/// [`Vaes256`] token).
#[derive(Clone, Copy, Debug)]
pub struct Ymm(__m256i);

// SAFETY (of every `unsafe` block in the two impls below): a value of `Xmm` exists only
// after an `AesNi` token was presented to a constructor, and one of `Ymm` only after a
// `Vaes256` token, so the CPU has the instructions each block executes; the loads and stores
// go through references to whole blocks or byte arrays of the width they access, and the
// unaligned forms have no alignment requirement.

impl Register for Xmm {
    type Token = AesNi;
    type Lane = Xmm;
    const BLOCKS: usize = 1;

    #[inline(always)]
    fn lane_token(t: AesNi) -> AesNi {
        t
    }
    #[inline(always)]
    fn zero(_: AesNi) -> Self {
        Xmm(unsafe { _mm_setzero_si128() })
    }
    #[inline(always)]
    fn load_part(t: AesNi, b: &[Block]) -> Self {
        match b.first() {
            Some(b) => Xmm::load(t, b),
            None => Xmm::zero(t),
        }
    }
    #[inline(always)]
    fn store_part(self, b: &mut [Block]) {
        if let Some(b) = b.first_mut() {
            self.store(b);
        }
    }
    #[inline(always)]
    fn from_lanes(lanes: &[Xmm]) -> Self {
        lanes[0]
    }
    #[inline(always)]
    fn lane(self, _: usize) -> Xmm {
        self
    }
    #[inline(always)]
    fn splat(x: Xmm) -> Self {
        x
    }
    #[inline(always)]
    fn tweaks(_: AesNi, ts: &[u64]) -> Self {
        let t = ts.first().map_or(0, |t| t.swap_bytes());
        Xmm(unsafe { _mm_set_epi64x(t as i64, 0) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Xmm(unsafe { _mm_xor_si128(self.0, o.0) })
    }
    #[inline(always)]
    fn start(self, k: Self) -> Self {
        self.xor(k)
    }
    #[inline(always)]
    fn round(self, k: Self) -> Self {
        Xmm(unsafe { _mm_aesenc_si128(self.0, k.0) })
    }
    #[inline(always)]
    fn round9(self, k: Self) -> Self {
        self.round(k)
    }
    #[inline(always)]
    fn finish(self, k: Self) -> Self {
        Xmm(unsafe { _mm_aesenclast_si128(self.0, k.0) })
    }
    #[inline(always)]
    fn next_key(self, rcon: i32) -> Self {
        Xmm(unsafe { super::ni::next_key(self.0, rcon) })
    }
    #[inline(always)]
    fn barrier<const N: usize>(s: &mut [Self; N]) {
        for x in s.iter_mut() {
            // SAFETY: the template is empty: it reads and writes nothing but the register.
            unsafe {
                core::arch::asm!(
                    "/* {0} */",
                    inout(xmm_reg) x.0,
                    options(nomem, nostack, preserves_flags)
                )
            };
        }
    }
}

impl Label for Xmm {
    #[inline(always)]
    fn from_halves(_: AesNi, lo: u64, hi: u64) -> Self {
        Xmm(unsafe { _mm_set_epi64x(hi as i64, lo as i64) })
    }
    #[inline(always)]
    fn load(_: AesNi, b: &Block) -> Self {
        Xmm(unsafe { _mm_loadu_si128((b as *const Block).cast()) })
    }
    #[inline(always)]
    fn store(self, b: &mut Block) {
        unsafe { _mm_storeu_si128((b as *mut Block).cast(), self.0) }
    }
    #[inline(always)]
    fn load_bytes(_: AesNi, b: &[u8; 16]) -> Self {
        Xmm(unsafe { _mm_loadu_si128(b.as_ptr().cast()) })
    }
    #[inline(always)]
    fn store_bytes(self, b: &mut [u8; 16]) {
        unsafe { _mm_storeu_si128(b.as_mut_ptr().cast(), self.0) }
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Xmm(unsafe { _mm_and_si128(self.0, o.0) })
    }
    #[inline(always)]
    fn and_not(self, o: Self) -> Self {
        Xmm(unsafe { _mm_andnot_si128(self.0, o.0) })
    }
    #[inline(always)]
    fn lsb_mask(self) -> Self {
        // Bit 0 to the sign of dword 0, broadcast to every dword, spread over each dword.
        Xmm(unsafe { _mm_srai_epi32::<31>(_mm_shuffle_epi32::<0>(_mm_slli_epi32::<31>(self.0))) })
    }
    #[inline(always)]
    fn lsb(self) -> bool {
        unsafe { _mm_cvtsi128_si32(self.0) & 1 != 0 }
    }
    #[inline(always)]
    fn with_lsb(self, bit: bool) -> Self {
        unsafe {
            let x = _mm_andnot_si128(_mm_set_epi64x(0, 1), self.0);
            Xmm(_mm_or_si128(x, _mm_set_epi64x(0, i64::from(bit))))
        }
    }
    #[inline(always)]
    fn select(cond: bool, a: Self, b: Self) -> Self {
        let m = unsafe { _mm_set1_epi64x(-i64::from(cond)) };
        // (a & !m) | (b & m), as a ⊕ ((a ⊕ b) & m).
        a.xor(a.xor(b).and(Xmm(m)))
    }
}

impl Ymm {
    /// The register holding `v`; the token proves that the CPU has its instructions.
    #[inline(always)]
    pub fn from_raw(_: Vaes256, v: __m256i) -> Ymm {
        Ymm(v)
    }

    /// The 256-bit value held (for kernels written out with intrinsics on it).
    #[inline(always)]
    pub fn raw(self) -> __m256i {
        self.0
    }
}

impl Register for Ymm {
    type Token = Vaes256;
    type Lane = Xmm;
    const BLOCKS: usize = 2;

    #[inline(always)]
    fn lane_token(t: Vaes256) -> AesNi {
        t.0
    }
    #[inline(always)]
    fn zero(_: Vaes256) -> Self {
        Ymm(unsafe { _mm256_setzero_si256() })
    }
    #[inline(always)]
    fn load_part(t: Vaes256, b: &[Block]) -> Self {
        match b {
            [] => Ymm::zero(t),
            [x] => Ymm::from_lanes(&[Xmm::load(t.0, x), Xmm::zero(t.0)]),
            [x, ..] => Ymm(unsafe { _mm256_loadu_si256((x as *const Block).cast()) }),
        }
    }
    #[inline(always)]
    fn store_part(self, b: &mut [Block]) {
        match b {
            [] => {}
            [x] => self.lane(0).store(x),
            // SAFETY: as above; the slice has at least two blocks from `x` on.
            [x, ..] => unsafe { _mm256_storeu_si256((x as *mut Block).cast(), self.0) },
        }
    }
    #[inline(always)]
    fn from_lanes(lanes: &[Xmm]) -> Self {
        Ymm(unsafe { _mm256_set_m128i(lanes[1].0, lanes[0].0) })
    }
    #[inline(always)]
    fn lane(self, i: usize) -> Xmm {
        unsafe {
            Xmm(match i {
                0 => _mm256_castsi256_si128(self.0),
                _ => _mm256_extracti128_si256::<1>(self.0),
            })
        }
    }
    #[inline(always)]
    fn splat(x: Xmm) -> Self {
        Ymm(unsafe { _mm256_broadcastsi128_si256(x.0) })
    }
    #[inline(always)]
    fn tweaks(_: Vaes256, ts: &[u64]) -> Self {
        let t = |i: usize| ts.get(i).map_or(0, |t| t.swap_bytes()) as i64;
        Ymm(unsafe { _mm256_set_epi64x(t(1), 0, t(0), 0) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Ymm(unsafe { _mm256_xor_si256(self.0, o.0) })
    }
    #[inline(always)]
    fn start(self, k: Self) -> Self {
        self.xor(k)
    }
    #[inline(always)]
    fn round(self, k: Self) -> Self {
        Ymm(unsafe { _mm256_aesenc_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn round9(self, k: Self) -> Self {
        self.round(k)
    }
    #[inline(always)]
    fn finish(self, k: Self) -> Self {
        Ymm(unsafe { _mm256_aesenclast_epi128(self.0, k.0) })
    }
    #[inline(always)]
    fn next_key(self, rcon: i32) -> Self {
        // The 512-bit schedule's round (`super::vaes`'s `next_key`) on two keys: AESENCLAST
        // on the key with Rcon at byte 9 of the round key, one VPSHUFB gathering
        // SubWord(RotWord(w3)) ⊕ Rcon into every column, then the prefix XOR of the words:
        // (w0, w0⊕w1, w2, w2⊕w3) by a shift within 64-bit halves, and word 1 of that XORed
        // into words 2 and 3 (a dword shuffle blended over zero in words 0 and 1).
        unsafe {
            let k = self.0;
            let rc = i64::from(rcon) << 8;
            let t = _mm256_aesenclast_epi128(k, _mm256_set_epi64x(rc, 0, rc, 0));
            let t = _mm256_shuffle_epi8(t, _mm256_set1_epi32(0x0c03_0609));
            let y = _mm256_xor_si256(k, _mm256_slli_epi64::<32>(k));
            let y1 = _mm256_shuffle_epi32::<0x50>(y);
            let y2 = _mm256_blend_epi32::<0b1100_1100>(_mm256_setzero_si256(), y1);
            Ymm(_mm256_xor_si256(_mm256_xor_si256(y, y2), t))
        }
    }
    #[inline(always)]
    fn barrier<const N: usize>(s: &mut [Self; N]) {
        for x in s.iter_mut() {
            // SAFETY: `Ymm` exists only on a CPU with AVX (see above), which the register
            // class needs; the template is empty.
            unsafe { ymm_barrier(&mut x.0) };
        }
    }
}

/// The empty `asm!` of [`Register::barrier`] on a 256-bit register (its register class
/// needs a function compiled with AVX).
#[inline]
#[target_feature(enable = "avx")]
fn ymm_barrier(x: &mut __m256i) {
    // SAFETY: the template is empty: it reads and writes nothing but the register.
    unsafe {
        core::arch::asm!(
            "/* {0} */",
            inout(ymm_reg) * x,
            options(nomem, nostack, preserves_flags)
        )
    };
}

/// Registers of two blocks per group of the fixed-key and TCCR kernels: eight of state (and
/// eight of `π(x)`, some of them spilled with 16 AVX registers; the round keys come from
/// memory as `VAESENC`'s second operand). Measured against six and four on Zen 4 (AVX-512
/// machine, the `vaes256` backend forced; `aes_floor`): 5.45 ns per `ideal` AND gate's
/// hashes against 6.17 and 6.52.
const YMM_WIDTH: usize = 8;
/// Key registers interleaved by the per-key kernels.
const YMM_KEYS: usize = 4;

/// The `vaes256` backend's kernels: `#[target_feature]` entry points instantiating the
/// generic kernels with [`Ymm`].
pub(super) mod vaes256 {
    use super::*;

    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    pub(in crate::aes) fn encrypt_blocks(t: Vaes256, rk: &RoundKeys, blocks: &mut [Block]) {
        register::encrypt_blocks::<Ymm, YMM_WIDTH>(t, rk, blocks);
    }

    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    pub(in crate::aes) fn tccr(
        t: Vaes256,
        rk: &RoundKeys,
        xs: &[Block],
        tweaks: &[u64],
        out: &mut [Block],
    ) {
        register::tccr::<Ymm, YMM_WIDTH>(t, rk, xs, tweaks, out);
    }

    #[target_feature(enable = "aes,sse2,ssse3,sse4.1,avx,avx2,vaes")]
    pub(in crate::aes) fn under_keys<const P: usize>(
        t: Vaes256,
        keys: &[Block],
        blocks: &mut [Block],
    ) {
        register::under_keys::<Ymm, YMM_KEYS, P>(t, keys, blocks);
    }
}

/// Blocks (fixed key) or keys (per key) of the `aes-ni` backend in flight: eight, which
/// pipeline `AESENC`'s latency; with the round barrier the TCCR hash took 10.2 ns per
/// `ideal` AND gate on Zen 4 where the earlier AES-NI kernels, written out without it, took
/// 13.2 (`aes_floor`, 2026-11-28; the per-key path 21.7 against 21.5, the same).
const XMM_WIDTH: usize = 8;

/// The `aes-ni` backend's kernels: `#[target_feature]` entry points instantiating the
/// generic kernels with [`Xmm`].
pub(super) mod aes_ni {
    use super::*;

    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(in crate::aes) fn encrypt_blocks(t: AesNi, rk: &RoundKeys, blocks: &mut [Block]) {
        register::encrypt_blocks::<Xmm, XMM_WIDTH>(t, rk, blocks);
    }

    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(in crate::aes) fn tccr(
        t: AesNi,
        rk: &RoundKeys,
        xs: &[Block],
        tweaks: &[u64],
        out: &mut [Block],
    ) {
        register::tccr::<Xmm, XMM_WIDTH>(t, rk, xs, tweaks, out);
    }

    #[target_feature(enable = "aes,sse2,ssse3")]
    pub(in crate::aes) fn under_keys<const P: usize>(
        t: AesNi,
        keys: &[Block],
        blocks: &mut [Block],
    ) {
        register::under_keys::<Xmm, XMM_WIDTH, P>(t, keys, blocks);
    }
}
