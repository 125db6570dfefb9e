//! The form that composes an experiment (`/run`): circuits (built-ins with their options,
//! or a Bristol file uploaded beside them, [`super::upload`]), schemes, transports (with
//! options, `auto`), named conditions or custom RTT, loss, rate, jitter and queue lists,
//! repetitions, the time limit and a rate cap; or a preset loaded into it.
//!
//! A form becomes `testbed run`'s flags, one argument each (`--transports=tcp;udt`), never a
//! shell line. Each field is read by the parser the command line uses for it (circuits by
//! the circuits library, schemes by the garbling crate, transports by the transport
//! registry and this build's capabilities, conditions and link parameters by netlab), and a
//! bad one is answered beside its field. The flags are then read back by `testbed run`'s
//! own flag parser and the experiment resolved as `testbed run` resolves it
//! ([`crate::experiment_cmd::experiment_file_of`]), so a form the page accepts is one the command
//! line accepts, and a mistake only the whole shows is still put beside the field its key
//! names.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use transputation_circuits::library;
use transputation_contract::FEATURE_TRANSPORT_AUTO;
use transputation_experiments::experiment::{is_auto, ExperimentFile, TransportTemplate};
use transputation_experiments::preset;
use transputation_garble::Scheme;
use transputation_netlab::spec::{parse_duration, parse_loss, parse_queue, parse_rate};
use transputation_netlab::{LinkSpec, CONDITIONS};

use super::html::{escape, messages_beside};
use super::{programs, upload};
use crate::capabilities_cmd::capabilities;
use crate::experiment_cmd::{experiment_file_of, split_options_list};
use crate::garble_cmd::parse_scheme;

/// Each bad field and its message; the field `form` is the form as a whole.
pub(super) type FieldErrors = Vec<(&'static str, String)>;

/// The most repetitions a form may ask for.
const MAX_RUNS: u32 = 1000;

/// The longest text a field may hold.
pub(super) const MAX_FIELD_BYTES: usize = 16 << 10;

/// The form as given: every field as text, as the page sent it.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(super) struct Compose {
    pub(super) name: String,
    pub(super) circuits: String,
    /// The stored name of a Bristol file uploaded with this form before ([`upload`]).
    pub(super) uploaded: String,
    /// Registered user programs to run beside the circuits ([`super::programs`]).
    pub(super) programs: Vec<String>,
    pub(super) schemes: Vec<String>,
    pub(super) transports: String,
    pub(super) conditions: Vec<String>,
    pub(super) rtt: String,
    pub(super) loss: String,
    pub(super) rate: String,
    pub(super) jitter: String,
    pub(super) queue: String,
    pub(super) runs: String,
    pub(super) timeout: String,
    pub(super) max_rate: String,
}

/// Where the form's stored parts are looked for: uploaded circuits
/// ([`upload::circuits_dir`]) and registered programs ([`programs::programs_dir`]).
#[derive(Debug, Clone)]
pub(super) struct Stores {
    pub(super) circuits: PathBuf,
    pub(super) programs: PathBuf,
}

/// A valid form: `testbed run`'s flags for it and what it plans.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Composed {
    /// The flags, one argument each, `--db` and `--resume` aside.
    pub(super) flags: Vec<String>,
    /// The experiment as `testbed run` reads those flags.
    pub(super) file: ExperimentFile,
    /// The runs its plan has.
    pub(super) planned_runs: usize,
    /// Its conditions, named and custom.
    pub(super) conditions: usize,
}

/// The custom condition lists: field, label, flag, and how a value of it is read.
type ValueCheck = fn(&str) -> Result<(), String>;
const SWEEP: [(&str, &str, ValueCheck, &str); 5] = [
    ("rtt", "RTT", check_rtt, "e.g. 10ms,100ms"),
    (
        "loss",
        "loss",
        check_loss,
        "e.g. 0,0.1% (a fraction or a percentage)",
    ),
    ("rate", "rate", check_rate, "e.g. 100mbit,1gbit"),
    ("jitter", "jitter", check_jitter, "e.g. 1ms"),
    (
        "queue",
        "queue",
        check_queue,
        "a time at the rate (20ms) or bytes (64kb)",
    ),
];

