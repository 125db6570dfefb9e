//! The round trips of a session, counted over a channel that delays every byte by a fixed
//! one-way latency and tags it with the number of one-way flights that led to it (a party's
//! flight count is one more than that of the latest bytes it received, as with Lamport
//! clocks). The evaluator's flights when it holds its output are the critical path of the
//! message table in the crate docs: two round trips, handshake included when protected.
//! The same sessions check the times that the round trips bound: the paper's measure
//! (`Report::paper`), when each party held its output, and the early handshake's time.

use std::collections::VecDeque;
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use transputation_2pc::{Evaluator, Garbler, LabelTransfer, Options, Report};
use transputation_circuits::{library, Circuit, Party};
use transputation_garble::Scheme;
use transputation_transport::secure::keys::Psk;
use transputation_transport::{ByteCounts, Channel, Credentials, Error, Result, SecureChannel};

/// One direction: bytes with the time they may be read and the flight they belong to.
#[derive(Default)]
struct Direction {
    queue: VecDeque<(Instant, u32, Vec<u8>)>,
    closed: bool,
}

type Shared = Arc<(Mutex<Direction>, Condvar)>;

/// One end of a pair whose bytes arrive `delay` after they are sent.
struct Delayed {
    out: Shared,
    inbox: Shared,
    delay: Duration,
    /// Flights behind the bytes this end sends: one more than the latest bytes it read.
    flight: Arc<Mutex<u32>>,
    counts: ByteCounts,
}

fn delayed_pair(delay: Duration) -> (Delayed, Delayed, Arc<Mutex<u32>>, Arc<Mutex<u32>>) {
    let (ab, ba): (Shared, Shared) = (Arc::default(), Arc::default());
    let (fa, fb) = (Arc::new(Mutex::new(0)), Arc::new(Mutex::new(0)));
    let end = |out: &Shared, inbox: &Shared, flight: &Arc<Mutex<u32>>| Delayed {
        out: Arc::clone(out),
        inbox: Arc::clone(inbox),
        delay,
        flight: Arc::clone(flight),
        counts: ByteCounts::default(),
    };
    (end(&ab, &ba, &fa), end(&ba, &ab, &fb), fa, fb)
}

impl Channel for Delayed {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        let flight = *self.flight.lock().unwrap();
        let (lock, cv) = &*self.out;
        let due = Instant::now() + self.delay;
        lock.lock()
            .unwrap()
            .queue
            .push_back((due, flight, bytes.to_vec()));
        cv.notify_all();
        self.counts.sent += bytes.len() as u64;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        let (lock, cv) = &*self.inbox;
        let give_up = Instant::now() + Duration::from_secs(20);
        let mut filled = 0;
        let mut dir = lock.lock().unwrap();
        while filled < buf.len() {
            let now = Instant::now();
            if now > give_up {
                return Err(Error::Timeout {
                    during: "receiving",
                    after: Duration::from_secs(20),
                });
            }
            let closed = dir.closed;
            match dir.queue.front_mut() {
                Some((due, flight, bytes)) if *due <= now => {
                    let n = bytes.len().min(buf.len() - filled);
                    buf[filled..filled + n].copy_from_slice(&bytes[..n]);
                    filled += n;
                    let mut mine = self.flight.lock().unwrap();
                    *mine = (*mine).max(*flight + 1);
                    bytes.drain(..n);
                    if bytes.is_empty() {
                        dir.queue.pop_front();
                    }
                }
                Some((due, ..)) => {
                    let wait = *due - now;
                    dir = cv.wait_timeout(dir, wait).unwrap().0;
                }
                None if closed => {
                    return Err(Error::Closed {
                        during: "receiving",
                    })
                }
                None => dir = cv.wait_timeout(dir, give_up - now).unwrap().0,
            }
        }
        self.counts.received += buf.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        let (lock, cv) = &*self.out;
        lock.lock().unwrap().closed = true;
        cv.notify_all();
        Ok(())
    }

    fn stats(&self) -> ByteCounts {
        self.counts
    }
}

const ONE_WAY: Duration = Duration::from_millis(40);

/// A session of `c` over a delayed pair, protected with a pre-shared key or not: both
/// reports, the flights each party had counted at its end, and the evaluator's handshake
/// time when protected.
fn session(
    c: &Circuit,
    scheme: Scheme,
    protected: bool,
) -> (Report, Report, u32, u32, Option<Duration>) {
    let (a, b, g_flights, e_flights) = delayed_pair(ONE_WAY);
    let g_in = vec![true; c.party_input_bits(Party::Garbler)];
    let e_in = vec![false; c.party_input_bits(Party::Evaluator)];
    let garbler = Garbler::new(c, Options::new(scheme), &g_in).unwrap();
    let evaluator = Evaluator::new(c, Options::new(scheme), &e_in).unwrap();
    let psk = || Credentials::Psk(Psk::from_bytes([7; 32]));
    let (g, e, handshake) = thread::scope(|s| {
        let g = s.spawn(move || {
            if protected {
                garbler.run(SecureChannel::server(a, &psk()).unwrap())
            } else {
                garbler.run(a)
            }
        });
        let (e, handshake) = if protected {
            let mut early = SecureChannel::client_early(b, &psk()).unwrap();
            assert_eq!(early.handshake_time(), None, "not run yet");
            let e = evaluator.run(&mut early);
            (e, early.handshake_time())
        } else {
            (evaluator.run(b), None)
        };
        (g.join().unwrap().unwrap(), e.unwrap(), handshake)
    });
    let flights = |f: Arc<Mutex<u32>>| *f.lock().unwrap();
    (g, e, flights(g_flights), flights(e_flights), handshake)
}

