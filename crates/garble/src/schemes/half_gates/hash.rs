//! The hashes of the half-gates schemes behind one trait, [`HalfGateHash`]: [`Tccr`]
//! (`ideal`) and [`LabelKeyed`] (`circular`), and [`Mitccrh`], measured against `ideal`'s
//! and not used by a scheme; each hashing many AND gates' inputs per call,
//! and the tweaks an AND gate hashes under (`2(B + n) + 1`, `2(B + n) + 2` for AND index `n`
//! and tweak base `B`).

use transputation_core::aes::{encrypt_under_keys, Backend, FixedKeyAes};
use transputation_core::Block;

use crate::schemes::fused;

/// The hash of a half-gates scheme: `H(X, t)` for many `(X, t)` at once.
pub trait HalfGateHash: Send + Sync {
    /// Writes `H(xs[i], tweaks[i])` to `out[i]`.
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]);

    /// The garbler's four hashes of each AND gate: for 0-labels `[a0, b0] = inputs[i]`,
    /// AND index `n = and_index[i]` and tweak base `B = tweak_base`, with tweaks
    /// `(j, j') = (2(B + n) + 1, 2(B + n) + 2)`, `out[i]` is
    /// `[H(a0, j), H(a0 ⊕ Δ, j), H(b0, j'), H(b0 ⊕ Δ, j')]`. The default stages the inputs
    /// and tweaks for [`HalfGateHash::hash`]; a hash may make them on the fly. The tweaks
    /// must fit in 64 bits (`B + n < 2^63`), which the garbler checks once.
    fn hash_and_gates(
        &self,
        delta: Block,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 4]],
    ) {
        stage_and_gates(self, delta, inputs, and_index, tweak_base, out);
    }

    /// The evaluator's two hashes of each AND gate: for labels `[a, b] = inputs[i]`, AND
    /// index `and_index[i]` and tweak base `tweak_base`, `out[i] = [H(a, j), H(b, j')]` with
    /// the tweaks of [`HalfGateHash::hash_and_gates`]. The default stages the tweaks for
    /// [`HalfGateHash::hash`].
    fn hash_eval_gates(
        &self,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 2]],
    ) {
        stage_eval_gates(self, inputs, and_index, tweak_base, out);
    }

    /// Takes `key` as the hash's public key from now on, where the hash has one (`ideal`'s
    /// TCCR hash: a session's own, drawn by its garbler; see [`Tccr`]); the others
    /// ignore it.
    fn set_key(&mut self, key: Block) {
        let _ = key;
    }

    /// What the garbler's and evaluator's fused kernels (reading labels, hashing and
    /// writing tables and labels in one pass) need to compute this hash; `None` for a hash
    /// they do not know.
    #[doc(hidden)]
    fn fused(&self) -> Option<fused::FusedHash<'_>> {
        None
    }
}

/// [`HalfGateHash::hash_and_gates`] by staging the inputs and tweaks for
/// [`HalfGateHash::hash`].
fn stage_and_gates<H: HalfGateHash + ?Sized>(
    hash: &H,
    delta: Block,
    inputs: &[[Block; 2]],
    and_index: &[u32],
    tweak_base: u64,
    out: &mut [[Block; 4]],
) {
    const GATES: usize = HASH_CHUNK / 4;
    let (mut xs, mut tweaks) = ([[Block::ZERO; 4]; GATES], [[0u64; 4]; GATES]);
    for ((inputs, and_index), out) in inputs
        .chunks(GATES)
        .zip(and_index.chunks(GATES))
        .zip(out.chunks_mut(GATES))
    {
        let n = inputs.len();
        for ((x, t), (&[a0, b0], &i)) in xs
            .iter_mut()
            .zip(tweaks.iter_mut())
            .zip(inputs.iter().zip(and_index))
        {
            let (j, j2) = tweaks_of(tweak_base, i);
            *x = [a0, a0 ^ delta, b0, b0 ^ delta];
            *t = [j, j, j2, j2];
        }
        hash.hash(
            xs[..n].as_flattened(),
            tweaks[..n].as_flattened(),
            out.as_flattened_mut(),
        );
    }
}

