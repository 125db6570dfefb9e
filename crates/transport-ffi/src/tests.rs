//! The exported functions called as C would call them, over 127.0.0.1 only: NULL and
//! malformed arguments, a round trip of raw bytes and messages, limits, closing, timeouts.

use std::ffi::{c_char, CStr};
use std::net::TcpListener;
use std::ptr::{null, null_mut};
use std::thread;
use std::time::{Duration, Instant};

use crate::*;

use tp_status::*;

fn last_error() -> String {
    // SAFETY: tp_last_error returns a NUL-terminated string valid until the next failing
    // call on this thread; it is copied at once.
    unsafe { CStr::from_ptr(tp_last_error()) }
        .to_string_lossy()
        .into_owned()
}

/// A configuration that fails fast.
fn quick() -> tp_config {
    tp_config {
        io_timeout_ms: 2000,
        connect_attempts: 20,
        retry_delay_ms: 20,
        ..tp_config::default()
    }
}

fn listen(transport: &CStr, cfg: &tp_config) -> *mut tp_listener {
    // SAFETY: NUL-terminated strings and a valid config, all outliving the call.
    let l = unsafe { tp_listen(transport.as_ptr(), c"127.0.0.1:0".as_ptr(), cfg) };
    assert!(!l.is_null(), "{}", last_error());
    l
}

fn connect(transport: &CStr, port: u16, cfg: &tp_config) -> *mut tp_channel {
    let addr = std::ffi::CString::new(format!("127.0.0.1:{port}")).unwrap();
    // SAFETY: NUL-terminated strings and a valid config, all outliving the call.
    let c = unsafe { tp_connect(transport.as_ptr(), addr.as_ptr(), cfg) };
    assert!(!c.is_null(), "{}", last_error());
    c
}

fn send_message(ch: *mut tp_channel, msg: &[u8]) -> tp_status {
    // SAFETY: `ch` is a live channel of the calling test; `msg` is readable for its length.
    unsafe { tp_send_message(ch, msg.as_ptr(), msg.len()) }
}

/// The next message, or the status it failed with.
fn recv_message(ch: *mut tp_channel) -> Result<Vec<u8>, tp_status> {
    let (mut data, mut len) = (null_mut(), 0usize);
    // SAFETY: `ch` is a live channel of the calling test; the outputs are locals.
    let s = unsafe { tp_recv_message(ch, &mut data, &mut len) };
    if s != TP_OK {
        assert!(data.is_null() && len == 0);
        return Err(s);
    }
    if len == 0 {
        assert!(data.is_null());
        return Ok(Vec::new());
    }
    // SAFETY: on success (data, len) is a buffer of len bytes from tp_recv_message, read
    // once here and then freed once.
    let v = unsafe { std::slice::from_raw_parts(data, len) }.to_vec();
    // SAFETY: as above.
    unsafe { tp_free_buffer(data, len) };
    Ok(v)
}

fn stats(ch: *mut tp_channel) -> (u64, u64) {
    let (mut s, mut r) = (0, 0);
    // SAFETY: `ch` is a live channel of the calling test; the outputs are locals.
    assert_eq!(unsafe { tp_stats(ch, &mut s, &mut r) }, TP_OK);
    (s, r)
}

fn free(ch: *mut tp_channel) {
    // SAFETY: `ch` is a live channel of the calling test, not used afterwards.
    unsafe { tp_channel_free(ch) }
}

