//! The datagrams of `blast` and their parsing, which takes every byte as hostile.
//!
//! Every datagram starts with a 24-byte header, big-endian like the rest:
//!
//! | bytes | field |
//! |---|---|
//! | 0 | kind: 1 HELLO, 2 WELCOME, 3 DATA, 4 FEEDBACK, 5 CLOSE, 6 TRAIN, 7 RATE, 8 PARITY |
//! | 1 | version, 1 |
//! | 2–3 | flags: DATA bit 0 FIN (the stream ends with this packet), bit 1 ACK_NOW (answer at once), bit 2 MEMBER (a parity packet will cover it); FEEDBACK bit 0 END (the stream's end arrived); HELLO bit 0 NO_TRAIN (send no train) |
//! | 4–7 | CRC-32 (IEEE) of the whole datagram, computed with these four bytes zero |
//! | 8–15 | the session number, chosen at random by the client |
//! | 16–23 | the packet number: DATA packets of a direction are numbered 0, 1, 2, … (a retransmission gets a new number, so an acknowledgement is never ambiguous); FEEDBACK, HELLO and WELCOME count on their own |
//!
//! The bodies:
//!
//! - HELLO, WELCOME: the sender's largest datagram (u16), its receive window (u64, bytes
//!   it buffers ahead of what its reader took).
//! - DATA: the stream offset of the payload (u64), then the payload.
//! - FEEDBACK: what the receiver has of the stream: `delivered` (u64, every byte below
//!   it arrived), `window` (u64, the sender may send bytes below this offset), `highest`
//!   (u64, the end of the highest byte that arrived), `from` (u64, where the list of
//!   holes starts), `largest` (u64, the highest DATA
//!   packet number that arrived, or `u64::MAX` for none), `ack_delay_us` (u32, how long ago
//!   that packet arrived), `received` (u64, DATA packets that arrived, duplicates not
//!   counted), then a count (u16) of holes and the holes, each `start`, `end` (u64 each):
//!   the ranges from `from` up that have not arrived, lowest first, at most
//!   [`MAX_HOLES`]. These are the selective negative acknowledgements. A receiver with
//!   more holes lists them in turns: the next FEEDBACK's list starts where a full one
//!   ended, and after the last hole it starts again at `delivered`.
//! - CLOSE: a reason (u8: 0 the stream is read to its end, 1 the peer gave up), and
//!   up to 200 bytes of text that says why.
//! - TRAIN: the number of packets in the train (u16), then padding to the sender's
//!   largest datagram; the header's packet number is the packet's index in the train.
//!   The server sends one train right behind its first WELCOME, for the client to time,
//!   unless the HELLO said NO_TRAIN (a client that starts at a rate it was given, or that
//!   connects while another measurement of the path runs and must not be disturbed).
//! - RATE: the rate the client timed the train at, bytes per second (u64; 0: it could
//!   not time it).
//! - PARITY: the first packet number of the group it covers (u64), the group's size
//!   (u16), then the XOR of the group's encodings (see [`crate::fec`]). It is numbered
//!   among the DATA packets.
//!
//! The checksum catches damage on the way, not forgery: a forged datagram that passes it
//! can at worst disturb the transfer (protected sessions, which run on top, refuse the
//! bytes). A datagram of another session, an unknown kind or version, or a body that
//! does not add up is refused with [`Malformed`].

use thiserror::Error;

/// Bytes of the header.
pub const HEADER: usize = 24;
/// The protocol version spoken.
pub const VERSION: u8 = 1;
/// Bytes of a DATA packet before its payload.
pub const DATA_OVERHEAD: usize = HEADER + 8;
/// Holes a FEEDBACK lists at most (the lowest ones; more are reported once these are
/// repaired). 64 holes keep a FEEDBACK within 1,100 bytes.
pub const MAX_HOLES: usize = 64;
/// The longest reason a CLOSE carries.
pub const MAX_REASON: usize = 200;

