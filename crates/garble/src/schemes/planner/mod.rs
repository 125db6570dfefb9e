//! Planning a circuit's program ([`Schedule`]) from its gate source, a segment of windows at
//! a time, with memory bounded by the wires alive at once and not by the circuit.
//!
//! The waves are those the `waves` module documentation describes. A window is staged in
//! one pass in circuit order (each gate's wave from its inputs', its op, sort key and
//! offset) and sorted into processing order by a counting sort; its ops get their slots in
//! one of two ways (`slots` module):
//! - *Whole* (a circuit held in memory and planned before garbling; generated circuits, such
//!   as `synthetic` above 2^20 gates and `mincut` from 12 nodes, never are): ops name wires
//!   until the whole circuit is staged, then one pass in processing order gives each output
//!   the slot most recently freed, a wire's slot freed after its last reader. The label
//!   tables then hold exactly the wires alive at once, which is what the speed of
//!   garbling depends on. One `u32` per wire while staging, two in the last pass; about
//!   38 ns a gate with reading (`examples/plan_speed.rs`).
//! - *Fast* (a generated circuit, and any circuit planned as it is garbled): what makes the
//!   slots plannable a window at a time is the source's *wire ends* (the circuits crate's
//!   `source` module): no gate after a wire's end reads it. Each output takes its slot as
//!   it is staged, and a wire's slot is freed at the end of the window where it ends, so no
//!   slot is written twice within a window and the sort may reorder its ops freely. About
//!   12 ns a gate on top of reading it, which is what the wall time of a large circuit
//!   depends on; the tables hold one window's ended wires more, which costs garbling a few
//!   per cent (docs/BENCHMARKS.md). One `u32` per wire number (its slot) and one per slot
//!   (its ready wave). (Slots given per window in processing order, exact when the ends
//!   are, were tried: 9 ns a gate more than this, and no faster garbling of a generated
//!   circuit, whose ends come at level boundaries.)
//!
//! A circuit of at most [`PLAN_AHEAD_GATES`] gates is planned whole when its garbler or
//! evaluator is made (before a session's network starts); a larger one
//! [`SEGMENT_GATES`] at a time as garbling and evaluation reach the end of the last segment,
//! so that set-up no longer grows with the circuit and the program in memory stays a few
//! megabytes.

mod cache;
mod slots;

use transputation_circuits::{Circuit, Gate, GateBatch, GateSource, WireId};
use transputation_core::memory;

use super::parallel::Parallel;
use super::waves::{
    slots_plus, Op, OpKind, Schedule, Window, MAX_WINDOW, REUSE_SLOTS, WINDOW_UNIT,
};
use cache::PlanCache;
use slots::{Fast, SlotPool, Slots, Whole};

/// Circuits of at most this many gates are planned whole, before garbling starts.
pub(crate) const PLAN_AHEAD_GATES: u64 = Parallel::PLAN_AHEAD_GATES;
/// Gates per segment of a larger circuit (rounded up to whole windows): 12 MB of program.
pub(crate) const SEGMENT_GATES: usize = Parallel::SEGMENT_GATES;

/// What a scheme makes of each gate; the planner calls these in circuit order.
pub(crate) trait Rules: Send {
    /// The program's name (in the key of a plan kept on disk).
    const NAME: &'static str;
    /// Whether INV gates become XORs with a constant slot ([`Schedule::constant`]).
    const INV_AS_XOR: bool;
    /// The op of `gate`, the `index`-th of the circuit (called once per gate, in order).
    fn kind(&mut self, gate: &Gate, index: u64) -> OpKind;
    /// Whether ops of this kind need AES (and so start a new wave).
    fn crypto(kind: OpKind) -> bool;
    /// The bytes of the op's table in the stream when `ands` AND gates precede it.
    fn table_len(kind: OpKind, ands: u64) -> usize;
    /// The scheme's two numbers of the op ([`Op::aux`], [`Schedule::extra`]): `index` is
    /// its gate index, `offset` its byte offset in its window, `pos` its position there.
    fn aux(&mut self, kind: OpKind, index: u64, ands: u64, offset: usize, pos: usize)
        -> (u32, u32);
    /// Whether [`Op::aux`] is the gate index (else the AND index).
    const AUX_IS_GATE: bool;
    /// Lets go of what the rules keep per wire, once every gate is planned.
    fn release(&mut self) {}
    /// The bytes an op of `kind` at `offset` with `extra` writes from its offset (its table,
    /// and a mask byte before it): what a plan read from disk is checked against.
    fn table_end(kind: OpKind, offset: u32, extra: u32) -> usize;
}

/// In [`Core::value`]: a wire that ended or was never written.
pub(super) const DEAD: u32 = u32::MAX;

/// The source of a circuit whose every gate is planned.
struct Exhausted;

