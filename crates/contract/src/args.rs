//! A party's arguments: the command line of `transputation garbler` or `evaluator`, as a
//! value. [`PartyArgs::to_argv`] writes it; [`PartyArgs::from_argv`] reads back exactly
//! what `to_argv` writes (the binary itself parses with its full command-line parser, which
//! accepts more).

use std::net::SocketAddr;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Which party.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// Garbles, listens.
    Garbler,
    /// Evaluates, connects.
    Evaluator,
}

impl Role {
    /// Its name: the subcommand, and `role` in the report.
    pub fn name(self) -> &'static str {
        match self {
            Role::Garbler => "garbler",
            Role::Evaluator => "evaluator",
        }
    }

    /// The flag of its address: `--listen` or `--connect`.
    pub fn address_flag(self) -> &'static str {
        match self {
            Role::Garbler => "--listen",
            Role::Evaluator => "--connect",
        }
    }
}

/// How the session is protected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum Protection {
    /// `--insecure`: neither authenticated nor encrypted.
    Insecure,
    /// `--psk-file FILE`: a pre-shared key both parties hold.
    PskFile(PathBuf),
    /// `--key FILE --peer-key HEX|FILE`: static keys (Noise KK).
    Pinned {
        /// This party's private key file.
        key: PathBuf,
        /// The peer's public key, hex or a file.
        peer_key: String,
    },
}

impl Protection {
    /// Its flags on a party's command line.
    pub fn to_argv(&self) -> Vec<String> {
        match self {
            Protection::Insecure => vec!["--insecure".into()],
            Protection::PskFile(p) => vec!["--psk-file".into(), p.display().to_string()],
            Protection::Pinned { key, peer_key } => vec![
                "--key".into(),
                key.display().to_string(),
                "--peer-key".into(),
                peer_key.clone(),
            ],
        }
    }
}

/// Everything a party is told on its command line.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PartyArgs {
    /// Which party.
    pub role: Role,
    /// The garbler's address: where it listens, where the evaluator connects.
    pub address: SocketAddr,
    /// The evaluator reads the garbler's address from the first line of its standard input
    /// (`--connect -`) instead of `address`, once it has loaded its circuit and checked its
    /// input: for a launcher that starts both parties at once and learns the garbler's port
    /// from its `listening on` line. Only the evaluator takes it.
    #[serde(default)]
    pub address_on_stdin: bool,
    /// Its input: one hex string per input group it owns, comma-separated.
    pub input: String,
    /// Session protection (`None`: no flag, the binary's default).
    pub protection: Option<Protection>,
    /// The circuit: a built-in (with options) or a file.
    pub circuit: String,
    /// For circuit files, the owner of each input group (`garbler`, `evaluator`).
    pub parties: Option<Vec<String>>,
    /// The garbling scheme.
    pub scheme: String,
    /// The AES backend (`--backend`); `None`: no flag, the fastest the CPU has.
    #[serde(default)]
    pub backend: Option<String>,
    /// How the party garbles or evaluates (`--parallel`: `none`, `fgp`, `ipp`, `cgp`,
    /// `auto`); `None`: no flag. `none` and `fgp` are local tuning, like the backend (the
    /// tables are the same bytes); `ipp` both parties must give, `cgp` both (or `auto` where
    /// it offers it).
    #[serde(default)]
    pub parallel: Option<String>,
    /// Its threads (`--threads N`); `None`: no flag.
    #[serde(default)]
    pub threads: Option<u32>,
    /// Where it keeps plans between runs (`--plan-cache DIR`); `None`: no flag.
    #[serde(default)]
    pub plan_cache: Option<PathBuf>,
    /// When it plans its circuit (`--plan ahead|stream`); `None`: no flag.
    #[serde(default)]
    pub plan: Option<String>,
    /// The transport with its options.
    pub transport: String,
    /// Who learns the output (`both`, `evaluator`); `None`: the default.
    pub output: Option<String>,
    /// Seconds a silent peer is waited for; `None`: the default.
    pub timeout_secs: Option<f64>,
    /// Seconds the evaluator keeps trying to reach the garbler; `None`: the default.
    pub connect_timeout_secs: Option<f64>,
    /// Seconds the garbler waits for its first evaluator (`--accept-timeout`); `None`: the
    /// default. Only the garbler takes it.
    #[serde(default)]
    pub accept_timeout_secs: Option<f64>,
    /// Computations of the circuit the evaluator runs in its one session (`--repeat N`, the
    /// same input each time; the garbler serves as many as the session asks for); `None`:
    /// no flag, one computation. Only the evaluator takes it.
    #[serde(default)]
    pub repeat: Option<u32>,
    /// Seconds the evaluator may reuse a measurement of the garbler's path under
    /// `--transport auto` (`--probe-cache SECS`; 0: probe every time); `None`: no flag, the
    /// binary's default. Only the evaluator takes it.
    #[serde(default)]
    pub probe_cache_secs: Option<f64>,
    /// The path's round-trip time and bottleneck bandwidth (bits/s), for buffer sizing.
    pub path: Option<(f64, u64)>,
    /// Print the report as JSON ([`crate::PartyReport`]).
    pub json: bool,
}

