//! The garbler's randomness: AES-128 in counter mode under a secret seed.
//!
//! Seeded from the operating system ([`Prg::from_entropy`]) for real sessions, or from a
//! given seed ([`Prg::new`]) so that tests and known-answer vectors are reproducible. Output
//! block `i` is `AES_seed(i)`, with `i` as a little-endian 128-bit counter; blocks are made
//! in batches of [`Prg::BATCH`] to use the pipelined AES.

use rand::{CryptoRng, RngCore};

use crate::aes::FixedKeyAes;
use crate::block::Block;

/// AES-CTR pseudorandom generator; see the module documentation.
pub struct Prg {
    aes: FixedKeyAes,
    counter: u128,
    buf: [Block; Prg::BATCH],
    used: usize,
}

impl Prg {
    /// Blocks generated per AES call.
    pub const BATCH: usize = 64;

    /// A generator with the given secret seed.
    pub fn new(seed: Block) -> Prg {
        Prg {
            aes: FixedKeyAes::new(seed),
            counter: 0,
            buf: [Block::ZERO; Prg::BATCH],
            used: Prg::BATCH,
        }
    }

    /// A generator seeded from the operating system's randomness.
    pub fn from_entropy() -> Prg {
        let mut seed = [0u8; 16];
        rand::rngs::OsRng.fill_bytes(&mut seed);
        Prg::new(Block::from_bytes(seed))
    }

    fn refill(&mut self) {
        for b in self.buf.iter_mut() {
            *b = Block(self.counter);
            self.counter = self.counter.wrapping_add(1);
        }
        self.aes.encrypt_blocks(&mut self.buf);
        self.used = 0;
    }

    /// The next pseudorandom block.
    #[inline]
    pub fn block(&mut self) -> Block {
        if self.used == Prg::BATCH {
            self.refill();
        }
        let b = self.buf[self.used];
        self.used += 1;
        b
    }

    /// Fills `out` with pseudorandom blocks.
    #[inline]
    pub fn fill_blocks(&mut self, out: &mut [Block]) {
        for b in out {
            *b = self.block();
        }
    }
}

impl RngCore for Prg {
    #[inline]
    fn next_u32(&mut self) -> u32 {
        self.block().0 as u32
    }

    #[inline]
    fn next_u64(&mut self) -> u64 {
        self.block().0 as u64
    }

    fn fill_bytes(&mut self, dest: &mut [u8]) {
        for chunk in dest.chunks_mut(16) {
            let b = self.block().to_bytes();
            chunk.copy_from_slice(&b[..chunk.len()]);
        }
    }

    fn try_fill_bytes(&mut self, dest: &mut [u8]) -> Result<(), rand::Error> {
        self.fill_bytes(dest);
        Ok(())
    }
}

impl CryptoRng for Prg {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn is_aes_in_counter_mode() {
        let seed = Block::from_hex("000102030405060708090a0b0c0d0e0f");
        let mut prg = Prg::new(seed);
        let aes = FixedKeyAes::new(seed);
        for i in 0..200u128 {
            assert_eq!(prg.block(), aes.encrypt(Block(i)));
        }
        let (mut a, mut b) = (Prg::from_entropy(), Prg::from_entropy());
        assert_ne!(a.block(), b.block());
    }
}
