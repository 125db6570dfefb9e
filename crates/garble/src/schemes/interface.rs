//! The interface every scheme implements, [`Garble`] and [`Evaluate`], with the evaluator's
//! [`EvalError`], [`decode`] and where a garbling starts in a session ([`GarbleStart`]);
//! `schemes` re-exports them. It is a module of its own so that the schemes, which
//! `schemes` names in [`Scheme`](super::Scheme), need not import their parent.

use transputation_circuits::{Circuit, WireId};

use transputation_core::Block;

/// Where a garbling starts within a session that garbles many times between the same two
/// parties ([`Scheme::garbler_with`](super::Scheme::garbler_with)). The default, a fresh
/// offset and tweak base 0, is a garbling on its own ([`Scheme::garbler`](super::Scheme::garbler)).
///
/// A session that keeps one free-XOR offset `Δ` for all its garblings (the IKNP OT
/// extension's correlation, fixed by its base OTs) must never hash under one tweak twice
/// (the `half_gates` module documentation): it gives each garbling the number of AND gates
/// garbled before it in the session as `tweak_base`, so that the tweaks follow on as if the
/// session garbled one circuit, all its garblings in a row, and hands the evaluator of each
/// computation the same base ([`Scheme::evaluator_with`](super::Scheme::evaluator_with)).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GarbleStart {
    /// The free-XOR offset `Δ` to garble under (its lsb must be 1), or `None` to draw a
    /// fresh one from the garbler's PRG. Only for the schemes with a global offset
    /// ([`Scheme::has_global_offset`](super::Scheme::has_global_offset)); `prf` takes `None`.
    pub offset: Option<Block>,
    /// `B`: AND gate `n` of this garbling (from 0) hashes under the tweaks `2(B + n) + 1`
    /// and `2(B + n) + 2` instead of `2n + 1` and `2n + 2`; 0 gives the tables of a
    /// garbling on its own. `prf` has no tweak counter shared between garblings and
    /// ignores it (the `prf` module documentation says why none is needed).
    pub tweak_base: u64,
    /// The public key of the scheme's hash, where it has one (`ideal`: the AES key of its
    /// TCCR hash), or `None` for the reference key of the known-answer vectors. A 2PC
    /// session draws one at random and tells the evaluator
    /// ([`Evaluate::set_hash_key`]); docs/garbling.md §5.3 says why.
    pub hash_key: Option<Block>,
}

/// Checks that the tweaks `2(B + n) + 2` of a garbling's `and_gates` AND gates under the
/// tweak base `B` fit in 64 bits: `B` plus the number of AND gates at most `2^63 − 1`.
///
/// # Panics
/// If they do not (a caller bug: a session does not garble `2^63` AND gates).
pub(crate) fn check_tweak_base(and_gates: u64, tweak_base: u64) {
    assert!(
        tweak_base
            .checked_add(and_gates)
            .is_some_and(|end| end < 1 << 63),
        "tweak base {tweak_base} plus {and_gates} AND gates passes 2^63 - 1: the tweaks \
         2(B + n) + 2 would not fit in 64 bits"
    );
}

/// The garbler's side of a scheme; see the module documentation for the call order.
pub trait Garble: Send {
    /// The two labels `[W^0, W^1]` of an input wire; read them before the first call to
    /// [`Garble::garble`] (label slots are reused once garbling starts).
    fn input_labels(&self, wire: WireId) -> [Block; 2];

    /// Replaces the labels `[W^0, W^1]` of the input wires `first .. first + labels.len()`
    /// before the first call to [`Garble::garble`]: a 2PC garbler takes the evaluator's
    /// input labels from the OT and its own from a seed both parties know, once the
    /// scheme's offset and random choices are drawn.
    ///
    /// # Panics
    /// If garbling has begun, a wire is not an input wire, or a pair does not fit the
    /// scheme: the two labels must differ in their lsb (point and permute), and under a
    /// scheme with a global offset by exactly `Δ` (caller bugs, not peer input).
    fn set_input_labels(&mut self, first: WireId, labels: &[[Block; 2]]);

    /// The secret offset `Δ` with `W^1 = W^0 ⊕ Δ` on every wire, for the schemes that
    /// have one ([`Scheme::has_global_offset`](super::Scheme::has_global_offset)); `None` for the others. A secret of the
    /// garbler: only its own OT may use it.
    fn global_offset(&self) -> Option<Block> {
        None
    }

    /// Garbles gates in order and appends their tables to `out` until at least `target`
    /// bytes (and at least one window's tables) were added or the circuit is done. Returns
    /// whether gates remain.
    fn garble(&mut self, out: &mut Vec<u8>, target: usize) -> bool {
        let at = out.len();
        let (end, more) = self.garble_at(out, at, target);
        debug_assert_eq!(
            end,
            out.len(),
            "appending leaves `out` at the end of the tables"
        );
        more
    }

