//! The messages of the session, one type each (the table in the crate docs): its wire form,
//! the lengths a well-formed one may have, and its decoding, in one place.
//!
//! Every length a receiver accepts follows from what it already knows before the message
//! arrives (the circuit, the scheme, the output mode, the OT chunk, the table bytes still
//! due): the [`Message::Context`]. The session reads a frame's announced length, checks it
//! against [`Message::length`] before it reads or allocates anything, and then hands the
//! bytes to [`Message::decode`], which checks the length again (so that it is safe on its
//! own) and everything else the message must satisfy. Messages that carry bulk data borrow
//! the bytes they were received into, so that decoding copies nothing.
//!
//! A new message is a type here with a [`Message`] implementation, a row in the crate
//! docs' table, and a step in each party's driver that sends or receives it.

use std::borrow::Cow;
use std::fmt;

use transputation_circuits::{Circuit, Party, Stats};
use transputation_core::Block;
use transputation_garble::{coarse, Scheme};

use crate::error::Error;
use crate::header::{SessionHeader, HEADER_LEN_OF_ANY_VERSION};
use crate::options::OutputMode;
use crate::report::Part;

/// OTs per chunk of the OT extension ([`OtExtension`] and [`OtReply`]): small enough that
/// the garbler starts on the ciphertexts while the evaluator still extends, large enough
/// that per-message costs vanish.
pub const OT_CHUNK: usize = 8192;

/// The OTs of each chunk ([`OtExtension`] and [`OtReply`]), as ranges of the evaluator's
/// `m` input bits.
pub fn ot_chunks(m: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..m)
        .step_by(OT_CHUNK)
        .map(move |start| start..(start + OT_CHUNK).min(m))
}

/// How the evaluator's input labels cross in a computation, which fixes what message 7
/// ([`OtReply`]) carries. Both parties derive it from the circuit and the scheme, which
/// their headers agree on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LabelTransfer {
    /// Ordinary OT of both labels, which the garbler chose before the session: 32 bytes
    /// per OT (`msg_y`). The schemes without a global offset (`prf`).
    Ordinary,
    /// Correlated OT of the 0-labels the garbler chose before the session: 16 bytes per
    /// OT (`msg_d`, `d_j = x_j^0 ⊕ q_j`). The garbler garbles ahead while the OT runs,
    /// because the labels are fixed before it. A scheme with a global offset takes it for
    /// a session's first computation when those 16 bytes per input bit are at most 1 % of
    /// the tables: there garbling ahead is worth more than the bytes (`aes128`, SHA-256).
    Chosen,
    /// Labels drawn by the OT (`transputation-ot`, "Zero labels drawn by the OT"): no
    /// message 7, and the garbler garbles once it has read every matrix. A scheme with a
    /// global offset takes it where the corrections would cost more than 1 % of the tables
    /// (many input bits: the MinCut-size circuit's 250,000 would add 4 MB to 32 MB), and
    /// for the further computations of an open session.
    Drawn,
}

impl LabelTransfer {
    /// The transfer of a session's first computation of `circuit` under `scheme`.
    pub fn first(scheme: Scheme, circuit: &Circuit) -> Self {
        let n_e = circuit.party_input_bits(Party::Evaluator);
        LabelTransfer::first_of(scheme, &Stats::counts(circuit), n_e)
    }

    /// [`LabelTransfer::first`] from the circuit's [`Stats`] and the evaluator's input bits
    /// `n_e`, for a caller that has them.
    pub fn first_of(scheme: Scheme, stats: &Stats, n_e: usize) -> Self {
        if !scheme.has_global_offset() {
            return LabelTransfer::Ordinary;
        }
        let tables = scheme.table_bytes(stats) + scheme.mask_bytes(stats);
        let corrections = 16 * n_e as u64;
        if corrections.saturating_mul(100) <= tables {
            LabelTransfer::Chosen
        } else {
            LabelTransfer::Drawn
        }
    }

    /// The transfer of a further computation of an open session under `scheme` (nothing
    /// is garbled ahead there).
    pub fn further(scheme: Scheme) -> Self {
        if scheme.has_global_offset() {
            LabelTransfer::Drawn
        } else {
            LabelTransfer::Ordinary
        }
    }

    /// Bytes of the [`OtReply`] for a chunk of `k` OTs. Summed over the chunks, with `k` the
    /// evaluator's input bits, it is what the garbler sends for the OT beyond the
    /// [`BaseOtAnswer`].
    pub fn reply_len(self, k: usize) -> usize {
        match self {
            LabelTransfer::Ordinary => transputation_ot::msg_y_len(k),
            LabelTransfer::Chosen => transputation_ot::msg_d_len(k),
            LabelTransfer::Drawn => 0,
        }
    }
}

