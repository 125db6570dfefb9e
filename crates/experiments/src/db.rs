//! The results database: one SQLite file (by default
//! `$TRANSPUTATION_RESULTS/results.sqlite`, else `$XDG_DATA_HOME/transputation/results.sqlite`,
//! else `~/.local/share/transputation/results.sqlite`) with two tables.
//!
//! ```sql
//! experiments(
//!   id INTEGER PRIMARY KEY, name TEXT, created_at TEXT (UTC, 'YYYY-MM-DD HH:MM:SS'),
//!   finished_at TEXT (NULL until every planned run is recorded),
//!   spec TEXT (the experiment as written, JSON: what --resume rebuilds the plan from),
//!   planned_runs INTEGER,
//!   version TEXT, git_commit TEXT, kernel TEXT, cpu TEXT, host TEXT,
//!   emulator TEXT (the backend actually used: netem or emu; the request until a link is up),
//!   host_cc TEXT (the default TCP congestion control in force in the parties' namespaces, as
//!                 read back there: cubic, reno, bbr, ...; the request, `system` included,
//!                 until a link is up; NULL: recorded before schema version 3, unknown),
//!   protection TEXT (on: Noise with a pre-shared key; off: --insecure; unsupported: the
//!                    parties have no session protection))
//! runs(
//!   id INTEGER PRIMARY KEY, experiment_id INTEGER REFERENCES experiments,
//!   circuit TEXT, scheme TEXT ('program' for a user program, whose name is in circuit),
//!   transport TEXT, condition TEXT (label), repetition INTEGER (0-based),
//!   rtt_us INTEGER, rate_bps INTEGER (NULL: unlimited), loss REAL (fraction), jitter_us INTEGER,
//!   queue_bytes INTEGER, emulator TEXT, link_note TEXT (e.g. the rate cap),
//!   status TEXT ('ok' | 'failed' | 'timeout'), error TEXT,
//!   total_ms REAL   -- the garbler's protocol time: from the connection until it received the
//!                   -- evaluator's last message (the output), an application-level
//!                   -- acknowledgement; for a user program, wall time of the pair
//!   ot_ms REAL, garble_ms REAL, eval_ms REAL,
//!   transfer_ms REAL -- total − OT − garbling − evaluation, at least 0: waiting on the network
//!   wall_ms REAL     -- from starting the client until both processes exited
//!   bytes_garbler_to_evaluator INTEGER, bytes_evaluator_to_garbler INTEGER,
//!   buffer_bytes INTEGER -- the socket / UDT / QUIC buffer the parties sized for the link's
//!                        -- RTT and rate and the circuit's volume (paper §4.2), if they did
//!   connect_ms REAL  -- the evaluator's connect call until the transport's channel was up
//!   handshake_ms REAL -- the evaluator's protected handshake (0 without protection): it rides
//!                    -- in the session's first exchange, so it is inside total_ms
//!   first_output_ms REAL -- the evaluator's process start until it held the output: what
//!                    -- its user waits for (loading, set-up and connecting included)
//!   paper_ms REAL    -- the paper's measure (garbling, the tables' transfer and the output;
//!                    -- OT and set-up excluded), the garbler's: from the end of its OT until
//!                    -- the output arrived
//!   garbler_round_trips INTEGER, evaluator_round_trips INTEGER -- times each waited for the
//!                    -- other (2PC's message table: 3 and 2)
//!   computations INTEGER NOT NULL DEFAULT 1 -- computations of the circuit in the run's one
//!                    -- session (`--repeat`); the columns above are computation 1's
//!   online_ms REAL   -- the median over computations 2, 3, ... of the evaluator's time from
//!                    -- being given a computation's input until it held its output (NULL
//!                    -- with one computation)
//!   online_max_ms REAL -- their maximum
//!   protocol_version INTEGER -- the 2PC protocol version of the parties (`PROTOCOL_VERSION`
//!                    -- of transputation-2pc, from their binary's capabilities), whose
//!                    -- message flow sets the round trips above; NULL for user programs
//!                    -- and for binaries that do not state it
//!   transport_written TEXT -- the transport as the experiment wrote it, where `transport`
//!                    -- is what ran: `quic:iw={bdp}` beside `quic:iw=2500000` (reports
//!                    -- group by it; NULL in rows older than schema version 7, which ran
//!                    -- what they wrote: read COALESCE(transport_written, transport))
//!   auto_choice TEXT -- for `auto`, the transport the parties agreed on (the evaluator's
//!                    -- report's `auto.chosen`); NULL for a transport given by name
//!   auto_predicted_ms REAL -- the model's prediction of the choice's time to the output
//!   auto_probe_ms REAL -- the evaluator's time measuring the path (0 from its cache)
//!   auto_agree_ms REAL -- its time from deciding to its connection over the choice
//!   garbler_backend TEXT, evaluator_backend TEXT -- the AES implementation each party
//!                    -- garbled or evaluated with (their reports' `backend`); NULL for user
//!                    -- programs, failed runs and rows older than schema version 8
//!   garbler_peak_rss_bytes INTEGER, evaluator_peak_rss_bytes INTEGER -- the most memory
//!                    -- each party's process held (their reports' `peak_rss_bytes`); NULL
//!                    -- for user programs, failed runs and rows older than version 9
//!   started_at TEXT, garbler_report TEXT, evaluator_report TEXT (their JSON reports, one
//!                    -- line per computation),
//!   garbler_output TEXT, evaluator_output TEXT (standard output and error, last 64 KiB),
//!   UNIQUE(experiment_id, circuit, scheme, transport, condition, repetition))
//! ```
//!
//! Every run is written in its own transaction, so an interrupted experiment keeps every
//! finished run, and the unique key makes a resumed one unable to record a run twice. The
//! file is in WAL mode, so a report can be read while an experiment writes. The schema is
//! versioned (`PRAGMA user_version`, now [`SCHEMA_VERSION`]); an older file is brought up to
//! date by the migrations in `schema` when it is opened (`runs.buffer_bytes` came in version
//! 2, `experiments.host_cc` in 3, the columns from `connect_ms` to `evaluator_round_trips`
//! in 4 with report version 2, NULL in older rows and for user programs; `computations`,
//! `online_ms` and `online_max_ms` in 5 with report version 3, older runs having had one
//! computation; `protocol_version` in 6, NULL in older rows; `transport_written` and the
//! `auto_*` columns in 7, NULL in older rows; `garbler_backend` and `evaluator_backend` in 8
//! with report version 5, NULL in older rows; `garbler_peak_rss_bytes` and
//! `evaluator_peak_rss_bytes` in 9 with report version 6, NULL in older rows), and a newer
//! one is refused;
//! [`Db::open_read_only`] never writes, so it refuses an older one too. Rows are read by
//! column name, so the order of the columns in a file does not matter.

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::{params, params_from_iter, Connection, Row};
use serde::Serialize;

