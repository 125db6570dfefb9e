//! The agreement's messages: the garbler's card, asked for and sent as UDP datagrams on its
//! port beside the probe's, and the evaluator's statement, the first bytes on the chosen
//! connection.
//!
//! ```text
//! datagram:  "TPAU" | version (4) | kind (3: card ask, 4: card) | 0 | 0 | session (u64, BE) | JSON
//! statement: "TPAS" | version (4) | 0 | length (u16, BE) | JSON
//! move:      "TPAM" | version (4) | 0 | length (u16, BE) | JSON
//! refusal:   "TPAR" | version (4) | 0 | length (u16, BE) | UTF-8 reason
//! ```
//!
//! A card ask carries no JSON; a card carries a [`Card`], a statement a [`Statement`], a
//! move a [`Move`] (the first bytes of the connection a provisional session moves the
//! garbler's sending to). A garbler that does not admit a statement or a move answers
//! with a refusal, in place of its handshake or its tables, and closes. A
//! datagram is at most [`MAX_DATAGRAM`] bytes (below any path's MTU, so never fragmented),
//! a statement at most [`MAX_STATEMENT`]. Nothing here is authenticated: both parties hash
//! the exact bytes of the card and the statement into the protected session's handshake
//! ([`binding`]), which fails unless they saw the same ones. A move is authenticated by
//! the secret whose SHA-256 the statement carried ([`Statement::moves`]), and what moves
//! is the protected stream itself ([`crate::moving`]).

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use transputation_model::Path;

/// The first bytes of every datagram.
pub const MAGIC: &[u8; 4] = b"TPAU";
/// The first bytes of a statement.
pub const STATEMENT_MAGIC: &[u8; 4] = b"TPAS";
/// The first bytes of a move.
pub const MOVE_MAGIC: &[u8; 4] = b"TPAM";
/// The first bytes of a refusal.
pub const REFUSAL_MAGIC: &[u8; 4] = b"TPAR";
/// The longest refusal reason sent, bytes.
pub const MAX_REFUSAL: usize = 1024;
/// The version of these formats.
pub const VERSION: u8 = 4;
/// The largest datagram sent or accepted.
pub const MAX_DATAGRAM: usize = 1400;
/// The largest statement sent or accepted (its JSON).
pub const MAX_STATEMENT: usize = 4096;
/// Header bytes before a datagram's JSON.
const HEADER: usize = 16;
/// Header bytes before a statement's JSON or a refusal's reason.
pub const FRAME_HEADER: usize = 8;
const CARD_ASK: u8 = 3;
const CARD: u8 = 4;

/// What a garbler serves under `auto`, the same for every session it runs with the same
/// transport flags, whatever its circuit: the transports it listens for, each on a port of
/// its own, set up before any evaluator asks. (The circuit is the statement's to name and
/// the garbler's to check, so that a card cached for an address stays good when the
/// garbler there computes another function.)
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Card {
    /// Its listeners.
    pub listeners: Vec<Listening>,
    /// The kernel TCP congestion controls it may set on an accepted connection.
    pub congestion: Vec<String>,
}

/// One of the garbler's listeners: a transport setting without its sender options (see
/// `TransportSpec::listen_key`), and its port on the card's address.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Listening {
    /// The setting it accepts (any value of the family's sender options).
    pub transport: String,
    /// Its port.
    pub port: u16,
}

impl Card {
    /// The port of the listener for `key`, if the garbler has one.
    pub fn port_of(&self, key: &str) -> Option<u16> {
        self.listeners
            .iter()
            .find(|l| l.transport == key)
            .map(|l| l.port)
    }
}

/// One candidate's prediction, for the reports.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Predicted {
    /// The transport string.
    pub transport: String,
    /// Its predicted time to the output, ms (`None`: it cannot carry the session).
    pub ms: Option<f64>,
}

/// The evaluator's decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Decision {
    /// The chosen transport string.
    pub transport: String,
    /// The garbler's port for it (on the card's address).
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

