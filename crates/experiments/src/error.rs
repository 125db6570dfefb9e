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
    /// The database's schema is not the one this build reads: a newer file, or (opened
    /// for reading only, so not brought up to date) an older one.
    #[error("{}", schema_text(.path, *.found, *.supported))]
    Schema {
        /// The database file.
        path: std::path::PathBuf,
        /// Its schema version (`PRAGMA user_version`; 0: no results schema at all).
        found: i64,
        /// The version this build reads and writes ([`crate::db::SCHEMA_VERSION`]).
        supported: i64,
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

/// The text of [`Error::Schema`].
fn schema_text(path: &std::path::Path, found: i64, supported: i64) -> String {
    let path = path.display();
    match found {
        0 => format!("{path} is not a results database (its schema version is 0)"),
        v if v > supported => format!(
            "the results database {path}: its schema is version {v}, newer than this tool's \
             {supported}"
        ),
        v => format!(
            "the results database {path}: its schema is version {v}, older than this tool's \
             {supported}"
        ),
    }
}
