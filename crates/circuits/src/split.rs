//! Splitting a circuit into independent parts, for inter-party parallelism (IPP).
//!
//! Buescher and Katzenbeisser ("Faster Secure Computation through Automatic
//! Parallelization", USENIX Security 2015, §5.1) observe that a functionality made of
//! independent sub-functionalities `f = f_0 ‖ f_1 ‖ …` can be computed by independent
//! executions of Yao's protocol, one per group of them, without weakening semi-honest
//! security (sequential and parallel composition, their reference 12, Hazay–Lindell), and
//! that the parties may then take *opposite* roles in the two executions, so that both
//! garble, both evaluate and both directions of the link carry tables. This module finds
//! such a decomposition in any circuit (the paper's "independence analysis", its Figure 3b)
//! and builds the part circuits; `transputation-2pc` runs them.
//!
//! Two gates are in the same *component* when one reads, directly or through gates of the
//! component, what the other wrote, where only wires that depend on an AND gate count. The
//! others, *free* wires (inputs, and XOR or INV gates of free wires only: constants, shared
//! linear pre-processing), cost no garbled table, so every part that reads one computes its
//! own copy. A part is a set of components, chosen so that the parts' AND gates are as even
//! as the components allow (largest first, each to the lightest part). A part circuit keeps
//! its gates in their original order, only the input wires it reads (each input group's used
//! wires, in order, as one group), and its output bits in the original order of the output
//! groups. Part `i` is garbled by [`Split::garbler_of`]`(i)`: part 0 by the garbler, part 1
//! by the evaluator, whose input groups are therefore owned by the swapped party in part 1's
//! circuit.
//!
//! The gate indices of a part differ from the original's: each part is its own session
//! with its own keys, so the tweaks are unique within it (docs/garbling.md §1.2).

pub use crate::carve::InputSource;
use crate::carve::{find, input_of, Shape};
use crate::circuit::{Circuit, CircuitError, Gate, Party, WireId};

/// Why a circuit could not be split.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SplitError {
    /// Fewer components with AND gates than parts asked for.
    #[error(
        "the circuit has {components} independent part(s) with AND gates, not the {parts} \
         asked for: inter-party parallelism needs a circuit of independent sub-circuits \
         (such as mexp or mvmul)"
    )]
    TooFewComponents {
        /// Components with at least one AND gate.
        components: usize,
        /// Parts asked for.
        parts: usize,
    },
    /// The circuit is generated as it is read (a large `synthetic`, `mincut`): splitting
    /// needs its gates held.
    #[error(
        "the circuit is generated as it is read (a synthetic circuit above 2^20 gates, or \
         mincut), and inter-party parallelism needs one held in memory to split; those \
         circuits are one piece anyway"
    )]
    Generated,
    /// Only two parts (one per party) are supported.
    #[error("a circuit splits into 2 parts (one garbled by each party), not {0}")]
    Parts(usize),
    /// A part circuit is not a valid circuit (a bug if it happens; kept as an error).
    #[error("part {part} is not a valid circuit: {source}")]
    Part {
        /// The part.
        part: usize,
        /// What is wrong with it.
        source: CircuitError,
    },
}

/// One part of a [`Split`]: a circuit and how it maps to the original.
#[derive(Clone, Debug)]
pub struct Part {
    /// The part's circuit; its input groups are owned by the parties of this part's session
    /// (swapped in a part the original evaluator garbles).
    pub circuit: Circuit,
    /// For each input wire of the part circuit, the original bit it takes.
    pub inputs: Vec<InputSource>,
    /// For each output bit of the part circuit, its position among the original output bits.
    pub outputs: Vec<usize>,
    /// AND gates of the part.
    pub and_gates: u64,
    /// Independent components in the part.
    pub components: usize,
}

impl Part {
    /// The part circuit's input bits owned by `party` of the *original* circuit, taken
    /// from `own`, that party's original input bits (in the part circuit's wire order).
    pub fn input_of(&self, party: Party, own: &[bool]) -> Vec<bool> {
        input_of(&self.inputs, party, own)
    }
}

/// A circuit split into independent parts (see the module documentation).
#[derive(Clone, Debug)]
pub struct Split {
    /// The parts, part 0 first.
    pub parts: Vec<Part>,
    /// Output bits of the original circuit.
    pub n_outputs: usize,
}

