//! `transputation serve`: the testbed in a browser. It shows the experiments of a results
//! database (filtered, one at a time, or two side by side) with the testbed's own report,
//! failure table and plots (`transputation_experiments::{report, failures, plot}`, the
//! code behind `testbed report`), offers them as CSV, JSON, SVG and PNG, and predicts every
//! transport's time for given conditions as `select --simulate` does ([`simulate`], which
//! runs that command in a process of its own). It composes experiments ([`compose`], with
//! Bristol uploads, [`upload`]), starts, cancels and resumes them ([`mod@run`]) as `testbed run`
//! children of this binary, one at a time ([`jobs`]), and shows them running ([`watch`]).
//! User programs (pairs of shell scripts) are registered on a page of their own
//! ([`programs`]) and chosen on the composing form like circuits.
//!
//! The rest of the binary is synchronous; this command alone starts a tokio runtime, for
//! axum. Handlers hand database reads, plots and simulations to blocking threads. The
//! database is opened read-only for every request ([`Db::open_read_only`]): the server
//! never writes it, the experiments it starts do, and it sees what they record meanwhile.
//! What it writes itself is the uploads and the registered programs, beside the database.
//! Pages are HTML written here ([`html`]), with no external asset; the one script is
//! `/static/watch.js`, which keeps a running experiment's page current. Who may ask is
//! [`auth`]'s, and a request that changes something (a POST) must come from a page of this
//! server ([`auth::same_origin`]).

mod auth;
mod compose;
mod html;
mod jobs;
mod pages;
mod programs;
mod run;
mod simulate;
mod upload;
mod watch;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::{get, post};
use axum::Router;
use clap::Args;
use transputation_experiments::db::{self, Db};

/// `transputation serve`'s flags.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// The address to listen on (port 0: any free port; the line `listening on
    /// http://ADDR/` on standard error names the one taken). An address other than loopback
    /// (127.0.0.0/8, ::1) needs --token-file.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:8080")]
    listen: SocketAddr,
    /// The results database, which must exist; the server only reads it, the experiments
    /// it starts write it, and uploaded circuits are kept in `circuits/` beside it (default:
    /// $TRANSPUTATION_RESULTS/results.sqlite, else
    /// $XDG_DATA_HOME/transputation/results.sqlite).
    #[arg(long, value_name = "PATH")]
    db: Option<PathBuf>,
    /// A file whose first line is a token (at least 16 visible ASCII characters, e.g. from
    /// `openssl rand -hex 32`) that every request must carry: `Authorization: Bearer TOKEN`,
    /// or the cookie a visit of /?token=TOKEN sets.
    #[arg(long, value_name = "PATH")]
    token_file: Option<PathBuf>,
}

/// What every handler shares.
#[derive(Debug)]
struct Served {
    /// The results database.
    db: PathBuf,
    /// The token requests must carry, if the listener has one.
    token: Option<auth::Token>,
    /// Whether a simulation is running: one at a time, since a large built-in circuit
    /// takes a core and memory to plan.
    simulating: AtomicBool,
    /// The experiments started here: one running, the others waiting.
    jobs: Mutex<jobs::Jobs>,
    /// Where uploaded circuits are kept ([`upload::circuits_dir`]).
    circuits: PathBuf,
    /// Where user programs are registered ([`programs::programs_dir`]).
    programs: PathBuf,
}

/// How often the line of experiments is looked at: an ended one reaped, the next started.
const JOBS_TICK: Duration = Duration::from_millis(250);

impl Served {
    fn lock_jobs(&self) -> MutexGuard<'_, jobs::Jobs> {
        self.jobs.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Where the composing form's uploads and programs are looked for.
    fn stores(&self) -> compose::Stores {
        compose::Stores {
            circuits: self.circuits.clone(),
            programs: self.programs.clone(),
        }
    }

    /// `testbed run --db=DB`, the start of every job's arguments.
    fn testbed_run(&self) -> Result<Vec<String>, PageError> {
        let db = self.db.to_str().ok_or_else(|| {
            PageError::Failed(anyhow::anyhow!(
                "the results database's path {} is not UTF-8, so it cannot be passed on",
                self.db.display()
            ))
        })?;
        Ok(vec!["testbed".into(), "run".into(), format!("--db={db}")])
    }
}

type Shared = Arc<Served>;

