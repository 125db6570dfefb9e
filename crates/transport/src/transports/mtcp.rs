//! `mtcp`: N TCP connections carrying one ordered byte stream.
//!
//! Set-up: the client opens N connections at once (one round trip for all) and sends on
//! each a hello: `b"TPMT"`, version byte 1, the stream count (u16), this connection's
//! index (u16) and a session number (u64), all big-endian. The server accepts N
//! connections of one session, orders them by index and answers on connection 0:
//! `b"TPMT"`, 1 if it agrees or 0 if not, and its own stream count (u16). A server that
//! refuses answers on the connection it read first, which the client then finds among
//! the others when connection 0 closes. The client checks the answer, so both sides learn
//! of a mismatch.
//!
//! Data: the byte stream is cut into chunks of at most `chunk` bytes; chunk i goes on
//! connection i mod N, as a 4-byte big-endian length (1 to 16 MiB) and the bytes. The
//! receiver reads chunks in the same order, so order needs no sequence numbers. A chunk
//! leaves when it is full or on flush. One thread drives all connections: a blocked
//! connection stalls the others once their socket buffers are full or empty, which is
//! what keeps the stream in order.
//!
//! A server serves one client per [`crate::Listener::accept`]: a stray connection that
//! arrives first (a port scanner, a client of another session) makes that accept fail with
//! an error, after at most the I/O timeout.

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::time::Duration;

use crate::config::{session_number, Config};
use crate::family::{Accept, Delivery, Family, OptionDecl, OptionKind, Shown, Transport, Value};
use crate::tcp_socket::{self, CC_OPTION};
use crate::{ByteCounts, Channel, Error, Result, SocketBuffers};

/// Most connections one channel may have.
const MAX_STREAMS: u16 = 64;
/// Largest chunk, sent or accepted.
const MAX_CHUNK: u32 = 16 << 20;

/// The `mtcp` transport's declaration.
pub(crate) static FAMILY: Family = Family {
    name: "mtcp",
    aliases: &[],
    summary: "N parallel TCP connections carrying one ordered stream, striped in chunks",
    options: &[
        OptionDecl {
            key: "streams",
            kind: OptionKind::Integer {
                min: 1,
                max: MAX_STREAMS as u64,
                unit: "connections",
            },
            default: Some(Value::Int(4)),
            shown: Shown::Always,
            doc: "the number of TCP connections",
        },
        OptionDecl {
            key: "chunk",
            kind: OptionKind::Integer {
                min: 1024,
                max: MAX_CHUNK as u64,
                unit: "bytes",
            },
            default: Some(Value::Int(128 << 10)),
            shown: Shown::WhenChanged,
            doc: "bytes per chunk: chunk i of the stream goes on connection i mod N",
        },
        CC_OPTION,
    ],
    delivery: Delivery::Stream,
    conformance: &["mtcp:streams=1", "mtcp:streams=4,chunk=1024", "mtcp:streams=7"],
    available: || Ok(()),
    auto: true,
    build: |v| {
        Ok(Arc::new(Mtcp {
            streams: v.u32_of("streams") as u16,
            chunk: v.u32_of("chunk"),
            cc: v.text("cc").map(str::to_string),
        }))
    },
    model: |v| {
        let streams = v.u32_of("streams");
        let mut m = tcp_socket::kernel_model("mtcp", v.text("cc"));
        // The connections are made at once, then the hellos go and the server answers.
        m.connect_round_trips = 2.0;
        m.streams = streams;
        m.stripe = f64::from(v.u32_of("chunk"));
        m.defaults.growth = 1.8;
        m.defaults.fixed = 0.011;
        m.defaults.slow_start_exit = m.defaults.slow_start_exit.min(0.6);
        // One thread drives every connection: about 170 Mbit/s on the 2-vCPU machine.
        m.defaults.host_cap = 21e6;
        m
    },
    tuned: |_| vec!["mtcp:streams=8,cc=bbr".into()],
    sender_options: &["cc"],
    while_probing: "",
    started: None,
    hedged_connect: false,
};

