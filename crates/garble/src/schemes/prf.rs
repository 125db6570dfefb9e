//! `prf`: garbling under the sole assumption that AES is a pseudorandom function
//! (Gueron–Lindell–Nof–Pinkas, "Fast Garbling of Circuits Under Standard Assumptions",
//! CCS 2015, eprint 2015/751), as specified in GARBLING.md §1.
//!
//! Every wire has two independent labels (no global offset), used only as AES keys:
//! - AND gates: the XOR-based 4-to-2 garbled row reduction (§1.4): two ciphertexts
//!   `T1, T2` and a 4-bit mask of encrypted signal bits, one per row.
//! - XOR gates: one ciphertext `T` that moves the second input onto the first input's
//!   translated offset (§1.5).
//! - INV gates: the two labels swap; nothing is sent.
//!
//! The PRF input is `blk(g, r)`: the gate index `g` as LE64 in bytes 0..7 and a row tag `r`
//! as LE32 in bytes 12..15 (§1.3). Every (label, input) pair is used by one gate row only:
//! gate indices are unique and the row tag holds both signal bits (pitfalls 1 and 2).
//!
//! Degenerate AND gates, whose inputs carry the same label set (`AND(a, a)`, or
//! `AND(a, NOT a)` through any chain of INV gates), would let the evaluator learn both output
//! labels (pitfall 3: `T1 ⊕ T2` is the other label). Both parties recognise them from the
//! circuit alone and garble them without cryptography, keeping the wire format: `AND(a, a)`
//! copies `a`'s labels and sends 32 zero bytes; `AND(a, NOT a)` is the constant 0, whose
//! output gets fresh labels and whose `T1` is the 0-label (which the evaluator may know, as
//! the value is public); the mask nibble is 0. Same-label-set XOR gates need nothing special:
//! their output label is the public constant's, and the other label stays hidden.

use rand::RngCore;
use transputation_circuits::{Circuit, Gate, WireId};

use super::{EvalError, Evaluate, Garble, Pending, MAX_BATCH};
use crate::aes::{encrypt_under_keys, Backend};
use crate::block::Block;
use crate::prg::Prg;

/// Bytes of an AND gate's ciphertexts.
const AND_BYTES: usize = 32;
/// Bytes of an XOR gate's ciphertext.
const XOR_BYTES: usize = 16;

/// The PRF input `blk(g, r)` (GARBLING.md §1.3).
#[inline(always)]
pub fn blk(g: u64, r: u32) -> Block {
    Block(u128::from(g) | (u128::from(r) << 96))
}

/// The AND table of one gate: `(T1, T2, m, [k^0, k^1] of the output)` from the input labels
/// `ka = [ka^0, ka^1]`, `kb`, the eight PRF values and the output permute bit `pc`.
///
/// `fa[2α + β] = AES_{ka[α]}(blk(g, 2α + β))` and `fb[2β + α] = AES_{kb[β]}(blk(g, 2α + β))`,
/// with `ka[α]` the label of `a` whose lsb is `α` (§1.4).
pub fn garble_and(
    ka: [Block; 2],
    kb: [Block; 2],
    fa: [Block; 4],
    fb: [Block; 4],
    pc: bool,
) -> (Block, Block, u8, [Block; 2]) {
    let (pa, pb) = (ka[0].lsb(), kb[0].lsb());
    let mut k = [Block::ZERO; 4]; // K[α,β] at 2α+β, raw
    let mut kbar = [Block::ZERO; 4];
    let mut m = 0u8;
    for alpha in 0..2usize {
        for beta in 0..2usize {
            let r = 2 * alpha + beta;
            k[r] = fa[r] ^ fb[2 * beta + alpha];
            kbar[r] = k[r].with_lsb(false);
            let value = ((alpha == 1) ^ pa) & ((beta == 1) ^ pb);
            m |= u8::from(k[r].lsb() ^ pc ^ value) << r;
        }
    }
    let (pa_i, pb_i) = (usize::from(pa), usize::from(pb));
    let t1 = kbar[2 * pa_i] ^ kbar[2 * pa_i + 1];
    let t2 = kbar[pb_i] ^ kbar[2 + pb_i];
    let v00 = pa & pb;
    let first = kbar[0].with_lsb(pc ^ v00);
    let other = (kbar[1] ^ kbar[2] ^ kbar[3]).with_lsb(pc ^ !v00);
    let kc = if v00 { [other, first] } else { [first, other] };
    (t1, t2, m, kc)
}

