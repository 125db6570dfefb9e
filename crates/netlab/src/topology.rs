//! [`Topology`]: the namespaces, their addresses and buffer limits, and the installed link.

use std::ffi::OsStr;
use std::net::Ipv4Addr;
use std::process::Command;

use serde::Serialize;

use crate::spec::LinkSpec;
use crate::{
    emu, host_cc, netem, ns, Backend, EmulatorKind, Error, HostCc, LinkStats, Links, Side, Wiring,
};

/// How to build a topology.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// The emulator; `Auto` picks netem where it works, else emu.
    pub emulator: EmulatorKind,
    /// An upper bound on the emulated rate (besides the backend's own), e.g. to keep CI
    /// links at 500 Mbit/s.
    pub max_rate_bps: Option<u64>,
    /// The default TCP congestion control of both parties' namespaces: `cubic` unless told
    /// otherwise, or [`HostCc::System`] for what they inherit from this machine.
    pub host_cc: HostCc,
}

/// What a topology was built with, for reports.
#[derive(Debug, Clone, Serialize)]
pub struct Summary {
    /// The backend (`emu`, `netem`).
    pub emulator: &'static str,
    /// The link as asked for.
    pub requested: LinkSpec,
    /// The link as emulated (rates capped).
    pub applied: LinkSpec,
    /// Why `applied` differs from `requested`, if it does.
    pub cap: Option<String>,
    /// The namespaces of A and B.
    pub namespaces: [String; 2],
    /// The addresses of A and B.
    pub addrs: [Ipv4Addr; 2],
    /// The TCP buffer maximum set in both namespaces, in bytes.
    pub tcp_buffer_max: u64,
    /// Whether `net.core.rmem_max`/`wmem_max` could be raised too (per-namespace kernels).
    pub core_buffers_raised: bool,
    /// The default TCP congestion control in force in both namespaces, as read back from
    /// them (for [`HostCc::System`]: what they inherited).
    pub host_cc: String,
}

/// Two namespaces joined by an emulated link. Dropping it removes everything it created.
pub struct Topology {
    summary: Summary,
    links: Option<Box<dyn Links>>,
    namespaces: Vec<String>,
}

impl std::fmt::Debug for Topology {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Topology")
            .field("summary", &self.summary)
            .finish_non_exhaustive()
    }
}

/// Deletes namespaces on drop unless disarmed: cleanup for a failure half-way.
struct Guard(Vec<String>);

impl Drop for Guard {
    fn drop(&mut self) {
        for n in self.0.iter().rev() {
            ns::delete(n);
        }
    }
}

impl Topology {
    /// Builds the topology for `spec` with the automatically chosen emulator.
    pub fn new(spec: &LinkSpec) -> Result<Self, Error> {
        Self::with_options(spec, Options::default())
    }

    /// Builds the topology for `spec`.
    pub fn with_options(spec: &LinkSpec, opts: Options) -> Result<Self, Error> {
        spec.check()?;
        ns::check_privileges()?;
        ns::install_signal_cleanup();
        let stale = ns::remove_stale();
        if !stale.is_empty() {
            eprintln!(
                "testbed: removed leftovers of killed runs: {}",
                stale.join(", ")
            );
        }
        let backend = choose_backend(opts.emulator)?;
        let (applied, cap) = cap_rate(spec, backend.as_ref(), opts.max_rate_bps);

        let id = ns::next_id();
        // Deletes what was created if a later step fails.
        let mut guard = Guard(Vec::new());
        let [a, b, r] = add_namespaces(&id, backend.needs_router(), &mut guard)?;
        let (max, core_raised) = raise_tcp_buffers([&a, &b], &applied)?;
        let host_cc = host_cc::apply([&a, &b], &opts.host_cc)?;

        let wiring = Wiring {
            names: [&a, &b, &r],
            block: pick_block(&id),
        };
        let links = backend.install(&wiring, &applied)?;
        let summary = Summary {
            emulator: backend.name(),
            requested: spec.clone(),
            applied,
            cap,
            namespaces: [a.clone(), b.clone()],
            addrs: [wiring.addr(Side::A), wiring.addr(Side::B)],
            tcp_buffer_max: max,
            core_buffers_raised: core_raised,
            host_cc,
        };
        let namespaces = std::mem::take(&mut guard.0);
        Ok(Topology {
            summary,
            links: Some(links),
            namespaces,
        })
    }