/// A command line [`PartyArgs::from_argv`] cannot read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("party command line, at {at:?}: {why}")]
pub struct ArgvError {
    /// The argument.
    pub at: String,
    /// What is wrong.
    pub why: String,
}

/// The value of a flag that counts `what`, 1 or more.
fn count(flag: &str, v: Option<String>, what: &str) -> Result<Option<u32>, ArgvError> {
    v.map(|s| match s.parse::<u32>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(argv_err(
            flag,
            format!("{s:?} is not a number of {what} (1 or more)"),
        )),
    })
    .transpose()
}

fn argv_err(at: &str, why: impl Into<String>) -> ArgvError {
    ArgvError {
        at: at.into(),
        why: why.into(),
    }
}

impl PartyArgs {
    /// A party with no protection flag, no input, default options and JSON output.
    pub fn new(
        role: Role,
        address: SocketAddr,
        circuit: &str,
        scheme: &str,
        transport: &str,
    ) -> Self {
        PartyArgs {
            role,
            address,
            address_on_stdin: false,
            input: String::new(),
            protection: None,
            circuit: circuit.into(),
            parties: None,
            scheme: scheme.into(),
            backend: None,
            parallel: None,
            threads: None,
            plan_cache: None,
            plan: None,
            transport: transport.into(),
            output: None,
            timeout_secs: None,
            connect_timeout_secs: None,
            accept_timeout_secs: None,
            repeat: None,
            probe_cache_secs: None,
            path: None,
            json: true,
        }
    }

