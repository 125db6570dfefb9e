//! `transputation garbler` and `evaluator`: Yao's protocol between two processes (`run`,
//! which starts both, is `crate::run_cmd`).
//!
//! `garbler` listens, `evaluator` connects; both load the circuit and prepare before the
//! session (the evaluator prepares while it connects), so protocol time (`total_ms`) runs
//! from the established connection until both hold the output, and loading (`load_ms`),
//! preparation (`setup_ms`) and the evaluator's connecting (`connect_ms`) are reported
//! apart. `run` starts both as child processes of this binary over 127.0.0.1: the garbler
//! on a free port, which it announces on its standard error as `listening on ADDR`, then
//! the evaluator; it merges their JSON reports.
//!
//! Every session is protected (authenticated and encrypted, `crate::secure_cmd`) unless
//! `--insecure` says otherwise; `run` makes a one-time pre-shared key for its two parties.

use std::net::SocketAddr;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use transputation_2pc::{
    ByteParts, Channel, Evaluator, Garbler, LabelTransfer, OutputMode, Report,
};
use transputation_circuits::encoding::{decode_outputs, encode_party_input};
use transputation_circuits::{library, Circuit, Party, Stats};
use transputation_contract::{self as contract, PartyReport, Role, REPORT_VERSION};
use transputation_core::aes::Backend;
use transputation_garble::Scheme;
use transputation_transport::sizing::Sizing;
use transputation_transport::{Config, Credentials, Listener};

use crate::auto_connect::{parse_transport_arg, session_transport_help, TransportArg};
use crate::garble_cmd::{parse_backend, parse_scheme};
use crate::input_source::InputSource;
pub use crate::parallel_mode::ParallelMode;
use crate::parallel_mode::{ParallelChoice, PeerPlace};
use crate::secure_cmd::{self, Protection, ProtectionArgs};
use crate::transport_cmd::{parse_rate, path_sizing};

/// When a party plans its circuit (`--plan`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PlanMode {
    /// The whole circuit before the session: the fastest protocol (for circuits of at
    /// most 2^22 gates; a larger one is then planned whole too, and held in memory).
    Ahead,
    /// 2^19 gates at a time while garbling: the shortest wait for a one-off session.
    Stream,
}

impl PlanMode {
    /// The name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            PlanMode::Ahead => "ahead",
            PlanMode::Stream => "stream",
        }
    }
}

