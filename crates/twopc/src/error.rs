//! Why a session fails: one error type for every step of both parties, so that a caller
//! can tell the peer's fault (a malformed or mismatched message) from the channel's and
//! from its own input.

/// Why a session failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The channel failed: the peer closed, went silent past the timeout, or sent a frame
    /// the transport refused.
    #[error("transport: {0}")]
    Transport(#[from] transputation_transport::Error),
    /// The peer's session header describes another session.
    #[error(
        "the peer runs a different session: {field} differs (ours: {ours}; the peer's: {theirs})"
    )]
    Mismatch {
        /// What differs.
        field: &'static str,
        /// This party's value.
        ours: String,
        /// The peer's value.
        theirs: String,
    },
    /// The peer protects its session (its first bytes are a protected-session hello) and
    /// this side does not.
    #[error(
        "the peer runs a protected session (--psk-file or --key) but this side runs without \
         protection (--insecure): give both parties the same protection"
    )]
    PeerProtected,
    /// The peer closed the connection before sending any byte, in place of its session
    /// header: what a party that protects its sessions does with one that does not.
    #[error(
        "the peer closed the connection without sending its session header: it refused this \
         session, as a party that protects its session (--psk-file or --key) refuses one \
         without protection (--insecure); give both parties the same protection"
    )]
    RefusedUnprotected,
    /// The peer sent something that is not what the protocol expects here.
    #[error("malformed {what} from the peer: {problem}")]
    Malformed {
        /// The message.
        what: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The oblivious transfer failed (an invalid point or a message of the wrong size).
    #[error("oblivious transfer: {0}")]
    Ot(#[from] transputation_ot::Error),
    /// The garbled tables do not fit the circuit.
    #[error("garbled tables: {0}")]
    Tables(#[from] transputation_garble::EvalError),
    /// This party's own input does not fit the circuit.
    #[error("input: {0}")]
    Input(String),
    /// The caller's handler of a computation's report failed, which ends the session
    /// ([`crate::Garbler::run_session`] returns the handler's own error instead).
    #[error("the session was stopped by its caller")]
    Stopped,
}
