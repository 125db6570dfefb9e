//! Experiments end to end: `transputation testbed run` over real emulated links, killed
//! half-way and resumed, then `report` in every format with plots; the sample user program;
//! a failing and a hanging program recorded as such, and one stopped by the cutoff; a
//! transport the build cannot run left out, from a new experiment and from a resumed one.
//!
//! Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2; without them each test says
//! so on stderr and passes without running.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use transputation_netlab::ns;

/// The tests build links and measure time: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_transputation"))
}

fn sample_program() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments/programs/twopc")
}

macro_rules! require_root {
    () => {
        if let Err(e) = ns::check_privileges() {
            eprintln!("skipping the testbed experiment test: {e}");
            return;
        }
        if Command::new("ip").arg("-V").output().is_err() {
            eprintln!("skipping the testbed experiment test: `ip` is missing (iproute2)");
            return;
        }
    };
}

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn run(args: &[&str]) -> Output {
    let out = Command::new(exe())
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

/// The number `sql` answers; a query that fails (a mistyped column, a missing table) fails
/// the test instead of reading as 0.
fn count(db: &Path, sql: &str) -> i64 {
    try_count(db, sql).unwrap_or_else(|e| panic!("{sql}: {e}"))
}

/// [`count`] while an experiment may still be creating the database (its tables may not be
/// there yet).
fn try_count(db: &Path, sql: &str) -> rusqlite::Result<i64> {
    let c = Connection::open(db)?;
    c.busy_timeout(Duration::from_secs(5))?;
    c.query_row(sql, [], |r| r.get(0))
}

fn failures(db: &Path) -> Vec<String> {
    let c = Connection::open(db).unwrap();
    let mut st = c
        .prepare("SELECT transport, condition, status, error FROM runs WHERE status != 'ok'")
        .unwrap();
    st.query_map([], |r| {
        Ok(format!(
            "{} @ {}: {}: {}",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, Option<String>>(3)?.unwrap_or_default()
        ))
    })
    .unwrap()
    .map(Result::unwrap)
    .collect()
}

#[test]
fn a_small_experiment_is_killed_resumed_and_reported() {
    require_root!();
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    let db_s = db.to_str().unwrap();
    let started = Instant::now();
    let (pid, id) = start_and_kill_after_three_runs(&db, started);

    // Resume: the rest runs, nothing twice; the killed run's namespaces and parties go.
    let out = run(&["testbed", "run", "--resume", &id.to_string(), "--db", db_s]);
    let text = String::from_utf8_lossy(&out.stdout);
    let stale = format!("{}{pid}-", ns::PREFIX);
    assert!(
        ns::list().iter().all(|n| !n.starts_with(&stale)),
        "{:?}",
        ns::list()
    );
    runs_are_complete_and_once(&db);
    runs_are_measured_with_their_environment(&db, &text);
    reports_in_every_format_and_plots(dir.path(), db_s, id);
    eprintln!("end to end in {:?}", started.elapsed());
}

/// aes128 (ideal) and the sample program × tcp, udt × cw-lan, 10 ms at 100 Mbit/s × 2.
const PLANNED: i64 = 2 * 2 * 2 * 2;

/// Starts the experiment `e2e` into `db` and kills it (SIGKILL: no chance to tidy up) once a
/// few of its [`PLANNED`] runs are recorded; returns its process id and the experiment's id.
fn start_and_kill_after_three_runs(db: &Path, started: Instant) -> (u32, i64) {
    let db_s = db.to_str().unwrap();
    let program = format!("twopc={}", sample_program().display());
    let mut child = Command::new(exe())
        .args([
            "testbed",
            "run",
            "--name",
            "e2e",
            "--circuits",
            "aes128",
            "--transports",
            &format!("tcp,{}", second_transport()),
            "--conditions",
            "cw-lan",
            "--rtt",
            "10ms",
            "--rate",
            "100mbit",
            "--runs",
            "2",
            "--timeout",
            "30",
            "--program",
            &program,
            "--db",
            db_s,
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let pid = child.id();
    loop {
        if db.exists() && try_count(db, "SELECT count(*) FROM runs").unwrap_or(0) >= 3 {
            break;
        }
        if let Ok(Some(st)) = child.try_wait() {
            panic!("the experiment ended ({st}) before it could be killed");
        }
        assert!(
            started.elapsed() < Duration::from_secs(40),
            "no 3 runs recorded in 40 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = count(db, "SELECT count(*) FROM runs");
    assert!(
        (3..PLANNED).contains(&before),
        "{before} runs before the kill"
    );
    let id = count(db, "SELECT id FROM experiments WHERE name = 'e2e'");
    assert!(id > 0);
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM experiments WHERE finished_at IS NULL"
        ),
        1
    );
    (pid, id)
}

/// After the resume: every planned run once, none failed, the experiment finished.
fn runs_are_complete_and_once(db: &Path) {
    assert_eq!(count(db, "SELECT count(*) FROM runs"), PLANNED);
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM (SELECT 1 FROM runs GROUP BY circuit, scheme, transport, \
             condition, repetition HAVING count(*) > 1)"
        ),
        0
    );
    assert_eq!(failures(db), Vec::<String>::new());
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM experiments WHERE finished_at IS NOT NULL"
        ),
        1
    );
}

