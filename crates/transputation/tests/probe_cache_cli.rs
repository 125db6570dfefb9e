//! `evaluator --transport auto --probe-cache 0`: no cache, every session measures its path
//! (what the testbed gives its auto evaluators, so that a run's time includes the probe),
//! and nothing is written to the user's cache.

mod common;

use std::process::Stdio;

const KEY: &str = "000102030405060708090a0b0c0d0e0f";

#[test]
fn a_probe_cache_of_zero_measures_every_session_and_keeps_nothing() {
    let cache = tempfile::tempdir().unwrap();
    for session in 0..2 {
        let (g, addr) = common::garbler(&[
            "--transport",
            "auto",
            "--circuit",
            "aes128",
            "--input",
            KEY,
            "--insecure",
        ]);
        let out = common::bin()
            .args(["evaluator", "--connect", &addr, "--transport", "auto"])
            .args(["--circuit", "aes128", "--input", KEY, "--insecure"])
            .args(["--probe-cache", "0", "--json"])
            .env("XDG_CACHE_HOME", cache.path())
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "session {session}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let mut child = g.child;
        assert!(child.wait().unwrap().success(), "session {session}");
        let report: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let auto = &report["auto"];
        assert_eq!(auto["path_from"], "probe", "session {session}: {report}");
        assert!(auto["probe_ms"].as_f64().unwrap() > 0.0, "{report}");
        assert_eq!(report["transport"], auto["chosen"], "{report}");
    }
    // Nothing cached: not even the directory.
    assert_eq!(std::fs::read_dir(cache.path()).unwrap().count(), 0);

    // A negative time is refused, naming the flag.
    let out = common::run(&[
        "evaluator",
        "--connect",
        "127.0.0.1:9",
        "--transport",
        "auto",
        "--circuit",
        "aes128",
        "--input",
        KEY,
        "--insecure",
        "--probe-cache=-1",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("--probe-cache must be 0 or a number of seconds"),
        "{err}"
    );
}