/// `mtcp` with its options.
#[derive(Debug)]
struct Mtcp {
    streams: u16,
    chunk: u32,
    cc: Option<String>,
}

impl Mtcp {
    /// The socket buffer each connection gets from [`Config::buffer_bytes`]: an equal share
    /// (rounded up), since the connections together carry one direction.
    fn buffer(&self, cfg: &Config) -> Option<usize> {
        let b = cfg.buffer_bytes?;
        Some(b.div_ceil(usize::from(self.streams).max(1)))
    }
}

impl Transport for Mtcp {
    fn listen(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Accept>> {
        let (socket, local_addr) = tcp_socket::listen(addr, self.buffer(cfg))?;
        Ok(Box::new(MtcpServer {
            socket,
            local_addr,
            streams: self.streams,
            chunk: self.chunk,
            cc: self.cc.clone(),
        }))
    }

    fn connect(&self, addr: SocketAddr, cfg: &Config) -> Result<Box<dyn Channel>> {
        // One budget for all N connections (each with its own attempts), made at once, each
        // on a thread of its own: their handshakes take one round trip together, not N.
        let deadline = cfg.connect_deadline();
        let (cc, buffer) = (self.cc.as_deref(), self.buffer(cfg));
        let conns = std::thread::scope(|scope| {
            let connecting: Vec<_> = (0..self.streams)
                .map(|_| scope.spawn(move || tcp_socket::connect_tcp(addr, cfg, deadline, cc, buffer)))
                .collect();
            connecting
                .into_iter()
                .map(|c| {
                    c.join().unwrap_or_else(|_| {
                        Err(Error::Io {
                            during: "connecting an mtcp stream",
                            source: std::io::Error::other("the connecting thread panicked"),
                        })
                    })
                })
                .collect::<Result<Vec<TcpStream>>>()
        })?;
        Ok(Box::new(MtcpChannel::client(conns, self.chunk, cfg)?))
    }

    fn congestion_control(&self) -> Option<&str> {
        self.cc.as_deref()
    }
}

/// An `mtcp` server socket.
#[derive(Debug)]
struct MtcpServer {
    socket: TcpListener,
    local_addr: SocketAddr,
    streams: u16,
    chunk: u32,
    cc: Option<String>,
}

impl Accept for MtcpServer {
    fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    fn accept(&self, cfg: &Config) -> Result<Box<dyn Channel>> {
        let cc = self.cc.as_deref();
        // The first connection may be waited for as long as the accept timeout says; the
        // session's others follow it at once.
        let mut wait = cfg.accept_wait();
        Ok(Box::new(MtcpChannel::server(
            || {
                let s = tcp_socket::accept(&self.socket, wait, cfg, cc);
                wait = cfg.io_timeout;
                s
            },
            self.streams,
            self.chunk,
            cfg,
        )?))
    }
}
const MAGIC: &[u8; 4] = b"TPMT";
const VERSION: u8 = 1;
const HELLO_LEN: usize = 17;
const ANSWER_LEN: usize = 7;

/// A [`Channel`] striped over several TCP connections.
#[derive(Debug)]
struct MtcpChannel {
    streams: Vec<TcpStream>,
    chunk: usize,
    /// The chunk being filled: a 4-byte header slot, then up to `chunk` bytes.
    pending: Vec<u8>,
    next_send: usize,
    next_recv: usize,
    /// Connection and bytes left of the chunk being read.
    reading: Option<(usize, usize)>,
    timeout: Duration,
    counts: ByteCounts,
}

impl MtcpChannel {
    /// The client side: sends the hellos on `streams`, checks the server's answer.
    fn client(mut streams: Vec<TcpStream>, chunk: u32, cfg: &Config) -> Result<Self> {
        let n = streams.len() as u16;
        let session = session_number();
        let t = cfg.io_timeout;
        // A server that refuses the session answers on the first connection it read and
        // closes the rest, so a hello may fail to go out: the answer, when it came, says
        // why, and is what to report.
        let mut failed_send = None;
        for (i, s) in streams.iter_mut().enumerate() {
            let mut hello = Vec::with_capacity(HELLO_LEN);
            hello.extend_from_slice(MAGIC);
            hello.push(VERSION);
            hello.extend_from_slice(&n.to_be_bytes());
            hello.extend_from_slice(&(i as u16).to_be_bytes());
            hello.extend_from_slice(&session.to_be_bytes());
            if let Err(e) = s.write_all(&hello) {
                failed_send = Some(Error::from_io(e, "sending the mtcp hello", t));
                break;
            }
        }
        let mut answer = [0u8; ANSWER_LEN];
        if let Err(e) = streams[0].read_exact(&mut answer) {
            // A refusing server answers on the connection it read first, which need not be
            // the first (they are made at once): its answer, if it sent one, is on another.
            let found = streams[1..].iter_mut().any(|s| {
                let _ = s.set_read_timeout(Some(Duration::from_millis(200)));
                let got = s.read_exact(&mut answer).is_ok();
                let _ = s.set_read_timeout(Some(t));
                got
            });
            if !found {
                return Err(failed_send.unwrap_or_else(|| {
                    Error::from_io(e, "waiting for the mtcp server's answer", t)
                }));
            }
        }
        if &answer[..4] != MAGIC || answer[4] > 1 {
            return Err(Error::Malformed {
                what: "the mtcp server's answer has a wrong magic or status".into(),
            });
        }
        let theirs = u16::from_be_bytes([answer[5], answer[6]]);
        if answer[4] != 1 || theirs != n {
            return Err(Error::Mismatch {
                what: format!("the mtcp server uses streams={theirs}, this client streams={n}"),
            });
        }
        if let Some(e) = failed_send {
            return Err(e);
        }
        Ok(Self::new(streams, chunk, cfg))
    }

