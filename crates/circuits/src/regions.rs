//! Splitting a circuit whose independent regions feed sequential code: inter-party
//! parallelism for *mixed* functionalities (Buescher–Katzenbeisser, USENIX Security 2015,
//! §5.2, "transferring roles").
//!
//! [`crate::Split`] needs a circuit of independent pieces. Most useful circuits are not: a
//! minimum over many distances (`biomatch`) joins every distance computation into one piece
//! at its end. Here the circuit is cut in three: two *regions*, each a set of independent
//! pieces, and the *glue*, the gates that join large pieces and everything after them. The
//! garbler garbles region 0 for the evaluator while the evaluator garbles region 1 for the
//! garbler; then the garbler garbles the glue.
//!
//! Values cross from the regions to the glue as XOR shares, as the paper's protocol has
//! them: every output bit `o` of a region leaves it as `o ⊕ r`, `r` a fresh input bit of
//! that region's garbler (drawn at random for this computation), and only the region's
//! evaluator learns `o ⊕ r` (the session's output for the evaluator alone). Each party thus
//! holds one share of each crossing bit, uniformly random on its own. The glue takes the
//! garbler's shares as garbler input and the evaluator's as evaluator input (by oblivious
//! transfer) and XORs them back (free) before its first gate, so that no party learns a
//! crossing value; its outputs are the circuit's. (Demmler et al.'s variant, which uses the
//! point-and-permute bits as the blinding, saves the blinding inputs; they cost nothing here,
//! as a garbler's own input labels come from one seed.)
//!
//! **Finding the glue.** The gates are read in order with a union-find over pieces, as in
//! [`crate::Split`]; a gate that would join two pieces of at least `T` AND gates each is glue
//! instead, and so is every gate that reads glue. `T` starts at half the circuit's AND gates
//! and halves until the pieces split into two regions of which the lighter has at least 30 %
//! of the pieces' AND gates, with at most 20 % of all AND gates in the glue: the coarsest
//! cut that balances, so that the fewest bits cross.

use crate::carve::{find, input_of, InputSource, Shape};
use crate::circuit::{Circuit, Gate, Party, WireId};
use crate::split::SplitError;

/// One region or the glue: a circuit and where its inputs come from.
#[derive(Clone, Debug)]
pub struct RegionPart {
    /// The circuit: its input groups are the original groups it reads (parties swapped in a
    /// region the evaluator garbles), then for a region the *blinding* group (its garbler's,
    /// one bit per output), for the glue the garbler's shares then the evaluator's.
    pub circuit: Circuit,
    /// For each input wire of the original groups, the original bit it takes.
    pub inputs: Vec<InputSource>,
    /// AND gates of the part.
    pub and_gates: u64,
}

impl RegionPart {
    /// The part circuit's input bits of the original groups owned by `party` (of the
    /// original circuit), from that party's original input bits.
    pub fn input_of(&self, party: Party, own: &[bool]) -> Vec<bool> {
        input_of(&self.inputs, party, own)
    }
}

/// A circuit cut into two regions and the glue (see the module documentation).
#[derive(Clone, Debug)]
pub struct Mixed {
    /// Region 0 (the garbler garbles it) and region 1 (the evaluator garbles it).
    pub regions: [RegionPart; 2],
    /// The glue, garbled by the garbler once both regions are done.
    pub glue: RegionPart,
    /// The bits crossing to the glue, in the glue's share order: (region, index among that
    /// region's outputs).
    pub crossing: Vec<(usize, usize)>,
}

impl Mixed {
    /// Cuts `circuit` into two regions and the glue.
    ///
    /// # Errors
    /// [`SplitError::Generated`] for a circuit generated as it is read;
    /// [`SplitError::TooFewComponents`] if no cut balances (a circuit that is one long chain,
    /// such as AES-128 or SHA-256).
    pub fn of(circuit: &Circuit) -> Result<Mixed, SplitError> {
        if circuit.is_generated() {
            return Err(SplitError::Generated);
        }
        let total: u64 = circuit.gate_counts()[0];
        let mut t = (total / 2).max(1);
        loop {
            let cut = Cut::of(circuit, t);
            if let Some((assign, loads)) = cut.balanced(total) {
                return build(circuit, &cut, &assign, loads);
            }
            if t == 1 {
                return Err(SplitError::TooFewComponents {
                    components: 1,
                    parts: 2,
                });
            }
            t /= 2;
        }
    }

