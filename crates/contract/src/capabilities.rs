//! What a `transputation` binary can do, as `transputation capabilities --json` prints it:
//! asked by whatever starts its parties instead of reading its `--help`.
//!
//! The capabilities have no version of their own: a field is only ever added, optional, so
//! that the JSON of an older binary (which lacks it) still reads, as unknown, and an older
//! reader skips a field it does not know. A field that changed meaning or went would need
//! one.

use serde::{Deserialize, Serialize};

/// The feature of parties that size their transport's buffers for a path (`--rtt-ms`,
/// `--bandwidth`).
pub const FEATURE_BUFFER_SIZING: &str = "buffer-sizing";

/// The feature of an evaluator that runs several computations in one session
/// (`--repeat N`), each party then printing a report per computation.
pub const FEATURE_REPEAT: &str = "repeat";

/// The feature of parties that take `--transport auto` (the evaluator measures the path and
/// chooses the transport among those the garbler serves) and of an evaluator that takes `--probe-cache SECS`;
/// `auto` is not one of [`Capabilities::transports`], being no transport of its own.
pub const FEATURE_TRANSPORT_AUTO: &str = "transport-auto";

/// The feature of parties that keep the plans of circuits planned whole between runs
/// (`--plan-cache DIR`).
pub const FEATURE_PLAN_CACHE: &str = "plan-cache";

/// One transport of the build.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportInfo {
    /// Its name (`tcp`, `udt`, ...).
    pub name: String,
    /// Whether it works on this machine.
    pub available: bool,
    /// Why not, if it does not.
    pub why: Option<String>,
}

/// A binary's capabilities.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capabilities {
    /// The binary's version.
    pub version: String,
    /// The [`crate::PartyReport`] version its parties write.
    pub report_version: u32,
    /// The version of the 2PC protocol its parties speak (the session header's, which
    /// changes with the message flow and so with a session's round trips); `None` from a
    /// binary older than this field.
    #[serde(default)]
    pub protocol_version: Option<u32>,
    /// Its transports.
    pub transports: Vec<TransportInfo>,
    /// Its garbling schemes.
    pub schemes: Vec<String>,
    /// Its kinds of session protection (`none`, `noise-psk`, `noise-kk`).
    pub protection: Vec<String>,
    /// Optional features of its parties ([`FEATURE_BUFFER_SIZING`], [`FEATURE_REPEAT`],
    /// [`FEATURE_TRANSPORT_AUTO`], [`FEATURE_PLAN_CACHE`]).
    pub features: Vec<String>,
}

impl Capabilities {
    /// Whether the parties have `feature`.
    pub fn has_feature(&self, feature: &str) -> bool {
        self.features.iter().any(|f| f == feature)
    }

    /// Whether the parties offer the protection `kind`.
    pub fn protects_with(&self, kind: &str) -> bool {
        self.protection.iter().any(|p| p == kind)
    }

    /// The transport called `name`, if the binary lists it (it lists those it was built
    /// without too, as unavailable).
    pub fn transport(&self, name: &str) -> Option<&TransportInfo> {
        self.transports.iter().find(|t| t.name == name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capabilities_read_back_and_answer() {
        let c = Capabilities {
            version: "0.1.0".into(),
            report_version: 1,
            protocol_version: Some(5),
            transports: vec![
                TransportInfo {
                    name: "tcp".into(),
                    available: true,
                    why: None,
                },
                TransportInfo {
                    name: "udt".into(),
                    available: false,
                    why: Some("built without libudt".into()),
                },
            ],
            schemes: vec!["ideal".into()],
            protection: vec!["none".into(), "noise-psk".into()],
            features: vec![FEATURE_BUFFER_SIZING.into()],
        };
        let back: Capabilities = serde_json::from_str(&serde_json::to_string(&c).unwrap()).unwrap();
        assert_eq!(back, c);
        assert!(c.has_feature("buffer-sizing") && !c.has_feature("x"));
        assert!(c.protects_with("noise-psk") && !c.protects_with("noise-kk"));
        assert!(!c.transport("udt").unwrap().available && c.transport("quic").is_none());
    }

    #[test]
    fn capabilities_of_a_binary_older_than_the_protocol_version_read_it_as_unknown() {
        // What `capabilities --json` printed before the field existed.
        let old = r#"{"version":"0.1.0","report_version":3,"transports":[{"name":"tcp",
            "available":true,"why":null}],"schemes":["prf","circular","ideal"],
            "protection":["none","noise-psk","noise-kk"],"features":["buffer-sizing","repeat"]}"#;
        let c: Capabilities = serde_json::from_str(old).unwrap();
        assert_eq!(c.protocol_version, None);
        assert_eq!(c.report_version, 3);
        assert!(c.has_feature("repeat") && c.transport("tcp").unwrap().available);
        // A binary that states it.
        let new = old.replacen('{', "{\"protocol_version\":5,", 1);
        let c: Capabilities = serde_json::from_str(&new).unwrap();
        assert_eq!(c.protocol_version, Some(5));
        // And one that states it as unknown.
        let null = old.replacen('{', "{\"protocol_version\":null,", 1);
        let c: Capabilities = serde_json::from_str(&null).unwrap();
        assert_eq!(c.protocol_version, None);
    }
}
