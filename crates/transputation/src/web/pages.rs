//! The experiments' pages: the list with its filters (`/`), one experiment
//! (`/experiments/{name}`), two side by side (`/compare`), and the downloads of an
//! experiment's report (`.csv`, `.json`) and plots (`/experiments/{name}/plots/FILE.svg`,
//! `.png`).
//!
//! Every table, statistic and figure is the testbed's own, as `testbed report` prints it:
//! [`report::build_in`] (the paper's Table 4 shape and, inside it, the failure table) and
//! [`plot::figures`]; this module only lays them out. An experiment is named as `testbed
//! report` names it, by its id or its name (the latest of that name); the pages link by
//! id, since names may repeat. A name that ends in `.csv` or `.json` is the download of the
//! experiment before the suffix, unless an experiment has the whole name. An unfinished
//! experiment's page links to the job running it, or offers to resume it ([`mod@super::run`]).

use std::fmt::Write as _;
use std::path::Path as FsPath;

use axum::extract::rejection::{PathRejection, QueryRejection};
use axum::extract::{Path, Query, State};
use axum::http::header;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use transputation_experiments::db::{Db, ExperimentRow, RunRecord, RunsCover};
use transputation_experiments::failures::FailureTable;
use transputation_experiments::{plot, report};

use super::html::{escape, page, para, table, url_component};
use super::{blocking, with_db, PageError, Shared};

/// The filters of the list, as the query of `/` gives them (each optional).
#[derive(Debug, Default, Deserialize)]
pub(super) struct Filters {
    /// A part of the name, in any case.
    name: Option<String>,
    /// A part of a circuit's (or user program's) name.
    circuit: Option<String>,
    /// A part of a transport as the experiment wrote it.
    transport: Option<String>,
    /// `any`, `finished`, `unfinished` or `failures`.
    status: Option<String>,
}

/// Which experiments the status filter keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum StatusFilter {
    Any,
    /// Every planned run recorded.
    Finished,
    /// Runs still to record: under way, or stopped (`testbed run --resume` goes on).
    Unfinished,
    /// A run failed or timed out.
    Failures,
}

