//! Whole-garbler tests that need the garbler's internal labels: exhaustive gates with
//! forced permute bits (docs/garbling.md §7.1), label invariants on every wire (§7.2) and
//! single bit flips in the tables with an exact prediction of their effect. The helpers
//! are shared with `prf`'s tests.

use super::program::Packed;
use super::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_circuits::{
    library, BitOrder, Circuit, Gate, InputGroup, OutputGroup, Party, WireId,
};
use transputation_core::aes::Backend;
use transputation_core::prg::Prg;
use transputation_core::Block;

use crate::schemes::{Evaluate, Garble};

/// A circuit over inputs `a = 0` (garbler) and `b = 1` (evaluator) whose last gate's
/// output is the output.
pub(crate) fn two_input(gates: Vec<Gate>) -> Circuit {
    let out = gates.last().expect("a gate").output();
    let one = |party| InputGroup {
        party,
        len: 1,
        order: BitOrder::MsbFirst,
        name: String::new(),
    };
    Circuit::new(
        u64::from(out) + 1,
        vec![one(Party::Garbler), one(Party::Evaluator)],
        vec![OutputGroup {
            wires: vec![out],
            order: BitOrder::MsbFirst,
            name: String::new(),
        }],
        gates,
    )
    .unwrap()
}

/// A gate kind as a small circuit and its truth table.
pub(crate) struct Kind {
    pub(crate) name: &'static str,
    pub(crate) circuit: Circuit,
    pub(crate) f: fn(bool, bool) -> bool,
}

/// AND, XOR, NOT and the derived XNOR, NAND, OR (docs/garbling.md §1.2), plus the same gates
/// with the inputs in the other order.
pub(crate) fn kinds() -> Vec<Kind> {
    use Gate::{And, Inv, Xor};
    let kind = |name, gates, f| Kind {
        name,
        circuit: two_input(gates),
        f,
    };
    vec![
        kind("AND", vec![And { a: 0, b: 1, out: 2 }], |a, b| a & b),
        kind("AND(b,a)", vec![And { a: 1, b: 0, out: 2 }], |a, b| a & b),
        kind("XOR", vec![Xor { a: 0, b: 1, out: 2 }], |a, b| a ^ b),
        kind("XOR(b,a)", vec![Xor { a: 1, b: 0, out: 2 }], |a, b| a ^ b),
        kind("NOT a", vec![Inv { a: 0, out: 2 }], |a, _| !a),
        kind("NOT b", vec![Inv { a: 1, out: 2 }], |_, b| !b),
        kind(
            "XNOR",
            vec![Xor { a: 0, b: 1, out: 2 }, Inv { a: 2, out: 3 }],
            |a, b| !(a ^ b),
        ),
        kind(
            "NAND",
            vec![And { a: 0, b: 1, out: 2 }, Inv { a: 2, out: 3 }],
            |a, b| !(a & b),
        ),
        kind(
            "OR",
            vec![
                Inv { a: 0, out: 2 },
                Inv { a: 1, out: 3 },
                And { a: 2, b: 3, out: 4 },
                Inv { a: 4, out: 5 },
            ],
            |a, b| a | b,
        ),
        kind(
            "AND after NOT and XOR",
            vec![
                Inv { a: 0, out: 2 },
                Xor { a: 2, b: 1, out: 3 },
                And { a: 3, b: 2, out: 4 },
            ],
            |a, b| (!a ^ b) & !a,
        ),
    ]
}

/// The plain value of every wire.
pub(crate) fn wire_values(c: &Circuit, inputs: &[bool]) -> Vec<bool> {
    let mut v = vec![false; c.num_wires() as usize];
    v[..inputs.len()].copy_from_slice(inputs);
    for g in c.gates() {
        match *g {
            Gate::Xor { a, b, out } => v[out as usize] = v[a as usize] ^ v[b as usize],
            Gate::And { a, b, out } => v[out as usize] = v[a as usize] & v[b as usize],
            Gate::Inv { a, out } => v[out as usize] = !v[a as usize],
        }
    }
    v
}

/// Whether each gate's output reaches an output wire.
pub(crate) fn live_gates(c: &Circuit) -> Vec<bool> {
    let mut live = vec![false; c.num_wires() as usize];
    for o in c.outputs() {
        for &w in &o.wires {
            live[w as usize] = true;
        }
    }
    let mut gates = vec![false; c.gates().len()];
    for (i, g) in c.gates().iter().enumerate().rev() {
        if live[g.output() as usize] {
            gates[i] = true;
            let (a, b) = g.inputs();
            live[a as usize] = true;
            if let Some(b) = b {
                live[b as usize] = true;
            }
        }
    }
    gates
}

