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
//! for [`Circuit::num_wires`](crate::Circuit::num_wires) wires however many gates the circuit
//! has, and a circuit of billions of gates needs no more than the wires alive at once.
//! Outputs never end, nor do the input wires (a generator never writes them again).
//!
//! For a circuit held in memory, every wire is written once and the ends are found in one
//! pass over its gates from the last: a wire ends at its last reader, or at its writer if
//! nothing reads it and it is no output.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};

use crate::gate::{Gate, WireId};

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

    /// Adds the ends that `flags` ([`END_A`], [`END_B`], [`END_OUT`]) name for `gate`, the
    /// batch's gate at `pos`.
    #[inline]
    pub(crate) fn push_ends(&mut self, pos: u32, gate: &Gate, flags: u8) {
        if flags == 0 {
            return;
        }
        let (a, b) = gate.inputs();
        if flags & END_A != 0 {
            self.ends.push((pos, a));
        }
        if flags & END_B != 0 {
            self.ends.push((pos, b.unwrap_or(a)));
        }
        if flags & END_OUT != 0 {
            self.ends.push((pos, gate.output()));
        }
    }
}

/// In a source's per-gate end flags: the gate's first input ends there (it is its last
/// reader).
pub(crate) const END_A: u8 = 1;
/// Its second input, a wire other than the first, ends there.
pub(crate) const END_B: u8 = 2;
/// Its output ends there: nothing reads it and it is no output.
pub(crate) const END_OUT: u8 = 4;

/// A circuit's gates, batch after batch ([`Circuit::source`](crate::Circuit::source)).
pub trait GateSource: Send {
    /// Replaces `batch` by the next gates, at most `max` of them (`max >= 1`), and their
    /// ends; returns `false`, with `batch` empty, once every gate was handed out.
    fn next_batch(&mut self, max: usize, batch: &mut GateBatch) -> bool;
}

/// A circuit that writes its gates as they are read instead of holding them: built-ins
/// whose gates would not fit in memory. It reuses wire numbers after their ends (see the
/// module documentation), so [`Circuit::num_wires`](crate::Circuit::num_wires) is the wires
/// it keeps apart at once.
pub trait Generate: Send + Sync + RefUnwindSafe + UnwindSafe + fmt::Debug {
    /// The gates from the first on, with their ends.
    fn source(&self) -> Box<dyn GateSource + '_>;
    /// What names the circuit exactly (a built-in's name and every parameter): two
    /// generated circuits with one identity are the same circuit.
    fn identity(&self) -> String;
    /// The numbers of AND, XOR and INV gates.
    fn counts(&self) -> [u64; 3];
}

/// Calls `each` on every gate of `source` in order, a batch of `batch` gates at a time.
pub(crate) fn for_each_gate(source: &mut dyn GateSource, mut each: impl FnMut(&Gate)) {
    let mut batch = GateBatch::default();
    while source.next_batch(1 << 14, &mut batch) {
        batch.gates.iter().for_each(&mut each);
    }
}
