//! The results database's tests: a round trip of every field, and files of older schemas
//! brought up to date.

use super::*;

pub(crate) fn env() -> Environment {
    Environment::detect("0.1.0", Some("abc123".into()), "emu", "system", "on")
}

pub(crate) fn ok_run(transport: &str, rep: u32, total: f64) -> RunRecord {
    RunRecord {
        total_ms: Some(total),
        ot_ms: Some(1.5),
        garble_ms: Some(2.0),
        eval_ms: Some(3.0),
        transfer_ms: Some(total - 6.5),
        wall_ms: Some(total + 40.0),
        bytes_garbler_to_evaluator: Some(1 << 20),
        bytes_evaluator_to_garbler: Some(4096),
        buffer_bytes: Some(3 << 20),
        connect_ms: Some(0.5),
        handshake_ms: Some(total / 3.0),
        first_output_ms: Some(total + 30.0),
        paper_ms: Some(total - 2.0),
        garbler_round_trips: Some(3),
        evaluator_round_trips: Some(2),
        computations: 5,
        online_ms: Some(total / 4.0),
        online_max_ms: Some(total / 2.0),
        protocol_version: Some(5),
        transport_written: Some(format!("{transport}:w={{bdp}}")),
        auto_choice: Some("quic:cc=bbr,iw=2500000".into()),
        auto_predicted_ms: Some(total * 0.9),
        auto_probe_ms: Some(140.5),
        auto_agree_ms: Some(0.75),
        garbler_backend: Some("vaes256".into()),
        evaluator_backend: Some("aes-ni".into()),
        garbler_peak_rss_bytes: Some(190 << 20),
        evaluator_peak_rss_bytes: Some(35 << 20),
        garbler_report: Some("{\"total_ms\": 1}".into()),
        ..RunRecord::ok(
            Cell {
                circuit: "aes128".into(),
                scheme: "ideal".into(),
                transport: transport.into(),
                condition: "cw-lan".into(),
            },
            rep,
            LinkRecord {
                rtt_us: 300,
                rate_bps: Some(100_000_000),
                loss: 0.001,
                jitter_us: 0,
                queue_bytes: Some(250_000),
                emulator: "emu".into(),
                note: None,
            },
        )
    }
}

#[test]
fn schema_round_trip() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("sub/results.sqlite");
    let mut db = Db::open(&path).unwrap();
    let e = env();
    assert!(!e.kernel.is_empty() && !e.cpu.is_empty());
    let id = db
        .create_experiment("small", "{\"runs\":2}", 3, &e)
        .unwrap();
    db.set_link_environment(id, "netem", "cubic").unwrap();
    let a = ok_run("tcp", 0, 120.0);
    let b = ok_run("udt", 0, 80.0);
    let mut c = RunRecord::failed(
        b.cell.clone(),
        1,
        b.link.clone(),
        Status::Timeout,
        "killed after 60 s".into(),
    );
    c.evaluator_output = Some("connecting...".into());
    for r in [&a, &b] {
        db.insert_run(id, r).unwrap();
    }
    assert!(!db.finish_if_complete(id).unwrap());
    db.insert_run(id, &c).unwrap();
    // The same cell and repetition twice is refused, and the first stays.
    assert!(db.insert_run(id, &a).is_err());
    assert!(db.finish_if_complete(id).unwrap());
    drop(db);

    let db = Db::open(&path).unwrap();
    let row = db.find_experiment(None).unwrap().unwrap();
    assert_eq!(row.id, id);
    assert_eq!(row.name, "small");
    assert_eq!(row.spec, "{\"runs\":2}");
    assert_eq!(row.recorded_runs, 3);
    assert!(row.finished_at.is_some());
    assert_eq!(row.environment.emulator, "netem");
    assert_eq!(row.environment.host_cc.as_deref(), Some("cubic"));
    assert_eq!(row.environment.git_commit.as_deref(), Some("abc123"));
    assert_eq!(row.environment.kernel, e.kernel);
    assert_eq!(db.find_experiment(Some("small")).unwrap().unwrap().id, id);
    assert_eq!(
        db.find_experiment(Some(&id.to_string()))
            .unwrap()
            .unwrap()
            .id,
        id
    );
    assert!(db.find_experiment(Some("other")).unwrap().is_none());
    assert_eq!(db.runs(id).unwrap(), vec![a.clone(), b.clone(), c.clone()]);
    let rec = db.recorded(id).unwrap();
    assert_eq!(rec.len(), 3);
    assert!(rec.contains(&(c.cell.clone(), 1)));
}

