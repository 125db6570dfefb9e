//! Tests of reading a run's reports: streams of reports as parties print them, written here
//! as text, checked and summed up in records.

use super::*;
use crate::experiment::Cell;

/// A report as the parties wrote it before the contract: no report_version.
const OLD: &str = r#"{"role":"garbler","output":"00","total_ms":1.0}"#;

const AES_CT: &str = "66e94bd4ef8a2c3b884cfa59ca342b2e";

/// A party's report of this build for one computation, one line as `--json` prints it for a
/// session of several (`fields`: the role's own, from `connect_ms` on).
fn report(role: &str, computation: u32, output: &str, online: &str, fields: &str) -> String {
    format!(
        r#"{{"report_version":{},"role":"{role}","computation":{computation},"online_ms":{online},"session":null,"output":{output},"total_ms":{total},{fields},"ot_ms":10.0,"garble_ms":5.0,"eval_ms":4.0,"bytes_garbler_to_evaluator":1000,"bytes_evaluator_to_garbler":100,"parts_garbler_to_evaluator":{{"header":0,"ot":0,"labels":0,"tables":0,"decoding":0,"output":0,"framing":0}},"parts_evaluator_to_garbler":{{"header":0,"ot":0,"labels":0,"tables":0,"decoding":0,"output":0,"framing":0}},"scheme":"ideal","backend":"vaes","parallel":"none","threads":1,"parallel_why":null,"lanes":0,"transport":"tcp","circuit":"aes128","and_gates":6400,"load_ms":1.0,"setup_ms":1.0,"buffer_bytes":null,"bdp_bytes":null,"paper_bound_bytes":null,"volume_bytes":null,"protection":"noise-psk","auto":null}}"#,
        transputation_contract::REPORT_VERSION,
        total = 50.0 / f64::from(computation),
    )
}

const GARBLER_FIELDS: &str = r#""connect_ms":null,"first_output_ms":900.0,"wall_ms":950.0,"peak_rss_bytes":52428800,"round_trips":3,"paper_ms":21.5,"handshake_ms":0.4"#;
const EVALUATOR_FIELDS: &str = r#""connect_ms":1.25,"first_output_ms":640.5,"wall_ms":700.0,"peak_rss_bytes":41943040,"round_trips":2,"paper_ms":17.0,"handshake_ms":30.5"#;

fn garbler(computation: u32) -> String {
    report(
        "garbler",
        computation,
        &format!("{AES_CT:?}"),
        "null",
        GARBLER_FIELDS,
    )
}

/// The evaluator's report of a computation whose online time is `online` ms.
fn evaluator(computation: u32, online: f64) -> String {
    report(
        "evaluator",
        computation,
        &format!("{AES_CT:?}"),
        &online.to_string(),
        EVALUATOR_FIELDS,
    )
}

/// Reports one line each, as a party prints them.
fn stream(reports: &[String]) -> String {
    reports.iter().map(|r| format!("{r}\n")).collect()
}

fn planned() -> PlannedRun {
    PlannedRun {
        cell: Cell {
            circuit: "aes128".into(),
            scheme: "ideal".into(),
            transport: "tcp".into(),
            condition: "wan".into(),
        },
        transport_written: "tcp".into(),
        repetition: 0,
        condition_index: 0,
    }
}

/// The garbler's and the evaluator's output of a session of `n` computations, the
/// evaluator's online times 50, 10, 30, 20, 90, ... ms.
fn session(n: u32) -> (String, String) {
    let online = [50.0, 10.0, 30.0, 20.0, 90.0, 40.0];
    let g: Vec<String> = (1..=n).map(garbler).collect();
    let e: Vec<String> = (1..=n)
        .map(|c| evaluator(c, online[c as usize - 1]))
        .collect();
    (stream(&g), stream(&e))
}

#[test]
fn reports_of_an_older_binary_fail_the_run_with_the_reason() {
    let e = measured(OLD, OLD, 1).err().unwrap();
    assert!(
        e.starts_with("the garbler's report has no report_version")
            && e.contains("older than this one"),
        "{e}"
    );
    let e = measured("Segmentation fault", OLD, 1).err().unwrap();
    assert!(e.starts_with("the garbler's report is not JSON"), "{e}");
    let (g, _) = session(1);
    let e = measured(&g, "", 1).err().unwrap();
    assert_eq!(
        e,
        "the evaluator printed no report (its standard output is empty)"
    );
}

