//! The `prf` garbler: fresh, independent labels on every wire, and each wave's XOR and AND
//! gates garbled in batches, by the fused kernels where the backend has them and staged in
//! memory otherwise; degenerate AND gates without cryptography.

use std::ops::Range;

use transputation_circuits::{Circuit, WireId};

use transputation_core::aes::{Backend, FixedKeyAes};
use transputation_core::prg::Prg;
use transputation_core::Block;

use crate::schemes::fused::{prf_garble_gates, set_nibble, PrfOp, ReadAhead, READ_AHEAD};

use crate::schemes::interface::Garble;
use crate::schemes::parallel::{Parallel, MIN_WAVE_PRF};
use crate::schemes::planner::Planner;
use crate::schemes::waves::{wire_table, OpKind, Schedule, Window, REUSE_SLOTS};

#[cfg(test)]
use super::call_log;
use super::layout::{mask_position, piece_planner, planner, table_and_mask, PieceStart, PrfRules};
use super::split;
use super::staged::garble_staged;
#[cfg(test)]
use super::staged::prf_calls;

/// What the fused kernels need of op `i` of `schedule` ([`PrfOp`]), in the window at `base`
/// of the output whose first gate is `first` and whose permute bits are `pcs`; `carried` is
/// the position of a mask byte carried from the window before; `gate_base` is added to the
/// gate index of the PRF inputs ([`PieceStart::gate_base`]).
#[inline(always)]
fn prf_op(
    schedule: &Schedule,
    gate_base: u64,
    i: usize,
    base: usize,
    first: usize,
    pcs: &[u64],
    carried: usize,
) -> PrfOp {
    let op = schedule.ops[i];
    let (table, mask, high) = table_and_mask(schedule, i);
    let (mut mask_pos, mut bits) = (0, 0);
    if op.kind() == OpKind::And {
        let n = op.aux as usize - first;
        let pc = (pcs[n / 64] >> (n % 64)) & 1 == 1;
        mask_pos = mask_position(mask, base, carried);
        bits = u32::from(pc) * PrfOp::PC + u32::from(high) * PrfOp::HIGH;
    }
    PrfOp {
        g: gate_base + u64::from(op.aux),
        table: base + table,
        mask: mask_pos,
        a: op.a,
        b: op.b,
        out: op.out(),
        bits,
    }
}

/// The `prf` garbler.
pub struct PrfGarbler<'c> {
    planner: Planner<'c, PrfRules>,
    n_inputs: usize,
    backend: Backend,
    prg: Prg,
    /// `[k^0, k^1]` in every slot (input wire `i` is slot `i`).
    pub(super) labels: Vec<[Block; 2]>,
    schedule: Schedule,
    next_window: usize,
    /// Absolute position in the output of the mask byte of an AND pair split by a window.
    carried_mask: usize,
    /// One random bit per gate of the window, by position in the circuit: `πc` of a normal
    /// AND gate (drawn whatever the gate's kind, so they follow gate order whatever the
    /// processing order), 64 to a word.
    pcs: Vec<u64>,
    /// The PRF (AES under a secret key) that gives a constant's fresh labels from its gate
    /// index, in any processing order.
    fresh: FixedKeyAes,
    /// Added to every gate index of the PRF inputs ([`PieceStart::gate_base`]).
    gate_base: u64,
    /// The threads that share wide waves, and their buffers.
    parallel: Parallel,
    parts: Vec<split::Part>,
    /// [`Garble::set_sequential`].
    sequential: bool,
}

impl<'c> PrfGarbler<'c> {
    /// A garbler with fresh, independent input labels from `prg`.
    pub fn new(circuit: &'c Circuit, prg: &mut Prg, backend: Backend) -> Self {
        PrfGarbler::with_parallel(circuit, prg, backend, &Parallel::none())
    }

    /// As [`PrfGarbler::new`], working as `parallel` says: the same bytes.
    pub fn with_parallel(
        circuit: &'c Circuit,
        prg: &mut Prg,
        backend: Backend,
        parallel: &Parallel,
    ) -> Self {
        PrfGarbler::planned(circuit, prg, backend, parallel, planner(circuit, parallel))
    }

    /// A garbler of a piece of a larger circuit, garbled on its own ([`PieceStart`]): its
    /// PRF inputs and degenerate gates are those of the whole circuit's garbling.
    pub(crate) fn for_piece(
        circuit: &'c Circuit,
        prg: &mut Prg,
        backend: Backend,
        piece: &PieceStart,
    ) -> Self {
        let planner = piece_planner(circuit, piece);
        let mut g = PrfGarbler::planned(circuit, prg, backend, &Parallel::none(), planner);
        g.gate_base = piece.gate_base;
        g
    }