    /// As [`Garble::garble`], writing the tables into `out` from byte `at` on and returning
    /// where they end (and whether gates remain). The tables are `out[at..end]`; what `out`
    /// holds past `end` is unspecified (the caller takes `..end`). Every scheme writes every
    /// byte of its tables (`prf` both halves of each mask byte, and the zero tables of its
    /// degenerate gates), overwriting what `out` held from `at` on without zeroing it first
    /// and growing it only where it is too short, so a caller that reuses one buffer (a
    /// session's send buffers, `garble-bench`) pays for no memset (32 bytes per AND gate,
    /// ~1 ns; 72 bytes for `prf`).
    ///
    /// # Panics
    /// If `at > out.len()`.
    fn garble_at(&mut self, out: &mut Vec<u8>, at: usize, target: usize) -> (usize, bool);

    /// While `on`, garbles every wave on the calling thread, whatever threads the garbler
    /// was given ([`Parallel`](super::Parallel)): for garbling in the background, which
    /// should not take cores from the foreground's work. The bytes are the same either way.
    fn set_sequential(&mut self, on: bool) {
        let _ = on;
    }

    /// One decoding bit per output bit (`lsb(W^0)` of the output wire), groups in order.
    ///
    /// # Panics
    /// If garbling has not finished.
    fn decoding(&self) -> Vec<bool>;

    /// Both labels `[W^0, W^1]` of every output bit, groups in order: for a driver that
    /// garbles a circuit in pieces and gives one piece's outputs to the next as its inputs
    /// (coarse-grained parallelism). Secrets of the garbler, as its input labels are.
    ///
    /// # Panics
    /// If garbling has not finished.
    fn output_label_pairs(&self) -> Vec<[Block; 2]>;
}

/// The evaluator's side of a scheme; see the module documentation for the call order.
pub trait Evaluate: Send {
    /// Evaluates every gate whose table is complete in `bytes`; returns the bytes used.
    fn feed(&mut self, bytes: &[u8]) -> Result<usize, EvalError>;

    /// Gates evaluated so far.
    fn gates_done(&self) -> usize;

    /// One label per output bit, groups in order; an error if gates remain.
    fn output_labels(&self) -> Result<Vec<Block>, EvalError>;

    /// Replaces the labels of the input wires `first .. first + labels.len()`. A 2PC
    /// evaluator is built (its schedule planned) before its labels exist, since they arrive
    /// over the network, and is handed them here before the first [`Evaluate::feed`].
    ///
    /// # Panics
    /// If evaluation has begun or a wire is not an input wire (caller bugs, not peer input).
    fn set_input_labels(&mut self, first: WireId, labels: &[Block]) {
        self.input_labels_mut(first, labels.len())
            .copy_from_slice(labels);
    }

    /// The labels of the input wires `first .. first + len`, in wire order, to be written in
    /// place (as [`Evaluate::set_input_labels`] does from a copy): a 2PC evaluator decodes
    /// the labels it receives straight into them.
    ///
    /// # Panics
    /// As [`Evaluate::set_input_labels`].
    fn input_labels_mut(&mut self, first: WireId, len: usize) -> &mut [Block];

    /// Takes the public key of the scheme's hash its garbler used
    /// ([`GarbleStart::hash_key`]), before any table is fed; schemes whose hash has no
    /// such key ignore it.
    fn set_hash_key(&mut self, key: Block) {
        let _ = key;
    }

    /// An error unless every gate of `circuit` was evaluated.
    fn check_done(&self, circuit: &Circuit) -> Result<(), EvalError> {
        let total = circuit.num_gates() as usize;
        if self.gates_done() < total {
            return Err(EvalError::Truncated {
                done: self.gates_done(),
                total,
            });
        }
        Ok(())
    }
}

/// What goes wrong when garbled tables do not fit the circuit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum EvalError {
    /// The tables ended before the last gate.
    #[error("the garbled tables ended after gate {done} of {total}")]
    Truncated {
        /// Gates evaluated.
        done: usize,
        /// Gates in the circuit.
        total: usize,
    },
    /// A frame of a coarse-grained stream ([`crate::coarse`]) that does not fit the
    /// circuit's pieces.
    #[error("a frame of garbled regions does not fit the circuit: {0}")]
    Frame(String),
    /// Bytes beyond the last gate's table.
    #[error("{extra} bytes follow the last gate's table")]
    TrailingBytes {
        /// How many.
        extra: usize,
    },
}

/// Output bits from the evaluator's output labels and the garbler's decoding bits:
/// `y = lsb(Y) ⊕ d`.
///
/// # Panics
/// If the two lists differ in length.
pub fn decode(labels: &[Block], decoding: &[bool]) -> Vec<bool> {
    assert_eq!(
        labels.len(),
        decoding.len(),
        "one decoding bit per output label"
    );
    labels
        .iter()
        .zip(decoding)
        .map(|(l, &d)| l.lsb() ^ d)
        .collect()
}