impl GateSource for Exhausted {
    fn next_batch(&mut self, _max: usize, batch: &mut GateBatch) -> bool {
        batch.clear();
        false
    }
}

/// How a planner gives slots: see the module documentation.
enum Mode {
    Whole(Whole),
    Fast(Fast),
}

/// Plans a circuit a segment at a time; see the module documentation.
pub(crate) struct Planner<'c, R> {
    core: Core<'c, R>,
    mode: Mode,
    /// Where the whole plan is kept between runs, and the plan found there.
    cache: Option<PlanCache>,
    cached: Option<Schedule>,
}

/// What a planner keeps whatever its [`Mode`].
struct Core<'c, R> {
    source: Box<dyn GateSource + 'c>,
    rules: R,
    batch: GateBatch,
    window: usize,
    /// Gates per segment (whole windows).
    segment: usize,
    constant: Option<u32>,
    /// Per wire number: its slot, or [`DEAD`] (empty when planned whole: ops name wires).
    value: Vec<u32>,
    /// The window's ops in circuit order, with their offsets and extras, and their sort keys.
    staged: Vec<(Op, u32, u32)>,
    keys: Vec<u32>,
    counts: Vec<u32>,
    /// Gates and AND gates planned so far.
    gates: u64,
    ands: u64,
    total_gates: u64,
    total_ands: u64,
    outputs: Vec<WireId>,
    done: bool,
}

impl<'c, R: Rules> Planner<'c, R> {
    /// A planner of `circuit` under `rules`, in the windows (a multiple of [`WINDOW_UNIT`]
    /// up to [`MAX_WINDOW`]) and segments `parallel` gives; plans nothing yet.
    pub(crate) fn new(circuit: &'c Circuit, parallel: &Parallel, rules: R) -> Self {
        let window = parallel.window();
        assert!(
            window >= WINDOW_UNIT && window.is_multiple_of(WINDOW_UNIT) && window <= MAX_WINDOW,
            "a window is a multiple of {WINDOW_UNIT} gates up to {MAX_WINDOW}"
        );
        assert!(
            circuit.num_gates() <= u64::from(u32::MAX),
            "a circuit of {} gates: garbling numbers gates in 32 bits",
            circuit.num_gates()
        );
        // One slot per wire number (unit tests) is one per wire only if none is reused.
        assert!(
            REUSE_SLOTS || !circuit.is_generated(),
            "unit tests plan circuits held in memory"
        );
        let wires = circuit.num_wires();
        let n_inputs = circuit.n_inputs() as u32;
        let constant = R::INV_AS_XOR.then_some(if REUSE_SLOTS { n_inputs } else { wires });
        let fixed = n_inputs + u32::from(constant.is_some() && REUSE_SLOTS);
        let segment = match parallel.segment() {
            Some(usize::MAX) => usize::MAX,
            Some(gates) => gates.div_ceil(window) * window,
            None if circuit.num_gates() <= PLAN_AHEAD_GATES => usize::MAX,
            None => SEGMENT_GATES.div_ceil(window) * window,
        };
        // Unit tests: one slot per wire, the constant after them, nothing freed.
        let pool = if REUSE_SLOTS {
            SlotPool::new(fixed, fixed)
        } else {
            SlotPool::new(n_inputs, slots_plus(wires, u32::from(constant.is_some())))
        };
        let whole = segment == usize::MAX && !circuit.is_generated();
        // A circuit planned whole names its wires in its ops until the end: no values.
        let mut value = Vec::new();
        if !whole {
            value = vec![DEAD; wires as usize];
            for (w, v) in value.iter_mut().enumerate().take(n_inputs as usize) {
                *v = w as u32;
            }
        }
        let mode = if whole {
            Mode::Whole(Whole::new(pool, wires))
        } else {
            Mode::Fast(Fast::new(pool))
        };
        let core = Core {
            source: circuit.source(!whole),
            rules,
            batch: GateBatch::default(),
            window,
            segment,
            constant,
            value,
            staged: Vec::with_capacity(window),
            keys: Vec::with_capacity(window),
            counts: Vec::new(),
            gates: 0,
            ands: 0,
            total_gates: circuit.num_gates(),
            total_ands: circuit.gate_counts()[0],
            outputs: circuit
                .outputs()
                .iter()
                .flat_map(|o| o.wires.iter().copied())
                .collect(),
            done: false,
        };
        let shape = cache::Shape {
            gates: circuit.num_gates(),
            ands: circuit.gate_counts()[0],
            outputs: circuit.n_outputs(),
            fixed,
            constant,
            table: R::table_end,
            aux_is_gate: R::AUX_IS_GATE,
        };
        let cache = parallel
            .plan_cache()
            .filter(|_| segment == usize::MAX)
            .map(|dir| PlanCache::new(dir, circuit, R::NAME, window, shape));
        let cached = cache.as_ref().and_then(|c| match c.load() {
            Ok(plan) => plan,
            Err(why) => {
                eprintln!("warning: plan cache: {why}; planning again");
                None
            }
        });
        Planner {
            core,
            mode,
            cache,
            cached,
        }
    }

