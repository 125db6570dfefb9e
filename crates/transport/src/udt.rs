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

// FFI to the shim needs unsafe calls; each block says why it is sound.
#![allow(unsafe_code)]

use std::ffi::{c_int, CStr};
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::{Duration, Instant};

use crate::spec::Attempts;
use crate::{ByteCounts, Channel, Config, Error, Result};

/// The default MSS: an Ethernet-sized IP packet.
pub(crate) const DEFAULT_MSS: u32 = 1500;
/// Smallest and largest `mss`.
pub(crate) const MSS_RANGE: (u32, u32) = (576, 65535);
/// Smallest and largest `sndbuf`, `rcvbuf` and `udpbuf`.
pub(crate) const BUF_RANGE: (u32, u32) = (64 << 10, 1 << 30);
/// Smallest and largest `fc`.
pub(crate) const FC_RANGE: (u32, u32) = (32, 1 << 22);
/// The default `ack`: a full ACK after every data packet (see the module docs).
pub(crate) const DEFAULT_ACK: u32 = 1;
/// Smallest and largest `ack`.
pub(crate) const ACK_RANGE: (u32, u32) = (0, 65536);
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
pub(crate) struct Options {
    pub(crate) mss: u32,
    pub(crate) sndbuf: Option<u32>,
    pub(crate) rcvbuf: Option<u32>,
    pub(crate) fc: Option<u32>,
    pub(crate) udpbuf: Option<u32>,
    pub(crate) ack: u32,
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

/// The declarations of udt_shim/shim.cpp.
mod ffi {
    use std::ffi::{c_char, c_int};

    /// `tp_udt_error`.
    #[repr(C)]
    pub(super) struct Error {
        pub(super) code: c_int,
        pub(super) kind: c_int,
        pub(super) message: [c_char; 256],
    }

    pub(super) const KIND_TIMEOUT: c_int = 1;
    pub(super) const KIND_CLOSED: c_int = 2;
    pub(super) const KIND_WOULD_BLOCK: c_int = 3;

    /// `tp_udt_options`.
    #[repr(C)]
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub(super) struct Options {
        pub(super) mss: c_int,
        pub(super) sndbuf: c_int,
        pub(super) rcvbuf: c_int,
        pub(super) fc: c_int,
        pub(super) udpbuf: c_int,
        pub(super) snd_timeout_ms: c_int,
        pub(super) rcv_timeout_ms: c_int,
    }

    extern "C" {
        pub(super) fn tp_udt_startup(err: *mut Error) -> c_int;
        pub(super) fn tp_udt_cleanup();
        pub(super) fn tp_udt_socket(family: c_int, err: *mut Error) -> c_int;
        pub(super) fn tp_udt_configure(u: c_int, o: *const Options, err: *mut Error) -> c_int;
        #[cfg(test)]
        pub(super) fn tp_udt_options_in_force(u: c_int, o: *mut Options, err: *mut Error) -> c_int;
        pub(super) fn tp_udt_set_blocking_recv(u: c_int, blocking: c_int, err: *mut Error)
            -> c_int;
        pub(super) fn tp_udt_bind(
            u: c_int,
            family: c_int,
            ip: *const u8,
            port: u16,
            err: *mut Error,
        ) -> c_int;
        pub(super) fn tp_udt_listen(u: c_int, backlog: c_int, err: *mut Error) -> c_int;
        pub(super) fn tp_udt_local_addr(
            u: c_int,
            family: *mut c_int,
            ip16: *mut u8,
            port: *mut u16,
            err: *mut Error,
        ) -> c_int;
        pub(super) fn tp_udt_accept(u: c_int, err: *mut Error) -> c_int;
        pub(super) fn tp_udt_connect(
            u: c_int,
            family: c_int,
            ip: *const u8,
            port: u16,
            timeout_ms: c_int,
            err: *mut Error,
        ) -> c_int;
        pub(super) fn tp_udt_set_ack_interval(u: c_int, packets: c_int, err: *mut Error) -> c_int;
        pub(super) fn tp_udt_send(u: c_int, buf: *const u8, len: c_int, err: *mut Error) -> c_int;
        pub(super) fn tp_udt_recv(u: c_int, buf: *mut u8, len: c_int, err: *mut Error) -> c_int;
        pub(super) fn tp_udt_unacknowledged(u: c_int, err: *mut Error) -> c_int;
        pub(super) fn tp_udt_close(u: c_int, err: *mut Error) -> c_int;
    }
}

/// A failed UDT call: the library's error code, its class, and its message.
#[derive(Debug)]
struct Failure {
    code: c_int,
    kind: c_int,
    message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (UDT error {})", self.message, self.code)
    }
}

