//! The garbler's side. Before any evaluator asks, it listens on every transport setting
//! the model may choose that works here at once (not `udt` before this process has
//! started its library), once per setting without its sender options
//! (`TransportSpec::listen_key`: one `quic` listener for every `quic:cc=..,iw=..`), and
//! writes its [`Card`]: those listeners' ports and the kernel congestion controls it may
//! set. One UDP socket on the session's port answers the evaluator's probe
//! packets and its asks for the card.
//!
//! Each connection a listener accepts is admitted on a thread of its own (at most
//! [`MAX_ADMITTING`] at once): its first bytes must be the evaluator's [`Statement`]
//! within the I/O timeout; the statement must name this card and scheme and a
//! setting of that listener that the garbler would itself consider on the stated path
//! ([`Planner::admit`]), or the garbler answers with the reason why not and closes. Then the protected handshake runs, bound to the card and the
//! statement, and only after it passed is the channel's sending side tuned to the choice
//! (kernel TCP: its congestion control and send buffer; `quic`: its controller and initial
//! window; `blast`: the rate it starts at, the stated path's), a round trip before the
//! tables leave. [`Service::next`] hands out the
//! sessions admitted.

use std::collections::VecDeque;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use transputation_model::Path;
use transputation_transport::{
    Channel, Config, Credentials, Listener, SecureChannel, SenderHint, TransportSpec,
};

use crate::decide::Planner;
use crate::moving::Moving;
use crate::racing::{RaceOutcome, Racing};
use crate::wire::{self, Card, Datagram, Decision, Listening, Move, Statement, FRAME_HEADER};
use crate::Error;

/// Connections admitted at once at most; a connection beyond them is closed.
pub const MAX_ADMITTING: usize = 16;

/// A session the garbler admitted: the channel, past the protected handshake if any.
pub struct Connected {
    /// The session number the evaluator chose.
    pub session: u64,
    /// Where the connection came from.
    pub peer: Option<SocketAddr>,
    /// The chosen transport.
    pub transport: TransportSpec,
    /// The evaluator's decision.
    pub decision: Decision,
    /// The path it decided for.
    pub path: Path,
    /// Choices that failed to connect before this one.
    pub failed: Vec<String>,
    /// The channel.
    pub channel: Box<dyn Channel>,
    /// The handshake's time (zero without protection).
    pub handshake: Duration,
    /// For a provisional session (started at once, [`Statement::moves`]): where its move,
    /// once the garbler's sending has moved, is told.
    pub moved: Option<MoveNews>,
    /// For a raced session ([`Statement::race`]): its lanes and what the race came to.
    pub race: Option<RaceNews>,
}

/// A raced session's lanes and what its race came to (filled in as it goes).
#[derive(Clone)]
pub struct RaceNews {
    /// The lanes' settings, as the statement named them.
    pub lanes: Vec<String>,
    /// The outcome.
    pub outcome: Arc<Mutex<RaceOutcome>>,
}

/// The most lanes a race may have.
pub const MAX_LANES: usize = 4;

/// How long a race's lane waits for its session's statement to be read.
const LANE_WAIT: Duration = Duration::from_secs(2);

/// Where a provisional session's move is told once the garbler's sending has moved.
#[derive(Clone, Default)]
pub struct MoveNews {
    to: Arc<Mutex<Option<MovedTo>>>,
    switched: Arc<AtomicBool>,
}

impl MoveNews {
    /// What the sending moved to, once it has.
    pub fn moved(&self) -> Option<MovedTo> {
        if !self.switched.load(Ordering::Acquire) {
            return None;
        }
        self.to.lock().ok()?.clone()
    }
}

/// What a provisional session's garbler sends on since its move.
#[derive(Debug, Clone)]
pub struct MovedTo {
    /// The transport.
    pub transport: TransportSpec,
    /// The evaluator's decision.
    pub decision: Decision,
    /// The path it measured.
    pub path: Path,
}

/// Provisional sessions waiting for their move, the newest last; at most this many are
/// kept (beyond the sessions whose garbler's end is gone, which are forgotten first, a
/// session whose move never came is forgotten after as many newer ones).
const MAX_PENDING: usize = 4 * MAX_ADMITTING;

