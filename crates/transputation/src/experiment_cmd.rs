//! `transputation testbed run`, `report` and `experiments`: experiments over emulated links.
//!
//! `run` builds an experiment from flags, a TOML file (`transputation_experiments::experiment`)
//! or a preset, and hands it to `transputation_experiments::launch`, which checks it, starts
//! this binary's `garbler` and `evaluator` as the parties and records the runs; this module
//! only turns flags into the experiment and prints. `--preset` starts from one of
//! `transputation_experiments::preset`'s experiments. `report` prints the Table-4 shape
//! (`transputation_experiments::report`) and, with `--plots`, SVG figures.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use transputation_experiments::db::{self, Db};
use transputation_experiments::experiment::{ExperimentFile, SweepFile};
use transputation_experiments::launch::{self, usable_transports, Source};
use transputation_experiments::{preset, report};

use crate::capabilities_cmd::capabilities;
use crate::report::table;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// An experiment file (TOML; see the README's "Experiments").
    #[arg(long, conflicts_with_all = ["preset", "circuits", "schemes", "transports", "conditions", "rtt", "loss", "rate", "jitter", "queue", "program"])]
    file: Option<PathBuf>,
    /// A preset experiment (see `testbed presets`): paper-table4, paper-latency, paper-loss,
    /// paper-bandwidth, choose-wisely or blast-long-fat. The other flags override its fields: --conditions
    /// replaces its named conditions, --rtt/--loss/--rate/--jitter/--queue its lists of the
    /// same name (a preset's named conditions go when only these are given, and its lists go
    /// when only --conditions is).
    #[arg(long)]
    preset: Option<String>,
    /// Continue the experiment with this id: run what it has not recorded yet.
    #[arg(long, conflicts_with_all = ["file", "preset", "circuits", "schemes", "transports", "conditions", "rtt", "loss", "rate", "jitter", "queue", "program", "runs", "repeat", "timeout", "name", "insecure", "emulator", "max_rate", "host_cc", "probe_cache", "cutoff"])]
    resume: Option<i64>,
    /// Circuits, separated by `;` or `,` (built-ins such as aes128, sha256, mincut, with
    /// options as in `circuit list`, e.g. `aes128;synthetic:and=1000,xor=2000`, or Bristol
    /// files).
    #[arg(long)]
    circuits: Option<String>,
    /// Garbling schemes, comma-separated (default: ideal). SCHEME+MODE runs the parties with
    /// --parallel MODE (fgp, ipp or cgp), as a workload of its own: `ideal,ideal+ipp`.
    #[arg(long, value_delimiter = ',')]
    schemes: Vec<String>,
    /// Transports, separated by `;` or `,` (default: tcp); options as in `transports`, e.g.
    /// `tcp;mtcp:streams=8,chunk=65536;udt`. `auto`: the parties choose (`--transport
    /// auto`), the run records the choice. An option's value may be `{bdp}` or `{bdp*F}`:
    /// each condition's bandwidth-delay product in bytes (`quic:cc=bbr,iw={bdp}`). A
    /// transport this build cannot run (see `transports`) is left out with a note, here as
    /// in a preset, a file or a resumed experiment.
    #[arg(long)]
    transports: Option<String>,
    /// Named conditions, comma-separated (see `testbed conditions`).
    #[arg(long, value_delimiter = ',')]
    conditions: Vec<String>,
    /// Round-trip times of custom conditions, comma-separated (every combination of
    /// --rtt, --loss, --rate, --jitter and --queue is a condition).
    #[arg(long, value_delimiter = ',')]
    rtt: Vec<String>,
    /// Loss rates of custom conditions, comma-separated (e.g. 0,0.1%).
    #[arg(long, value_delimiter = ',')]
    loss: Vec<String>,
    /// Rates of custom conditions, comma-separated (e.g. 100mbit,1gbit).
    #[arg(long, value_delimiter = ',')]
    rate: Vec<String>,
    /// Jitter of custom conditions, comma-separated.
    #[arg(long, value_delimiter = ',')]
    jitter: Vec<String>,
    /// Queues of custom conditions, comma-separated.
    #[arg(long, value_delimiter = ',')]
    queue: Vec<String>,
    /// A user program: NAME=DIR, DIR holding NAME-server.sh and NAME-client.sh (repeatable).
    #[arg(long, value_name = "NAME=DIR")]
    program: Vec<String>,
    /// Repetitions of every cell (default 1).
    #[arg(long)]
    runs: Option<u32>,
    /// Computations of the circuit in each run's one session (default 1): the evaluator runs
    /// them with `--repeat N`, the first paying for the session's set-up; the run records
    /// computation 1's times and the median and maximum online time of the others
    /// (`online_ms`, `online_max_ms`). User programs run as they are.
    #[arg(long, value_name = "N")]
    repeat: Option<u32>,
    /// Seconds one run may take before both parties are killed (default 600).
    #[arg(long)]
    timeout: Option<u64>,
    /// A name for the experiment.
    #[arg(long)]
    name: Option<String>,
    /// Run the parties without session protection.
    #[arg(long)]
    insecure: bool,
    /// The link emulator: auto, netem or emu.
    #[arg(long)]
    emulator: Option<String>,
    /// Cap every link rate at this (e.g. 500mbit).
    #[arg(long)]
    max_rate: Option<String>,
    /// TCP congestion control of the emulated hosts, the default for `tcp`: cubic (Linux's
    /// default, the default here), another algorithm the kernel has (reno, bbr, ...), or
    /// `system` for this machine's.
    #[arg(long, value_name = "NAME")]
    host_cc: Option<String>,
    /// With `auto` among the transports: seconds its evaluators may reuse a measurement of
    /// their condition's path (default 0: every run probes, its time includes the probe).
    #[arg(long, value_name = "SECONDS")]
    probe_cache: Option<f64>,
    /// Stop a run once it has taken F times the fastest run of its cell so far (the same
    /// circuit, scheme and condition; at least 10 s), recorded as a timeout that says so: for
    /// grids where some transports take minutes where others take seconds. Put the
    /// transports expected to be fastest first, since a cell's first runs have nothing to
    /// be measured against.
    #[arg(long, value_name = "F")]
    cutoff: Option<f64>,
    /// The results database (default: $TRANSPUTATION_RESULTS/results.sqlite, else
    /// $XDG_DATA_HOME/transputation/results.sqlite).
    #[arg(long)]
    db: Option<PathBuf>,
    /// No progress line.
    #[arg(long)]
    quiet: bool,
}

