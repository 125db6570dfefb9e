//! The results database's schema and its migrations.
//!
//! The schema's version is SQLite's `PRAGMA user_version`. [`MIGRATIONS`] lists the steps
//! from each version to the next; opening a file applies the steps it lacks, each in its
//! own transaction that also sets the version, so a file is always at one version or the
//! next, never between. A change of the schema is one more step at the end
//! ([`SCHEMA_VERSION`] follows from the list). Files of versions 1 and 2 were made by
//! `CREATE TABLE IF NOT EXISTS` of a later table shape, so a step that adds a column skips a
//! column that is there already.

use rusqlite::{params, Connection, TransactionBehavior};

/// One step of the schema, from the version before it to the next.
pub(super) enum Migration {
    /// Statements to run as they are.
    Sql(&'static str),
    /// Columns to add to a table (nullable, so that old rows read as unknown, or with a
    /// default that every old row truly had), each unless the table has it already.
    AddColumns {
        /// The table.
        table: &'static str,
        /// The new columns and their SQL types.
        columns: &'static [(&'static str, &'static str)],
    },
    /// A column to add to a table (nullable, so that old rows read as unknown), unless the
    /// table has it already.
    AddColumn {
        /// The table.
        table: &'static str,
        /// The new column.
        column: &'static str,
        /// Its SQL type.
        ty: &'static str,
    },
}

/// Version 1: the two tables.
const TABLES: &str = "
CREATE TABLE IF NOT EXISTS experiments (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    created_at TEXT NOT NULL DEFAULT (datetime('now')),
    finished_at TEXT,
    spec TEXT NOT NULL,
    planned_runs INTEGER NOT NULL,
    version TEXT NOT NULL,
    git_commit TEXT,
    kernel TEXT NOT NULL,
    cpu TEXT NOT NULL,
    host TEXT NOT NULL,
    emulator TEXT NOT NULL,
    protection TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY,
    experiment_id INTEGER NOT NULL REFERENCES experiments(id),
    circuit TEXT NOT NULL,
    scheme TEXT NOT NULL,
    transport TEXT NOT NULL,
    condition TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    rtt_us INTEGER NOT NULL,
    rate_bps INTEGER,
    loss REAL NOT NULL,
    jitter_us INTEGER NOT NULL,
    queue_bytes INTEGER,
    emulator TEXT NOT NULL,
    link_note TEXT,
    status TEXT NOT NULL CHECK (status IN ('ok', 'failed', 'timeout')),
    error TEXT,
    total_ms REAL,
    ot_ms REAL,
    garble_ms REAL,
    eval_ms REAL,
    transfer_ms REAL,
    wall_ms REAL,
    bytes_garbler_to_evaluator INTEGER,
    bytes_evaluator_to_garbler INTEGER,
    started_at TEXT NOT NULL DEFAULT (datetime('now')),
    garbler_report TEXT,
    evaluator_report TEXT,
    garbler_output TEXT,
    evaluator_output TEXT,
    UNIQUE (experiment_id, circuit, scheme, transport, condition, repetition)
);
CREATE INDEX IF NOT EXISTS runs_by_experiment ON runs(experiment_id);
";

/// `MIGRATIONS[v]` takes a file from version `v` to `v + 1`.
pub(super) const MIGRATIONS: &[Migration] = &[
    Migration::Sql(TABLES),
    // 2: the buffer the parties sized for the link (paper §4.2).
    Migration::AddColumn {
        table: "runs",
        column: "buffer_bytes",
        ty: "INTEGER",
    },
    // 3: the emulated hosts' default TCP congestion control; NULL for older experiments.
    Migration::AddColumn {
        table: "experiments",
        column: "host_cc",
        ty: "TEXT",
    },
    // 4: what the user waits for (report version 2); NULL for older runs and user programs.
    Migration::AddColumns {
        table: "runs",
        columns: &[
            ("connect_ms", "REAL"),
            ("handshake_ms", "REAL"),
            ("first_output_ms", "REAL"),
            ("paper_ms", "REAL"),
            ("garbler_round_trips", "INTEGER"),
            ("evaluator_round_trips", "INTEGER"),
        ],
    },
    // 5: sessions that stay open (report version 3): the computations of a run's one
    // session (every older run had one) and the evaluator's online time of the further
    // ones (NULL for one computation, older runs and user programs).
    Migration::AddColumns {
        table: "runs",
        columns: &[
            ("computations", "INTEGER NOT NULL DEFAULT 1"),
            ("online_ms", "REAL"),
            ("online_max_ms", "REAL"),
        ],
    },
    // 6: the 2PC protocol version of the run's parties (their binary's capabilities), whose
    // message flow sets a session's round trips; NULL for older runs, user programs and
    // binaries that do not state it.
    Migration::AddColumn {
        table: "runs",
        column: "protocol_version",
        ty: "INTEGER",
    },
    // 7: `auto` in the testbed: the transport as the experiment wrote it (`{bdp}`
    // templates; NULL for older runs, which ran what they wrote) and what auto chose and
    // predicted, and what its probing and agreement cost (NULL for fixed transports and
    // older runs).
    Migration::AddColumns {
        table: "runs",
        columns: &[
            ("transport_written", "TEXT"),
            ("auto_choice", "TEXT"),
            ("auto_predicted_ms", "REAL"),
            ("auto_probe_ms", "REAL"),
            ("auto_agree_ms", "REAL"),
        ],
    },
    // 8: the AES backend each party used (report version 5); NULL for older runs, user
    // programs and failed runs.
    Migration::AddColumns {
        table: "runs",
        columns: &[("garbler_backend", "TEXT"), ("evaluator_backend", "TEXT")],
    },
    // 9: the most memory each party held (report version 6); NULL for older runs, user
    // programs and failed runs.
    Migration::AddColumns {
        table: "runs",
        columns: &[
            ("garbler_peak_rss_bytes", "INTEGER"),
            ("evaluator_peak_rss_bytes", "INTEGER"),
        ],
    },
];

/// The schema version this build writes: the number of migrations.
pub const SCHEMA_VERSION: i64 = MIGRATIONS.len() as i64;

/// The file's schema version.
pub(super) fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row("PRAGMA user_version", [], |r| r.get(0))
}