    /// The server side: accepts `n` connections of one session with `accept`.
    fn server(
        mut accept: impl FnMut() -> Result<TcpStream>,
        n: u16,
        chunk: u32,
        cfg: &Config,
    ) -> Result<Self> {
        let t = cfg.io_timeout;
        let mut slots: Vec<Option<TcpStream>> = (0..n).map(|_| None).collect();
        let mut session = None;
        for _ in 0..n {
            let mut s = accept()?;
            let mut hello = [0u8; HELLO_LEN];
            s.read_exact(&mut hello)
                .map_err(|e| Error::from_io(e, "reading an mtcp hello", t))?;
            if &hello[..4] != MAGIC || hello[4] != VERSION {
                return Err(Error::Malformed {
                    what: "an mtcp hello has a wrong magic or version (is the client mtcp?)".into(),
                });
            }
            let count = u16::from_be_bytes([hello[5], hello[6]]);
            let index = u16::from_be_bytes([hello[7], hello[8]]);
            let sess = u64::from_be_bytes(hello[9..17].try_into().expect("8 bytes"));
            if count != n {
                // Tell the client, on whichever connection came first, then fail here too.
                let mut answer = MAGIC.to_vec();
                answer.push(0);
                answer.extend_from_slice(&n.to_be_bytes());
                let _ = s.write_all(&answer);
                return Err(Error::Mismatch {
                    what: format!("the mtcp client uses streams={count}, this server streams={n}"),
                });
            }
            if *session.get_or_insert(sess) != sess {
                return Err(Error::Malformed {
                    what: "an mtcp connection of another session arrived".into(),
                });
            }
            match slots.get_mut(usize::from(index)) {
                Some(slot @ None) => *slot = Some(s),
                _ => {
                    return Err(Error::Malformed {
                        what: format!("mtcp connection index {index} is repeated or out of range"),
                    })
                }
            }
        }
        let mut streams: Vec<TcpStream> = slots.into_iter().flatten().collect();
        let mut answer = MAGIC.to_vec();
        answer.push(1);
        answer.extend_from_slice(&n.to_be_bytes());
        streams[0]
            .write_all(&answer)
            .map_err(|e| Error::from_io(e, "answering the mtcp client", t))?;
        Ok(Self::new(streams, chunk, cfg))
    }

