//! `/simulate`: every transport's predicted time to the output for a path, a built-in
//! circuit and a scheme, without a network: the model of `--transport auto`, as
//! `transputation select --simulate` gives it. The answer is that command's, run in a
//! process of its own under limits of memory and CPU time ([`predict`]), read back as its
//! [`select_cmd::Selection`] and shown in the table of [`select_cmd::rows`]; it predicts
//! with the calibration `select` reads (the default file, else the transports' defaults).
//!
//! Each field is read by the parser of `select`'s flag of the same name, and a bad one is
//! answered with the form again, its message beside the field. Only built-in circuits are
//! offered: a name is never read as a file of the server's. One simulation runs at a time.

use std::fmt::Write as _;
use std::os::unix::process::ExitStatusExt as _;
use std::process::{Child, Command, Stdio};

use anyhow::{anyhow, Context as _};
use axum::extract::rejection::QueryRejection;
use axum::extract::{Query, State};
use axum::http::StatusCode;
use axum::response::{Html, IntoResponse, Response};
use serde::Deserialize;
use transputation_circuits::library;

use super::html::{escape, page, para, table};
use super::{blocking, PageError, Shared, SimulationSlot};
use crate::auto_connect::describe_path;
use crate::garble_cmd::parse_scheme;
use crate::select_cmd::{self, parse_duration, parse_loss};
use crate::transport_cmd::parse_rate;

/// The form as the query gives it; every field optional.
#[derive(Debug, Default, Clone, Deserialize)]
pub(super) struct Form {
    rtt: Option<String>,
    rate: Option<String>,
    loss: Option<String>,
    circuit: Option<String>,
    scheme: Option<String>,
}

/// The form's fields: name, label, what a first visit shows, and a hint.
const FIELDS: [(&str, &str, &str, &str); 5] = [
    ("rtt", "RTT", "100ms", "e.g. 300ms, 0.5ms, 1s"),
    (
        "rate",
        "rate",
        "100mbit",
        "bits per second, e.g. 100mbit, 1gbit",
    ),
    (
        "loss",
        "loss",
        "0",
        "a fraction (0.001) or a percentage (0.1%)",
    ),
    (
        "circuit",
        "circuit",
        "aes128",
        "a built-in, with options: sha256, mincut:n=64",
    ),
    ("scheme", "scheme", "ideal", "prf, circular or ideal"),
];

/// What a valid form asks for.
#[derive(Debug)]
struct Asked {
    /// The built-in's name and options, checked.
    circuit: String,
    /// `select`'s flags for it, each value as given (and checked by the same parser).
    flags: Vec<String>,
}

impl Form {
    fn value(&self, field: &str) -> Option<&str> {
        match field {
            "rtt" => self.rtt.as_deref(),
            "rate" => self.rate.as_deref(),
            "loss" => self.loss.as_deref(),
            "circuit" => self.circuit.as_deref(),
            _ => self.scheme.as_deref(),
        }
    }

    fn is_empty(&self) -> bool {
        FIELDS.iter().all(|(f, ..)| self.value(f).is_none())
    }

