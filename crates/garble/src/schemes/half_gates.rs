//! Free-XOR with half gates (Zahur–Rosulek–Evans, "Two Halves Make a Whole", EUROCRYPT 2015,
//! eprint 2014/756, §3): two ciphertexts per AND gate, XOR and INV free. The `ideal` and
//! `circular` schemes are this construction with different hashes (docs/garbling.md §4 and §5):
//!
//! - [`Tccr`] (`ideal`): the tweakable circular correlation-robust hash of Guo–Katz–Wang–Yu
//!   (S&P 2020, eprint 2019/074, §7.4), `H(X, t) = π(π(X) ⊕ t) ⊕ π(X)` with `π` AES under one
//!   fixed public key; secure if fixed-key AES is an ideal permutation.
//! - [`LabelKeyed`] (`circular`): `H(X, t) = AES_X(t)`, AES keyed with the wire label itself
//!   (libscapi's "NoFixedKey" half gates); it relies on related-key and circular security of
//!   AES, since AES is keyed with `X` and `X ⊕ Δ` and `Δ` appears in the tables.
//!
//! Labels: a global offset `Δ` with `lsb(Δ) = 1`; wire `w` has `W_w^1 = W_w^0 ⊕ Δ`, so the
//! permute bit `lsb(W_w^0)` differs between the two labels. The `n`-th AND gate of a session
//! (from 0) hashes its first input under tweak `j = 2n + 1` and its second under
//! `j' = 2n + 2` (the counter of mpz's TCCR profile, docs/garbling.md §5.1): no tweak repeats in a
//! session, which the security of both hashes requires (docs/garbling.md §3.4).
//!
//! Tables are written in circuit order, but the hashes of AND gates are computed in batches
//! of independent gates planned over windows of the circuit (module `waves`). Batching
//! changes when hashes are computed, never which, so garbler and evaluator need not batch
//! alike.

use std::marker::PhantomData;
use std::ops::Range;

use transputation_circuits::{Circuit, Gate, WireId};

use transputation_core::aes::{encrypt_under_keys, Backend, FixedKeyAes};
use transputation_core::prg::Prg;
use transputation_core::Block;

use super::fused;
use super::interface::{EvalError, Evaluate, Garble};
use super::waves::{
    pack_slots, unpack_slots, wire_table, OpKind, Schedule, PACKED_SLOTS, REUSE_SLOTS,
};

/// Bytes of an AND gate's table in the half-gates schemes.
pub(crate) const HALF_GATES_AND_BYTES: usize = 32;

/// The hash of a half-gates scheme: `H(X, t)` for many `(X, t)` at once.
pub trait HalfGateHash: Send + Sync {
    /// Writes `H(xs[i], tweaks[i])` to `out[i]`.
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]);

    /// The garbler's four hashes of each AND gate: for 0-labels `[a0, b0] = inputs[i]` and
    /// AND index `n = and_index[i]` with tweaks `(j, j') = (2n + 1, 2n + 2)`, `out[i]` is
    /// `[H(a0, j), H(a0 ⊕ Δ, j), H(b0, j'), H(b0 ⊕ Δ, j')]`. The default stages the inputs
    /// and tweaks for [`HalfGateHash::hash`]; a hash may make them on the fly.
    fn hash_and_gates(
        &self,
        delta: Block,
        inputs: &[[Block; 2]],
        and_index: &[u32],
        out: &mut [[Block; 4]],
    ) {
        stage_and_gates(self, delta, inputs, and_index, out);
    }

    /// The evaluator's two hashes of each AND gate: for labels `[a, b] = inputs[i]` and AND
    /// index `and_index[i]`, `out[i] = [H(a, j), H(b, j')]`. The default stages the tweaks
    /// for [`HalfGateHash::hash`].
    fn hash_eval_gates(&self, inputs: &[[Block; 2]], and_index: &[u32], out: &mut [[Block; 2]]) {
        stage_eval_gates(self, inputs, and_index, out);
    }

    /// The fixed-key AES of [`Tccr`], whose garbler and evaluator have fused kernels
    /// (reading labels, hashing and writing tables and labels in one pass); `None` for
    /// every other hash.
    #[doc(hidden)]
    fn tccr_aes(&self) -> Option<&FixedKeyAes> {
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
            let (j, j2) = tweaks_of(i);
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
            let (j, j2) = tweaks_of(i);
            *t = [j, j2];
        }
        hash.hash(
            inputs.as_flattened(),
            tweaks.as_flattened(),
            out.as_flattened_mut(),
        );
    }
}

/// GKWY20's TCCR hash with fixed-key AES; see the module documentation.
pub struct Tccr {
    pi: FixedKeyAes,
}

impl Tccr {
    /// The fixed public key, `45 2a` repeated (mpz's, docs/garbling.md §5.1).
    pub const KEY: Block = Block::from_bytes([
        0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45,
        0x2a,
    ]);

