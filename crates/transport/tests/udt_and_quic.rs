//! Tests of the two transports over UDP that repair loss, `udt` and `quic`: closed ports,
//! silent and vanished peers, half-close, a peer that never reads, the tail on drop. Each
//! skips itself in a build without its transport.

use std::thread;
use std::time::{Duration, Instant};

use transputation_transport::{Channel, Config, Error, Framed, TransportSpec};

mod common;
use common::*;

#[test]
fn udt_reports_a_closed_port_a_silent_peer_and_a_vanished_one() {
    if !built("udt") {
        return;
    }
    // Nothing listens: connecting gives up after the connect budget (here the 200 ms
    // timeout, spent by the first attempt), not after UDT's own 3 s or once per attempt.
    let addr = closed_udp_port();
    let cfg = Config {
        connect_timeout: Duration::from_millis(200),
        ..quick()
    };
    assert_eq!(cfg.connect_budget(), Duration::from_millis(200));
    let start = Instant::now();
    let e = "udt"
        .parse::<TransportSpec>()
        .unwrap()
        .connect(addr, &cfg)
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("could not connect to {addr} after 1 attempt")
    );
    // Well below UDT's own 3 s connection timeout, with room for a busy host.
    assert!(
        start.elapsed() < Duration::from_millis(2000),
        "{:?}",
        start.elapsed()
    );
    // Nobody connects to a listener.
    let listener = "udt:mss=9000"
        .parse::<TransportSpec>()
        .unwrap()
        .listen(any_port(), &quick())
        .unwrap();
    let e = listener.accept().map(|_| ()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the peer was silent for 400ms while waiting for a client to connect"
    );
    // A connected peer that says nothing: the receiver times out, in about the timeout.
    let (took, _) = pair(
        "udt",
        &quick(),
        |mut ch| {
            let start = Instant::now();
            let mut b = [0u8; 1];
            let e = ch.recv(&mut b).unwrap_err();
            assert_eq!(
                e.to_string(),
                "the peer was silent for 400ms while receiving"
            );
            start.elapsed()
        },
        |ch| {
            thread::sleep(Duration::from_millis(900));
            drop(ch);
            Duration::ZERO
        },
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
    // A peer that drops its channel in the middle of a message.
    let (e, _) = pair(
        "udt",
        &quick(),
        |ch| Framed::new(ch).recv_message().unwrap_err(),
        |mut ch| {
            ch.send(&1000u64.to_be_bytes()).unwrap();
            ch.send(&[7; 300]).unwrap();
            ch.flush().unwrap();
            drop(ch);
            Error::Poisoned
        },
    );
    assert!(matches!(e, Error::Closed { .. }), "{e}");
}

#[test]
fn udt_close_ends_one_direction_and_the_tail_arrives() {
    if !built("udt") {
        return;
    }
    // The client sends 8 MiB and closes at once, then still receives the server's answer;
    // the server reads every byte, then sees the end of the stream.
    let total = 8 << 20;
    let (got, answer) = pair(
        "udt",
        &Config::default(),
        move |mut ch| {
            let mut all = vec![0u8; total];
            ch.recv(&mut all).unwrap();
            let mut more = [0u8; 1];
            assert!(matches!(ch.recv(&mut more), Err(Error::Closed { .. })));
            ch.send(b"thanks").unwrap();
            ch.close().unwrap();
            all
        },
        move |mut ch| {
            ch.send(&pattern(total, 5)).unwrap();
            ch.close().unwrap();
            assert!(ch.send(b"late").is_err());
            let mut answer = vec![0u8; 6];
            ch.recv(&mut answer).unwrap();
            answer
        },
    );
    assert!(got == pattern(total, 5));
    assert_eq!(answer, b"thanks");
}

#[test]
fn udt_a_peer_that_never_reads_makes_sending_time_out() {
    if !built("udt") {
        return;
    }
    let spec: TransportSpec = "udt:sndbuf=1048576,rcvbuf=1048576".parse().unwrap();
    let listener = spec.listen(any_port(), &quick()).unwrap();
    let addr = listener.local_addr();
    let (tx, rx) = std::sync::mpsc::channel::<()>();
    let h = thread::spawn(move || {
        let ch = listener.accept().unwrap();
        let _ = rx.recv();
        drop(ch);
    });
    let mut ch = spec.connect(addr, &quick()).unwrap();
    let chunk = vec![0u8; 1 << 20];
    let start = Instant::now();
    let e = (0..64)
        .try_for_each(|_| ch.send(&chunk).and_then(|()| ch.flush()))
        .unwrap_err();
    assert_eq!(e.to_string(), "the peer was silent for 400ms while sending");
    assert!(start.elapsed() < Duration::from_secs(5));
    tx.send(()).unwrap();
    h.join().unwrap();
}

