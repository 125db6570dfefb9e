//! Tests of the secure channel against a tampering network: a wrapped channel that flips,
//! drops, replays or reorders whole `send` calls (the secure channel hands each record to
//! the channel below in one call; the handshake uses three calls per side).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use proptest::prelude::*;

use super::*;
use crate::{memory_pair, MemoryChannel};

/// Send calls of one side's handshake: hello, length, message.
const HANDSHAKE_SENDS: usize = 3;

#[derive(Clone, Copy, Debug)]
pub(super) enum Fault {
    None,
    /// Flip bit 0 of byte `at` of send call `call`.
    Flip {
        call: usize,
        at: usize,
    },
    /// Send call `call` twice.
    Replay {
        call: usize,
    },
    /// Send call `call` after call `call + 1`.
    Swap {
        call: usize,
    },
    /// Leave send call `call` out.
    Drop {
        call: usize,
    },
}

/// A channel that applies one [`Fault`] to what it sends, counts the bytes it sent and
/// keeps a copy of each send call.
pub(super) struct Tamper {
    inner: MemoryChannel,
    fault: Fault,
    calls: usize,
    held: Option<Vec<u8>>,
    pub(super) sent: Arc<AtomicU64>,
    log: Arc<std::sync::Mutex<Vec<Vec<u8>>>>,
}

impl Tamper {
    pub(super) fn new(inner: MemoryChannel, fault: Fault) -> Self {
        Tamper {
            inner,
            fault,
            calls: 0,
            held: None,
            sent: Arc::new(AtomicU64::new(0)),
            log: Arc::default(),
        }
    }
}

impl Channel for Tamper {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        let call = self.calls;
        self.calls += 1;
        self.sent.fetch_add(bytes.len() as u64, Ordering::Relaxed);
        self.log.lock().unwrap().push(bytes.to_vec());
        match self.fault {
            Fault::Flip { call: c, at } if c == call => {
                let mut b = bytes.to_vec();
                b[at] ^= 1;
                self.inner.send(&b)
            }
            Fault::Replay { call: c } if c == call => {
                self.inner.send(bytes)?;
                self.inner.send(bytes)
            }
            Fault::Swap { call: c } if c == call => {
                self.held = Some(bytes.to_vec());
                Ok(())
            }
            Fault::Swap { call: c } if c + 1 == call => {
                self.inner.send(bytes)?;
                let held = self.held.take().expect("held");
                self.inner.send(&held)
            }
            Fault::Drop { call: c } if c == call => Ok(()),
            _ => self.inner.send(bytes),
        }
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.inner.recv(buf)
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn close(&mut self) -> Result<()> {
        self.inner.close()
    }
    fn stats(&self) -> ByteCounts {
        self.inner.stats()
    }
}

pub(super) fn psk(b: u8) -> Credentials {
    Credentials::Psk(Psk::from_bytes([b; 32]))
}

pub(super) fn kk_pair() -> (Credentials, Credentials, PublicKey) {
    let a = StaticKeypair::generate().unwrap();
    let b = StaticKeypair::generate().unwrap();
    let (pa, pb) = (a.public(), b.public());
    (
        Credentials::Pinned { own: a, peer: pb },
        Credentials::Pinned { own: b, peer: pa },
        pa,
    )
}

/// The payload the client sends: sizes around the record boundary and a large one.
fn payload() -> Vec<Vec<u8>> {
    let mut v = Vec::new();
    for (i, len) in [
        0,
        1,
        8,
        1000,
        MAX_RECORD - 1,
        MAX_RECORD,
        MAX_RECORD + 1,
        3 * MAX_RECORD + 17,
    ]
    .into_iter()
    .enumerate()
    {
        v.push((0..len).map(|j| (j * 31 + i) as u8).collect());
    }
    v
}

/// A client and a server over a faulty network: the client sends [`payload`] (framed by
/// lengths), the server answers with the byte sum; returns both results.
fn session(
    client: Credentials,
    server: Credentials,
    client_fault: Fault,
) -> (Result<u64>, Result<u64>, u64) {
    session_with(client, server, client_fault, false)
}

