//! The crate's error type: what can go wrong while probing, serving or keeping the cache.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

/// What can go wrong while probing or serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A socket operation failed (the cause is the error's source).
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A server waited for a prober in vain.
    #[error("no prober for {0:?}")]
    NoProber(Duration),
    /// A prober found no server.
    #[error(
        "no answer from a probe server at {addr} for {patience:?} (is `transputation probe \
         --listen {addr}` running there?)"
    )]
    NoServer {
        /// The server's address.
        addr: SocketAddr,
        /// How long the prober tried.
        patience: Duration,
    },
    /// The server answered the first ping but none of the measured ones.
    #[error("no answer from a probe server at {addr} to {pings} pings")]
    NoPongs {
        /// The server's address.
        addr: SocketAddr,
        /// Pings sent.
        pings: u32,
    },
    /// The server did not report on the train.
    #[error("the probe server at {0} did not report on the train")]
    NoReport(SocketAddr),
    /// A measurement cannot be cached (a field is not a finite number, so its JSON would
    /// not read back).
    #[error("a probe measurement with {field} = {value} cannot be cached in {path}")]
    Uncacheable {
        /// The cache file.
        path: PathBuf,
        /// The offending field.
        field: &'static str,
        /// Its value.
        value: f64,
    },
}

/// Wraps an I/O error with what was being done.
pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let context = context.into();
    move |source| Error::Io { context, source }
}
