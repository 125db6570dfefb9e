//! `transputation transports` and `transputation transport-bench`.
//!
//! The bench moves bytes as 2PC does: one direction, many large messages (a garbler
//! streaming tables). Wire protocol on top of the chosen transport's framing: the sender's
//! first message is 16 bytes, the total byte count and the message size (u64, big-endian);
//! then the data messages; the receiver answers with a 1-byte message once it has the last
//! byte. The sender's clock runs from the first data byte to that answer, so the time
//! includes the bytes' flight to the receiver, which the last write does not.
//!
//! With `--rtt-ms` and `--bandwidth` (a probe's figures, or the link's), both ends size
//! their socket buffers with [`transputation_transport::sizing`] (paper §4.2) for the
//! volume to send (`--volume`, by default `--bytes`), and `-v` and `--json` show the
//! chosen sizes, the paper's bound, and what the kernel granted.

use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::json;
use transputation_transport::sizing::{self, PathEstimate, Sizing};
use transputation_transport::{
    families, transports, Channel, Config, Framed, SocketBuffers, TransportSpec,
    DEFAULT_MAX_MESSAGE,
};

use crate::report::{table, thousands};

/// The receiver's answer after the last byte.
const ACK: &[u8] = b"\x06";

#[derive(Args, Debug)]
pub struct TransportsArgs {
    /// Print JSON: a list of {name, options, description, available, reason}.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct TransportBenchArgs {
    /// The transport: NAME or NAME:key=value,... (see `transports`), e.g. tcp, tcp-bbr,
    /// mtcp:streams=4.
    #[arg(long, value_parser = parse_spec_here, long_help = transport_help())]
    transport: TransportSpec,
    /// Bytes to move (a whole number, optionally with KiB, MiB or GiB); the sender's
    /// choice, not needed with --listen.
    #[arg(long, value_parser = parse_bytes, required_unless_present = "listen")]
    bytes: Option<u64>,
    /// Bytes per message (default 256 KiB, a garbling batch).
    #[arg(long, value_parser = parse_bytes, default_value = "262144")]
    message_bytes: u64,
    /// Run only the receiving end, listening on this address, for one sender.
    #[arg(long, conflicts_with = "connect")]
    listen: Option<SocketAddr>,
    /// Run only the sending end, connecting to a receiver at this address.
    #[arg(long)]
    connect: Option<SocketAddr>,
    /// Seconds a silent peer is waited for before giving up.
    #[arg(long, default_value_t = 30)]
    timeout: u64,
    /// The path's round-trip time in milliseconds; with --bandwidth, sizes the socket
    /// buffers (paper §4.2).
    #[arg(long, requires = "bandwidth")]
    rtt_ms: Option<f64>,
    /// The path's bottleneck bandwidth, e.g. 100mbit or 1gbit; with --rtt-ms, sizes the
    /// socket buffers.
    #[arg(long, value_parser = parse_rate, requires = "rtt_ms")]
    bandwidth: Option<u64>,
    /// The bytes the computation will send, for sizing (default: --bytes; unknown with
    /// --listen).
    #[arg(long, value_parser = parse_bytes)]
    volume: Option<u64>,
    /// The rate the receiver reads at (R_read), e.g. 2gbit: adds the paper's bound
    /// L = B / (1 - R_arrival/R_read), with R_arrival the bandwidth.
    #[arg(long, value_parser = parse_rate, requires = "bandwidth")]
    read_rate: Option<u64>,
    /// Also show the buffer sizing and the socket buffers the kernel granted.
    #[arg(short, long)]
    verbose: bool,
    /// Print JSON (keys: transport, bytes, seconds, mbit_per_s, messages, message_bytes,
    /// connect_seconds, wire_bytes_sent, wire_bytes_received; and for the buffers:
    /// buffer_bytes, bdp_bytes, paper_bound_bytes, fill_bound_bytes, sizing_limited_by,
    /// rtt_ms, bandwidth_bps, volume_bytes, read_bps, socket_send_buffer_bytes,
    /// socket_recv_buffer_bytes, rmem_max, wmem_max; null where not known).
    #[arg(long)]
    json: bool,
}

pub(crate) fn parse_rate(s: &str) -> Result<u64, String> {
    sizing::parse_rate(s)
        .ok_or_else(|| format!("'{s}' is not a rate (bits per second, e.g. 100mbit, 1gbit)"))
}

