//! What the IKNP receiver and sender share: the hash key, the column PRGs and the chunk
//! layout. Its own module so that both sides import it without importing their parent.
//!
//! Both sides work through a chunk [`SUB_BLOCKS`] blocks of 128 OTs at a time: for each of
//! the 128 columns one AES-CTR call makes that column's words of all those blocks (so the
//! AES pipeline stays full and each column's key is loaded once per sub-batch, not once
//! per block), then each block is transposed and used while it is still in cache.

use transputation_core::aes::FixedKeyAes;
use transputation_core::Block;

use crate::BASE_OTS;

/// The reference AES key of the OT hash `π`, the 16 ASCII bytes `transputation/ot`: the
/// key of a sender or receiver given none (a 2PC session draws its own, see "The hash" in
/// the crate documentation).
pub const HASH_KEY: Block = Block::from_bytes(*b"transputation/ot");

/// Bytes of one block of msg_u: 128 columns × 128 bits.
pub(super) const U_BLOCK: usize = BASE_OTS * 16;

/// Blocks of 128 OTs per sub-batch: 32 keeps a sub-batch's matrix (64 KiB) in L2 and is a
/// multiple of the widest AES pipeline (8 × 4 blocks).
pub(super) const SUB_BLOCKS: usize = 32;

/// The 128 column generators of one side, `G(k_i) = AES_{k_i}(0) ‖ AES_{k_i}(1) ‖ …`
/// ([`transputation_core::prg::Prg`]'s output for the seed `k_i`), all at the same
/// position: each chunk of `m` OTs advances every column by `⌈m/128⌉` blocks, so the
/// padding rows of a chunk use up their PRG output and no output is ever used twice.
pub(super) struct Columns {
    aes: Vec<FixedKeyAes>,
    /// The counter of the next block, the same for every column.
    counter: u128,
}

impl Columns {
    pub(super) fn new(seeds: impl Iterator<Item = Block>) -> Columns {
        Columns {
            aes: seeds.map(FixedKeyAes::new).collect(),
            counter: 0,
        }
    }

    /// Blocks `counter + SUB_BLOCKS·sb ..` of every column, `n <= SUB_BLOCKS` of each, column
    /// `i` at `out[SUB_BLOCKS·i ..][..n]`: sub-batch `sb` of a chunk, column-major, as both
    /// parties gather it block by block (the position is not advanced; see
    /// [`Columns::advance`]).
    pub(super) fn fill_sub_batch(&self, sb: usize, n: usize, out: &mut [Block]) {
        let start = self.counter.wrapping_add((sb * SUB_BLOCKS) as u128);
        for (aes, col) in self.aes.iter().zip(out.chunks_exact_mut(SUB_BLOCKS)) {
            let col = &mut col[..n];
            for (k, b) in col.iter_mut().enumerate() {
                *b = Block(start.wrapping_add(k as u128));
            }
            aes.encrypt_blocks(col);
        }
    }

    /// Moves every column past `blocks` blocks.
    pub(super) fn advance(&mut self, blocks: usize) {
        self.counter = self.counter.wrapping_add(blocks as u128);
    }
}

/// The little-endian `u128` in the first 16 bytes of `bytes` (as `Block::read`, inlined
/// into the hot loops).
///
/// # Panics
/// If `bytes` is shorter than 16 (the callers index whole, length-checked messages).
#[inline(always)]
pub(super) fn read_u128(bytes: &[u8]) -> u128 {
    let mut b = [0u8; 16];
    b.copy_from_slice(&bytes[..16]);
    u128::from_le_bytes(b)
}

/// The tweak of the first OT of the next chunk after `done` OTs and a chunk of `m`.
///
/// # Panics
/// After 2^64 OTs in one session (not reachable: the counts are the caller's own slice
/// lengths, summed).
pub(super) fn next_index(done: u64, m: usize) -> u64 {
    done.checked_add(m as u64)
        .expect("fewer than 2^64 OTs in one session")
}