/// What both parties are told the same way.
#[derive(Args, Debug, Clone)]
pub struct SessionArgs {
    /// The circuit: a Bristol / Bristol Fashion file or a built-in such as `aes128` (see
    /// `circuit list`).
    #[arg(long)]
    pub(crate) circuit: String,
    /// For circuit files: the owner of each input group, in order, e.g. `evaluator,garbler`.
    #[arg(long, value_delimiter = ',', value_name = "PARTY,...")]
    pub(crate) parties: Option<Vec<Party>>,
    /// The garbling scheme: prf, circular or ideal (aliases glnp15, half-gates-rekeyed,
    /// half-gates-fixed-key, justgarble).
    #[arg(long, value_parser = parse_scheme, default_value = "ideal")]
    pub(crate) scheme: Scheme,
    /// The AES implementation this party garbles or evaluates with: portable, aes-ni,
    /// vaes256, vaes or armv8 (default: the fastest this CPU has). Each party chooses its
    /// own; the tables are the same bytes on every backend.
    #[arg(long, value_parser = parse_backend)]
    pub(crate) backend: Option<Backend>,
    /// How this party garbles or evaluates: none (one thread) or fgp (the wide waves of
    /// gates shared among --threads threads), each party choosing its own like --backend
    /// (the tables are the same bytes either way); or, given by both parties, ipp (each
    /// garbles half) or cgp (the circuit's parallel regions by pieces on --threads threads,
    /// for circuits that declare regions); or auto: this party's pick from its cores
    /// (--threads, else this machine's, halved when the peer's address is a loopback one),
    /// the link (--bandwidth against what one thread garbles) and the circuit's regions,
    /// cgp only where the peer says cgp or auto (the report's `parallel` and
    /// `parallel_why` say what it came to). Default: fgp if --threads is above 1.
    #[arg(long, value_enum)]
    pub(crate) parallel: Option<ParallelMode>,
    /// Threads for --parallel fgp or cgp (default: the cores this machine has); under
    /// auto, the most it may take (default: this machine's cores, half of them for a peer
    /// on a loopback address).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub(crate) threads: Option<u32>,
    /// Keep the plans of circuits planned before the session (up to 2^22 gates) in this
    /// directory, and load a circuit's plan from there instead of planning it again: for
    /// many runs of one circuit. An entry is checked whole before use; a corrupt or
    /// foreign one is planned again (with a warning) and replaced. Each party chooses its
    /// own; the tables are the same bytes either way.
    #[arg(long, value_name = "DIR")]
    pub(crate) plan_cache: Option<std::path::PathBuf>,
    /// When to plan the circuit: ahead (the whole circuit before the session, the fastest
    /// protocol) or stream (2^19 gates at a time while garbling, the shortest wait from the
    /// start to the output). Default: ahead for circuits of at most 2^22 gates, stream for
    /// larger ones. Each party chooses its own; the tables are the same bytes either way.
    #[arg(long, value_enum)]
    pub(crate) plan: Option<PlanMode>,
    /// The transport: NAME or NAME:key=value,... (see `transports`), or auto.
    #[arg(long, value_parser = parse_transport_arg, default_value = transputation_transport::DEFAULT_TRANSPORT, long_help = session_transport_help())]
    pub(crate) transport: TransportArg,
    /// Who learns the output: both (the evaluator sends it to the garbler) or evaluator.
    #[arg(long, default_value = "both")]
    pub(crate) output: OutputMode,
    /// Seconds a silent peer is waited for before giving up, once connected (the garbler's
    /// wait for an evaluator to connect is --accept-timeout).
    #[arg(long, default_value_t = 30.0)]
    pub(crate) timeout: f64,
    /// Seconds the evaluator keeps trying to reach the garbler (which may start after it)
    /// before giving up (the garbler, which listens, does not use it).
    #[arg(long, default_value_t = 10.0, value_name = "SECONDS")]
    pub(crate) connect_timeout: f64,
    /// The path's round-trip time in milliseconds; with --bandwidth, sizes the transport's
    /// buffers for the bytes this circuit and scheme send (paper §4.2).
    #[arg(long, requires = "bandwidth")]
    pub(crate) rtt_ms: Option<f64>,
    /// The path's bottleneck bandwidth, e.g. 100mbit or 1gbit; with --rtt-ms, sizes the
    /// transport's buffers.
    #[arg(long, value_parser = parse_rate, requires = "rtt_ms")]
    pub(crate) bandwidth: Option<u64>,
    /// Print JSON (keys: output, total_ms, ot_ms, garble_ms, eval_ms,
    /// bytes_garbler_to_evaluator, bytes_evaluator_to_garbler, scheme, transport, circuit,
    /// and_gates, load_ms, setup_ms, the bytes by part, and with --rtt-ms and --bandwidth
    /// the buffer sizing: buffer_bytes, bdp_bytes, paper_bound_bytes, volume_bytes;
    /// protection: none, noise-psk or noise-kk, and handshake_ms (the garbler's before
    /// total_ms, the evaluator's inside it); connect_ms (the evaluator's connect call),
    /// first_output_ms (process start to output), wall_ms (process start to this report)
    /// and peak_rss_bytes (the most memory it held), round_trips, backend (the AES
    /// implementation this party used), parallel, threads and parallel_why (how it
    /// garbled or evaluated; under --parallel auto, what it picked and why), lanes (the
    /// channels beside the session's that the tables travelled on under cgp, 0 for none),
    /// and paper_ms (the paper's
    /// measure: garbling, the tables' transfer and the output, OT and set-up excluded);
    /// auto (with --transport auto: the path, the choice, its prediction and why, the
    /// probe's and the agreement's times; null otherwise).
    #[arg(long)]
    pub(crate) json: bool,
}

