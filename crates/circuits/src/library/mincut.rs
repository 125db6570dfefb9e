//! `mincut`: a minimum s-t cut of a graph whose edge capacities are shared by the parties,
//! computed by enumerating every cut.
//!
//! # Why
//! The Transputation paper (Brandt, Orlandi, Shrishak, Shulman, "Optimal Transport Layer for
//! Secure Computation", Table 2) benchmarks three circuits; the largest is the "Min-Cut
//! 250,000" circuit of Gueron, Lindell, Nof and Pinkas ("Fast Garbling of Circuits Under
//! Standard Assumptions", CCS 2015, GLNP15) with 999,960 AND and 2,524,920 XOR gates. That
//! circuit was never published. This built-in is a real min-cut computation of the same
//! order of size: 914,066 AND gates for the defaults (see *Gate counts*). When the
//! exact gate counts of the paper matter more than the function, use
//! `synthetic:and=999960,xor=2524920,inputs=250000` instead.
//!
//! # What is computed
//! The graph is the complete graph `K_n` on nodes `0..n` (`n` = `nodes`); the source is
//! `s = 0`, the sink `t = n - 1`. Its undirected edges `(i, j)`, `i < j`, are numbered in
//! lexicographic order: `(0,1), (0,2), ..., (0,n-1), (1,2), ..., (n-2,n-1)`, which makes
//! `E = n(n-1)/2` edges. The garbler gives one `bits`-bit value `a_e` per edge, the evaluator
//! one `b_e`; the capacity of edge `e` is `c_e = a_e + b_e`, computed without overflow on
//! `bits + 1` bits.
//!
//! An s-t cut puts each internal node `1..=n-2` on the s side or the t side; its capacity is
//! the sum of `c_e` over the edges whose ends are on different sides. There are `2^(n-2)`
//! cuts, visited in binary-reflected Gray code order: cut number `k` (`k = 0 .. 2^(n-2)`)
//! puts node `j + 1` on the s side iff bit `j` of `g(k) = k XOR (k >> 1)` is 1. Cut 0 has
//! every internal node on the t side; going from cut `k - 1` to cut `k` moves exactly one
//! node, `v = trailing_zeros(k) + 1`, to the other side.
//!
//! The circuit keeps the capacity of the current cut in `W` bits, where `W` is the bit
//! length of the largest capacity any cut can have, `floor(n^2/4) · 2 (2^bits − 1)` (at most
//! `floor(n^2/4)` edges cross a cut, each of capacity at most `2 (2^bits − 1)`). Cut 0 has
//! capacity `sum_{u=1}^{n-1} c_(0,u)`, summed in increasing order of `u`. Moving node `v` changes the capacity by `± c_(v,u)` for every
//! other node `u`, taken in increasing order of `u`: an edge to a node on `v`'s new side
//! stops crossing (subtract), an edge to a node on its old side starts crossing (add). The
//! signs are public (they depend only on `k`). Every intermediate sum is taken modulo `2^W`;
//! since every cut's capacity lies in `0..2^W`, the capacity after each move is exact.
//!
//! The running minimum starts as the capacity of cut 0 with cut 0's sides; cut `k` replaces
//! it iff its capacity is strictly less (`W`-bit unsigned comparison), so the output is the
//! minimum capacity and the first cut in Gray code order that reaches it.
//!
//! # Gate counts
//! Per edge, the capacity costs `bits` AND gates; per move, each of the `n - 1` additions or
//! subtractions costs `W - 1`, the comparison `W`, the multiplexer of the minimum `W` and
//! that of the sides `n - 2`. So at most `E·bits + (2^(n-2) − 1) ((n − 1)(W − 1) + 2W + n − 2)`
//! AND gates in all; constant folding saves a little on the sum of cut 0 and on side bits
//! that are still constant (node `j + 1` first moves at cut `2^j`). The defaults
//! (`nodes=14`, `bits=8`, so `E = 91`, `W = 15`, 4,096 cuts) give exactly 914,066 AND,
//! 2,685,356 XOR and 741,057 INV gates (INV gates come from subtractions and comparisons and
//! are free in every scheme), AND-depth 65,520: 8.6 % below GLNP15's 999,960 AND with an
//! XOR/AND ratio of 2.9 (theirs 2.5). `bits=9` would give 975,594 AND, but 8-bit shares keep
//! each edge at two hex digits.
//!
//! The parameters are bounded by `nodes <= 20`, `bits <= 32`; the largest instance has about
//! 2.2·10^8 AND gates, and each extra node roughly doubles the count.
//!
//! # Parallel regions
//! With `regions=R` (default 1, the circuit counted above) the enumeration is cut into `R`
//! contiguous ranges of cuts in Gray code order, range `r` the cuts `r·C/R .. (r+1)·C/R`
//! (`C = 2^(n-2)`, so `R <= C`), each a region of one section
//! ([`Sections`](crate::Sections)) that a garbler may garble on its own thread. The
//! capacities `c_e` are computed once, before the section, and every region reads them. A region starts at its first cut `k`: its
//! capacity computed from scratch, the `c_e` of its crossing edges summed in edge order
//! (for cut 0 exactly the sum above), the running minimum that capacity with cut `k`'s
//! sides; then it walks its range as above. The glue after the section takes the ranges in
//! order, a later range's minimum replacing the one so far iff strictly less: the output is
//! the minimum and the first cut in Gray code order that reaches it, as with one walk, for
//! every input.
//!
//! Against one walk, each range after the first costs its first cut's sum (at most
//! `floor(n^2/4) − 1` additions, narrower while the sum is small) instead of a move
//! (`(n − 1)(W − 1) + 2W + n − 2` AND), and the glue a comparison and two multiplexers
//! (`2W + n − 2` AND); within a range a node that never moves keeps a constant side, whose
//! multiplexer is free, which pays for the sums of a few long ranges. The defaults give
//! 914,066 AND for `R = 1` (AND-depth 65,520), 910,223 for 2 (32,768), 906,635 for 4
//! (16,416), 902,351 for 16 (4,320), 913,135 for 64 (2,016), and 2,687,663 for `R = C =
//! 4,096` (every cut summed from scratch).
//!
//! A garbler garbles regions from held gates, and a generated circuit has no sections, so
//! with `R > 1` the circuit is held from any size: `nodes <= 16` then (19.7 M gates at 8
//! bits, 55 M at 32).
//!
//! # Encoding
//! Hex, MSB-first groups (as [`MINCUT`]`.encoding` says for `circuit list`):
//! - garbler: one group of `E·bits` bits, the values `a_e` big-endian and concatenated in
//!   edge order, read as one big-endian integer of `E·bits` bits (defaults: 182 digits, two
//!   per edge); evaluator: the `b_e`, same layout.
//! - output "min cut capacity": the minimum as a `W`-bit integer in hex (defaults: `W = 15`,
//!   4 digits);
//! - output "s side": an `(n - 2)`-bit integer whose most significant bit is node 1 and least
//!   significant bit node `n - 2`: a bit is 1 iff that node is on the s side of the first
//!   minimum cut.