/// Report formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Table,
    /// A Markdown table.
    Markdown,
    /// One line per cell.
    Csv,
    /// Everything, as JSON.
    Json,
}

/// The unit of a report's times.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum TimeUnit {
    /// Milliseconds.
    Ms,
    /// Round trips of each row's condition.
    Rtt,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The experiment: its id or name (default: the latest).
    experiment: Option<String>,
    /// The output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// The unit of the times: ms, or rtt (round trips of each row's condition, its emulated
    /// RTT; a condition without an RTT stays in ms, with a note). CSV and JSON then carry
    /// both.
    #[arg(long, value_enum, default_value = "ms")]
    unit: TimeUnit,
    /// Also write plots (SVG and PNG) of time against RTT, loss and rate into this
    /// directory (a bar chart per transport where the experiment varies none).
    #[arg(long)]
    plots: Option<PathBuf>,
    /// The results database (default: $TRANSPUTATION_RESULTS/results.sqlite, else
    /// $XDG_DATA_HOME/transputation/results.sqlite).
    #[arg(long)]
    db: Option<PathBuf>,
}

#[derive(Args, Debug)]
pub struct ExperimentsArgs {
    /// The results database (default: $TRANSPUTATION_RESULTS/results.sqlite, else
    /// $XDG_DATA_HOME/transputation/results.sqlite).
    #[arg(long)]
    db: Option<PathBuf>,
}

fn open_db(path: Option<&Path>) -> Result<(Db, PathBuf)> {
    let path = path.map(Path::to_path_buf).unwrap_or_else(db::default_path);
    let db = Db::open(&path)?;
    Ok((db, path))
}

