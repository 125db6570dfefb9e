//! Real experiments started from `transputation serve`'s page, end to end: composed and
//! started over HTTP, watched through the job's server-sent events to the end (a second one
//! waiting in line meanwhile), the report and the CSV read back; and one cancelled halfway,
//! then resumed from its page to the end; an uploaded circuit and a user program registered
//! on the page, each run like a built-in.
//!
//! Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2, as `testbed run` does; without
//! them each test says why and passes without running.

mod common;

use std::sync::mpsc::Receiver;
use std::time::Duration;

use common::web::{next_event, table_headers, table_rows, temp_db, Form, Server};
use transputation_experiments::db::Db;

/// Skips the test, saying why, where network namespaces cannot be built.
macro_rules! require_root {
    () => {
        if let Some(why) = common::netns_missing() {
            eprintln!("skipping the web UI's testbed test: {why}");
            return;
        }
    };
}

/// The next event, as (name, JSON), waiting at most five minutes.
fn next(events: &Receiver<(String, String)>) -> (String, serde_json::Value) {
    next_event(events, Duration::from_secs(300))
}

/// An experiment of aes128 (ideal) over `transports` on `lan`, `runs` times.
fn form(name: &str, transports: &str, runs: &str) -> Form {
    form_on(name, transports, runs, "lan")
}

/// [`form`] on the named condition `condition`.
fn form_on(name: &str, transports: &str, runs: &str, condition: &str) -> Form {
    Form::of(&[
        ("name", name),
        ("circuits", "aes128"),
        ("schemes", "ideal"),
        ("transports", transports),
        ("conditions", condition),
        ("runs", runs),
        ("timeout", "120"),
    ])
}

/// Job `id`'s page once its `data-state` is one of `states` (at most five minutes).
fn job_page_when(server: &Server, id: u64, states: &[&str]) -> String {
    server.job_page_when(id, states, Duration::from_secs(300))
}

#[test]
fn an_experiment_composed_on_the_page_runs_to_its_report_while_another_waits() {
    require_root!();
    let (_dir, db) = temp_db();
    Db::open(&db).unwrap();
    let server = Server::start(&db, &[]);
    let started = server.submit("/run", &form("page", "tcp;tcp-bbr", "2"));
    assert_eq!(started.status, 303, "{}", started.text());
    assert_eq!(started.location, "/jobs/1");
    // A second one waits for the first, and says so; cancelled, it leaves the line.
    let second = server.submit("/run", &form("second", "tcp", "1"));
    assert_eq!(second.location, "/jobs/2");
    let waiting = server.get("/jobs/2").ok();
    assert!(waiting.contains("data-state=\"queued\""), "{waiting}");
    assert!(
        waiting.contains("Waiting behind job <a href=\"/jobs/1\">1</a>"),
        "{waiting}"
    );
    let cancelled = server.submit("/jobs/2/cancel", &Form::default());
    assert_eq!(cancelled.status, 303);
    job_page_when(&server, 2, &["cancelled"]);

    // Watched to the end: progress only moves forward, a run event per run.
    let events = server.events("/jobs/1/events");
    let (mut recorded, mut runs, mut experiment) = (0, Vec::new(), None);
    let why = loop {
        let (event, data) = next(&events);
        match event.as_str() {
            "job" => experiment = data["experiment"].as_i64().or(experiment),
            "progress" => {
                let now = data["recorded"].as_i64().unwrap();
                assert!(now >= recorded, "progress went back: {data}");
                assert_eq!(data["planned"], 4, "{data}");
                recorded = now;
            }
            "run" => runs.push(data),
            "end" => break data["why"].as_str().unwrap().to_string(),
            other => panic!("{other}: {data}"),
        }
    };
    assert!(why == "finished" || why == "ended", "{why}");
    assert_eq!(recorded, 4);
    assert_eq!(runs.len(), 4);
    for r in &runs {
        assert_eq!(r["failed"], false, "{r}");
    }
    let transports: Vec<&str> = runs
        .iter()
        .map(|r| r["cells"][2].as_str().unwrap())
        .collect();
    assert_eq!(transports.iter().filter(|t| **t == "tcp").count(), 2);
    assert_eq!(transports.iter().filter(|t| **t == "tcp-bbr").count(), 2);
    let id = experiment.expect("the job named its experiment");

    // The job's page shows the report; the experiment's page and its CSV have both.
    let page = job_page_when(&server, 1, &["ended"]);
    assert!(
        page.contains(&format!("<table id=\"report-{id}\">")),
        "{page}"
    );
    let report = server.get(&format!("/experiments/{id}")).ok();
    let headers = table_headers(&report, &format!("report-{id}"));
    let rows = table_rows(&report, &format!("report-{id}"));
    // A column of each transport: `tcp` as a header of its own, not inside `tcp-bbr`.
    assert!(
        ["tcp", "tcp-bbr"].iter().all(|t| headers
            .iter()
            .any(|h| h.starts_with(t) && !h[t.len()..].starts_with('-'))),
        "{headers:?} {rows:?}"
    );
    assert!(
        !report.contains("action=\"/experiments/"),
        "finished: nothing to resume"
    );
    let csv = server.get(&format!("/experiments/{id}.csv")).ok();
    assert!(csv.contains("tcp-bbr"), "{csv}");
    // Job 2 never ran: one experiment in the database.
    assert_eq!(Db::open(&db).unwrap().experiments().unwrap().len(), 1);
}

