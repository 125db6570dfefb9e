//! `tcp`: one kernel TCP connection, Nagle off, buffered in user space.

use std::io::{BufReader, IoSlice, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::config::Config;
use crate::family::{Accept, Delivery, Family, Transport};
use crate::tcp_socket::{self, CC_OPTION};
use crate::{ByteCounts, Channel, Error, Result, SocketBuffers};

/// The `tcp` transport's declaration.
pub(crate) static FAMILY: Family = Family {
    name: "tcp",
    aliases: &[("tcp-bbr", "cc=bbr")],
    summary: "kernel TCP, TCP_NODELAY, the system's default congestion control unless cc says",
    options: &[CC_OPTION],
    delivery: Delivery::Stream,
    conformance: &["tcp", "tcp:cc=cubic", "tcp-bbr"],
    available: || Ok(()),
    auto: true,
    build: |v| {
        Ok(Arc::new(Tcp {
            cc: v.text("cc").map(str::to_string),
        }))
    },
    model: |v| tcp_socket::kernel_model("tcp", v.text("cc")),
    // Its alias tcp-bbr is predicted already; cubic by name, for a host whose default
    // is another.
    tuned: |_| vec!["tcp:cc=cubic".into()],
    sender_options: &["cc"],
    while_probing: "",
    started: None,
    hedged_connect: true,
};

/// `tcp` with its options.
#[derive(Debug)]
struct Tcp {
    cc: Option<String>,
}

impl Transport for Tcp {
    fn listen(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Accept>> {
        let (socket, local_addr) = tcp_socket::listen(addr, cfg.buffer_bytes)?;
        Ok(Box::new(TcpServer {
            socket,
            local_addr,
            cc: self.cc.clone(),
        }))
    }

    fn connect(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Channel>> {
        let deadline = cfg.connect_deadline();
        let s = tcp_socket::connect_tcp(addr, cfg, deadline, self.cc.as_deref(), cfg.buffer_bytes)?;
        Ok(Box::new(TcpChannel::new(s, cfg)?))
    }

    fn congestion_control(&self) -> Option<&str> {
        self.cc.as_deref()
    }
}

/// A `tcp` server socket.
#[derive(Debug)]
struct TcpServer {
    socket: TcpListener,
    local_addr: SocketAddr,
    cc: Option<String>,
}

impl Accept for TcpServer {
    fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    fn accept(&self, cfg: &Config) -> Result<Box<dyn Channel>> {
        let s = tcp_socket::accept(&self.socket, cfg.accept_wait(), cfg, self.cc.as_deref())?;
        Ok(Box::new(TcpChannel::new(s, cfg)?))
    }
}

/// User-space buffer per direction.
const BUF: usize = 64 << 10;

/// A [`Channel`] over one TCP connection.
#[derive(Debug)]
struct TcpChannel {
    reader: BufReader<TcpStream>,
    writer: CoalescingWriter,
    timeout: Duration,
    counts: ByteCounts,
}

impl TcpChannel {
    /// Wraps a connected, configured stream.
    fn new(stream: TcpStream, cfg: &Config) -> Result<Self> {
        let read_half = stream.try_clone().map_err(|source| Error::Io {
            during: "cloning a socket handle",
            source,
        })?;
        Ok(TcpChannel {
            reader: BufReader::with_capacity(BUF, read_half),
            writer: CoalescingWriter {
                buf: Vec::with_capacity(BUF),
                stream,
                failed: false,
            },
            timeout: cfg.io_timeout,
            counts: ByteCounts::default(),
        })
    }
}

impl Channel for TcpChannel {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.writer
            .send(bytes)
            .map_err(|e| Error::from_io(e, "sending", self.timeout))?;
        self.counts.sent += bytes.len() as u64;
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.flush()?;
        self.reader
            .read_exact(buf)
            .map_err(|e| Error::from_io(e, "receiving", self.timeout))?;
        self.counts.received += buf.len() as u64;
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.writer
            .flush()
            .map_err(|e| Error::from_io(e, "flushing", self.timeout))
    }

    fn close(&mut self) -> Result<()> {
        self.flush()?;
        match self.writer.stream.shutdown(Shutdown::Write) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotConnected => Ok(()),
            Err(e) => Err(Error::from_io(e, "closing", self.timeout)),
        }
    }

    fn stats(&self) -> ByteCounts {
        self.counts
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        crate::channel::read_socket_buffers(&self.writer.stream)
    }

    fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        self.writer.stream.peer_addr().ok()
    }

    fn kernel_rtt(&self) -> Option<Duration> {
        tcp_socket::smoothed_rtt(&self.writer.stream)
    }

    fn sender_tuning(&self) -> Option<Arc<dyn crate::TuneSender>> {
        tcp_socket::KernelSender::of("tcp", [&self.writer.stream])
    }
}

/// The sending side's buffer: small sends are gathered into `buf` (up to [`BUF`] bytes); a
/// send that does not fit goes out with what is buffered in one `writev`, so that a message's
/// 8-byte frame header and its body leave in one system call (and, with Nagle off, not as a
/// separate tiny segment), and a large body is never copied into the buffer.
///
/// After a failed write the writer refuses everything (its buffer may hold bytes that were
/// partly sent, which a retry would send twice); a writer dropped without a failure sends
/// what it holds, as the channel contract asks of a dropped channel.
#[derive(Debug)]
struct CoalescingWriter {
    buf: Vec<u8>,
    stream: TcpStream,
    failed: bool,
}

impl CoalescingWriter {
    fn send(&mut self, bytes: &[u8]) -> std::io::Result<()> {
        self.check()?;
        if self.buf.len() + bytes.len() <= BUF {
            self.buf.extend_from_slice(bytes);
            return Ok(());
        }
        let mut parts = [IoSlice::new(&self.buf), IoSlice::new(bytes)];
        let mut rest = &mut parts[..];
        IoSlice::advance_slices(&mut rest, 0);
        while !rest.is_empty() {
            match self.stream.write_vectored(rest) {
                Ok(0) => {
                    self.failed = true;
                    return Err(std::io::ErrorKind::WriteZero.into());
                }
                Ok(n) => IoSlice::advance_slices(&mut rest, n),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = true;
                    return Err(e);
                }
            }
        }
        self.buf.clear();
        Ok(())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.check()?;
        if let Err(e) = self.stream.write_all(&self.buf) {
            self.failed = true;
            return Err(e);
        }
        self.buf.clear();
        Ok(())
    }

    fn check(&self) -> std::io::Result<()> {
        if self.failed {
            return Err(std::io::Error::other(
                "an earlier write on this connection failed",
            ));
        }
        Ok(())
    }
}

impl Drop for CoalescingWriter {
    fn drop(&mut self) {
        if !self.failed && !self.buf.is_empty() {
            let _ = self.flush();
        }
    }
}