/// The database for reading: it must exist already.
fn open_existing_db(path: Option<&Path>) -> Result<(Db, PathBuf)> {
    let path = path.map(Path::to_path_buf).unwrap_or_else(db::default_path);
    if !path.exists() {
        bail!(
            "no results database at {} (run `transputation testbed run` first, or pass --db)",
            path.display()
        );
    }
    let db = Db::open(&path)?;
    Ok((db, path))
}

impl RunArgs {
    /// The experiment as written, from the file, the preset or the flags, with the overrides.
    fn experiment_file(&self) -> Result<ExperimentFile> {
        let mut f = match (&self.file, &self.preset) {
            (Some(p), _) => {
                let text = std::fs::read_to_string(p)
                    .with_context(|| format!("reading the experiment file {}", p.display()))?;
                ExperimentFile::from_toml(&text).map_err(|e| anyhow!("{}: {e}", p.display()))?
            }
            (None, Some(name)) => preset::preset(name)?,
            (None, None) => ExperimentFile::default(),
        };
        if let Some(c) = &self.circuits {
            f.circuits = split_options_list(c);
        }
        if !self.schemes.is_empty() {
            f.schemes = self.schemes.clone();
        }
        if let Some(t) = &self.transports {
            f.transports = split_options_list(t);
        }
        let sweep_flags = [
            (&self.rtt, &mut f.sweep.rtt),
            (&self.loss, &mut f.sweep.loss),
            (&self.rate, &mut f.sweep.rate),
            (&self.jitter, &mut f.sweep.jitter),
            (&self.queue, &mut f.sweep.queue),
        ];
        let mut any_sweep_flag = false;
        for (flag, field) in sweep_flags {
            if !flag.is_empty() {
                *field = flag.clone();
                any_sweep_flag = true;
            }
        }
        match (self.conditions.is_empty(), any_sweep_flag) {
            (false, false) => {
                f.conditions = self.conditions.clone();
                f.sweep = SweepFile::default();
            }
            (false, true) => f.conditions = self.conditions.clone(),
            (true, true) => f.conditions.clear(),
            (true, false) => {}
        }
        for p in &self.program {
            let (name, dir) = p
                .split_once('=')
                .ok_or_else(|| anyhow!("--program {p:?}: expected NAME=DIR"))?;
            f.programs.insert(name.to_string(), PathBuf::from(dir));
        }
        if let Some(n) = &self.name {
            f.name = Some(n.clone());
        }
        if let Some(r) = self.runs {
            f.runs = r;
        }
        if let Some(n) = self.repeat {
            f.repeat = n;
        }
        if let Some(t) = self.timeout {
            f.timeout = t;
        }
        if self.insecure {
            f.protection = false;
        }
        if let Some(e) = &self.emulator {
            f.emulator = e.clone();
        }
        if let Some(m) = &self.max_rate {
            f.max_rate = Some(m.clone());
        }
        if let Some(c) = &self.host_cc {
            f.host_cc = Some(c.clone());
        }
        if let Some(t) = self.probe_cache {
            f.probe_cache = Some(t);
        }
        if let Some(c) = self.cutoff {
            f.cutoff = Some(c);
        }
        // Program directories are kept absolute, so that --resume works from anywhere; in a
        // file they are relative to the file.
        let base = self
            .file
            .as_deref()
            .and_then(Path::parent)
            .filter(|p| !p.as_os_str().is_empty());
        for dir in f.programs.values_mut() {
            let joined = match base {
                Some(b) if dir.is_relative() => b.join(&*dir),
                _ => dir.clone(),
            };
            if let Ok(abs) = std::fs::canonicalize(&joined) {
                *dir = abs;
            }
        }
        Ok(f)
    }
}

/// The experiment `testbed run FLAGS` would run, read by the command line's own parser:
/// what the web UI checks a composed form with, so that the page and the command line read
/// the same flags the same way.
pub(crate) fn experiment_file_of(flags: &[String]) -> Result<ExperimentFile> {
    use clap::Parser;
    /// `testbed run`'s flags alone.
    #[derive(Parser)]
    struct RunLine {
        #[command(flatten)]
        run: RunArgs,
    }
    let line =
        RunLine::try_parse_from(std::iter::once("run").chain(flags.iter().map(String::as_str)))
            .map_err(|e| anyhow!("{}", e.render().to_string().trim()))?;
    line.run.experiment_file()
}

