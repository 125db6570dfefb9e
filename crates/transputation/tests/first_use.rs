//! End-to-end tests of what a new user meets first: error messages that name the problem
//! once and in the user's terms, mismatched settings of the two parties named on both
//! sides, and output that stops quietly when its reader goes away.

mod common;
use common::run;

use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use transputation_experiments::db::{Db, Environment};

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

const AES_KEY: &str = "000102030405060708090a0b0c0d0e0f";
const AES_PT: &str = "00112233445566778899aabbccddeeff";

fn psk_file(dir: &Path) -> String {
    let p = dir.join("psk");
    let out = run(&["keygen", "--psk", "--out", p.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    p.to_str().unwrap().to_string()
}

/// An aes128 evaluator of the garbler at `addr` with the protection flags `protection`.
fn evaluator(addr: &str, protection: &[&str]) -> Output {
    let mut args = vec![
        "evaluator",
        "--connect",
        addr,
        "--timeout",
        "3",
        "--circuit",
        "aes128",
        "--input",
        AES_PT,
    ];
    args.extend_from_slice(protection);
    run(&args)
}

#[test]
fn an_unprotected_garbler_and_a_protected_evaluator_both_name_the_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk_file(dir.path());
    let (g, addr) = common::garbler(&["--circuit", "aes128", "--input", AES_KEY, "--insecure"]);
    let e = evaluator(&addr, &["--psk-file", &psk]);
    let g_out = g.child.wait_with_output().unwrap();
    let g_err = g.stderr.join().unwrap();
    assert!(!g_out.status.success() && !e.status.success());
    assert!(
        g_err.contains("the peer runs a protected session (--psk-file or --key) but this side")
            && !g_err.contains("a message of"),
        "{g_err}"
    );
    let e_err = stderr(&e);
    assert!(
        e_err.contains("the peer runs without protection (--insecure)"),
        "{e_err}"
    );
}

#[test]
fn a_protected_garbler_and_an_unprotected_evaluator_both_name_the_mismatch() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk_file(dir.path());
    let (mut g, addr) = common::garbler(&[
        "--circuit",
        "aes128",
        "--input",
        AES_KEY,
        "--psk-file",
        &psk,
    ]);
    let e = evaluator(&addr, &["--insecure"]);
    assert!(!e.status.success());
    let e_err = stderr(&e);
    assert!(
        e_err.contains("it refused this session, as a party that protects its session"),
        "{e_err}"
    );
    // The garbler says why it refused the peer, and waits for the next.
    let refused = g
        .lines
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    assert!(
        refused.contains("the peer runs without protection (--insecure)"),
        "{refused}"
    );
    g.child.kill().unwrap();
    g.child.wait().unwrap();
}

#[test]
fn an_old_bristol_file_of_one_party_takes_that_party() {
    // `2 0 1`: two input bits of one party, an empty second group, one output bit.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("and.txt");
    std::fs::write(&file, "1 3\n2 0 1\n\n2 1 0 1 2 AND\n").unwrap();
    let file = file.to_str().unwrap();
    let out = run(&["circuit", "stats", file, "--parties", "evaluator", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["evaluator_inputs"], 2, "{v}");
    assert_eq!(v["garbler_inputs"], 0, "{v}");
}

#[test]
fn keygen_onto_an_existing_file_names_it_and_the_way_out() {
    let dir = tempfile::tempdir().unwrap();
    let path = psk_file(dir.path());
    for extra in [&["--psk"][..], &[]] {
        let mut args = vec!["keygen", "--out", &path];
        args.extend_from_slice(extra);
        let out = run(&args);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(
            err.contains(&format!("{path} exists already"))
                && err.contains("remove it first, or choose another path"),
            "{err}"
        );
    }
}

/// Whether this build and machine have udt (`transports` says so).
fn udt_works() -> bool {
    let v: serde_json::Value =
        serde_json::from_slice(&run(&["transports", "--json"]).stdout).unwrap();
    let works = v
        .as_array()
        .unwrap()
        .iter()
        .any(|t| t["name"] == "udt" && t["available"] == true);
    if !works {
        eprintln!("skipping: udt does not work here");
    }
    works
}

#[test]
fn udt_on_a_port_in_use_says_so() {
    if !udt_works() {
        return;
    }
    let busy = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let out = run(&[
        "garbler",
        "--transport",
        "udt",
        "--listen",
        &addr,
        "--circuit",
        "aes128",
        "--input",
        AES_KEY,
        "--insecure",
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("Address already in use") && !err.contains("UDT error"),
        "{err}"
    );
}

#[test]
fn a_refused_udt_peer_is_logged_without_an_unknown_address() {
    if !udt_works() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let psk = psk_file(dir.path());
    let (mut g, addr) = common::garbler(&[
        "--transport",
        "udt",
        "--circuit",
        "aes128",
        "--input",
        AES_KEY,
        "--psk-file",
        &psk,
    ]);
    let e = evaluator(&addr, &["--transport", "udt", "--insecure"]);
    assert!(!e.status.success());
    let refused = g
        .lines
        .recv_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    assert!(
        refused.starts_with("refused a peer: ") && !refused.contains("unknown"),
        "{refused}"
    );
    g.child.kill().unwrap();
    g.child.wait().unwrap();
}

#[test]
fn a_key_file_of_the_wrong_kind_is_refused_naming_both_kinds() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk_file(dir.path());
    let key = dir.path().join("k");
    let key = key.to_str().unwrap();
    let out = run(&["keygen", "--out", key]);
    assert!(out.status.success(), "{}", stderr(&out));
    let public = String::from_utf8(out.stdout).unwrap().trim().to_string();
    for (role, flags, expected) in [
        (
            "garbler",
            vec!["--key", &psk, "--peer-key", &public],
            "holds a pre-shared key (for --psk-file), not a static private key (for --key)",
        ),
        (
            "evaluator",
            vec!["--psk-file", key],
            "holds a static private key (for --key), not a pre-shared key (for --psk-file)",
        ),
        (
            "evaluator",
            vec!["--key", key, "--peer-key", key],
            "holds a static private key (for --key), not a static public key",
        ),
    ] {
        let mut args = vec![role, "--circuit", "aes128"];
        args.extend(flags);
        let out = run(&args);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains(expected), "{args:?}: {err}");
    }
}

