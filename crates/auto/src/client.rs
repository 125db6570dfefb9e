//! The evaluator's side: asks for the garbler's card (at once, so that the answer arrives
//! while the path is measured), decides with it ([`Planner::choose_with`]), connects to
//! the garbler's listener for the choice and states the choice as the connection's first
//! bytes. With a card from an earlier session it connects without waiting for the
//! answer, and checks the answer once connected: a card that changed since (the garbler
//! restarted with other flags) is decided on again. A choice that does not connect falls
//! back to the next best (with a warning on standard error).

use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, OnceLock};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use transputation_model::Path;
use transputation_transport::{
    ByteCounts, Channel, Config, SenderHint, SocketBuffers, TransportSpec, TuneSender,
};

use crate::decide::{Plan, Planner};
use crate::wire::{self, Card, Datagram, Decision, Statement, FRAME_HEADER, REFUSAL_MAGIC};
use crate::Error;

mod hedge;
pub(crate) mod provisional;
pub(crate) mod race;

/// What both parties agreed on.
#[derive(Debug, Clone)]
pub struct Agreement {
    /// The session number.
    pub session: u64,
    /// The chosen transport.
    pub transport: TransportSpec,
    /// Where it connected.
    pub addr: SocketAddr,
    /// The decision as stated to the garbler.
    pub decision: Decision,
    /// What both parties mix into the protected handshake ([`wire::binding`]).
    pub binding: Vec<u8>,
    /// Choices that failed to connect before this one.
    pub failed: Vec<String>,
    /// The card decided with, its JSON (for the evaluator's cache).
    pub card_json: Vec<u8>,
    /// Whether that card came from the cache (`cache`) or the garbler (`garbler`).
    pub card_from: &'static str,
    /// Whether the connection is one made early, before the decision
    /// ([`Client::connect_early`]).
    pub early: bool,
}

/// An evaluator's agreement with one garbler.
pub struct Client {
    sock: UdpSocket,
    server: SocketAddr,
    session: u64,
    /// The card as the garbler answered this session's ask, if it has.
    answered: Option<(Card, Vec<u8>)>,
    /// Connections made before the decision ([`Client::connect_early`]).
    early: Vec<Early>,
}

/// A connection made at the start, before the card and the path are known, to where a
/// garbler of this build listens for a setting
/// ([`crate::service::predicted_listeners`]).
struct Early {
    /// The listen key it connected with.
    key: String,
    addr: SocketAddr,
    made: JoinHandle<transputation_transport::Result<Box<dyn Channel>>>,
    /// When connecting started.
    started: Instant,
    /// How long connecting took once it has, or `None` once it failed: for kernel TCP the
    /// round trip of its handshake as the kernel measured it (on a 5 ms path, 5–11 ms
    /// timed on the connecting thread while both parties start on two busy CPUs, and
    /// 10 ms is [`crate::PROVISIONAL_RTT`]), else as timed on its own thread.
    took: Arc<OnceLock<Option<Duration>>>,
}

/// The most an early connection may take; one not made by then is not waited for.
const EARLY_BUDGET: Duration = Duration::from_secs(3);

/// A card and where it came from.
struct Held {
    card: Card,
    json: Vec<u8>,
    from: &'static str,
}

impl Client {
    /// Opens a socket towards the garbler's service at `server` and asks for its card.
    pub fn ask(server: SocketAddr) -> Result<Self, Error> {
        let sock = transputation_probe::prober_socket(server)
            .and_then(|s| s.connect(server).map(|()| s))
            .map_err(|source| Error::Io {
                context: format!("opening a UDP socket towards {server}"),
                source,
            })?;
        let client = Client {
            sock,
            server,
            session: rand::random(),
            answered: None,
            early: Vec::new(),
        };
        client.send_ask()?;
        Ok(client)
    }

