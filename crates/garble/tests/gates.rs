//! Single gates through the public gate functions (docs/garbling.md §7.1, §7.4, §7.5):
//! exhaustive correctness over input values, permute bits and `prf`'s πc; `prf`'s signal
//! masks; and evaluation with wrong labels. Labels are random with forced lsbs, from seeded
//! generators, so every run checks the same cases.
//!
//! Circuit-level versions of the correctness tests (XOR, NOT and the derived gates through
//! the streaming garbler, with forced input permute bits) are unit tests in
//! `src/schemes/{half_gates,prf}.rs`, which can set the garbler's input labels.

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_core::aes::{encrypt_under_keys, Backend};
use transputation_core::Block;
use transputation_garble::schemes::half_gates::{self, HalfGateHash, LabelKeyed, Tccr};
use transputation_garble::schemes::prf::{self, blk};

const TRIALS: usize = 50;

fn rng(seed: u64) -> ChaCha12Rng {
    ChaCha12Rng::seed_from_u64(seed)
}

fn random_block(rng: &mut ChaCha12Rng) -> Block {
    Block(rng.gen())
}

fn aes(key: Block, pt: Block) -> Block {
    let mut b = [pt];
    encrypt_under_keys(Backend::detect(), &[key], &mut b, 1);
    b[0]
}

/// Two independent `prf` labels `[k^0, k^1]` with permute bit `pi` (§2.1).
fn prf_labels(rng: &mut ChaCha12Rng, pi: bool) -> [Block; 2] {
    [
        random_block(rng).with_lsb(pi),
        random_block(rng).with_lsb(!pi),
    ]
}

fn by_signal(k: [Block; 2], s: bool) -> Block {
    if k[0].lsb() == s {
        k[0]
    } else {
        k[1]
    }
}

/// The eight PRF values of a `prf` AND gate, laid out as `prf::garble_and` takes them.
fn and_prf_values(ka: [Block; 2], kb: [Block; 2], g: u64) -> ([Block; 4], [Block; 4]) {
    let (mut fa, mut fb) = ([Block::ZERO; 4], [Block::ZERO; 4]);
    for alpha in 0..2u32 {
        for beta in 0..2u32 {
            let r = 2 * alpha + beta;
            fa[r as usize] = aes(by_signal(ka, alpha == 1), blk(g, r));
            fb[(2 * beta + alpha) as usize] = aes(by_signal(kb, beta == 1), blk(g, r));
        }
    }
    (fa, fb)
}

/// The evaluator's `K` for held labels `la`, `lb` (§2.3).
fn eval_k(la: Block, lb: Block, g: u64) -> Block {
    let r = 2 * u32::from(la.lsb()) + u32::from(lb.lsb());
    aes(la, blk(g, r)) ^ aes(lb, blk(g, r))
}

/// A garbled `prf` AND gate: inputs, table and output labels.
struct PrfAnd {
    g: u64,
    ka: [Block; 2],
    kb: [Block; 2],
    t1: Block,
    t2: Block,
    m: u8,
    kc: [Block; 2],
}

impl PrfAnd {
    fn new(rng: &mut ChaCha12Rng, pa: bool, pb: bool, pc: bool) -> PrfAnd {
        let g = rng.gen_range(0..1u64 << 40);
        let (ka, kb) = (prf_labels(rng, pa), prf_labels(rng, pb));
        let (fa, fb) = and_prf_values(ka, kb, g);
        let (t1, t2, m, kc) = prf::garble_and(ka, kb, fa, fb, pc);
        PrfAnd {
            g,
            ka,
            kb,
            t1,
            t2,
            m,
            kc,
        }
    }

    fn eval(&self, la: Block, lb: Block) -> Block {
        prf::eval_and(la, lb, eval_k(la, lb, self.g), self.t1, self.t2, self.m)
    }
}

fn bools() -> [bool; 2] {
    [false, true]
}