const HELLO: u8 = 1;
const WELCOME: u8 = 2;
const DATA: u8 = 3;
const FEEDBACK: u8 = 4;
const CLOSE: u8 = 5;
const TRAIN: u8 = 6;
const RATE: u8 = 7;
const PARITY: u8 = 8;

const FIN: u16 = 1;
const ACK_NOW: u16 = 2;
const MEMBER: u16 = 4;
const NO_TRAIN: u16 = 1;

/// Why a datagram was refused.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
#[error("a blast datagram {0}")]
pub struct Malformed(pub String);

fn malformed(what: impl Into<String>) -> Malformed {
    Malformed(what.into())
}

/// What a FEEDBACK says.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Feedback {
    /// Every stream byte below this arrived.
    pub delivered: u64,
    /// The sender may send stream bytes below this offset.
    pub window: u64,
    /// The end of the highest stream byte that arrived.
    pub highest: u64,
    /// Where the list of holes starts: every hole from here to `highest` is listed (to
    /// the last listed one if the list is full).
    pub from: u64,
    /// The highest DATA packet number that arrived, if any did.
    pub largest: Option<u64>,
    /// Microseconds between the arrival of `largest` and this FEEDBACK.
    pub ack_delay_us: u32,
    /// DATA packets that arrived (each packet number once).
    pub received: u64,
    /// Stream ranges `[start, end)` below `highest` that have not arrived, lowest first.
    pub holes: Vec<(u64, u64)>,
    /// The stream's end arrived (its FIN).
    pub end: bool,
}

/// A decoded datagram's body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Body<'a> {
    /// The client's opening.
    Hello {
        /// Its largest datagram.
        max_datagram: u16,
        /// Its receive window.
        window: u64,
        /// Whether it asks for the server's train.
        train: bool,
    },
    /// The server's answer.
    Welcome {
        /// Its largest datagram.
        max_datagram: u16,
        /// Its receive window.
        window: u64,
    },
    /// Stream bytes.
    Data {
        /// Where they go in the stream.
        offset: u64,
        /// The stream ends after them.
        fin: bool,
        /// The receiver should send a FEEDBACK at once (the end of what the sender had).
        ack_now: bool,
        /// A parity packet will cover it: the receiver keeps its encoding a while.
        member: bool,
        /// The bytes.
        payload: &'a [u8],
    },
    /// The receiver's state.
    Feedback(Feedback),
    /// A packet of the rate-measuring train (its index is the packet number).
    Train {
        /// The packets in the train.
        count: u16,
        /// Padding bytes after the count.
        padding: usize,
    },
    /// The rate the client timed the train at, bytes per second (0: none).
    Rate(u64),
    /// The parity of a group of DATA packets.
    Parity {
        /// The group's first packet number.
        first: u64,
        /// Its size.
        count: u16,
        /// The XOR of its members' encodings.
        block: &'a [u8],
    },
    /// The end of the session.
    Close {
        /// True if the peer read the stream to its end; false if it gave up.
        done: bool,
        /// Why, in words.
        reason: String,
    },
}

/// A decoded datagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Packet<'a> {
    /// The session number.
    pub session: u64,
    /// The packet number.
    pub number: u64,
    /// The body.
    pub body: Body<'a>,
}