    /// A command that runs `program` inside `side`'s namespace (`ip netns exec`).
    pub fn command(&self, side: Side, program: impl AsRef<OsStr>) -> Command {
        let mut c = Command::new("ip");
        c.args(["netns", "exec"])
            .arg(self.namespace(side))
            .arg(program);
        c
    }

    /// The namespace of `side`.
    pub fn namespace(&self, side: Side) -> &str {
        match side {
            Side::A => &self.summary.namespaces[0],
            Side::B => &self.summary.namespaces[1],
        }
    }

    /// The address of `side`, reachable from the other side.
    pub fn addr(&self, side: Side) -> Ipv4Addr {
        match side {
            Side::A => self.summary.addrs[0],
            Side::B => self.summary.addrs[1],
        }
    }

    /// The link as emulated (after any rate cap).
    pub fn link(&self) -> &LinkSpec {
        &self.summary.applied
    }

    /// What was built: emulator, requested and applied link, cap, names, buffers, the hosts'
    /// TCP congestion control.
    pub fn summary(&self) -> &Summary {
        &self.summary
    }

    /// Counters per direction (A→B, B→A), where the backend keeps them (emu does).
    pub fn stats(&self) -> Option<[LinkStats; 2]> {
        self.links.as_ref()?.stats()
    }
}

impl Drop for Topology {
    fn drop(&mut self) {
        // Stop the relay first: its devices hold the namespaces alive.
        drop(self.links.take());
        for n in self.namespaces.iter().rev() {
            ns::delete(n);
        }
    }
}

/// The emulator `kind` asks for, if it works here; `Auto` takes netem where it works, else
/// emu.
fn choose_backend(kind: EmulatorKind) -> Result<Box<dyn Backend>, Error> {
    Ok(match kind {
        EmulatorKind::Netem => {
            netem::available().map_err(|why| Error::Unavailable {
                kind: EmulatorKind::Netem,
                why,
            })?;
            Box::new(netem::Netem)
        }
        EmulatorKind::Emu => {
            emu::available().map_err(|why| Error::Unavailable {
                kind: EmulatorKind::Emu,
                why,
            })?;
            Box::new(emu::Emu)
        }
        EmulatorKind::Auto => match netem::available() {
            Ok(()) => Box::new(netem::Netem),
            Err(no_netem) => {
                emu::available().map_err(|why| Error::Unavailable {
                    kind: EmulatorKind::Auto,
                    why: format!("no netem ({no_netem}) and no emu ({why})"),
                })?;
                Box::new(emu::Emu)
            }
        },
    })
}

/// The link to emulate: `spec` with its rates capped to the lower of what `backend` carries
/// and the caller's limit `max_rate_bps`, and why, if that changed it.
fn cap_rate(
    spec: &LinkSpec,
    backend: &dyn Backend,
    max_rate_bps: Option<u64>,
) -> (LinkSpec, Option<String>) {
    let mut applied = spec.clone();
    let mut cap = None;
    let limits = [backend.max_rate_bps(), max_rate_bps];
    if let Some(max) = limits.iter().flatten().min().copied() {
        let (c, capped) = spec.capped(max);
        if capped {
            cap = Some(format!(
                "rate capped to {} ({})",
                crate::spec::fmt_rate(max),
                if backend.max_rate_bps() == Some(max) {
                    format!("what the {} emulator carries", backend.name())
                } else {
                    "the caller's limit".to_string()
                }
            ));
            applied = c;
        }
    }
    (applied, cap)
}

/// Creates the namespaces of topology `id`, loopback up and IPv6 off: A's, B's and, if the
/// backend needs one, the router's (else its name is empty). Each is added to `guard` as
/// soon as it exists.
fn add_namespaces(id: &str, router: bool, guard: &mut Guard) -> Result<[String; 3], Error> {
    let name = |role: &str| format!("{}{id}-{role}", ns::PREFIX);
    let (a, b) = (name("a"), name("b"));
    let r = if router { name("r") } else { String::new() };
    for n in [&a, &b, &r] {
        if n.is_empty() {
            continue;
        }
        ns::add(n)?;
        guard.0.push(n.clone());
        ns::ip(&["-n", n, "link", "set", "lo", "up"])?;
        // Keep the links quiet: no IPv6 autoconfiguration chatter through the emulator.
        let _ = ns::sysctl(n, "net/ipv6/conf/all/disable_ipv6", "1");
        let _ = ns::sysctl(n, "net/ipv6/conf/default/disable_ipv6", "1");
    }
    Ok([a, b, r])
}

