//! Helpers of the transport tests: addresses, a quick configuration, a connected pair,
//! test patterns, and which transports this build has.

#![allow(dead_code, reason = "each test file uses a part")]

use std::net::SocketAddr;
use std::thread;
use std::time::Duration;

use transputation_transport::{family, Channel, Config, TransportSpec};

pub fn any_port() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

pub fn quick() -> Config {
    Config {
        io_timeout: Duration::from_millis(400),
        connect_attempts: 3,
        retry_delay: Duration::from_millis(20),
        ..Config::default()
    }
}

/// Runs `server` on an accepted channel in a thread and `client` on a connected one.
pub fn pair<S, C, T>(spec: &str, cfg: &Config, server: S, client: C) -> (T, T)
where
    S: FnOnce(Box<dyn Channel>) -> T + Send + 'static,
    C: FnOnce(Box<dyn Channel>) -> T,
    T: Send + 'static,
{
    let spec: TransportSpec = spec.parse().unwrap();
    let listener = spec.listen(any_port(), cfg).unwrap();
    let addr = listener.local_addr();
    let h = thread::spawn(move || server(listener.accept().unwrap()));
    let c = client(spec.connect(addr, cfg).unwrap());
    (h.join().unwrap(), c)
}

pub fn pattern(len: usize, seed: u64) -> Vec<u8> {
    (0..len)
        .map(|i| {
            (i as u64)
                .wrapping_mul(31)
                .wrapping_add(seed * 7 + (i as u64 >> 8)) as u8
        })
        .collect()
}

/// A UDP port where nothing listens.
pub fn closed_udp_port() -> SocketAddr {
    std::net::UdpSocket::bind(any_port())
        .unwrap()
        .local_addr()
        .unwrap()
}

/// Whether this build has the transport of `spec` (a test of one transport skips itself,
/// saying so, in a build without it).
pub fn built(spec: &str) -> bool {
    let name = spec.split(':').next().unwrap_or(spec);
    let has = family(name).is_some();
    if !has {
        eprintln!("skipped: this build has no '{name}' transport");
    }
    has
}