#[derive(Args, Debug)]
pub struct GarblerArgs {
    /// The address to listen on for the evaluator (port 0: any free port, announced on
    /// standard error).
    #[arg(long, default_value = "127.0.0.1:7766")]
    pub(crate) listen: SocketAddr,
    /// Seconds to wait for an evaluator to connect (and, if protected, prove its key)
    /// before giving up: 10 minutes by default, time to start the evaluator elsewhere.
    /// With --serve: for the next evaluator, after which serving stops.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    pub(crate) accept_timeout: f64,
    /// The garbler's input: one hex string per input group it owns, comma-separated.
    #[arg(long, default_value = "")]
    pub(crate) input: String,
    /// Keep listening: serve evaluators one after another and several at once, each in a
    /// session of its own with this garbler's --input, each computation's report printed
    /// as it ends (one line each; JSON lines with --json). Stops when no evaluator
    /// connects within --accept-timeout, or after --sessions.
    #[arg(long)]
    pub(crate) serve: bool,
    /// With --serve: accept this many sessions, then stop once they have ended; the exit
    /// status says whether every one ended well.
    #[arg(long, requires = "serve", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) sessions: Option<u64>,
    /// With --serve: sessions served at once at most; further evaluators wait in the
    /// transport's queue until one ends.
    #[arg(long, default_value_t = 16, value_parser = clap::value_parser!(u64).range(1..=4096))]
    pub(crate) max_sessions: u64,
    #[command(flatten)]
    pub(crate) protection: ProtectionArgs,
    #[command(flatten)]
    pub(crate) session: SessionArgs,
}

/// Where the evaluator finds its garbler.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Peer {
    /// At this address.
    At(SocketAddr),
    /// At the address on the first line of standard input.
    OnStdin,
}

fn parse_peer(s: &str) -> Result<Peer, String> {
    if s == "-" {
        return Ok(Peer::OnStdin);
    }
    s.parse()
        .map(Peer::At)
        .map_err(|_| format!("{s:?} is not IP:PORT (or - to read it from standard input)"))
}

impl Peer {
    /// Where the garbler is, as far as the address says before it is read: on this
    /// machine for a loopback address; an address still to come on standard input is
    /// taken as elsewhere.
    pub(crate) fn place(self) -> PeerPlace {
        match self {
            Peer::At(a) if a.ip().is_loopback() => PeerPlace::ThisMachine,
            _ => PeerPlace::Elsewhere,
        }
    }

    /// The address, read from standard input where it comes from there: a line that is
    /// not an address, or none before the input ends, is an error.
    pub(crate) fn resolve(self) -> Result<SocketAddr> {
        match self {
            Peer::At(address) => Ok(address),
            Peer::OnStdin => {
                let mut line = String::new();
                std::io::stdin()
                    .read_line(&mut line)
                    .context("reading the garbler's address from standard input")?;
                if line.is_empty() {
                    bail!("standard input ended before the garbler's address came (--connect -)");
                }
                let line = line.trim();
                line.parse().with_context(|| {
                    format!("the garbler's address on standard input, {line:?}, is not IP:PORT")
                })
            }
        }
    }
}

#[derive(Args, Debug)]
pub struct EvaluatorArgs {
    /// The garbler's address (IP:PORT), or `-`: read it from the first line of standard
    /// input once the circuit is loaded and the input checked (for a launcher that starts
    /// both parties at once and learns the garbler's port from its `listening on` line).
    #[arg(long, default_value = "127.0.0.1:7766", value_parser = parse_peer)]
    pub(crate) connect: Peer,
    /// The evaluator's input: one hex string per input group it owns, comma-separated.
    #[arg(long, default_value = "")]
    pub(crate) input: String,
    /// Computations in one open session: --input this many times over one connection,
    /// one key exchange and one base OT; each computation after the first is one exchange
    /// with the garbler. Each computation's report is printed as it ends (one line each;
    /// JSON lines with --json).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) repeat: u64,
    /// Inputs one per line, each as --input takes it, one computation per line in one
    /// open session: a file, or - for standard input, read as the computations go (each
    /// output is printed before the next line is read). Instead of --input.
    #[arg(long, value_name = "FILE|-", conflicts_with_all = ["input", "repeat"])]
    pub(crate) inputs: Option<String>,
    /// With --transport auto: reuse a measurement of this garbler's path for this many
    /// seconds (0: probe every time); the cache is a file under $XDG_CACHE_HOME (or
    /// ~/.cache)/transputation.
    #[arg(long, default_value_t = 600.0, value_name = "SECONDS")]
    probe_cache: f64,
    #[command(flatten)]
    pub(crate) protection: ProtectionArgs,
    #[command(flatten)]
    pub(crate) session: SessionArgs,
}