/// As [`session`]; with `early`, the client starts with [`SecureChannel::client_early`], so
/// its first sends (the payload's first lengths and small messages) ride in the handshake.
fn session_with(
    client: Credentials,
    server: Credentials,
    client_fault: Fault,
    early: bool,
) -> (Result<u64>, Result<u64>, u64) {
    session_bound(client, None, server, None, client_fault, early)
}

/// As [`session_with`], each side with its binding if it has one (the `_bound`
/// constructors), else without (`client`, `client_early`, `server`).
pub(super) fn session_bound(
    client: Credentials,
    client_binding: Option<Vec<u8>>,
    server: Credentials,
    server_binding: Option<Vec<u8>>,
    client_fault: Fault,
    early: bool,
) -> (Result<u64>, Result<u64>, u64) {
    let (a, b) = memory_pair(Duration::from_secs(5));
    let a = Tamper::new(a, client_fault);
    let b = Tamper::new(b, Fault::None);
    let server_sent = b.sent.clone();
    let srv = thread::spawn(move || -> Result<u64> {
        let mut ch = match &server_binding {
            Some(binding) => SecureChannel::server_bound(b, &server, binding)?,
            None => SecureChannel::server(b, &server)?,
        };
        let mut sum = 0u64;
        let mut total = 0u64;
        for _ in 0..payload().len() {
            let mut len = [0u8; 8];
            ch.recv(&mut len)?;
            let mut msg = vec![0u8; u64::from_be_bytes(len) as usize];
            // Read in uneven pieces, to cross record boundaries every way.
            let mut at = 0;
            let mut piece = 1;
            while at < msg.len() {
                let n = piece.min(msg.len() - at);
                ch.recv(&mut msg[at..at + n])?;
                at += n;
                piece = piece * 7 + 3;
            }
            sum += msg.iter().map(|&b| u64::from(b)).sum::<u64>();
            total += msg.len() as u64;
        }
        ch.send(&sum.to_be_bytes())?;
        ch.close()?;
        // The client's authenticated close: Closed, not an integrity error.
        match ch.recv(&mut [0u8; 1]) {
            Err(Error::Closed { .. }) => Ok(total),
            other => panic!("after the close: {other:?}"),
        }
    });
    let cli = (|| -> Result<u64> {
        let mut ch: Box<dyn Channel> = match (early, &client_binding) {
            (true, None) => Box::new(SecureChannel::client_early(a, &client)?),
            (true, Some(binding)) => {
                Box::new(SecureChannel::client_early_bound(a, &client, binding)?)
            }
            (false, None) => Box::new(SecureChannel::client(a, &client)?),
            (false, Some(binding)) => Box::new(SecureChannel::client_bound(a, &client, binding)?),
        };
        for m in payload() {
            ch.send(&(m.len() as u64).to_be_bytes())?;
            ch.send(&m)?;
        }
        let mut sum = [0u8; 8];
        ch.recv(&mut sum)?;
        ch.close()?;
        Ok(u64::from_be_bytes(sum))
    })();
    let srv = srv.join().unwrap();
    (cli, srv, server_sent.load(Ordering::Relaxed))
}

pub(super) fn expected_sum() -> u64 {
    payload()
        .iter()
        .flatten()
        .map(|&b| u64::from(b))
        .sum::<u64>()
}

#[test]
fn psk_and_kk_sessions_carry_every_byte() {
    let (cli, srv, _) = session(psk(1), psk(1), Fault::None);
    assert_eq!(cli.unwrap(), expected_sum());
    let total: usize = payload().iter().map(Vec::len).sum();
    assert_eq!(srv.unwrap(), total as u64);
    let (c, s, _) = kk_pair();
    let (cli, srv, _) = session(c, s, Fault::None);
    assert_eq!(cli.unwrap(), expected_sum());
    srv.unwrap();
}

#[test]
fn sessions_with_early_data_carry_every_byte() {
    let (cli, srv, _) = session_with(psk(1), psk(1), Fault::None, true);
    assert_eq!(cli.unwrap(), expected_sum());
    let total: usize = payload().iter().map(Vec::len).sum();
    assert_eq!(srv.unwrap(), total as u64);
    let (c, s, _) = kk_pair();
    let (cli, srv, _) = session_with(c, s, Fault::None, true);
    assert_eq!(cli.unwrap(), expected_sum());
    srv.unwrap();
}

