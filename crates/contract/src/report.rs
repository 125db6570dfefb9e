//! A party's report: what a garbler or evaluator prints with `--json` when its session ends.

use std::fmt;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::args::Role;

/// The version of [`PartyReport`]'s fields. Raise it when a field changes meaning or goes;
/// a reader refuses reports of another version.
///
/// Version 2 added `connect_ms`, `first_output_ms`, `round_trips` and `paper_ms`, and
/// `handshake_ms` of the evaluator became part of `total_ms` (its handshake rides in the
/// session's first exchange). A version 1 report is refused, not read with defaults: a
/// default would be a measurement nobody made (0 round trips, a paper time of 0).
///
/// Version 3 added `computation`, `online_ms` and `session`: a session may run several
/// computations, and a party then prints one report per computation, one per line
/// ([`PartyReport::stream_from_json`] reads them). A version 2 report is refused: it cannot
/// say which computation of its session it was.
///
/// Version 4 added `auto`; version 5 `backend`, the AES implementation the party used;
/// version 6 `wall_ms` and `peak_rss_bytes`, the whole wait and the memory it took;
/// version 7 `parallel`, `threads` and `parallel_why`, how the party garbled or evaluated;
/// version 8 `lanes`, the channels beside the session's that its tables travelled on.
pub const REPORT_VERSION: u32 = 8;

/// Bytes of one direction of a session, by what they carried.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ByteParts {
    /// The session header.
    pub header: u64,
    /// Oblivious transfer.
    pub ot: u64,
    /// Input labels.
    pub labels: u64,
    /// Garbled tables.
    pub tables: u64,
    /// Output decoding information.
    pub decoding: u64,
    /// The output sent back.
    pub output: u64,
    /// Message framing.
    pub framing: u64,
}

