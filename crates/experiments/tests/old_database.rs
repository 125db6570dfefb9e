//! A results database written by the build before the testbed was split (schema version 3,
//! `tests/fixtures/results-v3.sqlite`: two experiments run with `transputation testbed run`,
//! two successful runs and a timeout) opens with this build and reads the same, its runs
//! without the columns of schema version 4 (the waiting times of report version 2: NULL,
//! unknown), with one computation each and no online time (schema version 5) and without
//! the parties' protocol version (schema version 6: NULL, unknown), each run's transport as
//! written being the one it ran and nothing of auto (schema version 7), the parties' AES
//! backends unknown (schema version 8), their peak memory unknown (schema version 9), and accepts
//! new runs.

use std::path::Path;

use transputation_experiments::db::{Db, RunRecord, Status, SCHEMA_VERSION};
use transputation_experiments::report;

/// The columns of schema versions 4 to 9 in a run recorded at version 3: not measured then,
/// so unknown.
fn columns_after_version_3_are_unknown(r: &RunRecord) {
    // Version 4's.
    assert_eq!(
        (
            r.connect_ms,
            r.handshake_ms,
            r.first_output_ms,
            r.paper_ms,
            r.garbler_round_trips,
            r.evaluator_round_trips
        ),
        (None, None, None, None, None, None)
    );
    // Version 5's: one computation per session, as every run had then.
    assert_eq!(
        (r.computations, r.online_ms, r.online_max_ms),
        (1, None, None)
    );
    // Version 6's: the parties' protocol version was not recorded then.
    assert_eq!(r.protocol_version, None);
    // Version 7's: the transport ran as written; no auto then.
    assert_eq!(r.transport_written, None);
    assert_eq!(r.transport_as_written(), r.cell.transport);
    assert_eq!(
        (
            r.auto_choice.as_deref(),
            r.auto_predicted_ms,
            r.auto_probe_ms,
            r.auto_agree_ms
        ),
        (None, None, None, None)
    );
    // Version 8's: the AES backends were not recorded then.
    assert_eq!(
        (r.garbler_backend.as_ref(), r.evaluator_backend.as_ref()),
        (None, None)
    );
    // Version 9's: nor the parties' memory.
    assert_eq!(
        (r.garbler_peak_rss_bytes, r.evaluator_peak_rss_bytes),
        (None, None)
    );
}

fn fixture_copy(dir: &Path) -> std::path::PathBuf {
    let from = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/results-v3.sqlite");
    let to = dir.join("results.sqlite");
    std::fs::copy(&from, &to).unwrap();
    to
}

#[test]
fn a_database_of_the_previous_build_reads_the_same() {
    assert_eq!(
        SCHEMA_VERSION, 9,
        "a new version: keep this file's checks of versions 3 to 9"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = fixture_copy(dir.path());
    let mut db = Db::open(&path).unwrap();

    let experiments = db.experiments().unwrap();
    let names: Vec<&str> = experiments.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names, ["fixture", "fixture-timeout"]);
    let first = &experiments[0];
    assert_eq!((first.planned_runs, first.recorded_runs), (2, 2));
    assert!(first.finished_at.is_some());
    assert_eq!(first.environment.emulator, "emu");
    assert_eq!(first.environment.host_cc.as_deref(), Some("cubic"));
    assert_eq!(first.environment.protection, "on");
    assert_eq!(first.environment.version, "0.1.0");

    let runs = db.runs(first.id).unwrap();
    assert_eq!(runs.len(), 2);
    let tcp = &runs[0];
    assert_eq!(
        (
            tcp.cell.circuit.as_str(),
            tcp.cell.scheme.as_str(),
            tcp.cell.transport.as_str(),
            tcp.cell.condition.as_str(),
            tcp.repetition
        ),
        ("aes128", "ideal", "tcp", "lan", 0)
    );
    assert_eq!(tcp.status, Status::Ok);
    assert_eq!(tcp.total_ms, Some(5440.299516));
    assert_eq!(tcp.ot_ms, Some(5418.918468));
    assert_eq!(tcp.bytes_garbler_to_evaluator, Some(213_380));
    assert_eq!(tcp.bytes_evaluator_to_garbler, Some(2308));
    assert_eq!(tcp.buffer_bytes, Some(125_000));
    assert_eq!(tcp.link.rtt_us, 500);
    assert_eq!(tcp.link.rate_bps, Some(1_000_000_000));
    assert!(tcp
        .garbler_report
        .as_deref()
        .unwrap()
        .contains("\"output\":\"66e94bd4ef8a2c3b884cfa59ca342b2e\""));
    assert_eq!(runs[1].cell.transport, "mtcp:streams=2");
    for r in &runs {
        columns_after_version_3_are_unknown(r);
    }

    let timeout = &db.runs(experiments[1].id).unwrap()[0];
    assert_eq!(timeout.status, Status::Timeout);
    assert_eq!(timeout.total_ms, None);
    assert_eq!(
        timeout.error.as_deref(),
        Some("killed at the 1 s limit (still running: garbler, evaluator)")
    );

    // The report of the old experiment is built as before: one row, both transports.
    let r = report::build(Some(first), &runs);
    let text = r.text();
    assert!(text.contains("5440.3") && text.contains("5126.3"), "{text}");
    // Without the paper's measure recorded, no column for it, and a line says why; in RTTs
    // of its 0.5 ms condition the same times count 10,880.6 and 10,252.5 round trips.
    assert!(
        !text.contains("tcp paper") && text.contains("was not recorded"),
        "{text}"
    );
    assert!(!text.contains("tcp online"), "{text}");
    let in_rtts = report::build_in(Some(first), &runs, report::Unit::Rtt).text();
    assert!(
        in_rtts.contains("10880.60") && in_rtts.contains("10252.53"),
        "{in_rtts}"
    );

    // And the file takes new experiments and runs.
    let mut run = tcp.clone();
    run.repetition = 1;
    db.insert_run(first.id, &run).unwrap();
    assert_eq!(db.runs(first.id).unwrap().len(), 3);
    drop(db);
    assert_eq!(Db::open(&path).unwrap().experiments().unwrap().len(), 2);
}
