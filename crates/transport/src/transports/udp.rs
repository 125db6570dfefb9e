//! `udp`: sequence-numbered datagrams, paced, without retransmission.
//!
//! The paper's best case on a lossless link: the byte stream is cut into datagrams no
//! larger than the path MTU, sent at a configured rate, and never repeated. Loss,
//! reordering, corruption or a silent peer is detected and reported as an error; no byte
//! is delivered out of order, twice, or from a damaged datagram.
//!
//! Every datagram starts with a 24-byte header: kind (u8: 1 data, 2 FIN, 3 HELLO,
//! 4 WELCOME), version (u8, 1), two zero bytes, a CRC-32 (IEEE) of the whole datagram
//! computed with these four bytes zero, the session number (u64) and the sequence number
//! (u64), all big-endian. Data datagrams carry the stream's bytes after the header.
//!
//! Set-up: the client sends HELLO (a random session number, sequence 0) to the server's
//! address, again every [`crate::Config::retry_delay`] (at least 10 ms) until an answer
//! arrives, for at most [`crate::Config::connect_budget`]. The server answers from a new
//! socket of its own with WELCOME (same session); the client then talks to that socket's
//! address only. A listener ignores datagrams that are not a HELLO, and HELLOs of a
//! session it already accepted.
//! There is no retransmission here either: a lost WELCOME makes the connect fail.
//!
//! Data: each direction numbers its data datagrams 0, 1, 2, ...; the receiver takes them
//! only in that order. A higher number than expected means loss, a lower one a duplicate
//! or reordering: both are [`Error::Unreliable`]. A bad checksum, a short datagram or a
//! datagram of another session is [`Error::Malformed`]. `close` sends FIN, carrying the
//! number of data datagrams sent, three times; the receiver reports the end of the stream
//! once it has every datagram before the FIN. Dropping a channel sends pending bytes and
//! FIN on a best-effort basis.
//!
//! There is no flow control either: a sender never waits for its receiver, and a receiver
//! that falls behind by more than its socket buffer ([`crate::Config::buffer_bytes`], by
//! default 32 MiB; without the right to force it, at most net.core.rmem_max) loses
//! datagrams and reports the loss. Pace below what the receiver sustains.
//!
//! Pacing: a token bucket counting IP packet bytes (datagram plus 28 bytes of IPv4 and UDP
//! headers, 48 for IPv6), refilled at the configured rate, holding up to 4 ms worth (at
//! least two datagrams); the sender sleeps in slices of at least 1 ms when it is empty.
//!
//! Byte counters count data datagrams, header included; HELLO, WELCOME and FIN are not
//! counted (like TCP's handshake and FIN).

use std::collections::VecDeque;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use transputation_model::{Constants, Control, TransportModel, Window};

use crate::config::{session_number, Config};
use crate::family::{Accept, Delivery, Family, OptionDecl, OptionKind, Shown, Transport, Value};
use crate::{ByteCounts, Channel, Error, Result, SocketBuffers};

/// The `udp` transport's declaration.
pub(crate) static FAMILY: Family = Family {
    name: "udp",
    aliases: &[],
    summary: "paced, sequence-numbered UDP datagrams, no retransmission: loss or reordering \
              is an error",
    options: &[
        OptionDecl {
            key: "mtu",
            kind: OptionKind::Integer {
                min: MIN_MTU as u64,
                max: MAX_MTU as u64,
                unit: "bytes",
            },
            default: Some(Value::Int(DEFAULT_MTU as u64)),
            shown: Shown::Always,
            doc: "the path MTU: IP packet bytes per datagram (1500: 1448 data bytes over IPv4)",
        },
        OptionDecl {
            key: "rate",
            kind: OptionKind::Rate {
                min: 8_000,
                max: 1_000_000_000_000,
            },
            default: Some(Value::Int(DEFAULT_RATE)),
            shown: Shown::Always,
            doc: "the pacing rate, e.g. 500mbit, 1gbit or unlimited",
        },
    ],
    delivery: Delivery::ReportsLoss,
    conformance: &["udp", "udp:mtu=9000,rate=1gbit", "udp:mtu=576,rate=500mbit"],
    available: || Ok(()),
    auto: true,
    build: |v| {
        Ok(Arc::new(Udp {
            mtu: v.u32_of("mtu"),
            rate: v.int("rate").unwrap_or(DEFAULT_RATE),
        }))
    },
    model: |v| {
        let rate = match v.int("rate").unwrap_or(DEFAULT_RATE) {
            0 => f64::INFINITY,
            bits => bits as f64 / 8.0,
        };
        TransportModel {
            key: "udp".into(),
            // HELLO and WELCOME.
            connect_round_trips: 1.0,
            // IPv4, UDP and this transport's 24-byte header.
            segment: f64::from(v.u32_of("mtu")) - 52.0,
            initial_window: 0.0,
            streams: 1,
            stripe: 1.0,
            control: Control::Paced { rate },
            window: Window::Unbounded,
            reassembly_limit: None,
            pacing_gain: None,
            first_flight_stall: None,
            long_stream_gaps: None,
            defaults: Constants {
                fixed: 0.01,
                ..Constants::TEXTBOOK
            },
        }
    },
    // Paced just below the measured bottleneck (its best case; any loss fails it).
    tuned: |path| {
        let mbit = (path.rate * 8.0 * 0.96 / 1e6).floor();
        if mbit >= 1.0 {
            vec![format!("udp:rate={mbit}mbit")]
        } else {
            Vec::new()
        }
    },
    sender_options: &[],
    while_probing: "",
    started: None,
    hedged_connect: false,
};

