//! Open sessions: one connection, one handshake and base OT, several computations. Every
//! computation's output is checked against the reference (FIPS-197 vectors), and its
//! report counts its own waits and bytes: one round trip each, and no bytes beyond the
//! tables, the decoding bits, the OT matrix and the output.

use std::thread;
use std::time::Duration;

use transputation_2pc::{Error, Evaluator, Garbler, LabelTransfer, Options, Report};
use transputation_circuits::encoding::{decode_outputs, encode_party_input};
use transputation_circuits::{library, Circuit, Party, Stats};
use transputation_garble::Scheme;
use transputation_transport::memory_pair;

const TIMEOUT: Duration = Duration::from_secs(10);

/// FIPS-197 appendix C.1's key, and plaintexts with their ciphertexts under it (C.1's
/// own first; the others from the same key, checked against the unprotected AES of
/// `transputation-core` in `the_reference_ciphertexts_are_aes`).
const KEY: &str = "000102030405060708090a0b0c0d0e0f";

fn plaintexts() -> Vec<(String, String)> {
    use transputation_core::aes::{Backend, FixedKeyAes};
    use transputation_core::Block;
    let key = Block::from_bytes(hex16(KEY));
    let aes = FixedKeyAes::with_backend(key, Backend::detect());
    [
        "00112233445566778899aabbccddeeff",
        "00000000000000000000000000000000",
        "ffffffffffffffffffffffffffffffff",
        "0123456789abcdeffedcba9876543210",
    ]
    .iter()
    .map(|p| {
        let c = aes.encrypt(Block::from_bytes(hex16(p)));
        let c: String = c.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
        (p.to_string(), c)
    })
    .collect()
}

fn hex16(s: &str) -> [u8; 16] {
    let mut b = [0u8; 16];
    for (i, out) in b.iter_mut().enumerate() {
        *out = u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap();
    }
    b
}

#[test]
fn the_reference_ciphertexts_are_aes() {
    // FIPS-197 C.1 itself.
    assert_eq!(plaintexts()[0].1, "69c4e0d86a7b0430d8cdb78070b4c55a");
}

/// Runs an open session of one computation per evaluator input; the garbler's reports,
/// the evaluator's, and the garbler's count of computations.
fn open_session(
    c: &Circuit,
    scheme: Scheme,
    g_in: &[bool],
    e_ins: &[Vec<bool>],
) -> (Vec<Report>, Vec<Report>, u64) {
    let (a, b) = memory_pair(TIMEOUT);
    let garbler = Garbler::new(c, Options::new(scheme), g_in).unwrap();
    let evaluator = Evaluator::new(c, Options::new(scheme), &e_ins[0]).unwrap();
    thread::scope(|s| {
        let g = s.spawn(move || {
            let mut reports = Vec::new();
            let n = garbler
                .run_session(a, |r| {
                    reports.push(r);
                    Ok::<_, Error>(())
                })
                .unwrap();
            (reports, n)
        });
        let (mut session, first) = evaluator.open(b).unwrap();
        let mut e_reports = vec![first];
        for input in &e_ins[1..] {
            e_reports.push(session.compute(input).unwrap());
        }
        assert_eq!(session.computations(), e_ins.len() as u64);
        session.close().unwrap();
        let (g_reports, n) = g.join().unwrap();
        (g_reports, e_reports, n)
    })
}

#[test]
fn every_computation_of_an_open_session_is_right_under_every_scheme() {
    let c = library::load("aes128").unwrap();
    let g_in = encode_party_input(&c, Party::Garbler, KEY).unwrap();
    let cases = plaintexts();
    let e_ins: Vec<Vec<bool>> = cases
        .iter()
        .map(|(p, _)| encode_party_input(&c, Party::Evaluator, p).unwrap())
        .collect();
    for scheme in Scheme::ALL {
        let (g, e, n) = open_session(&c, scheme, &g_in, &e_ins);
        assert_eq!(n, cases.len() as u64, "{scheme}");
        assert_eq!((g.len(), e.len()), (cases.len(), cases.len()));
        for (k, ((g, e), (_, want))) in g.iter().zip(&e).zip(&cases).enumerate() {
            let k = k as u64 + 1;
            assert_eq!((g.computation, e.computation), (k, k), "{scheme}");
            let out = decode_outputs(&c, e.output.as_ref().unwrap());
            assert_eq!(&out, want, "{scheme}: computation {k}");
            assert_eq!(g.output, e.output, "{scheme}: computation {k}");
        }
    }
}

