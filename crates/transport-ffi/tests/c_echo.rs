//! `examples/c/echo.c`, compiled with the system C compiler against the library cargo built
//! for this test run, as a server and a client over 127.0.0.1 for every transport, and
//! its error paths; plus the header included and linked from C++.
//!
//! Under `cargo test` the package's `cdylib` and `staticlib` are built, next to this test's
//! executable (`target/<profile>/deps/`), as dependencies of its integration tests.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdout, Command, Output, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Longest a server or client may run; a hang is a failure.
const DEADLINE: Duration = Duration::from_secs(30);

/// Where the library is: the directory of this test's executable.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().to_path_buf();
    for lib in ["libtransputation_ffi.so", "libtransputation_ffi.a"] {
        assert!(
            dir.join(lib).exists(),
            "{lib} is missing from {}: cargo builds it for this package's tests",
            dir.display()
        );
    }
    dir
}

fn crate_dir() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// The C compiler: $CC, else `cc`.
fn cc() -> String {
    std::env::var("CC").unwrap_or_else(|_| "cc".into())
}

fn run_compiler(cmd: &mut Command) {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The echo example, built once per test run: `(shared, static)` executables.
fn echo_binaries() -> &'static (PathBuf, PathBuf) {
    static BUILT: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    BUILT.get_or_init(|| {
        let lib = lib_dir();
        let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("transport-ffi-echo");
        std::fs::create_dir_all(&out).unwrap();
        let src = crate_dir().join("examples/c/echo.c");
        let include = crate_dir().join("include");
        let common = |cmd: &mut Command| {
            cmd.args([
                "-std=c99",
                "-O2",
                "-Wall",
                "-Wextra",
                "-pedantic",
                "-Werror",
                "-I",
            ])
            .arg(&include)
            .arg(&src);
        };
        let shared = out.join("echo");
        let mut cmd = Command::new(cc());
        common(&mut cmd);
        cmd.arg("-L")
            .arg(&lib)
            .arg("-ltransputation_ffi")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-o")
            .arg(&shared);
        run_compiler(&mut cmd);
        let stat = out.join("echo-static");
        let mut cmd = Command::new(cc());
        common(&mut cmd);
        // The same libraries as the Makefile: the UDT4 library and the C++ runtime the
        // `udt` transport's shim needs, then `rustc --print native-static-libs`.
        cmd.arg(lib.join("libtransputation_ffi.a"))
            .args([
                "-ludt",
                "-lstdc++",
                "-lgcc_s",
                "-lutil",
                "-lrt",
                "-lpthread",
                "-lm",
                "-ldl",
                "-lc",
            ])
            .arg("-o")
            .arg(&stat);
        run_compiler(&mut cmd);
        (shared, stat)
    })
}

