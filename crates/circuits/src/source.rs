//! A circuit's gates as a stream: handed out a batch at a time, each batch with the wires
//! that no later gate reads. This is how garbling, plain evaluation and statistics read
//! every circuit, so that a circuit too large to hold in memory (a [`Generate`]d one) is
//! read the same way as one that is held.
//!
//! # Wire ends
//! A batch lists, beside its gates, *ends* `(i, w)`: no gate after the batch's `i`-th reads
//! wire `w`. A consumer may then reuse whatever it keeps for `w` (a garbler, the slot of its
//! label). A generated circuit reuses wire numbers: after `w` ends, a later gate may write
//! `w` again, and from then on `w` names the new wire. So a consumer keeps per-wire state
//! for [`Circuit::num_wires`] wires however many gates the circuit has, and a circuit of
//! billions of gates needs no more than the wires alive at once. Outputs never end, nor do
//! the input wires (a generator never writes them again).
//!
//! For a circuit held in memory, every wire is written once and the ends are computed in
//! one pass over its gates: a wire ends at its last reader, or at its writer if nothing
//! reads it and it is no output.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};

use crate::circuit::{Circuit, Gate, WireId, WireSet};

/// A batch of gates in circuit order and the wires that end in it.
#[derive(Clone, Debug, Default)]
pub struct GateBatch {
    /// The gates, in circuit order.
    pub gates: Vec<Gate>,
    /// `(i, w)`: no gate after `gates[i]` reads `w` (until a gate writes `w` anew);
    /// ordered by `i`. Empty when the source was asked for no ends.
    pub ends: Vec<(u32, WireId)>,
}

impl GateBatch {
    /// Empties the batch, keeping its memory.
    pub fn clear(&mut self) {
        self.gates.clear();
        self.ends.clear();
    }
}

/// A circuit's gates, batch after batch ([`Circuit::source`]).
pub trait GateSource: Send {
    /// Replaces `batch` by the next gates, at most `max` of them (`max >= 1`), and their
    /// ends; returns `false`, with `batch` empty, once every gate was handed out.
    fn next_batch(&mut self, max: usize, batch: &mut GateBatch) -> bool;
}

/// A circuit that writes its gates as they are read instead of holding them: built-ins
/// whose gates would not fit in memory. It reuses wire numbers after their ends (see the
/// module documentation), so [`Circuit::num_wires`] is the wires it keeps apart at once.
pub trait Generate: Send + Sync + RefUnwindSafe + UnwindSafe + fmt::Debug {
    /// The gates from the first on, with their ends.
    fn source(&self) -> Box<dyn GateSource + '_>;
    /// What names the circuit exactly (a built-in's name and every parameter): two
    /// generated circuits with one identity are the same circuit.
    fn identity(&self) -> String;
    /// The numbers of AND, XOR and INV gates.
    fn counts(&self) -> [u64; 3];
}

/// The gates of a circuit held in memory.
pub(crate) struct HeldSource<'c> {
    gates: &'c [Gate],
    next: usize,
    /// Per gate, which wires end there ([`END_A`], [`END_B`], [`END_OUT`]); empty when no
    /// ends were asked for.
    ends: Vec<u8>,
}

/// The gate's first input ends there (it is its last reader).
const END_A: u8 = 1;
/// Its second input, a wire other than the first, ends there.
const END_B: u8 = 2;
/// Its output ends there: nothing reads it and it is no output.
const END_OUT: u8 = 4;

impl<'c> HeldSource<'c> {
    /// With `ends`, finds each wire's end in one pass over the gates from the last, with one
    /// bit per wire (a wire's first reader seen from the end is its last): a bit table stays
    /// in a core's cache where a table of reader indices (32 bits a wire) would not.
    pub(crate) fn new(circuit: &'c Circuit, gates: &'c [Gate], ends: bool) -> Self {
        let mut flags = Vec::new();
        if ends {
            // Read later (or never ending: inputs, outputs).
            let mut seen = WireSet::new(circuit.num_wires());
            for w in 0..circuit.n_inputs() as WireId {
                seen.insert(w);
            }
            for o in circuit.outputs() {
                for &w in &o.wires {
                    seen.insert(w);
                }
            }
            flags = vec![0u8; gates.len()];
            for (g, f) in gates.iter().zip(flags.iter_mut()).rev() {
                let (a, b) = g.inputs();
                // The output is written here and read only after: its bit is cleared for the
                // gates before, which cannot read it.
                if !seen.remove(g.output()) {
                    *f |= END_OUT;
                }
                if seen.insert(a) {
                    *f |= END_A;
                }
                if let Some(b) = b.filter(|&b| b != a) {
                    if seen.insert(b) {
                        *f |= END_B;
                    }
                }
            }
        }
        HeldSource {
            gates,
            next: 0,
            ends: flags,
        }
    }
}

impl GateSource for HeldSource<'_> {
    fn next_batch(&mut self, max: usize, batch: &mut GateBatch) -> bool {
        batch.clear();
        let end = (self.next + max.max(1)).min(self.gates.len());
        let gates = &self.gates[self.next..end];
        batch.gates.extend_from_slice(gates);
        if !self.ends.is_empty() {
            for (pos, (g, &f)) in gates.iter().zip(&self.ends[self.next..end]).enumerate() {
                if f == 0 {
                    continue;
                }
                let (a, b) = g.inputs();
                if f & END_A != 0 {
                    batch.ends.push((pos as u32, a));
                }
                if f & END_B != 0 {
                    batch.ends.push((pos as u32, b.unwrap_or(a)));
                }
                if f & END_OUT != 0 {
                    batch.ends.push((pos as u32, g.output()));
                }
            }
        }
        self.next = end;
        !batch.gates.is_empty()
    }
}

/// Calls `each` on every gate of `source` in order, a batch of `batch` gates at a time.
pub(crate) fn for_each_gate(source: &mut dyn GateSource, mut each: impl FnMut(&Gate)) {
    let mut batch = GateBatch::default();
    while source.next_batch(1 << 14, &mut batch) {
        batch.gates.iter().for_each(&mut each);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::{BitOrder, InputGroup, OutputGroup, Party};

    #[test]
    fn a_held_circuit_ends_each_wire_at_its_last_reader() {
        // w2 = w0 & w1; w3 = !w2 (never read, not an output); w4 = w2 ^ w0 (output)
        let c = Circuit::new(
            5,
            vec![InputGroup {
                party: Party::Garbler,
                len: 2,
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            vec![OutputGroup {
                wires: vec![4],
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            vec![
                Gate::And { a: 0, b: 1, out: 2 },
                Gate::Inv { a: 2, out: 3 },
                Gate::Xor { a: 2, b: 0, out: 4 },
            ],
        )
        .unwrap();
        let mut source = c.source(true);
        let mut batch = GateBatch::default();
        assert!(source.next_batch(2, &mut batch));
        assert_eq!(batch.gates.len(), 2);
        // Wire 3 ends where it is written; inputs never end.
        assert_eq!(batch.ends, vec![(1, 3)]);
        assert!(source.next_batch(2, &mut batch));
        assert_eq!(batch.ends, vec![(0, 2)]);
        assert!(!source.next_batch(2, &mut batch));
        assert!(batch.gates.is_empty());
    }
}
