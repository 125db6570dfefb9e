//! The session's threads: a relay that hands byte buffers from a producing thread to the
//! calling one (garbling then sending, receiving then evaluating), and the idle class in
//! which the garbler's garbling ahead runs.

/// Batches of tables in flight between the garbler's garbling and sending threads, and
/// between the evaluator's receiving and evaluating threads, after the OT: enough that
/// neither thread waits for the other on a short hiccup.
pub(crate) const SEND_QUEUE: usize = 3;

/// Puts the calling thread in Linux's SCHED_IDLE class, where it runs only on a core that
/// has nothing else to run. Best effort: where the call fails the thread keeps its class.
/// A thread may always lower its own class; it cannot return without privilege, so only a
/// thread that ends with its idle work calls this.
#[allow(unsafe_code)]
pub(crate) fn idle_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param for the call's duration; pid 0 names the
        // calling thread; the call has no other effect on memory.
        let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    }
}

/// Moves byte buffers from `produce`, on a thread of its own, to `consume`, on the calling
/// thread, through bounded queues: the `buffers` go round between the two, so memory stays
/// at their number, and neither side waits for the other while a buffer is free.
/// `produce` fills a buffer, which holds what its last round left in it (so that a producer
/// that overwrites it, as a receive does, need not have it zeroed first: 32 MB of tables
/// cost ~1.5 ms of memset), and says whether more follow (it is called at least
/// once, and `consume` then gets at least that buffer); the relay ends after the last
/// buffer, or when a side fails: that closes the queues, and the other side stops at its
/// next buffer. Returns the producer's error, else the consumer's.
pub(crate) fn relay<E: Send>(
    buffers: Vec<Vec<u8>>,
    mut produce: impl FnMut(&mut Vec<u8>) -> Result<bool, E> + Send,
    mut consume: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(buffers.len());
    let (empty_tx, empty_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(buffers.len());
    for b in buffers {
        empty_tx.send(b).expect("room for every buffer");
    }
    std::thread::scope(|scope| {
        let producer = scope.spawn(move || -> Result<(), E> {
            while let Ok(mut buf) = empty_rx.recv() {
                let more = produce(&mut buf)?;
                if full_tx.send(buf).is_err() || !more {
                    break;
                }
            }
            Ok(())
        });
        let mut consumed = Ok(());
        while let Ok(buf) = full_rx.recv() {
            consumed = consume(&buf);
            if consumed.is_err() {
                break;
            }
            // The producer may have finished: a buffer nobody takes is dropped.
            let _ = empty_tx.send(buf);
        }
        drop((full_rx, empty_tx));
        producer
            .join()
            .expect("the producing thread does not panic")?;
        consumed
    })
}
