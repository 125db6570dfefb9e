//! AES-128 for garbling and OT: a fixed key over many blocks per call, and many keys (wire
//! labels) each over one or two blocks.
//!
//! # Backends
//!
//! Chosen at run time ([`Backend::detect`]) and selectable, so that tests run every one the CPU
//! has ([`Backend::available`]):
//! - [`Backend::Portable`]: the RustCrypto `aes` crate on chunks of blocks. It runs on any
//!   CPU (the crate uses AES instructions where it finds them and constant-time software
//!   otherwise), but it expands the keys of the per-key path one at a time.
//! - [`Backend::AesNi`] (x86 and x86-64 with `aes`, `sse2`, `ssse3`): AES-NI on 128-bit
//!   registers, eight blocks in flight for a fixed key, eight keys in flight for the per-key
//!   path.
//! - [`Backend::Vaes`] (x86 and x86-64 with `vaes`, `avx512f`, `avx512bw`, `avx512vl` and
//!   AES-NI): `VAESENC` on 512-bit registers of four blocks, eight registers (32 blocks) in
//!   flight for a fixed key, eight registers of four keys (32 keys) in flight for the
//!   per-key path.
//!   Calls of at most four blocks, or one key, take the AES-NI kernels, which have the lower
//!   latency.
//! - [`Backend::Vaes256`] (x86 and x86-64 with `vaes`, `avx2` and AES-NI, no AVX-512: AMD
//!   Zen 3, Intel from Alder Lake): `VAESENC` on 256-bit registers of two blocks, six
//!   registers in flight for a fixed key, four registers of two keys for the per-key path.
//! - [`Backend::Armv8`] (64-bit ARM with the `aes` feature): `AESE`/`AESMC` on 128-bit NEON
//!   registers, eight blocks or keys in flight. Tested under `qemu-user`; its speed has not
//!   been measured on ARM hardware.
//!
//! The 512-bit VAES and the AES-NI fixed-key and per-key kernels are written out in the
//! `x86` module; `vaes256` and `armv8` instantiate the kernels of [`register`], written once
//! over the width of a register, with the register types of `x86::registers` and
//! `arm::Neon`. The garbling crate's fused gate kernels build on both. These and the AES
//! kernels are the only `unsafe` code of the garbling and OT crates. Detection uses
//! `is_x86_feature_detected!` and `is_aarch64_feature_detected!` (cached by the standard
//! library). [`Backend::available`] lists the portable backend first, then each backend the
//! CPU has; [`Backend::detect`] returns the last, the fastest (VAES, else VAES on 256 bits,
//! else AES-NI, else Armv8, else portable). Naming a backend the CPU lacks panics
//! ([`Backend::is_supported`] and [`Backend::why_unsupported`] tell beforehand) rather than
//! executing instructions it does not have.
//!
//! # The per-key path
//!
//! The label-keyed schemes (`circular`, `prf`) key AES with wire labels, so every hash costs
//! a key schedule. The x86 backends compute it on the fly, each round key used as soon as it
//! is made and never stored, several independent keys interleaved so that the latency of one
//! schedule's dependency chain is hidden by the others. The schedule round is the
//! `AESENCLAST`-based one of Gueron, Lindell, Nof and Pinkas ("Fast Garbling of Circuits
//! Under Standard Assumptions", CCS 2015, eprint 2015/751, the GLNP15 of the `prf` scheme):
//! with `RotWord(w3)` in all four columns `ShiftRows` is the identity, so `AESENCLAST` with
//! the round constant as key yields `SubWord(RotWord(w3)) ⊕ Rcon` in every column, which
//! XORed into the prefix XOR of the previous key's words is the next round key. With VAES
//! each instruction serves four keys. For two blocks per key the VAES backend regroups the
//! blocks of four keys into a register of first blocks and one of second blocks, so both use
//! the key register as it is (`prf`'s garbler, which encrypts two blocks per key of an AND
//! gate, makes them in that order in its fused kernels, in `transputation-garble`).
//!
//! # The TCCR hash
//!
//! [`FixedKeyAes::tccr`] computes the `ideal` scheme's hash `π(π(X) ⊕ t) ⊕ π(X)` in one
//! pass over its inputs: the x86 kernels keep `π(X)` in registers between the two
//! encryptions (8 + 8 state registers and 11 round keys fit the 32 AVX-512 registers) and
//! fold the final XOR into the last round key, since `AESENCLAST` ends with `⊕ key`.
//!
//! Known answers: FIPS-197 Appendix C.1 for every backend, fixed-key and per-key paths, at
//! lengths that hit every remainder of the wide loops; Appendix A.1 for the key schedules;
//! and every backend equals the portable one on random keys and blocks, and its TCCR the
//! unfused formula.

