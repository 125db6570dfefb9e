//! `transputation serve` end to end: the real binary over HTTP on 127.0.0.1, on results
//! databases written by the testbed's own database code (the calls `testbed run` makes to
//! record an experiment and its runs, without a network run) and on one `testbed run`
//! wrote (the experiments crate's schema-version-3 fixture). The list and its filters, an
//! experiment's page, downloads and plots, a comparison, the simulation and its form's
//! messages, the token beyond loopback, and the databases refused at start.

mod common;

use std::path::Path;
use std::process::Stdio;

use common::web::{table_headers, table_rows, temp_db, Server};

use transputation_experiments::db::{Db, Environment, LinkRecord, RunRecord, Status};
use transputation_experiments::experiment::{Cell, ExperimentFile};

/// A run of aes128 (ideal) over `transport` at `rtt_ms`, 100 Mbit/s, as the runner records
/// it.
fn run(transport: &str, rtt_ms: u64, rep: u32, total_ms: f64) -> RunRecord {
    RunRecord {
        total_ms: Some(total_ms),
        ot_ms: Some(2.0),
        garble_ms: Some(3.0),
        eval_ms: Some(4.0),
        transfer_ms: Some(total_ms - 9.0),
        wall_ms: Some(total_ms + 50.0),
        paper_ms: Some(total_ms - 5.0),
        first_output_ms: Some(total_ms + 20.0),
        ..RunRecord::ok(
            Cell {
                circuit: "aes128".into(),
                scheme: "ideal".into(),
                transport: transport.into(),
                condition: format!("rtt-{rtt_ms}ms"),
            },
            rep,
            LinkRecord {
                rtt_us: rtt_ms * 1000,
                rate_bps: Some(100_000_000),
                emulator: "emu".into(),
                ..LinkRecord::default()
            },
        )
    }
}

/// Records an experiment `name` into `db` as `testbed run` does (its description, its
/// environment, each run in its own transaction, then finished if complete): `transports`
/// × RTT 10 and 100 ms × 2 repetitions of aes128, and with `fail` a failed run of `udt`
/// besides. Returns its id.
fn record(db: &Path, name: &str, transports: &[&str], fail: bool) -> i64 {
    let mut db = Db::open(db).unwrap();
    let mut spec = ExperimentFile {
        name: Some(name.into()),
        circuits: vec!["aes128".into()],
        transports: transports.iter().map(|t| t.to_string()).collect(),
        runs: 2,
        ..ExperimentFile::default()
    };
    spec.sweep.rtt = vec!["10ms".into(), "100ms".into()];
    let planned = transports.len() * 2 * 2 + usize::from(fail);
    let env = Environment::detect("0.1.0", None, "emu", "cubic", "on");
    let id = db
        .create_experiment(name, &serde_json::to_string(&spec).unwrap(), planned, &env)
        .unwrap();
    db.set_link_environment(id, "emu", "cubic").unwrap();
    for (i, t) in transports.iter().enumerate() {
        for rtt in [10, 100] {
            for rep in 0..2 {
                let total = (rtt * 6) as f64 + 10.0 * i as f64 + rep as f64;
                db.insert_run(id, &run(t, rtt, rep, total)).unwrap();
            }
        }
    }
    if fail {
        let r = run("udt", 10, 2, 0.0);
        let failed = RunRecord::failed(
            r.cell,
            2,
            r.link,
            Status::Failed,
            "connection refused".into(),
        );
        db.insert_run(id, &failed).unwrap();
    }
    db.finish_if_complete(id).unwrap();
    id
}

