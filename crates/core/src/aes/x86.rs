//! AES-128 on x86 and x86-64: AES-NI (one block per 128-bit register), VAES with AVX2 (two
//! blocks per 256-bit register) and VAES with AVX-512 (four blocks per 512-bit register).
//!
//! The entry points are methods of three zero-sized tokens, [`AesNi`], [`Vaes256`] and
//! [`Vaes`], that can only be obtained from their `detect` functions, i.e. after
//! `is_x86_feature_detected!` has confirmed every target feature the kernels are compiled
//! with. Holding a token is the proof on which every call into a `#[target_feature]` kernel
//! rests. The AES-NI and 256-bit kernels are the generic ones of `super::register` on the
//! registers of [`registers`]; the 512-bit ones are written out below ([`vaes`]).
//!
//! Fixed-key encryption keeps the round keys in registers and `WIDTH` (8) blocks or 4-block
//! registers in flight, enough to cover the latency of `AESENC` at full throughput.
//!
//! Per-key encryption expands the keys on the fly, each round key used as soon as it is made
//! and never stored, with eight keys or `VAES_KEYS` (8) registers of four keys
//! interleaved so that the latency of one key's schedule is hidden behind the others'. The
//! schedule round is the `AESENCLAST` construction of Gueron–Lindell–Nof–Pinkas ("Fast
//! Garbling of Circuits Under Standard Assumptions", CCS 2015, eprint 2015/751) instead of
//! `AESKEYGENASSIST`: `AESENCLAST` with the round constant as key applies `SubBytes` to every
//! byte, and one byte shuffle (before it for AES-NI, after it for VAES) puts
//! `SubWord(RotWord(w3)) ⊕ Rcon` in every column; a prefix XOR of the previous key's words
//! completes the round. With VAES each instruction does this for four keys.
//!
//! The building blocks the kernels share are public, for fused kernels outside this crate
//! (the garbling schemes' gate kernels in `transputation-garble`, which compute hashes and
//! table rows in registers without a staging buffer): the loads and stores of [`ni`] and
//! [`vaes`], [`vaes::broadcast_keys`], [`vaes::tccr_core`] and [`vaes::keys_core`]. They
//! are safe `#[target_feature]` functions: code compiled with their features calls them
//! directly, and code that is not must hold a token.
//!
//! Other remainders of a batch go 1, 2 or 4 blocks (AES-NI) or registers (VAES) at a time,
//! with per-block loads and stores (AES-NI) or masked ones for a partial register (VAES),
//! never a copy to a buffer (`memcpy` into a buffer read back as vectors costs a
//! store-forwarding stall). Batches of at most `SMALL_BLOCKS` blocks or `SMALL_KEYS` keys
//! run the AES-NI kernels even on the VAES backend: latency, not throughput, bounds them.

// `unsafe` is denied in the workspace and allowed only where a module needs it; of the
// cryptography, only in the AES kernels (this module, and the garbling crate's fused gate
// kernels built on its blocks): the AES instructions are reached through `core::arch`
// intrinsics, and calling a `#[target_feature]` function from code compiled without those
// features, or loading and storing a vector through a raw pointer, are `unsafe` operations.
// Each is a small block whose `// SAFETY:` comment gives its argument: run-time detection
// (a token) for the former, a reference to whole `Block`s for the latter.
#![allow(unsafe_code)]
// The AVX-512 and VAES intrinsics are stable since Rust 1.89 (and safe `#[target_feature]`
// functions since 1.86), later than the workspace's declared `rust-version`; this module needs
// Rust 1.89, which is why the MSRV lint is silenced here and nowhere else.
#![allow(clippy::incompatible_msrv)]

#[cfg(target_arch = "x86")]
use core::arch::x86::*;
#[cfg(target_arch = "x86_64")]
use core::arch::x86_64::*;

use super::one_key_at_a_time;
pub use super::register::RoundKeys;
use super::register::RCON;
use crate::block::Block;

pub mod registers;

/// 4-block registers (VAES) encrypted together by the fixed-key kernels.
const WIDTH: usize = 8;

/// 4-key registers (VAES) expanded together by the per-key kernels.
const VAES_KEYS: usize = 8;

/// Batches of at most this many blocks (fixed key) or keys (per key) take the AES-NI kernels
/// on the VAES backend too: their 128-bit instructions have the lower latency (measured on
/// Zen 4: 4 blocks in 13.5 ns against 17 ns, 1 key in 17 ns against 22 ns).
const SMALL_BLOCKS: usize = 4;
const SMALL_KEYS: usize = 1;