fn check_rtt(v: &str) -> Result<(), String> {
    parse_duration("rtt", v)
        .map(drop)
        .map_err(|e| e.to_string())
}
fn check_loss(v: &str) -> Result<(), String> {
    parse_loss(v).map(drop).map_err(|e| e.to_string())
}
fn check_rate(v: &str) -> Result<(), String> {
    parse_rate(v).map(drop).map_err(|e| e.to_string())
}
fn check_jitter(v: &str) -> Result<(), String> {
    parse_duration("jitter", v)
        .map(drop)
        .map_err(|e| e.to_string())
}
fn check_queue(v: &str) -> Result<(), String> {
    parse_queue(v).map(drop).map_err(|e| e.to_string())
}

impl Compose {
    /// What a first visit shows: aes128 over TCP on the LAN, once.
    pub(super) fn first_visit() -> Compose {
        Compose {
            circuits: "aes128".into(),
            schemes: vec!["ideal".into()],
            transports: "tcp".into(),
            conditions: vec!["lan".into()],
            runs: "1".into(),
            timeout: "600".into(),
            ..Compose::default()
        }
    }

    /// The form filled with the preset `name`, or the message for its field.
    pub(super) fn from_preset(name: &str) -> Result<Compose, String> {
        let f = preset::preset(name).map_err(|e| e.message)?;
        Ok(Compose {
            name: f.name.clone().unwrap_or_default(),
            circuits: f.circuits.join(";"),
            uploaded: String::new(),
            programs: Vec::new(),
            schemes: f.schemes.clone(),
            transports: f.transports.join(";"),
            conditions: f.conditions.clone(),
            rtt: f.sweep.rtt.join(","),
            loss: f.sweep.loss.join(","),
            rate: f.sweep.rate.join(","),
            jitter: f.sweep.jitter.join(","),
            queue: f.sweep.queue.join(","),
            runs: f.runs.to_string(),
            timeout: f.timeout.to_string(),
            max_rate: f.max_rate.clone().unwrap_or_default(),
        })
    }

    /// Sets the field `field` from the page's `value`; an unknown field is an error.
    pub(super) fn set(&mut self, field: &str, value: String) -> Result<(), String> {
        let slot = match field {
            "name" => &mut self.name,
            "circuits" => &mut self.circuits,
            "uploaded" => &mut self.uploaded,
            "transports" => &mut self.transports,
            "rtt" => &mut self.rtt,
            "loss" => &mut self.loss,
            "rate" => &mut self.rate,
            "jitter" => &mut self.jitter,
            "queue" => &mut self.queue,
            "runs" => &mut self.runs,
            "timeout" => &mut self.timeout,
            "max_rate" => &mut self.max_rate,
            "schemes" => {
                self.schemes.push(value);
                return Ok(());
            }
            "conditions" => {
                self.conditions.push(value);
                return Ok(());
            }
            "programs" => {
                self.programs.push(value);
                return Ok(());
            }
            other => return Err(format!("The form has no field {other:?}.")),
        };
        *slot = value;
        Ok(())
    }

    fn sweep_value(&self, field: &str) -> &str {
        match field {
            "rtt" => &self.rtt,
            "loss" => &self.loss,
            "rate" => &self.rate,
            "jitter" => &self.jitter,
            _ => &self.queue,
        }
    }

