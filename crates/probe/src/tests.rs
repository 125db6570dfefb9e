//! The rate estimate, the packet layout, and a server and a prober over loopback.

use std::net::UdpSocket;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use super::*;
use crate::server::{steady_rate, Arrival};
use crate::wire::{packet, parse, HEADER, PING, TRAIN};

#[test]
fn the_rate_leaves_out_the_first_quarter() {
    let t0 = Instant::now();
    let at = |us: u64| Arrival {
        at: t0 + Duration::from_micros(us),
        bytes: 1000,
        prompt: true,
    };
    // A burst of 4 packets at once, then 1 packet every 100 µs: 12 packets, the
    // span starts at index 3 (still in the burst) and ends 800 µs later.
    let mut arrivals: Vec<Arrival> = (0..4).map(|_| at(0)).collect();
    arrivals.extend((1..=8).map(|i| at(i * 100)));
    assert_eq!(steady_rate(&arrivals), (800_000, 8000));
    // Two packets: first to last.
    assert_eq!(steady_rate(&arrivals[..2]), (0, 1000));
    assert_eq!(steady_rate(&arrivals[4..6]), (100_000, 1000));
    assert_eq!(steady_rate(&arrivals[..1]), (0, 0));
    assert_eq!(steady_rate(&[]), (0, 0));
}

