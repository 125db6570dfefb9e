//! The `emu` backend: a userspace link emulator for kernels without netem.
//!
//! ```text
//!  namespace A                 this process                      namespace B
//!  ┌────────────┐   read   ┌─────────────────────────────┐  write  ┌────────────┐
//!  │ tpb0 (TUN) │ ───────▶ │ A→B: loss ▸ queue ▸ delay    │ ──────▶ │ tpb0 (TUN) │
//!  │ 10.x.y.1   │ ◀─────── │ B→A: loss ▸ queue ▸ delay    │ ◀────── │ 10.x.y.2   │
//!  └────────────┘  write   └─────────────────────────────┘   read  └────────────┘
//! ```
//!
//! Each namespace holds a point-to-point TUN device, created by a thread that entered the
//! namespace; its descriptor belongs to this process, so the devices vanish when the relay
//! stops (or the process dies). One thread per direction reads IP packets from one device
//! and writes them to the other. Per packet, in order (the Mahimahi design):
//!
//! 1. **loss**: dropped with the direction's probability (Bernoulli, from a seeded ChaCha
//!    stream per direction, so a run is reproducible given the arrival order);
//! 2. **bottleneck**: a drop-tail queue drained at the link rate, in virtual time: the link
//!    is busy until `busy_until`; a packet of `len` bytes arriving at `t` finds
//!    `(busy_until − t) × rate` bytes queued, is dropped if it does not fit in the queue,
//!    and otherwise leaves the bottleneck at `max(t, busy_until) + len × 8 / rate`;
//! 3. **delay**: it is delivered the one-way delay (± a uniform jitter) after it left the
//!    bottleneck, held in a FIFO; jitter never reorders (a packet leaves no earlier than the
//!    one before it), unlike netem's.
//!
//! A packet's size is its IP length (what `probe` counts as well); link-layer framing is
//! not modelled.
//!
//! Timing: a thread sleeps in `poll` on its input device until the next delivery is due
//! (at most 10 ms at a time, so the kernel's poll slack of 0.1 % of the timeout stays at
//! 10 µs), with 1 µs timer slack, and spins the last 50 µs; it runs at nice −10 so that the
//! parties or a build on the same cores do not make it late ([`LinkStats::max_late_us`]
//! reports how late it was). On this machine class (a 2-vCPU VM) the measured round trip
//! exceeds the setting by about 0.05 ms at 0.5 ms and 0.2 ms at 20–300 ms: the wake-ups
//! of idle virtual CPUs. No per-packet allocation: packet buffers come from a pool that
//! only grows to the largest number in flight.
//!
//! Why userspace: without netem the kernel cannot delay packets (no fq/etf either), and a
//! relay is the standard answer (Mahimahi). Its cost is CPU: every packet is copied twice
//! and the receiver's TCP processing runs inside the relay's `write`; it carries about
//! 1 Gbit/s with a core, which is why [`MAX_RATE_BPS`] caps rates (and CI keeps to
//! 500 Mbit/s). The relay threads live in the testbed's process, not the parties', so
//! their CPU time is not charged to the parties.

mod tun;

use std::collections::VecDeque;
use std::num::NonZeroU64;
use std::os::fd::{AsFd, BorrowedFd};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha12Rng;

use crate::spec::{Direction, LinkSpec};
use crate::{ns, Backend, Error, LinkStats, Links, Side, Wiring};

/// The fastest link the relay is asked to emulate; faster settings are capped to it and the
/// report says so.
pub const MAX_RATE_BPS: u64 = 1_000_000_000;
/// The TUN devices' MTU, and so the largest packet.
pub const MTU: usize = 1500;
/// Name of the TUN device in each namespace.
pub const DEVICE: &str = "tpb0";
/// Packet buffer size: anything larger than the MTU is a misconfiguration and dropped.
const SLOT: usize = 2048;
/// Packets read per wake-up before delivering again.
const BATCH: usize = 64;
/// The last stretch before a delivery is spun, not slept.
const SPIN: Duration = Duration::from_micros(50);
/// Longest sleep, so that a stop request is seen soon.
const MAX_SLEEP: Duration = Duration::from_millis(10);
/// The relay threads' nice value: a higher CPU share than the parties and any other work.
const RELAY_NICE: i32 = -10;
/// Packets held in the delay line at most (a link without a rate limit has no queue bound).
const MAX_IN_FLIGHT: usize = 1 << 16;