pub(crate) fn aes128() -> Circuit {
    library::load("aes128").unwrap()
}

/// Both hashes, behind one generic test body.
fn for_each_hash(mut test: impl FnMut(&str, &dyn Fn() -> Box<dyn HalfGateHash>)) {
    for backend in Backend::available() {
        test("ideal", &move || Box::new(Tccr::new(backend)));
        test("circular", &move || Box::new(LabelKeyed::new(backend)));
    }
}

impl HalfGateHash for Box<dyn HalfGateHash> {
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        self.as_ref().hash(xs, tweaks, out)
    }
}

/// Garbles `c` to the end; returns the garbler and the table stream.
fn garble<'c>(
    c: &'c Circuit,
    hash: Box<dyn HalfGateHash>,
    seed: u128,
    force: impl FnOnce(&mut HalfGatesGarbler<'c, Box<dyn HalfGateHash>>),
) -> (HalfGatesGarbler<'c, Box<dyn HalfGateHash>>, Vec<u8>) {
    let mut prg = Prg::new(Block(seed));
    let mut g = HalfGatesGarbler::new(c, hash, &mut prg);
    force(&mut g);
    let mut stream = Vec::new();
    while g.garble(&mut stream, 1 << 20) {}
    (g, stream)
}

fn evaluate<'c>(
    c: &'c Circuit,
    hash: Box<dyn HalfGateHash>,
    labels: &[Block],
    stream: &[u8],
) -> HalfGatesEvaluator<'c, Box<dyn HalfGateHash>> {
    let mut e = HalfGatesEvaluator::new(c, hash, labels);
    assert_eq!(e.feed(stream), Ok(stream.len()));
    e
}

/// The 16-byte ops and staged AND gates that programs too large for packing keep give the
/// packed program's tables and labels, garbling and evaluating.
#[test]
fn unpacked_programs_garble_and_evaluate_alike() {
    let c = library::load("aes128").unwrap();
    for_each_hash(|name, make| {
        let (packed, stream) = garble(&c, make(), 9, |g| assert!(g.packed.is_packed()));
        let (unpacked, again) = garble(&c, make(), 9, |g| g.packed = Packed::default());
        assert_eq!(again, stream, "{name}: tables");
        assert_eq!(unpacked.decoding(), packed.decoding(), "{name}: decoding");
        let labels: Vec<Block> = {
            let mut prg = Prg::new(Block(9));
            let g = HalfGatesGarbler::new(&c, make(), &mut prg);
            (0..c.n_inputs() as u32)
                .map(|w| g.input_labels(w)[0])
                .collect()
        };
        let mut e = HalfGatesEvaluator::new(&c, make(), &labels);
        let want = evaluate(&c, make(), &labels, &stream)
            .output_labels()
            .unwrap();
        e.packed = Packed::default();
        assert_eq!(e.feed(&stream), Ok(stream.len()));
        assert_eq!(e.output_labels().unwrap(), want, "{name}: evaluation");
    });
}

#[test]
fn every_gate_kind_exhaustive_with_forced_permute_bits() {
    // §7.1: for all (πa, πb) and (va, vb), the evaluator's label on every wire is the
    // garbler's label of the wire's value, byte for byte.
    for_each_hash(|name, make| {
        for kind in kinds() {
            let c = &kind.circuit;
            for pi in 0..4u128 {
                let (pa, pb) = (pi & 1 == 1, pi & 2 == 2);
                let (g, stream) = garble(c, make(), 100 + pi, |g| {
                    g.zero[0] = g.zero[0].with_lsb(pa);
                    g.zero[1] = g.zero[1].with_lsb(pb);
                });
                assert_eq!(g.input_labels(0)[0].lsb(), pa);
                assert_eq!(g.input_labels(1)[0].lsb(), pb);
                for x in 0..4 {
                    let (va, vb) = (x & 1 == 1, x & 2 == 2);
                    let labels = [
                        g.input_labels(0)[usize::from(va)],
                        g.input_labels(1)[usize::from(vb)],
                    ];
                    let e = evaluate(c, make(), &labels, &stream);
                    let values = wire_values(c, &[va, vb]);
                    for (w, &v) in values.iter().enumerate() {
                        let want = g.zero[w] ^ g.delta.select(v);
                        assert_eq!(
                            e.labels[w], want,
                            "{name} {}: πa={pa} πb={pb} a={va} b={vb}, wire {w}",
                            kind.name
                        );
                    }
                    let out = c.outputs()[0].wires[0] as usize;
                    assert_eq!(values[out], (kind.f)(va, vb));
                    assert_eq!(
                        crate::decode(&e.output_labels().unwrap(), &g.decoding()),
                        vec![(kind.f)(va, vb)]
                    );
                }
            }
        }
    });
}

