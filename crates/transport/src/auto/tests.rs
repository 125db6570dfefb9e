//! The candidates come from the registry's declarations.

use transputation_model::Path;

use super::*;

#[test]
fn every_available_family_is_a_candidate_with_its_tuned_settings() {
    // 300 ms at 500 Mbit/s: an 18.75 MB pipe, so quic is tuned to 0.8 of it.
    let path = Path::exact(0.3, 62.5e6, 0.0);
    // Those with a start-up of their own (udt) only once started (tests/auto_cli.rs in
    // the transputation crate checks a session without it, in a process of its own).
    finish_start_ups();
    let c = candidates(&path);
    let names: Vec<&str> = c.iter().map(|c| c.name.as_str()).collect();
    for f in families().iter().filter(|f| (f.available)().is_ok()) {
        assert!(
            names.iter().any(|n| n.split(':').next() == Some(f.name)),
            "{} missing from {names:?}",
            f.name
        );
    }
    if families().iter().any(|f| f.name == "quic") {
        assert!(names.contains(&"quic:cc=bbr,iw=15000000"), "{names:?}");
        assert!(names.contains(&"quic:cc=cubic,iw=15000000"), "{names:?}");
        // quinn's BBR declares its first-flight stall; its cubic does not.
        let stall = |name: &str| {
            c.iter()
                .find(|c| c.name == name)
                .map(|c| c.model.first_flight_stall.is_some())
        };
        assert_eq!(stall("quic:cc=bbr,iw=15000000"), Some(true));
        assert_eq!(stall("quic:cc=cubic,iw=15000000"), Some(false));
    }
    assert!(
        names.iter().any(|n| n.ends_with("rate=480mbit")),
        "{names:?}"
    );
    // Both kernel controllers (where the kernel has BBR), whichever is the default.
    let keys: Vec<&str> = c.iter().map(|c| c.model.key.as_str()).collect();
    assert!(keys.contains(&"tcp/cubic"), "{keys:?}");
    if crate::check_congestion_control("bbr").is_ok() {
        assert!(keys.contains(&"tcp/bbr"), "{keys:?}");
    }
    let udp = c.iter().find(|c| c.name.starts_with("udp")).unwrap();
    assert!(!udp.eligible);
    // Its model fitted to the testbed's runs: a candidate like the kernel's.
    let blast = c.iter().find(|c| c.name == "blast").unwrap();
    assert!(blast.eligible && blast.model.control.repairs_loss());
    assert!(c.iter().filter(|c| c.eligible).count() >= 3);
}

#[test]
fn names_the_model_cannot_tell_apart_count_once() {
    let path = Path::exact(0.01, 12.5e6, 0.0);
    let c = candidates(&path);
    for (i, a) in c.iter().enumerate() {
        for b in &c[i + 1..] {
            assert_ne!(a.model, b.model, "{} and {}", a.name, b.name);
        }
    }
}

#[test]
fn the_model_follows_the_options() {
    let m = "mtcp:streams=8,cc=bbr"
        .parse::<TransportSpec>()
        .unwrap()
        .model();
    assert_eq!(
        (m.key.as_str(), m.streams, m.connect_round_trips),
        ("mtcp/bbr", 8, 2.0)
    );
    let m = "tcp-bbr".parse::<TransportSpec>().unwrap().model();
    assert_eq!(m.key, "tcp/bbr");
}

#[test]
fn a_listen_key_drops_the_sender_options_and_the_hint_carries_them() {
    let spec = |s: &str| s.parse::<TransportSpec>().unwrap();
    assert_eq!(spec("tcp:cc=bbr").listen_key().to_string(), "tcp");
    assert_eq!(spec("tcp-bbr").listen_key().to_string(), "tcp");
    assert_eq!(
        spec("mtcp:streams=8,cc=bbr").listen_key().to_string(),
        "mtcp:streams=8"
    );
    assert_eq!(
        spec("tcp:cc=bbr").sender_hint(Some(1 << 20)),
        SenderHint {
            congestion: Some("bbr".into()),
            initial_window: None,
            send_buffer: Some(1 << 20),
            start_rate: None,
        }
    );
    if families().iter().any(|f| f.name == "quic") {
        let quic = spec("quic:cc=bbr,iw=2500000");
        assert_eq!(quic.listen_key().to_string(), "quic:cc=cubic");
        assert_eq!(quic.sender_hint(None).initial_window, Some(2_500_000));
    }
    if families().iter().any(|f| f.name == "udt") {
        assert_eq!(spec("udt").listen_key(), spec("udt"));
        assert_eq!(spec("udt").sender_hint(None), SenderHint::default());
    }
}

#[test]
fn the_incumbent_is_kernel_tcp_as_the_hosts_run_it() {
    let path = Path::exact(0.01, 12.5e6, 0.0);
    let incumbents = |c: &[Candidate]| -> Vec<String> {
        c.iter()
            .filter(|c| c.incumbent)
            .map(|c| c.name.clone())
            .collect()
    };
    // On hosts that run cubic, whatever this one runs.
    let on_cubic = candidates_on_hosts(&path, "cubic");
    assert_eq!(incumbents(&on_cubic), ["tcp:cc=cubic"]);
    // This host's own.
    let here = candidates(&path);
    let ours = format!("tcp:cc={}", crate::default_congestion_control());
    assert_eq!(incumbents(&here), [ours.as_str()]);
    assert_eq!(incumbent().unwrap().to_string(), ours);
}