/// One party's report (the JSON of `garbler --json` and `evaluator --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartyReport {
    /// [`REPORT_VERSION`] of the binary that wrote it.
    pub report_version: u32,
    /// Which party.
    pub role: Role,
    /// Which computation of its session this report is: 1 for the first (a fresh session's
    /// only one), 2, 3, ... for the further computations of a session that stays open
    /// (`evaluator --repeat N`). A party prints its reports in this order.
    pub computation: u32,
    /// The evaluator's time from being given this computation's input until it held its
    /// output, ms: what a user of an open session waits for once the session stands. For
    /// computation 1 of a fresh session it equals `total_ms` (the session's set-up is part
    /// of its wait). `None` for the garbler, which is not given the evaluator's input.
    #[serde(deserialize_with = "present")]
    pub online_ms: Option<f64>,
    /// The garbler's number of the session it served this computation in under `garbler
    /// --serve` (1, 2, ... in the order it accepted the sessions), so that reports of one
    /// session can be told from another's. `None` for the evaluator and for a garbler that
    /// serves one session and exits.
    #[serde(deserialize_with = "present")]
    pub session: Option<u64>,
    /// The output as hex (`None`: this party does not learn it).
    pub output: Option<String>,
    /// Protocol time until the output is held, ms: the evaluator's from its established
    /// connection, the garbler's from the evaluator's first message (the evaluator
    /// prepares while it connects, which is not protocol time).
    pub total_ms: f64,
    /// The evaluator's connect call until the transport's channel was established, ms
    /// (retries while the garbler was not listening yet included). `None` for the garbler:
    /// a listener learns of a peer only once the transport has set up its channel, so when
    /// the peer's first packet arrived is not known to it.
    #[serde(deserialize_with = "present")]
    pub connect_ms: Option<f64>,
    /// This process's start (the first thing its `main` does) until this party held its
    /// output, ms: what a user of the party waits for, loading, set-up, connecting and the
    /// session included. `None` for a garbler that does not learn the output. A garbler
    /// starts before its evaluator and waits for it, so its time includes that wait.
    #[serde(deserialize_with = "present")]
    pub first_output_ms: Option<f64>,
    /// This process's start until this report was written, ms: the party's whole wait,
    /// loading, set-up and (for a garbler) the wait for its evaluator included. Version 6.
    pub wall_ms: f64,
    /// The most memory this process held resident until the report was written (the
    /// kernel's high-water mark, `VmHWM`), bytes; `None` where the system does not say.
    /// Version 6.
    #[serde(deserialize_with = "present")]
    pub peak_rss_bytes: Option<u64>,
    /// Times this party turned from sending to waiting for the peer in the session (the
    /// message table of `transputation-2pc`: 2 for the evaluator, 3 for the garbler, one
    /// less each when the evaluator has no input bits).
    pub round_trips: u32,
    /// The paper's measure (Table 4 of the Transputation paper times garbling, the transfer
    /// of the tables and the output; OT and set-up excluded), ms. The garbler: from the end
    /// of its OT, when it starts garbling and sending the tables, until the evaluator's
    /// last message (the output) arrived. The evaluator: from holding its input labels
    /// (the end of its OT) until it held its output. Under `prf` the tables the garbler
    /// garbled ahead during the OT are sent in this time, their garbling is not.
    pub paper_ms: f64,
    /// Oblivious transfer, ms.
    pub ot_ms: f64,
    /// Garbling, ms (the garbler's; 0 for the evaluator).
    pub garble_ms: f64,
    /// Evaluation, ms (the evaluator's; 0 for the garbler).
    pub eval_ms: f64,
    /// Bytes garbler → evaluator.
    pub bytes_garbler_to_evaluator: u64,
    /// Bytes evaluator → garbler.
    pub bytes_evaluator_to_garbler: u64,
    /// Garbler → evaluator by part.
    pub parts_garbler_to_evaluator: ByteParts,
    /// Evaluator → garbler by part.
    pub parts_evaluator_to_garbler: ByteParts,
    /// The garbling scheme's name.
    pub scheme: String,
    /// The AES backend this party garbled or evaluated with (`portable`, `aes-ni`,
    /// `vaes256`, `vaes`, `armv8`). Version 5.
    pub backend: String,
    /// How this party garbled or evaluated: `none`, `fgp`, `cgp` or `ipp`; under
    /// `--parallel auto`, what its choice came to in the session (`fgp` where it offered
    /// `cgp` and the peer did not take it). Version 7.
    pub parallel: String,
    /// The threads it garbled or evaluated on under `fgp` or `cgp` (1 otherwise). Version 7.
    pub threads: u32,
    /// Under `--parallel auto`, why it chose what it did; `None` for a mode given by name.
    /// Version 7.
    #[serde(deserialize_with = "present")]
    pub parallel_why: Option<String>,
    /// The lanes the tables travelled on under `cgp` (channels of the session beside its
    /// first: `quic`'s streams, piece `i` of each stage on lane `i mod lanes`), or 0: on the
    /// session's channel. Version 8.
    pub lanes: u32,
    /// The transport, with its options.
    pub transport: String,
    /// The circuit as named on the command line.
    pub circuit: String,
    /// Its AND gates.
    pub and_gates: u64,
    /// Loading the circuit, ms.
    pub load_ms: f64,
    /// Preparing the party, ms.
    pub setup_ms: f64,
    /// The buffer sized for the path (with `--rtt-ms` and `--bandwidth`), bytes.
    pub buffer_bytes: Option<u64>,
    /// The path's bandwidth-delay product, bytes.
    pub bdp_bytes: Option<u64>,
    /// The paper's bound on the buffer, bytes, where it applies.
    pub paper_bound_bytes: Option<u64>,
    /// The garbler's volume the sizing assumed, bytes.
    pub volume_bytes: Option<u64>,
    /// `none`, `noise-psk` or `noise-kk`.
    pub protection: String,
    /// The handshake's time, ms (0 without protection). The garbler's runs from the
    /// evaluator's hello until its answer is sent, before `total_ms`. The evaluator's
    /// handshake rides in the session's first exchange (its first messages are the
    /// handshake's early data), so its time, from sending the handshake's first message
    /// until the answer was read, is part of `total_ms`.
    pub handshake_ms: f64,
    /// What `--transport auto` measured and chose (`None` for a transport given by name;
    /// `transport` then names the choice). Version 4.
    #[serde(deserialize_with = "present")]
    pub auto: Option<AutoReport>,
}