/// `udp` with its options.
#[derive(Debug)]
struct Udp {
    mtu: u32,
    rate: u64,
}

impl Transport for Udp {
    fn listen(&self, addr: SocketAddr, _cfg: &Config) -> Result<Box<dyn Accept>> {
        let listener = UdpListener::bind(addr)?;
        let local_addr = listener.local_addr()?;
        Ok(Box::new(UdpServer {
            listener,
            local_addr,
            mtu: self.mtu,
            rate: self.rate,
        }))
    }

    fn connect(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Channel>> {
        Ok(Box::new(connect(addr, self.mtu, self.rate, cfg)?))
    }
}

/// A `udp` server socket with the options its connections get.
#[derive(Debug)]
struct UdpServer {
    listener: UdpListener,
    local_addr: SocketAddr,
    mtu: u32,
    rate: u64,
}

impl Accept for UdpServer {
    fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    fn accept(&self, cfg: &Config) -> Result<Box<dyn Channel>> {
        Ok(Box::new(self.listener.accept(self.mtu, self.rate, cfg)?))
    }
}

/// Bytes of this transport's header in every datagram.
pub(crate) const HEADER: usize = 24;
const VERSION: u8 = 1;
pub(crate) const DATA: u8 = 1;
pub(crate) const FIN: u8 = 2;
pub(crate) const HELLO: u8 = 3;
pub(crate) const WELCOME: u8 = 4;
/// How many times FIN is sent.
const FIN_COPIES: usize = 3;
/// The default path MTU (Ethernet).
const DEFAULT_MTU: u32 = 1500;
/// The smallest MTU accepted (the IPv4 minimum reassembly size).
const MIN_MTU: u32 = 576;
/// The largest MTU accepted.
const MAX_MTU: u32 = 65535;
/// The default pacing rate, bits per second.
const DEFAULT_RATE: u64 = 1_000_000_000;
/// Socket buffers asked for per direction without [`Config::buffer_bytes`] (forced if
/// allowed, else up to the system's cap).
const SOCKET_BUFFER: usize = 32 << 20;
/// The largest datagram received.
const MAX_DATAGRAM: usize = 65536;
/// Sessions a listener remembers, to ignore repeated HELLOs.
const REMEMBERED: usize = 64;

/// IP and UDP header bytes per datagram.
fn ip_overhead(addr: &SocketAddr) -> usize {
    if addr.is_ipv4() {
        28
    } else {
        48
    }
}

/// Data bytes per datagram for a path MTU, towards `addr`.
pub(crate) fn payload_per_datagram(mtu: u32, addr: &SocketAddr) -> usize {
    mtu as usize - ip_overhead(addr) - HEADER
}

/// Writes the header of a datagram into `d[..HEADER]` and seals the whole datagram.
pub(crate) fn seal(d: &mut [u8], kind: u8, session: u64, seq: u64) {
    d[0] = kind;
    d[1] = VERSION;
    d[2..8].fill(0);
    d[8..16].copy_from_slice(&session.to_be_bytes());
    d[16..24].copy_from_slice(&seq.to_be_bytes());
    let crc = crc32fast::hash(d);
    d[4..8].copy_from_slice(&crc.to_be_bytes());
}

/// One whole datagram (header, payload) ready to send.
pub(crate) fn datagram(kind: u8, session: u64, seq: u64, payload: &[u8]) -> Vec<u8> {
    let mut d = vec![0; HEADER];
    d.extend_from_slice(payload);
    seal(&mut d, kind, session, seq);
    d
}

/// Checks a datagram's length, checksum and version; gives kind, session and sequence.
pub(crate) fn open(d: &[u8]) -> Result<(u8, u64, u64)> {
    if d.len() < HEADER {
        return Err(Error::Malformed {
            what: format!(
                "a udp datagram of {} bytes, shorter than its header",
                d.len()
            ),
        });
    }
    let mut h = crc32fast::Hasher::new();
    h.update(&d[..4]);
    h.update(&[0; 4]);
    h.update(&d[8..]);
    if h.finalize().to_be_bytes() != d[4..8] {
        return Err(Error::Malformed {
            what: "a corrupt udp datagram (bad checksum)".into(),
        });
    }
    if d[1] != VERSION {
        return Err(Error::Malformed {
            what: format!("a udp datagram of version {} (this end speaks 1)", d[1]),
        });
    }
    let session = u64::from_be_bytes(d[8..16].try_into().expect("8 bytes"));
    let seq = u64::from_be_bytes(d[16..24].try_into().expect("8 bytes"));
    Ok((d[0], session, seq))
}

/// Socket buffers of [`Config::buffer_bytes`] or [`SOCKET_BUFFER`] (best effort), and no
/// IP fragmentation: a datagram larger than the path MTU fails to send instead of being
/// fragmented.
pub(crate) fn configure(sock: &UdpSocket, cfg: &Config) {
    use rustix::net::sockopt;
    let _ = crate::channel::set_socket_buffers(sock, cfg.buffer_bytes.unwrap_or(SOCKET_BUFFER));
    let _ = sockopt::set_ip_mtu_discover(sock, sockopt::Ipv4PathMtuDiscovery::DO);
    let _ = sockopt::set_ipv6_mtu_discover(sock, sockopt::Ipv6PathMtuDiscovery::DO);
}

fn io_err(during: &'static str) -> impl Fn(io::Error) -> Error {
    move |source| Error::Io { during, source }
}

/// Maps a send or receive error on a connected UDP socket.
fn from_io(e: io::Error, during: &'static str, timeout: Duration) -> Error {
    if e.kind() == io::ErrorKind::ConnectionRefused {
        // An ICMP port unreachable: the peer's socket is gone.
        return Error::Closed { during };
    }
    Error::from_io(e, during, timeout)
}

/// A token bucket in bytes.
#[derive(Debug)]
struct Pacer {
    /// Bytes per second; 0: unlimited.
    rate: f64,
    tokens: f64,
    burst: f64,
    last: Instant,
}

impl Pacer {
    fn new(rate_bits: u64, max_packet: usize) -> Self {
        let rate = rate_bits as f64 / 8.0;
        let burst = (rate * 0.004).max(2.0 * max_packet as f64);
        Pacer {
            rate,
            tokens: burst,
            burst,
            last: Instant::now(),
        }
    }

