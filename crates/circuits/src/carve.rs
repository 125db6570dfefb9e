//! Carving part circuits out of a circuit: what [`crate::split`] and [`crate::regions`]
//! both do. A part keeps some of the circuit's gates; it recomputes the free gates (XOR and
//! INV of wires that depend on no AND gate) it reads, takes only the input wires it reads,
//! and is renumbered: inputs first (each original group's used wires, in order, as one
//! group), then any inputs it adds, then its gates in their original order.

use crate::circuit::{
    BitOrder, Circuit, CircuitError, Gate, InputGroup, OutputGroup, Party, WireId,
};

/// Which original input bit feeds a part's input wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputSource {
    /// The party that owns the bit in the original circuit.
    pub party: Party,
    /// Its index among that party's input bits (in wire order, as
    /// [`crate::encoding::encode_party_input`] gives them).
    pub index: u32,
}

/// A part's input bits of the original groups owned by `party` (of the original circuit),
/// from that party's original input bits `own`, in the part's wire order.
pub(crate) fn input_of(inputs: &[InputSource], party: Party, own: &[bool]) -> Vec<bool> {
    inputs
        .iter()
        .filter(|s| s.party == party)
        .map(|s| own[s.index as usize])
        .collect()
}

/// The root of `w` in a union-find over wires (path halving).
pub(crate) fn find(parent: &mut [u32], mut w: u32) -> u32 {
    while parent[w as usize] != w {
        let up = parent[parent[w as usize] as usize];
        parent[w as usize] = up;
        w = up;
    }
    w
}

/// What one part circuit is made of.
pub(crate) struct Shape<'a> {
    /// The original gates it keeps (besides the free gates it needs).
    pub(crate) keep: &'a [bool],
    /// Wires it is given as XOR shares (a glue's crossing wires, [`crate::regions`]), in
    /// share order: after its original inputs come the garbler's shares, then the
    /// evaluator's, and each given wire is their XOR.
    pub(crate) given: &'a [WireId],
    /// Its output groups, as original wires.
    pub(crate) outputs: Vec<(String, Vec<WireId>)>,
    /// Whether each output bit is blinded by a garbler input bit of its own (a region's),
    /// added as one group after its original inputs.
    pub(crate) blind: bool,
    /// Whether the original groups change hands (a region the evaluator garbles).
    pub(crate) swap: bool,
}

