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
//! Every message is a [`Framed`] message (an 8-byte length, then the bytes); `n_g`, `n_e`
//! and `n_o` are the garbler's input bits, the evaluator's and the output bits, `m = n_e`.
//!
//! | # | direction | message | bytes |
//! |---|-----------|---------|-------|
//! | 1 | G → E | session header ([`SessionHeader`]) | 72 |
//! | 1 | E → G | session header | 72 |
//! | 2 | E → G | OT: base-OT sender's point | 32 |
//! | 3 | G → E | the garbler's input labels, wire order | 16 · n_g |
//! | 4 | G → E | OT: base-OT receiver's points | 128 · 32 |
//! | 5 | E → G | OT extension matrix, one message per chunk of up to [`OT_CHUNK`] OTs | `transputation_ot::msg_u_len(k)` each |
//! | 6 | G → E | the evaluator's labels, one message per chunk, once every message 5 arrived: correlated OT's corrections under `ideal` and `circular`, ordinary OT's ciphertexts under `prf` | `transputation_ot::msg_d_len(k)` = 16·k or `transputation_ot::msg_y_len(k)` = 32·k each |
//! | 7 | G → E | garbled tables, in batches as they are produced | the scheme's table and mask bytes |
//! | 8 | G → E | decoding bits, packed | ⌈n_o / 8⌉ |
//! | 9 | E → G | the output bits, packed (none with [`OutputMode::Evaluator`]) | ⌈n_o / 8⌉ or 0 |
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
//! Every message has a length each side knows in advance: a peer that sends another length,
//! a malformed header or point, more table bytes than the circuit has, or nonzero padding
//! bits is stopped with [`Error::Malformed`] (or the OT's error), never followed.
//!
//! # Security
//!
//! Semi-honest security: each party follows the protocol and learns only the output (and
//! the circuit, sizes and timings). The garbler's labels reveal nothing about its input
//! (point and permute); the evaluator's labels come through OT (Chou–Orlandi base OT, IKNP
//! extension, see `transputation-ot`). Authenticating the peer and encrypting the channel
//! is the caller's: wrap the channel in `transputation_transport::SecureChannel` before
//! `run` (the `transputation` binary does, unless `--insecure`).

mod header;
mod session;

pub use header::{SessionHeader, HEADER_LEN, PROTOCOL_VERSION};
pub use session::{ot_reply_len, ByteParts, Evaluator, Garbler, Options, Report, OT_CHUNK};

use std::fmt;
use std::str::FromStr;

pub use transputation_transport::{Channel, Framed};

/// Who learns the output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputMode {
    /// Both parties: the evaluator decodes and sends the output to the garbler.
    #[default]
    Both,
    /// The evaluator only.
    Evaluator,
}

impl fmt::Display for OutputMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OutputMode::Both => "both",
            OutputMode::Evaluator => "evaluator",
        })
    }
}

impl FromStr for OutputMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "both" => Ok(OutputMode::Both),
            "evaluator" => Ok(OutputMode::Evaluator),
            other => Err(format!(
                "unknown output mode '{other}' (expected both or evaluator)"
            )),
        }
    }
}

/// Why a session failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The channel failed: the peer closed, went silent past the timeout, or sent a frame
    /// the transport refused.
    #[error("transport: {0}")]
    Transport(#[from] transputation_transport::Error),
    /// The peer's session header describes another session.
    #[error(
        "the peer runs a different session: {field} differs (ours: {ours}; the peer's: {theirs})"
    )]
    Mismatch {
        /// What differs.
        field: &'static str,
        /// This party's value.
        ours: String,
        /// The peer's value.
        theirs: String,
    },
    /// The peer protects its session (its first bytes are a protected-session hello) and
    /// this side does not.
    #[error(
        "the peer runs a protected session (--psk-file or --key) but this side runs without \
         protection (--insecure): give both parties the same protection"
    )]
    PeerProtected,
    /// The peer closed the connection before sending any byte, in place of its session
    /// header: what a party that protects its sessions does with one that does not.
    #[error(
        "the peer closed the connection without sending its session header: it refused this \
         session, as a party that protects its session (--psk-file or --key) refuses one \
         without protection (--insecure); give both parties the same protection"
    )]
    RefusedUnprotected,
    /// The peer sent something that is not what the protocol expects here.
    #[error("malformed {what} from the peer: {problem}")]
    Malformed {
        /// The message.
        what: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The oblivious transfer failed (an invalid point or a message of the wrong size).
    #[error("oblivious transfer: {0}")]
    Ot(#[from] transputation_ot::Error),
    /// The garbled tables do not fit the circuit.
    #[error("garbled tables: {0}")]
    Tables(#[from] transputation_garble::EvalError),
    /// This party's own input does not fit the circuit.
    #[error("input: {0}")]
    Input(String),
}
