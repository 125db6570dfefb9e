//! Kernel TCP sockets as `tcp` and `mtcp` set them up: buffers before connect and listen,
//! retries within the connect budget, TCP_NODELAY, timeouts and the congestion control
//! algorithm, and an accept that wakes as soon as a connection waits.

use std::io;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::time::{Duration, Instant};

use transputation_model::{Constants, Control, TransportModel, Window};

use crate::config::{Attempts, Config};
use crate::family::{OptionDecl, OptionKind, Shown};
use crate::{Error, Result};

/// The `cc` option of `tcp` and `mtcp`: the kernel's congestion control algorithm.
pub(crate) const CC_OPTION: OptionDecl = OptionDecl {
    key: "cc",
    kind: OptionKind::Name,
    default: None,
    shown: Shown::WhenChanged,
    doc: "the kernel's TCP congestion control algorithm, e.g. cubic, reno or bbr (unset: the \
          system's default; in the testbed the emulated hosts', --host-cc, cubic by default)",
};

/// The kernel's congestion control algorithms, as listed in
/// /proc/sys/net/ipv4/tcp_available_congestion_control ("unknown" if unreadable).
pub fn available_congestion_controls() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_available_congestion_control")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

/// The kernel's default congestion control for new sockets (in a network namespace, that
/// namespace's), or `cubic`, Linux's default, if unreadable.
pub fn default_congestion_control() -> String {
    std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
        .map(|s| s.trim().to_string())
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "cubic".into())
}

/// How the completion-time model sees kernel TCP under congestion control `cc` (the
/// system's default if `None`): its calibration key (`PREFIX/cc`), its controller, and
/// the constants it starts from. Linux sends 1448 payload bytes a segment and starts at
/// 10 segments (RFC 6928). The constants are rounded from a fit to the paper-table4 runs
/// (docs/transport-model.md §5), but for the host ceiling, which those runs put near
/// 400 Mbit/s for two parties sharing two vCPUs and which is this machine's, not TCP's;
/// the loss constants are set by hand from lossy runs of an earlier protocol version.
pub(crate) fn kernel_model(prefix: &str, cc: Option<&str>) -> TransportModel {
    let cc = cc.map_or_else(default_congestion_control, str::to_string);
    let (control, defaults) = match cc.as_str() {
        "bbr" => (
            Control::Bbr,
            Constants {
                fixed: 0.014,
                startup_lag: 0.45,
                ..Constants::TEXTBOOK
            },
        ),
        "cubic" => (
            Control::Cubic,
            Constants {
                fixed: 0.013,
                slow_start_exit: 0.8,
                loss_factor: 1.5,
                ..Constants::TEXTBOOK
            },
        ),
        _ => (
            Control::Reno,
            Constants {
                fixed: 0.015,
                ..Constants::TEXTBOOK
            },
        ),
    };
    // The rms of ln(predicted / measured) of each key with these constants over the 144
    // cells of the grid in docs/results/auto (2026-11-27; `mtcp`'s runs with the set-up
    // of its connections one after another taken out, as they now connect at once).
    // Reno was not measured: as cubic.
    let error = match (prefix, control) {
        ("tcp", Control::Bbr) => 0.11,
        ("tcp", _) => 0.34,
        (_, Control::Bbr) => 0.59,
        _ => 0.42,
    };
    let defaults = Constants { error, ..defaults };
    TransportModel {
        key: format!("{prefix}/{cc}"),
        connect_round_trips: 1.0,
        segment: 1448.0,
        initial_window: 10.0 * 1448.0,
        streams: 1,
        stripe: 1.0,
        control,
        // setsockopt doubles the size asked for and the kernel advertises about half of
        // that as window: about the size asked for.
        window: Window::SocketBuffer { share: 1.0 },
        reassembly_limit: None,
        pacing_gain: None,
        first_flight_stall: None,
        long_stream_gaps: None,
        defaults,
    }
}

/// Checks that sockets can use congestion control `algorithm`, by setting it on a
/// throw-away socket.
pub fn check_congestion_control(algorithm: &str) -> Result<()> {
    let l = TcpListener::bind("127.0.0.1:0").map_err(|source| Error::Io {
        during: "binding a probe socket",
        source,
    })?;
    set_congestion(&l, algorithm)
}

