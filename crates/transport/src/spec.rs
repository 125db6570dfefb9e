//! Choosing a transport by name, and the server/client constructors behind the name.

use std::fmt;
use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::str::FromStr;
use std::time::{Duration, Instant};

use crate::quic::{self, QuicCongestion};
use crate::{mtcp, tcp, udp, udt, Channel, Error, Result};

/// Timeouts and retries shared by every transport.
#[derive(Debug, Clone)]
pub struct Config {
    /// Longest wait for any progress when sending, receiving or accepting (default 30 s).
    pub io_timeout: Duration,
    /// Longest wait for a connection (default 5 s); see [`Config::connect_budget`].
    pub connect_timeout: Duration,
    /// Connection attempts before giving up (default 50); a refused attempt is retried
    /// after [`Config::retry_delay`], so a client may start before its server.
    pub connect_attempts: u32,
    /// Pause between connection attempts (default 100 ms).
    pub retry_delay: Duration,
    /// Bytes of buffering each transport should give one direction of a connection
    /// (kernel socket buffers for `tcp`, `mtcp` and `udp`; the library's buffers for `udt`;
    /// flow-control windows for `quic`), normally sized from the path's bandwidth-delay
    /// product (paper §4.2, [`crate::sizing`]). `mtcp` gives each of its N connections an
    /// N-th. Set before connecting and listening, so TCP's window scale can use it.
    /// `None`: the transport's own default (kernel auto-tuning for TCP, 32 MiB for `udp`).
    /// An option in the transport's name that sets a buffer wins over this.
    pub buffer_bytes: Option<usize>,
}

impl Config {
    /// How long connecting may take in all, on every transport: `connect_timeout` or
    /// `connect_attempts` × `retry_delay`, whichever is longer (5 s by default). Each
    /// attempt waits at most what is left of it, so a server that never answers (a UDT or
    /// QUIC handshake into silence, a TCP SYN dropped on the way) costs this budget once,
    /// not once per attempt.
    pub fn connect_budget(&self) -> Duration {
        let retrying = self
            .retry_delay
            .saturating_mul(self.connect_attempts.max(1));
        self.connect_timeout.max(retrying)
    }

    /// When connecting started now must give up: now + [`Config::connect_budget`], or a
    /// century from now for a budget too large to add (`Duration::MAX` as "no limit").
    pub(crate) fn connect_deadline(&self) -> Instant {
        let now = Instant::now();
        now.checked_add(self.connect_budget())
            .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400))
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            io_timeout: Duration::from_secs(30),
            connect_timeout: Duration::from_secs(5),
            connect_attempts: 50,
            retry_delay: Duration::from_millis(100),
            buffer_bytes: None,
        }
    }
}

/// A transport and its options, parsed from `NAME` or `NAME:key=value,...`.
///
/// Names: `tcp` (options `cc`), `tcp-bbr` (= `tcp:cc=bbr`), `mtcp` (options `streams`,
/// `chunk`, `cc`), `udp` (options `mtu`, `rate`), `udt` (options `mss`, `sndbuf`, `rcvbuf`,
/// `fc`, `udpbuf`, `ack`), `quic` (options `cc`, `window`, `mtu`). [`TransportSpec`]'s `Display`
/// gives the canonical string.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TransportSpec {
    /// Kernel TCP with Nagle's algorithm off.
    Tcp {
        /// The congestion control algorithm (`None`: the system's default).
        cc: Option<String>,
    },
    /// Several TCP connections carrying one ordered byte stream, striped in chunks.
    Mtcp {
        /// Number of connections.
        streams: u16,
        /// Bytes per chunk.
        chunk: u32,
        /// The congestion control algorithm (`None`: the system's default).
        cc: Option<String>,
    },
    /// Sequence-numbered, paced UDP datagrams without retransmission: loss is an error.
    Udp {
        /// The path MTU: IP packet bytes per datagram (1500: 1448 data bytes over IPv4).
        mtu: u32,
        /// Pacing rate in bits per second (0: unlimited).
        rate: u64,
    },
    /// The reference UDT4 library (libudt): reliable, rate-based congestion control over UDP.
    Udt {
        /// The largest IP packet, in bytes (UDT_MSS); the two ends use the smaller value.
        mss: u32,
        /// UDT's send buffer in bytes (`None`: [`Config::buffer_bytes`], else UDT's default).
        sndbuf: Option<u32>,
        /// UDT's receive buffer in bytes (`None`: [`Config::buffer_bytes`], else UDT's
        /// default).
        rcvbuf: Option<u32>,
        /// The flow window in packets (`None`: UDT's 25600, or enough for the receive buffer).
        fc: Option<u32>,
        /// The kernel buffers of UDT's UDP socket in bytes (`None`: UDT's defaults).
        udpbuf: Option<u32>,
        /// A full ACK after every `ack` data packets (0: only UDT's timer; see the `udt`
        /// module docs).
        ack: u32,
    },
    /// One QUIC connection (quinn) with one bidirectional stream; TLS 1.3 encrypted, the
    /// server not authenticated by QUIC itself ([`crate::SecureChannel`] authenticates the
    /// session on top, as on every transport).
    Quic {
        /// quinn's congestion controller.
        cc: QuicCongestion,
        /// The flow-control windows (stream and connection receive windows, send window)
        /// in bytes; `None`: [`Config::buffer_bytes`] if set, else 32 MiB, twice the
        /// bandwidth-delay product of 1 Gbit/s × 100 ms.
        window: Option<u64>,
        /// The path MTU in IP bytes, which QUIC packets start from (`None`: quinn's default,
        /// 1200-byte UDP payloads, probing up to 1452). Both ends should name the same.
        mtu: Option<u32>,
        /// The congestion controller's initial window in bytes (`None`: quinn's, 12,000
        /// bytes, 240,000 for bbr). A larger one pays on a long path whose capacity is
        /// known: every direction of a session starts at that window instead of
        /// slow-starting (about ten round trips to fill 500 Mbit/s × 300 ms); on a path
        /// with less capacity than assumed, the first flight overflows the bottleneck
        /// queue and the controller backs off from the losses.
        iw: Option<u64>,
    },
}

