//! The default TCP congestion control of the parties' namespaces ([`HostCc`]).
//!
//! Since Linux 4.15 `net.ipv4.tcp_congestion_control` is per network namespace, and a new
//! namespace starts with the host's. Setting it in a namespace other than the host's is
//! refused (EPERM) for an algorithm the kernel restricts: one missing from the global
//! `net.ipv4.tcp_allowed_congestion_control`, which lists only `reno` and the kernel's
//! default unless an administrator added more; a kernel built with `bbr` as its default then
//! restricts `cubic`. Root may set any algorithm in the host's namespace, so the testbed
//! lists a restricted algorithm there for the moment of setting it in its namespaces and
//! then puts the list back as it was (a namespace keeps its default once set). An algorithm
//! the kernel does not have (none loaded or loadable by that name) is an error that names
//! the ones it has; nothing falls back to another algorithm.
//!
//! The edit of the host's list is guarded twice: [`ns::host_edit`] in this process, which
//! the signal handler also takes before it exits (so a Ctrl-C never lands between adding
//! and putting back), and an exclusive `flock` on a lock file
//! (`/run/lock/transputation-host-cc.lock`, else in the temporary directory) against other
//! testbed processes, so that each puts back exactly the list it found. A process killed with SIGKILL in that window of a few
//! milliseconds leaves the algorithm listed.

use crate::{ns, Error, HostCc};

/// The per-namespace default.
const KEY: &str = "net/ipv4/tcp_congestion_control";
/// The algorithms the kernel has (loaded or built in).
const AVAILABLE: &str = "net/ipv4/tcp_available_congestion_control";
/// The algorithms a namespace other than the host's (and an unprivileged socket) may take;
/// global.
const ALLOWED: &str = "/proc/sys/net/ipv4/tcp_allowed_congestion_control";
/// The host's default, where a kernel has no per-namespace one.
const HOST_DEFAULT: &str = "/proc/sys/net/ipv4/tcp_congestion_control";

/// An exclusive lock on the host's allowed list among testbed processes, released when
/// the file is dropped. Best effort: without a lock file the mutex of this process remains.
fn lock_across_processes() -> Option<std::fs::File> {
    let dirs = [std::path::PathBuf::from("/run/lock"), std::env::temp_dir()];
    for dir in dirs {
        let path = dir.join("transputation-host-cc.lock");
        let Ok(file) = std::fs::OpenOptions::new()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&path)
        else {
            continue;
        };
        if rustix::fs::flock(&file, rustix::fs::FlockOperation::LockExclusive).is_ok() {
            return Some(file);
        }
    }
    None
}

/// Sets `cc` in both namespaces (nothing for [`HostCc::System`]) and returns the algorithm
/// they use, as read back from them.
pub(crate) fn apply(namespaces: [&str; 2], cc: &HostCc) -> Result<String, Error> {
    if let HostCc::Algorithm(name) = cc {
        set(namespaces, name)?;
    }
    let mut in_force = Vec::new();
    for n in namespaces {
        let v = match (ns::read_sysctl(n, KEY)?, cc) {
            (Some(v), _) => v,
            // Before 4.15 the namespaces share the host's default.
            (None, HostCc::System) => read_host(HOST_DEFAULT)?,
            (None, HostCc::Algorithm(name)) => return Err(no_per_namespace_key(name)),
        };
        in_force.push(v);
    }
    if let HostCc::Algorithm(name) = cc {
        if let Some(other) = in_force.iter().find(|v| *v != name) {
            return Err(Error::CongestionControl {
                algorithm: name.clone(),
                why: format!("set, but a namespace reads back {other}"),
            });
        }
    }
    if in_force[0] != in_force[1] {
        return Err(Error::CongestionControl {
            algorithm: cc.to_string(),
            why: format!(
                "the two namespaces use different algorithms ({} and {})",
                in_force[0], in_force[1]
            ),
        });
    }
    Ok(in_force.swap_remove(0))
}

fn no_per_namespace_key(name: &str) -> Error {
    Error::CongestionControl {
        algorithm: name.into(),
        why: "this kernel has no per-namespace net.ipv4.tcp_congestion_control (Linux 4.15 and \
              later have it); use `system`"
            .into(),
    }
}

/// A global sysctl, read in this process's namespace.
fn read_host(path: &str) -> Result<String, Error> {
    std::fs::read_to_string(path)
        .map(|v| v.trim().to_string())
        .map_err(|source| Error::Io {
            context: format!("reading {path}"),
            source,
        })
}

