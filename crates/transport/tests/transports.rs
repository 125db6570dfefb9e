//! Transport-specific tests (mtcp hellos, udp set-up, congestion control, hostile bytes,
//! the memory pair), over 127.0.0.1 only; the contract every transport keeps is in
//! conformance.rs.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::thread;
use std::time::{Duration, Instant};

use proptest::prelude::*;
use transputation_transport::{
    check_congestion_control, memory_pair, Channel, Config, Error, Framed, TransportSpec,
};

mod common;
use common::*;

#[test]
fn mtcp_keeps_order_over_many_streams_and_small_chunks() {
    let n = 600;
    let sizes: Vec<usize> = (0..n).map(|i| (i * 977) % 5000).collect();
    let want = sizes.clone();
    pair(
        "mtcp:streams=5,chunk=1024",
        &Config::default(),
        move |ch| {
            let mut ch = Framed::new(ch);
            for (i, &len) in want.iter().enumerate() {
                assert_eq!(ch.recv_message().unwrap(), pattern(len, i as u64), "{i}");
            }
            ch.send_message(b"ok").unwrap();
        },
        |ch| {
            let mut ch = Framed::new(ch);
            for (i, &len) in sizes.iter().enumerate() {
                ch.send_message(&pattern(len, i as u64)).unwrap();
            }
            assert_eq!(ch.recv_message().unwrap(), b"ok");
        },
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Raw bytes written in one cut arrive whole when read in another cut.
    #[test]
    fn raw_bytes_survive_any_cut(
        sends in prop::collection::vec(0usize..5000, 1..20),
        recvs in prop::collection::vec(1usize..7000, 1..20),
        which in 0usize..5,
    ) {
        let spec = ["tcp", "mtcp:streams=3,chunk=1024", "mtcp:streams=2", "udp", "udt"][which];
        if !built(spec) {
            return Ok(());
        }
        let total: usize = sends.iter().sum();
        let data = pattern(total, 9);
        let expect = data.clone();
        let (got, _) = pair(
            spec,
            &Config::default(),
            move |mut ch| {
                let mut got = vec![0u8; total];
                let mut at = 0;
                for &r in recvs.iter().cycle() {
                    if at == total {
                        break;
                    }
                    let end = (at + r).min(total);
                    ch.recv(&mut got[at..end]).unwrap();
                    at = end;
                }
                got
            },
            move |mut ch| {
                let mut at = 0;
                for &s in &sends {
                    ch.send(&data[at..at + s]).unwrap();
                    at += s;
                }
                ch.close().unwrap();
                Vec::new()
            },
        );
        prop_assert!(got == expect);
    }

    /// N messages sent are N messages received, whatever their sizes.
    #[test]
    fn n_messages_in_n_messages_out(
        sizes in prop::collection::vec(0usize..20000, 0..30),
        which in 0usize..4,
    ) {
        let spec = ["tcp", "mtcp:streams=4,chunk=1024", "udp:mtu=1000", "udt:mss=9000"][which];
        if !built(spec) {
            return Ok(());
        }
        let want = sizes.clone();
        let n = sizes.len();
        let (count, _) = pair(
            spec,
            &Config::default(),
            move |ch| {
                let mut ch = Framed::new(ch);
                let mut count = 0;
                for (i, &len) in want.iter().enumerate() {
                    assert_eq!(ch.recv_message().unwrap(), pattern(len, i as u64));
                    count += 1;
                }
                // Nothing more: the next read sees the end of the stream.
                assert!(matches!(ch.recv_message(), Err(Error::Closed { .. })));
                count
            },
            move |ch| {
                let mut ch = Framed::new(ch);
                for (i, &len) in sizes.iter().enumerate() {
                    ch.send_message(&pattern(len, i as u64)).unwrap();
                }
                ch.close().unwrap();
                sizes.len()
            },
        );
        prop_assert_eq!(count, n);
    }
}

/// A raw TCP peer that connects to a `tcp` server, does `peer`, and the server's verdict.
fn against_raw_peer(
    spec: &str,
    cfg: &Config,
    peer: impl FnOnce(TcpStream) + Send + 'static,
) -> (Error, Duration) {
    let spec: TransportSpec = spec.parse().unwrap();
    let listener = spec.listen(any_port(), cfg).unwrap();
    let addr = listener.local_addr();
    let h = thread::spawn(move || peer(TcpStream::connect(addr).unwrap()));
    let start = Instant::now();
    let err = listener
        .accept()
        .and_then(|ch| Framed::new(ch).recv_message())
        .unwrap_err();
    let took = start.elapsed();
    h.join().unwrap();
    (err, took)
}

#[test]
fn garbage_length_is_refused_before_allocating() {
    let (e, _) = against_raw_peer("tcp", &quick(), |mut s| {
        s.write_all(&[0xff; 64]).unwrap();
    });
    assert!(
        matches!(e, Error::MessageTooLarge { len: u64::MAX, .. }),
        "{e}"
    );
}

#[test]
fn truncated_frame_and_closed_peer_are_reported() {
    let (e, _) = against_raw_peer("tcp", &quick(), |mut s| {
        s.write_all(&100u64.to_be_bytes()).unwrap();
        s.write_all(&[7; 10]).unwrap();
    });
    assert_eq!(
        e.to_string(),
        "the peer closed the connection while receiving"
    );
    let (e, _) = against_raw_peer("tcp", &quick(), drop);
    assert!(matches!(e, Error::Closed { .. }), "{e}");
    let (e, _) = against_raw_peer("tcp", &quick(), |mut s| {
        s.write_all(&[0, 0, 0]).unwrap();
    });
    assert!(matches!(e, Error::Closed { .. }), "{e}");
}

#[test]
fn silent_peer_times_out() {
    for spec in ["tcp", "mtcp:streams=1"] {
        let (e, took) = against_raw_peer(spec, &quick(), |mut s| {
            // For mtcp a valid hello, then silence; for tcp silence at once.
            if spec.starts_with("mtcp") {
                let mut hello = b"TPMT\x01\x00\x01\x00\x00".to_vec();
                hello.extend_from_slice(&42u64.to_be_bytes());
                s.write_all(&hello).unwrap();
            }
            thread::sleep(Duration::from_millis(1200));
        });
        assert!(matches!(e, Error::Timeout { .. }), "{spec}: {e}");
        assert!(
            e.to_string().starts_with("the peer was silent for 400ms"),
            "{e}"
        );
        assert!(took < Duration::from_secs(3), "{spec}: {took:?}");
    }
    // Nobody connects at all.
    let listener = "tcp"
        .parse::<TransportSpec>()
        .unwrap()
        .listen(any_port(), &quick())
        .unwrap();
    let e = listener.accept().map(|_| ()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the peer was silent for 400ms while waiting for a client to connect"
    );
}

#[test]
fn mtcp_rejects_bad_hellos_and_chunk_headers() {
    let (e, _) = against_raw_peer("mtcp:streams=1", &quick(), |mut s| {
        s.write_all(b"GET / HTTP/1.1\r\n\r\n").unwrap();
    });
    assert!(e.to_string().contains("wrong magic or version"), "{e}");
    for header in [0u32, (16 << 20) + 1] {
        let (e, _) = against_raw_peer("mtcp:streams=1", &quick(), move |mut s| {
            let mut hello = b"TPMT\x01\x00\x01\x00\x00".to_vec();
            hello.extend_from_slice(&42u64.to_be_bytes());
            s.write_all(&hello).unwrap();
            let mut answer = [0; 7];
            s.read_exact(&mut answer).unwrap();
            assert_eq!(&answer, b"TPMT\x01\x00\x01");
            s.write_all(&header.to_be_bytes()).unwrap();
        });
        assert_eq!(
            e.to_string(),
            format!("malformed data from the peer: an mtcp chunk header announces {header} bytes")
        );
    }
    let (e, _) = against_raw_peer("mtcp:streams=2", &quick(), |mut s| {
        let mut hello = b"TPMT\x01\x00\x02\x00\x05".to_vec();
        hello.extend_from_slice(&42u64.to_be_bytes());
        s.write_all(&hello).unwrap();
    });
    assert!(
        e.to_string()
            .contains("index 5 is repeated or out of range"),
        "{e}"
    );
}

#[test]
fn mtcp_stream_count_mismatch_is_reported_on_both_ends() {
    let server: TransportSpec = "mtcp:streams=3".parse().unwrap();
    let listener = server.listen(any_port(), &quick()).unwrap();
    let addr = listener.local_addr();
    let h = thread::spawn(move || listener.accept().map(|_| ()).unwrap_err());
    let client: TransportSpec = "mtcp:streams=2".parse().unwrap();
    let e = client.connect(addr, &quick()).map(|_| ()).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the two ends disagree: the mtcp server uses streams=3, this client streams=2"
    );
    assert_eq!(
        h.join().unwrap().to_string(),
        "the two ends disagree: the mtcp client uses streams=2, this server streams=3"
    );
}

