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
//! dropped. Runs already recorded (a resumed experiment) are skipped.
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

use serde_json::Value;

use crate::db::{Db, LinkRecord, RunRecord, Status};
use crate::experiment::{Cell, Experiment, PlannedRun};
use transputation_netlab::{ns, Error as LinkError, Options, Side, Topology};

use crate::Error;

/// Output kept per party, from the end.
pub const KEPT_OUTPUT: usize = 64 << 10;

/// How long a user program's server gets before its client starts, if it announces nothing.
pub const PROGRAM_START_WAIT: Duration = Duration::from_secs(1);

/// After one party failed, how long the other gets to end by itself before it is killed.
const GRACE: Duration = Duration::from_secs(2);

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
    /// size their buffers for it); both must print their JSON report on standard output
    /// (with `buffer_bytes` if they sized buffers) and the garbler `listening on ADDR` on
    /// standard error. An `Err` is recorded as the run's failure.
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

fn link_record(topo: &Topology) -> LinkRecord {
    let s = topo.summary();
    let d = s.applied.a_to_b;
    LinkRecord {
        rtt_us: u64::try_from(s.applied.rtt().as_micros()).unwrap_or(u64::MAX),
        rate_bps: d.rate_bps,
        loss: d.loss,
        jitter_us: u64::try_from(d.jitter.as_micros()).unwrap_or(u64::MAX),
        queue_bytes: d.queue_bytes(),
        emulator: s.emulator.to_string(),
        note: s.cap.clone(),
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
        let mut outcome = Outcome {
            skipped: plan.len() - todo.len(),
            ..Outcome::default()
        };
        let started = Instant::now();
        let total = todo.len();
        let tty = std::io::stderr().is_terminal();
        let mut i = 0;
        while i < todo.len() {
            let ci = todo[i].1.condition_index;
            let group_end = todo[i..]
                .iter()
                .position(|(_, p)| p.condition_index != ci)
                .map_or(todo.len(), |n| i + n);
            let cond = &self.experiment.conditions[ci];
            let opts = Options {
                emulator: self.experiment.emulator,
                max_rate_bps: self.experiment.max_rate_bps,
                host_cc: self.experiment.host_cc.clone(),
            };
            let topo = Topology::with_options(&cond.link, opts);
            let topo = match topo {
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
                    let link = LinkRecord {
                        rtt_us: u64::try_from(cond.link.rtt().as_micros()).unwrap_or(0),
                        rate_bps: cond.link.a_to_b.rate_bps,
                        loss: cond.link.a_to_b.loss,
                        jitter_us: u64::try_from(cond.link.a_to_b.jitter.as_micros()).unwrap_or(0),
                        queue_bytes: cond.link.a_to_b.queue_bytes(),
                        emulator: self.experiment.emulator.to_string(),
                        note: None,
                    };
                    for (_, p) in &todo[i..group_end] {
                        let r = RunRecord::failed(
                            p.cell.clone(),
                            p.repetition,
                            link.clone(),
                            Status::Failed,
                            format!("building the link: {e}"),
                        );
                        self.db.insert_run(self.experiment_id, &r)?;
                        outcome.recorded += 1;
                        outcome.failed += 1;
                    }
                    i = group_end;
                    continue;
                }
            };
            if outcome.recorded == 0 {
                let summary = topo.summary();
                self.db.set_link_environment(
                    self.experiment_id,
                    summary.emulator,
                    &summary.host_cc,
                )?;
            }
            if let Some(cap) = &topo.summary().cap {
                if self.progress {
                    eprintln!("{}: {cap}", cond.label);
                }
            }
            let link = link_record(&topo);
            for &(index, p) in &todo[i..group_end] {
                if self.progress {
                    let done_now = outcome.recorded;
                    let eta = if done_now == 0 {
                        "?".to_string()
                    } else {
                        fmt_secs(started.elapsed() / done_now as u32 * (total - done_now) as u32)
                    };
                    let line = format!(
                        "[{}/{}] {} {} {} @ {} #{} — elapsed {}, ETA {}",
                        outcome.skipped + done_now + 1,
                        plan.len(),
                        p.cell.circuit,
                        p.cell.scheme,
                        p.cell.transport,
                        p.cell.condition,
                        p.repetition + 1,
                        fmt_secs(started.elapsed()),
                        eta
                    );
                    if tty {
                        eprint!("\r\x1b[2K{line}");
                        let _ = std::io::stderr().flush();
                    } else {
                        eprintln!("{line}");
                    }
                }
                let port = 20_000 + (index % 20_000) as u16;
                let record = self.one_run(&topo, &link, p, port);
                stop_if_interrupted();
                if record.status != Status::Ok {
                    outcome.failed += 1;
                    if self.progress {
                        let what = record.error.as_deref().unwrap_or("");
                        let first = what.lines().next().unwrap_or("");
                        if tty {
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
                self.db.insert_run(self.experiment_id, &record)?;
                outcome.recorded += 1;
            }
            drop(topo);
            i = group_end;
        }
        if self.progress && tty && total > 0 {
            eprintln!();
        }
        outcome.finished = self.db.finish_if_complete(self.experiment_id)?;
        Ok(outcome)
    }

    /// One run across `topo`; never fails: a failure is the record.
    fn one_run(&self, topo: &Topology, link: &LinkRecord, p: &PlannedRun, port: u16) -> RunRecord {
        let timeout = self.experiment.timeout;
        let a = topo.addr(Side::A);
        let b = topo.addr(Side::B);
        let server_addr = SocketAddrV4::new(a, port);
        let program = p
            .cell
            .is_program()
            .then(|| self.experiment.program(&p.cell.circuit))
            .flatten();
        let fail = |status, error: String| {
            RunRecord::failed(p.cell.clone(), p.repetition, link.clone(), status, error)
        };
        let (server, client) = match program {
            Some(prog) => {
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
                        return fail(
                            Status::Failed,
                            format!("the program's script {} does not exist", s.display()),
                        );
                    }
                }
                (cmd(prog.server(), b, a), cmd(prog.client(), a, b))
            }
            None if p.cell.is_program() => {
                return fail(Status::Failed, "no such program in the experiment".into())
            }
            None => match self
                .launcher
                .circuit_parties(&p.cell, link, server_addr, timeout)
            {
                Ok(c) => c,
                Err(e) => return fail(Status::Failed, e),
            },
        };
        let (server_name, client_name) = if program.is_some() {
            ("server", "client")
        } else {
            ("garbler", "evaluator")
        };

        let start = Instant::now();
        let deadline = start + timeout;
        let (tx, rx) = mpsc::channel();
        let mut srv = match Proc::spawn(topo, Side::A, &server, Some(tx)) {
            Ok(s) => s,
            Err(e) => {
                return fail(
                    Status::Failed,
                    format!(
                        "starting the {server_name} ({}): {e}",
                        server.program.display()
                    ),
                )
            }
        };
        // Wait for the announcement (a program: at most PROGRAM_START_WAIT).
        let announce_by = if program.is_some() {
            (start + PROGRAM_START_WAIT).min(deadline)
        } else {
            deadline
        };
        loop {
            match rx.recv_timeout(Duration::from_millis(20)) {
                Ok(()) => break,
                Err(mpsc::RecvTimeoutError::Disconnected) => break,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
            }
            if srv.poll() || Instant::now() >= announce_by {
                break;
            }
        }
        if program.is_none() && srv.status.is_none() && Instant::now() >= deadline {
            srv.kill();
            let (_, out, err) = srv.finish();
            let mut r = fail(
                Status::Timeout,
                format!(
                    "killed after {} s: the {server_name} never announced its address\n{}",
                    timeout.as_secs(),
                    tail(&err)
                ),
            );
            r.garbler_output = keep(&out, &err);
            return r;
        }
        if srv.status.is_some_and(|s| !s.success()) || (program.is_none() && srv.status.is_some()) {
            let (st, out, err) = srv.finish();
            let mut r = fail(
                Status::Failed,
                format!(
                    "the {server_name} exited ({}) before the {client_name} started:\n{}",
                    st.map_or("?".into(), |s| s.to_string()),
                    tail(&err)
                ),
            );
            r.garbler_output = keep(&out, &err);
            return r;
        }

        let client_start = Instant::now();
        let mut cli = match Proc::spawn(topo, Side::B, &client, None) {
            Ok(c) => c,
            Err(e) => {
                return fail(
                    Status::Failed,
                    format!(
                        "starting the {client_name} ({}): {e}",
                        client.program.display()
                    ),
                )
            }
        };
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
            // One party failed: the other has a moment to notice by itself, then goes.
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
        let wall_ms = client_start.elapsed().as_secs_f64() * 1e3;
        let (s_status, s_out, s_err) = srv.finish();
        let (c_status, c_out, c_err) = cli.finish();
        let outputs = |mut r: RunRecord| {
            r.garbler_output = keep(&s_out, &s_err);
            r.evaluator_output = keep(&c_out, &c_err);
            r
        };
        if timed_out {
            let mut running = Vec::new();
            if s_status.is_none_or(|s| s.code().is_none()) {
                running.push(server_name);
            }
            if c_status.is_none_or(|s| s.code().is_none()) {
                running.push(client_name);
            }
            return outputs(fail(
                Status::Timeout,
                format!(
                    "killed at the {} s limit (still running: {})",
                    timeout.as_secs(),
                    running.join(", ")
                ),
            ));
        }
        let mut errors = Vec::new();
        for (name, st, err) in [
            (server_name, s_status, &s_err),
            (client_name, c_status, &c_err),
        ] {
            match st {
                Some(s) if s.success() => {}
                Some(s) => errors.push(format!("the {name} failed ({s}):\n{}", tail(err))),
                None => errors.push(format!("the {name} could not be waited for")),
            }
        }
        if !errors.is_empty() {
            return outputs(fail(Status::Failed, errors.join("\n")));
        }

        if program.is_some() {
            return outputs(RunRecord {
                status: Status::Ok,
                error: None,
                total_ms: Some(wall_ms),
                wall_ms: Some(wall_ms),
                ..fail(Status::Ok, String::new())
            });
        }
        let parse = |name: &str, out: &str| -> Result<Value, String> {
            serde_json::from_str::<Value>(out)
                .map_err(|e| format!("the {name}'s report is not JSON ({e}): {:.200}", out.trim()))
        };
        let (g, e) = match (parse(server_name, &s_out), parse(client_name, &c_out)) {
            (Ok(g), Ok(e)) => (g, e),
            (Err(x), _) | (_, Err(x)) => return outputs(fail(Status::Failed, x)),
        };
        let f = |v: &Value, k: &str| v.get(k).and_then(Value::as_f64);
        let u = |v: &Value, k: &str| v.get(k).and_then(Value::as_u64);
        let Some(total) = f(&g, "total_ms") else {
            return outputs(fail(
                Status::Failed,
                "the garbler's report has no total_ms".into(),
            ));
        };
        if !g["output"].is_null() && g["output"] != e["output"] {
            return outputs(fail(
                Status::Failed,
                format!(
                    "the parties disagree on the output: garbler {}, evaluator {}",
                    g["output"], e["output"]
                ),
            ));
        }
        let (ot, garble, eval) = (f(&e, "ot_ms"), f(&g, "garble_ms"), f(&e, "eval_ms"));
        let transfer = match (ot, garble, eval) {
            (Some(o), Some(gb), Some(ev)) => Some((total - o - gb - ev).max(0.0)),
            _ => None,
        };
        RunRecord {
            cell: p.cell.clone(),
            repetition: p.repetition,
            link: link.clone(),
            status: Status::Ok,
            error: None,
            total_ms: Some(total),
            ot_ms: ot,
            garble_ms: garble,
            eval_ms: eval,
            transfer_ms: transfer,
            wall_ms: Some(wall_ms),
            bytes_garbler_to_evaluator: u(&g, "bytes_garbler_to_evaluator"),
            bytes_evaluator_to_garbler: u(&g, "bytes_evaluator_to_garbler"),
            buffer_bytes: u(&g, "buffer_bytes").or_else(|| u(&e, "buffer_bytes")),
            garbler_report: Some(g.to_string()),
            evaluator_report: Some(e.to_string()),
            // Successful parties' standard error only (their stdout is the report).
            garbler_output: keep("", &s_err),
            evaluator_output: keep("", &c_err),
        }
    }
}