    /// `testbed run`'s flags for the form, or each bad field with its message; uploads are
    /// looked for in `stores.circuits`, programs in `stores.programs`.
    pub(super) fn check(&self, stores: &Stores) -> Result<Composed, FieldErrors> {
        let mut errors = FieldErrors::new();
        let mut flags = Vec::new();
        let name = self.name.trim();
        if !name.is_empty() {
            flags.push(format!("--name={name}"));
        }
        match self.check_circuits(&stores.circuits, &mut errors) {
            Some(circuits) if !circuits.is_empty() => {
                flags.push(format!("--circuits={}", circuits.join(";")));
            }
            _ => {}
        }
        for program in &self.programs {
            match programs::stored_dir(&stores.programs, program) {
                Ok(dir) => flags.push(format!("--program={program}={dir}")),
                Err(e) => errors.push(("programs", e)),
            }
        }
        let schemes: Vec<&str> = self.schemes.iter().map(|s| s.trim()).collect();
        if schemes.is_empty() {
            errors.push(("schemes", "choose a scheme".into()));
        }
        for s in &schemes {
            if let Err(e) = parse_scheme(s) {
                errors.push(("schemes", e));
            }
        }
        flags.push(format!("--schemes={}", schemes.join(",")));
        let transports = split_options_list(&self.transports);
        if transports.is_empty() {
            errors.push(("transports", "give a transport, e.g. tcp".into()));
        }
        for t in &transports {
            if let Err(e) = check_transport(t) {
                errors.push(("transports", e));
            }
        }
        flags.push(format!("--transports={}", transports.join(";")));
        self.check_conditions(&mut flags, &mut errors);
        check_number(
            &self.runs,
            "runs",
            1,
            u64::from(MAX_RUNS),
            &mut flags,
            &mut errors,
        );
        check_number(
            &self.timeout,
            "timeout",
            1,
            7 * 24 * 3600,
            &mut flags,
            &mut errors,
        );
        let max_rate = self.max_rate.trim();
        if !max_rate.is_empty() {
            match parse_rate(max_rate) {
                Ok(_) => flags.push(format!("--max-rate={max_rate}")),
                Err(e) => errors.push(("max_rate", e.to_string())),
            }
        }
        if !errors.is_empty() {
            return Err(errors);
        }
        // The command line's own reading of the flags, and its resolution.
        let file = experiment_file_of(&flags).map_err(|e| vec![("form", format!("{e:#}"))])?;
        let experiment = file
            .resolve()
            .map_err(|e| vec![(field_of_key(&e.key), e.to_string())])?;
        let planned_runs = experiment.plan().len();
        if planned_runs == 0 {
            return Err(vec![(
                "transports",
                experiment
                    .left_out()
                    .first()
                    .cloned()
                    .unwrap_or_else(|| "the experiment plans no run".into()),
            )]);
        }
        Ok(Composed {
            flags,
            file,
            planned_runs,
            conditions: experiment.conditions.len(),
        })
    }

    /// The circuits to run: the built-ins as written, then the upload's stored path.
    fn check_circuits(&self, dir: &Path, errors: &mut FieldErrors) -> Option<Vec<String>> {
        let mut circuits = split_options_list(&self.circuits);
        let before = errors.len();
        for c in &circuits {
            // The command line reads a name with blanks around it as a file's: refused.
            let name = c.split(':').next().unwrap_or(c);
            if name != name.trim() {
                errors.push((
                    "circuits",
                    format!("'{c}': write the built-in's name without blanks around it"),
                ));
                continue;
            }
            match library::parse_spec(c) {
                Ok(_) => {}
                Err(library::LoadError::Unknown(..)) => {
                    let names: Vec<&str> = library::builtins().iter().map(|b| b.name).collect();
                    errors.push((
                        "circuits",
                        format!(
                            "'{c}' is not a built-in circuit (the built-ins: {}); upload a \
                             Bristol file below",
                            names.join(", ")
                        ),
                    ));
                }
                Err(e) => errors.push(("circuits", e.to_string())),
            }
        }
        let uploaded = self.uploaded.trim();
        if !uploaded.is_empty() {
            match upload::stored_path(dir, uploaded) {
                Ok(path) => circuits.push(path),
                Err(e) => errors.push(("upload", e)),
            }
        }
        if circuits.is_empty() && self.programs.is_empty() && errors.len() == before {
            errors.push((
                "circuits",
                "give a built-in circuit, upload a Bristol file, or choose a program".into(),
            ));
        }
        (errors.len() == before).then_some(circuits)
    }

    /// The named conditions and the custom lists, each value read by netlab.
    fn check_conditions(&self, flags: &mut Vec<String>, errors: &mut FieldErrors) {
        let named: Vec<&str> = self
            .conditions
            .iter()
            .map(|c| c.trim())
            .filter(|c| !c.is_empty())
            .collect();
        for c in &named {
            if let Err(e) = LinkSpec::condition(c) {
                errors.push(("conditions", e.to_string()));
            }
        }
        if !named.is_empty() {
            flags.push(format!("--conditions={}", named.join(",")));
        }
        let mut custom = false;
        for (field, _, check, _) in SWEEP {
            let values: Vec<&str> = self
                .sweep_value(field)
                .split(',')
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .collect();
            for v in &values {
                if let Err(e) = check(v) {
                    errors.push((field, e));
                }
            }
            if !values.is_empty() {
                custom = true;
                flags.push(format!("--{field}={}", values.join(",")));
            }
        }
        if named.is_empty() && !custom {
            errors.push((
                "conditions",
                "choose a named condition, or give custom RTT, loss, rate, jitter or queue".into(),
            ));
        }
    }
}

