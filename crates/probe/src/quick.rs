//! The quick probe ([`probe_quick`]): round trip, loss and bottleneck rate in a few round
//! trips, for a party that measures the path before a session and must not make the
//! session wait long for it.
//!
//! It runs on the same wire protocol as the full [`probe`](crate::probe):
//!
//! 1. **A ping burst and the first train, in one round trip.** The burst's pings
//!    ([`pings`](QuickSettings::pings), 5) go out without waiting for each other's
//!    answers, each carrying its send time, which the server echoes: one round trip
//!    yields every sample, and a pong that comes back late still gives its own round
//!    trip. Right behind the burst goes the first train
//!    ([`first_train`](QuickSettings::first_train), 32 packets of 1200 bytes, back to
//!    back under a session number of its own) and, 1 ms later, the request for its
//!    report, so its report comes back about when the pongs do. If the server does not
//!    answer (it may start after the prober), the burst alone is repeated every 200 ms
//!    and the first train is sent anew once the server answers. The minimum round trip
//!    is the path's propagation delay, the median what a session will see. The pings are
//!    [`ping_spacing`](QuickSettings::ping_spacing) = 250 µs apart rather than strictly
//!    back to back (1 ms for the burst): the first ping wakes the server's host, and
//!    pings right behind it all wait for that wake-up (on an idle loopback, 0.06 to
//!    0.09 ms for back-to-back pings against 0.03 to 0.05 ms for spaced ones).
//! 2. **Trains that grow**, ×[`growth`](QuickSettings::growth) = 8 each time (256, then
//!    1000 packets: [`max_train`](QuickSettings::max_train), or fewer if
//!    [`max_train_bytes`](QuickSettings::max_train_bytes) says so), each one sent only
//!    if, at the rate the last one measured, it would be through and reported on before
//!    the probe's deadline: the first ping's send + [`budget_rtts`](QuickSettings::budget_rtts)
//!    (3) median round trips + [`budget_extra`](QuickSettings::budget_extra) (50 ms).
//!    The rate is the train's dispersion as the server timed it, or where the server
//!    could not time it, the floor the prober's own clock gives
//!    ([`Measurement::bandwidth_floor_mbps`]), which never overstates the rate, so the
//!    deadline is not overrun on a rate the server misread.
//!
//! Why this shape: the first train costs no round trip of its own and 38 KB, which any
//! path carries quickly and which fits the smallest queue a link is likely to have
//! (32 full packets), and it already gives a rate and some loss evidence. A larger train
//! measures the rate better where the server times it by its reads (a 32-packet train at
//! 500 Mbit/s passes in 0.5 ms, near the timing noise of a busy host's reads, though not of
//! the kernel's receive times) and brings more loss evidence (0 losses in 32 packets
//! still allow 9 % loss at 95 %, in 288 packets 1 %, in 1288 0.23 %), but it costs its
//! transmission time and another round trip: a few milliseconds more on a fast path,
//! 157 ms for 256 packets at 16 Mbit/s, which is what the rate of the train before it
//! tells. With the budget of 3 round trips + 50 ms, the burst and the first train take
//! one round trip and a second train fits wherever it passes the bottleneck in a round
//! trip + 50 ms, a third on fast paths; the 50 ms bound the cost on a LAN, where round
//! trips are nothing. A train that the bottleneck's queue could not hold (its overflow
//! shows as a run of drops to the train's end, see [`crate::loss`]) stops the growth: a
//! larger one would only overflow more.
//!
//! Measured on the testbed's emulated links (2-core VM, `emu`; build c573a37, 2026-11-26;
//! `transputation testbed exec --rtt R --loss L --rate C --b 'transputation probe --listen
//! $TPB_ADDR_B:7000' --a 'transputation probe --connect $TPB_ADDR_B:7000 --quick --json'`):
//! 300 ms at 500 Mbit/s with 0.1 % loss, 928 ms and 3 trains (1,288 packets, none lost),
//! rate 518 Mbit/s; 0.5 ms at 1 Gbit/s, 24 ms and 3 trains, rate 622 Mbit/s (what the
//! emulator carried); 100 ms at 16 Mbit/s with 1 % loss, 246 ms and 2 trains, 2 of 72
//! packets lost before 216 were left out as the queue's overflow. On a slow long path the
//! first train alone can exceed the budget: at 370 kbit/s its 32 packets of 1,200 bytes
//! take 850 ms to pass the link (with their IP and UDP headers).
//!
//! A later train's report request goes out after a guard of the spread of the ping round
//! trips (at most 20 ms), so that packets a jittery path reorders are still counted; a
//! request is repeated every two round trips if no report comes. The first train is
//! always waited for (for at least 4 round trips + 500 ms: on a slow path its
//! transmission alone may exceed the budget), so the deadline bounds only the growth. A
//! later train whose report is not back by the deadline is left out.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use crate::error::Error;
use crate::loss::LossEvidence;
use crate::measurement::Measurement;
use crate::prober::{rtt_summary, train_result, Prober, TrainResult};
use crate::wire::{
    decode_report, packet, parse, Report, HEADER, MAX_PACKET_BYTES, PING, PONG, REPORT,
};

