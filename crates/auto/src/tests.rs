//! The agreement end to end over loopback: both sides agree and the bound handshake
//! passes; a reply changed on its way is refused by the handshake; a choice that cannot
//! connect falls back to the next best; and the decisions on recorded paths.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use transputation_circuits::library;
use transputation_garble::Scheme;
use transputation_model::{Calibration, Path};
use transputation_transport::secure::keys::Psk;
use transputation_transport::{Channel, Config, Credentials, SecureChannel};

use crate::wire::{self, Answer, Datagram, Reply};
use crate::{Error, Negotiation, Offer, Planner, Service};

const MBIT: f64 = 1e6 / 8.0;

fn creds() -> Credentials {
    Credentials::Psk(Psk::from_bytes([7; 32]))
}

fn cfg() -> Config {
    Config {
        io_timeout: Duration::from_secs(10),
        ..Config::default()
    }
}

fn planner(circuit: &str, scheme: Scheme) -> Planner {
    let c = library::load(circuit).unwrap();
    Planner::new(&c, scheme, Calibration::default()).unwrap()
}

fn service(p: Planner) -> Service {
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let k = Some(std::sync::Arc::new(creds()));
    Service::start(any, p, cfg(), k, Duration::from_secs(10)).unwrap()
}

fn offer(p: &Planner, path: Path, transports: &[&str]) -> Offer {
    Offer {
        transports: transports.iter().map(|s| s.to_string()).collect(),
        path,
        circuit: p.digest().to_string(),
        scheme: "ideal".into(),
        exclude: Vec::new(),
    }
}

/// Both kernel TCP controllers this host has, cubic first.
fn tcp_pair() -> Vec<&'static str> {
    let mut v = vec!["tcp:cc=cubic"];
    if transputation_transport::check_congestion_control("bbr").is_ok() {
        v.push("tcp:cc=bbr");
    } else {
        v.push("tcp:cc=reno");
    }
    v
}

#[test]
fn both_sides_agree_and_the_bound_handshake_passes() {
    let p = planner("aes128", Scheme::Ideal);
    let lan = Path::exact(0.0005, 1000.0 * MBIT, 0.0);
    let o = offer(&p, lan, &tcp_pair());
    let svc = service(p);
    let mut n = Negotiation::new(svc.local_addr(), o).unwrap();
    let (agreement, ch) = n.connect(&cfg(), Duration::from_secs(10)).unwrap();
    let mut e = SecureChannel::client_early_bound(ch, &creds(), &agreement.binding).unwrap();
    e.send(b"over the agreed transport").unwrap();
    e.flush().unwrap();
    let mut connected = svc.next(Duration::from_secs(10)).unwrap().unwrap();
    let mut got = [0u8; 25];
    connected.channel.recv(&mut got).unwrap();
    assert_eq!(&got, b"over the agreed transport");
    assert_eq!(connected.transport, agreement.transport);
    assert_eq!(connected.session, agreement.session);
    assert_eq!(connected.decision, agreement.decision);
    assert!(agreement.decision.predicted_ms > 0.0 && !agreement.decision.why.is_empty());
    drop(e);
}

/// A UDP relay on 127.0.0.2 between the evaluator and the service that passes offers on
/// and replies back, changing each reply with `edit`.
fn relay(
    service: SocketAddr,
    edit: impl Fn(u64, Reply) -> Reply + Send + 'static,
) -> (SocketAddr, Arc<AtomicBool>) {
    let front = UdpSocket::bind("127.0.0.2:0").unwrap();
    let back = UdpSocket::bind("127.0.0.1:0").unwrap();
    back.connect(service).unwrap();
    let addr = front.local_addr().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let stopped = stop.clone();
    front
        .set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    back.set_read_timeout(Some(Duration::from_millis(20)))
        .unwrap();
    thread::spawn(move || {
        let mut buf = vec![0u8; 65536];
        let mut client = None;
        while !stopped.load(Ordering::Relaxed) {
            if let Ok((n, from)) = front.recv_from(&mut buf) {
                client = Some(from);
                let _ = back.send(&buf[..n]);
            }
            if let (Ok(n), Some(c)) = (back.recv(&mut buf), client) {
                let out = match wire::parse(&buf[..n]) {
                    Ok(Datagram::Reply(s, r, _)) => wire::reply_datagram(s, &edit(s, r)),
                    _ => buf[..n].to_vec(),
                };
                let _ = front.send_to(&out, c);
            }
        }
    });
    (addr, stop)
}

