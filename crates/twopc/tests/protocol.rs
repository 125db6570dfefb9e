//! Both parties in one process over in-memory channels and loopback TCP: outputs, byte
//! accounting, and what a mismatched, vanished or hostile peer does.

use std::net::TcpListener;
use std::thread;
use std::time::{Duration, Instant};

use transputation_2pc::{
    Error, Evaluator, Garbler, LabelTransfer, Options, OutputMode, Report, SessionHeader,
    HEADER_LEN,
};
use transputation_circuits::encoding::{decode_outputs, encode_party_input};
use transputation_circuits::{library, Circuit, Gate, Party, Stats};
use transputation_garble::Scheme;
use transputation_transport::{memory_pair, Config, Framed, TransportSpec};

const TIMEOUT: Duration = Duration::from_secs(5);

fn inputs(c: &Circuit, g: &str, e: &str) -> (Vec<bool>, Vec<bool>) {
    (
        encode_party_input(c, Party::Garbler, g).unwrap(),
        encode_party_input(c, Party::Evaluator, e).unwrap(),
    )
}

/// Runs a session over a memory pair; the garbler's and the evaluator's results.
fn session(
    c: &Circuit,
    g_opts: Options,
    e_opts: Options,
    g_in: &[bool],
    e_in: &[bool],
) -> (Result<Report, Error>, Result<Report, Error>) {
    let (a, b) = memory_pair(TIMEOUT);
    let garbler = Garbler::new(c, g_opts, g_in).unwrap();
    let evaluator = Evaluator::new(c, e_opts, e_in).unwrap();
    thread::scope(|s| {
        let g = s.spawn(move || garbler.run(a));
        let e = evaluator.run(b);
        (g.join().unwrap(), e)
    })
}

fn check_accounting(c: &Circuit, scheme: Scheme, g: &Report, e: &Report) {
    let stats = Stats::of(c);
    let tables = scheme.table_bytes(&stats) + scheme.mask_bytes(&stats);
    assert_eq!(g.sent.tables, tables, "{scheme}: table bytes");
    assert_eq!(e.received, g.sent, "{scheme}: garbler→evaluator parts");
    assert_eq!(g.received, e.sent, "{scheme}: evaluator→garbler parts");
    // The garbler's input labels: a 16-byte seed, whatever the number of its input bits.
    assert_eq!(g.sent.labels, 16);
    assert_eq!(g.sent.header, HEADER_LEN as u64);
    let m = c.party_input_bits(Party::Evaluator);
    // No reply where the OT draws the labels, 16 bytes per OT where the garbler chose them
    // under a global offset (when that is at most 1 % of the tables), ordinary OT's 32
    // bytes per OT under `prf`.
    let replies = match LabelTransfer::first(scheme, c) {
        LabelTransfer::Drawn => 0,
        LabelTransfer::Chosen => 16 * m,
        LabelTransfer::Ordinary => 32 * m,
    };
    assert_eq!(g.sent.ot, (transputation_ot::MSG_B_LEN + replies) as u64);
    assert_eq!(
        e.sent.ot,
        (transputation_ot::MSG_A_LEN + transputation_ot::msg_u_len(m)) as u64
    );
    assert_eq!(g.sent.decoding, c.n_outputs().div_ceil(8) as u64);
    // Over memory channels the channel moves exactly the framed messages.
    assert_eq!(g.channel.sent, g.sent.total(), "{scheme}");
    assert_eq!(g.channel.received, g.received.total(), "{scheme}");
    // What the completion-time model is told: every byte but the first flights and the
    // output, in two bulk messages.
    let w = transputation_2pc::workload(c, &Options::new(scheme)).unwrap();
    let framed = |n: usize| n as u64 + 8;
    let first_e = framed(HEADER_LEN) + framed(transputation_ot::MSG_A_LEN);
    let output = framed(e.sent.output as usize);
    assert_eq!(
        w.evaluator_bytes(),
        e.channel.sent - first_e - output,
        "{scheme}"
    );
    let first_g = framed(HEADER_LEN) + framed(transputation_ot::MSG_B_LEN) + framed(16);
    // Tables garbled ahead go in batches of about the batch size, so the count of frames
    // (8 bytes each) may differ by a few.
    let g_bulk = g.channel.sent - first_g;
    let slack = 16 + g_bulk / 10_000;
    assert!(
        w.garbler_bytes().abs_diff(g_bulk) <= slack,
        "{scheme}: {w:?} against {g_bulk}"
    );
}