/// Transports or circuits separated by `;`, or by `,` where a comma does not continue an
/// item's options (`mtcp:streams=8,chunk=65536` keeps its comma: `chunk=...` is an option).
pub(crate) fn split_options_list(s: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for part in s.split(';') {
        for piece in part.split(',') {
            let piece = piece.trim();
            if piece.is_empty() {
                continue;
            }
            match out.last_mut() {
                Some(last) if piece.contains('=') && !piece.contains(':') && last.contains(':') => {
                    last.push(',');
                    last.push_str(piece);
                }
                _ => out.push(piece.to_string()),
            }
        }
    }
    out
}

pub fn run(args: RunArgs) -> Result<()> {
    transputation_netlab::ns::check_privileges()?;
    let (mut db, db_path) = open_db(args.db.as_deref())?;
    let source = match args.resume {
        Some(id) => {
            if db.experiment(id)?.is_none() {
                bail!("no experiment {id} in {}", db_path.display());
            }
            Source::Resume(id)
        }
        None => Source::New(Box::new(args.experiment_file()?)),
    };
    let exe = std::env::current_exe().context("finding this program to start the parties")?;
    let prepared = launch::prepare(&mut db, source, &exe, |note| eprintln!("{note}"))?;
    let id = prepared.id;
    if !args.quiet {
        eprintln!(
            "experiment {id} \"{}\": {} runs ({} conditions), results in {}",
            prepared.experiment.name,
            prepared.planned_runs,
            prepared.experiment.conditions.len(),
            db_path.display()
        );
    }
    let outcome = prepared.run(&mut db, !args.quiet)?;
    if !args.quiet {
        eprintln!(
            "experiment {id}: {} runs recorded now ({} failed or timed out), {} recorded before{}",
            outcome.recorded,
            outcome.failed,
            outcome.skipped,
            if outcome.finished { "; complete" } else { "" }
        );
    }
    let row = db.experiment(id)?;
    let runs = db.runs(id)?;
    out!("{}", report::build(row.as_ref(), &runs).text())?;
    Ok(())
}

pub fn report_cmd(args: ReportArgs) -> Result<()> {
    let (db, path) = open_existing_db(args.db.as_deref())?;
    let row = db
        .find_experiment(args.experiment.as_deref())?
        .ok_or_else(|| match &args.experiment {
            Some(e) => anyhow!("no experiment {e:?} in {}", path.display()),
            None => anyhow!("no experiment in {}", path.display()),
        })?;
    let runs = db.runs(row.id)?;
    let unit = match args.unit {
        TimeUnit::Ms => report::Unit::Ms,
        TimeUnit::Rtt => report::Unit::Rtt,
    };
    let r = report::build_in(Some(&row), &runs, unit);
    match args.format {
        Format::Table => out!("{}", r.text())?,
        Format::Markdown => out!("{}", r.markdown())?,
        Format::Csv => out!("{}", r.csv())?,
        Format::Json => outln!("{}", serde_json::to_string_pretty(&r.json())?)?,
    }
    if let Some(dir) = &args.plots {
        let written = transputation_experiments::plot::write_all(&runs, dir)
            .with_context(|| format!("writing plots to {}", dir.display()))?;
        if written.is_empty() {
            eprintln!("no plot: no run has succeeded");
        }
        for p in written {
            eprintln!("wrote {}", p.display());
        }
    }
    Ok(())
}

