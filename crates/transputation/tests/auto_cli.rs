//! `--transport auto` waits for no transport's start-up: UDT4's library measures the CPU's
//! clock for 100 ms when it is loaded and, while it does, no other thread of the process
//! can start. A garbler and an evaluator that have not used `udt` neither offer nor
//! consider it; `select`, which runs no session, predicts it.

mod common;

use std::io::Read;
use std::process::Stdio;

/// FIPS-197's example: the garbler's key, the evaluator's block, and the ciphertext.
const KEY: &str = "000102030405060708090a0b0c0d0e0f";
const BLOCK: &str = "00112233445566778899aabbccddeeff";
const CIPHERTEXT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

#[test]
fn a_session_neither_offers_nor_considers_a_transport_that_has_not_started() {
    let (g, addr) = common::garbler(&[
        "--transport",
        "auto",
        "--circuit",
        "aes128",
        "--input",
        KEY,
        "--insecure",
        "--json",
    ]);
    let out = common::bin()
        .args(["evaluator", "--connect", &addr, "--transport", "auto"])
        .args(["--circuit", "aes128", "--input", BLOCK, "--insecure"])
        .args(["--probe-cache", "0", "--json"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut child = g.child;
    let mut garbler_out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut garbler_out)
        .unwrap();
    assert!(child.wait().unwrap().success());
    let garbler_err = g.stderr.join().unwrap();
    let offered = garbler_err
        .lines()
        .find(|l| l.contains("listening for"))
        .unwrap_or_else(|| panic!("no listeners named: {garbler_err}"));
    assert!(offered.contains("tcp on"), "{offered}");
    assert!(!offered.contains("udt"), "{offered}");

    let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["output"], CIPHERTEXT, "{report}");
    let ranked: Vec<&str> = report["auto"]["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r[0].as_str().unwrap())
        .collect();
    assert!(ranked.iter().any(|t| t.starts_with("tcp")), "{ranked:?}");
    assert!(!ranked.iter().any(|t| t.starts_with("udt")), "{ranked:?}");
    // A first session on loopback starts at once; both parties name what carried the
    // tables, whether or not the garbler's sending moved.
    let evaluator_err = String::from_utf8_lossy(&out.stderr);
    assert!(
        evaluator_err.contains("auto: started at once over tcp"),
        "{evaluator_err}"
    );
    let garbler: serde_json::Value = serde_json::from_str(&garbler_out).unwrap();
    assert_eq!(
        garbler["transport"], report["transport"],
        "{garbler}\n{report}"
    );
    assert_eq!(garbler["auto"]["chosen"], report["auto"]["chosen"]);
    assert_eq!(report["transport"], report["auto"]["chosen"]);
}

#[test]
fn select_predicts_a_transport_that_a_session_would_have_to_start() {
    let listed = common::run(&["transports"]);
    let has_udt = String::from_utf8_lossy(&listed.stdout)
        .lines()
        .any(|l| l.starts_with("udt: works here"));
    let v = common::run_json(&[
        "select",
        "--simulate",
        "--rtt",
        "100ms",
        "--loss",
        "0.1%",
        "--rate",
        "200mbit",
        "--circuit",
        "aes128",
        "--scheme",
        "ideal",
        "--json",
    ]);
    let predicted: Vec<&str> = v["decision"]["ranked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        predicted.iter().any(|t| t.starts_with("udt")),
        has_udt,
        "{predicted:?}"
    );
}