/// A transport string, as written (for plans that run elsewhere or later).
pub(crate) fn parse_spec(s: &str) -> Result<TransportSpec, String> {
    s.parse()
        .map_err(|e: transputation_transport::Error| e.to_string())
}

/// A transport string for a transport about to run on this host: parsed, then checked
/// here (a congestion control the kernel lacks is refused now, by name, not at connect).
pub(crate) fn parse_spec_here(s: &str) -> Result<TransportSpec, String> {
    let spec = parse_spec(s)?;
    spec.check_here().map_err(|e| format!("{spec}: {e}"))?;
    Ok(spec)
}

/// The `--transport` help: the syntax and the names and options of this build, from the
/// registry.
pub(crate) fn transport_help() -> String {
    let names: Vec<String> = families()
        .iter()
        .flat_map(|f| {
            let keys = f.option_keys();
            let main = if keys.is_empty() {
                f.name.to_string()
            } else {
                format!("{} ({keys})", f.name)
            };
            std::iter::once(main).chain(
                f.aliases
                    .iter()
                    .map(|(a, p)| format!("{a} (= {}:{p})", f.name)),
            )
        })
        .collect();
    format!(
        "The transport: NAME or NAME:key=value,... This build has {}. `transputation \
         transports` describes each and its options.",
        names.join(", ")
    )
}

fn parse_bytes(s: &str) -> Result<u64, String> {
    let s = s.trim();
    let (digits, unit) = match s.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => s.split_at(i),
        None => (s, ""),
    };
    let mult: u64 = match unit.trim() {
        "" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        u => return Err(format!("unknown unit '{u}' (use KiB, MiB or GiB)")),
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .ok_or_else(|| format!("'{s}' is not a byte count"))
}

pub fn list(args: TransportsArgs) -> Result<()> {
    let all = transports();
    if args.json {
        let v: Vec<_> = all
            .iter()
            .map(|t| {
                json!({
                    "name": t.name,
                    "options": t.options,
                    "description": t.description,
                    "available": t.available.is_ok(),
                    "reason": t.available.as_ref().err().map(|e| e.to_string()),
                })
            })
            .collect();
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    // One block per transport, an option per paragraph: the registry's declarations.
    for (i, t) in all.iter().enumerate() {
        if i > 0 {
            outln!()?;
        }
        match &t.available {
            Ok(()) => outln!("{}: works here", t.name)?,
            Err(e) => {
                outln!("{}: does not work here:", t.name)?;
                print_wrapped("      ", "", &e.to_string())?;
            }
        }
        print_wrapped("    ", "", t.description)?;
        match families().iter().find(|f| f.name == t.name) {
            Some(f) if !f.options.is_empty() => {
                outln!("    options:")?;
                for o in f.options {
                    let default = o
                        .default_text()
                        .map(|d| format!(" Default {d}."))
                        .unwrap_or_default();
                    let text = format!("{}; {}.{default}", o.doc, o.kind.describe());
                    print_wrapped(
                        "      ",
                        &format!("{}={}  ", o.key, o.kind.metavar()),
                        &text,
                    )?;
                }
            }
            Some(_) => {}
            None if !t.options.is_empty() => print_wrapped("    ", "", &t.options)?,
            None => {}
        }
    }
    Ok(())
}

/// Prints `text` wrapped to [`WIDTH`] columns, each line indented by `indent`, the first
/// one starting with `label` and the others aligned under its end.
fn print_wrapped(indent: &str, label: &str, text: &str) -> Result<()> {
    let pad = " ".repeat(label.len());
    for (i, line) in wrap(text, WIDTH - indent.len() - label.len())
        .iter()
        .enumerate()
    {
        let head = if i == 0 { label } else { &pad };
        outln!("{indent}{head}{line}")?;
    }
    Ok(())
}

/// Width of the `transports` listing.
const WIDTH: usize = 92;

/// `text` broken at spaces into lines of at most `width` characters (longer words alone).
fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines = Vec::new();
    let mut line = String::new();
    for word in text.split_whitespace() {
        if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > width {
            lines.push(std::mem::take(&mut line));
        }
        if !line.is_empty() {
            line.push(' ');
        }
        line.push_str(word);
    }
    if !line.is_empty() {
        lines.push(line);
    }
    lines
}