    /// The hash on the given AES backend.
    pub fn new(backend: Backend) -> Tccr {
        Tccr {
            pi: FixedKeyAes::with_backend(Tccr::KEY, backend),
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
        out: &mut [[Block; 4]],
    ) {
        // Inputs and tweaks made in registers where the backend can (VAES), else staged.
        if !fused::tccr_and_gates(&self.pi, delta, inputs, and_index, out) {
            stage_and_gates(self, delta, inputs, and_index, out);
        }
    }

    fn hash_eval_gates(&self, inputs: &[[Block; 2]], and_index: &[u32], out: &mut [[Block; 2]]) {
        // Tweaks made in registers where the backend can (VAES), else staged.
        if !fused::tccr_eval_gates(&self.pi, inputs, and_index, out) {
            stage_eval_gates(self, inputs, and_index, out);
        }
    }

    fn tccr_aes(&self) -> Option<&FixedKeyAes> {
        Some(&self.pi)
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
                let (j, j2) = tweaks_of(i);
                *k = [a0, a0 ^ delta, b0, b0 ^ delta];
                *o = [j, j, j2, j2].map(LabelKeyed::tw);
            }
            encrypt_under_keys(self.backend, keys.as_flattened(), out.as_flattened_mut(), 1);
        }
    }

    fn hash_eval_gates(&self, inputs: &[[Block; 2]], and_index: &[u32], out: &mut [[Block; 2]]) {
        for (o, &i) in out.iter_mut().zip(and_index) {
            let (j, j2) = tweaks_of(i);
            *o = [LabelKeyed::tw(j), LabelKeyed::tw(j2)];
        }
        encrypt_under_keys(
            self.backend,
            inputs.as_flattened(),
            out.as_flattened_mut(),
            1,
        );
    }
}

/// Garbles one AND gate from the four hashes `H(A0,j), H(A1,j), H(B0,j'), H(B1,j')`:
/// returns `(TG, TE, C0)` (ZRE15 §3, docs/garbling.md §3.2).
#[inline(always)]
pub fn garble_and(a0: Block, b0: Block, delta: Block, h: [Block; 4]) -> (Block, Block, Block) {
    let (pa, pb) = (a0.lsb(), b0.lsb());
    let tg = h[0] ^ h[1] ^ delta.select(pb);
    let wg0 = h[0] ^ tg.select(pa);
    let te = h[2] ^ h[3] ^ a0;
    let we0 = h[2] ^ (te ^ a0).select(pb);
    (tg, te, wg0 ^ we0)
}

/// Evaluates one AND gate from `H(A, j)`, `H(B, j')` and the table: the output label.
#[inline(always)]
pub fn eval_and(a: Block, b: Block, ha: Block, hb: Block, tg: Block, te: Block) -> Block {
    let wg = ha ^ tg.select(a.lsb());
    let we = hb ^ (te ^ a).select(b.lsb());
    wg ^ we
}

/// The program of the half-gates schemes: AND gates are the crypto gates, 32 bytes each;
/// `aux` is the AND index, the tweak counter. INV gates are XORs with the returned slot,
/// which holds `Δ` for the garbler and 0 for the evaluator ([`Schedule::inv_as_xor`]).
fn schedule(circuit: &Circuit) -> (Schedule, usize) {
    let mut s = Schedule::build(
        circuit,
        |g| match g {
            Gate::And { .. } => OpKind::And,
            Gate::Xor { .. } => OpKind::Xor,
            Gate::Inv { .. } => OpKind::Inv,
        },
        |k| k == OpKind::And,
        |k, _| {
            if k == OpKind::And {
                HALF_GATES_AND_BYTES
            } else {
                0
            }
        },
        |_, _, ands, _, _| (ands as u32, 0),
    );
    let constant = s.inv_as_xor() as usize;
    (s, constant)
}

/// The free gates `ops` of a half-gates program, all XORs ([`schedule`]):
/// `table[out] = table[a] ⊕ table[b]`, in order.
#[inline]
fn xor_gates(table: &mut [Block], ops: &[super::waves::Op]) {
    for op in ops {
        debug_assert_eq!(op.kind(), OpKind::Xor, "INV gates are XORs here");
        let (a, b, out) = (op.a as usize, op.b as usize, op.out() as usize);
        table[out] = table[a] ^ table[b];
    }
}

