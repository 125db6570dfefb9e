//! The streaming Bristol / Bristol Fashion reader.
//!
//! One pass over the lines, one reused line buffer: memory is one bit per declared wire while
//! reading plus the gates themselves, never the text. Every header count and wire index is
//! checked before it is used, because a circuit file is untrusted input; every error names
//! the line.

use std::collections::HashMap;
use std::fmt;
use std::io::{BufRead, BufReader};
use std::path::Path;

use super::format::Format;
use crate::circuit::{Circuit, Gate, InputGroup, OutputGroup, Party, WireId, WireSet, MAX_WIRES};

/// A file that is not a valid circuit, and the line where that shows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadError {
    /// 1-based line number (the line after the last for a truncated file; 0 when the file
    /// cannot be opened).
    pub line: usize,
    /// What is wrong.
    pub kind: ReadErrorKind,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}", self.kind)
        } else {
            write!(f, "line {}: {}", self.line, self.kind)
        }
    }
}

impl std::error::Error for ReadError {}

/// The classes of malformed circuit files.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadErrorKind {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(String),
    /// A header line is missing or has the wrong shape.
    #[error("bad header: {0}")]
    BadHeader(String),
    /// The header's counts contradict each other or the gates.
    #[error("header counts wrong: {0}")]
    HeaderCounts(String),
    /// A token that should be a number is not.
    #[error("'{0}' is not a number")]
    BadNumber(String),
    /// A wire index at or beyond the declared wire count.
    #[error("wire {wire} is out of range (the header declares {wires} wires)")]
    WireOutOfRange {
        /// The index.
        wire: u64,
        /// The declared count.
        wires: u64,
    },
    /// A gate reads a wire that is neither an input nor written by an earlier gate.
    #[error("wire {0} is read before it is written")]
    ReadBeforeWritten(u64),
    /// A gate writes an input wire or a wire written before.
    #[error("wire {0} is written twice")]
    WrittenTwice(u64),
    /// An operation name this reader does not know.
    #[error("unknown operation '{0}' (expected XOR, AND, INV, NOT, EQ, EQW or MAND)")]
    UnknownOp(String),
    /// A gate line whose counts do not fit its operation or its tokens.
    #[error("malformed gate: {0}")]
    BadGate(String),
    /// The file ends before the declared number of gates.
    #[error(
        "truncated file: the header declares {declared} gates but the file ends after {found}"
    )]
    Truncated {
        /// Gates the header declares.
        declared: u64,
        /// Gate lines found.
        found: u64,
    },
    /// More gate lines than declared.
    #[error("more gates than the {0} the header declares")]
    TooManyGates(u64),
    /// A declared wire that is never an input nor written by any gate.
    #[error("wire {0} is never written (every wire must be an input or a gate output)")]
    NeverWritten(u64),
    /// A constant gate in a circuit without inputs to derive it from.
    #[error("a constant (EQ) needs at least one input wire to be lowered to XOR/INV")]
    ConstantWithoutInputs,
}

/// Reads a circuit file, detecting the format.
pub fn read_file(path: &Path) -> Result<Circuit, ReadError> {
    let file = std::fs::File::open(path).map_err(|e| ReadError {
        line: 0,
        kind: ReadErrorKind::Io(e.to_string()),
    })?;
    read(BufReader::with_capacity(1 << 16, file))
}

/// Reads a circuit from any buffered reader, detecting the format.
pub fn read(input: impl BufRead) -> Result<Circuit, ReadError> {
    Reader::new(input).read()
}

/// Line source that skips blank lines and keeps the line number.
struct Lines<R> {
    input: R,
    buf: Vec<u8>,
    line: usize,
}

impl<R: BufRead> Lines<R> {
    /// Advances to the next non-blank line; false at end of file.
    fn next(&mut self) -> Result<bool, ReadError> {
        loop {
            self.buf.clear();
            let n = self
                .input
                .read_until(b'\n', &mut self.buf)
                .map_err(|e| self.err(ReadErrorKind::Io(e.to_string())))?;
            if n == 0 {
                return Ok(false);
            }
            self.line += 1;
            if self.buf.iter().any(|c| !c.is_ascii_whitespace()) {
                return Ok(true);
            }
        }
    }

