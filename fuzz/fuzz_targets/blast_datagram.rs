//! Fuzzes `blast`'s datagrams as a hostile peer sends them. The input is a sequence of
//! datagrams, each a length byte and that many bytes. Properties: decoding never panics,
//! and a decoded datagram encodes to bytes that decode to the same; a connection fed
//! the datagrams (each given the connection's session number and a correct checksum
//! half of the time, so that the fuzzer reaches the protocol and not only the checksum)
//! never panics, fails only with an error, and never delivers more stream bytes than
//! the datagrams carried (DATA payloads and PARITY blocks).
#![no_main]

use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use transputation_blast::{wire, Connection, Params};

const SESSION: u64 = 0x5eed_f00d;

fn seal(d: &mut [u8]) {
    if d.len() < wire::HEADER {
        return;
    }
    d[8..16].copy_from_slice(&SESSION.to_be_bytes());
    d[4..8].fill(0);
    let crc = crc32fast::hash(d);
    d[4..8].copy_from_slice(&crc.to_be_bytes());
}

fuzz_target!(|data: &[u8]| {
    let start = Instant::now();
    let mut hello = Vec::new();
    wire::encode(
        &wire::Packet {
            session: SESSION,
            number: 1,
            body: wire::Body::Hello {
                max_datagram: 1472,
                window: 1 << 20,
                train: true,
            },
        },
        &mut hello,
    );
    let params = Params {
        receive_window: 1 << 20,
        send_buffer: 1 << 20,
        ..Params::default()
    };
    let mut conn = Connection::server(start, &hello, params).expect("a HELLO");
    conn.write(b"the garbler's first bytes");
    conn.flush();
    let mut carried = 0u64;
    let mut out = Vec::new();
    let mut rest = data;
    let mut i = 0u32;
    while let Some((&len, tail)) = rest.split_first() {
        let len = usize::from(len).min(tail.len());
        let mut d = tail[..len].to_vec();
        rest = &tail[len..];
        if let Ok(p) = wire::decode(&d) {
            let mut again = Vec::new();
            wire::encode(&p, &mut again);
            assert_eq!(wire::decode(&again).expect("re-encoded"), p);
        }
        if len % 2 == 0 {
            seal(&mut d);
        }
        // A parity packet may rebuild a member: its block counts as carried too.
        match wire::decode(&d) {
            Ok(wire::Packet {
                body: wire::Body::Data { payload, .. },
                ..
            }) => carried += payload.len() as u64,
            Ok(wire::Packet {
                body: wire::Body::Parity { block, .. },
                ..
            }) => carried += block.len() as u64,
            _ => {}
        }
        let now = start + Duration::from_micros(u64::from(i) * 100);
        i += 1;
        let _ = conn.handle_datagram(now, &d);
        let _ = conn.handle_timeout(now);
        while conn.poll_transmit(now, &mut out) {}
        let mut buf = [0u8; 4096];
        let mut read = 0u64;
        loop {
            let n = conn.read(&mut buf);
            if n == 0 {
                break;
            }
            read += n as u64;
        }
        assert!(read <= carried, "{read} bytes read of {carried} carried");
        carried -= read;
    }
});
