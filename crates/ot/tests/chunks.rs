//! The chunked IKNP extension through the public API: correctness for mixed chunk sizes
//! and orders of interleaving, session-wide OT indices (the hash tweaks) across chunks,
//! FIFO misuse and hostile chunk messages as errors.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use transputation_core::Block;
use transputation_ot::{self as ot, Error, Message};

fn pairs(m: usize, rng: &mut ChaCha20Rng) -> Vec<[Block; 2]> {
    (0..m)
        .map(|_| [Block(rng.gen()), Block(rng.gen())])
        .collect()
}

/// Both sides after the base OTs, from `seed`.
fn base(seed: u64) -> (ot::ReceiverExtension, ot::Sender) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (r, msg_a) = ot::Receiver::start(&mut rng);
    let (s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
    (r.base(&msg_b).unwrap(), s)
}

fn check_labels(labels: &[Block], pairs: &[[Block; 2]], choices: &[bool], what: &str) {
    assert_eq!(labels.len(), pairs.len(), "{what}");
    for (j, ((label, pair), &c)) in labels.iter().zip(pairs).zip(choices).enumerate() {
        assert_eq!(*label, pair[c as usize], "{what}, OT {j}");
        assert_ne!(*label, pair[1 - c as usize], "{what}, OT {j}");
    }
}

const SIZES: [usize; 9] = [0, 1, 127, 128, 129, 4096, 10_000, 0, 3];

/// Every chunk extended first, then all answered, then all received (the evaluator far
/// ahead of the garbler).
#[test]
fn mixed_sizes_all_ahead() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let (mut ext, mut s) = base(2);
    let chunks: Vec<(Vec<bool>, Vec<[Block; 2]>)> = SIZES
        .iter()
        .map(|&m| ((0..m).map(|_| rng.gen()).collect(), pairs(m, &mut rng)))
        .collect();
    let msg_us: Vec<Vec<u8>> = chunks.iter().map(|(c, _)| ext.extend(c)).collect();
    assert_eq!(ext.pending(), SIZES.len());
    assert_eq!(ext.ots(), SIZES.iter().sum::<usize>() as u64);
    for (u, &m) in msg_us.iter().zip(&SIZES) {
        assert_eq!(u.len(), ot::msg_u_len(m));
    }
    let msg_ys: Vec<Vec<u8>> = msg_us
        .iter()
        .zip(&chunks)
        .map(|(u, (_, p))| s.extend(u, p).unwrap())
        .collect();
    assert_eq!(s.ots(), ext.ots());
    for ((y, (choices, pairs)), &m) in msg_ys.iter().zip(&chunks).zip(&SIZES) {
        assert_eq!(y.len(), ot::msg_y_len(m));
        assert_eq!(ext.next_pending(), Some(m));
        let labels = ext.receive(y).unwrap();
        check_labels(&labels, pairs, choices, &format!("chunk of {m}"));
    }
    assert_eq!(ext.pending(), 0);
    assert_eq!(ext.next_pending(), None);
}

/// The pipeline of the 2PC protocol: chunk k+1 extended before chunk k is received, with
/// reused buffers, labels appended to one vector.
#[test]
fn mixed_sizes_pipelined_with_reused_buffers() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let (mut ext, mut s) = base(4);
    let mut sizes = SIZES.to_vec();
    sizes.reverse();
    let total: usize = sizes.iter().sum();
    let choices: Vec<bool> = (0..total).map(|_| rng.gen()).collect();
    let all_pairs = pairs(total, &mut rng);
    let (mut u, mut y, mut labels) = (Vec::new(), Vec::new(), Vec::new());
    let mut in_flight = std::collections::VecDeque::new();
    let mut at = 0;
    for &m in &sizes {
        ext.extend_into(&choices[at..at + m], &mut u);
        s.extend_into(&u, &all_pairs[at..at + m], &mut y).unwrap();
        in_flight.push_back(y.clone());
        // Keep two chunks in flight.
        if in_flight.len() > 2 {
            ext.receive_into(&in_flight.pop_front().unwrap(), &mut labels)
                .unwrap();
        }
        at += m;
    }
    while let Some(y) = in_flight.pop_front() {
        ext.receive_into(&y, &mut labels).unwrap();
    }
    check_labels(&labels, &all_pairs, &choices, "pipelined");
}

