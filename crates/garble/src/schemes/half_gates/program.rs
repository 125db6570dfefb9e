//! The program garbler and evaluator of the half-gates schemes both follow: AND gates
//! hash, XOR gates (and INV gates, as XORs with a constant slot) are free; and the same
//! program packed into 8 bytes per gate, which the XOR loops and the fused AND kernels
//! stream.

use transputation_circuits::{Circuit, Gate};

use transputation_core::Block;

use crate::schemes::parallel::Parallel;
use crate::schemes::planner::{Planner, Rules};
use crate::schemes::waves::{pack_slots, unpack_slots, Op, OpKind, Schedule, PACKED_SLOTS};

/// Bytes of an AND gate's table in the half-gates schemes.
const HALF_GATES_AND_BYTES: usize = 32;

/// The rules of the half-gates program: AND gates are the crypto gates, 32 bytes each;
/// `aux` is the AND index, the tweak counter. INV gates are XORs with the constant slot
/// ([`Schedule::constant`]), which holds `Δ` for the garbler and 0 for the evaluator.
pub(crate) struct HalfGatesRules;

impl Rules for HalfGatesRules {
    const NAME: &'static str = "half-gates";
    const INV_AS_XOR: bool = true;

    fn kind(&mut self, gate: &Gate, _index: u64) -> OpKind {
        match gate {
            Gate::And { .. } => OpKind::And,
            Gate::Xor { .. } => OpKind::Xor,
            Gate::Inv { .. } => OpKind::Inv,
        }
    }

    fn crypto(kind: OpKind) -> bool {
        kind == OpKind::And
    }

    fn table_len(kind: OpKind, _ands: u64) -> usize {
        if kind == OpKind::And {
            HALF_GATES_AND_BYTES
        } else {
            0
        }
    }

    const AUX_IS_GATE: bool = false;

    fn table_end(kind: OpKind, _offset: u32, _extra: u32) -> usize {
        if kind == OpKind::And {
            HALF_GATES_AND_BYTES
        } else {
            0
        }
    }

    fn aux(&mut self, _: OpKind, _: u64, ands: u64, _: usize, _: usize) -> (u32, u32) {
        // The AND index fits: a planned circuit has fewer than 2^32 gates.
        (ands as u32, 0)
    }
}

/// The half-gates planner of `circuit`, in the windows and segments `parallel` gives.
pub(super) fn planner<'c>(
    circuit: &'c Circuit,
    parallel: &Parallel,
) -> Planner<'c, HalfGatesRules> {
    Planner::new(circuit, parallel, HalfGatesRules)
}

/// The free gates `ops` of a half-gates program, all XORs ([`schedule`]):
/// `table[out] = table[a] ⊕ table[b]`, in order.
#[inline]
pub(super) fn xor_gates(table: &mut [Block], ops: &[Op]) {
    for op in ops {
        debug_assert_eq!(op.kind(), OpKind::Xor, "INV gates are XORs here");
        let (a, b, out) = (op.a as usize, op.b as usize, op.out() as usize);
        table[out] = table[a] ^ table[b];
    }
}

/// A half-gates program in packed form, wave after wave: every gate's slots in 8 bytes
/// ([`pack_slots`]), the AND gates' indices beside theirs, and per window the index of its
/// first AND gate (an AND gate's table is at `32 · (n − first)` in its window). The XOR
/// loops and the fused AND kernels stream this instead of the 16-byte ops (whose `aux` an
/// XOR does not use) and the AND gates' 4-byte table offsets: 32 bytes of program per AND
/// gate of the MinCut-size circuit (2.5 XOR gates each) instead of 60. (`garble-bench` on
/// it, alternating, 5 rounds each: packing the XOR gates took 16.9 → 15.7 ns/AND garbling
/// and 12.6 → 11.8 evaluating, then packing the AND gates 15.85 → 15.34 and 11.32 → 10.93.)
/// Empty when the program has more than [`PACKED_SLOTS`] slots:
/// those keep the 16-byte ops, and their AND gates the staged kernels.
#[derive(Debug, Default)]
pub(super) struct Packed {
    /// The program's slots: every packed slot is below it (checked when packing), which
    /// lets the XOR loop index a label table of at least this length unchecked.
    slots: usize,
    /// Private, as `slots`: the unchecked XOR loop relies on what `new` put here.
    xors: Vec<u64>,
    /// `xors[xor_start[k]..xor_start[k + 1]]` are wave `k`'s free gates.
    xor_start: Vec<u32>,
    ands: Vec<u64>,
    and_index: Vec<u32>,
    /// `ands[and_start[k]..and_start[k + 1]]` (and `and_index`) are wave `k`'s AND gates.
    and_start: Vec<u32>,
    /// Per window, the AND index of its first AND gate.
    first_and: Vec<u32>,
}

