//! A session started at once moves where the probe decides, protected and whole; stays
//! where moving would not pay; and a move without the session's secret is refused
//! while the session goes on.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::thread;
use std::time::{Duration, Instant};

use transputation_circuits::library;
use transputation_garble::Scheme;
use transputation_model::{Calibration, Path};
use transputation_transport::secure::keys::Psk;
use transputation_transport::{Channel, Config, Credentials, SecureChannel};

use crate::wire::{self, Move, FRAME_HEADER, REFUSAL_MAGIC};
use crate::{Client, Planner, Service};

const PATIENCE: Duration = Duration::from_secs(10);

fn creds() -> Credentials {
    Credentials::Psk(Psk::from_bytes([5; 32]))
}

fn cfg() -> Config {
    Config {
        io_timeout: Duration::from_secs(10),
        ..Config::default()
    }
}

fn aes() -> Planner {
    let c = library::load("aes128").unwrap();
    Planner::new(&c, Scheme::Ideal, Calibration::default()).unwrap()
}

/// A protected service on a fixed port of `ip` (the early connections need the ports a
/// garbler of this build takes after it), the port found free just before.
fn service_on(ip: [u8; 4], p: Planner) -> Service {
    let free = UdpSocket::bind(SocketAddr::from((ip, 0))).unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    Service::start(addr, p, cfg(), Some(Arc::new(creds()))).unwrap()
}

/// A long lossy path: 300 ms, 500 Mbit/s, 1 % loss, where AES-128 goes over `blast`.
fn long_lossy() -> Path {
    Path {
        rtt: 0.3,
        rate: 62.5e6,
        loss: 0.01,
        loss_upper: 0.015,
        queue: None,
    }
}

/// A started session: the service, the mover, the evaluator's protected channel (made on
/// a thread, as the garbler's side of the handshake runs in the service), and the
/// garbler's side.
struct Session {
    svc: Service,
    mover: crate::Mover,
    evaluator: thread::JoinHandle<SecureChannel<Box<dyn Channel>>>,
    garbler: crate::Connected,
}

fn client_card(client: &mut Client) -> (crate::Card, Vec<u8>) {
    client.card(Duration::from_millis(50), PATIENCE).unwrap()
}

fn started(ip: [u8; 4]) -> Session {
    let p = aes();
    let svc = service_on(ip, p.clone());
    let mut client = Client::ask(svc.local_addr()).unwrap();
    client.connect_early(&cfg());
    let card = client_card(&mut client);
    let crate::Started {
        agreement,
        channel: ch,
        mover,
    } = client
        .start_provisional(&p, card, &cfg(), PATIENCE)
        .unwrap()
        .expect("loopback answers within the provisional round trip");
    assert_eq!(agreement.transport.name(), "tcp");
    assert!(agreement.early);
    let binding = agreement.binding.clone();
    let evaluator =
        thread::spawn(move || SecureChannel::client_bound(ch, &creds(), &binding).unwrap());
    let connected = svc.next(PATIENCE).expect("a session").expect("admitted");
    assert!(connected.moved.is_some());
    assert_eq!(connected.session, agreement.session);
    Session {
        svc,
        mover,
        evaluator,
        garbler: connected,
    }
}