/// A request that fits in the early data goes in the handshake's first message: the client
/// sends no record before the answer, only hello, length and message 1 with the request
/// and its tag; the server receives the request as its first bytes and counts it as the
/// client does.
#[test]
fn early_data_rides_in_the_first_handshake_message() {
    for name in ["psk", "kk"] {
        for request in [vec![7u8; 1], vec![8u8; 300], vec![9u8; MAX_EARLY_DATA]] {
            let (client, server) = if name == "psk" {
                (psk(3), psk(3))
            } else {
                let (c, s, _) = kk_pair();
                (c, s)
            };
            let (a, b) = memory_pair(Duration::from_secs(5));
            let a = Tamper::new(a, Fault::None);
            let client_sent = a.sent.clone();
            let len = request.len();
            let srv = thread::spawn(move || {
                let mut ch = SecureChannel::server(b, &server).unwrap();
                let mut got = vec![0u8; len];
                ch.recv(&mut got).unwrap();
                ch.send(&got[..1]).unwrap();
                ch.flush().unwrap();
                (got, ch.stats())
            });
            let mut ch = SecureChannel::client_early(a, &client).unwrap();
            ch.send(&request[..len / 2]).unwrap();
            ch.send(&request[len / 2..]).unwrap();
            assert!(
                !ch.is_ready(),
                "{name}: the handshake ran before the first recv"
            );
            assert_eq!(client_sent.load(Ordering::Relaxed), 0, "{name}");
            let mut answer = [0u8; 1];
            ch.recv(&mut answer).unwrap();
            let (got, server_stats) = srv.join().unwrap();
            assert_eq!((got, answer[0]), (request.clone(), request[0]), "{name}");
            let message_1 = 32 + len + NOISE_TAG;
            assert_eq!(
                client_sent.load(Ordering::Relaxed),
                (8 + 2 + message_1) as u64,
                "{name}, {len} bytes: the client sent more than message 1"
            );
            let counted = (len + NOISE_TAG) as u64;
            assert_eq!(ch.stats().sent, counted, "{name}");
            assert_eq!(server_stats.received, counted, "{name}");
        }
    }
}

/// Early data beyond [`MAX_EARLY_DATA`] runs the handshake with what was kept and sends
/// the rest in records; a client that sends nothing first still works.
#[test]
fn early_data_beyond_the_limit_goes_in_records() {
    for sends in [
        vec![],
        vec![10],
        vec![MAX_EARLY_DATA + 1],
        vec![600, 600, 5000],
    ] {
        let (a, b) = memory_pair(Duration::from_secs(5));
        let total: usize = sends.iter().sum();
        let srv = thread::spawn(move || {
            let mut ch = SecureChannel::server(b, &psk(8)).unwrap();
            let mut got = vec![0u8; total];
            ch.recv(&mut got).unwrap();
            ch.send(&[1]).unwrap();
            ch.flush().unwrap();
            got
        });
        let mut ch = SecureChannel::client_early(a, &psk(8)).unwrap();
        let mut sent = Vec::new();
        for (i, &n) in sends.iter().enumerate() {
            let bytes: Vec<u8> = (0..n).map(|j| (j + i) as u8).collect();
            ch.send(&bytes).unwrap();
            sent.extend(bytes);
        }
        ch.recv(&mut [0u8; 1]).unwrap();
        assert_eq!(srv.join().unwrap(), sent, "sends {sends:?}");
    }
}

#[test]
fn the_wrong_key_gets_no_byte_from_the_server_with_early_data_too() {
    let (cli, srv, server_sent) = session_with(psk(1), psk(2), Fault::None, true);
    let e = srv.unwrap_err().to_string();
    assert!(e.contains("did not prove the expected key"), "{e}");
    assert_eq!(server_sent, 0, "the server sent bytes to a stranger");
    let e = cli.unwrap_err().to_string();
    assert!(e.contains("refused our key"), "{e}");
}

