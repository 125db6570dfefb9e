//! Choosing a transport by name: parsing `NAME` or `NAME:key=value,...` against the
//! declarations of [`crate::transports`], the canonical name, the listing, and the
//! server and client behind a name.
//!
//! Nothing here knows a particular transport: every name, option, range and default comes
//! from a module's [`Family`].

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::family::{Accept, Family, Transport, Values};
use crate::transports::{ALL, NOT_BUILT};
use crate::{Channel, Error, Result};

/// Every transport of this build, as its module declares it.
pub fn families() -> &'static [&'static Family] {
    ALL
}

/// Transports this build was compiled without, and the Cargo feature that would add each.
pub fn not_built() -> &'static [(&'static str, &'static str)] {
    NOT_BUILT
}

/// The transport of this build named `name`, or whose alias it is (`tcp-bbr` names `tcp`);
/// `None` for a name this build lacks.
pub fn family(name: &str) -> Option<&'static Family> {
    family_of(name).map(|(f, _)| f)
}

/// The family named `name` (an alias names its family) and the alias's preset options.
fn family_of(name: &str) -> Option<(&'static Family, Option<&'static str>)> {
    ALL.iter().find_map(|f| {
        if f.name == name {
            return Some((*f, None));
        }
        f.aliases
            .iter()
            .find(|(alias, _)| *alias == name)
            .map(|(_, preset)| (*f, Some(*preset)))
    })
}

/// The names a user may pass, for messages: every family and alias of this build.
fn valid_names() -> String {
    ALL.iter()
        .flat_map(|f| f.names())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A transport and its options, parsed from `NAME` or `NAME:key=value,...`.
///
/// [`families`] lists the names and options of this build (`transputation transports`
/// prints them); `Display` gives the canonical string, which parses back to an equal spec.
#[derive(Clone)]
pub struct TransportSpec {
    family: &'static Family,
    values: Values,
    transport: Arc<dyn Transport>,
}

impl fmt::Debug for TransportSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TransportSpec({self})")
    }
}

impl PartialEq for TransportSpec {
    fn eq(&self, other: &Self) -> bool {
        self.family.name == other.family.name && self.values == other.values
    }
}

impl Eq for TransportSpec {}

impl TransportSpec {
    /// The transport's name, without options.
    pub fn name(&self) -> &'static str {
        self.family.name
    }

    /// The transport's declaration.
    pub fn family(&self) -> &'static Family {
        self.family
    }

    /// The options as parsed (defaults filled in).
    pub fn values(&self) -> &Values {
        &self.values
    }

    /// The kernel TCP congestion control algorithm asked for, if any (`quic`'s
    /// controllers run in user space).
    pub fn congestion_control(&self) -> Option<&str> {
        self.transport.congestion_control()
    }

    /// Checks that this transport can run on this host: the transport works here, and the
    /// kernel has the congestion control it names. Parsing does not look at the host (a
    /// name may be meant for another one); a command that is about to use the transport
    /// here calls this to fail at once, with a message naming what is missing.
    pub fn check_here(&self) -> Result<()> {
        (self.family.available)()?;
        self.check_congestion_control()
    }

    /// Checks that the kernel has the congestion control this transport names, if any.
    fn check_congestion_control(&self) -> Result<()> {
        match self.congestion_control() {
            Some(cc) => crate::tcp_socket::check_congestion_control(cc),
            None => Ok(()),
        }
    }

    /// Sets up a server on `addr` (port 0: any free port; see [`Listener::local_addr`]).
    /// Fails at once if the congestion control asked for is missing.
    pub fn listen(&self, addr: SocketAddr, cfg: &Config) -> Result<Listener> {
        self.check_congestion_control()?;
        Ok(Listener {
            inner: self.transport.listen(addr, cfg)?,
            cfg: cfg.clone(),
        })
    }

    /// Sets up a client: connects to a server at `addr`, retrying as [`Config`] says.
    pub fn connect(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Channel>> {
        self.transport.connect(addr, cfg)
    }
}

