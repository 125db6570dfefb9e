//! Authenticated, encrypted sessions over any [`Channel`]: [`SecureChannel`].
//!
//! A garbler that answers anyone lets a stranger evaluate the function on the garbler's
//! input with inputs of the stranger's choosing; semi-honest 2PC assumes authenticated
//! channels. [`SecureChannel`] is a decorator: it runs an authenticated key exchange over
//! the channel it wraps, then protects every byte in records, and is itself a [`Channel`],
//! so the 2PC code never knows. It wraps every transport the same way, `quic` included
//! (whose own TLS 1.3 stays as it is, unauthenticated, underneath: one mechanism for every
//! transport is simpler to review than two, at the cost of encrypting QUIC's bytes twice).
//!
//! # The handshake: Noise
//!
//! The key exchange is a [Noise](https://noiseprotocol.org/noise.html) handshake (`snow`),
//! in one of two patterns:
//!
//! - **Pre-shared key**: `Noise_NNpsk0_25519_AESGCM_SHA256`. Both parties hold the same
//!   32-byte secret (`--psk-file`, or the one-time key `transputation run` makes). `psk0`
//!   mixes the key in before the first message, so the first message's tag already proves
//!   the initiator knows it, and the responder refuses a stranger before sending any byte;
//!   the second message proves the responder knows it. The ephemeral X25519 exchange gives
//!   fresh keys per session and forward secrecy (a key stolen later does not decrypt a
//!   recorded session). This is the simplest to deploy: one file, copied to both parties.
//! - **Pinned static keys**: `Noise_KK_25519_AESGCM_SHA256`. Each party has a static key
//!   pair (`transputation keygen`) and knows the peer's public key in advance (`--key`,
//!   `--peer-key`). The first message mixes `es` and `ss`, so its tag proves the initiator
//!   holds the static key the responder pinned; the second mixes `ee` and `se`, proving the
//!   responder's. No secret is shared, and a public key may be published. KK rather than XX
//!   or IK because both sides already know each other's key: one round trip, nothing to
//!   look up, and the responder refuses on the first message.
//!
//! AES-GCM and SHA-256 in the handshake because this machine class has AES and SHA
//! instructions (ring uses them); the handshake's own cost is negligible. The records use
//! AEGIS-128X4 (see below).
//!
//! The initiator is the connecting party (the evaluator), the responder the listening one
//! (the garbler). The prologue, which both hash into the handshake, is the label
//! `transputation secure channel v1` followed by the initiator's hello, and a binding if
//! the session has one (see "Binding an agreed choice").
//!
//! ## Handshake wire format
//!
//! ```text
//! initiator → responder: hello (8) | len (2, big-endian) | Noise message 1 (payload: early data)
//! responder → initiator: hello (8) | len (2, big-endian) | Noise message 2 (empty payload)
//! hello = "TPSC" | version 5 | pattern (1: NNpsk0, 2: KK) | 0 | 0
//! ```
//!
//! ## Binding an agreed choice
//!
//! [`SecureChannel::client_bound`], [`SecureChannel::client_early_bound`] and
//! [`SecureChannel::server_bound`] mix a *binding* into the handshake: bytes that each
//! party computes on its own before the session and that must be equal on both sides. It
//! exists for `--transport auto`, where the parties agree on the transport over an
//! unauthenticated exchange before the session (the garbler's card, the evaluator's
//! statement of its choice): a stranger on the path can forge the card or alter the
//! statement, and each party then acts on what it saw. Each binds the whole agreement as
//! it saw it (the session, digests of the card and the statement): if anything of it was
//! changed on the way, the two bindings differ and the parties refuse each other here, by
//! the same check and at the same point as a wrong key. A session that starts thus runs on
//! the choice the evaluator stated on the garbler's own card.
//!
//! The binding goes into the prologue, after the label and the hello:
//!
//! ```text
//! prologue = label | hello                                    (no binding)
//! prologue = label | hello | "binding" | len (2, big-endian) | binding
//! ```
//!
//! Noise hashes the prologue into the handshake hash before the first message, and the
//! handshake fails if the two parties' prologues differ (the Noise specification, revision
//! 34, §6 "Prologue"): that hash is the associated data of every encrypted handshake
//! payload, so message 1's tag (under the pre-shared key, or `es` and `ss`) also covers
//! the binding: without the key, a stranger can make no message 1 that passes the check
//! of a responder under another binding than the initiator's. A responder whose binding differs from the initiator's fails message 1's check
//! and sends nothing, as for a wrong key; it cannot tell the two apart (both only change
//! what the tag covers), and its error names both. The binding never crosses the wire.
//! Without one the prologue is `label | hello` exactly, as before bindings existed, so
//! unbound sessions work with builds that know none; a bound and an unbound party refuse
//! each other (their prologues differ in length). The marker and the length keep the
//! encoding unambiguous: two prologues are equal only if the bindings are. A binding holds
//! at most [`MAX_BINDING`] bytes.
//!
//! ## Early data
//!
//! Both patterns encrypt the payload of message 1 (NNpsk0 under the pre-shared key, KK
//! under `es` and `ss`), so the initiator's first bytes can ride in it instead of waiting a
//! round trip for the handshake: [`SecureChannel::client_early`] returns an
//! [`EarlyClient`](early::EarlyClient), which keeps what is sent before the first `flush` or `recv` (up to
//! [`MAX_EARLY_DATA`] bytes) and sends it as message 1's payload; the responder delivers it
//! as the first bytes its [`SecureChannel`] receives. The responder can send records right
//! after message 2 (its keys are complete then), so a request–answer exchange costs one
//! round trip, handshake included.
//!
//! Early data is weaker than records in two ways, as in TLS 1.3's 0-RTT data: it has no
//! forward secrecy (a pre-shared key or the responder's static key stolen later decrypts
//! it, where records also need the ephemeral keys), and an attacker can replay message 1
//! to a responder, which accepts it again and answers (though the attacker cannot read the
//! answer or any record, which need the initiator's ephemeral key). So only bytes that are
//! not secret belong there, and a responder must expect its first exchange to be replayed:
//! the 2PC session sends its header and the base-OT point, which it would send in the clear
//! without protection anyway; a replay can make a garbler answer and then fail waiting for
//! the next message (a denial of service, not a disclosure).
//!
//! The responder checks the hello (a peer without protection, one of another version or
//! another pattern is told apart in the error) and Noise message 1, and sends nothing at
//! all if either fails: a peer that cannot prove the expected key gets no byte from it.
//! A party without protection tells the mismatch from the other side: a peer's first
//! bytes that are a hello ([`is_protected_hello`]), or a peer that closes the connection
//! before sending anything (see `transputation-2pc`'s session header).
//! Handshake messages longer than [`MAX_EARLY_DATA`] + 64 bytes are refused unread.
//! Version 5 carries early data in message 1; version 4 sealed records with AEGIS-128X4
//! as 5 does, and allowed no early data; version 3 used AEGIS-128L, version 2
//! AES-128-GCM, and version 1 also allowed only 256 KiB records. They are told apart in the
//! hello rather than by a refused record.
//!
//! # The records
//!
//! After the handshake, the Noise split gives one 32-byte key per direction, from which
//! an AEGIS-128X4 key is derived to seal records with the `aegis` crate (not through
//! `snow`'s transport mode, whose messages stop at 65,535 bytes and cost a copy each; `snow`'s
//! `risky-raw-split` feature hands out the split for this): see `record.rs` for the format
//! and the key derivation.
//! In short: an implicit per-direction record counter is the nonce, so replayed, reordered
//! or dropped records fail; each record's header (kind, length) is sealed on its own, so a
//! damaged length is caught before the body is read; a `close` record authenticates the
//! end of the stream, so a stream cut short is an error, not a short read. Records hold up
//! to 1 MiB; small sends are copied into the send buffer and encrypted in place there
//! when the record is full or flushed, while a record that a large send fills on its own is
//! encrypted straight from the caller's bytes into the send buffer (one pass, no copy
//! first); a record that fits in what the caller asked for is read and decrypted in place
//! in the caller's buffer. To make that the common case, a large `send` (at least
//! [`ALIGN_SENDS`] bytes, like a batch of garbled tables) starts a new record and ends its
//! last one: a peer receiving the same message (a length, then the bytes, as
//! [`crate::Framed`] does) then decrypts every record of it in place, without a copy.
//!
//! Records are sealed on the caller's thread, as they are handed over. A second thread
//! that sealed large records beside the caller's work was measured and dropped: in a 2PC
//! session on two cores both parties keep both cores busy, so there is no idle core to
//! move the encryption to, and the hand-over cost thread switches and, on every flush, a
//! wait for the other thread (docs/BENCHMARKS.md, "Protected sessions").
//!
//! On the MinCut-size circuit over loopback `tcp` (44 MB), protection costs about the CPU
//! time of AEGIS-128X4 over every byte on both sides; docs/BENCHMARKS.md has the
//! measurements.
//!
//! Any failure is final: a record that fails its check gives [`Error::Integrity`] naming
//! it, and the channel answers [`Error::Poisoned`] from then on.
//!
//! # Lanes
//!
//! [`Channel::open_lanes`] of a protected channel opens the lanes of the channel below
//! (`quic`'s streams) and protects each with records as above, under keys of its own:
//! lane `i`'s key of a direction is derived from that direction's half of the split and
//! `i` (`record.rs`'s `lane_key`), its record counters start at 0. A lane needs no
//! handshake (the keys already authenticate the peer); a record moved between lanes, or
//! between a lane and the first channel, fails its tag as a reordered one does.
//!
//! # Counters and keys
//!
//! [`Channel::stats`] counts the bytes of the channel underneath after the handshake:
//! record headers and tags included, the handshake not. Keys are zeroed when dropped
//! ([`keys`]; the split's two keys once the lanes' keys are derived from them, or with
//! the channel if it opens none).
//! Copies this crate cannot reach, which their libraries do not wipe: the record key in the
//! `aegis` crate's cipher value (two per record, on the stack) and the AEGIS state libaegis
//! keeps on the stack while it seals or opens a record; and what `snow` keeps in its
//! handshake state (the pre-shared or static private key, the chaining key) until the
//! state is dropped after the handshake.