    /// The command line after the program's name: the subcommand first.
    pub fn to_argv(&self) -> Vec<String> {
        let mut v = vec![
            self.role.name().to_string(),
            self.role.address_flag().into(),
            if self.address_on_stdin && self.role == Role::Evaluator {
                "-".into()
            } else {
                self.address.to_string()
            },
            // One argument, so that an empty input or one starting with `-` stays a value.
            format!("--input={}", self.input),
        ];
        if let Some(p) = &self.protection {
            v.extend(p.to_argv());
        }
        v.extend(["--circuit".into(), self.circuit.clone()]);
        if let Some(p) = &self.parties {
            v.extend(["--parties".into(), p.join(",")]);
        }
        v.extend(["--scheme".into(), self.scheme.clone()]);
        if let Some(b) = &self.backend {
            v.extend(["--backend".into(), b.clone()]);
        }
        if let Some(p) = &self.parallel {
            v.extend(["--parallel".into(), p.clone()]);
        }
        if let Some(n) = self.threads {
            v.extend(["--threads".into(), n.to_string()]);
        }
        if let Some(d) = &self.plan_cache {
            v.extend(["--plan-cache".into(), d.display().to_string()]);
        }
        if let Some(p) = &self.plan {
            v.extend(["--plan".into(), p.clone()]);
        }
        v.extend(["--transport".into(), self.transport.clone()]);
        if let Some(o) = &self.output {
            v.extend(["--output".into(), o.clone()]);
        }
        if let Some(t) = self.timeout_secs {
            v.extend(["--timeout".into(), t.to_string()]);
        }
        if let Some(t) = self.connect_timeout_secs {
            v.extend(["--connect-timeout".into(), t.to_string()]);
        }
        if let Some(t) = self.accept_timeout_secs {
            v.extend(["--accept-timeout".into(), t.to_string()]);
        }
        if let Some(n) = self.repeat {
            v.extend(["--repeat".into(), n.to_string()]);
        }
        if let Some(t) = self.probe_cache_secs {
            v.extend(["--probe-cache".into(), t.to_string()]);
        }
        if let Some((rtt_ms, bandwidth)) = self.path {
            v.extend([
                "--rtt-ms".into(),
                rtt_ms.to_string(),
                "--bandwidth".into(),
                bandwidth.to_string(),
            ]);
        }
        if self.json {
            v.push("--json".into());
        }
        v
    }

