//! AES-128 for garbling: a fixed key over many blocks per call, and many keys (wire labels)
//! each over one or two blocks.
//!
//! Backends, chosen at run time ([`Backend::detect`]) and selectable so that tests run every
//! one the CPU has:
//! - [`Backend::Portable`]: the RustCrypto `aes` crate on chunks of blocks. It runs on any
//!   CPU (the crate uses AES instructions where it finds them and constant-time software
//!   otherwise).
//!
//! Known answers: FIPS-197 Appendix C.1 for every backend, fixed-key and per-key paths.

use crate::block::Block;
use aes::cipher::{Array, BlockCipherEncrypt, KeyInit};

/// An AES implementation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// The RustCrypto `aes` crate; runs everywhere.
    Portable,
}

impl Backend {
    /// The fastest backend this CPU supports.
    pub fn detect() -> Backend {
        Backend::Portable
    }

    /// Every backend this CPU supports, fastest last.
    pub fn available() -> Vec<Backend> {
        vec![Backend::Portable]
    }

    /// A short name for reports.
    pub fn name(self) -> &'static str {
        match self {
            Backend::Portable => "portable",
        }
    }
}

/// Blocks per call to the underlying cipher in the portable backend.
const CHUNK: usize = 64;

fn to_array(b: Block) -> Array<u8, aes::cipher::consts::U16> {
    Array(b.to_bytes())
}

/// AES-128 under one key, many blocks per call.
#[derive(Clone)]
pub struct FixedKeyAes {
    backend: Backend,
    cipher: aes::Aes128,
}

impl FixedKeyAes {
    /// The key expanded for the fastest backend.
    pub fn new(key: Block) -> Self {
        Self::with_backend(key, Backend::detect())
    }

    /// The key expanded for `backend`.
    pub fn with_backend(key: Block, backend: Backend) -> Self {
        FixedKeyAes {
            backend,
            cipher: aes::Aes128::new(&to_array(key)),
        }
    }

    /// The backend in use.
    pub fn backend(&self) -> Backend {
        self.backend
    }

    /// Encrypts one block.
    pub fn encrypt(&self, block: Block) -> Block {
        let mut b = [block];
        self.encrypt_blocks(&mut b);
        b[0]
    }

    /// Encrypts every block in place.
    pub fn encrypt_blocks(&self, blocks: &mut [Block]) {
        match self.backend {
            Backend::Portable => {
                let mut buf = [Array([0u8; 16]); CHUNK];
                for chunk in blocks.chunks_mut(CHUNK) {
                    let buf = &mut buf[..chunk.len()];
                    for (a, b) in buf.iter_mut().zip(chunk.iter()) {
                        *a = to_array(*b);
                    }
                    self.cipher.encrypt_blocks(buf);
                    for (b, a) in chunk.iter_mut().zip(buf.iter()) {
                        *b = Block::from_bytes(a.0);
                    }
                }
            }
        }
    }
}

/// Encrypts `blocks[i]` in place under `keys[i / per_key]`: one key schedule per key.
///
/// # Panics
/// If `blocks.len() != keys.len() * per_key`.
pub fn encrypt_under_keys(backend: Backend, keys: &[Block], blocks: &mut [Block], per_key: usize) {
    assert_eq!(
        blocks.len(),
        keys.len() * per_key,
        "per_key blocks for each key"
    );
    match backend {
        Backend::Portable => {
            for (key, chunk) in keys.iter().zip(blocks.chunks_mut(per_key.max(1))) {
                let cipher = aes::Aes128::new(&to_array(*key));
                for b in chunk {
                    let mut a = to_array(*b);
                    cipher.encrypt_block(&mut a);
                    *b = Block::from_bytes(a.0);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "000102030405060708090a0b0c0d0e0f";
    const PT: &str = "00112233445566778899aabbccddeeff";
    const CT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

    #[test]
    fn fips197_c1_on_every_backend() {
        for backend in Backend::available() {
            let aes = FixedKeyAes::with_backend(Block::from_hex(KEY), backend);
            assert_eq!(
                aes.encrypt(Block::from_hex(PT)),
                Block::from_hex(CT),
                "{backend:?}"
            );
            let mut many = vec![Block::from_hex(PT); 203];
            aes.encrypt_blocks(&mut many);
            assert!(
                many.iter().all(|&b| b == Block::from_hex(CT)),
                "{backend:?}"
            );
            let keys = vec![Block::from_hex(KEY); 9];
            for per_key in [1, 2] {
                let mut blocks = vec![Block::from_hex(PT); 9 * per_key];
                encrypt_under_keys(backend, &keys, &mut blocks, per_key);
                assert!(
                    blocks.iter().all(|&b| b == Block::from_hex(CT)),
                    "{backend:?}"
                );
            }
        }
    }
}
