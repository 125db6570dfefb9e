//! User programs (`/programs`), as the paper's testbed takes them: a pair of shell scripts,
//! `NAME-server.sh` and `NAME-client.sh`, that the testbed runs like a circuit over every
//! transport and condition (`testbed run --program NAME=DIR`). The page registers a pair
//! (uploaded, checked, stored) and lists the registered ones; the composing form offers them
//! beside the circuits.
//!
//! A pair is stored in `programs/NAME/` beside the results database. It is checked before it
//! is kept: the name is a short word that no built-in circuit has, each script is UTF-8 text
//! of at most [`LIMIT_BYTES`], and `sh -n` (which reads a script without running a line of
//! it) accepts it; its message, with the line, is answered beside the field. A pair is kept
//! whole or not at all (written in a directory of its own, then renamed into place), and a
//! registered name is never given other scripts, so that an experiment that names a
//! program runs the same scripts when it is resumed.
//!
//! The scripts run as the testbed's runs do: as children of `testbed run`, which this server
//! starts as its own user, inside the network namespaces of the emulated link (the server
//! in namespace A, the client in B), never on the host's network.

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use axum::extract::multipart::MultipartRejection;
use axum::extract::{Multipart, State};
use axum::http::{header, StatusCode};
use axum::response::{Html, IntoResponse, Response};
use transputation_circuits::library;

use super::html::{escape, messages_beside, page, para, table};
use super::upload::read_limited;
use super::{blocking, PageError, Shared};

/// Each bad field of the registering form and its message; `form` is the form as a whole.
type FieldErrors = Vec<(&'static str, String)>;

/// The largest script accepted.
pub(super) const LIMIT_BYTES: usize = 256 << 10;

/// The longest program name.
const MAX_NAME: usize = 32;

/// The two sides of a program: the form's field, and the script's file name after NAME.
const SIDES: [(&str, &str); 2] = [("server", "-server.sh"), ("client", "-client.sh")];

/// The directory of registered programs for the results database at `db`.
pub(super) fn programs_dir(db: &Path) -> PathBuf {
    super::upload::beside_db(db, "programs")
}

/// Whether `name` may name a program: a letter or digit, then letters, digits, `-` and `_`,
/// at most [`MAX_NAME`] in all, and not a built-in circuit's name (the two share the
/// table's circuit column).
fn check_name(name: &str) -> Result<(), String> {
    let word = name.len() <= MAX_NAME
        && name
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_alphanumeric())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_'));
    if !word {
        return Err(format!(
            "'{name}': a program's name is a letter or digit, then letters, digits, - and _ \
             (at most {MAX_NAME})"
        ));
    }
    if library::builtins().iter().any(|b| b.name == name) {
        return Err(format!(
            "'{name}' is a built-in circuit's name; choose another"
        ));
    }
    Ok(())
}

/// Checks a script as `sh` would read it, without running it: UTF-8, not empty, and
/// accepted by `sh -n`. The message names `shown` and the line.
fn check_script(bytes: &[u8], shown: &str) -> Result<(), String> {
    if bytes.is_empty() {
        return Err(format!("{shown} is empty"));
    }
    if std::str::from_utf8(bytes).is_err() || bytes.contains(&0) {
        return Err(format!("{shown} is not a text file (UTF-8, no NUL byte)"));
    }
    let mut sh = Command::new("sh")
        .arg("-n")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("checking {shown}: starting sh: {e}"))?;
    // `sh -n` reads the whole script before it answers, so writing it all first cannot
    // block on an unread pipe; an early exit (a syntax error) closes the pipe, which only
    // ends the writing.
    if let Some(mut stdin) = sh.stdin.take() {
        let _ = stdin.write_all(bytes);
    }
    let out = sh
        .wait_with_output()
        .map_err(|e| format!("checking {shown}: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    // dash: "sh: 3: Syntax error: ..."; bash as sh: "sh: line 3: syntax error ...".
    let said = String::from_utf8_lossy(&out.stderr);
    let said = said.lines().next().unwrap_or("").trim();
    let said = said.strip_prefix("sh: ").unwrap_or(said);
    let said = match said.split_once(": ") {
        Some((n, rest)) if n.bytes().all(|b| b.is_ascii_digit()) && !n.is_empty() => {
            format!("line {n}: {rest}")
        }
        _ => said.to_string(),
    };
    Err(format!("{shown}: sh -n refuses it: {said}"))
}

/// A registered program: its name and its two scripts' text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Registered {
    pub(super) name: String,
    pub(super) server: String,
    pub(super) client: String,
}