/// Writes `p` into `out` (cleared first) and seals it.
pub fn encode(p: &Packet<'_>, out: &mut Vec<u8>) {
    out.clear();
    let (kind, flags) = match &p.body {
        Body::Hello { train, .. } => (HELLO, if *train { 0 } else { NO_TRAIN }),
        Body::Welcome { .. } => (WELCOME, 0),
        Body::Data {
            fin,
            ack_now,
            member,
            ..
        } => (
            DATA,
            if *fin { FIN } else { 0 }
                | if *ack_now { ACK_NOW } else { 0 }
                | if *member { MEMBER } else { 0 },
        ),
        Body::Feedback(f) => (FEEDBACK, if f.end { FIN } else { 0 }),
        Body::Close { .. } => (CLOSE, 0),
        Body::Train { .. } => (TRAIN, 0),
        Body::Rate(_) => (RATE, 0),
        Body::Parity { .. } => (PARITY, 0),
    };
    out.push(kind);
    out.push(VERSION);
    out.extend_from_slice(&flags.to_be_bytes());
    out.extend_from_slice(&[0; 4]);
    out.extend_from_slice(&p.session.to_be_bytes());
    out.extend_from_slice(&p.number.to_be_bytes());
    match &p.body {
        Body::Hello {
            max_datagram,
            window,
            ..
        }
        | Body::Welcome {
            max_datagram,
            window,
        } => {
            out.extend_from_slice(&max_datagram.to_be_bytes());
            out.extend_from_slice(&window.to_be_bytes());
        }
        Body::Data {
            offset, payload, ..
        } => {
            out.extend_from_slice(&offset.to_be_bytes());
            out.extend_from_slice(payload);
        }
        Body::Feedback(f) => {
            for v in [
                f.delivered,
                f.window,
                f.highest,
                f.from,
                f.largest.unwrap_or(u64::MAX),
            ] {
                out.extend_from_slice(&v.to_be_bytes());
            }
            out.extend_from_slice(&f.ack_delay_us.to_be_bytes());
            out.extend_from_slice(&f.received.to_be_bytes());
            let holes = &f.holes[..f.holes.len().min(MAX_HOLES)];
            out.extend_from_slice(&(holes.len() as u16).to_be_bytes());
            for (start, end) in holes {
                out.extend_from_slice(&start.to_be_bytes());
                out.extend_from_slice(&end.to_be_bytes());
            }
        }
        Body::Train { count, padding } => {
            out.extend_from_slice(&count.to_be_bytes());
            out.resize(out.len() + padding, 0);
        }
        Body::Rate(r) => out.extend_from_slice(&r.to_be_bytes()),
        Body::Parity {
            first,
            count,
            block,
        } => {
            out.extend_from_slice(&first.to_be_bytes());
            out.extend_from_slice(&count.to_be_bytes());
            out.extend_from_slice(block);
        }
        Body::Close { done, reason } => {
            out.push(u8::from(!*done));
            let mut end = reason.len().min(MAX_REASON);
            while !reason.is_char_boundary(end) {
                end -= 1;
            }
            out.extend_from_slice(&reason.as_bytes()[..end]);
        }
    }
    let crc = crc32fast::hash(out);
    out[4..8].copy_from_slice(&crc.to_be_bytes());
}

/// Reads a datagram: its checksum, version, kind and body. Gives the session number
/// without checking it (the caller knows which it expects).
pub fn decode(d: &[u8]) -> Result<Packet<'_>, Malformed> {
    if d.len() < HEADER {
        return Err(malformed(format!(
            "of {} bytes, shorter than its {HEADER}-byte header",
            d.len()
        )));
    }
    let mut h = crc32fast::Hasher::new();
    h.update(&d[..4]);
    h.update(&[0; 4]);
    h.update(&d[8..]);
    if h.finalize().to_be_bytes() != d[4..8] {
        return Err(malformed("with a bad checksum (damaged or not blast)"));
    }
    if d[1] != VERSION {
        return Err(malformed(format!(
            "of version {} (this end speaks {VERSION})",
            d[1]
        )));
    }
    let flags = u16::from_be_bytes([d[2], d[3]]);
    let mut r = Reader {
        rest: &d[HEADER..],
        kind: d[0],
    };
    let session = be64(&d[8..16]);
    let number = be64(&d[16..24]);
    let body = match d[0] {
        HELLO | WELCOME => {
            let max_datagram = r.u16()?;
            let window = r.u64()?;
            r.end()?;
            if d[0] == HELLO {
                Body::Hello {
                    max_datagram,
                    window,
                    train: flags & NO_TRAIN == 0,
                }
            } else {
                Body::Welcome {
                    max_datagram,
                    window,
                }
            }
        }
        DATA => {
            let offset = r.u64()?;
            let payload = r.rest;
            if offset.checked_add(payload.len() as u64).is_none() {
                return Err(malformed("whose payload ends past the largest offset"));
            }
            Body::Data {
                offset,
                fin: flags & FIN != 0,
                ack_now: flags & ACK_NOW != 0,
                member: flags & MEMBER != 0,
                payload,
            }
        }
        FEEDBACK => Body::Feedback(feedback(&mut r, flags & FIN != 0)?),
        CLOSE => {
            let code = r.u8()?;
            if code > 1 {
                return Err(malformed(format!("CLOSE with the unknown reason {code}")));
            }
            if r.rest.len() > MAX_REASON {
                return Err(malformed("CLOSE with a reason longer than 200 bytes"));
            }
            Body::Close {
                done: code == 0,
                reason: String::from_utf8_lossy(r.rest).into_owned(),
            }
        }
        TRAIN => {
            let count = r.u16()?;
            Body::Train {
                count,
                padding: r.rest.len(),
            }
        }
        RATE => {
            let rate = r.u64()?;
            r.end()?;
            Body::Rate(rate)
        }
        PARITY => {
            let first = r.u64()?;
            let count = r.u16()?;
            if count == 0 {
                return Err(malformed("PARITY of an empty group"));
            }
            Body::Parity {
                first,
                count,
                block: r.rest,
            }
        }
        k => return Err(malformed(format!("of the unknown kind {k}"))),
    };
    Ok(Packet {
        session,
        number,
        body,
    })
}

