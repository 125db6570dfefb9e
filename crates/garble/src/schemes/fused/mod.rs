//! The garbling schemes' fused gate kernels: each computes a batch of independent gates' AES
//! work and their table rows in registers, reading labels and writing tables and labels in
//! place, instead of staging the hashes' inputs and outputs in memory (see the `x86` module
//! for what that saves).
//!
//! The half-gates kernels, for both the TCCR (`ideal`) and the label-keyed (`circular`)
//! hash, exist for every backend but the portable one: written out under TCCR for
//! AVX-512's 512-bit VAES registers (`x86`), under both hashes for 256-bit VAES ones
//! (`x86`'s `ymm`, which the `vaes` backend takes for the label-keyed hash), and once over
//! `transputation_core::aes::register::Register` (`generic`), which `aes-ni` (`x86`'s
//! `narrow` entry points) and `armv8` (`arm`) instantiate, and `vaes256` for the staged
//! path's TCCR hashes. `prf`'s kernels exist for the same backends: its garbling
//! (`generic_prf` on every register width, and for 512-bit VAES in `x86`) and its
//! evaluation (`generic_prf`, the VAES backends on 256-bit registers).
//!
//! Every function returns whether it ran; the schemes keep the staged path, which computes
//! the same bytes, for the other backends, and the tests check the two against each other.
//! These kernels are scheme code (they know the table layouts of docs/garbling.md §2.8 and
//! §3.5); the AES building blocks they use are `transputation_core::aes`'s.

use transputation_core::aes::register::RoundKeys;
use transputation_core::aes::{Backend, FixedKeyAes};
use transputation_core::Block;

#[cfg(target_arch = "aarch64")]
mod arm;
#[cfg(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64"))]
mod generic;
#[cfg(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64"))]
mod generic_prf;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod x86;

/// The four TCCR hashes of each half-gates AND gate: for gate `i` with 0-labels
/// `[a0, b0] = inputs[i]`, AND index `n = and_index[i]` and tweak base `B = tweak_base`,
/// `out[i]` is `[H(a0, j), H(a0 ⊕ Δ, j), H(b0, j'), H(b0 ⊕ Δ, j')]` with
/// `H` = [`FixedKeyAes::tccr`] under `aes`, `j = 2(B + n) + 1` and `j' = 2(B + n) + 2`
/// (in wrapping 64-bit arithmetic; the callers keep it from wrapping).
///
/// Only the portable backend lacks this fused path (inputs and tweaks made in registers);
/// it returns whether it wrote `out`, and the caller stages the inputs for
/// [`FixedKeyAes::tccr`] otherwise.
///
/// # Panics
/// If the three slices differ in length.
pub(crate) fn tccr_and_gates(
    aes: &FixedKeyAes,
    delta: Block,
    inputs: &[[Block; 2]],
    and_index: &[u32],
    tweak_base: u64,
    out: &mut [[Block; 4]],
) -> bool {
    assert!(
        inputs.len() == and_index.len() && inputs.len() == out.len(),
        "one AND index and one output per gate"
    );
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some((t, rk)) = aes.x86_round_keys() {
        x86::tccr_and_gates(t, rk, delta, inputs, and_index, tweak_base, out);
        return true;
    }
    #[cfg(target_arch = "aarch64")]
    if let Some((t, rk)) = aes.armv8_round_keys() {
        arm::tccr_and_gates(t, rk, delta, (inputs, and_index, tweak_base), out);
        return true;
    }
    let _ = (aes, delta, tweak_base);
    false
}

/// The evaluator's two TCCR hashes of each half-gates AND gate: for labels
/// `[a, b] = inputs[i]`, AND index `n = and_index[i]` and tweak base `B = tweak_base`,
/// `out[i]` is `[H(a, 2(B + n) + 1), H(b, 2(B + n) + 2)]` with `H` = [`FixedKeyAes::tccr`]
/// under `aes`.
///
/// Only the portable backend lacks this fused path (tweaks made in registers); it returns
/// whether it wrote `out`, and the caller stages the tweaks for [`FixedKeyAes::tccr`]
/// otherwise.
///
/// # Panics
/// If the three slices differ in length.
pub(crate) fn tccr_eval_gates(
    aes: &FixedKeyAes,
    inputs: &[[Block; 2]],
    and_index: &[u32],
    tweak_base: u64,
    out: &mut [[Block; 2]],
) -> bool {
    assert!(
        inputs.len() == and_index.len() && inputs.len() == out.len(),
        "one AND index and one output per gate"
    );
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some((t, rk)) = aes.x86_round_keys() {
        x86::tccr_eval_gates(t, rk, inputs, and_index, tweak_base, out);
        return true;
    }
    #[cfg(target_arch = "aarch64")]
    if let Some((t, rk)) = aes.armv8_round_keys() {
        arm::tccr_eval_gates(t, rk, (inputs, and_index, tweak_base), out);
        return true;
    }
    let _ = (aes, tweak_base);
    false
}