fn has_column(db: &Db, table: &str, column: &str) -> bool {
    schema::has_column(&db.conn, table, column).unwrap()
}

fn user_version(db: &Db) -> i64 {
    schema::version(&db.conn).unwrap()
}

/// The columns schema version 4 added to `runs`.
const VERSION_4_COLUMNS: [&str; 6] = [
    "connect_ms",
    "handshake_ms",
    "first_output_ms",
    "paper_ms",
    "garbler_round_trips",
    "evaluator_round_trips",
];

/// The columns schema version 5 added to `runs`.
const VERSION_5_COLUMNS: [&str; 3] = ["computations", "online_ms", "online_max_ms"];

/// The column schema version 6 added to `runs`.
const VERSION_6_COLUMN: &str = "protocol_version";

/// The columns schema version 7 added to `runs`.
const VERSION_7_COLUMNS: [&str; 5] = [
    "transport_written",
    "auto_choice",
    "auto_predicted_ms",
    "auto_probe_ms",
    "auto_agree_ms",
];

/// The columns schema version 8 added to `runs`.
const VERSION_8_COLUMNS: [&str; 2] = ["garbler_backend", "evaluator_backend"];

/// The columns schema version 9 added to `runs`.
const VERSION_9_COLUMNS: [&str; 2] = ["garbler_peak_rss_bytes", "evaluator_peak_rss_bytes"];

/// A file of an older schema: today's tables without the columns added since `version`,
/// with one experiment recorded then (by hand, as that version wrote it).
fn old_file(path: &Path, version: i64) -> i64 {
    let db = Db::open(path).unwrap();
    let mut sql = String::new();
    let mut dropped = VERSION_9_COLUMNS.to_vec();
    if version < 8 {
        dropped.extend(VERSION_8_COLUMNS);
    }
    if version < 7 {
        dropped.extend(VERSION_7_COLUMNS);
    }
    if version < 6 {
        dropped.push(VERSION_6_COLUMN);
    }
    if version < 5 {
        dropped.extend(VERSION_5_COLUMNS);
    }
    if version < 4 {
        dropped.extend(VERSION_4_COLUMNS);
    }
    for c in dropped {
        sql.push_str(&format!("ALTER TABLE runs DROP COLUMN {c};"));
    }
    if version < 3 {
        sql.push_str("ALTER TABLE experiments DROP COLUMN host_cc;");
    }
    if version < 2 {
        sql.push_str("ALTER TABLE runs DROP COLUMN buffer_bytes;");
    }
    sql.push_str(&format!("PRAGMA user_version = {version};"));
    db.conn.execute_batch(&sql).unwrap();
    assert_eq!(has_column(&db, "experiments", "host_cc"), version >= 3);
    assert_eq!(has_column(&db, "runs", "paper_ms"), version >= 4);
    assert_eq!(has_column(&db, "runs", "computations"), version >= 5);
    assert_eq!(has_column(&db, "runs", VERSION_6_COLUMN), version >= 6);
    assert_eq!(has_column(&db, "runs", "auto_choice"), version >= 7);
    assert_eq!(has_column(&db, "runs", "garbler_backend"), version >= 8);
    assert!(!has_column(&db, "runs", "garbler_peak_rss_bytes"));
    db.conn
        .execute(
            "INSERT INTO experiments (name, spec, planned_runs, version, kernel, cpu, host, \
             emulator, protection) VALUES ('before', '{}', 1, '0.1.0', 'k', 'c', 'h', \
             'emu', 'on')",
            [],
        )
        .unwrap();
    db.conn.last_insert_rowid()
}