/// What the sender measured.
struct Measured {
    seconds: f64,
    connect_seconds: f64,
    messages: u64,
    wire: transputation_transport::ByteCounts,
    /// The sender's socket buffers, as the kernel reports them.
    buffers: Option<SocketBuffers>,
}

/// The buffer sizing asked for by --rtt-ms and --bandwidth, for `volume` bytes.
fn sizing_of(args: &TransportBenchArgs, volume: Option<u64>) -> Result<Option<Sizing>> {
    let (Some(rtt_ms), Some(bandwidth_bps)) = (args.rtt_ms, args.bandwidth) else {
        return Ok(None);
    };
    path_sizing(
        rtt_ms,
        bandwidth_bps,
        args.read_rate,
        volume.unwrap_or(u64::MAX),
    )
    .map(Some)
}

/// The buffer sizing (paper §4.2) for a path given as `--rtt-ms` and `--bandwidth`, and
/// the bytes to send; shared by `transport-bench` and the 2PC commands.
pub(crate) fn path_sizing(
    rtt_ms: f64,
    bandwidth_bps: u64,
    read_bps: Option<u64>,
    volume: u64,
) -> Result<Sizing> {
    if !(0.0..=1e6).contains(&rtt_ms) {
        bail!("--rtt-ms must be from 0 to 1000000, not {rtt_ms}");
    }
    let path = PathEstimate {
        rtt: Duration::from_secs_f64(rtt_ms / 1e3),
        bandwidth_bps,
        arrival_bps: None,
        read_bps,
    };
    Ok(sizing::size_buffers(&path, volume))
}

/// Table rows on the sizing and the granted buffers, for -v.
fn sizing_rows(sizing: Option<&Sizing>, buffers: Option<SocketBuffers>) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    if let Some(s) = sizing {
        let volume = if s.volume_bytes == u64::MAX {
            "unknown".to_string()
        } else {
            format!("{} bytes", thousands(s.volume_bytes))
        };
        rows.push(vec![
            "path (input)".into(),
            format!(
                "{:.3} ms round trip, {:.1} Mbit/s, volume {volume}",
                s.rtt_ms,
                s.bandwidth_bps as f64 / 1e6
            ),
        ]);
        rows.push(vec![
            "bandwidth-delay product".into(),
            format!("{} bytes", thousands(s.bdp_bytes)),
        ]);
        rows.push(vec![
            "buffer per direction".into(),
            format!(
                "{} bytes (set by: {}; {} x BDP = {})",
                thousands(s.buffer_bytes),
                s.limited_by.as_str(),
                sizing::HEADROOM,
                thousands(s.wanted_bytes)
            ),
        ]);
        let bound = |b: Option<u64>, none: &str| {
            b.map_or(none.to_string(), |b| format!("{} bytes", thousands(b)))
        };
        let (paper, fill) = match s.read_bps {
            None => ("needs --read-rate".into(), "needs --read-rate".into()),
            Some(_) => (
                bound(
                    s.paper_bound_bytes,
                    "none (R_read <= R_arrival: the series diverges)",
                ),
                bound(s.fill_bound_bytes, "never (R_read >= R_arrival)"),
            ),
        };
        rows.push(vec!["paper's bound L = B/(1-Ra/Rr)".into(), paper]);
        rows.push(vec!["buffer overflows after".into(), fill]);
    } else {
        rows.push(vec![
            "buffer per direction".into(),
            "the transport's default (give --rtt-ms and --bandwidth to size it)".into(),
        ]);
    }
    if let Some(b) = buffers {
        rows.push(vec![
            "sender's socket buffers (kernel)".into(),
            format!(
                "send {} / receive {} bytes (Linux reports twice what was set)",
                thousands(b.send as u64),
                thousands(b.recv as u64)
            ),
        ]);
    }
    if let Some((rmem, wmem)) = sizing::kernel_buffer_caps() {
        let asked = sizing.map(|s| s.buffer_bytes);
        let note = match asked {
            Some(a) if a > rmem.min(wmem) => match buffers {
                Some(b) if (b.recv as u64) < 2 * a || (b.send as u64) < 2 * a => {
                    " (the buffer asked for was capped: raise them to get it)"
                }
                _ => " (exceeded: forced with CAP_NET_ADMIN)",
            },
            _ => "",
        };
        rows.push(vec![
            "system caps rmem_max / wmem_max".into(),
            format!("{} / {} bytes{note}", thousands(rmem), thousands(wmem)),
        ]);
    }
    rows
}

