//! Criterion benches: each party's steps of the base OT (Chou–Orlandi, 128 OTs) and of the
//! IKNP extension for m = 128, 10,000 and 250,000 OTs (the last the evaluator input of the
//! MinCut-size circuit), and the 250,000 in chunks of 8,192 and 32,768 (each side's total
//! over all chunks, buffers reused with the `_into` forms).

// criterion_group! generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use transputation_core::Block;
use transputation_ot::{self as ot, base};

fn base_ot(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let choices: Vec<bool> = (0..ot::BASE_OTS).map(|_| rng.gen()).collect();
    let mut group = c.benchmark_group("base-ot/128");
    group.sample_size(20);
    group.bench_function("sender-start (evaluator, msg_a)", |b| {
        b.iter(|| base::BaseSender::new(&mut rng))
    });
    let (_, msg_a) = base::BaseSender::new(&mut rng);
    group.bench_function("receiver (garbler, msg_b)", |b| {
        b.iter(|| base::receive(&msg_a, &choices, &mut rng).unwrap())
    });
    group.bench_function("receiver-precompute (garbler, before msg_a)", |b| {
        b.iter(|| base::Precomputed::new(ot::BASE_OTS, &mut rng))
    });
    group.bench_function("receiver-after-precompute (garbler, msg_b)", |b| {
        b.iter_batched(
            || base::Precomputed::new(ot::BASE_OTS, &mut ChaCha20Rng::seed_from_u64(6)),
            |pre| pre.receive(&msg_a, &choices).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    // The keys are timed with a fresh `a` (a msg_b made for another `a` costs the same).
    let (_, msg_a) = base::BaseSender::new(&mut rng);
    let (msg_b, _) = base::receive(&msg_a, &choices, &mut rng).unwrap();
    group.bench_function("sender-keys (evaluator, on msg_b)", |b| {
        b.iter_batched(
            || base::BaseSender::new(&mut ChaCha20Rng::seed_from_u64(7)).0,
            |s| s.keys(&msg_b, ot::BASE_OTS).unwrap(),
            criterion::BatchSize::SmallInput,
        )
    });
    group.finish();
}

fn iknp(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(2);
    for m in [128usize, 10_000, 250_000] {
        let pairs: Vec<[Block; 2]> = (0..m)
            .map(|_| [Block(rng.gen()), Block(rng.gen())])
            .collect();
        let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
        let mut group = c.benchmark_group(format!("ot/{m}"));
        group.throughput(Throughput::Elements(m as u64));
        group.sample_size(10);
        // One run of the protocol provides each step's input; each step is timed alone, on
        // a fresh state from the setup closure (untimed). choose includes the base-OT
        // sender's key derivation, respond the base-OT receiver.
        let (_, msg_a) = ot::Receiver::start(&mut rng);
        let (_, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
        let setup = || {
            let mut rng = ChaCha20Rng::seed_from_u64(3);
            let (r, msg_a) = ot::Receiver::start(&mut rng);
            let (s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
            (r, s, msg_b)
        };
        let (r, s, msg_b_fresh) = setup();
        let (chosen, msg_u) = r.choose(&msg_b_fresh, &choices).unwrap();
        let msg_y = s.send(&msg_u, &pairs).unwrap();
        drop(chosen);
        let small = criterion::BatchSize::SmallInput;
        group.bench_function(BenchmarkId::new("garbler", "respond"), |b| {
            b.iter(|| ot::Sender::respond(&msg_a, &mut rng).unwrap())
        });
        group.bench_function(BenchmarkId::new("evaluator", "choose"), |b| {
            b.iter_batched(
                || ot::Receiver::start(&mut ChaCha20Rng::seed_from_u64(4)).0,
                |r| r.choose(&msg_b, &choices).unwrap(),
                small,
            )
        });
        group.bench_function(BenchmarkId::new("garbler", "send"), |b| {
            b.iter_batched(|| setup().1, |s| s.send(&msg_u, &pairs).unwrap(), small)
        });
        group.bench_function(BenchmarkId::new("evaluator", "receive"), |b| {
            b.iter_batched(
                || {
                    let (r, _, msg_b) = setup();
                    r.choose(&msg_b, &choices).unwrap().0
                },
                |chosen| chosen.receive(&msg_y).unwrap(),
                small,
            )
        });
        group.finish();
    }
}

fn iknp_chunks(c: &mut Criterion) {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let m = 250_000;
    let pairs: Vec<[Block; 2]> = (0..m)
        .map(|_| [Block(rng.gen()), Block(rng.gen())])
        .collect();
    let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
    let session = || {
        let mut rng = ChaCha20Rng::seed_from_u64(6);
        let (r, msg_a) = ot::Receiver::start(&mut rng);
        let (s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
        (r.base(&msg_b).unwrap(), s)
    };
    for chunk in [8_192usize, 32_768] {
        let mut group = c.benchmark_group(format!("ot/{m}-chunks-of-{chunk}"));
        group.throughput(Throughput::Elements(m as u64));
        group.sample_size(10);
        // The garbler's state only advances its PRG position and OT index from one
        // iteration to the next, which costs the same. The evaluator's keeps every chunk
        // pending until it is received, so it gets a fresh session per iteration.
        let (mut ext, mut s) = session();
        let msg_us: Vec<Vec<u8>> = choices.chunks(chunk).map(|c| ext.extend(c)).collect();
        let mut buf = Vec::new();
        group.bench_function(BenchmarkId::new("evaluator", "extend"), |b| {
            b.iter_batched(
                || session().0,
                |mut ext| {
                    for c in choices.chunks(chunk) {
                        ext.extend_into(c, &mut buf);
                    }
                    ext
                },
                criterion::BatchSize::LargeInput,
            )
        });
        group.bench_function(BenchmarkId::new("garbler", "extend"), |b| {
            b.iter(|| {
                for (u, p) in msg_us.iter().zip(pairs.chunks(chunk)) {
                    s.extend_into(u, p, &mut buf).unwrap();
                }
            })
        });
        let mut labels = Vec::with_capacity(m);
        group.bench_function(BenchmarkId::new("evaluator", "receive"), |b| {
            b.iter_batched(
                || {
                    let (mut ext, mut s) = session();
                    let msg_ys: Vec<Vec<u8>> = choices
                        .chunks(chunk)
                        .zip(pairs.chunks(chunk))
                        .map(|(c, p)| s.extend(&ext.extend(c), p).unwrap())
                        .collect();
                    (ext, msg_ys)
                },
                |(mut ext, msg_ys)| {
                    labels.clear();
                    for y in &msg_ys {
                        ext.receive_into(y, &mut labels).unwrap();
                    }
                },
                criterion::BatchSize::LargeInput,
            )
        });
        group.finish();
    }
}

criterion_group!(benches, base_ot, iknp, iknp_chunks);
criterion_main!(benches);