/// One transport as `transputation transports` lists it.
#[derive(Debug)]
pub struct TransportInfo {
    /// The name to pass.
    pub name: &'static str,
    /// Its options, `key=meaning (default)`.
    pub options: &'static str,
    /// One line on what it is.
    pub description: &'static str,
    /// `Ok` if it works on this machine, else why not.
    pub available: Result<()>,
}

const NAMES: &str = "tcp, tcp-bbr, mtcp, udp, udt, quic";
const TCP_OPTIONS: &str = "cc";
const MTCP_OPTIONS: &str = "streams, chunk, cc";
const UDP_OPTIONS: &str = "mtu, rate";
const UDT_OPTIONS: &str = "mss, sndbuf, rcvbuf, fc, udpbuf, ack";
const QUIC_OPTIONS: &str = "cc, window, mtu, iw";
/// Default mtcp connection count.
const DEFAULT_STREAMS: u16 = 4;
/// Default mtcp chunk size.
const DEFAULT_CHUNK: u32 = 128 << 10;

/// Every transport this build has, with whether it works on this machine.
pub fn transports() -> Vec<TransportInfo> {
    vec![
        TransportInfo {
            name: "tcp",
            options: "cc=ALGORITHM (system default)",
            description: "kernel TCP, TCP_NODELAY, the system's default congestion control \
                          (in the testbed: the emulated hosts', --host-cc, cubic by default)",
            available: Ok(()),
        },
        TransportInfo {
            name: "tcp-bbr",
            options: "(same as tcp:cc=bbr)",
            description: "kernel TCP with BBR congestion control",
            available: check_congestion_control("bbr"),
        },
        TransportInfo {
            name: "mtcp",
            options: "streams=N (4), chunk=BYTES (131072), cc=ALGORITHM (system default)",
            description:
                "N parallel TCP connections carrying one ordered stream, striped in chunks",
            available: Ok(()),
        },
        TransportInfo {
            name: "udp",
            options: "mtu=BYTES path MTU (1500), rate=RATE e.g. 500mbit, 1gbit, unlimited (1gbit)",
            description: "paced, sequence-numbered UDP datagrams, no retransmission: \
                          loss or reordering is an error",
            available: Ok(()),
        },
        TransportInfo {
            name: "udt",
            options: "mss=BYTES (1500), sndbuf=BYTES, rcvbuf=BYTES (8192 packets), \
                      fc=PACKETS flow window (25600), udpbuf=BYTES, ack=PACKETS a full ACK \
                      every N data packets (1; 0: UDT's 10 ms timer only)",
            description: "UDT4 (libudt, the successor of SABUL): reliable, rate-based \
                          congestion control over UDP",
            available: udt::check(),
        },
        TransportInfo {
            name: "quic",
            options: "cc=cubic|bbr|newreno (cubic), window=BYTES flow-control windows \
                      (buffer size from the config, else 33554432), mtu=BYTES path MTU \
                      to start from (quinn's 1200-byte packets, probing up to 1452), \
                      iw=BYTES initial congestion window (quinn's: 12000, bbr 240000; \
                      for a known path: its bandwidth-delay product)",
            description: "QUIC (quinn), one connection, one stream, user-space congestion \
                          control; TLS 1.3 encrypted, not authenticated by QUIC itself \
                          (protected sessions authenticate on top, as on every transport)",
            available: Ok(()),
        },
    ]
}

/// The kernel's congestion control algorithms, as listed in
/// /proc/sys/net/ipv4/tcp_available_congestion_control ("unknown" if unreadable).
pub fn available_congestion_controls() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// Checks that sockets can use congestion control `algorithm`, by setting it on a
/// throw-away socket.
pub fn check_congestion_control(algorithm: &str) -> Result<()> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|source| Error::Io {
        during: "binding a probe socket",
        source,
    })?;
    set_congestion(&l, algorithm)
}

/// A random, non-zero number that tells one client's session (its connections, its
/// datagrams) from another's; unpredictable enough for that, not a secret.
pub(crate) fn session_number() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish().max(1)
}

