//! End-to-end tests of protected sessions through the CLI: `keygen`, the key flags of
//! `garbler` and `evaluator`, `run`'s one-time key, and hostile networks (a TCP relay on
//! 127.0.0.1 between the parties that records, flips or replays bytes).

mod common;
use common::{run, Garbler};

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::thread;

use serde_json::Value;

const AES_KEY: &str = "000102030405060708090a0b0c0d0e0f";
const AES_PT: &str = "00112233445566778899aabbccddeeff";
const AES_CT: &str = "69c4e0d86a7b0430d8cdb78070b4c55a";
/// Bytes the garbler sends in a pre-shared-key handshake: hello, length, Noise message 2
/// (an ephemeral key and a tag).
const PSK_HANDSHAKE_REPLY: usize = 8 + 2 + 32 + 16;
/// Bytes the evaluator sends in a pre-shared-key handshake: hello, length, Noise message 1
/// (an ephemeral key, the early data and its tag); the early data are its framed session
/// header and base-OT point (8 + 32).
const PSK_HANDSHAKE_FIRST: usize = 8 + 2 + 32 + (8 + HEADER_LEN + 8 + 32) + 16;
/// The 2PC session header's bytes.
const HEADER_LEN: usize = transputation_2pc::HEADER_LEN;

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn json(o: &Output) -> Value {
    assert!(o.status.success(), "{}", stderr(o));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// A garbler of aes128 on a free port with `extra` flags; returns it and its address.
fn garbler(extra: &[&str]) -> (Garbler, String) {
    let mut args = vec!["--circuit", "aes128", "--input", AES_KEY, "--json"];
    args.extend_from_slice(extra);
    common::garbler(&args)
}

/// Waits for the garbler: its output and its standard error.
fn finish(g: Garbler) -> (Output, String) {
    let out = g.child.wait_with_output().unwrap();
    (out, g.stderr.join().unwrap())
}

fn evaluator(addr: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "evaluator",
        "--connect",
        addr,
        "--timeout",
        "3",
        "--circuit",
        "aes128",
        "--input",
        AES_PT,
        "--json",
    ];
    args.extend_from_slice(extra);
    run(&args)
}

fn psk_file(dir: &Path, name: &str) -> String {
    let p = dir.join(name);
    let out = run(&["keygen", "--psk", "--out", p.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    p.to_str().unwrap().to_string()
}

/// What a relay does to the bytes going one way, by offset in that direction's stream.
#[derive(Clone, Copy)]
enum Edit {
    None,
    /// Flip bit 0 of the byte at this offset.
    Flip(u64),
    /// After bytes `start..start + len` have passed, send them once more.
    Replay {
        start: u64,
        len: u64,
    },
}

/// A TCP relay on 127.0.0.1 for one connection, to `to`; counts the bytes going each way.
struct Relay {
    addr: String,
    to_evaluator: Arc<AtomicU64>,
    threads: Vec<thread::JoinHandle<()>>,
}

fn relay(to: String, garbler_to_evaluator: Edit, evaluator_to_garbler: Edit) -> Relay {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap().to_string();
    let to_evaluator = Arc::new(AtomicU64::new(0));
    let count = to_evaluator.clone();
    let main = thread::spawn(move || {
        let (e, _) = listener.accept().unwrap();
        let g = TcpStream::connect(&to).unwrap();
        let a = pump(
            g.try_clone().unwrap(),
            e.try_clone().unwrap(),
            garbler_to_evaluator,
            count,
        );
        let b = pump(e, g, evaluator_to_garbler, Arc::new(AtomicU64::new(0)));
        a.join().unwrap();
        b.join().unwrap();
    });
    Relay {
        addr,
        to_evaluator,
        threads: vec![main],
    }
}

impl Relay {
    fn done(self) -> u64 {
        for t in self.threads {
            t.join().unwrap();
        }
        self.to_evaluator.load(Ordering::SeqCst)
    }
}

fn pump(
    mut from: TcpStream,
    mut to: TcpStream,
    edit: Edit,
    count: Arc<AtomicU64>,
) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        let mut pos = 0u64;
        let mut copy = Vec::new();
        let mut buf = vec![0u8; 64 << 10];
        loop {
            let n = match from.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let chunk = &mut buf[..n];
            let end = pos + n as u64;
            // Where to insert the replayed bytes in this chunk, if here.
            let mut insert = None;
            match edit {
                Edit::Flip(at) if (pos..end).contains(&at) => chunk[(at - pos) as usize] ^= 1,
                Edit::Replay { start, len } => {
                    let (lo, hi) = (start.max(pos), (start + len).min(end));
                    if lo < hi {
                        copy.extend_from_slice(&chunk[(lo - pos) as usize..(hi - pos) as usize]);
                    }
                    if pos < start + len && start + len <= end {
                        insert = Some((start + len - pos) as usize);
                    }
                }
                _ => {}
            }
            count.fetch_add(n as u64, Ordering::SeqCst);
            let ok = match insert {
                Some(at) => {
                    to.write_all(&chunk[..at]).is_ok()
                        && to.write_all(&copy).is_ok()
                        && to.write_all(&chunk[at..]).is_ok()
                }
                None => to.write_all(chunk).is_ok(),
            };
            if !ok {
                break;
            }
            pos = end;
        }
        let _ = to.shutdown(Shutdown::Write);
        let _ = from.shutdown(Shutdown::Read);
    })
}