    fn tokens(&self) -> impl Iterator<Item = &[u8]> {
        self.buf
            .split(|c| c.is_ascii_whitespace())
            .filter(|t| !t.is_empty())
    }

    fn err(&self, kind: ReadErrorKind) -> ReadError {
        ReadError {
            line: self.line,
            kind,
        }
    }

    /// The current line as numbers; `what` names the line in errors.
    fn numbers(&self, what: &str) -> Result<Vec<u64>, ReadError> {
        self.tokens()
            .map(|t| {
                parse_u64(t).ok_or_else(|| {
                    self.err(ReadErrorKind::BadHeader(format!(
                        "{what}: '{}' is not a number",
                        String::from_utf8_lossy(t)
                    )))
                })
            })
            .collect()
    }
}

fn parse_u64(t: &[u8]) -> Option<u64> {
    if t.is_empty() || t.len() > 19 || !t.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(t.iter().fold(0u64, |v, d| v * 10 + u64::from(d - b'0')))
}

struct Reader<R> {
    lines: Lines<R>,
}

/// The header, parsed and checked.
struct Header {
    format: Format,
    gates: u64,
    wires: u64,
    inputs: Vec<u64>,
    outputs: Vec<u64>,
}

impl<R: BufRead> Reader<R> {
    fn new(input: R) -> Self {
        Reader {
            lines: Lines {
                input,
                buf: Vec::with_capacity(256),
                line: 0,
            },
        }
    }

    fn read(mut self) -> Result<Circuit, ReadError> {
        let header = self.header()?;
        let first_gate_seen = !self.lines.buf.is_empty();
        Body::new(&header).run(&mut self.lines, &header, first_gate_seen)
    }

    /// Reads the header lines; leaves the first gate line (if any) in the buffer.
    fn header(&mut self) -> Result<Header, ReadError> {
        let l = &mut self.lines;
        if !l.next()? {
            return Err(ReadError {
                line: 1,
                kind: ReadErrorKind::BadHeader("the file is empty".into()),
            });
        }
        let counts = l.numbers("line 1 must be 'gates wires'")?;
        let [gates, wires] = counts[..] else {
            return Err(l.err(ReadErrorKind::BadHeader(format!(
                "line 1 must be 'gates wires', found {} numbers",
                counts.len()
            ))));
        };
        if wires > MAX_WIRES {
            return Err(l.err(ReadErrorKind::HeaderCounts(format!(
                "{wires} wires is more than the supported 2^31"
            ))));
        }
        if !l.next()? {
            return Err(l.err(ReadErrorKind::BadHeader(
                "the file ends after line 1; expected the input sizes".into(),
            )));
        }
        let line2 = l.numbers("the input sizes")?;
        let line2_no = l.line;
        // Old Bristol: `n1 n2 n3`, then gates. Fashion: `niv sizes..`, `nov sizes..`.
        let has_line3 = l.next()?;
        let line3_numeric = has_line3 && l.tokens().all(|t| parse_u64(t).is_some());
        let header_err = |line, msg: String| ReadError {
            line,
            kind: ReadErrorKind::HeaderCounts(msg),
        };
        let (format, inputs, outputs) = if line3_numeric {
            let line3 = l.numbers("the output sizes")?;
            let sizes = |v: &[u64], line, what| -> Result<Vec<u64>, ReadError> {
                match v.split_first() {
                    Some((&n, rest)) if n == rest.len() as u64 => Ok(rest.to_vec()),
                    _ => Err(header_err(
                        line,
                        format!("the {what} line must be a count followed by that many sizes"),
                    )),
                }
            };
            let inputs = sizes(&line2, line2_no, "input")?;
            let outputs = sizes(&line3, l.line, "output")?;
            if !l.next()? {
                l.buf.clear();
            }
            (Format::BristolFashion, inputs, outputs)
        } else {
            let [n1, n2, n3] = line2[..] else {
                return Err(header_err(
                    line2_no,
                    format!(
                        "old Bristol line 2 must be 'n1 n2 n3', found {} numbers",
                        line2.len()
                    ),
                ));
            };
            if !has_line3 {
                l.buf.clear();
            }
            (Format::Bristol, vec![n1, n2], vec![n3])
        };
        let (n_in, n_out) = (
            inputs.iter().try_fold(0u64, |a, &b| a.checked_add(b)),
            outputs.iter().try_fold(0u64, |a, &b| a.checked_add(b)),
        );
        match (n_in, n_out) {
            (Some(i), Some(o)) if i.checked_add(o).is_some_and(|s| s <= wires) => {}
            _ => {
                return Err(header_err(
                    line2_no,
                    format!("inputs plus outputs exceed the {wires} wires of line 1"),
                ))
            }
        }
        Ok(Header {
            format,
            gates,
            wires,
            inputs,
            outputs,
        })
    }
}

