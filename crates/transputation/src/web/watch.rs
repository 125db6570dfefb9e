//! Watching an experiment run: a job's page (`/jobs/{id}`: its state, the line ahead of it,
//! its progress with an estimate of the time left, each run recorded so far with failures'
//! error text, its `testbed run`'s last lines, a cancel button, and once it has ended the
//! report), kept current by server-sent events (`/jobs/{id}/events`, and
//! `/experiments/{id}/events` for an experiment alone) that the page's one script,
//! `/static/watch.js`, reads.
//!
//! The events come from the database, read every [`POLL`] as runs land (the runner records
//! each run in its own transaction): `progress` (recorded and planned runs, failures, the
//! time left), `run` (each run recorded since the last, in the order recorded), `job` (the
//! job's state, when it changes), `problem` (the database could not be read this time) and
//! `end` (the experiment finished, or its job ended), after which the stream closes. The
//! estimate is the median time between the last runs recorded times the runs still to do:
//! it needs no clock of this server's, so a page opened halfway has one.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::fmt::Write as _;
use std::time::Duration;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{Html, IntoResponse, Response};
use futures_util::Stream;
use serde::{Deserialize, Serialize};
use serde_json::json;
use transputation_experiments::db::{ExperimentRow, RunRecord, Status};
use transputation_experiments::report;

use super::html::{escape, page, para, table};
use super::jobs::JobId;
use super::{pages, run, with_db, PageError, Shared};

/// How often a stream looks at the database and the job.
const POLL: Duration = Duration::from_millis(500);

/// The runs an estimate of the time left looks at, the last ones recorded.
const ETA_WINDOW: usize = 10;

/// The page's script: it reads the events and updates the page.
const SCRIPT: &str = include_str!("watch.js");

/// Where a stream starts: the number of runs the page shows already.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Start {
    from: Option<usize>,
}

/// An experiment's progress, as the page and its events show it.
#[derive(Debug, Clone, PartialEq, Serialize)]
struct Progress {
    recorded: i64,
    planned: i64,
    failed: usize,
    finished: bool,
    /// Seconds left, estimated; none before two runs are recorded, or once finished.
    eta_secs: Option<u64>,
    /// All of it in a sentence.
    text: String,
}

impl Progress {
    fn of(row: &ExperimentRow, runs: &[RunRecord], times: &[i64]) -> Progress {
        let failed = runs.iter().filter(|r| r.status != Status::Ok).count();
        let finished = row.finished_at.is_some();
        let left = (row.planned_runs - row.recorded_runs).max(0);
        let eta_secs = (!finished && left > 0)
            .then(|| seconds_per_run(times))
            .flatten()
            .map(|per| per * left as u64);
        let mut text = format!(
            "{} of {} runs recorded, {failed} failed or timed out",
            row.recorded_runs, row.planned_runs
        );
        if finished {
            text.push_str("; finished");
        } else if let Some(s) = eta_secs {
            let _ = write!(text, "; about {} left", fmt_secs(s));
        }
        Progress {
            recorded: row.recorded_runs,
            planned: row.planned_runs,
            failed,
            finished,
            eta_secs,
            text,
        }
    }
}

/// The median time between consecutive runs among the last [`ETA_WINDOW`] recorded, whole
/// seconds: a pause (an interrupted experiment resumed days later) is one interval of
/// many, and does not move it.
fn seconds_per_run(times: &[i64]) -> Option<u64> {
    let last = &times[times.len().saturating_sub(ETA_WINDOW + 1)..];
    let mut gaps: Vec<u64> = last
        .windows(2)
        .map(|w| u64::try_from(w[1] - w[0]).unwrap_or(0))
        .collect();
    if gaps.is_empty() {
        return None;
    }
    gaps.sort_unstable();
    Some(gaps[gaps.len() / 2].max(1))
}

fn fmt_secs(s: u64) -> String {
    if s >= 3600 {
        format!("{}h{:02}m", s / 3600, s % 3600 / 60)
    } else {
        format!("{}m{:02}s", s / 60, s % 60)
    }
}

