//! The one place with `unsafe`: attaching a file descriptor to a new TUN device with the
//! `TUNSETIFF` ioctl (Linux `include/uapi/linux/if_tun.h`), which no safe wrapper in our
//! dependencies offers. Reading and writing the device afterwards is plain `read`/`write`.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::OwnedFd;

use rustix::fs::{open, Mode, OFlags};
use rustix::ioctl::{ioctl, Setter};

/// `_IOW('T', 202, int)`: the kernel reads a `struct ifreq` despite the `int` in the number.
const TUNSETIFF: rustix::ioctl::Opcode = 0x4004_54ca;
/// A layer-3 device: each read or write is one IP packet.
const IFF_TUN: u16 = 0x0001;
/// No 4-byte packet-information header in front of each packet.
const IFF_NO_PI: u16 = 0x1000;

/// `struct ifreq` as `TUNSETIFF` reads it: the name (16 bytes, NUL-terminated), the flags
/// (a `short`), and the rest of the 40-byte union unused.
#[repr(C)]
struct IfReq {
    name: [u8; 16],
    flags: u16,
    _pad: [u8; 22],
}

/// Creates the TUN device `name` (at most 15 bytes) in the calling thread's network
/// namespace, non-blocking and without packet-information headers. The device exists as long
/// as the returned descriptor is open.
pub fn create(name: &str) -> io::Result<OwnedFd> {
    if name.is_empty() || name.len() > 15 || name.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("interface name {name:?} must have 1 to 15 bytes"),
        ));
    }
    let fd = open(
        "/dev/net/tun",
        OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    let mut req = IfReq {
        name: [0; 16],
        flags: IFF_TUN | IFF_NO_PI,
        _pad: [0; 22],
    };
    req.name[..name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: TUNSETIFF is a valid opcode on a /dev/net/tun descriptor and reads a
    // `struct ifreq` (40 bytes on Linux, `IfReq` has that C layout and size), which lives on
    // our stack for the duration of the call; the kernel does not keep the pointer.
    unsafe { ioctl(&fd, Setter::<TUNSETIFF, IfReq>::new(req)) }?;
    Ok(fd)
}

#[cfg(test)]
mod tests {
    #[test]
    fn ifreq_has_the_kernel_size() {
        assert_eq!(std::mem::size_of::<super::IfReq>(), 40);
    }
}
