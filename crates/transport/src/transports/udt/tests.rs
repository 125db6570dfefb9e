//! The `udt` transport's own tests: options, the library's answers, hostile chunk headers,
//! and the behaviour at the edges (closed ports, silent and vanished peers, half-close).

use super::*;
use crate::Framed;

fn quick() -> Config {
    Config {
        io_timeout: Duration::from_millis(500),
        connect_timeout: Duration::from_millis(300),
        connect_attempts: 3,
        retry_delay: Duration::from_millis(20),
        ..Config::default()
    }
}

fn loopback() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

fn options(mss: u32) -> Options {
    Options {
        mss,
        sndbuf: None,
        rcvbuf: None,
        fc: None,
        udpbuf: None,
        ack: DEFAULT_ACK,
    }
}

#[test]
fn options_follow_the_name_and_the_config() {
    let cfg = Config {
        buffer_bytes: Some(64 << 20),
        ..quick()
    };
    let o = options(1500).for_socket(&cfg);
    assert_eq!((o.sndbuf, o.rcvbuf), (64 << 20, 64 << 20));
    // The flow window grows to hold the receive buffer: 64 MiB / 1472 + 1 packets.
    assert_eq!(o.fc, (64 << 20) / 1472 + 1);
    assert_eq!((o.snd_timeout_ms, o.rcv_timeout_ms), (500, 500));
    let named = Options {
        sndbuf: Some(1 << 20),
        fc: Some(1000),
        udpbuf: Some(1 << 21),
        ..options(9000)
    };
    let o = named.for_socket(&cfg);
    // At mss=9000 UDT's default receive buffer (8192 × 8972 bytes) beats 64 MiB.
    assert_eq!((o.mss, o.sndbuf, o.rcvbuf), (9000, 1 << 20, 0));
    assert_eq!((o.fc, o.udpbuf), (1000, 1 << 21));
    let o = options(1500).for_socket(&quick());
    assert_eq!((o.sndbuf, o.rcvbuf, o.fc, o.udpbuf), (0, 0, 0, 0));
    // A configured size below UDT's default (8192 packets) leaves the default.
    let small = Config {
        buffer_bytes: Some(128 << 10),
        ..quick()
    };
    let o = options(1500).for_socket(&small);
    assert_eq!((o.sndbuf, o.rcvbuf, o.fc), (0, 0, 0));
    let o = Options {
        rcvbuf: Some(128 << 10),
        ..options(1500)
    }
    .for_socket(&small);
    assert_eq!((o.sndbuf, o.rcvbuf), (0, 128 << 10));
}

#[test]
fn the_library_applies_the_options() {
    let cfg = quick();
    let named = Options {
        sndbuf: Some(4 << 20),
        rcvbuf: Some(8 << 20),
        udpbuf: Some(1 << 20),
        ..options(9000)
    };
    let l = UdtListener::bind(loopback(), &named, &cfg).unwrap();
    let o = l.socket.options_in_force().unwrap();
    assert_eq!(o.mss, 9000);
    // UDT rounds buffers down to whole packets of mss - 28 bytes.
    assert_eq!(o.sndbuf, (4 << 20) / 8972 * 8972);
    assert_eq!(o.rcvbuf, (8 << 20) / 8972 * 8972);
    assert_eq!(o.fc, 25600);
    assert_eq!(o.udpbuf, 1 << 20);
    assert_eq!((o.snd_timeout_ms, o.rcv_timeout_ms), (500, 500));
    // The client asks for 1500: both ends use the smaller MSS.
    let addr = l.local_addr();
    let h = std::thread::spawn(move || {
        let ch = l.accept(&quick()).unwrap();
        ch.socket.options_in_force().unwrap().mss
    });
    let ch = connect(addr, &options(1500), &cfg).unwrap();
    assert_eq!(ch.socket.options_in_force().unwrap().mss, 1500);
    assert_eq!(h.join().unwrap(), 1500);
}

#[test]
fn ipv6_works_where_the_machine_has_it() {
    let any6: SocketAddr = "[::1]:0".parse().unwrap();
    if std::net::UdpSocket::bind(any6).is_err() {
        eprintln!("skipping: no IPv6 loopback here");
        return;
    }
    let cfg = quick();
    let l = UdtListener::bind(any6, &options(1500), &cfg).unwrap();
    let addr = l.local_addr();
    assert!(addr.is_ipv6() && addr.port() != 0, "{addr}");
    let h = std::thread::spawn(move || {
        let mut ch = Framed::new(l.accept(&quick()).unwrap());
        ch.recv_message().unwrap()
    });
    let mut ch = Framed::new(connect(addr, &options(1500), &cfg).unwrap());
    ch.send_message(b"over ::1").unwrap();
    ch.close().unwrap();
    assert_eq!(h.join().unwrap(), b"over ::1");
}

/// A raw UDT peer: connects and sends `bytes` as they are, outside the chunk format.
fn raw_peer_sends(bytes: &'static [u8]) -> Error {
    let cfg = quick();
    let l = UdtListener::bind(loopback(), &options(1500), &cfg).unwrap();
    let addr = l.local_addr();
    let h = std::thread::spawn(move || {
        let mut ch = connect(addr, &options(1500), &quick()).unwrap();
        ch.send_all(bytes).unwrap();
        std::thread::sleep(Duration::from_millis(200));
    });
    let mut ch = Framed::new(l.accept(&cfg).unwrap());
    let e = ch.recv_message().unwrap_err();
    h.join().unwrap();
    e
}

#[test]
fn hostile_chunk_headers_are_refused() {
    let e = raw_peer_sends(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3]);
    assert_eq!(
        e.to_string(),
        "malformed data from the peer: a udt chunk header announces 4294967295 bytes"
    );
    // A chunk cut short by the peer's end: the stream ends mid-chunk.
    let e = raw_peer_sends(&[0, 0, 0, 100, 1, 2, 3]);
    assert!(matches!(e, Error::Closed { .. }), "{e}");
    // The end marker in the middle of a frame header.
    let e = raw_peer_sends(&[0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]);
    assert_eq!(
        e.to_string(),
        "the peer closed the connection while receiving"
    );
}
