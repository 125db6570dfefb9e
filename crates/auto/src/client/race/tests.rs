//! A raced session's agreement over real sockets: both parties see the race the statement
//! named, its stream arrives whole and protected across the race, both name the same
//! winner; a lane without the session's secret is refused while the session goes on; a
//! circuit too small to race is not raced.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream, UdpSocket};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use transputation_circuits::library;
use transputation_garble::Scheme;
use transputation_model::{Calibration, Path};
use transputation_transport::secure::keys::Psk;
use transputation_transport::{Channel, Config, Credentials, SecureChannel};

use crate::wire::{self, Move, FRAME_HEADER, REFUSAL_MAGIC};
use crate::{race_plan, Client, Planner, Service};

const PATIENCE: Duration = Duration::from_secs(10);

fn creds() -> Credentials {
    Credentials::Psk(Psk::from_bytes([6; 32]))
}

fn cfg() -> Config {
    Config {
        io_timeout: Duration::from_secs(10),
        ..Config::default()
    }
}

/// 9.6 MB of tables under `ideal`.
fn large() -> Planner {
    let c = library::load("synthetic:and=300000,xor=100000,inputs=64").unwrap();
    Planner::new(&c, Scheme::Ideal, Calibration::default()).unwrap()
}

/// A path where the model ranks two settings within the race's spread: a short one.
fn short() -> Path {
    Path::exact(0.0005, 10e6, 0.0)
}

#[test]
fn a_raced_session_runs_whole_and_both_name_the_winner_and_a_stranger_lane_is_refused() {
    let ip = [127, 0, 6, 1];
    let free = UdpSocket::bind(SocketAddr::from((ip, 0))).unwrap();
    let addr = free.local_addr().unwrap();
    drop(free);
    let svc = Service::start(addr, large(), cfg(), Some(Arc::new(creds()))).unwrap();
    let mut client = Client::ask(svc.local_addr()).unwrap();
    let raced = client
        .connect_race(&large(), &short(), &cfg(), PATIENCE)
        .unwrap()
        .expect("raced");
    assert_eq!(raced.lanes.len(), 2, "{:?}", raced.lanes);
    let binding = raced.agreement.binding.clone();
    let (channel, outcome) = (raced.channel, raced.outcome.clone());
    let evaluator = thread::spawn(move || {
        let mut e = SecureChannel::client_bound(channel, &creds(), &binding).unwrap();
        let mut got = vec![0u8; 6_000_000];
        e.recv(&mut got).unwrap();
        e.send(b"done").unwrap();
        e.flush().unwrap();
        got
    });
    let mut garbler = svc.next(PATIENCE).expect("a session").expect("admitted");
    let news = garbler.race.clone().expect("a raced session");
    assert_eq!(news.lanes, raced.lanes);
    // A stranger who saw the session number, not the secret, offers a lane: refused.
    let port = svc.card().port_of("tcp").unwrap();
    let mut stranger = TcpStream::connect(SocketAddr::from((ip, port))).unwrap();
    let forged = wire::move_bytes(&Move {
        session: garbler.session,
        secret: "00".repeat(32),
        path: short(),
        decision: garbler.decision.clone(),
        lane: Some(0),
    })
    .unwrap();
    stranger.write_all(&forged).unwrap();
    let sent: Vec<u8> = (0..6_000_000u32).map(|i| (i % 249) as u8).collect();
    // The garbler takes the lanes when it sends and they have joined, without waiting for
    // them: a first send of the whole stream before they join (a loaded machine) would go
    // on the first connection alone, leaving the race nothing to judge. So the stream's
    // first megabyte goes in small pieces until the race has started, then the rest.
    let (mut at, started) = (0, std::time::Instant::now());
    while at < 1_000_000 && !news.outcome.lock().unwrap().started {
        garbler.channel.send(&sent[at..at + 4096]).unwrap();
        garbler.channel.flush().unwrap();
        at += 4096;
        thread::sleep(Duration::from_millis(10));
        assert!(started.elapsed() < PATIENCE, "the lanes never joined");
    }
    garbler.channel.send(&sent[at..]).unwrap();
    let mut done = [0u8; 4];
    garbler.channel.recv(&mut done).unwrap();
    assert_eq!(&done, b"done");
    garbler.channel.close().unwrap();
    assert!(evaluator.join().unwrap() == sent);
    let (g, e) = (
        news.outcome.lock().unwrap().clone(),
        outcome.lock().unwrap().clone(),
    );
    assert!(e.started && e.winner.is_some(), "{e:?}");
    assert_eq!(g.winner, e.winner);
    stranger
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut answer = Vec::new();
    stranger.read_to_end(&mut answer).unwrap();
    assert_eq!(&answer[..4], REFUSAL_MAGIC, "{answer:?}");
    let reason = String::from_utf8_lossy(&answer[FRAME_HEADER..]);
    assert!(reason.contains("wrong secret"), "{reason}");
}

#[test]
fn a_small_circuit_or_a_clear_choice_is_not_raced() {
    let aes = Planner::new(
        &library::load("aes128").unwrap(),
        Scheme::Ideal,
        Calibration::default(),
    )
    .unwrap();
    let card = crate::Card {
        listeners: vec![wire::Listening {
            transport: "tcp".into(),
            port: 1,
        }],
        congestion: vec!["cubic".into(), "bbr".into()],
    };
    let plan = aes.choose_with(&card, &short(), &[]).unwrap();
    let why = race_plan(&aes, &card, &plan).unwrap_err();
    assert!(why.contains("too small"), "{why}");
    // One listener of one setting left on a long lossy path: nothing within the spread.
    let p = large();
    let long = Path::exact(0.2, 62.5e6, 0.01);
    let card = crate::Card {
        listeners: vec![wire::Listening {
            transport: "tcp".into(),
            port: 1,
        }],
        congestion: vec!["bbr".into()],
    };
    let plan = p.choose_with(&card, &long, &[]).unwrap();
    let why = race_plan(&p, &card, &plan).unwrap_err();
    assert!(why.contains("no second setting"), "{why}");
}