/// Raises the TCP buffer maximum in the parties' namespaces for the link `applied`; returns
/// it, and whether `net.core.rmem_max`/`wmem_max` could be raised too.
fn raise_tcp_buffers(parties: [&str; 2], applied: &LinkSpec) -> Result<(u64, bool), Error> {
    // Twice the BDP plus the queue, at least 32 MiB (the kernel's default is 4-6 MiB).
    let queue = [applied.a_to_b, applied.b_to_a]
        .iter()
        .filter_map(|d| d.queue_bytes())
        .max()
        .unwrap_or(0);
    let max = (2 * applied.bdp_bytes() + queue).clamp(32 << 20, 1 << 30);
    let mut core_raised = true;
    for n in parties {
        for key in ["net/ipv4/tcp_rmem", "net/ipv4/tcp_wmem"] {
            let default = if key.ends_with("rmem") { 131072 } else { 16384 };
            if !ns::sysctl(n, key, &format!("4096 {default} {max}"))? {
                return Err(Error::Io {
                    context: format!("setting {key} in {n}"),
                    source: std::io::Error::other("the sysctl is missing or read-only"),
                });
            }
        }
        for key in ["net/core/rmem_max", "net/core/wmem_max"] {
            core_raised &= ns::sysctl(n, key, &max.to_string())?;
        }
    }
    Ok((max, core_raised))
}

/// A /29 in 10.64.0.0/10 that overlaps no route of this (the host's) namespace, starting
/// from a hash of the topology id.
fn pick_block(id: &str) -> Ipv4Addr {
    let routes = host_routes();
    let base = u32::from(Ipv4Addr::new(10, 64, 0, 0));
    let blocks = 1u32 << 19; // /10 split into /29s
    let start = id.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    });
    (0..blocks)
        .map(|i| base + ((start.wrapping_add(i) % blocks) << 3))
        .find(|&blk| {
            !routes
                .iter()
                .any(|&(dst, len)| overlaps((blk, 29), (dst, len)))
        })
        .map(Ipv4Addr::from)
        .unwrap_or(Ipv4Addr::new(10, 64, 0, 0))
}

/// Whether two prefixes share an address.
fn overlaps((a, la): (u32, u32), (b, lb): (u32, u32)) -> bool {
    let l = la.min(lb);
    l == 0 || (a >> (32 - l)) == (b >> (32 - l))
}

/// The IPv4 routes of this namespace (destination, prefix length) from `/proc/net/route`,
/// default routes left out (they overlap everything and are not a network we could hit).
fn host_routes() -> Vec<(u32, u32)> {
    let text = std::fs::read_to_string("/proc/net/route").unwrap_or_default();
    text.lines()
        .skip(1)
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            // Fields: Iface Destination Gateway Flags RefCnt Use Metric Mask ...; the
            // addresses are network-order words printed as native integers in hex.
            let word = |s: &str| u32::from_str_radix(s, 16).ok();
            let net = |v: u32| u32::from_be_bytes(v.to_ne_bytes());
            let (dst, mask) = (net(word(f.get(1)?)?), net(word(f.get(7)?)?));
            let len = mask.leading_ones();
            (len > 0).then_some((dst, len))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_overlap() {
        let ip = |s: &str| u32::from(s.parse::<Ipv4Addr>().unwrap());
        assert!(overlaps((ip("10.64.0.8"), 29), (ip("10.0.0.0"), 8)));
        assert!(overlaps((ip("10.64.0.8"), 29), (ip("10.64.0.12"), 32)));
        assert!(!overlaps((ip("10.64.0.8"), 29), (ip("10.64.0.16"), 29)));
        assert!(!overlaps((ip("10.64.0.8"), 29), (ip("192.168.0.0"), 16)));
    }

    #[test]
    fn blocks_avoid_host_routes_and_stay_in_range() {
        let routes = host_routes();
        for id in ["1-0", "1-1", "4242-7"] {
            let b = u32::from(pick_block(id));
            assert_eq!(b % 8, 0);
            assert!(overlaps(
                (b, 29),
                (u32::from(Ipv4Addr::new(10, 64, 0, 0)), 10)
            ));
            assert!(routes.iter().all(|&r| !overlaps((b, 29), r)));
        }
        assert_ne!(pick_block("1-0"), pick_block("1-1"));
    }
}
