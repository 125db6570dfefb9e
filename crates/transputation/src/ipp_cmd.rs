//! `--parallel ipp` on `garbler` and `evaluator` (and on `run`, which starts both):
//! inter-party parallelism. The circuit is split into two independent parts
//! (`transputation_circuits::Split`); the garbler garbles part 0 for the evaluator while the
//! evaluator garbles part 1 for the garbler (`transputation_2pc::IppParty`), each part on a
//! connection of its own over the named transport, so that both directions of the link
//! carry tables.
//!
//! The evaluator opens part 0's connection, then part 1's (beside part 0's handshake), and
//! begins each, inside its protected channel (whose handshake therefore runs before the
//! session, not with its first messages), with a hello of [`HELLO_LEN`] bytes: [`MAGIC`], the part (0 or 1) and a 16-byte
//! token it drew for this session. The garbler pairs connections by token and runs the first
//! pair that has both parts; a connection whose hello repeats a part of its token is turned
//! away, and one whose first bytes are no hello (an evaluator without `--parallel ipp`) ends
//! the session with a message saying so. Once the first part is in, the second must come
//! within the I/O timeout (`--timeout`).

use std::collections::HashMap;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use transputation_2pc::{Channel, IppParty};
use transputation_circuits::encoding::encode_party_input;
use transputation_circuits::{Party, Split};
use transputation_transport::{Credentials, Listener};

use crate::auto_connect::TransportArg;
use crate::party_cmd::{
    listen, ms, print_report, AroundSession, EvaluatorArgs, GarblerArgs, Printing, SessionArgs,
};
use crate::secure_cmd::{self, Protection};

/// The first bytes of an IPP connection's hello.
pub(crate) const MAGIC: &[u8; 6] = b"TPIPP1";
/// Magic, part, token.
pub(crate) const HELLO_LEN: usize = MAGIC.len() + 1 + 16;

fn hello(part: u8, token: &[u8; 16]) -> [u8; HELLO_LEN] {
    let mut h = [0u8; HELLO_LEN];
    h[..MAGIC.len()].copy_from_slice(MAGIC);
    h[MAGIC.len()] = part;
    h[MAGIC.len() + 1..].copy_from_slice(token);
    h
}

/// Reads an evaluator's hello: the part it opens the connection for, and its token.
fn read_hello(ch: &mut dyn Channel) -> Result<(usize, [u8; 16])> {
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
    if part > 1 {
        bail!("the evaluator's IPP hello names part {part}; a session has parts 0 and 1");
    }
    let mut token = [0u8; 16];
    token.copy_from_slice(&h[MAGIC.len() + 1..]);
    Ok((part, token))
}

/// The split of the session's circuit.
fn split(s: &SessionArgs, circuit: &transputation_circuits::Circuit) -> Result<Split> {
    Split::of(circuit, 2).with_context(|| format!("--parallel ipp on {}", s.circuit))
}

/// One line on the split.
fn describe(split: &Split) {
    let p = &split.parts;
    eprintln!(
        "ipp: part 0 (garbled by the garbler) {} AND gates in {} independent part(s), part 1 \
         (garbled by the evaluator) {} in {}",
        p[0].and_gates, p[0].components, p[1].and_gates, p[1].components
    );
}

/// The garbler's two part channels: connections paired by their hellos' token.
fn accept_parts(
    listener: &mut Listener,
    creds: Option<&Credentials>,
    accept_wait: Duration,
    io_timeout: Duration,
) -> Result<([Box<dyn Channel>; 2], Protection)> {
    let accepting = Instant::now();
    let mut pending: HashMap<[u8; 16], [Option<Box<dyn Channel>>; 2]> = HashMap::new();
    // After the first part, the second is a connection the same evaluator opened at once:
    // it gets the I/O timeout, not what is left of --accept-timeout.
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
                    "the evaluator opened one part of its --parallel ipp session and not the \
                     other within the I/O timeout (--timeout)",
                )
            }
            Err(e) => return Err(e),
        };
        let (part, token) = read_hello(&mut *ch)?;
        let parts = pending.entry(token).or_default();
        if parts[part].is_some() {
            eprintln!("turned away a second connection for part {part} of one session");
            continue;
        }
        parts[part] = Some(ch);
        first_in.get_or_insert_with(Instant::now);
        if parts.iter().all(Option::is_some) {
            let [Some(a), Some(b)] = pending.remove(&token).expect("just filled") else {
                unreachable!("both parts are in")
            };
            return Ok(([a, b], protection));
        }
    }
}

