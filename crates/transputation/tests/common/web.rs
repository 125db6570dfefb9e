//! `transputation serve` for the web UI's tests: the server on 127.0.0.1 (or another
//! address), HTTP requests to it (forms as `multipart/form-data`, as a browser sends them),
//! its server-sent events, and the tables of its pages.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A server started on 127.0.0.1 (or another address), killed when dropped.
pub struct Server {
    child: Child,
    /// `http://127.0.0.1:PORT`, without the last `/`.
    pub base: String,
    /// Where the model's calibration would be: an empty directory, so that the server and
    /// `select` predict with the transports' defaults whatever the user has.
    pub config: tempfile::TempDir,
}

impl Server {
    /// `transputation serve --listen 127.0.0.1:0 --db DB` and `extra`.
    pub fn start(db: &Path, extra: &[&str]) -> Server {
        let mut args = vec!["--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()];
        args.extend_from_slice(extra);
        Server::start_with(&args)
    }

    /// `transputation serve ARGS`; waits for its `listening on http://ADDR/` line and
    /// reaches it through 127.0.0.1 at ADDR's port.
    pub fn start_with(args: &[&str]) -> Server {
        Server::spawn(super::bin(), args)
    }

    /// [`Server::start`] without the privileges a network namespace needs, whoever runs
    /// the test: as root (or with the capabilities), under `setpriv` with every
    /// capability dropped, so that an experiment it starts stops at `testbed run`'s check
    /// of privileges and builds no link. `None` (with a note) where that cannot be done.
    pub fn start_unprivileged(db: &Path, extra: &[&str]) -> Option<Server> {
        let mut args = vec!["--listen", "127.0.0.1:0", "--db", db.to_str().unwrap()];
        args.extend_from_slice(extra);
        Server::start_unprivileged_with(&args)
    }

    /// `transputation serve ARGS` as [`Server::start_unprivileged`] starts it.
    pub fn start_unprivileged_with(args: &[&str]) -> Option<Server> {
        if super::netns_missing().is_some() {
            return Some(Server::start_with(args));
        }
        let dropped = Command::new("setpriv")
            .args(["--bounding-set", "-all", "--inh-caps", "-all", "--", "true"])
            .status();
        if !dropped.is_ok_and(|s| s.success()) {
            eprintln!("skipping: running as root, and `setpriv` cannot drop the capabilities");
            return None;
        }
        let mut command = Command::new("setpriv");
        command
            .args(["--bounding-set", "-all", "--inh-caps", "-all", "--"])
            .arg(env!("CARGO_BIN_EXE_transputation"));
        Some(Server::spawn(command, args))
    }

    fn spawn(mut command: Command, args: &[&str]) -> Server {
        let config = tempfile::tempdir().unwrap();
        let mut child = command
            .arg("serve")
            .args(args)
            .env("XDG_CONFIG_HOME", config.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let (addr, err) = super::announced(&mut child, "listening on http://");
        let addr: std::net::SocketAddr = addr
            .strip_suffix('/')
            .unwrap_or_else(|| panic!("not an address and /: {addr:?}"))
            .parse()
            .unwrap();
        // Keep reading, so that the server never blocks on a full pipe.
        std::thread::spawn(move || for _ in err.lines().map_while(Result::ok) {});
        Server {
            child,
            base: format!("http://127.0.0.1:{}", addr.port()),
            config,
        }
    }

    fn agent() -> ureq::Agent {
        ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            .timeout_global(Some(Duration::from_secs(120)))
            .build()
            .into()
    }

    pub fn get(&self, path: &str) -> Answer {
        self.get_with(path, &[])
    }

    pub fn get_with(&self, path: &str, headers: &[(&str, &str)]) -> Answer {
        let mut request = Server::agent().get(format!("{}{path}", self.base));
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request.call().unwrap_or_else(|e| panic!("GET {path}: {e}"));
        Answer::of(response)
    }

    /// POSTs `form` to `path` as `multipart/form-data`, with `headers`.
    pub fn post_form(&self, path: &str, form: &Form, headers: &[(&str, &str)]) -> Answer {
        let mut request = Server::agent()
            .post(format!("{}{path}", self.base))
            .header("Content-Type", form.content_type());
        for (k, v) in headers {
            request = request.header(*k, *v);
        }
        let response = request
            .send(&form.body())
            .unwrap_or_else(|e| panic!("POST {path}: {e}"));
        Answer::of(response)
    }

    /// POSTs `form` as this server's own page does: with its `Origin`.
    pub fn submit(&self, path: &str, form: &Form) -> Answer {
        self.post_form(path, form, &[("Origin", self.base.as_str())])
    }

    /// The server-sent events of `path`, as (event, data) pairs, read on a thread of their
    /// own until the stream ends (the channel then closes).
    pub fn events(&self, path: &str) -> mpsc::Receiver<(String, String)> {
        let response = Server::agent()
            .get(format!("{}{path}", self.base))
            .call()
            .unwrap_or_else(|e| panic!("GET {path}: {e}"));
        assert_eq!(response.status().as_u16(), 200, "{path}");
        let content_type = response
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string());
        assert_eq!(content_type.as_deref(), Some("text/event-stream"));
        let (tx, rx) = mpsc::channel();
        let reader = BufReader::new(response.into_body().into_reader());
        std::thread::spawn(move || {
            let (mut event, mut data) = (String::new(), String::new());
            for line in reader.lines().map_while(Result::ok) {
                if let Some(e) = line.strip_prefix("event:") {
                    event = e.trim().to_string();
                } else if let Some(d) = line.strip_prefix("data:") {
                    data.push_str(d.strip_prefix(' ').unwrap_or(d));
                } else if line.is_empty() && !event.is_empty() {
                    let sent = (std::mem::take(&mut event), std::mem::take(&mut data));
                    if tx.send(sent).is_err() {
                        return;
                    }
                }
            }
        });
        rx
    }
}

impl Server {
    /// Job `id`'s page once its `data-state` is one of `states`, waiting at most `within`.
    pub fn job_page_when(&self, id: u64, states: &[&str], within: Duration) -> String {
        let deadline = std::time::Instant::now() + within;
        loop {
            let page = self.get(&format!("/jobs/{id}")).ok();
            if states
                .iter()
                .any(|s| page.contains(&format!("data-state=\"{s}\"")))
            {
                return page;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "job {id} is not {states:?}: {page}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }
}

/// The next of `events` ([`Server::events`]) as (name, JSON), waiting at most `within`.
pub fn next_event(
    events: &mpsc::Receiver<(String, String)>,
    within: Duration,
) -> (String, serde_json::Value) {
    let (event, data) = events
        .recv_timeout(within)
        .unwrap_or_else(|_| panic!("no event within {within:?}"));
    let value = serde_json::from_str(&data).unwrap_or_else(|_| panic!("{event}: {data}"));
    (event, value)
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// An HTTP answer.
pub struct Answer {
    pub status: u16,
    pub content_type: String,
    pub set_cookie: Vec<String>,
    pub location: String,
    pub csp: String,
    pub body: Vec<u8>,
}

impl Answer {
    fn of(mut response: ureq::http::Response<ureq::Body>) -> Answer {
        let header = |name: &str| {
            response
                .headers()
                .get_all(name)
                .iter()
                .map(|v| v.to_str().unwrap().to_string())
                .collect::<Vec<_>>()
        };
        let content_type = header("content-type").join(", ");
        let set_cookie = header("set-cookie");
        let location = header("location").join(", ");
        let csp = header("content-security-policy").join(", ");
        let body = response
            .body_mut()
            .with_config()
            .limit(256 << 20)
            .read_to_vec()
            .unwrap();
        Answer {
            status: response.status().as_u16(),
            content_type,
            set_cookie,
            location,
            csp,
            body,
        }
    }

    pub fn text(&self) -> String {
        String::from_utf8(self.body.clone()).unwrap()
    }

    /// The body of a 200 answer.
    pub fn ok(self) -> String {
        assert_eq!(self.status, 200, "{}", self.text());
        self.text()
    }
}

/// A form as a browser sends it: text fields and files, in order.
#[derive(Default, Clone)]
pub struct Form {
    parts: Vec<(String, Option<String>, Vec<u8>)>,
}

/// The boundary between a form's parts: no field of the tests holds it.
const BOUNDARY: &str = "----transputation-test-boundary-7f3a9c";

impl Form {
    /// A form with these text fields.
    pub fn of(fields: &[(&str, &str)]) -> Form {
        let mut f = Form::default();
        for (k, v) in fields {
            f = f.text(k, v);
        }
        f
    }

    pub fn text(mut self, name: &str, value: &str) -> Form {
        self.parts
            .push((name.into(), None, value.as_bytes().to_vec()));
        self
    }

    pub fn file(mut self, name: &str, file_name: &str, bytes: Vec<u8>) -> Form {
        self.parts
            .push((name.into(), Some(file_name.into()), bytes));
        self
    }

    fn content_type(&self) -> String {
        format!("multipart/form-data; boundary={BOUNDARY}")
    }

    fn body(&self) -> Vec<u8> {
        let mut body = Vec::new();
        for (name, file, bytes) in &self.parts {
            body.extend_from_slice(format!("--{BOUNDARY}\r\n").as_bytes());
            match file {
                Some(f) => body.extend_from_slice(
                    format!(
                        "Content-Disposition: form-data; name=\"{name}\"; filename=\"{f}\"\r\n\
                         Content-Type: application/octet-stream\r\n\r\n"
                    )
                    .as_bytes(),
                ),
                None => body.extend_from_slice(
                    format!("Content-Disposition: form-data; name=\"{name}\"\r\n\r\n").as_bytes(),
                ),
            }
            body.extend_from_slice(bytes);
            body.extend_from_slice(b"\r\n");
        }
        body.extend_from_slice(format!("--{BOUNDARY}--\r\n").as_bytes());
        body
    }
}

/// A temporary directory with `results.sqlite` in it.
pub fn temp_db() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("results.sqlite");
    (dir, path)
}

/// The rows of the table with this id in `html`, each as its cells' text.
pub fn table_rows(html: &str, id: &str) -> Vec<Vec<String>> {
    let start = html
        .find(&format!("<table id=\"{id}\">"))
        .unwrap_or_else(|| panic!("no table {id}: {html}"));
    let table = &html[start..start + html[start..].find("</table>").unwrap()];
    let body = &table[table.find("<tbody>").unwrap()..];
    body.split("<tr>")
        .skip(1)
        .map(|row| {
            row.split("<td>")
                .skip(1)
                .map(|c| c[..c.find("</td>").unwrap()].to_string())
                .collect()
        })
        .collect()
}

/// The header cells of the table with this id.
pub fn table_headers(html: &str, id: &str) -> Vec<String> {
    let start = html.find(&format!("<table id=\"{id}\">")).unwrap();
    let head = &html[start..start + html[start..].find("</thead>").unwrap()];
    head.split("<th>")
        .skip(1)
        .map(|c| c[..c.find("</th>").unwrap()].to_string())
        .collect()
}
