//! Tests of the launcher: the parties' command lines, checks before a run, the binary's
//! capabilities.

use super::*;
use crate::db::{RunRecord, Status};
use transputation_contract::TransportInfo;

/// Inputs `00` (garbler) and `11` (evaluator), and no gates for the runner to warm for.
fn zero_and_one() -> CircuitStart {
    CircuitStart {
        garbler_input: "00".into(),
        evaluator_input: "11".into(),
        gates: 0,
    }
}

/// The launcher of `/bin/transputation` for `circuit`, with inputs `00` and `11`, one
/// computation per run, no protection flags.
fn binary_parties(circuit: &str) -> BinaryParties {
    BinaryParties {
        exe: "/bin/transputation".into(),
        circuits: HashMap::from([(circuit.to_string(), zero_and_one())]),
        protection: None,
        sizes_buffers: false,
        protocol_version: Some(5),
        repeat: 1,
        probe_cache_secs: 0.0,
        probe_caches: None,
        _key_dir: None,
    }
}

#[test]
fn a_party_gives_up_on_a_silent_peer_before_the_run_is_killed() {
    let secs = |s| party_io_timeout(Duration::from_secs(s));
    assert_eq!((secs(120), secs(8), secs(20)), (90.0, 6.0, 15.0));
    assert_eq!((secs(1), secs(0), secs(3600)), (1.0, 1.0, 90.0));
}

#[test]
fn parties_get_the_links_rtt_and_rate() {
    let link = LinkRecord {
        rtt_us: 100_500,
        rate_bps: Some(200_000_000),
        ..LinkRecord::default()
    };
    assert_eq!(sizing(true, &link), Some((100.5, 200_000_000)));
    assert_eq!(sizing(false, &link), None);
    let unlimited = LinkRecord {
        rate_bps: None,
        ..link.clone()
    };
    assert_eq!(sizing(true, &unlimited), None);

    let parties = BinaryParties {
        protection: Some(Protection::Insecure),
        sizes_buffers: true,
        ..binary_parties("aes128")
    };
    let cell = Cell {
        circuit: "aes128".into(),
        scheme: "ideal".into(),
        transport: "tcp".into(),
        condition: "lan".into(),
    };
    let server = "10.64.0.1:20000".parse().unwrap();
    let (g, e) = parties
        .circuit_parties(&cell, &link, server, Duration::from_secs(600))
        .unwrap();
    let g = PartyArgs::from_argv(&g.args).unwrap();
    let e = PartyArgs::from_argv(&e.args).unwrap();
    assert_eq!((g.role, e.role), (Role::Garbler, Role::Evaluator));
    assert_eq!((g.input.as_str(), e.input.as_str()), ("00", "11"));
    assert_eq!(g.address, e.address);
    assert_eq!(g.path, Some((100.5, 200_000_000)));
    assert_eq!(g.timeout_secs, Some(90.0));
    assert_eq!(g.protection, Some(Protection::Insecure));
    assert!(g.json && e.json);
    // One computation per session: no --repeat for either party.
    assert_eq!((g.repeat, e.repeat), (None, None));
    let other = Cell {
        circuit: "sha256".into(),
        ..cell.clone()
    };
    assert!(parties
        .circuit_parties(&other, &link, server, Duration::from_secs(1))
        .is_err());

    // Several: the evaluator asks for them, the garbler serves them.
    let parties = BinaryParties {
        repeat: 20,
        ..parties
    };
    let (g, e) = parties
        .circuit_parties(&cell, &link, server, Duration::from_secs(600))
        .unwrap();
    assert!(
        e.args.windows(2).any(|w| w == ["--repeat", "20"]),
        "{:?}",
        e.args
    );
    let g = PartyArgs::from_argv(&g.args).unwrap();
    let e = PartyArgs::from_argv(&e.args).unwrap();
    assert_eq!((g.repeat, e.repeat), (None, Some(20)));
}