#[test]
fn null_handles_are_refused_with_a_message() {
    let mut byte = 0u8;
    let (mut data, mut len) = (null_mut(), 0usize);
    // SAFETY: every handle is NULL, which each function must refuse without touching
    // anything; the other pointers are valid locals.
    let statuses = unsafe {
        [
            ("tp_send", tp_send(null_mut(), &byte, 1)),
            ("tp_recv", tp_recv(null_mut(), &mut byte, 1)),
            ("tp_send_message", tp_send_message(null_mut(), &byte, 1)),
            (
                "tp_recv_message",
                tp_recv_message(null_mut(), &mut data, &mut len),
            ),
            ("tp_flush", tp_flush(null_mut())),
            ("tp_close", tp_close(null_mut())),
            ("tp_stats", tp_stats(null(), null_mut(), null_mut())),
        ]
    };
    for (name, s) in statuses {
        assert_eq!(s, TP_ERR_INVALID_ARGUMENT, "{name}");
    }
    assert_eq!(last_error(), "tp_stats: channel is NULL");
    assert_eq!(tp_last_status(), TP_ERR_INVALID_ARGUMENT);

    // SAFETY: NULL handles, refused; the buffer is a valid local.
    unsafe {
        assert!(tp_accept(null_mut()).is_null());
        assert_eq!(last_error(), "tp_accept: listener is NULL");
        assert_eq!(tp_listener_port(null()), 0);
        let mut buf = [0 as c_char; 8];
        assert_eq!(tp_listener_addr(null(), buf.as_mut_ptr(), buf.len()), 0);
        // Freeing NULL is a no-op, as with free().
        tp_channel_free(null_mut());
        tp_listener_free(null_mut());
        tp_free_buffer(null_mut(), 0);
    }
}

#[test]
fn strings_and_addresses_are_checked() {
    let cases: [(*const c_char, *const c_char, tp_status, &str); 6] = [
        (
            null(),
            c"127.0.0.1:1".as_ptr(),
            TP_ERR_INVALID_ARGUMENT,
            "transport is NULL",
        ),
        (
            c"tcp".as_ptr(),
            null(),
            TP_ERR_INVALID_ARGUMENT,
            "addr is NULL",
        ),
        (
            c"tc\xc3p".as_ptr(),
            c"127.0.0.1:1".as_ptr(),
            TP_ERR_INVALID_ARGUMENT,
            "transport is not valid UTF-8",
        ),
        (
            c"bogus".as_ptr(),
            c"127.0.0.1:1".as_ptr(),
            TP_ERR_BAD_TRANSPORT,
            "unknown transport 'bogus'",
        ),
        (
            c"mtcp:streams=0".as_ptr(),
            c"127.0.0.1:1".as_ptr(),
            TP_ERR_BAD_TRANSPORT,
            "bad value '0' for option 'streams'",
        ),
        (
            c"tcp".as_ptr(),
            c"no port".as_ptr(),
            TP_ERR_INVALID_ARGUMENT,
            "bad address 'no port'",
        ),
    ];
    for (transport, addr, status, message) in cases {
        // SAFETY: each pointer is NULL or a NUL-terminated literal.
        assert!(unsafe { tp_connect(transport, addr, null()) }.is_null());
        assert_eq!(tp_last_status(), status, "{}", last_error());
        let e = last_error();
        assert!(e.starts_with("tp_connect: ") && e.contains(message), "{e}");
        // SAFETY: as above.
        assert!(unsafe { tp_listen(transport, addr, null()) }.is_null());
        assert_eq!(tp_last_status(), status);
        assert!(last_error().starts_with("tp_listen: "));
    }
}