impl StatusFilter {
    const NAMES: [(&'static str, StatusFilter); 4] = [
        ("any", StatusFilter::Any),
        ("finished", StatusFilter::Finished),
        ("unfinished", StatusFilter::Unfinished),
        ("failures", StatusFilter::Failures),
    ];

    fn parse(s: Option<&str>) -> Result<StatusFilter, String> {
        let s = s.map(str::trim).filter(|s| !s.is_empty()).unwrap_or("any");
        Self::NAMES
            .iter()
            .find(|(name, _)| *name == s)
            .map(|&(_, f)| f)
            .ok_or_else(|| format!("'{s}' is not a status: any, finished, unfinished or failures"))
    }

    fn keeps(self, listed: &Listed) -> bool {
        match self {
            StatusFilter::Any => true,
            StatusFilter::Finished => listed.row.finished_at.is_some(),
            StatusFilter::Unfinished => listed.row.finished_at.is_none(),
            StatusFilter::Failures => listed.cover.not_ok > 0,
        }
    }
}

/// An experiment as the list shows it.
struct Listed {
    row: ExperimentRow,
    /// What its runs cover, and what it planned (from its description), so that an
    /// experiment without runs yet is found by its circuits and transports too.
    cover: RunsCover,
}

impl Listed {
    fn new(row: ExperimentRow, mut cover: RunsCover) -> Listed {
        // The description as written; read leniently, since older and newer ones differ.
        if let Ok(spec) = serde_json::from_str::<serde_json::Value>(&row.spec) {
            let strings = |key: &str| -> Vec<String> {
                spec.get(key)
                    .and_then(|v| v.as_array())
                    .map(|a| {
                        a.iter()
                            .filter_map(|v| v.as_str().map(str::to_string))
                            .collect()
                    })
                    .unwrap_or_default()
            };
            let programs = spec
                .get("programs")
                .and_then(|v| v.as_object())
                .map(|o| o.keys().cloned().collect::<Vec<_>>())
                .unwrap_or_default();
            for c in strings("circuits").into_iter().chain(programs) {
                if !cover.circuits.contains(&c) {
                    cover.circuits.push(c);
                }
            }
            for t in strings("transports") {
                if !cover.transports.contains(&t) {
                    cover.transports.push(t);
                }
            }
        }
        Listed { row, cover }
    }
}

/// Whether `part` is empty or a part of `text`, in any case.
fn has_part(text: &str, part: &str) -> bool {
    text.to_lowercase().contains(&part.trim().to_lowercase())
}

/// Whether a filter is absent, or `part` is a part of one of `texts`.
fn any_has(texts: &[String], part: Option<&str>) -> bool {
    match part.map(str::trim).filter(|p| !p.is_empty()) {
        None => true,
        Some(p) => texts.iter().any(|t| has_part(t, p)),
    }
}

/// `/`: the experiments, newest first, those the filters keep.
pub(super) async fn index(
    State(served): State<Shared>,
    query: Result<Query<Filters>, QueryRejection>,
) -> Result<Html<String>, PageError> {
    let Query(filters) = query.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let shared = served.clone();
    with_db(&served, move |db, path| {
        let status = StatusFilter::parse(filters.status.as_deref());
        let covers = db.runs_covers().map_err(failed)?;
        let all: Vec<Listed> = db
            .experiments()
            .map_err(failed)?
            .into_iter()
            .rev()
            .map(|row| {
                let cover = covers.get(&row.id).cloned().unwrap_or_default();
                Listed::new(row, cover)
            })
            .collect();
        let total = all.len();
        let kept: Vec<&Listed> = all
            .iter()
            .filter(|l| {
                filters
                    .name
                    .as_deref()
                    .is_none_or(|n| has_part(&l.row.name, n))
                    && any_has(&l.cover.circuits, filters.circuit.as_deref())
                    && any_has(&l.cover.transports, filters.transport.as_deref())
                    && status.as_ref().is_ok_and(|s| s.keeps(l))
            })
            .collect();
        let mut body = format!(
            "<h1>Experiments</h1>\n<p class=\"note\">{}</p>\n",
            escape(&path.display().to_string())
        );
        body.push_str(&filter_form(&filters, status.as_ref().err()));
        let shown = if total == 0 {
            "The database has no experiment yet.".to_string()
        } else if kept.is_empty() {
            format!("No experiment of the {total} matches the filters.")
        } else {
            format!("{} of {total} experiments, newest first.", kept.len())
        };
        body.push_str(&para(&shown));
        if !kept.is_empty() {
            let headers: Vec<String> = [
                "id",
                "name",
                "created (UTC)",
                "runs",
                "failed or timed out",
                "finished (UTC)",
                "circuits",
                "transports",
            ]
            .map(String::from)
            .into();
            let rows: Vec<Vec<String>> = kept
                .iter()
                .map(|l| {
                    let e = &l.row;
                    vec![
                        e.id.to_string(),
                        format!("<a href=\"/experiments/{}\">{}</a>", e.id, escape(&e.name)),
                        escape(&e.created_at),
                        format!("{} of {}", e.recorded_runs, e.planned_runs),
                        l.cover.not_ok.to_string(),
                        match (&e.finished_at, shared.lock_jobs().live_for(e.id)) {
                            (Some(at), _) => escape(at),
                            (None, Some(job)) => {
                                format!("running: <a href=\"/jobs/{job}\">job {job}</a>")
                            }
                            (None, None) => "not finished".into(),
                        },
                        escape(&l.cover.circuits.join(", ")),
                        escape(&l.cover.transports.join(", ")),
                    ]
                })
                .collect();
            body.push_str(&table("experiments", &headers, &rows));
        }
        Ok(Html(page("Experiments", &body)))
    })
    .await
}

/// The filters' form, with what was asked kept and a message beside a bad status.
fn filter_form(f: &Filters, status_error: Option<&String>) -> String {
    let value = |v: &Option<String>| escape(v.as_deref().unwrap_or(""));
    let mut s = String::from("<form class=\"fields\" method=\"get\" action=\"/\">\n");
    for (id, label, v) in [
        ("name", "name", &f.name),
        ("circuit", "circuit", &f.circuit),
        ("transport", "transport", &f.transport),
    ] {
        let _ = writeln!(
            s,
            "<div><label for=\"{id}\">{label}</label> <input id=\"{id}\" name=\"{id}\" \
             value=\"{}\"></div>",
            value(v)
        );
    }
    let chosen = f.status.as_deref().unwrap_or("any");
    s.push_str("<div><label for=\"status\">status</label> <select id=\"status\" name=\"status\">");
    for (name, _) in StatusFilter::NAMES {
        let selected = if name == chosen { " selected" } else { "" };
        let _ = write!(s, "<option{selected}>{name}</option>");
    }
    s.push_str("</select>");
    if let Some(e) = status_error {
        let _ = write!(
            s,
            "<span class=\"error\" id=\"status-error\">{}</span>",
            escape(e)
        );
    }
    s.push_str("</div>\n<div><button>Filter</button> <a href=\"/\">all</a></div>\n</form>\n");
    s
}

/// A database error, as a page's.
fn failed(e: transputation_experiments::Error) -> PageError {
    PageError::Failed(e.into())
}

/// How an experiment's page is asked for: the unit of its times.
#[derive(Debug, Default, Deserialize)]
pub(super) struct View {
    /// `ms` (the default) or `rtt`.
    unit: Option<String>,
}

fn parse_unit(s: Option<&str>) -> Result<report::Unit, PageError> {
    match s.map(str::trim).unwrap_or("ms") {
        "" | "ms" => Ok(report::Unit::Ms),
        "rtt" => Ok(report::Unit::Rtt),
        other => Err(PageError::BadRequest(format!(
            "The unit '{other}' is neither ms nor rtt."
        ))),
    }
}

fn unit_query(unit: report::Unit) -> &'static str {
    match unit {
        report::Unit::Ms => "",
        report::Unit::Rtt => "?unit=rtt",
    }
}

