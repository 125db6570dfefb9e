//! Reading and writing Bristol and Bristol Fashion circuit files.
//!
//! Both formats open with `gates wires`. Old Bristol then has `n1 n2 n3` (the bits of input
//! 1, input 2 and the output); Bristol Fashion has `niv` and the size of each input, then
//! `nov` and the size of each output. Gate lines are `nin nout in.. out.. OP`. The format is
//! detected from the header: a third header line of numbers only means Bristol Fashion.
//!
//! On reading, operations beyond XOR, AND and INV are lowered: `EQW` (a copy) makes its output
//! an alias of its input, `MAND` becomes its k AND gates, and `EQ` (a constant) becomes
//! `x XOR x` of the first input wire, negated for 1 (free under free-XOR). `NOT` is read as
//! `INV`.
//!
//! Parties and bit order: the first input group belongs to the garbler and every other group
//! to the evaluator (change it with [`crate::Circuit::set_input_parties`], `--parties` on the
//! command line). A group of 0 bits is absent (an old Bristol `512 0 256` header gives one
//! group, the garbler's, and `0 512 256` the evaluator's), so that a one-party circuit's
//! group can be given to either party. Old Bristol groups are
//! [`BitOrder::MsbFirst`](crate::BitOrder::MsbFirst) and Bristol Fashion groups
//! [`BitOrder::LsbFirst`](crate::BitOrder::LsbFirst), as the reference files use them
//! (the reference circuits used by the tests).
//!
//! Writing converts: groups are reordered garbler first, and bit-reversed where the circuit's
//! order differs from the format's, so that a circuit written and read back takes and gives
//! the same hex strings.
//!
//! # The `.regions` side file
//! A circuit's parallel regions ([`Sections`](crate::Sections)), which neither format has a
//! place for, go in a side file beside the circuit file: `X.regions` for `X`
//! ([`regions_path`]; [`write_regions`], [`read_regions`], [`attach_regions`]). Plain
//! Bristol files stay as they are, and a circuit file without a side file has no regions.
//!
//! ```text
//! # Transputation parallel regions: one section per line, its region boundaries (gate indices)
//! section 0 1200 2400 3600
//! section 5000 5100 5200
//! ```
//!
//! Each `section` line lists a section's ascending boundaries, at least three (two
//! regions): region `i` is gates `b_i .. b_(i+1)` of the circuit as read, gates numbered
//! from 0 in file order (XOR, AND, INV and NOT one gate each; `EQ`, `EQW` and `MAND` count
//! as they are lowered). Sections are ascending and disjoint, and no region reads a wire
//! another region of its section writes. `#` starts a comment to the end of its line; blank
//! lines are skipped.

mod format;
mod layout;
mod reader;
mod writer;

pub use format::Format;
pub use layout::{
    attach_regions, read_regions, regions_path, write_regions, RegionsError, RegionsErrorKind,
};
pub use reader::{read, read_file, ReadError, ReadErrorKind};
pub use writer::{write, write_file, WriteError};
