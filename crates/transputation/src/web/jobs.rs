//! The experiments the page starts, one at a time: each is a child process of this binary
//! running `testbed run` with the flags the form composed (or `--resume ID`), the same code
//! path as the command line, with its privileges; the others wait in line, first come first
//! served, so that two experiments never share the emulator's cores unannounced.
//!
//! A [`Jobs`] is polled ([`Jobs::tick`], a few times a second): it reaps the running child
//! when it has ended and starts the next one. The child is reaped only there, under the
//! same lock as [`Jobs::cancel`] signals it, so a signal can never reach another process
//! that took over the id. Cancelling a running experiment is `testbed run`'s own Ctrl-C
//! (SIGINT): it kills the parties, removes the namespaces, keeps the runs recorded so far
//! and exits 130, after which `--resume` goes on; a child that has not ended
//! [`KILL_AFTER`] later is killed. The child stays in the server's process group, so a
//! Ctrl-C of `serve` interrupts it the same clean way.
//!
//! The child's standard error is kept (its last [`LOG_LINES`] lines, for its error
//! text), and read for the line `experiment ID "NAME": ...` that `testbed run` prints once
//! the experiment is recorded: how a new job learns its experiment's id.
//!
//! A `testbed run` this server did not start (from a command line) is found by its command
//! line in `/proc` ([`Jobs::elsewhere`]) and named on the pages, so that sharing the
//! emulator's cores with it is announced; the line does not wait for it, since nothing
//! tells when it ends but looking again.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader};
use std::os::unix::process::ExitStatusExt as _;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// A job's number, counted from 1 in the server's life.
pub(super) type JobId = u64;

/// Lines of a child's standard error kept.
const LOG_LINES: usize = 40;

/// How long a cancelled experiment gets to end cleanly before it is killed.
pub(super) const KILL_AFTER: Duration = Duration::from_secs(60);

/// How long after its child ended a job waits for the rest of its standard error (a
/// process the child started may hold the pipe open).
const READ_AFTER_EXIT: Duration = Duration::from_secs(2);

/// The most jobs waiting at once: a page cannot fill the server's memory with them.
pub(super) const MAX_WAITING: usize = 16;

/// Jobs that have ended kept for their pages; older ones are forgotten (their experiments
/// stay in the database).
const ENDED_KEPT: usize = 100;

/// Where a job is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum JobState {
    /// Waiting for the one before it.
    Queued,
    /// Its `testbed run` is running.
    Running,
    /// Asked to stop: interrupted, not ended yet.
    Cancelling,
    /// Removed from the line before it started.
    CancelledWaiting,
    /// Its `testbed run` ended: how, and for a failure the error it printed.
    Ended {
        /// Whether it was cancelled.
        cancelled: bool,
        /// Its exit status, as a sentence (`exit status 0`, `signal 9`).
        status: String,
        /// Whether it exited 0.
        success: bool,
        /// Its last error line, for a failure.
        error: Option<String>,
    },
}

impl JobState {
    /// Whether the job will not change any more.
    pub(super) fn is_over(&self) -> bool {
        matches!(self, JobState::CancelledWaiting | JobState::Ended { .. })
    }

    /// A sentence for the page.
    pub(super) fn describe(&self) -> String {
        match self {
            JobState::Queued => "waiting for the experiment before it".into(),
            JobState::Running => "running".into(),
            JobState::Cancelling => "cancelling: the runs under way are being stopped".into(),
            JobState::CancelledWaiting => "cancelled before it started".into(),
            JobState::Ended {
                cancelled: true, ..
            } => "cancelled: the runs recorded so far are kept; resume goes on".into(),
            JobState::Ended { success: true, .. } => "ended".into(),
            JobState::Ended { status, error, .. } => match error {
                Some(e) => format!("failed ({status}): {e}"),
                None => format!("failed ({status})"),
            },
        }
    }