#[test]
fn a_version_1_file_gets_buffer_bytes_and_host_cc() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("old.sqlite");
    let before = old_file(&path, 1);
    let mut db = Db::open(&path).unwrap();
    assert!(has_column(&db, "runs", "buffer_bytes"));
    assert!(has_column(&db, "experiments", "host_cc"));
    let id = db.create_experiment("old", "{}", 1, &env()).unwrap();
    let r = ok_run("tcp", 0, 50.0);
    db.insert_run(id, &r).unwrap();
    assert_eq!(db.runs(id).unwrap()[0].buffer_bytes, Some(3 << 20));
    let old = db.experiment(before).unwrap().unwrap();
    assert_eq!(old.environment.host_cc, None);
    assert_eq!(user_version(&db), SCHEMA_VERSION);
}

#[test]
fn a_version_2_file_gets_host_cc_unknown_for_its_experiments() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v2.sqlite");
    let before = old_file(&path, 2);
    let db = Db::open(&path).unwrap();
    assert_eq!(user_version(&db), SCHEMA_VERSION);
    assert!(has_column(&db, "experiments", "host_cc"));
    let old = db.experiment(before).unwrap().unwrap();
    assert_eq!(old.environment.host_cc, None, "unknown, not made up");
    assert_eq!(old.environment.emulator, "emu");
    // New experiments record it, and the old row can be given it.
    let id = db.create_experiment("new", "{}", 1, &env()).unwrap();
    assert_eq!(
        db.experiment(id)
            .unwrap()
            .unwrap()
            .environment
            .host_cc
            .as_deref(),
        Some("system")
    );
    db.set_link_environment(id, "emu", "bbr").unwrap();
    assert_eq!(
        db.experiment(id)
            .unwrap()
            .unwrap()
            .environment
            .host_cc
            .as_deref(),
        Some("bbr")
    );
    drop(db);
    // Opening a current file again changes nothing.
    let db = Db::open(&path).unwrap();
    assert_eq!(db.experiments().unwrap().len(), 2);
    assert_eq!(user_version(&db), SCHEMA_VERSION);
}

#[test]
fn a_version_3_file_gets_the_waiting_times_null_for_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v3.sqlite");
    let before = old_file(&path, 3);
    // A run as version 3 wrote it: none of version 4's columns.
    let old = Connection::open(&path).unwrap();
    old.execute(
        "INSERT INTO runs (experiment_id, circuit, scheme, transport, condition, repetition, \
         rtt_us, loss, jitter_us, emulator, status, total_ms) VALUES (?1, 'aes128', 'ideal', \
         'tcp', 'wan', 0, 300000, 0.0, 0, 'emu', 'ok', 1817.5)",
        params![before],
    )
    .unwrap();
    drop(old);
    let mut db = Db::open(&path).unwrap();
    assert_eq!(user_version(&db), SCHEMA_VERSION);
    for c in VERSION_4_COLUMNS
        .iter()
        .chain(&VERSION_5_COLUMNS)
        .chain(&[VERSION_6_COLUMN])
        .chain(&VERSION_7_COLUMNS)
        .chain(&VERSION_8_COLUMNS)
    {
        assert!(has_column(&db, "runs", c), "{c}");
    }
    let runs = db.runs(before).unwrap();
    assert_eq!(runs.len(), 1);
    let r = &runs[0];
    assert_eq!((r.total_ms, r.link.rtt_us), (Some(1817.5), 300_000));
    assert_eq!(
        (
            r.connect_ms,
            r.handshake_ms,
            r.first_output_ms,
            r.paper_ms,
            r.garbler_round_trips,
            r.evaluator_round_trips
        ),
        (None, None, None, None, None, None),
        "unknown, not made up"
    );
    assert_eq!(
        (r.computations, r.online_ms, r.online_max_ms),
        (1, None, None)
    );
    assert_eq!(r.protocol_version, None, "unknown, not made up");
    // New runs in the migrated file keep every new field.
    let run = ok_run("udt", 0, 90.0);
    db.insert_run(before, &run).unwrap();
    assert_eq!(db.runs(before).unwrap()[1], run);
}