#[test]
fn an_experiment_recorded_by_the_testbed_has_its_table_plots_and_downloads() {
    let (_dir, db) = temp_db();
    let id = record(&db, "wan <sweep>", &["tcp", "udt"], true);
    let before = std::fs::read(&db).unwrap();
    let server = Server::start(&db, &[]);

    // The list: the experiment, its name escaped, linked by id.
    let list = server.get("/").ok();
    assert!(
        list.contains(&format!(
            "<a href=\"/experiments/{id}\">wan &lt;sweep&gt;</a>"
        )),
        "{list}"
    );
    let rows = table_rows(&list, "experiments");
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][3], "9 of 9");
    assert_eq!(rows[0][4], "1", "one failed run");
    assert_eq!(rows[0][7], "tcp, udt");

    // Its page: the paper's Table 4 shape, a column per transport and a row per condition,
    // the best in bold; the failure table; a plot per varied axis.
    let page = server.get(&format!("/experiments/{id}")).ok();
    let headers = table_headers(&page, &format!("report-{id}"));
    assert_eq!(&headers[..3], ["circuit", "scheme", "condition"]);
    assert!(headers.contains(&"tcp".into()) && headers.contains(&"udt".into()));
    assert_eq!(headers.last().unwrap(), "best");
    let rows = table_rows(&page, &format!("report-{id}"));
    assert_eq!(rows.len(), 2, "{rows:?}");
    let tcp = headers.iter().position(|h| h == "tcp").unwrap();
    let udt = headers.iter().position(|h| h == "udt").unwrap();
    // tcp at 10 ms: 60 and 61 ms, the best (udt failed a run there).
    assert_eq!(rows[0][2], "rtt-10ms");
    assert_eq!(rows[0][tcp], "<strong>60.5 ± 0.7</strong>");
    assert_eq!(rows[0][udt], "70.5 ± 0.7 (1 of 3 failed)");
    assert_eq!(rows[0].last().unwrap(), "tcp");
    assert_eq!(rows[1][udt], "610.5 ± 0.7");
    let failures = table_rows(&page, &format!("failures-{id}"));
    assert_eq!(failures[0][0], "rtt-10ms");
    assert!(page.contains("Choose Wisely"), "{page}");
    let plot = format!("/experiments/{id}/plots/aes128-time-vs-rtt");
    assert!(
        page.contains(&format!("<img class=\"plot\" src=\"{plot}.svg\"")),
        "{page}"
    );

    // The plot itself, as the testbed draws it: a line per transport.
    let svg = server.get(&format!("{plot}.svg"));
    assert_eq!(svg.content_type, "image/svg+xml");
    let svg = svg.ok();
    assert!(
        svg.starts_with("<svg") && svg.contains("round-trip time (ms)"),
        "{svg}"
    );
    assert_eq!(svg.matches("<polyline").count(), 2);
    let png = server.get(&format!("{plot}.png"));
    assert_eq!(png.content_type, "image/png");
    assert_eq!(&png.body[..8], b"\x89PNG\r\n\x1a\n");
    assert_eq!(server.get(&format!("{plot}-2.svg")).status, 404);

    // CSV: a line per condition and transport, as `testbed report --format csv`.
    let csv = server.get(&format!("/experiments/{id}.csv"));
    assert!(
        csv.content_type.starts_with("text/csv"),
        "{}",
        csv.content_type
    );
    let csv = csv.ok();
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| lines[0].iter().position(|h| *h == name).unwrap();
    assert_eq!(lines.len(), 1 + 2 * 2, "{csv}");
    let cells: Vec<(&str, &str)> = lines[1..]
        .iter()
        .map(|l| (l[col("condition")], l[col("transport")]))
        .collect();
    assert_eq!(
        cells,
        [
            ("rtt-10ms", "tcp"),
            ("rtt-10ms", "udt"),
            ("rtt-100ms", "tcp"),
            ("rtt-100ms", "udt")
        ]
    );
    assert_eq!(lines[1][col("mean_ms")], "60.500");
    assert_eq!(lines[2][col("failed")], "1");
    // With the RTT unit, its columns too.
    let csv = server.get(&format!("/experiments/{id}.csv?unit=rtt")).ok();
    assert!(csv.lines().next().unwrap().contains(",mean_rtt,"), "{csv}");
    let json: serde_json::Value =
        serde_json::from_slice(&server.get(&format!("/experiments/{id}.json")).body).unwrap();
    assert_eq!(json["transports"], serde_json::json!(["tcp", "udt"]));
    assert_eq!(json["experiment"]["name"], "wan <sweep>");

    // By name as well as by id, as `testbed report` names it.
    let by_name = server.get("/experiments/wan%20%3Csweep%3E").ok();
    assert!(by_name.contains(&format!("report-{id}")));
    // The server only read the file.
    drop(server);
    assert!(
        std::fs::read(&db).unwrap() == before,
        "the database file changed"
    );
}

