//! The frame header of the coarse-grained stream (the [`coarse`](super) module's
//! documentation has the format) and the batch a garbling thread sends.

/// Bytes of a frame header.
pub(crate) const HEADER: usize = 8;

/// Table bytes a garbling thread garbles at a time, and the most a frame holds.
pub(crate) const CHUNK: usize = 1 << 18;

/// The header of a frame of `len` bytes of piece `piece`.
pub(crate) fn frame_header(piece: u32, len: usize) -> [u8; HEADER] {
    let len = u32::try_from(len).expect("a frame holds at most CHUNK bytes");
    let mut h = [0u8; HEADER];
    h[..4].copy_from_slice(&piece.to_le_bytes());
    h[4..].copy_from_slice(&len.to_le_bytes());
    h
}
