//! The garbler's stream arrives whole and in order across the race's start and its
//! verdict, under any read sizes, also protected; the faster lane wins and what a slow
//! loser took goes again on the winner; a session whose lanes never all arrive stays on
//! its first connection; an oversized chunk and a verdict before the race are errors.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use transputation_transport::secure::keys::Psk;
use transputation_transport::{
    memory_pair, ByteCounts, Channel, Credentials, Result, SecureChannel,
};

use super::frames::{Verdict, VERDICT};
use super::*;

const WAIT: Duration = Duration::from_secs(10);

type Offer = Sender<(usize, Box<dyn Channel>)>;

/// A lane whose first `free` chunks go at once and each after them takes `delay`: a slower
/// path (`free` 0), or a large first flight and then a slow rate. With a `turn`, it says
/// when its free chunks are sent (`leads`; with none free, as it takes its first chunk) or
/// waits for that before its first: which lane goes first is then the test's, not the
/// scheduler's.
struct Slow {
    inner: Box<dyn Channel>,
    free: usize,
    delay: Duration,
    turn: Option<Turn>,
}

/// The first chunk's order between lanes (see [`Slow`]).
struct Turn {
    taken: Arc<AtomicBool>,
    leads: bool,
}

impl Slow {
    /// A leading lane's free chunks are sent: the others may go.
    fn lead_done(&mut self) {
        if let Some(turn) = self.turn.take() {
            turn.taken.store(true, Ordering::SeqCst);
        }
    }
}

impl Channel for Slow {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        if bytes.len() > 64 {
            if let Some(turn) = self.turn.take_if(|t| !t.leads) {
                let deadline = std::time::Instant::now() + WAIT;
                while !turn.taken.load(Ordering::SeqCst) && std::time::Instant::now() < deadline {
                    thread::sleep(Duration::from_millis(1));
                }
            }
            if self.free > 0 {
                self.free -= 1;
            } else {
                self.lead_done();
                thread::sleep(self.delay);
            }
            self.inner.send(bytes)?;
            if self.free == 0 {
                self.lead_done();
            }
            return Ok(());
        }
        self.inner.send(bytes)
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.inner.recv(buf)
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn close(&mut self) -> Result<()> {
        self.inner.close()
    }
    fn stats(&self) -> ByteCounts {
        self.inner.stats()
    }
}

#[test]
fn the_verdict_judges_the_rate_after_a_first_flight() {
    // Lane 0 sends 10 chunks at once, then one per 100 ms; lane 1 one per 4 ms once lane
    // 0's ten are sent (on a loaded host lane 0's burst could otherwise be late, and lane
    // 1 lead at the budget's half). Over the whole budget (16 chunks) lane 0 delivered
    // more; over its second half, lane 1.
    let mut e = paced_ends(
        &[
            (10, Duration::from_millis(100)),
            (0, Duration::from_millis(4)),
        ],
        16 * CHUNK as u64,
        true,
    );
    offer(&e.offer_g, &e.offer_e, std::mem::take(&mut e.lanes));
    let Ends {
        mut garbler,
        mut evaluator,
        ..
    } = e;
    let total = 40 * CHUNK;
    let garbling = thread::spawn(move || {
        garbler.send(&pattern(0, total)).unwrap();
        garbler.flush().unwrap();
        garbler
    });
    let mut got = vec![0u8; total];
    evaluator.recv(&mut got).unwrap();
    assert!(got == pattern(0, total));
    let o = evaluator.outcome().lock().unwrap().clone();
    assert_eq!(o.winner, Some(1), "{o:?}");
    assert!(
        o.lane_bytes[0] > o.lane_bytes[1],
        "the burst led over the whole race: {o:?}"
    );
    drop(garbling.join().unwrap());
}

/// Garbler's and evaluator's ends with `lanes` lanes whose garbler sides take `delays`
/// per chunk; the offers of the lanes, not yet made.
struct Ends {
    garbler: Racing,
    evaluator: RaceFollowing,
    offer_g: Offer,
    offer_e: Offer,
    lanes: Vec<(Box<dyn Channel>, Box<dyn Channel>)>,
}