/// Sets TCP_CONGESTION on a socket, and reads it back.
pub(crate) fn set_congestion(fd: impl std::os::fd::AsFd, algorithm: &str) -> Result<()> {
    let fail = |source: io::Error| Error::CongestionControl {
        algorithm: algorithm.to_string(),
        available: available_congestion_controls(),
        source,
    };
    rustix::net::sockopt::set_tcp_congestion(&fd, algorithm).map_err(|e| fail(e.into()))?;
    let got = rustix::net::sockopt::tcp_congestion(&fd).map_err(|e| fail(e.into()))?;
    if got != algorithm {
        return Err(fail(io::Error::other(format!(
            "the kernel reports '{got}' after setting it"
        ))));
    }
    Ok(())
}

/// A TCP socket for `addr`'s address family, with `buffer` bytes of socket buffers if
/// given. Buffers are set before connect or listen: the kernel picks a connection's TCP
/// window scale from the receive buffer when it sends or answers the SYN, and accepted
/// sockets inherit the listener's buffers.
fn tcp_socket(addr: &SocketAddr, buffer: Option<usize>) -> io::Result<socket2::Socket> {
    use socket2::{Domain, Protocol, Socket, Type};
    let s = Socket::new(
        Domain::for_address(*addr),
        Type::STREAM,
        Some(Protocol::TCP),
    )?;
    if let Some(b) = buffer {
        crate::channel::set_socket_buffers(&s, b)?;
    }
    Ok(s)
}

/// A listening TCP socket (SO_REUSEADDR, as std's `TcpListener::bind` sets it).
fn tcp_listener(addr: SocketAddr, buffer: Option<usize>) -> Result<TcpListener> {
    let listen = || -> io::Result<TcpListener> {
        let s = tcp_socket(&addr, buffer)?;
        s.set_reuse_address(true)?;
        s.bind(&addr.into())?;
        s.listen(128)?;
        Ok(s.into())
    };
    listen().map_err(|source| Error::Io {
        during: "binding the server socket",
        source,
    })
}

/// One TCP connection with retries, TCP_NODELAY, the congestion control and the buffers
/// set.
pub(crate) fn connect_tcp(
    addr: SocketAddr,
    cfg: &Config,
    deadline: Instant,
    cc: Option<&str>,
    buffer: Option<usize>,
) -> Result<TcpStream> {
    let mut attempts = Attempts::until(cfg, deadline);
    let mut last = None;
    while let Some(left) = attempts.next() {
        let s = tcp_socket(&addr, buffer).map_err(|source| Error::Io {
            during: "creating a socket",
            source,
        })?;
        match s.connect_timeout(&addr.into(), left) {
            Ok(()) => return prepare(s.into(), cfg, cc),
            Err(e) => last = Some(e),
        }
    }
    Err(Error::Connect {
        addr,
        attempts: attempts.made(),
        source: last.unwrap_or_else(|| io::Error::other("no attempt made")),
    })
}

/// Options every TCP connection gets, on both ends.
pub(crate) fn prepare(s: TcpStream, cfg: &Config, cc: Option<&str>) -> Result<TcpStream> {
    let io = |source| Error::Io {
        during: "configuring a connection",
        source,
    };
    s.set_nonblocking(false).map_err(io)?;
    s.set_nodelay(true).map_err(io)?;
    s.set_read_timeout(Some(cfg.io_timeout)).map_err(io)?;
    s.set_write_timeout(Some(cfg.io_timeout)).map_err(io)?;
    if let Some(cc) = cc {
        set_congestion(&s, cc)?;
    }
    if cfg.short_path_timers {
        short_path_timers(&s);
    }
    Ok(s)
}

/// The kernel's smoothed round trip on a TCP connection (`TCP_INFO`'s `tcpi_rtt`; right
/// after the handshake, its sample), or `None` before it has one or where unreadable.
// The libc call: neither rustix nor socket2 reads TCP_INFO.
#[allow(unsafe_code)]
pub(crate) fn smoothed_rtt(fd: impl std::os::fd::AsFd) -> Option<Duration> {
    use std::os::fd::AsRawFd;
    // SAFETY: tcp_info is plain old data; getsockopt writes at most `len` bytes of it.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let rc = unsafe {
        libc::getsockopt(
            fd.as_fd().as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_INFO,
            std::ptr::addr_of_mut!(info).cast(),
            &mut len,
        )
    };
    (rc == 0 && info.tcpi_rtt > 0).then(|| Duration::from_micros(u64::from(info.tcpi_rtt)))
}