    fn send_ask(&self) -> Result<(), Error> {
        self.sock
            .send(&wire::card_ask_datagram(self.session))
            .map(drop)
            .map_err(|source| Error::Io {
                context: format!("asking {} for its card", self.server),
                source,
            })
    }

    /// Reads answers for at most `wait`; true once the card has come.
    fn poll(&mut self, wait: Duration) -> bool {
        let until = Instant::now() + wait;
        // A longer datagram is cut short, and then no card.
        let mut buf = [0u8; wire::MAX_DATAGRAM];
        while self.answered.is_none() {
            let left = until.saturating_duration_since(Instant::now());
            // A zero read timeout would block for ever: poll without waiting instead.
            let _ = self.sock.set_nonblocking(left.is_zero());
            let _ = self
                .sock
                .set_read_timeout(Some(left.max(Duration::from_micros(1))));
            let Ok(n) = self.sock.recv(&mut buf) else {
                break;
            };
            if let Ok(Datagram::Card(s, card, json)) = wire::parse(&buf[..n]) {
                if s == self.session {
                    self.answered = Some((card, json));
                }
            }
        }
        let _ = self.sock.set_nonblocking(false);
        self.answered.is_some()
    }

    /// The card if the garbler has answered by now (no wait).
    pub fn card_now(&mut self) -> Option<Card> {
        self.poll(Duration::ZERO)
            .then(|| self.answered.as_ref().map(|(c, _)| c.clone()))
            .flatten()
    }

    /// Connects at once, each on a thread of its own, to where a garbler of this build
    /// listens for `tcp`, `quic` and `blast` when its ports were free (each as a
    /// connection made while the path is probed takes it,
    /// [`TransportSpec::while_probing`]), so that on a cold start the
    /// connection's round trip passes while the path is measured. [`Client::connect`]
    /// takes such a connection only if the decision chooses a setting of its listener and
    /// the card names the same port (so a stranger on a predicted port never gets the
    /// statement); the others are closed without a byte, which the garbler passes over
    /// without a word. For a session whose own sending is small (the evaluator sends in
    /// the first window whatever its controller) and whose tables fit the receive windows
    /// the kernel and quinn start with: [`Planner::fits_early`]. `quic` is connected only
    /// once kernel TCP's connection has taken longer than
    /// [`crate::PROVISIONAL_RTT`]: on a shorter path the session starts over kernel TCP at
    /// once, and a `quic` handshake made for nothing costs both parties CPU the session
    /// needs (on `lan` and `cw-lan`, cold AES-128 came 1.5–2 ms nearer to `tcp` without it).
    pub fn connect_early(&mut self, cfg: &Config) {
        let cfg = within(cfg, cfg.connect_budget().min(EARLY_BUDGET));
        let mut listeners = crate::service::predicted_listeners(self.server);
        // Kernel TCP first: the others may wait on its round trip.
        listeners.sort_by_key(|(key, _)| key.name() != "tcp");
        let mut tcp_took: Option<Arc<OnceLock<Option<Duration>>>> = None;
        for (key, addr) in listeners {
            let (spec, cfg) = (key.while_probing(), cfg.clone());
            let took: Arc<OnceLock<Option<Duration>>> = Arc::default();
            let timing = took.clone();
            // `quic`'s handshake costs both parties TLS's CPU: on a short path, where the
            // session starts at once over kernel TCP and rarely moves to `quic`, it is
            // not made early (a choice of it connects then).
            let short_path = (key.name() == "quic").then(|| tcp_took.clone()).flatten();
            let made = thread::Builder::new()
                .name("auto-early".into())
                .spawn(move || {
                    if let Some(tcp) = short_path {
                        if made_within(&tcp, provisional::PROVISIONAL_RTT) {
                            let _ = timing.set(None);
                            return Err(transputation_transport::Error::Io {
                                during: "connecting early on a short path",
                                source: std::io::Error::other("not made: the path is short"),
                            });
                        }
                    }
                    let start = Instant::now();
                    let made = spec.connect(addr, &cfg);
                    let took = made.as_ref().ok().map(|ch| {
                        let timed = start.elapsed();
                        ch.kernel_rtt().map_or(timed, |rtt| rtt.min(timed))
                    });
                    let _ = timing.set(took);
                    made
                });
            if let Ok(made) = made {
                if key.name() == "tcp" {
                    tcp_took = Some(took.clone());
                }
                self.early.push(Early {
                    key: key.to_string(),
                    addr,
                    made,
                    started: Instant::now(),
                    took,
                });
            }
        }
    }