fn ends(delays: &[Duration], budget: u64) -> Ends {
    let paces: Vec<(usize, Duration)> = delays.iter().map(|&d| (0, d)).collect();
    paced_ends(&paces, budget, false)
}

/// As [`ends`], each lane's garbler side a [`Slow`] of `(free, delay)`; with `in_turn`,
/// lane 0 sends its free chunks (or takes its first) before any other lane takes one.
fn paced_ends(paces: &[(usize, Duration)], budget: u64, in_turn: bool) -> Ends {
    let taken = Arc::new(AtomicBool::new(false));
    let (g_first, e_first) = memory_pair(WAIT);
    let (offer_g, offered_g) = mpsc::channel();
    let (offer_e, offered_e) = mpsc::channel();
    let lanes = paces
        .iter()
        .enumerate()
        .map(|(i, &(free, delay))| {
            let (g, e) = memory_pair(WAIT);
            let turn = in_turn.then(|| Turn {
                taken: taken.clone(),
                leads: i == 0,
            });
            let g: Box<dyn Channel> = Box::new(Slow {
                inner: Box::new(g),
                free,
                delay,
                turn,
            });
            (g, Box::new(e) as Box<dyn Channel>)
        })
        .collect();
    let n = paces.len();
    Ends {
        garbler: Racing::new(Box::new(g_first), n, offered_g, WAIT),
        evaluator: RaceFollowing::new(Box::new(e_first), n, offered_e, WAIT, budget),
        offer_g,
        offer_e,
        lanes,
    }
}

/// Offers each lane to both ends, lane by lane.
fn offer(offer_g: &Offer, offer_e: &Offer, lanes: Vec<(Box<dyn Channel>, Box<dyn Channel>)>) {
    for (k, (g, e)) in lanes.into_iter().enumerate() {
        offer_e.send((k, e)).unwrap();
        offer_g.send((k, g)).unwrap();
    }
}

/// Each byte its position in the stream modulo 251.
fn pattern(from: usize, n: usize) -> Vec<u8> {
    (from..from + n).map(|i| (i % 251) as u8).collect()
}

/// `total` bytes in messages of `size`, the lanes offered before message `race_at`, the
/// evaluator answering after the first 1,000 bytes and reading `read` at a time.
/// The garbler's and the evaluator's outcomes.
fn run(
    delays: &[Duration],
    race_at: usize,
    size: usize,
    read: usize,
    budget: u64,
) -> (RaceOutcome, RaceOutcome) {
    let total = 3_000_000;
    let mut e = ends(delays, budget);
    let offers = (
        e.offer_g.clone(),
        e.offer_e.clone(),
        std::mem::take(&mut e.lanes),
    );
    let Ends {
        mut garbler,
        mut evaluator,
        ..
    } = e;
    let garbling = thread::spawn(move || {
        let (offer_g, offer_e, mut lanes) = offers;
        let mut at = 0;
        let mut i = 0;
        while at < total {
            if i == race_at {
                offer(&offer_g, &offer_e, std::mem::take(&mut lanes));
            }
            let n = size.min(total - at);
            garbler.send(&pattern(at, n)).unwrap();
            if at < 1000 && at + n >= 1000 {
                let mut answer = [0u8; 5];
                garbler.recv(&mut answer).unwrap();
                assert_eq!(&answer, b"hello");
            }
            at += n;
            i += 1;
        }
        let mut last = [0u8; 3];
        garbler.recv(&mut last).unwrap();
        assert_eq!(&last, b"end");
        garbler.close().unwrap();
        let outcome = garbler.outcome().lock().unwrap().clone();
        outcome
    });
    let mut got = vec![0u8; total];
    let mut at = 0;
    let answer_at = 1000usize.div_ceil(size) * size;
    while at < total {
        let mut k = read.min(total - at);
        if at < answer_at && at + k > answer_at {
            k = answer_at - at;
        }
        evaluator.recv(&mut got[at..at + k]).unwrap();
        at += k;
        if at == answer_at.min(total) {
            evaluator.send(b"hello").unwrap();
            evaluator.flush().unwrap();
        }
    }
    evaluator.send(b"end").unwrap();
    evaluator.close().unwrap();
    let g = garbling.join().unwrap();
    assert!(
        got == pattern(0, total),
        "race at {race_at}, sends of {size}, reads of {read}"
    );
    let e = evaluator.outcome().lock().unwrap().clone();
    assert_eq!((g.started, g.winner), (e.started, e.winner), "{g:?} {e:?}");
    (g, e)
}