    /// A party's shares of the crossing bits, in the glue's order: for the region it garbled,
    /// its blinding bits; for the region it evaluated, the blinded outputs it learned.
    /// `garbled` is the region this party garbled.
    pub fn shares(&self, garbled: usize, blinding: &[bool], learned: &[bool]) -> Vec<bool> {
        self.crossing
            .iter()
            .map(|&(region, j)| {
                if region == garbled {
                    blinding[j]
                } else {
                    learned[j]
                }
            })
            .collect()
    }
}

/// The pieces and glue of a circuit at one threshold.
struct Cut {
    free: Vec<bool>,
    glue: Vec<bool>,
    parent: Vec<u32>,
    /// AND gates per root (meaningful at roots).
    size: Vec<u64>,
    glue_ands: u64,
}

impl Cut {
    fn of(c: &Circuit, t: u64) -> Cut {
        let n = c.num_wires() as usize;
        let mut free = vec![false; n];
        free[..c.n_inputs()].fill(true);
        let mut glue = vec![false; n];
        let mut parent: Vec<u32> = (0..n as u32).collect();
        let mut size = vec![0u64; n];
        let mut glue_ands = 0;
        for g in c.gates() {
            let (a, b) = g.inputs();
            let out = g.output() as usize;
            let is_and = u64::from(matches!(g, Gate::And { .. }));
            let (a, b) = (a as usize, b.map(|b| b as usize));
            if glue[a] || b.is_some_and(|b| glue[b]) {
                glue[out] = true;
                glue_ands += is_and;
                continue;
            }
            if is_and == 0 && free[a] && b.is_none_or(|b| free[b]) {
                free[out] = true;
                continue;
            }
            let mut root = |w: usize| (!free[w]).then(|| find(&mut parent, w as u32));
            let ra = root(a);
            let rb = b.and_then(&mut root);
            match (ra, rb) {
                (None, None) => size[out] = is_and,
                (Some(r), None) | (None, Some(r)) => {
                    parent[out] = r;
                    size[r as usize] += is_and;
                }
                (Some(r), Some(s)) if r == s => {
                    parent[out] = r;
                    size[r as usize] += is_and;
                }
                (Some(r), Some(s)) if size[r as usize].min(size[s as usize]) >= t => {
                    glue[out] = true;
                    glue_ands += is_and;
                }
                (Some(r), Some(s)) => {
                    let (lo, hi) = if r < s { (r, s) } else { (s, r) };
                    parent[hi as usize] = lo;
                    parent[out] = lo;
                    size[lo as usize] += size[hi as usize] + is_and;
                }
            }
        }
        Cut {
            free,
            glue,
            parent,
            size,
            glue_ands,
        }
    }

    /// Each piece's region (by root) and the regions' AND gates, if this cut balances.
    #[allow(clippy::type_complexity)]
    fn balanced(&self, total: u64) -> Option<(Vec<(u32, usize)>, [u64; 2])> {
        if self.glue_ands * 5 > total {
            return None;
        }
        let mut pieces: Vec<(u64, u32)> = (0..self.parent.len() as u32)
            .filter(|&w| {
                let w = w as usize;
                !self.free[w] && !self.glue[w] && self.parent[w] == w as u32 && self.size[w] > 0
            })
            .map(|w| (self.size[w as usize], w))
            .collect();
        pieces.sort_by_key(|&(s, w)| (std::cmp::Reverse(s), w));
        let mut loads = [0u64; 2];
        let mut assign = Vec::with_capacity(pieces.len());
        for (s, root) in pieces {
            let p = usize::from(loads[1] < loads[0]);
            loads[p] += s;
            assign.push((root, p));
        }
        let sum = loads[0] + loads[1];
        (sum > 0 && loads[0].min(loads[1]) * 10 >= sum * 3).then_some((assign, loads))
    }
}