#[test]
fn a_further_computation_is_one_round_trip_and_only_its_own_bytes() {
    let c = library::load("aes128").unwrap();
    let g_in = encode_party_input(&c, Party::Garbler, KEY).unwrap();
    let e_in = encode_party_input(&c, Party::Evaluator, &plaintexts()[1].0).unwrap();
    let stats = Stats::of(&c);
    let n_e = c.party_input_bits(Party::Evaluator);
    for scheme in Scheme::ALL {
        let (g, e, _) = open_session(&c, scheme, &g_in, &vec![e_in.clone(); 3]);
        for k in 1..3 {
            let (g, e) = (&g[k], &e[k]);
            assert_eq!((g.round_trips, e.round_trips), (1, 1), "{scheme}");
            assert_eq!(e.received, g.sent, "{scheme}");
            assert_eq!(g.received, e.sent, "{scheme}");
            let tables = scheme.table_bytes(&stats) + scheme.mask_bytes(&stats);
            assert_eq!(g.sent.tables, tables, "{scheme}");
            // No header, base OT or label seed again; the OT reply only under `prf`.
            assert_eq!(g.sent.header + g.sent.labels, 0, "{scheme}");
            let reply = LabelTransfer::further(scheme).reply_len(n_e) as u64;
            assert_eq!(g.sent.ot, reply, "{scheme}");
            // The evaluator: message 11 (8 bytes), its matrix and the output.
            assert_eq!(e.sent.header, 8, "{scheme}");
            assert_eq!(e.sent.ot, transputation_ot::msg_u_len(n_e) as u64);
            assert_eq!(e.sent.output, c.n_outputs().div_ceil(8) as u64);
            assert_eq!(g.channel.sent, g.sent.total(), "{scheme}");
            assert!(e.online.is_some() && g.online.is_none());
        }
    }
}

#[test]
fn an_evaluator_without_input_bits_runs_further_computations_too() {
    // sha-256.txt's input groups are the garbler's: the evaluator sends message 11 alone.
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../../shared/circuits/bristol/sha-256.txt"
    );
    let c = library::load(path).unwrap();
    assert_eq!(c.party_input_bits(Party::Evaluator), 0);
    let g_in = vec![false; c.party_input_bits(Party::Garbler)];
    let (g, e, n) = open_session(&c, Scheme::Ideal, &g_in, &vec![Vec::new(); 3]);
    assert_eq!(n, 3);
    assert_eq!(e[0].output, e[2].output);
    assert_eq!(g[2].output, e[2].output);
    assert_eq!((g[2].round_trips, e[2].round_trips), (1, 1));
}

/// Both parties of `c` under `ideal`, the garbler's input bits 0 and the evaluator's 1,
/// and the evaluator's input.
fn ideal_parties(c: &Circuit) -> (Garbler<'_>, Evaluator<'_>, Vec<bool>) {
    let g_in = vec![false; c.party_input_bits(Party::Garbler)];
    let e_in = vec![true; c.party_input_bits(Party::Evaluator)];
    let garbler = Garbler::new(c, Options::new(Scheme::Ideal), &g_in).unwrap();
    let evaluator = Evaluator::new(c, Options::new(Scheme::Ideal), &e_in).unwrap();
    (garbler, evaluator, e_in)
}

#[test]
fn a_garbler_that_runs_one_computation_refuses_an_open_session() {
    let c = library::load("millionaires").unwrap();
    let (a, b) = memory_pair(TIMEOUT);
    let (garbler, evaluator, _) = ideal_parties(&c);
    let (g, e) = thread::scope(|s| {
        let g = s.spawn(move || garbler.run(a));
        let e = evaluator.open(b).map(|_| ());
        (g.join().unwrap(), e)
    });
    let g = g.unwrap_err();
    assert!(
        matches!(g, Error::Mismatch { field, .. } if field.contains("computations per session")),
        "{g}"
    );
    assert!(e.is_err());
}

#[test]
fn a_caller_that_stops_the_garbler_gets_its_own_error_back() {
    let c = library::load("millionaires").unwrap();
    let (a, b) = memory_pair(TIMEOUT);
    let (garbler, evaluator, e_in) = ideal_parties(&c);
    let (g, e) = thread::scope(|s| {
        let g = s.spawn(move || {
            garbler.run_session(a, |r| {
                if r.computation == 2 {
                    return Err(StringError("enough".into()));
                }
                Ok(())
            })
        });
        let (mut session, _) = evaluator.open(b).unwrap();
        let second = session.compute(&e_in);
        let third = session.compute(&e_in);
        (g.join().unwrap(), (second, third))
    });
    assert_eq!(g.unwrap_err(), StringError("enough".into()));
    // The evaluator had its second output; the third computation finds the garbler gone.
    assert!(e.0.is_ok());
    assert!(e.1.is_err());
}

impl From<Error> for StringError {
    fn from(e: Error) -> Self {
        StringError(e.to_string())
    }
}

/// A caller's own error type for `run_session`.
#[derive(Debug, PartialEq)]
struct StringError(String);
