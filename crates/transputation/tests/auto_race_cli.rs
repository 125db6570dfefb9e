//! `--transport auto:race` through the real binary: a garbler under `auto` and an
//! evaluator under `auto:race` race the first quarter of a large circuit's tables over the
//! two settings the model ranks first, compute what a plain `tcp` session computes, and
//! both name the same winner as the transport that carried the tables; a circuit too small
//! to race runs as `auto` does, and says why.

mod common;

use std::io::Read;
use std::process::Stdio;

/// 9.6 MB of tables under `ideal`: raced (at least 4 MiB).
const LARGE: &str = "synthetic:and=300000,xor=100000,inputs=64";
const GARBLER_INPUT: &str = "5a5a5a5a5a5a5a5a";
const EVALUATOR_INPUT: &str = "0123456789abcdef";

/// The garbler's and the evaluator's reports of one session, and the evaluator's
/// standard error.
fn session(
    circuit: &str,
    garbler_input: &str,
    evaluator_input: &str,
) -> (serde_json::Value, serde_json::Value, String) {
    let (g, addr) = common::garbler(&[
        "--transport",
        "auto",
        "--circuit",
        circuit,
        "--input",
        garbler_input,
        "--insecure",
        "--json",
    ]);
    let out = common::bin()
        .args(["evaluator", "--connect", &addr, "--transport", "auto:race"])
        .args([
            "--circuit",
            circuit,
            "--input",
            evaluator_input,
            "--insecure",
        ])
        .args(["--probe-cache", "0", "--json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr).to_string();
    assert!(out.status.success(), "{err}");
    let mut child = g.child;
    let mut garbler_out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut garbler_out)
        .unwrap();
    assert!(
        child.wait().unwrap().success(),
        "{}",
        g.stderr.join().unwrap()
    );
    (
        serde_json::from_str(&garbler_out).unwrap(),
        serde_json::from_slice(&out.stdout).unwrap(),
        err,
    )
}

#[test]
fn a_raced_session_computes_as_tcp_does_and_both_name_the_winner() {
    let (g, e, err) = session(LARGE, GARBLER_INPUT, EVALUATOR_INPUT);
    let plain = common::run_json(&[
        "run",
        "--circuit",
        LARGE,
        "--garbler-input",
        GARBLER_INPUT,
        "--evaluator-input",
        EVALUATOR_INPUT,
        "--transport",
        "tcp",
        "--insecure",
        "--json",
    ]);
    let want = &plain["evaluator"]["output"];
    assert!(want.is_string(), "{plain}");
    assert_eq!(&e["output"], want, "{e}");
    assert_eq!(&g["output"], want, "{g}");
    let (gr, er) = (&g["auto"]["race"], &e["auto"]["race"]);
    let lanes = er["lanes"]
        .as_array()
        .unwrap_or_else(|| panic!("{e}\n{err}"));
    assert_eq!(lanes.len(), 2, "{er}");
    assert_eq!(gr["lanes"], er["lanes"]);
    assert_eq!(
        (&gr["started"], &er["started"]),
        (&true.into(), &true.into())
    );
    // Over loopback the budget (a quarter of the tables) arrives well before the end.
    let winner = er["winner"]
        .as_str()
        .unwrap_or_else(|| panic!("no winner: {e}"));
    assert_eq!(gr["winner"], er["winner"], "{gr} {er}");
    assert_eq!(e["transport"], winner);
    assert_eq!(g["transport"], winner);
    assert_eq!(e["auto"]["chosen"], winner);
    assert!(
        er["budget_bytes"].as_u64().unwrap() >= 9_600_000 / 4,
        "{er}"
    );
    let delivered: u64 = er["lane_bytes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b.as_u64().unwrap())
        .sum();
    assert!(delivered >= er["budget_bytes"].as_u64().unwrap(), "{er}");
    assert!(gr["resent_chunks"].is_u64(), "{gr}");
    assert!(err.contains("racing"), "{err}");
}

#[test]
fn a_circuit_too_small_to_race_runs_as_auto() {
    // FIPS-197's example.
    let (g, e, err) = session(
        "aes128",
        "000102030405060708090a0b0c0d0e0f",
        "00112233445566778899aabbccddeeff",
    );
    assert_eq!(e["output"], "69c4e0d86a7b0430d8cdb78070b4c55a", "{e}");
    assert_eq!(e["output"], g["output"]);
    assert!(e["auto"].get("race").is_none(), "{e}");
    assert!(
        err.contains("not racing") && err.contains("too small"),
        "{err}"
    );
}
