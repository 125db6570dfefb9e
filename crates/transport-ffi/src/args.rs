//! Turning the caller's raw pointers into Rust references and strings, with a clear
//! `TP_ERR_INVALID_ARGUMENT` for each way they can be wrong that can be checked (NULL,
//! not UTF-8, too long). What cannot be checked (a dangling pointer, a length longer than
//! the buffer) is the caller's side of each function's documented contract.

use std::ffi::{c_char, CStr};
use std::net::{SocketAddr, ToSocketAddrs};

use crate::status::Failure;

/// A NUL-terminated UTF-8 string argument named `what`.
///
/// # Safety
/// `p` is NULL or points to a NUL-terminated string that stays valid and unchanged for
/// `'a`.
pub(crate) unsafe fn str_arg<'a>(p: *const c_char, what: &str) -> Result<&'a str, Failure> {
    if p.is_null() {
        return Err(Failure::invalid(format!("{what} is NULL")));
    }
    // SAFETY: non-NULL, and the caller guarantees a NUL-terminated string valid for 'a.
    let c = unsafe { CStr::from_ptr(p) };
    c.to_str().map_err(|e| {
        Failure::invalid(format!(
            "{what} is not valid UTF-8 (bad byte at offset {})",
            e.valid_up_to()
        ))
    })
}

/// A byte buffer argument `(p, len)` to read from; `p` may be NULL only when `len` is 0.
///
/// # Safety
/// When `len > 0`, `p` is NULL or points to `len` readable bytes that stay valid and
/// unchanged for `'a`.
pub(crate) unsafe fn bytes_arg<'a>(
    p: *const u8,
    len: usize,
    what: &str,
) -> Result<&'a [u8], Failure> {
    if len == 0 {
        return Ok(&[]);
    }
    check_buffer(p.is_null(), len, what)?;
    // SAFETY: non-NULL, at most isize::MAX bytes, and the caller guarantees `len`
    // readable bytes valid for 'a.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A byte buffer argument `(p, len)` to write into; `p` may be NULL only when `len` is 0.
///
/// # Safety
/// When `len > 0`, `p` is NULL or points to `len` writable bytes that nothing else reads
/// or writes during `'a`.
pub(crate) unsafe fn bytes_mut_arg<'a>(
    p: *mut u8,
    len: usize,
    what: &str,
) -> Result<&'a mut [u8], Failure> {
    if len == 0 {
        return Ok(&mut []);
    }
    check_buffer(p.is_null(), len, what)?;
    // SAFETY: non-NULL, at most isize::MAX bytes, and the caller guarantees `len` writable
    // bytes that are exclusively ours for 'a.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

fn check_buffer(null: bool, len: usize, what: &str) -> Result<(), Failure> {
    if null {
        return Err(Failure::invalid(format!(
            "{what} is NULL but its length is {len}"
        )));
    }
    if isize::try_from(len).is_err() {
        return Err(Failure::invalid(format!(
            "{what} length {len} is larger than any buffer"
        )));
    }
    Ok(())
}

/// A handle argument named `what`.
///
/// # Safety
/// `p` is NULL or a live handle of type `T` returned by this library and not yet freed,
/// used by no other thread during `'a`.
pub(crate) unsafe fn handle_mut<'a, T>(p: *mut T, what: &str) -> Result<&'a mut T, Failure> {
    // SAFETY: the caller guarantees a live, exclusively used handle (or NULL, refused here).
    unsafe { p.as_mut() }.ok_or_else(|| Failure::invalid(format!("{what} is NULL")))
}

/// A handle argument named `what`, read only.
///
/// # Safety
/// `p` is NULL or a live handle of type `T` returned by this library and not yet freed,
/// written by no other thread during `'a`.
pub(crate) unsafe fn handle_ref<'a, T>(p: *const T, what: &str) -> Result<&'a T, Failure> {
    // SAFETY: the caller guarantees a live handle not written concurrently (or NULL).
    unsafe { p.as_ref() }.ok_or_else(|| Failure::invalid(format!("{what} is NULL")))
}

/// `HOST:PORT`: a literal socket address (`127.0.0.1:7000`, `[::1]:7000`), else the first
/// address a host name resolves to.
pub(crate) fn parse_addr(s: &str) -> Result<SocketAddr, Failure> {
    if let Ok(a) = s.parse() {
        return Ok(a);
    }
    let bad = |why: String| Failure::invalid(format!("bad address '{s}': {why}"));
    s.to_socket_addrs()
        .map_err(|e| bad(format!("expected HOST:PORT ({e})")))?
        .next()
        .ok_or_else(|| bad("the host name resolves to no address".into()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tp_status;

    #[test]
    fn strings_are_checked() {
        // SAFETY: NULL is allowed by the contract.
        let e = unsafe { str_arg(std::ptr::null(), "TRANSPORT") }.unwrap_err();
        assert_eq!(e.status, tp_status::TP_ERR_INVALID_ARGUMENT);
        assert_eq!(e.message, "TRANSPORT is NULL");
        let bad = c"tc\xffp";
        // SAFETY: a NUL-terminated literal, valid for the whole test.
        let e = unsafe { str_arg(bad.as_ptr(), "TRANSPORT") }.unwrap_err();
        assert_eq!(
            e.message,
            "TRANSPORT is not valid UTF-8 (bad byte at offset 2)"
        );
        // SAFETY: as above.
        let good = unsafe { str_arg(c"tcp".as_ptr(), "TRANSPORT") };
        assert_eq!(good.unwrap(), "tcp");
    }

    #[test]
    fn buffers_are_checked() {
        // SAFETY: NULL with length 0 is allowed, NULL with a length is refused unread.
        unsafe {
            assert_eq!(bytes_arg(std::ptr::null(), 0, "DATA").unwrap(), b"");
            let e = bytes_arg(std::ptr::null(), 3, "DATA").unwrap_err();
            assert_eq!(e.message, "DATA is NULL but its length is 3");
            let e = bytes_mut_arg(std::ptr::null_mut(), 3, "BUF").unwrap_err();
            assert_eq!(e.message, "BUF is NULL but its length is 3");
        }
        let mut x = [1u8, 2];
        // SAFETY: a length larger than isize::MAX is refused before the pointer is used.
        let e = unsafe { bytes_mut_arg(x.as_mut_ptr(), usize::MAX, "BUF") }.unwrap_err();
        assert!(
            e.message.contains("larger than any buffer"),
            "{}",
            e.message
        );
    }

    #[test]
    fn addresses_parse_or_say_why_not() {
        assert_eq!(
            parse_addr("127.0.0.1:7000").unwrap(),
            "127.0.0.1:7000".parse().unwrap()
        );
        assert_eq!(parse_addr("[::1]:9").unwrap(), "[::1]:9".parse().unwrap());
        assert!(parse_addr("localhost:80").unwrap().ip().is_loopback());
        let e = parse_addr("127.0.0.1").unwrap_err();
        assert_eq!(e.status, tp_status::TP_ERR_INVALID_ARGUMENT);
        assert!(
            e.message
                .starts_with("bad address '127.0.0.1': expected HOST:PORT"),
            "{}",
            e.message
        );
    }
}
