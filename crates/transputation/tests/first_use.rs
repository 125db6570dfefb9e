//! End-to-end tests of what a new user meets first: error messages that name the problem
//! once and in the user's terms, mismatched settings of the two parties named on both
//! sides, and output that stops quietly when its reader goes away.

mod common;
use common::run;

use std::process::Output;

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