use std::sync::Arc;

use super::{Builtin, Param, Params};
use crate::builder::pieces::{self, Piece, Pieces};
use crate::builder::{Bit, Builder, Uint, Word};
use crate::circuit::{BitOrder, Circuit, Party};
use crate::encoding::{bits_to_hex, hex_to_bits};

pub(crate) static MINCUT: Builtin = Builtin {
    name: "mincut",
    summary: "minimum s-t cut of the complete graph K_n with capacities a_e + b_e, by \
              enumerating all 2^(n-2) cuts in Gray code order (914,066 AND for the defaults; \
              cf. GLNP15 Min-Cut, 999,960 AND)",
    params: &[
        Param {
            name: "nodes",
            default: 14,
            min: 3,
            max: 20,
            doc: "number of nodes n of the complete graph K_n (source 0, sink n-1); \
                  the circuit enumerates 2^(n-2) cuts",
        },
        Param {
            name: "bits",
            default: 8,
            min: 1,
            max: 32,
            doc: "bits of each party's share of an edge capacity (capacities have bits+1 bits)",
        },
        Param {
            name: "regions",
            default: 1,
            min: 1,
            max: MAX_REGIONS,
            doc: "parallel regions: the cuts split into this many contiguous ranges in Gray code \
                  order, each walked on its own from its first cut's capacity, the minimum taken \
                  over the ranges after them (1 = one walk, the circuit of the gate counts \
                  above); at most the number of cuts, and above 1 the circuit is held, so \
                  nodes <= 16",
        },
    ],
    encoding: "garbler: one hex string, its shares a_e of the n(n-1)/2 edge capacities, \
               `bits` bits each, for the edges (i,j), i<j, in lexicographic order \
               (0,1),(0,2),...,(0,n-1),(1,2),...,(n-2,n-1), as big-endian values concatenated \
               into one big-endian integer, first edge first (defaults: 91 edges x 8 bits = \
               182 hex digits). evaluator: its shares b_e, same layout. The capacity \
               of edge e is a_e + b_e. Output, two groups: \"min cut capacity\", the minimum \
               capacity of an s-t cut (s = node 0, t = node n-1) as a W-bit integer, where W is \
               the bit length of floor(n^2/4)*2*(2^bits-1) (defaults: W = 15, 4 hex digits); \
               \"s side\", an (n-2)-bit integer whose most significant bit is node 1 and least \
               significant bit node n-2: a bit is 1 iff that node is on the source side of the \
               first minimum cut in binary-reflected Gray code order (cut k puts node j+1 on \
               the s side iff bit j of k^(k>>1) is 1).",
    build,
    reference,
    check: Some(check_regions),
};