/// A loaded circuit with the times it took, and the transport's buffer sizing for it.
pub(crate) struct Loaded {
    pub(crate) circuit: Circuit,
    pub(crate) and_gates: u64,
    /// Loading it, and under --parallel cgp cutting it into pieces.
    pub(crate) load_ms: f64,
    pub(crate) sizing: Option<Sizing>,
    /// How this party garbles it (under cgp, with its pieces).
    pub(crate) parallel: ParallelChoice,
}

impl SessionArgs {
    /// Loads the circuit and decides how this party garbles it, for a peer at `peer`.
    pub(crate) fn load(&self, peer: PeerPlace) -> Result<Loaded> {
        let start = Instant::now();
        let circuit = library::load_with_parties(&self.circuit, self.parties.as_deref())?;
        let stats = Stats::counts(&circuit);
        let parallel = self.parallel_choice(&circuit, peer)?;
        let load_ms = ms(start.elapsed());
        let sizing = match (self.rtt_ms, self.bandwidth) {
            (Some(rtt_ms), Some(bandwidth_bps)) => {
                // The garbler's volume: tables dominate; the seed of its input labels adds
                // 16 bytes, the OT's reply 32 per evaluator input bit under `prf`, 16 where
                // the garbler chooses the labels, none where the OT draws them.
                let n_e = circuit.party_input_bits(Party::Evaluator);
                let reply = LabelTransfer::first_of(self.scheme, &stats, n_e).reply_len(n_e);
                let volume = self.scheme.table_bytes(&stats)
                    + self.scheme.mask_bytes(&stats)
                    + 16
                    + reply as u64;
                Some(path_sizing(rtt_ms, bandwidth_bps, None, volume)?)
            }
            _ => None,
        };
        Ok(Loaded {
            circuit,
            and_gates: stats.and,
            load_ms,
            sizing,
            parallel,
        })
    }

    /// Checks the flags a party reads before it loads its circuit: the circuit's name (a
    /// built-in's parameters, a file's existence) and the time limits.
    pub(crate) fn check_flags(&self) -> Result<()> {
        library::check(&self.circuit)?;
        seconds("--timeout", self.timeout)?;
        seconds("--connect-timeout", self.connect_timeout)?;
        self.threads_wanted()?;
        self.check_parallel()
    }

    pub(crate) fn config(&self, loaded: &Loaded) -> Result<Config> {
        // Every party checks its threads here, before `options` takes them.
        self.check_threads(loaded)?;
        let io_timeout = seconds("--timeout", self.timeout)?;
        let connect_timeout = seconds("--connect-timeout", self.connect_timeout)?;
        // The default pause, or less for a --connect-timeout below it.
        let retry_delay = Config::default().retry_delay.min(connect_timeout);
        Ok(Config {
            io_timeout,
            // The garbler's wait for a first peer (--accept-timeout) is set on its listener
            // by `secure_cmd::accept`, which shortens it after each peer it turns away.
            accept_timeout: None,
            connect_timeout,
            // Retries every retry_delay for the whole --connect-timeout (a refused TCP
            // attempt returns at once).
            connect_attempts: u32::try_from(
                connect_timeout.as_nanos() / retry_delay.as_nanos().max(1),
            )
            .unwrap_or(u32::MAX)
            .max(1),
            retry_delay,
            buffer_bytes: loaded
                .sizing
                .map(|s| usize::try_from(s.buffer_bytes).unwrap_or(usize::MAX)),
            // A named transport runs with the kernel's timers; `auto` shortens them on a
            // short path for its own connections.
            short_path_timers: false,
        })
    }

    /// The garbling scheme.
    pub(crate) fn scheme(&self) -> Scheme {
        self.scheme
    }

    /// Whether the transport is `auto`.
    pub(crate) fn is_auto(&self) -> bool {
        matches!(self.transport, TransportArg::Auto | TransportArg::AutoRace)
    }

    /// The AES backend: the one asked for, else the fastest this CPU has.
    pub(crate) fn backend(&self) -> Backend {
        self.backend.unwrap_or_else(Backend::detect)
    }
}

