//! A quinn endpoint on its own tokio runtime, driven from blocking code; the TLS set-up of
//! both ends (a self-signed server, a client that does not check it); quinn's errors as
//! this crate's.

use std::fmt;
use std::future::Future;
use std::io;
use std::net::{SocketAddr, UdpSocket};
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use quinn::crypto::rustls::{QuicClientConfig, QuicServerConfig};
use quinn::rustls;
use quinn::{
    ConnectionError, Endpoint, ReadError, WriteError,
};


use crate::config::Config;
use crate::{Error, Result};

use super::params::Params;

/// The ALPN protocol both ends must offer.
pub(crate) const ALPN: &[u8] = b"transputation/1";
/// The name the client asks for (the certificate is not checked against it; see above).
pub(crate) const SERVER_NAME: &str = "transputation";
/// Kernel UDP socket buffers asked for, per direction (forced if allowed, else up to the
/// system's cap): room for bursts while the I/O thread is busy, not for the window.
const SOCKET_BUFFER: usize = 8 << 20;
/// Longest wait, when the last user of an endpoint goes, for its connections' close to
/// reach their peers.
const LINGER: Duration = Duration::from_secs(1);

/// The runtime and endpoint behind a listener or a client, shared by its channels; the last
/// one to go waits (briefly) for connection closes to be sent, then stops the runtime.
pub(crate) struct Driver {
    pub(crate) rt: Option<tokio::runtime::Runtime>,
    pub(crate) handle: tokio::runtime::Handle,
    pub(crate) endpoint: Endpoint,
    /// Wait up to [`LINGER`] on drop for connection closes to be sent; off when no
    /// connection was ever made (a failed connect has nothing to deliver).
    pub(crate) linger: bool,
}

impl fmt::Debug for Driver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Driver").finish_non_exhaustive()
    }
}

impl Driver {
    /// A runtime with one I/O thread and an endpoint on a UDP socket bound to `addr`.
    pub(crate) fn new(
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
    pub(crate) fn block_on<F: Future>(&self, fut: F) -> F::Output {
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
pub(crate) struct Unpark(std::thread::Thread);

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
pub(crate) fn block_on<F: Future>(handle: &tokio::runtime::Handle, fut: F) -> F::Output {
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
pub(crate) async fn before<F: Future>(
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
pub(crate) fn configure(sock: &UdpSocket) {
    use rustix::net::sockopt;
    if sockopt::set_socket_recv_buffer_size_force(sock, SOCKET_BUFFER).is_err() {
        let _ = sockopt::set_socket_recv_buffer_size(sock, SOCKET_BUFFER);
    }
    if sockopt::set_socket_send_buffer_size_force(sock, SOCKET_BUFFER).is_err() {
        let _ = sockopt::set_socket_send_buffer_size(sock, SOCKET_BUFFER);
    }
}

/// Opens a bidirectional stream of `conn` and writes its 8-byte `hello` (a QUIC stream
/// becomes visible to the peer only with its first byte), each step within `t`.
pub(crate) async fn open_stream(
    conn: &quinn::Connection,
    hello: &[u8; 8],
    during: &'static str,
    t: Duration,
) -> Result<(quinn::SendStream, quinn::RecvStream)> {
    let (mut send, recv) = tokio::time::timeout(t, conn.open_bi())
        .await
        .map_err(|_| Error::Timeout { during, after: t })?
        .map_err(|e| lost(e, during, t))?;
    tokio::time::timeout(t, send.write_all(hello))
        .await
        .map_err(|_| Error::Timeout { during, after: t })?
        .map_err(|e| write_err(e, during, t))?;
    Ok((send, recv))
}

/// Accepts the peer's next bidirectional stream of `conn` and reads its 8-byte hello, each
/// step within `t`.
pub(crate) async fn accept_stream(
    conn: &quinn::Connection,
    during: &'static str,
    t: Duration,
) -> Result<(quinn::SendStream, quinn::RecvStream, [u8; 8])> {
    let (send, mut recv) = tokio::time::timeout(t, conn.accept_bi())
        .await
        .map_err(|_| Error::Timeout { during, after: t })?
        .map_err(|e| lost(e, during, t))?;
    let mut hello = [0u8; 8];
    tokio::time::timeout(t, recv.read_exact(&mut hello))
        .await
        .map_err(|_| Error::Timeout { during, after: t })?
        .map_err(|e| match e {
            quinn::ReadExactError::FinishedEarly(_) => Error::Closed { during },
            quinn::ReadExactError::ReadError(e) => read_err(e, during, t),
        })?;
    Ok((send, recv, hello))
}

/// Maps a lost connection.
pub(crate) fn lost(e: ConnectionError, during: &'static str, after: Duration) -> Error {
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

pub(crate) fn write_err(e: WriteError, during: &'static str, after: Duration) -> Error {
    match e {
        WriteError::ConnectionLost(e) => lost(e, during, after),
        WriteError::Stopped(_) | WriteError::ClosedStream | WriteError::ZeroRttRejected => {
            Error::Closed { during }
        }
    }
}

pub(crate) fn read_err(e: ReadError, during: &'static str, after: Duration) -> Error {
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
pub(crate) struct Unauthenticated(Arc<rustls::crypto::CryptoProvider>);

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

pub(crate) fn tls_err(during: &'static str) -> impl Fn(rustls::Error) -> Error {
    move |e| Error::Io {
        during,
        source: io::Error::other(e),
    }
}

pub(crate) fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

pub(crate) fn client_config(params: &Params, peer: &SocketAddr, cfg: &Config) -> Result<quinn::ClientConfig> {
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
pub(crate) fn server_config(params: &Params, local: &SocketAddr, cfg: &Config) -> Result<quinn::ServerConfig> {
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