/// The most regions: the cuts of the largest instance that may have regions.
const MAX_REGIONS: u64 = 1 << (MAX_NODES_WITH_REGIONS - 2);

/// The most nodes of an instance with regions, whose circuit is held: a garbler garbles
/// regions from held gates, and a generated circuit has no sections. 16 nodes are 19.7 M
/// gates at 8 bits and 55 M at 32, the size of the largest held built-ins.
const MAX_NODES_WITH_REGIONS: usize = 16;

fn check_regions(params: &Params) -> Result<(), String> {
    let (n, regions) = (params.usize("nodes"), params.get("regions"));
    if regions == 1 {
        return Ok(());
    }
    if n > MAX_NODES_WITH_REGIONS {
        return Err(format!(
            "regions={regions} needs nodes <= {MAX_NODES_WITH_REGIONS}: a circuit with \
             regions is held in memory (nodes={n} is generated as it is read, with \
             regions=1 only)"
        ));
    }
    let cuts = 1u64 << (n - 2);
    if regions > cuts {
        return Err(format!(
            "regions={regions} is more than the {cuts} cuts of nodes={n} (2^(nodes-2)): \
             each region walks at least one cut"
        ));
    }
    Ok(())
}

/// The instance described by the parameters.
#[derive(Clone, Copy, Debug)]
struct Shape {
    /// Nodes of the complete graph.
    n: usize,
    /// Bits of one party's share of a capacity.
    bits: usize,
    /// Width of cut capacities: the bit length of the largest possible cut.
    w: usize,
}

impl Shape {
    fn of(params: &Params) -> Shape {
        let n = params.usize("nodes");
        let bits = params.usize("bits");
        Shape {
            n,
            bits,
            w: (u64::BITS - max_cut(n, bits).leading_zeros()) as usize,
        }
    }

    fn edges(&self) -> usize {
        self.n * (self.n - 1) / 2
    }

    /// Number of the edge `{i, j}` in lexicographic order.
    fn edge(&self, i: usize, j: usize) -> usize {
        let (i, j) = (i.min(j), i.max(j));
        debug_assert!(i < j && j < self.n);
        // Rows 0..i hold (n-1) + (n-2) + ... + (n-i) edges.
        i * (2 * self.n - i - 1) / 2 + (j - i - 1)
    }

    /// Number of cuts: every internal node on either side.
    fn cuts(&self) -> u64 {
        1 << (self.n - 2)
    }
}

/// The largest capacity any s-t cut of `K_n` can have with `bits`-bit shares.
fn max_cut(n: usize, bits: usize) -> u64 {
    let crossing = (n * n / 4) as u64;
    crossing * 2 * ((1u64 << bits) - 1)
}

/// Whether node `u` is on the s side in the cut with Gray code `g`.
fn on_s_side(g: u64, u: usize, n: usize) -> bool {
    u == 0 || (u < n - 1 && (g >> (u - 1)) & 1 == 1)
}

/// From this many cuts (12 nodes: about a million gates at 8 bits, 460,000 at 2) the
/// circuit is generated as it is read (`builder::pieces`), never held whole: 16 nodes are
/// 19.7 M gates, 18 nodes 93 M.
const GENERATED_CUTS: u64 = 1 << 10;

