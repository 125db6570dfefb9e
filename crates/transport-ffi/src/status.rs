//! Status codes, the thread-local last-error message, and the guard that every exported
//! function runs its body in, so that no error and no panic crosses the C boundary as
//! anything but a status code and a message.

use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use transputation_transport::Error;

/// What a call did: `TP_OK`, or which kind of error happened. `tp_last_error()` has the
/// details.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum tp_status {
    /// Success.
    TP_OK = 0,
    /// A required pointer was NULL, a string was not UTF-8, an address or a configuration
    /// value was invalid. Nothing happened; a channel stays usable.
    TP_ERR_INVALID_ARGUMENT = 1,
    /// The transport string does not parse: an unknown name, an unknown option or a bad
    /// option value.
    TP_ERR_BAD_TRANSPORT = 2,
    /// The TCP congestion control asked for is not available in this kernel.
    TP_ERR_CONGESTION_CONTROL = 3,
    /// Connecting to the server failed on every attempt.
    TP_ERR_CONNECT = 4,
    /// The peer sent or accepted nothing for the I/O timeout (or no client came).
    TP_ERR_TIMEOUT = 5,
    /// The peer closed (or reset) the connection before the call was done. From a receive
    /// that got no byte at all, the peer's clean end of stream: the channel stays usable
    /// for sending and closing.
    TP_ERR_CLOSED = 6,
    /// The peer announced a message longer than this end's maximum; nothing was allocated.
    TP_ERR_MESSAGE_TOO_LARGE = 7,
    /// A message to send was longer than the maximum; nothing was sent, the channel stays
    /// usable.
    TP_ERR_SEND_TOO_LARGE = 8,
    /// The peer broke the transport's wire protocol (a bad handshake, header or checksum).
    TP_ERR_MALFORMED = 9,
    /// A datagram transport saw loss, duplication or reordering, which it does not repair.
    TP_ERR_UNRELIABLE = 10,
    /// The two ends were configured differently (for example mtcp stream counts).
    TP_ERR_MISMATCH = 11,
    /// The channel failed earlier and cannot be used again: free it.
    TP_ERR_POISONED = 12,
    /// Any other error from the operating system.
    TP_ERR_IO = 13,
    /// A bug in the library (a Rust panic, caught at the boundary). The handle involved
    /// must not be used again except to free it.
    TP_ERR_PANIC = 14,
    /// An error of a kind newer than this interface; the message says what happened.
    TP_ERR_OTHER = 15,
}

impl tp_status {
    /// Every status, in code order.
    pub(crate) const ALL: [tp_status; 16] = [
        tp_status::TP_OK,
        tp_status::TP_ERR_INVALID_ARGUMENT,
        tp_status::TP_ERR_BAD_TRANSPORT,
        tp_status::TP_ERR_CONGESTION_CONTROL,
        tp_status::TP_ERR_CONNECT,
        tp_status::TP_ERR_TIMEOUT,
        tp_status::TP_ERR_CLOSED,
        tp_status::TP_ERR_MESSAGE_TOO_LARGE,
        tp_status::TP_ERR_SEND_TOO_LARGE,
        tp_status::TP_ERR_MALFORMED,
        tp_status::TP_ERR_UNRELIABLE,
        tp_status::TP_ERR_MISMATCH,
        tp_status::TP_ERR_POISONED,
        tp_status::TP_ERR_IO,
        tp_status::TP_ERR_PANIC,
        tp_status::TP_ERR_OTHER,
    ];

    /// The status of a transport error.
    pub(crate) fn of(e: &Error) -> tp_status {
        match e {
            Error::UnknownTransport { .. }
            | Error::UnknownOption { .. }
            | Error::BadOption { .. } => tp_status::TP_ERR_BAD_TRANSPORT,
            Error::CongestionControl { .. } => tp_status::TP_ERR_CONGESTION_CONTROL,
            Error::Connect { .. } => tp_status::TP_ERR_CONNECT,
            Error::Timeout { .. } => tp_status::TP_ERR_TIMEOUT,
            Error::Closed { .. } => tp_status::TP_ERR_CLOSED,
            Error::MessageTooLarge { .. } => tp_status::TP_ERR_MESSAGE_TOO_LARGE,
            Error::SendTooLarge { .. } => tp_status::TP_ERR_SEND_TOO_LARGE,
            Error::Malformed { .. } => tp_status::TP_ERR_MALFORMED,
            Error::Unreliable { .. } => tp_status::TP_ERR_UNRELIABLE,
            Error::Mismatch { .. } => tp_status::TP_ERR_MISMATCH,
            Error::Poisoned => tp_status::TP_ERR_POISONED,
            Error::Io { .. } => tp_status::TP_ERR_IO,
            _ => tp_status::TP_ERR_OTHER,
        }
    }

