//! The evaluator's end of a race ([`RaceFollowing`]): the garbler's frames on the first
//! connection until the race starts, then a reader per lane reassembling the chunks by
//! their offsets; its own stream and the verdict framed on the first connection.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use transputation_transport::{ByteCounts, Channel, Error, Result, SocketBuffers};

use super::frames::{
    frame_length, RaceOutcome, Verdict, CHUNK_OVERHEAD, KEEPALIVE, MAX_FRAME, MAX_HELD, MAX_LISTED,
    STREAM, VERDICT,
};

/// What the evaluator's lane readers and its `recv` share.
#[derive(Default)]
struct Arrivals {
    /// Chunks held from `read` on, by offset: each its bytes and where in them it begins
    /// (a chunk read in part stays where it arrived, its start moved on, rather than its
    /// rest copied: small reads of a large chunk would copy it over and over).
    chunks: BTreeMap<u64, (Vec<u8>, usize)>,
    /// Their bytes, and the most there may be ([`MAX_HELD`]).
    held: usize,
    held_limit: usize,
    /// The stream offset (from the race's start) read so far.
    read: u64,
    lane_bytes: Vec<u64>,
    /// Half the race's budget, and each lane's bytes when that had arrived: the verdict
    /// judges what each delivered after it (a first flight's burst is not a rate).
    half_budget: u64,
    at_half: Option<Vec<u64>>,
    /// The stream's end, once a lane told it.
    end: Option<u64>,
    /// The winner, once named: a loser's lane is no longer needed.
    winner: Option<usize>,
    failure: Option<Error>,
    failed: bool,
    counts: Vec<ByteCounts>,
}

struct Arriving {
    state: Mutex<Arrivals>,
    changed: Condvar,
}

impl Arriving {
    fn lock(&self) -> MutexGuard<'_, Arrivals> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// A lane's reader on the evaluator's side: chunks to the reassembly until the lane's end.
fn lane_reads(lane: usize, mut ch: Box<dyn Channel>, shared: &Arriving) {
    let result = (|| -> Result<()> {
        loop {
            let mut header = [0u8; 12];
            ch.recv(&mut header)?;
            let offset = u64::from_be_bytes(header[..8].try_into().expect("8 bytes"));
            let n = frame_length(header[8..].try_into().expect("4 bytes"), "garbler")?;
            if n == 0 {
                let mut a = shared.lock();
                if a.end.is_some_and(|e| e != offset) {
                    return Err(Error::Malformed {
                        what: format!(
                            "race lanes ending the stream at {offset} and at {:?}",
                            a.end
                        ),
                    });
                }
                a.end = Some(offset);
                a.counts[lane] = ch.stats();
                drop(a);
                shared.changed.notify_all();
                return ch.close();
            }
            let mut bytes = vec![0u8; n];
            ch.recv(&mut bytes)?;
            let mut a = shared.lock();
            a.lane_bytes[lane] += n as u64;
            if a.at_half.is_none() && a.lane_bytes.iter().sum::<u64>() >= a.half_budget {
                a.at_half = Some(a.lane_bytes.clone());
            }
            let cost = n + CHUNK_OVERHEAD;
            // Flow control: past a quarter of the limit, while the next byte is here and
            // this side's reading is behind, the lane waits (its transport's window then
            // holds the garbler back). With the next byte missing it reads on: the chunk
            // that fills the gap may come behind others on its lane (one sent again on the
            // winner), up to the limit; the next byte itself is always taken.
            while a.held + cost > a.held_limit / 4 && a.chunks.contains_key(&a.read) && !a.failed {
                a = shared.changed.wait(a).unwrap_or_else(|e| e.into_inner());
            }
            if offset >= a.read && !a.chunks.contains_key(&offset) {
                if a.held + cost > a.held_limit && offset != a.read {
                    return Err(Error::Malformed {
                        what: format!(
                            "race chunks of more than {} bytes ahead of the stream's next byte",
                            a.held_limit
                        ),
                    });
                }
                a.held += cost;
                a.chunks.insert(offset, (bytes, 0));
            }
            a.counts[lane] = ch.stats();
            drop(a);
            shared.changed.notify_all();
        }
    })();
    if let Err(e) = result {
        let mut a = shared.lock();
        let loser = a.winner.is_some_and(|w| w != lane);
        if !a.failed && !loser && a.end != Some(a.read) {
            a.failed = true;
            a.failure = Some(e);
        }
        drop(a);
        shared.changed.notify_all();
    }
}

/// The evaluator's end: reads the garbler's frames on `first` until the race starts, then
/// the chunks of every lane that arrived on `offered` (all of them, within `wait` of the
/// start); sends its own stream, and the verdict once `budget` bytes have arrived, framed
/// on `first`.
pub struct RaceFollowing {
    first: Box<dyn Channel>,
    offered: Receiver<(usize, Box<dyn Channel>)>,
    lanes: usize,
    wait: Duration,
    budget: u64,
    held_limit: usize,
    /// When this side last told the garbler it lives ([`RaceFollowing::keep_alive`]).
    alive_told: Instant,
    left: usize,
    race: Option<(Arc<Arriving>, Vec<JoinHandle<()>>)>,
    verdict_sent: bool,
    outcome: Arc<Mutex<RaceOutcome>>,
}

impl RaceFollowing {
    /// `first`, whose peer races its sending over `lanes` connections that this side
    /// offers on `offered`, naming the winner once `budget` stream bytes arrived over them.
    pub fn new(
        first: Box<dyn Channel>,
        lanes: usize,
        offered: Receiver<(usize, Box<dyn Channel>)>,
        wait: Duration,
        budget: u64,
    ) -> Self {
        RaceFollowing {
            first,
            offered,
            lanes,
            wait,
            budget,
            held_limit: MAX_HELD,
            alive_told: Instant::now(),
            left: 0,
            race: None,
            verdict_sent: false,
            outcome: Arc::default(),
        }
    }

