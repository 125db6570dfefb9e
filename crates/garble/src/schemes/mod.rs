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
mod interface;
pub mod parallel;
pub(crate) mod planner;
pub mod prf;
pub(crate) mod waves;

#[cfg(test)]
mod tests;

pub use interface::{decode, EvalError, Evaluate, Garble, GarbleStart};
pub use parallel::Parallel;

use std::fmt;
use std::str::FromStr;

use transputation_circuits::{Circuit, Stats};

use transputation_core::aes::Backend;
use transputation_core::prg::Prg;
use transputation_core::Block;

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

    /// The fewest crypto gates per part of a wave that `parallel` splits among its threads
    /// under this scheme: its own, or the scheme's default ([`parallel::MIN_WAVE_PRF`],
    /// [`parallel::MIN_WAVE_HALF_GATES`]).
    pub fn min_wave(self, parallel: &Parallel) -> usize {
        parallel.min_wave().unwrap_or(match self {
            Scheme::Prf => parallel::MIN_WAVE_PRF,
            Scheme::Circular | Scheme::Ideal => parallel::MIN_WAVE_HALF_GATES,
        })
    }

    /// The share of `circuit`'s AND gates that `parallel` garbles (and evaluates) in waves
    /// split among its threads: 0 on one thread. Plans the circuit, as a garbler does. A
    /// wave counts by its AND gates alone, as the half-gates schemes split it; `prf`'s
    /// garbler splits its XOR gates apart from its ANDs, and its evaluator both kinds
    /// together, so for `prf` this is the share of AND gates whose ANDs alone split.
    pub fn split_share(self, circuit: &Circuit, parallel: &Parallel) -> f64 {
        let min = self.min_wave(parallel);
        let (mut split, mut all) = (0u64, 0u64);
        let count = |s: &waves::Schedule| {
            for ands in s.wave_ands() {
                all += ands as u64;
                if parallel.split(ands, min).is_some() {
                    split += ands as u64;
                }
            }
        };
        match self {
            Scheme::Prf => prf::planner(circuit, parallel).each_segment(count),
            Scheme::Circular | Scheme::Ideal => {
                half_gates::planner(circuit, parallel).each_segment(count)
            }
        }
        if all == 0 {
            0.0
        } else {
            split as f64 / all as f64
        }
    }

    /// Starts garbling `circuit` with randomness from `prg` on the given AES backend: a
    /// fresh `Δ` (where the scheme has one) and tweak base 0, [`Scheme::garbler_with`] at
    /// [`GarbleStart::default()`].
    pub fn garbler<'c>(
        self,
        circuit: &'c Circuit,
        prg: &mut Prg,
        backend: Backend,
    ) -> Box<dyn Garble + 'c> {
        self.garbler_with(circuit, prg, backend, GarbleStart::default())
    }

    /// Starts garbling `circuit` from `start` in a session: under the given offset `Δ`
    /// rather than a fresh one, and with the given tweak base ([`GarbleStart`]); the rest
    /// (input labels, and `Δ` if none is given) comes from `prg`. The default `start` gives
    /// the bytes of [`Scheme::garbler`].
    ///
    /// # Panics
    /// If `start.offset` is given with lsb 0, or given to `prf` (which has no global
    /// offset), or if the tweak base plus the circuit's AND gates passes `2^63 − 1` (caller
    /// bugs).
    pub fn garbler_with<'c>(
        self,
        circuit: &'c Circuit,
        prg: &mut Prg,
        backend: Backend,
        start: GarbleStart,
    ) -> Box<dyn Garble + 'c> {
        self.garbler_par(circuit, prg, backend, start, &Parallel::none())
    }

    /// As [`Scheme::garbler_with`], working as `parallel` says (window size, threads):
    /// the same bytes under every setting.
    ///
    /// # Panics
    /// As [`Scheme::garbler_with`].
    pub fn garbler_par<'c>(
        self,
        circuit: &'c Circuit,
        prg: &mut Prg,
        backend: Backend,
        start: GarbleStart,
        parallel: &Parallel,
    ) -> Box<dyn Garble + 'c> {
        use half_gates::{HalfGatesGarbler, LabelKeyed, Tccr};
        match self {
            Scheme::Prf => {
                assert!(
                    start.offset.is_none(),
                    "prf has no global offset: GarbleStart.offset must be None for it"
                );
                Box::new(prf::PrfGarbler::with_parallel(
                    circuit, prg, backend, parallel,
                ))
            }
            Scheme::Circular => Box::new(HalfGatesGarbler::with_parallel(
                circuit,
                LabelKeyed::new(backend),
                prg,
                start,
                parallel,
            )),
            Scheme::Ideal => Box::new(HalfGatesGarbler::with_parallel(
                circuit,
                Tccr::new(backend),
                prg,
                start,
                parallel,
            )),
        }
    }

    /// Starts evaluating `circuit` from one label per input wire: tweak base 0,
    /// [`Scheme::evaluator_with`] at base 0.
    pub fn evaluator<'c>(
        self,
        circuit: &'c Circuit,
        inputs: &[Block],
        backend: Backend,
    ) -> Box<dyn Evaluate + 'c> {
        self.evaluator_with(circuit, inputs, backend, 0)
    }

    /// Starts evaluating `circuit` from one label per input wire, with the tweak base its
    /// garbler used ([`GarbleStart::tweak_base`]; `prf` ignores it). Tables garbled under
    /// another base do not decode to the function's output.
    ///
    /// # Panics
    /// If `inputs` is not one label per input wire, or if the tweak base plus the circuit's
    /// AND gates passes `2^63 − 1` (caller bugs).
    pub fn evaluator_with<'c>(
        self,
        circuit: &'c Circuit,
        inputs: &[Block],
        backend: Backend,
        tweak_base: u64,
    ) -> Box<dyn Evaluate + 'c> {
        self.evaluator_par(circuit, inputs, backend, tweak_base, &Parallel::none())
    }

    /// As [`Scheme::evaluator_with`], working as `parallel` says: the same labels under
    /// every setting, whatever the garbler's.
    ///
    /// # Panics
    /// As [`Scheme::evaluator_with`].
    pub fn evaluator_par<'c>(
        self,
        circuit: &'c Circuit,
        inputs: &[Block],
        backend: Backend,
        tweak_base: u64,
        parallel: &Parallel,
    ) -> Box<dyn Evaluate + 'c> {
        use half_gates::{HalfGatesEvaluator, LabelKeyed, Tccr};
        match self {
            Scheme::Prf => Box::new(prf::PrfEvaluator::with_parallel(
                circuit, inputs, backend, parallel,
            )),
            Scheme::Circular => Box::new(HalfGatesEvaluator::with_parallel(
                circuit,
                LabelKeyed::new(backend),
                inputs,
                tweak_base,
                parallel,
            )),
            Scheme::Ideal => Box::new(HalfGatesEvaluator::with_parallel(
                circuit,
                Tccr::new(backend),
                inputs,
                tweak_base,
                parallel,
            )),
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