/// Proof that the CPU has AES-NI (with SSE2 and SSSE3).
#[derive(Clone, Copy, Debug)]
pub struct AesNi(());

/// Proof that the CPU has VAES with AVX-512F, AVX-512BW and AVX-512VL (and AES-NI).
#[derive(Clone, Copy, Debug)]
pub struct Vaes(AesNi);

/// Proof that the CPU has VAES on 256-bit registers with AVX2 (and AES-NI and SSE4.1): the
/// `vaes256` backend, for CPUs with VAES but no AVX-512 (AMD Zen 3, Intel from Alder Lake).
#[derive(Clone, Copy, Debug)]
pub struct Vaes256(AesNi);

/// The token of one of the x86 backends, as a fused kernel's caller finds it with the round
/// keys (`FixedKeyAes::x86_round_keys`).
#[derive(Clone, Copy, Debug)]
pub enum Token {
    /// The `aes-ni` backend.
    AesNi(AesNi),
    /// The `vaes256` backend.
    Vaes256(Vaes256),
    /// The `vaes` backend (AVX-512).
    Vaes(Vaes),
}

impl Token {
    /// The token of `backend`, if it is an x86 backend and this CPU has it.
    pub fn of(backend: super::Backend) -> Option<Token> {
        use super::Backend;
        match backend {
            Backend::AesNi => AesNi::detect().map(Token::AesNi),
            Backend::Vaes256 => Vaes256::detect().map(Token::Vaes256),
            Backend::Vaes => Vaes::detect().map(Token::Vaes),
            Backend::Portable | Backend::Armv8 => None,
        }
    }
}

impl AesNi {
    /// The token if the CPU has `aes`, `sse2` and `ssse3` (the one `PSHUFB` of the key
    /// schedule; every CPU with AES-NI has SSSE3).
    pub fn detect() -> Option<AesNi> {
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
        unsafe { registers::aes_ni::encrypt_blocks(self, rk, blocks) }
    }

    /// Encrypts `blocks[i]` under `keys[i / per_key]`; `blocks.len() == keys.len() * per_key`.
    pub(super) fn encrypt_under_keys(self, keys: &[Block], blocks: &mut [Block], per_key: usize) {
        debug_assert_eq!(blocks.len(), keys.len() * per_key);
        match per_key {
            // SAFETY: the token proves that the CPU has the kernel's target features.
            1 => unsafe { registers::aes_ni::under_keys::<1>(self, keys, blocks) },
            // SAFETY: as above.
            2 => unsafe { registers::aes_ni::under_keys::<2>(self, keys, blocks) },
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
        unsafe { registers::aes_ni::tccr(self, rk, xs, tweaks, out) }
    }
}

impl Vaes {
    /// The token if the CPU has `vaes`, `avx512f` and `avx512bw` (the one `VPSHUFB` of the
    /// key schedule; every CPU with 512-bit VAES has it) as well as AES-NI, and `avx`,
    /// `avx2` and `sse4.1`, which the garbling schemes' fused kernels are compiled with too
    /// (every CPU with AVX-512 has them; checked all the same, as the token is the proof).
    pub fn detect() -> Option<Vaes> {
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
}

impl Vaes {
    /// The `vaes256` token, which this one implies (its detection checks every feature of
    /// the 256-bit kernels): for kernels that exist only on 256-bit registers.
    pub fn narrow(self) -> Vaes256 {
        Vaes256(self.0)
    }
}

impl Vaes256 {
    /// The token if the CPU has `vaes`, `avx` and `avx2` (and `sse4.1`) as well as AES-NI.
    pub fn detect() -> Option<Vaes256> {
        let ni = AesNi::detect()?;
        (is_x86_feature_detected!("vaes")
            && is_x86_feature_detected!("avx")
            && is_x86_feature_detected!("avx2")
            && is_x86_feature_detected!("sse4.1"))
        .then_some(Vaes256(ni))
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
        unsafe { registers::vaes256::encrypt_blocks(self, rk, blocks) }
    }

