//! Garbling schemes for Yao's protocol, streamed and fast.
//!
//! Three schemes behind one interface ([`Garble`], [`Evaluate`]), chosen at run time by
//! [`Scheme`] and named by the assumption each needs (docs/garbling.md states them exactly):
//!
//! | [`Scheme`] | construction | AND | XOR | assumption on AES |
//! |---|---|---|---|---|
//! | `prf` | Gueron–Lindell–Nof–Pinkas CCS'15 | 2 ciphertexts + 4 mask bits | 1 ciphertext | a PRF |
//! | `circular` | half gates (ZRE15), AES keyed by the labels | 2 ciphertexts | free | related-key, circular |
//! | `ideal` | half gates with GKWY20's TCCR hash, AES under a public key per session | 2 ciphertexts | free | ideal permutation (ideal cipher across sessions) |
//!
//! The cores do no I/O: the garbler appends tables to a byte buffer, the evaluator consumes
//! bytes in any pieces, and memory is bounded by the wire labels (see [`schemes`]).
//!
//! A session that garbles many times between the same two parties under one free-XOR
//! offset starts each garbling with [`Scheme::garbler_with`] and [`Scheme::evaluator_with`]
//! from a [`GarbleStart`]: the session's `Δ` and a tweak base that keeps every hash tweak
//! unique under it (the `half_gates` module documentation says why).
//!
//! A garbler or evaluator may share each wide wave of independent gates among threads
//! ([`Parallel`]: fine-grained parallelism, Buescher–Katzenbeisser 2015, §4.3) and plan
//! the circuit in windows of any multiple of 128 gates. This is local tuning, not sent to
//! the peer: every gate is garbled by the scheme's own code from the same input labels,
//! under the same tweak (half gates: `2(B + n) + 1`, `2(B + n) + 2` by AND index) or PRF
//! input (`prf`: `blk(g, r)` by gate index, its permute bits drawn by gate position before
//! each window), into its own place in the stream, so the hash queries, the tables and the
//! decoding bits are exactly the sequential garbler's and each scheme's security argument
//! holds unchanged (the `parallel` module's documentation has the details; the tests check
//! the bytes and, for the half-gates schemes, the set of hash queries).
//!
//! A circuit with parallel regions ([`Circuit::sections`](transputation_circuits::Circuit::sections))
//! may instead be garbled a region per thread ([`coarse`]: coarse-grained parallelism,
//! §4.4 of the same paper): each group of regions is garbled as a circuit of its own by
//! the scheme's garbler, under the same `Δ`, tweaks and PRF inputs as the whole circuit's
//! garbling, and its tables travel in frames that name it.
//!
//! The primitives, [`Block`](transputation_core::Block), AES ([`transputation_core::aes`])
//! and the PRG, are `transputation-core`'s, shared with the OT; this crate holds the
//! schemes, including their fused VAES gate kernels.
//!
//! ```
//! use transputation_circuits::library;
//! use transputation_core::{aes::Backend, prg::Prg, Block};
//! use transputation_garble::{decode, Scheme};
//!
//! let circuit = library::load("millionaires:bits=8").unwrap();
//! let mut prg = Prg::new(Block(7));
//! let mut garbler = Scheme::Ideal.garbler(&circuit, &mut prg, Backend::detect());
//! // Inputs: the garbler's 5, the evaluator's 3 (MSB first); labels of the actual values.
//! let bits = [0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 0, 1, 1];
//! let labels: Vec<Block> = bits
//!     .iter()
//!     .enumerate()
//!     .map(|(w, &v)| garbler.input_labels(w as u32)[v])
//!     .collect();
//! let mut tables = Vec::new();
//! while garbler.garble(&mut tables, 1 << 16) {}
//! let mut evaluator = Scheme::Ideal.evaluator(&circuit, &labels, Backend::detect());
//! assert_eq!(evaluator.feed(&tables).unwrap(), tables.len());
//! let out = decode(&evaluator.output_labels().unwrap(), &garbler.decoding());
//! assert_eq!(out, vec![true]); // 5 > 3
//! ```

pub mod coarse;
pub mod schemes;

pub use coarse::{CoarseError, CoarseEvaluator, CoarseGarbler, Layout};
pub use schemes::{decode, EvalError, Evaluate, Garble, GarbleStart, Parallel, Scheme};