/// The columns of the runs' table, and each run's cells (plain text).
const RUN_HEADERS: [&str; 8] = [
    "circuit",
    "scheme",
    "transport",
    "condition",
    "run",
    "status",
    "total ms",
    "error",
];

fn run_cells(r: &RunRecord) -> Vec<String> {
    let error = r.error.as_deref().unwrap_or("");
    vec![
        r.cell.circuit.clone(),
        r.cell.scheme.clone(),
        r.transport_as_written().to_string(),
        r.cell.condition.clone(),
        (r.repetition + 1).to_string(),
        r.status.as_str().to_string(),
        r.total_ms.map(|t| format!("{t:.1}")).unwrap_or_default(),
        error.lines().next().unwrap_or("").to_string(),
    ]
}

/// A run as its event carries it: the cells, and for a failure its whole error text.
fn run_event(r: &RunRecord) -> Event {
    let data = json!({
        "cells": run_cells(r),
        "failed": r.status != Status::Ok,
        "error": r.error,
    });
    Event::default().event("run").data(data.to_string())
}

/// `/jobs/{id}`: a job's page.
pub(super) async fn job_page(
    State(served): State<Shared>,
    id: Result<Path<JobId>, PathRejection>,
) -> Result<Response, PageError> {
    let Path(id) = id.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let view = served
        .lock_jobs()
        .view(id)
        .ok_or_else(|| PageError::NotFound(format!("There is no job {id} on this server.")))?;
    let over = view.state.is_over();
    let mut body = format!(
        "<h1>Job {id}</h1>\n<p>{}</p>\n<p id=\"job-state\" {}>{}</p>\n",
        escape(&view.what),
        run::state_attr(&view.state),
        escape(&view.state.describe())
    );
    body.push_str(&run::waiting_html(&view));
    if !over {
        body.push_str(&run::elsewhere_html(&served));
    }
    let command: Vec<String> = view.args.iter().map(|a| escape(a)).collect();
    let _ = writeln!(
        body,
        "<p class=\"note\">Runs <code>transputation</code> with the arguments <code>{}</code>.</p>",
        command.join("</code> <code>")
    );
    if !over {
        let _ = writeln!(
            body,
            "<form method=\"post\" action=\"/jobs/{id}/cancel\"><button id=\"cancel\">Cancel\
             </button></form>"
        );
    }
    let mut shown = 0;
    if let Some(experiment) = view.experiment {
        let own = served.clone();
        let (html, count) = with_db(&served, move |db, _| {
            let failed = |e: transputation_experiments::Error| PageError::Failed(e.into());
            let Some(row) = db.experiment(experiment).map_err(failed)? else {
                let missing = format!("Experiment {experiment} is not in the database.");
                return Ok((
                    format!("<div id=\"experiment\">{}</div>", para(&missing)),
                    0,
                ));
            };
            let runs = db.runs(experiment).map_err(failed)?;
            let times = db.record_times(experiment).map_err(failed)?;
            let mut s = progress_html(&row, &runs, &times);
            if over || row.finished_at.is_some() {
                if row.finished_at.is_none() {
                    s.push_str(&run::unfinished_html(&own, experiment));
                }
                let r = report::build_in(Some(&row), &runs, report::Unit::Ms);
                let _ = writeln!(
                    s,
                    "<h2>Report of <a href=\"/experiments/{experiment}\">experiment \
                     {experiment}</a></h2>"
                );
                s.push_str(&pages::section(&row, &runs, &r));
            }
            Ok((s, runs.len()))
        })
        .await?;
        body.push_str(&html);
        shown = count;
    }
    if !view.log.is_empty() {
        let _ = writeln!(
            body,
            "<h3>Its last lines</h3>\n<pre id=\"log\">{}</pre>",
            escape(&view.log.join("\n"))
        );
    }
    if !over {
        let _ = writeln!(
            body,
            "<div id=\"watch\" data-events=\"/jobs/{id}/events?from={shown}\"></div>\n\
             <script src=\"/static/watch.js\"></script>"
        );
    }
    Ok(Html(page(&format!("job {id}"), &body)).into_response())
}

