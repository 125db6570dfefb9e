//! `blast`: a reliable, ordered, checked byte stream over UDP that starts at a given rate
//! and repairs loss by selective negative acknowledgements, for the garbled tables' long
//! one-way stream. The protocol (datagrams, repair, rate control) is the
//! `transputation-blast` crate's, without I/O; this module runs it over a socket
//! ([`driver`]) and declares it to the registry.
//!
//! Set-up as `udp`'s: the listener's socket takes HELLOs and answers each new session from
//! a socket of its own, which the client then talks to alone. Each connection has one
//! thread that owns its socket: it sends what the protocol has to send (paced; runs of
//! equal datagrams as one UDP GSO send, else `sendmmsg`), sleeps in `poll` until a
//! datagram comes, the protocol's next deadline, or the application wakes it (an eventfd)
//! with new bytes, and hands arrived bytes to the application's reads. The client's
//! socket asks the kernel for arrival times (`SO_TIMESTAMPNS`): the server's train
//! arrives at the bottleneck's pace, one packet every 24 µs at 500 Mbit/s, faster than a
//! thread woken from `poll` reads reliably, and the kernel's stamps time it whatever the
//! thread's delay.
//!
//! With `TRANSPUTATION_BLAST_STATS` set in its environment, a process prints each
//! connection's record to standard error as its channel is dropped: packets sent new,
//! repaired and as parity, probe timeouts, packets rebuilt, rate cuts, and the rate
//! controller's epochs (delivery rate, loss, smallest round trip, pace). The testbed keeps
//! a successful party's standard error with its run.
//!
//! Options: `rate` (the rate to start at, e.g. `500mbit`; without it the server sends a
//! train of 48 packets behind its WELCOME, the client times it and both start at that
//! rate, or slow start if it could not be timed), `mtu` (the
//! path MTU: datagrams carry up to MTU − 28 bytes over IPv4, 32 of them blast's header),
//! `fec` (parity packets: `auto`, `off` or a percentage, see `transputation_blast::fec`),
//! `train` (`off`: no train; a client asks its server for none). The
//! receive window and the send buffer are [`Config::buffer_bytes`] (64 MiB by default).
//!
//! Either side's channel offers [`Channel::sender_tuning`]: a [`crate::SenderHint`]'s
//! `start_rate` starts its sender at that rate if it has not measured the path itself yet
//! (`--transport auto` connects with `train=off` while its probe runs and then passes on
//! the probe's rate), or, while its train is still being timed, at the larger of the two
//! rates (a short train reads a fast path low, never high). The hint's controller and
//! initial window must be unset (blast has neither); its send buffer is ignored (blast's
//! is its own, [`Config::buffer_bytes`]).
//!
//! Byte counters count the stream's bytes this side wrote and read (a repair is not
//! counted again, headers are not counted).

mod driver;

use std::net::SocketAddr;
use std::sync::Arc;

use transputation_model::{Constants, Control, TransportModel, Window};

use crate::config::Config;
use crate::family::{Accept, Delivery, Family, OptionDecl, OptionKind, Shown, Transport, Value};
use crate::{Channel, Result};
use transputation_blast::fec::Fec;