#[test]
fn the_wrong_key_gets_no_byte_from_the_server() {
    let (cli, srv, server_sent) = session(psk(1), psk(2), Fault::None);
    let e = srv.unwrap_err().to_string();
    assert!(e.contains("did not prove the expected key"), "{e}");
    assert_eq!(server_sent, 0, "the server sent bytes to a stranger");
    let e = cli.unwrap_err().to_string();
    assert!(e.contains("refused our key"), "{e}");

    // KK: the server pins another client key.
    let (c, _, _) = kk_pair();
    let (_, s, _) = kk_pair();
    let (cli, srv, server_sent) = session(c, s, Fault::None);
    assert!(srv.unwrap_err().to_string().contains("did not prove"));
    assert!(cli.is_err());
    assert_eq!(server_sent, 0);

    // Another method altogether.
    let (_, s, _) = kk_pair();
    let (cli, srv, server_sent) = session(psk(1), s, Fault::None);
    let e = srv.unwrap_err().to_string();
    assert!(
        e.contains("pre-shared key (--psk-file), this side with pinned"),
        "{e}"
    );
    assert!(cli.is_err());
    assert_eq!(server_sent, 0);
}

#[test]
fn a_server_with_a_stranger_key_is_not_believed() {
    // The client pins key P; the server holds another key but pins the client correctly.
    let a = StaticKeypair::generate().unwrap();
    let b = StaticKeypair::generate().unwrap();
    let mallory = StaticKeypair::generate().unwrap();
    let client = Credentials::Pinned {
        own: a,
        peer: b.public(),
    };
    let server = Credentials::Pinned {
        peer: client_public(&client),
        own: mallory,
    };
    let (cli, srv, _) = session(client, server, Fault::None);
    assert!(srv.is_err());
    assert!(cli.is_err());
}

fn client_public(c: &Credentials) -> PublicKey {
    match c {
        Credentials::Pinned { own, .. } => own.public(),
        Credentials::Psk(_) => unreachable!(),
    }
}

#[test]
fn an_unprotected_peer_is_told_apart() {
    let (a, b) = memory_pair(Duration::from_secs(2));
    let srv = thread::spawn(move || SecureChannel::server(b, &psk(1)).map(|_| ()));
    let mut a = a;
    // What an unprotected 2PC party sends first: a framed 72-byte session header.
    a.send(&72u64.to_be_bytes()).unwrap();
    a.send(&[0u8; 72]).unwrap();
    a.flush().unwrap();
    let e = srv.join().unwrap().unwrap_err().to_string();
    assert!(e.contains("--insecure"), "{e}");
}

#[test]
fn a_flipped_bit_anywhere_in_a_record_aborts_the_receiver() {
    // The client's first record after the handshake holds the small messages and their
    // length prefixes (1,049 bytes); the second the first large message alone (a large
    // send gets records of its own). Flip bytes of the sealed header, body and tag of each.
    let first = HANDSHAKE_SENDS;
    let small = 20 + 1049 + 16;
    let large = 20 + MAX_RECORD - 1 + 16;
    for (call, at) in [
        (first, 0),
        (first, 3),
        (first, 4),
        (first, 19),
        (first, 20),
        (first, 25),
        (first, 1000),
        (first, small - 1),
        (first + 1, 0),
        (first + 1, 20),
        (first + 1, 5000),
        (first + 1, large - 1),
    ] {
        let (cli, srv, _) = session(psk(1), psk(1), Fault::Flip { call, at });
        let e = srv.unwrap_err();
        assert!(
            matches!(e, Error::Integrity { .. }),
            "call {call} byte {at}: {e}"
        );
        assert!(e.to_string().contains("failed its check"), "{e}");
        assert!(cli.is_err(), "the sender learns the session ended");
    }
    // A later record too: the 8-byte length prefix of a large message, alone.
    let (_, srv, _) = session(
        psk(1),
        psk(1),
        Fault::Flip {
            call: first + 4,
            at: 22,
        },
    );
    assert!(matches!(srv.unwrap_err(), Error::Integrity { .. }));
    // And in the handshake itself.
    let (_, srv, _) = session(psk(1), psk(1), Fault::Flip { call: 2, at: 40 });
    assert!(matches!(srv.unwrap_err(), Error::Handshake { .. }));
}

#[test]
fn replayed_reordered_or_dropped_records_are_refused() {
    let first = HANDSHAKE_SENDS;
    for fault in [
        Fault::Replay { call: first },
        Fault::Replay { call: first + 2 },
        Fault::Swap { call: first },
        Fault::Swap { call: first + 1 },
        Fault::Drop { call: first + 1 },
    ] {
        let (_, srv, _) = session(psk(1), psk(1), fault);
        let e = srv.unwrap_err();
        assert!(matches!(e, Error::Integrity { .. }), "{fault:?}: {e}");
    }
}

