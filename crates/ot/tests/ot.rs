//! The OT end to end through the public API: correctness for many sizes, what the
//! receiver can and cannot learn, hostile messages, and a pinned transcript.

use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha20Rng;
use sha2::{Digest, Sha256};
use transputation_core::Block;
use transputation_ot::{self as ot, Error, Message};

/// One whole run; returns every message, the pairs, the choices and the labels.
struct Run {
    msgs: [Vec<u8>; 4],
    pairs: Vec<[Block; 2]>,
    choices: Vec<bool>,
    labels: Vec<Block>,
}

fn run(m: usize, rng: &mut ChaCha20Rng) -> Run {
    let pairs: Vec<[Block; 2]> = (0..m)
        .map(|_| [Block(rng.gen()), Block(rng.gen())])
        .collect();
    let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
    let (receiver, msg_a) = ot::Receiver::start(rng);
    assert_eq!(msg_a.len(), ot::MSG_A_LEN);
    let (sender, msg_b) = ot::Sender::respond(&msg_a, rng).unwrap();
    assert_eq!(msg_b.len(), ot::MSG_B_LEN);
    let (chosen, msg_u) = receiver.choose(&msg_b, &choices).unwrap();
    assert_eq!(chosen.len(), m);
    assert_eq!(msg_u.len(), ot::msg_u_len(m));
    let msg_y = sender.send(&msg_u, &pairs).unwrap();
    assert_eq!(msg_y.len(), ot::msg_y_len(m));
    let labels = chosen.receive(&msg_y).unwrap();
    Run {
        msgs: [msg_a, msg_b, msg_u, msg_y],
        pairs,
        choices,
        labels,
    }
}

#[test]
fn message_lengths() {
    assert_eq!(ot::MSG_A_LEN, 32);
    assert_eq!(ot::MSG_B_LEN, 4096);
    for (m, padded) in [(0, 0), (1, 128), (127, 128), (128, 128), (129, 256)] {
        assert_eq!(ot::padded(m), padded);
        assert_eq!(ot::msg_u_len(m), 16 * padded);
        assert_eq!(ot::msg_y_len(m), 32 * m);
    }
    // Absurd counts saturate instead of overflowing.
    assert_eq!(ot::msg_u_len(usize::MAX), usize::MAX);
    assert_eq!(ot::msg_y_len(usize::MAX), usize::MAX);
}

#[test]
fn receiver_gets_exactly_the_chosen_labels() {
    let mut rng = ChaCha20Rng::seed_from_u64(2003);
    for m in [0, 1, 127, 128, 129, 10_000] {
        let r = run(m, &mut rng);
        assert_eq!(r.labels.len(), m);
        for (j, ((label, pair), &c)) in r.labels.iter().zip(&r.pairs).zip(&r.choices).enumerate() {
            assert_eq!(*label, pair[c as usize], "m = {m}, OT {j}");
            assert_ne!(*label, pair[1 - c as usize], "m = {m}, OT {j}");
        }
    }
}

/// The pad the receiver can compute, `H(t_j, j) = y_j^{c} ⊕ x_j^{c}`, applied to the other
/// ciphertext gives `x_j^{1−c} ⊕ H(t_j ⊕ s, j) ⊕ H(t_j, j)`: not the other label, and the
/// error is not a fixed offset (which would be a correlation the receiver could exploit)
/// but looks random — distinct for every OT, about half its bits set.
#[test]
fn receiver_cannot_unmask_the_other_label() {
    let mut rng = ChaCha20Rng::seed_from_u64(15);
    let m = 4096;
    let r = run(m, &mut rng);
    let y = &r.msgs[3];
    let mut errors = Vec::with_capacity(m);
    let mut ones = 0u64;
    for j in 0..m {
        let c = r.choices[j] as usize;
        let y_c = Block::read(&y[32 * j + 16 * c..]);
        let y_other = Block::read(&y[32 * j + 16 * (1 - c)..]);
        let pad = y_c ^ r.labels[j];
        let guess = y_other ^ pad;
        assert_ne!(guess, r.pairs[j][1 - c], "OT {j}");
        let error = guess ^ r.pairs[j][1 - c];
        ones += u64::from(error.0.count_ones());
        errors.push(error.0);
    }
    errors.sort_unstable();
    errors.dedup();
    assert_eq!(errors.len(), m, "the unmasking error repeats");
    let mean = ones as f64 / m as f64;
    assert!((60.0..68.0).contains(&mean), "mean weight {mean}");
}

