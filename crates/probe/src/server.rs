//! The probe server: echoes pings, records the trains of the last few sessions (arrival
//! times, bytes and which packets arrived) and reports on them. [`serve`] serves one
//! prober and returns; [`serve_until`] serves any number until told to stop (a party that
//! answers probes beside its sessions).
//!
//! How it times arrivals (prompt reads only, a short spin between a train's packets) and
//! why is in the crate docs.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::error::{io, Error};
use crate::socket::{self, big_buffers};
use crate::wire::{encode_report, parse, ArrivalMap, Extension, Report, ASK, PING, PONG, TRAIN};

/// Train packets whose arrival a server records, over all the trains it keeps (24 MiB of
/// records).
const MAX_ARRIVALS: usize = 1 << 20;
/// Trains (sessions) a server keeps at once: probers that overlap in time (several
/// evaluators at a serving garbler) each get their own count; the least recently active
/// is forgotten when a new one starts.
const MAX_TRAINS: usize = 8;
/// How long a one-prober server stays after its last packet once it has reported.
const LINGER: Duration = Duration::from_secs(2);
/// How long the server spins on reads after a train packet before it sleeps.
const SPIN: Duration = Duration::from_micros(100);
/// How long the server sleeps at a time (the stop flag is checked as often).
const SLICE: Duration = Duration::from_millis(100);

/// A train packet's arrival as the server read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Arrival {
    /// When it was read.
    pub(crate) at: Instant,
    /// Its IP bytes.
    pub(crate) bytes: u64,
    /// Whether the read was prompt: the socket was empty before and after it.
    pub(crate) prompt: bool,
}

/// One session's train as the server saw it.
struct Train {
    session: u64,
    received: u32,
    /// Each packet's arrival (while the server's record has room).
    arrivals: Vec<Arrival>,
    map: ArrivalMap,
    last: Instant,
    /// Whether every recorded arrival has the kernel's time (then its timing is exact).
    kernel_timed: bool,
}

/// The trains a server keeps.
#[derive(Default)]
struct Trains {
    trains: Vec<Train>,
    /// Arrivals recorded over all trains.
    recorded: usize,
    /// The train (its index) whose last arrival was read right after a wait, while no
    /// other packet has been read since: it is prompt if the next read finds nothing.
    fresh: Option<usize>,
}

impl Trains {
    /// Records train packet `seq` of `session`'s train of `count` packets, as `read`.
    fn record(&mut self, session: u64, seq: u32, count: u32, read: &Read) {
        let now = read.at;
        let i = match self.trains.iter().position(|t| t.session == session) {
            Some(i) => i,
            None => {
                if self.trains.len() >= MAX_TRAINS {
                    let oldest = (0..self.trains.len())
                        .min_by_key(|&i| self.trains[i].last)
                        .expect("a full list is not empty");
                    let gone = self.trains.swap_remove(oldest);
                    self.recorded -= gone.arrivals.len();
                    self.fresh = None;
                }
                self.trains.push(Train {
                    session,
                    received: 0,
                    arrivals: Vec::new(),
                    map: ArrivalMap::new(count),
                    last: now,
                    kernel_timed: true,
                });
                self.trains.len() - 1
            }
        };
        let t = &mut self.trains[i];
        t.received = t.received.saturating_add(1);
        t.map.set(seq);
        t.last = now;
        if self.recorded < MAX_ARRIVALS {
            // The kernel's time is the arrival's however late the read; a read's own time
            // only if the read turns out prompt (see `socket_empty`).
            t.arrivals.push(Arrival {
                at: now,
                bytes: read.ip_bytes,
                prompt: read.stamped,
            });
            self.recorded += 1;
            t.kernel_timed &= read.stamped;
            self.fresh = (read.waited && !read.stamped).then_some(i);
        } else {
            self.fresh = None;
        }
    }

    /// A read found the socket empty: the last arrival, if it was read after a wait, was
    /// read promptly.
    fn socket_empty(&mut self) {
        if let Some(i) = self.fresh.take() {
            if let Some(a) = self.trains.get_mut(i).and_then(|t| t.arrivals.last_mut()) {
                a.prompt = true;
            }
        }
    }

