//! `transputation circuit ...`: list the built-ins, statistics, plaintext evaluation, export.

use std::path::PathBuf;
use std::time::Instant;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;
use transputation_circuits::bristol::{self, Format};
use transputation_circuits::library::{self, builtins};
use transputation_circuits::{encoding, Circuit, Party, Stats};

use crate::report::{peak_rss_bytes, table, thousands};

#[derive(Subcommand, Debug)]
pub enum CircuitCommand {
    /// List the built-in circuits with their parameters and input/output encodings.
    List {
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Gate counts, depths, level widths, input and output sizes and parallel regions of one
    /// circuit, or a table of several.
    Stats {
        /// Circuits: files or built-ins (see `circuit list`).
        #[arg(value_name = "CIRCUIT", required = true)]
        circuits: Vec<String>,
        /// For circuit files: the owner of each input group, in order.
        #[arg(long, value_delimiter = ',', value_name = "PARTY,...")]
        parties: Option<Vec<Party>>,
        /// Print JSON (keys: and, xor, inv, depth, and_depth, inputs, outputs, sections,
        /// regions, region_and_share, ...); an array for several circuits.
        #[arg(long)]
        json: bool,
    },
    /// Evaluate a circuit in plaintext on hex inputs and print the output as hex.
    Eval {
        #[command(flatten)]
        circuit: CircuitArg,
        /// The garbler's input: one hex string per input group it owns, comma-separated.
        #[arg(long, value_name = "HEX", allow_hyphen_values = true)]
        garbler_input: String,
        /// The evaluator's input: one hex string per input group it owns, comma-separated.
        #[arg(long, value_name = "HEX", allow_hyphen_values = true)]
        evaluator_input: String,
        /// Print JSON (keys: output, circuit).
        #[arg(long)]
        json: bool,
    },
    /// Write a circuit as a Bristol or Bristol Fashion file, and its parallel regions, if it
    /// has any, as the side file OUTPUT.regions.
    Export {
        #[command(flatten)]
        circuit: CircuitArg,
        /// The file format.
        #[arg(long, value_parser = parse_format)]
        format: Format,
        /// Where to write; written to a temporary file and renamed, never half-written.
        #[arg(short = 'o', long = "output", value_name = "FILE")]
        output: PathBuf,
    },
}

/// A circuit: a file (Bristol or Bristol Fashion, detected) or a built-in `NAME[:k=v,...]`.
#[derive(Args, Debug)]
pub struct CircuitArg {
    /// A Bristol / Bristol Fashion file, or a built-in such as `aes128` or
    /// `synthetic:and=999960,xor=2524920,inputs=250000` (see `circuit list`). A built-in's
    /// name wins over a file of the same name: write `./NAME` for the file.
    #[arg(value_name = "CIRCUIT")]
    pub name: String,
    /// For circuit files: the owner of each input group, in order, e.g. `evaluator,garbler`.
    /// Default: the first group is the garbler's, every other group the evaluator's.
    #[arg(long, value_delimiter = ',', value_name = "PARTY,...")]
    pub parties: Option<Vec<Party>>,
}

impl CircuitArg {
    /// Loads the circuit; returns it with the loading time in milliseconds.
    pub fn load(&self) -> Result<(Circuit, f64)> {
        let start = Instant::now();
        let circuit = library::load_with_parties(&self.name, self.parties.as_deref())?;
        Ok((circuit, start.elapsed().as_secs_f64() * 1e3))
    }
}

fn parse_format(s: &str) -> Result<Format, String> {
    s.parse()
}

pub fn run(cmd: CircuitCommand) -> Result<()> {
    match cmd {
        CircuitCommand::List { json } => list(json),
        CircuitCommand::Stats {
            circuits,
            parties,
            json,
        } => stats(circuits, parties, json),
        CircuitCommand::Eval {
            circuit,
            garbler_input,
            evaluator_input,
            json,
        } => eval(&circuit, &garbler_input, &evaluator_input, json),
        CircuitCommand::Export {
            circuit,
            format,
            output,
        } => export(&circuit, format, &output),
    }
}

fn list(json: bool) -> Result<()> {
    if json {
        let items: Vec<_> = builtins()
            .iter()
            .map(|b| {
                json!({
                    "name": b.name,
                    "summary": b.summary,
                    "encoding": b.encoding,
                    "params": b.params.iter().map(|p| json!({
                        "name": p.name, "default": p.default, "min": p.min, "max": p.max, "doc": p.doc,
                    })).collect::<Vec<_>>(),
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&items)?)?;
        return Ok(());
    }
    for b in builtins() {
        outln!("{}  {}", b.name, b.summary)?;
        for p in b.params {
            outln!(
                "    {}={}  {} ({}..={})",
                p.name,
                p.default,
                p.doc,
                p.min,
                p.max
            )?;
        }
        for line in b.encoding.lines() {
            outln!("    | {line}")?;
        }
        outln!()?;
    }
    outln!(
        "A circuit is a built-in, written NAME or NAME:key=value,..., or a Bristol / Bristol Fashion file."
    )?;
    Ok(())
}

/// One circuit of `circuit stats`: its name, the circuit, its statistics, its loading time
/// in milliseconds and its parallel regions.
struct Measured {
    name: String,
    circuit: Circuit,
    stats: Stats,
    load_ms: f64,
    regions: RegionStats,
}

/// A circuit's parallel regions ([`Circuit::sections`]) in numbers.
struct RegionStats {
    sections: usize,
    regions: usize,
    /// The share of its AND gates inside sections, 0 to 1 (0 without AND gates).
    and_share: f64,
}

impl RegionStats {
    fn of(circuit: &Circuit, stats: &Stats) -> RegionStats {
        let Some(sections) = circuit.sections() else {
            return RegionStats {
                sections: 0,
                regions: 0,
                and_share: 0.0,
            };
        };
        let and = sections.gate_counts(circuit.gates())[0];
        RegionStats {
            sections: sections.sections().len(),
            regions: sections.regions(),
            and_share: if stats.and > 0 {
                and as f64 / stats.and as f64
            } else {
                0.0
            },
        }
    }

    /// The share of AND gates in regions, as a percentage ("-" without regions).
    fn share(&self) -> String {
        if self.sections == 0 {
            "-".into()
        } else {
            format!("{:.1} %", 100.0 * self.and_share)
        }
    }
}

fn stats(names: Vec<String>, parties: Option<Vec<Party>>, json: bool) -> Result<()> {
    let mut all = Vec::with_capacity(names.len());
    for name in names {
        let arg = CircuitArg {
            name,
            parties: parties.clone(),
        };
        let (circuit, load_ms) = arg.load()?;
        let stats = Stats::of(&circuit);
        let regions = RegionStats::of(&circuit, &stats);
        all.push(Measured {
            name: arg.name,
            circuit,
            stats,
            load_ms,
            regions,
        });
    }
    if json {
        stats_json(&all)
    } else if all.len() > 1 {
        stats_table(&all)
    } else {
        stats_one(&all[0])
    }
}

fn stats_json(all: &[Measured]) -> Result<()> {
    let rss = peak_rss_bytes();
    let values: Vec<_> = all
        .iter()
        .map(|m| {
            let s = &m.stats;
            json!({
                "circuit": m.name,
                "and": s.and,
                "xor": s.xor,
                "inv": s.inv,
                "gates": s.gates(),
                "wires": s.wires,
                "depth": s.depth,
                "and_depth": s.and_depth,
                "inputs": s.inputs,
                "garbler_inputs": s.garbler_inputs,
                "evaluator_inputs": s.evaluator_inputs,
                "outputs": s.outputs,
                "max_and_width": s.max_and_width(),
                "and_level_widths": s.and_level_widths,
                "level_widths": s.level_widths,
                "sections": m.regions.sections,
                "regions": m.regions.regions,
                "region_and_share": m.regions.and_share,
                "load_ms": m.load_ms,
                "peak_rss_bytes": rss,
            })
        })
        .collect();
    let v = if values.len() == 1 {
        values.into_iter().next().expect("one")
    } else {
        serde_json::Value::Array(values)
    };
    outln!("{}", serde_json::to_string_pretty(&v)?)?;
    Ok(())
}

fn stats_table(all: &[Measured]) -> Result<()> {
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|m| {
            let s = &m.stats;
            vec![
                m.name.clone(),
                thousands(s.and),
                thousands(s.xor),
                thousands(s.inv),
                thousands(u64::from(s.and_depth)),
                thousands(s.garbler_inputs),
                thousands(s.evaluator_inputs),
                thousands(s.outputs),
                thousands(m.regions.sections as u64),
                thousands(m.regions.regions as u64),
                m.regions.share(),
                format!("{:.0}", m.load_ms),
            ]
        })
        .collect();
    let header = [
        "circuit",
        "AND",
        "XOR",
        "INV",
        "AND-depth",
        "garbler bits",
        "evaluator bits",
        "output bits",
        "sections",
        "regions",
        "AND in regions",
        "load ms",
    ];
    out!("{}", table(&header, &rows))?;
    Ok(())
}

fn stats_one(m: &Measured) -> Result<()> {
    let (circuit, s) = (&m.circuit, &m.stats);
    let mean_width = if s.and_depth > 0 {
        s.and as f64 / f64::from(s.and_depth)
    } else {
        0.0
    };
    let r = &m.regions;
    let regions = if r.sections == 0 {
        "none".to_string()
    } else {
        format!(
            "{} in {} section{}, {} of the AND gates",
            thousands(r.regions as u64),
            thousands(r.sections as u64),
            if r.sections == 1 { "" } else { "s" },
            r.share()
        )
    };
    let rows = vec![
        vec!["AND gates".into(), thousands(s.and)],
        vec!["XOR gates".into(), thousands(s.xor)],
        vec!["INV gates".into(), thousands(s.inv)],
        vec!["wires".into(), thousands(s.wires)],
        vec!["depth".into(), thousands(u64::from(s.depth))],
        vec!["AND-depth".into(), thousands(u64::from(s.and_depth))],
        vec![
            "AND level width (max / mean)".into(),
            format!("{} / {:.1}", thousands(s.max_and_width()), mean_width),
        ],
        vec![
            "garbler input bits".into(),
            format!(
                "{} ({})",
                thousands(s.garbler_inputs),
                encoding::describe_groups(circuit, Party::Garbler)
            ),
        ],
        vec![
            "evaluator input bits".into(),
            format!(
                "{} ({})",
                thousands(s.evaluator_inputs),
                encoding::describe_groups(circuit, Party::Evaluator)
            ),
        ],
        vec!["output bits".into(), thousands(s.outputs)],
        vec!["parallel regions".into(), regions],
        vec!["load time".into(), format!("{:.1} ms", m.load_ms)],
    ];
    outln!("circuit {}", m.name)?;
    out!("{}", table(&["", ""], &rows))?;
    Ok(())
}

fn eval(arg: &CircuitArg, garbler: &str, evaluator: &str, json: bool) -> Result<()> {
    let (circuit, _) = arg.load()?;
    let output = circuit
        .eval_hex(garbler, evaluator)
        .with_context(|| format!("circuit {}", arg.name))?;
    if json {
        outln!(
            "{}",
            serde_json::to_string_pretty(&json!({ "circuit": arg.name, "output": output }))?
        )?;
    } else {
        outln!("{output}")?;
    }
    Ok(())
}

fn export(arg: &CircuitArg, format: Format, path: &std::path::Path) -> Result<()> {
    let (circuit, _) = arg.load()?;
    bristol::write_file(&circuit, format, path)
        .with_context(|| format!("writing {} as {}", path.display(), format.name()))?;
    let s = Stats::of(&circuit);
    eprintln!(
        "wrote {} ({}, {} AND, {} XOR, {} INV)",
        path.display(),
        format.name(),
        thousands(s.and),
        thousands(s.xor),
        thousands(s.inv)
    );
    // The parallel regions go beside the file, where loading it looks for them; a side file
    // left from an earlier circuit of that name would describe another circuit's gates.
    let side = bristol::regions_path(path);
    match circuit.sections() {
        Some(sections) => {
            bristol::write_regions(&side, sections)
                .with_context(|| format!("writing {}", side.display()))?;
            eprintln!(
                "wrote {} (its parallel regions: {} in {} section{})",
                side.display(),
                thousands(sections.regions() as u64),
                sections.sections().len(),
                if sections.sections().len() == 1 {
                    ""
                } else {
                    "s"
                }
            );
        }
        None if side.exists() => {
            std::fs::remove_file(&side)
                .with_context(|| format!("removing the stale {}", side.display()))?;
            eprintln!(
                "removed {}: the parallel regions of an earlier circuit (this one has none)",
                side.display()
            );
        }
        None => {}
    }
    Ok(())
}
