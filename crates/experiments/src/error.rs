//! What can go wrong while planning, running or reporting an experiment: this crate's one
//! error type, apart from the link errors of `transputation-netlab` it carries.

use crate::experiment::ExperimentError;

/// What went wrong in an experiment.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// Building, running or measuring a link failed.
    #[error(transparent)]
    Link(#[from] transputation_netlab::Error),
    /// The results database failed.
    #[error("{context}: {source}")]
    Database {
        /// What was being done.
        context: String,
        /// The cause.
        source: rusqlite::Error,
    },
    /// A file could not be read or written.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
    /// An experiment description is wrong.
    #[error(transparent)]
    Experiment(#[from] ExperimentError),
    /// An experiment could not go on (its parties cannot be started at all).
    #[error("{0}")]
    Run(String),
}