/// Waits for `child` to exit, killing it (and failing) after [`DEADLINE`].
fn wait(mut child: Child, what: &str) -> Output {
    let start = Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            return child.wait_with_output().unwrap();
        }
        if start.elapsed() > DEADLINE {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "{what} still running after {DEADLINE:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A command running a program linked against this run's library: the loader is told to
/// look in [`lib_dir`] first, since a `libtransputation_ffi.so` of another build (one
/// `cargo build` put next to the target directory's binaries, with other features) would
/// otherwise win through the search path cargo sets for tests.
fn echo_command(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    cmd.env("LD_LIBRARY_PATH", lib_dir());
    cmd
}

/// A running echo server and the address it printed.
struct Server {
    child: Child,
    stdout: BufReader<ChildStdout>,
    addr: String,
}

impl Server {
    fn start(echo: &Path, transport: &str) -> Server {
        let mut child = echo_command(echo)
            .args(["server", transport, "127.0.0.1:0"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let Some(addr) = line.trim().strip_prefix("listening on ") else {
            let out = wait(child, "echo server");
            panic!(
                "the server printed {line:?}; stderr:\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        };
        assert!(
            addr.starts_with("127.0.0.1:") && !addr.ends_with(":0"),
            "{addr}"
        );
        Server {
            addr: addr.to_string(),
            child,
            stdout,
        }
    }

    /// Waits for the server to exit: its exit status, the rest of its stdout, its stderr.
    fn finish(mut self) -> (std::process::ExitStatus, String, String) {
        let mut rest = String::new();
        // Small output: reading to its end cannot block the child on a full pipe.
        self.stdout.read_to_string(&mut rest).unwrap();
        let out = wait(self.child, "echo server");
        (
            out.status,
            rest,
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

fn run_client(echo: &Path, transport: &str, addr: &str, messages: &[&str]) -> Output {
    let child = echo_command(echo)
        .args(["client", transport, addr])
        .args(messages)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    wait(child, "echo client")
}

/// `(messages, sent, received)` from a "who: N messages, sent S bytes, received R bytes"
/// line.
fn counts(output: &str, who: &str) -> (u64, u64, u64) {
    let line = output
        .lines()
        .find_map(|l| l.strip_prefix(&format!("{who}: ")))
        .unwrap_or_else(|| panic!("no '{who}:' line in {output:?}"));
    let n: Vec<u64> = line
        .split(|c: char| !c.is_ascii_digit())
        .filter(|s| !s.is_empty())
        .map(|s| s.parse().unwrap())
        .collect();
    assert_eq!(n.len(), 3, "{line}");
    (n[0], n[1], n[2])
}

/// One server and one client exchange `MESSAGES`; both succeed and agree on the bytes.
fn echo_round_trip(echo: &Path, transport: &str) {
    const MESSAGES: [&str; 4] = ["hello", "garbled tables", "", "a message, with spaces"];
    let server = Server::start(echo, transport);
    let client = run_client(echo, transport, &server.addr, &MESSAGES);
    let (status, server_out, server_err) = server.finish();
    let client_out = String::from_utf8_lossy(&client.stdout);
    assert!(
        client.status.success(),
        "{transport}: client failed ({}):\n{}\nserver stderr:\n{server_err}",
        client.status,
        String::from_utf8_lossy(&client.stderr),
    );
    assert!(
        status.success(),
        "{transport}: server failed ({status}):\n{server_err}"
    );

    let echoed: Vec<&str> = client_out
        .lines()
        .filter_map(|l| l.strip_prefix("echo: "))
        .collect();
    assert_eq!(echoed, MESSAGES, "{transport}: {client_out}");
    let (n, sent, received) = counts(&client_out, "client");
    let (server_n, server_sent, server_received) = counts(&server_out, "server");
    assert_eq!((n, server_n), (4, 4), "{transport}");
    // Every byte one side handed to its sockets, the other took from its own.
    assert_eq!(
        (sent, received),
        (server_received, server_sent),
        "{transport}"
    );
    // At least the payload and an 8-byte length per message (plus transport headers).
    let payload: u64 = MESSAGES.iter().map(|m| m.len() as u64 + 8).sum();
    assert!(
        sent >= payload && received >= payload,
        "{transport}: {sent} {received}"
    );
}

#[test]
fn echo_over_tcp() {
    echo_round_trip(&echo_binaries().0, "tcp");
}

#[test]
fn echo_over_mtcp() {
    echo_round_trip(&echo_binaries().0, "mtcp:streams=2");
}

#[test]
fn echo_over_udp() {
    echo_round_trip(&echo_binaries().0, "udp");
}

#[test]
fn echo_over_blast() {
    echo_round_trip(&echo_binaries().0, "blast");
}

#[test]
fn echo_over_udt() {
    if !built("udt") {
        return;
    }
    echo_round_trip(&echo_binaries().0, "udt");
}

#[test]
fn echo_over_quic() {
    if !built("quic") {
        return;
    }
    echo_round_trip(&echo_binaries().0, "quic:cc=bbr");
}

#[test]
fn echo_linked_statically() {
    echo_round_trip(&echo_binaries().1, "tcp");
}

#[test]
fn a_closed_port_is_an_error_naming_the_address() {
    let port = {
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let addr = format!("127.0.0.1:{port}");
    let start = Instant::now();
    let out = run_client(&echo_binaries().0, "tcp", &addr, &["hello"]);
    // echo.c makes 20 attempts 100 ms apart.
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("could not connect to {addr} after 20 attempts"))
            && err.contains("TP_ERR_CONNECT"),
        "{err}"
    );
    assert!(out.stdout.is_empty());
}

#[test]
fn a_bad_transport_name_is_an_error_naming_it() {
    let echo = &echo_binaries().0;
    let out = run_client(echo, "bogus", "127.0.0.1:9", &["hello"]);
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("echo: connect failed: tp_connect: unknown transport 'bogus'")
            && err.contains("TP_ERR_BAD_TRANSPORT"),
        "{err}"
    );
    let out = echo_command(echo)
        .args(["server", "mtcp:streams=x", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad value 'x' for option 'streams'"), "{err}");
    // Wrong arguments: usage, exit status 2.
    let out = echo_command(echo).arg("server").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("usage:"));
}

#[test]
fn a_hostile_client_cannot_make_the_server_allocate() {
    let server = Server::start(&echo_binaries().0, "tcp");
    let mut peer = TcpStream::connect(&server.addr).unwrap();
    // A frame header announcing 2^40 bytes, far above the 64 MiB maximum.
    peer.write_all(&(1u64 << 40).to_be_bytes()).unwrap();
    let (status, _, err) = server.finish();
    assert_eq!(status.code(), Some(1), "{err}");
    assert!(
        err.contains("1099511627776 bytes") && err.contains("TP_ERR_MESSAGE_TOO_LARGE"),
        "{err}"
    );
}

#[test]
fn the_header_works_from_cpp() {
    // Linking proves the extern "C" guards: without them the C++ names would be mangled.
    let lib = lib_dir();
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join("transport-ffi-cpp");
    std::fs::create_dir_all(&out).unwrap();
    let src = out.join("check.cpp");
    std::fs::write(
        &src,
        "#include \"transputation.h\"\n#include <cstring>\n\
         int main() {\n\
           tp_config cfg = tp_config_default();\n\
           if (cfg.max_message == 0) return 1;\n\
           if (tp_connect(\"nope\", \"127.0.0.1:9\", &cfg) != nullptr) return 2;\n\
           if (tp_last_status() != TP_ERR_BAD_TRANSPORT) return 3;\n\
           return std::strcmp(tp_status_name(TP_ERR_CLOSED), \"TP_ERR_CLOSED\") == 0 ? 0 : 4;\n\
         }\n",
    )
    .unwrap();
    let exe = out.join("check");
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    run_compiler(
        Command::new(cxx)
            .args([
                "-std=c++11",
                "-Wall",
                "-Wextra",
                "-pedantic",
                "-Werror",
                "-I",
            ])
            .arg(crate_dir().join("include"))
            .arg(&src)
            .arg("-L")
            .arg(&lib)
            .arg("-ltransputation_ffi")
            .arg(format!("-Wl,-rpath,{}", lib.display()))
            .arg("-o")
            .arg(&exe),
    );
    let status = echo_command(&exe).status().unwrap();
    assert!(status.success(), "{status}");
}

/// Whether this build has the transport `name` (a test of it skips itself, saying so).
fn built(name: &str) -> bool {
    let has = transputation_transport::family(name).is_some();
    if !has {
        eprintln!("skipped: this build has no '{name}' transport");
    }
    has
}
