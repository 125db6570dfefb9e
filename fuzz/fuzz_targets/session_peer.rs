//! Fuzzes a real 2PC party against a hostile peer. The peer's bytes are what an honest peer
//! sent in a recorded session (frame headers included), edited by the fuzzer: bytes
//! flipped, inserted, deleted, the stream cut short. Property: whatever the edits, the real
//! garbler or evaluator returns (an output or an error) and never panics, and it never
//! waits for bytes that will not come: the fake peer has closed its sending side, so a
//! receive past the script's end fails at once, and a run that lasts the channel's timeout
//! fails the target. (A silent peer that stays connected is the unit tests' case.)
//!
//! Input: byte 0 picks the real party, the scheme and the output mode; every following 4
//! bytes are one edit (`offset` u16 little-endian, scaled to the transcript; `op`; `value`).
//! Without edits the honest transcript is replayed: its OT messages do not fit the real
//! party's fresh randomness, so the session runs to its end on wrong labels, which a
//! semi-honest protocol allows; only crashing or hanging is a failure.
#![no_main]

#[path = "../../crates/twopc/tests/common/mod.rs"]
mod common;

use std::sync::OnceLock;
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use transputation_2pc::{Evaluator, Garbler, Options, OutputMode};
use transputation_circuits::{library, Circuit};
use transputation_garble::Scheme;
use transputation_transport::{memory_pair, Channel};

/// Longest any receive waits; a session never takes this long here, so hitting it means
/// the real party waited for bytes its (closed) peer will never send.
const TIMEOUT: Duration = Duration::from_secs(5);

const SCHEMES: [Scheme; 3] = [Scheme::Ideal, Scheme::Circular, Scheme::Prf];
const OUTPUTS: [OutputMode; 2] = [OutputMode::Both, OutputMode::Evaluator];

fn circuit() -> &'static Circuit {
    static CIRCUIT: OnceLock<Circuit> = OnceLock::new();
    // 32 AND gates, 32 input bits per party, one output bit (seven padding bits to check).
    CIRCUIT.get_or_init(|| library::load("millionaires").expect("a built-in circuit"))
}

fn options(scheme: Scheme, output: OutputMode) -> Options {
    Options {
        output,
        ..Options::new(scheme)
    }
}

/// The honest transcripts, by scheme and output mode.
fn transcripts() -> &'static Vec<(Vec<u8>, Vec<u8>)> {
    static T: OnceLock<Vec<(Vec<u8>, Vec<u8>)>> = OnceLock::new();
    T.get_or_init(|| {
        let mut all = Vec::new();
        for scheme in SCHEMES {
            for output in OUTPUTS {
                all.push(common::record(circuit(), &options(scheme, output), TIMEOUT));
            }
        }
        all
    })
}

/// Applies the edits in `ops` (4 bytes each) to `bytes`.
fn edit(mut bytes: Vec<u8>, ops: &[u8]) -> Vec<u8> {
    for op in ops.chunks_exact(4) {
        let at = usize::from(u16::from_le_bytes([op[0], op[1]])) * (bytes.len() + 1) / 65536;
        match op[2] % 4 {
            0 if at < bytes.len() => bytes[at] ^= op[3].max(1),
            1 => bytes.truncate(at),
            2 => bytes.insert(at, op[3]),
            3 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {}
        }
    }
    bytes
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, ops)) = data.split_first() else {
        return;
    };
    // Settings in the order of `transcripts`; the next bit of `pick` says which party is real.
    let settings = SCHEMES.len() * OUTPUTS.len();
    let setting = usize::from(pick) % settings;
    let (scheme, output) = (
        SCHEMES[setting / OUTPUTS.len()],
        OUTPUTS[setting % OUTPUTS.len()],
    );
    let real_garbler = (usize::from(pick) / settings) % 2 == 0;
    let (g_sent, e_sent) = &transcripts()[setting];
    let script = edit(if real_garbler { e_sent } else { g_sent }.clone(), ops);

    // The fake peer sends its whole script and closes its sending side, but stays alive,
    // so that the real party's own sends succeed and it reads the script to its end.
    let (real, mut fake) = memory_pair(TIMEOUT);
    fake.send(&script).unwrap();
    fake.flush().unwrap();
    fake.close().unwrap();

    let c = circuit();
    let start = Instant::now();
    let outcome = if real_garbler {
        let input: Vec<bool> = (0..32).map(|i| i % 2 == 0).collect();
        Garbler::new(c, options(scheme, output), &input)
            .unwrap()
            .run(real)
    } else {
        let input: Vec<bool> = (0..32).map(|i| i % 7 == 0).collect();
        Evaluator::new(c, options(scheme, output), &input)
            .unwrap()
            .run(real)
    };
    assert!(
        start.elapsed() < TIMEOUT,
        "the real party waited {:?} on a closed peer: {outcome:?}",
        start.elapsed()
    );
    if let Ok(report) = outcome {
        // A session that ends well reports an output of the circuit's size when the
        // party learns it.
        if let Some(out) = report.output {
            assert_eq!(out.len(), c.n_outputs());
        }
    }
    drop(fake);
});