pub mod early;
pub mod keys;
mod record;

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use snow::HandshakeState;
use zeroize::Zeroizing;

use crate::{ByteCounts, Channel, Error, Result, SocketBuffers};
use keys::{Psk, PublicKey, StaticKeypair};
pub use record::MAX_RECORD;

/// A `send` of at least this many bytes gets records of its own (see the module docs).
pub const ALIGN_SENDS: usize = 16 << 10;
use record::{lane_key, Kind, Opener, RecordError, Sealer, SEALED_HEADER, TAG};

/// Capacity of a record buffer.
const RECORD_BUFFER: usize = SEALED_HEADER + MAX_RECORD + TAG;

const PSK_PATTERN: &str = "Noise_NNpsk0_25519_AESGCM_SHA256";
const KK_PATTERN: &str = "Noise_KK_25519_AESGCM_SHA256";
const MAGIC: &[u8; 4] = b"TPSC";
const VERSION: u8 = 5;
const LABEL: &[u8] = b"transputation secure channel v1";
/// Precedes a binding's length in the prologue (see "Binding an agreed choice").
const BINDING_MARKER: &[u8] = b"binding";
/// Bytes of a binding (see "Binding an agreed choice" in the module docs) at most.
pub const MAX_BINDING: usize = 1024;
/// Bytes of early data an [`EarlyClient`](early::EarlyClient) sends in the handshake's first message at most.
pub const MAX_EARLY_DATA: usize = 1024;
/// A handshake message: an ephemeral key (32), early data and its tag (16), with room.
const MAX_HANDSHAKE_MESSAGE: usize = MAX_EARLY_DATA + 64;
/// The AEAD tag of a Noise message's payload.
const NOISE_TAG: usize = 16;

