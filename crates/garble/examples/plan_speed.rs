//! What reading and planning a circuit costs per gate, apart from garbling: reading the
//! gates of a circuit (generating them, for a generated one) with their wire ends, and
//! planning every segment of the half-gates and `prf` programs from them. The planning
//! figures include the reading.
//!
//! `cargo run --release -p transputation-garble --example plan_speed [CIRCUIT] [ROUNDS] [WINDOW]`
//! (default: `synthetic:and=3000000,xor=7500000,inputs=1000,depth=3000`, levels of 1,000
//! AND gates, generated; 3 rounds, the fastest reported; windows of 8,192 gates)

use std::time::Instant;

use transputation_circuits::{library, GateBatch};
use transputation_garble::{Parallel, Scheme};

fn fastest(rounds: usize, mut f: impl FnMut()) -> f64 {
    (0..rounds)
        .map(|_| {
            let start = Instant::now();
            f();
            start.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let spec = args
        .next()
        .unwrap_or_else(|| "synthetic:and=3000000,xor=7500000,inputs=1000,depth=3000".into());
    let rounds: usize = args
        .next()
        .map_or(3, |r| r.parse().expect("ROUNDS: a number"));
    let window: usize = args
        .next()
        .map_or(8192, |w| w.parse().expect("WINDOW: a number"));
    let parallel = Parallel::none()
        .with_window(window)
        .unwrap_or_else(|e| panic!("{e}"));
    let circuit = library::load(&spec).unwrap_or_else(|e| panic!("{e}"));
    let gates = circuit.num_gates() as f64;
    println!(
        "{spec}: {} gates, {} wire numbers, {}",
        circuit.num_gates(),
        circuit.num_wires(),
        if circuit.is_generated() {
            "generated"
        } else {
            "held"
        }
    );
    let read = fastest(rounds, || {
        let mut source = circuit.source(true);
        let mut batch = GateBatch::default();
        let mut n = 0usize;
        while source.next_batch(8192, &mut batch) {
            n += batch.gates.len() + batch.ends.len();
        }
        assert!(n > 0 || gates == 0.0);
    });
    println!("read with ends      {:6.2} ns per gate", read * 1e9 / gates);
    for scheme in [Scheme::Ideal, Scheme::Prf] {
        let plan = fastest(rounds, || {
            scheme.split_share(&circuit, &parallel);
        });
        println!(
            "plan {:<14} {:6.2} ns per gate",
            scheme.name(),
            plan * 1e9 / gates
        );
    }
}
