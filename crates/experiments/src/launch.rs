//! Starting an experiment: one library call for any front end (the CLI today, a web UI or a
//! remote runner later). [`prepare`] takes a new experiment or the id of one to resume,
//! checks every circuit, scheme and transport before any link is built, asks the party
//! binary what it can do (`capabilities --json`), leaves out the transports it cannot run
//! (with a note, whether the experiment is new or resumed), records the experiment and its
//! environment, and returns a [`Prepared`] whose [`Prepared::run`] carries the plan out,
//! each run recorded with the protocol version the binary states.
//!
//! The parties are a `transputation` binary's `garbler` and `evaluator` with zero inputs of
//! the right lengths ([`BinaryParties`], the runner's [`Launcher`]); their command lines are
//! the contract's [`PartyArgs`]. Session protection follows what the binary offers: with
//! `noise-psk`, a one-time pre-shared key made for the experiment (protection on), or
//! `--insecure` when protection is not wanted; a binary offering neither records
//! `unsupported`.
//!
//! `auto` runs where the binary states the feature `transport-auto`: both parties get
//! `--transport auto`, the evaluator `--probe-cache` with the experiment's `probe_cache`
//! (0 unless it says otherwise: every run measures its path). Where it allows a cache, the
//! evaluators of each condition get a cache directory of their own (`XDG_CACHE_HOME`), so
//! that no measurement crosses conditions or comes from the user's cache.

use std::collections::HashMap;
use std::net::SocketAddrV4;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use transputation_circuits::{library, Circuit, Party};
use transputation_contract::{
    Capabilities, PartyArgs, Protection, Role, FEATURE_BUFFER_SIZING, FEATURE_REPEAT,
    FEATURE_TRANSPORT_AUTO, REPORT_VERSION,
};
use transputation_netlab::HostCc;

use crate::db::{Db, Environment, LinkRecord};
use crate::experiment::{is_agreed, Cell, Experiment, ExperimentFile};
use crate::runner::{Launcher, Outcome, PartyCommand, Runner};
use crate::Error;

/// What to run: a new experiment, or the rest of a recorded one.
#[derive(Debug, Clone)]
pub enum Source {
    /// A new experiment, as written (from a file, a preset or flags).
    New(Box<ExperimentFile>),
    /// The experiment with this id in the database: what it has not recorded yet.
    Resume(i64),
}

/// An experiment recorded and ready to run.
pub struct Prepared {
    /// Its id in the database.
    pub id: i64,
    /// The experiment.
    pub experiment: Experiment,
    /// How many runs its plan has.
    pub planned_runs: usize,
    parties: BinaryParties,
}

