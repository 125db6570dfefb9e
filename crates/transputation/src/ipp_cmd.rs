//! `--parallel ipp` on `garbler` and `evaluator` (and on `run`, which starts both):
//! inter-party parallelism. The circuit is split into two independent parts
//! (`transputation_circuits::Split`), or cut into two regions and the glue that joins them
//! (`transputation_circuits::Mixed`); the garbler garbles part 0 for the evaluator while the
//! evaluator garbles part 1 for the garbler (`transputation_2pc::IppParty`, `MixedParty`),
//! each part on a connection of its own over the named transport, so that both directions of
//! the link carry tables; a cut's glue runs afterwards on a third connection.
//!
//! The evaluator opens each part's connection once the one before is up (beside the
//! handshakes before it), and begins each, inside its protected channel (whose handshake
//! therefore runs before the session, not with its first messages), with a hello of
//! [`HELLO_LEN`] bytes: [`MAGIC`], the part, the number of parts and a 16-byte token it drew
//! for this session. The garbler pairs connections by token and runs the first set that has
//! every part; a connection whose hello repeats a part of its token is turned away, one
//! whose first bytes are no hello (an evaluator without `--parallel ipp`) or whose number of
//! parts is not the garbler's (the parties cut the circuit differently: another circuit or
//! `--output`) ends the session with a message saying so. Once the first part is in, the
//! others must come within the I/O timeout (`--timeout`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use transputation_2pc::{Channel, IppParty, MixedParty, Options, OutputMode, Report};
use transputation_circuits::encoding::encode_party_input;
use transputation_circuits::{Mixed, Party, Split, SplitError};
use transputation_transport::{Credentials, Listener};

use crate::auto_connect::TransportArg;
use crate::party_cmd::{
    listen, ms, print_report, AroundSession, EvaluatorArgs, GarblerArgs, Printing, SessionArgs,
};
use crate::secure_cmd::{self, Protection};

/// The first bytes of an IPP connection's hello.
pub(crate) const MAGIC: &[u8; 6] = b"TPIPP1";
/// Magic, part, parts, token.
pub(crate) const HELLO_LEN: usize = MAGIC.len() + 2 + 16;

fn hello(part: u8, parts: u8, token: &[u8; 16]) -> [u8; HELLO_LEN] {
    let mut h = [0u8; HELLO_LEN];
    h[..MAGIC.len()].copy_from_slice(MAGIC);
    h[MAGIC.len()] = part;
    h[MAGIC.len() + 1] = parts;
    h[MAGIC.len() + 2..].copy_from_slice(token);
    h
}

/// Reads an evaluator's hello: the part it opens the connection for, and its token; its
/// session must have `parts` parts, as this garbler's has.
fn read_hello(ch: &mut dyn Channel, parts: usize) -> Result<(usize, [u8; 16])> {
    let mut h = [0u8; HELLO_LEN];
    ch.recv(&mut h)
        .context("reading the evaluator's --parallel ipp hello")?;
    if &h[..MAGIC.len()] != MAGIC {
        bail!(
            "the evaluator did not begin a --parallel ipp session (its first bytes are not \
             the IPP hello): give both parties --parallel ipp"
        );
    }
    let part = usize::from(h[MAGIC.len()]);
    let theirs = usize::from(h[MAGIC.len() + 1]);
    if theirs != parts {
        bail!(
            "the evaluator cut the circuit into {theirs} parts, this garbler into {parts}: \
             give both parties the same circuit and --output (an output for the evaluator \
             alone runs through a glue, a third part)"
        );
    }
    if part >= parts {
        bail!("the evaluator's IPP hello names part {part} of {parts}");
    }
    let mut token = [0u8; 16];
    token.copy_from_slice(&h[MAGIC.len() + 2..]);
    Ok((part, token))
}

/// How the session's circuit is cut: into independent pieces (two sessions), or into two
/// regions and the glue that joins them (three sessions, the last after the first two).
enum Plan {
    Parallel(Split),
    Cut(Box<Mixed>),
}

impl Plan {
    /// The cut of `circuit`: its independent pieces where it has them and the session's
    /// output goes to both (a party learns each piece's output), else regions and glue.
    fn of(s: &SessionArgs, circuit: &transputation_circuits::Circuit) -> Result<Plan> {
        let context = || format!("--parallel ipp on {}", s.circuit);
        let pieces = match Split::of(circuit, 2) {
            Ok(split) if s.output == OutputMode::Both => return Ok(Plan::Parallel(split)),
            Ok(_) => true,
            Err(SplitError::TooFewComponents { .. }) => false,
            Err(e) => return Err(e).with_context(context),
        };
        Mixed::of(circuit)
            .map(|m| Plan::Cut(Box::new(m)))
            .map_err(|e| match e {
                SplitError::TooFewComponents { .. } if pieces => anyhow!(
                    "the circuit's independent parts are too uneven to run through a glue \
                     (one region would have less than 30 % of the AND gates), as an output \
                     for the evaluator alone needs: give --output both"
                ),
                SplitError::TooFewComponents { .. } => anyhow!(
                    "the circuit has no independent parts and no cut into two balanced \
                     regions with at most 20 % of its AND gates after them (it is one chain, \
                     as AES-128 and SHA-256 are): inter-party parallelism has nothing to run \
                     side by side"
                ),
                e => anyhow!(e),
            })
            .with_context(context)
    }

