//! The walk that draws `synthetic`'s gates one after another (for both forms), and the
//! generated form: gates written as they are read, wire numbers reused.
//!
//! # Which wires end
//! A gate of level `l` reads wires of level `l − 1` (an AND gate's first input), wires among
//! the last `W` created before level `l` began (an AND gate's second input), or wires among
//! the last `W` created (an XOR gate's second input), besides the inputs. So once level
//! `l − 1` is over, no later gate reads a wire created before
//! `K = min(start(l − 1), start(l) − W)`: those end there, except the outputs (the last
//! wires), which never end.
//!
//! # Wire numbers
//! Wire `c` (in creation order; the inputs are `0..2I`) is numbered `c` if it is an input,
//! else `2I + (c − 2I) mod R`. While level `m` is written, the wires alive are at least
//! `K_m` and below `start(m + 1)`: fewer than `W + 2·L` (`L` the most gates a level has),
//! and the outputs never meet a later wire, so `R = W + 2·L + O + 1` (rounded up to a power
//! of two) keeps every wire alive at once apart.

use std::ops::Range;
use std::sync::Arc;

use super::{Shape, SplitMix64};
use crate::circuit::{Circuit, Gate, WireId, MAX_WIRES};
use crate::source::{GateBatch, GateSource, Generate};

/// One gate as the walk draws it, in creation numbers.
pub(super) struct Step {
    pub and: bool,
    pub a: u64,
    pub b: u64,
    pub out: u64,
    /// The gate is the last of its level.
    pub ends_level: bool,
}

/// `synthetic`'s gates in order (the construction in the module documentation of
/// `synthetic`): the one place that draws them, for the held form and the generated one.
pub(super) struct Walk {
    shape: Shape,
    rng: SplitMix64,
    window: u64,
    /// The next wire to create.
    next: u64,
    /// The current level, 1-based; 0 for a circuit of depth 0 (XOR gates only).
    level: u64,
    ands: u64,
    xors: u64,
    /// Gates of the current level drawn so far.
    done: u64,
    /// The level's first wire.
    start: u64,
    /// The first wire an XOR gate's first input may be.
    xor_from: u64,
    /// The wires of the previous level.
    prev: Range<u64>,
    /// The input wires the level's first AND gates read.
    slice: Range<u64>,
}

impl Step {
    /// The gate, wire `c` numbered `id(c)`.
    pub(super) fn gate(&self, id: impl Fn(u64) -> WireId) -> Gate {
        let (a, b, out) = (id(self.a), id(self.b), id(self.out));
        if self.and {
            Gate::And { a, b, out }
        } else {
            Gate::Xor { a, b, out }
        }
    }
}

impl Walk {
    pub(super) fn new(shape: Shape) -> Walk {
        let base = 2 * shape.inputs;
        let window = shape.window();
        let mut walk = Walk {
            rng: SplitMix64::seeded(&shape),
            window,
            next: base,
            level: 0,
            ands: 0,
            xors: 0,
            done: 0,
            start: base,
            xor_from: base.saturating_sub(window),
            prev: 0..base,
            slice: 0..0,
            shape,
        };
        if shape.depth == 0 {
            walk.xors = shape.xor;
        } else {
            walk.enter(1);
        }
        walk
    }

    fn enter(&mut self, l: u64) {
        let d = self.shape.depth;
        self.level = l;
        self.start = self.next;
        self.xor_from = self.next;
        self.slice = self.shape.input_slice(l);
        self.ands = Shape::share(self.shape.and, l, d);
        self.xors = Shape::share(self.shape.xor, l, d);
        self.done = 0;
    }

    /// The next gate, or `None` after the last.
    #[inline]
    pub(super) fn step(&mut self) -> Option<Step> {
        if self.done == self.ands + self.xors {
            if self.level == 0 || self.level == self.shape.depth {
                return None;
            }
            self.prev = self.start..self.next;
            self.enter(self.level + 1);
        }
        let rng = &mut self.rng;
        let and = self.done < self.ands;
        let (a, b) = if and {
            let a = self.prev.start + rng.below(self.prev.end - self.prev.start);
            let b = match self.slice.start + self.done {
                input if input < self.slice.end && input != a => input,
                _ => rng.in_window(self.start.saturating_sub(self.window), self.start, a),
            };
            (a, b)
        } else {
            let a = self.xor_from + rng.below(self.next - self.xor_from);
            let b = rng.in_window(self.next.saturating_sub(self.window), self.next, a);
            (a, b)
        };
        let out = self.next;
        self.next += 1;
        self.done += 1;
        Some(Step {
            and,
            a,
            b,
            out,
            ends_level: self.done == self.ands + self.xors,
        })
    }