/// What the evaluator states on the connection of its choice, before the protected
/// handshake: the session, the card it decided with, the path and the decision.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Statement {
    /// The session number, random.
    pub session: u64,
    /// The SHA-256 of the card's JSON, hex ([`card_id`]).
    pub card: String,
    /// The evaluator's scheme. (Its circuit is not stated: the session's first message
    /// names it, inside the protected session, and the garbler refuses another one there.)
    pub scheme: String,
    /// The path the decision is for.
    pub path: Path,
    /// The decision.
    pub decision: Decision,
    /// Choices that failed to connect before this one.
    pub failed: Vec<String>,
    /// For a provisional session, started at once over the connection made while the path
    /// is probed: the commitment to the secret a later [`Move`] of this session shows
    /// ([`move_secret`]: the SHA-256 of the secret's text, hex).
    /// Its path and decision are then the evaluator's start (kernel TCP as connected),
    /// not a measurement; the garbler leaves its sending as accepted until the move.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub moves: Option<String>,
    /// For a raced session (`auto:race`): the settings whose connections race the
    /// garbler's sending, lane by lane ([`crate::racing`]); each joins with a [`Move`]
    /// naming its lane and showing the secret `moves` committed to.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub race: Vec<String>,
}

/// The first bytes of the connection that a provisional session's garbler is to send on
/// from now on ([`crate::moving`]): the session, the secret the statement committed to,
/// and the decision the probe settled on, for the path it measured.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Move {
    /// The session number of the statement.
    pub session: u64,
    /// The secret the statement committed to ([`move_secret`]).
    pub secret: String,
    /// The path measured.
    pub path: Path,
    /// The decision on it.
    pub decision: Decision,
    /// For a raced session: the lane this connection is ([`Statement::race`]); it joins
    /// the race instead of taking the sending.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lane: Option<usize>,
}

/// A fresh secret for a provisional session's move (32 random bytes, in hex) and its
/// commitment: the SHA-256 of that text, hex.
pub fn move_secret() -> (String, String) {
    let secret = hex(&rand::random::<[u8; 32]>());
    let commitment = hex(&Sha256::digest(&secret));
    (secret, commitment)
}

/// Whether `secret` is the one `commitment` ([`move_secret`]) names.
pub fn opens(secret: &str, commitment: &str) -> bool {
    hex(&Sha256::digest(secret)) == commitment
}

