//! Tests of experiment files: parsing, checking, planning and error locations.

use super::*;

fn flags() -> ExperimentFile {
    ExperimentFile {
        circuits: vec!["aes128".into(), "sha256".into()],
        schemes: vec!["ideal".into(), "prf".into()],
        transports: vec!["tcp".into(), "udt".into()],
        conditions: vec!["eu-us".into()],
        sweep: SweepFile {
            rtt: vec!["10ms".into(), "100ms".into()],
            loss: vec!["0".into(), "0.1%".into()],
            rate: vec!["100mbit".into()],
            ..SweepFile::default()
        },
        runs: 3,
        ..ExperimentFile::default()
    }
}

#[test]
fn the_matrix_has_every_combination_once() {
    let e = flags().resolve().unwrap();
    // eu-us and 2 rtts × 2 losses × 1 rate.
    let labels: Vec<_> = e.conditions.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        [
            "eu-us",
            "rtt 10ms rate 100mbit loss 0",
            "rtt 10ms rate 100mbit loss 0.1%",
            "rtt 100ms rate 100mbit loss 0",
            "rtt 100ms rate 100mbit loss 0.1%"
        ]
    );
    assert_eq!(e.conditions[4].link.rtt(), Duration::from_millis(100));
    assert_eq!(e.conditions[4].link.a_to_b.loss, 0.001);
    assert_eq!(e.conditions[4].link.name, labels[4]);
    let plan = e.plan();
    assert_eq!(plan.len(), 2 * 2 * 2 * 5 * 3);
    let keys: HashSet<_> = plan.iter().map(PlannedRun::key).collect();
    assert_eq!(keys.len(), plan.len());
    // Condition by condition, so one topology serves a contiguous stretch of runs.
    let mut seen = Vec::new();
    for p in &plan {
        if seen.last() != Some(&p.condition_index) {
            assert!(!seen.contains(&p.condition_index));
            seen.push(p.condition_index);
        }
        assert_eq!(e.conditions[p.condition_index].label, p.cell.condition);
    }
    // Within a condition, all cells of repetition 0 come before any of repetition 1.
    assert_eq!(plan[7].repetition, 0);
    assert_eq!(plan[8].repetition, 1);
    assert_eq!(plan[0].cell.transport, "tcp");
    assert_eq!(plan[1].cell.transport, "udt");
    // Repetition 1 starts each cell with the next transport.
    assert_eq!(plan[8].cell.transport, "udt");
    assert_eq!(plan[9].cell.transport, "tcp");
    assert_eq!(
        (plan[8].cell.circuit.as_str(), plan[9].cell.circuit.as_str()),
        (plan[0].cell.circuit.as_str(), plan[0].cell.circuit.as_str())
    );
}

#[test]
fn programs_join_the_matrix_without_schemes() {
    let mut f = flags();
    f.sweep = SweepFile::default();
    f.programs.insert("echo".into(), "/tmp/x".into());
    let e = f.resolve().unwrap();
    let plan = e.plan();
    assert_eq!(plan.len(), (2 * 2 + 1) * 2 * 3);
    let p: Vec<_> = plan.iter().filter(|p| p.cell.is_program()).collect();
    assert_eq!(p.len(), 2 * 3);
    assert_eq!(
        e.program("echo").unwrap().server(),
        PathBuf::from("/tmp/x/echo-server.sh")
    );
}