#[test]
fn connect_retries_then_names_the_address() {
    // A port that was free a moment ago: nothing listens there.
    let addr = std::net::TcpListener::bind(any_port())
        .unwrap()
        .local_addr()
        .unwrap();
    let e = "tcp"
        .parse::<TransportSpec>()
        .unwrap()
        .connect(addr, &quick())
        .map(|_| ())
        .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("could not connect to {addr} after 3 attempts")
    );
}

#[test]
fn udp_reports_a_server_that_never_answers_and_a_silent_peer() {
    // Nothing listens: the hello goes unanswered.
    let addr = closed_udp_port();
    let cfg = Config {
        connect_timeout: Duration::from_millis(200),
        ..quick()
    };
    let start = Instant::now();
    let e = "udp"
        .parse::<TransportSpec>()
        .unwrap()
        .connect(addr, &cfg)
        .map(|_| ())
        .unwrap_err();
    assert!(
        e.to_string()
            .starts_with(&format!("could not connect to {addr} after ")),
        "{e}"
    );
    assert!(start.elapsed() < Duration::from_secs(3));
    // A connected peer that says nothing: the receiver times out.
    let (e, _) = pair(
        "udp",
        &quick(),
        |mut ch| {
            let mut b = [0u8; 1];
            ch.recv(&mut b).unwrap_err()
        },
        |ch| {
            thread::sleep(Duration::from_millis(700));
            drop(ch);
            Error::Poisoned
        },
    );
    assert_eq!(
        e.to_string(),
        "the peer was silent for 400ms while receiving"
    );
}