pub fn bench(args: TransportBenchArgs) -> Result<()> {
    if args.message_bytes == 0 {
        bail!("--message-bytes must be at least 1");
    }
    let sizing = sizing_of(&args, args.volume.or(args.bytes))?;
    let cfg = Config {
        io_timeout: Duration::from_secs(args.timeout.max(1)),
        buffer_bytes: sizing.map(|s| usize::try_from(s.buffer_bytes).unwrap_or(usize::MAX)),
        ..Config::default()
    };
    let spec = &args.transport;
    let max_message = args.message_bytes.max(16);
    if let Some(addr) = args.listen {
        if args.verbose {
            eprint!("{}", table(&["", ""], &sizing_rows(sizing.as_ref(), None)));
        }
        let listener = spec
            .listen(addr, &cfg)
            .with_context(|| format!("setting up a {spec} server on {addr}"))?;
        eprintln!("listening on {} ({spec})", listener.local_addr());
        let ch = listener.accept().context("accepting the sender")?;
        let (bytes, seconds) = receive(ch, max_message)?;
        eprintln!(
            "received {} bytes in {seconds:.3} s (first to last byte)",
            thousands(bytes)
        );
        return Ok(());
    }
    let total = args.bytes.unwrap_or(0);
    let m = match args.connect {
        Some(addr) => send(spec, addr, &cfg, total, args.message_bytes)?,
        None => {
            let listener = spec
                .listen("127.0.0.1:0".parse().expect("an address"), &cfg)
                .with_context(|| format!("setting up a {spec} server on 127.0.0.1"))?;
            let addr = listener.local_addr();
            let receiver = thread::spawn(move || -> Result<(u64, f64)> {
                let ch = listener.accept().context("accepting the sender")?;
                receive(ch, max_message)
            });
            let sent = send(spec, addr, &cfg, total, args.message_bytes);
            let received = receiver
                .join()
                .map_err(|_| anyhow::anyhow!("the receiving thread panicked"))?;
            let m = sent?;
            let (bytes, _) = received.context("the receiving end")?;
            if bytes != total {
                bail!("the receiver got {bytes} bytes of {total}");
            }
            m
        }
    };
    let mbit = if m.seconds > 0.0 {
        total as f64 * 8.0 / m.seconds / 1e6
    } else {
        0.0
    };
    if args.json {
        let caps = sizing::kernel_buffer_caps();
        let v = json!({
            "transport": spec.to_string(),
            "bytes": total,
            "seconds": m.seconds,
            "mbit_per_s": mbit,
            "messages": m.messages,
            "message_bytes": args.message_bytes,
            "connect_seconds": m.connect_seconds,
            "wire_bytes_sent": m.wire.sent,
            "wire_bytes_received": m.wire.received,
            "buffer_bytes": sizing.map(|s| s.buffer_bytes),
            "bdp_bytes": sizing.map(|s| s.bdp_bytes),
            "paper_bound_bytes": sizing.and_then(|s| s.paper_bound_bytes),
            "fill_bound_bytes": sizing.and_then(|s| s.fill_bound_bytes),
            "sizing_limited_by": sizing.map(|s| s.limited_by.as_str()),
            "rtt_ms": sizing.map(|s| s.rtt_ms),
            "bandwidth_bps": sizing.map(|s| s.bandwidth_bps),
            "volume_bytes": sizing.map(|s| s.volume_bytes),
            "read_bps": sizing.and_then(|s| s.read_bps),
            "socket_send_buffer_bytes": m.buffers.map(|b| b.send),
            "socket_recv_buffer_bytes": m.buffers.map(|b| b.recv),
            "rmem_max": caps.map(|c| c.0),
            "wmem_max": caps.map(|c| c.1),
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
        return Ok(());
    }
    let mut rows = vec![
        vec!["transport".into(), spec.to_string()],
        vec![
            "moved".into(),
            format!(
                "{} bytes in {} messages of {}",
                thousands(total),
                thousands(m.messages),
                thousands(args.message_bytes)
            ),
        ],
        vec![
            "time".into(),
            format!(
                "{:.4} s (until the receiver's ack; connecting took {:.4} s more)",
                m.seconds, m.connect_seconds
            ),
        ],
        vec!["throughput".into(), format!("{mbit:.1} Mbit/s")],
        vec![
            "wire bytes sent / received".into(),
            format!(
                "{} / {}",
                thousands(m.wire.sent),
                thousands(m.wire.received)
            ),
        ],
    ];
    if args.verbose {
        rows.extend(sizing_rows(sizing.as_ref(), m.buffers));
    }
    out!("{}", table(&["", ""], &rows))?;
    Ok(())
}

/// The sending end: connects, sends `bytes` in messages, waits for the ack.
fn send(
    spec: &TransportSpec,
    addr: SocketAddr,
    cfg: &Config,
    bytes: u64,
    message_bytes: u64,
) -> Result<Measured> {
    let start = Instant::now();
    let ch = spec
        .connect(addr, cfg)
        .with_context(|| format!("connecting with {spec} to {addr}"))?;
    let connect_seconds = start.elapsed().as_secs_f64();
    let buffers = ch.socket_buffers();
    let mut ch = Framed::with_max_message(ch, message_bytes.max(16));
    let mut header = bytes.to_be_bytes().to_vec();
    header.extend_from_slice(&message_bytes.to_be_bytes());
    ch.send_message(&header)?;
    ch.flush()?;
    let payload: Vec<u8> = (0..message_bytes.min(bytes).max(1))
        .map(|i| (i * 131 + 7) as u8)
        .collect();
    let start = Instant::now();
    let (mut left, mut messages) = (bytes, 0u64);
    while left > 0 {
        let n = left.min(message_bytes) as usize;
        ch.send_message(&payload[..n])?;
        left -= n as u64;
        messages += 1;
    }
    let ack = ch
        .recv_message()
        .context("waiting for the receiver's ack")?;
    let seconds = start.elapsed().as_secs_f64();
    if ack != ACK {
        bail!("the receiver answered {ack:?} instead of an ack");
    }
    ch.close()?;
    Ok(Measured {
        seconds,
        connect_seconds,
        messages,
        wire: ch.stats(),
        buffers,
    })
}

/// The receiving end: reads the announced bytes, acks; returns the bytes and the time from
/// the first data byte to the last.
fn receive(ch: Box<dyn Channel>, max_message: u64) -> Result<(u64, f64)> {
    let mut ch = Framed::with_max_message(ch, 16);
    let header = ch.recv_message().context("reading the sender's header")?;
    if header.len() != 16 {
        bail!(
            "the sender's header has {} bytes instead of 16",
            header.len()
        );
    }
    let total = u64::from_be_bytes(header[..8].try_into().expect("8 bytes"));
    let message_bytes = u64::from_be_bytes(header[8..].try_into().expect("8 bytes"));
    let limit = max_message.max(DEFAULT_MAX_MESSAGE);
    if message_bytes == 0 || message_bytes > limit {
        bail!(
            "the sender announced messages of {message_bytes} bytes; this receiver takes 1 to \
             {limit} (raise its --message-bytes)"
        );
    }
    let mut ch = Framed::with_max_message(ch.into_inner(), message_bytes);
    let mut buf = Vec::new();
    let mut got = 0u64;
    let mut start = None;
    while got < total {
        ch.recv_message_into(&mut buf)
            .with_context(|| format!("receiving after {got} of {total} bytes"))?;
        start.get_or_insert_with(Instant::now);
        got += buf.len() as u64;
    }
    let seconds = start.map_or(0.0, |s| s.elapsed().as_secs_f64());
    if got != total {
        bail!("received {got} bytes, {total} were announced");
    }
    ch.send_message(ACK)?;
    ch.close()?;
    Ok((got, seconds))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wraps_at_spaces_within_the_width() {
        let text = "TCP congestion control 'bbr' is not available in this kernel \
                    (available: reno cubic) and a-very-long-word-that-cannot-be-broken-at-all";
        let lines = wrap(text, 24);
        assert_eq!(lines.join(" "), text);
        for l in &lines {
            assert!(l.len() <= 24 || !l.contains(' '), "{l:?}");
        }
        assert_eq!(lines[0], "TCP congestion control");
        assert!(wrap("", 10).is_empty());
    }

    #[test]
    fn parses_byte_counts() {
        assert_eq!(parse_bytes("123"), Ok(123));
        assert_eq!(parse_bytes("32MiB"), Ok(32 << 20));
        assert_eq!(parse_bytes("1 GiB"), Ok(1 << 30));
        assert!(parse_bytes("3MB")
            .unwrap_err()
            .contains("unknown unit 'MB'"));
        assert!(parse_bytes("x").is_err());
    }
}
