//! `transputation testbed`: emulated links between two network namespaces.
//!
//! `check` builds a topology for a named or custom condition, measures it with the UDP probe
//! (`transputation-probe`, its two ends bound in the two namespaces) and prints expected
//! against measured; `exec` runs a command in each namespace across such a link;
//! `conditions` lists the named conditions; `cleanup` removes leftovers of killed runs; `run`,
//! `report`, `experiments` and `presets` are the experiments (`crate::experiment_cmd`). The
//! libraries are `transputation-netlab` (links) and `transputation-experiments`.

use std::process::Stdio;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use serde_json::json;
use transputation_netlab::spec::{fmt_duration, fmt_rate, parse_rate};
use transputation_netlab::{
    ns, verify, EmulatorKind, HostCc, LinkSpec, Options, Side, Summary, Topology, CONDITIONS,
};

use crate::report::table;

#[derive(Subcommand, Debug)]
pub enum TestbedCommand {
    /// Build an emulated link, measure it with `probe`, compare with the setting, clean up.
    Check(CheckArgs),
    /// Run a command in each namespace across an emulated link (B first, then A), with
    /// $TPB_ADDR_A and $TPB_ADDR_B set; exits when both have finished.
    Exec(ExecArgs),
    /// List the named network conditions.
    Conditions,
    /// Remove the namespaces of killed testbed runs (done at every start anyway).
    Cleanup,
    /// Run an experiment: circuits × schemes × transports × conditions × repetitions, each
    /// run recorded in the results database.
    Run(Box<crate::experiment_cmd::RunArgs>),
    /// Print an experiment's results in the shape of the paper's Table 4 (and plots).
    Report(crate::experiment_cmd::ReportArgs),
    /// List the experiments in the results database.
    Experiments(crate::experiment_cmd::ExperimentsArgs),
    /// List the preset experiments (`run --preset NAME`) and how many runs each plans here.
    Presets,
}

/// The link: a named condition or custom parameters, and the emulator.
#[derive(Args, Debug)]
pub struct LinkArgs {
    /// A named condition (see `transputation testbed conditions`).
    #[arg(long, conflicts_with_all = ["rtt", "rate", "loss", "jitter", "queue"])]
    condition: Option<String>,
    /// Round-trip time, split evenly over the two directions (e.g. 100ms).
    #[arg(long)]
    rtt: Option<String>,
    /// Rate each way (e.g. 500mbit); none: unlimited.
    #[arg(long)]
    rate: Option<String>,
    /// Loss rate each way (e.g. 0.1%).
    #[arg(long)]
    loss: Option<String>,
    /// Jitter each way, uniform in ± this (e.g. 1ms).
    #[arg(long)]
    jitter: Option<String>,
    /// Bottleneck queue: a time at the link rate (20ms, the default) or bytes (64kb).
    #[arg(long)]
    queue: Option<String>,
    /// The link emulator: auto, netem or emu.
    #[arg(long, default_value = "auto")]
    emulator: String,
    /// Cap every rate at this (e.g. 500mbit, to keep a 2-core machine's timings clean).
    #[arg(long)]
    max_rate: Option<String>,
    /// TCP congestion control of the emulated hosts, the default for `tcp`: cubic (Linux's
    /// default), another algorithm the kernel has (reno, bbr, ...), or `system` for this
    /// machine's.
    #[arg(long, value_name = "NAME", default_value = "cubic")]
    host_cc: String,
    /// Seed of the loss and jitter draws.
    #[arg(long, default_value_t = 0)]
    seed: u64,
}

impl LinkArgs {
    fn spec(&self) -> Result<(LinkSpec, Options)> {
        let mut spec = match &self.condition {
            Some(c) => LinkSpec::condition(c)?,
            None => LinkSpec::parse_custom(
                self.rtt.as_deref(),
                self.rate.as_deref(),
                self.loss.as_deref(),
                self.jitter.as_deref(),
                self.queue.as_deref(),
            )?,
        };
        spec.seed = self.seed;
        let opts = Options {
            emulator: self.emulator.parse::<EmulatorKind>()?,
            max_rate_bps: self.max_rate.as_deref().map(parse_rate).transpose()?,
            host_cc: self.host_cc.parse::<HostCc>()?,
        };
        Ok((spec, opts))
    }
}

#[derive(Args, Debug)]
pub struct CheckArgs {
    #[command(flatten)]
    link: LinkArgs,
    /// Pings for the round trip.
    #[arg(long, default_value_t = 20)]
    pings: u32,
    /// Most train packets for loss and rate (fewer if the queue holds fewer).
    #[arg(long, default_value_t = 2000)]
    train: u64,
    /// Seconds the measurement may take.
    #[arg(long, default_value_t = 60)]
    timeout: u64,
    /// Print JSON: {"topology": .., "measured": .., "verdicts": [..], "stats": ..}.
    #[arg(long)]
    json: bool,
}

#[derive(Args, Debug)]
pub struct ExecArgs {
    #[command(flatten)]
    link: LinkArgs,
    /// Shell command for side A (run with `sh -c`).
    #[arg(long)]
    a: String,
    /// Shell command for side B (started first).
    #[arg(long)]
    b: Option<String>,
}