/// What `--transport auto` did before the session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AutoReport {
    /// The transport chosen (the one the session ran over).
    pub chosen: String,
    /// Its predicted time to the output, ms.
    pub predicted_ms: f64,
    /// One line on why.
    pub why: String,
    /// The path the decision was made for: round-trip time, ms.
    pub rtt_ms: f64,
    /// Its bottleneck rate, Mbit/s.
    pub rate_mbps: f64,
    /// Its loss rate (best estimate).
    pub loss: f64,
    /// The upper confidence bound on the loss rate that the decision also weighed.
    pub loss_upper: f64,
    /// Where the evaluator had the path from: `probe` or `cache` (the garbler: `statement`).
    pub path_from: String,
    /// The evaluator's time measuring the path, ms (0 from the cache; `None` for the
    /// garbler).
    #[serde(deserialize_with = "present")]
    pub probe_ms: Option<f64>,
    /// The evaluator's time from deciding to its connection over the choice (with the
    /// card's arrival, if it had none cached), ms (`None` for the garbler).
    #[serde(deserialize_with = "present")]
    pub agree_ms: Option<f64>,
    /// Choices that did not connect before this one, in order.
    pub failed: Vec<String>,
    /// The best candidates as the evaluator ranked them: (transport, predicted ms).
    pub ranked: Vec<(String, Option<f64>)>,
    /// Under `auto:race`, the race (absent otherwise).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub race: Option<RaceReport>,
}

/// What a raced session's race came to (`auto:race`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RaceReport {
    /// The settings that raced, in lane order (the first is the model's choice, whose
    /// connection carried the session's start).
    pub lanes: Vec<String>,
    /// Whether the race started (every lane joined before the garbler's last message).
    pub started: bool,
    /// The stream bytes raced before the verdict (the evaluator's, which decides when;
    /// `None` in the garbler's report).
    pub budget_bytes: Option<u64>,
    /// The lane that delivered most and carried the rest (`None`: no verdict, as where the
    /// lanes never all joined, and the session ran on its first connection).
    pub winner: Option<String>,
    /// Per lane, the stream bytes it delivered up to the verdict (the evaluator's count)
    /// or took (the garbler's).
    pub lane_bytes: Vec<u64>,
    /// The chunks a loser took that went again on the winner (the garbler's count;
    /// `None` in the evaluator's report).
    pub resent_chunks: Option<usize>,
}

/// An optional field that must be present (as `null` where it has no value): serde reads
/// a missing `Option` as `None` unless a field has its own deserializer, and a missing
/// measurement is a malformed report, not an unknown one.
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: Deserialize<'de>,
{
    Option::<T>::deserialize(d)
}

/// Which report an error is about: a party's, and its number where the party printed
/// several (one per computation of its session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WhichReport {
    /// `garbler` or `evaluator`.
    pub who: String,
    /// The report's place in what the party printed, from 1; `None` where it printed one.
    pub number: Option<usize>,
}

impl fmt::Display for WhichReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "the {}'s report", self.who)?;
        match self.number {
            Some(n) => write!(f, " {n}"),
            None => Ok(()),
        }
    }
}

/// A report that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Not a JSON object.
    #[error("{report} is not JSON ({source}): {text:.200}")]
    NotJson {
        /// Which report.
        report: WhichReport,
        /// The parser's complaint.
        source: serde_json::Error,
        /// What it printed (from where the report should have begun).
        text: String,
    },
    /// No `report_version`: an older binary.
    #[error(
        "{report} has no report_version: it comes from a transputation binary older than \
         this one (which reads report version {REPORT_VERSION}); run parties of the same \
         build"
    )]
    Unversioned {
        /// Which report.
        report: WhichReport,
    },
    /// Another version.
    #[error(
        "{report} is version {found}, this build reads version {REPORT_VERSION}; run \
         parties of the same build"
    )]
    Version {
        /// Which report.
        report: WhichReport,
        /// The version found.
        found: Value,
    },
    /// The right version, but a field is missing or of the wrong type.
    #[error("{report} (version {REPORT_VERSION}) is malformed: {source}")]
    Malformed {
        /// Which report.
        report: WhichReport,
        /// Which field and why.
        source: serde_json::Error,
    },
    /// The party printed nothing (only white space) where its reports should be.
    #[error("the {who} printed no report (its standard output is empty)")]
    NoReport {
        /// `garbler` or `evaluator`.
        who: String,
    },
}

impl PartyReport {
    /// Reads a report printed by the party `who` (for messages), checking its version first.
    pub fn from_json(who: &str, text: &str) -> Result<Self, ReportError> {
        let report = WhichReport {
            who: who.into(),
            number: None,
        };
        let v: Value = serde_json::from_str(text).map_err(|source| ReportError::NotJson {
            report: report.clone(),
            source,
            text: text.trim().into(),
        })?;
        Self::from_value(report, v)
    }