/// Whether `table` has `column`.
pub(super) fn has_column(conn: &Connection, table: &str, column: &str) -> rusqlite::Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
        params![table, column],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

impl Migration {
    fn apply(&self, conn: &Connection) -> rusqlite::Result<()> {
        match *self {
            Migration::Sql(sql) => conn.execute_batch(sql),
            Migration::AddColumn { table, column, ty } => add_column(conn, table, column, ty),
            Migration::AddColumns { table, columns } => columns
                .iter()
                .try_for_each(|&(column, ty)| add_column(conn, table, column, ty)),
        }
    }
}

/// Adds a nullable `column` of type `ty` to `table`, unless it has it.
fn add_column(conn: &Connection, table: &str, column: &str, ty: &str) -> rusqlite::Result<()> {
    if has_column(conn, table, column)? {
        return Ok(());
    }
    conn.execute_batch(&format!("ALTER TABLE {table} ADD COLUMN {column} {ty}"))
}

/// Brings the file up to [`SCHEMA_VERSION`], one step per transaction. Each step reads the
/// version again inside its (immediate, so writing) transaction, so two processes opening
/// one old file at once apply every step once. The caller has refused newer files.
pub(super) fn migrate(conn: &mut Connection) -> rusqlite::Result<()> {
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let v = version(&tx)?;
        let Some(step) = usize::try_from(v).ok().and_then(|v| MIGRATIONS.get(v)) else {
            return Ok(());
        };
        step.apply(&tx)?;
        tx.pragma_update(None, "user_version", v + 1)?;
        tx.commit()?;
    }
}