#[test]
fn the_stream_is_whole_and_in_order_across_the_race() {
    let even = [Duration::ZERO, Duration::ZERO];
    for race_at in [0, 1, 3] {
        for (size, read) in [
            (1000, 1),
            (1000, 4096),
            (100_000, 70_001),
            (CHUNK + 1, usize::MAX),
        ] {
            if read == 1 && race_at > 0 {
                continue; // byte by byte through 3 MB: slow, and the same as at 0
            }
            let (_, o) = run(&even, race_at, size, read, 1 << 20);
            assert!(o.started && o.winner.is_some(), "{o:?}");
        }
    }
}

#[test]
fn the_faster_lane_wins_and_a_slow_losers_chunks_go_again() {
    let (g, o) = run(
        &[Duration::from_millis(300), Duration::ZERO],
        0,
        CHUNK,
        CHUNK,
        1 << 20,
    );
    assert_eq!(o.winner, Some(1), "{o:?}");
    assert!(o.lane_bytes[1] > 4 * o.lane_bytes[0], "{o:?}");
    assert_eq!(g.winner, Some(1), "{g:?}");
}

#[test]
fn a_slow_losers_chunk_goes_again_on_the_winner() {
    // The garbler sends without waiting for an answer, so the stream never stalls for
    // the slow lane: its one chunk (300 ms) is still on its way when the budget has come
    // over the other. The fast lane starts once the slow one has taken that chunk (on a
    // loaded host the fast lane could otherwise carry the whole budget first).
    let paces = [(0, Duration::from_millis(300)), (0, Duration::ZERO)];
    let mut e = paced_ends(&paces, 1 << 20, true);
    offer(&e.offer_g, &e.offer_e, std::mem::take(&mut e.lanes));
    let Ends {
        mut garbler,
        mut evaluator,
        ..
    } = e;
    let total = 3_000_000;
    let garbling = thread::spawn(move || {
        garbler.send(&pattern(0, total)).unwrap();
        garbler.close().unwrap();
        let outcome = garbler.outcome().lock().unwrap().clone();
        outcome
    });
    let mut got = vec![0u8; total];
    evaluator.recv(&mut got).unwrap();
    assert!(got == pattern(0, total));
    evaluator.close().unwrap();
    let g = garbling.join().unwrap();
    assert_eq!(g.winner, Some(1), "{g:?}");
    assert!(g.resent_chunks >= 1, "{g:?}");
}

#[test]
fn a_race_whose_budget_never_arrives_has_no_winner_and_loses_nothing() {
    let (_, o) = run(&[Duration::ZERO; 3], 0, 50_000, 50_000, 1 << 30);
    assert!(o.started && o.winner.is_none(), "{o:?}");
}

#[test]
fn lanes_that_never_all_arrive_leave_the_session_on_its_first_connection() {
    let mut e = ends(&[Duration::ZERO, Duration::ZERO], 1 << 20);
    let (g, ev) = e.lanes.remove(0);
    e.offer_g.send((0, g)).unwrap();
    e.offer_e.send((0, ev)).unwrap();
    let Ends {
        mut garbler,
        mut evaluator,
        ..
    } = e;
    let sending = thread::spawn(move || {
        garbler.send(&pattern(0, 500_000)).unwrap();
        garbler.close().unwrap();
        garbler.outcome().lock().unwrap().started
    });
    let mut got = vec![0u8; 500_000];
    evaluator.recv(&mut got).unwrap();
    assert!(got == pattern(0, 500_000));
    assert!(!sending.join().unwrap(), "a race with one lane of two");
}

