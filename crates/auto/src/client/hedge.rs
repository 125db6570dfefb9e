//! Connecting again beside a connection that is slow to be made: where a transport's
//! family allows it, the evaluator starts another attempt at the same listener once a
//! connection has taken several round trips of the path longer than it should, and takes
//! whichever is made first (see [`hedged`]).

use std::net::SocketAddr;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::{Duration, Instant};

use transputation_transport::{Channel, Config, TransportSpec};

use super::Early;

/// The most connection attempts [`channel_for`](super::channel_for) makes for one choice.
pub(super) const CONNECT_ATTEMPTS: usize = 3;

/// How long a connection for `transport` may take on a path of round trip `rtt` seconds
/// before [`channel_for`](super::channel_for) starts another: its set-up's round trips
/// and two more, and 15 ms for two busy processes (30 ms on a 5 ms path, 615 ms on a
/// 200 ms one; kernel TCP resends a SYN after 1 s). A round trip over 1 s, or one that is
/// not a number, counts as 1 s.
pub(super) fn hedge_after(transport: &TransportSpec, rtt: f64) -> Duration {
    let trips = transport.model().connect_round_trips + 2.0;
    let rtt = if rtt.is_finite() {
        rtt.clamp(0.0, 1.0)
    } else {
        1.0
    };
    Duration::from_secs_f64(trips * rtt) + Duration::from_millis(15)
}

/// A connection attempt's outcome, and whether it was the early one.
type Attempted = (bool, transputation_transport::Result<Box<dyn Channel>>);

/// See [`channel_for`](super::channel_for): `pending`, the early connection if there is
/// one, then fresh attempts `after` apart while none is made.
pub(super) fn hedged(
    pending: Option<Early>,
    transport: &TransportSpec,
    addr: SocketAddr,
    cfg: &Config,
    after: Duration,
) -> (transputation_transport::Result<Box<dyn Channel>>, bool) {
    let (tx, rx) = mpsc::channel::<Attempted>();
    let attempt = |tx: Sender<Attempted>| {
        let (spec, cfg) = (transport.clone(), cfg.clone());
        thread::Builder::new()
            .name("auto-connect".into())
            .spawn(move || {
                let _ = tx.send((false, spec.connect(addr, &cfg)));
            })
            .is_ok()
    };
    let (mut started, mut last) = (0, Instant::now());
    // One made already is taken as it is.
    let pending = match pending {
        Some(e) if e.made.is_finished() => match e.channel() {
            Some(ch) => return (Ok(ch), true),
            None => None,
        },
        other => other,
    };
    if let Some(e) = pending {
        let tx = tx.clone();
        last = e.started;
        let waiting = thread::Builder::new()
            .name("auto-early-wait".into())
            .spawn(move || {
                let made = e.made.join().unwrap_or_else(|_| {
                    Err(transputation_transport::Error::Io {
                        during: "connecting early",
                        source: std::io::Error::other("the connecting thread panicked"),
                    })
                });
                let _ = tx.send((true, made));
            });
        started += usize::from(waiting.is_ok());
    }
    if started == 0 {
        if !attempt(tx.clone()) {
            return (transport.connect(addr, cfg), false);
        }
        (started, last) = (1, Instant::now());
    }
    // Every attempt ends within its connect budget (an early one within its own, 3 s).
    let longest = cfg.connect_budget() + Duration::from_secs(1);
    // `no_more`: a fresh attempt failed (it retried for its whole budget), or a thread for
    // another could not be started.
    let (mut ended, mut no_more) = (0, false);
    let mut last_error = None;
    loop {
        let hedging = started < CONNECT_ATTEMPTS && !no_more;
        let wait = if hedging {
            (last + after).saturating_duration_since(Instant::now())
        } else {
            longest
        };
        match rx.recv_timeout(wait) {
            Ok((was_early, Ok(ch))) => {
                close_rest(rx, started - ended - 1);
                return (Ok(ch), was_early);
            }
            Ok((was_early, Err(e))) => {
                ended += 1;
                // An early one's failure leaves the choice to a fresh attempt, as without
                // hedging.
                no_more |= !was_early;
                last_error = Some(e);
                if ended == started {
                    if no_more || !attempt(tx.clone()) {
                        break;
                    }
                    (started, last) = (started + 1, Instant::now());
                }
            }
            Err(_) if hedging => {
                if attempt(tx.clone()) {
                    (started, last) = (started + 1, Instant::now());
                } else {
                    no_more = true;
                }
            }
            Err(_) => break,
        }
    }
    let error = last_error.unwrap_or(transputation_transport::Error::Timeout {
        during: "connecting",
        after: longest,
    });
    close_rest(rx, started - ended);
    (Err(error), false)
}

/// Closes, on a thread of its own, the `n` connections still to come on `rx` (each is
/// dropped as it arrives: closed before it sent a byte, which the garbler passes over).
fn close_rest(rx: Receiver<Attempted>, n: usize) {
    if n == 0 {
        return;
    }
    let _ = thread::Builder::new()
        .name("auto-connect-close".into())
        .spawn(move || {
            for _ in 0..n {
                if rx.recv().is_err() {
                    break;
                }
            }
        });
}

#[cfg(test)]
mod tests;
