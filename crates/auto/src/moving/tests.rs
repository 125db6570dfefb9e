//! The garbler's stream arrives whole and in order wherever it moves, under any read
//! sizes, also protected; a move the evaluator did not offer and an oversized frame are
//! errors that say so.

use std::sync::mpsc::{self, Sender};
use std::thread;
use std::time::Duration;

use transputation_transport::secure::keys::Psk;
use transputation_transport::{memory_pair, Credentials, MemoryChannel, SecureChannel};

use super::*;

const WAIT: Duration = Duration::from_secs(5);

/// Both ends of a first and of a next connection, and the offers of the next to the
/// garbler's end and to the evaluator's.
struct Ends {
    g_first: MemoryChannel,
    e_first: MemoryChannel,
    g_next: MemoryChannel,
    e_next: MemoryChannel,
    offer_g: Sender<Box<dyn Channel>>,
    offered_g: Receiver<Box<dyn Channel>>,
    offer_e: Sender<Box<dyn Channel>>,
    offered_e: Receiver<Box<dyn Channel>>,
}

fn ends() -> Ends {
    let (g_first, e_first) = memory_pair(WAIT);
    let (g_next, e_next) = memory_pair(WAIT);
    let (offer_g, offered_g) = mpsc::channel();
    let (offer_e, offered_e) = mpsc::channel();
    Ends {
        g_first,
        e_first,
        g_next,
        e_next,
        offer_g,
        offered_g,
        offer_e,
        offered_e,
    }
}

/// The garbler's messages: sizes from one byte to past a frame, each byte its position
/// in the stream modulo 251.
fn messages() -> Vec<Vec<u8>> {
    [1usize, 7, 4096, 3, MAX_FRAME + 5, 65536, 1, 300_000]
        .iter()
        .scan(0u32, |at, &n| {
            let m: Vec<u8> = (0..n).map(|i| ((*at as usize + i) % 251) as u8).collect();
            *at += n as u32;
            Some(m)
        })
        .collect()
}

/// Two ends whose garbler moves before its message `move_at` (never past the last), the
/// evaluator reading `read` bytes at a time and answering once, after the fourth message.
fn run(move_at: usize, read: usize) {
    let Ends {
        g_first,
        e_first,
        g_next,
        e_next,
        offer_g,
        offered_g,
        offer_e,
        offered_e,
    } = ends();
    let mut garbler = Moving::new(Box::new(g_first), offered_g);
    let mut evaluator = Following::new(Box::new(e_first), offered_e, WAIT);
    let all = messages();
    let sent = all.clone();
    let garbling = thread::spawn(move || {
        for (i, m) in sent.iter().enumerate() {
            if i == move_at {
                // As the service does: the evaluator offered it before the garbler took it.
                offer_e.send(Box::new(e_next)).unwrap();
                offer_g.send(Box::new(g_next)).unwrap();
                return finish(garbler, &sent, i);
            }
            garbler.send(m).unwrap();
            if i == 3 {
                let mut answer = [0u8; 5];
                garbler.recv(&mut answer).unwrap();
                assert_eq!(&answer, b"hello");
            }
        }
        drop((offer_e, offer_g, e_next, g_next));
        garbler.flush().unwrap();
        garbler
    });
    let want: Vec<u8> = all.concat();
    let mut got = vec![0u8; want.len()];
    let fourth: usize = all[..4].iter().map(Vec::len).sum();
    let mut at = 0;
    while at < got.len() {
        let mut k = read.min(got.len() - at);
        if at < fourth && at + k > fourth {
            k = fourth - at;
        }
        evaluator.recv(&mut got[at..at + k]).unwrap();
        at += k;
        if at == fourth {
            evaluator.send(b"hello").unwrap();
            evaluator.flush().unwrap();
        }
    }
    let garbler = garbling.join().unwrap();
    assert!(got == want, "move at {move_at}, reads of {read}");
    let (g, e) = (garbler.stats(), evaluator.stats());
    assert_eq!(e.sent, 5);
    assert!(g.sent >= want.len() as u64, "{g:?}");
}

/// Sends the messages from `from` on after a move (the offer is taken at the next send),
/// reads the answer after the fourth, and flushes.
fn finish(mut garbler: Moving, all: &[Vec<u8>], from: usize) -> Moving {
    for (i, m) in all.iter().enumerate().skip(from) {
        garbler.send(m).unwrap();
        assert!(
            garbler.moved.is_some(),
            "moved at the first send after the offer"
        );
        if i == 3 {
            let mut answer = [0u8; 5];
            garbler.recv(&mut answer).unwrap();
            assert_eq!(&answer, b"hello");
        }
    }
    garbler.flush().unwrap();
    garbler
}

#[test]
fn the_stream_is_whole_and_in_order_wherever_it_moves() {
    for move_at in [0, 1, 2, 5, 7, 8] {
        for read in [1, 3, 4096, MAX_FRAME + 9, usize::MAX] {
            if read == 1 && move_at > 2 {
                continue; // byte by byte through 1.4 MB: slow, and the same as 3
            }
            run(move_at, read);
        }
    }
}

