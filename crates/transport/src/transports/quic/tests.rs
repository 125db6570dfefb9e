//! The `quic` transport's own tests: congestion names, windows, MTUs, and the behaviour at
//! the edges (closed ports, silent peers, a peer closing mid-message, the tail on drop).

use super::params::DEFAULT_WINDOW;
use super::*;

#[test]
fn congestion_names_round_trip() {
    for cc in [
        QuicCongestion::Cubic,
        QuicCongestion::Bbr,
        QuicCongestion::NewReno,
    ] {
        assert_eq!(QuicCongestion::from_name(cc.name()), Some(cc));
    }
    assert_eq!(QuicCongestion::from_name("reno"), None);
    assert_eq!(QuicCongestion::default(), QuicCongestion::Cubic);
}

#[test]
fn the_window_comes_from_the_option_then_the_config_then_the_default() {
    let cfg = Config::default();
    assert_eq!(window_for(None, &cfg), 32 << 20);
    let sized = Config {
        buffer_bytes: Some(75_000_000),
        ..Config::default()
    };
    assert_eq!(window_for(None, &sized), 75_000_000);
    assert_eq!(window_for(Some(1 << 20), &sized), 1 << 20);
    let tiny = Config {
        buffer_bytes: Some(100),
        ..Config::default()
    };
    assert_eq!(window_for(None, &tiny), MIN_WINDOW);
}

#[test]
fn an_mtu_sets_the_starting_payload_and_the_accepted_size() {
    let v4: SocketAddr = "127.0.0.1:1".parse().unwrap();
    let v6: SocketAddr = "[::1]:1".parse().unwrap();
    let p = |mtu| Params {
        cc: QuicCongestion::Cubic,
        window: DEFAULT_WINDOW,
        mtu,
        initial_window: None,
        lanes: DEFAULT_LANES,
    };
    assert_eq!(p(None).udp_payload(&v4), None);
    assert_eq!(p(Some(1500)).udp_payload(&v4), Some(1472));
    assert_eq!(p(Some(1500)).udp_payload(&v6), Some(1452));
    assert_eq!(p(Some(MIN_MTU)).udp_payload(&v6), Some(1232));
    assert_eq!(p(Some(MAX_MTU)).udp_payload(&v4), Some(9188));
    // Building the configurations checks quinn's ranges.
    for mtu in [None, Some(MIN_MTU), Some(9000), Some(MAX_MTU)] {
        for a in [v4, v6] {
            p(mtu).transport(&a, &Config::default());
            p(mtu).endpoint(&a);
        }
    }
}

#[test]
fn the_initial_window_reaches_the_controller() {
    let cfg = Config {
        io_timeout: Duration::from_secs(5),
        ..Config::default()
    };
    for (cc, iw) in [
        (QuicCongestion::Bbr, Some(4 << 20)),
        (QuicCongestion::Cubic, Some(1 << 20)),
        (QuicCongestion::NewReno, Some(MIN_INITIAL_WINDOW)),
        (QuicCongestion::Bbr, None),
    ] {
        let params = Params {
            cc,
            window: DEFAULT_WINDOW,
            mtu: None,
            initial_window: iw,
            lanes: DEFAULT_LANES,
        };
        let l = QuicListener::bind("127.0.0.1:0".parse().unwrap(), &params, &cfg).unwrap();
        let addr = l.local_addr();
        let server_cfg = cfg.clone();
        let server = std::thread::spawn(move || {
            let ch = l.accept(&server_cfg).unwrap();
            ch.conn.stats().path.cwnd
        });
        let ch = connect(addr, &params, &cfg).unwrap();
        let client = ch.conn.stats().path.cwnd;
        let server = server.join().unwrap();
        // Nothing sent yet beyond the handshake: the initial window (grown by the
        // acknowledged handshake bytes, for some controllers); quinn's default for bbr
        // is 200 packets of 1200 bytes.
        let w = iw.unwrap_or(240_000);
        for got in [client, server] {
            assert!((w..w + (16 << 10)).contains(&got), "{cc}: {got} for {w}");
        }
    }
}

mod hinted_controller {
    //! [`HintedController`] alone: when it takes a hint, when it refuses one.