/// A scheme written `SCHEME+MODE` reaches both parties as `--scheme SCHEME --parallel
/// MODE`; a mode the parties do not know is refused before any run, naming the entry.
#[test]
fn a_scheme_with_a_mode_runs_the_parties_with_it() {
    assert_eq!(scheme_and_parallel("ideal+ipp"), ("ideal", Some("ipp")));
    assert_eq!(scheme_and_parallel("prf"), ("prf", None));
    let parties = binary_parties("mexp");
    let cell = Cell {
        circuit: "mexp".into(),
        scheme: "ideal+ipp".into(),
        transport: "tcp".into(),
        condition: "lan".into(),
    };
    let server = "10.64.0.1:20000".parse().unwrap();
    // Both parties' flags for the cell's scheme.
    let args_of = |scheme: &str| {
        let cell = Cell {
            scheme: scheme.into(),
            ..cell.clone()
        };
        let timeout = Duration::from_secs(60);
        let (g, e) = parties
            .circuit_parties(&cell, &LinkRecord::default(), server, timeout)
            .unwrap();
        [g, e].map(|p| PartyArgs::from_argv(&p.args).unwrap())
    };
    for a in args_of("ideal+ipp") {
        assert_eq!(
            (a.scheme.as_str(), a.parallel.as_deref()),
            ("ideal", Some("ipp"))
        );
        assert_eq!(a.threads, None);
    }
    // Under auto each party is told half this machine's cores, both running on it.
    let half = std::thread::available_parallelism().map_or(1, usize::from) / 2;
    for a in args_of("ideal+auto") {
        assert_eq!(a.parallel.as_deref(), Some("auto"));
        assert_eq!(a.threads, Some(half.max(1) as u32));
    }
    let wrong = ExperimentFile {
        circuits: vec!["mvmul:m=2,k=2,bits=4".into()],
        schemes: vec!["ideal".into(), "ideal+gpu".into()],
        conditions: vec!["cw-lan".into()],
        ..ExperimentFile::default()
    }
    .resolve()
    .unwrap();
    let e = check(&wrong).unwrap_err().to_string();
    assert!(e.contains("schemes[1]") && e.contains("\"gpu\""), "{e}");
    let with_auto = ExperimentFile {
        circuits: vec!["mvmul:m=2,k=2,bits=4".into()],
        schemes: vec!["ideal+ipp".into()],
        transports: vec!["tcp".into(), "auto".into()],
        conditions: vec!["cw-lan".into()],
        ..ExperimentFile::default()
    }
    .resolve()
    .unwrap();
    let e = check(&with_auto).unwrap_err().to_string();
    assert!(e.contains("named transport") && e.contains("auto"), "{e}");
    // cgp needs every circuit to have parallel regions.
    let without_regions = ExperimentFile {
        circuits: vec!["mvmul:m=2,k=2,bits=4".into(), "aes128".into()],
        schemes: vec!["ideal+cgp".into()],
        conditions: vec!["cw-lan".into()],
        ..ExperimentFile::default()
    }
    .resolve()
    .unwrap();
    let e = check(&without_regions).unwrap_err().to_string();
    assert!(e.contains("circuits[1]") && e.contains("has none"), "{e}");
    let with_regions = ExperimentFile {
        circuits: vec!["mvmul:m=2,k=2,bits=4".into()],
        schemes: vec!["ideal+cgp".into()],
        conditions: vec!["cw-lan".into()],
        ..ExperimentFile::default()
    }
    .resolve()
    .unwrap();
    check(&with_regions).unwrap();
}