/// What a party proves itself with, and what it expects of its peer.
#[derive(Debug)]
pub enum Credentials {
    /// A key both parties hold (Noise NNpsk0).
    Psk(Psk),
    /// This party's static key pair and the peer's pinned public key (Noise KK).
    Pinned {
        /// This party's key pair.
        own: StaticKeypair,
        /// The public key the peer must prove it holds.
        peer: PublicKey,
    },
}

impl Credentials {
    /// The protection's name in reports: `noise-psk` or `noise-kk`.
    pub fn protection(&self) -> &'static str {
        match self {
            Credentials::Psk(_) => "noise-psk",
            Credentials::Pinned { .. } => "noise-kk",
        }
    }

    fn pattern_id(&self) -> u8 {
        match self {
            Credentials::Psk(_) => 1,
            Credentials::Pinned { .. } => 2,
        }
    }

    fn hello(&self) -> [u8; 8] {
        let m = MAGIC;
        [m[0], m[1], m[2], m[3], VERSION, self.pattern_id(), 0, 0]
    }

    /// The Noise prologue: `LABEL || hello`, and with a binding, `BINDING_MARKER ||
    /// len (2, big-endian) || binding` after it (see "Binding an agreed choice").
    fn prologue(&self, binding: Option<&[u8]>) -> Result<Vec<u8>> {
        let mut prologue = LABEL.to_vec();
        prologue.extend_from_slice(&self.hello());
        if let Some(binding) = binding {
            if binding.len() > MAX_BINDING {
                return Err(Error::Handshake {
                    what: format!(
                        "setting up the handshake: the binding is {} bytes (at most \
                         {MAX_BINDING})",
                        binding.len()
                    ),
                });
            }
            let len = u16::try_from(binding.len()).expect("MAX_BINDING fits in 2 bytes");
            prologue.extend_from_slice(BINDING_MARKER);
            prologue.extend_from_slice(&len.to_be_bytes());
            prologue.extend_from_slice(binding);
        }
        Ok(prologue)
    }

    /// The handshake, set up and not yet run, with `binding` mixed in if there is one.
    fn prepare(&self, initiator: bool, binding: Option<&[u8]>) -> Result<Prepared> {
        let internal = |e: snow::Error| Error::Handshake {
            what: format!("setting up the handshake: {e}"),
        };
        let prologue = self.prologue(binding)?;
        let pattern = match self {
            Credentials::Psk(_) => PSK_PATTERN,
            Credentials::Pinned { .. } => KK_PATTERN,
        };
        let params = pattern.parse().expect("a valid Noise pattern");
        let b = snow::Builder::new(params)
            .prologue(&prologue)
            .map_err(internal)?;
        let b = match self {
            Credentials::Psk(psk) => b.psk(0, psk.bytes()).map_err(internal)?,
            Credentials::Pinned { own, peer } => b
                .local_private_key(own.private_bytes())
                .map_err(internal)?
                .remote_public_key(peer.as_bytes())
                .map_err(internal)?,
        };
        let hs = if initiator {
            b.build_initiator()
        } else {
            b.build_responder()
        }
        .map_err(internal)?;
        Ok(Prepared {
            hs,
            hello: self.hello(),
            protection: self.protection(),
            bound: binding.is_some(),
        })
    }
}

