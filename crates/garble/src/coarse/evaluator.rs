//! The coarse-grained evaluator ([`CoarseEvaluator`]): reads the framed stream, hands each
//! frame's tables to the thread that evaluates its piece (piece `i` of a stage on thread
//! `i mod threads`), and gathers the pieces' output labels at the end of each stage.
//! The stream is the peer's: every frame header is checked against the layout before
//! anything is done with it.

use std::collections::HashMap;
use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use transputation_circuits::WireId;
use transputation_core::aes::Backend;
use transputation_core::Block;

use super::frame::{read_frame_header, CHUNK, HEADER, MAX_OPEN};
use super::layout::Layout;
use crate::{EvalError, Evaluate};

/// Frames queued for each evaluating thread (16 MiB of tables at most, a frame holding at
/// most `CHUNK` bytes): enough to carry a thread over another's busy spell (planning its
/// next piece) without the stream, which interleaves the pieces as the garbler's threads
/// made them, stalling on it.
const QUEUE: usize = 64;

/// What an evaluating thread is told.
enum Job {
    /// Evaluate a piece from these input labels; its tables are `bytes` long.
    Start {
        piece: u32,
        inputs: Vec<Block>,
        bytes: u64,
    },
    /// The next tables of a piece.
    Tables { piece: u32, bytes: Vec<u8> },
}

/// A piece evaluated: its output labels and gates, or what went wrong.
type Finished = Result<(u32, Vec<Block>, usize), EvalError>;

/// What every evaluating thread of a stage shares.
struct StageJob {
    layout: Arc<Layout>,
    stage: usize,
    backend: Backend,
    tweak_base: u64,
    hash_key: Option<Block>,
    /// Buffers the threads are done with, for the next frames' bytes.
    spare: Mutex<Vec<Vec<u8>>>,
}

/// A stage being evaluated.
struct Running {
    job: Arc<StageJob>,
    jobs: Vec<SyncSender<Job>>,
    finished: Receiver<Finished>,
    threads: Vec<JoinHandle<()>>,
    /// Table bytes still to come, per piece and in all.
    left: Vec<u64>,
    left_total: u64,
    /// Whether each piece's tables have begun, and how many pieces have begun and not
    /// ended (at most [`MAX_OPEN`]).
    begun: Vec<bool>,
    open: usize,
}

/// Evaluates the stream of a [`CoarseGarbler`](super::CoarseGarbler) on `threads` threads.
pub struct CoarseEvaluator {
    layout: Arc<Layout>,
    backend: Backend,
    tweak_base: u64,
    hash_key: Option<Block>,
    threads: usize,
    store: Vec<Block>,
    next_stage: usize,
    running: Option<Running>,
    /// A frame header that arrived in part.
    header: Vec<u8>,
    /// The piece and bytes left of the frame being read.
    frame: Option<(u32, u64)>,
    gates_done: usize,
    /// The first error: every later call returns it (the stream is not read further and
    /// no output is given).
    failed: Option<EvalError>,
}

impl CoarseEvaluator {
    /// An evaluator of the circuit `layout` was cut from, under the scheme it was cut for,
    /// holding one label per input wire, with the tweak base its garbler used, on `threads`
    /// threads (at least 1).
    ///
    /// # Panics
    /// If `inputs` is not one label per input wire.
    pub fn new(
        layout: Arc<Layout>,
        inputs: &[Block],
        backend: Backend,
        tweak_base: u64,
        threads: usize,
    ) -> CoarseEvaluator {
        assert_eq!(inputs.len(), layout.n_inputs, "one label per input wire");
        let mut store = inputs.to_vec();
        store.resize(layout.slots, Block::ZERO);
        CoarseEvaluator {
            layout,
            backend,
            tweak_base,
            hash_key: None,
            threads: threads.max(1),
            store,
            next_stage: 0,
            running: None,
            header: Vec::with_capacity(HEADER),
            frame: None,
            gates_done: 0,
            failed: None,
        }
    }

    fn finished(&self) -> bool {
        self.running.is_none() && self.next_stage == self.layout.stages.len()
    }

