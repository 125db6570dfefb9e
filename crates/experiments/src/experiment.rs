//! Experiments: a matrix of circuits × schemes × transports × network conditions ×
//! repetitions (plus user programs × transports × conditions), described by command-line flags
//! or a TOML file, and expanded into the list of runs the runner carries out.
//!
//! [`ExperimentFile`] is the description as written (strings, as on the command line); it is
//! what the database keeps, so that `--resume` rebuilds exactly the same plan.
//! [`ExperimentFile::resolve`] checks it and gives an [`Experiment`], whose
//! [`Experiment::plan`] orders the runs condition by condition (one topology per condition),
//! then repetition by repetition, so that the repetitions of one cell are spread over the time
//! the condition takes and a slow drift of the machine touches every transport alike, each
//! repetition starting each cell with another transport.
//!
//! The TOML form:
//!
//! ```toml
//! name = "wan"                       # optional; default: "experiment"
//! circuits = ["aes128", "sha256"]    # built-in names or Bristol files
//! schemes = ["ideal", "prf"]         # default ["ideal"]; SCHEME+MODE runs the parties
//!                                    # with --parallel MODE (fgp, ipp): "ideal+ipp"
//! transports = ["tcp", "udt", "auto", "quic:cc=bbr,iw={bdp}"]
//!                                    # NAME or NAME:key=value,...; default ["tcp"]; auto:
//!                                    # the parties choose (--transport auto); {bdp}: the
//!                                    # condition's bandwidth-delay product (see `template`)
//! conditions = ["eu-us", "cw-wan"]   # named conditions
//! runs = 3                           # repetitions of every cell; default 1
//! repeat = 10                        # computations in each run's one session; default 1
//! timeout = 600                      # seconds per run; default 600
//! protection = true                  # session protection; default true
//! emulator = "auto"                  # auto, netem or emu
//! max_rate = "500mbit"               # cap on every link rate (optional)
//! host_cc = "cubic"                  # the emulated hosts' TCP congestion control: cubic
//!                                    # (default), reno, bbr, ..., or "system" (this machine's)
//! probe_cache = 0                    # seconds an auto evaluator may reuse its measurement
//!                                    # of the path; default 0: every run probes
//! cutoff = 3                         # stop a run at 3 x the fastest run of its cell so far
//!                                    # (at least 10 s; recorded as a timeout); default none
//!
//! [[link]]                           # a custom condition (any number of them)
//! name = "lossy-wan"                 # optional; default: made from the parameters
//! rtt = "100ms"
//! rate = "500mbit"
//! loss = "0.1%"
//! jitter = "1ms"
//! queue = "20ms"
//!
//! [sweep]                            # custom conditions: every combination of these lists
//! rtt = ["10ms", "100ms"]
//! loss = ["0", "0.1%"]
//! rate = ["100mbit"]
//!
//! [programs]                         # user programs: NAME = DIR with NAME-server.sh, NAME-client.sh
//! echo = "examples/testbed-program"
//! ```
//!
//! `auto` runs the parties with `--transport auto`: the evaluator measures the path, the
//! garbler predicts every transport and picks one, and the run records the choice. By
//! default every run measures its path (`evaluator --probe-cache 0`), so that its time
//! includes the probing a first session with a peer pays for. `probe_cache = SECS` lets the
//! evaluators of one condition reuse a measurement for that long: the runner gives them a
//! cache of their own per condition (never this user's, never another condition's) and
//! the `auto` runs of a condition one port, since the cache is keyed by the garbler's
//! address; only the first `auto` run of a condition then pays for the probe.
//!
//! A transport may write `{bdp}` (or `{bdp*F}`) as an option's value, replaced in each
//! condition by its bandwidth-delay product ([`template`]); such a transport is one column
//! of the report and one line of a plot across the conditions.
//!
//! A mistake names its key and, in a file, its line: `line 7, link[0].rate: bad rate ...`.

use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use transputation_netlab::spec::{parse_rate, LinkSpec};
use transputation_netlab::{EmulatorKind, HostCc, SpecError};

pub mod template;

pub use template::{is_agreed, is_auto, TransportTemplate, AUTO, AUTO_RACE};

/// The scheme column of a user program's runs: a program has no circuit or scheme of ours.
pub const PROGRAM_SCHEME: &str = "program";

