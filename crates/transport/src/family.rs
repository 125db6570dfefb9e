//! What a transport module declares about itself: its name, its options (each with its
//! type, bounds, default and one line of doc), how to build it from parsed options, and the
//! interface every built transport offers (listen, connect).
//!
//! The registry (`crate::registry`) reads nothing else: parsing of `NAME:key=value,...`,
//! the canonical name, range checks and their messages, the `transports` listing, the
//! conformance suite, the testbed's presets and the completion-time model of
//! `--transport auto` all come from these declarations, so an option's bounds and its
//! documentation cannot drift apart, and a new transport joins the selection by declaring
//! its [`Family::model`].

use std::borrow::Cow;
use std::fmt;
use std::net::SocketAddr;
use std::sync::Arc;

use transputation_model::{Path, TransportModel};

use crate::config::Config;
use crate::{Channel, Error, Result};

/// One transport as its module declares it; the registry lists these.
pub struct Family {
    /// The name a user passes (`tcp`, `udt`, ...).
    pub name: &'static str,
    /// Other names for a preset of options: (`alias`, `options`), e.g.
    /// (`tcp-bbr`, `cc=bbr`).
    pub aliases: &'static [(&'static str, &'static str)],
    /// One line on what it is.
    pub summary: &'static str,
    /// Its options, in the order the canonical name writes them.
    pub options: &'static [OptionDecl],
    /// What the transport does with a lost datagram.
    pub delivery: Delivery,
    /// Transport strings the conformance suite runs (the first: the plain name).
    pub conformance: &'static [&'static str],
    /// `Ok` if it works on this machine, else why not (a missing kernel module, a library
    /// that does not start).
    pub available: fn() -> Result<()>,
    /// Whether `--transport auto` may choose it. False for a transport whose
    /// [`Family::model`] has not been checked against testbed runs yet: it is predicted
    /// (and shown by `select`), never chosen.
    pub auto: bool,
    /// Builds the transport from its options; checks what the declarations alone cannot
    /// (a combination of options, a name the kernel must know).
    pub build: fn(&Values) -> Result<Arc<dyn Transport>>,
    /// How the completion-time model sees it with these options (connection round trips,
    /// packets, first window, congestion control, window bound, default constants): what
    /// lets `--transport auto` predict it without knowing it by name.
    pub model: fn(&Values) -> TransportModel,
    /// Settings worth predicting on `path` beyond its plain name and aliases: what an
    /// expert would write for that path (`quic:cc=bbr,iw=...`), as transport strings.
    pub tuned: fn(&Path) -> Vec<String>,
    /// Options that only shape how a side sends (its congestion control, its initial
    /// window) and that an accepted channel can still take after set-up, through
    /// [`crate::Channel::sender_tuning`]: a listener built without them accepts a client of
    /// any value of them. `--transport auto`'s garbler listens once per setting without
    /// these options and tunes each accepted channel to the evaluator's choice.
    pub sender_options: &'static [&'static str],
    /// Options (`key=value,...`, or empty) a connection takes when it is made while the
    /// path is still being probed (`--transport auto`'s evaluator connects early, beside
    /// its probe; [`crate::TransportSpec::while_probing`]): nothing it sends then may
    /// disturb the probe's measurement. `blast`'s `train=off`: no rate-timing train, the
    /// rate comes later through [`crate::Channel::sender_tuning`].
    pub while_probing: &'static str,
    /// For a family whose first use in a process waits for a start-up of its own:
    /// whether that has happened in this process. UDT4's library measures the CPU's clock
    /// for 100 ms when it is loaded, inside the program loader's lock, so that no other
    /// thread of the process can start meanwhile. `--transport auto` neither offers nor
    /// considers such a family before its start-up (a session would wait for it, or stall
    /// beside it), and never begins it.
    pub started: Option<fn() -> bool>,
    /// Whether a client may start a second connection to the same listener while its
    /// first is still being made, and drop whichever is not taken (closed before it sent
    /// a byte): true where each connection's handshake completes without the listener's
    /// program (kernel TCP's, in the kernel) and the listener passes over one closed
    /// unused. `--transport auto` does so once a connection takes several round trips
    /// longer than the path's: a lost SYN or SYN-ACK waits the kernel's 1 s initial
    /// timeout (RFC 6298 §2.1). Not for `mtcp`, whose listener takes a session's
    /// connections in the order they come, nor `quic`, whose listener answers one
    /// connection's handshake at a time.
    pub hedged_connect: bool,
}