/// Two 32-byte keys: a channel's sending and receiving ones.
type KeyPair = (Zeroizing<[u8; 32]>, Zeroizing<[u8; 32]>);

/// A handshake set up and not yet run: its state, and what its messages and errors need.
struct Prepared {
    hs: HandshakeState,
    /// This side's hello.
    hello: [u8; 8],
    protection: &'static str,
    /// Whether a binding is mixed in: a refusal may then also mean that the bindings differ.
    bound: bool,
}

/// A channel whose bytes are authenticated and encrypted; see the module docs.
pub struct SecureChannel<C: Channel> {
    inner: C,
    sealer: Sealer,
    opener: Opener,
    protection: &'static str,
    /// The record being filled ([`RECORD_BUFFER`] bytes, allocated once): room for the
    /// sealed header, then `pending` bytes of plaintext, then room for the rest.
    out: Vec<u8>,
    /// Plaintext bytes buffered in `out`.
    pending: usize,
    /// The plaintext of the last record read, `in_pos..` not yet delivered.
    inbuf: Vec<u8>,
    in_pos: usize,
    /// The peer's authenticated close was read.
    peer_closed: bool,
    /// Our close record was sent.
    closed: bool,
    poisoned: bool,
    /// The inner channel's counts when the handshake ended.
    base: ByteCounts,
    /// The handshake's time: the initiator's from sending its first message until it read
    /// the answer, the responder's from the peer's hello until its answer was sent (not
    /// the wait for the peer to start).
    handshake_time: Duration,
    /// The split's keys (sending, receiving) that its lanes' keys come from, until the
    /// lanes are opened; `None` for a lane, or after.
    lane_secrets: Option<KeyPair>,
}

impl<C: Channel> std::fmt::Debug for SecureChannel<C> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecureChannel")
            .field("protection", &self.protection)
            .field("poisoned", &self.poisoned)
            .finish_non_exhaustive()
    }
}

impl<C: Channel> SecureChannel<C> {
    /// Runs the handshake as the connecting party (initiator) over `inner`. To send the
    /// first bytes inside the handshake, see [`SecureChannel::client_early`].
    pub fn client(inner: C, creds: &Credentials) -> Result<Self> {
        Self::initiate(inner, creds.prepare(true, None)?, &[])
    }

    /// As [`SecureChannel::client`], with `binding` (at most [`MAX_BINDING`] bytes) mixed
    /// into the handshake: the responder must be given the same bytes, or it refuses this
    /// side as it refuses a wrong key (see "Binding an agreed choice" in the module docs).
    pub fn client_bound(inner: C, creds: &Credentials, binding: &[u8]) -> Result<Self> {
        Self::initiate(inner, creds.prepare(true, Some(binding))?, &[])
    }