/// What `/experiments/{name}` answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Page,
    Csv,
    Json,
}

/// The experiment `name` names ([`find`]) and the shape asked for: the whole name first,
/// then without a download suffix.
fn find_shaped(db: &Db, db_path: &FsPath, name: &str) -> Result<(ExperimentRow, Shape), PageError> {
    if let Some(row) = find(db, name)? {
        return Ok((row, Shape::Page));
    }
    let (stem, shape) = if let Some(stem) = name.strip_suffix(".csv") {
        (stem, Shape::Csv)
    } else if let Some(stem) = name.strip_suffix(".json") {
        (stem, Shape::Json)
    } else {
        (name, Shape::Page)
    };
    match find(db, stem)? {
        Some(row) if shape != Shape::Page => Ok((row, shape)),
        _ => Err(not_found(stem, db_path)),
    }
}

/// The experiment with this id, or the latest with this name.
fn find(db: &Db, name: &str) -> Result<Option<ExperimentRow>, PageError> {
    if name.is_empty() {
        return Ok(None);
    }
    db.find_experiment(Some(name)).map_err(failed)
}

fn not_found(name: &str, db_path: &FsPath) -> PageError {
    PageError::NotFound(format!(
        "There is no experiment \"{name}\" (by id or name) in {}.",
        db_path.display()
    ))
}

