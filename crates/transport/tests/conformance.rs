//! The transport contract (crate docs), one suite run for every transport of the registry,
//! over 127.0.0.1 only.
//!
//! The tests are derived from the registry (`transputation_transport::families()`): every
//! transport string a family lists in its `conformance` field gets every case below, named
//! `SPEC::CASE` (`cargo test -p transputation-transport --test conformance -- udt:mss=9000::`
//! runs one transport string). Transports over UDP also get a case in which a relay drops
//! one datagram: one that repairs loss (`udt`, `quic`; its first string) must deliver
//! everything intact, one that does not (`udp`; every string) must report
//! [`Error::Unreliable`] and deliver no byte of the damaged message. Adding a transport to the registry adds it
//! here; nothing in this file names one.
//!
//! A transport whose listener fails with [`Error::CongestionControl`] (a kernel without
//! bbr) is skipped with a message on stderr; every other failure fails the test.

use std::net::{SocketAddr, TcpListener, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::thread;
use std::time::{Duration, Instant};

use libtest_mimic::{Arguments, Trial};
use transputation_transport::{families, Channel, Config, Delivery, Error, Framed, TransportSpec};

/// A case: runs on the transport string it is given, panics on failure.
type Case = fn(&str);

/// The cases every transport string runs: (name, case).
const CASES: &[(&str, Case)] = &[
    ("message_of_0_bytes", |s| cases::one_message(s, 0)),
    ("message_of_1_byte", |s| cases::one_message(s, 1)),
    ("message_of_64_kib", |s| cases::one_message(s, 64 << 10)),
    ("message_of_1_mib", |s| cases::one_message(s, 1 << 20)),
    ("message_of_256_mib", |s| cases::huge_message(s, 256 << 20)),
    ("messages_of_sizes_around_boundaries", cases::boundary_sizes),
    ("many_small_messages_in_order", |s| {
        cases::many_small(s, 100_000)
    }),
    ("both_directions_at_once", |s| {
        cases::both_directions(s, 32 << 20)
    }),
    (
        "peer_closing_mid_message_is_an_error",
        cases::peer_closes_mid_message,
    ),
    (
        "connecting_to_a_closed_port_fails_in_time",
        cases::closed_port,
    ),
    (
        "oversized_messages_are_refused_on_both_sides",
        cases::oversized,
    ),
    (
        "accepting_waits_for_contact_as_long_as_the_accept_timeout",
        cases::accept_timeout,
    ),
];

/// One trial running `case` on `spec`; libtest-mimic counts a panic in it as its failure.
fn trial(spec: &'static str, name: &str, case: Case) -> Trial {
    Trial::test(format!("{spec}::{name}"), move || {
        case(spec);
        Ok(())
    })
}

fn main() {
    let args = Arguments::from_args();
    let mut trials = Vec::new();
    for family in families() {
        for (i, &spec) in family.conformance.iter().enumerate() {
            for &(name, case) in CASES {
                trials.push(trial(spec, name, case));
            }
            match (i, family.delivery) {
                (0, Delivery::RepairsDatagrams) => {
                    trials.push(trial(spec, "one_lost_datagram_is_repaired", |s| {
                        cases::lost_datagram(s, cases::Loss::Repaired)
                    }))
                }
                (_, Delivery::ReportsLoss) => trials.push(trial(
                    spec,
                    "one_lost_datagram_is_reported_not_delivered",
                    |s| cases::lost_datagram(s, cases::Loss::Reported),
                )),
                _ => {}
            }
        }
    }
    libtest_mimic::run(&args, trials).exit();
}

/// The cases, each a function of the transport string.
mod cases {
    use super::*;

    /// How a transport over UDP must treat a lost datagram.
    #[derive(Debug, Clone, Copy, PartialEq, Eq)]
    pub enum Loss {
        /// Deliver everything intact anyway (it retransmits).
        Repaired,
        /// Fail with [`Error::Unreliable`], delivering nothing of the damaged message.
        Reported,
    }

    /// Bounds every wait in a case, so a broken transport fails instead of hanging.
    fn cfg() -> Config {
        Config {
            io_timeout: Duration::from_secs(10),
            connect_attempts: 20,
            retry_delay: Duration::from_millis(20),
            ..Config::default()
        }
    }

    /// The 256 MiB cases take this for writing, every other case for reading: a huge case
    /// runs alone (two buffers of 256 MiB, CPU-bound, and `udp` has no flow control, so a
    /// receiver starved of CPU loses datagrams).
    static LARGE: RwLock<()> = RwLock::new(());

    /// Listens on 127.0.0.1 with `spec`, or `None` (and a note) where this machine lacks
    /// what the spec needs.
    fn listen(
        spec: &str,
        cfg: &Config,
    ) -> Option<(TransportSpec, transputation_transport::Listener)> {
        let parsed: TransportSpec = spec.parse().unwrap();
        match parsed.listen("127.0.0.1:0".parse().unwrap(), cfg) {
            Ok(l) => Some((parsed, l)),
            Err(e @ Error::CongestionControl { .. }) => {
                eprintln!("skipping {spec}: {e}");
                None
            }
            Err(e) => panic!("{spec}: listening failed: {e}"),
        }
    }

    /// Runs `server` on an accepted channel in a thread and `client` on a connected one
    /// (through `relay` instead of directly, when given one), beside other cases.
    fn pair<S, C, A, B>(
        spec: &str,
        cfg: &Config,
        relay: Option<&Relay>,
        server: S,
        client: C,
    ) -> Option<(A, B)>
    where
        S: FnOnce(Box<dyn Channel>) -> A + Send + 'static,
        C: FnOnce(Box<dyn Channel>) -> B,
        A: Send + 'static,
    {
        let _shared = LARGE.read().unwrap_or_else(|p| p.into_inner());
        pair_unlocked(spec, cfg, relay, server, client)
    }

    /// [`pair`] for a caller that holds [`LARGE`] already.
    fn pair_unlocked<S, C, A, B>(
        spec: &str,
        cfg: &Config,
        relay: Option<&Relay>,
        server: S,
        client: C,
    ) -> Option<(A, B)>
    where
        S: FnOnce(Box<dyn Channel>) -> A + Send + 'static,
        C: FnOnce(Box<dyn Channel>) -> B,
        A: Send + 'static,
    {
        let (parsed, listener) = listen(spec, cfg)?;
        let addr = match relay {
            Some(r) => r.start(listener.local_addr()),
            None => listener.local_addr(),
        };
        let h = thread::spawn(move || server(listener.accept().expect("accept")));
        let c = client(parsed.connect(addr, cfg).expect("connect"));
        let s = h.join().unwrap_or_else(|p| std::panic::resume_unwind(p));
        Some((s, c))
    }

    /// Byte `i` of the test pattern `seed`: 8-byte words of a multiplicative hash of the
    /// word's position, so shifted, repeated or swapped data does not match.
    fn fill(buf: &mut [u8], seed: u64, offset: u64) {
        debug_assert!(offset.is_multiple_of(8));
        let word = |w: u64| {
            (w ^ seed.rotate_left(29))
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .to_le_bytes()
        };
        let mut chunks = buf.chunks_exact_mut(8);
        let mut w = offset / 8;
        for c in &mut chunks {
            c.copy_from_slice(&word(w));
            w += 1;
        }
        let tail = chunks.into_remainder();
        let n = tail.len();
        tail.copy_from_slice(&word(w)[..n]);
    }

    pub(super) fn pattern(len: usize, seed: u64) -> Vec<u8> {
        let mut v = vec![0; len];
        fill(&mut v, seed, 0);
        v
    }

    /// Checks `got` against the pattern without a second buffer of its size; names the
    /// first differing byte.
    fn check(got: &[u8], seed: u64, what: &str) {
        const BLOCK: usize = 1 << 20;
        let mut want = vec![0u8; BLOCK];
        for (i, block) in got.chunks(BLOCK).enumerate() {
            let want = &mut want[..block.len()];
            fill(want, seed, (i * BLOCK) as u64);
            if block != &*want {
                let at = block.iter().zip(want.iter()).position(|(a, b)| a != b);
                panic!("{what}: wrong content at byte {}", i * BLOCK + at.unwrap());
            }
        }
    }

    /// One message each way (sent, then echoed back), content and byte counters checked.
    pub fn one_message(spec: &str, len: usize) {
        let Some((s, c)) = pair(
            spec,
            &cfg(),
            None,
            move |ch| {
                let mut ch = Framed::new(ch);
                let m = ch.recv_message().unwrap();
                assert_eq!(m.len(), len);
                ch.send_message(&m).unwrap();
                ch.close().unwrap();
                // The client closes after the echo: the end of the stream, nothing more.
                assert!(matches!(ch.recv_message(), Err(Error::Closed { .. })));
                (m, ch.stats())
            },
            |ch| {
                let mut ch = Framed::new(ch);
                ch.send_message(&pattern(len, 1)).unwrap();
                let echo = ch.recv_message().unwrap();
                ch.close().unwrap();
                (echo, ch.stats())
            },
        ) else {
            return;
        };
        check(&s.0, 1, &format!("{spec}: the server's copy"));
        assert_eq!(c.0.len(), len, "{spec}");
        check(&c.0, 1, &format!("{spec}: the echo"));
        let (s, c) = (s.1, c.1);
        assert_eq!((c.sent, c.received), (s.received, s.sent), "{spec}");
        assert!(c.sent >= len as u64 + 8, "{spec}: {c:?}");
    }

    /// One message of `len` bytes one way, checked block by block, then a one-byte answer.
    pub fn huge_message(spec: &str, len: usize) {
        let _alone = LARGE.write().unwrap_or_else(|p| p.into_inner());
        let max = len as u64;
        let start = Instant::now();
        // Both buffers are ready, every page touched, before the transfer: `udp` has no
        // flow control, and a receiver stalled by page faults would lose datagrams.
        let mut received = vec![1u8; len];
        let sent = pattern(len, 2);
        let Some(((), took)) = pair_unlocked(
            spec,
            &cfg(),
            None,
            move |ch| {
                let mut ch = Framed::with_max_message(ch, max);
                ch.recv_message_into(&mut received).unwrap();
                assert_eq!(received.len(), len);
                check(&received, 2, "the received message");
                drop(received);
                ch.send_message(b"ok").unwrap();
                ch.close().unwrap();
            },
            |ch| {
                let mut ch = Framed::with_max_message(ch, max);
                let sending = Instant::now();
                ch.send_message(&sent).unwrap();
                drop(sent);
                assert_eq!(ch.recv_message().unwrap(), b"ok");
                sending.elapsed()
            },
        ) else {
            return;
        };
        eprintln!(
            "{spec}: {} MiB in {:.2} s ({:.2} s with generating and checking)",
            len >> 20,
            took.as_secs_f64(),
            start.elapsed().as_secs_f64()
        );
    }

    /// Sizes at the edges of frame headers, buffers, chunks and datagrams, echoed after all
    /// arrived.
    pub fn boundary_sizes(spec: &str) {
        const SIZES: [usize; 12] = [
            0,
            1,
            7,
            8,
            1023,
            1024,
            65535,
            65536,
            65537,
            1 << 20,
            (1 << 20) + 13,
            3 << 20,
        ];
        let Some((s, c)) = pair(
            spec,
            &cfg(),
            None,
            |ch| {
                // Receive everything before echoing, so that no buffer size can make both
                // ends block on sending.
                let mut ch = Framed::new(ch);
                let all: Vec<Vec<u8>> = SIZES.iter().map(|_| ch.recv_message().unwrap()).collect();
                for m in &all {
                    ch.send_message(m).unwrap();
                }
                ch.close().unwrap();
                ch.stats()
            },
            |ch| {
                let mut ch = Framed::new(ch);
                for (i, &n) in SIZES.iter().enumerate() {
                    ch.send_message(&pattern(n, 10 + i as u64)).unwrap();
                }
                for (i, &n) in SIZES.iter().enumerate() {
                    let m = ch.recv_message().unwrap();
                    assert_eq!(m.len(), n, "{spec}: message {i}");
                    check(&m, 10 + i as u64, &format!("{spec}: message {i}"));
                }
                ch.close().unwrap();
                ch.stats()
            },
        ) else {
            return;
        };
        let payload: u64 = SIZES.iter().map(|&n| n as u64 + 8).sum();
        assert_eq!((c.sent, c.received), (s.received, s.sent), "{spec}");
        assert!(c.sent >= payload, "{spec}: {c:?}");
    }

    /// `n` messages of 0 to 40 bytes, each naming its index, arrive all and in order.
    pub fn many_small(spec: &str, n: u32) {
        let msg = |i: u32| {
            let mut m = i.to_be_bytes().to_vec();
            m.resize((i % 41) as usize, (i % 251) as u8);
            m
        };
        let Some((got, ())) = pair(
            spec,
            &cfg(),
            None,
            move |ch| {
                let mut ch = Framed::new(ch);
                let mut buf = Vec::new();
                for i in 0..n {
                    ch.recv_message_into(&mut buf).unwrap();
                    assert!(buf == msg(i), "message {i}: {buf:?}");
                }
                ch.send_message(b"ok").unwrap();
                ch.close().unwrap();
                n
            },
            move |ch| {
                let mut ch = Framed::new(ch);
                for i in 0..n {
                    ch.send_message(&msg(i)).unwrap();
                }
                assert_eq!(ch.recv_message().unwrap(), b"ok");
                // Closed, as in the other cases: a client that left without ending its
                // stream made the server's close report the peer gone (seen on blast with
                // a loaded host, when the client's departure beat the end's acknowledgement).
                ch.close().unwrap();
            },
        ) else {
            return;
        };
        assert_eq!(got, n, "{spec}");
    }

    /// Both ends send `volume` bytes in messages of up to 16 KiB while receiving the
    /// other's. Each keeps at most `AHEAD` messages ahead of what it received, so at any
    /// moment one direction has at most 64 KiB unread: that fits the smallest socket
    /// buffers, so neither end can block both.
    pub fn both_directions(spec: &str, volume: usize) {
        const AHEAD: usize = 4;
        const MAX: usize = 16 << 10;
        let sizes: Vec<usize> = {
            let mut v = Vec::new();
            let (mut left, mut i) = (volume, 0usize);
            while left > 0 {
                let n = ((i * 7919) % MAX + 1).min(left);
                v.push(n);
                left -= n;
                i += 1;
            }
            v
        };
        let talk = move |ch: Box<dyn Channel>, mine: u64, theirs: u64, sizes: Vec<usize>| {
            let mut ch = Framed::new(ch);
            let mut buf = Vec::new();
            for i in 0..sizes.len() + AHEAD {
                if let Some(&n) = sizes.get(i) {
                    ch.send_message(&pattern(n, mine + i as u64)).unwrap();
                }
                if i >= AHEAD {
                    let j = i - AHEAD;
                    ch.recv_message_into(&mut buf).unwrap();
                    assert_eq!(buf.len(), sizes[j], "message {j}");
                    check(&buf, theirs + j as u64, &format!("message {j}"));
                }
            }
            ch.close().unwrap();
            ch.stats()
        };
        let s_sizes = sizes.clone();
        let start = Instant::now();
        let Some((s, c)) = pair(
            spec,
            &cfg(),
            None,
            move |ch| talk(ch, 1 << 32, 1 << 40, s_sizes),
            move |ch| talk(ch, 1 << 40, 1 << 32, sizes),
        ) else {
            return;
        };
        assert_eq!((c.sent, c.received), (s.received, s.sent), "{spec}");
        assert!(c.sent >= volume as u64 && s.sent >= volume as u64, "{spec}");
        eprintln!(
            "{spec}: {} MiB each way in {:.2} s",
            volume >> 20,
            start.elapsed().as_secs_f64()
        );
    }

    /// The peer announces 1 MiB, sends 1000 bytes of it and goes away: the receiver gets an
    /// error (closed, or silent past the timeout), never a short or padded message.
    pub fn peer_closes_mid_message(spec: &str) {
        let cfg = Config {
            io_timeout: Duration::from_secs(2),
            ..cfg()
        };
        let Some(((e, took), ())) = pair(
            spec,
            &cfg,
            None,
            |ch| {
                let mut ch = Framed::new(ch);
                let start = Instant::now();
                let e = ch.recv_message().unwrap_err();
                (e, start.elapsed())
            },
            |mut ch| {
                ch.send(&(1u64 << 20).to_be_bytes()).unwrap();
                ch.send(&[7; 1000]).unwrap();
                ch.flush().unwrap();
                drop(ch);
            },
        ) else {
            return;
        };
        assert!(
            matches!(e, Error::Closed { .. } | Error::Timeout { .. }),
            "{spec}: {e}"
        );
        assert!(
            took < cfg.io_timeout + Duration::from_secs(1),
            "{spec}: {took:?}"
        );
    }

    /// A port where nothing listens, neither TCP nor UDP (free a moment ago).
    fn free_port() -> SocketAddr {
        loop {
            let t = TcpListener::bind("127.0.0.1:0").unwrap();
            let addr = t.local_addr().unwrap();
            if UdpSocket::bind(addr).is_ok() {
                return addr;
            }
        }
    }

    /// Connecting where nobody listens fails within the connect budget.
    pub fn closed_port(spec: &str) {
        let cfg = Config {
            connect_timeout: Duration::from_millis(500),
            connect_attempts: 3,
            retry_delay: Duration::from_millis(50),
            io_timeout: Duration::from_secs(2),
            ..Config::default()
        };
        let parsed: TransportSpec = spec.parse().unwrap();
        let addr = free_port();
        let start = Instant::now();
        let e = parsed.connect(addr, &cfg).map(|_| ()).unwrap_err();
        let took = start.elapsed();
        if let Error::CongestionControl { .. } = e {
            eprintln!("skipping {spec}: {e}");
            return;
        }
        assert!(
            matches!(e, Error::Connect { addr: a, .. } if a == addr),
            "{spec}: {e}"
        );
        // The budget once, not once per attempt (3 x 500 ms), plus slack.
        let bound = cfg.connect_budget() + cfg.retry_delay + Duration::from_millis(700);
        assert!(took < bound, "{spec}: {took:?} (bound {bound:?})");
    }

    /// Accepting waits for a client to make contact as long as [`Config::accept_timeout`]
    /// says, apart from the I/O timeout: nobody comes, and a short accept timeout ends the
    /// wait although the I/O timeout is long; a client that comes after the I/O timeout but
    /// within a long accept timeout is served.
    pub fn accept_timeout(spec: &str) {
        let short_wait = Config {
            io_timeout: Duration::from_secs(30),
            accept_timeout: Some(Duration::from_millis(300)),
            ..cfg()
        };
        let Some((_, listener)) = listen(spec, &short_wait) else {
            return;
        };
        let start = Instant::now();
        let e = listener.accept().map(|_| ()).unwrap_err();
        let took = start.elapsed();
        assert!(
            matches!(e, Error::Timeout { .. }) && took < Duration::from_secs(3),
            "{spec}: {e} after {took:?}"
        );

        let long_wait = Config {
            io_timeout: Duration::from_millis(400),
            accept_timeout: Some(Duration::from_secs(10)),
            ..cfg()
        };
        let _shared = LARGE.read().unwrap_or_else(|p| p.into_inner());
        let Some((parsed, listener)) = listen(spec, &long_wait) else {
            return;
        };
        let addr = listener.local_addr();
        let server = thread::spawn(move || {
            let mut ch = Framed::new(listener.accept().expect("accept"));
            ch.send_message(b"late").unwrap();
            ch.flush().unwrap();
            // Until the client has read it (what is unread when a channel closes may be
            // lost).
            ch.recv_message().unwrap()
        });
        thread::sleep(long_wait.io_timeout * 3);
        let mut ch = Framed::new(parsed.connect(addr, &long_wait).expect("connect"));
        let got = ch.recv_message().unwrap();
        ch.send_message(b"done").unwrap();
        ch.flush().unwrap();
        let reply = server
            .join()
            .unwrap_or_else(|p| std::panic::resume_unwind(p));
        assert_eq!(reply, b"done", "{spec}");
        assert_eq!(got, b"late", "{spec}");
    }

    /// A receiver refuses a message over its maximum ([`Error::MessageTooLarge`]) after
    /// taking one at the maximum; a sender refuses to send one over its own
    /// ([`Error::SendTooLarge`]) and sends nothing.
    pub fn oversized(spec: &str) {
        let Some((err, ())) = pair(
            spec,
            &cfg(),
            None,
            |ch| {
                let mut ch = Framed::with_max_message(ch, 1000);
                assert_eq!(ch.recv_message().unwrap(), pattern(1000, 3));
                let err = ch.recv_message().unwrap_err();
                // After an error the channel is poisoned.
                assert!(matches!(ch.recv_message(), Err(Error::Poisoned)));
                err
            },
            |ch| {
                let mut small = Framed::with_max_message(ch, 10);
                let before = small.stats();
                let e = small.send_message(&[0; 11]).unwrap_err();
                assert!(matches!(e, Error::SendTooLarge { len: 11, max: 10 }), "{e}");
                assert_eq!(
                    e.to_string(),
                    "refusing to send a message of 11 bytes, more than the maximum of 10 bytes"
                );
                assert_eq!(small.stats(), before, "nothing was sent");
                let mut ch = Framed::with_max_message(small.into_inner(), 1_000_000);
                ch.send_message(&pattern(1000, 3)).unwrap();
                ch.send_message(&[2; 1001]).unwrap();
                // The receiver may already have refused the message and dropped its end,
                // so the flush may fail: only the refusals are under test here.
                ch.flush().ok();
            },
        ) else {
            return;
        };
        assert!(
            matches!(
                err,
                Error::MessageTooLarge {
                    len: 1001,
                    max: 1000
                }
            ),
            "{spec}: {err}"
        );
        assert_eq!(
            err.to_string(),
            "the peer announced a message of 1001 bytes, more than the maximum of 1000 bytes"
        );
    }

    /// The client sends 1 MiB through a relay that drops its 100th datagram of at least
    /// 200 bytes (a data datagram for `udp` at any MTU; its handshakes and FINs have 24). The relay must have dropped exactly one.
    pub fn lost_datagram(spec: &str, loss: Loss) {
        let relay = Relay::new(100);
        let Some((got, ())) = pair(
            spec,
            &cfg(),
            Some(&relay),
            |ch| {
                let mut ch = Framed::new(ch);
                ch.recv_message()
            },
            |ch| {
                let mut ch = Framed::new(ch);
                ch.send_message(&pattern(1 << 20, 4)).unwrap();
                // Wait for the receiver (a reliable transport answers, a lossy one does
                // not), then finish the stream.
                let _ = ch.recv_message();
                let _ = ch.close();
            },
        ) else {
            return;
        };
        assert_eq!(relay.dropped(), 1, "{spec}: the relay dropped no datagram");
        match (loss, got) {
            (Loss::Reported, Err(e)) => {
                assert!(matches!(e, Error::Unreliable { .. }), "{spec}: {e}");
            }
            (Loss::Reported, Ok(m)) => {
                panic!(
                    "{spec}: a message of {} bytes was delivered despite the loss",
                    m.len()
                )
            }
            (Loss::Repaired, Ok(m)) => {
                assert_eq!(m.len(), 1 << 20, "{spec}");
                check(&m, 4, spec);
            }
            (Loss::Repaired, Err(e)) => panic!("{spec}: the loss was not repaired: {e}"),
        }
    }
}

/// A UDP relay on 127.0.0.1 between a client and a server, which drops the `drop_nth`
/// (1-based) datagram of at least [`Relay::DATA_BYTES`] bytes from the client.
///
/// The client talks to the relay's one socket; the relay forwards its datagrams from a
/// second socket to the server's address, which it updates to wherever the server last
/// answered from (`udp` answers from a new socket per connection, see udp.rs), and
/// forwards everything the server sends back to the client. It stops when dropped.
struct Relay {
    drop_nth: u64,
    dropped: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    threads: Mutex<Vec<thread::JoinHandle<()>>>,
}

impl Relay {
    const DATA_BYTES: usize = 200;

    fn new(drop_nth: u64) -> Self {
        Relay {
            drop_nth,
            dropped: Arc::default(),
            stop: Arc::default(),
            threads: Mutex::default(),
        }
    }

    /// Starts relaying to `server`; gives the address for the client.
    fn start(&self, server: SocketAddr) -> SocketAddr {
        let outer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let inner = UdpSocket::bind("127.0.0.1:0").unwrap();
        for s in [&outer, &inner] {
            s.set_read_timeout(Some(Duration::from_millis(50))).unwrap();
            // Room for bursts, so that the relay itself loses nothing.
            use rustix::net::sockopt;
            if sockopt::set_socket_recv_buffer_size_force(s, 16 << 20).is_err() {
                let _ = sockopt::set_socket_recv_buffer_size(s, 16 << 20);
            }
        }
        let addr = outer.local_addr().unwrap();
        let client: Arc<Mutex<Option<SocketAddr>>> = Arc::default();
        let target = Arc::new(Mutex::new(server));
        // Client to server, dropping one data datagram.
        let up = {
            let (outer, inner) = (outer.try_clone().unwrap(), inner.try_clone().unwrap());
            let (client, target, stop) = (client.clone(), target.clone(), self.stop.clone());
            let (dropped, nth) = (self.dropped.clone(), self.drop_nth);
            thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                let mut data = 0u64;
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, from)) = outer.recv_from(&mut buf) else {
                        continue;
                    };
                    *client.lock().unwrap() = Some(from);
                    if n >= Relay::DATA_BYTES {
                        data += 1;
                        if data == nth {
                            dropped.fetch_add(1, Ordering::Relaxed);
                            continue;
                        }
                    }
                    let to = *target.lock().unwrap();
                    let _ = inner.send_to(&buf[..n], to);
                }
            })
        };
        // Server to client.
        let down = {
            let stop = self.stop.clone();
            thread::spawn(move || {
                let mut buf = vec![0u8; 65536];
                while !stop.load(Ordering::Relaxed) {
                    let Ok((n, from)) = inner.recv_from(&mut buf) else {
                        continue;
                    };
                    *target.lock().unwrap() = from;
                    if let Some(c) = *client.lock().unwrap() {
                        let _ = outer.send_to(&buf[..n], c);
                    }
                }
            })
        };
        self.threads.lock().unwrap().extend([up, down]);
        addr
    }

    fn dropped(&self) -> u64 {
        self.dropped.load(Ordering::Relaxed)
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.get_mut().unwrap().drain(..) {
            let _ = t.join();
        }
    }
}
