//! `synthetic`: a random circuit with exactly the requested numbers of AND and XOR gates,
//! inputs, AND-depth and outputs.
//!
//! # Why
//! What the network carries in a garbled-circuit session depends on the circuit only through
//! its gate counts and input sizes: `32·AND` bytes of garbled tables for the half-gates
//! schemes, `32·AND + 16·XOR` for GLNP15, plus one label per garbler input bit and one OT per
//! evaluator input bit. The largest circuit of the Transputation paper (Brandt, Orlandi,
//! Shrishak, Shulman, "Optimal Transport Layer for Secure Computation", Table 2) is the
//! "Min-Cut 250,000" circuit of Gueron, Lindell, Nof and Pinkas (CCS 2015), which was never
//! published; `synthetic:and=999960,xor=2524920,inputs=250000` (the defaults) has its gate
//! counts, so its garbled tables are exactly the paper's 30.52 MiB (half gates) and
//! 69.04 MiB (GLNP15). The `mincut` built-in computes a real minimum cut of similar size.
//!
//! # Construction
//! Parameters: `A` = `and`, `X` = `xor`, `I` = `inputs` (per party), the requested `depth`
//! and `outputs`. The effective AND-depth is `D = 0` when `A = 0` and otherwise `depth`
//! clamped to `1..=A`; the effective output count is `O = min(outputs, 2I + A + X)`.
//!
//! Wires `0..I` are the garbler's input, `I..2I` the evaluator's; gate `i` writes wire
//! `2I + i`, so wires are numbered in creation order. There are no INV gates. With `D >= 1`
//! the gates form `D` levels, level `l = 1..=D` being
//! 1. `floor(l·A/D) − floor((l−1)·A/D)` AND gates (at least one), each with first input a
//!    uniformly chosen wire created in level `l − 1` (level 0 = all `2I` input wires). The
//!    `k`-th AND gate of the level takes as second input the `k`-th wire of the level's
//!    slice of the inputs, `floor((l−1)·2I/D) .. floor(l·2I/D)`, while the slice lasts (and
//!    that wire is not the first input); otherwise a uniformly chosen wire among the last
//!    `W` created before level `l` started, other than the first input;
//! 2. then `floor(l·X/D) − floor((l−1)·X/D)` XOR gates, each with first input a uniformly
//!    chosen wire created so far in level `l` and second input a uniformly chosen wire among
//!    the last `W` created, other than the first.
//!
//! `W = max(2·ceil((A+X)/D), 4096)`: about two levels. Wires are consumed soon after they
//! are made, as in circuits compiled from programs, so that the circuit measures garbling
//! rather than the latency of memory (uniform choices over millions of wires would make
//! every gate a cache miss); the input slices make every input bit matter when the levels
//! have enough AND gates (the defaults: 500 inputs and 999 or 1,000 AND gates per level).
//!
//! Every wire created in level `l` then has AND-depth exactly `l` (by induction: an AND of a
//! level `l − 1` wire with an older one; an XOR of a level `l` wire with any), so the circuit
//! has AND-depth exactly `D`, and level `l`'s AND gates are one AND level of `floor(A/D)` or
//! `ceil(A/D)` independent gates. With `D = 0` all `X` gates are XOR gates with both inputs
//! chosen like the XOR gates above, the first among the wires from the last `W` before the
//! first gate on. Because most wires are
//! XORs of earlier wires, wire values stay close to uniform even deep in the circuit.
//!
//! The choices come from SplitMix64 (Steele, Lea, Flood 2014) seeded from `(A, X, I, D)`:
//! the state starts at `0x5eed_c1dc_u64`; for each of the four values in order, it is XORed
//! into the state and the state replaced by the next output. A choice among `m` wires takes
//! one output `r` and picks `floor(r·m / 2^64)`; "other than `a`" picks among `m − 1` and
//! skips `a`. Per gate the first input is drawn, then the second. The circuit depends only
//! on `(A, X, I, D)`; `outputs` only selects how many of the last wires are outputs.
//!
//! # Two forms
//! Up to [`HELD_GATES`] gates (and whenever it has no levels), the circuit is *held*: built
//! in one pass into a vector allocated once, wire `c` numbered `c`. Larger (the paper-sized
//! default among them), it is *generated*
//! ([`Circuit::generated`]): the same gates, drawn by the same walk (module `generated`)
//! each time the circuit is read, with wire numbers reused once no later gate can read them,
//! so that a billion AND gates take a few MB (up to `and` = 10^9 and `xor` = 2.5·10^9, where
//! the held form would pass 2^31 wires). Both forms compute the same function with the same
//! gates in the same order, so they garble to the same tables; their digests differ.
//!
//! # Counts
//! The defaults give exactly 999,960 AND and 2,524,920 XOR gates, 0 INV, 250,000 input bits
//! per party, AND-depth 1,000 and 128 output bits.
//!
//! # Encoding
//! Hex, MSB-first groups (as [`SYNTHETIC`]`.encoding` says for `circuit list`): the garbler
//! gives the bits of wires `0..I` as one `I`-bit big-endian integer whose most significant
//! bit is wire 0; the evaluator the bits of wires `I..2I` the same way. The output group
//! "last wires" is the values of wires `2I + A + X − O .. 2I + A + X`, the first of them the
//! most significant bit.

