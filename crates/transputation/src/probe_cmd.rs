//! `transputation probe`: round-trip time, loss rate and bottleneck bandwidth over UDP.
//!
//! Wire protocol (UDP, every packet starts with the same 24 bytes): `b"TPPR"`, a kind byte
//! (1 ping, 2 pong, 3 train packet, 4 report request, 5 report), three zero bytes, the
//! client's session number (u64), a sequence number (u32) and a count (u32), big-endian.
//! The server echoes a ping as a pong, records the train packets of the current session
//! with their arrival times, and answers a report request with the number of train packets
//! it got (u32), a span of arrival times (u64 ns) and the IP bytes (UDP payload plus IP and
//! UDP headers) that arrived in it after its first packet (u64). Bandwidth is those bytes
//! over that span (train dispersion): the rate of the narrowest link, if the sender is
//! faster than it.
//!
//! The span runs from the arrival at index ⌊n/4⌋ to the last of the n arrivals: the first
//! quarter is left out because a rate limiter with a token bucket (a shaper such as tbf,
//! or a policer) lets its bucket's worth through at the sender's speed before it holds the
//! rate, and that burst would inflate the estimate. The train (1000 packets of 1200 bytes
//! by default, sent as fast as the host can) overruns such a bucket; where the bottleneck's
//! queue is shorter than the train, the packets it drops count as loss.

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::json;

use crate::report::table;

const MAGIC: &[u8; 4] = b"TPPR";
const PING: u8 = 1;
const PONG: u8 = 2;
const TRAIN: u8 = 3;
const ASK: u8 = 4;
const REPORT: u8 = 5;
const HEADER: usize = 24;
/// Train packets whose arrival a server records (16 MiB of records).
const MAX_ARRIVALS: usize = 1 << 20;

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

fn packet(kind: u8, session: u64, seq: u32, count: u32, len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len.max(HEADER)];
    p[..4].copy_from_slice(MAGIC);
    p[4] = kind;
    p[8..16].copy_from_slice(&session.to_be_bytes());
    p[16..20].copy_from_slice(&seq.to_be_bytes());
    p[20..24].copy_from_slice(&count.to_be_bytes());
    p
}

/// Kind, session, sequence, count of a probe packet.
fn parse(p: &[u8]) -> Option<(u8, u64, u32, u32)> {
    if p.len() < HEADER || &p[..4] != MAGIC {
        return None;
    }
    Some((
        p[4],
        u64::from_be_bytes(p[8..16].try_into().ok()?),
        u32::from_be_bytes(p[16..20].try_into().ok()?),
        u32::from_be_bytes(p[20..24].try_into().ok()?),
    ))
}

fn big_buffers(s: &UdpSocket) {
    use rustix::net::sockopt;
    if sockopt::set_socket_recv_buffer_size_force(s, 16 << 20).is_err() {
        let _ = sockopt::set_socket_recv_buffer_size(s, 16 << 20);
    }
    if sockopt::set_socket_send_buffer_size_force(s, 16 << 20).is_err() {
        let _ = sockopt::set_socket_send_buffer_size(s, 16 << 20);
    }
}

pub fn run(args: ProbeArgs) -> Result<()> {
    if let Some(addr) = args.listen {
        return serve(addr, Duration::from_secs(args.timeout.max(1)));
    }
    let addr = args.connect.expect("clap requires --listen or --connect");
    probe(addr, &args)
}