/// Evaluates an AND gate: `k = AES_La(blk(g,r)) ⊕ AES_Lb(blk(g,r))` for the row `r` of the
/// held labels' signal bits, the table and the row's mask bit.
pub fn eval_and(la: Block, lb: Block, k: Block, t1: Block, t2: Block, m: u8) -> Block {
    let (alpha, beta) = (la.lsb(), lb.lsb());
    let r = 2 * usize::from(alpha) + usize::from(beta);
    let l = k ^ t1.select(beta) ^ t2.select(alpha);
    l.with_lsb(((m >> r) & 1 == 1) ^ k.lsb())
}

/// The XOR table of one gate: `(T, [k^0, k^1] of the output)` from the permute bits and
/// `ta[s] = AES_{ka[s]}(blk(g, s))`, `tb[s] = AES_{kb[s]}(blk(g, s))` by signal bit (§1.5).
pub fn garble_xor(pa: bool, pb: bool, ta: [Block; 2], tb: [Block; 2]) -> (Block, [Block; 2]) {
    let d = ta[0] ^ ta[1];
    let t = tb[0] ^ tb[1] ^ d;
    let k0 = (ta[0] ^ tb[0] ^ d.select(pa ^ pb)).with_lsb(pa ^ pb);
    (t, [k0, k0 ^ d.with_lsb(true)])
}

/// Evaluates an XOR gate from `AES_La(blk(g, α))`, `AES_Lb(blk(g, β))` and `T`.
pub fn eval_xor(la: Block, lb: Block, fa: Block, fb: Block, t: Block) -> Block {
    (fa ^ fb ^ t.select(lb.lsb())).with_lsb(la.lsb() ^ lb.lsb())
}

/// How an AND gate's inputs relate: independent, or the same label set.
#[derive(Clone, Copy, PartialEq, Eq)]
enum AndKind {
    Normal,
    /// `AND(a, a)`: the output is `a`.
    Copy,
    /// `AND(a, NOT a)`: the output is 0.
    Zero,
}

/// For every wire, the wire whose label set it shares (through INV gates) and the parity
/// of INVs in between, packed as `root | parity << 31`. Wires are below 2^31.
fn label_roots(circuit: &Circuit) -> Vec<u32> {
    let mut roots: Vec<u32> = (0..circuit.num_wires()).collect();
    for g in circuit.gates() {
        if let Gate::Inv { a, out } = *g {
            roots[out as usize] = roots[a as usize] ^ (1 << 31);
        }
    }
    roots
}

fn and_kind(roots: &[u32], a: WireId, b: WireId) -> AndKind {
    let (ra, rb) = (roots[a as usize], roots[b as usize]);
    if ra == rb {
        AndKind::Copy
    } else if ra ^ rb == 1 << 31 {
        AndKind::Zero
    } else {
        AndKind::Normal
    }
}

/// Where the mask of the `n`-th AND gate goes: a new byte before even gates.
fn mask_byte_first(n: u64) -> bool {
    n % 2 == 0
}

enum GarbleJob {
    And {
        gate: u64,
        a: WireId,
        b: WireId,
        out: WireId,
        pos: usize,
        mask_pos: usize,
        high: bool,
    },
    Xor {
        gate: u64,
        a: WireId,
        b: WireId,
        out: WireId,
        pos: usize,
    },
}

/// The `prf` garbler.
pub struct PrfGarbler<'c> {
    circuit: &'c Circuit,
    backend: Backend,
    prg: Prg,
    /// `[k^0, k^1]` of every wire.
    labels: Vec<[Block; 2]>,
    roots: Vec<u32>,
    next_gate: usize,
    and_count: u64,
    mask_pos: usize,
    pending: Pending,
    jobs: Vec<GarbleJob>,
    and_keys: Vec<Block>,
    and_blocks: Vec<Block>,
    xor_keys: Vec<Block>,
    xor_blocks: Vec<Block>,
}

