//! `transputation testbed run`, `report` and `experiments`: experiments over emulated links.
//!
//! `run` builds an experiment from flags or a TOML file (`transputation_testbed::experiment`),
//! checks every circuit, scheme and transport here before any link is built, and hands the
//! runner a [`Launcher`] that starts this binary's `garbler` and `evaluator` with zero inputs
//! of the right lengths. Session protection follows what the parties support: with
//! `--psk-file` in `garbler --help`, a one-time pre-shared key is made for the experiment
//! (protection on), or `--insecure` is passed (`--insecure` here); a build without session
//! protection records `unsupported`. `--preset` starts from one of
//! `transputation_testbed::preset`'s experiments. `report` prints the Table-4 shape
//! (`transputation_testbed::report`) and, with `--plots`, SVG figures.

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};
use clap::{Args, ValueEnum};
use transputation_circuits::{library, Party};
use transputation_testbed::db::{self, Db, Environment, LinkRecord};
use transputation_testbed::experiment::{Cell, ExperimentFile, SweepFile};
use transputation_testbed::runner::{Launcher, PartyCommand, Runner};
use transputation_testbed::{preset, report, HostCc};

use crate::garble_cmd::parse_scheme;
use crate::report::table;
use crate::transport_cmd::parse_spec;

#[derive(Args, Debug)]
pub struct RunArgs {
    /// An experiment file (TOML; see the README's "Experiments").
    #[arg(long, conflicts_with_all = ["preset", "circuits", "schemes", "transports", "conditions", "rtt", "loss", "rate", "jitter", "queue", "program"])]
    file: Option<PathBuf>,
    /// A preset experiment (see `testbed presets`): paper-table4, paper-latency, paper-loss,
    /// paper-bandwidth or choose-wisely. The other flags override its fields: --conditions
    /// replaces its named conditions, --rtt/--loss/--rate/--jitter/--queue its lists of the
    /// same name (a preset's named conditions go when only these are given, and its lists go
    /// when only --conditions is); transports this build cannot run are left out, with a note.
    #[arg(long)]
    preset: Option<String>,
    /// Continue the experiment with this id: run what it has not recorded yet.
    #[arg(long, conflicts_with_all = ["file", "preset", "circuits", "schemes", "transports", "conditions", "rtt", "loss", "rate", "jitter", "queue", "program", "runs", "timeout", "name", "insecure", "emulator", "max_rate", "host_cc"])]
    resume: Option<i64>,
    /// Circuits, separated by `;` or `,` (built-ins such as aes128, sha256, mincut, with
    /// options as in `circuit list`, e.g. `aes128;synthetic:and=1000,xor=2000`, or Bristol
    /// files).
    #[arg(long)]
    circuits: Option<String>,
    /// Garbling schemes, comma-separated (default: ideal).
    #[arg(long, value_delimiter = ',')]
    schemes: Vec<String>,
    /// Transports, separated by `;` or `,` (default: tcp); options as in `transports`, e.g.
    /// `tcp;mtcp:streams=8,chunk=65536;udt`.
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

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// The experiment: its id or name (default: the latest).
    experiment: Option<String>,
    /// The output format.
    #[arg(long, value_enum, default_value = "table")]
    format: Format,
    /// Also write plots (SVG) of time against RTT, loss and rate into this directory.
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
            (None, Some(name)) => {
                let mut f = preset::preset(name)?;
                if self.transports.is_none() {
                    f.transports = usable_transports(&f.transports, |t, why| {
                        eprintln!("preset {name}: leaving out the transport {t}: {why}")
                    });
                }
                f
            }
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

/// The transports of `wanted` this build can run; `skipped` hears of each one left out and
/// why.
fn usable_transports(wanted: &[String], mut skipped: impl FnMut(&str, &str)) -> Vec<String> {
    let known = transputation_transport::transports();
    wanted
        .iter()
        .filter(|t| {
            let name = t.split(':').next().unwrap_or(t);
            match known.iter().find(|k| k.name == name).map(|k| &k.available) {
                Some(Ok(())) => true,
                Some(Err(e)) => {
                    skipped(t, &e.to_string());
                    false
                }
                None => {
                    skipped(t, "no such transport in this build");
                    false
                }
            }
        })
        .cloned()
        .collect()
}

/// Transports or circuits separated by `;`, or by `,` where a comma does not continue an
/// item's options (`mtcp:streams=8,chunk=65536` keeps its comma: `chunk=...` is an option).
fn split_options_list(s: &str) -> Vec<String> {
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

/// The parties: this binary's garbler and evaluator with zero inputs.
struct Parties {
    exe: PathBuf,
    /// Circuit → (garbler input, evaluator input), hex.
    inputs: HashMap<String, (String, String)>,
    /// Protection flags for both parties.
    protection_flags: Vec<String>,
    /// Whether the parties take --rtt-ms and --bandwidth (buffer sizing, paper §4.2).
    sizes_buffers: bool,
    /// The one-time key's directory, removed at the end.
    _key_dir: Option<tempfile::TempDir>,
}

impl Launcher for Parties {
    fn circuit_parties(
        &self,
        cell: &Cell,
        link: &LinkRecord,
        server: SocketAddrV4,
        timeout: Duration,
    ) -> Result<(PartyCommand, PartyCommand), String> {
        let (gi, ei) = self
            .inputs
            .get(&cell.circuit)
            .ok_or_else(|| format!("no inputs prepared for {}", cell.circuit))?;
        // A silent peer is given up on well before the run's limit where that is long.
        let silent = timeout.as_secs().clamp(1, 120);
        let mut common = vec![
            "--circuit".to_string(),
            cell.circuit.clone(),
            "--scheme".into(),
            cell.scheme.clone(),
            "--transport".into(),
            cell.transport.clone(),
            "--timeout".into(),
            silent.to_string(),
            "--json".into(),
        ];
        common.extend(self.protection_flags.iter().cloned());
        common.extend(sizing_flags(self.sizes_buffers, link));
        let party = |role: &str, addr_flag: &str, input: &str| {
            let mut args = vec![
                role.to_string(),
                addr_flag.to_string(),
                server.to_string(),
                format!("--input={input}"),
            ];
            args.extend(common.iter().cloned());
            PartyCommand {
                program: self.exe.clone(),
                args,
                env: Vec::new(),
            }
        };
        Ok((
            party("garbler", "--listen", gi),
            party("evaluator", "--connect", ei),
        ))
    }

    fn program_env(&self) -> Vec<(String, String)> {
        vec![
            ("TRANSPUTATION".into(), self.exe.display().to_string()),
            ("TPB_PARTY_FLAGS".into(), self.protection_flags.join(" ")),
        ]
    }
}

/// `--rtt-ms` and `--bandwidth` of the link as emulated, for both parties, so that they size
/// their buffers for it and the circuit's volume; none for a link of unlimited rate (the
/// sizing needs both) or parties that do not size buffers.
fn sizing_flags(supported: bool, link: &LinkRecord) -> Vec<String> {
    match link.rate_bps {
        Some(rate) if supported && rate > 0 => vec![
            "--rtt-ms".into(),
            format!("{}", link.rtt_us as f64 / 1e3),
            "--bandwidth".into(),
            rate.to_string(),
        ],
        _ => Vec::new(),
    }
}

/// Zero inputs for a party: one hex string of the right length per group it owns.
fn zero_input(circuit: &transputation_circuits::Circuit, party: Party) -> String {
    circuit
        .inputs()
        .iter()
        .filter(|g| g.party == party)
        .map(|g| "0".repeat((g.len as usize).div_ceil(4)))
        .collect::<Vec<_>>()
        .join(",")
}

/// The garbler's `--help`: which flags the parties take.
fn garbler_help(exe: &Path) -> Result<String> {
    let help = Command::new(exe)
        .args(["garbler", "--help"])
        .output()
        .context("asking the garbler for its flags")?;
    Ok(String::from_utf8_lossy(&help.stdout).into_owned())
}

/// What session protection the parties get: (flags, `on|off|unsupported`, key directory).
fn protection(
    exe: &Path,
    wanted: bool,
) -> Result<(Vec<String>, &'static str, Option<tempfile::TempDir>)> {
    let help = garbler_help(exe)?;
    let has_psk = help.contains("--psk-file");
    let has_insecure = help.contains("--insecure");
    match (wanted, has_psk, has_insecure) {
        (true, true, _) => {
            let dir = tempfile::Builder::new()
                .prefix("transputation-testbed-")
                .tempdir()
                .context("making a directory for the experiment's key")?;
            let key = dir.path().join("psk");
            let out = Command::new(exe)
                .args(["keygen", "--psk", "--out"])
                .arg(&key)
                .output()
                .context("making the experiment's pre-shared key")?;
            if !out.status.success() {
                bail!(
                    "making the experiment's pre-shared key failed: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
            }
            Ok((
                vec!["--psk-file".into(), key.display().to_string()],
                "on",
                Some(dir),
            ))
        }
        (false, _, true) => Ok((vec!["--insecure".into()], "off", None)),
        _ => Ok((Vec::new(), "unsupported", None)),
    }
}

/// The commit this binary was built from, if it sits in a git work tree.
fn git_commit(exe: &Path) -> Option<String> {
    let dir = exe.parent()?;
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["rev-parse", "HEAD"])
        .output()
        .ok()?;
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    (out.status.success() && s.len() >= 7).then_some(s)
}

pub fn run(args: RunArgs) -> Result<()> {
    transputation_testbed::ns::check_privileges()?;
    let (mut db, db_path) = open_db(args.db.as_deref())?;
    let (file, id, protection_wanted) = match args.resume {
        Some(id) => {
            let row = db
                .experiment(id)?
                .ok_or_else(|| anyhow!("no experiment {id} in {}", db_path.display()))?;
            let mut file: ExperimentFile = serde_json::from_str(&row.spec)
                .with_context(|| format!("experiment {id}'s description"))?;
            if file.host_cc.is_none() {
                // Recorded before the testbed set the hosts' congestion control: its runs had
                // this machine's, and so do the rest.
                eprintln!(
                    "experiment {id} predates --host-cc: its runs had this machine's TCP \
                     congestion control, and so will the rest (`system`)"
                );
                file.host_cc = Some("system".into());
            }
            let wanted = file.protection;
            (file, Some(id), wanted)
        }
        None => {
            let mut f = args.experiment_file()?;
            // Stored explicitly, so that a resumed experiment keeps it whatever the default
            // becomes.
            f.host_cc.get_or_insert_with(|| HostCc::DEFAULT.to_string());
            let wanted = f.protection;
            (f, None, wanted)
        }
    };
    let experiment = file.resolve()?;

    // Check every circuit, scheme and transport here, before any link is built.
    let mut inputs = HashMap::new();
    for (i, c) in experiment.circuits.iter().enumerate() {
        let circuit =
            library::load_with_parties(c, None).map_err(|e| anyhow!("circuits[{i}] {c:?}: {e}"))?;
        inputs.insert(
            c.clone(),
            (
                zero_input(&circuit, Party::Garbler),
                zero_input(&circuit, Party::Evaluator),
            ),
        );
    }
    for (i, s) in experiment.schemes.iter().enumerate() {
        parse_scheme(s).map_err(|e| anyhow!("schemes[{i}] {s:?}: {e}"))?;
    }
    for (i, t) in experiment.transports.iter().enumerate() {
        parse_spec(t).map_err(|e| anyhow!("transports[{i}] {t:?}: {e}"))?;
    }

    let exe = std::env::current_exe().context("finding this program to start the parties")?;
    let (protection_flags, protection_state, key_dir) = protection(&exe, protection_wanted)?;
    let sizes_buffers = garbler_help(&exe)?.contains("--rtt-ms");
    let plan_len = experiment.plan().len();
    let id = match id {
        Some(id) => id,
        None => {
            let env = Environment::detect(
                env!("CARGO_PKG_VERSION"),
                git_commit(&exe),
                &experiment.emulator.to_string(),
                &experiment.host_cc.to_string(),
                protection_state,
            );
            let spec = serde_json::to_string(&file)?;
            db.create_experiment(&experiment.name, &spec, plan_len, &env)?
        }
    };
    if !args.quiet {
        eprintln!(
            "experiment {id} \"{}\": {plan_len} runs ({} conditions), results in {}",
            experiment.name,
            experiment.conditions.len(),
            db_path.display()
        );
    }
    let parties = Parties {
        exe,
        inputs,
        protection_flags,
        sizes_buffers,
        _key_dir: key_dir,
    };
    let outcome = Runner {
        experiment: &experiment,
        experiment_id: id,
        launcher: &parties,
        db: &mut db,
        progress: !args.quiet,
    }
    .run()?;
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
    let r = report::build(Some(&row), &runs);
    match args.format {
        Format::Table => out!("{}", r.text())?,
        Format::Markdown => out!("{}", r.markdown())?,
        Format::Csv => out!("{}", r.csv())?,
        Format::Json => outln!("{}", serde_json::to_string_pretty(&r.json())?)?,
    }
    if let Some(dir) = &args.plots {
        let written = transputation_testbed::plot::write_all(&runs, dir)
            .with_context(|| format!("writing plots to {}", dir.display()))?;
        if written.is_empty() {
            eprintln!("no plot: the experiment varies no RTT, loss or rate with successful runs");
        }
        for p in written {
            eprintln!("wrote {}", p.display());
        }
    }
    Ok(())
}

pub fn presets() -> Result<()> {
    let mut rows = Vec::new();
    for p in preset::PRESETS {
        let mut f = preset::preset(p.name)?;
        let mut left_out = Vec::new();
        f.transports = usable_transports(&f.transports, |t, _| left_out.push(t.to_string()));
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
    fn parties_get_the_links_rtt_and_rate() {
        let link = LinkRecord {
            rtt_us: 100_500,
            rate_bps: Some(200_000_000),
            ..LinkRecord::default()
        };
        assert_eq!(
            sizing_flags(true, &link),
            ["--rtt-ms", "100.5", "--bandwidth", "200000000"]
        );
        assert!(sizing_flags(false, &link).is_empty());
        let unlimited = LinkRecord {
            rate_bps: None,
            ..link
        };
        assert!(sizing_flags(true, &unlimited).is_empty());
    }

    #[test]
    fn unusable_transports_are_left_out_with_a_note() {
        let mut notes = Vec::new();
        let kept = usable_transports(
            &["tcp".into(), "sctp".into(), "mtcp:streams=2".into()],
            |t, why| notes.push(format!("{t}: {why}")),
        );
        assert_eq!(kept, ["tcp", "mtcp:streams=2"]);
        assert_eq!(notes, ["sctp: no such transport in this build"]);
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
    }
}
