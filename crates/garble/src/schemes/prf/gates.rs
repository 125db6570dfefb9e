//! One `prf` gate at a time, as docs/garbling.md §2 writes it: the PRF input `blk`, and
//! the garbling and evaluation of an AND gate (the row reduction of §2.3) and of an XOR gate
//! (§2.5). The staged garbler and the evaluator call these; the fused kernels compute the
//! same in registers.

use transputation_core::Block;

/// The PRF input `blk(g, r)` (docs/garbling.md §2.2).
#[inline(always)]
pub fn blk(g: u64, r: u32) -> Block {
    Block(u128::from(g) | (u128::from(r) << 96))
}

/// The AND table of one gate: `(T1, T2, m, [k^0, k^1] of the output)` from the input labels
/// `ka = [ka^0, ka^1]`, `kb`, the eight PRF values and the output permute bit `pc`.
///
/// `fa[2α + β] = AES_{ka[α]}(blk(g, 2α + β))` and `fb[2β + α] = AES_{kb[β]}(blk(g, 2α + β))`,
/// with `ka[α]` the label of `a` whose lsb is `α` (§2.3).
pub fn garble_and(
    ka: [Block; 2],
    kb: [Block; 2],
    fa: [Block; 4],
    fb: [Block; 4],
    pc: bool,
) -> (Block, Block, u8, [Block; 2]) {
    let (pa, pb) = (ka[0].lsb(), kb[0].lsb());
    let mut k = [Block::ZERO; 4]; // K[α,β] at 2α+β, raw
    let mut kbar = [Block::ZERO; 4];
    let mut m = 0u8;
    for alpha in 0..2usize {
        for beta in 0..2usize {
            let r = 2 * alpha + beta;
            k[r] = fa[r] ^ fb[2 * beta + alpha];
            kbar[r] = k[r].with_lsb(false);
            let value = ((alpha == 1) ^ pa) & ((beta == 1) ^ pb);
            m |= u8::from(k[r].lsb() ^ pc ^ value) << r;
        }
    }
    let (pa_i, pb_i) = (usize::from(pa), usize::from(pb));
    let t1 = kbar[2 * pa_i] ^ kbar[2 * pa_i + 1];
    let t2 = kbar[pb_i] ^ kbar[2 + pb_i];
    let v00 = pa & pb;
    let first = kbar[0].with_lsb(pc ^ v00);
    let other = (kbar[1] ^ kbar[2] ^ kbar[3]).with_lsb(pc ^ !v00);
    let kc = if v00 { [other, first] } else { [first, other] };
    (t1, t2, m, kc)
}

/// Evaluates an AND gate: `k = AES_La(blk(g,r)) ⊕ AES_Lb(blk(g,r))` for the row `r` of the
/// held labels' signal bits, the table and the row's mask bit.
pub fn eval_and(la: Block, lb: Block, k: Block, t1: Block, t2: Block, m: u8) -> Block {
    let (alpha, beta) = (la.lsb(), lb.lsb());
    let r = 2 * usize::from(alpha) + usize::from(beta);
    let l = k ^ t1.select(beta) ^ t2.select(alpha);
    l.with_lsb(((m >> r) & 1 == 1) ^ k.lsb())
}

/// The XOR table of one gate: `(T, [k^0, k^1] of the output)` from the permute bits and
/// `ta[s] = AES_{ka[s]}(blk(g, s))`, `tb[s] = AES_{kb[s]}(blk(g, s))` by signal bit (§2.5).
pub fn garble_xor(pa: bool, pb: bool, ta: [Block; 2], tb: [Block; 2]) -> (Block, [Block; 2]) {
    let d = ta[0] ^ ta[1];
    let t = tb[0] ^ tb[1] ^ d;
    let k0 = (ta[0] ^ tb[0] ^ d.select(pa ^ pb)).with_lsb(pa ^ pb);
    (t, [k0, k0 ^ d.with_lsb(true)])
}

/// Evaluates an XOR gate from `AES_La(blk(g, α))`, `AES_Lb(blk(g, β))` and `T`.
pub fn eval_xor(la: Block, lb: Block, fa: Block, fb: Block, t: Block) -> Block {
    (fa ^ fb ^ t.select(lb.lsb())).with_lsb(la.lsb() ^ lb.lsb())
}
