//! How a party's `--parallel` and `--threads` become the threads it garbles or evaluates
//! on and the session's options: fine-grained parallelism's pool, coarse-grained
//! parallelism's pieces, the flags each mode refuses, and `--parallel auto`'s choice for
//! the loaded circuit (its rule: `crate::parallel_mode`).

use std::sync::Arc;

use anyhow::{bail, Result};
use transputation_2pc::{Coarse, Options};
use transputation_garble::coarse::Layout;
use transputation_garble::Parallel;

use crate::auto_connect::TransportArg;
use crate::parallel_mode::{decide_auto_for, AutoFacts, ParallelChoice, ParallelMode, PeerPlace};
use crate::party_cmd::{Loaded, PlanMode, SessionArgs};

impl SessionArgs {
    /// The flags `--parallel ipp` (`crate::ipp_cmd`) and `--parallel cgp` do not take:
    /// checked before anything is loaded or any connection made.
    pub(crate) fn check_parallel(&self) -> Result<()> {
        if self.is_ipp() && !matches!(self.transport, TransportArg::Named(_)) {
            bail!(
                "--parallel ipp needs a named --transport (not auto, whose choice is for one \
                 connection)"
            );
        }
        if self.parallel == Some(ParallelMode::Cgp) {
            if self.plan.is_some() {
                bail!("--plan does not apply to --parallel cgp (its pieces are planned by the default rule)");
            }
            if self.plan_cache.is_some() {
                bail!("--plan-cache does not apply to --parallel cgp (its pieces are planned anew each session)");
            }
        }
        Ok(())
    }

    /// The threads `--parallel` and `--threads` ask for (1: sequential; under `auto`, the
    /// most it may take).
    pub(crate) fn threads_wanted(&self) -> Result<usize> {
        Ok(match (self.parallel, self.threads) {
            (Some(ParallelMode::None), Some(n)) if n > 1 => {
                bail!("--threads {n} needs --parallel fgp, cgp or auto (--parallel none is one thread)")
            }
            (Some(ParallelMode::Ipp), Some(n)) if n > 1 => {
                bail!("--threads {n} needs --parallel fgp, cgp or auto (--parallel ipp runs each part on one thread)")
            }
            (Some(ParallelMode::None | ParallelMode::Ipp), _) | (None, None) => 1,
            (Some(ParallelMode::Fgp | ParallelMode::Cgp | ParallelMode::Auto), None) => {
                std::thread::available_parallelism().map_or(1, usize::from)
            }
            (_, Some(n)) => n as usize,
        })
    }

    /// How this party garbles `circuit`, loaded: the mode asked for, or `auto`'s choice for
    /// a peer at `peer`; cuts the circuit into pieces where the mode is `cgp`.
    pub(crate) fn parallel_choice(
        &self,
        circuit: &transputation_circuits::Circuit,
        peer: PeerPlace,
    ) -> Result<ParallelChoice> {
        let threads = self.threads_wanted()?;
        let cut = || -> Result<Arc<Layout>> {
            let layout = Layout::of(circuit, self.scheme)
                .map_err(|e| anyhow::anyhow!("--parallel cgp: circuit {}: {e}", self.circuit))?;
            Ok(Arc::new(layout))
        };
        let asked = self.parallel.unwrap_or(if threads > 1 {
            ParallelMode::Fgp
        } else {
            ParallelMode::None
        });
        if asked != ParallelMode::Auto {
            return Ok(ParallelChoice {
                mode: asked,
                threads,
                layout: (asked == ParallelMode::Cgp).then(cut).transpose()?,
                auto_why: None,
            });
        }
        let cores = match (self.threads, peer) {
            (Some(n), _) => (n as usize, "--threads"),
            (None, PeerPlace::ThisMachine) => (
                (threads / 2).max(1),
                "half this machine's, the peer being on it",
            ),
            (None, PeerPlace::Elsewhere) => (threads, "this machine's"),
        };
        let (mode, threads, mut why, layout) = decide_auto_for(
            circuit,
            AutoFacts {
                cores,
                link_bps: self.bandwidth,
                scheme: self.scheme,
                regions: circuit.sections().is_some(),
                planned: self.plan.is_some() || self.plan_cache.is_some(),
            },
        );
        if mode == ParallelMode::Cgp {
            why.push_str(": cgp if the peer takes it, else fgp");
        }
        Ok(ParallelChoice {
            mode,
            threads,
            layout: layout.map(Arc::new),
            auto_why: Some(why),
        })
    }

