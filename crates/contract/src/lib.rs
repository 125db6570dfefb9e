//! The contract between a `transputation` party process and whatever starts it (the
//! binary's own `run`, the testbed's runner, tests, later a remote runner): what it is told
//! ([`PartyArgs`], to and from its command line), what it reports ([`PartyReport`], its JSON
//! on standard output) and what the binary can do ([`Capabilities`], from
//! `transputation capabilities --json`).
//!
//! Both sides use these types, so a field is named once. A report carries
//! [`REPORT_VERSION`]; one without it (from a binary older than the contract) or with
//! another version is refused with a message that says so, instead of being half read.
//! This crate has no dependency on the protocol crates, so anything can use it.

mod args;
mod capabilities;
mod report;

pub use args::{threads_of_two_parties_here, ArgvError, PartyArgs, Protection, Role};
pub use capabilities::{
    Capabilities, TransportInfo, FEATURE_BUFFER_SIZING, FEATURE_PLAN_CACHE, FEATURE_REPEAT,
    FEATURE_TRANSPORT_AUTO,
};
pub use report::{
    AutoReport, ByteParts, PartyReport, RaceReport, ReportError, WhichReport, REPORT_VERSION,
};
