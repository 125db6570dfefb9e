//! AES-128 on 64-bit ARM with the Armv8 Cryptographic Extension (`AESE`, `AESMC`): the
//! `armv8` backend. Its register, [`Neon`], holds one block; the kernels are the generic ones
//! of [`super::register`], instantiated here behind `#[target_feature]` entry points, as the
//! garbling schemes' fused gate kernels are in `transputation-garble`.
//!
//! `AESE` adds its round key before `SubBytes` and `ShiftRows` and `AESMC` mixes the columns
//! (x86's `AESENC` adds its key last), so [`Register::start`] is `AESE`+`AESMC` with round key
//! 0 and [`Register::finish`] the XOR of round key 10 (see [`super::register`]). Its speed has
//! not been measured on ARM hardware here: the tests run it under `qemu-user`.

// `unsafe` is denied in the workspace and allowed only where a module needs it: the AES
// instructions are reached through `core::arch` intrinsics, which a function compiled
// without their target features may only call in an `unsafe` block (see the SAFETY
// comment on the impls).
#![allow(unsafe_code)]

use core::arch::aarch64::*;

use super::register::{self, Label, Register, RoundKeys};
use crate::block::Block;

/// Proof that the CPU has the Armv8 AES instructions (and NEON, which every 64-bit ARM has).
#[derive(Clone, Copy, Debug)]
pub struct Armv8(());

impl Armv8 {
    /// The token if the CPU has the `aes` feature.
    pub fn detect() -> Option<Armv8> {
        std::arch::is_aarch64_feature_detected!("aes").then_some(Armv8(()))
    }

    /// The AES-128 key schedule of `key`.
    pub(super) fn expand(self, key: Block) -> RoundKeys {
        let mut rk = [key; 11];
        let mut k = Neon::load(self, &key);
        for (r, &rcon) in register::RCON.iter().enumerate() {
            k = k.next_key(rcon);
            k.store(&mut rk[r + 1]);
        }
        rk
    }

    /// Encrypts every block in place under the expanded key `rk`.
    pub(super) fn encrypt_blocks(self, rk: &RoundKeys, blocks: &mut [Block]) {
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { kernels::encrypt_blocks(self, rk, blocks) }
    }

    /// Encrypts `blocks[i]` under `keys[i / per_key]`; `blocks.len() == keys.len() * per_key`.
    pub(super) fn encrypt_under_keys(self, keys: &[Block], blocks: &mut [Block], per_key: usize) {
        debug_assert_eq!(blocks.len(), keys.len() * per_key);
        match per_key {
            // SAFETY: the token proves that the CPU has the kernel's target features.
            1 => unsafe { kernels::under_keys::<1>(self, keys, blocks) },
            // SAFETY: as above.
            2 => unsafe { kernels::under_keys::<2>(self, keys, blocks) },
            _ => super::one_key_at_a_time(keys, blocks, per_key, |k, b| {
                self.encrypt_blocks(&self.expand(k), b)
            }),
        }
    }

    /// The TCCR hash of every `(xs[i], tweaks[i])` into `out[i]` (see `FixedKeyAes::tccr`).
    pub(super) fn tccr(self, rk: &RoundKeys, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        // SAFETY: the token proves that the CPU has the kernel's target features.
        unsafe { kernels::tccr(self, rk, xs, tweaks, out) }
    }
}

/// One block in a 128-bit NEON register; exists only on a CPU with the AES instructions (an
/// [`Armv8`] token).
#[derive(Clone, Copy, Debug)]
pub struct Neon(uint8x16_t);

// SAFETY (of every `unsafe` block in the two impls below): a value of `Neon` exists only
// after an `Armv8` token was presented to a constructor, so the CPU has the instructions
// each block executes; the loads and stores go through references to whole blocks or
// 16-byte arrays, and NEON's loads and stores of bytes have no alignment requirement.