    /// The request, or each bad field with its message.
    fn check(&self) -> Result<Asked, Vec<(&'static str, String)>> {
        let mut errors = Vec::new();
        let mut field = |name: &'static str, default: Option<&str>| -> Option<String> {
            match self
                .value(name)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .or(default)
            {
                Some(v) => Some(v.to_string()),
                None => {
                    errors.push((name, format!("give the {name}")));
                    None
                }
            }
        };
        let (rtt, rate, loss) = (
            field("rtt", None),
            field("rate", None),
            field("loss", Some("0")),
        );
        let (circuit, scheme) = (field("circuit", None), field("scheme", Some("ideal")));
        let e = &mut errors;
        let given = (rtt.clone(), rate.clone(), loss.clone(), scheme.clone());
        let rtt = rtt.and_then(|v| take(e, "rtt", parse_duration(&v)));
        let rate = rate.and_then(|v| take(e, "rate", parse_rate(&v)));
        let loss = loss.and_then(|v| take(e, "loss", parse_loss(&v)));
        let circuit = circuit.and_then(|v| {
            let checked = library::parse_spec(&v).map_err(|e| e.to_string());
            take(e, "circuit", checked.map(|_| v))
        });
        let scheme = scheme.and_then(|v| take(e, "scheme", parse_scheme(&v)));
        let path = match (rtt, rate, loss) {
            (Some(rtt), Some(rate), Some(loss)) => {
                let path = select_cmd::simulated_path(rtt, rate, loss, None, None);
                take(e, "rtt", path.map_err(|e| format!("{e:#}")))
            }
            _ => None,
        };
        match (path, circuit, scheme, given) {
            (
                Some(_),
                Some(circuit),
                Some(_),
                (Some(rtt), Some(rate), Some(loss), Some(scheme)),
            ) if errors.is_empty() => Ok(Asked {
                flags: vec![
                    format!("--rtt={rtt}"),
                    format!("--rate={rate}"),
                    format!("--loss={loss}"),
                    format!("--circuit={circuit}"),
                    format!("--scheme={scheme}"),
                ],
                circuit,
            }),
            _ => Err(errors),
        }
    }
}

