//! End-to-end tests of `transputation transports` and `transputation transport-bench`.

use std::process::{Command, Stdio};

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args(args)
        .output()
        .expect("the binary runs")
}

#[test]
fn lists_every_transport_with_its_availability() {
    let out = run(&["transports"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    for name in [
        "tcp ",
        "tcp-bbr",
        "mtcp",
        "streams=N",
        "udp",
        "rate=RATE",
        "quic",
        "not yet authenticated",
    ] {
        assert!(text.contains(name), "{name}: {text}");
    }
    let out = run(&["transports", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["tcp", "tcp-bbr", "mtcp", "udp", "quic"]);
    assert_eq!(v[0]["available"], true);
    let bbr = &v[1];
    if bbr["available"] == false {
        let reason = bbr["reason"].as_str().unwrap();
        assert!(reason.contains("'bbr' is not available"), "{reason}");
    }
}

#[test]
fn benches_each_transport_over_loopback() {
    for (transport, canonical) in [
        ("tcp", "tcp"),
        ("mtcp:streams=3", "mtcp:streams=3"),
        ("tcp:cc=cubic", "tcp:cc=cubic"),
        ("udp", "udp:mtu=1500,rate=1gbit"),
        ("quic:cc=bbr", "quic:cc=bbr"),
    ] {
        let out = run(&[
            "transport-bench",
            "--transport",
            transport,
            "--bytes",
            "8MiB",
            "--message-bytes",
            "100000",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{transport}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["transport"], canonical);
        assert_eq!(v["bytes"], 8 << 20);
        assert_eq!(v["messages"], (8u64 << 20).div_ceil(100_000));
        for key in ["seconds", "mbit_per_s"] {
            assert!(
                v[key].as_f64().is_some_and(|x| x > 0.0),
                "{transport}: {key}"
            );
        }
        // Payload + 8 bytes of framing per message + the 24-byte header message.
        assert!(v["wire_bytes_sent"].as_u64().unwrap() >= (8 << 20) + 8 * 84 + 24);
    }
    let out = run(&["transport-bench", "--transport", "tcp", "--bytes", "1000"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success() && text.contains("Mbit/s"), "{text}");
}

#[test]
fn names_a_bad_transport_or_option() {
    let out = run(&["transport-bench", "--transport", "udt", "--bytes", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("unknown transport 'udt' (valid: tcp, tcp-bbr, mtcp, udp, quic)"),
        "{err}"
    );
    let out = run(&[
        "transport-bench",
        "--transport",
        "mtcp:streams=0",
        "--bytes",
        "10",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("a whole number from 1 to 64"), "{err}");
    let out = run(&[
        "transport-bench",
        "--transport",
        "tcp:cc=nonesuch",
        "--bytes",
        "10",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("TCP congestion control 'nonesuch' is not available in this kernel"),
        "{err}"
    );
}

#[test]
fn separate_sender_and_receiver_processes() {
    for transport in ["mtcp:streams=2", "udp:rate=500mbit", "quic"] {
        separate_processes(transport);
    }
}

fn separate_processes(transport: &str) {
    // Find a free port, then run the receiver in one process and the sender in another.
    let port = if transport.starts_with("udp") || transport.starts_with("quic") {
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    } else {
        std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port()
    };
    let addr = format!("127.0.0.1:{port}");
    let receiver = Command::new(env!("CARGO_BIN_EXE_transputation"))
        .args([
            "transport-bench",
            "--transport",
            transport,
            "--listen",
            &addr,
            "--timeout",
            "10",
        ])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = run(&[
        "transport-bench",
        "--transport",
        transport,
        "--bytes",
        "3MiB",
        "--connect",
        &addr,
        "--json",
    ]);
    let receiver = receiver.wait_with_output().unwrap();
    let rerr = String::from_utf8_lossy(&receiver.stderr);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(receiver.status.success(), "{rerr}");
    assert!(rerr.contains("received 3,145,728 bytes"), "{rerr}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["bytes"], 3 << 20);
}

#[test]
fn a_silent_receiver_gives_a_timeout_not_a_hang() {
    // A plain socket that accepts (the kernel does) but never answers.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = silent.local_addr().unwrap().to_string();
    let start = std::time::Instant::now();
    let out = run(&[
        "transport-bench",
        "--transport",
        "tcp",
        "--bytes",
        "1000",
        "--connect",
        &addr,
        "--timeout",
        "1",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("the peer was silent for 1s"), "{err}");
    assert!(start.elapsed().as_secs() < 10);
    drop(silent);
}