    /// The report on `session`'s train (nothing received if it is not known).
    fn report(&self, session: u64) -> Report {
        match self.trains.iter().find(|t| t.session == session) {
            Some(t) => {
                let (span_ns, bytes) = read_span(&t.arrivals);
                let (timed_span_ns, timed_bytes) = steady_rate(&t.arrivals);
                Report {
                    received: t.received,
                    span_ns,
                    bytes,
                    kernel_timed: t.kernel_timed && !t.arrivals.is_empty(),
                    ext: Some(Extension {
                        timed_span_ns,
                        timed_bytes,
                        map: t.map.clone(),
                    }),
                }
            }
            None => Report {
                received: 0,
                span_ns: 0,
                bytes: 0,
                kernel_timed: false,
                ext: Some(Extension {
                    timed_span_ns: 0,
                    timed_bytes: 0,
                    map: ArrivalMap::new(0),
                }),
            },
        }
    }
}

/// Serves one prober on `sock`: returns 2 s after the last packet once a report was sent,
/// or as soon as `stop` is raised (checked every 100 ms), or fails if nothing arrives for
/// `patience`. The socket is non-blocking while it serves and blocking again after.
pub fn serve(sock: &UdpSocket, patience: Duration, stop: &AtomicBool) -> Result<(), Error> {
    run(sock, stop, Some(patience), &mut |_, _| {})
}

/// Serves any number of probers on `sock`, one after another or at once (each prober's
/// trains are kept apart by their session numbers, the last 8 at a time),
/// until `stop` is raised (checked every 100 ms). Silence is no error: a party that
/// offers probes beside its sessions may see no prober at all (a peer with a cached
/// measurement does not probe).
pub fn serve_until(sock: &UdpSocket, stop: &AtomicBool) -> Result<(), Error> {
    run(sock, stop, None, &mut |_, _| {})
}

/// [`serve_until`], handing every datagram that is not a probe packet to `other` (with
/// its sender): a party that answers its own protocol's datagrams on the probe's port
/// (`--transport auto`'s offers). `other` runs on the serving thread, between packets.
pub fn serve_until_with(
    sock: &UdpSocket,
    stop: &AtomicBool,
    mut other: impl FnMut(&[u8], SocketAddr),
) -> Result<(), Error> {
    run(sock, stop, None, &mut other)
}

/// The server's loop; `one_prober` is the patience of a server for one prober (`None`:
/// serve until stopped). The socket is non-blocking while it serves (see the module docs).
fn run(
    sock: &UdpSocket,
    stop: &AtomicBool,
    one_prober: Option<Duration>,
    other: &mut dyn FnMut(&[u8], SocketAddr),
) -> Result<(), Error> {
    big_buffers(sock);
    // The kernel's time of each arrival, where it gives one (Linux's SO_TIMESTAMPNS):
    // then a packet read late still has the time it came.
    let stamped = crate::stamped::stamp_arrivals(sock);
    sock.set_nonblocking(true)
        .map_err(io("making the probe server's socket non-blocking"))?;
    let served = serve_on(sock, stop, one_prober, other, stamped);
    let _ = sock.set_nonblocking(false);
    if stamped {
        crate::stamped::stop_stamping(sock);
    }
    served
}

/// Reads one datagram into `buf`: its length, sender and, if `stamped`, the time the
/// kernel received it (as an [`Instant`]; none for a stamp a second old or more).
fn receive(
    sock: &UdpSocket,
    buf: &mut [u8],
    stamped: bool,
) -> std::io::Result<(usize, SocketAddr, Option<Instant>)> {
    if !stamped {
        return sock.recv_from(buf).map(|(n, from)| (n, from, None));
    }
    let (n, from, stamp) = crate::stamped::recv_stamped(sock, buf)?;
    let at = stamp
        .and_then(|t| crate::stamped::arrival_instant(t, Instant::now(), Duration::from_secs(1)));
    Ok((n, from, at))
}