impl<'c> PrfGarbler<'c> {
    /// A garbler with fresh, independent input labels from `prg`.
    pub fn new(circuit: &'c Circuit, prg: &mut Prg, backend: Backend) -> Self {
        let mut own = Prg::new(prg.block());
        let mut labels = vec![[Block::ZERO; 2]; circuit.num_wires() as usize];
        for l in labels.iter_mut().take(circuit.n_inputs()) {
            let k0 = own.block();
            let k1 = own.block().with_lsb(!k0.lsb());
            *l = [k0, k1];
        }
        PrfGarbler {
            circuit,
            backend,
            prg: own,
            labels,
            roots: label_roots(circuit),
            next_gate: 0,
            and_count: 0,
            mask_pos: 0,
            pending: Pending::new(circuit.num_wires()),
            jobs: Vec::with_capacity(MAX_BATCH),
            and_keys: Vec::with_capacity(4 * MAX_BATCH),
            and_blocks: Vec::with_capacity(8 * MAX_BATCH),
            xor_keys: Vec::with_capacity(4 * MAX_BATCH),
            xor_blocks: Vec::with_capacity(4 * MAX_BATCH),
        }
    }

    /// The label of wire `w` whose lsb is `s`.
    #[inline(always)]
    fn by_signal(&self, w: WireId, s: usize) -> Block {
        let l = self.labels[w as usize];
        l[s ^ usize::from(l[0].lsb())]
    }

    fn flush(&mut self, out: &mut [u8]) {
        if self.jobs.is_empty() {
            return;
        }
        self.and_keys.clear();
        self.and_blocks.clear();
        self.xor_keys.clear();
        self.xor_blocks.clear();
        for job in &self.jobs {
            match *job {
                GarbleJob::And { gate, a, b, .. } => {
                    for alpha in 0..2 {
                        self.and_keys.push(self.by_signal(a, alpha));
                        let r = 2 * alpha as u32;
                        self.and_blocks
                            .extend_from_slice(&[blk(gate, r), blk(gate, r + 1)]);
                    }
                    for beta in 0..2 {
                        self.and_keys.push(self.by_signal(b, beta));
                        let r = beta as u32;
                        self.and_blocks
                            .extend_from_slice(&[blk(gate, r), blk(gate, 2 + r)]);
                    }
                }
                GarbleJob::Xor { gate, a, b, .. } => {
                    for s in 0..2 {
                        self.xor_keys.push(self.by_signal(a, s));
                        self.xor_blocks.push(blk(gate, s as u32));
                    }
                    for s in 0..2 {
                        self.xor_keys.push(self.by_signal(b, s));
                        self.xor_blocks.push(blk(gate, s as u32));
                    }
                }
            }
        }
        encrypt_under_keys(self.backend, &self.and_keys, &mut self.and_blocks, 2);
        encrypt_under_keys(self.backend, &self.xor_keys, &mut self.xor_blocks, 1);
        let (mut ia, mut ix) = (0, 0);
        for job in std::mem::take(&mut self.jobs) {
            match job {
                GarbleJob::And {
                    a,
                    b,
                    out: c,
                    pos,
                    mask_pos,
                    high,
                    ..
                } => {
                    let f = &self.and_blocks[8 * ia..8 * ia + 8];
                    ia += 1;
                    let pc = self.prg.next_u32() & 1 == 1;
                    let (t1, t2, m, kc) = garble_and(
                        self.labels[a as usize],
                        self.labels[b as usize],
                        [f[0], f[1], f[2], f[3]],
                        [f[4], f[5], f[6], f[7]],
                        pc,
                    );
                    out[pos..pos + 16].copy_from_slice(&t1.to_bytes());
                    out[pos + 16..pos + 32].copy_from_slice(&t2.to_bytes());
                    out[mask_pos] |= if high { m << 4 } else { m };
                    self.labels[c as usize] = kc;
                }
                GarbleJob::Xor {
                    a, b, out: c, pos, ..
                } => {
                    let f = &self.xor_blocks[4 * ix..4 * ix + 4];
                    ix += 1;
                    let (pa, pb) = (
                        self.labels[a as usize][0].lsb(),
                        self.labels[b as usize][0].lsb(),
                    );
                    let (t, kc) = garble_xor(pa, pb, [f[0], f[1]], [f[2], f[3]]);
                    out[pos..pos + 16].copy_from_slice(&t.to_bytes());
                    self.labels[c as usize] = kc;
                }
            }
        }
        self.pending.clear();
    }
}