/// The session-wide OT index is the hash tweak: chunks whose sizes are multiples of 128
/// give exactly the one-shot messages (same PRG positions, same tweaks; a tweak restarting
/// at 0 per chunk would change every msg_y after the first). With other sizes, the
/// messages agree up to the first chunk's padding and differ after it, because the padding
/// rows use up PRG output.
#[test]
fn chunk_messages_are_the_one_shot_messages_up_to_padding() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let m = 768;
    let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
    let pairs = pairs(m, &mut rng);
    let (mut ext, mut s) = base(6);
    let one_u = ext.extend(&choices);
    let one_y = s.extend(&one_u, &pairs).unwrap();

    let (mut ext, mut s) = base(6);
    let (mut u, mut y) = (Vec::new(), Vec::new());
    let mut at = 0;
    for m in [128, 0, 384, 256] {
        let chunk_u = ext.extend(&choices[at..at + m]);
        y.extend(s.extend(&chunk_u, &pairs[at..at + m]).unwrap());
        u.extend(chunk_u);
        at += m;
    }
    assert_eq!(u, one_u);
    assert_eq!(y, one_y);

    let (mut ext, mut s) = base(6);
    let u1 = ext.extend(&choices[..100]);
    let u2 = ext.extend(&choices[100..]);
    let y1 = s.extend(&u1, &pairs[..100]).unwrap();
    let y2 = s.extend(&u2, &pairs[100..]).unwrap();
    // Block 0 of msg_u differs only in the rows 100..128, which the chunk pads with 0.
    assert_ne!(u1, one_u[..u1.len()]);
    assert_eq!(y1, one_y[..y1.len()], "OTs 0..100: same rows, same tweaks");
    for j in 0..m - 100 {
        let (a, b) = (&y2[32 * j..32 * j + 32], &one_y[32 * (100 + j)..][..32]);
        assert_ne!(a, b, "OT {}", 100 + j);
    }
    assert_eq!(ext.receive(&y1).unwrap().len(), 100);
    let labels = ext.receive(&y2).unwrap();
    check_labels(&labels, &pairs[100..], &choices[100..], "after padding");
}

/// Receiving with nothing pending, or a msg_y of another chunk's length, is an error that
/// leaves the state as it was; the garbler's length check is per chunk.
#[test]
fn fifo_misuse_and_wrong_lengths_are_errors() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let (mut ext, mut s) = base(8);
    assert_eq!(
        ext.receive(&[]).unwrap_err(),
        Error::NothingPending { msg: Message::Y }
    );
    assert_eq!(
        Error::NothingPending { msg: Message::Y }.to_string(),
        "OT msg_y (the garbler's masked label pairs) arrived, but no chunk of OTs is waiting \
         for one"
    );
    let (c1, c2): (Vec<bool>, Vec<bool>) = (
        (0..200).map(|_| rng.gen()).collect(),
        (0..50).map(|_| rng.gen()).collect(),
    );
    let (p1, p2) = (pairs(200, &mut rng), pairs(50, &mut rng));
    let u1 = ext.extend(&c1);
    let u2 = ext.extend(&c2);
    // The garbler answers chunk 2's msg_u with chunk 1's pairs: msg_u_len(200) ≠ msg_u_len(50).
    assert_eq!(
        s.extend(&u2, &p1).unwrap_err(),
        Error::Length {
            msg: Message::U,
            expected: ot::msg_u_len(200),
            got: ot::msg_u_len(50),
        }
    );
    assert_eq!(s.ots(), 0, "a failed extend does not advance");
    let mut y = vec![7u8; 3];
    assert!(s.extend_into(&u1[1..], &p1, &mut y).is_err());
    assert_eq!(y, [7, 7, 7], "a failed extend_into leaves the buffer alone");
    let y1 = s.extend(&u1, &p1).unwrap();
    let y2 = s.extend(&u2, &p2).unwrap();
    // The evaluator gets chunk 2's msg_y first: the oldest pending chunk is chunk 1.
    let zeros = [0u8; 32 * 201];
    let bads: [&[u8]; 4] = [&y2, &y1[..y1.len() - 1], &[], &zeros];
    for bad in bads {
        assert_eq!(
            ext.receive(bad).unwrap_err(),
            Error::Length {
                msg: Message::Y,
                expected: 32 * 200,
                got: bad.len(),
            }
        );
        assert_eq!(ext.pending(), 2);
    }
    let mut labels = vec![Block(9)];
    assert!(ext.receive_into(&y2, &mut labels).is_err());
    assert_eq!(
        labels,
        [Block(9)],
        "a failed receive_into leaves the labels alone"
    );
    check_labels(&ext.receive(&y1).unwrap(), &p1, &c1, "chunk 1");
    check_labels(&ext.receive(&y2).unwrap(), &p2, &c2, "chunk 2");
    assert_eq!(
        ext.receive(&y2).unwrap_err(),
        Error::NothingPending { msg: Message::Y }
    );
}