/// The value of a flag of seconds, which must be positive.
pub(crate) fn seconds(flag: &str, v: f64) -> Result<Duration> {
    if !(v.is_finite() && v > 0.0 && v < 1e9) {
        bail!("{flag} must be a positive number of seconds, not {v}");
    }
    Ok(Duration::from_secs_f64(v))
}

pub(crate) fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn parts(p: &ByteParts) -> contract::ByteParts {
    contract::ByteParts {
        header: p.header,
        ot: p.ot,
        labels: p.labels,
        tables: p.tables,
        decoding: p.decoding,
        output: p.output,
        framing: p.framing,
    }
}

/// What a party measured around its session, beside the session's own [`Report`].
pub(crate) struct AroundSession {
    /// Preparing the party, ms.
    pub(crate) setup_ms: f64,
    /// The evaluator's connect call until the transport's channel was established, ms.
    pub(crate) connect_ms: Option<f64>,
    /// How the session was protected, and the handshake's time.
    pub(crate) protection: Protection,
    /// The process's start (the first thing `main` does).
    pub(crate) started: Instant,
    /// The transport the session ran over (under `auto`, the choice).
    pub(crate) transport: String,
    /// What `auto` measured and chose.
    pub(crate) auto: Option<transputation_contract::AutoReport>,
    /// For an `auto` session started at once: the transport its tables went on and the
    /// report of the decision, once the probe settled (before that, `transport` and
    /// `auto` stand).
    pub(crate) settled: Option<SettledLater>,
}

pub(crate) use crate::auto_connect::SettledLater;

impl AroundSession {
    /// The transport and the `auto` report as known now.
    fn transport_and_auto(&self) -> (String, Option<transputation_contract::AutoReport>) {
        match self.settled.as_ref().and_then(|f| f()) {
            Some((transport, auto)) => (transport, Some(auto)),
            None => (self.transport.clone(), self.auto.clone()),
        }
    }
}

/// One party's report of one computation (the contract's type, shared with whoever reads
/// it); `session` is the garbler's number of the session under --serve.
fn party_report(
    args: &SessionArgs,
    loaded: &Loaded,
    around: &AroundSession,
    r: &Report,
    session: Option<u64>,
) -> PartyReport {
    // What happened once per session is the first computation's.
    let first = r.computation == 1;
    let (transport, auto) = around.transport_and_auto();
    let (parallel, threads) = loaded.parallel.ran(r.frames);
    let (g2e, e2g, g2e_parts, e2g_parts) = match r.role {
        Party::Garbler => (r.channel.sent, r.channel.received, r.sent, r.received),
        Party::Evaluator => (r.channel.received, r.channel.sent, r.received, r.sent),
    };
    PartyReport {
        report_version: REPORT_VERSION,
        role: match r.role {
            Party::Garbler => Role::Garbler,
            Party::Evaluator => Role::Evaluator,
        },
        output: r
            .output
            .as_ref()
            .map(|bits| decode_outputs(&loaded.circuit, bits)),
        computation: u32::try_from(r.computation).unwrap_or(u32::MAX),
        session,
        total_ms: ms(r.total),
        online_ms: r.online.map(ms),
        connect_ms: around.connect_ms.filter(|_| first),
        first_output_ms: r
            .output
            .as_ref()
            .filter(|_| first)
            .map(|_| ms(r.output_at.saturating_duration_since(around.started))),
        wall_ms: ms(around.started.elapsed()),
        peak_rss_bytes: crate::report::peak_rss_bytes(),
        round_trips: r.round_trips,
        paper_ms: ms(r.paper),
        ot_ms: ms(r.ot),
        garble_ms: ms(r.garble),
        eval_ms: ms(r.eval),
        bytes_garbler_to_evaluator: g2e,
        bytes_evaluator_to_garbler: e2g,
        parts_garbler_to_evaluator: parts(&g2e_parts),
        parts_evaluator_to_garbler: parts(&e2g_parts),
        scheme: args.scheme.name().into(),
        backend: args.backend().name().into(),
        parallel: parallel.into(),
        threads: u32::try_from(threads).unwrap_or(u32::MAX),
        parallel_why: loaded.parallel.auto_why.clone(),
        lanes: u32::try_from(r.lanes).unwrap_or(u32::MAX),
        transport,
        circuit: args.circuit.clone(),
        and_gates: loaded.and_gates,
        load_ms: loaded.load_ms,
        setup_ms: around.setup_ms,
        buffer_bytes: loaded.sizing.map(|s| s.buffer_bytes),
        bdp_bytes: loaded.sizing.map(|s| s.bdp_bytes),
        paper_bound_bytes: loaded.sizing.and_then(|s| s.paper_bound_bytes),
        volume_bytes: loaded.sizing.map(|s| s.volume_bytes),
        protection: around.protection.name.into(),
        handshake_ms: around.protection.handshake_ms,
        auto: auto.filter(|_| first),
    }
}

