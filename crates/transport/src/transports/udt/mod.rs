//! `udt`: the reference UDT4 library (libudt, Debian package libudt-dev), through the C++
//! shim in `udt_shim/shim.cpp` that build.rs compiles.
//!
//! UDT (Gu and Grossman) is the successor of SABUL, the rate-based protocol over UDP that the
//! Transputation paper (§4–5) found to fill long, lossy links where TCP does not. The library
//! does its own reliability, congestion and flow control in threads of this process; this
//! module drives one UDT stream socket per channel.
//!
//! Wire format on UDT's byte stream: chunks, each a 4-byte big-endian length (1 to 16 MiB)
//! and that many bytes; a length of 0 ends the stream. The marker exists because UDT has no
//! half-close: `UDT::close` ends both directions, while [`Channel::close`] must leave
//! receiving possible. So `close` flushes and sends the marker, the peer's `recv` then
//! reports [`Error::Closed`], and the socket itself is closed when the channel is dropped.
//! Like TCP's FIN, the marker is not counted in [`Channel::stats`]; chunk headers are.
//!
//! Dropping a channel flushes, then waits until the peer's library has acknowledged every
//! byte, each wait for progress bounded by the I/O timeout, and only then closes the socket:
//! UDT sends from its own threads, so closing (or exiting the process) earlier would lose
//! the tail. UDT's own linger is off because it bounds the whole wait rather than each wait
//! for progress. A peer that closes while bytes are still in flight to it, or vanishes, ends
//! the wait at once (UDT reports the connection broken).
//!
//! Waits: sends and receives block at most the I/O timeout (`UDT_SNDTIMEO`,
//! `UDT_RCVTIMEO`); accept polls a non-blocking listener until the I/O timeout; connect is
//! non-blocking and all its attempts together wait at most [`Config::connect_budget`],
//! because UDT's blocking connect always waits its own fixed 3 s for a server that does
//! not answer. UDT repeats its handshake request within an attempt, so a server that
//! starts late is found by the attempt under way.
//!
//! Options, set on each socket before it connects or listens (UDT ignores them later):
//! - `mss=BYTES` (576 to 65535, default 1500): the largest IP packet; UDT sends `mss - 44`
//!   data bytes per packet. The two ends use the smaller of their values.
//! - `sndbuf=BYTES`, `rcvbuf=BYTES` (65536 to 1 GiB): UDT's send and receive buffers.
//!   Default: [`crate::Config::buffer_bytes`] if set and larger than UDT's own default of
//!   8192 packets (about 12 MB at `mss=1500`), else that default: below it UDT crawls on
//!   short paths (see `Options::for_socket`). UDT counts them in packets of `mss - 28`
//!   bytes.
//! - `fc=PACKETS` (32 to 4194304): the flow window, the most unacknowledged packets in
//!   flight. Default UDT's 25600, or more when `rcvbuf` needs it: UDT caps the receive
//!   buffer at the flow window (and so does an explicit `fc`).
//! - `udpbuf=BYTES` (65536 to 1 GiB): the kernel buffers of UDT's UDP socket (`UDP_SNDBUF`,
//!   `UDP_RCVBUF`), within the kernel's limits (net.core.wmem_max, rmem_max). Default UDT's:
//!   64 KiB for sending, the UDT receive buffer for receiving.
//! - `ack=PACKETS` (0 to 65536, default 1): the receiver sends a full ACK after every N
//!   data packets, set on each connection once it is up; 0 leaves only UDT's ACK timer.
//!
//! # Acknowledgements and latency
//!
//! UDT4 lets `UDT::recv` see received data only once the receiver has sent a full ACK for
//! it. Its 10 ms ACK timer is checked when a packet arrives, and otherwise only when the
//! receive queue sweeps its idle sockets, every 100 ms (`CRcvQueue::worker`). The last
//! packets of a burst, with nothing arriving after them, so stay unreadable for up to
//! 100 ms: a protocol that takes turns, as 2PC does, waited that long at every turn
//! (AES-128 over loopback: 224-429 ms against 9-11 ms over `tcp`). An ACK by packet count
//! (`CCC::setACKInterval`, UDT's knob for congestion-control classes) is sent from the
//! arrival of the packet that completes the count, so with `ack=1` nothing waits for the
//! sweep (AES-128: 14-15 ms). The interval is set once the connection is up, while UDT
//! may already be receiving on it, so a first message that arrived whole before that can
//! still wait once. The price is one ACK (and the sender's ACK2) per data
//! packet: on loopback, where UDT's per-packet work is the limit, bulk throughput falls
//! (figures in docs/BENCHMARKS.md); a larger `ack` trades back, and may leave a burst's
//! last packets to the timer.
//!
//! The library is started (`UDT::startup`) for every socket and cleaned up when it is
//! closed; UDT counts these calls and stops its threads after the last cleanup.
//!
//! Linking libudt costs every process that links this crate 100 ms at start, `udt` used or
//! not: a static initializer of the library measures the CPU's clock rate by sleeping
//! 100 ms (`CTimer::readCPUFrequency`).

