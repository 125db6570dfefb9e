//! Session buffers made before the session starts, their pages already mapped, so that the
//! protocol does not pay a page fault on the first write to each.

/// An empty buffer of `capacity` bytes whose pages are already mapped.
pub(crate) fn touched(capacity: usize) -> Vec<u8> {
    touched_vec(capacity, TOUCH_BYTE)
}

/// `len` bytes of no meaning whose pages are already mapped, for a buffer that is only
/// ever written over in place and read up to where it was written.
pub(crate) fn filled(len: usize) -> Vec<u8> {
    filled_vec(len, TOUCH_BYTE)
}

/// What [`touched`] and [`filled`] write: not zero (see [`filled_vec`]).
const TOUCH_BYTE: u8 = 0xa5;

/// An empty vector with room for `capacity` values whose pages are already mapped: a
/// session's buffers are made before it starts, since every fresh page costs a fault on
/// first write (about a microsecond here, a thousand per 4 MiB).
pub(crate) fn touched_vec<T: Copy>(capacity: usize, fill: T) -> Vec<T> {
    let mut v = filled_vec(capacity, fill);
    v.clear();
    v
}

/// `len` copies of `fill`, every page written now.
pub(crate) fn filled_vec<T: Copy>(len: usize, fill: T) -> Vec<T> {
    // Not `vec![0; n]`: for zero integers that is a zeroed allocation, whose pages the
    // kernel maps only on first write (in the session: page faults were a fifth of the
    // evaluator's samples while it received the garbler's labels, 2–3 ms of its CPU on the
    // MinCut size). A non-zero fill also keeps the kernel from taking back zero-filled pages
    // of a huge page as unused. The opaque value makes the writes real.
    let mut v = Vec::with_capacity(len);
    v.resize(len, std::hint::black_box(fill));
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Minor page faults of the calling thread so far.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn thread_faults() -> i64 {
        // SAFETY: `usage` is a valid, writable rusage for the call's duration.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_THREAD reads the calling thread's counters.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
        assert_eq!(rc, 0, "getrusage");
        usage.ru_minflt
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn touched_buffers_do_not_fault_when_filled() {
        const BYTES: usize = 32 << 20; // 8,192 pages
        let mut bytes = touched(BYTES);
        let mut words = touched_vec(BYTES / 16, u128::MAX);
        let before = thread_faults();
        bytes.resize(BYTES, 1);
        words.resize(BYTES / 16, 1);
        let faults = thread_faults() - before;
        // A lazily mapped buffer faults once per page written (8,192 per buffer here).
        assert!(
            faults < 64,
            "{faults} page faults filling pre-touched buffers"
        );
    }
}