/// The scripts of the program `name` in `dir`, if both are stored.
fn read_pair(dir: &Path, name: &str) -> Option<(Vec<u8>, Vec<u8>)> {
    let at = dir.join(name);
    let server = std::fs::read(at.join(format!("{name}{}", SIDES[0].1))).ok()?;
    let client = std::fs::read(at.join(format!("{name}{}", SIDES[1].1))).ok()?;
    Some((server, client))
}

/// Whether both scripts of the program `name` are stored in `dir` (without reading them).
fn is_registered(dir: &Path, name: &str) -> bool {
    SIDES
        .iter()
        .all(|(_, suffix)| dir.join(name).join(format!("{name}{suffix}")).is_file())
}

/// The names of the programs registered in `dir`, in order.
pub(super) fn names(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|name| check_name(name).is_ok() && is_registered(dir, name))
        .collect();
    names.sort();
    names
}

/// The programs registered in `dir`, by name, with their scripts.
pub(super) fn registered(dir: &Path) -> Vec<Registered> {
    names(dir)
        .into_iter()
        .filter_map(|name| {
            let (server, client) = read_pair(dir, &name)?;
            Some(Registered {
                server: String::from_utf8_lossy(&server).into_owned(),
                client: String::from_utf8_lossy(&client).into_owned(),
                name,
            })
        })
        .collect()
}

/// Checks the pair and keeps it in `dir` as `name`; each refusal is answered beside its
/// field (`name`, `server`, `client`). The same pair registered again is accepted as it is.
pub(super) fn register(
    dir: &Path,
    name: &str,
    server: &[u8],
    client: &[u8],
) -> Result<(), FieldErrors> {
    let mut errors = FieldErrors::new();
    if let Err(e) = check_name(name) {
        errors.push(("name", e));
    }
    let shown = |suffix: &str| {
        if errors.is_empty() {
            format!("{name}{suffix}")
        } else {
            format!("the {} script", suffix.trim_start_matches('-'))
        }
    };
    let shown = [shown(SIDES[0].1), shown(SIDES[1].1)];
    for ((field, _), (bytes, shown)) in SIDES.iter().zip([server, client].iter().zip(&shown)) {
        if let Err(e) = check_script(bytes, shown) {
            errors.push((field, e));
        }
    }
    if !errors.is_empty() {
        return Err(errors);
    }
    let failed = |what: &str, e: std::io::Error| vec![("form", format!("{what}: {e}"))];
    if let Some(kept) = read_pair(dir, name) {
        return if kept == (server.to_vec(), client.to_vec()) {
            Ok(())
        } else {
            Err(vec![(
                "name",
                format!(
                    "a program named '{name}' is registered with other scripts (an \
                     experiment that ran it may be resumed with them); choose another name"
                ),
            )])
        };
    }
    std::fs::create_dir_all(dir).map_err(|e| failed(&format!("creating {}", dir.display()), e))?;
    let new = tempfile::Builder::new()
        .prefix(".new-")
        .tempdir_in(dir)
        .map_err(|e| failed(&format!("storing in {}", dir.display()), e))?;
    for ((_, suffix), bytes) in SIDES.iter().zip([server, client]) {
        let path = new.path().join(format!("{name}{suffix}"));
        std::fs::write(&path, bytes)
            .map_err(|e| failed(&format!("writing {}", path.display()), e))?;
    }
    let place = dir.join(name);
    // A rename onto a directory that exists fails: two registrations of one name at once
    // leave the first one's pair.
    std::fs::rename(new.path(), &place)
        .map_err(|e| failed(&format!("storing the program as {}", place.display()), e))?;
    let _ = new.keep();
    Ok(())
}

/// The directory of the registered program `name` in `dir`, as `--program NAME=DIR`
/// names it; a name not registered is refused.
pub(super) fn stored_dir(dir: &Path, name: &str) -> Result<String, String> {
    check_name(name)?;
    if !is_registered(dir, name) {
        return Err(format!(
            "no program named '{name}' is registered; register it on the programs page"
        ));
    }
    let at = dir.join(name);
    at.to_str().map(str::to_string).ok_or_else(|| {
        format!(
            "the programs' directory {} is not UTF-8, so it cannot be passed on",
            dir.display()
        )
    })
}