/// The payload lengths a message may have, known before it arrives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Length {
    /// Exactly this many bytes.
    Exact(usize),
    /// Any length up to this many bytes.
    AtMost(usize),
}

impl Length {
    /// Whether a payload of `len` bytes fits.
    pub fn admits(self, len: u64) -> bool {
        match self {
            Length::Exact(n) => len == n as u64,
            Length::AtMost(n) => len <= n as u64,
        }
    }
}

impl fmt::Display for Length {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Length::Exact(n) => write!(f, "exactly {n} bytes"),
            Length::AtMost(n) => write!(f, "at most {n} bytes"),
        }
    }
}

/// One message of the session: what a receiver knows of it in advance, its wire form, and
/// how a received payload becomes the message. `'a` is the lifetime of the received bytes,
/// which bulk messages borrow.
pub trait Message<'a>: Sized {
    /// What the receiver knows before the message arrives, from which its length follows.
    type Context: Copy;
    /// The message's name in errors.
    const NAME: &'static str;
    /// Where its bytes count in a [`Report`](crate::Report).
    const PART: Part;
    /// The payload lengths a well-formed message may have.
    fn length(cx: Self::Context) -> Length;
    /// The payload, as sent (the frame's length prefix is the channel's).
    fn encode(&self) -> Cow<'_, [u8]>;
    /// The message in `bytes`, a received payload; anything malformed is an error.
    fn decode(bytes: &'a [u8], cx: Self::Context) -> Result<Self, Error>;
}

/// Checks a payload length announced by the peer against what `M` may have, before any of
/// its bytes are read: the error names the message and both lengths.
pub fn check_length<'a, M: Message<'a>>(len: u64, cx: M::Context) -> Result<(), Error> {
    let want = M::length(cx);
    if !want.admits(len) {
        return Err(Error::Malformed {
            what: M::NAME,
            problem: format!("{len} bytes where {want} belong"),
        });
    }
    Ok(())
}

/// Messages 1 (E → G) and 3 (G → E): the session header, which each party checks against
/// its own.
impl<'a> Message<'a> for SessionHeader {
    type Context = ();
    const NAME: &'static str = "the session header";
    const PART: Part = Part::Header;
    fn length((): ()) -> Length {
        // A header of another protocol version may have another length: it is read whole
        // (up to a bound) so that the error names the versions, not a length.
        Length::AtMost(HEADER_LEN_OF_ANY_VERSION)
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Owned(SessionHeader::encode(self).to_vec())
    }
    fn decode(bytes: &'a [u8], (): ()) -> Result<Self, Error> {
        SessionHeader::decode(bytes)
    }
}

/// Checks the length of a payload that `M` received for a fixed `len`, for the decoders of
/// byte messages whose content the OT or the evaluator checks.
fn exact<'a, M: Message<'a>>(bytes: &'a [u8], cx: M::Context) -> Result<&'a [u8], Error> {
    check_length::<M>(bytes.len() as u64, cx)?;
    Ok(bytes)
}

/// Message 2 (E → G): the evaluator's base-OT point (its first OT message, `msg_a` of
/// `transputation-ot`). The garbler's OT checks the point itself.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseOtPoint<'a>(pub &'a [u8]);

impl<'a> Message<'a> for BaseOtPoint<'a> {
    type Context = ();
    const NAME: &'static str = "base-OT point";
    const PART: Part = Part::Ot;
    fn length((): ()) -> Length {
        Length::Exact(transputation_ot::MSG_A_LEN)
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.0)
    }
    fn decode(bytes: &'a [u8], cx: ()) -> Result<Self, Error> {
        exact::<Self>(bytes, cx).map(BaseOtPoint)
    }
}

/// Message 4 (G → E): the garbler's answer to the base OT (`msg_b`: the base-OT
/// receiver's points). The evaluator's OT checks the points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BaseOtAnswer<'a>(pub &'a [u8]);

impl<'a> Message<'a> for BaseOtAnswer<'a> {
    type Context = ();
    const NAME: &'static str = "base-OT answer";
    const PART: Part = Part::Ot;
    fn length((): ()) -> Length {
        Length::Exact(transputation_ot::MSG_B_LEN)
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.0)
    }
    fn decode(bytes: &'a [u8], cx: ()) -> Result<Self, Error> {
        exact::<Self>(bytes, cx).map(BaseOtAnswer)
    }
}

/// Message 5 (G → E): the seed of the garbler's input labels. Both parties expand it into
/// one block per garbler input bit, in wire order (`transputation_core::prg::Prg`); the
/// evaluator's label of the garbler's input bit `i` is block `i`, and the garbler chose its
/// labels so that this label encodes its bit (see "Security" in the crate docs).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LabelSeed(pub Block);