/// [`HalfGateHash::hash_eval_gates`] by staging the tweaks for [`HalfGateHash::hash`].
fn stage_eval_gates<H: HalfGateHash + ?Sized>(
    hash: &H,
    inputs: &[[Block; 2]],
    and_index: &[u32],
    tweak_base: u64,
    out: &mut [[Block; 2]],
) {
    const GATES: usize = HASH_CHUNK / 2;
    let mut tweaks = [[0u64; 2]; GATES];
    for ((inputs, and_index), out) in inputs
        .chunks(GATES)
        .zip(and_index.chunks(GATES))
        .zip(out.chunks_mut(GATES))
    {
        let tweaks = &mut tweaks[..inputs.len()];
        for (t, &i) in tweaks.iter_mut().zip(and_index) {
            let (j, j2) = tweaks_of(tweak_base, i);
            *t = [j, j2];
        }
        hash.hash(
            inputs.as_flattened(),
            tweaks.as_flattened(),
            out.as_flattened_mut(),
        );
    }
}

/// GKWY20's TCCR hash with AES under a public key fixed for a session; see the
/// `half_gates` module documentation. A 2PC session's garbler draws the key at random and
/// sends it (docs/garbling.md §5.3: so that no precomputation serves two sessions).
pub struct Tccr {
    pi: FixedKeyAes,
}

impl Tccr {
    /// The reference key, `45 2a` repeated (mpz's; docs/garbling.md §5.1): the key of the
    /// known-answer vectors and of a garbling given none ([`Tccr::new`]).
    pub const KEY: Block = Block::from_bytes([
        0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45,
        0x2a,
    ]);

    /// The hash under the reference key [`Tccr::KEY`] on the given AES backend.
    pub fn new(backend: Backend) -> Tccr {
        Tccr::with_key(backend, Tccr::KEY)
    }

    /// The hash under `key` on the given AES backend.
    pub fn with_key(backend: Backend, key: Block) -> Tccr {
        Tccr {
            pi: FixedKeyAes::with_backend(key, backend),
        }
    }
}

impl HalfGateHash for Tccr {
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        // u = π(X); out = π(u ⊕ t) ⊕ u, fused in the AES backend.
        self.pi.tccr(xs, tweaks, out);
    }

    fn hash_and_gates(
        &self,
        delta: Block,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 4]],
    ) {
        // Inputs and tweaks made in registers where the backend can (VAES), else staged.
        if !fused::tccr_and_gates(&self.pi, delta, inputs, and_index, tweak_base, out) {
            stage_and_gates(self, delta, inputs, and_index, tweak_base, out);
        }
    }

    fn hash_eval_gates(
        &self,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 2]],
    ) {
        // Tweaks made in registers where the backend can (VAES), else staged.
        if !fused::tccr_eval_gates(&self.pi, inputs, and_index, tweak_base, out) {
            stage_eval_gates(self, inputs, and_index, tweak_base, out);
        }
    }

    fn set_key(&mut self, key: Block) {
        self.pi = FixedKeyAes::with_backend(key, self.pi.backend());
    }

    fn fused(&self) -> Option<fused::FusedHash<'_>> {
        Some(fused::FusedHash::Tccr(&self.pi))
    }
}

/// `H(X, t) = AES_X(tw(t))` with `tw(t)` = LE64(t) in bytes 0..7 (docs/garbling.md §4).
pub struct LabelKeyed {
    backend: Backend,
}

impl LabelKeyed {
    /// The hash on the given AES backend.
    pub fn new(backend: Backend) -> LabelKeyed {
        LabelKeyed { backend }
    }

