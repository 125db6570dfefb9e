//! `transputation keygen`, and the protection of the `garbler`, `evaluator` and `run`
//! sessions: the key flags, and wrapping the connected channel in a
//! [`SecureChannel`] before the 2PC code sees it (see `transputation_transport::secure`).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use transputation_transport::secure::keys::{Psk, PublicKey, StaticKeypair};
use transputation_transport::{Channel, Credentials, EarlyClient, Listener, SecureChannel};

#[derive(Args, Debug)]
pub struct KeygenArgs {
    /// Where to write the private key (mode 0600, never overwritten); the public key goes
    /// to FILE.pub and to standard output, as 64 hex digits.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Write a random pre-shared key for --psk-file instead of a key pair.
    #[arg(long)]
    psk: bool,
}

pub fn keygen(args: KeygenArgs) -> Result<()> {
    if args.psk {
        Psk::generate()?.write_file(&args.out)?;
        eprintln!(
            "wrote a pre-shared key to {} (mode 0600); give a copy to the peer over a safe \
             path, and pass it to both parties with --psk-file",
            args.out.display()
        );
        return Ok(());
    }
    let kp = StaticKeypair::generate()?;
    let pub_path = kp.write_files(&args.out)?;
    outln!("{}", kp.public())?;
    eprintln!(
        "wrote the private key to {} (mode 0600) and the public key to {}; pass --key {} \
         here, and give the public key to the peer for its --peer-key",
        args.out.display(),
        pub_path.display(),
        args.out.display()
    );
    Ok(())
}

/// How a party proves itself and checks its peer.
#[derive(Args, Debug, Clone)]
pub struct ProtectionArgs {
    /// A pre-shared key file (`keygen --psk`, mode 0600); both parties pass the same key
    /// (Noise NNpsk0).
    #[arg(long, value_name = "FILE", conflicts_with_all = ["peer_key", "key", "insecure"])]
    psk_file: Option<PathBuf>,
    /// The peer's public key, as 64 hex digits or the FILE.pub `keygen` wrote: only the
    /// holder of its private key is accepted (Noise KK; needs --key).
    #[arg(
        long,
        value_name = "HEX|FILE",
        requires = "key",
        conflicts_with = "insecure"
    )]
    peer_key: Option<String>,
    /// This party's private key file from `keygen` (mode 0600), with --peer-key.
    #[arg(
        long,
        value_name = "FILE",
        requires = "peer_key",
        conflicts_with = "insecure"
    )]
    key: Option<PathBuf>,
    /// No authentication and no encryption: anyone who can connect takes part and anyone on
    /// the path reads along (for measuring the cost of protection).
    #[arg(long)]
    insecure: bool,
}

impl ProtectionArgs {
    /// The credentials named, `None` with --insecure; reads and checks the key files.
    pub fn credentials(&self) -> Result<Option<Credentials>> {
        if self.insecure {
            return Ok(None);
        }
        if let Some(p) = &self.psk_file {
            return Ok(Some(Credentials::Psk(Psk::read_file(p)?)));
        }
        if let (Some(key), Some(peer)) = (&self.key, &self.peer_key) {
            return Ok(Some(Credentials::Pinned {
                own: StaticKeypair::read_file(key)?,
                peer: PublicKey::from_arg(peer)?,
            }));
        }
        bail!(
            "no key to authenticate the peer with: pass --psk-file FILE (the same pre-shared \
             key on both sides; make one with `transputation keygen --psk --out FILE`), or \
             --key FILE and --peer-key HEX|FILE (make each party's key pair with \
             `transputation keygen --out FILE`), or --insecure to run without \
             authentication or encryption"
        )
    }
}

/// What protects a session, for the report.
#[derive(Debug, Clone, Copy)]
pub struct Protection {
    /// `none`, `noise-psk` or `noise-kk`.
    pub name: &'static str,
    /// Time of the handshake, milliseconds (0 without protection).
    pub handshake_ms: f64,
}

impl Protection {
    pub(crate) const NONE: Protection = Protection {
        name: "none",
        handshake_ms: 0.0,
    };
}

