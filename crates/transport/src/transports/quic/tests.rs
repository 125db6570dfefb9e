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
