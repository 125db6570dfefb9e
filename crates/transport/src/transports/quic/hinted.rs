//! A congestion controller that an accepted connection's owner can still choose after
//! accept: [`HintedController`] delegates every call to one of quinn's controllers and,
//! once the application sets a hint in the connection's [`HintCell`], replaces that
//! controller with a fresh one built from the hint.
//!
//! # Why
//!
//! A `quic` listener must pick each connection's controller factory when it accepts
//! (quinn 0.11 builds the controller inside `Incoming::accept_with`, from that call's
//! `TransportConfig`), and it then knows only the client's address. What the sender should
//! run (`auto`'s choice) arrives later, in the protected session's first message. quinn
//! has no API to replace a live connection's controller, so each accepted connection gets
//! its own factory ([`HintedFactory`]) sharing a [`HintCell`] with its channel, and the
//! controller watches that cell.
//!
//! # When a hint takes effect
//!
//! [`Controller::window`] takes `&self`, so the swap happens in the next callback that may
//! change state: `on_sent` (every packet this end sends), `on_ack` or `on_end_acks` (the
//! peer acknowledged some). quinn checks the window before each packet, so the packet that
//! triggers the swap leaves under the old window and every packet after it under the new
//! one: when a garbler applies the hint before sending its reply to message 1, the reply's
//! second packet and everything after it (the tables) see the hinted window, paced by
//! quinn at 1.25 × window per smoothed round trip (its pacer rereads the window on every
//! packet). A hint set while nothing is sent or acknowledged waits for the next packet.
//!
//! # Why the swap is safe, and when it is refused
//!
//! The new controller starts as `quic:cc=X,iw=Y` starts a connection (slow start, or
//! BBR's startup, from the initial window), so the connection behaves from then on like a
//! fixed `quic:cc=X,iw=Y` one, whose behaviour the model is calibrated on. What it forgets
//! is the old controller's little history: the handshake and message 1 (a few packets, so
//! no useful bandwidth or ssthresh estimate) and any single loss among them, which the
//! old controller would have answered by halving a window that the hint replaces anyway.
//! The path's round-trip estimate is not the controller's (quinn keeps it per path and
//! hands it to every `on_ack`), so a fresh BBR takes its minimum RTT from the first ack;
//! acks of packets sent before the swap reach the new controller as ordinary acks (quinn's
//! BBR, cubic and NewReno all accept acks of packets they did not see sent).
//!
//! The swap is refused (the hint ignored, the current controller kept) once quinn has
//! reported *persistent* congestion, all packets lost over several round trips: the path
//! then has less capacity than anyone assumed, and a fresh large initial window would
//! flood it again. A later hint replaces an earlier one that was not yet taken; a hint
//! after a swap swaps again (the caller, not this module, decides to hint once).
//!
//! Cost: one atomic load per callback when no hint changed; the cell's lock is taken only
//! on a change.

use std::any::Any;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Instant;

use quinn::congestion::{Controller, ControllerFactory, ControllerMetrics};
use quinn_proto::RttEstimator;

use crate::channel::{SenderHint, TuneSender};
use crate::{Error, Result};

use super::params::{QuicCongestion, MAX_WINDOW, MIN_INITIAL_WINDOW};

/// A checked hint: a controller and its initial window (`None`: quinn's default).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Hint {
    pub(crate) cc: QuicCongestion,
    pub(crate) initial_window: Option<u64>,
}

impl Hint {
    /// Checks a [`SenderHint`] against the `quic` transport's `cc` and `iw` options.
    pub(crate) fn parse(hint: &SenderHint) -> Result<Self> {
        let bad = |option: &str, value: String, reason: String| Error::BadOption {
            transport: "quic",
            option: option.to_string(),
            value,
            reason,
        };
        let name = hint.congestion.as_deref().unwrap_or("cubic");
        let cc = QuicCongestion::from_name(name).ok_or_else(|| {
            bad("cc", name.to_string(), "one of cubic, bbr, newreno".to_string())
        })?;
        if let Some(w) = hint.initial_window {
            if !(MIN_INITIAL_WINDOW..=MAX_WINDOW).contains(&w) {
                return Err(bad(
                    "iw",
                    w.to_string(),
                    format!("from {MIN_INITIAL_WINDOW} to {MAX_WINDOW} bytes"),
                ));
            }
        }
        Ok(Hint {
            cc,
            initial_window: hint.initial_window,
        })
    }
}

/// The hint of one connection, shared by its controller (and the controller's clones) and
/// its channel's tuning handle.
#[derive(Debug, Default)]
pub(crate) struct HintCell {
    /// Bumped after each new hint; a controller compares it with the last one it saw.
    generation: AtomicU64,
    hint: Mutex<Option<Hint>>,
}