#[test]
fn keygen_writes_a_private_key_0600_and_its_public_key() {
    let dir = tempfile::tempdir().unwrap();
    let k = dir.path().join("garbler.key");
    let out = run(&["keygen", "--out", k.to_str().unwrap()]);
    assert!(out.status.success(), "{}", stderr(&out));
    let public = String::from_utf8(out.stdout.clone())
        .unwrap()
        .trim()
        .to_string();
    assert_eq!(public.len(), 64);
    let mode = std::fs::metadata(&k).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let pub_file = std::fs::read_to_string(dir.path().join("garbler.key.pub")).unwrap();
    assert!(pub_file.lines().any(|l| l == public), "{pub_file}");
    // The private key is in the file but was printed nowhere.
    let private = std::fs::read_to_string(&k).unwrap();
    let private = private.lines().find(|l| !l.starts_with('#')).unwrap();
    assert!(!stderr(&out).contains(private) && !public.contains(private));
    // Never overwritten.
    let again = run(&["keygen", "--out", k.to_str().unwrap()]);
    assert!(!again.status.success());
}

#[test]
fn pinned_keys_protect_a_session_and_a_stranger_key_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let key = |name: &str| {
        let p = dir.path().join(name);
        let out = run(&["keygen", "--out", p.to_str().unwrap()]);
        assert!(out.status.success());
        (
            p.to_str().unwrap().to_string(),
            String::from_utf8(out.stdout).unwrap().trim().to_string(),
        )
    };
    let (g_key, g_pub) = key("g");
    let (e_key, _) = key("e");
    let (m_key, _) = key("mallory");
    let e_pub_file = format!("{e_key}.pub");

    let (g, addr) = garbler(&["--key", &g_key, "--peer-key", &e_pub_file]);
    // Mallory knows the garbler's public key but holds another key than the pinned one.
    let m = evaluator(&addr, &["--key", &m_key, "--peer-key", &g_pub]);
    assert!(!m.status.success());
    assert!(stderr(&m).contains("refused our key"), "{}", stderr(&m));
    // The garbler goes on waiting, and serves the right evaluator.
    let e = json(&evaluator(&addr, &["--key", &e_key, "--peer-key", &g_pub]));
    assert_eq!(e["output"], AES_CT);
    assert_eq!(e["protection"], "noise-kk");
    let (out, err) = finish(g);
    let gv = json(&out);
    assert_eq!(gv["output"], AES_CT);
    assert_eq!(gv["protection"], "noise-kk");
    assert!(err.contains("refused a peer at 127.0.0.1:"), "{err}");
    assert!(err.contains("did not prove the expected key"), "{err}");
}

#[test]
fn a_wrong_key_or_none_gets_no_byte_from_the_garbler() {
    let dir = tempfile::tempdir().unwrap();
    let right = psk_file(dir.path(), "right");
    let wrong = psk_file(dir.path(), "wrong");
    let (g, addr) = garbler(&["--psk-file", &right]);

    let r = relay(addr.clone(), Edit::None, Edit::None);
    let e = evaluator(&r.addr, &["--psk-file", &wrong]);
    assert!(!e.status.success());
    let e_err = stderr(&e);
    assert!(e_err.contains("protected session refused"), "{e_err}");
    assert_eq!(
        r.done(),
        0,
        "the garbler sent bytes to a peer with the wrong key"
    );

    // A peer without protection: it sends its session header; it gets nothing back.
    let r = relay(addr.clone(), Edit::None, Edit::None);
    let e = evaluator(&r.addr, &["--insecure"]);
    assert!(!e.status.success());
    assert_eq!(r.done(), 0, "the garbler sent bytes to an unprotected peer");

    let e = json(&evaluator(&addr, &["--psk-file", &right]));
    assert_eq!(e["output"], AES_CT);
    let (out, err) = finish(g);
    assert_eq!(json(&out)["protection"], "noise-psk");
    assert_eq!(
        err.matches("refused a peer at 127.0.0.1:").count(),
        2,
        "{err}"
    );
    assert!(err.contains("--insecure"), "{err}");
}