/// A FEEDBACK's body, checked for sense: holes ordered, apart, between `delivered` and
/// `highest`, which is at most `window`.
fn feedback(r: &mut Reader<'_>, end: bool) -> Result<Feedback, Malformed> {
    let delivered = r.u64()?;
    let window = r.u64()?;
    let highest = r.u64()?;
    let from = r.u64()?;
    let largest = Some(r.u64()?).filter(|l| *l != u64::MAX);
    let ack_delay_us = r.u32()?;
    let received = r.u64()?;
    let n = usize::from(r.u16()?);
    if n > MAX_HOLES {
        return Err(malformed(format!(
            "FEEDBACK with {n} holes (at most {MAX_HOLES})"
        )));
    }
    let mut holes = Vec::with_capacity(n);
    if from < delivered || from > highest {
        return Err(malformed(
            "FEEDBACK whose list of holes starts outside what arrived",
        ));
    }
    let mut floor = from;
    for _ in 0..n {
        let (start, end) = (r.u64()?, r.u64()?);
        if start < floor || end <= start || end > highest {
            return Err(malformed(
                "FEEDBACK whose holes are out of order or outside what arrived",
            ));
        }
        holes.push((start, end));
        floor = end;
    }
    r.end()?;
    if delivered > highest || largest.is_none() && (highest > 0 || received > 0) {
        return Err(malformed("FEEDBACK that does not add up"));
    }
    if largest.is_some_and(|l| received > l.saturating_add(1)) {
        return Err(malformed(
            "FEEDBACK counting more packets than were numbered",
        ));
    }
    Ok(Feedback {
        delivered,
        window,
        highest,
        from,
        largest,
        ack_delay_us,
        received,
        holes,
        end,
    })
}

fn be64(b: &[u8]) -> u64 {
    u64::from_be_bytes(b.try_into().expect("8 bytes"))
}