    /// A word for scripts and tests.
    pub(super) fn word(&self) -> &'static str {
        match self {
            JobState::Queued => "queued",
            JobState::Running => "running",
            JobState::Cancelling => "cancelling",
            JobState::CancelledWaiting => "cancelled",
            JobState::Ended {
                cancelled: true, ..
            } => "cancelled",
            JobState::Ended { success: true, .. } => "ended",
            JobState::Ended { .. } => "failed",
        }
    }
}

/// What the child's standard error told so far.
#[derive(Debug, Default)]
struct Log {
    lines: VecDeque<String>,
    /// The experiment's id, from its `experiment ID "NAME": ...` line.
    experiment: Option<i64>,
}

/// One experiment to run.
#[derive(Debug)]
struct Job {
    id: JobId,
    /// What it runs, in a line.
    what: String,
    /// `testbed run` and its flags.
    args: Vec<String>,
    state: JobState,
    /// Its experiment, once known (at once for a resumed one).
    experiment: Option<i64>,
    log: Arc<Mutex<Log>>,
    /// The running child, until it is reaped.
    child: Option<Child>,
    /// The thread reading its standard error.
    reader: Option<JoinHandle<()>>,
    /// How the child ended and when it was reaped: the job ends once its standard error
    /// is read to the end (or [`READ_AFTER_EXIT`] later), so that its last error is known.
    exited: Option<(ExitStatus, Instant)>,
    /// When SIGINT was sent, for the kill after [`KILL_AFTER`].
    interrupted_at: Option<Instant>,
}

/// A job as a page shows it.
#[derive(Debug, Clone)]
pub(super) struct JobView {
    pub(super) id: JobId,
    pub(super) what: String,
    pub(super) args: Vec<String>,
    pub(super) state: JobState,
    pub(super) experiment: Option<i64>,
    /// The child's last lines of standard error.
    pub(super) log: Vec<String>,
    /// For a waiting job, the jobs ahead of it (the running one first).
    pub(super) ahead: Vec<JobId>,
}

/// The line of experiments: at most one running.
#[derive(Debug)]
pub(super) struct Jobs {
    /// The program each job runs (this binary).
    program: PathBuf,
    jobs: Vec<Job>,
    next: JobId,
}

impl Jobs {
    /// No job yet; each will run `program` with its arguments.
    pub(super) fn new(program: PathBuf) -> Jobs {
        Jobs {
            program,
            jobs: Vec::new(),
            next: 1,
        }
    }

    /// Puts an experiment in line: `args` for the program, `what` to show, and its
    /// experiment's id if known (a resumed one). It starts at the next [`Jobs::tick`] if
    /// none is running. A line of [`MAX_WAITING`] already is an error that says so.
    pub(super) fn enqueue(
        &mut self,
        what: String,
        args: Vec<String>,
        experiment: Option<i64>,
    ) -> Result<JobId, String> {
        let waiting = self
            .jobs
            .iter()
            .filter(|j| j.state == JobState::Queued)
            .count();
        if waiting >= MAX_WAITING {
            return Err(format!(
                "{waiting} experiments are waiting already, the most this server keeps in \
                 line; start this one when some have run, or cancel some"
            ));
        }
        let id = self.next;
        self.next += 1;
        self.jobs.push(Job {
            id,
            what,
            args,
            state: JobState::Queued,
            experiment,
            log: Arc::default(),
            child: None,
            reader: None,
            exited: None,
            interrupted_at: None,
        });
        let ended = self.jobs.iter().filter(|j| j.state.is_over()).count();
        if ended > ENDED_KEPT {
            let mut drop = ended - ENDED_KEPT;
            self.jobs.retain(|j| {
                let forget = drop > 0 && j.state.is_over();
                drop -= usize::from(forget);
                !forget
            });
        }
        Ok(id)
    }

