//! AES kernels written once for every register width: a [`Register`] holds
//! [`Register::BLOCKS`] AES blocks (one in a 128-bit register of AES-NI or of the ARMv8
//! Crypto Extensions, two in a 256-bit register of VAES without AVX-512), and the fixed-key,
//! TCCR and per-key kernels here, like the garbling schemes' fused gate kernels in
//! `transputation-garble`, are generic over it. (The 512-bit VAES kernels of
//! `super::x86::vaes` are written out for their width: they use AVX-512's masked and
//! three-input operations, which no narrower register has.)
//!
//! # One round structure for two instruction sets
//!
//! x86's `AESENC` adds its round key last (`MixColumns(ShiftRows(SubBytes(s))) ⊕ k`), ARMv8's
//! `AESE` first (`ShiftRows(SubBytes(s ⊕ k))`, with `AESMC` for `MixColumns`). Both apply the
//! eleven round keys in the same order, so a register offers AES-128 as four steps, each taking
//! the next round key: [`Register::start`] (round key 0), [`Register::round`] (1 to 8),
//! [`Register::round9`] and [`Register::finish`] (10). On x86 they are `⊕ k0`, `AESENC`,
//! `AESENC` and `AESENCLAST`; on ARMv8 `AESE`+`AESMC`, `AESE`+`AESMC`, `AESE` and `⊕ k10`.
//! Either way `finish` ends with `⊕ k`, into which the TCCR hash folds its final `⊕ π(x)`.
//!
//! # Why the generic code is sound
//!
//! The instructions a register's methods execute exist only on some CPUs. A value of a
//! register type can only be made by its constructors, which take the register's token
//! ([`Register::Token`], from the backend's run-time detection): holding a register is the
//! proof that the CPU has its instructions, so its methods are safe. The kernels are
//! `#[inline(always)]` and reach the CPU through a `#[target_feature]` entry point per
//! backend, into which everything down to the intrinsics is inlined.

use crate::block::Block;

/// The expanded key: round keys 0 to 10, as blocks.
pub type RoundKeys = [Block; 11];

/// The round constants of rounds 1 to 10.
pub const RCON: [i32; 10] = [0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80, 0x1b, 0x36];

/// A SIMD register of [`Register::BLOCKS`] AES blocks and the operations the kernels apply to
/// it lane by lane (a lane is one 128-bit block).
pub trait Register: Copy {
    /// Proof that this CPU has the register's instructions: every constructor takes one.
    type Token: Copy;
    /// One block in a register of its own, with the operations single labels need.
    type Lane: Label;
    /// Blocks per register.
    const BLOCKS: usize;

    /// The token of [`Register::Lane`]'s instructions, which a CPU with this register's has.
    fn lane_token(t: Self::Token) -> <Self::Lane as Register>::Token;
    /// All zero.
    fn zero(t: Self::Token) -> Self;
    /// The first `min(b.len(), BLOCKS)` blocks of `b`, zero in the other lanes.
    fn load_part(t: Self::Token, b: &[Block]) -> Self;
    /// Stores the first `min(b.len(), BLOCKS)` lanes to `b`.
    fn store_part(self, b: &mut [Block]);
    /// The register of `lanes[0..BLOCKS]`, lane `i` from `lanes[i]`.
    fn from_lanes(lanes: &[Self::Lane]) -> Self;
    /// Lane `i` (`i < BLOCKS`).
    fn lane(self, i: usize) -> Self::Lane;
    /// `x` in every lane.
    fn splat(x: Self::Lane) -> Self;
    /// The TCCR tweak blocks of the first `min(ts.len(), BLOCKS)` tweaks, zero for the rest:
    /// each `t` the 128-bit big-endian integer (`super::tccr_tweak`).
    fn tweaks(t: Self::Token, ts: &[u64]) -> Self;
    /// Lanewise XOR.
    fn xor(self, other: Self) -> Self;
    /// The first step of AES-128, with round key 0.
    fn start(self, k: Self) -> Self;
    /// A middle round, with round key 1 to 8.
    fn round(self, k: Self) -> Self;
    /// The step with round key 9.
    fn round9(self, k: Self) -> Self;
    /// The last step, with round key 10: ends with `⊕ k`.
    fn finish(self, k: Self) -> Self;
    /// The next round key after the key in each lane, round constant `rcon` (the key schedule
    /// of the per-key path).
    fn next_key(self, rcon: i32) -> Self;
    /// Keeps the emitted instructions round by round (an empty `asm!` taking and giving back
    /// each register; see `super::x86::vaes`'s `round_barrier` for why). Only the speed
    /// depends on it.
    fn barrier<const N: usize>(s: &mut [Self; N]);
}

