//! The `prf` evaluator: each window's gates from its bytes, the PRF calls of a chunk of
//! crypto gates staged and encrypted under their keys at once.

use std::ops::Range;

use transputation_circuits::{Circuit, WireId};

use transputation_core::aes::{encrypt_under_keys, Backend};
use transputation_core::Block;

use crate::schemes::interface::{EvalError, Evaluate};
use crate::schemes::parallel::Parallel;
use crate::schemes::waves::{wire_table, OpKind, Schedule};

#[cfg(test)]
use super::call_log;
use super::gates::{blk, eval_and, eval_xor};
use super::layout::{schedule, table_and_mask, CARRIED, CHUNK};

/// The `prf` evaluator.
pub struct PrfEvaluator<'c> {
    circuit: &'c Circuit,
    backend: Backend,
    /// The label in every slot.
    pub(super) labels: Vec<Block>,
    schedule: Schedule,
    next_window: usize,
    /// The high nibble of the mask byte of an AND pair split by a window.
    carried_mask: u8,
    /// Per crypto gate of a chunk (`CHUNK` entries, in the chunk's order): its two input
    /// labels, which are the keys, and one PRF input under each. AND and XOR gates alike
    /// make two calls of one block under their two labels, so a chunk's calls go to the
    /// AES backend at once, and its key schedules interleave across both kinds.
    keys: Vec<[Block; 2]>,
    blocks: Vec<[Block; 2]>,
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
        assert_eq!(inputs.len(), circuit.n_inputs(), "one label per input wire");
        let schedule = schedule(circuit, parallel.window());
        let mut labels = wire_table(schedule.slots as usize, Block::ZERO);
        labels[schedule.input_slots(inputs.len())].copy_from_slice(inputs);
        PrfEvaluator {
            circuit,
            backend,
            labels,
            schedule,
            next_window: 0,
            carried_mask: 0,
            keys: vec![[Block::ZERO; 2]; CHUNK],
            blocks: vec![[Block::ZERO; 2]; CHUNK],
        }
    }

    /// Evaluates the crypto ops `ops[range]` from their window's bytes, a chunk at a time.
    fn crypto_batch(&mut self, range: Range<usize>, window: &[u8]) {
        for start in range.clone().step_by(CHUNK) {
            self.crypto_chunk(start..(start + CHUNK).min(range.end), window);
        }
    }

    fn crypto_chunk(&mut self, range: Range<usize>, window: &[u8]) {
        let n = range.len();
        for ((op, keys), blocks) in self.schedule.ops[range.clone()]
            .iter()
            .zip(self.keys.iter_mut())
            .zip(self.blocks.iter_mut())
        {
            let g = u64::from(op.aux);
            let (la, lb) = (self.labels[op.a as usize], self.labels[op.b as usize]);
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
        let (keys, blocks) = (
            self.keys[..n].as_flattened(),
            self.blocks[..n].as_flattened_mut(),
        );
        #[cfg(test)]
        call_log::record(keys, blocks, 1);
        encrypt_under_keys(self.backend, keys, blocks, 1);
        for (i, ([la, lb], [fa, fb])) in range.zip(self.keys.iter().zip(&self.blocks)) {
            let op = self.schedule.ops[i];
            let (pos, mask, high) = table_and_mask(&self.schedule, i);
            self.labels[op.out() as usize] = match op.kind() {
                OpKind::And => {
                    let (t1, t2) = (
                        Block::read(&window[pos..pos + 16]),
                        Block::read(&window[pos + 16..pos + 32]),
                    );
                    let byte = if mask == CARRIED {
                        self.carried_mask << 4
                    } else {
                        window[mask as usize]
                    };
                    let m = if high { byte >> 4 } else { byte & 0xf };
                    eval_and(*la, *lb, *fa ^ *fb, t1, t2, m)
                }
                OpKind::Xor => {
                    let t = Block::read(&window[pos..pos + 16]);
                    eval_xor(*la, *lb, *fa, *fb, t)
                }
                _ => unreachable!("only AND and XOR gates need AES"),
            };
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
        while let Some(window) = self.schedule.windows.get(self.next_window).cloned() {
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
        self.schedule
            .check_trailing(self.next_window, used, bytes.len())
    }

    fn gates_done(&self) -> usize {
        self.schedule.gates_before(self.next_window)
    }

    fn output_labels(&self) -> Result<Vec<Block>, EvalError> {
        self.check_done(self.circuit)?;
        Ok(self.schedule.outputs_of(&self.labels))
    }
}
