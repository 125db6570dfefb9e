//! Table streams that do not fit the circuit, for every scheme: truncated streams give
//! `EvalError::Truncated` (and can be resumed), extra bytes give `EvalError::TrailingBytes`,
//! and garbage of any length never panics. (Single bit flips, with an exact prediction of
//! which flips must change the output labels, are unit tests in `src/schemes/`, which can
//! read the evaluator's signal bits.)

mod common;

use common::{evaluate, garble, lanes};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_circuits::{library, Circuit, Gate};
use transputation_core::aes::Backend;
use transputation_garble::{EvalError, Scheme};

/// Circuits with different stream layouts: AES-128; AND/XOR/NOT lanes; an odd number of
/// AND gates (`prf`'s last mask byte is half used); no AND gate at all (an empty stream for
/// the half-gates schemes).
fn circuits() -> Vec<(&'static str, Circuit)> {
    let odd = common::circuit(
        4,
        vec![
            Gate::And { a: 0, b: 2, out: 4 },
            Gate::Xor { a: 4, b: 1, out: 5 },
            Gate::And { a: 5, b: 3, out: 6 },
            Gate::Inv { a: 6, out: 7 },
            Gate::And { a: 7, b: 0, out: 8 },
            Gate::Xor { a: 8, b: 2, out: 9 },
        ],
        vec![9, 4],
    );
    let no_and = common::circuit(
        4,
        vec![
            Gate::Xor { a: 0, b: 2, out: 4 },
            Gate::Inv { a: 4, out: 5 },
            Gate::Xor { a: 5, b: 3, out: 6 },
        ],
        vec![6, 5],
    );
    vec![
        ("aes128", library::load("aes128").unwrap()),
        ("lanes", lanes(5)),
        ("odd", odd),
        ("no-and", no_and),
    ]
}

fn bits(c: &Circuit, rng: &mut ChaCha12Rng) -> Vec<bool> {
    (0..c.n_inputs()).map(|_| rng.gen()).collect()
}

#[test]
fn truncated_streams_are_reported_and_resumable() {
    let mut rng = ChaCha12Rng::seed_from_u64(1);
    for scheme in Scheme::ALL {
        for (name, c) in circuits() {
            let gc = garble(scheme, &c, 11, 1 << 20);
            let x = bits(&c, &mut rng);
            let labels = gc.encode(&x);
            let honest = evaluate(scheme, &c, &labels, &gc.stream, 1 << 20).unwrap();
            let len = gc.stream.len();
            let mut cuts = vec![0, 1, 15, 16, 17, 31, 32, 33, 34, 48, 49];
            cuts.extend([
                len.saturating_sub(17),
                len.saturating_sub(16),
                len.saturating_sub(1),
            ]);
            cuts.extend((0..20).map(|_| rng.gen_range(0..len.max(1))));
            for cut in cuts.into_iter().filter(|&cut| cut < len) {
                let what = format!("{scheme} {name}: {cut} of {len} bytes");
                let mut e = scheme.evaluator(&c, &labels, Backend::detect());
                let used = e.feed(&gc.stream[..cut]).expect(&what);
                assert!(used <= cut, "{what}: used {used}");
                match e.output_labels() {
                    Err(EvalError::Truncated { done, total }) => {
                        assert_eq!(total, c.gates().len(), "{what}");
                        assert!(done < total, "{what}");
                        assert_eq!(done, e.gates_done(), "{what}");
                    }
                    other => panic!("{what}: {other:?}"),
                }
                // The rest completes the evaluation, to the honest labels.
                assert_eq!(e.feed(&gc.stream[used..]), Ok(len - used), "{what}");
                assert_eq!(e.output_labels().as_ref(), Ok(&honest), "{what}");
            }
        }
    }
}

