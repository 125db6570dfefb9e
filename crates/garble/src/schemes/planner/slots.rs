//! The two ways a planner gives slots (the `planner` module documentation): [`Whole`], in
//! processing order once the whole circuit is staged, and [`Fast`], as gates are staged.

use transputation_circuits::WireId;

use crate::schemes::waves::{slots_plus, Op, REUSE_SLOTS};

/// The slots handed out so far and those free to take.
pub(super) struct SlotPool {
    /// Slots below this are never freed: the inputs' and the constant's.
    fixed: u32,
    next: u32,
    /// Free slots, the most recently freed last.
    free: Vec<u32>,
}

impl SlotPool {
    /// A pool whose first `fixed` slots are never freed and whose next new slot is `next`.
    pub(super) fn new(fixed: u32, next: u32) -> SlotPool {
        SlotPool {
            fixed,
            next,
            free: Vec::new(),
        }
    }

    pub(super) fn fixed(&self) -> u32 {
        self.fixed
    }

    /// Slots the label tables need so far.
    pub(super) fn slots(&self) -> u32 {
        self.next
    }

    /// The slot most recently freed, or a new one.
    #[inline(always)]
    fn take(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            let slot = self.next;
            self.next = slots_plus(slot, 1);
            slot
        })
    }
}

/// How a mode names and frees the slots of a window's ops.
pub(super) trait Slots {
    fn pool(&self) -> &SlotPool;
    /// How an op names the label of wire `w`: `value[w]`, its slot.
    #[inline(always)]
    fn value(&self, value: &[u32], w: WireId) -> u32 {
        value[w as usize]
    }
    /// Records that wire `w` is now named `r`.
    #[inline(always)]
    fn set_value(&self, value: &mut [u32], w: WireId, r: u32) {
        value[w as usize] = r;
    }
    /// The wave in which the label an op reads (`r`, as `write` named it, or a slot) is
    /// ready: 0 if before the window.
    fn wave(&self, r: u32) -> u32;
    /// Names the output of the gate writing wire `out` in wave `wave`: the wire's per-wire
    /// value and its op's output.
    fn write(&mut self, out: WireId, wave: u32) -> u32;
    /// How an op names the constant slot `slot` that INV gates read under half gates.
    fn constant(&self, slot: u32) -> u32 {
        slot
    }
    /// The wire whose value is `v` (not an input's) ended.
    fn end(&mut self, v: u32);
    /// The window, of `max_wave + 1` waves, is planned.
    fn finish(&mut self, max_wave: u32);
}

/// Past this epoch the ready waves start over (see [`Ready`]).
const EPOCH_LIMIT: u32 = 1 << 31;

/// Per slot (or per wire, in [`Whole`]): `epoch + k` if its label is written in wave `k` of
/// the current window; anything below `epoch` is ready before the window.
struct Ready {
    at: Vec<u32>,
    epoch: u32,
}

impl Ready {
    fn new(n: usize) -> Ready {
        Ready {
            at: vec![0; n],
            epoch: 1,
        }
    }

    /// The wave of the current window in which `r` is ready: 0 if before it.
    #[inline(always)]
    fn wave(&self, r: u32) -> u32 {
        self.at[r as usize].saturating_sub(self.epoch)
    }

    /// `r` is written in wave `wave` of the current window.
    #[inline(always)]
    fn set(&mut self, r: u32, wave: u32) {
        if r as usize >= self.at.len() {
            self.at.resize(r as usize + 1, 0);
        }
        self.at[r as usize] = self.epoch + wave;
    }

    /// The window of `max_wave + 1` waves is over: everything in it is ready before the next.
    fn next_window(&mut self, max_wave: u32) {
        self.epoch += max_wave + 1;
        if self.epoch > EPOCH_LIMIT {
            self.at.fill(0);
            self.epoch = 1;
        }
    }
}

/// Slots given as gates are staged, freed at the end of the window where their wire ends.
pub(super) struct Fast {
    pool: SlotPool,
    ready: Ready,
    /// The slots of the wires that ended in the current window.
    ended: Vec<u32>,
}

impl Fast {
    /// Lets go of the tables planning needs.
    pub(super) fn release(&mut self) {
        self.ready = Ready::new(0);
        self.ended = Vec::new();
        self.pool.free = Vec::new();
    }

    pub(super) fn new(pool: SlotPool) -> Fast {
        Fast {
            ready: Ready::new(pool.next as usize),
            pool,
            ended: Vec::new(),
        }
    }
}

impl Slots for Fast {
    fn pool(&self) -> &SlotPool {
        &self.pool
    }