#[test]
fn a_flipped_bit_either_way_aborts_the_receiving_party() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk_file(dir.path(), "psk");
    // Garbler to evaluator: a byte deep in the garbled tables, and one of the garbler's
    // first record; evaluator to garbler: a byte of the evaluator's first record (its OT
    // extension matrix; its header and base-OT point rode in the handshake).
    let (hs_reply, hs_first) = (PSK_HANDSHAKE_REPLY as u64, PSK_HANDSHAKE_FIRST as u64);
    for (g2e, e2g, victim) in [
        (Edit::Flip(100_000), Edit::None, "evaluator"),
        (Edit::Flip(hs_reply + 30), Edit::None, "evaluator"),
        (Edit::None, Edit::Flip(hs_first + 100), "garbler"),
    ] {
        let (g, addr) = garbler(&["--psk-file", &psk]);
        let r = relay(addr, g2e, e2g);
        let e = evaluator(&r.addr, &["--psk-file", &psk]);
        let (g_out, g_err) = finish(g);
        r.done();
        assert!(!e.status.success() && !g_out.status.success());
        let victim_err = if victim == "evaluator" {
            stderr(&e)
        } else {
            g_err
        };
        assert!(
            victim_err.contains("protected session aborted")
                && victim_err.contains("failed its check"),
            "{victim}: {victim_err}"
        );
    }
}

#[test]
fn a_replayed_record_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk_file(dir.path(), "psk");
    let (g, addr) = garbler(&["--psk-file", &psk]);
    // The garbler's first record: its framed session header, sealed (a 20-byte record
    // header, the 8-byte frame and the header, a 16-byte tag).
    let first = Edit::Replay {
        start: PSK_HANDSHAKE_REPLY as u64,
        len: (20 + 8 + HEADER_LEN + 16) as u64,
    };
    let r = relay(addr, first, Edit::None);
    let e = evaluator(&r.addr, &["--psk-file", &psk]);
    let _ = finish(g);
    r.done();
    assert!(!e.status.success());
    let err = stderr(&e);
    assert!(err.contains("record header failed its check"), "{err}");
}

#[test]
fn every_reliable_transport_carries_a_protected_session() {
    let v = json(&run(&["transports", "--json"]));
    let transports: Vec<String> = v
        .as_array()
        .unwrap()
        .iter()
        .filter(|t| t["available"].as_bool() == Some(true) && t["name"] != "udp")
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let quic_built = transputation_transport::family("quic").is_some();
    assert!(!quic_built || transports.iter().any(|t| t == "quic"));
    for t in &transports {
        let v = json(&run(&[
            "run",
            "--circuit",
            "aes128",
            "--transport",
            t,
            "--garbler-input",
            AES_KEY,
            "--evaluator-input",
            AES_PT,
            "--json",
        ]));
        assert_eq!(v["output"], AES_CT, "{t}");
        assert_eq!(v["garbler"]["output"], AES_CT, "{t}");
        assert_eq!(v["protection"], "noise-psk", "{t}");
        assert_eq!(v["evaluator"]["protection"], "noise-psk", "{t}");
    }
    let v = json(&run(&[
        "run",
        "--circuit",
        "aes128",
        "--insecure",
        "--garbler-input",
        AES_KEY,
        "--evaluator-input",
        AES_PT,
        "--json",
    ]));
    assert_eq!(v["output"], AES_CT);
    assert_eq!(v["protection"], "none");
}

#[test]
fn key_files_others_may_read_are_refused_and_no_key_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let psk = psk_file(dir.path(), "psk");
    std::fs::set_permissions(&psk, std::fs::Permissions::from_mode(0o644)).unwrap();
    for role in ["garbler", "evaluator"] {
        let out = run(&[role, "--circuit", "aes128", "--psk-file", &psk]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(err.contains(&psk) && err.contains("chmod 600"), "{err}");
        let secret = std::fs::read_to_string(&psk).unwrap();
        let secret = secret.lines().find(|l| !l.starts_with('#')).unwrap();
        assert!(!err.contains(secret));

        let out = run(&[role, "--circuit", "aes128"]);
        assert!(!out.status.success());
        let err = stderr(&out);
        assert!(
            err.contains("--psk-file") && err.contains("--peer-key") && err.contains("--insecure"),
            "{err}"
        );
    }
}
