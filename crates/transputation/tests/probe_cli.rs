//! `transputation probe`, both ends as separate processes over 127.0.0.1.

use std::process::{Command, Stdio};

#[test]
fn probe_measures_loopback_with_both_ends() {
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let addr = format!("127.0.0.1:{port}");
    let server = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(["probe", "--listen", &addr, "--timeout", "20"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The client's pings are retried, so it may start before the server binds.
    let out = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(["probe", "--connect", &addr, "--json"])
        .output()
        .unwrap();
    let server = server.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        server.status.success(),
        "{}",
        String::from_utf8_lossy(&server.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"));
    let (min, med, max) = (f("rtt_ms_min"), f("rtt_ms_median"), f("rtt_ms_max"));
    assert!(0.0 < min && min <= med && med <= max && max < 1000.0, "{v}");
    let loss = f("loss_rate");
    assert!((0.0..=1.0).contains(&loss), "{v}");
    assert!(v["train_received"].as_u64().unwrap() > 0, "{v}");
    assert!(f("bandwidth_mbps") > 0.0, "{v}");
    assert_eq!(v["train_sent"], 1000);

    // The prober may start first: it waits for the server.
    let client = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(["probe", "--connect", &addr, "--json", "--timeout", "20"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let server = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(["probe", "--listen", &addr, "--timeout", "20"])
        .output()
        .unwrap();
    let out = client.wait_with_output().unwrap();
    assert!(out.status.success() && server.status.success());
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["pings_answered"], 20, "{v}");

    // Nobody there (the server has exited): a clear error after the timeout, not a hang,
    // with a note while waiting and the command to start a server.
    let start = std::time::Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(["probe", "--connect", &addr, "--timeout", "2", "--json"])
        .output()
        .unwrap();
    let took = start.elapsed();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("no answer"), "{err}");
    assert!(
        took >= std::time::Duration::from_secs(2) && took < std::time::Duration::from_secs(10),
        "{took:?}"
    );
    assert!(
        err.contains(&format!("waiting for a probe server at {addr}"))
            && err.contains(&format!("no answer from a probe server at {addr} for 2s"))
            && err.contains("probe --listen"),
        "{err}"
    );
    // --json keeps stdout for JSON: nothing is printed there on failure.
    assert!(
        out.stdout.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}
