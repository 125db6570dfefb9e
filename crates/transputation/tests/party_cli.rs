//! End-to-end tests of `transputation run`, `garbler` and `evaluator`: real processes over
//! 127.0.0.1, every scheme and every reliable transport.

mod common;
use common::{bin, run, run_json, Garbler};

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::Stdio;
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value;

const AES_KEY: &str = "000102030405060708090a0b0c0d0e0f";
const AES_PT: &str = "00112233445566778899aabbccddeeff";
const AES_CT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

/// The transports that deliver everything: every one this build lists as available, but
/// `udp` (no retransmission).
fn reliable_transports() -> Vec<String> {
    let v = run_json(&["transports", "--json"]);
    let mut names: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["available"].as_bool() == Some(true) && t["name"] != "udp")
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    names.push("mtcp:streams=2".into());
    names
}

fn two_pc(circuit: &str, scheme: &str, transport: &str, g: &str, e: &str) -> Value {
    run_json(&[
        "run",
        "--circuit",
        circuit,
        "--scheme",
        scheme,
        "--transport",
        transport,
        "--garbler-input",
        g,
        "--evaluator-input",
        e,
        "--json",
    ])
}

#[test]
fn aes128_over_every_scheme_and_reliable_transport() {
    let transports = reliable_transports();
    let xor = run_json(&["circuit", "stats", "aes128", "--json"])["xor"]
        .as_u64()
        .unwrap();
    assert!(transports.iter().any(|t| t == "tcp"));
    for transport in &transports {
        for scheme in ["prf", "circular", "ideal"] {
            let v = two_pc("aes128", scheme, transport, AES_KEY, AES_PT);
            assert_eq!(v["output"], AES_CT, "{scheme} over {transport}");
            assert_eq!(v["garbler"]["output"], AES_CT);
            assert_eq!(v["and_gates"], 6400);
            for key in [
                "total_ms",
                "ot_ms",
                "garble_ms",
                "eval_ms",
                "load_ms",
                "setup_ms",
            ] {
                assert!(v[key].as_f64().unwrap() >= 0.0, "{key}: {v}");
            }
            // The whole wait covers the protocol, and each party says what memory it took.
            let wall = v["wall_ms"].as_f64().unwrap();
            assert!(wall >= v["total_ms"].as_f64().unwrap(), "{v}");
            for party in ["garbler", "evaluator"] {
                let rss = v["peak_rss_bytes"][party].as_u64().unwrap();
                assert!(rss > 1 << 20, "{party}: {v}");
                assert_eq!(v[party]["peak_rss_bytes"], rss);
                assert!(v[party]["wall_ms"].as_f64().unwrap() <= wall, "{v}");
            }
            let g2e = v["bytes_garbler_to_evaluator"].as_u64().unwrap();
            let tables = v["garbler"]["parts_garbler_to_evaluator"]["tables"]
                .as_u64()
                .unwrap();
            let want = if scheme == "prf" {
                32 * 6400 + 16 * xor + 3200
            } else {
                32 * 6400
            };
            assert_eq!(tables, want, "{scheme}");
            assert!(g2e > tables, "{v}");
            assert_eq!(v["scheme"], scheme);
            assert_eq!(v["circuit"], "aes128");
        }
    }
}

#[test]
fn sha256_abc_over_every_scheme_and_reliable_transport() {
    let g = format!("616263{}", "8".to_string() + &"0".repeat(57));
    let e = format!("{}18", "0".repeat(62));
    for transport in &reliable_transports() {
        for scheme in ["prf", "circular", "ideal"] {
            let v = two_pc("sha256", scheme, transport, &g, &e);
            assert_eq!(
                v["output"], "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
                "{scheme} over {transport}"
            );
        }
    }
}