/// A TCP forwarder from `from` to `to`, one thread pair per connection.
fn forward(from: TcpListener, to: SocketAddr) {
    thread::spawn(move || {
        for c in from.incoming() {
            let Ok(a) = c else { return };
            let Ok(b) = TcpStream::connect(to) else {
                return;
            };
            for (mut x, mut y) in [(a.try_clone().unwrap(), b.try_clone().unwrap()), (b, a)] {
                thread::spawn(move || {
                    let mut buf = [0u8; 16384];
                    while let Ok(n) = x.read(&mut buf) {
                        if n == 0 || y.write_all(&buf[..n]).is_err() {
                            break;
                        }
                    }
                    let _ = y.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
}

#[test]
fn a_choice_changed_on_its_way_is_refused_by_the_handshake() {
    // A stranger on the path rewrites the reply to the other TCP controller. The
    // evaluator connects with it (to the garbler's real listener, through a forwarder),
    // but its binding hashes the forged reply: the garbler refuses its first message.
    let p = planner("aes128", Scheme::Ideal);
    let pair = tcp_pair();
    let lan = Path::exact(0.0005, 1000.0 * MBIT, 0.0);
    let o = offer(&p, lan, &pair);
    let svc = service(p);
    let (front, stop) = relay(svc.local_addr(), move |_, mut r| {
        if let Answer::Chosen(d) = &mut r.answer {
            let other = if d.transport == pair[0] {
                pair[1]
            } else {
                pair[0]
            };
            d.transport = other.to_string();
            // The garbler's listener, reached through 127.0.0.2.
            let real = SocketAddr::from(([127, 0, 0, 1], d.port));
            let l = TcpListener::bind(("127.0.0.2", 0)).unwrap();
            d.port = l.local_addr().unwrap().port();
            forward(l, real);
        }
        r
    });
    let mut n = Negotiation::new(front, o).unwrap();
    let (agreement, ch) = n.connect(&cfg(), Duration::from_secs(10)).unwrap();
    let mut e = SecureChannel::client_early_bound(ch, &creds(), &agreement.binding).unwrap();
    e.send(b"x").unwrap();
    let err = e.flush().and_then(|()| e.recv(&mut [0u8; 1])).unwrap_err();
    assert!(err.to_string().contains("bound"), "{err}");
    assert!(svc.next(Duration::from_millis(500)).is_none());
    stop.store(true, Ordering::Relaxed);
}

#[test]
fn a_choice_that_cannot_connect_falls_back_to_the_next_best() {
    // The path blocks the port of the first choice: the evaluator offers again without
    // it, the garbler chooses the next best, which connects.
    let p = planner("aes128", Scheme::Ideal);
    let pair = tcp_pair();
    let lan = Path::exact(0.0005, 1000.0 * MBIT, 0.0);
    let o = offer(&p, lan, &pair);
    let svc = service(p);
    // The offers answered so far, and whether their port is open: a repeated reply (the
    // offer was sent again while the garbler decided) is treated as its first was.
    let answered = Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
    let seen = answered.clone();
    let (front, stop) = relay(svc.local_addr(), move |_, r| {
        let mut seen = seen.lock().unwrap();
        if !seen.contains(&r.offer) {
            seen.push(r.offer.clone());
            // The first choice's port stays closed on 127.0.0.2; later ones pass.
            if let (Answer::Chosen(d), true) = (&r.answer, seen.len() > 1) {
                let l = TcpListener::bind(("127.0.0.2", d.port)).unwrap();
                forward(l, SocketAddr::from(([127, 0, 0, 1], d.port)));
            }
        }
        r
    });
    let mut n = Negotiation::new(front, o).unwrap();
    let (agreement, ch) = n.connect(&cfg(), Duration::from_secs(20)).unwrap();
    assert_eq!(agreement.failed.len(), 1, "{:?}", agreement.failed);
    assert_ne!(agreement.failed[0], agreement.transport.to_string());
    let mut e = SecureChannel::client_early_bound(ch, &creds(), &agreement.binding).unwrap();
    e.send(b"fallback").unwrap();
    e.flush().unwrap();
    let mut c = svc.next(Duration::from_secs(10)).unwrap().unwrap();
    let mut got = [0u8; 8];
    c.channel.recv(&mut got).unwrap();
    assert_eq!(&got, b"fallback");
    assert_eq!(c.transport, agreement.transport);
    stop.store(true, Ordering::Relaxed);
}

#[test]
fn another_circuit_is_refused_before_any_connection() {
    let p = planner("aes128", Scheme::Ideal);
    let mut o = offer(&p, Path::exact(0.001, 100.0 * MBIT, 0.0), &tcp_pair());
    o.circuit = "00".repeat(32);
    let svc = service(p);
    let mut n = Negotiation::new(svc.local_addr(), o).unwrap();
    match n.agree(Duration::from_millis(50), Duration::from_secs(5)) {
        Err(Error::Refused(why)) => assert!(why.contains("circuit differs"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_silent_garbler_is_an_error_within_the_patience() {
    let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
    let p = planner("aes128", Scheme::Ideal);
    let o = offer(&p, Path::exact(0.001, 100.0 * MBIT, 0.0), &tcp_pair());
    let mut n = Negotiation::new(quiet.local_addr().unwrap(), o).unwrap();
    let t = std::time::Instant::now();
    let e = n
        .agree(Duration::from_millis(20), Duration::from_millis(300))
        .unwrap_err();
    assert!(matches!(e, Error::NoService { .. }), "{e}");
    assert!(t.elapsed() < Duration::from_secs(2));
}

/// Quick probes recorded on the testbed's emulated links (`transputation testbed exec
/// --rtt .. --loss .. --rate .. --b 'transputation probe --listen $TPB_ADDR_B:7000' --a
/// 'transputation probe --connect $TPB_ADDR_B:7000 --quick --json'`, 2026-11-26, the `emu`
/// emulator on the 2-vCPU machine).
mod recorded {
    /// 300 ms, 0.1 % loss, 500 Mbit/s: no loss among 1,288 packets (so a bound of 0.23 %).
    pub const LOSSY_LONG: &str = r#"{"bandwidth_floor_mbps":472.0584998880399,"bandwidth_mbps":518.2297509440725,"duration_ms":928.0857729999999,"loss_evidence":{"lost":0,"sent":1288},"loss_rate":0.0,"overflow_packets":0,"packet_bytes":1200,"pings_answered":5,"pings_sent":10,"rtt_ms_max":300.969602,"rtt_ms_median":300.41770299999996,"rtt_ms_min":300.114553,"train_received":1288,"train_sent":1288,"trains":3}"#;
    /// 0.5 ms, 1 Gbit/s (the emulator carried about 620).
    pub const LAN: &str = r#"{"bandwidth_floor_mbps":622.1271581302342,"bandwidth_mbps":622.1271581302342,"duration_ms":23.75288,"loss_evidence":{"lost":0,"sent":1288},"loss_rate":0.0,"overflow_packets":0,"packet_bytes":1200,"pings_answered":5,"pings_sent":10,"rtt_ms_max":0.757445,"rtt_ms_median":0.614423,"rtt_ms_min":0.557859,"train_received":1288,"train_sent":1288,"trains":3}"#;
    /// 100 ms, 1 % loss, 16 Mbit/s: 2 of 72 lost before the queue overflowed.
    pub const LOSSY_SLOW: &str = r#"{"bandwidth_floor_mbps":22.50236554728708,"bandwidth_mbps":22.50236554728708,"duration_ms":245.712404,"loss_evidence":{"lost":2,"sent":72},"loss_rate":0.7569444444444444,"overflow_packets":216,"packet_bytes":1200,"pings_answered":5,"pings_sent":5,"rtt_ms_max":107.788179,"rtt_ms_median":107.211893,"rtt_ms_min":106.755696,"train_received":70,"train_sent":288,"trains":2}"#;
}

/// The garbler's decision for `circuit` on a recorded probe, every candidate offered.
fn decided(measurement: &str, circuit: &str, scheme: Scheme) -> (Path, crate::Plan) {
    let m: transputation_probe::Measurement = serde_json::from_str(measurement).unwrap();
    let path = crate::path_of(&m).unwrap();
    let p = planner(circuit, scheme);
    let names: Vec<String> = transputation_transport::auto::candidates(&path)
        .into_iter()
        .map(|c| c.name)
        .collect();
    let refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let mut o = offer(&p, path, &refs);
    o.scheme = scheme.to_string();
    (path, p.decide(&o).unwrap())
}

fn chosen_control(plan: &crate::Plan) -> transputation_model::Control {
    let name = plan.decision.choice.clone().unwrap();
    let spec: transputation_transport::TransportSpec = name.parse().unwrap();
    spec.model().control
}

const MINCUT: &str = "synthetic:and=999960,xor=2524920,inputs=250000";

#[test]
fn on_a_lossy_long_path_a_large_circuit_goes_over_a_loss_tolerant_transport() {
    let (path, plan) = decided(recorded::LOSSY_LONG, MINCUT, Scheme::Ideal);
    assert!(path.loss == 0.0 && path.loss_upper > 0.002, "{path:?}");
    assert_eq!(
        chosen_control(&plan),
        transputation_model::Control::Bbr,
        "{}",
        plan.decision.why
    );
}

/// Only QUIC can start from a window of the whole path here (the kernel's is 10 segments).
#[cfg(feature = "quic")]
#[test]
fn on_a_long_path_a_tiny_circuit_goes_in_one_flight() {
    // AES-128's 207 kB of tables fit in a first window: connect, one wait, and half a
    // round trip for each bulk message, about 3 round trips.
    let (path, plan) = decided(recorded::LOSSY_LONG, "aes128", Scheme::Ideal);
    let best = plan.decision.chosen().unwrap().seconds().unwrap();
    assert!(best < 3.4 * path.rtt, "{best} s: {}", plan.decision.why);
    let tcp = plan
        .decision
        .ranked
        .iter()
        .find(|r| r.name == "tcp:cc=cubic")
        .and_then(|r| r.seconds())
        .unwrap();
    assert!(tcp > 5.0 * path.rtt, "tcp {tcp}");
}

#[test]
fn on_a_lan_a_tiny_circuit_stays_on_kernel_tcp() {
    let (_, plan) = decided(recorded::LAN, "aes128", Scheme::Ideal);
    let choice = plan.decision.choice.clone().unwrap();
    assert!(
        choice.starts_with("tcp:"),
        "{choice}: {}",
        plan.decision.why
    );
}

#[test]
fn under_one_percent_loss_cubic_is_never_chosen() {
    for circuit in ["aes128", MINCUT] {
        let (path, plan) = decided(recorded::LOSSY_SLOW, circuit, Scheme::Prf);
        assert!(path.loss > 0.02 && path.loss_upper > path.loss, "{path:?}");
        let control = chosen_control(&plan);
        assert_ne!(control, transputation_model::Control::Cubic, "{circuit}");
        assert_ne!(control, transputation_model::Control::Reno, "{circuit}");
    }
}
