//! The UDT4 library through the C++ shim (udt_shim/shim.cpp): the shim's declarations, one
//! error record per call, the library's start and cleanup, and a socket closed on drop.

// FFI to the shim needs unsafe calls; each block says why it is sound.
#![allow(unsafe_code)]

use std::ffi::{c_int, CStr};
use std::fmt;
use std::io;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::time::Duration;


use crate::{Error, Result};


/// The declarations of udt_shim/shim.cpp, called through the shim loaded at first use.
///
/// # Why loaded, not linked
/// The shim is built as a shared object that links libudt (build.rs) and is embedded in
/// this crate. Linked into the program instead, libudt would be loaded with it, and UDT4's
/// static initialiser measures the CPU's clock by sleeping 100 ms: every process, whatever
/// it does, would start 100 ms late (a `run` of aes128 reported 119 ms of wall time with
/// libudt linked, 16 ms without). Loaded at the first UDT call (from a memory file, with
/// `dlopen`), only processes that use `udt` pay it, once.
pub(crate) mod ffi {
    use std::ffi::{c_char, c_int, c_void, CStr};
    use std::io::Write;
    use std::os::fd::FromRawFd;
    use std::sync::OnceLock;

    /// `tp_udt_error`.
    #[repr(C)]
    pub(crate) struct Error {
        pub(crate) code: c_int,
        pub(crate) kind: c_int,
        pub(crate) message: [c_char; 256],
    }

    pub(crate) const KIND_TIMEOUT: c_int = 1;
    pub(crate) const KIND_CLOSED: c_int = 2;
    pub(crate) const KIND_WOULD_BLOCK: c_int = 3;

    /// `tp_udt_options`.
    #[repr(C)]
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    pub(crate) struct Options {
        pub(crate) mss: c_int,
        pub(crate) sndbuf: c_int,
        pub(crate) rcvbuf: c_int,
        pub(crate) fc: c_int,
        pub(crate) udpbuf: c_int,
        pub(crate) snd_timeout_ms: c_int,
        pub(crate) rcv_timeout_ms: c_int,
    }

    /// The shim as build.rs linked it.
    static SHIM: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/libtransputation_udt_shim.so"));