use crate::experiment::Cell;
use crate::Error;

mod calibration;
mod schema;

pub use calibration::CalibrationCell;
pub use schema::SCHEMA_VERSION;

/// Where an experiment ran and with what.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Environment {
    /// The tool's version.
    pub version: String,
    /// The source commit, where known.
    pub git_commit: Option<String>,
    /// `uname -r`.
    pub kernel: String,
    /// The CPU model.
    pub cpu: String,
    /// The host name.
    pub host: String,
    /// The link emulator.
    pub emulator: String,
    /// The default TCP congestion control of the emulated hosts (`cubic`); `None` for an
    /// experiment recorded before it was.
    pub host_cc: Option<String>,
    /// `on`, `off` or `unsupported`.
    pub protection: String,
}

impl Environment {
    /// This machine's kernel, CPU and host, with what the caller knows (the emulator and the
    /// hosts' congestion control as requested, until a link is up).
    pub fn detect(
        version: &str,
        git_commit: Option<String>,
        emulator: &str,
        host_cc: &str,
        protection: &str,
    ) -> Self {
        let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
        let cpuinfo = read("/proc/cpuinfo");
        let cpu = cpuinfo
            .lines()
            .find_map(|l| {
                let (k, v) = l.split_once(':')?;
                (k.trim() == "model name").then(|| v.trim().to_string())
            })
            .unwrap_or_else(|| "unknown".into());
        let cores = cpuinfo
            .lines()
            .filter(|l| l.starts_with("processor"))
            .count();
        Environment {
            version: version.into(),
            git_commit,
            kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
            cpu: format!("{cpu} ({cores} cores)"),
            host: read("/proc/sys/kernel/hostname").trim().to_string(),
            emulator: emulator.into(),
            host_cc: Some(host_cc.into()),
            protection: protection.into(),
        }
    }
}