    /// The same end holding at most `bytes` ahead of what it has read (at least a
    /// quarter of which it may hold before flow control: [`MAX_HELD`] by default).
    pub fn holding_at_most(mut self, bytes: usize) -> Self {
        self.held_limit = bytes;
        self
    }

    /// What the race came to (filled in as it goes).
    pub fn outcome(&self) -> Arc<Mutex<RaceOutcome>> {
        self.outcome.clone()
    }

    /// Takes every lane (the race started) and starts their readers.
    fn start(&mut self) -> Result<()> {
        let deadline = Instant::now() + self.wait;
        let mut lanes: Vec<Option<Box<dyn Channel>>> = (0..self.lanes).map(|_| None).collect();
        while lanes.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(Instant::now());
            let (i, ch) = self
                .offered
                .recv_timeout(left)
                .map_err(|_| Error::Malformed {
                    what: format!(
                    "the garbler started a race over {} lanes; not all were offered within {:.1} s",
                    self.lanes,
                    self.wait.as_secs_f64()
                ),
                })?;
            if let Some(slot) = lanes.get_mut(i) {
                *slot = Some(ch);
            }
        }
        let shared = Arc::new(Arriving {
            state: Mutex::new(Arrivals {
                lane_bytes: vec![0; self.lanes],
                half_budget: self.budget / 2,
                counts: vec![ByteCounts::default(); self.lanes],
                held_limit: self.held_limit,
                ..Arrivals::default()
            }),
            changed: Condvar::new(),
        });
        let readers = lanes
            .into_iter()
            .flatten()
            .enumerate()
            .map(|(i, ch)| {
                let shared = shared.clone();
                thread::Builder::new()
                    .name(format!("race-read-{i}"))
                    .spawn(move || lane_reads(i, ch, &shared))
                    .expect("spawn a race lane's reader")
            })
            .collect();
        self.outcome
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .started = true;
        self.race = Some((shared, readers));
        Ok(())
    }

    /// The verdict, once the budget has arrived: the lane that delivered most in its second
    /// half.
    fn verdict_due(&mut self, a: &mut Arrivals) -> Option<Verdict> {
        if self.verdict_sent || a.lane_bytes.iter().sum::<u64>() < self.budget {
            return None;
        }
        // The lane that delivered most; of equals, the first (the model's order).
        let half = a
            .at_half
            .clone()
            .unwrap_or_else(|| vec![0; a.lane_bytes.len()]);
        let winner = (0..a.lane_bytes.len())
            .rev()
            .max_by_key(|i| a.lane_bytes[*i] - half[*i])?;
        a.winner = Some(winner);
        let mut o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
        o.winner = Some(winner);
        o.lane_bytes = a.lane_bytes.clone();
        Some(Verdict {
            winner,
            below: a.read,
            held: a.chunks.keys().copied().take(MAX_LISTED).collect(),
        })
    }

    /// Tells the garbler this side lives, at most every quarter of the timeout, while
    /// the race's chunks come (the garbler's reader of the first connection would see it
    /// silent for the whole transfer).
    fn keep_alive(&mut self) -> Result<()> {
        if self.alive_told.elapsed() < self.wait / 4 {
            return Ok(());
        }
        self.alive_told = Instant::now();
        self.send_frame(KEEPALIVE, &[])?;
        self.first.flush()
    }

