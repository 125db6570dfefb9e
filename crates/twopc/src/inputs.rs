//! Where each party's input bits lie among the circuit's input wires, the check that a
//! party's own input fits them, and the labels of the garbler's input that both parties
//! derive from one seed.

use std::ops::Range;

use transputation_circuits::{Circuit, Party, WireId};
use transputation_core::prg::Prg;
use transputation_core::Block;

use crate::error::Error;

/// The evaluator's labels of the garbler's `n` input bits, wire order, from the seed the
/// garbler sends ([`crate::messages::LabelSeed`]): one PRG stream for the session, of
/// which each computation takes the next `n` blocks, block `i` of its share being the label
/// of input bit `i`. Both parties hold one and draw from it in step.
pub(crate) struct SeededLabels {
    stream: Prg,
    n: usize,
}

impl SeededLabels {
    /// The stream of `seed` for `n` input bits.
    pub(crate) fn new(seed: Block, n: usize) -> Self {
        SeededLabels {
            stream: Prg::new(seed),
            n,
        }
    }

    /// The next computation's labels.
    pub(crate) fn next(&mut self) -> Vec<Block> {
        let mut labels = vec![Block::ZERO; self.n];
        self.stream.fill_blocks(&mut labels);
        labels
    }
}

impl std::fmt::Debug for SeededLabels {
    /// The stream's size only: its state is the labels.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SeededLabels {{ n: {} }}", self.n)
    }
}

/// Hands `items` to `put(first_wire, slice)` over a party's input wires `ranges`, in wire
/// order, starting at the party's input bit `first`: one call per range (or part of one)
/// that the items cover.
pub(crate) fn over_ranges<T>(
    ranges: &[Range<WireId>],
    mut first: usize,
    mut items: &[T],
    mut put: impl FnMut(WireId, &[T]),
) {
    for r in ranges {
        if items.is_empty() {
            break;
        }
        if first >= r.len() {
            first -= r.len();
            continue;
        }
        let n = (r.len() - first).min(items.len());
        let (now, later) = items.split_at(n);
        put(r.start + first as WireId, now);
        items = later;
        first = 0;
    }
    debug_assert!(items.is_empty(), "items past the party's last input wire");
}

/// The input wires of `party`, in wire order, as ranges.
pub(crate) fn wires_of(circuit: &Circuit, party: Party) -> Vec<std::ops::Range<WireId>> {
    circuit
        .input_ranges()
        .filter(|(g, _)| g.party == party)
        .map(|(_, r)| r)
        .collect()
}

/// Checks that `bits` is one bit per input wire of `party`.
pub(crate) fn check_input(circuit: &Circuit, party: Party, bits: &[bool]) -> Result<(), Error> {
    let want = circuit.party_input_bits(party);
    if bits.len() != want {
        return Err(Error::Input(format!(
            "the {party} has {want} input bits in this circuit, {} given",
            bits.len()
        )));
    }
    Ok(())
}
