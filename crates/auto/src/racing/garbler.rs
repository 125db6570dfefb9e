//! The garbler's end of a race ([`Racing`]): its sending, framed on the first connection
//! until the lanes have joined, then in chunks taken by a thread per lane; the
//! evaluator's frames read by a thread of their own once the race started.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::net::SocketAddr;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use transputation_transport::{ByteCounts, Channel, Error, Result, SocketBuffers};

use super::frames::{EvaluatorFrames, RaceOutcome, Verdict, CHUNK, MAX_BUDGET, MAX_HELD};

/// Stream bytes the garbler holds unsent before its sending waits for a lane.
const POOL_CAP: usize = 4 << 20;
/// Pieces of the evaluator's stream (at most 64 KiB each) read ahead of the garbler.
const FROM_EVALUATOR: usize = 256;

/// What the garbler's sending and its lanes' threads share.
#[derive(Default)]
struct Pool {
    /// Chunks not yet taken: stream offset, bytes.
    queue: VecDeque<(u64, Arc<[u8]>)>,
    queued_bytes: usize,
    /// The offset of the next chunk.
    next: u64,
    /// For the winner, before anything new: chunks a loser took that have not arrived.
    resend: VecDeque<(u64, Arc<[u8]>)>,
    verdict: Option<usize>,
    /// Per lane, the chunks it took before the verdict (those are the ones to send again).
    taken: Vec<BTreeMap<u64, Arc<[u8]>>>,
    lane_bytes: Vec<u64>,
    /// Per lane, whether it is in the middle of a send.
    busy: Vec<bool>,
    ending: bool,
    failure: Option<Error>,
    failed: bool,
    counts: Vec<ByteCounts>,
    /// The stream bytes the lanes took before the verdict (kept to send again).
    taken_bytes: u64,
    /// Chunks sent so far: a wait for the lanes runs out only without progress.
    progress: u64,
}

struct Shared {
    pool: Mutex<Pool>,
    changed: Condvar,
    /// The reports' view, filled in as the verdict comes (a report of an open session's
    /// first computation is printed before the close).
    outcome: Arc<Mutex<RaceOutcome>>,
}

/// The most stream bytes the lanes take before the evaluator names a winner: its budget
/// is at most [`MAX_BUDGET`], and it holds at most [`MAX_HELD`]; an evaluator that names
/// none by far beyond that is an error, not a heap that grows.
const MAX_TAKEN: u64 = MAX_BUDGET + MAX_HELD as u64;

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Pool> {
        self.pool.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn fail(&self, e: Error) {
        let mut p = self.lock();
        if !p.failed {
            p.failed = true;
            p.failure = Some(e);
        }
        drop(p);
        self.changed.notify_all();
    }

    /// Applies the evaluator's verdict: the winner, and what it must send again.
    fn decide(&self, v: Verdict) -> Result<()> {
        let mut p = self.lock();
        if p.verdict.is_some() {
            return Err(Error::Malformed {
                what: "a second race verdict from the evaluator".into(),
            });
        }
        let held: BTreeSet<u64> = v.held.into_iter().collect();
        let mut again: Vec<(u64, Arc<[u8]>)> = Vec::new();
        for (lane, taken) in std::mem::take(&mut p.taken).into_iter().enumerate() {
            if lane == v.winner {
                continue;
            }
            again.extend(
                taken
                    .into_iter()
                    .filter(|(o, _)| *o >= v.below && !held.contains(o)),
            );
        }
        again.sort_by_key(|(o, _)| *o);
        {
            let mut o = self.outcome.lock().unwrap_or_else(|e| e.into_inner());
            o.winner = Some(v.winner);
            o.lane_bytes = p.lane_bytes.clone();
            o.resent_chunks = again.len();
        }
        p.resend = again.into();
        p.verdict = Some(v.winner);
        drop(p);
        self.changed.notify_all();
        Ok(())
    }
}

/// The garbler's lanes once the race started.
struct Lanes {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    /// The reader of the first connection: it closes it once the evaluator has closed.
    reader: Option<JoinHandle<()>>,
    /// The evaluator's stream bytes, read by the reader thread from the first connection.
    from_evaluator: Receiver<Result<Vec<u8>>>,
    unread: VecDeque<u8>,
    /// Bytes sent but not yet a whole chunk.
    pending: Vec<u8>,
    timeout: Duration,
}

/// The garbler's end: sends framed on `first` until every lane has arrived on `offered`,
/// then races its sending over the lanes; receives the evaluator's frames on `first`.
pub struct Racing {
    first: Option<Box<dyn Channel>>,
    offered: Option<Receiver<(usize, Box<dyn Channel>)>>,
    arrived: Vec<Option<Box<dyn Channel>>>,
    lanes: Option<Lanes>,
    frames: EvaluatorFrames,
    timeout: Duration,
    buffers: Option<SocketBuffers>,
    peer: Option<SocketAddr>,
    outcome: Arc<Mutex<RaceOutcome>>,
    alive: Arc<()>,
}