/// A register of one block: a wire label and the operations on labels the gate kernels need.
pub trait Label: Register<Lane = Self> {
    /// Loads a block.
    fn load(t: Self::Token, b: &Block) -> Self;
    /// Stores the block.
    fn store(self, b: &mut Block);
    /// The block of 64-bit halves `lo` (bytes 0 to 7, little-endian) and `hi` (bytes 8 to
    /// 15), made in registers (a block written as two halves and read back whole would stall
    /// on store forwarding).
    fn from_halves(t: Self::Token, lo: u64, hi: u64) -> Self;
    /// Loads 16 bytes.
    fn load_bytes(t: Self::Token, b: &[u8; 16]) -> Self;
    /// Stores the 16 bytes.
    fn store_bytes(self, b: &mut [u8; 16]);
    /// Bitwise AND.
    fn and(self, other: Self) -> Self;
    /// `!self & other`.
    fn and_not(self, other: Self) -> Self;
    /// All ones if bit 0 is set, else zero: the point-and-permute select mask of a label.
    fn lsb_mask(self) -> Self;
    /// Bit 0.
    fn lsb(self) -> bool;
    /// The block with bit 0 set to `bit`.
    fn with_lsb(self, bit: bool) -> Self;
    /// `b` if `cond`, else `a`.
    fn select(cond: bool, a: Self, b: Self) -> Self;
}

/// Each round key in every lane of a register.
#[inline(always)]
pub fn broadcast_keys<V: Register>(t: V::Token, rk: &RoundKeys) -> [V; 11] {
    let lt = V::lane_token(t);
    let mut k = [V::zero(t); 11];
    for (k, b) in k.iter_mut().zip(rk) {
        *k = V::splat(V::Lane::load(lt, b));
    }
    k
}

/// Encrypts `N` registers together under the broadcast round keys `rk`; the last step's key
/// is `rk[10] ⊕ last[i]` for register `i`, so that the result is `AES(s) ⊕ last`.
#[inline(always)]
fn encrypt_xor<V: Register, const N: usize>(rk: &[V; 11], s: &mut [V; N], last: Option<&[V; N]>) {
    for x in s.iter_mut() {
        *x = x.start(rk[0]);
    }
    for &k in &rk[1..9] {
        for x in s.iter_mut() {
            *x = x.round(k);
        }
        V::barrier(s);
    }
    for x in s.iter_mut() {
        *x = x.round9(rk[9]);
    }
    V::barrier(s);
    for (i, x) in s.iter_mut().enumerate() {
        let k = match last {
            Some(last) => rk[10].xor(last[i]),
            None => rk[10],
        };
        *x = x.finish(k);
    }
}

/// Encrypts `N` registers together under the broadcast round keys.
#[inline(always)]
pub fn encrypt<V: Register, const N: usize>(rk: &[V; 11], s: &mut [V; N]) {
    encrypt_xor(rk, s, None);
}

/// The TCCR hash `π(π(x) ⊕ t) ⊕ π(x)` of `N` registers with tweak blocks `t`: `u = π(x)`
/// stays in registers between the two passes, and the final `⊕ u` is folded into the last
/// round key.
#[inline(always)]
pub fn tccr_core<V: Register, const N: usize>(rk: &[V; 11], x: &mut [V; N], t: &[V; N]) {
    let mut u = *x;
    encrypt(rk, &mut u);
    for ((x, &u), &t) in x.iter_mut().zip(&u).zip(t) {
        *x = u.xor(t);
    }
    encrypt_xor(rk, x, Some(&u));
}

