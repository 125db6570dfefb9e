//! Determinism (docs/garbling.md §7.7): the same seed gives the same input labels, tables and
//! decoding bits, however the garbler is driven (batch target) and however the evaluator is
//! fed (piece size); a different seed gives different ones.

mod common;

use common::{evaluate, garble, lanes};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_circuits::{library, Circuit, Gate};
use transputation_garble::{decode, Scheme};

fn circuits() -> Vec<(&'static str, Circuit)> {
    vec![
        ("aes128", library::load("aes128").unwrap()),
        ("lanes", lanes(40)),
    ]
}

#[test]
fn same_seed_same_garbling_for_any_batch_target() {
    for scheme in Scheme::ALL {
        for (name, c) in circuits() {
            let base = garble(scheme, &c, 42, 1 << 20);
            for target in [0, 1, 16, 33, 97, 4096] {
                let again = garble(scheme, &c, 42, target);
                let what = format!("{scheme} {name} target {target}");
                assert_eq!(again.inputs, base.inputs, "{what}: input labels");
                assert_eq!(again.stream, base.stream, "{what}: tables");
                assert_eq!(again.decoding, base.decoding, "{what}: decoding");
            }
        }
    }
}

/// `garble_at` over a reused buffer (old bytes left in place, as a session's send buffers
/// are) writes exactly the tables a fresh buffer gets: no old byte shows through, neither
/// of degenerate gates' zero tables nor of `prf`'s mask bytes (also the half-used last one
/// of a circuit with an odd number of AND gates).
#[test]
fn garbling_over_old_bytes_equals_garbling_into_a_fresh_buffer() {
    let mut all = circuits();
    all.push(("degenerate", degenerate()));
    let one_and = common::circuit(2, vec![Gate::And { a: 0, b: 1, out: 2 }], vec![2]);
    all.push(("one AND gate", one_and));
    for scheme in Scheme::ALL {
        for (name, c) in &all {
            let fresh = garble(scheme, c, 7, 4096);
            let (mut g, _) = common::garbler(scheme, c, 7);
            // A buffer longer than any batch, full of a pattern no table byte run equals.
            let mut buf = vec![0xa5u8; 64 << 10];
            let mut stream = Vec::new();
            loop {
                buf[..].fill(0xa5);
                let (end, more) = g.garble_at(&mut buf, 0, 4096);
                stream.extend_from_slice(&buf[..end]);
                if !more {
                    break;
                }
            }
            assert_eq!(
                stream, fresh.stream,
                "{scheme} {name}: tables over old bytes"
            );
            assert_eq!(g.decoding(), fresh.decoding, "{scheme} {name}: decoding");
        }
    }
}

#[test]
fn different_seed_different_garbling() {
    for scheme in Scheme::ALL {
        let c = library::load("aes128").unwrap();
        let (a, b) = (
            garble(scheme, &c, 1, 1 << 20),
            garble(scheme, &c, 2, 1 << 20),
        );
        assert_eq!(a.stream.len(), b.stream.len());
        let same_inputs = a.inputs.iter().zip(&b.inputs).filter(|(x, y)| x == y);
        assert_eq!(same_inputs.count(), 0, "{scheme}");
        let same_blocks = a
            .stream
            .chunks(16)
            .zip(b.stream.chunks(16))
            .filter(|(x, y)| x == y);
        assert_eq!(same_blocks.count(), 0, "{scheme}");
        assert_ne!(a.decoding, b.decoding, "{scheme}");
    }
}

#[test]
fn evaluation_does_not_depend_on_piece_sizes() {
    let mut rng = ChaCha12Rng::seed_from_u64(5);
    for scheme in Scheme::ALL {
        for (name, c) in circuits() {
            let gc = garble(scheme, &c, 9, 1000);
            let x: Vec<bool> = (0..c.n_inputs()).map(|_| rng.gen()).collect();
            let labels = gc.encode(&x);
            let base = evaluate(scheme, &c, &labels, &gc.stream, 1 << 20).unwrap();
            assert_eq!(
                decode(&base, &gc.decoding),
                c.eval_bits(&x),
                "{scheme} {name}"
            );
            for piece in [1, 2, 16, 31, 33, 4095] {
                let out = evaluate(scheme, &c, &labels, &gc.stream, piece).unwrap();
                assert_eq!(out, base, "{scheme} {name} piece {piece}");
            }
        }
    }
}

/// `AND(x, x)` and `AND(x, NOT x)` gates (which `prf` garbles without cryptography, drawing
/// fresh labels for the second kind) between ordinary AND gates.
fn degenerate() -> Circuit {
    let (gates, outs, _) = common::degenerate_lanes(4);
    common::circuit(8, gates, outs)
}