#[test]
fn filters_keep_only_what_matches() {
    let (_dir, db) = temp_db();
    let lan = record(&db, "lan-tcp", &["tcp"], false);
    let wan = record(&db, "wan-quic", &["quic", "udt"], true);
    // Just started: recorded, with no run yet; its description names what it plans.
    let spec = ExperimentFile {
        circuits: vec!["sha256".into()],
        transports: vec!["mtcp:streams=8".into()],
        ..ExperimentFile::default()
    };
    let env = Environment::detect("0.1.0", None, "emu", "cubic", "on");
    let started = Db::open(&db)
        .unwrap()
        .create_experiment("started", &serde_json::to_string(&spec).unwrap(), 6, &env)
        .unwrap()
        .to_string();
    let started = started.as_str();
    let server = Server::start(&db, &[]);
    let ids = |query: &str| -> Vec<String> {
        let page = server.get(&format!("/{query}")).ok();
        if !page.contains("<table id=\"experiments\">") {
            return Vec::new();
        }
        table_rows(&page, "experiments")
            .into_iter()
            .map(|r| r[0].clone())
            .collect()
    };
    let (lan, wan) = (lan.to_string(), wan.to_string());
    let (lan, wan) = (lan.as_str(), wan.as_str());
    assert_eq!(ids(""), [started, wan, lan], "newest first");
    assert_eq!(ids("?name=LAN"), [lan]);
    assert_eq!(ids("?name=nothing-like-it"), Vec::<String>::new());
    assert_eq!(ids("?transport=quic"), [wan]);
    assert_eq!(ids("?transport=tcp&name=wan"), Vec::<String>::new());
    assert_eq!(ids("?transport=MTCP"), [started]);
    assert_eq!(ids("?circuit=aes128"), [wan, lan]);
    assert_eq!(ids("?circuit=sha256"), [started]);
    assert_eq!(ids("?circuit=mincut"), Vec::<String>::new());
    assert_eq!(ids("?status=failures"), [wan]);
    assert_eq!(ids("?status=finished"), [wan, lan]);
    assert_eq!(ids("?status=unfinished"), [started]);
    let page = server.get("/?status=unfinished").ok();
    let row = &table_rows(&page, "experiments")[0];
    assert_eq!(
        (row[3].as_str(), row[5].as_str()),
        ("0 of 6", "not finished")
    );
    // Its page says it has no run yet.
    let page = server.get(&format!("/experiments/{started}")).ok();
    assert!(page.contains("No run is recorded yet."), "{page}");
    let page = server.get("/?name=nothing-like-it").ok();
    assert!(
        page.contains("No experiment of the 3 matches the filters."),
        "{page}"
    );
    // The form keeps what was asked.
    assert!(page.contains("value=\"nothing-like-it\""), "{page}");
    // A status it does not know: said beside the field.
    let page = server.get("/?status=done").ok();
    assert!(
        page.contains("<span class=\"error\" id=\"status-error\">&#39;done&#39; is not a status"),
        "{page}"
    );
}

#[test]
fn two_experiments_side_by_side_and_unknown_ones_named() {
    let (_dir, db) = temp_db();
    let a = record(&db, "first", &["tcp"], false);
    let b = record(&db, "second", &["udt"], false);
    let server = Server::start(&db, &[]);
    let page = server.get(&format!("/compare?a={a}&b=second")).ok();
    let side = &page[page.find("class=\"side-by-side\"").expect("two columns")..];
    let (at, bt) = (
        side.find(&format!("report-{a}")).unwrap(),
        side.find(&format!("report-{b}")).unwrap(),
    );
    assert!(at < bt);
    assert_eq!(table_headers(&page, &format!("report-{b}"))[3], "udt");
    // The form alone without a choice.
    let form = server.get("/compare").ok();
    assert!(!form.contains("class=\"side-by-side\"") && form.contains("<select id=\"a\""));

    // An unknown experiment: a 404 that names it, on every page that takes one.
    for (path, name) in [
        ("/experiments/nosuch".to_string(), "nosuch"),
        ("/experiments/nosuch.csv".to_string(), "nosuch"),
        (
            "/experiments/nosuch/plots/aes128-time-vs-rtt.svg".to_string(),
            "nosuch",
        ),
        (
            format!("/compare?a={a}&b=missing%3Cone%3E"),
            "missing&lt;one&gt;",
        ),
        ("/experiments/999".to_string(), "999"),
    ] {
        let answer = server.get(&path);
        assert_eq!(answer.status, 404, "{path}");
        let text = answer.text();
        assert!(
            text.contains(&format!("There is no experiment &quot;{name}&quot;")),
            "{path}: {text}"
        );
    }
    assert_eq!(server.get("/no/such/page").status, 404);
    assert_eq!(server.get(&format!("/experiments/{a}?unit=s")).status, 400);
}