/// The half-gates garbler's AND gates `ands = (slots, index, first)` (independent gates,
/// e.g. one wave's crypto gates: their slots packed as `a | b << 21 | out << 42`
/// (`waves::pack_slots`), their AND indices, and the index of the window's first AND gate)
/// under `hash` (`FusedHash`) and tweak base `tweak_base`, fused: for each gate its input
/// 0-labels from `zero`, its four hashes (as [`tccr_and_gates`] under TCCR), its table
/// `TG ‖ TE` written to `window[32 · (n − first)..][..32]` and its output 0-label to
/// `zero[out]`
/// (`half_gates::garble_and`). Every backend but the portable one has it; returns whether it
/// ran.
///
/// # Panics
/// If the slices differ in length or a slot or table is out of range.
pub(crate) fn garble_and_gates(
    hash: FusedHash<'_>,
    delta: Block,
    tweak_base: u64,
    zero: &mut [Block],
    ands: (&[u64], &[u32], u32),
    window: &mut [u8],
) -> bool {
    assert_eq!(ands.0.len(), ands.1.len(), "one AND index per gate");
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some((t, rk)) = hash.x86() {
        x86::garble_and_gates(t, rk, delta, tweak_base, zero, ands, window);
        return true;
    }
    #[cfg(target_arch = "aarch64")]
    if let Some((t, rk)) = hash.armv8() {
        arm::garble_and_gates(t, rk, (delta, tweak_base), zero, ands, window);
        return true;
    }
    let _ = (hash, delta, tweak_base, zero, window);
    false
}

/// The half-gates evaluator's AND gates `ands` (independent gates, given as for
/// [`garble_and_gates`]) under tweak base `tweak_base`, fused: for each gate its labels
/// from `labels`, its two hashes under `hash` (as [`tccr_eval_gates`] under TCCR), and its
/// output label from its table at
/// `window[32 · (n − first)..][..32]` written to `labels[out]` (`half_gates::eval_and`).
/// Every backend but the portable one has it; returns whether it ran.
///
/// # Panics
/// As [`garble_and_gates`].
pub(crate) fn eval_and_gates(
    hash: FusedHash<'_>,
    tweak_base: u64,
    labels: &mut [Block],
    ands: (&[u64], &[u32], u32),
    window: &[u8],
) -> bool {
    assert_eq!(ands.0.len(), ands.1.len(), "one AND index per gate");
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some((t, rk)) = hash.x86() {
        x86::eval_and_gates(t, rk, tweak_base, labels, ands, window);
        return true;
    }
    #[cfg(target_arch = "aarch64")]
    if let Some((t, rk)) = hash.armv8() {
        arm::eval_and_gates(t, rk, tweak_base, labels, ands, window);
        return true;
    }
    let _ = (hash, tweak_base, labels, window);
    false
}

/// The hash a half-gates scheme's fused kernels compute: `ideal`'s TCCR under a fixed key,
/// or `circular`'s label-keyed `AES_X(tw(t))` on a backend.
#[derive(Clone, Copy)]
pub enum FusedHash<'a> {
    /// `π(π(X) ⊕ tw(t)) ⊕ π(X)`, `π` this fixed-key AES.
    Tccr(&'a FixedKeyAes),
    /// `AES_X(tw(t))` with `tw(t)` = LE64(t), on this backend.
    LabelKeyed(Backend),
}

impl<'a> FusedHash<'a> {
    /// The x86 backend's token and, for the TCCR hash, its round keys.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    fn x86(self) -> Option<(transputation_core::aes::x86::Token, Option<&'a RoundKeys>)> {
        match self {
            FusedHash::Tccr(aes) => aes.x86_round_keys().map(|(t, rk)| (t, Some(rk))),
            FusedHash::LabelKeyed(b) => {
                transputation_core::aes::x86::Token::of(b).map(|t| (t, None))
            }
        }
    }

    /// The `armv8` token and, for the TCCR hash, its round keys.
    #[cfg(target_arch = "aarch64")]
    fn armv8(self) -> Option<(transputation_core::aes::arm::Armv8, Option<&'a RoundKeys>)> {
        match self {
            FusedHash::Tccr(aes) => aes.armv8_round_keys().map(|(t, rk)| (t, Some(rk))),
            FusedHash::LabelKeyed(Backend::Armv8) => {
                transputation_core::aes::arm::Armv8::detect().map(|t| (t, None))
            }
            FusedHash::LabelKeyed(_) => None,
        }
    }
}