/// Starts an aes128 garbler on a free port with `flags`; returns it and its address.
fn waiting_garbler(flags: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = common::bin()
        .args(["garbler", "--listen", "127.0.0.1:0", "--circuit", "aes128"])
        .args(["--input", AES_KEY, "--insecure"])
        .args(flags)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
    err.read_line(&mut line).unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap()
        .to_string();
    // Keep reading, so the garbler never blocks on a full pipe.
    std::thread::spawn(move || std::io::copy(&mut err, &mut std::io::sink()));
    (child, addr)
}

#[test]
fn a_garbler_waits_for_its_first_peer_longer_than_the_io_timeout() {
    let help = String::from_utf8(run(&["garbler", "--help"]).stdout).unwrap();
    assert!(
        help.contains("--accept-timeout") && help.contains("10 minutes"),
        "{help}"
    );

    // A second's I/O timeout, and an evaluator that starts two seconds later: served.
    let (garbler, addr) = waiting_garbler(&["--timeout", "1", "--accept-timeout", "20"]);
    std::thread::sleep(std::time::Duration::from_secs(2));
    let e = evaluator(&addr, &["--insecure"]);
    assert!(e.status.success(), "{}", stderr(&e));
    let g = garbler.wait_with_output().unwrap();
    assert!(g.status.success());

    // Nobody comes: the garbler gives up after --accept-timeout, and says which (not after
    // the longer --timeout).
    let start = std::time::Instant::now();
    let out = common::bin()
        .args(["garbler", "--listen", "127.0.0.1:0", "--circuit", "aes128"])
        .args(["--input", AES_KEY, "--insecure", "--timeout", "30"])
        .args(["--accept-timeout", "1"])
        .output()
        .unwrap();
    let took = start.elapsed().as_secs_f64();
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains("(--accept-timeout)"), "{err}");
    assert!((0.9..5.0).contains(&took), "{took} s");
}

#[test]
fn a_partys_summary_counts_and_gates_in_words() {
    let (garbler, addr) = waiting_garbler(&[]);
    let e = evaluator(&addr, &["--insecure"]);
    assert!(e.status.success(), "{}", stderr(&e));
    garbler.wait_with_output().unwrap();
    let err = stderr(&e);
    assert!(
        err.contains("aes128 over tcp, ideal on 6400 AND gates: protocol"),
        "{err}"
    );
}

#[test]
fn the_parties_byte_counts_differ_by_the_close_record_as_the_readme_says() {
    let readme = include_str!("../../../README.md");
    assert!(readme.contains("includes its close record (36 bytes"));
    for (flags, close_record) in [(&[][..], 36), (&["--insecure"][..], 0)] {
        let mut args = vec!["run", "--circuit", "aes128", "--json"];
        args.extend_from_slice(&["--garbler-input", AES_KEY, "--evaluator-input", AES_PT]);
        args.extend_from_slice(flags);
        let v = common::run_json(&args);
        let count = |party: &str, key: &str| v[party][key].as_u64().unwrap();
        for key in ["bytes_garbler_to_evaluator", "bytes_evaluator_to_garbler"] {
            let (sender, receiver) = if key == "bytes_garbler_to_evaluator" {
                ("garbler", "evaluator")
            } else {
                ("evaluator", "garbler")
            };
            assert_eq!(
                count(sender, key) - count(receiver, key),
                close_record,
                "{key} {flags:?}"
            );
        }
    }
}

#[test]
fn the_results_directory_of_the_main_job_is_found_by_every_testbed_command() {
    let results = tempfile::tempdir().unwrap();
    let home = tempfile::tempdir().unwrap();
    results_db(results.path());
    for args in [
        &["testbed", "experiments"][..],
        &["testbed", "report", "first-use"],
    ] {
        let out = common::bin()
            .args(args)
            .env("TRANSPUTATION_RESULTS", results.path())
            .env("HOME", home.path())
            .env("XDG_DATA_HOME", home.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains("first-use"), "{args:?}: {stdout}");
    }
    let help = String::from_utf8(run(&["testbed", "experiments", "--help"]).stdout).unwrap();
    assert!(
        help.contains("$TRANSPUTATION_RESULTS/results.sqlite"),
        "{help}"
    );
}
