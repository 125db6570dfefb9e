//! The web UI in a real browser: headless Chromium, driven over WebDriver by a chromedriver
//! this test starts, against `transputation serve`. It composes an experiment on `/run`
//! (aes128, ideal, tcp and tcp-bbr, `eu-us`, two runs), starts it, watches the job's page
//! move its progress as the page's script reads the server-sent events, then reads the
//! report: a column per transport, a plot the browser loaded, the CSV behind its link.
//! Last, a bad rate is answered beside its field. The condition is `eu-us` (110 ms), not
//! `lan`, so that each run takes longer than the events' poll: on `lan` all the runs may
//! land between two polls, and the page then never moves before its reload.
//!
//! With `TRANSPUTATION_SCREENSHOTS=DIR` it also saves screenshots of the main views in DIR
//! (a second experiment is run then, for the comparison): docs/screenshots/ is made so.
//!
//! Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2 for the emulated link, and
//! `chromium` and `chromedriver`; without them it says why and passes without running,
//! unless `TRANSPUTATION_REQUIRE_BROWSER=1`, with which a missing browser fails it.

mod common;

use std::future::Future;
use std::os::unix::process::CommandExt as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::web::{temp_db, Form, Server};
use fantoccini::wd::TimeoutConfiguration;
use fantoccini::{Client, ClientBuilder, Locator};
use serde_json::{json, Value};
use transputation_experiments::db::Db;

/// Set to 1, a missing browser fails the test instead of skipping it.
const REQUIRE: &str = "TRANSPUTATION_REQUIRE_BROWSER";

/// A directory to save screenshots in.
const SCREENSHOTS: &str = "TRANSPUTATION_SCREENSHOTS";

/// The longest one WebDriver command (or a page's load) may take.
const STEP: Duration = Duration::from_secs(60);

/// The longest an experiment of the test may take, from its start to its report.
const EXPERIMENT: Duration = Duration::from_secs(300);

/// The browser's viewport, as the screenshots show it.
const WINDOW: (u32, u32) = (1280, 900);

/// The programs this test drives, or why it cannot.
fn browser() -> Result<(PathBuf, PathBuf), String> {
    let find = |names: &[&str]| {
        names.iter().find_map(|name| {
            std::env::split_paths(&std::env::var_os("PATH")?)
                .map(|dir| dir.join(name))
                .find(|p| p.is_file())
        })
    };
    let chromium = find(&["chromium", "chromium-browser", "google-chrome"])
        .ok_or("no chromium on PATH (Debian: apt-get install chromium)")?;
    let driver = find(&["chromedriver"])
        .ok_or("no chromedriver on PATH (Debian: apt-get install chromium-driver)")?;
    Ok((chromium, driver))
}

/// `chromedriver` on a free port of 127.0.0.1, in a process group of its own that the
/// browsers it starts join; the group is killed when this is dropped, so that neither
/// outlives the test, and its temporary files (the profile among them) are in a directory
/// removed then.
struct Driver {
    child: Child,
    url: String,
    chromium: PathBuf,
    tmp: tempfile::TempDir,
}

