//! The IKNP bit-matrix transpose, 128×128 bits at a time.
//!
//! IKNP makes 128 columns of `m'` bits (one per base OT) and needs `m'` rows of 128 bits
//! (one per extended OT). A block of the matrix is 128 `u128` words, `w[i]` holding bits
//! `k = 0..128` of column `i` (bit `k` = `(w[i] >> k) & 1`); its transpose `o` has
//! `(o[k] >> i) & 1 == (w[i] >> k) & 1`.
//!
//! The portable algorithm is the recursive block swap (Hacker's Delight §7-3): for each
//! `w = 64, 32, …, 1`, the `w × w` sub-blocks above and below the diagonal of every `2w × 2w`
//! block trade places, one XOR-swap of `w` bits per pair of rows. Rows are kept as two
//! `u64` halves, so for `w < 64` a swap never crosses a half and each round is the same
//! mask-shift-XOR on a contiguous run of `u64`s, which the compiler vectorises.

/// Transposes the 128×128 bit matrix `block` in place; see the module documentation.
pub fn transpose128(block: &mut [u128; 128]) {
    // Row r is halves[2r] (bits 0..64) and halves[2r + 1] (bits 64..128).
    let mut h = [0u64; 256];
    for (r, &w) in block.iter().enumerate() {
        h[2 * r] = w as u64;
        h[2 * r + 1] = (w >> 64) as u64;
    }
    // w = 64: the high half of row r trades with the low half of row r + 64.
    for r in 0..64 {
        h.swap(2 * r + 1, 2 * (r + 64));
    }
    round::<32>(&mut h, 0x0000_0000_ffff_ffff);
    round::<16>(&mut h, 0x0000_ffff_0000_ffff);
    round::<8>(&mut h, 0x00ff_00ff_00ff_00ff);
    round::<4>(&mut h, 0x0f0f_0f0f_0f0f_0f0f);
    round::<2>(&mut h, 0x3333_3333_3333_3333);
    round::<1>(&mut h, 0x5555_5555_5555_5555);
    for (r, w) in block.iter_mut().enumerate() {
        *w = u128::from(h[2 * r]) | (u128::from(h[2 * r + 1]) << 64);
    }
}

/// One round of the block swap for `w = SHIFT < 64`: rows `base..base + SHIFT` (upper)
/// pair with `base + SHIFT..base + 2·SHIFT` (lower); their halves are the contiguous runs
/// `2·base..2·(base + SHIFT)` and the next `2·SHIFT`. The shift is a constant so that each
/// round compiles to its own unrolled, vectorised loop.
#[inline(always)]
fn round<const SHIFT: usize>(h: &mut [u64; 256], mask: u64) {
    for chunk in h.chunks_exact_mut(4 * SHIFT) {
        let (upper, lower) = chunk.split_at_mut(2 * SHIFT);
        for (x, y) in upper.iter_mut().zip(lower.iter_mut()) {
            let t = ((*x >> SHIFT) ^ *y) & mask;
            *y ^= t;
            *x ^= t << SHIFT;
        }
    }
}

/// The `m` rows of a matrix given as columns: `cols` holds `⌈m/128⌉` blocks of 128
/// words, word `128·b + i` being bits `128·b .. 128·b + 128` of column `i`; row `j` of the
/// result has bit `i` = bit `j` of column `i`. Padding rows past `m` are dropped.
///
/// The IKNP parties do the same block by block as they go; this whole-matrix form is the
/// one the tests check against the definition.
///
/// # Panics
/// If `cols.len()` is not `128·⌈m/128⌉`.
#[cfg(test)]
pub fn columns_to_rows(cols: &[u128], m: usize) -> Vec<u128> {
    assert_eq!(
        cols.len(),
        crate::padded(m),
        "128 words per block of 128 rows"
    );
    let mut rows = Vec::with_capacity(cols.len());
    let mut block = [0u128; 128];
    for chunk in cols.chunks_exact(128) {
        block.copy_from_slice(chunk);
        transpose128(&mut block);
        rows.extend_from_slice(&block);
    }
    rows.truncate(m);
    rows
}

/// The definition, bit by bit: the reference the fast transpose is tested against.
#[cfg(test)]
pub fn transpose128_naive(block: &[u128; 128]) -> [u128; 128] {
    let mut out = [0u128; 128];
    for (i, &w) in block.iter().enumerate() {
        for (k, o) in out.iter_mut().enumerate() {
            *o |= ((w >> k) & 1) << i;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};
    use rand_chacha::ChaCha20Rng;

    #[test]
    fn matches_naive_transpose() {
        let mut rng = ChaCha20Rng::seed_from_u64(2003);
        for _ in 0..50 {
            let mut block = [0u128; 128];
            rng.fill(&mut block[..]);
            let expect = transpose128_naive(&block);
            let mut got = block;
            transpose128(&mut got);
            assert_eq!(got, expect);
            transpose128(&mut got);
            assert_eq!(got, block, "a transpose is an involution");
        }
    }

    /// Whole matrices of random heights, multiples of 128 and not, against the bit-level
    /// definition.
    #[test]
    fn columns_to_rows_matches_definition() {
        let mut rng = ChaCha20Rng::seed_from_u64(128);
        let mut sizes = vec![0usize, 1, 2, 127, 128, 129, 255, 256, 257, 1000];
        sizes.extend((0..6).map(|_| rng.gen_range(0..2000)));
        for m in sizes {
            let nb = m.div_ceil(128);
            let cols: Vec<u128> = (0..nb * 128).map(|_| rng.gen()).collect();
            let bit = |i: usize, j: usize| (cols[128 * (j / 128) + i] >> (j % 128)) & 1;
            let rows = columns_to_rows(&cols, m);
            assert_eq!(rows.len(), m);
            for (j, &row) in rows.iter().enumerate() {
                let expect = (0..128).fold(0u128, |acc, i| acc | (bit(i, j) << i));
                assert_eq!(row, expect, "m = {m}, row {j}");
            }
        }
    }

    #[test]
    fn single_bits_land_where_they_should() {
        for i in 0..128 {
            for k in [0, 1, 63, 64, 65, 127] {
                let mut block = [0u128; 128];
                block[i] = 1 << k;
                transpose128(&mut block);
                for (r, &w) in block.iter().enumerate() {
                    assert_eq!(w, if r == k { 1 << i } else { 0 }, "bit ({i}, {k})");
                }
            }
        }
    }
}