/// An experiment's row.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExperimentRow {
    /// Its id (what `--resume` and `report` take).
    pub id: i64,
    /// Its name.
    pub name: String,
    /// When it was created (UTC).
    pub created_at: String,
    /// When its last planned run was recorded (UTC).
    pub finished_at: Option<String>,
    /// The experiment as written (JSON of [`crate::experiment::ExperimentFile`]).
    pub spec: String,
    /// How many runs its plan has.
    pub planned_runs: i64,
    /// Where it ran.
    pub environment: Environment,
    /// How many runs are recorded.
    pub recorded_runs: i64,
}

/// What an experiment's recorded runs cover ([`Db::runs_covers`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RunsCover {
    /// The circuits (and user programs) of its runs, in the order first recorded.
    pub circuits: Vec<String>,
    /// Its transports as the experiment wrote them ([`RunRecord::transport_as_written`]),
    /// in the order first recorded.
    pub transports: Vec<String>,
    /// How many of its runs failed or timed out.
    pub not_ok: i64,
}

/// How a run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    /// Both parties finished and reported.
    Ok,
    /// A party failed (its error is kept).
    Failed,
    /// The per-run limit passed; both parties were killed.
    Timeout,
}

impl Status {
    /// Its name in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::Failed => "failed",
            Status::Timeout => "timeout",
        }
    }

    fn parse(s: &str) -> Status {
        match s {
            "ok" => Status::Ok,
            "timeout" => Status::Timeout,
            _ => Status::Failed,
        }
    }
}

/// The link a run crossed, as emulated.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct LinkRecord {
    /// Round-trip time added, µs.
    pub rtt_us: u64,
    /// Rate, bits per second (None: unlimited).
    pub rate_bps: Option<u64>,
    /// Loss probability each way.
    pub loss: f64,
    /// Jitter, µs.
    pub jitter_us: u64,
    /// Bottleneck queue, bytes.
    pub queue_bytes: Option<u64>,
    /// The backend.
    pub emulator: String,
    /// How the emulated link differs from the request (a rate cap), if it does.
    pub note: Option<String>,
}

/// One run: the cell, the link, the outcome and the measurements.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunRecord {
    /// The cell.
    pub cell: Cell,
    /// The repetition (0-based).
    pub repetition: u32,
    /// The link.
    pub link: LinkRecord,
    /// How it ended.
    pub status: Status,
    /// What went wrong, for failures and timeouts.
    pub error: Option<String>,
    /// Protocol time (see the module docs), ms.
    pub total_ms: Option<f64>,
    /// Oblivious transfer, ms (the evaluator's).
    pub ot_ms: Option<f64>,
    /// Garbling, ms (the garbler's).
    pub garble_ms: Option<f64>,
    /// Evaluation, ms (the evaluator's).
    pub eval_ms: Option<f64>,
    /// Total − OT − garbling − evaluation, at least 0, ms.
    pub transfer_ms: Option<f64>,
    /// Client start to both exited, ms.
    pub wall_ms: Option<f64>,
    /// Bytes from garbler to evaluator.
    pub bytes_garbler_to_evaluator: Option<u64>,
    /// Bytes from evaluator to garbler.
    pub bytes_evaluator_to_garbler: Option<u64>,
    /// The buffer size the parties chose for the link and the circuit, bytes.
    pub buffer_bytes: Option<u64>,
    /// The evaluator's connect call until the transport's channel was established, ms.
    pub connect_ms: Option<f64>,
    /// The evaluator's handshake, ms (inside `total_ms`: it rides in the first exchange).
    pub handshake_ms: Option<f64>,
    /// The evaluator's process start until it held the output, ms.
    pub first_output_ms: Option<f64>,
    /// The paper's measure, the garbler's: from the end of its OT until the output
    /// arrived, ms (see the module docs).
    pub paper_ms: Option<f64>,
    /// Times the garbler waited for the evaluator.
    pub garbler_round_trips: Option<u32>,
    /// Times the evaluator waited for the garbler.
    pub evaluator_round_trips: Option<u32>,
    /// Computations of the circuit in the run's one session (`--repeat`); the times and
    /// bytes above are computation 1's. 1 for user programs.
    pub computations: u32,
    /// The median of the evaluator's online time (a computation's input given until its
    /// output held) over computations 2, 3, ...; `None` with one computation, ms.
    pub online_ms: Option<f64>,
    /// The maximum of those online times, ms.
    pub online_max_ms: Option<f64>,
    /// The 2PC protocol version of the run's parties, as their binary's capabilities state
    /// it; `None` for user programs and binaries that do not.
    pub protocol_version: Option<u32>,
    /// The transport as the experiment wrote it (`quic:iw={bdp}`), where [`Cell::transport`]
    /// is what ran; `None` for a run recorded before schema version 7.
    pub transport_written: Option<String>,
    /// What `auto` chose (the evaluator's report's `auto.chosen`); `None` for a transport
    /// given by name.
    pub auto_choice: Option<String>,
    /// The model's predicted time to the output over that choice, ms.
    pub auto_predicted_ms: Option<f64>,
    /// The evaluator's time measuring the path, ms (0 where it had it from its cache).
    pub auto_probe_ms: Option<f64>,
    /// The evaluator's time from deciding to its connection over the choice, ms.
    pub auto_agree_ms: Option<f64>,
    /// The AES backend the garbler used (its report's `backend`).
    pub garbler_backend: Option<String>,
    /// The AES backend the evaluator used.
    pub evaluator_backend: Option<String>,
    /// The most memory the garbler's process held, bytes (its report's `peak_rss_bytes`).
    pub garbler_peak_rss_bytes: Option<u64>,
    /// The most memory the evaluator's process held, bytes.
    pub evaluator_peak_rss_bytes: Option<u64>,
    /// The garbler's JSON reports, one line per computation.
    pub garbler_report: Option<String>,
    /// The evaluator's JSON reports, one line per computation.
    pub evaluator_report: Option<String>,
    /// The garbler's (server's) output, for user programs and failures.
    pub garbler_output: Option<String>,
    /// The evaluator's (client's) output, for user programs and failures.
    pub evaluator_output: Option<String>,
}

