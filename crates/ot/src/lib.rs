//! Oblivious transfer for Yao's protocol, semi-honest, without I/O.
//!
//! The garbler is the OT *sender* (it holds a pair of 16-byte wire labels per input bit of
//! the evaluator), the evaluator the OT *receiver* (its choice bits are its input bits and
//! it learns one label of each pair). The cores are state machines that take and return
//! byte messages; the caller moves the bytes over whatever transport it uses, and each
//! state is consumed by the step that leaves it, so no step can run twice.
//!
//! # Protocol flow
//!
//! After the base OTs (one round trip, msg_a and msg_b), the extension runs in *chunks*:
//! the evaluator commits to a chunk of choices and sends its msg_u, the garbler answers
//! with that chunk's msg_y, and the evaluator unmasks it. Chunks let the two parties
//! pipeline: the evaluator computes chunk k+1's matrix while the garbler hashes chunk k,
//! and unmasks chunk k while later ones are in flight. A chunk of `m` OTs (any `m ≥ 0`) is
//! padded on its own to `m' = ⌈m / 128⌉ · 128` rows ([`padded`]):
//!
//! ```text
//! evaluator                                                  garbler
//! Receiver::start                  ── msg_a: 32 B ─────────▶ Sender::respond
//! Receiver::base                   ◀─ msg_b: 128·32 B ────── (or Sender::setup + respond)
//!   → ReceiverExtension
//! for each chunk k (choices_k, m_k OTs)                      for each chunk k (pairs_k)
//!   ReceiverExtension::extend      ── msg_u_k: 16·m_k' B ──▶ Sender::extend
//!   ReceiverExtension::receive     ◀─ msg_y_k: 32·m_k B ────
//! ```
//!
//! **Both parties must process the same chunks in the same order with the same sizes.**
//! The sizes are not sent: the garbler's are the lengths of the pair slices it passes to
//! [`Sender::extend`], checked against each msg_u's length; the evaluator's are the lengths
//! of its choice slices, and [`ReceiverExtension::receive`] takes the msg_y of the *oldest*
//! chunk not yet received (first in, first out), checking its exact length. The evaluator
//! may extend any number of chunks before receiving the first. Each chunk advances both
//! sides' column PRGs by `m'/128` blocks (padding rows included), and its OTs take the
//! next `m` *session-wide indices*: the `j`-th OT of a chunk preceded by `n` OTs has index
//! `n + j`, which is its hash tweak, so no two hashes of a session share a tweak. Chunks
//! whose sizes are multiples of 128 therefore give exactly the bytes of one chunk of their
//! total size; other sizes differ only through where the padding falls.
//!
//! The one-shot API is the special case of a single chunk, with the same messages:
//!
//! ```text
//! Receiver::choose (msg_b, all choices) = Receiver::base + one extend → (Chosen, msg_u)
//! Sender::send (msg_u, all pairs)       = one Sender::extend          → msg_y
//! Chosen::receive (msg_y)               = one ReceiverExtension::receive
//! ```
//!
//! | message | from | bytes | content |
//! |---|---|---|---|
//! | msg_a | evaluator | [`MSG_A_LEN`] = 32 | base-OT point `A` |
//! | msg_b | garbler | [`MSG_B_LEN`] = 4096 | base-OT points `B_0..B_127` |
//! | msg_u | evaluator | [`msg_u_len`]`(m)` = `16·m'` | IKNP matrix `u` of a chunk, 128 columns of `m'` bits |
//! | msg_y | garbler | [`msg_y_len`]`(m)` = `32·m` | the masked pairs `y_j^0 ‖ y_j^1` of a chunk |
//! | msg_d | garbler | [`msg_d_len`]`(m)` = `16·m` | correlated OTs instead of msg_y: the corrections `d_j` of a chunk |
//!
//! # Wire formats
//!
//! - msg_a: the canonical Ristretto255 encoding of `A`.
//! - msg_b: the encodings of `B_0, …, B_127`, in order.
//! - msg_u (per chunk): block by block, so that the garbler can work through it 128 OTs at
//!   a time in cache: for each block `b` of 128 OTs of the chunk and each column
//!   `i = 0..128`, the 16 bytes of `u_i` for the chunk's OTs `128·b .. 128·b + 128` as a
//!   little-endian `u128` (bit `k` is the chunk's OT `128·b + k`).
//! - msg_y (per chunk): `y_j^0 ‖ y_j^1` for the chunk's OTs `j = 0..m`, 16 bytes each
//!   ([`transputation_core::Block::to_bytes`]).
//! - msg_d (per chunk): `d_j` for the chunk's OTs `j = 0..m`, 16 bytes each, the same way.
//!
//! The base-OT keys and the per-column PRGs are described in [`base`] and above; the test
//! suite pins a digest of a seeded transcript, so any change to these formats shows.
//!
//! # Cost and threads
//!
//! The base OTs dominate for small `m`: per side about 128 scalar multiplications
//! (variable-base on the evaluator, fixed-base on the garbler). They run on up to four
//! threads ([`std::thread::available_parallelism`]); everything else is single-threaded
//! and linear in `m` (two AES-CTR blocks per column per 128 OTs for the evaluator, one for
//! the garbler, one 128×128 transpose per 128 OTs each, and two TMMO hashes per OT for the
//! garbler, one for the evaluator; correlated OTs hash nothing). A chunk costs no more per OT than one large chunk; chunks
//! of a few thousand OTs or more keep the padding negligible, and their messages and rows
//! stay in cache. The `_into` forms ([`ReceiverExtension::extend_into`],
//! [`Sender::extend_into`], [`ReceiverExtension::receive_into`]) write into the caller's
//! buffers, so a pipeline need not allocate (and fault in) fresh memory per chunk.
//!
//! The garbler may call [`Sender::setup`] before msg_a arrives and [`SenderSetup::respond`]
//! on it, which moves half of its base-OT work off the critical path (same messages).
//!
//! A party reads exactly these many bytes; any other length is an [`Error::Length`] (and the
//! state is left as it was). The padding rows carry choice 0 and are dropped by both
//! sides, so msg_u tells the garbler a chunk's `m` only up to a multiple of 128: a garbler
//! with a different `m` in the same multiple of 128 is caught by the evaluator, whose msg_y
//! length check is exact. A msg_y with no chunk pending is an [`Error::NothingPending`].
//!
//! # The two layers and why their roles are reversed
//!
//! 1. **Base OT** ([`base`]): 128 OTs of random 16-byte keys by Chou–Orlandi over
//!    Ristretto255, the only public-key step.
//! 2. **OT extension**: IKNP (Ishai, Kilian, Nissim, Petrank, "Extending Oblivious
//!    Transfers Efficiently", CRYPTO 2003) turns those 128 into `m` OTs of labels with
//!    symmetric crypto only. The extension *receiver* (evaluator) is the base-OT *sender*:
//!    it holds both seeds `k_i^0, k_i^1` of each column and stretches them with AES-CTR
//!    ([`transputation_core::prg::Prg`]) into `t_i = G(k_i^0)` and sends
//!    `u_i = t_i ⊕ G(k_i^1) ⊕ r` (`r` = its choices). The extension *sender* (garbler) is
//!    the base-OT *receiver* with a secret random choice string `s ∈ {0,1}^128`: it gets
//!    `k_i^{s_i}` and computes `q_i = G(k_i^{s_i}) ⊕ s_i·u_i = t_i ⊕ s_i·r`, whose rows
//!    after the transpose are `q_j = t_j ⊕ r_j·s`.
//!
//! The garbler sends `y_j^0 = x_j^0 ⊕ H(q_j, j)` and `y_j^1 = x_j^1 ⊕ H(q_j ⊕ s, j)`; the
//! evaluator knows `t_j = q_j ⊕ r_j·s` and recovers `x_j^{r_j} = y_j^{r_j} ⊕ H(t_j, j)`.
//!
//! # Security (semi-honest)
//!
//! - The garbler sees `u_i = G(k_i^{s_i}) ⊕ …`: for its own columns the other seed
//!   `k_i^{1−s_i}` is hidden by the base OT, so `G(k_i^{1-s_i})` is pseudorandom and each
//!   `u_i` a one-time pad of `r` — it learns nothing of the choices.
//! - The evaluator knows `t_j`; the message it did not choose is masked by
//!   `H(t_j ⊕ s, j)` with `s` uniform and hidden by the base OT (the evaluator, as the
//!   base-OT sender, learns nothing of the garbler's choices `s`). That needs `H` to be
//!   *correlation robust* for the secret offset `s`: `H(w_j ⊕ s, j)` looks random given
//!   the `w_j`. Per index `j` exactly one hash involves `s`, under its own tweak `j`; the
//!   indices count on across chunks, so this holds for the whole session. The padding rows
//!   of a chunk are never hashed, and their PRG output is never reused (the next chunk
//!   starts after it), so chunking changes nothing in this argument.
//! - `H` is the TMMO hash of Guo, Katz, Wang and Yu ("Efficient and Secure Multiparty
//!   Computation from Fixed-Key Block Ciphers", S&P 2020, eprint 2019/074, §7.4),
//!   `H(x, j) = π(π(x) ⊕ j) ⊕ π(x)` with `π` AES-128 under a public key fixed for the
//!   session: proven tweakable circular correlation robust (TCCR, hence TCR) when `π`
//!   is an ideal permutation. IKNP needs only TCR, not the circular variant, since the
//!   label pairs do not depend on `s`. The one-call forms `π(x ⊕ j) ⊕ x ⊕ j` and
//!   `π(σ(x) ⊕ j) ⊕ σ(x)` were considered and rejected: two queries `(x, j)`,
//!   `(x ⊕ j ⊕ j', j')` hit the same `π` input and give related outputs, so they are not
//!   TCR in the GKWY20 sense (docs/garbling.md §5.2 gives the same distinguisher); the
//!   tweak would buy nothing. TMMO costs two AES calls per hash, which is cheap next to
//!   the rest (see the `ot` bench).
//! - The key: that bound counts every hash ever computed under one key, so a key shared by
//!   all sessions lets one precomputation against `π` serve them all (the multi-instance
//!   attack of Guo, Katz, Wang, Weng and Yu, "Better Concrete Security for Half-Gates
//!   Garbling (in the Multi-Instance Setting)", CRYPTO 2020, eprint 2019/1168, there on
//!   garbling). A 2PC session's garbler draws a key of its own at random and sends it in
//!   the clear before the extension ([`SenderSetup::with_hash_key`],
//!   [`Receiver::with_hash_key`]); as the evaluator does not know it in advance, work
//!   against `π` before the session is of no use, and the bound counts that session's
//!   hashes alone (with `π` under each key an independent ideal permutation, the ideal
//!   cipher model). [`HASH_KEY`] (the 16 ASCII bytes `transputation/ot`) is the key of a
//!   setup given none, as in the tests. The garbling hash's key is drawn apart from it,
//!   so the OT hashes and the garbling hashes are separate domains.
//!
//! # Correlated OT
//!
//! The half-gates schemes give each input wire the labels `x^0` and `x^0 ⊕ Δ` with one
//! secret offset `Δ` for the whole circuit (free XOR). For them the garbler runs the
//! extension with `s = Δ` ([`Sender::setup_correlated`]) and, per OT, sends only
//! `d_j = x_j^0 ⊕ q_j` in a msg_d ([`Sender::extend_correlated_into`]); the evaluator takes
//! `d_j ⊕ t_j = x_j^0 ⊕ r_j·Δ`, its label ([`ReceiverExtension::receive_correlated_into`]).
//! This is the correlated OT (C-OT) of Asharov, Lindell, Schneider and Zohner ("More
//! Efficient Oblivious Transfer and Extensions for Faster Secure Computation", CCS 2013,
//! §5.4), in the form without a hash that semi-honest garbling uses (EMP-toolkit's
//! `send_cot` with the garbler's `Δ` as IKNP's `s`): 16 bytes per OT instead of 32, and no
//! hashing on either side. Security, semi-honest:
//!
//! - The garbler's view is IKNP's (the msg_u above); only the base-OT choices changed from
//!   random to `Δ`, which is uniform (but for its permute bit) and secret, and the base OT
//!   hides the receiver's choices whatever they are.
//! - The evaluator's new view is `d_j = x_j^{r_j} ⊕ t_j`: with `t_j` its own, `d_j` is a
//!   function of the label it is meant to learn, so it can be simulated from that label and
//!   tells nothing about `Δ` or `x_j^{1−r_j}`. No hash is needed because the two
//!   "messages" are meant to be correlated by `Δ`: the correlation robustness that IKNP
//!   asks of its hash (to break that correlation) is asked of the garbling scheme's hash
//!   instead, which is what free XOR already assumes.
//!
//! Outside the semi-honest model this matters more than for ordinary OT: an evaluator that
//! deliberately sends inconsistent columns of its matrix can test guesses about bits of
//! `s` (the known weakness of IKNP against active receivers, which KOS15's consistency check
//! closes), and here `s` is `Δ`, the garbling secret itself, where ordinary OT would only
//! expose a random `s`. Transputation claims semi-honest security, under which this does
//! not arise; an actively secure version needs that check.
//!
//! ## Zero labels drawn by the OT
//!
//! The garbler need not choose the zero labels of the evaluator's input wires at all: with
//! `s = Δ` the rows themselves are correlated, `t_j = q_j ⊕ r_j·Δ`, so taking `x_j^0 = q_j`
//! gives the evaluator its label `t_j` with nothing sent back
//! ([`Sender::extend_cot_zeros_into`], [`ReceiverExtension::extend_cot_into`]). This is the
//! correlated OT functionality with a global offset, `F_COT^Δ`, that the IKNP rows realise
//! before any hash (Keller, Orsini and Scholl, "Actively Secure OT Extension with Optimal
//! Overhead", CRYPTO 2015, §3: the sender learns random `q_j`, the receiver `q_j ⊕ r_j·Δ`).
//! The garbler's view is IKNP's, as above. The evaluator's view is its own `t_j`, now with
//! no message at all; the garbling is as if the garbler had drawn `x_j^0 = t_j ⊕ r_j·Δ`:
//! the evaluator's active label `t_j` comes from its own column PRGs, uniform and
//! independent of `Δ`, which is exactly the distribution of a fresh zero label's active
//! label, so the garbled circuit it sees is distributed as one with uniform zero labels.
//! The cost: the garbler knows these zero labels only when msg_u arrives, so it garbles
//! the gates that depend on them after the OT rather than during it.
//!
//! `Δ` is the garbler's garbling secret, so it must not be the choice string of anything
//! else; a chunk of ordinary OTs in the same session (msg_y) still hides the message not
//! chosen behind `H(q_j ⊕ Δ, j)`, under its own index.
//!
//! # Examples
//!
//! One shot:
//!
//! ```
//! use rand::{Rng, SeedableRng};
//! use transputation_core::Block;
//! use transputation_ot as ot;
//!
//! let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(1);
//! let pairs: Vec<[Block; 2]> = (0..200).map(|_| [Block(rng.gen()), Block(rng.gen())]).collect();
//! let choices: Vec<bool> = (0..200).map(|_| rng.gen()).collect();
//!
//! let (receiver, msg_a) = ot::Receiver::start(&mut rng); // evaluator
//! let (sender, msg_b) = ot::Sender::respond(&msg_a, &mut rng)?; // garbler
//! let (chosen, msg_u) = receiver.choose(&msg_b, &choices)?; // evaluator
//! assert_eq!(msg_u.len(), ot::msg_u_len(200));
//! let msg_y = sender.send(&msg_u, &pairs)?; // garbler
//! let labels = chosen.receive(&msg_y)?; // evaluator
//! for ((label, pair), &c) in labels.iter().zip(&pairs).zip(&choices) {
//!     assert_eq!(*label, pair[c as usize]);
//! }
//! # Ok::<(), ot::Error>(())
//! ```
//!
//! In chunks of 4096, with up to two chunks' msg_y in flight before the evaluator unmasks
//! the oldest (in a real session each side runs its steps on its own host and the messages
//! travel in between):
//!
//! ```
//! use std::collections::VecDeque;
//! use rand::{Rng, SeedableRng};
//! use transputation_core::Block;
//! use transputation_ot as ot;
//!
//! let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(2);
//! let m = 10_000;
//! let pairs: Vec<[Block; 2]> = (0..m).map(|_| [Block(rng.gen()), Block(rng.gen())]).collect();
//! let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
//!
//! let (receiver, msg_a) = ot::Receiver::start(&mut rng); // evaluator
//! let (mut sender, msg_b) = ot::Sender::respond(&msg_a, &mut rng)?; // garbler
//! let mut ext = receiver.base(&msg_b)?; // evaluator
//!
//! let (mut in_flight, mut labels) = (VecDeque::new(), Vec::new());
//! for (choices_k, pairs_k) in choices.chunks(4096).zip(pairs.chunks(4096)) {
//!     let msg_u = ext.extend(choices_k); // evaluator: chunk k's matrix
//!     in_flight.push_back(sender.extend(&msg_u, pairs_k)?); // garbler: chunk k's msg_y
//!     if in_flight.len() > 2 {
//!         // evaluator: the oldest pending chunk
//!         ext.receive_into(&in_flight.pop_front().unwrap(), &mut labels)?;
//!     }
//! }
//! for msg_y in in_flight {
//!     ext.receive_into(&msg_y, &mut labels)?;
//! }
//! assert_eq!(ext.pending(), 0);
//! for ((label, pair), &c) in labels.iter().zip(&pairs).zip(&choices) {
//!     assert_eq!(*label, pair[c as usize]);
//! }
//! # Ok::<(), ot::Error>(())
//! ```