mod generated;

use super::{Builtin, Param, Params};
use crate::circuit::{BitOrder, Circuit, Gate, InputGroup, OutputGroup, Party, WireId, MAX_WIRES};
use crate::encoding::{bits_to_hex, hex_to_bits};

pub(crate) static SYNTHETIC: Builtin = Builtin {
    name: "synthetic",
    summary: "random circuit with exactly the given AND/XOR counts, inputs and AND-depth \
              (defaults: the gate counts of the paper's MinCut, 999,960 AND, 2,524,920 XOR)",
    params: &[
        Param {
            name: "and",
            default: 999_960,
            min: 0,
            max: 1_000_000_000,
            doc: "number of AND gates",
        },
        Param {
            name: "xor",
            default: 2_524_920,
            min: 0,
            max: 2_500_000_000,
            doc: "number of XOR gates",
        },
        Param {
            name: "inputs",
            default: 250_000,
            // Held, 2 * 70e6 + 2e9 wires stay below the 2^31 wires a circuit may have;
            // larger circuits are generated (`check`).
            min: 1,
            max: 70_000_000,
            doc: "input bits of each party",
        },
        Param {
            name: "depth",
            default: 1000,
            min: 0,
            max: 1_000_000_000,
            doc: "AND-depth; clamped to 1..=and (0 when and = 0)",
        },
        Param {
            name: "outputs",
            default: 128,
            min: 1,
            max: 1 << 31,
            doc: "output bits: the last wires created; at most the number of wires",
        },
    ],
    encoding: "garbler: one hex string of `inputs` bits (input wires 0..I), one big-endian \
               integer whose most significant bit is wire 0; evaluator: the same for its `inputs` bits (wires \
               I..2I). Output, one group \"last wires\": the values of the last O wires \
               created, O = min(outputs, 2I + and + xor), the first of them the most \
               significant bit (gate i writes wire 2I + i).",
    build,
    reference,
    check: Some(check),
};

/// The effective parameters; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shape {
    and: u64,
    xor: u64,
    /// Input bits per party.
    inputs: u64,
    /// Effective AND-depth.
    depth: u64,
    /// Effective number of output bits.
    outputs: u64,
}

impl Shape {
    fn of(params: &Params) -> Shape {
        let and = params.get("and");
        let xor = params.get("xor");
        let inputs = params.get("inputs");
        let depth = if and == 0 {
            0
        } else {
            params.get("depth").clamp(1, and)
        };
        let outputs = params.get("outputs").min(2 * inputs + and + xor);
        Shape {
            and,
            xor,
            inputs,
            depth,
            outputs,
        }
    }

    fn wires(&self) -> u64 {
        2 * self.inputs + self.and + self.xor
    }

    /// Gates of `total` in level `l` (1-based) of `depth`.
    fn share(total: u64, l: u64, depth: u64) -> u64 {
        l * total / depth - (l - 1) * total / depth
    }

    /// How far back second inputs reach: the wires of about two levels, at least 4,096
    /// (64 KiB of labels, so the window stays in a core's cache while mixing enough).
    fn window(&self) -> u64 {
        (2 * (self.and + self.xor).div_ceil(self.depth.max(1))).max(4096)
    }

