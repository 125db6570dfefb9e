//! `transputation capabilities`: what this build can do, for whoever starts its parties
//! (the testbed's runner asks it instead of reading `garbler --help`). The JSON is the
//! contract's [`Capabilities`].

use anyhow::Result;
use clap::Args;
use transputation_contract::{
    Capabilities, TransportInfo, FEATURE_BUFFER_SIZING, FEATURE_PLAN_CACHE, FEATURE_REPEAT,
    FEATURE_TRANSPORT_AUTO, REPORT_VERSION,
};
use transputation_garble::Scheme;

use crate::report::table;

#[derive(Args, Debug)]
pub struct CapabilitiesArgs {
    /// Print JSON (keys: version, report_version, protocol_version, transports [{name,
    /// available, why}], schemes, protection, features).
    #[arg(long)]
    json: bool,
}

/// This build's capabilities.
pub fn capabilities() -> Capabilities {
    Capabilities {
        version: env!("CARGO_PKG_VERSION").into(),
        report_version: REPORT_VERSION,
        protocol_version: Some(u32::from(transputation_2pc::PROTOCOL_VERSION)),
        transports: transputation_transport::transports()
            .into_iter()
            .map(|t| TransportInfo {
                name: t.name.into(),
                available: t.available.is_ok(),
                why: t.available.err().map(|e| e.to_string()),
            })
            .collect(),
        schemes: Scheme::ALL.iter().map(|s| s.name().into()).collect(),
        // Every party takes --insecure, --psk-file, and --key with --peer-key.
        protection: ["none", "noise-psk", "noise-kk"].map(String::from).to_vec(),
        // --transport auto and evaluator --probe-cache.
        features: vec![
            FEATURE_BUFFER_SIZING.into(),
            FEATURE_REPEAT.into(),
            FEATURE_TRANSPORT_AUTO.into(),
            FEATURE_PLAN_CACHE.into(),
        ],
    }
}

pub fn run(args: CapabilitiesArgs) -> Result<()> {
    let c = capabilities();
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&c)?)?;
        return Ok(());
    }
    let transports: Vec<String> = c
        .transports
        .iter()
        .map(|t| match &t.why {
            None => t.name.clone(),
            Some(why) => format!("{} (unavailable: {why})", t.name),
        })
        .collect();
    let rows = vec![
        vec!["version".into(), c.version.clone()],
        vec!["report version".into(), c.report_version.to_string()],
        vec![
            "protocol version".into(),
            c.protocol_version
                .map_or_else(|| "unknown".into(), |v| v.to_string()),
        ],
        vec!["transports".into(), transports.join(", ")],
        vec!["schemes".into(), c.schemes.join(", ")],
        vec!["protection".into(), c.protection.join(", ")],
        vec!["features".into(), c.features.join(", ")],
    ];
    out!("{}", table(&["", ""], &rows))?;
    Ok(())
}