    fn planned(
        circuit: &'c Circuit,
        prg: &mut Prg,
        backend: Backend,
        parallel: &Parallel,
        mut planner: Planner<'c, PrfRules>,
    ) -> Self {
        let mut own = Prg::new(prg.block());
        let fresh_key = own.block();
        let mut schedule = Schedule::default();
        planner.fill(&mut schedule);
        let mut labels = wire_table(schedule.slots as usize, [Block::ZERO; 2]);
        for l in &mut labels[schedule.input_slots(circuit.n_inputs())] {
            let k0 = own.block();
            let k1 = own.block().with_lsb(!k0.lsb());
            *l = [k0, k1];
        }
        PrfGarbler {
            planner,
            n_inputs: circuit.n_inputs(),
            backend,
            prg: own,
            labels,
            schedule,
            next_window: 0,
            carried_mask: 0,
            pcs: Vec::with_capacity(parallel.window().div_ceil(64)),
            fresh: FixedKeyAes::with_backend(fresh_key, backend),
            gate_base: 0,
            parallel: parallel.clone(),
            parts: Vec::new(),
            sequential: false,
        }
    }

    /// The label in slot `w` whose lsb is `s` (for tests; garbling uses
    /// [`by_signals`](super::staged::by_signals)).
    #[cfg(test)]
    pub(super) fn by_signal(&self, w: u32, s: usize) -> Block {
        let l = self.labels[w as usize];
        l[s ^ usize::from(l[0].lsb())]
    }

    /// Garbles the crypto ops `ops[range]` of a wave, its XOR gates then its AND gates
    /// (their order in the schedule); the window starts at `base` of `out` and its first
    /// gate is `first`.
    fn crypto_batch(&mut self, range: Range<usize>, out: &mut [u8], base: usize, first: usize) {
        let kinds = &self.schedule.ops[range.clone()];
        let xor_end = range.start + kinds.partition_point(|op| op.kind() == OpKind::Xor);
        let (schedule, pcs, carried) = (&self.schedule, &self.pcs[..], self.carried_mask);
        let gate_base = self.gate_base;
        let op = |i| prf_op(schedule, gate_base, i, base, first, pcs, carried);
        let (ahead, read_ahead) = (
            ReadAhead::new(&self.labels),
            ReadAhead::worth_it(self.backend, &self.labels),
        );
        let op_ahead = |i: usize| {
            if let Some(next) = schedule.ops.get(i + READ_AHEAD) {
                ahead.slot(next.a as usize);
                ahead.slot(next.b as usize);
            }
            prf_op(schedule, gate_base, i, base, first, pcs, carried)
        };
        #[cfg(test)]
        for i in range.clone() {
            // The PRF calls the gates make, for the tests of their inputs' uniqueness.
            let and = i >= xor_end;
            let (keys, blocks, _) = prf_calls(&self.labels, &op(i), and);
            let per_key = if and { 2 } else { 1 };
            call_log::record(&keys, &blocks[..4 * per_key], per_key);
        }
        let labels = &mut self.labels;
        for (part, and) in [(range.start..xor_end, false), (xor_end..range.end, true)] {
            let split = self.parallel.split(part.len(), MIN_WAVE_PRF);
            if let Some(split) = split.filter(|_| !self.sequential) {
                let opens = |i| !table_and_mask(schedule, i).2;
                let buffers = &mut self.parts;
                split::garble(
                    split,
                    self.backend,
                    and,
                    part,
                    &op,
                    opens,
                    labels,
                    out,
                    buffers,
                );
                continue;
            }
            let (n, from) = (part.len(), part.start);
            let fused = if read_ahead {
                prf_garble_gates(self.backend, and, n, |j| op_ahead(from + j), labels, out)
            } else {
                prf_garble_gates(self.backend, and, n, |j| op(from + j), labels, out)
            };
            if !fused {
                let ops: Vec<PrfOp> = part.map(op).collect();
                // One instance per kind (the kind tested per gate cost ~6 % on AES-NI).
                if and {
                    garble_staged::<true>(self.backend, &ops, labels, out);
                } else {
                    garble_staged::<false>(self.backend, &ops, labels, out);
                }
            }
        }
    }