/// The default per-run time limit, as in the choose-wisely paper.
pub const DEFAULT_TIMEOUT_SECS: u64 = 600;

/// The most computations one run's session may hold (`repeat`): each is a report line of
/// about 1 kB from both parties, which the runner reads from the first 4 MiB a party
/// prints and keeps in the database.
pub const MAX_REPEAT: u32 = 1000;

/// The longest an `auto` evaluator may be allowed to reuse a measurement (`probe_cache`),
/// seconds: a week, like the longest run.
pub const MAX_PROBE_CACHE_SECS: f64 = 7.0 * 24.0 * 3600.0;

/// A mistake in an experiment description: the key (`link[1].rate`), the line in a file
/// when known, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct ExperimentError {
    /// The key, as a path (`runs`, `link[1].rate`, `sweep.loss[0]`).
    pub key: String,
    /// The 1-based line of a TOML file, if the error came from one.
    pub line: Option<usize>,
    /// What is wrong.
    pub message: String,
}

impl fmt::Display for ExperimentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(l) = self.line {
            write!(f, "line {l}, ")?;
        }
        if self.key.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.key, self.message)
        }
    }
}

fn err(key: impl Into<String>, message: impl Into<String>) -> ExperimentError {
    ExperimentError {
        key: key.into(),
        line: None,
        message: message.into(),
    }
}

/// A custom condition as written.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LinkFile {
    /// Its label in reports; default: made from the parameters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Round-trip time (`100ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rtt: Option<String>,
    /// Rate each way (`500mbit`); none: unlimited.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rate: Option<String>,
    /// Loss each way (`0.1%`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub loss: Option<String>,
    /// Jitter each way (`1ms`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub jitter: Option<String>,
    /// Bottleneck queue (`20ms`, `64kb`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub queue: Option<String>,
}

/// Lists whose every combination is a custom condition.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SweepFile {
    /// Round-trip times.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rtt: Vec<String>,
    /// Loss rates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub loss: Vec<String>,
    /// Rates.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub rate: Vec<String>,
    /// Jitter (one value for all, or a list).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub jitter: Vec<String>,
    /// Queues.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub queue: Vec<String>,
}

impl SweepFile {
    /// Whether no list is given.
    pub fn is_empty(&self) -> bool {
        self.rtt.is_empty()
            && self.loss.is_empty()
            && self.rate.is_empty()
            && self.jitter.is_empty()
            && self.queue.is_empty()
    }
}

fn default_schemes() -> Vec<String> {
    vec!["ideal".into()]
}
fn default_transports() -> Vec<String> {
    vec!["tcp".into()]
}
fn default_runs() -> u32 {
    1
}
fn is_one(n: &u32) -> bool {
    *n == 1
}
fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_SECS
}
fn default_true() -> bool {
    true
}
fn default_emulator() -> String {
    "auto".into()
}

/// An experiment as written: in a TOML file, or made from command-line flags.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExperimentFile {
    /// A name for listings and reports.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Circuits: built-in names (`aes128`, `mincut:n=64`) or Bristol files.
    #[serde(default)]
    pub circuits: Vec<String>,
    /// Garbling schemes.
    #[serde(default = "default_schemes")]
    pub schemes: Vec<String>,
    /// Transports (`tcp`, `udt`, `mtcp:streams=8`).
    #[serde(default = "default_transports")]
    pub transports: Vec<String>,
    /// Named conditions.
    #[serde(default)]
    pub conditions: Vec<String>,
    /// Custom conditions.
    #[serde(default, rename = "link", skip_serializing_if = "Vec::is_empty")]
    pub links: Vec<LinkFile>,
    /// Custom conditions as every combination of lists.
    #[serde(default, skip_serializing_if = "SweepFile::is_empty")]
    pub sweep: SweepFile,
    /// Repetitions of every cell.
    #[serde(default = "default_runs")]
    pub runs: u32,
    /// Computations of the circuit in each run's one session (`evaluator --repeat N`): the
    /// first pays for the session's set-up, the further ones show what an open session
    /// costs (their online time). User programs run as they are. Left out of the stored
    /// description when 1, so that descriptions stored before this key read the same.
    #[serde(default = "default_runs", skip_serializing_if = "is_one")]
    pub repeat: u32,
    /// Seconds one run may take before both parties are killed.
    #[serde(default = "default_timeout")]
    pub timeout: u64,
    /// Whether sessions are protected (authenticated and encrypted).
    #[serde(default = "default_true")]
    pub protection: bool,
    /// The link emulator: auto, netem or emu.
    #[serde(default = "default_emulator")]
    pub emulator: String,
    /// A cap on every link rate (`500mbit`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_rate: Option<String>,
    /// The default TCP congestion control of the emulated hosts: an algorithm (`cubic`,
    /// `reno`, `bbr`) or `system` (this machine's); none: [`HostCc::DEFAULT`]. (A description
    /// stored before this key existed lacks it; its runs had this machine's.)
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_cc: Option<String>,
    /// Seconds an `auto` evaluator may reuse a measurement of its condition's path
    /// (`evaluator --probe-cache`); none: 0, every run probes. Left out of the stored
    /// description when not given, so that descriptions stored before this key read the
    /// same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub probe_cache: Option<f64>,
    /// Stop a run once it has taken this many times the fastest run of its cell so far
    /// (the same circuit, scheme and condition, any transport), but never before
    /// [`CUTOFF_FLOOR`]; it is recorded as a timeout that says so. None: only `timeout`
    /// stops a run. Left out of the stored description when not given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cutoff: Option<f64>,
    /// User programs: NAME → DIR holding `NAME-server.sh` and `NAME-client.sh`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub programs: BTreeMap<String, PathBuf>,
}

