//! Hex strings to input bits and output bits to hex strings.
//!
//! A party's input is one hex string per input group it owns, in group order, separated by
//! commas (`_` may be used inside a string to group digits). A group of `n` bits is written
//! with `ceil(n/4)` hex digits, in the group's [`BitOrder`]:
//! - [`BitOrder::MsbFirst`]: the digits are one big-endian `n`-bit integer whose most
//!   significant bit is wire 0 of the group: for whole bytes this is the hex written out as
//!   bits, left to right (FIPS-197 byte order for AES; a list of big-endian values
//!   concatenated). Exactly `ceil(n/4)` digits are required, because a list of values
//!   concatenated would silently shift if a digit were missing.
//! - [`BitOrder::LsbFirst`]: the digits are one big-endian integer whose bit `k` is wire `k`;
//!   fewer digits are allowed (leading zeros implied).
//!
//! In both orders the value must fit in `n` bits, and a group reversed from one order to the
//! other keeps its hex string.
//!
//! Outputs are printed the same way, one hex string per output group, separated by commas.

use crate::circuit::{BitOrder, Circuit, Party};

/// A hex input that does not fit the circuit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{party} input{}: {problem}", group_label(*.group, .name))]
pub struct EncodingError {
    /// Whose input.
    pub party: Party,
    /// Index of the group among the party's groups, when the problem is in one group.
    pub group: Option<usize>,
    /// The group's name.
    pub name: String,
    /// What is wrong.
    pub problem: String,
}

fn group_label(group: Option<usize>, name: &str) -> String {
    match (group, name.is_empty()) {
        (Some(i), true) => format!(" {}", i + 1),
        (Some(i), false) => format!(" {} ({name})", i + 1),
        (None, _) => String::new(),
    }
}

/// Parses one group's hex string into `len` bits in wire order.
pub fn hex_to_bits(hex: &str, len: usize, order: BitOrder) -> Result<Vec<bool>, String> {
    let mut digits = Vec::with_capacity(len.div_ceil(4));
    for (i, c) in hex.trim().chars().enumerate() {
        if c == '_' {
            continue;
        }
        match c.to_digit(16) {
            Some(d) => digits.push(d as u8),
            None => return Err(format!("'{c}' at position {} is not a hex digit", i + 1)),
        }
    }
    let want = len.div_ceil(4);
    if order == BitOrder::MsbFirst && digits.len() != want {
        return Err(format!(
            "expected {want} hex digits for {len} bits, found {}",
            digits.len()
        ));
    }
    if digits.is_empty() && len > 0 {
        return Err(format!("expected up to {want} hex digits, found none"));
    }
    // Bits by weight, least significant first.
    let mut bits = vec![false; len];
    for (k, bit) in digits
        .iter()
        .rev()
        .flat_map(|&d| (0..4).map(move |k| (d >> k) & 1 == 1))
        .enumerate()
    {
        if k < len {
            bits[k] = bit;
        } else if bit {
            return Err(format!("the value does not fit in {len} bits"));
        }
    }
    if order == BitOrder::MsbFirst {
        bits.reverse();
    }
    Ok(bits)
}

/// Parses exactly `n` bytes of hex, first byte first (`_` may separate digits): the bytes of
/// an MSB-first group of `8n` bits.
pub fn hex_to_bytes(hex: &str, n: usize) -> Result<Vec<u8>, String> {
    let bits = hex_to_bits(hex, 8 * n, BitOrder::MsbFirst)?;
    Ok(bits
        .chunks(8)
        .map(|byte| byte.iter().fold(0u8, |v, &b| (v << 1) | u8::from(b)))
        .collect())
}

/// Writes `bits` (in wire order) as hex in the given order.
pub fn bits_to_hex(bits: &[bool], order: BitOrder) -> String {
    // Bit of weight `k`, for k < len.
    let weight = |k: usize| match order {
        BitOrder::MsbFirst => bits[bits.len() - 1 - k],
        BitOrder::LsbFirst => bits[k],
    };
    let n = bits.len().div_ceil(4);
    (0..n)
        .rev()
        .map(|digit| {
            let d = (0..4)
                .filter(|&j| 4 * digit + j < bits.len() && weight(4 * digit + j))
                .fold(0u32, |d, j| d | 1 << j);
            char::from_digit(d, 16).expect("a nibble")
        })
        .collect()
}

/// Encodes both parties' hex inputs into one bit per input wire of `circuit`.
pub fn encode_inputs(
    circuit: &Circuit,
    garbler: &str,
    evaluator: &str,
) -> Result<Vec<bool>, EncodingError> {
    let mut own = [
        encode_party_input(circuit, Party::Garbler, garbler)?.into_iter(),
        encode_party_input(circuit, Party::Evaluator, evaluator)?.into_iter(),
    ];
    let mut bits = Vec::with_capacity(circuit.n_inputs());
    for g in circuit.inputs() {
        let p = usize::from(g.party == Party::Evaluator);
        bits.extend(own[p].by_ref().take(g.len as usize));
    }
    Ok(bits)
}

