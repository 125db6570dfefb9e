//! The evaluator's side of `--transport auto` and what both parties share of it (the
//! agreement itself is the `transputation-auto` crate's): `--transport` as the parties
//! take it, the path measured or recalled from the probe cache with the garbler's card,
//! the decision and the connection over it, and the report of it.

use std::fmt;
use std::net::SocketAddr;
use std::sync::{mpsc, Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use transputation_auto::{wire::Card, wire::Decision, Agreement, Client, Planner, Raced, Started};
use transputation_circuits::Circuit;
use transputation_contract::{AutoReport, RaceReport};
use transputation_garble::Scheme;
use transputation_model::Path;
use transputation_probe::{self as probe, ProbeCache, QuickSettings};
use transputation_transport::{Channel, Config, TransportSpec};

use crate::transport_cmd::parse_spec_here;

/// `--transport`: a transport by name, or `auto`.
#[derive(Clone, Debug)]
pub(crate) enum TransportArg {
    /// This transport.
    Named(TransportSpec),
    /// The one the model predicts fastest, agreed before the session.
    Auto,
    /// `auto:race`: as `auto`, with the settings predicted nearly as fast racing the first
    /// part of the tables side by side.
    AutoRace,
}

impl fmt::Display for TransportArg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportArg::Named(s) => s.fmt(f),
            TransportArg::Auto => f.write_str("auto"),
            TransportArg::AutoRace => f.write_str("auto:race"),
        }
    }
}

/// Parses `--transport`: `auto`, `auto:race`, or a transport of this build that works
/// here.
pub(crate) fn parse_transport_arg(s: &str) -> Result<TransportArg, String> {
    match s {
        "auto" => return Ok(TransportArg::Auto),
        "auto:race" => return Ok(TransportArg::AutoRace),
        _ => {}
    }
    parse_spec_here(s).map(TransportArg::Named)
}

/// The path as the evaluator knows it, and what it cost to know.
pub(crate) struct Known {
    pub(crate) path: Path,
    /// `cache` or `probe`.
    pub(crate) from: &'static str,
    /// The probe's time, ms (0 from the cache).
    pub(crate) probe_ms: f64,
    /// The garbler's card kept with a cached path (its JSON), if any.
    pub(crate) card: Option<String>,
    /// Where to leave the garbler's card for a probe still measuring (it caches the card
    /// with its measurement if that is written after the session cached the card).
    pub(crate) card_for_probe: Option<Arc<Mutex<Option<String>>>>,
}

/// Measures the path to `server` with the whole quick probe, or recalls it from the cache
/// if it is at most `ttl` old (0: always probe): for `select --connect`, which decides
/// nothing before the probe is done. (A session's evaluator goes ahead as soon as its
/// decision is settled: [`evaluator_connect`].)
pub(crate) fn know_path(server: SocketAddr, ttl: Duration) -> Result<Known> {
    let cache = ProbeCache::in_user_cache().filter(|_| !ttl.is_zero());
    if let Some(known) = recall(cache.as_ref(), server, ttl, None)? {
        return Ok(known);
    }
    Probing::start(server, ttl, cache)?.until_settled(|_, _| false)
}

/// Whether the decision on `card` is settled on the probe's measurement so far `m`, with
/// the next train costing `cost` ([`Planner::settled`]).
fn settles(planner: &Planner, card: &Card, m: &probe::Measurement, cost: Duration) -> bool {
    let Ok(path) = transputation_auto::path_of(m) else {
        return false;
    };
    planner.settled(
        card,
        &path,
        cost.as_secs_f64(),
        transputation_auto::rate_headroom(m),
    )
}

/// The quick probe running on a thread of its own, asking after each train whether to
/// stop ([`Probing::until_settled`]); it writes its final measurement to the cache, also
/// after the session went ahead without it.
struct Probing {
    server: SocketAddr,
    news: mpsc::Receiver<ProbeNews>,
    /// A train reported while nothing could be decided on it yet
    /// ([`Probing::keep_measuring`]), with the answer to give if it is still owed, and
    /// the probe's end if it came meanwhile.
    reported: Option<(probe::Measurement, Duration, Option<mpsc::SyncSender<bool>>)>,
    done: Option<Result<probe::Measurement, probe::Error>>,
    started: Instant,
    card_slot: Arc<Mutex<Option<String>>>,
}

