//! The prediction of one transport's time to the output (the crate docs give the model):
//! connection, the protocol's waits and each bulk message's delivery, with what limits the
//! delivery, so that a choice can say why.

use serde::{Deserialize, Serialize};

use crate::{Constants, Control, HostConstants, Path, TransportModel, Window, Workload};

/// What a prediction is made under besides the path: the session's buffers.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Conditions {
    /// The socket buffer per direction the session configures, bytes (the paper's §4.2
    /// sizing; the kernel's autotuning limit when none is configured).
    pub buffer: f64,
}

/// What held a message's steady rate down.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Limit {
    /// The message ended during slow start: round trips, not rate, set its time.
    SlowStart,
    /// The bottleneck link.
    Link,
    /// The flow-control window or socket buffer.
    Window,
    /// The congestion controller's answer to loss.
    Loss,
    /// Slow start ended early (HyStart) and the window stayed where it ended.
    EarlyExit,
    /// The host's ceiling for the transport.
    Host,
    /// The host's garbling pipeline.
    Pipeline,
    /// The transport's fixed pacing rate.
    Pacing,
}

impl Limit {
    /// A few words for explanations.
    pub fn describe(self) -> &'static str {
        match self {
            Limit::SlowStart => "slow start",
            Limit::Link => "the link's rate",
            Limit::Window => "its window",
            Limit::Loss => "its answer to loss",
            Limit::EarlyExit => "an early end of slow start",
            Limit::Host => "this host's ceiling for it",
            Limit::Pipeline => "garbling",
            Limit::Pacing => "its pacing rate",
        }
    }
}

/// One bulk message's predicted delivery.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Delivery {
    /// Seconds from its first byte sent to its last received.
    pub seconds: f64,
    /// Round trips of slow start it went through.
    pub rounds: u32,
    /// The steady rate it would reach, bytes per second.
    pub steady_rate: f64,
    /// What set that rate (or [`Limit::SlowStart`] if it ended before reaching it).
    pub limit: Limit,
}

/// A transport's predicted time to the output.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// Seconds from the first connection attempt to the output.
    pub total: f64,
    /// The connection's share: `max(setup, N_conn·R)`.
    pub connect: f64,
    /// The protocol's waits before the bulk messages.
    pub waits: f64,
    /// Each bulk message's delivery, in the workload's order.
    pub bulk: Vec<Delivery>,
    /// The fixed cost.
    pub fixed: f64,
}

impl Prediction {
    /// The delivery that took longest (what dominates the transfer).
    pub fn longest(&self) -> Option<&Delivery> {
        self.bulk
            .iter()
            .max_by(|a, b| a.seconds.total_cmp(&b.seconds))
    }
}

/// Why a transport cannot carry the session on this path.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("{0}")]
pub struct Unsuitable(pub String);

/// Predicts the session's time to the output over `t` on `path`.
pub fn predict(
    path: &Path,
    work: &Workload,
    t: &TransportModel,
    k: &Constants,
    host: &HostConstants,
    cond: &Conditions,
) -> Result<Prediction, Unsuitable> {
    path.check().map_err(Unsuitable)?;
    check_reassembly(path, t, first_flight(work, t))?;
    let r = path.rtt;
    let connect = (t.connect_round_trips * r).max(work.setup);
    let waits = f64::from(work.waits) * r;
    let bulk = work
        .bulk
        .iter()
        .map(|b| {
            let net = deliver(b.bytes as f64, path, t, k, cond)?;
            Ok(if b.computed {
                pipeline_bound(net, b.bytes as f64, r, host)
            } else {
                net
            })
        })
        .collect::<Result<Vec<_>, Unsuitable>>()?;
    check_long_stream(path, t, &bulk)?;
    let total = k.fixed + connect + waits + bulk.iter().map(|d| d.seconds).sum::<f64>();
    Ok(Prediction {
        total,
        connect,
        waits,
        bulk,
        fixed: k.fixed,
    })
}

/// A computed message arrives no faster than the host garbles it.
fn pipeline_bound(net: Delivery, bytes: f64, rtt: f64, host: &HostConstants) -> Delivery {
    let produced = bytes / host.pipeline_rate + rtt / 2.0;
    if produced > net.seconds {
        Delivery {
            seconds: produced,
            steady_rate: host.pipeline_rate,
            limit: Limit::Pipeline,
            ..net
        }
    } else {
        net
    }
}

/// The largest first flight of the session: each bulk message starts on the initial
/// window, and a message shorter than the window is its whole first flight (AES-128's
/// 0.2 MB of tables never fill a 4 MB window, so they cannot overrun the path with it).
fn first_flight(work: &Workload, t: &TransportModel) -> f64 {
    work.bulk
        .iter()
        .map(|b| (b.bytes as f64).min(t.initial_window))
        .fold(0.0, f64::max)
}