/// How the quick probe measures; see the [module docs](self) for the choice of defaults.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct QuickSettings {
    /// Pings in the burst for the round trip (at least 1).
    pub pings: u32,
    /// The time between the burst's pings (at most 10 ms).
    pub ping_spacing: Duration,
    /// Packets in the first train (at least 2, so that it has a dispersion).
    pub first_train: u32,
    /// Each further train is this many times the one before (at least 2).
    pub growth: u32,
    /// Packets in a train at most.
    pub max_train: u32,
    /// UDP payload bytes in a train at most (bounds trains of large packets).
    pub max_train_bytes: u64,
    /// Bytes per train packet (UDP payload; clamped to 24..=65507).
    pub packet_bytes: usize,
    /// The probe's time budget in (median) round trips, beside `budget_extra`.
    pub budget_rtts: f64,
    /// The probe's time budget beside its round trips.
    pub budget_extra: Duration,
    /// How long a silent server is waited for before giving up.
    pub patience: Duration,
}

impl Default for QuickSettings {
    fn default() -> Self {
        QuickSettings {
            pings: 5,
            ping_spacing: Duration::from_micros(250),
            first_train: 32,
            growth: 8,
            max_train: 1000,
            max_train_bytes: 2 << 20,
            packet_bytes: 1200,
            budget_rtts: 3.0,
            budget_extra: Duration::from_millis(50),
            patience: Duration::from_secs(10),
        }
    }
}

impl QuickSettings {
    /// IP bytes (IPv4) of train `index` (0: the first) of a probe that grows its trains to
    /// the end, or `None` past the last.
    pub fn train_bytes(&self, index: usize) -> Option<f64> {
        let plan = TrainPlan::new(self, SocketAddr::from(([0, 0, 0, 0], 0)));
        let packets = plan.sizes().nth(index)?;
        Some(f64::from(packets) * plan.ip_bytes)
    }

    /// The probe's time budget on a path with this round trip: `budget_rtts` × `rtt` +
    /// `budget_extra`.
    pub fn budget(&self, rtt: Duration) -> Duration {
        let rtts = if self.budget_rtts.is_finite() {
            self.budget_rtts.max(0.0)
        } else {
            0.0
        };
        Duration::try_from_secs_f64(rtt.as_secs_f64() * rtts)
            .unwrap_or(Duration::MAX)
            .saturating_add(self.budget_extra)
    }