/// State while reading gate lines.
struct Body {
    wires: u64,
    written: WireSet,
    written_count: u64,
    /// EQW outputs, mapped to the wire they copy (already resolved).
    aliases: HashMap<WireId, WireId>,
    gates: Vec<Gate>,
    /// Wires added beyond the file's (for the constant 0 behind `EQ 1`).
    extra_wires: u32,
    zero: Option<WireId>,
    n_inputs: u64,
}

impl Body {
    fn new(h: &Header) -> Self {
        let n_inputs: u64 = h.inputs.iter().sum();
        let mut written = WireSet::new(h.wires as u32);
        for w in 0..n_inputs as u32 {
            written.insert(w);
        }
        Body {
            wires: h.wires,
            written,
            written_count: n_inputs,
            aliases: HashMap::new(),
            // Never trust the header with an allocation.
            gates: Vec::with_capacity(h.gates.min(1 << 20) as usize),
            extra_wires: 0,
            zero: None,
            n_inputs,
        }
    }

    fn run<R: BufRead>(
        mut self,
        lines: &mut Lines<R>,
        h: &Header,
        mut have_line: bool,
    ) -> Result<Circuit, ReadError> {
        let mut found = 0u64;
        let mut toks: Vec<(usize, usize)> = Vec::with_capacity(8);
        while have_line {
            if found == h.gates {
                return Err(lines.err(ReadErrorKind::TooManyGates(h.gates)));
            }
            self.gate(lines, &mut toks)
                .map_err(|kind| lines.err(kind))?;
            found += 1;
            have_line = lines.next()?;
        }
        let end = ReadError {
            line: lines.line + 1,
            kind: ReadErrorKind::Truncated {
                declared: h.gates,
                found,
            },
        };
        if found < h.gates {
            return Err(end);
        }
        let at_end = |kind| ReadError {
            line: lines.line + 1,
            kind,
        };
        if self.written_count < self.wires {
            let w = (0..self.wires as u32)
                .find(|&w| !self.written.contains(w))
                .expect("fewer written than declared");
            return Err(at_end(ReadErrorKind::NeverWritten(u64::from(w))));
        }

        let order = h.format.bit_order();
        // A group of 0 bits is absent (old Bristol files of one party say `512 0 N`), so
        // that it needs no owner: `--parties evaluator` names the one real group. The others
        // keep the owner and name of their place in the header (`0 512 N` is the
        // evaluator's, as the writer writes an evaluator's only group).
        let inputs = h
            .inputs
            .iter()
            .enumerate()
            .filter(|&(_, &len)| len > 0)
            .map(|(i, &len)| InputGroup {
                party: if i == 0 {
                    Party::Garbler
                } else {
                    Party::Evaluator
                },
                len: len as u32,
                order,
                name: format!("input {}", i + 1),
            })
            .collect();
        let n_out: u64 = h.outputs.iter().sum();
        let mut next = (self.wires - n_out) as u32;
        let outputs = h
            .outputs
            .iter()
            .enumerate()
            .map(|(i, &len)| OutputGroup {
                wires: (0..len)
                    .map(|_| {
                        next += 1;
                        self.resolve(next - 1)
                    })
                    .collect(),
                order,
                name: if h.outputs.len() == 1 {
                    "output".to_string()
                } else {
                    format!("output {}", i + 1)
                },
            })
            .collect();
        let total = self.wires + u64::from(self.extra_wires);
        Circuit::new(total, inputs, outputs, self.gates).map_err(|e| {
            // The checks above make this unreachable for any input; report, never panic.
            at_end(ReadErrorKind::BadGate(e.to_string()))
        })
    }

