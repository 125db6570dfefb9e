//! Yao's protocol, semi-honest: a garbler and an evaluator compute a circuit on private
//! inputs over any transport of `transputation-transport`, which they never name.
//!
//! [`Garbler::new`] and [`Evaluator::new`] do everything that needs no peer (plan the
//! garbling, draw the garbler's labels, encode the input); [`Garbler::run`] and
//! [`Evaluator::run`] then speak the protocol over a connected [`Channel`], each wait
//! bounded by the channel's I/O timeout, and return a [`Report`] with the output, the time
//! of each part and the bytes of each part. A session can also stay open for further
//! computations ([`Evaluator::open`], [`EvaluatorSession::compute`],
//! [`Garbler::run_session`]; "Open sessions" below). [`IppParty`] runs two sessions at once
//! with the roles swapped in the second, on the two independent parts of a circuit
//! (inter-party parallelism; its module docs give the security argument).
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
//! | 1 | E → G | [`SessionHeader`]: what the evaluator is about to run | [`HEADER_LEN`] = 136 |
//! | 2 | E → G | [`messages::BaseOtPoint`]: the evaluator's base-OT point | 32 |
//! | 3 | G → E | [`SessionHeader`]: the same from the garbler, with the session's public hash keys | 136 |
//! | 4 | G → E | [`messages::BaseOtAnswer`]: the garbler's 128 base-OT points | 128 · 32 |
//! | 5 | G → E | [`messages::LabelSeed`]: the seed of the labels of the garbler's input | 16 |
//! | 6 | E → G | [`messages::OtExtension`]: the extension matrix, one message per chunk of up to [`OT_CHUNK`] OTs | `transputation_ot::msg_u_len(k)` each |
//! | 7 | G → E | [`messages::OtReply`], unless the OT draws the labels ([`LabelTransfer`]): ordinary OT's ciphertexts (`prf`) or the corrections of the garbler's chosen 0-labels, one message per chunk, once every message 6 arrived | [`LabelTransfer::reply_len`]: 32·k or 16·k each |
//! | 8 | G → E | [`messages::TableBatch`]: garbled tables, in batches as they are produced (under coarse-grained parallelism, [`Coarse`], one [`messages::TableFrame`] per frame of a piece instead) | the scheme's table and mask bytes in all (the pieces', and 8 bytes per frame) |
//! | 9 | G → E | [`messages::DecodingBits`]: one per output bit, packed | ⌈n_o / 8⌉ |
//! | 10 | E → G | [`messages::OutputBits`]: the output, packed (empty under [`OutputMode::Evaluator`]) | ⌈n_o / 8⌉ or 0 |
//! | 11 | E → G | [`messages::NextComputation`], in an open session only: the next computation's number, or 0 to end the session | 8 |
//!
//! ## Round trips
//!
//! The evaluator waits for the garbler twice before the tables come: its first two messages
//! go at once (over a protected channel inside the handshake's first message,
//! `transputation_transport::EarlyClient`), and messages 3 to 5 answer them in one flight;
//! its extension matrices (6) go at once too, and the tables (8) answer them. From the
//! evaluator's first byte to its output that is two round trips plus the tables' transfer
//! (message 7, where there is one, adds bytes, not a wait: it travels with the tables); the output
//! (10) reaches the garbler half a round trip later. The garbler waits three times: for
//! messages 1–2, for the matrices, and for the output. Each [`Report`] counts its party's
//! waits (`round_trips`) and times, beside the whole session, the paper's measure
//! (`paper`: the Transputation paper's Table 4 times garbling, the tables' transfer and the
//! output, not the OT or set-up): the garbler from the end of its OT (flight 3 read) until
//! message 10 arrived, the evaluator from holding its input labels until it holds its
//! output; `output_at` is when the party held its output, for a caller's own clock.
//!
//! | flight | evaluator → garbler | garbler → evaluator |
//! |---|---|---|
//! | 1 | 1, 2 (with the handshake) | |
//! | 2 | | 3, 4, 5 (after the handshake's answer) |
//! | 3 | 6 | |
//! | 4 | | (7), 8, 9 |
//! | 5 | 10 | |
//!
//! Each party checks the peer's header against its own before using its input: a different
//! circuit, scheme, input size, output mode or protocol version stops both parties with
//! [`Error::Mismatch`]. The garbler sends its header (3) as soon as it starts, before it
//! reads anything: that costs no wait, and an evaluator reads it even when the garbler stops
//! at the evaluator's header (a protected evaluator facing an unprotected garbler reads it
//! where its handshake's answer belongs, and says so). How the evaluator's labels cross is
//! a [`LabelTransfer`], which both parties derive from the circuit and scheme. Under the
//! schemes with a global offset (`ideal`, `circular`) the OT draws them where the garbler
//! would otherwise send more than 1 % of the tables' bytes for them (many input bits, few
//! gates): the garbler sends nothing for them (see Security), knows them once it has read
//! every matrix, and garbles then. Where they cost at most 1 % (`aes128`, SHA-256), the
//! garbler chooses the 0-labels before the session and sends their corrections (message
//! 7, 16 bytes each, the correlated OT of `transputation-ot`), and under `prf` it chooses
//! both labels and transfers them by ordinary OT (32 bytes each): in both cases a second
//! thread in the idle scheduling class garbles up to [`Options::prefetch_bytes`] of tables
//! while the OT runs, sent first after it, which takes the garbling off the session's
//! path. The OT extension runs in chunks so that
//! the garbler works on one chunk while the evaluator extends the next; the garbler answers
//! or garbles only once it has read every chunk, and sends nothing while the evaluator
//! sends them, so that the two parties are never both sending bulk data: with small
//! buffers or a small congestion window that would block each of them on a full buffer the
//! other does not read. Garbled tables are sent in batches of about
//! [`Options::batch_bytes`] as the garbler produces them, while the evaluator evaluates the
//! batches before; neither side holds more than a batch of tables, so memory is bounded by
//! the wire labels. Message 10 is sent even when empty: it tells the garbler that the
//! evaluator holds the output, which ends the garbler's protocol time.
//!
//! # Open sessions
//!
//! An evaluator that opens the session ([`Evaluator::open`]; its header says so,
//! [`SessionHeader::open`]) runs further computations of the same circuit on it
//! ([`EvaluatorSession::compute`], one input each), and the garbler serves them
//! ([`Garbler::run_session`], on its same input). The key exchange, the headers and the
//! base OT are done once; after each output (10) the evaluator sends message 11 with the
//! next computation's number and, in the same flight, its extension matrices (6), which
//! extend the session's OT from where it stood; the garbler answers with (7,) 8 and 9, and
//! the evaluator sends the output (10). A further computation is therefore one round trip
//! for each party plus the tables' transfer: from its input to its output, the evaluator
//! waits once. Message 11 with 0 ends the session. A garbler that runs one computation
//! ([`Garbler::run`]) refuses an open session at the header.
//!
//! | flight | evaluator → garbler | garbler → evaluator |
//! |---|---|---|
//! | k.1 | 11, 6 | |
//! | k.2 | | (7), 8, 9 |
//! | k.3 | 10 | |
//!
//! Each computation's [`Report`] counts its own waits, bytes and times (the first one's
//! include the session's set-up); its `online` is the evaluator's time from its input to
//! its output. Why several computations under one session are as secure as separate
//! sessions is in "Security" below.
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
//!
//! Two choices save the 16 bytes per input bit that the garbler once sent for each party's
//! labels; each gives the evaluator a view distributed exactly as before:
//!
//! - **The garbler's input labels from a seed.** The garbler draws a seed `σ` and sends it
//!   (message 5); both expand it into blocks `S_i` (one per garbler input bit). The garbler
//!   then sets its labels so that `S_i` is the label of its bit `x_i`: with a global offset
//!   `Δ`, `W_i^0 = S_i ⊕ x_i·Δ`; under `prf`, `W_i^{x_i} = S_i` and `W_i^{1−x_i}` fresh
//!   with the other lsb. Before, `W_i^0` was drawn uniformly and the evaluator received
//!   `W_i^{x_i}`. Now `S_i` is uniform and independent of `Δ` and of the other label, so
//!   the pair (`W_i^0`, `Δ`), or (`W_i^0`, `W_i^1`), has the same distribution as a freshly
//!   drawn one, and the evaluator's label is `S_i` in both cases: the garbled circuit and
//!   everything the evaluator sees are distributed identically. Knowing `σ` tells the
//!   evaluator `S_i`, which is exactly the label it was sent before and nothing more. (Over
//!   an unprotected channel an eavesdropper learns the same as before too: the labels then
//!   crossed in the clear.)
//! - **The evaluator's input labels drawn by the OT** (`ideal`, `circular`, where
//!   [`LabelTransfer::Drawn`]): the garbler
//!   runs the IKNP extension with its free-XOR offset `Δ` as the base-OT choices and takes
//!   the rows `q_j` as the 0-labels of the evaluator's wires; the evaluator holds `t_j =
//!   q_j ⊕ r_j·Δ`, its label, with no reply. This is the correlated OT `F_COT^Δ` of Keller,
//!   Orsini and Scholl (CRYPTO 2015, §3), which IKNP realises before its hash; the argument
//!   is in `transputation-ot` ("Zero labels drawn by the OT"): `t_j` comes from the
//!   evaluator's own PRGs, uniform and independent of `Δ`, as a fresh label's active value
//!   is. EMP-toolkit's semi-honest 2PC does the same.
//!
//! Moving the header and base-OT point into the handshake's first message gives them no
//! forward secrecy and lets an attacker replay them to the garbler
//! (`transputation_transport::secure`, "Early data"). Neither is secret (both cross in the
//! clear without protection), and a replayed session learns nothing: the attacker cannot
//! read the garbler's answer or produce the next message under the channel's keys. It can
//! still make a garbler that serves one session answer the replay, wait for message 6 and
//! fail (at the timeout, or at once on a replayed header of another circuit): a denial of
//! service that replaying the empty first message allowed before as well.
//!
//! **`prf`'s cheapest flow, and why it is not the default.** Without a global offset the
//! two labels of a wire are independent blocks, which correlated OT cannot carry. The
//! cheapest sound transfer is random OT: the IKNP extension's random messages
//! `H(j, q_j)` and `H(j, q_j ⊕ s)` become the wire's two labels and the evaluator's choice
//! its input bit, so it holds its label with no ciphertext at all (the random-OT
//! functionality of Keller–Orsini–Scholl, CRYPTO 2015, §3; IKNP's hash is correlation
//! robust). Point and permute needs the two labels' lsbs to differ; the garbler sends one
//! bit per input, `c_j = 1 ⊕ lsb(L^0) ⊕ lsb(L^1)`, and where it is 1 both sides flip the
//! lsb of `L^1` (the evaluator knows whether it holds `L^1`: its input bit). The bit tells
//! the evaluator the lsb of the label it does not hold, which after the flip is the
//! complement of its own's, as in every point-and-permute garbling; the other 127 bits
//! stay a hash output it cannot compute. That is 1 bit per input bit against ordinary
//! OT's 32 bytes, but the labels exist only once the OT has run, so the garbler cannot
//! garble ahead. This crate keeps ordinary OT for `prf` ([`LabelTransfer::Ordinary`]),
//! whose garbling ahead takes the tables' work off the session's path; the random-OT flow
//! is the one to add where `prf`'s input bits, not its tables, dominate the bytes.
//!
//! **Several computations in one session.** The session's `Δ` (under `ideal` and
//! `circular`) is the OT extension's correlation, the base-OT choices, so it stays for
//! every computation of the session; everything else is fresh for each: the garbler's
//! input labels are the next blocks of the seed's stream, the evaluator's the next rows
//! of the OT extension (IKNP extends any number of times from one base OT, each row
//! uniform and independent of the others and of `Δ`), every other wire's 0-label a fresh
//! draw. Garbling computation `k` uses hash tweaks that continue where computation `k − 1`
//! stopped (tweak base `(k − 1)·ANDs`, `transputation_garble::GarbleStart`), so the
//! session as a whole is the garbling of one circuit, the computations side by side,
//! under one `Δ` with no tweak used twice: exactly what the half-gates proofs assume
//! (Zahur–Rosulek–Evans, EUROCRYPT 2015, §3 with a circular correlation-robust hash;
//! Guo–Katz–Wang–Yu, S&P 2020, §4: each tweak is used at most once per `Δ`). The evaluator
//! learns each output in turn, which a simulator of that one circuit is given as well.
//! `prf` has no `Δ`: each computation's labels are all fresh, its OT ordinary. The base OT
//! and key exchange are shared by design, which is the saving.
//!
//! "Distributed as" above is computational: `S_i` and `t_j` are PRG outputs whose seeds the
//! evaluator holds. The argument is that a simulator of the evaluator's view can draw the
//! seed `σ` and run the OT receiver itself, because `σ` and `t_j` are independent of `Δ`
//! and of the labels the evaluator does not hold (separate PRG outputs, and the base OT
//! hides `s` perfectly); the rest of the view is the garbling's, simulated as before.

mod buffers;
mod error;
mod evaluator;
mod garbler;
mod header;
mod inputs;
mod ipp;
mod lanes;
pub mod messages;
mod options;
mod relay;
mod report;
mod session;
mod traffic;
mod wire;

#[cfg(test)]
mod tests;

pub use error::Error;
pub use evaluator::{Evaluator, EvaluatorSession};
pub use garbler::Garbler;
pub use header::{SessionHeader, TableOrder, HEADER_LEN, PROTOCOL_VERSION, SAME_FLOW_SINCE};
pub use ipp::{IppParty, MixedParty};
pub use messages::{LabelTransfer, OT_CHUNK};
pub use options::{Coarse, Options, OutputMode};
pub use report::{ByteParts, Part, Report};
pub use traffic::workload;

pub use transputation_transport::{Channel, Framed};