pub mod base;
mod iknp;
mod transpose;

pub use iknp::{Chosen, Receiver, ReceiverExtension, Sender, SenderSetup, HASH_KEY};

/// Base OTs, and so the IKNP security parameter and matrix width.
pub const BASE_OTS: usize = 128;
/// Bytes of msg_a (the point `A`).
pub const MSG_A_LEN: usize = base::POINT_LEN;
/// Bytes of msg_b (the points `B_0..B_127`).
pub const MSG_B_LEN: usize = BASE_OTS * base::POINT_LEN;

/// `m` rounded up to a multiple of 128: the rows of the IKNP matrix (saturating at
/// `usize::MAX` for absurd `m`, a length no message can have).
pub const fn padded(m: usize) -> usize {
    m.div_ceil(BASE_OTS).saturating_mul(BASE_OTS)
}

/// Bytes of msg_u for `m` OTs: `16·m'` with `m' = `[`padded`]`(m)` (saturating).
pub const fn msg_u_len(m: usize) -> usize {
    padded(m).saturating_mul(BASE_OTS / 8)
}

/// Bytes of msg_y for `m` OTs: `32·m` (saturating).
pub const fn msg_y_len(m: usize) -> usize {
    m.saturating_mul(32)
}

/// Bytes of msg_d (correlated OTs) for `m` OTs: `16·m` (saturating).
pub const fn msg_d_len(m: usize) -> usize {
    m.saturating_mul(16)
}