impl Probing {
    fn start(server: SocketAddr, ttl: Duration, cache: Option<ProbeCache>) -> Result<Probing> {
        let started = Instant::now();
        let sock = probe::prober_socket(server).context("opening the probe's socket")?;
        let (tx, rx) = mpsc::channel::<ProbeNews>();
        let card_slot: Arc<Mutex<Option<String>>> = Arc::default();
        let card_later = card_slot.clone();
        thread::Builder::new()
            .name("auto-probe".into())
            .spawn(move || {
                let news = tx.clone();
                let measured = probe::probe_quick_until(
                    sock,
                    server,
                    &QuickSettings::default(),
                    || eprintln!("auto: waiting for the garbler's probe service at {server}"),
                    |m, cost| {
                        let (answer, stop) = mpsc::sync_channel(1);
                        if news
                            .send(ProbeNews::Train(m.clone(), cost, answer))
                            .is_err()
                        {
                            // The session went ahead: measuring on for the cache, a train
                            // at a time while each is cheap.
                            return !next_train_is_cheap(m);
                        }
                        stop.recv().unwrap_or(false)
                    },
                );
                if let (Ok(m), Some(c)) = (&measured, &cache) {
                    if let Err(e) = c.put(server, m, ttl) {
                        eprintln!("auto: the path was measured but not cached: {e}");
                    }
                    // The session, done before this measurement was, found no entry for
                    // its card: it is kept with the measurement.
                    let card = card_later.lock().ok().and_then(|c| c.clone());
                    if let Some(card) = card {
                        let _ = c.set_service(server, &card);
                    }
                }
                let _ = tx.send(ProbeNews::Done(measured));
            })
            .context("starting the probe")?;
        Ok(Probing {
            server,
            news: rx,
            reported: None,
            done: None,
            started,
            card_slot,
        })
    }

    /// Tells the probe to measure on after a train reported while the card has not come
    /// (nothing is settled then), if its next train is cheap ([`next_train_is_cheap`]);
    /// a dearer one waits for [`Probing::until_settled`], which may not need it.
    fn keep_measuring(&mut self) {
        if matches!(self.reported, Some((_, _, Some(_)))) {
            return;
        }
        while let Ok(news) = self.news.try_recv() {
            match news {
                ProbeNews::Train(m, cost, answer) => {
                    if next_train_is_cheap(&m) {
                        let _ = answer.send(false);
                        self.reported = Some((m, cost, None));
                    } else {
                        self.reported = Some((m, cost, Some(answer)));
                        return;
                    }
                }
                ProbeNews::Done(m) => self.done = Some(m),
            }
        }
    }

    /// The path once `settled` says so after a train (or the probe is done), with the
    /// time it took; the probe measures on for the cache while its trains are cheap. A
    /// train reported before ([`Probing::keep_measuring`]) is asked about first.
    fn until_settled(
        mut self,
        mut settled: impl FnMut(&probe::Measurement, Duration) -> bool,
    ) -> Result<Known> {
        let (done, reported) = (self.done.take(), self.reported.take());
        let known = |m: &probe::Measurement| -> Result<Known> {
            Ok(Known {
                path: transputation_auto::path_of(m).map_err(anyhow::Error::msg)?,
                from: "probe",
                probe_ms: self.started.elapsed().as_secs_f64() * 1e3,
                card: None,
                card_for_probe: Some(self.card_slot.clone()),
            })
        };
        if let Some(m) = done {
            let server = self.server;
            return known(&m.with_context(|| format!("probing the path to {server}"))?);
        }
        // A train reported while the card came: settled on it, the session need not wait
        // for the next (on its way if it was cheap, else not sent).
        if let Some((m, cost, answer)) = reported {
            let done = settled(&m, cost);
            if let Some(answer) = answer {
                let _ = answer.send(done && !next_train_is_cheap(&m));
            }
            if done {
                return known(&m);
            }
        }
        loop {
            let news = self
                .news
                .recv()
                .context("the probe's thread ended without a measurement")?;
            let (m, cost, answer) = match news {
                ProbeNews::Done(m) => {
                    let server = self.server;
                    return known(&m.with_context(|| format!("probing the path to {server}"))?);
                }
                ProbeNews::Train(m, cost, answer) => (m, cost, answer),
            };
            if !settled(&m, cost) {
                let _ = answer.send(false);
                continue;
            }
            let _ = answer.send(!next_train_is_cheap(&m));
            return known(&m);
        }
    }
}

