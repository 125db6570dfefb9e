//! Tweak uniqueness of the half-gates schemes (docs/garbling.md §3.4, §7.6, §7.7): the hash
//! is wrapped in a recorder, a whole circuit is garbled and evaluated (or several garblings
//! of a session under one `Δ`), and every `(X, tweak)` query is checked. (`prf`'s `(key, blk)` pairs are checked by a unit test in
//! `src/schemes/prf/tests.rs`, through a test-only hook.)

mod common;

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use transputation_circuits::{library, Circuit, Stats};
use transputation_core::aes::Backend;
use transputation_core::{prg::Prg, Block};
use transputation_garble::schemes::half_gates::{
    HalfGateHash, HalfGatesEvaluator, HalfGatesGarbler, LabelKeyed, Tccr,
};
use transputation_garble::{decode, Evaluate, Garble, GarbleStart, Parallel};

/// Hash queries `(X, tweak)` in order.
type Queries = Vec<(Block, u64)>;
type Log = Arc<Mutex<Queries>>;

/// A hash that records every query before answering it.
struct Recording<H> {
    inner: H,
    log: Log,
}

impl<H: HalfGateHash> HalfGateHash for Recording<H> {
    fn hash(&self, xs: &[Block], tweaks: &[u64], out: &mut [Block]) {
        assert_eq!(xs.len(), tweaks.len());
        assert_eq!(xs.len(), out.len());
        self.log
            .lock()
            .unwrap()
            .extend(xs.iter().copied().zip(tweaks.iter().copied()));
        self.inner.hash(xs, tweaks, out);
    }
}

/// Garbles and evaluates `circuit` with recording hashes made by `make`; returns the
/// garbler's and the evaluator's queries and `Δ`. Checks the decoded output too.
fn record<H: HalfGateHash>(
    circuit: &Circuit,
    make: impl Fn() -> H,
    target: usize,
) -> (Queries, Queries, Block) {
    let seq = Parallel::none();
    record_par(
        circuit,
        make,
        target,
        Block(0x7eed),
        GarbleStart::default(),
        &seq,
    )
}

/// As [`record_par`], sequentially.
fn record_from<H: HalfGateHash>(
    circuit: &Circuit,
    make: impl Fn() -> H,
    target: usize,
    seed: Block,
    start: GarbleStart,
) -> (Queries, Queries, Block) {
    record_par(circuit, make, target, seed, start, &Parallel::none())
}

/// As [`record`], with the PRG seeded by `seed`, the garbler starting from `start` and the
/// evaluator at its tweak base, both working as `parallel` says.
fn record_par<H: HalfGateHash>(
    circuit: &Circuit,
    make: impl Fn() -> H,
    target: usize,
    seed: Block,
    start: GarbleStart,
    parallel: &Parallel,
) -> (Queries, Queries, Block) {
    let (glog, elog) = (Log::default(), Log::default());
    let mut prg = Prg::new(seed);
    let mut garbler = HalfGatesGarbler::with_parallel(
        circuit,
        Recording {
            inner: make(),
            log: glog.clone(),
        },
        &mut prg,
        start,
        parallel,
    );
    let bits: Vec<bool> = (0..circuit.n_inputs()).map(|i| i % 3 == 1).collect();
    let labels: Vec<Block> = bits
        .iter()
        .enumerate()
        .map(|(w, &v)| garbler.input_labels(w as u32)[usize::from(v)])
        .collect();
    let mut stream = Vec::new();
    while garbler.garble(&mut stream, target) {}
    let mut evaluator = HalfGatesEvaluator::with_parallel(
        circuit,
        Recording {
            inner: make(),
            log: elog.clone(),
        },
        &labels,
        start.tweak_base,
        parallel,
    );
    // Fed in odd pieces, so that the evaluator's batches differ from the garbler's.
    let mut used = 0;
    for end in (0..stream.len())
        .step_by(1000)
        .skip(1)
        .chain([stream.len()])
    {
        used += evaluator.feed(&stream[used..end]).unwrap();
    }
    assert_eq!(used, stream.len());
    let out = decode(&evaluator.output_labels().unwrap(), &garbler.decoding());
    assert_eq!(out, circuit.eval_bits(&bits));
    let delta = garbler.delta();
    let g = std::mem::take(&mut *glog.lock().unwrap());
    let e = std::mem::take(&mut *elog.lock().unwrap());
    (g, e, delta)
}