impl Driver {
    fn start(chromium: PathBuf, chromedriver: &Path) -> Driver {
        let tmp = tempfile::tempdir().unwrap();
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(chromedriver)
            .arg(format!("--port={port}"))
            .env("TMPDIR", tmp.path())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .expect("chromedriver starts");
        let driver = Driver {
            child,
            url: format!("http://127.0.0.1:{port}"),
            chromium,
            tmp,
        };
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .proxy(None)
            .timeout_global(Some(Duration::from_secs(5)))
            .build()
            .into();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ready = agent
                .get(format!("{}/status", driver.url))
                .call()
                .ok()
                .and_then(|mut r| r.body_mut().read_to_string().ok())
                .and_then(|body| serde_json::from_str::<Value>(&body).ok())
                .is_some_and(|v| v["value"]["ready"] == true);
            if ready {
                return driver;
            }
            assert!(
                Instant::now() < deadline,
                "chromedriver is not ready after 30 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A headless browser of a window of [`WINDOW`]'s size, which reaches nothing but
    /// 127.0.0.1.
    async fn browse(&self) -> Client {
        let profile = self.tmp.path().join("profile");
        let args = [
            "--headless=new".to_string(),
            // As root, Chromium runs only without its sandbox.
            "--no-sandbox".into(),
            "--disable-gpu".into(),
            "--disable-dev-shm-usage".into(),
            format!("--window-size={},{}", WINDOW.0, WINDOW.1),
            "--force-device-scale-factor=1".into(),
            "--hide-scrollbars".into(),
            "--no-proxy-server".into(),
            "--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1".into(),
            "--disable-background-networking".into(),
            "--disable-component-update".into(),
            "--disable-sync".into(),
            "--no-first-run".into(),
            "--lang=en-US".into(),
            format!("--user-data-dir={}", profile.display()),
        ];
        let mut caps = serde_json::Map::new();
        caps.insert(
            "goog:chromeOptions".into(),
            json!({ "binary": self.chromium, "args": args }),
        );
        let connector = hyper_util::client::legacy::connect::HttpConnector::new();
        let client = within(
            "starting the browser",
            ClientBuilder::new(connector)
                .capabilities(caps)
                .connect(&self.url),
        )
        .await;
        let timeouts = TimeoutConfiguration::new(Some(STEP), Some(STEP), Some(Duration::ZERO));
        within("setting timeouts", client.update_timeouts(timeouts)).await;
        viewport(&client, WINDOW.0, WINDOW.1).await;
        client
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.child.id() as i32) {
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
        let _ = self.child.wait();
    }
}

/// What `f` gives, within [`STEP`]; its error or the time running out fails the test.
async fn within<T, E: std::fmt::Debug>(what: &str, f: impl Future<Output = Result<T, E>>) -> T {
    match tokio::time::timeout(STEP, f).await {
        Ok(Ok(v)) => v,
        Ok(Err(e)) => panic!("{what}: {e:?}"),
        Err(_) => panic!("{what}: no answer within {STEP:?}"),
    }
}

/// Asks `check` every 100 ms until it gives something, at most `limit`.
async fn until<T>(what: &str, limit: Duration, mut check: impl AsyncFnMut() -> Option<T>) -> T {
    let deadline = Instant::now() + limit;
    loop {
        if let Some(v) = check().await {
            return v;
        }
        assert!(Instant::now() < deadline, "{what}: not within {limit:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs `script` in the page and gives its value.
async fn js(client: &Client, script: &str) -> Value {
    within(script, client.execute(script, Vec::new())).await
}

/// Where screenshots go, if they are asked for.
fn screenshots() -> Option<PathBuf> {
    let dir = PathBuf::from(std::env::var_os(SCREENSHOTS)?);
    std::fs::create_dir_all(&dir).unwrap();
    Some(dir)
}

/// Makes the page's viewport `width` × `height` (the window is larger by its frame).
async fn viewport(client: &Client, width: u32, height: u32) {
    let frame = js(
        client,
        "return [window.outerWidth - window.innerWidth, window.outerHeight - window.innerHeight];",
    )
    .await;
    let frame = |i: usize| frame[i].as_u64().unwrap_or(0) as u32;
    within(
        "resizing the window",
        client.set_window_size(width + frame(0), height + frame(1)),
    )
    .await;
}

/// Saves the page as `NAME.png` in `dir`: the viewport of [`WINDOW`]'s size, or with
/// `whole` the page as tall as it is (at most 2400 px).
async fn shoot(client: &Client, dir: Option<&Path>, name: &str, whole: bool) {
    let Some(dir) = dir else {
        return;
    };
    if whole {
        let height = js(client, "return document.documentElement.scrollHeight;").await;
        let height = height.as_u64().unwrap_or(0).clamp(WINDOW.1.into(), 2400) as u32;
        viewport(client, WINDOW.0, height).await;
    }
    let png = within("a screenshot", client.screenshot()).await;
    if whole {
        viewport(client, WINDOW.0, WINDOW.1).await;
    }
    let path = dir.join(format!("{name}.png"));
    std::fs::write(&path, png).unwrap();
    eprintln!("saved {}", path.display());
}

#[test]
fn an_experiment_composed_in_the_browser_runs_to_its_report_and_plot() {
    if let Some(why) = common::netns_missing() {
        eprintln!("skipping the browser test: {why}");
        return;
    }
    let (chromium, chromedriver) = match browser() {
        Ok(found) => found,
        Err(why) if std::env::var(REQUIRE).as_deref() == Ok("1") => {
            panic!("{REQUIRE}=1, and the browser is missing: {why}")
        }
        Err(why) => {
            eprintln!("skipping the browser test: {why} (set {REQUIRE}=1 to fail instead)");
            return;
        }
    };
    let started = Instant::now();
    let (_dir, db) = temp_db();
    Db::open(&db).unwrap();
    let server = Server::start(&db, &[]);
    let driver = Driver::start(chromium, &chromedriver);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let shots = screenshots();
    runtime.block_on(async {
        let client = driver.browse().await;
        drive(&client, &server, shots.as_deref()).await;
        within("closing the browser", client.close()).await;
    });
    eprintln!(
        "the browser test took {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// The whole visit: compose, watch, read the report, then a bad rate; and the other
/// views' screenshots, if asked for.
async fn drive(client: &Client, server: &Server, shots: Option<&Path>) {
    compose(client, server, shots).await;
    let id = watch(client, shots).await;
    shoot(client, shots, "job-finished", true).await;
    report(client, server, id, shots).await;
    bad_rate(client, server, shots).await;
    if shots.is_some() {
        other_views(client, server, id, shots).await;
    }
}

/// Fills `/run`'s form as a person would and starts it; the browser lands on the job's
/// page.
async fn compose(client: &Client, server: &Server, shots: Option<&Path>) {
    within("opening /run", client.goto(&format!("{}/run", server.base))).await;
    for (field, value) in [
        ("name", "browser"),
        ("circuits", "aes128"),
        ("transports", "tcp;tcp-bbr"),
        ("runs", "2"),
        ("timeout", "120"),
    ] {
        let input = within(field, client.find(Locator::Id(field))).await;
        within(field, input.clear()).await;
        within(field, input.send_keys(value)).await;
    }
    for (name, keep) in [("schemes", "ideal"), ("conditions", "eu-us")] {
        let boxes = within(
            name,
            client.find_all(Locator::Css(&format!("input[name=\"{name}\"]"))),
        )
        .await;
        assert!(boxes.len() > 1, "{name}: {} checkboxes", boxes.len());
        for b in boxes {
            let value = within(name, b.attr("value")).await.unwrap_or_default();
            if within(name, b.is_selected()).await != (value == keep) {
                within(name, b.click()).await;
            }
        }
    }
    shoot(client, shots, "compose", true).await;
    let start = within("the start button", client.find(Locator::Id("start"))).await;
    within("starting", start.click()).await;
    let deadline = Instant::now() + STEP;
    loop {
        let url = within("the address", client.current_url()).await;
        if url.path().starts_with("/jobs/") {
            return;
        }
        if Instant::now() > deadline {
            let text = js(client, "return document.body.innerText;").await;
            panic!(
                "still at {url} after {STEP:?}: {}",
                text.as_str().unwrap_or("")
            );
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The progress as the page shows it at one look.
#[derive(Debug, Clone, PartialEq)]
struct Look {
    /// A token the page got at its first look: the same as long as it was not reloaded.
    page: f64,
    state: String,
    /// The bar's value and maximum, and its sentence; none before the experiment is known.
    value: Option<f64>,
    max: Option<f64>,
    text: String,
    /// Rows of the runs' table.
    runs: u64,
    /// Changes of the bar's value, its sentence and the runs' table on this page so far,
    /// as a `MutationObserver` saw them: only the page's script makes them.
    moved: [u64; 3],
}

impl Look {
    /// The look of [`LOOK`]'s answer.
    fn of(v: &Value) -> Look {
        Look {
            page: v["page"].as_f64().unwrap_or(0.0),
            state: v["state"].as_str().unwrap_or("").into(),
            value: v["value"].as_f64(),
            max: v["max"].as_f64(),
            text: v["text"].as_str().unwrap_or("").into(),
            runs: v["runs"].as_u64().unwrap_or(0),
            moved: [0, 1, 2].map(|i| v["moved"][i].as_u64().unwrap_or(0)),
        }
    }
}

/// The script that reads a [`Look`] of the page; at its first look on a page it gives the
/// page a token and starts counting the changes of the bar's value (those that change
/// it), of its sentence and of the runs' table.
const LOOK: &str = "
    const bar = document.getElementById('progress');
    const text = document.getElementById('progress-text');
    const runs = document.querySelector('#runs tbody');
    const state = document.getElementById('job-state');
    if (!window.transputationPage) {
        window.transputationPage = Math.random() + 1;
        const moved = window.transputationMoved = [0, 0, 0];
        const count = (node, i, options, changed) => node && new MutationObserver(
            records => { moved[i] += records.filter(changed).length; }).observe(node, options);
        count(bar, 0, { attributes: true, attributeFilter: ['value'], attributeOldValue: true },
              r => r.oldValue !== r.target.getAttribute('value'));
        count(text, 1, { childList: true, characterData: true, subtree: true }, r => true);
        count(runs, 2, { childList: true }, r => r.addedNodes.length > 0);
    }
    return {
        page: window.transputationPage,
        state: state ? state.getAttribute('data-state') : '',
        value: bar ? bar.value : null,
        max: bar ? bar.max : null,
        text: text ? text.textContent : '',
        runs: document.querySelectorAll('#runs tbody tr').length,
        moved: window.transputationMoved,
    };";

/// Reads the job's page every 100 ms until the job is over, checking that its progress
/// moves forward and that the page's script moves it in place (no reload); gives the
/// experiment's id.
async fn watch(client: &Client, shots: Option<&Path>) -> i64 {
    let (mut looks, mut shot) = (Vec::<Look>::new(), false);
    let deadline = Instant::now() + EXPERIMENT;
    loop {
        assert!(Instant::now() < deadline, "not over in time: {looks:#?}");
        // A look during a reload finds no document yet: look again.
        let Ok(Ok(v)) = tokio::time::timeout(STEP, client.execute(LOOK, Vec::new())).await else {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let look = Look::of(&v);
        if looks.last() != Some(&look) {
            eprintln!("{look:?}");
            looks.push(look.clone());
        }
        if !shot && look.value.is_some_and(|v| v > 0.0 && Some(v) < look.max) {
            shoot(client, shots, "job-running", false).await;
            shot = true;
        }
        if ["ended", "failed", "cancelled"].contains(&look.state.as_str()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    // The script reloads the page once the job is over: the server's page has the report
    // and no script.
    let last = until("the finished job's page", STEP, async || {
        let v = client.execute(LOOK, Vec::new()).await.ok()?;
        let over = client
            .find(Locator::Css("table[id^='report-']"))
            .await
            .is_ok();
        let look = Look::of(&v);
        (over && look.state != "running").then_some(look)
    })
    .await;
    eprintln!("{last:?}");
    looks.push(last.clone());
    assert_eq!(last.state, "ended", "{looks:#?}");
    assert_eq!((last.value, last.max), (Some(4.0), Some(4.0)), "{looks:#?}");
    assert!(last.text.starts_with("4 of 4 runs recorded"), "{last:?}");
    assert_eq!(last.runs, 4, "{last:?}");
    let values: Vec<f64> = looks.iter().filter_map(|l| l.value).collect();
    assert!(values.windows(2).all(|w| w[0] <= w[1]), "{looks:#?}");
    assert!(
        values.first() < values.last(),
        "the bar never moved: {looks:#?}"
    );
    // The script's work: on one page, not reloaded, the bar, its sentence and the runs'
    // table moved.
    let moved_in_place = looks.iter().any(|l| l.moved.iter().all(|&n| n > 0));
    assert!(moved_in_place, "the script moved nothing: {looks:#?}");
    let href = js(
        client,
        "return document.querySelector('#experiment a').getAttribute('href');",
    )
    .await;
    let href = href.as_str().unwrap_or_default();
    href.strip_prefix("/experiments/")
        .and_then(|id| id.parse().ok())
        .unwrap_or_else(|| panic!("the experiment's link: {href:?}"))
}

/// The report the finished job's page shows: a column per transport in its table, the
/// plot loaded, and the CSV of its link with a line per transport.
async fn report(client: &Client, server: &Server, id: i64, shots: Option<&Path>) {
    let table = js(
        client,
        &format!(
            "const t = document.getElementById('report-{id}');
             return t && {{
                 headers: Array.from(t.querySelectorAll('thead th'), h => h.textContent),
                 rows: Array.from(t.querySelectorAll('tbody tr'),
                     r => Array.from(r.cells, c => c.textContent)),
             }};"
        ),
    )
    .await;
    let headers: Vec<&str> = table["headers"]
        .as_array()
        .unwrap_or_else(|| panic!("no report table: {table}"))
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let rows = table["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 1, "aes128, ideal, eu-us: {table}");
    for transport in ["tcp", "tcp-bbr"] {
        let col = headers.iter().position(|h| *h == transport);
        let col = col.unwrap_or_else(|| panic!("no column {transport}: {table}"));
        let cell = rows[0][col].as_str().unwrap();
        assert!(cell.contains(" ± "), "{transport}: {cell:?}");
    }
    // The plot of the one condition, drawn by the browser from its SVG.
    const PLOTS: &str = "return Array.from(document.querySelectorAll('img.plot'),
        i => [i.getAttribute('src'), i.complete, i.naturalWidth, i.naturalHeight]);";
    let plots = until("the plot's loading", STEP, async || {
        let plots = js(client, PLOTS).await;
        let all = plots.as_array()?;
        (!all.is_empty() && all.iter().all(|p| p[1] == true)).then_some(plots)
    })
    .await;
    let plots = plots.as_array().unwrap();
    assert_eq!(plots.len(), 1, "{plots:?}");
    let src = plots[0][0].as_str().unwrap();
    assert_eq!(
        src,
        format!("/experiments/{id}/plots/aes128-time-by-transport.svg")
    );
    assert!(
        plots[0][2].as_u64() > Some(0) && plots[0][3].as_u64() > Some(0),
        "{plots:?}"
    );
    let svg = server.get(src).ok();
    assert!(svg.contains(">tcp-bbr / ideal<"), "{svg}");

    let link = within("the CSV link", client.find(Locator::Css("a.csv"))).await;
    let href = within("the CSV link", link.attr("href")).await.unwrap();
    assert_eq!(href, format!("/experiments/{id}.csv"));
    let csv = server.get(&href).ok();
    let lines: Vec<Vec<&str>> = csv.lines().map(|l| l.split(',').collect()).collect();
    let col = |name: &str| lines[0].iter().position(|h| *h == name).unwrap();
    assert_eq!(lines.len(), 3, "{csv}");
    let mut transports: Vec<&str> = lines[1..].iter().map(|l| l[col("transport")]).collect();
    transports.sort_unstable();
    assert_eq!(transports, ["tcp", "tcp-bbr"], "{csv}");
    for l in &lines[1..] {
        assert_eq!((l[col("runs")], l[col("ok")]), ("2", "2"), "{csv}");
        assert!(l[col("mean_ms")].parse::<f64>().unwrap() > 0.0, "{csv}");
    }
    within(
        "the experiment's page",
        client.goto(&format!("{}/experiments/{id}", server.base)),
    )
    .await;
    shoot(client, shots, "experiment-report", true).await;
}

/// `/run` with a rate of `fast`: the form comes back with the message beside the field,
/// and the value as given.
async fn bad_rate(client: &Client, server: &Server, shots: Option<&Path>) {
    within("opening /run", client.goto(&format!("{}/run", server.base))).await;
    let rate = within("the rate", client.find(Locator::Id("rate"))).await;
    within("the rate", rate.send_keys("fast")).await;
    let start = within("the start button", client.find(Locator::Id("start"))).await;
    within("starting", start.click()).await;
    let message = until("the rate's message", STEP, async || {
        client.find(Locator::Id("rate-error")).await.ok()
    })
    .await;
    let text = within("the message", message.text()).await;
    assert!(text.starts_with("bad rate \"fast\""), "{text}");
    assert!(within("the message", message.is_displayed()).await);
    let beside = js(
        client,
        "const field = document.getElementById('rate');
         const message = document.getElementById('rate-error');
         const f = field.getBoundingClientRect(), m = message.getBoundingClientRect();
         return {
             same_row: field.parentElement === message.parentElement,
             after: m.left >= f.right,
             overlap: m.top < f.bottom && f.top < m.bottom,
             value: field.value,
             errors: document.querySelectorAll('.error').length,
         };",
    )
    .await;
    assert_eq!(
        beside,
        json!({ "same_row": true, "after": true, "overlap": true, "value": "fast", "errors": 1 }),
        "beside the rate field, and the only message"
    );
    shoot(client, shots, "compose-error", false).await;
    // Nothing was started: the one job is the experiment's.
    let list = server.get("/run").ok();
    assert!(!list.contains("/jobs/2"), "{list}");
}

/// The views the test does not check: the list, a simulation and a comparison (of a
/// second experiment, run for it over HTTP), for the screenshots alone.
async fn other_views(client: &Client, server: &Server, id: i64, shots: Option<&Path>) {
    within(
        "simulating",
        client.goto(&format!(
            "{}/simulate?rtt=100ms&rate=100mbit&loss=0.1%25&circuit=aes128&scheme=ideal",
            server.base
        )),
    )
    .await;
    within("the prediction", client.find(Locator::Id("prediction"))).await;
    shoot(client, shots, "simulate", true).await;
    let second = Form::of(&[
        ("name", "browser-lan"),
        ("circuits", "aes128"),
        ("schemes", "ideal"),
        ("transports", "tcp;tcp-bbr"),
        ("conditions", "lan"),
        ("runs", "2"),
        ("timeout", "120"),
    ]);
    let started = server.submit("/run", &second);
    assert_eq!(started.status, 303, "{}", started.text());
    let job = started.location.clone();
    until("the second experiment", EXPERIMENT, async || {
        let page = server.get(&job).ok();
        page.contains("data-state=\"ended\"").then_some(())
    })
    .await;
    within("the list", client.goto(&format!("{}/", server.base))).await;
    shoot(client, shots, "experiments", false).await;
    let other = id + 1;
    within(
        "comparing",
        client.goto(&format!("{}/compare?a={id}&b={other}", server.base)),
    )
    .await;
    shoot(client, shots, "compare", true).await;
}