// The AES intrinsics are `#[inline(always)]` with the `aes` target feature, which these
// methods (trait methods cannot take target features) lack: rustc warns that such a call is
// not inlined where it stands. It stands there only until the method is inlined into a
// kernel's `#[target_feature(enable = "neon,aes")]` entry point, where the features match
// and LLVM inlines the intrinsic.
#[allow(inline_always_mismatching_target_features)]
impl Register for Neon {
    type Token = Armv8;
    type Lane = Neon;
    const BLOCKS: usize = 1;

    #[inline(always)]
    fn lane_token(t: Armv8) -> Armv8 {
        t
    }
    #[inline(always)]
    fn zero(_: Armv8) -> Self {
        Neon(unsafe { vdupq_n_u8(0) })
    }
    #[inline(always)]
    fn load_part(t: Armv8, b: &[Block]) -> Self {
        match b.first() {
            Some(b) => Neon::load(t, b),
            None => Neon::zero(t),
        }
    }
    #[inline(always)]
    fn store_part(self, b: &mut [Block]) {
        if let Some(b) = b.first_mut() {
            self.store(b);
        }
    }
    #[inline(always)]
    fn from_lanes(lanes: &[Neon]) -> Self {
        lanes[0]
    }
    #[inline(always)]
    fn lane(self, _: usize) -> Neon {
        self
    }
    #[inline(always)]
    fn splat(x: Neon) -> Self {
        x
    }
    #[inline(always)]
    fn tweaks(_: Armv8, ts: &[u64]) -> Self {
        // The 128-bit big-endian `t`: zero in the low eight bytes, `t`'s bytes from the most
        // significant on in the high eight (a little-endian lane 1 of `t.swap_bytes()`).
        let t = ts.first().map_or(0, |t| t.swap_bytes());
        Neon(unsafe { vreinterpretq_u8_u64(vcombine_u64(vdup_n_u64(0), vdup_n_u64(t))) })
    }
    #[inline(always)]
    fn xor(self, o: Self) -> Self {
        Neon(unsafe { veorq_u8(self.0, o.0) })
    }
    #[inline(always)]
    fn start(self, k: Self) -> Self {
        Neon(unsafe { vaesmcq_u8(vaeseq_u8(self.0, k.0)) })
    }
    #[inline(always)]
    fn round(self, k: Self) -> Self {
        self.start(k)
    }
    #[inline(always)]
    fn round9(self, k: Self) -> Self {
        Neon(unsafe { vaeseq_u8(self.0, k.0) })
    }
    #[inline(always)]
    fn finish(self, k: Self) -> Self {
        self.xor(k)
    }
    #[inline(always)]
    fn next_key(self, rcon: i32) -> Self {
        // GLNP15's round with `AESE` on a zero key, `ShiftRows(SubBytes(k))`: one table
        // lookup gathers the bytes of `w3` at rows 1, 2, 3, 0, which `ShiftRows` moved to
        // bytes 9, 6, 3, 12, into every column (`SubWord(RotWord(w3))`), then `Rcon` into
        // byte 0 of each; the prefix XOR of the previous key's words completes the round.
        unsafe {
            let k = self.0;
            let zero = vdupq_n_u8(0);
            let s = vaeseq_u8(k, zero);
            let gather = vreinterpretq_u8_u32(vdupq_n_u32(0x0c03_0609));
            let rc = vreinterpretq_u8_u32(vdupq_n_u32(rcon as u32));
            let t = veorq_u8(vqtbl1q_u8(s, gather), rc);
            // Words shifted up by one, then by two: (w0, w0⊕w1, w0⊕w1⊕w2, w0⊕…⊕w3).
            let y = veorq_u8(k, vextq_u8::<12>(zero, k));
            let y = veorq_u8(y, vextq_u8::<8>(zero, y));
            Neon(veorq_u8(y, t))
        }
    }
    #[inline(always)]
    fn barrier<const N: usize>(s: &mut [Self; N]) {
        for x in s.iter_mut() {
            // SAFETY: the template is empty: it reads and writes nothing but the register.
            unsafe {
                core::arch::asm!(
                    "/* {0:v} */",
                    inout(vreg) x.0,
                    options(nomem, nostack, preserves_flags)
                )
            };
        }
    }
}