/// The `blast` transport's declaration.
pub(crate) static FAMILY: Family = Family {
    name: "blast",
    aliases: &[],
    summary: "reliable stream over UDP for the garbled tables: starts at a given or timed \
              rate, paced, repairs loss by selective negative acknowledgements and parity",
    options: &[
        OptionDecl {
            key: "mtu",
            kind: OptionKind::Integer {
                min: MIN_MTU as u64,
                max: MAX_MTU as u64,
                unit: "bytes",
            },
            default: Some(Value::Int(DEFAULT_MTU as u64)),
            shown: Shown::WhenChanged,
            doc: "the path MTU: IP packet bytes per datagram (1500: 1440 stream bytes over IPv4)",
        },
        OptionDecl {
            key: "rate",
            kind: OptionKind::Rate {
                min: 100_000,
                max: 100_000_000_000,
            },
            default: None,
            shown: Shown::WhenChanged,
            doc: "the rate to start at, e.g. 500mbit (without it: the rate the handshake times)",
        },
        OptionDecl {
            key: "fec",
            kind: OptionKind::WordOrInteger {
                words: &["auto", "off"],
                min: 1,
                max: 50,
                unit: "percent",
            },
            default: Some(Value::Text(std::borrow::Cow::Borrowed("auto"))),
            shown: Shown::WhenChanged,
            doc: "parity packets that rebuild a lost packet without a round trip (auto: in the \
                  stream's last round trip only, as many as save time at the loss the receiver \
                  reports)",
        },
        OptionDecl {
            key: "train",
            kind: OptionKind::Choice(&["on", "off"]),
            default: Some(Value::Text(std::borrow::Cow::Borrowed("on"))),
            shown: Shown::WhenChanged,
            doc: "on: without a rate, the server sends a train of packets behind its answer for \
                  the client to time the path's rate; off: no train (a client asks its server \
                  for none), slow start until a rate is given through sender tuning",
        },
    ],
    delivery: Delivery::RepairsDatagrams,
    conformance: &["blast", "blast:rate=1gbit,fec=10", "blast:mtu=9000,rate=2gbit,fec=off"],
    available: || Ok(()),
    auto: true,
    build: |v| {
        // The declaration has checked the value.
        let fec = match (v.text("fec"), v.int("fec")) {
            (Some("off"), _) => Fec::Off,
            (_, Some(p)) => Fec::Percent(u8::try_from(p).unwrap_or(50)),
            _ => Fec::Auto,
        };
        Ok(Arc::new(Blast {
            mtu: v.u32_of("mtu"),
            rate: v.int("rate").filter(|r| *r > 0),
            fec,
            train: v.text("train") != Some("off"),
        }))
    },
    model: |v| TransportModel {
        key: "blast".into(),
        // HELLO and WELCOME.
        connect_round_trips: 1.0,
        // IPv4, UDP and blast's DATA header.
        segment: f64::from(v.u32_of("mtu")) - 60.0,
        // It starts at the path's rate (given, or timed in the handshake): no slow start,
        // as if its first window held any message.
        initial_window: FIRST_WINDOW,
        streams: 1,
        stripe: 1.0,
        // Paced at the bottleneck's rate, which random loss does not lower (the crate's
        // `rate` module), as BBR's.
        control: Control::Bbr,
        window: Window::Unbounded,
        reassembly_limit: None,
        pacing_gain: None,
        first_flight_stall: None,
        long_stream_gaps: None,
        // Fitted (`select --calibrate`) to its 144 runs over the grid of docs/results/auto
        // (3 circuits × 2 schemes × 24 links, one run each; 2026-11-28, 512a90a): a fixed
        // cost of 9 ms, a fifth of a round trip of repair at the end of a lossy message, and
        // on this 2-vCPU machine about 440 Mbit/s of stream at most while both parties
        // garble and evaluate beside the emulator, 95 % of a clean link below that.
        defaults: Constants {
            fixed: 0.0088,
            tail: 0.22,
            host_cap: 55e6,
            steady_share: 0.947,
            // rms of ln(predicted / measured) on those runs, held out by condition.
            error: 0.068,
            ..Constants::TEXTBOOK
        },
    },
    tuned: |_| Vec::new(),
    // The rate a channel starts at is tuned through `SenderHint::start_rate`, which
    // needs no option: a listener of any `rate` accepts a client of any.
    sender_options: &[],
    // A train sent while `auto`'s probe times its own would disturb it: the evaluator's
    // early connection asks for none and both sides are told the probe's rate.
    while_probing: "train=off",
    started: None,
    hedged_connect: false,
};

/// Packets in the rate-timing train.
const TRAIN_PACKETS: u16 = 48;
/// The model's first window: larger than any session's message (the rate, not a window,
/// sets the first flight).
const FIRST_WINDOW: f64 = 1e12;
/// The default path MTU (Ethernet).
const DEFAULT_MTU: u32 = 1500;
/// The smallest MTU accepted.
const MIN_MTU: u32 = 576;
/// The largest.
const MAX_MTU: u32 = 65535;

/// `blast` with its options.
#[derive(Debug)]
struct Blast {
    mtu: u32,
    /// Bits per second to start at.
    rate: Option<u64>,
    fec: Fec,
    /// Whether a server without a rate sends its train (and a client asks for it).
    train: bool,
}

impl Blast {
    fn params(&self, addr: &SocketAddr, cfg: &Config) -> transputation_blast::Params {
        let ip = if addr.is_ipv4() { 28 } else { 48 };
        let buffer = cfg.buffer_bytes.map_or(64 << 20, |b| b as u64).max(1 << 20);
        transputation_blast::Params {
            max_datagram: (self.mtu as usize - ip).min(u16::MAX as usize),
            ip_overhead: ip,
            receive_window: buffer,
            send_buffer: buffer,
            rate: self.rate.map(|r| r as f64 / 8.0),
            max_rate: 12.5e9,
            idle_timeout: cfg.io_timeout,
            // A rate given needs no train; without one, the client times the server's.
            train: if self.rate.is_some() || !self.train {
                0
            } else {
                TRAIN_PACKETS
            },
            fec: self.fec,
            retry: cfg
                .retry_delay
                .clamp(std::time::Duration::from_millis(10), std::time::Duration::from_secs(1)),
        }
    }
}

impl Transport for Blast {
    fn listen(&self, addr: SocketAddr, _cfg: &Config) -> Result<Box<dyn Accept>> {
        let listener = driver::Listener::bind(addr)?;
        Ok(Box::new(BlastServer {
            listener,
            mtu: self.mtu,
            rate: self.rate,
            fec: self.fec,
            train: self.train,
        }))
    }

    fn connect(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Channel>> {
        Ok(Box::new(driver::connect(addr, self.params(&addr, cfg), cfg)?))
    }
}

/// A `blast` server socket with the options its connections get.
#[derive(Debug)]
struct BlastServer {
    listener: driver::Listener,
    mtu: u32,
    rate: Option<u64>,
    fec: Fec,
    train: bool,
}

impl Accept for BlastServer {
    fn local_addr(&self) -> SocketAddr {
        self.listener.local_addr
    }

    fn accept(&self, cfg: &Config) -> Result<Box<dyn Channel>> {
        let blast = Blast {
            mtu: self.mtu,
            rate: self.rate,
            fec: self.fec,
            train: self.train,
        };
        let params = blast.params(&self.listener.local_addr, cfg);
        Ok(Box::new(self.listener.accept(params, cfg)?))
    }
}
