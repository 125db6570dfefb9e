//! The `prf` evaluator: each window's gates from its bytes, a wave's crypto gates by the
//! fused kernels where the backend has them (`fused::prf_eval_gates`), else the PRF calls
//! of a chunk of them staged and encrypted under their keys at once; a wide wave split
//! between threads takes the staged path on each.

use std::ops::Range;

use transputation_circuits::{Circuit, WireId};

use transputation_core::aes::Backend;
use transputation_core::Block;

use crate::schemes::interface::{EvalError, Evaluate};
use crate::schemes::parallel::{Parallel, MIN_WAVE_PRF};
use crate::schemes::planner::Planner;
use crate::schemes::waves::{wire_table, OpKind, Schedule};

use super::eval_chunk::{Chunk, Wave};
use super::layout::{piece_planner, planner, table_and_mask, PieceStart, PrfRules, CHUNK};
use super::split;

/// The `prf` evaluator.
pub struct PrfEvaluator<'c> {
    circuit: &'c Circuit,
    planner: Planner<'c, PrfRules>,
    backend: Backend,
    /// The label in every slot.
    pub(super) labels: Vec<Block>,
    schedule: Schedule,
    next_window: usize,
    /// The high nibble of the mask byte of an AND pair split by a window.
    carried_mask: u8,
    chunk: Chunk,
    /// The threads that share wide waves, and their buffers: a part's staging and its
    /// output labels, kept until every part has read its inputs.
    parallel: Parallel,
    parts: Vec<(Chunk, Vec<Block>)>,
    /// Added to the gate indices of the PRF inputs.
    gate_base: u64,
}

impl<'c> PrfEvaluator<'c> {
    /// An evaluator holding one label per input wire.
    pub fn new(circuit: &'c Circuit, inputs: &[Block], backend: Backend) -> Self {
        PrfEvaluator::with_parallel(circuit, inputs, backend, &Parallel::none())
    }

    /// As [`PrfEvaluator::new`], working as `parallel` says: the same labels.
    pub fn with_parallel(
        circuit: &'c Circuit,
        inputs: &[Block],
        backend: Backend,
        parallel: &Parallel,
    ) -> Self {
        PrfEvaluator::planned(
            circuit,
            inputs,
            backend,
            parallel,
            planner(circuit, parallel),
        )
    }

    /// An evaluator of a piece of a larger circuit garbled on its own
    /// ([`PrfGarbler::for_piece`](super::PrfGarbler::for_piece)).
    pub(crate) fn for_piece(
        circuit: &'c Circuit,
        inputs: &[Block],
        backend: Backend,
        piece: &PieceStart,
    ) -> Self {
        let planner = piece_planner(circuit, piece);
        let mut e = PrfEvaluator::planned(circuit, inputs, backend, &Parallel::none(), planner);
        e.gate_base = piece.gate_base;
        e
    }

    fn planned(
        circuit: &'c Circuit,
        inputs: &[Block],
        backend: Backend,
        parallel: &Parallel,
        mut planner: Planner<'c, PrfRules>,
    ) -> Self {
        assert_eq!(inputs.len(), circuit.n_inputs(), "one label per input wire");
        let mut schedule = Schedule::default();
        planner.fill(&mut schedule);
        let mut labels = wire_table(schedule.slots as usize, Block::ZERO);
        labels[schedule.input_slots(inputs.len())].copy_from_slice(inputs);
        PrfEvaluator {
            circuit,
            planner,
            backend,
            labels,
            schedule,
            next_window: 0,
            carried_mask: 0,
            chunk: Chunk::default(),
            parallel: parallel.clone(),
            parts: Vec::new(),
            gate_base: 0,
        }
    }

    /// Moves on to the next segment of a circuit planned as it is evaluated; `false` if
    /// there is none.
    fn next_segment(&mut self) -> bool {
        let more = self
            .planner
            .advance(&mut self.schedule, &mut self.next_window);
        if more {
            self.schedule.grow(&mut self.labels, Block::ZERO);
        }
        more
    }

    /// Evaluates the crypto ops `ops[range]` from their window's bytes: in parts on several
    /// threads if the wave is wide ([`split`], staged), else by the fused kernels, or a
    /// chunk at a time staged where the backend has none.
    fn crypto_batch(&mut self, range: Range<usize>, window: &[u8]) {
        let wave = Wave {
            schedule: &self.schedule,
            window,
            carried_mask: self.carried_mask,
            backend: self.backend,
            gate_base: self.gate_base,
        };
        if let Some(split) = self.parallel.split(range.len(), MIN_WAVE_PRF) {
            let parts = split::evaluate(split, &wave, &self.labels, range.clone(), &mut self.parts);
            // The output labels in op order, after every part has read its inputs.
            let outs = self.parts[..parts].iter().flat_map(|(_, outs)| outs);
            for (i, &label) in range.zip(outs) {
                self.labels[self.schedule.ops[i].out() as usize] = label;
            }
            return;
        }
        if wave.fused(range.clone(), &mut self.labels) {
            return;
        }
        for start in range.clone().step_by(CHUNK) {
            let r = start..(start + CHUNK).min(range.end);
            wave.stage(&self.labels, r.clone(), &mut self.chunk);
            let labels = &mut self.labels;
            wave.outputs(r, &self.chunk, |slot, label| labels[slot] = label);
        }
    }

    fn free_gates(&mut self, range: Range<usize>, window: &[u8]) {
        for i in range {
            let op = self.schedule.ops[i];
            let (a, c) = (op.a as usize, op.out() as usize);
            match op.kind() {
                OpKind::Inv | OpKind::AndCopy => self.labels[c] = self.labels[a],
                OpKind::AndZero => {
                    let (pos, _, _) = table_and_mask(&self.schedule, i);
                    self.labels[c] = Block::read(&window[pos..pos + 16]);
                }
                OpKind::And | OpKind::Xor => unreachable!("AND and XOR gates need AES"),
            }
        }
    }
}

impl Evaluate for PrfEvaluator<'_> {
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
            for k in window.waves.clone() {
                let (crypto, free) = self.schedule.wave(k);
                self.crypto_batch(crypto, tables);
                self.free_gates(free, tables);
            }
            // If the window's last AND gate opened a pair, keep the partner's nibble.
            if let Some(last) = window.last_and {
                let (_, mask, high) = table_and_mask(&self.schedule, last);
                if !high {
                    self.carried_mask = tables[mask as usize] >> 4;
                }
            }
            used += window.bytes;
            self.next_window += 1;
        }
        let finished = self.planner.finished(&self.schedule, self.next_window);
        Schedule::check_trailing(finished, used, bytes.len())
    }

    fn gates_done(&self) -> usize {
        self.schedule.gates_before(self.next_window)
    }

    fn output_labels(&self) -> Result<Vec<Block>, EvalError> {
        self.check_done(self.circuit)?;
        Ok(self.schedule.outputs_of(&self.labels))
    }
}