#[test]
fn a_protected_session_runs_across_the_race() {
    let creds = || Credentials::Psk(Psk::from_bytes([5; 32]));
    let mut e = ends(&[Duration::ZERO, Duration::from_millis(1)], 300_000);
    let offers = (
        e.offer_g.clone(),
        e.offer_e.clone(),
        std::mem::take(&mut e.lanes),
    );
    let Ends {
        garbler, evaluator, ..
    } = e;
    let garbling = thread::spawn(move || {
        let mut s = SecureChannel::server(garbler, &creds()).unwrap();
        s.send(&[1u8; 70_000]).unwrap();
        s.flush().unwrap();
        let (offer_g, offer_e, lanes) = offers;
        offer(&offer_g, &offer_e, lanes);
        s.send(&[2u8; 1_000_000]).unwrap();
        let mut answer = [0u8; 2];
        s.recv(&mut answer).unwrap();
        assert_eq!(answer, [3, 3]);
        s.close().unwrap();
    });
    let mut c = SecureChannel::client(evaluator, &creds()).unwrap();
    let mut got = vec![0u8; 1_070_000];
    c.recv(&mut got).unwrap();
    assert!(got[..70_000].iter().all(|&b| b == 1) && got[70_000..].iter().all(|&b| b == 2));
    c.send(&[3, 3]).unwrap();
    c.flush().unwrap();
    let end = c.recv(&mut [0u8; 1]).unwrap_err();
    assert!(end.to_string().contains("clos"), "{end}");
    // The garbler's close ends when this side's first connection has.
    drop(c);
    garbling.join().unwrap();
}

#[test]
fn an_oversized_chunk_is_an_error() {
    let (mut g_first, e_first) = memory_pair(WAIT);
    let (mut g_lane, e_lane) = memory_pair(WAIT);
    let (offer, offered) = mpsc::channel();
    offer
        .send((0, Box::new(e_lane) as Box<dyn Channel>))
        .unwrap();
    let mut evaluator = RaceFollowing::new(Box::new(e_first), 1, offered, WAIT, 1 << 20);
    g_first.send(&[0; 4]).unwrap(); // the race's start
    g_first.flush().unwrap();
    g_lane.send(&0u64.to_be_bytes()).unwrap();
    g_lane.send(&(MAX_FRAME as u32 + 1).to_be_bytes()).unwrap();
    g_lane.flush().unwrap();
    let err = evaluator.recv(&mut [0u8; 4]).unwrap_err().to_string();
    assert!(err.contains("at most"), "{err}");
}

#[test]
fn a_long_race_is_not_taken_for_a_silent_evaluator() {
    // The first connection gives up after 300 ms of silence; the transfer over two slow
    // lanes takes three times that, while the evaluator sends nothing of its own.
    let short = Duration::from_millis(300);
    let (g_first, e_first) = memory_pair(short);
    let (offer_g, offered_g) = mpsc::channel();
    let (offer_e, offered_e) = mpsc::channel();
    for lane in 0..2 {
        let (g, e) = memory_pair(WAIT);
        let slow = Slow {
            inner: Box::new(g),
            free: 0,
            delay: Duration::from_millis(40),
            turn: None,
        };
        offer_g
            .send((lane, Box::new(slow) as Box<dyn Channel>))
            .unwrap();
        offer_e
            .send((lane, Box::new(e) as Box<dyn Channel>))
            .unwrap();
    }
    let mut garbler = Racing::new(Box::new(g_first), 2, offered_g, WAIT);
    let mut evaluator = RaceFollowing::new(Box::new(e_first), 2, offered_e, short, 1 << 30);
    let garbling = thread::spawn(move || {
        garbler.send(&pattern(0, 40 * CHUNK)).unwrap();
        let mut answer = [0u8; 2];
        garbler.recv(&mut answer).unwrap();
        assert_eq!(&answer, b"ok");
        garbler.close().unwrap();
    });
    let mut got = vec![0u8; 40 * CHUNK];
    for piece in got.chunks_mut(CHUNK) {
        evaluator.recv(piece).unwrap();
    }
    assert!(got == pattern(0, 40 * CHUNK));
    evaluator.send(b"ok").unwrap();
    evaluator.close().unwrap();
    garbling.join().unwrap();
}

