//! Tests of where a garbling starts in a session ([`GarbleStart`]): a given offset `Δ` is the
//! one garbled under, the tweak base changes the tables and must be the evaluator's too,
//! every AES backend (the VAES fused kernels against the staged paths) garbles alike at
//! tweak bases whose tweaks cross 2^32, 2^33 and 2^63, and the defaults are the plain
//! [`Scheme::garbler`] and [`Scheme::evaluator`].

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_circuits::{library, Circuit, Gate};
use transputation_core::aes::Backend;
use transputation_core::prg::Prg;
use transputation_core::Block;

use super::{decode, GarbleStart, Scheme};

/// What one garbling and evaluation gave.
#[derive(Debug, PartialEq)]
struct Run {
    tables: Vec<u8>,
    input_labels: Vec<[Block; 2]>,
    decoding: Vec<bool>,
    output_labels: Vec<Block>,
    /// The decoded output.
    output: Vec<bool>,
}

/// Garbles `c` with the PRG seeded by `seed` from `start` (or by [`Scheme::garbler`] if
/// `None`), evaluates it on `bits` with the tweak base `eval_base` (or by
/// [`Scheme::evaluator`] if `None`), and decodes.
fn run(
    scheme: Scheme,
    backend: Backend,
    c: &Circuit,
    seed: u128,
    start: Option<GarbleStart>,
    eval_base: Option<u64>,
    bits: &[bool],
) -> Run {
    let mut prg = Prg::new(Block(seed));
    let mut g = match start {
        Some(start) => scheme.garbler_with(c, &mut prg, backend, start),
        None => scheme.garbler(c, &mut prg, backend),
    };
    let input_labels: Vec<[Block; 2]> = (0..c.n_inputs() as u32)
        .map(|w| g.input_labels(w))
        .collect();
    let labels: Vec<Block> = input_labels
        .iter()
        .zip(bits)
        .map(|(l, &b)| l[usize::from(b)])
        .collect();
    let mut tables = Vec::new();
    while g.garble(&mut tables, 1 << 16) {}
    let mut e = match eval_base {
        Some(base) => scheme.evaluator_with(c, &labels, backend, base),
        None => scheme.evaluator(c, &labels, backend),
    };
    assert_eq!(e.feed(&tables), Ok(tables.len()));
    let output_labels = e.output_labels().unwrap();
    let decoding = g.decoding();
    Run {
        output: decode(&output_labels, &decoding),
        tables,
        input_labels,
        decoding,
        output_labels,
    }
}

fn random_bits(c: &Circuit, seed: u64) -> Vec<bool> {
    let mut rng = ChaCha12Rng::seed_from_u64(seed);
    (0..c.n_inputs()).map(|_| rng.gen()).collect()
}

fn and_gates(c: &Circuit) -> u64 {
    c.gates()
        .iter()
        .filter(|g| matches!(g, Gate::And { .. }))
        .count() as u64
}

/// A valid offset: lsb 1.
const DELTA: Block = Block(0x0123_4567_89ab_cdef_fedc_ba98_7654_3211);

/// The half-gates schemes, which take an offset and a tweak base.
const HALF_GATES: [Scheme; 2] = [Scheme::Circular, Scheme::Ideal];

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
fn the_default_start_is_the_plain_garbler_and_evaluator() {
    let c = library::load("aes128").unwrap();
    let bits = random_bits(&c, 1);
    for scheme in Scheme::ALL {
        for backend in Backend::available() {
            let plain = run(scheme, backend, &c, 5, None, None, &bits);
            let with = run(
                scheme,
                backend,
                &c,
                5,
                Some(GarbleStart::default()),
                Some(0),
                &bits,
            );
            assert_eq!(with, plain, "{scheme} {backend:?}");
            assert_eq!(plain.output, c.eval_bits(&bits), "{scheme} {backend:?}");
        }
    }
}

#[test]
fn a_given_offset_is_the_one_garbled_under() {
    let c = library::load("aes128").unwrap();
    let bits = random_bits(&c, 2);
    for scheme in HALF_GATES {
        for backend in Backend::available() {
            let start = GarbleStart {
                offset: Some(DELTA),
                tweak_base: 0,
                hash_key: None,
            };
            let mut prg = Prg::new(Block(6));
            let g = scheme.garbler_with(&c, &mut prg, backend, start);
            assert_eq!(g.global_offset(), Some(DELTA), "{scheme} {backend:?}");
            for w in 0..c.n_inputs() as u32 {
                let [w0, w1] = g.input_labels(w);
                assert_eq!(w1, w0 ^ DELTA, "{scheme} {backend:?}: wire {w}");
            }
            let given = run(scheme, backend, &c, 6, Some(start), Some(0), &bits);
            assert_eq!(given.output, c.eval_bits(&bits), "{scheme} {backend:?}");
            // The same seed without the offset draws Δ from the PRG instead: other labels.
            let drawn = run(scheme, backend, &c, 6, None, None, &bits);
            assert_ne!(given.tables, drawn.tables, "{scheme} {backend:?}");
        }
    }
}