/// A half-gates program in packed form, wave after wave: every gate's slots in 8 bytes
/// ([`pack_slots`]), the AND gates' indices beside theirs, and per window the index of its
/// first AND gate (an AND gate's table is at `32 · (n − first)` in its window). The XOR
/// loops and the fused AND kernels stream this instead of the 16-byte ops (whose `aux` an
/// XOR does not use) and the AND gates' 4-byte table offsets: 32 bytes of program per AND
/// gate of the MinCut-size circuit (2.5 XOR gates each) instead of 60. (`garble-bench` on
/// it, alternating, 5 rounds each: packing the XOR gates took 16.9 → 15.7 ns/AND garbling
/// and 12.6 → 11.8 evaluating, then packing the AND gates 15.85 → 15.34 and 11.32 → 10.93.)
/// Empty when the program has more than [`PACKED_SLOTS`] slots:
/// those keep the 16-byte ops, and their AND gates the staged kernels.
#[derive(Debug, Default)]
struct Packed {
    xors: Vec<u64>,
    /// `xors[xor_start[k]..xor_start[k + 1]]` are wave `k`'s free gates.
    xor_start: Vec<u32>,
    ands: Vec<u64>,
    and_index: Vec<u32>,
    /// `ands[and_start[k]..and_start[k + 1]]` (and `and_index`) are wave `k`'s AND gates.
    and_start: Vec<u32>,
    /// Per window, the AND index of its first AND gate.
    first_and: Vec<u32>,
}

impl Packed {
    fn new(schedule: &Schedule) -> Packed {
        let (free, crypto): (usize, usize) =
            schedule.waves.iter().fold((0, 0), |(f, c), (w, end)| {
                (f + (end - w.end) as usize, c + w.len())
            });
        if schedule.slots > PACKED_SLOTS || u32::try_from(free.max(crypto)).is_err() {
            return Packed::default();
        }
        let waves = schedule.waves.len() + 1;
        let mut p = Packed {
            xors: Vec::with_capacity(free),
            xor_start: Vec::with_capacity(waves),
            ands: Vec::with_capacity(crypto),
            and_index: Vec::with_capacity(crypto),
            and_start: Vec::with_capacity(waves),
            first_and: Vec::with_capacity(schedule.windows.len()),
        };
        for k in 0..schedule.waves.len() {
            p.xor_start.push(p.xors.len() as u32);
            p.and_start.push(p.ands.len() as u32);
            let (crypto, free) = schedule.wave(k);
            p.ands.extend(
                schedule.ops[crypto.clone()]
                    .iter()
                    .map(|op| pack_slots(op.a, op.b, op.out())),
            );
            p.and_index
                .extend(schedule.ops[crypto].iter().map(|op| op.aux));
            p.xors.extend(schedule.ops[free].iter().map(|op| {
                debug_assert_eq!(op.kind(), OpKind::Xor, "INV gates are XORs here");
                pack_slots(op.a, op.b, op.out())
            }));
        }
        p.xor_start.push(p.xors.len() as u32);
        p.and_start.push(p.ands.len() as u32);
        // Each window's first AND index, from its AND gates' offsets (tables in AND order);
        // a program where they disagree keeps the unpacked form.
        for w in &schedule.windows {
            let mut first = None;
            for k in w.waves.clone() {
                for i in schedule.wave(k).0 {
                    let (n, off) = (schedule.ops[i].aux, schedule.offset[i]);
                    let f = n.wrapping_sub(off / 32);
                    if off % 32 != 0 || first.is_some_and(|x| x != f) {
                        return Packed::default();
                    }
                    first = Some(f);
                }
            }
            p.first_and.push(first.unwrap_or(0));
        }
        p
    }

    /// Wave `k`'s packed free gates, if the program is packed.
    fn xors(&self, k: usize) -> Option<&[u64]> {
        let (&from, &to) = (self.xor_start.get(k)?, self.xor_start.get(k + 1)?);
        Some(&self.xors[from as usize..to as usize])
    }

    /// Wave `k`'s packed AND gates, their indices and window `w`'s first AND index, if the
    /// program is packed.
    fn ands(&self, k: usize, w: usize) -> Option<(&[u64], &[u32], u32)> {
        let (&from, &to) = (self.and_start.get(k)?, self.and_start.get(k + 1)?);
        let range = from as usize..to as usize;
        Some((
            &self.ands[range.clone()],
            &self.and_index[range],
            *self.first_and.get(w)?,
        ))
    }
}

/// [`xor_gates`] from packed ops.
#[inline]
fn xor_gates_packed(table: &mut [Block], ops: &[u64]) {
    for &p in ops {
        let (a, b, out) = unpack_slots(p);
        table[out] = table[a] ^ table[b];
    }
}

/// Hash inputs per call: small enough that a chunk's inputs, hashes and scratch stay in
/// the L1 cache, large enough to keep the AES pipeline full.
const HASH_CHUNK: usize = 128;

/// AND gates per garbler chunk (four hashes each).
const GARBLE_CHUNK: usize = HASH_CHUNK / 4;

/// AND gates per evaluator chunk (two hashes each).
const EVAL_CHUNK: usize = HASH_CHUNK / 2;

/// The tweaks `(j, j')` of the AND gate with the given index (module documentation).
#[inline(always)]
fn tweaks_of(and_index: u32) -> (u64, u64) {
    let n = u64::from(and_index);
    (2 * n + 1, 2 * n + 2)
}