    /// Waits until `n` bytes may leave, and takes them from the bucket.
    fn take(&mut self, n: usize) {
        if self.rate <= 0.0 {
            return;
        }
        let n = n as f64;
        loop {
            let now = Instant::now();
            let earned = now.duration_since(self.last).as_secs_f64() * self.rate;
            self.tokens = (self.tokens + earned).min(self.burst);
            self.last = now;
            if self.tokens >= n {
                self.tokens -= n;
                return;
            }
            let wait = ((n - self.tokens) / self.rate).max(0.001);
            std::thread::sleep(Duration::from_secs_f64(wait));
        }
    }
}

/// A server socket for the `udp` transport.
#[derive(Debug)]
struct UdpListener {
    sock: UdpSocket,
    accepted: Mutex<VecDeque<u64>>,
}

impl UdpListener {
    pub(crate) fn bind(addr: SocketAddr) -> Result<Self> {
        let sock = UdpSocket::bind(addr).map_err(io_err("binding the server socket"))?;
        Ok(UdpListener {
            sock,
            accepted: Mutex::new(VecDeque::new()),
        })
    }

    pub(crate) fn local_addr(&self) -> Result<SocketAddr> {
        self.sock
            .local_addr()
            .map_err(io_err("reading the server's address"))
    }

    /// Waits at most [`Config::accept_wait`] for a HELLO of a new session and answers it
    /// from a new socket.
    pub(crate) fn accept(&self, mtu: u32, rate: u64, cfg: &Config) -> Result<UdpChannel> {
        let timeout = || Error::Timeout {
            during: "waiting for a client to connect",
            after: cfg.accept_wait(),
        };
        let deadline = cfg.accept_deadline();
        let mut buf = vec![0u8; MAX_DATAGRAM];
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(timeout());
            }
            self.sock
                .set_read_timeout(Some(left.max(Duration::from_millis(1))))
                .map_err(io_err("configuring the server socket"))?;
            let (n, from) = match self.sock.recv_from(&mut buf) {
                Ok(r) => r,
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => return Err(timeout()),
                    io::ErrorKind::Interrupted | io::ErrorKind::ConnectionRefused => continue,
                    _ => return Err(io_err("waiting for a client to connect")(e)),
                },
            };
            let Ok((HELLO, session, _)) = open(&buf[..n]) else {
                continue; // not a udp client: ignore it
            };
            {
                let mut seen = self.accepted.lock().unwrap_or_else(|p| p.into_inner());
                if seen.contains(&session) {
                    continue;
                }
                if seen.len() == REMEMBERED {
                    seen.pop_front();
                }
                seen.push_back(session);
            }
            let mut local = self.local_addr()?;
            local.set_port(0);
            let sock = UdpSocket::bind(local).map_err(io_err("binding a connection socket"))?;
            configure(&sock, cfg);
            sock.connect(from)
                .map_err(io_err("connecting to the client"))?;
            sock.send(&datagram(WELCOME, session, 0, &[]))
                .map_err(|e| from_io(e, "answering the udp client", cfg.io_timeout))?;
            return UdpChannel::new(sock, session, payload_per_datagram(mtu, &from), rate, cfg);
        }
    }
}