impl std::error::Error for Failure {}

impl Failure {
    /// On a connected socket: a timeout, the peer gone, or anything else.
    fn on_connection(self, during: &'static str, timeout: Duration) -> Error {
        match self.kind {
            ffi::KIND_TIMEOUT => Error::Timeout {
                during,
                after: timeout,
            },
            ffi::KIND_CLOSED => Error::Closed { during },
            _ => self.io(during),
        }
    }

    /// Any failure, reported with UDT's message.
    fn io(self, during: &'static str) -> Error {
        Error::Io {
            during,
            source: io::Error::other(self),
        }
    }
}

/// The outcome of configuring a connection, where a connection the peer already closed is
/// no error: UDT refuses options on it, and it has nothing left to wait for.
fn unless_closed<T>(r: std::result::Result<T, Failure>, during: &'static str) -> Result<()> {
    match r {
        Err(f) if f.kind != ffi::KIND_CLOSED => Err(f.io(during)),
        _ => Ok(()),
    }
}

/// Runs one shim call with an error record, and reads the record if it failed.
fn call(f: impl FnOnce(*mut ffi::Error) -> c_int) -> std::result::Result<c_int, Failure> {
    let mut err = ffi::Error {
        code: 0,
        kind: 0,
        message: [0; 256],
    };
    let rc = f(&mut err);
    if rc >= 0 {
        return Ok(rc);
    }
    // The shim always NUL-terminates (snprintf); the last byte is forced to NUL anyway so
    // that CStr never reads past the array.
    err.message[255] = 0;
    // SAFETY: `message` is a NUL-terminated array of c_char that lives across this call.
    let message = unsafe { CStr::from_ptr(err.message.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    Err(Failure {
        code: err.code,
        kind: err.kind,
        message,
    })
}

/// One `UDT::startup`, undone by `UDT::cleanup` on drop.
#[derive(Debug)]
struct Library(());

impl Library {
    fn acquire() -> Result<Library> {
        // SAFETY: tp_udt_startup takes a valid pointer to an error record and nothing else.
        call(|e| unsafe { ffi::tp_udt_startup(e) })
            .map_err(|f| f.io("starting the UDT library"))?;
        Ok(Library(()))
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: pairs with the successful startup of `acquire`; UDT counts the calls, and
        // every socket using the library holds its own `Library`, dropped after the socket
        // was closed.
        unsafe { ffi::tp_udt_cleanup() }
    }
}

/// A UDT socket, closed on drop, and the library start that keeps it usable.
#[derive(Debug)]
struct Socket {
    id: c_int,
    _library: Library,
}

impl Socket {
    fn new(family: c_int) -> Result<Socket> {
        let library = Library::acquire()?;
        // SAFETY: plain integer argument and a valid error record pointer.
        let id = call(|e| unsafe { ffi::tp_udt_socket(family, e) })
            .map_err(|f| f.io("creating a UDT socket"))?;
        Ok(Socket {
            id,
            _library: library,
        })
    }

    fn configure(&self, o: &ffi::Options) -> Result<()> {
        // SAFETY: `o` points to a live, initialized repr(C) record the shim only reads.
        call(|e| unsafe { ffi::tp_udt_configure(self.id, o, e) })
            .map_err(|f| f.io("configuring a UDT socket"))?;
        Ok(())
    }

    fn set_blocking_recv(&self, blocking: bool) -> std::result::Result<(), Failure> {
        // SAFETY: integer arguments and a valid error record pointer.
        call(|e| unsafe { ffi::tp_udt_set_blocking_recv(self.id, c_int::from(blocking), e) })
            .map(drop)
    }

    /// The options in force (after connecting: the negotiated MSS).
    #[cfg(test)]
    fn options_in_force(&self) -> Result<ffi::Options> {
        let mut o = ffi::Options::default();
        // SAFETY: `o` is a live repr(C) record the shim writes integers into.
        call(|e| unsafe { ffi::tp_udt_options_in_force(self.id, &mut o, e) })
            .map_err(|f| f.io("reading UDT socket options"))?;
        Ok(o)
    }

    fn local_addr(&self) -> Result<SocketAddr> {
        let (mut family, mut ip, mut port) = (0, [0u8; 16], 0u16);
        // SAFETY: the out-pointers point to live locals; `ip` has the 16 bytes the shim may
        // write.
        call(|e| unsafe {
            ffi::tp_udt_local_addr(self.id, &mut family, ip.as_mut_ptr(), &mut port, e)
        })
        .map_err(|f| f.io("reading the UDT socket's address"))?;
        let ip = if family == 4 {
            IpAddr::V4(Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]))
        } else {
            IpAddr::V6(Ipv6Addr::from(ip))
        };
        Ok(SocketAddr::new(ip, port))
    }

    /// Bytes-in-flight check: unacknowledged packets, or a failure once the connection is
    /// down.
    fn unacknowledged(&self) -> std::result::Result<c_int, Failure> {
        // SAFETY: integer argument and a valid error record pointer.
        call(|e| unsafe { ffi::tp_udt_unacknowledged(self.id, e) })
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: closes a socket this value owns, once. An error (the library already
        // removed a broken socket) leaves nothing to do.
        let _ = call(|e| unsafe { ffi::tp_udt_close(self.id, e) });
    }
}

/// An address as the shim takes it: family 4 or 6 and 16 bytes (IPv4 in the first 4).
fn raw_addr(addr: SocketAddr) -> (c_int, [u8; 16]) {
    match addr.ip() {
        IpAddr::V4(ip) => {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&ip.octets());
            (4, b)
        }
        IpAddr::V6(ip) => (6, ip.octets()),
    }
}

