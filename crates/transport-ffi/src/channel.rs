//! The handles (`tp_listener`, `tp_channel`) and every function on them: the paper's four
//! wrapper operations (server, client, send, receive), messages, flush, close, counters.

use std::ffi::c_char;
use std::ptr;

use transputation_transport::{ByteCounts, Channel, Error, Framed, Listener, TransportSpec};

use crate::args::{bytes_arg, bytes_mut_arg, handle_mut, handle_ref, parse_addr, str_arg};
use crate::config::{tp_config, Settings};
use crate::status::{guard, guard_status, tp_status, Failure};

/// A server waiting for clients, from `tp_listen`. Opaque; free with `tp_listener_free`.
pub struct tp_listener {
    inner: Listener,
    max_message: u64,
}

/// A connection to one peer, from `tp_accept` or `tp_connect`. Opaque; free with
/// `tp_channel_free`.
pub struct tp_channel {
    inner: Box<dyn Channel>,
    max_message: u64,
    /// Set by any error that leaves the stream in an unknown state (and while a call runs,
    /// so that a panic leaves it set).
    poisoned: bool,
}

/// A borrowed channel, so that [`Framed`] can work on the channel a `tp_channel` owns for
/// the length of one call (poisoning is tracked by `tp_channel` itself), with a byte
/// already received to hand out first.
struct ByRef<'a> {
    inner: &'a mut dyn Channel,
    pending: Option<u8>,
}

impl Channel for ByRef<'_> {
    fn send(&mut self, bytes: &[u8]) -> transputation_transport::Result<()> {
        self.inner.send(bytes)
    }
    fn recv(&mut self, buf: &mut [u8]) -> transputation_transport::Result<()> {
        match (buf.split_first_mut(), self.pending.take()) {
            (Some((first, rest)), Some(b)) => {
                *first = b;
                self.inner.recv(rest)
            }
            (_, pending) => {
                self.pending = pending;
                self.inner.recv(buf)
            }
        }
    }
    fn flush(&mut self) -> transputation_transport::Result<()> {
        self.inner.flush()
    }
    fn close(&mut self) -> transputation_transport::Result<()> {
        self.inner.close()
    }
    fn stats(&self) -> ByteCounts {
        self.inner.stats()
    }
}

/// Why an operation stopped, and whether the channel is still in a known state.
struct Stop {
    error: Error,
    usable: bool,
}

impl From<Error> for Stop {
    fn from(error: Error) -> Stop {
        // A message refused for its size was not sent at all.
        let usable = matches!(error, Error::SendTooLarge { .. });
        Stop { error, usable }
    }
}

impl tp_channel {
    fn new(inner: Box<dyn Channel>, max_message: u64) -> tp_channel {
        tp_channel {
            inner,
            max_message,
            poisoned: false,
        }
    }

    /// Runs one operation, refusing it on a poisoned channel and poisoning the channel if
    /// it stops in a way that may leave a message half sent or half read.
    fn run<T>(
        &mut self,
        op: impl FnOnce(&mut dyn Channel, u64) -> Result<T, Stop>,
    ) -> Result<T, Failure> {
        if self.poisoned {
            return Err(Error::Poisoned.into());
        }
        self.poisoned = true;
        let r = op(&mut *self.inner, self.max_message);
        self.poisoned = matches!(&r, Err(stop) if !stop.usable);
        r.map_err(|stop| stop.error.into())
    }
}

/// Receives the first byte of what the caller asked for, alone: if the stream ends there,
/// the peer ended its direction between two requests, nothing is half read, and the
/// channel is still usable for sending and closing.
fn recv_first(c: &mut dyn Channel) -> Result<u8, Stop> {
    // Flushed apart, so that an end of stream met while flushing (output half sent)
    // poisons.
    c.flush()?;
    let mut first = [0u8; 1];
    match c.recv(&mut first) {
        Ok(()) => Ok(first[0]),
        Err(error @ Error::Closed { .. }) => Err(Stop {
            error,
            usable: true,
        }),
        Err(e) => Err(e.into()),
    }
}

/// The settings behind a `tp_config` pointer (NULL: the defaults).
///
/// # Safety
/// `cfg` is NULL or points to a readable `tp_config`.
unsafe fn settings(cfg: *const tp_config) -> Result<Settings, Failure> {
    // SAFETY: the caller guarantees NULL or a valid tp_config.
    unsafe { cfg.as_ref() }
        .copied()
        .unwrap_or_default()
        .settings()
}

/// Transport and address arguments, parsed.
///
/// # Safety
/// Both are NULL or NUL-terminated strings.
unsafe fn endpoint(
    transport: *const c_char,
    addr: *const c_char,
) -> Result<(TransportSpec, std::net::SocketAddr), Failure> {
    // SAFETY: forwarded caller guarantee.
    let transport = unsafe { str_arg(transport, "transport") }?;
    // SAFETY: forwarded caller guarantee.
    let addr = unsafe { str_arg(addr, "addr") }?;
    let spec = transport.parse::<TransportSpec>()?;
    Ok((spec, parse_addr(addr)?))
}