/// One gate of `prf` as its fused garbling kernels take it ([`prf_garble_gates`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PrfOp {
    /// The gate index `g` of the PRF inputs `blk(g, r)`.
    pub g: u64,
    /// Where the gate's table goes in the output.
    pub table: usize,
    /// Where an AND gate's mask nibble goes in the output ([`PrfOp::HIGH`] says which half).
    pub mask: usize,
    /// The slots of the inputs and of the output.
    pub a: u32,
    pub b: u32,
    pub out: u32,
    /// [`PrfOp::PC`] and [`PrfOp::HIGH`] of an AND gate.
    pub bits: u32,
}

impl PrfOp {
    /// `πc`, the permute bit of an AND gate's output.
    pub const PC: u32 = 1;
    /// The mask nibble is the high half of its byte.
    pub const HIGH: u32 = 2;

    /// Whether `flag` is set.
    #[inline(always)]
    pub fn bit(&self, flag: u32) -> bool {
        self.bits & flag != 0
    }
}

/// A table of labels read ahead of the gates that read it: `prf`'s garbler asks, as it
/// makes gate `i`'s op for the kernel, for the slots of gate `i + READ_AHEAD`
/// ([`ReadAhead::slot`]), so that the cache misses of a table larger than the L2 cache
/// overlap the AES work of the gates between. `perf` of the garbling kernel on the MinCut
/// size puts about a quarter of its samples on the label loads. On the Zen 3 VM
/// (2026-12-01, medians of 9 alternating runs of `garble-bench`) it took the MinCut size
/// from 142.4 to 133.5 (`vaes256`) and 205.9 to 198.0 (`aes-ni`) ns per AND gate. On a
/// table that fits the requests only cost (AES-non-expanded.txt 147.7 → 152.5 ns on
/// `vaes256`), so [`ReadAhead::worth_it`] says no for it. Not taken by: the `vaes` backend,
/// whose own kernel with the next group's labels prefetched measured no faster on Zen 4
/// (85.3 against 85.2 ns); the half-gates kernels, where on Zen 3 the next group's labels
/// asked for measured slower (the MinCut size under `ideal` 17.1 → 18.1 ns); `prf`'s
/// evaluator, slower too (68.1 → 78.9).
///
/// The table's address is held as a number: a prefetch reads nothing, and the kernel
/// meanwhile holds the table mutably.
pub(crate) struct ReadAhead<T> {
    table: usize,
    slot: core::marker::PhantomData<T>,
}

impl<T> Clone for ReadAhead<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for ReadAhead<T> {}

/// How many gates ahead [`ReadAhead`] asks for labels: several hundred cycles of AES work,
/// a memory access's latency (24 measured the same as 8).
pub(crate) const READ_AHEAD: usize = 8;

/// Tables at most this large are not read ahead: the L2 cache of the smaller CPUs of this
/// class (Zen 3, 512 KiB per core).
const READ_AHEAD_ABOVE_BYTES: usize = 512 << 10;

impl<T> ReadAhead<T> {
    /// Read-ahead for the table `slots`.
    pub(crate) fn new(slots: &[T]) -> ReadAhead<T> {
        ReadAhead {
            table: slots.as_ptr() as usize,
            slot: core::marker::PhantomData,
        }
    }

    /// Whether `backend`'s kernels gain from reading the table `slots` ahead: those that
    /// measured faster with it, on a table larger than the L2 cache.
    pub(crate) fn worth_it(backend: Backend, slots: &[T]) -> bool {
        cfg!(target_arch = "x86_64")
            && matches!(backend, Backend::AesNi | Backend::Vaes256)
            && core::mem::size_of_val(slots) > READ_AHEAD_ABOVE_BYTES
    }

    /// Asks for the cache lines of slot `slot` (nothing where the architecture has no
    /// prefetch instruction here, or for a slot past the table: the request is a hint).
    #[inline(always)]
    pub(crate) fn slot(self, slot: usize) {
        let size = core::mem::size_of::<T>();
        let at = self.table.wrapping_add(slot.wrapping_mul(size));
        #[cfg(target_arch = "x86_64")]
        x86::prefetch(at, size);
        #[cfg(not(target_arch = "x86_64"))]
        let _ = at;
    }
}