    /// Reaps the running child if it ended, kills a cancelled one that outlived
    /// [`KILL_AFTER`], learns a new experiment's id, and starts the next job when none runs.
    pub(super) fn tick(&mut self) {
        for job in &mut self.jobs {
            if job.experiment.is_none() {
                job.experiment = lock(&job.log).experiment;
            }
            if let Some(child) = job.child.as_mut() {
                if job.interrupted_at.is_some_and(|t| t.elapsed() > KILL_AFTER) {
                    let _ = child.kill();
                }
                match child.try_wait() {
                    Ok(None) => {}
                    Ok(Some(status)) => {
                        job.exited = Some((status, Instant::now()));
                        job.child = None;
                    }
                    Err(e) => {
                        job.state = JobState::Ended {
                            cancelled: false,
                            status: "unknown".into(),
                            success: false,
                            error: Some(format!("waiting for the experiment failed: {e}")),
                        };
                        job.child = None;
                    }
                }
            }
            if let Some((status, at)) = job.exited {
                let read = job.reader.as_ref().is_none_or(JoinHandle::is_finished);
                if read || at.elapsed() > READ_AFTER_EXIT {
                    job.experiment = job.experiment.or(lock(&job.log).experiment);
                    job.state = ended(job.state == JobState::Cancelling, status, &job.log);
                    job.exited = None;
                    job.reader = None;
                }
            }
        }
        if self
            .jobs
            .iter()
            .any(|j| j.child.is_some() || j.exited.is_some())
        {
            return;
        }
        if let Some(job) = self.jobs.iter_mut().find(|j| j.state == JobState::Queued) {
            start(&self.program, job);
        }
    }

    /// Cancels job `id`: a waiting one leaves the line, a running one is interrupted.
    /// An `Err` says why nothing was done.
    pub(super) fn cancel(&mut self, id: JobId) -> Result<(), String> {
        let job = self
            .jobs
            .iter_mut()
            .find(|j| j.id == id)
            .ok_or_else(|| format!("There is no job {id}."))?;
        match job.state {
            JobState::Queued => {
                job.state = JobState::CancelledWaiting;
                Ok(())
            }
            JobState::Running => {
                // Ended already: its end is being read.
                let Some(child) = job.child.as_ref() else {
                    return Ok(());
                };
                let pid = i32::try_from(child.id())
                    .ok()
                    .and_then(rustix::process::Pid::from_raw)
                    .ok_or_else(|| format!("Job {id} has no process to stop."))?;
                // The child is not reaped yet (only `tick` reaps, under this same lock): the
                // id is still its own.
                rustix::process::kill_process(pid, rustix::process::Signal::INT)
                    .map_err(|e| format!("Stopping job {id} failed: {e}."))?;
                job.state = JobState::Cancelling;
                job.interrupted_at = Some(Instant::now());
                Ok(())
            }
            JobState::Cancelling => Ok(()),
            _ => Err(format!("Job {id} has ended already.")),
        }
    }

    /// Job `id` as a page shows it.
    pub(super) fn view(&self, id: JobId) -> Option<JobView> {
        let job = self.jobs.iter().find(|j| j.id == id)?;
        let ahead = if job.state == JobState::Queued {
            self.jobs
                .iter()
                .take_while(|j| j.id != id)
                .filter(|j| matches!(j.state, JobState::Running | JobState::Cancelling))
                .chain(
                    self.jobs
                        .iter()
                        .take_while(|j| j.id != id)
                        .filter(|j| j.state == JobState::Queued),
                )
                .map(|j| j.id)
                .collect()
        } else {
            Vec::new()
        };
        Some(JobView {
            id: job.id,
            what: job.what.clone(),
            args: job.args.clone(),
            state: job.state.clone(),
            experiment: job.experiment,
            log: lock(&job.log).lines.iter().cloned().collect(),
            ahead,
        })
    }

    /// Every job kept, newest first.
    pub(super) fn all(&self) -> Vec<JobView> {
        self.jobs
            .iter()
            .rev()
            .filter_map(|j| self.view(j.id))
            .collect()
    }

