//! The primitives that garbling (`transputation-garble`) and oblivious transfer
//! (`transputation-ot`) share, in one crate so that neither depends on the other:
//!
//! - [`Block`]: the 128-bit block of wire labels, AES inputs and outputs, table entries and
//!   OT messages, with the byte order of docs/garbling.md §1.1;
//! - [`aes`]: AES-128 on backends chosen at run time (portable, AES-NI, VAES), for one fixed
//!   key over many blocks ([`aes::FixedKeyAes`]) and for many keys each over a few blocks
//!   ([`aes::encrypt_under_keys`], the label-keyed schemes' path), and the fixed-key TCCR
//!   hash of Guo–Katz–Wang–Yu ([`aes::FixedKeyAes::tccr`]), which the `ideal` scheme and the
//!   OT extension both use;
//! - [`prg`]: AES-128 in counter mode, the garbler's and the OT's randomness;
//! - [`memory`]: huge pages for the large buffers of a plan.
//!
//! Known answers: FIPS-197 Appendices C.1 (encryption, every backend and path) and A.1 (key
//! expansion), in the tests of [`aes`].
//!
//! ```
//! use transputation_core::{aes::FixedKeyAes, prg::Prg, Block};
//!
//! // FIPS-197 Appendix C.1.
//! let aes = FixedKeyAes::new(Block::from_hex("000102030405060708090a0b0c0d0e0f"));
//! let ct = aes.encrypt(Block::from_hex("00112233445566778899aabbccddeeff"));
//! assert_eq!(ct, Block::from_hex("69c4e0d86a7b0430d8cdb78070b4c55a"));
//! // The PRG is AES in counter mode under its seed.
//! let mut prg = Prg::new(Block(7));
//! assert_eq!(prg.block(), FixedKeyAes::new(Block(7)).encrypt(Block(0)));
//! ```

pub mod aes;
mod block;
pub mod memory;
pub mod prg;

pub use block::Block;
