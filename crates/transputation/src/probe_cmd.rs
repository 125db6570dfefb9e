//! `transputation probe`: round-trip time, loss rate and bottleneck bandwidth over UDP.
//!
//! The protocol and the measurement are the `transputation-probe` library's (see its docs
//! for the wire format and how the bandwidth is estimated); this command binds the socket,
//! calls it and prints the result as a table or JSON. `--quick` runs the library's quick
//! probe (a few round trips, as a party measures the path before a session) instead of the
//! full one.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use transputation_probe::{self as probe, QuickSettings, Settings};

use crate::report::table;

#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Serve one prober on this address (UDP).
    #[arg(long, conflicts_with = "connect", required_unless_present = "connect")]
    listen: Option<SocketAddr>,
    /// Probe the server at this address.
    #[arg(long)]
    connect: Option<SocketAddr>,
    /// Probe quickly, in a few round trips: 5 pings with a 32-packet train right behind
    /// them, then trains of 256 and 1000 packets, each only if the last train's rate says
    /// it is through within 3 round trips + 50 ms of the start (--pings and --train do not
    /// apply).
    #[arg(long, conflicts_with_all = ["listen", "pings", "train"])]
    quick: bool,
    /// Pings for the round-trip time.
    #[arg(long, default_value_t = 20)]
    pings: u32,
    /// Packets in the train for loss and bandwidth.
    #[arg(long, default_value_t = 1000)]
    train: u32,
    /// Bytes per train packet (UDP payload).
    #[arg(long, default_value_t = 1200)]
    packet_bytes: usize,
    /// Seconds a silent peer is waited for before giving up.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// Print JSON (keys: rtt_ms_min, rtt_ms_median, rtt_ms_max, loss_rate,
    /// bandwidth_mbps, pings_sent, pings_answered, train_sent, train_received,
    /// packet_bytes, loss_evidence {sent, lost}: the packets behind the random-loss
    /// estimate, overflow_packets: left out of it after a queue overflowed,
    /// bandwidth_floor_mbps: a rate the path certainly has (--quick), trains,
    /// duration_ms, rate_kernel_timed: the server timed the rate's train by the kernel's
    /// receive times).
    #[arg(long)]
    json: bool,
}

pub fn run(args: ProbeArgs) -> Result<()> {
    if let Some(addr) = args.listen {
        let sock = UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
        eprintln!("probe server on {}", sock.local_addr()?);
        let never = AtomicBool::new(false);
        return Ok(probe::serve(
            &sock,
            Duration::from_secs(args.timeout.max(1)),
            &never,
        )?);
    }
    let addr = args.connect.expect("clap requires --listen or --connect");
    let patience = Duration::from_secs(args.timeout.max(1));
    let sock = probe::prober_socket(addr).context("binding the prober's socket")?;
    // A silent second is worth saying something about (on stderr, so --json stays clean):
    // the user may have forgotten the server.
    let waiting = || {
        eprintln!(
            "waiting for a probe server at {addr} (giving up after {patience:?}; --timeout \
             changes this)"
        )
    };
    let m = if args.quick {
        let settings = QuickSettings {
            packet_bytes: args.packet_bytes,
            patience,
            ..QuickSettings::default()
        };
        probe::probe_quick(sock, addr, &settings, waiting)?
    } else {
        let settings = Settings {
            pings: args.pings,
            train: args.train,
            packet_bytes: args.packet_bytes,
            patience,
        };
        probe::probe(sock, addr, &settings, waiting)?
    };
    if args.json {
        // Through a JSON value, so the keys come out in the same (sorted) order as ever.
        let v = serde_json::to_value(&m)?;
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    out!("{}", table(&["", ""], &rows(&m)))?;
    Ok(())
}

/// The table's rows.
fn rows(m: &probe::Measurement) -> Vec<Vec<String>> {
    vec![
        vec![
            "round trip (min / median / max)".into(),
            format!(
                "{:.3} / {:.3} / {:.3} ms",
                m.rtt_ms_min, m.rtt_ms_median, m.rtt_ms_max
            ),
        ],
        vec![
            "pings answered".into(),
            format!("{} of {}", m.pings_answered, m.pings_sent),
        ],
        vec![
            "train loss".into(),
            format!(
                "{:.2} % ({} of {} packets of {} bytes arrived)",
                m.loss_rate * 100.0,
                m.train_received,
                m.train_sent,
                m.packet_bytes
            ),
        ],
        vec!["random loss".into(), random_loss(m)],
        vec!["bottleneck bandwidth".into(), bandwidth(m)],
        vec![
            "probe time".into(),
            format!(
                "{:.1} ms ({} train{})",
                m.duration_ms,
                m.trains,
                if m.trains == 1 { "" } else { "s" }
            ),
        ],
    ]
}

/// The dispersion's rate, or why there is none, and the floor by the prober's clock.
fn bandwidth(m: &probe::Measurement) -> String {
    let mut s = m.bandwidth_mbps.map_or(
        "unknown (fewer than 2 packets arrived, or the server could not time them)".into(),
        |b| format!("{b:.1} Mbit/s"),
    );
    if let Some(floor) = m.bandwidth_floor_mbps {
        s += &format!("; at least {floor:.1} Mbit/s by the prober's clock");
    }
    s
}

/// The random-loss evidence, its 95 % bound, and what a queue's overflow took.
fn random_loss(m: &probe::Measurement) -> String {
    let e = m.loss_evidence;
    let mut s = format!(
        "{} of {} packets lost, at most {:.2} % (95 % bound)",
        e.lost,
        e.sent,
        m.loss_upper_bound_95() * 100.0
    );
    if m.overflow_packets > 0 {
        s += &format!(
            "; {} sent after a queue overflowed left out",
            m.overflow_packets
        );
    }
    s
}