    /// Whether a quick probe on a path of round trip `rtt` and bottleneck `rate` (bytes
    /// per second) sends its second train: the burst and the first train's report take a
    /// round trip and the first train's passage of the bottleneck, and the second must then
    /// pass it and be reported on within the [`budget`](Self::budget) (the probe's own
    /// rule, without the report's guard). Where it does not, probing such a path again
    /// gives another first train and nothing more: on the grid's 16 Mbit/s links (the
    /// second train alone takes 157 ms) and at 5 ms and 50 Mbit/s (67 ms against a
    /// budget of 65).
    pub fn grows_on(&self, rtt: Duration, rate: f64) -> bool {
        let (Some(first), Some(second)) = (self.train_bytes(0), self.train_bytes(1)) else {
            return false;
        };
        if !(rate.is_finite() && rate > 0.0) {
            return false;
        }
        let r = rtt.as_secs_f64();
        r + first / rate + second / rate + r <= self.budget(rtt).as_secs_f64()
    }
}

/// Measures the path to the server at `addr` from `sock` (bound, not connected; it is
/// connected here) in a few round trips: a ping burst with the first train behind it, then
/// trains that grow while the time budget allows (see the [module docs](self)). `waiting`
/// is called once if the server has not answered after a second. The result's `trains`,
/// `train_sent` and `train_received` count every train that was reported on; its
/// bandwidth is the last train's.
pub fn probe_quick(
    sock: UdpSocket,
    addr: SocketAddr,
    settings: &QuickSettings,
    waiting: impl FnMut(),
) -> Result<Measurement, Error> {
    probe_quick_until(sock, addr, settings, waiting, |_, _| false)
}

/// [`probe_quick`], asking `enough` after each train whether the measurement so far
/// suffices: it gets that measurement and what the next train would cost (its sending or
/// passing the bottleneck, the guard and a round trip), and the probe stops growing its
/// trains as soon as it says yes. A party that decides with the measurement (as
/// `--transport auto` does) thus pays for a larger train only where it could change the
/// decision by more than the train costs.
pub fn probe_quick_until(
    sock: UdpSocket,
    addr: SocketAddr,
    settings: &QuickSettings,
    mut waiting: impl FnMut(),
    mut enough: impl FnMut(&Measurement, Duration) -> bool,
) -> Result<Measurement, Error> {
    let mut p = Prober::connect(sock, addr)?;
    let plan = TrainPlan::new(settings, addr);
    let pings = ping_burst(&mut p, settings, &plan, &mut waiting)?;
    let Some((min, median, max)) = rtt_summary(&pings.rtts) else {
        return Err(Error::NoPongs {
            addr,
            pings: pings.sent,
        });
    };
    let spread = Duration::from_secs_f64((max - min) / 1e3);
    let timing = TrainTiming {
        rtt_min: Duration::from_secs_f64(min / 1e3),
        rtt_max: Duration::from_secs_f64(max / 1e3),
        guard: spread.min(Duration::from_millis(20)),
        deadline: later(
            pings.started,
            settings.budget(Duration::from_secs_f64(median / 1e3)),
        ),
    };
    let first_train = pings.first_train;
    let pings = PingSummary {
        min,
        median,
        max,
        sent: pings.sent,
        answered: pings.rtts.len(),
        started: pings.started,
    };
    let measured = grow_trains(&mut p, &plan, &timing, first_train, &mut |m, cost| {
        enough(&measurement_of(&pings, &plan, m), cost)
    })?;
    Ok(measurement_of(&pings, &plan, &measured))
}

/// What the ping burst measured.
struct PingSummary {
    min: f64,
    median: f64,
    max: f64,
    sent: u32,
    answered: usize,
    started: Instant,
}

