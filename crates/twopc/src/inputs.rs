//! Where each party's input bits lie among the circuit's input wires, and the check that a
//! party's own input fits them.

use transputation_circuits::{Circuit, Party, WireId};

use crate::error::Error;

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