impl Default for ExperimentFile {
    fn default() -> Self {
        ExperimentFile {
            name: None,
            circuits: Vec::new(),
            schemes: default_schemes(),
            transports: default_transports(),
            conditions: Vec::new(),
            links: Vec::new(),
            sweep: SweepFile::default(),
            runs: default_runs(),
            repeat: default_runs(),
            timeout: default_timeout(),
            protection: true,
            emulator: default_emulator(),
            max_rate: None,
            host_cc: None,
            probe_cache: None,
            cutoff: None,
            programs: BTreeMap::new(),
        }
    }
}

/// A user program: `DIR/NAME-server.sh` and `DIR/NAME-client.sh`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// Its name (the circuit column of its runs).
    pub name: String,
    /// The directory holding its two scripts.
    pub dir: PathBuf,
}

impl Program {
    /// The server's script (run in namespace A, like the garbler).
    pub fn server(&self) -> PathBuf {
        self.dir.join(format!("{}-server.sh", self.name))
    }
    /// The client's script (run in namespace B, like the evaluator).
    pub fn client(&self) -> PathBuf {
        self.dir.join(format!("{}-client.sh", self.name))
    }
}

/// One network condition of an experiment: its label and the link.
#[derive(Debug, Clone, PartialEq)]
pub struct ConditionEntry {
    /// The label in the database and reports (`eu-us`, `rtt 10ms rate 100mbit`).
    pub label: String,
    /// The link.
    pub link: LinkSpec,
}

/// A checked experiment.
#[derive(Debug, Clone)]
pub struct Experiment {
    /// Its name.
    pub name: String,
    /// Circuits.
    pub circuits: Vec<String>,
    /// Schemes.
    pub schemes: Vec<String>,
    /// Transports as written (`{bdp}` included; [`Experiment::transport_in`] gives a
    /// condition's).
    pub transports: Vec<String>,
    /// Conditions, named first, then `[[link]]`, then the sweep.
    pub conditions: Vec<ConditionEntry>,
    /// User programs.
    pub programs: Vec<Program>,
    /// Repetitions.
    pub runs: u32,
    /// Computations in each run's session (1 or more).
    pub repeat: u32,
    /// Per-run limit.
    pub timeout: Duration,
    /// Session protection.
    pub protection: bool,
    /// The emulator.
    pub emulator: EmulatorKind,
    /// Cap on every rate.
    pub max_rate_bps: Option<u64>,
    /// The hosts' TCP congestion control.
    pub host_cc: HostCc,
    /// Seconds an `auto` evaluator may reuse a measurement of the path (0: none).
    pub probe_cache_secs: f64,
    /// Runs stop at this many times their cell's fastest so far (see
    /// [`ExperimentFile::cutoff`]).
    pub cutoff: Option<f64>,
}

/// The least time a run is given under a cutoff, whatever its cell's fastest run took: a
/// cutoff is for the runs that would take minutes where others took seconds, not for
/// process start-up jitter on a LAN.
pub const CUTOFF_FLOOR: Duration = Duration::from_secs(10);

