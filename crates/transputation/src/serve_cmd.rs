//! `transputation garbler --serve`: a garbler that keeps listening and serves evaluators one
//! after another and several at once, each in a session of its own on a thread of its own
//! (at most `--max-sessions` at once; further evaluators wait in the transport's queue),
//! each computation's report printed as one line as it ends. A session that fails is
//! logged and ends alone; the others go on. Serving stops when no evaluator has connected
//! for `--accept-timeout`, or after `--sessions`; the sessions under way end first.

use std::sync::{Condvar, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use transputation_2pc::Garbler;
use transputation_transport::{Channel, Credentials, Listener};

use crate::party_cmd::{
    listen, ms, print_report, AroundSession, GarblerArgs, GarblerStart, Loaded, Printing,
    SessionArgs,
};
use crate::secure_cmd::{self, Protection};

/// What `--serve` serves with.
struct Served<'a> {
    session: &'a SessionArgs,
    loaded: &'a Loaded,
    /// The garbler's input, the same for every computation of every session.
    input: &'a [bool],
    creds: Option<&'a Credentials>,
    /// How long to wait for the next evaluator before stopping.
    accept_wait: Duration,
    /// Sessions to accept before stopping, if limited.
    sessions: Option<u64>,
    max_sessions: usize,
    /// The process's start.
    started: Instant,
}

/// A counting semaphore: the sessions that may run at once.
struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

impl Slots {
    fn take(&self) {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
    }

    fn give_back(&self) {
        *self.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.freed.notify_one();
    }
}

/// How the sessions ended.
#[derive(Default)]
struct Tally {
    ended_well: u64,
    failed: u64,
    computations: u64,
}

/// `garbler --serve`.
pub(crate) fn garbler(args: GarblerArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    if s.is_ipp() {
        bail!("--parallel ipp does not serve (--serve) yet: one session per garbler");
    }
    let GarblerStart {
        accept_wait,
        creds,
        loaded,
        cfg,
        input,
    } = args.start()?;
    let listener = listen(s, args.listen, &cfg)?;
    let served = Served {
        session: s,
        loaded: &loaded,
        input: &input,
        creds: creds.as_ref(),
        accept_wait,
        sessions: args.sessions,
        max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
        started,
    };
    serve(served, listener)
}

fn serve(sv: Served<'_>, mut listener: Listener) -> Result<()> {
    let slots = Slots {
        free: Mutex::new(sv.max_sessions),
        freed: Condvar::new(),
    };
    let tally = Mutex::new(Tally::default());
    let (sv_ref, slots_ref, tally_ref) = (&sv, &slots, &tally);
    let stopped = thread::scope(|scope| -> Result<String> {
        let mut accepted = 0u64;
        loop {
            if sv_ref.sessions.is_some_and(|n| accepted >= n) {
                return Ok(format!("{accepted} sessions accepted (--sessions)"));
            }
            slots_ref.take();
            let ch = match secure_cmd::next_connection(
                &mut listener,
                Instant::now(),
                sv_ref.accept_wait,
            ) {
                Ok(ch) => ch,
                Err(transputation_transport::Error::Timeout { .. }) => {
                    slots_ref.give_back();
                    return Ok(format!(
                        "no evaluator connected for {:.0} s (--accept-timeout)",
                        sv_ref.accept_wait.as_secs_f64()
                    ));
                }
                Err(e) => {
                    slots_ref.give_back();
                    return Err(e).with_context(|| {
                        format!("waiting for evaluators on {}", listener.local_addr())
                    });
                }
            };
            accepted += 1;
            let id = accepted;
            scope.spawn(move || {
                let outcome = serve_session(sv_ref, id, ch);
                {
                    let mut t = tally_ref.lock().unwrap_or_else(|e| e.into_inner());
                    match outcome {
                        Ok(n) => {
                            t.ended_well += 1;
                            t.computations += n;
                        }
                        Err(e) => {
                            t.failed += 1;
                            eprintln!("session {id} failed: {e:#}");
                        }
                    }
                }
                slots_ref.give_back();
            });
        }
    });
    // Every session thread has ended here (the scope joins them).
    let t = tally.into_inner().unwrap_or_else(|e| e.into_inner());
    let why = match &stopped {
        Ok(why) => why.clone(),
        Err(e) => format!("accepting failed: {e:#}"),
    };
    eprintln!(
        "served {} sessions ({} computations), {} failed; stopped: {why}",
        t.ended_well + t.failed,
        t.computations,
        t.failed
    );
    stopped?;
    if t.failed > 0 {
        bail!(
            "{} of {} sessions failed (see above)",
            t.failed,
            t.ended_well + t.failed
        );
    }
    Ok(())
}

/// Session `id` on an accepted connection: the handshake, then every computation the
/// evaluator asks for. Returns the number of computations.
fn serve_session(sv: &Served<'_>, id: u64, ch: Box<dyn Channel>) -> Result<u64> {
    let peer = ch
        .peer_addr()
        .map_or_else(String::new, |a| format!(" at {a}"));
    let (ch, protection) = match sv.creds {
        None => (ch, Protection::NONE),
        Some(creds) => {
            secure_cmd::server(ch, creds).map_err(|e| anyhow!("refused a peer{peer}: {e}"))?
        }
    };
    eprintln!(
        "session {id}: evaluator connected{peer} (protection: {})",
        protection.name
    );
    let s = sv.session;
    let start = Instant::now();
    let garbler = Garbler::new(&sv.loaded.circuit, s.options_for(sv.loaded), sv.input)?;
    let around = AroundSession {
        setup_ms: ms(start.elapsed()),
        connect_ms: None,
        protection,
        started: sv.started,
        transport: sv.session.transport.to_string(),
        auto: None,
        settled: None,
    };
    let lines = Printing::Lines { session: Some(id) };
    let n = garbler
        .run_session(ch, |r| print_report(s, sv.loaded, &around, &r, lines))
        .map_err(|e| e.context("the 2PC session failed"))?;
    eprintln!("session {id}: ended after {n} computations");
    Ok(n)
}
