//! Correlated OT through the public API, with chosen zero labels (msg_d) and with zero labels
//! the OT draws (no message back): the evaluator gets `x^0 ⊕ r·Δ` for mixed chunk sizes and
//! for chunks mixed with ordinary ones; hostile lengths are errors; misuse panics.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use transputation_core::Block;
use transputation_ot::{self as ot, Error, Message};

/// Both sides after the base OTs, the garbler with offset `delta`.
fn base(seed: u64, delta: Block) -> (ot::ReceiverExtension, ot::Sender) {
    let mut rng = ChaCha20Rng::seed_from_u64(seed);
    let (r, msg_a) = ot::Receiver::start(&mut rng);
    let (s, msg_b) = ot::Sender::setup_correlated(delta, &mut rng)
        .respond(&msg_a)
        .unwrap();
    (r.base(&msg_b).unwrap(), s)
}

fn blocks(m: usize, rng: &mut ChaCha20Rng) -> Vec<Block> {
    (0..m).map(|_| Block(rng.gen())).collect()
}

fn check(labels: &[Block], zeros: &[Block], choices: &[bool], delta: Block, what: &str) {
    assert_eq!(labels.len(), zeros.len(), "{what}");
    for (j, ((&label, &x0), &c)) in labels.iter().zip(zeros).zip(choices).enumerate() {
        let (chosen, other) = if c {
            (x0 ^ delta, x0)
        } else {
            (x0, x0 ^ delta)
        };
        assert_eq!(label, chosen, "{what}, OT {j}");
        assert_ne!(label, other, "{what}, OT {j}");
    }
}

const SIZES: [usize; 9] = [0, 1, 127, 128, 129, 4096, 10_000, 0, 3];

#[test]
fn the_evaluator_gets_its_label_for_every_chunk_size() {
    let mut rng = ChaCha20Rng::seed_from_u64(1);
    let delta = Block(rng.gen::<u128>() | 1);
    let (mut ext, mut s) = base(2, delta);
    let (mut u, mut d) = (Vec::new(), Vec::new());
    for &m in &SIZES {
        let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
        let zeros = blocks(m, &mut rng);
        ext.extend_into(&choices, &mut u);
        s.extend_correlated_into(&u, &zeros, &mut d).unwrap();
        assert_eq!(d.len(), ot::msg_d_len(m));
        let mut labels = Vec::new();
        ext.receive_correlated_into(&d, &mut labels).unwrap();
        check(&labels, &zeros, &choices, delta, &format!("chunk of {m}"));
    }
    assert_eq!(s.ots(), ext.ots());
    assert_eq!(ext.pending(), 0);
}

/// Ordinary chunks (msg_y) and correlated chunks (msg_d) in one session share the index
/// counter and the column PRGs; both kinds stay right.
#[test]
fn correlated_and_ordinary_chunks_mix() {
    let mut rng = ChaCha20Rng::seed_from_u64(3);
    let delta = Block(rng.gen::<u128>() | 1);
    let (mut ext, mut s) = base(4, delta);
    for (k, &m) in SIZES.iter().enumerate() {
        let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
        let u = ext.extend(&choices);
        let mut labels = Vec::new();
        let zeros = blocks(m, &mut rng);
        if k % 2 == 0 {
            let mut d = Vec::new();
            s.extend_correlated_into(&u, &zeros, &mut d).unwrap();
            ext.receive_correlated_into(&d, &mut labels).unwrap();
            check(&labels, &zeros, &choices, delta, &format!("correlated {k}"));
        } else {
            let pairs: Vec<[Block; 2]> = zeros.iter().map(|&x| [x, Block(rng.gen())]).collect();
            let y = s.extend(&u, &pairs).unwrap();
            ext.receive_into(&y, &mut labels).unwrap();
            for (j, ((l, p), &c)) in labels.iter().zip(&pairs).zip(&choices).enumerate() {
                assert_eq!(*l, p[usize::from(c)], "ordinary {k}, OT {j}");
            }
        }
    }
}

/// Correlated OTs whose zero labels the OT draws (no msg_d): the garbler's zeros are its
/// rows `q_j`, the evaluator's labels `q_j ⊕ r_j·Δ`, for every chunk size, mixed with
/// chosen-label chunks; the zeros of different OTs differ.
#[test]
fn drawn_zero_labels_match_the_evaluators_labels() {
    let mut rng = ChaCha20Rng::seed_from_u64(5);
    let delta = Block(rng.gen::<u128>() | 1);
    let (mut ext, mut s) = base(6, delta);
    let mut u = Vec::new();
    let mut all_zeros = Vec::new();
    for (k, &m) in SIZES.iter().enumerate() {
        let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
        let (mut labels, mut zeros) = (vec![Block(7)], vec![Block(8)]);
        if k % 3 == 2 {
            let chosen = blocks(m, &mut rng);
            ext.extend_into(&choices, &mut u);
            let mut d = Vec::new();
            s.extend_correlated_into(&u, &chosen, &mut d).unwrap();
            ext.receive_correlated_into(&d, &mut labels).unwrap();
            zeros.extend(chosen);
        } else {
            ext.extend_cot_into(&choices, &mut u, &mut labels);
            assert_eq!(u.len(), ot::msg_u_len(m));
            s.extend_cot_zeros_into(&u, m, &mut zeros).unwrap();
            all_zeros.extend_from_slice(&zeros[1..]);
        }
        assert_eq!(
            (labels[0], zeros[0]),
            (Block(7), Block(8)),
            "appended, not replaced"
        );
        check(
            &labels[1..],
            &zeros[1..],
            &choices,
            delta,
            &format!("chunk {k} of {m}"),
        );
    }
    assert_eq!((s.ots(), ext.pending()), (ext.ots(), 0));
    let distinct: std::collections::HashSet<u128> = all_zeros.iter().map(|b| b.0).collect();
    assert_eq!(distinct.len(), all_zeros.len());
}