/// The half-gates garbler over any [`HalfGateHash`]. It borrows the circuit for as long as it
/// garbles, though it only reads it while planning.
pub struct HalfGatesGarbler<'c, H> {
    circuit: PhantomData<&'c Circuit>,
    hash: H,
    delta: Block,
    /// The 0-label in every slot (input wire `i` is slot `i`).
    zero: Vec<Block>,
    schedule: Schedule,
    packed: Packed,
    next_window: usize,
    /// Per AND gate of a chunk: the 0-labels `[a0, b0]`, the AND index, the four hashes.
    inputs: Vec<[Block; 2]>,
    and_index: Vec<u32>,
    hashes: Vec<[Block; 4]>,
}

impl<'c, H: HalfGateHash> HalfGatesGarbler<'c, H> {
    /// A garbler with fresh `Δ` and input labels from `prg`.
    pub fn new(circuit: &'c Circuit, hash: H, prg: &mut Prg) -> Self {
        let delta = prg.block().with_lsb(true);
        let (schedule, constant) = schedule(circuit);
        let mut zero = wire_table(schedule.slots as usize, Block::ZERO);
        prg.fill_blocks(&mut zero[schedule.input_slots(circuit.n_inputs())]);
        // INV(a) is a ⊕ Δ for the garbler.
        zero[constant] = delta;
        HalfGatesGarbler {
            circuit: PhantomData,
            hash,
            delta,
            zero,
            packed: Packed::new(&schedule),
            schedule,
            next_window: 0,
            inputs: vec![[Block::ZERO; 2]; GARBLE_CHUNK],
            and_index: vec![0; GARBLE_CHUNK],
            hashes: vec![[Block::ZERO; 4]; GARBLE_CHUNK],
        }
    }

    /// The global offset `Δ` (for correlated OT and tests).
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// Garbles the AND gates `ops[range]` into their window's bytes: in one pass where the
    /// hash has a fused kernel, else a chunk at a time.
    fn and_batch(&mut self, k: usize, range: Range<usize>, window: &mut [u8]) {
        if let (Some(aes), Some(ands)) =
            (self.hash.tccr_aes(), self.packed.ands(k, self.next_window))
        {
            if fused::garble_and_gates(aes, self.delta, &mut self.zero, ands, window) {
                return;
            }
        }
        for start in range.clone().step_by(GARBLE_CHUNK) {
            self.and_chunk(start..(start + GARBLE_CHUNK).min(range.end), window);
        }
    }

    fn and_chunk(&mut self, range: Range<usize>, window: &mut [u8]) {
        let ops = &self.schedule.ops[range.clone()];
        let offsets = &self.schedule.offset[range];
        let n = ops.len();
        let (inputs, and_index) = (&mut self.inputs[..n], &mut self.and_index[..n]);
        for ((op, ab), i) in ops.iter().zip(inputs.iter_mut()).zip(and_index.iter_mut()) {
            *ab = [self.zero[op.a as usize], self.zero[op.b as usize]];
            *i = op.aux;
        }
        let hashes = &mut self.hashes[..n];
        self.hash
            .hash_and_gates(self.delta, inputs, and_index, hashes);
        for (((op, &pos), &h), &[a0, b0]) in ops
            .iter()
            .zip(offsets)
            .zip(hashes.iter())
            .zip(inputs.iter())
        {
            let (tg, te, c0) = garble_and(a0, b0, self.delta, h);
            let pos = pos as usize;
            let table: &mut [u8; 32] = (&mut window[pos..pos + 32]).try_into().expect("32 bytes");
            table[..16].copy_from_slice(&tg.to_bytes());
            table[16..].copy_from_slice(&te.to_bytes());
            self.zero[op.out() as usize] = c0;
        }
    }

    fn free_gates(&mut self, k: usize, range: Range<usize>) {
        match self.packed.xors(k) {
            Some(ops) => xor_gates_packed(&mut self.zero, ops),
            None => xor_gates(&mut self.zero, &self.schedule.ops[range]),
        }
    }
}

impl<H: HalfGateHash> Garble for HalfGatesGarbler<'_, H> {
    fn input_labels(&self, wire: WireId) -> [Block; 2] {
        // The interface's contract (labels read before garbling), which leaves the
        // schedule free to reuse input slots.
        assert!(
            self.next_window == 0 || !REUSE_SLOTS,
            "input labels are read before garbling"
        );
        let w0 = self.zero[self.schedule.input_slot(wire)];
        [w0, w0 ^ self.delta]
    }

    fn global_offset(&self) -> Option<Block> {
        Some(self.delta)
    }

    fn garble_at(&mut self, out: &mut Vec<u8>, at: usize, target: usize) -> (usize, bool) {
        assert!(at <= out.len(), "tables are written from within the buffer");
        let mut end = at;
        // At least one window with tables per call (a `target` of 0 still makes progress).
        while self.next_window < self.schedule.windows.len() && (end == at || end - at < target) {
            let window = self.schedule.windows[self.next_window].clone();
            let base = end;
            end += window.bytes;
            // Every byte of the window is written below (32 per AND gate, at the offsets of
            // the schedule), so old contents need no zeroing; only growth is zeroed.
            if out.len() < end {
                out.resize(end, 0);
            }
            for k in window.waves {
                let (crypto, free) = self.schedule.wave(k);
                self.and_batch(k, crypto, &mut out[base..end]);
                self.free_gates(k, free);
            }
            self.next_window += 1;
        }
        (end, self.next_window < self.schedule.windows.len())
    }

    fn decoding(&self) -> Vec<bool> {
        assert_eq!(
            self.next_window,
            self.schedule.windows.len(),
            "garbling finished"
        );
        let zero = self.schedule.outputs_of(&self.zero);
        zero.iter().map(|w| w.lsb()).collect()
    }
}

