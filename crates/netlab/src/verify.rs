//! Measuring what a topology delivers and comparing it with its [`LinkSpec`](crate::LinkSpec).
//!
//! [`measure`] runs `transputation probe` (whose path the caller gives: this crate does not
//! depend on the binary) as a server in B and a prober in A: 20 pings for the round trip,
//! then a train of UDP packets A→B for loss and rate (train dispersion; see the probe's
//! docs). [`check`] compares: the median round trip within 5 % + 0.3 ms of the link's round
//! trip (including the two pings' serialization at the link rate), the train's loss within
//! binomial bounds at probability 1e-6, and the rate within 10 %. The train is kept to what
//! the bottleneck queue holds, so that queue overflow does not count as random loss; the
//! rate is still measured, because a train that fits in the queue still leaves it at the
//! link rate.

use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde::Serialize;

use crate::{Error, Side, Topology};

/// Bytes of each train packet on the wire: the probe's 1200-byte payload plus IP and UDP.
const TRAIN_PACKET_IP_BYTES: u64 = 1228;
/// Bytes of a ping on the wire (64-byte payload plus IP and UDP).
const PING_IP_BYTES: u64 = 92;
/// The UDP port of the probe server in B.
const PORT: u16 = 7101;

/// What `probe` measured.
#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    /// Smallest round trip, ms.
    pub rtt_ms_min: f64,
    /// Median round trip, ms.
    pub rtt_ms_median: f64,
    /// Train packets sent A→B.
    pub train_sent: u64,
    /// Train packets that arrived.
    pub train_received: u64,
    /// Rate of the train's arrivals, Mbit/s.
    pub bandwidth_mbps: Option<f64>,
}

/// One verified property.
#[derive(Debug, Clone, Serialize)]
pub struct Verdict {
    /// `rtt`, `loss` or `rate`.
    pub what: &'static str,
    /// The expected value, in `unit`.
    pub expected: f64,
    /// The accepted range.
    pub range: (f64, f64),
    /// The measured value.
    pub measured: f64,
    /// ms, %, Mbit/s.
    pub unit: &'static str,
    /// Whether `measured` is in `range`.
    pub pass: bool,
}

/// The train length [`check`] uses: what the A→B queue holds (so no packet is dropped by
/// overflow), at most `max`, at least 16.
pub fn train_len(topo: &Topology, max: u64) -> u64 {
    let d = topo.link().a_to_b;
    d.queue_bytes()
        .map_or(max, |q| q / TRAIN_PACKET_IP_BYTES)
        .clamp(16, max.max(16))
}