/// Every run of the binary's garbler and evaluator, failed ones included, is recorded
/// with the protocol version its capabilities state; a user program's runs, and every
/// run of a binary that states none, with none.
#[test]
fn runs_record_the_protocol_version_the_party_binary_states() {
    let experiment = ExperimentFile {
        circuits: vec!["aes128".into()],
        schemes: vec!["ideal".into()],
        transports: vec!["tcp".into()],
        conditions: vec!["cw-lan".into()],
        runs: 2,
        programs: [("twopc".to_string(), PathBuf::from("programs"))].into(),
        ..ExperimentFile::default()
    }
    .resolve()
    .unwrap();
    let plan = experiment.plan();
    let kinds: Vec<(bool, u32)> = plan
        .iter()
        .map(|p| (p.cell.is_program(), p.repetition))
        .collect();
    assert_eq!(kinds, [(false, 0), (true, 0), (false, 1), (true, 1)]);
    let mut caps = caps_without_udt();
    for stated in [Some(5), Some(4), None] {
        caps.protocol_version = stated;
        let parties = BinaryParties {
            exe: "/bin/transputation".into(),
            circuits: HashMap::new(),
            protection: None,
            sizes_buffers: false,
            protocol_version: caps.protocol_version,
            repeat: 1,
            probe_cache_secs: 0.0,
            probe_caches: None,
            _key_dir: None,
        };
        let mut db = Db::in_memory().unwrap();
        let env = Environment::detect("0.1.0", None, "emu", "system", "on");
        let id = db.create_experiment("v", "{}", plan.len(), &env).unwrap();
        let mut runner = Runner {
            experiment: &experiment,
            experiment_id: id,
            launcher: &parties,
            db: &mut db,
            progress: false,
        };
        for p in &plan {
            let link = LinkRecord::default();
            let record = if p.repetition == 0 {
                RunRecord::ok(p.cell.clone(), p.repetition, link)
            } else {
                RunRecord::failed(
                    p.cell.clone(),
                    p.repetition,
                    link,
                    Status::Timeout,
                    "killed at the 1 s limit".into(),
                )
            };
            runner.record(p, record).unwrap();
        }
        let recorded: Vec<(bool, Option<u32>)> = db
            .runs(id)
            .unwrap()
            .iter()
            .map(|r| (r.cell.is_program(), r.protocol_version))
            .collect();
        assert_eq!(
            recorded,
            [(false, stated), (true, None), (false, stated), (true, None)],
            "{stated:?}"
        );
    }
}

#[test]
fn several_computations_per_session_need_a_binary_that_runs_them() {
    let exe = Path::new("/bin/transputation");
    let mut caps = caps_without_udt();
    assert!(check_repeat(1, &caps, exe).is_ok());
    let e = check_repeat(2, &caps, exe).unwrap_err().to_string();
    assert!(
        e.contains("repeat: the party binary /bin/transputation cannot run several computations")
            && e.contains("lack the feature `repeat`"),
        "{e}"
    );
    caps.features.push(FEATURE_REPEAT.into());
    assert!(check_repeat(2, &caps, exe).is_ok());
}

fn caps_without_udt() -> Capabilities {
    Capabilities {
        version: "0".into(),
        report_version: REPORT_VERSION,
        protocol_version: Some(5),
        transports: vec![
            TransportInfo {
                name: "tcp".into(),
                available: true,
                why: None,
            },
            TransportInfo {
                name: "mtcp".into(),
                available: true,
                why: None,
            },
            TransportInfo {
                name: "udt".into(),
                available: false,
                why: Some("no libudt".into()),
            },
        ],
        schemes: Vec::new(),
        protection: Vec::new(),
        features: Vec::new(),
    }
}

#[test]
fn unusable_transports_are_left_out_with_a_note() {
    let caps = caps_without_udt();
    let mut notes = Vec::new();
    let kept = usable_transports(
        &[
            "tcp".into(),
            "sctp".into(),
            "mtcp:streams=2".into(),
            "udt:ack=4".into(),
        ],
        &caps,
        |t, why| notes.push(format!("{t}: {why}")),
    );
    assert_eq!(kept, ["tcp", "mtcp:streams=2"]);
    assert_eq!(
        notes,
        [
            "sctp: no such transport in this build",
            "udt:ack=4: no libudt"
        ]
    );
}

#[test]
fn auto_runs_where_the_party_binary_has_the_feature() {
    let mut caps = caps_without_udt();
    let wanted = ["auto".to_string(), "tcp".into()];
    let mut notes = Vec::new();
    let kept = usable_transports(&wanted, &caps, |t, why| notes.push(format!("{t}: {why}")));
    assert_eq!(kept, ["tcp"]);
    assert_eq!(
        notes,
        [
            "auto: the party binary has no --transport auto (its capabilities lack the \
          feature `transport-auto`)"
        ]
    );
    caps.features.push(FEATURE_TRANSPORT_AUTO.into());
    let kept = usable_transports(&wanted, &caps, |t, why| panic!("{t}: {why}"));
    assert_eq!(kept, wanted);
}

