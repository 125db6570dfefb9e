//! Garble, encode, evaluate and decode equals plain evaluation, for every scheme and AES
//! backend: on every built-in circuit, the reference circuits, and random circuits.

mod common;

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use transputation_circuits::{library, Circuit, Gate};
use transputation_core::aes::Backend;
use transputation_core::{prg::Prg, Block};
use transputation_garble::{decode, Scheme};

/// Garbles `circuit`, evaluates it on `inputs` (one bool per input wire) feeding the tables
/// in pieces of `piece` bytes, and returns the decoded output and the table bytes.
fn run(
    scheme: Scheme,
    backend: Backend,
    circuit: &Circuit,
    inputs: &[bool],
    piece: usize,
) -> (Vec<bool>, usize) {
    let mut prg = Prg::new(Block(0x5eed));
    let mut garbler = scheme.garbler(circuit, &mut prg, backend);
    let labels: Vec<Block> = inputs
        .iter()
        .enumerate()
        .map(|(w, &v)| garbler.input_labels(w as u32)[usize::from(v)])
        .collect();
    let mut evaluator = scheme.evaluator(circuit, &labels, backend);
    let mut stream = Vec::new();
    let mut pending: Vec<u8> = Vec::new();
    let mut total = 0;
    loop {
        stream.clear();
        let more = garbler.garble(&mut stream, 4096);
        total += stream.len();
        for chunk in stream.chunks(piece) {
            pending.extend_from_slice(chunk);
            let used = evaluator.feed(&pending).unwrap();
            pending.drain(..used);
        }
        if !more {
            break;
        }
    }
    // A circuit may need no table bytes at all: one feed finishes its free gates.
    assert_eq!(evaluator.feed(&pending).unwrap(), pending.len());
    pending.clear();
    let out = decode(&evaluator.output_labels().unwrap(), &garbler.decoding());
    (out, total)
}

fn check(circuit: &Circuit, runs: usize, seed: u64) {
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
    for scheme in Scheme::ALL {
        for backend in Backend::available() {
            for _ in 0..runs {
                let inputs: Vec<bool> = (0..circuit.n_inputs()).map(|_| rng.gen()).collect();
                let piece = [7, 33, 1 << 20][rng.gen_range(0..3)];
                let (out, _) = run(scheme, backend, circuit, &inputs, piece);
                assert_eq!(out, circuit.eval_bits(&inputs), "{scheme} {backend:?}");
            }
        }
    }
}

#[test]
fn every_small_builtin() {
    for spec in [
        "aes128",
        "sha256",
        "millionaires",
        "add:n=4",
        "mult:n=2",
        "min:n=8",
        "argmin:n=8",
        "sort:n=8",
        "mincut:nodes=6,bits=4",
        "synthetic:and=3000,xor=7000,inputs=64",
    ] {
        check(&library::load(spec).unwrap(), 3, 1);
    }
}

