//! How a garbler or evaluator lays out its work, [`Parallel`]: the window of the schedule
//! (module `waves`) it plans the circuit in. Local tuning: any setting gives the same bytes.

use std::fmt;

use super::waves::{MAX_WINDOW, WINDOW, WINDOW_UNIT};

/// How a garbler or evaluator works through the circuit: the number of gates per window of
/// its schedule. Every setting gives the same tables, labels and decoding bits, so garbler
/// and evaluator choose theirs independently and a session does not send it.
#[derive(Clone, PartialEq, Eq)]
pub struct Parallel {
    window: usize,
}

impl Parallel {
    /// Windows of 8192 gates.
    pub fn none() -> Parallel {
        Parallel { window: WINDOW }
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
        Ok(Parallel { window })
    }

    /// Gates per window.
    pub fn window(&self) -> usize {
        self.window
    }
}

impl Default for Parallel {
    fn default() -> Parallel {
        Parallel::none()
    }
}

impl fmt::Debug for Parallel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Parallel")
            .field("window", &self.window)
            .finish()
    }
}
