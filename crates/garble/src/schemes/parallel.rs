//! How a garbler or evaluator lays out its work, [`Parallel`]: the window of the schedule
//! (module `waves`) it plans the circuit in, and the threads that share its wide waves
//! (fine-grained parallelism, Buescher–Katzenbeisser, USENIX Security 2015, §4.3); and how a
//! wave is cut into parts for them. Local tuning: any setting gives the same bytes.
//!
//! # Why parallel garbling changes nothing
//! A wave's crypto gates are independent (their inputs are ready before the wave), and what
//! each computes depends only on its input labels and on numbers fixed by the circuit: its
//! AND index `n` for the half-gates tweaks `2(B + n) + 1`, `2(B + n) + 2`, its gate index
//! `g` for `prf`'s PRF inputs `blk(g, r)`, and `prf`'s permute bit `πc`, drawn before the
//! window by its position in the circuit. Each part reads its gates' input labels from the
//! table as it was before the wave, garbles them with the scheme's own kernels into a copy
//! of its own, writes their tables into its own disjoint slice of the window's bytes (each
//! gate's table has its place in the stream; `prf`'s parts begin at an AND gate that opens
//! a mask byte, so that both nibbles of every byte belong to one part), and the calling
//! thread writes the output labels back in the order of the ops, as the sequential loop
//! does. So every hash query or PRF call is the one the sequential garbler makes, with the
//! same key, input and tweak, and the bytes are the same: the security argument of each
//! scheme (the `half_gates` and `prf` module documentation) applies unchanged. Nothing of
//! the split reaches the peer.

use std::fmt;
use std::sync::Arc;

use rayon::{ThreadPool, ThreadPoolBuilder};

use super::waves::{MAX_WINDOW, WINDOW, WINDOW_UNIT};

/// The smallest wave part of the half-gates schemes' AND gates worth a thread of its own,
/// from the level-width curve measured on the 2-vCPU development machine
/// (docs/BENCHMARKS.md, issue 21): a fork and join cost it 5–10 µs per wave, and its two
/// vCPUs garbled `ideal` no faster than one up to levels of 16,384 AND gates, so only
/// levels of 65,536 and more are split (which needs a window of that many gates).
pub const MIN_WAVE_HALF_GATES: usize = 32768;
/// The same for `prf`'s crypto gates (several times the work of a half-gates AND gate):
/// on that machine two threads first paid at levels of 16,384 gates.
pub const MIN_WAVE_PRF: usize = 8192;

/// How a garbler or evaluator works through the circuit: the number of gates per window of
/// its schedule, and the threads that garble (or evaluate) a wave's crypto gates together
/// when there are at least `min_wave` of them per thread. Every setting gives the same
/// tables, labels and decoding bits (the module documentation says why), so garbler and
/// evaluator choose theirs independently and a session does not send it.
#[derive(Clone)]
pub struct Parallel {
    /// The threads, if more than one.
    pool: Option<Arc<ThreadPool>>,
    threads: usize,
    /// Crypto gates per part at least; `None` for the scheme's default.
    min_wave: Option<usize>,
    window: usize,
    /// Gates planned at a time; `None` for the planner's choice by the circuit's size.
    segment: Option<usize>,
    /// Where plans of circuits planned whole are kept between runs.
    plan_cache: Option<Arc<std::path::PathBuf>>,
}

impl Parallel {
    /// One thread, windows of 8192 gates: the sequential garbler.
    pub fn none() -> Parallel {
        Parallel {
            pool: None,
            threads: 1,
            min_wave: None,
            window: WINDOW,
            segment: None,
            plan_cache: None,
        }
    }

    /// Fine-grained parallelism on `threads` threads: the calling thread and a pool of
    /// `threads − 1` of its own (one thread is [`Parallel::none`]), windows of 8192 gates
    /// and the schemes' default `min_wave`.
    ///
    /// # Errors
    /// If `threads` is 0 or the threads cannot be started.
    pub fn fgp(threads: usize) -> Result<Parallel, String> {
        if threads == 0 {
            return Err("at least one thread".into());
        }
        let pool = if threads > 1 {
            let pool = ThreadPoolBuilder::new()
                .num_threads(threads - 1)
                .thread_name(|i| format!("fgp-{i}"))
                .build()
                .map_err(|e| format!("cannot start {threads} garbling threads: {e}"))?;
            Some(Arc::new(pool))
        } else {
            None
        };
        Ok(Parallel {
            pool,
            threads,
            ..Parallel::none()
        })
    }

    /// The same, splitting only waves with at least `min_wave` crypto gates per part (1
    /// splits every wave of two gates or more, as the tests want).
    #[must_use]
    pub fn with_min_wave(self, min_wave: usize) -> Parallel {
        Parallel {
            min_wave: Some(min_wave.max(1)),
            ..self
        }
    }

    /// The same with windows of `window` gates: a multiple of 128 up to 2^24. Wider windows
    /// give wider waves, at the cost of a window's tables held at once.
    ///
    /// # Errors
    /// If `window` is not such a size.
    pub fn with_window(self, window: usize) -> Result<Parallel, String> {
        if window < WINDOW_UNIT || !window.is_multiple_of(WINDOW_UNIT) || window > MAX_WINDOW {
            return Err(format!(
                "a window is a multiple of {WINDOW_UNIT} gates up to {MAX_WINDOW}, not {window}"
            ));
        }
        Ok(Parallel { window, ..self })
    }

