//! Timeouts, retries and buffer sizes every transport shares, and the retry policy of
//! connecting: one budget for all attempts, so a server that never answers costs it once.

use std::time::{Duration, Instant};

/// Timeouts and retries shared by every transport.
#[derive(Debug, Clone)]
pub struct Config {
    /// Longest wait for any progress when sending, receiving or accepting (default 30 s).
    pub io_timeout: Duration,
    /// Longest wait, when accepting, for a client to make contact (a server whose first
    /// peer may have yet to start); setting up the channel after that falls under
    /// `io_timeout`. `None` (the default): `io_timeout`. See [`Config::accept_wait`].
    pub accept_timeout: Option<Duration>,
    /// Longest wait for a connection (default 5 s); see [`Config::connect_budget`].
    pub connect_timeout: Duration,
    /// Connection attempts before giving up (default 50); a refused attempt is retried
    /// after [`Config::retry_delay`], so a client may start before its server.
    pub connect_attempts: u32,
    /// Pause between connection attempts (default 100 ms).
    pub retry_delay: Duration,
    /// Bytes of buffering each transport should give one direction of a connection
    /// (kernel socket buffers for `tcp`, `mtcp` and `udp`; the library's buffers for `udt`;
    /// flow-control windows for `quic`), normally sized from the path's bandwidth-delay
    /// product (paper §4.2, [`crate::sizing`]). `mtcp` gives each of its N connections an
    /// N-th. Set before connecting and listening, so TCP's window scale can use it.
    /// `None`: the transport's own default (kernel auto-tuning for TCP, 32 MiB for `udp`).
    /// An option in the transport's name that sets a buffer wins over this.
    pub buffer_bytes: Option<usize>,
    /// Kernel TCP connections (`tcp`, `mtcp`) whose handshake took at most 10 ms get a
    /// least retransmission timeout and a longest delayed ACK scaled to that round trip
    /// instead of the kernel's 200 and 40 ms, where the kernel lets a socket set them
    /// (Linux 6.15 and later; docs/protocol.md §6, step 6). Off by default: the fixed
    /// transports run as the kernel sets them up; `--transport auto` turns it on for its
    /// connections.
    pub short_path_timers: bool,
}

impl Config {
    /// How long connecting may take in all, on every transport: `connect_timeout` or
    /// `connect_attempts` × `retry_delay`, whichever is longer (5 s by default). Each
    /// attempt waits at most what is left of it, so a server that never answers (a UDT or
    /// QUIC handshake into silence, a TCP SYN dropped on the way) costs this budget once,
    /// not once per attempt.
    pub fn connect_budget(&self) -> Duration {
        let retrying = self
            .retry_delay
            .saturating_mul(self.connect_attempts.max(1));
        self.connect_timeout.max(retrying)
    }

    /// When connecting started now must give up: now + [`Config::connect_budget`], or a
    /// century from now for a budget too large to add (`Duration::MAX` as "no limit").
    pub(crate) fn connect_deadline(&self) -> Instant {
        deadline_after(self.connect_budget())
    }

    /// How long every transport's accept waits for a client to make contact:
    /// [`Config::accept_timeout`], or [`Config::io_timeout`] without it.
    pub fn accept_wait(&self) -> Duration {
        self.accept_timeout.unwrap_or(self.io_timeout)
    }

    /// When an accept started now stops waiting for contact: now + [`Config::accept_wait`]
    /// (a century from now for `Duration::MAX`, as for connecting).
    pub(crate) fn accept_deadline(&self) -> Instant {
        deadline_after(self.accept_wait())
    }
}

/// Now + `wait`, or a century from now for a wait too large to add (`Duration::MAX` as "no
/// limit").
fn deadline_after(wait: Duration) -> Instant {
    let now = Instant::now();
    now.checked_add(wait)
        .unwrap_or_else(|| now + Duration::from_secs(100 * 365 * 86_400))
}

impl Default for Config {
    fn default() -> Self {
        Config {
            io_timeout: Duration::from_secs(30),
            accept_timeout: None,
            connect_timeout: Duration::from_secs(5),
            connect_attempts: 50,
            retry_delay: Duration::from_millis(100),
            buffer_bytes: None,
            short_path_timers: false,
        }
    }
}

/// The connection attempts [`Config`] allows: at most `connect_attempts`, `retry_delay`
/// apart, all within [`Config::connect_budget`] (or a deadline given).
#[derive(Debug)]
pub(crate) struct Attempts {
    deadline: Instant,
    delay: Duration,
    max: u32,
    made: u32,
}

impl Attempts {
    pub(crate) fn until(cfg: &Config, deadline: Instant) -> Self {
        Attempts {
            deadline,
            delay: cfg.retry_delay,
            max: cfg.connect_attempts.max(1),
            made: 0,
        }
    }

    /// Counts the next attempt and returns the pause to wait before it (zero for the first,
    /// which is always made), or `None` when no attempt is left. For callers that wait in
    /// their own way (`quic`'s, asynchronously); see [`Attempts::next`].
    pub(crate) fn pause(&mut self) -> Option<Duration> {
        let pause = if self.made == 0 {
            Duration::ZERO
        } else if self.made >= self.max || Instant::now() + self.delay >= self.deadline {
            return None;
        } else {
            self.delay
        };
        self.made += 1;
        Some(pause)
    }

    /// The time an attempt starting now may take: what is left of the deadline, at least a
    /// millisecond (a zero timeout means "no timeout" to some APIs).
    pub(crate) fn left(&self) -> Duration {
        self.deadline
            .saturating_duration_since(Instant::now())
            .max(Duration::from_millis(1))
    }

    /// Waits out the pause before the next attempt and returns the time that attempt may
    /// take, or `None` when no attempt is left (the first one is always made).
    pub(crate) fn next(&mut self) -> Option<Duration> {
        let pause = self.pause()?;
        if !pause.is_zero() {
            std::thread::sleep(pause);
        }
        Some(self.left())
    }

    /// Attempts made so far.
    pub(crate) fn made(&self) -> u32 {
        self.made
    }
}

/// A random, non-zero number that tells one client's session (its connections, its
/// datagrams) from another's; unpredictable enough for that, not a secret.
pub(crate) fn session_number() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos()),
    );
    h.write_u32(std::process::id());
    h.finish().max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn connect_budget_and_attempts() {
        let d = Config::default();
        assert_eq!(d.connect_budget(), Duration::from_secs(5));
        let retrying = Config {
            connect_timeout: Duration::from_millis(100),
            connect_attempts: 30,
            retry_delay: Duration::from_millis(200),
            ..d.clone()
        };
        assert_eq!(retrying.connect_budget(), Duration::from_secs(6));
        // "No limit" does not overflow the deadline.
        let forever = Config {
            connect_timeout: Duration::MAX,
            ..d.clone()
        };
        assert!(forever.connect_deadline() > Instant::now() + Duration::from_secs(1 << 30));

        // At most connect_attempts, the first at once, none after the deadline.
        let three = Config {
            connect_attempts: 3,
            retry_delay: Duration::from_millis(1),
            ..d.clone()
        };
        let mut a = Attempts::until(&three, three.connect_deadline());
        let first = a.next().unwrap();
        assert!(first > Duration::from_secs(4) && first <= Duration::from_secs(5));
        assert!(a.next().is_some() && a.next().is_some());
        assert_eq!((a.next(), a.made()), (None, 3));
        let mut late = Attempts::until(&three, Instant::now());
        assert_eq!(late.next(), Some(Duration::from_millis(1)));
        assert_eq!((late.next(), late.made()), (None, 1));
    }
}