pub fn run(cmd: TestbedCommand) -> Result<()> {
    match cmd {
        TestbedCommand::Check(args) => check(args),
        TestbedCommand::Exec(args) => exec(args),
        TestbedCommand::Run(args) => crate::experiment_cmd::run(*args),
        TestbedCommand::Report(args) => crate::experiment_cmd::report_cmd(args),
        TestbedCommand::Experiments(args) => crate::experiment_cmd::list(args),
        TestbedCommand::Presets => crate::experiment_cmd::presets(),
        TestbedCommand::Conditions => {
            let rows: Vec<Vec<String>> = CONDITIONS
                .iter()
                .map(|c| {
                    vec![
                        c.name.to_string(),
                        fmt_duration(Duration::from_micros(c.rtt_us)),
                        fmt_rate(c.rate_bps),
                        c.about.to_string(),
                    ]
                })
                .collect();
            out!("{}", table(&["condition", "rtt", "rate", "source"], &rows))?;
            Ok(())
        }
        TestbedCommand::Cleanup => {
            ns::check_privileges()?;
            let removed = ns::remove_stale();
            if removed.is_empty() {
                outln!("no leftovers")?;
            }
            for n in removed {
                outln!("removed {n}")?;
            }
            Ok(())
        }
    }
}

fn build(link: &LinkArgs) -> Result<Topology> {
    let (spec, opts) = link.spec()?;
    Topology::with_options(&spec, opts).context("building the testbed topology")
}

/// `eu-us link (emu emulator; hosts' TCP congestion control cubic), A 10.64.0.1 → B ...`.
fn summary_line(s: &Summary) -> String {
    format!(
        "{} link ({} emulator{}; hosts' TCP congestion control {}), A {} → B {}",
        s.applied.name,
        s.emulator,
        s.cap
            .as_deref()
            .map(|c| format!("; {c}"))
            .unwrap_or_default(),
        s.host_cc,
        s.addrs[0],
        s.addrs[1],
    )
}

fn check(args: CheckArgs) -> Result<()> {
    let topo = build(&args.link)?;
    let train = verify::train_len(&topo, args.train);
    let m = verify::measure(&topo, args.pings, train, Duration::from_secs(args.timeout))?;
    let verdicts = verify::check(&topo, &m);
    let ok = verdicts.iter().all(|v| v.pass);
    let s = topo.summary();
    if args.json {
        if let Some(cap) = &s.cap {
            eprintln!("testbed: {cap}");
        }
        let v = json!({
            "topology": s,
            "measured": m,
            "verdicts": verdicts,
            "stats": topo.stats(),
            "pass": ok,
        });
        outln!("{}", serde_json::to_string_pretty(&v)?)?;
    } else {
        outln!("{}", summary_line(s))?;
        outln!("  A→B: {}", s.applied.a_to_b)?;
        outln!("  B→A: {}", s.applied.b_to_a)?;
        let rows: Vec<Vec<String>> = verdicts
            .iter()
            .map(|v| {
                vec![
                    v.what.to_string(),
                    format!("{:.3} {}", v.expected, v.unit),
                    format!("{:.3} – {:.3}", v.range.0, v.range.1),
                    format!("{:.3} {}", v.measured, v.unit),
                    if v.pass { "ok" } else { "FAIL" }.to_string(),
                ]
            })
            .collect();
        out!(
            "{}",
            table(&["", "setting", "accepted", "measured", ""], &rows)
        )?;
        outln!(
            "  {} pings, {} of {} train packets arrived; TCP buffers up to {} MiB",
            args.pings,
            m.train_received,
            m.train_sent,
            s.tcp_buffer_max >> 20
        )?;
    }
    drop(topo);
    if !ok {
        bail!("the emulated link does not deliver its setting");
    }
    Ok(())
}

fn exec(args: ExecArgs) -> Result<()> {
    let topo = build(&args.link)?;
    // Standard output is the commands'.
    eprintln!("testbed: {}", summary_line(topo.summary()));
    let spawn = |side: Side, cmd: &str| {
        topo.command(side, "sh")
            .args(["-c", cmd])
            .env("TPB_ADDR_A", topo.addr(Side::A).to_string())
            .env("TPB_ADDR_B", topo.addr(Side::B).to_string())
            .stdin(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {cmd:?} in {}", topo.namespace(side)))
    };
    let mut b = args.b.as_deref().map(|c| spawn(Side::B, c)).transpose()?;
    let a = spawn(Side::A, &args.a)?.wait()?;
    let b = b.as_mut().map(|b| b.wait()).transpose()?;
    drop(topo);
    if !a.success() || b.is_some_and(|b| !b.success()) {
        // Killed by a Ctrl-C's clean-up: that ends the process with its own status.
        transputation_netlab::ns::await_signal_exit();
        bail!(
            "side A exited with {a}{}",
            b.map(|b| format!(", side B with {b}")).unwrap_or_default()
        );
    }
    Ok(())
}