/// What the probe's thread tells the evaluator: a train's measurement so far, the next
/// train's cost and where to answer whether to stop; or its end.
enum ProbeNews {
    Train(probe::Measurement, Duration, mpsc::SyncSender<bool>),
    Done(Result<probe::Measurement, probe::Error>),
}

/// Whether the quick probe's next train takes the link for at most a quarter of a round
/// trip and at most [`QUEUE_SAFE`], at twice the rate the first train read (a short train
/// reads a fast link low) or at the rate a later one read: then it may go beside a
/// session that has settled, for the cache, holding up the session's messages behind it
/// at the bottleneck by no more than that, and without overflowing the bottleneck's queue
/// into them. Asked again after each train, so that on a fast long path the second train
/// (256 packets) goes where the third would cost too much, and the cache keeps a rate read
/// over more than the first train's 0.6 ms at 500 Mbit/s. (Measuring on is not free: on a
/// 50 ms, 500 Mbit/s link AES-128's cold session took 9–17 ms longer in its OT with it,
/// both trains sent under a bound of half a round trip or the second alone under this
/// one; without the queue's bound, the second train overran a 200 ms, 50 Mbit/s link's
/// 125 kB queue and the session lost a packet of its OT and two round trips.)
fn next_train_is_cheap(m: &probe::Measurement) -> bool {
    let Some(mbps) = m
        .bandwidth_mbps
        .or(m.bandwidth_floor_mbps)
        .filter(|r| *r > 0.0)
    else {
        return false;
    };
    let Some(bytes) = QuickSettings::default().train_bytes(m.trains as usize) else {
        return false;
    };
    let optimism = if m.trains <= 1 { 2.0 } else { 1.0 };
    let seconds = bytes * 8.0 / (optimism * mbps * 1e6);
    seconds <= m.rtt_ms_min / 4e3 && seconds <= QUEUE_SAFE.as_secs_f64()
}

/// The most link time a train sent beside a session may take: half of a bottleneck queue
/// of 20 ms of its link (the testbed emulator's queues hold 20–24 ms: 1.25 MB at
/// 500 Mbit/s, 125 kB at 50, 48 kB at 16), so that the session's own packets still fit
/// behind it.
const QUEUE_SAFE: Duration = Duration::from_millis(10);

/// The cached path to `server`, if it serves this session (see [`know_path`]).
fn recall(
    cache: Option<&ProbeCache>,
    server: SocketAddr,
    ttl: Duration,
    planner: Option<&Planner>,
) -> Result<Option<Known>> {
    let Some(hit) = cache.and_then(|c| c.get(server, ttl)) else {
        return Ok(None);
    };
    let path = transputation_auto::path_of(&hit.measurement).map_err(anyhow::Error::msg)?;
    // Measuring again costs a fresh probe up to its second train.
    let cost = transputation_auto::reprobe_cost(&path);
    let headroom = transputation_auto::rate_headroom(&hit.measurement);
    let settles = |planner: &Planner| {
        hit.service
            .as_deref()
            .and_then(|j| transputation_auto::wire::parse_card(j.as_bytes()).ok())
            .is_some_and(|card| planner.settled(&card, &path, cost, headroom))
    };
    // A path where a fresh probe sends no second train either: probing again costs its
    // first train (on a 16 Mbit/s link, 20 ms of the link beside the session) and adds
    // only that train's 32 packets of loss evidence to the entry, where `settled` counts
    // on a second train's 256. On the grid's Choose Wisely Wi-Fi link five of the six
    // sessions probed anew and ran 15-21 ms behind kernel TCP (AES-128 154 ms against 139).
    let grows = QuickSettings::default().grows_on(Duration::from_secs_f64(path.rtt), path.rate);
    if hit.measurement.trains > 1 || !grows || planner.is_none_or(settles) {
        return Ok(Some(Known {
            path,
            from: "cache",
            probe_ms: 0.0,
            card: hit.service,
            card_for_probe: None,
        }));
    }
    Ok(None)
}