/// The value of a checked field, or `None` with its message added to `errors`.
fn take<T>(
    errors: &mut Vec<(&'static str, String)>,
    field: &'static str,
    checked: Result<T, String>,
) -> Option<T> {
    checked.map_err(|e| errors.push((field, e))).ok()
}

/// The form with the values as given (the defaults on a first visit) and each field's
/// message beside it.
fn form_html(form: &Form, errors: &[(&'static str, String)]) -> String {
    let first_visit = form.is_empty();
    let mut s = String::from("<form class=\"fields\" method=\"get\" action=\"/simulate\">\n");
    for (name, label, default, hint) in FIELDS {
        let value = if first_visit {
            default
        } else {
            form.value(name).unwrap_or("")
        };
        let _ = write!(
            s,
            "<div><label for=\"{name}\">{label}</label> <input id=\"{name}\" name=\"{name}\" \
             value=\"{}\" title=\"{hint}\"{list}>",
            escape(value),
            list = if name == "circuit" {
                " list=\"builtins\""
            } else {
                ""
            },
        );
        for (_, message) in errors.iter().filter(|(f, _)| *f == name) {
            let _ = write!(
                s,
                "<span class=\"error\" id=\"{name}-error\">{}</span>",
                escape(message)
            );
        }
        s.push_str("</div>\n");
    }
    s.push_str("<datalist id=\"builtins\">");
    for b in library::builtins() {
        let _ = write!(s, "<option value=\"{}\">", escape(b.name));
    }
    s.push_str("</datalist>\n<div><button>Predict</button></div>\n</form>\n");
    s
}

/// `/simulate`: the form, and for a valid one the prediction of every transport.
pub(super) async fn simulate(
    State(served): State<Shared>,
    query: Result<Query<Form>, QueryRejection>,
) -> Result<Response, PageError> {
    let Query(form) = query.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let mut body = String::from(
        "<h1>Simulate</h1>\n<p class=\"note\">Every transport's predicted time to the output \
         on the path, from the model <code>--transport auto</code> chooses with, without \
         running: what <code>transputation select --simulate</code> prints.</p>\n",
    );
    if form.is_empty() {
        body.push_str(&form_html(&form, &[]));
        return Ok(Html(page("Simulate", &body)).into_response());
    }
    let asked = match form.check() {
        Ok(asked) => asked,
        Err(errors) => {
            body.push_str(&form_html(&form, &errors));
            return Ok((StatusCode::BAD_REQUEST, Html(page("Simulate", &body))).into_response());
        }
    };
    let slot = SimulationSlot::take(&served).ok_or_else(|| {
        PageError::Busy("Another simulation is running; try again in a moment.".into())
    })?;
    let answer = blocking(move || {
        let _slot = slot;
        Ok(predict(&asked))
    })
    .await?;
    match answer {
        Ok(answer) => {
            body.push_str(&form_html(&form, &[]));
            body.push_str(&answer);
            Ok(Html(page("Simulate", &body)).into_response())
        }
        // The circuit's fault: said beside it.
        Err(Unanswered::TooLarge(why)) => {
            body.push_str(&form_html(&form, &[("circuit", why)]));
            let status = StatusCode::UNPROCESSABLE_ENTITY;
            Ok((status, Html(page("Simulate", &body))).into_response())
        }
        Err(Unanswered::Failed(e)) => Err(PageError::Failed(e)),
    }
}

/// Why a valid form got no prediction.
#[derive(Debug)]
enum Unanswered {
    /// The simulation was stopped at its limits: the circuit is too large for them.
    TooLarge(String),
    /// Starting the simulation, or the simulation itself, failed.
    Failed(anyhow::Error),
}

impl From<anyhow::Error> for Unanswered {
    fn from(e: anyhow::Error) -> Self {
        Unanswered::Failed(e)
    }
}

/// The most memory a simulation's process may map. A built-in's bounds allow circuits of
/// billions of gates, which no prediction needs; without a limit one request could take the
/// machine's memory.
const SIMULATION_MEMORY_BYTES: u64 = 4 << 30;

/// The most CPU time a simulation's process may take, seconds.
const SIMULATION_CPU_SECONDS: u64 = 60;

/// The prediction for `asked`, as HTML: the path and the traffic, every transport's row,
/// the choice and why. It is this binary's `select --simulate --json`, run in a process of
/// its own under [`SIMULATION_MEMORY_BYTES`] and [`SIMULATION_CPU_SECONDS`], so that a
/// circuit too large for them ends that process and not the server.
fn predict(asked: &Asked) -> Result<String, Unanswered> {
    let exe = std::env::current_exe().context("finding this program to run the simulation")?;
    let mut child = Command::new(exe)
        .args(["select", "--simulate", "--json"])
        .args(&asked.flags)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting the simulation")?;
    // Set just after the start: the process parses its flags and reads the calibration
    // before it builds the circuit, far longer than this takes.
    if let Err(e) = limit(&child) {
        let _ = child.kill();
        let _ = child.wait();
        return Err(e.into());
    }
    let out = child
        .wait_with_output()
        .context("waiting for the simulation")?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let said = stderr
            .trim()
            .strip_prefix("error: ")
            .unwrap_or(stderr.trim());
        return Err(match out.status.signal() {
            Some(sig) => Unanswered::TooLarge(format!(
                "{} is too large to simulate here: its simulation was stopped (signal {sig}) \
                 at the {} GiB of memory or {SIMULATION_CPU_SECONDS} s of CPU one may take{}",
                asked.circuit,
                SIMULATION_MEMORY_BYTES >> 30,
                if said.is_empty() {
                    String::new()
                } else {
                    format!(" ({said})")
                }
            )),
            None => anyhow!("the simulation of {} failed: {said}", asked.circuit).into(),
        });
    }
    let selection: select_cmd::Selection =
        serde_json::from_slice(&out.stdout).context("reading the simulation's answer")?;
    let work = &selection.workload;
    let mut s = para(&format!(
        "path: {}; {} kB from the evaluator, {} kB from the garbler ({} with {}); \
         constants: {}",
        describe_path(&selection.path),
        work.evaluator_bytes().div_ceil(1000),
        work.garbler_bytes().div_ceil(1000),
        selection.circuit,
        selection.scheme,
        selection.calibration,
    ));
    let decision = &selection.decision;
    let headers: Vec<String> = select_cmd::HEADER.iter().map(|h| h.to_string()).collect();
    let rows: Vec<Vec<String>> = select_cmd::rows(decision)
        .into_iter()
        .map(|row| row.iter().map(|c| escape(c)).collect())
        .collect();
    s.push_str(&table("prediction", &headers, &rows));
    s.push_str(&match &decision.choice {
        Some(c) => para(&format!("choice: {c}; why: {}", decision.why)),
        None => para(&format!("no choice: {}", decision.why)),
    });
    Ok(s)
}

/// Puts the simulation's process under its limits of memory and CPU time.
fn limit(child: &Child) -> anyhow::Result<()> {
    use rustix::process::{prlimit, Pid, Resource, Rlimit};
    let pid = i32::try_from(child.id())
        .ok()
        .and_then(Pid::from_raw)
        .context("the simulation's process id")?;
    for (resource, most) in [
        (Resource::As, SIMULATION_MEMORY_BYTES),
        (Resource::Cpu, SIMULATION_CPU_SECONDS),
    ] {
        let rlimit = Rlimit {
            current: Some(most),
            maximum: Some(most),
        };
        prlimit(Some(pid), resource, rlimit)
            .with_context(|| format!("limiting the simulation's {resource:?}"))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(rtt: &str, rate: &str, loss: &str, circuit: &str, scheme: &str) -> Form {
        let some = |v: &str| Some(v.to_string());
        Form {
            rtt: some(rtt),
            rate: some(rate),
            loss: some(loss),
            circuit: some(circuit),
            scheme: some(scheme),
        }
    }

    fn errors(f: &Form) -> Vec<(&'static str, String)> {
        f.check().unwrap_err()
    }

    #[test]
    fn a_valid_form_is_selects_flags_as_given() {
        let a = form("100ms", " 100mbit", "0.1%", "aes128", "prf")
            .check()
            .unwrap();
        assert_eq!(a.circuit, "aes128");
        assert_eq!(
            a.flags,
            [
                "--rtt=100ms",
                "--rate=100mbit",
                "--loss=0.1%",
                "--circuit=aes128",
                "--scheme=prf"
            ]
        );
        // Loss and scheme may be left out.
        let mut f = form("1ms", "1gbit", "", "sha256", "");
        f.loss = None;
        let a = f.check().unwrap();
        assert_eq!(a.flags[2], "--loss=0");
        assert_eq!(a.flags[4], "--scheme=ideal");
    }

    #[test]
    fn each_bad_field_has_its_own_message() {
        let e = errors(&form("100ms", "fast", "200%", "aes128", "ideal"));
        assert_eq!(e.len(), 2, "{e:?}");
        assert_eq!(e[0].0, "rate");
        assert!(e[0].1.contains("'fast' is not a rate"), "{}", e[0].1);
        assert_eq!(e[1].0, "loss");
        assert!(e[1].1.contains("'200%' is not a loss rate"), "{}", e[1].1);
        let e = errors(&form("100", "1gbit", "0", "/etc/passwd", "fancy"));
        let fields: Vec<&str> = e.iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["rtt", "circuit", "scheme"], "{e:?}");
        // A file is not a built-in: it is not read.
        assert!(e[1].1.contains("built-in"), "{}", e[1].1);
        let f = Form {
            rate: Some("1gbit".into()),
            ..Form::default()
        };
        let fields: Vec<&str> = errors(&f).iter().map(|(f, _)| *f).collect();
        assert_eq!(fields, ["rtt", "circuit"]);
    }

    #[test]
    fn the_form_keeps_what_was_given_and_puts_each_message_beside_its_field() {
        let f = form("100ms", "\"><b>fast", "0", "aes128", "ideal");
        let html = form_html(&f, &errors(&f));
        assert!(html.contains("value=\"&quot;&gt;&lt;b&gt;fast\""), "{html}");
        let rate = html.find("id=\"rate\"").unwrap();
        let message = html.find("id=\"rate-error\"").unwrap();
        let loss = html.find("id=\"loss\"").unwrap();
        assert!(rate < message && message < loss, "{html}");
        assert!(!html.contains("id=\"rtt-error\""));
        // A first visit shows the defaults.
        assert!(form_html(&Form::default(), &[]).contains("value=\"100mbit\""));
    }
}
