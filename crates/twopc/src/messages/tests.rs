//! Each message on its own: what it encodes decodes to the same message, and a payload that
//! is truncated, too long or otherwise malformed is refused with an error naming the
//! message (never a panic, never a partial message).

use transputation_circuits::{library, Party};

use super::*;

/// Decodes `bytes` as an `M` and returns the problem, which must be a malformed `M`.
fn refused<'a, M: Message<'a> + fmt::Debug>(bytes: &'a [u8], cx: M::Context) -> String {
    match M::decode(bytes, cx) {
        Err(Error::Malformed { what, problem }) => {
            assert_eq!(what, M::NAME);
            problem
        }
        other => panic!("{} bytes decoded as {other:?}", bytes.len()),
    }
}

/// Checks that `msg` round-trips under `cx`, has a length `M::length` admits, and that the
/// same payload one byte longer is refused (by `decode`, and by the length check alone
/// where the length is exact; the session header's is not, so that another version's
/// header is named by its version) and, where the length is exact, one byte shorter. The test payloads are leaked, to
/// live as long as any message.
fn round_trip<'a, M>(msg: &M, cx: M::Context) -> M
where
    M: Message<'a> + fmt::Debug + PartialEq,
{
    let bytes: &'a [u8] = msg.encode().into_owned().leak();
    assert!(M::length(cx).admits(bytes.len() as u64), "{}", M::NAME);
    let mut longer = bytes.to_vec();
    longer.push(0);
    let longer: &'a [u8] = longer.leak();
    if let Length::Exact(_) = M::length(cx) {
        assert!(check_length::<M>(longer.len() as u64, cx).is_err());
    }
    assert!(refused::<M>(longer, cx).contains("bytes"), "{}", M::NAME);
    assert!(check_length::<M>(u64::MAX, cx).is_err());
    if let Length::Exact(n) = M::length(cx) {
        if n > 0 {
            assert!(refused::<M>(&bytes[..n - 1], cx).contains("bytes"));
        }
    }
    let back = M::decode(bytes, cx).expect("a message decodes as itself");
    assert_eq!(&back, msg);
    back
}

#[test]
fn the_session_header_round_trips_and_refuses_other_lengths() {
    let c = library::load("millionaires").unwrap();
    let h = SessionHeader::new(Party::Garbler, &c, Scheme::Ideal, OutputMode::Both);
    round_trip(&h, ());
    assert_eq!(Message::encode(&h).len(), crate::HEADER_LEN);
    // Read whole up to a bound, so that another version's header is named by its version.
    assert_eq!(<SessionHeader as Message>::length(()), Length::AtMost(1024));
}

#[test]
fn byte_messages_round_trip_and_refuse_other_lengths() {
    let point = [7u8; transputation_ot::MSG_A_LEN];
    round_trip(&BaseOtPoint(&point), ());
    let answer = vec![9u8; transputation_ot::MSG_B_LEN];
    round_trip(&BaseOtAnswer(&answer), ());
    for ots in [1, 127, 128, 129, OT_CHUNK] {
        let matrix = vec![3u8; transputation_ot::msg_u_len(ots)];
        round_trip(&OtExtension(&matrix), ots);
    }
    // Lengths the OT crate defines, as the table in the crate docs says.
    assert_eq!(
        <BaseOtPoint as Message>::length(()),
        Length::Exact(32),
        "message 2"
    );
    assert_eq!(
        <BaseOtAnswer as Message>::length(()),
        Length::Exact(128 * 32)
    );
}

#[test]
fn the_label_seed_round_trips_and_refuses_other_lengths() {
    let seed = Block(0x0123_4567_89ab_cdef_0011_2233_4455_6677);
    assert_eq!(round_trip(&LabelSeed(seed), ()), LabelSeed(seed));
    assert_eq!(LabelSeed(seed).encode().len(), 16);
    for len in [0, 15, 17, 32] {
        let problem = refused::<LabelSeed>(&vec![0u8; len][..], ());
        assert!(problem.contains(&format!("{len} bytes")), "{problem}");
    }
}

#[test]
fn ot_replies_are_ciphertexts_or_corrections_by_the_transfer() {
    for ots in [1, 100, OT_CHUNK] {
        let ordinary = (LabelTransfer::Ordinary, ots);
        assert_eq!(OtReply::length(ordinary), Length::Exact(32 * ots));
        let bytes = vec![5u8; 32 * ots];
        round_trip(&OtReply(&bytes), ordinary);
        // Correlated OT's 16 bytes per OT: refused where ciphertexts belong, and the
        // reverse.
        refused::<OtReply>(&bytes[..16 * ots], ordinary);
        let chosen = (LabelTransfer::Chosen, ots);
        round_trip(&OtReply(&bytes[..16 * ots]), chosen);
        refused::<OtReply>(&bytes, chosen);
        assert_eq!(
            OtReply::length((LabelTransfer::Drawn, ots)),
            Length::Exact(0)
        );
    }
}