/// A client's socket for a server at `addr` (any local address of its family, any port),
/// configured as [`configure`] does.
pub(crate) fn client_socket(addr: SocketAddr, cfg: &Config) -> Result<UdpSocket> {
    let any: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0".parse().expect("an address")
    } else {
        "[::]:0".parse().expect("an address")
    };
    let sock = UdpSocket::bind(any).map_err(io_err("binding the client socket"))?;
    configure(&sock, cfg);
    Ok(sock)
}

/// The client side: HELLO until WELCOME, then a channel to the answering socket.
fn connect(addr: SocketAddr, mtu: u32, rate: u64, cfg: &Config) -> Result<UdpChannel> {
    let sock = client_socket(addr, cfg)?;
    let session = session_number();
    let hello = datagram(HELLO, session, 0, &[]);
    let interval = cfg
        .retry_delay
        .clamp(Duration::from_millis(10), Duration::from_secs(1));
    let deadline = cfg.connect_deadline();
    let mut buf = vec![0u8; MAX_DATAGRAM];
    let mut attempts = 0u32;
    let mut last = io::Error::new(io::ErrorKind::TimedOut, "no answer to the udp hello");
    while Instant::now() < deadline {
        attempts += 1;
        if let Err(e) = sock.send_to(&hello, addr) {
            last = e;
            std::thread::sleep(interval);
            continue;
        }
        let until = (Instant::now() + interval).min(deadline);
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            sock.set_read_timeout(Some(left))
                .map_err(io_err("configuring the client socket"))?;
            match sock.recv_from(&mut buf) {
                Ok((n, from)) => {
                    if let Ok((WELCOME, s, _)) = open(&buf[..n]) {
                        if s == session {
                            sock.connect(from)
                                .map_err(io_err("connecting to the server"))?;
                            return UdpChannel::new(
                                sock,
                                session,
                                payload_per_datagram(mtu, &addr),
                                rate,
                                cfg,
                            );
                        }
                    }
                }
                Err(e) => match e.kind() {
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut => break,
                    io::ErrorKind::Interrupted => {}
                    _ => {
                        last = e;
                        break;
                    }
                },
            }
        }
    }
    Err(Error::Connect {
        addr,
        attempts,
        source: last,
    })
}