/// A provisional session waiting for its move.
struct Pending {
    session: u64,
    /// The SHA-256 (hex) of the secret its move must show.
    commitment: String,
    /// Where the garbler's end takes the connection to send on, or its race's lanes.
    offer: Offer,
    news: MoveNews,
    /// The garbler's end, while it lives.
    alive: std::sync::Weak<()>,
}

/// Where a session waiting for connections takes them.
enum Offer {
    /// A provisional session's move.
    Move(Sender<Box<dyn Channel>>),
    /// A raced session's lanes, the settings its statement named.
    Race {
        lanes: Vec<String>,
        offer: Sender<(usize, Box<dyn Channel>)>,
        /// Per lane, whether it has joined (a lane joins once).
        joined: Vec<bool>,
    },
}

/// The garbler's agreement service; stops when dropped.
pub struct Service {
    local: SocketAddr,
    card: Card,
    connected: Receiver<Result<Connected, Error>>,
    stop: Arc<AtomicBool>,
}

/// Paths the listeners are chosen for: a LAN, a long and a lossy one. The settings the
/// registry proposes for them cover every family's listen key.
fn reference_paths() -> [Path; 3] {
    const MBIT: f64 = 1e6 / 8.0;
    [
        Path::exact(0.0005, 1000.0 * MBIT, 0.0),
        Path::exact(0.1, 200.0 * MBIT, 0.001),
        Path::exact(0.3, 500.0 * MBIT, 0.01),
    ]
}

/// Where a garbler of this build whose agreement socket is `udp` listens for `tcp`,
/// `quic` and `blast` if those ports were free ([`Service::start`]): an evaluator with nothing cached
/// connects there at once, before it knows the card, and uses a connection only if the
/// card then names the same port for the setting it chose.
pub fn predicted_listeners(udp: SocketAddr) -> Vec<(TransportSpec, SocketAddr)> {
    if udp.port() == 0 {
        return Vec::new();
    }
    listen_keys()
        .into_iter()
        .enumerate()
        .filter(|(_, key)| matches!(key.name(), "tcp" | "quic" | "blast"))
        .filter_map(|(i, key)| {
            let port = udp.port().checked_add(1 + u16::try_from(i).ok()?)?;
            Some((key, SocketAddr::new(udp.ip(), port)))
        })
        .collect()
}

/// The settings the garbler listens for, each choosable setting's listen key once, in
/// the order that numbers their ports (the same on every host of this build).
fn listen_keys() -> Vec<TransportSpec> {
    transputation_transport::auto::choosable_listen_keys(&reference_paths())
}