fn random_circuit(seed: u64, inputs: u32, gates: usize) -> Circuit {
    // High fan-out, long INV chains, and degenerate gates (same wire twice, a wire and its
    // negation) on purpose.
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(seed);
    let mut list = Vec::new();
    let mut next = inputs;
    for _ in 0..gates {
        let pick = |rng: &mut rand_chacha::ChaCha12Rng, next: u32| {
            if rng.gen_bool(0.3) {
                next - 1 - rng.gen_range(0..next.min(3))
            } else {
                rng.gen_range(0..next)
            }
        };
        let a = pick(&mut rng, next);
        let b = if rng.gen_bool(0.05) {
            a
        } else {
            pick(&mut rng, next)
        };
        let gate = match rng.gen_range(0..10) {
            0..=3 => Gate::And { a, b, out: next },
            4..=6 => Gate::Xor { a, b, out: next },
            _ => Gate::Inv { a, out: next },
        };
        list.push(gate);
        next += 1;
    }
    let outs: Vec<u32> = (0..8.min(next)).map(|i| next - 1 - i).collect();
    common::circuit(inputs, list, outs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn random_circuits(seed in any::<u64>(), inputs in 2u32..12, gates in 1usize..300) {
        check(&random_circuit(seed, inputs, gates), 2, seed);
    }
}

#[test]
fn table_bytes_are_exact() {
    let c = library::load("aes128").unwrap();
    let s = transputation_circuits::Stats::of(&c);
    for scheme in Scheme::ALL {
        let inputs = vec![false; c.n_inputs()];
        let (_, total) = run(scheme, Backend::detect(), &c, &inputs, 1 << 20);
        assert_eq!(
            total as u64,
            scheme.table_bytes(&s) + scheme.mask_bytes(&s),
            "{scheme}"
        );
    }
}

fn shared(path: &str) -> String {
    let p = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/circuits")
        .join(path);
    assert!(p.is_file(), "missing reference circuit {}", p.display());
    p.to_string_lossy().into_owned()
}

#[test]
fn every_builtin_at_its_defaults_and_every_reference_circuit() {
    // One random input each, every scheme, the fastest backend (the small circuits above
    // run on every backend).
    let mut names: Vec<String> = library::builtins()
        .iter()
        .map(|b| b.name.to_string())
        .collect();
    for file in [
        "bristol/AES-non-expanded.txt",
        "bristol/sha-256.txt",
        "bristol-fashion/aes_128.txt",
        "bristol-fashion/sha256.txt",
        "bristol-fashion/adder64.txt",
        "bristol-fashion/mult64.txt",
    ] {
        names.push(shared(file));
    }
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(9);
    for name in names {
        let circuit = library::load(&name).unwrap();
        let inputs: Vec<bool> = (0..circuit.n_inputs()).map(|_| rng.gen()).collect();
        let want = circuit.eval_bits(&inputs);
        for scheme in Scheme::ALL {
            let (out, _) = run(scheme, Backend::detect(), &circuit, &inputs, 1 << 16);
            assert_eq!(out, want, "{scheme} on {name}");
        }
    }
}

#[test]
fn table_bytes_of_the_papers_circuits() {
    // The paper's Table 3 in bytes: (half gates, prf) for AES, SHA-256 and MinCut size.
    let cases = [
        (shared("bristol/AES-non-expanded.txt"), 217_600, 619_584),
        (shared("bristol/sha-256.txt"), 2_906_400, 3_578_864),
        (
            "synthetic:and=999960,xor=2524920,inputs=250000".to_string(),
            31_998_720,
            72_397_440,
        ),
    ];
    for (name, half_gates, prf) in cases {
        let circuit = library::load(&name).unwrap();
        let stats = transputation_circuits::Stats::of(&circuit);
        let inputs = vec![false; circuit.n_inputs()];
        for scheme in Scheme::ALL {
            let want = if scheme == Scheme::Prf {
                prf
            } else {
                half_gates
            };
            assert_eq!(scheme.table_bytes(&stats), want, "{scheme} {name}");
            let (_, total) = run(scheme, Backend::detect(), &circuit, &inputs, 1 << 20);
            assert_eq!(
                total as u64,
                want + scheme.mask_bytes(&stats),
                "{scheme} {name}: bytes on the wire"
            );
        }
    }
}

#[test]
fn labels_handed_over_after_planning_give_the_same_outputs() {
    // A 2PC evaluator is planned before its labels arrive (set_input_labels, in parts).
    let circuit = library::load("aes128").unwrap();
    let bits: Vec<bool> = (0..circuit.n_inputs()).map(|i| i % 3 == 1).collect();
    for scheme in Scheme::ALL {
        let g = common::garble(scheme, &circuit, 7, 1 << 16);
        let labels = g.encode(&bits);
        let mut e = scheme.evaluator(
            &circuit,
            &vec![Block::ZERO; labels.len()],
            Backend::detect(),
        );
        let (first, second) = labels.split_at(100);
        e.set_input_labels(100, second);
        e.set_input_labels(0, first);
        assert_eq!(e.feed(&g.stream).unwrap(), g.stream.len());
        let out = decode(&e.output_labels().unwrap(), &g.decoding);
        assert_eq!(out, circuit.eval_bits(&bits), "{scheme}");
    }
}

/// The global offset a garbler reports is the one its input labels have, exactly for the
/// schemes that say they have one (the 2PC session picks correlated OT by the scheme and
/// feeds it the garbler's offset: the two must agree).
#[test]
fn the_global_offset_is_the_labels_offset() {
    let circuit = library::load("aes128").unwrap();
    for scheme in Scheme::ALL {
        let mut prg = Prg::new(Block(7));
        let garbler = scheme.garbler(&circuit, &mut prg, Backend::detect());
        assert_eq!(
            garbler.global_offset().is_some(),
            scheme.has_global_offset(),
            "{scheme}"
        );
        if let Some(delta) = garbler.global_offset() {
            assert!(delta.lsb(), "{scheme}: the permute bit of Δ is set");
            for w in 0..circuit.n_inputs() as u32 {
                let [x0, x1] = garbler.input_labels(w);
                assert_eq!(x0 ^ x1, delta, "{scheme}, wire {w}");
            }
        }
    }
}

/// Input labels the garbler is handed before garbling (as a 2PC garbler takes them from the
/// OT and a seed) are the ones it garbles with: the evaluator, given the handed labels of
/// the input bits, decodes the right output, for every scheme and in parts.
#[test]
fn labels_handed_to_the_garbler_are_garbled_with() {
    let circuit = library::load("aes128").unwrap();
    let n = circuit.n_inputs();
    let bits: Vec<bool> = (0..n).map(|i| i % 5 == 2).collect();
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(11);
    for scheme in Scheme::ALL {
        let mut prg = Prg::new(Block(3));
        let mut garbler = scheme.garbler(&circuit, &mut prg, Backend::detect());
        let pairs: Vec<[Block; 2]> = (0..n)
            .map(|_| {
                let w0 = Block(rng.gen());
                match garbler.global_offset() {
                    Some(delta) => [w0, w0 ^ delta],
                    None => [w0, Block(rng.gen()).with_lsb(!w0.lsb())],
                }
            })
            .collect();
        let (first, second) = pairs.split_at(77);
        garbler.set_input_labels(77, second);
        garbler.set_input_labels(0, first);
        for (w, pair) in pairs.iter().enumerate() {
            assert_eq!(garbler.input_labels(w as u32), *pair, "{scheme}, wire {w}");
        }
        let labels: Vec<Block> = pairs
            .iter()
            .zip(&bits)
            .map(|(p, &b)| p[usize::from(b)])
            .collect();
        let mut e = scheme.evaluator(&circuit, &labels, Backend::detect());
        let mut stream = Vec::new();
        while garbler.garble(&mut stream, 1 << 16) {}
        assert_eq!(e.feed(&stream).unwrap(), stream.len());
        let out = decode(&e.output_labels().unwrap(), &garbler.decoding());
        assert_eq!(out, circuit.eval_bits(&bits), "{scheme}");
    }
}

/// The message of the panic `f` raises; fails the test if it does not panic.
fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> String {
    let payload = std::panic::catch_unwind(f).expect_err("a panic");
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

#[test]
fn handed_labels_that_do_not_fit_the_scheme_panic() {
    let circuit = library::load("aes128").unwrap();
    for scheme in Scheme::ALL {
        let mut prg = Prg::new(Block(4));
        let garbler = scheme.garbler(&circuit, &mut prg, Backend::detect());
        // Equal lsbs break point and permute in every scheme; under a global offset, any
        // other difference than Δ breaks free XOR (and is what is checked first).
        let same_lsb = [Block(2), Block(4)];
        let mut bad = Vec::new();
        match garbler.global_offset() {
            Some(delta) => {
                bad.push((same_lsb, "differ by Δ"));
                bad.push(([Block(2), Block(2) ^ delta ^ Block(6)], "differ by Δ"));
            }
            None => bad.push((same_lsb, "differ in their lsb")),
        }
        drop(garbler);
        for (pair, want) in bad {
            let message = panic_message(|| {
                let mut prg = Prg::new(Block(4));
                let mut g = scheme.garbler(&circuit, &mut prg, Backend::detect());
                g.set_input_labels(3, &[pair]);
            });
            assert!(message.contains(want), "{scheme}: {pair:?}: {message}");
        }
        let started = panic_message(|| {
            let mut prg = Prg::new(Block(4));
            let mut g = scheme.garbler(&circuit, &mut prg, Backend::detect());
            let pair = g.input_labels(0);
            g.garble(&mut Vec::new(), 1);
            g.set_input_labels(0, &[pair]);
        });
        assert!(
            started.contains("input labels are set before the first window"),
            "{scheme}: labels set after garbling began: {started}"
        );
        let past = panic_message(|| {
            let mut prg = Prg::new(Block(4));
            let mut g = scheme.garbler(&circuit, &mut prg, Backend::detect());
            let pair = g.input_labels(0);
            g.set_input_labels(circuit.n_inputs() as u32, &[pair]);
        });
        assert!(
            past.contains("are not all inputs"),
            "{scheme}: a wire past the inputs: {past}"
        );
    }
}