/// Encodes one party's hex input (one string per group it owns, comma-separated) into one
/// bit per input wire it owns, in wire order. This is all a party of a 2PC session knows.
pub fn encode_party_input(
    circuit: &Circuit,
    party: Party,
    hex: &str,
) -> Result<Vec<bool>, EncodingError> {
    let strings = split_groups(hex);
    let owned: Vec<_> = circuit
        .inputs()
        .iter()
        .filter(|g| g.party == party)
        .collect();
    // A party without groups (or with one empty group) may give an empty string.
    let given = if strings.len() == 1 && strings[0].is_empty() && owned.is_empty() {
        0
    } else {
        strings.len()
    };
    if given != owned.len() {
        return Err(EncodingError {
            party,
            group: None,
            name: String::new(),
            problem: format!(
                "{given} comma-separated value(s) given but this party owns {} input group(s) ({})",
                owned.len(),
                describe_groups(circuit, party)
            ),
        });
    }
    let mut bits = Vec::with_capacity(circuit.party_input_bits(party));
    for (i, (g, s)) in owned.iter().zip(strings).enumerate() {
        let group_bits =
            hex_to_bits(s, g.len as usize, g.order).map_err(|problem| EncodingError {
                party,
                group: Some(i),
                name: g.name.clone(),
                problem,
            })?;
        bits.extend(group_bits);
    }
    Ok(bits)
}

/// Decodes one bit per output wire into the comma-separated hex of the output groups.
pub fn decode_outputs(circuit: &Circuit, bits: &[bool]) -> String {
    let mut rest = bits;
    let mut out = Vec::with_capacity(circuit.outputs().len());
    for o in circuit.outputs() {
        let (now, later) = rest.split_at(o.wires.len());
        out.push(bits_to_hex(now, o.order));
        rest = later;
    }
    out.join(",")
}

/// "key: 128 bits; plaintext: 128 bits" for a party's groups, for messages and `circuit list`.
pub fn describe_groups(circuit: &Circuit, party: Party) -> String {
    let groups: Vec<String> = circuit
        .inputs()
        .iter()
        .filter(|g| g.party == party)
        .map(|g| {
            if g.name.is_empty() {
                format!("{} bits", g.len)
            } else {
                format!("{}: {} bits", g.name, g.len)
            }
        })
        .collect();
    if groups.is_empty() {
        "none".to_string()
    } else {
        groups.join("; ")
    }
}

fn split_groups(s: &str) -> Vec<&str> {
    s.split(',').map(str::trim).collect()
}

// Hex evaluation lives here rather than in `circuit`, so that the circuit representation
// does not depend on the encoding built on top of it.
impl Circuit {
    /// Plain evaluation on hex inputs, as `circuit eval` does: each party's input is one hex
    /// string per group it owns, separated by commas; the output is one hex string per output
    /// group, separated by commas. See [`crate::encoding`].
    pub fn eval_hex(&self, garbler: &str, evaluator: &str) -> Result<String, EncodingError> {
        let bits = encode_inputs(self, garbler, evaluator)?;
        Ok(decode_outputs(self, &self.eval_bits(&bits)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn msb_first_is_the_hex_written_as_bits() {
        let bits = hex_to_bits("a1", 8, BitOrder::MsbFirst).unwrap();
        assert_eq!(
            bits,
            [true, false, true, false, false, false, false, true].to_vec()
        );
        assert_eq!(bits_to_hex(&bits, BitOrder::MsbFirst), "a1");
        assert!(hex_to_bits("a1", 7, BitOrder::MsbFirst).is_err());
        // 7 bits: the integer 0x51 = 1010001, most significant bit first.
        let seven = hex_to_bits("51", 7, BitOrder::MsbFirst).unwrap();
        assert_eq!(
            seven,
            [true, false, true, false, false, false, true].to_vec()
        );
        assert_eq!(bits_to_hex(&seven, BitOrder::MsbFirst), "51");
        assert!(hex_to_bits("a", 8, BitOrder::MsbFirst).is_err());
        assert_eq!(bits_to_hex(&[true], BitOrder::MsbFirst), "1");
    }

    #[test]
    fn lsb_first_is_the_big_endian_integer() {
        let bits = hex_to_bits("1_02", 12, BitOrder::LsbFirst).unwrap();
        assert!(bits[1] && bits[8]);
        assert_eq!(bits.iter().filter(|&&b| b).count(), 2);
        assert_eq!(bits_to_hex(&bits, BitOrder::LsbFirst), "102");
        assert!(hex_to_bits("5", 12, BitOrder::LsbFirst).unwrap()[0]);
        assert!(hex_to_bits("10", 4, BitOrder::LsbFirst).is_err());
        assert!(hex_to_bits("0f", 4, BitOrder::LsbFirst).is_ok());
        assert!(hex_to_bits("xz", 8, BitOrder::LsbFirst)
            .unwrap_err()
            .contains("'x' at position 1"));
    }

    #[test]
    fn bytes_are_msb_first_groups() {
        assert_eq!(hex_to_bytes("00_ff10", 3).unwrap(), vec![0x00, 0xff, 0x10]);
        assert!(hex_to_bytes("0ff", 2).is_err());
    }

    proptest! {
        #[test]
        fn hex_round_trips(bits in proptest::collection::vec(any::<bool>(), 0..70), msb in any::<bool>()) {
            let order = if msb { BitOrder::MsbFirst } else { BitOrder::LsbFirst };
            let hex = bits_to_hex(&bits, order);
            prop_assert_eq!(hex_to_bits(&hex, bits.len(), order).unwrap(), bits);
        }
    }
}