#[test]
fn aes_sha_and_millionaires_under_every_scheme() {
    let cases = [
        (
            "aes128",
            "000102030405060708090a0b0c0d0e0f",
            "00112233445566778899aabbccddeeff",
            "69c4e0d86a7b0430d8cdb78070b4c55a",
        ),
        (
            "sha256",
            "6162638000000000000000000000000000000000000000000000000000000000",
            "0000000000000000000000000000000000000000000000000000000000000018",
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
    ];
    for (name, gx, ex, want) in cases {
        let c = library::load(name).unwrap();
        let (g_in, e_in) = inputs(&c, gx, ex);
        for scheme in Scheme::ALL {
            let (g, e) = session(&c, Options::new(scheme), Options::new(scheme), &g_in, &e_in);
            let (g, e) = (g.unwrap(), e.unwrap());
            assert_eq!(
                decode_outputs(&c, e.output.as_ref().unwrap()),
                want,
                "{name} {scheme}"
            );
            assert_eq!(g.output, e.output, "{name} {scheme}");
            check_accounting(&c, scheme, &g, &e);
        }
    }
}

#[test]
fn random_inputs_agree_with_plain_evaluation() {
    use rand::{Rng, SeedableRng};
    let mut rng = rand_chacha::ChaCha20Rng::seed_from_u64(5);
    for name in [
        "millionaires",
        "add:n=3,bits=16",
        "min:n=4,bits=8",
        "sort:n=4,bits=6",
    ] {
        let c = library::load(name).unwrap();
        for scheme in Scheme::ALL {
            let g_in: Vec<bool> = (0..c.party_input_bits(Party::Garbler))
                .map(|_| rng.gen())
                .collect();
            let e_in: Vec<bool> = (0..c.party_input_bits(Party::Evaluator))
                .map(|_| rng.gen())
                .collect();
            let mut all = Vec::new();
            let (mut gi, mut ei) = (g_in.iter(), e_in.iter());
            for g in c.inputs() {
                let it = if g.party == Party::Garbler {
                    &mut gi
                } else {
                    &mut ei
                };
                all.extend(it.by_ref().take(g.len as usize).copied());
            }
            let (g, e) = session(&c, Options::new(scheme), Options::new(scheme), &g_in, &e_in);
            assert_eq!(
                e.unwrap().output.unwrap(),
                c.eval_bits(&all),
                "{name} {scheme}"
            );
            assert!(g.is_ok());
        }
    }
}

#[test]
fn the_evaluator_alone_may_learn_the_output() {
    let c = library::load("millionaires").unwrap();
    let (g_in, e_in) = inputs(&c, "00000064", "00000063");
    let opts = Options {
        output: OutputMode::Evaluator,
        ..Options::new(Scheme::Ideal)
    };
    let (g, e) = session(&c, opts.clone(), opts, &g_in, &e_in);
    let (g, e) = (g.unwrap(), e.unwrap());
    assert_eq!(g.output, None);
    assert_eq!(g.received.output, 0);
    assert_eq!(
        decode_outputs(&c, &e.output.unwrap()),
        c.eval_hex("00000064", "00000063").unwrap()
    );
}

#[test]
fn mismatched_sessions_stop_both_parties() {
    let aes = library::load("aes128").unwrap();
    let (g_in, e_in) = inputs(&aes, &"0".repeat(32), &"0".repeat(32));
    // Different schemes.
    let (g, e) = session(
        &aes,
        Options::new(Scheme::Ideal),
        Options::new(Scheme::Prf),
        &g_in,
        &e_in,
    );
    for r in [g, e] {
        assert!(
            matches!(
                r,
                Err(Error::Mismatch {
                    field: "garbling scheme",
                    ..
                })
            ),
            "{r:?}"
        );
    }
    // Different output modes.
    let only = Options {
        output: OutputMode::Evaluator,
        ..Options::new(Scheme::Ideal)
    };
    let (g, e) = session(&aes, Options::new(Scheme::Ideal), only, &g_in, &e_in);
    for r in [g, e] {
        assert!(matches!(r, Err(Error::Mismatch { .. })), "{r:?}");
    }
    // Circuits that differ only in the order of one gate's inputs (the same function, the
    // same sizes) are still different sessions: caught by the digest.
    let mut gates = aes.gates().to_vec();
    let i = gates
        .iter()
        .position(|g| matches!(g, Gate::And { .. }))
        .unwrap();
    if let Gate::And { a, b, out } = gates[i] {
        gates[i] = Gate::And { a: b, b: a, out };
    }
    let swapped = Circuit::new(
        u64::from(aes.num_wires()),
        aes.inputs().to_vec(),
        aes.outputs().to_vec(),
        gates,
    )
    .unwrap();
    let (a, b) = memory_pair(TIMEOUT);
    let garbler = Garbler::new(&aes, Options::new(Scheme::Ideal), &g_in).unwrap();
    let evaluator = Evaluator::new(&swapped, Options::new(Scheme::Ideal), &e_in).unwrap();
    let (g, e) = thread::scope(|s| {
        let g = s.spawn(move || garbler.run(a));
        let e = evaluator.run(b);
        (g.join().unwrap(), e)
    });
    for r in [g, e] {
        assert!(
            matches!(
                r,
                Err(Error::Mismatch {
                    field: "circuit (SHA-256 of the circuit)",
                    ..
                })
            ),
            "{r:?}"
        );
    }
}

#[test]
fn a_vanished_peer_is_an_error_not_a_hang() {
    let c = library::load("aes128").unwrap();
    let (g_in, e_in) = inputs(&c, &"0".repeat(32), &"0".repeat(32));
    // The garbler's peer sends its header, then disappears.
    let (a, b) = memory_pair(Duration::from_millis(500));
    let garbler = Garbler::new(&c, Options::new(Scheme::Ideal), &g_in).unwrap();
    let header = SessionHeader::new(Party::Evaluator, &c, Scheme::Ideal, OutputMode::Both);
    let mut fake = Framed::new(b);
    fake.send_message(&header.encode()).unwrap();
    fake.close().unwrap();
    drop(fake);
    let r = garbler.run(a);
    assert!(matches!(r, Err(Error::Transport(_))), "{r:?}");
    // The evaluator's peer stays connected but silent: a timeout.
    let (a, b) = memory_pair(Duration::from_millis(300));
    let evaluator = Evaluator::new(&c, Options::new(Scheme::Ideal), &e_in).unwrap();
    let start = Instant::now();
    let r = evaluator.run(a);
    assert!(start.elapsed() < Duration::from_secs(3));
    assert!(r.unwrap_err().to_string().contains("transport"));
    drop(b);
}

#[test]
fn garbage_from_a_fake_peer_is_refused() {
    let c = library::load("aes128").unwrap();
    let (g_in, e_in) = inputs(&c, &"0".repeat(32), &"0".repeat(32));
    // A TCP peer that answers with an HTTP request.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let peer = thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut s, _) = listener.accept().unwrap();
        s.write_all(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n").unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    });
    let cfg = Config {
        io_timeout: Duration::from_secs(2),
        ..Config::default()
    };
    let ch = "tcp"
        .parse::<TransportSpec>()
        .unwrap()
        .connect(addr, &cfg)
        .unwrap();
    let evaluator = Evaluator::new(&c, Options::new(Scheme::Ideal), &e_in).unwrap();
    let err = evaluator.run(ch).unwrap_err();
    // "GET / HT" read as a frame length is far beyond the limit.
    assert!(err.to_string().contains("transport"), "{err}");
    peer.join().unwrap();

    // A well-framed header with the wrong magic, and wrong-sized messages after a good one.
    let (a, b) = memory_pair(TIMEOUT);
    let garbler = Garbler::new(&c, Options::new(Scheme::Ideal), &g_in).unwrap();
    let mut fake = Framed::new(b);
    fake.send_message(&[0x42; HEADER_LEN]).unwrap();
    fake.flush().unwrap();
    let r = garbler.run(a);
    assert!(
        matches!(
            r,
            Err(Error::Malformed {
                what: "the session header",
                ..
            })
        ),
        "{r:?}"
    );

    let (a, b) = memory_pair(TIMEOUT);
    let garbler = Garbler::new(&c, Options::new(Scheme::Ideal), &g_in).unwrap();
    let mut fake = Framed::new(b);
    let header = SessionHeader::new(Party::Evaluator, &c, Scheme::Ideal, OutputMode::Both);
    fake.send_message(&header.encode()).unwrap();
    fake.send_message(&[1, 2, 3]).unwrap();
    fake.flush().unwrap();
    let r = garbler.run(a);
    assert!(matches!(r, Err(Error::Malformed { .. })), "{r:?}");

    // An invalid point where the base-OT point belongs.
    let (a, b) = memory_pair(TIMEOUT);
    let garbler = Garbler::new(&c, Options::new(Scheme::Ideal), &g_in).unwrap();
    let mut fake = Framed::new(b);
    fake.send_message(&header.encode()).unwrap();
    fake.send_message(&[0xff; transputation_ot::MSG_A_LEN])
        .unwrap();
    fake.flush().unwrap();
    let r = garbler.run(a);
    assert!(matches!(r, Err(Error::Ot(_))), "{r:?}");
}

#[test]
fn bad_local_input_is_refused_before_any_connection() {
    let c = library::load("aes128").unwrap();
    assert!(matches!(
        Garbler::new(&c, Options::new(Scheme::Ideal), &[true; 3]),
        Err(Error::Input(_))
    ));
    assert!(matches!(
        Evaluator::new(&c, Options::new(Scheme::Ideal), &[]),
        Err(Error::Input(_))
    ));
}

/// A channel whose `close` waits until the test says the peer has gone.
struct ClosesAfterPeerLeft {
    inner: transputation_transport::MemoryChannel,
    peer_gone: std::sync::mpsc::Receiver<()>,
}

impl transputation_transport::Channel for ClosesAfterPeerLeft {
    fn send(&mut self, bytes: &[u8]) -> transputation_transport::Result<()> {
        self.inner.send(bytes)
    }
    fn recv(&mut self, buf: &mut [u8]) -> transputation_transport::Result<()> {
        self.inner.recv(buf)
    }
    fn flush(&mut self) -> transputation_transport::Result<()> {
        self.inner.flush()
    }
    fn close(&mut self) -> transputation_transport::Result<()> {
        self.peer_gone.recv().unwrap();
        self.inner.close()
    }
    fn stats(&self) -> transputation_transport::ByteCounts {
        self.inner.stats()
    }
}

/// The evaluator sends the last message and may be gone before the garbler closes (CI saw
/// this over `udt` with a protected session: the garbler's closing record found no peer).
/// The session is complete then; the garbler reports it, not a transport error.
#[test]
fn the_garbler_succeeds_when_the_evaluator_left_first() {
    use transputation_transport::secure::keys::Psk;
    use transputation_transport::{Credentials, SecureChannel};
    let c = library::load("aes128").unwrap();
    let (g_in, e_in) = inputs(&c, &"0".repeat(32), &"0".repeat(32));
    let (a, b) = memory_pair(TIMEOUT);
    let (gone, peer_gone) = std::sync::mpsc::channel();
    let garbler = Garbler::new(&c, Options::new(Scheme::Ideal), &g_in).unwrap();
    let evaluator = Evaluator::new(&c, Options::new(Scheme::Ideal), &e_in).unwrap();
    let (g, e) = thread::scope(|s| {
        let g = s.spawn(move || {
            let creds = Credentials::Psk(Psk::from_bytes([7; 32]));
            let ch = SecureChannel::server(
                ClosesAfterPeerLeft {
                    inner: a,
                    peer_gone,
                },
                &creds,
            )
            .unwrap();
            garbler.run(ch)
        });
        let creds = Credentials::Psk(Psk::from_bytes([7; 32]));
        let e = evaluator.run(SecureChannel::client(b, &creds).unwrap());
        gone.send(()).unwrap();
        (g.join().unwrap(), e)
    });
    let (g, e) = (g.unwrap(), e.unwrap());
    assert_eq!(g.output, e.output);
}

/// A channel that fails every receive once `budget` bytes were received, and then drops
/// its end: an evaluator that crashes part-way through the garbled tables.
struct DiesAfter {
    inner: Option<transputation_transport::MemoryChannel>,
    budget: usize,
}

impl transputation_transport::Channel for DiesAfter {
    fn send(&mut self, bytes: &[u8]) -> transputation_transport::Result<()> {
        match &mut self.inner {
            Some(c) => c.send(bytes),
            None => Err(transputation_transport::Error::Closed { during: "sending" }),
        }
    }
    fn recv(&mut self, buf: &mut [u8]) -> transputation_transport::Result<()> {
        match &mut self.inner {
            Some(c) if buf.len() <= self.budget => {
                self.budget -= buf.len();
                c.recv(buf)
            }
            _ => {
                self.inner = None;
                Err(transputation_transport::Error::Closed {
                    during: "receiving",
                })
            }
        }
    }
    fn flush(&mut self) -> transputation_transport::Result<()> {
        self.inner.as_mut().map_or(Ok(()), |c| c.flush())
    }
    fn close(&mut self) -> transputation_transport::Result<()> {
        self.inner.as_mut().map_or(Ok(()), |c| c.close())
    }
    fn stats(&self) -> transputation_transport::ByteCounts {
        self.inner.as_ref().map(|c| c.stats()).unwrap_or_default()
    }
}

/// The evaluator dies while the garbler is sending tables (after the OT, when a second
/// thread of the garbler sends what the first garbles): the garbler stops with a transport
/// error within the timeout, whichever thread meets the failure first, never a hang.
#[test]
fn an_evaluator_that_dies_during_the_tables_stops_the_garbler() {
    let c = library::load("synthetic:and=30000,xor=70000,inputs=2000,depth=30").unwrap();
    let g_in = vec![false; c.party_input_bits(Party::Garbler)];
    let e_in = vec![true; c.party_input_bits(Party::Evaluator)];
    // The OT and a few hundred KiB of tables get through; then the evaluator is gone.
    for budget in [200_000, 600_000] {
        let (a, b) = memory_pair(Duration::from_secs(2));
        let garbler = Garbler::new(&c, Options::new(Scheme::Ideal), &g_in).unwrap();
        let evaluator = Evaluator::new(&c, Options::new(Scheme::Ideal), &e_in).unwrap();
        let start = Instant::now();
        let (g, e) = thread::scope(|s| {
            let g = s.spawn(move || garbler.run(a));
            let e = evaluator.run(DiesAfter {
                inner: Some(b),
                budget,
            });
            (g.join().unwrap(), e)
        });
        assert!(e.is_err(), "budget {budget}");
        assert!(
            matches!(g, Err(Error::Transport(_))),
            "budget {budget}: {g:?}"
        );
        assert!(start.elapsed() < Duration::from_secs(10), "budget {budget}");
    }
}

/// The evaluator's input bits in two groups around the garbler's, with an OT chunk (8,192)
/// crossing from the first group to the second: every label must land on its own wire.
/// Output bit `i` is evaluator bit `i` XOR garbler bit `i mod 100`.
#[test]
fn evaluator_inputs_in_several_groups_get_their_own_labels() {
    use transputation_circuits::{BitOrder, InputGroup, OutputGroup};
    let group = |party, len| InputGroup {
        party,
        len,
        order: BitOrder::LsbFirst,
        name: String::new(),
    };
    let (e1, g, e2) = (5_000u32, 100u32, 9_000u32);
    let inputs = e1 + g + e2;
    let evaluator_wire = |i: u32| if i < e1 { i } else { i + g };
    let gates: Vec<Gate> = (0..e1 + e2)
        .map(|i| Gate::Xor {
            a: evaluator_wire(i),
            b: e1 + i % g,
            out: inputs + i,
        })
        .collect();
    let c = Circuit::new(
        u64::from(inputs + e1 + e2),
        vec![
            group(Party::Evaluator, e1),
            group(Party::Garbler, g),
            group(Party::Evaluator, e2),
        ],
        vec![OutputGroup {
            wires: (inputs..inputs + e1 + e2).collect(),
            order: BitOrder::LsbFirst,
            name: String::new(),
        }],
        gates,
    )
    .unwrap();
    let mut bits: Vec<bool> = (0..inputs).map(|i| (i * 7 + i / 3) % 5 < 2).collect();
    bits[0] = true;
    let want = c.eval_bits(&bits);
    let g_in: Vec<bool> = (e1..e1 + g).map(|w| bits[w as usize]).collect();
    let e_in: Vec<bool> = (0..e1 + e2)
        .map(|i| bits[evaluator_wire(i) as usize])
        .collect();
    for scheme in Scheme::ALL {
        let opts = Options::new(scheme);
        let (gr, er) = session(&c, opts.clone(), opts, &g_in, &e_in);
        let (gr, er) = (gr.unwrap(), er.unwrap());
        assert_eq!(er.output.as_deref(), Some(&want[..]), "{scheme}");
        assert_eq!(gr.output, er.output, "{scheme}");
    }
}

/// A channel whose close finds the peer's connection already gone, as a QUIC connection
/// does when the peer closed it right after it read the last message: the close flushes
/// what is pending, then fails.
struct GoneAtClose(transputation_transport::MemoryChannel);

impl transputation_transport::Channel for GoneAtClose {
    fn send(&mut self, bytes: &[u8]) -> transputation_transport::Result<()> {
        self.0.send(bytes)
    }
    fn recv(&mut self, buf: &mut [u8]) -> transputation_transport::Result<()> {
        self.0.recv(buf)
    }
    fn flush(&mut self) -> transputation_transport::Result<()> {
        self.0.flush()
    }
    fn close(&mut self) -> transputation_transport::Result<()> {
        self.0.flush()?;
        Err(transputation_transport::Error::Closed { during: "flushing" })
    }
    fn stats(&self) -> transputation_transport::ByteCounts {
        self.0.stats()
    }
}

/// Found regenerating the paper's Table 4 over `quic`: a garbler that has the output closes
/// the connection, and the evaluator's own close then fails. The session's last message
/// went out in full, so that is not a failure, for a session of one computation and for
/// the end of an open session alike.
#[test]
fn an_evaluator_whose_close_finds_the_garbler_gone_still_succeeds() {
    let c = library::load("millionaires").unwrap();
    let (g_in, e_in) = inputs(&c, "00000005", "00000003");
    for open in [false, true] {
        let (a, b) = memory_pair(TIMEOUT);
        let garbler = Garbler::new(&c, Options::new(Scheme::Ideal), &g_in).unwrap();
        let evaluator = Evaluator::new(&c, Options::new(Scheme::Ideal), &e_in).unwrap();
        let (g, e) = thread::scope(|s| {
            let g = s.spawn(move || garbler.run_session(a, |_| Ok::<_, Error>(())));
            let e = if open {
                evaluator.open(GoneAtClose(b)).and_then(|(mut session, _)| {
                    let second = session.compute(&e_in)?;
                    session.close()?;
                    Ok(second)
                })
            } else {
                evaluator.run(GoneAtClose(b))
            };
            (g.join().unwrap(), e)
        });
        let e = e.unwrap_or_else(|err| panic!("open {open}: {err}"));
        assert_eq!(g.unwrap(), if open { 2 } else { 1 });
        assert_eq!(decode_outputs(&c, e.output.as_ref().unwrap()), "1");
    }
}

/// A party without input bits, under every scheme and output mode, protected (the
/// evaluator's first messages as early data) and not: the reference SHA-256 circuit's
/// inputs all the garbler's, then all the evaluator's. Both parties agree on the output,
/// and it is the circuit's own on those inputs.
#[test]
fn a_party_without_input_bits_under_every_scheme_output_mode_and_protection() {
    use transputation_transport::secure::keys::Psk;
    use transputation_transport::{Credentials, SecureChannel};
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/circuits/bristol/sha-256.txt"
    );
    for owner in [Party::Garbler, Party::Evaluator] {
        let c = library::load_with_parties(path, Some(&[owner])).unwrap();
        let bits: Vec<bool> = (0..c.n_inputs()).map(|i| i % 3 == 0).collect();
        let want = c.eval_bits(&bits);
        let (g_in, e_in) = match owner {
            Party::Garbler => (bits.clone(), Vec::new()),
            Party::Evaluator => (Vec::new(), bits.clone()),
        };
        for scheme in Scheme::ALL {
            for output in [OutputMode::Both, OutputMode::Evaluator] {
                for protected in [false, true] {
                    let case =
                        format!("inputs {owner}'s, {scheme}, {output}, protected {protected}");
                    let options = Options {
                        output,
                        ..Options::new(scheme)
                    };
                    let garbler = Garbler::new(&c, options.clone(), &g_in).unwrap();
                    let evaluator = Evaluator::new(&c, options, &e_in).unwrap();
                    let (a, b) = memory_pair(TIMEOUT);
                    let creds = Credentials::Psk(Psk::from_bytes([9; 32]));
                    let (g, e) = thread::scope(|s| {
                        let g = s.spawn(|| {
                            if protected {
                                garbler.run(SecureChannel::server(a, &creds).unwrap())
                            } else {
                                garbler.run(a)
                            }
                        });
                        let e = if protected {
                            evaluator.run(SecureChannel::client_early(b, &creds).unwrap())
                        } else {
                            evaluator.run(b)
                        };
                        (g.join().unwrap(), e)
                    });
                    let (g, e) = (g.expect(&case), e.expect(&case));
                    assert_eq!(e.output.as_deref(), Some(&want[..]), "{case}");
                    let garbler_learns = output == OutputMode::Both;
                    assert_eq!(g.output.is_some(), garbler_learns, "{case}");
                    if garbler_learns {
                        assert_eq!(g.output, e.output, "{case}");
                    }
                }
            }
        }
    }
}