    /// The plaintext `tw(t)`: LE64(t) in bytes 0..7, zeros after.
    #[inline(always)]
    fn tw(t: u64) -> Block {
        Block(u128::from(t))
    }
}

impl HalfGateHash for LabelKeyed {
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        for (o, &t) in out.iter_mut().zip(tweaks) {
            *o = LabelKeyed::tw(t);
        }
        encrypt_under_keys(self.backend, xs, out, 1);
    }

    // The two below write the PRF inputs straight into `out` and the keys into one staging
    // array, instead of staging tweaks for `hash` as the defaults do.

    fn hash_and_gates(
        &self,
        delta: Block,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 4]],
    ) {
        const GATES: usize = HASH_CHUNK / 4;
        let mut keys = [[Block::ZERO; 4]; GATES];
        for ((inputs, and_index), out) in inputs
            .chunks(GATES)
            .zip(and_index.chunks(GATES))
            .zip(out.chunks_mut(GATES))
        {
            let keys = &mut keys[..inputs.len()];
            for ((k, o), (&[a0, b0], &i)) in keys
                .iter_mut()
                .zip(out.iter_mut())
                .zip(inputs.iter().zip(and_index))
            {
                let (j, j2) = tweaks_of(tweak_base, i);
                *k = [a0, a0 ^ delta, b0, b0 ^ delta];
                *o = [j, j, j2, j2].map(LabelKeyed::tw);
            }
            encrypt_under_keys(self.backend, keys.as_flattened(), out.as_flattened_mut(), 1);
        }
    }

    fn hash_eval_gates(
        &self,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 2]],
    ) {
        for (o, &i) in out.iter_mut().zip(and_index) {
            let (j, j2) = tweaks_of(tweak_base, i);
            *o = [LabelKeyed::tw(j), LabelKeyed::tw(j2)];
        }
        encrypt_under_keys(
            self.backend,
            inputs.as_flattened(),
            out.as_flattened_mut(),
            1,
        );
    }

    fn fused(&self) -> Option<fused::FusedHash<'_>> {
        Some(fused::FusedHash::LabelKeyed(self.backend))
    }
}

/// The multi-instance hash MITCCRH of Guo, Katz, Wang, Weng and Yu (CRYPTO 2020, eprint
/// 2019/1168), `H(X, t) = AES_{S ⊕ k(t)}(σ(X)) ⊕ σ(X)`: AES under a public key made of a
/// session's random seed `S` and the tweak (`k(t)`: LE64(t) in bytes 8..15, zeros before),
/// `σ` the linear orthomorphism `σ(L‖H) = H‖(L ⊕ H)` of the 64-bit halves
/// (docs/garbling.md §5.3). An AND gate's two garbler hashes under one
/// tweak share a key schedule: 2 schedules and 4 AES calls per gate garbling, 2 and 2
/// evaluating, against the TCCR hash's 8 and 4 AES calls and no schedule.
///
/// Not a scheme's hash: it is here to be measured against [`Tccr`] (the `aes_floor` example)
/// and checked against its known answer. `ideal` keeps the TCCR hash (§5.3 says why).
pub struct Mitccrh {
    backend: Backend,
    seed: Block,
}

impl Mitccrh {
    /// The hash of the session whose seed is `seed`, on the given AES backend.
    pub fn new(backend: Backend, seed: Block) -> Mitccrh {
        Mitccrh { backend, seed }
    }

    /// The key of tweak `t`: the seed with LE64(t) XORed into bytes 8..15.
    #[inline(always)]
    fn key(&self, t: u64) -> Block {
        self.seed ^ Block(u128::from(t) << 64)
    }

    /// `σ(X)`: bytes 0..7 of the result are bytes 8..15 of `X`, bytes 8..15 the XOR of both
    /// halves.
    #[inline(always)]
    pub fn sigma(x: Block) -> Block {
        let (lo, hi) = (x.0 as u64, (x.0 >> 64) as u64);
        Block(u128::from(hi) | (u128::from(lo ^ hi) << 64))
    }
}