    /// Reads every report printed by the party `who`: one report (pretty or on one line,
    /// as a session of one computation prints it) or several after one another (one line
    /// per computation of an open session), in the order printed. Each is checked as
    /// [`PartyReport::from_json`] checks one; an error names the report by its number where
    /// there are several (`the evaluator's report 3 is not JSON ...`). Nothing at all is an
    /// error too: a party that succeeded has reported.
    pub fn stream_from_json(who: &str, text: &str) -> Result<Vec<Self>, ReportError> {
        let mut values = Vec::new();
        let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
        loop {
            let at = stream.byte_offset();
            match stream.next() {
                None => break,
                Some(Ok(v)) => values.push(v),
                Some(Err(source)) => {
                    // A number only where a report came before: a text that is not JSON
                    // from its start is the party's one report, broken.
                    let number = (!values.is_empty()).then_some(values.len() + 1);
                    return Err(ReportError::NotJson {
                        report: WhichReport {
                            who: who.into(),
                            number,
                        },
                        source,
                        text: text[at..].trim().into(),
                    });
                }
            }
        }
        if values.is_empty() {
            return Err(ReportError::NoReport { who: who.into() });
        }
        let several = values.len() > 1;
        values
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let report = WhichReport {
                    who: who.into(),
                    number: several.then_some(i + 1),
                };
                Self::from_value(report, v)
            })
            .collect()
    }

    /// A report from its JSON value, its version checked before its fields.
    fn from_value(report: WhichReport, v: Value) -> Result<Self, ReportError> {
        match v.get("report_version") {
            None => return Err(ReportError::Unversioned { report }),
            Some(found) if found.as_u64() != Some(u64::from(REPORT_VERSION)) => {
                return Err(ReportError::Version {
                    report,
                    found: found.clone(),
                })
            }
            Some(_) => {}
        }
        serde_json::from_value(v).map_err(|source| ReportError::Malformed { report, source })
    }

    /// The report as JSON, keys sorted (as the binary has always printed them).
    pub fn to_json_value(&self) -> Value {
        // Through a Value, whose map keeps keys sorted.
        serde_json::to_value(self).expect("a report is plain data")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> PartyReport {
        PartyReport {
            report_version: REPORT_VERSION,
            role: Role::Garbler,
            computation: 1,
            online_ms: None,
            session: Some(4),
            output: Some("66e94bd4ef8a2c3b884cfa59ca342b2e".into()),
            total_ms: 12.5,
            connect_ms: None,
            first_output_ms: Some(80.25),
            wall_ms: 95.5,
            peak_rss_bytes: Some(31 << 20),
            round_trips: 3,
            paper_ms: 9.5,
            ot_ms: 1.0,
            garble_ms: 2.0,
            eval_ms: 0.0,
            bytes_garbler_to_evaluator: 213_380,
            bytes_evaluator_to_garbler: 2308,
            parts_garbler_to_evaluator: ByteParts {
                tables: 204_800,
                ..ByteParts::default()
            },
            parts_evaluator_to_garbler: ByteParts::default(),
            scheme: "ideal".into(),
            backend: "vaes".into(),
            parallel: "cgp".into(),
            threads: 2,
            parallel_why: Some("parallel regions and 2 cores".into()),
            lanes: 2,
            transport: "tcp".into(),
            circuit: "aes128".into(),
            and_gates: 6400,
            load_ms: 3.0,
            setup_ms: 4.0,
            buffer_bytes: Some(125_000),
            bdp_bytes: Some(62_500),
            paper_bound_bytes: None,
            volume_bytes: Some(208_896),
            protection: "noise-psk".into(),
            handshake_ms: 1.0,
            auto: None,
        }
    }

    #[test]
    fn a_report_reads_back_as_written() {
        let r = sample();
        let text = serde_json::to_string_pretty(&r.to_json_value()).unwrap();
        assert_eq!(PartyReport::from_json("garbler", &text).unwrap(), r);
        // Keys sorted, as the binary printed them before the contract.
        let and = text.find("\"and_gates\"").unwrap();
        let version = text.find("\"report_version\"").unwrap();
        assert!(and < version && text.find("\"volume_bytes\"").unwrap() > version);
        assert!(text.contains("\"paper_bound_bytes\": null"), "{text}");
    }

    /// A garbler report of the build before the contract (from the results database it
    /// wrote): every field but report_version.
    const UNVERSIONED: &str = r#"{"and_gates":6400,"bdp_bytes":62500,"buffer_bytes":125000,"bytes_evaluator_to_garbler":2308,"bytes_garbler_to_evaluator":213380,"circuit":"aes128","eval_ms":0.0,"garble_ms":1667.041739,"handshake_ms":1.067305,"load_ms":34.994998,"ot_ms":2577.992122,"output":"66e94bd4ef8a2c3b884cfa59ca342b2e","paper_bound_bytes":null,"parts_evaluator_to_garbler":{"decoding":0,"framing":32,"header":72,"labels":0,"ot":2080,"output":16,"tables":0},"parts_garbler_to_evaluator":{"decoding":16,"framing":48,"header":72,"labels":2048,"ot":6144,"output":0,"tables":204800},"protection":"noise-psk","role":"garbler","scheme":"ideal","setup_ms":82.32026,"total_ms":5440.299516,"transport":"tcp","volume_bytes":208896}"#;

    #[test]
    fn a_report_of_an_older_binary_is_refused_with_a_reason() {
        let e = PartyReport::from_json("garbler", UNVERSIONED).unwrap_err();
        assert!(matches!(e, ReportError::Unversioned { .. }));
        assert!(
            e.to_string()
                .contains("garbler's report has no report_version")
                && e.to_string().contains("older than this one"),
            "{e}"
        );
        // The same with a version 1 or 2 added is refused for its version: the fields of the
        // versions after it (round trips, the paper's measure, which computation, ...) were
        // not measured, and are not made up.
        for old in 1..REPORT_VERSION {
            let text = UNVERSIONED.replacen('{', &format!("{{\"report_version\":{old},"), 1);
            let e = PartyReport::from_json("garbler", &text).unwrap_err();
            assert!(matches!(e, ReportError::Version { .. }), "{e}");
            assert_eq!(
                e.to_string(),
                format!(
                    "the garbler's report is version {old}, this build reads version \
                     {REPORT_VERSION}; run parties of the same build"
                )
            );
        }
        // With version 8 and its fields, it reads.
        let v8 = UNVERSIONED.replacen(
            '{',
            "{\"report_version\":8,\"lanes\":0,\"connect_ms\":null,\"first_output_ms\":6100.5,\
             \"round_trips\":3,\"paper_ms\":21.25,\"computation\":1,\"online_ms\":null,\
             \"session\":null,\"auto\":null,\"backend\":\"aes-ni\",\"wall_ms\":6200.0,\
             \"peak_rss_bytes\":null,\"parallel\":\"none\",\"threads\":1,\
             \"parallel_why\":null,",
            1,
        );
        let r = PartyReport::from_json("garbler", &v8).unwrap();
        assert_eq!(r.backend, "aes-ni");
        assert_eq!(
            (r.parallel.as_str(), r.threads, r.parallel_why),
            ("none", 1, None)
        );
        assert_eq!((r.wall_ms, r.peak_rss_bytes), (6200.0, None));
        assert_eq!((r.role, r.total_ms), (Role::Garbler, 5440.299516));
        assert_eq!(
            (r.connect_ms, r.first_output_ms, r.round_trips, r.paper_ms),
            (None, Some(6100.5), 3, 21.25)
        );
        assert_eq!((r.computation, r.online_ms, r.session), (1, None, None));
    }

    #[test]
    fn a_report_without_a_field_of_a_later_version_is_malformed() {
        let full = sample().to_json_value();
        for field in [
            "connect_ms",
            "first_output_ms",
            "wall_ms",
            "peak_rss_bytes",
            "round_trips",
            "paper_ms",
            "computation",
            "online_ms",
            "session",
            "auto",
            "lanes",
        ] {
            let mut v = full.clone();
            v.as_object_mut().unwrap().remove(field);
            let e = PartyReport::from_json("evaluator", &v.to_string()).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("malformed: missing field `{field}`")),
                "{field}: {e}"
            );
        }
        // An evaluator's connect and online times and a garbler without the output read
        // back.
        let r = PartyReport {
            role: Role::Evaluator,
            computation: 2,
            online_ms: Some(7.5),
            session: None,
            connect_ms: Some(0.75),
            first_output_ms: None,
            round_trips: 2,
            ..sample()
        };
        let text = r.to_json_value().to_string();
        assert_eq!(PartyReport::from_json("evaluator", &text).unwrap(), r);
    }

    #[test]
    fn other_versions_and_broken_reports_are_refused() {
        let newer = REPORT_VERSION + 1;
        let text = UNVERSIONED.replacen('{', &format!("{{\"report_version\":{newer},"), 1);
        let e = PartyReport::from_json("evaluator", &text).unwrap_err();
        let want = format!(
            "the evaluator's report is version {newer}, this build reads version {REPORT_VERSION}"
        );
        assert!(e.to_string().starts_with(&want), "{e}");
        let e = PartyReport::from_json("garbler", "Segmentation fault").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the garbler's report is not JSON"),
            "{e}"
        );
        let e = PartyReport::from_json("garbler", r#"{"report_version":8,"role":"garbler"}"#)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("malformed: missing field `computation`"),
            "{e}"
        );
    }

    /// The evaluator's report of computation `n` of an open session.
    fn computation(n: u32) -> PartyReport {
        PartyReport {
            role: Role::Evaluator,
            computation: n,
            online_ms: Some(100.0 + f64::from(n)),
            session: None,
            ..sample()
        }
    }

    /// Reports as a party prints them for several computations: one compact line each.
    fn lines(reports: &[PartyReport]) -> String {
        reports
            .iter()
            .map(|r| format!("{}\n", r.to_json_value()))
            .collect()
    }

    #[test]
    fn a_stream_reads_one_report_per_computation_in_order() {
        let reports: Vec<PartyReport> = (1..=4).map(computation).collect();
        let text = lines(&reports);
        assert_eq!(text.lines().count(), 4);
        assert_eq!(
            PartyReport::stream_from_json("evaluator", &text).unwrap(),
            reports
        );
        // One report, pretty as a session of one computation prints it, is a stream of one;
        // so is one without a line feed after it.
        let one = serde_json::to_string_pretty(&sample().to_json_value()).unwrap() + "\n";
        assert!(one.lines().count() > 30);
        assert_eq!(
            PartyReport::stream_from_json("garbler", &one).unwrap(),
            [sample()]
        );
        let bare = sample().to_json_value().to_string();
        assert_eq!(
            PartyReport::stream_from_json("garbler", &bare).unwrap(),
            [sample()]
        );
    }

    #[test]
    fn a_bad_report_in_a_stream_is_named_by_its_number() {
        let mut reports: Vec<PartyReport> = (1..=5).map(computation).collect();
        // Report 3 of another version.
        let mut v = reports[2].to_json_value();
        v["report_version"] = 2.into();
        let mut text = lines(&reports[..2]);
        text.push_str(&format!("{v}\n"));
        text.push_str(&lines(&reports[3..]));
        let e = PartyReport::stream_from_json("evaluator", &text).unwrap_err();
        let want = format!(
            "the evaluator's report 3 is version 2, this build reads version {REPORT_VERSION}"
        );
        assert!(e.to_string().starts_with(&want), "{e}");
        // Report 4 without its online time.
        let mut v = reports[3].to_json_value();
        v.as_object_mut().unwrap().remove("online_ms");
        let text = lines(&reports[..3]) + &format!("{v}\n") + &lines(&reports[4..]);
        let e = PartyReport::stream_from_json("evaluator", &text).unwrap_err();
        assert!(
            e.to_string().starts_with(&format!(
                "the evaluator's report 4 (version {REPORT_VERSION}) is malformed: missing \
                 field `online_ms`"
            )),
            "{e}"
        );
        // A line that is not JSON after two reports: the third, and what was printed there.
        let text = lines(&reports[..2]) + "thread 'main' panicked at ...\n" + &lines(&reports[2..]);
        let e = PartyReport::stream_from_json("evaluator", &text).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the evaluator's report 3 is not JSON")
                && e.to_string().contains("thread 'main' panicked"),
            "{e}"
        );
        // A report cut short at the end (the party was killed while printing it).
        reports.truncate(2);
        let text = lines(&reports) + "{\"report_version\":3,\"role\":\"eval";
        let e = PartyReport::stream_from_json("evaluator", &text).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the evaluator's report 3 is not JSON"),
            "{e}"
        );
        // Garbage from the start is the party's one report, broken: no number.
        let e = PartyReport::stream_from_json("garbler", "Segmentation fault").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the garbler's report is not JSON"),
            "{e}"
        );
        // An old binary's single report: no number either.
        let e = PartyReport::stream_from_json("garbler", UNVERSIONED).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the garbler's report has no report_version"),
            "{e}"
        );
    }

    #[test]
    fn no_report_at_all_is_an_error_naming_the_party() {
        for empty in ["", "\n", "  \n\t\n"] {
            let e = PartyReport::stream_from_json("evaluator", empty).unwrap_err();
            assert!(matches!(e, ReportError::NoReport { .. }), "{e}");
            assert_eq!(
                e.to_string(),
                "the evaluator printed no report (its standard output is empty)"
            );
        }
    }
}