#[test]
fn a_reference_bristol_file_with_its_vector() {
    let file = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/circuits/bristol/AES-non-expanded.txt");
    let file = file.to_str().unwrap();
    // As in the paper: the key is the garbler's (input 2 of the file).
    let v = run_json(&[
        "run",
        "--circuit",
        file,
        "--parties",
        "evaluator,garbler",
        "--scheme",
        "prf",
        "--garbler-input",
        AES_KEY,
        "--evaluator-input",
        AES_PT,
        "--json",
    ]);
    assert_eq!(v["output"], AES_CT);
    // The paper's Table 3 bytes, plus prf's signal masks (half a byte per AND gate).
    assert_eq!(
        v["garbler"]["parts_garbler_to_evaluator"]["tables"],
        619_584 + 3_400
    );
}

/// Starts a garbler on a free port; returns it and its address.
fn garbler(args: &[&str]) -> (Garbler, String) {
    // These tests are about the 2PC layer; protected sessions: secure_cli.rs.
    let mut all = vec!["--insecure"];
    all.extend_from_slice(args);
    common::garbler(&all)
}

/// Waits for the party: whether it succeeded, its standard error, how long it took.
fn finish(p: Garbler) -> (bool, String, Duration) {
    let start = Instant::now();
    let out = p.child.wait_with_output().unwrap();
    (
        out.status.success(),
        p.stderr.join().unwrap(),
        start.elapsed(),
    )
}

#[test]
fn different_circuits_or_schemes_stop_both_parties_clearly() {
    for (e_circuit, e_scheme, what) in [
        ("sha256", "ideal", "circuit"),
        ("aes128", "prf", "garbling scheme"),
    ] {
        let (g, addr) = garbler(&["--circuit", "aes128", "--input", AES_KEY]);
        let e_input = if e_circuit == "aes128" {
            AES_PT.to_string()
        } else {
            "0".repeat(64)
        };
        let e = run(&[
            "evaluator",
            "--insecure",
            "--connect",
            &addr,
            "--circuit",
            e_circuit,
            "--scheme",
            e_scheme,
            "--input",
            &e_input,
            "--timeout",
            "3",
        ]);
        assert!(!e.status.success());
        let e_err = String::from_utf8_lossy(&e.stderr);
        assert!(
            e_err.contains("different session") && e_err.contains(what),
            "{e_err}"
        );
        let (ok, g_err, _) = finish(g);
        assert!(!ok);
        assert!(
            g_err.contains("different session") && g_err.contains(what),
            "{g_err}"
        );
    }
}

