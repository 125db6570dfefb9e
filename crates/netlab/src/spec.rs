//! Link parameters: what one direction of an emulated link does to packets, the named network
//! conditions of the two papers, and the parsers for custom ones (`--rtt 100ms --loss 0.1%
//! --rate 500mbit --jitter 1ms --queue 20ms`).
//!
//! Units follow tc: a rate is in bits per second (`bit`, `kbit`, `mbit`, `gbit`, decimal
//! prefixes; `bps` is refused because tc reads it as bytes per second), a duration in `s`, `ms`
//! or `us`, a loss as a percentage (`0.1%`) or a fraction (`0.001`), a queue as a time at the
//! link rate (`20ms`) or a size in bytes (`64kb`, `1mib`, `100000`).

use std::fmt;
use std::time::Duration;

use serde::Serialize;

/// A bad link parameter: which one, the value given, and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("bad {what} {value:?}: {why}")]
pub struct SpecError {
    /// The parameter (`rtt`, `rate`, `loss`, ...).
    pub what: &'static str,
    /// The text that was given.
    pub value: String,
    /// What is wrong with it.
    pub why: String,
}

fn bad(what: &'static str, value: &str, why: impl Into<String>) -> SpecError {
    SpecError {
        what,
        value: value.to_string(),
        why: why.into(),
    }
}

/// The bottleneck queue of one direction: a time's worth of bytes at the link rate, or bytes.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Queue {
    /// As many bytes as the link sends in this time.
    Time(#[serde(serialize_with = "ser_us")] Duration),
    /// This many bytes.
    Bytes(u64),
}

/// The smallest default queue: 32 full-sized packets, so that slow links (3G) still hold a
/// burst, as their real buffers do.
pub const MIN_DEFAULT_QUEUE_BYTES: u64 = 32 * 1500;

/// The default queue: 20 ms at the link rate (at least [`MIN_DEFAULT_QUEUE_BYTES`]).
pub const DEFAULT_QUEUE: Queue = Queue::Time(Duration::from_millis(20));

/// What one direction of the link does to each packet: random loss, then a drop-tail queue
/// drained at `rate`, then `delay` (plus a uniform jitter in ±`jitter`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Direction {
    /// The one-way propagation delay.
    #[serde(serialize_with = "ser_us", rename = "delay_us")]
    pub delay: Duration,
    /// Each packet's delay varies uniformly in `delay ± jitter` (never below zero).
    #[serde(serialize_with = "ser_us", rename = "jitter_us")]
    pub jitter: Duration,
    /// The probability that a packet is lost, in `[0, 1)`.
    pub loss: f64,
    /// The bottleneck rate in bits per second; `None` for no limit.
    pub rate_bps: Option<u64>,
    /// The bottleneck queue.
    pub queue: Queue,
}

fn ser_us<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
}

impl Direction {
    /// A direction with this delay and nothing else.
    pub fn delay(delay: Duration) -> Self {
        Direction {
            delay,
            jitter: Duration::ZERO,
            loss: 0.0,
            rate_bps: None,
            queue: DEFAULT_QUEUE,
        }
    }

    /// The queue in bytes; `None` when the rate is unlimited (nothing ever queues).
    pub fn queue_bytes(&self) -> Option<u64> {
        let rate = self.rate_bps?;
        Some(match self.queue {
            Queue::Bytes(b) => b,
            Queue::Time(t) => {
                let b = (rate as f64 / 8.0 * t.as_secs_f64()) as u64;
                if self.queue == DEFAULT_QUEUE {
                    b.max(MIN_DEFAULT_QUEUE_BYTES)
                } else {
                    b
                }
            }
        })
    }

    /// Bytes in flight in this direction when the link is full: rate × delay (zero without a
    /// rate limit).
    pub fn bdp_bytes(&self) -> u64 {
        self.rate_bps
            .map_or(0, |r| (r as f64 / 8.0 * self.delay.as_secs_f64()) as u64)
    }

    /// Time to serialize `bytes` at the link rate.
    pub fn serialization(&self, bytes: u64) -> Duration {
        self.rate_bps.map_or(Duration::ZERO, |r| {
            Duration::from_secs_f64(bytes as f64 * 8.0 / r as f64)
        })
    }