impl fmt::Debug for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Family").field("name", &self.name).finish()
    }
}

impl Family {
    /// The option declared as `key`.
    pub fn option(&self, key: &str) -> Option<&'static OptionDecl> {
        self.options.iter().find(|o| o.key == key)
    }

    /// The names a user may pass for it: its own, then its aliases.
    pub fn names(&self) -> impl Iterator<Item = &'static str> {
        std::iter::once(self.name).chain(self.aliases.iter().map(|(alias, _)| *alias))
    }

    /// The option keys, comma-separated (for messages).
    pub fn option_keys(&self) -> String {
        self.options
            .iter()
            .map(|o| o.key)
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// What a transport guarantees about delivery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Over a reliable byte stream (kernel TCP): loss is repaired below the transport.
    Stream,
    /// Over UDP, repairing lost datagrams itself (`udt`, `quic`).
    RepairsDatagrams,
    /// Over UDP without repair: a lost or reordered datagram is reported as
    /// [`Error::Unreliable`] (`udp`, the best case on a lossless link).
    ReportsLoss,
}

impl Delivery {
    /// Whether every byte sent arrives (on a lossy path too).
    pub fn is_reliable(self) -> bool {
        self != Delivery::ReportsLoss
    }
}

/// One option of a transport.
#[derive(Debug)]
pub struct OptionDecl {
    /// The key, as in `NAME:key=value`.
    pub key: &'static str,
    /// What values it takes.
    pub kind: OptionKind,
    /// Its value when not given, if it has one. An option without a default is unset
    /// unless given, and the transport decides (`doc` says how).
    pub default: Option<Value>,
    /// Whether the canonical name always writes it, or only when it differs from the
    /// default (or, without a default, when it is set).
    pub shown: Shown,
    /// One line of doc, including what "unset" means where there is no default.
    pub doc: &'static str,
}

impl OptionDecl {
    /// A value as the canonical name writes it.
    pub fn format_value(&self, v: &Value) -> String {
        self.kind.format(v)
    }

    /// Its default as the canonical name writes it, if it has one.
    pub fn default_text(&self) -> Option<String> {
        self.default.as_ref().map(|v| self.format_value(v))
    }
}

/// When the canonical name writes an option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// Always, with its default if not given.
    Always,
    /// Only when given and different from the default.
    WhenChanged,
}

/// The values an option takes; the parser checks them, and its messages name the range.
#[derive(Debug)]
pub enum OptionKind {
    /// A whole number in `min..=max`, in `unit` (bytes, packets, connections).
    Integer {
        /// Smallest value.
        min: u64,
        /// Largest value.
        max: u64,
        /// What it counts.
        unit: &'static str,
    },
    /// A rate in bits per second: digits with an optional unit (`kbit`, `mbit`, `gbit`,
    /// decimal as in tc), in `min..=max`, or `unlimited` (0).
    Rate {
        /// Smallest rate.
        min: u64,
        /// Largest rate.
        max: u64,
    },
    /// One of a list of words.
    Choice(&'static [&'static str]),
    /// One of a list of words, or a whole number in `min..=max` in `unit` (`fec=auto`,
    /// `fec=off`, `fec=5`).
    WordOrInteger {
        /// The words.
        words: &'static [&'static str],
        /// Smallest number.
        min: u64,
        /// Largest number.
        max: u64,
        /// What the number counts.
        unit: &'static str,
    },
    /// A name for the kernel (a TCP congestion control algorithm): up to 15 letters,
    /// digits, `_` and `-`. Whether this host has it is checked when listening or
    /// connecting, and by [`crate::TransportSpec::check_here`].
    Name,
}

impl OptionKind {
    /// What a valid value looks like, for messages and the listing.
    pub fn describe(&self) -> String {
        match self {
            OptionKind::Integer { min, max, unit } => format!("{unit}, from {min} to {max}"),
            OptionKind::Rate { min, max } => format!(
                "bits per second with an optional unit (kbit, mbit, gbit), from {} to {}, \
                 or unlimited",
                format_rate(*min),
                format_rate(*max)
            ),
            OptionKind::Choice(words) => one_of(words),
            OptionKind::WordOrInteger {
                words,
                min,
                max,
                unit,
            } => format!("{} or {unit} from {min} to {max}", words.join(", ")),
            OptionKind::Name => "a name of up to 15 letters, digits, '_' and '-'".into(),
        }
    }