/// `/programs`: the registered programs and the form that registers one.
pub(super) async fn list(State(served): State<Shared>) -> Result<Response, PageError> {
    let dir = served.programs.clone();
    let all = blocking(move || Ok(registered(&dir))).await?;
    let body = programs_page(&all, "", &FieldErrors::new());
    Ok(Html(page("Programs", &body)).into_response())
}

/// `POST /programs`: registers the uploaded pair and goes back to the list, or answers
/// the form with each message beside its field.
pub(super) async fn add(
    State(served): State<Shared>,
    multipart: Result<Multipart, MultipartRejection>,
) -> Result<Response, PageError> {
    let mut multipart = multipart.map_err(|e| PageError::BadRequest(e.body_text()))?;
    let (mut name, mut server, mut client) = (String::new(), Vec::new(), Vec::new());
    let mut errors = FieldErrors::new();
    let mut fields = 0;
    while let Some(field) = multipart
        .next_field()
        .await
        .map_err(|e| PageError::BadRequest(format!("The form is not readable: {e}")))?
    {
        fields += 1;
        if fields > 3 {
            return Err(PageError::BadRequest(
                "The form has more fields than name, server and client.".into(),
            ));
        }
        let field_name = field.name().unwrap_or("").to_string();
        let (slot, limit) = match field_name.as_str() {
            "name" => (None, 1 << 10),
            "server" => (Some(&mut server), LIMIT_BYTES),
            "client" => (Some(&mut client), LIMIT_BYTES),
            other => {
                return Err(PageError::BadRequest(format!(
                    "The form has no field {other:?}."
                )))
            }
        };
        match (read_limited(field, limit).await, slot) {
            (Ok(bytes), Some(slot)) => *slot = bytes,
            (Ok(bytes), None) => name = String::from_utf8_lossy(&bytes).trim().to_string(),
            (Err(e), _) => errors.push((if field_name == "name" { "name" } else { "form" }, e)),
        }
    }
    let dir = served.programs.clone();
    let (given, errors) = blocking(move || {
        let outcome = if errors.is_empty() {
            register(&dir, &name, &server, &client)
        } else {
            Err(errors)
        };
        Ok((name, outcome.err().map(|e| (e, registered(&dir)))))
    })
    .await?;
    match errors {
        None => Ok((
            StatusCode::SEE_OTHER,
            [(header::LOCATION, "/programs".to_string())],
        )
            .into_response()),
        Some((errors, all)) => {
            let body = programs_page(&all, &given, &errors);
            Ok((StatusCode::BAD_REQUEST, Html(page("Programs", &body))).into_response())
        }
    }
}

