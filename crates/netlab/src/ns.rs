//! Network namespaces the testbed owns: their names, creation and removal, the registry that
//! the Ctrl-C handler empties, the removal of leftovers of killed runs, and running code or
//! commands inside a namespace.
//!
//! Every name is `tpb-<pid>-<n>-<role>`: the creating process's id, a per-process counter and
//! the role (`a`, `b`, `r` for the router, `t` for the temporary namespace of the netem
//! detection). Only names of exactly that shape are ever deleted: ours when we are done, and
//! those of processes that no longer exist at the next start. All devices live inside these
//! namespaces, so deleting a namespace deletes them too; nothing is created outside.

use std::collections::BTreeSet;
use std::os::fd::AsFd;
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::Error;

/// The prefix of every namespace name the testbed creates.
pub const PREFIX: &str = "tpb-";
/// Where `ip netns` keeps its named namespaces.
pub const NETNS_DIR: &str = "/run/netns";

static NEXT: AtomicU32 = AtomicU32::new(0);
/// Namespaces this process created and has not deleted yet: what the signal handler removes.
static LIVE: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
/// Held while this process edits host-wide state that must not be left half-done (the
/// host's allowed TCP congestion controls, see `host_cc`); the signal handler takes it
/// before it cleans up and exits.
static HOST_EDIT: Mutex<()> = Mutex::new(());

/// Waits until no edit of host-wide state is under way in this process and holds off any
/// other until the guard is dropped: for an edit, and for the signal handler right before
/// the process exits (it never drops it). Kept here, not with the edits, so that cleaning up
/// depends on nothing that builds namespaces.
pub(crate) fn host_edit() -> std::sync::MutexGuard<'static, ()> {
    HOST_EDIT.lock().unwrap_or_else(|e| e.into_inner())
}

