//! The driver over real loopback sockets: a vanished peer, foreign and damaged datagrams,
//! the train asked for or not, tuning, the close of a dropped channel, and each side's
//! view of the end.

use super::*;
use transputation_blast::wire::{self, Body, Packet};

fn quick() -> Config {
    Config {
        io_timeout: Duration::from_millis(500),
        ..Config::default()
    }
}

/// A server channel, and a client socket that did the handshake by hand and then says
/// nothing more: a peer that vanished.
fn vanished_client() -> (BlastChannel, UdpSocket) {
    hand_made_client(true)
}

/// A server channel of default parameters (a train of 48), and a client socket that
/// sent it a HELLO asking for the train or not.
fn hand_made_client(train: bool) -> (BlastChannel, UdpSocket) {
    let listener = Listener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut hello = Vec::new();
    wire::encode(
        &Packet {
            session: 0xfeed,
            number: 1,
            body: Body::Hello {
                max_datagram: 1472,
                window: 1 << 20,
                train,
            },
        },
        &mut hello,
    );
    peer.send_to(&hello, listener.local_addr).unwrap();
    // The connection outlasts the channel's waits (500 ms), so that a wait that times
    // out leaves it usable.
    let params = Params {
        idle_timeout: Duration::from_secs(5),
        ..Params::default()
    };
    let ch = listener.accept(params, &quick()).unwrap();
    (ch, peer)
}

#[test]
fn a_vanished_peer_is_a_timeout_not_a_hang() {
    let (mut ch, _peer) = vanished_client();
    let start = Instant::now();
    let mut buf = [0u8; 10];
    let e = ch.recv(&mut buf).unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    // Sending into the silence: the bytes are never acknowledged; closing gives up.
    ch.send(&[7; 5000]).unwrap();
    let e = ch.close().unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}");
    assert!(start.elapsed() < Duration::from_secs(5), "{:?}", start.elapsed());
}

#[test]
fn datagrams_of_another_session_or_damaged_are_dropped() {
    let (mut ch, peer) = vanished_client();
    let mut buf = [0u8; 100];
    // The WELCOME (and the train) from the server's own socket.
    let (_, server) = peer.recv_from(&mut buf).unwrap();
    let data = |session| {
        let mut d = Vec::new();
        wire::encode(
            &Packet {
                session,
                number: 0,
                body: Body::Data {
                    offset: 0,
                    fin: false,
                    ack_now: true,
                    member: false,
                    payload: b"forged",
                },
            },
            &mut d,
        );
        d
    };
    peer.send_to(&data(0xbad), server).unwrap();
    let mut damaged = data(0xfeed);
    damaged[30] ^= 0x40;
    peer.send_to(&damaged, server).unwrap();
    let mut got = [0u8; 6];
    let e = ch.recv(&mut got).unwrap_err();
    assert!(matches!(e, Error::Timeout { .. }), "{e}: {got:?}");
    // The right session's bytes do arrive.
    peer.send_to(&data(0xfeed), server).unwrap();
    ch.recv(&mut got).unwrap();
    assert_eq!(&got, b"forged");
}

/// The kinds of the datagrams `peer` receives within `wait`.
fn kinds_received(peer: &UdpSocket, wait: Duration) -> Vec<u8> {
    peer.set_read_timeout(Some(wait)).unwrap();
    let mut buf = [0u8; 2048];
    let mut kinds = Vec::new();
    while let Ok(n) = peer.recv(&mut buf) {
        kinds.push(buf[0]);
        let _ = n;
    }
    kinds
}

#[test]
fn a_hello_that_asks_for_no_train_gets_none() {
    const TRAIN: u8 = 6;
    let (_ch, asked) = hand_made_client(true);
    let trains = kinds_received(&asked, Duration::from_millis(200));
    assert_eq!(trains.iter().filter(|k| **k == TRAIN).count(), 48, "{trains:?}");
    let (_ch, quiet) = hand_made_client(false);
    let kinds = kinds_received(&quiet, Duration::from_millis(200));
    assert!(!kinds.is_empty() && !kinds.contains(&TRAIN), "{kinds:?}");
}

