//! `transputation probe` across a real rate-limited link: two network namespaces made by
//! this test, a veth pair between them, tbf at 50 Mbit/s on the prober's side (and netem
//! delay on the server's side where the kernel has netem). Needs root and `ip`/`tc`;
//! without them the test says so on stderr and passes without measuring.
//!
//! Everything lives inside the two namespaces (the veth ends are created in them), named
//! after this process, and a guard deletes both namespaces, and with them the veth pair and
//! the qdiscs, when the test ends, also by a panic.

use std::process::{Command, Output, Stdio};

const RATE_MBIT: f64 = 50.0;
const DELAY_MS: f64 = 10.0;

/// Namespaces this test created; deleted on drop.
struct Namespaces(Vec<String>);

impl Drop for Namespaces {
    fn drop(&mut self) {
        for ns in &self.0 {
            let _ = Command::new("ip").args(["netns", "del", ns]).output();
        }
    }
}

fn run(args: &[&str]) -> Output {
    Command::new(args[0])
        .args(&args[1..])
        .output()
        .unwrap_or_else(|e| panic!("{args:?}: {e}"))
}

/// Runs a set-up command; panics with its stderr if it fails.
fn must(args: &[&str]) {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Why this test cannot run here, if it cannot.
fn missing_prerequisite() -> Option<String> {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let euid = status
        .lines()
        .find_map(|l| l.strip_prefix("Uid:"))
        .and_then(|l| l.split_whitespace().nth(1))
        .unwrap_or("?");
    if euid != "0" {
        return Some(format!("not root (effective uid {euid})"));
    }
    for tool in ["ip", "tc"] {
        if Command::new(tool).arg("-V").output().is_err() {
            return Some(format!("`{tool}` is missing (iproute2)"));
        }
    }
    None
}

#[test]
fn probe_measures_a_tbf_limited_link_between_namespaces() {
    if let Some(why) = missing_prerequisite() {
        eprintln!("skipping the network-namespace probe test: {why}");
        return;
    }
    let pid = std::process::id();
    let (a, b) = (format!("tp-probe-a-{pid}"), format!("tp-probe-b-{pid}"));
    // Interface names have at most 15 bytes.
    let (va, vb) = (format!("tpa{pid}"), format!("tpb{pid}"));
    let mut guard = Namespaces(Vec::new());
    for ns in [&a, &b] {
        must(&["ip", "netns", "add", ns]);
        guard.0.push(ns.clone());
    }
    must(&[
        "ip", "link", "add", &va, "netns", &a, "type", "veth", "peer", "name", &vb, "netns", &b,
    ]);
    for (ns, dev, ip) in [(&a, &va, "10.203.0.1/24"), (&b, &vb, "10.203.0.2/24")] {
        must(&["ip", "-n", ns, "addr", "add", ip, "dev", dev]);
        must(&["ip", "-n", ns, "link", "set", dev, "up"]);
        must(&["ip", "-n", ns, "link", "set", "lo", "up"]);
    }
    // The prober's side: 50 Mbit/s, a 32 KiB bucket, at most 50 ms of queue.
    must(&[
        "ip", "netns", "exec", &a, "tc", "qdisc", "add", "dev", &va, "root", "tbf", "rate",
        "50mbit", "burst", "32kb", "latency", "50ms",
    ]);
    // The server's side: a one-way delay, where the kernel has netem.
    let delay = format!("{DELAY_MS}ms");
    let netem = run(&[
        "ip", "netns", "exec", &b, "tc", "qdisc", "add", "dev", &vb, "root", "netem", "delay",
        &delay,
    ]);
    let delayed = netem.status.success();
    if !delayed {
        eprintln!(
            "netem is not available ({}): checking the round trip without added delay",
            String::from_utf8_lossy(&netem.stderr).trim()
        );
    }

    let exe = env!("CARGO_BIN_EXE_transputation");
    let server = Command::new("ip")
        .args([
            "netns",
            "exec",
            &b,
            exe,
            "probe",
            "--listen",
            "10.203.0.2:7001",
        ])
        .args(["--timeout", "20"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = run(&[
        "ip",
        "netns",
        "exec",
        &a,
        exe,
        "probe",
        "--connect",
        "10.203.0.2:7001",
        "--json",
        "--timeout",
        "20",
    ]);
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
    eprintln!("{v}");
    let f = |k: &str| v[k].as_f64().unwrap_or_else(|| panic!("{k}: {v}"));
    let bw = f("bandwidth_mbps");
    assert!(
        (bw - RATE_MBIT).abs() <= 0.2 * RATE_MBIT,
        "bandwidth {bw:.1} Mbit/s is not within 20 % of tbf's {RATE_MBIT} Mbit/s: {v}"
    );
    let (min, median) = (f("rtt_ms_min"), f("rtt_ms_median"));
    if delayed {
        assert!(
            min >= DELAY_MS && median < DELAY_MS + 10.0,
            "round trip {min:.2} / {median:.2} ms for {DELAY_MS} ms of netem delay: {v}"
        );
    } else {
        assert!(median < 5.0, "round trip {median:.2} ms over a veth: {v}");
    }
    drop(guard);
    for ns in [&a, &b] {
        let list = run(&["ip", "netns", "list"]);
        assert!(
            !String::from_utf8_lossy(&list.stdout).contains(ns.as_str()),
            "{ns} was not removed"
        );
    }
}