    /// The placeholder of the listing (`BYTES`, `RATE`, `cubic|bbr`).
    pub fn metavar(&self) -> String {
        match self {
            OptionKind::Integer { unit, .. } => unit.to_ascii_uppercase(),
            OptionKind::Rate { .. } => "RATE".into(),
            OptionKind::Choice(words) => words.join("|"),
            OptionKind::WordOrInteger { words, unit, .. } => {
                format!("{}|{}", words.join("|"), unit.to_ascii_uppercase())
            }
            OptionKind::Name => "NAME".into(),
        }
    }

    /// Parses `text`, or says nothing (the caller names option and range).
    fn parse(&self, text: &str) -> Option<Value> {
        match self {
            OptionKind::Integer { min, max, .. } => text
                .parse::<u64>()
                .ok()
                .filter(|n| (*min..=*max).contains(n))
                .map(Value::Int),
            OptionKind::Rate { min, max } => {
                let r = parse_rate(text)?;
                (r == 0 || (*min..=*max).contains(&r)).then_some(Value::Int(r))
            }
            OptionKind::Choice(words) => words
                .iter()
                .find(|w| w.eq_ignore_ascii_case(text))
                .map(|w| Value::Text(Cow::Borrowed(*w))),
            OptionKind::WordOrInteger {
                words, min, max, ..
            } => words
                .iter()
                .find(|w| w.eq_ignore_ascii_case(text))
                .map(|w| Value::Text(Cow::Borrowed(*w)))
                .or_else(|| {
                    text.parse::<u64>()
                        .ok()
                        .filter(|n| (*min..=*max).contains(n))
                        .map(Value::Int)
                }),
            OptionKind::Name => {
                let ok = !text.is_empty()
                    && text.len() < 16
                    && text
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
                ok.then(|| Value::Text(Cow::Owned(text.into())))
            }
        }
    }

    /// Writes a value as the canonical name does.
    fn format(&self, v: &Value) -> String {
        match (self, v) {
            (OptionKind::Rate { .. }, Value::Int(r)) => format_rate(*r),
            (_, Value::Int(n)) => n.to_string(),
            (_, Value::Text(t)) => t.to_string(),
        }
    }
}

/// "a, b or c".
fn one_of(words: &[&str]) -> String {
    match words {
        [] => String::new(),
        [one] => (*one).into(),
        [head @ .., last] => format!("{} or {last}", head.join(", ")),
    }
}

/// An option's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Value {
    /// A number (a rate in bits per second; 0 for `unlimited`).
    Int(u64),
    /// A word or a name.
    Text(Cow<'static, str>),
}

/// A transport's options as parsed: one value (given or default) or none per option the
/// family declares, in declaration order.
#[derive(Debug, Clone)]
pub struct Values {
    family: &'static Family,
    values: Vec<Option<Value>>,
}

impl PartialEq for Values {
    fn eq(&self, other: &Self) -> bool {
        self.family.name == other.family.name && self.values == other.values
    }
}

impl Eq for Values {}

impl Values {
    /// The defaults of `family`'s options.
    pub(crate) fn defaults(family: &'static Family) -> Values {
        Values {
            family,
            values: family.options.iter().map(|o| o.default.clone()).collect(),
        }
    }

    /// Parses and sets `key=value`, naming the option and its range when the value is
    /// outside it.
    pub(crate) fn set(&mut self, key: &str, text: &str) -> Result<()> {
        let family = self.family;
        let Some(i) = family.options.iter().position(|o| o.key == key) else {
            return Err(Error::UnknownOption {
                transport: family.name,
                option: key.to_string(),
                valid: family.option_keys(),
            });
        };
        let kind = &family.options[i].kind;
        self.values[i] = Some(kind.parse(text).ok_or_else(|| Error::BadOption {
            transport: family.name,
            option: key.to_string(),
            value: text.to_string(),
            reason: kind.describe(),
        })?);
        Ok(())
    }

