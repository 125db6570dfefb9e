//! End-to-end tests of open sessions and `garbler --serve`: real processes over 127.0.0.1,
//! protected with a pre-shared key. An evaluator runs several computations in one session
//! (`--repeat`, `--inputs`), a serving garbler takes evaluators one after another and
//! several at once, and its memory stays flat while it serves.

mod common;
use common::{bin, garbler, run};

use std::io::Write;
use std::path::Path;
use std::process::{Child, Output, Stdio};
use std::time::Duration;

use serde_json::Value;

const AES_KEY: &str = "000102030405060708090a0b0c0d0e0f";
/// FIPS-197 C.1, and the all-zero block under the same key.
const CASES: [(&str, &str); 2] = [
    (
        "00112233445566778899aabbccddeeff",
        "69c4e0d86a7b0430d8cdb78070b4c55a",
    ),
    (
        "00000000000000000000000000000000",
        "c6a13b37878f5b826f4f8162a1c8d879",
    ),
];

/// A pre-shared key file in `dir`.
fn psk(dir: &Path) -> String {
    let p = dir.join("session.psk");
    let out = run(&["keygen", "--psk", "--out", p.to_str().unwrap()]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    p.to_str().unwrap().to_string()
}

/// Starts a garbler of aes128 with FIPS-197's key, protected with `psk`, and `args`.
fn aes_garbler(psk: &str, args: &[&str]) -> (common::Garbler, String) {
    let mut all = vec!["--circuit", "aes128", "--input", AES_KEY, "--psk-file", psk];
    all.extend_from_slice(args);
    garbler(&all)
}

/// Starts an evaluator of aes128 against `addr` with `args`.
fn evaluator(addr: &str, psk: &str, args: &[&str]) -> Child {
    bin()
        .args([
            "evaluator",
            "--circuit",
            "aes128",
            "--connect",
            addr,
            "--psk-file",
            psk,
            "--timeout",
            "20",
        ])
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

/// The JSON lines of a party's standard output.
fn json_lines(out: &Output) -> Vec<Value> {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn an_evaluator_repeats_in_one_session_and_the_garbler_reports_each_computation() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk(dir.path());
    let (g, addr) = aes_garbler(&psk, &["--json"]);
    let e = evaluator(
        &addr,
        &psk,
        &["--input", CASES[0].0, "--repeat", "4", "--json"],
    );
    let e = json_lines(&e.wait_with_output().unwrap());
    let g_out = g.child.wait_with_output().unwrap();
    assert!(g_out.status.success(), "{}", g.stderr.join().unwrap());
    assert_eq!(e.len(), 4);
    for (k, r) in e.iter().enumerate() {
        assert_eq!(r["computation"], k as u64 + 1, "{r}");
        assert_eq!(r["output"], CASES[0].1, "{r}");
        assert!(r["online_ms"].as_f64().unwrap() > 0.0, "{r}");
        // Once per session: the handshake's, connecting and the first output.
        assert_eq!(r["connect_ms"].is_null(), k > 0, "{r}");
        assert_eq!(r["protection"], "noise-psk");
        if k > 0 {
            assert_eq!(r["round_trips"], 1, "{r}");
            assert_eq!(r["parts_garbler_to_evaluator"]["labels"], 0, "{r}");
        }
    }
    // The garbler: the first report pretty, as a one-computation session prints it, then
    // one line per further computation.
    let text = String::from_utf8_lossy(&g_out.stdout);
    let reports: Vec<Value> = serde_json::Deserializer::from_str(&text)
        .into_iter::<Value>()
        .map(|v| v.unwrap())
        .collect();
    assert_eq!(reports.len(), 4, "{text}");
    for (k, r) in reports.iter().enumerate() {
        assert_eq!(r["computation"], k as u64 + 1);
        assert_eq!(r["output"], CASES[0].1);
    }
}

#[test]
fn inputs_from_standard_input_one_computation_per_line_and_a_bad_line_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk(dir.path());
    let (g, addr) = aes_garbler(&psk, &[]);
    let mut e = evaluator(&addr, &psk, &["--inputs", "-"]);
    let mut stdin = e.stdin.take().unwrap();
    // The third line is a quarter of a block.
    writeln!(stdin, "{}\n{}\n00112233", CASES[0].0, CASES[1].0).unwrap();
    drop(stdin);
    let out = e.wait_with_output().unwrap();
    assert!(!out.status.success());
    let stdout = String::from_utf8_lossy(&out.stdout);
    let outputs: Vec<&str> = stdout.lines().collect();
    // Each line's output came before the bad line stopped the session.
    assert_eq!(
        outputs,
        [
            format!("output: {}", CASES[0].1),
            format!("output: {}", CASES[1].1)
        ]
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("standard input, line 3"), "{err}");
    // The garbler served both computations; the session then ended without a third.
    let g_out = g.child.wait_with_output().unwrap();
    let g_stdout = String::from_utf8_lossy(&g_out.stdout);
    assert_eq!(g_stdout.matches(CASES[1].1).count(), 1, "{g_stdout}");
}

/// The garbler's resident memory, kB; `None` once it is exiting.
fn rss_kb(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// Runs `n` evaluators at once, each `repeat` computations on its own input; checks every
/// output.
fn wave(addr: &str, psk: &str, n: usize, repeat: usize) {
    let children: Vec<(usize, Child)> = (0..n)
        .map(|i| {
            let (pt, _) = CASES[i % 2];
            let r = repeat.to_string();
            (
                i,
                evaluator(addr, psk, &["--input", pt, "--repeat", &r, "--json"]),
            )
        })
        .collect();
    for (i, child) in children {
        let lines = json_lines(&child.wait_with_output().unwrap());
        assert_eq!(lines.len(), repeat, "evaluator {i}");
        for r in &lines {
            assert_eq!(r["output"], CASES[i % 2].1, "evaluator {i}: {r}");
        }
    }
}

#[test]
fn a_serving_garbler_takes_concurrent_evaluators_with_flat_memory() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk(dir.path());
    let (waves, per_wave, repeat) = (5, 10, 5);
    let sessions = (waves * per_wave).to_string();
    let (mut g, addr) = aes_garbler(
        &psk,
        &[
            "--serve",
            "--sessions",
            &sessions,
            "--max-sessions",
            "10",
            "--json",
        ],
    );
    let pid = g.child.id();
    // Read its reports as they come: a full pipe would stop the garbler at its next line.
    let mut stdout = g.child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        std::io::Read::read_to_end(&mut stdout, &mut all).unwrap();
        all
    });
    // Measured after the first wave and before the last, whose end ends the garbler
    // (--sessions).
    wave(&addr, &psk, per_wave, repeat);
    let after_first = rss_kb(pid);
    for _ in 2..waves {
        wave(&addr, &psk, per_wave, repeat);
    }
    let after_last = rss_kb(pid);
    wave(&addr, &psk, per_wave, repeat);
    let (Some(after_first), Some(after_last)) = (after_first, after_last) else {
        let status = g.child.wait().unwrap();
        panic!(
            "the garbler ended early ({status}):\n{}",
            g.stderr.join().unwrap()
        );
    };
    let status = g.child.wait().unwrap();
    let stderr = g.stderr.join().unwrap();
    assert!(status.success(), "{stderr}");
    let out = Output {
        status,
        stdout: reader.join().unwrap(),
        stderr: Vec::new(),
    };
    let lines = json_lines(&out);
    assert_eq!(lines.len(), waves * per_wave * repeat);
    let mut sessions: Vec<u64> = lines
        .iter()
        .map(|r| r["session"].as_u64().unwrap())
        .collect();
    sessions.sort_unstable();
    sessions.dedup();
    assert_eq!(sessions.len(), waves * per_wave);
    assert!(stderr.contains(&format!(
        "served {} sessions ({} computations), 0 failed",
        waves * per_wave,
        waves * per_wave * repeat
    )));
    // Flat: the later waves took no more memory than the first had (a session that kept
    // its garbler's buffers, ~4 MB, would add 30 sessions' worth).
    assert!(
        after_last < after_first + 32 * 1024,
        "resident memory grew from {after_first} kB to {after_last} kB"
    );
}

#[test]
fn a_serving_garbler_stops_when_no_evaluator_comes() {
    let (g, _addr) = garbler(&[
        "--circuit",
        "aes128",
        "--input",
        AES_KEY,
        "--insecure",
        "--serve",
        "--accept-timeout",
        "1",
    ]);
    let start = std::time::Instant::now();
    let out = g.child.wait_with_output().unwrap();
    assert!(start.elapsed() < Duration::from_secs(10));
    assert!(out.status.success());
    let stderr = g.stderr.join().unwrap();
    assert!(stderr.contains("served 0 sessions"), "{stderr}");
    assert!(stderr.contains("--accept-timeout"), "{stderr}");
}