#[test]
fn same_seed_same_transcript_and_pinned_digest() {
    let digest = |seed: u64| {
        let r = run(300, &mut ChaCha20Rng::seed_from_u64(seed));
        let mut h = Sha256::new();
        for msg in &r.msgs {
            h.update((msg.len() as u64).to_le_bytes());
            h.update(msg);
        }
        for l in &r.labels {
            h.update(l.to_bytes());
        }
        h.finalize()
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    assert_eq!(digest(42), digest(42));
    assert_ne!(digest(42), digest(43));
    // Pinned: any change to the wire format, the KDF, the PRG or the hash changes it.
    assert_eq!(
        digest(42),
        "0603dd25da2f4bbcb2994c8cce9266f444315f13f3c8b6a58f404a5370542c29"
    );
}

#[test]
fn wrong_lengths_are_errors() {
    let mut rng = ChaCha20Rng::seed_from_u64(7);
    let (_, msg_a) = ot::Receiver::start(&mut rng);
    for len in [0, 31, 33, 64] {
        let mut bad = msg_a.clone();
        bad.resize(len, 0);
        assert_eq!(
            ot::Sender::respond(&bad, &mut rng).unwrap_err(),
            Error::Length {
                msg: Message::A,
                expected: 32,
                got: len
            }
        );
    }
    let (sender, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
    for len in [0, 32, 4095, 4097, 8192] {
        let mut bad = msg_b.clone();
        bad.resize(len, 0);
        let (r, _) = ot::Receiver::start(&mut rng);
        assert_eq!(
            r.choose(&bad, &[true]).unwrap_err(),
            Error::Length {
                msg: Message::B,
                expected: 4096,
                got: len
            }
        );
    }
    // The evaluator chose 129 OTs (m' = 256); the garbler has 300 or 100 pairs.
    let (r, msg_a) = ot::Receiver::start(&mut rng);
    let (s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
    let (chosen, msg_u) = r.choose(&msg_b, &[true; 129]).unwrap();
    let pairs = vec![[Block(1), Block(2)]; 300];
    assert_eq!(
        s.send(&msg_u, &pairs).unwrap_err(),
        Error::Length {
            msg: Message::U,
            expected: 16 * 384,
            got: 16 * 256
        }
    );
    let _ = sender;
    // 130 pairs pad to the same m': the garbler cannot tell, the evaluator's msg_y check can.
    let (r, msg_a) = ot::Receiver::start(&mut rng);
    let (s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
    let (chosen2, msg_u2) = r.choose(&msg_b, &[false; 129]).unwrap();
    let msg_y = s.send(&msg_u2, &pairs[..130]).unwrap();
    assert_eq!(
        chosen2.receive(&msg_y).unwrap_err(),
        Error::Length {
            msg: Message::Y,
            expected: 32 * 129,
            got: 32 * 130
        }
    );
    assert_eq!(
        chosen.receive(&[0; 17]).unwrap_err(),
        Error::Length {
            msg: Message::Y,
            expected: 32 * 129,
            got: 17
        }
    );
    // The messages' Display names the message and who sent it.
    let e = Error::Length {
        msg: Message::Y,
        expected: 64,
        got: 17,
    };
    assert_eq!(
        e.to_string(),
        "OT msg_y (the garbler's masked label pairs) has 17 bytes, expected 64"
    );
}

#[test]
fn invalid_and_identity_points_are_errors() {
    let mut rng = ChaCha20Rng::seed_from_u64(8);
    let identity = [0u8; 32]; // the canonical encoding of the identity
    assert_eq!(
        ot::Sender::respond(&identity, &mut rng).unwrap_err(),
        Error::IdentityPoint {
            msg: Message::A,
            index: 0
        }
    );
    // A field element ≥ p, a negative one (low bit set), and the top bit set.
    for bad in [[0xff; 32], [1; 32], {
        let mut b = [0u8; 32];
        b[31] = 0x80;
        b
    }] {
        assert_eq!(
            ot::Sender::respond(&bad, &mut rng).unwrap_err(),
            Error::InvalidPoint {
                msg: Message::A,
                index: 0
            }
        );
    }
    let (_, msg_a) = ot::Receiver::start(&mut rng);
    let (_, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
    for index in [0, 77, 127] {
        let mut bad = msg_b.clone();
        bad[32 * index..32 * index + 32].copy_from_slice(&identity);
        let (r, _) = ot::Receiver::start(&mut rng);
        assert_eq!(
            r.choose(&bad, &[true; 5]).unwrap_err(),
            Error::IdentityPoint {
                msg: Message::B,
                index
            }
        );
        bad[32 * index..32 * index + 32].copy_from_slice(&[0xff; 32]);
        let (r, _) = ot::Receiver::start(&mut rng);
        assert_eq!(
            r.choose(&bad, &[true; 5]).unwrap_err(),
            Error::InvalidPoint {
                msg: Message::B,
                index
            }
        );
    }
}

/// `Sender::setup(rng).respond(msg_a)` is `Sender::respond(msg_a, rng)`, message for
/// message, and its errors are the same.
#[test]
fn setup_path_equals_respond_path() {
    let mut rng = ChaCha20Rng::seed_from_u64(10);
    let (r, msg_a) = ot::Receiver::start(&mut rng);
    let (s1, b1) = ot::Sender::respond(&msg_a, &mut ChaCha20Rng::seed_from_u64(11)).unwrap();
    let setup = ot::Sender::setup(&mut ChaCha20Rng::seed_from_u64(11));
    let (s2, b2) = setup.respond(&msg_a).unwrap();
    assert_eq!(b1, b2);
    let choices: Vec<bool> = (0..200).map(|_| rng.gen()).collect();
    let pairs: Vec<[Block; 2]> = (0..200)
        .map(|_| [Block(rng.gen()), Block(rng.gen())])
        .collect();
    let (chosen, msg_u) = r.choose(&b1, &choices).unwrap();
    let y1 = s1.send(&msg_u, &pairs).unwrap();
    assert_eq!(y1, s2.send(&msg_u, &pairs).unwrap());
    let labels = chosen.receive(&y1).unwrap();
    assert!(labels
        .iter()
        .zip(&pairs)
        .zip(&choices)
        .all(|((l, p), &c)| *l == p[c as usize]));
    for (bad, err) in [
        (
            vec![0u8; 32],
            Error::IdentityPoint {
                msg: Message::A,
                index: 0,
            },
        ),
        (
            vec![0xff; 32],
            Error::InvalidPoint {
                msg: Message::A,
                index: 0,
            },
        ),
        (
            vec![1; 33],
            Error::Length {
                msg: Message::A,
                expected: 32,
                got: 33,
            },
        ),
    ] {
        assert_eq!(ot::Sender::setup(&mut rng).respond(&bad).unwrap_err(), err);
    }
}

/// Debug output never shows a secret.
#[test]
fn debug_hides_secrets() {
    let mut rng = ChaCha20Rng::seed_from_u64(9);
    let (r, msg_a) = ot::Receiver::start(&mut rng);
    let (s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
    assert_eq!(format!("{r:?}"), "Receiver { .. }");
    assert_eq!(format!("{s:?}"), "Sender { .. }");
    let (chosen, _) = r.choose(&msg_b, &[true; 3]).unwrap();
    assert_eq!(format!("{chosen:?}"), "Chosen { m: 3, .. }");
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Random bytes of any length as msg_a: an error or a valid reply, never a panic.
    #[test]
    fn random_msg_a(bytes in proptest::collection::vec(any::<u8>(), 0..80), seed: u64) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        if let Ok((_, msg_b)) = ot::Sender::respond(&bytes, &mut rng) {
            prop_assert_eq!(bytes.len(), 32);
            prop_assert_eq!(msg_b.len(), ot::MSG_B_LEN);
        }
    }

    /// Random bytes as msg_b, either of any length or 4096 bytes (where most points are
    /// invalid encodings; valid ones give a usable state).
    #[test]
    fn random_msg_b(
        len in prop_oneof![0usize..5000, Just(4096)],
        seed: u64,
        m in 0usize..300,
    ) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let bytes: Vec<u8> = (0..len).map(|_| rng.gen()).collect();
        let (r, _) = ot::Receiver::start(&mut rng);
        if let Ok((chosen, msg_u)) = r.choose(&bytes, &vec![true; m]) {
            prop_assert_eq!(msg_u.len(), ot::msg_u_len(m));
            prop_assert_eq!(chosen.len(), m);
        } else {
            // 4096 random bytes are 128 random points, some of them invalid.
        }
    }

    /// Random msg_u and msg_y of any length: an error exactly when the length is wrong.
    #[test]
    fn random_msg_u_and_msg_y(m in 0usize..400, extra in -40isize..40, seed: u64) {
        let mut rng = ChaCha20Rng::seed_from_u64(seed);
        let (r, msg_a) = ot::Receiver::start(&mut rng);
        let (s, msg_b) = ot::Sender::respond(&msg_a, &mut rng).unwrap();
        let (chosen, _) = r.choose(&msg_b, &vec![false; m]).unwrap();
        let pairs = vec![[Block(3), Block(4)]; m];
        let u_len = ot::msg_u_len(m).saturating_add_signed(extra);
        let msg_u: Vec<u8> = (0..u_len).map(|_| rng.gen()).collect();
        match s.send(&msg_u, &pairs) {
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
        match chosen.receive(&msg_y) {
            Ok(labels) => {
                prop_assert_eq!(y_len, ot::msg_y_len(m));
                prop_assert_eq!(labels.len(), m);
            }
            Err(e) => prop_assert_eq!(
                e,
                Error::Length { msg: Message::Y, expected: ot::msg_y_len(m), got: y_len }
            ),
        }
    }
}

/// A session's own hash key (the garbler's, sent to the evaluator): with the same key on
/// both sides the receiver gets its chosen labels; a receiver left on the reference key
/// gets neither label of any pair.
#[test]
fn both_sides_hash_under_the_sessions_key() {
    let mut rng = ChaCha20Rng::seed_from_u64(2026);
    let m = 300;
    let pairs: Vec<[Block; 2]> = (0..m)
        .map(|_| [Block(rng.gen()), Block(rng.gen())])
        .collect();
    let choices: Vec<bool> = (0..m).map(|_| rng.gen()).collect();
    let key = Block(rng.gen());
    for receiver_key in [Some(key), None] {
        let (receiver, msg_a) = ot::Receiver::start(&mut rng);
        let receiver = match receiver_key {
            Some(k) => receiver.with_hash_key(k),
            None => receiver,
        };
        let setup = ot::Sender::setup(&mut rng).with_hash_key(key);
        let (sender, msg_b) = setup.respond(&msg_a).unwrap();
        let (chosen, msg_u) = receiver.choose(&msg_b, &choices).unwrap();
        let labels = chosen
            .receive(&sender.send(&msg_u, &pairs).unwrap())
            .unwrap();
        for ((label, pair), &c) in labels.iter().zip(&pairs).zip(&choices) {
            if receiver_key.is_some() {
                assert_eq!(*label, pair[usize::from(c)]);
            } else {
                assert!(!pair.contains(label), "a label under the wrong key");
            }
        }
    }
}