/// The list of `all` and the registering form (`name` as given, `errors` beside the
/// fields).
fn programs_page(all: &[Registered], name: &str, errors: &FieldErrors) -> String {
    let beside = |field: &str| messages_beside(errors, field, &format!("program-{field}"));
    let mut s = String::from(
        "<h1>User programs</h1>\n<p class=\"note\">A program is a pair of shell scripts that \
         the testbed runs like a circuit, over every transport and condition of an experiment \
         (scheme <code>program</code> in its table), timed from the client's start until both \
         have exited. Each runs with <code>sh</code>, as this server's user, inside the \
         emulated link's network namespaces: <code>NAME-server.sh</code> in A, \
         <code>NAME-client.sh</code> in B. Arguments: <code>$1</code> the peer's address and \
         <code>$2</code> its own (IP:PORT; the server listens on <code>$2</code>, the client \
         connects to <code>$1</code>), <code>$3</code> the transport; \
         <code>$TRANSPUTATION</code> is this binary and <code>$TPB_PARTY_FLAGS</code> the \
         session protection's flags. The client starts when the server prints \
         <code>listening on</code> on standard error, or after a second.</p>\n",
    );
    if all.is_empty() {
        s.push_str(&para("No program is registered yet."));
    } else {
        let headers: Vec<String> = ["program", "server", "client"].map(String::from).into();
        let rows: Vec<Vec<String>> = all
            .iter()
            .map(|p| {
                let script = |text: &str| {
                    format!(
                        "<details><summary>{} lines</summary><pre>{}</pre></details>",
                        text.lines().count(),
                        escape(text)
                    )
                };
                vec![escape(&p.name), script(&p.server), script(&p.client)]
            })
            .collect();
        s.push_str(&table("programs", &headers, &rows));
        s.push_str(
            "<p class=\"note\">Choose them under <q>programs</q> on the <a href=\"/run\">run \
             page</a>.</p>\n",
        );
    }
    let _ = write!(
        s,
        "<h2>Register a program</h2>\n{form_error}<form class=\"fields\" id=\"register\" \
         method=\"post\" action=\"/programs\" enctype=\"multipart/form-data\">\n\
         <div><label for=\"program-name\">name</label> <input id=\"program-name\" \
         name=\"name\" value=\"{name}\" size=\"20\"> <span class=\"note\">letters, digits, - \
         and _; not a built-in circuit's name</span>{name_error}</div>\n",
        form_error = beside("form"),
        name = escape(name),
        name_error = beside("name"),
    );
    for (field, suffix) in SIDES {
        let _ = writeln!(
            s,
            "<div><label for=\"program-{field}\">{field}</label> <input type=\"file\" \
             id=\"program-{field}\" name=\"{field}\"> <span class=\"note\">NAME{suffix}, at \
             most {} KiB, checked with <code>sh -n</code></span>{}</div>",
            LIMIT_BYTES >> 10,
            beside(field)
        );
    }
    s.push_str("<div><button id=\"register-program\">Register</button></div>\n</form>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVER: &[u8] = b"#!/bin/sh\nexec \"$TRANSPUTATION\" garbler --listen \"$2\"\n";
    const CLIENT: &[u8] = b"#!/bin/sh\nexec \"$TRANSPUTATION\" evaluator --connect \"$1\"\n";

    fn fields(e: &FieldErrors) -> Vec<&'static str> {
        e.iter().map(|(f, _)| *f).collect()
    }

    #[test]
    fn a_pair_is_kept_whole_under_its_name_and_never_given_other_scripts() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("programs");
        register(&at, "echo-1", SERVER, CLIENT).unwrap();
        assert_eq!(
            std::fs::read(at.join("echo-1/echo-1-server.sh")).unwrap(),
            SERVER
        );
        // The same pair again is accepted; other scripts under the name are not.
        register(&at, "echo-1", SERVER, CLIENT).unwrap();
        let e = register(&at, "echo-1", SERVER, SERVER).unwrap_err();
        assert_eq!(fields(&e), ["name"]);
        assert!(e[0].1.contains("registered with other scripts"), "{e:?}");
        let all = registered(&at);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].client.as_bytes(), CLIENT);
        assert_eq!(
            stored_dir(&at, "echo-1").unwrap(),
            at.join("echo-1").to_str().unwrap()
        );
        assert!(stored_dir(&at, "other")
            .unwrap_err()
            .contains("no program named 'other'"));
        // Nothing but the one program's directory is left behind.
        let names: Vec<_> = std::fs::read_dir(&at)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["echo-1"]);
    }

    #[test]
    fn each_bad_part_is_answered_beside_its_field() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().join("programs");
        for bad in ["", "../x", "-x", "a b", "aes128", &"x".repeat(MAX_NAME + 1)] {
            let e = register(&at, bad, SERVER, CLIENT).unwrap_err();
            assert_eq!(fields(&e), ["name"], "{bad:?}: {e:?}");
            assert!(stored_dir(&at, bad).is_err(), "{bad:?}");
        }
        let broken = b"#!/bin/sh\nif true; then\n  echo x\n";
        let e = register(&at, "p", broken, b"").unwrap_err();
        assert_eq!(fields(&e), ["server", "client"], "{e:?}");
        assert!(
            e[0].1.starts_with("p-server.sh: sh -n refuses it: line 4:"),
            "{}",
            e[0].1
        );
        assert_eq!(e[1].1, "p-client.sh is empty");
        let e = register(&at, "p", b"echo \xff\n", CLIENT).unwrap_err();
        assert!(e[0].1.contains("not a text file"), "{e:?}");
        assert!(!at.exists(), "nothing is stored for a refused pair");
    }
}
