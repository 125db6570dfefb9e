// A small C interface to the reference UDT4 library (libudt, Debian package libudt-dev), for
// the `udt` transport of transputation-transport (src/udt.rs holds the Rust side).
//
// Why a shim: UDT's API is C++ (namespace UDT, std::set arguments, exceptions as error
// objects), so Rust cannot call it directly. Every function here is extern "C", takes and
// returns plain integers and byte arrays, never lets a C++ exception cross into Rust, and
// on failure returns -1 with `tp_udt_error` filled from UDT::getlasterror() (UDT keeps the
// last error per thread, so it is read right after the failing call) or from the shim's
// own checks. `kind` tells Rust how to classify the error without hard-coding UDT's
// numeric codes on the Rust side.

#include <udt/ccc.h>
#include <udt/udt.h>

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <set>

namespace {

enum Kind { KIND_OTHER = 0, KIND_TIMEOUT = 1, KIND_CLOSED = 2, KIND_WOULD_BLOCK = 3 };

}  // namespace

extern "C" {

// Why a call failed: UDT's error code, its class for Rust, and a message naming the step.
struct tp_udt_error {
    int code;
    int kind;
    char message[256];
};

// Socket options; 0 leaves the library's default. Timeouts in milliseconds (-1: none).
struct tp_udt_options {
    int mss;
    int sndbuf;
    int rcvbuf;
    int fc;
    int udpbuf;
    int snd_timeout_ms;
    int rcv_timeout_ms;
};

}  // extern "C"