    fn resolve(&self, w: WireId) -> WireId {
        if self.aliases.is_empty() {
            w
        } else {
            self.aliases.get(&w).copied().unwrap_or(w)
        }
    }

    fn wire(&self, t: &[u8]) -> Result<WireId, ReadErrorKind> {
        let v = parse_u64(t)
            .ok_or_else(|| ReadErrorKind::BadNumber(String::from_utf8_lossy(t).into_owned()))?;
        if v >= self.wires {
            return Err(ReadErrorKind::WireOutOfRange {
                wire: v,
                wires: self.wires,
            });
        }
        Ok(v as WireId)
    }

    /// A wire a gate reads, resolved through aliases.
    fn read_wire(&self, t: &[u8]) -> Result<WireId, ReadErrorKind> {
        let w = self.wire(t)?;
        if !self.written.contains(w) {
            return Err(ReadErrorKind::ReadBeforeWritten(u64::from(w)));
        }
        Ok(self.resolve(w))
    }

    fn write_wire(&mut self, t: &[u8]) -> Result<WireId, ReadErrorKind> {
        let w = self.wire(t)?;
        if !self.written.insert(w) {
            return Err(ReadErrorKind::WrittenTwice(u64::from(w)));
        }
        self.written_count += 1;
        Ok(w)
    }

    /// A wire beyond the file's holding constant 0.
    fn zero_wire(&mut self) -> Result<WireId, ReadErrorKind> {
        if let Some(z) = self.zero {
            return Ok(z);
        }
        if self.n_inputs == 0 {
            return Err(ReadErrorKind::ConstantWithoutInputs);
        }
        if self.wires + u64::from(self.extra_wires) + 1 > MAX_WIRES {
            return Err(ReadErrorKind::HeaderCounts("too many wires".into()));
        }
        let z = (self.wires + u64::from(self.extra_wires)) as WireId;
        self.extra_wires += 1;
        self.gates.push(Gate::Xor { a: 0, b: 0, out: z });
        self.zero = Some(z);
        Ok(z)
    }

    /// An `EQ` gate: writes the constant `value` (the token `0` or `1`) to the wire `out`.
    /// The first constant 0 is `w0 XOR w0` written to `out` itself (it becomes the zero
    /// wire); a later 0 is an alias of the zero wire; a 1 is the zero wire negated.
    fn constant_gate(&mut self, value: &[u8], out: &[u8]) -> Result<(), ReadErrorKind> {
        let value = match value {
            b"0" => false,
            b"1" => true,
            other => {
                return Err(ReadErrorKind::BadGate(format!(
                    "EQ takes the constant 0 or 1, found '{}'",
                    String::from_utf8_lossy(other)
                )))
            }
        };
        let out = self.write_wire(out)?;
        if value {
            let z = self.zero_wire()?;
            self.gates.push(Gate::Inv { a: z, out });
        } else if self.zero.is_none() && self.n_inputs > 0 {
            self.gates.push(Gate::Xor { a: 0, b: 0, out });
            self.zero = Some(out);
        } else {
            let z = self.zero_wire()?;
            self.aliases.insert(out, z);
        }
        Ok(())
    }