/// The progress bar, its sentence, the runs so far and the failures' errors.
fn progress_html(row: &ExperimentRow, runs: &[RunRecord], times: &[i64]) -> String {
    let p = Progress::of(row, runs, times);
    let mut s = format!(
        "<h2 id=\"experiment\">Experiment <a href=\"/experiments/{id}\">{id} \"{name}\"</a></h2>\n<p><progress \
         id=\"progress\" max=\"{max}\" value=\"{value}\"></progress> <span \
         id=\"progress-text\">{text}</span></p>\n",
        id = row.id,
        name = escape(&row.name),
        max = p.planned.max(1),
        value = p.recorded,
        text = escape(&p.text)
    );
    let headers: Vec<String> = RUN_HEADERS.map(String::from).into();
    let rows: Vec<Vec<String>> = runs
        .iter()
        .map(|r| run_cells(r).iter().map(|c| escape(c)).collect())
        .collect();
    s.push_str(&table("runs", &headers, &rows));
    s.push_str("<ul id=\"failures\">\n");
    for r in runs.iter().filter(|r| r.status != Status::Ok) {
        let _ = writeln!(
            s,
            "<li>{}: <pre>{}</pre></li>",
            escape(&run_cells(r)[..5].join(" ")),
            escape(r.error.as_deref().unwrap_or(""))
        );
    }
    s.push_str("</ul>\n");
    s
}

/// What a stream watches and has sent.
struct Watch {
    served: Shared,
    job: Option<JobId>,
    experiment: Option<i64>,
    /// Runs sent (or shown by the page) so far.
    sent: usize,
    /// The recorded runs at the last look, to read the runs only when more landed.
    last_recorded: Option<i64>,
    last_job: Option<String>,
    pending: VecDeque<Event>,
    done: bool,
    first: bool,
}

impl Watch {
    /// Looks at the job and the database once, queueing what changed.
    async fn look(&mut self) {
        let mut job_over = None;
        if let Some(id) = self.job {
            let Some(v) = self.served.lock_jobs().view(id) else {
                self.end("forgotten");
                return;
            };
            let state = json!({
                "state": v.state.word(),
                "text": v.state.describe(),
                "experiment": v.experiment,
                "ahead": v.ahead,
            })
            .to_string();
            if self.last_job.as_ref() != Some(&state) {
                self.pending
                    .push_back(Event::default().event("job").data(&state));
                self.last_job = Some(state);
            }
            self.experiment = self.experiment.or(v.experiment);
            job_over = v.state.is_over().then(|| v.state.word());
        }
        if let Some(id) = self.experiment {
            if let Err(e) = self.look_at_experiment(id).await {
                let text = e.text();
                self.pending
                    .push_back(Event::default().event("problem").data(text));
            }
        }
        if let Some(word) = job_over {
            self.end(word);
        }
    }

    /// Queues the runs recorded since the last look and the progress, if any landed.
    async fn look_at_experiment(&mut self, id: i64) -> Result<(), PageError> {
        let last = self.last_recorded;
        let seen = with_db(&self.served, move |db, _| {
            let failed = |e: transputation_experiments::Error| PageError::Failed(e.into());
            let row = db
                .experiment(id)
                .map_err(failed)?
                .ok_or_else(|| PageError::NotFound(format!("There is no experiment {id}.")))?;
            if last == Some(row.recorded_runs) && row.finished_at.is_none() {
                return Ok(None);
            }
            let runs = db.runs(id).map_err(failed)?;
            let times = db.record_times(id).map_err(failed)?;
            Ok(Some((row, runs, times)))
        })
        .await?;
        let Some((row, runs, times)) = seen else {
            return Ok(());
        };
        for r in runs.iter().skip(self.sent) {
            self.pending.push_back(run_event(r));
        }
        self.sent = self.sent.max(runs.len());
        self.last_recorded = Some(row.recorded_runs);
        let progress = Progress::of(&row, &runs, &times);
        let data = serde_json::to_string(&progress).unwrap_or_default();
        self.pending
            .push_back(Event::default().event("progress").data(data));
        if row.finished_at.is_some() {
            self.end("finished");
        }
        Ok(())
    }