impl RunRecord {
    /// A run that produced no measurement.
    pub fn failed(
        cell: Cell,
        repetition: u32,
        link: LinkRecord,
        status: Status,
        error: String,
    ) -> Self {
        RunRecord {
            status,
            error: Some(error),
            ..RunRecord::ok(cell, repetition, link)
        }
    }

    /// The transport as the experiment wrote it: what reports, failure tables and plots
    /// group by (one column for `quic:iw={bdp}` across the conditions).
    pub fn transport_as_written(&self) -> &str {
        self.transport_written
            .as_deref()
            .unwrap_or(&self.cell.transport)
    }

    /// A successful run, its measurements and outputs not filled in yet.
    pub fn ok(cell: Cell, repetition: u32, link: LinkRecord) -> Self {
        RunRecord {
            cell,
            repetition,
            link,
            status: Status::Ok,
            error: None,
            total_ms: None,
            ot_ms: None,
            garble_ms: None,
            eval_ms: None,
            transfer_ms: None,
            wall_ms: None,
            bytes_garbler_to_evaluator: None,
            bytes_evaluator_to_garbler: None,
            buffer_bytes: None,
            connect_ms: None,
            handshake_ms: None,
            first_output_ms: None,
            paper_ms: None,
            garbler_round_trips: None,
            evaluator_round_trips: None,
            computations: 1,
            online_ms: None,
            online_max_ms: None,
            protocol_version: None,
            transport_written: None,
            auto_choice: None,
            auto_predicted_ms: None,
            auto_probe_ms: None,
            auto_agree_ms: None,
            garbler_backend: None,
            evaluator_backend: None,
            garbler_peak_rss_bytes: None,
            evaluator_peak_rss_bytes: None,
            garbler_report: None,
            evaluator_report: None,
            garbler_output: None,
            evaluator_output: None,
        }
    }
}

/// The results database.
#[derive(Debug)]
pub struct Db {
    conn: Connection,
}

impl Db {
    /// The cells of successful one-computation runs on shaped links, with the path, the
    /// transport and `total_ms + connect_ms` of each run: what `select --calibrate` fits.
    pub fn calibration_cells(&self) -> Result<Vec<CalibrationCell>, Error> {
        calibration::cells(&self.conn)
    }
}

fn db_err(context: impl Into<String>) -> impl FnOnce(rusqlite::Error) -> Error {
    let context = context.into();
    move |source| Error::Database { context, source }
}

fn to_i64(v: u64) -> i64 {
    i64::try_from(v).unwrap_or(i64::MAX)
}

/// `$TRANSPUTATION_RESULTS/results.sqlite` (the directory `scripts/main-job.sh` writes its
/// results to), else `$XDG_DATA_HOME/transputation/results.sqlite`, else
/// `$HOME/.local/share/...`, else `./transputation-results.sqlite`.
pub fn default_path() -> PathBuf {
    let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = non_empty("TRANSPUTATION_RESULTS") {
        return Path::new(&d).join("results.sqlite");
    }
    if let Some(d) = non_empty("XDG_DATA_HOME") {
        return Path::new(&d).join("transputation/results.sqlite");
    }
    if let Some(h) = non_empty("HOME") {
        return Path::new(&h).join(".local/share/transputation/results.sqlite");
    }
    PathBuf::from("transputation-results.sqlite")
}