    /// Declares the shim's functions that take an error record last and return `c_int`:
    /// a table of their addresses, filled once, and a wrapper of each that fills the error
    /// record instead when the shim could not be loaded.
    macro_rules! shim {
        ($($(#[$attr:meta])* fn $name:ident($($arg:ident: $ty:ty),*);)*) => {
            #[allow(dead_code)]
            struct Api {
                $($name: unsafe extern "C" fn($($ty,)* *mut Error) -> c_int,)*
                tp_udt_cleanup: unsafe extern "C" fn(),
            }

            impl Api {
                /// Resolves every function in the shim opened as `handle`.
                ///
                /// # Safety
                /// `handle` is a live handle of the shim, whose functions have these
                /// signatures.
                unsafe fn resolve(handle: *mut c_void) -> Result<Api, String> {
                    Ok(Api {
                        // SAFETY: the symbol is the shim's function of this signature.
                        $($name: unsafe {
                            std::mem::transmute::<
                                *mut c_void,
                                unsafe extern "C" fn($($ty,)* *mut Error) -> c_int,
                            >(symbol(handle, concat!(stringify!($name), "\0"))?)
                        },)*
                        // SAFETY: as above.
                        tp_udt_cleanup: unsafe {
                            std::mem::transmute::<*mut c_void, unsafe extern "C" fn()>(
                                symbol(handle, "tp_udt_cleanup\0")?,
                            )
                        },
                    })
                }
            }

            $(
                $(#[$attr])*
                /// The shim's function of this name (see udt_shim/shim.cpp).
                ///
                /// # Safety
                /// As the shim's function: pointers valid for what it reads and writes.
                pub(crate) unsafe fn $name($($arg: $ty,)* err: *mut Error) -> c_int {
                    match api() {
                        // SAFETY: the caller's guarantees are the function's.
                        Ok(api) => unsafe { (api.$name)($($arg,)* err) },
                        // SAFETY: `err` is a valid error record (the caller's guarantee).
                        Err(why) => unsafe { not_loaded(err, why) },
                    }
                }
            )*
        };
    }

    shim! {
        fn tp_udt_startup();
        fn tp_udt_socket(family: c_int);
        fn tp_udt_configure(u: c_int, o: *const Options);
        #[cfg(test)]
        fn tp_udt_options_in_force(u: c_int, o: *mut Options);
        fn tp_udt_set_blocking_recv(u: c_int, blocking: c_int);
        fn tp_udt_bind(u: c_int, family: c_int, ip: *const u8, port: u16);
        fn tp_udt_listen(u: c_int, backlog: c_int);
        fn tp_udt_local_addr(u: c_int, family: *mut c_int, ip16: *mut u8, port: *mut u16);
        fn tp_udt_accept(u: c_int);
        fn tp_udt_connect(u: c_int, family: c_int, ip: *const u8, port: u16, timeout_ms: c_int);
        fn tp_udt_set_ack_interval(u: c_int, packets: c_int);
        fn tp_udt_send(u: c_int, buf: *const u8, len: c_int);
        fn tp_udt_recv(u: c_int, buf: *mut u8, len: c_int);
        fn tp_udt_unacknowledged(u: c_int);
        fn tp_udt_close(u: c_int);
    }

    /// `UDT::cleanup` through the shim; nothing if it was never loaded.
    ///
    /// # Safety
    /// Pairs with a successful [`tp_udt_startup`].
    pub(crate) unsafe fn tp_udt_cleanup() {
        if let Ok(api) = api() {
            // SAFETY: the caller's guarantee.
            unsafe { (api.tp_udt_cleanup)() }
        }
    }

    /// The shim's functions, loaded at the first call; or why they could not be.
    fn api() -> Result<&'static Api, &'static str> {
        static API: OnceLock<Result<Api, String>> = OnceLock::new();
        API.get_or_init(load).as_ref().map_err(String::as_str)
    }

    /// Writes the embedded shim into a memory file and opens it; the handle is never
    /// closed (the functions stay in use until the process ends).
    fn load() -> Result<Api, String> {
        // SAFETY: a NUL-terminated name and a flag; the result is checked.
        let fd = unsafe { libc::memfd_create(c"transputation-udt-shim".as_ptr(), libc::MFD_CLOEXEC) };
        if fd < 0 {
            return Err(format!(
                "cannot load the UDT shim: memfd_create: {}",
                std::io::Error::last_os_error()
            ));
        }
        // SAFETY: `fd` was just opened and is owned by this file alone.
        let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
        file.write_all(SHIM)
            .map_err(|e| format!("cannot load the UDT shim: writing it: {e}"))?;
        let path = std::ffi::CString::new(format!("/proc/self/fd/{fd}")).expect("no NUL");
        // SAFETY: a NUL-terminated path; the result is checked.
        let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        if handle.is_null() {
            return Err(format!(
                "cannot load the UDT library ({}): if libudt is missing, install it \
                 (Debian: libudt0 or libudt-dev, or ./scripts/setup.sh)",
                dl_error()
            ));
        }
        // SAFETY: `handle` is the shim just opened, whose functions have these signatures.
        unsafe { Api::resolve(handle) }
    }

    /// The address of `name` (NUL-terminated) in `handle`.
    fn symbol(handle: *mut c_void, name: &str) -> Result<*mut c_void, String> {
        // SAFETY: `name` is NUL-terminated (the macro appends it); `handle` is live.
        let p = unsafe { libc::dlsym(handle, name.as_ptr().cast()) };
        if p.is_null() {
            return Err(format!("the UDT shim lacks {}: {}", name.trim_end_matches('\0'), dl_error()));
        }
        Ok(p)
    }

    /// `dlerror`'s message.
    fn dl_error() -> String {
        // SAFETY: dlerror returns null or a NUL-terminated string valid until the next call.
        let p = unsafe { libc::dlerror() };
        if p.is_null() {
            return "unknown error".into();
        }
        // SAFETY: as above.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// Fills `err` with why the shim is not loaded; returns -1, as a failed call does.
    ///
    /// # Safety
    /// `err` points to a writable error record.
    unsafe fn not_loaded(err: *mut Error, why: &str) -> c_int {
        // SAFETY: the caller's guarantee.
        let err = unsafe { &mut *err };
        err.code = -1;
        err.kind = 0;
        let n = why.len().min(err.message.len() - 1);
        for (m, &b) in err.message.iter_mut().zip(&why.as_bytes()[..n]) {
            *m = b as c_char;
        }
        err.message[n] = 0;
        -1
    }
}

/// A failed UDT call: the library's error code, its class, and its message.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: c_int,
    pub(crate) kind: c_int,
    pub(crate) message: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} (UDT error {})", self.message, self.code)
    }
}

impl std::error::Error for Failure {}

impl Failure {
    /// On a connected socket: a timeout, the peer gone, or anything else.
    pub(crate) fn on_connection(self, during: &'static str, timeout: Duration) -> Error {
        match self.kind {
            ffi::KIND_TIMEOUT => Error::Timeout {
                during,
                after: timeout,
            },
            ffi::KIND_CLOSED => Error::Closed { during },
            _ => self.io(during),
        }
    }

