//! `transputation serve` starting experiments, end to end over HTTP on 127.0.0.1, without
//! building a link: the composing form's messages beside its fields (a bad rate, an unknown
//! transport, a malformed or too large upload), a Bristol upload kept beside the database,
//! the server-sent events delivering runs as the testbed's database code records them, a
//! started or resumed experiment being `testbed run` with the form's flags (run here
//! without the privileges a link needs, so it stops at that check, whose error the page
//! shows), and the rules a POST must pass: this server's Origin, and the token beyond
//! loopback. `testbed_web.rs` runs real experiments from the page, as root.

mod common;

use std::path::Path;
use std::time::Duration;

use common::web::{next_event, table_rows, temp_db, Form, Server};
use transputation_experiments::db::{Db, Environment, LinkRecord, RunRecord, Status};
use transputation_experiments::experiment::{Cell, ExperimentFile};

/// A run of aes128 over `transport` on `lan`, as the runner records it.
fn run(transport: &str, rep: u32, total_ms: f64) -> RunRecord {
    RunRecord {
        total_ms: Some(total_ms),
        ..RunRecord::ok(
            Cell {
                circuit: "aes128".into(),
                scheme: "ideal".into(),
                transport: transport.into(),
                condition: "lan".into(),
            },
            rep,
            LinkRecord {
                rtt_us: 1000,
                rate_bps: Some(1_000_000_000),
                emulator: "emu".into(),
                ..LinkRecord::default()
            },
        )
    }
}

/// Records an experiment of `planned` runs (aes128 over tcp and udt on lan) as `testbed
/// run` does; returns the database open for more runs, and its id.
fn experiment(db: &Path, name: &str, planned: usize) -> (Db, i64) {
    let db = Db::open(db).unwrap();
    let spec = ExperimentFile {
        name: Some(name.into()),
        circuits: vec!["aes128".into()],
        transports: vec!["tcp".into(), "udt".into()],
        conditions: vec!["lan".into()],
        runs: (planned / 2) as u32,
        ..ExperimentFile::default()
    };
    let env = Environment::detect("0.1.0", None, "emu", "cubic", "on");
    let id = db
        .create_experiment(name, &serde_json::to_string(&spec).unwrap(), planned, &env)
        .unwrap();
    (db, id)
}

/// A valid form: aes128 over tcp and tcp-bbr on lan, twice.
fn valid_form() -> Form {
    Form::of(&[
        ("name", "from the page"),
        ("circuits", "aes128"),
        ("schemes", "ideal"),
        ("transports", "tcp;tcp-bbr"),
        ("conditions", "lan"),
        ("runs", "2"),
        ("timeout", "120"),
    ])
}

/// The form `valid_form` with `field` set to `value` instead.
fn form_with(field: &str, value: &str) -> Form {
    let mut fields = vec![
        ("circuits", "aes128"),
        ("schemes", "ideal"),
        ("transports", "tcp;tcp-bbr"),
        ("conditions", "lan"),
        ("runs", "2"),
        ("timeout", "120"),
    ];
    fields.retain(|(f, _)| *f != field);
    fields.push((field, value));
    Form::of(&fields)
}

/// The message of `field` in a page: the text of its `FIELD-error` element, which must come
/// after the field's input and before the next field's.
fn message_beside(html: &str, field: &str, next: &str) -> String {
    let input = html
        .find(&format!("id=\"{field}\""))
        .unwrap_or_else(|| panic!("no field {field}: {html}"));
    let tag = format!("<span class=\"error\" id=\"{field}-error\">");
    let at = html
        .find(&tag)
        .unwrap_or_else(|| panic!("no message for {field}: {html}"));
    let following = html.find(&format!("id=\"{next}\"")).unwrap();
    assert!(
        input < at && at < following,
        "{field}'s message is not beside it"
    );
    let text = &html[at + tag.len()..];
    text[..text.find("</span>").unwrap()].to_string()
}

