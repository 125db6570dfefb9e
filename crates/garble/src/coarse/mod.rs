//! Coarse-grained parallelism (Buescher–Katzenbeisser, "Faster Secure Computation through
//! Automatic Parallelization", USENIX Security 2015, §4.4): a circuit's parallel regions
//! ([`Circuit::sections`](transputation_circuits::Circuit::sections)) garbled and
//! evaluated side by side, each region by a thread of its own, with the sequential glue
//! between them.
//!
//! # Pieces and stages
//! [`Layout::of`] cuts the circuit, in gate order, into *stages*: each run of glue is a stage
//! of one piece, each section a stage whose regions are grouped, in order, into pieces of at
//! least 65,536 gates. Every piece is a circuit of its own: its inputs are the wires it reads
//! and does not write, its outputs the wires it writes that a later piece reads or that are
//! outputs of the circuit. The driver keeps one label (the evaluator) or label pair (the
//! garbler) per such crossing wire. A stage's pieces read only what earlier stages wrote, so
//! they may run in any order and at once; the next stage starts when all of them are done.
//!
//! # Why garbling by pieces changes nothing
//! Each piece is garbled by the scheme's own garbler, from the labels of its input wires as
//! the pieces before it left them, under the session's offset `Δ` and hash key, and so that
//! every hash tweak or PRF input is the one the whole circuit's garbling would use: the
//! half-gates schemes continue the tweak count from the AND gates before the piece
//! ([`GarbleStart::tweak_base`](crate::GarbleStart::tweak_base)), and `prf` its gate
//! indices from the gates before it (a wire's labels are PRF keys in every piece that reads
//! it; unique gate indices keep every (key, input) pair used once) and starts from its
//! inputs' label sets as the whole circuit has them (so that `AND(x, NOT x)` or
//! `AND(x, AND(x, x))` with `x` from another piece is garbled as degenerate, as the whole
//! circuit's garbling does: docs/garbling.md §2.7 rule 3). The half-gates schemes
//! derive every non-input label from the input labels, `Δ` and the tweaks, so a piece's
//! tables are, gate by gate, those of the sequential garbling; under `prf` a piece draws
//! its fresh labels and permute bits from a PRG seeded from the garbler's. Either way each
//! gate is garbled as the scheme's security argument requires, and the evaluator learns one
//! label per wire as before. The stream adds only frame headers: which piece of a stage a
//! batch of tables belongs to and its length, public facts of the circuit and of the
//! garbler's timing.
//!
//! # Stream
//! The tables of each stage in turn, in frames: `piece: u32 LE` (its index in the stage),
//! `len: u32 LE` (1 or more), then `len` bytes, which continue that piece's tables (its
//! scheme's wire format, as a garbling of the piece on its own would write them). Frames of
//! a stage's pieces come interleaved in any order; a stage ends when every piece has had
//! all its table bytes (known from its gate counts), and stages whose pieces have no tables
//! (only free gates) send no frame. A frame holds at most 256 KiB. The evaluator checks
//! every header: a piece outside the stage, an empty frame, or one longer than that or than
//! what its piece has left is [`EvalError::Frame`](crate::EvalError::Frame), and so is a
//! frame that begins a piece while [`MAX_OPEN`] pieces have begun and not ended (the most
//! threads a garbler garbles on; more would make the evaluator plan that many at once);
//! after any error it reads nothing more and gives no output.

mod evaluator;
mod frame;
mod garbler;
mod layout;
#[cfg(test)]
mod tests;

pub use evaluator::CoarseEvaluator;
pub use frame::{frames, read_frame_header, CHUNK as FRAME_MAX, HEADER as FRAME_HEADER, MAX_OPEN};
pub use garbler::CoarseGarbler;
pub use layout::{CoarseError, Layout};
