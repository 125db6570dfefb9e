//! The prober's side: a socket connected to a server with its session number, the steps
//! every probe takes (reach the server, ping, send a train, ask for the report, read the
//! report's loss evidence), and [`probe`], the full probe with fixed [`Settings`].

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use crate::error::{io, Error};
use crate::loss::{split_train_loss, LossEvidence};
use crate::measurement::Measurement;
use crate::socket::big_buffers;
use crate::wire::{
    ask_bytes, decode_report, packet, parse, Report, ASK, HEADER, MAX_PACKET_BYTES, PING, PONG,
    REPORT, TRAIN,
};

/// How a prober measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Settings {
    /// Pings for the round-trip time.
    pub pings: u32,
    /// Packets in the train for loss and bandwidth.
    pub train: u32,
    /// Bytes per train packet (UDP payload; clamped to 24..=65507).
    pub packet_bytes: usize,
    /// How long a silent server is waited for before giving up.
    pub patience: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            pings: 20,
            train: 1000,
            packet_bytes: 1200,
            patience: Duration::from_secs(30),
        }
    }
}

/// A prober's socket, connected to its server, and its session number.
pub(crate) struct Prober {
    sock: UdpSocket,
    pub(crate) addr: SocketAddr,
    pub(crate) session: u64,
    pub(crate) buf: Vec<u8>,
    /// When the prober started: pings carry their send time relative to it.
    pub(crate) epoch: Instant,
    /// Trains given a session number of their own so far (see `train_session`).
    trains_begun: u64,
}

/// What one train showed.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct TrainResult {
    pub(crate) sent: u32,
    pub(crate) received: u32,
    pub(crate) evidence: LossEvidence,
    pub(crate) overflow_packets: u64,
    /// The dispersion timed by prompt reads (by all reads from a server without the
    /// report's extension); `None` if the server could not time it.
    pub(crate) bandwidth_mbps: Option<f64>,
    /// The dispersion timed by all reads, prompt or not (the report's fixed part).
    pub(crate) read_rate_mbps: Option<f64>,
    /// Whether the server timed `bandwidth_mbps` by the kernel's receive times.
    pub(crate) kernel_timed: bool,
}

impl Prober {
    /// Connects `sock` to the server at `addr` under a fresh session number.
    pub(crate) fn connect(sock: UdpSocket, addr: SocketAddr) -> Result<Prober, Error> {
        big_buffers(&sock);
        sock.connect(addr)
            .map_err(io(format!("connecting the prober to {addr}")))?;
        let session = {
            use std::hash::{BuildHasher, Hasher};
            let mut h = std::collections::hash_map::RandomState::new().build_hasher();
            h.write_u32(std::process::id());
            h.finish()
        };
        Ok(Prober {
            sock,
            addr,
            session,
            buf: vec![0u8; 65536],
            epoch: Instant::now(),
            trains_begun: 0,
        })
    }

    /// A fresh session number for a train: the server counts each train apart by it
    /// (the session number plus 1, 2, ...; the pings keep the session number itself).
    pub(crate) fn train_session(&mut self) -> u64 {
        self.trains_begun += 1;
        self.session.wrapping_add(self.trains_begun)
    }

    /// Receives one packet before `until`: its length, or `None` if none came. Waits with
    /// poll(2), whose timeout is precise to microseconds: a socket's read timeout is
    /// rounded up to the kernel's tick (4 to 10 ms), too coarse for a probe that is to
    /// take a few round trips of a LAN.
    pub(crate) fn recv_until(&mut self, until: Instant) -> Result<Option<usize>, Error> {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            let timeout = Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let mut fds = [PollFd::new(&self.sock, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => return Ok(None),
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(io("waiting for the probe server")(e.into())),
            }
            // Readable (a datagram or an error is queued): this does not block.
            match self.sock.recv(&mut self.buf) {
                Ok(n) => return Ok(Some(n)),
                Err(e) => match e.kind() {
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {}
                    // Nothing listens yet (ICMP port unreachable): wait a little.
                    std::io::ErrorKind::ConnectionRefused => {
                        std::thread::sleep(left.min(Duration::from_millis(20)));
                        return Ok(None);
                    }
                    std::io::ErrorKind::Interrupted => {}
                    _ => return Err(io("receiving")(e)),
                },
            }
        }
    }