    use std::time::Instant;

    use quinn::congestion::{Bbr, Controller, ControllerFactory, Cubic, NewReno};

    use super::super::hinted::{Hint, HintCell, HintedController, HintedFactory};
    use super::*;
    use crate::SenderHint;

    fn hint(cc: &str, iw: Option<u64>) -> SenderHint {
        SenderHint {
            congestion: Some(cc.to_string()),
            initial_window: iw,
            send_buffer: None,
            start_rate: None,
        }
    }

    /// A controller of the listener's default (cubic, quinn's initial window) with its cell.
    fn hinted() -> (Box<dyn Controller>, Arc<HintCell>) {
        let cell = Arc::new(HintCell::default());
        let factory = Arc::new(HintedFactory::new(
            QuicCongestion::Cubic.factory(None),
            cell.clone(),
        ));
        (factory.build(Instant::now(), 1200), cell)
    }

    fn parts(c: Box<dyn Controller>) -> (Option<Hint>, Box<dyn Controller>) {
        let c = c
            .into_any()
            .downcast::<HintedController>()
            .expect("a HintedController");
        (c.applied(), c.into_inner())
    }

    #[test]
    fn a_hint_replaces_the_controller_at_the_next_send() {
        let (mut c, cell) = hinted();
        assert_eq!(c.window(), 12_000);
        cell.apply(&hint("bbr", Some(3_000_000))).unwrap();
        // window() cannot change state: the old window holds until a callback.
        assert_eq!(c.window(), 12_000);
        c.on_sent(Instant::now(), 1200, 1);
        assert_eq!(c.window(), 3_000_000);
        assert_eq!(c.initial_window(), 3_000_000);
        let (applied, inner) = parts(c.clone_box());
        assert_eq!(
            applied,
            Some(Hint {
                cc: QuicCongestion::Bbr,
                initial_window: Some(3_000_000)
            })
        );
        assert!(inner.into_any().downcast::<Bbr>().is_ok());
        // A second hint swaps again.
        cell.apply(&hint("newreno", None)).unwrap();
        c.on_sent(Instant::now(), 1200, 2);
        assert_eq!(c.window(), 12_000);
        let (_, inner) = parts(c);
        assert!(inner.into_any().downcast::<NewReno>().is_ok());
    }

    #[test]
    fn a_clone_made_before_the_hint_takes_it_too() {
        let (c, cell) = hinted();
        let mut copy = c.clone_box();
        cell.apply(&hint("newreno", Some(50_000))).unwrap();
        copy.on_sent(Instant::now(), 1200, 1);
        assert_eq!(copy.window(), 50_000);
    }

    #[test]
    fn a_hint_after_persistent_congestion_is_refused() {
        let (mut c, cell) = hinted();
        let t = Instant::now();
        c.on_sent(t, 1200, 1);
        c.on_congestion_event(t, t, true, 1200);
        let collapsed = c.window();
        assert!(collapsed < 12_000, "{collapsed}");
        cell.apply(&hint("bbr", Some(3_000_000))).unwrap();
        c.on_sent(Instant::now(), 1200, 2);
        assert_eq!(c.window(), collapsed);
        let (applied, inner) = parts(c);
        assert_eq!(applied, None);
        assert!(inner.into_any().downcast::<Cubic>().is_ok());
    }

    #[test]
    fn a_bad_hint_is_an_error_naming_it_and_changes_nothing() {
        let (mut c, cell) = hinted();
        for (h, option) in [
            (hint("vegas", None), "cc"),
            (hint("bbr", Some(MIN_INITIAL_WINDOW - 1)), "iw"),
            (hint("cubic", Some(MAX_WINDOW + 1)), "iw"),
        ] {
            match cell.apply(&h) {
                Err(Error::BadOption { option: o, .. }) => assert_eq!(o, option),
                other => panic!("{h:?}: {other:?}"),
            }
        }
        c.on_sent(Instant::now(), 1200, 1);
        assert_eq!(c.window(), 12_000);
        assert_eq!(parts(c).0, None);
    }
}

