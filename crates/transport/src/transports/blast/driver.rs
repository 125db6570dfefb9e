//! The socket under a `blast` connection: one thread per connection drives the protocol
//! (`transputation_blast::Connection`), and the channel the application holds shares the
//! protocol's state with it under a lock.
//!
//! The thread's loop: take what is due at this instant (the protocol's timers, then up to
//! [`BATCH`] datagrams to send) under the lock and send them outside it; then `poll` the
//! socket and an eventfd until a datagram comes, the protocol's next deadline, or the
//! application signals new bytes; take every datagram waiting (without blocking) under
//! the lock; wake the application's waits. It ends when the application dropped its
//! channel and the protocol has delivered everything and acknowledged the peer's end (then
//! lingers while the peer still sends), or failed.

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::os::fd::OwnedFd;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, Weak};
use std::thread;
use std::time::{Duration, Instant};

use rustix::event::{eventfd, poll, EventfdFlags, PollFd, PollFlags, Timespec};
use transputation_blast::{Connection, Params};
use transputation_probe::stamped::{arrival_instant, recv_stamped, stamp_arrivals};

use crate::config::{session_number, Config};
use crate::transports::udp::{client_socket, configure};
use crate::{ByteCounts, Channel, Error, Result, SenderHint, SocketBuffers, TuneSender};

/// Datagrams sent per turn of the loop at most (then it looks for arrivals).
const BATCH: usize = 64;
/// Datagrams taken per turn at most.
const TAKE: usize = 256;
/// The largest datagram received.
const MAX_DATAGRAM: usize = 65536;
/// Sessions a listener remembers, to ignore repeated HELLOs.
const REMEMBERED: usize = 64;
/// How long a connection the application dropped stays at least, once the peer's stream
/// is complete, to acknowledge its end again if that end comes again.
const LINGER: Duration = Duration::from_millis(200);
/// Copies of the CLOSE a dropped channel sends. It is often the peer's only word that
/// its stream arrived: the process exits at once and takes with it the thread that would
/// answer the peer's retries, so a single lost CLOSE left the peer waiting for its I/O
/// timeout (1 session in 250 at 1 % loss). Copies are harmless: a CLOSE is taken as often
/// as it comes.
const CLOSE_COPIES: usize = 3;
/// A kernel arrival time older than this is not trusted (a clock step between it and now).
const STAMP_TRUSTED: Duration = Duration::from_millis(500);
/// How long the thread stays awake for the next packet of a train it times.
const SPIN: Duration = Duration::from_micros(100);

/// What the thread and the channel share.
#[derive(Debug)]
struct State {
    conn: Connection,
    counts: ByteCounts,
    /// The application dropped its channel: end once everything is delivered.
    dropped: bool,
    /// The thread ended (with this error if the socket failed).
    ended: bool,
    socket_error: Option<String>,
}

#[derive(Debug)]
struct Shared {
    state: Mutex<State>,
    changed: Condvar,
    wake: OwnedFd,
    sock: UdpSocket,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Waits at most `left` for the thread's news (a datagram taken, the connection ended).
    fn wait<'a>(&self, s: MutexGuard<'a, State>, left: Duration) -> MutexGuard<'a, State> {
        self.changed
            .wait_timeout(s, left)
            .unwrap_or_else(|p| p.into_inner())
            .0
    }

    /// Wakes the thread from its `poll`.
    fn wake(&self) {
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }
}

fn io_err(during: &'static str) -> impl Fn(io::Error) -> Error {
    move |source| Error::Io { during, source }
}


/// A `blast` server socket.
#[derive(Debug)]
pub(super) struct Listener {
    sock: UdpSocket,
    pub(super) local_addr: SocketAddr,
    accepted: Mutex<VecDeque<u64>>,
}

impl Listener {
    pub(super) fn bind(addr: SocketAddr) -> Result<Self> {
        let sock = UdpSocket::bind(addr).map_err(io_err("binding the server socket"))?;
        let local_addr = sock
            .local_addr()
            .map_err(io_err("reading the server's address"))?;
        Ok(Listener {
            sock,
            local_addr,
            accepted: Mutex::new(VecDeque::new()),
        })
    }

