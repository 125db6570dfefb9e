//! Free-XOR with half gates (Zahur–Rosulek–Evans, "Two Halves Make a Whole", EUROCRYPT 2015,
//! eprint 2014/756, §3): two ciphertexts per AND gate, XOR and INV free. The `ideal` and
//! `circular` schemes are this construction with different hashes (GARBLING.md §2 and §3):
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
//! `j' = 2n + 2` (the counter of mpz's TCCR profile, GARBLING.md §3.7): no tweak repeats in a
//! session, which the security of both hashes requires (§2.7, §3.8).
//!
//! Gates are processed in circuit order, but the hashes of AND gates are computed in batches:
//! an AND gate is queued until a later gate reads its output, the batch is full, or the
//! garbled bytes reach the caller's target. Batching changes when hashes are computed, never
//! which, so garbler and evaluator need not batch alike.

use transputation_circuits::{Circuit, Gate, WireId};

use super::{EvalError, Evaluate, Garble, Pending, HALF_GATES_AND_BYTES, MAX_BATCH};
use crate::aes::{encrypt_under_keys, Backend, FixedKeyAes};
use crate::block::Block;
use crate::prg::Prg;

/// The hash of a half-gates scheme: `H(X, t)` for many `(X, t)` at once.
pub trait HalfGateHash: Send + Sync {
    /// Writes `H(xs[i], tweaks[i])` to `out[i]`.
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]);
}

/// GKWY20's TCCR hash with fixed-key AES; see the module documentation.
pub struct Tccr {
    pi: FixedKeyAes,
    scratch: std::sync::Mutex<Vec<Block>>,
}

impl Tccr {
    /// The fixed public key, `45 2a` repeated (mpz's, GARBLING.md §3.7).
    pub const KEY: Block = Block::from_bytes([
        0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45, 0x2a, 0x45,
        0x2a,
    ]);

    /// The hash on the given AES backend.
    pub fn new(backend: Backend) -> Tccr {
        Tccr {
            pi: FixedKeyAes::with_backend(Tccr::KEY, backend),
            scratch: std::sync::Mutex::new(Vec::new()),
        }
    }

    /// The tweak as a 128-bit big-endian integer in the 16 bytes (GARBLING.md §3.7).
    #[inline(always)]
    fn tweak(t: u64) -> Block {
        Block(u128::from(t).swap_bytes())
    }
}

impl HalfGateHash for Tccr {
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        // u = π(X); out = π(u ⊕ t) ⊕ u.
        let mut u = self.scratch.lock().expect("not poisoned");
        u.clear();
        u.extend_from_slice(xs);
        self.pi.encrypt_blocks(&mut u);
        for ((o, &ui), &t) in out.iter_mut().zip(u.iter()).zip(tweaks) {
            *o = ui ^ Tccr::tweak(t);
        }
        self.pi.encrypt_blocks(out);
        for (o, &ui) in out.iter_mut().zip(u.iter()) {
            *o ^= ui;
        }
    }
}

/// `H(X, t) = AES_X(tw(t))` with `tw(t)` = LE64(t) in bytes 0..7 (GARBLING.md §2.2).
pub struct LabelKeyed {
    backend: Backend,
}

impl LabelKeyed {
    /// The hash on the given AES backend.
    pub fn new(backend: Backend) -> LabelKeyed {
        LabelKeyed { backend }
    }
}

impl HalfGateHash for LabelKeyed {
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        for (o, &t) in out.iter_mut().zip(tweaks) {
            *o = Block(u128::from(t));
        }
        encrypt_under_keys(self.backend, xs, out, 1);
    }
}

/// Garbles one AND gate from the four hashes `H(A0,j), H(A1,j), H(B0,j'), H(B1,j')`:
/// returns `(TG, TE, C0)` (ZRE15 §3, GARBLING.md §2.3).
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

/// A queued AND gate of the garbler.
struct GarbleJob {
    out: WireId,
    a0: Block,
    b0: Block,
    table_pos: usize,
}

/// The half-gates garbler over any [`HalfGateHash`].
pub struct HalfGatesGarbler<'c, H> {
    circuit: &'c Circuit,
    hash: H,
    delta: Block,
    /// The 0-label of every wire.
    zero: Vec<Block>,
    next_gate: usize,
    and_count: u64,
    pending: Pending,
    jobs: Vec<GarbleJob>,
    xs: Vec<Block>,
    tweaks: Vec<u64>,
    hashes: Vec<Block>,
}

