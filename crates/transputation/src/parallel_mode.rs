//! What `--parallel` names, and what `--parallel auto` picks.
//!
//! `auto` decides per party, before the session, from what the party knows:
//! - its cores: `--threads`, or this machine's, half of them when the peer is on this
//!   machine too (a loopback address: both parties' work shares them);
//! - the link: with `--bandwidth`, whether it carries more than one thread garbles
//!   ([`one_thread_bps`]); a slower link, not the processor, sets the session's pace;
//! - the circuit: whether it declares parallel regions, cut into stages of at least two
//!   pieces.
//!
//! Fewer than two cores, or a link slower than one thread: `none`. Regions: `cgp` if the
//! peer takes frames too (its `--parallel` is `cgp` or `auto`; the session header says so,
//! `transputation_2pc::TableOrder::FramesIfPeer`), else `fgp`. Otherwise `fgp`, which
//! splits only the circuit's wide levels. Never `ipp`, which needs a connection per part
//! agreed before connecting; name it where both directions of a slow link should carry
//! tables.

use std::sync::Arc;

use clap::ValueEnum;
use transputation_circuits::Circuit;
use transputation_garble::coarse::Layout;
use transputation_garble::Scheme;
use transputation_model::HostConstants;

/// How a party garbles or evaluates (`--parallel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ParallelMode {
    /// One thread.
    None,
    /// Fine-grained parallelism: each wide wave of gates shared among the threads.
    Fgp,
    /// Inter-party parallelism: the circuit's independent parts split in two, each party
    /// garbling one and evaluating the other at once, each on a connection of its own.
    /// Both parties must give it.
    Ipp,
    /// Coarse-grained parallelism: the circuit's parallel regions garbled and evaluated by
    /// pieces, side by side on --threads threads, the tables sent as frames of the pieces.
    /// Both parties must give it (or auto where it offers it).
    Cgp,
    /// Chosen by this party from its cores, the link and the circuit: none, fgp, or cgp if
    /// the circuit has parallel regions and the peer takes it (its --parallel cgp or auto),
    /// else fgp. Never ipp.
    Auto,
}

impl ParallelMode {
    /// The name on the command line.
    pub(crate) fn name(self) -> &'static str {
        match self {
            ParallelMode::None => "none",
            ParallelMode::Fgp => "fgp",
            ParallelMode::Ipp => "ipp",
            ParallelMode::Cgp => "cgp",
            ParallelMode::Auto => "auto",
        }
    }
}

/// Where a party's peer is, as far as it knows before the session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PeerPlace {
    /// On this machine (a loopback address): the two parties share its cores.
    ThisMachine,
    /// Elsewhere, or not known yet.
    Elsewhere,
}

impl PeerPlace {
    /// Where a garbler listening on `listen` finds its peer: on this machine if it listens
    /// on a loopback address only.
    pub(crate) fn of_listener(listen: std::net::SocketAddr) -> PeerPlace {
        match listen.ip().is_loopback() {
            true => PeerPlace::ThisMachine,
            false => PeerPlace::Elsewhere,
        }
    }
}

/// How a party garbles or evaluates, `--parallel` and `--threads` resolved for its loaded
/// circuit.
#[derive(Clone)]
pub(crate) struct ParallelChoice {
    /// `none`, `fgp`, `ipp` or `cgp`; never `auto`.
    pub(crate) mode: ParallelMode,
    /// Threads of `fgp` or `cgp` (1 otherwise).
    pub(crate) threads: usize,
    /// The circuit's pieces, under `cgp`.
    pub(crate) layout: Option<Arc<Layout>>,
    /// Under `--parallel auto`: why this mode (`cgp` then means: if the peer takes it,
    /// else `fgp` on the same threads).
    pub(crate) auto_why: Option<String>,
}

impl ParallelChoice {
    /// What a session came to whose tables came as frames (`frames`, the report's) or
    /// not: `cgp`, or the mode `auto` fell back to.
    pub(crate) fn ran(&self, frames: bool) -> (&'static str, usize) {
        match self.mode {
            ParallelMode::Cgp if !frames => ("fgp", self.threads),
            m => (m.name(), self.threads),
        }
    }
}

/// Bits of tables a second that one thread garbles and sends under `scheme`, as `auto`
/// weighs a link against: the model's host pipeline rate (measured for the half-gates
/// schemes, 700 MB/s on this project's 2-vCPU machine), and a third of it for `prf`,
/// whose AND gates take 5–8 times the AES work of `ideal`'s for 1.5 times the bytes.
pub(crate) fn one_thread_bps(scheme: Scheme) -> f64 {
    let half_gates = HostConstants::default().pipeline_rate * 8.0;
    match scheme {
        Scheme::Prf => half_gates / 3.0,
        Scheme::Circular | Scheme::Ideal => half_gates,
    }
}