#[test]
fn bad_flags_name_their_key() {
    type Change = Box<dyn Fn(&mut ExperimentFile)>;
    let cases: Vec<(Change, &str)> = vec![
        (Box::new(|f| f.runs = 0), "runs"),
        (Box::new(|f| f.repeat = 0), "repeat"),
        (Box::new(|f| f.repeat = MAX_REPEAT + 1), "repeat"),
        (Box::new(|f| f.timeout = 0), "timeout"),
        (
            Box::new(|f| f.conditions.push("mars".into())),
            "conditions[1]",
        ),
        (
            Box::new(|f| f.transports.push("tcp".into())),
            "transports[2]",
        ),
        (Box::new(|f| f.sweep.loss[1] = "2".into()), "sweep.loss[1]"),
        (
            Box::new(|f| f.sweep.rate[0] = "5mbps".into()),
            "sweep.rate[0]",
        ),
        (Box::new(|f| f.emulator = "ns3".into()), "emulator"),
        (Box::new(|f| f.host_cc = Some("CUBIC".into())), "host_cc"),
        (Box::new(|f| f.host_cc = Some(String::new())), "host_cc"),
        (
            Box::new(|f| f.host_cc = Some("reno cubic".into())),
            "host_cc",
        ),
        (
            Box::new(|f| f.schemes = vec!["program".into()]),
            "schemes[0]",
        ),
        (
            Box::new(|f| {
                f.circuits.clear();
            }),
            "circuits",
        ),
    ];
    for (change, key) in cases {
        let mut f = flags();
        change(&mut f);
        let e = f.resolve().unwrap_err();
        assert_eq!(e.key, key, "{e}");
    }
}

const FILE: &str = r#"
name = "small"
circuits = ["aes128"]
schemes = ["ideal"]
transports = ["tcp", "udt"]
conditions = ["cw-lan"]
runs = 2
timeout = 60

[[link]]
name = "wan"
rtt = "10ms"
rate = "100mbit"

[[link]]
rtt = "40ms"
loss = "0.1%"

[programs]
echo = "examples/testbed-program"
"#;

#[test]
fn a_toml_file_parses_and_round_trips() {
    let f = ExperimentFile::from_toml(FILE).unwrap();
    let e = f.resolve().unwrap();
    assert_eq!(e.name, "small");
    assert_eq!(e.timeout, Duration::from_secs(60));
    assert!(e.protection);
    let labels: Vec<_> = e.conditions.iter().map(|c| c.label.as_str()).collect();
    assert_eq!(
        labels,
        ["cw-lan", "wan", "rtt 40ms rate unlimited loss 0.1%"]
    );
    assert_eq!(e.plan().len(), 2 * 3 * 2 * 2);
    // What the database keeps (JSON) gives back the same description.
    let json = serde_json::to_string(&f).unwrap();
    let back: ExperimentFile = serde_json::from_str(&json).unwrap();
    assert_eq!(back, f);
}

#[test]
fn the_hosts_congestion_control_defaults_to_cubic() {
    let e = flags().resolve().unwrap();
    assert_eq!(e.host_cc, HostCc::Algorithm("cubic".into()));
    let mut f = flags();
    f.host_cc = Some("system".into());
    assert_eq!(f.resolve().unwrap().host_cc, HostCc::System);
    f.host_cc = Some("reno".into());
    assert_eq!(
        f.resolve().unwrap().host_cc,
        HostCc::Algorithm("reno".into())
    );

    let f = ExperimentFile::from_toml(&FILE.replace("runs = 2", "runs = 2\nhost_cc = \"bbr\""))
        .unwrap();
    assert_eq!(f.host_cc.as_deref(), Some("bbr"));
    assert_eq!(
        f.resolve().unwrap().host_cc,
        HostCc::Algorithm("bbr".into())
    );
    let json = serde_json::to_string(&f).unwrap();
    assert!(json.contains("\"host_cc\":\"bbr\""), "{json}");
    // Absent stays absent: a stored description without it predates the key.
    let f = ExperimentFile::from_toml(FILE).unwrap();
    assert_eq!(f.host_cc, None);
    assert!(!serde_json::to_string(&f).unwrap().contains("host_cc"));
}

