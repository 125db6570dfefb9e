//! The rate estimate, the packet layout, and a server and a prober over loopback.

use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::*;

#[test]
fn the_rate_leaves_out_the_first_quarter() {
    let t0 = Instant::now();
    let at = |us: u64| t0 + Duration::from_micros(us);
    // A burst of 4 packets at once, then 1 packet every 100 µs: 12 packets, the
    // span starts at index 3 (still in the burst) and ends 800 µs later.
    let mut arrivals: Vec<(Instant, u64)> = (0..4).map(|_| (at(0), 1000)).collect();
    arrivals.extend((1..=8).map(|i| (at(i * 100), 1000)));
    assert_eq!(steady_rate(&arrivals), (800_000, 8000));
    // Two packets: first to last.
    assert_eq!(steady_rate(&arrivals[..2]), (0, 1000));
    assert_eq!(steady_rate(&arrivals[4..6]), (100_000, 1000));
    assert_eq!(steady_rate(&arrivals[..1]), (0, 0));
    assert_eq!(steady_rate(&[]), (0, 0));
}

#[test]
fn packets_parse_back_and_strangers_do_not() {
    let p = packet(TRAIN, 0x0102_0304_0506_0708, 7, 9, 100);
    assert_eq!(p.len(), 100);
    assert_eq!(parse(&p), Some((TRAIN, 0x0102_0304_0506_0708, 7, 9)));
    assert_eq!(packet(PING, 1, 2, 3, 0).len(), HEADER);
    assert_eq!(parse(&p[..HEADER - 1]), None);
    let mut wrong = p.clone();
    wrong[0] = b'X';
    assert_eq!(parse(&wrong), None);
}

#[test]
fn a_prober_measures_loopback_and_the_server_stops_when_told() {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let served = s.spawn(|| serve(&server, Duration::from_secs(10), &stop));
        let settings = Settings {
            pings: 5,
            train: 200,
            ..Settings::default()
        };
        let m = probe(prober_socket(addr).unwrap(), addr, &settings, || {}).unwrap();
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let started = Instant::now();
        served.join().unwrap().unwrap();
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "stopped at once"
        );
        assert_eq!((m.pings_sent, m.pings_answered), (5, 5));
        assert!(0.0 < m.rtt_ms_min && m.rtt_ms_min <= m.rtt_ms_median);
        assert!(m.rtt_ms_median <= m.rtt_ms_max && m.rtt_ms_max < 1000.0);
        assert_eq!(m.train_sent, 200);
        assert!(m.train_received > 0 && m.train_received <= 200);
        assert!(m.bandwidth_mbps.is_some_and(|b| b > 0.0), "{m:?}");
        assert_eq!(m.packet_bytes, 1200);
    });
}

#[test]
fn a_missing_server_and_a_missing_prober_are_errors_after_their_patience() {
    // A bound socket that nobody serves on: the prober gives up after its patience.
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let settings = Settings {
        patience: Duration::from_secs(1),
        ..Settings::default()
    };
    let mut told = 0;
    let e = probe(prober_socket(addr).unwrap(), addr, &settings, || told += 1).unwrap_err();
    assert!(matches!(e, Error::NoServer { .. }), "{e}");
    assert!(e
        .to_string()
        .contains(&format!("no answer from a probe server at {addr} for 1s")));
    assert!(told <= 1);

    let stop = AtomicBool::new(false);
    let e = serve(&silent, Duration::from_millis(300), &stop).unwrap_err();
    assert_eq!(e.to_string(), "no prober for 300ms");
}