#[test]
fn a_run_records_what_each_party_measured_of_the_wait() {
    // One computation, its report pretty as a session of one prints it.
    let pretty = |r: &str| {
        let v: serde_json::Value = serde_json::from_str(r).unwrap();
        serde_json::to_string_pretty(&v).unwrap()
    };
    let r = measured(&pretty(&garbler(1)), &pretty(&evaluator(1, 50.0)), 1)
        .unwrap()
        .into_record(&planned(), &LinkRecord::default());
    // The evaluator's connect, handshake and first output; the garbler's paper measure,
    // as its total; each party's round trips.
    assert_eq!(
        (r.connect_ms, r.handshake_ms, r.first_output_ms, r.paper_ms),
        (Some(1.25), Some(30.5), Some(640.5), Some(21.5))
    );
    assert_eq!(
        (r.garbler_round_trips, r.evaluator_round_trips),
        (Some(3), Some(2))
    );
    assert_eq!(r.total_ms, Some(50.0));
    // One computation: no further ones to time online.
    assert_eq!(
        (r.computations, r.online_ms, r.online_max_ms),
        (1, None, None)
    );
    // The report kept is the one line the report was.
    let kept = r.evaluator_report.unwrap();
    assert_eq!(kept.lines().count(), 1);
    assert!(kept.contains("\"online_ms\":50.0"), "{kept}");
}

#[test]
fn a_session_of_several_computations_records_the_first_and_the_online_times() {
    let (g, e) = session(5);
    let r = measured(&g, &e, 5)
        .unwrap()
        .into_record(&planned(), &LinkRecord::default());
    // Computation 1's times (its total is 50 ms, the later ones' less).
    assert_eq!(
        (r.total_ms, r.first_output_ms, r.paper_ms),
        (Some(50.0), Some(640.5), Some(21.5))
    );
    assert_eq!(r.transfer_ms, Some(50.0 - 10.0 - 5.0 - 4.0));
    // Computations 2 to 5 were online for 10, 30, 20 and 90 ms: median 25, maximum 90;
    // computation 1's 50 ms (a fresh session's set-up included) is not among them.
    assert_eq!(r.computations, 5);
    assert_eq!((r.online_ms, r.online_max_ms), (Some(25.0), Some(90.0)));
    // Every report is kept, one line each, in computation order.
    for kept in [r.garbler_report.unwrap(), r.evaluator_report.unwrap()] {
        let numbers: Vec<u64> = kept
            .lines()
            .map(|l| {
                serde_json::from_str::<serde_json::Value>(l).unwrap()["computation"]
                    .as_u64()
                    .unwrap()
            })
            .collect();
        assert_eq!(numbers, [1, 2, 3, 4, 5]);
    }
    // Two computations: the one further computation is both median and maximum.
    let (g, e) = session(2);
    let r = measured(&g, &e, 2)
        .unwrap()
        .into_record(&planned(), &LinkRecord::default());
    assert_eq!((r.online_ms, r.online_max_ms), (Some(10.0), Some(10.0)));
}

#[test]
fn too_few_or_misnumbered_reports_fail_the_run() {
    let (g, e) = session(3);
    let e = measured(&g, &e, 4).err().unwrap();
    assert_eq!(
        e,
        "the garbler printed 3 reports for a session of 4 computations"
    );
    let (g, _) = session(3);
    let (_, e) = session(2);
    let e = measured(&g, &e, 3).err().unwrap();
    assert_eq!(
        e,
        "the evaluator printed 2 reports for a session of 3 computations"
    );
    // A session of one computation whose evaluator ran two.
    let (g, _) = session(1);
    let (_, e) = session(2);
    let e = measured(&g, &e, 1).err().unwrap();
    assert_eq!(
        e,
        "the evaluator printed 2 reports for a session of 1 computation"
    );
    // Computation 3 printed where 2 belongs.
    let (g, _) = session(3);
    let e = stream(&[evaluator(1, 9.0), evaluator(3, 9.0), evaluator(2, 9.0)]);
    let e = measured(&g, &e, 3).err().unwrap();
    assert!(
        e.starts_with("the evaluator's report 2 is of computation 3"),
        "{e}"
    );
}

#[test]
fn a_wrong_output_fails_the_run_naming_its_computation() {
    let (g, _) = session(4);
    // The evaluator's computation 3 got another output than computations 1 and 2.
    let mut e: Vec<String> = (1..=4).map(|c| evaluator(c, 9.0)).collect();
    e[2] = e[2].replace(AES_CT, "00000000000000000000000000000000");
    let err = measured(&g, &stream(&e), 4).err().unwrap();
    assert!(
        err.starts_with("computation 3: the parties disagree on the output: garbler \"66e9"),
        "{err}"
    );
    // Where the garbler does not learn the output, the evaluator's is checked against
    // computation 1's.
    let g: Vec<String> = (1..=4)
        .map(|c| garbler(c).replace(&format!("{AES_CT:?}"), "null"))
        .collect();
    let err = measured(&stream(&g), &stream(&e), 4).err().unwrap();
    assert_eq!(
        err,
        "computation 3: the evaluator's output \"00000000000000000000000000000000\" differs \
         from computation 1's \"66e94bd4ef8a2c3b884cfa59ca342b2e\" (every computation of a \
         run has the same inputs)"
    );
    // A session of one computation says no number, as before sessions had several.
    let err = measured(
        &garbler(1),
        &e[2].replace("\"computation\":3", "\"computation\":1"),
        1,
    )
    .err()
    .unwrap();
    assert!(
        err.starts_with("the parties disagree on the output: garbler"),
        "{err}"
    );
}