// The calls into the shim (in `library`) are unsafe; each block says why it is sound.
#![allow(unsafe_code)]

use std::ffi::c_int;
use std::io;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use std::sync::{Arc, OnceLock};

use transputation_model::{Constants, Control, TransportModel, Window};

use crate::config::{Attempts, Config};
use crate::family::{Accept, Delivery, Family, OptionDecl, OptionKind, Shown, Transport, Value};
use crate::{ByteCounts, Channel, Error, Result};

mod library;

use library::{call, ffi, raw_addr, unless_closed, Failure, Library, Socket};

/// A byte-count option of `udt` (`sndbuf`, `rcvbuf`, `udpbuf`): unset by default.
const fn buffer_option(key: &'static str, doc: &'static str) -> OptionDecl {
    OptionDecl {
        key,
        kind: OptionKind::Integer {
            min: BUF_RANGE.0 as u64,
            max: BUF_RANGE.1 as u64,
            unit: "bytes",
        },
        default: None,
        shown: Shown::WhenChanged,
        doc,
    }
}

/// The `udt` transport's declaration.
pub(crate) static FAMILY: Family = Family {
    name: "udt",
    aliases: &[],
    summary: "UDT4 (libudt, the successor of SABUL): reliable, rate-based congestion control \
              over UDP",
    options: &[
        OptionDecl {
            key: "mss",
            kind: OptionKind::Integer {
                min: MSS_RANGE.0 as u64,
                max: MSS_RANGE.1 as u64,
                unit: "bytes",
            },
            default: Some(Value::Int(DEFAULT_MSS as u64)),
            shown: Shown::Always,
            doc: "the largest IP packet (UDT_MSS); the two ends use the smaller value",
        },
        buffer_option(
            "sndbuf",
            "UDT's send buffer (unset: the configured buffer size if larger than UDT's \
             default of 8192 packets, else that default)",
        ),
        buffer_option("rcvbuf", "UDT's receive buffer (unset: as for sndbuf)"),
        OptionDecl {
            key: "fc",
            kind: OptionKind::Integer {
                min: FC_RANGE.0 as u64,
                max: FC_RANGE.1 as u64,
                unit: "packets",
            },
            default: None,
            shown: Shown::WhenChanged,
            doc: "the flow window (unset: UDT's 25600, or enough for the receive buffer)",
        },
        buffer_option(
            "udpbuf",
            "the kernel buffers of UDT's UDP socket (unset: UDT's defaults)",
        ),
        OptionDecl {
            key: "ack",
            kind: OptionKind::Integer {
                min: ACK_RANGE.0 as u64,
                max: ACK_RANGE.1 as u64,
                unit: "packets",
            },
            default: Some(Value::Int(DEFAULT_ACK as u64)),
            shown: Shown::WhenChanged,
            doc: "a full ACK after every N data packets (0: UDT's 10 ms timer only, which \
                  can hold a burst's tail up to 100 ms)",
        },
    ],
    delivery: Delivery::RepairsDatagrams,
    conformance: &["udt", "udt:mss=9000", "udt:ack=0"],
    available: check,
    auto: true,
    build: |v| {
        Ok(Arc::new(Options {
            mss: v.u32_of("mss"),
            sndbuf: v.opt_u32("sndbuf"),
            rcvbuf: v.opt_u32("rcvbuf"),
            fc: v.opt_u32("fc"),
            udpbuf: v.opt_u32("udpbuf"),
            ack: v.u32_of("ack"),
        }))
    },
    model: |v| TransportModel {
        key: "udt".into(),
        // The handshake's request and response, twice (UDT4's rendezvous of cookies).
        connect_round_trips: 2.0,
        // IPv4 and UDP headers and UDT's 16 bytes.
        segment: f64::from(v.u32_of("mss")) - 44.0,
        initial_window: 16.0 * (f64::from(v.u32_of("mss")) - 44.0),
        streams: 1,
        stripe: 1.0,
        control: Control::RateBased,
        window: Window::SocketBuffer { share: 1.0 },
        reassembly_limit: None,
        pacing_gain: None,
        first_flight_stall: None,
        long_stream_gaps: None,
        // Fitted to the paper-table4 runs: its slow start grows by about 1.6 a round trip
        // (its rate control raises the sending rate on a 10 ms timer, SYN, whatever the
        // ACKs), and one thread per direction held it near 300 Mbit/s on the 2-vCPU
        // machine. Set by hand: under 0.1 % loss it sent twice the packets a window-based
        // sender would (loss_factor).
        defaults: Constants {
            fixed: 0.024,
            growth: 1.6,
            loss_factor: 38.0,
            host_cap: 38e6,
            // rms of ln(predicted / measured) over the grid of docs/results/auto
            // (2026-11-27).
            error: 0.64,
            ..Constants::TEXTBOOK
        },
    },
    tuned: |_| Vec::new(),
    sender_options: &[],
    while_probing: "",
    started: Some(|| CHECKED.get().is_some()),
    hedged_connect: false,
};

