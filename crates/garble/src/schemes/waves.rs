//! The garbling program of a circuit: gates in the order they are garbled, batched in waves,
//! with wire labels kept in reused slots. Planned once per circuit, at set-up, identically by
//! garbler and evaluator.
//!
//! # Waves
//! Tables are written in circuit order (each gate's table has its place in the stream),
//! but the AES calls of independent gates are batched. The circuit is cut into windows of
//! consecutive gates ([`WINDOW`] by default, any multiple of 128 by
//! [`Parallel::with_window`](super::Parallel::with_window)); in a window every gate gets a *wave*: a gate that needs
//! AES (a "crypto" gate: AND, and XOR under `prf`) is in the wave after the latest of its
//! inputs, any other gate in the wave of its latest input. Wave `k` is processed as all its
//! crypto gates in one batch (its XOR gates first, then its AND gates, each in circuit
//! order, so that `prf` runs each kind in one go), then its other gates in circuit order;
//! every input is then ready when it is read, and a batch holds every gate of the window
//! that could run at that point, not just a run of consecutive ones (ripple-carry adders
//! overlap across a window).
//!
//! # Slots
//! A wire's label is needed from the gate that writes it to the last gate that reads it.
//! Labels live in *slots*: input wire `i` in slot `i`, never reused; every gate's output
//! wire in a slot freed by a wire that ended, the most recently freed first (its line is the
//! likeliest still in the cache), or a new one. A wire ends where the circuit's source says
//! no later gate reads it (after its last reader, for a circuit held in memory); output wires
//! never end. Ops run in processing order, or in groups that read all their inputs before
//! writing any output: an output may take the slot of an input of its own op or of an
//! earlier one, never of a later op's input, still alive. The gates' slots then stay packed
//! after the inputs, about as many as wires are alive at once, however many gates the
//! circuit has (the MinCut size has 500,000 input wires and about 3,000 gate slots: 50 KiB
//! of labels that stay in a core's cache). The `planner` module gives the slots, a window
//! at a time. (The crate's own unit tests, which inspect labels by wire, get one slot per
//! wire.)
//!
//! # Cost
//! 24 bytes per gate of a segment (16 for the op, which garbling streams through, and 8 read
//! only for gates with tables) and 12 per wave; planning keeps a `u32` per wire number and
//! one or two per slot.

use std::ops::Range;

use transputation_circuits::WireId;

use super::interface::EvalError;

/// Gates per window by default.
pub(crate) const WINDOW: usize = 8192;
/// Windows are multiples of this many gates: `prf` draws its permute bits 128 gates at a
/// time per window, so that they follow gate order whatever the window size.
pub(crate) const WINDOW_UNIT: usize = 128;
/// The largest window: its tables' offsets (33 bytes per `prf` AND gate) fit in `u32`.
pub(crate) const MAX_WINDOW: usize = 1 << 24;

/// Whether wires share slots (see the module documentation).
pub(crate) const REUSE_SLOTS: bool = !cfg!(test);

/// What an op does; the schemes give the kinds their meaning.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub(crate) enum OpKind {
    Xor = 0,
    And = 1,
    Inv = 2,
    /// `AND(a, a)` under `prf`: copies `a`.
    AndCopy = 3,
    /// `AND(a, NOT a)` under `prf`: the constant 0.
    AndZero = 4,
}

/// Bits of a slot in a packed op ([`pack_slots`]).
pub(crate) const PACKED_BITS: u32 = 21;
/// The largest program whose slots fit a packed op.
pub(crate) const PACKED_SLOTS: u32 = 1 << PACKED_BITS;
const PACKED_MASK: u64 = (1 << PACKED_BITS) - 1;

/// A gate's three slots in 8 bytes, `a | b << 21 | out << 42`, for programs of at most
/// [`PACKED_SLOTS`] slots: the form in which the half-gates loops stream their gates.
#[inline(always)]
pub(crate) fn pack_slots(a: u32, b: u32, out: u32) -> u64 {
    debug_assert!(a < PACKED_SLOTS && b < PACKED_SLOTS && out < PACKED_SLOTS);
    u64::from(a) | u64::from(b) << PACKED_BITS | u64::from(out) << (2 * PACKED_BITS)
}