/// A [`Channel`] over one connected UDP socket.
#[derive(Debug)]
pub(crate) struct UdpChannel {
    sock: UdpSocket,
    session: u64,
    payload: usize,
    /// The datagram being filled: header slot, then up to `payload` bytes.
    out: Vec<u8>,
    send_seq: u64,
    pacer: Pacer,
    overhead: usize,
    /// The last datagram received; its bytes `in_start..in_end` are not yet delivered.
    inbuf: Vec<u8>,
    in_start: usize,
    in_end: usize,
    recv_seq: u64,
    eof: bool,
    fin_sent: bool,
    timeout: Duration,
    counts: ByteCounts,
}

impl UdpChannel {
    pub(crate) fn new(
        sock: UdpSocket,
        session: u64,
        payload: usize,
        rate: u64,
        cfg: &Config,
    ) -> Result<Self> {
        let cf = io_err("configuring a connection");
        sock.set_read_timeout(Some(cfg.io_timeout)).map_err(&cf)?;
        sock.set_write_timeout(Some(cfg.io_timeout)).map_err(&cf)?;
        let peer = sock.peer_addr().map_err(&cf)?;
        let overhead = ip_overhead(&peer);
        let mut out = Vec::with_capacity(HEADER + payload);
        out.resize(HEADER, 0);
        Ok(UdpChannel {
            sock,
            session,
            payload,
            out,
            send_seq: 0,
            pacer: Pacer::new(rate, HEADER + payload + overhead),
            overhead,
            inbuf: vec![0; MAX_DATAGRAM],
            in_start: 0,
            in_end: 0,
            recv_seq: 0,
            eof: false,
            fin_sent: false,
            timeout: cfg.io_timeout,
            counts: ByteCounts::default(),
        })
    }

    /// Sends one sealed datagram, paced.
    fn transmit(&mut self, kind: u8, seq: u64) -> Result<()> {
        seal(&mut self.out, kind, self.session, seq);
        self.pacer.take(self.out.len() + self.overhead);
        loop {
            match self.sock.send(&self.out) {
                Ok(_) => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(from_io(e, "sending", self.timeout)),
            }
        }
    }

    /// Sends the pending data datagram, if any.
    fn emit(&mut self) -> Result<()> {
        if self.out.len() == HEADER {
            return Ok(());
        }
        self.transmit(DATA, self.send_seq)?;
        self.counts.sent += self.out.len() as u64;
        self.send_seq += 1;
        self.out.truncate(HEADER);
        Ok(())
    }

