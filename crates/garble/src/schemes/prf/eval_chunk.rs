//! `prf`'s evaluation of a wave's crypto gates: by the fused kernels where the backend has
//! them ([`Wave::fused`], `fused::prf_eval_gates`), else a chunk at a time, their PRF calls
//! staged and encrypted under their keys at once ([`Wave::stage`], reading only the labels
//! before the wave), then their output labels computed from the window's bytes and handed
//! to the caller ([`Wave::outputs`]), who writes them into the labels or, for a part of a
//! split wave, keeps them until every part has read its inputs.

use std::ops::Range;

use transputation_core::aes::{encrypt_under_keys, Backend};
use transputation_core::Block;

use crate::schemes::fused::{prf_eval_gates, PrfEvalOp};
use crate::schemes::waves::{OpKind, Schedule};

#[cfg(test)]
use super::call_log;
use super::gates::{blk, eval_and, eval_xor};
use super::layout::{table_and_mask, CARRIED};

/// The buffers of a chunk of crypto gates (`CHUNK` entries, in the chunk's order): per
/// gate its two input labels, which are the keys, and one PRF input under each. AND and XOR gates alike make two calls of one block under their two labels, so a
/// chunk's calls go to the AES backend at once, and its key schedules interleave across
/// both kinds.
#[derive(Debug, Default)]
pub(super) struct Chunk {
    keys: Vec<[Block; 2]>,
    blocks: Vec<[Block; 2]>,
}

/// What the crypto gates of a wave read besides the labels: the window's bytes and where
/// its gates are.
#[derive(Clone, Copy)]
pub(super) struct Wave<'a> {
    pub(super) schedule: &'a Schedule,
    pub(super) window: &'a [u8],
    pub(super) carried_mask: u8,
    pub(super) backend: Backend,
    /// Added to the gate indices of the PRF inputs.
    pub(super) gate_base: u64,
}

impl Wave<'_> {
    /// Evaluates the crypto ops `ops[range]` (at most `CHUNK`) from the labels before the
    /// wave, handing each output label to `put` with its slot, in order.
    pub(super) fn chunk(
        &self,
        labels: &[Block],
        range: Range<usize>,
        chunk: &mut Chunk,
        put: impl FnMut(usize, Block),
    ) {
        self.stage(labels, range.clone(), chunk);
        self.outputs(range, chunk, put);
    }

    /// Stages the PRF calls of the crypto ops `ops[range]` (at most `CHUNK`) in `chunk` and
    /// encrypts them: what of the chunk reads the labels.
    pub(super) fn stage(&self, labels: &[Block], range: Range<usize>, chunk: &mut Chunk) {
        let n = range.len();
        self.calls(labels, range, chunk);
        let (keys, blocks) = (
            chunk.keys[..n].as_flattened(),
            chunk.blocks[..n].as_flattened_mut(),
        );
        #[cfg(test)]
        call_log::record(keys, blocks, 1);
        encrypt_under_keys(self.backend, keys, blocks, 1);
    }

    /// The keys and PRF inputs of the crypto ops `ops[range]`, into `chunk`.
    fn calls(&self, labels: &[Block], range: Range<usize>, chunk: &mut Chunk) {
        let n = range.len();
        let s = self.schedule;
        chunk.keys.resize(n, [Block::ZERO; 2]);
        chunk.blocks.resize(n, [Block::ZERO; 2]);
        for ((op, keys), blocks) in s.ops[range.clone()]
            .iter()
            .zip(chunk.keys.iter_mut())
            .zip(chunk.blocks.iter_mut())
        {
            let g = self.gate_base + u64::from(op.aux);
            let (la, lb) = (labels[op.a as usize], labels[op.b as usize]);
            *keys = [la, lb];
            *blocks = match op.kind() {
                OpKind::And => {
                    let r = 2 * u32::from(la.lsb()) + u32::from(lb.lsb());
                    [blk(g, r), blk(g, r)]
                }
                OpKind::Xor => [blk(g, u32::from(la.lsb())), blk(g, u32::from(lb.lsb()))],
                _ => unreachable!("only AND and XOR gates need AES"),
            };
        }
    }

    /// Evaluates the crypto ops `ops[range]` with the fused kernels, writing their output
    /// labels into `labels`; `false`, with nothing done, where the backend has none.
    pub(super) fn fused(&self, range: Range<usize>, labels: &mut [Block]) -> bool {
        // The PRF calls the gates make, for the tests of their inputs' uniqueness: staged
        // before the labels change, recorded if the kernels ran (else the staged path
        // records them).
        #[cfg(test)]
        let mut chunk = Chunk::default();
        #[cfg(test)]
        self.calls(labels, range.clone(), &mut chunk);
        let op = |j: usize| self.op(range.start + j);
        let ran = prf_eval_gates(self.backend, range.len(), op, labels, self.window);
        #[cfg(test)]
        if ran {
            let n = range.len();
            call_log::record(
                chunk.keys[..n].as_flattened(),
                chunk.blocks[..n].as_flattened(),
                1,
            );
        }
        ran
    }

    /// Op `i` as the fused kernels take it: its table's place and an AND gate's nibble.
    #[inline(always)]
    fn op(&self, i: usize) -> PrfEvalOp {
        let op = self.schedule.ops[i];
        let (table, mask, high) = table_and_mask(self.schedule, i);
        let and = op.kind() == OpKind::And;
        PrfEvalOp {
            g: self.gate_base + u64::from(op.aux),
            table,
            a: op.a,
            b: op.b,
            out: op.out(),
            m: if and { self.nibble(mask, high) } else { 0 },
            and,
        }
    }

    /// An AND gate's mask nibble, at byte `mask` of the window (or carried from the window
    /// before) in its high or low half.
    #[inline(always)]
    fn nibble(&self, mask: u32, high: bool) -> u8 {
        let byte = if mask == CARRIED {
            self.carried_mask << 4
        } else {
            self.window[mask as usize]
        };
        if high {
            byte >> 4
        } else {
            byte & 0xf
        }
    }

    /// The output labels of the crypto ops `ops[range]`, staged and encrypted in `chunk` by
    /// [`Wave::stage`], from the window's bytes: each handed to `put` with its slot, in
    /// order.
    pub(super) fn outputs(
        &self,
        range: Range<usize>,
        chunk: &Chunk,
        mut put: impl FnMut(usize, Block),
    ) {
        let (schedule, window) = (self.schedule, self.window);
        for (i, ([la, lb], [fa, fb])) in range.zip(chunk.keys.iter().zip(&chunk.blocks)) {
            let op = schedule.ops[i];
            let (pos, mask, high) = table_and_mask(schedule, i);
            let label = match op.kind() {
                OpKind::And => {
                    let (t1, t2) = (
                        Block::read(&window[pos..pos + 16]),
                        Block::read(&window[pos + 16..pos + 32]),
                    );
                    let m = self.nibble(mask, high);
                    eval_and(*la, *lb, *fa ^ *fb, t1, t2, m)
                }
                OpKind::Xor => {
                    let t = Block::read(&window[pos..pos + 16]);
                    eval_xor(*la, *lb, *fa, *fb, t)
                }
                _ => unreachable!("only AND and XOR gates need AES"),
            };
            put(op.out() as usize, label);
        }
    }
}