/// The least cutoff: a run within this factor of the fastest is never stopped for it.
pub const MIN_CUTOFF: f64 = 1.5;

/// One cell of the matrix: what runs, over which transport, across which condition.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
pub struct Cell {
    /// The circuit, or the user program's name.
    pub circuit: String,
    /// The scheme, or [`PROGRAM_SCHEME`] for a user program.
    pub scheme: String,
    /// The transport.
    pub transport: String,
    /// The condition's label.
    pub condition: String,
}

impl Cell {
    /// Whether this cell runs a user program.
    pub fn is_program(&self) -> bool {
        self.scheme == PROGRAM_SCHEME
    }
}

/// One run of the plan: a cell, its repetition, and the index of its condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedRun {
    /// The cell (its transport as this condition runs it: `{bdp}` replaced).
    pub cell: Cell,
    /// The transport as the experiment wrote it.
    pub transport_written: String,
    /// Which repetition (0-based).
    pub repetition: u32,
    /// Index into [`Experiment::conditions`].
    pub condition_index: usize,
}

impl PlannedRun {
    /// The key that makes a run unique in an experiment.
    pub fn key(&self) -> (Cell, u32) {
        (self.cell.clone(), self.repetition)
    }
}

fn check_list(key: &str, v: &[String], what: &str) -> Result<(), ExperimentError> {
    let mut seen = HashSet::new();
    for (i, s) in v.iter().enumerate() {
        // Transports and circuits have options after a colon, separated by commas.
        let options_ok = matches!(what, "transport" | "circuit") && s.contains(':');
        if s.trim().is_empty() || s.contains(',') && !options_ok {
            return Err(err(format!("{key}[{i}]"), format!("{s:?} is not a {what}")));
        }
        if !seen.insert(s) {
            return Err(err(format!("{key}[{i}]"), format!("{s:?} is given twice")));
        }
    }
    Ok(())
}

/// A label for a custom link made from the parameters as written.
fn custom_label(l: &LinkFile) -> String {
    let mut parts = vec![format!("rtt {}", l.rtt.as_deref().unwrap_or("0ms"))];
    parts.push(format!("rate {}", l.rate.as_deref().unwrap_or("unlimited")));
    if let Some(loss) = &l.loss {
        parts.push(format!("loss {loss}"));
    }
    if let Some(j) = &l.jitter {
        parts.push(format!("jitter {j}"));
    }
    if let Some(q) = &l.queue {
        parts.push(format!("queue {q}"));
    }
    parts.join(" ")
}

/// The `[sweep]` lists, in the order they combine.
const SWEEP_FIELDS: [&str; 5] = ["rtt", "loss", "rate", "jitter", "queue"];

/// The link of a custom condition; an error says which field (if one) is wrong.
fn link_spec(l: &LinkFile) -> Result<LinkSpec, (Option<&'static str>, String)> {
    LinkSpec::parse_custom(
        l.rtt.as_deref(),
        l.rate.as_deref(),
        l.loss.as_deref(),
        l.jitter.as_deref(),
        l.queue.as_deref(),
    )
    .map_err(|e| {
        let field = SWEEP_FIELDS.iter().find(|&&f| f == e.what).copied();
        (field, e.to_string())
    })
}

impl ExperimentFile {
    /// Parses a TOML experiment; an error names the line and the key.
    pub fn from_toml(text: &str) -> Result<Self, ExperimentError> {
        let file: ExperimentFile = toml::from_str(text).map_err(|e| {
            let line = e
                .span()
                .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
            // toml's message already says what is wrong; its first line repeats the place.
            let message = e.message().trim().to_string();
            ExperimentError {
                key: String::new(),
                line,
                message,
            }
        })?;
        file.resolve().map_err(|mut e| {
            e.line = locate(text, &e.key);
            e
        })?;
        Ok(file)
    }