    /// Waits at most [`Config::accept_wait`] for the HELLO of a new session and answers it
    /// from a socket of its own.
    pub(super) fn accept(&self, params: Params, cfg: &Config) -> Result<BlastChannel> {
        let deadline = cfg.accept_deadline();
        let mut buf = vec![0u8; MAX_DATAGRAM];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout {
                    during: "waiting for a client to connect",
                    after: cfg.accept_wait(),
                });
            }
            self.sock
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .map_err(io_err("configuring the server socket"))?;
            let (n, from) = match self.sock.recv_from(&mut buf) {
                Ok(r) => r,
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => continue,
                    io::ErrorKind::Interrupted | io::ErrorKind::ConnectionRefused => continue,
                    _ => return Err(io_err("waiting for a client to connect")(e)),
                },
            };
            let now = Instant::now();
            let Some(conn) = Connection::server(now, &buf[..n], params) else {
                continue; // not a blast HELLO
            };
            {
                let mut seen = self.accepted.lock().unwrap_or_else(|p| p.into_inner());
                if seen.contains(&conn.session()) {
                    continue; // a repeated HELLO of a session already answered
                }
                if seen.len() == REMEMBERED {
                    seen.pop_front();
                }
                seen.push_back(conn.session());
            }
            let mut local = self.local_addr;
            local.set_port(0);
            let sock = UdpSocket::bind(local).map_err(io_err("binding a connection socket"))?;
            configure(&sock, cfg);
            sock.connect(from)
                .map_err(io_err("connecting to the client"))?;
            return BlastChannel::start(sock, None, conn, cfg);
        }
    }
}

/// The client: HELLO to `addr` until a WELCOME comes (from the server's new socket),
/// within the connect budget.
pub(super) fn connect(addr: SocketAddr, params: Params, cfg: &Config) -> Result<BlastChannel> {
    let sock = client_socket(addr, cfg)?;
    stamp_arrivals(&sock);
    let params = Params {
        idle_timeout: cfg.connect_budget(),
        ..params
    };
    let conn = Connection::client(Instant::now(), session_number(), params);
    let ch = BlastChannel::start(sock, Some(addr), conn, cfg)?;
    let deadline = Instant::now() + cfg.connect_budget();
    let mut s = ch.shared.lock();
    loop {
        if s.conn.is_open() {
            break;
        }
        if let Some(e) = s.conn.error() {
            return Err(Error::Connect {
                addr,
                attempts: 1,
                source: io::Error::new(io::ErrorKind::TimedOut, e.to_string()),
            });
        }
        if let Some(e) = &s.socket_error {
            return Err(Error::Connect {
                addr,
                attempts: 1,
                source: io::Error::other(e.clone()),
            });
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::Connect {
                addr,
                attempts: 1,
                source: io::Error::new(io::ErrorKind::TimedOut, "no answer to the blast HELLO"),
            });
        }
        s = ch.shared.wait(s, left);
    }
    drop(s);
    Ok(ch)
}

/// A [`Channel`] over one `blast` connection.
#[derive(Debug)]
pub(super) struct BlastChannel {
    shared: Arc<Shared>,
    timeout: Duration,
    peer: Option<SocketAddr>,
    buffers: Option<SocketBuffers>,
    closed: bool,
}