    /// The pool of `threads` threads for fine-grained parallelism, started once per
    /// process (a serving garbler's sessions share it), with the plan flags.
    fn pool(&self, threads: usize) -> Result<Parallel> {
        static POOL: std::sync::Mutex<Option<Parallel>> = std::sync::Mutex::new(None);
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        let p = match &*pool {
            Some(p) if p.threads() == threads => p.clone(),
            _ => {
                let p = Parallel::fgp(threads).map_err(anyhow::Error::msg)?;
                *pool = Some(p.clone());
                p
            }
        };
        let p = match self.plan {
            Some(PlanMode::Ahead) => p.with_plan_ahead(),
            Some(PlanMode::Stream) => p.with_segment(transputation_garble::Parallel::SEGMENT_GATES),
            None => p,
        };
        Ok(match &self.plan_cache {
            Some(dir) => p.with_plan_cache(dir),
            None => p,
        })
    }

    /// How this party garbles or evaluates outside coarse-grained parallelism: its threads
    /// as asked.
    pub(crate) fn parallel(&self) -> Result<Parallel> {
        let threads = self.threads_wanted()?;
        match self.parallel {
            // The pieces' threads are the coarse garbler's own, and `auto`'s pool is made
            // for its choice (`options_for`).
            Some(ParallelMode::Cgp | ParallelMode::Auto) => Ok(Parallel::none()),
            _ => self.pool(threads),
        }
    }

    /// Starts the threads this party garbles on for `loaded` (`auto`'s choice, or as
    /// asked), so that a pool that cannot start is an error here rather than one thread
    /// in the session.
    pub(crate) fn check_threads(&self, loaded: &Loaded) -> Result<()> {
        match self.parallel {
            Some(ParallelMode::Auto) => self.pool(loaded.parallel.threads).map(drop),
            _ => self.parallel().map(drop),
        }
    }

    /// Whether both parties garble (`--parallel ipp`).
    pub(crate) fn is_ipp(&self) -> bool {
        self.parallel == Some(ParallelMode::Ipp)
    }

    /// The session's options; `config` has checked `--parallel` and `--threads` (were they
    /// wrong, this party would garble on one thread).
    pub(crate) fn options(&self) -> Options {
        self.options_on(self.parallel())
    }

    fn options_on(&self, parallel: Result<Parallel>) -> Options {
        Options {
            output: self.output,
            backend: self.backend(),
            parallel: parallel.unwrap_or_else(|_| Parallel::none()),
            ..Options::new(self.scheme)
        }
    }

    /// The session's options for the circuit `loaded` holds: [`SessionArgs::options`] on
    /// the threads of its [`ParallelChoice`], and under `cgp` its pieces (under `auto`, if
    /// the peer takes them, else `fgp` on those threads).
    pub(crate) fn options_for(&self, loaded: &Loaded) -> Options {
        let choice = &loaded.parallel;
        let auto = self.parallel == Some(ParallelMode::Auto);
        // `auto`'s pool is its choice's threads (one under `none`; under `cgp`, what it
        // falls back on if the peer does not take frames).
        let parallel = match auto {
            true => self.pool(choice.threads),
            false => self.parallel(),
        };
        Options {
            coarse: choice.layout.as_ref().map(|layout| Coarse {
                layout: Arc::clone(layout),
                threads: choice.threads,
                if_peer_willing: auto,
            }),
            ..self.options_on(parallel)
        }
    }
}