/// The evaluator's connection under `auto`: the agreement, the channel over the choice
/// and what to report.
pub(crate) struct AutoConnection {
    pub(crate) agreement: Agreement,
    pub(crate) channel: Box<dyn Channel>,
    pub(crate) report: AutoReport,
    /// For a session started at once, or raced: the transport its tables went on and the
    /// report of the decision, once known.
    pub(crate) settled: Option<SettledLater>,
}

/// Where a session started at once or raced tells the transport its tables went on and
/// the report of its decision, once known (before that, the agreement's stand).
pub(crate) type SettledLater = Box<dyn Fn() -> Option<(String, AutoReport)> + Send + Sync>;

/// The transport a provisional session's tables went on and the report of its decision,
/// once settled.
pub(crate) type SettledReport = Arc<Mutex<Option<(transputation_auto::Settled, AutoReport)>>>;

/// The transport that carried the tables of a session started at once and its report,
/// once the probe has settled and, if the tables were to move, they have.
pub(crate) fn settled_now(told: &SettledReport) -> Option<(String, AutoReport)> {
    let told = told.lock().ok()?;
    let (settled, report) = told.as_ref()?;
    let carried = settled.carried()?;
    let mut report = report.clone();
    // Staying, the probe's choice may be another setting of the connection (its
    // controller): the report names what ran.
    report.chosen = carried.to_string();
    Some((carried.to_string(), report))
}

/// Asks for the garbler's card, knows the path, decides, and connects over the choice
/// (falling back while a choice does not connect), within `cfg`'s connect budget. With the
/// path measured, the decision goes ahead as soon as it is settled ([`Planner::settled`],
/// once the garbler's card has come), and the probe measures on for the cache a train at
/// a time while that is cheap ([`next_train_is_cheap`]); a cached measurement of the first
/// train alone serves a session only if its decision is settled on it too, with the cached
/// card. A cold session whose traffic allows it connects early
/// ([`Client::connect_early`]), and on a short path starts at once over its early `tcp`
/// connection, moving the garbler's sending once the probe has settled
/// ([`transputation_auto::Mover`]). The card is kept with the path in the probe cache, so
/// that the next session within `cache_ttl` connects at once.
pub(crate) fn evaluator_connect(
    circuit: &Circuit,
    scheme: Scheme,
    server: SocketAddr,
    cfg: &Config,
    cache_ttl: Duration,
    race: bool,
) -> Result<AutoConnection> {
    // Asked first: the card comes back while the path is measured.
    let mut client = Client::ask(server)?;
    let (calibration, _) = crate::calibration::load_calibration(None)?;
    let planner = Planner::new(circuit, scheme, calibration)?;
    let cache = ProbeCache::in_user_cache().filter(|_| !cache_ttl.is_zero());
    let known = match recall(cache.as_ref(), server, cache_ttl, Some(&planner))? {
        Some(known) => known,
        None => {
            // A raced session's tables are large: nothing starts before the decision.
            let early = planner.fits_early() && !race;
            if early {
                client.connect_early(cfg);
            }
            let mut probing = Probing::start(server, cache_ttl, cache.clone())?;
            if early {
                // The probe measures on while the card comes.
                let card = client
                    .card_while(Duration::from_millis(50), cfg.connect_budget(), || {
                        probing.keep_measuring()
                    })
                    .with_context(|| format!("asking the garbler at {server} for its card"))?;
                let started = client
                    .start_provisional(&planner, card, cfg, cfg.connect_budget())
                    .with_context(|| format!("starting a session with the garbler at {server}"))?;
                if let Some(started) = started {
                    return Ok(provisional(started, probing, planner, cfg, cache));
                }
            }
            probing.until_settled(|m, cost| {
                client
                    .card_now()
                    .is_some_and(|card| settles(&planner, &card, m, cost))
            })?
        }
    };
    let t = Instant::now();
    if race {
        let raced_now = client
            .connect_race(&planner, &known.path, cfg, cfg.connect_budget())
            .with_context(|| format!("starting a race with the garbler at {server}"))?;
        if let Some(r) = raced_now {
            keep_card(
                cache.as_ref(),
                server,
                &r.agreement,
                known.card_for_probe.as_ref(),
            );
            return Ok(raced(r, &known, t.elapsed().as_secs_f64() * 1e3));
        }
    }
    let (agreement, channel) = client
        .connect(
            &planner,
            &known.path,
            known.card.as_deref().map(str::as_bytes),
            cfg,
            cfg.connect_budget(),
        )
        .with_context(|| format!("agreeing on a transport with the garbler at {server}"))?;
    let agree_ms = t.elapsed().as_secs_f64() * 1e3;
    keep_card(
        cache.as_ref(),
        server,
        &agreement,
        known.card_for_probe.as_ref(),
    );
    eprintln!(
        "auto: {} ({}; card from the {}{}), predicted {:.0} ms: {}",
        agreement.transport,
        describe_path(&known.path),
        agreement.card_from,
        if agreement.early {
            ", connected early"
        } else {
            ""
        },
        agreement.decision.predicted_ms,
        agreement.decision.why
    );
    let report = report(
        &agreement.decision,
        &known.path,
        known.from,
        Some(known.probe_ms),
        Some(agree_ms),
        &agreement.failed,
    );
    Ok(AutoConnection {
        agreement,
        channel,
        report,
        settled: None,
    })
}

