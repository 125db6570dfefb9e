//! Starting, cancelling and resuming experiments from the page: `/run` (the composing form
//! of [`compose`], a preset loaded into it, and the line of [`jobs`]), `POST /run` (start,
//! or wait behind the one running), `POST /jobs/{id}/cancel` and `POST
//! /experiments/{id}/resume` (an unfinished experiment no job of this server is running).
//!
//! The form comes as `multipart/form-data`, so that a Bristol file can come with it
//! ([`upload`]); each text field is at most [`MAX_FIELD_BYTES`].
//!
//! Every start is a job of [`jobs::Jobs`]: `transputation testbed run` with the form's
//! flags, so that the page runs what the command line runs, with its checks, its records
//! and its clean interrupt. The server itself still only reads the database.

use std::fmt::Write as _;
use std::path::PathBuf;

use axum::extract::multipart::MultipartRejection;
use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Multipart, Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;

use super::compose::{self, Compose, FieldErrors, MAX_FIELD_BYTES};
use super::html::{escape, page, para, table};
use super::jobs::{self, JobId, JobState};
use super::upload::read_limited;
use super::{blocking, programs, upload, with_db, PageError, Shared};

/// The most fields a form may have (the schemes and the conditions are one each).
const MAX_FIELDS: usize = 200;

/// What `/run` is asked: a preset to load.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Load {
    preset: Option<String>,
}

/// `/run`: the composing form (a preset's values with `?preset=NAME`) and the line.
pub(super) async fn form(
    State(served): State<Shared>,
    query: Result<Query<Load>, QueryRejection>,
) -> Result<Response, PageError> {
    let Query(load) = query.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let chosen = load
        .preset
        .as_deref()
        .map(str::trim)
        .filter(|p| !p.is_empty());
    let (compose, preset_error) = match chosen.map(Compose::from_preset) {
        None => (Compose::first_visit(), None),
        Some(Ok(c)) => (c, None),
        Some(Err(e)) => (Compose::first_visit(), Some(e)),
    };
    let status = if preset_error.is_some() {
        StatusCode::BAD_REQUEST
    } else {
        StatusCode::OK
    };
    let chosen = chosen.map(str::to_string);
    let body = blocking(move || {
        Ok(run_page(
            &served,
            &compose,
            &FieldErrors::new(),
            chosen.as_deref(),
            preset_error.as_deref(),
        ))
    })
    .await?;
    Ok((status, Html(page("Run", &body))).into_response())
}

/// The run page: the preset chooser, the form with its messages, and the line.
fn run_page(
    served: &Shared,
    compose: &Compose,
    errors: &FieldErrors,
    preset: Option<&str>,
    preset_error: Option<&str>,
) -> String {
    let mut body = String::from(
        "<h1>Run an experiment</h1>\n<p class=\"note\">It runs as <code>transputation testbed \
         run</code> does, with the flags the form makes: one experiment at a time, the next \
         waiting for the one before it.</p>\n",
    );
    if let Err(e) = transputation_netlab::ns::check_privileges() {
        let _ = writeln!(
            body,
            "<p class=\"error\" id=\"privileges\">This server cannot build emulated links: \
             {}. An experiment started here stops at that check: start <code>transputation \
             serve</code> as root to run experiments.</p>",
            escape(&e.to_string())
        );
    }
    body.push_str(&elsewhere_html(served));
    body.push_str(&compose::preset_html(preset, preset_error));
    let registered = programs::names(&served.programs);
    body.push_str(&compose::form_html(compose, errors, &registered));
    body.push_str(&line_html(served));
    body
}

/// A note on each `testbed run` of this machine that this server did not start.
pub(super) fn elsewhere_html(served: &Shared) -> String {
    // The scan of /proc without the line's lock, which the line's tick takes.
    let own = served.lock_jobs().own_pids();
    let others = jobs::elsewhere_than(&own);
    if others.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "<div id=\"elsewhere\" class=\"note\"><p>Also running on this machine, not started \
         here (an experiment started here shares the emulator's cores with it: this server \
         waits only for its own):</p>\n<ul>\n",
    );
    for e in others {
        let _ = writeln!(
            s,
            "<li>pid {}: <code>{}</code></li>",
            e.pid,
            escape(&e.command())
        );
    }
    s.push_str("</ul></div>\n");
    s
}