#[test]
fn toml_errors_name_line_and_key() {
    let bad_rate = FILE.replace("rate = \"100mbit\"", "rate = \"100mbps\"");
    let e = ExperimentFile::from_toml(&bad_rate).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("link[0].rate", Some(13)), "{e}");
    assert!(
        e.to_string().starts_with("line 13, link[0].rate: bad rate"),
        "{e}"
    );

    let bad_cond = FILE.replace("[\"cw-lan\"]", "[\"cw-lan\", \"moon\"]");
    let e = ExperimentFile::from_toml(&bad_cond).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("conditions[1]", Some(6)), "{e}");

    let unknown = FILE.replace("runs = 2", "rusn = 2");
    let e = ExperimentFile::from_toml(&unknown).unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");
    assert!(e.message.contains("rusn"), "{e}");

    let wrong_type = FILE.replace("runs = 2", "runs = \"two\"");
    let e = ExperimentFile::from_toml(&wrong_type).unwrap_err();
    assert_eq!(e.line, Some(7), "{e}");

    let bad_cc = FILE.replace("timeout = 60", "timeout = 60\nhost_cc = \"Cubic\"");
    let e = ExperimentFile::from_toml(&bad_cc).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("host_cc", Some(9)), "{e}");
    assert!(
        e.to_string()
            .starts_with("line 9, host_cc: bad TCP congestion control \"Cubic\""),
        "{e}"
    );

    let syntax = FILE.replace("timeout = 60", "timeout = ");
    let e = ExperimentFile::from_toml(&syntax).unwrap_err();
    assert_eq!(e.line, Some(8), "{e}");
}

#[test]
fn computations_per_session_default_to_one_and_are_checked() {
    // Absent: one computation per run, and a stored description without the key (from
    // before it existed) reads the same and is stored the same.
    let f = ExperimentFile::from_toml(FILE).unwrap();
    assert_eq!((f.repeat, f.resolve().unwrap().repeat), (1, 1));
    let json = serde_json::to_string(&f).unwrap();
    assert!(!json.contains("repeat"), "{json}");

    let f = ExperimentFile::from_toml(&FILE.replace("runs = 2", "runs = 2\nrepeat = 10")).unwrap();
    let e = f.resolve().unwrap();
    assert_eq!(e.repeat, 10);
    // The plan is the same: computations are within a run, not runs of their own.
    assert_eq!(e.plan().len(), 2 * 3 * 2 * 2);
    let back: ExperimentFile = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
    assert_eq!(back.repeat, 10);

    let e =
        ExperimentFile::from_toml(&FILE.replace("runs = 2", "runs = 2\nrepeat = 0")).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!("line 8, repeat: 0 computations per session: must be from 1 to {MAX_REPEAT}")
    );
    let e =
        ExperimentFile::from_toml(&FILE.replace("runs = 2", "runs = 2\nrepeat = -3")).unwrap_err();
    assert_eq!(e.line, Some(8), "{e}");
}

/// An experiment with `auto` and a transport following the condition, over a link with a
/// rate and one without.
const AUTO_FILE: &str = r#"
circuits = ["aes128"]
transports = ["tcp", "auto", "quic:cc=bbr,iw={bdp}", "quic:cc=bbr,iw={bdp*0.8}"]

[[link]]
name = "wan"
rtt = "100ms"
rate = "200mbit"

[[link]]
name = "unshaped"
rtt = "40ms"
"#;

#[test]
fn a_transport_with_bdp_runs_each_conditions_product() {
    let e = ExperimentFile::from_toml(AUTO_FILE)
        .unwrap()
        .resolve()
        .unwrap();
    let plan = e.plan();
    let ran: Vec<(&str, &str, &str)> = plan
        .iter()
        .map(|p| {
            (
                p.cell.condition.as_str(),
                p.transport_written.as_str(),
                p.cell.transport.as_str(),
            )
        })
        .collect();
    // 100 ms × 200 Mbit/s = 2.5 MB; the link without a rate has no product, and runs the
    // others.
    assert_eq!(
        ran,
        [
            ("wan", "tcp", "tcp"),
            ("wan", "auto", "auto"),
            ("wan", "quic:cc=bbr,iw={bdp}", "quic:cc=bbr,iw=2500000"),
            ("wan", "quic:cc=bbr,iw={bdp*0.8}", "quic:cc=bbr,iw=2000000"),
            ("unshaped", "tcp", "tcp"),
            ("unshaped", "auto", "auto"),
        ]
    );
    let notes = e.left_out();
    assert_eq!(notes.len(), 2, "{notes:?}");
    assert!(
        notes[0].starts_with(
            "leaving out the transport quic:cc=bbr,iw={bdp} in condition \"unshaped\": its \
             {bdp} needs the link's rate"
        ),
        "{notes:?}"
    );
    // The experiment's cap is the rate of a link without one, and caps the others: 40 ms ×
    // 100 Mbit/s = 500 kB, 100 ms × 100 Mbit/s = 1.25 MB.
    let f = ExperimentFile::from_toml(
        &AUTO_FILE.replace("circuits", "max_rate = \"100mbit\"\ncircuits"),
    )
    .unwrap();
    let e = f.resolve().unwrap();
    assert!(e.left_out().is_empty());
    let quic: Vec<String> = e
        .plan()
        .into_iter()
        .filter(|p| p.transport_written == "quic:cc=bbr,iw={bdp}")
        .map(|p| p.cell.transport)
        .collect();
    assert_eq!(quic, ["quic:cc=bbr,iw=1250000", "quic:cc=bbr,iw=500000"]);
    // The description keeps the template: a resumed experiment expands it the same.
    let back: ExperimentFile = serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
    assert_eq!(back.resolve().unwrap().plan(), e.plan());
}