impl Racing {
    /// `first`, whose sending races over the `lanes` connections that arrive on `offered`
    /// (each with its lane number) once all have; `timeout` is the longest wait for a lane
    /// to take the stream's bytes or for the evaluator.
    pub fn new(
        first: Box<dyn Channel>,
        lanes: usize,
        offered: Receiver<(usize, Box<dyn Channel>)>,
        timeout: Duration,
    ) -> Self {
        Racing {
            buffers: first.socket_buffers(),
            peer: first.peer_addr(),
            first: Some(first),
            offered: Some(offered),
            arrived: (0..lanes).map(|_| None).collect(),
            lanes: None,
            frames: EvaluatorFrames { left: 0 },
            timeout,
            outcome: Arc::default(),
            alive: Arc::new(()),
        }
    }

    /// Gone once this end is dropped (the service forgets a session waiting for lanes
    /// that can no longer join).
    pub fn alive(&self) -> std::sync::Weak<()> {
        Arc::downgrade(&self.alive)
    }

    /// What the race came to (filled in as it goes).
    pub fn outcome(&self) -> Arc<Mutex<RaceOutcome>> {
        self.outcome.clone()
    }

    fn first(&mut self) -> Result<&mut Box<dyn Channel>> {
        self.first.as_mut().ok_or(Error::Poisoned)
    }

    /// Starts the race once every lane has arrived; a closed offer ends the chance.
    fn take_lanes(&mut self) -> Result<()> {
        let Some(offered) = &self.offered else {
            return Ok(());
        };
        loop {
            match offered.try_recv() {
                Ok((lane, ch)) if lane < self.arrived.len() => self.arrived[lane] = Some(ch),
                Ok(_) => {}
                Err(TryRecvError::Disconnected) => {
                    self.offered = None;
                    return Ok(());
                }
                Err(TryRecvError::Empty) => break,
            }
        }
        if self.arrived.is_empty() || self.arrived.iter().any(Option::is_none) {
            return Ok(());
        }
        self.offered = None;
        let lanes: Vec<Box<dyn Channel>> = self.arrived.drain(..).flatten().collect();
        let mut first = self.first.take().ok_or(Error::Poisoned)?;
        first.send(&[0; 4])?;
        first.flush()?;
        let frames = EvaluatorFrames {
            left: std::mem::take(&mut self.frames.left),
        };
        self.lanes = Some(start_lanes(
            first,
            frames,
            lanes,
            self.timeout,
            &self.outcome,
        ));
        Ok(())
    }
}

/// Starts a thread per lane and the reader of the evaluator's frames.
fn start_lanes(
    first: Box<dyn Channel>,
    frames: EvaluatorFrames,
    lanes: Vec<Box<dyn Channel>>,
    timeout: Duration,
    outcome: &Arc<Mutex<RaceOutcome>>,
) -> Lanes {
    let n = lanes.len();
    let shared = Arc::new(Shared {
        pool: Mutex::new(Pool {
            taken: vec![BTreeMap::new(); n],
            lane_bytes: vec![0; n],
            busy: vec![false; n],
            // The first connection's counts so far (its reader keeps them from now on),
            // then each lane's.
            counts: std::iter::once(first.stats())
                .chain(std::iter::repeat_n(ByteCounts::default(), n))
                .collect(),
            ..Pool::default()
        }),
        changed: Condvar::new(),
        outcome: outcome.clone(),
    });
    outcome.lock().unwrap_or_else(|p| p.into_inner()).started = true;
    let threads = lanes
        .into_iter()
        .enumerate()
        .map(|(i, ch)| {
            let shared = shared.clone();
            thread::Builder::new()
                .name(format!("race-lane-{i}"))
                .spawn(move || lane_sends(i, ch, &shared))
                .expect("spawn a race lane's thread")
        })
        .collect();
    // Bounded: an evaluator that sends what the garbler does not read fills it, and then
    // its reader waits instead of the garbler's heap growing.
    let (tx, from_evaluator) = mpsc::sync_channel(FROM_EVALUATOR);
    let reader_shared = shared.clone();
    let reader = thread::Builder::new()
        .name("race-reader".into())
        .spawn(move || read_evaluator(first, frames, n, tx, &reader_shared))
        .expect("spawn the race's reader");
    Lanes {
        shared,
        threads,
        reader: Some(reader),
        from_evaluator,
        unread: VecDeque::new(),
        pending: Vec::new(),
        timeout,
    }
}