/// The slots `(a, b, out)` of a packed op.
#[inline(always)]
pub(crate) fn unpack_slots(p: u64) -> (usize, usize, usize) {
    (
        (p & PACKED_MASK) as usize,
        ((p >> PACKED_BITS) & PACKED_MASK) as usize,
        (p >> (2 * PACKED_BITS)) as usize,
    )
}

/// One gate as garbled: its slots, its kind and the scheme's number for it, in 16 bytes
/// (garbling streams through the ops, so their size is memory traffic).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Op {
    /// Slots of the inputs (`b == a` for INV).
    pub a: u32,
    pub b: u32,
    /// The output slot in the low 29 bits, the kind in the top 3.
    out_kind: u32,
    /// The scheme's number: the AND index for the half-gates tweaks, the gate index for
    /// `prf`'s PRF inputs.
    pub aux: u32,
}

impl Op {
    const KIND_SHIFT: u32 = 29;
    /// The most slots a program may use.
    pub const MAX_SLOTS: u32 = 1 << Op::KIND_SHIFT;

    pub(crate) fn new(kind: OpKind, a: u32, b: u32, out: u32, aux: u32) -> Op {
        Op {
            a,
            b,
            out_kind: out | ((kind as u32) << Op::KIND_SHIFT),
            aux,
        }
    }

    /// The output slot.
    #[inline(always)]
    pub fn out(&self) -> u32 {
        self.out_kind & (Op::MAX_SLOTS - 1)
    }

    /// The op as four numbers: `a`, `b`, output and kind, `aux` (for a plan on disk).
    pub(crate) fn to_raw(self) -> [u32; 4] {
        [self.a, self.b, self.out_kind, self.aux]
    }

    /// An op from [`Op::to_raw`]'s numbers, if its kind is one.
    pub(crate) fn from_raw([a, b, out_kind, aux]: [u32; 4]) -> Option<Op> {
        (out_kind >> Op::KIND_SHIFT <= OpKind::AndZero as u32).then_some(Op {
            a,
            b,
            out_kind,
            aux,
        })
    }

    /// What the op does.
    #[inline(always)]
    pub fn kind(&self) -> OpKind {
        match self.out_kind >> Op::KIND_SHIFT {
            0 => OpKind::Xor,
            1 => OpKind::And,
            2 => OpKind::Inv,
            3 => OpKind::AndCopy,
            _ => OpKind::AndZero,
        }
    }
}

/// One window: its waves and bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// The window's gates (circuit indices).
    pub gates: Range<usize>,
    /// Its waves, as indices into [`Schedule::waves`].
    pub waves: Range<usize>,
    /// Bytes of its tables in the stream.
    pub bytes: usize,
    /// The op of its last AND gate, if it has one.
    pub last_and: Option<usize>,
    /// Whether that is the circuit's last AND gate.
    pub final_and: bool,
}

/// The program of a circuit, or of a segment of its windows when it is planned as it is
/// garbled (the `planner` module); see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    /// Every gate of the segment in processing order, window after window.
    pub ops: Vec<Op>,
    /// Per op: the offset of its bytes from its window's start.
    pub offset: Vec<u32>,
    /// Per op: a second number of the scheme's (`prf`: the mask byte's offset).
    pub extra: Vec<u32>,
    /// Per wave: `ops[crypto]` are its crypto gates, `ops[crypto.end..free_end]` the others.
    pub waves: Vec<(Range<u32>, u32)>,
    /// The segment's windows; their gate ranges count from the circuit's first gate.
    pub windows: Vec<Window>,
    /// Slots the label tables need so far (input wire `i` is in slot `i`).
    pub slots: u32,
    /// The slot of the constant that INV gates add, under schemes that make them XORs
    /// (half gates: `Δ` for the garbler, 0 for the evaluator), so that every free gate is
    /// the same XOR, with no test of its kind.
    pub constant: Option<usize>,
    /// The slot of each output bit, groups in order: known once the last segment is planned.
    pub outputs: Vec<u32>,
}

impl Schedule {
    /// Grows a per-slot table to the slots this program needs so far.
    pub(crate) fn grow<T: Copy>(&self, table: &mut Vec<T>, fill: T) {
        if table.len() < self.slots as usize {
            table.resize(self.slots as usize, fill);
        }
    }

