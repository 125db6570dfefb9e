//! `prf`'s garbling without the fused kernels, for backends that lack them: a chunk of
//! gates' PRF inputs staged in memory and encrypted under their keys at once, then combined
//! gate by gate; and the PRF calls a gate makes, which the tests log.

use transputation_core::aes::{encrypt_under_keys, Backend};
use transputation_core::Block;

use crate::schemes::fused::{set_nibble, PrfOp};

use super::gates::{blk, garble_and, garble_xor};
use super::layout::CHUNK;

/// The labels `[k^0, k^1]` of a wire ordered by signal bit: `[k with lsb 0, k with lsb 1]`,
/// without a branch on the (random) permute bit.
#[inline(always)]
pub(super) fn by_signals([k0, k1]: [Block; 2]) -> [Block; 2] {
    let swap = (k0 ^ k1).select(k0.lsb());
    [k0 ^ swap, k1 ^ swap]
}

/// The keys of a gate's PRF calls, its inputs' labels by signal bit
/// `[ka[0], ka[1], kb[0], kb[1]]`; its PRF inputs in the order [`garble_and`] takes
/// their outputs (eight, two per key) or [`garble_xor`] (the first four, one per key); and
/// its inputs' permute bits `(πa, πb)`.
pub(super) fn prf_calls(
    labels: &[[Block; 2]],
    op: &PrfOp,
    and: bool,
) -> ([Block; 4], [Block; 8], (bool, bool)) {
    let (la, lb) = (labels[op.a as usize], labels[op.b as usize]);
    let ([ka0, ka1], [kb0, kb1]) = (by_signals(la), by_signals(lb));
    let rows = if and {
        [0, 1, 2, 3, 0, 2, 1, 3]
    } else {
        [0, 1, 0, 1, 0, 0, 0, 0]
    };
    let permute = (la[0].lsb(), lb[0].lsb());
    ([ka0, ka1, kb0, kb1], rows.map(|r| blk(op.g, r)), permute)
}

/// What the fused kernels do, for backends without them: `ops` (all AND gates if `AND`,
/// else all XOR gates) a chunk at a time, the chunk's PRF inputs staged in memory and
/// encrypted under their keys, then combined gate by gate. A chunk's inputs are all read
/// before its outputs are written.
pub(super) fn garble_staged<const AND: bool>(
    backend: Backend,
    ops: &[PrfOp],
    labels: &mut [[Block; 2]],
    out: &mut [u8],
) {
    let per_key = if AND { 2 } else { 1 };
    for chunk in ops.chunks(CHUNK) {
        let mut keys = Vec::with_capacity(4 * chunk.len());
        let mut f = Vec::with_capacity(4 * per_key * chunk.len());
        let mut permute = Vec::with_capacity(chunk.len());
        for op in chunk {
            let (k, blocks, p) = prf_calls(labels, op, AND);
            keys.extend(k);
            f.extend_from_slice(&blocks[..4 * per_key]);
            permute.push(p);
        }
        encrypt_under_keys(backend, &keys, &mut f, per_key);
        for (((op, f), k), (pa, pb)) in chunk
            .iter()
            .zip(f.chunks(4 * per_key))
            .zip(keys.chunks(4))
            .zip(permute)
        {
            let (table, labels_out) = (op.table, op.out as usize);
            if AND {
                // The labels by value again, from the keys by signal bit.
                let (t1, t2, m, kc) = garble_and(
                    by_values([k[0], k[1]], pa),
                    by_values([k[2], k[3]], pb),
                    [f[0], f[1], f[2], f[3]],
                    [f[4], f[5], f[6], f[7]],
                    op.bit(PrfOp::PC),
                );
                out[table..table + 16].copy_from_slice(&t1.to_bytes());
                out[table + 16..table + 32].copy_from_slice(&t2.to_bytes());
                set_nibble(out, op.mask, op.bit(PrfOp::HIGH), m);
                labels[labels_out] = kc;
            } else {
                let (t, kc) = garble_xor(pa, pb, [f[0], f[1]], [f[2], f[3]]);
                out[table..table + 16].copy_from_slice(&t.to_bytes());
                labels[labels_out] = kc;
            }
        }
    }
}

/// `labels` ordered by value from labels by signal bit and the permute bit.
fn by_values([s0, s1]: [Block; 2], permute: bool) -> [Block; 2] {
    if permute {
        [s1, s0]
    } else {
        [s0, s1]
    }
}