#[test]
fn a_protected_session_runs_across_the_move() {
    let creds = || Credentials::Psk(Psk::from_bytes([9; 32]));
    let Ends {
        g_first,
        e_first,
        g_next,
        e_next,
        offer_g,
        offered_g,
        offer_e,
        offered_e,
    } = ends();
    let garbling = thread::spawn(move || {
        let moving = Moving::new(Box::new(g_first), offered_g);
        let mut s = SecureChannel::server(moving, &creds()).unwrap();
        s.send(&[1u8; 70_000]).unwrap();
        s.flush().unwrap();
        offer_e.send(Box::new(e_next)).unwrap();
        offer_g.send(Box::new(g_next)).unwrap();
        s.send(&[2u8; 70_000]).unwrap();
        let mut answer = [0u8; 2];
        s.recv(&mut answer).unwrap();
        assert_eq!(answer, [3, 3]);
        s.close().unwrap();
    });
    let following = Following::new(Box::new(e_first), offered_e, WAIT);
    let mut c = SecureChannel::client(following, &creds()).unwrap();
    let mut got = vec![0u8; 140_000];
    c.recv(&mut got).unwrap();
    assert!(got[..70_000].iter().all(|&b| b == 1) && got[70_000..].iter().all(|&b| b == 2));
    c.send(&[3, 3]).unwrap();
    c.flush().unwrap();
    garbling.join().unwrap();
}

#[test]
fn a_move_the_evaluator_did_not_offer_is_an_error() {
    let (mut g, e) = memory_pair(WAIT);
    let (offer, offered) = mpsc::channel::<Box<dyn Channel>>();
    drop(offer);
    let mut evaluator = Following::new(Box::new(e), offered, WAIT);
    g.send(&3u32.to_be_bytes()).unwrap();
    g.send(b"abc").unwrap();
    g.send(&MOVED).unwrap();
    g.flush().unwrap();
    let mut buf = [0u8; 4];
    let err = evaluator.recv(&mut buf).unwrap_err().to_string();
    assert!(err.contains("offered no connection"), "{err}");
}

#[test]
fn an_oversized_frame_is_an_error() {
    let (mut g, e) = memory_pair(WAIT);
    let (_offer, offered) = mpsc::channel::<Box<dyn Channel>>();
    let mut evaluator = Following::new(Box::new(e), offered, WAIT);
    g.send(&(MAX_FRAME as u32 + 1).to_be_bytes()).unwrap();
    g.flush().unwrap();
    let mut buf = [0u8; 4];
    let err = evaluator.recv(&mut buf).unwrap_err().to_string();
    assert!(err.contains("at most"), "{err}");
}

#[test]
fn the_marker_may_come_before_the_evaluator_offers() {
    // In a session the evaluator offers its connection just after sending the move, so
    // the garbler's marker can come first: the evaluator waits for the offer.
    let Ends {
        g_first,
        e_first,
        g_next,
        e_next,
        offer_g,
        offered_g,
        offer_e,
        offered_e,
    } = ends();
    let mut garbler = Moving::new(Box::new(g_first), offered_g);
    let mut evaluator = Following::new(Box::new(e_first), offered_e, WAIT);
    offer_g.send(Box::new(g_next)).unwrap();
    garbler.send(b"moved").unwrap();
    garbler.flush().unwrap();
    let late = thread::spawn(move || {
        thread::sleep(Duration::from_millis(100));
        offer_e.send(Box::new(e_next)).unwrap();
    });
    let mut got = [0u8; 5];
    evaluator.recv(&mut got).unwrap();
    assert_eq!(&got, b"moved");
    late.join().unwrap();
    // The evaluator's sending stays on the first connection and leaves with its next
    // read, unflushed, as the channel contract says.
    evaluator.send(b"back").unwrap();
    garbler.send(b"more").unwrap();
    garbler.flush().unwrap();
    let mut more = [0u8; 4];
    evaluator.recv(&mut more).unwrap();
    let mut back = [0u8; 4];
    garbler.recv(&mut back).unwrap();
    assert_eq!((&more, &back), (b"more", b"back"));
}

#[test]
fn a_protected_close_does_not_move() {
    // An offer taken while the session closes would put the close record on a connection
    // the evaluator never reads: the garbler's end stays, and the evaluator sees the end.
    let Ends {
        g_first,
        e_first,
        g_next,
        e_next: _e_next,
        offer_g,
        offered_g,
        offer_e: _offer_e,
        offered_e,
    } = ends();
    let creds = || Credentials::Psk(Psk::from_bytes([4; 32]));
    let garbling = thread::spawn(move || {
        let moving = Moving::new(Box::new(g_first), offered_g);
        let switched = moving.switched();
        let mut s = SecureChannel::server(moving, &creds()).unwrap();
        s.send(b"last").unwrap();
        s.flush().unwrap();
        offer_g.send(Box::new(g_next)).unwrap();
        s.close().unwrap();
        switched.load(std::sync::atomic::Ordering::Acquire)
    });
    let following = Following::new(Box::new(e_first), offered_e, WAIT);
    let mut c = SecureChannel::client(following, &creds()).unwrap();
    let mut got = [0u8; 4];
    c.recv(&mut got).unwrap();
    assert_eq!(&got, b"last");
    let end = c.recv(&mut [0u8; 1]).unwrap_err();
    assert!(end.to_string().contains("clos"), "{end}");
    assert!(!garbling.join().unwrap(), "moved at the close");
}