/// Whether this machine can run the relay: `/dev/net/tun` exists.
pub fn available() -> Result<(), String> {
    if std::path::Path::new("/dev/net/tun").exists() {
        Ok(())
    } else {
        Err("/dev/net/tun is missing (no TUN support)".into())
    }
}

/// The `emu` backend.
#[derive(Debug, Default, Clone, Copy)]
pub struct Emu;

impl Backend for Emu {
    fn name(&self) -> &'static str {
        "emu"
    }

    fn max_rate_bps(&self) -> Option<u64> {
        Some(MAX_RATE_BPS)
    }

    fn needs_router(&self) -> bool {
        false
    }

    fn install(&self, w: &Wiring<'_>, spec: &LinkSpec) -> Result<Box<dyn Links>, Error> {
        let mut devs = Vec::new();
        for (side, peer) in [(Side::A, Side::B), (Side::B, Side::A)] {
            let ns_name = w.namespace(side);
            let fd = ns::within(ns_name, || tun::create(DEVICE))?;
            let (me, other) = (w.addr(side).to_string(), w.addr(peer).to_string());
            let n = ["-n", ns_name];
            ns::ip(&[n[0], n[1], "link", "set", DEVICE, "mtu", &MTU.to_string()])?;
            ns::ip(&[n[0], n[1], "link", "set", DEVICE, "txqueuelen", "10000"])?;
            ns::ip(&[
                n[0], n[1], "addr", "add", &me, "peer", &other, "dev", DEVICE,
            ])?;
            ns::ip(&[n[0], n[1], "link", "set", DEVICE, "up"])?;
            devs.push(fd);
        }
        let dev_b = devs.pop().expect("two devices");
        let dev_a = devs.pop().expect("two devices");
        let (dev_a, dev_b) = (Arc::new(dev_a), Arc::new(dev_b));
        let stop = Arc::new(AtomicBool::new(false));
        let mut relay = Relay {
            stop: stop.clone(),
            threads: Vec::new(),
            counters: [Arc::default(), Arc::default()],
        };
        for (i, (dir, from, to)) in [
            (spec.a_to_b, dev_a.clone(), dev_b.clone()),
            (spec.b_to_a, dev_b, dev_a),
        ]
        .into_iter()
        .enumerate()
        {
            let counters = relay.counters[i].clone();
            let stop = stop.clone();
            let seed = spec.seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15);
            let name = if i == 0 {
                "tpb relay a>b"
            } else {
                "tpb relay b>a"
            };
            let t = std::thread::Builder::new()
                .name(name.into())
                .spawn(move || Pipe::new(dir, seed, counters).run(from.as_fd(), to.as_fd(), &stop))
                .map_err(|source| Error::Io {
                    context: "starting a relay thread".into(),
                    source,
                })?;
            relay.threads.push(t);
        }
        Ok(Box::new(relay))
    }
}

/// Counters of one direction, shared with its thread.
#[derive(Debug, Default)]
struct Counters {
    forwarded: AtomicU64,
    forwarded_bytes: AtomicU64,
    lost: AtomicU64,
    queue_drops: AtomicU64,
    errors: AtomicU64,
    max_late_ns: AtomicU64,
}

/// The running relay; dropping it stops the threads and closes the devices.
struct Relay {
    stop: Arc<AtomicBool>,
    threads: Vec<JoinHandle<()>>,
    counters: [Arc<Counters>; 2],
}

impl Links for Relay {
    fn stats(&self) -> Option<[LinkStats; 2]> {
        let get = |c: &Counters| LinkStats {
            forwarded: c.forwarded.load(Ordering::Relaxed),
            forwarded_bytes: c.forwarded_bytes.load(Ordering::Relaxed),
            lost: c.lost.load(Ordering::Relaxed),
            queue_drops: c.queue_drops.load(Ordering::Relaxed),
            errors: c.errors.load(Ordering::Relaxed),
            max_late_us: c.max_late_ns.load(Ordering::Relaxed) / 1000,
        };
        Some([get(&self.counters[0]), get(&self.counters[1])])
    }
}

impl Drop for Relay {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// What happened to a packet offered to the pipeline.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Fate {
    /// Delivered at this time.
    Deliver(Instant),
    /// Lost at random.
    Lost,
    /// Did not fit in the bottleneck queue.
    QueueFull,
}

