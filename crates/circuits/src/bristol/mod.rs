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

mod format;
mod reader;
mod writer;

pub use format::Format;
pub use reader::{read, read_file, ReadError, ReadErrorKind};
pub use writer::{write, write_file, WriteError};