#[test]
fn simulate_predicts_every_transport_as_select_does() {
    let (_dir, db) = temp_db();
    record(&db, "x", &["tcp"], false);
    let server = Server::start(&db, &[]);
    let page = server
        .get("/simulate?rtt=100ms&rate=100mbit&loss=0.1%25&circuit=aes128&scheme=ideal")
        .ok();
    let rows = table_rows(&page, "prediction");
    let mut on_page: Vec<String> = rows.iter().map(|r| r[0].clone()).collect();

    // The command line, with the same (absent) calibration.
    let out = common::bin()
        .args([
            "select",
            "--simulate",
            "--rtt",
            "100ms",
            "--rate",
            "100mbit",
            "--loss",
            "0.1%",
            "--circuit",
            "aes128",
            "--scheme",
            "ideal",
            "--json",
        ])
        .env("XDG_CONFIG_HOME", server.config.path())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut from_select: Vec<String> = v["decision"]["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap().to_string())
        .collect();
    assert!(
        from_select.iter().any(|t| t.starts_with("tcp")) && from_select.len() > 3,
        "{from_select:?}"
    );
    // The same transports (their order may differ where the measured set-up differs).
    on_page.sort();
    from_select.sort();
    assert_eq!(on_page, from_select);
    // Each with a predicted time in ms, or why it cannot carry the session.
    for r in &rows {
        assert!(
            r[1].parse::<f64>().is_ok() || r[5].starts_with("unsuitable"),
            "{r:?}"
        );
    }
    assert!(
        page.contains("RTT 100 ms, 100 Mbit/s, loss 0.1 %"),
        "{page}"
    );
    assert!(page.contains("choice: "), "{page}");
}

#[test]
fn simulate_answers_bad_input_beside_its_field() {
    let (_dir, db) = temp_db();
    record(&db, "x", &["tcp"], false);
    let server = Server::start(&db, &[]);
    let answer =
        server.get("/simulate?rtt=100ms&rate=fast&loss=200%25&circuit=aes128&scheme=ideal");
    assert_eq!(answer.status, 400);
    let page = answer.text();
    let field = |name: &str| page.find(&format!("<input id=\"{name}\"")).unwrap();
    let rate_error = page
        .find("<span class=\"error\" id=\"rate-error\">&#39;fast&#39; is not a rate")
        .unwrap_or_else(|| panic!("{page}"));
    assert!(
        field("rate") < rate_error && rate_error < field("loss"),
        "{page}"
    );
    let loss_error = page
        .find("<span class=\"error\" id=\"loss-error\">&#39;200%&#39; is not a loss rate")
        .unwrap_or_else(|| panic!("{page}"));
    assert!(field("loss") < loss_error && loss_error < field("circuit"));
    assert!(!page.contains("id=\"rtt-error\"") && !page.contains("<table id=\"prediction\""));
    // What was given stays in the form.
    assert!(
        page.contains("<input id=\"rate\" name=\"rate\" value=\"fast\""),
        "{page}"
    );
    // A file name is not a built-in circuit: refused, not read.
    let answer = server.get("/simulate?rtt=1ms&rate=1gbit&circuit=%2Fetc%2Fpasswd");
    assert_eq!(answer.status, 400);
    assert!(answer.text().contains("id=\"circuit-error\""));
    // The first visit: the form alone.
    let page = server.get("/simulate").ok();
    assert!(page.contains("value=\"100mbit\"") && !page.contains("class=\"error\""));
}

#[test]
fn a_circuit_too_large_to_simulate_is_said_beside_its_field_and_the_server_goes_on() {
    let (_dir, db) = temp_db();
    record(&db, "x", &["tcp"], false);
    let server = Server::start(&db, &[]);
    // 10^9 AND gates are generated as they are read: counted, not built, and predicted.
    let answer =
        server.get("/simulate?rtt=10ms&rate=1gbit&loss=0&circuit=synthetic:and=1000000000");
    assert_eq!(answer.status, 200, "{}", answer.text());
    // Within the built-in's bounds (10^9 XOR gates without levels, which are held),
    // beyond a simulation's memory here.
    let answer =
        server.get("/simulate?rtt=10ms&rate=1gbit&loss=0&circuit=synthetic:and=0,xor=1000000000");
    assert_eq!(answer.status, 422);
    let page = answer.text();
    let message = page
        .find(
            "<span class=\"error\" id=\"circuit-error\">synthetic:and=0,xor=1000000000 is \
             too large",
        )
        .unwrap_or_else(|| panic!("{page}"));
    assert!(page.find("<input id=\"circuit\"").unwrap() < message);
    assert!(page.contains("GiB of memory"), "{page}");
    // The server itself still answers, and the next simulation runs.
    let page = server
        .get("/simulate?rtt=10ms&rate=1gbit&loss=0&circuit=aes128")
        .ok();
    assert!(page.contains("<table id=\"prediction\">"), "{page}");
}

#[test]
fn beyond_loopback_every_request_needs_the_token() {
    let (dir, db) = temp_db();
    let id = record(&db, "x", &["tcp"], false);
    let token = "c0ffee-0123456789-abcdef";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let server = Server::start_with(&[
        "--listen",
        "0.0.0.0:0",
        "--db",
        db.to_str().unwrap(),
        "--token-file",
        token_file.to_str().unwrap(),
    ]);
    let paths = [
        "/".to_string(),
        format!("/experiments/{id}"),
        format!("/experiments/{id}.csv"),
        "/simulate".to_string(),
    ];
    for path in &paths {
        let refused = server.get(path);
        assert_eq!(refused.status, 401, "{path}");
        let text = refused.text();
        assert!(text.contains("A token is needed"), "{text}");
        assert!(!text.contains(token));
    }
    let wrong = server.get_with("/", &[("Authorization", "Bearer c0ffee-0123456789-abcdeF")]);
    assert_eq!(wrong.status, 401);
    let bearer = format!("Bearer {token}");
    let page = server
        .get_with(
            &format!("/experiments/{id}"),
            &[("Authorization", bearer.as_str())],
        )
        .ok();
    assert!(page.contains(&format!("report-{id}")));

    // The browser's way: /?token=TOKEN once sets the cookie and leaves the address.
    let visit = server.get(&format!("/?token={token}"));
    assert_eq!(visit.status, 303);
    assert_eq!(visit.location, "/");
    let cookie = visit.set_cookie[0].split(';').next().unwrap().to_string();
    assert_eq!(cookie, format!("transputation_token={token}"));
    assert!(visit.set_cookie[0].contains("HttpOnly"));
    let page = server.get_with("/", &[("Cookie", cookie.as_str())]).ok();
    assert!(page.contains(&format!("<a href=\"/experiments/{id}\">")));
    assert_eq!(server.get("/?token=not-the-token-at-all").status, 401);
}

#[test]
fn a_loopback_listener_without_a_token_serves_only_loopback_names() {
    let (_dir, db) = temp_db();
    record(&db, "x", &["tcp"], false);
    let server = Server::start(&db, &[]);
    assert_eq!(
        server.get_with("/", &[("Host", "localhost:8080")]).status,
        200
    );
    let rebound = server.get_with("/", &[("Host", "attacker.example:8080")]);
    assert_eq!(rebound.status, 403);
    assert!(rebound.text().contains("attacker.example"));
}

/// `transputation serve ARGS`, which must exit at once with an error; its standard error.
fn refused(args: &[&str]) -> String {
    let out = common::bin()
        .arg("serve")
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success(), "serve {args:?} started");
    String::from_utf8(out.stderr).unwrap()
}