    #[inline(always)]
    fn wave(&self, r: u32) -> u32 {
        self.ready.wave(r)
    }

    #[inline(always)]
    fn write(&mut self, out: WireId, wave: u32) -> u32 {
        let slot = if REUSE_SLOTS { self.pool.take() } else { out };
        self.ready.set(slot, wave);
        slot
    }

    #[inline(always)]
    fn end(&mut self, v: u32) {
        self.ended.push(v);
    }

    fn finish(&mut self, max_wave: u32) {
        if REUSE_SLOTS {
            self.pool.free.append(&mut self.ended);
        }
        self.ended.clear();
        self.ready.next_window(max_wave);
    }
}

/// Slots given once the whole circuit is staged, as the circuit is held in memory and its
/// wires are written once: ops name wires until then, and a last pass in processing order
/// gives each output the slot most recently freed, a wire's slot freed after its last
/// reader (right after its writer if nothing reads it), outputs never. The label tables then
/// hold exactly the wires alive at once. One `u32` per wire for its ready wave, and at the
/// end two more.
pub(super) struct Whole {
    pool: SlotPool,
    /// Per wire (and the constant, named `wires`).
    ready: Ready,
    wires: u32,
}

impl Whole {
    /// Lets go of the tables planning needs.
    pub(super) fn release(&mut self) {
        self.ready = Ready::new(0);
        self.pool.free = Vec::new();
    }

    pub(super) fn new(pool: SlotPool, wires: u32) -> Whole {
        Whole {
            pool,
            ready: Ready::new(wires as usize + 1),
            wires,
        }
    }

    /// Gives the ops of the whole circuit (`ops`, naming wires) their slots; returns the
    /// slots of `outputs`, whose wires are never freed.
    pub(super) fn complete(
        &mut self,
        ops: &mut [Op],
        outputs: &[WireId],
        constant: Option<u32>,
    ) -> Vec<u32> {
        const NEVER: u32 = u32::MAX;
        let wires = self.wires as usize;
        // The last op reading each wire, outputs read after the last op; in the table of
        // ready waves, which staging no longer needs (no new pages for it).
        let last_read = &mut self.ready.at;
        last_read.fill(NEVER - 1);
        for (i, op) in ops.iter().enumerate() {
            last_read[op.a as usize] = i as u32;
            last_read[op.b as usize] = i as u32;
        }
        for &w in outputs {
            last_read[w as usize] = NEVER;
        }
        // Inputs keep slot = wire; the constant its slot.
        let mut slot_of: Vec<u32> = (0..=self.wires).collect();
        if let Some(c) = constant {
            slot_of[wires] = c;
        }
        let fixed = self.pool.fixed;
        let last_read = &self.ready.at;
        for (i, op) in ops.iter_mut().enumerate() {
            let (a, b, out) = (op.a, op.b, op.out());
            if REUSE_SLOTS {
                let inputs = [a, b];
                let distinct = if a == b { &inputs[..1] } else { &inputs[..] };
                for &w in distinct {
                    let slot = slot_of[w as usize];
                    if last_read[w as usize] == i as u32 && slot >= fixed && w != self.wires {
                        self.pool.free.push(slot);
                    }
                }
            }
            let slot = if REUSE_SLOTS { self.pool.take() } else { out };
            *op = Op::new(
                op.kind(),
                slot_of[a as usize],
                slot_of[b as usize],
                slot,
                op.aux,
            );
            slot_of[out as usize] = slot;
            if REUSE_SLOTS && last_read[out as usize] == NEVER - 1 {
                self.pool.free.push(slot);
            }
        }
        outputs.iter().map(|&w| slot_of[w as usize]).collect()
    }
}

impl Slots for Whole {
    fn pool(&self) -> &SlotPool {
        &self.pool
    }

    #[inline(always)]
    fn value(&self, _value: &[u32], w: WireId) -> u32 {
        w
    }

    #[inline(always)]
    fn set_value(&self, _value: &mut [u32], _w: WireId, _r: u32) {}

    #[inline(always)]
    fn wave(&self, r: u32) -> u32 {
        self.ready.wave(r)
    }

    #[inline(always)]
    fn write(&mut self, out: WireId, wave: u32) -> u32 {
        self.ready.set(out, wave);
        out
    }

    fn constant(&self, _slot: u32) -> u32 {
        self.wires
    }

    fn end(&mut self, _v: u32) {
        unreachable!("a circuit planned whole is read without wire ends");
    }

    fn finish(&mut self, max_wave: u32) {
        self.ready.next_window(max_wave);
    }
}