/// A fresh id `<pid>-<n>` for this process's next topology.
pub(crate) fn next_id() -> String {
    format!(
        "{}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}

/// Parses `tpb-<pid>-<n>-<role>` into the pid; `None` for any other name.
pub(crate) fn owner_pid(name: &str) -> Option<u32> {
    let rest = name.strip_prefix(PREFIX)?;
    let mut parts = rest.split('-');
    let (pid, n, role) = (parts.next()?, parts.next()?, parts.next()?);
    let digits = |s: &str| !s.is_empty() && s.len() <= 10 && s.bytes().all(|b| b.is_ascii_digit());
    if parts.next().is_some()
        || !digits(pid)
        || !digits(n)
        || !matches!(role, "a" | "b" | "r" | "t")
    {
        return None;
    }
    pid.parse().ok()
}

/// Whether process `pid` exists (in our pid namespace).
fn alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
}

/// Runs a command; an error carries the command line and its stderr.
pub(crate) fn run(cmd: &mut Command) -> Result<String, Error> {
    let line = format!("{cmd:?}").replace('"', "");
    let out = cmd.output().map_err(|e| {
        if e.kind() == std::io::ErrorKind::NotFound {
            Error::MissingTool {
                tool: cmd.get_program().to_string_lossy().into_owned(),
            }
        } else {
            Error::Io {
                context: line.clone(),
                source: e,
            }
        }
    })?;
    if !out.status.success() {
        return Err(Error::Command {
            command: line,
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// `ip ARGS...`.
pub(crate) fn ip(args: &[&str]) -> Result<String, Error> {
    run(Command::new("ip").args(args))
}

/// Creates the namespace `name` and registers it for removal.
pub(crate) fn add(name: &str) -> Result<(), Error> {
    install_signal_cleanup();
    // Register first: a signal between the two steps must not leave it behind.
    LIVE.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(name.to_string());
    if let Err(e) = ip(&["netns", "add", name]) {
        LIVE.lock().unwrap_or_else(|e| e.into_inner()).remove(name);
        return Err(e);
    }
    Ok(())
}

/// Deletes the namespace `name` (with every device in it), after killing the processes still
/// running in it (parties started there; they cannot outlive their network); quiet if it is
/// already gone.
pub(crate) fn delete(name: &str) {
    if Path::new(NETNS_DIR).join(name).exists() {
        kill_processes_in(name);
        let _ = ip(&["netns", "del", name]);
    }
    LIVE.lock().unwrap_or_else(|e| e.into_inner()).remove(name);
}

/// The namespaces with the testbed's prefix that exist now.
pub fn list() -> Vec<String> {
    let Ok(dir) = std::fs::read_dir(NETNS_DIR) else {
        return Vec::new();
    };
    let mut v: Vec<String> = dir
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|n| n.starts_with(PREFIX))
        .collect();
    v.sort();
    v
}

/// Removes the leftovers of killed runs: namespaces named `tpb-<pid>-<n>-<role>` whose
/// process no longer exists. Returns their names. Namespaces of living processes (including
/// this one) and any name of another shape are left alone.
pub fn remove_stale() -> Vec<String> {
    let me = std::process::id();
    let mut removed = Vec::new();
    for name in list() {
        match owner_pid(&name) {
            Some(pid) if pid != me && !alive(pid) => {
                kill_processes_in(&name);
                if ip(&["netns", "del", &name]).is_ok() {
                    removed.push(name);
                }
            }
            _ => {}
        }
    }
    removed
}

/// Sends SIGKILL to every process in namespace `name` (`ip netns pids`), never to this one.
fn kill_processes_in(name: &str) {
    let me = std::process::id();
    let Ok(pids) = ip(&["netns", "pids", name]) else {
        return;
    };
    for pid in pids
        .split_whitespace()
        .filter_map(|p| p.parse::<i32>().ok())
    {
        if pid as u32 == me {
            continue;
        }
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// Deletes every namespace this process created and has not deleted yet; for a signal
/// handler that exits right after. It first waits for an edit of the host's allowed TCP
/// congestion controls to end and keeps any other from starting, so a process that goes
/// on to build topologies afterwards may block in one.
pub fn cleanup_all() {
    // Not between adding an algorithm to the host's allowed list and taking it off: wait
    // for such an edit to end, and start none after (the caller exits next).
    std::mem::forget(host_edit());
    let names: Vec<String> = LIVE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .cloned()
        .collect();
    for n in names {
        delete(&n);
    }
}

/// Installs, once per process, a SIGINT/SIGTERM/SIGHUP handler that deletes this process's
/// namespaces and exits with status 130. If the program already has a handler (the `ctrlc`
/// crate allows one), that handler should call [`cleanup_all`]; this returns false then.
pub fn install_signal_cleanup() -> bool {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    *INSTALLED.get_or_init(|| {
        ctrlc::set_handler(|| {
            INTERRUPTED.store(true, Ordering::SeqCst);
            cleanup_all();
            std::process::exit(130);
        })
        .is_ok()
    })
}

/// Set by the handler of [`install_signal_cleanup`] before it deletes the namespaces.
static INTERRUPTED: AtomicBool = AtomicBool::new(false);

/// Where the handler of [`install_signal_cleanup`] is deleting the namespaces (a signal
/// came), waits for it to end the process with status 130, so that a caller who saw its
/// commands die with the namespaces does not report that as their failure first (and exit
/// with another status). Returns at once without a signal, or after 10 s if the handler
/// has not ended the process by then.
pub fn await_signal_exit() {
    if !INTERRUPTED.load(Ordering::SeqCst) {
        return;
    }
    std::thread::sleep(Duration::from_secs(10));
}

/// Fails with [`Error::Privileges`] unless this process may create namespaces and devices:
/// root, or the capabilities CAP_NET_ADMIN and CAP_SYS_ADMIN.
pub fn check_privileges() -> Result<(), Error> {
    const CAP_NET_ADMIN: u32 = 12;
    const CAP_SYS_ADMIN: u32 = 21;
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |k: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(k))
            .map(|v| v.trim().to_string())
    };
    let caps = field("CapEff:").and_then(|v| u64::from_str_radix(&v, 16).ok());
    let has = |bit: u32| caps.is_some_and(|c| c & (1 << bit) != 0);
    if has(CAP_NET_ADMIN) && has(CAP_SYS_ADMIN) {
        return Ok(());
    }
    let uid = field("Uid:")
        .and_then(|v| v.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "?".into());
    Err(Error::Privileges(format!(
        "effective uid {uid}, {} CAP_NET_ADMIN, {} CAP_SYS_ADMIN",
        if has(CAP_NET_ADMIN) {
            "with"
        } else {
            "without"
        },
        if has(CAP_SYS_ADMIN) {
            "with"
        } else {
            "without"
        },
    )))
}

/// Runs `f` on a new thread that has entered the network namespace `name`, and returns its
/// result. Descriptors it opens there (sockets, TUN devices) stay bound to that namespace;
/// the calling thread's namespace is untouched.
pub(crate) fn within<T: Send>(
    name: &str,
    f: impl FnOnce() -> std::io::Result<T> + Send,
) -> Result<T, Error> {
    let path = Path::new(NETNS_DIR).join(name);
    let io_err = |context: String| move |source| Error::Io { context, source };
    std::thread::scope(|s| {
        s.spawn(|| {
            let ns = rustix::fs::open(
                &path,
                rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
                rustix::fs::Mode::empty(),
            )
            .map_err(std::io::Error::from)
            .map_err(io_err(format!("opening {}", path.display())))?;
            rustix::thread::move_into_link_name_space(
                ns.as_fd(),
                Some(rustix::thread::LinkNameSpaceType::Network),
            )
            .map_err(std::io::Error::from)
            .map_err(io_err(format!("entering the network namespace {name}")))?;
            f().map_err(io_err(format!("in the network namespace {name}")))
        })
        .join()
        .unwrap_or_else(|p| std::panic::resume_unwind(p))
    })
}

/// Writes the sysctl `key` (`net/ipv4/tcp_rmem`) in namespace `ns`. Returns false if the
/// kernel keeps it global there (read-only in a child namespace) or lacks it.
pub(crate) fn sysctl(ns: &str, key: &str, value: &str) -> Result<bool, Error> {
    let path = format!("/proc/sys/{key}");
    let value = value.to_string();
    within(ns, move || match std::fs::write(&path, value.as_bytes()) {
        Ok(()) => Ok(true),
        Err(e)
            if matches!(
                e.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::NotFound
            ) =>
        {
            Ok(false)
        }
        Err(e) => Err(e),
    })
}

/// Reads the sysctl `key` (`net/ipv4/tcp_congestion_control`) in namespace `ns`, trimmed;
/// `None` if the kernel has no such key there.
pub(crate) fn read_sysctl(ns: &str, key: &str) -> Result<Option<String>, Error> {
    let path = format!("/proc/sys/{key}");
    within(ns, move || match std::fs::read_to_string(&path) {
        Ok(v) => Ok(Some(v.trim().to_string())),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(e),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_names_have_an_owner() {
        assert_eq!(owner_pid("tpb-123-0-a"), Some(123));
        assert_eq!(owner_pid("tpb-9-17-r"), Some(9));
        assert_eq!(owner_pid("tpb-9-17-t"), Some(9));
        for other in [
            "tpb-123-0",
            "tpb-123-0-x",
            "tpb-123-0-a-b",
            "tpb--0-a",
            "tpb-12a-0-a",
            "tp-probe-a-123",
            "tpb-123-0-a ",
            "netns0",
            "tpb-99999999999-0-a",
        ] {
            assert_eq!(owner_pid(other), None, "{other}");
        }
    }
}