impl HalfGateHash for Mitccrh {
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        let keys: Vec<Block> = tweaks.iter().map(|&t| self.key(t)).collect();
        for (o, &x) in out.iter_mut().zip(xs) {
            *o = Mitccrh::sigma(x);
        }
        encrypt_under_keys(self.backend, &keys, out, 1);
        for (o, &x) in out.iter_mut().zip(xs) {
            *o ^= Mitccrh::sigma(x);
        }
    }

    fn hash_and_gates(
        &self,
        delta: Block,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 4]],
    ) {
        const GATES: usize = HASH_CHUNK / 4;
        let (mut keys, mut sigmas) = ([[Block::ZERO; 2]; GATES], [[Block::ZERO; 4]; GATES]);
        for ((inputs, and_index), out) in inputs
            .chunks(GATES)
            .zip(and_index.chunks(GATES))
            .zip(out.chunks_mut(GATES))
        {
            let n = inputs.len();
            for (((k, s), o), (&[a0, b0], &i)) in keys
                .iter_mut()
                .zip(sigmas.iter_mut())
                .zip(out.iter_mut())
                .zip(inputs.iter().zip(and_index))
            {
                let (j, j2) = tweaks_of(tweak_base, i);
                *k = [self.key(j), self.key(j2)];
                *s = [a0, a0 ^ delta, b0, b0 ^ delta].map(Mitccrh::sigma);
                *o = *s;
            }
            // Each key encrypts the two labels of one wire.
            encrypt_under_keys(
                self.backend,
                keys[..n].as_flattened(),
                out.as_flattened_mut(),
                2,
            );
            for (o, s) in out
                .as_flattened_mut()
                .iter_mut()
                .zip(sigmas[..n].as_flattened())
            {
                *o ^= *s;
            }
        }
    }

    fn hash_eval_gates(
        &self,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        tweak_base: u64,
        out: &mut [[Block; 2]],
    ) {
        const GATES: usize = HASH_CHUNK / 2;
        let mut keys = [[Block::ZERO; 2]; GATES];
        for ((inputs, and_index), out) in inputs
            .chunks(GATES)
            .zip(and_index.chunks(GATES))
            .zip(out.chunks_mut(GATES))
        {
            let n = inputs.len();
            for ((k, o), (&[a, b], &i)) in keys
                .iter_mut()
                .zip(out.iter_mut())
                .zip(inputs.iter().zip(and_index))
            {
                let (j, j2) = tweaks_of(tweak_base, i);
                *k = [self.key(j), self.key(j2)];
                *o = [Mitccrh::sigma(a), Mitccrh::sigma(b)];
            }
            encrypt_under_keys(
                self.backend,
                keys[..n].as_flattened(),
                out.as_flattened_mut(),
                1,
            );
            for (o, &[a, b]) in out.iter_mut().zip(inputs) {
                o[0] ^= Mitccrh::sigma(a);
                o[1] ^= Mitccrh::sigma(b);
            }
        }
    }
}

/// Hash inputs per call: small enough that a chunk's inputs, hashes and scratch stay in
/// the L1 cache, large enough to keep the AES pipeline full.
pub(super) const HASH_CHUNK: usize = 128;

/// The tweaks `(j, j') = (2(B + n) + 1, 2(B + n) + 2)` of the AND gate with index `n`
/// under the tweak base `B` (`half_gates` module documentation). The garbler and evaluator
/// check once that they fit in 64 bits; the arithmetic wraps as the fused kernels' does, so
/// that the two paths agree on any input.
#[inline(always)]
pub(crate) fn tweaks_of(tweak_base: u64, and_index: u32) -> (u64, u64) {
    let j = tweak_base
        .wrapping_add(u64::from(and_index))
        .wrapping_mul(2)
        .wrapping_add(1);
    (j, j.wrapping_add(1))
}