/// Sets up a server: binds `addr` for the transport named by `transport`.
///
/// `transport` is a transport string such as `"tcp"`, `"mtcp:streams=4"` or
/// `"udp:rate=500mbit"`; `addr` is `"HOST:PORT"`, port 0 for any free port (see
/// `tp_listener_port`). `cfg` may be NULL for the defaults; its `io_timeout_ms` bounds
/// each `tp_accept`.
///
/// Returns a listener to free with `tp_listener_free`, or NULL on failure (see
/// `tp_last_error`).
///
/// # Safety
/// `transport` and `addr` must each be NULL or a NUL-terminated string; `cfg` must be NULL
/// or point to a `tp_config`. None of them is used after the call returns.
#[no_mangle]
pub unsafe extern "C" fn tp_listen(
    transport: *const c_char,
    addr: *const c_char,
    cfg: *const tp_config,
) -> *mut tp_listener {
    guard("tp_listen", || {
        // SAFETY: forwarded caller guarantees on the three pointers.
        let (spec, addr) = unsafe { endpoint(transport, addr) }?;
        // SAFETY: as above.
        let s = unsafe { settings(cfg) }?;
        let inner = spec.listen(addr, &s.config)?;
        Ok(Box::into_raw(Box::new(tp_listener {
            inner,
            max_message: s.max_message,
        })))
    })
}

/// The port the listener is bound to (the one chosen when `tp_listen` was given port 0),
/// or 0 if `listener` is NULL.
///
/// # Safety
/// `listener` must be NULL or a live listener from `tp_listen`.
#[no_mangle]
pub unsafe extern "C" fn tp_listener_port(listener: *const tp_listener) -> u16 {
    guard("tp_listener_port", || {
        // SAFETY: forwarded caller guarantee.
        let l = unsafe { handle_ref(listener, "listener") }?;
        Ok(l.inner.local_addr().port())
    })
}

/// Writes the listener's address as `"HOST:PORT"` (e.g. `"127.0.0.1:40123"`,
/// `"[::1]:40123"`) into `buf`, like `snprintf`: at most `len` bytes including the
/// terminating NUL, always NUL-terminated when `len > 0`.
///
/// Returns the length of the whole address without the NUL (at most 58, so a 64-byte
/// buffer always suffices); a return value `>= len` means the text was cut short. Returns
/// 0 if `listener` is NULL, or if `buf` is NULL while `len > 0`.
///
/// # Safety
/// `listener` must be NULL or a live listener from `tp_listen`; `buf` must be NULL or
/// point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tp_listener_addr(
    listener: *const tp_listener,
    buf: *mut c_char,
    len: usize,
) -> usize {
    guard("tp_listener_addr", || {
        // SAFETY: forwarded caller guarantee.
        let l = unsafe { handle_ref(listener, "listener") }?;
        // SAFETY: forwarded caller guarantee.
        let out = unsafe { bytes_mut_arg(buf.cast::<u8>(), len, "buf") }?;
        let text = l.inner.local_addr().to_string();
        if let Some(room) = out.len().checked_sub(1) {
            let n = text.len().min(room);
            out[..n].copy_from_slice(&text.as_bytes()[..n]);
            out[n] = 0;
        }
        Ok(text.len())
    })
}

/// Waits for a client (at most the listener's I/O timeout for each connection the
/// transport needs) and returns the channel to it, or NULL on failure (`TP_ERR_TIMEOUT`
/// when no client came; see `tp_last_error`).
///
/// A `tcp` or `mtcp` listener may accept again for further clients.
///
/// # Safety
/// `listener` must be NULL or a live listener from `tp_listen`, used by no other thread
/// during the call.
#[no_mangle]
pub unsafe extern "C" fn tp_accept(listener: *mut tp_listener) -> *mut tp_channel {
    guard("tp_accept", || {
        // SAFETY: forwarded caller guarantee.
        let l = unsafe { handle_mut(listener, "listener") }?;
        let ch = l.inner.accept()?;
        Ok(Box::into_raw(Box::new(tp_channel::new(ch, l.max_message))))
    })
}

/// Frees a listener; NULL is ignored. Channels it accepted stay usable.
///
/// # Safety
/// `listener` must be NULL or a live listener from `tp_listen`, not used again afterwards.
#[no_mangle]
pub unsafe extern "C" fn tp_listener_free(listener: *mut tp_listener) {
    guard("tp_listener_free", || {
        if !listener.is_null() {
            // SAFETY: a live listener from tp_listen is a Box::into_raw pointer, freed
            // only here and, by the caller's guarantee, only once.
            drop(unsafe { Box::from_raw(listener) });
        }
        Ok(())
    })
}

