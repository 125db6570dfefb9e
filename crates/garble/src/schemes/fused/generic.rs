//! The half-gates AND kernels, written once for every register width ([`Register`]:
//! AES-NI's one block, 256-bit VAES's two, ARMv8's one) and for both half-gates hashes
//! ([`GateHash`]: `ideal`'s fixed-key TCCR, [`FixedKey`], and `circular`'s label-keyed AES,
//! [`KeyedByLabel`], whose key schedules interleave as the per-key kernels'): each group of
//! `G` independent gates reads its labels from their slots, makes the hashes' inputs and
//! tweaks in registers (`R` of them: `4G` blocks for the garbler, `2G` for the evaluator),
//! hashes them, and writes tables and output labels, so that nothing is staged in memory
//! (what fusing saves is in the `x86` module's docs).
//!
//! A last group of fewer than `G` gates still runs all `R` registers, the others on zeros:
//! with fewer chains in flight the AES latency, not its throughput, would bound it.
//!
//! The VAES backends have kernels of their own (`x86`, `x86`'s `ymm`), which build a gate's
//! hash inputs in wide registers with whole-register shuffles instead of lane by lane;
//! here the 256-bit register serves the staged path's TCCR hashes (`tccr_and_gates`).

use transputation_core::aes::register::{keys_core, tccr_core, Label, Register};
use transputation_core::Block;

use crate::schemes::half_gates::hash::tweaks_of;
use crate::schemes::waves::unpack_slots;

/// The hash `H(X, t)` of the half-gates schemes, as the kernels compute it in registers.
pub(super) trait GateHash<V: Register>: Copy {
    /// Hashes the `R * BLOCKS` inputs in `x` (lane by lane) under `tweaks`, in place.
    fn hash<const R: usize>(&self, t: V::Token, x: &mut [V; R], tweaks: &[u64]);
}

/// `ideal`'s TCCR hash `π(π(X) ⊕ tw(t)) ⊕ π(X)`, `π` under the broadcast round keys.
#[derive(Clone, Copy)]
pub(super) struct FixedKey<'a, V>(pub &'a [V; 11]);

impl<V: Register> GateHash<V> for FixedKey<'_, V> {
    #[inline(always)]
    fn hash<const R: usize>(&self, t: V::Token, x: &mut [V; R], tweaks: &[u64]) {
        let mut tw = [V::zero(t); R];
        for (r, tw) in tw.iter_mut().enumerate() {
            *tw = V::tweaks(t, &tweaks[r * V::BLOCKS..]);
        }
        tccr_core(self.0, x, &tw);
    }
}

/// `circular`'s hash `AES_X(tw(t))`, `tw(t)` = LE64(t) in bytes 0..7 (docs/garbling.md §4):
/// the inputs are the keys, their schedules interleaved.
#[derive(Clone, Copy)]
pub(super) struct KeyedByLabel;

impl<V: Register> GateHash<V> for KeyedByLabel {
    #[inline(always)]
    fn hash<const R: usize>(&self, t: V::Token, x: &mut [V; R], tweaks: &[u64]) {
        let lt = V::lane_token(t);
        let mut s = [[V::zero(t)]; R];
        let mut lanes = [V::Lane::zero(lt); 4];
        for (r, s) in s.iter_mut().enumerate() {
            for (i, l) in lanes.iter_mut().take(V::BLOCKS).enumerate() {
                *l = V::Lane::from_halves(lt, tweaks[r * V::BLOCKS + i], 0);
            }
            s[0] = V::from_lanes(&lanes);
        }
        keys_core(x, &mut s);
        for (x, s) in x.iter_mut().zip(&s) {
            *x = s[0];
        }
    }
}

/// The registers of `lanes` (`R * BLOCKS` of them).
#[inline(always)]
fn pack<V: Register, const R: usize>(t: V::Token, lanes: &[V::Lane]) -> [V; R] {
    let mut s = [V::zero(t); R];
    for (r, s) in s.iter_mut().enumerate() {
        *s = V::from_lanes(&lanes[r * V::BLOCKS..]);
    }
    s
}

/// Lane `i` of the blocks held by registers `s`, in order.
#[inline(always)]
fn lane<V: Register, const R: usize>(s: &[V; R], i: usize) -> V::Lane {
    s[i / V::BLOCKS].lane(i % V::BLOCKS)
}

/// The 32 bytes of `window` at `pos` as its two halves (panics past its end, like any slice
/// index).
#[inline(always)]
fn table_halves(window: &mut [u8], pos: u32) -> (&mut [u8; 16], &mut [u8; 16]) {
    let pos = pos as usize;
    let (lo, hi) = window[pos..pos + 32].split_at_mut(16);
    (
        lo.try_into().expect("16 bytes"),
        hi.try_into().expect("16 bytes"),
    )
}