/// The transports of `wanted` that the party binary can run (as its capabilities say;
/// `auto` where they have the feature `transport-auto`); `skipped` hears of each one left
/// out and why.
pub fn usable_transports(
    wanted: &[String],
    caps: &Capabilities,
    mut skipped: impl FnMut(&str, &str),
) -> Vec<String> {
    wanted
        .iter()
        .filter(|t| {
            if is_agreed(t) {
                let runs = caps.has_feature(FEATURE_TRANSPORT_AUTO);
                if !runs {
                    skipped(
                        t,
                        "the party binary has no --transport auto (its capabilities lack \
                         the feature `transport-auto`)",
                    );
                }
                return runs;
            }
            let name = t.split(':').next().unwrap_or(t);
            match caps.transport(name) {
                Some(info) if info.available => true,
                Some(info) => {
                    skipped(t, info.why.as_deref().unwrap_or("not available here"));
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

/// The transports of `wanted` that the party binary `exe` can run: each one left out is a
/// note (by [`usable_transports`]), and none left is an error.
fn runnable_transports(
    wanted: &[String],
    caps: &Capabilities,
    exe: &Path,
    note: &mut dyn FnMut(String),
) -> Result<Vec<String>, Error> {
    let mut left_out = Vec::new();
    let kept = usable_transports(wanted, caps, |t, why| {
        note(format!("leaving out the transport {t}: {why}"));
        left_out.push(t.to_string());
    });
    if kept.is_empty() {
        return Err(Error::Run(format!(
            "transports: the party binary {} can run none of {}",
            exe.display(),
            left_out.join(", ")
        )));
    }
    Ok(kept)
}

/// Asks the party binary `exe` for its capabilities; an older binary without the command is
/// an error that says so.
pub fn capabilities(exe: &Path) -> Result<Capabilities, Error> {
    let out = Command::new(exe)
        .args(["capabilities", "--json"])
        .output()
        .map_err(|source| Error::Io {
            context: format!(
                "asking the party binary {} for its capabilities",
                exe.display()
            ),
            source,
        })?;
    if !out.status.success() {
        return Err(Error::Run(format!(
            "the party binary {} has no `capabilities --json` (it is older than this build, \
             which needs report version {REPORT_VERSION}): {}",
            exe.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    let caps: Capabilities = serde_json::from_slice(&out.stdout).map_err(|e| {
        Error::Run(format!(
            "the capabilities of the party binary {} are not readable: {e}",
            exe.display()
        ))
    })?;
    if caps.report_version != REPORT_VERSION {
        return Err(Error::Run(format!(
            "the party binary {} writes report version {}, this build reads {REPORT_VERSION}",
            exe.display(),
            caps.report_version
        )));
    }
    Ok(caps)
}

/// Refuses sessions of several computations (`repeat` above 1) where the party binary `exe`
/// cannot run them.
fn check_repeat(repeat: u32, caps: &Capabilities, exe: &Path) -> Result<(), Error> {
    if repeat > 1 && !caps.has_feature(FEATURE_REPEAT) {
        return Err(Error::Run(format!(
            "repeat: the party binary {} cannot run several computations in a session (its \
             capabilities lack the feature `{FEATURE_REPEAT}`); give repeat = 1, or a binary \
             that has it",
            exe.display()
        )));
    }
    Ok(())
}

/// How the parties may be told to garble in a scheme of an experiment (`ideal+ipp`): the
/// parties' `--parallel`. Under `auto` each party is given half this machine's cores
/// (`--threads`): both run on it, and their addresses in the testbed's namespaces do not
/// say so.
pub const PARALLEL_MODES: [&str; 5] = ["none", "fgp", "ipp", "cgp", "auto"];

/// A scheme of an experiment as the parties take it: the garbling scheme, and after a `+`
/// their `--parallel` mode (`ideal+ipp`: `--scheme ideal --parallel ipp`). A scheme with a
/// mode is a workload of its own, with rows of its own in the reports.
pub fn scheme_and_parallel(s: &str) -> (&str, Option<&str>) {
    match s.split_once('+') {
        Some((scheme, parallel)) => (scheme, Some(parallel)),
        None => (s, None),
    }
}

/// Checks the experiment's circuits, schemes and transports, naming the first bad entry;
/// returns what each circuit's parties start with.
fn check(experiment: &Experiment) -> Result<HashMap<String, CircuitStart>, Error> {
    let bad =
        |list: &str, i: usize, v: &str, e: String| Error::Run(format!("{list}[{i}] {v:?}: {e}"));
    let mut circuits = HashMap::new();
    // The first circuit without parallel regions, which `cgp` cannot run.
    let mut no_regions = None;
    for (i, c) in experiment.circuits.iter().enumerate() {
        let circuit = library::load_with_parties(c, None)
            .map_err(|e| bad("circuits", i, c, e.to_string()))?;
        if circuit.sections().is_none() && no_regions.is_none() {
            no_regions = Some((i, c));
        }
        circuits.insert(
            c.clone(),
            CircuitStart {
                garbler_input: zero_input(&circuit, Party::Garbler),
                evaluator_input: zero_input(&circuit, Party::Evaluator),
                gates: circuit.gate_counts().iter().sum(),
            },
        );
    }
    for (i, s) in experiment.schemes.iter().enumerate() {
        let (scheme, parallel) = scheme_and_parallel(s);
        scheme
            .parse::<transputation_garble::Scheme>()
            .map_err(|e| bad("schemes", i, s, e))?;
        if let Some(p) = parallel.filter(|p| !PARALLEL_MODES.contains(p)) {
            return Err(bad(
                "schemes",
                i,
                s,
                format!(
                    "after + comes how the parties garble, one of {PARALLEL_MODES:?}, not {p:?}"
                ),
            ));
        }
        if let (Some("cgp"), Some((ci, c))) = (parallel, no_regions) {
            return Err(bad(
                "schemes",
                i,
                s,
                format!(
                    "cgp garbles a circuit's parallel regions, and circuits[{ci}] {c:?} has none \
                     (a built-in that declares them, such as mvmul, or a file with a .regions \
                     side file)"
                ),
            ));
        }
        if parallel == Some("ipp") {
            if let Some(t) = experiment.transports.iter().find(|t| is_agreed(t)) {
                return Err(bad(
                    "schemes",
                    i,
                    s,
                    format!("ipp runs over a named transport, and the transports include {t}"),
                ));
            }
            if experiment.repeat > 1 {
                return Err(bad(
                    "schemes",
                    i,
                    s,
                    "ipp runs one computation per session (repeat = 1)".into(),
                ));
            }
        }
    }
    for (i, t) in experiment.transports.iter().enumerate() {
        if is_agreed(t) {
            continue;
        }
        // Each condition's string of a transport with `{bdp}`: its value must be one the
        // transport takes there.
        let mut here: Vec<String> = experiment
            .conditions
            .iter()
            .filter_map(|c| experiment.transport_in(t, c))
            .collect();
        here.dedup();
        for h in here {
            // A transport this build lacks is well written: `prepare` leaves it out with a
            // note (`usable_transports`), as it does one that does not work here.
            match h.parse::<transputation_transport::TransportSpec>() {
                Ok(_) | Err(transputation_transport::Error::NotBuilt { .. }) => {}
                Err(e) if h == *t => return Err(bad("transports", i, t, e.to_string())),
                Err(e) => return Err(bad("transports", i, t, format!("as {h}: {e}"))),
            }
        }
    }
    Ok(circuits)
}

/// The experiment as written and its id, for a source; `note` hears what the caller should
/// tell the user.
fn source_file(
    db: &Db,
    source: Source,
    note: &mut dyn FnMut(String),
) -> Result<(ExperimentFile, Option<i64>), Error> {
    match source {
        Source::Resume(id) => {
            let row = db
                .experiment(id)?
                .ok_or_else(|| Error::Run(format!("no experiment {id} in the database")))?;
            let mut file: ExperimentFile = serde_json::from_str(&row.spec)
                .map_err(|e| Error::Run(format!("experiment {id}'s description: {e}")))?;
            if file.host_cc.is_none() {
                // Recorded before the testbed set the hosts' congestion control: its runs had
                // this machine's, and so do the rest.
                note(format!(
                    "experiment {id} predates --host-cc: its runs had this machine's TCP \
                     congestion control, and so will the rest (`system`)"
                ));
                file.host_cc = Some("system".into());
            }
            Ok((file, Some(id)))
        }
        Source::New(f) => {
            let mut f = *f;
            // Stored explicitly, so that a resumed experiment keeps it whatever the default
            // becomes.
            f.host_cc.get_or_insert_with(|| HostCc::DEFAULT.to_string());
            Ok((f, None))
        }
    }
}

/// Tells `note` of each unfinished experiment named `name`. A name is no key: the same
/// command again starts anew (and a report of the name reads the newest), so whoever meant
/// to go on hears how.
fn unfinished_of_the_name(db: &Db, name: &str, note: &mut dyn FnMut(String)) -> Result<(), Error> {
    for e in db.experiments()?.iter().filter(|e| e.name == name) {
        if e.finished_at.is_none() {
            note(format!(
                "experiment {} of the same name is unfinished ({} of {} runs): `--resume {}` \
                 goes on with it; this starts a new one",
                e.id, e.recorded_runs, e.planned_runs, e.id
            ));
        }
    }
    Ok(())
}

/// Checks the experiment, leaves out the transports `exe` cannot run, records the experiment
/// (a new one) and gets its parties ready: `exe` is the `transputation` binary whose garbler
/// and evaluator run; `note` hears remarks for the user, such as each transport left out.
pub fn prepare(
    db: &mut Db,
    source: Source,
    exe: &Path,
    mut note: impl FnMut(String),
) -> Result<Prepared, Error> {
    let (mut file, id) = source_file(db, source, &mut note)?;
    let mut experiment = file.resolve()?;
    let circuits = check(&experiment)?;
    let caps = capabilities(exe)?;
    check_repeat(experiment.repeat, &caps, exe)?;
    experiment.transports = runnable_transports(&experiment.transports, &caps, exe, &mut note)?;
    experiment.left_out().into_iter().for_each(&mut note);
    // A new experiment records what it runs, so that it finishes; a resumed one keeps its
    // record, and the runs of a transport left out now stay to do.
    file.transports.clone_from(&experiment.transports);
    let (protection, protection_state, key_dir) = protection(exe, &caps, experiment.protection)?;
    let planned_runs = experiment.plan().len();
    let repeat = experiment.repeat;
    let probe_caches = probe_caches(&experiment)?;
    let probe_cache_secs = experiment.probe_cache_secs;
    let id = match id {
        Some(id) => id,
        None => {
            unfinished_of_the_name(db, &experiment.name, &mut note)?;
            // The version of the binary whose parties run.
            let env = Environment::detect(
                &caps.version,
                git_commit(exe),
                &experiment.emulator.to_string(),
                &experiment.host_cc.to_string(),
                protection_state,
            );
            let spec = serde_json::to_string(&file)
                .map_err(|e| Error::Run(format!("recording the experiment: {e}")))?;
            db.create_experiment(&experiment.name, &spec, planned_runs, &env)?
        }
    };
    Ok(Prepared {
        id,
        experiment,
        planned_runs,
        parties: BinaryParties {
            exe: exe.to_path_buf(),
            circuits,
            protection,
            sizes_buffers: caps.has_feature(FEATURE_BUFFER_SIZING),
            protocol_version: caps.protocol_version,
            repeat,
            probe_cache_secs,
            probe_caches,
            _key_dir: key_dir,
        },
    })
}

/// Where the `auto` evaluators of each condition keep their measurements, if the experiment
/// lets them (`probe_cache` above 0) and runs `auto`: removed at the end.
fn probe_caches(experiment: &Experiment) -> Result<Option<tempfile::TempDir>, Error> {
    if experiment.probe_cache_secs <= 0.0 || !experiment.transports.iter().any(|t| is_agreed(t)) {
        return Ok(None);
    }
    tempfile::Builder::new()
        .prefix("transputation-probe-caches-")
        .tempdir()
        .map(Some)
        .map_err(|source| Error::Io {
            context: "making a directory for the auto evaluators' probe caches".into(),
            source,
        })
}

impl Prepared {
    /// Runs every planned run not yet recorded (see [`Runner`]).
    pub fn run(&self, db: &mut Db, progress: bool) -> Result<Outcome, Error> {
        Runner {
            experiment: &self.experiment,
            experiment_id: self.id,
            launcher: &self.parties,
            db,
            progress,
        }
        .run()
    }
}

/// What the parties of one circuit start with.
#[derive(Debug, Clone)]
struct CircuitStart {
    /// The garbler's zero input, hex.
    garbler_input: String,
    /// The evaluator's zero input, hex.
    evaluator_input: String,
    /// The circuit's number of gates ([`Launcher::gates`]).
    gates: u64,
}

/// The parties: a `transputation` binary's garbler and evaluator with zero inputs.
pub struct BinaryParties {
    exe: PathBuf,
    /// Circuit → what its parties start with.
    circuits: HashMap<String, CircuitStart>,
    /// Protection for both parties (`None`: the binary offers none).
    protection: Option<Protection>,
    /// Whether the parties take --rtt-ms and --bandwidth (buffer sizing, paper §4.2).
    sizes_buffers: bool,
    /// The 2PC protocol version the parties speak, as the binary's capabilities state it.
    protocol_version: Option<u32>,
    /// Computations in each run's session: the evaluator gets `--repeat` above 1.
    repeat: u32,
    /// Seconds an `auto` evaluator may reuse a measurement (its `--probe-cache`).
    probe_cache_secs: f64,
    /// The directory of the `auto` evaluators' caches, one per condition, where they keep
    /// any.
    probe_caches: Option<tempfile::TempDir>,
    /// The one-time key's directory, removed at the end.
    _key_dir: Option<tempfile::TempDir>,
}

/// A directory name for a condition's label (labels are free text): its bytes' FNV-1a
/// hash, which is stable and tells labels apart.
fn label_dir(label: &str) -> String {
    let hash = label.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3)
    });
    format!("condition-{hash:016x}")
}

/// The parties' I/O timeout for a run limited to `limit`: a quarter of the limit short of
/// it (at most 90 s), so that a party waiting on a silent peer gives up, and says where, while
/// the run still records what it says; a limit of the I/O timeout itself left such a run
/// killed with no word from the party that waited (seen once in 1,300 runs: a garbler
/// waiting for the acknowledgement of its last bytes from an evaluator that had left).
fn party_io_timeout(limit: Duration) -> f64 {
    (limit.as_secs_f64() * 0.75).clamp(1.0, 90.0).floor()
}

impl Launcher for BinaryParties {
    fn circuit_parties(
        &self,
        cell: &Cell,
        link: &LinkRecord,
        server: SocketAddrV4,
        timeout: Duration,
    ) -> Result<(PartyCommand, PartyCommand), String> {
        let start = self
            .circuits
            .get(&cell.circuit)
            .ok_or_else(|| format!("no inputs prepared for {}", cell.circuit))?;
        let party = |role: Role, input: &str| {
            let (scheme, parallel) = scheme_and_parallel(&cell.scheme);
            let mut args =
                PartyArgs::new(role, server.into(), &cell.circuit, scheme, &cell.transport);
            args.parallel = parallel.map(str::to_string);
            if parallel == Some("auto") {
                args.threads = Some(transputation_contract::threads_of_two_parties_here());
            }
            args.input = input.into();
            args.timeout_secs = Some(party_io_timeout(timeout));
            args.protection = self.protection.clone();
            args.path = sizing(self.sizes_buffers, link);
            // The garbler serves what the session asks for; one computation needs no flag,
            // so that such runs work with parties that have none.
            if role == Role::Evaluator && self.repeat > 1 {
                args.repeat = Some(self.repeat);
            }
            let mut env = Vec::new();
            if role == Role::Evaluator && is_agreed(&cell.transport) {
                args.probe_cache_secs = Some(self.probe_cache_secs);
                if let Some(root) = &self.probe_caches {
                    let dir = root.path().join(label_dir(&cell.condition));
                    env.push(("XDG_CACHE_HOME".into(), dir.display().to_string()));
                }
            }
            PartyCommand {
                program: self.exe.clone(),
                args: args.to_argv(),
                env,
            }
        };
        Ok((
            party(Role::Garbler, &start.garbler_input),
            party(Role::Evaluator, &start.evaluator_input),
        ))
    }

    fn program_env(&self) -> Vec<(String, String)> {
        // The protection flags a garbler or evaluator of this experiment gets.
        let flags = self
            .protection
            .as_ref()
            .map(Protection::to_argv)
            .unwrap_or_default();
        vec![
            ("TRANSPUTATION".into(), self.exe.display().to_string()),
            ("TPB_PARTY_FLAGS".into(), flags.join(" ")),
        ]
    }

    fn protocol_version(&self) -> Option<u32> {
        self.protocol_version
    }

    fn gates(&self, circuit: &str) -> Option<u64> {
        self.circuits.get(circuit).map(|c| c.gates)
    }
}

/// The link as emulated (RTT ms, rate bits/s), for both parties to size their buffers for
/// it and the circuit's volume; none for a link of unlimited rate (the sizing needs both)
/// or parties that do not size buffers.
fn sizing(supported: bool, link: &LinkRecord) -> Option<(f64, u64)> {
    match link.rate_bps {
        Some(rate) if supported && rate > 0 => Some((link.rtt_us as f64 / 1e3, rate)),
        _ => None,
    }
}

/// Zero inputs for a party: one hex string of the right length per group it owns.
fn zero_input(circuit: &Circuit, party: Party) -> String {
    circuit
        .inputs()
        .iter()
        .filter(|g| g.party == party)
        .map(|g| "0".repeat((g.len as usize).div_ceil(4)))
        .collect::<Vec<_>>()
        .join(",")
}

/// What session protection the parties get: (protection, `on|off|unsupported`, key
/// directory).
fn protection(
    exe: &Path,
    caps: &Capabilities,
    wanted: bool,
) -> Result<(Option<Protection>, &'static str, Option<tempfile::TempDir>), Error> {
    let io = |context: &str| {
        let context = context.to_string();
        move |source| Error::Io { context, source }
    };
    if wanted && caps.protects_with("noise-psk") {
        let dir = tempfile::Builder::new()
            .prefix("transputation-testbed-")
            .tempdir()
            .map_err(io("making a directory for the experiment's key"))?;
        let key = dir.path().join("psk");
        let out = Command::new(exe)
            .args(["keygen", "--psk", "--out"])
            .arg(&key)
            .output()
            .map_err(io("making the experiment's pre-shared key"))?;
        if !out.status.success() {
            return Err(Error::Run(format!(
                "making the experiment's pre-shared key failed: {}",
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        return Ok((Some(Protection::PskFile(key)), "on", Some(dir)));
    }
    if !wanted && caps.protects_with("none") {
        return Ok((Some(Protection::Insecure), "off", None));
    }
    Ok((None, "unsupported", None))
}

/// The commit `exe` was built from, if it sits in a git work tree.
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

#[cfg(test)]
mod tests;