#[test]
fn bad_fields_are_answered_beside_them_and_start_nothing() {
    let (dir, db) = temp_db();
    experiment(&db, "x", 2);
    let Some(server) = Server::start_unprivileged(&db, &[]) else {
        return;
    };
    let first = server.get("/run").ok();
    assert!(first.contains("id=\"condition-lan\" checked"), "{first}");
    // It says up front that it cannot build links.
    assert!(
        first.contains("<p class=\"error\" id=\"privileges\">"),
        "{first}"
    );
    assert!(first.contains("No experiment started from this page yet."));

    let page = server.submit("/run", &form_with("rate", "100mbit,fast"));
    assert_eq!(page.status, 400, "{}", page.text());
    let html = page.text();
    let rate = message_beside(&html, "rate", "jitter");
    assert!(rate.starts_with("bad rate &quot;fast&quot;"), "{rate}");
    // What was given is kept.
    assert!(html.contains("value=\"100mbit,fast\""));

    let html = server
        .submit("/run", &form_with("transports", "tcp;sctp"))
        .text();
    let t = message_beside(&html, "transports", "condition-lan");
    assert!(
        t.starts_with("there is no transport &#39;sctp&#39; here"),
        "{t}"
    );

    // An upload the reader refuses: its message and line, beside the field; nothing kept.
    let bad = "1 3\n2 1 1\n1 1\n\n2 1 0 7 2 AND\n";
    let form = form_with("circuits", "").file("upload", "bad.txt", bad.into());
    let page = server.submit("/run", &form);
    assert_eq!(page.status, 400);
    let html = page.text();
    let e = message_beside(&html, "upload", "start");
    assert!(
        e.starts_with("bad.txt: line 5: wire 7 is out of range"),
        "{e}"
    );
    assert!(!dir.path().join("circuits").exists());

    // One the reader takes is kept by its digest beside the database, and the form carries
    // its name past another field's message.
    let and = "1 3\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n";
    let form = form_with("rate", "fast").file("upload", "and.txt", and.into());
    let html = server.submit("/run", &form).text();
    let kept: Vec<_> = std::fs::read_dir(dir.path().join("circuits"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(kept.len(), 1);
    assert!(kept[0].starts_with("sha256-"), "{kept:?}");
    assert!(
        html.contains(&format!("name=\"uploaded\" value=\"{}\"", kept[0])),
        "{html}"
    );
    let stored = std::fs::read_to_string(dir.path().join("circuits").join(&kept[0])).unwrap();
    assert_eq!(stored, and);
    // A stored name is looked up in that directory alone.
    let html = server
        .submit("/run", &form_with("uploaded", "../results.sqlite"))
        .text();
    let e = message_beside(&html, "upload", "start");
    assert!(e.contains("is not the name of an upload"), "{e}");

    // Too large: refused beside the field, at the limit the page states.
    let huge = vec![b'1'; (64 << 20) + 1];
    let page = server.submit("/run", &form_with("rate", "").file("upload", "huge", huge));
    assert_eq!(page.status, 400);
    let e = message_beside(&page.text(), "upload", "start");
    assert!(e.contains("larger than the 64 MiB it may be"), "{e}");

    // A preset fills the form; an unknown one is named beside its field.
    let loaded = server.get("/run?preset=paper-loss").ok();
    assert!(
        loaded.contains("value=\"0,0.01%,0.05%,0.1%,0.5%,1%\""),
        "{loaded}"
    );
    let unknown = server.get("/run?preset=paper-table5");
    assert_eq!(unknown.status, 400);
    assert!(unknown.text().contains("id=\"preset-error\">no preset"));
    // None of it started anything.
    assert!(server
        .get("/run")
        .ok()
        .contains("No experiment started from this page yet."));
}

#[test]
fn a_program_is_registered_checked_and_offered_on_the_composing_form() {
    let (dir, db) = temp_db();
    experiment(&db, "x", 2);
    let Some(server) = Server::start_unprivileged(&db, &[]) else {
        return;
    };
    let first = server.get("/programs").ok();
    assert!(first.contains("No program is registered yet."), "{first}");
    let pair = |name: &str, server_sh: &str, client_sh: &str| {
        Form::of(&[("name", name)])
            .file("server", "s.sh", server_sh.into())
            .file("client", "c.sh", client_sh.into())
    };
    let client = "exec \"$TRANSPUTATION\" evaluator --connect \"$1\"\n";
    // A script `sh -n` refuses, and a built-in's name: each beside its field, nothing kept.
    let page = server.submit("/programs", &pair("echo", "case x in\n", client));
    assert_eq!(page.status, 400, "{}", page.text());
    let html = page.text();
    let e = message_beside(&html, "program-server", "program-client");
    assert!(
        e.starts_with("echo-server.sh: sh -n refuses it: line 2:"),
        "{e}"
    );
    assert!(html.contains("value=\"echo\""), "the name is kept: {html}");
    let html = server
        .submit("/programs", &pair("sha256", "true\n", client))
        .text();
    let e = message_beside(&html, "program-name", "program-server");
    assert!(e.contains("built-in circuit"), "{e}");
    assert!(!dir.path().join("programs").exists());

    let done = server.submit(
        "/programs",
        &pair("echo", "echo listening on >&2\n", client),
    );
    assert_eq!(done.status, 303, "{}", done.text());
    assert_eq!(done.location, "/programs");
    let listed = server.get("/programs").ok();
    assert_eq!(table_rows(&listed, "programs")[0][0], "echo");
    let stored = dir.path().join("programs/echo/echo-client.sh");
    assert_eq!(std::fs::read_to_string(stored).unwrap(), client);
    // Other scripts under a registered name are refused.
    let html = server
        .submit("/programs", &pair("echo", "true\n", client))
        .text();
    let e = message_beside(&html, "program-name", "program-server");
    assert!(e.contains("registered with other scripts"), "{e}");
    // The composing form offers it, and a form that chooses it alone starts (here, to the
    // check of privileges) with the program's flag.
    let run = server.get("/run").ok();
    assert!(run.contains("id=\"program-echo\""), "{run}");
    let form = form_with("circuits", "").text("programs", "echo");
    let started = server.submit("/run", &form);
    assert_eq!(started.status, 303, "{}", started.text());
    let page = job_page_when(&server, 1, "failed");
    let flag = format!(
        "--program=echo={}",
        dir.path().join("programs/echo").display()
    );
    assert!(page.contains(&flag), "{page}");
}

/// The next event, waiting at most a minute.
fn next(events: &std::sync::mpsc::Receiver<(String, String)>) -> (String, serde_json::Value) {
    next_event(events, Duration::from_secs(60))
}

#[test]
fn the_events_deliver_each_run_as_the_testbed_records_it() {
    let (_dir, path) = temp_db();
    let (mut db, id) = experiment(&path, "watched", 3);
    let server = Server::start(&path, &[]);
    let events = server.events(&format!("/experiments/{id}/events"));
    let (event, p) = next(&events);
    assert_eq!(event, "progress");
    assert_eq!(
        (p["recorded"].as_i64(), p["planned"].as_i64()),
        (Some(0), Some(3))
    );
    assert_eq!(p["eta_secs"], serde_json::Value::Null);

    db.insert_run(id, &run("tcp", 0, 12.5)).unwrap();
    let (event, r) = next(&events);
    assert_eq!(event, "run");
    assert_eq!(r["cells"][2], "tcp");
    assert_eq!(r["cells"][6], "12.5");
    assert_eq!(r["failed"], false);
    let (_, p) = next(&events);
    assert_eq!(p["recorded"], 1);

    let failed = RunRecord::failed(
        run("udt", 0, 0.0).cell,
        0,
        LinkRecord::default(),
        Status::Failed,
        "connection refused\nby the peer".into(),
    );
    db.insert_run(id, &failed).unwrap();
    let (event, r) = next(&events);
    assert_eq!(event, "run");
    assert_eq!(r["failed"], true);
    assert_eq!(r["error"], "connection refused\nby the peer");
    assert_eq!(r["cells"][7], "connection refused");
    let (_, p) = next(&events);
    assert_eq!(
        (p["recorded"].as_i64(), p["failed"].as_i64()),
        (Some(2), Some(1))
    );
    // Two runs recorded: an estimate of the one left.
    assert!(p["eta_secs"].as_u64().is_some(), "{p}");
    assert!(p["text"].as_str().unwrap().contains("left"), "{p}");

    db.insert_run(id, &run("tcp", 1, 11.0)).unwrap();
    db.finish_if_complete(id).unwrap();
    let (event, _) = next(&events);
    assert_eq!(event, "run");
    let (_, p) = next(&events);
    assert_eq!(p["finished"], true);
    assert_eq!(p["eta_secs"], serde_json::Value::Null);
    let (event, end) = next(&events);
    assert_eq!(
        (event.as_str(), end["why"].as_str()),
        ("end", Some("finished"))
    );
    // The stream ends after its end event (the channel closes), rather than staying open.
    assert!(matches!(
        events.recv_timeout(Duration::from_secs(30)),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected)
    ));

    // A page that shows two runs already hears of the third alone.
    let events = server.events(&format!("/experiments/{id}/events?from=2"));
    let (event, r) = next(&events);
    assert_eq!((event.as_str(), r["cells"][4].as_str()), ("run", Some("2")));
    assert_eq!(next(&events).0, "progress");
    assert_eq!(next(&events).0, "end");
    assert_eq!(server.get("/experiments/99/events").status, 404);
    assert_eq!(server.get("/jobs/1/events").status, 404);
}

/// Job `id`'s page once its `data-state` is `state` (waiting at most two minutes).
fn job_page_when(server: &Server, id: u64, state: &str) -> String {
    server.job_page_when(id, &[state], Duration::from_secs(120))
}

#[test]
fn a_started_experiment_is_testbed_run_with_the_forms_flags() {
    let (_dir, db) = temp_db();
    experiment(&db, "x", 2);
    let Some(server) = Server::start_unprivileged(&db, &[]) else {
        return;
    };
    let started = server.submit("/run", &valid_form());
    assert_eq!(started.status, 303, "{}", started.text());
    assert_eq!(started.location, "/jobs/1");
    let page = job_page_when(&server, 1, "failed");
    // The arguments, one each, the form's flags among them.
    for arg in [
        "<code>testbed</code> <code>run</code>",
        "<code>--name=from the page</code>",
        "<code>--transports=tcp;tcp-bbr</code>",
        "<code>--conditions=lan</code>",
        "<code>--runs=2</code>",
    ] {
        assert!(page.contains(arg), "{arg}: {page}");
    }
    assert!(
        page.contains(
            "from the page: 4 runs (aes128 × ideal × tcp, tcp-bbr × 1 condition × 2 runs)"
        ),
        "{page}"
    );
    // testbed run's own error, and no cancel once it has ended.
    assert!(page.contains("CAP_NET_ADMIN"), "{page}");
    assert!(!page.contains("id=\"cancel\""));
    let cancel = server.submit("/jobs/1/cancel", &Form::default());
    assert_eq!(cancel.status, 409);
    assert!(cancel.text().contains("has ended already"));
    assert_eq!(
        server.submit("/jobs/7/cancel", &Form::default()).status,
        404
    );
    assert_eq!(server.get("/jobs/7").status, 404);
    // The line lists it.
    let line = server.get("/run").ok();
    let rows = table_rows(&line, "jobs");
    assert_eq!(rows.len(), 1);
    assert!(
        rows[0][2].starts_with("failed (exit status 1)"),
        "{:?}",
        rows[0]
    );
}

#[test]
fn an_unfinished_experiment_is_resumed_from_its_page() {
    let (_dir, path) = temp_db();
    let (mut db, id) = experiment(&path, "stopped", 4);
    db.insert_run(id, &run("tcp", 0, 10.0)).unwrap();
    let (mut done_db, done) = experiment(&path, "done", 2);
    done_db.insert_run(done, &run("tcp", 0, 10.0)).unwrap();
    done_db.insert_run(done, &run("udt", 0, 10.0)).unwrap();
    done_db.finish_if_complete(done).unwrap();
    let Some(server) = Server::start_unprivileged(&path, &[]) else {
        return;
    };
    let page = server.get(&format!("/experiments/{id}")).ok();
    assert!(
        page.contains(&format!("action=\"/experiments/{id}/resume\"")),
        "{page}"
    );
    assert!(!server
        .get(&format!("/experiments/{done}"))
        .ok()
        .contains("/resume\""));
    let resumed = server.submit(&format!("/experiments/{id}/resume"), &Form::default());
    assert_eq!(resumed.status, 303, "{}", resumed.text());
    let page = job_page_when(&server, 1, "failed");
    assert!(
        page.contains(&format!("<code>--resume={id}</code>")),
        "{page}"
    );
    assert!(page.contains("resume experiment"), "{page}");
    // The experiment it knew from the start, with its progress, and resume offered again.
    assert!(
        page.contains("<progress id=\"progress\" max=\"4\" value=\"1\">"),
        "{page}"
    );
    assert!(page.contains(&format!("action=\"/experiments/{id}/resume\"")));
    let finished = server.submit(&format!("/experiments/{done}/resume"), &Form::default());
    assert_eq!(finished.status, 409);
    assert!(finished.text().contains("nothing to resume"));
    assert_eq!(
        server
            .submit("/experiments/99/resume", &Form::default())
            .status,
        404
    );
}

#[test]
fn a_change_needs_this_servers_origin_and_beyond_loopback_the_token() {
    let (dir, db) = temp_db();
    experiment(&db, "x", 2);
    let Some(server) = Server::start_unprivileged(&db, &[]) else {
        return;
    };
    // Invalid forms: a change that passed the rules is answered 400, not started.
    let form = form_with("rate", "fast");
    assert_eq!(server.submit("/run", &form).status, 400);
    for headers in [
        vec![],
        vec![("Origin", "http://evil.example")],
        vec![("Origin", "null")],
        vec![("Sec-Fetch-Site", "cross-site")],
    ] {
        let refused = server.post_form("/run", &form, &headers);
        assert_eq!(refused.status, 403, "{headers:?}");
        assert!(
            refused.text().contains("this server&#39;s own page"),
            "{headers:?}"
        );
    }
    let same = server.post_form("/run", &form, &[("Sec-Fetch-Site", "same-origin")]);
    assert_eq!(same.status, 400);
    for path in ["/jobs/1/cancel", "/experiments/1/resume", "/programs"] {
        let refused = server.post_form(path, &Form::default(), &[("Origin", "http://a.example")]);
        assert_eq!(refused.status, 403, "{path}");
    }
    // The page's script is this server's, the only one a page may run.
    let script = server.get("/static/watch.js");
    assert!(script.content_type.starts_with("text/javascript"));
    assert!(script.csp.contains("script-src 'self'"), "{}", script.csp);
    assert!(script.csp.contains("default-src 'none'"), "{}", script.csp);
    assert!(script.text().contains("EventSource"));

    let token = "c0ffee-0123456789-abcdef";
    let token_file = dir.path().join("token");
    std::fs::write(&token_file, format!("{token}\n")).unwrap();
    let Some(server) = Server::start_unprivileged_with(&[
        "--listen",
        "0.0.0.0:0",
        "--db",
        db.to_str().unwrap(),
        "--token-file",
        token_file.to_str().unwrap(),
    ]) else {
        return;
    };
    let origin = server.base.clone();
    let bearer = format!("Bearer {token}");
    let cookie = format!("transputation_token={token}");
    let without = server.post_form("/run", &form, &[("Origin", &origin)]);
    assert_eq!(without.status, 401);
    let with = server.post_form(
        "/run",
        &form,
        &[("Origin", &origin), ("Authorization", &bearer)],
    );
    assert_eq!(with.status, 400, "{}", with.text());
    // The cookie a browser sends along from another site's page is not enough.
    let forged = server.post_form(
        "/run",
        &form,
        &[("Origin", "http://evil.example"), ("Cookie", &cookie)],
    );
    assert_eq!(forged.status, 403);
    let own = server.post_form("/run", &form, &[("Origin", &origin), ("Cookie", &cookie)]);
    assert_eq!(own.status, 400);
    assert_eq!(server.get("/run").status, 401);
    assert_eq!(server.get("/static/watch.js").status, 401);
}
