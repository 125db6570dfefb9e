//! The UDP probe: round-trip time, loss rate and bottleneck bandwidth of a path, measured
//! by a [`serve`]r at one end and a prober ([`probe`]) at the other. A library so that the
//! `transputation probe` command and the testbed's link checks (which bind the two sockets
//! inside two network namespaces and call these functions on threads) share one protocol.
//!
//! Wire protocol (UDP, every packet starts with the same 24 bytes): `b"TPPR"`, a kind byte
//! (1 ping, 2 pong, 3 train packet, 4 report request, 5 report), three zero bytes, the
//! client's session number (u64), a sequence number (u32) and a count (u32), big-endian.
//! The server echoes a ping as a pong, records the train packets of the current session
//! with their arrival times, and answers a report request with the number of train packets
//! it got (u32), a span of arrival times (u64 ns) and the IP bytes (UDP payload plus IP and
//! UDP headers) that arrived in it after its first packet (u64). Bandwidth is those bytes
//! over that span (train dispersion): the rate of the narrowest link, if the sender is
//! faster than it.
//!
//! The span runs from the arrival at index ⌊n/4⌋ to the last of the n arrivals: the first
//! quarter is left out because a rate limiter with a token bucket (a shaper such as tbf,
//! or a policer) lets its bucket's worth through at the sender's speed before it holds the
//! rate, and that burst would inflate the estimate. The train (1000 packets of 1200 bytes
//! by default, sent as fast as the host can) overruns such a bucket; where the bottleneck's
//! queue is shorter than the train, the packets it drops count as loss.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

mod wire;

use wire::{packet, parse, ASK, HEADER, PING, PONG, REPORT, TRAIN};

/// Train packets whose arrival a server records (16 MiB of records).
const MAX_ARRIVALS: usize = 1 << 20;
/// The largest UDP payload of a train packet.
pub const MAX_PACKET_BYTES: usize = 65507;

/// What can go wrong while probing or serving.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A socket operation failed (the cause is the error's source).
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// A server waited for a prober in vain.
    #[error("no prober for {0:?}")]
    NoProber(Duration),
    /// A prober found no server.
    #[error(
        "no answer from a probe server at {addr} for {patience:?} (is `transputation probe \
         --listen {addr}` running there?)"
    )]
    NoServer {
        /// The server's address.
        addr: SocketAddr,
        /// How long the prober tried.
        patience: Duration,
    },
    /// The server answered the first ping but none of the measured ones.
    #[error("no answer from a probe server at {addr} to {pings} pings")]
    NoPongs {
        /// The server's address.
        addr: SocketAddr,
        /// Pings sent.
        pings: u32,
    },
    /// The server did not report on the train.
    #[error("the probe server at {0} did not report on the train")]
    NoReport(SocketAddr),
}

fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Error {
    let context = context.into();
    move |source| Error::Io { context, source }
}

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

/// What a prober measured (the JSON of `transputation probe --json`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Measurement {
    /// Smallest round trip, ms.
    pub rtt_ms_min: f64,
    /// Median round trip, ms.
    pub rtt_ms_median: f64,
    /// Largest round trip, ms.
    pub rtt_ms_max: f64,
    /// Train packets lost, as a fraction of those sent.
    pub loss_rate: f64,
    /// Rate of the train's arrivals, Mbit/s (`None` if fewer than two arrived).
    pub bandwidth_mbps: Option<f64>,
    /// Pings sent.
    pub pings_sent: u32,
    /// Pings answered.
    pub pings_answered: usize,
    /// Train packets sent.
    pub train_sent: u32,
    /// Train packets the server received.
    pub train_received: u32,
    /// Bytes per train packet (UDP payload).
    pub packet_bytes: usize,
}

/// Asks the kernel for 16 MiB socket buffers (forced where allowed): a train must not be
/// dropped by the receiving socket.
pub fn big_buffers(s: &UdpSocket) {
    use rustix::net::sockopt;
    if sockopt::set_socket_recv_buffer_size_force(s, 16 << 20).is_err() {
        let _ = sockopt::set_socket_recv_buffer_size(s, 16 << 20);
    }
    if sockopt::set_socket_send_buffer_size_force(s, 16 << 20).is_err() {
        let _ = sockopt::set_socket_send_buffer_size(s, 16 << 20);
    }
}