/// The runs' measurements and link, and the experiment's environment, are recorded;
/// `text` is what the resumed `testbed run` printed.
fn runs_are_measured_with_their_environment(db: &Path, text: &str) {
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM runs WHERE scheme = 'ideal' AND total_ms > 0 AND ot_ms > 0 \
             AND bytes_garbler_to_evaluator > 100000 AND bytes_evaluator_to_garbler > 0 \
             AND wall_ms >= total_ms"
        ),
        8
    );
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM runs WHERE condition = 'rtt 10ms rate 100mbit' AND \
             rtt_us = 10000 AND rate_bps = 100000000"
        ),
        8
    );
    // Both parties were told the link's RTT and rate and sized their buffers for it.
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM runs WHERE scheme = 'ideal' AND buffer_bytes > 0"
        ),
        8
    );
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM experiments WHERE emulator IN ('emu', 'netem') AND \
             kernel != '' AND cpu != '' AND protection IN ('on', 'unsupported') AND \
             host_cc = 'cubic'"
        ),
        1
    );
    // What the user waits for, from the parties' reports: the evaluator's output comes
    // after its two round trips of the link, the garbler's paper measure (tables out,
    // output back) takes at least one and is inside its protocol time; each party's round
    // trips are those of the message table. User programs have none of it.
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM runs WHERE scheme = 'ideal' AND connect_ms > 0 AND \
             handshake_ms IS NOT NULL AND first_output_ms >= 2 * rtt_us / 1e3 AND \
             paper_ms >= rtt_us / 1e3 AND \
             paper_ms < total_ms AND garbler_round_trips = 3 AND evaluator_round_trips = 2 \
             AND garbler_peak_rss_bytes > 1048576 AND evaluator_peak_rss_bytes > 1048576"
        ),
        8
    );
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM runs WHERE scheme = 'program' AND connect_ms IS NULL AND \
             handshake_ms IS NULL AND first_output_ms IS NULL AND paper_ms IS NULL AND \
             garbler_round_trips IS NULL AND evaluator_round_trips IS NULL AND \
             garbler_peak_rss_bytes IS NULL AND evaluator_peak_rss_bytes IS NULL"
        ),
        8
    );
    // The protocol version of the binary's parties, from its capabilities; a user
    // program's parties are its own, not known to the testbed.
    let protocol = transputation_2pc::PROTOCOL_VERSION;
    assert_eq!(
        count(
            db,
            &format!(
                "SELECT count(*) FROM runs WHERE scheme = 'ideal' AND protocol_version = \
                 {protocol}"
            )
        ),
        8
    );
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM runs WHERE scheme = 'program' AND protocol_version IS NULL"
        ),
        8
    );
    // The sample program's output (AES-128 of FIPS-197 C.1) is kept.
    assert_eq!(
        count(
            db,
            "SELECT count(*) FROM runs WHERE scheme = 'program' AND evaluator_output LIKE \
             '%69c4e0d86a7b0430d8cdb78070b4c55a%' AND total_ms > 0"
        ),
        8
    );
    assert!(text.contains("aes128") && text.contains(" *"), "{text}");
    assert!(
        text.contains(", hosts' TCP congestion control cubic, session protection "),
        "{text}"
    );
}