/// Sets TCP_CONGESTION on a socket, and reads it back.
pub(crate) fn set_congestion(fd: impl std::os::fd::AsFd, algorithm: &str) -> Result<()> {
    let fail = |source: io::Error| Error::CongestionControl {
        algorithm: algorithm.to_string(),
        available: available_congestion_controls(),
        source,
    };
    rustix::net::sockopt::set_tcp_congestion(&fd, algorithm).map_err(|e| fail(e.into()))?;
    let got = rustix::net::sockopt::tcp_congestion(&fd).map_err(|e| fail(e.into()))?;
    if got != algorithm {
        return Err(fail(io::Error::other(format!(
            "the kernel reports '{got}' after setting it"
        ))));
    }
    Ok(())
}

impl TransportSpec {
    /// The transport's name, without options.
    pub fn name(&self) -> &'static str {
        match self {
            TransportSpec::Tcp { .. } => "tcp",
            TransportSpec::Mtcp { .. } => "mtcp",
            TransportSpec::Udp { .. } => "udp",
            TransportSpec::Udt { .. } => "udt",
            TransportSpec::Quic { .. } => "quic",
        }
    }

    /// The kernel TCP congestion control algorithm asked for, if any (`quic`'s
    /// controllers run in user space: see [`TransportSpec::Quic`]).
    pub fn congestion_control(&self) -> Option<&str> {
        match self {
            TransportSpec::Tcp { cc } | TransportSpec::Mtcp { cc, .. } => cc.as_deref(),
            TransportSpec::Udp { .. } | TransportSpec::Udt { .. } | TransportSpec::Quic { .. } => {
                None
            }
        }
    }

    /// A `quic` endpoint's parameters (`None` for other transports): the options, with
    /// the window chosen as [`TransportSpec::Quic`] says.
    fn quic_params(&self, cfg: &Config) -> Option<quic::Params> {
        match self {
            TransportSpec::Quic {
                cc,
                window,
                mtu,
                iw,
            } => Some(quic::Params {
                cc: *cc,
                window: quic::window_for(*window, cfg),
                mtu: *mtu,
                initial_window: *iw,
            }),
            _ => None,
        }
    }

    /// The `udt` options, for a `udt` spec.
    fn udt_options(&self) -> Option<udt::Options> {
        match *self {
            TransportSpec::Udt {
                mss,
                sndbuf,
                rcvbuf,
                fc,
                udpbuf,
                ack,
            } => Some(udt::Options {
                mss,
                sndbuf,
                rcvbuf,
                fc,
                udpbuf,
                ack,
            }),
            _ => None,
        }
    }

    /// Sets up a server on `addr` (port 0: any free port; see [`Listener::local_addr`]).
    /// Fails at once if the congestion control asked for is missing.
    pub fn listen(&self, addr: SocketAddr, cfg: &Config) -> Result<Listener> {
        if let Some(cc) = self.congestion_control() {
            check_congestion_control(cc)?;
        }
        let (inner, local_addr) = if let TransportSpec::Udp { .. } = self {
            let l = udp::UdpListener::bind(addr)?;
            let a = l.local_addr()?;
            (ServerSocket::Udp(l), a)
        } else if let Some(opts) = self.udt_options() {
            let l = udt::UdtListener::bind(addr, &opts, cfg)?;
            let a = l.local_addr();
            (ServerSocket::Udt(l), a)
        } else if let Some(params) = self.quic_params(cfg) {
            let l = quic::QuicListener::bind(addr, &params, cfg)?;
            let a = l.local_addr();
            (ServerSocket::Quic(l), a)
        } else {
            let inner = tcp_listener(addr, self.tcp_buffer(cfg))?;
            inner.set_nonblocking(true).map_err(|source| Error::Io {
                during: "configuring the server socket",
                source,
            })?;
            let a = inner.local_addr().map_err(|source| Error::Io {
                during: "reading the server's address",
                source,
            })?;
            (ServerSocket::Tcp(inner), a)
        };
        Ok(Listener {
            spec: self.clone(),
            inner,
            local_addr,
            cfg: cfg.clone(),
        })
    }

    /// The socket buffer each TCP connection gets from [`Config::buffer_bytes`]: all of it
    /// for `tcp`; for `mtcp` an equal share per connection (rounded up), since the
    /// connections together carry one direction.
    fn tcp_buffer(&self, cfg: &Config) -> Option<usize> {
        let b = cfg.buffer_bytes?;
        Some(match self {
            TransportSpec::Mtcp { streams, .. } => b.div_ceil(usize::from(*streams).max(1)),
            _ => b,
        })
    }

    /// Sets up a client: connects to a server at `addr`, retrying as [`Config`] says.
    pub fn connect(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Channel>> {
        match self {
            TransportSpec::Tcp { cc } => {
                let deadline = cfg.connect_deadline();
                let s = connect_tcp(addr, cfg, deadline, cc.as_deref(), self.tcp_buffer(cfg))?;
                Ok(Box::new(tcp::TcpChannel::new(s, cfg)?))
            }
            TransportSpec::Mtcp { streams, chunk, cc } => {
                // One budget for all N connections (each with its own attempts).
                let deadline = cfg.connect_deadline();
                let mut conns = Vec::with_capacity(usize::from(*streams));
                for _ in 0..*streams {
                    let buffer = self.tcp_buffer(cfg);
                    conns.push(connect_tcp(addr, cfg, deadline, cc.as_deref(), buffer)?);
                }
                Ok(Box::new(mtcp::MtcpChannel::client(conns, *chunk, cfg)?))
            }
            TransportSpec::Udp { mtu, rate } => Ok(Box::new(udp::connect(addr, *mtu, *rate, cfg)?)),
            TransportSpec::Udt { .. } => {
                let opts = self.udt_options().expect("a udt spec");
                Ok(Box::new(udt::connect(addr, &opts, cfg)?))
            }
            TransportSpec::Quic { .. } => {
                let params = self.quic_params(cfg).expect("a quic spec");
                Ok(Box::new(quic::connect(addr, &params, cfg)?))
            }
        }
    }
}

