//! The gate level of the builder: [`Bit`], the [`Builder`] with its bit operations (constants
//! folded as they are written) and [`Builder::build`], which numbers the wires. The integer
//! operations in `int` and the sorting networks in `sort` are written on top of these.

use crate::circuit::{BitOrder, Circuit, Gate, InputGroup, OutputGroup, Party, WireId};
use crate::sections::Sections;

/// A bit of a circuit under construction: a known constant or a wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Bit {
    /// A constant, known when the circuit is built; costs no gate.
    Const(bool),
    /// The value of a wire (builder numbering, renumbered by [`Builder::build`]).
    Wire(WireId),
}

impl Bit {
    /// The constant 0.
    pub const ZERO: Bit = Bit::Const(false);
    /// The constant 1.
    pub const ONE: Bit = Bit::Const(true);

    /// The constant value, if this bit is one.
    pub fn as_const(self) -> Option<bool> {
        match self {
            Bit::Const(v) => Some(v),
            Bit::Wire(_) => None,
        }
    }
}

/// Builds a [`Circuit`]; see the [`builder`](crate::builder) module documentation.
#[derive(Debug, Default)]
pub struct Builder {
    pub(super) next_wire: WireId,
    gates: Vec<Gate>,
    /// Input groups with their builder wires, in declaration order.
    inputs: Vec<(InputGroup, Vec<WireId>)>,
    outputs: Vec<(String, Vec<Bit>)>,
    /// Wire numbers to hand out again (a program written in pieces: the `pieces` module),
    /// the most recently freed last; `None` when every wire is new.
    free: Option<Vec<WireId>>,
    /// The sections [`Builder::parallel`] recorded: each its region boundaries (gate indices).
    pub(super) sections: Vec<Vec<u64>>,
    /// How many [`Builder::parallel`] calls are running: only the outermost records.
    pub(super) parallel_depth: usize,
}

impl Builder {
    /// An empty builder.
    pub fn new() -> Self {
        Self::default()
    }

    fn fresh(&mut self) -> WireId {
        if let Some(w) = self.free.as_mut().and_then(Vec::pop) {
            return w;
        }
        let w = self.next_wire;
        self.next_wire = w.checked_add(1).expect("fewer than 2^32 wires");
        w
    }

    /// From now on, hands out again the numbers given to [`Builder::free_wire`].
    pub(super) fn reuse_wires(&mut self) {
        self.free.get_or_insert_with(Vec::new);
    }

    /// Wire `w` is read by no gate written from now on: its number may be handed out again.
    pub(super) fn free_wire(&mut self, w: WireId) {
        self.free
            .as_mut()
            .expect("wire numbers are reused only after reuse_wires")
            .push(w);
    }

    /// The gates written since they were last taken.
    pub(super) fn gates_mut(&mut self) -> &mut Vec<Gate> {
        &mut self.gates
    }