#[test]
fn the_first_computation_chooses_labels_where_corrections_cost_at_most_a_percent() {
    // aes128: 128 evaluator bits, 16 · 128 = 2,048 bytes of corrections for 204,800 of
    // tables: exactly 1 %.
    let aes = library::load("aes128").unwrap();
    assert_eq!(
        LabelTransfer::first(Scheme::Ideal, &aes),
        LabelTransfer::Chosen
    );
    assert_eq!(
        LabelTransfer::first(Scheme::Circular, &aes),
        LabelTransfer::Chosen
    );
    assert_eq!(
        LabelTransfer::first(Scheme::Prf, &aes),
        LabelTransfer::Ordinary
    );
    // The MinCut size: 250,000 bits would add 4 MB to 32 MB of tables.
    let mincut = library::load("synthetic:and=999960,xor=2524920,inputs=250000").unwrap();
    assert_eq!(
        LabelTransfer::first(Scheme::Ideal, &mincut),
        LabelTransfer::Drawn
    );
    // Further computations of an open session garble nothing ahead.
    assert_eq!(LabelTransfer::further(Scheme::Ideal), LabelTransfer::Drawn);
    assert_eq!(LabelTransfer::further(Scheme::Prf), LabelTransfer::Ordinary);
    for (t, per_ot) in [
        (LabelTransfer::Ordinary, 32),
        (LabelTransfer::Chosen, 16),
        (LabelTransfer::Drawn, 0),
    ] {
        assert_eq!(t.reply_len(1000), per_ot * 1000, "{t:?}");
    }
}

#[test]
fn table_batches_are_bounded_by_the_tables_still_due() {
    let bytes = vec![1u8; 1000];
    round_trip(&TableBatch(&bytes[..999]), 999);
    assert!(TableBatch::decode(&bytes, 5000).is_ok());
    assert!(TableBatch::decode(&[], 5000).is_ok());
    let problem = refused::<TableBatch>(&bytes, 999);
    assert!(problem.contains("at most 999 bytes"), "{problem}");
    assert!(check_length::<TableBatch>(1 << 40, 999).is_err());
}

#[test]
fn decoding_bits_round_trip_and_refuse_padding() {
    for n in [0, 1, 7, 8, 9, 64, 129] {
        let bits: Vec<bool> = (0..n).map(|i| i % 3 == 1).collect();
        round_trip(&DecodingBits(bits), n);
    }
    // Bit 3 set in the padding of a 3-bit message.
    let problem = refused::<DecodingBits>(&[0b0000_1101], 3);
    assert!(problem.contains("padding"), "{problem}");
    // Wire order: bit i at weight 2^(i % 8) of byte i / 8.
    let bits = [
        true, false, false, true, false, false, false, false, false, true,
    ];
    assert_eq!(
        DecodingBits(bits.to_vec()).encode().as_ref(),
        [0b1001, 0b10]
    );
}

#[test]
fn the_output_is_empty_when_only_the_evaluator_learns_it() {
    let out = [true, true, false, true, false, false, true, false, true];
    let both = OutputContext {
        mode: OutputMode::Both,
        bits: out.len(),
    };
    let evaluator_only = OutputContext {
        mode: OutputMode::Evaluator,
        ..both
    };
    let sent = OutputBits::for_mode(OutputMode::Both, &out);
    assert_eq!(round_trip(&sent, both).0.unwrap(), out);
    let sent = OutputBits::for_mode(OutputMode::Evaluator, &out);
    assert!(sent.encode().is_empty());
    assert_eq!(round_trip(&sent, evaluator_only).0, None);
    refused::<OutputBits>(&[1], evaluator_only);
    refused::<OutputBits>(&[0xff, 0xff], both);
}

#[test]
fn lengths_say_what_they_admit() {
    assert!(Length::Exact(3).admits(3) && !Length::Exact(3).admits(2));
    assert!(Length::AtMost(3).admits(0) && !Length::AtMost(3).admits(4));
    assert_eq!(Length::Exact(72).to_string(), "exactly 72 bytes");
    let err = check_length::<DecodingBits>(1 << 62, 8).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "malformed decoding bits from the peer: {} bytes where exactly 1 bytes belong",
            1u64 << 62
        )
    );
}

#[test]
fn next_computation_round_trips_big_endian_and_refuses_other_lengths() {
    round_trip(&NextComputation(2), ());
    round_trip(&NextComputation::END, ());
    assert_eq!(
        Message::encode(&NextComputation(0x0102)).as_ref(),
        &[0, 0, 0, 0, 0, 0, 1, 2]
    );
}

#[test]
fn an_open_session_header_round_trips_and_a_garbler_cannot_open_one() {
    let c = library::load("millionaires").unwrap();
    let mut h = SessionHeader::new(Party::Evaluator, &c, Scheme::Ideal, OutputMode::Both);
    h.open = true;
    let back = round_trip(&h, ());
    assert!(back.open);
    let mut bytes = SessionHeader::encode(&h);
    bytes[10] = 0; // now from the garbler
    assert!(refused::<SessionHeader>(&bytes, ()).contains("open-session byte is 1"));
    bytes[10] = 1;
    bytes[13] = 2;
    assert!(refused::<SessionHeader>(&bytes, ()).contains("open-session byte is 2"));
}
