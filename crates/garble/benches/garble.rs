//! Criterion benches: garbling and evaluation per scheme on AES-128 and on a synthetic
//! circuit with the MinCut circuit's XOR/AND ratio, and raw AES per backend.

// criterion_group! generates an undocumented function.
#![allow(missing_docs)]

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use transputation_circuits::{library, Circuit, Stats};
use transputation_core::aes::{encrypt_under_keys, Backend, FixedKeyAes};
use transputation_core::{prg::Prg, Block};
use transputation_garble::Scheme;

fn garble_all(scheme: Scheme, circuit: &Circuit, backend: Backend) -> (Vec<u8>, Vec<Block>) {
    let mut prg = Prg::new(Block(1));
    let mut g = scheme.garbler(circuit, &mut prg, backend);
    let labels = (0..circuit.n_inputs() as u32)
        .map(|w| g.input_labels(w)[0])
        .collect();
    let mut tables = Vec::new();
    while g.garble(&mut tables, 1 << 20) {}
    (tables, labels)
}

fn schemes(c: &mut Criterion) {
    let backend = Backend::detect();
    for spec in ["aes128", "synthetic:and=100000,xor=252492,inputs=1000"] {
        let circuit = library::load(spec).unwrap();
        let and = Stats::of(&circuit).and;
        let mut group = c.benchmark_group(format!("garble/{}", spec.split(':').next().unwrap()));
        group.throughput(Throughput::Elements(and));
        group.sample_size(10);
        for scheme in Scheme::ALL {
            group.bench_function(BenchmarkId::new("garble", scheme.name()), |b| {
                b.iter(|| garble_all(scheme, &circuit, backend))
            });
            let (tables, labels) = garble_all(scheme, &circuit, backend);
            group.bench_function(BenchmarkId::new("evaluate", scheme.name()), |b| {
                b.iter(|| {
                    let mut e = scheme.evaluator(&circuit, &labels, backend);
                    e.feed(&tables).unwrap();
                    e.output_labels().unwrap()
                })
            });
        }
        group.finish();
    }
}

fn aes(c: &mut Criterion) {
    let mut group = c.benchmark_group("aes");
    let n = 1024;
    group.throughput(Throughput::Elements(n as u64));
    for backend in Backend::available() {
        let aes = FixedKeyAes::with_backend(Block(3), backend);
        let mut blocks: Vec<Block> = (0..n as u128).map(Block).collect();
        group.bench_function(BenchmarkId::new("fixed-key", backend.name()), |b| {
            b.iter(|| aes.encrypt_blocks(&mut blocks))
        });
        let keys: Vec<Block> = (0..n as u128).map(|i| Block(i * 7919)).collect();
        group.bench_function(BenchmarkId::new("per-key", backend.name()), |b| {
            b.iter(|| encrypt_under_keys(backend, &keys, &mut blocks, 1))
        });
    }
    group.finish();
}

criterion_group!(benches, schemes, aes);
criterion_main!(benches);
