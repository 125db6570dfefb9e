//! A wide wave's crypto gates of `prf` on several threads (fine-grained parallelism; the
//! `parallel` module says why the bytes stay the same).
//!
//! Garbling: a wave's XOR gates, then its AND gates, are each cut into parts of nearly
//! equal counts. Each part copies its gates' label pairs from the shared table into a table
//! of its own (gate `i`'s inputs in slots `2i`, `2i + 1`, its output into `2i`), runs the
//! fused kernel (or the staged path) on it, and writes into its own slice of the output:
//! gates of one kind follow circuit order in a wave, so their tables are increasing, and a
//! part's slice runs from its first gate's bytes to the next part's. AND parts begin only
//! at an AND gate that opens a mask byte (an even AND index), so that the byte's two
//! nibbles, its own and the next AND gate's, are written by one part; a mask byte carried
//! from the window before lies before every cut, in the first part. The calling thread
//! writes the output labels back in op order.
//!
//! Evaluation reads the window and the labels before the wave only, so its parts are
//! plain ranges of the wave, each evaluated a chunk at a time into its own outputs.

use std::ops::Range;

use rayon::ThreadPool;

use transputation_core::aes::Backend;
use transputation_core::Block;

use crate::schemes::fused::{prf_garble_gates, PrfOp};
use crate::schemes::parallel::{cut_at, even_bounds, run_parts};

use super::eval_chunk::{Chunk, Wave};
use super::layout::CHUNK;
use super::staged::garble_staged;

/// One garbling part's buffers, kept between waves.
#[derive(Debug, Default)]
pub(super) struct Part {
    labels: Vec<[Block; 2]>,
    ops: Vec<PrfOp>,
}

/// Garbles the crypto gates `range` of one kind (`and`: AND gates, else XOR gates) of a
/// wave in `parts` parts on `pool`: `op(i)` is op `i` as the kernels take it (positions in
/// `out`), `opens(i)` whether AND gate `i` opens its mask byte. Labels are read from and
/// written to `labels`.
#[allow(clippy::too_many_arguments)]
pub(super) fn garble(
    (pool, parts): (&ThreadPool, usize),
    backend: Backend,
    and: bool,
    range: Range<usize>,
    op: &(impl Fn(usize) -> PrfOp + Sync),
    opens: impl Fn(usize) -> bool,
    labels: &mut [[Block; 2]],
    out: &mut [u8],
    buffers: &mut Vec<Part>,
) {
    let mut bounds = even_bounds(range.clone(), parts);
    if and {
        // Each cut moves on to the next AND gate that opens a byte.
        for p in 1..parts {
            let mut b = bounds[p].max(bounds[p - 1]);
            while b < range.end && !opens(b) {
                b += 1;
            }
            bounds[p] = b;
        }
        bounds.dedup();
    }
    let parts = bounds.len() - 1;
    // Where each part's bytes begin: its first gate's table (an AND gate's mask byte,
    // before it), the first part's at 0.
    let mut cuts: Vec<usize> = bounds[..parts]
        .iter()
        .map(|&b| {
            let o = op(b);
            if and {
                o.mask.min(o.table)
            } else {
                o.table
            }
        })
        .collect();
    cuts[0] = 0;
    cuts.push(usize::MAX);
    if buffers.len() < parts {
        buffers.resize_with(parts, Part::default);
    }
    let shared: &[[Block; 2]] = labels;
    let mut jobs: Vec<_> = buffers
        .iter_mut()
        .zip(bounds.windows(2))
        .zip(cut_at(out, &cuts))
        .zip(&cuts)
        .map(|(((part, r), out), &shift)| (part, r[0]..r[1], out, shift))
        .collect();
    run_parts(pool, &mut jobs, |(part, r, out, shift)| {
        garble_part(part, backend, and, (op, r.clone(), *shift), shared, out);
    });
    for (part, r, _, _) in &jobs {
        for (i, j) in r.clone().zip(0..) {
            labels[op(i).out as usize] = part.labels[2 * j];
        }
    }
}

/// One part of [`garble`]: the gates `range` from `op`, their positions less `shift`.
fn garble_part(
    part: &mut Part,
    backend: Backend,
    and: bool,
    (op, range, shift): (&(impl Fn(usize) -> PrfOp + Sync), Range<usize>, usize),
    labels: &[[Block; 2]],
    out: &mut [u8],
) {
    part.labels.clear();
    for i in range.clone() {
        let o = op(i);
        part.labels
            .extend([labels[o.a as usize], labels[o.b as usize]]);
    }
    let local = |j: usize| {
        let o = op(range.start + j);
        let slot = 2 * j as u32;
        PrfOp {
            table: o.table - shift,
            mask: if and { o.mask - shift } else { 0 },
            a: slot,
            b: slot + 1,
            out: slot,
            ..o
        }
    };
    let n = range.len();
    if !prf_garble_gates(backend, and, n, local, &mut part.labels, out) {
        part.ops.clear();
        part.ops.extend((0..n).map(local));
        if and {
            garble_staged::<true>(backend, &part.ops, &mut part.labels, out);
        } else {
            garble_staged::<false>(backend, &part.ops, &mut part.labels, out);
        }
    }
}

/// Evaluates the crypto gates `range` of `wave` from `labels` in `parts` parts on `pool`,
/// each part's output labels into the second of its `buffers` in op order; returns the
/// number of parts.
pub(super) fn evaluate(
    (pool, parts): (&ThreadPool, usize),
    wave: &Wave<'_>,
    labels: &[Block],
    range: Range<usize>,
    buffers: &mut Vec<(Chunk, Vec<Block>)>,
) -> usize {
    let bounds = even_bounds(range, parts);
    if buffers.len() < parts {
        buffers.resize_with(parts, Default::default);
    }
    let mut jobs: Vec<_> = buffers[..parts].iter_mut().zip(bounds.windows(2)).collect();
    run_parts(pool, &mut jobs, |((chunk, outs), r)| {
        outs.clear();
        for start in (r[0]..r[1]).step_by(CHUNK) {
            let part = start..(start + CHUNK).min(r[1]);
            wave.chunk(labels, part, chunk, |_, label| outs.push(label));
        }
    });
    parts
}