fn build(params: &Params) -> Circuit {
    let shape = Shape::of(params);
    let regions = params.get("regions");
    if regions > 1 {
        held_in_regions(&shape, regions)
    } else if shape.cuts() >= GENERATED_CUTS {
        pieces::generated(Arc::new(MinCut(shape)))
    } else {
        pieces::held(&MinCut(shape))
    }
}

/// Declares the inputs and returns the capacities `c_e = a_e + b_e`, `W` bits each.
fn capacities(b: &mut Builder, shape: &Shape) -> Vec<Uint> {
    let a = b.input_uints(
        Party::Garbler,
        "edge capacity shares",
        shape.edges(),
        shape.bits,
    );
    let c = b.input_uints(
        Party::Evaluator,
        "edge capacity shares",
        shape.edges(),
        shape.bits,
    );
    a.iter()
        .zip(&c)
        .map(|(x, y)| b.add_wide(x, y).resize(shape.w))
        .collect()
}

/// A walk along the Gray code: the current cut's capacity and the running minimum with
/// its sides.
struct Walk {
    cut: Uint,
    best: Uint,
    best_side: Vec<Bit>,
}

impl Walk {
    /// Starts at cut `k`: its capacity from scratch, the crossing edges' capacities summed in
    /// edge order (for cut 0 the edges `(0, u)` in increasing `u`), the minimum so far itself.
    fn start(b: &mut Builder, shape: &Shape, cap: &[Uint], k: u64) -> Walk {
        let n = shape.n;
        let g = k ^ (k >> 1);
        let mut crossing = (0..n)
            .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
            .filter(|&(i, j)| on_s_side(g, i, n) != on_s_side(g, j, n))
            .map(|(i, j)| &cap[shape.edge(i, j)]);
        let first = crossing
            .next()
            .expect("the edge (s, t) always crosses")
            .clone();
        let cut = crossing.fold(first, |sum, c| b.add(&sum, c));
        Walk {
            best: cut.clone(),
            cut,
            best_side: (1..n - 1).map(|u| Bit::Const(on_s_side(g, u, n))).collect(),
        }
    }

    /// Moves from cut `k - 1` to cut `k` and keeps the minimum: strictly less replaces it.
    fn step(&mut self, b: &mut Builder, shape: &Shape, cap: &[Uint], k: u64) {
        let n = shape.n;
        let g = k ^ (k >> 1);
        let v = k.trailing_zeros() as usize + 1;
        let now_s = on_s_side(g, v, n);
        for u in (0..n).filter(|&u| u != v) {
            let e = &cap[shape.edge(u, v)];
            // Same side as v's new place: the edge stopped crossing.
            self.cut = if on_s_side(g, u, n) == now_s {
                b.sub(&self.cut, e)
            } else {
                b.add(&self.cut, e)
            };
        }
        let less = b.lt(&self.cut, &self.best);
        self.best = b.mux_word(less, &self.cut, &self.best);
        let side: Vec<Bit> = (1..n - 1).map(|u| Bit::Const(on_s_side(g, u, n))).collect();
        self.best_side = b.mux_bits(less, &side, &self.best_side);
    }
}

/// The circuit with `regions` parallel regions, held: the capacities, then a section of
/// one region per range of cuts, each walking its range, then the minimum over the ranges.
fn held_in_regions(shape: &Shape, regions: u64) -> Circuit {
    let mut b = Builder::new();
    let cap = capacities(&mut b, shape);
    let cuts = shape.cuts();
    // Range r is cuts r·C/R .. (r+1)·C/R: contiguous, in order, none empty since R <= C.
    let walks = b.parallel(0..regions, |b, r| {
        let (first, end) = (r * cuts / regions, (r + 1) * cuts / regions);
        let mut walk = Walk::start(b, shape, &cap, first);
        for k in first + 1..end {
            walk.step(b, shape, &cap, k);
        }
        walk
    });
    // The glue: ranges in Gray code order, a later one replacing the minimum only if
    // strictly less, so the first cut that reaches the minimum wins, as in one walk.
    let mut walks = walks.into_iter();
    let Walk {
        mut best,
        best_side: mut side,
        ..
    } = walks.next().expect("at least one region");
    for walk in walks {
        let less = b.lt(&walk.best, &best);
        best = b.mux_word(less, &walk.best, &best);
        side = b.mux_bits(less, &walk.best_side, &side);
    }
    b.output_uint("min cut capacity", &best);
    b.output_bits("s side", &side);
    b.build()
}

