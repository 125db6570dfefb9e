//! `transputation transports` and `transputation transport-bench`.
//!
//! The bench moves bytes as 2PC does: one direction, many large messages (a garbler
//! streaming tables). Wire protocol on top of the chosen transport's framing: the sender's
//! first message is 16 bytes, the total byte count and the message size (u64, big-endian);
//! then the data messages; the receiver answers with a 1-byte message once it has the last
//! byte. The sender's clock runs from the first data byte to that answer, so the time
//! includes the bytes' flight to the receiver, which the last write does not.

use std::net::SocketAddr;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use serde_json::json;
use transputation_transport::{
    transports, Channel, Config, Framed, TransportSpec, DEFAULT_MAX_MESSAGE,
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
    #[arg(long, value_parser = parse_spec)]
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
    /// Print JSON (keys: transport, bytes, seconds, mbit_per_s, messages, message_bytes,
    /// connect_seconds, wire_bytes_sent, wire_bytes_received).
    #[arg(long)]
    json: bool,
}

fn parse_spec(s: &str) -> Result<TransportSpec, String> {
    s.parse()
        .map_err(|e: transputation_transport::Error| e.to_string())
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
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|t| {
            vec![
                t.name.to_string(),
                match &t.available {
                    Ok(()) => "yes".into(),
                    Err(e) => format!("no: {e}"),
                },
                t.options.to_string(),
                t.description.to_string(),
            ]
        })
        .collect();
    print!(
        "{}",
        table(&["transport", "works here", "options", "what"], &rows)
    );
    Ok(())
}

/// What the sender measured.
struct Measured {
    seconds: f64,
    connect_seconds: f64,
    messages: u64,
    wire: transputation_transport::ByteCounts,
}

pub fn bench(args: TransportBenchArgs) -> Result<()> {
    if args.message_bytes == 0 {
        bail!("--message-bytes must be at least 1");
    }
    let cfg = Config {
        io_timeout: Duration::from_secs(args.timeout.max(1)),
        ..Config::default()
    };
    let spec = &args.transport;
    let max_message = args.message_bytes.max(16);
    if let Some(addr) = args.listen {
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
        });
        println!("{}", serde_json::to_string_pretty(&v)?);
        return Ok(());
    }
    let rows = vec![
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
    print!("{}", table(&["", ""], &rows));
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