#[test]
fn trailing_bytes_are_reported() {
    let mut rng = ChaCha12Rng::seed_from_u64(2);
    for scheme in Scheme::ALL {
        for (name, c) in circuits() {
            let gc = garble(scheme, &c, 12, 1 << 20);
            let labels = gc.encode(&bits(&c, &mut rng));
            let len = gc.stream.len();
            for extra in [1, 15, 16, 17, 32, 33, 100] {
                let what = format!("{scheme} {name}: {extra} extra bytes");
                let mut long = gc.stream.clone();
                long.extend((0..extra).map(|_| rng.gen::<u8>()));
                // In one call.
                let mut e = scheme.evaluator(&c, &labels, Backend::detect());
                assert_eq!(
                    e.feed(&long),
                    Err(EvalError::TrailingBytes { extra }),
                    "{what}"
                );
                // After a complete stream, in a later call.
                let mut e = scheme.evaluator(&c, &labels, Backend::detect());
                assert_eq!(e.feed(&gc.stream), Ok(len), "{what}");
                assert_eq!(e.feed(&[]), Ok(0), "{what}");
                assert_eq!(
                    e.feed(&long[len..]),
                    Err(EvalError::TrailingBytes { extra }),
                    "{what}"
                );
                // In pieces: some feed reports it.
                assert!(
                    matches!(
                        evaluate(scheme, &c, &labels, &long, 7),
                        Err(EvalError::TrailingBytes { .. })
                    ),
                    "{what}"
                );
            }
        }
    }
}

#[test]
fn garbage_streams_never_panic() {
    let mut rng = ChaCha12Rng::seed_from_u64(3);
    for scheme in Scheme::ALL {
        for (name, c) in circuits() {
            let gc = garble(scheme, &c, 13, 1 << 20);
            let labels = gc.encode(&bits(&c, &mut rng));
            let len = gc.stream.len();
            let mut streams = vec![vec![0u8; len], vec![0xff; len]];
            streams.push((0..len).map(|_| rng.gen()).collect());
            for _ in 0..3 {
                let n = rng.gen_range(0..len + 40);
                streams.push((0..n).map(|_| rng.gen()).collect());
            }
            for s in streams {
                let what = format!("{scheme} {name}: {} garbage bytes of {len}", s.len());
                let r = evaluate(scheme, &c, &labels, &s, 29);
                match s.len().cmp(&len) {
                    std::cmp::Ordering::Equal => assert!(r.is_ok(), "{what}: {r:?}"),
                    std::cmp::Ordering::Less => {
                        assert!(matches!(r, Err(EvalError::Truncated { .. })), "{what}")
                    }
                    std::cmp::Ordering::Greater => {
                        assert!(matches!(r, Err(EvalError::TrailingBytes { .. })), "{what}")
                    }
                }
            }
        }
    }
}

#[test]
fn circuits_without_tables_complete_on_an_empty_feed() {
    // A circuit whose stream is empty (no AND gate in the half-gates schemes, only NOT
    // gates in any) is evaluated by one `feed(&[])`; before it, the evaluator reports the
    // gates as not done. A driver that calls `feed` only when bytes arrive never finishes
    // such a circuit (tests/end_to_end.rs's `run` has this problem).
    let mut rng = ChaCha12Rng::seed_from_u64(4);
    let inv = common::circuit(2, vec![Gate::Inv { a: 0, out: 2 }], vec![2]);
    for scheme in Scheme::ALL {
        for (name, c) in circuits().into_iter().chain([("inv", inv.clone())]) {
            let gc = garble(scheme, &c, 14, 1 << 20);
            if !gc.stream.is_empty() {
                continue;
            }
            let x = bits(&c, &mut rng);
            let mut e = scheme.evaluator(&c, &gc.encode(&x), Backend::detect());
            assert!(
                matches!(e.output_labels(), Err(EvalError::Truncated { done: 0, .. })),
                "{scheme} {name}"
            );
            assert_eq!(e.feed(&[]), Ok(0), "{scheme} {name}");
            let out = transputation_garble::decode(&e.output_labels().unwrap(), &gc.decoding);
            assert_eq!(out, c.eval_bits(&x), "{scheme} {name}");
        }
    }
}