#[test]
fn only_prompt_reads_time_the_rate() {
    let t0 = Instant::now();
    let at = |us: u64, prompt: bool| Arrival {
        at: t0 + Duration::from_micros(us),
        bytes: 1000,
        prompt,
    };
    // 12 packets 100 µs apart on the path, but the server was late for packets 3 to 6
    // and read them together at 700 µs: those reads say nothing of their arrival. The
    // span runs from the first prompt read past the quarter (index 7) to the last.
    let arrivals: Vec<Arrival> = (0..12u64)
        .map(|i| match i {
            3..=6 => at(700, false),
            _ => at(i * 100, true),
        })
        .collect();
    assert_eq!(steady_rate(&arrivals), (400_000, 4000));
    // The last read late too: the span ends at the last prompt one, index 10.
    let mut late_end = arrivals.clone();
    late_end[11].prompt = false;
    assert_eq!(steady_rate(&late_end), (300_000, 3000));
    // A train read all at once (a starved server): no rate rather than the read speed.
    let starved: Vec<Arrival> = (0..32).map(|_| at(5000, false)).collect();
    assert_eq!(steady_rate(&starved), (0, 0));
    let one_prompt: Vec<Arrival> = (0..32).map(|i| at(5000, i == 20)).collect();
    assert_eq!(steady_rate(&one_prompt), (0, 0));
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
        // On loopback the prober is the bottleneck; the rate, from the prompt reads or else
        // from all of them, is checked for what it is (a paced train's value is checked
        // below).
        assert!(m.bandwidth_mbps.is_none_or(|b| b > 0.0), "{m:?}");
        assert_eq!(m.bandwidth_floor_mbps, None, "the full probe has no floor");
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

#[test]
fn a_report_carries_its_extension_only_when_the_request_had_room() {
    use crate::wire::{ask_bytes, decode_report, encode_report, ArrivalMap, Extension, Report};
    let mut map = ArrivalMap::new(20);
    for seq in [0, 1, 7, 8, 19, 20, 5000] {
        map.set(seq); // 20 and 5000 are past the map's end
    }
    let report = Report {
        received: 5,
        span_ns: 123_456,
        bytes: 7000,
        kernel_timed: true,
        ext: Some(Extension {
            timed_span_ns: 100_000,
            timed_bytes: 6000,
            map: map.clone(),
        }),
    };
    let full = encode_report(9, 3, &report, ask_bytes(20));
    assert_eq!(full.len(), ask_bytes(20));
    assert_eq!(parse(&full), Some((crate::wire::REPORT, 9, 3, 0)));
    let back = decode_report(&full).unwrap();
    assert_eq!(back, report);
    let arrived: Vec<u32> = (0..25).filter(|&i| map.arrived(i)).collect();
    assert_eq!(arrived, [0, 1, 7, 8, 19]);
    // A request of the first version's 24 bytes gets the first version's 44 bytes.
    let short = encode_report(9, 3, &report, HEADER);
    assert_eq!(short.len(), crate::wire::REPORT_BYTES);
    assert_eq!(
        decode_report(&short),
        Some(Report {
            ext: None,
            ..report.clone()
        })
    );
    // An extension with a foreign tag, a map of more packets than allowed, or bits
    // missing is left out.
    let mut foreign = full.clone();
    foreign[44] = b'X';
    assert_eq!(decode_report(&foreign).unwrap().ext, None);
    let mut too_many = full.clone();
    too_many[64..68].copy_from_slice(&(MAP_MAX_PACKETS + 1).to_be_bytes());
    assert_eq!(decode_report(&too_many).unwrap().ext, None);
    assert_eq!(decode_report(&full[..full.len() - 1]).unwrap().ext, None);
    assert_eq!(decode_report(&full[..43]), None);
    // The kernel-timed flag is the flags byte's bit 0; a server that predates it sends 0.
    assert_eq!(full[5], 1);
    let mut unflagged = full.clone();
    unflagged[5] = 0;
    assert!(!decode_report(&unflagged).unwrap().kernel_timed);
    // Maps are capped.
    assert_eq!(ArrivalMap::new(u32::MAX).packets(), MAP_MAX_PACKETS);
}

#[test]
fn a_report_s_map_divides_random_loss_from_overflow() {
    use crate::prober::train_result;
    use crate::wire::{ArrivalMap, Extension, Report};
    // 64 packets: 5 and 9 lost at random, everything from 40 on lost to a full queue.
    let mut map = ArrivalMap::new(64);
    (0..40)
        .filter(|i| *i != 5 && *i != 9)
        .for_each(|i| map.set(i));
    let report = Report {
        received: 38,
        span_ns: 1_000_000,
        bytes: 125_000,
        kernel_timed: false,
        ext: Some(Extension {
            timed_span_ns: 2_000_000,
            timed_bytes: 125_000,
            map,
        }),
    };
    let r = train_result(&report, 64, &[]);
    assert_eq!((r.sent, r.received), (64, 38));
    assert_eq!(r.evidence, LossEvidence::new(40, 2));
    assert_eq!(r.overflow_packets, 24);
    // The dispersion is the prompt-timed one; the fixed part's is kept apart.
    assert_eq!(r.bandwidth_mbps, Some(500.0));
    assert_eq!(r.read_rate_mbps, Some(1000.0));
    // A packet the local stack refused is no evidence either way.
    let r = train_result(&report, 64, &[5]);
    assert_eq!(r.evidence, LossEvidence::new(39, 1));
    // Without two prompt reads, no timed dispersion.
    let mut untimed = report.clone();
    if let Some(e) = untimed.ext.as_mut() {
        (e.timed_span_ns, e.timed_bytes) = (0, 0);
    }
    let r = train_result(&untimed, 64, &[]);
    assert_eq!((r.bandwidth_mbps, r.read_rate_mbps), (None, Some(1000.0)));
    // Without the extension (a server of the first version): every loss counts, and the
    // fixed part's dispersion is all there is.
    let first_version = Report {
        ext: None,
        ..report.clone()
    };
    let r = train_result(&first_version, 64, &[]);
    assert_eq!(
        (r.evidence, r.overflow_packets),
        (LossEvidence::new(64, 26), 0)
    );
    assert_eq!(r.bandwidth_mbps, Some(1000.0));
    // A server claiming more than was sent is held to what was sent.
    let r = train_result(
        &Report {
            received: 1000,
            ..first_version
        },
        64,
        &[],
    );
    assert_eq!((r.received, r.evidence), (64, LossEvidence::new(64, 0)));
}

/// A server socket with big buffers and a client connected to it (2 s read timeout).
fn server_and_client() -> (UdpSocket, UdpSocket) {
    let server = UdpSocket::bind("127.0.0.1:0").unwrap();
    crate::socket::big_buffers(&server);
    let client = UdpSocket::bind("127.0.0.1:0").unwrap();
    client.connect(server.local_addr().unwrap()).unwrap();
    client
        .set_read_timeout(Some(Duration::from_secs(2)))
        .unwrap();
    (server, client)
}

#[test]
fn the_server_answers_a_first_version_request_and_keeps_sessions_apart() {
    let (server, client) = server_and_client();
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let served = s.spawn(|| serve_until(&server, &stop));
        // Two sessions' trains interleaved, one packet of session 2 lost (never sent).
        for seq in 0..10u32 {
            client.send(&packet(TRAIN, 1, seq, 10, 100)).unwrap();
            if seq != 4 {
                client.send(&packet(TRAIN, 2, seq, 10, 100)).unwrap();
            }
        }
        let mut buf = [0u8; 2048];
        // The first version's request: 24 bytes, answered with 44.
        client
            .send(&packet(crate::wire::ASK, 1, 0, 0, HEADER))
            .unwrap();
        let n = client.recv(&mut buf).unwrap();
        assert_eq!(n, crate::wire::REPORT_BYTES);
        let r = crate::wire::decode_report(&buf[..n]).unwrap();
        assert_eq!((r.received, r.ext), (10, None));
        // A padded request gets the extension.
        let ask = packet(crate::wire::ASK, 2, 1, 0, crate::wire::ask_bytes(10));
        client.send(&ask).unwrap();
        let n = client.recv(&mut buf).unwrap();
        let r = crate::wire::decode_report(&buf[..n]).unwrap();
        assert_eq!(r.received, 9);
        let map = r.ext.unwrap().map;
        assert_eq!(map.packets(), 10);
        assert!((0..10).all(|i| map.arrived(i) == (i != 4)));
        // An unknown session: nothing received.
        client
            .send(&packet(crate::wire::ASK, 77, 0, 0, 64))
            .unwrap();
        let n = client.recv(&mut buf).unwrap();
        assert_eq!(crate::wire::decode_report(&buf[..n]).unwrap().received, 0);
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        served.join().unwrap().unwrap();
    });
}