    /// The custom conditions of the `[sweep]` lists: every combination, in the order rtt,
    /// loss, rate, jitter, queue (the last varies fastest), each with the list indices used.
    fn sweep_links(&self) -> Vec<([Option<usize>; 5], LinkFile)> {
        let s = &self.sweep;
        if s.is_empty() {
            return Vec::new();
        }
        let lists = [&s.rtt, &s.loss, &s.rate, &s.jitter, &s.queue];
        let mut combos: Vec<[Option<usize>; 5]> = vec![[None; 5]];
        for (k, list) in lists.iter().enumerate() {
            if list.is_empty() {
                continue;
            }
            combos = combos
                .into_iter()
                .flat_map(|c| {
                    (0..list.len()).map(move |i| {
                        let mut c = c;
                        c[k] = Some(i);
                        c
                    })
                })
                .collect();
        }
        combos
            .into_iter()
            .map(|c| {
                let v = |k: usize| c[k].map(|i| lists[k][i].clone());
                let link = LinkFile {
                    name: None,
                    rtt: v(0),
                    loss: v(1),
                    rate: v(2),
                    jitter: v(3),
                    queue: v(4),
                };
                (c, link)
            })
            .collect()
    }

    /// The checks of the lists and numbers that need nothing parsed.
    fn check_lists(&self) -> Result<(), ExperimentError> {
        check_list("circuits", &self.circuits, "circuit")?;
        check_list("schemes", &self.schemes, "scheme")?;
        check_list("transports", &self.transports, "transport")?;
        check_list("conditions", &self.conditions, "condition")?;
        if self.circuits.is_empty() && self.programs.is_empty() {
            return Err(err("circuits", "no circuit and no program: nothing to run"));
        }
        if !self.circuits.is_empty() && self.schemes.is_empty() {
            return Err(err("schemes", "empty"));
        }
        if let Some(i) = self.schemes.iter().position(|s| s == PROGRAM_SCHEME) {
            return Err(err(
                format!("schemes[{i}]"),
                format!("{PROGRAM_SCHEME:?} is reserved for user programs"),
            ));
        }
        if self.transports.is_empty() {
            return Err(err("transports", "empty"));
        }
        if self.runs == 0 {
            return Err(err("runs", "must be at least 1"));
        }
        if self.repeat == 0 || self.repeat > MAX_REPEAT {
            return Err(err(
                "repeat",
                format!(
                    "{} computations per session: must be from 1 to {MAX_REPEAT}",
                    self.repeat
                ),
            ));
        }
        if self.timeout == 0 || self.timeout > 7 * 24 * 3600 {
            return Err(err("timeout", "must be from 1 to 604800 seconds"));
        }
        if let Some(t) = self.probe_cache {
            if !(0.0..=MAX_PROBE_CACHE_SECS).contains(&t) {
                return Err(err(
                    "probe_cache",
                    format!("{t} s: must be from 0 to {MAX_PROBE_CACHE_SECS} seconds"),
                ));
            }
        }
        if let Some(c) = self.cutoff {
            if !(MIN_CUTOFF..=1000.0).contains(&c) {
                return Err(err(
                    "cutoff",
                    format!("{c}: must be from {MIN_CUTOFF} to 1000 times the cell's fastest run"),
                ));
            }
        }
        for (i, t) in self.transports.iter().enumerate() {
            TransportTemplate::parse(t).map_err(|e| err(format!("transports[{i}]"), e))?;
        }
        Ok(())
    }

    /// The conditions: the named ones, the `[[link]]` ones, then the sweep's combinations.
    fn conditions(&self) -> Result<Vec<ConditionEntry>, ExperimentError> {
        let mut conditions = Vec::new();
        for (i, c) in self.conditions.iter().enumerate() {
            let link = LinkSpec::condition(c)
                .map_err(|e| err(format!("conditions[{i}]"), e.to_string()))?;
            conditions.push(ConditionEntry {
                label: c.clone(),
                link,
            });
        }
        let links = self
            .links
            .iter()
            .enumerate()
            .map(|(i, l)| (Err(i), l.clone()))
            .chain(self.sweep_links().into_iter().map(|(c, l)| (Ok(c), l)));
        for (from, l) in links {
            let key = match from {
                Err(i) => format!("link[{i}]"),
                Ok(_) => "sweep".to_string(),
            };
            let mut link = link_spec(&l).map_err(|(field, msg)| {
                let key = match (from, field) {
                    (_, None) => key.clone(),
                    (Err(i), Some(f)) => format!("link[{i}].{f}"),
                    (Ok(c), Some(f)) => {
                        let k = SWEEP_FIELDS.iter().position(|&x| x == f).unwrap_or(0);
                        match c[k] {
                            Some(i) => format!("sweep.{f}[{i}]"),
                            None => format!("sweep.{f}"),
                        }
                    }
                };
                err(key, msg)
            })?;
            let label = match &l.name {
                Some(n) if n.trim().is_empty() => {
                    return Err(err(format!("{key}.name"), "empty"));
                }
                Some(n) => n.clone(),
                None => custom_label(&l),
            };
            link.name = label.clone();
            conditions.push(ConditionEntry { label, link });
        }
        Ok(conditions)
    }

