//! Gate counts, depths and level widths of a circuit.
//!
//! The *depth* of a wire counts every gate on the longest path from an input; the *AND-depth*
//! counts AND gates only (XOR and INV are free in the half-gates schemes, so AND-depth is the
//! number of rounds an interactive protocol would need and the number of levels a parallel
//! garbler sees). The width of an AND level is the number of AND gates whose output has that
//! AND-depth: the gates of one level are independent, which is what fine-grained parallel
//! garbling (parallel-yao-paper, FGP) exploits.

use crate::circuit::{Circuit, Gate, Party};
use crate::source::for_each_gate;

/// Statistics of a circuit; see the module documentation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Stats {
    /// Number of AND gates.
    pub and: u64,
    /// Number of XOR gates.
    pub xor: u64,
    /// Number of INV gates.
    pub inv: u64,
    /// Longest input-to-output path, counting every gate.
    pub depth: u32,
    /// Longest path counting AND gates only.
    pub and_depth: u32,
    /// Number of wires: of wire numbers, for a generated circuit, which reuses them.
    pub wires: u64,
    /// Total input bits.
    pub inputs: u64,
    /// Input bits of the garbler.
    pub garbler_inputs: u64,
    /// Input bits of the evaluator.
    pub evaluator_inputs: u64,
    /// Total output bits.
    pub outputs: u64,
    /// `level_widths[d - 1]` = number of gates (of any kind) at depth `d`.
    pub level_widths: Vec<u64>,
    /// `and_level_widths[d - 1]` = number of AND gates at AND-depth `d`.
    pub and_level_widths: Vec<u64>,
}

impl Stats {
    /// The gate counts and sizes only, depths and level widths left at zero and empty: the
    /// counts the circuit keeps, without a pass over its gates, for a caller that needs no
    /// depth (a 2PC party sizing its tables), where [`Stats::of`] reads every gate and keeps
    /// two `u32` per wire.
    pub fn counts(circuit: &Circuit) -> Stats {
        let [and, xor, inv] = circuit.gate_counts();
        Stats {
            and,
            xor,
            inv,
            depth: 0,
            and_depth: 0,
            wires: u64::from(circuit.num_wires()),
            inputs: circuit.n_inputs() as u64,
            garbler_inputs: circuit.party_input_bits(Party::Garbler) as u64,
            evaluator_inputs: circuit.party_input_bits(Party::Evaluator) as u64,
            outputs: circuit.n_outputs() as u64,
            level_widths: Vec::new(),
            and_level_widths: Vec::new(),
        }
    }

    /// Computes the statistics in one pass over the gates (two `u32` per wire of memory).
    pub fn of(circuit: &Circuit) -> Stats {
        let n = circuit.num_wires() as usize;
        let mut depth = vec![0u32; n];
        let mut and_depth = vec![0u32; n];
        let (mut and, mut xor, mut inv) = (0u64, 0u64, 0u64);
        let mut level_widths: Vec<u64> = Vec::new();
        let mut and_level_widths: Vec<u64> = Vec::new();
        let bump = |widths: &mut Vec<u64>, level: u32| {
            let i = level as usize - 1;
            if widths.len() <= i {
                widths.resize(i + 1, 0);
            }
            widths[i] += 1;
        };
        for_each_gate(&mut *circuit.source(false), |g| {
            let (a, b) = g.inputs();
            let (a, b) = (a as usize, b.map_or(a as usize, |b| b as usize));
            let d = depth[a].max(depth[b]) + 1;
            let mut ad = and_depth[a].max(and_depth[b]);
            match g {
                Gate::And { .. } => {
                    and += 1;
                    ad += 1;
                    bump(&mut and_level_widths, ad);
                }
                Gate::Xor { .. } => xor += 1,
                Gate::Inv { .. } => inv += 1,
            }
            bump(&mut level_widths, d);
            let out = g.output() as usize;
            depth[out] = d;
            and_depth[out] = ad;
        });
        Stats {
            and,
            xor,
            inv,
            depth: level_widths.len() as u32,
            and_depth: and_level_widths.len() as u32,
            wires: u64::from(circuit.num_wires()),
            inputs: circuit.n_inputs() as u64,
            garbler_inputs: circuit.party_input_bits(Party::Garbler) as u64,
            evaluator_inputs: circuit.party_input_bits(Party::Evaluator) as u64,
            outputs: circuit.n_outputs() as u64,
            level_widths,
            and_level_widths,
        }
    }

    /// Total number of gates.
    pub fn gates(&self) -> u64 {
        self.and + self.xor + self.inv
    }

    /// The widest AND level (0 for a circuit without AND gates).
    pub fn max_and_width(&self) -> u64 {
        self.and_level_widths.iter().copied().max().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::{BitOrder, InputGroup, OutputGroup};

    #[test]
    fn counts_depths_and_widths() {
        // w2 = a&b, w3 = a^b, w4 = w2&w3, w5 = !w4
        let c = Circuit::new(
            6,
            vec![InputGroup {
                party: Party::Garbler,
                len: 2,
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            vec![OutputGroup {
                wires: vec![5],
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            vec![
                Gate::And { a: 0, b: 1, out: 2 },
                Gate::Xor { a: 0, b: 1, out: 3 },
                Gate::And { a: 2, b: 3, out: 4 },
                Gate::Inv { a: 4, out: 5 },
            ],
        )
        .unwrap();
        let s = Stats::of(&c);
        assert_eq!((s.and, s.xor, s.inv), (2, 1, 1));
        assert_eq!((s.depth, s.and_depth), (3, 2));
        assert_eq!(s.level_widths, vec![2, 1, 1]);
        assert_eq!(s.and_level_widths, vec![1, 1]);
        assert_eq!((s.inputs, s.garbler_inputs, s.outputs), (2, 2, 1));
        // The counts alone agree, without depths.
        let counts = Stats::counts(&c);
        assert_eq!((counts.and, counts.xor, counts.inv), (2, 1, 1));
        assert_eq!((counts.wires, counts.inputs, counts.outputs), (6, 2, 1));
        assert_eq!((counts.depth, counts.and_depth), (0, 0));
        assert!(counts.and_level_widths.is_empty());
    }
}
