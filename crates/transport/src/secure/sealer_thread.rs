//! Sealing large records on a second thread, beside the caller's own work.
//!
//! Encrypting is the main cost of protection, and it falls on the sending party, which in
//! 2PC is the garbler: the busiest process. With the sealing on a thread of its own, the
//! garbler's thread only copies the plaintext into a record buffer and goes on garbling,
//! while the record is sealed on the other core (which, on the two-core machines this
//! project measures on, the mostly waiting evaluator leaves idle much of the time).
//!
//! Order is kept by construction: one worker seals the records in the order handed over
//! (each takes the next counter value), and hands them back in that order. A small record
//! with none in flight (a protocol message the peer waits for) is sealed on the caller's
//! thread, without the hand-over's latency; the [`Sealer`] is shared behind a mutex for
//! that, never contended since the worker is idle then.

use std::sync::mpsc::{sync_channel, Receiver, SyncSender};
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::JoinHandle;

use super::record::{Kind, RecordError, Sealer, SEALED_HEADER};

/// Records handed to the worker and not yet taken back, at most.
const MAX_IN_FLIGHT: usize = 4;

type Done = Result<Vec<u8>, RecordError>;

/// The worker and the records in flight.
pub(super) struct SealerThread {
    sealer: Arc<Mutex<Sealer>>,
    jobs: Option<SyncSender<(Kind, Vec<u8>)>>,
    done: Receiver<Done>,
    in_flight: usize,
    spare: Vec<Vec<u8>>,
    thread: Option<JoinHandle<()>>,
}

impl SealerThread {
    pub(super) fn new(sealer: Sealer) -> Self {
        let sealer = Arc::new(Mutex::new(sealer));
        let (jobs, job_rx) = sync_channel::<(Kind, Vec<u8>)>(MAX_IN_FLIGHT);
        let (done_tx, done) = sync_channel::<Done>(MAX_IN_FLIGHT);
        let s = sealer.clone();
        let thread = std::thread::Builder::new()
            .name("record-sealer".into())
            .spawn(move || {
                for (kind, mut record) in job_rx {
                    let r = s
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .seal(kind, &mut record)
                        .map(|()| record);
                    if done_tx.send(r).is_err() {
                        break;
                    }
                }
            })
            .ok();
        SealerThread {
            sealer,
            jobs: thread.as_ref().map(|_| jobs),
            done,
            in_flight: 0,
            spare: Vec::new(),
            thread,
        }
    }

    /// An empty record buffer: room for the sealed header, capacity for a whole record.
    pub(super) fn buffer(&mut self, capacity: usize) -> Vec<u8> {
        let mut b = self
            .spare
            .pop()
            .unwrap_or_else(|| Vec::with_capacity(capacity));
        b.clear();
        b.resize(SEALED_HEADER, 0);
        b
    }

    /// Gives back a sent record's buffer for reuse.
    pub(super) fn recycle(&mut self, b: Vec<u8>) {
        if self.spare.len() < MAX_IN_FLIGHT + 1 {
            self.spare.push(b);
        }
    }

    /// Seals `record`: on the worker if it is large or records are in flight (the sealed
    /// record then comes back from [`SealerThread::next`]), else here (returned at once).
    pub(super) fn submit(
        &mut self,
        kind: Kind,
        mut record: Vec<u8>,
        large: bool,
    ) -> Result<Option<Vec<u8>>, RecordError> {
        match &self.jobs {
            Some(jobs) if large || self.in_flight > 0 => {
                if jobs.send((kind, record)).is_err() {
                    return Err(RecordError::Worker);
                }
                self.in_flight += 1;
                Ok(None)
            }
            _ => {
                self.sealer
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .seal(kind, &mut record)?;
                Ok(Some(record))
            }
        }
    }

    /// The next sealed record, in order: waiting for it if `wait` or if the worker holds
    /// the most records it may; `None` if there is none (ready).
    pub(super) fn next(&mut self, wait: bool) -> Option<Done> {
        if self.in_flight == 0 {
            return None;
        }
        let r = if wait || self.in_flight >= MAX_IN_FLIGHT {
            self.done.recv().ok()
        } else {
            self.done.try_recv().ok()
        };
        if r.is_some() {
            self.in_flight -= 1;
        } else if wait {
            // The worker is gone (it never panics; this is defensive).
            self.in_flight = 0;
            return Some(Err(RecordError::Worker));
        }
        r
    }
}

impl Drop for SealerThread {
    fn drop(&mut self) {
        self.jobs = None;
        if let Some(t) = self.thread.take() {
            // The worker ends once its job queue is closed; drain what it still sends.
            while self.done.recv().is_ok() {}
            let _ = t.join();
        }
    }
}