#[test]
fn bytes_and_messages_round_trip() {
    let cfg = quick();
    let l = listen(c"mtcp:streams=2", &cfg);
    // SAFETY: `l` is live until freed below.
    let port = unsafe { tp_listener_port(l) };
    assert_ne!(port, 0);
    let mut buf = [0 as c_char; 64];
    // SAFETY: `l` is live; `buf` is writable for its length.
    let n = unsafe { tp_listener_addr(l, buf.as_mut_ptr(), buf.len()) };
    // SAFETY: tp_listener_addr NUL-terminated the text inside `buf`.
    let text = unsafe { CStr::from_ptr(buf.as_ptr()) }.to_str().unwrap();
    assert_eq!(text, format!("127.0.0.1:{port}"));
    assert_eq!(n, text.len());
    // Cut short like snprintf.
    // SAFETY: as above, with a 5-byte prefix of `buf`.
    let n = unsafe { tp_listener_addr(l, buf.as_mut_ptr(), 5) };
    assert_eq!(n, text.len());
    // SAFETY: as above.
    assert_eq!(unsafe { CStr::from_ptr(buf.as_ptr()) }, c"127.");

    let server = {
        let l = l as usize;
        thread::spawn(move || {
            // SAFETY: the listener stays live until this thread is joined, and only this
            // thread uses it meanwhile.
            let ch = unsafe { tp_accept(l as *mut tp_listener) };
            assert!(!ch.is_null(), "{}", last_error());
            // Echo messages until the client closes, then answer raw bytes.
            let mut count = 0;
            let end = loop {
                match recv_message(ch) {
                    Ok(m) if m == b"raw" => break m,
                    Ok(m) => assert_eq!(send_message(ch, &m), TP_OK),
                    Err(s) => panic!("{s:?}: {}", last_error()),
                }
                count += 1;
            };
            assert_eq!(end, b"raw");
            let mut four = [0u8; 4];
            // SAFETY: live channel, writable local buffer.
            assert_eq!(unsafe { tp_recv(ch, four.as_mut_ptr(), 4) }, TP_OK);
            // SAFETY: live channel, readable local buffer.
            assert_eq!(unsafe { tp_send(ch, four.as_ptr(), 4) }, TP_OK);
            // SAFETY: live channel.
            assert_eq!(unsafe { tp_close(ch) }, TP_OK);
            assert_eq!(recv_message(ch), Err(TP_ERR_CLOSED));
            let s = stats(ch);
            free(ch);
            (count, s)
        })
    };

    let ch = connect(c"mtcp:streams=2", port, &cfg);
    let big: Vec<u8> = (0..300_000u32).map(|i| (i * 7) as u8).collect();
    for msg in [&b"hello"[..], b"", &big] {
        assert_eq!(send_message(ch, msg), TP_OK);
        assert_eq!(recv_message(ch).unwrap(), msg);
    }
    assert_eq!(send_message(ch, b"raw"), TP_OK);
    // SAFETY: live channel, readable literal.
    assert_eq!(unsafe { tp_send(ch, b"1234".as_ptr(), 4) }, TP_OK);
    // SAFETY: live channel.
    assert_eq!(unsafe { tp_flush(ch) }, TP_OK);
    let mut back = [0u8; 4];
    // SAFETY: live channel, writable local buffer.
    assert_eq!(unsafe { tp_recv(ch, back.as_mut_ptr(), 4) }, TP_OK);
    assert_eq!(&back, b"1234");
    // A zero-length receive or send with NULL is fine.
    // SAFETY: NULL with length 0 is allowed.
    assert_eq!(unsafe { tp_recv(ch, null_mut(), 0) }, TP_OK);
    // The server closed: the end of the stream.
    assert_eq!(recv_message(ch), Err(TP_ERR_CLOSED));
    assert!(last_error().contains("closed"), "{}", last_error());
    // A clean end between messages leaves the channel usable: this end can still close.
    // SAFETY: live channel.
    assert_eq!(unsafe { tp_close(ch) }, TP_OK);
    let (sent, received) = stats(ch);
    free(ch);

    let (count, (server_sent, server_received)) = server.join().unwrap();
    assert_eq!(count, 3);
    // Both ends count the same bytes: 5 messages' payload and 8-byte headers, 4 raw bytes,
    // and mtcp's own chunk headers.
    assert_eq!((sent, received), (server_received, server_sent));
    let payload = 5 + 300_000 + 3 + 3 * 8 + 4;
    assert!(
        sent > payload && received > payload - 3 - 8,
        "{sent} {received}"
    );
    // SAFETY: `l` is live and no longer used by the joined thread.
    unsafe { tp_listener_free(l) };
}

