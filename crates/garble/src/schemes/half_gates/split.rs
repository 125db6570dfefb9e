//! A wide wave's AND gates on several threads (fine-grained parallelism; the `parallel`
//! module says why the bytes stay the same). The wave's gates are cut into parts of nearly
//! equal counts; each part copies its gates' input labels from the shared table into a
//! table of its own, two slots per gate (`[a, b]` of gate `i` in slots `2i`, `2i + 1`, its
//! output into `2i`), runs the scheme's kernel on it, and writes its tables into its own
//! slice of the window's bytes: AND gates' tables follow their AND indices, so a part's
//! tables are one run of the window, split off with `split_at_mut`. The calling thread then
//! writes the output labels back in op order.

use std::ops::Range;

use rayon::ThreadPool;

use transputation_core::Block;

use crate::schemes::fused;
use crate::schemes::parallel::{cut_at, even_bounds, run_parts};
use crate::schemes::waves::{pack_slots, Op};

use super::gates::{eval_and, garble_and};
use super::hash::{HalfGateHash, HASH_CHUNK};

/// Gates per fused kernel call within a part: its local slots stay far below the packed
/// form's 2^21.
const SUB: usize = 1 << 12;

/// One part's buffers, kept between waves.
#[derive(Debug, Default)]
struct Part {
    /// Per gate, its input labels `[a, b]`; its output label replaces `a`.
    pairs: Vec<[Block; 2]>,
    index: Vec<u32>,
    hashes4: Vec<[Block; 4]>,
    hashes2: Vec<[Block; 2]>,
}

/// The buffers of a garbler's or evaluator's parts (none until a wave is first split).
#[derive(Debug, Default)]
pub(super) struct Split {
    parts: Vec<Part>,
}

/// `pack_slots(2i, 2i + 1, 2i)` for `i < SUB`: the local program of every part, made once.
fn local_program() -> &'static [u64] {
    static LOCAL: std::sync::OnceLock<Vec<u64>> = std::sync::OnceLock::new();
    LOCAL.get_or_init(|| {
        (0..SUB as u32)
            .map(|i| pack_slots(2 * i, 2 * i + 1, 2 * i))
            .collect()
    })
}

/// What a part works on: its gates, their tables' offsets in the window, and the offset of
/// its slice of the window.
struct Job<'a, W> {
    part: &'a mut Part,
    ops: &'a [Op],
    offsets: &'a [u32],
    shift: usize,
    window: W,
}

impl Split {
    /// The byte offsets at which the parts' slices of the window begin (the first at 0).
    fn cuts(ops: &[Op], offsets: &[u32], parts: usize) -> Vec<usize> {
        let bounds = even_bounds(0..ops.len(), parts);
        let mut cuts: Vec<usize> = bounds[..parts]
            .iter()
            .map(|&b| offsets[b] as usize)
            .collect();
        cuts[0] = 0;
        cuts.push(usize::MAX);
        cuts
    }

    /// Garbles the AND gates `ops` of one wave (tables at `offsets` of `window`) under
    /// `hash`, `Δ = delta` and tweak base `base` in `parts` parts on `pool`; the 0-labels
    /// are read from and written to `zero`.
    pub(super) fn garble<H: HalfGateHash>(
        &mut self,
        (pool, parts): (&ThreadPool, usize),
        hash: &H,
        (delta, base): (Block, u64),
        zero: &mut [Block],
        (ops, offsets): (&[Op], &[u32]),
        window: &mut [u8],
    ) {
        let cuts = Split::cuts(ops, offsets, parts);
        let windows = cut_at(window, &cuts);
        let local = local_program();
        let shared: &[Block] = zero;
        let mut jobs = Split::jobs_of(&mut self.parts, parts, (ops, offsets), windows, &cuts);
        run_parts(pool, &mut jobs, |job| {
            gather(job, shared);
            garble_part(job, hash, (delta, base), local);
        });
        write_back(&jobs, zero);
    }

    /// Evaluates the AND gates `ops` of one wave from `window` under `hash` and tweak base
    /// `base` in `parts` parts on `pool`; labels are read from and written to `labels`.
    pub(super) fn evaluate<H: HalfGateHash>(
        &mut self,
        (pool, parts): (&ThreadPool, usize),
        hash: &H,
        base: u64,
        labels: &mut [Block],
        (ops, offsets): (&[Op], &[u32]),
        window: &[u8],
    ) {
        let cuts = vec![0; parts];
        let windows = std::iter::repeat_n(window, parts);
        let local = local_program();
        let shared: &[Block] = labels;
        let mut jobs: Vec<Job<'_, &[u8]>> =
            Split::jobs_of(&mut self.parts, parts, (ops, offsets), windows, &cuts);
        run_parts(pool, &mut jobs, |job| {
            gather(job, shared);
            eval_part(job, hash, base, local);
        });
        write_back(&jobs, labels);
    }

