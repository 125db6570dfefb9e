//! A C interface to the Transputation transports, for 2PC libraries written in C or C++.
//!
//! The paper put its transport wrapper under existing C++ 2PC libraries; this crate lets
//! users of ours do the same. It is a `cdylib` and a `staticlib` (`libtransputation_ffi.so`,
//! `libtransputation_ffi.a`) with a header, `include/transputation.h`, generated from these
//! sources by cbindgen and committed (the `header` test fails when the committed copy is
//! stale; `TRANSPUTATION_BLESS_HEADER=1 cargo test -p transputation-transport-ffi --test
//! header` rewrites it).
//!
//! The transport is named by the same string as everywhere else in the project
//! (`tcp`, `mtcp:streams=4`, `udp:rate=500mbit`, ...): a transport added to
//! `transputation-transport` works through this interface unchanged.
//!
//! ```c
//! tp_channel *ch = tp_connect("mtcp:streams=2", "127.0.0.1:7000", NULL);
//! if (ch == NULL) { fprintf(stderr, "%s\n", tp_last_error()); return 1; }
//! if (tp_send_message(ch, (const uint8_t *)"hello", 5) != TP_OK) { ... }
//! uint8_t *reply; size_t len;
//! if (tp_recv_message(ch, &reply, &len) != TP_OK) { ... }
//! tp_free_buffer(reply, len);
//! tp_close(ch);
//! tp_channel_free(ch);
//! ```
//!
//! `examples/c/echo.c` is a complete echo client and server, built by the `Makefile` next
//! to it; the repository README's section "Using the transports from C/C++" gives the
//! build and link commands.
//!
//! # Contracts
//!
//! - **Handles.** `tp_listener` and `tp_channel` are opaque; each `tp_listen`/`tp_accept`/
//!   `tp_connect` that returns one must be matched by one `tp_listener_free`/
//!   `tp_channel_free`. A handle may move between threads but must not be used by two
//!   threads at once.
//! - **Errors.** Functions return a [`tp_status`] (`TP_OK` or an error code naming what
//!   happened) or a handle (`NULL` on failure). After a failure, `tp_last_error()` gives a
//!   message for people, valid on this thread until its next failing call, and
//!   `tp_last_status()` its code. Invalid arguments (`NULL` where a pointer is required,
//!   strings that are not UTF-8, bad addresses) give `TP_ERR_INVALID_ARGUMENT`, never
//!   undefined behaviour; a Rust panic (a bug) is caught at the boundary and gives
//!   `TP_ERR_PANIC`.
//! - **Failed channels.** After an error on a channel the channel is in an unknown state
//!   (a message may be half sent or half read) and answers `TP_ERR_POISONED` from then on:
//!   free it. Three errors leave it usable: `TP_ERR_INVALID_ARGUMENT` and
//!   `TP_ERR_SEND_TOO_LARGE` (nothing happened), and `TP_ERR_CLOSED` from a receive that got
//!   no byte at all, which is how a peer's `tp_close` between messages shows up (this end
//!   may still send and close). Peer input is untrusted: a malformed or oversized message,
//!   a connection closed early or a peer silent for longer than the I/O timeout gives an
//!   error code, never a hang or a crash.
//! - **Flushing and closing** follow `transputation-transport`: sends may be buffered until
//!   `tp_flush`, `tp_close` or the next receive on the same channel.

// This crate is the project's FFI boundary: exporting unmangled functions and reading
// caller-provided pointers cannot be done without `unsafe`. The workspace denies
// `unsafe_code`; it is allowed here only, every unsafe block must carry a SAFETY comment
// (clippy checks), and `unsafe_op_in_unsafe_fn` keeps each unsafe operation inside such a
// block.
#![allow(unsafe_code)]
#![deny(unsafe_op_in_unsafe_fn)]
#![deny(clippy::undocumented_unsafe_blocks)]
// The exported types keep their C names (`tp_channel`, `tp_status`, `TP_ERR_CLOSED`), so
// the header and these docs speak the same language.
#![allow(non_camel_case_types)]

mod args;
mod channel;
mod config;
mod status;

pub use channel::{
    tp_accept, tp_channel, tp_channel_free, tp_close, tp_connect, tp_flush, tp_free_buffer,
    tp_listen, tp_listener, tp_listener_addr, tp_listener_free, tp_listener_port, tp_recv,
    tp_recv_message, tp_send, tp_send_message, tp_stats,
};
pub use config::{tp_config, tp_config_default};
pub use status::{tp_last_error, tp_last_status, tp_status, tp_status_name};

#[cfg(test)]
mod tests;
