//! The half-gates AND kernels under the TCCR hash, written once for every register width
//! ([`Register`]: AES-NI's one block, 256-bit VAES's two, ARMv8's one): each group of `G`
//! independent gates reads its labels from their slots, makes the hashes' inputs and tweaks
//! in registers (`R` of them: `4G` blocks for the garbler, `2G` for the evaluator), hashes
//! them with the round keys broadcast once per call, and writes tables and output labels, so
//! that nothing is staged in memory (what fusing saves is in the `x86` module's docs).
//!
//! A last group of fewer than `G` gates still runs all `R` registers, the others on zeros:
//! with fewer chains in flight the AES latency, not its throughput, would bound it.
//!
//! The 512-bit VAES backend has its own kernels (`x86`), which build a gate's four inputs in
//! one register with AVX-512's shuffles.

use transputation_core::aes::register::{tccr_core, Label, Register};
use transputation_core::Block;

use crate::schemes::waves::unpack_slots;

/// The TCCR tweaks `j = 2(B + n) + 1` and `j' = j + 1` of an AND gate with AND index `n`
/// under the tweak base `B` (wrapping, as the staged path's `u64` arithmetic).
#[inline(always)]
fn and_tweaks(base: u64, n: u32) -> (u64, u64) {
    let j = base
        .wrapping_add(u64::from(n))
        .wrapping_mul(2)
        .wrapping_add(1);
    (j, j.wrapping_add(1))
}

/// The registers of `lanes` (`R * BLOCKS` of them) and of their tweaks.
#[inline(always)]
fn pack<V: Register, const R: usize>(
    t: V::Token,
    lanes: &[V::Lane],
    tweaks: &[u64],
) -> ([V; R], [V; R]) {
    let (mut s, mut tw) = ([V::zero(t); R], [V::zero(t); R]);
    for (r, (s, tw)) in s.iter_mut().zip(tw.iter_mut()).enumerate() {
        *s = V::from_lanes(&lanes[r * V::BLOCKS..]);
        *tw = V::tweaks(t, &tweaks[r * V::BLOCKS..]);
    }
    (s, tw)
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
fn garble_group<V: Register, const G: usize, const R: usize>(
    t: V::Token,
    k: &[V; 11],
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
        let (j, j2) = and_tweaks(tweak_base, index[g]);
        tw[g] = [j, j, j2, j2];
    }
    let (mut s, tws) = pack::<V, R>(t, x.as_flattened(), tw.as_flattened());
    tccr_core(k, &mut s, &tws);
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
pub(super) fn garble_and_gates<V: Register, const G: usize, const R: usize>(
    t: V::Token,
    k: &[V; 11],
    (delta, tweak_base): (Block, u64),
    zero: &mut [Block],
    (ands, index, first): (&[u64], &[u32], u32),
    window: &mut [u8],
) {
    let delta = V::Lane::load(V::lane_token(t), &delta);
    for (a, n) in ands.chunks(G).zip(index.chunks(G)) {
        garble_group::<V, G, R>(t, k, (delta, tweak_base), zero, (a, n, first), window);
    }
}

/// Evaluates the at most `G` AND gates of `(ands, index, first)` (see
/// `fused::eval_and_gates`), `R = 2G / BLOCKS` registers of hash inputs: every input is read
/// before any output is written.
#[inline(always)]
fn eval_group<V: Register, const G: usize, const R: usize>(
    t: V::Token,
    k: &[V; 11],
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
        let (j, j2) = and_tweaks(tweak_base, index[g]);
        tw[g] = [j, j2];
    }
    let (mut s, tws) = pack::<V, R>(t, x.as_flattened(), tw.as_flattened());
    tccr_core(k, &mut s, &tws);
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
        let (_, _, o) = unpack_slots(ands[g]);
        out.store(&mut labels[o]);
    }
}

/// The half-gates evaluator's AND gates, fused (see `fused::eval_and_gates`), `G` gates at a
/// time in `R = 2G / BLOCKS` registers.
#[inline(always)]
pub(super) fn eval_and_gates<V: Register, const G: usize, const R: usize>(
    t: V::Token,
    k: &[V; 11],
    tweak_base: u64,
    labels: &mut [Block],
    (ands, index, first): (&[u64], &[u32], u32),
    window: &[u8],
) {
    for (a, n) in ands.chunks(G).zip(index.chunks(G)) {
        eval_group::<V, G, R>(t, k, tweak_base, labels, (a, n, first), window);
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
            let (j, j2) = and_tweaks(tweak_base, n);
            tw[g] = [j, j, j2, j2];
        }
        let (mut s, tws) = pack::<V, R>(t, x.as_flattened(), tw.as_flattened());
        tccr_core(k, &mut s, &tws);
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
            let (j, j2) = and_tweaks(tweak_base, n);
            tw[g] = [j, j2];
        }
        let (mut s, tws) = pack::<V, R>(t, x.as_flattened(), tw.as_flattened());
        tccr_core(k, &mut s, &tws);
        for (g, o) in out.iter_mut().enumerate() {
            for (i, o) in o.iter_mut().enumerate() {
                lane(&s, 2 * g + i).store(o);
            }
        }
    }
}