/// `testbed report` in csv, markdown and json, and its plots in `dir`.
fn reports_in_every_format_and_plots(dir: &Path, db_s: &str, id: i64) {
    let csv = run(&["testbed", "report", "e2e", "--db", db_s, "--format", "csv"]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    let lines: Vec<&str> = csv.lines().collect();
    assert_eq!(lines.len(), 1 + 4 * 2, "{csv}");
    for l in &lines[1..] {
        assert!(l.contains(",2,2,0,0,"), "{l}");
    }
    assert_eq!(
        lines[1..].iter().filter(|l| l.contains(",true,")).count(),
        4
    );
    let md = run(&["testbed", "report", "--db", db_s, "--format", "markdown"]);
    let md = String::from_utf8_lossy(&md.stdout);
    assert_eq!(md.matches("**").count(), 2 * 4, "{md}");
    // The paper's measure in a column of its own beside each transport's.
    let second = second_transport();
    assert!(
        md.contains(&format!(
            "| circuit | scheme | condition | tcp | tcp paper | {second} | {second} paper | best |"
        )),
        "{md}"
    );
    in_rtts(db_s);
    let json = run(&[
        "testbed",
        "report",
        &id.to_string(),
        "--db",
        db_s,
        "--format",
        "json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(
        v["transports"],
        serde_json::json!(["tcp", second_transport()])
    );
    assert_eq!(v["rows"].as_array().unwrap().len(), 4);
    assert_eq!(v["experiment"]["environment"]["host_cc"], "cubic");
    let plots = dir.join("plots");
    run(&[
        "testbed",
        "report",
        "--db",
        db_s,
        "--plots",
        plots.to_str().unwrap(),
    ]);
    for f in ["aes128-time-vs-rtt.svg", "twopc-time-vs-rtt.svg"] {
        let svg = std::fs::read_to_string(plots.join(f)).unwrap();
        assert!(
            svg.starts_with("<svg") && svg.contains("tcp / ideal") | svg.contains("tcp / program")
        );
    }
}

/// `testbed report --unit rtt`: the times over each condition's RTT (0.3 ms for cw-lan,
/// 10 ms), in every format.
fn in_rtts(db_s: &str) {
    let csv = run(&[
        "testbed", "report", "e2e", "--db", db_s, "--format", "csv", "--unit", "rtt",
    ]);
    let csv = String::from_utf8_lossy(&csv.stdout);
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let (mean_ms, rtt_ms, mean_rtt) = (col("mean_ms"), col("rtt_ms"), col("mean_rtt"));
    let (paper_ms, paper_rtt) = (col("paper_mean_ms"), col("paper_mean_rtt"));
    for l in lines {
        let f: Vec<&str> = l.split(',').collect();
        let num = |i: usize| f[i].parse::<f64>().unwrap();
        let rtt = if l.contains(",cw-lan,") { 0.3 } else { 10.0 };
        assert_eq!(num(rtt_ms), rtt, "{l}");
        let close = |a: f64, b: f64| (a - b).abs() <= 1e-3 * b.max(1.0);
        assert!(close(num(mean_rtt), num(mean_ms) / rtt), "{l}");
        if l.starts_with("aes128,") {
            assert!(close(num(paper_rtt), num(paper_ms) / rtt), "{l}");
            assert!(num(paper_rtt) >= 1.0, "tables out, output back: {l}");
        } else {
            assert_eq!(f[paper_rtt], "", "a user program has no paper measure: {l}");
        }
    }
    let text = run(&["testbed", "report", "e2e", "--db", db_s, "--unit", "rtt"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("protocol time in RTTs of the row's condition"),
        "{text}"
    );
    let json = run(&[
        "testbed", "report", "e2e", "--db", db_s, "--format", "json", "--unit", "rtt",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&json.stdout).unwrap();
    assert_eq!(v["unit"], "rtt");
    for row in v["rows"].as_array().unwrap() {
        let cell = &row["cells"][0];
        let ratio = cell["mean_ms"].as_f64().unwrap() / cell["mean_rtt"].as_f64().unwrap();
        assert!(
            (ratio - row["rtt_ms"].as_f64().unwrap()).abs() < 1e-9,
            "{row}"
        );
    }
}

#[test]
fn failing_and_hanging_programs_are_recorded_not_dropped() {
    require_root!();
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let progs = dir.path();
    let marker = format!("{}", 4000 + std::process::id() % 1000);
    for (name, server, client) in [
        (
            "bad",
            "echo listening on $2 >&2; sleep 5",
            "echo no route to $1 >&2; exit 3",
        ),
        (
            "slow",
            &*format!("sleep 2{marker}"),
            &*format!("sleep 2{marker}"),
        ),
    ] {
        std::fs::write(progs.join(format!("{name}-server.sh")), server).unwrap();
        std::fs::write(progs.join(format!("{name}-client.sh")), client).unwrap();
    }
    let db = progs.join("r.sqlite");
    let start = Instant::now();
    run(&[
        "testbed",
        "run",
        "--program",
        &format!("bad={}", progs.display()),
        "--program",
        &format!("slow={}", progs.display()),
        "--rtt",
        "1ms",
        "--timeout",
        "3",
        "--db",
        db.to_str().unwrap(),
        "--quiet",
    ]);
    // The failure ends early (its server is killed a moment after the client failed), the
    // hang at the limit.
    assert!(
        start.elapsed() < Duration::from_secs(15),
        "{:?}",
        start.elapsed()
    );
    let f = failures(&db);
    assert_eq!(f.len(), 2, "{f:?}");
    assert!(
        f.iter().any(|l| l.contains(": failed: ")
            && l.contains("exit status: 3")
            && l.contains("no route to")),
        "{f:?}"
    );
    assert!(
        f.iter()
            .any(|l| l
                .contains(": timeout: killed at the 3 s limit (still running: server, client)")),
        "{f:?}"
    );
    // The hanging scripts' children were killed with their process groups.
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep 2{marker}")])
        .output()
        .unwrap();
    assert!(
        left.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&left.stdout)
    );
    let report = run(&["testbed", "report", "--db", db.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(
        text.contains("failed") && text.contains("timeout"),
        "{text}"
    );
}

#[test]
fn a_run_past_the_cutoff_is_stopped_at_the_floor_and_says_why() {
    require_root!();
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let progs = dir.path();
    let marker = format!("{}", 5000 + std::process::id() % 1000);
    // Over `tcp` the program ends at once; over `udp` it would hang for days.
    let body = format!("if [ \"$3\" = udp ]; then sleep 3{marker}; fi");
    std::fs::write(
        progs.join("pace-server.sh"),
        format!("echo listening on $2 >&2; {body}"),
    )
    .unwrap();
    std::fs::write(progs.join("pace-client.sh"), &body).unwrap();
    let db = progs.join("r.sqlite");
    let start = Instant::now();
    run(&[
        "testbed",
        "run",
        "--program",
        &format!("pace={}", progs.display()),
        "--transports",
        "tcp;udp",
        "--rtt",
        "1ms",
        "--timeout",
        "120",
        "--cutoff",
        "1.5",
        "--db",
        db.to_str().unwrap(),
        "--quiet",
    ]);
    // Stopped at the 10 s floor (1.5 times a run of milliseconds is less), not at the limit.
    let took = start.elapsed();
    assert!(
        took > Duration::from_secs(10) && took < Duration::from_secs(40),
        "{took:?}"
    );
    let f = failures(&db);
    assert_eq!(f.len(), 1, "{f:?}");
    assert!(
        f[0].starts_with("udp @ ")
            && f[0].contains(
                ": timeout: cut off at 10.0 s, more than 1.5 times the fastest run \
                              of its cell so far"
            )
            && f[0].contains("(still running: server, client)"),
        "{f:?}"
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs WHERE transport = 'tcp' AND status = 'ok'"
        ),
        1
    );
    let left = Command::new("pgrep")
        .args(["-f", &format!("sleep 3{marker}")])
        .output()
        .unwrap();
    assert!(left.stdout.is_empty());
}

#[test]
fn ctrl_c_keeps_the_finished_runs_and_records_no_cut_short_one() {
    require_root!();
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let child = Command::new(exe())
        .args([
            "testbed",
            "run",
            "--circuits",
            "aes128",
            "--transports",
            &format!("tcp,{}", second_transport()),
            "--conditions",
            "cw-wan",
            "--runs",
            "20",
            "--db",
            db.to_str().unwrap(),
        ])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !(db.exists() && try_count(&db, "SELECT count(*) FROM runs").unwrap_or(0) >= 2) {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "no 2 runs in 30 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // In the middle of a run: AES-128 over 16 Mbit/s and 40 ms takes a few hundred ms.
    // (Before the handler stopped the runner from recording it, the run cut short here was
    // recorded as a failure every time.)
    std::thread::sleep(Duration::from_millis(150));
    let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    let mine = format!("{}{}-", ns::PREFIX, pid.as_raw_nonzero());
    assert!(
        ns::list().iter().all(|n| !n.starts_with(&mine)),
        "{:?}",
        ns::list()
    );
    let recorded = count(&db, "SELECT count(*) FROM runs");
    assert!((2..40).contains(&recorded), "{recorded}");
    assert_eq!(failures(&db), Vec::<String>::new());
}

#[test]
fn the_hosts_congestion_control_reaches_the_runs_and_the_database() {
    require_root!();
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let progs = dir.path();
    // A program whose two sides print their namespace's default TCP congestion control.
    let read = "sysctl -n net.ipv4.tcp_congestion_control";
    std::fs::write(
        progs.join("cc-server.sh"),
        format!("echo listening on $2 >&2; {read}"),
    )
    .unwrap();
    std::fs::write(progs.join("cc-client.sh"), read).unwrap();
    let db = progs.join("r.sqlite");
    let db_s = db.to_str().unwrap();
    let program = format!("cc={}", progs.display());
    let out = run(&[
        "testbed",
        "run",
        "--name",
        "reno",
        "--program",
        &program,
        "--rtt",
        "1ms",
        "--runs",
        "2",
        "--timeout",
        "20",
        "--host-cc",
        "reno",
        "--quiet",
        "--db",
        db_s,
    ]);
    assert_eq!(failures(&db), Vec::<String>::new());
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs WHERE garbler_output LIKE '%reno%' AND \
             evaluator_output LIKE '%reno%'"
        ),
        2
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM experiments WHERE host_cc = 'reno'"
        ),
        1
    );
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("hosts' TCP congestion control reno,"),
        "{text}"
    );

    // One the kernel lacks: the experiment stops with the error, nothing recorded as run.
    let out = Command::new(exe())
        .args([
            "testbed",
            "run",
            "--name",
            "none",
            "--program",
            &program,
            "--rtt",
            "1ms",
            "--host-cc",
            "nosuchcc",
            "--quiet",
            "--db",
            db_s,
        ])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{stderr}");
    assert!(
        stderr.contains("TCP congestion control `nosuchcc` for the emulated hosts: not available"),
        "{stderr}"
    );
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM runs r JOIN experiments e ON r.experiment_id = e.id \
             WHERE e.name = 'none'"
        ),
        0
    );
}

