//! `--parallel ipp` through the real binary: both parties garble a part and evaluate the
//! other, each on a connection of its own, and compute what a sequential session computes;
//! a party without the flag, a circuit without independent parts and flags IPP does not
//! take are refused with a message that says so.

mod common;

use std::process::Stdio;

use common::{run, run_json};

const MVMUL: &str = "mvmul:m=4,k=3,bits=16";
const MVMUL_G: &str = "000100020003000400050006000700080009000a000b000c";
const MVMUL_E: &str = "fffe00030011";
const MEXP: &str = "mexp:k=4,bits=16";
const MEXP_G: &str = "0003000500070009";
const MEXP_E: &str = "000a000b000c000dfff1";

/// `run --json` of `circuit` on inputs `g` and `e` with `flags` (the scheme, transport and
/// parallel mode: `run`'s defaults where not given).
fn session(circuit: &str, g: &str, e: &str, flags: &[&str]) -> serde_json::Value {
    let mut args = vec!["run", "--circuit", circuit, "--json"];
    args.extend(flags);
    args.extend(["--garbler-input", g, "--evaluator-input", e]);
    run_json(&args)
}

/// `session` under `--parallel ipp`.
fn ipp(circuit: &str, g: &str, e: &str, flags: &[&str]) -> serde_json::Value {
    let mut all = vec!["--parallel", "ipp"];
    all.extend(flags);
    session(circuit, g, e, &all)
}

#[test]
fn a_circuit_of_one_piece_runs_in_regions_and_glue() {
    // biomatch's minimum joins its distances: two regions of distances, then the minimum.
    let circuit = "biomatch:n=16,d=2,bits=8";
    let g: String = (0..32).map(|i| format!("{:02x}", (i * 7) % 50)).collect();
    let e = "0a14";
    let want = run(&[
        "circuit",
        "eval",
        circuit,
        "--garbler-input",
        &g,
        "--evaluator-input",
        e,
    ]);
    let want = String::from_utf8_lossy(&want.stdout).trim().to_string();
    for scheme in ["ideal", "prf"] {
        let v = ipp(circuit, &g, e, &["--scheme", scheme]);
        assert_eq!(v["output"], want.as_str(), "{scheme}");
        // Tables went both ways: each party garbled a region.
        let tables = &v["evaluator"]["parts_evaluator_to_garbler"]["tables"];
        assert!(tables.as_u64().unwrap() > 0, "{v}");
    }
}

#[test]
fn ipp_computes_what_a_sequential_session_computes() {
    // 3^10, 5^11, 7^12, 9^13 mod 0xfff1.
    let m = 0xfff1u64;
    let pow = |b: u64, e: u64| (0..e).fold(1u64, |acc, _| acc * b % m);
    let want: String = [(3, 10), (5, 11), (7, 12), (9, 13)]
        .iter()
        .map(|&(b, e)| format!("{:04x}", pow(b, e)))
        .collect();
    for (circuit, g, e) in [(MVMUL, MVMUL_G, MVMUL_E), (MEXP, MEXP_G, MEXP_E)] {
        for scheme in ["ideal", "prf"] {
            let none = session(circuit, g, e, &["--scheme", scheme]);
            let both = ipp(circuit, g, e, &["--scheme", scheme]);
            assert_eq!(both["output"], none["output"], "{circuit} {scheme}");
            if circuit == MEXP {
                assert_eq!(both["output"], want.as_str());
            }
            // Both parties garbled: tables went both ways, each about half.
            let tables = |v: &serde_json::Value, dir: &str| {
                v["evaluator"][format!("parts_{dir}")]["tables"]
                    .as_u64()
                    .unwrap()
            };
            let (g2e, e2g) = (
                tables(&both, "garbler_to_evaluator"),
                tables(&both, "evaluator_to_garbler"),
            );
            assert!(g2e > 0 && e2g > 0, "{circuit} {scheme}: {g2e} and {e2g}");
            assert_eq!(g2e + e2g, tables(&none, "garbler_to_evaluator"));
            assert_eq!(tables(&none, "evaluator_to_garbler"), 0);
        }
    }
}