use crate::block::Block;
use aes::cipher::{Array, BlockCipherEncrypt, KeyInit};

#[cfg(target_arch = "aarch64")]
pub mod arm;
pub mod register;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
pub mod x86;

/// An AES implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The RustCrypto `aes` crate; runs everywhere.
    Portable,
    /// AES-NI, 128-bit registers (x86 and x86-64 with `aes`, `sse2`, `ssse3`).
    AesNi,
    /// VAES on AVX-512 registers of four blocks (x86 and x86-64 with `vaes`, `avx512f`,
    /// `avx512bw`, `avx512vl` and AES-NI).
    Vaes,
    /// VAES on 256-bit registers of two blocks (x86 and x86-64 with `vaes`, `avx2` and
    /// AES-NI, no AVX-512 needed).
    Vaes256,
    /// The Armv8 Cryptographic Extension on 128-bit NEON registers (64-bit ARM with `aes`).
    Armv8,
}

impl Backend {
    /// The fastest backend this CPU supports: the last of [`Backend::available`].
    pub fn detect() -> Backend {
        [
            Backend::Vaes,
            Backend::Vaes256,
            Backend::AesNi,
            Backend::Armv8,
        ]
        .into_iter()
        .find(|b| b.is_supported())
        .unwrap_or(Backend::Portable)
    }

    /// Every backend this CPU supports: [`Backend::Portable`] first, fastest last.
    pub fn available() -> Vec<Backend> {
        Backend::all()
            .into_iter()
            .filter(|b| b.is_supported())
            .collect()
    }

    /// Whether this CPU supports the backend.
    pub fn is_supported(self) -> bool {
        match self {
            Backend::Portable => true,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::AesNi => x86::AesNi::detect().is_some(),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Vaes => x86::Vaes::detect().is_some(),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Vaes256 => x86::Vaes256::detect().is_some(),
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            Backend::AesNi | Backend::Vaes | Backend::Vaes256 => false,
            #[cfg(target_arch = "aarch64")]
            Backend::Armv8 => arm::Armv8::detect().is_some(),
            #[cfg(not(target_arch = "aarch64"))]
            Backend::Armv8 => false,
        }
    }

    /// Every backend there is, supported here or not: [`Backend::available`]'s order.
    pub fn all() -> [Backend; 5] {
        [
            Backend::Portable,
            Backend::AesNi,
            Backend::Vaes256,
            Backend::Vaes,
            Backend::Armv8,
        ]
    }

    /// The backend of a [`Backend::name`].
    pub fn from_name(name: &str) -> Option<Backend> {
        Backend::all().into_iter().find(|b| b.name() == name)
    }

