//! The agreement's datagrams, on the garbler's UDP port beside the probe's.
//!
//! ```text
//! "TPAU" | version (1) | kind (1: offer, 2: answer) | 0 | 0 | session (u64, big-endian) | JSON
//! ```
//!
//! The JSON is an [`Offer`] or a [`Reply`]; a datagram is at most [`MAX_DATAGRAM`] bytes
//! (below any path's MTU, so never fragmented). Neither is authenticated here: both
//! parties hash the exact bytes of the offer and the reply into the protected session's
//! handshake ([`binding`]), which fails unless they saw the same ones.

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use transputation_circuits::Circuit;
use transputation_model::Path;

/// The first bytes of every datagram.
pub const MAGIC: &[u8; 4] = b"TPAU";
/// The version of this format.
pub const VERSION: u8 = 1;
/// The largest datagram sent or accepted.
pub const MAX_DATAGRAM: usize = 1400;
/// Header bytes before the JSON.
const HEADER: usize = 16;
const OFFER: u8 = 1;
const ANSWER: u8 = 2;

/// What the evaluator offers: what it can run, the path it measured, and its session.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Offer {
    /// The transport settings the evaluator can run on this path (canonical strings).
    pub transports: Vec<String>,
    /// The path as the evaluator measured it (or recalled it from its cache).
    pub path: Path,
    /// The SHA-256 digest of the circuit, hex.
    pub circuit: String,
    /// The garbling scheme.
    pub scheme: String,
    /// Settings that failed to connect in this session, not to be chosen again.
    pub exclude: Vec<String>,
}

/// One candidate's prediction, for the evaluator's report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Predicted {
    /// The transport string.
    pub transport: String,
    /// Its predicted time to the output, ms (`None`: it cannot carry the session).
    pub ms: Option<f64>,
}

/// The garbler's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The chosen transport string.
    pub transport: String,
    /// The port the garbler listens on for it (on the address the offer went to).
    pub port: u16,
    /// The socket buffer both parties use, bytes (paper §4.2, from the path).
    pub buffer_bytes: u64,
    /// Its predicted time to the output, ms.
    pub predicted_ms: f64,
    /// One line on why.
    pub why: String,
    /// The best few candidates, best first.
    pub ranked: Vec<Predicted>,
}

/// The garbler's reply: the offer it answers (the first 16 bytes of the SHA-256 of its
/// JSON, hex, so that an evaluator that has since offered again ignores a late reply to an
/// earlier offer) and the answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Reply {
    /// The offer answered.
    pub offer: String,
    /// The answer.
    pub answer: Answer,
}

/// Names an offer in a [`Reply`].
pub fn offer_id(offer_json: &[u8]) -> String {
    hex(&Sha256::digest(offer_json)[..16])
}

/// How an offer names a circuit: its SHA-256 digest, hex.
pub fn circuit_id(circuit: &Circuit) -> String {
    hex(&circuit.digest())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The garbler's answer to an offer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Answer {
    /// A transport was chosen and is listening.
    Chosen(Decision),
    /// No session: why (another circuit, no transport in common, ...).
    Refused(String),
}

/// What went wrong reading a datagram.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// Not a datagram of this protocol.
    #[error("not an agreement datagram")]
    Foreign,
    /// Another version of it.
    #[error("agreement datagram of version {0}, this build speaks {VERSION}")]
    Version(u8),
    /// Malformed.
    #[error("malformed agreement datagram: {0}")]
    Malformed(String),
}

fn encode(kind: u8, session: u64, json: &[u8]) -> Vec<u8> {
    let mut d = Vec::with_capacity(HEADER + json.len());
    d.extend_from_slice(MAGIC);
    d.extend_from_slice(&[VERSION, kind, 0, 0]);
    d.extend_from_slice(&session.to_be_bytes());
    d.extend_from_slice(json);
    d
}

/// An offer datagram, or `None` if it would not fit in one.
pub fn offer_datagram(session: u64, offer: &Offer) -> Option<Vec<u8>> {
    let json = serde_json::to_vec(offer).ok()?;
    let d = encode(OFFER, session, &json);
    (d.len() <= MAX_DATAGRAM).then_some(d)
}

/// A reply datagram. A decision whose list does not fit loses its last entries.
pub fn reply_datagram(session: u64, reply: &Reply) -> Vec<u8> {
    let mut r = reply.clone();
    loop {
        let json = serde_json::to_vec(&r).expect("a reply serializes");
        let d = encode(ANSWER, session, &json);
        if d.len() <= MAX_DATAGRAM {
            return d;
        }
        match &mut r.answer {
            Answer::Chosen(dec) if !dec.ranked.is_empty() => {
                dec.ranked.pop();
            }
            Answer::Chosen(dec) => dec.why.truncate(dec.why.len() / 2),
            Answer::Refused(why) => why.truncate(why.len() / 2),
        }
    }
}

/// A datagram read: its session and what it carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Datagram {
    /// An offer, with its JSON bytes (what the binding hashes).
    Offer(u64, Offer, Vec<u8>),
    /// A reply, with its JSON bytes.
    Reply(u64, Reply, Vec<u8>),
}

/// Reads a datagram of this protocol.
pub fn parse(d: &[u8]) -> Result<Datagram, WireError> {
    if d.len() < HEADER || &d[..4] != MAGIC {
        return Err(WireError::Foreign);
    }
    if d[4] != VERSION {
        return Err(WireError::Version(d[4]));
    }
    let session = u64::from_be_bytes(d[8..16].try_into().expect("8 bytes"));
    let json = &d[HEADER..];
    let bad = |e: serde_json::Error| WireError::Malformed(e.to_string());
    match d[5] {
        OFFER => Ok(Datagram::Offer(
            session,
            serde_json::from_slice(json).map_err(bad)?,
            json.to_vec(),
        )),
        ANSWER => Ok(Datagram::Reply(
            session,
            serde_json::from_slice(json).map_err(bad)?,
            json.to_vec(),
        )),
        k => Err(WireError::Malformed(format!("kind {k}"))),
    }
}

/// What both parties mix into the protected session's handshake: the session and the
/// digests of the exact offer and reply. A stranger's forged answer, or an offer changed
/// on the way, makes the evaluator's binding differ from the garbler's, and the handshake
/// fails at its first message.
pub fn binding(session: u64, offer_json: &[u8], reply_json: &[u8]) -> Vec<u8> {
    let mut b = b"transputation auto v1".to_vec();
    b.extend_from_slice(&session.to_be_bytes());
    b.extend_from_slice(&Sha256::digest(offer_json));
    b.extend_from_slice(&Sha256::digest(reply_json));
    b
}