impl Transport for Options {
    fn listen(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Accept>> {
        Ok(Box::new(UdtListener::bind(addr, self, cfg)?))
    }

    fn connect(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Channel>> {
        Ok(Box::new(connect(addr, self, cfg)?))
    }
}

impl Accept for UdtListener {
    fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    fn accept(&self, cfg: &Config) -> Result<Box<dyn Channel>> {
        Ok(Box::new(UdtListener::accept(self, cfg)?))
    }
}

/// The default MSS: an Ethernet-sized IP packet.
const DEFAULT_MSS: u32 = 1500;
/// Smallest and largest `mss`.
const MSS_RANGE: (u32, u32) = (576, 65535);
/// Smallest and largest `sndbuf`, `rcvbuf` and `udpbuf`.
const BUF_RANGE: (u32, u32) = (64 << 10, 1 << 30);
/// Smallest and largest `fc`.
const FC_RANGE: (u32, u32) = (32, 1 << 22);
/// The default `ack`: a full ACK after every data packet (see the module docs).
const DEFAULT_ACK: u32 = 1;
/// Smallest and largest `ack`.
const ACK_RANGE: (u32, u32) = (0, 65536);
/// UDT's default flow window, in packets.
const UDT_DEFAULT_FC: u32 = 25600;
/// UDT's default send and receive buffers, in packets.
const UDT_DEFAULT_BUF_PACKETS: u32 = 8192;
/// Bytes of IP and UDP headers in UDT's packet-size arithmetic.
const IP_UDP_HEADERS: u32 = 28;
/// Largest chunk sent; a chunk leaves when it is full or on flush.
const CHUNK: usize = 256 << 10;
/// Largest chunk accepted from the peer.
const MAX_CHUNK: u32 = 16 << 20;
/// User-space receive buffer.
const RBUF: usize = 256 << 10;
/// Connections UDT queues for accept.
const BACKLOG: c_int = 16;

/// The `udt` options as the transport's name gives them (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Options {
    mss: u32,
    sndbuf: Option<u32>,
    rcvbuf: Option<u32>,
    fc: Option<u32>,
    udpbuf: Option<u32>,
    ack: u32,
}

impl Options {
    /// The values handed to UDT (0: the library's default), with the configured buffer
    /// size where the name sets none, and the I/O timeout.
    ///
    /// The configured size only ever raises UDT's buffers above the library's default
    /// (8192 packets, about 12 MB): sized below it for a short path (2 × BDP is 125 KB at
    /// 0.5 ms and 1 Gbit/s), UDT crawls, since its acknowledgements and flow-window updates
    /// follow its 10 ms timer rather than the round trip. Measured: the MinCut-size
    /// circuit's tenth (7 MB) over loopback took 28 s with 64 KiB buffers, 0.8 s with the
    /// default. A name's explicit `sndbuf`/`rcvbuf` is taken as it is.
    fn for_socket(&self, cfg: &Config) -> ffi::Options {
        let default_buf = UDT_DEFAULT_BUF_PACKETS * (self.mss - IP_UDP_HEADERS);
        let from_config = cfg
            .buffer_bytes
            .map(|b| b.clamp(BUF_RANGE.0 as usize, BUF_RANGE.1 as usize) as u32)
            .filter(|&b| b > default_buf);
        let sndbuf = self.sndbuf.or(from_config);
        let rcvbuf = self.rcvbuf.or(from_config);
        let fc = self
            .fc
            .or_else(|| rcvbuf.map(|r| (r / (self.mss - IP_UDP_HEADERS) + 1).max(UDT_DEFAULT_FC)));
        let timeout = millis(cfg.io_timeout);
        let int = |v: Option<u32>| v.map_or(0, |v| v as c_int);
        ffi::Options {
            mss: self.mss as c_int,
            sndbuf: int(sndbuf),
            rcvbuf: int(rcvbuf),
            fc: int(fc),
            udpbuf: int(self.udpbuf),
            snd_timeout_ms: timeout,
            rcv_timeout_ms: timeout,
        }
    }
}

/// A duration in whole milliseconds for UDT, at least 1 (0 would mean "do not wait").
fn millis(d: Duration) -> c_int {
    d.as_millis().clamp(1, c_int::MAX as u128) as c_int
}

/// The library's start and a first socket, done once: [`check`]'s answer (and what
/// `FAMILY.started` asks about).
static CHECKED: OnceLock<std::result::Result<Library, String>> = OnceLock::new();

/// Whether UDT works here: its library starts and gives a socket. Asked once per process,
/// and the library's start is kept: the last `UDT::cleanup` joins UDT's garbage-collector
/// thread, which may first finish its one-second sleep, and a check on a party's critical
/// path (`--transport auto` lists its candidates before connecting) must not wait for that.
fn check() -> Result<()> {
    let checked = CHECKED.get_or_init(|| {
        let kept = Library::acquire().map_err(|e| e.to_string())?;
        Socket::new(4).map(drop).map_err(|e| e.to_string())?;
        Ok(kept)
    });
    match checked {
        Ok(_) => Ok(()),
        Err(why) => Err(Error::Io {
            during: "checking that the UDT library works",
            source: io::Error::other(why.clone()),
        }),
    }
}

/// A UDT server socket.
#[derive(Debug)]
struct UdtListener {
    socket: Socket,
    local_addr: SocketAddr,
    /// The `ack` option, for each accepted connection.
    ack: u32,
}

impl UdtListener {
    /// Binds and listens on `addr` with the options of `opts`.
    fn bind(addr: SocketAddr, opts: &Options, cfg: &Config) -> Result<Self> {
        let (family, ip) = raw_addr(addr);
        let socket = Socket::new(family)?;
        socket.configure(&opts.for_socket(cfg))?;
        // Non-blocking accept, so that accept can give up after its wait (Config::accept_wait).
        socket
            .set_blocking_recv(false)
            .map_err(|f| f.io("configuring a UDT socket"))?;
        // SAFETY: `ip` is a live 16-byte array; the other arguments are integers.
        call(|e| unsafe { ffi::tp_udt_bind(socket.id, family, ip.as_ptr(), addr.port(), e) })
            .map_err(|f| bind_failure(f, addr))?;
        // SAFETY: integer arguments and a valid error record pointer.
        call(|e| unsafe { ffi::tp_udt_listen(socket.id, BACKLOG, e) })
            .map_err(|f| f.io("listening on the UDT server socket"))?;
        let local_addr = socket.local_addr()?;
        Ok(UdtListener {
            socket,
            local_addr,
            ack: opts.ack,
        })
    }