/// A lane's thread: takes the next chunk while this lane may (every lane before the
/// verdict, the winner alone after it), sends it, and at the end sends the lane's end
/// and closes it.
fn lane_sends(lane: usize, mut ch: Box<dyn Channel>, shared: &Shared) {
    let result = (|| -> Result<()> {
        loop {
            let mut p = shared.lock();
            let next = loop {
                if p.failed {
                    return Ok(());
                }
                let mine = p.verdict.is_none_or(|w| w == lane);
                if mine {
                    let again = if p.verdict.is_some() {
                        p.resend.pop_front()
                    } else {
                        None
                    };
                    let chunk = again.or_else(|| {
                        let c = p.queue.pop_front()?;
                        p.queued_bytes -= c.1.len();
                        Some(c)
                    });
                    if let Some((offset, bytes)) = chunk {
                        if p.verdict.is_none() {
                            p.taken_bytes += bytes.len() as u64;
                            if p.taken_bytes > MAX_TAKEN {
                                return Err(Error::Malformed {
                                    what: format!(
                                        "the evaluator named no winner of the race after {} \
                                         MiB",
                                        MAX_TAKEN >> 20
                                    ),
                                });
                            }
                            p.taken[lane].insert(offset, bytes.clone());
                            p.lane_bytes[lane] += bytes.len() as u64;
                        }
                        p.busy[lane] = true;
                        break Some((offset, bytes));
                    }
                }
                if p.ending && p.queue.is_empty() && (p.resend.is_empty() || !mine) {
                    break None;
                }
                p = shared.changed.wait(p).unwrap_or_else(|e| e.into_inner());
            };
            let end = p.next;
            drop(p);
            shared.changed.notify_all();
            let Some((offset, bytes)) = next else {
                ch.send(&end.to_be_bytes())?;
                ch.send(&0u32.to_be_bytes())?;
                return ch.close();
            };
            let sent = (|| {
                ch.send(&offset.to_be_bytes())?;
                ch.send(&(bytes.len() as u32).to_be_bytes())?;
                ch.send(&bytes)?;
                ch.flush()
            })();
            let mut p = shared.lock();
            p.busy[lane] = false;
            p.progress += 1;
            p.counts[lane + 1] = ch.stats();
            drop(p);
            shared.changed.notify_all();
            sent?;
        }
    })();
    let loser = {
        let mut p = shared.lock();
        p.counts[lane + 1] = ch.stats();
        p.verdict.is_some_and(|w| w != lane)
    };
    // A loser's failure after the verdict costs nothing: what it held went again on the
    // winner.
    if let Err(e) = result {
        if !loser {
            shared.fail(e);
        }
    }
}

/// The reader of the first connection once the race started: the evaluator's stream
/// bytes to the garbler's `recv`, its verdict to the lanes; closes the connection when
/// the evaluator has ended its side.
fn read_evaluator(
    mut first: Box<dyn Channel>,
    mut frames: EvaluatorFrames,
    lanes: usize,
    to_garbler: mpsc::SyncSender<Result<Vec<u8>>>,
    shared: &Shared,
) {
    loop {
        let got = frames.next_bytes(&mut *first, 64 << 10, &mut |body| {
            shared.decide(Verdict::decode(&body, lanes)?)
        });
        shared.lock().counts[0] = first.stats();
        match got {
            Ok(bytes) => {
                if to_garbler.send(Ok(bytes)).is_err() {
                    return;
                }
            }
            Err(Error::Closed { during }) => {
                let _ = first.close();
                let _ = to_garbler.send(Err(Error::Closed { during }));
                return;
            }
            Err(e) => {
                shared.fail(Error::Malformed {
                    what: e.to_string(),
                });
                let _ = to_garbler.send(Err(e));
                return;
            }
        }
    }
}

impl Lanes {
    /// Waits while `busy` holds of the pool, up to the timeout without a chunk sent.
    fn wait_while(&self, what: &'static str, busy: impl Fn(&Pool) -> bool) -> Result<()> {
        let mut deadline = Instant::now() + self.timeout;
        let mut p = self.shared.lock();
        let mut progress = p.progress;
        loop {
            if p.failed {
                return Err(p.failure.take().unwrap_or(Error::Poisoned));
            }
            if !busy(&p) {
                return Ok(());
            }
            if p.progress != progress {
                progress = p.progress;
                deadline = Instant::now() + self.timeout;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout {
                    during: what,
                    after: self.timeout,
                });
            }
            p = self
                .shared
                .changed
                .wait_timeout(p, left)
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
    }