#[test]
fn a_cut_short_stream_is_an_error_and_a_closed_one_is_not() {
    let (a, b) = memory_pair(Duration::from_secs(2));
    let cli = thread::spawn(move || {
        let mut ch = SecureChannel::client(a, &psk(3)).unwrap();
        ch.send(b"all of it").unwrap();
        ch.flush().unwrap();
        // Dropped without close: no authenticated end.
    });
    let mut ch = SecureChannel::server(b, &psk(3)).unwrap();
    let mut buf = [0u8; 9];
    ch.recv(&mut buf).unwrap();
    assert_eq!(&buf, b"all of it");
    cli.join().unwrap();
    let e = ch.recv(&mut [0u8; 1]).unwrap_err();
    assert!(e.to_string().contains("cut short"), "{e}");
    assert!(matches!(ch.recv(&mut [0u8; 1]), Err(Error::Poisoned)));
}

#[test]
fn counters_count_records_not_the_handshake() {
    let (a, b) = memory_pair(Duration::from_secs(2));
    let srv = thread::spawn(move || {
        let mut ch = SecureChannel::server(b, &psk(4)).unwrap();
        let mut buf = [0u8; 100];
        ch.recv(&mut buf).unwrap();
        ch.stats()
    });
    let mut ch = SecureChannel::client(a, &psk(4)).unwrap();
    assert_eq!(ch.stats(), ByteCounts::default());
    ch.send(&[9u8; 100]).unwrap();
    ch.flush().unwrap();
    let one_record = (SEALED_HEADER + 100 + TAG) as u64;
    assert_eq!(ch.stats().sent, one_record);
    assert_eq!(srv.join().unwrap().received, one_record);
    assert_eq!(ch.protection(), "noise-psk");
}

/// Completes a handshake, then lets the server's side of the wire send `bytes` raw.
fn after_handshake_receive(bytes: &[u8]) -> Result<()> {
    let (a, b) = memory_pair(Duration::from_millis(200));
    let srv = thread::spawn(move || SecureChannel::server(b, &psk(5)).unwrap());
    let mut cli = SecureChannel::client(a, &psk(5)).unwrap();
    let mut srv = srv.join().unwrap();
    srv.inner.send(bytes).unwrap();
    srv.inner.close().unwrap();
    let mut buf = vec![0u8; 64];
    cli.recv(&mut buf)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn hostile_records_never_panic_or_pass(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        prop_assert!(after_handshake_receive(&bytes).is_err());
    }

    #[test]
    fn hostile_handshakes_never_panic_or_pass(bytes in proptest::collection::vec(any::<u8>(), 0..300)) {
        let (mut a, b) = memory_pair(Duration::from_millis(100));
        a.send(&bytes).unwrap();
        a.close().unwrap();
        prop_assert!(SecureChannel::server(b, &psk(6)).is_err());
    }
}

/// The early client times its handshake once it has run (message 1 with the early data,
/// then the answer), and not before: bytes kept as early data start nothing. A handshake
/// that fails has no time.
#[test]
fn the_early_handshake_is_timed_once_it_ran() {
    for (server_key, ok) in [(1, true), (2, false)] {
        let (a, b) = memory_pair(Duration::from_secs(5));
        let srv = thread::spawn(move || -> Result<[u8; 4]> {
            let mut ch = SecureChannel::server(b, &psk(server_key))?;
            let mut ping = [0u8; 4];
            ch.recv(&mut ping)?;
            ch.send(&ping)?;
            ch.close()?;
            Ok(ping)
        });
        let mut ch = SecureChannel::client_early(a, &psk(1)).unwrap();
        ch.send(b"ping").unwrap();
        assert_eq!(
            ch.handshake_time(),
            None,
            "kept as early data: no handshake yet"
        );
        let mut back = [0u8; 4];
        let answered = ch.recv(&mut back);
        let served = srv.join().unwrap();
        if ok {
            answered.unwrap();
            assert_eq!((&back, served.unwrap()), (b"ping", *b"ping"));
            let t = ch.handshake_time().expect("the handshake ran");
            assert!(t > Duration::ZERO && t < Duration::from_secs(5), "{t:?}");
        } else {
            assert!(answered.is_err() && served.is_err());
            assert_eq!(ch.handshake_time(), None, "a failed handshake has no time");
        }
    }
}