/// An OT message, as named in the crate documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Message {
    /// msg_a, the evaluator's base-OT point.
    A,
    /// msg_b, the garbler's base-OT points.
    B,
    /// msg_u, the evaluator's IKNP matrix.
    U,
    /// msg_y, the garbler's masked label pairs.
    Y,
    /// msg_d, the garbler's label corrections (correlated OTs).
    D,
}

impl std::fmt::Display for Message {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Message::A => "msg_a (the evaluator's base-OT point)",
            Message::B => "msg_b (the garbler's base-OT points)",
            Message::U => "msg_u (the evaluator's IKNP matrix)",
            Message::Y => "msg_y (the garbler's masked label pairs)",
            Message::D => "msg_d (the garbler's label corrections)",
        })
    }
}

/// What went wrong in an OT step: a malformed message, a different number of OTs, or a
/// message nothing waits for — the peer's fault, or a driver that passed the wrong
/// message (a failed step leaves the state unchanged).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A message has the wrong length (a truncated or oversized message, or the parties
    /// disagree on the number of OTs).
    #[error("OT {msg} has {got} bytes, expected {expected}")]
    Length {
        /// Which message.
        msg: Message,
        /// The length the protocol requires.
        expected: usize,
        /// The length received.
        got: usize,
    },
    /// A 32-byte string is not the canonical encoding of a Ristretto255 point.
    #[error("point {index} of OT {msg} is not a valid Ristretto255 encoding")]
    InvalidPoint {
        /// Which message.
        msg: Message,
        /// The point's position in the message, from 0.
        index: usize,
    },
    /// A point is the identity element, which would make keys independent of a secret.
    #[error("point {index} of OT {msg} is the identity element")]
    IdentityPoint {
        /// Which message.
        msg: Message,
        /// The point's position in the message, from 0.
        index: usize,
    },
    /// A message arrived that no step is waiting for: a msg_y when every chunk of OTs has
    /// already been received (the peer sent more chunks than the evaluator extended).
    #[error("OT {msg} arrived, but no chunk of OTs is waiting for one")]
    NothingPending {
        /// Which message.
        msg: Message,
    },
}