#[test]
fn labels_on_every_wire_of_aes128() {
    // §7.2: lsb(Δ) = 1; every wire's labels are W0 and W0 ⊕ Δ (so lsb(W0) ≠ lsb(W1)),
    // and the evaluator holds exactly the label of the wire's value; XOR and NOT are
    // free-XOR; the decoding bit is lsb(W0).
    let c = aes128();
    let mut rng = ChaCha12Rng::seed_from_u64(1);
    for_each_hash(|name, make| {
        for seed in 0..3 {
            let (g, stream) = garble(&c, make(), seed, |_| {});
            assert!(g.delta().lsb(), "{name}: lsb(Δ)");
            let x: Vec<bool> = (0..c.n_inputs()).map(|_| rng.gen()).collect();
            let labels: Vec<Block> = x
                .iter()
                .enumerate()
                .map(|(w, &v)| {
                    let l = g.input_labels(w as u32);
                    assert_eq!(l[1] ^ l[0], g.delta(), "{name}: input {w}");
                    assert_ne!(l[0].lsb(), l[1].lsb());
                    l[usize::from(v)]
                })
                .collect();
            let e = evaluate(&c, make(), &labels, &stream);
            let values = wire_values(&c, &x);
            for (w, &v) in values.iter().enumerate() {
                assert_eq!(
                    e.labels[w],
                    g.zero[w] ^ g.delta().select(v),
                    "{name}: wire {w}"
                );
            }
            for gate in c.gates() {
                match *gate {
                    Gate::Xor { a, b, out } => assert_eq!(
                        g.zero[out as usize],
                        g.zero[a as usize] ^ g.zero[b as usize]
                    ),
                    Gate::Inv { a, out } => {
                        assert_eq!(g.zero[out as usize], g.zero[a as usize] ^ g.delta())
                    }
                    Gate::And { .. } => {}
                }
            }
            let outputs = &c.outputs()[0].wires;
            let want: Vec<bool> = outputs.iter().map(|&w| g.zero[w as usize].lsb()).collect();
            assert_eq!(g.decoding(), want, "{name}");
        }
    });
}

#[test]
fn flipped_table_bits_change_exactly_the_used_ciphertexts() {
    // A flipped bit in TG (TE) reaches the evaluator iff the signal bit of its a (b)
    // input is 1 (§3.2); then the output labels must change (every AES-128 gate whose
    // output is live reaches an output); otherwise they must not. No flip may panic.
    let c = aes128();
    let live = live_gates(&c);
    let ands: Vec<(usize, WireId, WireId)> = c
        .gates()
        .iter()
        .enumerate()
        .filter_map(|(i, g)| match *g {
            Gate::And { a, b, .. } => Some((i, a, b)),
            _ => None,
        })
        .collect();
    let mut rng = ChaCha12Rng::seed_from_u64(2);
    for_each_hash(|name, make| {
        let (g, stream) = garble(&c, make(), 7, |_| {});
        assert_eq!(stream.len(), 32 * ands.len());
        let x: Vec<bool> = (0..c.n_inputs()).map(|_| rng.gen()).collect();
        let labels: Vec<Block> = (0..c.n_inputs())
            .map(|w| g.input_labels(w as u32)[usize::from(x[w])])
            .collect();
        let honest = evaluate(&c, make(), &labels, &stream);
        let honest_out = honest.output_labels().unwrap();
        let (mut used, mut unused) = (0, 0);
        let mut positions: Vec<usize> = (0..200)
            .map(|_| rng.gen_range(0..8 * stream.len()))
            .collect();
        positions.extend([0, 8 * stream.len() - 1]);
        for bit in positions {
            let byte = bit / 8;
            let (gate, a, b) = ands[byte / 32];
            let in_tg = byte % 32 < 16;
            let signal = honest.labels[if in_tg { a } else { b } as usize].lsb();
            let expect = signal && live[gate];
            let mut bad = stream.clone();
            bad[byte] ^= 1 << (bit % 8);
            let out = evaluate(&c, make(), &labels, &bad).output_labels().unwrap();
            assert_eq!(
                out != honest_out,
                expect,
                "{name}: bit {bit} (gate {gate}, {}) changed the output labels: {}",
                if in_tg { "TG" } else { "TE" },
                out != honest_out
            );
            if expect {
                used += 1;
            } else {
                unused += 1;
            }
        }
        assert!(
            used > 50 && unused > 50,
            "{name}: {used} used, {unused} unused"
        );
    });
}
