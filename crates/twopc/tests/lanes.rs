//! Sessions whose coarse-grained frames travel on lanes (`quic` streams): the output of the
//! circuit under every scheme, whichever party accepts the connection, protected or not, in
//! an open session's further computations too, with flow-control windows (16 KiB) smaller
//! than message 7 and the tables, so that a message left behind a lane's traffic would
//! stall the session until its timeout.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use transputation_2pc::{Coarse, Error, Evaluator, Garbler, Options};
use transputation_circuits::{library, Circuit, Party};
use transputation_garble::coarse::Layout;
use transputation_garble::Scheme;
use transputation_transport::secure::keys::Psk;
use transputation_transport::{Channel, Config, Credentials, SecureChannel, TransportSpec};

/// A matrix-vector product of 4 rows (a region each) with 1,024 evaluator input bits: under
/// `prf` message 7 carries 32 KiB.
fn circuit() -> Circuit {
    library::load("mvmul:m=4,k=32,bits=32").unwrap()
}

fn coarse(c: &Circuit, scheme: Scheme) -> Options {
    Options {
        coarse: Some(Coarse {
            layout: Arc::new(Layout::of(c, scheme).unwrap()),
            threads: 2,
            if_peer_willing: false,
        }),
        ..Options::new(scheme)
    }
}

fn inputs(c: &Circuit, seed: usize) -> (Vec<bool>, Vec<bool>) {
    let bits = |p, m: usize| {
        (0..c.party_input_bits(p))
            .map(|i| (i * 7 + seed).is_multiple_of(m))
            .collect::<Vec<_>>()
    };
    (bits(Party::Garbler, 3), bits(Party::Evaluator, 5))
}

fn plain(c: &Circuit, g: &[bool], e: &[bool]) -> Vec<bool> {
    let (mut gi, mut ei) = (g.iter(), e.iter());
    let mut input = Vec::with_capacity(c.n_inputs());
    for group in c.inputs() {
        let bits = match group.party {
            Party::Garbler => &mut gi,
            Party::Evaluator => &mut ei,
        };
        input.extend(bits.take(group.len as usize));
    }
    c.eval_bits(&input)
}

/// The two ends of a `quic:window=16384` connection over loopback: (accepted, connected).
fn quic_pair() -> Option<(Box<dyn Channel>, Box<dyn Channel>)> {
    // A build without the `quic` feature has no transport that opens lanes.
    let spec: TransportSpec = "quic:window=16384".parse().ok()?;
    let cfg = Config {
        io_timeout: Duration::from_secs(20),
        ..Config::default()
    };
    let listener = spec.listen("127.0.0.1:0".parse().unwrap(), &cfg).unwrap();
    let addr = listener.local_addr();
    let connected = thread::spawn(move || spec.connect(addr, &cfg).unwrap());
    let accepted = listener.accept().unwrap();
    Some((accepted, connected.join().unwrap()))
}

/// `ch` protected as the accepting (`server`) or connecting end, if `protect`.
fn protected(ch: Box<dyn Channel>, server: bool, protect: bool) -> Box<dyn Channel> {
    if !protect {
        return ch;
    }
    let creds = Credentials::Psk(Psk::from_bytes([5; 32]));
    if server {
        Box::new(SecureChannel::server(ch, &creds).unwrap())
    } else {
        Box::new(SecureChannel::client_early(ch, &creds).unwrap())
    }
}

