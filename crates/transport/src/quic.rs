//! `quic`: one QUIC connection (quinn), one bidirectional stream carrying the byte stream.
//!
//! QUIC gives what the paper asks of a transport for long, lossy links without kernel help:
//! congestion control in user space, selectable per connection (`cc=cubic|bbr|newreno`,
//! quinn's controllers), and flow-control windows sized to the bandwidth-delay product
//! (`window=BYTES`; see [`window_for`]).
//!
//! # Initial window
//!
//! `iw=BYTES` sets the congestion controller's initial window (quinn's defaults: 12,000
//! bytes for cubic and newreno, as TCP's ten segments; 240,000 for bbr). On a long path
//! every party's message that opens a direction then slow-starts from that: on a 300 ms
//! path, seven to ten round trips (2–3 s) before a 500 Mbit/s link is full, paid again by
//! each direction of a 2PC session. A
//! party that knows its path (the testbed does; paper §4.2 sizes the buffers from the same
//! knowledge) can start at the path's bandwidth-delay product: quinn paces a window over
//! the measured round trip (the handshake gives the first sample), so the first flight
//! leaves at the link rate rather than in one burst. The risk is the usual one of a large
//! initial window: on a path with less capacity than assumed, the first flight overflows
//! the bottleneck queue and the controller backs off from losses. Not for unknown paths.
//!
//! # Security: encrypted, authenticated only by the layer above
//!
//! Every byte is protected by TLS 1.3 (ALPN `transputation/1`), but the client does **not**
//! authenticate the server: a server makes a fresh self-signed certificate when it starts
//! listening, and the client accepts any certificate. It still checks that the server holds
//! the key of the certificate it presented (the handshake signature), which proves nothing
//! about who the server is. An active attacker on the path can therefore stand in the
//! middle; a passive one learns nothing but sizes and timing. Sessions are authenticated
//! by [`crate::SecureChannel`] on top of this channel, as on every other transport (its
//! module docs say why rather than pinning keys in QUIC's TLS).
//!
//! # Threads and blocking
//!
//! quinn is asynchronous; this module keeps the crate's blocking [`Channel`]. Each endpoint
//! (a listener, or a client's connection) owns a tokio runtime with one worker thread,
//! which drives the UDP socket, timers, acknowledgements and keep-alives in the background,
//! also while the application computes. The calling thread waits for a QUIC operation on a
//! small executor of its own (it parks until woken), so a channel works from any thread,
//! also one inside another tokio runtime. Every wait is bounded by [`Config::io_timeout`]
//! (reset by progress, as everywhere in this crate).
//!
//! # Set-up
//!
//! The client opens the connection (TLS handshake), opens one bidirectional stream and
//! writes the 8-byte hello `b"TPQC"`, version byte 1, three zero bytes; a QUIC stream
//! becomes visible to the peer only with its first byte, so the hello lets the server's
//! accept finish before either side sends data. The hello is not counted in the byte
//! counters (like the handshakes of the other transports). QUIC has no "connection
//! refused": a client retries a handshake that fails, and gives up with [`Error::Connect`]
//! after [`Config::connect_budget`], as every transport does; quinn itself retransmits an
//! unanswered Initial packet.
//!
//! # Sending, closing, timeouts
//!
//! [`Channel::send`] gathers small writes into a 256 KiB buffer and hands full buffers to
//! quinn without copying; larger sends go in 256 KiB pieces. [`Channel::flush`] hands what
//! is buffered to the QUIC connection, whose send buffer (the window) then drains in the
//! background as congestion and flow control allow, like a kernel socket buffer.
//! [`Channel::close`] flushes, finishes the stream (the peer reads everything, then sees
//! the end of the stream) and waits, at most the I/O timeout, until the peer's QUIC stack
//! has acknowledged every byte: quinn discards unacknowledged data when a connection
//! closes, and this wait is what keeps the tail of the stream from being lost. `close`
//! errs with [`Error::Closed`] if the peer stopped reading first or the connection broke,
//! and succeeds if the peer dropped its channel in good order meanwhile (it has all it
//! chose to read, as with a TCP peer that closed its socket). Dropping a channel does the
//! same on a best-effort basis, then closes the connection (application code 0); data the
//! peer has received stays readable there, then it sees the end of the stream. A channel
//! dropped after an error, or whose peer did not acknowledge the tail in time, resets the
//! stream and closes with code 1 at once: the peer gets [`Error::Closed`] without waiting
//! (quinn would otherwise hold the close back behind the unsent data).
//!
//! The connection's idle timeout is the I/O timeout and each end sends keep-alives every
//! third of it, so a live but busy peer keeps the connection, while a vanished one gives
//! [`Error::Timeout`] within the timeout.
//!
//! # Byte counters
//!
//! The counters count the stream's payload bytes handed to and taken from quinn, framing
//! headers of [`crate::Framed`] included; QUIC packet and frame headers, UDP/IP headers,
//! encryption overhead, acknowledgements, retransmissions and the handshake are not counted.