/// Caches the garbler's card the session agreed on beside the path (and leaves it for a
/// probe still measuring, which caches its measurement later).
fn keep_card(
    cache: Option<&ProbeCache>,
    server: SocketAddr,
    agreement: &Agreement,
    for_probe: Option<&Arc<Mutex<Option<String>>>>,
) {
    let Some(cache) = cache else {
        return;
    };
    let card = String::from_utf8_lossy(&agreement.card_json);
    if let Some(slot) = for_probe {
        if let Ok(mut slot) = slot.lock() {
            *slot = Some(card.to_string());
        }
    }
    if let Err(e) = cache.set_service(server, &card) {
        eprintln!("auto: the garbler's card was not cached: {e}");
    }
}

/// A session started at once: its connection, and a thread that waits for the probe to
/// settle and moves the garbler's sending to the choice
/// ([`transputation_auto::Mover::settle`]), telling the outcome in the connection's
/// `settled`.
fn provisional(
    Started {
        agreement,
        channel,
        mover,
    }: Started,
    probing: Probing,
    planner: Planner,
    cfg: &Config,
    cache: Option<ProbeCache>,
) -> AutoConnection {
    let started = report(
        &agreement.decision,
        &Path::exact(0.0, 0.0, 0.0),
        "none yet",
        None,
        Some(0.0),
        &[],
    );
    eprintln!(
        "auto: started at once over {} (a short path; the probe decides beside the session)",
        agreement.transport
    );
    let settled: SettledReport = Arc::default();
    let (told, card) = (settled.clone(), agreement.card_json.clone());
    let (cfg, server) = (cfg.clone(), agreement.addr);
    let (keep, agreed) = (cache, agreement.clone());
    let moving = thread::Builder::new()
        .name("auto-move".into())
        .spawn(move || {
            let card = transputation_auto::wire::parse_card(&card).expect("the card was read");
            let known = match probing.until_settled(|m, cost| settles(&planner, &card, m, cost)) {
                Ok(known) => known,
                Err(e) => {
                    eprintln!("auto: {e:#}; the session stays on {}", agreed.transport);
                    return;
                }
            };
            keep_card(
                keep.as_ref(),
                server,
                &agreed,
                known.card_for_probe.as_ref(),
            );
            let t = Instant::now();
            // Told before the session can see a move, so that its report names it.
            let tell = |s: &transputation_auto::Settled| {
                let r = report(
                    &s.decision,
                    &known.path,
                    known.from,
                    Some(known.probe_ms),
                    Some(t.elapsed().as_secs_f64() * 1e3),
                    &[],
                );
                if let Ok(mut told) = told.lock() {
                    *told = Some((s.clone(), r));
                }
            };
            match mover.settle(&planner, &known.path, &cfg, tell) {
                Ok(s) => eprintln!(
                    "auto: {} ({}; started at once over {}{}), predicted {:.0} ms: {}",
                    s.decision.transport,
                    describe_path(&known.path),
                    agreed.transport,
                    if s.moved {
                        ", the garbler's sending asked to move to it"
                    } else {
                        ", staying there"
                    },
                    s.decision.predicted_ms,
                    s.decision.why
                ),
                Err(e) => eprintln!("auto: {e}; the session stays on {}", agreed.transport),
            }
        });
    if let Err(e) = moving {
        eprintln!("auto: could not start deciding beside the session ({e}); it stays on tcp");
    }
    AutoConnection {
        agreement,
        channel,
        report: started,
        settled: Some(Box::new(move || settled_now(&settled))),
    }
}