/// Encrypts `P` registers under each of the `G` registers of keys `k` (lane `i` of `s[g][p]`
/// under lane `i` of `k[g]`), the `G` key schedules interleaved, each round key used as soon
/// as it is made and never stored.
#[inline(always)]
pub fn keys_core<V: Register, const G: usize, const P: usize>(k: &[V; G], s: &mut [[V; P]; G]) {
    let mut k = *k;
    for (sg, &kg) in s.iter_mut().zip(&k) {
        for x in sg.iter_mut() {
            *x = x.start(kg);
        }
    }
    for &rcon in &RCON[..8] {
        for (sg, kg) in s.iter_mut().zip(k.iter_mut()) {
            *kg = kg.next_key(rcon);
            for x in sg.iter_mut() {
                *x = x.round(*kg);
            }
        }
    }
    for (sg, kg) in s.iter_mut().zip(k.iter_mut()) {
        *kg = kg.next_key(RCON[8]);
        for x in sg.iter_mut() {
            *x = x.round9(*kg);
        }
    }
    for (sg, kg) in s.iter_mut().zip(k.iter_mut()) {
        *kg = kg.next_key(RCON[9]);
        for x in sg.iter_mut() {
            *x = x.finish(*kg);
        }
    }
}

/// The blocks of `b` from `from` on (none if `from` is past the end).
#[inline(always)]
pub(crate) fn from(b: &[Block], from: usize) -> &[Block] {
    &b[from.min(b.len())..]
}

/// As [`from`], mutable.
#[inline(always)]
pub(crate) fn from_mut(b: &mut [Block], from: usize) -> &mut [Block] {
    let n = b.len();
    &mut b[from.min(n)..]
}

/// Encrypts the at most `N * BLOCKS` blocks of `blocks`, `N` registers together.
#[inline(always)]
fn blocks_part<V: Register, const N: usize>(t: V::Token, rk: &[V; 11], blocks: &mut [Block]) {
    let mut s = [V::zero(t); N];
    for (i, x) in s.iter_mut().enumerate() {
        *x = V::load_part(t, from(blocks, V::BLOCKS * i));
    }
    encrypt(rk, &mut s);
    for (i, x) in s.iter().enumerate() {
        x.store_part(from_mut(blocks, V::BLOCKS * i));
    }
}

/// Fixed-key encryption of every block under `rk`, `W` registers at a time; the rest 1, 2 or
/// 4 registers at a time (other widths than the main loop's, so that each instance of the
/// core has one caller and is inlined).
#[inline(always)]
pub fn encrypt_blocks<V: Register, const W: usize>(
    t: V::Token,
    rk: &RoundKeys,
    blocks: &mut [Block],
) {
    let k = broadcast_keys::<V>(t, rk);
    let full = blocks.len() / (W * V::BLOCKS) * (W * V::BLOCKS);
    let (main, rest) = blocks.split_at_mut(full);
    for c in main.chunks_mut(W * V::BLOCKS) {
        blocks_part::<V, W>(t, &k, c);
    }
    for c in rest.chunks_mut(4 * V::BLOCKS) {
        match c.len().div_ceil(V::BLOCKS) {
            1 => blocks_part::<V, 1>(t, &k, c),
            2 => blocks_part::<V, 2>(t, &k, c),
            _ => blocks_part::<V, 4>(t, &k, c),
        }
    }
}

/// The fused TCCR of the at most `N * BLOCKS` blocks of `xs`, `N` registers together.
#[inline(always)]
fn tccr_part<V: Register, const N: usize>(
    t: V::Token,
    rk: &[V; 11],
    xs: &[Block],
    tweaks: &[u64],
    out: &mut [Block],
) {
    let (mut s, mut tw) = ([V::zero(t); N], [V::zero(t); N]);
    for (i, (s, tw)) in s.iter_mut().zip(tw.iter_mut()).enumerate() {
        *s = V::load_part(t, from(xs, V::BLOCKS * i));
        *tw = V::tweaks(t, &tweaks[(V::BLOCKS * i).min(tweaks.len())..]);
    }
    tccr_core(rk, &mut s, &tw);
    for (i, x) in s.iter().enumerate() {
        x.store_part(from_mut(out, V::BLOCKS * i));
    }
}