#[test]
fn udp_close_is_the_end_of_the_stream_and_counters_agree() {
    let (s, c) = pair(
        "udp:mtu=1200",
        &Config::default(),
        |ch| {
            let mut ch = Framed::new(ch);
            for i in 0..50u64 {
                assert_eq!(ch.recv_message().unwrap(), pattern(i as usize * 300, i));
            }
            assert!(matches!(ch.recv_message(), Err(Error::Closed { .. })));
            ch.stats()
        },
        |ch| {
            let mut ch = Framed::new(ch);
            for i in 0..50u64 {
                ch.send_message(&pattern(i as usize * 300, i)).unwrap();
            }
            ch.close().unwrap();
            ch.stats()
        },
    );
    assert_eq!(c.sent, s.received);
    let payload: u64 = (0..50u64).map(|i| i * 300 + 8).sum();
    // 1200 - 28 - 24 = 1148 data bytes per datagram, each with a 24-byte header.
    assert_eq!(c.sent, payload + payload.div_ceil(1148) * 24);
}

#[test]
fn a_client_may_start_before_its_server() {
    let addr = std::net::TcpListener::bind(any_port())
        .unwrap()
        .local_addr()
        .unwrap();
    let cfg = Config {
        connect_attempts: 100,
        retry_delay: Duration::from_millis(10),
        ..Config::default()
    };
    for spec in ["tcp", "mtcp:streams=2", "udp", "udt", "quic"]
        .into_iter()
        .filter(|s| built(s))
    {
        let spec: TransportSpec = spec.parse().unwrap();
        let addr = if matches!(spec.name(), "udp" | "udt" | "quic") {
            closed_udp_port()
        } else {
            addr
        };
        let (s2, c2) = (spec.clone(), cfg.clone());
        let client = thread::spawn(move || {
            let mut ch = Framed::new(s2.connect(addr, &c2).unwrap());
            ch.recv_message().unwrap()
        });
        thread::sleep(Duration::from_millis(150));
        let listener = spec.listen(addr, &cfg).unwrap();
        let mut ch = Framed::new(listener.accept().unwrap());
        ch.send_message(b"late").unwrap();
        ch.flush().unwrap();
        assert_eq!(client.join().unwrap(), b"late", "{spec}");
    }
}