/// The half-gates evaluator over any [`HalfGateHash`].
pub struct HalfGatesEvaluator<'c, H> {
    circuit: &'c Circuit,
    hash: H,
    /// The label in every slot.
    labels: Vec<Block>,
    schedule: Schedule,
    packed: Packed,
    next_window: usize,
    /// Per AND gate of a chunk: the input labels `[a, b]`, the AND index, the two hashes.
    inputs: Vec<[Block; 2]>,
    and_index: Vec<u32>,
    hashes: Vec<[Block; 2]>,
}

impl<'c, H: HalfGateHash> HalfGatesEvaluator<'c, H> {
    /// An evaluator holding one label per input wire.
    pub fn new(circuit: &'c Circuit, hash: H, inputs: &[Block]) -> Self {
        assert_eq!(inputs.len(), circuit.n_inputs(), "one label per input wire");
        let (schedule, _constant) = schedule(circuit);
        let mut labels = wire_table(schedule.slots as usize, Block::ZERO);
        labels[schedule.input_slots(inputs.len())].copy_from_slice(inputs);
        HalfGatesEvaluator {
            circuit,
            hash,
            labels,
            packed: Packed::new(&schedule),
            schedule,
            next_window: 0,
            inputs: vec![[Block::ZERO; 2]; EVAL_CHUNK],
            and_index: vec![0; EVAL_CHUNK],
            hashes: vec![[Block::ZERO; 2]; EVAL_CHUNK],
        }
    }

    /// Evaluates the AND gates `ops[range]` from their window's bytes: in one pass where
    /// the hash has a fused kernel, else a chunk at a time.
    fn and_batch(&mut self, k: usize, range: Range<usize>, window: &[u8]) {
        if let (Some(aes), Some(ands)) =
            (self.hash.tccr_aes(), self.packed.ands(k, self.next_window))
        {
            if fused::eval_and_gates(aes, &mut self.labels, ands, window) {
                return;
            }
        }
        for start in range.clone().step_by(EVAL_CHUNK) {
            self.and_chunk(start..(start + EVAL_CHUNK).min(range.end), window);
        }
    }

    fn and_chunk(&mut self, range: Range<usize>, window: &[u8]) {
        let ops = &self.schedule.ops[range.clone()];
        let offsets = &self.schedule.offset[range];
        let n = ops.len();
        let (inputs, and_index) = (&mut self.inputs[..n], &mut self.and_index[..n]);
        for ((op, ab), i) in ops.iter().zip(inputs.iter_mut()).zip(and_index.iter_mut()) {
            *ab = [self.labels[op.a as usize], self.labels[op.b as usize]];
            *i = op.aux;
        }
        let hashes = &mut self.hashes[..n];
        self.hash.hash_eval_gates(inputs, and_index, hashes);
        for (((op, &pos), &[ha, hb]), &[a, b]) in ops
            .iter()
            .zip(offsets)
            .zip(hashes.iter())
            .zip(inputs.iter())
        {
            let pos = pos as usize;
            let table: &[u8; 32] = window[pos..pos + 32].try_into().expect("32 bytes");
            let (tg, te) = (Block::read(&table[..16]), Block::read(&table[16..]));
            self.labels[op.out() as usize] = eval_and(a, b, ha, hb, tg, te);
        }
    }

    fn free_gates(&mut self, k: usize, range: Range<usize>) {
        // INV(a) is a ⊕ 0 = a for the evaluator: the constant slot stays 0.
        match self.packed.xors(k) {
            Some(ops) => xor_gates_packed(&mut self.labels, ops),
            None => xor_gates(&mut self.labels, &self.schedule.ops[range]),
        }
    }
}