/// The TCCR hash of every `(xs[i], tweaks[i])` into `out[i]` (equal lengths), `W` registers
/// at a time, the rest as in [`encrypt_blocks`].
#[inline(always)]
pub fn tccr<V: Register, const W: usize>(
    t: V::Token,
    rk: &RoundKeys,
    xs: &[Block],
    tweaks: &[u64],
    out: &mut [Block],
) {
    let k = broadcast_keys::<V>(t, rk);
    let n = xs.len().min(tweaks.len()).min(out.len());
    let full = n / (W * V::BLOCKS) * (W * V::BLOCKS);
    let step = W * V::BLOCKS;
    for at in (0..full).step_by(step) {
        let r = at..at + step;
        tccr_part::<V, W>(t, &k, &xs[r.clone()], &tweaks[r.clone()], &mut out[r]);
    }
    let step = 4 * V::BLOCKS;
    for at in (full..n).step_by(step) {
        let r = at..(at + step).min(n);
        let (x, tw, o) = (&xs[r.clone()], &tweaks[r.clone()], &mut out[r]);
        match x.len().div_ceil(V::BLOCKS) {
            1 => tccr_part::<V, 1>(t, &k, x, tw, o),
            2 => tccr_part::<V, 2>(t, &k, x, tw, o),
            _ => tccr_part::<V, 4>(t, &k, x, tw, o),
        }
    }
}

/// Per-key encryption of the at most `G * BLOCKS` keys of `keys` with `P` blocks each
/// (`blocks[P * i + p]` under `keys[i]`), `G` key registers together: register `g` holds keys
/// `g * BLOCKS ..`, and its `p`-th block register their `p`-th blocks.
#[inline(always)]
fn keys_part<V: Register, const G: usize, const P: usize>(
    t: V::Token,
    keys: &[Block],
    blocks: &mut [Block],
) {
    let lt = V::lane_token(t);
    let zero = V::Lane::zero(lt);
    let mut k = [V::zero(t); G];
    let mut s = [[V::zero(t); P]; G];
    for (g, (kg, sg)) in k.iter_mut().zip(s.iter_mut()).enumerate() {
        *kg = V::load_part(t, from(keys, V::BLOCKS * g));
        for (p, x) in sg.iter_mut().enumerate() {
            let mut lanes = [zero; 4];
            for (i, l) in lanes.iter_mut().take(V::BLOCKS).enumerate() {
                if let Some(b) = blocks.get(P * (V::BLOCKS * g + i) + p) {
                    *l = V::Lane::load(lt, b);
                }
            }
            *x = V::from_lanes(&lanes);
        }
    }
    keys_core(&k, &mut s);
    for (g, sg) in s.iter().enumerate() {
        for (p, x) in sg.iter().enumerate() {
            for i in 0..V::BLOCKS {
                if let Some(b) = blocks.get_mut(P * (V::BLOCKS * g + i) + p) {
                    x.lane(i).store(b);
                }
            }
        }
    }
}

/// Per-key encryption with `P` blocks per key (`blocks.len() == P * keys.len()`), `G` key
/// registers at a time, the rest 1, 2 or 4 registers at a time.
#[inline(always)]
pub fn under_keys<V: Register, const G: usize, const P: usize>(
    t: V::Token,
    keys: &[Block],
    blocks: &mut [Block],
) {
    debug_assert!(V::BLOCKS <= 4, "from_lanes reads at most four lanes here");
    let step = G * V::BLOCKS;
    let full = keys.len() / step * step;
    for at in (0..full).step_by(step) {
        keys_part::<V, G, P>(
            t,
            &keys[at..at + step],
            &mut blocks[P * at..P * (at + step)],
        );
    }
    let step = 4 * V::BLOCKS;
    for at in (full..keys.len()).step_by(step) {
        let end = (at + step).min(keys.len());
        let (k, b) = (&keys[at..end], &mut blocks[P * at..P * end]);
        match k.len().div_ceil(V::BLOCKS) {
            1 => keys_part::<V, 1, P>(t, k, b),
            2 => keys_part::<V, 2, P>(t, k, b),
            _ => keys_part::<V, 4, P>(t, k, b),
        }
    }
}