/// The per-packet model of one direction, without I/O: time comes in as an argument.
#[derive(Debug)]
pub(crate) struct Model {
    dir: Direction,
    rng: ChaCha12Rng,
    queue_bytes: f64,
    busy_until: Option<Instant>,
    last_delivery: Option<Instant>,
}

impl Model {
    pub(crate) fn new(dir: Direction, seed: u64) -> Self {
        Model {
            dir,
            rng: ChaCha12Rng::seed_from_u64(seed),
            queue_bytes: dir.queue_bytes().unwrap_or(u64::MAX) as f64,
            busy_until: None,
            last_delivery: None,
        }
    }

    /// Offers a packet of `len` bytes arriving at `now`.
    pub(crate) fn offer(&mut self, len: usize, now: Instant) -> Fate {
        if self.dir.loss > 0.0 && self.rng.gen::<f64>() < self.dir.loss {
            return Fate::Lost;
        }
        let left = match self.dir.rate_bps {
            None => now,
            Some(rate) => {
                let busy = self.busy_until.filter(|&b| b > now);
                let queued = busy.map_or(0.0, |b| (b - now).as_secs_f64() * rate as f64 / 8.0);
                if queued + len as f64 > self.queue_bytes {
                    return Fate::QueueFull;
                }
                let left = busy.unwrap_or(now) + self.dir.serialization(len as u64);
                self.busy_until = Some(left);
                left
            }
        };
        let mut delay = self.dir.delay;
        if !self.dir.jitter.is_zero() {
            let j = self.dir.jitter.as_secs_f64();
            let d = delay.as_secs_f64() + self.rng.gen_range(-j..=j);
            delay = Duration::from_secs_f64(d.max(0.0));
        }
        let at = (left + delay).max(self.last_delivery.unwrap_or(left));
        self.last_delivery = Some(at);
        Fate::Deliver(at)
    }
}

/// One direction: the model plus the delay line of packets waiting for their time.
struct Pipe {
    model: Model,
    line: VecDeque<(Instant, usize, Box<[u8]>)>,
    pool: Vec<Box<[u8]>>,
    counters: Arc<Counters>,
}

impl Pipe {
    fn new(dir: Direction, seed: u64, counters: Arc<Counters>) -> Self {
        Pipe {
            model: Model::new(dir, seed),
            line: VecDeque::new(),
            pool: Vec::new(),
            counters,
        }
    }