/// The measurement of the burst and the trains reported on so far.
fn measurement_of(
    pings: &PingSummary,
    plan: &TrainPlan,
    measured: &[MeasuredTrain],
) -> Measurement {
    let trains: Vec<TrainResult> = measured.iter().map(|m| m.result).collect();
    let sent = trains.iter().fold(0u32, |n, t| n.saturating_add(t.sent));
    let received = trains
        .iter()
        .fold(0u32, |n, t| n.saturating_add(t.received));
    let evidence = trains.iter().fold(LossEvidence::default(), |e, t| {
        LossEvidence::new(e.sent + t.evidence.sent, e.lost + t.evidence.lost)
    });
    let floor = measured
        .iter()
        .filter_map(|m| m.floor_mbps)
        .max_by(f64::total_cmp);
    // The last train the server could time gives the rate.
    let timed = measured
        .iter()
        .rev()
        .find(|m| m.result.bandwidth_mbps.is_some());
    Measurement {
        rtt_ms_min: pings.min,
        rtt_ms_median: pings.median,
        rtt_ms_max: pings.max,
        loss_rate: if sent == 0 {
            0.0
        } else {
            1.0 - f64::from(received) / f64::from(sent)
        },
        // A dispersion below the floor is wrong (the floor is certain): the floor then.
        bandwidth_mbps: timed
            .and_then(|m| m.result.bandwidth_mbps)
            .map(|d| d.max(floor.unwrap_or(0.0))),
        rate_kernel_timed: timed.is_some_and(|m| m.result.kernel_timed),
        bandwidth_floor_mbps: floor,
        pings_sent: pings.sent,
        pings_answered: pings.answered,
        train_sent: sent,
        train_received: received,
        packet_bytes: plan.packet_bytes,
        loss_evidence: evidence,
        overflow_packets: trains.iter().map(|t| t.overflow_packets).sum(),
        trains: trains.len() as u32,
        duration_ms: pings.started.elapsed().as_secs_f64() * 1e3,
    }
}

/// `at` + `wait`, or a year after `at` if that is past what an instant holds.
fn later(at: Instant, wait: Duration) -> Instant {
    at.checked_add(wait)
        .unwrap_or_else(|| at + Duration::from_secs(365 * 86_400))
}

/// The trains' sizes.
struct TrainPlan {
    /// UDP payload bytes per packet.
    packet_bytes: usize,
    /// IP bytes per packet (payload and headers).
    ip_bytes: f64,
    first: u32,
    growth: u32,
    max: u32,
}

impl TrainPlan {
    /// Packets per train in the order the probe sends them while each may grow: the first,
    /// then `growth` times the one before, up to `max`.
    fn sizes(&self) -> impl Iterator<Item = u32> + '_ {
        std::iter::successors(Some(self.first), |&n| self.after(n))
    }

    /// The train after one of `packets`: `growth` times it up to `max`, or `None` once it
    /// cannot grow.
    fn after(&self, packets: u32) -> Option<u32> {
        let next = packets.saturating_mul(self.growth).min(self.max);
        (next > packets).then_some(next)
    }

    fn new(settings: &QuickSettings, addr: SocketAddr) -> Self {
        let packet_bytes = settings.packet_bytes.clamp(HEADER, MAX_PACKET_BYTES);
        let by_bytes =
            u32::try_from(settings.max_train_bytes / packet_bytes as u64).unwrap_or(u32::MAX);
        let first = settings.first_train.max(2);
        TrainPlan {
            packet_bytes,
            ip_bytes: (packet_bytes + crate::socket::ip_udp_headers(addr)) as f64,
            first,
            growth: settings.growth.max(2),
            max: settings.max_train.min(by_bytes).max(first),
        }
    }
}

/// A train sent, waiting for its report.
struct SentTrain {
    session: u64,
    packets: u32,
    /// Sequence numbers the local stack refused.
    unsent: Vec<u32>,
    /// How long sending it took.
    send_time: Duration,
    /// When its first packet went out.
    sent_at: Instant,
    /// Its report and when it came, if it came while the prober was reading pongs.
    report: Option<(Report, Instant)>,
}

impl SentTrain {
    fn send(p: &mut Prober, packets: u32, packet_bytes: usize) -> SentTrain {
        let session = p.train_session();
        let sent_at = Instant::now();
        let unsent = p.send_train(session, packets, packet_bytes);
        SentTrain {
            session,
            packets,
            unsent,
            send_time: sent_at.elapsed(),
            sent_at,
            report: None,
        }
    }
}