    fn send_frame(&mut self, kind: u8, body: &[u8]) -> Result<()> {
        if body.is_empty() {
            let mut header = [kind, 0, 0, 0, 0];
            header[1..].copy_from_slice(&0u32.to_be_bytes());
            return self.first.send(&header);
        }
        for part in body.chunks(MAX_FRAME) {
            let mut header = [kind, 0, 0, 0, 0];
            header[1..].copy_from_slice(&(part.len() as u32).to_be_bytes());
            self.first.send(&header)?;
            self.first.send(part)?;
        }
        Ok(())
    }

    /// Reads from the reassembled stream. The verdict goes as soon as the budget has
    /// arrived, also while this waits for a chunk a slow lane holds.
    fn recv_raced(&mut self, buf: &mut [u8]) -> Result<()> {
        let (shared, _) = self.race.as_ref().expect("the race started");
        let shared = shared.clone();
        let mut filled = 0;
        let mut deadline = Instant::now() + self.wait;
        while filled < buf.len() {
            let mut a = shared.lock();
            if let Some(v) = self.verdict_due(&mut a) {
                drop(a);
                self.verdict_sent = true;
                self.send_frame(VERDICT, &v.encode())?;
                self.first.flush()?;
                continue;
            }
            let read = a.read;
            if let Some((chunk, start)) = a.chunks.remove(&read) {
                let rest = chunk.len() - start;
                a.held -= rest + CHUNK_OVERHEAD;
                let k = rest.min(buf.len() - filled);
                buf[filled..filled + k].copy_from_slice(&chunk[start..start + k]);
                filled += k;
                a.read += k as u64;
                if k < rest {
                    a.held += rest - k + CHUNK_OVERHEAD;
                    a.chunks.insert(read + k as u64, (chunk, start + k));
                }
                deadline = Instant::now() + self.wait;
                drop(a);
                shared.changed.notify_all();
                self.keep_alive()?;
                continue;
            }
            if a.failed {
                return Err(a.failure.take().unwrap_or(Error::Poisoned));
            }
            if a.end == Some(read) {
                return Err(Error::Closed {
                    during: "receiving",
                });
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout {
                    during: "receiving",
                    after: self.wait,
                });
            }
            drop(shared.changed.wait_timeout(a, left));
        }
        Ok(())
    }
}

impl Channel for RaceFollowing {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.send_frame(STREAM, bytes)
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        if self.race.is_some() {
            self.first.flush()?;
            return self.recv_raced(buf);
        }
        let mut filled = 0;
        while filled < buf.len() {
            if self.race.is_some() {
                return self.recv_raced(&mut buf[filled..]);
            }
            if self.left == 0 {
                let mut header = [0u8; 4];
                self.first.recv(&mut header)?;
                match frame_length(header, "garbler")? {
                    0 => self.start()?,
                    n => self.left = n,
                }
                continue;
            }
            let k = self.left.min(buf.len() - filled);
            self.first.recv(&mut buf[filled..filled + k])?;
            self.left -= k;
            filled += k;
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.first.flush()
    }

    /// Ends this side's stream on the first connection, then waits for each lane's end
    /// (its reader closes the lane).
    fn close(&mut self) -> Result<()> {
        let first = self.first.close();
        if let Some((shared, readers)) = &mut self.race {
            let readers = std::mem::take(readers);
            // The stream's end is waited for within the timeout (a garbler that never ends
            // a lane is not waited for longer); a loser's reader ends with its lane, which
            // this close does not wait for.
            let deadline = Instant::now() + self.wait;
            let mut a = shared.lock();
            while a.end.is_none() && !a.failed && Instant::now() < deadline {
                let left = deadline.saturating_duration_since(Instant::now());
                a = shared
                    .changed
                    .wait_timeout(a, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
            let winner = a.winner;
            drop(a);
            for (i, r) in readers.into_iter().enumerate() {
                if winner.is_none_or(|w| w == i) {
                    while !r.is_finished() && Instant::now() < deadline {
                        thread::sleep(Duration::from_millis(1));
                    }
                    if r.is_finished() {
                        let _ = r.join();
                    }
                }
            }
            let mut a = shared.lock();
            if a.failed && a.end != Some(a.read) {
                if let Some(e) = a.failure.take() {
                    return first.and(Err(e));
                }
            }
            let mut o = self.outcome.lock().unwrap_or_else(|p| p.into_inner());
            if o.winner.is_none() {
                o.lane_bytes = a.lane_bytes.clone();
            }
        }
        first
    }

    fn stats(&self) -> ByteCounts {
        let own = self.first.stats();
        let Some((shared, _)) = &self.race else {
            return own;
        };
        shared.lock().counts.iter().fold(own, |a, c| ByteCounts {
            sent: a.sent + c.sent,
            received: a.received + c.received,
        })
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        self.first.socket_buffers()
    }

    fn peer_addr(&self) -> Option<SocketAddr> {
        self.first.peer_addr()
    }
}