/// The longest handshake round trip on which [`Config::short_path_timers`] shortens a
/// kernel TCP connection's timers.
pub(crate) const SHORT_PATH_RTT: Duration = Duration::from_millis(10);

/// The least retransmission timeout [`short_path_timers`] sets, at the least.
const SHORT_RTO_FLOOR: Duration = Duration::from_millis(12);

/// The delayed ACK ceiling [`short_path_timers`] asks for, at the least: Linux refuses a
/// ceiling under two of its ticks (4 ms reads as invalid on a 250 Hz kernel, 5 ms is
/// taken and reads back as 8).
const SHORT_DELACK_FLOOR: Duration = Duration::from_millis(5);

/// Linux's `TCP_RTO_MIN_US` and `TCP_DELACK_MAX_US` (include/uapi/linux/tcp.h, 6.15):
/// per-socket versions of the route's `rto_min` and of the delayed ACK's ceiling. The
/// libc crate does not name them yet.
const TCP_RTO_MIN_US: libc::c_int = 45;
const TCP_DELACK_MAX_US: libc::c_int = 46;

/// On a connection whose handshake took at most [`SHORT_PATH_RTT`] (the kernel's first
/// round-trip sample, `TCP_INFO`'s `tcpi_rtt`), caps its delayed ACK at two round trips
/// (at least 5 ms, as the kernel rounds it up to its ticks), then sets its least
/// retransmission timeout to four round trips, at least 12 ms and half as much again as
/// the delayed ACK's cap. Where the path is longer or the kernel has no such options
/// (before Linux 6.15) nothing is changed; should only the timeout be refused, the
/// connection keeps the capped delayed ACK, which only ACKs sooner.
///
/// Why: Linux's timeout is the smoothed round trip plus the larger of four deviations
/// and a floor of 200 ms, and a tail-loss probe for a lone segment waits two round trips
/// plus that floor (RFC 8985 §7.2 leaves its extra wait to the implementation; Linux
/// takes the floor for the peer's delayed ACK). On a 5 ms path a lost packet of a
/// session's small messages (handshake, oblivious transfer: one or two segments, no
/// duplicate ACKs to repair it sooner) so waited 200 ms in a 60 ms session. Both ends
/// of `--transport auto`'s connections set both options, so a lone segment's ACK comes
/// before the peer's timer fires. A peer whose kernel lacks them delays its ACKs 40 ms
/// or more, and a lone segment it does not answer sooner is then sent twice: a timeout
/// that fired too early is undone by F-RTO (RFC 5682), at the cost of the resent segment.
pub(crate) fn short_path_timers(fd: impl std::os::fd::AsFd) {
    let fd = fd.as_fd();
    let Some(rtt) = smoothed_rtt(fd).filter(|rtt| *rtt <= SHORT_PATH_RTT) else {
        return;
    };
    // A coarser kernel refuses the least values: twice as much, up to its 40 ms default.
    let mut ask = (rtt * 2).max(SHORT_DELACK_FLOOR);
    while !set_tcp_micros(fd, TCP_DELACK_MAX_US, ask) {
        ask *= 2;
        if ask > Duration::from_millis(40) {
            return;
        }
    }
    let delack = tcp_micros(fd, TCP_DELACK_MAX_US).unwrap_or(ask);
    let rto = (rtt * 4).max(SHORT_RTO_FLOOR).max(delack * 3 / 2);
    set_tcp_micros(fd, TCP_RTO_MIN_US, rto);
}

/// Sets an `IPPROTO_TCP` option counted in microseconds; whether the kernel took it.
// The libc call: neither rustix nor socket2 sets these options.
#[allow(unsafe_code)]
fn set_tcp_micros(fd: std::os::fd::BorrowedFd<'_>, option: libc::c_int, value: Duration) -> bool {
    use std::os::fd::AsRawFd;
    let us = libc::c_int::try_from(value.as_micros()).unwrap_or(libc::c_int::MAX);
    // SAFETY: an int option, passed by pointer with its size.
    unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            option,
            std::ptr::addr_of!(us).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        ) == 0
    }
}

/// Reads an `IPPROTO_TCP` option counted in microseconds, or `None` where the kernel does
/// not have it.
#[allow(unsafe_code)]
fn tcp_micros(fd: std::os::fd::BorrowedFd<'_>, option: libc::c_int) -> Option<Duration> {
    use std::os::fd::AsRawFd;
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: an int option read into an int with its size.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            option,
            std::ptr::addr_of_mut!(v).cast(),
            &mut len,
        )
    };
    let us = u64::try_from(v).ok().filter(|_| rc == 0)?;
    Some(Duration::from_micros(us))
}