#[test]
fn quic_connecting_to_a_closed_port_fails_within_the_timeout() {
    if !built("quic") {
        return;
    }
    let addr = closed_udp_port();
    let cfg = Config {
        connect_timeout: Duration::from_millis(300),
        ..quick()
    };
    let start = Instant::now();
    let e = "quic"
        .parse::<TransportSpec>()
        .unwrap()
        .connect(addr, &cfg)
        .map(|_| ())
        .unwrap_err();
    let took = start.elapsed();
    assert!(matches!(e, Error::Connect { .. }), "{e}");
    assert!(
        e.to_string()
            .starts_with(&format!("could not connect to {addr} after ")),
        "{e}"
    );
    assert!(took >= Duration::from_millis(250), "{took:?}");
    // The budget (300 ms) and slack for a busy host: no lingering on the endpoint of a
    // failed connect (it added a second).
    assert!(
        took < cfg.connect_budget() + Duration::from_millis(900),
        "{took:?}"
    );
}

#[test]
fn quic_silent_peer_times_out() {
    if !built("quic") {
        return;
    }
    let (e, _) = pair(
        "quic",
        &quick(),
        |mut ch| {
            let start = Instant::now();
            let mut b = [0u8; 1];
            let e = ch.recv(&mut b).unwrap_err();
            assert!(start.elapsed() < Duration::from_secs(2));
            e
        },
        |ch| {
            thread::sleep(Duration::from_millis(900));
            drop(ch);
            Error::Poisoned
        },
    );
    assert_eq!(
        e.to_string(),
        "the peer was silent for 400ms while receiving"
    );
    // Nobody connects, and garbage datagrams are not a client.
    let listener = "quic"
        .parse::<TransportSpec>()
        .unwrap()
        .listen(any_port(), &quick())
        .unwrap();
    let udp = std::net::UdpSocket::bind(any_port()).unwrap();
    for n in [0, 1, 20, 1200, 1500] {
        udp.send_to(&vec![0xc3; n], listener.local_addr()).unwrap();
    }
    let e = listener.accept().map(|_| ()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the peer was silent for 400ms while waiting for a client to connect"
    );
}

#[test]
fn quic_peer_closing_mid_message_is_reported() {
    if !built("quic") {
        return;
    }
    let (e, _) = pair(
        "quic",
        &quick(),
        |ch| {
            let start = Instant::now();
            let e = Framed::new(ch).recv_message().unwrap_err();
            assert!(start.elapsed() < Duration::from_secs(2));
            e
        },
        |mut ch| {
            ch.send(&100u64.to_be_bytes()).unwrap();
            ch.send(&[7; 10]).unwrap();
            drop(ch);
            Error::Poisoned
        },
    );
    assert_eq!(
        e.to_string(),
        "the peer closed the connection while receiving"
    );
}

#[test]
fn quic_keeps_the_tail_when_the_sender_drops_at_once() {
    if !built("quic") {
        return;
    }
    // The sender drops its channel right after the last send, without close; the receiver
    // starts reading only later, after the connection is closed.
    let big = pattern(6 << 20, 3);
    let want = big.clone();
    let (s, c) = pair(
        "quic:window=16777216",
        &Config::default(),
        move |ch| {
            thread::sleep(Duration::from_millis(300));
            let mut ch = Framed::with_max_message(ch, 8 << 20);
            assert!(ch.recv_message().unwrap() == want);
            assert_eq!(ch.recv_message().unwrap(), b"last");
            assert!(matches!(ch.recv_message(), Err(Error::Closed { .. })));
            ch.stats()
        },
        move |ch| {
            let mut ch = Framed::with_max_message(ch, 8 << 20);
            ch.send_message(&big).unwrap();
            ch.send_message(b"last").unwrap();
            let stats = ch.stats();
            drop(ch);
            stats
        },
    );
    assert_eq!(s.received, c.sent);
    assert_eq!(c.sent, (6 << 20) + 8 + 4 + 8);
}