/// What the ping burst found.
struct Pings {
    /// Round trips, ms, sorted.
    rtts: Vec<f64>,
    sent: u32,
    /// When the first burst that was answered went out.
    started: Instant,
    /// The first train, sent right behind the first burst, if the server answered that
    /// burst (so it was there for the train too).
    first_train: Option<SentTrain>,
}

/// The guard between the first train, sent before any round trip is known, and its
/// report request.
const FIRST_GUARD: Duration = Duration::from_millis(1);

/// Sends the ping burst until the server answers, the first train right behind the first
/// burst; collects the answers of the first burst answered (and any others that come with
/// them).
fn ping_burst(
    p: &mut Prober,
    settings: &QuickSettings,
    plan: &TrainPlan,
    waiting: &mut dyn FnMut(),
) -> Result<Pings, Error> {
    let patience = settings.patience.max(Duration::from_secs(1));
    let start = Instant::now();
    let mut burst = Burst {
        pings: settings.pings.max(1),
        spacing: settings.ping_spacing.min(Duration::from_millis(10)),
        sent: 0,
        seen: Vec::new(),
        rtts: Vec::new(),
        started: None,
    };
    let mut first_train = None;
    let mut told = false;
    loop {
        let train_behind = (burst.sent == 0).then_some(plan);
        burst.run(p, train_behind, &mut first_train)?;
        if let Some(started) = burst.started {
            burst.rtts.sort_by(f64::total_cmp);
            // A pong to a ping of the first burst: the server was there for the train.
            let first_answered = burst.seen.iter().any(|&seq| seq < burst.pings);
            return Ok(Pings {
                rtts: burst.rtts,
                sent: burst.sent,
                started,
                first_train: first_train.filter(|_| first_answered),
            });
        }
        if start.elapsed() >= patience {
            return Err(Error::NoServer {
                addr: p.addr,
                patience,
            });
        }
        if !told && start.elapsed() >= Duration::from_secs(1) {
            waiting();
            told = true;
        }
    }
}

/// The ping bursts sent so far and their answers.
struct Burst {
    pings: u32,
    spacing: Duration,
    sent: u32,
    /// Sequence numbers answered (a duplicated pong counts once).
    seen: Vec<u32>,
    rtts: Vec<f64>,
    /// The send time of the first ping answered.
    started: Option<Instant>,
}

impl Burst {
    /// Sends one burst (and the train of `train_behind` right behind it, into
    /// `first_train`, with its report request [`FIRST_GUARD`] later), reading answers
    /// between its pings, and waits for the answers: up to 200 ms after its last ping for the
    /// first, then for
    /// the rest of the burst's (they come back within the burst's own spread, so a little
    /// beyond it, not a whole round trip).
    fn run(
        &mut self,
        p: &mut Prober,
        mut train_behind: Option<&TrainPlan>,
        first_train: &mut Option<SentTrain>,
    ) -> Result<(), Error> {
        let burst_at = Instant::now();
        let mut to_send = 0u32;
        let mut ask_at: Option<Instant> = None;
        let mut until = burst_at + self.spacing * self.pings + Duration::from_millis(200);
        loop {
            let now = Instant::now();
            let next_ping = burst_at + self.spacing * to_send;
            if to_send < self.pings && now >= next_ping {
                self.send_ping(p);
                to_send += 1;
                let last_ping = to_send == self.pings;
                if let Some(plan) = train_behind.take_if(|_| last_ping) {
                    *first_train = Some(SentTrain::send(p, plan.first, plan.packet_bytes));
                    ask_at = Some(Instant::now() + FIRST_GUARD);
                }
                continue;
            }
            if let (Some(at), Some(t)) = (ask_at, first_train.as_ref()) {
                if now >= at {
                    p.ask(t.session, 0, t.packets);
                    ask_at = None;
                    continue;
                }
            }
            // Done once every ping is answered, or at `until` (lost pongs).
            let answered = self.rtts.len() >= self.pings as usize;
            if ask_at.is_none() && (answered || now >= until) {
                return Ok(());
            }
            let mut wake = until;
            if to_send < self.pings {
                wake = wake.min(next_ping);
            }
            if let Some(at) = ask_at {
                wake = wake.min(at);
            }
            if let Some(n) = p.recv_until(wake)? {
                self.take_answer(p, n, first_train.as_mut(), burst_at, &mut until);
            }
        }
    }