    /// The job that runs or waits to run experiment `experiment`, if one does.
    pub(super) fn live_for(&self, experiment: i64) -> Option<JobId> {
        self.jobs
            .iter()
            .find(|j| j.experiment == Some(experiment) && !j.state.is_over())
            .map(|j| j.id)
    }
}

/// The state of a job whose child ended with `status`.
fn ended(cancelled: bool, status: ExitStatus, log: &Mutex<Log>) -> JobState {
    let error = if status.success() {
        None
    } else {
        last_error(&lock(log).lines)
    };
    JobState::Ended {
        cancelled,
        status: match (status.code(), status.signal()) {
            (Some(code), _) => format!("exit status {code}"),
            (None, Some(sig)) => format!("signal {sig}"),
            _ => status.to_string(),
        },
        success: status.success(),
        error,
    }
}

/// A `testbed run` on this machine that this server did not start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Elsewhere {
    pub(super) pid: u32,
    /// Its command line.
    pub(super) args: Vec<String>,
}

impl Elsewhere {
    /// Its command line, the arguments joined by blanks.
    pub(super) fn command(&self) -> String {
        self.args.join(" ")
    }

    /// Whether it may be resuming experiment `id` of the database at `db`: it resumes an
    /// experiment `id` ([`resumes`](Self::resumes)) and its database is not shown to be
    /// another file ([`database`](Self::database): unknown counts as the same, since two
    /// runs of one experiment would record its runs twice).
    pub(super) fn resumes_in(&self, id: i64, db: &std::path::Path) -> bool {
        use std::os::unix::fs::MetadataExt;
        if !self.resumes(id) {
            return false;
        }
        let file = |p: &std::path::Path| std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()));
        match (self.database().as_deref().and_then(file), file(db)) {
            (Some(theirs), Some(ours)) => theirs == ours,
            _ => true,
        }
    }

    /// Its results database as a path from here, if its command line names one (`--db P`
    /// or `--db=P`, a relative one from its working directory): None where it runs on the
    /// default database, whose place depends on its environment, or its working directory
    /// cannot be read.
    pub(super) fn database(&self) -> Option<std::path::PathBuf> {
        let named = std::path::Path::new(self.flag("--db")?);
        if named.is_absolute() {
            return Some(named.to_path_buf());
        }
        let cwd = std::fs::read_link(format!("/proc/{}/cwd", self.pid)).ok()?;
        Some(cwd.join(named))
    }

    /// Whether it resumes experiment `id` (`--resume ID` or `--resume=ID`) of whichever
    /// database.
    pub(super) fn resumes(&self, id: i64) -> bool {
        self.flag("--resume") == Some(id.to_string().as_str())
    }

    /// The value of its flag `name` (`NAME=VALUE` or `NAME VALUE`), if it has it.
    fn flag(&self, name: &str) -> Option<&str> {
        let joined = format!("{name}=");
        self.args.iter().enumerate().find_map(|(i, a)| {
            a.strip_prefix(joined.as_str()).or_else(|| {
                (a == name)
                    .then(|| self.args.get(i + 1))
                    .flatten()
                    .map(String::as_str)
            })
        })
    }
}

impl Jobs {
    /// The `testbed run` processes on this machine that are not this server's jobs (from a
    /// command line, or another server): the pages say so, since they share the emulator's
    /// cores with the experiments started here. This server does not wait for them: it
    /// cannot know when one ends but by looking again.
    pub(super) fn elsewhere(&self) -> Vec<Elsewhere> {
        elsewhere_than(&self.own_pids())
    }

    /// The process ids of this server's running jobs.
    pub(super) fn own_pids(&self) -> Vec<u32> {
        self.jobs
            .iter()
            .filter_map(|j| j.child.as_ref().map(Child::id))
            .collect()
    }
}