/// A bit flipped in the handshake's first message, in its early data or its tag, makes the
/// server refuse the peer before it answers: early data is authenticated with the key.
#[test]
fn tampered_early_data_is_refused_in_the_handshake() {
    // Message 1 is the client's ephemeral key (32 bytes), then the early data (here the
    // payload's first length prefix and message, 41 bytes: what was sent before the send
    // that would pass MAX_EARLY_DATA) and its 16-byte tag: 89 bytes.
    for at in [32, 40, 72, 73, 88] {
        let (cli, srv, server_sent) =
            session_with(psk(1), psk(1), Fault::Flip { call: 2, at }, true);
        let e = srv.unwrap_err();
        assert!(matches!(e, Error::Handshake { .. }), "byte {at}: {e}");
        assert_eq!(
            server_sent, 0,
            "byte {at}: the server answered a tampered message"
        );
        assert!(cli.is_err());
    }
}

/// What a replay of the client's first message gets: the server answers it and delivers
/// its early data (early data has no replay protection; the module docs say so), but the
/// one who replays cannot read the answer or produce the next record, so the session ends
/// there with an integrity error, not with data from the replayer.
#[test]
fn a_replayed_first_message_gets_an_answer_but_no_session() {
    let early = b"header and base-OT point".to_vec();
    // Record the client's handshake sends (hello, length, message 1).
    let (a, b) = memory_pair(Duration::from_secs(5));
    let srv = thread::spawn(move || {
        let mut ch = SecureChannel::server(b, &psk(4)).unwrap();
        let mut got = vec![0u8; 24];
        ch.recv(&mut got).unwrap();
        ch.send(b"ok").unwrap();
        ch.flush().unwrap();
    });
    let recorder = Tamper::new(a, Fault::None);
    let sent = recorder.log.clone();
    let mut ch = SecureChannel::client_early(recorder, &psk(4)).unwrap();
    ch.send(&early).unwrap();
    ch.recv(&mut [0u8; 2]).unwrap();
    srv.join().unwrap();
    let calls = sent.lock().unwrap().clone();
    // The replayer: the same three sends to a fresh server, then a record of its making.
    let (mut attacker, b) = memory_pair(Duration::from_secs(5));
    let srv = thread::spawn(move || {
        let mut ch = SecureChannel::server(b, &psk(4))?;
        let mut got = vec![0u8; 24];
        ch.recv(&mut got)?;
        let mut more = [0u8; 1];
        ch.recv(&mut more).map(|()| (got, more))
    });
    for call in &calls[..HANDSHAKE_SENDS] {
        attacker.send(call).unwrap();
    }
    attacker.flush().unwrap();
    // The server's answer, which the replayer cannot open, then a forged record.
    let mut answer_head = [0u8; 10];
    attacker.recv(&mut answer_head).unwrap();
    attacker.send(&[0x17; 64]).unwrap();
    attacker.flush().unwrap();
    let e = srv.join().unwrap().unwrap_err();
    assert!(matches!(e, Error::Integrity { .. }), "{e}");
}

/// A peer that announces a first handshake message longer than the protocol allows is
/// refused on the announcement, before anything more is read.
#[test]
fn an_oversized_first_handshake_message_is_refused_on_its_length() {
    let (mut raw, b) = memory_pair(Duration::from_secs(5));
    let srv = thread::spawn(move || SecureChannel::server(b, &psk(5)).map(|_| ()));
    raw.send(&psk(5).hello()).unwrap();
    let too_long = u16::try_from(MAX_HANDSHAKE_MESSAGE + 1).unwrap();
    raw.send(&too_long.to_be_bytes()).unwrap();
    raw.flush().unwrap();
    let start = std::time::Instant::now();
    let e = srv.join().unwrap().unwrap_err();
    // Refused on the length: the 5 s timeout of a read of the body never came into it.
    assert!(start.elapsed() < Duration::from_secs(2), "{e}");
    assert!(
        e.to_string()
            .contains(&format!("at most {MAX_HANDSHAKE_MESSAGE}")),
        "{e}"
    );
}