#[test]
fn an_offset_with_lsb_0_panics() {
    let c = library::load("aes128").unwrap();
    for scheme in HALF_GATES {
        let message = panic_message(|| {
            let start = GarbleStart {
                offset: Some(DELTA.with_lsb(false)),
                tweak_base: 0,
                hash_key: None,
            };
            let mut prg = Prg::new(Block(1));
            scheme.garbler_with(&c, &mut prg, Backend::detect(), start);
        });
        assert!(message.contains("must have lsb 1"), "{scheme}: {message}");
    }
}

#[test]
fn prf_refuses_an_offset_and_ignores_the_tweak_base() {
    let c = library::load("aes128").unwrap();
    let message = panic_message(|| {
        let start = GarbleStart {
            offset: Some(DELTA),
            tweak_base: 0,
            hash_key: None,
        };
        let mut prg = Prg::new(Block(1));
        Scheme::Prf.garbler_with(&c, &mut prg, Backend::detect(), start);
    });
    assert!(message.contains("prf has no global offset"), "{message}");
    // Its PRF keys are fresh per garbling (the `prf` module documentation): no base needed.
    let bits = random_bits(&c, 3);
    let backend = Backend::detect();
    let plain = run(Scheme::Prf, backend, &c, 8, None, None, &bits);
    let start = GarbleStart {
        offset: None,
        tweak_base: 12_345,
        hash_key: None,
    };
    let based = run(Scheme::Prf, backend, &c, 8, Some(start), Some(99), &bits);
    assert_eq!(based, plain);
}

/// Bases whose tweaks `2(B + n) + 1`, `2(B + n) + 2` over aes128's 6,400 AND gates cross
/// 2^32 and 2^33 (the fused kernels make `2n` from 32-bit indices and add `2B` in 64-bit
/// lanes) or pass 2^63, besides small ones.
fn bases(c: &Circuit) -> Vec<u64> {
    let n = and_gates(c);
    vec![
        1,
        n,
        (1 << 31) - n / 2,
        (1 << 32) - n / 2,
        (1 << 62) - 3,
        (1 << 62) + (1 << 61),
        (1 << 63) - 1 - n,
    ]
}

#[test]
fn the_tweak_base_changes_the_tables_and_must_be_the_evaluators() {
    let c = library::load("aes128").unwrap();
    let bits = random_bits(&c, 4);
    let want = c.eval_bits(&bits);
    let bases = bases(&c);
    // One backend: every backend garbles alike (the test below).
    let backend = Backend::detect();
    for scheme in HALF_GATES {
        let start = |tweak_base| {
            Some(GarbleStart {
                offset: Some(DELTA),
                tweak_base,
                hash_key: None,
            })
        };
        let at_0 = run(scheme, backend, &c, 7, start(0), Some(0), &bits);
        assert_eq!(at_0.output, want, "{scheme}, base 0");
        let mut seen = vec![at_0.tables.clone()];
        for (i, &base) in bases.iter().enumerate() {
            let what = format!("{scheme}, base {base:#x}");
            let at_b = run(scheme, backend, &c, 7, start(base), Some(base), &bits);
            assert_eq!(at_b.output, want, "{what}");
            // Same seed and Δ: the same input labels, other tables.
            assert_eq!(at_b.input_labels, at_0.input_labels, "{what}");
            assert!(
                !seen.contains(&at_b.tables),
                "{what}: an earlier base's tables"
            );
            seen.push(at_b.tables);
            // Evaluated with another base, the tables decode to nothing right.
            let other = bases[(i + 1) % bases.len()];
            for eval_base in [other, 0] {
                let wrong = run(scheme, backend, &c, 7, start(base), Some(eval_base), &bits);
                assert_ne!(wrong.output, want, "{what}, evaluated at {eval_base:#x}");
            }
        }
        let wrong = run(scheme, backend, &c, 7, start(0), Some(bases[0]), &bits);
        assert_ne!(
            wrong.output, want,
            "{scheme}: base 0, evaluated at {:#x}",
            bases[0]
        );
    }
}

/// Every AES backend garbles and evaluates alike at every tweak base: the x86 backends'
/// fused kernels (`fused::garble_and_gates`, `fused::eval_and_gates`) against the portable
/// backend's staged path, on a circuit with waves wide enough to fill the kernels' groups
/// and leave remainders.
#[test]
fn every_backend_garbles_alike_at_every_tweak_base() {
    let c = library::load("synthetic:and=1001,xor=2003,inputs=101,depth=7").unwrap();
    let bits = random_bits(&c, 5);
    let want = c.eval_bits(&bits);
    let backends = Backend::available();
    for scheme in HALF_GATES {
        for base in bases(&c).into_iter().chain([0]) {
            let start = Some(GarbleStart {
                offset: Some(DELTA),
                tweak_base: base,
                hash_key: None,
            });
            let runs: Vec<Run> = backends
                .iter()
                .map(|&backend| run(scheme, backend, &c, 9, start, Some(base), &bits))
                .collect();
            for (run, backend) in runs.iter().zip(&backends) {
                let what = format!("{scheme} {backend:?} against {:?}", backends[0]);
                assert_eq!(run, &runs[0], "{what}, base {base:#x}");
            }
            assert_eq!(runs[0].output, want, "{scheme}, base {base:#x}");
        }
    }
}