#[test]
fn serve_refuses_a_listener_beyond_loopback_without_a_good_token_file() {
    let (dir, db) = temp_db();
    record(&db, "x", &["tcp"], false);
    let db = db.to_str().unwrap();
    let e = refused(&["--listen", "0.0.0.0:0", "--db", db]);
    assert!(
        e.contains("refusing to listen on 0.0.0.0 without --token-file")
            && e.contains("not a loopback address"),
        "{e}"
    );
    let short = dir.path().join("short");
    std::fs::write(&short, "tooshort\n").unwrap();
    let e = refused(&[
        "--listen",
        "0.0.0.0:0",
        "--db",
        db,
        "--token-file",
        short.to_str().unwrap(),
    ]);
    assert!(e.contains("has 8 characters; at least 16"), "{e}");
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let e = refused(&[
        "--listen",
        "127.0.0.1:0",
        "--db",
        db,
        "--token-file",
        empty.to_str().unwrap(),
    ]);
    assert!(e.contains("is empty"), "{e}");
}

#[test]
fn a_missing_or_older_database_is_refused_naming_it() {
    let (dir, db) = temp_db();
    // Missing: named, and not created.
    let e = refused(&["--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()]);
    assert!(
        e.contains(&format!("no results database at {}", db.display())),
        "{e}"
    );
    assert!(!db.exists());

    // Schema version 7, made as the database's own tests make one: today's tables without
    // version 8's columns.
    record(&db, "old", &["tcp"], false);
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "ALTER TABLE runs DROP COLUMN garbler_backend; \
         ALTER TABLE runs DROP COLUMN evaluator_backend; PRAGMA user_version = 7;",
    )
    .unwrap();
    drop(c);
    let e = refused(&["--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()]);
    let current = transputation_experiments::db::SCHEMA_VERSION;
    assert!(
        e.contains(&format!(
            "its schema is version 7, older than this tool's {current}"
        )) && e.contains("transputation testbed experiments --db"),
        "{e}"
    );
    // Left as it was.
    let c = rusqlite::Connection::open(&db).unwrap();
    let v: i64 = c
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(v, 7);

    let not_db = dir.path().join("notes.txt");
    std::fs::write(&not_db, "not a database at all, just some text\n").unwrap();
    let e = refused(&["--listen", "127.0.0.1:0", "--db", not_db.to_str().unwrap()]);
    assert!(e.contains(&not_db.display().to_string()), "{e}");
}

#[test]
fn experiments_written_by_testbed_run_show_once_their_old_database_is_brought_up_to_date() {
    // Two experiments `transputation testbed run` wrote (schema version 3), as the
    // experiments crate keeps them for its own test of old files.
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../experiments/tests/fixtures/results-v3.sqlite");
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    std::fs::copy(&fixture, &db).unwrap();
    let db_s = db.to_str().unwrap();
    let e = refused(&["--listen", "127.0.0.1:0", "--db", db_s]);
    assert!(
        e.contains("its schema is version 3, older than this tool's"),
        "{e}"
    );

    // The testbed brings it up to date, as the message says; then the web UI shows it.
    let out = common::run(&["testbed", "experiments", "--db", db_s]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let server = Server::start(&db, &[]);
    let listed = table_rows(&server.get("/").ok(), "experiments");
    let names: Vec<&str> = listed.iter().map(|r| r[1].as_str()).collect();
    assert!(
        names[0].ends_with(">fixture-timeout</a>") && names[1].ends_with(">fixture</a>"),
        "{names:?}"
    );
    let id = &listed[1][0];
    let page = server.get("/experiments/fixture").ok();
    let table = format!("report-{id}");
    let headers = table_headers(&page, &table);
    assert_eq!(&headers[3..], ["tcp", "mtcp:streams=2", "best"]);
    let rows = table_rows(&page, &table);
    assert_eq!(
        rows,
        [[
            "aes128",
            "ideal",
            "lan",
            "5440.3",
            "<strong>5126.3</strong>",
            "mtcp:streams=2 (1.06× tcp)"
        ]]
    );
    assert!(page.contains("was not recorded for these runs"), "{page}");
    // The experiment that timed out: its failure table.
    let page = server.get("/experiments/fixture-timeout").ok();
    assert!(page.contains("<table id=\"failures-"), "{page}");
}