#[test]
fn a_bad_report_in_the_middle_or_a_missing_online_time_fails_the_run() {
    let (g, _) = session(3);
    let e = format!(
        "{}\nwarning: something\n{}\n",
        evaluator(1, 5.0),
        evaluator(2, 5.0)
    );
    let err = measured(&g, &e, 3).err().unwrap();
    assert!(
        err.starts_with("the evaluator's report 2 is not JSON") && err.contains("warning"),
        "{err}"
    );
    let e = stream(&[
        evaluator(1, 5.0),
        evaluator(2, 5.0).replace("\"online_ms\":5", "\"online_ms\":null"),
        evaluator(3, 5.0),
    ]);
    let err = measured(&g, &e, 3).err().unwrap();
    assert_eq!(
        err,
        "the evaluator's report of computation 2 has no online_ms"
    );
}

#[test]
fn a_garblers_reports_of_two_sessions_fail_the_run() {
    let g = stream(&[
        garbler(1).replace("\"session\":null", "\"session\":7"),
        garbler(2).replace("\"session\":null", "\"session\":8"),
    ]);
    let (_, e) = session(2);
    let err = measured(&g, &e, 2).err().unwrap();
    assert_eq!(
        err,
        "the garbler's report of computation 2 is of session 8, that of computation 1 of \
         session 7: a run's computations share one session"
    );
    // One session number throughout is one session.
    let g = stream(&[
        garbler(1).replace("\"session\":null", "\"session\":7"),
        garbler(2).replace("\"session\":null", "\"session\":7"),
    ]);
    assert!(measured(&g, &e, 2).is_ok());
}

/// A report of `auto`: the session over `chosen`, with what the party says of the choice.
fn with_auto(report: &str, chosen: &str, evaluator: bool) -> String {
    let (probe, agree) = if evaluator {
        ("212.5", "41.25")
    } else {
        ("null", "null")
    };
    let auto = format!(
        r#""auto":{{"chosen":"{chosen}","predicted_ms":612.0,"why":"fastest","rtt_ms":40.0,"rate_mbps":16.0,"loss":0.0,"loss_upper":0.01,"path_from":"probe","probe_ms":{probe},"agree_ms":{agree},"failed":[],"ranked":[["{chosen}",612.0],["tcp",700.5]]}}"#
    );
    report.replace("\"auto\":null", &auto).replace(
        "\"transport\":\"tcp\"",
        &format!("\"transport\":\"{chosen}\""),
    )
}

#[test]
fn a_run_of_auto_records_the_choice_and_what_it_cost() {
    let chosen = "quic:cc=bbr,iw=1250000";
    let g = with_auto(&garbler(1), chosen, false);
    let e = with_auto(&evaluator(1, 50.0), chosen, true);
    let mut p = planned();
    p.cell.transport = "auto".into();
    p.transport_written = "auto".into();
    let r = measured(&g, &e, 1)
        .and_then(|m| m.checked_auto(true))
        .unwrap()
        .into_record(&p, &LinkRecord::default());
    assert_eq!(r.auto_choice.as_deref(), Some(chosen));
    assert_eq!(
        (r.auto_predicted_ms, r.auto_probe_ms, r.auto_agree_ms),
        (Some(612.0), Some(212.5), Some(41.25))
    );
    assert_eq!(r.cell.transport, "auto");

    // A transport given by name: nothing of auto.
    let (g, e) = session(1);
    let r = measured(&g, &e, 1)
        .and_then(|m| m.checked_auto(false))
        .unwrap()
        .into_record(&planned(), &LinkRecord::default());
    assert_eq!(
        (
            r.auto_choice,
            r.auto_predicted_ms,
            r.auto_probe_ms,
            r.auto_agree_ms
        ),
        (None, None, None, None)
    );
}

#[test]
fn a_run_of_auto_without_one_choice_fails() {
    let chosen = "tcp-bbr";
    let g = with_auto(&garbler(1), chosen, false);
    let e = with_auto(&evaluator(1, 50.0), chosen, true);
    // The evaluator ran a transport by name.
    let err = measured(&g, &stream(&[evaluator(1, 50.0)]), 1)
        .and_then(|m| m.checked_auto(true))
        .err()
        .unwrap();
    assert_eq!(
        err,
        "the evaluator's report says nothing of auto's choice (its transport: tcp): was it \
         run with --transport auto?"
    );
    let err = measured(&garbler(1), &e, 1)
        .and_then(|m| m.checked_auto(true))
        .err()
        .unwrap();
    assert!(
        err.starts_with("the garbler's report says nothing"),
        "{err}"
    );
    // The two agree on one choice or the run fails.
    let other = with_auto(&garbler(1), "mtcp:streams=8", false);
    let err = measured(&other, &e, 1)
        .and_then(|m| m.checked_auto(true))
        .err()
        .unwrap();
    assert_eq!(
        err,
        "the parties report different choices of auto: garbler mtcp:streams=8, evaluator \
         tcp-bbr"
    );
    assert!(measured(&g, &e, 1).unwrap().checked_auto(true).is_ok());
}