    /// The jobs of `parts` parts of the wave `ops` (offsets `offsets`), with their slices
    /// of the window and the offsets `cuts` at which those begin.
    fn jobs_of<'a, W>(
        parts_buf: &'a mut Vec<Part>,
        parts: usize,
        (ops, offsets): (&'a [Op], &'a [u32]),
        windows: impl IntoIterator<Item = W>,
        cuts: &[usize],
    ) -> Vec<Job<'a, W>> {
        if parts_buf.len() < parts {
            parts_buf.resize_with(parts, Part::default);
        }
        let bounds = even_bounds(0..ops.len(), parts);
        parts_buf
            .iter_mut()
            .zip(bounds.windows(2))
            .zip(windows)
            .zip(cuts)
            .map(|(((part, r), window), &shift)| Job {
                part,
                ops: &ops[r[0]..r[1]],
                offsets: &offsets[r[0]..r[1]],
                shift,
                window,
            })
            .collect()
    }
}

/// Copies a part's input labels from the shared table.
fn gather<W>(job: &mut Job<'_, W>, table: &[Block]) {
    let part = &mut *job.part;
    part.pairs.clear();
    part.pairs.extend(
        job.ops
            .iter()
            .map(|op| [table[op.a as usize], table[op.b as usize]]),
    );
    part.index.clear();
    part.index.extend(job.ops.iter().map(|op| op.aux));
}

/// Writes the parts' output labels to `table`, in op order.
fn write_back<W>(jobs: &[Job<'_, W>], table: &mut [Block]) {
    for job in jobs {
        for (op, pair) in job.ops.iter().zip(&job.part.pairs) {
            table[op.out() as usize] = pair[0];
        }
    }
}

/// The sub-ranges of a part's `n` gates that one kernel call takes.
fn subs(n: usize, size: usize) -> impl Iterator<Item = Range<usize>> {
    (0..n).step_by(size).map(move |s| s..(s + size).min(n))
}

fn garble_part<H: HalfGateHash>(
    job: &mut Job<'_, &mut [u8]>,
    hash: &H,
    (delta, base): (Block, u64),
    local: &[u64],
) {
    let (Some(&n), Some(&off)) = (job.part.index.first(), job.offsets.first()) else {
        return;
    };
    // The AND index whose table would be at the start of the part's slice: tables are at
    // `32 · (n − first)` in it.
    let first = n - (off - job.shift as u32) / 32;
    let part = &mut *job.part;
    if let Some(aes) = hash.fused() {
        let mut ran = true;
        for r in subs(part.pairs.len(), SUB) {
            let table = part.pairs[r.clone()].as_flattened_mut();
            let ands = (&local[..r.len()], &part.index[r], first);
            ran &= fused::garble_and_gates(aes, delta, base, table, ands, job.window);
            if !ran {
                break;
            }
        }
        if ran {
            return;
        }
    }
    // The staged path (as the sequential garbler's chunks), from the part's copies.
    part.hashes4.resize(HASH_CHUNK / 4, [Block::ZERO; 4]);
    for r in subs(part.pairs.len(), HASH_CHUNK / 4) {
        let hashes = &mut part.hashes4[..r.len()];
        let inputs = &part.pairs[r.clone()];
        hash.hash_and_gates(delta, inputs, &part.index[r.clone()], base, hashes);
        for (i, &h) in r.zip(hashes.iter()) {
            let [a0, b0] = part.pairs[i];
            let (tg, te, c0) = garble_and(a0, b0, delta, h);
            let pos = job.offsets[i] as usize - job.shift;
            job.window[pos..pos + 16].copy_from_slice(&tg.to_bytes());
            job.window[pos + 16..pos + 32].copy_from_slice(&te.to_bytes());
            part.pairs[i][0] = c0;
        }
    }
}

fn eval_part<H: HalfGateHash>(job: &mut Job<'_, &[u8]>, hash: &H, base: u64, local: &[u64]) {
    let (Some(&n), Some(&off)) = (job.part.index.first(), job.offsets.first()) else {
        return;
    };
    let part = &mut *job.part;
    if let Some(aes) = hash.fused() {
        // The window's first AND index: tables are at `32 · (n − first)`.
        let first = n - off / 32;
        let mut ran = true;
        for r in subs(part.pairs.len(), SUB) {
            let table = part.pairs[r.clone()].as_flattened_mut();
            let ands = (&local[..r.len()], &part.index[r], first);
            ran &= fused::eval_and_gates(aes, base, table, ands, job.window);
            if !ran {
                break;
            }
        }
        if ran {
            return;
        }
    }
    part.hashes2.resize(HASH_CHUNK / 2, [Block::ZERO; 2]);
    for r in subs(part.pairs.len(), HASH_CHUNK / 2) {
        let hashes = &mut part.hashes2[..r.len()];
        let inputs = &part.pairs[r.clone()];
        hash.hash_eval_gates(inputs, &part.index[r.clone()], base, hashes);
        for (i, &[ha, hb]) in r.zip(hashes.iter()) {
            let [a, b] = part.pairs[i];
            let pos = job.offsets[i] as usize;
            let (tg, te) = (
                Block::read(&job.window[pos..pos + 16]),
                Block::read(&job.window[pos + 16..pos + 32]),
            );
            part.pairs[i][0] = eval_and(a, b, ha, hb, tg, te);
        }
    }
}
