//! The agreement end to end over loopback: both sides agree and the bound handshake
//! passes, with the card asked for or cached; a stale cached card is decided on again; a
//! card or a statement changed on its way is refused by the handshake, a statement out of
//! the garbler's policy before it; a choice that cannot connect falls back to the next
//! best; and the decisions on recorded paths.

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

use crate::wire::{self, Datagram, Statement, FRAME_HEADER};
use crate::{Client, Error, Planner, Service};

const MBIT: f64 = 1e6 / 8.0;
const PATIENCE: Duration = Duration::from_secs(10);

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

fn service(p: Planner, protected: bool) -> Service {
    let any = SocketAddr::from(([127, 0, 0, 1], 0));
    let k = protected.then(|| Arc::new(creds()));
    Service::start(any, p, cfg(), k).unwrap()
}

fn lan() -> Path {
    Path::exact(0.0005, 1000.0 * MBIT, 0.0)
}

/// The evaluator's side of a session over `ch`: the bound handshake, then `message`.
fn evaluator_says(
    ch: Box<dyn Channel>,
    binding: &[u8],
    message: &[u8],
) -> transputation_transport::Result<()> {
    let mut e = SecureChannel::client_early_bound(ch, &creds(), binding)?;
    e.send(message)?;
    e.flush()?;
    // The garbler's answer to the handshake (or the end of the connection, if refused).
    e.recv(&mut [0u8; 1])
}

/// The garbler's side: the next admitted session, reading `n` bytes and answering one.
fn garbler_hears(svc: &Service, n: usize) -> (crate::Connected, Vec<u8>) {
    let mut c = svc.next(PATIENCE).expect("a session").expect("admitted");
    let mut got = vec![0u8; n];
    c.channel.recv(&mut got).unwrap();
    c.channel.send(b"!").unwrap();
    c.channel.flush().unwrap();
    (c, got)
}

#[test]
fn both_sides_agree_and_the_bound_handshake_passes() {
    let p = planner("aes128", Scheme::Ideal);
    let svc = service(p.clone(), true);
    let mut client = Client::ask(svc.local_addr()).unwrap();
    let (agreement, ch) = client.connect(&p, &lan(), None, &cfg(), PATIENCE).unwrap();
    assert_eq!(agreement.card_from, "garbler");
    let evaluator = thread::spawn(move || {
        evaluator_says(ch, &agreement.binding, b"agreed").map(|()| agreement)
    });
    let (connected, got) = garbler_hears(&svc, 6);
    let agreement = evaluator.join().unwrap().unwrap();
    assert_eq!(got, b"agreed");
    assert_eq!(connected.transport, agreement.transport);
    assert_eq!(connected.session, agreement.session);
    // As stated (the JSON's numbers may differ in their last bit).
    assert_eq!(connected.decision.transport, agreement.decision.transport);
    assert_eq!(connected.decision.why, agreement.decision.why);
    assert_eq!(
        connected.decision.buffer_bytes,
        agreement.decision.buffer_bytes
    );
    assert!(agreement.decision.predicted_ms > 0.0 && !agreement.decision.why.is_empty());
    assert_eq!(
        svc.card()
            .port_of(&agreement.transport.listen_key().to_string()),
        Some(agreement.addr.port())
    );
}

#[test]
fn a_cached_card_connects_at_once_and_a_stale_one_is_decided_again() {
    let p = planner("aes128", Scheme::Ideal);
    let svc = service(p.clone(), true);
    let card = serde_json::to_vec(svc.card()).unwrap();
    let mut client = Client::ask(svc.local_addr()).unwrap();
    let (agreement, ch) = client
        .connect(&p, &lan(), Some(&card), &cfg(), PATIENCE)
        .unwrap();
    assert_eq!(agreement.card_from, "cache");
    assert_eq!(agreement.card_json, card);
    let evaluator = thread::spawn(move || evaluator_says(ch, &agreement.binding, b"warm"));
    assert_eq!(garbler_hears(&svc, 4).1, b"warm");
    evaluator.join().unwrap().unwrap();

    // A card from before the garbler restarted elsewhere: every port moved by one.
    let mut stale = svc.card().clone();
    for l in &mut stale.listeners {
        l.port = l.port.wrapping_add(1);
    }
    let stale = serde_json::to_vec(&stale).unwrap();
    let mut client = Client::ask(svc.local_addr()).unwrap();
    let (agreement, ch) = client
        .connect(&p, &lan(), Some(&stale), &cfg(), PATIENCE)
        .unwrap();
    assert_eq!(agreement.card_from, "garbler");
    assert_eq!(agreement.card_json, card);
    let evaluator = thread::spawn(move || evaluator_says(ch, &agreement.binding, b"again"));
    assert_eq!(garbler_hears(&svc, 5).1, b"again");
    evaluator.join().unwrap().unwrap();
}