    /// Starts the threads of the next stage and hands every piece its input labels.
    fn start_stage(&mut self) {
        let stage = self.next_stage;
        self.next_stage += 1;
        let pieces = &self.layout.stages[stage].pieces;
        let threads = self.threads.min(pieces.len());
        let job = Arc::new(StageJob {
            layout: Arc::clone(&self.layout),
            stage,
            backend: self.backend,
            tweak_base: self.tweak_base,
            hash_key: self.hash_key,
            spare: Mutex::new(Vec::new()),
        });
        let (done_tx, done_rx) = sync_channel(pieces.len());
        let (mut jobs, mut handles) = (Vec::new(), Vec::new());
        for i in 0..threads {
            let (tx, rx) = sync_channel(QUEUE);
            let (job, done) = (Arc::clone(&job), done_tx.clone());
            let handle = std::thread::Builder::new()
                .name(format!("cgp-eval-{i}"))
                .spawn(move || evaluate_pieces(&job, &rx, &done))
                .expect("an evaluating thread starts");
            jobs.push(tx);
            handles.push(handle);
        }
        let left: Vec<u64> = pieces
            .iter()
            .map(|p| p.table_bytes(self.layout.scheme))
            .collect();
        for (i, p) in pieces.iter().enumerate() {
            let inputs = p.inputs.iter().map(|&s| self.store[s as usize]).collect();
            // A thread that ended has sent its error; finish_stage reports it.
            let _ = jobs[i % threads].send(Job::Start {
                piece: i as u32,
                inputs,
                bytes: left[i],
            });
        }
        self.running = Some(Running {
            job,
            jobs,
            finished: done_rx,
            threads: handles,
            left_total: left.iter().sum(),
            begun: vec![false; left.len()],
            left,
            open: 0,
        });
    }

    /// Waits for every piece of the stage and stores their output labels.
    fn finish_stage(&mut self) -> Result<(), EvalError> {
        let run = self.running.take().expect("a stage runs");
        let pieces = &self.layout.stages[self.next_stage - 1].pieces;
        drop(run.jobs);
        let mut result = Ok(());
        for _ in 0..pieces.len() {
            match run.finished.recv() {
                Ok(Ok((piece, outputs, gates))) => {
                    let p = &pieces[piece as usize];
                    for (&slot, label) in p.outputs.iter().zip(outputs) {
                        self.store[slot as usize] = label;
                    }
                    self.gates_done += gates;
                }
                Ok(Err(e)) => {
                    result = Err(e);
                    break;
                }
                Err(_) => panic!("an evaluating thread failed (it panicked)"),
            }
        }
        drop(run.finished);
        for t in run.threads {
            t.join().expect("an evaluating thread finishes");
        }
        result
    }

    /// [`Evaluate::feed`] before its first error.
    fn feed_stream(&mut self, bytes: &[u8]) -> Result<usize, EvalError> {
        let mut at = 0;
        loop {
            if self.running.is_none() {
                if self.next_stage == self.layout.stages.len() {
                    break;
                }
                self.start_stage();
            }
            if self.running.as_ref().expect("a stage runs").left_total == 0 {
                self.finish_stage()?;
                continue;
            }
            if at == bytes.len() {
                break;
            }
            let Some((piece, frame_left)) = self.frame else {
                let take = (HEADER - self.header.len()).min(bytes.len() - at);
                self.header.extend_from_slice(&bytes[at..at + take]);
                at += take;
                if let Ok(header) = <[u8; HEADER]>::try_from(&self.header[..]) {
                    self.header.clear();
                    self.open_frame(&header)?;
                }
                continue;
            };
            let take = frame_left.min((bytes.len() - at) as u64) as usize;
            let run = self.running.as_mut().expect("a stage runs");
            run.left[piece as usize] -= take as u64;
            run.left_total -= take as u64;
            if run.left[piece as usize] == 0 {
                run.open -= 1;
            }
            self.frame = (frame_left > take as u64).then_some((piece, frame_left - take as u64));
            let mut buf = run
                .job
                .spare
                .lock()
                .expect("not poisoned")
                .pop()
                .unwrap_or_default();
            buf.clear();
            buf.extend_from_slice(&bytes[at..at + take]);
            let tables = Job::Tables { piece, bytes: buf };
            at += take;
            let threads = run.jobs.len();
            if run.jobs[piece as usize % threads].send(tables).is_err() {
                // The thread stopped on an error in its tables: report that.
                return self.finish_stage().map(|()| at);
            }
        }
        if at < bytes.len() {
            return Err(EvalError::TrailingBytes {
                extra: bytes.len() - at,
            });
        }
        Ok(at)
    }