/// Runs the probe across the topology (server in B, prober in A); gives up after
/// `timeout` (both processes are killed then).
pub fn measure(
    topo: &Topology,
    probe_exe: &Path,
    pings: u32,
    train: u64,
    timeout: Duration,
) -> Result<Measurement, Error> {
    let secs = timeout.as_secs().max(1).to_string();
    let listen = format!("{}:{PORT}", topo.addr(Side::B));
    let spawn_err = |source| Error::Io {
        context: format!("starting {}", probe_exe.display()),
        source,
    };
    // Both ends at nice -10 (where allowed), like the relay: the server's receive times are
    // the measurement, and other work on a small machine would stretch them.
    let mut server = topo
        .command(Side::B, "nice")
        .args(["-n", "-10"])
        .arg(probe_exe)
        .args(["probe", "--listen", &listen, "--timeout", &secs])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(spawn_err)?;
    let client = topo
        .command(Side::A, "nice")
        .args(["-n", "-10"])
        .arg(probe_exe)
        .args(["probe", "--connect", &listen, "--json", "--timeout", &secs])
        .args(["--pings", &pings.to_string(), "--train", &train.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let client = match client {
        Ok(c) => c,
        Err(e) => {
            let _ = server.kill();
            let _ = server.wait();
            return Err(spawn_err(e));
        }
    };
    let out = wait_output(client, timeout + Duration::from_secs(5));
    let _ = server.kill();
    let _ = server.wait();
    let out = out?;
    if !out.status.success() {
        return Err(Error::Measure(format!(
            "the probe failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    parse(&out.stdout)
}

/// Waits for a child's output, killing it after `limit`.
fn wait_output(
    mut child: std::process::Child,
    limit: Duration,
) -> Result<std::process::Output, Error> {
    use std::io::Read;
    let io = |source| Error::Io {
        context: "waiting for the probe".into(),
        source,
    };
    // The outputs are small (a JSON object, a few lines): read them on threads so that a
    // full pipe cannot block the child while we poll it.
    let mut so = child.stdout.take();
    let mut se = child.stderr.take();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(s) = so.as_mut() {
            let _ = s.take(1 << 20).read_to_end(&mut v);
        }
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        if let Some(s) = se.as_mut() {
            let _ = s.take(1 << 20).read_to_end(&mut v);
        }
        v
    });
    let start = Instant::now();
    let status = loop {
        if let Some(s) = child.try_wait().map_err(io)? {
            break s;
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return Err(Error::Measure(format!(
                "the probe did not finish within {limit:?}"
            )));
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ok(std::process::Output {
        status,
        stdout: t_out.join().unwrap_or_default(),
        stderr: t_err.join().unwrap_or_default(),
    })
}

fn parse(json: &[u8]) -> Result<Measurement, Error> {
    let v: serde_json::Value = serde_json::from_slice(json)
        .map_err(|e| Error::Measure(format!("the probe printed no JSON object: {e}")))?;
    let num = |k: &str| {
        v.get(k)
            .and_then(serde_json::Value::as_f64)
            .ok_or_else(|| Error::Measure(format!("the probe's JSON lacks the number {k:?}")))
    };
    Ok(Measurement {
        rtt_ms_min: num("rtt_ms_min")?,
        rtt_ms_median: num("rtt_ms_median")?,
        train_sent: num("train_sent")? as u64,
        train_received: num("train_received")? as u64,
        bandwidth_mbps: v.get("bandwidth_mbps").and_then(serde_json::Value::as_f64),
    })
}

/// Compares a measurement with the topology's link.
pub fn check(topo: &Topology, m: &Measurement) -> Vec<Verdict> {
    let link = topo.link();
    let mut v = Vec::new();
    let ping_ser =
        link.a_to_b.serialization(PING_IP_BYTES) + link.b_to_a.serialization(PING_IP_BYTES);
    let rtt = (link.rtt() + ping_ser).as_secs_f64() * 1e3;
    let tol = rtt * 0.05 + 0.3;
    v.push(Verdict {
        what: "rtt",
        expected: rtt,
        range: (rtt - tol, rtt + tol),
        measured: m.rtt_ms_median,
        unit: "ms",
        pass: (m.rtt_ms_median - rtt).abs() <= tol,
    });
    if m.train_sent > 0 {
        let p = link.a_to_b.loss;
        let (lo, hi) = binomial_bounds(m.train_sent, p, 1e-6);
        let lost = m.train_sent.saturating_sub(m.train_received);
        let pct = |k: u64| k as f64 / m.train_sent as f64 * 100.0;
        v.push(Verdict {
            what: "loss",
            expected: p * 100.0,
            range: (pct(lo), pct(hi)),
            measured: pct(lost),
            unit: "%",
            pass: (lo..=hi).contains(&lost),
        });
    }
    if let Some(rate) = link.a_to_b.rate_bps {
        let want = rate as f64 / 1e6;
        let got = m.bandwidth_mbps.unwrap_or(0.0);
        v.push(Verdict {
            what: "rate",
            expected: want,
            range: (want * 0.9, want * 1.1),
            measured: got,
            unit: "Mbit/s",
            pass: (got - want).abs() <= want * 0.1,
        });
    }
    v
}

/// The smallest `lo` and largest `hi` with P(X < lo) ≤ α/2 and P(X > hi) ≤ α/2 for
/// X ~ Binomial(n, p): a count of losses outside `lo..=hi` has probability at most α.
pub fn binomial_bounds(n: u64, p: f64, alpha: f64) -> (u64, u64) {
    if p <= 0.0 {
        return (0, 0);
    }
    // log P(X = k) by the recurrence P(k+1) = P(k) (n-k)/(k+1) p/(1-p), in log space.
    let mut log_pk = n as f64 * (1.0 - p).ln();
    let ratio = (p / (1.0 - p)).ln();
    let mut pmf = Vec::with_capacity(n as usize + 1);
    for k in 0..=n {
        pmf.push(log_pk.exp());
        log_pk += ((n - k) as f64).ln() - ((k + 1) as f64).ln() + ratio;
    }
    let half = alpha / 2.0;
    let (mut lo, mut below) = (0u64, 0.0);
    while lo <= n && below + pmf[lo as usize] <= half {
        below += pmf[lo as usize];
        lo += 1;
    }
    let (mut hi, mut above) = (n, 0.0);
    while hi > 0 && above + pmf[hi as usize] <= half {
        above += pmf[hi as usize];
        hi -= 1;
    }
    (lo, hi)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_bounds_match_known_tails() {
        // 1 % of 2000: mean 20, sd 4.45.
        let (lo, hi) = binomial_bounds(2000, 0.01, 1e-6);
        assert!((2..=5).contains(&lo), "{lo}");
        assert!((42..=48).contains(&hi), "{hi}");
        assert_eq!(binomial_bounds(2000, 0.0, 1e-6), (0, 0));
        // Wider alpha, narrower range.
        let (lo2, hi2) = binomial_bounds(2000, 0.01, 0.05);
        assert!(lo2 > lo && hi2 < hi && (11..=13).contains(&lo2) && (28..=30).contains(&hi2));
    }

    #[test]
    fn probe_output_is_parsed_strictly() {
        let ok = br#"{"rtt_ms_min":1.0,"rtt_ms_median":1.5,"train_sent":10,"train_received":9,"bandwidth_mbps":null}"#;
        let m = parse(ok).unwrap();
        assert_eq!(
            (m.train_sent, m.train_received, m.bandwidth_mbps),
            (10, 9, None)
        );
        assert!(parse(b"").is_err());
        assert!(parse(br#"{"rtt_ms_min":1.0}"#).is_err());
        assert!(parse(b"[1,2]").is_err());
    }
}