#[test]
fn frames_on_lanes_compute_the_circuit_whoever_accepts() {
    let c = circuit();
    for scheme in [Scheme::Prf, Scheme::Circular, Scheme::Ideal] {
        for (garbler_accepts, protect) in [(true, false), (false, false), (false, true)] {
            let Some((accepted, connected)) = quic_pair() else {
                // `cargo test -p transputation-2pc` alone builds the transports without
                // `quic`; the workspace's tests have it.
                eprintln!("skipped: this build has no quic");
                return;
            };
            let (g_ch, e_ch) = if garbler_accepts {
                (accepted, connected)
            } else {
                (connected, accepted)
            };
            let what = format!("{scheme}, garbler accepts: {garbler_accepts}, {protect}");
            let (g_in, e_first) = inputs(&c, 0);
            let garbler = Garbler::new(&c, coarse(&c, scheme), &g_in).unwrap();
            let evaluator = Evaluator::new(&c, coarse(&c, scheme), &e_first).unwrap();
            thread::scope(|s| {
                let g = s.spawn(move || {
                    let ch = protected(g_ch, garbler_accepts, protect);
                    garbler.run_session(ch, |r| {
                        assert_eq!(r.lanes, 2);
                        Ok::<(), Error>(())
                    })
                });
                let ch = protected(e_ch, !garbler_accepts, protect);
                let (mut session, first) = evaluator.open(ch).unwrap();
                assert_eq!(first.lanes, 2, "{what}");
                assert_eq!(first.output, Some(plain(&c, &g_in, &e_first)), "{what}");
                let e_in = inputs(&c, 1).1;
                let r = session.compute(&e_in).unwrap();
                assert_eq!(r.output, Some(plain(&c, &g_in, &e_in)), "{what}: 2");
                session.close().unwrap();
                assert_eq!(g.join().unwrap().unwrap(), 2, "{what}");
            });
        }
    }
}

/// The garbler's end of a connection whose lanes misbehave: lane 0 sends every byte
/// inverted (its first frame's length reads as far too long), lane 1 sends nothing.
struct BadLanes(Box<dyn Channel>);

/// A lane as [`BadLanes`] makes it: `invert` its bytes, else swallow them.
struct BadLane {
    inner: Box<dyn Channel>,
    invert: bool,
}

impl Channel for BadLanes {
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
        self.0.close()
    }
    fn stats(&self) -> transputation_transport::ByteCounts {
        self.0.stats()
    }
    fn max_lanes(&self) -> usize {
        self.0.max_lanes()
    }
    fn open_lanes(&mut self, n: usize) -> transputation_transport::Result<Vec<Box<dyn Channel>>> {
        Ok(self
            .0
            .open_lanes(n)?
            .into_iter()
            .enumerate()
            .map(|(i, inner)| {
                Box::new(BadLane {
                    inner,
                    invert: i == 0,
                }) as Box<dyn Channel>
            })
            .collect())
    }
}

impl Channel for BadLane {
    fn send(&mut self, bytes: &[u8]) -> transputation_transport::Result<()> {
        if !self.invert {
            return Ok(());
        }
        let inverted: Vec<u8> = bytes.iter().map(|b| !b).collect();
        self.inner.send(&inverted)
    }
    fn recv(&mut self, buf: &mut [u8]) -> transputation_transport::Result<()> {
        self.inner.recv(buf)
    }
    fn flush(&mut self) -> transputation_transport::Result<()> {
        self.inner.flush()
    }
    fn close(&mut self) -> transputation_transport::Result<()> {
        self.inner.close()
    }
    fn stats(&self) -> transputation_transport::ByteCounts {
        self.inner.stats()
    }
}

#[test]
fn a_bad_frame_on_one_lane_is_told_before_a_silent_lane_times_out() {
    // The evaluator's reader of lane 1 waits in `recv` for frames that never come; the
    // bad frame on lane 0 must end the session at once, not after that reader's I/O
    // timeout (20 s here).
    let c = circuit();
    let Some((accepted, connected)) = quic_pair() else {
        eprintln!("skipped: this build has no quic");
        return;
    };
    let (g_in, e_in) = inputs(&c, 0);
    let garbler = Garbler::new(&c, coarse(&c, Scheme::Ideal), &g_in).unwrap();
    let evaluator = Evaluator::new(&c, coarse(&c, Scheme::Ideal), &e_in).unwrap();
    thread::scope(|s| {
        let g = s.spawn(move || garbler.run(BadLanes(connected)));
        let start = std::time::Instant::now();
        let err = evaluator.run(accepted).map(|r| r.output).unwrap_err();
        let took = start.elapsed();
        assert!(
            matches!(err, Error::Malformed { .. } | Error::Transport(_)),
            "{err}"
        );
        assert!(
            took < Duration::from_secs(10),
            "the error came after {took:?}: {err}"
        );
        // The garbler hears of it as the connection closes.
        assert!(g.join().unwrap().is_err());
    });
}