#[test]
fn a_version_4_file_gets_one_computation_per_run() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v4.sqlite");
    let before = old_file(&path, 4);
    // A run as version 4 wrote it: the waiting times, none of version 5's columns.
    let old = Connection::open(&path).unwrap();
    old.execute(
        "INSERT INTO runs (experiment_id, circuit, scheme, transport, condition, repetition, \
         rtt_us, loss, jitter_us, emulator, status, total_ms, first_output_ms, paper_ms, \
         garbler_round_trips, evaluator_round_trips) VALUES (?1, 'aes128', 'ideal', 'tcp', \
         'wan', 0, 300000, 0.0, 0, 'emu', 'ok', 1817.5, 2392.0, 1210.25, 3, 2)",
        params![before],
    )
    .unwrap();
    drop(old);
    let mut db = Db::open(&path).unwrap();
    assert_eq!(user_version(&db), SCHEMA_VERSION);
    for c in VERSION_5_COLUMNS {
        assert!(has_column(&db, "runs", c), "{c}");
    }
    let r = &db.runs(before).unwrap()[0];
    assert_eq!(
        (
            r.total_ms,
            r.first_output_ms,
            r.paper_ms,
            r.garbler_round_trips
        ),
        (Some(1817.5), Some(2392.0), Some(1210.25), Some(3))
    );
    // A session of one computation, as every run before open sessions was; no online time.
    assert_eq!(
        (r.computations, r.online_ms, r.online_max_ms),
        (1, None, None)
    );
    assert_eq!(r.protocol_version, None);
    let run = ok_run("tcp", 1, 400.0);
    db.insert_run(before, &run).unwrap();
    assert_eq!(db.runs(before).unwrap()[1], run);
}

#[test]
fn a_version_5_file_keeps_its_runs_with_the_protocol_version_unknown() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v5.sqlite");
    let before = old_file(&path, 5);
    // A run as version 5 wrote it: an open session of three computations, no protocol
    // version.
    let old = Connection::open(&path).unwrap();
    old.execute(
        "INSERT INTO runs (experiment_id, circuit, scheme, transport, condition, repetition, \
         rtt_us, loss, jitter_us, emulator, status, total_ms, first_output_ms, paper_ms, \
         garbler_round_trips, evaluator_round_trips, computations, online_ms, online_max_ms) \
         VALUES (?1, 'aes128', 'ideal', 'tcp', 'wan', 0, 300000, 0.0, 0, 'emu', 'ok', 1517.0, \
         1821.5, 1207.0, 3, 2, 3, 310.5, 312.6)",
        params![before],
    )
    .unwrap();
    drop(old);
    let mut db = Db::open(&path).unwrap();
    assert_eq!(user_version(&db), SCHEMA_VERSION);
    assert!(has_column(&db, "runs", VERSION_6_COLUMN));
    let r = &db.runs(before).unwrap()[0];
    assert_eq!(
        (
            r.total_ms,
            r.first_output_ms,
            r.garbler_round_trips,
            r.computations,
            r.online_ms,
            r.online_max_ms
        ),
        (
            Some(1517.0),
            Some(1821.5),
            Some(3),
            3,
            Some(310.5),
            Some(312.6)
        )
    );
    assert_eq!(r.protocol_version, None, "unknown, not made up");
    // New runs record it, beside the old one.
    let run = ok_run("tcp", 1, 400.0);
    db.insert_run(before, &run).unwrap();
    let runs = db.runs(before).unwrap();
    assert_eq!(runs[1], run);
    assert_eq!(
        runs.iter().map(|r| r.protocol_version).collect::<Vec<_>>(),
        [None, Some(5)]
    );
}