#[test]
fn a_transport_the_build_cannot_run_is_left_out_with_a_note() {
    require_root!();
    let Some(missing) = unrunnable_transport() else {
        eprintln!("skipping: every transport of this build runs here");
        return;
    };
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let out = run(&[
        "testbed",
        "run",
        "--circuits",
        "aes128",
        "--transports",
        &format!("tcp,{}", missing.name),
        "--rtt",
        "1ms",
        "--timeout",
        "30",
        "--quiet",
        "--db",
        db.to_str().unwrap(),
    ]);
    assert_eq!(failures(&db), Vec::<String>::new());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("leaving out the transport {}: ", missing.name)),
        "{stderr}"
    );
    assert_eq!(
        count(&db, "SELECT count(*) FROM runs WHERE transport = 'tcp'"),
        1
    );
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 1);
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM experiments WHERE finished_at IS NOT NULL"
        ),
        1
    );
}

#[test]
fn a_resumed_experiment_leaves_out_a_transport_the_build_cannot_run_and_stays_unfinished() {
    require_root!();
    let Some(missing) = unrunnable_transport() else {
        eprintln!("skipping: every transport of this build runs here");
        return;
    };
    let _g = lock();
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("r.sqlite");
    let db_s = db.to_str().unwrap();
    run(&[
        "testbed",
        "run",
        "--circuits",
        "aes128",
        "--transports",
        "tcp",
        "--rtt",
        "1ms",
        "--timeout",
        "30",
        "--quiet",
        "--db",
        db_s,
    ]);
    // As if a build that runs `missing` had started it with tcp and `missing`, and been
    // stopped after the tcp run.
    let c = Connection::open(&db).unwrap();
    let spec: String = c
        .query_row("SELECT spec FROM experiments", [], |r| r.get(0))
        .unwrap();
    let mut spec: serde_json::Value = serde_json::from_str(&spec).unwrap();
    spec["transports"] = serde_json::json!(["tcp", missing.name]);
    c.execute(
        "UPDATE experiments SET spec = ?1, planned_runs = 2, finished_at = NULL",
        [spec.to_string()],
    )
    .unwrap();
    drop(c);
    let id = count(&db, "SELECT id FROM experiments").to_string();
    let out = run(&["testbed", "run", "--resume", &id, "--quiet", "--db", db_s]);
    assert_eq!(failures(&db), Vec::<String>::new());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("leaving out the transport {}: ", missing.name)),
        "{stderr}"
    );
    assert_eq!(count(&db, "SELECT count(*) FROM runs"), 1);
    // Its run stays to do, for a build that can run it.
    assert_eq!(
        count(
            &db,
            "SELECT count(*) FROM experiments WHERE finished_at IS NULL AND planned_runs = 2"
        ),
        1
    );
}

/// A transport this build lists but cannot run: udt in a build without the `udt` feature
/// (whose runs were once recorded as failures, "transport 'udt' is not in this build").
/// `None` in a build that runs every transport here.
fn unrunnable_transport() -> Option<transputation_transport::TransportInfo> {
    transputation_transport::transports()
        .into_iter()
        .find(|t| t.available.is_err())
}

/// The experiments' second transport: `udt` (over UDP, unlike `tcp`), or `mtcp` in a build
/// without `udt`.
fn second_transport() -> &'static str {
    if transputation_transport::family("udt").is_some() {
        "udt"
    } else {
        "mtcp"
    }
}
