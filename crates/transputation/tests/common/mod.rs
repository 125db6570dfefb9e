//! Helpers the end-to-end tests share: the binary, run with arguments.

// Each test file uses a different subset.
#![allow(dead_code)]

pub mod web;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::thread;

/// Why the tests that build network namespaces cannot run here, if they cannot: no root
/// (or CAP_NET_ADMIN + CAP_SYS_ADMIN), or no `ip` (iproute2).
pub fn netns_missing() -> Option<String> {
    if let Err(e) = transputation_netlab::ns::check_privileges() {
        return Some(e.to_string());
    }
    if Command::new("ip").arg("-V").output().is_err() {
        return Some("`ip` is missing (iproute2)".into());
    }
    None
}

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

/// A garbler process listening on a free port, with a thread that keeps reading its
/// standard error (so it never blocks on it) and passes each line on.
pub struct Garbler {
    /// The process.
    pub child: Child,
    /// All of its standard error, once it has exited.
    pub stderr: thread::JoinHandle<String>,
    /// Its standard error, line by line, as it comes.
    pub lines: mpsc::Receiver<String>,
}

/// The first line `child` writes to its standard error, which must start with `prefix`:
/// what follows it, and the rest of the standard error to read on.
pub fn announced(
    child: &mut Child,
    prefix: &str,
) -> (String, BufReader<std::process::ChildStderr>) {
    let mut err = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let rest = line
        .trim()
        .strip_prefix(prefix)
        .unwrap_or_else(|| panic!("not a line starting {prefix:?}: {line:?}"))
        .to_string();
    (rest, err)
}

/// Starts `transputation garbler --listen 127.0.0.1:0 --timeout 3` with `args`, waits for
/// its `listening on ADDR` line, and returns it and ADDR.
pub fn garbler(args: &[&str]) -> (Garbler, String) {
    let mut child = bin()
        .args(["garbler", "--listen", "127.0.0.1:0", "--timeout", "3"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let (addr, err) = announced(&mut child, "listening on ");
    let (tx, lines) = mpsc::channel();
    let stderr = thread::spawn(move || {
        let mut all = String::new();
        for line in err.lines().map_while(|l| l.ok()) {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    (
        Garbler {
            child,
            stderr,
            lines,
        },
        addr,
    )
}