    /// Empties the segment for the planner to fill, keeping the memory.
    pub(crate) fn clear_segment(&mut self) {
        self.ops.clear();
        self.offset.clear();
        self.extra.clear();
        self.waves.clear();
        self.windows.clear();
    }

    /// The ops of wave `k`: its crypto gates and its other gates, as ranges of [`Self::ops`].
    pub(crate) fn wave(&self, k: usize) -> (Range<usize>, Range<usize>) {
        let (crypto, free_end) = self.waves[k].clone();
        (
            crypto.start as usize..crypto.end as usize,
            crypto.end as usize..free_end as usize,
        )
    }

    /// The normal AND gates ([`OpKind::And`]) of each wave's crypto gates.
    pub(crate) fn wave_ands(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.waves.len()).map(|k| {
            let (crypto, _) = self.wave(k);
            self.ops[crypto]
                .iter()
                .filter(|op| op.kind() == OpKind::And)
                .count()
        })
    }

    /// Gates of the circuit before window `window` (all of them past the last window).
    pub(crate) fn gates_before(&self, window: usize) -> usize {
        self.windows.get(window).map_or_else(
            || self.windows.last().map_or(0, |w| w.gates.end),
            |w| w.gates.start,
        )
    }

    /// What `Evaluate::feed` returns after using `used` of `len` bytes, `finished` when
    /// every gate was evaluated: bytes past the last window are an error.
    pub(crate) fn check_trailing(
        finished: bool,
        used: usize,
        len: usize,
    ) -> Result<usize, EvalError> {
        if finished && used < len {
            return Err(EvalError::TrailingBytes { extra: len - used });
        }
        Ok(used)
    }

    /// The entries of a per-slot table for the output bits, groups in order.
    pub(crate) fn outputs_of<T: Copy>(&self, table: &[T]) -> Vec<T> {
        self.outputs
            .iter()
            .map(|&slot| table[slot as usize])
            .collect()
    }

    /// The slots of the first `n_inputs` input wires, in wire order.
    pub(crate) fn input_slots(&self, n_inputs: usize) -> Range<usize> {
        0..n_inputs
    }

    /// The entries of the input wires `first .. first + len` in a per-slot table, in wire
    /// order: `Evaluate::input_labels_mut` of an evaluator with `n_inputs` input wires that
    /// has reached window `next_window`.
    ///
    /// # Panics
    /// If evaluation has begun or a wire is not an input wire.
    pub(crate) fn input_labels_mut<'t, T>(
        &self,
        table: &'t mut [T],
        next_window: usize,
        n_inputs: usize,
        first: WireId,
        len: usize,
    ) -> &'t mut [T] {
        assert_eq!(
            self.gates_before(next_window),
            0,
            "input labels are set before the first window"
        );
        let first = first as usize;
        let end = first + len;
        assert!(end <= n_inputs, "wires {first}..{end} are not all inputs");
        &mut table[self.input_slots(end)][first..]
    }

    /// The slot of input wire `wire`.
    pub(crate) fn input_slot(&self, wire: WireId) -> usize {
        wire as usize
    }
}

/// `slots + more`, a number of label slots.
///
/// # Panics
/// Past [`Op::MAX_SLOTS`].
pub(crate) fn slots_plus(slots: u32, more: u32) -> u32 {
    slots
        .checked_add(more)
        .filter(|&n| n <= Op::MAX_SLOTS)
        .expect("at most 2^29 label slots")
}