impl<'a> Message<'a> for LabelSeed {
    type Context = ();
    const NAME: &'static str = "seed of the garbler's input labels";
    const PART: Part = Part::Labels;
    fn length((): ()) -> Length {
        Length::Exact(16)
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.0.to_bytes().to_vec())
    }
    fn decode(bytes: &'a [u8], cx: ()) -> Result<Self, Error> {
        exact::<Self>(bytes, cx).map(|b| LabelSeed(Block::read(b)))
    }
}

/// Message 6 (E → G): one chunk's OT extension matrix (`msg_u`), one message per chunk of
/// up to [`OT_CHUNK`] OTs. The context is the chunk's OTs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtExtension<'a>(pub &'a [u8]);

impl<'a> Message<'a> for OtExtension<'a> {
    type Context = usize;
    const NAME: &'static str = "OT extension matrix";
    const PART: Part = Part::Ot;
    fn length(ots: usize) -> Length {
        Length::Exact(transputation_ot::msg_u_len(ots))
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.0)
    }
    fn decode(bytes: &'a [u8], ots: usize) -> Result<Self, Error> {
        exact::<Self>(bytes, ots).map(OtExtension)
    }
}

/// Message 7 (G → E), where the labels do not come from the OT alone
/// ([`LabelTransfer`]): one chunk's ordinary-OT ciphertexts (`msg_y`, 32 bytes per OT)
/// or corrections of chosen 0-labels (`msg_d`, 16), one message per chunk. The context
/// is the transfer and the chunk's OTs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OtReply<'a>(pub &'a [u8]);

impl<'a> Message<'a> for OtReply<'a> {
    type Context = (LabelTransfer, usize);
    const NAME: &'static str = "OT reply";
    const PART: Part = Part::Ot;
    fn length((transfer, ots): (LabelTransfer, usize)) -> Length {
        Length::Exact(transfer.reply_len(ots))
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.0)
    }
    fn decode(bytes: &'a [u8], cx: (LabelTransfer, usize)) -> Result<Self, Error> {
        exact::<Self>(bytes, cx).map(OtReply)
    }
}

/// Message 8 (G → E) under coarse-grained parallelism ([`crate::Coarse`]): one frame of
/// the pieces' tables, `piece: u32 LE, len: u32 LE`, then `len` bytes (1 to
/// `transputation_garble::coarse::FRAME_MAX`, and at most the table bytes still due, the
/// context), as the coarse garbler writes them. The frame's own length must be the
/// message's; which piece it belongs to and whether that piece has `len` bytes left is the
/// coarse evaluator's check.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableFrame<'a>(pub &'a [u8]);

impl TableFrame<'_> {
    /// Its table bytes (the frame less its header).
    pub fn tables(&self) -> usize {
        self.0.len() - coarse::FRAME_HEADER
    }

    /// The piece of its stage it continues, as its header says.
    pub fn piece(&self) -> usize {
        let header = self.0[..coarse::FRAME_HEADER]
            .try_into()
            .expect("a frame holds its header");
        coarse::read_frame_header(header).0 as usize
    }
}

impl<'a> Message<'a> for TableFrame<'a> {
    type Context = usize;
    const NAME: &'static str = "garbled tables (a frame of a piece)";
    const PART: Part = Part::Tables;
    fn length(still_due: usize) -> Length {
        Length::AtMost(coarse::FRAME_HEADER + still_due.min(coarse::FRAME_MAX))
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.0)
    }
    fn decode(bytes: &'a [u8], still_due: usize) -> Result<Self, Error> {
        let bad = |problem: String| Error::Malformed {
            what: Self::NAME,
            problem,
        };
        let Some(header) = bytes.first_chunk::<{ coarse::FRAME_HEADER }>() else {
            return Err(bad(format!(
                "{} bytes, less than a frame header",
                bytes.len()
            )));
        };
        let (piece, len) = coarse::read_frame_header(header);
        let tables = bytes.len() - coarse::FRAME_HEADER;
        if len as usize != tables || tables == 0 {
            return Err(bad(format!(
                "its header gives piece {piece} {len} bytes where the message holds {tables}"
            )));
        }
        if tables > still_due.min(coarse::FRAME_MAX) {
            return Err(bad(format!(
                "{tables} bytes of tables where at most {} belong",
                still_due.min(coarse::FRAME_MAX)
            )));
        }
        Ok(TableFrame(bytes))
    }
}

/// Message 8 (G → E): a batch of garbled tables and masks, as the garbler produced them;
/// the batches together are the scheme's table and mask bytes for the circuit, and a batch
/// may end anywhere (the evaluator keeps an incomplete window for the next). The context
/// is the table bytes still due, which bounds the batch.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableBatch<'a>(pub &'a [u8]);