    /// The listeners (listen key, port) early connections were started to, except those
    /// that failed or were not made (a decision counts the others as connected).
    fn early_listeners(&self) -> Vec<(String, u16)> {
        held_listeners(&self.early)
    }

    /// A channel to `addr` for `transport`: the early connection to its listener if one
    /// was made, else a new one with `cfg`, on a path of round trip `rtt` seconds
    /// (hedged: [`channel_for`]); and whether it was early. (Connected after the
    /// decision, `blast` times the path's rate itself: for the large sessions that connect
    /// late, a rate read low by the probe's first train would cost more than its train
    /// disturbs the probe's later ones, for the cache.)
    fn channel_for(
        &mut self,
        transport: &TransportSpec,
        addr: SocketAddr,
        cfg: &Config,
        rtt: f64,
    ) -> (transputation_transport::Result<Box<dyn Channel>>, bool) {
        channel_for(&mut self.early, transport, addr, cfg, rtt)
    }

    /// The garbler's card, asking again after `first_wait`, then twice as long each time
    /// (at most 1 s), for at most `patience` in all.
    pub fn card(
        &mut self,
        first_wait: Duration,
        patience: Duration,
    ) -> Result<(Card, Vec<u8>), Error> {
        self.card_while(first_wait, patience, || {})
    }

    /// [`Client::card`], calling `meanwhile` every few milliseconds while it waits.
    pub fn card_while(
        &mut self,
        first_wait: Duration,
        patience: Duration,
        mut meanwhile: impl FnMut(),
    ) -> Result<(Card, Vec<u8>), Error> {
        const SLICE: Duration = Duration::from_millis(2);
        let start = Instant::now();
        let mut wait = first_wait.max(Duration::from_millis(20));
        let mut asked = Instant::now();
        loop {
            let until_ask = wait.saturating_sub(asked.elapsed());
            let left = patience.saturating_sub(start.elapsed());
            if self.poll(until_ask.min(left).min(SLICE)) {
                return Ok(self.answered.clone().expect("polled"));
            }
            meanwhile();
            if asked.elapsed() < wait && start.elapsed() < patience {
                continue;
            }
            if start.elapsed() >= patience {
                return Err(Error::NoService {
                    addr: self.server,
                    patience,
                });
            }
            self.send_ask()?;
            asked = Instant::now();
            wait = (wait * 2).min(Duration::from_secs(1));
        }
    }

    /// Whether a decision made with the cached card in `held` must be made again: the
    /// garbler's answer (awaited for `wait`) is another card, and on it the choice is not
    /// `chosen` on the same port (the connection made stands if only another listener
    /// moved). `held` takes the garbler's card when it differs.
    fn stale(
        &mut self,
        held: &mut Held,
        planner: &Planner,
        path: &Path,
        failed: &[String],
        chosen: Option<(&TransportSpec, u16)>,
        wait: Duration,
    ) -> bool {
        if !self.poll(wait) {
            return false;
        }
        let (card, json) = self.answered.clone().expect("polled");
        if json == held.json {
            return false;
        }
        let same = chosen.is_some_and(|(transport, port)| {
            planner
                .choose_with(&card, path, failed)
                .ok()
                .map(|p| decision_of(&card, &p))
                .is_some_and(|(t, d)| &t == transport && d.port == port)
        });
        *held = Held {
            card,
            json,
            from: if same { "cache" } else { "garbler" },
        };
        !same
    }