/// A TCP socket for `addr`'s address family, with `buffer` bytes of socket buffers if
/// given. Buffers are set before connect or listen: the kernel picks a connection's TCP
/// window scale from the receive buffer when it sends or answers the SYN, and accepted
/// sockets inherit the listener's buffers.
fn tcp_socket(addr: &SocketAddr, buffer: Option<usize>) -> io::Result<socket2::Socket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(
        Domain::for_address(*addr),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    if let Some(b) = buffer {
        crate::channel::set_socket_buffers(&s, b)?;
    }
    Ok(s)
}

/// A listening TCP socket (SO_REUSEADDR, as std's `TcpListener::bind` sets it).
fn tcp_listener(addr: SocketAddr, buffer: Option<usize>) -> Result<TcpListener> {
    let listen = || -> io::Result<TcpListener> {
        let s = tcp_socket(&addr, buffer)?;
        s.set_reuse_address(true)?;
        s.bind(&addr.into())?;
        s.listen(128)?;
        Ok(s.into())
    };
    listen().map_err(|source| Error::Io {
        during: "binding the server socket",
        source,
    })
}

/// One TCP connection with retries, TCP_NODELAY, the congestion control and the buffers
/// set.
fn connect_tcp(
    addr: SocketAddr,
    cfg: &Config,
    deadline: Instant,
    cc: Option<&str>,
    buffer: Option<usize>,
) -> Result<TcpStream> {
    let mut attempts = Attempts::until(cfg, deadline);
    let mut last = None;
    while let Some(left) = attempts.next() {
        let s = tcp_socket(&addr, buffer).map_err(|source| Error::Io {
            during: "creating a socket",
            source,
        })?;
        match s.connect_timeout(&addr.into(), left) {
            Ok(()) => return prepare(s.into(), cfg, cc),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::Connect {
        addr,
        attempts: attempts.made(),
        source: last.unwrap_or_else(|| io::Error::other("no attempt made")),
    })
}

/// The connection attempts [`Config`] allows: at most `connect_attempts`, `retry_delay`
/// apart, all within [`Config::connect_budget`] (or a deadline given).
#[derive(Debug)]
pub(crate) struct Attempts {
    deadline: Instant,
    delay: Duration,
    max: u32,
    made: u32,
}

impl Attempts {
    pub(crate) fn new(cfg: &Config) -> Self {
        Self::until(cfg, cfg.connect_deadline())
    }

    pub(crate) fn until(cfg: &Config, deadline: Instant) -> Self {
        Attempts {
            deadline,
            delay: cfg.retry_delay,
            max: cfg.connect_attempts.max(1),
            made: 0,
        }
    }

    /// Counts the next attempt and returns the pause to wait before it (zero for the first,
    /// which is always made), or `None` when no attempt is left. For callers that wait in
    /// their own way (`quic`'s, asynchronously); see [`Attempts::next`].
    pub(crate) fn pause(&mut self) -> Option<Duration> {
        let pause = if self.made == 0 {
            Duration::ZERO
        } else if self.made >= self.max || Instant::now() + self.delay >= self.deadline {
            return None;
        } else {
            self.delay
        };
        self.made += 1;
        Some(pause)
    }

    /// The time an attempt starting now may take: what is left of the deadline, at least a
    /// millisecond (a zero timeout means "no timeout" to some APIs).
    pub(crate) fn left(&self) -> Duration {
        self.deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    }

    /// Waits out the pause before the next attempt and returns the time that attempt may
    /// take, or `None` when no attempt is left (the first one is always made).
    pub(crate) fn next(&mut self) -> Option<Duration> {
        let pause = self.pause()?;
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        Some(self.left())
    }

    /// Attempts made so far.
    pub(crate) fn made(&self) -> u32 {
        self.made
    }
}

/// Options every TCP connection gets, on both ends.
pub(crate) fn prepare(s: TcpStream, cfg: &Config, cc: Option<&str>) -> Result<TcpStream> {
    let io = |source| Error::Io {
        during: "configuring a connection",
        source,
    };
    s.set_nonblocking(false).map_err(io)?;
    s.set_nodelay(true).map_err(io)?;
    s.set_read_timeout(Some(cfg.io_timeout)).map_err(io)?;
    s.set_write_timeout(Some(cfg.io_timeout)).map_err(io)?;
    if let Some(cc) = cc {
        set_congestion(&s, cc)?;
    }
    Ok(s)
}

/// A server waiting for one peer.
#[derive(Debug)]
pub struct Listener {
    spec: TransportSpec,
    inner: ServerSocket,
    local_addr: SocketAddr,
    cfg: Config,
}

/// The socket a server listens on.
#[derive(Debug)]
enum ServerSocket {
    Tcp(TcpListener),
    Udp(udp::UdpListener),
    Udt(udt::UdtListener),
    Quic(quic::QuicListener),
}

impl Listener {
    /// The address clients connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Waits (at most [`Config::io_timeout`] per connection) for a client and sets up the
    /// channel to it.
    pub fn accept(&self) -> Result<Box<dyn Channel>> {
        match &self.spec {
            TransportSpec::Tcp { cc } => {
                let s = self.accept_tcp(cc.as_deref())?;
                Ok(Box::new(tcp::TcpChannel::new(s, &self.cfg)?))
            }
            TransportSpec::Mtcp { streams, chunk, cc } => Ok(Box::new(mtcp::MtcpChannel::server(
                || self.accept_tcp(cc.as_deref()),
                *streams,
                *chunk,
                &self.cfg,
            )?)),
            TransportSpec::Udp { mtu, rate } => {
                let ServerSocket::Udp(l) = &self.inner else {
                    unreachable!("a udp listener has a udp socket")
                };
                Ok(Box::new(l.accept(*mtu, *rate, &self.cfg)?))
            }
            TransportSpec::Udt { .. } => {
                let ServerSocket::Udt(l) = &self.inner else {
                    unreachable!("a udt listener has a udt socket")
                };
                Ok(Box::new(l.accept(&self.cfg)?))
            }
            TransportSpec::Quic { .. } => {
                let ServerSocket::Quic(l) = &self.inner else {
                    unreachable!("a quic listener has a quic endpoint")
                };
                Ok(Box::new(l.accept(&self.cfg)?))
            }
        }
    }

    /// One TCP connection: the non-blocking listener is accepted from as soon as `poll`
    /// says a connection is waiting (a sleep between attempts would add up to its length
    /// to every session's start), until the timeout.
    fn accept_tcp(&self, cc: Option<&str>) -> Result<TcpStream> {
        let ServerSocket::Tcp(inner) = &self.inner else {
            unreachable!("a tcp listener has a tcp socket")
        };
        let start = Instant::now();
        loop {
            match inner.accept() {
                Ok((s, _)) => return prepare(s, &self.cfg, cc),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    let left = self.cfg.io_timeout.saturating_sub(start.elapsed());
                    if left.is_zero() {
                        return Err(Error::Timeout {
                            during: "waiting for a client to connect",
                            after: self.cfg.io_timeout,
                        });
                    }
                    wait_readable(inner, left)?;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(Error::Io {
                        during: "accepting a connection",
                        source,
                    })
                }
            }
        }
    }
}