/// The checks of §7.6 on the queries of `n_and` AND gates under one `Δ`: one garbling, or
/// all those of a session.
fn check_queries(n_and: u64, g: &[(Block, u64)], e: &[(Block, u64)], delta: Block) {
    assert_eq!(g.len() as u64, 4 * n_and, "4 garbler hashes per AND gate");
    assert_eq!(e.len() as u64, 2 * n_and, "2 evaluator hashes per AND gate");

    // No (X, tweak) pair twice.
    let pairs: HashSet<(Block, u64)> = g.iter().copied().collect();
    assert_eq!(
        pairs.len(),
        g.len(),
        "a (label, tweak) pair was hashed twice"
    );

    // Each tweak hashes exactly one label pair {X, X ⊕ Δ}: tweaks are never shared between
    // AND gates or between the two halves of one gate.
    let mut by_tweak: HashMap<u64, Vec<Block>> = HashMap::new();
    for &(x, t) in g {
        by_tweak.entry(t).or_default().push(x);
    }
    for (t, xs) in &by_tweak {
        assert_eq!(xs.len(), 2, "tweak {t} used {} times", xs.len());
        assert_eq!(
            xs[0] ^ xs[1],
            delta,
            "tweak {t} hashes two unrelated labels"
        );
    }
    // The AND counter of §5.1: the n-th AND gate uses 2n+1 and 2n+2, so the tweaks are
    // exactly 1..=2·n_and (none restarted between garble() calls, nor between the
    // garblings of a session).
    let mut tweaks: Vec<u64> = by_tweak.keys().copied().collect();
    tweaks.sort_unstable();
    assert_eq!(tweaks, (1..=2 * n_and).collect::<Vec<_>>());
    // The evaluator asks exactly one of the garbler's queries per tweak: it agrees on the
    // counter and hashes a label the garbler hashed with that tweak.
    let mut seen = HashSet::new();
    for &(x, t) in e {
        assert!(
            pairs.contains(&(x, t)),
            "evaluator query ({x:?}, {t}) unknown"
        );
        assert!(seen.insert(t), "evaluator used tweak {t} twice");
    }
}

#[test]
fn ideal_sha256_tweaks_unique() {
    let c = library::load("sha256").unwrap();
    for target in [64, 1 << 20] {
        let (g, e, delta) = record(&c, || Tccr::new(Backend::detect()), target);
        check_queries(Stats::of(&c).and, &g, &e, delta);
    }
}

#[test]
fn circular_sha256_tweaks_unique() {
    let c = library::load("sha256").unwrap();
    for target in [64, 1 << 20] {
        let (g, e, delta) = record(&c, || LabelKeyed::new(Backend::detect()), target);
        check_queries(Stats::of(&c).and, &g, &e, delta);
    }
}

/// Fine-grained parallel garbling and evaluation make exactly the sequential hash queries
/// (the same `(X, tweak)` pairs, in another order), and so pass the same checks: every
/// thread count, waves split at every size (`min_wave` 1) and the default, windows of 128
/// and 65536 gates.
fn check_parallel<H: HalfGateHash>(make: impl Fn() -> H) {
    let c = library::load("sha256").unwrap();
    let sorted = |mut q: Queries| {
        q.sort_unstable_by_key(|&(x, t)| (t, x.0));
        q
    };
    let (g0, e0, _) = record(&c, &make, 1 << 16);
    let (g0, e0) = (sorted(g0), sorted(e0));
    for threads in 2..=4 {
        let pool = Parallel::fgp(threads).unwrap();
        for window in [128, 65536] {
            let plain = pool.clone().with_window(window).unwrap();
            for par in [plain.clone().with_min_wave(1), plain] {
                let start = GarbleStart::default();
                let (g, e, delta) = record_par(&c, &make, 1 << 16, Block(0x7eed), start, &par);
                check_queries(Stats::of(&c).and, &g, &e, delta);
                assert!(sorted(g) == g0, "{par:?}: the garbler's queries");
                assert!(sorted(e) == e0, "{par:?}: the evaluator's queries");
            }
        }
    }
}