#[test]
fn a_dropped_channel_says_its_close_more_than_once() {
    const CLOSE: u8 = 5;
    let (mut ch, peer) = hand_made_client(false);
    let mut buf = [0u8; 100];
    let (_, server) = peer.recv_from(&mut buf).unwrap();
    // A first DATA (the stream's end) opens the connection on the server's side.
    let mut end = Vec::new();
    let body = Body::Data {
        offset: 0,
        fin: true,
        ack_now: true,
        member: false,
        payload: b"",
    };
    wire::encode(&Packet { session: 0xfeed, number: 0, body }, &mut end);
    peer.send_to(&end, server).unwrap();
    assert!(ch.recv(&mut buf[..1]).is_err(), "the stream ended empty");
    kinds_received(&peer, Duration::from_millis(100));
    drop(ch);
    let kinds = kinds_received(&peer, Duration::from_millis(200));
    // Its process may exit at once: each copy may be the peer's only word on the end.
    let closes = kinds.iter().filter(|k| **k == CLOSE).count();
    assert!(closes > 1 && closes == CLOSE_COPIES, "{kinds:?}");
}

/// A server that sent `ok` and closes, and a hand-made client that read it and left before
/// the end arrived: with a FEEDBACK for the bytes before its CLOSE (as a dropped channel
/// sends), the server's `close` has delivered all there was; with the CLOSE alone it
/// cannot know, and says the peer left.
#[test]
fn a_peer_that_read_every_byte_and_left_ends_the_close() {
    for acknowledged in [true, false] {
        let (mut ch, peer) = hand_made_client(false);
        let mut buf = [0u8; 2048];
        let (_, server) = peer.recv_from(&mut buf).unwrap();
        let send = |body: Body<'_>, number| {
            let mut d = Vec::new();
            wire::encode(&Packet { session: 0xfeed, number, body }, &mut d);
            peer.send_to(&d, server).unwrap();
        };
        let data = Body::Data {
            offset: 0,
            fin: false,
            ack_now: true,
            member: false,
            payload: b"hi",
        };
        send(data, 0);
        let mut hi = [0u8; 2];
        ch.recv(&mut hi).unwrap();
        let closing = thread::spawn(move || {
            ch.send(b"ok").unwrap();
            ch.close()
        });
        // The DATA that carries `ok`.
        peer.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let number = loop {
            let n = peer.recv(&mut buf).expect("the server's DATA");
            let p = wire::decode(&buf[..n]).unwrap();
            if let Body::Data { offset: 0, payload, .. } = p.body {
                assert_eq!(payload, b"ok");
                break p.number;
            }
        };
        if acknowledged {
            let f = wire::Feedback {
                delivered: 2,
                window: 1 << 20,
                highest: 2,
                from: 2,
                largest: Some(number),
                ack_delay_us: 0,
                received: 1,
                holes: Vec::new(),
                end: false,
            };
            send(Body::Feedback(f), 1);
        }
        let reason = "the channel was dropped before the stream's end arrived".to_string();
        send(Body::Close { done: false, reason }, 0);
        let closed = closing.join().unwrap();
        if acknowledged {
            closed.unwrap();
        } else {
            let e = closed.unwrap_err();
            assert!(matches!(e, Error::Closed { .. }), "{e}");
        }
    }
}