impl BlastChannel {
    /// Starts the connection's thread on `sock` (connected for a server; for a client,
    /// `server` is where its HELLOs go until the WELCOME names the server's socket).
    fn start(
        sock: UdpSocket,
        server: Option<SocketAddr>,
        conn: Connection,
        cfg: &Config,
    ) -> Result<Self> {
        sock.set_nonblocking(true)
            .map_err(io_err("configuring a connection"))?;
        let wake = eventfd(0, EventfdFlags::NONBLOCK | EventfdFlags::CLOEXEC)
            .map_err(|e| io_err("making the connection's wake-up")(e.into()))?;
        let buffers = crate::channel::read_socket_buffers(&sock);
        let peer = sock.peer_addr().ok().or(server);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                conn,
                counts: ByteCounts::default(),
                dropped: false,
                ended: false,
                socket_error: None,
            }),
            changed: Condvar::new(),
            wake,
            sock,
        });

        let thread_shared = shared.clone();
        let idle = cfg.io_timeout;
        thread::Builder::new()
            .name("blast".into())
            .spawn(move || drive(server, &thread_shared, idle))
            .map_err(io_err("starting the connection's thread"))?;
        Ok(BlastChannel {
            shared,
            timeout: cfg.io_timeout,
            peer,
            buffers,
            closed: false,
        })
    }

    /// The connection's failure as this crate's error, if it failed.
    fn failure(s: &State, during: &'static str) -> Option<Error> {
        if let Some(e) = s.conn.error() {
            return Some(match e {
                transputation_blast::Error::Protocol(p) => Error::Malformed {
                    what: format!("a blast datagram that breaks the protocol: {p}"),
                },
                transputation_blast::Error::Silent(after) => Error::Timeout {
                    during,
                    after: *after,
                },
            });
        }
        if let Some(e) = &s.socket_error {
            return Some(Error::Io {
                during,
                source: io::Error::other(e.clone()),
            });
        }
        s.ended.then_some(Error::Closed { during })
    }

    /// Waits on the shared state until `ready` holds, the connection fails, or the I/O
    /// timeout passes; for a wait to send (`sending`), also fails once the peer reads no
    /// more.
    fn wait_until(
        &self,
        during: &'static str,
        sending: bool,
        mut ready: impl FnMut(&mut State) -> bool,
    ) -> Result<()> {
        let deadline = Instant::now() + self.timeout;
        let mut s = self.shared.lock();
        loop {
            if ready(&mut s) {
                return Ok(());
            }
            if let Some(e) = Self::failure(&s, during) {
                return Err(e);
            }
            if sending && s.conn.peer_stopped().is_some() {
                return Err(Error::Closed { during });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout {
                    during,
                    after: self.timeout,
                });
            }
            s = self.shared.wait(s, left);
        }
    }
}

impl Channel for BlastChannel {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        if self.closed && !bytes.is_empty() {
            return Err(Error::Io {
                during: "sending",
                source: io::Error::new(io::ErrorKind::BrokenPipe, "the channel was closed"),
            });
        }
        let mut at = 0;
        let shared = self.shared.clone();
        self.wait_until("sending", true, |s| {
            let n = s.conn.write(&bytes[at..]);
            if n > 0 {
                shared.wake();
            }
            s.counts.sent += n as u64;
            at += n;
            at == bytes.len()
        })
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.flush()?;
        let mut filled = 0;
        let mut ended = false;
        let shared = self.shared.clone();
        self.wait_until("receiving", false, |s| {
            let n = s.conn.read(&mut buf[filled..]);
            if n > 0 {
                // The window opened: a FEEDBACK may be due.
                shared.wake();
            }
            s.counts.received += n as u64;
            filled += n;
            ended = filled < buf.len() && s.conn.read_all();
            filled == buf.len() || ended
        })?;
        if ended {
            return Err(Error::Closed {
                during: "receiving",
            });
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        let mut s = self.shared.lock();
        if let Some(e) = Self::failure(&s, "sending") {
            return Err(e);
        }
        s.conn.flush();
        drop(s);
        self.shared.wake();
        Ok(())
    }

    fn close(&mut self) -> Result<()> {
        self.flush()?;
        self.closed = true;
        self.shared.lock().conn.finish();
        self.shared.wake();
        // The bytes live only here until the peer has them, and the end too: a process
        // that exits after `close` takes the connection's thread with it, so the end must
        // be acknowledged before `close` returns, or the peer never learns the stream
        // ended. A peer that holds every byte of ours and then left (its CLOSE: it read
        // what it wanted and was dropped before our end arrived) has all there was to
        // deliver. One that ended its own stream and holds ours may go silent without
        // acknowledging the end: once both streams are whole, it gets a few round trips
        // ([`close_grace`]) for that.
        let deadline = Instant::now() + self.timeout;
        let mut whole_since: Option<Instant> = None;
        let mut s = self.shared.lock();
        loop {
            if s.conn.sent_all() {
                return Ok(());
            }
            let delivered = s.conn.bytes_delivered();
            let both_whole = delivered && s.conn.peer_complete();
            if delivered && s.conn.peer_stopped().is_some() {
                return Ok(()); // it left holding every byte: only the end's answer is missing
            }
            if let Some(e) = Self::failure(&s, "closing") {
                return Err(e);
            }
            if s.conn.peer_stopped().is_some() {
                return Err(Error::Closed { during: "closing" });
            }
            let now = Instant::now();
            let mut until = deadline;
            if both_whole {
                let since = *whole_since.get_or_insert(now);
                let end = since + close_grace(s.conn.srtt());
                if now >= end {
                    return Ok(());
                }
                until = until.min(end);
            }
            let left = until.saturating_duration_since(now);
            if left.is_zero() {
                return Err(Error::Timeout {
                    during: "closing",
                    after: self.timeout,
                });
            }
            s = self.shared.wait(s, left);
        }
    }