namespace {

int classify(int code) {
    if (code == CUDTException::ETIMEOUT) return KIND_TIMEOUT;
    if (code == CUDTException::ECONNLOST || code == CUDTException::ENOCONN ||
        code == CUDTException::ECONNFAIL || code == CUDTException::EINVSOCK)
        return KIND_CLOSED;
    if (code == CUDTException::EASYNCRCV || code == CUDTException::EASYNCSND) return KIND_WOULD_BLOCK;
    return KIND_OTHER;
}

void set_error(tp_udt_error* err, int code, const char* what, const char* detail) {
    if (err == nullptr) return;
    err->code = code;
    err->kind = classify(code);
    std::snprintf(err->message, sizeof err->message, "%s: %s", what, detail);
}

// Fills `err` from UDT's last error of this thread; returns -1 for the caller to return.
int udt_failed(tp_udt_error* err, const char* what) {
    UDT::ERRORINFO& e = UDT::getlasterror();
    set_error(err, e.getErrorCode(), what, e.getErrorMessage());
    return -1;
}

int unexpected(tp_udt_error* err, const char* what) {
    set_error(err, CUDTException::EUNKNOWN, what, "unexpected C++ exception in the UDT shim");
    return -1;
}

bool make_addr(int family, const uint8_t* ip, uint16_t port, sockaddr_storage* ss, int* len) {
    std::memset(ss, 0, sizeof *ss);
    if (family == 4) {
        sockaddr_in* a = reinterpret_cast<sockaddr_in*>(ss);
        a->sin_family = AF_INET;
        a->sin_port = htons(port);
        std::memcpy(&a->sin_addr, ip, 4);
        *len = sizeof(sockaddr_in);
        return true;
    }
    if (family == 6) {
        sockaddr_in6* a = reinterpret_cast<sockaddr_in6*>(ss);
        a->sin6_family = AF_INET6;
        a->sin6_port = htons(port);
        std::memcpy(&a->sin6_addr, ip, 16);
        *len = sizeof(sockaddr_in6);
        return true;
    }
    return false;
}

int set_int(UDTSOCKET u, UDTOpt opt, int value, tp_udt_error* err, const char* name) {
    if (UDT::setsockopt(u, 0, opt, &value, sizeof value) == UDT::ERROR) return udt_failed(err, name);
    return 0;
}

int set_bool(UDTSOCKET u, UDTOpt opt, bool value, tp_udt_error* err, const char* name) {
    if (UDT::setsockopt(u, 0, opt, &value, sizeof value) == UDT::ERROR) return udt_failed(err, name);
    return 0;
}

int64_t now_ms() {
    timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return int64_t(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

}  // namespace

extern "C" {

// UDT::startup: the library counts calls, so each startup needs one cleanup.
int tp_udt_startup(tp_udt_error* err) {
    try {
        if (UDT::startup() == UDT::ERROR) return udt_failed(err, "UDT::startup");
        return 0;
    } catch (...) {
        return unexpected(err, "UDT::startup");
    }
}

// UDT::cleanup: the last one stops the library's threads.
void tp_udt_cleanup(void) {
    try {
        UDT::cleanup();
    } catch (...) {
    }
}

// A new stream socket for IPv4 (family 4) or IPv6 (family 6).
int tp_udt_socket(int family, tp_udt_error* err) {
    try {
        UDTSOCKET u = UDT::socket(family == 6 ? AF_INET6 : AF_INET, SOCK_STREAM, 0);
        if (u == UDT::INVALID_SOCK) return udt_failed(err, "UDT::socket");
        return u;
    } catch (...) {
        return unexpected(err, "UDT::socket");
    }
}

// Sets the options on a socket that is not yet bound or connected. Order matters to UDT:
// the buffer sizes are converted to packets of the MSS in force, and the receive buffer is
// capped at the flow window, so MSS, then the flow window, then the buffers. UDT's linger is
// turned off: the Rust side waits for the send buffer to drain itself (bounded per wait for
// progress), then closes.
int tp_udt_configure(int u, const tp_udt_options* o, tp_udt_error* err) {
    try {
        if (o->mss > 0 && set_int(u, UDT_MSS, o->mss, err, "setting UDT_MSS") < 0) return -1;
        if (o->fc > 0 && set_int(u, UDT_FC, o->fc, err, "setting UDT_FC") < 0) return -1;
        if (o->udpbuf > 0) {
            if (set_int(u, UDP_SNDBUF, o->udpbuf, err, "setting UDP_SNDBUF") < 0) return -1;
            if (set_int(u, UDP_RCVBUF, o->udpbuf, err, "setting UDP_RCVBUF") < 0) return -1;
        }
        if (o->sndbuf > 0 && set_int(u, UDT_SNDBUF, o->sndbuf, err, "setting UDT_SNDBUF") < 0) return -1;
        if (o->rcvbuf > 0 && set_int(u, UDT_RCVBUF, o->rcvbuf, err, "setting UDT_RCVBUF") < 0) return -1;
        if (set_int(u, UDT_SNDTIMEO, o->snd_timeout_ms, err, "setting UDT_SNDTIMEO") < 0) return -1;
        if (set_int(u, UDT_RCVTIMEO, o->rcv_timeout_ms, err, "setting UDT_RCVTIMEO") < 0) return -1;
        linger off;
        off.l_onoff = 0;
        off.l_linger = 0;
        if (UDT::setsockopt(u, 0, UDT_LINGER, &off, sizeof off) == UDT::ERROR)
            return udt_failed(err, "setting UDT_LINGER");
        return 0;
    } catch (...) {
        return unexpected(err, "configuring a UDT socket");
    }
}

// Reads back the options in force (after connecting: the negotiated MSS and flow window).
int tp_udt_options_in_force(int u, tp_udt_options* o, tp_udt_error* err) {
    try {
        struct {
            UDTOpt opt;
            int* out;
            const char* name;
        } items[] = {
            {UDT_MSS, &o->mss, "reading UDT_MSS"},
            {UDT_SNDBUF, &o->sndbuf, "reading UDT_SNDBUF"},
            {UDT_RCVBUF, &o->rcvbuf, "reading UDT_RCVBUF"},
            {UDT_FC, &o->fc, "reading UDT_FC"},
            {UDP_RCVBUF, &o->udpbuf, "reading UDP_RCVBUF"},
            {UDT_SNDTIMEO, &o->snd_timeout_ms, "reading UDT_SNDTIMEO"},
            {UDT_RCVTIMEO, &o->rcv_timeout_ms, "reading UDT_RCVTIMEO"},
        };
        for (auto& it : items) {
            int len = sizeof(int);
            if (UDT::getsockopt(u, 0, it.opt, it.out, &len) == UDT::ERROR) return udt_failed(err, it.name);
        }
        return 0;
    } catch (...) {
        return unexpected(err, "reading UDT options");
    }
}

// Blocking (1) or non-blocking (0) receiving; a non-blocking listener makes accept return
// at once, and a non-blocking socket makes connect return at once.
int tp_udt_set_blocking_recv(int u, int blocking, tp_udt_error* err) {
    try {
        return set_bool(u, UDT_RCVSYN, blocking != 0, err, "setting UDT_RCVSYN");
    } catch (...) {
        return unexpected(err, "setting UDT_RCVSYN");
    }
}

int tp_udt_bind(int u, int family, const uint8_t* ip, uint16_t port, tp_udt_error* err) {
    try {
        sockaddr_storage ss;
        int len = 0;
        if (!make_addr(family, ip, port, &ss, &len)) {
            set_error(err, CUDTException::EINVPARAM, "UDT::bind", "unknown address family");
            return -1;
        }
        if (UDT::bind(u, reinterpret_cast<sockaddr*>(&ss), len) == UDT::ERROR)
            return udt_failed(err, "UDT::bind");
        return 0;
    } catch (...) {
        return unexpected(err, "UDT::bind");
    }
}

int tp_udt_listen(int u, int backlog, tp_udt_error* err) {
    try {
        if (UDT::listen(u, backlog) == UDT::ERROR) return udt_failed(err, "UDT::listen");
        return 0;
    } catch (...) {
        return unexpected(err, "UDT::listen");
    }
}

// The socket's own address: family 4 or 6, the address bytes (4 or 16) and the port.
int tp_udt_local_addr(int u, int* family, uint8_t* ip16, uint16_t* port, tp_udt_error* err) {
    try {
        sockaddr_storage ss;
        int len = sizeof ss;
        if (UDT::getsockname(u, reinterpret_cast<sockaddr*>(&ss), &len) == UDT::ERROR)
            return udt_failed(err, "UDT::getsockname");
        if (ss.ss_family == AF_INET) {
            const sockaddr_in* a = reinterpret_cast<const sockaddr_in*>(&ss);
            *family = 4;
            std::memcpy(ip16, &a->sin_addr, 4);
            *port = ntohs(a->sin_port);
        } else {
            const sockaddr_in6* a = reinterpret_cast<const sockaddr_in6*>(&ss);
            *family = 6;
            std::memcpy(ip16, &a->sin6_addr, 16);
            *port = ntohs(a->sin6_port);
        }
        return 0;
    } catch (...) {
        return unexpected(err, "UDT::getsockname");
    }
}

// One connection from the listener's queue; on a non-blocking listener with none queued,
// -1 with kind KIND_WOULD_BLOCK.
int tp_udt_accept(int u, tp_udt_error* err) {
    try {
        sockaddr_storage ss;
        int len = sizeof ss;
        UDTSOCKET c = UDT::accept(u, reinterpret_cast<sockaddr*>(&ss), &len);
        if (c == UDT::INVALID_SOCK) return udt_failed(err, "UDT::accept");
        return c;
    } catch (...) {
        return unexpected(err, "UDT::accept");
    }
}

// Connects within `timeout_ms`. UDT's own blocking connect waits a fixed 3 s for an
// answer, so the socket is put in non-blocking mode and the shim waits itself: UDT signals
// success (write event, state CONNECTED) or its own give-up (error event) through its epoll.
// The socket is registered with the epoll before connecting so that no event is missed.
int tp_udt_connect(int u, int family, const uint8_t* ip, uint16_t port, int timeout_ms,
                   tp_udt_error* err) {
    try {
        sockaddr_storage ss;
        int len = 0;
        if (!make_addr(family, ip, port, &ss, &len)) {
            set_error(err, CUDTException::EINVPARAM, "UDT::connect", "unknown address family");
            return -1;
        }
        if (set_bool(u, UDT_RCVSYN, false, err, "setting UDT_RCVSYN") < 0) return -1;
        int eid = UDT::epoll_create();
        if (eid < 0) return udt_failed(err, "UDT::epoll_create");
        int events = UDT_EPOLL_OUT | UDT_EPOLL_ERR;
        int rc = -1;
        if (UDT::epoll_add_usock(eid, u, &events) == UDT::ERROR) {
            udt_failed(err, "UDT::epoll_add_usock");
        } else if (UDT::connect(u, reinterpret_cast<sockaddr*>(&ss), len) == UDT::ERROR) {
            udt_failed(err, "UDT::connect");
        } else {
            const int64_t deadline = now_ms() + timeout_ms;
            for (;;) {
                UDTSTATUS st = UDT::getsockstate(u);
                if (st == CONNECTED) {
                    rc = 0;
                    break;
                }
                if (st != CONNECTING) {
                    set_error(err, CUDTException::ECONNREJ, "UDT::connect",
                              "the connection was rejected or broken during set-up");
                    break;
                }
                int64_t left = deadline - now_ms();
                if (left <= 0) {
                    char detail[96];
                    std::snprintf(detail, sizeof detail, "no UDT server answered within %d ms",
                                  timeout_ms);
                    set_error(err, CUDTException::ENOSERVER, "UDT::connect", detail);
                    break;
                }
                std::set<UDTSOCKET> writable;
                int n = UDT::epoll_wait(eid, nullptr, &writable, left < 10 ? left : 10);
                if (n > 0 && !writable.empty() && UDT::getsockstate(u) != CONNECTED) {
                    set_error(err, CUDTException::ENOSERVER, "UDT::connect",
                              "no UDT server answered (UDT gave up after its own 3 s)");
                    break;
                }
            }
        }
        UDT::epoll_release(eid);
        if (rc == 0 && set_bool(u, UDT_RCVSYN, true, err, "setting UDT_RCVSYN") < 0) return -1;
        return rc;
    } catch (...) {
        return unexpected(err, "UDT::connect");
    }
}

// Sends some of `len` bytes (blocking up to UDT_SNDTIMEO for buffer space); the count sent.
int tp_udt_send(int u, const uint8_t* buf, int len, tp_udt_error* err) {
    try {
        int n = UDT::send(u, reinterpret_cast<const char*>(buf), len, 0);
        if (n == UDT::ERROR) return udt_failed(err, "UDT::send");
        return n;
    } catch (...) {
        return unexpected(err, "UDT::send");
    }
}

// Receives up to `len` bytes (blocking up to UDT_RCVTIMEO for data); the count received.
int tp_udt_recv(int u, uint8_t* buf, int len, tp_udt_error* err) {
    try {
        int n = UDT::recv(u, reinterpret_cast<char*>(buf), len, 0);
        if (n == UDT::ERROR) return udt_failed(err, "UDT::recv");
        return n;
    } catch (...) {
        return unexpected(err, "UDT::recv");
    }
}

// Packets in the send buffer that the peer has not acknowledged; -1 with kind KIND_CLOSED
// once the connection is broken or closed.
int tp_udt_unacknowledged(int u, tp_udt_error* err) {
    try {
        UDTSTATUS st = UDT::getsockstate(u);
        if (st != CONNECTED) {
            set_error(err, CUDTException::ECONNLOST, "UDT::getsockstate", "the connection is no longer up");
            return -1;
        }
        int32_t packets = 0;
        int len = sizeof packets;
        if (UDT::getsockopt(u, 0, UDT_SNDDATA, &packets, &len) == UDT::ERROR)
            return udt_failed(err, "reading UDT_SNDDATA");
        return packets;
    } catch (...) {
        return unexpected(err, "reading UDT_SNDDATA");
    }
}

// Makes the connection's receiver send a full ACK after every `packets` data packets
// (0: UDT's default, none by count).
//
// Why: UDT4 makes received data readable to `UDT::recv` only when the receiver sends a full
// ACK, which its 10 ms ACK timer triggers. That timer is checked when a packet arrives,
// and otherwise only by the receive queue's sweep of idle sockets, every 100 ms
// (CRcvQueue::worker). So the last packets of a burst, with nothing arriving after them,
// stay unreadable for up to 100 ms: a request-response protocol waits that long at every
// turn (2PC over `udt` on loopback: 224-429 ms for AES-128, against 9-11 ms over tcp). An
// ACK by count is sent at once, from the arrival of the packet that completes the count.
//
// The interval is CCC's own knob (CCC::setACKInterval, for congestion control classes),
// set here on the controller UDT made for this connection (UDT_CC gives it) after the
// connection is up, since the controller's init() runs at connection time. The setter is
// protected, so it is named through a class derived from CCC. The int it writes (one
// aligned store; UDT offers no locked setter) is read by UDT's receive thread, which may
// already be handling the connection's first packets: those may still be acknowledged by
// the timer, so at worst a first message that arrived whole before this call waits once.
struct AckIntervalSetter : CCC {
    static void set(CCC* cc, int packets) { (cc->*(&AckIntervalSetter::setACKInterval))(packets); }
};

int tp_udt_set_ack_interval(int u, int packets, tp_udt_error* err) {
    try {
        CCC* cc = nullptr;
        int len = sizeof cc;
        if (UDT::getsockopt(u, 0, UDT_CC, &cc, &len) == UDT::ERROR)
            return udt_failed(err, "reading UDT_CC");
        if (cc == nullptr || len != sizeof cc) {
            set_error(err, CUDTException::EINVPARAM, "reading UDT_CC", "no congestion controller on this socket");
            return -1;
        }
        AckIntervalSetter::set(cc, packets);
        return 0;
    } catch (...) {
        return unexpected(err, "setting the ACK interval");
    }
}

// Closes the socket (with linger off: whatever is unacknowledged is dropped).
int tp_udt_close(int u, tp_udt_error* err) {
    try {
        if (UDT::close(u) == UDT::ERROR) return udt_failed(err, "UDT::close");
        return 0;
    } catch (...) {
        return unexpected(err, "UDT::close");
    }
}

}  // extern "C"