    /// The ops `ops[range]` that need no AES: INV and degenerate AND gates.
    fn free_gates(&mut self, range: Range<usize>, out: &mut [u8], base: usize) {
        for i in range {
            let op = self.schedule.ops[i];
            let (a, c) = (op.a as usize, op.out() as usize);
            match op.kind() {
                OpKind::Inv => {
                    let [k0, k1] = self.labels[a];
                    self.labels[c] = [k1, k0];
                }
                kind @ (OpKind::AndCopy | OpKind::AndZero) => {
                    // A zero table and mask nibble; the constant's `T1` is its 0-label.
                    let (table, mask, high) = table_and_mask(&self.schedule, i);
                    let pos = base + table;
                    out[pos..pos + 32].fill(0);
                    set_nibble(out, mask_position(mask, base, self.carried_mask), high, 0);
                    self.labels[c] = if kind == OpKind::AndCopy {
                        self.labels[a]
                    } else {
                        let labels = self.fresh_labels(u64::from(op.aux));
                        out[pos..pos + 16].copy_from_slice(&labels[0].to_bytes());
                        labels
                    };
                }
                OpKind::And | OpKind::Xor => unreachable!("AND and XOR gates need AES"),
            }
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
            self.schedule.grow(&mut self.labels, [Block::ZERO; 2]);
        }
        more
    }

    /// Draws the window's permute bits: one per gate, in gate order.
    fn draw_randomness(&mut self, window: &Window) {
        self.pcs.clear();
        for _ in 0..window.gates.len().div_ceil(128) {
            let b = self.prg.block().0;
            self.pcs.extend([b as u64, (b >> 64) as u64]);
        }
    }

    /// The fresh labels of the constant at gate `gate`: `AES(2g + j)` under a secret key,
    /// the second label's lsb made the complement of the first's (§2.1).
    fn fresh_labels(&self, gate: u64) -> [Block; 2] {
        let mut k = [
            Block(u128::from(gate) << 1),
            Block((u128::from(gate) << 1) | 1),
        ];
        self.fresh.encrypt_blocks(&mut k);
        [k[0], k[1].with_lsb(!k[0].lsb())]
    }
}

impl Garble for PrfGarbler<'_> {
    fn input_labels(&self, wire: WireId) -> [Block; 2] {
        // The interface's contract (labels read before garbling), which leaves the
        // schedule free to reuse input slots.
        assert!(
            self.schedule.gates_before(self.next_window) == 0 || !REUSE_SLOTS,
            "input labels are read before garbling"
        );
        self.labels[self.schedule.input_slot(wire)]
    }

    fn set_input_labels(&mut self, first: WireId, labels: &[[Block; 2]]) {
        let slots = self.schedule.input_labels_mut(
            &mut self.labels,
            self.next_window,
            self.n_inputs,
            first,
            labels.len(),
        );
        for (slot, &pair) in slots.iter_mut().zip(labels) {
            assert!(
                pair[0].lsb() != pair[1].lsb(),
                "the two labels of a wire differ in their lsb"
            );
            *slot = pair;
        }
    }

    fn garble_at(&mut self, out: &mut Vec<u8>, at: usize, target: usize) -> (usize, bool) {
        assert!(at <= out.len(), "tables are written from within the buffer");
        let mut end = at;
        // A call ends only where no AND pair is split, so that every mask byte it returns is
        // complete: after a window whose last mask byte is full.
        let mut split = false;
        // At least one window with tables per call (a `target` of 0 still makes progress).
        while end == at || end - at < target || split {
            if self.next_window == self.schedule.windows.len() && !self.next_segment() {
                break;
            }
            let window = self.schedule.windows[self.next_window].clone();
            self.draw_randomness(&window);
            let base = end;
            end += window.bytes;
            // Every byte of the window is written below (tables, zero tables of degenerate
            // gates, both nibbles of every mask byte), so old contents need no zeroing.
            if out.len() < end {
                out.resize(end, 0);
            }
            let first = window.gates.start;
            for k in window.waves.clone() {
                let (crypto, free) = self.schedule.wave(k);
                self.crypto_batch(crypto, out, base, first);
                self.free_gates(free, out, base);
            }
            // If the window's last AND gate opened a pair, its byte carries over, unless no
            // AND gate follows: then nothing closes the pair and its high half is 0 (so a
            // circuit's XOR gates after its last AND gate still come in batches of `target`).
            if let Some(last) = window.last_and {
                let (_, mask, high) = table_and_mask(&self.schedule, last);
                split = !high;
                if split && window.final_and {
                    set_nibble(out, base + mask as usize, true, 0);
                    split = false;
                } else if split {
                    self.carried_mask = base + mask as usize;
                }
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
        let labels = self.schedule.outputs_of(&self.labels);
        labels.iter().map(|[k0, _]| k0.lsb()).collect()
    }

    fn output_label_pairs(&self) -> Vec<[Block; 2]> {
        assert!(self.finished(), "garbling finished");
        self.schedule.outputs_of(&self.labels)
    }
}