    fn check(&self) -> Result<(), SpecError> {
        if !(0.0..1.0).contains(&self.loss) || self.loss.is_nan() {
            return Err(bad("loss", &self.loss.to_string(), "must be in [0, 1)"));
        }
        if self.rate_bps == Some(0) {
            return Err(bad("rate", "0", "must be positive"));
        }
        if self.queue_bytes() == Some(0) {
            return Err(bad("queue", &format!("{:?}", self.queue), "holds no byte"));
        }
        Ok(())
    }
}

/// Both directions of a link, with a name for reports and a seed for the random choices.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct LinkSpec {
    /// A named condition (`eu-us`) or `custom`.
    pub name: String,
    /// From side A to side B.
    pub a_to_b: Direction,
    /// From side B to side A.
    pub b_to_a: Direction,
    /// Seeds the loss and jitter draws (each direction derives its own stream).
    pub seed: u64,
}

/// A named network condition from the papers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition {
    /// Its name on the command line.
    pub name: &'static str,
    /// Round-trip time in microseconds (split evenly over the two directions).
    pub rtt_us: u64,
    /// Rate in bits per second, both directions.
    pub rate_bps: u64,
    /// Where it comes from.
    pub about: &'static str,
}

/// The named conditions: the paper's deployments and the choose-wisely paper's settings.
pub const CONDITIONS: &[Condition] = &[
    Condition {
        name: "lan",
        rtt_us: 500,
        rate_bps: 10_000_000_000,
        about: "paper: LAN, 0.5 ms, 10 Gbit/s",
    },
    Condition {
        name: "eu-us",
        rtt_us: 110_000,
        rate_bps: 1_000_000_000,
        about: "paper: EU-US, 110 ms, 1 Gbit/s",
    },
    Condition {
        name: "eu-aus",
        rtt_us: 300_000,
        rate_bps: 1_000_000_000,
        about: "paper: EU-AUS, 300 ms, 1 Gbit/s",
    },
    Condition {
        name: "cw-lan",
        rtt_us: 300,
        rate_bps: 100_000_000,
        about: "choose-wisely: LAN, 0.3 ms, 100 Mbit/s",
    },
    Condition {
        name: "cw-wifi",
        rtt_us: 5_000,
        rate_bps: 16_000_000,
        about: "choose-wisely: Wi-Fi, 5 ms, 16 Mbit/s",
    },
    Condition {
        name: "cw-wan",
        rtt_us: 40_000,
        rate_bps: 16_000_000,
        about: "choose-wisely: WAN, 40 ms, 16 Mbit/s",
    },
    Condition {
        name: "cw-3g",
        rtt_us: 300_000,
        rate_bps: 370_000,
        about: "choose-wisely: 3G, 300 ms, 370 kbit/s",
    },
];

impl LinkSpec {
    /// A symmetric link: half the round trip each way, the same loss, rate, jitter and queue.
    pub fn symmetric(
        name: &str,
        rtt: Duration,
        rate_bps: Option<u64>,
        loss: f64,
        jitter: Duration,
        queue: Queue,
    ) -> Result<Self, SpecError> {
        let d = Direction {
            delay: rtt / 2,
            jitter,
            loss,
            rate_bps,
            queue,
        };
        let spec = LinkSpec {
            name: name.to_string(),
            a_to_b: d,
            b_to_a: d,
            seed: 0,
        };
        spec.check()?;
        Ok(spec)
    }

    /// The named condition `name` (see [`CONDITIONS`]).
    pub fn condition(name: &str) -> Result<Self, SpecError> {
        let c = CONDITIONS.iter().find(|c| c.name == name).ok_or_else(|| {
            let known: Vec<_> = CONDITIONS.iter().map(|c| c.name).collect();
            bad(
                "condition",
                name,
                format!("unknown; known: {}", known.join(", ")),
            )
        })?;
        Self::symmetric(
            c.name,
            Duration::from_micros(c.rtt_us),
            Some(c.rate_bps),
            0.0,
            Duration::ZERO,
            DEFAULT_QUEUE,
        )
    }