impl Db {
    /// Opens (creating it and its directory if need be) the database at `path`.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|source| Error::Io {
                context: format!("creating {}", dir.display()),
                source,
            })?;
        }
        let ctx = format!("opening the results database {}", path.display());
        let conn = Connection::open(path).map_err(db_err(ctx.clone()))?;
        Self::init(conn, path, &ctx)
    }

    /// Opens the existing database at `path` for reading only: SQLite refuses every write
    /// through it, so it never creates, migrates or changes the file (what a viewer such as
    /// the web UI needs: it may look at a file that an experiment is writing). A file of
    /// another schema version than [`SCHEMA_VERSION`] is refused ([`Error::Schema`]):
    /// bringing an older one up to date is a write, which [`Db::open`] does.
    pub fn open_read_only(path: &Path) -> Result<Self, Error> {
        use rusqlite::OpenFlags;
        let ctx = format!("opening the results database {}", path.display());
        // No SQLITE_OPEN_CREATE: a missing file is an error, not a new empty database.
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags).map_err(db_err(ctx.clone()))?;
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(db_err(ctx.clone()))?;
        let found = schema::version(&conn).map_err(db_err(ctx))?;
        if found != SCHEMA_VERSION {
            return Err(Error::Schema {
                path: path.to_path_buf(),
                found,
                supported: SCHEMA_VERSION,
            });
        }
        Ok(Db { conn })
    }

    /// A database in memory (for tests and dry runs).
    pub fn in_memory() -> Result<Self, Error> {
        let conn = Connection::open_in_memory().map_err(db_err("opening a database in memory"))?;
        Self::init(conn, Path::new(":memory:"), "a database in memory")
    }

    fn init(mut conn: Connection, path: &Path, ctx: &str) -> Result<Self, Error> {
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .map_err(db_err(ctx))?;
        // WAL: readers (a report, a test watching progress) never block the writer.
        let _: String = conn
            .query_row("PRAGMA journal_mode=WAL", [], |r| r.get(0))
            .map_err(db_err(ctx))?;
        let version = schema::version(&conn).map_err(db_err(ctx))?;
        if version > SCHEMA_VERSION {
            return Err(Error::Schema {
                path: path.to_path_buf(),
                found: version,
                supported: SCHEMA_VERSION,
            });
        }
        schema::migrate(&mut conn).map_err(db_err(format!(
            "{ctx}: bringing its schema from version {version} to {SCHEMA_VERSION}"
        )))?;
        Ok(Db { conn })
    }

    /// Records a new experiment; returns its id.
    pub fn create_experiment(
        &self,
        name: &str,
        spec_json: &str,
        planned_runs: usize,
        env: &Environment,
    ) -> Result<i64, Error> {
        self.conn
            .execute(
                "INSERT INTO experiments (name, spec, planned_runs, version, git_commit, kernel, \
                 cpu, host, emulator, protection, host_cc) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, \
                 ?8, ?9, ?10, ?11)",
                params![
                    name,
                    spec_json,
                    planned_runs as i64,
                    env.version,
                    env.git_commit,
                    env.kernel,
                    env.cpu,
                    env.host,
                    env.emulator,
                    env.protection,
                    env.host_cc
                ],
            )
            .map_err(db_err("recording the experiment"))?;
        Ok(self.conn.last_insert_rowid())
    }

    /// Records what the first link was built with: the emulator backend actually used and
    /// the default TCP congestion control in force in the parties' namespaces.
    pub fn set_link_environment(
        &self,
        id: i64,
        emulator: &str,
        host_cc: &str,
    ) -> Result<(), Error> {
        self.conn
            .execute(
                "UPDATE experiments SET emulator = ?1, host_cc = ?2 WHERE id = ?3",
                params![emulator, host_cc, id],
            )
            .map_err(db_err(
                "recording the emulator and the hosts' TCP congestion control",
            ))?;
        Ok(())
    }

    /// Marks the experiment finished if every planned run is recorded; returns whether it is.
    pub fn finish_if_complete(&self, id: i64) -> Result<bool, Error> {
        let n = self
            .conn
            .execute(
                "UPDATE experiments SET finished_at = datetime('now') WHERE id = ?1 AND \
                 finished_at IS NULL AND (SELECT count(*) FROM runs WHERE experiment_id = ?1) \
                 >= planned_runs",
                params![id],
            )
            .map_err(db_err("marking the experiment finished"))?;
        Ok(n > 0
            || self
                .experiment(id)?
                .is_some_and(|e| e.finished_at.is_some()))
    }

    fn experiment_rows(&self, filter: &str, arg: Option<i64>) -> Result<Vec<ExperimentRow>, Error> {
        let sql = format!(
            "SELECT e.id, e.name, e.created_at, e.finished_at, e.spec, e.planned_runs, e.version, \
             e.git_commit, e.kernel, e.cpu, e.host, e.emulator, e.protection, \
             (SELECT count(*) FROM runs r WHERE r.experiment_id = e.id) AS recorded_runs, \
             e.host_cc \
             FROM experiments e {filter} ORDER BY e.id"
        );
        self.read_rows(
            "reading the experiments",
            &sql,
            params_from_iter(arg),
            read_experiment,
        )
    }

    /// Every experiment, oldest first.
    pub fn experiments(&self) -> Result<Vec<ExperimentRow>, Error> {
        self.experiment_rows("", None)
    }

    /// The experiment with this id.
    pub fn experiment(&self, id: i64) -> Result<Option<ExperimentRow>, Error> {
        Ok(self
            .experiment_rows("WHERE e.id = ?1", Some(id))?
            .into_iter()
            .next())
    }

    /// The experiment named by `which`: an id, a name (the latest of that name), or
    /// `None` for the latest of all.
    pub fn find_experiment(&self, which: Option<&str>) -> Result<Option<ExperimentRow>, Error> {
        let all = self.experiments()?;
        Ok(match which {
            None => all.into_iter().last(),
            Some(w) => match w.parse::<i64>() {
                Ok(id) => all.into_iter().find(|e| e.id == id),
                Err(_) => all.into_iter().rev().find(|e| e.name == w),
            },
        })
    }

    /// What each experiment's recorded runs cover, by the experiment's id (one without runs
    /// is not there): for a listing that shows and filters the experiments without reading
    /// their runs.
    pub fn runs_covers(&self) -> Result<BTreeMap<i64, RunsCover>, Error> {
        let groups: Vec<(i64, String, String, i64)> = self.read_rows(
            "reading what the experiments' runs cover",
            "SELECT experiment_id, circuit, COALESCE(transport_written, transport) AS written, \
             sum(status != 'ok') AS not_ok, min(id) AS first FROM runs \
             GROUP BY experiment_id, circuit, written ORDER BY experiment_id, first",
            [],
            |r| {
                Ok((
                    r.get("experiment_id")?,
                    r.get("circuit")?,
                    r.get("written")?,
                    r.get("not_ok")?,
                ))
            },
        )?;
        let mut covers: BTreeMap<i64, RunsCover> = BTreeMap::new();
        for (id, circuit, transport, not_ok) in groups {
            let c = covers.entry(id).or_default();
            crate::stats::index_or_push(&mut c.circuits, circuit);
            crate::stats::index_or_push(&mut c.transports, transport);
            c.not_ok += not_ok;
        }
        Ok(covers)
    }

    /// The (cell, repetition) keys already recorded for an experiment.
    pub fn recorded(&self, id: i64) -> Result<HashSet<(Cell, u32)>, Error> {
        self.read_rows(
            "reading the recorded runs",
            "SELECT circuit, scheme, transport, condition, repetition FROM runs \
             WHERE experiment_id = ?1",
            params![id],
            |r| Ok((read_cell(r)?, r.get::<_, u32>("repetition")?)),
        )
    }

    /// When each run of an experiment was recorded (`started_at`, the time of its insert),
    /// as Unix seconds, in the order recorded: what an estimate of the time left reads.
    pub fn record_times(&self, id: i64) -> Result<Vec<i64>, Error> {
        self.read_rows(
            "reading when the runs were recorded",
            "SELECT CAST(strftime('%s', started_at) AS INTEGER) AS t FROM runs \
             WHERE experiment_id = ?1 ORDER BY id",
            params![id],
            |r| r.get::<_, Option<i64>>("t").map(Option::unwrap_or_default),
        )
    }

    /// Records one run, in its own transaction.
    pub fn insert_run(&mut self, experiment_id: i64, r: &RunRecord) -> Result<(), Error> {
        let tx = self
            .conn
            .transaction()
            .map_err(db_err("starting a transaction"))?;
        tx.execute(
            "INSERT INTO runs (experiment_id, circuit, scheme, transport, condition, repetition, \
             rtt_us, rate_bps, loss, jitter_us, queue_bytes, emulator, link_note, status, error, \
             total_ms, ot_ms, garble_ms, eval_ms, transfer_ms, wall_ms, \
             bytes_garbler_to_evaluator, bytes_evaluator_to_garbler, garbler_report, \
             evaluator_report, garbler_output, evaluator_output, buffer_bytes, connect_ms, \
             handshake_ms, first_output_ms, paper_ms, garbler_round_trips, \
             evaluator_round_trips, computations, online_ms, online_max_ms, protocol_version, \
             transport_written, auto_choice, auto_predicted_ms, auto_probe_ms, auto_agree_ms, \
             garbler_backend, evaluator_backend, garbler_peak_rss_bytes, \
             evaluator_peak_rss_bytes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18, ?19, ?20, ?21, ?22, ?23, ?24, ?25, ?26, ?27, ?28, ?29, ?30, ?31, ?32, \
             ?33, ?34, ?35, ?36, ?37, ?38, ?39, ?40, ?41, ?42, ?43, ?44, ?45, ?46, ?47)",
            params![
                experiment_id,
                r.cell.circuit,
                r.cell.scheme,
                r.cell.transport,
                r.cell.condition,
                r.repetition,
                to_i64(r.link.rtt_us),
                r.link.rate_bps.map(to_i64),
                r.link.loss,
                to_i64(r.link.jitter_us),
                r.link.queue_bytes.map(to_i64),
                r.link.emulator,
                r.link.note,
                r.status.as_str(),
                r.error,
                r.total_ms,
                r.ot_ms,
                r.garble_ms,
                r.eval_ms,
                r.transfer_ms,
                r.wall_ms,
                r.bytes_garbler_to_evaluator.map(to_i64),
                r.bytes_evaluator_to_garbler.map(to_i64),
                r.garbler_report,
                r.evaluator_report,
                r.garbler_output,
                r.evaluator_output,
                r.buffer_bytes.map(to_i64),
                r.connect_ms,
                r.handshake_ms,
                r.first_output_ms,
                r.paper_ms,
                r.garbler_round_trips,
                r.evaluator_round_trips,
                r.computations,
                r.online_ms,
                r.online_max_ms,
                r.protocol_version,
                r.transport_written,
                r.auto_choice,
                r.auto_predicted_ms,
                r.auto_probe_ms,
                r.auto_agree_ms,
                r.garbler_backend,
                r.evaluator_backend,
                r.garbler_peak_rss_bytes.map(to_i64),
                r.evaluator_peak_rss_bytes.map(to_i64),
            ],
        )
        .map_err(db_err(format!(
            "recording run {} {} {} {} #{}",
            r.cell.circuit, r.cell.scheme, r.cell.transport, r.cell.condition, r.repetition
        )))?;
        tx.commit().map_err(db_err("committing a run"))
    }

    /// The runs of an experiment, in the order they were recorded.
    pub fn runs(&self, experiment_id: i64) -> Result<Vec<RunRecord>, Error> {
        self.read_rows(
            "reading the runs",
            "SELECT circuit, scheme, transport, condition, repetition, rtt_us, rate_bps, loss, \
             jitter_us, queue_bytes, emulator, link_note, status, error, total_ms, ot_ms, \
             garble_ms, eval_ms, transfer_ms, wall_ms, bytes_garbler_to_evaluator, \
             bytes_evaluator_to_garbler, garbler_report, evaluator_report, garbler_output, \
             evaluator_output, buffer_bytes, connect_ms, handshake_ms, first_output_ms, \
             paper_ms, garbler_round_trips, evaluator_round_trips, computations, online_ms, \
             online_max_ms, protocol_version, transport_written, auto_choice, \
             auto_predicted_ms, auto_probe_ms, auto_agree_ms, garbler_backend, \
             evaluator_backend, garbler_peak_rss_bytes, evaluator_peak_rss_bytes FROM runs \
             WHERE experiment_id = ?1 ORDER BY id",
            params![experiment_id],
            read_run,
        )
    }

    /// Every row of the query `sql`, each read by `read`; `what` names the reading in an
    /// error.
    fn read_rows<T, Rows: FromIterator<T>>(
        &self,
        what: &str,
        sql: &str,
        params: impl rusqlite::Params,
        read: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Rows, Error> {
        let mut st = self.conn.prepare(sql).map_err(db_err(what))?;
        let rows = st.query_map(params, read).map_err(db_err(what))?;
        rows.collect::<Result<Rows, _>>().map_err(db_err(what))
    }
}