/// Names a card in a [`Statement`]: the SHA-256 of its JSON, hex.
pub fn card_id(card_json: &[u8]) -> String {
    hex(&Sha256::digest(card_json))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// What went wrong reading a message.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum WireError {
    /// Not a message of this protocol.
    #[error("not an agreement message")]
    Foreign,
    /// Another version of it.
    #[error("agreement message of version {0}, this build speaks {VERSION}")]
    Version(u8),
    /// Malformed.
    #[error("malformed agreement message: {0}")]
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

/// A card ask of `session`.
pub fn card_ask_datagram(session: u64) -> Vec<u8> {
    encode(CARD_ASK, session, &[])
}

/// A card datagram answering `session`'s ask, or `None` if the card does not fit in one.
pub fn card_datagram(session: u64, card_json: &[u8]) -> Option<Vec<u8>> {
    let d = encode(CARD, session, card_json);
    (d.len() <= MAX_DATAGRAM).then_some(d)
}

/// A datagram read: its session and what it carries.
#[derive(Debug, Clone, PartialEq)]
pub enum Datagram {
    /// An ask for the card.
    CardAsk(u64),
    /// A card, with its JSON bytes (what the binding hashes).
    Card(u64, Card, Vec<u8>),
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
    match d[5] {
        CARD_ASK => Ok(Datagram::CardAsk(session)),
        CARD => Ok(Datagram::Card(session, parse_card(json)?, json.to_vec())),
        k => Err(WireError::Malformed(format!("kind {k}"))),
    }
}

/// Reads a card's JSON.
pub fn parse_card(json: &[u8]) -> Result<Card, WireError> {
    serde_json::from_slice(json).map_err(|e| WireError::Malformed(e.to_string()))
}

/// A frame on the connection: `magic | VERSION | 0 | length (u16, BE) | body`.
fn frame(magic: &[u8; 4], body: &[u8]) -> Vec<u8> {
    let mut b = Vec::with_capacity(FRAME_HEADER + body.len());
    b.extend_from_slice(magic);
    b.extend_from_slice(&[VERSION, 0]);
    b.extend_from_slice(&(body.len() as u16).to_be_bytes());
    b.extend_from_slice(body);
    b
}

/// The body length a frame header of `magic` announces.
fn frame_length(header: &[u8; FRAME_HEADER], magic: &[u8; 4]) -> Result<usize, WireError> {
    if &header[..4] != magic {
        return Err(WireError::Foreign);
    }
    if header[4] != VERSION {
        return Err(WireError::Version(header[4]));
    }
    Ok(usize::from(u16::from_be_bytes([header[6], header[7]])))
}

/// `value` as JSON in a frame of `magic` (at most [`MAX_STATEMENT`] bytes of JSON), and
/// the JSON.
fn json_frame(
    magic: &[u8; 4],
    what: &str,
    value: &impl Serialize,
) -> Result<(Vec<u8>, Vec<u8>), WireError> {
    let json = serde_json::to_vec(value).map_err(|e| WireError::Malformed(e.to_string()))?;
    if json.len() > MAX_STATEMENT {
        return Err(WireError::Malformed(format!(
            "a {what} of {} bytes (at most {MAX_STATEMENT})",
            json.len()
        )));
    }
    Ok((frame(magic, &json), json))
}

/// A statement's bytes on the connection, with its JSON (what the binding hashes).
pub fn statement_bytes(s: &Statement) -> Result<(Vec<u8>, Vec<u8>), WireError> {
    json_frame(STATEMENT_MAGIC, "statement", s)
}

/// A move's bytes on the connection.
pub fn move_bytes(m: &Move) -> Result<Vec<u8>, WireError> {
    json_frame(MOVE_MAGIC, "move", m).map(|(bytes, _)| bytes)
}

/// What a connection's first frame header announces: a statement or a move, and the
/// length of its JSON.
pub fn opening_length(header: &[u8; FRAME_HEADER]) -> Result<(bool, usize), WireError> {
    let is_move = &header[..4] == MOVE_MAGIC;
    let n = frame_length(header, if is_move { MOVE_MAGIC } else { STATEMENT_MAGIC })?;
    if n == 0 || n > MAX_STATEMENT {
        return Err(WireError::Malformed(format!(
            "an opening message of {n} bytes (1 to {MAX_STATEMENT})"
        )));
    }
    Ok((is_move, n))
}

/// Reads a move's JSON.
pub fn parse_move(json: &[u8]) -> Result<Move, WireError> {
    serde_json::from_slice(json).map_err(|e| WireError::Malformed(e.to_string()))
}

/// A refusal's bytes: the header and the reason (cut to [`MAX_REFUSAL`] bytes).
pub fn refusal_bytes(reason: &str) -> Vec<u8> {
    let mut end = reason.len().min(MAX_REFUSAL);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    frame(REFUSAL_MAGIC, &reason.as_bytes()[..end])
}

/// The length of the refusal reason that follows `header` (at most [`MAX_REFUSAL`] is
/// read).
pub fn refusal_length(header: &[u8; FRAME_HEADER]) -> Result<usize, WireError> {
    Ok(frame_length(header, REFUSAL_MAGIC)?.min(MAX_REFUSAL))
}

/// Reads a statement's JSON.
pub fn parse_statement(json: &[u8]) -> Result<Statement, WireError> {
    serde_json::from_slice(json).map_err(|e| WireError::Malformed(e.to_string()))
}

/// What both parties mix into the protected session's handshake: the session and the
/// digests of the exact card and statement. A stranger's forged card, or a statement
/// changed on the way, makes the evaluator's binding differ from the garbler's, and the
/// handshake fails at its first message.
pub fn binding(session: u64, card_json: &[u8], statement_json: &[u8]) -> Vec<u8> {
    let mut b = b"transputation auto v2".to_vec();
    b.extend_from_slice(&session.to_be_bytes());
    b.extend_from_slice(&Sha256::digest(card_json));
    b.extend_from_slice(&Sha256::digest(statement_json));
    b
}