    /// Sends FIN (several copies) after the pending data.
    fn finish(&mut self) -> Result<()> {
        self.emit()?;
        if self.fin_sent {
            return Ok(());
        }
        self.fin_sent = true;
        for _ in 0..FIN_COPIES {
            match self.transmit(FIN, self.send_seq) {
                Ok(()) | Err(Error::Closed { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }

    /// Takes the next datagram into `inbuf`, checking it.
    fn next_datagram(&mut self) -> Result<()> {
        let n = loop {
            match self.sock.recv(&mut self.inbuf) {
                Ok(n) => break n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(from_io(e, "receiving", self.timeout)),
            }
        };
        let (kind, session, seq) = open(&self.inbuf[..n])?;
        if session != self.session {
            return Err(Error::Malformed {
                what: format!(
                    "a udp datagram of another session ({session:#x}, this one is {:#x})",
                    self.session
                ),
            });
        }
        match kind {
            DATA | FIN => {
                if seq > self.recv_seq {
                    return Err(Error::Unreliable {
                        what: format!(
                            "{} udp datagram(s) lost: expected number {}, got {seq}",
                            seq - self.recv_seq,
                            self.recv_seq
                        ),
                    });
                }
                if seq < self.recv_seq {
                    return Err(Error::Unreliable {
                        what: format!(
                            "udp datagram {seq} duplicated or reordered: expected number {}",
                            self.recv_seq
                        ),
                    });
                }
                if kind == FIN {
                    self.eof = true;
                } else {
                    self.recv_seq += 1;
                    self.counts.received += n as u64;
                    self.in_start = HEADER;
                    self.in_end = n;
                }
                Ok(())
            }
            k => Err(Error::Malformed {
                what: format!("a udp datagram of unexpected kind {k}"),
            }),
        }
    }
}

impl Channel for UdpChannel {
    fn send(&mut self, mut bytes: &[u8]) -> Result<()> {
        if self.fin_sent && !bytes.is_empty() {
            return Err(Error::Io {
                during: "sending",
                source: io::Error::new(io::ErrorKind::BrokenPipe, "the channel was closed"),
            });
        }
        while !bytes.is_empty() {
            let room = self.payload - (self.out.len() - HEADER);
            let take = room.min(bytes.len());
            self.out.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.out.len() - HEADER == self.payload {
                self.emit()?;
            }
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.flush()?;
        let mut filled = 0;
        while filled < buf.len() {
            if self.in_start < self.in_end {
                let take = (self.in_end - self.in_start).min(buf.len() - filled);
                buf[filled..filled + take]
                    .copy_from_slice(&self.inbuf[self.in_start..self.in_start + take]);
                self.in_start += take;
                filled += take;
                continue;
            }
            if self.eof {
                return Err(Error::Closed {
                    during: "receiving",
                });
            }
            self.next_datagram()?;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.emit()
    }

    fn close(&mut self) -> Result<()> {
        self.finish()
    }

    fn stats(&self) -> ByteCounts {
        self.counts
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        crate::channel::read_socket_buffers(&self.sock)
    }

    fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        self.sock.peer_addr().ok()
    }
}

impl Drop for UdpChannel {
    fn drop(&mut self) {
        // Best effort, as the crate docs say; `close` reports errors.
        let _ = self.finish();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quick() -> Config {
        Config {
            io_timeout: Duration::from_millis(400),
            ..Config::default()
        }
    }

    /// A server channel and a fake client socket, connected by a real handshake.
    fn fake_client() -> (UdpChannel, UdpSocket, u64) {
        let listener = UdpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        let session = 0xabcdef;
        peer.send_to(&datagram(HELLO, session, 0, &[]), addr)
            .unwrap();
        let ch = listener.accept(DEFAULT_MTU, 0, &quick()).unwrap();
        let mut buf = [0u8; 100];
        let (n, from) = peer.recv_from(&mut buf).unwrap();
        assert_eq!(open(&buf[..n]).unwrap(), (WELCOME, session, 0));
        peer.connect(from).unwrap();
        (ch, peer, session)
    }

    fn recv_err(ch: &mut UdpChannel, want: usize) -> Error {
        let mut buf = vec![0u8; want];
        ch.recv(&mut buf).unwrap_err()
    }

    #[test]
    fn in_order_data_then_fin_is_the_end_of_the_stream() {
        let (mut ch, peer, s) = fake_client();
        peer.send(&datagram(DATA, s, 0, b"hello ")).unwrap();
        peer.send(&datagram(DATA, s, 1, b"world")).unwrap();
        peer.send(&datagram(FIN, s, 2, &[])).unwrap();
        let mut buf = [0u8; 11];
        ch.recv(&mut buf).unwrap();
        assert_eq!(&buf, b"hello world");
        assert_eq!(ch.stats().received, 2 * HEADER as u64 + 11);
        let e = recv_err(&mut ch, 1);
        assert!(matches!(e, Error::Closed { .. }), "{e}");
        // Still the end, not a hang.
        assert!(matches!(recv_err(&mut ch, 1), Error::Closed { .. }));
    }

    #[test]
    fn a_bad_checksum_is_corruption() {
        let (mut ch, peer, s) = fake_client();
        let mut d = datagram(DATA, s, 0, b"payload");
        d[HEADER + 2] ^= 1;
        peer.send(&d).unwrap();
        let e = recv_err(&mut ch, 7);
        assert_eq!(
            e.to_string(),
            "malformed data from the peer: a corrupt udp datagram (bad checksum)"
        );
    }

    #[test]
    fn a_wrong_session_is_refused() {
        let (mut ch, peer, s) = fake_client();
        peer.send(&datagram(DATA, s + 1, 0, b"payload")).unwrap();
        let e = recv_err(&mut ch, 7);
        assert!(matches!(e, Error::Malformed { .. }), "{e}");
        assert!(e.to_string().contains("another session"), "{e}");
    }

    #[test]
    fn a_skipped_sequence_is_loss() {
        let (mut ch, peer, s) = fake_client();
        peer.send(&datagram(DATA, s, 0, b"abc")).unwrap();
        peer.send(&datagram(DATA, s, 2, b"def")).unwrap();
        let e = recv_err(&mut ch, 6);
        assert_eq!(
            e.to_string(),
            "the network lost or reordered data, which this transport does not repair: \
             1 udp datagram(s) lost: expected number 1, got 2"
        );
        // A FIN after a gap is loss too.
        let (mut ch, peer, s) = fake_client();
        peer.send(&datagram(FIN, s, 3, &[])).unwrap();
        assert!(matches!(recv_err(&mut ch, 1), Error::Unreliable { .. }));
    }

    #[test]
    fn a_duplicated_sequence_is_reordering() {
        let (mut ch, peer, s) = fake_client();
        peer.send(&datagram(DATA, s, 0, b"abc")).unwrap();
        peer.send(&datagram(DATA, s, 0, b"abc")).unwrap();
        let e = recv_err(&mut ch, 6);
        assert!(matches!(e, Error::Unreliable { .. }), "{e}");
        assert!(e.to_string().contains("duplicated or reordered"), "{e}");
    }

    #[test]
    fn short_and_unknown_datagrams_are_malformed() {
        let (mut ch, peer, _) = fake_client();
        peer.send(b"tiny").unwrap();
        assert!(recv_err(&mut ch, 1)
            .to_string()
            .contains("shorter than its header"));
        let (mut ch, peer, s) = fake_client();
        peer.send(&datagram(9, s, 0, &[])).unwrap();
        assert!(recv_err(&mut ch, 1)
            .to_string()
            .contains("unexpected kind 9"));
    }

    #[test]
    fn a_silent_peer_times_out() {
        let (mut ch, _peer, _) = fake_client();
        let start = Instant::now();
        let e = recv_err(&mut ch, 1);
        assert_eq!(
            e.to_string(),
            "the peer was silent for 400ms while receiving"
        );
        assert!(start.elapsed() < Duration::from_secs(3));
    }

    #[test]
    fn the_sender_numbers_its_datagrams_and_ends_with_fins() {
        let (mut ch, peer, s) = fake_client();
        let data = vec![7u8; 3000];
        ch.send(&data).unwrap();
        ch.close().unwrap();
        let per = payload_per_datagram(DEFAULT_MTU, &peer.local_addr().unwrap());
        assert_eq!(per, 1448);
        let mut buf = vec![0u8; MAX_DATAGRAM];
        let mut got = Vec::new();
        for seq in 0..3 {
            let n = peer.recv(&mut buf).unwrap();
            assert!(n <= 1472);
            assert_eq!(open(&buf[..n]).unwrap(), (DATA, s, seq));
            got.extend_from_slice(&buf[HEADER..n]);
        }
        assert_eq!(got, data);
        for _ in 0..FIN_COPIES {
            let n = peer.recv(&mut buf).unwrap();
            assert_eq!(open(&buf[..n]).unwrap(), (FIN, s, 3));
        }
        assert_eq!(ch.stats().sent, 3000 + 3 * HEADER as u64);
    }

    #[test]
    fn stray_datagrams_do_not_disturb_a_listener() {
        let listener = UdpListener::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let peer = UdpSocket::bind("127.0.0.1:0").unwrap();
        peer.send_to(b"GET / HTTP/1.1", addr).unwrap();
        peer.send_to(&datagram(DATA, 5, 0, b"x"), addr).unwrap();
        let e = listener
            .accept(DEFAULT_MTU, 0, &quick())
            .map(|_| ())
            .unwrap_err();
        assert_eq!(
            e.to_string(),
            "the peer was silent for 400ms while waiting for a client to connect"
        );
    }

    #[test]
    fn pacing_holds_the_rate() {
        // 8 Mbit/s = 1 MB/s: 200 kB beyond the first burst take about 0.2 s.
        let mut p = Pacer::new(8_000_000, 1500);
        let start = Instant::now();
        let burst = p.burst as usize;
        p.take(burst);
        for _ in 0..200 {
            p.take(1000);
        }
        let t = start.elapsed().as_secs_f64();
        assert!((0.18..1.0).contains(&t), "{t}");
    }
}