impl Split {
    /// Splits `circuit` into `parts` parts; `parts` must be 2.
    ///
    /// # Errors
    /// [`SplitError::TooFewComponents`] if the circuit has fewer independent components
    /// with AND gates than parts; [`SplitError::Generated`] for a circuit generated as it
    /// is read.
    pub fn of(circuit: &Circuit, parts: usize) -> Result<Split, SplitError> {
        if parts != 2 {
            return Err(SplitError::Parts(parts));
        }
        if circuit.is_generated() {
            return Err(SplitError::Generated);
        }
        let held = circuit;
        let mut graph = Components::of(held);
        let (assign, ands, counts) = graph.balance(parts)?;
        let part_of = graph.parts_of_wires(&assign);
        // The union-find is done with: only which wires are free is read on.
        let Components { free, .. } = graph;
        // The parts are built side by side: each reads the whole circuit.
        let (free, part_of) = (&free, &part_of);
        let built: Vec<_> = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..parts)
                .map(|p| scope.spawn(move || build_part(held, free, part_of, p)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)))
                .collect()
        });
        let parts = built
            .into_iter()
            .enumerate()
            .map(|(p, b)| {
                b.map(|(circuit, inputs, outputs)| Part {
                    circuit,
                    inputs,
                    outputs,
                    and_gates: ands[p],
                    components: counts[p],
                })
                .map_err(|source| SplitError::Part { part: p, source })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Split {
            parts,
            n_outputs: held.n_outputs(),
        })
    }

    /// The party (of the original circuit) that garbles part `i`.
    pub fn garbler_of(i: usize) -> Party {
        if i.is_multiple_of(2) {
            Party::Garbler
        } else {
            Party::Evaluator
        }
    }

    /// The original circuit's output bits from each part's output bits, parts in order.
    ///
    /// # Panics
    /// If a part's output has another length than its circuit's outputs.
    pub fn merge_outputs(&self, outputs: &[Vec<bool>]) -> Vec<bool> {
        let mut all = vec![false; self.n_outputs];
        for (part, bits) in self.parts.iter().zip(outputs) {
            assert_eq!(part.outputs.len(), bits.len(), "a part's output length");
            for (&at, &bit) in part.outputs.iter().zip(bits) {
                all[at] = bit;
            }
        }
        all
    }
}

/// The circuit's components: a union-find over its wires that depend on an AND gate.
struct Components {
    /// Wires that depend on no AND gate (inputs included).
    free: Vec<bool>,
    /// Union-find parents; meaningful for non-free wires.
    parent: Vec<u32>,
    /// For a root, its component's index (`u32::MAX` for other wires).
    index: Vec<u32>,
    /// AND gates per component.
    ands: Vec<u64>,
}

impl Components {
    fn of(c: &Circuit) -> Components {
        let n = c.num_wires() as usize;
        let mut free = vec![false; n];
        free[..c.n_inputs()].fill(true);
        let mut parent: Vec<u32> = (0..n as u32).collect();
        for g in c.gates() {
            let (a, b) = g.inputs();
            let out = g.output();
            let inputs_free = free[a as usize] && b.is_none_or(|b| free[b as usize]);
            if inputs_free && !matches!(g, Gate::And { .. }) {
                free[out as usize] = true;
                continue;
            }
            // `out` is new: it joins its first non-free input's component, which then
            // merges with the other's.
            let mut joined = None;
            for w in std::iter::once(a).chain(b) {
                if free[w as usize] {
                    continue;
                }
                match joined {
                    None => {
                        let r = find(&mut parent, w);
                        parent[out as usize] = r;
                        joined = Some(r);
                    }
                    Some(r) => union(&mut parent, r, w),
                }
            }
        }
        let mut index = vec![u32::MAX; n];
        let mut ands = Vec::new();
        for g in c.gates() {
            if let Gate::And { out, .. } = *g {
                let r = find(&mut parent, out) as usize;
                if index[r] == u32::MAX {
                    index[r] = ands.len() as u32;
                    ands.push(0);
                }
                ands[index[r] as usize] += 1;
            }
        }
        Components {
            free,
            parent,
            index,
            ands,
        }
    }