    /// A custom symmetric link from command-line texts (`None` for a parameter not given:
    /// no delay, no limit, no loss, no jitter, the default queue).
    pub fn parse_custom(
        rtt: Option<&str>,
        rate: Option<&str>,
        loss: Option<&str>,
        jitter: Option<&str>,
        queue: Option<&str>,
    ) -> Result<Self, SpecError> {
        let rtt = rtt
            .map(|v| parse_duration("rtt", v))
            .transpose()?
            .unwrap_or_default();
        let rate = rate.map(parse_rate).transpose()?;
        let loss = loss.map(parse_loss).transpose()?.unwrap_or(0.0);
        let jitter = jitter
            .map(|v| parse_duration("jitter", v))
            .transpose()?
            .unwrap_or_default();
        let queue = queue.map(parse_queue).transpose()?.unwrap_or(DEFAULT_QUEUE);
        Self::symmetric("custom", rtt, rate, loss, jitter, queue)
    }

    /// The round-trip time the link adds (both delays).
    pub fn rtt(&self) -> Duration {
        self.a_to_b.delay + self.b_to_a.delay
    }

    /// The larger bandwidth-delay product of a round trip, in bytes, over both directions:
    /// what a sender must keep in flight to fill the link.
    pub fn bdp_bytes(&self) -> u64 {
        let rtt = self.rtt().as_secs_f64();
        [self.a_to_b, self.b_to_a]
            .iter()
            .filter_map(|d| d.rate_bps)
            .map(|r| (r as f64 / 8.0 * rtt) as u64)
            .max()
            .unwrap_or(0)
    }

    /// The same link with every rate at most `max_bps`; the second value says whether a rate
    /// was lowered.
    pub fn capped(&self, max_bps: u64) -> (Self, bool) {
        let mut s = self.clone();
        let mut capped = false;
        for d in [&mut s.a_to_b, &mut s.b_to_a] {
            let r = d.rate_bps.unwrap_or(u64::MAX);
            if r > max_bps {
                d.rate_bps = Some(max_bps);
                capped = true;
            }
        }
        (s, capped)
    }

    /// Checks both directions.
    pub fn check(&self) -> Result<(), SpecError> {
        self.a_to_b.check()?;
        self.b_to_a.check()
    }
}

impl fmt::Display for Direction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "delay {}", fmt_duration(self.delay))?;
        if !self.jitter.is_zero() {
            write!(f, " ± {}", fmt_duration(self.jitter))?;
        }
        match self.rate_bps {
            Some(r) => write!(f, ", {}", fmt_rate(r))?,
            None => write!(f, ", no rate limit")?,
        }
        if self.loss > 0.0 {
            write!(f, ", loss {}%", self.loss * 100.0)?;
        }
        if let Some(q) = self.queue_bytes() {
            write!(f, ", queue {q} B")?;
        }
        Ok(())
    }
}

/// `1.5 ms`, `110 ms`, `250 µs`.
pub fn fmt_duration(d: Duration) -> String {
    let us = d.as_micros();
    if us >= 1000 {
        format!("{} ms", us as f64 / 1000.0)
    } else {
        format!("{us} µs")
    }
}

/// `1 Gbit/s`, `370 kbit/s`.
pub fn fmt_rate(bps: u64) -> String {
    let b = bps as f64;
    if bps >= 1_000_000_000 {
        format!("{} Gbit/s", b / 1e9)
    } else if bps >= 1_000_000 {
        format!("{} Mbit/s", b / 1e6)
    } else if bps >= 1_000 {
        format!("{} kbit/s", b / 1e3)
    } else {
        format!("{bps} bit/s")
    }
}

/// Splits `12.5ms` into (12.5, "ms"); the number must be finite and not negative.
fn number_unit<'a>(what: &'static str, v: &'a str) -> Result<(f64, &'a str), SpecError> {
    let t = v.trim();
    let end = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(end);
    if num.is_empty() {
        return Err(bad(what, v, "expected a number first"));
    }
    let x: f64 = num
        .parse()
        .map_err(|_| bad(what, v, format!("{num:?} is not a number")))?;
    if !x.is_finite() {
        return Err(bad(what, v, "not a finite number"));
    }
    Ok((x, unit.trim()))
}