    /// The family these are options of.
    pub(crate) fn family(&self) -> &'static Family {
        self.family
    }

    /// Sets `key` back to its default (nothing if the family has no such option).
    pub(crate) fn reset(&mut self, key: &str) {
        if let Some(i) = self.family.options.iter().position(|o| o.key == key) {
            self.values[i] = self.family.options[i].default.clone();
        }
    }

    fn get(&self, key: &str) -> Option<&Value> {
        let i = self.family.options.iter().position(|o| o.key == key)?;
        self.values[i].as_ref()
    }

    /// A number option's value, if set (always, for one with a default).
    pub fn int(&self, key: &str) -> Option<u64> {
        match self.get(key) {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        }
    }

    /// A word or name option's value, if set.
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.get(key) {
            Some(Value::Text(t)) => Some(t),
            _ => None,
        }
    }

    /// An option with a default, as a `u32` (its bounds are declared within `u32`).
    pub(crate) fn u32_of(&self, key: &str) -> u32 {
        self.opt_u32(key).unwrap_or_else(|| {
            panic!(
                "'{}' declares option '{key}' with a default",
                self.family.name
            )
        })
    }

    /// An option without a default, as a `u32` if set (its bounds are within `u32`).
    pub(crate) fn opt_u32(&self, key: &str) -> Option<u32> {
        self.int(key).map(|n| {
            u32::try_from(n)
                .unwrap_or_else(|_| panic!("'{}' bounds option '{key}' in u32", self.family.name))
        })
    }

    /// The options the canonical name writes, `key=value`, comma-separated.
    pub(crate) fn canonical(&self) -> String {
        let mut out = Vec::new();
        for (decl, v) in self.family.options.iter().zip(&self.values) {
            let Some(v) = v else { continue };
            let write = match decl.shown {
                Shown::Always => true,
                Shown::WhenChanged => decl.default.as_ref() != Some(v),
            };
            if write {
                out.push(format!("{}={}", decl.key, decl.format_value(v)));
            }
        }
        out.join(",")
    }
}

/// A transport built from its options, ready to listen and connect.
pub trait Transport: Send + Sync + fmt::Debug {
    /// Sets up a server on `addr` (port 0: any free port).
    fn listen(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Accept>>;

    /// Sets up a client: connects to a server at `addr`, retrying as `cfg` says.
    fn connect(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Channel>>;

    /// The kernel TCP congestion control algorithm it asks for, if any.
    fn congestion_control(&self) -> Option<&str> {
        None
    }
}

/// A server socket of some transport, waiting for peers.
pub trait Accept: Send + Sync + fmt::Debug {
    /// The address clients connect to.
    fn local_addr(&self) -> SocketAddr;

    /// Waits (at most [`Config::accept_wait`]) for a client to make contact and sets up the
    /// channel to it (each step at most [`Config::io_timeout`]).
    fn accept(&self, cfg: &Config) -> Result<Box<dyn Channel>>;
}

/// A rate in bits per second: `unlimited` (0), or digits with an optional unit `bit`,
/// `kbit`, `mbit` or `gbit` (decimal, as in tc), from 8 kbit/s to 1000 Gbit/s.
pub(crate) fn parse_rate(v: &str) -> Option<u64> {
    let v = v.trim().to_ascii_lowercase();
    if v == "unlimited" || v == "0" {
        return Some(0);
    }
    let i = v.find(|c: char| !c.is_ascii_digit()).unwrap_or(v.len());
    let (digits, unit) = v.split_at(i);
    let mult: u64 = match unit {
        "" | "bit" => 1,
        "kbit" => 1_000,
        "mbit" => 1_000_000,
        "gbit" => 1_000_000_000,
        _ => return None,
    };
    digits
        .parse::<u64>()
        .ok()
        .and_then(|n| n.checked_mul(mult))
        .filter(|&r| (8_000..=1_000_000_000_000).contains(&r))
}

/// A rate as `parse_rate` reads it back: `unlimited`, or the largest unit that divides it.
pub(crate) fn format_rate(r: u64) -> String {
    match r {
        0 => "unlimited".into(),
        r if r % 1_000_000_000 == 0 => format!("{}gbit", r / 1_000_000_000),
        r if r % 1_000_000 == 0 => format!("{}mbit", r / 1_000_000),
        r if r % 1_000 == 0 => format!("{}kbit", r / 1_000),
        r => format!("{r}bit"),
    }
}
