//! The confidence bound against values computed independently (30-digit arithmetic), the
//! merging of evidence, and the split of a train's losses.

use super::*;

/// Reference one-sided 95 % Clopper–Pearson upper bounds: (lost, sent, bound), computed by
/// bisecting the exact binomial CDF with 30 significant digits (mpmath).
const REFERENCE_95: &[(u64, u64, f64)] = &[
    (0, 1000, 0.0029912495451),
    (0, 1, 0.95),
    (0, 32, 0.0893681989863),
    (1, 10, 0.394163302437),
    (5, 100, 0.102253377643),
    (1, 1000, 0.0047349935755),
    (10, 1000, 0.0169031751206),
    (3, 300, 0.0256413930826),
    (50, 100, 0.586378285369),
    (9, 10, 0.994883803108),
    (100, 100_000, 0.00118068596917),
];

#[test]
fn the_upper_bound_matches_reference_values() {
    for &(lost, sent, want) in REFERENCE_95 {
        let got = LossEvidence::new(sent, lost).upper_bound_95();
        assert!(
            (got - want).abs() <= 1e-9 * want.max(1e-3),
            "{lost} of {sent}: {got} against {want}"
        );
    }
    // At 99 %.
    let got = LossEvidence::new(1000, 0).upper_bound(0.99);
    assert!((got - 0.00459458264847).abs() < 1e-12, "{got}");
    let got = LossEvidence::new(50, 2).upper_bound(0.99);
    assert!((got - 0.157704047615).abs() < 1e-9, "{got}");
}

#[test]
fn the_bound_without_evidence_or_with_everything_lost_is_one() {
    assert_eq!(LossEvidence::default().upper_bound_95(), 1.0);
    assert_eq!(LossEvidence::new(7, 7).upper_bound_95(), 1.0);
    assert_eq!(LossEvidence::new(7, 9), LossEvidence::new(7, 7));
    assert_eq!(LossEvidence::default().rate(), 0.0);
    assert_eq!(LossEvidence::new(200, 3).rate(), 0.015);
    // The bound is at least the estimate, and narrows with more evidence.
    let few = LossEvidence::new(100, 1).upper_bound_95();
    let many = LossEvidence::new(10_000, 100).upper_bound_95();
    assert!(0.01 < many && many < few, "{many} {few}");
    // A confidence out of range is clamped, not a panic.
    assert!(LossEvidence::new(100, 1).upper_bound(f64::NAN) == few);
    assert!(LossEvidence::new(100, 1).upper_bound(2.0) > few);
}

#[test]
fn the_bound_is_quick_at_the_evidence_cap() {
    let started = std::time::Instant::now();
    let b = LossEvidence::new(MAX_EVIDENCE_PACKETS, MAX_EVIDENCE_PACKETS / 2).upper_bound_95();
    assert!((0.5..0.51).contains(&b), "{b}");
    assert!(started.elapsed() < std::time::Duration::from_secs(2));
}

#[test]
fn evidence_adds_up_and_older_evidence_gives_way_past_the_cap() {
    let a = LossEvidence::new(1000, 2).merged(LossEvidence::new(32, 1));
    assert_eq!(a, LossEvidence::new(1032, 3));
    // Past the cap the older part shrinks at its own rate; the later stays whole.
    let old = LossEvidence::new(MAX_EVIDENCE_PACKETS, 1000); // 1 %
    let m = old.merged(LossEvidence::new(10_000, 500)); // 5 %
    assert_eq!(m.sent, MAX_EVIDENCE_PACKETS);
    assert_eq!(m.lost, 900 + 500);
    // A later measurement larger than the cap alone is scaled itself.
    let huge = LossEvidence::new(0, 0).merged(LossEvidence::new(4 * MAX_EVIDENCE_PACKETS, 4));
    assert_eq!(huge, LossEvidence::new(MAX_EVIDENCE_PACKETS, 1));
}

/// A reproducible stream of uniform numbers in [0, 1) (xorshift64*).
fn uniform(seed: u64) -> impl FnMut() -> f64 {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        s ^= s >> 12;
        s ^= s << 25;
        s ^= s >> 27;
        (s.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11) as f64 / (1u64 << 53) as f64
    }
}

#[test]
fn a_clean_train_and_random_loss_are_all_evidence() {
    let clean = vec![false; 32];
    assert_eq!(
        split_train_loss(&clean),
        TrainLoss {
            evidence: LossEvidence::new(32, 0),
            overflow_packets: 0
        }
    );
    assert_eq!(split_train_loss(&[]).evidence, LossEvidence::default());
    // 1 % random loss over 1000-packet trains: an overflow is (almost) never seen.
    let mut mistaken = 0;
    for seed in 0..300 {
        let mut u = uniform(seed);
        let lost: Vec<bool> = (0..1000).map(|_| u() < 0.01).collect();
        let split = split_train_loss(&lost);
        let count = lost.iter().filter(|&&l| l).count() as u64;
        if split.overflow_packets > 0 {
            mistaken += 1;
        } else {
            assert_eq!(split.evidence, LossEvidence::new(1000, count));
        }
    }
    assert!(mistaken <= 1, "{mistaken} of 300 trains split");
}

#[test]
fn a_queue_overflow_is_left_out_of_the_evidence() {
    // 20 of 32 arrived, then the queue was full: the 12 drops are not random loss.
    let mut lost = vec![false; 32];
    lost[20..].iter_mut().for_each(|l| *l = true);
    assert_eq!(
        split_train_loss(&lost),
        TrainLoss {
            evidence: LossEvidence::new(20, 0),
            overflow_packets: 12
        }
    );
    // 1000 packets, 1 % random loss, a queue that fills after 400 and then passes one
    // packet in five (a sender five times faster than the bottleneck).
    for seed in 0..50 {
        let mut u = uniform(1000 + seed);
        let lost: Vec<bool> = (0..1000)
            .map(|i| if i < 400 { u() < 0.01 } else { i % 5 != 0 })
            .collect();
        let split = split_train_loss(&lost);
        let random = lost[..400].iter().filter(|&&l| l).count() as u64;
        // The onset is found within a few packets of 400.
        assert!(
            (395..=401).contains(&split.evidence.sent),
            "seed {seed}: {split:?}"
        );
        assert!(split.evidence.lost <= random, "seed {seed}: {split:?}");
        assert_eq!(split.evidence.sent + split.overflow_packets, 1000);
    }
}