impl Garble for PrfGarbler<'_> {
    fn input_labels(&self, wire: WireId) -> [Block; 2] {
        self.labels[wire as usize]
    }

    fn garble(&mut self, out: &mut Vec<u8>, target: usize) -> bool {
        let gates = self.circuit.gates();
        let start = out.len();
        // A batch ends only after an odd-numbered AND gate, so that a mask byte is complete.
        while self.next_gate < gates.len()
            && (out.len() - start < target || !mask_byte_first(self.and_count))
        {
            let gate = gates[self.next_gate];
            let g = self.next_gate as u64;
            let (a, b) = gate.inputs();
            if self.pending.any(a, b) {
                self.flush(&mut out[start..]);
            }
            match gate {
                Gate::Inv { a, out: c } => {
                    let [k0, k1] = self.labels[a as usize];
                    self.labels[c as usize] = [k1, k0];
                }
                Gate::Xor { a, b, out: c } => {
                    self.jobs.push(GarbleJob::Xor {
                        gate: g,
                        a,
                        b,
                        out: c,
                        pos: out.len() - start,
                    });
                    out.resize(out.len() + XOR_BYTES, 0);
                    self.pending.mark(c);
                }
                Gate::And { a, b, out: c } => {
                    let high = !mask_byte_first(self.and_count);
                    if !high {
                        self.mask_pos = out.len() - start;
                        out.push(0);
                    }
                    let pos = out.len() - start;
                    out.resize(out.len() + AND_BYTES, 0);
                    self.and_count += 1;
                    match and_kind(&self.roots, a, b) {
                        AndKind::Normal => {
                            self.jobs.push(GarbleJob::And {
                                gate: g,
                                a,
                                b,
                                out: c,
                                pos,
                                mask_pos: self.mask_pos,
                                high,
                            });
                            self.pending.mark(c);
                        }
                        AndKind::Copy => self.labels[c as usize] = self.labels[a as usize],
                        AndKind::Zero => {
                            let k0 = self.prg.block();
                            let k1 = self.prg.block().with_lsb(!k0.lsb());
                            self.labels[c as usize] = [k0, k1];
                            out[start + pos..start + pos + 16].copy_from_slice(&k0.to_bytes());
                        }
                    }
                }
            }
            if self.jobs.len() == MAX_BATCH {
                self.flush(&mut out[start..]);
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
            .flat_map(|o| o.wires.iter().map(|&w| self.labels[w as usize][0].lsb()))
            .collect()
    }
}

enum EvalJob {
    And {
        gate: u64,
        out: WireId,
        la: Block,
        lb: Block,
        t1: Block,
        t2: Block,
        m: u8,
    },
    Xor {
        gate: u64,
        out: WireId,
        la: Block,
        lb: Block,
        t: Block,
    },
}

/// The `prf` evaluator.
pub struct PrfEvaluator<'c> {
    circuit: &'c Circuit,
    backend: Backend,
    labels: Vec<Block>,
    roots: Vec<u32>,
    next_gate: usize,
    and_count: u64,
    /// The high nibble of the last mask byte read, for the next (odd) AND gate.
    next_mask: u8,
    pending: Pending,
    jobs: Vec<EvalJob>,
    and_keys: Vec<Block>,
    and_blocks: Vec<Block>,
    xor_keys: Vec<Block>,
    xor_blocks: Vec<Block>,
}

impl<'c> PrfEvaluator<'c> {
    /// An evaluator holding one label per input wire.
    pub fn new(circuit: &'c Circuit, inputs: &[Block], backend: Backend) -> Self {
        assert_eq!(inputs.len(), circuit.n_inputs(), "one label per input wire");
        let mut labels = vec![Block::ZERO; circuit.num_wires() as usize];
        labels[..inputs.len()].copy_from_slice(inputs);
        PrfEvaluator {
            circuit,
            backend,
            labels,
            roots: label_roots(circuit),
            next_gate: 0,
            and_count: 0,
            next_mask: 0,
            pending: Pending::new(circuit.num_wires()),
            jobs: Vec::with_capacity(MAX_BATCH),
            and_keys: Vec::with_capacity(2 * MAX_BATCH),
            and_blocks: Vec::with_capacity(2 * MAX_BATCH),
            xor_keys: Vec::with_capacity(2 * MAX_BATCH),
            xor_blocks: Vec::with_capacity(2 * MAX_BATCH),
        }
    }

