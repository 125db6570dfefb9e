//! Circuits written a piece at a time, and generated as they are read.
//!
//! A built-in whose circuit grows with a parameter (MinCut's 2^(n−2) cuts) is written as
//! [`Pieces`]: a start that declares every input, then pieces (MinCut: one cut each) that
//! read the wires earlier pieces left in a state and leave new ones there. After each run of
//! pieces (a *chunk* of about 16 K gates) the state names the wires later pieces may still
//! read ([`Piece::live`]); every other wire written so far *ends*: at its last reader in the
//! chunk (at its writer if nothing reads it), or at the chunk's first gate if the chunk
//! does not read it; and its number is handed out again. Within a piece,
//! [`Builder::gate_count`] and [`Builder::and_count`] count the chunk's gates in the
//! generated form and every gate so far in the held one: a program must not depend on them.
//!
//! So one program gives the circuit in two forms:
//! - [`held`]: built whole by the [`Builder`], as any built-in;
//! - [`generated`]: a [`Circuit::generated`] whose gates the program writes again each time
//!   the circuit is read, with the ends the `source` module describes, in memory bounded by
//!   the state and a chunk of gates, never the circuit. Its gate counts, output wires and
//!   wire numbers come from one reading when it is made.
//!
//! Both forms have the same gates in the same order: [`Circuit::to_held`] of the generated
//! form is the held form, wire for wire (tested per built-in).
//!
//! A program that reads a wire its state no longer held, or declares outputs before its
//! last piece, is refused with a panic (a built-in's bug), not turned into a wrong circuit.

use std::fmt;
use std::panic::{RefUnwindSafe, UnwindSafe};
use std::sync::Arc;

use super::bits::{Bit, Builder};
use crate::circuit::{Circuit, Gate, InputGroup, OutputGroup, WireId};
use crate::source::{GateBatch, GateSource, Generate, END_A, END_B, END_OUT};

/// A circuit program written in pieces; see the module documentation.
pub trait Pieces: Send + Sync + RefUnwindSafe + UnwindSafe + fmt::Debug {
    /// What names the circuit exactly (a built-in's name and every parameter).
    fn identity(&self) -> String;
    /// Declares every input (before any gate) and returns the state the pieces work on; it
    /// may write gates after the inputs.
    fn start<'a>(&'a self, b: &mut Builder) -> Box<dyn Piece + 'a>;
}

/// The state of a [`Pieces`] program between pieces.
pub trait Piece: Send {
    /// Writes the next piece; the last one also declares the outputs and returns `false`.
    fn next(&mut self, b: &mut Builder) -> bool;
    /// Appends every bit of the state: the wires later pieces may read.
    fn live(&self, out: &mut Vec<Bit>);
}

/// The held form of `pieces`: every piece written by one [`Builder`], then built.
pub fn held(pieces: &dyn Pieces) -> Circuit {
    let mut b = Builder::new();
    let mut state = pieces.start(&mut b);
    while state.next(&mut b) {}
    drop(state);
    b.build()
}

/// The generated form of `pieces` (see the module documentation). It is read once here, for
/// its gate counts, outputs and wire numbers.
///
/// # Panics
/// If the program declares an input after writing a gate, or after its start.
pub fn generated(pieces: Arc<dyn Pieces>) -> Circuit {
    generated_in_chunks(pieces, CHUNK_GATES)
}

/// [`generated`], its ends found every `chunk` gates or so (tests: chunks of a few gates).
pub(crate) fn generated_in_chunks(pieces: Arc<dyn Pieces>, chunk: usize) -> Circuit {
    let mut source = PieceSource::new(&*pieces, chunk);
    let mut batch = GateBatch::default();
    let mut counts = [0u64; 3];
    while source.next_batch(1 << 16, &mut batch) {
        for g in &batch.gates {
            counts[g.kind_index()] += 1;
        }
    }
    let (inputs, outputs) = source.groups();
    let wires = source.builder.next_wire;
    drop(source);
    let generator = Arc::new(GeneratedPieces {
        pieces,
        counts,
        chunk,
    });
    Circuit::generated(wires, inputs, outputs, generator)
        .expect("a program in pieces declares its inputs first and writes its outputs")
}

#[derive(Debug)]
struct GeneratedPieces {
    pieces: Arc<dyn Pieces>,
    counts: [u64; 3],
    chunk: usize,
}