#[test]
fn a_peer_killed_mid_run_is_reported_within_the_timeout() {
    // A circuit that takes a while, an evaluator killed once it has started.
    let circuit = "synthetic:and=3000000,xor=3000000,inputs=1000,depth=100";
    let (g, addr) = garbler(&["--circuit", circuit, "--input", &"0".repeat(250)]);
    let mut e = bin()
        .args([
            "evaluator",
            "--insecure",
            "--connect",
            &addr,
            "--circuit",
            circuit,
            "--input",
            &"0".repeat(250),
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // Kill the evaluator as soon as the session has started.
    loop {
        let line = g
            .lines
            .recv_timeout(Duration::from_secs(30))
            .expect("the garbler goes on");
        if line.contains("evaluator connected") {
            break;
        }
    }
    e.kill().unwrap();
    e.wait().unwrap();
    let (ok, err, waited) = finish(g);
    assert!(!ok, "the garbler should fail");
    assert!(waited < Duration::from_secs(8), "{waited:?}");
    assert!(err.contains("2PC session failed"), "{err}");
}

#[test]
fn garbage_from_a_fake_peer_is_a_clear_error() {
    // A fake garbler: accepts and sends bytes that are no session header.
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let fake = thread::spawn(move || {
        let (mut s, _) = listener.accept().unwrap();
        let len = transputation_2pc::HEADER_LEN;
        s.write_all(&(len as u64).to_be_bytes()).unwrap();
        s.write_all(&vec![0xab; len]).unwrap();
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    });
    let e = run(&[
        "evaluator",
        "--insecure",
        "--connect",
        &addr,
        "--circuit",
        "aes128",
        "--input",
        AES_PT,
        "--timeout",
        "3",
    ]);
    assert!(!e.status.success());
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(err.contains("not a Transputation party"), "{err}");
    fake.join().unwrap();
}

#[test]
fn bad_inputs_name_the_problem() {
    let out = run(&[
        "run",
        "--circuit",
        "aes128",
        "--garbler-input",
        "xyz",
        "--evaluator-input",
        AES_PT,
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("garbler input"), "{err}");
    // The evaluator's input is the evaluator's to refuse: its error is `run`'s, at once,
    // not after the garbler gave up waiting for it (--timeout).
    let started = std::time::Instant::now();
    let out = run(&[
        "run",
        "--circuit",
        "aes128",
        "--garbler-input",
        AES_KEY,
        "--evaluator-input",
        "00",
        "--timeout",
        "60",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("the evaluator failed") && err.contains("evaluator input"),
        "{err}"
    );
    assert!(
        started.elapsed() < std::time::Duration::from_secs(30),
        "{err}"
    );
    // A circuit that is not there is named before any party starts.
    let out = run(&["run", "--circuit", "aes129"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("aes129"), "{err}");
    assert!(!err.contains("garbler failed"), "{err}");
}

#[test]
fn small_buffers_do_not_deadlock_the_parties() {
    // 100,000 input bits each: 1.6 MB of the garbler's labels and 1.6 MB of OT matrix, far
    // beyond 64 KiB socket buffers (what --rtt-ms/--bandwidth size here). Were the two sent
    // at once, both parties would block sending and time out.
    let circuit = "synthetic:and=2000,xor=2000,inputs=100000,depth=10";
    let zeros = "0".repeat(25_000);
    for extra in [&["--insecure"][..], &[][..]] {
        let mut args = vec![
            "run",
            "--circuit",
            circuit,
            "--garbler-input",
            &zeros,
            "--evaluator-input",
            &zeros,
            "--rtt-ms",
            "0.01",
            "--bandwidth",
            "1mbit",
            "--timeout",
            "5",
            "--json",
        ];
        args.extend_from_slice(extra);
        let v = run_json(&args);
        assert_eq!(v["buffer_bytes"], 65536, "{v}");
        assert!(v["output"].is_string());
    }
}

#[test]
fn an_evaluator_may_start_first_and_gives_up_after_its_connect_timeout() {
    // A loopback address of its own: a port found free on 127.0.0.1 could be another
    // test's garbler by the time this one's listens (the evaluator then met a protected
    // stranger, once).
    let port = TcpListener::bind("127.0.6.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.6.1:{port}");
    let party = |role: &str, flag: &str, input: &str| {
        bin()
            .args([role, "--insecure", "--circuit", "aes128", flag, &addr])
            .args(["--input", input, "--json"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    // The garbler comes 1.5 s late: within the default 10 s, by retrying every 100 ms.
    let evaluator = party("evaluator", "--connect", AES_PT);
    thread::sleep(Duration::from_millis(1500));
    let garbler = party("garbler", "--listen", AES_KEY);
    for (who, p) in [("evaluator", evaluator), ("garbler", garbler)] {
        let out = p.wait_with_output().unwrap();
        assert!(
            out.status.success(),
            "{who}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["output"], AES_CT, "{who}: {v}");
    }

    // Nobody comes: an error after --connect-timeout, naming the address.
    let alone = |connect_timeout: &str| {
        run(&[
            "evaluator",
            "--insecure",
            "--circuit",
            "aes128",
            "--connect",
            &addr,
            "--input",
            AES_PT,
            "--connect-timeout",
            connect_timeout,
        ])
    };
    let start = Instant::now();
    let out = alone("1");
    let took = start.elapsed();
    assert!(!out.status.success());
    assert!(
        took >= Duration::from_millis(900) && took < Duration::from_secs(5),
        "{took:?}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("connecting to the garbler at {addr}"))
            && err.contains(&format!("could not connect to {addr}")),
        "{err}"
    );
    let out = alone("0");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--connect-timeout must be a positive number of seconds, not 0"),
        "{err}"
    );
}

/// Each backend garbles AES-128 under `run` where this CPU has it (and is refused, naming
/// why, where it does not), and each party reports the one it used; the answer is
/// FIPS-197's on every one.
#[test]
fn each_party_reports_the_aes_backend_it_was_given() {
    let mut ran = vec![];
    for b in ["portable", "aes-ni", "vaes256", "vaes", "armv8"] {
        let out = run(&[
            "run",
            "--circuit",
            "aes128",
            "--backend",
            b,
            "--garbler-input",
            AES_KEY,
            "--evaluator-input",
            AES_PT,
            "--json",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        if !out.status.success() {
            assert!(err.contains("cannot run here"), "{b}: {err}");
            assert_ne!(b, "portable", "{err}");
            continue;
        }
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["output"], AES_CT, "{b}");
        assert_eq!(v["backend"]["garbler"], b);
        assert_eq!(v["backend"]["evaluator"], b);
        assert_eq!(v["garbler"]["backend"], b);
        assert_eq!(v["evaluator"]["backend"], b);
        ran.push(b);
    }
    eprintln!("backends run: {ran:?}");
    assert!(ran.len() >= 2 || !cfg!(target_arch = "x86_64"), "{ran:?}");
}

#[test]
fn an_evaluator_may_be_told_its_garblers_address_on_standard_input() {
    let evaluator = |stdin: &str| {
        let mut child = bin()
            .args([
                "evaluator",
                "--connect",
                "-",
                "--insecure",
                "--circuit",
                "aes128",
                "--input",
                AES_PT,
                "--json",
            ])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let (g, addr) = garbler(&["--circuit", "aes128", "--input", AES_KEY]);
    let out = evaluator(&format!("{addr}\n"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["output"], AES_CT);
    assert!(finish(g).0);
    // No address, or not one: each said, at once.
    let out = evaluator("");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("standard input ended before the garbler's address"),
        "{err}"
    );
    let out = evaluator("soon\n");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("\"soon\", is not IP:PORT"), "{err}");
}

/// `--parallel fgp --threads 2` on both parties (through `run`, which passes the flags on)
/// computes what one thread computes (whether a wave is split depends on the schemes'
/// default `min_wave`; splitting itself is tested byte for byte in the garble crate's
/// `tests/parallel.rs`); `--parallel none` with more threads is refused before anything
/// runs.
#[test]
fn threads_compute_what_one_thread_computes() {
    let circuit = "synthetic:and=20000,xor=20000,depth=10,inputs=1024";
    let inputs = ("a5".repeat(128), "3c".repeat(128));
    same_output_every_way(circuit, &inputs, &["fgp", "--threads", "2"]);
    let out = run(&[
        "run",
        "--circuit",
        "aes128",
        "--parallel",
        "none",
        "--threads",
        "2",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--threads 2 needs --parallel fgp"),
        "{err}"
    );
}

/// `--parallel cgp --threads 2` on both parties (through `run`) computes what one thread
/// computes, under every scheme, on a circuit whose regions make two pieces; a circuit
/// without regions is refused with the reason.
#[test]
fn coarse_pieces_compute_what_one_thread_computes() {
    let circuit = "mvmul:m=4,k=16,bits=32";
    let inputs = ("a5c3".repeat(128), "3c71".repeat(32));
    same_output_every_way(circuit, &inputs, &["cgp", "--threads", "2"]);
    let out = run(&["run", "--circuit", "aes128", "--parallel", "cgp"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("has no parallel regions"),
        "{err}"
    );
}

/// `--parallel cgp` over `quic` between two processes: the frames travel on lanes (a
/// stream per lane of the one connection; both parties say so) and the output is the one
/// of the tables in order over `tcp`, under every scheme; `quic:lanes=0` keeps them on the
/// session's stream. (A build without `quic` has no transport that opens lanes.)
#[cfg(feature = "quic")]
#[test]
fn coarse_frames_travel_on_quic_lanes() {
    let circuit = "mvmul:m=4,k=16,bits=32";
    let (g_in, e_in) = ("a5c3".repeat(128), "3c71".repeat(32));
    let party = |transport: &str, scheme: &str, parallel: &[&str]| {
        let mut g_args = vec![
            "--circuit",
            circuit,
            "--scheme",
            scheme,
            "--transport",
            transport,
            "--input",
            &g_in,
            "--parallel",
        ];
        g_args.extend_from_slice(parallel);
        let (g, addr) = garbler(&g_args);
        let mut e_args = vec![
            "evaluator",
            "--insecure",
            "--connect",
            &addr,
            "--circuit",
            circuit,
            "--scheme",
            scheme,
            "--transport",
            transport,
            "--input",
            &e_in,
            "--json",
            "--parallel",
        ];
        e_args.extend_from_slice(parallel);
        let e = run(&e_args);
        let e_err = String::from_utf8_lossy(&e.stderr).to_string();
        assert!(
            e.status.success(),
            "{transport} {scheme} {parallel:?}: {e_err}"
        );
        let (ok, g_err, _) = finish(g);
        assert!(ok, "{transport} {scheme} {parallel:?}: {g_err}");
        let v: Value = serde_json::from_slice(&e.stdout).unwrap();
        let lanes = u64::from(g_err.contains("travelled on 2 lanes")) * 2;
        assert_eq!(
            v["lanes"], lanes,
            "{transport} {scheme}: the report's and the garbler's"
        );
        (v["output"].clone(), g_err, e_err)
    };
    for scheme in ["prf", "circular", "ideal"] {
        let (want, ..) = party("tcp", scheme, &["none"]);
        let (got, g_err, e_err) = party("quic", scheme, &["cgp", "--threads", "2"]);
        assert_eq!(got, want, "{scheme}");
        for err in [&g_err, &e_err] {
            assert!(
                err.contains("frames travelled on 2 lanes"),
                "{scheme}: {err}"
            );
        }
    }
    let (got, g_err, e_err) = party("quic:lanes=0", "ideal", &["cgp", "--threads", "2"]);
    let want = party("tcp", "ideal", &["none"]).0;
    assert_eq!(got, want);
    assert!(!(g_err + &e_err).contains("travelled on"), "no lanes");
}

/// A protected open session of two computations on `quic` lanes, with more tables than
/// the lanes' flow-control windows hold (1 MiB): the garbler's message before the tables
/// must not wait behind them (it did once: a deadlock until the timeout).
#[cfg(feature = "quic")]
#[test]
fn a_protected_open_session_on_lanes_does_not_stall() {
    let circuit = "mvmul:m=4,k=16,bits=32";
    let (g_in, e_in) = ("a5c3".repeat(128), "3c71".repeat(32));
    let plain = run(&[
        "run",
        "--circuit",
        circuit,
        "--garbler-input",
        &g_in,
        "--evaluator-input",
        &e_in,
        "--json",
    ]);
    assert!(
        plain.status.success(),
        "{}",
        String::from_utf8_lossy(&plain.stderr)
    );
    let want = serde_json::from_slice::<Value>(&plain.stdout).unwrap()["output"].clone();
    let dir = tempfile::tempdir().unwrap();
    let psk = dir.path().join("psk");
    assert!(run(&["keygen", "--psk", "--out", psk.to_str().unwrap()])
        .status
        .success());
    let psk = psk.to_str().unwrap();
    let quic = "quic:window=1048576";
    let (g, addr) = common::garbler(&[
        "--psk-file",
        psk,
        "--circuit",
        circuit,
        "--transport",
        quic,
        "--input",
        &g_in,
        "--parallel",
        "cgp",
        "--threads",
        "2",
    ]);
    let e = run(&[
        "evaluator",
        "--psk-file",
        psk,
        "--connect",
        &addr,
        "--circuit",
        circuit,
        "--transport",
        quic,
        "--input",
        &e_in,
        "--json",
        "--parallel",
        "cgp",
        "--threads",
        "2",
        "--repeat",
        "2",
        "--timeout",
        "20",
    ]);
    let e_err = String::from_utf8_lossy(&e.stderr);
    assert!(e.status.success(), "protected: {e_err}");
    let (ok, g_err, _) = finish(g);
    assert!(ok, "protected: {g_err}");
    let reports: Vec<Value> = serde_json::Deserializer::from_slice(&e.stdout)
        .into_iter()
        .map(Result::unwrap)
        .collect();
    assert_eq!(reports.len(), 2);
    for r in reports {
        assert_eq!((&r["output"], &r["lanes"]), (&want, &Value::from(2)), "{r}");
    }
}

/// `--parallel auto` (through `run`, which passes it on with `--threads`): on a circuit
/// with regions both parties pick `cgp` and agree on it, on one without `fgp`, on one
/// thread or a link slower than a thread garbles `none`; every report says what and why,
/// and the output is the sequential one.
#[test]
fn auto_picks_per_party_and_says_why() {
    let mvmul = "mvmul:m=4,k=16,bits=32";
    let inputs = ("a5c3".repeat(128), "3c71".repeat(32));
    same_output_every_way(mvmul, &inputs, &["auto", "--threads", "2"]);
    let aes = ["--garbler-input", AES_KEY, "--evaluator-input", AES_PT];
    let cases: [(&str, &[&str], &str, &str); 4] = [
        (mvmul, &["--threads", "2"], "cgp", "parallel regions"),
        ("aes128", &["--threads", "2"], "fgp", "no parallel regions"),
        (
            "aes128",
            &["--threads", "1"],
            "none",
            "1 thread for this party",
        ),
        (
            "aes128",
            &["--threads", "2", "--rtt-ms", "10", "--bandwidth", "100mbit"],
            "none",
            "slower than one thread garbles",
        ),
    ];
    for (circuit, flags, mode, why) in cases {
        let mut args = vec!["run", "--circuit", circuit, "--json", "--parallel", "auto"];
        args.extend_from_slice(flags);
        if circuit == "aes128" {
            args.extend_from_slice(&aes);
        } else {
            args.extend(["--garbler-input", &inputs.0, "--evaluator-input", &inputs.1]);
        }
        let out = run(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "{circuit} {flags:?}: {err}");
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        if circuit == "aes128" {
            assert_eq!(v["output"], AES_CT, "{flags:?}");
        }
        for party in ["garbler", "evaluator"] {
            let r = &v[party];
            assert_eq!(r["parallel"], mode, "{circuit} {flags:?} {party}: {r}");
            let said = r["parallel_why"].as_str().unwrap_or_default();
            assert!(said.contains(why), "{circuit} {flags:?} {party}: {said}");
        }
    }
}

/// `run` of `circuit` on the (garbler, evaluator) `inputs` under every scheme, with
/// `--parallel none` and with `--parallel` followed by `parallel`: both give the same
/// output, not all zero.
fn same_output_every_way(circuit: &str, (g, e): &(String, String), parallel: &[&str]) {
    for scheme in ["prf", "circular", "ideal"] {
        let outputs: Vec<Value> = [&["none"][..], parallel]
            .iter()
            .map(|flags| {
                let mut args = vec![
                    "run",
                    "--circuit",
                    circuit,
                    "--scheme",
                    scheme,
                    "--garbler-input",
                    g,
                    "--evaluator-input",
                    e,
                    "--json",
                    "--parallel",
                ];
                args.extend_from_slice(flags);
                let out = run(&args);
                let err = String::from_utf8_lossy(&out.stderr);
                assert!(out.status.success(), "{scheme} {flags:?}: {err}");
                let v: Value = serde_json::from_slice(&out.stdout).unwrap();
                v["output"].clone()
            })
            .collect();
        assert!(
            outputs[0]
                .as_str()
                .is_some_and(|o| o.contains(|c| c != '0')),
            "{outputs:?}"
        );
        assert_eq!(outputs[0], outputs[1], "{scheme}");
    }
}