use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use bytes::Bytes;
use quinn::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};
use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::rustls;
use quinn::{
    ConnectionError, Endpoint, EndpointConfig, IdleTimeout, MtuDiscoveryConfig, ReadError,
    RecvStream, SendStream, TransportConfig, VarInt, WriteError,
};

use crate::spec::Attempts;
use crate::{ByteCounts, Channel, Config, Error, Result};

/// The ALPN protocol both ends must offer.
const ALPN: &[u8] = b"transputation/1";
/// The name the client asks for (the certificate is not checked against it; see above).
const SERVER_NAME: &str = "transputation";
/// The set-up hello on the stream.
const HELLO: [u8; 8] = *b"TPQC\x01\x00\x00\x00";
/// The application close code of a channel dropped in good order.
const DONE: VarInt = VarInt::from_u32(0);
/// The application close code of a channel dropped after an error.
const FAILED: VarInt = VarInt::from_u32(1);
/// Bytes gathered before they are handed to quinn; also the piece size of large sends.
const BUF: usize = 256 << 10;
/// Chunks taken from quinn per lock of the connection.
const READ_BATCH: usize = 32;
/// The default window: twice the bandwidth-delay product of a 1 Gbit/s, 100 ms path
/// (2 × 12.5 MB), rounded up to a power of two.
pub(crate) const DEFAULT_WINDOW: u64 = 32 << 20;
const _: () = assert!(DEFAULT_WINDOW >= 2 * (1_000_000_000 / 8) / 10);
/// The smallest window accepted.
pub(crate) const MIN_WINDOW: u64 = 16 << 10;
/// The largest window accepted.
pub(crate) const MAX_WINDOW: u64 = 4 << 30;
/// The smallest initial congestion window accepted: two of quinn's smallest packets.
pub(crate) const MIN_INITIAL_WINDOW: u64 = 2400;
/// The smallest path MTU accepted: the IPv6 minimum, which leaves QUIC's 1200-byte
/// minimum UDP payload.
pub(crate) const MIN_MTU: u32 = 1280;
/// The largest path MTU accepted: jumbo frames. (With quinn 0.11, 16384 and more made
/// the handshake fail on loopback.)
pub(crate) const MAX_MTU: u32 = 9216;
/// quinn's default largest UDP payload accepted from peers.
const DEFAULT_MAX_UDP_PAYLOAD: u16 = 1472;
/// Kernel UDP socket buffers asked for, per direction (forced if allowed, else up to the
/// system's cap): room for bursts while the I/O thread is busy, not for the window.
const SOCKET_BUFFER: usize = 8 << 20;
/// Longest wait, when the last user of an endpoint goes, for its connections' close to
/// reach their peers.
const LINGER: Duration = Duration::from_secs(1);

/// quinn's congestion controllers, as `quic:cc=` names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum QuicCongestion {
    /// CUBIC (RFC 9438), quinn's default.
    #[default]
    Cubic,
    /// BBR (quinn marks it experimental).
    Bbr,
    /// NewReno (RFC 9002).
    NewReno,
}

impl QuicCongestion {
    /// The name in a transport string.
    pub fn name(self) -> &'static str {
        match self {
            QuicCongestion::Cubic => "cubic",
            QuicCongestion::Bbr => "bbr",
            QuicCongestion::NewReno => "newreno",
        }
    }

    /// Parses a name as [`QuicCongestion::name`] gives it.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Cubic, Self::Bbr, Self::NewReno]
            .into_iter()
            .find(|c| c.name() == name)
    }

    /// quinn's controller, starting from `initial_window` bytes if given.
    fn factory(self, initial_window: Option<u64>) -> Arc<dyn ControllerFactory + Send + Sync> {
        // Each controller's config type has its own `initial_window` setter.
        macro_rules! config {
            ($c:ty) => {{
                let mut c = <$c>::default();
                if let Some(w) = initial_window {
                    c.initial_window(w);
                }
                Arc::new(c)
            }};
        }
        match self {
            QuicCongestion::Cubic => config!(CubicConfig),
            QuicCongestion::Bbr => config!(BbrConfig),
            QuicCongestion::NewReno => config!(NewRenoConfig),
        }
    }
}

