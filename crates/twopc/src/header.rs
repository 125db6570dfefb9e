//! The session header: the first message each party sends, so that two parties with
//! different circuits or settings stop with a clear error before any input is used.
//!
//! Wire format (136 bytes, integers big-endian):
//!
//! | bytes | field |
//! |-------|-------|
//! | 0..8   | magic `TPUT2PC\0` |
//! | 8..10  | protocol version ([`PROTOCOL_VERSION`]) |
//! | 10     | role of the sender: 0 garbler, 1 evaluator |
//! | 11     | garbling scheme: 0 `prf`, 1 `circular`, 2 `ideal` |
//! | 12     | who learns the output: 0 both, 1 the evaluator only |
//! | 13     | the evaluator's: 1 if it opens the session for further computations (message 11), else 0; always 0 from the garbler |
//! | 14     | how the tables come ([`TableOrder`]): 0 in the circuit's order, 1 as coarse-grained frames (`--parallel cgp`), 2 as frames if the peer's byte is not 0, else in order (`--parallel auto`) |
//! | 15     | the lanes the sender can take for the frames (`transputation_transport::Channel::open_lanes`): 0 none, else 2 to 255; 0 with byte 14 at 0 |
//! | 16..48 | SHA-256 digest of the circuit ([`Circuit::digest`]) |
//! | 48..56 | the garbler's input bits |
//! | 56..64 | the evaluator's input bits |
//! | 64..72 | output bits |
//! | 72..88 | from the garbler: the public key of the garbling scheme's hash for this session (`ideal`'s TCCR hash; the others ignore it); zero from the evaluator |
//! | 88..104 | from the garbler: the public key of the OT extension's hash for this session; zero from the evaluator |
//! | 104..136 | with byte 14 not 0: the digest of the pieces the circuit is cut into (`transputation_garble::coarse::Layout::digest`); else zero |
//!
//! The garbler draws both keys at random for each session, so that no work against the
//! hashes' AES permutations done before a session can serve it (docs/garbling.md §5.3).

use std::fmt;

use transputation_circuits::{Circuit, Party};
use transputation_core::Block;
use transputation_garble::Scheme;
use transputation_transport::secure::is_protected_hello;
use transputation_transport::Error as TransportError;

use crate::error::Error;
use crate::options::OutputMode;

/// The version of the message flow in the crate documentation; bumped on any change
/// (version 7: the tables may come as coarse-grained frames, header byte 14; version 8:
/// a party may leave that to the peer, and the pieces' digest has a field of its own;
/// version 9: the frames may travel on lanes, header byte 15).
pub const PROTOCOL_VERSION: u16 = 9;

/// The oldest protocol version whose message flow this one keeps: the same messages in the
/// same flights, so the same waits, and the same bytes but for the header's (version 6
/// added the session's hash keys to it, 32 bytes; version 7 changed nothing for tables in
/// the circuit's order; version 8 added the pieces' digest, 32 bytes; version 9 the lanes,
/// which tables in order do not use). Runs of a version from this one on
/// describe this protocol's traffic, as `transputation select --calibrate` reads them.
pub const SAME_FLOW_SINCE: u16 = 5;

/// Bytes of an encoded header.
pub const HEADER_LEN: usize = 136;

/// The most bytes a peer's header is read as, whatever its version (72 in versions 1 to
/// 5): enough to tell its version before its length is judged.
pub(crate) const HEADER_LEN_OF_ANY_VERSION: usize = 1024;

const MAGIC: [u8; 8] = *b"TPUT2PC\0";

/// The error of receiving the peer's session header, the first message of a session, made
/// to name a difference in protection where it shows: a protected peer's first bytes are
/// its handshake hello, read as an absurd message length; a protected peer that refuses
/// this unprotected one closes the connection before sending anything, seen while
/// receiving (`received`: bytes received so far). A party with protection sees the
/// difference in its handshake.
pub(crate) fn name_protection_mismatch(e: Error, received: u64) -> Error {
    match e {
        Error::Transport(TransportError::MessageTooLarge { len, .. })
            if is_protected_hello(&len.to_be_bytes()) =>
        {
            Error::PeerProtected
        }
        // Receiving, not sending: a send that fails first may mean only that our bytes found
        // the peer gone, not that it sent none.
        Error::Transport(TransportError::Closed {
            during: "receiving",
        }) if received == 0 => Error::RefusedUnprotected,
        e => e,
    }
}