#[test]
fn the_evaluator_waits_two_round_trips_and_the_garbler_three() {
    // aes128: the garbler chooses the evaluator's labels under every scheme; the synthetic
    // circuit has many input bits for its tables, so there the OT draws them, and its
    // 20,000 bits take three OT chunks, which still travel in one flight.
    for (name, drawn) in [
        ("aes128", false),
        ("synthetic:and=200,xor=200,inputs=20000", true),
    ] {
        let c = library::load(name).unwrap();
        let transfer = LabelTransfer::first(Scheme::Ideal, &c);
        assert_eq!(transfer == LabelTransfer::Drawn, drawn, "{name}");
        waits_of(&c);
    }
}

fn waits_of(c: &Circuit) {
    for scheme in [Scheme::Ideal, Scheme::Circular, Scheme::Prf] {
        for protected in [false, true] {
            let case = format!("{scheme}, protected {protected}");
            let start = Instant::now();
            let (g, e, g_flights, e_flights, handshake) = session(c, scheme, protected);
            // The evaluator's last bytes (the decoding bits) came on flight 4: it sent
            // (1), was answered (2), sent its matrices (3) and got the tables (4).
            assert_eq!(e_flights, 4, "{case}: flights to the evaluator's output");
            // The garbler's last bytes, the output, are flight 5.
            assert_eq!(g_flights, 5, "{case}: flights to the garbler's end");
            assert_eq!((e.round_trips, g.round_trips), (2, 3), "{case}");
            assert_eq!(e.output, g.output, "{case}");
            // Every flight takes its latency: the evaluator cannot be faster than its four.
            assert!(e.total >= 4 * ONE_WAY, "{case}: {:?}", e.total);
            assert!(start.elapsed() >= 5 * ONE_WAY, "{case}");
            let transfer = LabelTransfer::first(scheme, c);
            check_times(&case, transfer, (&g, &e), start, protected, handshake);
        }
    }
}

/// The times that the flights bound. The garbler's paper measure runs from the matrices
/// (flight 3) to the output (flight 5): two one-way latencies, and before it at least the
/// two of flights 1 and 3 (one when protected, whose flight 1 arrived before `run`). The
/// evaluator's runs from its labels to the decoding bits: a round trip where the OT draws
/// the labels (the matrices go, the tables come back); where the garbler sends them (`prf`,
/// and chosen labels under a global offset) they come with the tables, so less than a
/// flight. Both hold the output after their flights.
fn check_times(
    case: &str,
    transfer: LabelTransfer,
    (g, e): (&Report, &Report),
    start: Instant,
    protected: bool,
    handshake: Option<Duration>,
) {
    assert!(
        g.paper >= 2 * ONE_WAY,
        "{case}: garbler paper {:?}",
        g.paper
    );
    let before = if protected { ONE_WAY } else { 2 * ONE_WAY };
    assert!(
        g.total >= g.paper + before,
        "{case}: garbler total {:?}, paper {:?}",
        g.total,
        g.paper
    );
    // The evaluator's first round trip (flights 1 and 2) is before its labels.
    assert!(e.paper <= e.total - 2 * ONE_WAY, "{case}: {:?}", e.paper);
    if transfer != LabelTransfer::Drawn {
        // Less than the two one-way delays of the drawn case below, with room for a busy
        // host's evaluation and scheduling.
        assert!(
            e.paper < 2 * ONE_WAY,
            "{case}: evaluator paper {:?}",
            e.paper
        );
    } else {
        assert!(
            e.paper >= 2 * ONE_WAY,
            "{case}: evaluator paper {:?}",
            e.paper
        );
    }
    assert!(e.output_at - start >= 4 * ONE_WAY, "{case}");
    assert!(g.output_at - start >= 5 * ONE_WAY, "{case}");
    assert!(g.output_at >= e.output_at + ONE_WAY, "{case}");
    match handshake {
        // Message 1 went and its answer came back: one round trip, which the session's
        // first exchange shares, so it fits in the evaluator's time to its output.
        Some(h) => assert!(h >= 2 * ONE_WAY && h < e.total, "{case}: handshake {h:?}"),
        None => assert!(
            !protected,
            "{case}: a protected session's handshake has a time"
        ),
    }
}

/// An evaluator without input bits sends no extension matrix: the tables answer its first
/// flight, so it waits once and the garbler twice (the reference SHA-256 circuit, whose
/// 512 input bits are all the garbler's).
#[test]
fn without_evaluator_input_each_party_waits_once_less() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/circuits/bristol/sha-256.txt"
    );
    let c = library::load(path).unwrap();
    assert_eq!(c.party_input_bits(Party::Evaluator), 0);
    for scheme in [Scheme::Ideal, Scheme::Prf] {
        let (g, e, g_flights, e_flights, _) = session(&c, scheme, false);
        assert_eq!((e_flights, g_flights), (2, 3), "{scheme}: flights");
        assert_eq!((e.round_trips, g.round_trips), (1, 2), "{scheme}");
        assert_eq!(e.output, g.output, "{scheme}");
    }
}
