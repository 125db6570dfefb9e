//! A session whose garbler's sending races over several connections side by side and
//! then keeps to the one that delivered most (`--transport auto:race`, docs/protocol.md
//! §6 step 8): [`Racing`] is the garbler's end, [`RaceFollowing`] the evaluator's. Both
//! sit under the protected channel, as [`crate::moving`]'s ends do, so whichever
//! connections carry the session's bytes they are the one protected stream.
//!
//! The session starts on its first connection. Once every race lane the statement named
//! has joined, the garbler marks the race's start there and from its next byte the
//! stream goes in chunks over all lanes at once, each lane's thread taking the next chunk
//! as soon as its connection takes more: a lane that delivers faster takes more of the
//! stream. The evaluator reassembles the chunks by their offsets, counts what each lane
//! delivered, and once the race's budget of bytes has arrived names the winner in a
//! verdict, with the chunks it holds; the garbler then sends on the winner alone, first
//! again every chunk a loser took that has not arrived (a loser's backlog never holds up
//! the stream), and the losers carry nothing more.
//!
//! Wire format. On the first connection, garbler to evaluator: frames, a length (u32,
//! big-endian, 1 to [`MAX_FRAME`]) and that many bytes of the stream; a length of 0
//! marks the race's start (nothing more of the garbler's comes there). Evaluator to
//! garbler, for the whole session: frames of a kind (u8: 0 stream bytes, 1 the verdict)
//! and a length (u32, at most [`MAX_FRAME`]); the verdict is the winner's lane (u8), the
//! stream offset below which every byte arrived (u64) and the offsets of the chunks held
//! above it (u64 each, at most [`MAX_LISTED`]: a chunk left out is only sent twice). On
//! each lane, garbler to evaluator: chunks, an offset (u64, from the race's start) and a
//! length (u32, 1 to [`MAX_FRAME`]) and the bytes; a length of 0 ends the lane, its
//! offset the stream's end. Anything else is an error that says what it is.

mod evaluator;
mod frames;
mod garbler;

pub use evaluator::RaceFollowing;
pub use frames::{RaceOutcome, CHUNK, MAX_BUDGET, MAX_FRAME, MAX_HELD, MAX_LISTED};
pub use garbler::Racing;

#[cfg(test)]
mod tests;