/// How a party prints its reports: one pretty JSON object for a session of one
/// computation (as ever), one line per computation for an open session or a serving
/// garbler, whose reports follow each other.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Printing {
    /// One computation.
    Single,
    /// One line per computation; `session`: the garbler's number of it under --serve.
    Lines { session: Option<u64> },
}

pub(crate) fn print_report(
    args: &SessionArgs,
    loaded: &Loaded,
    around: &AroundSession,
    r: &Report,
    printing: Printing,
) -> Result<()> {
    let session = match printing {
        Printing::Lines { session } => session,
        Printing::Single => None,
    };
    let v = party_report(args, loaded, around, r, session);
    if r.lanes > 0 && r.computation == 1 {
        eprintln!(
            "{}: the tables' frames travelled on {} lanes beside the session's channel \
             (piece i of each stage on lane i mod {})",
            r.role, r.lanes, r.lanes
        );
    }
    if args.json {
        let json = v.to_json_value();
        match printing {
            Printing::Single => outln!("{}", serde_json::to_string_pretty(&json)?)?,
            Printing::Lines { .. } => outln!("{}", serde_json::to_string(&json)?)?,
        }
        return Ok(());
    }
    let output = v
        .output
        .as_deref()
        .unwrap_or("(only the evaluator learns it)");
    match session {
        Some(n) => outln!("session {n} computation {}: output {output}", r.computation)?,
        None => outln!("output: {output}")?,
    }
    if r.computation > 1 {
        eprintln!(
            "{}: computation {}{}: online {:.2} ms, protocol {:.2} ms (OT {:.2} ms), {} round \
             trips, {} bytes garbler→evaluator, {} bytes evaluator→garbler",
            r.role,
            r.computation,
            session
                .map(|n| format!(" of session {n}"))
                .unwrap_or_default(),
            v.online_ms.unwrap_or(f64::NAN),
            ms(r.total),
            ms(r.ot),
            v.round_trips,
            v.bytes_garbler_to_evaluator,
            v.bytes_evaluator_to_garbler,
        );
        return Ok(());
    }
    eprintln!(
        "{}: {} over {}, {} on {} AND gates: protocol {:.2} ms (OT {:.2} ms, paper's \
         measure {:.2} ms), {} round trips, {} bytes garbler→evaluator, {} bytes \
         evaluator→garbler; loading {:.1} ms, set-up {:.1} ms{}{}",
        r.role,
        args.circuit,
        v.transport,
        args.scheme,
        loaded.and_gates,
        ms(r.total),
        ms(r.ot),
        v.paper_ms,
        v.round_trips,
        v.bytes_garbler_to_evaluator,
        v.bytes_evaluator_to_garbler,
        loaded.load_ms,
        around.setup_ms,
        v.connect_ms
            .map(|c| format!(", connecting {c:.1} ms"))
            .unwrap_or_default(),
        v.first_output_ms
            .map(|f| format!("; output {f:.1} ms after this process started"))
            .unwrap_or_default(),
    );
    print_protection(&around.protection);
    if let Some(why) = &v.parallel_why {
        eprintln!(
            "parallel: {} on {} thread(s) (auto: {why})",
            v.parallel, v.threads
        );
    }
    if let Some(z) = &loaded.sizing {
        eprintln!(
            "buffers: {} bytes each way (bandwidth-delay product {} bytes, volume {} bytes, \
             limited by {})",
            z.buffer_bytes,
            z.bdp_bytes,
            z.volume_bytes,
            z.limited_by.as_str()
        );
    }
    Ok(())
}