    fn stats(&self) -> ByteCounts {
        self.shared.lock().counts
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        self.buffers
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer
    }

    fn sender_tuning(&self) -> Option<Arc<dyn TuneSender>> {
        Some(Arc::new(StartRate {
            shared: Arc::downgrade(&self.shared),
        }))
    }
}

/// A channel's tuning handle: passes a hint's rate to its connection
/// ([`Connection::start_at`]).
#[derive(Debug)]
struct StartRate {
    /// Weak, so that a handle kept longer does not keep the connection's socket open.
    shared: Weak<Shared>,
}

impl TuneSender for StartRate {
    fn apply(&self, hint: &SenderHint) -> Result<()> {
        let refuse = |option: &str, value: String| Error::BadOption {
            transport: "blast",
            option: option.into(),
            value,
            reason: "blast paces at a rate and has no congestion window to set".into(),
        };
        if let Some(cc) = &hint.congestion {
            return Err(refuse("cc", cc.clone()));
        }
        if let Some(iw) = hint.initial_window {
            return Err(refuse("iw", iw.to_string()));
        }
        let (Some(rate), Some(shared)) = (hint.start_rate, self.shared.upgrade()) else {
            return Ok(());
        };
        shared.lock().conn.start_at(rate as f64);
        shared.wake();
        Ok(())
    }
}

impl Drop for BlastChannel {
    fn drop(&mut self) {
        // The thread delivers what is left (or gives up after the idle timeout), then ends.
        let mut s = self.shared.lock();
        if std::env::var_os("TRANSPUTATION_BLAST_STATS").is_some() {
            eprintln!("blast connection: {}", s.conn.stats());
        }
        s.conn.finish();
        s.dropped = true;
        // Tell the peer at once which of its bytes arrived and whether its stream arrived
        // whole: it may be waiting for a FEEDBACK that this process, about to end, would
        // not send. (A copy of the FEEDBACK with the same number is ignored as old.)
        if s.conn.is_open() && s.conn.error().is_none() {
            let feedback = s.conn.leaving_feedback(Instant::now());
            let close = s.conn.close_datagram();
            for _ in 0..CLOSE_COPIES {
                if let Some(f) = &feedback {
                    let _ = self.shared.sock.send(f);
                }
                let _ = self.shared.sock.send(&close);
            }
        }
        drop(s);
        self.shared.wake();
    }
}

/// How long `close` waits for its end's acknowledgement once both streams arrived whole:
/// four round trips (a lost end goes again at the probe timeout), from 20 ms to 2 s.
fn close_grace(srtt: Option<Duration>) -> Duration {
    srtt.map_or(LINGER, |r| r * 4)
        .clamp(Duration::from_millis(20), Duration::from_secs(2))
}