#[test]
fn a_template_that_is_another_transport_in_a_condition_is_refused() {
    let mut f = ExperimentFile::from_toml(AUTO_FILE).unwrap();
    f.transports.push("quic:cc=bbr,iw=2500000".into());
    let e = f.resolve().unwrap_err().to_string();
    assert_eq!(
        e,
        "transports: \"quic:cc=bbr,iw={bdp}\" and \"quic:cc=bbr,iw=2500000\" are the same \
         transport in condition \"wan\" (quic:cc=bbr,iw=2500000): leave one out"
    );
    // Bad placeholders and auto with options are named by their place in the list, with
    // the line in a file.
    let bad = AUTO_FILE.replace("{bdp*0.8}", "{bdp:0.8}");
    let e = ExperimentFile::from_toml(&bad).unwrap_err();
    assert_eq!((e.key.as_str(), e.line), ("transports[3]", Some(3)), "{e}");
    assert!(e.message.contains("unknown placeholder \"bdp:0.8\""), "{e}");
    let e = ExperimentFile::from_toml(&AUTO_FILE.replace("\"auto\"", "\"auto:fast\"")).unwrap_err();
    assert_eq!(e.key, "transports[1]");
    assert!(e.message.starts_with("auto takes no options"), "{e}");
    // Its one variant, the race, is a transport of its own.
    ExperimentFile::from_toml(&AUTO_FILE.replace("\"auto\"", "\"auto:race\"")).unwrap();
}

#[test]
fn the_probe_cache_defaults_to_none_and_is_checked() {
    let f = ExperimentFile::from_toml(AUTO_FILE).unwrap();
    assert_eq!(f.probe_cache, None);
    assert_eq!(f.resolve().unwrap().probe_cache_secs, 0.0);
    // Absent stays absent in what the database keeps.
    assert!(!serde_json::to_string(&f).unwrap().contains("probe_cache"));
    for (written, secs) in [("600", 600.0), ("0.5", 0.5), ("0", 0.0)] {
        let text = AUTO_FILE.replace("circuits", &format!("probe_cache = {written}\ncircuits"));
        let f = ExperimentFile::from_toml(&text).unwrap();
        assert_eq!(f.resolve().unwrap().probe_cache_secs, secs, "{written}");
        let back: ExperimentFile =
            serde_json::from_str(&serde_json::to_string(&f).unwrap()).unwrap();
        assert_eq!(back, f);
    }
    for bad in ["-1", "1e9", "nan"] {
        let text = AUTO_FILE.replace("circuits", &format!("probe_cache = {bad}\ncircuits"));
        let e = ExperimentFile::from_toml(&text).unwrap_err();
        assert_eq!(
            (e.key.as_str(), e.line),
            ("probe_cache", Some(2)),
            "{bad}: {e}"
        );
        assert!(
            e.message.contains("must be from 0 to 604800 seconds"),
            "{e}"
        );
    }
}