/// Sets up a client: connects to the server at `addr` (`"HOST:PORT"`) over the transport
/// named by `transport`, retrying refused attempts as `cfg` says (NULL: the defaults, up to
/// 50 attempts 100 ms apart, all within 5 s).
///
/// Returns a channel to free with `tp_channel_free`, or NULL on failure (`TP_ERR_CONNECT`
/// with the address in the message when no attempt succeeded; see `tp_last_error`).
///
/// # Safety
/// `transport` and `addr` must each be NULL or a NUL-terminated string; `cfg` must be NULL
/// or point to a `tp_config`. None of them is used after the call returns.
#[no_mangle]
pub unsafe extern "C" fn tp_connect(
    transport: *const c_char,
    addr: *const c_char,
    cfg: *const tp_config,
) -> *mut tp_channel {
    guard("tp_connect", || {
        // SAFETY: forwarded caller guarantees on the three pointers.
        let (spec, addr) = unsafe { endpoint(transport, addr) }?;
        // SAFETY: as above.
        let s = unsafe { settings(cfg) }?;
        let ch = spec.connect(addr, &s.config)?;
        Ok(Box::into_raw(Box::new(tp_channel::new(ch, s.max_message))))
    })
}

/// Queues `len` raw bytes for the peer (no framing: the peer must know how many to
/// receive). They may stay buffered until `tp_flush`, `tp_close` or the next receive.
///
/// # Safety
/// `channel` must be NULL or a live channel used by no other thread during the call;
/// `data` must be NULL (only if `len` is 0) or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn tp_send(
    channel: *mut tp_channel,
    data: *const u8,
    len: usize,
) -> tp_status {
    guard_status("tp_send", || {
        // SAFETY: forwarded caller guarantee.
        let ch = unsafe { handle_mut(channel, "channel") }?;
        // SAFETY: forwarded caller guarantee.
        let data = unsafe { bytes_arg(data, len, "data") }?;
        ch.run(|c, _| Ok(c.send(data)?))
    })
}

/// Receives exactly `len` raw bytes into `buf`, flushing this side's pending output first.
/// Fails with `TP_ERR_CLOSED` if the stream ends before `buf` is full (the channel stays
/// usable for sending and `tp_close` when it ended before the first byte),
/// `TP_ERR_TIMEOUT` if the peer is silent for the I/O timeout.
///
/// # Safety
/// `channel` must be NULL or a live channel used by no other thread during the call;
/// `buf` must be NULL (only if `len` is 0) or point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn tp_recv(channel: *mut tp_channel, buf: *mut u8, len: usize) -> tp_status {
    guard_status("tp_recv", || {
        // SAFETY: forwarded caller guarantee.
        let ch = unsafe { handle_mut(channel, "channel") }?;
        // SAFETY: forwarded caller guarantee.
        let buf = unsafe { bytes_mut_arg(buf, len, "buf") }?;
        ch.run(|c, _| match buf.split_first_mut() {
            Some((first, rest)) => {
                *first = recv_first(c)?;
                Ok(c.recv(rest)?)
            }
            None => Ok(c.recv(buf)?),
        })
    })
}

/// Queues one message of `len` bytes (an 8-byte big-endian length, then the bytes); the
/// peer receives it whole with `tp_recv_message`. Longer than the configured
/// `max_message`: `TP_ERR_SEND_TOO_LARGE`, nothing sent, the channel stays usable.
///
/// # Safety
/// `channel` must be NULL or a live channel used by no other thread during the call;
/// `data` must be NULL (only if `len` is 0) or point to `len` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn tp_send_message(
    channel: *mut tp_channel,
    data: *const u8,
    len: usize,
) -> tp_status {
    guard_status("tp_send_message", || {
        // SAFETY: forwarded caller guarantee.
        let ch = unsafe { handle_mut(channel, "channel") }?;
        // SAFETY: forwarded caller guarantee.
        let data = unsafe { bytes_arg(data, len, "data") }?;
        ch.run(|c, max| {
            let inner = ByRef {
                inner: c,
                pending: None,
            };
            Ok(Framed::with_max_message(inner, max).send_message(data)?)
        })
    })
}