impl Label for Neon {
    #[inline(always)]
    fn from_halves(_: Armv8, lo: u64, hi: u64) -> Self {
        Neon(unsafe { vreinterpretq_u8_u64(vcombine_u64(vdup_n_u64(lo), vdup_n_u64(hi))) })
    }
    #[inline(always)]
    fn load(_: Armv8, b: &Block) -> Self {
        Neon(unsafe { vld1q_u8((b as *const Block).cast()) })
    }
    #[inline(always)]
    fn store(self, b: &mut Block) {
        unsafe { vst1q_u8((b as *mut Block).cast(), self.0) }
    }
    #[inline(always)]
    fn load_bytes(_: Armv8, b: &[u8; 16]) -> Self {
        Neon(unsafe { vld1q_u8(b.as_ptr()) })
    }
    #[inline(always)]
    fn store_bytes(self, b: &mut [u8; 16]) {
        unsafe { vst1q_u8(b.as_mut_ptr(), self.0) }
    }
    #[inline(always)]
    fn and(self, o: Self) -> Self {
        Neon(unsafe { vandq_u8(self.0, o.0) })
    }
    #[inline(always)]
    fn and_not(self, o: Self) -> Self {
        // `BIC`: o & !self.
        Neon(unsafe { vbicq_u8(o.0, self.0) })
    }
    #[inline(always)]
    fn lsb_mask(self) -> Self {
        // Bit 0 of each byte to its sign, spread over the byte; byte 0's to every byte.
        unsafe {
            let m = vshrq_n_s8::<7>(vshlq_n_s8::<7>(vreinterpretq_s8_u8(self.0)));
            Neon(vdupq_laneq_u8::<0>(vreinterpretq_u8_s8(m)))
        }
    }
    #[inline(always)]
    fn lsb(self) -> bool {
        unsafe { vgetq_lane_u8::<0>(self.0) & 1 != 0 }
    }
    #[inline(always)]
    fn with_lsb(self, bit: bool) -> Self {
        unsafe {
            let one = vsetq_lane_u8::<0>(1, vdupq_n_u8(0));
            let cleared = vbicq_u8(self.0, one);
            Neon(vorrq_u8(
                cleared,
                vsetq_lane_u8::<0>(u8::from(bit), vdupq_n_u8(0)),
            ))
        }
    }
    #[inline(always)]
    fn select(cond: bool, a: Self, b: Self) -> Self {
        Neon(unsafe { vbslq_u8(vdupq_n_u8(0u8.wrapping_sub(u8::from(cond))), b.0, a.0) })
    }
}

/// Blocks in flight in the fixed-key kernels and keys in the per-key ones: 32 NEON registers
/// hold eight states, eight `π(x)` and the eleven round keys.
const WIDTH: usize = 8;
const KEYS: usize = 8;

/// The `#[target_feature]` entry points of the generic kernels on [`Neon`].
mod kernels {
    use super::*;

    #[target_feature(enable = "neon,aes")]
    pub(super) fn encrypt_blocks(t: Armv8, rk: &RoundKeys, blocks: &mut [Block]) {
        register::encrypt_blocks::<Neon, WIDTH>(t, rk, blocks);
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn tccr(t: Armv8, rk: &RoundKeys, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        register::tccr::<Neon, WIDTH>(t, rk, xs, tweaks, out);
    }

    #[target_feature(enable = "neon,aes")]
    pub(super) fn under_keys<const P: usize>(t: Armv8, keys: &[Block], blocks: &mut [Block]) {
        register::under_keys::<Neon, KEYS, P>(t, keys, blocks);
    }
}