fn print_protection(p: &Protection) {
    match p.name {
        "none" => eprintln!("protection: none (--insecure): not authenticated, not encrypted"),
        name => eprintln!(
            "protection: {name}, authenticated and encrypted (handshake {:.2} ms)",
            p.handshake_ms
        ),
    }
}

/// What a garbler, serving or not, starts from: its flags checked, its keys read, the
/// circuit loaded and its input encoded.
pub(crate) struct GarblerStart {
    pub(crate) accept_wait: Duration,
    pub(crate) creds: Option<Credentials>,
    pub(crate) loaded: Loaded,
    pub(crate) cfg: Config,
    pub(crate) input: Vec<bool>,
}

impl GarblerStart {
    /// The garbler of this circuit and input, and how long preparing it took (ms).
    pub(crate) fn garbler(&self, s: &SessionArgs) -> Result<(Garbler<'_>, f64)> {
        let t = Instant::now();
        let garbler = Garbler::new(
            &self.loaded.circuit,
            s.options_for(&self.loaded),
            &self.input,
        )?;
        Ok((garbler, ms(t.elapsed())))
    }
}

impl GarblerArgs {
    pub(crate) fn start(&self) -> Result<GarblerStart> {
        let s = &self.session;
        s.check_parallel()?;
        let accept_wait = seconds("--accept-timeout", self.accept_timeout)?;
        let creds = self.protection.credentials()?;
        let loaded = s.load(PeerPlace::of_listener(self.listen))?;
        let cfg = s.config(&loaded)?;
        let input = encode_party_input(&loaded.circuit, Party::Garbler, &self.input)?;
        Ok(GarblerStart {
            accept_wait,
            creds,
            loaded,
            cfg,
            input,
        })
    }
}

pub fn garbler(args: GarblerArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    let start = args.start()?;
    let (garbler, setup_ms) = start.garbler(s)?;
    let mut listener = listen(s, args.listen, &start.cfg)?;
    let (ch, protection) =
        secure_cmd::accept(&mut listener, start.creds.as_ref(), start.accept_wait)?;
    eprintln!("evaluator connected (protection: {})", protection.name);
    let around = AroundSession {
        setup_ms,
        connect_ms: None,
        protection,
        started,
        transport: s.transport.to_string(),
        auto: None,
        settled: None,
    };
    run_garbler_session(garbler, ch, s, &start.loaded, &around)
}

/// The garbler's session on `ch`, each computation's report printed as it ends (one
/// computation: the single report; an open session: a line each).
pub(crate) fn run_garbler_session(
    garbler: Garbler<'_>,
    ch: Box<dyn Channel>,
    s: &SessionArgs,
    loaded: &Loaded,
    around: &AroundSession,
) -> Result<()> {
    garbler
        .run_session(ch, |r| {
            let printing = match r.computation {
                1 => Printing::Single,
                _ => Printing::Lines { session: None },
            };
            print_report(s, loaded, around, &r, printing)
        })
        .map_err(|e| e.context("the 2PC session failed"))?;
    Ok(())
}

/// Listens for evaluators as `s` says, and announces where on standard error.
pub(crate) fn listen(s: &SessionArgs, addr: SocketAddr, cfg: &Config) -> Result<Listener> {
    let TransportArg::Named(spec) = &s.transport else {
        bail!("--transport auto does not serve (--serve) yet: name a transport");
    };
    let listener = spec
        .listen(addr, cfg)
        .with_context(|| format!("listening on {addr} with {spec}"))?;
    eprintln!("listening on {}", listener.local_addr());
    Ok(listener)
}