    /// The input wires that level `l`'s first AND gates read, one each.
    fn input_slice(&self, l: u64) -> std::ops::Range<u64> {
        let n = 2 * self.inputs;
        (l - 1) * n / self.depth..l * n / self.depth
    }
}

/// SplitMix64, the generator of the wire choices.
struct SplitMix64(u64);

impl SplitMix64 {
    fn seeded(shape: &Shape) -> Self {
        let mut rng = SplitMix64(0x5eed_c1dc);
        for v in [shape.and, shape.xor, shape.inputs, shape.depth] {
            rng.0 ^= v;
            rng.0 = rng.next();
        }
        rng
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number in `0..m`, `m >= 1`.
    fn below(&mut self, m: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(m)) >> 64) as u64
    }

    /// A number in `0..m` other than `a < m`, `m >= 2`.
    fn below_except(&mut self, m: u64, a: u64) -> u64 {
        let r = self.below(m - 1);
        if r >= a {
            r + 1
        } else {
            r
        }
    }

    /// A number in `lo..hi` other than `a` (which may lie outside the range).
    fn in_window(&mut self, lo: u64, hi: u64, a: u64) -> u64 {
        if (lo..hi).contains(&a) {
            lo + self.below_except(hi - lo, a - lo)
        } else {
            lo + self.below(hi - lo)
        }
    }
}

/// Circuits of more gates than this are generated as they are read (when they have
/// levels). Held, a gate costs 16 bytes, building it 14 ns, and planning it whole with the
/// exact slots of a held circuit 38 ns; generated, a gate costs nothing to keep and about
/// 19 ns to draw and plan, and is garbled within 4 % of the held form's speed
/// (`garble-bench`; its wires end at level boundaries, not at their last readers, so the
/// label tables hold a few more): at the paper's MinCut size (3.5 M gates) that halves
/// the wait of `run` (docs/BENCHMARKS.md).
/// Below this a circuit stays held, so that it can be read gate by gate
/// ([`Circuit::gates`]) and built once.
pub(crate) const HELD_GATES: u64 = 1 << 20;

fn build(params: &Params) -> Circuit {
    let shape = Shape::of(params);
    let held_fits = shape.wires() <= MAX_WIRES;
    if generated::fits_generated(&shape) && (shape.and + shape.xor > HELD_GATES || !held_fits) {
        return generated::circuit(shape);
    }
    held(shape)
}

/// The generated form of the circuit, whatever its size, if it has one (depth at least 1,
/// and few enough wire numbers).
pub(crate) fn generated_form(params: &Params) -> Option<Circuit> {
    let shape = Shape::of(params);
    generated::fits_generated(&shape).then(|| generated::circuit(shape))
}

/// What the bounds of each parameter cannot say: that the circuit has a form to take.
fn check(params: &Params) -> Result<(), String> {
    let shape = Shape::of(params);
    if shape.wires() <= MAX_WIRES || generated::fits_generated(&shape) {
        return Ok(());
    }
    Err(format!(
        "{} gates in {} levels: a circuit of more than 2^31 wires is generated level by \
         level, and levels of this size would need {} wire numbers at once (at most 2^31); \
         give a larger depth",
        shape.and + shape.xor,
        shape.depth,
        generated::generated_wires(&shape).map_or("all its".to_string(), |w| w.to_string()),
    ))
}

/// The held form: every gate in memory, wire `c` numbered `c`.
fn held(shape: Shape) -> Circuit {
    let w = |x: u64| x as WireId;
    let mut gates: Vec<Gate> = Vec::with_capacity((shape.and + shape.xor) as usize);
    let mut walk = generated::Walk::new(shape);
    while let Some(step) = walk.step() {
        gates.push(step.gate(w));
    }
    let (inputs, outputs) = groups(&shape, w);
    Circuit::new(shape.wires(), inputs, outputs, gates)
        .expect("the held form has at most 2^31 wires and the construction is valid")
}