impl<'c, H: HalfGateHash> HalfGatesGarbler<'c, H> {
    /// A garbler with fresh `Δ` and input labels from `prg`.
    pub fn new(circuit: &'c Circuit, hash: H, prg: &mut Prg) -> Self {
        let delta = prg.block().with_lsb(true);
        let mut zero = vec![Block::ZERO; circuit.num_wires() as usize];
        prg.fill_blocks(&mut zero[..circuit.n_inputs()]);
        HalfGatesGarbler {
            circuit,
            hash,
            delta,
            zero,
            next_gate: 0,
            and_count: 0,
            pending: Pending::new(circuit.num_wires()),
            jobs: Vec::with_capacity(MAX_BATCH),
            xs: Vec::with_capacity(4 * MAX_BATCH),
            tweaks: Vec::with_capacity(4 * MAX_BATCH),
            hashes: Vec::with_capacity(4 * MAX_BATCH),
        }
    }

    /// The global offset `Δ` (for correlated OT and tests).
    pub fn delta(&self) -> Block {
        self.delta
    }

    fn flush(&mut self, out: &mut [u8]) {
        if self.jobs.is_empty() {
            return;
        }
        self.xs.clear();
        self.tweaks.clear();
        let first = self.and_count - self.jobs.len() as u64;
        for (i, job) in self.jobs.iter().enumerate() {
            let n = first + i as u64;
            let (j, j2) = (2 * n + 1, 2 * n + 2);
            self.xs
                .extend_from_slice(&[job.a0, job.a0 ^ self.delta, job.b0, job.b0 ^ self.delta]);
            self.tweaks.extend_from_slice(&[j, j, j2, j2]);
        }
        self.hashes.resize(self.xs.len(), Block::ZERO);
        self.hash.hash(&self.xs, &self.tweaks, &mut self.hashes);
        for (job, h) in self.jobs.iter().zip(self.hashes.chunks_exact(4)) {
            let (tg, te, c0) = garble_and(job.a0, job.b0, self.delta, [h[0], h[1], h[2], h[3]]);
            out[job.table_pos..job.table_pos + 16].copy_from_slice(&tg.to_bytes());
            out[job.table_pos + 16..job.table_pos + 32].copy_from_slice(&te.to_bytes());
            self.zero[job.out as usize] = c0;
        }
        self.jobs.clear();
        self.pending.clear();
    }
}

impl<H: HalfGateHash> Garble for HalfGatesGarbler<'_, H> {
    fn input_labels(&self, wire: WireId) -> [Block; 2] {
        let w0 = self.zero[wire as usize];
        [w0, w0 ^ self.delta]
    }

    fn garble(&mut self, out: &mut Vec<u8>, target: usize) -> bool {
        let gates = self.circuit.gates();
        let start = out.len();
        while self.next_gate < gates.len() && out.len() - start < target {
            let gate = gates[self.next_gate];
            let (a, b) = gate.inputs();
            if self.pending.any(a, b) {
                self.flush(&mut out[start..]);
            }
            match gate {
                Gate::Xor { a, b, out: c } => {
                    self.zero[c as usize] = self.zero[a as usize] ^ self.zero[b as usize];
                }
                Gate::Inv { a, out: c } => {
                    self.zero[c as usize] = self.zero[a as usize] ^ self.delta;
                }
                Gate::And { a, b, out: c } => {
                    self.jobs.push(GarbleJob {
                        out: c,
                        a0: self.zero[a as usize],
                        b0: self.zero[b as usize],
                        table_pos: out.len() - start,
                    });
                    out.resize(out.len() + HALF_GATES_AND_BYTES, 0);
                    self.and_count += 1;
                    self.pending.mark(c);
                    if self.jobs.len() == MAX_BATCH {
                        self.flush(&mut out[start..]);
                    }
                }
            }
            self.next_gate += 1;
        }
        self.flush(&mut out[start..]);
        self.next_gate < gates.len()
    }

    fn decoding(&self) -> Vec<bool> {
        assert_eq!(
            self.next_gate,
            self.circuit.gates().len(),
            "garbling finished"
        );
        self.circuit
            .outputs()
            .iter()
            .flat_map(|o| o.wires.iter().map(|&w| self.zero[w as usize].lsb()))
            .collect()
    }
}

