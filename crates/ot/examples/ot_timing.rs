//! Each party's OT steps timed alone, best of N runs (robust on a shared machine, where
//! criterion's means include other jobs), one-shot and in chunks: `cargo run --release -p
//! transputation-ot --example ot_timing [-- RUNS]`.

use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use transputation_core::Block;
use transputation_ot::{self as ot, base};

fn best<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .map_or(30, |a| a.parse().expect("RUNS is a number"));
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let choices: Vec<bool> = (0..ot::BASE_OTS).map(|_| rng.gen()).collect();
    let (_, msg_a) = base::BaseSender::new(&mut rng);
    let (msg_b, _) = base::receive(&msg_a, &choices, &mut rng).unwrap();
    println!("best of {runs} runs");
    println!(
        "base OT (128): evaluator start      {}",
        ms(best(runs, || base::BaseSender::new(&mut rng)))
    );
    println!(
        "base OT (128): garbler receive      {}",
        ms(best(runs, || base::receive(&msg_a, &choices, &mut rng).unwrap()))
    );
    println!(
        "base OT (128): garbler precompute   {}",
        ms(best(runs, || base::Precomputed::new(
            ot::BASE_OTS,
            &mut rng
        )))
    );
    let pres: Vec<_> = (0..runs)
        .map(|_| base::Precomputed::new(ot::BASE_OTS, &mut rng))
        .collect();
    let mut pres = pres.into_iter();
    println!(
        "base OT (128): garbler receive after precompute {}",
        ms(best(runs, || {
            pres.next().unwrap().receive(&msg_a, &choices).unwrap()
        }))
    );
    let senders: Vec<_> = (0..runs)
        .map(|_| base::BaseSender::new(&mut rng).0)
        .collect();
    let mut senders = senders.into_iter();
    println!(
        "base OT (128): evaluator keys       {}",
        ms(best(runs, || senders
            .next()
            .unwrap()
            .keys(&msg_b, ot::BASE_OTS)
            .unwrap()))
    );
    for m in [128usize, 10_000, 250_000] {
        let runs = if m > 100_000 { runs.min(10) } else { runs };
        let pairs: Vec<[Block; 2]> = (0..m)
            .map(|_| [Block(rng.gen()), Block(rng.gen())])
            .collect();
        let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
        let (mut choose, mut send, mut receive) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let (r, s, msg_b) = session(&mut rng);
            let t = Instant::now();
            let (chosen, msg_u) = r.choose(&msg_b, &choices).unwrap();
            choose.push(t.elapsed());
            let t = Instant::now();
            let msg_y = s.send(&msg_u, &pairs).unwrap();
            send.push(t.elapsed());
            let t = Instant::now();
            let labels = chosen.receive(&msg_y).unwrap();
            receive.push(t.elapsed());
            assert_eq!(labels[m - 1], pairs[m - 1][choices[m - 1] as usize]);
        }
        println!(
            "m = {m:>7}: evaluator choose {} (base keys + IKNP), garbler send {}, evaluator receive {}",
            ms(min(&choose)),
            ms(min(&send)),
            ms(min(&receive))
        );
    }
    chunked(runs.min(10), &mut rng);
}

/// A fresh session up to msg_b: the receiver, the sender and msg_b.
fn session(rng: &mut ChaCha20Rng) -> (ot::Receiver, ot::Sender, Vec<u8>) {
    let (r, msg_a) = ot::Receiver::start(rng);
    let (s, msg_b) = ot::Sender::respond(&msg_a, rng).unwrap();
    (r, s, msg_b)
}

fn min(v: &[Duration]) -> Duration {
    v.iter().min().copied().unwrap_or_default()
}

/// 250,000 OTs (the MinCut-size circuit's evaluator input) in one chunk and in chunks of
/// 32,768 and 8,192: each side's total compute over all chunks (base OT excluded), best of
/// `runs`. "fresh": every msg_u and msg_y is a new vector, all made before the first msg_y
/// is taken (the evaluator running ahead of the garbler); "reused": each side writes every
/// chunk into one buffer with the `_into` forms, chunk after chunk.
fn chunked(runs: usize, rng: &mut ChaCha20Rng) {
    let m = 250_000;
    let pairs: Vec<[Block; 2]> = (0..m)
        .map(|_| [Block(rng.gen()), Block(rng.gen())])
        .collect();
    let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
    for chunk in [m, 32_768, 8_192] {
        let (mut extend, mut send, mut receive) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..runs {
            let (r, mut s, msg_b) = session(rng);
            let mut ext = r.base(&msg_b).unwrap();
            let t = Instant::now();
            let msg_us: Vec<Vec<u8>> = choices.chunks(chunk).map(|c| ext.extend(c)).collect();
            extend.push(t.elapsed());
            let t = Instant::now();
            let msg_ys: Vec<Vec<u8>> = msg_us
                .iter()
                .zip(pairs.chunks(chunk))
                .map(|(u, p)| s.extend(u, p).unwrap())
                .collect();
            send.push(t.elapsed());
            let t = Instant::now();
            let mut labels = Vec::with_capacity(m);
            for y in &msg_ys {
                ext.receive_into(y, &mut labels).unwrap();
            }
            receive.push(t.elapsed());
            assert_eq!(labels[m - 1], pairs[m - 1][choices[m - 1] as usize]);
        }
        println!(
            "m = {m}, chunks of {chunk:>6}, fresh : evaluator extend {}, garbler extend {}, evaluator receive {}",
            ms(min(&extend)),
            ms(min(&send)),
            ms(min(&receive))
        );
        let (mut extend, mut send, mut receive) = (Vec::new(), Vec::new(), Vec::new());
        let (r, mut s, msg_b) = session(rng);
        let mut ext = r.base(&msg_b).unwrap();
        let (mut u, mut y, mut labels) = (Vec::new(), Vec::new(), Vec::with_capacity(m));
        // One untimed round first, so that the buffers exist (as in a long session).
        for _ in 0..=runs {
            let (mut te, mut ts, mut tr) = (Duration::ZERO, Duration::ZERO, Duration::ZERO);
            labels.clear();
            for (c, p) in choices.chunks(chunk).zip(pairs.chunks(chunk)) {
                let t = Instant::now();
                ext.extend_into(c, &mut u);
                te += t.elapsed();
                let t = Instant::now();
                s.extend_into(&u, p, &mut y).unwrap();
                ts += t.elapsed();
                let t = Instant::now();
                ext.receive_into(&y, &mut labels).unwrap();
                tr += t.elapsed();
            }
            assert_eq!(labels[m - 1], pairs[m - 1][choices[m - 1] as usize]);
            extend.push(te);
            send.push(ts);
            receive.push(tr);
        }
        println!(
            "m = {m}, chunks of {chunk:>6}, reused: evaluator extend {}, garbler extend {}, evaluator receive {}",
            ms(min(&extend[1..])),
            ms(min(&send[1..])),
            ms(min(&receive[1..]))
        );
    }
}