/// `prf`'s AND gates (`and`) or XOR gates `op(0..n)` (independent gates in the order of
/// their slots' assignment, e.g. one wave's), fused on every backend but the portable one:
/// for each, its input labels read from `labels` and ordered by signal bit, its PRF
/// values, its table written to `out[table..]` (an AND gate's `T1 ‖ T2` and mask nibble
/// into `out[mask]`, `prf::garble_and`; an XOR gate's `T`, `prf::garble_xor`) and its
/// output labels `[k^0, k^1]` to `labels[out]`, a group of gates at a time, each group's
/// inputs read before its outputs are written. Returns whether it ran (not for the portable
/// backend, nor for one the CPU lacks, where the staged path's AES call then names it).
///
/// # Panics
/// If a slot or position is out of range.
pub(crate) fn prf_garble_gates(
    backend: Backend,
    and: bool,
    n: usize,
    op: impl Fn(usize) -> PrfOp,
    labels: &mut [[Block; 2]],
    out: &mut [u8],
) -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some(t) = transputation_core::aes::x86::Token::of(backend) {
        x86::prf_garble_gates(t, and, n, op, labels, out);
        return true;
    }
    #[cfg(target_arch = "aarch64")]
    if backend == Backend::Armv8 {
        if let Some(t) = transputation_core::aes::arm::Armv8::detect() {
            arm::prf_garble_gates(t, and, n, op, labels, out);
            return true;
        }
    }
    let _ = (backend, and, n, op, labels, out);
    false
}

/// One crypto gate of `prf` as its fused evaluation kernels take it ([`prf_eval_gates`]).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct PrfEvalOp {
    /// The gate index `g` of the PRF inputs `blk(g, r)`.
    pub g: u64,
    /// Where the gate's table starts in the window: `T1 ‖ T2` of an AND gate, `T` of an XOR
    /// gate.
    pub table: usize,
    /// The slots of the inputs and of the output.
    pub a: u32,
    pub b: u32,
    pub out: u32,
    /// An AND gate's mask nibble `m`, one bit per row.
    pub m: u8,
    /// Whether it is an AND gate (else an XOR gate).
    pub and: bool,
}

/// `prf`'s crypto gates `op(0..n)` evaluated (independent gates, e.g. one wave's, in the
/// order of their slots' assignment), fused on every backend but the portable one: for
/// each, its two input labels read from `labels` as the keys of its two PRF calls, the PRF
/// inputs made from the gate index and the labels' signal bits, and its output label
/// written to `labels[out]` from the PRF values and its table in `window` (`prf::eval_and`,
/// `prf::eval_xor`), a group of gates at a time, each group's inputs read before its
/// outputs are written. Returns whether it ran, as [`prf_garble_gates`].
///
/// # Panics
/// If a slot or position is out of range.
pub(crate) fn prf_eval_gates(
    backend: Backend,
    n: usize,
    op: impl Fn(usize) -> PrfEvalOp,
    labels: &mut [Block],
    window: &[u8],
) -> bool {
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if let Some(t) = transputation_core::aes::x86::Token::of(backend) {
        x86::prf_eval_gates(t, n, op, labels, window);
        return true;
    }
    #[cfg(target_arch = "aarch64")]
    if backend == Backend::Armv8 {
        if let Some(t) = transputation_core::aes::arm::Armv8::detect() {
            arm::prf_eval_gates(t, n, op, labels, window);
            return true;
        }
    }
    let _ = (backend, n, op, labels, window);
    false
}

