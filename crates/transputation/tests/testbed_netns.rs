//! The testbed's emulated links, measured: the UDP probe (`transputation-probe`) across two
//! namespaces built by `transputation-netlab` checks the round trip (within 5 % + 0.3 ms),
//! the loss (within binomial bounds at 1e-6) and the rate (within 10 %) for the backend this machine has
//! (netem where the kernel has it, else the userspace relay), the cleanup: after a drop,
//! a panic, Ctrl-C (SIGINT) and a SIGKILL followed by the next start, and the hosts' TCP
//! congestion control: cubic unless `--host-cc` asks for another or `system`, a clear error
//! for one the kernel lacks, and this machine's allowed list left as it was.
//!
//! Needs root (or CAP_NET_ADMIN + CAP_SYS_ADMIN) and iproute2; without them each test says so
//! on stderr and passes without measuring. Rates stay at or below 500 Mbit/s so that a
//! 2-core CI machine measures the link, not its own load; the tests take turns.

mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use transputation_netlab::spec::Queue;
use transputation_netlab::verify::{check, measure, train_len};
use transputation_netlab::{ns, HostCc, LinkSpec, Options, Side, Topology};

/// The tests measure timing: one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn exe() -> &'static Path {
    Path::new(env!("CARGO_BIN_EXE_transputation"))
}

macro_rules! require_root {
    () => {
        if let Some(why) = common::netns_missing() {
            eprintln!("skipping the testbed network test: {why}");
            return;
        }
    };
}

fn lock() -> std::sync::MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

/// Builds the link, measures it and asserts every verdict. The queues are made to hold a
/// 2000-packet train, so that the rate is measured over milliseconds of arrivals, not over
/// a few hundred microseconds that one descheduling of the prober could distort.
fn verify(mut spec: LinkSpec, max_rate_bps: Option<u64>) {
    for d in [&mut spec.a_to_b, &mut spec.b_to_a] {
        if let Queue::Time(_) = d.queue {
            d.queue = Queue::Bytes(2100 * 1228);
        }
    }
    let opts = Options {
        max_rate_bps,
        ..Options::default()
    };
    let topo = Topology::with_options(&spec, opts).expect("building the topology");
    let train = train_len(&topo, 2000);
    // A measurement is timing: a prober descheduled by another process at the wrong moment
    // can misread one train. One retry on the same link; a link that is really off fails
    // both.
    let mut attempt = 0;
    loop {
        attempt += 1;
        let m = measure(&topo, 20, train, Duration::from_secs(30)).expect("probing");
        let verdicts = check(&topo, &m);
        let report = format!(
            "{} via {} (attempt {attempt}): {m:?}, {verdicts:?}, stats {:?}",
            spec.name,
            topo.summary().emulator,
            topo.stats()
        );
        eprintln!("{report}");
        match verdicts.iter().find(|v| !v.pass) {
            None => return,
            Some(v) if attempt == 2 => panic!("{} out of range: {report}", v.what),
            Some(_) => {}
        }
    }
}

#[test]
fn named_conditions_deliver_their_round_trip_and_rate() {
    require_root!();
    let _g = lock();
    verify(LinkSpec::condition("cw-wifi").unwrap(), None);
    // The paper's LAN, capped to 300 Mbit/s: 0.5 ms ± 0.325 ms. (At 500 Mbit/s the rate
    // passed 4 of 5 runs while builds competed for the two cores; 300 Mbit/s keeps it solid.)
    verify(LinkSpec::condition("lan").unwrap(), Some(300_000_000));
    verify(LinkSpec::condition("eu-us").unwrap(), Some(200_000_000));
}

#[test]
fn a_custom_link_delivers_its_rate_and_loss() {
    require_root!();
    let _g = lock();
    verify(
        LinkSpec::parse_custom(Some("40ms"), Some("200mbit"), None, None, None).unwrap(),
        None,
    );
    // 1 % loss over a 2000-packet train; a queue that holds the whole train, so that
    // every missing packet is random loss.
    let lossy = LinkSpec::parse_custom(
        Some("20ms"),
        Some("100mbit"),
        Some("1%"),
        Some("0.2ms"),
        Some("4mb"),
    )
    .unwrap();
    verify(lossy, None);
}

fn our_namespaces(pid: u32) -> Vec<String> {
    let prefix = format!("{}{pid}-", ns::PREFIX);
    ns::list()
        .into_iter()
        .filter(|n| n.starts_with(&prefix))
        .collect()
}