#[test]
fn prf_and_exhaustive() {
    let mut rng = rng(1);
    for pa in bools() {
        for pb in bools() {
            for pc in bools() {
                for _ in 0..TRIALS {
                    let gate = PrfAnd::new(&mut rng, pa, pb, pc);
                    // Point and permute on the output, πc = lsb(kc^0) (§2.3).
                    assert_eq!(gate.kc[0].lsb(), pc);
                    assert_ne!(gate.kc[0].lsb(), gate.kc[1].lsb());
                    for va in 0..2 {
                        for vb in 0..2 {
                            assert_eq!(
                                gate.eval(gate.ka[va], gate.kb[vb]),
                                gate.kc[va & vb],
                                "πa={pa} πb={pb} πc={pc} AND({va},{vb})"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn prf_and_output_labels_are_the_row_combinations() {
    // §2.3 / §7.2: {kc^0, kc^1} = {K̄00 | πc⊕v00, (K̄01⊕K̄10⊕K̄11) | πc⊕1⊕v00}, so that both
    // output labels are PRF outputs and the output offset is fresh per gate.
    let mut rng = rng(2);
    for pa in bools() {
        for pb in bools() {
            for pc in bools() {
                let gate = PrfAnd::new(&mut rng, pa, pb, pc);
                let k = |alpha: bool, beta: bool| {
                    eval_k(by_signal(gate.ka, alpha), by_signal(gate.kb, beta), gate.g)
                        .with_lsb(false)
                };
                let v00 = pa & pb;
                let first = k(false, false).with_lsb(pc ^ v00);
                let other = (k(false, true) ^ k(true, false) ^ k(true, true)).with_lsb(!(pc ^ v00));
                assert_eq!(gate.kc[usize::from(v00)], first);
                assert_eq!(gate.kc[usize::from(!v00)], other);
            }
        }
    }
}

#[test]
fn prf_xor_exhaustive() {
    let mut rng = rng(3);
    for pa in bools() {
        for pb in bools() {
            for _ in 0..TRIALS {
                let g = rng.gen_range(0..1u64 << 40);
                let (ka, kb) = (prf_labels(&mut rng, pa), prf_labels(&mut rng, pb));
                let f = |k: [Block; 2], s: u32| aes(by_signal(k, s == 1), blk(g, s));
                let (t, kc) = prf::garble_xor(pa, pb, [f(ka, 0), f(ka, 1)], [f(kb, 0), f(kb, 1)]);
                // πc = πa ⊕ πb (§2.5).
                assert_eq!(kc[0].lsb(), pa ^ pb);
                assert_ne!(kc[0].lsb(), kc[1].lsb());
                for va in 0..2 {
                    for vb in 0..2 {
                        let (la, lb) = (ka[va], kb[vb]);
                        let fa = aes(la, blk(g, u32::from(la.lsb())));
                        let fb = aes(lb, blk(g, u32::from(lb.lsb())));
                        assert_eq!(
                            prf::eval_xor(la, lb, fa, fb, t),
                            kc[va ^ vb],
                            "πa={pa} πb={pb} XOR({va},{vb})"
                        );
                    }
                }
            }
        }
    }
}

/// The hashes every half-gates scheme uses, with a name for messages.
fn hashes() -> Vec<(&'static str, Box<dyn HalfGateHash>)> {
    let mut all: Vec<(&'static str, Box<dyn HalfGateHash>)> = Vec::new();
    for backend in Backend::available() {
        all.push(("ideal", Box::new(Tccr::new(backend))));
        all.push(("circular", Box::new(LabelKeyed::new(backend))));
    }
    all
}

/// A garbled half-gates AND gate.
struct HalfAnd<'h> {
    hash: &'h dyn HalfGateHash,
    j: u64,
    delta: Block,
    a0: Block,
    b0: Block,
    tg: Block,
    te: Block,
    c0: Block,
}

impl<'h> HalfAnd<'h> {
    fn new(hash: &'h dyn HalfGateHash, rng: &mut ChaCha12Rng, pa: bool, pb: bool) -> Self {
        let delta = random_block(rng).with_lsb(true);
        let (a0, b0) = (
            random_block(rng).with_lsb(pa),
            random_block(rng).with_lsb(pb),
        );
        let j = 2 * rng.gen_range(0..1u64 << 40) + 1;
        let mut h = [Block::ZERO; 4];
        hash.hash(
            &[a0, a0 ^ delta, b0, b0 ^ delta],
            &[j, j, j + 1, j + 1],
            &mut h,
        );
        let (tg, te, c0) = half_gates::garble_and(a0, b0, delta, h);
        HalfAnd {
            hash,
            j,
            delta,
            a0,
            b0,
            tg,
            te,
            c0,
        }
    }

    fn label(&self, zero: Block, v: usize) -> Block {
        zero ^ self.delta.select(v == 1)
    }

    /// Evaluates with `a` hashed under `ja` and `b` under `jb`.
    fn eval_tweaks(&self, a: Block, b: Block, ja: u64, jb: u64) -> Block {
        let mut h = [Block::ZERO; 2];
        self.hash.hash(&[a, b], &[ja, jb], &mut h);
        half_gates::eval_and(a, b, h[0], h[1], self.tg, self.te)
    }

    fn eval(&self, a: Block, b: Block) -> Block {
        self.eval_tweaks(a, b, self.j, self.j + 1)
    }

    fn outputs(&self) -> [Block; 2] {
        [self.c0, self.c0 ^ self.delta]
    }
}

#[test]
fn half_gates_and_exhaustive() {
    for (name, hash) in hashes() {
        let mut rng = rng(4);
        for pa in bools() {
            for pb in bools() {
                for _ in 0..TRIALS {
                    let gate = HalfAnd::new(hash.as_ref(), &mut rng, pa, pb);
                    for va in 0..2 {
                        for vb in 0..2 {
                            assert_eq!(
                                gate.eval(gate.label(gate.a0, va), gate.label(gate.b0, vb)),
                                gate.label(gate.c0, va & vb),
                                "{name} πa={pa} πb={pb} AND({va},{vb})"
                            );
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn batched_hashes_equal_single_hashes() {
    // The garbler hashes up to 4 * MAX_BATCH blocks per call; the evaluator 2 * MAX_BATCH.
    let mut rng = rng(5);
    let xs: Vec<Block> = (0..517).map(|_| random_block(&mut rng)).collect();
    let tweaks: Vec<u64> = (0..517).map(|_| rng.gen()).collect();
    for (name, hash) in hashes() {
        let mut batch = vec![Block::ZERO; xs.len()];
        hash.hash(&xs, &tweaks, &mut batch);
        for i in 0..xs.len() {
            let mut one = [Block::ZERO];
            hash.hash(&xs[i..=i], &tweaks[i..=i], &mut one);
            assert_eq!(batch[i], one[0], "{name} item {i}");
        }
    }
}

#[test]
fn prf_mask_bits_decrypt_the_output_signal_bit() {
    // §7.4: bit_r(m) ⊕ lsb(K_r) is the signal bit of row r's correct output label, and
    // flipping bit r of m flips exactly the lsb of row r's output and nothing else.
    let mut rng = rng(6);
    for pa in bools() {
        for pb in bools() {
            for pc in bools() {
                for _ in 0..TRIALS / 5 {
                    let gate = PrfAnd::new(&mut rng, pa, pb, pc);
                    for alpha in bools() {
                        for beta in bools() {
                            let r = 2 * usize::from(alpha) + usize::from(beta);
                            let (la, lb) = (by_signal(gate.ka, alpha), by_signal(gate.kb, beta));
                            let value = usize::from((alpha ^ pa) & (beta ^ pb));
                            let k = eval_k(la, lb, gate.g);
                            let want = gate.kc[value];
                            assert_eq!(((gate.m >> r) & 1 == 1) ^ k.lsb(), want.lsb(), "row {r}");
                            for flip in 0..4 {
                                let m = gate.m ^ (1 << flip);
                                let got = prf::eval_and(la, lb, k, gate.t1, gate.t2, m);
                                if flip == r {
                                    assert_eq!(got, want ^ Block(1), "row {r}, flipped bit {flip}");
                                } else {
                                    assert_eq!(got, want, "row {r}, flipped bit {flip}");
                                }
                            }
                            // The high nibble is not this gate's.
                            let got = prf::eval_and(la, lb, k, gate.t1, gate.t2, gate.m ^ 0xf0);
                            assert_eq!(got, want);
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn prf_tables_and_labels_ignore_the_raw_lsbs_of_k() {
    // §2.4 / §7.4: T1, T2 and both output labels come from the lsb-cleared K's; only the
    // mask uses lsb(K). Changing lsb(K_r) (through bit 0 of one PRF value) must change bit r
    // of m and nothing else.
    let mut rng = rng(7);
    for pa in bools() {
        for pb in bools() {
            for pc in bools() {
                for _ in 0..TRIALS / 5 {
                    let g = rng.gen();
                    let (ka, kb) = (prf_labels(&mut rng, pa), prf_labels(&mut rng, pb));
                    let (fa, fb) = and_prf_values(ka, kb, g);
                    let base = prf::garble_and(ka, kb, fa, fb, pc);
                    for i in 0..8 {
                        let (mut fa2, mut fb2) = (fa, fb);
                        // fa[2α+β] and fb[2β+α] both feed row 2α+β.
                        let row = if i < 4 {
                            fa2[i] ^= Block(1);
                            i
                        } else {
                            let j = i - 4;
                            fb2[j] ^= Block(1);
                            2 * (j % 2) + j / 2
                        };
                        let (t1, t2, m, kc) = prf::garble_and(ka, kb, fa2, fb2, pc);
                        assert_eq!((t1, t2, kc), (base.0, base.1, base.3), "value {i}");
                        assert_eq!(m, base.2 ^ (1 << row), "value {i}");
                    }
                    // All eight lsbs at once, at random.
                    let (mut fa2, mut fb2) = (fa, fb);
                    for f in fa2.iter_mut().chain(fb2.iter_mut()) {
                        *f = f.with_lsb(rng.gen());
                    }
                    let (t1, t2, _, kc) = prf::garble_and(ka, kb, fa2, fb2, pc);
                    assert_eq!((t1, t2, kc), (base.0, base.1, base.3));
                }
            }
        }
    }
}

/// Labels that are not the label the evaluator should hold for `own` on a wire whose other
/// label is `other`: random blocks of either signal bit, and the other label with the
/// signal bit of `own` (the other value's key material on the row the evaluator is on).
fn wrong_labels(rng: &mut ChaCha12Rng, own: Block, other: Block) -> Vec<Block> {
    vec![
        random_block(rng),
        random_block(rng).with_lsb(own.lsb()),
        other.with_lsb(own.lsb()),
        own ^ Block(1 << 64),
    ]
}

#[test]
fn prf_and_wrong_labels_give_no_output_label() {
    // §7.5. Swapping a and b is not noticed when both signal bits are equal (row 2α+β and the
    // evaluator's rule are symmetric then), so that case must give the right label, and the
    // other must give neither.
    let mut rng = rng(8);
    let mut swaps_checked = 0;
    for trial in 0..4 * TRIALS {
        let gate = PrfAnd::new(&mut rng, trial & 1 == 1, trial & 2 == 2, trial & 4 == 4);
        let (va, vb) = (rng.gen_range(0..2), rng.gen_range(0..2));
        let (la, lb) = (gate.ka[va], gate.kb[vb]);
        for bad in wrong_labels(&mut rng, la, gate.ka[1 - va]) {
            let got = gate.eval(bad, lb);
            assert!(
                !gate.kc.contains(&got),
                "trial {trial}: wrong a-label {bad:?}"
            );
        }
        for bad in wrong_labels(&mut rng, lb, gate.kb[1 - vb]) {
            let got = gate.eval(la, bad);
            assert!(
                !gate.kc.contains(&got),
                "trial {trial}: wrong b-label {bad:?}"
            );
        }
        let swapped = gate.eval(lb, la);
        if la.lsb() == lb.lsb() {
            assert_eq!(swapped, gate.kc[va & vb]);
        } else {
            swaps_checked += 1;
            assert!(
                !gate.kc.contains(&swapped),
                "trial {trial}: a and b swapped"
            );
        }
        // The PRF input of a neighbouring gate index.
        let r = 2 * u32::from(la.lsb()) + u32::from(lb.lsb());
        let g2 = gate.g + 1;
        let k2 = aes(la, blk(g2, r)) ^ aes(lb, blk(g2, r));
        let got = prf::eval_and(la, lb, k2, gate.t1, gate.t2, gate.m);
        assert!(!gate.kc.contains(&got), "trial {trial}: gate index + 1");
    }
    assert!(swaps_checked > TRIALS);
}

#[test]
fn prf_xor_wrong_labels_give_no_output_label() {
    let mut rng = rng(9);
    let mut swaps_checked = 0;
    for trial in 0..4 * TRIALS {
        let g = rng.gen_range(0..1u64 << 40);
        let (ka, kb) = (
            prf_labels(&mut rng, trial & 1 == 1),
            prf_labels(&mut rng, trial & 2 == 2),
        );
        let f = |k: [Block; 2], s: u32| aes(by_signal(k, s == 1), blk(g, s));
        let (t, kc) = prf::garble_xor(
            ka[0].lsb(),
            kb[0].lsb(),
            [f(ka, 0), f(ka, 1)],
            [f(kb, 0), f(kb, 1)],
        );
        let eval = |la: Block, lb: Block| {
            let fa = aes(la, blk(g, u32::from(la.lsb())));
            let fb = aes(lb, blk(g, u32::from(lb.lsb())));
            prf::eval_xor(la, lb, fa, fb, t)
        };
        let (va, vb) = (rng.gen_range(0..2), rng.gen_range(0..2));
        let (la, lb) = (ka[va], kb[vb]);
        for bad in wrong_labels(&mut rng, la, ka[1 - va]) {
            assert!(!kc.contains(&eval(bad, lb)), "trial {trial}: wrong a-label");
        }
        for bad in wrong_labels(&mut rng, lb, kb[1 - vb]) {
            assert!(!kc.contains(&eval(la, bad)), "trial {trial}: wrong b-label");
        }
        if la.lsb() == lb.lsb() {
            assert_eq!(eval(lb, la), kc[va ^ vb]);
        } else {
            swaps_checked += 1;
            assert!(
                !kc.contains(&eval(lb, la)),
                "trial {trial}: a and b swapped"
            );
        }
    }
    assert!(swaps_checked > TRIALS);
}

#[test]
fn half_gates_wrong_labels_give_no_output_label() {
    for (name, hash) in hashes() {
        let mut rng = rng(10);
        for trial in 0..4 * TRIALS {
            let gate = HalfAnd::new(hash.as_ref(), &mut rng, trial & 1 == 1, trial & 2 == 2);
            let (va, vb) = (rng.gen_range(0..2), rng.gen_range(0..2));
            let (a, b) = (gate.label(gate.a0, va), gate.label(gate.b0, vb));
            let outs = gate.outputs();
            for bad in wrong_labels(&mut rng, a, gate.label(gate.a0, 1 - va)) {
                assert!(
                    !outs.contains(&gate.eval(bad, b)),
                    "{name} {trial}: a-label"
                );
            }
            for bad in wrong_labels(&mut rng, b, gate.label(gate.b0, 1 - vb)) {
                assert!(
                    !outs.contains(&gate.eval(a, bad)),
                    "{name} {trial}: b-label"
                );
            }
            assert!(!outs.contains(&gate.eval(b, a)), "{name} {trial}: swapped");
            // An evaluator whose AND counter is off by one, or that hashes both halves
            // under one tweak.
            let (j, j2) = (gate.j, gate.j + 1);
            for (ja, jb) in [(j + 2, j2 + 2), (j - 1, j), (j, j), (j2, j2), (j2, j)] {
                assert!(
                    !outs.contains(&gate.eval_tweaks(a, b, ja, jb)),
                    "{name} {trial}: tweaks ({ja}, {jb}) instead of ({j}, {j2})"
                );
            }
        }
    }
}