    /// The initiator's handshake: message 1 with `early` as its payload, then the answer.
    fn initiate(mut inner: C, prepared: Prepared, early: &[u8]) -> Result<Self> {
        let Prepared {
            mut hs,
            hello: own_hello,
            protection,
            bound,
        } = prepared;
        let started = Instant::now();
        let mut msg = [0u8; MAX_HANDSHAKE_MESSAGE];
        let n = hs
            .write_message(early, &mut msg)
            .map_err(|e| Error::Handshake {
                what: format!("writing the first message: {e}"),
            })?;
        send_handshake(&mut inner, &own_hello, &msg[..n])?;
        inner.flush().map_err(during_handshake)?;

        let mut hello = [0u8; 8];
        inner.recv(&mut hello).map_err(|e| match e {
            Error::Closed { .. } => Error::Handshake {
                what: refused_without_answer(bound).into(),
            },
            e => during_handshake(e),
        })?;
        check_hello(&hello, own_hello[5], "answer")?;
        let m2 = recv_handshake(&mut inner)?;
        if !read_peer_message(&mut hs, &m2, bound)?.is_empty() {
            return Err(Error::Handshake {
                what: "the peer's answer carries data where the protocol has none".into(),
            });
        }
        let early = if early.is_empty() {
            0
        } else {
            early.len() + NOISE_TAG
        };
        let counted = ByteCounts {
            sent: early as u64,
            received: 0,
        };
        Self::finish(inner, hs, protection, true, counted, started)
    }

    /// Runs the handshake as the listening party (responder) over `inner`. A peer that
    /// cannot prove the expected key gets no byte: the error is returned, `inner` dropped.
    /// The peer's early data, if any, are the first bytes the channel receives.
    pub fn server(inner: C, creds: &Credentials) -> Result<Self> {
        Self::respond(inner, creds, None)
    }

    /// As [`SecureChannel::server`], with `binding` (at most [`MAX_BINDING`] bytes) mixed
    /// into the handshake: a peer that was not given the same bytes gets no byte, as one
    /// with a wrong key (see "Binding an agreed choice" in the module docs).
    pub fn server_bound(inner: C, creds: &Credentials, binding: &[u8]) -> Result<Self> {
        Self::respond(inner, creds, Some(binding))
    }

    /// The responder's handshake: the peer's hello and message 1, then the answer.
    fn respond(mut inner: C, creds: &Credentials, binding: Option<&[u8]>) -> Result<Self> {
        let Prepared {
            mut hs,
            hello: own_hello,
            protection,
            bound,
        } = creds.prepare(false, binding)?;
        let mut hello = [0u8; 8];
        inner.recv(&mut hello).map_err(during_handshake)?;
        let started = Instant::now();
        check_hello(&hello, creds.pattern_id(), "hello")?;
        let m1 = recv_handshake(&mut inner)?;
        let early = read_peer_message(&mut hs, &m1, bound)?;
        let mut msg = [0u8; MAX_HANDSHAKE_MESSAGE];
        let n = hs
            .write_message(&[], &mut msg)
            .map_err(|e| Error::Handshake {
                what: format!("writing the second message: {e}"),
            })?;
        send_handshake(&mut inner, &own_hello, &msg[..n])?;
        inner.flush().map_err(during_handshake)?;
        let counted = ByteCounts {
            sent: 0,
            received: if early.is_empty() {
                0
            } else {
                (early.len() + NOISE_TAG) as u64
            },
        };
        let mut channel = Self::finish(inner, hs, protection, false, counted, started)?;
        channel.inbuf = early;
        Ok(channel)
    }

    /// The channel after a finished handshake. `counted`: the bytes of the handshake that
    /// [`Channel::stats`] counts, early data and its tag (the rest of the handshake is not
    /// counted).
    fn finish(
        inner: C,
        mut hs: HandshakeState,
        protection: &'static str,
        initiator: bool,
        counted: ByteCounts,
        started: Instant,
    ) -> Result<Self> {
        if !hs.is_handshake_finished() {
            return Err(Error::Handshake {
                what: "the handshake did not finish".into(),
            });
        }
        let (i2r, r2i) = hs.dangerously_get_raw_split();
        let (i2r, r2i) = (Zeroizing::new(i2r), Zeroizing::new(r2i));
        let (send, recv) = if initiator { (i2r, r2i) } else { (r2i, i2r) };
        let mut channel = Self::with_keys(inner, (&send, &recv), protection, counted);
        channel.handshake_time = started.elapsed();
        channel.lane_secrets = Some((send, recv));
        Ok(channel)
    }