    /// After the last gate of level `l < depth`: the first wire a later gate may read
    /// (besides the inputs), `K` of the module documentation.
    fn first_alive(&self) -> u64 {
        self.start.min(self.next.saturating_sub(self.window))
    }
}

/// The most gates one level has.
fn max_level(shape: &Shape) -> u64 {
    let d = shape.depth.max(1);
    shape.and.div_ceil(d) + shape.xor.div_ceil(d)
}

/// `R` of the module documentation, for a shape of depth at least 1, rounded up to a power
/// of two (a wire's number is then a mask away from its creation number, not a division).
fn ring(shape: &Shape) -> u64 {
    (shape.window() + 2 * max_level(shape) + shape.outputs + 1).next_power_of_two()
}

/// The wire numbers the generated form needs, if it can be generated (depth at least 1:
/// without levels every wire may be read to the end).
pub(super) fn generated_wires(shape: &Shape) -> Option<u64> {
    (shape.depth >= 1).then(|| 2 * shape.inputs + ring(shape))
}

/// Whether the generated form fits the wire numbers a circuit may have.
pub(super) fn fits_generated(shape: &Shape) -> bool {
    generated_wires(shape).is_some_and(|w| w <= MAX_WIRES)
}

/// The generated form of `shape`.
pub(super) fn circuit(shape: Shape) -> Circuit {
    let wires = generated_wires(&shape).expect("a generated synthetic circuit has levels");
    let numbering = Numbering {
        base: 2 * shape.inputs,
        ring: ring(&shape),
    };
    let (inputs, outputs) = super::groups(&shape, |c| numbering.id(c));
    let generator = Arc::new(Generated { shape, numbering });
    Circuit::generated(wires as u32, inputs, outputs, generator)
        .expect("the groups of a generated synthetic circuit fit its wires")
}

#[derive(Clone, Copy, Debug)]
struct Numbering {
    base: u64,
    ring: u64,
}

impl Numbering {
    fn id(&self, c: u64) -> u32 {
        if c < self.base {
            c as u32
        } else {
            (self.base + ((c - self.base) & (self.ring - 1))) as u32
        }
    }
}

#[derive(Debug)]
struct Generated {
    shape: Shape,
    numbering: Numbering,
}

impl Generate for Generated {
    fn source(&self) -> Box<dyn GateSource + '_> {
        Box::new(Source {
            walk: Walk::new(self.shape),
            numbering: self.numbering,
            ended: self.numbering.base,
            outputs_from: self.shape.wires() - self.shape.outputs,
        })
    }

    fn identity(&self) -> String {
        let s = &self.shape;
        format!(
            "synthetic:and={},xor={},inputs={},depth={},outputs={} (generated, v1)",
            s.and, s.xor, s.inputs, s.depth, s.outputs
        )
    }

    fn counts(&self) -> [u64; 3] {
        [self.shape.and, self.shape.xor, 0]
    }
}

struct Source {
    walk: Walk,
    numbering: Numbering,
    /// Every wire created before this one (and no output) has ended.
    ended: u64,
    /// The first output wire: it and the ones after it never end.
    outputs_from: u64,
}

impl GateSource for Source {
    fn next_batch(&mut self, max: usize, batch: &mut GateBatch) -> bool {
        batch.clear();
        while batch.gates.len() < max.max(1) {
            let Some(step) = self.walk.step() else { break };
            batch.gates.push(step.gate(|c| self.numbering.id(c)));
            if step.ends_level && self.walk.level >= 1 && self.walk.level < self.walk.shape.depth {
                let pos = (batch.gates.len() - 1) as u32;
                let alive = self.walk.first_alive().min(self.outputs_from);
                for c in self.ended..alive {
                    batch.ends.push((pos, self.numbering.id(c)));
                }
                self.ended = self.ended.max(alive);
            }
        }
        !batch.gates.is_empty()
    }
}