/// What one party states about the session it is about to run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SessionHeader {
    /// The protocol version.
    pub version: u16,
    /// The sender's role.
    pub role: Party,
    /// The garbling scheme.
    pub scheme: Scheme,
    /// Who learns the output.
    pub output: OutputMode,
    /// Whether the evaluator opens the session for further computations after the first
    /// ([`crate::messages::NextComputation`]); the garbler's header always says no.
    pub open: bool,
    /// How the sender's tables may come: in the circuit's order or as the frames of
    /// coarse-grained parallelism ([`crate::Coarse`]); [`SessionHeader::frames_with`] says
    /// what two headers agree on.
    pub tables: TableOrder,
    /// The circuit's digest.
    pub digest: [u8; 32],
    /// Unless `tables` is [`TableOrder::InOrder`]: the digest of the pieces the circuit is
    /// cut into (`transputation_garble::coarse::Layout::digest`), which both parties must
    /// share to use frames; else zero.
    pub layout_digest: [u8; 32],
    /// Unless `tables` is [`TableOrder::InOrder`]: the lanes (channels beside the
    /// session's first, `transputation_transport::Channel::open_lanes`) the sender can
    /// take the frames on, 0 or 2 to 255; [`SessionHeader::lanes_with`] says what two
    /// headers agree on.
    pub lanes: u8,
    /// Input bits of the garbler.
    pub garbler_bits: u64,
    /// Input bits of the evaluator.
    pub evaluator_bits: u64,
    /// Output bits.
    pub output_bits: u64,
    /// The garbler's: the public key of the garbling scheme's hash for this session
    /// (`transputation_garble::GarbleStart::hash_key`); zero from the evaluator.
    pub garbling_key: Block,
    /// The garbler's: the public key of the OT extension's hash for this session
    /// (`transputation_ot::SenderSetup::with_hash_key`); zero from the evaluator.
    pub ot_key: Block,
}

impl SessionHeader {
    /// The header `role` sends for this circuit and these settings.
    pub fn new(role: Party, circuit: &Circuit, scheme: Scheme, output: OutputMode) -> Self {
        SessionHeader {
            version: PROTOCOL_VERSION,
            role,
            scheme,
            output,
            open: false,
            tables: TableOrder::InOrder,
            digest: circuit.digest(),
            layout_digest: [0; 32],
            lanes: 0,
            garbler_bits: circuit.party_input_bits(Party::Garbler) as u64,
            evaluator_bits: circuit.party_input_bits(Party::Evaluator) as u64,
            output_bits: circuit.n_outputs() as u64,
            garbling_key: Block::ZERO,
            ot_key: Block::ZERO,
        }
    }

    /// The header `role` sends for this circuit under `options`: as [`SessionHeader::new`],
    /// and under coarse-grained parallelism its table order and the digest of the pieces
    /// the circuit is cut into.
    pub fn for_options(role: Party, circuit: &Circuit, options: &crate::Options) -> Self {
        let mut h = SessionHeader::new(role, circuit, options.scheme, options.output);
        if let Some(c) = &options.coarse {
            h.tables = if c.if_peer_willing {
                TableOrder::FramesIfPeer
            } else {
                TableOrder::Frames
            };
            h.layout_digest = c.layout.digest();
        }
        h
    }

    /// Whether a session between this header's party and the peer's (`theirs`, checked
    /// by [`SessionHeader::check_peer`]) has its tables come as frames: when neither says
    /// in order, and, where neither requires frames, both cut the circuit alike (two
    /// willing parties with other cuts keep the circuit's order; one that requires frames
    /// is refused another cut by `check_peer`).
    pub fn frames_with(&self, theirs: &SessionHeader) -> bool {
        use TableOrder::{FramesIfPeer, InOrder};
        match (self.tables, theirs.tables) {
            (InOrder, _) | (_, InOrder) => false,
            (FramesIfPeer, FramesIfPeer) => self.layout_digest == theirs.layout_digest,
            _ => true,
        }
    }

    /// The lanes a session between this header's party and the peer's takes the frames on:
    /// the fewer of the two offers where the tables come as frames and both offer lanes,
    /// else 0 (the frames on the session's channel).
    pub fn lanes_with(&self, theirs: &SessionHeader) -> usize {
        if !self.frames_with(theirs) || self.lanes < 2 || theirs.lanes < 2 {
            return 0;
        }
        usize::from(self.lanes.min(theirs.lanes))
    }

