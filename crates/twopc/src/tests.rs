//! The drivers' steps, each on its own over an in-memory channel: one party's step against
//! the other party's step, or against a peer written here that sends exactly the bytes a
//! case needs.

use std::sync::atomic::AtomicBool;
use std::thread;
use std::time::{Duration, Instant};

use transputation_circuits::{library, Circuit, Party};
use transputation_core::prg::Prg;
use transputation_core::Block;
use transputation_garble::Scheme;
use transputation_transport::{memory_pair, Channel, MemoryChannel};

use crate::error::Error;
use crate::evaluator::Evaluator;
use crate::evaluator::{evaluate_tables, extend_ot, recv_label_seed, recv_ot_labels};
use crate::garbler::{
    answer_base_ot, exchange_headers, garble_ahead, labels_and_ot, send_tables, AheadLimits,
};
use crate::garbler::{set_drawn_labels, Garbler, OtLabels};
use crate::header::SessionHeader;
use crate::inputs::wires_of;
use crate::messages::{
    BaseOtAnswer, BaseOtPoint, DecodingBits, LabelTransfer, OutputBits, OutputContext, TableBatch,
    OT_CHUNK,
};
use crate::options::{Options, OutputMode};
use crate::wire::Wire;

const TIMEOUT: Duration = Duration::from_secs(5);

/// Two wires over one in-memory channel.
fn wires() -> (Wire<MemoryChannel>, Wire<MemoryChannel>) {
    let (a, b) = memory_pair(TIMEOUT);
    (Wire::new(a, Vec::new()), Wire::new(b, Vec::new()))
}

fn bits(n: usize, every: usize) -> Vec<bool> {
    (0..n).map(|i| i % every == 0).collect()
}

#[test]
fn headers_are_exchanged_and_checked() {
    let c = library::load("millionaires").unwrap();
    for (theirs_scheme, ok) in [(Scheme::Ideal, true), (Scheme::Prf, false)] {
        let (mut g, mut e) = wires();
        let ours = SessionHeader::new(Party::Garbler, &c, Scheme::Ideal, OutputMode::Both);
        let theirs = SessionHeader::new(Party::Evaluator, &c, theirs_scheme, OutputMode::Both);
        e.send(&theirs).unwrap();
        e.flush().unwrap();
        let r = exchange_headers(&mut g, &ours);
        assert_eq!(r.is_ok(), ok, "{r:?}");
        if !ok {
            assert!(matches!(
                r,
                Err(Error::Mismatch {
                    field: "garbling scheme",
                    ..
                })
            ));
        }
        // Out before the step returned, with no flush of ours: the evaluator reads it
        // whether the headers matched or not.
        let sent: SessionHeader = e.recv(()).unwrap();
        assert_eq!(sent, ours);
        assert_eq!(g.sent.header, 136);
        assert_eq!(g.sent.framing, 8);
    }
}

/// Messages 2 and 4 to 7 between the garbler's steps and the evaluator's: the evaluator
/// ends with the garbler's label for each of its input bits and for each of the garbler's;
/// under a global offset the garbler's labels of the evaluator's wires are the ones the OT
/// drew, and no OT reply crosses.
fn labels_and_ot_deliver_the_chosen_labels(scheme: Scheme, circuit: &Circuit) {
    let (n_g, n_e) = (
        circuit.party_input_bits(Party::Garbler),
        circuit.party_input_bits(Party::Evaluator),
    );
    let (g_in, e_in) = (bits(n_g, 3), bits(n_e, 5));
    let garbler = Garbler::new(circuit, Options::new(scheme), &g_in).unwrap();
    let evaluator = Evaluator::new(circuit, Options::new(scheme), &e_in).unwrap();
    let (mut g, mut e) = wires();
    let Garbler {
        header,
        label_seed,
        ot_setup,
        mut ot,
        mut garble,
        ..
    } = garbler;
    let g_thread = thread::spawn(move || -> Result<_, Error> {
        // The header goes first in a session (exchange_headers); here it stands alone.
        g.send(&header)?;
        labels_and_ot(
            &mut g,
            label_seed,
            ot_setup,
            &mut ot,
            &AtomicBool::new(false),
        )?;
        // The session's next message would carry the replies out; here a flush does.
        g.flush()?;
        Ok((g, ot))
    });
    let Evaluator {
        mut evaluate,
        ot_start: (receiver, point),
        ot_rows,
        mut ot_labels,
        ..
    } = evaluator;
    e.send(&BaseOtPoint(&point)).unwrap();
    e.flush().unwrap();
    let theirs: SessionHeader = e.recv(()).unwrap();
    assert_eq!(theirs.role, Party::Garbler);
    let BaseOtAnswer(answer) = e.recv(()).unwrap();
    evaluate.set_hash_key(theirs.garbling_key);
    let mut receiver = receiver.with_hash_key(theirs.ot_key).base(answer).unwrap();
    recv_label_seed(&mut e, circuit, &mut *evaluate).unwrap();
    extend_ot(
        &mut e,
        &mut receiver,
        &e_in,
        ot_rows,
        LabelTransfer::first(scheme, circuit),
        circuit,
        &mut *evaluate,
        &mut ot_labels,
        &mut Vec::new(),
    )
    .unwrap();
    recv_ot_labels(
        &mut e,
        &mut receiver,
        LabelTransfer::first(scheme, circuit),
        circuit,
        &mut *evaluate,
        &mut ot_labels,
    )
    .unwrap();
    let (g, ot) = g_thread.join().unwrap().unwrap();
    if let OtLabels::Drawn { .. } = &ot.labels {
        // The garbler's own step: the labels the OT drew become its 0-labels.
        set_drawn_labels(circuit, &mut *garble, &ot.labels);
    }

    let chunks = n_e.div_ceil(OT_CHUNK) as u64;
    let replies = match LabelTransfer::first(scheme, circuit) {
        LabelTransfer::Drawn => 0,
        _ => chunks,
    };
    assert_eq!(e.received.labels, 16);
    assert_eq!(g.received.framing, 8 * (1 + chunks));
    assert_eq!(e.received.framing, 8 * (3 + replies));
    for (party, input) in [(Party::Garbler, &g_in), (Party::Evaluator, &e_in)] {
        let all_wires = wires_of(circuit, party).into_iter().flatten();
        for (w, &bit) in all_wires.zip(input.iter()) {
            let want = garble.input_labels(w)[usize::from(bit)];
            let got = evaluate.input_labels_mut(w, 1)[0];
            assert_eq!(got, want, "{scheme}: wire {w} of the {party}");
        }
    }
}