    /// Encrypts `blocks[i]` under `keys[i / per_key]`; `blocks.len() == keys.len() * per_key`.
    pub(super) fn encrypt_under_keys(self, keys: &[Block], blocks: &mut [Block], per_key: usize) {
        debug_assert_eq!(blocks.len(), keys.len() * per_key);
        match per_key {
            _ if keys.len() <= SMALL_KEYS => self.0.encrypt_under_keys(keys, blocks, per_key),
            // SAFETY: the token proves that the CPU has the kernel's target features.
            1 => unsafe { registers::vaes256::under_keys::<1>(self, keys, blocks) },
            // SAFETY: as above.
            2 => unsafe { registers::vaes256::under_keys::<2>(self, keys, blocks) },
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
        unsafe { registers::vaes256::tccr(self, rk, xs, tweaks, out) }
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

/// AES-NI building blocks: one block per `__m128i` (the AES-NI backend's kernels are the
/// generic ones on [`registers::Xmm`]).
pub mod ni {
    use super::*;

    /// Loads a block.
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`AesNi`] token (or [`Vaes`], which implies it).
    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn load(b: &Block) -> __m128i {
        // SAFETY: `b` points to 16 readable bytes (`Block` is a transparent `u128`), and
        // `_mm_loadu_si128` has no alignment requirement.
        unsafe { _mm_loadu_si128((b as *const Block).cast()) }
    }

    /// Stores a block.
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`AesNi`] token (or [`Vaes`], which implies it).
    #[inline]
    #[target_feature(enable = "sse2")]
    pub fn store(b: &mut Block, v: __m128i) {
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

    /// Loads `N` blocks (for the interleaved schedule's test). (A loop rather than
    /// `array::map`, whose closure calls would not be inlined: `map` itself lacks the target
    /// features.)
    #[cfg(test)]
    #[inline]
    #[target_feature(enable = "sse2")]
    pub(super) fn load_n<const N: usize>(b: &[Block; N]) -> [__m128i; N] {
        let mut x = [_mm_setzero_si128(); N];
        for (x, b) in x.iter_mut().zip(b) {
            *x = load(b);
        }
        x
    }
}

/// VAES kernels: four blocks per `__m512i`.
pub mod vaes {
    use super::*;
    use crate::aes::register::{from, from_mut};

    /// Loads four blocks.
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`Vaes`] token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn load4(b: &[Block; 4]) -> __m512i {
        // SAFETY: `b` points to 64 readable bytes (four transparent `u128`s), and
        // `_mm512_loadu_si512` has no alignment requirement.
        unsafe { _mm512_loadu_si512(b.as_ptr().cast()) }
    }

    /// Stores four blocks.
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`Vaes`] token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn store4(b: &mut [Block; 4], v: __m512i) {
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
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`Vaes`] token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn load_part(b: &[Block]) -> __m512i {
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
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`Vaes`] token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn store_part(b: &mut [Block], v: __m512i) {
        if let Some(b4) = b.first_chunk_mut() {
            return store4(b4, v);
        }
        // SAFETY: the mask enables only the 64-bit lanes of the first `b.len() < 4` blocks,
        // which lie in `b`; a masked store leaves disabled lanes untouched, and `storeu` has
        // no alignment requirement.
        unsafe { _mm512_mask_storeu_epi64(b.as_mut_ptr().cast(), lanes(b.len()), v) }
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
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`Vaes`] token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn broadcast_keys(rk: &RoundKeys) -> [__m512i; 11] {
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
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`Vaes`] token.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    pub fn tccr_core<const N: usize, const SITE: u8>(
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

    /// The `VPSHUFB` control reversing the bytes of each 64-bit lane.
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`Vaes`] token.
    #[inline]
    #[target_feature(enable = "avx512f")]
    pub fn byte_reverse_64() -> __m512i {
        _mm512_set4_epi64(
            0x0809_0a0b_0c0d_0e0f,
            0x0001_0203_0405_0607,
            0x0809_0a0b_0c0d_0e0f,
            0x0001_0203_0405_0607,
        )
    }

    /// Encrypts `P` blocks under each of the `4 * G` keys in `k`, four keys per register and
    /// `G` registers interleaved, each round key used as soon as it is computed. `out[g]`
    /// holds the blocks of the keys in `k[g]`, lane by lane: with `P == 2`, a key's first
    /// block in its lane of `out[g][0]` and its second in the same lane of `out[g][1]`, so
    /// that both registers use `k[g]` as it is (the per-key path regroups its blocks so,
    /// with `group`). `SITE` gives each caller its own instance, which it then inlines (as
    /// in [`tccr_core`]).
    ///
    /// # Safety
    /// Only for a CPU with the target features it is compiled with: code compiled without
    /// them calls it only while holding a [`Vaes`] token.
    #[inline]
    #[target_feature(enable = "aes,sse2,ssse3,vaes,avx512f,avx512bw")]
    pub fn keys_core<const G: usize, const P: usize, const SITE: u8>(
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
}