pub(crate) fn garbler(args: &GarblerArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    s.check_ipp()?;
    let start = args.start()?;
    // Prepared before listening, as a sequential garbler is: an evaluator that connects
    // finds a garbler ready to answer its handshake.
    let t = Instant::now();
    let split = split(s, &start.loaded.circuit)?;
    let party = IppParty::new(&split, Party::Garbler, s.options(), &start.input)?;
    let setup_ms = ms(t.elapsed());
    // `listening on` stays the first line, for a launcher that reads it.
    let mut listener = listen(s, args.listen, &start.cfg)?;
    describe(&split);
    let ([part0, part1], protection) = accept_parts(
        &mut listener,
        start.creds.as_ref(),
        start.accept_wait,
        start.cfg.io_timeout,
    )?;
    eprintln!(
        "evaluator connected twice (protection: {})",
        protection.name
    );
    let report = party
        .run(part0, part1)
        .map_err(|e| anyhow!(e).context("the 2PC session (--parallel ipp) failed"))?;
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
    part: u8,
    token: &[u8; 16],
) -> Result<(Box<dyn Channel>, Option<f64>)> {
    let opened = |e: transputation_transport::Error| {
        anyhow!(e).context(format!("opening part {part}'s session with the garbler"))
    };
    Ok(match creds {
        Some(c) => {
            let mut ch = secure_cmd::client(ch, c, None)?;
            ch.send(&hello(part, token)).map_err(opened)?;
            ch.flush().map_err(opened)?;
            let handshake = secure_cmd::client_protection(&ch, c)?.handshake_ms;
            (Box::new(ch), Some(handshake))
        }
        None => {
            let mut ch = ch;
            ch.send(&hello(part, token)).map_err(opened)?;
            ch.flush().map_err(opened)?;
            (ch, None)
        }
    })
}

pub(crate) fn evaluator(args: &EvaluatorArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    s.check_ipp()?;
    if args.repeat > 1 || args.inputs.is_some() {
        bail!("--parallel ipp runs one computation per session: not with --repeat or --inputs");
    }
    let TransportArg::Named(spec) = &s.transport else {
        unreachable!("checked above")
    };
    let creds = args.protection.credentials()?;
    let loaded = s.load()?;
    let cfg = s.config(&loaded)?;
    let input = encode_party_input(&loaded.circuit, Party::Evaluator, &args.input)?;
    let t = Instant::now();
    let split = split(s, &loaded.circuit)?;
    let split_ms = ms(t.elapsed());
    describe(&split);
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
    // Part 1 is dialled once part 0's connection is up (a listener such as `mtcp`'s sets up
    // one connection at a time), beside part 0's handshake; both beside the preparing.
    let both = || -> Result<[OpenedPart; 2]> {
        let (ch0, c0) = dial(0)?;
        std::thread::scope(|scope| {
            let first = scope.spawn(|| open_part(ch0, creds.as_ref(), 0, &token));
            let second = dial(1).and_then(|(ch1, c1)| {
                open_part(ch1, creds.as_ref(), 1, &token).map(|(ch1, h1)| (ch1, c1, h1))
            });
            let (ch0, h0) = join(first)?;
            Ok([(ch0, c0, h0), second?])
        })
    };
    let (prepared, parts) = std::thread::scope(|scope| {
        let t = Instant::now();
        let connecting = scope.spawn(both);
        let prepared = IppParty::new(&split, Party::Evaluator, s.options(), &input)
            .map(|party| (party, split_ms + ms(t.elapsed())));
        (prepared, join(connecting))
    });
    let (party, setup_ms) = prepared?;
    let [(part0, c0, h0), (part1, c1, h1)] = parts?;
    let protection = match (&creds, h0, h1) {
        // The two handshakes ran side by side: the longer is the wait.
        (Some(c), Some(a), Some(b)) => Protection {
            name: c.protection(),
            handshake_ms: a.max(b),
        },
        _ => Protection::NONE,
    };
    let report = party
        .run(part0, part1)
        .map_err(|e| anyhow!(e).context("the 2PC session (--parallel ipp) failed"))?;
    let around = AroundSession {
        setup_ms,
        // Part 1 was dialled after part 0 was up.
        connect_ms: Some(c0 + c1),
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
