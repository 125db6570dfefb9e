//! A cold session that starts at once: over the `tcp` connection made while the path is
//! probed, stated as provisional, with the garbler's sending moved to the probe's choice
//! once the probe has settled ([`Mover::settle`]; the stream's side: [`crate::moving`]).
//! Nothing waits for the probe: on a short path its trains and its decision cost what
//! the session's first round trips take anyway.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Sender};
use std::sync::Arc;
use std::time::Duration;

use transputation_model::Path;
use transputation_transport::{Channel, Config, TransportSpec};

use super::{
    channel_for, close_in_background, connect_time, decision_of, stated, take_early, tune_sender,
    Agreement, Client, Early, Stated,
};
use crate::decide::Planner;
use crate::moving::Following;
use crate::wire::{self, Card, Decision, Move, Statement};
use crate::Error;

/// The longest round trip (as connecting kernel TCP took it) on which a session starts at
/// once. On a longer path the probe's first train, sent with its pings, reports about
/// when the card comes, so there is nothing to win by starting first; and a session
/// started over kernel TCP there pays its loss recovery in round trips (on a 50 ms link
/// with 1 % loss, a cold AES-128 session took 645 ms started at once against 204 over
/// `blast` decided first).
pub const PROVISIONAL_RTT: Duration = Duration::from_millis(10);

/// What a provisional statement states as the path: no measurement (the garbler leaves
/// its sending as accepted), only what passes as a path, a LAN's.
fn provisional_path() -> Path {
    Path::exact(0.0005, 125e6, 0.0)
}

/// A provisional session's way to its move.
pub struct Mover {
    server: SocketAddr,
    session: u64,
    secret: String,
    card: Card,
    /// The transport the session started on, as stated (kernel TCP, each side's default
    /// controller) and as the model names it on this host, and its listener's port.
    started: TransportSpec,
    as_modelled: TransportSpec,
    started_port: u16,
    early: Vec<Early>,
    offer: Sender<Box<dyn Channel>>,
    switched: Arc<AtomicBool>,
}

/// A session started at once ([`Client::start_provisional`]).
pub struct Started {
    /// The agreement on its start.
    pub agreement: Agreement,
    /// Its channel, whose garbler's side may move ([`Following`]).
    pub channel: Box<dyn Channel>,
    /// What moves it once the path is known.
    pub mover: Mover,
}

/// Where a provisional session's tables went, once settled.
#[derive(Debug, Clone)]
pub struct Settled {
    /// The transport they went on: the choice, or the one the session started on where
    /// the choice is a setting of its connection (or did not connect).
    pub transport: TransportSpec,
    /// The decision.
    pub decision: Decision,
    /// Whether the garbler's sending was asked to move; see [`Settled::carried`].
    pub moved: bool,
    switched: Arc<AtomicBool>,
}

impl Settled {
    /// The transport that carried the garbler's sending as far as this side has seen: the
    /// choice once the garbler's sending has moved there, else the one the session
    /// started on (a move asked for after the garbler's last message never happens).
    pub fn carried(&self) -> Option<&TransportSpec> {
        (!self.moved || self.switched.load(Ordering::Acquire)).then_some(&self.transport)
    }
}

impl Client {
    /// Starts the session at once over the early connection to the garbler's `tcp`
    /// listener ([`Client::connect_early`]), stating it provisional, with the garbler's
    /// `card` (and its JSON): the agreement, the channel (the garbler's sending may move,
    /// [`Following`]), and the [`Mover`] that moves it once the path is known. `None`
    /// (nothing sent, the early connections kept) where that connection took longer than
    /// [`PROVISIONAL_RTT`] to make (or was not made within four times that or
    /// `patience`), or the card names another port for `tcp`: the caller decides first,
    /// as for any session.
    pub fn start_provisional(
        &mut self,
        planner: &Planner,
        (card, card_json): (Card, Vec<u8>),
        cfg: &Config,
        patience: Duration,
    ) -> Result<Option<Started>, Error> {
        // Stated without a controller: the garbler leaves its sending as accepted, so each
        // side sends with its host's default until a move (the model compares with this
        // host's, `as_modelled`).
        let tcp: TransportSpec = "tcp".parse().expect("tcp is a transport");
        let Ok(as_modelled) = transputation_transport::auto::with_explicit_cc(tcp.clone()) else {
            return Ok(None);
        };
        let key = tcp.listen_key().to_string();
        let Some(port) = card.port_of(&key) else {
            return Ok(None);
        };
        let addr = SocketAddr::new(self.server.ip(), port);
        let Some(early) = self.early.iter().find(|e| e.key == key && e.addr == addr) else {
            return Ok(None);
        };
        // Its connecting's round trip, timed on its own thread; a connection not made
        // within four times the bound is not waited for here.
        let wait = patience.min(PROVISIONAL_RTT * 4);
        if connect_time(&early.took, wait).is_none_or(|t| t > PROVISIONAL_RTT) {
            return Ok(None);
        }
        let Some(mut ch) = take_early(&mut self.early, &tcp, addr) else {
            return Ok(None);
        };
        let (secret, commitment) = wire::move_secret();
        let decision = Decision {
            transport: tcp.to_string(),
            port,
            buffer_bytes: 0,
            predicted_ms: 0.0,
            why: "provisional: started at once over the connection made while the path is \
                  probed; the garbler's sending moves to the probe's choice"
                .into(),
            ranked: Vec::new(),
        };
        let statement = Statement {
            moves: Some(commitment),
            ..stated(
                self.session,
                &card_json,
                planner,
                &provisional_path(),
                decision.clone(),
            )
        };
        let (bytes, json) = wire::statement_bytes(&statement)
            .map_err(|e| Error::Refused(format!("stating the start: {e}")))?;
        ch.send(&bytes).map_err(|source| Error::Connect {
            transport: tcp.to_string(),
            source,
        })?;
        let (offer, offered) = mpsc::channel();
        let channel = Following::new(Box::new(Stated::new(ch)), offered, cfg.io_timeout);
        let switched = channel.switched();
        let agreement = Agreement {
            session: self.session,
            transport: tcp.clone(),
            addr,
            binding: wire::binding(self.session, &card_json, &json),
            decision,
            failed: Vec::new(),
            card_json,
            card_from: "garbler",
            early: true,
        };
        let mover = Mover {
            server: self.server,
            session: self.session,
            secret,
            card,
            started: tcp,
            as_modelled,
            started_port: port,
            early: std::mem::take(&mut self.early),
            offer,
            switched,
        };
        Ok(Some(Started {
            agreement,
            channel: Box::new(channel),
            mover,
        }))
    }
}