pub fn presets() -> Result<()> {
    let caps = capabilities();
    let mut rows = Vec::new();
    for p in preset::PRESETS {
        let mut f = preset::preset(p.name)?;
        let mut left_out = Vec::new();
        f.transports = usable_transports(&f.transports, &caps, |t, _| left_out.push(t.to_string()));
        let runs = match f.resolve() {
            Ok(e) => e.plan().len().to_string(),
            Err(e) => format!("unusable here: {e}"),
        };
        let mut about = p.description.to_string();
        if !left_out.is_empty() {
            about.push_str(&format!(" (left out here: {})", left_out.join(", ")));
        }
        rows.push(vec![p.name.to_string(), runs, about]);
    }
    out!("{}", table(&["preset", "runs here", "what"], &rows))?;
    Ok(())
}

pub fn list(args: ExperimentsArgs) -> Result<()> {
    let (db, path) = open_existing_db(args.db.as_deref())?;
    let rows: Vec<Vec<String>> = db
        .experiments()?
        .iter()
        .map(|e| {
            vec![
                e.id.to_string(),
                e.name.clone(),
                e.created_at.clone(),
                format!("{}/{}", e.recorded_runs, e.planned_runs),
                e.finished_at.clone().unwrap_or_else(|| "no".into()),
                e.environment.emulator.clone(),
                e.environment
                    .host_cc
                    .clone()
                    .unwrap_or_else(|| "unknown".into()),
                e.environment.protection.clone(),
            ]
        })
        .collect();
    eprintln!("{}", path.display());
    out!(
        "{}",
        table(
            &[
                "id",
                "name",
                "created (UTC)",
                "runs",
                "finished",
                "emulator",
                "host cc",
                "protection"
            ],
            &rows
        )
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use transputation_netlab::HostCc;

    #[derive(clap::Parser)]
    struct Cli {
        #[command(flatten)]
        run: RunArgs,
    }

    fn file(args: &[&str]) -> Result<ExperimentFile> {
        use clap::Parser;
        let cli = Cli::try_parse_from(std::iter::once("run").chain(args.iter().copied()))?;
        cli.run.experiment_file()
    }

    #[test]
    fn flags_override_a_presets_fields() {
        let f = file(&["--preset", "paper-table4", "--runs", "1"]).unwrap();
        assert_eq!(f.runs, 1);
        assert_eq!(f.name.as_deref(), Some("paper-table4"));
        assert_eq!(f.conditions, ["lan", "eu-us", "eu-aus"]);
        assert_eq!(f.circuits[2], preset::MINCUT_SIZE);
        assert!(f.resolve().is_ok());

        let f = file(&[
            "--preset",
            "paper-table4",
            "--circuits",
            "aes128;synthetic:and=1000,xor=2000,inputs=64",
            "--schemes",
            "ideal",
            "--transports",
            "tcp,udt",
        ])
        .unwrap();
        assert_eq!(
            f.circuits,
            ["aes128", "synthetic:and=1000,xor=2000,inputs=64"]
        );
        assert_eq!(f.schemes, ["ideal"]);
        assert_eq!(f.transports, ["tcp", "udt"]);
        assert_eq!(f.runs, 3);
        assert!(f.resolve().is_ok());

        // A sweep list replaces the preset's list of that name, and keeps the others.
        let f = file(&["--preset", "paper-latency", "--rtt", "5ms,20ms"]).unwrap();
        assert_eq!(f.sweep.rtt, ["5ms", "20ms"]);
        assert_eq!(f.sweep.rate, ["500mbit"]);
        // Custom parameters replace named conditions, and named conditions a sweep.
        let f = file(&[
            "--preset",
            "paper-table4",
            "--rtt",
            "100ms",
            "--loss",
            "0.1%",
        ])
        .unwrap();
        assert!(f.conditions.is_empty());
        assert_eq!(f.resolve().unwrap().conditions.len(), 1);
        let f = file(&["--preset", "paper-loss", "--conditions", "cw-wan"]).unwrap();
        assert_eq!(f.conditions, ["cw-wan"]);
        assert!(f.sweep.is_empty());

        let e = file(&["--preset", "paper-table5"]).unwrap_err();
        assert!(e.to_string().contains("no preset \"paper-table5\""), "{e}");
        assert!(file(&["--preset", "paper-table4", "--file", "x.toml"]).is_err());

        let f = file(&["--preset", "paper-table4", "--host-cc", "reno"]).unwrap();
        assert_eq!(f.host_cc.as_deref(), Some("reno"));
        assert_eq!(
            f.resolve().unwrap().host_cc,
            HostCc::Algorithm("reno".into())
        );
        let e = file(&["--preset", "paper-table4", "--host-cc", "Reno"])
            .unwrap()
            .resolve()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("host_cc: bad TCP congestion control"),
            "{e}"
        );
        assert!(file(&["--resume", "1", "--host-cc", "reno"]).is_err());
    }

    #[test]
    fn repeat_puts_computations_in_each_runs_session() {
        let f = file(&["--preset", "paper-table4"]).unwrap();
        assert_eq!(f.repeat, 1);
        let f = file(&["--preset", "paper-table4", "--repeat", "10"]).unwrap();
        assert_eq!((f.repeat, f.resolve().unwrap().repeat), (10, 10));
        let e = file(&["--preset", "paper-table4", "--repeat", "0"])
            .unwrap()
            .resolve()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("repeat: 0 computations per session: must be from 1 to"),
            "{e}"
        );
        assert!(file(&["--resume", "1", "--repeat", "3"]).is_err());
    }

    #[test]
    fn transports_split_on_semicolons_and_bare_commas() {
        assert_eq!(split_options_list("tcp,udt"), ["tcp", "udt"]);
        assert_eq!(
            split_options_list("tcp;mtcp:streams=8,chunk=65536;udt"),
            ["tcp", "mtcp:streams=8,chunk=65536", "udt"]
        );
        assert_eq!(
            split_options_list("mtcp:streams=8,chunk=65536,udt"),
            ["mtcp:streams=8,chunk=65536", "udt"]
        );
        // auto, and a transport with the bandwidth-delay product (whose factor is no colon).
        assert_eq!(
            split_options_list("tcp,auto,quic:cc=bbr,iw={bdp*0.8},udt"),
            ["tcp", "auto", "quic:cc=bbr,iw={bdp*0.8}", "udt"]
        );
    }

    #[test]
    fn auto_probes_every_run_unless_the_experiment_allows_a_cache() {
        let f = file(&[
            "--circuits",
            "aes128",
            "--transports",
            "tcp,auto",
            "--rtt",
            "40ms",
        ])
        .unwrap();
        assert_eq!(f.probe_cache, None);
        assert_eq!(f.resolve().unwrap().probe_cache_secs, 0.0);
        let f = file(&[
            "--circuits",
            "aes128",
            "--transports",
            "auto",
            "--rtt",
            "40ms",
            "--probe-cache",
            "600",
        ])
        .unwrap();
        assert_eq!(f.resolve().unwrap().probe_cache_secs, 600.0);
        let e = file(&["--circuits", "aes128", "--rtt", "1ms", "--probe-cache=-5"])
            .unwrap()
            .resolve()
            .unwrap_err();
        assert!(
            e.to_string()
                .starts_with("probe_cache: -5 s: must be from 0"),
            "{e}"
        );
        assert!(file(&["--resume", "1", "--probe-cache", "5"]).is_err());
    }

    #[test]
    fn a_cutoff_is_a_factor_the_description_keeps() {
        let f = file(&["--circuits", "aes128", "--rtt", "40ms"]).unwrap();
        assert_eq!(f.resolve().unwrap().cutoff, None);
        // Not stored when not given: descriptions from before the key read the same.
        assert!(!serde_json::to_string(&f).unwrap().contains("cutoff"));
        let f = file(&["--circuits", "aes128", "--rtt", "40ms", "--cutoff", "3"]).unwrap();
        assert_eq!(f.resolve().unwrap().cutoff, Some(3.0));
        let back: ExperimentFile =
            serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back.cutoff, Some(3.0));
        let e = file(&["--circuits", "aes128", "--rtt", "1ms", "--cutoff", "1.1"])
            .unwrap()
            .resolve()
            .unwrap_err();
        assert!(
            e.to_string().starts_with("cutoff: 1.1: must be from 1.5"),
            "{e}"
        );
        assert!(file(&["--resume", "1", "--cutoff", "3"]).is_err());
    }
}