    /// The wire form.
    pub fn encode(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..8].copy_from_slice(&MAGIC);
        b[8..10].copy_from_slice(&self.version.to_be_bytes());
        b[10] = match self.role {
            Party::Garbler => 0,
            Party::Evaluator => 1,
        };
        b[11] = match self.scheme {
            Scheme::Prf => 0,
            Scheme::Circular => 1,
            Scheme::Ideal => 2,
        };
        b[12] = match self.output {
            OutputMode::Both => 0,
            OutputMode::Evaluator => 1,
        };
        b[13] = u8::from(self.open);
        b[14] = self.tables as u8;
        b[15] = self.lanes;
        b[16..48].copy_from_slice(&self.digest);
        b[48..56].copy_from_slice(&self.garbler_bits.to_be_bytes());
        b[56..64].copy_from_slice(&self.evaluator_bits.to_be_bytes());
        b[64..72].copy_from_slice(&self.output_bits.to_be_bytes());
        b[72..88].copy_from_slice(&self.garbling_key.to_bytes());
        b[88..104].copy_from_slice(&self.ot_key.to_bytes());
        b[104..136].copy_from_slice(&self.layout_digest);
        b
    }

    /// Parses a peer's header. Anything but a well-formed header of a version this build
    /// speaks is an error.
    pub fn decode(b: &[u8]) -> Result<SessionHeader, Error> {
        let bad = |what: String| Error::Malformed {
            what: "the session header",
            problem: what,
        };
        if b.len() < 10 {
            return Err(bad(format!("{} bytes instead of {HEADER_LEN}", b.len())));
        }
        if b[..8] != MAGIC {
            return Err(bad(
                "it does not start with the magic bytes TPUT2PC: the peer is not a \
                 Transputation party (or speaks another protocol)"
                    .to_string(),
            ));
        }
        let version = u16::from_be_bytes([b[8], b[9]]);
        if version != PROTOCOL_VERSION {
            return Err(Error::Mismatch {
                field: "protocol version",
                ours: PROTOCOL_VERSION.to_string(),
                theirs: version.to_string(),
            });
        }
        if b.len() != HEADER_LEN {
            return Err(bad(format!("{} bytes instead of {HEADER_LEN}", b.len())));
        }
        let role = match b[10] {
            0 => Party::Garbler,
            1 => Party::Evaluator,
            r => return Err(bad(format!("unknown role {r}"))),
        };
        let scheme = match b[11] {
            0 => Scheme::Prf,
            1 => Scheme::Circular,
            2 => Scheme::Ideal,
            s => return Err(bad(format!("unknown garbling scheme {s}"))),
        };
        let output = match b[12] {
            0 => OutputMode::Both,
            1 => OutputMode::Evaluator,
            o => return Err(bad(format!("unknown output mode {o}"))),
        };
        let open = match (b[13], role) {
            (0, _) => false,
            (1, Party::Evaluator) => true,
            (o, _) => {
                return Err(bad(format!(
                    "its open-session byte is {o} from the {role} (0, or 1 from the evaluator)"
                )))
            }
        };
        let tables = match b[14] {
            0 => TableOrder::InOrder,
            1 => TableOrder::Frames,
            2 => TableOrder::FramesIfPeer,
            t => return Err(bad(format!("unknown order of the tables {t}"))),
        };
        let layout_digest: [u8; 32] = b[104..136].try_into().expect("32 bytes");
        if tables == TableOrder::InOrder && layout_digest != [0; 32] {
            return Err(bad(
                "it carries a digest of pieces with its tables in the circuit's order".to_string(),
            ));
        }
        let lanes = b[15];
        if lanes == 1 || (lanes != 0 && tables == TableOrder::InOrder) {
            return Err(bad(format!(
                "it offers {lanes} lanes{}",
                if lanes == 1 {
                    " (0, or 2 and more)"
                } else {
                    " with its tables in the circuit's order"
                }
            )));
        }
        let u64_at = |i: usize| u64::from_be_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        let (garbling_key, ot_key) = (Block::read(&b[72..88]), Block::read(&b[88..104]));
        if role == Party::Evaluator && (garbling_key != Block::ZERO || ot_key != Block::ZERO) {
            return Err(bad(
                "it carries hash keys from the evaluator (only the garbler draws them)".to_string(),
            ));
        }
        Ok(SessionHeader {
            version,
            role,
            scheme,
            output,
            open,
            tables,
            digest: b[16..48].try_into().expect("32 bytes"),
            layout_digest,
            lanes,
            garbler_bits: u64_at(48),
            evaluator_bits: u64_at(56),
            output_bits: u64_at(64),
            garbling_key,
            ot_key,
        })
    }

    /// Checks that `theirs`, the peer's header, describes the same session as `self` from
    /// the other side; the error names the first field that differs.
    pub fn check_peer(&self, theirs: &SessionHeader) -> Result<(), Error> {
        let mismatch = |field, ours: String, theirs: String| {
            Err(Error::Mismatch {
                field,
                ours,
                theirs,
            })
        };
        if theirs.role == self.role {
            return mismatch(
                "role (both parties are the same party)",
                self.role.to_string(),
                theirs.role.to_string(),
            );
        }
        if theirs.scheme != self.scheme {
            return mismatch(
                "garbling scheme",
                self.scheme.to_string(),
                theirs.scheme.to_string(),
            );
        }
        use TableOrder::{Frames, InOrder};
        if let (Frames, InOrder) | (InOrder, Frames) = (self.tables, theirs.tables) {
            return mismatch(
                "coarse-grained parallelism (--parallel cgp)",
                self.tables.to_string(),
                theirs.tables.to_string(),
            );
        }
        if theirs.digest != self.digest {
            return mismatch(
                "circuit (SHA-256 of the circuit)",
                hex(&self.digest),
                hex(&theirs.digest),
            );
        }
        if self.frames_with(theirs) && theirs.layout_digest != self.layout_digest {
            return mismatch(
                "pieces of the circuit's parallel regions (SHA-256 of the cut)",
                hex(&self.layout_digest),
                hex(&theirs.layout_digest),
            );
        }
        for (field, a, b) in [
            ("garbler input bits", self.garbler_bits, theirs.garbler_bits),
            (
                "evaluator input bits",
                self.evaluator_bits,
                theirs.evaluator_bits,
            ),
            ("output bits", self.output_bits, theirs.output_bits),
        ] {
            if a != b {
                return mismatch(field, a.to_string(), b.to_string());
            }
        }
        if theirs.output != self.output {
            return mismatch(
                "who learns the output (--output)",
                self.output.to_string(),
                theirs.output.to_string(),
            );
        }
        Ok(())
    }
}

