//! The evaluator's side: offers its transports and the measured path to the garbler's
//! service, waits for the decision (sending the offer again while none comes), and
//! connects over the chosen transport; when that fails it offers again without it, so the
//! garbler chooses the next best (with a warning on standard error).

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use transputation_transport::{Channel, Config, TransportSpec};

use crate::wire::{self, Answer, Datagram, Decision, Offer};
use crate::Error;

/// What both parties agreed on.
#[derive(Debug, Clone)]
pub struct Agreement {
    /// The session number.
    pub session: u64,
    /// The chosen transport.
    pub transport: TransportSpec,
    /// Where it listens.
    pub addr: SocketAddr,
    /// The decision as the garbler sent it.
    pub decision: Decision,
    /// What both parties mix into the protected handshake ([`wire::binding`]).
    pub binding: Vec<u8>,
    /// Choices that failed to connect before this one.
    pub failed: Vec<String>,
}

/// An evaluator's negotiation with one garbler.
pub struct Negotiation {
    sock: UdpSocket,
    server: SocketAddr,
    session: u64,
    offer: Offer,
}

impl Negotiation {
    /// A negotiation with the service at `server` for a new session.
    pub fn new(server: SocketAddr, offer: Offer) -> Result<Self, Error> {
        let any = if server.is_ipv6() {
            "[::]:0"
        } else {
            "0.0.0.0:0"
        };
        let sock = UdpSocket::bind(any)
            .and_then(|s| s.connect(server).map(|()| s))
            .map_err(|source| Error::Io {
                context: format!("opening a UDP socket towards {server}"),
                source,
            })?;
        Ok(Negotiation {
            sock,
            server,
            session: rand::random(),
            offer,
        })
    }

    /// The offer as it stands.
    pub fn offer(&self) -> &Offer {
        &self.offer
    }

    /// Sends the offer and waits for the decision, sending it again after `first_wait`,
    /// then twice as long each time (at most 1 s), for at most `patience` in all.
    pub fn agree(&mut self, first_wait: Duration, patience: Duration) -> Result<Agreement, Error> {
        let datagram =
            wire::offer_datagram(self.session, &self.offer).ok_or(Error::OfferTooLarge)?;
        let offer_json = datagram[16..].to_vec();
        let offer_id = wire::offer_id(&offer_json);
        let start = Instant::now();
        let mut wait = first_wait.max(Duration::from_millis(20));
        let mut buf = vec![0u8; 65536];
        while start.elapsed() < patience {
            self.sock.send(&datagram).map_err(|source| Error::Io {
                context: format!("sending the offer to {}", self.server),
                source,
            })?;
            let until = Instant::now() + wait;
            while let Some(left) = until.checked_duration_since(Instant::now()) {
                let left = left.min(patience.saturating_sub(start.elapsed()));
                if left.is_zero() {
                    break;
                }
                let _ = self.sock.set_read_timeout(Some(left));
                let n = match self.sock.recv(&mut buf) {
                    Ok(n) => n,
                    Err(_) => break,
                };
                let Ok(Datagram::Reply(s, reply, reply_json)) = wire::parse(&buf[..n]) else {
                    continue;
                };
                if s != self.session || reply.offer != offer_id {
                    continue;
                }
                return match reply.answer {
                    Answer::Refused(why) => Err(Error::Refused(why)),
                    Answer::Chosen(decision) => self.agreement(decision, &offer_json, &reply_json),
                };
            }
            wait = (wait * 2).min(Duration::from_secs(1));
        }
        Err(Error::NoService {
            addr: self.server,
            patience,
        })
    }

    fn agreement(
        &self,
        decision: Decision,
        offer_json: &[u8],
        reply_json: &[u8],
    ) -> Result<Agreement, Error> {
        // The garbler may only choose what was offered.
        if !self.offer.transports.contains(&decision.transport)
            || self.offer.exclude.contains(&decision.transport)
        {
            return Err(Error::NotOffered(decision.transport));
        }
        let transport = decision
            .transport
            .parse()
            .map_err(|_| Error::NotOffered(decision.transport.clone()))?;
        Ok(Agreement {
            session: self.session,
            transport,
            addr: SocketAddr::new(self.server.ip(), decision.port),
            binding: wire::binding(self.session, offer_json, reply_json),
            failed: self.offer.exclude.clone(),
            decision,
        })
    }

    /// Agrees and connects, falling back to the next best choice while the chosen one
    /// does not connect; `cfg` is the session's configuration (its buffer is the
    /// decision's), `patience` bounds the whole.
    pub fn connect(
        &mut self,
        cfg: &Config,
        patience: Duration,
    ) -> Result<(Agreement, Box<dyn Channel>), Error> {
        let start = Instant::now();
        let first_wait = Duration::from_secs_f64((self.offer.path.rtt * 3.0).max(0.05));
        loop {
            let left = patience.saturating_sub(start.elapsed());
            let agreement = self.agree(first_wait, left)?;
            let model = agreement.transport.model();
            // The garbler listens already: a few round trips of the transport's own
            // set-up, or a second, whichever is longer.
            let budget = Duration::from_secs_f64(
                (4.0 * model.connect_round_trips * self.offer.path.rtt).max(1.0),
            )
            .min(patience.saturating_sub(start.elapsed()));
            let attempt = Config {
                buffer_bytes: Some(agreement.decision.buffer_bytes as usize),
                connect_timeout: budget,
                connect_attempts: u32::try_from(
                    budget.as_nanos() / cfg.retry_delay.as_nanos().max(1),
                )
                .unwrap_or(u32::MAX)
                .max(1),
                ..cfg.clone()
            };
            match agreement.transport.connect(agreement.addr, &attempt) {
                Ok(ch) => return Ok((agreement, ch)),
                Err(e) => {
                    let choice = agreement.decision.transport;
                    eprintln!(
                        "warning: auto chose {choice}, which did not connect to {} ({e}); \
                         asking the garbler for the next best",
                        agreement.addr
                    );
                    if start.elapsed() >= patience {
                        return Err(Error::Connect {
                            transport: choice,
                            source: e,
                        });
                    }
                    self.offer.exclude.push(choice);
                }
            }
        }
    }
}
