//! The commands' standard output, which may be a pipe whose reader stops early
//! (`transputation testbed report --format json | head -1`).
//!
//! `println!` panics when standard output is closed. The `outln!` and `out!` macros (in
//! `main.rs`) write through [`write()`] instead, which turns a closed output (`EPIPE`: Rust
//! ignores `SIGPIPE`, so the write fails rather than the process being killed) into the
//! error [`StdoutClosed`]; it travels up like any other error, so destructors run (a
//! one-time key's directory is removed), and `main` ends quietly with status 0 when it
//! sees it.

use std::fmt;
use std::io::{ErrorKind, Write};

use anyhow::{Context, Result};

/// Standard output was closed by its reader.
#[derive(Debug)]
pub struct StdoutClosed;

impl fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("standard output was closed by its reader")
    }
}

impl std::error::Error for StdoutClosed {}

/// Writes `args` to standard output and flushes it (so a closed pipe is seen here, not in
/// a flush at exit, where it would go unreported).
pub fn write(args: fmt::Arguments<'_>) -> Result<()> {
    let mut out = std::io::stdout().lock();
    match out.write_fmt(args).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        Err(e) => Err(e).context("writing to standard output"),
    }
}

/// Whether `e` is, or was caused by, a closed standard output.
pub fn is_closed(e: &anyhow::Error) -> bool {
    e.chain().any(|c| c.is::<StdoutClosed>())
}