/// The three circuits of a cut.
fn build(
    c: &Circuit,
    cut: &Cut,
    assign: &[(u32, usize)],
    loads: [u64; 2],
) -> Result<Mixed, SplitError> {
    let n = c.num_wires() as usize;
    let mut parent = cut.parent.clone();
    // Each non-free, non-glue wire's region (pieces without AND gates go with region 0).
    let mut root_region = vec![u8::MAX; n];
    for &(root, p) in assign {
        root_region[root as usize] = p as u8;
    }
    let region_of: Vec<u8> = (0..n as u32)
        .map(|w| {
            let i = w as usize;
            if cut.free[i] || cut.glue[i] {
                u8::MAX
            } else {
                match root_region[find(&mut parent, w) as usize] {
                    u8::MAX => 0,
                    p => p,
                }
            }
        })
        .collect();
    // The crossing wires: region wires that glue gates or outputs read, once each, in wire
    // order of first use.
    let mut crossed = vec![false; n];
    let mut crossing_wires: [Vec<WireId>; 2] = [Vec::new(), Vec::new()];
    let mut crossing = Vec::new();
    let mut cross = |w: WireId| {
        let r = region_of[w as usize];
        if r != u8::MAX && !crossed[w as usize] {
            crossed[w as usize] = true;
            let list = &mut crossing_wires[r as usize];
            crossing.push((r as usize, list.len()));
            list.push(w);
        }
    };
    for g in c.gates() {
        if cut.glue[g.output() as usize] {
            let (a, b) = g.inputs();
            std::iter::once(a).chain(b).for_each(&mut cross);
        }
    }
    for o in c.outputs() {
        o.wires.iter().copied().for_each(&mut cross);
    }
    let given: Vec<WireId> = crossing
        .iter()
        .map(|&(r, j)| crossing_wires[r][j])
        .collect();
    // Each part reads the whole circuit: the three are built side by side.
    let (region_of, crossing_wires, given) = (&region_of, &crossing_wires, &given);
    let region = |p: usize| {
        let keep: Vec<bool> = c
            .gates()
            .iter()
            .map(|g| region_of[g.output() as usize] == p as u8)
            .collect();
        let shape = Shape {
            keep: &keep,
            given: &[],
            outputs: vec![("blinded".to_string(), crossing_wires[p].clone())],
            blind: true,
            swap: p == 1,
        };
        let (circuit, inputs) = shape
            .build(c, &cut.free)
            .map_err(|source| SplitError::Part { part: p, source })?;
        Ok(RegionPart {
            circuit,
            inputs,
            and_gates: loads[p],
        })
    };
    let glue = || {
        let keep: Vec<bool> = c
            .gates()
            .iter()
            .map(|g| cut.glue[g.output() as usize])
            .collect();
        let outputs = c
            .outputs()
            .iter()
            .map(|o| (o.name.clone(), o.wires.clone()))
            .collect();
        let shape = Shape {
            keep: &keep,
            given,
            outputs,
            blind: false,
            swap: false,
        };
        let (circuit, inputs) = shape
            .build(c, &cut.free)
            .map_err(|source| SplitError::Part { part: 2, source })?;
        Ok(RegionPart {
            circuit,
            inputs,
            and_gates: cut.glue_ands,
        })
    };
    let (r0, r1, glue) = std::thread::scope(|scope| {
        let r1 = scope.spawn(|| region(1));
        let glue = scope.spawn(glue);
        let r0 = region(0);
        let join = |h: std::thread::ScopedJoinHandle<'_, _>| {
            h.join().unwrap_or_else(|e| std::panic::resume_unwind(e))
        };
        (r0, join(r1), join(glue))
    });
    let (r0, r1, glue) = (r0?, r1?, glue?);
    Ok(Mixed {
        regions: [r0, r1],
        glue,
        crossing,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library;
    use crate::{BitOrder, InputGroup, OutputGroup};
    use rand::{Rng, SeedableRng};

    /// Runs the three parts in the clear as the protocol does (random blinding, shares
    /// XORed in the glue) and compares with the circuit on the same inputs.
    fn same_function(c: &Circuit, m: &Mixed, seed: u64) {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let own: Vec<Vec<bool>> = [Party::Garbler, Party::Evaluator]
            .iter()
            .map(|&p| (0..c.party_input_bits(p)).map(|_| rng.gen()).collect())
            .collect();
        let (g, e) = (&own[0], &own[1]);
        let mut all = Vec::new();
        let mut next = [0usize; 2];
        for grp in c.inputs() {
            let o = usize::from(grp.party == Party::Evaluator);
            all.extend(&own[o][next[o]..next[o] + grp.len as usize]);
            next[o] += grp.len as usize;
        }
        let want = c.eval_bits(&all);
        // Region p: its garbler's bits (original groups, then blinding), its evaluator's.
        let mut blinding = Vec::new();
        let mut learned = Vec::new();
        for (p, (gar, eva)) in [(g, e), (e, g)].into_iter().enumerate() {
            let r = &m.regions[p];
            let (gp, ep) = if p == 0 {
                (Party::Garbler, Party::Evaluator)
            } else {
                (Party::Evaluator, Party::Garbler)
            };
            let blind: Vec<bool> = (0..r.circuit.n_outputs()).map(|_| rng.gen()).collect();
            let mut gbits = r.input_of(gp, gar);
            gbits.extend(&blind);
            let ebits = r.input_of(ep, eva);
            let bits = interleave(&r.circuit, &gbits, &ebits);
            learned.push(r.circuit.eval_bits(&bits));
            blinding.push(blind);
        }
        // The garbler garbled region 0 and evaluated region 1; the evaluator the reverse.
        let g_shares = m.shares(0, &blinding[0], &learned[1]);
        let e_shares = m.shares(1, &blinding[1], &learned[0]);
        let mut gbits = m.glue.input_of(Party::Garbler, g);
        gbits.extend(&g_shares);
        let mut ebits = m.glue.input_of(Party::Evaluator, e);
        ebits.extend(&e_shares);
        let got = m
            .glue
            .circuit
            .eval_bits(&interleave(&m.glue.circuit, &gbits, &ebits));
        assert_eq!(got, want);
    }

    /// One bit per input wire from each party's bits, group by group.
    fn interleave(c: &Circuit, g: &[bool], e: &[bool]) -> Vec<bool> {
        let (mut gi, mut ei) = (g.iter(), e.iter());
        let mut bits = Vec::new();
        for grp in c.inputs() {
            let src = if grp.party == Party::Garbler {
                &mut gi
            } else {
                &mut ei
            };
            bits.extend(src.by_ref().take(grp.len as usize).copied());
        }
        assert!(gi.next().is_none() && ei.next().is_none(), "every bit used");
        bits
    }

    #[test]
    fn biomatch_cuts_at_its_minimum_and_computes_the_same() {
        let c = library::load("biomatch:n=8,d=2,bits=8").unwrap();
        let m = Mixed::of(&c).unwrap();
        let (a, b) = (m.regions[0].and_gates, m.regions[1].and_gates);
        assert_eq!(a, b, "two halves of the distances");
        assert!(m.glue.and_gates * 5 <= crate::Stats::of(&c).and);
        // The coarsest cut: about the last minimum's two 8-bit operands cross (and a few
        // bits its first gates compute from one operand alone).
        assert!(
            (16..=32).contains(&m.crossing.len()),
            "{}",
            m.crossing.len()
        );
        for seed in 0..10 {
            same_function(&c, &m, seed);
        }
    }

    #[test]
    fn purely_parallel_circuits_cut_without_glue() {
        for spec in ["mvmul:m=4,k=2,bits=8", "mexp:k=2,bits=5"] {
            let c = library::load(spec).unwrap();
            let m = Mixed::of(&c).unwrap();
            assert_eq!(m.glue.and_gates, 0, "{spec}");
            for seed in 0..5 {
                same_function(&c, &m, seed);
            }
        }
    }

    /// `k` random pieces of equal size and AND gates over shared inputs, their gates
    /// interleaved, then a
    /// glue that folds their last wires with AND and XOR gates; outputs mix the glue, the
    /// pieces, a free wire and an input.
    fn pieces_and_glue(k: usize, per: usize, seed: u64) -> Circuit {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let (ng, ne) = (rng.gen_range(1..5u32), rng.gen_range(1..5u32));
        let n_in = ng + ne;
        let mut next = n_in;
        let mut own: Vec<Vec<WireId>> = vec![Vec::new(); k];
        let mut gates = Vec::new();
        let mut round_and = true;
        for i in 0..k * per {
            let p = i % k;
            let pick = |rng: &mut rand::rngs::StdRng, own: &[WireId]| {
                if !own.is_empty() && rng.gen_bool(0.8) {
                    own[rng.gen_range(0..own.len())]
                } else {
                    rng.gen_range(0..n_in)
                }
            };
            let (a, b) = (pick(&mut rng, &own[p]), pick(&mut rng, &own[p]));
            // A piece's last gate is an AND gate on its own wires, so that the glue, which
            // reads each piece's last wire, joins the pieces (a last gate free of them, an
            // XOR of inputs, would leave its piece apart from the glue: no mixed circuit).
            let last = i >= k * (per - 1);
            let a = if last {
                own[p][rng.gen_range(0..own[p].len())]
            } else {
                a
            };
            if p == 0 {
                // One kind per round for every piece: pieces of equal AND gates, which a
                // cut can balance (kinds drawn per gate left some pieces mostly XOR); the
                // first four rounds AND gates, so that the glue's k - 1 AND gates stay
                // within the fifth of all that a cut allows.
                round_and = i / k < 4 || rng.gen_bool(0.6);
            }
            gates.push(if last || own[p].is_empty() || round_and {
                Gate::And { a, b, out: next }
            } else {
                Gate::Xor { a, b, out: next }
            });
            own[p].push(next);
            next += 1;
        }
        let mut acc = *own[0].last().unwrap();
        for piece in &own[1..] {
            let w = *piece.last().unwrap();
            gates.push(Gate::And {
                a: acc,
                b: w,
                out: next,
            });
            gates.push(Gate::Xor {
                a: next,
                b: w,
                out: next + 1,
            });
            acc = next + 1;
            next += 2;
        }
        gates.push(Gate::Xor {
            a: 0,
            b: n_in - 1,
            out: next,
        });
        let wires = vec![acc, own[1][0], next, 1, *own[k - 1].last().unwrap()];
        Circuit::new(
            u64::from(next + 1),
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
            vec![OutputGroup {
                wires,
                order: BitOrder::MsbFirst,
                name: "o".into(),
            }],
            gates,
        )
        .unwrap()
    }

    proptest::proptest! {
        #[test]
        fn random_pieces_with_glue_cut_and_compute_the_same(k in 2usize..9, per in 8usize..40, seed: u64) {
            let c = pieces_and_glue(k, per, seed);
            let m = Mixed::of(&c).unwrap();
            let ands = crate::Stats::of(&c).and;
            let parts = m.regions[0].and_gates + m.regions[1].and_gates + m.glue.and_gates;
            proptest::prop_assert_eq!(parts, ands);
            for s in 0..3 {
                same_function(&c, &m, seed ^ s);
            }
        }
    }

    /// Seeds on which the generator once made circuits no cut balances: a piece whose last
    /// gate was an XOR of inputs, apart from the glue; a piece mostly of XOR gates.
    #[test]
    fn seeds_that_once_made_unbalanced_pieces_cut_now() {
        for (k, per, seed) in [
            (2, 14, 17_987_600_004_264_223_731),
            (2, 8, 14_814_477_183_022_888_140),
        ] {
            let c = pieces_and_glue(k, per, seed);
            let m = Mixed::of(&c).unwrap();
            same_function(&c, &m, 1);
        }
    }

    #[test]
    fn chains_are_refused() {
        for spec in ["aes128", "sha256"] {
            let c = library::load(spec).unwrap();
            assert!(
                matches!(Mixed::of(&c), Err(SplitError::TooFewComponents { .. })),
                "{spec}"
            );
        }
    }

    #[test]
    fn the_suite_cuts_where_it_can_and_computes_the_same() {
        for spec in [
            "min:n=8,bits=8",
            "argmin:n=8,bits=8",
            "matmul:n=2,bits=8",
            "sort:n=8,bits=8",
        ] {
            let c = library::load(spec).unwrap();
            if let Ok(m) = Mixed::of(&c) {
                for seed in 0..5 {
                    same_function(&c, &m, seed);
                }
            }
        }
    }
}