#[test]
fn labels_and_ot_deliver_the_chosen_labels_under_every_scheme() {
    // More evaluator inputs than one OT chunk, so that messages 6 and 7 come in several.
    let c = library::load("synthetic:and=64,xor=64,inputs=20000").unwrap();
    assert!(c.party_input_bits(Party::Evaluator) > OT_CHUNK);
    for scheme in [Scheme::Ideal, Scheme::Circular, Scheme::Prf] {
        labels_and_ot_deliver_the_chosen_labels(scheme, &c);
    }
    let c = library::load("millionaires").unwrap();
    labels_and_ot_deliver_the_chosen_labels(Scheme::Ideal, &c);
}

/// Every table of `circuit` under `scheme`, garbled in one go from `seed`.
fn all_tables(circuit: &Circuit, scheme: Scheme, seed: u128) -> Vec<u8> {
    let options = Options::new(scheme);
    let mut garble = scheme.garbler(circuit, &mut Prg::new(Block(seed)), options.backend);
    let mut out = Vec::new();
    let mut more = true;
    while more {
        let at = out.len();
        (_, more) = garble.garble_at(&mut out, at, usize::MAX);
    }
    out
}

#[test]
fn tables_garbled_ahead_go_first_then_the_rest_in_batches() {
    let c = library::load("aes128").unwrap();
    let scheme = Scheme::Ideal;
    let want = all_tables(&c, scheme, 42);
    let options = Options::new(scheme);
    let mut garble = scheme.garbler(&c, &mut Prg::new(Block(42)), options.backend);
    let limits = AheadLimits {
        batch_bytes: 16 << 10,
        prefetch_bytes: want.len() / 3,
        all_ahead: false,
    };
    let mut ahead = Vec::new();
    let (done, answering) = (AtomicBool::new(false), AtomicBool::new(false));
    let (ahead_batches, _) = garble_ahead(&mut *garble, &mut ahead, limits, &done, &answering);
    let ahead_bytes: usize = ahead_batches.iter().map(|r| r.len()).sum();
    assert!(ahead_bytes >= limits.prefetch_bytes && ahead_bytes < want.len());
    assert!(ahead_batches.len() > 1);

    let (mut g, mut e) = wires();
    let peer = thread::spawn(move || {
        let mut got = Vec::new();
        let mut sizes = Vec::new();
        while got.len() < want.len() {
            let TableBatch(batch) = e.recv(want.len() - got.len()).unwrap();
            sizes.push(batch.len());
            got.extend_from_slice(batch);
        }
        assert!(got == want, "the tables differ from garbling in one go");
        (sizes, e.received.tables)
    });
    let buffers = vec![Vec::new(); 3];
    send_tables(
        &mut g,
        &mut *garble,
        &ahead,
        ahead_batches.clone(),
        buffers,
        (16 << 10, false),
    )
    .unwrap();
    g.flush().unwrap();
    let (sizes, received) = peer.join().unwrap();
    let firsts: Vec<usize> = ahead_batches.iter().map(|r| r.len()).collect();
    assert_eq!(sizes[..firsts.len()], firsts[..]);
    assert_eq!(received, g.sent.tables);
}