/// The controller of a connection and the hint it was built from, as quinn holds it now.
fn hinted_state(
    ch: &QuicChannel,
) -> (
    Option<hinted::Hint>,
    Box<dyn quinn::congestion::Controller>,
) {
    let c = ch
        .conn
        .congestion_state()
        .into_any()
        .downcast::<hinted::HintedController>()
        .expect("an accepted connection's controller is a HintedController");
    (c.applied(), c.into_inner())
}

/// The name of quinn's controller behind a box.
fn kind(c: Box<dyn quinn::congestion::Controller>) -> QuicCongestion {
    let any = c.into_any();
    if any.is::<quinn::congestion::Bbr>() {
        QuicCongestion::Bbr
    } else if any.is::<quinn::congestion::NewReno>() {
        QuicCongestion::NewReno
    } else {
        assert!(any.is::<quinn::congestion::Cubic>(), "an unknown controller");
        QuicCongestion::Cubic
    }
}

#[test]
fn each_accepted_connection_takes_its_own_hint() {
    const BULK: usize = 4 << 20;
    let cfg = Config {
        io_timeout: Duration::from_secs(10),
        ..Config::default()
    };
    // The listener's own choice: cubic from quinn's 12,000-byte window.
    let params = Params {
        cc: QuicCongestion::Cubic,
        window: DEFAULT_WINDOW,
        mtu: None,
        initial_window: None,
        lanes: DEFAULT_LANES,
    };
    let l = QuicListener::bind("127.0.0.1:0".parse().unwrap(), &params, &cfg).unwrap();
    let addr = l.local_addr();
    // Three connections open at once on one listener: two hinted differently, one not.
    let hints = [
        Some(("bbr", 1_000_000, QuicCongestion::Bbr)),
        Some(("newreno", 300_000, QuicCongestion::NewReno)),
        None,
    ];
    let client_cfg = cfg.clone();
    let clients = std::thread::spawn(move || {
        let channels: Vec<_> = (0..hints.len())
            .map(|_| connect(addr, &params, &client_cfg).unwrap())
            .collect();
        let served: Vec<_> = channels
            .into_iter()
            .map(|mut ch| {
                std::thread::spawn(move || {
                    let mut tag = [0u8; 1];
                    ch.recv(&mut tag).unwrap();
                    ch.send(&tag).unwrap();
                    let mut bulk = vec![0u8; BULK];
                    ch.recv(&mut bulk).unwrap();
                    assert!(bulk.iter().all(|&b| b == tag[0]), "bulk of {}", tag[0]);
                    ch.send(&tag).unwrap();
                    ch.close().unwrap();
                })
            })
            .collect();
        for s in served {
            s.join().unwrap();
        }
    });
    let mut accepted: Vec<_> = hints.iter().map(|_| l.accept(&cfg).unwrap()).collect();
    for (i, (ch, hint)) in accepted.iter_mut().zip(hints).enumerate() {
        let (applied, inner) = hinted_state(ch);
        assert_eq!((applied, kind(inner)), (None, QuicCongestion::Cubic), "#{i}");
        let tuning = ch.sender_tuning().expect("an accepted channel can be retuned");
        if let Some((cc, iw, _)) = hint {
            tuning
                .apply(&crate::SenderHint {
                    congestion: Some(cc.to_string()),
                    initial_window: Some(iw),
                    send_buffer: None,
                    start_rate: None,
                })
                .unwrap();
        }
        // One byte each way: this end's first packet after the hint swaps the controller.
        let tag = [i as u8 + 1];
        ch.send(&tag).unwrap();
        let mut echo = [0u8; 1];
        ch.recv(&mut echo).unwrap();
        assert_eq!(echo, tag);
        let (want_cc, want_iw) = hint.map_or((QuicCongestion::Cubic, 12_000), |(_, iw, cc)| (cc, iw));
        let (applied, inner) = hinted_state(ch);
        assert_eq!(applied.map(|h| (h.cc, h.initial_window)), hint.map(|(_, iw, cc)| (cc, Some(iw))), "#{i}");
        assert_eq!(kind(inner), want_cc, "#{i}");
        // The window is the hinted initial one, grown at most by the few bytes acknowledged
        // since (the listener's would be about 12,000 for all three).
        let cwnd = ch.conn.stats().path.cwnd;
        assert!((want_iw..want_iw + (16 << 10)).contains(&cwnd), "#{i}: cwnd {cwnd}, hinted {want_iw}");
        // The bulk message leaves under the hinted controller, which stays.
        ch.send(&vec![tag[0]; BULK]).unwrap();
        ch.recv(&mut echo).unwrap();
        let (_, inner) = hinted_state(ch);
        assert_eq!(kind(inner), want_cc, "#{i} after the bulk message");
    }
    for mut ch in accepted {
        ch.close().unwrap();
    }
    clients.join().unwrap();
    // A client's channel offers no tuning.
    let l2 = QuicListener::bind("127.0.0.1:0".parse().unwrap(), &params, &cfg).unwrap();
    let addr2 = l2.local_addr();
    let server = std::thread::spawn(move || l2.accept(&Config::default()).map(|_| ()));
    let client = connect(addr2, &params, &cfg).unwrap();
    assert!(client.sender_tuning().is_none());
    server.join().unwrap().unwrap();
}

