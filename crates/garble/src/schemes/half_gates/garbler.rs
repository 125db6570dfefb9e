//! The half-gates garbler: `Δ` (fresh or a session's) and fresh input labels, and each
//! wave's AND gates hashed
//! and garbled in batches (in one pass by the fused kernels where the hash has them), its
//! free gates as XORs of 0-labels.

use std::ops::Range;

use transputation_circuits::{Circuit, WireId};

use transputation_core::prg::Prg;
use transputation_core::Block;

use crate::schemes::fused;
use crate::schemes::interface::{check_tweak_base, Garble, GarbleStart};
use crate::schemes::parallel::{Parallel, MIN_WAVE_HALF_GATES};
use crate::schemes::planner::Planner;
use crate::schemes::waves::{wire_table, Schedule, REUSE_SLOTS};

use super::gates::garble_and;
use super::hash::{HalfGateHash, HASH_CHUNK};
use super::program::{planner, xor_gates, xor_gates_packed, HalfGatesRules, Packed};
use super::split::Split;

/// AND gates per garbler chunk (four hashes each).
const GARBLE_CHUNK: usize = HASH_CHUNK / 4;

/// The half-gates garbler over any [`HalfGateHash`]. It borrows the circuit for as long as it
/// garbles: a large circuit is planned as it is garbled.
pub struct HalfGatesGarbler<'c, H> {
    planner: Planner<'c, HalfGatesRules>,
    n_inputs: usize,
    hash: H,
    pub(super) delta: Block,
    /// The tweak base `B`: AND gate `n` hashes under `2(B + n) + 1` and `2(B + n) + 2`.
    tweak_base: u64,
    /// The 0-label in every slot (input wire `i` is slot `i`).
    pub(super) zero: Vec<Block>,
    schedule: Schedule,
    pub(super) packed: Packed,
    next_window: usize,
    /// The threads that share wide waves, and their buffers.
    parallel: Parallel,
    split: Split,
    /// [`Garble::set_sequential`].
    sequential: bool,
    /// Per AND gate of a chunk: the 0-labels `[a0, b0]`, the AND index, the four hashes.
    inputs: Vec<[Block; 2]>,
    and_index: Vec<u32>,
    hashes: Vec<[Block; 4]>,
}

impl<'c, H: HalfGateHash> HalfGatesGarbler<'c, H> {
    /// A garbler with fresh `Δ` and input labels from `prg`, tweak base 0.
    pub fn new(circuit: &'c Circuit, hash: H, prg: &mut Prg) -> Self {
        HalfGatesGarbler::with_start(circuit, hash, prg, GarbleStart::default())
    }

    /// A garbler that starts from `start` in a session ([`GarbleStart`]): under its offset
    /// if it gives one (else a fresh `Δ` from `prg`, as [`HalfGatesGarbler::new`] draws it)
    /// and with its tweak base; input labels from `prg`.
    ///
    /// # Panics
    /// If the given offset has lsb 0, or the tweak base plus the circuit's AND gates passes
    /// `2^63 − 1` (caller bugs).
    pub fn with_start(circuit: &'c Circuit, hash: H, prg: &mut Prg, start: GarbleStart) -> Self {
        HalfGatesGarbler::with_parallel(circuit, hash, prg, start, &Parallel::none())
    }

    /// As [`HalfGatesGarbler::with_start`], working as `parallel` says: the same bytes.
    ///
    /// # Panics
    /// As [`HalfGatesGarbler::with_start`].
    pub fn with_parallel(
        circuit: &'c Circuit,
        mut hash: H,
        prg: &mut Prg,
        start: GarbleStart,
        parallel: &Parallel,
    ) -> Self {
        if let Some(key) = start.hash_key {
            hash.set_key(key);
        }
        let delta = match start.offset {
            Some(delta) => {
                assert!(
                    delta.lsb(),
                    "the free-XOR offset Δ given in GarbleStart must have lsb 1 (point and permute)"
                );
                delta
            }
            None => prg.block().with_lsb(true),
        };
        check_tweak_base(circuit.gate_counts()[0], start.tweak_base);
        let mut planner = planner(circuit, parallel);
        let mut schedule = Schedule::default();
        planner.fill(&mut schedule);
        let mut zero = wire_table(schedule.slots as usize, Block::ZERO);
        prg.fill_blocks(&mut zero[schedule.input_slots(circuit.n_inputs())]);
        // INV(a) is a ⊕ Δ for the garbler.
        zero[schedule.constant.expect("half gates have a constant slot")] = delta;
        HalfGatesGarbler {
            planner,
            n_inputs: circuit.n_inputs(),
            hash,
            delta,
            tweak_base: start.tweak_base,
            zero,
            packed: Packed::new(&schedule),
            schedule,
            next_window: 0,
            parallel: parallel.clone(),
            split: Split::default(),
            sequential: false,
            inputs: vec![[Block::ZERO; 2]; GARBLE_CHUNK],
            and_index: vec![0; GARBLE_CHUNK],
            hashes: vec![[Block::ZERO; 4]; GARBLE_CHUNK],
        }
    }