/// A queued AND gate of the evaluator.
struct EvalJob {
    out: WireId,
    a: Block,
    b: Block,
    tg: Block,
    te: Block,
}

/// The half-gates evaluator over any [`HalfGateHash`].
pub struct HalfGatesEvaluator<'c, H> {
    circuit: &'c Circuit,
    hash: H,
    labels: Vec<Block>,
    next_gate: usize,
    and_count: u64,
    pending: Pending,
    jobs: Vec<EvalJob>,
    xs: Vec<Block>,
    tweaks: Vec<u64>,
    hashes: Vec<Block>,
}

impl<'c, H: HalfGateHash> HalfGatesEvaluator<'c, H> {
    /// An evaluator holding one label per input wire.
    pub fn new(circuit: &'c Circuit, hash: H, inputs: &[Block]) -> Self {
        assert_eq!(inputs.len(), circuit.n_inputs(), "one label per input wire");
        let mut labels = vec![Block::ZERO; circuit.num_wires() as usize];
        labels[..inputs.len()].copy_from_slice(inputs);
        HalfGatesEvaluator {
            circuit,
            hash,
            labels,
            next_gate: 0,
            and_count: 0,
            pending: Pending::new(circuit.num_wires()),
            jobs: Vec::with_capacity(MAX_BATCH),
            xs: Vec::with_capacity(2 * MAX_BATCH),
            tweaks: Vec::with_capacity(2 * MAX_BATCH),
            hashes: Vec::with_capacity(2 * MAX_BATCH),
        }
    }

    fn flush(&mut self) {
        if self.jobs.is_empty() {
            return;
        }
        self.xs.clear();
        self.tweaks.clear();
        let first = self.and_count - self.jobs.len() as u64;
        for (i, job) in self.jobs.iter().enumerate() {
            let n = first + i as u64;
            self.xs.extend_from_slice(&[job.a, job.b]);
            self.tweaks.extend_from_slice(&[2 * n + 1, 2 * n + 2]);
        }
        self.hashes.resize(self.xs.len(), Block::ZERO);
        self.hash.hash(&self.xs, &self.tweaks, &mut self.hashes);
        for (job, h) in self.jobs.iter().zip(self.hashes.chunks_exact(2)) {
            self.labels[job.out as usize] = eval_and(job.a, job.b, h[0], h[1], job.tg, job.te);
        }
        self.jobs.clear();
        self.pending.clear();
    }
}

impl<H: HalfGateHash> Evaluate for HalfGatesEvaluator<'_, H> {
    fn feed(&mut self, bytes: &[u8]) -> Result<usize, EvalError> {
        let gates = self.circuit.gates();
        let mut used = 0;
        while self.next_gate < gates.len() {
            let gate = gates[self.next_gate];
            let (a, b) = gate.inputs();
            if self.pending.any(a, b) {
                self.flush();
            }
            match gate {
                Gate::Xor { a, b, out } => {
                    self.labels[out as usize] = self.labels[a as usize] ^ self.labels[b as usize];
                }
                Gate::Inv { a, out } => self.labels[out as usize] = self.labels[a as usize],
                Gate::And { a, b, out } => {
                    let Some(table) = bytes.get(used..used + HALF_GATES_AND_BYTES) else {
                        break;
                    };
                    self.jobs.push(EvalJob {
                        out,
                        a: self.labels[a as usize],
                        b: self.labels[b as usize],
                        tg: Block::read(&table[..16]),
                        te: Block::read(&table[16..]),
                    });
                    used += HALF_GATES_AND_BYTES;
                    self.and_count += 1;
                    self.pending.mark(out);
                    if self.jobs.len() == MAX_BATCH {
                        self.flush();
                    }
                }
            }
            self.next_gate += 1;
        }
        self.flush();
        if self.next_gate == gates.len() && used < bytes.len() {
            return Err(EvalError::TrailingBytes {
                extra: bytes.len() - used,
            });
        }
        Ok(used)
    }

    fn gates_done(&self) -> usize {
        self.next_gate
    }

    fn output_labels(&self) -> Result<Vec<Block>, EvalError> {
        self.check_done(self.circuit)?;
        Ok(self
            .circuit
            .outputs()
            .iter()
            .flat_map(|o| o.wires.iter().map(|&w| self.labels[w as usize]))
            .collect())
    }
}