    /// The status's name as a NUL-terminated string.
    fn name(self) -> &'static std::ffi::CStr {
        match self {
            tp_status::TP_OK => c"TP_OK",
            tp_status::TP_ERR_INVALID_ARGUMENT => c"TP_ERR_INVALID_ARGUMENT",
            tp_status::TP_ERR_BAD_TRANSPORT => c"TP_ERR_BAD_TRANSPORT",
            tp_status::TP_ERR_CONGESTION_CONTROL => c"TP_ERR_CONGESTION_CONTROL",
            tp_status::TP_ERR_CONNECT => c"TP_ERR_CONNECT",
            tp_status::TP_ERR_TIMEOUT => c"TP_ERR_TIMEOUT",
            tp_status::TP_ERR_CLOSED => c"TP_ERR_CLOSED",
            tp_status::TP_ERR_MESSAGE_TOO_LARGE => c"TP_ERR_MESSAGE_TOO_LARGE",
            tp_status::TP_ERR_SEND_TOO_LARGE => c"TP_ERR_SEND_TOO_LARGE",
            tp_status::TP_ERR_MALFORMED => c"TP_ERR_MALFORMED",
            tp_status::TP_ERR_UNRELIABLE => c"TP_ERR_UNRELIABLE",
            tp_status::TP_ERR_MISMATCH => c"TP_ERR_MISMATCH",
            tp_status::TP_ERR_POISONED => c"TP_ERR_POISONED",
            tp_status::TP_ERR_IO => c"TP_ERR_IO",
            tp_status::TP_ERR_PANIC => c"TP_ERR_PANIC",
            tp_status::TP_ERR_OTHER => c"TP_ERR_OTHER",
        }
    }
}

/// The name of a status code, e.g. `"TP_ERR_CLOSED"`, or `"TP_UNKNOWN_STATUS"` for a value
/// that is not one.
///
/// The string is static: never free it.
#[no_mangle]
pub extern "C" fn tp_status_name(status: c_int) -> *const c_char {
    // A C enum may hold any int, so the code comes in as one and is looked up, never
    // transmuted.
    tp_status::ALL
        .iter()
        .find(|s| **s as c_int == status)
        .map_or(c"TP_UNKNOWN_STATUS", |s| s.name())
        .as_ptr()
}

thread_local! {
    /// The status and message of this thread's last failed call.
    static LAST_ERROR: RefCell<(tp_status, CString)> =
        RefCell::new((tp_status::TP_OK, CString::default()));
}

/// The message of the last call on this thread that failed, for people (the status code is
/// for programs); `""` if none has failed.
///
/// The string belongs to the library: never free it. It stays valid until the next failing
/// call on the same thread; copy it to keep it longer. Successful calls leave it unchanged.
#[no_mangle]
pub extern "C" fn tp_last_error() -> *const c_char {
    // The pointer is into the thread-local CString, which is only replaced by a later
    // failure on this thread, as documented. During thread teardown there is no message.
    LAST_ERROR
        .try_with(|m| m.borrow().1.as_ptr())
        .unwrap_or(c"".as_ptr())
}

/// The status of the last call on this thread that failed (`TP_OK` if none has), for the
/// functions that return a handle or a number rather than a status: after `tp_connect`
/// returned NULL, this tells `TP_ERR_CONNECT` from `TP_ERR_BAD_TRANSPORT`. Successful calls
/// leave it unchanged.
#[no_mangle]
pub extern "C" fn tp_last_status() -> tp_status {
    LAST_ERROR
        .try_with(|m| m.borrow().0)
        .unwrap_or(tp_status::TP_OK)
}

/// Records a failure as this thread's last error.
fn set_last_error(status: tp_status, message: &str) {
    // Interior NULs would cut the C string short; show them instead.
    let c = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    let _ = LAST_ERROR.try_with(|m| *m.borrow_mut() = (status, c));
}

/// A failed call: the code to return and the message for `tp_last_error`.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) status: tp_status,
    pub(crate) message: String,
}

impl Failure {
    /// A caller's mistake: `TP_ERR_INVALID_ARGUMENT` with `message`.
    pub(crate) fn invalid(message: impl Into<String>) -> Failure {
        Failure {
            status: tp_status::TP_ERR_INVALID_ARGUMENT,
            message: message.into(),
        }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        // The message is the error and its causes, e.g. "could not connect to
        // 127.0.0.1:9 after 3 attempts: Connection refused (os error 111)".
        let mut message = e.to_string();
        let mut source = std::error::Error::source(&e);
        while let Some(s) = source {
            message.push_str(": ");
            message.push_str(&s.to_string());
            source = s.source();
        }
        Failure {
            status: tp_status::of(&e),
            message,
        }
    }
}