/// Debug output of the extension shows the counts, no secret.
#[test]
fn extension_debug_hides_secrets() {
    let (mut ext, mut s) = base(9);
    ext.extend(&[true; 5]);
    assert_eq!(
        format!("{ext:?}"),
        "ReceiverExtension { ots: 5, pending: 1, .. }"
    );
    s.extend(&[0; 2048], &[[Block(1), Block(2)]; 5]).unwrap();
    assert_eq!(format!("{s:?}"), "Sender { .. }");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// A sequence of chunks whose msg_u and msg_y are random bytes, of the right length or
    /// a little off: an error exactly when the length is wrong, never a panic, and a
    /// rejected message changes nothing (the next, right-length one is accepted).
    #[test]
    fn hostile_chunk_messages(
        chunks in proptest::collection::vec((0usize..400, -40isize..40), 1..6),
        seed: u64,
    ) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let (mut ext, mut s) = base(seed);
        for &(m, _) in &chunks {
            ext.extend(&vec![true; m]);
        }
        for &(m, extra) in &chunks {
            let pairs = vec![[Block(3), Block(4)]; m];
            let u_len = ot::msg_u_len(m).saturating_add_signed(extra);
            let msg_u: Vec<u8> = (0..u_len).map(|_| rng.gen()).collect();
            match s.extend(&msg_u, &pairs) {
                Ok(y) => {
                    prop_assert_eq!(u_len, ot::msg_u_len(m));
                    prop_assert_eq!(y.len(), ot::msg_y_len(m));
                }
                Err(e) => prop_assert_eq!(
                    e,
                    Error::Length { msg: Message::U, expected: ot::msg_u_len(m), got: u_len }
                ),
            }
            let y_len = ot::msg_y_len(m).saturating_add_signed(extra);
            let msg_y: Vec<u8> = (0..y_len).map(|_| rng.gen()).collect();
            match ext.receive(&msg_y) {
                Ok(labels) => {
                    prop_assert_eq!(y_len, ot::msg_y_len(m));
                    prop_assert_eq!(labels.len(), m);
                }
                Err(e) => {
                    prop_assert_eq!(
                        e,
                        Error::Length { msg: Message::Y, expected: ot::msg_y_len(m), got: y_len }
                    );
                    prop_assert_eq!(ext.next_pending(), Some(m));
                    let labels = ext.receive(&vec![0; ot::msg_y_len(m)]).unwrap();
                    prop_assert_eq!(labels.len(), m);
                }
            }
        }
        prop_assert_eq!(
            ext.receive(&[]).unwrap_err(),
            Error::NothingPending { msg: Message::Y }
        );
    }
}
