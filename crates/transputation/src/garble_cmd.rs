//! `transputation garble-bench`: garbling and evaluation speed of a scheme, on one thread,
//! with fine-grained parallelism on several (`--parallel fgp --threads N`; the tables are
//! the same), or by the circuit's parallel regions, a region per thread
//! (`--parallel cgp`, coarse-grained parallelism: the tables in frames).
//!
//! Set-up (allocating the label tables, making input labels) is timed apart. Garbling is
//! timed alone, streaming its tables batch by batch into a temporary file (the
//! writes are not timed). Evaluation is timed alone too, reading the batches back and
//! timing only the evaluator's work on them. Only one party's labels are in memory at a
//! time, plus one batch, as in a real session. The decoded output is checked against plain
//! evaluation.

use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use rand::{Rng, SeedableRng};
use serde_json::json;
use transputation_circuits::{library, Circuit, Stats};
use transputation_core::aes::Backend;
use transputation_core::{prg::Prg, Block};
use transputation_garble::{
    decode, CoarseEvaluator, CoarseGarbler, Evaluate, Garble, GarbleStart, Layout, Parallel, Scheme,
};

use crate::parallel_mode::{decide_auto_for, AutoFacts, ParallelMode};
use crate::report::{peak_rss_bytes, table, thousands};

/// Bytes of tables per garbling batch.
const BATCH_BYTES: usize = 1 << 18;

#[derive(Args, Debug)]
pub struct GarbleBenchArgs {
    /// The circuit: a file or a built-in (see `circuit list`).
    #[arg(long)]
    circuit: String,
    /// The garbling scheme: prf, circular or ideal (aliases glnp15, half-gates-rekeyed,
    /// half-gates-fixed-key, justgarble).
    #[arg(long, value_parser = parse_scheme)]
    scheme: Scheme,
    /// The AES implementation (default: the fastest this CPU has).
    #[arg(long, value_parser = parse_backend)]
    backend: Option<Backend>,
    /// Garble and evaluate this many times and report the fastest run.
    #[arg(long, default_value_t = 3)]
    repeat: u32,
    /// Garble and evaluate on this many threads: the wide waves of AND gates shared among
    /// them (--parallel fgp), or a region of the circuit each (--parallel cgp).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=256))]
    threads: u32,
    /// How the threads share the work: none (one thread), fgp (each wide wave of gates
    /// split among them) or cgp (the circuit's parallel regions, a region per thread at a
    /// time; the circuit must have regions: `circuit stats` shows them), or auto (what
    /// `--parallel auto` of a party picks from --threads and the circuit, with no link:
    /// cgp for circuits whose regions make a stage of two pieces, else fgp; none on one
    /// thread). Default: fgp if --threads is above 1.
    #[arg(long, value_enum)]
    parallel: Option<BenchParallel>,
    /// Split a wave only with at least this many crypto gates per thread (default: the
    /// scheme's).
    #[arg(long, hide = true, value_parser = clap::value_parser!(u32).range(1..))]
    fgp_min_wave: Option<u32>,
    /// Gates per window of the schedule (a multiple of 128; default 8192).
    #[arg(long, hide = true)]
    fgp_window: Option<usize>,
    /// Print JSON (keys: and_gates, xor_gates, garble_ns_per_and, eval_ns_per_and,
    /// table_bytes, mask_bytes, peak_rss_bytes, threads, min_wave, window,
    /// split_and_share, ...).
    #[arg(long)]
    json: bool,
}

/// How `garble-bench` uses its threads (`--parallel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum BenchParallel {
    /// One thread.
    None,
    /// Fine-grained parallelism: each wide wave of gates shared among the threads.
    Fgp,
    /// Coarse-grained parallelism: the circuit's parallel regions, one per thread.
    Cgp,
    /// What a party's `--parallel auto` picks for --threads and the circuit.
    Auto,
}

impl BenchParallel {
    fn name(self) -> &'static str {
        match self {
            BenchParallel::None => "none",
            BenchParallel::Fgp => "fgp",
            BenchParallel::Cgp => "cgp",
            BenchParallel::Auto => "auto",
        }
    }
}

/// The `Parallel` that `--threads`, `--fgp-min-wave` and `--fgp-window` describe.
pub(crate) fn parallel_of(
    threads: u32,
    min_wave: Option<u32>,
    window: Option<usize>,
) -> Result<Parallel> {
    let mut p = Parallel::fgp(threads as usize).map_err(anyhow::Error::msg)?;
    if let Some(m) = min_wave {
        p = p.with_min_wave(m as usize);
    }
    if let Some(w) = window {
        p = p.with_window(w).map_err(anyhow::Error::msg)?;
    }
    Ok(p)
}