/// As [`table_halves`], to read.
#[inline(always)]
fn table_read(window: &[u8], pos: u32) -> (&[u8; 16], &[u8; 16]) {
    let pos = pos as usize;
    let (lo, hi) = window[pos..pos + 32].split_at(16);
    (
        lo.try_into().expect("16 bytes"),
        hi.try_into().expect("16 bytes"),
    )
}

/// Garbles the at most `G` AND gates of `(ands, index, first)` (see
/// `fused::garble_and_gates`), `R = 4G / BLOCKS` registers of hash inputs: every input is
/// read before any output is written.
#[inline(always)]
fn garble_group<V: Register, H: GateHash<V>, const G: usize, const R: usize>(
    t: V::Token,
    h: H,
    (delta, tweak_base): (V::Lane, u64),
    zero: &mut [Block],
    (ands, index, first): (&[u64], &[u32], u32),
    window: &mut [u8],
) {
    debug_assert_eq!(R * V::BLOCKS, 4 * G);
    let lt = V::lane_token(t);
    let z = V::Lane::zero(lt);
    let n = ands.len().min(G);
    // Per gate (a0, a0 ⊕ Δ, b0, b0 ⊕ Δ) and the tweaks (j, j, j', j').
    let (mut x, mut tw) = ([[z; 4]; G], [[0; 4]; G]);
    for g in 0..n {
        let (a, b, _) = unpack_slots(ands[g]);
        let (a0, b0) = (V::Lane::load(lt, &zero[a]), V::Lane::load(lt, &zero[b]));
        x[g] = [a0, a0.xor(delta), b0, b0.xor(delta)];
        let (j, j2) = tweaks_of(tweak_base, index[g]);
        tw[g] = [j, j, j2, j2];
    }
    let mut s = pack::<V, R>(t, x.as_flattened());
    h.hash(t, &mut s, tw.as_flattened());
    for g in 0..n {
        let [a0, _, b0, _] = x[g];
        let h = |i: usize| lane(&s, 4 * g + i);
        let (h0, h2) = (h(0), h(2));
        let (d01, d23) = (h0.xor(h(1)), h2.xor(h(3)));
        let (ma, mb) = (a0.lsb_mask(), b0.lsb_mask());
        // `half_gates::garble_and`: TG = h0 ⊕ h1 ⊕ pb·Δ, TE = h2 ⊕ h3 ⊕ a0,
        // C0 = h0 ⊕ pa·TG ⊕ h2 ⊕ pb·(h2 ⊕ h3).
        let tg = d01.xor(delta.and(mb));
        let te = d23.xor(a0);
        let c0 = h0.xor(h2).xor(tg.and(ma)).xor(d23.and(mb));
        // The output slot unpacked again rather than kept from the first loop: an array of
        // slots held across the hash measured slower (evaluating on `aes-ni`, MinCut size:
        // 11.6 against 10.6 ns per AND gate).
        let (_, _, out) = unpack_slots(ands[g]);
        let (lo, hi) = table_halves(window, 32 * (index[g] - first));
        tg.store_bytes(lo);
        te.store_bytes(hi);
        c0.store(&mut zero[out]);
    }
}

/// The half-gates garbler's AND gates, fused (see `fused::garble_and_gates`), `G` gates at a
/// time in `R = 4G / BLOCKS` registers.
#[inline(always)]
pub(super) fn garble_and_gates<V: Register, H: GateHash<V>, const G: usize, const R: usize>(
    t: V::Token,
    h: H,
    (delta, tweak_base): (Block, u64),
    zero: &mut [Block],
    (ands, index, first): (&[u64], &[u32], u32),
    window: &mut [u8],
) {
    let delta = V::Lane::load(V::lane_token(t), &delta);
    for (a, n) in ands.chunks(G).zip(index.chunks(G)) {
        garble_group::<V, H, G, R>(t, h, (delta, tweak_base), zero, (a, n, first), window);
    }
}