impl fmt::Display for QuicCongestion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The flow-control window in bytes: the `window` option if given, else
/// [`Config::buffer_bytes`] (clamped to the accepted range), else [`DEFAULT_WINDOW`].
///
/// It is the stream's and the connection's receive window and the send window: up to this
/// many bytes may be in flight or buffered per direction, so it should be at least the
/// path's bandwidth-delay product (paper §4.2).
pub(crate) fn window_for(option: Option<u64>, cfg: &Config) -> u64 {
    option
        .or_else(|| {
            cfg.buffer_bytes
                .map(|b| (b as u64).clamp(MIN_WINDOW, MAX_WINDOW))
        })
        .unwrap_or(DEFAULT_WINDOW)
}

/// What a `quic` endpoint needs from its transport string and [`Config`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    /// The congestion controller.
    pub(crate) cc: QuicCongestion,
    /// The flow-control window, bytes.
    pub(crate) window: u64,
    /// The path MTU in IP bytes, if given.
    pub(crate) mtu: Option<u32>,
    /// The congestion controller's initial window in bytes, if given.
    pub(crate) initial_window: Option<u64>,
}

impl Params {
    /// The UDP payload size to start from, towards or from `addr`, if an MTU was given.
    fn udp_payload(&self, addr: &SocketAddr) -> Option<u16> {
        self.mtu.map(|m| {
            let overhead = if addr.is_ipv4() { 28 } else { 48 };
            u16::try_from(m.saturating_sub(overhead)).unwrap_or(u16::MAX)
        })
    }

    fn transport(&self, addr: &SocketAddr, cfg: &Config) -> TransportConfig {
        let mut t = TransportConfig::default();
        let window = VarInt::from_u64(self.window).unwrap_or(VarInt::MAX);
        t.stream_receive_window(window)
            .receive_window(window)
            .send_window(self.window)
            .max_concurrent_bidi_streams(VarInt::from_u32(1))
            .max_concurrent_uni_streams(VarInt::from_u32(0))
            .datagram_receive_buffer_size(None)
            .congestion_controller_factory(self.cc.factory(self.initial_window));
        // QUIC's idle timeout 0 means "none", so never hand it a zero.
        let idle = cfg.io_timeout.max(Duration::from_millis(10));
        t.max_idle_timeout(IdleTimeout::try_from(idle).ok())
            .keep_alive_interval(Some(idle / 3));
        if let Some(payload) = self.udp_payload(addr) {
            // The path MTU was given: start there, and let discovery only confirm it
            // (its black-hole detection still falls back to 1200 if it was wrong).
            let mut discovery = MtuDiscoveryConfig::default();
            discovery.upper_bound(payload);
            t.initial_mtu(payload).mtu_discovery_config(Some(discovery));
        }
        t
    }

    fn endpoint(&self, addr: &SocketAddr) -> EndpointConfig {
        let mut e = EndpointConfig::default();
        let payload = self
            .udp_payload(addr)
            .unwrap_or(0)
            .max(DEFAULT_MAX_UDP_PAYLOAD);
        e.max_udp_payload_size(payload)
            .expect("a payload from 1472 to 65527 is in quinn's range");
        e
    }
}

/// The runtime and endpoint behind a listener or a client, shared by its channels; the last
/// one to go waits (briefly) for connection closes to be sent, then stops the runtime.
struct Driver {
    rt: Option<tokio::runtime::Runtime>,
    handle: tokio::runtime::Handle,
    endpoint: Endpoint,
    /// Wait up to [`LINGER`] on drop for connection closes to be sent; off when no
    /// connection was ever made (a failed connect has nothing to deliver).
    linger: bool,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver").finish_non_exhaustive()
    }
}