pub(crate) fn parse_scheme(s: &str) -> Result<Scheme, String> {
    s.parse()
}

/// An AES backend by name (`--backend`): one this CPU runs, or an error naming what it
/// lacks for it.
pub(crate) fn parse_backend(s: &str) -> Result<Backend, String> {
    let names = |v: &[Backend]| v.iter().map(|b| b.name()).collect::<Vec<_>>().join(", ");
    let Some(backend) = Backend::from_name(s) else {
        return Err(format!(
            "unknown AES backend '{s}' (the backends: {})",
            names(&Backend::all())
        ));
    };
    match backend.why_unsupported() {
        None => Ok(backend),
        Some(why) => Err(format!(
            "AES backend '{s}' cannot run here: {why} (available here: {})",
            names(&Backend::available())
        )),
    }
}

/// What `--parallel auto` picks for `threads` threads and `circuit` in memory (no peer, no
/// link): a party's rule (`crate::parallel_mode::decide_auto_for`), with why, and under
/// `cgp` the pieces it cut and the time that took.
fn bench_auto(
    circuit: &Circuit,
    scheme: Scheme,
    threads: usize,
) -> (BenchParallel, String, Option<(Layout, Duration)>) {
    let start = Instant::now();
    let (mode, _, why, layout) = decide_auto_for(
        circuit,
        AutoFacts {
            cores: (threads, "--threads"),
            link_bps: None,
            scheme,
            regions: circuit.sections().is_some(),
            planned: false,
        },
    );
    let cut = start.elapsed();
    let mode = match mode {
        ParallelMode::None => BenchParallel::None,
        ParallelMode::Cgp => BenchParallel::Cgp,
        _ => BenchParallel::Fgp,
    };
    (mode, why, layout.map(|l| (l, cut)))
}

pub fn run(args: GarbleBenchArgs) -> Result<()> {
    let circuit = library::load(&args.circuit)?;
    let stats = Stats::of(&circuit);
    let backend = args.backend.unwrap_or_else(Backend::detect);
    let scheme = args.scheme;
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(1);
    let inputs: Vec<bool> = (0..circuit.n_inputs()).map(|_| rng.gen()).collect();
    let want = circuit.eval_bits(&inputs);
    let mut auto_cut = None;
    let (mode, auto_why) = match (args.parallel, args.threads) {
        (Some(BenchParallel::None), n) if n > 1 => {
            bail!("--threads {n} needs --parallel fgp, cgp or auto (--parallel none is one thread)")
        }
        (Some(BenchParallel::Auto), n) => {
            let (mode, why, cut) = bench_auto(&circuit, scheme, n as usize);
            auto_cut = cut;
            (mode, Some(why))
        }
        (Some(mode), _) => (mode, None),
        (None, 1) => (BenchParallel::None, None),
        (None, _) => (BenchParallel::Fgp, None),
    };
    if mode == BenchParallel::Cgp && (args.fgp_min_wave.is_some() || args.fgp_window.is_some()) {
        bail!("--fgp-min-wave and --fgp-window tune --parallel fgp, not cgp");
    }
    let (fgp_threads, coarse) = if mode == BenchParallel::Cgp {
        // Under auto, the pieces its choice cut.
        let (layout, cut) = match auto_cut {
            Some(done) => done,
            None => {
                let start = Instant::now();
                let layout = Layout::of(&circuit, scheme)
                    .with_context(|| format!("--parallel cgp on {}", args.circuit))?;
                (layout, start.elapsed())
            }
        };
        let threads = args.threads as usize;
        (
            1,
            Some(Coarse {
                layout: Arc::new(layout),
                threads,
                cut,
            }),
        )
    } else {
        (args.threads, None)
    };
    let parallel = parallel_of(fgp_threads, args.fgp_min_wave, args.fgp_window)?;
    let bench = Bench {
        name: &args.circuit,
        circuit: &circuit,
        scheme,
        backend,
        inputs: &inputs,
        want: &want,
        parallel: &parallel,
        coarse: coarse.as_ref(),
    };

    let mut best = Measured::NONE;
    // One buffer for every run, as a session reuses its send buffer.
    let mut buf = Vec::with_capacity(BATCH_BYTES + 64);
    for run in 0..args.repeat.max(1) {
        let seed = Block(u128::from(run) + 1);
        let run = if bench.coarse.is_some() {
            bench.garble_and_evaluate_coarse(seed)?
        } else {
            bench.garble_and_evaluate(seed, &mut buf)?
        };
        best = best.fastest(run);
    }

    let table_bytes = scheme.table_bytes(&stats);
    let mask_bytes = scheme.mask_bytes(&stats);
    let expected = match &coarse {
        Some(c) => c.layout.table_bytes(),
        None => table_bytes + mask_bytes,
    };
    if best.bytes - best.frame_bytes != expected {
        bail!(
            "{} bytes of tables garbled, expected {expected} ({table_bytes} + {mask_bytes} mask \
             bytes, and a mask byte more for each piece of odd AND gates under cgp)",
            best.bytes - best.frame_bytes
        );
    }
    let how = How {
        mode,
        auto_why,
        parallel: &parallel,
        coarse: coarse.as_ref(),
    };
    if args.json {
        let share = scheme.split_share(&circuit, &parallel);
        print_json(&args, backend, &stats, &best, (&how, share))
    } else {
        print_table(&args, backend, &stats, &best, &how)
    }
}

