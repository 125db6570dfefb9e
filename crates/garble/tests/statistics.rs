//! Cheap statistical sanity (docs/garbling.md §7.9): over 200 garblings of a small circuit with
//! deterministic seeds, permute bits, output-label signal bits and table bits are roughly
//! balanced. Bounds are loose (about 6 standard deviations), so the tests catch stuck or
//! copied bits, not subtle biases.

mod common;

use common::{evaluate, garble, lanes};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;
use transputation_circuits::{Circuit, Gate};
use transputation_garble::Scheme;

const GARBLINGS: u128 = 200;
const LANES: u32 = 8;

/// Asserts that `ones` out of `n` fair coin flips is within 6σ of n/2.
fn balanced(ones: usize, n: usize, what: &str) {
    let (mean, sigma) = (n as f64 / 2.0, (n as f64).sqrt() / 2.0);
    assert!(
        (ones as f64 - mean).abs() <= 6.0 * sigma,
        "{what}: {ones} ones in {n}, expected {mean} ± {}",
        6.0 * sigma
    );
}

/// Per bit position of 16-byte blocks, how many ones.
fn count_block_bits(blocks: &[u8], counts: &mut [usize; 128]) {
    for block in blocks.chunks_exact(16) {
        let v = u128::from_le_bytes(block.try_into().unwrap());
        for (i, c) in counts.iter_mut().enumerate() {
            *c += ((v >> i) & 1) as usize;
        }
    }
}

#[test]
fn permute_bits_and_signal_bits_are_balanced() {
    let c: Circuit = lanes(LANES);
    let mut rng = ChaCha12Rng::seed_from_u64(1);
    for scheme in Scheme::ALL {
        let (mut input_pi, mut output_pi, mut output_lsb) = (0, 0, 0);
        // Output wires per lane: AND, XOR, NOT(AND), AND(XOR, NOT); per kind.
        let mut kind_pi = [0usize; 4];
        for seed in 0..GARBLINGS {
            let gc = garble(scheme, &c, seed, 1 << 20);
            input_pi += gc.inputs.iter().filter(|l| l[0].lsb()).count();
            for l in &gc.inputs {
                assert_ne!(l[0].lsb(), l[1].lsb(), "{scheme}: point and permute");
            }
            output_pi += gc.decoding.iter().filter(|&&d| d).count();
            for (i, &d) in gc.decoding.iter().enumerate() {
                kind_pi[i % 4] += usize::from(d);
            }
            let x: Vec<bool> = (0..c.n_inputs()).map(|_| rng.gen()).collect();
            let out = evaluate(scheme, &c, &gc.encode(&x), &gc.stream, 1 << 20).unwrap();
            output_lsb += out.iter().filter(|l| l.lsb()).count();
        }
        let n = GARBLINGS as usize;
        balanced(input_pi, n * c.n_inputs(), &format!("{scheme} input π"));
        balanced(output_pi, n * c.n_outputs(), &format!("{scheme} output π"));
        balanced(
            output_lsb,
            n * c.n_outputs(),
            &format!("{scheme} output lsb"),
        );
        for (k, &ones) in kind_pi.iter().enumerate() {
            let what = format!("{scheme} π of output kind {k}");
            balanced(ones, n * LANES as usize, &what);
        }
    }
}

#[test]
fn table_bits_are_balanced() {
    // AND-only circuit: lanes of AND(a_i, b_i) then AND(out, a_{i+1}).
    let n = 8u32;
    let mut gates = Vec::new();
    for i in 0..n {
        gates.push(Gate::And {
            a: i,
            b: n + i,
            out: 2 * n + 2 * i,
        });
        gates.push(Gate::And {
            a: 2 * n + 2 * i,
            b: (i + 1) % n,
            out: 2 * n + 2 * i + 1,
        });
    }
    let outs = (0..n).map(|i| 2 * n + 2 * i + 1).collect();
    let c = common::circuit(2 * n, gates, outs);
    for scheme in Scheme::ALL {
        let mut counts = [0usize; 128];
        let mut mask = [0usize; 8];
        let mut blocks = 0;
        for seed in 0..GARBLINGS {
            let gc = garble(scheme, &c, 1000 + seed, 1 << 20);
            let tables: Vec<u8> = match scheme {
                // A mask byte before every even-numbered AND gate's 32 bytes.
                Scheme::Prf => {
                    let mut t = Vec::new();
                    for pair in gc.stream.chunks_exact(1 + 64) {
                        for (i, c) in mask.iter_mut().enumerate() {
                            *c += usize::from((pair[0] >> i) & 1);
                        }
                        t.extend_from_slice(&pair[1..]);
                    }
                    t
                }
                _ => gc.stream.clone(),
            };
            assert_eq!(tables.len(), 32 * c.gates().len(), "{scheme}");
            count_block_bits(&tables, &mut counts);
            blocks += tables.len() / 16;
        }
        for (bit, &ones) in counts.iter().enumerate() {
            if scheme == Scheme::Prf && bit == 0 {
                // T1 and T2 are built from lsb-cleared K's (§2.4): bit 0 is always 0.
                assert_eq!(ones, 0, "prf: bit 0 of T1/T2");
                continue;
            }
            balanced(ones, blocks, &format!("{scheme} table bit {bit}"));
        }
        if scheme == Scheme::Prf {
            for (i, &ones) in mask.iter().enumerate() {
                balanced(
                    ones,
                    GARBLINGS as usize * c.gates().len() / 2,
                    &format!("mask bit {i}"),
                );
            }
        }
    }
}