/// The input groups (the garbler's wires `0..I`, the evaluator's `I..2I`) and the output
/// group (the last `O` wires created), wire `c` numbered `id(c)`.
fn groups(shape: &Shape, id: impl Fn(u64) -> WireId) -> (Vec<InputGroup>, Vec<OutputGroup>) {
    let group = |party, name: &str| InputGroup {
        party,
        len: shape.inputs as u32,
        order: BitOrder::MsbFirst,
        name: name.to_string(),
    };
    let outputs = OutputGroup {
        wires: (shape.wires() - shape.outputs..shape.wires())
            .map(id)
            .collect(),
        order: BitOrder::MsbFirst,
        name: "last wires".to_string(),
    };
    (
        vec![
            group(Party::Garbler, "garbler bits"),
            group(Party::Evaluator, "evaluator bits"),
        ],
        vec![outputs],
    )
}

/// Replays the generator and evaluates each bit as its gate is drawn.
fn reference(params: &Params, garbler: &str, evaluator: &str) -> String {
    let shape = Shape::of(params);
    let n_inputs = shape.inputs as usize;
    let mut value: Vec<bool> = Vec::with_capacity(shape.wires() as usize);
    value.extend(hex_to_bits(garbler, n_inputs, BitOrder::MsbFirst).expect("garbler input"));
    value.extend(hex_to_bits(evaluator, n_inputs, BitOrder::MsbFirst).expect("evaluator input"));

    let mut rng = SplitMix64::seeded(&shape);
    let window = shape.window() as usize;
    // The first input in `lo..hi`, then the second among the last `window` wires before
    // `end` other than the first (or the given input wire, if it is not the first).
    let mut pick = |lo: usize, hi: usize, end: usize, input: Option<usize>| -> (usize, usize) {
        let first = lo + rng.below((hi - lo) as u64) as usize;
        if let Some(i) = input.filter(|&i| i != first) {
            return (first, i);
        }
        let from = end.saturating_sub(window);
        let second = if (from..end).contains(&first) {
            let r = from + rng.below((end - from - 1) as u64) as usize;
            if r >= first {
                r + 1
            } else {
                r
            }
        } else {
            from + rng.below((end - from) as u64) as usize
        };
        (first, second)
    };
    if shape.depth == 0 {
        let from = value.len().saturating_sub(window);
        for _ in 0..shape.xor {
            let (x, y) = pick(from, value.len(), value.len(), None);
            value.push(value[x] ^ value[y]);
        }
    }
    let (mut level_start, mut level_end) = (0usize, value.len());
    let (mut ands_before, mut xors_before) = (0u64, 0u64);
    for l in 1..=shape.depth {
        let ands_through = l * shape.and / shape.depth;
        let xors_through = l * shape.xor / shape.depth;
        let start = value.len();
        let inputs = shape.input_slice(l);
        for k in 0..(ands_through - ands_before) as usize {
            let input = (inputs.start as usize + k < inputs.end as usize)
                .then_some(inputs.start as usize + k);
            let (x, y) = pick(level_start, level_end, start, input);
            value.push(value[x] & value[y]);
        }
        for _ in xors_before..xors_through {
            let (x, y) = pick(start, value.len(), value.len(), None);
            value.push(value[x] ^ value[y]);
        }
        (level_start, level_end) = (start, value.len());
        (ands_before, xors_before) = (ands_through, xors_through);
    }
    bits_to_hex(
        &value[value.len() - shape.outputs as usize..],
        BitOrder::MsbFirst,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::testing::check_against_reference;
    use crate::library::{build as build_spec, parse_spec};
    use crate::Stats;

    fn stats(spec: &str) -> Stats {
        Stats::of(&build_spec(spec).unwrap())
    }

    #[test]
    fn paper_spec_has_exactly_the_paper_counts() {
        let spec = "synthetic:and=999960,xor=2524920,inputs=250000";
        let start = std::time::Instant::now();
        let circuit = build_spec(spec).unwrap();
        eprintln!("{spec}: built in {:?}", start.elapsed());
        let s = Stats::of(&circuit);
        assert_eq!((s.and, s.xor, s.inv), (999_960, 2_524_920, 0));
        assert_eq!((s.garbler_inputs, s.evaluator_inputs), (250_000, 250_000));
        assert_eq!((s.and_depth, s.outputs), (1000, 128));
        // Generated (more than HELD_GATES gates): its wire numbers are reused; held, it
        // would have one wire per input and gate.
        assert!(circuit.is_generated());
        assert!(s.wires < 600_000, "{} wire numbers", s.wires);
        // 999,960 / 1,000 levels: 960 levels of 1,000 and 40 of 999.
        assert_eq!(s.max_and_width(), 1000);
        assert_eq!(s.and_level_widths.iter().filter(|&&n| n == 999).count(), 40);
        // The paper's Table 3 (MiB): half gates 30.52, GLNP15 69.04.
        let mib = |bytes: u64| bytes as f64 / f64::from(1 << 20);
        assert_eq!(format!("{:.2}", mib(32 * s.and)), "30.52");
        assert_eq!(format!("{:.2}", mib(32 * s.and + 16 * s.xor)), "69.04");
        // The defaults are the paper's spec.
        assert_eq!(build_spec("synthetic").unwrap(), circuit);
    }

    #[test]
    fn paper_spec_matches_reference() {
        check_against_reference("synthetic", 3);
    }

    #[test]
    fn small_parameter_sets_have_exact_counts_and_depths() {
        // (spec, and, xor, inputs per party, and-depth, outputs)
        let cases: &[(&str, u64, u64, u64, u32, u64)] = &[
            ("synthetic:and=10,xor=20,inputs=4,depth=3", 10, 20, 4, 3, 38),
            (
                "synthetic:and=1,xor=0,inputs=1,depth=1,outputs=1",
                1,
                0,
                1,
                1,
                1,
            ),
            ("synthetic:and=7,xor=3,inputs=2", 7, 3, 2, 7, 14),
            (
                "synthetic:and=100,xor=1,inputs=8,depth=100",
                100,
                1,
                8,
                100,
                117,
            ),
            (
                "synthetic:and=1000,xor=50,inputs=3,depth=1",
                1000,
                50,
                3,
                1,
                128,
            ),
            ("synthetic:and=0,xor=9,inputs=1", 0, 9, 1, 0, 11),
            ("synthetic:and=0,xor=0,inputs=5,outputs=3", 0, 0, 5, 0, 3),
            (
                "synthetic:and=5000,xor=12000,inputs=64,depth=37",
                5000,
                12000,
                64,
                37,
                128,
            ),
        ];
        for &(spec, and, xor, inputs, depth, outputs) in cases {
            let s = stats(spec);
            assert_eq!((s.and, s.xor, s.inv), (and, xor, 0), "{spec}");
            assert_eq!(
                (s.garbler_inputs, s.evaluator_inputs),
                (inputs, inputs),
                "{spec}"
            );
            assert_eq!((s.and_depth, s.outputs), (depth, outputs), "{spec}");
            assert_eq!(s.wires, 2 * inputs + and + xor, "{spec}");
        }
    }

    #[test]
    fn and_levels_are_even() {
        let s = stats("synthetic:and=5000,xor=12000,inputs=64,depth=37");
        assert_eq!(s.and_level_widths.len(), 37);
        assert!(s.and_level_widths.iter().all(|&n| n == 135 || n == 136));
    }

    #[test]
    fn depth_is_clamped_where_the_bounds_cannot_say() {
        assert_eq!(
            stats("synthetic:and=5,xor=3,inputs=2,depth=10").and_depth,
            5
        );
        assert_eq!(stats("synthetic:and=5,xor=3,inputs=2,depth=0").and_depth, 1);
        assert_eq!(stats("synthetic:and=0,xor=3,inputs=2,depth=7").and_depth, 0);
        assert!(parse_spec("synthetic:inputs=0").is_err());
        assert!(parse_spec("synthetic:inputs=70000001").is_err());
        assert!(parse_spec("synthetic:outputs=0").is_err());
        assert!(parse_spec("synthetic:and=1000000001").is_err());
    }

    #[test]
    fn is_deterministic_and_outputs_only_select_wires() {
        let a = build_spec("synthetic:and=300,xor=500,inputs=16,depth=20").unwrap();
        let b = build_spec("synthetic:and=300,xor=500,inputs=16,depth=20,outputs=5").unwrap();
        assert_eq!(a.gates(), b.gates());
        assert_eq!(b.outputs()[0].wires, (827..832).collect::<Vec<_>>());
        let c = build_spec("synthetic:and=300,xor=500,inputs=16,depth=21").unwrap();
        assert_ne!(a.gates(), c.gates());
        // No gate reads the same wire twice.
        for g in a.gates() {
            let (x, y) = g.inputs();
            assert_ne!(Some(x), y);
        }
    }

    #[test]
    fn matches_reference_on_small_parameters() {
        check_against_reference("synthetic:and=200,xor=500,inputs=16,depth=10", 300);
        check_against_reference("synthetic:and=40,xor=10,inputs=3,depth=40,outputs=60", 300);
        check_against_reference("synthetic:and=0,xor=30,inputs=2,outputs=34", 100);
        check_against_reference("synthetic:and=0,xor=0,inputs=7", 20);
        check_against_reference("synthetic:and=1,xor=0,inputs=1", 20);
        check_against_reference("synthetic:and=3000,xor=7000,inputs=100,depth=1", 50);
    }

    #[test]
    fn the_generated_form_computes_what_the_held_form_does() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(22);
        for spec in [
            "synthetic:and=3000,xor=7000,inputs=100,depth=30",
            "synthetic:and=200,xor=500,inputs=16,depth=10,outputs=300",
            "synthetic:and=5000,xor=100,inputs=4,depth=5000",
            "synthetic:and=20000,xor=50000,inputs=10,depth=400",
        ] {
            let (_, params) = parse_spec(spec).unwrap();
            let shape = Shape::of(&params);
            let (held, gen) = (held(shape), generated::circuit(shape));
            assert!(gen.is_generated() && !held.is_generated(), "{spec}");
            crate::circuit::check_ends(&gen);
            crate::circuit::check_ends(&held);
            let inputs: Vec<u64> = (0..held.n_inputs()).map(|_| rng.gen()).collect();
            assert_eq!(held.eval_words(&inputs), gen.eval_words(&inputs), "{spec}");
            let (h, g) = (Stats::of(&held), Stats::of(&gen));
            assert_eq!(
                (h.and, h.xor, h.and_depth),
                (g.and, g.xor, g.and_depth),
                "{spec}"
            );
            assert_eq!(h.and_level_widths, g.and_level_widths, "{spec}");
            assert_eq!(h.level_widths, g.level_widths, "{spec}");
            assert_ne!(held.digest(), gen.digest());
            // The content digest reads the gates: a held circuit's is its digest; a
            // generated one's is not its generator's name, and is the same every reading.
            assert_eq!(held.content_digest(), held.digest());
            assert_ne!(gen.content_digest(), gen.digest());
            assert_eq!(
                gen.content_digest(),
                generated::circuit(shape).content_digest()
            );
        }
        // Deep enough, the generated form keeps far fewer wire numbers than it has wires.
        let gen = build_spec("synthetic:and=20000000,xor=50000000,inputs=10,depth=20000").unwrap();
        assert!(gen.is_generated());
        assert!(gen.num_wires() < 30_000, "{} wire numbers", gen.num_wires());
    }

    #[test]
    fn a_billion_and_gates_are_generated_and_too_shallow_ones_refused() {
        let c = build_spec("synthetic:and=1000000000,xor=2500000000,inputs=1000").unwrap();
        assert!(c.is_generated());
        assert_eq!(c.num_gates(), 3_500_000_000);
        assert!(c.num_wires() < 20_000_000, "{} wire numbers", c.num_wires());
        assert_eq!(Stats::counts(&c).and, 1_000_000_000);
        let e = parse_spec("synthetic:and=1000000000,xor=2500000000,depth=1").unwrap_err();
        assert!(e.to_string().contains("give a larger depth"), "{e}");
    }

    #[test]
    fn outputs_are_not_constant() {
        // Deep AND chains would drive values to 0; the XOR levels keep them mixed.
        let circuit = check_against_reference("synthetic:and=2000,xor=5000,inputs=32", 1);
        let ones: u32 = {
            let inputs: Vec<u64> = (0..circuit.n_inputs() as u64)
                .map(|i| SplitMix64(i).next())
                .collect();
            circuit
                .eval_words(&inputs)
                .iter()
                .map(|w| w.count_ones())
                .sum()
        };
        let total = 64 * circuit.n_outputs() as u32;
        assert!(
            ones > total / 4 && ones < 3 * total / 4,
            "{ones} of {total}"
        );
    }
}
