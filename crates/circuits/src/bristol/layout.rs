//! The `.regions` side file (its format is in the [`bristol`](super) module's
//! documentation): reading it into [`Sections`], attaching them to a circuit, writing them.
//!
//! The file may come from anyone, so nothing in it is trusted: the reader keeps no boundary
//! past the circuit's gates and none out of order, so it holds at most one number per gate
//! and section whatever the file's size (and no more than a short token of any line), and
//! [`attach_regions`] checks that the regions of each section are independent
//! ([`Sections::check`]). Every error names the file and the line.

use std::fmt;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use super::writer::write_atomically;
use crate::circuit::Circuit;
use crate::sections::{Sections, SectionsError};

/// The first line [`write_regions`] writes.
const HEADER: &str =
    "# Transputation parallel regions: one section per line, its region boundaries (gate indices)";

/// The longest token kept for an error message; a longer one is cut (and is no number).
const MAX_TOKEN: usize = 40;

/// The side file of the circuit file `circuit`: its name with `.regions` appended
/// (`aes.txt` has `aes.txt.regions`).
pub fn regions_path(circuit: &Path) -> PathBuf {
    let mut name = circuit.as_os_str().to_owned();
    name.push(".regions");
    PathBuf::from(name)
}

/// Why a `.regions` file was refused: the file, the line (0 for the file as a whole) and
/// the problem.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionsError {
    /// The file.
    pub path: PathBuf,
    /// The line, from 1; 0 when the problem is not one line's.
    pub line: usize,
    /// What is wrong.
    pub kind: RegionsErrorKind,
}

/// What is wrong with a `.regions` file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RegionsErrorKind {
    /// The file could not be read.
    #[error("cannot read: {0}")]
    Io(String),
    /// A line that does not start with `section`.
    #[error("expected 'section' and its region boundaries, found '{0}'")]
    MissingKeyword(String),
    /// A boundary that is not a non-negative integer.
    #[error("'{0}' is not a gate index")]
    BadNumber(String),
    /// A section line with fewer than three boundaries.
    #[error("a section needs at least 3 boundaries (two regions), found {0}")]
    TooFewBoundaries(usize),
    /// A boundary past the circuit's last gate.
    #[error("boundary {boundary} is past the circuit's {gates} gates")]
    PastEnd {
        /// The boundary.
        boundary: u64,
        /// The circuit's gates.
        gates: u64,
    },
    /// A layout that does not fit (out of order, overlapping, dependent regions).
    #[error("{0}")]
    Layout(SectionsError),
}

impl fmt::Display for RegionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.path.display())?;
        if self.line > 0 {
            write!(f, "line {}: ", self.line)?;
        }
        write!(f, "{}", self.kind)
    }
}

impl std::error::Error for RegionsError {}

/// Reads the sections of a `.regions` file for a circuit of `gates` gates (see the module
/// documentation); whether their regions are independent is left to
/// [`Circuit::with_sections`] or [`attach_regions`], which also names the line.
///
/// # Errors
/// The first line that is malformed, out of order or past `gates`, or a file that cannot
/// be read.
pub fn read_regions(path: &Path, gates: u64) -> Result<Sections, RegionsError> {
    read_numbered(path, gates).map(|(sections, _)| sections)
}

/// `circuit` with the sections of the `.regions` file at `path`.
///
/// # Errors
/// As [`read_regions`], or sections that do not fit the circuit ([`Sections::check`]), by
/// the line of the section.
pub fn attach_regions(circuit: Circuit, path: &Path) -> Result<Circuit, RegionsError> {
    let (sections, lines) = read_numbered(path, circuit.num_gates())?;
    circuit
        .with_sections(sections)
        .map_err(|e| layout_error(path, &lines, e))
}

/// Writes `sections` to `path` as a `.regions` file; the file appears complete or not at
/// all (written to a temporary file beside it, then renamed).
///
/// # Errors
/// If the file cannot be written.
pub fn write_regions(path: &Path, sections: &Sections) -> std::io::Result<()> {
    write_atomically(path, |w| {
        writeln!(w, "{HEADER}")?;
        for section in sections.sections() {
            write!(w, "section")?;
            for b in section.bounds() {
                write!(w, " {b}")?;
            }
            writeln!(w)?;
        }
        Ok(())
    })
}

/// The sections of the file and the line of each.
fn read_numbered(path: &Path, gates: u64) -> Result<(Sections, Vec<usize>), RegionsError> {
    let error = |line: usize, kind: RegionsErrorKind| RegionsError {
        path: path.to_path_buf(),
        line,
        kind,
    };
    let file =
        std::fs::File::open(path).map_err(|e| error(0, RegionsErrorKind::Io(e.to_string())))?;
    let mut parser = Parser::new(gates);
    parser
        .read(BufReader::with_capacity(1 << 16, file))
        .map_err(|(line, kind)| error(line, kind))?;
    let Parser {
        sections, lines, ..
    } = parser;
    match Sections::new(sections) {
        Ok(sections) => Ok((sections, lines)),
        // The parser refuses what Sections::new does, with the line; kept as a backstop.
        Err(e) => Err(layout_error(path, &lines, e)),
    }
}