impl<H: HalfGateHash> Evaluate for HalfGatesEvaluator<'_, H> {
    fn input_labels_mut(&mut self, first: WireId, len: usize) -> &mut [Block] {
        assert_eq!(
            self.next_window, 0,
            "input labels are set before evaluation"
        );
        let first = first as usize;
        let end = first + len;
        assert!(
            end <= self.circuit.n_inputs(),
            "wires {first}..{end} are not all inputs"
        );
        &mut self.labels[self.schedule.input_slots(end)][first..]
    }

    fn feed(&mut self, bytes: &[u8]) -> Result<usize, EvalError> {
        let mut used = 0;
        while let Some(window) = self.schedule.windows.get(self.next_window).cloned() {
            if bytes.len() - used < window.bytes {
                break;
            }
            let tables = &bytes[used..used + window.bytes];
            for k in window.waves {
                let (crypto, free) = self.schedule.wave(k);
                self.and_batch(k, crypto, tables);
                self.free_gates(k, free);
            }
            used += window.bytes;
            self.next_window += 1;
        }
        self.schedule
            .check_trailing(self.next_window, used, bytes.len())
    }

    fn gates_done(&self) -> usize {
        self.schedule.gates_before(self.next_window)
    }

    fn output_labels(&self) -> Result<Vec<Block>, EvalError> {
        self.check_done(self.circuit)?;
        Ok(self.schedule.outputs_of(&self.labels))
    }
}

#[cfg(test)]
pub(crate) mod tests {
    //! Whole-garbler tests that need the garbler's internal labels: exhaustive gates with
    //! forced permute bits (docs/garbling.md §7.1), label invariants on every wire (§7.2) and
    //! single bit flips in the tables with an exact prediction of their effect. The helpers
    //! are shared with `prf`'s tests.

    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha12Rng;
    use transputation_circuits::{library, BitOrder, InputGroup, OutputGroup, Party};