#[test]
fn a_drawn_zero_chunk_refuses_a_msg_u_of_another_length() {
    let (mut ext, mut s) = base(9, Block(3));
    let mut u = Vec::new();
    ext.extend_cot_into(&[true; 300], &mut u, &mut Vec::new());
    let mut zeros = vec![Block(1)];
    for m in [0, 128, 256, 385, 1000] {
        let e = s.extend_cot_zeros_into(&u, m, &mut zeros).unwrap_err();
        assert_eq!(
            e,
            Error::Length {
                msg: Message::U,
                expected: ot::msg_u_len(m),
                got: u.len()
            }
        );
    }
    assert_eq!((zeros, s.ots()), (vec![Block(1)], 0));
    s.extend_cot_zeros_into(&u, 300, &mut Vec::new()).unwrap();
    assert_eq!(s.ots(), 300);
}

#[test]
#[should_panic(expected = "setup_correlated")]
fn drawn_zero_chunks_need_a_correlated_sender() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let (r, msg_a) = ot::Receiver::start(&mut rng);
    let (mut s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
    let mut ext = r.base(&msg_b).unwrap();
    let mut u = Vec::new();
    ext.extend_cot_into(&[true; 3], &mut u, &mut Vec::new());
    let _ = s.extend_cot_zeros_into(&u, 3, &mut Vec::new());
}

#[test]
#[should_panic(expected = "setup_correlated")]
fn correlated_chunks_need_a_correlated_sender() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let (r, msg_a) = ot::Receiver::start(&mut rng);
    let (mut s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
    let mut ext = r.base(&msg_b).unwrap();
    let u = ext.extend(&[true; 3]);
    let _ = s.extend_correlated_into(&u, &[Block(1); 3], &mut Vec::new());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// msg_u and msg_d of random bytes, of the right length or a little off: an error
    /// exactly when the length is wrong, never a panic; a rejected msg_d leaves the chunk
    /// pending and the labels alone.
    #[test]
    fn hostile_correlated_messages(
        chunks in proptest::collection::vec((0usize..400, -40isize..40), 1..6),
        seed: u64,
    ) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let (mut ext, mut s) = base(seed, Block(rng.gen::<u128>() | 1));
        for &(m, _) in &chunks {
            ext.extend(&vec![true; m]);
        }
        for &(m, extra) in &chunks {
            let zeros = vec![Block(3); m];
            let u_len = ot::msg_u_len(m).saturating_add_signed(extra);
            let msg_u: Vec<u8> = (0..u_len).map(|_| rng.gen()).collect();
            let mut d = vec![9u8; 2];
            match s.extend_correlated_into(&msg_u, &zeros, &mut d) {
                Ok(()) => prop_assert_eq!(d.len(), ot::msg_d_len(m)),
                Err(e) => {
                    prop_assert_eq!(
                        e,
                        Error::Length { msg: Message::U, expected: ot::msg_u_len(m), got: u_len }
                    );
                    prop_assert_eq!(d, vec![9u8; 2]);
                }
            }
            let d_len = ot::msg_d_len(m).saturating_add_signed(extra);
            let msg_d: Vec<u8> = (0..d_len).map(|_| rng.gen()).collect();
            let mut labels = vec![Block(5)];
            match ext.receive_correlated_into(&msg_d, &mut labels) {
                Ok(()) => prop_assert_eq!(labels.len(), 1 + m),
                Err(e) => {
                    prop_assert_eq!(
                        e,
                        Error::Length { msg: Message::D, expected: ot::msg_d_len(m), got: d_len }
                    );
                    prop_assert_eq!(&labels, &vec![Block(5)]);
                    prop_assert_eq!(ext.next_pending(), Some(m));
                    ext.receive_correlated_into(&vec![0; ot::msg_d_len(m)], &mut labels).unwrap();
                    prop_assert_eq!(labels.len(), 1 + m);
                }
            }
        }
        prop_assert_eq!(
            ext.receive_correlated_into(&[], &mut Vec::new()).unwrap_err(),
            Error::NothingPending { msg: Message::D }
        );
    }
}