/// A whole number within `min..=max` for the flag `--FIELD`.
fn check_number(
    value: &str,
    field: &'static str,
    min: u64,
    max: u64,
    flags: &mut Vec<String>,
    errors: &mut FieldErrors,
) {
    let v = value.trim();
    match v.parse::<u64>() {
        Ok(n) if (min..=max).contains(&n) => flags.push(format!("--{field}={n}")),
        _ => errors.push((
            field,
            format!("'{v}' is not a whole number from {min} to {max}"),
        )),
    }
}

/// The path a transport's `{bdp}` is expanded for when its other options are checked.
const SAMPLE_RTT: std::time::Duration = std::time::Duration::from_millis(100);
const SAMPLE_RATE_BPS: u64 = 100_000_000;

/// Whether this build runs the transport `t` as written (`auto`, `NAME`,
/// `NAME:key=value,...`, an option's value `{bdp}`), else why not.
fn check_transport(t: &str) -> Result<(), String> {
    let caps = capabilities();
    if is_auto(t) {
        return if caps.has_feature(FEATURE_TRANSPORT_AUTO) {
            Ok(())
        } else {
            Err("this build has no auto".into())
        };
    }
    let template = TransportTemplate::parse(t).map_err(|e| format!("{t}: {e}"))?;
    let name = t.split(':').next().unwrap_or(t).trim();
    match caps.transport(name) {
        Some(info) if info.available => {}
        Some(info) => {
            return Err(format!(
                "{name} does not run here: {}",
                info.why.as_deref().unwrap_or("not available")
            ))
        }
        None => {
            let names: Vec<&str> = caps
                .transports
                .iter()
                .filter(|i| i.available)
                .map(|i| i.name.as_str())
                .collect();
            return Err(format!(
                "there is no transport '{name}' here (the transports: {}, auto)",
                names.join(", ")
            ));
        }
    }
    // A placeholder's value is the condition's: a sample path's stands in for it, so that
    // the other options are checked as written.
    let here = template
        .expand(SAMPLE_RTT, Some(SAMPLE_RATE_BPS))
        .unwrap_or_else(|| t.to_string());
    here.parse::<transputation_transport::TransportSpec>()
        .map_err(|e| e.to_string())?;
    Ok(())
}

/// The form's field for a key of [`ExperimentFile::resolve`]'s errors (`transports[1]`,
/// `sweep.rate[0]`, `max_rate`).
fn field_of_key(key: &str) -> &'static str {
    let head = key.split(['[', '.']).next().unwrap_or("");
    match head {
        "circuits" => "circuits",
        "schemes" => "schemes",
        "transports" => "transports",
        "conditions" | "link" => "conditions",
        "runs" => "runs",
        "timeout" => "timeout",
        "max_rate" => "max_rate",
        "sweep" => SWEEP
            .iter()
            .map(|(f, ..)| *f)
            .find(|f| key.starts_with(&format!("sweep.{f}")))
            .unwrap_or("rtt"),
        _ => "form",
    }
}

