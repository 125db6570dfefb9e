//! Experiments over emulated links: what to run, running it, and what came out.
//!
//! Built on `transputation-netlab`'s links. [`experiment`] is the matrix of circuits ×
//! schemes × transports × conditions × repetitions, from flags or TOML; [`runner`] carries
//! a plan out, one topology per condition, the parties as process groups with a per-run
//! limit; [`db`] is the SQLite results database and its schema; [`preset`] names the
//! papers' experiments; [`report`] gives the paper's Table 4 shape, [`failures`] what went
//! wrong where, and [`plot`] time against RTT, loss or rate (or per transport, where no axis
//! varies) as SVG. The parties' command
//! lines come from the caller through [`runner::Launcher`]; [`launch`] is the one call a front
//! end makes to start or resume an experiment with a `transputation` binary's parties.

pub mod db;
mod error;
pub mod experiment;
pub mod failures;
pub mod launch;
pub mod plot;
pub mod preset;
pub mod report;
pub mod runner;
pub mod stats;

pub use error::Error;
