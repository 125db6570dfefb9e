use std::io::Read;
use std::net::{SocketAddr, TcpListener};
use std::sync::{Arc, OnceLock};
use std::thread;
use std::time::{Duration, Instant};

use transputation_transport::{Channel, Config, TransportSpec};

use super::{hedge_after, hedged};
use crate::client::Early;

fn tcp() -> TransportSpec {
    "tcp".parse().unwrap()
}

fn cfg() -> Config {
    Config {
        io_timeout: Duration::from_secs(5),
        connect_timeout: Duration::from_millis(500),
        retry_delay: Duration::from_millis(50),
        connect_attempts: 10,
        ..Config::default()
    }
}

/// An early connection to `addr` that is made only after `stall` (as one whose SYN was
/// lost waits the kernel's initial timeout), or fails then if `fails`.
fn early(addr: SocketAddr, stall: Duration, fails: bool) -> Early {
    let made = thread::spawn(move || {
        thread::sleep(stall);
        if fails {
            return Err(transputation_transport::Error::Io {
                during: "connecting early",
                source: std::io::Error::other("refused in this test"),
            });
        }
        tcp().connect(addr, &cfg())
    });
    Early {
        key: "tcp".into(),
        addr,
        made,
        started: Instant::now(),
        took: Arc::new(OnceLock::new()),
    }
}

/// [`hedged`] for `tcp` to `addr` with [`cfg`], hedging `after`.
fn hedged_tcp(
    pending: Option<Early>,
    addr: SocketAddr,
    after: Duration,
) -> (transputation_transport::Result<Box<dyn Channel>>, bool) {
    hedged(pending, &tcp(), addr, &cfg(), after)
}

/// Connections `listener` has waiting within `wait`.
fn waiting(listener: &TcpListener, wait: Duration) -> usize {
    listener.set_nonblocking(true).unwrap();
    let until = Instant::now() + wait;
    let mut n = 0;
    while Instant::now() < until {
        match listener.accept() {
            Ok(_) => n += 1,
            Err(_) => thread::sleep(Duration::from_millis(5)),
        }
    }
    n
}

#[test]
fn a_stalled_connection_is_joined_by_another_that_is_taken() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let start = Instant::now();
    let stalled = early(addr, Duration::from_secs(3), false);
    let (made, was_early) = hedged_tcp(Some(stalled), addr, Duration::from_millis(50));
    assert!(made.is_ok(), "{:?}", made.err());
    assert!(!was_early, "the stalled early connection was taken");
    assert!(
        start.elapsed() < Duration::from_secs(2),
        "waited {:?} for the stalled connection",
        start.elapsed()
    );
}

#[test]
fn an_early_connection_already_made_is_taken_without_another() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let made_early = early(addr, Duration::ZERO, false);
    while !made_early.made.is_finished() {
        thread::sleep(Duration::from_millis(1));
    }
    // Long after its hedge would have fired.
    thread::sleep(Duration::from_millis(60));
    let (made, was_early) = hedged_tcp(Some(made_early), addr, Duration::from_millis(20));
    assert!(made.is_ok() && was_early);
    assert_eq!(waiting(&listener, Duration::from_millis(200)), 1);
}

#[test]
fn a_failed_early_connection_is_followed_by_a_fresh_one() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let failing = early(addr, Duration::from_millis(10), true);
    let (made, was_early) = hedged_tcp(Some(failing), addr, Duration::from_secs(10));
    assert!(made.is_ok() && !was_early);
}

#[test]
fn the_attempts_that_lose_are_closed_without_a_byte() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    // Made after the fresh attempt: it loses, and must be closed as it comes.
    let late = early(addr, Duration::from_millis(300), false);
    let (made, was_early) = hedged_tcp(Some(late), addr, Duration::from_millis(20));
    let mut kept = made.unwrap();
    assert!(!was_early);
    kept.send(b"x").unwrap();
    kept.flush().unwrap();
    let (mut first, _) = listener.accept().unwrap();
    let (mut second, _) = listener.accept().unwrap();
    let read = |s: &mut std::net::TcpStream| {
        s.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let mut buf = Vec::new();
        // The kept one sends a byte and stays open: read what it sent.
        let mut one = [0u8; 1];
        match s.read(&mut one) {
            Ok(n) => buf.extend_from_slice(&one[..n]),
            Err(e) => panic!("a connection neither sent nor closed: {e}"),
        }
        buf
    };
    let mut got = [read(&mut first), read(&mut second)];
    got.sort();
    assert_eq!(got, [Vec::new(), b"x".to_vec()]);
}

#[test]
fn with_nothing_listening_the_error_comes_within_the_budget() {
    let addr = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap()
    };
    let start = Instant::now();
    let (made, was_early) = hedged_tcp(None, addr, Duration::from_millis(20));
    assert!(made.is_err() && !was_early);
    // Each attempt retries refusals for its budget (0.5 s); three of them overlap.
    assert!(
        start.elapsed() < Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn the_hedge_waits_for_a_few_round_trips_of_the_path() {
    let tcp = tcp();
    let short = hedge_after(&tcp, 0.005);
    let long = hedge_after(&tcp, 0.2);
    assert!(
        (Duration::from_millis(25)..Duration::from_millis(40)).contains(&short),
        "{short:?}"
    );
    assert!(
        (Duration::from_millis(600)..Duration::from_millis(800)).contains(&long),
        "{long:?}"
    );
    // Kernel TCP resends a lost SYN after 1 s: on paths up to 200 ms the hedge comes first.
    assert!(long < Duration::from_secs(1));
}