    /// Decides on `path` with the card (`cached`, a card's JSON from an earlier session,
    /// if the caller has one; else the garbler's answer), connects over the choice and
    /// states it; falls back to the next best while a choice does not connect. `cfg` is
    /// the session's configuration (its buffer is the decision's), `patience` bounds the
    /// whole.
    pub fn connect(
        &mut self,
        planner: &Planner,
        path: &Path,
        cached: Option<&[u8]>,
        cfg: &Config,
        patience: Duration,
    ) -> Result<(Agreement, Box<dyn Channel>), Error> {
        let start = Instant::now();
        let first_wait = Duration::from_secs_f64((path.rtt * 3.0).max(0.05));
        let cached = cached.and_then(|j| wire::parse_card(j).ok().map(|c| (c, j)));
        let mut held = match cached {
            Some((card, json)) => Held {
                card,
                json: json.to_vec(),
                from: "cache",
            },
            None => {
                let (card, json) = self.card(first_wait, patience)?;
                Held {
                    card,
                    json,
                    from: "garbler",
                }
            }
        };
        let mut failed: Vec<String> = Vec::new();
        loop {
            let plan = match planner.choose_connected(
                &held.card,
                path,
                &failed,
                &self.early_listeners(),
            ) {
                Ok(plan) => plan,
                // Nothing left on the cached card: the garbler's own may say more.
                Err(_) if held.from == "cache" => {
                    let left = patience.saturating_sub(start.elapsed());
                    let (card, json) = self.card(first_wait, left)?;
                    held = Held {
                        card,
                        json,
                        from: "garbler",
                    };
                    failed.clear();
                    continue;
                }
                Err(why) => return Err(Error::Refused(why)),
            };
            let (transport, decision) = decision_of(&held.card, &plan);
            let addr = SocketAddr::new(self.server.ip(), decision.port);
            let left = patience.saturating_sub(start.elapsed());
            let (connected, was_early) = self.channel_for(
                &transport,
                addr,
                &attempt(cfg, &transport, &plan, path, left),
                path.rtt,
            );
            // A cached card is checked against the garbler's answer to this session's ask,
            // which comes back while the connection is made (or a moment after).
            if held.from == "cache" {
                let grace = Duration::from_secs_f64((path.rtt * 0.5).max(0.02));
                let wait = if connected.is_ok() { grace } else { first_wait };
                let chosen = connected.is_ok().then_some((&transport, decision.port));
                if self.stale(&mut held, planner, path, &failed, chosen, wait) {
                    eprintln!(
                        "auto: the garbler's card changed since it was cached; deciding again"
                    );
                    failed.clear();
                    continue;
                }
            }
            let mut ch = match connected {
                Ok(ch) => ch,
                Err(e) => {
                    eprintln!(
                        "warning: auto chose {transport}, which did not connect to {addr} ({e}); \
                         taking the next best"
                    );
                    if start.elapsed() >= patience {
                        return Err(Error::Connect {
                            transport: transport.to_string(),
                            source: e,
                        });
                    }
                    failed.push(decision.transport);
                    continue;
                }
            };
            tune_sender(&*ch, &transport, path);
            let statement = Statement {
                failed: failed.clone(),
                ..stated(self.session, &held.json, planner, path, decision.clone())
            };
            let (bytes, json) = wire::statement_bytes(&statement)
                .map_err(|e| Error::Refused(format!("stating the choice: {e}")))?;
            // Queued: it leaves with the handshake's first message (or the session's).
            ch.send(&bytes).map_err(|source| Error::Connect {
                transport: transport.to_string(),
                source,
            })?;
            let agreement = Agreement {
                session: self.session,
                transport,
                addr,
                binding: wire::binding(self.session, &held.json, &json),
                decision,
                failed,
                card_json: held.json,
                card_from: held.from,
                early: was_early,
            };
            close_in_background(std::mem::take(&mut self.early));
            return Ok((agreement, Box::new(Stated::new(ch))));
        }
    }
}