/// Writes `name` as the default of both namespaces; false if the kernel refused it.
fn try_set(namespaces: [&str; 2], name: &str) -> Result<bool, Error> {
    for n in namespaces {
        let written = ns::sysctl(n, KEY, name).map_err(|e| Error::CongestionControl {
            algorithm: name.into(),
            why: format!("setting it failed: {e}"),
        })?;
        if !written {
            return Ok(false);
        }
    }
    Ok(true)
}

/// Whether a space-separated list holds `name`.
fn lists(list: &str, name: &str) -> bool {
    list.split_whitespace().any(|a| a == name)
}

/// `list` with `name` added (`add`) or removed.
fn edited(list: &str, name: &str, add: bool) -> String {
    let mut v: Vec<&str> = list.split_whitespace().filter(|a| *a != name).collect();
    if add {
        v.push(name);
    }
    v.join(" ")
}

fn set(namespaces: [&str; 2], name: &str) -> Result<(), Error> {
    // One change of the allowed list at a time in this process, and none cut short by the
    // signal handler's exit.
    let _one = ns::host_edit();
    let fail = |why: String| Error::CongestionControl {
        algorithm: name.into(),
        why,
    };
    // Another testbed process may put the allowed list back between our steps: a few tries.
    for _ in 0..3 {
        // The write loads the algorithm's module if need be (tcp_<name>).
        if try_set(namespaces, name)? {
            return Ok(());
        }
        if ns::read_sysctl(namespaces[0], KEY)?.is_none() {
            return Err(no_per_namespace_key(name));
        }
        let available = ns::read_sysctl(namespaces[0], AVAILABLE)?.unwrap_or_default();
        if !lists(&available, name) {
            let host = read_host(HOST_DEFAULT).unwrap_or_else(|_| "unknown".into());
            return Err(fail(format!(
                "not available in this kernel (available: {available}); choose one of those, \
                 or `system` for this machine's default ({host})"
            )));
        }
        let _across = lock_across_processes();
        let allowed = read_host(ALLOWED)?;
        if lists(&allowed, name) {
            // Allowed now, refused a moment ago: the list changed in between. Again.
            continue;
        }
        // Restricted: allowed for the moment of setting, then the list as it was.
        std::fs::write(ALLOWED, edited(&allowed, name, true)).map_err(|e| {
            fail(format!(
                "the kernel restricts it (a network namespace may only default to an \
                 algorithm in net.ipv4.tcp_allowed_congestion_control: {allowed}), and adding \
                 it there failed ({e}); allow it as root with `sysctl -w \
                 net.ipv4.tcp_allowed_congestion_control=\"{}\"`, or choose one of {allowed} \
                 or `system`",
                edited(&allowed, name, true)
            ))
        })?;
        let result = try_set(namespaces, name);
        // Back to the list as found: no other testbed process edits it meanwhile (lock).
        if let Err(e) = std::fs::write(ALLOWED, &allowed) {
            eprintln!(
                "testbed: could not take {name} off net.ipv4.tcp_allowed_congestion_control \
                 again ({e}); it was \"{allowed}\""
            );
        }
        if result? {
            return Ok(());
        }
    }
    Err(fail(
        "the kernel refused it as the namespaces' default (net.ipv4.tcp_congestion_control)".into(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_parse_and_system_is_the_hosts() {
        assert_eq!(HostCc::default(), HostCc::Algorithm("cubic".into()));
        assert_eq!("system".parse::<HostCc>().unwrap(), HostCc::System);
        assert_eq!(
            "reno".parse::<HostCc>().unwrap(),
            HostCc::Algorithm("reno".into())
        );
        assert_eq!(
            "bpf_cubic".parse::<HostCc>().unwrap().to_string(),
            "bpf_cubic"
        );
        assert_eq!(HostCc::System.to_string(), "system");
        for bad in [
            "",
            "Cubic",
            "cubic ",
            "cu bic",
            "reno,cubic",
            "../cubic",
            "sixteen_chars_xx",
        ] {
            let e = bad.parse::<HostCc>().unwrap_err();
            assert_eq!(e.value, bad);
            assert!(e.to_string().contains("`system`"), "{e}");
        }
        assert!("fifteen_chars_x".parse::<HostCc>().is_ok());
    }

    #[test]
    fn allowed_lists_are_edited_by_name() {
        assert!(lists("reno bbr\n", "bbr"));
        assert!(!lists("reno bbr", "bb"));
        assert_eq!(edited("reno bbr", "cubic", true), "reno bbr cubic");
        assert_eq!(edited("reno bbr cubic", "cubic", true), "reno bbr cubic");
        assert_eq!(edited("reno cubic bbr\n", "cubic", false), "reno bbr");
        assert_eq!(edited("reno", "cubic", false), "reno");
    }
}