/// The `testbed run` processes on this machine other than `own` ([`Jobs::elsewhere`]): a
/// scan of `/proc`, which a caller that need not hold the line's lock makes without it.
pub(super) fn elsewhere_than(own: &[u32]) -> Vec<Elsewhere> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|entry| {
            let pid: u32 = entry.file_name().to_str()?.parse().ok()?;
            let raw = std::fs::read(entry.path().join("cmdline")).ok()?;
            let args: Vec<String> = raw
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect();
            (!own.contains(&pid) && is_testbed_run(&args)).then_some(Elsewhere { pid, args })
        })
        .collect()
}

/// Whether a command line is a `transputation` binary's `testbed run`: its program's file
/// name starts with `transputation`, and `testbed` then `run` are among its arguments.
fn is_testbed_run(args: &[String]) -> bool {
    let program = args.first().map(|a| a.rsplit('/').next().unwrap_or(a));
    program.is_some_and(|p| p.starts_with("transputation"))
        && args.windows(2).any(|w| w[0] == "testbed" && w[1] == "run")
}

/// Starts `job`'s child; a failure to start ends the job with the reason.
fn start(program: &PathBuf, job: &mut Job) {
    let spawned = Command::new(program)
        .args(&job.args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn();
    match spawned {
        Ok(mut child) => {
            if let Some(stderr) = child.stderr.take() {
                let log = job.log.clone();
                job.reader = Some(std::thread::spawn(move || {
                    read_log(BufReader::new(stderr), &log)
                }));
            }
            job.child = Some(child);
            job.state = JobState::Running;
        }
        Err(e) => {
            job.state = JobState::Ended {
                cancelled: false,
                status: "not started".into(),
                success: false,
                error: Some(format!("starting {} failed: {e}", program.display())),
            };
        }
    }
}

/// Keeps the last [`LOG_LINES`] lines of a child's standard error and its experiment's id.
fn read_log(stderr: impl BufRead, log: &Mutex<Log>) {
    for line in stderr.lines().map_while(Result::ok) {
        let mut log = lock(log);
        if log.experiment.is_none() {
            log.experiment = experiment_id(&line);
        }
        if log.lines.len() == LOG_LINES {
            log.lines.pop_front();
        }
        log.lines.push_back(line);
    }
}

/// The id in `testbed run`'s line `experiment ID "NAME": N runs ...`.
fn experiment_id(line: &str) -> Option<i64> {
    let rest = line.strip_prefix("experiment ")?;
    let (id, rest) = rest.split_once(' ')?;
    rest.starts_with('"').then(|| id.parse().ok()).flatten()
}

/// The error a failed child printed: its last `error: ...` line, else its last line.
fn last_error(lines: &VecDeque<String>) -> Option<String> {
    lines
        .iter()
        .rev()
        .find_map(|l| l.strip_prefix("error: "))
        .or_else(|| lines.back().map(String::as_str))
        .map(str::to_string)
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wait_until(jobs: &Mutex<Jobs>, id: JobId, word: &str) -> JobView {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let mut j = lock(jobs);
            j.tick();
            let v = j.view(id).unwrap();
            if v.state.word() == word {
                return v;
            }
            assert!(Instant::now() < deadline, "job {id}: {:?}", v.state);
            drop(j);
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn the_line_runs_one_job_at_a_time_in_order() {
        // The program is a shell here: the line does not care what a job runs.
        let jobs = Mutex::new(Jobs::new("/bin/sh".into()));
        let sh = |script: &str| vec!["-c".to_string(), script.to_string()];
        let (first, second, third) = {
            let mut j = lock(&jobs);
            let first = j
                .enqueue(
                    "first".into(),
                    // `exec`: the interrupt reaches the sleep itself.
                    sh("echo 'experiment 7 \"x\": 2 runs' >&2; exec sleep 30"),
                    None,
                )
                .unwrap();
            let second = j
                .enqueue(
                    "second".into(),
                    sh("echo 'error: needs root' >&2; exit 3"),
                    None,
                )
                .unwrap();
            let third = j.enqueue("third".into(), sh("exit 0"), Some(9)).unwrap();
            j.tick();
            (first, second, third)
        };
        let running = wait_until(&jobs, first, "running");
        assert!(running.ahead.is_empty());
        // The id comes from the child's line.
        let deadline = Instant::now() + Duration::from_secs(20);
        while lock(&jobs).view(first).unwrap().experiment.is_none() {
            lock(&jobs).tick();
            assert!(Instant::now() < deadline);
            std::thread::sleep(Duration::from_millis(20));
        }
        // The others wait behind it, however often the line is polled.
        for _ in 0..5 {
            lock(&jobs).tick();
        }
        let j = lock(&jobs);
        assert_eq!(j.view(second).unwrap().state, JobState::Queued);
        assert_eq!(j.view(second).unwrap().ahead, [first]);
        assert_eq!(j.view(third).unwrap().ahead, [first, second]);
        assert_eq!(j.live_for(7), Some(first));
        assert_eq!(j.live_for(9), Some(third));
        drop(j);
        // The third leaves the line; the first is interrupted, then the second runs and
        // fails with its error line.
        lock(&jobs).cancel(third).unwrap();
        lock(&jobs).cancel(first).unwrap();
        let v = wait_until(&jobs, first, "cancelled");
        assert!(
            v.state.describe().contains("resume goes on"),
            "{:?}",
            v.state
        );
        let v = wait_until(&jobs, second, "failed");
        assert_eq!(
            v.state.describe(),
            "failed (exit status 3): needs root",
            "{:?}",
            v.log
        );
        let mut j = lock(&jobs);
        assert_eq!(j.view(third).unwrap().state, JobState::CancelledWaiting);
        assert!(j.cancel(second).unwrap_err().contains("ended already"));
        assert!(j.cancel(99).unwrap_err().contains("no job 99"));
        assert_eq!(j.live_for(7), None);
        assert_eq!(
            j.all().iter().map(|v| v.id).collect::<Vec<_>>(),
            [third, second, first]
        );
    }

    #[test]
    fn a_testbed_run_started_elsewhere_is_seen() {
        let line =
            |args: &[&str]| is_testbed_run(&args.iter().map(|a| a.to_string()).collect::<Vec<_>>());
        assert!(line(&[
            "/usr/bin/transputation",
            "testbed",
            "run",
            "--preset",
            "x"
        ]));
        assert!(line(&["./target/release/transputation", "testbed", "run"]));
        assert!(!line(&["transputation", "testbed", "report"]));
        assert!(!line(&[
            "transputation",
            "garbler",
            "--listen",
            "10.64.0.1:20000"
        ]));
        assert!(!line(&["vim", "testbed", "run"]));
        // A process whose command line is one (the name given by bash's `exec -a`; the `:`
        // keeps the shell from replacing itself with the sleep).
        let mut other = Command::new("bash")
            .args([
                "-c",
                "exec -a /opt/transputation sh -c 'sleep 30; :' testbed run",
            ])
            .spawn()
            .unwrap();
        let jobs = Jobs::new("/bin/true".into());
        let deadline = Instant::now() + Duration::from_secs(10);
        while !jobs.elsewhere().iter().any(|e| e.pid == other.id()) {
            assert!(Instant::now() < deadline, "{:?}", jobs.elsewhere());
            std::thread::sleep(Duration::from_millis(20));
        }
        let seen = jobs
            .elsewhere()
            .into_iter()
            .find(|e| e.pid == other.id())
            .unwrap();
        assert_eq!(
            seen.command(),
            "/opt/transputation -c sleep 30; : testbed run"
        );
        assert!(!seen.resumes(3));
        let resuming = |args: &[&str]| Elsewhere {
            pid: 1,
            args: args.iter().map(|a| a.to_string()).collect(),
        };
        assert!(resuming(&["transputation", "testbed", "run", "--resume", "3"]).resumes(3));
        assert!(resuming(&["transputation", "testbed", "run", "--resume=3"]).resumes(3));
        assert!(!resuming(&["transputation", "testbed", "run", "--resume=31"]).resumes(3));
        other.kill().unwrap();
        other.wait().unwrap();
        assert!(!jobs.elsewhere().iter().any(|e| e.pid == other.id()));
    }

    /// A run elsewhere resumes "experiment 1" of its own database: the same experiment only
    /// if that database is this one (or cannot be told apart from it).
    #[test]
    fn a_run_elsewhere_resumes_an_experiment_of_this_database_only_if_it_names_it() {
        // In the working directory, to be named relative to it.
        let cwd = std::env::current_dir().unwrap();
        let dir = tempfile::tempdir_in(&cwd).unwrap();
        let (ours, theirs) = (
            dir.path().join("ours.sqlite"),
            dir.path().join("theirs.sqlite"),
        );
        std::fs::write(&ours, b"").unwrap();
        std::fs::write(&theirs, b"").unwrap();
        let relative = ours
            .strip_prefix(&cwd)
            .unwrap()
            .to_str()
            .unwrap()
            .to_string();
        // This process stands in for the other: its working directory is read from /proc.
        let run = |db: &[&str]| {
            let mut args = vec!["transputation", "testbed", "run", "--resume", "1"];
            args.extend(db);
            Elsewhere {
                pid: std::process::id(),
                args: args.iter().map(|a| a.to_string()).collect(),
            }
        };
        let theirs = theirs.to_str().unwrap();
        assert!(!run(&["--db", theirs]).resumes_in(1, &ours));
        assert!(!run(&[&format!("--db={theirs}")]).resumes_in(1, &ours));
        assert!(run(&["--db", ours.to_str().unwrap()]).resumes_in(1, &ours));
        assert!(run(&["--db", &relative]).resumes_in(1, &ours));
        assert_eq!(
            run(&["--db", &relative]).database(),
            Some(cwd.join(&relative))
        );
        assert!(!run(&["--db", ours.to_str().unwrap()]).resumes_in(2, &ours));
        // On the default database, or one that does not exist: it may be this one.
        assert!(run(&[]).resumes_in(1, &ours));
        assert!(run(&["--db", "/nonexistent/x.sqlite"]).resumes_in(1, &ours));
    }

    #[test]
    fn the_line_has_room_for_so_many_waiting() {
        let mut jobs = Jobs::new("/nonexistent/program".into());
        for _ in 0..MAX_WAITING {
            jobs.enqueue("x".into(), Vec::new(), None).unwrap();
        }
        let e = jobs.enqueue("x".into(), Vec::new(), None).unwrap_err();
        assert!(e.starts_with("16 experiments are waiting already"), "{e}");
        // A program that cannot start ends its job with the reason, and makes room.
        jobs.tick();
        let v = jobs.view(1).unwrap();
        assert_eq!(v.state.word(), "failed");
        assert!(v
            .state
            .describe()
            .contains("starting /nonexistent/program failed"));
        assert!(jobs.enqueue("x".into(), Vec::new(), None).is_ok());
    }

    #[test]
    fn a_new_experiments_id_is_read_from_its_announcement() {
        assert_eq!(
            experiment_id("experiment 12 \"web\": 4 runs (1 conditions), results in /x"),
            Some(12)
        );
        assert_eq!(experiment_id("experiment 12: 4 runs recorded now"), None);
        assert_eq!(experiment_id("[1/4] aes128 ideal tcp @ lan #1"), None);
        let lines: VecDeque<String> = ["a", "error: no root", "b"].map(String::from).into();
        assert_eq!(last_error(&lines).as_deref(), Some("no root"));
        let lines: VecDeque<String> = ["a", "b"].map(String::from).into();
        assert_eq!(last_error(&lines).as_deref(), Some("b"));
    }
}
