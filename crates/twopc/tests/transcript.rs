//! The wire layout of a whole honest session, read back from the bytes each party sent:
//! frame after frame, each an 8-byte big-endian length and its payload, in the order and
//! with the lengths of the message table in the crate docs. A change of the flow or of a
//! message's size fails here (and then needs a new protocol version).

mod common;

use std::time::Duration;

use transputation_2pc::{LabelTransfer, Options, OutputMode, SessionHeader, HEADER_LEN, OT_CHUNK};
use transputation_circuits::{library, Circuit, Party, Stats};
use transputation_garble::Scheme;

/// The payloads of the frames in `bytes`, which must be whole frames.
fn frames(mut bytes: &[u8]) -> Vec<&[u8]> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let len = u64::from_be_bytes(bytes[..8].try_into().unwrap()) as usize;
        out.push(&bytes[8..8 + len]);
        bytes = &bytes[8 + len..];
    }
    out
}

#[test]
fn each_party_sends_the_messages_of_the_table_in_order() {
    let circuits = [
        library::load("millionaires").unwrap(),
        // Several OT chunks.
        library::load("synthetic:and=500,xor=500,inputs=20000").unwrap(),
        // Labels chosen by the garbler under a global offset (corrections of 1 % of the
        // tables).
        library::load("aes128").unwrap(),
    ];
    for c in &circuits {
        for scheme in [Scheme::Ideal, Scheme::Circular, Scheme::Prf] {
            for output in [OutputMode::Both, OutputMode::Evaluator] {
                let options = Options {
                    output,
                    batch_bytes: 4096,
                    ..Options::new(scheme)
                };
                let (g_sent, e_sent) = common::record(c, &options, Duration::from_secs(10));
                check_layout(c, scheme, output, &frames(&g_sent), &frames(&e_sent));
            }
        }
    }
}

fn check_layout(c: &Circuit, scheme: Scheme, output: OutputMode, g: &[&[u8]], e: &[&[u8]]) {
    let (n_e, n_o) = (c.party_input_bits(Party::Evaluator), c.n_outputs());
    let chunks: Vec<usize> = (0..n_e)
        .step_by(OT_CHUNK)
        .map(|s| (n_e - s).min(OT_CHUNK))
        .collect();
    let case = format!("{scheme}, output {output}, {n_e} evaluator bits");

    // The evaluator: header, base-OT point, one extension matrix per chunk, output.
    let mut want_e = vec![HEADER_LEN, 32];
    want_e.extend(chunks.iter().map(|&k| transputation_ot::msg_u_len(k)));
    want_e.push(match output {
        OutputMode::Both => n_o.div_ceil(8),
        OutputMode::Evaluator => 0,
    });
    let got_e: Vec<usize> = e.iter().map(|f| f.len()).collect();
    assert_eq!(got_e, want_e, "{case}: the evaluator's frames");
    let header = SessionHeader::decode(e[0]).unwrap();
    assert_eq!(header.role, Party::Evaluator);

    // The garbler: header, base-OT answer, the seed of its input labels, one OT reply per
    // chunk unless the OT draws the labels, the tables in batches, decoding bits. Nothing
    // per garbler input bit.
    let mut want_g = vec![HEADER_LEN, 128 * 32, 16];
    let transfer = LabelTransfer::first(scheme, c);
    if transfer != LabelTransfer::Drawn {
        want_g.extend(chunks.iter().map(|&k| transfer.reply_len(k)));
    }
    let got_g: Vec<usize> = g.iter().map(|f| f.len()).collect();
    let tables_at = want_g.len();
    assert!(
        got_g.len() > tables_at + 1,
        "{case}: no tables in {got_g:?}"
    );
    assert_eq!(
        got_g[..tables_at],
        want_g[..],
        "{case}: the garbler's frames"
    );
    assert_eq!(
        *got_g.last().unwrap(),
        n_o.div_ceil(8),
        "{case}: decoding bits"
    );
    let stats = Stats::of(c);
    let table_bytes = scheme.table_bytes(&stats) + scheme.mask_bytes(&stats);
    let tables = &got_g[tables_at..got_g.len() - 1];
    assert_eq!(tables.iter().sum::<usize>() as u64, table_bytes, "{case}");
    assert_eq!(SessionHeader::decode(g[0]).unwrap().role, Party::Garbler);
}