pub fn evaluator(args: EvaluatorArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    let creds = args.protection.credentials()?;
    let loaded = s.load(args.connect.place())?;
    let cfg = s.config(&loaded)?;
    let mut inputs = InputSource::new(&args.input, args.repeat, args.inputs.as_deref())?;
    let Some(input) = inputs.next(&loaded.circuit)? else {
        bail!("no input lines in {}: nothing to compute", inputs.name());
    };
    // Connecting takes a round trip or more, preparing the evaluation (planning, touching
    // its buffers) a few hundred ms on a large circuit: they overlap. The input is checked
    // first, so that a wrong input never reaches the garbler.
    let (prepared, connected) = std::thread::scope(|scope| {
        let connecting = scope.spawn(|| {
            let peer = args.connect.resolve()?;
            let t = Instant::now();
            let (ch, auto) = match &s.transport {
                TransportArg::Named(spec) => {
                    let ch = spec.connect(peer, &cfg).with_context(|| {
                        format!("connecting to the garbler at {peer} with {spec}")
                    })?;
                    (ch, None)
                }
                TransportArg::Auto | TransportArg::AutoRace => {
                    let p = args.probe_cache;
                    if !(p.is_finite() && p >= 0.0) {
                        bail!("--probe-cache must be 0 or a number of seconds, not {p}");
                    }
                    let ttl = Duration::try_from_secs_f64(p)
                        .with_context(|| format!("--probe-cache {p} is too long"))?;
                    let a = crate::auto_connect::evaluator_connect(
                        &loaded.circuit,
                        s.scheme,
                        peer,
                        &cfg,
                        ttl,
                        matches!(s.transport, TransportArg::AutoRace),
                    )?;
                    (a.channel, Some((a.agreement, a.report, a.settled)))
                }
            };
            anyhow::Ok((ch, ms(t.elapsed()), auto))
        });
        let start = Instant::now();
        let prepared = Evaluator::new(&loaded.circuit, s.options_for(&loaded), &input)
            .map(|evaluator| (evaluator, ms(start.elapsed())));
        let connected = connecting
            .join()
            .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
        (prepared, connected)
    });
    let (evaluator, setup_ms) = prepared?;
    let (ch, connect_ms, auto) = connected?;
    let (auto, settled) = match auto {
        Some((agreement, report, settled)) => (Some((agreement, report)), settled),
        None => (None, None),
    };
    let mut around = AroundSession {
        setup_ms,
        connect_ms: Some(connect_ms),
        protection: secure_cmd::Protection::NONE,
        started,
        transport: auto
            .as_ref()
            .map_or_else(|| s.transport.to_string(), |(a, _)| a.transport.to_string()),
        auto: auto.as_ref().map(|(_, r)| r.clone()),
        settled,
    };
    let Some(creds) = creds else {
        return evaluate(
            ch,
            &|_| Ok(secure_cmd::Protection::NONE),
            evaluator,
            inputs,
            s,
            &loaded,
            &mut around,
        );
    };
    let binding = auto.as_ref().map(|(a, _)| a.binding.as_slice());
    let ch = secure_cmd::client(ch, &creds, binding)?;
    evaluate(
        ch,
        &|ch| secure_cmd::client_protection(ch, &creds),
        evaluator,
        inputs,
        s,
        &loaded,
        &mut around,
    )
}

/// The evaluator's session on `ch`: one computation, or an open session of one
/// computation per input; `protection` reads how `ch` protected it, for the reports.
#[allow(clippy::too_many_arguments)]
fn evaluate<C: Channel>(
    mut ch: C,
    protection: &dyn Fn(&C) -> Result<secure_cmd::Protection>,
    evaluator: Evaluator<'_>,
    mut inputs: InputSource,
    s: &SessionArgs,
    loaded: &Loaded,
    around: &mut AroundSession,
) -> Result<()> {
    if !inputs.opens_session() {
        let report = evaluator.run(&mut ch).context("the 2PC session failed")?;
        around.protection = protection(&ch)?;
        return print_report(s, loaded, around, &report, Printing::Single);
    }
    let (mut session, first) = evaluator.open(&mut ch).context("the 2PC session failed")?;
    around.protection = protection(session.channel())?;
    let lines = Printing::Lines { session: None };
    print_report(s, loaded, around, &first, lines)?;
    loop {
        let input = match inputs.next(&loaded.circuit) {
            Ok(Some(input)) => input,
            Ok(None) => break,
            Err(e) => {
                // Ends the session in good order first: the garbler need not wait for
                // its timeout to learn that no computation follows.
                let _ = session.close();
                return Err(e);
            }
        };
        let report = session.compute(&input).with_context(|| {
            format!(
                "computation {} of the open session failed",
                session.computations() + 1
            )
        })?;
        print_report(s, loaded, around, &report, lines)?;
    }
    session.close().context("closing the open session")?;
    Ok(())
}