impl Generate for GeneratedPieces {
    fn source(&self) -> Box<dyn GateSource + '_> {
        Box::new(PieceSource::new(&*self.pieces, self.chunk))
    }

    fn identity(&self) -> String {
        // The chunk decides the wire numbers and ends, so it is part of the circuit.
        format!(
            "{} (generated in pieces, chunks of {} gates, v1)",
            self.pieces.identity(),
            self.chunk
        )
    }

    fn counts(&self) -> [u64; 3] {
        self.counts
    }
}

/// Gates written per chunk at least (pieces are whole): the ends are found once per chunk.
const CHUNK_GATES: usize = 1 << 14;

/// In [`PieceSource::seen`]: no occurrence in the chunk.
const UNSEEN: u32 = u32::MAX;

/// Writes the program's pieces a chunk at a time and hands out their gates with ends.
struct PieceSource<'a> {
    builder: Builder,
    state: Option<Box<dyn Piece + 'a>>,
    chunk: usize,
    n_inputs: u32,
    /// The chunk being handed out, from `next` on: its gates, per gate its end flags, and
    /// the wires that end before its first gate (read by none of its gates).
    gates: Vec<Gate>,
    flags: Vec<u8>,
    early: Vec<WireId>,
    next: usize,
    /// The wires of the state after the last chunk, and a mark per wire number for them.
    live: Vec<WireId>,
    marked: Vec<bool>,
    /// Per wire number, while a chunk's ends are found: its last occurrence, as position
    /// times 8 and the flag it would set, and whether the chunk wrote it so far.
    seen: Vec<u32>,
    written: Vec<bool>,
    /// Wire numbers that ended in the last chunk: handed out again only from the chunk
    /// after the next, so that a program reading a dropped wire in the next chunk finds
    /// its number unwritten and is refused.
    resting: Vec<WireId>,
    bits: Vec<Bit>,
}

