//! The experiment runner: carries out an [`Experiment`]'s plan across emulated links and
//! records every run in the [`Db`].
//!
//! One [`Topology`] serves all the runs of a condition (building one takes a while). Each
//! run starts the server (the garbler, or a user program's `NAME-server.sh`) in namespace A,
//! waits until it announces `listening on ...` on its standard error, then starts the client
//! (the evaluator, or `NAME-client.sh`) in namespace B, and waits for both. Each party is
//! the leader of its own process group, so that the per-run limit kills a script together
//! with whatever it started. The outcome is written in its own transaction: a success with
//! its measurements, or a failure or timeout with the error and the parties' output, never
//! dropped. Runs already recorded (a resumed experiment) are skipped. A run's session may
//! hold several computations (the experiment's `repeat`): the parties then print a report
//! per computation, which `measured` checks and sums up in the run's record. Every run of a
//! circuit, failed or not, records the 2PC protocol version of its parties
//! ([`Launcher::protocol_version`]), whose message flow sets a session's round trips.
//! Every run records its transport as the experiment wrote it (`quic:iw={bdp}`) beside the
//! one that ran. A run of `auto` records what the parties chose, and fails if they do not
//! report the same choice. On a virtual machine that hands freed memory back to its host,
//! each run starts after memory for its parties has been warmed (the `warm` module).
//!
//! Each run's garbler listens on a port of its own (20000 + its index in the plan), so that
//! no run meets a previous one's late packets; the `auto` runs of an experiment that lets
//! its evaluators cache their measurements (`probe_cache`) share [`AUTO_CACHED_PORT`]
//! instead, since the cache is keyed by the garbler's address.
//!
//! User programs get `$1` = the peer's address, `$2` = their own address (both `IP:PORT`,
//! the run's port; the server listens on its own, the client connects to the peer's) and
//! `$3` = the transport, plus the environment from [`Launcher::program_env`]. A program
//! that prints no `listening on` line gets its client started after one second. Its time is
//! the wall time from starting the client until both exited, and its output is kept.

use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::net::{Ipv4Addr, SocketAddrV4};
use std::os::unix::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use crate::db::{Db, LinkRecord, RunRecord, Status};
use crate::experiment::{is_agreed, Cell, Experiment, PlannedRun};
use transputation_netlab::{ns, Error as LinkError, LinkSpec, Options, Side, Topology};

use crate::Error;

mod measured;
mod warm;

use measured::measured;
use warm::Warmer;

/// Output kept per party, from the end.
pub const KEPT_OUTPUT: usize = 64 << 10;

/// How long a user program's server gets before its client starts, if it announces nothing.
pub const PROGRAM_START_WAIT: Duration = Duration::from_secs(1);

/// After one party failed, how long the other gets to end by itself before it is killed.
const GRACE: Duration = Duration::from_secs(2);

/// The garbler's port in the `auto` runs of an experiment whose evaluators may reuse a
/// measurement of the path (below the ports of the other runs, 20000 and up).
pub const AUTO_CACHED_PORT: u16 = 19_999;

/// A program to start in a namespace.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PartyCommand {
    /// The program.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
}

/// What the runner needs from its caller: the parties' command lines for a circuit cell.
pub trait Launcher {
    /// The garbler (listening on `server`, in namespace A) and the evaluator (connecting to
    /// it from namespace B) for `cell` across `link` (as emulated, so that the parties can
    /// size their buffers for it), the evaluator running the experiment's
    /// [`Experiment::repeat`] computations in its one session; both must print their JSON
    /// reports on standard output (one per computation, with `buffer_bytes` if they sized
    /// buffers) and the garbler `listening on ADDR` on standard error. An `Err` is recorded
    /// as the run's failure.
    fn circuit_parties(
        &self,
        cell: &Cell,
        link: &LinkRecord,
        server: SocketAddrV4,
        timeout: Duration,
    ) -> Result<(PartyCommand, PartyCommand), String>;

    /// Environment for user programs (e.g. where the `transputation` binary is).
    fn program_env(&self) -> Vec<(String, String)> {
        Vec::new()
    }

