//! The testbed's network: two parties in two network namespaces joined by an emulated link.
//!
//! ```text
//!   emu (userspace relay, kernels without netem):
//!     [ns tpb-<pid>-<n>-a] tpb0 (TUN) ─┐ relay threads in this process ┌─ tpb0 (TUN) [ns …-b]
//!                          10.x.y.1    └── loss ▸ queue ▸ delay ───────┘   10.x.y.2
//!
//!   netem (kernel, where it exists):
//!     [ns …-a] tpb0 ── veth ── r-a [ns …-r, router] r-b ── veth ── tpb0 [ns …-b]
//!              10.x.y.1       10.x.y.2   netem on    10.x.y.5          10.x.y.6
//!                                        each egress
//! ```
//!
//! ```no_run
//! use transputation_netlab::{LinkSpec, Side, Topology};
//! let topo = Topology::new(&LinkSpec::condition("eu-us")?)?;
//! let mut server = topo.command(Side::B, "my-server").arg(topo.addr(Side::B).to_string()).spawn()?;
//! let client = topo.command(Side::A, "my-client").arg(topo.addr(Side::B).to_string()).status()?;
//! server.wait()?;
//! drop(topo); // the namespaces, devices and relay are gone
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Topology and addressing
//! [`Topology::new`] makes namespaces named `tpb-<pid>-<n>-a` and `…-b` (and `…-r` for the
//! netem router); see [`ns`] for the naming rule. Each party is a separate process started
//! with [`Topology::command`] (`ip netns exec`). Addresses come from a /29 in 10.64.0.0/10
//! picked from the id and skipped over any route of the host's namespace, so that even a
//! party that reaches outside its namespace (it cannot: the namespaces have no other
//! interface) would not collide with a real network. TCP buffer limits in the namespaces
//! (`net.ipv4.tcp_rmem`/`tcp_wmem`, and `net.core.rmem_max`/`wmem_max` where the kernel makes
//! those per-namespace; 6.x keeps them global and read-only inside, and they are then left
//! alone) are raised to twice the bandwidth-delay product plus the queue, at least 32 MiB.
//!
//! The default TCP congestion control of both namespaces (`net.ipv4.tcp_congestion_control`,
//! per namespace since Linux 4.15) is what [`Options::host_cc`] says: `cubic`, Linux's own
//! default, unless another algorithm is asked for, so that a party using the system's
//! congestion control (the `tcp` transport) behaves as on a stock Linux host whatever this
//! machine's default is (a new namespace inherits the host's, which is often `bbr`);
//! [`HostCc::System`] leaves the inherited one. [`Summary::host_cc`] is the algorithm in
//! force, read back from the namespaces. An algorithm the kernel does not have is an error
//! that names those it has, never a fallback. One it has but restricts (a namespace may
//! only default to an algorithm in the global `net.ipv4.tcp_allowed_congestion_control`,
//! which holds `reno` and the kernel's built-in default unless extended) is added to that
//! list for the moment of setting, and the list is then put back as it was.
//!
//! # Cleanup
//! Dropping the [`Topology`] stops the link and deletes the namespaces (and so every device
//! in them); a failure half-way through [`Topology::new`] does the same; a SIGINT, SIGTERM or
//! SIGHUP deletes them and exits (see [`ns::install_signal_cleanup`]); and every
//! [`Topology::new`] first removes the leftovers of killed runs ([`ns::remove_stale`]).
//! Processes the caller started in a namespace are the caller's to end.
//!
//! # Backends
//! Both implement [`Backend`]; [`EmulatorKind::Auto`] picks netem where a netem qdisc can
//! be added (tried once per process in a throw-away namespace), else emu. The emu relay is
//! described in [`emu`], the netem set-up in [`netem`].
//!
//! # Experiments
//! Experiments over these links (plans, the runner, the results database, reports) live in
//! the `transputation-experiments` crate, which builds on this one.

pub mod emu;
mod host_cc;
pub mod netem;
pub mod ns;
pub mod spec;
mod topology;
pub mod verify;

use std::fmt;
use std::net::Ipv4Addr;

use serde::Serialize;

pub use spec::{Condition, Direction, LinkSpec, Queue, SpecError, CONDITIONS};
pub use topology::{Options, Summary, Topology};

/// One of the two parties' namespaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Side {
    /// The first party (the client, in `verify`).
    A,
    /// The second party (the server, in `verify`).
    B,
}

impl fmt::Display for Side {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Side::A => "A",
            Side::B => "B",
        })
    }
}

/// Which link emulator to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum EmulatorKind {
    /// netem where the kernel has it, else emu.
    #[default]
    Auto,
    /// Linux tc netem on veth devices.
    Netem,
    /// The userspace relay over TUN devices.
    Emu,
}

impl std::str::FromStr for EmulatorKind {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        match s {
            "auto" => Ok(EmulatorKind::Auto),
            "netem" => Ok(EmulatorKind::Netem),
            "emu" => Ok(EmulatorKind::Emu),
            _ => Err(SpecError {
                what: "emulator",
                value: s.into(),
                why: "use netem, emu or auto".into(),
            }),
        }
    }
}

impl fmt::Display for EmulatorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            EmulatorKind::Auto => "auto",
            EmulatorKind::Netem => "netem",
            EmulatorKind::Emu => "emu",
        })
    }
}

/// The default TCP congestion control of the emulated hosts (both parties' namespaces): what
/// a socket there gets unless it asks for another (`tcp` does not; `tcp:cc=` and `tcp-bbr`
/// do). A new namespace inherits the host's default, which differs between machines (many
/// set `bbr`); the testbed sets Linux's own default, `cubic`, unless told otherwise.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HostCc {
    /// Leave the namespaces with what they inherit: this machine's
    /// `net.ipv4.tcp_congestion_control`.
    System,
    /// This algorithm (`cubic`, `reno`, `bbr`, ...), which the kernel must have.
    Algorithm(String),
}