/// How a party's garbled tables may come (header byte 14).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TableOrder {
    /// In the circuit's order, as batches (`--parallel none`, `fgp`, or `auto` without
    /// pieces to offer).
    InOrder = 0,
    /// As the frames of coarse-grained parallelism (`--parallel cgp`): the peer must not
    /// say [`TableOrder::InOrder`].
    Frames = 1,
    /// As frames if the peer's header does not say [`TableOrder::InOrder`], else in order
    /// (`--parallel auto` with pieces to offer): the party is ready for either.
    FramesIfPeer = 2,
}

impl fmt::Display for TableOrder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TableOrder::InOrder => "tables in the circuit's order",
            TableOrder::Frames => "cgp",
            TableOrder::FramesIfPeer => "cgp if the peer takes it (auto)",
        })
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use transputation_circuits::library;

    fn pair() -> (SessionHeader, SessionHeader) {
        let c = library::load("millionaires").unwrap();
        (
            SessionHeader::new(Party::Garbler, &c, Scheme::Ideal, OutputMode::Both),
            SessionHeader::new(Party::Evaluator, &c, Scheme::Ideal, OutputMode::Both),
        )
    }

    #[test]
    fn headers_round_trip_and_agree() {
        let (g, e) = pair();
        assert_eq!(SessionHeader::decode(&g.encode()).unwrap(), g);
        assert_eq!(SessionHeader::decode(&e.encode()).unwrap(), e);
        g.check_peer(&e).unwrap();
        e.check_peer(&g).unwrap();
    }

    #[test]
    fn a_peer_of_an_older_version_is_named_by_its_version_not_its_length() {
        let (g, _) = pair();
        // A version-5 header: 72 bytes.
        let mut old = g.encode()[..72].to_vec();
        old[8..10].copy_from_slice(&5u16.to_be_bytes());
        match SessionHeader::decode(&old) {
            Err(Error::Mismatch {
                field: "protocol version",
                ours,
                theirs,
            }) => assert_eq!((ours, theirs.as_str()), (PROTOCOL_VERSION.to_string(), "5")),
            other => panic!("{other:?}"),
        }
        // This version's header cut short or padded is malformed.
        for len in [9, 72, 104, 135, 137] {
            let mut b = g.encode().to_vec();
            b.resize(len, 0);
            assert!(
                matches!(SessionHeader::decode(&b), Err(Error::Malformed { .. })),
                "{len}"
            );
        }
    }

    #[test]
    fn the_garblers_hash_keys_cross_and_an_evaluator_may_not_send_any() {
        let (g, e) = pair();
        let g = SessionHeader {
            garbling_key: Block(0x1111_2222_3333_4444_5555_6666_7777_8888),
            ot_key: Block(0x9999_aaaa_bbbb_cccc_dddd_eeee_ffff_0001),
            ..g
        };
        let bytes = g.encode();
        assert_eq!(bytes[72..88], g.garbling_key.to_bytes());
        assert_eq!(bytes[88..104], g.ot_key.to_bytes());
        assert_eq!(SessionHeader::decode(&bytes).unwrap(), g);
        // Keys are not compared: each session's garbler draws its own.
        e.check_peer(&g).unwrap();
        let mut from_evaluator = e.encode();
        from_evaluator[100] = 1;
        match SessionHeader::decode(&from_evaluator) {
            Err(Error::Malformed { problem, .. }) => {
                assert!(
                    problem.contains("hash keys from the evaluator"),
                    "{problem}"
                )
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn each_difference_is_named() {
        let (g, e) = pair();
        let field = |theirs: SessionHeader| match g.check_peer(&theirs) {
            Err(Error::Mismatch { field, .. }) => field,
            other => panic!("{other:?}"),
        };
        assert!(field(g.clone()).starts_with("role"));
        assert_eq!(
            field(SessionHeader {
                scheme: Scheme::Prf,
                ..e.clone()
            }),
            "garbling scheme"
        );
        let other = library::load("aes128").unwrap();
        let aes = SessionHeader::new(Party::Evaluator, &other, Scheme::Ideal, OutputMode::Both);
        assert!(field(aes).starts_with("circuit"));
        assert_eq!(
            field(SessionHeader {
                output: OutputMode::Evaluator,
                ..e.clone()
            }),
            "who learns the output (--output)"
        );
        assert_eq!(
            field(SessionHeader {
                output_bits: 3,
                ..e
            }),
            "output bits"
        );
    }

    #[test]
    fn garbage_is_refused_never_parsed() {
        let (g, _) = pair();
        let good = g.encode();
        assert!(SessionHeader::decode(&good[..71]).is_err());
        assert!(SessionHeader::decode(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").is_err());
        for (i, v) in [(10, 2u8), (11, 3), (12, 2), (14, 3), (15, 1), (120, 1)] {
            let mut b = good;
            b[i] = v;
            assert!(
                matches!(SessionHeader::decode(&b), Err(Error::Malformed { .. })),
                "{i}"
            );
        }
        let mut b = good;
        b[9] = 99;
        assert!(matches!(
            SessionHeader::decode(&b),
            Err(Error::Mismatch {
                field: "protocol version",
                ..
            })
        ));
    }

    #[test]
    fn table_orders_resolve_alike_on_both_sides_and_a_required_one_is_kept() {
        use TableOrder::{Frames, FramesIfPeer, InOrder};
        let (g, e) = pair();
        let with = |h: &SessionHeader, tables, cut: u8| SessionHeader {
            tables,
            layout_digest: if tables == InOrder {
                [0; 32]
            } else {
                [cut; 32]
            },
            ..h.clone()
        };
        // (garbler's, evaluator's) → frames, or the mismatch's field.
        let cases = [
            (InOrder, InOrder, Ok(false)),
            (InOrder, FramesIfPeer, Ok(false)),
            (FramesIfPeer, InOrder, Ok(false)),
            (FramesIfPeer, FramesIfPeer, Ok(true)),
            (Frames, FramesIfPeer, Ok(true)),
            (FramesIfPeer, Frames, Ok(true)),
            (Frames, Frames, Ok(true)),
            (Frames, InOrder, Err(())),
            (InOrder, Frames, Err(())),
        ];
        for (ours, theirs, want) in cases {
            let (g, e) = (with(&g, ours, 7), with(&e, theirs, 7));
            for (a, b) in [(&g, &e), (&e, &g)] {
                let b = SessionHeader::decode(&b.encode()).unwrap();
                match (a.check_peer(&b), want) {
                    (Ok(()), Ok(frames)) => {
                        assert_eq!(a.frames_with(&b), frames, "{ours:?} {theirs:?}")
                    }
                    (Err(Error::Mismatch { field, .. }), Err(())) => {
                        assert!(field.starts_with("coarse-grained"), "{field}")
                    }
                    (got, _) => panic!("{ours:?} {theirs:?}: {got:?}"),
                }
            }
            // Another cut is refused where a party requires frames; two willing ones
            // keep the circuit's order.
            let other = with(&e, theirs, 8);
            let required = ours == Frames || theirs == Frames;
            match (g.check_peer(&other), want) {
                (Err(Error::Mismatch { field, .. }), Ok(true)) if required => {
                    assert!(field.starts_with("pieces"), "{field}")
                }
                (Ok(()), Ok(true)) if !required => assert!(!g.frames_with(&other)),
                (Ok(()), Ok(false)) | (Err(_), Err(())) => {}
                (got, _) => panic!("{ours:?} {theirs:?} cut 8: {got:?}"),
            }
        }
    }

    #[test]
    fn lanes_are_the_fewer_offered_where_frames_come_and_both_offer() {
        use TableOrder::{Frames, FramesIfPeer, InOrder};
        let (g, e) = pair();
        let with = |h: &SessionHeader, tables, lanes| SessionHeader {
            tables,
            lanes,
            layout_digest: if tables == InOrder { [0; 32] } else { [7; 32] },
            ..h.clone()
        };
        for (gt, gl, et, el, want) in [
            (Frames, 4, Frames, 2, 2),
            (Frames, 8, FramesIfPeer, 8, 8),
            (Frames, 0, Frames, 8, 0),
            (Frames, 255, Frames, 0, 0),
            (FramesIfPeer, 4, InOrder, 0, 0),
        ] {
            let (g, e) = (with(&g, gt, gl), with(&e, et, el));
            let (g2, e2) = (
                SessionHeader::decode(&g.encode()).unwrap(),
                SessionHeader::decode(&e.encode()).unwrap(),
            );
            assert_eq!((g2.lanes, e2.lanes), (gl, el));
            assert_eq!(g.lanes_with(&e2), want, "{gt:?} {gl} {et:?} {el}");
            assert_eq!(e.lanes_with(&g2), want, "{gt:?} {gl} {et:?} {el}");
        }
        // One lane, or lanes with the tables in order, are malformed.
        for (tables, lanes) in [(Frames, 1), (InOrder, 2)] {
            let b = with(&g, tables, lanes).encode();
            match SessionHeader::decode(&b) {
                Err(Error::Malformed { problem, .. }) => {
                    assert!(problem.contains("lanes"), "{problem}")
                }
                other => panic!("{tables:?} {lanes}: {other:?}"),
            }
        }
    }

    #[test]
    fn a_difference_in_protection_is_named() {
        let closed = |during| Error::Transport(TransportError::Closed { during });
        let hello = u64::from_be_bytes(*b"TPSC\x04\x01\0\0");
        let too_large = |len| Error::Transport(TransportError::MessageTooLarge { len, max: 1 });
        assert!(matches!(
            name_protection_mismatch(too_large(hello), 0),
            Error::PeerProtected
        ));
        assert!(matches!(
            name_protection_mismatch(too_large(1 << 40), 0),
            Error::Transport(_)
        ));
        assert!(matches!(
            name_protection_mismatch(closed("receiving"), 0),
            Error::RefusedUnprotected
        ));
        // Something arrived, or our send found the peer gone: just closed.
        assert!(matches!(
            name_protection_mismatch(closed("receiving"), 8),
            Error::Transport(_)
        ));
        assert!(matches!(
            name_protection_mismatch(closed("sending"), 0),
            Error::Transport(_)
        ));
    }
}