/// What `auto` knows before it looks at the circuit's pieces.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AutoFacts {
    /// Threads this party may use, and where the figure comes from.
    pub(crate) cores: (usize, &'static str),
    /// The link's rate (`--bandwidth`), bits a second.
    pub(crate) link_bps: Option<u64>,
    pub(crate) scheme: Scheme,
    /// Whether the circuit declares parallel regions.
    pub(crate) regions: bool,
    /// Whether `--plan` or `--plan-cache` was given, which `cgp` does not take.
    pub(crate) planned: bool,
}

/// `auto`'s mode before the circuit is cut (`cgp` may still become `fgp`), its threads,
/// and why.
pub(crate) fn decide_auto(f: AutoFacts) -> (ParallelMode, usize, String) {
    let (cores, from) = f.cores;
    if cores < 2 {
        return (
            ParallelMode::None,
            1,
            format!("{cores} thread for this party ({from})"),
        );
    }
    let one = one_thread_bps(f.scheme);
    if let Some(link) = f.link_bps.filter(|&l| (l as f64) < one) {
        return (
            ParallelMode::None,
            1,
            format!(
                "the link ({:.0} Mbit/s) is slower than one thread garbles {} (about {:.0} \
                 Mbit/s)",
                link as f64 / 1e6,
                f.scheme,
                one / 1e6
            ),
        );
    }
    let cores_said = format!("{cores} threads ({from})");
    match (f.regions, f.planned) {
        (true, false) => (
            ParallelMode::Cgp,
            cores,
            format!("parallel regions and {cores_said}"),
        ),
        (true, true) => (
            ParallelMode::Fgp,
            cores,
            format!("{cores_said}; not cgp, which takes neither --plan nor --plan-cache"),
        ),
        (false, _) => (
            ParallelMode::Fgp,
            cores,
            format!("{cores_said}, no parallel regions: fgp splits the wide levels"),
        ),
    }
}

/// `auto`'s choice for `circuit` under `facts`: [`decide_auto`], then under `cgp` the
/// circuit cut into its pieces, kept if a stage has two of them at least (else nothing runs
/// side by side, and the choice is `fgp`, with why). The mode, its threads, why, and the
/// pieces under `cgp`.
pub(crate) fn decide_auto_for(
    circuit: &Circuit,
    facts: AutoFacts,
) -> (ParallelMode, usize, String, Option<Layout>) {
    let (mode, threads, why) = decide_auto(facts);
    if mode != ParallelMode::Cgp {
        return (mode, threads, why, None);
    }
    match Layout::of(circuit, facts.scheme) {
        Ok(l) if l.pieces() > l.stages() => (mode, threads, why, Some(l)),
        Ok(_) => (
            ParallelMode::Fgp,
            threads,
            format!("{threads} threads; fgp: the regions make no stage of two pieces"),
            None,
        ),
        Err(e) => (
            ParallelMode::Fgp,
            threads,
            format!("{threads} threads; fgp: the regions cannot be cut ({e})"),
            None,
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> AutoFacts {
        AutoFacts {
            cores: (4, "--threads"),
            link_bps: None,
            scheme: Scheme::Ideal,
            regions: true,
            planned: false,
        }
    }

    #[test]
    fn auto_weighs_cores_link_and_regions_in_that_order() {
        let mode = |f: AutoFacts| {
            let (m, threads, why) = decide_auto(f);
            assert!(!why.is_empty());
            (m, threads)
        };
        assert_eq!(mode(facts()), (ParallelMode::Cgp, 4));
        let one = AutoFacts {
            cores: (1, "--threads"),
            ..facts()
        };
        assert_eq!(mode(one), (ParallelMode::None, 1));
        // A link slower than one thread garbles: the link sets the pace.
        let slow = one_thread_bps(Scheme::Ideal) as u64 / 2;
        let slow_link = AutoFacts {
            link_bps: Some(slow),
            ..facts()
        };
        assert_eq!(mode(slow_link), (ParallelMode::None, 1));
        // The same link is faster than one thread garbles `prf`.
        let prf = AutoFacts {
            scheme: Scheme::Prf,
            ..slow_link
        };
        assert_eq!(mode(prf), (ParallelMode::Cgp, 4));
        let no_regions = AutoFacts {
            regions: false,
            ..facts()
        };
        assert_eq!(mode(no_regions), (ParallelMode::Fgp, 4));
        let planned = AutoFacts {
            planned: true,
            ..facts()
        };
        assert_eq!(mode(planned), (ParallelMode::Fgp, 4));
    }

    #[test]
    fn a_session_without_frames_ran_fgp_where_auto_offered_cgp() {
        let choice = |mode| ParallelChoice {
            mode,
            threads: 2,
            layout: None,
            auto_why: None,
        };
        assert_eq!(choice(ParallelMode::Cgp).ran(true), ("cgp", 2));
        assert_eq!(choice(ParallelMode::Cgp).ran(false), ("fgp", 2));
        assert_eq!(choice(ParallelMode::Fgp).ran(false), ("fgp", 2));
    }
}