    /// Waits up to `wait` for a packet of `kind` and `seq` of `session`.
    fn await_packet(
        &mut self,
        kind: u8,
        session: u64,
        seq: u32,
        wait: Duration,
    ) -> Result<bool, Error> {
        let until = Instant::now() + wait;
        while let Some(n) = self.recv_until(until)? {
            if let Some((k, s, q, _)) = parse(&self.buf[..n]) {
                if k == kind && s == session && q == seq {
                    return Ok(true);
                }
            }
        }
        Ok(false)
    }

    /// Sends `p`; whether it left (a full local queue may refuse it).
    pub(crate) fn send(&self, p: &[u8]) -> bool {
        self.sock.send(p).is_ok()
    }

    /// Pings until the server answers (it may start after us); `waiting` hears once, after
    /// a silent second.
    fn reach(&mut self, patience: Duration, waiting: &mut dyn FnMut()) -> Result<(), Error> {
        let start = Instant::now();
        let mut told = false;
        loop {
            self.send(&packet(PING, self.session, u32::MAX, 0, 64));
            if self.await_packet(PONG, self.session, u32::MAX, Duration::from_millis(200))? {
                return Ok(());
            }
            if start.elapsed() >= patience {
                return Err(Error::NoServer {
                    addr: self.addr,
                    patience,
                });
            }
            if !told && start.elapsed() >= Duration::from_secs(1) {
                waiting();
                told = true;
            }
        }
    }