#[test]
fn a_newer_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new.sqlite");
    Db::open(&path)
        .unwrap()
        .conn
        .execute_batch("PRAGMA user_version = 10")
        .unwrap();
    let e = Db::open(&path).unwrap_err().to_string();
    assert!(e.contains("version 10, newer than this tool's 9"), "{e}");
}

#[test]
fn a_version_8_file_gets_the_parties_memory_unknown_for_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v8.sqlite");
    let before = old_file(&path, 8);
    let old = Connection::open(&path).unwrap();
    old.execute(
        "INSERT INTO runs (experiment_id, circuit, scheme, transport, condition, repetition, \
         rtt_us, loss, jitter_us, emulator, status, total_ms, computations, garbler_backend) \
         VALUES (?1, 'aes128', 'ideal', 'tcp', 'wan', 0, 100000, 0.0, 0, 'emu', 'ok', 517.0, 1, \
         'vaes')",
        params![before],
    )
    .unwrap();
    drop(old);
    let mut db = Db::open(&path).unwrap();
    assert_eq!(user_version(&db), SCHEMA_VERSION);
    let r = &db.runs(before).unwrap()[0];
    assert_eq!(r.garbler_backend.as_deref(), Some("vaes"));
    assert_eq!(
        (r.garbler_peak_rss_bytes, r.evaluator_peak_rss_bytes),
        (None, None)
    );
    db.insert_run(before, &ok_run("tcp", 1, 400.0)).unwrap();
    let r = &db.runs(before).unwrap()[1];
    assert_eq!(
        (r.garbler_peak_rss_bytes, r.evaluator_peak_rss_bytes),
        (Some(190 << 20), Some(35 << 20))
    );
}

#[test]
fn a_version_7_file_gets_the_backends_unknown_for_its_runs() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v7.sqlite");
    let before = old_file(&path, 7);
    let old = Connection::open(&path).unwrap();
    old.execute(
        "INSERT INTO runs (experiment_id, circuit, scheme, transport, condition, repetition, \
         rtt_us, loss, jitter_us, emulator, status, total_ms, computations, transport_written) \
         VALUES (?1, 'aes128', 'ideal', 'tcp', 'wan', 0, 100000, 0.0, 0, 'emu', 'ok', 517.0, 1, \
         'tcp')",
        params![before],
    )
    .unwrap();
    drop(old);
    let mut db = Db::open(&path).unwrap();
    assert_eq!(user_version(&db), SCHEMA_VERSION);
    for c in VERSION_8_COLUMNS {
        assert!(has_column(&db, "runs", c), "{c}");
    }
    let r = &db.runs(before).unwrap()[0];
    assert_eq!(
        (r.garbler_backend.as_deref(), r.evaluator_backend.as_deref()),
        (None, None)
    );
    let run = ok_run("tcp", 1, 400.0);
    db.insert_run(before, &run).unwrap();
    let r = &db.runs(before).unwrap()[1];
    assert_eq!(r.garbler_backend.as_deref(), Some("vaes256"));
    assert_eq!(r.evaluator_backend.as_deref(), Some("aes-ni"));
}