    fn gate<R: BufRead>(
        &mut self,
        lines: &Lines<R>,
        toks: &mut Vec<(usize, usize)>,
    ) -> Result<(), ReadErrorKind> {
        let buf = &lines.buf;
        split_tokens(buf, toks);
        let tok = |k: usize| &buf[toks[k].0..toks[k].1];
        if toks.len() < 4 {
            return Err(ReadErrorKind::BadGate(format!(
                "expected 'nin nout inputs.. outputs.. OP', found {} tokens",
                toks.len()
            )));
        }
        let op = tok(toks.len() - 1);
        let count = |k: usize| {
            parse_u64(tok(k))
                .ok_or_else(|| ReadErrorKind::BadNumber(String::from_utf8_lossy(tok(k)).into()))
        };
        let (nin, nout) = (count(0)?, count(1)?);
        if nin.checked_add(nout).and_then(|s| s.checked_add(3)) != Some(toks.len() as u64) {
            return Err(ReadErrorKind::BadGate(format!(
                "{nin} inputs and {nout} outputs need {} tokens, found {}",
                nin.saturating_add(nout).saturating_add(3),
                toks.len()
            )));
        }
        let arity = |want_in: u64, want_out: u64| {
            if (nin, nout) == (want_in, want_out) {
                Ok(())
            } else {
                Err(ReadErrorKind::BadGate(format!(
                    "{} takes {want_in} input(s) and {want_out} output(s), found {nin} and {nout}",
                    String::from_utf8_lossy(op)
                )))
            }
        };
        match op {
            b"XOR" | b"AND" => {
                arity(2, 1)?;
                let (a, b) = (self.read_wire(tok(2))?, self.read_wire(tok(3))?);
                let out = self.write_wire(tok(4))?;
                self.gates.push(if op == b"XOR" {
                    Gate::Xor { a, b, out }
                } else {
                    Gate::And { a, b, out }
                });
            }
            b"INV" | b"NOT" => {
                arity(1, 1)?;
                let a = self.read_wire(tok(2))?;
                let out = self.write_wire(tok(3))?;
                self.gates.push(Gate::Inv { a, out });
            }
            b"EQW" => {
                arity(1, 1)?;
                let a = self.read_wire(tok(2))?;
                let out = self.write_wire(tok(3))?;
                self.aliases.insert(out, a);
            }
            b"EQ" => {
                arity(1, 1)?;
                self.constant_gate(tok(2), tok(3))?;
            }
            b"MAND" => {
                if nin != 2 * nout || nout == 0 {
                    return Err(ReadErrorKind::BadGate(format!(
                        "MAND takes 2k inputs and k outputs, found {nin} and {nout}"
                    )));
                }
                let k = nout as usize;
                // Read every input before writing any output: the k ANDs are simultaneous.
                let mut ins = Vec::with_capacity(2 * k);
                for j in 0..2 * k {
                    ins.push(self.read_wire(tok(2 + j))?);
                }
                for j in 0..k {
                    let out = self.write_wire(tok(2 + 2 * k + j))?;
                    self.gates.push(Gate::And {
                        a: ins[j],
                        b: ins[k + j],
                        out,
                    });
                }
            }
            other => {
                return Err(ReadErrorKind::UnknownOp(
                    String::from_utf8_lossy(other).into_owned(),
                ))
            }
        }
        Ok(())
    }
}