impl Shape<'_> {
    /// The original gates the part computes (its kept gates and the free gates it reads)
    /// and the wires it reads that it does not compute (free wires and inputs).
    fn gates_to_include(
        &self,
        c: &Circuit,
        free: &[bool],
        is_given: &[bool],
    ) -> (Vec<bool>, Vec<bool>) {
        let gates = c.gates();
        // The free wires it reads: those of its kept gates and outputs, then (gates
        // backwards) those the free gates it reads read.
        let mut need = vec![false; c.num_wires() as usize];
        let mut include = self.keep.to_vec();
        let mark = |need: &mut [bool], w: WireId| {
            if free[w as usize] && !is_given[w as usize] {
                need[w as usize] = true;
            }
        };
        for (i, g) in gates.iter().enumerate() {
            if self.keep[i] {
                let (a, b) = g.inputs();
                std::iter::once(a).chain(b).for_each(|w| mark(&mut need, w));
            }
        }
        for (_, wires) in &self.outputs {
            wires.iter().for_each(|&w| mark(&mut need, w));
        }
        for (i, g) in gates.iter().enumerate().rev() {
            let out = g.output() as usize;
            if free[out] && need[out] && !self.keep[i] {
                include[i] = true;
                let (a, b) = g.inputs();
                std::iter::once(a)
                    .chain(b)
                    .for_each(|w| need[w as usize] = true);
            }
        }
        (include, need)
    }

    /// The original input wires the part reads, numbered first (`renum`), as groups (each
    /// original group's used wires; parties swapped where the part says so), and where each
    /// comes from.
    fn input_groups(
        &self,
        c: &Circuit,
        need: &[bool],
        renum: &mut [WireId],
    ) -> (Vec<InputSource>, Vec<InputGroup>) {
        let mut inputs = Vec::new();
        let mut groups = Vec::new();
        let mut seen = [0u32; 2];
        for (group, range) in c.input_ranges() {
            let owner = usize::from(group.party == Party::Evaluator);
            let mut len = 0u32;
            for w in range {
                if need[w as usize] {
                    renum[w as usize] = inputs.len() as WireId;
                    inputs.push(InputSource {
                        party: group.party,
                        index: seen[owner],
                    });
                    len += 1;
                }
                seen[owner] += 1;
            }
            if len > 0 {
                let party = if self.swap {
                    group.party.other()
                } else {
                    group.party
                };
                groups.push(InputGroup {
                    party,
                    len,
                    order: BitOrder::MsbFirst,
                    name: group.name.clone(),
                });
            }
        }
        (inputs, groups)
    }

    /// The part's circuit, and where each of its inputs of the original groups comes from.
    pub(crate) fn build(
        &self,
        c: &Circuit,
        free: &[bool],
    ) -> Result<(Circuit, Vec<InputSource>), CircuitError> {
        let n = c.num_wires() as usize;
        let gates = c.gates();
        let mut is_given = vec![false; n];
        for &w in self.given {
            is_given[w as usize] = true;
        }
        let (include, need) = self.gates_to_include(c, free, &is_given);
        let mut renum = vec![WireId::MAX; n];
        let (inputs, mut groups) = self.input_groups(c, &need, &mut renum);
        let mut next = inputs.len() as WireId;
        let n_out: usize = self.outputs.iter().map(|(_, w)| w.len()).sum();
        let extra = |party: Party, len: usize, name: &str| InputGroup {
            party,
            len: len as u32,
            order: BitOrder::MsbFirst,
            name: name.into(),
        };
        let mut new_gates = Vec::new();
        let first_extra = next;
        if self.blind && n_out > 0 {
            groups.push(extra(Party::Garbler, n_out, "blinding"));
            next += n_out as WireId;
        }
        if !self.given.is_empty() {
            let k = self.given.len() as WireId;
            groups.push(extra(Party::Garbler, self.given.len(), "garbler's shares"));
            groups.push(extra(
                Party::Evaluator,
                self.given.len(),
                "evaluator's shares",
            ));
            next += 2 * k;
            // Each given wire is the XOR of its two shares.
            for (i, &w) in self.given.iter().enumerate() {
                let i = i as WireId;
                new_gates.push(Gate::Xor {
                    a: first_extra + i,
                    b: first_extra + k + i,
                    out: next,
                });
                renum[w as usize] = next;
                next += 1;
            }
        }
        for (i, g) in gates.iter().enumerate() {
            if include[i] && !is_given[g.output() as usize] {
                new_gates.push(g.renumbered(|w| renum[w as usize], next));
                renum[g.output() as usize] = next;
                next += 1;
            }
        }
        let mut out_groups = Vec::new();
        let mut blinding = first_extra;
        for (name, wires) in &self.outputs {
            let mut mapped = Vec::with_capacity(wires.len());
            for &w in wires {
                let v = renum[w as usize];
                if self.blind {
                    new_gates.push(Gate::Xor {
                        a: v,
                        b: blinding,
                        out: next,
                    });
                    mapped.push(next);
                    next += 1;
                    blinding += 1;
                } else {
                    mapped.push(v);
                }
            }
            if !mapped.is_empty() {
                out_groups.push(OutputGroup {
                    wires: mapped,
                    order: BitOrder::MsbFirst,
                    name: name.clone(),
                });
            }
        }
        let circuit = Circuit::new(u64::from(next), groups, out_groups, new_gates)?;
        Ok((circuit, inputs))
    }
}
