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

#[test]
fn quick_probe_measures_loopback_in_a_few_round_trips() {
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
    let out = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(["probe", "--connect", &addr, "--quick", "--json"])
        .output()
        .unwrap();
    let server = server.wait_with_output().unwrap();
    assert!(
        out.status.success() && server.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&server.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"));
    // The server is started just before the client and may not be bound yet when the
    // first burst goes out (a busy host takes hundreds of ms to start a process): the
    // client then sends whole bursts of 5 again until one is answered. A pong that comes
    // after its burst's wait is not counted (a busy host may be that late even on
    // loopback).
    let sent = v["pings_sent"].as_u64().unwrap();
    assert!(sent >= 5 && sent.is_multiple_of(5), "{v}");
    assert!(
        (1..=5).contains(&v["pings_answered"].as_u64().unwrap()),
        "{v}"
    );
    let trains = v["trains"].as_u64().unwrap();
    assert!((1..=3).contains(&trains), "{v}");
    assert!(v["loss_evidence"]["sent"].as_u64().unwrap() >= 32, "{v}");
    assert!(f("bandwidth_floor_mbps") > 0.0, "{v}");
    // Loopback: 3 round trips are nothing, so the 50 ms bound the probe; the room is for
    // a busy host and a server process just started (the probe crate's own tests hold
    // the budget more tightly).
    assert!(f("duration_ms") < 1000.0, "{v}");

    // --quick sets its own pings and trains.
    let out = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(["probe", "--connect", &addr, "--quick", "--train", "10"])
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("'--quick' cannot be used with '--train"),
        "{err}"
    );
}
