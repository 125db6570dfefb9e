//! The frame header of the coarse-grained stream (the [`coarse`](super) module's
//! documentation has the format) and the batch a garbling thread sends.

/// Bytes of a frame header.
pub const HEADER: usize = 8;

/// Table bytes a garbling thread garbles at a time, and the most a frame holds.
pub const CHUNK: usize = 1 << 18;

/// Pieces of a stage whose tables may have begun and not ended at once: the most threads a
/// [`CoarseGarbler`](super::CoarseGarbler) garbles on. A stream that opens more (a hostile
/// garbler's, to make the evaluator plan every piece at once) is refused.
pub const MAX_OPEN: usize = 256;

/// The header of a frame of `len` bytes of piece `piece`.
pub(crate) fn frame_header(piece: u32, len: usize) -> [u8; HEADER] {
    let len = u32::try_from(len).expect("a frame holds at most CHUNK bytes");
    let mut h = [0u8; HEADER];
    h[..4].copy_from_slice(&piece.to_le_bytes());
    h[4..].copy_from_slice(&len.to_le_bytes());
    h
}

/// The piece and length a frame header states (unchecked).
pub fn read_frame_header(header: &[u8; HEADER]) -> (u32, u32) {
    let piece = u32::from_le_bytes(header[..4].try_into().expect("4 bytes"));
    let len = u32::from_le_bytes(header[4..].try_into().expect("4 bytes"));
    (piece, len)
}

/// The frames of `stream`, a whole number of them as a [`CoarseGarbler`](super::CoarseGarbler)
/// writes them: each its header and tables.
///
/// # Panics
/// If `stream` does not end at a frame's end.
pub fn frames(stream: &[u8]) -> impl Iterator<Item = &[u8]> {
    let mut rest = stream;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let header = rest[..HEADER].try_into().expect("a whole frame header");
        let len = read_frame_header(header).1 as usize;
        let (frame, after) = rest.split_at(HEADER + len);
        rest = after;
        Some(frame)
    })
}