    /// Every input wire, in declaration order.
    pub(super) fn input_wires(&self) -> impl Iterator<Item = WireId> + '_ {
        self.inputs.iter().flat_map(|(_, w)| w.iter().copied())
    }

    /// The input groups, in declaration order.
    pub(super) fn input_groups(&self) -> impl Iterator<Item = &InputGroup> {
        self.inputs.iter().map(|(g, _)| g)
    }

    /// The output groups, each wire numbered by `number` (constant outputs materialised
    /// first: [`Builder::materialise_constant_outputs`]).
    pub(super) fn output_groups(&self, number: impl Fn(WireId) -> WireId) -> Vec<OutputGroup> {
        self.outputs
            .iter()
            .map(|(name, bits)| OutputGroup {
                wires: bits
                    .iter()
                    .map(|b| match *b {
                        Bit::Wire(w) => number(w),
                        Bit::Const(_) => unreachable!("constant outputs are materialised"),
                    })
                    .collect(),
                order: BitOrder::MsbFirst,
                name: name.clone(),
            })
            .collect()
    }

    /// Whether any output group is declared.
    pub(super) fn has_outputs(&self) -> bool {
        !self.outputs.is_empty()
    }

    /// Number of gates emitted so far.
    pub fn gate_count(&self) -> usize {
        self.gates.len()
    }

    /// Number of AND gates emitted so far.
    pub fn and_count(&self) -> usize {
        self.gates
            .iter()
            .filter(|g| matches!(g, Gate::And { .. }))
            .count()
    }

    /// Declares an input group of `n` bits owned by `party`; returns its bits in wire order.
    pub fn input_bits(&mut self, party: Party, name: &str, n: usize) -> Vec<Bit> {
        let wires: Vec<WireId> = (0..n).map(|_| self.fresh()).collect();
        let bits = wires.iter().map(|&w| Bit::Wire(w)).collect();
        self.inputs.push((
            InputGroup {
                party,
                len: n as u32,
                order: BitOrder::MsbFirst,
                name: name.to_string(),
            },
            wires,
        ));
        bits
    }

    /// Adds an output group: the given bits in wire order (hex MSB-first).
    pub fn output_bits(&mut self, name: &str, bits: &[Bit]) {
        self.outputs.push((name.to_string(), bits.to_vec()));
    }

    /// `a XOR b`.
    pub fn xor(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Const(x), Bit::Const(y)) => Bit::Const(x ^ y),
            (Bit::Const(false), w) | (w, Bit::Const(false)) => w,
            (Bit::Const(true), w) | (w, Bit::Const(true)) => self.not(w),
            (Bit::Wire(x), Bit::Wire(y)) if x == y => Bit::ZERO,
            (Bit::Wire(a), Bit::Wire(b)) => {
                let out = self.fresh();
                self.gates.push(Gate::Xor { a, b, out });
                Bit::Wire(out)
            }
        }
    }

    /// `a AND b`.
    pub fn and(&mut self, a: Bit, b: Bit) -> Bit {
        match (a, b) {
            (Bit::Const(x), Bit::Const(y)) => Bit::Const(x & y),
            (Bit::Const(false), _) | (_, Bit::Const(false)) => Bit::ZERO,
            (Bit::Const(true), w) | (w, Bit::Const(true)) => w,
            (Bit::Wire(x), Bit::Wire(y)) if x == y => a,
            (Bit::Wire(a), Bit::Wire(b)) => {
                let out = self.fresh();
                self.gates.push(Gate::And { a, b, out });
                Bit::Wire(out)
            }
        }
    }

    /// `NOT a`.
    pub fn not(&mut self, a: Bit) -> Bit {
        match a {
            Bit::Const(x) => Bit::Const(!x),
            Bit::Wire(a) => {
                let out = self.fresh();
                self.gates.push(Gate::Inv { a, out });
                Bit::Wire(out)
            }
        }
    }

    /// `a OR b`, as `(a XOR b) XOR (a AND b)`: one AND gate.
    pub fn or(&mut self, a: Bit, b: Bit) -> Bit {
        let x = self.xor(a, b);
        let y = self.and(a, b);
        self.xor(x, y)
    }

    /// `if sel { if1 } else { if0 }`: one AND gate.
    pub fn mux(&mut self, sel: Bit, if1: Bit, if0: Bit) -> Bit {
        let d = self.xor(if1, if0);
        let m = self.and(sel, d);
        self.xor(if0, m)
    }

    /// Bitwise `if sel { if1 } else { if0 }` over equal-length slices.
    pub fn mux_bits(&mut self, sel: Bit, if1: &[Bit], if0: &[Bit]) -> Vec<Bit> {
        assert_eq!(if1.len(), if0.len(), "mux of unequal widths");
        if1.iter()
            .zip(if0)
            .map(|(&x, &y)| self.mux(sel, x, y))
            .collect()
    }

    /// Bitwise XOR of equal-length slices.
    pub fn xor_bits(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        assert_eq!(a.len(), b.len(), "xor of unequal widths");
        a.iter().zip(b).map(|(&x, &y)| self.xor(x, y)).collect()
    }

    /// Bitwise AND of equal-length slices.
    pub fn and_bits(&mut self, a: &[Bit], b: &[Bit]) -> Vec<Bit> {
        assert_eq!(a.len(), b.len(), "and of unequal widths");
        a.iter().zip(b).map(|(&x, &y)| self.and(x, y)).collect()
    }

    /// AND of all bits (1 for none), as a balanced tree: `n - 1` AND gates, depth `log n`.
    pub fn and_all(&mut self, bits: &[Bit]) -> Bit {
        match bits.len() {
            0 => Bit::ONE,
            1 => bits[0],
            n => {
                let (l, r) = bits.split_at(n / 2);
                let l = self.and_all(l);
                let r = self.and_all(r);
                self.and(l, r)
            }
        }
    }

    /// OR of all bits (0 for none).
    pub fn or_all(&mut self, bits: &[Bit]) -> Bit {
        let inverted: Vec<Bit> = bits.iter().map(|&b| self.not(b)).collect();
        let none = self.and_all(&inverted);
        self.not(none)
    }

    /// Writes each constant output bit as a wire, at the end: zero = w XOR w of the first
    /// input wire, one = NOT zero (no AND gate).
    ///
    /// # Panics
    /// If an output is constant and the circuit has no input wire to derive a constant from.
    pub(super) fn materialise_constant_outputs(&mut self) {
        let needs = |v: bool| {
            self.outputs
                .iter()
                .any(|(_, bits)| bits.contains(&Bit::Const(v)))
        };
        let (need_zero, need_one) = (needs(false), needs(true));
        if !need_zero && !need_one {
            return;
        }
        let first = self
            .input_wires()
            .next()
            .expect("a constant output needs at least one input wire");
        let zero = self.fresh();
        self.gates.push(Gate::Xor {
            a: first,
            b: first,
            out: zero,
        });
        let one = need_one.then(|| self.not(Bit::Wire(zero)));
        for (_, bits) in &mut self.outputs {
            for bit in bits.iter_mut() {
                match *bit {
                    Bit::Const(false) => *bit = Bit::Wire(zero),
                    Bit::Const(true) => *bit = one.expect("made when an output is 1"),
                    Bit::Wire(_) => {}
                }
            }
        }
    }

    /// Finishes the circuit: input wires are renumbered to come first, in group order, then
    /// every gate output in gate order. Constant outputs are materialised from the first input
    /// wire (`x XOR x` and its negation), which costs no AND gate, after every other gate.
    /// The sections [`Builder::parallel`] recorded are the circuit's
    /// [`Circuit::sections`]: gate order is kept, so their gate indices still hold.
    ///
    /// # Panics
    /// If an output is constant and the circuit has no input wire to derive a constant from;
    /// if a body of [`Builder::parallel`] read what another body of the same call wrote
    /// (the program's bug, named by the [`SectionsError`](crate::SectionsError)).
    pub fn build(mut self) -> Circuit {
        self.materialise_constant_outputs();
        let mut map = vec![WireId::MAX; self.next_wire as usize];
        let mut next = 0u32;
        for (_, wires) in &self.inputs {
            for &w in wires {
                map[w as usize] = next;
                next += 1;
            }
        }
        for g in &self.gates {
            map[g.output() as usize] = next;
            next += 1;
        }
        let m = |w: WireId| map[w as usize];
        let gates = self
            .gates
            .iter()
            .map(|g| g.renumbered(m, m(g.output())))
            .collect();
        let outputs = self.output_groups(m);
        let inputs = self.inputs.into_iter().map(|(g, _)| g).collect();
        let circuit = Circuit::new(u64::from(next), inputs, outputs, gates)
            .expect("the builder only emits valid circuits");
        // Ascending, disjoint, each of two or more non-empty regions, by construction.
        let sections = Sections::new(self.sections).expect("parallel records valid sections");
        circuit.with_sections(sections).unwrap_or_else(|e| {
            panic!("Builder::parallel: the bodies of one call must be independent: {e}")
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constants_fold_without_gates() {
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 1)[0];
        assert_eq!(b.and(x, Bit::ZERO), Bit::ZERO);
        assert_eq!(b.and(x, Bit::ONE), x);
        assert_eq!(b.xor(x, Bit::ZERO), x);
        assert_eq!(b.xor(x, x), Bit::ZERO);
        assert_eq!(b.mux(Bit::ONE, x, Bit::ZERO), x);
        assert_eq!(b.gate_count(), 0);
        let c = b.constant_uint(0x5a, 8);
        let y = b.add(&c, &c);
        assert_eq!(y.as_const(), Some(0xb4));
        assert_eq!(b.gate_count(), 0);
    }

    #[test]
    fn inputs_come_first_and_constant_outputs_work() {
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 1)[0];
        let nx = b.not(x);
        let y = b.input_bits(Party::Evaluator, "y", 1)[0];
        let z = b.and(nx, y);
        b.output_bits("out", &[z, Bit::ONE, Bit::ZERO, x]);
        let c = b.build();
        assert_eq!(c.n_inputs(), 2);
        for (x, y) in [(false, false), (false, true), (true, false), (true, true)] {
            assert_eq!(c.eval_bits(&[x, y]), vec![!x & y, true, false, x]);
        }
    }
}