/// A listener and a connected pair of its channels (server, client) with `lanes` lanes at
/// most, under `cfg`.
fn lane_pair(lanes: u32, cfg: &Config) -> (QuicChannel, QuicChannel, QuicListener) {
    let params = Params {
        cc: QuicCongestion::Cubic,
        window: DEFAULT_WINDOW,
        mtu: None,
        initial_window: None,
        lanes,
    };
    let l = QuicListener::bind("127.0.0.1:0".parse().unwrap(), &params, cfg).unwrap();
    let addr = l.local_addr();
    let client_cfg = cfg.clone();
    let client = std::thread::spawn(move || connect(addr, &params, &client_cfg).unwrap());
    let server = QuicListener::accept(&l, cfg).unwrap();
    (server, client.join().unwrap(), l)
}

#[test]
fn lanes_carry_streams_of_their_own_in_both_directions() {
    let cfg = Config {
        io_timeout: Duration::from_secs(10),
        ..Config::default()
    };
    let (mut server, mut client, _l) = lane_pair(3, &cfg);
    assert_eq!((server.max_lanes(), client.max_lanes()), (3, 3));
    // The client's lanes open without waiting for the server; the server's wait for them.
    let client_side = std::thread::spawn(move || {
        let mut lanes = client.open_lanes(3).unwrap();
        assert_eq!(client.max_lanes(), 0, "lanes open once");
        for (i, lane) in lanes.iter_mut().enumerate().rev() {
            lane.send(&vec![i as u8; 300_000 + i]).unwrap();
            lane.flush().unwrap();
        }
        for (i, lane) in lanes.iter_mut().enumerate() {
            let mut back = vec![0u8; 1000 * (i + 1)];
            lane.recv(&mut back).unwrap();
            assert!(back.iter().all(|&b| b == 100 + i as u8), "lane {i}");
            assert_eq!(lane.stats().received, back.len() as u64, "the hello is not counted");
        }
        for mut lane in lanes {
            lane.close().unwrap();
        }
        // The first stream outlives its lanes.
        client.send(b"still here").unwrap();
        let mut bye = [0u8; 3];
        client.recv(&mut bye).unwrap();
        assert_eq!(&bye, b"bye");
        client.close().unwrap();
    });
    let mut lanes = server.open_lanes(3).unwrap();
    for (i, lane) in lanes.iter_mut().enumerate() {
        let mut got = vec![0u8; 300_000 + i];
        lane.recv(&mut got).unwrap();
        assert!(got.iter().all(|&b| b == i as u8), "lane {i}");
        lane.send(&vec![100 + i as u8; 1000 * (i + 1)]).unwrap();
        lane.flush().unwrap();
    }
    for (i, mut lane) in lanes.into_iter().enumerate() {
        let mut end = [0u8; 1];
        assert!(matches!(lane.recv(&mut end), Err(Error::Closed { .. })), "lane {i} ends");
        lane.close().unwrap();
    }
    let mut msg = [0u8; 10];
    server.recv(&mut msg).unwrap();
    assert_eq!(&msg, b"still here");
    server.send(b"bye").unwrap();
    server.close().unwrap();
    client_side.join().unwrap();
}