/// A receiver with a reassembly limit fails when a first flight far above the link's rate
/// overflows the bottleneck's queue: each packet dropped there is a gap until repaired.
/// A paced first flight of `W` bytes (the initial window, or the message if it is
/// shorter) leaves at `1.25·W/R` (quinn's pacer); what the link and the queue cannot take,
/// `W − 0.8·C·R − Q`, is dropped. Such a setting is refused while its gaps (plus those of
/// random loss at the loss bound) could reach half the limit.
fn check_reassembly(path: &Path, t: &TransportModel, flight: f64) -> Result<(), Unsuitable> {
    let Some(limit) = t.reassembly_limit else {
        return Ok(());
    };
    let w = flight;
    let queue = path.queue.unwrap_or(0.0);
    let overflow = (w - 0.8 * path.bdp() - queue).max(0.0);
    let gaps = overflow / t.segment + 2.0 * path.loss_upper * w / t.segment;
    if gaps > limit / 2.0 {
        return Err(Unsuitable(format!(
            "a first flight of {:.0} kB (its initial window of {:.0} kB) overruns the path \
             ({:.0} kB a round trip): about {gaps:.0} packets lost at once, beyond its \
             receiver's limit of {limit:.0} gaps",
            w / 1e3,
            t.initial_window / 1e3,
            path.bdp() / 1e3
        )));
    }
    Ok(())
}

/// A long stream over a large window may exceed the receiver's reassembly limit in
/// later rounds too ([`TransportModel::long_stream_gaps`]): the risk grows with the
/// packets in flight (the gaps one round's losses can leave) and with the round trips the
/// stream lasts (the rounds in which such losses can come).
fn check_long_stream(path: &Path, t: &TransportModel, bulk: &[Delivery]) -> Result<(), Unsuitable> {
    let Some(limit) = t.long_stream_gaps else {
        return Ok(());
    };
    let r = path.rtt.max(1e-6);
    let in_flight = path.bdp() / t.segment.max(1.0);
    for d in bulk {
        let rounds = d.seconds / r;
        if in_flight * rounds > limit {
            return Err(Unsuitable(format!(
                "a stream of {rounds:.0} round trips with {in_flight:.0} packets in flight: \
                 on such streams its losses exceeded its receiver's reassembly limit"
            )));
        }
    }
    Ok(())
}

/// The window bound of one connection, bytes (its socket buffer or flow-control window).
fn flow_window(t: &TransportModel, cond: &Conditions) -> f64 {
    match t.window {
        Window::SocketBuffer { share } => share * cond.buffer,
        Window::Bytes(w) => w,
        Window::Unbounded => f64::INFINITY,
    }
}

/// The steady rate and what sets it, for a message on `streams` connections.
fn steady_rate(
    path: &Path,
    t: &TransportModel,
    k: &Constants,
    cond: &Conditions,
    streams: f64,
) -> (f64, Limit) {
    let r = path.rtt.max(1e-6);
    let window = flow_window(t, cond);
    // Every lost packet is sent again, so on a lossy path no transport (and no number of
    // connections) delivers more than `(1 − p)` of the link's rate.
    let mut best = (
        path.rate * link_share(t, k) * (1.0 - path.loss),
        Limit::Link,
    );
    let mut lower = |rate: f64, why: Limit| {
        if rate < best.0 {
            best = (rate, why);
        }
    };
    lower(window / r, Limit::Window);
    lower(k.host_cap, Limit::Host);
    if path.loss > 0.0 {
        lower(loss_rate(path, t, k) * streams, Limit::Loss);
    }
    best
}

/// The share of a clean link the transport's controller holds: `steady_share` for BBR
/// (quinn's paces at about 0.8 of the rate it measured on the 2-vCPU host), the whole link
/// for the others, whose windows fill the pipe.
fn link_share(t: &TransportModel, k: &Constants) -> f64 {
    match t.control {
        Control::Bbr => k.steady_share.clamp(0.1, 1.0),
        _ => 1.0,
    }
}

/// One connection's rate under random loss (bytes per second).
fn loss_rate(path: &Path, t: &TransportModel, k: &Constants) -> f64 {
    let p = path.loss;
    let r = path.rtt.max(1e-6);
    let reno = (1.5 / p).sqrt();
    let packets = match t.control {
        Control::Reno => reno,
        Control::Cubic => (1.054 * (r / p).powf(0.75)).max(reno),
        // BBRv1 keeps the bottleneck rate while its 1.25 probing gain outruns the loss.
        Control::Bbr if p < 0.2 => return path.rate * link_share(t, k) * (1.0 - p),
        Control::Bbr => reno,
        Control::RateBased => return path.rate / (1.0 + k.loss_factor * p.sqrt()),
        Control::Paced { rate } => return rate,
    };
    k.loss_factor * packets * t.segment / r
}