    /// Waits at most [`Config::accept_wait`] for a client.
    fn accept(&self, cfg: &Config) -> Result<UdtChannel> {
        let wait = cfg.accept_wait();
        let start = Instant::now();
        loop {
            // Each accepted socket holds its own library start, taken before it exists.
            let library = Library::acquire()?;
            // SAFETY: integer argument and a valid error record pointer.
            match call(|e| unsafe { ffi::tp_udt_accept(self.socket.id, e) }) {
                Ok(id) => {
                    let socket = Socket {
                        id,
                        _library: library,
                    };
                    // Accepted sockets inherit the listener's options, non-blocking
                    // receiving included. UDT refuses options on a connection the client
                    // already closed (it may have sent everything and left before this
                    // accept): that socket stays non-blocking, which is harmless because
                    // it has nothing left to wait for; its buffered bytes are still read,
                    // then the end of the stream.
                    unless_closed(
                        socket.set_blocking_recv(true),
                        "configuring a UDT connection",
                    )?;
                    return UdtChannel::new(socket, self.ack, cfg);
                }
                Err(f) if f.kind == ffi::KIND_WOULD_BLOCK => {
                    if start.elapsed() >= wait {
                        return Err(Error::Timeout {
                            during: "waiting for a client to connect",
                            after: wait,
                        });
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(f) => return Err(f.io("accepting a UDT connection")),
            }
        }
    }
}

/// UDT's error 1003, "unable to create/configure UDP socket".
const UDT_SOCKET_FAILURE: c_int = 1003;

/// The error of a failed bind. UDT reports every failure of its UDP socket, a port in use
/// included, as error 1003 without the system's error; binding a UDP socket to the same
/// address here recovers it (`Address already in use`).
fn bind_failure(f: Failure, addr: SocketAddr) -> Error {
    const DURING: &str = "binding the UDT server socket";
    if f.code == UDT_SOCKET_FAILURE {
        if let Err(source) = std::net::UdpSocket::bind(addr) {
            return Error::Io {
                during: DURING,
                source,
            };
        }
    }
    f.io(DURING)
}

/// Connects to a `udt` server, retrying as [`Config`] says.
fn connect(addr: SocketAddr, opts: &Options, cfg: &Config) -> Result<UdtChannel> {
    // Keeps the library up across failed attempts, which would otherwise stop and restart
    // its threads each time.
    let _library = Library::acquire()?;
    let (family, ip) = raw_addr(addr);
    let options = opts.for_socket(cfg);
    let mut attempts = Attempts::until(cfg, cfg.connect_deadline());
    let mut last = None;
    while let Some(left) = attempts.next() {
        let socket = Socket::new(family)?;
        socket.configure(&options)?;
        let timeout = millis(left);
        // SAFETY: `ip` is a live 16-byte array; the other arguments are integers.
        match call(|e| unsafe {
            ffi::tp_udt_connect(socket.id, family, ip.as_ptr(), addr.port(), timeout, e)
        }) {
            Ok(_) => return UdtChannel::new(socket, opts.ack, cfg),
            Err(f) => last = Some(f),
        }
    }
    Err(Error::Connect {
        addr,
        attempts: attempts.made(),
        source: last.map_or_else(|| io::Error::other("no attempt made"), io::Error::other),
    })
}

/// A [`Channel`] over one UDT connection.
#[derive(Debug)]
struct UdtChannel {
    socket: Socket,
    /// The chunk being filled: a 4-byte header slot, then up to [`CHUNK`] bytes.
    pending: Vec<u8>,
    rbuf: Box<[u8]>,
    rpos: usize,
    rlen: usize,
    /// Bytes left of the chunk being read (0: a header comes next).
    chunk_left: usize,
    /// The peer's end-of-stream marker was read.
    ended: bool,
    /// Our end-of-stream marker was sent.
    closed: bool,
    /// A send failed part-way: the stream may hold half a chunk, so nothing more is sent.
    failed: bool,
    timeout: Duration,
    counts: ByteCounts,
}

impl UdtChannel {
    /// A channel over a connected socket, its ACK interval set to `ack` packets.
    fn new(socket: Socket, ack: u32, cfg: &Config) -> Result<Self> {
        let packets = c_int::try_from(ack).unwrap_or(c_int::MAX);
        // A connection the peer closed already has nothing more to acknowledge.
        unless_closed(
            // SAFETY: integer arguments and a valid error record pointer.
            call(|e| unsafe { ffi::tp_udt_set_ack_interval(socket.id, packets, e) }),
            "setting the UDT acknowledgement interval",
        )?;
        let mut pending = Vec::with_capacity(4 + CHUNK);
        pending.extend_from_slice(&[0; 4]);
        Ok(UdtChannel {
            socket,
            pending,
            rbuf: vec![0; RBUF].into_boxed_slice(),
            rpos: 0,
            rlen: 0,
            chunk_left: 0,
            ended: false,
            closed: false,
            failed: false,
            timeout: cfg.io_timeout,
            counts: ByteCounts::default(),
        })
    }

    /// Sends all of `data`, each wait for buffer space bounded by the I/O timeout.
    fn send_all(&mut self, data: &[u8]) -> Result<()> {
        if self.failed {
            return Err(Error::Poisoned);
        }
        let mut at = 0;
        while at < data.len() {
            let len = (data.len() - at).min(c_int::MAX as usize) as c_int;
            let ptr = data[at..].as_ptr();
            // SAFETY: `ptr` points to at least `len` readable bytes of `data`.
            match call(|e| unsafe { ffi::tp_udt_send(self.socket.id, ptr, len, e) }) {
                Ok(n) if n > 0 => at += n as usize,
                Ok(_) => {
                    self.failed = true;
                    return Err(Error::Timeout {
                        during: "sending",
                        after: self.timeout,
                    });
                }
                Err(f) => {
                    self.failed = true;
                    return Err(f.on_connection("sending", self.timeout));
                }
            }
        }
        Ok(())
    }

    /// Sends the pending chunk, if it holds any bytes.
    fn push_chunk(&mut self) -> Result<()> {
        let len = self.pending.len() - 4;
        if len == 0 {
            return Ok(());
        }
        self.pending[..4].copy_from_slice(&(len as u32).to_be_bytes());
        let chunk = std::mem::take(&mut self.pending);
        let r = self.send_all(&chunk);
        self.pending = chunk;
        r?;
        self.counts.sent += self.pending.len() as u64;
        self.pending.truncate(4);
        Ok(())
    }

    /// Fills `out` with the next raw bytes of the UDT stream.
    fn read_raw(&mut self, out: &mut [u8]) -> Result<()> {
        let mut at = 0;
        while at < out.len() {
            if self.rpos < self.rlen {
                let n = (self.rlen - self.rpos).min(out.len() - at);
                out[at..at + n].copy_from_slice(&self.rbuf[self.rpos..self.rpos + n]);
                self.rpos += n;
                at += n;
                continue;
            }
            // Large reads go straight to the caller's buffer.
            let direct = out.len() - at >= RBUF;
            let target: &mut [u8] = if direct {
                &mut out[at..]
            } else {
                &mut self.rbuf
            };
            let len = target.len().min(c_int::MAX as usize) as c_int;
            let ptr = target.as_mut_ptr();
            // SAFETY: `ptr` points to at least `len` writable bytes of `target`, which no
            // other reference uses during the call.
            let n = match call(|e| unsafe { ffi::tp_udt_recv(self.socket.id, ptr, len, e) }) {
                Ok(n) if n > 0 => n as usize,
                Ok(_) => {
                    return Err(Error::Timeout {
                        during: "receiving",
                        after: self.timeout,
                    })
                }
                Err(f) => return Err(f.on_connection("receiving", self.timeout)),
            };
            if direct {
                at += n;
            } else {
                self.rpos = 0;
                self.rlen = n;
            }
        }
        Ok(())
    }

    /// Waits until the peer acknowledged everything sent, or the connection went down, or
    /// no progress for the I/O timeout.
    fn drain(&self) {
        let mut least = c_int::MAX;
        let mut since = Instant::now();
        while let Ok(n) = self.socket.unacknowledged() {
            if n == 0 {
                return;
            }
            if n < least {
                least = n;
                since = Instant::now();
            } else if since.elapsed() >= self.timeout {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

impl Channel for UdtChannel {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        if self.closed {
            return Err(Error::Io {
                during: "sending",
                source: io::Error::new(
                    io::ErrorKind::BrokenPipe,
                    "this side already closed its sending direction",
                ),
            });
        }
        let mut rest = bytes;
        while !rest.is_empty() {
            let take = (4 + CHUNK - self.pending.len()).min(rest.len());
            self.pending.extend_from_slice(&rest[..take]);
            rest = &rest[take..];
            if self.pending.len() == 4 + CHUNK {
                self.push_chunk()?;
            }
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.flush()?;
        let mut filled = 0;
        while filled < buf.len() {
            if self.ended {
                return Err(Error::Closed {
                    during: "receiving",
                });
            }
            if self.chunk_left == 0 {
                let mut header = [0u8; 4];
                self.read_raw(&mut header)?;
                match u32::from_be_bytes(header) {
                    0 => self.ended = true,
                    len if len > MAX_CHUNK => {
                        return Err(Error::Malformed {
                            what: format!("a udt chunk header announces {len} bytes"),
                        })
                    }
                    len => {
                        self.counts.received += 4;
                        self.chunk_left = len as usize;
                    }
                }
                continue;
            }
            let take = self.chunk_left.min(buf.len() - filled);
            self.read_raw(&mut buf[filled..filled + take])?;
            self.counts.received += take as u64;
            self.chunk_left -= take;
            filled += take;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.push_chunk()
    }

    fn close(&mut self) -> Result<()> {
        if self.closed {
            return Ok(());
        }
        self.flush()?;
        self.closed = true;
        match self.send_all(&[0; 4]) {
            // The peer closed its socket already (as TCP's shutdown succeeds then): there
            // is no one left to tell that the stream ends.
            Err(Error::Closed { .. }) => Ok(()),
            r => r,
        }
    }

    fn stats(&self) -> ByteCounts {
        self.counts
    }
}

impl Drop for UdtChannel {
    fn drop(&mut self) {
        if !self.failed && self.flush().is_ok() {
            self.drain();
        }
        // The socket closes itself, then releases the library.
    }
}

#[cfg(test)]
mod tests;