    fn flush(&mut self) {
        if self.jobs.is_empty() {
            return;
        }
        self.and_keys.clear();
        self.and_blocks.clear();
        self.xor_keys.clear();
        self.xor_blocks.clear();
        for job in &self.jobs {
            match *job {
                EvalJob::And { gate, la, lb, .. } => {
                    let r = 2 * u32::from(la.lsb()) + u32::from(lb.lsb());
                    self.and_keys.extend_from_slice(&[la, lb]);
                    self.and_blocks
                        .extend_from_slice(&[blk(gate, r), blk(gate, r)]);
                }
                EvalJob::Xor { gate, la, lb, .. } => {
                    self.xor_keys.extend_from_slice(&[la, lb]);
                    self.xor_blocks.extend_from_slice(&[
                        blk(gate, u32::from(la.lsb())),
                        blk(gate, u32::from(lb.lsb())),
                    ]);
                }
            }
        }
        encrypt_under_keys(self.backend, &self.and_keys, &mut self.and_blocks, 1);
        encrypt_under_keys(self.backend, &self.xor_keys, &mut self.xor_blocks, 1);
        let (mut ia, mut ix) = (0, 0);
        for job in &self.jobs {
            match *job {
                EvalJob::And {
                    out,
                    la,
                    lb,
                    t1,
                    t2,
                    m,
                    ..
                } => {
                    let k = self.and_blocks[2 * ia] ^ self.and_blocks[2 * ia + 1];
                    ia += 1;
                    self.labels[out as usize] = eval_and(la, lb, k, t1, t2, m);
                }
                EvalJob::Xor { out, la, lb, t, .. } => {
                    let (fa, fb) = (self.xor_blocks[2 * ix], self.xor_blocks[2 * ix + 1]);
                    ix += 1;
                    self.labels[out as usize] = eval_xor(la, lb, fa, fb, t);
                }
            }
        }
        self.jobs.clear();
        self.pending.clear();
    }
}

impl Evaluate for PrfEvaluator<'_> {
    fn feed(&mut self, bytes: &[u8]) -> Result<usize, EvalError> {
        let gates = self.circuit.gates();
        let mut used = 0;
        while self.next_gate < gates.len() {
            let gate = gates[self.next_gate];
            let g = self.next_gate as u64;
            let (a, b) = gate.inputs();
            if self.pending.any(a, b) {
                self.flush();
            }
            match gate {
                Gate::Inv { a, out } => self.labels[out as usize] = self.labels[a as usize],
                Gate::Xor { a, b, out } => {
                    let Some(t) = bytes.get(used..used + XOR_BYTES) else {
                        break;
                    };
                    used += XOR_BYTES;
                    self.jobs.push(EvalJob::Xor {
                        gate: g,
                        out,
                        la: self.labels[a as usize],
                        lb: self.labels[b as usize],
                        t: Block::read(t),
                    });
                    self.pending.mark(out);
                }
                Gate::And { a, b, out } => {
                    let first = mask_byte_first(self.and_count);
                    let need = AND_BYTES + usize::from(first);
                    let Some(table) = bytes.get(used..used + need) else {
                        break;
                    };
                    used += need;
                    let (m, table) = if first {
                        self.next_mask = table[0] >> 4;
                        (table[0] & 0xf, &table[1..])
                    } else {
                        (self.next_mask, table)
                    };
                    self.and_count += 1;
                    let (t1, t2) = (Block::read(&table[..16]), Block::read(&table[16..]));
                    match and_kind(&self.roots, a, b) {
                        AndKind::Normal => {
                            self.jobs.push(EvalJob::And {
                                gate: g,
                                out,
                                la: self.labels[a as usize],
                                lb: self.labels[b as usize],
                                t1,
                                t2,
                                m,
                            });
                            self.pending.mark(out);
                        }
                        AndKind::Copy => self.labels[out as usize] = self.labels[a as usize],
                        AndKind::Zero => self.labels[out as usize] = t1,
                    }
                }
            }
            if self.jobs.len() == MAX_BATCH {
                self.flush();
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