    fn send_ping(&mut self, p: &Prober) {
        let mut ping = packet(PING, p.session, self.sent, 0, 64);
        let at = u64::try_from(p.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
        ping[HEADER..HEADER + 8].copy_from_slice(&at.to_be_bytes());
        p.send(&ping);
        self.sent = self.sent.saturating_add(1);
    }

    /// Takes the packet of `n` bytes in the prober's buffer: a pong's round trip (the
    /// first one moves `until` to the end of the burst's answers), or the first train's
    /// report.
    fn take_answer(
        &mut self,
        p: &Prober,
        n: usize,
        first_train: Option<&mut SentTrain>,
        burst_at: Instant,
        until: &mut Instant,
    ) {
        if let (Some(t), Some((REPORT, session, _, _))) = (first_train, parse(&p.buf[..n])) {
            if session == t.session && t.report.is_none() {
                t.report = decode_report(&p.buf[..n]).map(|r| (r, Instant::now()));
            }
            return;
        }
        let Some((seq, sent_at)) = pong(p, n) else {
            return;
        };
        if self.seen.contains(&seq) {
            return;
        }
        self.seen.push(seq);
        let rtt = Instant::now().saturating_duration_since(sent_at);
        self.rtts.push(rtt.as_secs_f64() * 1e3);
        if self.started.is_none() {
            self.started = Some(sent_at);
            let last_ping = burst_at + self.spacing * (self.pings - 1);
            let slack = (rtt / 4).min(Duration::from_millis(50));
            *until = last_ping.max(Instant::now()) + rtt + slack + Duration::from_millis(1);
        }
    }
}

/// The sequence number and send time of the pong of this prober's session in the
/// prober's buffer (`n` bytes); `None` for anything else, or a send time that is not in
/// the past (a server that does not echo faithfully).
fn pong(p: &Prober, n: usize) -> Option<(u32, Instant)> {
    let packet = &p.buf[..n];
    let (kind, session, seq, _) = parse(packet)?;
    if kind != PONG || session != p.session || n < HEADER + 8 {
        return None;
    }
    let ns = u64::from_be_bytes(packet[HEADER..HEADER + 8].try_into().ok()?);
    let sent_at = p.epoch.checked_add(Duration::from_nanos(ns))?;
    (sent_at <= Instant::now()).then_some((seq, sent_at))
}

/// The round-trip figures the trains are timed by.
struct TrainTiming {
    rtt_min: Duration,
    rtt_max: Duration,
    /// The wait between a train and its report request.
    guard: Duration,
    deadline: Instant,
}

/// Gets the first train's report (sending the train if the burst did not), then sends
/// trains, each larger than the one before, while the budget allows; the results of those
/// reported on.
fn grow_trains(
    p: &mut Prober,
    plan: &TrainPlan,
    timing: &TrainTiming,
    mut first_train: Option<SentTrain>,
    enough: &mut dyn FnMut(&[MeasuredTrain], Duration) -> bool,
) -> Result<Vec<MeasuredTrain>, Error> {
    let mut packets = plan.first;
    let mut results = Vec::new();
    loop {
        let mut train = match first_train.take() {
            Some(t) => t,
            None => {
                let t = SentTrain::send(p, packets, plan.packet_bytes);
                std::thread::sleep(timing.guard);
                t
            }
        };
        let report_by = if results.is_empty() {
            let floor = Instant::now() + timing.rtt_max * 4 + Duration::from_millis(500);
            timing.deadline.max(floor)
        } else {
            timing.deadline
        };
        let report = match train.report.take() {
            Some(r) => Some(r),
            None => ask_until(p, &train, timing.rtt_max, report_by)?,
        };
        let Some((report, report_at)) = report else {
            if results.is_empty() {
                return Err(Error::NoReport(p.addr));
            }
            break;
        };
        let result = train_result(&report, train.packets, &train.unsent);
        let floor_mbps = rate_floor(&train, result.received, plan, timing, report_at);
        results.push(MeasuredTrain { result, floor_mbps });
        packets = train.packets;
        let next = plan.after(packets);
        // The dispersion if the server could time it, else the floor: a rate the path
        // certainly has, so the cost below is not underestimated.
        let rate = match (result.bandwidth_mbps, floor_mbps) {
            (Some(d), f) => Some(d.max(f.unwrap_or(0.0))),
            (None, f) => f,
        };
        let Some(mbps) = rate.filter(|b| *b > 0.0) else {
            break;
        };
        let Some(next) = next.filter(|_| result.overflow_packets == 0) else {
            break;
        };
        // The next train's cost: the slower of sending it and the bottleneck carrying
        // it, then the guard and the report's round trip.
        let sending = train
            .send_time
            .mul_f64(f64::from(next) / f64::from(packets));
        let carrying =
            Duration::try_from_secs_f64(f64::from(next) * plan.ip_bytes * 8.0 / (mbps * 1e6))
                .unwrap_or(Duration::MAX);
        let cost = sending
            .max(carrying)
            .saturating_add(timing.guard)
            .saturating_add(timing.rtt_max);
        if later(Instant::now(), cost) > timing.deadline || enough(&results, cost) {
            break;
        }
        packets = next;
    }
    Ok(results)
}

/// A train's result with the rate floor its report's timing gives.
struct MeasuredTrain {
    result: TrainResult,
    floor_mbps: Option<f64>,
}

/// What of the shortest ping round trip [`rate_floor`] takes as certain for the report's
/// round trip: a ping's round trip includes the server's wake-up, which the report's may
/// not (a busy server answers at once), and on a short train 1 ms is a large part of the
/// time it took to pass the bottleneck.
const FLOOR_SLACK: Duration = Duration::from_millis(1);

/// The lowest rate the path can have, by the prober's own clock: the `received` packets
/// of `train` passed the bottleneck between the first one's send and the report's arrival
/// less the shortest round trip (less [`FLOOR_SLACK`]; the report request follows them
/// through the bottleneck, first in, first out). Late reads at the server, a late report
/// or a slow prober only lower it; `None` if nothing arrived.
fn rate_floor(
    train: &SentTrain,
    received: u32,
    plan: &TrainPlan,
    timing: &TrainTiming,
    report_at: Instant,
) -> Option<f64> {
    let carrying = report_at
        .saturating_duration_since(train.sent_at)
        .saturating_sub(timing.rtt_min.saturating_sub(FLOOR_SLACK))
        .max(train.send_time);
    (received > 0 && !carrying.is_zero())
        .then(|| f64::from(received) * plan.ip_bytes * 8.0 / carrying.as_secs_f64() / 1e6)
}

/// Asks for the report on `train` until one comes or `until` passes, repeating the
/// request every two round trips (at least 10 ms); the report and when it came.
fn ask_until(
    p: &mut Prober,
    train: &SentTrain,
    rtt_max: Duration,
    until: Instant,
) -> Result<Option<(Report, Instant)>, Error> {
    let every = (rtt_max * 2).max(Duration::from_millis(10));
    for seq in 1u32.. {
        p.ask(train.session, seq, train.packets);
        let wait = (Instant::now() + every).min(until);
        if let Some(report) = p.await_report(train.session, wait)? {
            return Ok(Some((report, Instant::now())));
        }
        if Instant::now() >= until {
            break;
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests;