/// `prf` on every AES backend gives the portable backend's bytes and output labels: the
/// fused garbling and evaluation kernels against the staged path, on a circuit whose waves
/// fill the kernels' groups and leave remainders, with AND and XOR gates in one wave; and
/// evaluating tables of random bytes, the same output labels.
#[test]
fn prf_is_alike_on_every_backend() {
    // Several windows of 8,192 gates: their boundaries, where an AND gate's mask nibble may
    // share its byte with the window before.
    let c = library::load("synthetic:and=6001,xor=12003,inputs=101,depth=7").unwrap();
    let bits = random_bits(&c, 6);
    let backends = Backend::available();
    assert_eq!(backends[0], Backend::Portable);
    let runs: Vec<Run> = backends
        .iter()
        .map(|&backend| run(Scheme::Prf, backend, &c, 10, None, None, &bits))
        .collect();
    for (run, backend) in runs.iter().zip(&backends) {
        assert_eq!(
            run, &runs[0],
            "prf {backend:?} against the portable backend"
        );
    }
    assert_eq!(runs[0].output, c.eval_bits(&bits));
    // Tables a garbler did not make (every byte random, signal and mask bits included):
    // still the same labels on every backend.
    let mut rng = ChaCha12Rng::seed_from_u64(7);
    let hostile: Vec<u8> = (0..runs[0].tables.len()).map(|_| rng.gen()).collect();
    let held: Vec<Block> = (runs[0].input_labels.iter().zip(&bits))
        .map(|(l, &b)| l[usize::from(b)])
        .collect();
    let outputs: Vec<Vec<Block>> = backends
        .iter()
        .map(|&backend| {
            let mut e = Scheme::Prf.evaluator(&c, &held, backend);
            assert_eq!(e.feed(&hostile), Ok(hostile.len()), "{backend:?}");
            e.output_labels().unwrap()
        })
        .collect();
    for (out, backend) in outputs.iter().zip(&backends) {
        assert_eq!(out, &outputs[0], "prf {backend:?} on random tables");
    }
}

#[test]
fn a_tweak_base_whose_tweaks_pass_64_bits_panics() {
    let c = library::load("aes128").unwrap();
    let last = (1 << 63) - 1 - and_gates(&c); // the largest that fits (tested above)
    for scheme in HALF_GATES {
        for base in [last + 1, u64::MAX] {
            let message = panic_message(|| {
                let start = GarbleStart {
                    offset: None,
                    tweak_base: base,
                    hash_key: None,
                };
                let mut prg = Prg::new(Block(1));
                scheme.garbler_with(&c, &mut prg, Backend::detect(), start);
            });
            assert!(message.contains("passes 2^63"), "{scheme}: {message}");
            let message = panic_message(|| {
                let labels = vec![Block::ZERO; c.n_inputs()];
                scheme.evaluator_with(&c, &labels, Backend::detect(), base);
            });
            assert!(message.contains("passes 2^63"), "{scheme}: {message}");
        }
    }
}

/// `ideal` garbled under a session's own hash key: an evaluator told that key decodes the
/// function's output; one left on the reference key, or told another key, does not.
#[test]
fn ideal_tables_decode_only_under_the_garblers_hash_key() {
    let c = library::load("aes128").unwrap();
    let bits = random_bits(&c, 3);
    let want = c.eval_bits(&bits);
    let key = Block(0x0123_4567_89ab_cdef_fedc_ba98_7654_3210);
    for backend in Backend::available() {
        let mut prg = Prg::new(Block(5));
        let start = GarbleStart {
            hash_key: Some(key),
            ..GarbleStart::default()
        };
        let mut g = Scheme::Ideal.garbler_with(&c, &mut prg, backend, start);
        let labels: Vec<Block> = (0..c.n_inputs() as u32)
            .zip(&bits)
            .map(|(w, &b)| g.input_labels(w)[usize::from(b)])
            .collect();
        let mut tables = Vec::new();
        while g.garble(&mut tables, 1 << 16) {}
        for (told, decodes) in [
            (Some(key), true),
            (None, false),
            (Some(key ^ Block(1)), false),
        ] {
            let mut e = Scheme::Ideal.evaluator(&c, &labels, backend);
            if let Some(k) = told {
                e.set_hash_key(k);
            }
            assert_eq!(e.feed(&tables), Ok(tables.len()));
            let output = decode(&e.output_labels().unwrap(), &g.decoding());
            assert_eq!(output == want, decodes, "told {told:?}, {backend:?}");
        }
    }
}
