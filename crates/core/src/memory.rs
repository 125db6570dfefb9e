//! Asking the kernel to back large buffers with huge pages.
//!
//! A plan of a few million gates is tens of megabytes written once, front to back, right
//! after it is allocated. On 4 KiB pages each page is a fault and a zeroing: a garbler's
//! set-up of the MinCut-size circuit took 133–159 ms on them and 99–119 ms on huge pages
//! (docs/BENCHMARKS.md). Where
//! transparent huge pages are enabled only on request (`madvise`, the usual default), this
//! requests them for one buffer; where they are always on or off, or on other systems, it
//! does nothing.

/// Buffers smaller than this are left alone: a huge page is 2 MiB on x86-64 and Armv8 with
/// 4 KiB pages, and a buffer must span one to gain.
const WORTH_BYTES: usize = 4 << 20;

/// Asks for huge pages behind the capacity of `buffer` (call it right after reserving, before
/// writing). Memory use does not change beyond rounding to huge pages, nor does anything the
/// buffer holds.
pub fn prefer_huge_pages<T>(buffer: &mut Vec<T>) {
    let bytes = buffer.capacity() * std::mem::size_of::<T>();
    if bytes >= WORTH_BYTES {
        advise(buffer.as_mut_ptr().cast(), bytes);
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn advise(start: *mut u8, bytes: usize) {
    // SAFETY: sysconf reads a constant of the system; it touches no memory of ours.
    let page = match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        p if p > 0 => p as usize,
        _ => return,
    };
    let first = (start as usize).next_multiple_of(page);
    let end = (start as usize + bytes) / page * page;
    if end <= first {
        return;
    }
    // SAFETY: the range lies within one allocation this process owns (the vector's
    // capacity, rounded inwards to whole pages). MADV_HUGEPAGE changes only how the kernel
    // backs those pages, never their contents or who may access them; its failure (a
    // kernel without THP) leaves them as they were, so the result is not needed.
    unsafe {
        libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_start: *mut u8, _bytes: usize) {}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `VmFlags` of the mapping of this process that holds `addr`, from
    /// `/proc/self/smaps`.
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn vm_flags(addr: usize) -> Option<String> {
        let smaps = std::fs::read_to_string("/proc/self/smaps").ok()?;
        let mut inside = false;
        for line in smaps.lines() {
            let range = line
                .split_whitespace()
                .next()
                .and_then(|r| r.split_once('-'));
            if let Some((lo, hi)) = range {
                if let (Ok(lo), Ok(hi)) =
                    (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16))
                {
                    inside = (lo..hi).contains(&addr);
                    continue;
                }
            }
            if inside {
                if let Some(flags) = line.strip_prefix("VmFlags:") {
                    return Some(flags.trim().to_string());
                }
            }
        }
        None
    }

    // x86-64 only: the other builds are tested under qemu-user (scripts/test.sh), which
    // answers madvise without passing it to the kernel, so no mapping there gets the flag.
    #[test]
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    fn the_kernel_is_asked_for_huge_pages() {
        let thp = std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled");
        if !thp.is_ok_and(|t| !t.contains("[never]")) {
            return; // no transparent huge pages on this kernel: nothing to ask for
        }
        let mut v: Vec<u8> = Vec::with_capacity(64 << 20);
        prefer_huge_pages(&mut v);
        let middle = v.as_ptr() as usize + (32 << 20);
        let flags = vm_flags(middle).expect("the buffer's mapping in /proc/self/smaps");
        assert!(
            flags.split_whitespace().any(|f| f == "hg"),
            "no `hg` flag: {flags}"
        );
    }

    #[test]
    fn a_large_buffer_keeps_what_it_holds() {
        let mut v: Vec<u64> = Vec::with_capacity(1 << 20);
        prefer_huge_pages(&mut v);
        v.extend(0..1 << 20);
        assert!(v.iter().enumerate().all(|(i, &x)| x == i as u64));
        let mut small = vec![1u8; 10];
        prefer_huge_pages(&mut small);
        assert_eq!(small, vec![1u8; 10]);
    }
}