/// One circuit, scheme and input to garble and evaluate.
struct Bench<'a> {
    /// The circuit as named on the command line, for messages.
    name: &'a str,
    circuit: &'a transputation_circuits::Circuit,
    scheme: Scheme,
    backend: Backend,
    /// One bit per input wire.
    inputs: &'a [bool],
    /// The plain evaluation's output, which the garbled one must match.
    want: &'a [bool],
    /// Threads and window of garbler and evaluator.
    parallel: &'a Parallel,
    /// Under `--parallel cgp`: the circuit cut by its regions, and the threads.
    coarse: Option<&'a Coarse>,
}

/// `--parallel cgp`: the circuit cut by its regions, the threads, and the time the cut took.
struct Coarse {
    layout: Arc<Layout>,
    threads: usize,
    cut: Duration,
}

/// How a run used its threads, for the report.
struct How<'a> {
    /// The mode run (never `auto`: what it picked).
    mode: BenchParallel,
    /// Under `--parallel auto`, why that mode.
    auto_why: Option<String>,
    parallel: &'a Parallel,
    coarse: Option<&'a Coarse>,
}

/// The times of one run, or the fastest of several, and the bytes garbled.
struct Measured {
    /// Making the garbler (its label tables).
    setup: Duration,
    /// Garbling, all batches.
    garble: Duration,
    /// Making the evaluator (its label tables, from the input labels).
    eval_setup: Duration,
    /// Evaluating, all batches.
    eval: Duration,
    /// Tables and mask bytes garbled (of the latest run), frame headers included.
    bytes: u64,
    /// Of them, frame headers (`--parallel cgp`).
    frame_bytes: u64,
}

impl Measured {
    /// Before any run: every time is slower than a real one.
    const NONE: Measured = Measured {
        setup: Duration::MAX,
        garble: Duration::MAX,
        eval_setup: Duration::MAX,
        eval: Duration::MAX,
        bytes: 0,
        frame_bytes: 0,
    };

    /// Each time the faster of `self`'s and `run`'s; `run`'s bytes.
    fn fastest(self, run: Measured) -> Measured {
        Measured {
            setup: self.setup.min(run.setup),
            garble: self.garble.min(run.garble),
            eval_setup: self.eval_setup.min(run.eval_setup),
            eval: self.eval.min(run.eval),
            bytes: run.bytes,
            frame_bytes: run.frame_bytes,
        }
    }
}

