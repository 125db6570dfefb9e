//! `prf`'s fused garbling kernels written once for every register width ([`Register`]): a
//! group of `G` independent gates, their labels ordered by signal bit as the keys of `4G`
//! PRF calls (`KR = 4G / BLOCKS` key registers, with two block registers each for AND gates
//! and one for XOR gates), the PRF inputs made in registers from the gate index, the key
//! schedules interleaved (`register::keys_core`), then each gate's table and output labels
//! from the PRF values as `prf::gates` computes them (docs/garbling.md §2.3, §2.5), without
//! a branch on a permute bit.
//!
//! The evaluator's kernel ([`prf_eval_gates`]) takes a group's AND and XOR gates alike:
//! each makes two PRF calls of one block, under its two held labels.
//!
//! A last group of fewer than `G` gates runs its unused keys on zeros, as latency would
//! otherwise bound it. The 512-bit VAES backend has its own garbling kernels (`x86`).

use core::ops::Range;

use transputation_core::aes::register::{keys_core, Label, Register};
use transputation_core::Block;

use super::{set_nibble, PrfEvalOp, PrfOp};

/// The PRF input `blk(g, r)`: `g` in the low 64 bits, the row tag `r` in bits 96..128.
#[inline(always)]
fn blk<L: Label>(t: L::Token, g: u64, r: u64) -> L {
    L::from_halves(t, g, r << 32)
}

/// A wire's labels `[k^0, k^1]` ordered by signal bit, and its permute bit (the lsb of
/// `k^0`).
#[inline(always)]
fn by_signals<L: Label>(t: L::Token, labels: &[Block; 2]) -> ([L; 2], bool) {
    let (k0, k1) = (L::load(t, &labels[0]), L::load(t, &labels[1]));
    let p = k0.lsb();
    let swap = L::select(p, L::zero(t), k0.xor(k1));
    ([k0.xor(swap), k1.xor(swap)], p)
}

/// Stores a wire's labels `[k^0, k^1]`.
#[inline(always)]
fn store_labels<L: Label>(labels: &mut [Block; 2], k: [L; 2]) {
    let [l0, l1] = labels;
    k[0].store(l0);
    k[1].store(l1);
}

/// The 16 bytes of `out` at `at`.
#[inline(always)]
fn bytes16(out: &mut [u8], at: usize) -> &mut [u8; 16] {
    (&mut out[at..at + 16]).try_into().expect("16 bytes")
}

/// As [`bytes16`], to read.
#[inline(always)]
fn read16(window: &[u8], at: usize) -> &[u8; 16] {
    window[at..at + 16].try_into().expect("16 bytes")
}

/// Encrypts the block registers `s` under key registers made of `keys` (`KR * BLOCKS`
/// lanes), register `r`'s `p`-th block register under key register `r`; writes the results
/// lane by lane to `out[P * key + p]`.
#[inline(always)]
fn under_key_lanes<V: Register, const KR: usize, const P: usize>(
    t: V::Token,
    keys: &[V::Lane],
    mut s: [[V; P]; KR],
    out: &mut [V::Lane],
) {
    let b = V::BLOCKS;
    let mut k = [V::zero(t); KR];
    for (r, kr) in k.iter_mut().enumerate() {
        *kr = V::from_lanes(&keys[r * b..]);
    }
    keys_core(&k, &mut s);
    for (r, sr) in s.iter().enumerate() {
        for (p, x) in sr.iter().enumerate() {
            for i in 0..b {
                out[P * (r * b + i) + p] = x.lane(i);
            }
        }
    }
}

/// Encrypts `blocks[P * key + p]` under `keys[key]` (`KR * BLOCKS` keys, `P` blocks each),
/// the blocks packed into registers lane by lane; the results to `out` in the same order.
#[inline(always)]
fn prf_calls<V: Register, const KR: usize, const P: usize>(
    t: V::Token,
    keys: &[V::Lane],
    blocks: &[V::Lane],
    out: &mut [V::Lane],
) {
    let b = V::BLOCKS;
    let mut s = [[V::zero(t); P]; KR];
    let mut lanes = [V::Lane::zero(V::lane_token(t)); 4];
    for (r, sr) in s.iter_mut().enumerate() {
        for (p, x) in sr.iter_mut().enumerate() {
            for (i, l) in lanes.iter_mut().take(b).enumerate() {
                *l = blocks[P * (r * b + i) + p];
            }
            *x = V::from_lanes(&lanes);
        }
    }
    under_key_lanes::<V, KR, P>(t, keys, s, out);
}