/// What an exported function returns when it fails: NULL for a handle, 0 for a number,
/// the status itself for a status.
pub(crate) trait OnFailure {
    fn on_failure(status: tp_status) -> Self;
}

impl<T> OnFailure for *mut T {
    fn on_failure(_: tp_status) -> Self {
        std::ptr::null_mut()
    }
}

impl OnFailure for u16 {
    fn on_failure(_: tp_status) -> Self {
        0
    }
}

impl OnFailure for usize {
    fn on_failure(_: tp_status) -> Self {
        0
    }
}

impl OnFailure for () {
    fn on_failure(_: tp_status) -> Self {}
}

impl OnFailure for tp_status {
    fn on_failure(status: tp_status) -> Self {
        status
    }
}

/// Runs the body of the exported function `what`: its failure or panic becomes the
/// function's failure value, with the message recorded for `tp_last_error`.
pub(crate) fn guard<T: OnFailure>(what: &str, body: impl FnOnce() -> Result<T, Failure>) -> T {
    // AssertUnwindSafe: after a panic the handle involved is poisoned (channels) or
    // documented as unusable except for freeing, so no broken invariant is observed.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(v)) => v,
        Ok(Err(f)) => {
            set_last_error(f.status, &format!("{what}: {}", f.message));
            T::on_failure(f.status)
        }
        Err(panic) => {
            let msg = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            set_last_error(
                tp_status::TP_ERR_PANIC,
                &format!("{what}: internal error (a bug): {msg}"),
            );
            T::on_failure(tp_status::TP_ERR_PANIC)
        }
    }
}

/// [`guard`] for functions that return a status.
pub(crate) fn guard_status(what: &str, body: impl FnOnce() -> Result<(), Failure>) -> tp_status {
    guard(what, || body().map(|()| tp_status::TP_OK))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    fn last_error() -> String {
        // SAFETY: tp_last_error returns a valid NUL-terminated string that lives until the
        // next failing call on this thread; it is copied at once.
        unsafe { CStr::from_ptr(tp_last_error()) }
            .to_str()
            .unwrap()
            .to_string()
    }

    #[test]
    fn status_names_match_codes() {
        for (i, s) in tp_status::ALL.iter().enumerate() {
            assert_eq!(*s as usize, i);
            // SAFETY: tp_status_name returns a static NUL-terminated string.
            let name = unsafe { CStr::from_ptr(tp_status_name(i as c_int)) };
            assert_eq!(name.to_str().unwrap(), format!("{s:?}"));
        }
        // SAFETY: as above.
        let unknown = unsafe { CStr::from_ptr(tp_status_name(-7)) };
        assert_eq!(unknown.to_str().unwrap(), "TP_UNKNOWN_STATUS");
    }

    #[test]
    fn guard_records_failures_and_panics() {
        let s = guard_status("tp_test", || Err(Failure::invalid("bad thing")));
        assert_eq!(s, tp_status::TP_ERR_INVALID_ARGUMENT);
        assert_eq!(last_error(), "tp_test: bad thing");
        assert_eq!(tp_last_status(), tp_status::TP_ERR_INVALID_ARGUMENT);
        // Success leaves the message alone.
        assert_eq!(guard_status("tp_test", || Ok(())), tp_status::TP_OK);
        assert_eq!(last_error(), "tp_test: bad thing");
        let s = guard_status("tp_test", || panic!("boom"));
        assert_eq!(s, tp_status::TP_ERR_PANIC);
        assert_eq!(last_error(), "tp_test: internal error (a bug): boom");
        assert_eq!(tp_last_status(), tp_status::TP_ERR_PANIC);
        let s = guard_status("tp_test", || Err(Failure::invalid("nul\0inside")));
        assert_eq!(s, tp_status::TP_ERR_INVALID_ARGUMENT);
        assert_eq!(last_error(), "tp_test: nul\\0inside");
    }

    #[test]
    fn errors_keep_their_causes() {
        let e = Error::Io {
            during: "testing",
            source: std::io::Error::other("the cause"),
        };
        let f = Failure::from(e);
        assert_eq!(f.status, tp_status::TP_ERR_IO);
        assert_eq!(f.message, "I/O error while testing: the cause");
    }
}