/// Waits until `listener` has a connection to accept, at most `timeout` (a wake-up
/// without one, as on a signal, returns early: the caller tries to accept and waits again).
fn wait_readable(listener: &std::net::TcpListener, timeout: Duration) -> Result<()> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    // At most a day per wait (every platform's poll takes that; the caller waits again).
    let timeout = Timespec::try_from(timeout.min(Duration::from_secs(86_400)))
        .expect("a day fits a timespec");
    match poll(&mut [PollFd::new(listener, PollFlags::IN)], Some(&timeout)) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(Error::Io {
            during: "waiting for a client to connect",
            source: e.into(),
        }),
    }
}

impl FromStr for TransportSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let (name, opts) = match s.split_once(':') {
            Some((n, o)) => (n.trim(), o),
            None => (s.trim(), ""),
        };
        let pairs = opts
            .split(',')
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")));
        let cc_value = |transport, v: &str| {
            if !v.is_empty()
                && v.len() < 16
                && v.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
            {
                Ok(v.to_string())
            } else {
                Err(bad(
                    transport,
                    "cc",
                    v,
                    "a kernel congestion control name such as cubic, reno or bbr",
                ))
            }
        };
        match name {
            "tcp" | "tcp-bbr" => {
                let mut cc = (name == "tcp-bbr").then(|| "bbr".to_string());
                for (k, v) in pairs {
                    match k {
                        "cc" => cc = Some(cc_value("tcp", v)?),
                        _ => {
                            return Err(Error::UnknownOption {
                                transport: "tcp",
                                option: k.to_string(),
                                valid: TCP_OPTIONS,
                            })
                        }
                    }
                }
                Ok(TransportSpec::Tcp { cc })
            }
            "mtcp" => {
                let (mut streams, mut chunk, mut cc) = (DEFAULT_STREAMS, DEFAULT_CHUNK, None);
                for (k, v) in pairs {
                    match k {
                        "streams" => {
                            streams = number_in(
                                "mtcp",
                                k,
                                v,
                                1..=mtcp::MAX_STREAMS,
                                "a whole number from 1 to 64",
                            )?
                        }
                        "chunk" => {
                            chunk = number_in(
                                "mtcp",
                                k,
                                v,
                                1024..=mtcp::MAX_CHUNK,
                                "bytes, from 1024 to 16777216",
                            )?
                        }
                        "cc" => cc = Some(cc_value("mtcp", v)?),
                        _ => {
                            return Err(Error::UnknownOption {
                                transport: "mtcp",
                                option: k.to_string(),
                                valid: MTCP_OPTIONS,
                            })
                        }
                    }
                }
                Ok(TransportSpec::Mtcp { streams, chunk, cc })
            }
            "udp" => {
                let (mut mtu, mut rate) = (udp::DEFAULT_MTU, udp::DEFAULT_RATE);
                for (k, v) in pairs {
                    match k {
                        "mtu" => {
                            mtu = number_in(
                                "udp",
                                k,
                                v,
                                udp::MIN_MTU..=udp::MAX_MTU,
                                "bytes, from 576 to 65535",
                            )?
                        }
                        "rate" => {
                            rate = parse_rate(v).ok_or_else(|| {
                                bad(
                                    "udp",
                                    k,
                                    v,
                                    "bits per second with an optional unit (kbit, mbit, gbit), \
                                     e.g. 500mbit, or unlimited",
                                )
                            })?
                        }
                        _ => {
                            return Err(Error::UnknownOption {
                                transport: "udp",
                                option: k.to_string(),
                                valid: UDP_OPTIONS,
                            })
                        }
                    }
                }
                Ok(TransportSpec::Udp { mtu, rate })
            }
            "udt" => {
                let mut mss = udt::DEFAULT_MSS;
                let (mut sndbuf, mut rcvbuf, mut fc, mut udpbuf) = (None, None, None, None);
                let mut ack = udt::DEFAULT_ACK;
                let number = |k: &str, v: &str, (lo, hi): (u32, u32), reason| {
                    number_in("udt", k, v, lo..=hi, reason)
                };
                const BYTES: &str = "bytes, from 65536 to 1073741824";
                for (k, v) in pairs {
                    match k {
                        "mss" => mss = number(k, v, udt::MSS_RANGE, "bytes, from 576 to 65535")?,
                        "sndbuf" => sndbuf = Some(number(k, v, udt::BUF_RANGE, BYTES)?),
                        "rcvbuf" => rcvbuf = Some(number(k, v, udt::BUF_RANGE, BYTES)?),
                        "udpbuf" => udpbuf = Some(number(k, v, udt::BUF_RANGE, BYTES)?),
                        "fc" => {
                            fc = Some(number(k, v, udt::FC_RANGE, "packets, from 32 to 4194304")?)
                        }
                        "ack" => ack = number(k, v, udt::ACK_RANGE, "packets, from 0 to 65536")?,
                        _ => {
                            return Err(Error::UnknownOption {
                                transport: "udt",
                                option: k.to_string(),
                                valid: UDT_OPTIONS,
                            })
                        }
                    }
                }
                Ok(TransportSpec::Udt {
                    mss,
                    sndbuf,
                    rcvbuf,
                    fc,
                    udpbuf,
                    ack,
                })
            }
            "quic" => {
                let (mut cc, mut window, mut mtu, mut iw) =
                    (QuicCongestion::default(), None, None, None);
                for (k, v) in pairs {
                    match k {
                        "cc" => {
                            cc = QuicCongestion::from_name(v)
                                .ok_or_else(|| bad("quic", k, v, "cubic, bbr or newreno"))?
                        }
                        "window" => {
                            window = Some(number_in(
                                "quic",
                                k,
                                v,
                                quic::MIN_WINDOW..=quic::MAX_WINDOW,
                                "bytes, from 16384 to 4294967296",
                            )?)
                        }
                        "mtu" => {
                            mtu = Some(number_in(
                                "quic",
                                k,
                                v,
                                quic::MIN_MTU..=quic::MAX_MTU,
                                "bytes, from 1280 to 9216",
                            )?)
                        }
                        "iw" => {
                            iw = Some(number_in(
                                "quic",
                                k,
                                v,
                                quic::MIN_INITIAL_WINDOW..=quic::MAX_WINDOW,
                                "bytes, from 2400 to 4294967296",
                            )?)
                        }
                        _ => {
                            return Err(Error::UnknownOption {
                                transport: "quic",
                                option: k.to_string(),
                                valid: QUIC_OPTIONS,
                            })
                        }
                    }
                }
                Ok(TransportSpec::Quic {
                    cc,
                    window,
                    mtu,
                    iw,
                })
            }
            _ => Err(Error::UnknownTransport {
                name: name.to_string(),
                valid: NAMES.to_string(),
            }),
        }
    }
}

