//! One half-gates AND gate at a time, from its hashes (ZRE15 §3, docs/garbling.md §3.2):
//! the batched garbler and evaluator call these; the fused kernels compute the same in
//! registers.

use transputation_core::Block;

/// Garbles one AND gate from the four hashes `H(A0,j), H(A1,j), H(B0,j'), H(B1,j')`:
/// returns `(TG, TE, C0)` (ZRE15 §3, docs/garbling.md §3.2).
#[inline(always)]
pub fn garble_and(a0: Block, b0: Block, delta: Block, h: [Block; 4]) -> (Block, Block, Block) {
    let (pa, pb) = (a0.lsb(), b0.lsb());
    let tg = h[0] ^ h[1] ^ delta.select(pb);
    let wg0 = h[0] ^ tg.select(pa);
    let te = h[2] ^ h[3] ^ a0;
    let we0 = h[2] ^ (te ^ a0).select(pb);
    (tg, te, wg0 ^ we0)
}

/// Evaluates one AND gate from `H(A, j)`, `H(B, j')` and the table: the output label.
#[inline(always)]
pub fn eval_and(a: Block, b: Block, ha: Block, hb: Block, tg: Block, te: Block) -> Block {
    let wg = ha ^ tg.select(a.lsb());
    let we = hb ^ (te ^ a).select(b.lsb());
    wg ^ we
}