impl HostCc {
    /// The default: `cubic`, Linux's default, so that the emulated hosts behave like a stock
    /// Linux host whatever this machine's own default is.
    pub const DEFAULT: &'static str = "cubic";
}

impl Default for HostCc {
    fn default() -> Self {
        HostCc::Algorithm(HostCc::DEFAULT.into())
    }
}

impl std::str::FromStr for HostCc {
    type Err = SpecError;
    fn from_str(s: &str) -> Result<Self, SpecError> {
        if s == "system" {
            return Ok(HostCc::System);
        }
        // The kernel's names: lower-case letters, digits and `_`, at most 15 bytes
        // (TCP_CA_NAME_MAX with its NUL).
        let ok = !s.is_empty()
            && s.len() <= 15
            && s.bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
        if !ok {
            return Err(SpecError {
                what: "TCP congestion control",
                value: s.into(),
                why: "use a kernel algorithm such as cubic, reno or bbr, or `system` for this \
                      machine's default"
                    .into(),
            });
        }
        Ok(HostCc::Algorithm(s.into()))
    }
}

impl fmt::Display for HostCc {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostCc::System => f.write_str("system"),
            HostCc::Algorithm(a) => f.write_str(a),
        }
    }
}

/// What went wrong while building, running or measuring a topology.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A link parameter is invalid.
    #[error(transparent)]
    Spec(#[from] SpecError),
    /// This process may not create namespaces.
    #[error(
        "the testbed needs root, or the capabilities CAP_NET_ADMIN and CAP_SYS_ADMIN, to create \
         network namespaces and devices ({0}); run it with sudo"
    )]
    Privileges(String),
    /// A program the testbed drives is not installed.
    #[error("`{tool}` is not installed (the testbed needs iproute2's `ip` and `tc`)")]
    MissingTool {
        /// The program.
        tool: String,
    },
    /// A set-up command failed.
    #[error("`{command}` failed: {stderr}")]
    Command {
        /// The command line.
        command: String,
        /// What it printed on stderr.
        stderr: String,
    },
    /// A system call failed.
    #[error("{context}: {source}")]
    Io {
        /// What was being done.
        context: String,
        /// The cause.
        source: std::io::Error,
    },
    /// The emulated hosts cannot get the TCP congestion control asked for.
    #[error("TCP congestion control `{algorithm}` for the emulated hosts: {why}")]
    CongestionControl {
        /// The algorithm asked for.
        algorithm: String,
        /// Why not, with what the kernel has.
        why: String,
    },
    /// The requested emulator cannot run here.
    #[error("the {kind} emulator is not available here: {why}")]
    Unavailable {
        /// The backend asked for.
        kind: EmulatorKind,
        /// Why not.
        why: String,
    },
    /// A measurement across the link failed.
    #[error("measuring the link: {0}")]
    Measure(String),
}

/// Counters of one direction of a running link.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct LinkStats {
    /// Packets delivered.
    pub forwarded: u64,
    /// Their IP bytes.
    pub forwarded_bytes: u64,
    /// Packets lost at random.
    pub lost: u64,
    /// Packets dropped because the bottleneck queue was full.
    pub queue_drops: u64,
    /// Packets dropped for other reasons (oversized, refused by the receiving stack).
    pub errors: u64,
    /// The latest delivery after its due time, µs: how far the emulator fell behind.
    pub max_late_us: u64,
}

/// What a backend needs to know about the namespaces it wires up.
#[derive(Debug)]
pub struct Wiring<'a> {
    names: [&'a str; 3],
    block: Ipv4Addr,
}

impl Wiring<'_> {
    /// The namespace of a party.
    pub fn namespace(&self, side: Side) -> &str {
        match side {
            Side::A => self.names[0],
            Side::B => self.names[1],
        }
    }

    /// The router's namespace (empty unless the backend asked for one).
    pub fn router(&self) -> &str {
        self.names[2]
    }

    /// The `k`-th address of the /29 block (k in 0..8).
    pub fn block_addr(&self, k: u32) -> Ipv4Addr {
        Ipv4Addr::from(u32::from(self.block) + k)
    }

    /// A party's address: A is always `.1`; B is `.2` on a direct link, `.6` behind a router.
    pub fn addr(&self, side: Side) -> Ipv4Addr {
        match (side, self.names[2].is_empty()) {
            (Side::A, _) => self.block_addr(1),
            (Side::B, true) => self.block_addr(2),
            (Side::B, false) => self.block_addr(6),
        }
    }
}

/// A link emulator: sets up the devices between the namespaces and applies a [`LinkSpec`].
pub trait Backend {
    /// Its name in reports (`netem`, `emu`).
    fn name(&self) -> &'static str;
    /// The highest rate it can carry faithfully, if it has a limit; faster specs are capped.
    fn max_rate_bps(&self) -> Option<u64>;
    /// Whether it needs a third (router) namespace between the parties.
    fn needs_router(&self) -> bool;
    /// Creates the devices and starts the emulation; the returned handle stops what runs in
    /// this process when dropped (devices die with their namespaces).
    fn install(&self, wiring: &Wiring<'_>, spec: &LinkSpec) -> Result<Box<dyn Links>, Error>;
}

/// A running emulation.
pub trait Links: Send {
    /// Counters per direction (A→B, B→A), where the backend keeps them.
    fn stats(&self) -> Option<[LinkStats; 2]>;
}