/// `e` as the error of the line of the section it names.
fn layout_error(path: &Path, lines: &[usize], e: SectionsError) -> RegionsError {
    let section = match e {
        SectionsError::TooFewRegions { section, .. }
        | SectionsError::NotAscending { section, .. }
        | SectionsError::Overlap { section, .. }
        | SectionsError::PastEnd { section, .. }
        | SectionsError::Dependent { section, .. } => Some(section),
        SectionsError::Generated => None,
    };
    RegionsError {
        path: path.to_path_buf(),
        line: section.and_then(|s| lines.get(s).copied()).unwrap_or(0),
        kind: RegionsErrorKind::Layout(e),
    }
}

/// Reads a `.regions` file byte by byte: no line or token is held longer than it needs to
/// be, and every boundary kept is in order and within the circuit.
struct Parser {
    gates: u64,
    sections: Vec<Vec<u64>>,
    /// The line of each section.
    lines: Vec<usize>,
    /// The line being read, from 1.
    line: usize,
    /// The token being read (cut at [`MAX_TOKEN`] bytes).
    token: Vec<u8>,
    /// Whether the token was longer than what is kept of it.
    long: bool,
    /// Whether the rest of the line is a comment.
    comment: bool,
    /// Whether this line has its `section` keyword.
    keyword: bool,
    /// The boundaries of this line's section so far.
    bounds: Vec<u64>,
}

type ParseError = (usize, RegionsErrorKind);

impl Parser {
    fn new(gates: u64) -> Parser {
        Parser {
            gates,
            sections: Vec::new(),
            lines: Vec::new(),
            line: 1,
            token: Vec::new(),
            long: false,
            comment: false,
            keyword: false,
            bounds: Vec::new(),
        }
    }

    fn read(&mut self, mut input: impl BufRead) -> Result<(), ParseError> {
        loop {
            let buf = input
                .fill_buf()
                .map_err(|e| (self.line, RegionsErrorKind::Io(e.to_string())))?;
            if buf.is_empty() {
                break;
            }
            let n = buf.len();
            for &byte in buf {
                self.byte(byte)?;
            }
            input.consume(n);
        }
        self.end_token()?;
        self.end_line()
    }

    fn byte(&mut self, byte: u8) -> Result<(), ParseError> {
        match byte {
            b'\n' => {
                self.end_token()?;
                self.end_line()?;
                self.line += 1;
                self.comment = false;
            }
            _ if self.comment => {}
            b'#' => {
                self.end_token()?;
                self.comment = true;
            }
            _ if byte.is_ascii_whitespace() => self.end_token()?,
            _ if self.token.len() < MAX_TOKEN => self.token.push(byte),
            _ => self.long = true,
        }
        Ok(())
    }

    fn end_token(&mut self) -> Result<(), ParseError> {
        if self.token.is_empty() {
            return Ok(());
        }
        let mut text = String::from_utf8_lossy(&self.token).into_owned();
        if self.long {
            text.push('…');
        }
        self.token.clear();
        self.long = false;
        if !self.keyword {
            if text != "section" {
                return Err((self.line, RegionsErrorKind::MissingKeyword(text)));
            }
            self.keyword = true;
            return Ok(());
        }
        let bad = |kind| Err((self.line, kind));
        let Ok(boundary) = text.parse::<u64>() else {
            return bad(RegionsErrorKind::BadNumber(text));
        };
        if boundary > self.gates {
            return bad(RegionsErrorKind::PastEnd {
                boundary,
                gates: self.gates,
            });
        }
        let section = self.sections.len();
        if let Some(&before) = self.bounds.last() {
            if boundary <= before {
                return bad(RegionsErrorKind::Layout(SectionsError::NotAscending {
                    section,
                    before,
                    after: boundary,
                }));
            }
        } else if let Some(previous) = self.sections.last() {
            let end = *previous.last().expect("a section has boundaries");
            if boundary < end {
                return bad(RegionsErrorKind::Layout(SectionsError::Overlap {
                    section,
                    start: boundary,
                    previous: section - 1,
                    end,
                }));
            }
        }
        self.bounds.push(boundary);
        Ok(())
    }