/// A duration: `100ms`, `0.5ms`, `1s`, `250us` (a bare number is refused: say the unit).
pub fn parse_duration(what: &'static str, v: &str) -> Result<Duration, SpecError> {
    let (x, unit) = number_unit(what, v)?;
    let secs = match unit.to_ascii_lowercase().as_str() {
        "s" | "sec" => x,
        "ms" | "msec" => x / 1e3,
        "us" | "usec" | "µs" => x / 1e6,
        "" => return Err(bad(what, v, "needs a unit: s, ms or us")),
        u => return Err(bad(what, v, format!("unknown unit {u:?}; use s, ms or us"))),
    };
    if secs > 3600.0 {
        return Err(bad(what, v, "more than an hour"));
    }
    Ok(Duration::from_secs_f64(secs))
}

/// A rate in bits per second: `500mbit`, `1gbit`, `370kbit`, `16Mbit/s`, `1000000bit`.
pub fn parse_rate(v: &str) -> Result<u64, SpecError> {
    let (x, unit) = number_unit("rate", v)?;
    let unit = unit.to_ascii_lowercase();
    let unit = unit.strip_suffix("/s").unwrap_or(&unit);
    let mult =
        match unit {
            "bit" => 1.0,
            "kbit" => 1e3,
            "mbit" => 1e6,
            "gbit" => 1e9,
            "" => return Err(bad("rate", v, "needs a unit: bit, kbit, mbit or gbit")),
            u if u.ends_with("bps") => return Err(bad(
                "rate",
                v,
                "`bps` is ambiguous (tc reads it as bytes per second); write kbit, mbit or gbit",
            )),
            u => {
                return Err(bad(
                    "rate",
                    v,
                    format!("unknown unit {u:?}; use bit, kbit, mbit or gbit"),
                ))
            }
        };
    let bps = x * mult;
    if bps < 8000.0 {
        return Err(bad("rate", v, "below 8 kbit/s"));
    }
    if bps > 1e12 {
        return Err(bad("rate", v, "above 1 Tbit/s"));
    }
    Ok(bps.round() as u64)
}

/// A loss rate: `0.1%` or the fraction `0.001`; must be below 100 %.
pub fn parse_loss(v: &str) -> Result<f64, SpecError> {
    let (x, unit) = number_unit("loss", v)?;
    let p = match unit {
        "%" => x / 100.0,
        "" => x,
        u => {
            return Err(bad(
                "loss",
                v,
                format!("unknown unit {u:?}; use % or a fraction"),
            ))
        }
    };
    if p >= 1.0 {
        return Err(bad("loss", v, "must be below 100 %"));
    }
    Ok(p)
}