/// See [`Client::early_listeners`].
fn held_listeners(early: &[Early]) -> Vec<(String, u16)> {
    early
        .iter()
        .filter(|e| !matches!(e.took.get(), Some(None)))
        .map(|e| (e.key.clone(), e.addr.port()))
        .collect()
}

/// How long the connection timing into `took` took to make, if it was made by `wait`
/// from now (`None` if it failed or is still being made then).
fn connect_time(took: &OnceLock<Option<Duration>>, wait: Duration) -> Option<Duration> {
    let until = Instant::now() + wait;
    loop {
        if let Some(t) = took.get() {
            return *t;
        }
        if Instant::now() >= until {
            return None;
        }
        thread::sleep(Duration::from_micros(200));
    }
}

/// Whether the connection timing into `took` was made within `bound` (waits at most that
/// long from now, which, as the connection started before, is enough to tell).
fn made_within(took: &OnceLock<Option<Duration>>, bound: Duration) -> bool {
    connect_time(took, bound).is_some_and(|t| t <= bound)
}

impl Early {
    /// The connection, once it is made (waits for it), if it was.
    fn channel(self) -> Option<Box<dyn Channel>> {
        self.made.join().ok()?.ok()
    }
}

/// The early connection in `early` to `addr` for `transport`'s listener, made or still
/// being made, taken out of `early`.
fn take_pending(
    early: &mut Vec<Early>,
    transport: &TransportSpec,
    addr: SocketAddr,
) -> Option<Early> {
    let key = transport.listen_key().to_string();
    let i = early.iter().position(|e| e.key == key && e.addr == addr)?;
    Some(early.swap_remove(i))
}

/// The early connection in `early` to `addr` for `transport`'s listener, if one was made.
fn take_early(
    early: &mut Vec<Early>,
    transport: &TransportSpec,
    addr: SocketAddr,
) -> Option<Box<dyn Channel>> {
    take_pending(early, transport, addr)?.channel()
}

/// See [`Client::channel_for`]. Where the family allows it ([`Family::hedged_connect`]),
/// a connection not made within [`hedge::hedge_after`] of its start is joined by another
/// attempt (at most [`hedge::CONNECT_ATTEMPTS`] in all, the early one counted): the first made is taken
/// and the others are closed, unused, as they come. On a lossy path this keeps a lost SYN
/// or SYN-ACK from costing the session the kernel's 1 s initial timeout (at 1 % loss each
/// way, each of the two is lost once in a hundred: about one fresh session in fifty).
///
/// [`Family::hedged_connect`]: transputation_transport::Family::hedged_connect
fn channel_for(
    early: &mut Vec<Early>,
    transport: &TransportSpec,
    addr: SocketAddr,
    cfg: &Config,
    rtt: f64,
) -> (transputation_transport::Result<Box<dyn Channel>>, bool) {
    let pending = take_pending(early, transport, addr);
    if transport.family().hedged_connect {
        return hedge::hedged(
            pending,
            transport,
            addr,
            cfg,
            hedge::hedge_after(transport, rtt),
        );
    }
    match pending.and_then(Early::channel) {
        Some(ch) => (Ok(ch), true),
        None => (transport.connect(addr, cfg), false),
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        close_in_background(std::mem::take(&mut self.early));
    }
}

/// Closes early connections not taken, on a thread of their own: closing a `quic` channel
/// waits for the peer's acknowledgement of its end, a round trip the session should not
/// wait for.
fn close_in_background(early: Vec<Early>) {
    if early.is_empty() {
        return;
    }
    let _ = thread::Builder::new()
        .name("auto-early-close".into())
        .spawn(move || {
            for e in early {
                drop(e.made.join());
            }
        });
}