#[test]
fn the_evaluator_refuses_more_tables_than_the_circuit_has_before_reading_them() {
    let c = library::load("millionaires").unwrap();
    let evaluator = Evaluator::new(&c, Options::new(Scheme::Ideal), &bits(32, 2)).unwrap();
    let (e, mut raw) = memory_pair(TIMEOUT);
    let mut e = Wire::new(e, Vec::new());
    // A batch one byte past the tables, announced but never sent: the refusal must not
    // wait for its bytes.
    let table_bytes = evaluator.sizes.table_bytes;
    raw.send(&((table_bytes + 1) as u64).to_be_bytes()).unwrap();
    raw.flush().unwrap();
    let Evaluator {
        mut evaluate,
        batches,
        ..
    } = evaluator;
    let start = Instant::now();
    let r = evaluate_tables(&mut e, &mut *evaluate, &c, batches, (table_bytes, None));
    assert!(start.elapsed() < TIMEOUT / 2);
    match r {
        Err(Error::Malformed { what, problem }) => {
            assert_eq!(what, "garbled tables");
            assert!(
                problem.contains(&format!("at most {table_bytes} bytes")),
                "{problem}"
            );
        }
        other => panic!("{other:?}"),
    }
    drop(raw);
}

#[test]
fn a_wrong_length_is_refused_from_the_frame_header_alone() {
    let c = library::load("aes128").unwrap();
    for announced in [0u64, 15, 17, 32, 1 << 40] {
        let (e, mut raw) = memory_pair(TIMEOUT);
        let mut e = Wire::new(e, Vec::new());
        raw.send(&announced.to_be_bytes()).unwrap();
        raw.flush().unwrap();
        let mut evaluate = Evaluator::new(&c, Options::new(Scheme::Prf), &bits(128, 2))
            .unwrap()
            .evaluate;
        let start = Instant::now();
        let r = recv_label_seed(&mut e, &c, &mut *evaluate);
        // The body never comes: a receiver that waited for it would fail only at the
        // timeout, with the transport's error.
        assert!(start.elapsed() < TIMEOUT / 2, "{announced}: {r:?}");
        let err = r.unwrap_err();
        if announced > transputation_transport::DEFAULT_MAX_MESSAGE {
            assert!(
                matches!(
                    err,
                    Error::Transport(transputation_transport::Error::MessageTooLarge { .. })
                ),
                "{err}"
            );
        } else {
            assert!(
                matches!(
                    err,
                    Error::Malformed {
                        what: "seed of the garbler's input labels",
                        ..
                    }
                ),
                "{err}"
            );
        }
        drop(raw);
    }
}

#[test]
fn a_base_ot_point_that_is_no_point_is_the_ots_error() {
    let (mut g, mut e) = wires();
    e.send(&BaseOtPoint(&[0xff; 32])).unwrap();
    e.flush().unwrap();
    let setup = transputation_ot::Sender::setup(&mut rand::thread_rng());
    let r = answer_base_ot(&mut g, setup, Block(1), &AtomicBool::new(false));
    assert!(matches!(r, Err(Error::Ot(_))), "{:?}", r.err());
}

#[test]
fn decoding_and_output_steps_check_their_bits() {
    let (mut g, mut e) = wires();
    let decoding = vec![true, false, true];
    g.send(&DecodingBits(decoding.clone())).unwrap();
    g.flush().unwrap();
    assert_eq!(e.recv::<DecodingBits>(3).unwrap().0, decoding);
    // Eight output bits where three belong: the same length, padding bits set.
    e.send(&OutputBits(Some(vec![true; 8]))).unwrap();
    e.flush().unwrap();
    let cx = OutputContext {
        mode: OutputMode::Both,
        bits: 3,
    };
    let r = g.recv::<OutputBits>(cx);
    assert!(
        matches!(&r, Err(Error::Malformed { what: "output", problem }) if problem.contains("padding")),
        "{r:?}"
    );
}

/// Each garbler draws its session's hash keys at random (docs/garbling.md §5.3): never the
/// reference keys, never one another's.
#[test]
fn each_garbler_draws_its_own_hash_keys() {
    let c = library::load("millionaires").unwrap();
    let input = vec![false; c.party_input_bits(Party::Garbler)];
    let keys: Vec<(Block, Block)> = (0..2)
        .map(|_| {
            let g = Garbler::new(&c, Options::new(Scheme::Ideal), &input).unwrap();
            (g.header.garbling_key, g.header.ot_key)
        })
        .collect();
    for &(gc, ot) in &keys {
        assert!(gc != ot && gc != Block::ZERO && ot != Block::ZERO);
        assert_ne!(gc, transputation_garble::schemes::half_gates::Tccr::KEY);
        assert_ne!(ot, transputation_ot::HASH_KEY);
    }
    assert!(keys[0].0 != keys[1].0 && keys[0].1 != keys[1].1);
}