#[test]
fn congestion_control_is_set_or_clearly_refused() {
    let e = check_congestion_control("no-such-cc").unwrap_err();
    assert!(
        e.to_string().starts_with(
            "TCP congestion control 'no-such-cc' is not available in this kernel (available: "
        ),
        "{e}"
    );
    let e = "tcp:cc=no-such-cc"
        .parse::<TransportSpec>()
        .unwrap()
        .listen(any_port(), &quick())
        .unwrap_err();
    assert!(matches!(e, Error::CongestionControl { .. }), "{e}");
    match check_congestion_control("bbr") {
        Ok(()) => {
            let spec: TransportSpec = "tcp-bbr".parse().unwrap();
            assert_eq!(spec.congestion_control(), Some("bbr"));
        }
        Err(e) => eprintln!("skipping: this kernel lacks bbr: {e}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Whatever bytes a hostile peer sends, receiving ends in messages or a clear error,
    /// never a panic or a hang (the peer then closes, or stays silent past the timeout).
    #[test]
    fn hostile_bytes_give_messages_or_an_error(
        garbage in prop::collection::vec(any::<u8>(), 0..300),
        mtcp in any::<bool>(),
        stay_silent in any::<bool>(),
    ) {
        let spec = if mtcp { "mtcp:streams=1" } else { "tcp" };
        // The short I/O timeout is what is tested; the accept waits for a peer thread that
        // a busy host may schedule late.
        let cfg = Config {
            io_timeout: Duration::from_millis(150),
            accept_timeout: Some(Duration::from_secs(10)),
            ..quick()
        };
        let spec: TransportSpec = spec.parse().unwrap();
        let listener = spec.listen(any_port(), &cfg).unwrap();
        let addr = listener.local_addr();
        let peer = thread::spawn(move || {
            let mut s = TcpStream::connect(addr).unwrap();
            if mtcp {
                let mut hello = b"TPMT\x01\x00\x01\x00\x00".to_vec();
                hello.extend_from_slice(&7u64.to_be_bytes());
                s.write_all(&hello).unwrap();
                let mut answer = [0; 7];
                s.read_exact(&mut answer).unwrap();
            }
            let _ = s.write_all(&garbage);
            if stay_silent {
                thread::sleep(Duration::from_millis(400));
            }
        });
        let mut ch = Framed::with_max_message(listener.accept().unwrap(), 100);
        let start = Instant::now();
        let mut messages = 0;
        let err = loop {
            match ch.recv_message() {
                Ok(m) => {
                    prop_assert!(m.len() <= 100);
                    messages += 1;
                }
                Err(e) => break e,
            }
        };
        prop_assert!(messages <= 300 / 8 + 1);
        prop_assert!(
            matches!(
                err,
                Error::Closed { .. }
                    | Error::Timeout { .. }
                    | Error::MessageTooLarge { .. }
                    | Error::Malformed { .. }
            ),
            "{}", err
        );
        prop_assert!(start.elapsed() < Duration::from_secs(3));
        peer.join().unwrap();
    }
}

#[test]
fn a_peer_that_never_reads_makes_sending_time_out() {
    let specs = ["tcp", "mtcp:streams=2", "quic:window=1048576"];
    for spec in specs.into_iter().filter(|s| built(s)) {
        let spec: TransportSpec = spec.parse().unwrap();
        let listener = spec.listen(any_port(), &quick()).unwrap();
        let addr = listener.local_addr();
        // The server accepts, then neither reads nor closes until the sender gave up.
        let (tx, rx) = std::sync::mpsc::channel::<()>();
        let h = thread::spawn(move || {
            let ch = listener.accept().unwrap();
            let _ = rx.recv();
            drop(ch);
        });
        let mut ch = spec.connect(addr, &quick()).unwrap();
        let chunk = vec![0u8; 1 << 20];
        let start = Instant::now();
        let e = (0..1024)
            .try_for_each(|_| ch.send(&chunk).and_then(|()| ch.flush()))
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the peer was silent for 400ms while "),
            "{spec}: {e}"
        );
        assert!(start.elapsed() < Duration::from_secs(5), "{spec}");
        tx.send(()).unwrap();
        h.join().unwrap();
    }
}

/// Message sizes at the edges of frame headers and buffers.
const SIZES: [usize; 9] = [0, 1, 7, 8, 1023, 65536, 65537, (1 << 20) + 13, 3 << 20];

#[test]
fn the_memory_pair_keeps_the_same_contract() {
    let (a, b) = memory_pair(Duration::from_secs(10));
    let server = thread::spawn(move || {
        let mut ch = Framed::new(b);
        let all: Vec<Vec<u8>> = SIZES.iter().map(|_| ch.recv_message().unwrap()).collect();
        for m in &all {
            ch.send_message(m).unwrap();
        }
        ch.close().unwrap();
        // The peer closed after its last message: the end of the stream.
        assert!(matches!(ch.recv_message(), Err(Error::Closed { .. })));
        ch.stats()
    });
    let mut ch = Framed::new(a);
    for (i, &n) in SIZES.iter().enumerate() {
        ch.send_message(&pattern(n, i as u64)).unwrap();
    }
    for (i, &n) in SIZES.iter().enumerate() {
        assert!(
            ch.recv_message().unwrap() == pattern(n, i as u64),
            "message {i}"
        );
    }
    ch.close().unwrap();
    assert!(matches!(ch.recv_message(), Err(Error::Closed { .. })));
    let (s, c) = (server.join().unwrap(), ch.stats());
    assert_eq!((c.sent, c.received), (s.received, s.sent));

    // A silent peer times out; a dropped one closes.
    let (mut a, b) = memory_pair(Duration::from_millis(50));
    let mut one = [0u8; 1];
    assert!(matches!(a.recv(&mut one), Err(Error::Timeout { .. })));
    drop(b);
    assert!(matches!(a.recv(&mut one), Err(Error::Closed { .. })));
}

#[test]
fn the_kernel_gets_the_buffer_size_asked_for_on_both_ends() {
    // Linux reads back twice what was set (its bookkeeping half), capped at
    // net.core.{r,w}mem_max first unless this process may force more (CAP_NET_ADMIN).
    let caps = transputation_transport::sizing::kernel_buffer_caps();
    // Bytes moved through the resized sockets: for udp, which repairs no loss, few enough to
    // sit in the receive buffer whole, so that a receiver held off the CPU (a loaded test
    // machine) loses none.
    for (spec, asked, per_socket, moved) in [
        ("tcp", 192 << 10, 192 << 10, 4 << 20),
        ("mtcp:streams=3", 3 << 20, 1 << 20, 4 << 20),
        ("udp", 1 << 20, 1 << 20, 256 << 10),
        ("tcp", 8 << 20, 8 << 20, 4 << 20),
    ] {
        let cfg = Config {
            buffer_bytes: Some(asked),
            ..quick()
        };
        let (server, client) = pair(
            spec,
            &cfg,
            move |ch| {
                let b = ch.socket_buffers();
                // Move some bytes through the resized sockets too.
                let mut ch = Framed::new(ch);
                assert!(ch.recv_message().unwrap() == pattern(moved, 5));
                ch.send_message(b"ok").unwrap();
                ch.close().unwrap();
                b.unwrap()
            },
            move |ch| {
                let b = ch.socket_buffers();
                let mut ch = Framed::new(ch);
                ch.send_message(&pattern(moved, 5)).unwrap();
                assert_eq!(ch.recv_message().unwrap(), b"ok");
                b.unwrap()
            },
        );
        for (end, got) in [("server", server), ("client", client)] {
            for (dir, got, cap) in [
                ("send", got.send, caps.map(|c| c.1)),
                ("recv", got.recv, caps.map(|c| c.0)),
            ] {
                let capped = cap.is_some_and(|c| c < per_socket as u64 && got as u64 == 2 * c);
                assert!(
                    got >= per_socket || capped,
                    "{spec} {end} {dir}: asked {per_socket}, got {got} (cap {cap:?})"
                );
                if capped {
                    eprintln!("{spec} {end} {dir}: capped at the system's {cap:?}");
                }
            }
        }
    }
}

/// A `tcp` channel dropped without `close` sends what it still buffers (the contract's
/// best-effort flush): small messages that never filled the buffer arrive, and so does a
/// protected channel's last record.
#[test]
fn a_tcp_channel_dropped_without_close_delivers_what_it_buffered() {
    use transputation_transport::secure::keys::Psk;
    use transputation_transport::{Credentials, SecureChannel};
    let (got, _) = pair(
        "tcp",
        &Config::default(),
        |ch| {
            let mut f = Framed::new(ch);
            (0..3)
                .map(|_| f.recv_message().unwrap())
                .collect::<Vec<_>>()
        },
        |ch| {
            let mut f = Framed::new(ch);
            for i in 0..3u8 {
                f.send_message(&[i; 100]).unwrap();
            }
            drop(f);
            Vec::new()
        },
    );
    assert_eq!(got, vec![vec![0; 100], vec![1; 100], vec![2; 100]]);
    let (got, _) = pair(
        "tcp",
        &Config::default(),
        |ch| {
            let creds = Credentials::Psk(Psk::from_bytes([3; 32]));
            let mut f = Framed::new(SecureChannel::server(ch, &creds).unwrap());
            vec![f.recv_message().unwrap()]
        },
        |ch| {
            let creds = Credentials::Psk(Psk::from_bytes([3; 32]));
            let mut f = Framed::new(SecureChannel::client(ch, &creds).unwrap());
            f.send_message(b"last words").unwrap();
            drop(f);
            Vec::new()
        },
    );
    assert_eq!(got, vec![b"last words".to_vec()]);
}