/// The delivery of one message of `bytes` on a cold window.
fn deliver(
    bytes: f64,
    path: &Path,
    t: &TransportModel,
    k: &Constants,
    cond: &Conditions,
) -> Result<Delivery, Unsuitable> {
    let r = path.rtt;
    let p = path.loss;
    let link = path.rate.min(k.host_cap);
    if let Control::Paced { rate } = t.control {
        return paced(bytes, path, rate.min(k.host_cap));
    }
    let streams = t.streams_for(bytes);
    let (mut steady, limit) = steady_rate(path, t, k, cond, streams);
    let pipe = steady * r;
    let exit_window = k.slow_start_exit.clamp(0.05, 1.0) * pipe;
    // A loss-based controller leaves slow start at its first loss, after about 1/p packets.
    let loss_exit = match t.control {
        Control::Reno | Control::Cubic if p > 0.0 => t.segment / p,
        _ => f64::INFINITY,
    };
    // A flight of a window `w`: at the link's rate, or as the pacer releases the window.
    let flight_rate = |w: f64| {
        t.pacing_gain
            .map_or(link, |g| link.min(g * w / r.max(1e-6)))
    };
    let first_window = t.initial_window * streams;
    let mut w = first_window;
    let (mut sent, mut seconds, mut rounds) = (0.0, 0.0, 0u32);
    let limit = if p > 0.0 && bytes <= w && bytes <= flow_window(t, cond) {
        // On a lossy path, one flight that holds the message still leaves at the flight's
        // rate, not at the rate the loss allows later (a controller answers a loss with a
        // smaller window for what follows, and nothing follows; the tail below repairs
        // it). On a clean path the rounds below give the same.
        steady = flight_rate(w);
        seconds = bytes / steady;
        Limit::SlowStart
    } else {
        loop {
            if w >= pipe || sent >= loss_exit {
                seconds += steady_phase(bytes - sent, steady, limit, r, link);
                break limit;
            }
            if w >= exit_window {
                let after = (w / r.max(1e-6)).min(steady);
                seconds += (bytes - sent) / after;
                break Limit::EarlyExit;
            }
            if sent + w >= bytes {
                // The last round.
                seconds += (bytes - sent) / flight_rate(w);
                break Limit::SlowStart;
            }
            sent += w;
            seconds += r;
            w *= k.growth.max(1.05);
            rounds += 1;
        }
    };
    let packets = (bytes / t.segment).ceil();
    let lag = if rounds > 0 { k.startup_lag * r } else { 0.0 };
    let tail = k.tail * r * (1.0 - (1.0 - p).powf(packets));
    let stall = first_flight_stall(bytes, path, t, first_window);
    Ok(Delivery {
        seconds: seconds + r / 2.0 + lag + tail + stall,
        rounds,
        steady_rate: steady,
        limit,
    })
}

/// Seconds a controller's [`crate::FirstFlightStall`] adds to a message of `bytes` sent
/// from a first `window`: if data of the message still waits when its first
/// acknowledgements come back, a round trip into its flight (it is larger than the first
/// window, or the pacer, releasing `gain × window` per smoothed round trip, takes longer
/// than the path's round trip to release it), the stall's cost and a round trip, or the
/// message at the stall's window a round trip if that is sooner; nothing on a bottleneck
/// slower than the stall's `min_rate`.
fn first_flight_stall(bytes: f64, path: &Path, t: &TransportModel, window: f64) -> f64 {
    let (Some(stall), Some(gain)) = (t.first_flight_stall, t.pacing_gain) else {
        return 0.0;
    };
    if path.rate < stall.min_rate {
        return 0.0;
    }
    let r = path.rtt.max(1e-6);
    let pacing = bytes / (gain * window).max(1.0) * (r + stall.srtt_excess);
    if bytes > window || pacing > r {
        (stall.cost + r).min(bytes * r / stall.min_window.max(1.0))
    } else {
        0.0
    }
}

/// The rest of a message once the window holds the pipe. Held by a window, it goes one
/// window a round trip, the last at the link's rate (a message that fits in the window is
/// one flight, not a window a round trip); otherwise at the steady rate.
fn steady_phase(rest: f64, steady: f64, limit: Limit, rtt: f64, link: f64) -> f64 {
    if limit != Limit::Window || rtt <= 0.0 {
        return rest / steady;
    }
    let window = steady * rtt;
    let full = (rest / window).ceil().max(1.0) - 1.0;
    full * rtt + (rest - full * window) / link
}

/// A message sent at a fixed rate with no repair: unsuitable on a lossy path or above the
/// link's rate.
fn paced(bytes: f64, path: &Path, rate: f64) -> Result<Delivery, Unsuitable> {
    if path.loss_upper > 0.0 {
        return Err(Unsuitable(format!(
            "it does not repair loss, and the path may lose up to {:.2} % of packets",
            path.loss_upper * 100.0
        )));
    }
    if rate > path.rate {
        return Err(Unsuitable(format!(
            "it paces at {:.0} Mbit/s, above the link's {:.0} Mbit/s, and would lose packets",
            rate * 8e-6,
            path.rate * 8e-6
        )));
    }
    Ok(Delivery {
        seconds: bytes / rate + path.rtt / 2.0,
        rounds: 0,
        steady_rate: rate,
        limit: Limit::Pacing,
    })
}