/// The circuit as a program in pieces: the capacities and the first cut, then one piece
/// per further cut.
#[derive(Debug)]
struct MinCut(Shape);

/// What the pieces carry from cut to cut.
struct Cuts<'a> {
    shape: &'a Shape,
    cap: Vec<Uint>,
    walk: Walk,
    /// The next cut.
    k: u64,
}

impl Pieces for MinCut {
    fn identity(&self) -> String {
        format!("mincut:nodes={},bits={}", self.0.n, self.0.bits)
    }

    fn start<'a>(&'a self, b: &mut Builder) -> Box<dyn Piece + 'a> {
        let shape = &self.0;
        let cap = capacities(b, shape);
        // Cut 0: only the source on the s side.
        let walk = Walk::start(b, shape, &cap, 0);
        Box::new(Cuts {
            shape,
            cap,
            walk,
            k: 1,
        })
    }
}

impl Piece for Cuts<'_> {
    fn next(&mut self, b: &mut Builder) -> bool {
        if self.k < self.shape.cuts() {
            self.walk.step(b, self.shape, &self.cap, self.k);
            self.k += 1;
            if self.k < self.shape.cuts() {
                return true;
            }
        }
        b.output_uint("min cut capacity", &self.walk.best);
        b.output_bits("s side", &self.walk.best_side);
        false
    }

    fn live(&self, out: &mut Vec<Bit>) {
        let walk = &self.walk;
        for x in self.cap.iter().chain([&walk.cut, &walk.best]) {
            out.extend_from_slice(x.bits());
        }
        out.extend_from_slice(&walk.best_side);
    }
}