/// A listening TCP socket, non-blocking, for [`accept`].
pub(crate) fn listen(addr: SocketAddr, buffer: Option<usize>) -> Result<(TcpListener, SocketAddr)> {
    let inner = tcp_listener(addr, buffer)?;
    inner.set_nonblocking(true).map_err(|source| Error::Io {
        during: "configuring the server socket",
        source,
    })?;
    let local = inner.local_addr().map_err(|source| Error::Io {
        during: "reading the server's address",
        source,
    })?;
    Ok((inner, local))
}

/// One TCP connection from a listener of [`listen`]: accepted as soon as `poll` says a
/// connection is waiting (a sleep between attempts would add up to its length to every
/// session's start), for at most `wait`.
pub(crate) fn accept(
    listener: &TcpListener,
    wait: Duration,
    cfg: &Config,
    cc: Option<&str>,
) -> Result<TcpStream> {
    let start = Instant::now();
    loop {
        match listener.accept() {
            Ok((s, _)) => return prepare(s, cfg, cc),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                let left = wait.saturating_sub(start.elapsed());
                if left.is_zero() {
                    return Err(Error::Timeout {
                        during: "waiting for a client to connect",
                        after: wait,
                    });
                }
                wait_readable(listener, left)?;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(source) => {
                return Err(Error::Io {
                    during: "accepting a connection",
                    source,
                })
            }
        }
    }
}

/// Waits until `listener` has a connection to accept, at most `timeout` (a wake-up
/// without one, as on a signal, returns early: the caller tries to accept and waits again).
fn wait_readable(listener: &std::net::TcpListener, timeout: Duration) -> Result<()> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    // At most a day per wait (every platform's poll takes that; the caller waits again).
    let timeout = Timespec::try_from(timeout.min(Duration::from_secs(86_400)))
        .expect("a day fits a timespec");
    match poll(&mut [PollFd::new(listener, PollFlags::IN)], Some(&timeout)) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(e) => Err(Error::Io {
            during: "waiting for a client to connect",
            source: e.into(),
        }),
    }
}

/// The kernel congestion controls this process may set on a socket: each available one
/// that a fresh socket takes (an unprivileged process may set only those in
/// net.ipv4.tcp_allowed_congestion_control; one with CAP_NET_ADMIN, any).
pub fn settable_congestion_controls() -> Vec<String> {
    use socket2::{Domain, Protocol, Socket, Type};
    let Ok(probe) = Socket::new(Domain::IPV4, Type::STREAM, Some(Protocol::TCP)) else {
        return Vec::new();
    };
    available_congestion_controls()
        .split_whitespace()
        .filter(|cc| rustix::net::sockopt::set_tcp_congestion(&probe, cc).is_ok())
        .map(str::to_string)
        .collect()
}

/// Retunes the sending side of an established kernel TCP channel (`tcp`, or every
/// connection of an `mtcp` one): its congestion control by `TCP_CONGESTION`, which the
/// kernel accepts on an established socket (it starts the new algorithm from the current
/// window: after a handshake and a few kB, as a connection set up with it), and its send
/// buffer. The kernel has no socket option for the initial window, so a hint with one is
/// refused. Holds duplicates of the sockets' descriptors: drop it once applied, or the
/// sockets outlive their channel.
#[derive(Debug)]
pub(crate) struct KernelSender {
    transport: &'static str,
    sockets: Vec<std::os::fd::OwnedFd>,
}

impl KernelSender {
    /// A handle on `streams`, or `None` if a descriptor cannot be duplicated.
    pub(crate) fn of<'a>(
        transport: &'static str,
        streams: impl IntoIterator<Item = &'a TcpStream>,
    ) -> Option<std::sync::Arc<dyn crate::TuneSender>> {
        let sockets = streams
            .into_iter()
            .map(|s| std::os::fd::AsFd::as_fd(s).try_clone_to_owned().ok())
            .collect::<Option<Vec<_>>>()?;
        Some(std::sync::Arc::new(KernelSender { transport, sockets }))
    }
}

