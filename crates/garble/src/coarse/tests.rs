//! Coarse-grained garbling against the plaintext: every scheme, several thread counts on
//! either side, pieces of one region and grouped, the stream fed in small pieces; and the
//! evaluator's answers to a stream that is cut short, too long or has a bad frame header.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_circuits::builder::{Builder, Uint};
use transputation_circuits::{BitOrder, Circuit, Gate, InputGroup, OutputGroup, Party, Sections};
use transputation_core::aes::Backend;
use transputation_core::prg::Prg;
use transputation_core::Block;

use super::{CoarseEvaluator, CoarseGarbler, Layout, MAX_OPEN};
use crate::{decode, EvalError, Evaluate, Garble, GarbleStart, Scheme};

const SCHEMES: [Scheme; 3] = [Scheme::Prf, Scheme::Circular, Scheme::Ideal];

/// Glue (a sum of the garbler's values), a section of `k` independent products with a
/// comparison each, glue that sums them, a second section reading both the first's results
/// and the inputs, and glue again.
fn sectioned(k: usize, bits: usize) -> Circuit {
    let mut b = Builder::new();
    let xs = b.input_uints(Party::Garbler, "x", k, bits);
    let ys = b.input_uints(Party::Evaluator, "y", k, bits);
    let mut sections = Vec::new();
    let sx = b.sum_of(&xs);
    let mut bounds = vec![b.gate_count() as u64];
    let mut products = Vec::new();
    for (x, y) in xs.iter().zip(&ys) {
        let p = b.mul(x, y);
        let lt = b.lt(x, y);
        let d = b.mux_word(lt, &p, x);
        products.push(d);
        bounds.push(b.gate_count() as u64);
    }
    sections.push(bounds);
    let total = b.sum_of(&products);
    let t = b.add(&total, &sx);
    let mut bounds = vec![b.gate_count() as u64];
    let mut second: Vec<Uint> = Vec::new();
    for (p, y) in products.iter().zip(&ys) {
        let s = b.add(p, &t);
        second.push(b.mul(&s, y));
        bounds.push(b.gate_count() as u64);
    }
    sections.push(bounds);
    let m = b.min_of(&second);
    b.output_uint("t", &t);
    b.output_uints("second", &second);
    b.output_uint("min", &m);
    b.build()
        .with_sections(Sections::new(sections).unwrap())
        .unwrap()
}

/// Garbles `c` by `layout` (under the scheme it was cut for) on `tg` threads, evaluates on `te` threads feeding the stream in
/// pieces of at most `piece` bytes, and returns the decoded output.
fn run(
    c: &Circuit,
    layout: &Arc<Layout>,
    (tg, te): (usize, usize),
    piece: usize,
    bits: &[bool],
    seed: u128,
) -> Vec<bool> {
    let backend = Backend::detect();
    let mut prg = Prg::new(Block(seed));
    let start = GarbleStart {
        tweak_base: 1000,
        hash_key: Some(Block(seed ^ 0x5a5a)),
        ..GarbleStart::default()
    };
    let mut g = CoarseGarbler::new(Arc::clone(layout), &mut prg, backend, start, tg);
    let labels: Vec<Block> = bits
        .iter()
        .enumerate()
        .map(|(w, &b)| g.input_labels(w as u32)[usize::from(b)])
        .collect();
    let mut tables = Vec::new();
    while g.garble(&mut tables, 1 << 14) {}
    let mut e = CoarseEvaluator::new(Arc::clone(layout), &labels, backend, 1000, te);
    e.set_hash_key(Block(seed ^ 0x5a5a));
    for chunk in tables.chunks(piece) {
        assert_eq!(e.feed(chunk), Ok(chunk.len()));
    }
    assert_eq!(e.feed(&[]), Ok(0));
    e.check_done(c).unwrap();
    decode(&e.output_labels().unwrap(), &g.decoding())
}

#[test]
fn every_scheme_computes_the_function_on_any_threads() {
    let c = sectioned(5, 12);
    let mut rng = ChaCha12Rng::seed_from_u64(21);
    for (min_piece, pieces) in [(1, 1 + 5 + 1 + 5 + 1), (1 << 16, 5)] {
        for scheme in SCHEMES {
            let layout = Arc::new(Layout::cut(&c, scheme, min_piece).unwrap());
            assert_eq!(layout.pieces(), pieces, "min piece {min_piece}");
            for threads in [(1, 1), (2, 3), (4, 2)] {
                let bits: Vec<bool> = (0..c.n_inputs()).map(|_| rng.gen()).collect();
                let piece = rng.gen_range(1..200);
                let out = run(&c, &layout, threads, piece, &bits, rng.gen());
                assert_eq!(
                    out,
                    c.eval_bits(&bits),
                    "{scheme:?} {threads:?} {min_piece}"
                );
            }
        }
    }
}