    /// Reads a command line written by [`PartyArgs::to_argv`]; anything else (an unknown
    /// flag, a missing value, a flag twice) is an error naming the argument.
    pub fn from_argv(argv: &[String]) -> Result<Self, ArgvError> {
        let mut it = argv.iter();
        let role = match it.next().map(String::as_str) {
            Some("garbler") => Role::Garbler,
            Some("evaluator") => Role::Evaluator,
            other => {
                return Err(argv_err(
                    other.unwrap_or(""),
                    "expected the subcommand garbler or evaluator",
                ))
            }
        };
        let mut flags: Vec<(String, Option<String>)> = Vec::new();
        while let Some(a) = it.next() {
            let (flag, inline) = match a.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f.to_string(), Some(v.to_string())),
                _ => (a.clone(), None),
            };
            if flags.iter().any(|(f, _)| *f == flag) {
                return Err(argv_err(a, "given twice"));
            }
            let takes_value = !matches!(flag.as_str(), "--insecure" | "--json");
            let value = match (takes_value, inline) {
                (false, None) => None,
                (false, Some(_)) => return Err(argv_err(a, "takes no value")),
                (true, Some(v)) => Some(v),
                (true, None) => Some(
                    it.next()
                        .cloned()
                        .ok_or_else(|| argv_err(a, "needs a value"))?,
                ),
            };
            flags.push((flag, value));
        }
        Self::from_flags(role, flags)
    }

    fn from_flags(role: Role, flags: Vec<(String, Option<String>)>) -> Result<Self, ArgvError> {
        let take = |name: &str| {
            flags
                .iter()
                .position(|(f, _)| f == name)
                .map(|i| flags[i].1.clone().unwrap_or_default())
        };
        let required = |v: Option<String>, name: &str| v.ok_or_else(|| argv_err(name, "missing"));
        let number = |name: &str, v: Option<String>| -> Result<Option<f64>, ArgvError> {
            v.map(|s| {
                s.parse()
                    .map_err(|_| argv_err(name, format!("{s:?} is not a number")))
            })
            .transpose()
        };
        let address_flag = role.address_flag();
        let address = required(take(address_flag), address_flag)?;
        let address_on_stdin = role == Role::Evaluator && address == "-";
        let address = if address_on_stdin {
            SocketAddr::from(([0, 0, 0, 0], 0))
        } else {
            address
                .parse()
                .map_err(|_| argv_err(address_flag, format!("{address:?} is not IP:PORT")))?
        };
        let insecure = take("--insecure").is_some();
        let protection = match (
            insecure,
            take("--psk-file"),
            take("--key"),
            take("--peer-key"),
        ) {
            (false, None, None, None) => None,
            (true, None, None, None) => Some(Protection::Insecure),
            (false, Some(p), None, None) => Some(Protection::PskFile(p.into())),
            (false, None, Some(key), Some(peer_key)) => Some(Protection::Pinned {
                key: key.into(),
                peer_key,
            }),
            _ => return Err(argv_err("--insecure", "conflicting protection flags")),
        };
        let rtt = number("--rtt-ms", take("--rtt-ms"))?;
        let bandwidth = take("--bandwidth")
            .map(|s| {
                s.parse::<u64>()
                    .map_err(|_| argv_err("--bandwidth", format!("{s:?} is not bits per second")))
            })
            .transpose()?;
        let repeat = count("--repeat", take("--repeat"), "computations")?;
        let threads = count("--threads", take("--threads"), "threads")?;
        let path = match (rtt, bandwidth) {
            (Some(r), Some(b)) => Some((r, b)),
            (None, None) => None,
            _ => {
                return Err(argv_err(
                    "--rtt-ms",
                    "needs --bandwidth, and the other way round",
                ))
            }
        };
        let args = PartyArgs {
            role,
            address,
            address_on_stdin,
            input: take("--input").unwrap_or_default(),
            protection,
            circuit: required(take("--circuit"), "--circuit")?,
            parties: take("--parties").map(|p| p.split(',').map(str::to_string).collect()),
            scheme: required(take("--scheme"), "--scheme")?,
            backend: take("--backend"),
            parallel: take("--parallel"),
            threads,
            plan_cache: take("--plan-cache").map(PathBuf::from),
            plan: take("--plan"),
            transport: required(take("--transport"), "--transport")?,
            output: take("--output"),
            timeout_secs: number("--timeout", take("--timeout"))?,
            connect_timeout_secs: number("--connect-timeout", take("--connect-timeout"))?,
            accept_timeout_secs: number("--accept-timeout", take("--accept-timeout"))?,
            repeat,
            probe_cache_secs: number("--probe-cache", take("--probe-cache"))?,
            path,
            json: take("--json").is_some(),
        };
        let known = [
            address_flag,
            "--input",
            "--insecure",
            "--psk-file",
            "--key",
            "--peer-key",
            "--circuit",
            "--parties",
            "--scheme",
            "--backend",
            "--parallel",
            "--threads",
            "--plan-cache",
            "--plan",
            "--transport",
            "--output",
            "--timeout",
            "--connect-timeout",
            "--accept-timeout",
            "--repeat",
            "--probe-cache",
            "--rtt-ms",
            "--bandwidth",
            "--json",
        ];
        if let Some((f, _)) = flags.iter().find(|(f, _)| !known.contains(&f.as_str())) {
            return Err(argv_err(f, "not a flag of the party contract"));
        }
        args.check_roles()?;
        Ok(args)
    }

    /// Refuses flags the other party takes and a probe cache that is no time.
    fn check_roles(&self) -> Result<(), ArgvError> {
        let (role, args) = (self.role, self);
        if role == Role::Evaluator && args.accept_timeout_secs.is_some() {
            return Err(argv_err("--accept-timeout", "only the garbler takes it"));
        }
        if args
            .probe_cache_secs
            .is_some_and(|t| !t.is_finite() || t < 0.0)
        {
            return Err(argv_err(
                "--probe-cache",
                "not a number of seconds (0 or more)",
            ));
        }
        if role == Role::Garbler && args.probe_cache_secs.is_some() {
            return Err(argv_err(
                "--probe-cache",
                "only the evaluator takes it (it measures the path under --transport auto)",
            ));
        }
        if role == Role::Garbler && args.repeat.is_some() {
            return Err(argv_err(
                "--repeat",
                "only the evaluator takes it (the garbler serves what the session asks for)",
            ));
        }
        Ok(())
    }
}

