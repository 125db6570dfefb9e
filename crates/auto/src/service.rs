//! The garbler's side: one UDP socket on the session's port that answers the evaluator's
//! probe packets and its offers. For each offer it decides ([`Planner`]), listens for the
//! chosen transport on a port of its own (built with the chosen options, so that quinn's
//! initial window or the kernel's congestion control is the session's from its first
//! packet), answers, and accepts the evaluator there on a thread of its own, running the
//! protected handshake bound to the offer and the reply. [`Service::next`] hands out the
//! sessions whose handshake passed.
//!
//! A repeated offer (its reply was lost) gets the same reply. A new offer of the same
//! session (the chosen transport did not connect, and the evaluator excludes it) is
//! decided again; the listener of the earlier choice is closed.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use transputation_transport::{Channel, Config, Credentials, SecureChannel, TransportSpec};

use crate::decide::{Plan, Planner};
use crate::wire::{self, Answer, Datagram, Decision, Offer, Reply};
use crate::Error;

/// A session the garbler accepted: the channel, past the protected handshake if any.
pub struct Connected {
    /// The session number the evaluator chose.
    pub session: u64,
    /// Where its offer came from.
    pub peer: SocketAddr,
    /// The chosen transport.
    pub transport: TransportSpec,
    /// The decision as the evaluator was told it.
    pub decision: Decision,
    /// The path the evaluator offered.
    pub path: transputation_model::Path,
    /// The channel.
    pub channel: Box<dyn Channel>,
    /// The handshake's time (zero without protection).
    pub handshake: Duration,
}

/// The garbler's agreement service; stops when dropped.
pub struct Service {
    local: SocketAddr,
    connected: Receiver<Result<Connected, Error>>,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl Service {
    /// Binds the UDP socket on `addr` and starts answering. `cfg` is the configuration of
    /// the sessions' transports (its buffer is replaced by each decision's); `accept_wait`
    /// is how long a chosen transport waits for the evaluator to connect.
    pub fn start(
        addr: SocketAddr,
        planner: Planner,
        cfg: Config,
        creds: Option<Arc<Credentials>>,
        accept_wait: Duration,
    ) -> Result<Service, Error> {
        let sock = UdpSocket::bind(addr).map_err(|source| Error::Io {
            context: format!("binding the agreement's UDP socket on {addr}"),
            source,
        })?;
        let local = sock.local_addr().map_err(|source| Error::Io {
            context: "reading the agreement socket's address".into(),
            source,
        })?;
        let reply_sock = sock.try_clone().map_err(|source| Error::Io {
            context: "sharing the agreement's UDP socket".into(),
            source,
        })?;
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let mut state = State {
            sock: reply_sock,
            local,
            planner,
            cfg,
            creds,
            accept_wait,
            sessions: HashMap::new(),
            connected: tx,
        };
        let stopping = stop.clone();
        let thread = thread::Builder::new()
            .name("auto-service".into())
            .spawn(move || {
                // The probe's server reads the socket (it times train packets as they
                // come) and hands every datagram that is not the probe's to the offers.
                let served = transputation_probe::serve_until_with(&sock, &stopping, |d, from| {
                    state.datagram(d, from)
                });
                if let Err(e) = served {
                    eprintln!("auto: the agreement service stopped: {e}");
                }
                state.finish();
            })
            .map_err(|source| Error::Io {
                context: "starting the agreement service".into(),
                source,
            })?;
        Ok(Service {
            local,
            connected: rx,
            stop,
            thread: Some(thread),
        })
    }

    /// Where it listens (UDP; the chosen transports listen on ports of their own).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// The next session whose evaluator connected and passed the handshake, waiting at
    /// most `wait`; `None` if none did. An error is a session that failed (the service
    /// goes on).
    pub fn next(&self, wait: Duration) -> Option<Result<Connected, Error>> {
        self.connected.recv_timeout(wait).ok()
    }
}

impl Drop for Service {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// A session's latest offer and reply.
struct Session {
    offer_json: Vec<u8>,
    reply: Vec<u8>,
    /// Raised to stop the accepting thread of an earlier choice.
    superseded: Arc<AtomicBool>,
    at: Instant,
}

struct State {
    sock: UdpSocket,
    local: SocketAddr,
    planner: Planner,
    cfg: Config,
    creds: Option<Arc<Credentials>>,
    accept_wait: Duration,
    sessions: HashMap<u64, Session>,
    connected: Sender<Result<Connected, Error>>,
}

/// Sessions are forgotten this long after their last offer.
const FORGET: Duration = Duration::from_secs(120);

impl State {
    /// A datagram that is not the probe's.
    fn datagram(&mut self, d: &[u8], from: SocketAddr) {
        if let Ok(Datagram::Offer(session, offer, json)) = wire::parse(d) {
            self.offer(session, offer, json, from);
        }
        self.sessions.retain(|_, s| s.at.elapsed() < FORGET);
    }

    /// Stops the accepting threads of sessions not yet connected.
    fn finish(&mut self) {
        for s in self.sessions.values() {
            s.superseded.store(true, Ordering::Relaxed);
        }
    }

