//! An honest session recorded byte for byte: what each party sent, frame headers included.
//! `tests/transcript.rs` reads its wire layout; the fuzz target
//! `fuzz/fuzz_targets/session_peer.rs` (a crate of its own) includes this file by path and
//! replays the recording, edited, against a real party.

use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use transputation_2pc::{Evaluator, Garbler, Options};
use transputation_circuits::{Circuit, Party};
use transputation_transport::{memory_pair, ByteCounts, Channel, MemoryChannel, Result};

/// A channel that keeps a copy of everything sent through it.
struct Recording {
    inner: MemoryChannel,
    sent: Arc<Mutex<Vec<u8>>>,
}

impl Channel for Recording {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.sent.lock().unwrap().extend_from_slice(bytes);
        self.inner.send(bytes)
    }
    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.inner.recv(buf)
    }
    fn flush(&mut self) -> Result<()> {
        self.inner.flush()
    }
    fn close(&mut self) -> Result<()> {
        self.inner.close()
    }
    fn stats(&self) -> ByteCounts {
        self.inner.stats()
    }
}

/// What each party sent in one honest session of `c` under `options`, each receive waiting
/// at most `timeout`: `(garbler's bytes, evaluator's bytes)`. The garbler's input bit `i`
/// is `i % 3 == 0`, the evaluator's `i % 5 == 0`.
pub fn record(c: &Circuit, options: &Options, timeout: Duration) -> (Vec<u8>, Vec<u8>) {
    let g_in: Vec<bool> = (0..c.party_input_bits(Party::Garbler))
        .map(|i| i % 3 == 0)
        .collect();
    let e_in: Vec<bool> = (0..c.party_input_bits(Party::Evaluator))
        .map(|i| i % 5 == 0)
        .collect();
    let (a, b) = memory_pair(timeout);
    let (g_sent, e_sent) = (Arc::default(), Arc::default());
    let ga = Recording {
        inner: a,
        sent: Arc::clone(&g_sent),
    };
    let eb = Recording {
        inner: b,
        sent: Arc::clone(&e_sent),
    };
    let garbler = Garbler::new(c, options.clone(), &g_in).unwrap();
    let evaluator = Evaluator::new(c, options.clone(), &e_in).unwrap();
    thread::scope(|scope| {
        let g = scope.spawn(move || garbler.run(ga));
        evaluator.run(eb).expect("an honest evaluator");
        g.join().unwrap().expect("an honest garbler");
    });
    let take = |s: Arc<Mutex<Vec<u8>>>| std::mem::take(&mut *s.lock().unwrap());
    (take(g_sent), take(e_sent))
}