impl Bench<'_> {
    /// The labels of the bench's input bits.
    fn input_labels(&self, garbler: &dyn Garble) -> Vec<Block> {
        let bits = self.inputs.iter().enumerate();
        bits.map(|(w, &v)| garbler.input_labels(w as u32)[usize::from(v)])
            .collect()
    }

    /// An error unless the evaluator's output labels decode to plain evaluation's output.
    fn check_output(&self, evaluator: &dyn Evaluate, decoding: &[bool]) -> Result<()> {
        if decode(&evaluator.output_labels()?, decoding) != self.want {
            bail!(
                "{} on {}: the garbled output differs from plain evaluation",
                self.scheme,
                self.name
            );
        }
        Ok(())
    }

    /// One run: garbling alone, its tables streamed to a temporary file between batches,
    /// then evaluation alone, batch by batch from the file; the output checked against
    /// plain evaluation. `buf` is the batch buffer, reused across runs.
    fn garble_and_evaluate(&self, seed: Block, buf: &mut Vec<u8>) -> Result<Measured> {
        let (circuit, scheme, backend) = (self.circuit, self.scheme, self.backend);
        let mut file = tempfile::tempfile().context("creating a temporary file for the tables")?;
        let mut batches = Vec::new();
        let mut prg = Prg::new(seed);
        let start = Instant::now();
        let start_at = GarbleStart::default();
        let mut garbler = scheme.garbler_par(circuit, &mut prg, backend, start_at, self.parallel);
        let setup = start.elapsed();
        let mut garble_time = Duration::ZERO;
        let labels = self.input_labels(&*garbler);
        let mut bytes = 0u64;
        loop {
            // Over the last batch's bytes, as a session's send buffers are reused.
            let start = Instant::now();
            let (end, more) = garbler.garble_at(buf, 0, BATCH_BYTES);
            garble_time += start.elapsed();
            file.write_all(&buf[..end])?;
            batches.push(end);
            bytes += end as u64;
            if !more {
                break;
            }
        }
        let decoding = garbler.decoding();
        drop(garbler);

        file.seek(SeekFrom::Start(0))?;
        let start = Instant::now();
        let mut evaluator = scheme.evaluator_par(circuit, &labels, backend, 0, self.parallel);
        let eval_setup = start.elapsed();
        let mut eval_time = Duration::ZERO;
        for &len in &batches {
            buf.resize(len, 0);
            file.read_exact(buf)?;
            let start = Instant::now();
            let used = evaluator.feed(buf)?;
            eval_time += start.elapsed();
            if used != buf.len() {
                bail!("the evaluator left {} bytes of a batch", buf.len() - used);
            }
        }
        self.check_output(&*evaluator, &decoding)?;
        Ok(Measured {
            setup,
            garble: garble_time,
            eval_setup,
            eval: eval_time,
            bytes,
            frame_bytes: 0,
        })
    }

    /// One run under `--parallel cgp`: the garbling threads run ahead of the caller, so
    /// garbling is timed from the garbler's start to its last batch (its batches kept in
    /// memory rather than written to a file between them), and evaluation from the first
    /// batch fed to the last piece evaluated; the set-up times are the drivers' own.
    fn garble_and_evaluate_coarse(&self, seed: Block) -> Result<Measured> {
        let Coarse {
            layout, threads, ..
        } = self.coarse.expect("under --parallel cgp");
        let (backend, threads) = (self.backend, *threads);
        let mut prg = Prg::new(seed);
        let start = Instant::now();
        let mut garbler = CoarseGarbler::new(
            Arc::clone(layout),
            &mut prg,
            backend,
            GarbleStart::default(),
            threads,
        );
        let setup = start.elapsed();
        let labels = self.input_labels(&garbler);
        let mut batches: Vec<Vec<u8>> = Vec::new();
        let start = Instant::now();
        loop {
            let mut batch = Vec::with_capacity(BATCH_BYTES + (1 << 19));
            let more = garbler.garble(&mut batch, BATCH_BYTES);
            batches.push(batch);
            if !more {
                break;
            }
        }
        let garble_time = start.elapsed();
        let decoding = garbler.decoding();
        let frame_bytes = garbler.frame_bytes();
        drop(garbler);
        let bytes: u64 = batches.iter().map(|b| b.len() as u64).sum();

        let start = Instant::now();
        let mut evaluator = CoarseEvaluator::new(Arc::clone(layout), &labels, backend, 0, threads);
        let eval_setup = start.elapsed();
        let start = Instant::now();
        for batch in &batches {
            let used = evaluator.feed(batch)?;
            if used != batch.len() {
                bail!("the evaluator left {} bytes of a batch", batch.len() - used);
            }
        }
        evaluator.feed(&[])?;
        self.check_output(&evaluator, &decoding)?;
        let eval_time = start.elapsed();
        Ok(Measured {
            setup,
            garble: garble_time,
            eval_setup,
            eval: eval_time,
            bytes,
            frame_bytes,
        })
    }
}

/// Nanoseconds per AND gate (0 for a circuit without AND gates).
fn ns_per_and(d: Duration, stats: &Stats) -> f64 {
    if stats.and == 0 {
        0.0
    } else {
        d.as_nanos() as f64 / stats.and as f64
    }
}