impl Packed {
    pub(super) fn new(schedule: &Schedule) -> Packed {
        let (free, crypto): (usize, usize) =
            schedule.waves.iter().fold((0, 0), |(f, c), (w, end)| {
                (f + (end - w.end) as usize, c + w.len())
            });
        if schedule.slots > PACKED_SLOTS || u32::try_from(free.max(crypto)).is_err() {
            return Packed::default();
        }
        let waves = schedule.waves.len() + 1;
        let mut p = Packed {
            slots: schedule.slots as usize,
            xors: Vec::with_capacity(free),
            xor_start: Vec::with_capacity(waves),
            ands: Vec::with_capacity(crypto),
            and_index: Vec::with_capacity(crypto),
            and_start: Vec::with_capacity(waves),
            first_and: Vec::with_capacity(schedule.windows.len()),
        };
        for k in 0..schedule.waves.len() {
            p.xor_start.push(p.xors.len() as u32);
            p.and_start.push(p.ands.len() as u32);
            let (crypto, free) = schedule.wave(k);
            p.ands.extend(
                schedule.ops[crypto.clone()]
                    .iter()
                    .map(|op| pack_slots(op.a, op.b, op.out())),
            );
            p.and_index
                .extend(schedule.ops[crypto].iter().map(|op| op.aux));
            p.xors.extend(schedule.ops[free].iter().map(|op| {
                debug_assert_eq!(op.kind(), OpKind::Xor, "INV gates are XORs here");
                pack_slots(op.a, op.b, op.out())
            }));
        }
        // What `xor_gates_packed` relies on: no free gate's slot at or past `slots`.
        let bound = p.slots;
        if p.xors.iter().any(|&x| {
            let (a, b, out) = unpack_slots(x);
            a.max(b).max(out) >= bound
        }) {
            return Packed::default();
        }
        p.xor_start.push(p.xors.len() as u32);
        p.and_start.push(p.ands.len() as u32);
        // Each window's first AND index, from its AND gates' offsets (tables in AND order);
        // a program where they disagree keeps the unpacked form.
        for w in &schedule.windows {
            let mut first = None;
            for k in w.waves.clone() {
                for i in schedule.wave(k).0 {
                    let (n, off) = (schedule.ops[i].aux, schedule.offset[i]);
                    let f = n.wrapping_sub(off / 32);
                    if off % 32 != 0 || first.is_some_and(|x| x != f) {
                        return Packed::default();
                    }
                    first = Some(f);
                }
            }
            p.first_and.push(first.unwrap_or(0));
        }
        p
    }

    /// Whether the program is packed (it has free gates and at most [`PACKED_SLOTS`]
    /// slots).
    #[cfg(test)]
    pub(super) fn is_packed(&self) -> bool {
        !self.xors.is_empty()
    }

    /// Wave `k`'s packed free gates, if the program is packed.
    pub(super) fn xors(&self, k: usize) -> Option<PackedXors<'_>> {
        let (&from, &to) = (self.xor_start.get(k)?, self.xor_start.get(k + 1)?);
        Some(PackedXors {
            ops: &self.xors[from as usize..to as usize],
            slots: self.slots,
        })
    }

    /// Wave `k`'s packed AND gates, their indices and window `w`'s first AND index, if the
    /// program is packed.
    pub(super) fn ands(&self, k: usize, w: usize) -> Option<(&[u64], &[u32], u32)> {
        let (&from, &to) = (self.and_start.get(k)?, self.and_start.get(k + 1)?);
        let range = from as usize..to as usize;
        Some((
            &self.ands[range.clone()],
            &self.and_index[range],
            *self.first_and.get(w)?,
        ))
    }
}

/// A wave's packed free gates ([`Packed::xors`]), every slot below `slots`.
#[derive(Clone, Copy, Debug)]
pub(super) struct PackedXors<'a> {
    ops: &'a [u64],
    slots: usize,
}

/// [`xor_gates`] from packed ops, indexing `table` (at least the program's slots long)
/// without three bounds checks per gate. The XOR gates are about a third of `ideal`'s time
/// on the MinCut size; on Zen 3 (`garble-compare.py 7`, twice, medians) evaluating it took
/// 11.59 → 10.77 and 12.34 → 11.22 ns per AND gate, garbling 16.29 → 15.63 and
/// 15.97 → 15.80; `sha-256.txt` unchanged (15.50 → 15.56, 9.93 → 9.72).
#[inline]
#[allow(unsafe_code)]
pub(super) fn xor_gates_packed(table: &mut [Block], xors: PackedXors<'_>) {
    assert!(
        table.len() >= xors.slots,
        "the label table holds every slot"
    );
    let t = table.as_mut_ptr();
    for &p in xors.ops {
        let (a, b, out) = unpack_slots(p);
        // SAFETY: `Packed::new` keeps only programs whose free gates' slots are all below
        // `xors.slots`, which the table's length reaches (asserted above); the reads finish
        // before the write, so an output slot equal to an input one is fine.
        unsafe { *t.add(out) = *t.add(a) ^ *t.add(b) };
    }
}
