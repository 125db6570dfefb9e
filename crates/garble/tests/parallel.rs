//! The garbling does not depend on how it is laid out ([`Parallel`]): every window size
//! and every number of threads (fine-grained parallelism) gives the bytes of the sequential
//! garbler, for every scheme and AES backend (input labels, tables, decoding bits), and the
//! evaluator gets the same labels whatever its own layout and the garbler's. `min_wave` 1
//! splits every wave of two crypto gates or more, so every cut a wave can have is taken.

mod common;

use common::run;

use proptest::prelude::*;
use transputation_circuits::{library, Circuit, Gate};
use transputation_core::aes::Backend;
use transputation_core::{prg::Prg, Block};
use transputation_garble::schemes::parallel::MIN_WAVE_PRF;
use transputation_garble::{GarbleStart, Parallel, Scheme};

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

/// `prf`'s degenerate AND gates (`AND(x, x)`, `AND(x, NOT x)`) among ordinary ones, in
/// lanes wide enough to be split, with an odd number of AND gates in all.
fn degenerate(lanes: u32) -> Circuit {
    let (mut gates, mut outs, next) = common::degenerate_lanes(lanes);
    gates.push(Gate::And {
        a: 0,
        b: next - 1,
        out: next,
    });
    outs.push(next);
    common::circuit(2 * lanes, gates, outs)
}

/// The thread counts of the tests, each with its own pool (shared by its variants).
fn pools() -> Vec<Parallel> {
    (1..=4).map(|t| Parallel::fgp(t).unwrap()).collect()
}

/// Compares every threaded layout of `c` (`threads` 1–4, `min_wave` 1 and the default,
/// the given windows) with the sequential garbler, garbler and evaluator both threaded.
fn check_threads(scheme: Scheme, backend: Backend, name: &str, c: &Circuit, windows: &[usize]) {
    let seq = Parallel::none();
    let base = run(scheme, backend, c, (&seq, &seq), (1 << 16, 4099));
    for pool in pools() {
        for &w in windows {
            let plain = pool.clone().with_window(w).unwrap();
            for par in [plain.clone().with_min_wave(1), plain] {
                let got = run(scheme, backend, c, (&par, &par), (1 << 14, 1021));
                let what = format!("{scheme} {backend:?} {name}, {par:?}");
                assert_eq!(got.inputs, base.inputs, "{what}: input labels");
                assert!(got.stream == base.stream, "{what}: tables");
                assert_eq!(got.decoding, base.decoding, "{what}: decoding");
                assert_eq!(got.outputs, base.outputs, "{what}: output labels");
                // A sequential evaluator of the threaded garbler's tables, and the reverse.
                let mixed = run(scheme, backend, c, (&par, &seq), (1 << 16, 4099));
                assert_eq!(mixed.outputs, base.outputs, "{what}: mixed");
            }
        }
    }
}

/// A garbler told to stay on its thread for a while ([`Garble::set_sequential`], for
/// garbling in the background) garbles the same bytes.
#[test]
fn sequential_stretches_give_the_same_bytes() {
    let c = library::load("synthetic:and=20000,xor=20000,inputs=300,depth=10").unwrap();
    let par = Parallel::fgp(2).unwrap().with_min_wave(1);
    for scheme in Scheme::ALL {
        let seq = Parallel::none();
        let base = run(scheme, Backend::detect(), &c, (&seq, &seq), (1 << 16, 4099));
        let mut prg = Prg::new(Block(0x5eed));
        let start = GarbleStart::default();
        let mut g = scheme.garbler_par(&c, &mut prg, Backend::detect(), start, &par);
        let mut stream = Vec::new();
        let mut on = false;
        while g.garble(&mut stream, 1 << 12) {
            on = !on;
            g.set_sequential(on);
        }
        assert!(stream == base.stream, "{scheme}");
        assert_eq!(g.decoding(), base.decoding, "{scheme}");
    }
}

#[test]
fn threads_must_be_positive() {
    assert!(Parallel::fgp(0).is_err());
    let p = Parallel::fgp(3).unwrap().with_min_wave(0);
    assert_eq!(p.threads(), 3);
    assert_eq!(Scheme::Ideal.min_wave(&p), 1);
    assert_eq!(
        Scheme::Prf.min_wave(&Parallel::fgp(2).unwrap()),
        MIN_WAVE_PRF
    );
    assert_eq!(Parallel::none().threads(), 1);
}

/// Every thread count, `min_wave` and window gives the sequential bytes on the small
/// circuits, for every scheme and backend.
#[test]
fn threads_give_the_same_bytes_on_small_circuits() {
    let mut cs = small_circuits();
    for lanes in [1, 5, 64] {
        cs.push((format!("degenerate({lanes})"), degenerate(lanes)));
    }
    cs.push((
        "synthetic, odd AND count".into(),
        library::load("synthetic:and=777,xor=333,inputs=100,depth=3").unwrap(),
    ));
    for scheme in Scheme::ALL {
        for backend in Backend::available() {
            for (name, c) in &cs {
                check_threads(scheme, backend, name, c, &[128, 8192]);
            }
        }
    }
}

/// The same on AES-128, at windows 128, 8192 and 65536.
#[test]
fn threads_give_the_same_bytes_on_aes128() {
    let c = library::load("aes128").unwrap();
    for scheme in Scheme::ALL {
        for backend in Backend::available() {
            check_threads(scheme, backend, "aes128", &c, &[128, 8192, 65536]);
        }
    }
}

/// The same on SHA-256 for the default backend.
#[test]
fn threads_give_the_same_bytes_on_sha256() {
    let c = library::load("sha256").unwrap();
    for scheme in Scheme::ALL {
        check_threads(scheme, Backend::detect(), "sha256", &c, &[128, 65536]);
    }
}

/// A random circuit: `inputs` input wires, then gates whose inputs are any earlier wires
/// (`AND(x, x)` and `AND(x, NOT x)` included), the last wires the outputs.
fn random_circuit(inputs: u32, gates: &[(u8, u32, u32)], outputs: u32) -> Circuit {
    let mut list = Vec::new();
    for (i, &(kind, a, b)) in gates.iter().enumerate() {
        let wires = inputs + i as u32;
        let (a, b, out) = (a % wires, b % wires, wires);
        list.push(match kind % 3 {
            0 => Gate::And { a, b, out },
            1 => Gate::Xor { a, b, out },
            _ => Gate::Inv { a, out },
        });
    }
    let wires = inputs + gates.len() as u32;
    let outs = (wires - outputs.min(gates.len() as u32).max(1)..wires).collect();
    common::circuit(inputs, list, outs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Random circuits, every scheme, 2–4 threads splitting every wave: the sequential
    /// bytes and labels.
    #[test]
    fn random_circuits_garble_alike_on_threads(
        inputs in 2u32..24,
        gates in prop::collection::vec((0u8..3, any::<u32>(), any::<u32>()), 1..400),
        outputs in 1u32..16,
        threads in 2usize..=4,
    ) {
        let c = random_circuit(inputs, &gates, outputs);
        let seq = Parallel::none();
        let par = Parallel::fgp(threads).unwrap().with_min_wave(1).with_window(128).unwrap();
        for scheme in Scheme::ALL {
            let backend = Backend::detect();
            let base = run(scheme, backend, &c, (&seq, &seq), (1 << 16, 4099));
            let got = run(scheme, backend, &c, (&par, &par), (64, 7));
            prop_assert!(got == base, "{}", scheme);
        }
    }
}