#[test]
fn a_slow_reader_holds_the_lanes_back_instead_of_failing() {
    // The evaluator holds at most 2 MB ahead and reads slowly; its lane is fast and
    // carries four times that. (One lane: with two, the one holding the next byte may lag
    // the other by any amount in memory, whose channels never fill.)
    let (g_first, e_first) = memory_pair(WAIT);
    let (offer_g, offered_g) = mpsc::channel();
    let (offer_e, offered_e) = mpsc::channel();
    let (g, e) = memory_pair(WAIT);
    offer_g.send((0, Box::new(g) as Box<dyn Channel>)).unwrap();
    offer_e.send((0, Box::new(e) as Box<dyn Channel>)).unwrap();
    let mut garbler = Racing::new(Box::new(g_first), 1, offered_g, WAIT);
    let mut evaluator = RaceFollowing::new(Box::new(e_first), 1, offered_e, WAIT, 1 << 20)
        .holding_at_most(2_000_000);
    let total = 8_000_000;
    let garbling = thread::spawn(move || {
        garbler.send(&pattern(0, total)).unwrap();
        garbler.flush().unwrap();
        garbler
    });
    let mut got = vec![0u8; total];
    for piece in got.chunks_mut(200_000) {
        thread::sleep(Duration::from_millis(5));
        evaluator.recv(piece).unwrap();
    }
    assert!(got == pattern(0, total));
    drop(garbling.join().unwrap());
}

#[test]
fn chunks_far_ahead_of_the_stream_are_an_error_not_a_heap() {
    let (mut g_first, e_first) = memory_pair(WAIT);
    let (mut g_lane, e_lane) = memory_pair(WAIT);
    let (offer, offered) = mpsc::channel();
    offer
        .send((0, Box::new(e_lane) as Box<dyn Channel>))
        .unwrap();
    let mut evaluator =
        RaceFollowing::new(Box::new(e_first), 1, offered, WAIT, 1 << 20).holding_at_most(100_000);
    g_first.send(&[0; 4]).unwrap();
    g_first.flush().unwrap();
    // Never the stream's first chunk: only ones after it, more than the end may hold.
    for k in 1..=3u64 {
        g_lane.send(&(k * CHUNK as u64).to_be_bytes()).unwrap();
        g_lane.send(&(CHUNK as u32).to_be_bytes()).unwrap();
        g_lane.send(&[7u8; CHUNK]).unwrap();
    }
    g_lane.flush().unwrap();
    let err = evaluator.recv(&mut [0u8; 4]).unwrap_err().to_string();
    assert!(err.contains("ahead of the stream"), "{err}");
}

#[test]
fn a_verdict_before_the_race_is_an_error() {
    let (g_first, mut e_raw) = memory_pair(WAIT);
    let (_offer, offered) = mpsc::channel();
    let mut garbler = Racing::new(Box::new(g_first), 2, offered, WAIT);
    let v = Verdict {
        winner: 0,
        below: 0,
        held: vec![],
    }
    .encode();
    e_raw.send(&[VERDICT]).unwrap();
    e_raw.send(&(v.len() as u32).to_be_bytes()).unwrap();
    e_raw.send(&v).unwrap();
    e_raw.flush().unwrap();
    let err = garbler.recv(&mut [0u8; 1]).unwrap_err().to_string();
    assert!(err.contains("verdict before the race"), "{err}");
}

#[test]
fn a_verdict_is_read_as_written_and_checked() {
    let v = Verdict {
        winner: 1,
        below: 1 << 40,
        held: vec![5, 1 << 33],
    };
    assert_eq!(Verdict::decode(&v.encode(), 2).unwrap(), v);
    for bad in [&v.encode()[..8], &v.encode()[..12]] {
        assert!(Verdict::decode(bad, 2).is_err());
    }
    let err = Verdict::decode(&v.encode(), 1).unwrap_err().to_string();
    assert!(err.contains("lane 1 of 1"), "{err}");
}