/// Evaluates the at most `G` AND gates of `(ands, index, first)` (see
/// `fused::eval_and_gates`), `R = 2G / BLOCKS` registers of hash inputs: every input is read
/// before any output is written.
#[inline(always)]
fn eval_group<V: Register, H: GateHash<V>, const G: usize, const R: usize>(
    t: V::Token,
    h: H,
    tweak_base: u64,
    labels: &mut [Block],
    (ands, index, first): (&[u64], &[u32], u32),
    window: &[u8],
) {
    debug_assert_eq!(R * V::BLOCKS, 2 * G);
    let lt = V::lane_token(t);
    let z = V::Lane::zero(lt);
    let n = ands.len().min(G);
    let (mut x, mut tw) = ([[z; 2]; G], [[0; 2]; G]);
    for g in 0..n {
        let (a, b, _) = unpack_slots(ands[g]);
        x[g] = [V::Lane::load(lt, &labels[a]), V::Lane::load(lt, &labels[b])];
        let (j, j2) = tweaks_of(tweak_base, index[g]);
        tw[g] = [j, j2];
    }
    let mut s = pack::<V, R>(t, x.as_flattened());
    h.hash(t, &mut s, tw.as_flattened());
    for g in 0..n {
        let [a, b] = x[g];
        let (ha, hb) = (lane(&s, 2 * g), lane(&s, 2 * g + 1));
        let (lo, hi) = table_read(window, 32 * (index[g] - first));
        let (tg, te) = (V::Lane::load_bytes(lt, lo), V::Lane::load_bytes(lt, hi));
        // `half_gates::eval_and`: (H(a) ⊕ sa·TG) ⊕ (H(b) ⊕ sb·(TE ⊕ a)).
        let out = ha
            .xor(tg.and(a.lsb_mask()))
            .xor(hb)
            .xor(te.xor(a).and(b.lsb_mask()));
        // Unpacked again, as in `garble_group`.
        let (_, _, o) = unpack_slots(ands[g]);
        out.store(&mut labels[o]);
    }
}

/// The half-gates evaluator's AND gates, fused (see `fused::eval_and_gates`), `G` gates at a
/// time in `R = 2G / BLOCKS` registers.
#[inline(always)]
pub(super) fn eval_and_gates<V: Register, H: GateHash<V>, const G: usize, const R: usize>(
    t: V::Token,
    h: H,
    tweak_base: u64,
    labels: &mut [Block],
    (ands, index, first): (&[u64], &[u32], u32),
    window: &[u8],
) {
    for (a, n) in ands.chunks(G).zip(index.chunks(G)) {
        eval_group::<V, H, G, R>(t, h, tweak_base, labels, (a, n, first), window);
    }
}

/// The four TCCR hashes of each half-gates AND gate (see `fused::tccr_and_gates`), `G`
/// gates at a time in `R = 4G / BLOCKS` registers.
#[inline(always)]
pub(super) fn tccr_and_gates<V: Register, const G: usize, const R: usize>(
    t: V::Token,
    k: &[V; 11],
    delta: Block,
    (inputs, and_index, tweak_base): (&[[Block; 2]], &[u32], u64),
    out: &mut [[Block; 4]],
) {
    let lt = V::lane_token(t);
    let (z, delta) = (V::Lane::zero(lt), V::Lane::load(lt, &delta));
    let groups = inputs.chunks(G).zip(and_index.chunks(G));
    for ((ins, idx), out) in groups.zip(out.chunks_mut(G)) {
        let (mut x, mut tw) = ([[z; 4]; G], [[0; 4]; G]);
        for (g, (&[a0, b0], &n)) in ins.iter().zip(idx).enumerate() {
            let (a0, b0) = (V::Lane::load(lt, &a0), V::Lane::load(lt, &b0));
            x[g] = [a0, a0.xor(delta), b0, b0.xor(delta)];
            let (j, j2) = tweaks_of(tweak_base, n);
            tw[g] = [j, j, j2, j2];
        }
        let mut s = pack::<V, R>(t, x.as_flattened());
        FixedKey(k).hash(t, &mut s, tw.as_flattened());
        for (g, o) in out.iter_mut().enumerate() {
            for (i, o) in o.iter_mut().enumerate() {
                lane(&s, 4 * g + i).store(o);
            }
        }
    }
}

/// The two TCCR hashes of each evaluated AND gate (see `fused::tccr_eval_gates`), `G` gates
/// at a time in `R = 2G / BLOCKS` registers.
#[inline(always)]
pub(super) fn tccr_eval_gates<V: Register, const G: usize, const R: usize>(
    t: V::Token,
    k: &[V; 11],
    (inputs, and_index, tweak_base): (&[[Block; 2]], &[u32], u64),
    out: &mut [[Block; 2]],
) {
    let lt = V::lane_token(t);
    let z = V::Lane::zero(lt);
    let groups = inputs.chunks(G).zip(and_index.chunks(G));
    for ((ins, idx), out) in groups.zip(out.chunks_mut(G)) {
        let (mut x, mut tw) = ([[z; 2]; G], [[0; 2]; G]);
        for (g, (&[a, b], &n)) in ins.iter().zip(idx).enumerate() {
            x[g] = [V::Lane::load(lt, &a), V::Lane::load(lt, &b)];
            let (j, j2) = tweaks_of(tweak_base, n);
            tw[g] = [j, j2];
        }
        let mut s = pack::<V, R>(t, x.as_flattened());
        FixedKey(k).hash(t, &mut s, tw.as_flattened());
        for (g, o) in out.iter_mut().enumerate() {
            for (i, o) in o.iter_mut().enumerate() {
                lane(&s, 2 * g + i).store(o);
            }
        }
    }
}