    /// Each non-free wire's part (`assign`: each component's); `u8::MAX` for free wires
    /// and for wires of components without AND gates (which go with part 0).
    fn parts_of_wires(&mut self, assign: &[usize]) -> Vec<u8> {
        (0..self.parent.len() as u32)
            .map(|w| {
                if self.free[w as usize] {
                    return u8::MAX;
                }
                match self.index[find(&mut self.parent, w) as usize] {
                    u32::MAX => 0,
                    i => assign[i as usize] as u8,
                }
            })
            .collect()
    }

    /// Each component's part (largest first, each to the part with the fewest AND gates),
    /// and each part's AND gates and components.
    #[allow(clippy::type_complexity)]
    fn balance(&self, parts: usize) -> Result<(Vec<usize>, Vec<u64>, Vec<usize>), SplitError> {
        if self.ands.len() < parts {
            return Err(SplitError::TooFewComponents {
                components: self.ands.len(),
                parts,
            });
        }
        let mut order: Vec<usize> = (0..self.ands.len()).collect();
        order.sort_by_key(|&i| (std::cmp::Reverse(self.ands[i]), i));
        let mut assign = vec![0; self.ands.len()];
        let mut load = vec![0u64; parts];
        let mut counts = vec![0usize; parts];
        for i in order {
            let p = (0..parts).min_by_key(|&p| (load[p], p)).expect("parts > 0");
            assign[i] = p;
            load[p] += self.ands[i];
            counts[p] += 1;
        }
        Ok((assign, load, counts))
    }
}

fn union(parent: &mut [u32], a: u32, b: u32) {
    let (ra, rb) = (find(parent, a), find(parent, b));
    if ra != rb {
        // The larger number under the smaller: roots stay stable-ish, no rank needed for
        // the near-linear chains circuits make (path halving keeps them short).
        let (lo, hi) = if ra < rb { (ra, rb) } else { (rb, ra) };
        parent[hi as usize] = lo;
    }
}