/// The rows `r` of a garbled AND gate's PRF inputs `blk(g, r)` under its four keys
/// `(ka[0], ka[1], kb[0], kb[1])`, two each: `ka[α]` rows `2α` and `2α + 1`, `kb[β]` rows
/// `β` and `2 + β`.
const AND_ROWS: [[u64; 2]; 4] = [[0, 1], [2, 3], [0, 2], [1, 3]];
/// The same of a garbled XOR gate, one each: `k[s]` row `s`.
const XOR_ROWS: [[u64; 1]; 4] = [[0], [1], [0], [1]];

/// As [`prf_calls`] for garbled gates, four keys each (`keys[4j..4j + 4]` of gate `j`), key
/// `k` of gate `j` encrypting `blk(gates[j], rows[k][p])` for `p < P`. The inputs are made
/// in whole registers, as `blk(g, 0) ⊕ blk(0, r)`: a gate's `blk(g, 0)` in every lane, the
/// row tags constant.
#[inline(always)]
fn gate_prf_calls<V: Register, const KR: usize, const P: usize>(
    t: V::Token,
    keys: &[V::Lane],
    gates: &[u64],
    rows: &[[u64; P]; 4],
    out: &mut [V::Lane],
) {
    let b = V::BLOCKS;
    debug_assert!(4 % b == 0);
    let lt = V::lane_token(t);
    // Registers per gate, and the tags of the inputs of register `q` of a gate.
    let per_gate = 4 / b;
    let mut tags = [[V::zero(t); P]; 4];
    for (q, tags) in tags.iter_mut().enumerate().take(per_gate) {
        for (p, tag) in tags.iter_mut().enumerate() {
            let mut lanes = [V::Lane::zero(lt); 4];
            for (i, l) in lanes.iter_mut().take(b).enumerate() {
                *l = blk(lt, 0, rows[q * b + i][p]);
            }
            *tag = V::from_lanes(&lanes);
        }
    }
    let mut s = [[V::zero(t); P]; KR];
    for (r, sr) in s.iter_mut().enumerate() {
        let base = V::splat(blk(lt, gates[r / per_gate], 0));
        for (x, &tag) in sr.iter_mut().zip(&tags[r % per_gate]) {
            *x = base.xor(tag);
        }
    }
    under_key_lanes::<V, KR, P>(t, keys, s, out);
}