/// Tunes the evaluator's own sending on `ch` to the choice where its transport can be
/// tuned after set-up: an early connection was made with the listen key (`tcp` for
/// `tcp:cc=bbr`), and an early `blast` connection, made without timing the path, starts
/// at the rate the probe measured. (A connection made after the decision, whose train
/// is still being timed when this runs, starts at the larger of the two.) The
/// evaluator's sending is small, so a tuning refused costs little: a warning, and the
/// session goes on.
fn tune_sender(ch: &dyn Channel, transport: &TransportSpec, path: &Path) {
    let Some(tuning) = ch.sender_tuning() else {
        return;
    };
    let hint = SenderHint {
        start_rate: Some(path.rate as u64),
        ..transport.sender_hint(None)
    };
    if let Err(e) = tuning.apply(&hint) {
        eprintln!("auto: could not send as {transport} asks ({e}); sending as connected");
    }
}

/// The statement of `decision` on `path` with the card `card_json`: nothing failed
/// before it, not provisional, no race.
fn stated(
    session: u64,
    card_json: &[u8],
    planner: &Planner,
    path: &Path,
    decision: Decision,
) -> Statement {
    Statement {
        session,
        card: wire::card_id(card_json),
        scheme: planner.scheme().to_string(),
        path: *path,
        decision,
        failed: Vec::new(),
        moves: None,
        race: Vec::new(),
    }
}

/// The chosen transport and the decision as stated.
fn decision_of(card: &Card, plan: &Plan) -> (TransportSpec, Decision) {
    let name = plan.decision.choice.clone().expect("choose_with chose");
    let transport: TransportSpec = name.parse().expect("a candidate parses");
    let port = card
        .port_of(&transport.listen_key().to_string())
        .expect("choose_with keeps served candidates");
    let decision = Decision {
        transport: name,
        port,
        buffer_bytes: plan.buffer_bytes,
        predicted_ms: plan
            .decision
            .chosen()
            .and_then(|r| r.seconds())
            .map_or(0.0, |s| s * 1e3),
        why: plan.decision.why.clone(),
        ranked: plan.ranked(),
    };
    (transport, decision)
}

/// The configuration of one connection attempt: the decision's buffer, and a budget of a
/// few round trips of the transport's own set-up (at least a second), within `left`.
fn attempt(
    cfg: &Config,
    transport: &TransportSpec,
    plan: &Plan,
    path: &Path,
    left: Duration,
) -> Config {
    let budget =
        Duration::from_secs_f64((4.0 * transport.model().connect_round_trips * path.rtt).max(1.0))
            .min(left);
    Config {
        buffer_bytes: Some(plan.buffer_bytes as usize),
        ..within(cfg, budget)
    }
}

/// `cfg` with connection attempts that fit in `budget`, and kernel TCP's timers scaled to
/// a short path's round trip (see [`Service::start`](crate::Service::start)).
fn within(cfg: &Config, budget: Duration) -> Config {
    Config {
        short_path_timers: true,
        connect_timeout: budget,
        connect_attempts: u32::try_from(budget.as_nanos() / cfg.retry_delay.as_nanos().max(1))
            .unwrap_or(u32::MAX)
            .max(1),
        ..cfg.clone()
    }
}

/// The evaluator's channel after its statement. The garbler's first bytes are its
/// session's (handed on unchanged) or a refusal, which becomes an error with the garbler's
/// reason. (The first read takes at least four bytes: the garbler's first words, a
/// handshake hello or a framed message, are longer.)
struct Stated {
    inner: Box<dyn Channel>,
    checked: bool,
    /// Bytes read ahead while checking, handed out first.
    ahead: Vec<u8>,
}

impl Stated {
    fn new(inner: Box<dyn Channel>) -> Self {
        Stated {
            inner,
            checked: false,
            ahead: Vec::new(),
        }
    }