/// Serves one prober: exits 2 s after the last packet once a report was sent, or with an
/// error if nothing arrives for the timeout.
fn serve(addr: SocketAddr, timeout: Duration) -> Result<()> {
    let sock = UdpSocket::bind(addr).with_context(|| format!("binding {addr}"))?;
    big_buffers(&sock);
    eprintln!("probe server on {}", sock.local_addr()?);
    let mut buf = vec![0u8; 65536];
    let ip_overhead = if addr.is_ipv4() { 28 } else { 48 };
    let (mut session, mut got) = (0u64, 0u32);
    // Arrival time and IP bytes of each train packet (at most MAX_ARRIVALS).
    let mut arrivals: Vec<(Instant, u64)> = Vec::new();
    let mut reported = false;
    loop {
        let wait = if reported {
            Duration::from_secs(2)
        } else {
            timeout
        };
        sock.set_read_timeout(Some(wait))?;
        let (n, from) = match sock.recv_from(&mut buf) {
            Ok(r) => r,
            Err(e)
                if matches!(
                    e.kind(),
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                ) =>
            {
                if reported {
                    return Ok(());
                }
                bail!("no prober for {timeout:?}");
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => continue,
            Err(e) => return Err(e).context("receiving"),
        };
        let now = Instant::now();
        let Some((kind, s, seq, count)) = parse(&buf[..n]) else {
            continue;
        };
        if s != session && kind != REPORT && kind != PONG {
            (session, got) = (s, 0);
            arrivals.clear();
        }
        match kind {
            PING => {
                buf[4] = PONG;
                let _ = sock.send_to(&buf[..n], from);
            }
            TRAIN => {
                got = got.saturating_add(1);
                if arrivals.len() < MAX_ARRIVALS {
                    arrivals.push((now, (n + ip_overhead) as u64));
                }
            }
            ASK => {
                let (span, bytes) = steady_rate(&arrivals);
                let mut p = packet(REPORT, s, seq, count, HEADER + 20);
                p[24..28].copy_from_slice(&got.to_be_bytes());
                p[28..36].copy_from_slice(&span.to_be_bytes());
                p[36..44].copy_from_slice(&bytes.to_be_bytes());
                let _ = sock.send_to(&p, from);
                reported = true;
            }
            _ => {}
        }
    }
}

/// The span (ns) from the arrival at index ⌊n/4⌋ to the last, and the bytes that arrived
/// in it after its first packet; (0, 0) for fewer than two arrivals.
fn steady_rate(arrivals: &[(Instant, u64)]) -> (u64, u64) {
    let n = arrivals.len();
    if n < 2 {
        return (0, 0);
    }
    let from = (n / 4).min(n - 2);
    let span = arrivals[n - 1].0.duration_since(arrivals[from].0);
    let bytes = arrivals[from + 1..].iter().map(|a| a.1).sum();
    (u64::try_from(span.as_nanos()).unwrap_or(u64::MAX), bytes)
}

fn probe(addr: SocketAddr, args: &ProbeArgs) -> Result<()> {
    let bind: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0".parse()?
    } else {
        "[::]:0".parse()?
    };
    let sock = UdpSocket::bind(bind)?;
    big_buffers(&sock);
    sock.connect(addr)?;
    let session = std::collections::hash_map::RandomState::new();
    let session = {
        use std::hash::{BuildHasher, Hasher};
        let mut h = session.build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    };
    let mut buf = vec![0u8; 65536];
    // Waits up to `wait` for a packet of `kind` and `seq` of this session.
    let await_packet = |kind: u8, seq: u32, wait: Duration, buf: &mut Vec<u8>| -> Result<bool> {
        let until = Instant::now() + wait;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(false);
            }
            sock.set_read_timeout(Some(left))?;
            match sock.recv(buf) {
                Ok(n) => {
                    if let Some((k, s, q, _)) = parse(&buf[..n]) {
                        if k == kind && s == session && q == seq {
                            return Ok(true);
                        }
                    }
                }
                Err(e) => match e.kind() {
                    std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut => {
                        return Ok(false)
                    }
                    // Nothing listens yet (ICMP port unreachable): wait a little.
                    std::io::ErrorKind::ConnectionRefused => {
                        std::thread::sleep(Duration::from_millis(20));
                        return Ok(false);
                    }
                    std::io::ErrorKind::Interrupted => {}
                    _ => return Err(e).context("receiving"),
                },
            }
        }
    };
    // Wait for the server (it may start after us), then measure.
    let patience = Duration::from_secs(args.timeout.max(1));
    let start = Instant::now();
    let mut told = false;
    loop {
        let _ = sock.send(&packet(PING, session, u32::MAX, 0, 64));
        if await_packet(PONG, u32::MAX, Duration::from_millis(200), &mut buf)? {
            break;
        }
        if start.elapsed() >= patience {
            bail!(
                "no answer from a probe server at {addr} for {patience:?} (is \
                 `transputation probe --listen {addr}` running there?)"
            );
        }
        // A silent second is worth saying something about (on stderr, so --json stays
        // clean): the user may have forgotten the server.
        if !told && start.elapsed() >= Duration::from_secs(1) {
            eprintln!(
                "waiting for a probe server at {addr} (giving up after {patience:?}; \
                 --timeout changes this)"
            );
            told = true;
        }
    }
    let ping_wait = Duration::from_secs(1);
    let mut rtts = Vec::new();
    for i in 0..args.pings {
        let start = Instant::now();
        let _ = sock.send(&packet(PING, session, i, 0, 64));
        if await_packet(PONG, i, ping_wait, &mut buf)? {
            rtts.push(start.elapsed().as_secs_f64() * 1e3);
        }
    }
    if rtts.is_empty() {
        bail!(
            "no answer from a probe server at {addr} to {} pings",
            args.pings
        );
    }
    rtts.sort_by(f64::total_cmp);
    let median = if rtts.len() % 2 == 1 {
        rtts[rtts.len() / 2]
    } else {
        (rtts[rtts.len() / 2 - 1] + rtts[rtts.len() / 2]) / 2.0
    };
    let len = args.packet_bytes.clamp(HEADER, 65507);
    for i in 0..args.train {
        let p = packet(TRAIN, session, i, args.train, len);
        let _ = sock.send(&p);
    }
    std::thread::sleep(Duration::from_millis(200));
    let mut report = None;
    for i in 0..5u32 {
        let _ = sock.send(&packet(ASK, session, i, 0, HEADER));
        if await_packet(REPORT, i, Duration::from_millis(500), &mut buf)? {
            report = Some((
                u32::from_be_bytes(buf[24..28].try_into()?),
                u64::from_be_bytes(buf[28..36].try_into()?),
                u64::from_be_bytes(buf[36..44].try_into()?),
            ));
            break;
        }
    }
    let Some((received, span_ns, bytes)) = report else {
        bail!("the probe server at {addr} did not report on the train");
    };
    let loss_rate = if args.train == 0 {
        0.0
    } else {
        1.0 - f64::from(received.min(args.train)) / f64::from(args.train)
    };
    let bandwidth = (span_ns > 0).then(|| bytes as f64 * 8.0 / (span_ns as f64 / 1e9) / 1e6);
    if args.json {
        let v = json!({
            "rtt_ms_min": rtts[0],
            "rtt_ms_median": median,
            "rtt_ms_max": rtts[rtts.len() - 1],
            "loss_rate": loss_rate,
            "bandwidth_mbps": bandwidth,
            "pings_sent": args.pings,
            "pings_answered": rtts.len(),
            "train_sent": args.train,
            "train_received": received,
            "packet_bytes": len,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    let rows = vec![
        vec![
            "round trip (min / median / max)".into(),
            format!(
                "{:.3} / {median:.3} / {:.3} ms",
                rtts[0],
                rtts[rtts.len() - 1]
            ),
        ],
        vec![
            "pings answered".into(),
            format!("{} of {}", rtts.len(), args.pings),
        ],
        vec![
            "train loss".into(),
            format!(
                "{:.2} % ({received} of {} packets of {len} bytes arrived)",
                loss_rate * 100.0,
                args.train
            ),
        ],
        vec![
            "bottleneck bandwidth".into(),
            bandwidth.map_or("unknown (fewer than 2 packets arrived)".into(), |b| {
                format!("{b:.1} Mbit/s")
            }),
        ],
    ];
    out!("{}", table(&["", ""], &rows))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_leaves_out_the_first_quarter() {
        let t0 = Instant::now();
        let at = |us: u64| t0 + Duration::from_micros(us);
        // A burst of 4 packets at once, then 1 packet every 100 µs: 12 packets, the
        // span starts at index 3 (still in the burst) and ends 800 µs later.
        let mut arrivals: Vec<(Instant, u64)> = (0..4).map(|_| (at(0), 1000)).collect();
        arrivals.extend((1..=8).map(|i| (at(i * 100), 1000)));
        assert_eq!(steady_rate(&arrivals), (800_000, 8000));
        // Two packets: first to last.
        assert_eq!(steady_rate(&arrivals[..2]), (0, 1000));
        assert_eq!(steady_rate(&arrivals[4..6]), (100_000, 1000));
        assert_eq!(steady_rate(&arrivals[..1]), (0, 0));
        assert_eq!(steady_rate(&[]), (0, 0));
    }
}