impl Service {
    /// Binds the UDP socket on `addr` and a listener per setting (on the ports after
    /// `addr`'s, one each, or any free port where that is taken or `addr`'s is 0), and
    /// starts answering. `cfg` is the configuration of the sessions' transports; kernel
    /// TCP's connections, on both sides, also get timers scaled to a short path's round
    /// trip ([`Config::short_path_timers`]): a session started at once on such a path
    /// would otherwise wait 200 ms for each of its small messages' lost packets.
    pub fn start(
        addr: SocketAddr,
        planner: Planner,
        cfg: Config,
        creds: Option<Arc<Credentials>>,
    ) -> Result<Service, Error> {
        let cfg = Config {
            short_path_timers: true,
            ..cfg
        };
        let sock = UdpSocket::bind(addr).map_err(|source| Error::Io {
            context: format!("binding the agreement's UDP socket on {addr}"),
            source,
        })?;
        let local = sock.local_addr().map_err(|source| Error::Io {
            context: "reading the agreement socket's address".into(),
            source,
        })?;
        let mut listeners = Vec::new();
        for (i, key) in listen_keys().into_iter().enumerate() {
            // One that does not work here, or that this process has not started (UDT's
            // 100 ms), is not offered: the evaluator asks for the card at once.
            if !key.usable_now() {
                continue;
            }
            let port = if local.port() == 0 {
                0
            } else {
                local.port().saturating_add(1 + i as u16)
            };
            let mut listened = key.listen(SocketAddr::new(local.ip(), port), &cfg);
            if listened.is_err() && port != 0 {
                listened = key.listen(SocketAddr::new(local.ip(), 0), &cfg);
            }
            match listened {
                Ok(l) => listeners.push((key, l)),
                Err(e) => eprintln!("auto: cannot listen for {key} here ({e}); not offering it"),
            }
        }
        let card = Card {
            listeners: listeners
                .iter()
                .map(|(key, l)| Listening {
                    transport: key.to_string(),
                    port: l.local_addr().port(),
                })
                .collect(),
            congestion: transputation_transport::settable_congestion_controls(),
        };
        let card_json = serde_json::to_vec(&card).expect("a card serializes");
        if wire::card_datagram(0, &card_json).is_none() {
            return Err(Error::CardTooLarge);
        }
        let (tx, rx) = mpsc::channel();
        let stop = Arc::new(AtomicBool::new(false));
        let shared = Arc::new(Admission {
            planner,
            card_id: wire::card_id(&card_json),
            card_json: card_json.clone(),
            creds,
            admitting: AtomicUsize::new(0),
            timeout: cfg.io_timeout,
            out: tx,
            pending: Mutex::default(),
        });
        let stopping = stop.clone();
        spawn("auto-service", move || {
            // The probe's server reads the socket (it times train packets as they come)
            // and hands every datagram that is not the probe's to this closure.
            let served = transputation_probe::serve_until_with(&sock, &stopping, |d, from| {
                if let Ok(Datagram::CardAsk(session)) = wire::parse(d) {
                    if let Some(reply) = wire::card_datagram(session, &card_json) {
                        let _ = sock.send_to(&reply, from);
                    }
                }
            });
            if let Err(e) = served {
                eprintln!("auto: the agreement service stopped: {e}");
            }
        })?;
        for (key, listener) in listeners {
            let (stopping, shared) = (stop.clone(), shared.clone());
            let name = format!("auto-listen-{}", key.name());
            spawn(&name, move || {
                accept_loop(key, listener, &stopping, &shared)
            })?;
        }
        Ok(Service {
            local,
            card,
            connected: rx,
            stop,
        })
    }

    /// Where it answers over UDP (the listeners' ports are on its card).
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// What it serves.
    pub fn card(&self) -> &Card {
        &self.card
    }

    /// The next session whose evaluator connected and passed the handshake, waiting at
    /// most `wait`; `None` if none did. An error is a session that failed (the service
    /// goes on).
    pub fn next(&self, wait: Duration) -> Option<Result<Connected, Error>> {
        self.connected.recv_timeout(wait).ok()
    }
}