    /// The 2PC protocol version the parties of [`Launcher::circuit_parties`] speak, if
    /// known: every run of a circuit records it.
    fn protocol_version(&self) -> Option<u32> {
        None
    }

    /// The number of gates of a circuit of [`Launcher::circuit_parties`], if known: what the
    /// runner warms before its first run on a machine that returns freed memory to its host
    /// is sized by it.
    fn gates(&self, _circuit: &str) -> Option<u64> {
        None
    }
}

/// What a call of [`Runner::run`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Outcome {
    /// Runs carried out and recorded now.
    pub recorded: usize,
    /// Of those, failures and timeouts.
    pub failed: usize,
    /// Runs skipped because they were recorded before.
    pub skipped: usize,
    /// Whether every planned run is now recorded.
    pub finished: bool,
}

/// Carries out an experiment's plan.
pub struct Runner<'a> {
    /// The experiment.
    pub experiment: &'a Experiment,
    /// Its id in `db`.
    pub experiment_id: i64,
    /// The parties.
    pub launcher: &'a dyn Launcher,
    /// Where runs are recorded.
    pub db: &'a mut Db,
    /// Print a progress line with ETA on standard error.
    pub progress: bool,
}

/// Process groups of running parties, killed by the Ctrl-C handler.
static PARTY_GROUPS: Mutex<Vec<i32>> = Mutex::new(Vec::new());

fn register(pgid: i32, add: bool) {
    let mut g = PARTY_GROUPS.lock().unwrap_or_else(|e| e.into_inner());
    if add {
        g.push(pgid);
    } else {
        g.retain(|&p| p != pgid);
    }
}

fn kill_group(pgid: i32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pgid) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
}

/// Set (first thing) by the interrupt handler: a run whose parties it killed is not a result.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// After an interrupt, waits for the handler to end the process, so that the run the
/// interrupt cut short is not recorded (a resumed experiment runs it again).
fn stop_if_interrupted() {
    while INTERRUPTED.load(Ordering::SeqCst) {
        thread::sleep(Duration::from_secs(1));
    }
}

/// Ctrl-C, SIGTERM, SIGHUP: kill the parties, delete the namespaces, exit 130. (The finished
/// runs are in the database already; `--resume` continues.)
fn install_interrupt_handler() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let _ = ctrlc::set_handler(|| {
            INTERRUPTED.store(true, Ordering::SeqCst);
            let groups = PARTY_GROUPS
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            for g in groups {
                kill_group(g);
            }
            ns::cleanup_all();
            eprintln!("\ninterrupted: finished runs are recorded; --resume continues");
            std::process::exit(130);
        });
    });
}

/// A running party.
struct Proc {
    child: Child,
    pgid: i32,
    status: Option<ExitStatus>,
    stdout: Option<JoinHandle<Vec<u8>>>,
    stderr: Option<JoinHandle<Vec<u8>>>,
}

/// Reads a pipe to its end, keeping the first `limit` bytes.
fn drain(mut r: impl Read + Send + 'static, limit: usize) -> JoinHandle<Vec<u8>> {
    thread::spawn(move || {
        let mut kept = Vec::new();
        let mut buf = [0u8; 8192];
        loop {
            match r.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    let room = limit.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                }
            }
        }
        kept
    })
}

