//! How a party's `--parallel` and `--threads` become the threads it garbles or evaluates
//! on and the session's options: fine-grained parallelism's pool, coarse-grained
//! parallelism's pieces, and the flags each mode refuses.

use std::sync::Arc;

use anyhow::{bail, Result};
use transputation_2pc::{Coarse, Options};
use transputation_garble::Parallel;

use crate::auto_connect::TransportArg;
use crate::party_cmd::{Loaded, ParallelMode, PlanMode, SessionArgs};

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

    /// The threads `--parallel` and `--threads` ask for (1: sequential).
    pub(crate) fn threads_wanted(&self) -> Result<usize> {
        Ok(match (self.parallel, self.threads) {
            (Some(ParallelMode::None), Some(n)) if n > 1 => {
                bail!("--threads {n} needs --parallel fgp or cgp (--parallel none is one thread)")
            }
            (Some(ParallelMode::Ipp), Some(n)) if n > 1 => {
                bail!("--threads {n} needs --parallel fgp or cgp (--parallel ipp runs each part on one thread)")
            }
            (Some(ParallelMode::None | ParallelMode::Ipp), _) | (None, None) => 1,
            (Some(ParallelMode::Fgp | ParallelMode::Cgp), None) => {
                std::thread::available_parallelism().map_or(1, usize::from)
            }
            (_, Some(n)) => n as usize,
        })
    }

    /// How this party garbles or evaluates: its threads, started once per process (a
    /// serving garbler's sessions share them).
    pub(crate) fn parallel(&self) -> Result<Parallel> {
        static POOL: std::sync::Mutex<Option<Parallel>> = std::sync::Mutex::new(None);
        let threads = self.threads_wanted()?;
        if self.parallel == Some(ParallelMode::Cgp) {
            // The pieces' threads are the coarse garbler's own (`options_for`).
            return Ok(Parallel::none());
        }
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

    /// Whether both parties garble (`--parallel ipp`).
    pub(crate) fn is_ipp(&self) -> bool {
        self.parallel == Some(ParallelMode::Ipp)
    }

    /// The session's options; `config` has checked `--parallel` and `--threads` (were they
    /// wrong, this party would garble on one thread).
    pub(crate) fn options(&self) -> Options {
        Options {
            output: self.output,
            backend: self.backend(),
            parallel: self.parallel().unwrap_or_else(|_| Parallel::none()),
            ..Options::new(self.scheme)
        }
    }

    /// The session's options for the circuit `loaded` holds: [`SessionArgs::options`], and
    /// under --parallel cgp its pieces on --threads threads.
    pub(crate) fn options_for(&self, loaded: &Loaded) -> Options {
        Options {
            coarse: loaded.coarse.as_ref().map(|layout| Coarse {
                layout: Arc::clone(layout),
                threads: self.threads_wanted().unwrap_or(1),
            }),
            ..self.options()
        }
    }
}
