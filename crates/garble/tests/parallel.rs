//! The garbling does not depend on how it is laid out ([`Parallel`]): every window size
//! gives the bytes of the default one, for every scheme and AES backend, and the evaluator
//! gets the same labels whatever its own window and the garbler's.

mod common;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_circuits::{library, Circuit};
use transputation_core::aes::Backend;
use transputation_core::{prg::Prg, Block};
use transputation_garble::{GarbleStart, Parallel, Scheme};

/// What one garbling and evaluation gave.
#[derive(Debug, PartialEq)]
struct Run {
    inputs: Vec<[Block; 2]>,
    stream: Vec<u8>,
    decoding: Vec<bool>,
    outputs: Vec<Block>,
}

/// Garbles `c` as `g` says and evaluates it as `e` says, on random input bits, the tables
/// produced with the batch target `target` and fed in pieces of `piece` bytes.
fn run(
    scheme: Scheme,
    backend: Backend,
    c: &Circuit,
    (g, e): (&Parallel, &Parallel),
    (target, piece): (usize, usize),
) -> Run {
    let mut prg = Prg::new(Block(0x5eed));
    let mut garbler = scheme.garbler_par(c, &mut prg, backend, GarbleStart::default(), g);
    let inputs: Vec<[Block; 2]> = (0..c.n_inputs() as u32)
        .map(|w| garbler.input_labels(w))
        .collect();
    let mut rng = ChaCha12Rng::seed_from_u64(21);
    let labels: Vec<Block> = inputs
        .iter()
        .map(|l| l[usize::from(rng.gen::<bool>())])
        .collect();
    let mut stream = Vec::new();
    while garbler.garble(&mut stream, target) {}
    let mut evaluator = scheme.evaluator_par(c, &labels, backend, 0, e);
    let mut used = 0;
    for end in (0..stream.len())
        .step_by(piece)
        .skip(1)
        .chain([stream.len()])
    {
        used += evaluator.feed(&stream[used..end]).unwrap();
    }
    assert_eq!(used, stream.len());
    Run {
        inputs,
        stream,
        decoding: garbler.decoding(),
        outputs: evaluator.output_labels().unwrap(),
    }
}

fn window(w: usize) -> Parallel {
    Parallel::none().with_window(w).unwrap()
}

/// Small circuits whose waves and windows leave every remainder: lanes of independent AND
/// gates, `prf`'s degenerate gates, a synthetic circuit of many levels.
fn small_circuits() -> Vec<(String, Circuit)> {
    let mut cs: Vec<(String, Circuit)> = [1, 7, 33, 130]
        .into_iter()
        .map(|n| (format!("lanes({n})"), common::lanes(n)))
        .collect();
    for spec in [
        "synthetic:and=3001,xor=7003,inputs=301,depth=13",
        "synthetic:and=2049,xor=0,inputs=64,depth=3",
        "millionaires:bits=8",
    ] {
        cs.push((spec.to_string(), library::load(spec).unwrap()));
    }
    cs
}

#[test]
fn window_sizes_must_be_multiples_of_128() {
    for w in [0, 64, 129, 8191, (1 << 24) + 128] {
        assert!(Parallel::none().with_window(w).is_err(), "{w}");
    }
    for w in [128, 256, 8192, 65536, 1 << 24] {
        assert_eq!(window(w).window(), w);
    }
    assert_eq!(Parallel::none().window(), 8192);
}

/// Every window size gives the default window's bytes, for every scheme and backend, with
/// the evaluator at another window size than the garbler.
#[test]
fn every_window_size_gives_the_same_bytes() {
    let mut cs = small_circuits();
    cs.push(("aes128".into(), library::load("aes128").unwrap()));
    let default = Parallel::none();
    for scheme in Scheme::ALL {
        for backend in Backend::available() {
            for (name, c) in &cs {
                let base = run(scheme, backend, c, (&default, &default), (1 << 16, 4099));
                for (g, e) in [(128, 8192), (256, 128), (8192, 65536), (65536, 384)] {
                    let got = run(scheme, backend, c, (&window(g), &window(e)), (1 << 12, 999));
                    let what = format!("{scheme} {backend:?} {name}, windows {g}/{e}");
                    assert_eq!(got.inputs, base.inputs, "{what}: input labels");
                    assert!(got.stream == base.stream, "{what}: tables");
                    assert_eq!(got.decoding, base.decoding, "{what}: decoding");
                    assert_eq!(got.outputs, base.outputs, "{what}: output labels");
                }
            }
        }
    }
}

/// The same on SHA-256 (the large reference circuit), for the default backend.
#[test]
fn sha256_is_the_same_at_every_window_size() {
    let c = library::load("sha256").unwrap();
    let backend = Backend::detect();
    let default = Parallel::none();
    for scheme in Scheme::ALL {
        let base = run(
            scheme,
            backend,
            &c,
            (&default, &default),
            (1 << 16, 1 << 15),
        );
        for w in [128, 65536] {
            let got = run(
                scheme,
                backend,
                &c,
                (&window(w), &window(w)),
                (1 << 16, 1 << 15),
            );
            assert!(got == base, "{scheme} window {w}");
        }
    }
}