    /// The channel over `inner` whose records are sealed under `keys` (sending,
    /// receiving), `counted` of `inner`'s bytes so far counted as its own.
    fn with_keys(
        inner: C,
        (send, recv): (&Zeroizing<[u8; 32]>, &Zeroizing<[u8; 32]>),
        protection: &'static str,
        counted: ByteCounts,
    ) -> Self {
        // Mapped lazily (`vec![0; n]`): a session of small records touches a few of its 256
        // pages. Writing all of them here cost a small circuit's session ~1 ms (`aes128`
        // protected: handshake 0.4 -> 1.5 ms, and the evaluator's copy delayed its first
        // message), against ~0.3 ms of faults in the first large records of a large one.
        let out = vec![0u8; RECORD_BUFFER];
        let now = inner.stats();
        SecureChannel {
            base: ByteCounts {
                sent: now.sent.saturating_sub(counted.sent),
                received: now.received.saturating_sub(counted.received),
            },
            handshake_time: Duration::ZERO,
            lane_secrets: None,
            inner,
            sealer: Sealer::new(send),
            opener: Opener::new(recv),
            protection,
            out,
            pending: 0,
            inbuf: Vec::new(),
            in_pos: 0,
            peer_closed: false,
            closed: false,
            poisoned: false,
        }
    }

    /// `noise-psk` or `noise-kk`.
    pub fn protection(&self) -> &'static str {
        self.protection
    }

    /// The handshake's time: the initiator's from sending its first message until it read
    /// the answer (a round trip), the responder's from the peer's hello until it sent its
    /// answer (its own work: not the wait for the peer to begin).
    pub fn handshake_time(&self) -> Duration {
        self.handshake_time
    }

    /// Seals the `pending` bytes buffered in `out` as one record of `kind`, hands it to the
    /// channel below in one piece (header, body and tag contiguous: one write for the
    /// channel) and empties the buffer for the next record.
    fn seal_and_send(&mut self, kind: Kind) -> Result<()> {
        let n = self
            .sealer
            .seal(kind, &mut self.out, self.pending)
            .map_err(|e| integrity(e, "sending"))?;
        self.pending = 0;
        self.inner.send(&self.out[..n])
    }

    /// Seals `plaintext` (at most [`MAX_RECORD`] bytes, nothing buffered) as one data
    /// record encrypted straight from the caller's bytes, and hands it on.
    fn seal_from_and_send(&mut self, plaintext: &[u8]) -> Result<()> {
        debug_assert_eq!(self.pending, 0);
        let n = self
            .sealer
            .seal_from(Kind::Data, plaintext, &mut self.out)
            .map_err(|e| integrity(e, "sending"))?;
        self.inner.send(&self.out[..n])
    }

    /// Seals what is buffered and hands it to the channel below.
    fn seal_all(&mut self) -> Result<()> {
        if self.pending > 0 {
            self.seal_and_send(Kind::Data)?;
        }
        Ok(())
    }

    fn guard<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.poisoned {
            return Err(Error::Poisoned);
        }
        let r = f(self);
        if r.is_err() {
            self.poisoned = true;
        }
        r
    }

    /// Reads the next record; its plaintext goes into `direct` if it fits there (the
    /// number of bytes is returned), else into `inbuf` (0 is returned).
    fn read_record(&mut self, direct: &mut [u8]) -> Result<usize> {
        let mut sealed = [0u8; SEALED_HEADER];
        self.inner.recv(&mut sealed).map_err(truncated)?;
        let (kind, len) = self
            .opener
            .open_header(&sealed)
            .map_err(|e| integrity(e, "receiving"))?;
        let mut tag = [0u8; TAG];
        if kind == Kind::Data && len > 0 && len <= direct.len() {
            let body = &mut direct[..len];
            self.inner.recv(body).map_err(truncated)?;
            self.inner.recv(&mut tag).map_err(truncated)?;
            self.opener
                .open_body(kind, body, &tag)
                .map_err(|e| integrity(e, "receiving"))?;
            return Ok(len);
        }
        self.inbuf.clear();
        self.inbuf.resize(len, 0);
        self.in_pos = 0;
        self.inner.recv(&mut self.inbuf).map_err(truncated)?;
        self.inner.recv(&mut tag).map_err(truncated)?;
        self.opener
            .open_body(kind, &mut self.inbuf, &tag)
            .map_err(|e| integrity(e, "receiving"))?;
        if kind == Kind::Close {
            self.peer_closed = true;
        }
        Ok(0)
    }
}