    fn end(&mut self, why: &str) {
        if !self.done {
            let data = json!({ "why": why }).to_string();
            self.pending
                .push_back(Event::default().event("end").data(data));
            self.done = true;
        }
    }
}

/// The events of a [`Watch`], until it ends (or the page goes).
fn stream(watch: Watch) -> Sse<impl Stream<Item = Result<Event, Infallible>>> {
    let events = futures_util::stream::unfold(watch, |mut w| async move {
        loop {
            if let Some(e) = w.pending.pop_front() {
                return Some((Ok(e), w));
            }
            if w.done {
                return None;
            }
            if !w.first {
                tokio::time::sleep(POLL).await;
            }
            w.first = false;
            w.look().await;
        }
    });
    Sse::new(events).keep_alive(KeepAlive::default())
}

fn watch(served: Shared, job: Option<JobId>, experiment: Option<i64>, from: usize) -> Watch {
    Watch {
        served,
        job,
        experiment,
        sent: from,
        last_recorded: None,
        last_job: None,
        pending: VecDeque::new(),
        done: false,
        first: true,
    }
}

/// `/jobs/{id}/events?from=N`: a job's events, runs from the N+1st on.
pub(super) async fn job_events(
    State(served): State<Shared>,
    id: Result<Path<JobId>, PathRejection>,
    start: Result<Query<Start>, QueryRejection>,
) -> Result<Response, PageError> {
    let Path(id) = id.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let Query(start) = start.map_err(|e| PageError::BadRequest(e.body_text()))?;
    if served.lock_jobs().view(id).is_none() {
        return Err(PageError::NotFound(format!(
            "There is no job {id} on this server."
        )));
    }
    let from = start.from.unwrap_or(0);
    Ok(stream(watch(served, Some(id), None, from)).into_response())
}

/// `/experiments/{id}/events?from=N`: an experiment's events as its runs land, whoever
/// runs it.
pub(super) async fn experiment_events(
    State(served): State<Shared>,
    id: Result<Path<i64>, PathRejection>,
    start: Result<Query<Start>, QueryRejection>,
) -> Result<Response, PageError> {
    let Path(id) = id.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let Query(start) = start.map_err(|e| PageError::BadRequest(e.body_text()))?;
    with_db(&served, move |db, path| match db.experiment(id) {
        Ok(Some(_)) => Ok(()),
        Ok(None) => Err(PageError::NotFound(format!(
            "There is no experiment {id} in {}.",
            path.display()
        ))),
        Err(e) => Err(PageError::Failed(e.into())),
    })
    .await?;
    let from = start.from.unwrap_or(0);
    Ok(stream(watch(served, None, Some(id), from)).into_response())
}

/// `/static/watch.js`: the script of a job's page.
pub(super) async fn script() -> Response {
    (
        [(header::CONTENT_TYPE, "text/javascript; charset=utf-8")],
        SCRIPT,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_time_left_is_the_median_gap_times_the_runs_left() {
        assert_eq!(seconds_per_run(&[]), None);
        assert_eq!(seconds_per_run(&[100]), None);
        assert_eq!(seconds_per_run(&[100, 110, 130]), Some(20));
        // A pause of a day among the last runs does not move it.
        assert_eq!(
            seconds_per_run(&[0, 5, 10, 86_400, 86_405, 86_410]),
            Some(5)
        );
        // Runs within one second still take some.
        assert_eq!(seconds_per_run(&[7, 7, 7]), Some(1));
        // Only the last runs count.
        let mut times: Vec<i64> = (0..100).map(|i| i * 60).collect();
        times.extend((1..=20).map(|i| 5940 + i * 2));
        assert_eq!(seconds_per_run(&times), Some(2));
        assert_eq!(fmt_secs(3725), "1h02m");
        assert_eq!(fmt_secs(125), "2m05s");
    }
}