/// `transputation serve`: checks the listener, the token and the database, then serves
/// until killed.
pub fn run(args: ServeArgs) -> Result<()> {
    let token = args
        .token_file
        .as_deref()
        .map(auth::Token::read)
        .transpose()?;
    if let Some(why) = auth::refuse_listener(args.listen.ip(), token.is_some()) {
        bail!(why);
    }
    let db = args.db.unwrap_or_else(db::default_path);
    open_db(&db)?;
    // Absolute, so that an experiment names its uploads and its database wherever it is
    // resumed from.
    let db = db
        .canonicalize()
        .with_context(|| format!("finding {}", db.display()))?;
    let program = std::env::current_exe().context("finding this program to run experiments")?;
    let listener = std::net::TcpListener::bind(args.listen)
        .with_context(|| format!("listening on {}", args.listen))?;
    listener
        .set_nonblocking(true)
        .context("setting the listener non-blocking")?;
    let addr = listener
        .local_addr()
        .context("reading the listener's address")?;
    let served = Arc::new(Served {
        token,
        simulating: AtomicBool::new(false),
        jobs: Mutex::new(jobs::Jobs::new(program)),
        circuits: upload::circuits_dir(&db),
        programs: programs::programs_dir(&db),
        db,
    });
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the web server's runtime")?;
    runtime.block_on(async move {
        let listener =
            tokio::net::TcpListener::from_std(listener).context("handing over the listener")?;
        eprintln!("listening on http://{addr}/");
        let line = served.clone();
        tokio::spawn(async move {
            let mut tick = tokio::time::interval(JOBS_TICK);
            loop {
                tick.tick().await;
                line.lock_jobs().tick();
            }
        });
        axum::serve(listener, router(served))
            .await
            .context("serving")
    })
}

/// The database at `path`, opened for reading: it must exist (a viewer creates nothing),
/// and be of this build's schema.
fn open_db(path: &std::path::Path) -> Result<Db> {
    if !path.exists() {
        bail!(
            "no results database at {} (run `transputation testbed run` first, or pass --db)",
            path.display()
        );
    }
    Db::open_read_only(path).map_err(|e| match e {
        transputation_experiments::Error::Schema {
            found, supported, ..
        } if found > 0 && found < supported => anyhow::anyhow!(
            "{e}; the web UI only reads it, so it does not bring it up to date: a \
             `transputation testbed` command that opens it does (e.g. `transputation testbed \
             experiments --db {}`), after which builds older than schema version {supported} \
             no longer open it",
            path.display()
        ),
        e => e.into(),
    })
}

/// The routes, behind the guard of [`auth`] and with the headers of [`harden`].
fn router(served: Shared) -> Router {
    Router::new()
        .route("/", get(pages::index))
        .route("/experiments/{name}", get(pages::experiment))
        .route("/experiments/{name}/plots/{file}", get(pages::plot))
        .route("/compare", get(pages::compare))
        .route("/simulate", get(simulate::simulate))
        .route(
            "/run",
            get(run::form)
                .post(run::start)
                // The upload and the other fields, with room for the form's framing.
                .layer(DefaultBodyLimit::max(upload::LIMIT_BYTES + (1 << 20))),
        )
        .route(
            "/programs",
            get(programs::list)
                .post(programs::add)
                .layer(DefaultBodyLimit::max(2 * programs::LIMIT_BYTES + (1 << 20))),
        )
        .route("/jobs/{id}", get(watch::job_page))
        .route("/jobs/{id}/events", get(watch::job_events))
        .route("/jobs/{id}/cancel", post(run::cancel))
        .route("/experiments/{id}/events", get(watch::experiment_events))
        .route("/experiments/{id}/resume", post(run::resume))
        .route("/static/watch.js", get(watch::script))
        .fallback(no_page)
        .layer(middleware::from_fn_with_state(served.clone(), guard))
        .layer(middleware::from_fn(harden))
        .with_state(served)
}