impl<'a> Message<'a> for TableBatch<'a> {
    type Context = usize;
    const NAME: &'static str = "garbled tables";
    const PART: Part = Part::Tables;
    fn length(still_due: usize) -> Length {
        Length::AtMost(still_due)
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(self.0)
    }
    fn decode(bytes: &'a [u8], still_due: usize) -> Result<Self, Error> {
        exact::<Self>(bytes, still_due).map(TableBatch)
    }
}

/// Bits packed eight to a byte, bit `i` in byte `i / 8` at weight `2^(i % 8)`.
fn pack(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, &b) in bits.iter().enumerate() {
        out[i / 8] |= u8::from(b) << (i % 8);
    }
    out
}

/// The inverse of [`pack`] for `n` bits in exactly `⌈n / 8⌉` bytes; padding bits must be
/// zero.
fn unpack(bytes: &[u8], n: usize, what: &'static str) -> Result<Vec<bool>, Error> {
    if bytes.len() != n.div_ceil(8) {
        return Err(Error::Malformed {
            what,
            problem: format!("{} bytes for {n} bits", bytes.len()),
        });
    }
    let bits: Vec<bool> = (0..n).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1).collect();
    if pack(&bits) != bytes {
        return Err(Error::Malformed {
            what,
            problem: "padding bits are not zero".to_string(),
        });
    }
    Ok(bits)
}

/// Message 9 (G → E): the decoding bits, one per output bit, packed. The context is the
/// circuit's output bits.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DecodingBits(pub Vec<bool>);

impl<'a> Message<'a> for DecodingBits {
    type Context = usize;
    const NAME: &'static str = "decoding bits";
    const PART: Part = Part::Decoding;
    fn length(output_bits: usize) -> Length {
        Length::Exact(output_bits.div_ceil(8))
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Owned(pack(&self.0))
    }
    fn decode(bytes: &'a [u8], output_bits: usize) -> Result<Self, Error> {
        unpack(bytes, output_bits, Self::NAME).map(DecodingBits)
    }
}

/// The context of an [`OutputBits`]: who learns the output, and the circuit's output bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputContext {
    /// Who learns the output.
    pub mode: OutputMode,
    /// The circuit's output bits.
    pub bits: usize,
}

/// Message 10 (E → G): the output bits, packed, under [`OutputMode::Both`]; empty (`None`)
/// under [`OutputMode::Evaluator`], where it still tells the garbler that the session is
/// over.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OutputBits(pub Option<Vec<bool>>);

impl OutputBits {
    /// What the evaluator sends under `mode` once it holds `output`.
    pub fn for_mode(mode: OutputMode, output: &[bool]) -> Self {
        OutputBits(match mode {
            OutputMode::Both => Some(output.to_vec()),
            OutputMode::Evaluator => None,
        })
    }
}

impl<'a> Message<'a> for OutputBits {
    type Context = OutputContext;
    const NAME: &'static str = "output";
    const PART: Part = Part::Output;
    fn length(cx: OutputContext) -> Length {
        Length::Exact(match cx.mode {
            OutputMode::Both => cx.bits.div_ceil(8),
            OutputMode::Evaluator => 0,
        })
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        match &self.0 {
            Some(bits) => Cow::Owned(pack(bits)),
            None => Cow::Borrowed(&[]),
        }
    }
    fn decode(bytes: &'a [u8], cx: OutputContext) -> Result<Self, Error> {
        match cx.mode {
            OutputMode::Both => unpack(bytes, cx.bits, Self::NAME).map(|b| OutputBits(Some(b))),
            OutputMode::Evaluator => exact::<Self>(bytes, cx).map(|_| OutputBits(None)),
        }
    }
}

/// Message 11 (E → G), in a session the evaluator opened ([`SessionHeader::open`]) only:
/// after each computation's output, the number of the computation that follows (2, 3, …;
/// its extension matrices, message 6, come next), or 0, which ends the session. 8 bytes,
/// big-endian. The garbler checks the number against its own count.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct NextComputation(pub u64);

impl NextComputation {
    /// The message that ends the session.
    pub const END: NextComputation = NextComputation(0);
}

impl<'a> Message<'a> for NextComputation {
    type Context = ();
    const NAME: &'static str = "next computation";
    const PART: Part = Part::Header;
    fn length((): ()) -> Length {
        Length::Exact(8)
    }
    fn encode(&self) -> Cow<'_, [u8]> {
        Cow::Owned(self.0.to_be_bytes().to_vec())
    }
    fn decode(bytes: &'a [u8], cx: ()) -> Result<Self, Error> {
        let b = exact::<Self>(bytes, cx)?;
        Ok(NextComputation(u64::from_be_bytes(
            b.try_into().expect("the length was checked"),
        )))
    }
}

#[cfg(test)]
mod tests;
