//! A circuit's parallel regions (coarse-grained parallelism, Buescher–Katzenbeisser,
//! "Faster Secure Computation through Automatic Parallelization", USENIX Security 2015,
//! §4.4): where the gates fall into *sections* of independent *regions* that may be garbled
//! and evaluated side by side, one region per thread, with the sequential glue (the gates in
//! no section) between them.
//!
//! A section is a run of consecutive gates cut at ascending boundaries into two or more
//! regions: section `[b0, b1, …, bk]` has the regions `b0..b1`, `b1..b2`, …, `b(k-1)..bk`
//! (gate indices, each region at least one gate). What makes it a section is that no region
//! reads a wire another region of the same section writes: each depends only on what came
//! before the section. Sections are ascending and do not overlap. [`Sections::check`]
//! enforces all of this against a circuit, so a layout read from an untrusted file
//! never makes a garbler run gates before their inputs exist.
//!
//! The layout describes how to schedule a circuit, not what it computes: it is not part of
//! [`Circuit::digest`](crate::Circuit::digest). Parties that garble by it agree on it by its
//! own [`Sections::digest`].

use std::ops::Range;

use crate::gate::{Gate, WireId};

/// One section: consecutive gates cut into independent regions at ascending boundaries.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    bounds: Vec<u64>,
}

/// What is wrong with a layout of sections.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SectionsError {
    /// A section with fewer than two regions.
    #[error("section {section} has {regions} region(s); a section needs at least two")]
    TooFewRegions {
        /// Which section (from 0).
        section: usize,
        /// How many regions it has.
        regions: usize,
    },
    /// Boundaries that do not strictly increase (an empty region).
    #[error("section {section}: region boundaries must increase ({before} then {after})")]
    NotAscending {
        /// Which section.
        section: usize,
        /// A boundary.
        before: u64,
        /// The boundary after it.
        after: u64,
    },
    /// A section that starts before the one before it ends.
    #[error("section {section} starts at gate {start}, before section {previous} ends at {end}")]
    Overlap {
        /// Which section.
        section: usize,
        /// Its first gate.
        start: u64,
        /// The section before it.
        previous: usize,
        /// Where that one ends.
        end: u64,
    },
    /// A section past the circuit's last gate.
    #[error("section {section} ends at gate {end}, past the circuit's {gates} gates")]
    PastEnd {
        /// Which section.
        section: usize,
        /// Its end (exclusive).
        end: u64,
        /// The circuit's gates.
        gates: u64,
    },
    /// A region that reads what another region of its section writes.
    #[error(
        "section {section}: gate {gate} (region {reader}) reads wire {wire}, which region \
         {writer} of the same section writes; regions of a section must be independent"
    )]
    Dependent {
        /// Which section.
        section: usize,
        /// The reading gate.
        gate: u64,
        /// Its region (within the section).
        reader: usize,
        /// The wire.
        wire: WireId,
        /// The region that writes it.
        writer: usize,
    },
    /// Sections on a circuit whose gates are generated as they are read.
    #[error("a generated circuit has no parallel regions (its gates are not held)")]
    Generated,
}

impl Section {
    /// The section whose regions lie between consecutive `bounds` (gate indices).
    ///
    /// # Errors
    /// Fewer than three bounds (two regions), or bounds that do not strictly increase.
    pub fn new(bounds: Vec<u64>) -> Result<Section, SectionsError> {
        Self::numbered(bounds, 0)
    }

    fn numbered(bounds: Vec<u64>, section: usize) -> Result<Section, SectionsError> {
        if bounds.len() < 3 {
            return Err(SectionsError::TooFewRegions {
                section,
                regions: bounds.len().saturating_sub(1),
            });
        }
        if let Some(w) = bounds.windows(2).find(|w| w[0] >= w[1]) {
            return Err(SectionsError::NotAscending {
                section,
                before: w[0],
                after: w[1],
            });
        }
        Ok(Section { bounds })
    }

    /// Its boundaries: region `i` is gates `bounds[i] .. bounds[i + 1]`.
    pub fn bounds(&self) -> &[u64] {
        &self.bounds
    }

    /// Its gates, first to last.
    pub fn gates(&self) -> Range<u64> {
        self.bounds[0]..self.bounds[self.bounds.len() - 1]
    }

    /// The number of regions.
    pub fn len(&self) -> usize {
        self.bounds.len() - 1
    }

    /// Never: a section has at least two regions (for clippy's `len` without `is_empty`).
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The gates of each region, in order.
    pub fn regions(&self) -> impl Iterator<Item = Range<u64>> + '_ {
        self.bounds.windows(2).map(|w| w[0]..w[1])
    }
}

/// A circuit's sections, ascending; see the module documentation.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sections {
    sections: Vec<Section>,
}

impl Sections {
    /// Sections from their boundaries, each list as [`Section::new`] takes it.
    ///
    /// # Errors
    /// As [`Section::new`] (naming the section), or sections that are not ascending and
    /// disjoint.
    pub fn new(bounds: Vec<Vec<u64>>) -> Result<Sections, SectionsError> {
        let sections = bounds
            .into_iter()
            .enumerate()
            .map(|(i, b)| Section::numbered(b, i))
            .collect::<Result<Vec<_>, _>>()?;
        for (i, w) in sections.windows(2).enumerate() {
            if w[1].gates().start < w[0].gates().end {
                return Err(SectionsError::Overlap {
                    section: i + 1,
                    start: w[1].gates().start,
                    previous: i,
                    end: w[0].gates().end,
                });
            }
        }
        Ok(Sections { sections })
    }