#[test]
fn drop_and_panic_leave_nothing_behind() {
    require_root!();
    let _g = lock();
    let me = std::process::id();
    let spec = LinkSpec::parse_custom(Some("2ms"), Some("10mbit"), None, None, None).unwrap();
    let topo = Topology::new(&spec).unwrap();
    let names: Vec<String> = [Side::A, Side::B]
        .iter()
        .map(|&s| topo.namespace(s).to_string())
        .collect();
    for n in &names {
        assert!(our_namespaces(me).contains(n), "{n} was not created");
    }
    // A process left running in a namespace is ended with it.
    let mut child = topo.command(Side::B, "sleep").arg("30").spawn().unwrap();
    drop(topo);
    assert!(our_namespaces(me).is_empty(), "{:?}", our_namespaces(me));
    let waited = Instant::now();
    child.wait().unwrap();
    assert!(waited.elapsed() < Duration::from_secs(5));

    let spec2 = spec.clone();
    let panicked = std::thread::spawn(move || {
        let _topo = Topology::new(&spec2).unwrap();
        panic!("a party failed");
    })
    .join();
    assert!(panicked.is_err());
    assert!(our_namespaces(me).is_empty(), "{:?}", our_namespaces(me));
}

/// A pid that no process has (a child that has been reaped).
fn dead_pid() -> u32 {
    let mut c = Command::new("true").spawn().unwrap();
    let pid = c.id();
    c.wait().unwrap();
    pid
}

