//! The garbling schemes behind one interface: [`Garble`] for the garbler, [`Evaluate`] for
//! the evaluator, chosen at run time by [`Scheme`].
//!
//! # Streaming
//! The garbler consumes gates in circuit order and appends the garbled tables to a byte
//! buffer, a batch per call to [`Garble::garble`]; the evaluator consumes bytes in any
//! pieces through [`Evaluate::feed`], which evaluates every gate whose table is complete and
//! returns how many bytes it used (the caller keeps the rest and adds more). Neither side
//! ever holds more than one batch of tables: memory is the wire labels plus the batch.
//!
//! # Wire format
//! The tables of all gates in gate order, nothing else: `ideal` and `circular` write
//! `TG ‖ TE` (32 bytes) per AND gate and nothing for XOR and INV; `prf` writes `T1 ‖ T2`
//! (32 bytes) per AND gate, `T` (16 bytes) per XOR gate, and one byte of signal masks before
//! every even-numbered AND gate (counting from 0), holding that gate's 4-bit mask in the low
//! nibble and the next AND gate's in the high nibble (docs/garbling.md §2.8).
//!
//! # Call order
//! Garbler: [`Garble::input_labels`] for the input wires, then
//! [`Garble::garble`] until it returns `false`, then [`Garble::decoding`]. Evaluator: `feed`
//! until every gate is done ([`Evaluate::gates_done`]), then [`Evaluate::output_labels`].
//! A circuit without tables (no AND gate under half gates) is finished by one `feed(&[])`,
//! so a driver calls `feed` once after the last bytes even if none arrived;
//! [`decode`] turns output labels and decoding bits into output bits.

mod fused;
pub mod half_gates;
pub mod prf;
pub(crate) mod waves;

use std::fmt;
use std::str::FromStr;

use transputation_circuits::{Circuit, Stats, WireId};

use transputation_core::aes::Backend;
use transputation_core::prg::Prg;
use transputation_core::Block;

/// Bytes of an AND gate's table in the half-gates schemes.
pub(crate) const HALF_GATES_AND_BYTES: usize = 32;

/// A garbling scheme, named by the assumption it needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Scheme {
    /// Gueron–Lindell–Nof–Pinkas (CCS 2015): AES as a PRF only.
    Prf,
    /// Half gates with AES keyed by the wire labels: circular / related-key security.
    Circular,
    /// Half gates with fixed-key AES: AES as an ideal permutation.
    Ideal,
}

impl Scheme {
    /// Every scheme, in the order reports list them.
    pub const ALL: [Scheme; 3] = [Scheme::Prf, Scheme::Circular, Scheme::Ideal];

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Scheme::Prf => "prf",
            Scheme::Circular => "circular",
            Scheme::Ideal => "ideal",
        }
    }

    /// The bytes of garbled tables (ciphertexts, as the paper's Table 3 counts them).
    pub fn table_bytes(self, stats: &Stats) -> u64 {
        match self {
            Scheme::Prf => 32 * stats.and + 16 * stats.xor,
            Scheme::Circular | Scheme::Ideal => 32 * stats.and,
        }
    }

    /// Whether the scheme's labels share one secret offset `Δ` (free XOR): `x^1 = x^0 ⊕ Δ`
    /// on every wire, as [`Garble::global_offset`] gives it. Then the evaluator's labels
    /// can come through correlated OT, which costs half the bytes.
    pub fn has_global_offset(self) -> bool {
        match self {
            Scheme::Prf => false,
            Scheme::Circular | Scheme::Ideal => true,
        }
    }

    /// The bytes of `prf`'s AND signal masks (two 4-bit masks per byte); 0 for the others.
    pub fn mask_bytes(self, stats: &Stats) -> u64 {
        match self {
            Scheme::Prf => stats.and.div_ceil(2),
            Scheme::Circular | Scheme::Ideal => 0,
        }
    }

    /// Starts garbling `circuit` with randomness from `prg` on the given AES backend.
    pub fn garbler<'c>(
        self,
        circuit: &'c Circuit,
        prg: &mut Prg,
        backend: Backend,
    ) -> Box<dyn Garble + 'c> {
        use half_gates::{HalfGatesGarbler, LabelKeyed, Tccr};
        match self {
            Scheme::Prf => Box::new(prf::PrfGarbler::new(circuit, prg, backend)),
            Scheme::Circular => Box::new(HalfGatesGarbler::new(
                circuit,
                LabelKeyed::new(backend),
                prg,
            )),
            Scheme::Ideal => Box::new(HalfGatesGarbler::new(circuit, Tccr::new(backend), prg)),
        }
    }

    /// Starts evaluating `circuit` from one label per input wire.
    pub fn evaluator<'c>(
        self,
        circuit: &'c Circuit,
        inputs: &[Block],
        backend: Backend,
    ) -> Box<dyn Evaluate + 'c> {
        use half_gates::{HalfGatesEvaluator, LabelKeyed, Tccr};
        match self {
            Scheme::Prf => Box::new(prf::PrfEvaluator::new(circuit, inputs, backend)),
            Scheme::Circular => Box::new(HalfGatesEvaluator::new(
                circuit,
                LabelKeyed::new(backend),
                inputs,
            )),
            Scheme::Ideal => Box::new(HalfGatesEvaluator::new(circuit, Tccr::new(backend), inputs)),
        }
    }
}

impl fmt::Display for Scheme {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Scheme {
    type Err = String;
    fn from_str(s: &str) -> Result<Scheme, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "prf" | "glnp15" => Ok(Scheme::Prf),
            "circular" | "half-gates-rekeyed" => Ok(Scheme::Circular),
            "ideal" | "half-gates-fixed-key" | "justgarble" => Ok(Scheme::Ideal),
            other => Err(format!(
                "unknown garbling scheme '{other}' (expected prf, circular or ideal; aliases \
                 glnp15, half-gates-rekeyed, half-gates-fixed-key, justgarble)"
            )),
        }
    }
}

/// The garbler's side of a scheme; see the module documentation for the call order.
pub trait Garble: Send {
    /// The two labels `[W^0, W^1]` of an input wire; read them before the first call to
    /// [`Garble::garble`] (label slots are reused once garbling starts).
    fn input_labels(&self, wire: WireId) -> [Block; 2];

    /// The secret offset `Δ` with `W^1 = W^0 ⊕ Δ` on every wire, for the schemes that
    /// have one ([`Scheme::has_global_offset`]); `None` for the others. A secret of the
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

/// A per-wire table of `n` entries, every page written now. `vec![0; n]` would map
/// zero pages lazily and fault on first write, in the middle of garbling; touching the
/// memory here moves that cost to set-up, where a session pays it before the network is
/// involved.
pub(crate) fn wire_table<T: Copy>(n: usize, fill: T) -> Vec<T> {
    let mut v = Vec::with_capacity(n);
    v.resize(n, fill);
    v
}