    fn run(mut self, from: BorrowedFd<'_>, to: BorrowedFd<'_>, stop: &AtomicBool) {
        // Wake-ups within a microsecond of the requested time (the default slack is 50 µs).
        let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1000));
        // The link must not fall behind when the machine is busy (the parties, a build):
        // nice -10 for this thread (Linux applies setpriority to a thread id), where allowed.
        let _ = rustix::process::setpriority_process(Some(rustix::thread::gettid()), RELAY_NICE);
        while !stop.load(Ordering::Relaxed) {
            self.deliver_due(to, Instant::now());
            self.read_batch(from);
            let now = Instant::now();
            let wait = self
                .line
                .front()
                .map_or(MAX_SLEEP, |p| p.0.saturating_duration_since(now))
                .min(MAX_SLEEP);
            if wait.is_zero() {
                continue;
            }
            if wait <= SPIN {
                let until = now + wait;
                while Instant::now() < until {
                    std::hint::spin_loop();
                }
                continue;
            }
            let sleep = wait - SPIN;
            let ts = rustix::time::Timespec {
                tv_sec: sleep.as_secs() as _,
                tv_nsec: sleep.subsec_nanos() as _,
            };
            let mut fds = [rustix::event::PollFd::new(
                &from,
                rustix::event::PollFlags::IN,
            )];
            let _ = rustix::event::poll(&mut fds, Some(&ts));
        }
    }

    /// Writes every packet whose time has come.
    fn deliver_due(&mut self, to: BorrowedFd<'_>, now: Instant) {
        let mut late = Duration::ZERO;
        while self.line.front().is_some_and(|p| p.0 <= now) {
            let (at, len, buf) = self.line.pop_front().expect("checked");
            late = late.max(now - at);
            match rustix::io::write(to, &buf[..len]) {
                Ok(_) => {
                    self.counters.forwarded.fetch_add(1, Ordering::Relaxed);
                    self.counters
                        .forwarded_bytes
                        .fetch_add(len as u64, Ordering::Relaxed);
                }
                // The receiving stack refused it (a full backlog, the device going down):
                // the packet is lost, as on a real link.
                Err(_) => {
                    self.counters.errors.fetch_add(1, Ordering::Relaxed);
                }
            }
            self.pool.push(buf);
        }
        let late = u64::try_from(late.as_nanos()).unwrap_or(u64::MAX);
        self.counters.max_late_ns.fetch_max(late, Ordering::Relaxed);
    }

    /// Reads up to [`BATCH`] waiting packets and passes them through the model; stops early
    /// when a delivery falls due, so that a burst of arrivals does not delay departures.
    fn read_batch(&mut self, from: BorrowedFd<'_>) {
        for _ in 0..BATCH {
            if self.line.front().is_some_and(|p| p.0 <= Instant::now()) {
                return;
            }
            let mut buf = self
                .pool
                .pop()
                .unwrap_or_else(|| vec![0u8; SLOT].into_boxed_slice());
            let n = match rustix::io::read(from, &mut buf[..]) {
                Ok(n) => n,
                Err(_) => {
                    // EAGAIN: nothing more to read; other errors are retried after a sleep.
                    self.pool.push(buf);
                    return;
                }
            };
            let now = Instant::now();
            if n == 0 || n > MTU || self.line.len() >= MAX_IN_FLIGHT {
                self.counters.errors.fetch_add(1, Ordering::Relaxed);
                self.pool.push(buf);
                continue;
            }
            match self.model.offer(n, now) {
                Fate::Deliver(at) => self.line.push_back((at, n, buf)),
                Fate::Lost => {
                    self.counters.lost.fetch_add(1, Ordering::Relaxed);
                    self.pool.push(buf);
                }
                Fate::QueueFull => {
                    self.counters.queue_drops.fetch_add(1, Ordering::Relaxed);
                    self.pool.push(buf);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spec::Queue;

    fn dir(rate: Option<u64>, delay_ms: u64, loss: f64, queue: u64) -> Direction {
        Direction {
            delay: Duration::from_millis(delay_ms),
            jitter: Duration::ZERO,
            loss,
            rate_bps: rate,
            queue: Queue::Bytes(queue),
        }
    }

    #[test]
    fn serialization_and_delay_in_virtual_time() {
        // 8 Mbit/s: a 1000-byte packet takes 1 ms; 10 ms delay; room for 3 packets.
        let mut m = Model::new(dir(Some(8_000_000), 10, 0.0, 3000), 1);
        let t0 = Instant::now();
        let ms = |x: u64| Duration::from_millis(x);
        assert_eq!(m.offer(1000, t0), Fate::Deliver(t0 + ms(11)));
        assert_eq!(m.offer(1000, t0), Fate::Deliver(t0 + ms(12)));
        assert_eq!(m.offer(1000, t0), Fate::Deliver(t0 + ms(13)));
        // 3000 bytes queued at t0: the fourth does not fit.
        assert_eq!(m.offer(1000, t0), Fate::QueueFull);
        // 1.5 ms later 1500 bytes are queued: a 1000-byte packet fits again.
        assert_eq!(
            m.offer(1000, t0 + Duration::from_micros(1500)),
            Fate::Deliver(t0 + ms(14))
        );
        // An idle link: no queueing.
        assert_eq!(m.offer(1000, t0 + ms(100)), Fate::Deliver(t0 + ms(111)));
    }

    #[test]
    fn loss_is_bernoulli_and_seeded() {
        let t0 = Instant::now();
        let count = |seed| {
            let mut m = Model::new(dir(None, 0, 0.1, 0), seed);
            (0..100_000)
                .filter(|_| m.offer(100, t0) == Fate::Lost)
                .count()
        };
        let (a, b) = (count(7), count(7));
        assert_eq!(a, b);
        // 10 000 expected, standard deviation ≈ 95.
        assert!((9_500..10_500).contains(&a), "{a}");
        assert_ne!(count(7), count(8));
    }

    #[test]
    fn jitter_stays_in_bounds_and_never_reorders() {
        let mut d = dir(None, 10, 0.0, 0);
        d.jitter = Duration::from_millis(5);
        let mut m = Model::new(d, 3);
        let t0 = Instant::now();
        let mut last = t0;
        for i in 0..10_000u64 {
            let now = t0 + Duration::from_micros(i * 100);
            let Fate::Deliver(at) = m.offer(100, now) else {
                panic!("no loss configured")
            };
            assert!(at >= last);
            assert!(at >= now + Duration::from_millis(5));
            last = at;
        }
    }
}