    fn new(streams: Vec<TcpStream>, chunk: u32, cfg: &Config) -> Self {
        let chunk = chunk as usize;
        let mut pending = Vec::with_capacity(4 + chunk);
        pending.extend_from_slice(&[0; 4]);
        MtcpChannel {
            streams,
            chunk,
            pending,
            next_send: 0,
            next_recv: 0,
            reading: None,
            timeout: cfg.io_timeout,
            counts: ByteCounts::default(),
        }
    }

    /// Sends the pending chunk, if any, on the next connection.
    fn emit(&mut self) -> Result<()> {
        let len = self.pending.len() - 4;
        if len == 0 {
            return Ok(());
        }
        self.pending[..4].copy_from_slice(&(len as u32).to_be_bytes());
        let i = self.next_send % self.streams.len();
        self.streams[i]
            .write_all(&self.pending)
            .map_err(|e| Error::from_io(e, "sending", self.timeout))?;
        self.counts.sent += self.pending.len() as u64;
        self.next_send += 1;
        self.pending.truncate(4);
        Ok(())
    }
}

impl Channel for MtcpChannel {
    fn send(&mut self, mut bytes: &[u8]) -> Result<()> {
        while !bytes.is_empty() {
            let room = self.chunk - (self.pending.len() - 4);
            let take = room.min(bytes.len());
            self.pending.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
            if self.pending.len() - 4 == self.chunk {
                self.emit()?;
            }
        }
        Ok(())
    }

    fn recv(&mut self, buf: &mut [u8]) -> Result<()> {
        self.flush()?;
        let t = self.timeout;
        let mut filled = 0;
        while filled < buf.len() {
            let (i, left) = match self.reading {
                Some(r) => r,
                None => {
                    let i = self.next_recv % self.streams.len();
                    let mut header = [0u8; 4];
                    self.streams[i]
                        .read_exact(&mut header)
                        .map_err(|e| Error::from_io(e, "receiving", t))?;
                    self.counts.received += 4;
                    let len = u32::from_be_bytes(header);
                    if len == 0 || len > MAX_CHUNK {
                        return Err(Error::Malformed {
                            what: format!("an mtcp chunk header announces {len} bytes"),
                        });
                    }
                    self.next_recv += 1;
                    (i, len as usize)
                }
            };
            let take = left.min(buf.len() - filled);
            self.streams[i]
                .read_exact(&mut buf[filled..filled + take])
                .map_err(|e| Error::from_io(e, "receiving", t))?;
            self.counts.received += take as u64;
            filled += take;
            self.reading = (left > take).then_some((i, left - take));
        }
        Ok(())
    }

    fn flush(&mut self) -> Result<()> {
        self.emit()
    }

    fn close(&mut self) -> Result<()> {
        self.flush()?;
        for s in &self.streams {
            match s.shutdown(Shutdown::Write) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotConnected => {}
                Err(e) => return Err(Error::from_io(e, "closing", self.timeout)),
            }
        }
        Ok(())
    }

    fn stats(&self) -> ByteCounts {
        self.counts
    }

    fn socket_buffers(&self) -> Option<SocketBuffers> {
        crate::channel::read_socket_buffers(self.streams.first()?)
    }

    fn peer_addr(&self) -> Option<std::net::SocketAddr> {
        self.streams.first()?.peer_addr().ok()
    }

    fn sender_tuning(&self) -> Option<Arc<dyn crate::TuneSender>> {
        tcp_socket::KernelSender::of("mtcp", &self.streams)
    }
}

impl Drop for MtcpChannel {
    fn drop(&mut self) {
        // Best effort, as the crate docs say; `close` reports errors.
        let _ = self.emit();
    }
}