/// Lets a request through only as [`auth::check`] decides.
async fn guard(State(served): State<Shared>, request: Request, next: Next) -> Response {
    let uri = request.uri();
    let verdict = match auth::check(
        served.token.as_ref(),
        uri.path(),
        uri.query(),
        request.headers(),
    ) {
        auth::Verdict::Pass if !matches!(*request.method(), Method::GET | Method::HEAD) => {
            auth::same_origin(request.headers())
        }
        verdict => verdict,
    };
    match verdict {
        auth::Verdict::Pass => next.run(request).await,
        auth::Verdict::SetCookie => {
            let token = served.token.as_ref().expect("a cookie only for a token");
            (
                StatusCode::SEE_OTHER,
                [
                    (header::LOCATION, HeaderValue::from_static("/")),
                    (header::SET_COOKIE, token.cookie()),
                ],
            )
                .into_response()
        }
        refused => {
            let (status, text) = auth::refusal(&refused);
            let mut response =
                (status, Html(html::page("refused", &html::para(&text)))).into_response();
            if status == StatusCode::UNAUTHORIZED {
                response.headers_mut().insert(
                    header::WWW_AUTHENTICATE,
                    HeaderValue::from_static("Bearer realm=\"transputation\""),
                );
            }
            response
        }
    }
}

/// Headers on every answer: nothing but this server's own pages, images, script and event
/// streams, in no frame, with no referrer to another site (the first visit's address may
/// hold the token), kept by no cache. The referrer policy is `same-origin`, not
/// `no-referrer`: under `no-referrer` a browser sends `Origin: null` with the pages' own
/// forms, which [`auth::same_origin`] then refuses.
async fn harden(request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(
            "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; \
             script-src 'self'; connect-src 'self'; form-action 'self'; \
             frame-ancestors 'none'; base-uri 'none'",
        ),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Any address without a page.
async fn no_page(request: Request) -> PageError {
    PageError::NotFound(format!("There is no page at {}.", request.uri().path()))
}

/// A request that could not be answered with its page: the status and a sentence.
#[derive(Debug)]
enum PageError {
    /// What was asked for does not exist (the sentence names it).
    NotFound(String),
    /// The request itself is wrong.
    BadRequest(String),
    /// The server is busy with the one thing it does at a time.
    Busy(String),
    /// What was asked cannot be done in the state things are in (a job that has ended).
    Conflict(String),
    /// Reading the database, drawing or predicting failed.
    Failed(anyhow::Error),
}

impl PageError {
    /// Its status and the page's title.
    fn status(&self) -> (StatusCode, &'static str) {
        match self {
            PageError::NotFound(_) => (StatusCode::NOT_FOUND, "not found"),
            PageError::BadRequest(_) => (StatusCode::BAD_REQUEST, "bad request"),
            PageError::Busy(_) => (StatusCode::SERVICE_UNAVAILABLE, "busy"),
            PageError::Conflict(_) => (StatusCode::CONFLICT, "conflict"),
            PageError::Failed(_) => (StatusCode::INTERNAL_SERVER_ERROR, "error"),
        }
    }

    /// Its sentence (a failure's with its causes).
    fn text(self) -> String {
        match self {
            PageError::NotFound(t)
            | PageError::BadRequest(t)
            | PageError::Busy(t)
            | PageError::Conflict(t) => t,
            PageError::Failed(e) => format!("{e:#}"),
        }
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let (status, title) = self.status();
        let text = self.text();
        let body = format!("<h1>{}</h1>\n{}", html::escape(title), html::para(&text));
        (status, Html(html::page(title, &body))).into_response()
    }
}

/// Runs `work` on a blocking thread with the database opened for it.
async fn with_db<T: Send + 'static>(
    served: &Shared,
    work: impl FnOnce(&Db, &std::path::Path) -> Result<T, PageError> + Send + 'static,
) -> Result<T, PageError> {
    let served = served.clone();
    blocking(move || {
        let db = open_db(&served.db).map_err(PageError::Failed)?;
        work(&db, &served.db)
    })
    .await
}

/// Runs `work` on a blocking thread.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> Result<T, PageError> + Send + 'static,
) -> Result<T, PageError> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| PageError::Failed(anyhow::anyhow!("the request's work ended early: {e}")))?
}

/// Holds the one simulation slot of [`Served::simulating`] while it lives.
struct SimulationSlot(Shared);

impl SimulationSlot {
    /// The slot, if no simulation holds it.
    fn take(served: &Shared) -> Option<SimulationSlot> {
        served
            .simulating
            .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
            .ok()
            .map(|_| SimulationSlot(served.clone()))
    }
}

impl Drop for SimulationSlot {
    fn drop(&mut self) {
        self.0.simulating.store(false, Ordering::Release);
    }
}
