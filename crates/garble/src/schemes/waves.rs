//! Wave scheduling: which gates of a window of the circuit can be garbled together.
//!
//! Gates are garbled in circuit order as far as the wire format goes (each gate's table has
//! its place in the stream), but the AES calls of independent gates are batched: over a
//! window of consecutive gates, every gate gets a *wave*. A gate that needs AES (a
//! "crypto" gate: AND, and XOR under `prf`) is in the wave after the latest of its inputs;
//! any other gate is in the wave of its latest input. Wave `k` is processed as: all its
//! crypto gates in one batch, then its other gates in circuit order. Every input is then
//! ready when it is read, and a batch holds every gate of the window that could run at that
//! point, not just a run of consecutive ones: ripple-carry adders, for instance, overlap
//! across the window instead of garbling one AND gate per batch.

use std::ops::Range;

use transputation_circuits::{Gate, WireId};

/// Gates per window at most.
pub(crate) const WINDOW: usize = 8192;

/// The plan of one window; see the module documentation.
#[derive(Default)]
pub(crate) struct Plan {
    /// The window's gates (circuit indices) in processing order.
    pub order: Vec<u32>,
    /// For wave `k`: `order[crypto.start..crypto.end]` are its crypto gates and
    /// `order[crypto.end..free_end]` its other gates.
    pub waves: Vec<(Range<usize>, usize)>,
    /// The byte offset of each gate's table from the window's start, by position in the
    /// window, and the window's total bytes at the end.
    pub offsets: Vec<usize>,
}

impl Plan {
    /// Bytes of tables in the window.
    pub fn bytes(&self) -> usize {
        self.offsets.last().copied().unwrap_or(0)
    }
}

/// Plans windows; keeps, per wire, the wave in which its label becomes ready.
pub(crate) struct Planner {
    /// Stamp per wire: `>= epoch` means made in the current window, in wave
    /// `stamp - epoch`; anything older is ready before the window.
    ready: Vec<u32>,
    epoch: u32,
    wave_of: Vec<u32>,
    counts: Vec<usize>,
}

impl Planner {
    pub(crate) fn new(wires: u32) -> Planner {
        Planner {
            ready: vec![0; wires as usize],
            epoch: 1,
            wave_of: Vec::with_capacity(WINDOW),
            counts: Vec::new(),
        }
    }

    #[inline(always)]
    fn wave(&self, w: WireId) -> u32 {
        self.ready[w as usize].saturating_sub(self.epoch)
    }

    /// Plans the gates `first..` of `gates`: as many as `table_len` admits, at most
    /// [`WINDOW`]. `table_len(i, gate)` is called once per gate in order and returns the
    /// gate's bytes in the stream, or `None` to end the window before that gate (it is
    /// then called again for it in the next window). `crypto(gate)` says whether the gate
    /// needs AES.
    pub(crate) fn plan(
        &mut self,
        gates: &[Gate],
        first: usize,
        mut table_len: impl FnMut(usize, &Gate) -> Option<usize>,
        crypto: impl Fn(&Gate) -> bool,
        plan: &mut Plan,
    ) {
        plan.order.clear();
        plan.waves.clear();
        plan.offsets.clear();
        self.wave_of.clear();
        let mut offset = 0;
        let mut max_wave = 0;
        for (i, gate) in gates.iter().enumerate().skip(first).take(WINDOW) {
            let Some(len) = table_len(i, gate) else {
                break;
            };
            plan.offsets.push(offset);
            offset += len;
            let (a, b) = gate.inputs();
            let mut wave = self.wave(a);
            if let Some(b) = b {
                wave = wave.max(self.wave(b));
            }
            // Keys: 2k for the crypto gates of wave k, 2k + 1 for the others.
            let key = if crypto(gate) {
                wave += 1;
                2 * wave
            } else {
                2 * wave + 1
            };
            self.ready[gate.output() as usize] = self.epoch + wave;
            max_wave = max_wave.max(wave);
            self.wave_of.push(key);
        }
        plan.offsets.push(offset);
        self.epoch += max_wave + 1;

        // Counting sort by key, stable: circuit order within each part of a wave.
        let keys = 2 * max_wave as usize + 2;
        self.counts.clear();
        self.counts.resize(keys + 1, 0);
        for &k in &self.wave_of {
            self.counts[k as usize + 1] += 1;
        }
        for k in 1..=keys {
            self.counts[k] += self.counts[k - 1];
        }
        plan.order.resize(self.wave_of.len(), 0);
        for (pos, &k) in self.wave_of.iter().enumerate() {
            let slot = &mut self.counts[k as usize];
            plan.order[*slot] = (first + pos) as u32;
            *slot += 1;
        }
        // After the sort counts[k] is the end of key k's part.
        for wave in 0..=max_wave as usize {
            let crypto_start = if wave == 0 {
                0
            } else {
                self.counts[2 * wave - 1]
            };
            let crypto_end = self.counts[2 * wave];
            let free_end = self.counts[2 * wave + 1];
            plan.waves.push((crypto_start..crypto_end, free_end));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waves_follow_dependencies() {
        // w2 = w0 & w1 (wave 1); w3 = w2 ^ w0 (wave 1, free); w4 = w0 & w1 (wave 1);
        // w5 = w3 & w4 (wave 2); w6 = !w0 (wave 0)
        let gates = [
            Gate::And { a: 0, b: 1, out: 2 },
            Gate::Xor { a: 2, b: 0, out: 3 },
            Gate::And { a: 0, b: 1, out: 4 },
            Gate::And { a: 3, b: 4, out: 5 },
            Gate::Inv { a: 0, out: 6 },
        ];
        let mut p = Planner::new(7);
        let mut plan = Plan::default();
        let len = |_: usize, g: &Gate| Some(if matches!(g, Gate::And { .. }) { 32 } else { 0 });
        p.plan(&gates, 0, len, |g| matches!(g, Gate::And { .. }), &mut plan);
        assert_eq!(plan.order, vec![4, 0, 2, 1, 3]);
        assert_eq!(plan.waves, vec![(0..0, 1), (1..3, 4), (4..5, 5)]);
        assert_eq!(plan.offsets, vec![0, 32, 32, 64, 96, 96]);
        // The next window sees all of these as ready.
        let more = [Gate::And { a: 5, b: 6, out: 0 }];
        p.plan(&more, 0, len, |g| matches!(g, Gate::And { .. }), &mut plan);
        assert_eq!(plan.waves, vec![(0..0, 0), (0..1, 1)]);
    }
}
