//! Sessions under coarse-grained parallelism: the tables as frames of pieces garbled and
//! evaluated on threads of their own compute what the circuit computes, under every
//! scheme, in one computation and in an open session's further ones; a party with and one
//! without it, or with other regions, stop at the header.

use std::sync::Arc;
use std::thread;
use std::time::Duration;

use transputation_2pc::{Coarse, Error, Evaluator, Garbler, Options, Report};
use transputation_circuits::{library, Circuit, Party, Sections, Stats};
use transputation_garble::coarse::Layout;
use transputation_garble::Scheme;
use transputation_transport::memory_pair;

const TIMEOUT: Duration = Duration::from_secs(20);
const SCHEMES: [Scheme; 3] = [Scheme::Prf, Scheme::Circular, Scheme::Ideal];

/// A matrix-vector product of 3 rows (a region each), 8-bit entries.
fn circuit() -> Circuit {
    library::load("mvmul:m=3,k=3,bits=8").unwrap()
}

/// Options for `scheme` with a piece per region of `c`, on `threads` threads.
fn coarse(c: &Circuit, scheme: Scheme, threads: usize) -> Options {
    Options {
        coarse: Some(Coarse {
            layout: Arc::new(Layout::cut(c, scheme, 1).unwrap()),
            threads,
            if_peer_willing: false,
        }),
        ..Options::new(scheme)
    }
}

/// [`coarse`], but frames only if the peer takes them (`--parallel auto`).
fn willing(c: &Circuit, scheme: Scheme, threads: usize) -> Options {
    let mut o = coarse(c, scheme, threads);
    if let Some(cg) = &mut o.coarse {
        cg.if_peer_willing = true;
    }
    o
}

/// The garbler's input bit `i` is `(i + seed) % 3 == 0`, the evaluator's `(i + seed) % 5
/// == 0`.
fn inputs(c: &Circuit, seed: usize) -> (Vec<bool>, Vec<bool>) {
    let bits = |p, m: usize| {
        (0..c.party_input_bits(p))
            .map(|i| (i + seed).is_multiple_of(m))
            .collect::<Vec<_>>()
    };
    (bits(Party::Garbler, 3), bits(Party::Evaluator, 5))
}

/// The circuit's output on the two parties' inputs, in the clear.
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