/// The form with the values as given and each message beside its field (the upload's
/// limit stated beside it); `registered` are the programs it offers.
pub(super) fn form_html(c: &Compose, errors: &FieldErrors, registered: &[String]) -> String {
    let beside = |field: &str| messages_beside(errors, field, field);
    let mut s = beside("form");
    s.push_str(
        "<form class=\"fields\" id=\"compose\" method=\"post\" action=\"/run\" \
         enctype=\"multipart/form-data\">\n",
    );
    let text = |s: &mut String, field: &str, label: &str, value: &str, hint: &str| {
        let _ = writeln!(
            s,
            "<div><label for=\"{field}\">{label}</label> <input id=\"{field}\" name=\"{field}\" \
             value=\"{}\" title=\"{}\" size=\"40\"> <span class=\"note\">{}</span>{}</div>",
            escape(value),
            escape(hint),
            escape(hint),
            beside(field)
        );
    };
    text(
        &mut s,
        "name",
        "name",
        &c.name,
        "a name for listings (optional)",
    );
    text(
        &mut s,
        "circuits",
        "circuits",
        &c.circuits,
        "built-ins separated by ; with options, e.g. aes128;mincut:n=64",
    );
    let offered: Vec<(&str, &str)> = registered.iter().map(|p| (p.as_str(), "")).collect();
    s.push_str(&checkboxes("programs", "program", &offered, &c.programs));
    if offered.is_empty() {
        s.push_str("<span class=\"note\">none registered</span> ");
    }
    let _ = writeln!(
        s,
        "<a href=\"/programs\">register a program</a>{}</div>",
        beside("programs")
    );
    let schemes: Vec<(&str, &str)> = Scheme::ALL.iter().map(|s| (s.name(), "")).collect();
    s.push_str(&checkboxes("schemes", "scheme", &schemes, &c.schemes));
    let _ = writeln!(s, "{}</div>", beside("schemes"));
    let available: Vec<String> = capabilities()
        .transports
        .into_iter()
        .filter(|t| t.available)
        .map(|t| t.name)
        .chain(["auto".to_string(), "auto:race".to_string()])
        .collect();
    text(
        &mut s,
        "transports",
        "transports",
        &c.transports,
        &format!(
            "separated by ;, with options: tcp;mtcp:streams=8;quic:iw={{bdp}} (here: {})",
            available.join(", ")
        ),
    );
    let conditions: Vec<(&str, &str)> = CONDITIONS.iter().map(|c| (c.name, c.about)).collect();
    s.push_str(&checkboxes(
        "conditions",
        "condition",
        &conditions,
        &c.conditions,
    ));
    let _ = writeln!(s, "{}</div>", beside("conditions"));
    s.push_str("<p class=\"note\">Custom conditions: every combination of these lists.</p>\n");
    for (field, label, _, hint) in SWEEP {
        text(&mut s, field, label, c.sweep_value(field), hint);
    }
    text(&mut s, "runs", "runs", &c.runs, "repetitions of every cell");
    text(
        &mut s,
        "timeout",
        "timeout",
        &c.timeout,
        "seconds one run may take",
    );
    text(
        &mut s,
        "max_rate",
        "rate cap",
        &c.max_rate,
        "cap every link's rate (optional)",
    );
    if !c.uploaded.is_empty() {
        let _ = writeln!(
            s,
            "<div><input type=\"hidden\" name=\"uploaded\" value=\"{v}\"><span class=\"note\">\
             uploaded: {v}</span></div>",
            v = escape(&c.uploaded)
        );
    }
    // Last, so that a browser sends the other fields before it.
    let _ = writeln!(
        s,
        "<div><label for=\"upload\">Bristol file</label> <input type=\"file\" id=\"upload\" \
         name=\"upload\"> <span class=\"note\">a Bristol or Bristol Fashion circuit, at most \
         {} MiB, checked on upload</span>{}</div>",
        upload::LIMIT_BYTES >> 20,
        beside("upload")
    );
    s.push_str("<div><button id=\"start\">Start</button></div>\n</form>\n");
    s
}

/// The opening of a row of checkboxes named `field`, one per `(value, about)` of
/// `choices`, those in `chosen` checked; each has the id `PREFIX-VALUE`.
fn checkboxes(field: &str, prefix: &str, choices: &[(&str, &str)], chosen: &[String]) -> String {
    let mut s = format!("<div class=\"checks\"><span class=\"label\">{field}</span> ");
    for (value, about) in choices {
        let on = if chosen.iter().any(|c| c == value) {
            " checked"
        } else {
            ""
        };
        let _ = write!(
            s,
            "<label title=\"{about}\"><input type=\"checkbox\" name=\"{field}\" \
             value=\"{v}\" id=\"{prefix}-{v}\"{on}> {v}</label> ",
            v = escape(value),
            about = escape(about),
        );
    }
    s
}