#[test]
fn ideal_parallel_queries_are_the_sequential_ones() {
    check_parallel(|| Tccr::new(Backend::detect()));
}

#[test]
fn circular_parallel_queries_are_the_sequential_ones() {
    check_parallel(|| LabelKeyed::new(Backend::detect()));
}

/// Three garblings of a session under one `Δ` (the OT's correlation), each with the AND
/// gates garbled before it as its tweak base: their queries together pass the checks of
/// one circuit of all their AND gates, so no tweak hashes two label pairs across them.
fn check_session<H: HalfGateHash>(make: impl Fn() -> H) {
    let c = library::load("aes128").unwrap();
    let n_and = Stats::of(&c).and;
    let delta = Block(0x5e55_1011_0ffe_7000_0000_0000_0000_0001);
    let (mut g, mut e) = (Vec::new(), Vec::new());
    for k in 0..3 {
        let start = GarbleStart {
            offset: Some(delta),
            tweak_base: k * n_and,
            hash_key: None,
        };
        let seed = Block(0x7eed + u128::from(k));
        let (gk, ek, d) = record_from(&c, &make, 1 << 16, seed, start);
        assert_eq!(d, delta, "garbling {k} is under the session's Δ");
        g.extend(gk);
        e.extend(ek);
    }
    check_queries(3 * n_and, &g, &e, delta);
}

#[test]
fn ideal_tweaks_unique_across_a_sessions_garblings() {
    check_session(|| Tccr::new(Backend::detect()));
}

#[test]
fn circular_tweaks_unique_across_a_sessions_garblings() {
    check_session(|| LabelKeyed::new(Backend::detect()));
}

#[test]
fn tweaks_follow_gate_order_across_xor_and_not() {
    // The n-th AND gate in circuit order (whatever XOR/NOT gates lie between) gets j = 2n+1
    // for its first input and j' = 2n+2 for its second. Checked by matching each query's
    // label against the garbler's input labels on a circuit whose AND inputs are all
    // circuit inputs or NOTs of them.
    use transputation_circuits::Gate;
    let n = 6u32;
    let mut gates = Vec::new();
    for i in 0..n {
        gates.push(Gate::Inv {
            a: i,
            out: 2 * n + 3 * i,
        });
        gates.push(Gate::Xor {
            a: i,
            b: n + i,
            out: 2 * n + 3 * i + 1,
        });
        // AND(NOT a_i, b_{n-1-i})
        gates.push(Gate::And {
            a: 2 * n + 3 * i,
            b: 2 * n - 1 - i,
            out: 2 * n + 3 * i + 2,
        });
    }
    let outs = (0..n).map(|i| 2 * n + 3 * i + 2).collect();
    let c = common::circuit(2 * n, gates, outs);
    let log = Log::default();
    let mut prg = Prg::new(Block(3));
    let mut garbler = HalfGatesGarbler::new(
        &c,
        Recording {
            inner: Tccr::new(Backend::detect()),
            log: log.clone(),
        },
        &mut prg,
    );
    // Input labels are read before garbling, which reuses their slots.
    let inputs: Vec<Block> = (0..2 * n).map(|w| garbler.input_labels(w)[0]).collect();
    let mut stream = Vec::new();
    while garbler.garble(&mut stream, 1 << 20) {}
    let delta = garbler.delta();
    let log = log.lock().unwrap();
    for i in 0..n as u64 {
        let a0 = inputs[i as usize] ^ delta; // NOT a_i
        let b0 = inputs[(2 * n - 1) as usize - i as usize];
        let want: HashSet<(Block, u64)> = [
            (a0, 2 * i + 1),
            (a0 ^ delta, 2 * i + 1),
            (b0, 2 * i + 2),
            (b0 ^ delta, 2 * i + 2),
        ]
        .into();
        let got: HashSet<(Block, u64)> = log
            .iter()
            .copied()
            .filter(|&(_, t)| t == 2 * i + 1 || t == 2 * i + 2)
            .collect();
        assert_eq!(got, want, "AND gate {i}");
    }
}