    fn offer(&mut self, session: u64, offer: Offer, json: Vec<u8>, from: SocketAddr) {
        if let Some(s) = self.sessions.get(&session) {
            if s.offer_json == json {
                let _ = self.sock.send_to(&s.reply, from);
                return;
            }
            s.superseded.store(true, Ordering::Relaxed);
        }
        let superseded = Arc::new(AtomicBool::new(false));
        let (answer, listening) = self.decide(&offer);
        let reply = Reply {
            offer: wire::offer_id(&json),
            answer,
        };
        let datagram = wire::reply_datagram(session, &reply);
        let reply_json = datagram[16..].to_vec();
        let _ = self.sock.send_to(&datagram, from);
        if let (Some((spec, listener, decision)), Answer::Chosen(_)) = (listening, &reply.answer) {
            let accepting = Accepting {
                session,
                peer: from,
                transport: spec,
                decision,
                path: offer.path,
                binding: wire::binding(session, &json, &reply_json),
                creds: self.creds.clone(),
                wait: self.accept_wait,
                superseded: superseded.clone(),
                out: self.connected.clone(),
            };
            let _ = thread::Builder::new()
                .name(format!("auto-accept-{session:x}"))
                .spawn(move || accepting.run(listener));
        }
        self.sessions.insert(
            session,
            Session {
                offer_json: json,
                reply: datagram,
                superseded,
                at: Instant::now(),
            },
        );
    }

    /// Decides and listens; a chosen transport that cannot listen here is excluded and
    /// the next best taken.
    fn decide(
        &self,
        offer: &Offer,
    ) -> (
        Answer,
        Option<(TransportSpec, transputation_transport::Listener, Decision)>,
    ) {
        let mut offer = offer.clone();
        loop {
            let plan = match self.planner.decide(&offer) {
                Ok(p) => p,
                Err(why) => return (Answer::Refused(why), None),
            };
            let choice = plan.decision.choice.clone().expect("decide chose");
            match self.listen(&choice, &plan) {
                Ok((spec, listener)) => {
                    let decision = Decision {
                        transport: choice,
                        port: listener.local_addr().port(),
                        buffer_bytes: plan.buffer_bytes,
                        predicted_ms: plan
                            .decision
                            .chosen()
                            .and_then(|r| r.seconds())
                            .map_or(0.0, |s| s * 1e3),
                        why: plan.decision.why.clone(),
                        ranked: plan.ranked(),
                    };
                    return (
                        Answer::Chosen(decision.clone()),
                        Some((spec, listener, decision)),
                    );
                }
                Err(e) => {
                    eprintln!("auto: {choice} cannot listen here ({e}); taking the next best");
                    offer.exclude.push(choice);
                }
            }
        }
    }

    fn listen(
        &self,
        choice: &str,
        plan: &Plan,
    ) -> Result<(TransportSpec, transputation_transport::Listener), String> {
        let spec: TransportSpec = choice.parse().map_err(|e| format!("{e}"))?;
        let cfg = Config {
            buffer_bytes: Some(plan.buffer_bytes as usize),
            ..self.cfg.clone()
        };
        let listener = spec
            .listen(SocketAddr::new(self.local.ip(), 0), &cfg)
            .map_err(|e| e.to_string())?;
        Ok((spec, listener))
    }
}

/// A chosen transport's listener, waiting for its evaluator.
struct Accepting {
    session: u64,
    peer: SocketAddr,
    transport: TransportSpec,
    decision: Decision,
    path: transputation_model::Path,
    binding: Vec<u8>,
    creds: Option<Arc<Credentials>>,
    wait: Duration,
    superseded: Arc<AtomicBool>,
    out: Sender<Result<Connected, Error>>,
}

impl Accepting {
    fn run(self, mut listener: transputation_transport::Listener) {
        let start = Instant::now();
        let slice = Duration::from_millis(100);
        while start.elapsed() < self.wait && !self.superseded.load(Ordering::Relaxed) {
            listener.set_accept_timeout(Some(slice.min(self.wait.saturating_sub(start.elapsed()))));
            let ch = match listener.accept() {
                Ok(ch) => ch,
                Err(transputation_transport::Error::Timeout { .. }) => continue,
                Err(e) => {
                    let _ = self.out.send(Err(Error::Accept {
                        transport: self.transport.to_string(),
                        source: e,
                    }));
                    return;
                }
            };
            let t = Instant::now();
            let (channel, handshake) = match &self.creds {
                None => (ch, Duration::ZERO),
                Some(creds) => match SecureChannel::server_bound(ch, creds, &self.binding) {
                    Ok(s) => (Box::new(s) as Box<dyn Channel>, t.elapsed()),
                    Err(e) => {
                        eprintln!(
                            "auto: refused a peer on {} for session {:x}: {e}; waiting for the \
                             next",
                            self.transport, self.session
                        );
                        continue;
                    }
                },
            };
            let _ = self.out.send(Ok(Connected {
                session: self.session,
                peer: self.peer,
                transport: self.transport,
                decision: self.decision,
                path: self.path,
                channel,
                handshake,
            }));
            return;
        }
    }
}
