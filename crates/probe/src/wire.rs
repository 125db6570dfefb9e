//! The probe's packets: the 24-byte header every packet starts with, and the packet kinds.

pub(crate) const MAGIC: &[u8; 4] = b"TPPR";
pub(crate) const PING: u8 = 1;
pub(crate) const PONG: u8 = 2;
pub(crate) const TRAIN: u8 = 3;
pub(crate) const ASK: u8 = 4;
pub(crate) const REPORT: u8 = 5;
pub(crate) const HEADER: usize = 24;

/// A packet of `len` bytes (at least the header): kind, session, sequence and count, then
/// zeros.
pub(crate) fn packet(kind: u8, session: u64, seq: u32, count: u32, len: usize) -> Vec<u8> {
    let mut p = vec![0u8; len.max(HEADER)];
    p[..4].copy_from_slice(MAGIC);
    p[4] = kind;
    p[8..16].copy_from_slice(&session.to_be_bytes());
    p[16..20].copy_from_slice(&seq.to_be_bytes());
    p[20..24].copy_from_slice(&count.to_be_bytes());
    p
}

/// Kind, session, sequence, count of a probe packet; `None` for anything else.
pub(crate) fn parse(p: &[u8]) -> Option<(u8, u64, u32, u32)> {
    if p.len() < HEADER || &p[..4] != MAGIC {
        return None;
    }
    Some((
        p[4],
        u64::from_be_bytes(p[8..16].try_into().ok()?),
        u32::from_be_bytes(p[16..20].try_into().ok()?),
        u32::from_be_bytes(p[20..24].try_into().ok()?),
    ))
}