/// Garbles `prf`'s AND gates `op(range)` (at most `G`; `KR = 4G / BLOCKS`): all their
/// inputs read, then all their outputs written.
#[inline(always)]
fn and_group<V: Register, const G: usize, const KR: usize>(
    t: V::Token,
    range: Range<usize>,
    op: &impl Fn(usize) -> PrfOp,
    labels: &mut [[Block; 2]],
    out: &mut [u8],
) {
    debug_assert!(KR * V::BLOCKS == 4 * G && V::BLOCKS <= 4);
    let lt = V::lane_token(t);
    let z = V::Lane::zero(lt);
    let mut ops = [PrfOp::default(); G];
    // Per gate the keys (ka[0], ka[1], kb[0], kb[1]) by signal bit, two PRF inputs each
    // ([`AND_ROWS`]).
    let (mut keys, mut gates) = ([[z; 4]; G], [0; G]);
    let mut permute = [(false, false); G];
    for (j, i) in range.clone().enumerate() {
        ops[j] = op(i);
        let (ka, pa) = by_signals(lt, &labels[ops[j].a as usize]);
        let (kb, pb) = by_signals(lt, &labels[ops[j].b as usize]);
        (keys[j], permute[j], gates[j]) = ([ka[0], ka[1], kb[0], kb[1]], (pa, pb), ops[j].g);
    }
    let mut f = [[z; 8]; G];
    let keys = keys.as_flattened();
    gate_prf_calls::<V, KR, 2>(t, keys, &gates, &AND_ROWS, f.as_flattened_mut());
    for ((gate, f), &(pa, pb)) in ops.iter().zip(&f).zip(&permute).take(range.len()) {
        let pc = gate.bit(PrfOp::PC);
        // fa[2α + β] = f[2α + β], fb[2β + α] = f[4 + 2β + α]; K[2α + β] = fa ⊕ fb.
        let mut kbar = [z; 4];
        let mut m = 0u8;
        for (r, kbar) in kbar.iter_mut().enumerate() {
            let (alpha, beta) = (r / 2, r % 2);
            let k = f[r].xor(f[4 + 2 * beta + alpha]);
            *kbar = k.with_lsb(false);
            let value = ((alpha == 1) ^ pa) & ((beta == 1) ^ pb);
            m |= u8::from(k.lsb() ^ pc ^ value) << r;
        }
        // T1 = K̄[2πa] ⊕ K̄[2πa + 1], T2 = K̄[πb] ⊕ K̄[2 + πb].
        let t1 = V::Lane::select(pa, kbar[0].xor(kbar[1]), kbar[2].xor(kbar[3]));
        let t2 = V::Lane::select(pb, kbar[0].xor(kbar[2]), kbar[1].xor(kbar[3]));
        let v00 = pa & pb;
        let first = kbar[0].with_lsb(pc ^ v00);
        let other = kbar[1].xor(kbar[2]).xor(kbar[3]).with_lsb(pc ^ !v00);
        let kc = [
            V::Lane::select(v00, first, other),
            V::Lane::select(v00, other, first),
        ];
        t1.store_bytes(bytes16(out, gate.table));
        t2.store_bytes(bytes16(out, gate.table + 16));
        set_nibble(out, gate.mask, gate.bit(PrfOp::HIGH), m);
        store_labels(&mut labels[gate.out as usize], kc);
    }
}

/// Garbles `prf`'s XOR gates `op(range)` (at most `G`; `KR = 4G / BLOCKS`), all inputs read
/// before any output is written.
#[inline(always)]
fn xor_group<V: Register, const G: usize, const KR: usize>(
    t: V::Token,
    range: Range<usize>,
    op: &impl Fn(usize) -> PrfOp,
    labels: &mut [[Block; 2]],
    out: &mut [u8],
) {
    debug_assert!(KR * V::BLOCKS == 4 * G && V::BLOCKS <= 4);
    let lt = V::lane_token(t);
    let z = V::Lane::zero(lt);
    let mut ops = [PrfOp::default(); G];
    // Per gate the keys (ka[0], ka[1], kb[0], kb[1]) by signal bit; k[s] encrypts blk(g, s).
    let (mut keys, mut gates) = ([[z; 4]; G], [0; G]);
    let mut permute = [false; G];
    for (j, i) in range.clone().enumerate() {
        ops[j] = op(i);
        let (ka, pa) = by_signals(lt, &labels[ops[j].a as usize]);
        let (kb, pb) = by_signals(lt, &labels[ops[j].b as usize]);
        (keys[j], permute[j], gates[j]) = ([ka[0], ka[1], kb[0], kb[1]], pa ^ pb, ops[j].g);
    }
    let mut f = [[z; 4]; G];
    let keys = keys.as_flattened();
    gate_prf_calls::<V, KR, 1>(t, keys, &gates, &XOR_ROWS, f.as_flattened_mut());
    for ((gate, &[ta0, ta1, tb0, tb1]), &pab) in ops.iter().zip(&f).zip(&permute).take(range.len())
    {
        // `prf::garble_xor`: D = Ã[0] ⊕ Ã[1], T = B̃[0] ⊕ B̃[1] ⊕ D,
        // k^0 = (Ã[0] ⊕ B̃[0] ⊕ (πa ⊕ πb)·D) with lsb πa ⊕ πb, k^1 = k^0 ⊕ D with lsb 1.
        let d = ta0.xor(ta1);
        let table = tb0.xor(tb1).xor(d);
        let w = ta0.xor(tb0);
        let k0 = V::Lane::select(pab, w, w.xor(d)).with_lsb(pab);
        let k1 = k0.xor(d.with_lsb(true));
        table.store_bytes(bytes16(out, gate.table));
        store_labels(&mut labels[gate.out as usize], [k0, k1]);
    }
}