    /// Whether every gate was garbled.
    fn finished(&self) -> bool {
        self.planner.finished(&self.schedule, self.next_window)
    }

    /// Moves on to the next segment of a circuit planned as it is garbled; `false` if
    /// there is none.
    fn next_segment(&mut self) -> bool {
        let more = self
            .planner
            .advance(&mut self.schedule, &mut self.next_window);
        if more {
            self.packed = Packed::new(&self.schedule);
            self.schedule.grow(&mut self.zero, Block::ZERO);
        }
        more
    }

    /// The global offset `Δ` (for correlated OT and tests).
    pub fn delta(&self) -> Block {
        self.delta
    }

    /// Garbles the AND gates `ops[range]` into their window's bytes: in one pass where the
    /// hash has a fused kernel, else a chunk at a time.
    fn and_batch(&mut self, k: usize, range: Range<usize>, window: &mut [u8]) {
        let split = self.parallel.split(range.len(), MIN_WAVE_HALF_GATES);
        if let Some(split) = split.filter(|_| !self.sequential) {
            let wave = (
                &self.schedule.ops[range.clone()],
                &self.schedule.offset[range],
            );
            let key = (self.delta, self.tweak_base);
            let zero = &mut self.zero;
            self.split
                .garble(split, &self.hash, key, zero, wave, window);
            return;
        }
        if let (Some(aes), Some(ands)) = (self.hash.fused(), self.packed.ands(k, self.next_window))
        {
            let (delta, base) = (self.delta, self.tweak_base);
            if fused::garble_and_gates(aes, delta, base, &mut self.zero, ands, window) {
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
            .hash_and_gates(self.delta, inputs, and_index, self.tweak_base, hashes);
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
            self.schedule.gates_before(self.next_window) == 0 || !REUSE_SLOTS,
            "input labels are read before garbling"
        );
        let w0 = self.zero[self.schedule.input_slot(wire)];
        [w0, w0 ^ self.delta]
    }

    fn set_input_labels(&mut self, first: WireId, labels: &[[Block; 2]]) {
        let delta = self.delta;
        let slots = self.schedule.input_labels_mut(
            &mut self.zero,
            self.next_window,
            self.n_inputs,
            first,
            labels.len(),
        );
        for (slot, &[w0, w1]) in slots.iter_mut().zip(labels) {
            assert!(w1 == w0 ^ delta, "the two labels of a wire differ by Δ");
            *slot = w0;
        }
    }

    fn global_offset(&self) -> Option<Block> {
        Some(self.delta)
    }

    fn garble_at(&mut self, out: &mut Vec<u8>, at: usize, target: usize) -> (usize, bool) {
        assert!(at <= out.len(), "tables are written from within the buffer");
        let mut end = at;
        // At least one window with tables per call (a `target` of 0 still makes progress).
        while end == at || end - at < target {
            if self.next_window == self.schedule.windows.len() && !self.next_segment() {
                break;
            }
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
        (end, !self.finished())
    }

    fn set_sequential(&mut self, on: bool) {
        self.sequential = on;
    }

    fn decoding(&self) -> Vec<bool> {
        assert!(self.finished(), "garbling finished");
        let zero = self.schedule.outputs_of(&self.zero);
        zero.iter().map(|w| w.lsb()).collect()
    }

    fn output_label_pairs(&self) -> Vec<[Block; 2]> {
        assert!(self.finished(), "garbling finished");
        let zero = self.schedule.outputs_of(&self.zero);
        zero.iter().map(|&w| [w, w ^ self.delta]).collect()
    }
}