/// A run's cell, from the columns of the same names.
fn read_cell(r: &Row<'_>) -> rusqlite::Result<Cell> {
    Ok(Cell {
        circuit: r.get("circuit")?,
        scheme: r.get("scheme")?,
        transport: r.get("transport")?,
        condition: r.get("condition")?,
    })
}

/// A count or size, stored as SQLite's signed integer (a negative one reads as 0).
fn read_u64(r: &Row<'_>, column: &str) -> rusqlite::Result<Option<u64>> {
    Ok(r.get::<_, Option<i64>>(column)?
        .map(|x| u64::try_from(x).unwrap_or(0)))
}

/// An experiment's row, with its `recorded_runs` counted.
fn read_experiment(r: &Row<'_>) -> rusqlite::Result<ExperimentRow> {
    Ok(ExperimentRow {
        id: r.get("id")?,
        name: r.get("name")?,
        created_at: r.get("created_at")?,
        finished_at: r.get("finished_at")?,
        spec: r.get("spec")?,
        planned_runs: r.get("planned_runs")?,
        environment: Environment {
            version: r.get("version")?,
            git_commit: r.get("git_commit")?,
            kernel: r.get("kernel")?,
            cpu: r.get("cpu")?,
            host: r.get("host")?,
            emulator: r.get("emulator")?,
            host_cc: r.get("host_cc")?,
            protection: r.get("protection")?,
        },
        recorded_runs: r.get("recorded_runs")?,
    })
}

