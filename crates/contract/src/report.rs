//! A party's report: what a garbler or evaluator prints with `--json` when its session ends.

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
pub const REPORT_VERSION: u32 = 2;

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
}

/// An optional field that must be present (as `null` where it has no value): serde reads
/// a missing `Option` as `None` unless a field has its own deserializer, and a missing
/// measurement is a malformed report, not an unknown one.
fn present<'de, D: serde::Deserializer<'de>>(d: D) -> Result<Option<f64>, D::Error> {
    Option::<f64>::deserialize(d)
}

/// A report that cannot be read.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ReportError {
    /// Not a JSON object.
    #[error("the {who}'s report is not JSON ({source}): {text:.200}")]
    NotJson {
        /// `garbler` or `evaluator`.
        who: String,
        /// The parser's complaint.
        source: serde_json::Error,
        /// What it printed.
        text: String,
    },
    /// No `report_version`: an older binary.
    #[error(
        "the {who}'s report has no report_version: it comes from a transputation binary older \
         than this one (which reads report version {REPORT_VERSION}); run parties of the same \
         build"
    )]
    Unversioned {
        /// `garbler` or `evaluator`.
        who: String,
    },
    /// Another version.
    #[error(
        "the {who}'s report is version {found}, this build reads version {REPORT_VERSION}; \
         run parties of the same build"
    )]
    Version {
        /// `garbler` or `evaluator`.
        who: String,
        /// The version found.
        found: Value,
    },
    /// The right version, but a field is missing or of the wrong type.
    #[error("the {who}'s report (version {REPORT_VERSION}) is malformed: {source}")]
    Malformed {
        /// `garbler` or `evaluator`.
        who: String,
        /// Which field and why.
        source: serde_json::Error,
    },
}

impl PartyReport {
    /// Reads a report printed by the party `who` (for messages), checking its version first.
    pub fn from_json(who: &str, text: &str) -> Result<Self, ReportError> {
        let v: Value = serde_json::from_str(text).map_err(|source| ReportError::NotJson {
            who: who.into(),
            source,
            text: text.trim().into(),
        })?;
        match v.get("report_version") {
            None => {
                return Err(ReportError::Unversioned { who: who.into() });
            }
            Some(found) if found.as_u64() != Some(u64::from(REPORT_VERSION)) => {
                return Err(ReportError::Version {
                    who: who.into(),
                    found: found.clone(),
                })
            }
            Some(_) => {}
        }
        serde_json::from_value(v).map_err(|source| ReportError::Malformed {
            who: who.into(),
            source,
        })
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
            output: Some("66e94bd4ef8a2c3b884cfa59ca342b2e".into()),
            total_ms: 12.5,
            connect_ms: None,
            first_output_ms: Some(80.25),
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
        // The same with a version 1 added is refused for its version: version 2's fields
        // (round trips, the paper's measure, ...) were not measured, and are not made up.
        let v1 = UNVERSIONED.replacen('{', "{\"report_version\":1,", 1);
        let e = PartyReport::from_json("garbler", &v1).unwrap_err();
        assert!(matches!(e, ReportError::Version { .. }), "{e}");
        assert_eq!(
            e.to_string(),
            "the garbler's report is version 1, this build reads version 2; run parties of \
             the same build"
        );
        // With version 2 and its fields, it reads.
        let v2 = UNVERSIONED.replacen(
            '{',
            "{\"report_version\":2,\"connect_ms\":null,\"first_output_ms\":6100.5,\
             \"round_trips\":3,\"paper_ms\":21.25,",
            1,
        );
        let r = PartyReport::from_json("garbler", &v2).unwrap();
        assert_eq!((r.role, r.total_ms), (Role::Garbler, 5440.299516));
        assert_eq!(
            (r.connect_ms, r.first_output_ms, r.round_trips, r.paper_ms),
            (None, Some(6100.5), 3, 21.25)
        );
    }

    #[test]
    fn a_version_2_report_without_a_new_field_is_malformed() {
        let full = sample().to_json_value();
        for field in ["connect_ms", "first_output_ms", "round_trips", "paper_ms"] {
            let mut v = full.clone();
            v.as_object_mut().unwrap().remove(field);
            let e = PartyReport::from_json("evaluator", &v.to_string()).unwrap_err();
            assert!(
                e.to_string()
                    .contains(&format!("malformed: missing field `{field}`")),
                "{field}: {e}"
            );
        }
        // An evaluator's connect time and a garbler without the output read back.
        let r = PartyReport {
            role: Role::Evaluator,
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
        let v3 = UNVERSIONED.replacen('{', "{\"report_version\":3,", 1);
        let e = PartyReport::from_json("evaluator", &v3).unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the evaluator's report is version 3, this build reads version 2"),
            "{e}"
        );
        let e = PartyReport::from_json("garbler", "Segmentation fault").unwrap_err();
        assert!(
            e.to_string()
                .starts_with("the garbler's report is not JSON"),
            "{e}"
        );
        let e = PartyReport::from_json("garbler", r#"{"report_version":2,"role":"garbler"}"#)
            .unwrap_err();
        assert!(
            e.to_string()
                .contains("malformed: missing field `total_ms`"),
            "{e}"
        );
    }
}