/// A dropped channel's FEEDBACK goes before its CLOSE, for the bytes it read.
#[test]
fn a_dropped_channel_acknowledges_what_it_read_before_its_close() {
    const FEEDBACK: u8 = 4;
    const CLOSE: u8 = 5;
    let (mut ch, peer) = hand_made_client(false);
    let mut buf = [0u8; 100];
    let (_, server) = peer.recv_from(&mut buf).unwrap();
    let mut d = Vec::new();
    let body = Body::Data {
        offset: 0,
        fin: false,
        ack_now: false,
        member: false,
        payload: b"abc",
    };
    wire::encode(&Packet { session: 0xfeed, number: 0, body }, &mut d);
    peer.send_to(&d, server).unwrap();
    ch.recv(&mut buf[..3]).unwrap();
    kinds_received(&peer, Duration::from_millis(100));
    drop(ch);
    peer.set_read_timeout(Some(Duration::from_millis(200))).unwrap();
    let mut leaving = Vec::new();
    while let Ok(n) = peer.recv(&mut buf) {
        let p = wire::decode(&buf[..n]).unwrap();
        if let Body::Feedback(f) = &p.body {
            assert_eq!(f.delivered, 3, "{f:?}");
        }
        leaving.push(buf[0]);
    }
    assert_eq!(leaving.first(), Some(&FEEDBACK), "{leaving:?}");
    assert_eq!(leaving.iter().filter(|k| **k == CLOSE).count(), CLOSE_COPIES);
}

#[test]
fn either_side_starts_at_the_rate_its_tuning_gives() {
    let cfg = Config {
        io_timeout: Duration::from_secs(3),
        ..Config::default()
    };
    let listener = Listener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr;
    let server_cfg = cfg.clone();
    let server = thread::spawn(move || listener.accept(Params::default(), &server_cfg));
    let quiet = Params {
        train: 0,
        ..Params::default()
    };
    let mut client = connect(addr, quiet, &cfg).unwrap();
    let mut server = server.join().unwrap().unwrap();
    // The server opens on the client's first packet.
    client.send(b"x").unwrap();
    client.flush().unwrap();
    let mut one = [0u8; 1];
    server.recv(&mut one).unwrap();
    let hint = |rate| SenderHint {
        start_rate: Some(rate),
        ..SenderHint::default()
    };
    for (ch, rate) in [(&server, 40_000_000u64), (&client, 30_000_000)] {
        ch.sender_tuning().unwrap().apply(&hint(rate)).unwrap();
        assert_eq!(ch.shared.lock().conn.rate(), Some(rate as f64));
    }
    // A window-based hint names what blast does not have, and changes nothing.
    let tuning = server.sender_tuning().unwrap();
    let cc = SenderHint {
        congestion: Some("bbr".into()),
        start_rate: Some(1_000_000),
        ..SenderHint::default()
    };
    let e = tuning.apply(&cc).unwrap_err();
    assert!(e.to_string().contains("cc"), "{e}");
    assert_eq!(server.shared.lock().conn.rate(), Some(40e6));
    // The handle outlives its channel harmlessly.
    drop(server);
    tuning.apply(&hint(1_000_000)).unwrap();
}

/// The C interface's echo: the client closes its direction first, the server sees the
/// end, closes its own, and the client then sees the server's end.
#[test]
fn each_side_sees_the_end_when_the_client_closes_first() {
    let cfg = Config {
        io_timeout: Duration::from_secs(3),
        ..Config::default()
    };
    let listener = Listener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
    let addr = listener.local_addr;
    let server_cfg = cfg.clone();
    let server = thread::spawn(move || {
        let mut ch = listener.accept(Params::default(), &server_cfg).unwrap();
        let mut buf = [0u8; 5];
        ch.recv(&mut buf).unwrap();
        ch.send(&buf).unwrap();
        let mut more = [0u8; 1];
        assert!(matches!(ch.recv(&mut more), Err(Error::Closed { .. })));
        ch.close().unwrap();
    });
    let mut ch = connect(addr, Params::default(), &cfg).unwrap();
    ch.send(b"hello").unwrap();
    let mut echo = [0u8; 5];
    ch.recv(&mut echo).unwrap();
    assert_eq!(&echo, b"hello");
    ch.close().unwrap();
    let mut more = [0u8; 1];
    let end = ch.recv(&mut more);
    assert!(matches!(end, Err(Error::Closed { .. })), "{end:?}");
    server.join().unwrap();
}