/// A run's row.
fn read_run(r: &Row<'_>) -> rusqlite::Result<RunRecord> {
    Ok(RunRecord {
        cell: read_cell(r)?,
        repetition: r.get("repetition")?,
        link: LinkRecord {
            rtt_us: read_u64(r, "rtt_us")?.unwrap_or(0),
            rate_bps: read_u64(r, "rate_bps")?,
            loss: r.get("loss")?,
            jitter_us: read_u64(r, "jitter_us")?.unwrap_or(0),
            queue_bytes: read_u64(r, "queue_bytes")?,
            emulator: r.get("emulator")?,
            note: r.get("link_note")?,
        },
        status: Status::parse(&r.get::<_, String>("status")?),
        error: r.get("error")?,
        total_ms: r.get("total_ms")?,
        ot_ms: r.get("ot_ms")?,
        garble_ms: r.get("garble_ms")?,
        eval_ms: r.get("eval_ms")?,
        transfer_ms: r.get("transfer_ms")?,
        wall_ms: r.get("wall_ms")?,
        bytes_garbler_to_evaluator: read_u64(r, "bytes_garbler_to_evaluator")?,
        bytes_evaluator_to_garbler: read_u64(r, "bytes_evaluator_to_garbler")?,
        garbler_report: r.get("garbler_report")?,
        evaluator_report: r.get("evaluator_report")?,
        garbler_output: r.get("garbler_output")?,
        evaluator_output: r.get("evaluator_output")?,
        buffer_bytes: read_u64(r, "buffer_bytes")?,
        connect_ms: r.get("connect_ms")?,
        handshake_ms: r.get("handshake_ms")?,
        first_output_ms: r.get("first_output_ms")?,
        paper_ms: r.get("paper_ms")?,
        garbler_round_trips: r.get("garbler_round_trips")?,
        evaluator_round_trips: r.get("evaluator_round_trips")?,
        computations: r.get("computations")?,
        online_ms: r.get("online_ms")?,
        online_max_ms: r.get("online_max_ms")?,
        protocol_version: r.get("protocol_version")?,
        transport_written: r.get("transport_written")?,
        auto_choice: r.get("auto_choice")?,
        auto_predicted_ms: r.get("auto_predicted_ms")?,
        auto_probe_ms: r.get("auto_probe_ms")?,
        auto_agree_ms: r.get("auto_agree_ms")?,
        garbler_backend: r.get("garbler_backend")?,
        evaluator_backend: r.get("evaluator_backend")?,
        garbler_peak_rss_bytes: read_u64(r, "garbler_peak_rss_bytes")?,
        evaluator_peak_rss_bytes: read_u64(r, "evaluator_peak_rss_bytes")?,
    })
}

#[cfg(test)]
mod tests;