#[test]
fn limits_and_poisoning() {
    let small = tp_config {
        max_message: 16,
        ..quick()
    };
    let l = listen(c"tcp", &quick());
    // SAFETY: `l` is live until freed below.
    let port = unsafe { tp_listener_port(l) };
    let server = {
        let l = l as usize;
        thread::spawn(move || {
            // SAFETY: the listener stays live until this thread is joined.
            let ch = unsafe { tp_accept(l as *mut tp_listener) };
            assert!(!ch.is_null(), "{}", last_error());
            assert_eq!(recv_message(ch).unwrap(), b"fits");
            assert_eq!(send_message(ch, &[7u8; 100]), TP_OK);
            // SAFETY: live channel.
            assert_eq!(unsafe { tp_close(ch) }, TP_OK);
            // Wait for the client to close before freeing, so it sees no reset.
            assert_eq!(recv_message(ch), Err(TP_ERR_CLOSED));
            free(ch);
        })
    };
    let ch = connect(c"tcp", port, &small);
    // Too large to send: refused, nothing sent, still usable.
    assert_eq!(send_message(ch, &[1u8; 17]), TP_ERR_SEND_TOO_LARGE);
    assert!(last_error().contains("17 bytes"), "{}", last_error());
    assert_eq!(send_message(ch, b"fits"), TP_OK);
    // The peer announces 100 bytes, more than our 16: refused before allocating, and the
    // channel is poisoned from then on.
    assert_eq!(recv_message(ch), Err(TP_ERR_MESSAGE_TOO_LARGE));
    assert!(last_error().contains("100 bytes"), "{}", last_error());
    assert_eq!(send_message(ch, b"again"), TP_ERR_POISONED);
    // Invalid arguments do not touch the channel.
    // SAFETY: NULL with a length is refused before use.
    assert_eq!(unsafe { tp_send(ch, null(), 3) }, TP_ERR_INVALID_ARGUMENT);
    free(ch);
    server.join().unwrap();
    // SAFETY: `l` is live and no longer used by the joined thread.
    unsafe { tp_listener_free(l) };
}

#[test]
fn a_stream_ending_inside_a_message_poisons_the_channel() {
    use std::io::Write;
    let l = listen(c"tcp", &quick());
    // SAFETY: `l` is live until freed below.
    let port = unsafe { tp_listener_port(l) };
    let mut peer = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
    // SAFETY: `l` is live.
    let ch = unsafe { tp_accept(l) };
    assert!(!ch.is_null(), "{}", last_error());
    // A message announced as 10 bytes, 3 sent, then the end of the stream.
    peer.write_all(&10u64.to_be_bytes()).unwrap();
    peer.write_all(b"abc").unwrap();
    peer.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(recv_message(ch), Err(TP_ERR_CLOSED));
    assert_eq!(send_message(ch, b"x"), TP_ERR_POISONED);
    assert_eq!(
        last_error(),
        "tp_send_message: the channel failed earlier and cannot be used again"
    );
    free(ch);
    // SAFETY: `l` is live, not used afterwards.
    unsafe { tp_listener_free(l) };
}

#[test]
fn a_missing_peer_is_an_error_within_the_timeout() {
    let cfg = tp_config {
        io_timeout_ms: 150,
        connect_attempts: 2,
        retry_delay_ms: 10,
        ..tp_config::default()
    };
    // No client: accept times out.
    let l = listen(c"tcp", &cfg);
    let start = Instant::now();
    // SAFETY: `l` is live until freed below.
    assert!(unsafe { tp_accept(l) }.is_null());
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_eq!(tp_last_status(), TP_ERR_TIMEOUT, "{}", last_error());
    // No server: a port that was just free refuses the connection.
    let port = {
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        probe.local_addr().unwrap().port()
    };
    let addr = std::ffi::CString::new(format!("127.0.0.1:{port}")).unwrap();
    // SAFETY: NUL-terminated strings and a valid config.
    let ch = unsafe { tp_connect(c"tcp".as_ptr(), addr.as_ptr(), &cfg) };
    assert!(ch.is_null());
    assert_eq!(tp_last_status(), TP_ERR_CONNECT);
    let e = last_error();
    assert!(
        e.contains(&format!(
            "could not connect to 127.0.0.1:{port} after 2 attempts"
        )),
        "{e}"
    );
    // SAFETY: `l` is live.
    unsafe { tp_listener_free(l) };
}

#[test]
fn config_defaults_are_written_out() {
    let d = tp_config_default();
    assert_eq!(d.io_timeout_ms, 30_000);
    assert_eq!(d.connect_attempts, 50);
    assert_eq!(d.max_message, 64 << 20);
    assert_eq!(d.buffer_bytes, 0);
}