/// A raced session's connection: its report names the race, and once the verdict is in,
/// the winner as the transport that carried the tables.
fn raced(raced: Raced, known: &Known, agree_ms: f64) -> AutoConnection {
    let mut report = report(
        &raced.agreement.decision,
        &known.path,
        known.from,
        Some(known.probe_ms),
        Some(agree_ms),
        &[],
    );
    report.race = Some(RaceReport {
        lanes: raced.lanes.clone(),
        budget_bytes: Some(raced.budget),
        started: false,
        winner: None,
        lane_bytes: Vec::new(),
        resent_chunks: None,
    });
    eprintln!(
        "auto:race: {} ({}), racing {} over the first {:.1} MB of the tables",
        raced.agreement.transport,
        describe_path(&known.path),
        raced.lanes.join(" and "),
        raced.budget as f64 / 1e6
    );
    let (outcome, base, lanes) = (raced.outcome, report.clone(), raced.lanes);
    AutoConnection {
        agreement: raced.agreement,
        channel: raced.channel,
        report,
        settled: Some(Box::new(move || {
            let o = outcome.lock().ok()?.clone();
            let (carrier, winner) = race_carrier(&lanes, &o)?;
            let mut r = base.clone();
            r.chosen = carrier.clone();
            if let Some(race) = &mut r.race {
                race.started = o.started;
                race.winner = winner;
                race.lane_bytes = o.lane_bytes;
            }
            Some((carrier, r))
        })),
    }
}

/// The transport that carried a race's tables as both parties name it, and the winner:
/// the winner once named; the first lane's (the connection the session started on) for a
/// race that started and ended without a verdict; `None` before either is known.
pub(crate) fn race_carrier(
    lanes: &[String],
    o: &transputation_auto::racing::RaceOutcome,
) -> Option<(String, Option<String>)> {
    match o.winner {
        Some(w) => {
            let winner = lanes.get(w)?.clone();
            Some((winner.clone(), Some(winner)))
        }
        None if o.started && !o.lane_bytes.is_empty() => Some((lanes.first()?.clone(), None)),
        None => None,
    }
}

/// What a party reports of the agreement.
pub(crate) fn report(
    d: &Decision,
    path: &Path,
    from: &str,
    probe_ms: Option<f64>,
    agree_ms: Option<f64>,
    failed: &[String],
) -> AutoReport {
    AutoReport {
        chosen: d.transport.clone(),
        predicted_ms: d.predicted_ms,
        why: d.why.clone(),
        rtt_ms: path.rtt * 1e3,
        rate_mbps: path.rate * 8e-6,
        loss: path.loss,
        loss_upper: path.loss_upper,
        path_from: from.into(),
        probe_ms,
        agree_ms,
        failed: failed.to_vec(),
        ranked: d
            .ranked
            .iter()
            .map(|p| (p.transport.clone(), p.ms))
            .collect(),
        race: None,
    }
}

pub(crate) fn describe_path(p: &Path) -> String {
    let mut s = format!(
        "RTT {} ms, {} Mbit/s, loss {}",
        trim(p.rtt * 1e3),
        trim(p.rate * 8e-6),
        percent(p.loss)
    );
    if p.loss_upper > p.loss {
        s.push_str(&format!(" (at most {})", percent(p.loss_upper)));
    }
    s
}

fn percent(p: f64) -> String {
    format!("{} %", trim(p * 100.0))
}

