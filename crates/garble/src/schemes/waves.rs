//! Wave scheduling: which gates can be garbled together, planned once per circuit.
//!
//! Gates are garbled in circuit order as far as the wire format goes (each gate's table has
//! its place in the stream), but the AES calls of independent gates are batched. The
//! circuit is cut into windows of [`WINDOW`] consecutive gates; in a window every gate gets
//! a *wave*: a gate that needs AES (a "crypto" gate: AND, and XOR under `prf`) is in the
//! wave after the latest of its inputs, any other gate in the wave of its latest input.
//! Wave `k` is processed as all its crypto gates in one batch, then its other gates in
//! circuit order; every input is then ready when it is read, and a batch holds every gate
//! of the window that could run at that point, not just a run of consecutive ones
//! (ripple-carry adders, for instance, overlap across the window).
//!
//! The schedule depends only on the circuit and the scheme, so it is computed at set-up
//! ([`Schedule::build`]), identically by garbler and evaluator, and the garbling loops only
//! follow it. It costs 8 bytes per gate plus 12 per wave.

use std::ops::Range;

use transputation_circuits::Gate;

/// Gates per window.
pub(crate) const WINDOW: usize = 8192;

/// One window: its gates, waves and bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Window {
    /// The window's gates (circuit indices `gates.start..gates.end`).
    pub gates: Range<usize>,
    /// Its waves, as indices into [`Schedule::waves`].
    pub waves: Range<usize>,
    /// Bytes of its tables in the stream.
    pub bytes: usize,
}

/// The schedule of a circuit; see the module documentation.
#[derive(Debug, Default)]
pub(crate) struct Schedule {
    /// Every gate (circuit index) in processing order, window after window.
    pub order: Vec<u32>,
    /// Per wave: `order[crypto]` are its crypto gates, `order[crypto.end..free_end]` the
    /// others.
    pub waves: Vec<(Range<u32>, u32)>,
    pub windows: Vec<Window>,
    /// Per gate: the offset of its bytes from its window's start.
    pub offset: Vec<u32>,
    /// Per gate: a number the scheme attaches (the AND index for the half-gates tweaks, the
    /// mask byte's offset for `prf`).
    pub aux: Vec<u32>,
}

impl Schedule {
    /// Plans `gates`. `crypto(gate)` says whether a gate needs AES; `table_len(gate, ands)`
    /// gives its bytes in the stream when `ands` AND gates precede it; `aux(gate, ands,
    /// offset, pos)` the scheme's number for the gate, with `offset` its byte offset in its
    /// window and `pos` its position in the window (0 for the window's first gate).
    pub(crate) fn build(
        gates: &[Gate],
        wires: u32,
        crypto: impl Fn(&Gate) -> bool,
        table_len: impl Fn(&Gate, u64) -> usize,
        mut aux: impl FnMut(&Gate, u64, usize, usize) -> u32,
    ) -> Schedule {
        let mut s = Schedule {
            order: Vec::with_capacity(gates.len()),
            waves: Vec::new(),
            windows: Vec::with_capacity(gates.len().div_ceil(WINDOW)),
            offset: Vec::with_capacity(gates.len()),
            aux: Vec::with_capacity(gates.len()),
        };
        // Per wire, the wave (+ epoch) in which its label is ready; older epochs are ready
        // before the window.
        let mut ready = vec![0u32; wires as usize];
        let mut epoch = 1u32;
        let mut key_of: Vec<u32> = Vec::with_capacity(WINDOW);
        let mut counts: Vec<u32> = Vec::new();
        let mut ands = 0u64;
        for start in (0..gates.len()).step_by(WINDOW) {
            let window = &gates[start..(start + WINDOW).min(gates.len())];
            key_of.clear();
            let mut max_wave = 0;
            let mut offset = 0usize;
            for (pos, gate) in window.iter().enumerate() {
                s.offset.push(offset as u32);
                s.aux.push(aux(gate, ands, offset, pos));
                offset += table_len(gate, ands);
                ands += u64::from(matches!(gate, Gate::And { .. }));
                let (a, b) = gate.inputs();
                let mut wave = ready[a as usize].saturating_sub(epoch);
                if let Some(b) = b {
                    wave = wave.max(ready[b as usize].saturating_sub(epoch));
                }
                // Sort keys: 2k for the crypto gates of wave k, 2k + 1 for the others.
                let key = if crypto(gate) {
                    wave += 1;
                    2 * wave
                } else {
                    2 * wave + 1
                };
                ready[gate.output() as usize] = epoch + wave;
                max_wave = max_wave.max(wave);
                key_of.push(key);
            }
            epoch += max_wave + 1;

            // Counting sort by key, stable: circuit order within each part of a wave.
            let keys = 2 * max_wave as usize + 2;
            counts.clear();
            counts.resize(keys + 1, 0);
            for &k in &key_of {
                counts[k as usize + 1] += 1;
            }
            for k in 1..=keys {
                counts[k] += counts[k - 1];
            }
            let base = s.order.len() as u32;
            s.order.resize(s.order.len() + window.len(), 0);
            for (pos, &k) in key_of.iter().enumerate() {
                let slot = &mut counts[k as usize];
                s.order[(base + *slot) as usize] = (start + pos) as u32;
                *slot += 1;
            }
            // After the sort counts[k] is the end of key k's part.
            let first_wave = s.waves.len();
            for wave in 0..=max_wave as usize {
                let crypto_start = if wave == 0 { 0 } else { counts[2 * wave - 1] };
                let (crypto_end, free_end) = (counts[2 * wave], counts[2 * wave + 1]);
                if free_end > crypto_start {
                    s.waves
                        .push((base + crypto_start..base + crypto_end, base + free_end));
                }
            }
            s.windows.push(Window {
                gates: start..start + window.len(),
                waves: first_wave..s.waves.len(),
                bytes: offset,
            });
        }
        s
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
        let is_and = |g: &Gate| matches!(g, Gate::And { .. });
        let s = Schedule::build(
            &gates,
            7,
            is_and,
            |g, _| if is_and(g) { 32 } else { 0 },
            |_, ands, _, _| ands as u32,
        );
        assert_eq!(s.order, vec![4, 0, 2, 1, 3]);
        assert_eq!(s.waves, vec![(0..0, 1), (1..3, 4), (4..5, 5)]);
        assert_eq!(s.offset, vec![0, 32, 32, 64, 96]);
        assert_eq!(s.aux, vec![0, 1, 1, 2, 3]);
        assert_eq!(
            s.windows,
            vec![Window {
                gates: 0..5,
                waves: 0..3,
                bytes: 96
            }]
        );
    }

    #[test]
    fn windows_see_earlier_windows_as_ready() {
        // A chain of ANDs longer than a window: one AND per wave, waves restart per window.
        let n = WINDOW + 10;
        let gates: Vec<Gate> = (0..n as u32)
            .map(|i| Gate::And {
                a: i + 1,
                b: 0,
                out: i + 2,
            })
            .collect();
        let s = Schedule::build(&gates, n as u32 + 2, |_| true, |_, _| 32, |_, _, _, _| 0);
        assert_eq!(s.windows.len(), 2);
        assert_eq!(s.windows[1].waves.len(), 10);
        assert_eq!(
            s.waves[WINDOW],
            (WINDOW as u32..WINDOW as u32 + 1, WINDOW as u32 + 1)
        );
    }
}