#[test]
fn leftovers_of_dead_runs_are_removed_and_nothing_else() {
    require_root!();
    let _g = lock();
    let dead = format!("{}{}-0-a", ns::PREFIX, dead_pid());
    // Pid 1 is always alive: its namespace must stay. So must a name of another shape.
    let alive = format!("{}1-999-b", ns::PREFIX);
    let foreign = format!("{}notours", ns::PREFIX);
    for n in [&dead, &alive, &foreign] {
        let out = Command::new("ip")
            .args(["netns", "add", n])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let spec = LinkSpec::parse_custom(Some("1ms"), None, None, None, None).unwrap();
    let topo = Topology::new(&spec).unwrap();
    let now = ns::list();
    for n in [&alive, &foreign] {
        let _ = Command::new("ip").args(["netns", "del", n]).output();
    }
    drop(topo);
    assert!(!now.contains(&dead), "{dead} survived: {now:?}");
    assert!(now.contains(&alive) && now.contains(&foreign), "{now:?}");
}

/// Starts `transputation testbed exec` with a long-running party and waits until its
/// namespaces exist.
fn start_exec() -> (std::process::Child, u32) {
    let child = Command::new(exe())
        .args([
            "testbed", "exec", "--rtt", "10ms", "--a", "sleep 30", "--b", "sleep 30",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let start = Instant::now();
    while our_namespaces(pid).len() < 2 {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "the testbed did not come up"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // Give it the moment to start the parties.
    std::thread::sleep(Duration::from_millis(300));
    (child, pid)
}

fn signal(pid: u32, sig: rustix::process::Signal) {
    let pid = rustix::process::Pid::from_raw(pid as i32).unwrap();
    rustix::process::kill_process(pid, sig).unwrap();
}

#[test]
fn ctrl_c_and_kill_leave_nothing_behind() {
    require_root!();
    let _g = lock();
    let (child, pid) = start_exec();
    signal(pid, rustix::process::Signal::INT);
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(130), "{out:?}");
    assert!(our_namespaces(pid).is_empty(), "{:?}", our_namespaces(pid));

    // SIGKILL cannot be handled: the namespaces stay until the next start removes them.
    let (mut child, pid) = start_exec();
    signal(pid, rustix::process::Signal::KILL);
    child.wait().unwrap();
    assert_eq!(our_namespaces(pid).len(), 2);
    let removed = ns::remove_stale();
    assert!(our_namespaces(pid).is_empty(), "{removed:?}");
    assert_eq!(removed.len(), 2, "{removed:?}");
}

/// A global sysctl of this machine (`net/ipv4/tcp_allowed_congestion_control`), trimmed.
fn host_sysctl(key: &str) -> String {
    std::fs::read_to_string(format!("/proc/sys/{key}"))
        .unwrap()
        .trim()
        .to_string()
}

/// `testbed exec` across a 1 ms link with `flags`, side A printing its namespace's default
/// TCP congestion control; its output and process id.
fn exec_reading_cc(flags: &[&str]) -> (std::process::Output, u32) {
    let mut args = vec!["testbed", "exec", "--rtt", "1ms"];
    args.extend_from_slice(flags);
    args.extend(["--a", "sysctl -n net.ipv4.tcp_congestion_control"]);
    let child = Command::new(exe())
        .args(&args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    (child.wait_with_output().unwrap(), pid)
}

#[test]
fn the_hosts_tcp_congestion_control_is_cubic_unless_asked_otherwise() {
    require_root!();
    let _g = lock();
    let allowed = host_sysctl("net/ipv4/tcp_allowed_congestion_control");
    let host_default = host_sysctl("net/ipv4/tcp_congestion_control");
    let available = host_sysctl("net/ipv4/tcp_available_congestion_control");
    let me = std::process::id();
    let spec = LinkSpec::parse_custom(Some("1ms"), None, None, None, None).unwrap();

    // The library: cubic in both namespaces, whatever this machine's default (bbr here, and
    // cubic restricted for namespaces on a kernel built with bbr as its default).
    let topo = Topology::new(&spec).unwrap();
    assert_eq!(topo.summary().host_cc, "cubic");
    for side in [Side::A, Side::B] {
        let out = topo
            .command(side, "sysctl")
            .args(["-n", "net.ipv4.tcp_congestion_control"])
            .output()
            .unwrap();
        assert_eq!(
            String::from_utf8_lossy(&out.stdout).trim(),
            "cubic",
            "{side}"
        );
    }
    drop(topo);
    // An algorithm the kernel restricts was allowed for the moment only.
    assert_eq!(
        host_sysctl("net/ipv4/tcp_allowed_congestion_control"),
        allowed
    );
    assert_eq!(host_sysctl("net/ipv4/tcp_congestion_control"), host_default);

    // Every algorithm the kernel has, restricted for namespaces or not.
    for cc in available.split_whitespace() {
        let opts = Options {
            host_cc: cc.parse().unwrap(),
            ..Options::default()
        };
        let topo = Topology::with_options(&spec, opts).unwrap();
        assert_eq!(topo.summary().host_cc, cc);
        drop(topo);
        assert_eq!(
            host_sysctl("net/ipv4/tcp_allowed_congestion_control"),
            allowed
        );
    }
    // `system`: what the namespaces inherit, this machine's default.
    let opts = Options {
        host_cc: HostCc::System,
        ..Options::default()
    };
    let topo = Topology::with_options(&spec, opts).unwrap();
    assert_eq!(topo.summary().host_cc, host_default);
    drop(topo);

    // The command line: inside namespace A, and in the summary line on stderr.
    for (flags, want) in [
        (&[][..], "cubic"),
        (&["--host-cc", "reno"][..], "reno"),
        (&["--host-cc", "system"][..], host_default.as_str()),
    ] {
        let (out, _) = exec_reading_cc(flags);
        let (stdout, stderr) = (
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr),
        );
        assert!(out.status.success(), "{flags:?}: {stderr}");
        assert_eq!(stdout.trim(), want, "{flags:?}: {stderr}");
        assert!(
            stderr.contains(&format!("hosts' TCP congestion control {want})")),
            "{flags:?}: {stderr}"
        );
    }

    // An algorithm the kernel does not have: a clear error, no fallback, nothing left.
    let (out, pid) = exec_reading_cc(&["--host-cc", "nosuchcc"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(our_namespaces(pid).is_empty(), "{:?}", our_namespaces(pid));
    assert!(out.stdout.is_empty(), "side A ran: {stderr}");
    assert!(
        stderr.contains("TCP congestion control `nosuchcc` for the emulated hosts: not available")
            && stderr.contains(&format!("(available: {available})")),
        "{stderr}"
    );
    // A name the kernel could not have is refused before any namespace exists.
    let (out, _) = exec_reading_cc(&["--host-cc", "CUBIC"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("bad TCP congestion control \"CUBIC\""),
        "{stderr}"
    );
    assert!(our_namespaces(me).is_empty(), "{:?}", our_namespaces(me));
    assert_eq!(
        host_sysctl("net/ipv4/tcp_allowed_congestion_control"),
        allowed
    );
}
