//! End-to-end tests of what a new user meets first: error messages that name the problem
//! once and in the user's terms, mismatched settings of the two parties named on both
//! sides, and output that stops quietly when its reader goes away.

mod common;
use common::run;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use transputation_testbed::db::{Db, Environment};

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn an_error_and_its_cause_are_printed_once() {
    let out = run(&[
        "garbler",
        "--circuit",
        "aes128",
        "--psk-file",
        "/nonexistent/psk",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.starts_with("error: /nonexistent/psk"), "{err}");
    assert_eq!(err.matches("No such file or directory").count(), 1, "{err}");
}

/// A results database in `dir` holding one (empty) experiment named `first-use`, as
/// `testbed run` starts it.
fn results_db(dir: &Path) -> PathBuf {
    let path = dir.join("results.sqlite");
    let db = Db::open(&path).unwrap();
    let env = Environment::detect("0.0.0", None, "netem", "cubic", "on");
    db.create_experiment("first-use", "{}", 0, &env).unwrap();
    path
}

/// Runs the binary with `args`, its standard output a pipe whose reading end is closed
/// before it starts, so that its first write fails.
fn run_into_closed_pipe(args: &[&str]) -> Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    common::bin()
        .args(args)
        .stdout(writer)
        .stderr(Stdio::piped())
        .output()
        .unwrap()
}

#[test]
fn a_closed_standard_output_ends_the_command_quietly() {
    let dir = tempfile::tempdir().unwrap();
    let db = results_db(dir.path());
    let db = db.to_str().unwrap();
    for args in [
        &["testbed", "report", "--format", "json", "--db", db][..],
        &["testbed", "report", "--db", db],
        &["testbed", "experiments", "--db", db],
        &["circuit", "list"],
        &["circuit", "stats", "aes128"],
        &["transports"],
        &["keygen", "--out", dir.path().join("k").to_str().unwrap()],
    ] {
        let out = run_into_closed_pipe(args);
        let err = stderr(&out);
        assert!(
            out.status.success() && !err.contains("panicked"),
            "{args:?}: {:?}\n{err}",
            out.status
        );
    }
}