/// `--threads` for each of two parties on this machine under `--parallel auto` (`run`,
/// the testbed): half its cores, at least one; their addresses would not tell them that
/// they share it.
pub fn threads_of_two_parties_here() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, usize::from);
    u32::try_from(cores / 2).unwrap_or(u32::MAX).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn argv(s: &[&str]) -> Vec<String> {
        s.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn a_command_line_reads_back_as_written() {
        let mut g = PartyArgs::new(
            Role::Garbler,
            "10.64.0.1:20001".parse().unwrap(),
            "synthetic:and=10,xor=20",
            "ideal",
            "mtcp:streams=8,chunk=65536",
        );
        g.input = "00ff,".into();
        g.backend = Some("aes-ni".into());
        g.parallel = Some("fgp".into());
        g.threads = Some(2);
        g.plan_cache = Some("/tmp/plans".into());
        g.plan = Some("stream".into());
        g.protection = Some(Protection::PskFile("/tmp/k/psk".into()));
        g.timeout_secs = Some(120.0);
        g.accept_timeout_secs = Some(600.0);
        g.path = Some((100.5, 200_000_000));
        let a = g.to_argv();
        assert_eq!(
            a,
            argv(&[
                "garbler",
                "--listen",
                "10.64.0.1:20001",
                "--input=00ff,",
                "--psk-file",
                "/tmp/k/psk",
                "--circuit",
                "synthetic:and=10,xor=20",
                "--scheme",
                "ideal",
                "--backend",
                "aes-ni",
                "--parallel",
                "fgp",
                "--threads",
                "2",
                "--plan-cache",
                "/tmp/plans",
                "--plan",
                "stream",
                "--transport",
                "mtcp:streams=8,chunk=65536",
                "--timeout",
                "120",
                "--accept-timeout",
                "600",
                "--rtt-ms",
                "100.5",
                "--bandwidth",
                "200000000",
                "--json"
            ])
        );
        assert_eq!(PartyArgs::from_argv(&a).unwrap(), g);

        let mut e = PartyArgs::new(
            Role::Evaluator,
            "127.0.0.1:7766".parse().unwrap(),
            "c.txt",
            "prf",
            "tcp",
        );
        e.protection = Some(Protection::Pinned {
            key: "k".into(),
            peer_key: "ab".repeat(32),
        });
        e.parties = Some(vec!["evaluator".into(), "garbler".into()]);
        e.output = Some("evaluator".into());
        e.connect_timeout_secs = Some(2.5);
        e.repeat = Some(20);
        e.json = false;
        assert!(e.to_argv().ends_with(&argv(&["--repeat", "20"])));
        e.transport = "auto".into();
        e.probe_cache_secs = Some(0.0);
        assert!(e
            .to_argv()
            .ends_with(&argv(&["--repeat", "20", "--probe-cache", "0"])));
        assert_eq!(PartyArgs::from_argv(&e.to_argv()).unwrap(), e);
        e.probe_cache_secs = Some(90.5);
        assert!(e.to_argv().ends_with(&argv(&["--probe-cache", "90.5"])));
        assert_eq!(PartyArgs::from_argv(&e.to_argv()).unwrap(), e);
        e.protection = Some(Protection::Insecure);
        assert_eq!(PartyArgs::from_argv(&e.to_argv()).unwrap(), e);
        // An evaluator told its garbler's address on standard input.
        e.address = "0.0.0.0:0".parse().unwrap();
        e.address_on_stdin = true;
        assert_eq!(e.to_argv()[1..3], argv(&["--connect", "-"]));
        assert_eq!(PartyArgs::from_argv(&e.to_argv()).unwrap(), e);
    }

    #[test]
    fn arguments_stored_before_a_field_existed_read_it_as_absent() {
        let mut e = PartyArgs::new(
            Role::Evaluator,
            "127.0.0.1:7766".parse().unwrap(),
            "aes128",
            "ideal",
            "auto",
        );
        e.probe_cache_secs = Some(0.0);
        let json = serde_json::to_value(&e).unwrap();
        assert_eq!(
            serde_json::from_value::<PartyArgs>(json.clone()).unwrap(),
            e
        );
        let mut old = json;
        let fields = old.as_object_mut().unwrap();
        for added in ["probe_cache_secs", "repeat", "accept_timeout_secs"] {
            assert!(fields.remove(added).is_some(), "{added}");
        }
        let read: PartyArgs = serde_json::from_value(old).unwrap();
        assert_eq!(
            (read.probe_cache_secs, read.repeat, read.accept_timeout_secs),
            (None, None, None)
        );
        assert_eq!(read.transport, "auto");
    }

    #[test]
    fn foreign_command_lines_are_refused_with_the_argument() {
        let ok = [
            "garbler",
            "--listen",
            "1.2.3.4:5",
            "--circuit",
            "c",
            "--scheme",
            "s",
        ];
        let with = |extra: &[&str]| {
            let mut v = argv(&ok);
            v.extend(argv(&["--transport", "tcp"]));
            v.extend(argv(extra));
            PartyArgs::from_argv(&v).map_err(|e| e.to_string())
        };
        assert!(with(&[]).is_ok());
        let e = with(&["--frobnicate", "1"]).unwrap_err();
        assert!(e.contains("\"--frobnicate\": not a flag"), "{e}");
        let e = with(&["--timeout"]).unwrap_err();
        assert!(e.contains("\"--timeout\": needs a value"), "{e}");
        let e = with(&["--timeout", "soon"]).unwrap_err();
        assert!(e.contains("\"soon\" is not a number"), "{e}");
        let e = with(&["--insecure", "--psk-file", "k"]).unwrap_err();
        assert!(e.contains("conflicting protection"), "{e}");
        let mut evaluator = argv(&["evaluator", "--connect", "1.2.3.4:5"]);
        evaluator.extend(argv(&ok[3..]));
        evaluator.extend(argv(&["--transport", "tcp", "--accept-timeout", "9"]));
        let e = PartyArgs::from_argv(&evaluator).unwrap_err().to_string();
        assert!(e.contains("only the garbler"), "{e}");
        let e = with(&["--repeat", "2"]).unwrap_err();
        assert!(e.contains("\"--repeat\": only the evaluator"), "{e}");
        let mut evaluator = argv(&["evaluator", "--connect", "1.2.3.4:5"]);
        evaluator.extend(argv(&ok[3..]));
        evaluator.extend(argv(&["--transport", "tcp", "--repeat", "0"]));
        let e = PartyArgs::from_argv(&evaluator).unwrap_err().to_string();
        assert!(e.contains("\"0\" is not a number of computations"), "{e}");
        let e = with(&["--probe-cache", "0"]).unwrap_err();
        assert!(e.contains("\"--probe-cache\": only the evaluator"), "{e}");
        for bad in ["-1", "soon", "inf"] {
            let mut evaluator = argv(&["evaluator", "--connect", "1.2.3.4:5"]);
            evaluator.extend(argv(&ok[3..]));
            evaluator.extend(argv(&["--transport", "auto", "--probe-cache", bad]));
            let e = PartyArgs::from_argv(&evaluator).unwrap_err().to_string();
            assert!(e.contains("\"--probe-cache\""), "{bad}: {e}");
        }
        let e = with(&["--rtt-ms", "5"]).unwrap_err();
        assert!(e.contains("needs --bandwidth"), "{e}");
        let e = with(&["--scheme", "x"]).unwrap_err();
        assert!(e.contains("given twice"), "{e}");
        let e = PartyArgs::from_argv(&argv(&["run"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("garbler or evaluator"), "{e}");
        let e = PartyArgs::from_argv(&argv(&["evaluator", "--listen", "1.2.3.4:5"]))
            .unwrap_err()
            .to_string();
        assert!(e.contains("\"--connect\": missing"), "{e}");
    }
}