    fn end_line(&mut self) -> Result<(), ParseError> {
        if !self.keyword {
            return Ok(());
        }
        if self.bounds.len() < 3 {
            return Err((
                self.line,
                RegionsErrorKind::TooFewBoundaries(self.bounds.len()),
            ));
        }
        self.sections.push(std::mem::take(&mut self.bounds));
        self.lines.push(self.line);
        self.keyword = false;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::{BitOrder, Gate, InputGroup, OutputGroup, Party};

    /// Four independent AND gates on the inputs, then two that join them in pairs.
    fn circuit() -> Circuit {
        let inputs = vec![InputGroup {
            party: Party::Garbler,
            len: 8,
            order: BitOrder::MsbFirst,
            name: "x".into(),
        }];
        let mut gates: Vec<Gate> = (0..4)
            .map(|i| Gate::And {
                a: 2 * i,
                b: 2 * i + 1,
                out: 8 + i,
            })
            .collect();
        gates.push(Gate::And {
            a: 8,
            b: 9,
            out: 12,
        });
        gates.push(Gate::And {
            a: 10,
            b: 11,
            out: 13,
        });
        let outputs = vec![OutputGroup {
            wires: vec![12, 13],
            order: BitOrder::MsbFirst,
            name: "y".into(),
        }];
        Circuit::new(14, inputs, outputs, gates).unwrap()
    }

    fn refused(text: &str) -> RegionsError {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.txt.regions");
        std::fs::write(&path, text).unwrap();
        attach_regions(circuit(), &path).unwrap_err()
    }

    #[test]
    fn written_and_read_back() {
        let dir = tempfile::tempdir().unwrap();
        let path = regions_path(&dir.path().join("c.txt"));
        assert!(path.ends_with("c.txt.regions"));
        let sections = Sections::new(vec![vec![0, 1, 2, 4], vec![4, 5, 6]]).unwrap();
        write_regions(&path, &sections).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text, format!("{HEADER}\nsection 0 1 2 4\nsection 4 5 6\n"));
        assert_eq!(read_regions(&path, 6).unwrap(), sections);
        let c = attach_regions(circuit(), &path).unwrap();
        assert_eq!(c.sections(), Some(&sections));
        // No temporary file is left beside it.
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    }

    #[test]
    fn comments_blank_lines_and_spacing_are_allowed() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.regions");
        let text =
            "# regions\n\n  section 0\t2 4 # the pairs' inputs\r\n#section 9\n \nsection 4 5 6";
        std::fs::write(&path, text).unwrap();
        let want = Sections::new(vec![vec![0, 2, 4], vec![4, 5, 6]]).unwrap();
        assert_eq!(read_regions(&path, 6).unwrap(), want);
        std::fs::write(&path, "# nothing\n").unwrap();
        assert!(read_regions(&path, 6).unwrap().is_empty());
    }

    #[test]
    fn each_malformed_line_is_named() {
        let msg = |text: &str| refused(text).to_string();
        let e = msg("# ok\nsection 0 1 2\nsections 3 4 5\n");
        assert!(
            e.ends_with("c.txt.regions: line 3: expected 'section' and its region boundaries, found 'sections'"),
            "{e}"
        );
        let e = msg("\nsection 0 1 x2\n");
        assert!(e.ends_with("line 2: 'x2' is not a gate index"), "{e}");
        let e = msg("section 0 -1 2\n");
        assert!(e.ends_with("line 1: '-1' is not a gate index"), "{e}");
        let e = msg(&format!("section 0 1 {}\n", "9".repeat(100)));
        assert!(e.contains("line 1: '9999"), "{e}");
        assert!(e.ends_with("…' is not a gate index"), "{e}");
        let e = msg("section 0 1 2\nsection 2 3\n");
        assert!(
            e.ends_with("line 2: a section needs at least 3 boundaries (two regions), found 2"),
            "{e}"
        );
        assert!(msg("section")
            .ends_with("line 1: a section needs at least 3 boundaries (two regions), found 0"));
        let e = msg("section 0 1 7\n");
        assert!(
            e.ends_with("line 1: boundary 7 is past the circuit's 6 gates"),
            "{e}"
        );
        let e = msg("section 0 2 2\n");
        assert!(
            e.ends_with("line 1: section 0: region boundaries must increase (2 then 2)"),
            "{e}"
        );
        let e = msg("section 0 1 4\n\nsection 3 5 6\n");
        assert!(
            e.ends_with("line 3: section 1 starts at gate 3, before section 0 ends at 4"),
            "{e}"
        );
        let e = msg("section 0 1 2\n0 3 4\n");
        assert!(e.contains("line 2: expected 'section'"), "{e}");
    }

    #[test]
    fn a_dependent_layout_is_refused_by_its_line() {
        // Gate 4 reads wire 8, which gate 0 writes: regions 0..4 and 4..6 are dependent.
        let e = refused("# the pairs\n\nsection 0 4 6\n");
        assert_eq!(e.line, 3);
        let dependent = SectionsError::Dependent {
            section: 0,
            gate: 4,
            reader: 1,
            wire: 8,
            writer: 0,
        };
        assert_eq!(e.kind, RegionsErrorKind::Layout(dependent.clone()));
        assert!(
            e.to_string().ends_with(&format!("line 3: {dependent}")),
            "{e}"
        );
        // Gate 5 reads gate 3's output, in the other region of the second section.
        let e = refused("section 0 1 2\nsection 3 4 6\n");
        assert_eq!(e.line, 2);
        assert!(matches!(
            e.kind,
            RegionsErrorKind::Layout(SectionsError::Dependent {
                section: 1,
                gate: 5,
                wire: 11,
                ..
            })
        ));
    }

    #[test]
    fn a_missing_file_is_named() {
        let e = read_regions(Path::new("/no/such/dir/c.regions"), 6).unwrap_err();
        assert_eq!(e.line, 0);
        assert!(
            e.to_string()
                .starts_with("/no/such/dir/c.regions: cannot read: "),
            "{e}"
        );
    }
}
