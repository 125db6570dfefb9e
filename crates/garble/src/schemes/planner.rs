//! Planning a circuit's program ([`Schedule`]) from its gate source, a segment of windows at
//! a time, with memory bounded by the wires alive at once and not by the circuit.
//!
//! The waves and slots are those the `waves` module documentation describes. What makes
//! them plannable a window at a time is the source's *wire ends* (the circuits crate's
//! `source` module): a wire's slot is freed after its last reader in processing order
//! within the window where it ends (right after its writer when it ends unread, at the
//! window's start when it ends after its last reader, in an earlier window). For a circuit
//! held in memory, whose wires end at their last reader, this gives exactly the slots of a
//! plan of the whole circuit at once. Per wire number the planner keeps one `u32` (its slot,
//! or its place in the current window); per slot two; everything else is per window.
//!
//! A circuit of at most [`PLAN_AHEAD_GATES`] gates is planned whole when its garbler or
//! evaluator is made (before a session's network starts); a larger one
//! [`SEGMENT_GATES`] at a time as garbling and evaluation reach the end of the last segment,
//! so that set-up no longer grows with the circuit and the program in memory stays a few
//! megabytes.

use transputation_circuits::{Circuit, Gate, GateBatch, GateSource, WireId};

use super::parallel::Parallel;
use super::waves::{
    slots_plus, Op, OpKind, Schedule, Window, MAX_WINDOW, REUSE_SLOTS, WINDOW_UNIT,
};

/// Circuits of at most this many gates are planned whole, before garbling starts.
pub(crate) const PLAN_AHEAD_GATES: u64 = 1 << 22;
/// Gates per segment of a larger circuit (rounded up to whole windows): 16 MB of program.
pub(crate) const SEGMENT_GATES: usize = 1 << 19;

/// What a scheme makes of each gate; the planner calls these in circuit order.
pub(crate) trait Rules: Send {
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
}

/// In [`Planner::value`] and in a staged op's inputs: a wire written in the current window,
/// `LOCAL | position`.
const LOCAL: u32 = 1 << 31;
/// In [`Planner::value`]: a wire that ended or was never written.
const DEAD: u32 = u32::MAX;
/// No read of a slot or value in the window.
const NONE: u32 = u32::MAX;

/// Per position of the current window.
#[derive(Default)]
struct Locals {
    wave: Vec<u32>,
    last_read: Vec<u32>,
    ended: Vec<bool>,
    slot: Vec<u32>,
    wire: Vec<WireId>,
}