    fn check(&mut self) -> transputation_transport::Result<()> {
        self.checked = true;
        let mut header = [0u8; FRAME_HEADER];
        self.inner.recv(&mut header[..4])?;
        if &header[..4] != REFUSAL_MAGIC {
            self.ahead = header[..4].to_vec();
            return Ok(());
        }
        self.inner.recv(&mut header[4..])?;
        let n = wire::refusal_length(&header).map_err(|e| {
            transputation_transport::Error::Malformed {
                what: format!("the garbler's refusal: {e}"),
            }
        })?;
        let mut reason = vec![0u8; n];
        self.inner.recv(&mut reason)?;
        Err(transputation_transport::Error::Mismatch {
            what: format!(
                "the garbler refused this session: {}",
                String::from_utf8_lossy(&reason)
            ),
        })
    }
}

impl Channel for Stated {
    fn send(&mut self, bytes: &[u8]) -> transputation_transport::Result<()> {
        self.inner.send(bytes)
    }

    fn recv(&mut self, buf: &mut [u8]) -> transputation_transport::Result<()> {
        // Every read of the session comes here: past the first, straight through.
        if self.checked && self.ahead.is_empty() {
            return self.inner.recv(buf);
        }
        if !self.checked {
            self.check()?;
        }
        let k = self.ahead.len().min(buf.len());
        buf[..k].copy_from_slice(&self.ahead[..k]);
        self.ahead.drain(..k);
        if k < buf.len() {
            self.inner.recv(&mut buf[k..])?;
        }
        Ok(())
    }

    fn flush(&mut self) -> transputation_transport::Result<()> {
        self.inner.flush()
    }

    fn close(&mut self) -> transputation_transport::Result<()> {
        self.inner.close()
    }

    fn stats(&self) -> ByteCounts {
        self.inner.stats()
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        self.inner.socket_buffers()
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        self.inner.peer_addr()
    }

    fn sender_tuning(&self) -> Option<Arc<dyn TuneSender>> {
        self.inner.sender_tuning()
    }

    // A session over `quic` carries its coarse-grained frames on lanes as when named. (A
    // provisional or raced session's channel wraps this one and opens none: its sending
    // may move to another connection.)
    fn max_lanes(&self) -> usize {
        self.inner.max_lanes()
    }

    fn open_lanes(&mut self, n: usize) -> transputation_transport::Result<Vec<Box<dyn Channel>>> {
        self.inner.open_lanes(n)
    }
}

#[cfg(all(test, feature = "quic"))]
mod stated_tests {
    use super::*;

    #[test]
    fn a_stated_channel_opens_the_lanes_of_the_channel_it_wraps() {
        let spec: TransportSpec = "quic:lanes=3".parse().unwrap();
        let cfg = Config {
            io_timeout: Duration::from_secs(10),
            ..Config::default()
        };
        let listener = spec.listen("127.0.0.1:0".parse().unwrap(), &cfg).unwrap();
        let addr = listener.local_addr();
        let connecting = std::thread::spawn(move || spec.connect(addr, &cfg).unwrap());
        let mut garbler = listener.accept().unwrap();
        let mut evaluator = Stated::new(connecting.join().unwrap());
        assert_eq!(evaluator.max_lanes(), 3);
        garbler.send(b"first words").unwrap();
        garbler.flush().unwrap();
        let mut first = [0u8; 11];
        evaluator.recv(&mut first).unwrap();
        assert_eq!(&first, b"first words");
        let opened = std::thread::spawn(move || {
            let lanes = evaluator.open_lanes(2).unwrap();
            (evaluator, lanes)
        });
        let mut g_lanes = garbler.open_lanes(2).unwrap();
        let (_evaluator, mut e_lanes) = opened.join().unwrap();
        e_lanes[1].send(b"on lane 1").unwrap();
        e_lanes[1].flush().unwrap();
        let mut got = [0u8; 9];
        g_lanes[1].recv(&mut got).unwrap();
        assert_eq!(&got, b"on lane 1");
    }
}