fn reference(params: &Params, garbler: &str, evaluator: &str) -> String {
    let shape = Shape::of(params);
    let Shape { n, bits, w } = shape;
    let shares = |hex: &str| -> Vec<u64> {
        let bits_in =
            hex_to_bits(hex, shape.edges() * bits, BitOrder::MsbFirst).expect("well-formed input");
        bits_in
            .chunks(bits)
            .map(|c| c.iter().fold(0u64, |v, &x| (v << 1) | u64::from(x)))
            .collect()
    };
    let (a, b) = (shares(garbler), shares(evaluator));
    // Edges with their ends, in lexicographic order, with capacities.
    let edges: Vec<(usize, usize, u64)> = (0..n)
        .flat_map(|i| (i + 1..n).map(move |j| (i, j)))
        .zip(a.iter().zip(&b))
        .map(|((i, j), (x, y))| (i, j, x + y))
        .collect();

    let mut best: Option<(u64, u64)> = None;
    for k in 0..shape.cuts() {
        let g = k ^ (k >> 1);
        let capacity: u64 = edges
            .iter()
            .filter(|&&(i, j, _)| on_s_side(g, i, n) != on_s_side(g, j, n))
            .map(|&(_, _, c)| c)
            .sum();
        if best.is_none_or(|(m, _)| capacity < m) {
            best = Some((capacity, g));
        }
    }
    let (capacity, g) = best.expect("at least one cut");
    let capacity_bits: Vec<bool> = (0..w).rev().map(|i| (capacity >> i) & 1 == 1).collect();
    let side_bits: Vec<bool> = (1..n - 1).map(|u| on_s_side(g, u, n)).collect();
    format!(
        "{},{}",
        bits_to_hex(&capacity_bits, BitOrder::MsbFirst),
        bits_to_hex(&side_bits, BitOrder::MsbFirst)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::parse_spec;
    use crate::library::testing::{check_against_reference, check_vector};
    use crate::Stats;

    #[test]
    fn the_generated_form_is_the_held_form() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(14);
        for (n, bits) in [(3, 1), (5, 3), (7, 4)] {
            let spec = format!("mincut:nodes={n},bits={bits}");
            let shape = Shape::of(&parse_spec(&spec).unwrap().1);
            let held = pieces::held(&MinCut(shape));
            let generated = pieces::generated_in_chunks(Arc::new(MinCut(shape)), 100);
            crate::circuit::check_ends(&generated);
            assert_eq!(generated.to_held().unwrap(), held, "{n} nodes");
            for _ in 0..4 {
                let inputs: Vec<u64> = (0..held.n_inputs()).map(|_| rng.gen()).collect();
                assert_eq!(generated.eval_words(&inputs), held.eval_words(&inputs));
            }
        }
        // From 12 nodes the built-in is generated, its wire numbers those of a chunk of
        // gates and the state, not one per gate.
        let c = super::super::build("mincut:nodes=12,bits=2").unwrap();
        assert!(c.is_generated());
        assert!(c.num_wires() < 40_000, "{} wire numbers", c.num_wires());
        assert!(c.num_gates() > 400_000, "{} gates", c.num_gates());
    }

    #[test]
    fn edges_are_numbered_lexicographically() {
        let (_, p) = parse_spec("mincut:nodes=5").unwrap();
        let shape = Shape::of(&p);
        let mut k = 0;
        for i in 0..5 {
            for j in i + 1..5 {
                assert_eq!((shape.edge(i, j), shape.edge(j, i)), (k, k));
                k += 1;
            }
        }
        assert_eq!(k, shape.edges());
    }

    #[test]
    fn width_holds_the_largest_cut() {
        let width = |spec: &str| Shape::of(&parse_spec(spec).unwrap().1).w;
        // 49 crossing edges of capacity 510: 24,990 < 2^15.
        assert_eq!(width("mincut"), 15);
        // 4 crossing edges of capacity 30: 120 < 2^7.
        assert_eq!(width("mincut:nodes=4,bits=4"), 7);
        assert_eq!(width("mincut:nodes=3,bits=1"), 3);
        // 100 crossing edges of capacity 2^33 - 2.
        assert_eq!(width("mincut:nodes=20,bits=32"), 40);
    }

    #[test]
    fn matches_reference_on_small_graphs() {
        check_against_reference("mincut:nodes=6,bits=4", 300);
        check_against_reference("mincut:nodes=3,bits=1", 50);
        check_against_reference("mincut:nodes=5,bits=1", 100);
        check_against_reference("mincut:nodes=7,bits=3", 100);
        check_against_reference("mincut:nodes=4,bits=32", 100);
    }

    #[test]
    fn matches_reference_on_defaults() {
        check_against_reference("mincut", 4);
    }

    #[test]
    fn low_capacities_make_ties_and_the_first_cut_wins() {
        // With 1-bit shares most capacities are 0 or 1 and many cuts tie.
        check_against_reference("mincut:nodes=8,bits=1", 100);
    }

    /// K_4 with s = 0, t = 3 and capacities (0,1)=5, (0,2)=1, (0,3)=0, (1,2)=2, (1,3)=1,
    /// (2,3)=6. The cuts in Gray code order: {0} 6, {0,1} 4, {0,1,2} 7, {0,2} 13: the minimum
    /// is 4 with node 1 on the s side and node 2 on the t side.
    #[test]
    fn hand_checked_small_graph() {
        // Garbler 3,1,0,2,0,4 + evaluator 2,0,0,0,1,2 = 5,1,0,2,1,6.
        // Capacity 4 on W = 7 bits; sides: node 1 (the high bit) on the s side = 0b10.
        check_vector("mincut:nodes=4,bits=4", "310204", "200012", "04,2");
        // All capacities 1: cuts {0} 3, {0,1} 4, {0,1,2} 3, {0,2} 4: the first minimum, cut 0
        // (no internal node on the s side), wins the tie.
        check_vector("mincut:nodes=4,bits=4", "000000", "111111", "03,0");
        // All capacities 30: the cut {0,1} reaches the largest possible capacity 120
        // (= 2^7 - 8), which W = 7 bits must hold; the minimum is 90 at cut 0.
        check_vector("mincut:nodes=4,bits=4", "ffffff", "ffffff", "5a,0");
        // (0,1)=1, (0,2)=9, (0,3)=0, (1,2)=0, (1,3)=1, (2,3)=2: cuts {0} 10, {0,1} 10 (a tie,
        // not taken), {0,1,2} 3, {0,2} 3 (a tie, not taken): the minimum 3 with both internal
        // nodes on the s side -> sides 0b11.
        check_vector("mincut:nodes=4,bits=4", "190010", "000002", "03,3");
    }

    #[test]
    fn regions_give_the_outputs_of_one_walk() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(0x5ec7);
        // (nodes, bits, regions): regions = cuts for 3, 5 and 8 nodes (one cut each); 1-bit
        // shares make many ties, which the first range must win.
        for (n, bits, regions) in [
            (3, 1, 2),
            (4, 4, 3),
            (5, 3, 8),
            (6, 2, 5),
            (7, 4, 7),
            (8, 1, 13),
            (8, 1, 64),
            (9, 2, 100),
        ] {
            let spec = format!("mincut:nodes={n},bits={bits}");
            let one = super::super::build(&spec).unwrap();
            let many = super::super::build(&format!("{spec},regions={regions}")).unwrap();
            assert!(one.sections().is_none());
            let sections = many.sections().expect("a section");
            sections.check(&many).unwrap();
            assert_eq!(sections.sections().len(), 1);
            assert_eq!(sections.regions(), regions as usize, "{spec}");
            // The minimum over the ranges is glue after the section.
            assert!(sections.sections()[0].gates().end < many.num_gates());
            for _ in 0..8 {
                let inputs: Vec<u64> = (0..one.n_inputs()).map(|_| rng.gen()).collect();
                assert_eq!(
                    many.eval_words(&inputs),
                    one.eval_words(&inputs),
                    "{spec}, {regions} regions"
                );
            }
        }
        check_against_reference("mincut:nodes=6,bits=4,regions=3", 100);
        check_against_reference("mincut:nodes=8,bits=1,regions=64", 100);
        check_vector(
            "mincut:nodes=4,bits=4,regions=4",
            "000000",
            "111111",
            "03,0",
        );
        check_vector(
            "mincut:nodes=4,bits=4,regions=2",
            "190010",
            "000002",
            "03,3",
        );
    }

    #[test]
    fn one_range_is_the_walk_in_pieces() {
        let shape = Shape::of(&parse_spec("mincut:nodes=7,bits=3").unwrap().1);
        assert_eq!(held_in_regions(&shape, 1), pieces::held(&MinCut(shape)));
    }

    #[test]
    fn regions_are_bounded_by_the_cuts_and_the_held_size() {
        let msg = |s: &str| parse_spec(s).unwrap_err().to_string();
        assert!(parse_spec("mincut:nodes=4,regions=4").is_ok());
        assert!(parse_spec("mincut:nodes=20,regions=1").is_ok());
        assert!(parse_spec("mincut:nodes=16,regions=16384").is_ok());
        let e = msg("mincut:nodes=4,regions=5");
        assert!(
            e.contains("regions=5 is more than the 4 cuts of nodes=4"),
            "{e}"
        );
        let e = msg("mincut:nodes=17,regions=2");
        assert!(e.contains("regions=2 needs nodes <= 16"), "{e}");
        assert!(msg("mincut:regions=0").contains("outside 1..=16384"));
    }

    #[test]
    fn regions_on_the_defaults() {
        // From 12 nodes one walk is generated; with regions the circuit is held.
        let c = check_against_reference("mincut:regions=4", 1);
        assert!(!c.is_generated());
        let sections = c.sections().unwrap();
        assert_eq!(sections.regions(), 4);
        let s = Stats::of(&c);
        assert_eq!((s.and, s.xor, s.inv), (906_635, 2_679_602, 735_579));
        // Four walks of a quarter each: a quarter of one walk's AND-depth (65,520), and
        // the glue's three comparisons.
        assert_eq!(s.and_depth, 16_416);
        // Nearly every AND gate is in a region.
        assert!(sections.gate_counts(c.gates())[0] * 1000 > s.and * 999);
    }

    #[test]
    fn default_is_near_one_million_and_gates() {
        let circuit = check_against_reference("mincut", 1);
        let s = Stats::of(&circuit);
        assert_eq!((s.and, s.xor, s.inv), (914_066, 2_685_356, 741_057));
        assert_eq!(s.and_depth, 65_520);
        assert!((900_000..=1_100_000).contains(&s.and), "{}", s.and);
        assert_eq!(
            (s.garbler_inputs, s.evaluator_inputs, s.outputs),
            (728, 728, 27)
        );
        // The bound of the module documentation, less what constant folding saves.
        let per_move = 13 * 14 + 2 * 15 + 12;
        assert!(s.and <= 91 * 8 + 4095 * per_move);
        assert!(s.and >= 91 * 8 + 4095 * per_move - 4096);
    }
}
