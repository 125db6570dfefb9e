//! `transputation run`: both parties of a session as child processes of this binary over
//! 127.0.0.1, started together: the garbler on a free port, which it announces on its
//! standard error as `listening on ADDR`, the evaluator told that address on its standard
//! input (`--connect -`); their JSON reports merged into one. The two
//! share a one-time pre-shared key made for the run unless `--insecure` says otherwise.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use clap::Args;
use serde_json::json;
use transputation_2pc::OutputMode;
use transputation_contract::{self as contract, PartyArgs, PartyReport, Role, REPORT_VERSION};

use crate::party_cmd::{ParallelMode, SessionArgs};
use crate::secure_cmd;

/// `transputation run`'s flags.
#[derive(Args, Debug)]
pub struct RunArgs {
    /// The garbler's input: one hex string per input group it owns, comma-separated.
    #[arg(long, default_value = "")]
    garbler_input: String,
    /// The evaluator's input: one hex string per input group it owns, comma-separated.
    #[arg(long, default_value = "")]
    evaluator_input: String,
    /// Run both parties without authentication or encryption (by default they share a
    /// one-time pre-shared key made for this run).
    #[arg(long)]
    insecure: bool,
    #[command(flatten)]
    session: SessionArgs,
}

/// The command line of a party of `run`'s session (the contract's type, shared with the
/// testbed's runner).
fn party_args(
    s: &SessionArgs,
    role: Role,
    address: SocketAddr,
    input: &str,
    protection: Option<&Path>,
) -> PartyArgs {
    let mut p = PartyArgs::new(
        role,
        address,
        &s.circuit,
        s.scheme.name(),
        &s.transport.to_string(),
    );
    p.input = input.into();
    p.backend = s.backend.map(|b| b.name().to_string());
    // Each party's own tuning, as the backend (not part of the session).
    p.parallel = s.parallel.map(|m| m.name().to_string());
    p.threads = s.threads;
    // Both parties run on this machine: under `auto` each may take half its cores (the
    // evaluator, told the garbler's address on standard input, cannot tell on its own).
    if s.parallel == Some(ParallelMode::Auto) && s.threads.is_none() {
        p.threads = Some(contract::threads_of_two_parties_here());
    }
    p.plan_cache = s.plan_cache.clone();
    p.plan = s.plan.map(|m| m.name().to_string());
    p.protection = Some(match protection {
        Some(psk) => contract::Protection::PskFile(psk.to_path_buf()),
        None => contract::Protection::Insecure,
    });
    p.output = Some(s.output.to_string());
    p.timeout_secs = Some(s.timeout);
    p.connect_timeout_secs = Some(s.connect_timeout);
    p.path = s.rtt_ms.zip(s.bandwidth);
    p.parties = s
        .parties
        .as_ref()
        .map(|ps| ps.iter().map(|p| p.name().to_string()).collect());
    p
}

/// A party process whose standard error is collected by a thread (and, for the garbler,
/// scanned for the announced address).
struct PartyProcess {
    name: &'static str,
    child: Child,
    stderr: Option<thread::JoinHandle<String>>,
}

impl PartyProcess {
    /// Starts the party; `stdin` is piped where the party reads its peer's address there.
    fn spawn(
        name: &'static str,
        args: Vec<String>,
        announce: Option<mpsc::Sender<String>>,
        stdin: Stdio,
    ) -> Result<Self> {
        let exe = std::env::current_exe().context("finding this program to start the parties")?;
        let mut child = Command::new(exe)
            .args(&args)
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .with_context(|| format!("starting the {name}"))?;
        let err = child.stderr.take().expect("piped");
        let stderr = thread::spawn(move || {
            let mut all = String::new();
            for line in BufReader::new(err).lines().map_while(|l| l.ok()) {
                if let (Some(tx), Some(addr)) = (&announce, line.strip_prefix("listening on ")) {
                    let _ = tx.send(addr.trim().to_string());
                }
                all.push_str(&line);
                all.push('\n');
            }
            all
        });
        Ok(PartyProcess {
            name,
            child,
            stderr: Some(stderr),
        })
    }

