//! `auto` in the testbed, end to end: beside `tcp` and a transport following the
//! condition's bandwidth-delay product (`{bdp}`), every run measuring its path; and alone
//! with a probe cache, measuring once per condition.
//!
//! Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2; without them each test says
//! so on stderr and passes without running.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;

use rusqlite::Connection;
use transputation_netlab::ns;

/// The tests build links and measure time: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

macro_rules! require_root {
    () => {
        if let Err(e) = ns::check_privileges() {
            eprintln!("skipping the testbed auto test: {e}");
            return;
        }
        if Command::new("ip").arg("-V").output().is_err() {
            eprintln!("skipping the testbed auto test: `ip` is missing (iproute2)");
            return;
        }
    };
}

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn run(args: &[&str]) -> Output {
    let out = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "transputation {args:?}: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// The number `sql` answers; a query that fails fails the test instead of reading as 0.
fn count(db: &Path, sql: &str) -> i64 {
    let c = Connection::open(db).unwrap();
    c.query_row(sql, [], |r| r.get(0))
        .unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// The runs that did not succeed: `transport @ condition: status: error`.
fn failures(db: &Path) -> Vec<String> {
    texts(
        db,
        "SELECT transport || ' @ ' || condition || ': ' || status || ': ' || \
         coalesce(error, '') FROM runs WHERE status != 'ok'",
    )
}

/// The strings (`TEXT` column) `sql` answers, in order.
fn texts(db: &Path, sql: &str) -> Vec<String> {
    let c = Connection::open(db).unwrap();
    let mut st = c.prepare(sql).unwrap_or_else(|e| panic!("{sql}: {e}"));
    st.query_map([], |r| r.get::<_, String>(0))
        .unwrap()
        .map(Result::unwrap)
        .collect()
}

/// `auto` beside `tcp` and a transport written with `{bdp}`: every run of auto measures
/// its path and records the choice, one of the registry's transports, with its prediction
/// and what probing and agreeing cost; the template runs the condition's product; the
/// report says what auto chose and how far it was from the fastest.
#[test]
fn auto_and_a_bdp_transport_run_beside_tcp() {
    require_root!();
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let db_s = db.to_str().unwrap();
    // 20 ms × 50 Mbit/s = 125,000 bytes; half of it per chunk.
    let template = "mtcp:streams=2,chunk={bdp*0.5}";
    let out = run(&[
        "testbed",
        "run",
        "--name",
        "auto",
        "--circuits",
        "aes128",
        "--transports",
        &format!("tcp;auto;{template}"),
        "--rtt",
        "20ms",
        "--rate",
        "50mbit",
        "--runs",
        "2",
        "--timeout",
        "60",
        "--quiet",
        "--db",
        db_s,
    ]);
    assert_eq!(failures(&db), Vec::<String>::new());
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 6);
    assert_eq!(
        texts(
            &db,
            "SELECT DISTINCT transport || ' as ' || transport_written FROM runs ORDER BY 1"
        ),
        [
            "auto as auto",
            &format!("mtcp:streams=2,chunk=62500 as {template}"),
            "tcp as tcp"
        ]
    );
    // Each run of auto probed (no cache: --probe-cache 0) and agreed, and says so; its
    // wait includes the probe.
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs WHERE transport = 'auto' AND auto_choice != '' AND \
             auto_predicted_ms > 0 AND auto_probe_ms > 0 AND auto_agree_ms >= 0 AND \
             evaluator_report LIKE '%\"path_from\":\"probe\"%' AND first_output_ms > \
             auto_probe_ms"
        ),
        2
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs WHERE transport != 'auto' AND auto_choice IS NULL AND \
             auto_predicted_ms IS NULL AND auto_probe_ms IS NULL AND auto_agree_ms IS NULL"
        ),
        4
    );
    for choice in texts(&db, "SELECT auto_choice FROM runs WHERE transport = 'auto'") {
        let spec: transputation_transport::TransportSpec = choice
            .parse()
            .unwrap_or_else(|e| panic!("auto chose {choice:?}: {e}"));
        assert!(
            transputation_transport::families()
                .iter()
                .any(|f| f.name == spec.name()),
            "{choice}"
        );
    }
    // The report: one column for the template, auto's choice and gap, the summary.
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("auto within 10 % or 30 ms of the fastest in ")
            && text.contains(" of 1 cells; more than 10 % slower than tcp in "),
        "{text}"
    );
    let header = text.lines().find(|l| l.starts_with("circuit")).unwrap();
    assert!(
        header.contains(template) && header.contains("auto chose") && header.contains("auto gap"),
        "{text}"
    );
    let csv = run(&["testbed", "report", "auto", "--db", db_s, "--format", "csv"]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    assert_eq!(csv.lines().count(), 1 + 3, "{csv}");
    assert!(
        csv.contains(&format!(",\"{template}\",2,2,0,0,"))
            && csv.contains(",\"mtcp:streams=2,chunk=62500\","),
        "{csv}"
    );
}

/// With a probe cache, the auto runs of a condition share the garbler's port and the
/// evaluators' cache: the first measures, the second recalls.
#[test]
fn auto_with_a_probe_cache_measures_once_per_condition() {
    require_root!();
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let db_s = db.to_str().unwrap();
    run(&[
        "testbed",
        "run",
        "--name",
        "cached",
        "--circuits",
        "aes128",
        "--transports",
        "auto",
        "--rtt",
        "20ms",
        "--rate",
        "50mbit",
        "--runs",
        "2",
        "--timeout",
        "60",
        "--probe-cache",
        "600",
        "--quiet",
        "--db",
        db_s,
    ]);
    assert_eq!(failures(&db), Vec::<String>::new());
    let from = texts(
        &db,
        "SELECT r.repetition || ' ' || (r.auto_probe_ms > 0) || ' ' || \
         (r.evaluator_report LIKE '%\"path_from\":\"cache\"%') FROM runs r ORDER BY \
         r.repetition",
    );
    assert_eq!(from, ["0 1 0", "1 0 1"]);
}