/// Serves one prober on `sock`: returns 2 s after the last packet once a report was sent,
/// or as soon as `stop` is raised (checked every 100 ms), or fails if nothing arrives for
/// `patience`.
pub fn serve(sock: &UdpSocket, patience: Duration, stop: &AtomicBool) -> Result<(), Error> {
    big_buffers(sock);
    let ip_overhead = match sock.local_addr() {
        Ok(a) if a.is_ipv6() => 48,
        _ => 28,
    };
    let mut buf = vec![0u8; 65536];
    let (mut session, mut got) = (0u64, 0u32);
    // Arrival time and IP bytes of each train packet (at most MAX_ARRIVALS).
    let mut arrivals: Vec<(Instant, u64)> = Vec::new();
    let mut reported = false;
    let mut last = Instant::now();
    let slice = Duration::from_millis(100);
    sock.set_read_timeout(Some(slice))
        .map_err(io("setting the probe server's read timeout"))?;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let (n, from) = match sock.recv_from(&mut buf) {
            Ok(r) => r,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                let quiet = last.elapsed();
                if reported && quiet >= Duration::from_secs(2) {
                    return Ok(());
                }
                if !reported && quiet >= patience {
                    return Err(Error::NoProber(patience));
                }
                continue;
            }
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::Interrupted | std::io::ErrorKind::ConnectionRefused
                ) =>
            {
                continue
            }
            Err(e) => return Err(io("receiving")(e)),
        };
        let now = Instant::now();
        last = now;
        let Some((kind, s, seq, count)) = parse(&buf[..n]) else {
            continue;
        };
        if s != session && kind != REPORT && kind != PONG {
            (session, got) = (s, 0);
            arrivals.clear();
        }
        match kind {
            PING => {
                buf[4] = PONG;
                let _ = sock.send_to(&buf[..n], from);
            }
            TRAIN => {
                got = got.saturating_add(1);
                if arrivals.len() < MAX_ARRIVALS {
                    arrivals.push((now, (n + ip_overhead) as u64));
                }
            }
            ASK => {
                let (span, bytes) = steady_rate(&arrivals);
                let mut p = packet(REPORT, s, seq, count, HEADER + 20);
                p[24..28].copy_from_slice(&got.to_be_bytes());
                p[28..36].copy_from_slice(&span.to_be_bytes());
                p[36..44].copy_from_slice(&bytes.to_be_bytes());
                let _ = sock.send_to(&p, from);
                reported = true;
            }
            _ => {}
        }
    }
}

/// The span (ns) from the arrival at index ⌊n/4⌋ to the last, and the bytes that arrived
/// in it after its first packet; (0, 0) for fewer than two arrivals.
fn steady_rate(arrivals: &[(Instant, u64)]) -> (u64, u64) {
    let n = arrivals.len();
    if n < 2 {
        return (0, 0);
    }
    let from = (n / 4).min(n - 2);
    let span = arrivals[n - 1].0.duration_since(arrivals[from].0);
    let bytes = arrivals[from + 1..].iter().map(|a| a.1).sum();
    (u64::try_from(span.as_nanos()).unwrap_or(u64::MAX), bytes)
}

/// A prober's socket, connected to its server, and its session number.
struct Prober {
    sock: UdpSocket,
    addr: SocketAddr,
    session: u64,
    buf: Vec<u8>,
}