impl HintCell {
    /// Sets the hint; the connection's controller takes it at its next callback.
    pub(crate) fn set(&self, hint: Hint) {
        *self.hint.lock().unwrap_or_else(PoisonError::into_inner) = Some(hint);
        self.generation.fetch_add(1, Ordering::Release);
    }

    fn get(&self) -> Option<Hint> {
        *self.hint.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl TuneSender for HintCell {
    fn apply(&self, hint: &SenderHint) -> Result<()> {
        self.set(Hint::parse(hint)?);
        Ok(())
    }
}

/// Builds [`HintedController`]s around `base`'s, all watching one connection's cell.
pub(crate) struct HintedFactory {
    base: Arc<dyn ControllerFactory + Send + Sync>,
    cell: Arc<HintCell>,
}

impl HintedFactory {
    pub(crate) fn new(base: Arc<dyn ControllerFactory + Send + Sync>, cell: Arc<HintCell>) -> Self {
        HintedFactory { base, cell }
    }
}

impl ControllerFactory for HintedFactory {
    fn build(self: Arc<Self>, now: Instant, current_mtu: u16) -> Box<dyn Controller> {
        // A controller built after a hint (quinn rebuilds on migration to a new address)
        // starts from `seen: 0` and so takes the hint at its first callback.
        Box::new(HintedController {
            inner: self.base.clone().build(now, current_mtu),
            cell: self.cell.clone(),
            seen: 0,
            mtu: current_mtu,
            persistent: false,
            applied: None,
        })
    }
}

/// One of quinn's controllers, replaced by a fresh one when a new hint arrives (see the
/// module docs).
pub(crate) struct HintedController {
    inner: Box<dyn Controller>,
    cell: Arc<HintCell>,
    /// The cell's generation last acted on.
    seen: u64,
    /// The current MTU, to build a replacement for.
    mtu: u16,
    /// quinn reported persistent congestion: hints are no longer taken.
    persistent: bool,
    /// The hint `inner` was built from; `None`: the listener's own controller.
    applied: Option<Hint>,
}

impl HintedController {
    /// Takes a hint set since the last callback, unless the path saw persistent congestion.
    fn catch_up(&mut self, now: Instant) {
        let generation = self.cell.generation.load(Ordering::Acquire);
        if generation == self.seen {
            return;
        }
        self.seen = generation;
        if self.persistent {
            return;
        }
        if let Some(hint) = self.cell.get() {
            self.inner = hint.cc.factory(hint.initial_window).build(now, self.mtu);
            self.applied = Some(hint);
        }
    }

    /// The hint the current controller was built from, if any.
    #[cfg(test)]
    pub(crate) fn applied(&self) -> Option<Hint> {
        self.applied
    }

    /// The current (quinn) controller.
    #[cfg(test)]
    pub(crate) fn into_inner(self) -> Box<dyn Controller> {
        self.inner
    }
}

impl Controller for HintedController {
    fn on_sent(&mut self, now: Instant, bytes: u64, last_packet_number: u64) {
        self.catch_up(now);
        self.inner.on_sent(now, bytes, last_packet_number);
    }

    fn on_ack(
        &mut self,
        now: Instant,
        sent: Instant,
        bytes: u64,
        app_limited: bool,
        rtt: &RttEstimator,
    ) {
        self.catch_up(now);
        self.inner.on_ack(now, sent, bytes, app_limited, rtt);
    }

    fn on_end_acks(
        &mut self,
        now: Instant,
        in_flight: u64,
        app_limited: bool,
        largest_packet_num_acked: Option<u64>,
    ) {
        self.catch_up(now);
        self.inner
            .on_end_acks(now, in_flight, app_limited, largest_packet_num_acked);
    }

    fn on_congestion_event(
        &mut self,
        now: Instant,
        sent: Instant,
        is_persistent_congestion: bool,
        lost_bytes: u64,
    ) {
        // No catch-up here: a hint waiting now is judged at the next send or ack, after
        // this event marked the path (a loss under the old controller is its to answer).
        self.persistent |= is_persistent_congestion;
        self.inner
            .on_congestion_event(now, sent, is_persistent_congestion, lost_bytes);
    }

    fn on_mtu_update(&mut self, new_mtu: u16) {
        self.mtu = new_mtu;
        self.inner.on_mtu_update(new_mtu);
    }

    fn window(&self) -> u64 {
        self.inner.window()
    }

    fn metrics(&self) -> ControllerMetrics {
        self.inner.metrics()
    }

    fn clone_box(&self) -> Box<dyn Controller> {
        Box::new(HintedController {
            inner: self.inner.clone_box(),
            cell: self.cell.clone(),
            ..*self
        })
    }

    fn initial_window(&self) -> u64 {
        self.inner.initial_window()
    }

    fn into_any(self: Box<Self>) -> Box<dyn Any> {
        self
    }
}
