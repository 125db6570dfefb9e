//! Boolean circuits for garbled-circuit two-party computation.
//!
//! This crate owns everything a 2PC session computes: the [`Circuit`] representation
//! (XOR, AND and INV gates over numbered wires, input groups owned by a [`Party`], output
//! groups), its [`Stats`], reading and writing the [`bristol`] formats, a [`builder`] to write
//! circuits as programs, and the [`library`] of built-in benchmark circuits named on the
//! command line (`aes128`, `sha256`, `mincut`, `synthetic:and=...`, ...).
//! [`Split`] cuts a circuit into independent parts, one garbled by each party
//! (inter-party parallelism). [`Sections`] are a circuit's parallel regions (coarse-grained
//! parallelism within one party): runs of consecutive gates cut into independent regions
//! that a garbler may garble side by side. A program states them with
//! [`Builder::parallel`](builder::Builder::parallel) (the built-ins `biomatch`, `mexp`,
//! `mvmul` and `mincut:regions=R` do), and a Bristol file `X` carries them in a side file
//! `X.regions` ([`bristol`]).
//!
//! ```
//! use transputation_circuits::{library, Stats};
//!
//! let aes = library::load("aes128").unwrap();
//! assert!(Stats::of(&aes).and <= 6400);
//! let ct = aes
//!     .eval_hex("000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff")
//!     .unwrap();
//! assert_eq!(ct, "69c4e0d86a7b0430d8cdb78070b4c55a"); // FIPS-197 C.1
//! ```

pub mod bristol;
pub mod builder;
mod carve;
mod circuit;
pub mod encoding;
mod gate;
pub mod library;
pub mod regions;
pub mod sections;
mod source;
pub mod split;
mod stats;

pub use circuit::{
    BitOrder, Circuit, CircuitError, Gate, InputGroup, OutputGroup, Party, WireId, MAX_WIRES,
};
pub use regions::Mixed;
pub use sections::{Section, Sections, SectionsError};
pub use source::{GateBatch, GateSource, Generate};
pub use split::{Part, Split, SplitError};
pub use stats::Stats;