impl Prober {
    /// Waits up to `wait` for a packet of `kind` and `seq` of this session.
    fn await_packet(&mut self, kind: u8, seq: u32, wait: Duration) -> Result<bool, Error> {
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            self.sock
                .set_read_timeout(Some(left))
                .map_err(io("setting the prober's read timeout"))?;
            match self.sock.recv(&mut self.buf) {
                Ok(n) => {
                    if let Some((k, s, q, _)) = parse(&self.buf[..n]) {
                        if k == kind && s == self.session && q == seq {
                            return Ok(true);
                        }
                    }
                }
                Err(e) => match e.kind() {
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                        return Ok(false)
                    }
                    // Nothing listens yet (ICMP port unreachable): wait a little.
                    std::io::ErrorKind::ConnectionRefused => {
                        std::thread::sleep(Duration::from_millis(20));
                        return Ok(false);
                    }
                    std::io::ErrorKind::Interrupted => {}
                    _ => return Err(io("receiving")(e)),
                },
            }
        }
    }

    fn send(&self, p: &[u8]) {
        let _ = self.sock.send(p);
    }

    /// Pings until the server answers (it may start after us); `waiting` hears once, after
    /// a silent second.
    fn reach(&mut self, patience: Duration, waiting: &mut dyn FnMut()) -> Result<(), Error> {
        let start = Instant::now();
        let mut told = false;
        loop {
            self.send(&packet(PING, self.session, u32::MAX, 0, 64));
            if self.await_packet(PONG, u32::MAX, Duration::from_millis(200))? {
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
            if self.await_packet(PONG, i, Duration::from_secs(1))? {
                rtts.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        rtts.sort_by(f64::total_cmp);
        Ok(rtts)
    }

    /// Sends the train and asks for the server's report: (received, span ns, bytes).
    fn train(&mut self, train: u32, len: usize) -> Result<(u32, u64, u64), Error> {
        for i in 0..train {
            self.send(&packet(TRAIN, self.session, i, train, len));
        }
        std::thread::sleep(Duration::from_millis(200));
        for i in 0..5u32 {
            self.send(&packet(ASK, self.session, i, 0, HEADER));
            if self.await_packet(REPORT, i, Duration::from_millis(500))? {
                let b = &self.buf;
                let field = |r: std::ops::Range<usize>| {
                    b[r].iter().fold(0u64, |acc, &x| (acc << 8) | u64::from(x))
                };
                return Ok((field(24..28) as u32, field(28..36), field(36..44)));
            }
        }
        Err(Error::NoReport(self.addr))
    }
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
    big_buffers(&sock);
    sock.connect(addr)
        .map_err(io(format!("connecting the prober to {addr}")))?;
    let session = {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    };
    let mut p = Prober {
        sock,
        addr,
        session,
        buf: vec![0u8; 65536],
    };
    p.reach(settings.patience.max(Duration::from_secs(1)), &mut waiting)?;
    let rtts = p.round_trips(settings.pings)?;
    let (Some(&min), Some(&max)) = (rtts.first(), rtts.last()) else {
        return Err(Error::NoPongs {
            addr,
            pings: settings.pings,
        });
    };
    let median = if rtts.len() % 2 == 1 {
        rtts[rtts.len() / 2]
    } else {
        (rtts[rtts.len() / 2 - 1] + rtts[rtts.len() / 2]) / 2.0
    };
    let len = settings.packet_bytes.clamp(HEADER, MAX_PACKET_BYTES);
    let (received, span_ns, bytes) = p.train(settings.train, len)?;
    let loss_rate = if settings.train == 0 {
        0.0
    } else {
        1.0 - f64::from(received.min(settings.train)) / f64::from(settings.train)
    };
    let bandwidth_mbps = (span_ns > 0).then(|| bytes as f64 * 8.0 / (span_ns as f64 / 1e9) / 1e6);
    Ok(Measurement {
        rtt_ms_min: min,
        rtt_ms_median: median,
        rtt_ms_max: max,
        loss_rate,
        bandwidth_mbps,
        pings_sent: settings.pings,
        pings_answered: rtts.len(),
        train_sent: settings.train,
        train_received: received,
        packet_bytes: len,
    })
}

/// A socket for a prober on `server`'s address family (any local address and port).
pub fn prober_socket(server: SocketAddr) -> std::io::Result<UdpSocket> {
    let any: SocketAddr = if server.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    UdpSocket::bind(any)
}

#[cfg(test)]
mod tests;