    /// Waits for the process; its JSON report, or an error with what it printed.
    fn finish(mut self) -> Result<PartyReport> {
        let mut out = String::new();
        if let Some(mut o) = self.child.stdout.take() {
            o.read_to_string(&mut out)
                .context("reading a party's report")?;
        }
        let status = self.child.wait().context("waiting for a party")?;
        let err = self
            .stderr
            .take()
            .and_then(|h| h.join().ok())
            .unwrap_or_default();
        if !status.success() {
            bail!("the {} failed ({status}):\n{}", self.name, err.trim_end());
        }
        Ok(PartyReport::from_json(self.name, &out)?)
    }

    /// [`PartyProcess::finish`] if the process ends within `wait`; `None` if it still runs.
    fn finish_within(mut self, wait: Duration) -> Option<Result<PartyReport>> {
        let deadline = Instant::now() + wait;
        loop {
            match self.child.try_wait() {
                Ok(Some(_)) | Err(_) => return Some(self.finish()),
                Ok(None) if Instant::now() >= deadline => return None,
                Ok(None) => thread::sleep(Duration::from_millis(10)),
            }
        }
    }
}

impl Drop for PartyProcess {
    fn drop(&mut self) {
        // Never leave a party behind (after an error the other may still wait).
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `transputation run`: the flags checked, the parties started and their reports merged;
/// `started` is this process's start, from which the merged report's `wall_ms` runs.
pub fn run(args: RunArgs, started: Instant) -> Result<()> {
    let s = &args.session;
    // The flags are checked here, so that a typo is reported once and before any process
    // starts; the circuit and the inputs are each party's to read (reading a large circuit
    // here too would double the wait before the session), and a party's error is `run`'s.
    s.check_flags()?;

    // The parties' one-time key: a 0600 file in a 0700 directory, removed when `run` ends.
    let (_key_dir, psk) = if args.insecure {
        (None, None)
    } else {
        let (dir, path) = secure_cmd::one_time_psk()?;
        (Some(dir), Some(path))
    };
    let (tx, rx) = mpsc::channel();
    let any_port = SocketAddr::from(([127, 0, 0, 1], 0));
    let mut g_args = party_args(
        s,
        Role::Garbler,
        any_port,
        &args.garbler_input,
        psk.as_deref(),
    );
    // The evaluator is told the address as soon as the garbler listens: a garbler still
    // alone after --timeout waits for one that failed, not for one on its way.
    g_args.accept_timeout_secs = Some(s.timeout);
    let garbler = PartyProcess::spawn("garbler", g_args.to_argv(), Some(tx), Stdio::null())?;
    // The evaluator starts at once, so that it loads the circuit and prepares while the
    // garbler does; it is told the garbler's address on its standard input once the
    // garbler announces it (and learns of a garbler that failed from that input's end).
    let mut e_args = party_args(
        s,
        Role::Evaluator,
        any_port,
        &args.evaluator_input,
        psk.as_deref(),
    );
    e_args.address_on_stdin = true;
    let mut evaluator = PartyProcess::spawn("evaluator", e_args.to_argv(), None, Stdio::piped())?;
    let mut tell = evaluator.child.stdin.take().expect("piped");
    // The garbler announces its address once it has loaded the circuit and prepared,
    // which takes as long as the circuit is large; it cannot hang meanwhile (no peer is
    // involved yet), and a garbler that ends closes the channel.
    let addr = match rx.recv() {
        Ok(a) => a,
        Err(_) => {
            return Err(garbler
                .finish()
                .err()
                .unwrap_or_else(|| anyhow!("the garbler never announced its address")))
        }
    };
    let addr: SocketAddr = addr
        .parse()
        .with_context(|| format!("the garbler announced {addr:?}, not an address"))?;
    // An evaluator that has ended already (its input refused) cannot be told: its error is
    // read below.
    let _ = writeln!(tell, "{addr}").and_then(|()| tell.flush());
    drop(tell);
    let (g, e) = match evaluator.finish() {
        Ok(e) => (garbler.finish()?, e),
        // A garbler that failed first (the evaluator's error is then its echo) is named
        // with it; one still waiting for this evaluator (whose input was refused, say)
        // waits for nobody, and is stopped when dropped here.
        Err(ee) => match garbler.finish_within(Duration::from_secs(1)) {
            Some(Err(ge)) => bail!("{ge:#}\n{ee:#}"),
            _ => return Err(ee),
        },
    };
    if s.output == OutputMode::Both && g.output != e.output {
        bail!(
            "the parties disagree on the output: garbler {}, evaluator {}",
            json!(g.output),
            json!(e.output)
        );
    }
    print_merged(s, started, &g, &e)
}

/// Prints the parties' reports of `run` merged into one: as JSON with `--json`, else the
/// output on standard output and the times on standard error.
fn print_merged(s: &SessionArgs, started: Instant, g: &PartyReport, e: &PartyReport) -> Result<()> {
    let merged = json!({
        "report_version": REPORT_VERSION,
        "output": e.output,
        "total_ms": g.total_ms,
        "ot_ms": e.ot_ms,
        "garble_ms": g.garble_ms,
        "eval_ms": e.eval_ms,
        "bytes_garbler_to_evaluator": g.bytes_garbler_to_evaluator,
        "bytes_evaluator_to_garbler": g.bytes_evaluator_to_garbler,
        "scheme": s.scheme.name(),
        "transport": e.transport,
        "auto": e.auto,
        "circuit": s.circuit,
        "and_gates": g.and_gates,
        "load_ms": g.load_ms,
        "setup_ms": g.setup_ms,
        "buffer_bytes": g.buffer_bytes,
        "bdp_bytes": g.bdp_bytes,
        "paper_bound_bytes": g.paper_bound_bytes,
        "protection": g.protection,
        "handshake_ms": g.handshake_ms,
        "connect_ms": e.connect_ms,
        "first_output_ms": e.first_output_ms,
        "paper_ms": g.paper_ms,
        // The whole wait: this process's start until the merged report.
        "wall_ms": started.elapsed().as_secs_f64() * 1e3,
        "peak_rss_bytes": {"garbler": g.peak_rss_bytes, "evaluator": e.peak_rss_bytes},
        "round_trips": {"garbler": g.round_trips, "evaluator": e.round_trips},
        "backend": {"garbler": g.backend, "evaluator": e.backend},
        "parallel": {"garbler": g.parallel, "evaluator": e.parallel},
        "garbler": g.to_json_value(),
        "evaluator": e.to_json_value(),
    });
    if s.json {
        outln!("{}", serde_json::to_string_pretty(&merged)?)?;
        return Ok(());
    }
    outln!("output: {}", merged["output"].as_str().unwrap_or("?"))?;
    let f = |k: &str| merged[k].as_f64().unwrap_or(f64::NAN);
    eprintln!(
        "{} with {} (AES: {}) over {}: protocol {:.2} ms (OT {:.2} ms, garbling {:.2} ms, \
         evaluation {:.2} ms), {} bytes garbler→evaluator, {} bytes evaluator→garbler",
        s.circuit,
        s.scheme,
        g.backend,
        e.transport,
        f("total_ms"),
        f("ot_ms"),
        f("garble_ms"),
        f("eval_ms"),
        merged["bytes_garbler_to_evaluator"],
        merged["bytes_evaluator_to_garbler"],
    );
    eprintln!(
        "protection: {} (handshake {:.2} ms, not in the protocol time)",
        merged["protection"].as_str().unwrap_or("?"),
        f("handshake_ms")
    );
    Ok(())
}