impl Driver {
    /// A runtime with one I/O thread and an endpoint on a UDP socket bound to `addr`.
    fn new(
        addr: SocketAddr,
        params: &Params,
        peer: &SocketAddr,
        server: Option<quinn::ServerConfig>,
    ) -> Result<Self> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("quic-io")
            .enable_all()
            .build()
            .map_err(|source| Error::Io {
                during: "starting the QUIC I/O thread",
                source,
            })?;
        let socket = UdpSocket::bind(addr).map_err(|source| Error::Io {
            during: "binding the QUIC socket",
            source,
        })?;
        configure(&socket);
        let endpoint = {
            let _in_runtime = rt.enter();
            Endpoint::new(
                params.endpoint(peer),
                server,
                socket,
                Arc::new(quinn::TokioRuntime),
            )
            .map_err(|source| Error::Io {
                during: "setting up the QUIC endpoint",
                source,
            })?
        };
        Ok(Driver {
            handle: rt.handle().clone(),
            rt: Some(rt),
            endpoint,
            linger: true,
        })
    }

    /// Runs `fut` to completion on the calling thread, with the runtime's timers and I/O.
    fn block_on<F: Future>(&self, fut: F) -> F::Output {
        block_on(&self.handle, fut)
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if self.linger {
            let endpoint = self.endpoint.clone();
            self.block_on(async move {
                let _ = tokio::time::timeout(LINGER, endpoint.wait_idle()).await;
            });
        }
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Wakes a thread parked in [`block_on`].
struct Unpark(std::thread::Thread);

impl Wake for Unpark {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

/// A minimal executor: polls `fut` on this thread, parking between wake-ups, inside the
/// runtime's context so that timers and sockets register with its driver. Unlike
/// `Runtime::block_on` it may run inside another runtime.
fn block_on<F: Future>(handle: &tokio::runtime::Handle, fut: F) -> F::Output {
    let _in_runtime = handle.enter();
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut fut = pin!(fut);
    loop {
        if let Poll::Ready(v) = fut.as_mut().poll(&mut cx) {
            return v;
        }
        std::thread::park();
    }
}

/// Awaits `fut`, or gives `None` once `sleep` fires.
async fn before<F: Future>(
    fut: F,
    sleep: &mut std::pin::Pin<&mut tokio::time::Sleep>,
) -> Option<F::Output> {
    let mut fut = pin!(fut);
    std::future::poll_fn(|cx| {
        if let Poll::Ready(v) = fut.as_mut().poll(cx) {
            return Poll::Ready(Some(v));
        }
        match sleep.as_mut().poll(cx) {
            Poll::Ready(()) => Poll::Ready(None),
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// Large socket buffers, best effort.
fn configure(sock: &UdpSocket) {
    use rustix::net::sockopt;
    if sockopt::set_socket_recv_buffer_size_force(sock, SOCKET_BUFFER).is_err() {
        let _ = sockopt::set_socket_recv_buffer_size(sock, SOCKET_BUFFER);
    }
    if sockopt::set_socket_send_buffer_size_force(sock, SOCKET_BUFFER).is_err() {
        let _ = sockopt::set_socket_send_buffer_size(sock, SOCKET_BUFFER);
    }
}

/// Maps a lost connection.
fn lost(e: ConnectionError, during: &'static str, after: Duration) -> Error {
    match e {
        ConnectionError::TimedOut => Error::Timeout { during, after },
        ConnectionError::ApplicationClosed(_)
        | ConnectionError::ConnectionClosed(_)
        | ConnectionError::Reset
        | ConnectionError::LocallyClosed => Error::Closed { during },
        ConnectionError::VersionMismatch => Error::Mismatch {
            what: "the QUIC peer speaks no QUIC version this end knows".into(),
        },
        ConnectionError::TransportError(e) => Error::Malformed {
            what: format!("QUIC protocol error: {e}"),
        },
        ConnectionError::CidsExhausted => Error::Io {
            during,
            source: io::Error::other("QUIC connection IDs exhausted"),
        },
    }
}

fn write_err(e: WriteError, during: &'static str, after: Duration) -> Error {
    match e {
        WriteError::ConnectionLost(e) => lost(e, during, after),
        WriteError::Stopped(_) | WriteError::ClosedStream | WriteError::ZeroRttRejected => {
            Error::Closed { during }
        }
    }
}

fn read_err(e: ReadError, during: &'static str, after: Duration) -> Error {
    match e {
        ReadError::ConnectionLost(e) => lost(e, during, after),
        ReadError::IllegalOrderedRead => Error::Io {
            during,
            source: io::Error::other("an ordered read after an unordered one"),
        },
        ReadError::Reset(_) | ReadError::ClosedStream | ReadError::ZeroRttRejected => {
            Error::Closed { during }
        }
    }
}

/// The client does not authenticate the server (see the module docs): it accepts any
/// certificate, and only checks the handshake signature against the presented one.
#[derive(Debug)]
struct Unauthenticated(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for Unauthenticated {
    fn verify_server_cert(
        &self,
        _end_entity: &rustls::pki_types::CertificateDer<'_>,
        _intermediates: &[rustls::pki_types::CertificateDer<'_>],
        _server_name: &rustls::pki_types::ServerName<'_>,
        _ocsp_response: &[u8],
        _now: rustls::pki_types::UnixTime,
    ) -> std::result::Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> std::result::Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

fn tls_err(during: &'static str) -> impl Fn(rustls::Error) -> Error {
    move |e| Error::Io {
        during,
        source: io::Error::other(e),
    }
}

fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

fn client_config(params: &Params, peer: &SocketAddr, cfg: &Config) -> Result<quinn::ClientConfig> {
    let provider = provider();
    let mut tls = rustls::ClientConfig::builder_with_provider(provider.clone())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_err("configuring TLS"))?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(Unauthenticated(provider)))
        .with_no_client_auth();
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let quic = QuicClientConfig::try_from(tls).map_err(|e| Error::Io {
        during: "configuring QUIC",
        source: io::Error::other(e),
    })?;
    let mut c = quinn::ClientConfig::new(Arc::new(quic));
    c.transport_config(Arc::new(params.transport(peer, cfg)));
    Ok(c)
}

/// A server configuration with a fresh self-signed certificate.
fn server_config(params: &Params, local: &SocketAddr, cfg: &Config) -> Result<quinn::ServerConfig> {
    let during = "making the server's certificate";
    let cert = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_string()]).map_err(|e| {
        Error::Io {
            during,
            source: io::Error::other(e),
        }
    })?;
    let key = rustls::pki_types::PrivatePkcs8KeyDer::from(cert.signing_key.serialize_der());
    let mut tls = rustls::ServerConfig::builder_with_provider(provider())
        .with_protocol_versions(&[&rustls::version::TLS13])
        .map_err(tls_err("configuring TLS"))?
        .with_no_client_auth()
        .with_single_cert(vec![cert.cert.der().clone()], key.into())
        .map_err(tls_err(during))?;
    tls.alpn_protocols = vec![ALPN.to_vec()];
    let quic = QuicServerConfig::try_from(tls).map_err(|e| Error::Io {
        during: "configuring QUIC",
        source: io::Error::other(e),
    })?;
    let mut s = quinn::ServerConfig::with_crypto(Arc::new(quic));
    s.transport_config(Arc::new(params.transport(local, cfg)));
    Ok(s)
}

/// A `quic` server: an endpoint with a self-signed certificate, one client per accept.
#[derive(Debug)]
pub(crate) struct QuicListener {
    driver: Arc<Driver>,
    local_addr: SocketAddr,
}

impl QuicListener {
    /// Binds a server endpoint to `addr`.
    pub(crate) fn bind(addr: SocketAddr, params: &Params, cfg: &Config) -> Result<Self> {
        let server = server_config(params, &addr, cfg)?;
        let driver = Driver::new(addr, params, &addr, Some(server))?;
        let local_addr = driver.endpoint.local_addr().map_err(|source| Error::Io {
            during: "reading the server's address",
            source,
        })?;
        Ok(QuicListener {
            driver: Arc::new(driver),
            local_addr,
        })
    }

    /// The address clients connect to.
    pub(crate) fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// Waits for one client: its handshake, its stream and its hello, each within the
    /// I/O timeout.
    pub(crate) fn accept(&self, cfg: &Config) -> Result<QuicChannel> {
        let t = cfg.io_timeout;
        let endpoint = self.driver.endpoint.clone();
        let (conn, send, recv) = self.driver.block_on(async move {
            let timed_out = |during| Error::Timeout { during, after: t };
            let incoming = tokio::time::timeout(t, endpoint.accept())
                .await
                .map_err(|_| timed_out("waiting for a client to connect"))?
                .ok_or(Error::Closed {
                    during: "waiting for a client to connect",
                })?;
            let during = "the QUIC handshake with a client";
            let connecting = incoming.accept().map_err(|e| lost(e, during, t))?;
            let conn = tokio::time::timeout(t, connecting)
                .await
                .map_err(|_| timed_out(during))?
                .map_err(|e| lost(e, during, t))?;
            let during = "waiting for the client's stream";
            let (send, mut recv) = tokio::time::timeout(t, conn.accept_bi())
                .await
                .map_err(|_| timed_out(during))?
                .map_err(|e| lost(e, during, t))?;
            let mut hello = [0u8; HELLO.len()];
            tokio::time::timeout(t, recv.read_exact(&mut hello))
                .await
                .map_err(|_| timed_out(during))?
                .map_err(|e| match e {
                    quinn::ReadExactError::FinishedEarly(_) => Error::Closed { during },
                    quinn::ReadExactError::ReadError(e) => read_err(e, during, t),
                })?;
            if hello != HELLO {
                return Err(Error::Malformed {
                    what: "the quic client's hello has a wrong magic or version".into(),
                });
            }
            Ok((conn, send, recv))
        })?;
        Ok(QuicChannel::new(self.driver.clone(), conn, send, recv, cfg))
    }
}

/// Sets up a client: a handshake with the server at `addr`, retried as the module docs
/// say, then the stream and its hello.
pub(crate) fn connect(addr: SocketAddr, params: &Params, cfg: &Config) -> Result<QuicChannel> {
    let local: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    let client = client_config(params, &addr, cfg)?;
    let mut driver = Driver::new(local, params, &addr, None)?;
    let budget = cfg.connect_budget();
    let mut attempts = Attempts::new(cfg);
    let endpoint = driver.endpoint.clone();
    let connected = driver.block_on(async move {
        let mut last = io::Error::other("no attempt made");
        while let Some(pause) = attempts.pause() {
            if !pause.is_zero() {
                tokio::time::sleep(pause).await;
            }
            let connecting = endpoint
                .connect_with(client.clone(), addr, SERVER_NAME)
                .map_err(|e| Error::Connect {
                    addr,
                    attempts: attempts.made(),
                    source: io::Error::other(e),
                })?;
            last = match tokio::time::timeout(attempts.left(), connecting).await {
                Ok(Ok(conn)) => return Ok(conn),
                Ok(Err(e)) => io::Error::other(e),
                Err(_) => io::Error::new(
                    io::ErrorKind::TimedOut,
                    format!("no QUIC handshake completed within {budget:?}"),
                ),
            };
        }
        Err(Error::Connect {
            addr,
            attempts: attempts.made(),
            source: last,
        })
    });
    // A handshake that timed out keeps the endpoint busy for quinn's own timeout; the
    // budget is spent, so the driver goes without waiting for it.
    driver.linger = connected.is_ok();
    let conn = connected?;
    let t = cfg.io_timeout;
    let (send, recv) = driver.block_on(async {
        let during = "opening the QUIC stream";
        let (mut send, recv) = tokio::time::timeout(t, conn.open_bi())
            .await
            .map_err(|_| Error::Timeout { during, after: t })?
            .map_err(|e| lost(e, during, t))?;
        tokio::time::timeout(t, send.write_all(&HELLO))
            .await
            .map_err(|_| Error::Timeout { during, after: t })?
            .map_err(|e| write_err(e, during, t))?;
        Ok::<_, Error>((send, recv))
    })?;
    Ok(QuicChannel::new(Arc::new(driver), conn, send, recv, cfg))
}

/// A [`Channel`] over one QUIC stream.
pub(crate) struct QuicChannel {
    conn: quinn::Connection,
    send: SendStream,
    recv: RecvStream,
    /// Bytes gathered for the next hand-over to quinn.
    pending: Vec<u8>,
    /// Chunks taken from quinn, not yet given to the application.
    incoming: VecDeque<Bytes>,
    scratch: Vec<Bytes>,
    timeout: Duration,
    counts: ByteCounts,
    /// `close` finished the stream.
    finished: bool,
    /// An operation failed: drop closes at once instead of lingering.
    failed: bool,
    /// The peer acknowledged the whole finished stream (or went away in good order).
    acked: bool,
    /// Declared last: the runtime outlives the streams and the connection.
    driver: Arc<Driver>,
}

impl fmt::Debug for QuicChannel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QuicChannel")
            .field("remote", &self.conn.remote_address())
            .field("counts", &self.counts)
            .finish_non_exhaustive()
    }
}

impl QuicChannel {
    fn new(
        driver: Arc<Driver>,
        conn: quinn::Connection,
        send: SendStream,
        recv: RecvStream,
        cfg: &Config,
    ) -> Self {
        QuicChannel {
            conn,
            send,
            recv,
            pending: Vec::with_capacity(BUF),
            incoming: VecDeque::new(),
            scratch: vec![Bytes::new(); READ_BATCH],
            timeout: cfg.io_timeout,
            counts: ByteCounts::default(),
            finished: false,
            failed: false,
            acked: false,
            driver,
        }
    }

    /// Hands the pending buffer, then `more` in pieces of at most [`BUF`], to quinn; each
    /// piece must find room within the I/O timeout.
    fn write(&mut self, during: &'static str, more: &[u8]) -> Result<()> {
        if self.pending.is_empty() && more.is_empty() {
            return Ok(());
        }
        if self.finished {
            return Err(Error::Closed { during });
        }
        // A full buffer changes hands without a copy; a small one is copied, so that a
        // flush after a few bytes does not cost a fresh 256 KiB buffer.
        let first = if self.pending.len() >= BUF / 2 {
            Bytes::from(std::mem::replace(
                &mut self.pending,
                Vec::with_capacity(BUF),
            ))
        } else {
            let b = Bytes::copy_from_slice(&self.pending);
            self.pending.clear();
            b
        };
        let t = self.timeout;
        let send = &mut self.send;
        let r = self.driver.block_on(async move {
            let mut sleep = pin!(tokio::time::sleep(t));
            let pieces = std::iter::once(first)
                .filter(|b| !b.is_empty())
                .chain(more.chunks(BUF).map(Bytes::copy_from_slice));
            for piece in pieces {
                match before(send.write_chunk(piece), &mut sleep).await {
                    Some(Ok(())) => {}
                    Some(Err(e)) => return Err(write_err(e, during, t)),
                    None => return Err(Error::Timeout { during, after: t }),
                }
                let next = tokio::time::Instant::now() + t;
                sleep.as_mut().reset(next);
            }
            Ok(())
        });
        self.failed |= r.is_err();
        r
    }

    /// Takes the next chunks from quinn into `incoming`, within the I/O timeout.
    fn fill(&mut self) -> Result<()> {
        let t = self.timeout;
        let during = "receiving";
        let (recv, scratch) = (&mut self.recv, &mut self.scratch);
        let r = self.driver.block_on(async move {
            let sleep = pin!(tokio::time::sleep(t));
            let mut sleep = sleep;
            match before(recv.read_chunks(scratch), &mut sleep).await {
                Some(Ok(Some(n))) => Ok(n),
                Some(Ok(None)) => Err(Error::Closed { during }),
                Some(Err(e)) => Err(read_err(e, during, t)),
                None => Err(Error::Timeout { during, after: t }),
            }
        });
        match r {
            Ok(n) => {
                self.incoming
                    .extend(self.scratch[..n].iter_mut().map(std::mem::take));
                Ok(())
            }
            Err(e) => {
                self.failed = true;
                Err(e)
            }
        }
    }

    /// Finishes the stream and waits until the peer acknowledged all of it.
    fn finish(&mut self) -> Result<()> {
        let during = "closing";
        let t = self.timeout;
        if !self.finished {
            self.finished = true;
            // An error means the stream was already reset: the wait below reports it.
            let _ = self.send.finish();
        }
        let stopped = self.send.stopped();
        let r = self.driver.block_on(async move {
            match tokio::time::timeout(t, stopped).await {
                Ok(Ok(None)) => Ok(()),
                // The peer stopped reading before the end.
                Ok(Ok(Some(_))) => Err(Error::Closed { during }),
                // The peer dropped its channel normally: it has all it chose to read.
                Ok(Err(quinn::StoppedError::ConnectionLost(
                    ConnectionError::ApplicationClosed(c),
                ))) if c.error_code == DONE => Ok(()),
                Ok(Err(quinn::StoppedError::ConnectionLost(e))) => Err(lost(e, during, t)),
                Ok(Err(quinn::StoppedError::ZeroRttRejected)) => Err(Error::Closed { during }),
                Err(_) => Err(Error::Timeout { during, after: t }),
            }
        });
        self.failed |= r.is_err();
        self.acked = r.is_ok();
        r
    }
}

impl Channel for QuicChannel {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        let room = BUF - self.pending.len();
        if bytes.len() <= room {
            self.pending.extend_from_slice(bytes);
        } else {
            // Fill the buffer, hand it over with the whole pieces that follow, keep the tail.
            let (head, rest) = bytes.split_at(room);
            self.pending.extend_from_slice(head);
            let whole = rest.len() - rest.len() % BUF;
            self.write("sending", &rest[..whole])?;
            self.pending.extend_from_slice(&rest[whole..]);
        }
        self.counts.sent += bytes.len() as u64;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.flush()?;
        let mut filled = 0;
        while filled < buf.len() {
            let Some(chunk) = self.incoming.front_mut() else {
                self.fill()?;
                continue;
            };
            let take = chunk.len().min(buf.len() - filled);
            buf[filled..filled + take].copy_from_slice(&chunk.split_to(take));
            if chunk.is_empty() {
                self.incoming.pop_front();
            }
            filled += take;
            self.counts.received += take as u64;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.write("flushing", &[])
    }

    fn close(&mut self) -> Result<()> {
        self.flush()?;
        self.finish()
    }

    fn stats(&self) -> ByteCounts {
        self.counts
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        Some(self.conn.remote_address())
    }
}

impl Drop for QuicChannel {
    fn drop(&mut self) {
        // Best effort, as the crate docs say; `close` reports errors. Closing the connection
        // before the peer acknowledged the stream's tail would lose it, hence the wait.
        if !self.failed && !self.acked {
            let _ = self.flush().and_then(|()| self.finish());
        }
        if self.acked {
            self.conn.close(DONE, b"done");
        } else {
            // Unacknowledged stream data left in quinn's buffers keeps it from sending the
            // close (it is held back by congestion control, and the peer would wait out the
            // idle timeout): drop that data first.
            let _ = self.send.reset(FAILED);
            self.conn.close(FAILED, b"failed");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn congestion_names_round_trip() {
        for cc in [
            QuicCongestion::Cubic,
            QuicCongestion::Bbr,
            QuicCongestion::NewReno,
        ] {
            assert_eq!(QuicCongestion::from_name(cc.name()), Some(cc));
        }
        assert_eq!(QuicCongestion::from_name("reno"), None);
        assert_eq!(QuicCongestion::default(), QuicCongestion::Cubic);
    }

    #[test]
    fn the_window_comes_from_the_option_then_the_config_then_the_default() {
        let cfg = Config::default();
        assert_eq!(window_for(None, &cfg), 32 << 20);
        let sized = Config {
            buffer_bytes: Some(75_000_000),
            ..Config::default()
        };
        assert_eq!(window_for(None, &sized), 75_000_000);
        assert_eq!(window_for(Some(1 << 20), &sized), 1 << 20);
        let tiny = Config {
            buffer_bytes: Some(100),
            ..Config::default()
        };
        assert_eq!(window_for(None, &tiny), MIN_WINDOW);
    }

    #[test]
    fn an_mtu_sets_the_starting_payload_and_the_accepted_size() {
        let v4: SocketAddr = "127.0.0.1:1".parse().unwrap();
        let v6: SocketAddr = "[::1]:1".parse().unwrap();
        let p = |mtu| Params {
            cc: QuicCongestion::Cubic,
            window: DEFAULT_WINDOW,
            mtu,
            initial_window: None,
        };
        assert_eq!(p(None).udp_payload(&v4), None);
        assert_eq!(p(Some(1500)).udp_payload(&v4), Some(1472));
        assert_eq!(p(Some(1500)).udp_payload(&v6), Some(1452));
        assert_eq!(p(Some(MIN_MTU)).udp_payload(&v6), Some(1232));
        assert_eq!(p(Some(MAX_MTU)).udp_payload(&v4), Some(9188));
        // Building the configurations checks quinn's ranges.
        for mtu in [None, Some(MIN_MTU), Some(9000), Some(MAX_MTU)] {
            for a in [v4, v6] {
                p(mtu).transport(&a, &Config::default());
                p(mtu).endpoint(&a);
            }
        }
    }

    #[test]
    fn the_initial_window_reaches_the_controller() {
        let cfg = Config {
            io_timeout: Duration::from_secs(5),
            ..Config::default()
        };
        for (cc, iw) in [
            (QuicCongestion::Bbr, Some(4 << 20)),
            (QuicCongestion::Cubic, Some(1 << 20)),
            (QuicCongestion::NewReno, Some(MIN_INITIAL_WINDOW)),
            (QuicCongestion::Bbr, None),
        ] {
            let params = Params {
                cc,
                window: DEFAULT_WINDOW,
                mtu: None,
                initial_window: iw,
            };
            let l = QuicListener::bind("127.0.0.1:0".parse().unwrap(), &params, &cfg).unwrap();
            let addr = l.local_addr();
            let server_cfg = cfg.clone();
            let server = std::thread::spawn(move || {
                let ch = l.accept(&server_cfg).unwrap();
                ch.conn.stats().path.cwnd
            });
            let ch = connect(addr, &params, &cfg).unwrap();
            let client = ch.conn.stats().path.cwnd;
            let server = server.join().unwrap();
            // Nothing sent yet beyond the handshake: the initial window (grown by the
            // acknowledged handshake bytes, for some controllers); quinn's default for bbr
            // is 200 packets of 1200 bytes.
            let w = iw.unwrap_or(240_000);
            for got in [client, server] {
                assert!((w..w + (16 << 10)).contains(&got), "{cc}: {got} for {w}");
            }
        }
    }
}
