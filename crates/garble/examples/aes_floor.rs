//! The AES work of each scheme alone, per AND gate of a circuit: what garbling and
//! evaluating would cost if they did nothing but their hash calls and key schedules
//! (docs/garbling.md §6), on the fastest backend of this CPU or the one named. It bounds from
//! below what `garble-bench` can report, and so tells which ratios between the schemes are
//! reachable at all.
//!
//! It also sets `ideal`'s TCCR hash against the multi-instance hash MITCCRH
//! (docs/garbling.md §5.3): their AES work, and the hashes whole.
//!
//! The free gates (XOR, and INV made an XOR with a constant) are no AES work under `ideal`
//! and `circular`, but not free of memory work: two labels read from their slots and one
//! written. That is measured too, as a loop of such gates alone over a program of packed
//! slots (the half-gates loops' form) at random among 256 labels (4 KiB: the first-level
//! cache) and among 8,192 (128 KiB, about the MinCut size's live wires); per circuit, the
//! free gates per AND gate at the first speed are what the kernels cost at least on top
//! of the AES floor.
//!
//! `cargo run --release -p transputation-garble --example aes_floor [ROUNDS] [BACKEND]`
//! (BACKEND: `portable`, `aes-ni`, `vaes256`, `vaes`, `armv8`; default the fastest here)

use std::time::Instant;

use transputation_core::aes::{encrypt_under_keys, Backend, FixedKeyAes};
use transputation_core::Block;
use transputation_garble::schemes::half_gates::{HalfGateHash, Mitccrh, Tccr};

/// Gates per call, as a wave of the MinCut-size circuit offers (and more than the kernels'
/// widest group).
const GATES: usize = 1024;
/// Calls per measurement.
const CALLS: usize = 400;

/// Free gates per measurement of [`free_gate_ns`].
const FREE_GATES: usize = 1 << 20;

/// Nanoseconds per free gate: an XOR of two labels into a third, the three slots packed
/// in 8 bytes (`a | b << 21 | out << 42`) at random among `live` labels (a power of two).
fn free_gate_ns(live: usize) -> f64 {
    debug_assert!(live.is_power_of_two());
    let mask = live as u64 - 1;
    let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut slot = || {
        // xorshift64
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x & mask
    };
    let program: Vec<u64> = (0..FREE_GATES)
        .map(|_| slot() | slot() << 21 | slot() << 42)
        .collect();
    let mut labels = blocks(live, 8);
    let mut run = || {
        for &p in &program {
            // Masked, so that the indexing needs no bounds check (as in the kernels).
            let (a, b, out) = (p & mask, (p >> 21) & mask, (p >> 42) & mask);
            labels[out as usize] = labels[a as usize] ^ labels[b as usize];
        }
    };
    run();
    let start = Instant::now();
    run();
    let ns = start.elapsed().as_secs_f64() * 1e9 / FREE_GATES as f64;
    std::hint::black_box(&labels);
    ns
}

/// Nanoseconds per gate of `f`, run on `GATES` gates `CALLS` times.
fn per_gate(mut f: impl FnMut()) -> f64 {
    f();
    let start = Instant::now();
    for _ in 0..CALLS {
        f();
    }
    start.elapsed().as_secs_f64() * 1e9 / (CALLS * GATES) as f64
}