#[test]
fn an_experiment_cancelled_halfway_is_resumed_from_its_page_to_the_end() {
    require_root!();
    let (_dir, db) = temp_db();
    Db::open(&db).unwrap();
    let server = Server::start(&db, &[]);
    // On a long link (100 ms), so that runs are still to come when the first one is
    // recorded: on the LAN all four may be done by then.
    let started = server.submit("/run", &form_on("halfway", "tcp", "4", "eu-us"));
    assert_eq!(started.location, "/jobs/1", "{}", started.text());
    let events = server.events("/jobs/1/events");
    let mut experiment = None;
    loop {
        let (event, data) = next(&events);
        if event == "job" {
            experiment = data["experiment"].as_i64().or(experiment);
        }
        if event == "run" || event == "end" {
            break;
        }
    }
    let id = experiment.expect("the job named its experiment");
    // The list says who runs it.
    let list = server.get("/").ok();
    assert!(
        list.contains("running: <a href=\"/jobs/1\">job 1</a>"),
        "{list}"
    );
    assert_eq!(
        server.submit("/jobs/1/cancel", &Form::default()).status,
        303
    );
    let page = job_page_when(&server, 1, &["cancelled", "ended"]);
    let recorded = Db::open(&db).unwrap().runs(id).unwrap().len();
    if page.contains("data-state=\"ended\"") {
        eprintln!("the experiment ended before the cancel reached it; nothing to resume");
        return;
    }
    assert!(page.contains("resume goes on"), "{page}");
    assert!(recorded < 4, "{recorded}");
    // testbed run's interrupt removed its namespaces: every one left belongs to a live
    // process (another experiment's).
    let list = std::process::Command::new("ip")
        .args(["netns", "list"])
        .output()
        .unwrap();
    for line in String::from_utf8_lossy(&list.stdout).lines() {
        let name = line.split_whitespace().next().unwrap_or("");
        if let Some(pid) = name.strip_prefix("tpb-").and_then(|r| r.split('-').next()) {
            assert!(
                std::path::Path::new(&format!("/proc/{pid}")).exists(),
                "{name} outlived its testbed run"
            );
        }
    }
    let resumed = server.submit(&format!("/experiments/{id}/resume"), &Form::default());
    assert_eq!(resumed.status, 303, "{}", resumed.text());
    assert_eq!(resumed.location, "/jobs/2");
    let page = job_page_when(&server, 2, &["ended", "failed"]);
    assert!(page.contains("data-state=\"ended\""), "{page}");
    let db = Db::open(&db).unwrap();
    let row = db.experiment(id).unwrap().unwrap();
    assert!(row.finished_at.is_some(), "{row:?}");
    assert_eq!(db.runs(id).unwrap().len(), 4);
}