/// A UDP relay on `front_ip` (a loopback address of the test's own, so that tests running
/// at once never reach each other's forwarders) between the evaluator and the service that
/// passes asks on and
/// datagrams back, changing each card with `edit`.
fn relay(
    front_ip: &str,
    service: SocketAddr,
    edit: impl Fn(wire::Card) -> wire::Card + Send + 'static,
) -> (SocketAddr, Arc<AtomicBool>) {
    let front = UdpSocket::bind((front_ip, 0)).unwrap();
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
                    Ok(Datagram::Card(s, card, _)) => {
                        wire::card_datagram(s, &serde_json::to_vec(&edit(card)).unwrap()).unwrap()
                    }
                    _ => buf[..n].to_vec(),
                };
                let _ = front.send_to(&out, c);
            }
        }
    });
    (addr, stop)
}

/// A TCP forwarder from `from` to `to`, one thread pair per connection; each chunk from
/// the client passes through `edit`.
fn forward(from: TcpListener, to: SocketAddr, edit: fn(Vec<u8>) -> Vec<u8>) {
    thread::spawn(move || {
        for c in from.incoming() {
            let Ok(a) = c else { return };
            let Ok(b) = TcpStream::connect(to) else {
                return;
            };
            let pairs = [
                (a.try_clone().unwrap(), b.try_clone().unwrap(), true),
                (b, a, false),
            ];
            for (mut x, mut y, outward) in pairs {
                thread::spawn(move || {
                    let mut buf = [0u8; 16384];
                    while let Ok(n) = x.read(&mut buf) {
                        let chunk = if outward {
                            edit(buf[..n].to_vec())
                        } else {
                            buf[..n].to_vec()
                        };
                        if n == 0 || y.write_all(&chunk).is_err() {
                            break;
                        }
                    }
                    let _ = y.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
}

/// Forwards every kernel-TCP listener of `card` from `front_ip` but the one on `closed`.
fn forward_tcp(
    front_ip: &str,
    card: &wire::Card,
    closed: Option<u16>,
    edit: fn(Vec<u8>) -> Vec<u8>,
) {
    for l in &tcp_only(card.clone()).listeners {
        if Some(l.port) == closed {
            continue;
        }
        let front = TcpListener::bind((front_ip, l.port)).expect("a forwarder's port");
        forward(front, SocketAddr::from(([127, 0, 0, 1], l.port)), edit);
    }
}

/// Kernel TCP settings only: a card for the relay tests, whose forwarders carry TCP.
fn tcp_only(mut card: wire::Card) -> wire::Card {
    card.listeners
        .retain(|l| l.transport.starts_with("tcp") || l.transport.starts_with("mtcp"));
    card
}

#[test]
fn a_forged_card_is_refused() {
    // A stranger answers the card ask with a card of fewer transports (`tcp` only).
    // The evaluator decides with it and connects (to the garbler's real listener, through
    // a forwarder); its statement names the forged card, which the garbler refuses before
    // the handshake (had the stranger also changed that digest on its way, the binding,
    // which hashes the card as the evaluator saw it, would fail the handshake).
    let p = planner("aes128", Scheme::Ideal);
    let svc = service(p.clone(), true);
    forward_tcp("127.0.0.2", svc.card(), None, |b| b);
    // `tcp` alone: fewer listeners than the garbler's card has in every build.
    let forge = |mut card: wire::Card| {
        card.listeners.retain(|l| l.transport == "tcp");
        card
    };
    let (front, stop) = relay("127.0.0.2", svc.local_addr(), forge);
    let mut client = Client::ask(front).unwrap();
    let (agreement, ch) = client.connect(&p, &lan(), None, &cfg(), PATIENCE).unwrap();
    let err = evaluator_says(ch, &agreement.binding, b"x").unwrap_err();
    assert!(err.to_string().contains("another card"), "{err}");
    assert!(svc.next(Duration::from_millis(500)).is_none());
    stop.store(true, Ordering::Relaxed);
}

/// Changes a statement's stated round trip (what the garbler's tuning would follow).
fn edit_statement(mut b: Vec<u8>) -> Vec<u8> {
    if b.len() < FRAME_HEADER || &b[..4] != wire::STATEMENT_MAGIC {
        return b;
    }
    let (is_move, n) = wire::opening_length(b[..FRAME_HEADER].try_into().unwrap()).unwrap();
    assert!(!is_move);
    let mut st: Statement = wire::parse_statement(&b[FRAME_HEADER..FRAME_HEADER + n]).unwrap();
    st.path.rtt *= 2.0;
    let rest = b.split_off(FRAME_HEADER + n);
    let mut out = wire::statement_bytes(&st).unwrap().0;
    out.extend_from_slice(&rest);
    out
}

#[test]
fn a_statement_changed_on_its_way_is_refused_by_the_handshake() {
    let p = planner("aes128", Scheme::Ideal);
    let svc = service(p.clone(), true);
    // The real card, but every TCP listener reached through a forwarder that edits.
    let card = svc.card().clone();
    forward_tcp("127.0.0.3", &card, None, edit_statement);
    let (front, stop) = relay("127.0.0.3", svc.local_addr(), |c| c);
    let mut client = Client::ask(front).unwrap();
    let (agreement, ch) = client.connect(&p, &lan(), None, &cfg(), PATIENCE).unwrap();
    // On a LAN, AES-128 goes over kernel TCP, through the editing forwarder.
    assert!(
        agreement.transport.name() == "tcp",
        "{}",
        agreement.transport
    );
    let err = evaluator_says(ch, &agreement.binding, b"x").unwrap_err();
    assert!(
        err.to_string().contains("closed") || err.to_string().contains("bound"),
        "{err}"
    );
    assert!(svc.next(Duration::from_millis(500)).is_none());
    stop.store(true, Ordering::Relaxed);
}

#[test]
fn a_statement_out_of_policy_is_refused_before_the_handshake() {
    let p = planner("aes128", Scheme::Ideal);
    let svc = service(p.clone(), true);
    let card = serde_json::to_vec(svc.card()).unwrap();
    let id = wire::card_id(&card);
    let mut client = Client::ask(svc.local_addr()).unwrap();
    let (agreement, _ch) = client.connect(&p, &lan(), None, &cfg(), PATIENCE).unwrap();
    let st = Statement {
        session: 1,
        card: id.clone(),
        scheme: "ideal".into(),
        path: lan(),
        decision: agreement.decision.clone(),
        failed: Vec::new(),
        moves: None,
        race: Vec::new(),
    };
    let key = agreement.transport.listen_key().to_string();
    assert!(p.admit(&st, &id, &key).is_ok());
    // Another card, another listener, a setting outside the path's, another scheme.
    let other_card = p.admit(&st, &"00".repeat(32), &key).unwrap_err();
    assert!(other_card.contains("another card"), "{other_card}");
    let other_listener = p.admit(&st, &id, "udt").unwrap_err();
    assert!(
        other_listener.contains("arrived on the listener for udt"),
        "{other_listener}"
    );
    let mut odd = st.clone();
    odd.decision.transport = "mtcp:streams=3,cc=cubic".into();
    let odd = p.admit(&odd, &id, "mtcp:streams=3").unwrap_err();
    assert!(odd.contains("not a setting"), "{odd}");
    let mut other = st.clone();
    other.scheme = "prf".into();
    assert!(p
        .admit(&other, &id, &key)
        .unwrap_err()
        .contains("garbles under prf"));
}

#[test]
fn a_stranger_without_the_key_gets_no_session() {
    // A statement the garbler admits, then a handshake with another key.
    let p = planner("aes128", Scheme::Ideal);
    let svc = service(p.clone(), true);
    let mut client = Client::ask(svc.local_addr()).unwrap();
    let (agreement, ch) = client.connect(&p, &lan(), None, &cfg(), PATIENCE).unwrap();
    let wrong = Credentials::Psk(Psk::from_bytes([8; 32]));
    let refused = SecureChannel::client_early_bound(ch, &wrong, &agreement.binding)
        .and_then(|mut e| e.flush().and_then(|()| e.recv(&mut [0u8; 1])));
    assert!(refused.is_err());
    assert!(svc.next(Duration::from_millis(500)).is_none());
}

#[test]
fn a_choice_that_cannot_connect_falls_back_to_the_next_best() {
    // The path to the garbler carries kernel TCP only, and blocks the port of the first
    // choice: the evaluator takes the next best, which connects, and the bound handshake
    // passes (the card is the garbler's own, relayed unchanged).
    let p = planner("aes128", Scheme::Ideal);
    let svc = service(p.clone(), true);
    let card = tcp_only(svc.card().clone());
    let first = p.choose_with(&card, &lan(), &[]).unwrap();
    let first: transputation_transport::TransportSpec =
        first.decision.choice.unwrap().parse().unwrap();
    let closed = card.port_of(&first.listen_key().to_string());
    forward_tcp("127.0.0.4", &card, closed, |b| b);
    let (front, stop) = relay("127.0.0.4", svc.local_addr(), |c| c);
    // A UDP setting ranked between them does not connect either (nothing forwards UDP
    // but the service's port), and is excluded in turn.
    let mut client = Client::ask(front).unwrap();
    let (agreement, ch) = client
        .connect(&p, &lan(), None, &cfg(), Duration::from_secs(30))
        .unwrap();
    assert!(
        agreement.failed.contains(&first.to_string()),
        "{:?}",
        agreement.failed
    );
    assert_ne!(agreement.transport, first);
    let evaluator = thread::spawn(move || {
        evaluator_says(ch, &agreement.binding, b"fallback").map(|()| agreement)
    });
    let (c, got) = garbler_hears(&svc, 8);
    let agreement = evaluator.join().unwrap().unwrap();
    assert_eq!(got, b"fallback");
    assert_eq!(c.transport, agreement.transport);
    assert_eq!(c.failed, agreement.failed);
    stop.store(true, Ordering::Relaxed);
}

#[test]
fn another_scheme_is_refused_with_the_garblers_reason() {
    let p = planner("aes128", Scheme::Ideal);
    for protected in [true, false] {
        let svc = service(p.clone(), protected);
        let other = planner("aes128", Scheme::Prf);
        let mut client = Client::ask(svc.local_addr()).unwrap();
        let (agreement, mut ch) = client
            .connect(&other, &lan(), None, &cfg(), PATIENCE)
            .unwrap();
        let err = if protected {
            evaluator_says(ch, &agreement.binding, b"x").unwrap_err()
        } else {
            ch.recv(&mut [0u8; 8]).unwrap_err()
        };
        assert!(err.to_string().contains("the garbler under ideal"), "{err}");
        assert!(svc.next(Duration::from_millis(200)).is_none());
    }
}

#[test]
fn a_silent_garbler_is_an_error_within_the_patience() {
    let quiet = UdpSocket::bind("127.0.0.1:0").unwrap();
    let p = planner("aes128", Scheme::Ideal);
    let mut client = Client::ask(quiet.local_addr().unwrap()).unwrap();
    let t = std::time::Instant::now();
    let e = client
        .connect(&p, &lan(), None, &cfg(), Duration::from_millis(300))
        .map(|_| ())
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

/// The evaluator's decision for `circuit` on a recorded probe, with the card of a garbler
/// that serves every candidate.
fn decided(measurement: &str, circuit: &str, scheme: Scheme) -> (Path, crate::Plan) {
    let m: transputation_probe::Measurement = serde_json::from_str(measurement).unwrap();
    let path = crate::path_of(&m).unwrap();
    let p = planner(circuit, scheme);
    let svc = service(p.clone(), false);
    (path, p.choose_with(svc.card(), &path, &[]).unwrap())
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

/// quinn's BBR is not chosen for a stream long enough to risk its receiver's reassembly
/// limit (the `prf` tables, twice the `ideal` ones, on a long fat path), and kernel TCP's
/// BBR carries it instead: loss-tolerant, without that limit.
#[cfg(feature = "quic")]
#[test]
fn a_long_stream_on_a_long_fat_path_stays_off_quinns_bbr() {
    let (_, plan) = decided(recorded::LOSSY_LONG, MINCUT, Scheme::Prf);
    let choice = plan.decision.choice.clone().unwrap();
    assert!(
        !choice.starts_with("quic"),
        "{choice}: {}",
        plan.decision.why
    );
    assert_eq!(
        chosen_control(&plan),
        transputation_model::Control::Bbr,
        "{choice}"
    );
    let refused = plan
        .decision
        .ranked
        .iter()
        .find(|r| r.name.starts_with("quic:cc=bbr"))
        .unwrap();
    assert!(refused.seconds().is_none(), "{refused:?}");
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
    // The model ranks `blast` first on a LAN (its first flight at the path's rate, no
    // slow start), a few milliseconds ahead: too little to leave what a session without
    // auto runs. (Measured: on the Zen 4 grid's `lan` AES-128 took 23 ms over `blast`, 17
    // over kernel TCP; on the Zen 3 VM's, 31-34 against 26-31.)
    let (_, plan) = decided(recorded::LAN, "aes128", Scheme::Ideal);
    let choice = plan.decision.choice.clone().unwrap();
    let default = transputation_transport::auto::incumbent().unwrap();
    assert_eq!(choice, default.to_string(), "{}", plan.decision.why);
    assert!(
        plan.decision.why.contains("is kept"),
        "{}",
        plan.decision.why
    );
    let seconds = |name: &str| {
        plan.decision
            .ranked
            .iter()
            .find(|r| r.name == name)
            .and_then(|r| r.seconds())
            .unwrap()
    };
    let gain = seconds(&choice) - seconds("blast");
    assert!(gain > 0.0 && gain < 0.010, "blast ahead by {gain} s");
}

/// A cold evaluator that holds early connections to the garbler's `quic` and `tcp`
/// listeners counts no connecting for the candidates they serve, and the others as ever: on
/// a 300 ms path AES-128 then goes over a held connection, where `blast`, connected after
/// the decision, would start a round trip later.
#[cfg(feature = "quic")]
#[test]
fn held_early_connections_spare_their_candidates_the_connecting() {
    let m: transputation_probe::Measurement = serde_json::from_str(recorded::LOSSY_LONG).unwrap();
    let path = crate::path_of(&m).unwrap();
    let p = planner("aes128", Scheme::Ideal);
    let svc = service(p.clone(), false);
    let card = svc.card();
    let held: Vec<(String, u16)> = card
        .listeners
        .iter()
        .filter(|l| l.transport.starts_with("tcp") || l.transport.starts_with("quic"))
        .map(|l| (l.transport.clone(), l.port))
        .collect();
    assert!(!held.is_empty(), "{card:?}");
    let cold = p.choose_with(card, &path, &[]).unwrap();
    let early = p.choose_connected(card, &path, &[], &held).unwrap();
    let cold_choice = cold.decision.choice.clone().unwrap();
    assert!(
        cold_choice.starts_with("blast"),
        "{cold_choice}: {}",
        cold.decision.why
    );
    let seconds = |plan: &crate::Plan, name: &str| {
        let r = plan
            .decision
            .ranked
            .iter()
            .find(|r| r.name == name)
            .unwrap();
        r.expected.as_ref().ok().map(|p| p.total)
    };
    for r in &cold.decision.ranked {
        let (Some(before), Some(after)) = (seconds(&cold, &r.name), seconds(&early, &r.name))
        else {
            continue;
        };
        let spec: transputation_transport::TransportSpec = r.name.parse().unwrap();
        let is_held = held
            .iter()
            .any(|(k, _)| *k == spec.listen_key().to_string());
        let rtts = spec.model().connect_round_trips;
        let spared = if is_held { rtts * path.rtt } else { 0.0 };
        // The connection's share is max(set-up, N_conn·R): at most what it spares.
        assert!(
            before - after <= spared + 1e-9 && (is_held || before == after),
            "{}: {before} s, {after} s held",
            r.name
        );
    }
    let choice = early.decision.choice.clone().unwrap();
    let spec: transputation_transport::TransportSpec = choice.parse().unwrap();
    assert!(
        held.iter()
            .any(|(k, _)| *k == spec.listen_key().to_string()),
        "{choice}: {}",
        early.decision.why
    );
    // Held on other ports than the card's, they serve nothing.
    let elsewhere: Vec<(String, u16)> = held.iter().map(|(k, p)| (k.clone(), p ^ 1)).collect();
    let other = p.choose_connected(card, &path, &[], &elsewhere).unwrap();
    assert_eq!(other.decision.choice, cold.decision.choice);
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

/// A service on a fixed port of `ip` (the early connections need the ports a garbler of
/// this build takes after it), the port found free just before.
fn service_on(ip: [u8; 4], p: Planner) -> Service {
    let free = UdpSocket::bind(SocketAddr::from((ip, 0))).unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    Service::start(addr, p, cfg(), Some(Arc::new(creds()))).unwrap()
}

#[test]
fn a_cold_evaluator_uses_the_early_connection_its_choice_names() {
    let p = planner("aes128", Scheme::Ideal);
    assert!(p.fits_early());
    let svc = service_on([127, 0, 4, 1], p.clone());
    let predicted = crate::predicted_listeners(svc.local_addr());
    assert!(!predicted.is_empty());
    for (key, addr) in &predicted {
        assert_eq!(
            svc.card().port_of(&key.to_string()),
            Some(addr.port()),
            "{key}"
        );
    }
    let mut client = Client::ask(svc.local_addr()).unwrap();
    client.connect_early(&cfg());
    let (agreement, ch) = client.connect(&p, &lan(), None, &cfg(), PATIENCE).unwrap();
    let key = agreement.transport.listen_key();
    let predicted_here = predicted.iter().any(|(k, _)| *k == key);
    assert_eq!(agreement.early, predicted_here, "{}", agreement.transport);
    let evaluator = thread::spawn(move || evaluator_says(ch, &agreement.binding, b"early"));
    assert_eq!(garbler_hears(&svc, 5).1, b"early");
    evaluator.join().unwrap().unwrap();
}

/// On a long path AES-128 goes over `blast`, and a cold evaluator has connected to it
/// early, beside its probe: the session takes that connection (no connecting after the
/// decision), made without `blast`'s rate-timing train, and runs.
#[test]
fn a_cold_evaluator_on_a_long_path_takes_its_early_blast_connection() {
    let m: transputation_probe::Measurement = serde_json::from_str(recorded::LOSSY_LONG).unwrap();
    let path = crate::path_of(&m).unwrap();
    let p = planner("aes128", Scheme::Ideal);
    let svc = service_on([127, 0, 4, 3], p.clone());
    let predicted = crate::predicted_listeners(svc.local_addr());
    let (blast, _) = predicted
        .iter()
        .find(|(k, _)| k.name() == "blast")
        .expect("blast is predicted");
    assert_eq!(blast.while_probing().to_string(), "blast:train=off");
    let mut client = Client::ask(svc.local_addr()).unwrap();
    client.connect_early(&cfg());
    let (agreement, ch) = client.connect(&p, &path, None, &cfg(), PATIENCE).unwrap();
    assert_eq!(
        agreement.transport.name(),
        "blast",
        "{:?}",
        agreement.decision
    );
    assert!(agreement.early);
    let evaluator = thread::spawn(move || evaluator_says(ch, &agreement.binding, b"fast"));
    let (connected, heard) = garbler_hears(&svc, 4);
    assert_eq!(heard, b"fast");
    assert_eq!(connected.transport.name(), "blast");
    evaluator.join().unwrap().unwrap();
}

#[test]
fn an_early_connection_to_a_stranger_on_a_predicted_port_gets_nothing() {
    let p = planner("aes128", Scheme::Ideal);
    let ip = [127, 0, 4, 2];
    let free = UdpSocket::bind(SocketAddr::from((ip, 0))).unwrap();
    let udp = free.local_addr().unwrap();
    drop(free);
    // Strangers on every port the evaluator predicts: the garbler listens elsewhere.
    let predicted = crate::predicted_listeners(udp);
    let mut tcp_stranger = None;
    let mut udp_strangers = Vec::new();
    for (key, addr) in &predicted {
        if key.name() == "tcp" {
            tcp_stranger = Some(TcpListener::bind(addr).unwrap());
        } else {
            udp_strangers.push(UdpSocket::bind(addr).unwrap());
        }
    }
    let tcp_stranger = tcp_stranger.expect("tcp is predicted");
    let svc = Service::start(udp, p.clone(), cfg(), Some(Arc::new(creds()))).unwrap();
    assert_ne!(
        svc.card().port_of("tcp"),
        Some(tcp_stranger.local_addr().unwrap().port())
    );
    let mut client = Client::ask(udp).unwrap();
    client.connect_early(&cfg());
    let (stream, _) = tcp_stranger.accept().unwrap();
    let (agreement, ch) = client.connect(&p, &lan(), None, &cfg(), PATIENCE).unwrap();
    assert!(!agreement.early);
    let evaluator = thread::spawn(move || evaluator_says(ch, &agreement.binding, b"past"));
    assert_eq!(garbler_hears(&svc, 4).1, b"past");
    evaluator.join().unwrap().unwrap();
    // The stranger's connection was closed without a byte.
    let mut stream = stream;
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut got = Vec::new();
    stream.read_to_end(&mut got).unwrap();
    assert!(got.is_empty(), "{got:?}");
}

#[test]
fn a_first_train_settles_a_small_circuit_and_not_a_large_one_on_a_fast_path() {
    let aes = planner("aes128", Scheme::Ideal);
    let svc = service(aes.clone(), false);
    let card = svc.card().clone();
    // A long path as the first train reads it: a fast link read low, no loss among 32
    // packets (up to 9 % at 95 %). The next train costs about a round trip.
    let first = Path {
        rtt: 0.3,
        rate: 130.0 * MBIT,
        loss: 0.0,
        loss_upper: 0.09,
        queue: None,
    };
    assert!(aes.settled(&card, &first, 0.31, 4.0));
    // Tables of 6.4 MB on a 100 ms path: four times the rate read would save more than
    // the next train's round trip, with a first window sized for it (`quic`). A build with
    // kernel TCP alone sizes nothing from the rate before the session, so more measuring
    // would change nothing there.
    let big = library::load("synthetic:and=200000,xor=500000,inputs=1000").unwrap();
    let big = Planner::new(&big, Scheme::Ideal, Calibration::default()).unwrap();
    assert!(!big.fits_early());
    let path = Path { rtt: 0.1, ..first };
    // `blast` times the path's rate itself in its handshake: when it is the choice, more
    // measuring gains nothing.
    assert!(big.settled(&card, &path, 0.11, 4.0));
    let without_blast = without(&card, "blast");
    let sized_from_the_rate = without_blast
        .listeners
        .iter()
        .any(|l| l.transport.starts_with("quic"));
    assert_eq!(
        big.settled(&without_blast, &path, 0.11, 4.0),
        !sized_from_the_rate
    );
    // Nothing to choose from: not settled.
    let empty = crate::Card {
        listeners: Vec::new(),
        congestion: Vec::new(),
    };
    assert!(!aes.settled(&empty, &first, 0.31, 4.0));
}

/// A first train's measurement: `mbps` read over 32 packets, none lost.
fn first_train(rtt_ms: f64, mbps: f64) -> transputation_probe::Measurement {
    transputation_probe::Measurement {
        rtt_ms_min: rtt_ms,
        rtt_ms_median: rtt_ms,
        rtt_ms_max: rtt_ms,
        loss_rate: 0.0,
        bandwidth_mbps: Some(mbps),
        pings_sent: 5,
        pings_answered: 5,
        train_sent: 32,
        train_received: 32,
        packet_bytes: 1200,
        loss_evidence: transputation_probe::LossEvidence::new(32, 0),
        overflow_packets: 0,
        bandwidth_floor_mbps: None,
        trains: 1,
        duration_ms: rtt_ms,
        rate_kernel_timed: false,
    }
}

#[test]
fn a_rate_read_over_a_long_passage_leaves_less_headroom() {
    // 39 kB in 0.6 ms at 500 Mbit/s, within the timing noise: as much as four times.
    assert_eq!(crate::rate_headroom(&first_train(50.0, 500.0)), 4.0);
    assert_eq!(crate::rate_headroom(&first_train(50.0, 130.0)), 4.0);
    // 6.3 ms at 50 Mbit/s: 6.3 / 3.3.
    let at_50 = crate::rate_headroom(&first_train(50.0, 50.0));
    assert!((at_50 - 1.91).abs() < 0.01, "{at_50}");
    // 19.6 ms at 16 Mbit/s.
    let at_16 = crate::rate_headroom(&first_train(40.0, 16.0));
    assert!((at_16 - 1.18).abs() < 0.01, "{at_16}");
    // The second train, 256 packets, read at 365 Mbit/s: 6.9 ms.
    let second = transputation_probe::Measurement {
        trains: 2,
        ..first_train(200.0, 365.0)
    };
    let h = crate::rate_headroom(&second);
    assert!((h - 1.77).abs() < 0.01, "{h}");
    let none = transputation_probe::Measurement {
        bandwidth_mbps: None,
        ..first_train(50.0, 50.0)
    };
    assert_eq!(crate::rate_headroom(&none), 1.0);
    // Timed by the kernel's receive times: the first train at 500 Mbit/s, 0.63 ms, may
    // have taken 0.1 ms less.
    let stamped = |m: transputation_probe::Measurement| transputation_probe::Measurement {
        rate_kernel_timed: true,
        ..m
    };
    let h = crate::rate_headroom(&stamped(first_train(50.0, 500.0)));
    assert!((h - 1.19).abs() < 0.01, "{h}");
    let h = crate::rate_headroom(&stamped(first_train(50.0, 50.0)));
    assert!((h - 1.016).abs() < 0.002, "{h}");
    // A floor by the prober's clock is not the kernel's timing.
    let floor_only = stamped(transputation_probe::Measurement {
        bandwidth_mbps: None,
        bandwidth_floor_mbps: Some(500.0),
        ..first_train(50.0, 500.0)
    });
    assert_eq!(crate::rate_headroom(&floor_only), 4.0);
}

#[test]
fn a_first_train_on_a_slow_long_path_settles_the_larger_circuits_too() {
    // The grid's 200 ms, 50 Mbit/s link as AES-128's cold session measured it (the rate
    // read exactly, no loss among 32 packets): SHA-256 under prf measured again there,
    // 432 ms of probing, and took 1,456 ms to the output where the fastest took 1,155.
    // Measuring again costs two round trips and both trains: more than the rate or
    // the loss bound a second train could show would gain.
    let m = first_train(200.1, 50.0);
    let path = crate::path_of(&m).unwrap();
    let cost = crate::reprobe_cost(&path);
    assert!((0.45..0.47).contains(&cost), "{cost}");
    let sha = planner("sha256", Scheme::Prf);
    let card = service(sha.clone(), false).card().clone();
    assert!(sha.settled(&card, &path, cost, crate::rate_headroom(&m)));
    // What made it measure again: a rate read exactly, taken as perhaps four times as fast
    // (where QUIC, with a first window for that rate, would have been faster; a build
    // without it has only kernel TCP to choose from, settled either way). With `blast`,
    // which times the rate itself, it is settled.
    assert!(sha.settled(&card, &path, cost, 4.0));
    if cfg!(feature = "quic") {
        assert!(!sha.settled(&without(&card, "blast"), &path, cost, 4.0));
    }
}

/// `card` without its listeners for `transport`.
fn without(card: &crate::Card, transport: &str) -> crate::Card {
    crate::Card {
        listeners: card
            .listeners
            .iter()
            .filter(|l| !l.transport.starts_with(transport))
            .cloned()
            .collect(),
        congestion: card.congestion.clone(),
    }
}