fn blocks(n: usize, salt: u128) -> Vec<Block> {
    (0..n as u128)
        .map(|i| Block((i + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15_f39c_c060_5ced_c835) ^ salt))
        .collect()
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Ends the program with `problem` and the usage line (exit status 2).
fn usage(problem: &str) -> ! {
    eprintln!("aes_floor: {problem}");
    eprintln!(
        "usage: aes_floor [ROUNDS] [BACKEND]  (BACKEND: portable, aes-ni, vaes256, vaes, armv8)"
    );
    std::process::exit(2)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let rounds: usize = match args.next() {
        None => 5,
        Some(r) => match r.parse() {
            Ok(n) if n > 0 => n,
            _ => usage(&format!("ROUNDS must be a whole number above 0, not {r:?}")),
        },
    };
    let backend = match args.next() {
        None => Backend::detect(),
        Some(name) => {
            let Some(b) = Backend::from_name(&name) else {
                usage(&format!("no AES backend named {name:?}"))
            };
            if let Some(why) = b.why_unsupported() {
                usage(&format!("backend {name} cannot run here: {why}"));
            }
            b
        }
    };
    let fixed =
        FixedKeyAes::with_backend(Block(0x452a_452a_452a_452a_452a_452a_452a_452a), backend);
    let (xs, tweaks) = (
        blocks(4 * GATES, 1),
        (0..4 * GATES as u64).collect::<Vec<_>>(),
    );
    let mut hashes = vec![Block::ZERO; 4 * GATES];
    let keys = blocks(4 * GATES, 2);
    let mut two = blocks(8 * GATES, 3);
    let mut one = blocks(4 * GATES, 4);
    let (mut ideal, mut four_one, mut prf_and) = (vec![], vec![], vec![]);
    let (mut free_near, mut free_far) = (vec![], vec![]);
    // MITCCRH [GKWWY20], measured against ideal's TCCR hash (docs/garbling.md §5.3): its
    // AES work (two public keys per AND gate, each encrypting a wire's two labels garbling
    // and one evaluating), and both hashes whole as the half-gates paths call them.
    let two_keys = blocks(2 * GATES, 5);
    let mut mi_garble = blocks(4 * GATES, 6);
    let mut mi_eval = blocks(2 * GATES, 7);
    let (tccr, mitccrh) = (
        Tccr::new(backend),
        Mitccrh::new(backend, Block(0x55 * (u128::MAX / 255))),
    );
    let delta = Block(0xd1d1_d2d3_d4d5_d6d7_d8d9_dadb_dcdd_dedf);
    let inputs: Vec<[Block; 2]> = xs.chunks(2).map(|c| [c[0], c[1]]).take(GATES).collect();
    let index: Vec<u32> = (0..GATES as u32).collect();
    let (mut garbled, mut evaluated) =
        (vec![[Block::ZERO; 4]; GATES], vec![[Block::ZERO; 2]; GATES]);
    let (mut mi_g, mut mi_e, mut whole) = (vec![], vec![], [vec![], vec![], vec![], vec![]]);
    for _ in 0..rounds {
        mi_g.push(per_gate(|| {
            encrypt_under_keys(backend, &two_keys, &mut mi_garble, 2)
        }));
        mi_e.push(per_gate(|| {
            encrypt_under_keys(backend, &two_keys, &mut mi_eval, 1)
        }));
        for (i, h) in [&tccr as &dyn HalfGateHash, &mitccrh]
            .into_iter()
            .enumerate()
        {
            whole[2 * i].push(per_gate(|| {
                h.hash_and_gates(delta, &inputs, &index, 0, &mut garbled)
            }));
            whole[2 * i + 1].push(per_gate(|| {
                h.hash_eval_gates(&inputs, &index, 0, &mut evaluated)
            }));
        }
        // ideal: four TCCR hashes (two AES each) per AND gate.
        ideal.push(per_gate(|| fixed.tccr(&xs, &tweaks, &mut hashes)));
        // Four labels as keys, one block each: a `circular` AND gate and a `prf` XOR gate.
        four_one.push(per_gate(|| encrypt_under_keys(backend, &keys, &mut one, 1)));
        // prf's AND gates: four labels as keys, two blocks each.
        prf_and.push(per_gate(|| encrypt_under_keys(backend, &keys, &mut two, 2)));
        free_near.push(free_gate_ns(256));
        free_far.push(free_gate_ns(8192));
    }
    let (free_near, free_far) = (median(free_near), median(free_far));
    let (ideal, prf_and) = (median(ideal), median(prf_and));
    // One measurement serves both: the same work.
    let circular = median(four_one);
    let prf_xor = circular;
    println!(
        "backend {}, medians of {rounds} rounds, ns per gate:",
        backend.name()
    );
    println!(
        "  garbling: ideal AND {ideal:.2}, circular AND {circular:.2}, prf AND {prf_and:.2}, \
         prf XOR {prf_xor:.2}"
    );
    // The evaluator's work is half the garbler's for each of these (two hashes of an AND
    // gate under ideal, two labels as keys of one block each under circular and prf): the
    // same calls, half as many.
    println!(
        "  evaluation: ideal AND {:.2}, circular AND {:.2}, prf AND {:.2}, prf XOR {:.2}",
        ideal / 2.0,
        circular / 2.0,
        circular / 2.0,
        circular / 2.0
    );
    let [tg, te, mg, me] = whole.map(median);
    println!(
        "  ideal's hash, TCCR against MITCCRH: AES work garbling {ideal:.2} / {:.2}, \
         evaluating {:.2} / {:.2}; the hashes whole (as the half-gates paths call them) \
         garbling {tg:.2} / {mg:.2}, evaluating {te:.2} / {me:.2}",
        median(mi_g),
        ideal / 2.0,
        median(mi_e)
    );
    println!(
        "  free gates (no AES): an XOR of two labels into a third at random among 256 labels \
         {free_near:.2}, among 8,192 {free_far:.2}"
    );
    per_circuit(ideal, circular, (prf_and, prf_xor), free_near);
}

/// Each circuit's floors per AND gate from the per-gate ones, and its free gates' least
/// cost at `free_near` ns each.
fn per_circuit(ideal: f64, circular: f64, (prf_and, prf_xor): (f64, f64), free_near: f64) {
    // XOR gates per AND gate: the MinCut size (2,524,920 / 999,960), sha-256.txt
    // (42,029 / 90,825), AES-128 (24,040 / 6,400); and the free gates of the half-gates
    // schemes, XOR and INV: sha-256.txt 145,287, AES-128 24,856.
    for (name, xors, free) in [
        ("MinCut size", 2.525, 2.525),
        ("sha-256.txt", 0.463, 1.600),
        ("aes128", 3.756, 3.884),
    ] {
        let prf = prf_and + xors * prf_xor;
        let prf_eval = (1.0 + xors) * circular / 2.0;
        println!(
            "  {name}: per AND gate garbling ideal {ideal:.2}, circular {circular:.2}, prf \
             {prf:.2} (prf / ideal {:.2}, circular / ideal {:.2}); evaluating ideal {:.2}, \
             circular {:.2}, prf {prf_eval:.2}; ideal's and circular's free gates, \
             {free:.2} per AND gate, at least {:.2} more",
            prf / ideal,
            circular / ideal,
            ideal / 2.0,
            circular / 2.0,
            free * free_near,
        );
    }
}