    /// Checks the description and builds the experiment.
    pub fn resolve(&self) -> Result<Experiment, ExperimentError> {
        self.check_lists()?;
        let emulator: EmulatorKind = self
            .emulator
            .parse()
            .map_err(|e: SpecError| err("emulator", e.to_string()))?;
        let max_rate_bps = self
            .max_rate
            .as_deref()
            .map(parse_rate)
            .transpose()
            .map_err(|e| err("max_rate", e.to_string()))?;
        let host_cc: HostCc = self
            .host_cc
            .as_deref()
            .unwrap_or(HostCc::DEFAULT)
            .parse()
            .map_err(|e: SpecError| err("host_cc", e.to_string()))?;

        let conditions = self.conditions()?;
        if conditions.is_empty() {
            return Err(err(
                "conditions",
                "no condition: name one (`conditions`), or give `[[link]]` or `[sweep]`",
            ));
        }
        let mut labels = HashSet::new();
        for c in &conditions {
            if !labels.insert(c.label.clone()) {
                return Err(err(
                    "conditions",
                    format!("two conditions are labelled {:?}; name them apart", c.label),
                ));
            }
        }

        let mut programs = Vec::new();
        for (name, dir) in &self.programs {
            let ok = !name.is_empty()
                && name
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
            if !ok {
                return Err(err(
                    format!("programs.{name}"),
                    "a program's name is letters, digits, - and _",
                ));
            }
            if self.circuits.contains(name) {
                return Err(err(
                    format!("programs.{name}"),
                    "a circuit has the same name",
                ));
            }
            programs.push(Program {
                name: name.clone(),
                dir: dir.clone(),
            });
        }

        let experiment = Experiment {
            name: self.name.clone().unwrap_or_else(|| "experiment".into()),
            circuits: self.circuits.clone(),
            schemes: self.schemes.clone(),
            transports: self.transports.clone(),
            conditions,
            programs,
            runs: self.runs,
            repeat: self.repeat,
            timeout: Duration::from_secs(self.timeout),
            protection: self.protection,
            emulator,
            max_rate_bps,
            host_cc,
            probe_cache_secs: self.probe_cache.unwrap_or(0.0),
            cutoff: self.cutoff,
        };
        if let Some((a, b, condition, same)) = experiment.same_in_a_condition() {
            return Err(err(
                "transports",
                format!(
                    "{a:?} and {b:?} are the same transport in condition {condition:?} \
                     ({same}): leave one out"
                ),
            ));
        }
        Ok(experiment)
    }
}

impl Experiment {
    /// The workloads: (circuit or program name, scheme or [`PROGRAM_SCHEME`]).
    pub fn workloads(&self) -> Vec<(String, String)> {
        let mut w: Vec<(String, String)> = self
            .circuits
            .iter()
            .flat_map(|c| self.schemes.iter().map(move |s| (c.clone(), s.clone())))
            .collect();
        w.extend(
            self.programs
                .iter()
                .map(|p| (p.name.clone(), PROGRAM_SCHEME.to_string())),
        );
        w
    }

    /// Every run: by condition, then repetition, then circuit, scheme and transport; each
    /// transport as its condition runs it, and none that the condition cannot run (see
    /// [`Experiment::left_out`]). Repetition `r` runs each cell's transports in the written
    /// order rotated by `r`, so that whatever the first run of a cell pays for coming first
    /// falls on another transport in each repetition: in three partial runs of the grid of
    /// docs/results/auto, whose first transport is `auto`, both parties of `auto` took
    /// 365–582 ms to set up the MinCut size under `ideal` in every repetition, where the
    /// cell's other runs mostly took 185–275 (a few up to 556; the set-up does not depend
    /// on the transport). The cell comes after SHA-256's; the same runs in another order
    /// showed it on another run.
    pub fn plan(&self) -> Vec<PlannedRun> {
        let workloads = self.workloads();
        let mut plan = Vec::new();
        for (ci, c) in self.conditions.iter().enumerate() {
            let transports: Vec<(&String, String)> = self
                .transports
                .iter()
                .filter_map(|t| self.transport_in(t, c).map(|here| (t, here)))
                .collect();
            for repetition in 0..self.runs {
                let mut rotated = transports.clone();
                rotated.rotate_left(repetition as usize % transports.len().max(1));
                for (circuit, scheme) in &workloads {
                    for (written, here) in &rotated {
                        plan.push(PlannedRun {
                            cell: Cell {
                                circuit: circuit.clone(),
                                scheme: scheme.clone(),
                                transport: here.clone(),
                                condition: c.label.clone(),
                            },
                            transport_written: (*written).clone(),
                            repetition,
                            condition_index: ci,
                        });
                    }
                }
            }
        }
        plan
    }