    /// The session's connections.
    fn parts(&self) -> usize {
        match self {
            Plan::Parallel(_) => 2,
            Plan::Cut(_) => 3,
        }
    }

    /// One line on the cut.
    fn describe(&self) {
        match self {
            Plan::Parallel(split) => {
                let p = &split.parts;
                eprintln!(
                    "ipp: part 0 (garbled by the garbler) {} AND gates in {} independent \
                     part(s), part 1 (garbled by the evaluator) {} in {}",
                    p[0].and_gates, p[0].components, p[1].and_gates, p[1].components
                );
            }
            Plan::Cut(m) => eprintln!(
                "ipp: region 0 (garbled by the garbler) {} AND gates, region 1 (garbled by \
                 the evaluator) {}, then the glue (garbled by the garbler) {}, {} bits \
                 crossing as XOR shares",
                m.regions[0].and_gates,
                m.regions[1].and_gates,
                m.glue.and_gates,
                m.crossing.len()
            ),
        }
    }
}

/// A party's prepared sessions.
enum Prepared<'p> {
    Parallel(IppParty<'p>),
    Cut(MixedParty<'p>),
}

impl<'p> Prepared<'p> {
    fn new(plan: &'p Plan, role: Party, options: Options, input: &[bool]) -> Result<Self> {
        Ok(match plan {
            Plan::Parallel(split) => {
                Prepared::Parallel(IppParty::new(split, role, options, input)?)
            }
            Plan::Cut(m) => Prepared::Cut(MixedParty::new(m, role, options, input)?),
        })
    }

    /// Runs the sessions on `parts` (as many as the plan has) in part order.
    fn run(self, parts: Vec<Box<dyn Channel>>) -> Result<Report> {
        let mut parts = parts.into_iter();
        let mut next = || parts.next().expect("one channel per part");
        match self {
            Prepared::Parallel(p) => p.run(next(), next()),
            Prepared::Cut(p) => p.run(next(), next(), next()),
        }
        .map_err(|e| anyhow!(e).context("the 2PC session (--parallel ipp) failed"))
    }
}

/// The garbler's `n` part channels: connections paired by their hellos' token.
fn accept_parts(
    listener: &mut Listener,
    creds: Option<&Credentials>,
    n: usize,
    (accept_wait, io_timeout): (Duration, Duration),
) -> Result<(Vec<Box<dyn Channel>>, Protection)> {
    let accepting = Instant::now();
    let mut pending: HashMap<[u8; 16], Vec<Option<Box<dyn Channel>>>> = HashMap::new();
    // After the first part, the others are connections the same evaluator opened at once:
    // they get the I/O timeout, not what is left of --accept-timeout.
    let mut first_in: Option<Instant> = None;
    loop {
        let left = match first_in {
            None => accept_wait.saturating_sub(accepting.elapsed()),
            Some(t) => io_timeout.saturating_sub(t.elapsed()),
        };
        let (mut ch, protection) = match secure_cmd::accept(listener, creds, left) {
            Ok(a) => a,
            Err(e) if first_in.is_some() => {
                return Err(e).context(
                    "the evaluator opened one part of its --parallel ipp session and not all \
                     the others within the I/O timeout (--timeout)",
                )
            }
            Err(e) => return Err(e),
        };
        let (part, token) = read_hello(&mut *ch, n)?;
        let parts = pending
            .entry(token)
            .or_insert_with(|| (0..n).map(|_| None).collect());
        if parts[part].is_some() {
            eprintln!("turned away a second connection for part {part} of one session");
            continue;
        }
        parts[part] = Some(ch);
        first_in.get_or_insert_with(Instant::now);
        if parts.iter().all(Option::is_some) {
            let parts = pending.remove(&token).expect("just filled");
            return Ok((parts.into_iter().flatten().collect(), protection));
        }
    }
}

pub(crate) fn garbler(args: &GarblerArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    // `start` checks the flags, --parallel ipp's among them.
    let start = args.start()?;
    // Prepared before listening, as a sequential garbler is: an evaluator that connects
    // finds a garbler ready to answer its handshake.
    let t = Instant::now();
    let plan = Plan::of(s, &start.loaded.circuit)?;
    let party = Prepared::new(&plan, Party::Garbler, s.options(), &start.input)?;
    let setup_ms = ms(t.elapsed());
    // `listening on` stays the first line, for a launcher that reads it.
    let mut listener = listen(s, args.listen, &start.cfg)?;
    plan.describe();
    let (parts, protection) = accept_parts(
        &mut listener,
        start.creds.as_ref(),
        plan.parts(),
        (start.accept_wait, start.cfg.io_timeout),
    )?;
    eprintln!(
        "evaluator connected {} times (protection: {})",
        parts.len(),
        protection.name
    );
    let report = party.run(parts)?;
    let around = AroundSession {
        setup_ms,
        connect_ms: None,
        protection,
        started,
        transport: s.transport.to_string(),
        auto: None,
        settled: None,
    };
    print_report(s, &start.loaded, &around, &report, Printing::Single)
}

/// An evaluator's part channel: protected where the session is, its hello sent at once
/// (a protected channel sends it with its handshake's first message and runs the handshake
/// here: a garbler reads one part's hello before it accepts the other part's connection,
/// which a transport without a kernel backlog, `blast` or `udt`, answers only then); with
/// the handshake's time.
fn open_part(
    ch: Box<dyn Channel>,
    creds: Option<&Credentials>,
    (part, parts): (u8, u8),
    token: &[u8; 16],
) -> Result<(Box<dyn Channel>, Option<f64>)> {
    let opened = |e: transputation_transport::Error| {
        anyhow!(e).context(format!("opening part {part}'s session with the garbler"))
    };
    Ok(match creds {
        Some(c) => {
            let mut ch = secure_cmd::client(ch, c, None)?;
            ch.send(&hello(part, parts, token)).map_err(opened)?;
            ch.flush().map_err(opened)?;
            let handshake = secure_cmd::client_protection(&ch, c)?.handshake_ms;
            (Box::new(ch), Some(handshake))
        }
        None => {
            let mut ch = ch;
            ch.send(&hello(part, parts, token)).map_err(opened)?;
            ch.flush().map_err(opened)?;
            (ch, None)
        }
    })
}

pub(crate) fn evaluator(args: &EvaluatorArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    s.check_parallel()?;
    if args.repeat > 1 || args.inputs.is_some() {
        bail!("--parallel ipp runs one computation per session: not with --repeat or --inputs");
    }
    let TransportArg::Named(spec) = &s.transport else {
        unreachable!("checked above")
    };
    let creds = args.protection.credentials()?;
    let loaded = s.load(args.connect.place())?;
    let cfg = s.config(&loaded)?;
    let input = encode_party_input(&loaded.circuit, Party::Evaluator, &args.input)?;
    let t = Instant::now();
    let plan = Plan::of(s, &loaded.circuit)?;
    let split_ms = ms(t.elapsed());
    plan.describe();
    let peer = args.connect.resolve()?;
    let token: [u8; 16] = rand::random();
    // A part's connection, and the time it took.
    let dial = |part: u8| -> Result<(Box<dyn Channel>, f64)> {
        let t = Instant::now();
        let ch = spec.connect(peer, &cfg).with_context(|| {
            format!("connecting part {part} to the garbler at {peer} with {spec}")
        })?;
        Ok((ch, ms(t.elapsed())))
    };
    // Each part is dialled once the one before is up (a listener such as `mtcp`'s sets up
    // one connection at a time), beside the handshakes before it; all beside the preparing.
    let open_all = || -> Result<Vec<OpenedPart>> {
        std::thread::scope(|scope| {
            let mut opening = Vec::new();
            for part in 0..plan.parts() as u8 {
                let (ch, c) = dial(part)?;
                let creds = creds.as_ref();
                let token = &token;
                let parts = plan.parts() as u8;
                opening.push((
                    scope.spawn(move || open_part(ch, creds, (part, parts), token)),
                    c,
                ));
            }
            opening
                .into_iter()
                .map(|(h, c)| join(h).map(|(ch, hs)| (ch, c, hs)))
                .collect()
        })
    };
    let (prepared, parts) = std::thread::scope(|scope| {
        let t = Instant::now();
        let connecting = scope.spawn(open_all);
        let prepared = Prepared::new(&plan, Party::Evaluator, s.options(), &input)
            .map(|party| (party, split_ms + ms(t.elapsed())));
        (prepared, join(connecting))
    });
    let (party, setup_ms) = prepared?;
    let parts = parts?;
    let connect_ms: f64 = parts.iter().map(|p| p.1).sum();
    let handshakes: Vec<Option<f64>> = parts.iter().map(|p| p.2).collect();
    let protection = match &creds {
        // The handshakes ran side by side: the longest is the wait.
        Some(c) => Protection {
            name: c.protection(),
            handshake_ms: handshakes.iter().flatten().fold(0.0, |a: f64, &b| a.max(b)),
        },
        None => Protection::NONE,
    };
    let report = party.run(parts.into_iter().map(|p| p.0).collect())?;
    let around = AroundSession {
        setup_ms,
        // Each part was dialled after the one before was up.
        connect_ms: Some(connect_ms),
        protection,
        started,
        transport: s.transport.to_string(),
        auto: None,
        settled: None,
    };
    print_report(s, &loaded, &around, &report, Printing::Single)
}

/// An evaluator's part: its channel, the time its connection took and its handshake's.
type OpenedPart = (Box<dyn Channel>, f64, Option<f64>);

fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}
