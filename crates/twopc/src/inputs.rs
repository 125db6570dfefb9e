//! Where each party's input bits lie among the circuit's input wires, the check that a
//! party's own input fits them, and the labels of the garbler's input that both parties
//! derive from one seed.

use std::ops::Range;

use transputation_circuits::{Circuit, Party, WireId};
use transputation_core::prg::Prg;
use transputation_core::Block;

use crate::error::Error;

/// The evaluator's labels of the garbler's `n` input bits, wire order, from the seed the
/// garbler sends ([`crate::messages::LabelSeed`]): block `i` of the seed's PRG stream.
pub(crate) fn seeded_labels(seed: Block, n: usize) -> Vec<Block> {
    let mut labels = vec![Block::ZERO; n];
    Prg::new(seed).fill_blocks(&mut labels);
    labels
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
