//! The process contract (`transputation-contract`) against the real binary: command lines
//! written by `PartyArgs` are what the parties accept, their `--json` reports read as
//! `PartyReport`s, `run --json` carries the version and both reports, and `capabilities
//! --json` reads as `Capabilities`, states the 2PC protocol's version and agrees with
//! `transports --json`.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use transputation_contract::{
    Capabilities, PartyArgs, PartyReport, Protection, Role, FEATURE_BUFFER_SIZING, REPORT_VERSION,
};

const AES_KEY: &str = "000102030405060708090a0b0c0d0e0f";
const AES_PT: &str = "00112233445566778899aabbccddeeff";
const AES_CT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";

#[test]
fn parties_started_from_the_contract_report_through_it() {
    let mut g = PartyArgs::new(
        Role::Garbler,
        "127.0.0.1:0".parse().unwrap(),
        "aes128",
        "ideal",
        "tcp",
    );
    g.input = AES_KEY.into();
    g.protection = Some(Protection::Insecure);
    g.timeout_secs = Some(10.0);
    g.path = Some((1.0, 1_000_000_000));
    let mut garbler = common::bin()
        .args(g.to_argv())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut err = BufReader::new(garbler.stderr.take().unwrap());
    let mut line = String::new();
    err.read_line(&mut line).unwrap();
    let addr = line.trim().strip_prefix("listening on ").expect(&line);

    let mut e = g.clone();
    e.role = Role::Evaluator;
    e.address = addr.parse().unwrap();
    e.input = AES_PT.into();
    let out = common::bin().args(e.to_argv()).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let e_report = PartyReport::from_json("evaluator", &String::from_utf8_lossy(&out.stdout))
        .expect("the evaluator's report reads");
    let g_out = garbler.wait_with_output().unwrap();
    assert!(g_out.status.success());
    let g_report = PartyReport::from_json("garbler", &String::from_utf8_lossy(&g_out.stdout))
        .expect("the garbler's report reads");

    assert_eq!(g_report.report_version, REPORT_VERSION);
    assert_eq!(
        (g_report.role, e_report.role),
        (Role::Garbler, Role::Evaluator)
    );
    assert_eq!(g_report.output.as_deref(), Some(AES_CT));
    assert_eq!(e_report.output.as_deref(), Some(AES_CT));
    assert_eq!(g_report.and_gates, 6400);
    assert_eq!(g_report.protection, "none");
    assert_eq!(
        g_report.bytes_garbler_to_evaluator,
        e_report.bytes_garbler_to_evaluator
    );
    // --rtt-ms and --bandwidth reached the parties: they sized their buffers.
    assert!(g_report.buffer_bytes.is_some() && g_report.bdp_bytes == Some(125_000));
    // What the user waits for: the evaluator's connect and its process start to its
    // output (which holds its session, loading and set-up); the round trips of the message
    // table; the paper's measure, a part of each party's protocol time.
    let connect = e_report
        .connect_ms
        .expect("the evaluator times its connect call");
    assert!(connect > 0.0 && connect < e_report.first_output_ms.unwrap());
    let first_output = e_report.first_output_ms.unwrap();
    assert!(
        first_output >= e_report.total_ms + e_report.load_ms + e_report.setup_ms,
        "{e_report:?}"
    );
    assert_eq!(
        g_report.connect_ms, None,
        "a listener cannot time the peer's contact"
    );
    assert!(g_report.first_output_ms.unwrap() >= g_report.total_ms);
    assert_eq!((g_report.round_trips, e_report.round_trips), (3, 2));
    for r in [&g_report, &e_report] {
        assert!(r.paper_ms > 0.0 && r.paper_ms < r.total_ms, "{r:?}");
    }
    assert_eq!(e_report.handshake_ms, 0.0, "unprotected");
    // A fresh session's one computation: computation 1, whose online time is the
    // evaluator's whole protocol time; the garbler served no numbered session.
    assert_eq!((g_report.computation, e_report.computation), (1, 1));
    assert_eq!(e_report.online_ms, Some(e_report.total_ms));
    assert_eq!((g_report.online_ms, g_report.session), (None, None));
    // The one report, as printed, is a stream of one.
    let stream = PartyReport::stream_from_json("evaluator", &String::from_utf8_lossy(&out.stdout))
        .expect("the evaluator's reports read");
    assert_eq!(stream, [e_report]);
}

