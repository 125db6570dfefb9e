//! The quick probe against a real server on loopback: what it measures, how long it takes,
//! how its trains grow, and that it works with a server that sends no arrival map.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::*;
use crate::server::serve_until;
use crate::wire::{parse, REPORT_BYTES};

/// Runs `f` against a server serving until `f` returns.
fn with_server<T>(f: impl FnOnce(SocketAddr) -> T) -> T {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let served = s.spawn(|| serve_until(&server, &stop));
        let out = f(addr);
        stop.store(true, Ordering::Relaxed);
        served.join().unwrap().unwrap();
        out
    })
}

fn quick(addr: SocketAddr, settings: &QuickSettings) -> Measurement {
    let sock = crate::socket::prober_socket(addr).unwrap();
    probe_quick(sock, addr, settings, || {}).unwrap()
}

#[test]
fn a_quick_probe_measures_loopback_and_its_trains_grow() {
    // Trains of 16, 64 and 128 packets (a budget that allows them all): 208 packets, small
    // enough for any receive buffer, so none is lost.
    let settings = QuickSettings {
        first_train: 16,
        growth: 4,
        max_train: 128,
        budget_extra: Duration::from_secs(2),
        ..QuickSettings::default()
    };
    let m = with_server(|addr| quick(addr, &settings));
    // A pong the server's thread answers late (a busy host pauses it for a millisecond
    // between pongs, on loopback more than the burst's wait) is not counted.
    assert_eq!(m.pings_sent, 5, "{m:?}");
    assert!((1..=5).contains(&m.pings_answered), "{m:?}");
    assert!(
        0.0 < m.rtt_ms_min && m.rtt_ms_min <= m.rtt_ms_median,
        "{m:?}"
    );
    assert!(
        m.rtt_ms_median <= m.rtt_ms_max && m.rtt_ms_max < 100.0,
        "{m:?}"
    );
    assert_eq!(m.trains, 3, "{m:?}");
    assert_eq!((m.train_sent, m.train_received), (208, 208), "{m:?}");
    assert_eq!(m.loss_rate, 0.0);
    assert_eq!(m.loss_evidence, LossEvidence::new(208, 0));
    assert_eq!(m.overflow_packets, 0);
    // The server may not time a loopback train (see the full probe's test); the floor by
    // the prober's clock is always there, and below a timed rate.
    let floor = m.bandwidth_floor_mbps.unwrap();
    assert!(floor > 0.0, "{m:?}");
    assert!(m.bandwidth_mbps.is_none_or(|b| b >= floor), "{m:?}");
    assert_eq!(m.packet_bytes, 1200);
    // 0 of 208 still allows 1.4 % loss at 95 %.
    assert!((m.loss_upper_bound_95() - 0.01430).abs() < 1e-4, "{m:?}");
}

#[test]
fn a_probe_asked_after_each_train_stops_when_told() {
    // The same trains as above; told "enough" after the second, the probe sends no third,
    // and each question sees the trains so far and a positive cost for the next.
    let settings = QuickSettings {
        first_train: 16,
        growth: 4,
        max_train: 128,
        budget_extra: Duration::from_secs(2),
        ..QuickSettings::default()
    };
    let mut asked = Vec::new();
    let m = with_server(|addr| {
        let sock = crate::socket::prober_socket(addr).unwrap();
        probe_quick_until(
            sock,
            addr,
            &settings,
            || {},
            |m, cost| {
                asked.push((m.trains, m.train_sent, cost));
                m.trains == 2
            },
        )
        .unwrap()
    });
    assert_eq!((m.trains, m.train_sent), (2, 80), "{m:?}");
    assert_eq!(asked.len(), 2, "{asked:?}");
    assert_eq!((asked[0].0, asked[0].1), (1, 16), "{asked:?}");
    assert_eq!((asked[1].0, asked[1].1), (2, 80), "{asked:?}");
    assert!(asked.iter().all(|a| a.2 > Duration::ZERO), "{asked:?}");
}

#[test]
fn the_default_quick_probe_keeps_to_its_budget() {
    let settings = QuickSettings::default();
    let (m, took) = with_server(|addr| {
        let started = Instant::now();
        let m = quick(addr, &settings);
        (m, started.elapsed())
    });
    let budget = settings.budget(Duration::from_secs_f64(m.rtt_ms_median / 1e3));
    // Loopback: 3 round trips are nothing, the 50 ms leave room for every train (32,
    // 256, then 1000 packets) on an idle host; a busy one may stop earlier, never later.
    // The margin is for a host so busy that the prober's thread is not scheduled (CI's
    // two cores run other tests beside this one, some of them flooding a socket).
    let margin = Duration::from_millis(300);
    assert!(
        took <= budget + margin,
        "{took:?} for a budget of {budget:?}: {m:?}"
    );
    assert!(m.duration_ms <= took.as_secs_f64() * 1e3, "{m:?}");
    assert!(m.trains >= 1 && m.train_sent >= 32, "{m:?}");
    assert!(m.loss_evidence.sent >= 32, "{m:?}");
    assert!(m.bandwidth_floor_mbps.is_some_and(|b| b > 0.0), "{m:?}");
}