impl<'a> PieceSource<'a> {
    fn new(pieces: &'a dyn Pieces, chunk: usize) -> PieceSource<'a> {
        let mut builder = Builder::new();
        let state = pieces.start(&mut builder);
        let n_inputs = builder.input_wires().count() as u32;
        assert!(
            builder
                .input_wires()
                .enumerate()
                .all(|(i, w)| w == i as WireId),
            "a program in pieces declares every input before its first gate"
        );
        builder.reuse_wires();
        PieceSource {
            builder,
            state: Some(state),
            chunk: chunk.max(1),
            n_inputs,
            gates: Vec::new(),
            flags: Vec::new(),
            early: Vec::new(),
            next: 0,
            live: Vec::new(),
            marked: Vec::new(),
            seen: Vec::new(),
            written: Vec::new(),
            resting: Vec::new(),
            bits: Vec::new(),
        }
    }

    /// Writes pieces until a chunk is full or the program is over, then finds the chunk's
    /// ends; `false` if the program was over already.
    fn write_chunk(&mut self) -> bool {
        let Some(state) = self.state.as_mut() else {
            return false;
        };
        let mut more = true;
        while more && self.builder.gate_count() < self.chunk {
            more = state.next(&mut self.builder);
            assert!(
                !more || !self.builder.has_outputs(),
                "a program in pieces declares its outputs in its last piece"
            );
        }
        // Positions and end flags share a u32 in `find_ends`.
        assert!(
            self.builder.gate_count() < 1 << 28,
            "a piece of a program in pieces writes fewer than 2^28 gates"
        );
        self.bits.clear();
        if more {
            state.live(&mut self.bits);
        } else {
            self.state = None;
            self.builder.materialise_constant_outputs();
            let outputs = self.builder.output_groups(|w| w);
            self.bits
                .extend(outputs.iter().flat_map(|o| &o.wires).map(|&w| Bit::Wire(w)));
            assert_eq!(
                self.builder.input_wires().count() as u32,
                self.n_inputs,
                "a program in pieces declares every input in its start"
            );
        }
        std::mem::swap(&mut self.gates, self.builder.gates_mut());
        self.builder.gates_mut().clear();
        self.next = 0;
        self.find_ends();
        true
    }

    /// The chunk's ends: every wire it writes, and every wire of the last state, that the
    /// new state (`bits`) does not hold ends at its last occurrence in the chunk; its number
    /// is free from the next chunk on.
    fn find_ends(&mut self) {
        let wires = self.builder.next_wire as usize;
        if self.seen.len() < wires {
            self.seen.resize(wires, UNSEEN);
            self.marked.resize(wires, false);
            self.written.resize(wires, false);
        }
        self.flags.clear();
        self.flags.resize(self.gates.len(), 0);
        self.early.clear();
        // Numbers that ended a chunk ago may be handed out again from the next chunk on.
        for w in self.resting.drain(..) {
            self.builder.free_wire(w);
        }
        // A wire a gate reads, or the new state holds, is an input, in the last state, or
        // written earlier in the chunk: else the program read a wire it had dropped, and the
        // circuit would be wrong. (Caught whenever the read comes within a chunk of the
        // drop, as numbers rest for a chunk; later, only if the number is still unwritten.)
        let (n_inputs, marked, written) = (self.n_inputs, &self.marked, &mut self.written);
        let known =
            |w: WireId, written: &[bool]| w < n_inputs || marked[w as usize] || written[w as usize];
        for (pos, g) in self.gates.iter().enumerate() {
            let at = (pos as u32) << 3;
            let (a, b) = g.inputs();
            for (w, flag) in [(Some(a), END_A), (b, END_B)] {
                let Some(w) = w else { continue };
                assert!(
                    known(w, written),
                    "a program in pieces reads wire {w}, which its state did not hold"
                );
                self.seen[w as usize] = at | u32::from(flag);
            }
            self.seen[g.output() as usize] = at | u32::from(END_OUT);
            written[g.output() as usize] = true;
        }
        for bit in &self.bits {
            if let Bit::Wire(w) = *bit {
                assert!(
                    known(w, written),
                    "a program in pieces keeps wire {w} in its state after it was dropped"
                );
            }
        }
        if self.gates.is_empty() {
            // No gate to end them at: the last state's wires live on (a slot kept longer).
            return;
        }
        // The new state's marks, the old one's kept in `live` until its wires are judged.
        let old_live = std::mem::take(&mut self.live);
        for &w in &old_live {
            self.marked[w as usize] = false;
        }
        for bit in &self.bits {
            if let Bit::Wire(w) = *bit {
                if !std::mem::replace(&mut self.marked[w as usize], true) {
                    self.live.push(w);
                }
            }
        }
        let outputs = self.gates.iter().map(Gate::output);
        for w in old_live.iter().copied().chain(outputs) {
            if w < self.n_inputs || self.marked[w as usize] {
                continue;
            }
            match self.seen[w as usize] {
                UNSEEN => self.early.push(w),
                at => self.flags[(at >> 3) as usize] |= (at & 7) as u8,
            }
            self.resting.push(w);
        }
        for g in &self.gates {
            let (a, b) = g.inputs();
            self.seen[a as usize] = UNSEEN;
            if let Some(b) = b {
                self.seen[b as usize] = UNSEEN;
            }
            self.seen[g.output() as usize] = UNSEEN;
            self.written[g.output() as usize] = false;
        }
    }

    /// The input and output groups, once every gate was handed out.
    fn groups(&self) -> (Vec<InputGroup>, Vec<OutputGroup>) {
        assert!(self.state.is_none(), "the program is over");
        let inputs = self.builder.input_groups().cloned().collect();
        let outputs = self.builder.output_groups(|w| w);
        (inputs, outputs)
    }
}

impl GateSource for PieceSource<'_> {
    fn next_batch(&mut self, max: usize, batch: &mut GateBatch) -> bool {
        batch.clear();
        let max = max.max(1);
        while batch.gates.len() < max {
            if self.next == self.gates.len() && !self.write_chunk() {
                break;
            }
            if self.next == 0 {
                let pos = batch.gates.len() as u32;
                batch.ends.extend(self.early.iter().map(|&w| (pos, w)));
            }
            let take = (max - batch.gates.len()).min(self.gates.len() - self.next);
            for i in self.next..self.next + take {
                let (g, f) = (self.gates[i], self.flags[i]);
                let pos = batch.gates.len() as u32;
                batch.gates.push(g);
                batch.push_ends(pos, &g, f);
            }
            self.next += take;
        }
        !batch.gates.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use rand::{Rng, SeedableRng};

    use super::*;
    use crate::builder::Uint;
    use crate::circuit::Party;

    /// A sum over rounds with a value it drops unread now and then, and constant outputs;
    /// or, `quiet`, a last piece that writes no gate and only declares the sum.
    #[derive(Debug)]
    struct Rounds {
        rounds: u64,
        quiet: bool,
    }

    struct Sum {
        x: Uint,
        y: Uint,
        acc: Uint,
        spare: Vec<Bit>,
        k: u64,
        rounds: u64,
        quiet: bool,
    }

    impl Pieces for Rounds {
        fn identity(&self) -> String {
            format!("rounds:{},quiet={}", self.rounds, self.quiet)
        }

        fn start<'a>(&'a self, b: &mut Builder) -> Box<dyn Piece + 'a> {
            let x = b.input_uint(Party::Garbler, "x", 8);
            let y = b.input_uint(Party::Evaluator, "y", 8);
            let acc = b.add(&x, &y);
            Box::new(Sum {
                x,
                y,
                acc,
                spare: vec![Bit::ONE; 3],
                k: 0,
                rounds: self.rounds,
                quiet: self.quiet,
            })
        }
    }

    impl Piece for Sum {
        fn next(&mut self, b: &mut Builder) -> bool {
            if self.k == self.rounds {
                // Only `quiet` gets here: outputs and no gate.
                b.output_uint("sum", &self.acc);
                return false;
            }
            let k = self.k as usize;
            let mixed: Vec<Bit> = (0..8)
                .map(|i| b.and(self.x.bits()[i], self.y.bits()[(i + k) % 8]))
                .collect();
            let mixed = Uint::new(mixed);
            self.acc = b.add(&self.acc, &mixed);
            // Replaced without being read: the old spare ends before the next piece's gates.
            self.spare = if k.is_multiple_of(3) {
                vec![Bit::ZERO, Bit::ONE, Bit::ZERO]
            } else {
                (0..3)
                    .map(|i| b.xor(self.acc.bits()[i], self.x.bits()[i]))
                    .collect()
            };
            self.k += 1;
            if self.k < self.rounds || self.quiet {
                return true;
            }
            b.output_uint("sum", &self.acc);
            b.output_bits("spare", &self.spare);
            b.output_bits("constants", &[Bit::ONE, Bit::ZERO]);
            false
        }

        fn live(&self, out: &mut Vec<Bit>) {
            for u in [&self.x, &self.y, &self.acc] {
                out.extend_from_slice(u.bits());
            }
            out.extend_from_slice(&self.spare);
        }
    }

    #[test]
    fn the_generated_form_is_the_held_form_in_any_chunks() {
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(8);
        for (rounds, quiet) in [1, 2, 3, 7, 40]
            .into_iter()
            .flat_map(|r| [(r, false), (r, true)])
        {
            let program = || Rounds { rounds, quiet };
            let held = held(&program());
            for chunk in [1, 5, 64, CHUNK_GATES] {
                let generated = generated_in_chunks(Arc::new(program()), chunk);
                assert!(generated.is_generated());
                assert_eq!(generated.gate_counts(), held.gate_counts());
                crate::circuit::check_ends(&generated);
                assert_eq!(
                    generated.to_held().unwrap(),
                    held,
                    "{rounds} rounds, {chunk}"
                );
                for _ in 0..4 {
                    let inputs: Vec<u64> = (0..held.n_inputs()).map(|_| rng.gen()).collect();
                    assert_eq!(generated.eval_words(&inputs), held.eval_words(&inputs));
                }
                // Wire numbers are reused: a few live wires, not one per gate.
                if rounds == 40 && chunk <= 64 && !quiet {
                    assert!(
                        u64::from(generated.num_wires()) < held.num_gates() / 2,
                        "{} wire numbers for {} gates",
                        generated.num_wires(),
                        held.num_gates()
                    );
                }
            }
        }
    }
}