impl crate::TuneSender for KernelSender {
    fn apply(&self, hint: &crate::SenderHint) -> Result<()> {
        if let Some(iw) = hint.initial_window {
            return Err(Error::BadOption {
                transport: self.transport,
                option: "iw".into(),
                value: iw.to_string(),
                reason: "kernel TCP's initial window cannot be set by a program".into(),
            });
        }
        if let Some(cc) = &hint.congestion {
            check_congestion_control(cc)?;
        }
        for fd in &self.sockets {
            if let Some(cc) = &hint.congestion {
                set_congestion(fd, cc)?;
            }
            if let Some(bytes) = hint.send_buffer {
                use rustix::net::sockopt;
                sockopt::set_socket_send_buffer_size_force(fd, bytes)
                    .or_else(|_| sockopt::set_socket_send_buffer_size(fd, bytes))
                    .map_err(|e| Error::Io {
                        during: "setting a send buffer",
                        source: e.into(),
                    })?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SenderHint;

    #[test]
    fn an_established_socket_takes_a_congestion_control_and_a_send_buffer() {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (accepted, _) = listener.accept().unwrap();
        let tuning = KernelSender::of("tcp", [&accepted]).unwrap();
        // reno is allowed to every process.
        tuning
            .apply(&SenderHint {
                congestion: Some("reno".into()),
                initial_window: None,
                send_buffer: Some(64 << 10),
                // A rate to start at is a rate-based sender's; kernel TCP ignores it.
                start_rate: Some(12_500_000),
            })
            .unwrap();
        assert_eq!(
            rustix::net::sockopt::tcp_congestion(&accepted).unwrap(),
            "reno"
        );
        // Below net.core.wmem_max, so not capped; Linux reads back twice what was set.
        assert_eq!(
            rustix::net::sockopt::socket_send_buffer_size(&accepted).unwrap(),
            2 * (64 << 10)
        );
        // What the kernel cannot do is refused by name, and changes nothing.
        let err = tuning
            .apply(&SenderHint {
                congestion: Some("cubic".into()),
                initial_window: Some(100_000),
                send_buffer: None,
                start_rate: None,
            })
            .unwrap_err();
        assert!(err.to_string().contains("iw"), "{err}");
        let err = tuning
            .apply(&SenderHint {
                congestion: Some("no-such-cc".into()),
                ..SenderHint::default()
            })
            .unwrap_err();
        assert!(err.to_string().contains("no-such-cc"), "{err}");
        assert_eq!(
            rustix::net::sockopt::tcp_congestion(&accepted).unwrap(),
            "reno"
        );
        drop(client);
    }

    #[test]
    fn a_short_path_connection_gets_short_timers_on_both_ends_when_asked() {
        use std::os::fd::AsFd;
        let probe = TcpListener::bind("127.0.0.1:0").unwrap();
        let Some(default_rto) = tcp_micros(probe.as_fd(), TCP_RTO_MIN_US) else {
            eprintln!("this kernel has no TCP_RTO_MIN_US (before Linux 6.15): nothing to check");
            return;
        };
        for asked in [false, true] {
            let cfg = Config {
                short_path_timers: asked,
                ..Config::default()
            };
            let (listener, addr) = listen("127.0.0.1:0".parse().unwrap(), None).unwrap();
            let client = connect_tcp(addr, &cfg, cfg.connect_deadline(), None, None).unwrap();
            let server = accept(&listener, Duration::from_secs(5), &cfg, None).unwrap();
            let rtt = smoothed_rtt(&client).expect("a connected socket has a round trip");
            assert!(rtt <= SHORT_PATH_RTT, "loopback took {rtt:?}");
            for end in [&client, &server] {
                let rto = tcp_micros(end.as_fd(), TCP_RTO_MIN_US).unwrap();
                let delack = tcp_micros(end.as_fd(), TCP_DELACK_MAX_US).unwrap();
                if asked {
                    // Loopback: the floors, as the kernel rounds them up to its ticks
                    // (12 and 8 ms at 250 Hz; 30 and 20 at 100 Hz).
                    assert!(delack >= SHORT_DELACK_FLOOR, "delack_max {delack:?}");
                    assert!(delack <= Duration::from_millis(20), "delack_max {delack:?}");
                    assert!(
                        rto >= SHORT_RTO_FLOOR.max(delack * 3 / 2),
                        "rto_min {rto:?}"
                    );
                    assert!(rto <= Duration::from_millis(32), "rto_min {rto:?}");
                } else {
                    assert_eq!(rto, default_rto);
                }
            }
        }
    }
}