#[test]
fn an_uploaded_bristol_circuit_runs_as_the_experiments_circuit() {
    require_root!();
    let (dir, db) = temp_db();
    Db::open(&db).unwrap();
    let server = Server::start(&db, &[]);
    // Bristol Fashion: the AND of the garbler's bit and the evaluator's.
    let and = "1 3\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n";
    let form = Form::of(&[
        ("name", "uploaded"),
        ("circuits", ""),
        ("schemes", "ideal"),
        ("transports", "tcp"),
        ("conditions", "lan"),
        ("runs", "1"),
        ("timeout", "120"),
    ])
    .file("upload", "and.txt", and.into());
    let started = server.submit("/run", &form);
    assert_eq!(started.status, 303, "{}", started.text());
    let page = job_page_when(&server, 1, &["ended", "failed"]);
    assert!(page.contains("data-state=\"ended\""), "{page}");
    let stored: Vec<_> = std::fs::read_dir(dir.path().join("circuits"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(stored.len(), 1);
    let db = Db::open(&db).unwrap();
    let row = db.experiments().unwrap().pop().unwrap();
    let runs = db.runs(row.id).unwrap();
    assert_eq!(runs.len(), 1);
    assert_eq!(
        runs[0].status,
        transputation_experiments::db::Status::Ok,
        "{runs:?}"
    );
    // The experiment names the stored file by its path, absolute, as a resume finds it.
    assert_eq!(runs[0].cell.circuit, stored[0].to_str().unwrap());
}

#[test]
fn a_program_registered_on_the_page_runs_like_a_circuit() {
    require_root!();
    let (dir, db) = temp_db();
    Db::open(&db).unwrap();
    let server = Server::start(&db, &[]);
    // The sample pair the repository ships: an AES-128 session's two parties.
    let sample =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../experiments/programs/twopc");
    let script = |side: &str| std::fs::read(sample.join(format!("twopc-{side}.sh"))).unwrap();
    let register = Form::of(&[("name", "twopc")])
        .file("server", "twopc-server.sh", script("server"))
        .file("client", "twopc-client.sh", script("client"));
    let registered = server.submit("/programs", &register);
    assert_eq!(registered.status, 303, "{}", registered.text());
    let listed = server.get("/programs").ok();
    assert_eq!(table_rows(&listed, "programs").len(), 1, "{listed}");
    let offered = server.get("/run").ok();
    assert!(offered.contains("id=\"program-twopc\""), "{offered}");

    let form = Form::of(&[
        ("name", "program"),
        ("circuits", ""),
        ("programs", "twopc"),
        ("schemes", "ideal"),
        ("transports", "tcp;tcp-bbr"),
        ("conditions", "lan"),
        ("runs", "1"),
        ("timeout", "120"),
    ]);
    let started = server.submit("/run", &form);
    assert_eq!(started.status, 303, "{}", started.text());
    let page = job_page_when(&server, 1, &["ended", "failed"]);
    assert!(page.contains("data-state=\"ended\""), "{page}");
    let db = Db::open(&db).unwrap();
    let row = db.experiments().unwrap().pop().unwrap();
    let runs = db.runs(row.id).unwrap();
    assert_eq!(runs.len(), 2, "{runs:?}");
    for r in &runs {
        assert_eq!(r.status, transputation_experiments::db::Status::Ok, "{r:?}");
        assert_eq!(r.cell.circuit, "twopc");
        assert_eq!(r.cell.scheme, "program");
    }
    // The client's output, FIPS-197's ciphertext, is kept with its run.
    let output = runs[0].evaluator_output.as_deref().unwrap_or_default();
    assert!(
        output.contains("69c4e0d86a7b0430d8cdb78070b4c55a"),
        "{output}"
    );
    // The experiment names the stored pair's directory beside the database.
    let spec: serde_json::Value = serde_json::from_str(&row.spec).unwrap();
    assert_eq!(
        spec["programs"]["twopc"],
        dir.path().join("programs/twopc").to_str().unwrap()
    );
}