    /// A circuit over inputs `a = 0` (garbler) and `b = 1` (evaluator) whose last gate's
    /// output is the output.
    pub(crate) fn two_input(gates: Vec<Gate>) -> Circuit {
        let out = gates.last().expect("a gate").output();
        let one = |party| InputGroup {
            party,
            len: 1,
            order: BitOrder::MsbFirst,
            name: String::new(),
        };
        Circuit::new(
            u64::from(out) + 1,
            vec![one(Party::Garbler), one(Party::Evaluator)],
            vec![OutputGroup {
                wires: vec![out],
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            gates,
        )
        .unwrap()
    }

    /// A gate kind as a small circuit and its truth table.
    pub(crate) struct Kind {
        pub(crate) name: &'static str,
        pub(crate) circuit: Circuit,
        pub(crate) f: fn(bool, bool) -> bool,
    }

    /// AND, XOR, NOT and the derived XNOR, NAND, OR (docs/garbling.md §1.2), plus the same gates
    /// with the inputs in the other order.
    pub(crate) fn kinds() -> Vec<Kind> {
        use Gate::{And, Inv, Xor};
        let kind = |name, gates, f| Kind {
            name,
            circuit: two_input(gates),
            f,
        };
        vec![
            kind("AND", vec![And { a: 0, b: 1, out: 2 }], |a, b| a & b),
            kind("AND(b,a)", vec![And { a: 1, b: 0, out: 2 }], |a, b| a & b),
            kind("XOR", vec![Xor { a: 0, b: 1, out: 2 }], |a, b| a ^ b),
            kind("XOR(b,a)", vec![Xor { a: 1, b: 0, out: 2 }], |a, b| a ^ b),
            kind("NOT a", vec![Inv { a: 0, out: 2 }], |a, _| !a),
            kind("NOT b", vec![Inv { a: 1, out: 2 }], |_, b| !b),
            kind(
                "XNOR",
                vec![Xor { a: 0, b: 1, out: 2 }, Inv { a: 2, out: 3 }],
                |a, b| !(a ^ b),
            ),
            kind(
                "NAND",
                vec![And { a: 0, b: 1, out: 2 }, Inv { a: 2, out: 3 }],
                |a, b| !(a & b),
            ),
            kind(
                "OR",
                vec![
                    Inv { a: 0, out: 2 },
                    Inv { a: 1, out: 3 },
                    And { a: 2, b: 3, out: 4 },
                    Inv { a: 4, out: 5 },
                ],
                |a, b| a | b,
            ),
            kind(
                "AND after NOT and XOR",
                vec![
                    Inv { a: 0, out: 2 },
                    Xor { a: 2, b: 1, out: 3 },
                    And { a: 3, b: 2, out: 4 },
                ],
                |a, b| (!a ^ b) & !a,
            ),
        ]
    }

    /// The plain value of every wire.
    pub(crate) fn wire_values(c: &Circuit, inputs: &[bool]) -> Vec<bool> {
        let mut v = vec![false; c.num_wires() as usize];
        v[..inputs.len()].copy_from_slice(inputs);
        for g in c.gates() {
            match *g {
                Gate::Xor { a, b, out } => v[out as usize] = v[a as usize] ^ v[b as usize],
                Gate::And { a, b, out } => v[out as usize] = v[a as usize] & v[b as usize],
                Gate::Inv { a, out } => v[out as usize] = !v[a as usize],
            }
        }
        v
    }

    /// Whether each gate's output reaches an output wire.
    pub(crate) fn live_gates(c: &Circuit) -> Vec<bool> {
        let mut live = vec![false; c.num_wires() as usize];
        for o in c.outputs() {
            for &w in &o.wires {
                live[w as usize] = true;
            }
        }
        let mut gates = vec![false; c.gates().len()];
        for (i, g) in c.gates().iter().enumerate().rev() {
            if live[g.output() as usize] {
                gates[i] = true;
                let (a, b) = g.inputs();
                live[a as usize] = true;
                if let Some(b) = b {
                    live[b as usize] = true;
                }
            }
        }
        gates
    }

    pub(crate) fn aes128() -> Circuit {
        library::load("aes128").unwrap()
    }

    /// Both hashes, behind one generic test body.
    fn for_each_hash(mut test: impl FnMut(&str, &dyn Fn() -> Box<dyn HalfGateHash>)) {
        for backend in Backend::available() {
            test("ideal", &move || Box::new(Tccr::new(backend)));
            test("circular", &move || Box::new(LabelKeyed::new(backend)));
        }
    }

    impl HalfGateHash for Box<dyn HalfGateHash> {
        fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
            self.as_ref().hash(xs, tweaks, out)
        }
    }

    /// Garbles `c` to the end; returns the garbler and the table stream.
    fn garble<'c>(
        c: &'c Circuit,
        hash: Box<dyn HalfGateHash>,
        seed: u128,
        force: impl FnOnce(&mut HalfGatesGarbler<'c, Box<dyn HalfGateHash>>),
    ) -> (HalfGatesGarbler<'c, Box<dyn HalfGateHash>>, Vec<u8>) {
        let mut prg = Prg::new(Block(seed));
        let mut g = HalfGatesGarbler::new(c, hash, &mut prg);
        force(&mut g);
        let mut stream = Vec::new();
        while g.garble(&mut stream, 1 << 20) {}
        (g, stream)
    }

    fn evaluate<'c>(
        c: &'c Circuit,
        hash: Box<dyn HalfGateHash>,
        labels: &[Block],
        stream: &[u8],
    ) -> HalfGatesEvaluator<'c, Box<dyn HalfGateHash>> {
        let mut e = HalfGatesEvaluator::new(c, hash, labels);
        assert_eq!(e.feed(stream), Ok(stream.len()));
        e
    }

    /// The 16-byte ops and staged AND gates that programs too large for packing keep give the
    /// packed program's tables and labels, garbling and evaluating.
    #[test]
    fn unpacked_programs_garble_and_evaluate_alike() {
        let c = library::load("aes128").unwrap();
        for_each_hash(|name, make| {
            let (packed, stream) = garble(&c, make(), 9, |g| assert!(!g.packed.xors.is_empty()));
            let (unpacked, again) = garble(&c, make(), 9, |g| g.packed = Packed::default());
            assert_eq!(again, stream, "{name}: tables");
            assert_eq!(unpacked.decoding(), packed.decoding(), "{name}: decoding");
            let labels: Vec<Block> = {
                let mut prg = Prg::new(Block(9));
                let g = HalfGatesGarbler::new(&c, make(), &mut prg);
                (0..c.n_inputs() as u32)
                    .map(|w| g.input_labels(w)[0])
                    .collect()
            };
            let mut e = HalfGatesEvaluator::new(&c, make(), &labels);
            let want = evaluate(&c, make(), &labels, &stream)
                .output_labels()
                .unwrap();
            e.packed = Packed::default();
            assert_eq!(e.feed(&stream), Ok(stream.len()));
            assert_eq!(e.output_labels().unwrap(), want, "{name}: evaluation");
        });
    }

    #[test]
    fn every_gate_kind_exhaustive_with_forced_permute_bits() {
        // §7.1: for all (πa, πb) and (va, vb), the evaluator's label on every wire is the
        // garbler's label of the wire's value, byte for byte.
        for_each_hash(|name, make| {
            for kind in kinds() {
                let c = &kind.circuit;
                for pi in 0..4u128 {
                    let (pa, pb) = (pi & 1 == 1, pi & 2 == 2);
                    let (g, stream) = garble(c, make(), 100 + pi, |g| {
                        g.zero[0] = g.zero[0].with_lsb(pa);
                        g.zero[1] = g.zero[1].with_lsb(pb);
                    });
                    assert_eq!(g.input_labels(0)[0].lsb(), pa);
                    assert_eq!(g.input_labels(1)[0].lsb(), pb);
                    for x in 0..4 {
                        let (va, vb) = (x & 1 == 1, x & 2 == 2);
                        let labels = [
                            g.input_labels(0)[usize::from(va)],
                            g.input_labels(1)[usize::from(vb)],
                        ];
                        let e = evaluate(c, make(), &labels, &stream);
                        let values = wire_values(c, &[va, vb]);
                        for (w, &v) in values.iter().enumerate() {
                            let want = g.zero[w] ^ g.delta.select(v);
                            assert_eq!(
                                e.labels[w], want,
                                "{name} {}: πa={pa} πb={pb} a={va} b={vb}, wire {w}",
                                kind.name
                            );
                        }
                        let out = c.outputs()[0].wires[0] as usize;
                        assert_eq!(values[out], (kind.f)(va, vb));
                        assert_eq!(
                            crate::decode(&e.output_labels().unwrap(), &g.decoding()),
                            vec![(kind.f)(va, vb)]
                        );
                    }
                }
            }
        });
    }

    #[test]
    fn labels_on_every_wire_of_aes128() {
        // §7.2: lsb(Δ) = 1; every wire's labels are W0 and W0 ⊕ Δ (so lsb(W0) ≠ lsb(W1)),
        // and the evaluator holds exactly the label of the wire's value; XOR and NOT are
        // free-XOR; the decoding bit is lsb(W0).
        let c = aes128();
        let mut rng = ChaCha12Rng::seed_from_u64(1);
        for_each_hash(|name, make| {
            for seed in 0..3 {
                let (g, stream) = garble(&c, make(), seed, |_| {});
                assert!(g.delta().lsb(), "{name}: lsb(Δ)");
                let x: Vec<bool> = (0..c.n_inputs()).map(|_| rng.gen()).collect();
                let labels: Vec<Block> = x
                    .iter()
                    .enumerate()
                    .map(|(w, &v)| {
                        let l = g.input_labels(w as u32);
                        assert_eq!(l[1] ^ l[0], g.delta(), "{name}: input {w}");
                        assert_ne!(l[0].lsb(), l[1].lsb());
                        l[usize::from(v)]
                    })
                    .collect();
                let e = evaluate(&c, make(), &labels, &stream);
                let values = wire_values(&c, &x);
                for (w, &v) in values.iter().enumerate() {
                    assert_eq!(
                        e.labels[w],
                        g.zero[w] ^ g.delta().select(v),
                        "{name}: wire {w}"
                    );
                }
                for gate in c.gates() {
                    match *gate {
                        Gate::Xor { a, b, out } => assert_eq!(
                            g.zero[out as usize],
                            g.zero[a as usize] ^ g.zero[b as usize]
                        ),
                        Gate::Inv { a, out } => {
                            assert_eq!(g.zero[out as usize], g.zero[a as usize] ^ g.delta())
                        }
                        Gate::And { .. } => {}
                    }
                }
                let outputs = &c.outputs()[0].wires;
                let want: Vec<bool> = outputs.iter().map(|&w| g.zero[w as usize].lsb()).collect();
                assert_eq!(g.decoding(), want, "{name}");
            }
        });
    }

    #[test]
    fn flipped_table_bits_change_exactly_the_used_ciphertexts() {
        // A flipped bit in TG (TE) reaches the evaluator iff the signal bit of its a (b)
        // input is 1 (§3.2); then the output labels must change (every AES-128 gate whose
        // output is live reaches an output); otherwise they must not. No flip may panic.
        let c = aes128();
        let live = live_gates(&c);
        let ands: Vec<(usize, WireId, WireId)> = c
            .gates()
            .iter()
            .enumerate()
            .filter_map(|(i, g)| match *g {
                Gate::And { a, b, .. } => Some((i, a, b)),
                _ => None,
            })
            .collect();
        let mut rng = ChaCha12Rng::seed_from_u64(2);
        for_each_hash(|name, make| {
            let (g, stream) = garble(&c, make(), 7, |_| {});
            assert_eq!(stream.len(), 32 * ands.len());
            let x: Vec<bool> = (0..c.n_inputs()).map(|_| rng.gen()).collect();
            let labels: Vec<Block> = (0..c.n_inputs())
                .map(|w| g.input_labels(w as u32)[usize::from(x[w])])
                .collect();
            let honest = evaluate(&c, make(), &labels, &stream);
            let honest_out = honest.output_labels().unwrap();
            let (mut used, mut unused) = (0, 0);
            let mut positions: Vec<usize> = (0..200)
                .map(|_| rng.gen_range(0..8 * stream.len()))
                .collect();
            positions.extend([0, 8 * stream.len() - 1]);
            for bit in positions {
                let byte = bit / 8;
                let (gate, a, b) = ands[byte / 32];
                let in_tg = byte % 32 < 16;
                let signal = honest.labels[if in_tg { a } else { b } as usize].lsb();
                let expect = signal && live[gate];
                let mut bad = stream.clone();
                bad[byte] ^= 1 << (bit % 8);
                let out = evaluate(&c, make(), &labels, &bad).output_labels().unwrap();
                assert_eq!(
                    out != honest_out,
                    expect,
                    "{name}: bit {bit} (gate {gate}, {}) changed the output labels: {}",
                    if in_tg { "TG" } else { "TE" },
                    out != honest_out
                );
                if expect {
                    used += 1;
                } else {
                    unused += 1;
                }
            }
            assert!(
                used > 50 && unused > 50,
                "{name}: {used} used, {unused} unused"
            );
        });
    }
}