/// Receives the next message (flushing this side's pending output first). On success
/// `*data` points to its bytes and `*len` is its length; free the bytes with
/// `tp_free_buffer(*data, *len)`. An empty message gives `*data == NULL`, `*len == 0`.
/// On failure `*data` is NULL and `*len` 0. `TP_ERR_CLOSED` before the first byte of a
/// message means the peer closed cleanly between messages: the channel stays usable for
/// sending and `tp_close`. A message longer than `max_message` gives
/// `TP_ERR_MESSAGE_TOO_LARGE` before anything is allocated.
///
/// # Safety
/// `channel` must be NULL or a live channel used by no other thread during the call;
/// `data` and `len` must be NULL or point to writable storage of their type.
#[no_mangle]
pub unsafe extern "C" fn tp_recv_message(
    channel: *mut tp_channel,
    data: *mut *mut u8,
    len: *mut usize,
) -> tp_status {
    guard_status("tp_recv_message", || {
        // SAFETY: forwarded caller guarantee (NULL refused).
        let data = unsafe { handle_mut(data, "data") }?;
        // SAFETY: forwarded caller guarantee (NULL refused).
        let len = unsafe { handle_mut(len, "len") }?;
        *data = ptr::null_mut();
        *len = 0;
        // SAFETY: forwarded caller guarantee.
        let ch = unsafe { handle_mut(channel, "channel") }?;
        let msg = ch.run(|c, max| {
            let pending = Some(recv_first(c)?);
            Ok(Framed::with_max_message(ByRef { inner: c, pending }, max).recv_message()?)
        })?;
        if !msg.is_empty() {
            *len = msg.len();
            *data = Box::into_raw(msg.into_boxed_slice()).cast::<u8>();
        }
        Ok(())
    })
}

/// Frees a message from `tp_recv_message`; NULL is ignored.
///
/// # Safety
/// `data` must be NULL or a pointer `tp_recv_message` stored, with the `len` it stored
/// alongside, not freed before and not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn tp_free_buffer(data: *mut u8, len: usize) {
    guard("tp_free_buffer", || {
        if !data.is_null() {
            // SAFETY: tp_recv_message made (data, len) from Box::into_raw of a boxed slice
            // of exactly `len` bytes; the caller guarantees it is freed once.
            drop(unsafe { Box::from_raw(ptr::slice_from_raw_parts_mut(data, len)) });
        }
        Ok(())
    })
}

/// Pushes every queued byte to the operating system.
///
/// # Safety
/// `channel` must be NULL or a live channel used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn tp_flush(channel: *mut tp_channel) -> tp_status {
    guard_status("tp_flush", || {
        // SAFETY: forwarded caller guarantee.
        let ch = unsafe { handle_mut(channel, "channel") }?;
        ch.run(|c, _| Ok(c.flush()?))
    })
}

/// Flushes, then ends the sending direction: the peer reads what was sent, then sees the
/// end of the stream (`TP_ERR_CLOSED`). Receiving is still possible. Does not wait for the
/// peer to have read the bytes (a protocol needs an acknowledgement for that). The channel
/// must still be freed with `tp_channel_free`.
///
/// # Safety
/// `channel` must be NULL or a live channel used by no other thread during the call.
#[no_mangle]
pub unsafe extern "C" fn tp_close(channel: *mut tp_channel) -> tp_status {
    guard_status("tp_close", || {
        // SAFETY: forwarded caller guarantee.
        let ch = unsafe { handle_mut(channel, "channel") }?;
        ch.run(|c, _| Ok(c.close()?))
    })
}

/// The bytes this channel handed to (`*sent`) and took from (`*received`) its sockets so
/// far, framing and transport headers included. Either output pointer may be NULL to skip
/// it.
///
/// # Safety
/// `channel` must be NULL or a live channel not used by another thread during the call;
/// `sent` and `received` must be NULL or point to writable `uint64_t`s.
#[no_mangle]
pub unsafe extern "C" fn tp_stats(
    channel: *const tp_channel,
    sent: *mut u64,
    received: *mut u64,
) -> tp_status {
    guard_status("tp_stats", || {
        // SAFETY: forwarded caller guarantee.
        let ch = unsafe { handle_ref(channel, "channel") }?;
        let counts = ch.inner.stats();
        // SAFETY: the caller guarantees NULL or a writable u64.
        if let Some(s) = unsafe { sent.as_mut() } {
            *s = counts.sent;
        }
        // SAFETY: as above.
        if let Some(r) = unsafe { received.as_mut() } {
            *r = counts.received;
        }
        Ok(())
    })
}

/// Frees a channel; NULL is ignored. Pending output is flushed on a best-effort basis
/// (waiting at most the I/O timeout) and errors are dropped: call `tp_close` first to learn
/// whether the last bytes left.
///
/// # Safety
/// `channel` must be NULL or a live channel from `tp_accept` or `tp_connect`, not used
/// again afterwards.
#[no_mangle]
pub unsafe extern "C" fn tp_channel_free(channel: *mut tp_channel) {
    guard("tp_channel_free", || {
        if !channel.is_null() {
            // SAFETY: a live channel is a Box::into_raw pointer, freed only here and, by
            // the caller's guarantee, only once.
            drop(unsafe { Box::from_raw(channel) });
        }
        Ok(())
    })
}
