//! Writing circuits as programs.
//!
//! A [`Builder`] hands out [`Bit`]s for the inputs of each party; operations on bits and on
//! integers ([`Uint`], [`Int`]) append gates; [`Builder::build`] returns a validated
//! [`Circuit`](crate::Circuit). Constants are folded as the circuit is written: an operation
//! whose result is known from its constant operands emits no gate, so `x + 5` costs only what
//! the unknown bits of `x` require and constant sub-expressions vanish entirely.
//!
//! [`Builder::parallel`] marks independent work (one region per loop body) as a section of
//! the built circuit's parallel regions ([`Sections`](crate::Sections)), for a garbler that
//! garbles regions side by side.
//!
//! Input groups use [`BitOrder::MsbFirst`](crate::BitOrder::MsbFirst): a group of integers is
//! written as their big-endian hex values concatenated, first value first.
//!
//! ```
//! use transputation_circuits::builder::Builder;
//! use transputation_circuits::Party;
//!
//! let mut b = Builder::new();
//! let x = b.input_uint(Party::Garbler, "x", 32);
//! let y = b.input_uint(Party::Evaluator, "y", 32);
//! let sum = b.add(&x, &y);
//! b.output_uint("x + y", &sum);
//! let circuit = b.build();
//! assert_eq!(circuit.eval_hex("00000007", "00000005").unwrap(), "0000000c");
//! ```

mod bits;
mod int;
mod parallel;
pub mod pieces;
mod sort;

pub use bits::{Bit, Builder};
pub use int::{Int, Uint, Word};