/// The parties of an `auto` cell: both get `--transport auto`, the evaluator
/// `--probe-cache` (0 by default) and, where the experiment lets it cache, a cache of
/// its condition's own; the parties of other cells neither.
#[test]
fn auto_evaluators_probe_every_run_unless_the_experiment_lets_them_cache() {
    let link = LinkRecord {
        rtt_us: 40_000,
        rate_bps: Some(16_000_000),
        ..LinkRecord::default()
    };
    let mut parties = BinaryParties {
        exe: "/bin/transputation".into(),
        circuits: HashMap::from([("aes128".to_string(), zero_and_one())]),
        protection: None,
        sizes_buffers: true,
        protocol_version: Some(5),
        repeat: 1,
        probe_cache_secs: 0.0,
        probe_caches: None,
        _key_dir: None,
    };
    let cell = |transport: &str, condition: &str| Cell {
        circuit: "aes128".into(),
        scheme: "ideal".into(),
        transport: transport.into(),
        condition: condition.into(),
    };
    let server = "10.64.0.1:19999".parse().unwrap();
    let limit = Duration::from_secs(60);
    let (g, e) = parties
        .circuit_parties(&cell("auto", "cw-wan"), &link, server, limit)
        .unwrap();
    let (ga, ea) = (
        PartyArgs::from_argv(&g.args).unwrap(),
        PartyArgs::from_argv(&e.args).unwrap(),
    );
    assert_eq!(
        (ga.transport.as_str(), ea.transport.as_str()),
        ("auto", "auto")
    );
    assert_eq!(
        (ga.probe_cache_secs, ea.probe_cache_secs),
        (None, Some(0.0))
    );
    assert!(g.env.is_empty() && e.env.is_empty(), "{:?}", e.env);
    let (_, e) = parties
        .circuit_parties(&cell("tcp", "cw-wan"), &link, server, limit)
        .unwrap();
    assert_eq!(
        PartyArgs::from_argv(&e.args).unwrap().probe_cache_secs,
        None
    );

    // Caching: the evaluators of a condition share a cache, other conditions have
    // theirs.
    parties.probe_cache_secs = 600.0;
    parties.probe_caches = Some(tempfile::tempdir().unwrap());
    let cache_of = |condition: &str| {
        let (g, e) = parties
            .circuit_parties(&cell("auto", condition), &link, server, limit)
            .unwrap();
        assert!(g.env.is_empty());
        let args = PartyArgs::from_argv(&e.args).unwrap();
        assert_eq!(args.probe_cache_secs, Some(600.0));
        match e.env.as_slice() {
            [(k, v)] if k == "XDG_CACHE_HOME" => PathBuf::from(v),
            other => panic!("{other:?}"),
        }
    };
    let wan = cache_of("cw-wan");
    assert!(wan.starts_with(parties.probe_caches.as_ref().unwrap().path()));
    assert!(wan.is_absolute());
    assert_eq!(cache_of("cw-wan"), wan);
    assert_ne!(cache_of("cw-wan "), wan);
    assert_ne!(cache_of("cw_wan"), cache_of("cw wan"));
}

#[test]
fn an_experiment_runs_the_transports_the_party_binary_can() {
    let caps = caps_without_udt();
    let exe = Path::new("/bin/transputation");
    let mut notes = Vec::new();
    let kept = runnable_transports(&["udt".into(), "tcp".into()], &caps, exe, &mut |n| {
        notes.push(n)
    })
    .unwrap();
    assert_eq!(kept, ["tcp"]);
    assert_eq!(notes, ["leaving out the transport udt: no libudt"]);
    let e = runnable_transports(&["udt".into(), "sctp".into()], &caps, exe, &mut |_| {})
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("transports: the party binary /bin/transputation can run none of udt, sctp"),
        "{e}"
    );
}

#[test]
fn a_new_experiment_named_as_an_unfinished_one_says_how_to_resume_it() {
    let db = Db::in_memory().unwrap();
    let env = Environment::detect("0.1.0", None, "emu", "system", "on");
    db.create_experiment("grid", "{}", 9, &env).unwrap();
    db.create_experiment("other", "{}", 9, &env).unwrap();
    let mut notes = Vec::new();
    unfinished_of_the_name(&db, "grid", &mut |n| notes.push(n)).unwrap();
    assert_eq!(
        notes,
        [
            "experiment 1 of the same name is unfinished (0 of 9 runs): `--resume 1` goes on \
          with it; this starts a new one"
        ]
    );
    notes.clear();
    unfinished_of_the_name(&db, "fresh", &mut |n| notes.push(n)).unwrap();
    assert!(notes.is_empty(), "{notes:?}");
}
