//! `blast` on a shared bottleneck of the testbed's emulated link: two `blast` transfers at
//! once both finish and each gets at least a quarter of the link's rate, and a `blast`
//! transfer beside a `tcp-bbr` one leaves TCP at least a quarter. Each transfer is a
//! `transport-bench` pair (sender in namespace A, receiver in B) started together across
//! one `testbed exec` link of 40 ms and 100 Mbit/s.
//!
//! Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2; without them each test says
//! so on stderr and passes without measuring.

mod common;

use std::path::Path;
use std::process::Command;
use std::sync::Mutex;

/// The tests measure rates: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_transputation"))
}

/// The link's rate, Mbit/s.
const MBIT: f64 = 100.0;

/// Runs one transfer of 24 MiB per transport in `transports`, all at once through one
/// emulated link, and gives each sender's Mbit/s.
fn side_by_side(transports: &[&str]) -> Vec<f64> {
    let dir = tempfile::tempdir().unwrap();
    let exe = exe().display().to_string();
    let mut senders = String::new();
    let mut receivers = String::new();
    for (i, t) in transports.iter().enumerate() {
        let port = 7100 + i;
        let out = dir.path().join(format!("{i}.json"));
        receivers.push_str(&format!(
            "{exe} transport-bench --transport {t} --listen $TPB_ADDR_B:{port} --timeout 60 & "
        ));
        senders.push_str(&format!(
            "{exe} transport-bench --transport {t} --connect $TPB_ADDR_B:{port} --bytes 24MiB \
             --rtt-ms 40 --bandwidth {MBIT}mbit --timeout 60 --json > {} & ",
            out.display()
        ));
    }
    let status = Command::new(exe)
        .args(["testbed", "exec", "--rtt", "40ms", "--rate"])
        .arg(format!("{MBIT}mbit"))
        .args(["--b", &format!("{receivers}wait"), "--a"])
        .arg(format!("sleep 0.5; {senders}wait"))
        .status()
        .unwrap();
    assert!(status.success(), "testbed exec failed: {status}");
    (0..transports.len())
        .map(|i| {
            let text = std::fs::read_to_string(dir.path().join(format!("{i}.json")))
                .unwrap_or_else(|e| panic!("{}: no result ({e})", transports[i]));
            let v: serde_json::Value = serde_json::from_str(&text).unwrap();
            v["mbit_per_s"].as_f64().unwrap()
        })
        .collect()
}

#[test]
fn two_blast_transfers_share_a_bottleneck() {
    if let Some(why) = common::netns_missing() {
        eprintln!("skipping the blast network test: {why}");
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rates = side_by_side(&["blast", "blast"]);
    eprintln!("two blast transfers at once: {rates:?} Mbit/s on {MBIT} Mbit/s");
    for r in &rates {
        assert!(*r >= MBIT / 4.0, "{rates:?}");
    }
}

#[test]
fn blast_leaves_tcp_bbr_its_share() {
    if let Some(why) = common::netns_missing() {
        eprintln!("skipping the blast network test: {why}");
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let rates = side_by_side(&["blast", "tcp-bbr"]);
    eprintln!("blast and tcp-bbr at once: {rates:?} Mbit/s on {MBIT} Mbit/s");
    assert!(rates[1] >= MBIT / 4.0, "tcp-bbr got {:.1} Mbit/s", rates[1]);
    assert!(rates[0] >= MBIT / 4.0, "blast got {:.1} Mbit/s", rates[0]);
}