#[test]
fn run_json_has_the_version_and_both_reports() {
    let v = common::run_json(&[
        "run",
        "--circuit",
        "aes128",
        "--garbler-input",
        AES_KEY,
        "--evaluator-input",
        AES_PT,
        "--insecure",
        "--json",
    ]);
    assert_eq!(v["report_version"], REPORT_VERSION);
    assert_eq!(v["output"], AES_CT);
    for who in ["garbler", "evaluator"] {
        let r = PartyReport::from_json(who, &v[who].to_string()).unwrap();
        assert_eq!(r.output.as_deref(), Some(AES_CT), "{who}");
    }
    // Every field the merged report had before the contract is still there.
    for k in [
        "output",
        "total_ms",
        "ot_ms",
        "garble_ms",
        "eval_ms",
        "bytes_garbler_to_evaluator",
        "bytes_evaluator_to_garbler",
        "scheme",
        "transport",
        "circuit",
        "and_gates",
        "load_ms",
        "setup_ms",
        "buffer_bytes",
        "bdp_bytes",
        "paper_bound_bytes",
        "protection",
        "handshake_ms",
        "connect_ms",
        "first_output_ms",
        "paper_ms",
    ] {
        assert!(v.get(k).is_some(), "{k} missing: {v}");
    }
    assert_eq!(v["round_trips"]["garbler"], 3);
    assert_eq!(v["round_trips"]["evaluator"], 2);
    assert_eq!(v["paper_ms"], v["garbler"]["paper_ms"]);
    assert_eq!(v["first_output_ms"], v["evaluator"]["first_output_ms"]);
}

#[test]
fn a_protected_evaluator_times_its_handshake_inside_the_session() {
    let v = common::run_json(&[
        "run",
        "--circuit",
        "aes128",
        "--garbler-input",
        AES_KEY,
        "--evaluator-input",
        AES_PT,
        "--json",
    ]);
    assert_eq!(v["output"], AES_CT);
    let e = PartyReport::from_json("evaluator", &v["evaluator"].to_string()).unwrap();
    let g = PartyReport::from_json("garbler", &v["garbler"].to_string()).unwrap();
    assert_eq!(e.protection, "noise-psk");
    // Its handshake rode in the first exchange: timed, and within its protocol time.
    assert!(e.handshake_ms > 0.0 && e.handshake_ms < e.total_ms, "{e:?}");
    assert!(g.handshake_ms > 0.0, "{g:?}");
}

#[test]
fn capabilities_say_what_the_build_has() {
    let out = common::run(&["capabilities", "--json"]);
    assert!(out.status.success());
    let c: Capabilities = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(c.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(c.report_version, REPORT_VERSION);
    assert_eq!(
        c.protocol_version,
        Some(u32::from(transputation_2pc::PROTOCOL_VERSION))
    );
    assert_eq!(c.schemes, ["prf", "circular", "ideal"]);
    assert!(c.protects_with("none") && c.protects_with("noise-psk") && c.protects_with("noise-kk"));
    assert!(c.has_feature(FEATURE_BUFFER_SIZING));
    // The same transports, with the same availability, as `transports --json`.
    let listed = common::run_json(&["transports", "--json"]);
    let listed = listed.as_array().unwrap();
    assert_eq!(listed.len(), c.transports.len());
    for t in listed {
        let name = t["name"].as_str().unwrap();
        let info = c
            .transport(name)
            .unwrap_or_else(|| panic!("{name} missing"));
        assert_eq!(Some(info.available), t["available"].as_bool(), "{name}");
        assert_eq!(info.why.is_some(), !info.available, "{name}");
    }
    assert!(c.transport("tcp").unwrap().available);
    assert!(c.has_feature(transputation_contract::FEATURE_PLAN_CACHE));

    let text = common::run(&["capabilities"]);
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(
        text.contains("noise-psk") && text.contains("buffer-sizing"),
        "{text}"
    );
    let protocol = text
        .lines()
        .find(|l| l.contains("protocol version"))
        .unwrap_or_else(|| panic!("no protocol version in {text}"));
    assert_eq!(
        protocol.split_whitespace().last(),
        Some(transputation_2pc::PROTOCOL_VERSION.to_string().as_str()),
        "{protocol}"
    );
}
