//! The Bristol / Bristol Fashion writer.
//!
//! Both formats need the inputs to be the first wires and the outputs the last, each output
//! bit its own wire. Wires are renumbered to fit: inputs first (garbler's groups first, each
//! group bit-reversed if its order differs from the format's), then gate outputs, then the
//! outputs. An output that is not a gate output of its own (an input wire, or a wire that
//! feeds two output bits) gets a copy: `EQW` in Bristol Fashion, two `INV` in old Bristol,
//! which has no copy operation.

use std::io::{self, BufWriter, Write};
use std::ops::Range;
use std::path::Path;

use super::format::Format;
use crate::circuit::{Circuit, Gate, InputGroup, Party, WireId};

/// Why a circuit could not be written.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WriteError {
    /// The circuit does not fit the format.
    #[error("{0}")]
    Unsupported(String),
    /// Writing failed.
    #[error("{0}")]
    Io(#[from] io::Error),
}

/// Writes `circuit` to `path` in `format`; the file appears complete or not at all (written
/// to a temporary file next to it, then renamed).
pub fn write_file(circuit: &Circuit, format: Format, path: &Path) -> Result<(), WriteError> {
    write_atomically(path, |w| write(circuit, format, w))
}

/// Writes a file at `path` with `write` so that it appears complete or not at all: written
/// to a temporary file next to it (same directory, so the rename stays on one file system),
/// synced, then renamed over `path`; the temporary file is removed if anything fails.
pub(super) fn write_atomically<E: From<io::Error>>(
    path: &Path,
    write: impl FnOnce(&mut BufWriter<std::fs::File>) -> Result<(), E>,
) -> Result<(), E> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map_or_else(|| "circuit".into(), |n| n.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let result = (|| {
        let file = std::fs::File::create(&tmp)?;
        let mut w = BufWriter::with_capacity(1 << 16, file);
        write(&mut w)?;
        let file = w.into_inner().map_err(|e| e.into_error())?;
        file.sync_all()?;
        std::fs::rename(&tmp, path)?;
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// The most gates of a generated circuit that [`write`] holds in memory to write it.
const MAX_GENERATED_EXPORT_GATES: u64 = 1 << 26;

/// Writes `circuit` in `format`. See the module documentation for the renumbering.
pub fn write(circuit: &Circuit, format: Format, out: &mut impl Write) -> Result<(), WriteError> {
    if circuit.is_generated() {
        // A file numbers each wire once, where a generated circuit reuses its numbers: held
        // and renumbered first, if it is no larger than a file anyone would want.
        if circuit.num_gates() > MAX_GENERATED_EXPORT_GATES {
            return Err(WriteError::Unsupported(format!(
                "a circuit of {} gates is generated as it is garbled; export writes such a \
                 circuit of at most 2^26 gates (about 2 GB of text)",
                circuit.num_gates()
            )));
        }
        let held = circuit
            .to_held()
            .map_err(|e| WriteError::Unsupported(e.to_string()))?;
        return write(&held, format, out);
    }
    let groups = input_groups_in_file_order(circuit);
    if format == Format::Bristol {
        check_old_bristol_inputs(&groups)?;
    }
    let numbering = Numbering::new(circuit, format, &groups);
    write_header(circuit, format, &groups, &numbering, out)?;
    write_gates(circuit, format, &numbering, out)?;
    out.flush()?;
    Ok(())
}

/// An input group as the file holds it: its index in the circuit, the group and its wires.
type FileInputGroup<'c> = (usize, &'c InputGroup, Range<WireId>);

/// The input groups, garbler's first (the reader's default gives the first group to the
/// garbler), otherwise in circuit order.
fn input_groups_in_file_order(circuit: &Circuit) -> Vec<FileInputGroup<'_>> {
    let mut groups: Vec<FileInputGroup<'_>> = circuit
        .input_ranges()
        .enumerate()
        .map(|(i, (g, r))| (i, g, r))
        .collect();
    groups.sort_by_key(|(i, g, _)| (g.party != Party::Garbler, *i));
    groups
}

/// Old Bristol has at most one input per party, the garbler's first: other layouts are
/// refused with a pointer to Bristol Fashion.
fn check_old_bristol_inputs(groups: &[FileInputGroup<'_>]) -> Result<(), WriteError> {
    let parties: Vec<Party> = groups.iter().map(|(_, g, _)| g.party).collect();
    let fits = match parties[..] {
        [] | [_] => true,
        [a, b] => a == Party::Garbler && b == Party::Evaluator,
        _ => false,
    };
    if !fits {
        return Err(WriteError::Unsupported(format!(
            "old Bristol holds at most one input per party; this circuit has {} input groups \
             ({}): use bristol-fashion",
            parties.len(),
            parties
                .iter()
                .map(|p| p.name())
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(())
}

/// A wire not numbered yet.
const UNSET: WireId = WireId::MAX;

/// The file's wire numbers: inputs, then internal gate outputs (and old Bristol's temporary
/// wires of copies), then the output bits.
struct Numbering {
    /// The file's number of each circuit wire.
    map: Vec<WireId>,
    /// The circuit wire of each output bit, in file order.
    out_bits: Vec<WireId>,
    /// Whether an output bit is its gate's output wire itself (otherwise a copy is written).
    direct: Vec<bool>,
    /// How many output bits need a copy.
    copies: usize,
    /// The number of wires in the file.
    total_wires: usize,
    /// The file's number of the first output bit.
    out_base: WireId,
    /// The next free number below `out_base`: taken by old Bristol's temporary wires.
    next: WireId,
}

impl Numbering {
    fn new(circuit: &Circuit, format: Format, groups: &[FileInputGroup<'_>]) -> Self {
        let order = format.bit_order();
        let n = circuit.num_wires() as usize;
        let mut map = vec![UNSET; n];
        let mut next: WireId = 0;
        for (_, g, range) in groups {
            let wires: Vec<WireId> = if g.order == order {
                range.clone().collect()
            } else {
                range.clone().rev().collect()
            };
            for w in wires {
                map[w as usize] = next;
                next += 1;
            }
        }

        // Output bits in file order: groups in order, each reversed if its order differs.
        let out_bits: Vec<WireId> = circuit
            .outputs()
            .iter()
            .flat_map(|o| {
                let reverse = o.order != order;
                let len = o.wires.len();
                (0..len).map(move |k| o.wires[if reverse { len - 1 - k } else { k }])
            })
            .collect();
        let n_in = next as usize;
        let mut is_gate_output = vec![false; n];
        for g in circuit.gates() {
            is_gate_output[g.output() as usize] = true;
        }
        // Output position p takes wire w directly if w is a gate output not yet taken.
        let mut taken = vec![false; n];
        let direct: Vec<bool> = out_bits
            .iter()
            .map(|&w| {
                let ok = is_gate_output[w as usize] && !taken[w as usize];
                taken[w as usize] = true;
                ok
            })
            .collect();
        let copies = direct.iter().filter(|&&d| !d).count();
        let temps = if format == Format::Bristol { copies } else { 0 };
        let internal = circuit.gates().len() - (out_bits.len() - copies);
        let total_wires = n_in + internal + temps + out_bits.len();
        let out_base = (total_wires - out_bits.len()) as WireId;
        for (p, (&w, &d)) in out_bits.iter().zip(&direct).enumerate() {
            if d {
                map[w as usize] = out_base + p as WireId;
            }
        }
        for g in circuit.gates() {
            let w = g.output() as usize;
            if map[w] == UNSET {
                map[w] = next;
                next += 1;
            }
        }
        Numbering {
            map,
            out_bits,
            direct,
            copies,
            total_wires,
            out_base,
            next,
        }
    }
}

/// The header: gate and wire counts, the input and output sizes, and the blank line.
fn write_header(
    circuit: &Circuit,
    format: Format,
    groups: &[FileInputGroup<'_>],
    numbering: &Numbering,
    out: &mut impl Write,
) -> Result<(), WriteError> {
    let copy_gates = if format == Format::Bristol {
        2 * numbering.copies
    } else {
        numbering.copies
    };
    let n_gates = circuit.gates().len() + copy_gates;
    writeln!(out, "{n_gates} {}", numbering.total_wires)?;
    match format {
        Format::Bristol => {
            let len = |p: Party| -> u32 {
                groups
                    .iter()
                    .filter(|(_, g, _)| g.party == p)
                    .map(|(_, g, _)| g.len)
                    .sum()
            };
            writeln!(
                out,
                "{} {} {}",
                len(Party::Garbler),
                len(Party::Evaluator),
                numbering.out_bits.len()
            )?;
        }
        Format::BristolFashion => {
            write!(out, "{}", groups.len())?;
            for (_, g, _) in groups {
                write!(out, " {}", g.len)?;
            }
            writeln!(out)?;
            write!(out, "{}", circuit.outputs().len())?;
            for o in circuit.outputs() {
                write!(out, " {}", o.wires.len())?;
            }
            writeln!(out)?;
        }
    }
    writeln!(out)?;
    Ok(())
}

/// The circuit's gates renumbered, then the copies of the output bits that are not gate
/// outputs of their own (`EQW`, or two `INV` through a temporary wire in old Bristol).
fn write_gates(
    circuit: &Circuit,
    format: Format,
    numbering: &Numbering,
    out: &mut impl Write,
) -> Result<(), WriteError> {
    let map = &numbering.map;
    let m = |w: WireId| map[w as usize];
    for g in circuit.gates() {
        match *g {
            Gate::Xor { a, b, out: c } => writeln!(out, "2 1 {} {} {} XOR", m(a), m(b), m(c))?,
            Gate::And { a, b, out: c } => writeln!(out, "2 1 {} {} {} AND", m(a), m(b), m(c))?,
            Gate::Inv { a, out: c } => writeln!(out, "1 1 {} {} INV", m(a), m(c))?,
        }
    }
    let mut next = numbering.next;
    for (p, (&w, &d)) in numbering.out_bits.iter().zip(&numbering.direct).enumerate() {
        if d {
            continue;
        }
        let dst = numbering.out_base + p as WireId;
        match format {
            Format::BristolFashion => writeln!(out, "1 1 {} {dst} EQW", m(w))?,
            Format::Bristol => {
                let t = next;
                next += 1;
                writeln!(out, "1 1 {} {t} INV", m(w))?;
                writeln!(out, "1 1 {t} {dst} INV")?;
            }
        }
    }
    debug_assert_eq!(next, numbering.out_base);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bristol::read;
    use crate::builder::Builder;

    fn round_trip(c: &Circuit, format: Format) -> Circuit {
        let mut text = Vec::new();
        write(c, format, &mut text).unwrap();
        read(&text[..]).unwrap_or_else(|e| panic!("{e}\n{}", String::from_utf8_lossy(&text)))
    }

    #[test]
    fn a_generated_circuit_is_written_as_its_held_form() {
        use rand::{Rng, SeedableRng};
        let spec = "synthetic:and=300,xor=700,inputs=6,depth=10";
        let generated = crate::library::generated(spec).unwrap();
        let held = generated.to_held().unwrap();
        assert!(!held.is_generated());
        assert_eq!(held.gate_counts(), generated.gate_counts());
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(20);
        for _ in 0..8 {
            let inputs: Vec<u64> = (0..generated.n_inputs()).map(|_| rng.gen()).collect();
            assert_eq!(held.eval_words(&inputs), generated.eval_words(&inputs));
        }
        // The file is the held form's, gate for gate (the held form numbers wire `c` as `c`).
        let text = |c: &Circuit| {
            let mut t = Vec::new();
            write(c, Format::BristolFashion, &mut t).unwrap();
            t
        };
        let held_form = crate::library::load(spec).unwrap();
        assert!(!held_form.is_generated());
        assert_eq!(text(&generated), text(&held_form));
        assert_eq!(held, held_form);
        // Too large to hold: refused with a reason, before anything is read.
        let huge =
            crate::library::load("synthetic:and=1000000000,xor=2500000000,inputs=100").unwrap();
        let e = write(&huge, Format::BristolFashion, &mut Vec::new()).unwrap_err();
        assert!(e.to_string().contains("at most 2^26 gates"), "{e}");
    }

    #[test]
    fn an_evaluators_only_input_keeps_its_owner_in_old_bristol() {
        // Written as `0 4 N`: read back, the one group is still the evaluator's.
        let mut b = Builder::new();
        let x = b.input_uint(Party::Evaluator, "x", 4);
        let twice = b.add(&x, &x);
        b.output_uint("twice", &twice);
        let back = round_trip(&b.build(), Format::Bristol);
        assert_eq!(back.inputs().len(), 1);
        assert_eq!(back.inputs()[0].party, Party::Evaluator);
    }

    #[test]
    fn awkward_outputs_survive_both_formats() {
        // Outputs: an input wire, a constant, the same gate output twice, a gate output.
        let mut b = Builder::new();
        let x = b.input_uint(Party::Evaluator, "x", 4);
        let y = b.input_uint(Party::Garbler, "y", 4);
        let s = b.add(&x, &y);
        let bits = [
            x.bits()[0],
            crate::builder::Bit::ONE,
            s.bits()[3],
            s.bits()[3],
            s.bits()[1],
        ];
        b.output_bits("mixed", &bits);
        b.output_uint("sum", &s);
        let c = b.build();
        for format in [Format::Bristol, Format::BristolFashion] {
            let back = round_trip(&c, format);
            assert_eq!(back.inputs()[0].party, Party::Garbler);
            for (g, e) in [("3", "5"), ("f", "1"), ("0", "0"), ("9", "c")] {
                let bits = |circ: &Circuit| {
                    circ.eval_bits(&crate::encoding::encode_inputs(circ, g, e).unwrap())
                };
                match format {
                    // Same groups, same hex.
                    Format::BristolFashion => {
                        assert_eq!(back.eval_hex(g, e).unwrap(), c.eval_hex(g, e).unwrap())
                    }
                    // One output group: the same bits, concatenated.
                    Format::Bristol => assert_eq!(bits(&back), bits(&c)),
                }
            }
        }
    }

    #[test]
    fn old_bristol_refuses_three_inputs() {
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 1)[0];
        let y = b.input_bits(Party::Evaluator, "y", 1)[0];
        let z = b.input_bits(Party::Evaluator, "z", 1)[0];
        let t = b.and(x, y);
        let u = b.and(t, z);
        b.output_bits("u", &[u]);
        let c = b.build();
        let mut sink = Vec::new();
        let e = write(&c, Format::Bristol, &mut sink).unwrap_err();
        assert!(e.to_string().contains("use bristol-fashion"), "{e}");
        let back = round_trip(&c, Format::BristolFashion);
        assert_eq!(back.eval_hex("1", "1,1").unwrap(), "1");
    }
}