/// Splits a gate line into tokens at ASCII whitespace: `toks` (reused from line to line) gets
/// the `(start, end)` byte offsets of each token in `buf`.
fn split_tokens(buf: &[u8], toks: &mut Vec<(usize, usize)>) {
    toks.clear();
    let mut i = 0;
    while i < buf.len() {
        while i < buf.len() && buf[i].is_ascii_whitespace() {
            i += 1;
        }
        let start = i;
        while i < buf.len() && !buf[i].is_ascii_whitespace() {
            i += 1;
        }
        if i > start {
            toks.push((start, i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BitOrder;

    fn read_str(s: &str) -> Result<Circuit, ReadError> {
        read(s.as_bytes())
    }

    fn err(s: &str) -> (usize, String) {
        let e = read_str(s).unwrap_err();
        (e.line, e.to_string())
    }

    const OLD: &str = "3 6\n1 1 1\n\n2 1 0 1 2 AND\n1 1 2 3 INV\n2 1 3 0 5 XOR\n";

    #[test]
    fn reads_old_bristol() {
        // wire 4 is declared but never written
        assert_eq!(err(OLD).0, 7);
        let c = read_str("3 5\n1 1 1\n\n2 1 0 1 2 AND\n1 1 2 3 INV\n2 1 3 0 4 XOR\n").unwrap();
        assert_eq!(c.inputs().len(), 2);
        assert_eq!(c.inputs()[0].party, Party::Garbler);
        assert_eq!(c.inputs()[1].order, BitOrder::MsbFirst);
        for (x, y) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let (x, y) = (x == 1, y == 1);
            assert_eq!(c.eval_bits(&[x, y]), vec![!(x & y) ^ x]);
        }
    }

    #[test]
    fn an_empty_input_group_is_absent() {
        // One party's 2 bits and an empty second group: a single input group.
        let c = read_str("1 3\n2 0 1\n\n2 1 0 1 2 AND\n").unwrap();
        assert_eq!(c.inputs().len(), 1);
        assert_eq!(c.inputs()[0].len, 2);
        assert_eq!(c.inputs()[0].name, "input 1");
        assert_eq!(c.eval_bits(&[true, true]), vec![true]);
        let c = read_str("1 3\n0 2 1\n\n2 1 0 1 2 AND\n").unwrap();
        assert_eq!(c.inputs().len(), 1);
        assert_eq!(c.inputs()[0].party, Party::Evaluator);
    }

    #[test]
    fn reads_fashion_and_lowers_extended_ops() {
        // out1 = (a AND b), out2 = copy of a, out3 = 1, out4 = 0, via MAND, EQW, EQ
        let c = read_str(
            "5 8\n2 1 1\n4 1 1 1 1\n\n\
             4 2 0 0 1 1 2 3 MAND\n1 1 0 4 EQW\n1 1 1 5 EQ\n1 1 0 6 EQ\n1 1 3 7 EQW\n",
        )
        .unwrap();
        assert_eq!(c.gates().len(), 4); // 2 AND, the zero XOR, INV; EQ 0 aliases the zero
        for (x, y) in [(0, 0), (0, 1), (1, 0), (1, 1)] {
            let (x, y) = (x == 1, y == 1);
            assert_eq!(c.eval_bits(&[x, y]), vec![x, true, false, x & y]);
        }
        assert_eq!(c.outputs()[0].order, BitOrder::LsbFirst);
    }

    #[test]
    fn every_malformed_class_names_its_line() {
        let cases: &[(&str, usize, &str)] = &[
            ("", 1, "empty"),
            ("1 2 3\n1 1 1\n", 1, "gates wires"),
            ("1 x\n", 1, "not a number"),
            ("1 4\n", 1, "ends after line 1"),
            ("1 4\n1 1\n2 1 0 1 3 AND\n", 2, "n1 n2 n3"),
            ("1 4\n2 1 1\n2 1\n2 1 0 1 3 AND\n", 3, "output line"),
            ("1 3\n2 1 1\n", 2, "exceed"),
            ("1 4\n1 1 1\n2 1 0 1 9 AND\n", 3, "wire 9 is out of range"),
            (
                "1 4\n1 1 1\n2 1 0 2 3 AND\n",
                3,
                "wire 2 is read before it is written",
            ),
            (
                "2 4\n1 1 1\n2 1 0 1 3 AND\n2 1 0 1 3 XOR\n",
                4,
                "wire 3 is written twice",
            ),
            ("1 4\n1 1 1\n2 1 0 1 1 AND\n", 3, "wire 1 is written twice"),
            (
                "1 4\n1 1 1\n2 1 0 1 3 NAND\n",
                3,
                "unknown operation 'NAND'",
            ),
            ("1 4\n1 1 1\n2 1 0 1 AND\n", 3, "tokens"),
            ("1 4\n1 1 1\n1 1 0 3 AND\n", 3, "AND takes 2 input(s)"),
            ("1 4\n1 1 1\n2 1 0 q 3 AND\n", 3, "'q' is not a number"),
            ("3 5\n1 1 1\n2 1 0 1 2 AND\n", 4, "truncated file"),
            ("1 4\n1 1 1\n2 1 0 1 3 AND\n1 1 3 2 INV\n", 4, "more gates"),
            ("1 5\n1 1 1\n2 1 0 1 4 AND\n", 4, "wire 2 is never written"),
            ("1 4\n1 1 1\n1 1 7 3 EQ\n", 3, "constant 0 or 1"),
            ("1 4\n1 1 1\n3 1 0 1 2 3 MAND\n", 3, "MAND takes 2k"),
            ("1 4000000000\n1 1 1\n", 1, "2^31"),
        ];
        for &(text, line, needle) in cases {
            let e = read_str(text).unwrap_err();
            assert_eq!(e.line, line, "{text:?}: {e}");
            assert!(e.to_string().contains(needle), "{text:?}: {e}");
        }
    }

    #[test]
    fn blank_lines_and_trailing_spaces_are_fine() {
        let c = read_str("\n1 2 \n\n1 0 1  \n\n 1 1 0 1 INV \n\n").unwrap();
        assert_eq!(c.eval_bits(&[true]), vec![false]);
    }
}