#[test]
fn same_seed_same_garbling_with_degenerate_gates() {
    // With the same batch target, degenerate gates are garbled deterministically.
    let c = degenerate();
    for scheme in Scheme::ALL {
        for target in [1, 1 << 20] {
            let (a, b) = (garble(scheme, &c, 8, target), garble(scheme, &c, 8, target));
            assert_eq!(a.stream, b.stream, "{scheme} target {target}");
            assert_eq!(a.decoding, b.decoding, "{scheme} target {target}");
        }
    }
}

#[test]
fn degenerate_gates_do_not_depend_on_batch_target() {
    let c = degenerate();
    for scheme in Scheme::ALL {
        let base = garble(scheme, &c, 8, 1 << 20);
        let small = garble(scheme, &c, 8, 1);
        let first_diff = small
            .stream
            .iter()
            .zip(&base.stream)
            .position(|(x, y)| x != y);
        assert_eq!(
            first_diff, None,
            "{scheme}: tables differ from this byte on"
        );
        assert_eq!(small.decoding, base.decoding, "{scheme}");
    }
}

/// Every AES backend garbles byte for byte alike and evaluates to the same labels: the fused
/// kernels of every backend but the portable one (labels, hashes, tables in one pass; the
/// half-gates schemes' and `prf`'s) against the portable backend's staged paths, on circuits
/// with many independent AND gates per wave and wave sizes that leave every remainder of
/// the kernels' groups.
#[test]
fn every_backend_garbles_and_evaluates_alike() {
    use transputation_core::aes::Backend;
    use transputation_core::{prg::Prg, Block};
    let mut cs = circuits();
    for n in [1, 7, 9, 17, 33] {
        cs.push(("lanes", lanes(n)));
    }
    cs.push((
        "synthetic",
        library::load("synthetic:and=3001,xor=7003,inputs=301,depth=13").unwrap(),
    ));
    for scheme in Scheme::ALL {
        for (name, c) in &cs {
            let mut runs = Vec::new();
            for backend in Backend::available() {
                let mut prg = Prg::new(Block(9));
                let mut g = scheme.garbler(c, &mut prg, backend);
                let mut rng = ChaCha12Rng::seed_from_u64(3);
                let labels: Vec<Block> = (0..c.n_inputs() as u32)
                    .map(|w| g.input_labels(w)[usize::from(rng.gen::<bool>())])
                    .collect();
                let mut stream = Vec::new();
                while g.garble(&mut stream, 1 << 16) {}
                let mut e = scheme.evaluator(c, &labels, backend);
                assert_eq!(e.feed(&stream).unwrap(), stream.len());
                runs.push((backend, stream, e.output_labels().unwrap(), g.decoding()));
            }
            for run in &runs[1..] {
                let what = format!("{scheme} {name}: {:?} against {:?}", run.0, runs[0].0);
                assert_eq!(run.1, runs[0].1, "{what}: tables");
                assert_eq!(run.2, runs[0].2, "{what}: output labels");
                assert_eq!(run.3, runs[0].3, "{what}: decoding");
            }
        }
    }
}

/// Garbling comes in batches of about the target also after a circuit's last AND gate when
/// that gate opened a mask-byte pair (`prf` keeps a call going while a pair is open; one
/// that nothing closes must not make the rest of the circuit one batch), and the batches
/// add up to the tables of one call.
#[test]
fn batches_stay_small_after_a_last_and_gate_that_opens_a_pair() {
    // One AND gate, then three windows' worth of XOR gates (8,192 gates per window).
    let mut gates = vec![Gate::And { a: 0, b: 1, out: 2 }];
    for i in 0..3 * 8192 {
        gates.push(Gate::Xor {
            a: 2 + i,
            b: i % 2,
            out: 3 + i,
        });
    }
    let last = 2 + 3 * 8192;
    let c = common::circuit(2, gates, vec![last]);
    for scheme in Scheme::ALL {
        let whole = garble(scheme, &c, 5, usize::MAX);
        let (mut g, _) = common::garbler(scheme, &c, 5);
        let (mut stream, mut batches) = (Vec::new(), Vec::new());
        loop {
            let before = stream.len();
            let more = g.garble(&mut stream, 1);
            batches.push(stream.len() - before);
            if !more {
                break;
            }
        }
        assert_eq!(
            stream, whole.stream,
            "{scheme}: the batches make the same tables"
        );
        // A call ends after its first window with tables: 16 bytes per XOR gate under `prf`.
        let largest = batches.iter().copied().max().unwrap_or(0);
        assert!(
            largest <= 8192 * 16 + 33,
            "{scheme}: a batch of {largest} bytes (batches {batches:?})"
        );
    }
}