/// Checks that the library starts and gives a socket.
pub(crate) fn check() -> Result<()> {
    Socket::new(4).map(drop)
}

/// A UDT server socket.
#[derive(Debug)]
pub(crate) struct UdtListener {
    socket: Socket,
    local_addr: SocketAddr,
    /// The `ack` option, for each accepted connection.
    ack: u32,
}

impl UdtListener {
    /// Binds and listens on `addr` with the options of `opts`.
    pub(crate) fn bind(addr: SocketAddr, opts: &Options, cfg: &Config) -> Result<Self> {
        let (family, ip) = raw_addr(addr);
        let socket = Socket::new(family)?;
        socket.configure(&opts.for_socket(cfg))?;
        // Non-blocking accept, so that accept can give up after the I/O timeout.
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

    /// The address clients connect to.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Waits at most the I/O timeout for a client.
    pub(crate) fn accept(&self, cfg: &Config) -> Result<UdtChannel> {
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
                    if start.elapsed() >= cfg.io_timeout {
                        return Err(Error::Timeout {
                            during: "waiting for a client to connect",
                            after: cfg.io_timeout,
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
pub(crate) fn connect(addr: SocketAddr, opts: &Options, cfg: &Config) -> Result<UdtChannel> {
    // Keeps the library up across failed attempts, which would otherwise stop and restart
    // its threads each time.
    let _library = Library::acquire()?;
    let (family, ip) = raw_addr(addr);
    let options = opts.for_socket(cfg);
    let mut attempts = Attempts::new(cfg);
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
pub(crate) struct UdtChannel {
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
mod tests {
    use super::*;
    use crate::Framed;

    fn quick() -> Config {
        Config {
            io_timeout: Duration::from_millis(500),
            connect_timeout: Duration::from_millis(300),
            connect_attempts: 3,
            retry_delay: Duration::from_millis(20),
            ..Config::default()
        }
    }

    fn loopback() -> SocketAddr {
        "127.0.0.1:0".parse().unwrap()
    }

    fn options(mss: u32) -> Options {
        Options {
            mss,
            sndbuf: None,
            rcvbuf: None,
            fc: None,
            udpbuf: None,
            ack: DEFAULT_ACK,
        }
    }

    #[test]
    fn options_follow_the_name_and_the_config() {
        let cfg = Config {
            buffer_bytes: Some(64 << 20),
            ..quick()
        };
        let o = options(1500).for_socket(&cfg);
        assert_eq!((o.sndbuf, o.rcvbuf), (64 << 20, 64 << 20));
        // The flow window grows to hold the receive buffer: 64 MiB / 1472 + 1 packets.
        assert_eq!(o.fc, (64 << 20) / 1472 + 1);
        assert_eq!((o.snd_timeout_ms, o.rcv_timeout_ms), (500, 500));
        let named = Options {
            sndbuf: Some(1 << 20),
            fc: Some(1000),
            udpbuf: Some(1 << 21),
            ..options(9000)
        };
        let o = named.for_socket(&cfg);
        // At mss=9000 UDT's default receive buffer (8192 × 8972 bytes) beats 64 MiB.
        assert_eq!((o.mss, o.sndbuf, o.rcvbuf), (9000, 1 << 20, 0));
        assert_eq!((o.fc, o.udpbuf), (1000, 1 << 21));
        let o = options(1500).for_socket(&quick());
        assert_eq!((o.sndbuf, o.rcvbuf, o.fc, o.udpbuf), (0, 0, 0, 0));
        // A configured size below UDT's default (8192 packets) leaves the default.
        let small = Config {
            buffer_bytes: Some(128 << 10),
            ..quick()
        };
        let o = options(1500).for_socket(&small);
        assert_eq!((o.sndbuf, o.rcvbuf, o.fc), (0, 0, 0));
        let o = Options {
            rcvbuf: Some(128 << 10),
            ..options(1500)
        }
        .for_socket(&small);
        assert_eq!((o.sndbuf, o.rcvbuf), (0, 128 << 10));
    }

    #[test]
    fn the_library_applies_the_options() {
        let cfg = quick();
        let named = Options {
            sndbuf: Some(4 << 20),
            rcvbuf: Some(8 << 20),
            udpbuf: Some(1 << 20),
            ..options(9000)
        };
        let l = UdtListener::bind(loopback(), &named, &cfg).unwrap();
        let o = l.socket.options_in_force().unwrap();
        assert_eq!(o.mss, 9000);
        // UDT rounds buffers down to whole packets of mss - 28 bytes.
        assert_eq!(o.sndbuf, (4 << 20) / 8972 * 8972);
        assert_eq!(o.rcvbuf, (8 << 20) / 8972 * 8972);
        assert_eq!(o.fc, 25600);
        assert_eq!(o.udpbuf, 1 << 20);
        assert_eq!((o.snd_timeout_ms, o.rcv_timeout_ms), (500, 500));
        // The client asks for 1500: both ends use the smaller MSS.
        let addr = l.local_addr();
        let h = std::thread::spawn(move || {
            let ch = l.accept(&quick()).unwrap();
            ch.socket.options_in_force().unwrap().mss
        });
        let ch = connect(addr, &options(1500), &cfg).unwrap();
        assert_eq!(ch.socket.options_in_force().unwrap().mss, 1500);
        assert_eq!(h.join().unwrap(), 1500);
    }

    #[test]
    fn ipv6_works_where_the_machine_has_it() {
        let any6: SocketAddr = "[::1]:0".parse().unwrap();
        if std::net::UdpSocket::bind(any6).is_err() {
            eprintln!("skipping: no IPv6 loopback here");
            return;
        }
        let cfg = quick();
        let l = UdtListener::bind(any6, &options(1500), &cfg).unwrap();
        let addr = l.local_addr();
        assert!(addr.is_ipv6() && addr.port() != 0, "{addr}");
        let h = std::thread::spawn(move || {
            let mut ch = Framed::new(l.accept(&quick()).unwrap());
            ch.recv_message().unwrap()
        });
        let mut ch = Framed::new(connect(addr, &options(1500), &cfg).unwrap());
        ch.send_message(b"over ::1").unwrap();
        ch.close().unwrap();
        assert_eq!(h.join().unwrap(), b"over ::1");
    }

    /// A raw UDT peer: connects and sends `bytes` as they are, outside the chunk format.
    fn raw_peer_sends(bytes: &'static [u8]) -> Error {
        let cfg = quick();
        let l = UdtListener::bind(loopback(), &options(1500), &cfg).unwrap();
        let addr = l.local_addr();
        let h = std::thread::spawn(move || {
            let mut ch = connect(addr, &options(1500), &quick()).unwrap();
            ch.send_all(bytes).unwrap();
            std::thread::sleep(Duration::from_millis(200));
        });
        let mut ch = Framed::new(l.accept(&cfg).unwrap());
        let e = ch.recv_message().unwrap_err();
        h.join().unwrap();
        e
    }

    #[test]
    fn hostile_chunk_headers_are_refused() {
        let e = raw_peer_sends(&[0xff, 0xff, 0xff, 0xff, 1, 2, 3]);
        assert_eq!(
            e.to_string(),
            "malformed data from the peer: a udt chunk header announces 4294967295 bytes"
        );
        // A chunk cut short by the peer's end: the stream ends mid-chunk.
        let e = raw_peer_sends(&[0, 0, 0, 100, 1, 2, 3]);
        assert!(matches!(e, Error::Closed { .. }), "{e}");
        // The end marker in the middle of a frame header.
        let e = raw_peer_sends(&[0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            e.to_string(),
            "the peer closed the connection while receiving"
        );
    }
}
