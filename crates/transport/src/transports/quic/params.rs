//! What a `quic` endpoint is built from: the congestion controller, the flow-control
//! window and the path MTU, from the transport's options and the configuration.

use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use quinn::congestion::{BbrConfig, ControllerFactory, CubicConfig, NewRenoConfig};

use std::time::Duration;

use quinn::{EndpointConfig, IdleTimeout, MtuDiscoveryConfig, TransportConfig, VarInt};

use crate::config::Config;

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
pub(crate) const DEFAULT_MAX_UDP_PAYLOAD: u16 = 1472;
/// quinn's congestion controllers, as `quic:cc=` names them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) enum QuicCongestion {
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
    pub(crate) fn name(self) -> &'static str {
        match self {
            QuicCongestion::Cubic => "cubic",
            QuicCongestion::Bbr => "bbr",
            QuicCongestion::NewReno => "newreno",
        }
    }

    /// Parses a name as [`QuicCongestion::name`] gives it.
    pub(crate) fn from_name(name: &str) -> Option<Self> {
        [Self::Cubic, Self::Bbr, Self::NewReno]
            .into_iter()
            .find(|c| c.name() == name)
    }

    /// quinn's controller, starting from `initial_window` bytes if given.
    pub(crate) fn factory(self, initial_window: Option<u64>) -> Arc<dyn ControllerFactory + Send + Sync> {
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
    /// The most lanes a session opens beside its stream ([`crate::Channel::open_lanes`]):
    /// the peer may open that many streams more.
    pub(crate) lanes: u32,
}

impl Params {
    /// The UDP payload size to start from, towards or from `addr`, if an MTU was given.
    pub(crate) fn udp_payload(&self, addr: &SocketAddr) -> Option<u16> {
        self.mtu.map(|m| {
            let overhead = if addr.is_ipv4() { 28 } else { 48 };
            u16::try_from(m.saturating_sub(overhead)).unwrap_or(u16::MAX)
        })
    }

    pub(crate) fn transport(&self, addr: &SocketAddr, cfg: &Config) -> TransportConfig {
        let mut t = TransportConfig::default();
        let window = VarInt::from_u64(self.window).unwrap_or(VarInt::MAX);
        t.stream_receive_window(window)
            .receive_window(window)
            .send_window(self.window)
            .max_concurrent_bidi_streams(VarInt::from_u32(1 + self.lanes))
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

    pub(crate) fn endpoint(&self, addr: &SocketAddr) -> EndpointConfig {
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