    /// Gates planned at a time by default for a circuit of more than
    /// [`Parallel::PLAN_AHEAD_GATES`].
    pub const SEGMENT_GATES: usize = 1 << 19;
    /// A circuit of at most this many gates is planned whole, before the first table, by
    /// default.
    pub const PLAN_AHEAD_GATES: u64 = 1 << 22;

    /// The same, planning the circuit `gates` at a time (rounded up to whole windows) as
    /// garbling or evaluation reaches each segment, whatever the circuit's size. By default
    /// a circuit of at most [`Parallel::PLAN_AHEAD_GATES`] gates is planned whole before
    /// the first table and a larger one [`Parallel::SEGMENT_GATES`] at a time; the bytes are
    /// the same either way.
    #[must_use]
    pub fn with_segment(self, gates: usize) -> Parallel {
        Parallel {
            segment: Some(gates.clamp(1, usize::MAX / 2)),
            ..self
        }
    }

    /// The same, planning the whole circuit before the first table whatever its size (its
    /// program, 24 bytes a gate, then held at once).
    #[must_use]
    pub fn with_plan_ahead(self) -> Parallel {
        Parallel {
            segment: Some(usize::MAX),
            ..self
        }
    }

    /// The same, keeping the plans of circuits planned whole in `dir` between runs: a
    /// garbler or evaluator of a circuit planned before loads its plan instead of planning
    /// again (after checking it whole; a corrupt or foreign entry is planned again, with a
    /// warning on standard error, and replaced). The bytes are the same either way.
    #[must_use]
    pub fn with_plan_cache(self, dir: impl Into<std::path::PathBuf>) -> Parallel {
        Parallel {
            plan_cache: Some(Arc::new(dir.into())),
            ..self
        }
    }

    /// Where plans are kept, if anywhere ([`Parallel::with_plan_cache`]).
    pub fn plan_cache(&self) -> Option<&std::path::Path> {
        self.plan_cache.as_deref().map(|p| p.as_path())
    }

    /// Gates planned at a time, if set ([`Parallel::with_segment`]; `usize::MAX`:
    /// [`Parallel::with_plan_ahead`]).
    pub fn segment(&self) -> Option<usize> {
        self.segment
    }

    /// Gates per window.
    pub fn window(&self) -> usize {
        self.window
    }

    /// Threads (1 without fine-grained parallelism).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// The fewest crypto gates per part of a split wave, if given
    /// ([`Scheme::min_wave`](super::Scheme::min_wave) has the schemes' defaults).
    pub fn min_wave(&self) -> Option<usize> {
        self.min_wave
    }

    /// How a wave of `n` crypto gates is run: `None` on the calling thread, or in
    /// `parts` parts on the pool, when each gets at least `min_wave` of them
    /// (`default_min` if not given: [`MIN_WAVE_HALF_GATES`] or [`MIN_WAVE_PRF`]).
    pub(crate) fn split(&self, n: usize, default_min: usize) -> Option<(&ThreadPool, usize)> {
        let pool = self.pool.as_deref()?;
        let parts = (n / self.min_wave.unwrap_or(default_min)).min(self.threads);
        (parts >= 2).then_some((pool, parts))
    }
}

/// Runs `f` on every job: the first on the calling thread, the others on `pool` at the
/// same time; returns when all are done. (The caller works rather than waits: on a machine
/// with as many cores as threads, a waiting caller beside a busy pool would leave a core
/// to be shared by a thread that yields and one that works.)
pub(crate) fn run_parts<T: Send>(pool: &ThreadPool, jobs: &mut [T], f: impl Fn(&mut T) + Sync) {
    let Some((first, rest)) = jobs.split_first_mut() else {
        return;
    };
    let f = &f;
    pool.in_place_scope(|s| {
        for job in rest {
            s.spawn(move |_| f(job));
        }
        f(first);
    });
}

/// The starts of `parts` nearly equal parts of `range`, and its end.
pub(crate) fn even_bounds(range: std::ops::Range<usize>, parts: usize) -> Vec<usize> {
    let n = range.len();
    (0..=parts).map(|p| range.start + p * n / parts).collect()
}

/// Cuts `bytes` at the offsets `cuts` (increasing, within it): `parts + 1` cuts give
/// `parts` slices, the first from 0 (what precedes the first cut belongs to it) and the
/// last to the end.
pub(crate) fn cut_at<'b>(bytes: &'b mut [u8], cuts: &[usize]) -> Vec<&'b mut [u8]> {
    let mut out = Vec::with_capacity(cuts.len().saturating_sub(1));
    let (mut rest, mut at) = (bytes, 0);
    for &c in &cuts[1..cuts.len().saturating_sub(1)] {
        let (head, tail) = rest.split_at_mut(c - at);
        out.push(head);
        (rest, at) = (tail, c);
    }
    out.push(rest);
    out
}

impl PartialEq for Parallel {
    fn eq(&self, other: &Parallel) -> bool {
        (self.threads, self.min_wave, self.window) == (other.threads, other.min_wave, other.window)
    }
}

impl Eq for Parallel {}

impl Default for Parallel {
    fn default() -> Parallel {
        Parallel::none()
    }
}

impl fmt::Debug for Parallel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parallel")
            .field("threads", &self.threads)
            .field("min_wave", &self.min_wave)
            .field("window", &self.window)
            .finish()
    }
}