/// Tells the threads to stop and does not wait for them: each ends at its next accept or
/// read timeout (100 ms), its listener and socket with it. A garbler whose session is done
/// exits without those 100 ms.
impl Drop for Service {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Starts a thread of the service, not to be joined ([`Service`]'s drop).
fn spawn(name: &str, f: impl FnOnce() + Send + 'static) -> Result<(), Error> {
    thread::Builder::new()
        .name(name.into())
        .spawn(f)
        .map(drop)
        .map_err(|source| Error::Io {
            context: "starting the agreement service".into(),
            source,
        })
}

/// What every admission shares.
struct Admission {
    planner: Planner,
    card_json: Vec<u8>,
    card_id: String,
    creds: Option<Arc<Credentials>>,
    admitting: AtomicUsize,
    /// The sessions' I/O timeout.
    timeout: Duration,
    out: Sender<Result<Connected, Error>>,
    pending: Mutex<VecDeque<Pending>>,
}

/// Accepts on one listener until stopped, admitting each connection on a thread.
fn accept_loop(
    key: TransportSpec,
    mut listener: Listener,
    stop: &AtomicBool,
    shared: &Arc<Admission>,
) {
    let key_text = key.to_string();
    listener.set_accept_timeout(Some(Duration::from_millis(100)));
    // The last error told, so that a listener that keeps failing says so once.
    let mut told = String::new();
    while !stop.load(Ordering::Relaxed) {
        let ch = match listener.accept() {
            Ok(ch) => ch,
            Err(transputation_transport::Error::Timeout { .. }) => continue,
            Err(e) => {
                // A stray or broken connection; the listener goes on.
                let e = e.to_string();
                if e != told {
                    eprintln!("auto: {key_text}: {e}");
                    told = e;
                }
                thread::sleep(Duration::from_millis(100));
                continue;
            }
        };
        told.clear();
        if shared.admitting.fetch_add(1, Ordering::AcqRel) >= MAX_ADMITTING {
            shared.admitting.fetch_sub(1, Ordering::AcqRel);
            eprintln!("auto: {MAX_ADMITTING} connections are being admitted; closing another");
            continue;
        }
        let (a, key_text) = (shared.clone(), key_text.clone());
        let admitted = thread::Builder::new()
            .name("auto-admit".into())
            .spawn(move || {
                let peer = ch.peer_addr();
                let result = admit(ch, &key_text, &a);
                a.admitting.fetch_sub(1, Ordering::AcqRel);
                match result {
                    Ok(Some(c)) => {
                        let _ = a.out.send(Ok(c));
                    }
                    // A provisional session's move, handed to its session.
                    Ok(None) => {}
                    // An evaluator's early connection it did not need: nothing to say.
                    Err(why) if why == UNUSED => {}
                    Err(why) => eprintln!(
                        "auto: refused a connection on {key_text} from {}: {why}",
                        peer.map_or_else(|| "an unknown address".into(), |p| p.to_string())
                    ),
                }
            });
        if admitted.is_err() {
            shared.admitting.fetch_sub(1, Ordering::AcqRel);
            eprintln!("auto: could not start a thread to admit a connection; closed it");
        }
    }
}

/// Reads the statement on `ch`, checks it, runs the bound handshake and tunes the sender;
/// or, for a move, hands `ch` to its provisional session (`None`).
fn admit(mut ch: Box<dyn Channel>, key: &str, a: &Admission) -> Result<Option<Connected>, String> {
    let (st, st_json) = match read_opening(&mut *ch)? {
        Opening::Statement(st, json) => (st, json),
        Opening::Move(m) => return take_move(ch, key, a, m).map(|()| None),
    };
    let transport = match a.planner.admit(&st, &a.card_id, key) {
        Ok(t) => t,
        Err(why) => return Err(refuse(&mut *ch, why)),
    };
    let binding = wire::binding(st.session, &a.card_json, &st_json);
    // Taken before the secure channel wraps the channel (it does not forward it).
    let tuning = ch.sender_tuning();
    // A provisional session's sending may move: under the protection, so that what moves
    // is the protected stream.
    // Its wait for the move is kept before the handshake: the evaluator's move may come
    // while it runs (its probe may have settled already). An entry lives only while its
    // session's end does, so strangers whose handshakes fail hold at most
    // `MAX_ADMITTING` of them at a time.
    if st.race.len() > MAX_LANES || (!st.race.is_empty() && st.moves.is_none()) {
        return Err(refuse(
            &mut *ch,
            format!(
                "a race of {} lanes (1 to {MAX_LANES}, with a commitment)",
                st.race.len()
            ),
        ));
    }
    let (ch, moved, race) = match &st.moves {
        None => (ch, None, None),
        Some(commitment) => wait_for_connections(ch, &st, commitment, a)?,
    };
    let t = Instant::now();
    let (channel, handshake) = match &a.creds {
        None => (ch, Duration::ZERO),
        Some(creds) => match SecureChannel::server_bound(ch, creds, &binding) {
            Ok(s) => (Box::new(s) as Box<dyn Channel>, t.elapsed()),
            Err(e) => return Err(format!("its handshake failed: {e}")),
        },
    };
    // A provisional statement's path is no measurement: the sender stays as accepted.
    if st.moves.is_none() || !st.race.is_empty() {
        tune(tuning, a, &transport, &st.path);
    }
    Ok(Some(Connected {
        session: st.session,
        peer: channel.peer_addr(),
        transport,
        decision: st.decision,
        path: st.path,
        failed: st.failed,
        channel,
        handshake,
        moved,
        race,
    }))
}

/// The channel of a session that waits for connections to come (`commitment` is the
/// SHA-256 of the secret they show): a provisional session's move ([`Moving`]) or a raced
/// session's lanes ([`Racing`]), with what tells their outcome. Its entry is kept from
/// before the handshake: the evaluator's connections may come while it runs. An entry
/// lives only while its session's end does, so strangers whose handshakes fail hold at
/// most `MAX_ADMITTING` of them at a time.
#[allow(clippy::type_complexity)]
fn wait_for_connections(
    ch: Box<dyn Channel>,
    st: &Statement,
    commitment: &str,
    a: &Admission,
) -> Result<(Box<dyn Channel>, Option<MoveNews>, Option<RaceNews>), String> {
    let (ch, offer, alive, moved, race): (Box<dyn Channel>, _, _, _, _) = if st.race.is_empty() {
        let (offer, offered) = mpsc::channel();
        let moving = Moving::new(ch, offered);
        let news = MoveNews {
            to: Arc::default(),
            switched: moving.switched(),
        };
        let alive = moving.alive();
        (
            Box::new(moving),
            Offer::Move(offer),
            alive,
            Some(news.clone()),
            None,
        )
    } else {
        let (offer, offered) = mpsc::channel();
        let racing = Racing::new(ch, st.race.len(), offered, a.timeout);
        let news = RaceNews {
            lanes: st.race.clone(),
            outcome: racing.outcome(),
        };
        let alive = racing.alive();
        let offer = Offer::Race {
            lanes: st.race.clone(),
            offer,
            joined: vec![false; st.race.len()],
        };
        (Box::new(racing), offer, alive, None, Some(news))
    };
    let mut pending = a
        .pending
        .lock()
        .map_err(|_| "a poisoned lock".to_string())?;
    pending.retain(|p| p.alive.strong_count() > 0);
    if pending.len() >= MAX_PENDING {
        pending.pop_front();
    }
    pending.push_back(Pending {
        session: st.session,
        commitment: commitment.to_string(),
        offer,
        news: moved.clone().unwrap_or_default(),
        alive,
    });
    Ok((ch, moved, race))
}

/// Tunes an accepted channel's sending to `transport` on `path`, the stated one; a
/// refusal only slows the session.
fn tune(
    tuning: Option<Arc<dyn transputation_transport::TuneSender>>,
    a: &Admission,
    transport: &TransportSpec,
    path: &Path,
) {
    let hint = SenderHint {
        // For a connection made while the path was probed, without timing it itself
        // (`while_probing`). A later connection's `blast` starts at the larger of this
        // and its own train's rate (each reads a fast path low), or keeps its train's if
        // the client's RATE came before this hint.
        start_rate: Some(path.rate as u64),
        ..transport.sender_hint(Some(a.planner.buffer(path) as usize))
    };
    if let Some(tuning) = tuning {
        if let Err(e) = tuning.apply(&hint) {
            // Sender settings are this side's alone: the session runs, only slower.
            eprintln!(
                "auto: could not send as {transport} asks ({e}); sending as the listener does"
            );
        }
    }
}

/// Says `why` on `ch` in place of what would have come (so that the evaluator can tell
/// its user), closes it, and gives `why`.
fn refuse(ch: &mut dyn Channel, why: String) -> String {
    let _ = ch.send(&wire::refusal_bytes(&why));
    let _ = ch.close();
    why
}

/// Hands `ch` to the provisional session `m` names, if `m` shows that session's secret
/// and states a setting of this listener that the garbler would consider on the path it
/// states (checked as a statement is), tuned as that statement would have been.
fn take_move(mut ch: Box<dyn Channel>, key: &str, a: &Admission, m: Move) -> Result<(), String> {
    // A race's lanes connect beside the session's first connection, and one may be read
    // before its statement is: it waits for it a while.
    let waiting = Instant::now();
    let found = loop {
        match find_pending(a, &m)? {
            Some(Ok(found)) => break found,
            Some(Err(why)) => return Err(refuse(&mut *ch, why)),
            None if m.lane.is_some() && waiting.elapsed() < LANE_WAIT => {
                thread::sleep(Duration::from_millis(1));
            }
            None => {
                return Err(refuse(
                    &mut *ch,
                    "a move for no provisional session of this garbler (or with the wrong \
                     secret)"
                        .into(),
                ))
            }
        }
    };
    // As the statement it replaces (or adds to), on this garbler's card and scheme.
    let st = Statement {
        session: m.session,
        card: a.card_id.clone(),
        scheme: a.planner.scheme().to_string(),
        path: m.path,
        decision: m.decision.clone(),
        failed: Vec::new(),
        moves: None,
        race: Vec::new(),
    };
    let transport = match a.planner.admit(&st, &a.card_id, key) {
        Ok(t) => t,
        Err(why) => return Err(refuse(&mut *ch, format!("the move: {why}"))),
    };
    tune(ch.sender_tuning(), a, &transport, &m.path);
    match found {
        Found::Lane(lane, offer) => offer
            .send((lane, ch))
            .map_err(|_| "a race lane for a session that has ended".to_string()),
        Found::Move(news, offer) => {
            if let Ok(mut news) = news.to.lock() {
                *news = Some(MovedTo {
                    transport: transport.clone(),
                    decision: m.decision,
                    path: m.path,
                });
            }
            offer
                .send(ch)
                .map_err(|_| "a move for a session that has ended".to_string())
        }
    }
}

/// The session a move or a race's lane is for.
enum Found {
    /// A provisional session's move (its entry taken).
    Move(MoveNews, Sender<Box<dyn Channel>>),
    /// A raced session's lane (its entry left for the other lanes).
    Lane(usize, Sender<(usize, Box<dyn Channel>)>),
}

/// The waiting session `m` shows the secret of, if it is one `m` may join, else why not;
/// `None` where no session's secret is shown.
fn find_pending(a: &Admission, m: &Move) -> Result<Option<Result<Found, String>>, String> {
    let mut pending = a
        .pending
        .lock()
        .map_err(|_| "a poisoned lock".to_string())?;
    let Some(i) = pending
        .iter()
        .position(|p| p.session == m.session && wire::opens(&m.secret, &p.commitment))
    else {
        return Ok(None);
    };
    Ok(Some(match (&mut pending[i].offer, m.lane) {
        (Offer::Move(_), None) => {
            let p = pending.remove(i).expect("found");
            let Offer::Move(offer) = p.offer else {
                unreachable!("matched above")
            };
            Ok(Found::Move(p.news, offer))
        }
        (
            Offer::Race {
                lanes,
                offer,
                joined,
            },
            Some(lane),
        ) => match lanes.get(lane) {
            Some(_) if joined[lane] => Err(format!("a second join of race lane {lane}")),
            Some(l) if *l == m.decision.transport => {
                joined[lane] = true;
                Ok(Found::Lane(lane, offer.clone()))
            }
            _ => Err(format!(
                "a race lane {lane} ({}) that its statement did not name",
                m.decision.transport
            )),
        },
        (Offer::Move(_), Some(_)) => Err("a race lane for a session that does not race".into()),
        (Offer::Race { .. }, None) => Err("a move for a session that races".into()),
    }))
}

/// Why a connection closed in good order before its first byte was not admitted: an
/// evaluator connects early to the listeners it may choose and closes the ones it did not
/// ([`crate::Client::connect_early`]).
const UNUSED: &str = "closed before a statement";

/// What a connection opens with.
enum Opening {
    /// A statement, and its JSON.
    Statement(Statement, Vec<u8>),
    /// A provisional session's move.
    Move(Move),
}

/// The statement or move at the start of `ch`.
fn read_opening(ch: &mut dyn Channel) -> Result<Opening, String> {
    let mut header = [0u8; FRAME_HEADER];
    ch.recv(&mut header).map_err(|e| match e {
        transputation_transport::Error::Closed { .. } => UNUSED.to_string(),
        e => format!("no statement: {e}"),
    })?;
    let (is_move, n) = wire::opening_length(&header).map_err(|e| e.to_string())?;
    let mut json = vec![0u8; n];
    ch.recv(&mut json)
        .map_err(|e| format!("a statement cut short: {e}"))?;
    if is_move {
        return wire::parse_move(&json)
            .map(Opening::Move)
            .map_err(|e| e.to_string());
    }
    let st = wire::parse_statement(&json).map_err(|e| e.to_string())?;
    Ok(Opening::Statement(st, json))
}