impl<C: Channel> Channel for SecureChannel<C> {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.guard(|s| {
            let align = bytes.len() >= ALIGN_SENDS;
            if align && s.pending > 0 {
                s.seal_and_send(Kind::Data)?;
            }
            let mut rest = bytes;
            while !rest.is_empty() {
                let room = MAX_RECORD - s.pending;
                let (now, later) = rest.split_at(room.min(rest.len()));
                rest = later;
                let ends_record = now.len() == room || (align && rest.is_empty());
                if ends_record && s.pending == 0 {
                    // A whole record from the caller's bytes: encrypted as it is copied.
                    s.seal_from_and_send(now)?;
                    continue;
                }
                let at = SEALED_HEADER + s.pending;
                s.out[at..at + now.len()].copy_from_slice(now);
                s.pending += now.len();
                if ends_record {
                    s.seal_and_send(Kind::Data)?;
                }
            }
            Ok(())
        })
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.guard(|s| {
            s.seal_all()?;
            let mut filled = 0;
            while filled < buf.len() {
                let have = s.inbuf.len() - s.in_pos;
                if have > 0 {
                    let n = have.min(buf.len() - filled);
                    buf[filled..filled + n].copy_from_slice(&s.inbuf[s.in_pos..s.in_pos + n]);
                    s.in_pos += n;
                    filled += n;
                    continue;
                }
                if s.peer_closed {
                    // The end of the stream, authenticated: the Closed of the contract.
                    return Err(Error::Closed {
                        during: "receiving",
                    });
                }
                filled += s.read_record(&mut buf[filled..])?;
            }
            Ok(())
        })
    }

    fn flush(&mut self) -> Result<()> {
        self.guard(|s| {
            s.seal_all()?;
            s.inner.flush()
        })
    }

    fn close(&mut self) -> Result<()> {
        if self.closed && !self.poisoned {
            return Ok(());
        }
        self.guard(|s| {
            s.inner.closing();
            s.seal_all()?;
            s.seal_and_send(Kind::Close)?;
            s.closed = true;
            s.inner.close()
        })
    }

    fn stats(&self) -> ByteCounts {
        let now = self.inner.stats();
        ByteCounts {
            sent: now.sent - self.base.sent,
            received: now.received - self.base.received,
        }
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        self.inner.socket_buffers()
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        self.inner.peer_addr()
    }

    fn max_lanes(&self) -> usize {
        self.lane_secrets
            .as_ref()
            .map_or(0, |_| self.inner.max_lanes())
    }

    /// The lanes of the channel below, each under keys of its own (`record.rs`, `lane_key`).
    fn open_lanes(&mut self, n: usize) -> Result<Vec<Box<dyn Channel>>> {
        if n == 0 {
            return Ok(Vec::new());
        }
        self.guard(|s| {
            let Some((send, recv)) = s.lane_secrets.take() else {
                return Err(Error::Mismatch {
                    what: format!("{n} lanes asked of a protected channel that opens none"),
                });
            };
            s.seal_all()?; // what is buffered goes first (the channel below flushes it)
            let (lanes, protection) = (s.inner.open_lanes(n)?, s.protection);
            Ok(lanes
                .into_iter()
                .enumerate()
                .map(|(i, lane)| {
                    let i = u32::try_from(i).expect("lanes are few");
                    let keys = (&lane_key(&send, i), &lane_key(&recv, i));
                    let lane = SecureChannel::<Box<dyn Channel>>::with_keys(
                        lane,
                        keys,
                        protection,
                        ByteCounts::default(),
                    );
                    Box::new(lane) as Box<dyn Channel>
                })
                .collect())
        })
    }
}

impl<C: Channel> Drop for SecureChannel<C> {
    fn drop(&mut self) {
        // As the contract asks of a dropped channel: best-effort flush of what is buffered.
        // No close record: a peer reading on learns that the stream was cut short.
        if !self.poisoned && !self.closed {
            let _ = self.seal_all();
        }
    }
}

fn send_handshake<C: Channel>(inner: &mut C, hello: &[u8; 8], msg: &[u8]) -> Result<()> {
    let len = u16::try_from(msg.len()).expect("handshake messages are short");
    inner.send(hello).map_err(during_handshake)?;
    inner.send(&len.to_be_bytes()).map_err(during_handshake)?;
    inner.send(msg).map_err(during_handshake)
}

fn recv_handshake<C: Channel>(inner: &mut C) -> Result<Vec<u8>> {
    let mut len = [0u8; 2];
    inner.recv(&mut len).map_err(during_handshake)?;
    let len = usize::from(u16::from_be_bytes(len));
    if len > MAX_HANDSHAKE_MESSAGE {
        return Err(Error::Handshake {
            what: format!(
                "the peer announced a handshake message of {len} bytes (at most \
                 {MAX_HANDSHAKE_MESSAGE})"
            ),
        });
    }
    let mut msg = vec![0u8; len];
    inner.recv(&mut msg).map_err(during_handshake)?;
    Ok(msg)
}