    /// Plans the next segment into `s`, replacing the one it held; returns `false`, leaving
    /// `s` as it was, once the circuit is planned. The segment that ends the circuit also
    /// gives [`Schedule::outputs`].
    pub(crate) fn fill(&mut self, s: &mut Schedule) -> bool {
        let core = &mut self.core;
        if core.done {
            return false;
        }
        if let Some(plan) = self.cached.take() {
            *s = plan;
            core.done = true;
            self.release();
            return true;
        }
        s.clear_segment();
        if core.segment == usize::MAX {
            // The whole circuit: allocated once, not grown (and copied) window by window.
            let gates = core.total_gates as usize;
            s.ops.reserve_exact(gates);
            s.offset.reserve_exact(gates);
            s.extra.reserve_exact(gates);
            memory::prefer_huge_pages(&mut s.ops);
            memory::prefer_huge_pages(&mut s.offset);
            memory::prefer_huge_pages(&mut s.extra);
        }
        let mut planned = 0;
        // Done at the last gate (the circuit says how many), not when the source has none
        // left: a segment that ends with the circuit is its last, never one more, empty.
        core.done = core.gates == core.total_gates;
        while planned < core.segment && !core.done {
            assert!(
                core.source.next_batch(core.window, &mut core.batch),
                "the circuit's source ended after {} of its {} gates",
                core.gates,
                core.total_gates
            );
            planned += core.batch.gates.len();
            match &mut self.mode {
                Mode::Whole(slots) => core.plan_window(slots, s),
                Mode::Fast(slots) => core.plan_window(slots, s),
            }
            core.done = core.gates == core.total_gates;
        }
        s.constant = core.constant.map(|c| c as usize);
        let done = core.done;
        match &mut self.mode {
            Mode::Whole(slots) => {
                if core.done {
                    s.outputs = slots.complete(&mut s.ops, &core.outputs, core.constant);
                }
                s.slots = slots.pool().slots();
            }
            Mode::Fast(slots) => {
                s.slots = slots.pool().slots();
                if core.done {
                    s.outputs = core
                        .outputs
                        .iter()
                        .map(|&w| {
                            let v = core.value[w as usize];
                            assert!(v != DEAD, "output wire {w} ended before the last gate");
                            v
                        })
                        .collect();
                }
            }
        }
        // Only a plan of the whole circuit has a cache (see `new`), in either mode.
        if let Some(cache) = self.cache.as_ref().filter(|_| done) {
            if let Err(e) = cache.save(s) {
                let path = cache.path().display();
                eprintln!("warning: plan cache: cannot save {path}: {e}");
            }
        }
        if done {
            self.release();
        }
        true
    }

    /// Lets go of everything planning kept, once the last segment is planned: a garbler
    /// holds its plan, not the planner's tables, while it garbles (a serving garbler holds
    /// one per session).
    fn release(&mut self) {
        let core = &mut self.core;
        core.source = Box::new(Exhausted);
        core.batch = GateBatch::default();
        core.staged = Vec::new();
        core.keys = Vec::new();
        core.counts = Vec::new();
        core.value = Vec::new();
        core.rules.release();
        match &mut self.mode {
            Mode::Whole(slots) => slots.release(),
            Mode::Fast(slots) => slots.release(),
        }
    }

    /// Calls `each` on every segment of the circuit in turn.
    pub(crate) fn each_segment(mut self, mut each: impl FnMut(&Schedule)) {
        let mut s = Schedule::default();
        while self.fill(&mut s) {
            each(&s);
        }
    }

    /// Whether garbling or evaluation that has reached window `next_window` of `s`, the
    /// segment planned last, is past the circuit's last gate.
    pub(crate) fn finished(&self, s: &Schedule, next_window: usize) -> bool {
        self.core.done && next_window == s.windows.len()
    }

    /// Plans the next segment into `s` once the last is done, its first window next;
    /// `false` if there is none (see [`Planner::fill`]).
    pub(crate) fn advance(&mut self, s: &mut Schedule, next_window: &mut usize) -> bool {
        let more = self.fill(s);
        if more {
            *next_window = 0;
        }
        more
    }
}