#[cfg(test)]
mod refusals {
    use std::sync::Arc;

    use super::*;
    use crate::circuit::Party;

    /// A program that reads a wire its state dropped.
    #[derive(Debug)]
    struct Forgetful;

    struct Dropped {
        x: Vec<Bit>,
        kept: Bit,
        k: u32,
    }

    impl Pieces for Forgetful {
        fn identity(&self) -> String {
            "forgetful".into()
        }

        fn start<'a>(&'a self, b: &mut Builder) -> Box<dyn Piece + 'a> {
            let x = b.input_bits(Party::Garbler, "x", 2);
            let y = b.input_bits(Party::Evaluator, "y", 2);
            let kept = b.and(x[0], y[0]);
            let x = vec![b.and(x[1], y[1]), kept];
            Box::new(Dropped { x, kept, k: 0 })
        }
    }

    impl Piece for Dropped {
        fn next(&mut self, b: &mut Builder) -> bool {
            self.k += 1;
            // A new wire first (it would take a freed number), then a read of `kept`,
            // though `live` stopped naming it after the first piece.
            let _ = b.not(self.x[0]);
            self.kept = b.xor(self.kept, self.x[0]);
            if self.k < 3 {
                return true;
            }
            b.output_bits("out", &[self.kept]);
            false
        }

        fn live(&self, out: &mut Vec<Bit>) {
            out.push(self.x[0]);
        }
    }

    #[test]
    #[should_panic(expected = "which its state did not hold")]
    fn a_program_that_reads_a_dropped_wire_is_refused() {
        generated_in_chunks(Arc::new(Forgetful), 1);
    }
}