#[test]
fn a_started_session_moves_to_the_choice_and_its_stream_stays_whole() {
    let Session {
        svc: _svc,
        mover,
        evaluator,
        mut garbler,
    } = started([127, 0, 5, 1]);
    let before: Vec<u8> = (0..100_000u32).map(|i| (i % 253) as u8).collect();
    let after: Vec<u8> = (0..300_000u32).map(|i| (i % 241) as u8).collect();
    garbler.channel.send(&before).unwrap();
    garbler.channel.flush().unwrap();
    // Told before the session can see the move.
    let mut told = None;
    let settled = mover
        .settle(&aes(), &long_lossy(), &cfg(), |s| told = Some(s.clone()))
        .unwrap();
    assert_eq!(settled.transport.name(), "blast", "{:?}", settled.decision);
    assert!(settled.moved);
    assert_eq!(told.map(|s| s.transport), Some(settled.transport.clone()));
    // The garbler takes the move at a send after the service admitted it: one-byte
    // fillers until then, a 1 to say what follows is the rest.
    let news = garbler.moved.clone().unwrap();
    let deadline = Instant::now() + PATIENCE;
    while news.moved().is_none() {
        assert!(Instant::now() < deadline, "the move was never taken");
        garbler.channel.send(&[0]).unwrap();
        garbler.channel.flush().unwrap();
        thread::sleep(Duration::from_millis(5));
    }
    assert_eq!(news.moved().unwrap().transport.name(), "blast");
    garbler.channel.send(&[1]).unwrap();
    garbler.channel.send(&after).unwrap();
    garbler.channel.flush().unwrap();
    let mut e = evaluator.join().unwrap();
    let mut got = vec![0u8; before.len()];
    e.recv(&mut got).unwrap();
    assert!(got == before);
    let mut byte = [0u8; 1];
    loop {
        e.recv(&mut byte).unwrap();
        if byte[0] == 1 {
            break;
        }
        assert_eq!(byte[0], 0);
    }
    let mut got = vec![0u8; after.len()];
    e.recv(&mut got).unwrap();
    assert!(got == after);
    assert_eq!(settled.carried().map(|t| t.name()), Some("blast"));
    // The evaluator's sending stays on the first connection.
    e.send(b"done").unwrap();
    e.flush().unwrap();
    let mut done = [0u8; 4];
    garbler.channel.recv(&mut done).unwrap();
    assert_eq!(&done, b"done");
}

#[test]
fn a_started_session_stays_where_moving_would_not_pay() {
    let Session {
        svc: _svc,
        mover,
        evaluator,
        mut garbler,
    } = started([127, 0, 5, 2]);
    let lan = Path::exact(0.0005, 125e6, 0.0);
    let settled = mover.settle(&aes(), &lan, &cfg(), |_| {}).unwrap();
    assert!(!settled.moved, "{:?}", settled.decision);
    assert_eq!(settled.transport.name(), "tcp");
    assert_eq!(settled.carried(), Some(&settled.transport));
    garbler.channel.send(b"stayed").unwrap();
    garbler.channel.flush().unwrap();
    let mut e = evaluator.join().unwrap();
    let mut got = [0u8; 6];
    e.recv(&mut got).unwrap();
    assert_eq!(&got, b"stayed");
    assert!(garbler.moved.unwrap().moved().is_none());
}

#[test]
fn a_move_without_the_sessions_secret_is_refused_and_the_session_goes_on() {
    let Session {
        svc,
        mover,
        evaluator,
        mut garbler,
    } = started([127, 0, 5, 3]);
    // A stranger who saw the statement's session number but not the secret.
    let session = garbler.session;
    let port = svc.card().port_of("tcp").unwrap();
    let mut stranger = TcpStream::connect(SocketAddr::from(([127, 0, 5, 3], port))).unwrap();
    let forged = wire::move_bytes(&Move {
        session,
        secret: "00".repeat(32),
        path: long_lossy(),
        decision: garbler.decision.clone(),
        lane: None,
    })
    .unwrap();
    stranger.write_all(&forged).unwrap();
    stranger
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = Vec::new();
    stranger.read_to_end(&mut answer).unwrap();
    assert_eq!(&answer[..4], REFUSAL_MAGIC, "{answer:?}");
    let reason = String::from_utf8_lossy(&answer[FRAME_HEADER..]);
    assert!(reason.contains("wrong secret"), "{reason}");
    // The session runs on, and its own move still works.
    garbler.channel.send(b"still").unwrap();
    garbler.channel.flush().unwrap();
    let mut e = evaluator.join().unwrap();
    let mut got = [0u8; 5];
    e.recv(&mut got).unwrap();
    assert_eq!(&got, b"still");
    let settled = mover.settle(&aes(), &long_lossy(), &cfg(), |_| {}).unwrap();
    assert!(settled.moved);
}