fn serve_on(
    sock: &UdpSocket,
    stop: &AtomicBool,
    one_prober: Option<Duration>,
    other: &mut dyn FnMut(&[u8], SocketAddr),
    stamped: bool,
) -> Result<(), Error> {
    let ip_overhead = sock
        .local_addr()
        .map_or(socket::IPV4_UDP_HEADERS, socket::ip_udp_headers);
    let mut buf = vec![0u8; 65536];
    let mut trains = Trains::default();
    let mut reported = false;
    let mut last = Instant::now();
    // Whether the socket was found empty since the last packet read.
    let mut waited = true;
    let mut spin_until: Option<Instant> = None;
    loop {
        if stop.load(Ordering::Relaxed) {
            return Ok(());
        }
        let (n, from, kernel_at) = match receive(sock, &mut buf, stamped) {
            Ok(r) => r,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                trains.socket_empty();
                waited = true;
                if spin_until.is_some_and(|t| Instant::now() < t) {
                    std::hint::spin_loop();
                    continue;
                }
                spin_until = None;
                if wait_readable(sock, SLICE)? {
                    continue;
                }
                let Some(patience) = one_prober else {
                    continue;
                };
                let quiet = last.elapsed();
                if reported && quiet >= LINGER {
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
        last = Instant::now();
        let read = Read {
            at: kernel_at.unwrap_or(last),
            ip_bytes: (n + ip_overhead) as u64,
            waited,
            stamped: kernel_at.is_some(),
        };
        waited = false;
        let Some(header) = parse(&buf[..n]) else {
            trains.fresh = None;
            other(&buf[..n], from);
            continue;
        };
        let kind = header.0;
        if kind != TRAIN {
            trains.fresh = None;
        }
        answer(sock, &mut trains, &mut buf[..n], header, from, read);
        reported |= kind == ASK;
        if kind == TRAIN {
            spin_until = Some(last + SPIN);
        }
    }
}

/// Waits up to `wait` for the socket to become readable; whether it did.
fn wait_readable(sock: &UdpSocket, wait: Duration) -> Result<bool, Error> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let timeout = Timespec::try_from(wait).unwrap_or(Timespec {
        tv_sec: i64::MAX,
        tv_nsec: 0,
    });
    let mut fds = [PollFd::new(sock, PollFlags::IN)];
    match poll(&mut fds, Some(&timeout)) {
        Ok(n) => Ok(n > 0),
        Err(rustix::io::Errno::INTR) => Ok(false),
        Err(e) => Err(io("waiting for probe packets")(e.into())),
    }
}

/// How a packet was read.
struct Read {
    at: Instant,
    ip_bytes: u64,
    /// Whether the socket was empty just before.
    waited: bool,
    /// Whether `at` is the kernel's time of arrival (then it is exact however late the
    /// read).
    stamped: bool,
}

/// Handles one probe packet of the parsed `header` (kind, session, sequence, count).
fn answer(
    sock: &UdpSocket,
    trains: &mut Trains,
    packet: &mut [u8],
    (kind, session, seq, count): (u8, u64, u32, u32),
    from: SocketAddr,
    read: Read,
) {
    match kind {
        PING => {
            packet[4] = PONG;
            let _ = sock.send_to(packet, from);
        }
        TRAIN => trains.record(session, seq, count, &read),
        ASK => {
            let report = encode_report(session, seq, &trains.report(session), packet.len());
            let _ = sock.send_to(&report, from);
        }
        _ => {}
    }
}

/// The span (ns) from the arrival at index ⌊n/4⌋ (of n) to the last, as read, prompt or
/// not, and the bytes of the packets after its first: the first version's estimate, kept
/// in the report's fixed part; (0, 0) for fewer than two arrivals.
pub(crate) fn read_span(arrivals: &[Arrival]) -> (u64, u64) {
    let n = arrivals.len();
    if n < 2 {
        return (0, 0);
    }
    let from = (n / 4).min(n - 2);
    let span = arrivals[n - 1].at.duration_since(arrivals[from].at);
    let bytes = arrivals[from + 1..].iter().map(|a| a.bytes).sum();
    (u64::try_from(span.as_nanos()).unwrap_or(u64::MAX), bytes)
}

/// The span (ns) from the first prompt arrival at or past index ⌊n/4⌋ (of n arrivals) to
/// the last prompt one, and the bytes of the packets after its first up to its last; (0,
/// 0) without two such arrivals.
pub(crate) fn steady_rate(arrivals: &[Arrival]) -> (u64, u64) {
    let n = arrivals.len();
    let Some(from) = (n / 4..n).find(|&i| arrivals[i].prompt) else {
        return (0, 0);
    };
    let Some(to) = (from + 1..n).rev().find(|&i| arrivals[i].prompt) else {
        return (0, 0);
    };
    let span = arrivals[to].at.duration_since(arrivals[from].at);
    let bytes = arrivals[from + 1..=to].iter().map(|a| a.bytes).sum();
    (u64::try_from(span.as_nanos()).unwrap_or(u64::MAX), bytes)
}
