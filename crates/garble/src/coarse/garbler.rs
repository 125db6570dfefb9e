//! The coarse-grained garbler ([`CoarseGarbler`]): each stage's pieces garbled by a pool
//! of threads, a piece at a time per thread, their tables framed into one stream in the
//! order they come.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use transputation_circuits::WireId;
use transputation_core::aes::Backend;
use transputation_core::prg::Prg;
use transputation_core::Block;

use super::frame::{frame_header, CHUNK, HEADER, MAX_OPEN};
use super::layout::Layout;
use crate::{Garble, GarbleStart};

/// What a garbling thread reports.
enum Report {
    /// Tables of a piece, the next after those it reported before, from byte `HEADER` of
    /// `bytes` on (the room before them is for a frame header).
    Tables { piece: u32, bytes: Vec<u8> },
    /// A piece is garbled: the labels of its outputs.
    Done {
        piece: u32,
        outputs: Vec<[Block; 2]>,
    },
}

/// A stage being garbled.
struct Running {
    reports: Receiver<Report>,
    threads: Vec<JoinHandle<()>>,
    left: usize,
    job: Arc<StageJob>,
}

/// What every garbling thread of a stage shares.
struct StageJob {
    layout: Arc<Layout>,
    stage: usize,
    next: AtomicUsize,
    /// Per piece: its input labels and the seed of its randomness.
    starts: Vec<(Vec<[Block; 2]>, Block)>,
    backend: Backend,
    start: GarbleStart,
    /// Buffers the caller has copied out, for the threads to garble into again (a fresh
    /// quarter-megabyte buffer per batch would cost a mapping and its page faults).
    spare: Mutex<Vec<Vec<u8>>>,
}

/// Garbles a circuit by its parallel regions on `threads` threads; see the module
/// documentation of [`coarse`](super) for the stream it writes.
pub struct CoarseGarbler {
    layout: Arc<Layout>,
    backend: Backend,
    /// The session's start, its offset fixed (drawn if it was not given).
    start: GarbleStart,
    threads: usize,
    /// The threads it was made with ([`Garble::set_sequential`] may lower `threads`).
    made_with: usize,
    store: Vec<[Block; 2]>,
    prg: Prg,
    next_stage: usize,
    running: Option<Running>,
    frame_bytes: u64,
}

impl CoarseGarbler {
    /// A garbler of the circuit `layout` was cut from, under the scheme it was cut for,
    /// from `start` as [`Scheme::garbler_with`](crate::Scheme::garbler_with) takes it, on `threads` threads (1 to
    /// [`MAX_OPEN`]: an evaluator refuses a stream with more pieces open at once).
    ///
    /// # Panics
    /// As [`Scheme::garbler_with`](crate::Scheme::garbler_with).
    pub fn new(
        layout: Arc<Layout>,
        prg: &mut Prg,
        backend: Backend,
        start: GarbleStart,
        threads: usize,
    ) -> CoarseGarbler {
        let scheme = layout.scheme;
        let mut own = Prg::new(prg.block());
        let mut start = start;
        if scheme.has_global_offset() {
            let delta = start.offset.unwrap_or_else(|| own.block().with_lsb(true));
            assert!(delta.lsb(), "the offset's lsb must be 1");
            start.offset = Some(delta);
        } else {
            assert!(
                start.offset.is_none(),
                "prf has no global offset: GarbleStart.offset must be None for it"
            );
        }
        let mut store = (0..layout.n_inputs)
            .map(|_| {
                let w0 = own.block();
                match start.offset {
                    Some(delta) => [w0, w0 ^ delta],
                    None => [w0, own.block().with_lsb(!w0.lsb())],
                }
            })
            .collect::<Vec<_>>();
        store.resize(layout.slots, [Block::ZERO; 2]);
        CoarseGarbler {
            layout,
            backend,
            start,
            threads: threads.clamp(1, MAX_OPEN),
            made_with: threads.clamp(1, MAX_OPEN),
            store,
            prg: own,
            next_stage: 0,
            running: None,
            frame_bytes: 0,
        }
    }

    /// The bytes of frame headers written so far (the stream less the tables).
    pub fn frame_bytes(&self) -> u64 {
        self.frame_bytes
    }

    fn started(&self) -> bool {
        self.next_stage > 0
    }

    /// Starts the threads of the next stage.
    fn start_stage(&mut self) {
        let stage = self.next_stage;
        self.next_stage += 1;
        let pieces = &self.layout.stages[stage].pieces;
        let starts = pieces
            .iter()
            .map(|p| {
                let inputs = p.inputs.iter().map(|&s| self.store[s as usize]).collect();
                (inputs, self.prg.block())
            })
            .collect();
        let threads = self.threads.min(pieces.len());
        let job = Arc::new(StageJob {
            layout: Arc::clone(&self.layout),
            stage,
            next: AtomicUsize::new(0),
            starts,
            backend: self.backend,
            start: self.start,
            spare: Mutex::new(Vec::new()),
        });
        let (tx, rx) = sync_channel(4 * threads);
        let threads = (0..threads)
            .map(|i| {
                let (job, tx) = (Arc::clone(&job), tx.clone());
                std::thread::Builder::new()
                    .name(format!("cgp-garble-{i}"))
                    .spawn(move || garble_pieces(&job, &tx))
                    .expect("a garbling thread starts")
            })
            .collect();
        self.running = Some(Running {
            reports: rx,
            threads,
            left: pieces.len(),
            job,
        });
    }
}