#[test]
fn ipp_runs_over_a_transport_with_its_own_connections() {
    let none = session(MVMUL, MVMUL_G, MVMUL_E, &[]);
    // Each one this build has (quic and udt are Cargo features).
    let listed = run_json(&["transports", "--json"]);
    let has = |name: &str| {
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t["name"] == name && t["available"] == true)
    };
    let transports: Vec<&str> = ["blast", "quic", "mtcp:streams=2", "udt"]
        .into_iter()
        .filter(|t| has(t.split(':').next().unwrap()))
        .collect();
    assert!(transports.contains(&"blast") && transports.contains(&"mtcp:streams=2"));
    for transport in transports {
        let v = ipp(MVMUL, MVMUL_G, MVMUL_E, &["--transport", transport]);
        assert_eq!(v["output"], none["output"], "{transport}");
    }
}

/// A garbler of MVMUL under `--parallel ipp` with `extra` flags, without protection,
/// `--timeout 3`.
fn ipp_garbler(extra: &[&str]) -> (common::Garbler, String) {
    let mut args = vec!["--circuit", MVMUL, "--input", MVMUL_G, "--insecure"];
    args.extend(["--parallel", "ipp"]);
    args.extend(extra);
    common::garbler(&args)
}

/// An IPP garbler with `garbler_flags` and an evaluator of MVMUL with `evaluator_flags`,
/// both of which must fail; the garbler's standard error.
fn garbler_refusal(garbler_flags: &[&str], evaluator_flags: &[&str]) -> String {
    let (g, addr) = ipp_garbler(garbler_flags);
    let out = common::bin()
        .args(["evaluator", "--connect", &addr, "--circuit", MVMUL])
        .args(["--input", MVMUL_E, "--insecure", "--timeout", "3"])
        .args(evaluator_flags)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let mut child = g.child;
    assert!(!child.wait().unwrap().success());
    g.stderr.join().unwrap()
}

#[test]
fn a_garbler_under_ipp_tells_an_evaluator_without_it() {
    let err = garbler_refusal(&[], &[]);
    assert!(err.contains("give both parties --parallel ipp"), "{err}");
}

#[test]
fn what_ipp_cannot_run_is_refused_with_the_reason_and_the_rest_runs() {
    let out = run(&[
        "run",
        "--circuit",
        "aes128",
        "--parallel",
        "ipp",
        "--garbler-input",
        "000102030405060708090a0b0c0d0e0f",
        "--evaluator-input",
        "00112233445566778899aabbccddeeff",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("no cut into two balanced regions"), "{err}");

    let out = run(&[
        "run",
        "--circuit",
        MVMUL,
        "--parallel",
        "ipp",
        "--threads",
        "2",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr)
        .contains("--parallel ipp runs each part on one thread"));

    let out = run(&[
        "run",
        "--circuit",
        MVMUL,
        "--parallel",
        "ipp",
        "--transport",
        "auto",
    ]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--parallel ipp needs a named --transport")
    );

    // The output for the evaluator alone: each party's pieces go through the glue.
    let v = ipp(MVMUL, MVMUL_G, MVMUL_E, &["--output", "evaluator"]);
    assert_eq!(v["garbler"]["output"], serde_json::Value::Null);
    let sequential = session(MVMUL, MVMUL_G, MVMUL_E, &[]);
    assert_eq!(v["evaluator"]["output"], sequential["output"]);
}

#[test]
fn a_serving_garbler_refuses_ipp() {
    let out = run(&[
        "garbler",
        "--serve",
        "--listen",
        "127.0.0.1:0",
        "--insecure",
        "--circuit",
        MVMUL,
        "--input",
        MVMUL_G,
        "--parallel",
        "ipp",
    ]);
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not serve"));
}

#[test]
fn a_garbler_waits_for_the_second_part_no_longer_than_its_timeout() {
    // The garbler has --timeout 3.
    use std::io::Write;
    let (g, addr) = ipp_garbler(&[]);
    // One part's connection and hello, never the other.
    let mut part0 = std::net::TcpStream::connect(&addr).unwrap();
    // Part 0 of 2.
    let mut hello = b"TPIPP1\x00\x02".to_vec();
    hello.extend([7u8; 16]);
    part0.write_all(&hello).unwrap();
    let started = std::time::Instant::now();
    let mut child = g.child;
    assert!(!child.wait().unwrap().success());
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    let err = g.stderr.join().unwrap();
    assert!(err.contains("opened one part"), "{err}");
}

#[test]
fn parties_that_cut_the_circuit_differently_are_told_so() {
    // An output for the evaluator alone runs through a glue (three parts), an output for
    // both in two: a garbler and an evaluator that differ in --output cut differently.
    let err = garbler_refusal(&["--output", "evaluator"], &["--parallel", "ipp"]);
    assert!(err.contains("into 2 parts, this garbler into 3"), "{err}");
}