    /// Queues whole chunks of what is pending (and the rest with `all`).
    fn queue(&mut self, all: bool) -> Result<()> {
        let whole = if all {
            self.pending.len()
        } else {
            self.pending.len() / CHUNK * CHUNK
        };
        let mut at = 0;
        while at < whole {
            self.wait_while("sending", |p| p.queued_bytes >= POOL_CAP)?;
            let n = (whole - at).min(CHUNK);
            let chunk: Arc<[u8]> = Arc::from(&self.pending[at..at + n]);
            at += n;
            let mut p = self.shared.lock();
            let offset = p.next;
            p.next += n as u64;
            p.queued_bytes += n;
            p.queue.push_back((offset, chunk));
            drop(p);
            self.shared.changed.notify_all();
        }
        self.pending.drain(..whole);
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.queue(true)?;
        // After the verdict a loser's last chunk went again on the winner: it is not
        // waited for.
        self.wait_while("sending", |p| {
            !p.queue.is_empty()
                || match p.verdict {
                    None => p.busy.iter().any(|b| *b),
                    Some(w) => p.busy[w] || !p.resend.is_empty(),
                }
        })
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        let mut filled = 0;
        while filled < buf.len() {
            if self.unread.is_empty() {
                let got =
                    self.from_evaluator
                        .recv_timeout(self.timeout)
                        .map_err(|e| match e {
                            RecvTimeoutError::Timeout => Error::Timeout {
                                during: "receiving",
                                after: self.timeout,
                            },
                            RecvTimeoutError::Disconnected => Error::Poisoned,
                        })??;
                self.unread.extend(got);
            }
            let k = self.unread.len().min(buf.len() - filled);
            for (d, s) in buf[filled..filled + k]
                .iter_mut()
                .zip(self.unread.drain(..k))
            {
                *d = s;
            }
            filled += k;
        }
        Ok(())
    }

    /// Ends the stream on every lane and waits for the lanes' threads and the reader.
    fn close(&mut self) -> Result<()> {
        self.flush()?;
        let winner = {
            let mut p = self.shared.lock();
            p.ending = true;
            p.verdict
        };
        self.shared.changed.notify_all();
        // A loser ends its lane when its last chunk has left, which this close does not
        // wait for: nothing it carries is still needed.
        for (i, t) in self.threads.drain(..).enumerate() {
            if winner.is_none_or(|w| w == i) {
                let _ = t.join();
            }
        }
        // What the lanes came to: the stream is whole once they ended.
        let result = match self.shared.lock().failure.take() {
            Some(e) => Err(e),
            None => Ok(()),
        };
        // The reader closes the first connection once the evaluator has closed its side
        // (after the lanes' ends): waited for, within the timeout, so that the connection
        // closes in good order before this process may exit (a `blast` or `quic` first
        // connection's close answers the evaluator's). What it meets then no longer
        // concerns the stream.
        if let Some(reader) = self.reader.take() {
            let deadline = Instant::now() + self.timeout;
            while !reader.is_finished() && Instant::now() < deadline {
                thread::sleep(Duration::from_millis(1));
            }
            if reader.is_finished() {
                let _ = reader.join();
            }
        }
        result
    }
}

impl Drop for Lanes {
    fn drop(&mut self) {
        // The threads end once they see this; the reader with its connection's timeout.
        let mut p = self.shared.lock();
        p.failed = true;
        drop(p);
        self.shared.changed.notify_all();
    }
}

impl Channel for Racing {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.take_lanes()?;
        if let Some(lanes) = &mut self.lanes {
            lanes.pending.extend_from_slice(bytes);
            return lanes.queue(false);
        }
        crate::moving::send_framed(&mut **self.first()?, bytes)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        if let Some(lanes) = &mut self.lanes {
            lanes.flush()?;
            return lanes.recv(buf);
        }
        let Racing { first, frames, .. } = self;
        let first = first.as_mut().ok_or(Error::Poisoned)?;
        frames.read(&mut **first, buf, &mut |_| {
            Err(Error::Malformed {
                what: "a race verdict before the race".into(),
            })
        })
    }

    fn flush(&mut self) -> Result<()> {
        match &mut self.lanes {
            Some(lanes) => lanes.flush(),
            None => self.first()?.flush(),
        }
    }

    fn close(&mut self) -> Result<()> {
        let Some(lanes) = &mut self.lanes else {
            return self.first()?.close();
        };
        let result = lanes.close();
        // Without a verdict, what each lane took (with one, the verdict told it).
        let p = lanes.shared.lock();
        let mut o = self.outcome.lock().unwrap_or_else(|e| e.into_inner());
        if o.winner.is_none() {
            o.lane_bytes = p.lane_bytes.clone();
        }
        result
    }

    /// No race after this: the peer reads the end where it reads the rest.
    fn closing(&mut self) {
        self.offered = None;
    }

    fn stats(&self) -> ByteCounts {
        let Some(lanes) = &self.lanes else {
            return self.first.as_ref().map(|f| f.stats()).unwrap_or_default();
        };
        let p = lanes.shared.lock();
        p.counts
            .iter()
            .fold(ByteCounts::default(), |a, c| ByteCounts {
                sent: a.sent + c.sent,
                received: a.received + c.received,
            })
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        self.buffers
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        self.peer
    }
}
