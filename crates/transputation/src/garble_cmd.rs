//! `transputation garble-bench`: garbling and evaluation speed of a scheme on one thread.
//!
//! Set-up (allocating the label tables, making input labels) is timed apart. Garbling is
//! timed alone, streaming its tables batch by batch into a temporary file (the
//! writes are not timed). Evaluation is timed alone too, reading the batches back and
//! timing only the evaluator's work on them. Only one party's labels are in memory at a
//! time, plus one batch, as in a real session. The decoded output is checked against plain
//! evaluation.

use std::io::{Read, Seek, SeekFrom, Write};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use rand::{Rng, SeedableRng};
use serde_json::json;
use transputation_circuits::{library, Stats};
use transputation_garble::aes::Backend;
use transputation_garble::{decode, prg::Prg, Block, Scheme};

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
    /// Print JSON (keys: and_gates, xor_gates, garble_ns_per_and, eval_ns_per_and,
    /// table_bytes, mask_bytes, peak_rss_bytes, ...).
    #[arg(long)]
    json: bool,
}

pub(crate) fn parse_scheme(s: &str) -> Result<Scheme, String> {
    s.parse()
}

fn parse_backend(s: &str) -> Result<Backend, String> {
    Backend::available()
        .into_iter()
        .find(|b| b.name() == s)
        .ok_or_else(|| {
            let names: Vec<&str> = Backend::available().iter().map(|b| b.name()).collect();
            format!(
                "AES backend '{s}' is not available on this CPU (available: {})",
                names.join(", ")
            )
        })
}

pub fn run(args: GarbleBenchArgs) -> Result<()> {
    let circuit = library::load(&args.circuit)?;
    let stats = Stats::of(&circuit);
    let backend = args.backend.unwrap_or_else(Backend::detect);
    let scheme = args.scheme;
    let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(1);
    let inputs: Vec<bool> = (0..circuit.n_inputs()).map(|_| rng.gen()).collect();
    let want = circuit.eval_bits(&inputs);

    let (mut best_garble, mut best_eval) = (Duration::MAX, Duration::MAX);
    // Set-up (label tables, input labels) is timed apart from the per-gate work.
    let (mut best_setup, mut best_eval_setup) = (Duration::MAX, Duration::MAX);
    let mut bytes = 0u64;
    // One buffer for every run, as a session reuses its send buffer.
    let mut buf = Vec::with_capacity(BATCH_BYTES + 64);
    for run in 0..args.repeat.max(1) {
        let seed = Block(u128::from(run) + 1);
        // Garbling alone; the tables go to a temporary file between batches.
        let mut file = tempfile::tempfile().context("creating a temporary file for the tables")?;
        let mut batches = Vec::new();
        let mut prg = Prg::new(seed);
        let start = Instant::now();
        let mut garbler = scheme.garbler(&circuit, &mut prg, backend);
        best_setup = best_setup.min(start.elapsed());
        let mut garble_time = Duration::ZERO;
        let labels: Vec<Block> = inputs
            .iter()
            .enumerate()
            .map(|(w, &v)| garbler.input_labels(w as u32)[usize::from(v)])
            .collect();
        bytes = 0;
        loop {
            // Over the last batch's bytes, as a session's send buffers are reused.
            let start = Instant::now();
            let (end, more) = garbler.garble_at(&mut buf, 0, BATCH_BYTES);
            garble_time += start.elapsed();
            file.write_all(&buf[..end])?;
            batches.push(end);
            bytes += end as u64;
            if !more {
                break;
            }
        }
        best_garble = best_garble.min(garble_time);
        let decoding = garbler.decoding();
        drop(garbler);

        // Evaluation alone, batch by batch from the file.
        file.seek(SeekFrom::Start(0))?;
        let start = Instant::now();
        let mut evaluator = scheme.evaluator(&circuit, &labels, backend);
        best_eval_setup = best_eval_setup.min(start.elapsed());
        let mut eval_time = Duration::ZERO;
        for &len in &batches {
            buf.resize(len, 0);
            file.read_exact(&mut buf)?;
            let start = Instant::now();
            let used = evaluator.feed(&buf)?;
            eval_time += start.elapsed();
            if used != buf.len() {
                bail!("the evaluator left {} bytes of a batch", buf.len() - used);
            }
        }
        best_eval = best_eval.min(eval_time);
        let out = decode(&evaluator.output_labels()?, &decoding);
        if out != want {
            bail!(
                "{scheme} on {}: the garbled output differs from plain evaluation",
                args.circuit
            );
        }
    }

    let per_and = |d: Duration| {
        if stats.and == 0 {
            0.0
        } else {
            d.as_nanos() as f64 / stats.and as f64
        }
    };
    let table_bytes = scheme.table_bytes(&stats);
    let mask_bytes = scheme.mask_bytes(&stats);
    if bytes != table_bytes + mask_bytes {
        bail!("{bytes} bytes garbled, expected {table_bytes} + {mask_bytes} mask bytes");
    }
    let rss = peak_rss_bytes();
    if args.json {
        let v = json!({
            "circuit": args.circuit,
            "scheme": scheme.name(),
            "backend": backend.name(),
            "and_gates": stats.and,
            "xor_gates": stats.xor,
            "inv_gates": stats.inv,
            "garble_ns_per_and": per_and(best_garble),
            "eval_ns_per_and": per_and(best_eval),
            "garble_ms": best_garble.as_secs_f64() * 1e3,
            "eval_ms": best_eval.as_secs_f64() * 1e3,
            "garble_setup_ms": best_setup.as_secs_f64() * 1e3,
            "eval_setup_ms": best_eval_setup.as_secs_f64() * 1e3,
            "table_bytes": table_bytes,
            "mask_bytes": mask_bytes,
            "peak_rss_bytes": rss,
            "runs": args.repeat.max(1),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    let rows = vec![
        vec!["circuit".into(), args.circuit.clone()],
        vec![
            "scheme / AES".into(),
            format!("{} / {}", scheme.name(), backend.name()),
        ],
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
                per_and(best_garble),
                best_garble.as_secs_f64() * 1e3
            ),
        ],
        vec![
            "evaluate".into(),
            format!(
                "{:.2} ns per AND ({:.1} ms)",
                per_and(best_eval),
                best_eval.as_secs_f64() * 1e3
            ),
        ],
        vec![
            "set-up: garbler / evaluator".into(),
            format!(
                "{:.1} ms / {:.1} ms (label tables, input labels)",
                best_setup.as_secs_f64() * 1e3,
                best_eval_setup.as_secs_f64() * 1e3
            ),
        ],
        vec![
            "table bytes (+ mask bytes)".into(),
            format!("{} (+ {})", thousands(table_bytes), thousands(mask_bytes)),
        ],
        vec![
            "peak memory".into(),
            rss.map_or("unknown".into(), |r| {
                format!("{:.1} MiB", r as f64 / 1048576.0)
            }),
        ],
    ];
    out!("{}", table(&["", ""], &rows))?;
    outln!(
        "(fastest of {} runs; output checked against plain evaluation)",
        args.repeat.max(1)
    )?;
    Ok(())
}