    /// The user program of that name.
    pub fn program(&self, name: &str) -> Option<&Program> {
        self.programs.iter().find(|p| p.name == name)
    }
    /// The transport `written` as condition `c` runs it: `{bdp}` replaced by the
    /// bandwidth-delay product of its RTT and garbler-to-evaluator rate (after
    /// `max_rate`); `None` where it needs a rate `c` lacks.
    pub fn transport_in(&self, written: &str, c: &ConditionEntry) -> Option<String> {
        let rate = match (c.link.a_to_b.rate_bps, self.max_rate_bps) {
            (Some(r), Some(m)) => Some(r.min(m)),
            (r, m) => r.or(m),
        };
        template::expand_written(written, c.link.rtt(), rate)
    }

    /// What the plan leaves out and why: each transport with `{bdp}` in each condition
    /// without a rate (the caller tells the user).
    pub fn left_out(&self) -> Vec<String> {
        let mut notes = Vec::new();
        for c in &self.conditions {
            for t in &self.transports {
                if self.transport_in(t, c).is_none() {
                    notes.push(format!(
                        "leaving out the transport {t} in condition {:?}: its {{bdp}} needs \
                         the link's rate, and the condition has none (give it a rate, or \
                         max_rate)",
                        c.label
                    ));
                }
            }
        }
        notes
    }

    /// Two transports that are one string in a condition (`quic:iw={bdp}` and
    /// `quic:iw=2500000`), which would be one cell twice: (the first as written, the
    /// second, the condition, the string).
    fn same_in_a_condition(&self) -> Option<(String, String, String, String)> {
        for c in &self.conditions {
            let here: Vec<(&String, String)> = self
                .transports
                .iter()
                .filter_map(|t| self.transport_in(t, c).map(|e| (t, e)))
                .collect();
            for (i, (a, ea)) in here.iter().enumerate() {
                if let Some((b, _)) = here[i + 1..].iter().find(|(_, eb)| eb == ea) {
                    return Some((a.to_string(), b.to_string(), c.label.clone(), ea.clone()));
                }
            }
        }
        None
    }
}

/// Splits `link[1].rate` into `["link", 1, "rate"]`.
fn key_path(key: &str) -> Vec<Result<usize, &str>> {
    let mut out = Vec::new();
    for part in key.split('.') {
        let (name, rest) = part.split_once('[').unwrap_or((part, ""));
        if !name.is_empty() {
            out.push(Err(name));
        }
        for idx in rest.split('[') {
            if let Ok(i) = idx.trim_end_matches(']').parse::<usize>() {
                out.push(Ok(i));
            }
        }
    }
    out
}

/// The 1-based line of `key` in the TOML text (as deep as the path can be followed).
fn locate(text: &str, key: &str) -> Option<usize> {
    use toml::de::{DeTable, DeValue};
    let doc = DeTable::parse(text).ok()?;
    let mut span = None;
    let mut table: Option<&DeTable> = Some(doc.get_ref());
    let mut value: Option<&DeValue> = None;
    for seg in key_path(key) {
        let next = match (seg, table, value) {
            (Err(name), Some(t), _) => t.iter().find(|(k, _)| k.get_ref() == name).map(|(_, v)| v),
            (Ok(i), _, Some(DeValue::Array(a))) => a.get(i),
            _ => None,
        };
        let Some(v) = next else { break };
        span = Some(v.span());
        value = Some(v.get_ref());
        table = match v.get_ref() {
            DeValue::Table(t) => Some(t),
            _ => None,
        };
    }
    let s = span?;
    Some(text[..s.start.min(text.len())].matches('\n').count() + 1)
}

#[cfg(test)]
mod tests;