/// Reads the peer's Noise message into `hs` and returns its payload; a failure means the
/// peer could not prove the key this side expects, or (the handshake cannot tell which)
/// that its binding differs from this side's (`bound`: whether this side has one).
fn read_peer_message(hs: &mut HandshakeState, msg: &[u8], bound: bool) -> Result<Vec<u8>> {
    let mut payload = vec![0u8; MAX_HANDSHAKE_MESSAGE];
    let n = hs.read_message(msg, &mut payload).map_err(|_| {
        let what = if bound {
            "the peer did not prove the expected key, or did not bind the same choice to the \
             session: either the key differs (another pre-shared key, or another static key \
             than --peer-key names) or the peer's binding differs (the transport choice agreed \
             before the session: another choice reached the peer, or it bound none); the \
             handshake cannot tell which"
        } else {
            "the peer did not prove the expected key (another pre-shared key, or another static \
             key than --peer-key names), or it bound a choice to the session (the transport \
             choice of --transport auto) where this side bound none"
        };
        Error::Handshake { what: what.into() }
    })?;
    payload.truncate(n);
    Ok(payload)
}

/// What the initiator knows when the responder closes the connection instead of answering
/// message 1: only the possible reasons (a refusing responder sends nothing, not why).
fn refused_without_answer(bound: bool) -> &'static str {
    if bound {
        "the peer closed the connection without answering: it refused our key (another \
         pre-shared key, or another pinned key than ours) or the choice this side bound to the \
         session (the peer bound another transport choice, or none), or expects an \
         unprotected session (--insecure)"
    } else {
        "the peer closed the connection without answering: it refused our key (another \
         pre-shared key, or another pinned key than ours), or expects an unprotected session \
         (--insecure), or bound a transport choice to the session (--transport auto) where \
         this side bound none"
    }
}

/// Whether `first_bytes`, the first bytes a peer sent, start with the hello of a protected
/// session: how a party without protection tells that its peer protects its session.
pub fn is_protected_hello(first_bytes: &[u8]) -> bool {
    first_bytes.starts_with(MAGIC)
}

/// Checks the peer's hello against this side's pattern (1: NNpsk0, 2: KK).
fn check_hello(hello: &[u8; 8], pattern: u8, what: &str) -> Result<()> {
    let fail = |what: String| Err(Error::Handshake { what });
    if hello[..6] == [0; 6] {
        // A small big-endian length: a framed message, as a party without protection
        // opens its session with (its session header).
        return fail(format!(
            "the peer runs without protection (--insecure) but this side protects its \
             session (--psk-file or --key): the peer's {what} is a plain message, not a \
             protected-session hello; give both parties the same protection"
        ));
    }
    if &hello[..4] != MAGIC {
        return fail(format!(
            "the peer's {what} is no protected-session hello: it does not protect its \
             session (does it run with --insecure?) or is no Transputation party"
        ));
    }
    if hello[4] != VERSION {
        return fail(format!(
            "the peer speaks protected-session version {}, this side {VERSION}",
            hello[4]
        ));
    }
    let name = |id: u8| match id {
        1 => "a pre-shared key (--psk-file)".to_string(),
        2 => "pinned static keys (--key, --peer-key)".to_string(),
        x => format!("unknown method {x}"),
    };
    if hello[5] != pattern {
        return fail(format!(
            "the peer authenticates with {}, this side with {}",
            name(hello[5]),
            name(pattern)
        ));
    }
    if hello[6..] != [0, 0] {
        return fail("the peer's hello has nonzero reserved bytes".into());
    }
    Ok(())
}

/// An error of the channel below during the handshake.
fn during_handshake(e: Error) -> Error {
    match e {
        Error::Closed { .. } => Error::Handshake {
            what: "the peer closed the connection during the handshake".into(),
        },
        e => e,
    }
}

/// An error of the channel below while reading a record: an end of the stream is a
/// truncation, since the authenticated close did not come first.
fn truncated(e: Error) -> Error {
    match e {
        Error::Closed { .. } => Error::Integrity {
            what: "the stream ended without the peer's authenticated close: it was cut short, or \
                   the peer aborted the session"
                .into(),
        },
        e => e,
    }
}

fn integrity(e: RecordError, during: &str) -> Error {
    let what = match e {
        RecordError::Header => {
            "a record header failed its check (altered, replayed, reordered or dropped data)"
                .to_string()
        }
        RecordError::Body => {
            "a record's data failed its check (altered, replayed, reordered or dropped data)"
                .to_string()
        }
        RecordError::Format(f) => format!("the peer broke the record format: {f}"),
        RecordError::Exhausted => format!("2^64 records while {during}: the session must end"),
    };
    Error::Integrity { what }
}

#[cfg(test)]
mod binding_tests;
#[cfg(test)]
mod tests;
