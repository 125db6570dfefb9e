//! End-to-end tests of `transputation transports` and `transputation transport-bench`.

mod common;
use common::run;

use std::process::{Command, Stdio};

#[test]
fn lists_every_transport_with_its_availability() {
    let out = run(&["transports"]);
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    // Every transport of the registry, its summary and each option's doc.
    for f in transputation_transport::families() {
        assert!(
            text.contains(&format!("{}: ", f.name)),
            "{}: {text}",
            f.name
        );
        assert!(text.contains(&f.summary[..30]), "{}: {text}", f.name);
        for o in f.options {
            let key = format!("{}={}", o.key, o.kind.metavar());
            assert!(text.contains(&key), "{key}: {text}");
        }
    }
    assert!(text.contains("rate=RATE") && text.contains("streams=CONNECTIONS"));
    // Readable in a terminal: long options and descriptions are wrapped.
    for line in text.lines() {
        assert!(line.chars().count() <= 92, "too wide: {line}");
    }
    let out = run(&["transports", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    let mut registry: Vec<&str> = Vec::new();
    for f in transputation_transport::families() {
        registry.extend(f.names());
    }
    registry.extend(transputation_transport::not_built().iter().map(|(n, _)| *n));
    assert_eq!(names, registry);
    assert_eq!(&names[..4], ["tcp", "tcp-bbr", "mtcp", "udp"]);
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
        ("udt", "udt:mss=1500"),
        ("quic:cc=bbr", "quic:cc=bbr"),
    ]
    .into_iter()
    .filter(|(t, _)| built(t))
    {
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
    let out = run(&["transport-bench", "--transport", "sabul", "--bytes", "10"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains("unknown transport 'sabul' (valid: tcp, tcp-bbr, mtcp, udp"),
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
    assert!(
        err.contains("bad value '0' for option 'streams': connections, from 1 to 64"),
        "{err}"
    );
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
        if built(transport) {
            separate_processes(transport);
        }
    }
}

fn separate_processes(transport: &str) {
    // Find a free port, then run the receiver in one process and the sender in another.
    let port = if ["udp", "quic", "blast"]
        .iter()
        .any(|t| transport.starts_with(t))
    {
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

#[test]
fn sizes_socket_buffers_from_the_path_and_reports_them() {
    // 100 Mbit/s x 20 ms: a BDP of 250,000 bytes, a buffer of twice that.
    let out = run(&[
        "transport-bench",
        "--transport",
        "tcp",
        "--bytes",
        "4MiB",
        "--rtt-ms",
        "20",
        "--bandwidth",
        "100mbit",
        "--read-rate",
        "400mbit",
        "--json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["bdp_bytes"], 250_000, "{v}");
    assert_eq!(v["buffer_bytes"], 500_000, "{v}");
    assert_eq!(v["volume_bytes"], 4 << 20, "{v}");
    assert_eq!(v["sizing_limited_by"], "bdp", "{v}");
    // L = 500,000 / (1 - 100/400), rounded up.
    assert_eq!(v["paper_bound_bytes"], 666_667, "{v}");
    assert_eq!(v["fill_bound_bytes"], serde_json::Value::Null, "{v}");
    // The kernel reports twice what was set (capped at rmem_max/wmem_max without the
    // right to force more: 500,000 is below the usual caps either way).
    for key in ["socket_send_buffer_bytes", "socket_recv_buffer_bytes"] {
        let got = v[key].as_u64().unwrap_or_else(|| panic!("{key}: {v}"));
        let cap = v["rmem_max"]
            .as_u64()
            .unwrap_or(u64::MAX)
            .min(v["wmem_max"].as_u64().unwrap_or(u64::MAX));
        assert!(got >= 500_000 || got == 2 * cap, "{key}: {v}");
    }
    for key in ["transport", "bytes", "seconds", "mbit_per_s"] {
        assert!(!v[key].is_null(), "{key}: {v}");
    }

    // --volume caps the buffer; -v shows the sizing.
    let out = run(&[
        "transport-bench",
        "--transport",
        "mtcp:streams=2",
        "--bytes",
        "1MiB",
        "--volume",
        "100000",
        "--rtt-ms",
        "100",
        "--bandwidth",
        "1gbit",
        "-v",
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    for want in [
        "bandwidth-delay product           12,500,000 bytes",
        "165,536 bytes (set by: volume",
        "paper's bound L = B/(1-Ra/Rr)     needs --read-rate",
        "sender's socket buffers (kernel)",
    ] {
        assert!(text.contains(want), "{want}: {text}");
    }

    // Without a path, the JSON says so with nulls.
    let out = run(&[
        "transport-bench",
        "--transport",
        "tcp",
        "--bytes",
        "1000",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        v["buffer_bytes"].is_null() && v["bdp_bytes"].is_null(),
        "{v}"
    );

    // Bad or half-given paths are refused clearly.
    let out = run(&[
        "transport-bench",
        "--transport",
        "tcp",
        "--bytes",
        "10",
        "--rtt-ms",
        "5",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("--bandwidth"),
        "{err}"
    );
    let out = run(&[
        "transport-bench",
        "--transport",
        "tcp",
        "--bytes",
        "10",
        "--rtt-ms",
        "5",
        "--bandwidth",
        "fast",
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("'fast' is not a rate"), "{err}");
}

/// Whether this build has the transport of `spec`.
fn built(spec: &str) -> bool {
    transputation_transport::family(spec.split(':').next().unwrap_or(spec)).is_some()
}
