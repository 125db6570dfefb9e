//! Correlated OT (msg_d) through the public API: the evaluator gets `x^0 ⊕ r·Δ` for mixed
//! chunk sizes and for chunks mixed with ordinary ones; hostile lengths are errors; misuse
//! panics.

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