/// Part `p`'s circuit: its components' gates (`part_of` gives each non-free wire's part),
/// the free gates and inputs they read, and its output bits (a free output bit goes with
/// part 0); with the input map and each output bit's position among the original's.
fn build_part(
    c: &Circuit,
    free: &[bool],
    part_of: &[u8],
    p: usize,
) -> Result<(Circuit, Vec<InputSource>, Vec<usize>), CircuitError> {
    let mine = |w: WireId| {
        if free[w as usize] {
            p == 0
        } else {
            usize::from(part_of[w as usize]) == p
        }
    };
    let keep: Vec<bool> = c
        .gates()
        .iter()
        .map(|g| !free[g.output() as usize] && mine(g.output()))
        .collect();
    let mut positions = Vec::new();
    let mut at = 0usize;
    let mut outputs = Vec::new();
    for o in c.outputs() {
        let mut wires = Vec::new();
        for &w in &o.wires {
            if mine(w) {
                wires.push(w);
                positions.push(at);
            }
            at += 1;
        }
        outputs.push((o.name.clone(), wires));
    }
    let shape = Shape {
        keep: &keep,
        given: &[],
        outputs,
        blind: false,
        swap: Split::garbler_of(p) == Party::Evaluator,
    };
    let (circuit, inputs) = shape.build(c, free)?;
    Ok((circuit, inputs, positions))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::encoding::encode_party_input;
    use crate::library;
    use crate::{BitOrder, InputGroup, OutputGroup};
    use rand::{Rng, SeedableRng};

    /// Evaluates `c` and its split on the same random inputs and compares.
    fn same_function(c: &Circuit, seed: u64) -> Split {
        let split = Split::of(c, 2).unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let own: Vec<Vec<bool>> = [Party::Garbler, Party::Evaluator]
            .iter()
            .map(|&p| (0..c.party_input_bits(p)).map(|_| rng.gen()).collect())
            .collect();
        let mut all = Vec::new();
        let mut next = [0usize; 2];
        for g in c.inputs() {
            let o = usize::from(g.party == Party::Evaluator);
            all.extend(&own[o][next[o]..next[o] + g.len as usize]);
            next[o] += g.len as usize;
        }
        let want = c.eval_bits(&all);
        let outs: Vec<Vec<bool>> = split
            .parts
            .iter()
            .map(|part| {
                let bits: Vec<bool> = part
                    .inputs
                    .iter()
                    .map(|s| own[usize::from(s.party == Party::Evaluator)][s.index as usize])
                    .collect();
                part.circuit.eval_bits(&bits)
            })
            .collect();
        assert_eq!(split.merge_outputs(&outs), want);
        split
    }

    #[test]
    fn mvmul_splits_into_its_rows_and_computes_the_same() {
        let c = library::load("mvmul:m=4,k=3,bits=8").unwrap();
        let split = same_function(&c, 1);
        let ands: Vec<u64> = split.parts.iter().map(|p| p.and_gates).collect();
        assert_eq!(ands[0], ands[1], "four equal rows split two and two");
        assert_eq!(ands[0] + ands[1], crate::Stats::of(&c).and);
        assert_eq!(split.parts[0].components, 2);
        // Part 1 is garbled by the original evaluator: its input groups change hands.
        let p1 = &split.parts[1].circuit;
        assert!(p1
            .inputs()
            .iter()
            .any(|g| g.party == Party::Garbler && g.name == "vector s"));
    }

    #[test]
    fn mexp_splits_and_computes_the_same_on_many_inputs() {
        let c = library::load("mexp:k=3,bits=6").unwrap();
        for seed in 0..20 {
            same_function(&c, seed);
        }
    }

    #[test]
    fn the_parts_take_the_parties_bits_by_their_encoding() {
        let c = library::load("mvmul:m=2,k=2,bits=4").unwrap();
        let split = Split::of(&c, 2).unwrap();
        let g = encode_party_input(&c, Party::Garbler, "1234").unwrap();
        let e = encode_party_input(&c, Party::Evaluator, "56").unwrap();
        let outs: Vec<Vec<bool>> = split
            .parts
            .iter()
            .enumerate()
            .map(|(i, part)| {
                // The part's garbler-side bits are its garbler's own original bits.
                let garbler = Split::garbler_of(i);
                let other = garbler.other();
                let (gb, eb) = (
                    part.input_of(garbler, if i == 0 { &g } else { &e }),
                    part.input_of(other, if i == 0 { &e } else { &g }),
                );
                let mut bits = Vec::new();
                let (mut gi, mut ei) = (gb.into_iter(), eb.into_iter());
                for group in part.circuit.inputs() {
                    let src = if group.party == Party::Garbler {
                        &mut gi
                    } else {
                        &mut ei
                    };
                    bits.extend(src.by_ref().take(group.len as usize));
                }
                part.circuit.eval_bits(&bits)
            })
            .collect();
        let merged = split.merge_outputs(&outs);
        assert_eq!(
            crate::encoding::decode_outputs(&c, &merged),
            c.eval_hex("1234", "56").unwrap()
        );
    }

    #[test]
    fn a_circuit_of_one_component_is_refused() {
        let c = library::load("aes128").unwrap();
        let e = Split::of(&c, 2).unwrap_err();
        assert!(
            matches!(e, SplitError::TooFewComponents { components: 1, .. }),
            "{e}"
        );
        assert!(e.to_string().contains("independent"));
    }

    #[test]
    fn free_wires_are_copied_into_every_part_that_reads_them() {
        // Two ANDs of (x XOR y) with separate inputs, and an output that is free.
        let c = Circuit::new(
            8,
            vec![
                InputGroup {
                    party: Party::Garbler,
                    len: 2,
                    order: BitOrder::MsbFirst,
                    name: "x".into(),
                },
                InputGroup {
                    party: Party::Evaluator,
                    len: 2,
                    order: BitOrder::MsbFirst,
                    name: "y".into(),
                },
            ],
            vec![OutputGroup {
                wires: vec![5, 6, 7],
                order: BitOrder::MsbFirst,
                name: "o".into(),
            }],
            vec![
                Gate::Xor { a: 0, b: 2, out: 4 },
                Gate::And { a: 4, b: 1, out: 5 },
                Gate::And { a: 4, b: 3, out: 6 },
                Gate::Inv { a: 4, out: 7 },
            ],
        )
        .unwrap();
        let split = same_function(&c, 3);
        assert_eq!(split.parts[0].circuit.gate_counts()[0], 1);
        assert_eq!(split.parts[1].circuit.gate_counts()[0], 1);
        for seed in 0..16 {
            same_function(&c, seed);
        }
    }

    #[test]
    fn a_generated_circuit_is_refused_before_it_is_read() {
        let c = library::load("synthetic:and=2000000,xor=0,inputs=64").unwrap();
        assert!(c.is_generated());
        assert!(matches!(Split::of(&c, 2), Err(SplitError::Generated)));
    }

    /// A random circuit of `k` independent pieces over shared inputs, their gates
    /// interleaved, with output groups that mix the pieces, free wires and inputs.
    fn pieces(k: usize, seed: u64) -> Circuit {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let (ng, ne) = (rng.gen_range(1..6u32), rng.gen_range(1..6u32));
        let n_in = ng + ne;
        let mut next = n_in;
        // Each piece's wires so far (inputs are shared, free).
        let mut own: Vec<Vec<WireId>> = vec![Vec::new(); k];
        let mut free: Vec<WireId> = (0..n_in).collect();
        let mut gates = Vec::new();
        let pick = |rng: &mut rand::rngs::StdRng, own: &[WireId], free: &[WireId]| {
            if !own.is_empty() && rng.gen_bool(0.7) {
                own[rng.gen_range(0..own.len())]
            } else {
                free[rng.gen_range(0..free.len())]
            }
        };
        for i in 0..rng.gen_range(k * 3..k * 12) {
            let out = next;
            next += 1;
            if i >= k && rng.gen_bool(0.15) {
                // A free gate: XOR or INV of free wires.
                let a = free[rng.gen_range(0..free.len())];
                let b = free[rng.gen_range(0..free.len())];
                gates.push(if rng.gen_bool(0.5) {
                    Gate::Xor { a, b, out }
                } else {
                    Gate::Inv { a, out }
                });
                free.push(out);
                continue;
            }
            // The first k gates start the k pieces.
            let p = if i < k { i } else { rng.gen_range(0..k) };
            let a = pick(&mut rng, &own[p], &free);
            let b = pick(&mut rng, &own[p], &free);
            // A piece's first gate is an AND, so every piece has one.
            gates.push(if own[p].is_empty() || rng.gen_bool(0.5) {
                Gate::And { a, b, out }
            } else {
                Gate::Xor { a, b, out }
            });
            own[p].push(out);
        }
        let mut wires: Vec<WireId> = own.iter().filter_map(|w| w.last().copied()).collect();
        wires.push(free[rng.gen_range(0..free.len())]);
        wires.push(rng.gen_range(0..n_in));
        wires.push(wires[0]);
        let (a, b) = wires.split_at(wires.len() / 2);
        Circuit::new(
            u64::from(next),
            vec![
                InputGroup {
                    party: Party::Garbler,
                    len: ng,
                    order: BitOrder::MsbFirst,
                    name: "g".into(),
                },
                InputGroup {
                    party: Party::Evaluator,
                    len: ne,
                    order: BitOrder::MsbFirst,
                    name: "e".into(),
                },
            ],
            vec![
                OutputGroup {
                    wires: b.to_vec(),
                    order: BitOrder::MsbFirst,
                    name: "o1".into(),
                },
                OutputGroup {
                    wires: a.to_vec(),
                    order: BitOrder::MsbFirst,
                    name: "o2".into(),
                },
            ],
            gates,
        )
        .unwrap()
    }

    proptest::proptest! {
        #[test]
        fn random_independent_pieces_split_and_compute_the_same(k in 2usize..7, seed: u64) {
            let c = pieces(k, seed);
            let split = same_function(&c, seed ^ 1);
            let ands = crate::Stats::of(&c).and;
            proptest::prop_assert_eq!(split.parts[0].and_gates + split.parts[1].and_gates, ands);
            let in_parts: u64 = split.parts.iter().map(|p| p.circuit.gate_counts()[0]).sum();
            proptest::prop_assert_eq!(in_parts, ands);
            for seed in 0..4 {
                same_function(&c, seed);
            }
        }
    }

    #[test]
    fn only_two_parts() {
        let c = library::load("mvmul:m=4,k=3,bits=8").unwrap();
        assert!(matches!(Split::of(&c, 3), Err(SplitError::Parts(3))));
    }
}