impl fmt::Display for TransportSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TransportSpec::Tcp { cc: None } => write!(f, "tcp"),
            TransportSpec::Tcp { cc: Some(cc) } => write!(f, "tcp:cc={cc}"),
            TransportSpec::Mtcp { streams, chunk, cc } => {
                write!(f, "mtcp:streams={streams}")?;
                if *chunk != DEFAULT_CHUNK {
                    write!(f, ",chunk={chunk}")?;
                }
                if let Some(cc) = cc {
                    write!(f, ",cc={cc}")?;
                }
                Ok(())
            }
            TransportSpec::Udp { mtu, rate } => {
                write!(f, "udp:mtu={mtu},rate=")?;
                match *rate {
                    0 => write!(f, "unlimited"),
                    r if r % 1_000_000_000 == 0 => write!(f, "{}gbit", r / 1_000_000_000),
                    r if r % 1_000_000 == 0 => write!(f, "{}mbit", r / 1_000_000),
                    r if r % 1_000 == 0 => write!(f, "{}kbit", r / 1_000),
                    r => write!(f, "{r}bit"),
                }
            }
            TransportSpec::Udt {
                mss,
                sndbuf,
                rcvbuf,
                fc,
                udpbuf,
                ack,
            } => {
                write!(f, "udt:mss={mss}")?;
                // `ack` only when not the default, so that names read the same as before
                // the option existed (though an old `udt` result ran as today's `ack=0`).
                let ack = (*ack != udt::DEFAULT_ACK).then_some(ack);
                let named = [
                    ("sndbuf", sndbuf.as_ref()),
                    ("rcvbuf", rcvbuf.as_ref()),
                    ("fc", fc.as_ref()),
                    ("udpbuf", udpbuf.as_ref()),
                    ("ack", ack),
                ];
                for (k, v) in named {
                    if let Some(v) = v {
                        write!(f, ",{k}={v}")?;
                    }
                }
                Ok(())
            }
            TransportSpec::Quic {
                cc,
                window,
                mtu,
                iw,
            } => {
                write!(f, "quic:cc={cc}")?;
                if let Some(w) = window {
                    write!(f, ",window={w}")?;
                }
                if let Some(m) = mtu {
                    write!(f, ",mtu={m}")?;
                }
                if let Some(w) = iw {
                    write!(f, ",iw={w}")?;
                }
                Ok(())
            }
        }
    }
}

