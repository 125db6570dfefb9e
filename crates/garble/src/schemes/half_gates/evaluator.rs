//! The half-gates evaluator: each window's AND gates hashed and evaluated in batches from
//! its bytes (in one pass by the fused kernels where the hash has them), its free gates as
//! XORs of labels.

use std::ops::Range;

use transputation_circuits::{Circuit, WireId};

use transputation_core::Block;

use crate::schemes::fused;
use crate::schemes::interface::{check_tweak_base, EvalError, Evaluate};
use crate::schemes::parallel::{Parallel, MIN_WAVE_HALF_GATES};
use crate::schemes::planner::Planner;
use crate::schemes::waves::{wire_table, Schedule};

use super::gates::eval_and;
use super::hash::{HalfGateHash, HASH_CHUNK};
use super::program::{planner, xor_gates, xor_gates_packed, HalfGatesRules, Packed};
use super::split::Split;

/// AND gates per evaluator chunk (two hashes each).
const EVAL_CHUNK: usize = HASH_CHUNK / 2;

/// The half-gates evaluator over any [`HalfGateHash`].
pub struct HalfGatesEvaluator<'c, H> {
    circuit: &'c Circuit,
    planner: Planner<'c, HalfGatesRules>,
    hash: H,
    /// The tweak base `B` of the garbling ([`HalfGatesGarbler::with_start`]).
    ///
    /// [`HalfGatesGarbler::with_start`]: super::HalfGatesGarbler::with_start
    tweak_base: u64,
    /// The label in every slot.
    pub(super) labels: Vec<Block>,
    schedule: Schedule,
    pub(super) packed: Packed,
    next_window: usize,
    /// The threads that share wide waves, and their buffers.
    parallel: Parallel,
    split: Split,
    /// Per AND gate of a chunk: the input labels `[a, b]`, the AND index, the two hashes.
    inputs: Vec<[Block; 2]>,
    and_index: Vec<u32>,
    hashes: Vec<[Block; 2]>,
}

impl<'c, H: HalfGateHash> HalfGatesEvaluator<'c, H> {
    /// An evaluator holding one label per input wire, tweak base 0.
    pub fn new(circuit: &'c Circuit, hash: H, inputs: &[Block]) -> Self {
        HalfGatesEvaluator::with_tweak_base(circuit, hash, inputs, 0)
    }

    /// An evaluator holding one label per input wire, for tables garbled with the tweak
    /// base `tweak_base` ([`GarbleStart`](crate::GarbleStart)).
    ///
    /// # Panics
    /// If `inputs` is not one label per input wire, or the tweak base plus the circuit's
    /// AND gates passes `2^63 − 1` (caller bugs).
    pub fn with_tweak_base(
        circuit: &'c Circuit,
        hash: H,
        inputs: &[Block],
        tweak_base: u64,
    ) -> Self {
        HalfGatesEvaluator::with_parallel(circuit, hash, inputs, tweak_base, &Parallel::none())
    }

    /// As [`HalfGatesEvaluator::with_tweak_base`], working as `parallel` says: the same
    /// labels.
    ///
    /// # Panics
    /// As [`HalfGatesEvaluator::with_tweak_base`].
    pub fn with_parallel(
        circuit: &'c Circuit,
        hash: H,
        inputs: &[Block],
        tweak_base: u64,
        parallel: &Parallel,
    ) -> Self {
        assert_eq!(inputs.len(), circuit.n_inputs(), "one label per input wire");
        check_tweak_base(circuit.gate_counts()[0], tweak_base);
        let mut planner = planner(circuit, parallel);
        let mut schedule = Schedule::default();
        planner.fill(&mut schedule);
        let mut labels = wire_table(schedule.slots as usize, Block::ZERO);
        labels[schedule.input_slots(inputs.len())].copy_from_slice(inputs);
        HalfGatesEvaluator {
            circuit,
            planner,
            hash,
            tweak_base,
            labels,
            packed: Packed::new(&schedule),
            schedule,
            next_window: 0,
            parallel: parallel.clone(),
            split: Split::default(),
            inputs: vec![[Block::ZERO; 2]; EVAL_CHUNK],
            and_index: vec![0; EVAL_CHUNK],
            hashes: vec![[Block::ZERO; 2]; EVAL_CHUNK],
        }
    }

    /// Whether every gate was evaluated.
    fn finished(&self) -> bool {
        self.planner.finished(&self.schedule, self.next_window)
    }

    /// Moves on to the next segment of a circuit planned as it is evaluated; `false` if
    /// there is none.
    fn next_segment(&mut self) -> bool {
        let more = self
            .planner
            .advance(&mut self.schedule, &mut self.next_window);
        if more {
            self.packed = Packed::new(&self.schedule);
            self.schedule.grow(&mut self.labels, Block::ZERO);
        }
        more
    }

    /// Evaluates the AND gates `ops[range]` from their window's bytes: in one pass where
    /// the hash has a fused kernel, else a chunk at a time.
    fn and_batch(&mut self, k: usize, range: Range<usize>, window: &[u8]) {
        if let Some(split) = self.parallel.split(range.len(), MIN_WAVE_HALF_GATES) {
            let wave = (
                &self.schedule.ops[range.clone()],
                &self.schedule.offset[range],
            );
            let labels = &mut self.labels;
            let base = self.tweak_base;
            self.split
                .evaluate(split, &self.hash, base, labels, wave, window);
            return;
        }
        if let (Some(aes), Some(ands)) = (self.hash.fused(), self.packed.ands(k, self.next_window))
        {
            if fused::eval_and_gates(aes, self.tweak_base, &mut self.labels, ands, window) {
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
        self.hash
            .hash_eval_gates(inputs, and_index, self.tweak_base, hashes);
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
    fn set_hash_key(&mut self, key: Block) {
        assert_eq!(
            self.schedule.gates_before(self.next_window),
            0,
            "the hash key is set before any table is fed"
        );
        self.hash.set_key(key);
    }

    fn input_labels_mut(&mut self, first: WireId, len: usize) -> &mut [Block] {
        let n_inputs = self.circuit.n_inputs();
        self.schedule
            .input_labels_mut(&mut self.labels, self.next_window, n_inputs, first, len)
    }

    fn feed(&mut self, bytes: &[u8]) -> Result<usize, EvalError> {
        let mut used = 0;
        loop {
            if self.next_window == self.schedule.windows.len() && !self.next_segment() {
                break;
            }
            let window = self.schedule.windows[self.next_window].clone();
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
        Schedule::check_trailing(self.finished(), used, bytes.len())
    }

    fn gates_done(&self) -> usize {
        self.schedule.gates_before(self.next_window)
    }

    fn output_labels(&self) -> Result<Vec<Block>, EvalError> {
        self.check_done(self.circuit)?;
        Ok(self.schedule.outputs_of(&self.labels))
    }
}