/// The bytes of a paced train's packets.
const PACED_PACKET_BYTES: usize = 1200;

/// Sends `session`'s train of `packets` train packets of [`PACED_PACKET_BYTES`], one every
/// `gap`; the times they were sent.
fn send_paced_train(client: &UdpSocket, session: u64, packets: u32, gap: Duration) -> Vec<Instant> {
    let start = Instant::now();
    let mut sent_at = Vec::new();
    for seq in 0..packets {
        let due = start + gap * seq;
        while Instant::now() < due {
            std::thread::sleep(due - Instant::now());
        }
        sent_at.push(Instant::now());
        client
            .send(&packet(TRAIN, session, seq, packets, PACED_PACKET_BYTES))
            .unwrap();
    }
    sent_at
}

/// Asks the server for `session`'s report on its train of `packets`, then tells it to stop.
fn ask_report(
    client: &UdpSocket,
    session: u64,
    packets: u32,
    stop: &AtomicBool,
) -> crate::wire::Report {
    let ask = packet(
        crate::wire::ASK,
        session,
        0,
        0,
        crate::wire::ask_bytes(packets),
    );
    client.send(&ask).unwrap();
    let mut buf = [0u8; 2048];
    let n = client.recv(&mut buf).unwrap();
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    crate::wire::decode_report(&buf[..n]).unwrap()
}

/// Checks that the rate the server timed (`ext`) is within `tolerance` of the rate the
/// sender achieved over the train's last three quarters (a busy host may have slept past
/// some of the due times).
fn assert_timed_as_sent(ext: &crate::wire::Extension, sent_at: &[Instant], tolerance: f64) {
    let measured = ext.timed_bytes as f64 * 8.0 / ext.timed_span_ns as f64 * 1e3; // Mbit/s
    let packets = sent_at.len();
    let (first, last) = (sent_at[packets / 4], sent_at[packets - 1]);
    let ip_bytes = PACED_PACKET_BYTES + crate::socket::IPV4_UDP_HEADERS;
    let sent_bytes = ((packets - 1 - packets / 4) * ip_bytes) as f64;
    let paced = sent_bytes * 8.0 / last.duration_since(first).as_secs_f64() / 1e6;
    assert!(
        (measured / paced - 1.0).abs() < tolerance,
        "measured {measured:.1} Mbit/s, sent at {paced:.1}"
    );
}

#[test]
fn the_server_times_a_paced_train() {
    // 40 packets of 1200 bytes 300 µs apart (32.7 Mbit/s in IP bytes): the server has
    // time to read each as it comes, and its rate is the spacing's.
    let (server, client) = server_and_client();
    let stop = AtomicBool::new(false);
    let packets = 40u32;
    let (report, sent_at) = std::thread::scope(|s| {
        let served = s.spawn(|| serve_until(&server, &stop));
        let sent_at = send_paced_train(&client, 5, packets, Duration::from_micros(300));
        std::thread::sleep(Duration::from_millis(5));
        let report = ask_report(&client, 5, packets, &stop);
        served.join().unwrap().unwrap();
        (report, sent_at)
    });
    assert_eq!(report.received, packets);
    let ext = report.ext.clone().unwrap();
    assert!(ext.timed_span_ns > 0, "{report:?}");
    assert_timed_as_sent(&ext, &sent_at, 0.3);
}

#[test]
fn a_train_read_late_keeps_the_times_it_arrived_at() {
    // 24 packets 500 µs apart reach the socket before the server reads any: read back to
    // back, their read times say nothing of the path (no rate, from reads alone), but the
    // kernel's receive times keep the spacing.
    let (server, client) = server_and_client();
    let packets = 24u32;
    let sent_at = send_paced_train(&client, 9, packets, Duration::from_micros(500));
    let stop = AtomicBool::new(false);
    let report = std::thread::scope(|s| {
        let served = s.spawn(|| serve_until(&server, &stop));
        let report = ask_report(&client, 9, packets, &stop);
        served.join().unwrap().unwrap();
        report
    });
    assert_eq!(report.received, packets);
    assert!(
        report.kernel_timed,
        "the report does not say the kernel timed it"
    );
    let ext = report.ext.unwrap();
    assert!(ext.timed_span_ns > 0, "no span from a train read late");
    assert_timed_as_sent(&ext, &sent_at, 0.2);
}
