//! `tcp`: one kernel TCP connection, Nagle off, buffered in user space.

use std::io::{BufReader, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::time::Duration;

use crate::{ByteCounts, Channel, Config, Error, Result, SocketBuffers};

/// User-space buffer per direction.
const BUF: usize = 64 << 10;

/// A [`Channel`] over one TCP connection.
#[derive(Debug)]
pub(crate) struct TcpChannel {
    reader: BufReader<TcpStream>,
    writer: BufWriter<TcpStream>,
    timeout: Duration,
    counts: ByteCounts,
}

impl TcpChannel {
    /// Wraps a connected, configured stream.
    pub(crate) fn new(stream: TcpStream, cfg: &Config) -> Result<Self> {
        let read_half = stream.try_clone().map_err(|source| Error::Io {
            during: "cloning a socket handle",
            source,
        })?;
        Ok(TcpChannel {
            reader: BufReader::with_capacity(BUF, read_half),
            writer: BufWriter::with_capacity(BUF, stream),
            timeout: cfg.io_timeout,
            counts: ByteCounts::default(),
        })
    }
}

impl Channel for TcpChannel {
    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        self.writer
            .write_all(bytes)
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
        match self.writer.get_ref().shutdown(Shutdown::Write) {
            Ok(()) => Ok(()),
            Err(e) if e.kind() == std::io::ErrorKind::NotConnected => Ok(()),
            Err(e) => Err(Error::from_io(e, "closing", self.timeout)),
        }
    }

    fn stats(&self) -> ByteCounts {
        self.counts
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        crate::channel::read_socket_buffers(self.writer.get_ref())
    }

    fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        self.writer.get_ref().peer_addr().ok()
    }
}