/// The form that loads a preset into the composing form, with its message.
pub(super) fn preset_html(chosen: Option<&str>, error: Option<&str>) -> String {
    let mut s = String::from(
        "<form class=\"fields\" method=\"get\" action=\"/run\">\n<div><label \
         for=\"preset\">preset</label> <select id=\"preset\" name=\"preset\">",
    );
    for p in preset::PRESETS {
        let on = if chosen == Some(p.name) {
            " selected"
        } else {
            ""
        };
        let _ = write!(
            s,
            "<option value=\"{n}\" title=\"{d}\"{on}>{n}</option>",
            n = p.name,
            d = escape(p.description)
        );
    }
    s.push_str("</select> <button>Load</button>");
    if let Some(e) = error {
        let _ = write!(
            s,
            "<span class=\"error\" id=\"preset-error\">{}</span>",
            escape(e)
        );
    }
    s.push_str("</div>\n</form>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stores(dir: &Path) -> Stores {
        Stores {
            circuits: dir.to_path_buf(),
            programs: dir.join("programs"),
        }
    }

    fn form(pairs: &[(&str, &str)]) -> Compose {
        let mut c = Compose::default();
        for (k, v) in pairs {
            c.set(k, v.to_string()).unwrap();
        }
        c
    }

    fn fields(e: &FieldErrors) -> Vec<&'static str> {
        e.iter().map(|(f, _)| *f).collect()
    }

    #[test]
    fn a_valid_form_is_testbed_runs_flags_one_argument_each() {
        let dir = tempfile::tempdir().unwrap();
        let c = form(&[
            ("name", "two transports"),
            ("circuits", "aes128; synthetic:and=10,xor=20"),
            ("schemes", "ideal"),
            ("schemes", "prf"),
            ("transports", "tcp;tcp-bbr;mtcp:streams=2,chunk=65536"),
            ("conditions", "lan"),
            ("rtt", "10ms, 100ms"),
            ("runs", "2"),
            ("timeout", "60"),
            ("max_rate", "500mbit"),
        ]);
        let ok = c.check(&stores(dir.path())).unwrap();
        assert_eq!(
            ok.flags,
            [
                "--name=two transports",
                "--circuits=aes128;synthetic:and=10,xor=20",
                "--schemes=ideal,prf",
                "--transports=tcp;tcp-bbr;mtcp:streams=2,chunk=65536",
                "--conditions=lan",
                "--rtt=10ms,100ms",
                "--runs=2",
                "--timeout=60",
                "--max-rate=500mbit",
            ]
        );
        // As `testbed run` reads them: the name with its blank, the comma inside mtcp's
        // options kept, the named condition beside the custom ones.
        assert_eq!(ok.file.name.as_deref(), Some("two transports"));
        assert_eq!(
            ok.file.transports,
            ["tcp", "tcp-bbr", "mtcp:streams=2,chunk=65536"]
        );
        assert_eq!(ok.file.conditions, ["lan"]);
        assert_eq!(ok.file.sweep.rtt, ["10ms", "100ms"]);
        // 2 circuits × 2 schemes × 3 transports × 3 conditions × 2 runs.
        assert_eq!(ok.planned_runs, 72);
        // A value that starts like a flag stays a value.
        let c = form(&[
            ("name", "--resume=1"),
            ("circuits", "aes128"),
            ("schemes", "ideal"),
            ("transports", "tcp"),
            ("conditions", "lan"),
            ("runs", "1"),
            ("timeout", "600"),
        ]);
        let ok = c.check(&stores(dir.path())).unwrap();
        assert_eq!(ok.flags[0], "--name=--resume=1");
        assert_eq!(ok.file.name.as_deref(), Some("--resume=1"));
    }

    #[test]
    fn each_bad_field_is_answered_beside_it() {
        let dir = tempfile::tempdir().unwrap();
        let c = form(&[
            ("circuits", "aes128;/etc/passwd;mincut:n=0"),
            ("schemes", "fancy"),
            (
                "transports",
                "tcp;sctp;quic:iw={bdq};mtcp:chunk={bdp},streams=0",
            ),
            ("conditions", "moon"),
            ("rate", "fast"),
            ("loss", "200%"),
            ("runs", "0"),
            ("timeout", "x"),
            ("uploaded", "../../etc/passwd"),
        ]);
        let e = c.check(&stores(dir.path())).unwrap_err();
        assert_eq!(
            fields(&e),
            [
                "circuits",
                "circuits",
                "upload",
                "schemes",
                "transports",
                "transports",
                "transports",
                "conditions",
                "loss",
                "rate",
                "runs",
                "timeout"
            ],
            "{e:?}"
        );
        let said = |i: usize| e[i].1.as_str();
        assert!(
            said(0).contains("'/etc/passwd' is not a built-in"),
            "{}",
            said(0)
        );
        assert!(said(1).contains("mincut:n=0"), "{}", said(1));
        assert!(said(4).contains("no transport 'sctp'"), "{}", said(4));
        assert!(said(5).starts_with("quic:iw={bdq}"), "{}", said(5));
        // Beside a placeholder, an option is checked as written.
        assert!(said(6).contains("streams"), "{}", said(6));
        assert!(said(7).contains("moon"), "{}", said(7));
        assert_eq!(said(8), "bad loss \"200%\": must be below 100 %");
        assert!(said(9).starts_with("bad rate \"fast\""), "{}", said(9));
        let e = form(&[("circuits", "aes128 :n=1")])
            .check(&stores(dir.path()))
            .unwrap_err();
        assert!(e[0].1.contains("without blanks"), "{e:?}");
        // Nothing to run at all.
        let e = Compose::default().check(&stores(dir.path())).unwrap_err();
        assert_eq!(
            fields(&e),
            [
                "circuits",
                "schemes",
                "transports",
                "conditions",
                "runs",
                "timeout"
            ]
        );
    }

    #[test]
    fn a_mistake_only_the_whole_shows_goes_to_the_field_its_key_names() {
        let dir = tempfile::tempdir().unwrap();
        // The same transport twice: resolve's error, keyed `transports[1]`.
        let c = form(&[
            ("circuits", "aes128"),
            ("schemes", "ideal"),
            ("transports", "tcp;tcp"),
            ("conditions", "lan"),
            ("runs", "1"),
            ("timeout", "600"),
        ]);
        let e = c.check(&stores(dir.path())).unwrap_err();
        assert_eq!(fields(&e), ["transports"], "{e:?}");
        assert_eq!(e[0].1, "transports[1]: \"tcp\" is given twice");
        assert_eq!(field_of_key("sweep.rate[1]"), "rate");
        assert_eq!(field_of_key("link[0].rtt"), "conditions");
        assert_eq!(field_of_key("host_cc"), "form");
    }

    #[test]
    fn a_preset_fills_the_form_and_an_unknown_one_is_named() {
        let c = Compose::from_preset("paper-loss").unwrap();
        assert_eq!(c.rtt, "100ms");
        assert_eq!(c.loss, "0,0.01%,0.05%,0.1%,0.5%,1%");
        assert_eq!(c.max_rate, "500mbit");
        let ok = c.check(&stores(Path::new("/nonexistent"))).unwrap();
        let f = preset::preset("paper-loss").unwrap();
        assert_eq!(ok.file.sweep, f.sweep);
        assert_eq!(ok.planned_runs, f.resolve().unwrap().plan().len());
        let e = Compose::from_preset("paper-table5").unwrap_err();
        assert!(e.contains("no preset \"paper-table5\""), "{e}");
        assert!(form(&[]).set("shell", "x".into()).is_err());
    }

    #[test]
    fn the_form_keeps_what_was_given_and_puts_each_message_beside_its_field() {
        let c = form(&[("rate", "\"><b>fast"), ("conditions", "lan")]);
        let e = vec![("rate", "'fast' is not a rate".to_string())];
        let html = form_html(&c, &e, &[]);
        assert!(html.contains("value=\"&quot;&gt;&lt;b&gt;fast\""), "{html}");
        let rate = html.find("id=\"rate\"").unwrap();
        let message = html.find("id=\"rate-error\"").unwrap();
        let jitter = html.find("id=\"jitter\"").unwrap();
        assert!(rate < message && message < jitter);
        assert!(html.contains("id=\"condition-lan\" checked"));
        assert!(html.contains("at most 64 MiB"));
    }

    #[test]
    fn the_composing_form_runs_a_registered_program_by_its_stored_directory() {
        let dir = tempfile::tempdir().unwrap();
        let stores = Stores {
            circuits: dir.path().join("circuits"),
            programs: dir.path().join("programs"),
        };
        programs::register(&stores.programs, "echo", b"true\n", b"true\n").unwrap();
        let mut c = Compose::default();
        for (k, v) in [
            ("programs", "echo"),
            ("schemes", "ideal"),
            ("transports", "tcp;tcp-bbr"),
            ("conditions", "lan"),
            ("runs", "2"),
            ("timeout", "60"),
        ] {
            c.set(k, v.into()).unwrap();
        }
        let ok = c.check(&stores).unwrap();
        let flag = format!("--program=echo={}", stores.programs.join("echo").display());
        assert!(ok.flags.contains(&flag), "{:?}", ok.flags);
        assert!(!ok.flags.iter().any(|f| f.starts_with("--circuits")));
        assert_eq!(ok.file.programs["echo"], stores.programs.join("echo"));
        // One program × 2 transports × 1 condition × 2 runs, with no scheme of ours.
        assert_eq!(ok.planned_runs, 4);
        c.set("programs", "gone".into()).unwrap();
        let e = c.check(&stores).unwrap_err();
        assert_eq!(fields(&e), ["programs"]);
        assert!(e[0].1.contains("no program named 'gone'"), "{e:?}");
    }
}
