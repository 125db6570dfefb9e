//! `transputation probe`: round-trip time, loss rate and bottleneck bandwidth over UDP.
//!
//! The protocol and the measurement are the `transputation-probe` library's (see its docs
//! for the wire format and how the bandwidth is estimated); this command binds the socket,
//! calls it and prints the result as a table or JSON.

use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use transputation_probe::{self as probe, Settings};

use crate::report::table;

#[derive(Args, Debug)]
pub struct ProbeArgs {
    /// Serve one prober on this address (UDP).
    #[arg(long, conflicts_with = "connect", required_unless_present = "connect")]
    listen: Option<SocketAddr>,
    /// Probe the server at this address.
    #[arg(long)]
    connect: Option<SocketAddr>,
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
    /// packet_bytes).
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
    let settings = Settings {
        pings: args.pings,
        train: args.train,
        packet_bytes: args.packet_bytes,
        patience: Duration::from_secs(args.timeout.max(1)),
    };
    let sock = probe::prober_socket(addr).context("binding the prober's socket")?;
    // A silent second is worth saying something about (on stderr, so --json stays clean):
    // the user may have forgotten the server.
    let m = probe::probe(sock, addr, &settings, || {
        eprintln!(
            "waiting for a probe server at {addr} (giving up after {:?}; --timeout changes \
             this)",
            settings.patience
        )
    })?;
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
        vec![
            "bottleneck bandwidth".into(),
            m.bandwidth_mbps
                .map_or("unknown (fewer than 2 packets arrived)".into(), |b| {
                    format!("{b:.1} Mbit/s")
                }),
        ],
    ]
}