impl FromStr for TransportSpec {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let (name, opts) = match s.split_once(':') {
            Some((n, o)) => (n.trim(), o),
            None => (s.trim(), ""),
        };
        let (family, preset) = family_of(name).ok_or_else(|| unknown(name))?;
        let mut values = Values::defaults(family);
        let pairs = preset
            .into_iter()
            .chain(std::iter::once(opts))
            .flat_map(|o| o.split(','))
            .map(str::trim)
            .filter(|p| !p.is_empty())
            .map(|p| p.split_once('=').unwrap_or((p, "")));
        for (key, value) in pairs {
            values.set(key.trim(), value.trim())?;
        }
        TransportSpec::from_values(values)
    }
}

impl TransportSpec {
    /// The transport of its family's `values`, built.
    pub(crate) fn from_values(values: Values) -> Result<Self> {
        let family = values.family();
        let transport = (family.build)(&values)?;
        Ok(TransportSpec {
            family,
            values,
            transport,
        })
    }
}

/// The error for a name no family of this build has, saying so if a feature would add it.
fn unknown(name: &str) -> Error {
    let valid = valid_names();
    match NOT_BUILT.iter().find(|(n, _)| *n == name) {
        Some((_, feature)) => Error::NotBuilt {
            name: name.to_string(),
            feature,
            valid,
        },
        None => Error::UnknownTransport {
            name: name.to_string(),
            valid,
        },
    }
}

impl fmt::Display for TransportSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let options = self.values.canonical();
        if options.is_empty() {
            f.write_str(self.family.name)
        } else {
            write!(f, "{}:{options}", self.family.name)
        }
    }
}

/// A server waiting for peers.
#[derive(Debug)]
pub struct Listener {
    inner: Box<dyn Accept>,
    cfg: Config,
}

impl Listener {
    /// The address clients connect to.
    pub fn local_addr(&self) -> SocketAddr {
        self.inner.local_addr()
    }

    /// Waits (at most [`Config::accept_wait`]) for a client to make contact and sets up the
    /// channel to it (at most [`Config::io_timeout`] per step).
    pub fn accept(&self) -> Result<Box<dyn Channel>> {
        self.inner.accept(&self.cfg)
    }

    /// Sets [`Config::accept_timeout`] for the accepts to come: a server that gives its
    /// first peer a deadline shortens the wait after each peer it turns away.
    pub fn set_accept_timeout(&mut self, timeout: Option<Duration>) {
        self.cfg.accept_timeout = timeout;
    }
}

/// One transport name as `transputation transports` lists it: a family or an alias.
#[derive(Debug)]
pub struct TransportInfo {
    /// The name to pass.
    pub name: &'static str,
    /// Its options, `key=VALUE doc (default)`, `; `-separated; for an alias, what it
    /// stands for.
    pub options: String,
    /// One line on what it is.
    pub description: &'static str,
    /// `Ok` if it works on this machine, else why not.
    pub available: Result<()>,
}

/// Every transport name of this build (families and their aliases), with whether it works
/// on this machine; then those this build lacks, with the feature that would add them.
pub fn transports() -> Vec<TransportInfo> {
    let mut out = Vec::new();
    for f in ALL {
        out.push(TransportInfo {
            name: f.name,
            options: describe_options(f),
            description: f.summary,
            available: (f.available)(),
        });
        for (alias, preset) in f.aliases {
            let available = alias.parse::<TransportSpec>().and_then(|s| s.check_here());
            out.push(TransportInfo {
                name: alias,
                options: format!("(same as {}:{preset})", f.name),
                description: f.summary,
                available,
            });
        }
    }
    for (name, feature) in NOT_BUILT {
        out.push(TransportInfo {
            name,
            options: String::new(),
            description: "not in this build",
            available: Err(Error::NotBuilt {
                name: name.to_string(),
                feature,
                valid: valid_names(),
            }),
        });
    }
    out
}

/// A family's options for the listing: `key=VALUE doc (default: D)`, `; `-separated.
pub fn describe_options(f: &Family) -> String {
    f.options
        .iter()
        .map(|o| {
            let default = o
                .default_text()
                .map(|d| format!(" (default {d})"))
                .unwrap_or_default();
            format!(
                "{}={}: {}{default}; {}",
                o.key,
                o.kind.metavar(),
                o.doc,
                o.kind.describe()
            )
        })
        .collect::<Vec<_>>()
        .join(". ")
}

#[cfg(test)]
mod tests;