/// Plans a circuit a segment at a time; see the module documentation.
pub(crate) struct Planner<'c, R> {
    source: Box<dyn GateSource + 'c>,
    rules: R,
    batch: GateBatch,
    window: usize,
    /// Gates per segment (whole windows).
    segment: usize,
    /// Slots never freed: the inputs' and the constant's.
    fixed: u32,
    constant: Option<u32>,
    /// Per wire number: the slot of its label, `LOCAL | position`, or [`DEAD`].
    value: Vec<u32>,
    free: Vec<u32>,
    next_slot: u32,
    /// Per slot: the window (numbered from 1) in which its wire ended, and the last op
    /// reading it there.
    ended_in: Vec<u32>,
    slot_last_read: Vec<u32>,
    locals: Locals,
    staged: Vec<(Op, u32, u32)>,
    keys: Vec<u32>,
    counts: Vec<u32>,
    ended_slots: Vec<u32>,
    /// Gates, AND gates and windows planned so far.
    gates: u64,
    ands: u64,
    windows: u32,
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
        let wires = circuit.num_wires();
        let n_inputs = circuit.n_inputs() as u32;
        let constant = R::INV_AS_XOR.then_some(if REUSE_SLOTS { n_inputs } else { wires });
        let fixed = n_inputs + u32::from(constant.is_some() && REUSE_SLOTS);
        let mut value = vec![DEAD; wires as usize];
        for (w, v) in value.iter_mut().enumerate().take(n_inputs as usize) {
            *v = w as u32;
        }
        let segment = match parallel.segment() {
            Some(gates) => gates.div_ceil(window) * window,
            None if circuit.num_gates() <= PLAN_AHEAD_GATES => usize::MAX,
            None => SEGMENT_GATES.div_ceil(window) * window,
        };
        let next_slot = if REUSE_SLOTS { fixed } else { wires };
        // Per slot, from the first that can be freed (unit tests: one more, the constant).
        let per_slot = next_slot as usize + usize::from(!REUSE_SLOTS);
        Planner {
            source: circuit.source(true),
            rules,
            batch: GateBatch::default(),
            window,
            segment,
            fixed,
            constant,
            value,
            free: Vec::new(),
            next_slot,
            ended_in: vec![0; per_slot],
            slot_last_read: vec![NONE; per_slot],
            locals: Locals::default(),
            staged: Vec::with_capacity(window),
            keys: Vec::with_capacity(window),
            counts: Vec::new(),
            ended_slots: Vec::new(),
            gates: 0,
            ands: 0,
            windows: 0,
            total_ands: circuit.gate_counts()[0],
            outputs: circuit
                .outputs()
                .iter()
                .flat_map(|o| o.wires.iter().copied())
                .collect(),
            done: false,
        }
    }

    /// Plans the next segment into `s`, replacing the one it held; returns `false`, leaving
    /// `s` as it was, once the circuit is planned. The segment that ends the circuit also
    /// gives [`Schedule::outputs`].
    pub(crate) fn fill(&mut self, s: &mut Schedule) -> bool {
        if self.done {
            return false;
        }
        s.clear_segment();
        let mut planned = 0;
        while planned < self.segment {
            if !self.source.next_batch(self.window, &mut self.batch) {
                self.done = true;
                break;
            }
            planned += self.batch.gates.len();
            self.plan_window(s);
        }
        s.slots = if REUSE_SLOTS {
            self.next_slot
        } else {
            slots_plus(self.next_slot, u32::from(self.constant.is_some()))
        };
        s.constant = self.constant.map(|c| c as usize);
        if self.done {
            s.outputs = self
                .outputs
                .iter()
                .map(|&w| {
                    let v = self.value[w as usize];
                    assert!(v < LOCAL, "output wire {w} ended before the last gate");
                    v
                })
                .collect();
        }
        true
    }

    /// Calls `each` on every segment of the circuit in turn.
    pub(crate) fn each_segment(mut self, mut each: impl FnMut(&Schedule)) {
        let mut s = Schedule::default();
        while self.fill(&mut s) {
            each(&s);
        }
    }

    /// Whether every gate is planned.
    pub(crate) fn is_done(&self) -> bool {
        self.done
    }

    /// Stages the batch's gates in circuit order: their ops (inputs as slots or window
    /// positions), waves and sort keys; marks the wires that end. Returns the window's
    /// bytes, its last AND gate's position and its largest wave.
    fn stage(&mut self) -> (usize, Option<usize>, u32) {
        let n = self.batch.gates.len();
        let stamp = self.windows + 1;
        let l = &mut self.locals;
        if l.wave.len() < n {
            l.wave.resize(n, 0);
            l.last_read.resize(n, NONE);
            l.ended.resize(n, false);
            l.slot.resize(n, 0);
            l.wire.resize(n, 0);
        }
        self.staged.clear();
        self.keys.clear();
        self.ended_slots.clear();
        let (mut offset, mut max_wave, mut last_and) = (0usize, 0u32, None);
        let mut ends = self.batch.ends.iter().peekable();
        for (pos, gate) in self.batch.gates.iter().enumerate() {
            let index = self.gates + pos as u64;
            let mut k = self.rules.kind(gate, index);
            let (a, b) = gate.inputs();
            let read = |w: WireId| {
                let v = self.value[w as usize];
                assert!(
                    v != DEAD,
                    "gate {index} reads wire {w}, which has no live value"
                );
                v
            };
            let (ra, mut rb) = (read(a), read(b.unwrap_or(a)));
            let (x, extra) = self.rules.aux(k, index, self.ands, offset, pos);
            if R::INV_AS_XOR && k == OpKind::Inv {
                k = OpKind::Xor;
                rb = self.constant.expect("a constant slot under INV_AS_XOR");
            }
            self.staged
                .push((Op::new(k, ra, rb, pos as u32, x), offset as u32, extra));
            offset += R::table_len(k, self.ands);
            if matches!(gate, Gate::And { .. }) {
                self.ands += 1;
                last_and = Some(pos);
            }
            let wave_of = |r: u32| {
                if r & LOCAL != 0 {
                    l.wave[(r & !LOCAL) as usize]
                } else {
                    0
                }
            };
            let mut wave = wave_of(ra).max(wave_of(rb));
            // Sort keys: 3k for the XOR gates among the crypto gates of wave k (`prf`'s),
            // 3k + 1 for its other crypto gates, 3k + 2 for its other gates.
            let key = if R::crypto(k) {
                wave += 1;
                3 * wave + u32::from(k != OpKind::Xor)
            } else {
                3 * wave + 2
            };
            max_wave = max_wave.max(wave);
            self.keys.push(key);
            l.wave[pos] = wave;
            l.last_read[pos] = NONE;
            l.ended[pos] = false;
            let out = gate.output();
            l.wire[pos] = out;
            self.value[out as usize] = LOCAL | pos as u32;
            while let Some(&(_, w)) = ends.next_if(|&&(p, _)| p as usize == pos) {
                let v = self.value[w as usize];
                if v == DEAD || v < self.fixed {
                    // Inputs keep their slots.
                    continue;
                } else if v & LOCAL != 0 {
                    l.ended[(v & !LOCAL) as usize] = true;
                } else {
                    self.ended_in[v as usize] = stamp;
                    self.slot_last_read[v as usize] = NONE;
                    self.ended_slots.push(v);
                }
                self.value[w as usize] = DEAD;
            }
        }
        (offset, last_and, max_wave)
    }

    fn plan_window(&mut self, s: &mut Schedule) {
        let n = self.batch.gates.len();
        let start = self.gates;
        let (bytes, last_and, max_wave) = self.stage();

        // Counting sort by key, stable: circuit order within each part of a wave.
        let n_keys = 3 * max_wave as usize + 3;
        self.counts.clear();
        self.counts.resize(n_keys + 1, 0);
        for &k in &self.keys {
            self.counts[k as usize + 1] += 1;
        }
        for k in 1..=n_keys {
            self.counts[k] += self.counts[k - 1];
        }
        let base = s.ops.len() as u32;
        let (first_op, _, _) = self.staged[0];
        s.ops.resize(s.ops.len() + n, first_op);
        s.offset.resize(s.ops.len(), 0);
        s.extra.resize(s.ops.len(), 0);
        let mut last_and_op = None;
        for (pos, (&k, &(op, offset, extra))) in self.keys.iter().zip(&self.staged).enumerate() {
            let slot = &mut self.counts[k as usize];
            let i = (base + *slot) as usize;
            s.ops[i] = op;
            s.offset[i] = offset;
            s.extra[i] = extra;
            if Some(pos) == last_and {
                last_and_op = Some(i - base as usize);
            }
            *slot += 1;
        }
        // After the sort counts[k] is the end of key k's part.
        let first_wave = s.waves.len();
        for wave in 0..=max_wave as usize {
            let c = &self.counts;
            let crypto_start = if wave == 0 { 0 } else { c[3 * wave - 1] };
            let (crypto_end, free_end) = (c[3 * wave + 1], c[3 * wave + 2]);
            if free_end > crypto_start {
                s.waves
                    .push((base + crypto_start..base + crypto_end, base + free_end));
            }
        }
        self.assign_slots(&mut s.ops[base as usize..]);
        s.windows.push(Window {
            gates: start as usize..start as usize + n,
            waves: first_wave..s.waves.len(),
            bytes,
            last_and: last_and_op.map(|i| i + base as usize),
            // `stage` counted the window's AND gates: all of them, if it has the last.
            final_and: last_and.is_some() && self.ands == self.total_ands,
        });
        self.gates += n as u64;
        self.windows += 1;
    }

    /// Gives the window's ops (in processing order) their slots: each output the slot most
    /// recently freed, or a new one; a wire's slot is freed after its last reader when it
    /// ends in this window (see the module documentation).
    fn assign_slots(&mut self, ops: &mut [Op]) {
        let stamp = self.windows + 1;
        let l = &mut self.locals;
        for (i, op) in ops.iter().enumerate() {
            let inputs = [op.a, op.b];
            let distinct = if op.a == op.b {
                &inputs[..1]
            } else {
                &inputs[..]
            };
            for &r in distinct {
                if r & LOCAL != 0 {
                    l.last_read[(r & !LOCAL) as usize] = i as u32;
                } else if r >= self.fixed && self.ended_in[r as usize] == stamp {
                    self.slot_last_read[r as usize] = i as u32;
                }
            }
        }
        if REUSE_SLOTS {
            for &slot in &self.ended_slots {
                if self.slot_last_read[slot as usize] == NONE {
                    self.free.push(slot);
                }
            }
        }
        for (i, op) in ops.iter_mut().enumerate() {
            let (a, b, pos) = (op.a, op.b, op.out() as usize);
            let slot = if REUSE_SLOTS {
                let inputs = [a, b];
                let distinct = if a == b { &inputs[..1] } else { &inputs[..] };
                for &r in distinct {
                    if r & LOCAL != 0 {
                        let p = (r & !LOCAL) as usize;
                        if l.ended[p] && l.last_read[p] == i as u32 {
                            self.free.push(l.slot[p]);
                        }
                    } else if r >= self.fixed
                        && self.ended_in[r as usize] == stamp
                        && self.slot_last_read[r as usize] == i as u32
                    {
                        self.free.push(r);
                    }
                }
                match self.free.pop() {
                    Some(slot) => slot,
                    None => {
                        let slot = self.next_slot;
                        self.next_slot = slots_plus(slot, 1);
                        self.ended_in.push(0);
                        self.slot_last_read.push(NONE);
                        slot
                    }
                }
            } else {
                l.wire[pos]
            };
            let resolve = |r: u32| {
                if r & LOCAL != 0 {
                    l.slot[(r & !LOCAL) as usize]
                } else {
                    r
                }
            };
            op.a = resolve(a);
            op.b = resolve(b);
            op.set_out(slot);
            l.slot[pos] = slot;
            if REUSE_SLOTS && l.ended[pos] && l.last_read[pos] == NONE {
                self.free.push(slot);
            }
        }
        // The window's wires that live on keep their slots by wire number.
        for (pos, &w) in l.wire[..ops.len()].iter().enumerate() {
            if self.value[w as usize] == LOCAL | pos as u32 {
                self.value[w as usize] = l.slot[pos];
            }
        }
    }
}