/// Reads a body's fields, failing on a short one.
struct Reader<'a> {
    rest: &'a [u8],
    kind: u8,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], Malformed> {
        if self.rest.len() < n {
            return Err(malformed(format!(
                "of kind {} cut short in its body",
                self.kind
            )));
        }
        let (head, rest) = self.rest.split_at(n);
        self.rest = rest;
        Ok(head)
    }
    fn u8(&mut self) -> Result<u8, Malformed> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, Malformed> {
        Ok(u16::from_be_bytes(self.take(2)?.try_into().expect("2")))
    }
    fn u32(&mut self) -> Result<u32, Malformed> {
        Ok(u32::from_be_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn u64(&mut self) -> Result<u64, Malformed> {
        Ok(be64(self.take(8)?))
    }
    fn end(&self) -> Result<(), Malformed> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(malformed(format!(
                "of kind {} with {} bytes too many",
                self.kind,
                self.rest.len()
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn round_trip(p: Packet<'_>) {
        let mut out = Vec::new();
        encode(&p, &mut out);
        assert_eq!(decode(&out).unwrap(), p);
    }

    #[test]
    fn every_kind_round_trips() {
        round_trip(Packet {
            session: 7,
            number: 0,
            body: Body::Hello {
                max_datagram: 1472,
                window: 1 << 25,
                train: false,
            },
        });
        round_trip(Packet {
            session: 7,
            number: 2,
            body: Body::Hello {
                max_datagram: 9000,
                window: 1 << 20,
                train: true,
            },
        });
        round_trip(Packet {
            session: 7,
            number: 1,
            body: Body::Welcome {
                max_datagram: 9000,
                window: 5,
            },
        });
        round_trip(Packet {
            session: u64::MAX,
            number: 99,
            body: Body::Data {
                offset: 1 << 40,
                fin: true,
                ack_now: true,
                member: true,
                payload: b"tables",
            },
        });
        round_trip(Packet {
            session: 1,
            number: 3,
            body: Body::Feedback(Feedback {
                delivered: 10,
                window: 1000,
                highest: 500,
                from: 10,
                largest: Some(40),
                ack_delay_us: 250,
                received: 38,
                holes: vec![(10, 20), (30, 40), (100, 499)],
                end: true,
            }),
        });
        round_trip(Packet {
            session: 1,
            number: 4,
            body: Body::Feedback(Feedback::default()),
        });
        round_trip(Packet {
            session: 1,
            number: 5,
            body: Body::Train {
                count: 48,
                padding: 1400,
            },
        });
        round_trip(Packet {
            session: 1,
            number: 6,
            body: Body::Rate(62_500_000),
        });
        round_trip(Packet {
            session: 1,
            number: 7,
            body: Body::Parity {
                first: 3,
                count: 10,
                block: &[9; 1411],
            },
        });
        round_trip(Packet {
            session: 1,
            number: 5,
            body: Body::Close {
                done: false,
                reason: "no FEEDBACK for 30 s".into(),
            },
        });
    }

    #[test]
    fn damage_truncation_and_nonsense_are_refused() {
        let mut out = Vec::new();
        encode(
            &Packet {
                session: 1,
                number: 2,
                body: Body::Data {
                    offset: 0,
                    fin: false,
                    ack_now: false,
                    member: false,
                    payload: &[1, 2, 3],
                },
            },
            &mut out,
        );
        for i in 0..out.len() {
            let mut bad = out.clone();
            bad[i] ^= 0x10;
            assert!(decode(&bad).is_err(), "a flipped bit in byte {i} passed");
        }
        assert!(decode(&out[..HEADER - 1]).is_err());
        // A FEEDBACK whose holes lie outside what it says arrived.
        let f = Feedback {
            delivered: 10,
            window: 100,
            highest: 20,
            largest: Some(3),
            received: 2,
            holes: vec![(15, 25)],
            ..Feedback::default()
        };
        encode(
            &Packet {
                session: 1,
                number: 0,
                body: Body::Feedback(f),
            },
            &mut out,
        );
        let e = decode(&out).unwrap_err();
        assert!(e.to_string().contains("holes"), "{e}");
    }

    proptest! {
        #[test]
        fn any_bytes_decode_or_fail_without_panic(d in proptest::collection::vec(any::<u8>(), 0..200)) {
            let _ = decode(&d);
        }

        #[test]
        fn a_sealed_datagram_with_any_body_bytes_never_panics(
            kind in 1u8..10, body in proptest::collection::vec(any::<u8>(), 0..120)
        ) {
            let mut d = vec![kind, VERSION, 0, 0, 0, 0, 0, 0];
            d.extend_from_slice(&[0; 16]);
            d.extend_from_slice(&body);
            let crc = crc32fast::hash(&d);
            d[4..8].copy_from_slice(&crc.to_be_bytes());
            let _ = decode(&d);
        }
    }
}