#[test]
fn a_budget_without_room_sends_one_train() {
    let settings = QuickSettings {
        budget_rtts: 0.0,
        budget_extra: Duration::ZERO,
        ..QuickSettings::default()
    };
    let m = with_server(|addr| quick(addr, &settings));
    assert_eq!((m.trains, m.train_sent), (1, 32), "{m:?}");
    assert_eq!(m.loss_evidence, LossEvidence::new(32, 0), "{m:?}");
}

#[test]
fn two_quick_probes_at_once_are_counted_apart() {
    let settings = QuickSettings {
        first_train: 16,
        growth: 4,
        max_train: 64,
        budget_extra: Duration::from_secs(2),
        ..QuickSettings::default()
    };
    let (a, b) = with_server(|addr| {
        std::thread::scope(|s| {
            let a = s.spawn(|| quick(addr, &settings));
            let b = s.spawn(|| quick(addr, &settings));
            (a.join().unwrap(), b.join().unwrap())
        })
    });
    for m in [a, b] {
        assert_eq!((m.train_sent, m.train_received), (80, 80), "{m:?}");
        assert_eq!(m.loss_evidence, LossEvidence::new(80, 0), "{m:?}");
    }
}

/// A server as the probe's first version had it: one session at a time (a packet of
/// another session starts over), the 44-byte report alone. A `hostile` one also leaves
/// every ping whose sequence number is 3 or 4 modulo 5 unanswered, and tells `prober` who
/// the prober is (for a flood of strangers' packets from the same socket).
fn first_version_server(
    sock: &UdpSocket,
    stop: &AtomicBool,
    hostile: bool,
    prober: &std::sync::OnceLock<SocketAddr>,
) {
    sock.set_read_timeout(Some(Duration::from_millis(50)))
        .unwrap();
    let mut buf = vec![0u8; 65536];
    let (mut session, mut got) = (0u64, 0u32);
    while !stop.load(Ordering::Relaxed) {
        let Ok((n, from)) = sock.recv_from(&mut buf) else {
            continue;
        };
        let _ = prober.set(from);
        let Some((kind, s, seq, count)) = parse(&buf[..n]) else {
            continue;
        };
        if s != session && kind != crate::wire::REPORT && kind != crate::wire::PONG {
            (session, got) = (s, 0);
        }
        match kind {
            crate::wire::PING if !(hostile && seq % 5 >= 3) => {
                buf[4] = crate::wire::PONG;
                sock.send_to(&buf[..n], from).unwrap();
            }
            crate::wire::TRAIN => got += 1,
            crate::wire::ASK => {
                let report = crate::wire::Report {
                    received: got,
                    span_ns: 1_000_000,
                    bytes: 1_000_000,
                    kernel_timed: false,
                    ext: None,
                };
                let p = crate::wire::encode_report(s, seq, &report, 0);
                assert_eq!(p.len(), REPORT_BYTES);
                let _ = (count, sock.send_to(&p, from));
            }
            _ => {}
        }
    }
}

#[test]
fn lost_pongs_and_a_flood_of_strangers_do_not_hold_the_probe() {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    let settings = QuickSettings::default();
    let prober = std::sync::OnceLock::new();
    let (m, took) = std::thread::scope(|s| {
        s.spawn(|| first_version_server(&server, &stop, true, &prober));
        // Packets that are no probe packets, as fast as a thread sends them.
        s.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                match prober.get() {
                    Some(&to) => {
                        let _ = server.send_to(b"not a probe packet, but long enough", to);
                    }
                    None => std::thread::sleep(Duration::from_micros(100)),
                }
            }
        });
        let started = Instant::now();
        let m = quick(addr, &settings);
        let took = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        (m, took)
    });
    // Pings 3 and 4 go unanswered; 1 and 2 may come too late for a server that shares
    // two cores with the flood.
    assert_eq!(m.pings_sent, 5, "{m:?}");
    assert!((1..=3).contains(&m.pings_answered), "{m:?}");
    assert!(m.trains >= 1, "{m:?}");
    let budget = settings.budget(Duration::from_secs_f64(m.rtt_ms_median / 1e3));
    // The flood takes a core: room for a prober's thread that waits for the other.
    assert!(
        took <= budget + Duration::from_millis(300),
        "{took:?}: {m:?}"
    );
}

