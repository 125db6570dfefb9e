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