    /// Round trips of `pings` pings, ms, sorted; those unanswered within 1 s are left out.
    fn round_trips(&mut self, pings: u32) -> Result<Vec<f64>, Error> {
        let mut rtts = Vec::new();
        for i in 0..pings {
            let start = Instant::now();
            self.send(&packet(PING, self.session, i, 0, 64));
            if self.await_packet(PONG, self.session, i, Duration::from_secs(1))? {
                rtts.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        rtts.sort_by(f64::total_cmp);
        Ok(rtts)
    }

    /// Sends `session`'s train of `train` packets of `len` bytes back to back; the
    /// sequence numbers of those the local stack refused.
    pub(crate) fn send_train(&self, session: u64, train: u32, len: usize) -> Vec<u32> {
        (0..train)
            .filter(|&i| !self.send(&packet(TRAIN, session, i, train, len)))
            .collect()
    }

    /// Asks for the report on `session`'s train of `train` packets (request number
    /// `seq`), padded so that the server may answer with its arrival map.
    pub(crate) fn ask(&self, session: u64, seq: u32, train: u32) {
        self.send(&packet(ASK, session, seq, 0, ask_bytes(train)));
    }

    /// Waits until `until` for a report on `session`'s train (any request's).
    pub(crate) fn await_report(
        &mut self,
        session: u64,
        until: Instant,
    ) -> Result<Option<Report>, Error> {
        while let Some(n) = self.recv_until(until)? {
            if let Some((REPORT, s, _, _)) = parse(&self.buf[..n]) {
                if s == session {
                    if let Some(r) = decode_report(&self.buf[..n]) {
                        return Ok(Some(r));
                    }
                }
            }
        }
        Ok(None)
    }

    /// Sends the train and asks for the server's report (after 200 ms for stragglers, up
    /// to five times).
    fn train(&mut self, train: u32, len: usize) -> Result<TrainResult, Error> {
        let unsent = self.send_train(self.session, train, len);
        std::thread::sleep(Duration::from_millis(200));
        for i in 0..5u32 {
            self.ask(self.session, i, train);
            let until = Instant::now() + Duration::from_millis(500);
            if let Some(r) = self.await_report(self.session, until)? {
                return Ok(train_result(&r, train, &unsent));
            }
        }
        Err(Error::NoReport(self.addr))
    }
}

/// What a report on a train of `sent` packets says, those in `unsent` (sorted) never
/// having left: the received count as the server gives it, the loss evidence from its
/// arrival map (a queue's overflow left out), or from the count alone without a map, and
/// the dispersion.
pub(crate) fn train_result(report: &Report, sent: u32, unsent: &[u32]) -> TrainResult {
    let received = report.received.min(sent);
    let (evidence, overflow_packets) = loss_evidence(report, sent, unsent);
    let mbps = |bytes: u64, span_ns: u64| {
        (span_ns > 0).then(|| bytes as f64 * 8.0 / (span_ns as f64 / 1e9) / 1e6)
    };
    let read_rate_mbps = mbps(report.bytes, report.span_ns);
    TrainResult {
        sent,
        received,
        evidence,
        overflow_packets,
        bandwidth_mbps: match &report.ext {
            Some(e) => mbps(e.timed_bytes, e.timed_span_ns),
            None => read_rate_mbps,
        },
        read_rate_mbps,
        kernel_timed: report.kernel_timed,
    }
}

/// The loss evidence of a report on a train of `sent` packets, and the packets left out
/// of it as a queue's overflow.
fn loss_evidence(report: &Report, sent: u32, unsent: &[u32]) -> (LossEvidence, u64) {
    let received = report.received.min(sent);
    let left = u64::from(sent) - unsent.len() as u64;
    let count_only = LossEvidence::new(left, left.saturating_sub(u64::from(received)));
    match report.ext.as_ref().map(|e| &e.map) {
        Some(map) if map.packets().min(sent) > 0 => {
            let covered = map.packets().min(sent);
            let lost: Vec<bool> = (0..covered)
                .filter(|i| unsent.binary_search(i).is_err())
                .map(|i| !map.arrived(i))
                .collect();
            let split = split_train_loss(&lost);
            let beyond_sent = left - lost.len() as u64;
            if split.overflow_packets > 0 {
                (split.evidence, split.overflow_packets + beyond_sent)
            } else {
                // Packets past the map's end: judged by the count.
                let arrived_in_map = lost.iter().filter(|&&l| !l).count() as u64;
                let beyond_received = u64::from(received).saturating_sub(arrived_in_map);
                let beyond =
                    LossEvidence::new(beyond_sent, beyond_sent.saturating_sub(beyond_received));
                (
                    LossEvidence::new(
                        split.evidence.sent + beyond.sent,
                        split.evidence.lost + beyond.lost,
                    ),
                    0,
                )
            }
        }
        _ => (count_only, 0),
    }
}

/// Min, median and max of sorted round trips; `None` if there are none.
pub(crate) fn rtt_summary(sorted: &[f64]) -> Option<(f64, f64, f64)> {
    let (&min, &max) = (sorted.first()?, sorted.last()?);
    let n = sorted.len();
    let median = if n % 2 == 1 {
        sorted[n / 2]
    } else {
        (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
    };
    Some((min, median, max))
}

/// Measures the path to the server at `addr` from `sock` (bound, not connected; it is
/// connected here): pings, then a train, then the server's report. `waiting` is called
/// once if the server has not answered after a second (the caller may say so).
pub fn probe(
    sock: UdpSocket,
    addr: SocketAddr,
    settings: &Settings,
    mut waiting: impl FnMut(),
) -> Result<Measurement, Error> {
    let mut p = Prober::connect(sock, addr)?;
    p.reach(settings.patience.max(Duration::from_secs(1)), &mut waiting)?;
    let started = Instant::now();
    let rtts = p.round_trips(settings.pings)?;
    let Some((min, median, max)) = rtt_summary(&rtts) else {
        return Err(Error::NoPongs {
            addr,
            pings: settings.pings,
        });
    };
    let len = settings.packet_bytes.clamp(HEADER, MAX_PACKET_BYTES);
    let t = p.train(settings.train, len)?;
    let loss_rate = if settings.train == 0 {
        0.0
    } else {
        1.0 - f64::from(t.received) / f64::from(settings.train)
    };
    // Where the server could not time the train by prompt reads, the first version's
    // estimate by all reads (what this probe always reported; see the crate docs).
    let bandwidth_mbps = t.bandwidth_mbps.or(t.read_rate_mbps);
    Ok(Measurement {
        rtt_ms_min: min,
        rtt_ms_median: median,
        rtt_ms_max: max,
        loss_rate,
        bandwidth_mbps,
        rate_kernel_timed: t.kernel_timed && bandwidth_mbps.is_some(),
        pings_sent: settings.pings,
        pings_answered: rtts.len(),
        train_sent: settings.train,
        train_received: t.received,
        packet_bytes: len,
        loss_evidence: t.evidence,
        overflow_packets: t.overflow_packets,
        bandwidth_floor_mbps: None,
        trains: 1,
        duration_ms: started.elapsed().as_secs_f64() * 1e3,
    })
}