/// The connection's thread (see the module docs).
fn drive(server: Option<SocketAddr>, shared: &Shared, idle: Duration) {
    let sock = &shared.sock;
    let mut connected = server.is_none();
    let last_arrival = Mutex::new(Instant::now());
    let mut out: Vec<Vec<u8>> = (0..BATCH).map(|_| Vec::new()).collect();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut gso = true;
    loop {
        let now = Instant::now();
        let mut s = shared.lock();
        let _ = s.conn.handle_timeout(now);
        let mut n = 0;
        while n < BATCH && s.conn.poll_transmit(now, &mut out[n]) {
            n += 1;
        }
        // After the application let go: deliver what is left, then stay to acknowledge
        // the peer's end (its FIN may come again if our FEEDBACK is lost) until the peer
        // is quiet for a few round trips, or silent for the idle timeout.
        let quiet = now.saturating_duration_since(*last_arrival.lock().unwrap_or_else(|p| p.into_inner()));
        let linger = s
            .conn
            .srtt()
            .map_or(LINGER, |r| (r * 3).max(LINGER))
            .min(idle);
        let done = s.conn.error().is_some()
            || (s.dropped
                && (s.conn.sent_all() || !s.conn.is_open() || s.conn.peer_stopped().is_some())
                && n == 0
                && (s.conn.peer_complete() && quiet >= linger || quiet >= idle));
        if done {
            s.ended = true;
            drop(s);
            shared.changed.notify_all();
            return;
        }
        let deadline = s.conn.poll_timeout(now);
        drop(s);
        if let Err(e) = send_batch(sock, &out[..n], server.filter(|_| !connected), &mut gso) {
            let mut s = shared.lock();
            s.socket_error = Some(format!("sending a datagram: {e}"));
            s.ended = true;
            drop(s);
            shared.changed.notify_all();
            return;
        }
        if n == BATCH {
            // More may be due at once; look for arrivals without sleeping.
            take_arrivals(sock, &mut buf, shared, &mut connected, server, &last_arrival, false);
            continue;
        }
        let wait = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        let slept = wait != Some(Duration::ZERO);
        if slept {
            let timeout = wait.map(|w| Timespec {
                tv_sec: w.as_secs() as i64,
                tv_nsec: i64::from(w.subsec_nanos()),
            });
            let mut fds = [
                PollFd::new(sock, PollFlags::IN),
                PollFd::new(&shared.wake, PollFlags::IN),
            ];
            let _ = poll(&mut fds, timeout.as_ref());
            if fds[1].revents().contains(PollFlags::IN) {
                let mut b = [0u8; 8];
                let _ = rustix::io::read(&shared.wake, &mut b);
            }
        }
        take_arrivals(sock, &mut buf, shared, &mut connected, server, &last_arrival, slept);
    }
}

/// Whether a send error only loses the datagram: no room in the socket buffer (the
/// protocol repairs it as a loss), or refused by the peer's host (ICMP: the peer is gone,
/// which its silence will show).
fn tolerated(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::WouldBlock | io::ErrorKind::ConnectionRefused | io::ErrorKind::Interrupted
    )
}

/// Sends `batch` to `to` (a client's HELLOs, before the server's socket is known), or on
/// the connected socket: each run of datagrams of one size (the last of a run may be
/// shorter) as one send that the kernel cuts into datagrams (UDP GSO, `UDP_SEGMENT`) while
/// `gso` holds, the rest (and every run once a GSO send failed: an old kernel, a device
/// that cannot) in one `sendmmsg` each. Datagrams the socket cannot take now are dropped
/// ([`tolerated`]); other errors are the socket's.
fn send_batch(
    sock: &UdpSocket,
    batch: &[Vec<u8>],
    to: Option<SocketAddr>,
    gso: &mut bool,
) -> io::Result<()> {
    if let Some(addr) = to {
        for d in batch {
            match sock.send_to(d, addr) {
                Err(e) if !tolerated(&e) => return Err(e),
                _ => {}
            }
        }
        return Ok(());
    }
    let mut at = 0;
    while at < batch.len() {
        let size = batch[at].len();
        let mut end = at + 1;
        let mut total = size;
        while end < batch.len()
            && end - at < GSO_SEGMENTS
            && batch[end].len() <= size
            && total + batch[end].len() <= GSO_BYTES
        {
            total += batch[end].len();
            end += 1;
            if batch[end - 1].len() < size {
                break; // a shorter datagram ends a run
            }
        }
        let run = &batch[at..end];
        at = end;
        if *gso && run.len() > 1 {
            match send_segmented(sock, run, size) {
                Ok(()) => continue,
                Err(e) if tolerated(&e) => continue,
                Err(_) => *gso = false,
            }
        }
        send_each(sock, run)?;
    }
    Ok(())
}

/// Segments of one UDP GSO send at most (the kernel's `UDP_MAX_SEGMENTS`).
const GSO_SEGMENTS: usize = 64;
/// Bytes of one UDP GSO send at most (an IPv4 datagram's largest UDP payload).
const GSO_BYTES: usize = 65_507;