/// `prf`'s AND gates (`AND`) or XOR gates `op(0..n)`, fused (see `fused::prf_garble_gates`),
/// `G` gates at a time in `KR = 4G / BLOCKS` key registers.
#[inline(always)]
pub(super) fn prf_garble_gates<V: Register, const AND: bool, const G: usize, const KR: usize>(
    t: V::Token,
    n: usize,
    op: impl Fn(usize) -> PrfOp,
    labels: &mut [[Block; 2]],
    out: &mut [u8],
) {
    for start in (0..n).step_by(G) {
        let group = start..(start + G).min(n);
        if AND {
            and_group::<V, G, KR>(t, group, &op, labels, out);
        } else {
            xor_group::<V, G, KR>(t, group, &op, labels, out);
        }
    }
}

/// Evaluates `prf`'s crypto gates `op(range)` (at most `G`; `KR = 2G / BLOCKS`): all their
/// inputs read, then all their outputs written.
#[inline(always)]
fn eval_group<V: Register, const G: usize, const KR: usize>(
    t: V::Token,
    range: Range<usize>,
    op: &impl Fn(usize) -> PrfEvalOp,
    labels: &mut [Block],
    window: &[u8],
) {
    debug_assert!(KR * V::BLOCKS == 2 * G && V::BLOCKS <= 4);
    let lt = V::lane_token(t);
    let z = V::Lane::zero(lt);
    let mut ops = [PrfEvalOp::default(); G];
    // Per gate the held labels (La, Lb), the keys, and their PRF inputs: blk(g, 2α + β)
    // under both for an AND gate, blk(g, α) and blk(g, β) for an XOR gate.
    let (mut keys, mut blocks) = ([[z; 2]; G], [[z; 2]; G]);
    for (j, i) in range.clone().enumerate() {
        ops[j] = op(i);
        let (la, lb) = (
            V::Lane::load(lt, &labels[ops[j].a as usize]),
            V::Lane::load(lt, &labels[ops[j].b as usize]),
        );
        let (alpha, beta) = (u64::from(la.lsb()), u64::from(lb.lsb()));
        let (ra, rb) = if ops[j].and {
            (2 * alpha + beta, 2 * alpha + beta)
        } else {
            (alpha, beta)
        };
        keys[j] = [la, lb];
        blocks[j] = [blk(lt, ops[j].g, ra), blk(lt, ops[j].g, rb)];
    }
    let mut f = [[z; 2]; G];
    prf_calls::<V, KR, 1>(
        t,
        keys.as_flattened(),
        blocks.as_flattened(),
        f.as_flattened_mut(),
    );
    for ((gate, &[la, lb]), &[fa, fb]) in ops.iter().zip(&keys).zip(&f).take(range.len()) {
        // `prf::eval_and`: K ⊕ β·T1 ⊕ α·T2 with lsb m_r ⊕ lsb(K), K = fa ⊕ fb;
        // `prf::eval_xor`: fa ⊕ fb ⊕ β·T with lsb α ⊕ β.
        let k = fa.xor(fb);
        let t1 = V::Lane::load_bytes(lt, read16(window, gate.table));
        let l = k.xor(t1.and(lb.lsb_mask()));
        let (alpha, beta) = (la.lsb(), lb.lsb());
        let out = if gate.and {
            let t2 = V::Lane::load_bytes(lt, read16(window, gate.table + 16));
            let r = 2 * u32::from(alpha) + u32::from(beta);
            let bit = (gate.m >> r) & 1 == 1;
            l.xor(t2.and(la.lsb_mask())).with_lsb(bit ^ k.lsb())
        } else {
            l.with_lsb(alpha ^ beta)
        };
        out.store(&mut labels[gate.out as usize]);
    }
}

/// `prf`'s crypto gates `op(0..n)` evaluated, fused (see `fused::prf_eval_gates`), `G` gates
/// at a time in `KR = 2G / BLOCKS` key registers.
#[inline(always)]
pub(super) fn prf_eval_gates<V: Register, const G: usize, const KR: usize>(
    t: V::Token,
    n: usize,
    op: impl Fn(usize) -> PrfEvalOp,
    labels: &mut [Block],
    window: &[u8],
) {
    for start in (0..n).step_by(G) {
        eval_group::<V, G, KR>(t, start..(start + G).min(n), &op, labels, window);
    }
}