/// Writes the mask nibble `m` (4 bits) into the high or low half of `out[byte]`, keeping
/// the other half: the two AND gates of a pair may be garbled in either order, and the
/// bytes are not zeroed first. (`prf`'s mask layout, docs/garbling.md §2.8; here because
/// both `prf`'s staged path and its fused kernels write it.)
#[inline(always)]
pub(crate) fn set_nibble(out: &mut [u8], byte: usize, high: bool, m: u8) {
    let b = &mut out[byte];
    *b = if high {
        (*b & 0x0f) | (m << 4)
    } else {
        (*b & 0xf0) | m
    };
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    /// `n` random label pairs and AND indices: every third index near `u32::MAX` (tweaks
    /// above 2^32), every third small (so that the tweak bases below carry their tweaks
    /// across 2^32 and 2^33).
    fn random_gates(rng: &mut ChaCha8Rng, n: usize) -> (Vec<[Block; 2]>, Vec<u32>) {
        let inputs = (0..n)
            .map(|_| [Block(rng.gen()), Block(rng.gen())])
            .collect();
        let idx = (0..n)
            .map(|i| match i % 3 {
                0 => u32::MAX - i as u32,
                1 => i as u32,
                _ => rng.gen(),
            })
            .collect();
        (inputs, idx)
    }

    /// Tweak bases `B` for the tests: 0 (the tables of a garbling on its own), small ones,
    /// ones that carry `2(B + n) + 1` and `2(B + n) + 2` of small AND indices `n` across
    /// 2^32 and 2^33 (the fused kernels make `2n` from 32-bit indices and add `2B` in 64-bit
    /// lanes), and large ones near 2^62 (with indices near 2^32 the tweaks pass 2^63).
    const BASES: [u64; 8] = [
        0,
        1,
        0x7fff_fff0,
        0xffff_fff0,
        0x1_7fff_fff8,
        3 << 32,
        (1 << 62) - 5,
        (1 << 62) + 0x1234_5678_9abc,
    ];

    /// The tweaks `(2(B + n) + 1, 2(B + n) + 2)`, as the staged path computes them.
    fn tweaks(base: u64, n: u32) -> (u64, u64) {
        let j = 2 * (base + u64::from(n)) + 1;
        (j, j + 1)
    }

    /// The AND-gate TCCR of every backend equals the plain TCCR of the staged inputs, at
    /// every tweak base.
    #[test]
    fn tccr_and_gates_matches_tccr_on_every_backend() {
        let mut rng = ChaCha8Rng::seed_from_u64(756);
        let key = Block(rng.gen());
        let pi = FixedKeyAes::with_backend(key, Backend::Portable);
        for n in (0..=40).chain([127, 128, 129, 203]) {
            let delta = Block(rng.gen()).with_lsb(true);
            let (inputs, idx) = random_gates(&mut rng, n);
            for base in BASES {
                let mut expect = Vec::new();
                for (&[a0, b0], &i) in inputs.iter().zip(&idx) {
                    let (j, j2) = tweaks(base, i);
                    let xs = [a0, a0 ^ delta, b0, b0 ^ delta];
                    let mut h = [Block::ZERO; 4];
                    pi.tccr(&xs, &[j, j, j2, j2], &mut h);
                    expect.push(h);
                }
                for backend in Backend::available() {
                    let mut got = vec![[Block::ZERO; 4]; n];
                    let aes = FixedKeyAes::with_backend(key, backend);
                    let fused = tccr_and_gates(&aes, delta, &inputs, &idx, base, &mut got);
                    assert_eq!(fused, backend != Backend::Portable, "{backend:?}");
                    if fused {
                        assert_eq!(got, expect, "{backend:?}, {n} gates, base {base:#x}");
                    }
                }
            }
        }
    }

    /// The evaluator's AND-gate TCCR of every backend equals the plain TCCR, at every tweak
    /// base.
    #[test]
    fn tccr_eval_gates_matches_tccr_on_every_backend() {
        let mut rng = ChaCha8Rng::seed_from_u64(757);
        let key = Block(rng.gen());
        let pi = FixedKeyAes::with_backend(key, Backend::Portable);
        for n in (0..=40).chain([127, 128, 129, 203]) {
            let (inputs, idx) = random_gates(&mut rng, n);
            for base in BASES {
                let mut expect = Vec::new();
                for (&[a, b], &i) in inputs.iter().zip(&idx) {
                    let (j, j2) = tweaks(base, i);
                    let mut h = [Block::ZERO; 2];
                    pi.tccr(&[a, b], &[j, j2], &mut h);
                    expect.push(h);
                }
                for backend in Backend::available() {
                    const GUARD: Block = Block(0x5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a);
                    let mut got = vec![[GUARD; 2]; n + 2];
                    let aes = FixedKeyAes::with_backend(key, backend);
                    let fused = tccr_eval_gates(&aes, &inputs, &idx, base, &mut got[1..n + 1]);
                    assert_eq!(fused, backend != Backend::Portable, "{backend:?}");
                    if !fused {
                        continue;
                    }
                    let what = format!("{backend:?}, {n} gates, base {base:#x}");
                    assert_eq!(got[1..n + 1], expect[..], "{what}");
                    assert_eq!([got[0], got[n + 1]], [[GUARD; 2]; 2], "{what}");
                }
            }
        }
    }
}