impl<R: Rules> Core<'_, R> {
    /// Stages the batch's gates in circuit order: their ops (inputs and outputs as `slots`
    /// names them), offsets, extras and sort keys (counted in `counts`); passes the wires
    /// that end to `slots`. Returns the window's bytes, its last AND gate's position and its
    /// largest wave.
    fn stage(&mut self, slots: &mut impl Slots) -> (usize, Option<usize>, u32) {
        let Core {
            batch,
            rules,
            value,
            staged,
            keys,
            counts,
            ..
        } = self;
        let n = batch.gates.len();
        staged.clear();
        keys.clear();
        // Keys are below 3(n + 1); `counts` is all zeros between windows.
        if counts.len() < 3 * n + 4 {
            counts.resize(3 * n + 4, 0);
        }
        let fixed = slots.pool().fixed();
        let (mut offset, mut max_wave, mut last_and) = (0usize, 0u32, None);
        let ends = &batch.ends[..];
        let mut e = 0;
        for (pos, gate) in batch.gates.iter().enumerate() {
            let index = self.gates + pos as u64;
            let mut k = rules.kind(gate, index);
            let (a, b) = gate.inputs();
            let (ra, mut rb) = (slots.value(value, a), slots.value(value, b.unwrap_or(a)));
            assert!(
                ra != DEAD && rb != DEAD,
                "gate {index} reads a wire with no live value"
            );
            let (x, extra) = rules.aux(k, index, self.ands, offset, pos);
            if R::INV_AS_XOR && k == OpKind::Inv {
                k = OpKind::Xor;
                rb = slots.constant(self.constant.expect("a constant slot under INV_AS_XOR"));
            }
            let at = offset as u32;
            offset += R::table_len(k, self.ands);
            if matches!(gate, Gate::And { .. }) {
                self.ands += 1;
                last_and = Some(pos);
            }
            let mut wave = slots.wave(ra).max(slots.wave(rb));
            // Sort keys: 3k for the XOR gates among the crypto gates of wave k (`prf`'s),
            // 3k + 1 for its other crypto gates, 3k + 2 for its other gates.
            let key = if R::crypto(k) {
                wave += 1;
                3 * wave + u32::from(k != OpKind::Xor)
            } else {
                3 * wave + 2
            };
            max_wave = max_wave.max(wave);
            counts[key as usize + 1] += 1;
            keys.push(key);
            let out = gate.output();
            let r = slots.write(out, wave);
            slots.set_value(value, out, r);
            staged.push((Op::new(k, ra, rb, r, x), at, extra));
            while e < ends.len() && ends[e].0 as usize == pos {
                let w = ends[e].1 as usize;
                e += 1;
                let v = value[w];
                // Inputs keep their slots.
                if v != DEAD && v >= fixed {
                    slots.end(v);
                    value[w] = DEAD;
                }
            }
        }
        (offset, last_and, max_wave)
    }

    fn plan_window(&mut self, slots: &mut impl Slots, s: &mut Schedule) {
        let n = self.batch.gates.len();
        let start = self.gates;
        let (bytes, last_and, max_wave) = self.stage(slots);

        // Counting sort by key, stable: circuit order within each part of a wave.
        let n_keys = 3 * max_wave as usize + 3;
        let counts = &mut self.counts[..=n_keys];
        for k in 1..=n_keys {
            counts[k] += counts[k - 1];
        }
        let base = s.ops.len();
        let (first_op, _, _) = self.staged[0];
        s.ops.resize(base + n, first_op);
        s.offset.resize(base + n, 0);
        s.extra.resize(base + n, 0);
        let (ops, offsets, extras) = (
            &mut s.ops[base..],
            &mut s.offset[base..],
            &mut s.extra[base..],
        );
        let mut last_and_op = None;
        for (pos, (&key, &(op, offset, extra))) in self.keys.iter().zip(&self.staged).enumerate() {
            let slot = &mut counts[key as usize];
            let i = *slot as usize;
            *slot += 1;
            ops[i] = op;
            offsets[i] = offset;
            extras[i] = extra;
            if Some(pos) == last_and {
                last_and_op = Some(base + i);
            }
        }
        // After the sort counts[k] is the end of key k's part.
        let first_wave = s.waves.len();
        let b = base as u32;
        for wave in 0..=max_wave as usize {
            let crypto_start = if wave == 0 { 0 } else { counts[3 * wave - 1] };
            let (crypto_end, free_end) = (counts[3 * wave + 1], counts[3 * wave + 2]);
            if free_end > crypto_start {
                s.waves
                    .push((b + crypto_start..b + crypto_end, b + free_end));
            }
        }
        counts.fill(0);
        slots.finish(max_wave);
        s.windows.push(Window {
            gates: start as usize..start as usize + n,
            waves: first_wave..s.waves.len(),
            bytes,
            last_and: last_and_op,
            // `stage` counted the window's AND gates: all of them, if it has the last.
            final_and: last_and.is_some() && self.ands == self.total_ands,
        });
        self.gates += n as u64;
    }
}