/// A number with up to three significant decimals, no trailing zeros.
fn trim(x: f64) -> String {
    let s = if x >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.3}")
    };
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// The `--transport` help of the parties: the registry's names, and `auto`.
pub(crate) fn session_transport_help() -> String {
    format!(
        "{} Or auto: the garbler listens for every transport the model may choose (on the \
         ports after its --listen port) and answers on its --listen port over UDP; the \
         evaluator measures the path (or recalls it, --probe-cache), predicts every \
         transport both have, connects over the fastest to the output (see `transputation \
         select`), and the protected handshake confirms the choice. auto:race (the evaluator's; \
         the garbler runs auto): as auto, and the settings predicted within 1.5x of the \
         choice race the first quarter of the tables side by side, the rest going over the \
         one that delivered most (for tables of 4 MiB or more; smaller ones run as auto).",
        crate::transport_cmd::transport_help()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use transputation_probe::LossEvidence;

    fn first_train(rtt_ms: f64, mbps: f64) -> probe::Measurement {
        probe::Measurement {
            rtt_ms_min: rtt_ms,
            rtt_ms_median: rtt_ms,
            rtt_ms_max: rtt_ms,
            loss_rate: 0.0,
            bandwidth_mbps: Some(mbps),
            pings_sent: 5,
            pings_answered: 5,
            train_sent: 32,
            train_received: 32,
            packet_bytes: 1200,
            loss_evidence: LossEvidence::new(32, 0),
            overflow_packets: 0,
            bandwidth_floor_mbps: None,
            trains: 1,
            duration_ms: rtt_ms,
            rate_kernel_timed: false,
        }
    }

    #[test]
    fn a_first_train_alone_serves_where_a_fresh_probe_sends_no_second() {
        let dir = tempfile::tempdir().unwrap();
        let cache = ProbeCache::at(dir.path().join("probe-cache.json"));
        let ttl = Duration::from_secs(600);
        let circuit = transputation_circuits::library::load("aes128").unwrap();
        let planner = Planner::new(
            &circuit,
            Scheme::Ideal,
            transputation_model::Calibration::default(),
        )
        .unwrap();
        // No card kept with either, so neither decision is settled on it: 5 ms at
        // 16 Mbit/s, where a fresh probe's second train would not pass within its budget,
        // is taken from the cache; 50 ms at 500 Mbit/s is measured again.
        let slow: SocketAddr = "127.0.0.1:7000".parse().unwrap();
        let fast: SocketAddr = "127.0.0.1:7001".parse().unwrap();
        cache.put(slow, &first_train(5.0, 16.0), ttl).unwrap();
        cache.put(fast, &first_train(50.0, 500.0), ttl).unwrap();
        let known = recall(Some(&cache), slow, ttl, Some(&planner)).unwrap();
        assert_eq!(known.map(|k| k.from), Some("cache"));
        assert!(recall(Some(&cache), fast, ttl, Some(&planner))
            .unwrap()
            .is_none());
    }

    #[test]
    fn the_next_train_is_cheap_only_where_it_takes_little_of_the_link() {
        // The second train, 256 packets, is 314 kB: 6.3 ms at twice 200 Mbit/s, within a
        // quarter of a 30 ms round trip but not of a 20 ms one.
        assert!(next_train_is_cheap(&first_train(30.0, 200.0)));
        assert!(!next_train_is_cheap(&first_train(20.0, 200.0)));
        // 12.6 ms at twice 100 Mbit/s: more than the queue's share, however long the path.
        assert!(!next_train_is_cheap(&first_train(300.0, 100.0)));
        // After the second train the third is next (1,000 packets, 1.23 MB), at the rate
        // the second read: 9.8 ms at 1 Gbit/s, 19.6 ms at 500 Mbit/s.
        let second = |rtt_ms, mbps| probe::Measurement {
            trains: 2,
            ..first_train(rtt_ms, mbps)
        };
        assert!(next_train_is_cheap(&second(50.0, 1000.0)));
        assert!(!next_train_is_cheap(&second(30.0, 1000.0)));
        assert!(!next_train_is_cheap(&second(300.0, 500.0)));
        // Nothing left after the last, and no rate means no cost known.
        let last = probe::Measurement {
            trains: 3,
            ..first_train(1000.0, 100.0)
        };
        assert!(!next_train_is_cheap(&last));
        let no_rate = probe::Measurement {
            bandwidth_mbps: None,
            ..first_train(200.0, 100.0)
        };
        assert!(!next_train_is_cheap(&no_rate));
    }
}