#[test]
fn a_server_without_arrival_maps_still_serves_the_quick_probe() {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = server.local_addr().unwrap();
    let stop = AtomicBool::new(false);
    let settings = QuickSettings {
        first_train: 16,
        growth: 4,
        max_train: 64,
        budget_extra: Duration::from_secs(2),
        ..QuickSettings::default()
    };
    let m = std::thread::scope(|s| {
        s.spawn(|| first_version_server(&server, &stop, false, &std::sync::OnceLock::new()));
        let m = quick(addr, &settings);
        stop.store(true, Ordering::Relaxed);
        m
    });
    assert_eq!(
        (m.trains, m.train_sent, m.train_received),
        (2, 80, 80),
        "{m:?}"
    );
    // Judged by the count: every packet is evidence.
    assert_eq!(m.loss_evidence, LossEvidence::new(80, 0));
    assert_eq!(m.bandwidth_mbps, Some(8000.0)); // 1 MB in 1 ms
}

#[test]
fn a_quick_probe_without_a_server_gives_up_after_its_patience() {
    let silent = UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap();
    let settings = QuickSettings {
        patience: Duration::from_secs(1),
        ..QuickSettings::default()
    };
    let started = Instant::now();
    let sock = crate::socket::prober_socket(addr).unwrap();
    let e = probe_quick(sock, addr, &settings, || {}).unwrap_err();
    assert!(matches!(e, Error::NoServer { .. }), "{e}");
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[test]
fn the_budget_is_round_trips_and_a_constant() {
    let s = QuickSettings::default();
    assert_eq!(
        s.budget(Duration::from_millis(100)),
        Duration::from_millis(350)
    );
    let odd = QuickSettings {
        budget_rtts: f64::NAN,
        ..s
    };
    assert_eq!(odd.budget(Duration::from_millis(100)), s.budget_extra);
}

#[test]
fn a_server_that_starts_late_gets_a_train_of_its_own() {
    // The first burst and the train behind it find no server; the train is sent again
    // once the server answers, and counted whole.
    let addr = UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let stop = AtomicBool::new(false);
    let settings = QuickSettings {
        first_train: 16,
        growth: 4,
        max_train: 64,
        budget_extra: Duration::from_secs(2),
        ..QuickSettings::default()
    };
    let m = std::thread::scope(|s| {
        let served = s.spawn(|| {
            std::thread::sleep(Duration::from_millis(300));
            let server = UdpSocket::bind(addr).unwrap();
            serve_until(&server, &stop)
        });
        let m = quick(addr, &settings);
        stop.store(true, Ordering::Relaxed);
        served.join().unwrap().unwrap();
        m
    });
    assert!(m.pings_sent > 5, "{m:?}");
    assert_eq!(
        (m.trains, m.train_sent, m.train_received),
        (2, 80, 80),
        "{m:?}"
    );
    assert_eq!(m.loss_evidence, LossEvidence::new(80, 0), "{m:?}");
}

#[test]
fn settings_beyond_reason_do_not_panic() {
    let huge = QuickSettings {
        budget_rtts: 1e300,
        budget_extra: Duration::MAX,
        max_train: u32::MAX,
        max_train_bytes: u64::MAX,
        growth: u32::MAX,
        first_train: 16,
        ..QuickSettings::default()
    };
    assert_eq!(huge.budget(Duration::from_millis(1)), Duration::MAX);
    // A deadline past what an instant holds, growth without bound: the bytes cap the
    // trains (16, then 64 packets of 1200 bytes).
    let capped = QuickSettings {
        max_train_bytes: 64 * 1200,
        ..huge
    };
    let m = with_server(|addr| quick(addr, &capped));
    assert_eq!((m.trains, m.train_sent), (2, 16 + 64), "{m:?}");
}

#[test]
fn a_second_train_is_sent_where_it_passes_within_the_budget() {
    let s = QuickSettings::default();
    let mbit = |m: f64| m * 1e6 / 8.0;
    let ms = Duration::from_millis;
    // 16 Mbit/s: the second train alone takes 157 ms.
    assert!(!s.grows_on(ms(5), mbit(16.0)));
    assert!(!s.grows_on(ms(40), mbit(16.0)));
    // 50 Mbit/s: 57 ms for both trains, over a 5 ms path's budget of 65 ms with its two
    // round trips, within a 50 ms path's.
    assert!(!s.grows_on(ms(5), mbit(50.0)));
    assert!(s.grows_on(ms(50), mbit(50.0)));
    assert!(s.grows_on(ms(5), mbit(500.0)));
    assert!(!s.grows_on(ms(5), 0.0));
}