/// One send of `run`, cut by the kernel into datagrams of `size` bytes.
fn send_segmented(sock: &UdpSocket, run: &[Vec<u8>], size: usize) -> io::Result<()> {
    use nix::sys::socket::{sendmsg, ControlMessage, MsgFlags, SockaddrStorage};
    use std::os::fd::AsRawFd;
    let segment = u16::try_from(size).map_err(|_| io::Error::other("a datagram over 64 KiB"))?;
    let iov: Vec<io::IoSlice<'_>> = run.iter().map(|d| io::IoSlice::new(d)).collect();
    sendmsg::<SockaddrStorage>(
        sock.as_raw_fd(),
        &iov,
        &[ControlMessage::UdpGsoSegments(&segment)],
        MsgFlags::empty(),
        None,
    )
    .map(|_| ())
    .map_err(io::Error::from)
}

/// `run` as separate datagrams in one system call (`sendmmsg`), dropping those the socket
/// cannot take now.
fn send_each(sock: &UdpSocket, run: &[Vec<u8>]) -> io::Result<()> {
    use rustix::net::{sendmmsg, MMsgHdr, SendAncillaryBuffer, SendFlags};
    let slices: Vec<[io::IoSlice<'_>; 1]> = run.iter().map(|d| [io::IoSlice::new(d)]).collect();
    let mut controls: Vec<SendAncillaryBuffer<'_, '_, '_>> =
        run.iter().map(|_| SendAncillaryBuffer::default()).collect();
    let mut msgs: Vec<MMsgHdr<'_>> = slices
        .iter()
        .zip(controls.iter_mut())
        .map(|(iov, control)| MMsgHdr::new(iov, control))
        .collect();
    let mut at = 0;
    while at < msgs.len() {
        match sendmmsg(sock, &mut msgs[at..], SendFlags::empty()) {
            Ok(0) => break,
            Ok(k) => at += k,
            Err(e) => {
                let e = io::Error::from(e);
                if !tolerated(&e) {
                    return Err(e);
                }
                // This one is dropped; the rest still go.
                at += 1;
            }
        }
    }
    Ok(())
}

/// Takes the datagrams waiting on `sock` (up to [`TAKE`]) into the protocol. A client
/// whose connection opened on one of them connects its socket to its sender.
///
/// Each arrival is marked prompt (timed to within the gap between packets) if the socket
/// was empty before it (`empty_before` for the first: the thread slept in `poll` until
/// it came) and nothing waits behind it. While the client times the server's train, the
/// thread does not sleep between its packets but spins [`SPIN`] for the next one, so that
/// its reads are prompt (the probe's server does the same, see `transputation-probe`).
#[allow(clippy::too_many_arguments)]
fn take_arrivals(
    sock: &UdpSocket,
    buf: &mut [u8],
    shared: &Shared,
    connected: &mut bool,
    server: Option<SocketAddr>,
    last_arrival: &Mutex<Instant>,
    mut empty_before: bool,
) {
    let mut any = false;
    let mut spin_until: Option<Instant> = None;
    let mut taken = 0;
    let stamping = server.is_some() && shared.lock().conn.times_arrivals(Instant::now());
    while taken < TAKE {
        let received = if stamping {
            recv_stamped(sock, buf)
        } else {
            sock.recv_from(buf).map(|(n, from)| (n, from, None))
        };
        let (n, from, stamp) = match received {
            Ok(r) => r,
            Err(_) => {
                let now = Instant::now();
                if shared.lock().conn.timing_train(now)
                    && now < *spin_until.get_or_insert(now + SPIN)
                {
                    empty_before = true;
                    std::hint::spin_loop();
                    continue;
                }
                break;
            }
        };
        taken += 1;
        spin_until = None;
        let now = Instant::now();
        let nothing_behind = matches!(
            sock.peek(&mut [0u8; 1]),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock
        );
        let mut prompt = empty_before && nothing_behind;
        empty_before = nothing_behind;
        // The kernel's arrival time, where it gave one, is exact whenever this read came.
        let mut at = now;
        if let Some(arrived) = stamp.and_then(|t| arrival_instant(t, now, STAMP_TRUSTED)) {
            at = arrived;
            prompt = true;
        }
        let mut s = shared.lock();
        let was_open = s.conn.is_open();
        let _ = s.conn.handle_datagram_timed(at, &buf[..n], prompt);
        if !*connected && server.is_some() && !was_open && s.conn.is_open() {
            // The WELCOME came from the server's socket for this session.
            if sock.connect(from).is_ok() {
                *connected = true;
            }
        }
        any = true;
    }
    if any {
        *last_arrival.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        shared.changed.notify_all();
    }
}

#[cfg(test)]
mod tests;