/// A transport option's value that is not what the option takes.
fn bad(transport: &'static str, option: &str, value: &str, reason: &'static str) -> Error {
    Error::BadOption {
        transport,
        option: option.to_string(),
        value: value.to_string(),
        reason,
    }
}

/// An option's value as a number in `range`, else [`bad`] with `reason`.
fn number_in<T: FromStr + PartialOrd>(
    transport: &'static str,
    option: &str,
    value: &str,
    range: std::ops::RangeInclusive<T>,
    reason: &'static str,
) -> Result<T> {
    value
        .parse()
        .ok()
        .filter(|n| range.contains(n))
        .ok_or_else(|| bad(transport, option, value, reason))
}

/// A rate in bits per second: `unlimited` (0), or digits with an optional unit `bit`,
/// `kbit`, `mbit` or `gbit` (decimal, as in tc).
pub(crate) fn parse_rate(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    if v == "unlimited" || v == "0" {
        return Some(0);
    }
    let i = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, unit) = v.split_at(i);
    let mult: u64 = match unit {
        "" | "bit" => 1,
        "kbit" => 1_000,
        "mbit" => 1_000_000,
        "gbit" => 1_000_000_000,
        _ => return None,
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&r| (8_000..=1_000_000_000_000).contains(&r))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_budget_and_attempts() {
        let d = Config::default();
        assert_eq!(d.connect_budget(), Duration::from_secs(5));
        let retrying = Config {
            connect_timeout: Duration::from_millis(100),
            connect_attempts: 30,
            retry_delay: Duration::from_millis(200),
            ..d.clone()
        };
        assert_eq!(retrying.connect_budget(), Duration::from_secs(6));
        // "No limit" does not overflow the deadline.
        let forever = Config {
            connect_timeout: Duration::MAX,
            ..d.clone()
        };
        assert!(forever.connect_deadline() > Instant::now() + Duration::from_secs(1 << 30));

        // At most connect_attempts, the first at once, none after the deadline.
        let three = Config {
            connect_attempts: 3,
            retry_delay: Duration::from_millis(1),
            ..d.clone()
        };
        let mut a = Attempts::new(&three);
        let first = a.next().unwrap();
        assert!(first > Duration::from_secs(4) && first <= Duration::from_secs(5));
        assert!(a.next().is_some() && a.next().is_some());
        assert_eq!((a.next(), a.made()), (None, 3));
        let mut late = Attempts::until(&three, Instant::now());
        assert_eq!(late.next(), Some(Duration::from_millis(1)));
        assert_eq!((late.next(), late.made()), (None, 1));
    }

    #[test]
    fn parses_names_and_options() {
        let p = |s: &str| s.parse::<TransportSpec>().unwrap().to_string();
        assert_eq!(p("tcp"), "tcp");
        assert_eq!(p("tcp-bbr"), "tcp:cc=bbr");
        assert_eq!(p("tcp:cc=bbr"), "tcp:cc=bbr");
        assert_eq!(p("mtcp"), "mtcp:streams=4");
        assert_eq!(p("mtcp:streams=8,cc=bbr"), "mtcp:streams=8,cc=bbr");
        assert_eq!(p("mtcp:chunk=4096, streams=2"), "mtcp:streams=2,chunk=4096");
        assert_eq!(p("udp"), "udp:mtu=1500,rate=1gbit");
        assert_eq!(p("udp:rate=500mbit,mtu=9000"), "udp:mtu=9000,rate=500mbit");
        assert_eq!(p("udp:rate=unlimited"), "udp:mtu=1500,rate=unlimited");
        assert_eq!(p("udp:rate=2500kbit"), "udp:mtu=1500,rate=2500kbit");
        assert_eq!(p("udp:rate=123456"), "udp:mtu=1500,rate=123456bit");
        assert_eq!(p("udt"), "udt:mss=1500");
        assert_eq!(p("udt:mss=9000"), "udt:mss=9000");
        assert_eq!(
            p("udt:udpbuf=65536, fc=32,rcvbuf=1073741824,sndbuf=100000,mss=576"),
            "udt:mss=576,sndbuf=100000,rcvbuf=1073741824,fc=32,udpbuf=65536"
        );
        assert_eq!(p("udt:ack=1"), "udt:mss=1500");
        assert_eq!(p("udt:ack=0,mss=9000"), "udt:mss=9000,ack=0");
        assert_eq!(
            "udt:fc=50000".parse::<TransportSpec>().unwrap(),
            TransportSpec::Udt {
                mss: 1500,
                sndbuf: None,
                rcvbuf: None,
                fc: Some(50000),
                udpbuf: None,
                ack: 1,
            }
        );
        assert_eq!(p("quic"), "quic:cc=cubic");
        assert_eq!(p("quic:cc=bbr"), "quic:cc=bbr");
        assert_eq!(p("quic:iw=8388608,cc=bbr"), "quic:cc=bbr,iw=8388608");
        assert_eq!(
            p("quic:mtu=9000, window=1048576,cc=newreno"),
            "quic:cc=newreno,window=1048576,mtu=9000"
        );
        for s in [
            "quic:cc=bbr,window=16384,mtu=1280",
            "quic:window=4294967296",
        ] {
            assert_eq!(p(&p(s)), p(s), "{s}");
        }
    }

    #[test]
    fn names_what_is_wrong() {
        let e = |s: &str| s.parse::<TransportSpec>().unwrap_err().to_string();
        assert_eq!(
            e("sabul"),
            "unknown transport 'sabul' (valid: tcp, tcp-bbr, mtcp, udp, udt, quic)"
        );
        assert_eq!(
            e("tcp:streams=2"),
            "transport 'tcp' has no option 'streams' (valid: cc)"
        );
        assert!(e("mtcp:streams=0").contains("a whole number from 1 to 64"));
        assert!(e("mtcp:streams=x").contains("bad value 'x' for option 'streams'"));
        assert!(e("mtcp:chunk=1").contains("from 1024"));
        assert!(e("tcp:cc=").contains("congestion control name"));
        assert!(e("tcp:cc=a/b").contains("bad value 'a/b'"));
        assert_eq!(
            e("udp:cc=bbr"),
            "transport 'udp' has no option 'cc' (valid: mtu, rate)"
        );
        assert!(e("udp:mtu=100").contains("from 576 to 65535"));
        assert!(e("udp:rate=fast").contains("e.g. 500mbit"));
        assert!(e("udp:rate=1tbit").contains("bad value '1tbit'"));
        assert_eq!(
            e("udt:mtu=1500"),
            "transport 'udt' has no option 'mtu' (valid: mss, sndbuf, rcvbuf, fc, udpbuf, ack)"
        );
        assert!(e("udt:ack=65537").contains("packets, from 0 to 65536"));
        assert_eq!(
            e("udt:mss=100"),
            "transport 'udt': bad value '100' for option 'mss': bytes, from 576 to 65535"
        );
        assert!(e("udt:mss=65536").contains("from 576 to 65535"));
        assert!(e("udt:sndbuf=1k").contains("bad value '1k' for option 'sndbuf'"));
        assert!(e("udt:rcvbuf=65535").contains("for option 'rcvbuf': bytes, from 65536"));
        assert!(e("udt:udpbuf=2147483648").contains("option 'udpbuf'"));
        assert!(e("udt:fc=31").contains("for option 'fc': packets, from 32 to 4194304"));
        assert!(e("udt:fc=").contains("bad value '' for option 'fc'"));
        assert_eq!(
            e("quic:streams=2"),
            "transport 'quic' has no option 'streams' (valid: cc, window, mtu, iw)"
        );
        assert_eq!(
            e("quic:cc=reno"),
            "transport 'quic': bad value 'reno' for option 'cc': cubic, bbr or newreno"
        );
        assert!(e("quic:window=1000").contains("bad value '1000' for option 'window'"));
        assert!(e("quic:window=8589934592").contains("from 16384 to 4294967296"));
        assert!(e("quic:window=").contains("option 'window'"));
        assert!(e("quic:mtu=1200").contains("bad value '1200' for option 'mtu'"));
        assert!(e("quic:mtu=9217").contains("from 1280 to 9216"));
        assert!(e("quic:iw=2399").contains("bad value '2399' for option 'iw'"));
        assert!(e("quic:iw=").contains("option 'iw'"));
    }
}