impl Proc {
    fn spawn(
        topo: &Topology,
        side: Side,
        cmd: &PartyCommand,
        announce: Option<mpsc::Sender<()>>,
    ) -> std::io::Result<Proc> {
        let mut c = topo.command(side, &cmd.program);
        c.args(&cmd.args)
            .envs(cmd.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        // Spawn and register under the lock, so that the interrupt handler (which takes it
        // after raising INTERRUPTED) either sees this party or prevents it.
        let mut groups = PARTY_GROUPS.lock().unwrap_or_else(|e| e.into_inner());
        if INTERRUPTED.load(Ordering::SeqCst) {
            return Err(std::io::Error::other("interrupted"));
        }
        let mut child = c.spawn()?;
        let pgid = child.id() as i32;
        groups.push(pgid);
        drop(groups);
        let stdout = child.stdout.take().map(|o| drain(o, 4 << 20));
        let stderr = child.stderr.take().map(|e| {
            thread::spawn(move || {
                // Scan for the announcement line by line; keep everything (up to 4 MiB).
                let mut all = Vec::new();
                let mut r = BufReader::new(e);
                let mut line = Vec::new();
                while let Ok(n) = r.read_until(b'\n', &mut line) {
                    if n == 0 {
                        break;
                    }
                    if let Some(tx) = &announce {
                        if line.starts_with(b"listening on") {
                            let _ = tx.send(());
                        }
                    }
                    if all.len() < 4 << 20 {
                        all.extend_from_slice(&line);
                    }
                    line.clear();
                }
                all
            })
        });
        Ok(Proc {
            child,
            pgid,
            status: None,
            stdout,
            stderr,
        })
    }

    fn poll(&mut self) -> bool {
        if self.status.is_none() {
            if let Ok(Some(s)) = self.child.try_wait() {
                self.status = Some(s);
            }
        }
        self.status.is_some()
    }

    /// Kills the process group (the party and anything it started) and reaps the party.
    fn kill(&mut self) {
        kill_group(self.pgid);
        if self.status.is_none() {
            let _ = self.child.kill();
            self.status = self.child.wait().ok();
        }
    }

    /// The exit status, standard output and standard error (after the party ended).
    fn finish(mut self) -> (Option<ExitStatus>, String, String) {
        // Whatever the party left in its group (a script's background jobs) goes too.
        kill_group(self.pgid);
        register(self.pgid, false);
        let text = |h: Option<JoinHandle<Vec<u8>>>| {
            h.and_then(|h| h.join().ok())
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        };
        let out = text(self.stdout.take());
        let err = text(self.stderr.take());
        (self.status, out, err)
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        if self.status.is_none() {
            self.kill();
        }
        register(self.pgid, false);
    }
}

/// The last `KEPT_OUTPUT` bytes of a party's output (standard output, then error).
fn keep(out: &str, err: &str) -> Option<String> {
    let mut s = String::new();
    if !out.is_empty() {
        s.push_str(out);
    }
    if !err.is_empty() {
        if !s.is_empty() && !s.ends_with('\n') {
            s.push('\n');
        }
        s.push_str(err);
    }
    if s.is_empty() {
        return None;
    }
    if s.len() > KEPT_OUTPUT {
        let mut cut = s.len() - KEPT_OUTPUT;
        while !s.is_char_boundary(cut) {
            cut += 1;
        }
        s = format!("[…]{}", &s[cut..]);
    }
    Some(s)
}

/// The last lines of a party's standard error, for an error message.
fn tail(err: &str) -> String {
    let lines: Vec<&str> = err.trim_end().lines().collect();
    let start = lines.len().saturating_sub(6);
    lines[start..].join("\n")
}

/// The link as `topo` emulates it.
fn link_record(topo: &Topology) -> LinkRecord {
    let s = topo.summary();
    link_record_of(&s.applied, s.emulator.to_string(), s.cap.clone())
}

/// The record of `link` (its RTT, and the A-to-B direction's rate, loss, jitter and queue).
fn link_record_of(link: &LinkSpec, emulator: String, note: Option<String>) -> LinkRecord {
    let d = link.a_to_b;
    LinkRecord {
        rtt_us: u64::try_from(link.rtt().as_micros()).unwrap_or(u64::MAX),
        rate_bps: d.rate_bps,
        loss: d.loss,
        jitter_us: u64::try_from(d.jitter.as_micros()).unwrap_or(u64::MAX),
        queue_bytes: d.queue_bytes(),
        emulator,
        note,
    }
}

fn fmt_secs(d: Duration) -> String {
    let s = d.as_secs();
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// The counts so far and the progress line on standard error.
struct Progress {
    outcome: Outcome,
    started: Instant,
    /// Runs to do now.
    total: usize,
    /// Runs in the plan.
    planned: usize,
    /// Whether standard error is a terminal (the line is rewritten in place).
    tty: bool,
}

impl Progress {
    /// The line for the run about to start, with the elapsed time and an ETA.
    fn before(&self, p: &PlannedRun) {
        let done_now = self.outcome.recorded;
        let eta = if done_now == 0 {
            "?".to_string()
        } else {
            fmt_secs(self.started.elapsed() / done_now as u32 * (self.total - done_now) as u32)
        };
        let line = format!(
            "[{}/{}] {} {} {} @ {} #{} — elapsed {}, ETA {}",
            self.outcome.skipped + done_now + 1,
            self.planned,
            p.cell.circuit,
            p.cell.scheme,
            p.cell.transport,
            p.cell.condition,
            p.repetition + 1,
            fmt_secs(self.started.elapsed()),
            eta
        );
        if self.tty {
            eprint!("\r\x1b[2K{line}");
            let _ = std::io::stderr().flush();
        } else {
            eprintln!("{line}");
        }
    }

    /// A line for a run that failed: its status and the first line of its error.
    fn failed(&self, p: &PlannedRun, record: &RunRecord) {
        let what = record.error.as_deref().unwrap_or("");
        let first = what.lines().next().unwrap_or("");
        if self.tty {
            eprintln!();
        }
        eprintln!(
            "  {} {} {} @ {} #{}: {}: {first}",
            p.cell.circuit,
            p.cell.scheme,
            p.cell.transport,
            p.cell.condition,
            p.repetition + 1,
            record.status.as_str()
        );
    }
}

impl Runner<'_> {
    /// Runs every planned run not yet recorded.
    pub fn run(&mut self) -> Result<Outcome, Error> {
        ns::check_privileges()?;
        install_interrupt_handler();
        let plan = self.experiment.plan();
        let done = self.db.recorded(self.experiment_id)?;
        let todo: Vec<(usize, &PlannedRun)> = plan
            .iter()
            .enumerate()
            .filter(|(_, p)| !done.contains(&p.key()))
            .collect();
        let mut progress = Progress {
            outcome: Outcome {
                skipped: plan.len() - todo.len(),
                ..Outcome::default()
            },
            started: Instant::now(),
            total: todo.len(),
            planned: plan.len(),
            tty: std::io::stderr().is_terminal(),
        };
        let mut warmer = Warmer::here();
        if warmer.is_on() && self.progress && !todo.is_empty() {
            eprintln!(
                "this machine hands freed memory back to its host (a balloon that reports free \
                 pages): each run starts after warming as much as its parties took"
            );
        }
        // The runs of one condition are consecutive in the plan: one topology for each group.
        for group in todo.chunk_by(|x, y| x.1.condition_index == y.1.condition_index) {
            self.run_condition(group, &mut progress, &mut warmer)?;
        }
        if self.progress && progress.tty && progress.total > 0 {
            eprintln!();
        }
        let mut outcome = progress.outcome;
        outcome.finished = self.db.finish_if_complete(self.experiment_id)?;
        Ok(outcome)
    }

    /// The runs of one condition, across one topology built for them; if it cannot be
    /// built, each run is recorded as failed with the reason.
    fn run_condition(
        &mut self,
        group: &[(usize, &PlannedRun)],
        progress: &mut Progress,
        warmer: &mut Warmer,
    ) -> Result<(), Error> {
        let cond = &self.experiment.conditions[group[0].1.condition_index];
        let opts = Options {
            emulator: self.experiment.emulator,
            max_rate_bps: self.experiment.max_rate_bps,
            host_cc: self.experiment.host_cc.clone(),
        };
        let topo = match Topology::with_options(&cond.link, opts) {
            Ok(t) => t,
            // Wrong for every condition alike: nothing to record run by run.
            Err(
                e @ (LinkError::Privileges(_)
                | LinkError::MissingTool { .. }
                | LinkError::CongestionControl { .. }),
            ) => return Err(e.into()),
            Err(e) => {
                stop_if_interrupted();
                // Every run of this condition fails the same way: recorded as such.
                // The link as asked for: none was built.
                let link = link_record_of(&cond.link, self.experiment.emulator.to_string(), None);
                for (_, p) in group {
                    let r = RunRecord::failed(
                        p.cell.clone(),
                        p.repetition,
                        link.clone(),
                        Status::Failed,
                        format!("building the link: {e}"),
                    );
                    self.record(p, r)?;
                    progress.outcome.recorded += 1;
                    progress.outcome.failed += 1;
                }
                return Ok(());
            }
        };
        if progress.outcome.recorded == 0 {
            let summary = topo.summary();
            self.db
                .set_link_environment(self.experiment_id, summary.emulator, &summary.host_cc)?;
        }
        if let Some(cap) = &topo.summary().cap {
            if self.progress {
                eprintln!("{}: {cap}", cond.label);
            }
        }
        let link = link_record(&topo);
        // The fastest successful run of each cell of this condition so far, by wall time
        // (the cutoff's measure).
        let mut fastest: Vec<((String, String), f64)> = Vec::new();
        for &(index, p) in group {
            if self.progress {
                progress.before(p);
            }
            let port = if self.experiment.probe_cache_secs > 0.0 && is_agreed(&p.cell.transport) {
                AUTO_CACHED_PORT
            } else {
                20_000 + (index % 20_000) as u16
            };
            let cell = (p.cell.circuit.clone(), p.cell.scheme.clone());
            let best = fastest.iter().find(|(c, _)| *c == cell).map(|(_, ms)| *ms);
            let cut = self
                .experiment
                .cutoff
                .zip(best)
                .map(|(factor, best_ms)| Cut { factor, best_ms });
            warmer.before(&p.cell.circuit, self.launcher.gates(&p.cell.circuit));
            let record = self.one_run(&topo, &link, p, port, cut);
            stop_if_interrupted();
            warmer.saw(
                &p.cell.circuit,
                record.garbler_peak_rss_bytes,
                record.evaluator_peak_rss_bytes,
            );
            if let (Status::Ok, Some(ms)) = (record.status, record.wall_ms) {
                match fastest.iter_mut().find(|(c, _)| *c == cell) {
                    Some((_, best)) => *best = best.min(ms),
                    None => fastest.push((cell, ms)),
                }
            }
            if record.status != Status::Ok {
                progress.outcome.failed += 1;
                if self.progress {
                    progress.failed(p, &record);
                }
            }
            self.record(p, record)?;
            progress.outcome.recorded += 1;
        }
        Ok(())
    }

    /// Records the run `p` ended as `record`, with its transport as written and the
    /// protocol version of its parties if they are the launcher's garbler and evaluator (a
    /// user program's are its own, unknown here).
    pub(crate) fn record(&mut self, p: &PlannedRun, mut record: RunRecord) -> Result<(), Error> {
        record.transport_written = Some(p.transport_written.clone());
        if !p.cell.is_program() {
            record.protocol_version = self.launcher.protocol_version();
        }
        self.db.insert_run(self.experiment_id, &record)
    }

    /// One run across `topo`, stopped at the experiment's timeout or at `cut`, whichever
    /// comes first; never fails: a failure is the record.
    fn one_run(
        &self,
        topo: &Topology,
        link: &LinkRecord,
        p: &PlannedRun,
        port: u16,
        cut: Option<Cut>,
    ) -> RunRecord {
        // A failed run of a circuit records the computations its session was to hold.
        let computations = if p.cell.is_program() {
            1
        } else {
            self.experiment.repeat
        };
        let fail = |status, error: String| RunRecord {
            computations,
            ..RunRecord::failed(p.cell.clone(), p.repetition, link.clone(), status, error)
        };
        let (server, client, program) = match self.commands(topo, link, p, port) {
            Ok(c) => c,
            Err(e) => return fail(Status::Failed, e),
        };
        let names = if program {
            ("server", "client")
        } else {
            ("garbler", "evaluator")
        };
        let timeout = self.experiment.timeout;
        let limit = cut.map_or(timeout, |c| c.limit().min(timeout));
        let start = Instant::now();
        let deadline = start + limit;
        let srv = match start_server(topo, &server, program, names, start, deadline) {
            Ok(s) => s,
            Err((status, error, output)) => {
                let mut r = fail(status, error);
                r.garbler_output = output;
                return r;
            }
        };
        let client_start = Instant::now();
        let cli = match Proc::spawn(topo, Side::B, &client, None) {
            Ok(c) => c,
            Err(e) => {
                return fail(
                    Status::Failed,
                    format!(
                        "starting the {} ({}): {e}",
                        names.1,
                        client.program.display()
                    ),
                )
            }
        };
        let ended = wait_both(srv, cli, deadline);
        let wall_ms = client_start.elapsed().as_secs_f64() * 1e3;
        let with_outputs = |mut r: RunRecord| {
            r.garbler_output = keep(&ended.server.1, &ended.server.2);
            r.evaluator_output = keep(&ended.client.1, &ended.client.2);
            r
        };
        if let Some((status, mut error)) = ended.failure(names, limit) {
            if let Some(c) = cut.filter(|_| status == Status::Timeout && limit < timeout) {
                error = format!("{}: {error}", c.describe(limit));
            }
            return with_outputs(fail(status, error));
        }
        if program {
            return with_outputs(RunRecord {
                total_ms: Some(wall_ms),
                wall_ms: Some(wall_ms),
                ..RunRecord::ok(p.cell.clone(), p.repetition, link.clone())
            });
        }
        let reports = measured(&ended.server.1, &ended.client.1, computations)
            .and_then(|m| m.checked_auto(is_agreed(&p.cell.transport)));
        match reports {
            Ok(m) => RunRecord {
                wall_ms: Some(wall_ms),
                // Successful parties' standard error only (their stdout is the report).
                garbler_output: keep("", &ended.server.2),
                evaluator_output: keep("", &ended.client.2),
                ..m.into_record(p, link)
            },
            Err(e) => with_outputs(fail(Status::Failed, e)),
        }
    }

    /// The server's and the client's commands, and whether they are a user program's.
    fn commands(
        &self,
        topo: &Topology,
        link: &LinkRecord,
        p: &PlannedRun,
        port: u16,
    ) -> Result<(PartyCommand, PartyCommand, bool), String> {
        let a = topo.addr(Side::A);
        let b = topo.addr(Side::B);
        if !p.cell.is_program() {
            let server_addr = SocketAddrV4::new(a, port);
            let (s, c) = self.launcher.circuit_parties(
                &p.cell,
                link,
                server_addr,
                self.experiment.timeout,
            )?;
            return Ok((s, c, false));
        }
        let prog = self
            .experiment
            .program(&p.cell.circuit)
            .ok_or("no such program in the experiment")?;
        let env = self.launcher.program_env();
        let cmd = |script: PathBuf, peer: Ipv4Addr, own: Ipv4Addr| PartyCommand {
            program: "sh".into(),
            args: vec![
                script.display().to_string(),
                SocketAddrV4::new(peer, port).to_string(),
                SocketAddrV4::new(own, port).to_string(),
                p.cell.transport.clone(),
            ],
            env: env.clone(),
        };
        for s in [prog.server(), prog.client()] {
            if !s.is_file() {
                return Err(format!(
                    "the program's script {} does not exist",
                    s.display()
                ));
            }
        }
        Ok((cmd(prog.server(), b, a), cmd(prog.client(), a, b), true))
    }
}

/// Starts the server in namespace A and waits for its `listening on` line (a user program:
/// at most [`PROGRAM_START_WAIT`]). An error is the run's status, its message and the
/// server's output.
fn start_server(
    topo: &Topology,
    server: &PartyCommand,
    program: bool,
    names: (&str, &str),
    start: Instant,
    deadline: Instant,
) -> Result<Proc, (Status, String, Option<String>)> {
    let (server_name, client_name) = names;
    let (tx, rx) = mpsc::channel();
    let mut srv = Proc::spawn(topo, Side::A, server, Some(tx)).map_err(|e| {
        let what = format!(
            "starting the {server_name} ({}): {e}",
            server.program.display()
        );
        (Status::Failed, what, None)
    })?;
    let announce_by = if program {
        (start + PROGRAM_START_WAIT).min(deadline)
    } else {
        deadline
    };
    loop {
        match rx.recv_timeout(Duration::from_millis(20)) {
            Ok(()) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
        if srv.poll() || Instant::now() >= announce_by {
            break;
        }
    }
    if !program && srv.status.is_none() && Instant::now() >= deadline {
        srv.kill();
        let (_, out, err) = srv.finish();
        let what = format!(
            "killed after {} s: the {server_name} never announced its address\n{}",
            deadline.duration_since(start).as_secs(),
            tail(&err)
        );
        return Err((Status::Timeout, what, keep(&out, &err)));
    }
    if srv.status.is_some_and(|s| !s.success()) || (!program && srv.status.is_some()) {
        let (st, out, err) = srv.finish();
        let what = format!(
            "the {server_name} exited ({}) before the {client_name} started:\n{}",
            st.map_or("?".into(), |s| s.to_string()),
            tail(&err)
        );
        return Err((Status::Failed, what, keep(&out, &err)));
    }
    Ok(srv)
}

/// A run's cutoff: `factor` times its cell's fastest run so far, `best_ms` of wall time.
#[derive(Debug, Clone, Copy)]
struct Cut {
    factor: f64,
    best_ms: f64,
}

impl Cut {
    /// The time the run is given: the factor times the fastest, at least the floor.
    fn limit(&self) -> Duration {
        Duration::try_from_secs_f64(self.factor * self.best_ms / 1e3)
            .unwrap_or(Duration::MAX)
            .max(crate::experiment::CUTOFF_FLOOR)
    }

    /// Why a run stopped at `limit` was cut off.
    fn describe(&self, limit: Duration) -> String {
        format!(
            "cut off at {:.1} s, more than {} times the fastest run of its cell so far              ({:.0} ms; the experiment's cutoff)",
            limit.as_secs_f64(),
            self.factor,
            self.best_ms
        )
    }
}

/// Both parties after they ended: (exit status, standard output, standard error) each.
struct Ended {
    server: (Option<ExitStatus>, String, String),
    client: (Option<ExitStatus>, String, String),
    timed_out: bool,
}

impl Ended {
    /// The run's failure, if it failed: a timeout, or a party that did not succeed.
    fn failure(&self, names: (&str, &str), timeout: Duration) -> Option<(Status, String)> {
        let parties = [(names.0, &self.server), (names.1, &self.client)];
        if self.timed_out {
            let running: Vec<&str> = parties
                .iter()
                .filter(|(_, (st, _, _))| st.is_none_or(|s| s.code().is_none()))
                .map(|(name, _)| *name)
                .collect();
            let what = format!(
                "killed at the {} s limit (still running: {})",
                timeout.as_secs(),
                running.join(", ")
            );
            return Some((Status::Timeout, what));
        }
        let errors: Vec<String> = parties
            .iter()
            .filter_map(|(name, (st, _, err))| match st {
                Some(s) if s.success() => None,
                Some(s) => Some(format!("the {name} failed ({s}):\n{}", tail(err))),
                None => Some(format!("the {name} could not be waited for")),
            })
            .collect();
        (!errors.is_empty()).then(|| (Status::Failed, errors.join("\n")))
    }
}

/// Waits for both parties until `deadline` (then kills both); once one has failed, the
/// other gets [`GRACE`] to end by itself.
fn wait_both(mut srv: Proc, mut cli: Proc, deadline: Instant) -> Ended {
    let mut timed_out = false;
    let mut first_failure: Option<Instant> = None;
    loop {
        let s_done = srv.poll();
        let c_done = cli.poll();
        if s_done && c_done {
            break;
        }
        let now = Instant::now();
        if now >= deadline {
            timed_out = true;
            srv.kill();
            cli.kill();
            break;
        }
        let failed = [&srv, &cli]
            .iter()
            .any(|p| p.status.is_some_and(|s| !s.success()));
        if failed {
            let since = *first_failure.get_or_insert(now);
            if now - since > GRACE {
                srv.kill();
                cli.kill();
                break;
            }
        }
        thread::sleep(Duration::from_millis(5));
    }
    Ended {
        server: srv.finish(),
        client: cli.finish(),
        timed_out,
    }
}