/// The whole stream of a garbling of `layout`'s circuit on two threads, and the labels of
/// an all-zero input.
fn garbled(layout: &Arc<Layout>, seed: u128) -> (Vec<Block>, Vec<u8>) {
    let mut g = CoarseGarbler::new(
        Arc::clone(layout),
        &mut Prg::new(Block(seed)),
        Backend::detect(),
        GarbleStart::default(),
        2,
    );
    let labels = (0..layout.n_inputs as u32)
        .map(|w| g.input_labels(w)[0])
        .collect();
    let mut tables = Vec::new();
    while g.garble(&mut tables, 1 << 12) {}
    (labels, tables)
}

#[test]
fn a_bad_stream_is_an_error_not_a_wrong_output() {
    let c = sectioned(3, 8);
    let backend = Backend::detect();
    for scheme in SCHEMES {
        let layout = Arc::new(Layout::cut(&c, scheme, 1).unwrap());
        let (labels, tables) = garbled(&layout, 3);
        let eval = || CoarseEvaluator::new(Arc::clone(&layout), &labels, backend, 0, 2);
        // Cut short: no output labels.
        let mut e = eval();
        e.feed(&tables[..tables.len() - 1]).unwrap();
        assert!(matches!(
            e.output_labels(),
            Err(EvalError::Truncated { .. })
        ));
        // Too long.
        let mut long = tables.clone();
        long.push(0);
        assert_eq!(
            eval().feed(&long),
            Err(EvalError::TrailingBytes { extra: 1 })
        );
        // A frame of a piece the stage does not have, and one longer than its piece.
        for (byte, value) in [(0, 0xff), (4, 0xff), (5, 0xff)] {
            let mut bad = tables.clone();
            bad[byte] = value;
            assert!(
                matches!(eval().feed(&bad), Err(EvalError::Frame(_))),
                "{scheme:?} header byte {byte}"
            );
        }
    }
}

/// A stream that begins more pieces of a stage than a garbler's threads could have open
/// at once (a frame of one byte of each in turn) is refused at the first piece too many;
/// the same number of pieces one after another is not.
#[test]
fn a_stream_that_opens_too_many_pieces_at_once_is_refused() {
    let k = MAX_OPEN + 2;
    let mut b = Builder::new();
    let xs = b.input_uints(Party::Garbler, "x", k, 2);
    let ys = b.input_uints(Party::Evaluator, "y", k, 2);
    let items: Vec<(Uint, Uint)> = xs.into_iter().zip(ys).collect();
    let ands = b.parallel(items, |b, (x, y)| b.mul(&x, &y));
    b.output_uints("and", &ands);
    let c = b.build();
    let layout = Arc::new(Layout::cut(&c, Scheme::Ideal, 1).unwrap());
    let labels = vec![Block::ZERO; c.n_inputs()];
    let backend = Backend::detect();
    let mut e = CoarseEvaluator::new(Arc::clone(&layout), &labels, backend, 0, 2);
    let frame = |piece: u32| {
        let mut f = super::frame::frame_header(piece, 1).to_vec();
        f.push(0);
        f
    };
    let mut result = Ok(0);
    for piece in 0..k as u32 {
        result = e.feed(&frame(piece));
        if result.is_err() {
            assert_eq!(piece as usize, MAX_OPEN, "{result:?}");
            break;
        }
    }
    assert!(matches!(result, Err(EvalError::Frame(_))), "{result:?}");
}

#[test]
fn a_circuit_without_sections_is_refused() {
    let mut b = Builder::new();
    let x = b.input_uint(Party::Garbler, "x", 8);
    let y = b.input_uint(Party::Evaluator, "y", 8);
    let s = b.add(&x, &y);
    b.output_uint("s", &s);
    assert!(Layout::of(&b.build(), Scheme::Ideal).is_err());
}

