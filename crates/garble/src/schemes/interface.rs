//! The interface every scheme implements, [`Garble`] and [`Evaluate`], with the evaluator's
//! [`EvalError`] and [`decode`]; `schemes` re-exports them. It is a module of its own so
//! that the schemes, which `schemes` names in [`Scheme`](super::Scheme), need not import
//! their parent.

use transputation_circuits::{Circuit, WireId};

use transputation_core::Block;

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

    /// One decoding bit per output bit (`lsb(W^0)` of the output wire), groups in order.
    ///
    /// # Panics
    /// If garbling has not finished.
    fn decoding(&self) -> Vec<bool>;
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

    /// An error unless every gate of `circuit` was evaluated.
    fn check_done(&self, circuit: &Circuit) -> Result<(), EvalError> {
        let total = circuit.gates().len();
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