/// `/experiments/{name}`: the report, the failure table and the plots; with `.csv` or
/// `.json`, the report as `testbed report --format csv|json` prints it.
pub(super) async fn experiment(
    State(served): State<Shared>,
    name: Result<Path<String>, PathRejection>,
    view: Result<Query<View>, QueryRejection>,
) -> Result<Response, PageError> {
    let Path(name) = name.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let Query(view) = view.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let unit = parse_unit(view.unit.as_deref())?;
    let shared = served.clone();
    with_db(&served, move |db, db_path| {
        let (row, shape) = find_shaped(db, db_path, &name)?;
        let runs = db.runs(row.id).map_err(failed)?;
        let r = report::build_in(Some(&row), &runs, unit);
        let attachment =
            |ext: &str| format!("attachment; filename=\"experiment-{}.{ext}\"", row.id);
        Ok(match shape {
            Shape::Csv => (
                [
                    (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
                    (header::CONTENT_DISPOSITION, attachment("csv")),
                ],
                r.csv(),
            )
                .into_response(),
            Shape::Json => {
                let text = serde_json::to_string_pretty(&r.json())
                    .map_err(|e| PageError::Failed(e.into()))?;
                (
                    [
                        (header::CONTENT_TYPE, "application/json".to_string()),
                        (header::CONTENT_DISPOSITION, attachment("json")),
                    ],
                    text,
                )
                    .into_response()
            }
            Shape::Page => {
                let title = format!("experiment {} \"{}\"", row.id, row.name);
                let mut body = format!("<h1>{}</h1>\n", escape(&title));
                let other = match unit {
                    report::Unit::Ms => {
                        format!("<a href=\"/experiments/{}?unit=rtt\">in RTTs</a>", row.id)
                    }
                    report::Unit::Rtt => format!("<a href=\"/experiments/{}\">in ms</a>", row.id),
                };
                let _ = writeln!(
                    body,
                    "<p>Times {other} · <a href=\"/compare?a={}\">compare with another</a></p>",
                    row.id
                );
                if row.finished_at.is_none() {
                    body.push_str(&super::run::unfinished_html(&shared, row.id));
                }
                body.push_str(&section(&row, &runs, &r));
                Html(page(&title, &body)).into_response()
            }
        })
    })
    .await
}

/// An experiment's report, failure table, plots and downloads, as HTML.
pub(super) fn section(row: &ExperimentRow, runs: &[RunRecord], r: &report::Report) -> String {
    let mut s = String::new();
    for line in r.preamble() {
        let _ = writeln!(s, "<p class=\"note\">{}</p>", escape(&line));
    }
    if r.rows.is_empty() {
        s.push_str(&para("No run is recorded yet."));
    } else {
        let cells = r.cells_with(escape, |t| format!("<strong>{}</strong>", escape(t)));
        s.push_str(&table(&format!("report-{}", row.id), &r.headers(), &cells));
        s.push_str(&para("The best of a row is in bold."));
    }
    if r.failures.any() {
        let _ = writeln!(s, "<h3>Failures</h3>\n{}", para(FailureTable::title()));
        let cells = r
            .failures
            .cells_with(escape, |t| format!("<strong>{}</strong>", escape(t)));
        s.push_str(&table(
            &format!("failures-{}", row.id),
            &r.failures.headers(),
            &cells,
        ));
    }
    s.push_str("<h3>Plots</h3>\n");
    let figures = plot::figures(runs);
    if figures.is_empty() {
        s.push_str(&para("No plot: no run has succeeded yet."));
    }
    for (file, figure) in &figures {
        let base = format!("/experiments/{}/plots/{}", row.id, url_component(file));
        let _ = writeln!(
            s,
            "<figure><img class=\"plot\" src=\"{base}.svg\" alt=\"{title}\" width=\"760\" \
             height=\"460\">\
             <figcaption>{title}: <a href=\"{base}.svg\">SVG</a> · <a href=\"{base}.png\">PNG</a>\
             </figcaption></figure>",
            title = escape(&figure.title),
        );
    }
    let unit = unit_query(r.unit);
    let _ = writeln!(
        s,
        "<p>Download: <a class=\"csv\" href=\"/experiments/{id}.csv{unit}\">CSV</a> · \
         <a class=\"json\" href=\"/experiments/{id}.json{unit}\">JSON</a></p>",
        id = row.id
    );
    s
}

/// `/experiments/{name}/plots/{file}`: a plot of [`plot::figures`] as SVG or PNG (twice
/// its size, as `testbed report --plots` writes it).
pub(super) async fn plot(
    State(served): State<Shared>,
    names: Result<Path<(String, String)>, PathRejection>,
) -> Result<Response, PageError> {
    let Path((name, file)) = names.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let (stem, png) = if let Some(stem) = file.strip_suffix(".svg") {
        (stem.to_string(), false)
    } else if let Some(stem) = file.strip_suffix(".png") {
        (stem.to_string(), true)
    } else {
        return Err(PageError::NotFound(format!(
            "There is no plot \"{file}\": plots are FILE.svg or FILE.png."
        )));
    };
    let svg = with_db(&served, move |db, db_path| {
        let row = find(db, &name)?.ok_or_else(|| not_found(&name, db_path))?;
        let runs = db.runs(row.id).map_err(failed)?;
        plot::figures(&runs)
            .into_iter()
            .find(|(f, _)| *f == stem)
            .map(|(_, figure)| figure.svg())
            .ok_or_else(|| {
                PageError::NotFound(format!(
                    "Experiment {} \"{}\" has no plot \"{stem}\".",
                    row.id, row.name
                ))
            })
    })
    .await?;
    if !png {
        return Ok(([(header::CONTENT_TYPE, "image/svg+xml")], svg).into_response());
    }
    let bytes = blocking(move || {
        plot::png(&svg, 2.0).map_err(|e| PageError::Failed(anyhow::anyhow!("drawing the PNG: {e}")))
    })
    .await?;
    Ok(([(header::CONTENT_TYPE, "image/png")], bytes).into_response())
}

/// What `/compare` is asked: two experiments (each by id or name) and the unit.
#[derive(Debug, Default, Deserialize)]
pub(super) struct Pair {
    a: Option<String>,
    b: Option<String>,
    unit: Option<String>,
}

/// `/compare?a=NAME&b=NAME`: a form to choose two experiments, and those chosen side by
/// side.
pub(super) async fn compare(
    State(served): State<Shared>,
    query: Result<Query<Pair>, QueryRejection>,
) -> Result<Html<String>, PageError> {
    let Query(pair) = query.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let unit = parse_unit(pair.unit.as_deref())?;
    with_db(&served, move |db, db_path| {
        let given = |v: &Option<String>| v.as_deref().map(str::trim).filter(|v| !v.is_empty()).map(str::to_string);
        let (a, b) = (given(&pair.a), given(&pair.b));
        let mut chosen = Vec::new();
        for name in [&a, &b].into_iter().flatten() {
            let row = find(db, name)?.ok_or_else(|| not_found(name, db_path))?;
            let runs = db.runs(row.id).map_err(failed)?;
            chosen.push((row, runs));
        }
        let all = db.experiments().map_err(failed)?;
        let mut body = String::from("<h1>Compare two experiments</h1>\n");
        body.push_str("<form class=\"fields\" method=\"get\" action=\"/compare\">\n");
        for (field, value) in [("a", &a), ("b", &b)] {
            // The experiment chosen, by its id, whichever way it was named.
            let picked = value
                .as_ref()
                .and_then(|v| chosen.iter().find(|(r, _)| r.id.to_string() == *v || r.name == *v))
                .map(|(r, _)| r.id);
            let _ = write!(
                body,
                "<div><label for=\"{field}\">{field}</label> <select id=\"{field}\" name=\"{field}\">\
                 <option value=\"\">–</option>"
            );
            for e in all.iter().rev() {
                let selected = if picked == Some(e.id) { " selected" } else { "" };
                let _ = write!(
                    body,
                    "<option value=\"{id}\"{selected}>{id} {name} ({created})</option>",
                    id = e.id,
                    name = escape(&e.name),
                    created = escape(&e.created_at)
                );
            }
            body.push_str("</select></div>\n");
        }
        let rtt = if unit == report::Unit::Rtt { " checked" } else { "" };
        let _ = writeln!(
            body,
            "<div><label for=\"unit\">in RTTs</label> <input type=\"checkbox\" id=\"unit\" \
             name=\"unit\" value=\"rtt\"{rtt}></div>\n<div><button>Compare</button></div>\n</form>"
        );
        if !chosen.is_empty() {
            body.push_str("<div class=\"side-by-side\">\n");
            for (row, runs) in &chosen {
                let r = report::build_in(Some(row), runs, unit);
                let _ = write!(
                    body,
                    "<section><h2><a href=\"/experiments/{id}\">experiment {id} \"{name}\"</a></h2>\n{}</section>\n",
                    section(row, runs, &r),
                    id = row.id,
                    name = escape(&row.name)
                );
            }
            body.push_str("</div>\n");
        }
        Ok(Html(page("Compare", &body)))
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use transputation_experiments::db::Environment;

    fn listed(name: &str, finished: bool, spec: &str, cover: RunsCover) -> Listed {
        Listed::new(
            ExperimentRow {
                id: 1,
                name: name.into(),
                created_at: "2026-01-01 00:00:00".into(),
                finished_at: finished.then(|| "2026-01-01 01:00:00".into()),
                spec: spec.into(),
                planned_runs: 4,
                environment: Environment::detect("0.1.0", None, "emu", "cubic", "on"),
                recorded_runs: 2,
            },
            cover,
        )
    }

    #[test]
    fn the_status_filter_names_its_values_and_keeps_what_it_says() {
        assert_eq!(StatusFilter::parse(None), Ok(StatusFilter::Any));
        assert_eq!(StatusFilter::parse(Some(" ")), Ok(StatusFilter::Any));
        assert_eq!(
            StatusFilter::parse(Some("finished")),
            Ok(StatusFilter::Finished)
        );
        let e = StatusFilter::parse(Some("done")).unwrap_err();
        assert_eq!(
            e,
            "'done' is not a status: any, finished, unfinished or failures"
        );
        let bad = RunsCover {
            not_ok: 2,
            ..RunsCover::default()
        };
        let open = listed("x", false, "{}", bad);
        assert!(StatusFilter::Unfinished.keeps(&open));
        assert!(!StatusFilter::Finished.keeps(&open));
        assert!(StatusFilter::Failures.keeps(&open));
        let done = listed("x", true, "{}", RunsCover::default());
        assert!(StatusFilter::Finished.keeps(&done) && !StatusFilter::Failures.keeps(&done));
    }

    #[test]
    fn circuits_and_transports_come_from_the_runs_and_the_description() {
        let cover = RunsCover {
            circuits: vec!["aes128".into()],
            transports: vec!["tcp".into()],
            not_ok: 0,
        };
        let spec = r#"{"circuits": ["aes128", "sha256"], "transports": ["tcp", "quic:iw={bdp}"],
                      "programs": {"twopc": "/x"}, "a_later_key": 1}"#;
        let l = listed("wan", false, spec, cover.clone());
        assert_eq!(l.cover.circuits, ["aes128", "sha256", "twopc"]);
        assert_eq!(l.cover.transports, ["tcp", "quic:iw={bdp}"]);
        assert!(any_has(&l.cover.transports, Some("QUIC")));
        assert!(any_has(&l.cover.transports, None));
        assert!(any_has(&l.cover.transports, Some("  ")));
        assert!(!any_has(&l.cover.circuits, Some("mincut")));
        // A description that is not JSON leaves what the runs say.
        assert_eq!(
            listed("x", false, "not json", cover).cover.circuits,
            ["aes128"]
        );
    }

    #[test]
    fn a_unit_is_ms_or_rtt() {
        assert_eq!(parse_unit(None).unwrap(), report::Unit::Ms);
        assert_eq!(parse_unit(Some("rtt")).unwrap(), report::Unit::Rtt);
        assert!(
            matches!(parse_unit(Some("s")), Err(PageError::BadRequest(m)) if m.contains("'s'"))
        );
    }
}