/// Label sets shared across pieces: the glue makes `y = NOT x0` and `c = AND(x0, x0)` (a
/// copy of `x0`'s labels), and the regions take `AND(x0, y)`, `AND(x0, c)` and `AND(c, y)`,
/// degenerate gates whose inputs come from another piece. Under `prf` each piece must
/// garble them as the whole circuit's garbling does (the evaluator would otherwise learn
/// both labels of their outputs, docs/garbling.md §2.7 rule 3), and every scheme must
/// compute the function on every input.
#[test]
fn degenerate_gates_across_pieces_are_known_as_such() {
    let and = |a, b, out| Gate::And { a, b, out };
    let gates = vec![
        Gate::Inv { a: 0, out: 4 },
        and(0, 0, 5),
        and(1, 2, 6),
        // Region A.
        and(0, 4, 7),
        and(0, 5, 8),
        // Region B.
        and(5, 4, 9),
        and(6, 3, 10),
        // Glue.
        Gate::Xor {
            a: 8,
            b: 10,
            out: 11,
        },
        and(9, 11, 12),
    ];
    let group = |party, name: &str| InputGroup {
        party,
        len: 2,
        order: BitOrder::MsbFirst,
        name: name.into(),
    };
    let c = Circuit::new(
        13,
        vec![group(Party::Garbler, "g"), group(Party::Evaluator, "e")],
        vec![OutputGroup {
            wires: vec![7, 8, 9, 10, 12],
            order: BitOrder::MsbFirst,
            name: "o".into(),
        }],
        gates,
    )
    .unwrap()
    .with_sections(Sections::new(vec![vec![3, 5, 7]]).unwrap())
    .unwrap();
    let layout = Arc::new(Layout::cut(&c, Scheme::Prf, 1).unwrap());
    let whole = crate::schemes::prf::op_kinds(&c, None);
    let mut at = 0;
    for piece in layout.stages.iter().flat_map(|s| &s.pieces) {
        let kinds = crate::schemes::prf::op_kinds(&piece.circuit, piece.prf.as_ref());
        assert_eq!(kinds, whole[at..at + kinds.len()], "piece from gate {at}");
        at += kinds.len();
    }
    assert_eq!(at, whole.len());
    for scheme in SCHEMES {
        let layout = Arc::new(Layout::cut(&c, scheme, 1).unwrap());
        for x in 0..16u32 {
            let bits: Vec<bool> = (0..4).map(|i| x >> i & 1 == 1).collect();
            let out = run(&c, &layout, (2, 2), 7, &bits, u128::from(x));
            assert_eq!(out, c.eval_bits(&bits), "{scheme:?} {x}");
        }
    }
}

/// Once the evaluator has failed, it stays failed: no later bytes are read and no output
/// is given (a caller that fed on must not get labels of pieces that never ran).
#[test]
fn an_evaluator_that_failed_stays_failed() {
    let c = sectioned(3, 8);
    let layout = Arc::new(Layout::cut(&c, Scheme::Ideal, 1).unwrap());
    let backend = Backend::detect();
    let (labels, tables) = garbled(&layout, 5);
    let mut e = CoarseEvaluator::new(Arc::clone(&layout), &labels, backend, 0, 2);
    let mut bad = tables.clone();
    bad[0] = 0xff;
    assert!(matches!(e.feed(&bad[..8]), Err(EvalError::Frame(_))));
    assert!(matches!(e.feed(&tables[8..]), Err(EvalError::Frame(_))));
    assert!(matches!(e.output_labels(), Err(EvalError::Frame(_))));
}

/// Every built-in with parallel regions, small, garbled by regions under every scheme on a
/// piece per region: the function's output on random inputs.
#[test]
fn every_built_in_with_regions_computes_its_function() {
    let mut rng = ChaCha12Rng::seed_from_u64(7);
    for spec in [
        "biomatch:n=5,d=2,bits=8",
        "mexp:k=3,bits=5",
        "mvmul:m=3,k=3,bits=8",
        "mincut:nodes=6,bits=3,regions=4",
    ] {
        let c = transputation_circuits::library::load(spec).unwrap();
        assert!(c.sections().is_some(), "{spec} has regions");
        for scheme in SCHEMES {
            let layout = Arc::new(Layout::cut(&c, scheme, 1).unwrap());
            let bits: Vec<bool> = (0..c.n_inputs()).map(|_| rng.gen()).collect();
            let out = run(&c, &layout, (2, 2), 4096, &bits, rng.gen());
            assert_eq!(out, c.eval_bits(&bits), "{spec} {scheme:?}");
        }
    }
}
