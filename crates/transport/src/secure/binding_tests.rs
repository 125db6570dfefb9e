//! Tests of bindings ("Binding an agreed choice" in the module docs): the same binding on
//! both sides makes a session; another binding, or one on one side only, is refused by the
//! responder before it sends a byte, and the initiator's error says why it may have been;
//! without a binding the handshake is what it was before bindings existed.

use std::sync::atomic::Ordering;
use std::thread;
use std::time::Duration;

use super::tests::{expected_sum, kk_pair, psk, session_bound, Fault, Tamper};
use super::*;
use crate::memory_pair;

/// A binding shaped like the one `--transport auto` makes: a label, the session number,
/// the chosen transport and a digest of the offer.
fn choice(transport: &str) -> Vec<u8> {
    let mut binding = b"transputation auto v1".to_vec();
    binding.extend_from_slice(&7u64.to_be_bytes());
    binding.extend_from_slice(transport.as_bytes());
    binding.extend_from_slice(&[0xd1; 32]);
    binding
}

/// Fresh client and server credentials of each pattern, with the pattern's name.
fn both_patterns() -> [(&'static str, Credentials, Credentials); 2] {
    let (client, server, _) = kk_pair();
    [("psk", psk(1), psk(1)), ("kk", client, server)]
}

#[test]
fn the_unbound_prologue_is_unchanged_and_a_binding_follows_it() {
    let unbound_psk = b"transputation secure channel v1TPSC\x05\x01\x00\x00".to_vec();
    assert_eq!(psk(1).prologue(None).unwrap(), unbound_psk);
    let (kk, _, _) = kk_pair();
    assert_eq!(
        kk.prologue(None).unwrap(),
        b"transputation secure channel v1TPSC\x05\x02\x00\x00"
    );
    let mut bound = unbound_psk.clone();
    bound.extend_from_slice(b"binding\x00\x03tcp");
    assert_eq!(psk(1).prologue(Some(b"tcp")).unwrap(), bound);
    // An empty binding is a binding, not the unbound prologue.
    let mut empty = unbound_psk;
    empty.extend_from_slice(b"binding\x00\x00");
    assert_eq!(psk(1).prologue(Some(b"")).unwrap(), empty);
}

/// An unbound client completes a handshake with a responder made from `snow` alone with
/// the prologue of builds before bindings (label, then hello): the unbound handshake is
/// unchanged on the wire, not only in [`Credentials::prologue`].
#[test]
fn an_unbound_client_meets_a_responder_from_before_bindings() {
    let (a, mut b) = memory_pair(Duration::from_secs(5));
    let responder = thread::spawn(move || {
        let hello = *b"TPSC\x05\x01\x00\x00";
        let mut prologue = b"transputation secure channel v1".to_vec();
        prologue.extend_from_slice(&hello);
        let mut hs = snow::Builder::new("Noise_NNpsk0_25519_AESGCM_SHA256".parse().unwrap())
            .prologue(&prologue)
            .unwrap()
            .psk(0, &[9; 32])
            .unwrap()
            .build_responder()
            .unwrap();
        let mut peer_hello = [0u8; 8];
        b.recv(&mut peer_hello).unwrap();
        let m1 = recv_handshake(&mut b).unwrap();
        let mut payload = [0u8; MAX_HANDSHAKE_MESSAGE];
        hs.read_message(&m1, &mut payload)
            .expect("message 1 checks under the prologue of builds before bindings");
        let mut m2 = [0u8; MAX_HANDSHAKE_MESSAGE];
        let n = hs.write_message(&[], &mut m2).unwrap();
        send_handshake(&mut b, &hello, &m2[..n]).unwrap();
        b.flush().unwrap();
        (peer_hello, b)
    });
    let client = SecureChannel::client(a, &psk(9));
    let (peer_hello, _keep_open) = responder.join().unwrap();
    assert_eq!(&peer_hello, b"TPSC\x05\x01\x00\x00");
    client.expect("the client accepts the answer of a responder from before bindings");
}

#[test]
fn the_same_binding_on_both_sides_makes_a_session() {
    let mut cases = Vec::new();
    for early in [false, true] {
        for (name, client, server) in both_patterns() {
            cases.push((
                name,
                client,
                server,
                early,
                choice("quic:cc=bbr,iw=2500000"),
            ));
        }
    }
    cases.push(("psk", psk(2), psk(2), true, Vec::new()));
    cases.push(("psk", psk(2), psk(2), false, vec![0x5a; MAX_BINDING]));
    for (name, client, server, early, binding) in cases {
        let what = format!("{name}, early data {early}, {} bytes", binding.len());
        let (cli, srv, _) = session_bound(
            client,
            Some(binding.clone()),
            server,
            Some(binding),
            Fault::None,
            early,
        );
        assert_eq!(cli.expect(&what), expected_sum(), "{what}");
        srv.expect(&what);
    }
}

/// A stranger who injects another decision into the unauthenticated agreement leaves the
/// parties with different bindings: the server refuses the client's first message and
/// sends nothing, its error naming both causes it cannot tell apart.
#[test]
fn a_different_binding_gets_no_byte_from_the_server() {
    let mut cases = Vec::new();
    for early in [false, true] {
        for (name, client, server) in both_patterns() {
            cases.push((
                name,
                client,
                server,
                early,
                choice("tcp-bbr"),
                choice("quic"),
            ));
        }
    }
    // A binding that extends the other, and one that differs in its last byte only.
    cases.push((
        "psk",
        psk(3),
        psk(3),
        false,
        b"quic".to_vec(),
        b"quic:cc=bbr".to_vec(),
    ));
    let mut last = vec![0u8; MAX_BINDING];
    last[MAX_BINDING - 1] = 1;
    cases.push(("psk", psk(3), psk(3), true, vec![0u8; MAX_BINDING], last));
    for (name, client, server, early, client_binding, server_binding) in cases {
        let what = format!("{name}, early data {early}");
        let (cli, srv, server_sent) = session_bound(
            client,
            Some(client_binding),
            server,
            Some(server_binding),
            Fault::None,
            early,
        );
        let e = srv.unwrap_err();
        assert!(matches!(e, Error::Handshake { .. }), "{what}: {e}");
        let e = e.to_string();
        assert!(
            e.contains("did not prove the expected key")
                && e.contains("the peer's binding differs"),
            "{what}: {e}"
        );
        assert_eq!(server_sent, 0, "{what}: the server sent bytes to the peer");
        let e = cli.unwrap_err().to_string();
        assert!(
            e.contains("refused our key") && e.contains("the choice this side bound"),
            "{what}: {e}"
        );
    }
}

/// A party with a binding and one without refuse each other, whichever side has it, and an
/// empty binding is not the absence of one.
#[test]
fn bound_and_unbound_parties_refuse_each_other() {
    for early in [false, true] {
        for (client_binding, server_binding) in [
            (None, Some(choice("tcp"))),
            (Some(choice("tcp")), None),
            (None, Some(Vec::new())),
            (Some(Vec::new()), None),
        ] {
            for (name, client, server) in both_patterns() {
                let what = format!(
                    "{name}, early data {early}, client bound {}, server bound {}",
                    client_binding.is_some(),
                    server_binding.is_some()
                );
                let server_bound = server_binding.is_some();
                let client_bound = client_binding.is_some();
                let (cli, srv, server_sent) = session_bound(
                    client,
                    client_binding.clone(),
                    server,
                    server_binding.clone(),
                    Fault::None,
                    early,
                );
                let e = srv.unwrap_err().to_string();
                let cause = if server_bound {
                    "the peer's binding differs"
                } else {
                    "where this side bound none"
                };
                assert!(
                    e.contains("did not prove") && e.contains(cause),
                    "{what}: {e}"
                );
                assert_eq!(server_sent, 0, "{what}: the server sent bytes to the peer");
                let e = cli.unwrap_err().to_string();
                let cause = if client_bound {
                    "the choice this side bound"
                } else {
                    "where this side bound none"
                };
                assert!(
                    e.contains("refused our key") && e.contains(cause),
                    "{what}: {e}"
                );
            }
        }
    }
}

/// A binding longer than [`MAX_BINDING`] is refused when the handshake is set up: the
/// client sends nothing and the server reads nothing (it returns at once, not after its
/// read timeout).
#[test]
fn a_binding_beyond_the_limit_is_refused_before_the_handshake() {
    let too_long = vec![1u8; MAX_BINDING + 1];
    let limit = format!("{} bytes (at most {MAX_BINDING})", MAX_BINDING + 1);
    let (a, _peer) = memory_pair(Duration::from_secs(5));
    let a = Tamper::new(a, Fault::None);
    let client_sent = a.sent.clone();
    let e = SecureChannel::client_bound(a, &psk(4), &too_long).unwrap_err();
    assert!(e.to_string().contains(&limit), "{e}");
    assert_eq!(client_sent.load(Ordering::Relaxed), 0);
    let (a, _peer) = memory_pair(Duration::from_secs(5));
    let e = SecureChannel::client_early_bound(a, &psk(4), &too_long).unwrap_err();
    assert!(e.to_string().contains(&limit), "{e}");
    // The peer stays open and silent: a server that read would wait for its timeout.
    let (_peer, b) = memory_pair(Duration::from_secs(5));
    let started = std::time::Instant::now();
    let e = SecureChannel::server_bound(b, &psk(4), &too_long).unwrap_err();
    assert!(e.to_string().contains(&limit), "{e}");
    assert!(started.elapsed() < Duration::from_secs(2), "{e}");
}