    /// Any failure, reported with UDT's message.
    pub(crate) fn io(self, during: &'static str) -> Error {
        Error::Io {
            during,
            source: io::Error::other(self),
        }
    }
}

/// The outcome of configuring a connection, where a connection the peer already closed is
/// no error: UDT refuses options on it, and it has nothing left to wait for.
pub(crate) fn unless_closed<T>(r: std::result::Result<T, Failure>, during: &'static str) -> Result<()> {
    match r {
        Err(f) if f.kind != ffi::KIND_CLOSED => Err(f.io(during)),
        _ => Ok(()),
    }
}

/// Runs one shim call with an error record, and reads the record if it failed.
pub(crate) fn call(f: impl FnOnce(*mut ffi::Error) -> c_int) -> std::result::Result<c_int, Failure> {
    let mut err = ffi::Error {
        code: 0,
        kind: 0,
        message: [0; 256],
    };
    let rc = f(&mut err);
    if rc >= 0 {
        return Ok(rc);
    }
    // The shim always NUL-terminates (snprintf); the last byte is forced to NUL anyway so
    // that CStr never reads past the array.
    err.message[255] = 0;
    // SAFETY: `message` is a NUL-terminated array of c_char that lives across this call.
    let message = unsafe { CStr::from_ptr(err.message.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    Err(Failure {
        code: err.code,
        kind: err.kind,
        message,
    })
}

/// One `UDT::startup`, undone by `UDT::cleanup` on drop.
#[derive(Debug)]
pub(crate) struct Library(());

impl Library {
    pub(crate) fn acquire() -> Result<Library> {
        // SAFETY: tp_udt_startup takes a valid pointer to an error record and nothing else.
        call(|e| unsafe { ffi::tp_udt_startup(e) })
            .map_err(|f| f.io("starting the UDT library"))?;
        Ok(Library(()))
    }
}

impl Drop for Library {
    fn drop(&mut self) {
        // SAFETY: pairs with the successful startup of `acquire`; UDT counts the calls, and
        // every socket using the library holds its own `Library`, dropped after the socket
        // was closed.
        unsafe { ffi::tp_udt_cleanup() }
    }
}

/// A UDT socket, closed on drop, and the library start that keeps it usable.
#[derive(Debug)]
pub(crate) struct Socket {
    pub(crate) id: c_int,
    pub(crate) _library: Library,
}

impl Socket {
    pub(crate) fn new(family: c_int) -> Result<Socket> {
        let library = Library::acquire()?;
        // SAFETY: plain integer argument and a valid error record pointer.
        let id = call(|e| unsafe { ffi::tp_udt_socket(family, e) })
            .map_err(|f| f.io("creating a UDT socket"))?;
        Ok(Socket {
            id,
            _library: library,
        })
    }

    pub(crate) fn configure(&self, o: &ffi::Options) -> Result<()> {
        // SAFETY: `o` points to a live, initialized repr(C) record the shim only reads.
        call(|e| unsafe { ffi::tp_udt_configure(self.id, o, e) })
            .map_err(|f| f.io("configuring a UDT socket"))?;
        Ok(())
    }

    pub(crate) fn set_blocking_recv(&self, blocking: bool) -> std::result::Result<(), Failure> {
        // SAFETY: integer arguments and a valid error record pointer.
        call(|e| unsafe { ffi::tp_udt_set_blocking_recv(self.id, c_int::from(blocking), e) })
            .map(drop)
    }

    /// The options in force (after connecting: the negotiated MSS).
    #[cfg(test)]
    pub(crate) fn options_in_force(&self) -> Result<ffi::Options> {
        let mut o = ffi::Options::default();
        // SAFETY: `o` is a live repr(C) record the shim writes integers into.
        call(|e| unsafe { ffi::tp_udt_options_in_force(self.id, &mut o, e) })
            .map_err(|f| f.io("reading UDT socket options"))?;
        Ok(o)
    }

    pub(crate) fn local_addr(&self) -> Result<SocketAddr> {
        let (mut family, mut ip, mut port) = (0, [0u8; 16], 0u16);
        // SAFETY: the out-pointers point to live locals; `ip` has the 16 bytes the shim may
        // write.
        call(|e| unsafe {
            ffi::tp_udt_local_addr(self.id, &mut family, ip.as_mut_ptr(), &mut port, e)
        })
        .map_err(|f| f.io("reading the UDT socket's address"))?;
        let ip = if family == 4 {
            IpAddr::V4(Ipv4Addr::new(ip[0], ip[1], ip[2], ip[3]))
        } else {
            IpAddr::V6(Ipv6Addr::from(ip))
        };
        Ok(SocketAddr::new(ip, port))
    }

    /// Bytes-in-flight check: unacknowledged packets, or a failure once the connection is
    /// down.
    pub(crate) fn unacknowledged(&self) -> std::result::Result<c_int, Failure> {
        // SAFETY: integer argument and a valid error record pointer.
        call(|e| unsafe { ffi::tp_udt_unacknowledged(self.id, e) })
    }
}

impl Drop for Socket {
    fn drop(&mut self) {
        // SAFETY: closes a socket this value owns, once. An error (the library already
        // removed a broken socket) leaves nothing to do.
        let _ = call(|e| unsafe { ffi::tp_udt_close(self.id, e) });
    }
}

/// An address as the shim takes it: family 4 or 6 and 16 bytes (IPv4 in the first 4).
pub(crate) fn raw_addr(addr: SocketAddr) -> (c_int, [u8; 16]) {
    match addr.ip() {
        IpAddr::V4(ip) => {
            let mut b = [0u8; 16];
            b[..4].copy_from_slice(&ip.octets());
            (4, b)
        }
        IpAddr::V6(ip) => (6, ip.octets()),
    }
}