    /// Checks a frame header against the stage and opens the frame.
    fn open_frame(&mut self, header: &[u8; HEADER]) -> Result<(), EvalError> {
        let run = self.running.as_ref().expect("a stage runs");
        let (piece, len) = read_frame_header(header);
        let len = u64::from(len);
        let Some(&left) = run.left.get(piece as usize) else {
            return Err(EvalError::Frame(format!(
                "piece {piece} of a stage of {} pieces",
                run.left.len()
            )));
        };
        if len == 0 || len > left || len > CHUNK as u64 {
            return Err(EvalError::Frame(format!(
                "{len} bytes for piece {piece}, which has {left} bytes of tables left \
                 (a frame holds 1 to {CHUNK})"
            )));
        }
        let run = self.running.as_mut().expect("a stage runs");
        if !run.begun[piece as usize] {
            // An honest garbler's threads each garble one piece to its end before the
            // next: at most as many pieces are open as it has threads.
            if run.open == MAX_OPEN {
                return Err(EvalError::Frame(format!(
                    "piece {piece} begins while {MAX_OPEN} pieces are open (a garbler works \
                     on at most {MAX_OPEN} at once)"
                )));
            }
            run.begun[piece as usize] = true;
            run.open += 1;
        }
        self.frame = Some((piece, len));
        Ok(())
    }
}

/// A piece an evaluating thread was given: waiting for its first tables (its input
/// labels), or being evaluated (its evaluator and the bytes it has not used yet); and the
/// bytes still to come.
enum Open<'a> {
    Waiting(Vec<Block>),
    Evaluating(Box<dyn Evaluate + 'a>, Vec<u8>),
}

/// An evaluating thread: evaluates the pieces it is given as their tables come, each
/// planned when its first tables arrive (the garbler garbles a few pieces at a time, so
/// only those are held).
fn evaluate_pieces(job: &StageJob, jobs: &Receiver<Job>, done: &SyncSender<Finished>) {
    let pieces = &job.layout.stages[job.stage].pieces;
    let mut open: HashMap<u32, (Open<'_>, u64)> = HashMap::new();
    while let Ok(next) = jobs.recv() {
        let (piece, bytes) = match next {
            Job::Start {
                piece,
                inputs,
                bytes,
            } => {
                open.insert(piece, (Open::Waiting(inputs), bytes));
                if bytes > 0 {
                    continue;
                }
                (piece, Vec::new())
            }
            Job::Tables { piece, bytes } => (piece, bytes),
        };
        let (state, left) = open.get_mut(&piece).expect("tables follow their piece");
        if let Open::Waiting(inputs) = state {
            let keys = (job.tweak_base, job.hash_key);
            let ev = pieces[piece as usize].evaluator(job.layout.scheme, inputs, job.backend, keys);
            *state = Open::Evaluating(ev, Vec::new());
        }
        let Open::Evaluating(ev, pending) = state else {
            unreachable!("made above")
        };
        *left -= bytes.len() as u64;
        let fed = if pending.is_empty() {
            ev.feed(&bytes)
                .map(|used| pending.extend_from_slice(&bytes[used..]))
        } else {
            pending.extend_from_slice(&bytes);
            ev.feed(pending).map(|used| {
                pending.drain(..used);
            })
        };
        job.spare.lock().expect("not poisoned").push(bytes);
        if let Err(e) = fed {
            let _ = done.send(Err(e));
            return;
        }
        if *left == 0 {
            let Some((Open::Evaluating(ev, pending), _)) = open.remove(&piece) else {
                unreachable!("evaluating")
            };
            let finished = if pending.is_empty() {
                let p = &pieces[piece as usize];
                ev.check_done(&p.circuit)
                    .and_then(|()| ev.output_labels())
                    .map(|labels| (piece, labels, ev.gates_done()))
            } else {
                Err(EvalError::TrailingBytes {
                    extra: pending.len(),
                })
            };
            let failed = finished.is_err();
            if done.send(finished).is_err() || failed {
                return;
            }
        }
    }
}

impl Evaluate for CoarseEvaluator {
    fn feed(&mut self, bytes: &[u8]) -> Result<usize, EvalError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        let fed = self.feed_stream(bytes);
        if let Err(e) = &fed {
            self.failed = Some(e.clone());
        }
        fed
    }

    fn gates_done(&self) -> usize {
        self.gates_done
    }

    fn output_labels(&self) -> Result<Vec<Block>, EvalError> {
        if let Some(e) = &self.failed {
            return Err(e.clone());
        }
        if !self.finished() {
            return Err(EvalError::Truncated {
                done: self.gates_done,
                total: self.layout.gates() as usize,
            });
        }
        Ok(self
            .layout
            .outputs
            .iter()
            .map(|&s| self.store[s as usize])
            .collect())
    }

    fn input_labels_mut(&mut self, first: WireId, len: usize) -> &mut [Block] {
        assert!(
            self.next_stage == 0,
            "input labels are set before evaluation"
        );
        let first = first as usize;
        assert!(first + len <= self.layout.n_inputs, "input wires only");
        &mut self.store[first..first + len]
    }

    fn set_hash_key(&mut self, key: Block) {
        self.hash_key = Some(key);
    }
}