impl Mover {
    /// Decides on the measured `path` and, where the choice is another connection than
    /// the one the session runs on, connects it (the early one if made), states the move
    /// on it and offers it to the session's channel; the garbler sends on it from its next
    /// message. A choice that does not connect leaves the session where it is, with a
    /// warning.
    /// `tell` hears the outcome before the session can see the move (the reports of both
    /// parties must name the same carrier, whenever the session ends).
    pub fn settle(
        mut self,
        planner: &Planner,
        path: &Path,
        cfg: &Config,
        tell: impl FnOnce(&Settled),
    ) -> Result<Settled, Error> {
        let mut listeners = super::held_listeners(&self.early);
        listeners.push((self.started.listen_key().to_string(), self.started_port));
        let plan = planner
            .choose_connected(&self.card, path, &[], &listeners)
            .map_err(Error::Refused)?;
        let (transport, decision) = decision_of(&self.card, &plan);
        let stay = |decision: Decision, started: &TransportSpec| Settled {
            transport: started.clone(),
            decision,
            moved: false,
            switched: Arc::default(),
        };
        if transport.listen_key() == self.started.listen_key()
            || !worth_moving(&plan.decision, &self.as_modelled, &transport, path)
        {
            close_in_background(std::mem::take(&mut self.early));
            let settled = stay(decision, &self.started);
            tell(&settled);
            return Ok(settled);
        }
        let addr = SocketAddr::new(self.server.ip(), decision.port);
        let (connected, _) = channel_for(&mut self.early, &transport, addr, cfg, path.rtt);
        close_in_background(std::mem::take(&mut self.early));
        let mut ch = match connected {
            Ok(ch) => ch,
            Err(e) => {
                eprintln!(
                    "warning: auto chose {transport}, which did not connect to {addr} ({e}); \
                     the session stays on {}",
                    self.started
                );
                let settled = stay(decision, &self.started);
                tell(&settled);
                return Ok(settled);
            }
        };
        tune_sender(&*ch, &transport, path);
        let bytes = wire::move_bytes(&Move {
            session: self.session,
            secret: self.secret.clone(),
            path: *path,
            decision: decision.clone(),
            lane: None,
        })
        .map_err(|e| Error::Refused(format!("stating the move: {e}")))?;
        // Offered even if sending the move failed part way: the garbler may have read it,
        // and then the session's channel must find the connection (where it did not, no
        // move comes and the connection goes unused).
        if let Err(e) = ch.send(&bytes).and_then(|()| ch.flush()) {
            eprintln!("warning: stating the move to {transport} failed ({e})");
        }
        let settled = Settled {
            transport,
            decision,
            moved: true,
            switched: self.switched.clone(),
        };
        tell(&settled);
        // After the move is on its way: the garbler's marker of it may come back first,
        // and the session's channel waits for this.
        let _ = self.offer.send(ch);
        Ok(settled)
    }
}

/// Whether moving the garbler's sending from `started` to `choice` is predicted to gain
/// more than a round trip and a tenth of what the tables take over `started`, at the loss
/// estimate or at its bound, whichever is worse for each (the decision weighs the bound
/// too: a first train that lost nothing of 32 packets still allows 9 %). The session has
/// paid `started`'s fixed costs already, so only the network's part counts: the tables'
/// delivery (the longest of the session's bulk messages) over each. (On a LAN the model
/// ranks `blast` first by its smaller fixed cost; moving there mid-session gains nothing
/// of it, and its start at a rate the probe's first train read low loses.)
fn worth_moving(
    d: &transputation_model::Decision,
    started: &TransportSpec,
    choice: &TransportSpec,
    path: &Path,
) -> bool {
    // Seconds, or infinity where it cannot carry the session.
    let tables = |p: &Result<transputation_model::Prediction, String>| {
        p.as_ref()
            .ok()
            .and_then(|p| p.longest())
            .map_or(f64::INFINITY, |b| b.seconds)
    };
    let worst = |name: &str| {
        d.ranked.iter().find(|r| r.name == name).map(|r| {
            let at_bound = r.at_bound.as_ref().map_or(0.0, tables);
            tables(&r.expected).max(at_bound)
        })
    };
    let (Some(stay), Some(go)) = (worst(&started.to_string()), worst(&choice.to_string())) else {
        // The started setting is not among the predictions: move to the choice.
        return true;
    };
    if !stay.is_finite() {
        return go.is_finite();
    }
    stay - go > path.rtt + 0.1 * stay
}

#[cfg(test)]
mod tests;