    /// What the backend needs: the architecture it runs on, whether this build is for it,
    /// and the CPU features it needs there.
    fn requirements(self) -> (&'static str, bool, &'static [&'static str]) {
        const X86: &str = "an x86 CPU";
        let is_x86 = cfg!(any(target_arch = "x86", target_arch = "x86_64"));
        match self {
            Backend::Portable => ("any CPU", true, &[]),
            Backend::AesNi => (X86, is_x86, &["aes", "sse2", "ssse3"]),
            Backend::Vaes256 => (
                X86,
                is_x86,
                &["aes", "sse2", "ssse3", "sse4.1", "avx", "avx2", "vaes"],
            ),
            Backend::Vaes => (
                X86,
                is_x86,
                &[
                    "aes", "sse2", "ssse3", "sse4.1", "avx", "avx2", "vaes", "avx512f", "avx512bw",
                    "avx512vl",
                ],
            ),
            Backend::Armv8 => ("a 64-bit ARM CPU", cfg!(target_arch = "aarch64"), &["aes"]),
        }
    }

    /// What this CPU lacks for the backend: the target features it needs and the CPU does
    /// not have, or the architecture it runs on (empty where it is supported).
    pub fn missing_features(self) -> Vec<&'static str> {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        let have = |f: &&str| match *f {
            "aes" => is_x86_feature_detected!("aes"),
            "sse2" => is_x86_feature_detected!("sse2"),
            "ssse3" => is_x86_feature_detected!("ssse3"),
            "sse4.1" => is_x86_feature_detected!("sse4.1"),
            "avx" => is_x86_feature_detected!("avx"),
            "avx2" => is_x86_feature_detected!("avx2"),
            "vaes" => is_x86_feature_detected!("vaes"),
            "avx512f" => is_x86_feature_detected!("avx512f"),
            "avx512bw" => is_x86_feature_detected!("avx512bw"),
            "avx512vl" => is_x86_feature_detected!("avx512vl"),
            _ => false,
        };
        #[cfg(target_arch = "aarch64")]
        let have = |f: &&str| *f == "aes" && std::arch::is_aarch64_feature_detected!("aes");
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64")))]
        let have = |_: &&str| false;
        let (arch, here, needs) = self.requirements();
        if !here {
            return vec![arch];
        }
        needs.iter().filter(|f| !have(f)).copied().collect()
    }

    /// Why this CPU cannot run the backend, in words (`None` where it can): the architecture
    /// it needs, or the target features it lacks.
    pub fn why_unsupported(self) -> Option<String> {
        let (arch, here, _) = self.requirements();
        if !here {
            return Some(format!("it runs only on {arch}"));
        }
        let missing = self.missing_features();
        (!missing.is_empty()).then(|| {
            format!(
                "it needs the CPU feature{} {}, which this CPU lacks",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            )
        })
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
            Backend::AesNi => "aes-ni",
            Backend::Vaes => "vaes",
            Backend::Vaes256 => "vaes256",
            Backend::Armv8 => "armv8",
        }
    }
}