fn session(
    c: &Circuit,
    (g_opts, e_opts): (Options, Options),
    (g_in, e_in): (&[bool], &[bool]),
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

#[test]
fn a_coarse_session_computes_the_circuit_under_every_scheme() {
    let c = circuit();
    let (g_in, e_in) = inputs(&c, 0);
    let want = plain(&c, &g_in, &e_in);
    for scheme in SCHEMES {
        // The parties' threads need not agree: only the stream's order depends on them.
        let opts = (coarse(&c, scheme, 2), coarse(&c, scheme, 3));
        let (g, e) = session(&c, opts, (&g_in, &e_in));
        let (g, e) = (g.unwrap(), e.unwrap());
        assert_eq!(e.output.as_deref(), Some(&want[..]), "{scheme}");
        assert_eq!(g.output.as_deref(), Some(&want[..]), "{scheme}");
        // Every frame a message of its own: the pieces' tables and a header per frame.
        let layout = Layout::cut(&c, scheme, 1).unwrap();
        assert!(g.sent.tables > layout.table_bytes(), "{scheme}");
        assert_eq!(e.received, g.sent, "{scheme}");
    }
}

#[test]
fn an_open_coarse_session_computes_each_computation() {
    let c = circuit();
    for scheme in SCHEMES {
        let (g_in, e_first) = inputs(&c, 0);
        let (a, b) = memory_pair(TIMEOUT);
        let garbler = Garbler::new(&c, coarse(&c, scheme, 2), &g_in).unwrap();
        let evaluator = Evaluator::new(&c, coarse(&c, scheme, 2), &e_first).unwrap();
        thread::scope(|s| {
            let g = s.spawn(move || garbler.run_session(a, |_| Ok::<(), Error>(())));
            let (mut session, first) = evaluator.open(b).unwrap();
            assert_eq!(first.output, Some(plain(&c, &g_in, &e_first)), "{scheme}");
            for seed in 1..3 {
                let e_in = inputs(&c, seed).1;
                let r = session.compute(&e_in).unwrap();
                assert_eq!(r.output, Some(plain(&c, &g_in, &e_in)), "{scheme} #{seed}");
            }
            session.close().unwrap();
            assert_eq!(g.join().unwrap().unwrap(), 3, "{scheme}");
        });
    }
}

#[test]
fn a_willing_party_takes_frames_if_the_peer_does_and_the_order_otherwise() {
    let c = circuit();
    let (g_in, e_in) = inputs(&c, 0);
    let want = plain(&c, &g_in, &e_in);
    for scheme in SCHEMES {
        let none = || Options::new(scheme);
        let cases = [
            (
                "auto, auto",
                willing(&c, scheme, 2),
                willing(&c, scheme, 3),
                true,
            ),
            ("auto, none", willing(&c, scheme, 2), none(), false),
            ("none, auto", none(), willing(&c, scheme, 2), false),
            (
                "cgp, auto",
                coarse(&c, scheme, 2),
                willing(&c, scheme, 1),
                true,
            ),
            (
                "auto, cgp",
                willing(&c, scheme, 1),
                coarse(&c, scheme, 2),
                true,
            ),
        ];
        for (what, g_opts, e_opts, frames) in cases {
            let (g, e) = session(&c, (g_opts, e_opts), (&g_in, &e_in));
            let (g, e) = (g.unwrap(), e.unwrap());
            assert_eq!(e.output.as_deref(), Some(&want[..]), "{scheme} {what}");
            assert_eq!(g.output.as_deref(), Some(&want[..]), "{scheme} {what}");
            assert_eq!((g.frames, e.frames), (frames, frames), "{scheme} {what}");
            // Frames cost a header each; the tables in order are the circuit's bytes.
            let stats = Stats::counts(&c);
            let in_order = scheme.table_bytes(&stats) + scheme.mask_bytes(&stats);
            assert_eq!(g.sent.tables > in_order, frames, "{scheme} {what}");
            assert_eq!(e.received, g.sent, "{scheme} {what}");
        }
    }
}

#[test]
fn an_open_session_of_willing_parties_keeps_the_frames_they_agreed_on() {
    let c = circuit();
    let scheme = Scheme::Ideal;
    let (g_in, e_first) = inputs(&c, 0);
    for (e_opts, frames) in [
        (willing(&c, scheme, 2), true),
        (Options::new(scheme), false),
    ] {
        let (a, b) = memory_pair(TIMEOUT);
        let garbler = Garbler::new(&c, willing(&c, scheme, 2), &g_in).unwrap();
        let evaluator = Evaluator::new(&c, e_opts, &e_first).unwrap();
        thread::scope(|s| {
            let g = s.spawn(move || {
                let mut seen = Vec::new();
                garbler
                    .run_session(a, |r| {
                        seen.push(r.frames);
                        Ok::<(), Error>(())
                    })
                    .map(|_| seen)
            });
            let (mut session, first) = evaluator.open(b).unwrap();
            assert_eq!(first.output, Some(plain(&c, &g_in, &e_first)));
            assert_eq!(first.frames, frames);
            let e_in = inputs(&c, 1).1;
            let r = session.compute(&e_in).unwrap();
            assert_eq!(r.output, Some(plain(&c, &g_in, &e_in)));
            assert_eq!(r.frames, frames);
            session.close().unwrap();
            assert_eq!(g.join().unwrap().unwrap(), vec![frames, frames]);
        });
    }
}

#[test]
fn a_party_without_cgp_or_with_other_regions_is_stopped_at_the_header() {
    let c = circuit();
    let (g_in, e_in) = inputs(&c, 0);
    let scheme = Scheme::Ideal;
    let (g, e) = session(
        &c,
        (coarse(&c, scheme, 2), Options::new(scheme)),
        (&g_in, &e_in),
    );
    for r in [g, e] {
        match r {
            Err(Error::Mismatch { field, .. }) => {
                assert!(field.contains("--parallel cgp"), "{field}")
            }
            other => panic!("{other:?}"),
        }
    }
    // The same circuit with its three rows as one region: other pieces, refused.
    let sections = c.sections().unwrap();
    let first = &sections.sections()[0];
    let bounds = first.bounds();
    let merged = Sections::new(vec![vec![bounds[0], bounds[2], *bounds.last().unwrap()]]).unwrap();
    let other = c.clone().with_sections(merged).unwrap();
    let (g, e) = session(
        &c,
        (coarse(&c, scheme, 2), coarse(&other, scheme, 2)),
        (&g_in, &e_in),
    );
    for r in [g, e] {
        match r {
            Err(Error::Mismatch { field, .. }) => {
                assert!(field.contains("parallel regions"), "{field}")
            }
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_layout_of_another_circuit_or_scheme_is_refused_before_the_session() {
    let c = circuit();
    let other = library::load("mvmul:m=2,k=3,bits=8").unwrap();
    let input = vec![false; c.party_input_bits(Party::Garbler)];
    for (opts, says) in [
        (coarse(&other, Scheme::Ideal, 2), "another circuit"),
        (
            Options {
                scheme: Scheme::Prf,
                ..coarse(&c, Scheme::Ideal, 2)
            },
            "cut for ideal",
        ),
    ] {
        match Garbler::new(&c, opts, &input) {
            Err(Error::Input(e)) => assert!(e.contains(says), "{e}"),
            Err(e) => panic!("{e}"),
            Ok(_) => panic!("accepted"),
        }
    }
}