    /// The sections, ascending.
    pub fn sections(&self) -> &[Section] {
        &self.sections
    }

    /// Whether there is none.
    pub fn is_empty(&self) -> bool {
        self.sections.is_empty()
    }

    /// The number of regions in all sections.
    pub fn regions(&self) -> usize {
        self.sections.iter().map(Section::len).sum()
    }

    /// The numbers of AND, XOR and INV gates inside the sections (in any of their regions),
    /// of the `gates` of a held circuit they fit ([`Circuit::gates`](crate::Circuit::gates)).
    pub fn gate_counts(&self, gates: &[Gate]) -> [u64; 3] {
        let mut counts = [0u64; 3];
        for section in &self.sections {
            let range = section.gates();
            for g in &gates[range.start as usize..range.end as usize] {
                counts[g.kind_index()] += 1;
            }
        }
        counts
    }

    /// [`Sections::check`] on a held circuit's gates and its number of wires. (`check` itself
    /// is written beside [`Circuit`](crate::Circuit), so that this module, which knows
    /// gates, does not import the circuit, which holds its sections.)
    pub(crate) fn check_gates(&self, gates: &[Gate], num_wires: u32) -> Result<(), SectionsError> {
        let n = gates.len() as u64;
        // The region (within its section) that writes each wire, for the section at hand:
        // entries of earlier sections are stale and told apart by the section number.
        let mut writer: Vec<(u32, u32)> = vec![(u32::MAX, 0); num_wires as usize];
        for (s, section) in self.sections.iter().enumerate() {
            let end = section.gates().end;
            if end > n {
                return Err(SectionsError::PastEnd {
                    section: s,
                    end,
                    gates: n,
                });
            }
            for (r, region) in section.regions().enumerate() {
                for g in region.clone() {
                    let gate = &gates[g as usize];
                    let (a, b) = gate.inputs();
                    for wire in std::iter::once(a).chain(b) {
                        let (ws, wr) = writer[wire as usize];
                        if ws == s as u32 && wr != r as u32 {
                            return Err(SectionsError::Dependent {
                                section: s,
                                gate: g,
                                reader: r,
                                wire,
                                writer: wr as usize,
                            });
                        }
                    }
                    writer[gate.output() as usize] = (s as u32, r as u32);
                }
            }
        }
        Ok(())
    }

    /// A digest of the layout, by which two parties agree on it.
    pub fn digest(&self) -> [u8; 32] {
        use sha2::{Digest, Sha256};
        let mut h = Sha256::new();
        h.update(b"transputation-sections-v1");
        h.update((self.sections.len() as u64).to_le_bytes());
        for s in &self.sections {
            h.update((s.bounds.len() as u64).to_le_bytes());
            for b in &s.bounds {
                h.update(b.to_le_bytes());
            }
        }
        h.finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::{BitOrder, Circuit, Gate, InputGroup, OutputGroup, Party};

    /// Two independent AND gates on the inputs, then one that joins them.
    fn joined() -> Circuit {
        let inputs = vec![InputGroup {
            party: Party::Garbler,
            len: 4,
            order: BitOrder::MsbFirst,
            name: "x".into(),
        }];
        let gates = vec![
            Gate::And { a: 0, b: 1, out: 4 },
            Gate::And { a: 2, b: 3, out: 5 },
            Gate::And { a: 4, b: 5, out: 6 },
        ];
        let outputs = vec![OutputGroup {
            wires: vec![6],
            order: BitOrder::MsbFirst,
            name: "y".into(),
        }];
        Circuit::new(7, inputs, outputs, gates).unwrap()
    }

    #[test]
    fn independent_regions_pass_and_dependent_ones_are_named() {
        let c = joined();
        let ok = Sections::new(vec![vec![0, 1, 2]]).unwrap();
        ok.check(&c).unwrap();
        assert_eq!(ok.regions(), 2);
        let bad = Sections::new(vec![vec![1, 2, 3]]).unwrap();
        assert_eq!(
            bad.check(&c),
            Err(SectionsError::Dependent {
                section: 0,
                gate: 2,
                reader: 1,
                wire: 5,
                writer: 0,
            })
        );
        let past = Sections::new(vec![vec![0, 1, 4]]).unwrap();
        assert!(matches!(past.check(&c), Err(SectionsError::PastEnd { .. })));
    }

    #[test]
    fn malformed_layouts_are_refused() {
        assert!(matches!(
            Sections::new(vec![vec![0, 1]]),
            Err(SectionsError::TooFewRegions { regions: 1, .. })
        ));
        assert!(matches!(
            Sections::new(vec![vec![0, 2, 2]]),
            Err(SectionsError::NotAscending { .. })
        ));
        assert!(matches!(
            Sections::new(vec![vec![0, 1, 3], vec![2, 4, 5]]),
            Err(SectionsError::Overlap { section: 1, .. })
        ));
    }

    #[test]
    fn a_later_section_may_read_an_earlier_ones_regions() {
        let c = joined();
        // Gate 2 reads both regions of a section that ended before it: allowed.
        let s = Sections::new(vec![vec![0, 1, 2]]).unwrap();
        s.check(&c).unwrap();
        assert_eq!(s.gate_counts(c.gates()), [2, 0, 0]);
        assert_ne!(
            Sections::new(vec![vec![0, 1, 2]]).unwrap().digest(),
            Sections::default().digest()
        );
    }
}