#[cold]
fn unsupported(backend: Backend) -> ! {
    panic!(
        "AES backend {:?} is not supported by this CPU",
        backend.name()
    )
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn aesni() -> x86::AesNi {
    x86::AesNi::detect().unwrap_or_else(|| unsupported(Backend::AesNi))
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn vaes() -> x86::Vaes {
    x86::Vaes::detect().unwrap_or_else(|| unsupported(Backend::Vaes))
}

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
fn vaes256() -> x86::Vaes256 {
    x86::Vaes256::detect().unwrap_or_else(|| unsupported(Backend::Vaes256))
}

#[cfg(target_arch = "aarch64")]
fn armv8() -> arm::Armv8 {
    arm::Armv8::detect().unwrap_or_else(|| unsupported(Backend::Armv8))
}

/// Blocks per call to the underlying cipher in the portable backend.
const CHUNK: usize = 64;

fn to_array(b: Block) -> Array<u8, aes::cipher::consts::U16> {
    Array(b.to_bytes())
}

/// The expanded key of a [`FixedKeyAes`], per backend.
#[derive(Clone)]
enum Expanded {
    Portable(aes::Aes128Enc),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    AesNi(x86::AesNi, x86::RoundKeys),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Vaes(x86::Vaes, x86::RoundKeys),
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    Vaes256(x86::Vaes256, x86::RoundKeys),
    #[cfg(target_arch = "aarch64")]
    Armv8(arm::Armv8, register::RoundKeys),
}

/// AES-128 under one key, many blocks per call.
#[derive(Clone)]
pub struct FixedKeyAes {
    backend: Backend,
    expanded: Expanded,
}

impl FixedKeyAes {
    /// The key expanded for the fastest backend.
    pub fn new(key: Block) -> Self {
        Self::with_backend(key, Backend::detect())
    }

    /// The key expanded for `backend`.
    ///
    /// # Panics
    /// If the CPU does not support `backend` ([`Backend::is_supported`]).
    pub fn with_backend(key: Block, backend: Backend) -> Self {
        let expanded = match backend {
            Backend::Portable => Expanded::Portable(aes::Aes128Enc::new(&to_array(key))),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::AesNi => {
                let t = aesni();
                Expanded::AesNi(t, t.expand(key))
            }
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Vaes => {
                let t = vaes();
                Expanded::Vaes(t, t.expand(key))
            }
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Backend::Vaes256 => {
                let t = vaes256();
                Expanded::Vaes256(t, t.expand(key))
            }
            #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
            Backend::AesNi | Backend::Vaes | Backend::Vaes256 => unsupported(backend),
            #[cfg(target_arch = "aarch64")]
            Backend::Armv8 => {
                let t = armv8();
                Expanded::Armv8(t, t.expand(key))
            }
            #[cfg(not(target_arch = "aarch64"))]
            Backend::Armv8 => unsupported(backend),
        };
        FixedKeyAes { backend, expanded }
    }

    /// The backend in use.
    #[inline]
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// The round keys with the token of the x86 backend in use, if it is one: what the
    /// fused kernels need to run under this key on any x86 backend.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[inline]
    pub fn x86_round_keys(&self) -> Option<(x86::Token, &x86::RoundKeys)> {
        match &self.expanded {
            Expanded::Portable(_) => None,
            Expanded::AesNi(t, rk) => Some((x86::Token::AesNi(*t), rk)),
            Expanded::Vaes(t, rk) => Some((x86::Token::Vaes(*t), rk)),
            Expanded::Vaes256(t, rk) => Some((x86::Token::Vaes256(*t), rk)),
        }
    }

    /// The round keys with the `armv8` backend's token, if it is the one in use: what the
    /// fused kernels need to run under this key.
    #[cfg(target_arch = "aarch64")]
    #[inline]
    pub fn armv8_round_keys(&self) -> Option<(arm::Armv8, &register::RoundKeys)> {
        match &self.expanded {
            Expanded::Armv8(t, rk) => Some((*t, rk)),
            Expanded::Portable(_) => None,
        }
    }

    /// Encrypts one block.
    #[inline]
    pub fn encrypt(&self, block: Block) -> Block {
        let mut b = [block];
        self.encrypt_blocks(&mut b);
        b[0]
    }

    /// Encrypts every block in place.
    #[inline]
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        match &self.expanded {
            Expanded::Portable(cipher) => {
                let mut buf = [Array([0u8; 16]); CHUNK];
                for chunk in blocks.chunks_mut(CHUNK) {
                    let buf = &mut buf[..chunk.len()];
                    for (a, b) in buf.iter_mut().zip(chunk.iter()) {
                        *a = to_array(*b);
                    }
                    cipher.encrypt_blocks(buf);
                    for (b, a) in chunk.iter_mut().zip(buf.iter()) {
                        *b = Block::from_bytes(a.0);
                    }
                }
            }
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Expanded::AesNi(t, rk) => t.encrypt_blocks(rk, blocks),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Expanded::Vaes(t, rk) => t.encrypt_blocks(rk, blocks),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Expanded::Vaes256(t, rk) => t.encrypt_blocks(rk, blocks),
            #[cfg(target_arch = "aarch64")]
            Expanded::Armv8(t, rk) => t.encrypt_blocks(rk, blocks),
        }
    }

    /// The tweakable circular correlation-robust hash of Guo–Katz–Wang–Yu with this cipher
    /// as `π`: `out[i] = π(π(xs[i]) ⊕ tw(tweaks[i])) ⊕ π(xs[i])`, where `tw(t)` is `t` as a
    /// 128-bit big-endian integer in the 16 bytes (the `ideal` scheme's hash).
    ///
    /// The x86 backends fuse the two passes: `π(x)` stays in registers between them (and the
    /// final XOR is folded into the last round key), instead of going through memory.
    ///
    /// # Panics
    /// If the three slices differ in length.
    #[inline]
    pub fn tccr(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        assert!(
            xs.len() == tweaks.len() && xs.len() == out.len(),
            "one tweak and one output per input"
        );
        match &self.expanded {
            Expanded::Portable(_) => {
                // The unfused formula, in chunks that stay in L1.
                let mut u = [Block::ZERO; CHUNK];
                for ((xs, tweaks), out) in xs
                    .chunks(CHUNK)
                    .zip(tweaks.chunks(CHUNK))
                    .zip(out.chunks_mut(CHUNK))
                {
                    let u = &mut u[..xs.len()];
                    u.copy_from_slice(xs);
                    self.encrypt_blocks(u);
                    for ((o, &ui), &t) in out.iter_mut().zip(u.iter()).zip(tweaks) {
                        *o = ui ^ tccr_tweak(t);
                    }
                    self.encrypt_blocks(out);
                    for (o, &ui) in out.iter_mut().zip(u.iter()) {
                        *o ^= ui;
                    }
                }
            }
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Expanded::AesNi(t, rk) => t.tccr(rk, xs, tweaks, out),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Expanded::Vaes(t, rk) => t.tccr(rk, xs, tweaks, out),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Expanded::Vaes256(t, rk) => t.tccr(rk, xs, tweaks, out),
            #[cfg(target_arch = "aarch64")]
            Expanded::Armv8(t, rk) => t.tccr(rk, xs, tweaks, out),
        }
    }
}

/// Any `per_key` other than 1 and 2 (unused by the schemes), on a backend's kernels: one
/// key schedule, then the fixed-key kernel, per key.
#[cfg(any(target_arch = "x86", target_arch = "x86_64", target_arch = "aarch64"))]
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

/// The TCCR tweak block of `t`: `t` as a 128-bit big-endian integer in the 16 bytes
/// (docs/garbling.md §5.1).
#[inline(always)]
pub fn tccr_tweak(t: u64) -> Block {
    Block(u128::from(t).swap_bytes())
}

/// Encrypts `blocks[i]` in place under `keys[i / per_key]`: one key schedule per key.
///
/// # Panics
/// If `blocks.len() != keys.len() * per_key`, or if the CPU does not support `backend`.
#[inline]
pub fn encrypt_under_keys(backend: Backend, keys: &[Block], blocks: &mut [Block], per_key: usize) {
    assert_eq!(
        blocks.len(),
        keys.len() * per_key,
        "per_key blocks for each key"
    );
    match backend {
        Backend::Portable => {
            for (key, chunk) in keys.iter().zip(blocks.chunks_mut(per_key.max(1))) {
                let cipher = aes::Aes128Enc::new(&to_array(*key));
                for b in chunk {
                    let mut a = to_array(*b);
                    cipher.encrypt_block(&mut a);
                    *b = Block::from_bytes(a.0);
                }
            }
        }
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        Backend::AesNi => aesni().encrypt_under_keys(keys, blocks, per_key),
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        Backend::Vaes => vaes().encrypt_under_keys(keys, blocks, per_key),
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        Backend::Vaes256 => vaes256().encrypt_under_keys(keys, blocks, per_key),
        #[cfg(not(any(target_arch = "x86", target_arch = "x86_64")))]
        Backend::AesNi | Backend::Vaes | Backend::Vaes256 => unsupported(backend),
        #[cfg(target_arch = "aarch64")]
        Backend::Armv8 => armv8().encrypt_under_keys(keys, blocks, per_key),
        #[cfg(not(target_arch = "aarch64"))]
        Backend::Armv8 => unsupported(backend),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha8Rng;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f";
    const PT: &str = "00112233445566778899aabbccddeeff";
    const CT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

    /// Lengths hitting every remainder of the 8-wide, 4x4-wide and 4x8-wide loops.
    const LENGTHS: [usize; 9] = [0, 1, 3, 7, 8, 9, 31, 64, 203];

    #[test]
    fn every_backend_listed_and_detect_is_the_last() {
        let all = Backend::available();
        assert_eq!(all[0], Backend::Portable);
        assert_eq!(*all.last().unwrap(), Backend::detect());
        assert!(all.iter().all(|b| b.is_supported()));
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            assert_eq!(
                all.contains(&Backend::AesNi),
                is_x86_feature_detected!("aes") && is_x86_feature_detected!("ssse3")
            );
            assert_eq!(
                all.contains(&Backend::Vaes),
                all.contains(&Backend::AesNi)
                    && is_x86_feature_detected!("vaes")
                    && is_x86_feature_detected!("avx512f")
            );
        }
        eprintln!("AES backends: {all:?}");
    }

    /// A backend is available exactly where nothing is missing for it, and names what is.
    #[test]
    fn missing_features_name_what_a_backend_needs() {
        for b in Backend::all() {
            assert_eq!(b.missing_features().is_empty(), b.is_supported(), "{b:?}");
            assert_eq!(Backend::from_name(b.name()), Some(b));
        }
        assert_eq!(Backend::from_name("aesni"), None);
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        {
            assert_eq!(Backend::Armv8.missing_features(), ["a 64-bit ARM CPU"]);
            let why = Backend::Armv8.why_unsupported();
            assert_eq!(why.as_deref(), Some("it runs only on a 64-bit ARM CPU"));
            if !is_x86_feature_detected!("avx512f") {
                assert!(Backend::Vaes.missing_features().contains(&"avx512f"));
                let why = Backend::Vaes.why_unsupported().unwrap();
                assert!(why.contains("avx512f") && why.contains("lacks"), "{why}");
            }
        }
    }

    #[test]
    fn fips197_c1_on_every_backend() {
        let (key, pt, ct) = (
            Block::from_hex(KEY),
            Block::from_hex(PT),
            Block::from_hex(CT),
        );
        for backend in Backend::available() {
            let aes = FixedKeyAes::with_backend(key, backend);
            assert_eq!(aes.backend(), backend);
            assert_eq!(aes.encrypt(pt), ct, "{backend:?}");
            for n in LENGTHS {
                let mut many = vec![pt; n];
                aes.encrypt_blocks(&mut many);
                assert!(many.iter().all(|&b| b == ct), "{backend:?} fixed-key, {n}");
                for per_key in [1, 2, 3] {
                    let keys = vec![key; n];
                    let mut blocks = vec![pt; n * per_key];
                    encrypt_under_keys(backend, &keys, &mut blocks, per_key);
                    assert!(
                        blocks.iter().all(|&b| b == ct),
                        "{backend:?} per-key {per_key}, {n} keys"
                    );
                }
            }
        }
    }

    fn random_blocks(rng: &mut ChaCha8Rng, n: usize) -> Vec<Block> {
        (0..n).map(|_| Block(rng.gen())).collect()
    }

    #[test]
    fn every_backend_matches_portable() {
        let mut rng = ChaCha8Rng::seed_from_u64(197);
        let lengths = (0..=70).chain([127, 128, 129, 203, 512, 513]);
        for n in lengths {
            let key = Block(rng.gen());
            let blocks = random_blocks(&mut rng, n);
            let mut expect = blocks.clone();
            FixedKeyAes::with_backend(key, Backend::Portable).encrypt_blocks(&mut expect);
            for per_key in [1, 2] {
                let keys = random_blocks(&mut rng, n);
                let blocks = random_blocks(&mut rng, n * per_key);
                let mut expect_pk = blocks.clone();
                encrypt_under_keys(Backend::Portable, &keys, &mut expect_pk, per_key);
                for backend in Backend::available() {
                    let mut got = blocks.clone();
                    encrypt_under_keys(backend, &keys, &mut got, per_key);
                    assert_eq!(got, expect_pk, "{backend:?} per-key {per_key}, {n} keys");
                }
            }
            for backend in Backend::available() {
                let mut got = blocks.clone();
                FixedKeyAes::with_backend(key, backend).encrypt_blocks(&mut got);
                assert_eq!(got, expect, "{backend:?} fixed-key, {n} blocks");
            }
        }
    }

    /// The kernels write only inside the slice they are given (a masked or padded remainder
    /// must not spill into the neighbours).
    #[test]
    fn writes_stay_inside_the_slice() {
        const GUARD: Block = Block(0x5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a);
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        for backend in Backend::available() {
            let aes = FixedKeyAes::with_backend(Block(rng.gen()), backend);
            for n in 0..=70 {
                let mut buf = vec![GUARD; n + 8];
                aes.encrypt_blocks(&mut buf[4..4 + n]);
                assert!(buf[..4].iter().chain(&buf[4 + n..]).all(|&b| b == GUARD));
                for per_key in [1, 2] {
                    let keys = random_blocks(&mut rng, n);
                    let mut buf = vec![GUARD; n * per_key + 8];
                    encrypt_under_keys(backend, &keys, &mut buf[4..4 + n * per_key], per_key);
                    assert!(
                        buf[..4]
                            .iter()
                            .chain(&buf[4 + n * per_key..])
                            .all(|&b| b == GUARD),
                        "{backend:?} per-key {per_key}, {n} keys"
                    );
                }
            }
        }
    }

    /// The fused TCCR of every backend equals the two-pass formula on the portable cipher,
    /// at lengths hitting every remainder, with tweaks using all 64 bits.
    #[test]
    fn tccr_matches_unfused_formula_on_every_backend() {
        let mut rng = ChaCha8Rng::seed_from_u64(74);
        let key = Block(rng.gen());
        let pi = FixedKeyAes::with_backend(key, Backend::Portable);
        for n in (0..=70).chain([127, 128, 129, 203, 513]) {
            let xs = random_blocks(&mut rng, n);
            let tweaks: Vec<u64> = (0..n).map(|_| rng.gen()).collect();
            let expect: Vec<Block> = xs
                .iter()
                .zip(&tweaks)
                .map(|(&x, &t)| {
                    let u = pi.encrypt(x);
                    pi.encrypt(u ^ tccr_tweak(t)) ^ u
                })
                .collect();
            for backend in Backend::available() {
                const GUARD: Block = Block(0x5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a_5a5a);
                let mut buf = vec![GUARD; n + 8];
                FixedKeyAes::with_backend(key, backend).tccr(&xs, &tweaks, &mut buf[4..4 + n]);
                assert_eq!(buf[4..4 + n], expect[..], "{backend:?}, {n} blocks");
                assert!(buf[..4].iter().chain(&buf[4 + n..]).all(|&b| b == GUARD));
            }
        }
    }

    /// The tweak block layout: the 128-bit big-endian integer `t` (docs/garbling.md §5.1).
    #[test]
    fn tccr_tweak_is_big_endian() {
        assert_eq!(
            tccr_tweak(0x0102_0304_0506_0708).to_bytes(),
            [0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8]
        );
    }

    #[test]
    #[should_panic(expected = "one tweak and one output per input")]
    fn tccr_length_mismatch_panics() {
        FixedKeyAes::new(Block(1)).tccr(&[Block(1)], &[1, 2], &mut [Block(0)]);
    }

    #[test]
    fn per_key_zero_blocks_per_key() {
        for backend in Backend::available() {
            encrypt_under_keys(backend, &[Block(1), Block(2)], &mut [], 0);
        }
    }

    #[test]
    #[should_panic(expected = "per_key blocks for each key")]
    fn per_key_length_mismatch_panics() {
        encrypt_under_keys(Backend::detect(), &[Block(1)], &mut [Block(2)], 2);
    }

    /// The `armv8` backend's key schedule (`AESE` on a zero key, one table lookup) gives
    /// FIPS-197 Appendix A.1's round keys.
    #[cfg(target_arch = "aarch64")]
    #[test]
    fn armv8_key_schedule_matches_fips197_a1() {
        let Some(t) = arm::Armv8::detect() else {
            eprintln!("no Armv8 AES: key schedule not tested");
            return;
        };
        let rk = t.expand(Block::from_hex("2b7e151628aed2a6abf7158809cf4f3c"));
        assert_eq!(rk[1], Block::from_hex("a0fafe1788542cb123a339392a6c7605"));
        assert_eq!(rk[10], Block::from_hex("d014f9a8c9ee2589e13f0cc8b6630ca6"));
    }

    /// FIPS-197 Appendix A.1: the key schedule of 2b7e1516 28aed2a6 abf71588 09cf4f3c.
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    #[test]
    fn key_schedules_match_fips197_a1() {
        const A1: [&str; 11] = [
            "2b7e151628aed2a6abf7158809cf4f3c",
            "a0fafe1788542cb123a339392a6c7605",
            "f2c295f27a96b9435935807a7359f67f",
            "3d80477d4716fe3e1e237e446d7a883b",
            "ef44a541a8525b7fb671253bdb0bad00",
            "d4d1c6f87c839d87caf2b8bc11f915bc",
            "6d88a37a110b3efddbf98641ca0093fd",
            "4e54f70e5f5fc9f384a64fb24ea6dc4f",
            "ead27321b58dbad2312bf5607f8d292f",
            "ac7766f319fadc2128d12941575c006e",
            "d014f9a8c9ee2589e13f0cc8b6630ca6",
        ];
        let expect: [Block; 11] = A1.map(Block::from_hex);
        let key = expect[0];
        let mut rng = ChaCha8Rng::seed_from_u64(1);
        let others: [Block; 3] = [(); 3].map(|_| Block(rng.gen()));
        let Some(ni) = x86::AesNi::detect() else {
            eprintln!("no AES-NI: key schedules not tested");
            return;
        };
        assert_eq!(ni.expand(key), expect, "single-key schedule");
        // The interleaved schedules, with the A.1 key in every position among random keys.
        for pos in 0..4 {
            let mut keys = [key; 4];
            keys[..pos].copy_from_slice(&others[..pos]);
            keys[pos + 1..].copy_from_slice(&others[pos..]);
            let single = keys.map(|k| ni.expand(k));
            assert_eq!(single[pos], expect);
            assert_eq!(x86::testing::ni_round_keys(ni, &keys), single, "AES-NI x4");
            if let Some(v) = x86::Vaes::detect() {
                assert_eq!(v.expand(key), expect, "single-key schedule (VAES)");
                assert_eq!(x86::testing::vaes_round_keys(v, &keys), single, "VAES x4");
            }
        }
    }
}