#[test]
fn a_version_6_file_keeps_its_runs_as_written_and_not_auto() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v6.sqlite");
    let before = old_file(&path, 6);
    // A run as version 6 wrote it: its protocol version, nothing of auto.
    let old = Connection::open(&path).unwrap();
    old.execute(
        "INSERT INTO runs (experiment_id, circuit, scheme, transport, condition, repetition, \
         rtt_us, loss, jitter_us, emulator, status, total_ms, first_output_ms, computations, \
         protocol_version) VALUES (?1, 'aes128', 'ideal', 'quic:cc=bbr,iw=2500000', 'wan', 0, \
         100000, 0.0, 0, 'emu', 'ok', 517.0, 821.5, 1, 5)",
        params![before],
    )
    .unwrap();
    drop(old);
    let mut db = Db::open(&path).unwrap();
    assert_eq!(user_version(&db), SCHEMA_VERSION);
    for c in VERSION_7_COLUMNS {
        assert!(has_column(&db, "runs", c), "{c}");
    }
    let r = &db.runs(before).unwrap()[0];
    assert_eq!(
        (r.total_ms, r.first_output_ms, r.protocol_version),
        (Some(517.0), Some(821.5), Some(5))
    );
    // It ran what it wrote; no choice, no prediction, no probe: unknown, not made up.
    assert_eq!(r.transport_written, None);
    assert_eq!(r.transport_as_written(), "quic:cc=bbr,iw=2500000");
    assert_eq!(
        (
            r.auto_choice.as_deref(),
            r.auto_predicted_ms,
            r.auto_probe_ms,
            r.auto_agree_ms
        ),
        (None, None, None, None)
    );
    // New runs record them, beside the old one.
    let run = ok_run("quic", 1, 400.0);
    db.insert_run(before, &run).unwrap();
    let runs = db.runs(before).unwrap();
    assert_eq!(runs[1], run);
    assert_eq!(runs[1].transport_as_written(), "quic:w={bdp}");
    assert_eq!(runs[1].auto_probe_ms, Some(140.5));
}

#[test]
fn runs_of_auto_are_not_calibrated_from() {
    let mut db = Db::in_memory().unwrap();
    let id = db.create_experiment("grid", "{}", 3, &env()).unwrap();
    for t in ["tcp", "auto", "quic:cc=bbr,iw=2500000"] {
        let mut r = ok_run(t, 0, 300.0);
        r.computations = 1;
        db.insert_run(id, &r).unwrap();
    }
    let cells = db.calibration_cells().unwrap();
    let transports: Vec<&str> = cells.iter().map(|c| c.transport.as_str()).collect();
    // Calibrated from what ran (the string with its window), never from auto's runs.
    assert_eq!(transports, ["quic:cc=bbr,iw=2500000", "tcp"]);
    assert_eq!(cells[1].output_ms, [300.5]);
}

#[test]
fn a_reader_reads_the_current_schema_and_never_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    // A missing file is an error, and stays missing.
    let e = Db::open_read_only(&path).unwrap_err().to_string();
    assert!(e.contains(&path.display().to_string()), "{e}");
    assert!(!path.exists());

    let mut writer = Db::open(&path).unwrap();
    let id = writer.create_experiment("read", "{}", 2, &env()).unwrap();
    writer.insert_run(id, &ok_run("tcp", 0, 50.0)).unwrap();
    // Read while the writer holds the file open (WAL), and see a run recorded after.
    let reader = Db::open_read_only(&path).unwrap();
    assert_eq!(reader.experiments().unwrap().len(), 1);
    writer.insert_run(id, &ok_run("udt", 0, 40.0)).unwrap();
    assert_eq!(reader.runs(id).unwrap().len(), 2);
    // SQLite itself refuses a write through it.
    let e = reader
        .create_experiment("no", "{}", 1, &env())
        .unwrap_err()
        .to_string();
    assert!(e.contains("readonly"), "{e}");
    assert_eq!(writer.experiments().unwrap().len(), 1);
}

