//! Helpers the end-to-end tests share: the binary, run with arguments.

// Each test file uses a different subset.
#![allow(dead_code)]

use std::process::{Command, Output};

/// The `transputation` binary under test.
pub fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_transputation"))
}

/// Runs the binary with `args` and returns what it did.
pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("the binary runs")
}

/// Runs the binary with `args`, which must succeed, and parses its standard output as JSON.
pub fn run_json(args: &[&str]) -> serde_json::Value {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}
