//! Yao's protocol, semi-honest: a garbler and an evaluator compute a circuit on private
//! inputs over any transport of `transputation-transport`, which they never name.
//!
//! [`Garbler::new`] and [`Evaluator::new`] do everything that needs no peer (plan the
//! garbling, draw the garbler's labels, encode the input); [`Garbler::run`] and
//! [`Evaluator::run`] then speak the protocol over a connected [`Channel`], each wait
//! bounded by the channel's I/O timeout, and return a [`Report`] with the output, the time
//! of each part and the bytes of each part.
//!
//! # Message flow
//!
//! Every message is one [`Framed`] message (an 8-byte big-endian length, then the
//! payload) and is one type of [`messages`], which holds its encoding, the lengths it may
//! have and its decoding. `n_g`, `n_e` and `n_o` are the garbler's input bits, the
//! evaluator's and the output bits; `k` is the OTs of one chunk.
//!
//! | # | direction | message | bytes |
//! |---|-----------|---------|-------|
//! | 1 | G → E | [`SessionHeader`]: what the garbler is about to run | [`HEADER_LEN`] = 72 |
//! | 1 | E → G | [`SessionHeader`]: the same from the evaluator | 72 |
//! | 2 | E → G | [`messages::BaseOtPoint`]: the evaluator's base-OT point | 32 |
//! | 3 | G → E | [`messages::GarblerLabels`]: the labels of the garbler's input, wire order | 16 · n_g |
//! | 4 | G → E | [`messages::BaseOtAnswer`]: the garbler's 128 base-OT points | 128 · 32 |
//! | 5 | E → G | [`messages::OtExtension`]: the extension matrix, one message per chunk of up to [`OT_CHUNK`] OTs | `transputation_ot::msg_u_len(k)` each |
//! | 6 | G → E | [`messages::OtReply`]: the evaluator's labels, one message per chunk, once every message 5 arrived: correlated OT's corrections under `ideal` and `circular`, ordinary OT's ciphertexts under `prf` | [`ot_reply_len`]: 16·k or 32·k each |
//! | 7 | G → E | [`messages::TableBatch`]: garbled tables, in batches as they are produced | the scheme's table and mask bytes in all |
//! | 8 | G → E | [`messages::DecodingBits`]: one per output bit, packed | ⌈n_o / 8⌉ |
//! | 9 | E → G | [`messages::OutputBits`]: the output, packed (empty under [`OutputMode::Evaluator`]) | ⌈n_o / 8⌉ or 0 |
//!
//! Each party checks the peer's header against its own before using its input: a different
//! circuit, scheme, input size, output mode or protocol version stops both parties with
//! [`Error::Mismatch`]. The evaluator sends its base-OT point with its header (it does not
//! depend on its input) to save a round trip. The garbler sends its input labels right
//! after the header check, while the evaluator only reads: they cross while the garbler
//! computes the base OT, instead of after the OT, when the evaluator would wait for them.
//! The OT extension runs in chunks so that the garbler answers one chunk while the
//! evaluator extends the next; the garbler answers only once it has read every chunk, and
//! sends nothing while the evaluator sends them, so that the two parties are never both
//! sending: with small buffers or a small congestion window that would block each of them
//! on a full buffer the other does not read. Garbled tables are sent in batches of about
//! [`Options::batch_bytes`] as the garbler produces them, while the evaluator evaluates the
//! batches before; neither side holds more than a batch of tables, so memory is bounded by
//! the wire labels. Message 9 is sent even when empty: it tells the garbler that the
//! evaluator holds the output, which ends the garbler's protocol time.
//!
//! The garbler does not wait idle for the OT: from the header check until the OT ends, a
//! second thread in the idle scheduling class garbles up to [`Options::prefetch_bytes`] of
//! tables ahead, sent first once the OT is done.
//!
//! Every message has lengths each side knows before it arrives ([`messages::Message`]): a
//! receiver checks the length a frame announces before it reads or allocates anything, so
//! a peer that announces another length, sends a malformed header or point, more table
//! bytes than the circuit has, or nonzero padding bits is stopped with
//! [`Error::Malformed`] (or the OT's error), never followed.
//!
//! Each party's driver ([`Garbler::run`], [`Evaluator::run`]) is the table read from its
//! side: one step per message or exchange, in this order.
//!
//! # Security
//!
//! Semi-honest security: each party follows the protocol and learns only the output (and
//! the circuit, sizes and timings). The garbler's labels reveal nothing about its input
//! (point and permute); the evaluator's labels come through OT (Chou–Orlandi base OT, IKNP
//! extension, see `transputation-ot`). Authenticating the peer and encrypting the channel
//! is the caller's: wrap the channel in `transputation_transport::SecureChannel` before
//! `run` (the `transputation` binary does, unless `--insecure`).

mod buffers;
mod error;
mod evaluator;
mod garbler;
mod header;
mod inputs;
pub mod messages;
mod options;
mod relay;
mod report;
mod wire;

#[cfg(test)]
mod tests;

pub use error::Error;
pub use evaluator::Evaluator;
pub use garbler::Garbler;
pub use header::{SessionHeader, HEADER_LEN, PROTOCOL_VERSION};
pub use messages::{ot_reply_len, OT_CHUNK};
pub use options::{Options, OutputMode};
pub use report::{ByteParts, Part, Report};

pub use transputation_transport::{Channel, Framed};