/// A per-wire table of `n` entries, every page written now. `vec![0; n]` would map
/// zero pages lazily and fault on first write, in the middle of garbling; touching the
/// memory here moves that cost to set-up, where a session pays it before the network is
/// involved.
pub(crate) fn wire_table<T: Copy>(n: usize, fill: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, fill);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use transputation_circuits::{BitOrder, Circuit, Gate, InputGroup, OutputGroup, Party};

    fn circuit(wires: u32, gates: Vec<Gate>, outputs: Vec<u32>) -> Circuit {
        Circuit::new(
            u64::from(wires),
            vec![InputGroup {
                party: Party::Garbler,
                len: 2,
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            vec![OutputGroup {
                wires: outputs,
                order: BitOrder::MsbFirst,
                name: String::new(),
            }],
            gates,
        )
        .unwrap()
    }

    fn half_gates(c: &Circuit) -> Schedule {
        let mut s = Schedule::default();
        crate::schemes::half_gates::planner(c, &crate::Parallel::none()).fill(&mut s);
        s
    }

    #[test]
    fn waves_follow_dependencies() {
        // w2 = w0 & w1 (wave 1); w3 = w2 ^ w0 (wave 1, free); w4 = w0 & w1 (wave 1);
        // w5 = w3 & w4 (wave 2); w6 = !w0 (wave 0)
        let c = circuit(
            7,
            vec![
                Gate::And { a: 0, b: 1, out: 2 },
                Gate::Xor { a: 2, b: 0, out: 3 },
                Gate::And { a: 0, b: 1, out: 4 },
                Gate::And { a: 3, b: 4, out: 5 },
                Gate::Inv { a: 0, out: 6 },
            ],
            vec![5, 6],
        );
        let s = half_gates(&c);
        // Without slot reuse (unit tests) slots are wires: the order shows in the outputs.
        let order: Vec<u32> = s.ops.iter().map(|op| op.out()).collect();
        assert_eq!(order, vec![6, 2, 4, 3, 5]);
        let kinds: Vec<OpKind> = s.ops.iter().map(|op| op.kind()).collect();
        // INV is an XOR with the constant slot under half gates.
        use OpKind::{And, Xor};
        assert_eq!(kinds, vec![Xor, And, And, Xor, And]);
        assert_eq!(s.ops[0].b as usize, s.constant.unwrap());
        assert_eq!(s.waves, vec![(0..0, 1), (1..3, 4), (4..5, 5)]);
        assert_eq!(s.offset, vec![96, 0, 32, 32, 64]);
        let aux: Vec<u32> = s.ops.iter().map(|op| op.aux).collect();
        assert_eq!(aux, vec![3, 0, 1, 1, 2]);
        assert_eq!(s.windows[0].bytes, 96);
        assert_eq!(s.windows[0].last_and, Some(4));
    }

    #[test]
    fn windows_see_earlier_windows_as_ready() {
        // A chain of ANDs longer than a window: one AND per wave, waves restart per window.
        let n = WINDOW as u32 + 10;
        let gates: Vec<Gate> = (0..n)
            .map(|i| Gate::And {
                a: i + 1,
                b: 0,
                out: i + 2,
            })
            .collect();
        let s = half_gates(&circuit(n + 2, gates, vec![n + 1]));
        assert_eq!(s.windows.len(), 2);
        assert_eq!(s.windows[1].waves.len(), 10);
        let w = WINDOW as u32;
        assert_eq!(s.waves[WINDOW], (w..w + 1, w + 1));
    }

    fn one_and() -> (Circuit, Schedule) {
        let c = circuit(3, vec![Gate::And { a: 0, b: 1, out: 2 }], vec![2]);
        let s = half_gates(&c);
        (c, s)
    }

    #[test]
    fn input_labels_are_the_input_slots_in_wire_order() {
        let (c, s) = one_and();
        let mut table: Vec<u32> = (0..s.slots).collect();
        let n = c.n_inputs();
        assert_eq!(
            s.input_labels_mut(&mut table, 0, n, 0, 2),
            [s.input_slot(0), s.input_slot(1)].map(|x| x as u32)
        );
        assert_eq!(
            s.input_labels_mut(&mut table, 0, n, 1, 1),
            [s.input_slot(1) as u32]
        );
    }

    #[test]
    #[should_panic(expected = "wires 1..3 are not all inputs")]
    fn input_labels_past_the_inputs_panic() {
        let (c, s) = one_and();
        let mut table = vec![0u32; s.slots as usize];
        s.input_labels_mut(&mut table, 0, c.n_inputs(), 1, 2);
    }

    #[test]
    #[should_panic(expected = "input labels are set before the first window")]
    fn input_labels_after_the_first_window_panic() {
        let (c, s) = one_and();
        let mut table = vec![0u32; s.slots as usize];
        s.input_labels_mut(&mut table, 1, c.n_inputs(), 0, 1);
    }
}