/// The jobs of this server, newest first.
fn line_html(served: &Shared) -> String {
    let all = served.lock_jobs().all();
    if all.is_empty() {
        return para("No experiment started from this page yet.");
    }
    let headers: Vec<String> = ["job", "what", "state", "experiment"]
        .map(String::from)
        .into();
    let rows: Vec<Vec<String>> = all
        .iter()
        .map(|j| {
            vec![
                format!("<a href=\"/jobs/{id}\">{id}</a>", id = j.id),
                escape(&j.what),
                escape(&j.state.describe()),
                j.experiment
                    .map(|e| format!("<a href=\"/experiments/{e}\">{e}</a>"))
                    .unwrap_or_default(),
            ]
        })
        .collect();
    format!("<h2>Started here</h2>\n{}", table("jobs", &headers, &rows))
}

/// `POST /run`: a valid form is started, or put in line behind the one running (the answer
/// sends the browser to its job's page); a bad one is answered with the form and each
/// message beside its field.
pub(super) async fn start(
    State(served): State<Shared>,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, PageError> {
    let multipart = multipart.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let (compose, mut errors) = read_form(multipart, served.circuits.clone()).await?;
    // Checking looks the uploads and programs up on disk, and a refusal lists the
    // programs: on a blocking thread.
    let checking = served.clone();
    let composed = blocking(move || {
        Ok(match compose.check(&checking.stores()) {
            Ok(c) if errors.is_empty() => Ok(c),
            Ok(_) => Err(refused(&checking, &compose, &errors)),
            Err(more) => {
                errors.extend(more);
                Err(refused(&checking, &compose, &errors))
            }
        })
    })
    .await?;
    let composed = match composed {
        Ok(c) => c,
        Err(refusal) => return Ok(refusal),
    };
    let mut args = served.testbed_run()?;
    args.extend(composed.flags.iter().cloned());
    let file = &composed.file;
    let plural =
        |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let what = format!(
        "{}: {} ({} × {} × {} × {} × {})",
        file.name.as_deref().unwrap_or("experiment"),
        plural(composed.planned_runs, "run", "runs"),
        file.circuits
            .iter()
            .chain(file.programs.keys())
            .cloned()
            .collect::<Vec<_>>()
            .join(", "),
        file.schemes.join(", "),
        file.transports.join(", "),
        plural(composed.conditions, "condition", "conditions"),
        plural(file.runs as usize, "run", "runs"),
    );
    let id = {
        let mut jobs = served.lock_jobs();
        let id = jobs.enqueue(what, args, None).map_err(PageError::Busy)?;
        jobs.tick();
        id
    };
    Ok(to_job(id))
}

/// The form the page sent, and a message for the upload if its file was refused. The file
/// is checked and stored in `dir`.
async fn read_form(
    mut multipart: Multipart,
    dir: PathBuf,
) -> Result<(Compose, FieldErrors), PageError> {
    let mut form = Compose::default();
    let mut errors = FieldErrors::new();
    let mut count = 0;
    loop {
        let field = match multipart.next_field().await {
            Ok(Some(field)) => field,
            Ok(None) => break,
            // The rest of a body cut at the upload's limit: what came before is answered.
            Err(_) if errors.iter().any(|(f, _)| *f == "upload") => break,
            Err(e) => {
                return Err(PageError::BadRequest(format!(
                    "The form is not readable: {e}"
                )))
            }
        };
        count += 1;
        if count > MAX_FIELDS {
            return Err(PageError::BadRequest(format!(
                "The form has more than {MAX_FIELDS} fields."
            )));
        }
        let name = field.name().unwrap_or("").to_string();
        if name == "upload" {
            let file_name = field.file_name().unwrap_or("").to_string();
            let bytes = match read_limited(field, upload::LIMIT_BYTES).await {
                Ok(b) => b,
                Err(message) => {
                    errors.push(("upload", message));
                    continue;
                }
            };
            if file_name.is_empty() && bytes.is_empty() {
                continue;
            }
            let dir = dir.clone();
            match blocking(move || Ok(upload::store(&bytes, &dir, &file_name))).await? {
                Ok(stored) => form.uploaded = stored,
                Err(message) => errors.push(("upload", message)),
            }
            continue;
        }
        let bytes = read_limited(field, MAX_FIELD_BYTES)
            .await
            .map_err(PageError::BadRequest)?;
        let text = String::from_utf8(bytes)
            .map_err(|_| PageError::BadRequest(format!("The field {name:?} is not UTF-8.")))?;
        form.set(&name, text).map_err(PageError::BadRequest)?;
    }
    Ok((form, errors))
}

/// The form again, with its messages.
fn refused(served: &Shared, compose: &Compose, errors: &FieldErrors) -> Response {
    let body = run_page(served, compose, errors, None, None);
    (StatusCode::BAD_REQUEST, Html(page("Run", &body))).into_response()
}

/// Sends the browser to job `id`'s page.
fn to_job(id: JobId) -> Response {
    (
        StatusCode::SEE_OTHER,
        [(header::LOCATION, format!("/jobs/{id}"))],
    )
        .into_response()
}

/// `POST /jobs/{id}/cancel`: a waiting job leaves the line, a running one is interrupted.
pub(super) async fn cancel(
    State(served): State<Shared>,
    id: Result<Path<JobId>, PathRejection>,
) -> Result<Response, PageError> {
    let Path(id) = id.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let mut jobs = served.lock_jobs();
    if jobs.view(id).is_none() {
        return Err(PageError::NotFound(format!(
            "There is no job {id} on this server."
        )));
    }
    jobs.cancel(id).map_err(PageError::Conflict)?;
    Ok(to_job(id))
}

/// `POST /experiments/{id}/resume`: runs what an unfinished experiment has not recorded
/// yet (`testbed run --resume ID`), unless a job of this server runs or waits to run it.
pub(super) async fn resume(
    State(served): State<Shared>,
    id: Result<Path<i64>, PathRejection>,
) -> Result<Response, PageError> {
    let Path(id) = id.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let row = with_db(&served, move |db, path| {
        db.experiment(id)
            .map_err(|e| PageError::Failed(e.into()))?
            .ok_or_else(|| {
                PageError::NotFound(format!(
                    "There is no experiment {id} in {}.",
                    path.display()
                ))
            })
    })
    .await?;
    if row.finished_at.is_some() {
        return Err(PageError::Conflict(format!(
            "Experiment {id} \"{}\" has every planned run recorded: there is nothing to \
             resume.",
            row.name
        )));
    }
    let mut args = served.testbed_run()?;
    args.push(format!("--resume={id}"));
    let job = {
        let mut jobs = served.lock_jobs();
        if let Some(live) = jobs.live_for(id) {
            return Ok(to_job(live));
        }
        if let Some(other) = jobs
            .elsewhere()
            .into_iter()
            .find(|e| e.resumes_in(id, &served.db))
        {
            return Err(PageError::Conflict(format!(
                "Experiment {id} is being resumed already, by a testbed run not started here \
                 (pid {}: {}).",
                other.pid,
                other.command()
            )));
        }
        let what = format!(
            "resume experiment {id} \"{}\": {} of {} runs recorded",
            row.name, row.recorded_runs, row.planned_runs
        );
        let job = jobs
            .enqueue(what, args, Some(id))
            .map_err(PageError::Busy)?;
        jobs.tick();
        job
    };
    Ok(to_job(job))
}

/// For an experiment's page: how an unfinished experiment goes on from here, a link to the
/// job running it or a button that resumes it.
pub(super) fn unfinished_html(served: &Shared, id: i64) -> String {
    let mut s = String::new();
    // Looked up before the match, whose arms take the lock again.
    let live = served.lock_jobs().live_for(id);
    match live {
        Some(job) => {
            let _ = writeln!(
                s,
                "<p id=\"live\">Job <a href=\"/jobs/{job}\">{job}</a> of this server is \
                 running it: watch it there.</p>"
            );
        }
        None => {
            s.push_str(&elsewhere_html(served));
            let _ = writeln!(
                s,
                "<form method=\"post\" action=\"/experiments/{id}/resume\"><p>Not finished: \
                 runs are still to record. If no <code>testbed run</code> is running it \
                 (stopped, or interrupted), <button id=\"resume\">Resume</button> runs \
                 what it has not recorded yet.</p></form>"
            );
        }
    }
    s
}

/// A job's state, for tests and scripts: its word as `data-state`.
pub(super) fn state_attr(state: &JobState) -> String {
    format!("data-state=\"{}\"", state.word())
}

/// The sentence for a waiting job: who is ahead.
pub(super) fn waiting_html(view: &jobs::JobView) -> String {
    if view.state != JobState::Queued {
        return String::new();
    }
    let ahead: Vec<String> = view
        .ahead
        .iter()
        .map(|j| format!("<a href=\"/jobs/{j}\">{j}</a>"))
        .collect();
    format!(
        "<p id=\"waiting\">Waiting behind job {}: the emulator runs one experiment at a time, \
         so this one starts when {} ended.</p>\n",
        ahead.join(", "),
        if ahead.len() == 1 {
            "it has"
        } else {
            "they have"
        }
    )
}