/// The garbler's protected channel over `ch`, an accepted connection: runs the handshake,
/// which the peer must pass by proving the expected key.
pub fn server(
    ch: Box<dyn Channel>,
    creds: &Credentials,
) -> transputation_transport::Result<(Box<dyn Channel>, Protection)> {
    let ch = SecureChannel::server(ch, creds)?;
    // From the evaluator's hello on: not the wait for it to begin, which, as it prepares
    // while it connects, can be its whole preparation.
    let p = Protection {
        name: creds.protection(),
        handshake_ms: ch.handshake_time().as_secs_f64() * 1e3,
    };
    Ok((Box::new(ch), p))
}

/// Accepts peers until one proves the expected key, for at most `wait` in all (the first
/// peer may have yet to start: `wait` is not the I/O timeout), or until accepting fails
/// otherwise; a peer that does not prove it is logged as refused and gets no byte.
pub fn accept(
    listener: &mut Listener,
    creds: Option<&Credentials>,
    wait: Duration,
) -> Result<(Box<dyn Channel>, Protection)> {
    let start = Instant::now();
    loop {
        let ch = match next_connection(listener, start, wait) {
            Ok(ch) => ch,
            Err(e @ transputation_transport::Error::Timeout { .. }) => {
                return Err(e).with_context(|| {
                    format!(
                        "no evaluator connected to {} within {:.0} s (--accept-timeout)",
                        listener.local_addr(),
                        start.elapsed().as_secs_f64()
                    )
                })
            }
            Err(e) => {
                return Err(e).with_context(|| {
                    format!("waiting for the evaluator on {}", listener.local_addr())
                })
            }
        };
        let Some(creds) = creds else {
            return Ok((ch, Protection::NONE));
        };
        // Not every transport knows its peer's address (udt, quic): then none is named.
        let peer = ch
            .peer_addr()
            .map_or_else(String::new, |a| format!(" at {a}"));
        match server(ch, creds) {
            Ok(protected) => return Ok(protected),
            Err(e) => eprintln!("refused a peer{peer}: {e}; waiting for the next"),
        }
    }
}

/// The next connection to `listener` while less than `wait` has passed since `start`; the
/// listener's timeout error once it has. A peer that made contact and then stalled while
/// the transport set up its channel (mtcp's other connections, quic's handshake) does not
/// end the wait: the next one is waited for, within what is left.
pub(crate) fn next_connection(
    listener: &mut Listener,
    start: Instant,
    wait: Duration,
) -> transputation_transport::Result<Box<dyn Channel>> {
    loop {
        listener.set_accept_timeout(Some(wait.saturating_sub(start.elapsed())));
        match listener.accept() {
            Err(transputation_transport::Error::Timeout { .. }) if start.elapsed() < wait => {}
            accepted => return accepted,
        }
    }
}

/// The evaluator's protected channel over `ch`: its handshake runs with the session's
/// first exchange, the session's first messages riding in its first message as early data
/// ([`SecureChannel::client_early`]), so its time (`handshake_ms`, from sending that
/// message until the answer was read) is part of the session's time, not before it.
/// Under `--transport auto`, `binding` is the agreement's (`transputation_auto::wire::binding`),
/// mixed into the handshake so that it fails unless the garbler made that agreement.
pub fn client(
    ch: Box<dyn Channel>,
    creds: &Credentials,
    binding: Option<&[u8]>,
) -> Result<EarlyClient<Box<dyn Channel>>> {
    match binding {
        Some(b) => SecureChannel::client_early_bound(ch, creds, b),
        None => SecureChannel::client_early(ch, creds),
    }
    .context("preparing the protected channel's handshake")
}

/// How `ch`, a [`client`] channel, protected the session that ran on it.
pub fn client_protection(
    ch: &EarlyClient<Box<dyn Channel>>,
    creds: &Credentials,
) -> Result<Protection> {
    let Some(handshake) = ch.handshake_time() else {
        bail!("the session ended without running the protected channel's handshake");
    };
    Ok(Protection {
        name: creds.protection(),
        handshake_ms: handshake.as_secs_f64() * 1e3,
    })
}

/// A one-time pre-shared key for `run`'s two local parties: a file of mode 0600 in a new
/// directory of mode 0700, both removed when the returned guard is dropped.
pub fn one_time_psk() -> Result<(tempfile::TempDir, PathBuf)> {
    let dir = tempfile::Builder::new()
        .prefix("transputation-run-")
        .tempdir()
        .context("making a directory for the session's one-time key")?;
    let path = dir.path().join("psk");
    Psk::generate()?.write_file(&path)?;
    Ok((dir, path))
}
