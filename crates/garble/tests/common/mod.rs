//! Helpers shared by the integration tests: whole-stream garbling, evaluation in pieces,
//! and small hand-made circuits.

// Each test file uses a different subset.
#![allow(dead_code)]

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_circuits::{BitOrder, Circuit, Gate, InputGroup, OutputGroup, Party};
use transputation_core::aes::Backend;
use transputation_core::{prg::Prg, Block};
use transputation_garble::{EvalError, Garble, GarbleStart, Parallel, Scheme};

/// Everything one garbling produces.
pub struct Garbled {
    /// `[W^0, W^1]` of every input wire.
    pub inputs: Vec<[Block; 2]>,
    /// The whole table stream.
    pub stream: Vec<u8>,
    /// The decoding bits.
    pub decoding: Vec<bool>,
}

impl Garbled {
    /// The input labels of the values `bits`.
    pub fn encode(&self, bits: &[bool]) -> Vec<Block> {
        self.inputs
            .iter()
            .zip(bits)
            .map(|(l, &v)| l[usize::from(v)])
            .collect()
    }
}

/// A garbler of `circuit` with `Prg::new(seed)`, its input labels already drawn (returned
/// by wire), ready to garble.
pub fn garbler(
    scheme: Scheme,
    circuit: &Circuit,
    seed: u128,
) -> (Box<dyn Garble + '_>, Vec<[Block; 2]>) {
    let mut prg = Prg::new(Block(seed));
    let g = scheme.garbler(circuit, &mut prg, Backend::detect());
    let inputs = (0..circuit.n_inputs() as u32)
        .map(|w| g.input_labels(w))
        .collect();
    (g, inputs)
}

/// Garbles `circuit` with `Prg::new(seed)`, calling `garble` with `target` until done.
pub fn garble(scheme: Scheme, circuit: &Circuit, seed: u128, target: usize) -> Garbled {
    let (mut g, inputs) = garbler(scheme, circuit, seed);
    let mut stream = Vec::new();
    while g.garble(&mut stream, target) {}
    Garbled {
        inputs,
        stream,
        decoding: g.decoding(),
    }
}

/// Evaluates `stream` fed in pieces of `piece` bytes (the unused rest carried over, as a
/// network driver does); returns the output labels or the first error.
pub fn evaluate(
    scheme: Scheme,
    circuit: &Circuit,
    labels: &[Block],
    stream: &[u8],
    piece: usize,
) -> Result<Vec<Block>, EvalError> {
    let mut e = scheme.evaluator(circuit, labels, Backend::detect());
    let mut pending: Vec<u8> = Vec::new();
    for chunk in stream.chunks(piece.max(1)) {
        pending.extend_from_slice(chunk);
        let used = e.feed(&pending)?;
        pending.drain(..used);
    }
    if stream.is_empty() {
        e.feed(&[])?;
    }
    e.output_labels()
}

/// A circuit over `inputs` input wires (the first half the garbler's) with the given gates
/// and output wires.
pub fn circuit(inputs: u32, gates: Vec<Gate>, outputs: Vec<u32>) -> Circuit {
    let wires = inputs
        + gates
            .iter()
            .map(|g| g.output() + 1 - inputs)
            .max()
            .unwrap_or(0);
    Circuit::new(
        u64::from(wires),
        vec![
            InputGroup {
                party: Party::Garbler,
                len: inputs / 2,
                order: BitOrder::MsbFirst,
                name: String::new(),
            },
            InputGroup {
                party: Party::Evaluator,
                len: inputs - inputs / 2,
                order: BitOrder::MsbFirst,
                name: String::new(),
            },
        ],
        vec![OutputGroup {
            wires: outputs,
            order: BitOrder::MsbFirst,
            name: String::new(),
        }],
        gates,
    )
    .unwrap()
}

/// `n` lanes over inputs `a_i = i`, `b_i = n + i`: per lane an AND, an XOR, a NOT of the
/// AND and an AND of the XOR with the NOT, with every gate's output an output wire. AND
/// gates are separated by XOR and NOT gates, so garbler and evaluator must agree on gate
/// indices and the AND counter across gate kinds.
pub fn lanes(n: u32) -> Circuit {
    let mut gates = Vec::new();
    let mut outs = Vec::new();
    let mut next = 2 * n;
    for i in 0..n {
        let (a, b) = (i, n + i);
        let (and, xor, not, mix) = (next, next + 1, next + 2, next + 3);
        gates.push(Gate::And { a, b, out: and });
        gates.push(Gate::Xor { a, b, out: xor });
        gates.push(Gate::Inv { a: and, out: not });
        gates.push(Gate::And {
            a: xor,
            b: not,
            out: mix,
        });
        outs.extend([and, xor, not, mix]);
        next += 4;
    }
    circuit(2 * n, gates, outs)
}

/// `lanes` lanes of `prf`'s degenerate AND gates (`AND(x, x)`, `AND(x, NOT x)`, which it
/// garbles without cryptography, drawing fresh labels for the second kind) between
/// ordinary ones, over inputs `0..2·lanes`: the gates, the output wires, and the next free
/// wire.
pub fn degenerate_lanes(lanes: u32) -> (Vec<Gate>, Vec<u32>, u32) {
    let mut gates = Vec::new();
    let mut outs = Vec::new();
    let mut next = 2 * lanes;
    for i in 0..lanes {
        let (a, b) = (i, lanes + i);
        gates.push(Gate::And { a, b, out: next });
        gates.push(Gate::Inv { a, out: next + 1 });
        gates.push(Gate::And {
            a,
            b: next + 1,
            out: next + 2,
        });
        gates.push(Gate::And {
            a: b,
            b,
            out: next + 3,
        });
        gates.push(Gate::Xor {
            a: next + 2,
            b: next,
            out: next + 4,
        });
        outs.extend([next + 2, next + 3, next + 4]);
        next += 5;
    }
    (gates, outs, next)
}

/// What one garbling and evaluation gave.
#[derive(Debug, PartialEq)]
pub struct Run {
    pub inputs: Vec<[Block; 2]>,
    pub stream: Vec<u8>,
    pub decoding: Vec<bool>,
    pub outputs: Vec<Block>,
}

/// Garbles `c` as `g` says and evaluates it as `e` says, on random input bits, the tables
/// produced with the batch target `target` and fed in pieces of `piece` bytes.
pub fn run(
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