/// A garbling thread: takes the stage's pieces one after another until none is left.
fn garble_pieces(job: &StageJob, tx: &SyncSender<Report>) {
    let pieces = &job.layout.stages[job.stage].pieces;
    loop {
        let i = job.next.fetch_add(1, Ordering::Relaxed);
        let Some(piece) = pieces.get(i) else {
            return;
        };
        let (inputs, seed) = &job.starts[i];
        let mut prg = Prg::new(*seed);
        let mut garbler = piece.garbler(job.layout.scheme, &mut prg, job.backend, job.start);
        garbler.set_input_labels(0, inputs);
        let piece_id = i as u32;
        loop {
            // Over a spare buffer's old bytes: no memset (`Garble::garble_at`); the first
            // HEADER bytes left for the frame header, so that the batch can become a frame
            // in place (`garble_at` below).
            let spare = job.spare.lock().expect("not poisoned").pop();
            let mut bytes = spare.unwrap_or_default();
            if bytes.len() < HEADER {
                bytes.resize(HEADER, 0);
            }
            let (end, more) = garbler.garble_at(&mut bytes, HEADER, CHUNK);
            bytes.truncate(end);
            if bytes.len() > HEADER
                && tx
                    .send(Report::Tables {
                        piece: piece_id,
                        bytes,
                    })
                    .is_err()
            {
                return; // the garbler was dropped
            }
            if !more {
                break;
            }
        }
        let outputs = garbler.output_label_pairs();
        if tx
            .send(Report::Done {
                piece: piece_id,
                outputs,
            })
            .is_err()
        {
            return;
        }
    }
}

impl Garble for CoarseGarbler {
    fn input_labels(&self, wire: WireId) -> [Block; 2] {
        assert!((wire as usize) < self.layout.n_inputs, "an input wire");
        self.store[wire as usize]
    }

    fn set_input_labels(&mut self, first: WireId, labels: &[[Block; 2]]) {
        assert!(!self.started(), "input labels are set before garbling");
        let first = first as usize;
        assert!(
            first + labels.len() <= self.layout.n_inputs,
            "input wires only"
        );
        for &[w0, w1] in labels {
            assert!(
                w0.lsb() != w1.lsb(),
                "the two labels of a wire differ in lsb"
            );
            if let Some(delta) = self.start.offset {
                assert!(w1 == w0 ^ delta, "the two labels of a wire differ by Δ");
            }
        }
        self.store[first..first + labels.len()].copy_from_slice(labels);
    }

    fn global_offset(&self) -> Option<Block> {
        self.start.offset
    }

    fn garble_at(&mut self, out: &mut Vec<u8>, at: usize, target: usize) -> (usize, bool) {
        assert!(at <= out.len(), "garbling starts within the buffer");
        let mut end = at;
        loop {
            if self.running.is_none() {
                if self.next_stage == self.layout.stages.len() {
                    return (end, false);
                }
                self.start_stage();
            }
            let run = self.running.as_mut().expect("a stage runs");
            let report = run
                .reports
                .recv()
                .expect("a garbling thread failed (it panicked)");
            match report {
                Report::Tables { piece, mut bytes } => {
                    let tables = bytes.len() - HEADER;
                    if end == 0 && tables <= CHUNK {
                        // The first frame of the call (`at` is 0) and a whole one: the
                        // thread's buffer becomes `out`, the header written in its room,
                        // and `out`'s old buffer goes to the threads. No copy of the
                        // tables on this thread, which would take a core's share from the
                        // garbling threads.
                        bytes[..HEADER].copy_from_slice(&frame_header(piece, tables));
                        std::mem::swap(out, &mut bytes);
                        end = out.len();
                        self.frame_bytes += HEADER as u64;
                    } else {
                        // A batch may pass `CHUNK` (a scheme ends it at a window, `prf` at
                        // a whole pair of AND gates too): frames of at most `CHUNK` bytes.
                        for part in bytes[HEADER..].chunks(CHUNK) {
                            let need = end + HEADER + part.len();
                            if out.len() < need {
                                out.resize(need, 0);
                            }
                            out[end..end + HEADER]
                                .copy_from_slice(&frame_header(piece, part.len()));
                            out[end + HEADER..need].copy_from_slice(part);
                            end = need;
                            self.frame_bytes += HEADER as u64;
                        }
                    }
                    run.job.spare.lock().expect("not poisoned").push(bytes);
                }
                Report::Done { piece, outputs } => {
                    let p = &self.layout.stages[self.next_stage - 1].pieces[piece as usize];
                    for (&slot, pair) in p.outputs.iter().zip(outputs) {
                        self.store[slot as usize] = pair;
                    }
                    run.left -= 1;
                    if run.left == 0 {
                        let run = self.running.take().expect("a stage runs");
                        for t in run.threads {
                            t.join().expect("a garbling thread finishes");
                        }
                    }
                }
            }
            if end - at >= target.max(1) {
                let more = self.running.is_some() || self.next_stage < self.layout.stages.len();
                return (end, more);
            }
        }
    }

    fn set_sequential(&mut self, on: bool) {
        // One garbling thread (not the calling one: the pieces are garbled beside it) for
        // the stages not yet started, or the threads it was made with again; the tables
        // do not depend on it, only the order of their frames.
        self.threads = if on { 1 } else { self.made_with };
    }

    fn decoding(&self) -> Vec<bool> {
        self.output_label_pairs()
            .iter()
            .map(|[w0, _]| w0.lsb())
            .collect()
    }

    fn output_label_pairs(&self) -> Vec<[Block; 2]> {
        assert!(
            self.running.is_none() && self.next_stage == self.layout.stages.len(),
            "garbling finished"
        );
        self.layout
            .outputs
            .iter()
            .map(|&s| self.store[s as usize])
            .collect()
    }
}