/// A duration in milliseconds.
fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// The result as one JSON object (the keys `--json` documents).
fn print_json(
    args: &GarbleBenchArgs,
    backend: Backend,
    stats: &Stats,
    best: &Measured,
    (how, split_share): (&How<'_>, f64),
) -> Result<()> {
    let scheme = args.scheme;
    let parallel = how.parallel;
    let mut v = json!({
        "circuit": args.circuit,
        "scheme": scheme.name(),
        "backend": backend.name(),
        "and_gates": stats.and,
        "xor_gates": stats.xor,
        "inv_gates": stats.inv,
        "garble_ns_per_and": ns_per_and(best.garble, stats),
        "eval_ns_per_and": ns_per_and(best.eval, stats),
        "garble_ms": ms(best.garble),
        "eval_ms": ms(best.eval),
        "garble_setup_ms": ms(best.setup),
        "eval_setup_ms": ms(best.eval_setup),
        "table_bytes": scheme.table_bytes(stats),
        "mask_bytes": scheme.mask_bytes(stats),
        "peak_rss_bytes": peak_rss_bytes(),
        "runs": args.repeat.max(1),
        "threads": parallel.threads(),
        "min_wave": scheme.min_wave(parallel),
        "window": parallel.window(),
        "split_and_share": split_share,
        "parallel": how.mode.name(),
        "parallel_why": how.auto_why,
    });
    if let Some(c) = how.coarse {
        v["threads"] = json!(c.threads);
        v["stages"] = json!(c.layout.stages());
        v["pieces"] = json!(c.layout.pieces());
        v["cut_ms"] = json!(ms(c.cut));
        v["frame_bytes"] = json!(best.frame_bytes);
    }
    outln!("{}", serde_json::to_string_pretty(&v)?)?;
    Ok(())
}

/// The result as a table for people.
fn print_table(
    args: &GarbleBenchArgs,
    backend: Backend,
    stats: &Stats,
    best: &Measured,
    how: &How<'_>,
) -> Result<()> {
    let scheme = args.scheme;
    let rss = peak_rss_bytes();
    let parallel = how.parallel;
    let threads_row = match how.coarse {
        Some(c) => vec![
            "threads / regions".into(),
            format!(
                "{} (cgp) / {} stages of {} pieces, cut in {:.1} ms; {} bytes of frame headers",
                c.threads,
                c.layout.stages(),
                c.layout.pieces(),
                ms(c.cut),
                thousands(best.frame_bytes)
            ),
        ],
        None => vec![
            "threads / window".into(),
            format!(
                "{} / {} gates (waves split from {} crypto gates per thread)",
                parallel.threads(),
                thousands(parallel.window() as u64),
                scheme.min_wave(parallel)
            ),
        ],
    };
    let mut rows = vec![
        vec!["circuit".into(), args.circuit.clone()],
        vec![
            "scheme / AES".into(),
            format!("{} / {}", scheme.name(), backend.name()),
        ],
        threads_row,
    ];
    if let Some(why) = &how.auto_why {
        rows.push(vec![
            "parallel (auto)".into(),
            format!("{}: {why}", how.mode.name()),
        ]);
    }
    rows.extend([
        vec![
            "AND / XOR / INV gates".into(),
            format!(
                "{} / {} / {}",
                thousands(stats.and),
                thousands(stats.xor),
                thousands(stats.inv)
            ),
        ],
        vec![
            "garble".into(),
            format!(
                "{:.2} ns per AND ({:.1} ms)",
                ns_per_and(best.garble, stats),
                ms(best.garble)
            ),
        ],
        vec![
            "evaluate".into(),
            format!(
                "{:.2} ns per AND ({:.1} ms)",
                ns_per_and(best.eval, stats),
                ms(best.eval)
            ),
        ],
        vec![
            "set-up: garbler / evaluator".into(),
            format!(
                "{:.1} ms / {:.1} ms (label tables, input labels)",
                ms(best.setup),
                ms(best.eval_setup)
            ),
        ],
        vec![
            "table bytes (+ mask bytes)".into(),
            format!(
                "{} (+ {})",
                thousands(scheme.table_bytes(stats)),
                thousands(scheme.mask_bytes(stats))
            ),
        ],
        vec![
            "peak memory".into(),
            rss.map_or("unknown".into(), |r| {
                format!("{:.1} MiB", r as f64 / 1048576.0)
            }),
        ],
    ]);
    out!("{}", table(&["", ""], &rows))?;
    outln!(
        "(fastest of {} runs; output checked against plain evaluation)",
        args.repeat.max(1)
    )?;
    Ok(())
}