/// A queue: a time at the link rate (`20ms`) or a size (`100000`, `64kb`, `1mb`, `1mib`).
pub fn parse_queue(v: &str) -> Result<Queue, SpecError> {
    let (x, unit) = number_unit("queue", v)?;
    let mult = match unit.to_ascii_lowercase().as_str() {
        "s" | "ms" | "us" => return parse_duration("queue", v).map(Queue::Time),
        "" | "b" => 1.0,
        "kb" => 1e3,
        "mb" => 1e6,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        u => {
            return Err(bad(
                "queue",
                v,
                format!("unknown unit {u:?}; use a time (ms) or bytes (b, kb, mb, kib, mib)"),
            ))
        }
    };
    let bytes = x * mult;
    if !(1500.0..=(1u64 << 32) as f64).contains(&bytes) {
        return Err(bad("queue", v, "must hold 1500 bytes to 4 GiB"));
    }
    Ok(Queue::Bytes(bytes as u64))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_units() {
        assert_eq!(
            parse_duration("rtt", "100ms").unwrap(),
            Duration::from_millis(100)
        );
        assert_eq!(
            parse_duration("rtt", "0.5ms").unwrap(),
            Duration::from_micros(500)
        );
        assert_eq!(parse_duration("rtt", "2s").unwrap(), Duration::from_secs(2));
        assert_eq!(
            parse_duration("rtt", "250us").unwrap(),
            Duration::from_micros(250)
        );
        assert_eq!(parse_rate("500mbit").unwrap(), 500_000_000);
        assert_eq!(parse_rate("16Mbit/s").unwrap(), 16_000_000);
        assert_eq!(parse_rate("370kbit").unwrap(), 370_000);
        assert_eq!(parse_rate("1.5gbit").unwrap(), 1_500_000_000);
        assert_eq!(parse_loss("0.1%").unwrap(), 0.001);
        assert_eq!(parse_loss("0.01").unwrap(), 0.01);
        assert_eq!(
            parse_queue("20ms").unwrap(),
            Queue::Time(Duration::from_millis(20))
        );
        assert_eq!(parse_queue("64kb").unwrap(), Queue::Bytes(64_000));
        assert_eq!(parse_queue("100000").unwrap(), Queue::Bytes(100_000));
    }

    #[test]
    fn errors_name_the_bad_value() {
        for (e, what, value) in [
            (parse_duration("rtt", "100").unwrap_err(), "rtt", "100"),
            (parse_duration("rtt", "ms").unwrap_err(), "rtt", "ms"),
            (parse_duration("rtt", "-5ms").unwrap_err(), "rtt", "-5ms"),
            (
                parse_duration("jitter", "5min").unwrap_err(),
                "jitter",
                "5min",
            ),
            (parse_rate("100mbps").unwrap_err(), "rate", "100mbps"),
            (parse_rate("10").unwrap_err(), "rate", "10"),
            (parse_rate("1kbit").unwrap_err(), "rate", "1kbit"),
            (parse_loss("100%").unwrap_err(), "loss", "100%"),
            (parse_loss("1.5").unwrap_err(), "loss", "1.5"),
            (parse_loss("x").unwrap_err(), "loss", "x"),
            (parse_queue("10").unwrap_err(), "queue", "10"),
            (parse_queue("5parsecs").unwrap_err(), "queue", "5parsecs"),
            (
                LinkSpec::condition("mars").unwrap_err(),
                "condition",
                "mars",
            ),
        ] {
            assert_eq!((e.what, e.value.as_str()), (what, value), "{e}");
            assert!(e.to_string().contains(value), "{e}");
        }
    }

    #[test]
    fn named_conditions_split_the_round_trip() {
        let s = LinkSpec::condition("eu-us").unwrap();
        assert_eq!(s.rtt(), Duration::from_millis(110));
        assert_eq!(s.a_to_b.delay, Duration::from_millis(55));
        assert_eq!(s.a_to_b.rate_bps, Some(1_000_000_000));
        // 20 ms at 1 Gbit/s.
        assert_eq!(s.a_to_b.queue_bytes(), Some(2_500_000));
        // 110 ms at 1 Gbit/s.
        assert_eq!(s.bdp_bytes(), 13_750_000);
        // 20 ms at 370 kbit/s is under one packet: the floor applies.
        let g = LinkSpec::condition("cw-3g").unwrap();
        assert_eq!(g.a_to_b.queue_bytes(), Some(MIN_DEFAULT_QUEUE_BYTES));
        for c in CONDITIONS {
            LinkSpec::condition(c.name).unwrap();
        }
        let (lan, capped) = LinkSpec::condition("lan").unwrap().capped(1_000_000_000);
        assert!(capped);
        assert_eq!(lan.b_to_a.rate_bps, Some(1_000_000_000));
        assert!(!s.capped(1_000_000_000).1);
    }

    #[test]
    fn custom_links() {
        let s = LinkSpec::parse_custom(
            Some("100ms"),
            Some("500mbit"),
            Some("0.1%"),
            Some("1ms"),
            Some("20ms"),
        )
        .unwrap();
        assert_eq!(s.a_to_b.delay, Duration::from_millis(50));
        assert_eq!(s.a_to_b.loss, 0.001);
        assert_eq!(s.a_to_b.jitter, Duration::from_millis(1));
        assert_eq!(s.a_to_b.queue_bytes(), Some(1_250_000));
        let none = LinkSpec::parse_custom(None, None, None, None, None).unwrap();
        assert_eq!(none.rtt(), Duration::ZERO);
        assert_eq!(none.a_to_b.queue_bytes(), None);
    }
}