#[test]
fn lanes_beyond_the_limit_are_refused() {
    let cfg = Config {
        io_timeout: Duration::from_secs(5),
        ..Config::default()
    };
    let (_server, mut client, _l) = lane_pair(2, &cfg);
    assert!(matches!(client.open_lanes(3), Err(Error::Mismatch { .. })));
    assert!(client.open_lanes(0).unwrap().is_empty());
    let (_server, mut client, _l) = lane_pair(0, &cfg);
    assert_eq!(client.max_lanes(), 0);
    assert!(matches!(client.open_lanes(1), Err(Error::Mismatch { .. })));
}

#[test]
fn a_bad_lane_hello_or_no_lane_is_an_error_naming_it() {
    let cfg = Config {
        io_timeout: Duration::from_millis(1500),
        ..Config::default()
    };
    // A stream with another hello, one with an index out of range, one opened twice.
    for (hello, want) in [
        (*b"TPQX\x01\x00\x00\x00", "wrong magic"),
        (*b"TPQL\x01\x00\x00\x07", "lane 7 of 2"),
        (*b"TPQL\x01\x00\x00\x00", "lane 0 twice"),
    ] {
        let (mut server, client, _l) = lane_pair(2, &cfg);
        let conn = client.conn.clone();
        client.driver.block_on(async move {
            for _ in 0..2 {
                let (mut send, _recv) = conn.open_bi().await.unwrap();
                send.write_all(&hello).await.unwrap();
            }
        });
        match server.open_lanes(2) {
            Err(Error::Malformed { what }) => assert!(what.contains(want), "{what}"),
            Err(e) => panic!("{want}: {e}"),
            Ok(lanes) => panic!("{want}: {} lanes opened", lanes.len()),
        }
        drop(client);
    }
    // A peer that opens no lane: a timeout, not a hang.
    let (mut server, _client, _l) = lane_pair(2, &cfg);
    assert!(matches!(server.open_lanes(2), Err(Error::Timeout { .. })));
}

#[test]
fn protected_lanes_carry_records_under_keys_of_their_own() {
    use crate::secure::keys::Psk;
    use crate::{Credentials, SecureChannel};
    let cfg = Config {
        io_timeout: Duration::from_secs(10),
        ..Config::default()
    };
    let (server, client, _l) = lane_pair(2, &cfg);
    let creds = || Credentials::Psk(Psk::from_bytes([9; 32]));
    let client_side = std::thread::spawn(move || {
        let mut ch = SecureChannel::client_early(client, &creds()).unwrap();
        ch.send(b"hello").unwrap();
        assert_eq!(ch.max_lanes(), 2);
        // Opening lanes runs the handshake that their keys come from.
        let mut lanes = ch.open_lanes(2).unwrap();
        assert_eq!(ch.max_lanes(), 0);
        for (i, lane) in lanes.iter_mut().enumerate() {
            lane.send(&vec![i as u8 + 1; 2 << 20]).unwrap();
            lane.close().unwrap();
        }
        let mut end = [0u8; 3];
        ch.recv(&mut end).unwrap();
        assert_eq!(&end, b"end");
        ch.close().unwrap();
    });
    let mut ch = SecureChannel::server(server, &creds()).unwrap();
    let mut hello = [0u8; 5];
    ch.recv(&mut hello).unwrap();
    assert_eq!(&hello, b"hello");
    let mut lanes = ch.open_lanes(2).unwrap();
    // Read in the other order: neither lane waits for the other.
    for (i, lane) in lanes.iter_mut().enumerate().rev() {
        let mut got = vec![0u8; 2 << 20];
        lane.recv(&mut got).unwrap();
        assert!(got.iter().all(|&b| b == i as u8 + 1), "lane {i}");
        let mut more = [0u8; 1];
        // The close record: the lane's authenticated end.
        assert!(matches!(lane.recv(&mut more), Err(Error::Closed { .. })));
        // Records and their tags count; the bytes are more than the plaintext.
        assert!(lane.stats().received > 2 << 20);
    }
    ch.send(b"end").unwrap();
    ch.close().unwrap();
    client_side.join().unwrap();
}