#[test]
fn a_reader_refuses_an_older_or_newer_schema_naming_both_versions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("v7.sqlite");
    old_file(&path, 7);
    let e = Db::open_read_only(&path).unwrap_err();
    assert!(
        matches!(e, Error::Schema { found: 7, supported, .. } if supported == SCHEMA_VERSION),
        "{e:?}"
    );
    assert_eq!(
        e.to_string(),
        format!(
            "the results database {}: its schema is version 7, older than this tool's {}",
            path.display(),
            SCHEMA_VERSION
        )
    );
    // Not brought up to date: still version 7, without version 8's columns.
    let c = Connection::open(&path).unwrap();
    let v: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 7);
    assert!(!schema::has_column(&c, "runs", "garbler_backend").unwrap());
    drop(c);

    c_set_version(&path, SCHEMA_VERSION + 1);
    let e = Db::open_read_only(&path).unwrap_err().to_string();
    assert!(
        e.ends_with(&format!(
            "its schema is version {}, newer than this tool's {SCHEMA_VERSION}",
            SCHEMA_VERSION + 1
        )),
        "{e}"
    );

    // An SQLite file that was never a results database.
    let empty = dir.path().join("empty.sqlite");
    Connection::open(&empty)
        .unwrap()
        .execute_batch("CREATE TABLE t (x)")
        .unwrap();
    let e = Db::open_read_only(&empty).unwrap_err().to_string();
    assert!(
        e.ends_with("is not a results database (its schema version is 0)"),
        "{e}"
    );
}

fn c_set_version(path: &Path, version: i64) {
    Connection::open(path)
        .unwrap()
        .execute_batch(&format!("PRAGMA user_version = {version}"))
        .unwrap();
}

#[test]
fn covers_name_each_experiments_circuits_transports_and_bad_runs() {
    let mut db = Db::in_memory().unwrap();
    let a = db.create_experiment("a", "{}", 4, &env()).unwrap();
    let b = db.create_experiment("b", "{}", 1, &env()).unwrap();
    let none = db.create_experiment("none", "{}", 1, &env()).unwrap();
    db.insert_run(a, &ok_run("tcp", 0, 50.0)).unwrap();
    db.insert_run(a, &ok_run("udt", 0, 40.0)).unwrap();
    let mut sha = ok_run("tcp", 0, 90.0);
    sha.cell.circuit = "sha256".into();
    sha.status = Status::Failed;
    db.insert_run(a, &sha).unwrap();
    let mut plain = ok_run("quic", 0, 70.0);
    plain.transport_written = None;
    plain.status = Status::Timeout;
    db.insert_run(b, &plain).unwrap();
    let covers = db.runs_covers().unwrap();
    assert_eq!(covers.len(), 2, "{covers:?}");
    assert!(!covers.contains_key(&none));
    assert_eq!(
        covers[&a],
        RunsCover {
            circuits: vec!["aes128".into(), "sha256".into()],
            transports: vec!["tcp:w={bdp}".into(), "udt:w={bdp}".into()],
            not_ok: 1,
        }
    );
    assert_eq!(covers[&b].transports, ["quic"]);
    assert_eq!(covers[&b].not_ok, 1);
}

#[test]
fn each_runs_record_time_is_read_back_in_the_order_recorded() {
    let mut db = Db::in_memory().unwrap();
    let id = db.create_experiment("t", "{}", 3, &env()).unwrap();
    let other = db.create_experiment("u", "{}", 1, &env()).unwrap();
    assert!(db.record_times(id).unwrap().is_empty());
    for (rep, at) in [(0, "2026-01-01 10:00:00"), (1, "2026-01-01 10:00:07")] {
        db.insert_run(id, &ok_run("tcp", rep, 10.0)).unwrap();
        db.conn
            .execute(
                "UPDATE runs SET started_at = ?1 WHERE id = last_insert_rowid()",
                params![at],
            )
            .unwrap();
    }
    db.insert_run(other, &ok_run("tcp", 0, 10.0)).unwrap();
    let times = db.record_times(id).unwrap();
    assert_eq!(times, [1_767_261_600, 1_767_261_607]);
    assert_eq!(db.record_times(other).unwrap().len(), 1);
}
