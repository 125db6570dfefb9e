//! Forward error correction for `blast`: one parity packet after each group of DATA
//! packets, the XOR of the group's packets, lets the receiver rebuild one lost packet of
//! the group without waiting a round trip for its repair.
//!
//! Each member's encoding is its stream offset (u64), its end-of-stream flag (u8), its
//! payload's length (u16) and the payload; the parity packet (FEC) carries the group's
//! first packet number, its size and the XOR of its members' encodings, each padded with
//! zeros to the longest. A receiver that holds all members of a group but one XORs the
//! parity with them and has the missing member, offset and length included.
//!
//! The group's size follows the option `fec`: `off`; a `PERCENT` of parity (5: one parity
//! packet per 20 packets); or `auto`, sized to the loss the receiver reports: none below
//! 0.05 %, else one parity packet per `0.1 / p` packets (4 to 64), so that a group loses
//! one packet about one time in ten and two (which the parity cannot rebuild) rarely.
//! Loss in bursts defeats it; the repairs by negative acknowledgement still follow.

use std::collections::BTreeMap;

/// What a sender does about forward error correction.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fec {
    /// No parity.
    Off,
    /// Parity sized to the loss the receiver reports.
    Auto,
    /// This many parity packets per hundred data packets (1 to 50).
    Percent(u8),
}

impl Fec {
    /// The members of a parity group at the path's loss `loss` (the share of packets the
    /// receiver reports lost, if known), or `None` for no parity.
    pub fn group_size(self, loss: Option<f64>) -> Option<u16> {
        match self {
            Fec::Off => None,
            Fec::Percent(p) => Some((100 / u16::from(p.clamp(1, 50))).max(2)),
            Fec::Auto => {
                let p = loss.filter(|p| *p >= 0.0005)?;
                Some((0.1 / p).round().clamp(4.0, 64.0) as u16)
            }
        }
    }
}

impl std::str::FromStr for Fec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "off" => Ok(Fec::Off),
            "auto" => Ok(Fec::Auto),
            n => match n.parse::<u8>() {
                Ok(p) if (1..=50).contains(&p) => Ok(Fec::Percent(p)),
                _ => Err(format!(
                    "fec is auto, off or a percentage of parity from 1 to 50, not {s:?}"
                )),
            },
        }
    }
}

/// Bytes of a member's encoding before its payload.
const MEMBER_HEADER: usize = 11;

/// How much longer a PARITY datagram is than the longest DATA datagram it covers: its
/// first number and count (10 bytes) and the encoding's header (11) against DATA's offset
/// (8).
pub const PARITY_EXTRA: usize = 10 + MEMBER_HEADER - 8;

/// Appends the encoding of a member (see the module docs) to `out`.
pub(crate) fn encode_member(offset: u64, fin: bool, payload: &[u8], out: &mut Vec<u8>) {
    out.extend_from_slice(&offset.to_be_bytes());
    out.push(u8::from(fin));
    out.extend_from_slice(&(payload.len() as u16).to_be_bytes());
    out.extend_from_slice(payload);
}

/// XORs `x` into `acc`, growing `acc` with zeros to `x`'s length.
pub(crate) fn xor_into(acc: &mut Vec<u8>, x: &[u8]) {
    if acc.len() < x.len() {
        acc.resize(x.len(), 0);
    }
    for (a, b) in acc.iter_mut().zip(x) {
        *a ^= b;
    }
}

/// A member rebuilt from its encoding: offset, end-of-stream flag, payload; `None` if the
/// encoding does not add up (a parity packet that lies).
pub(crate) fn decode_member(e: &[u8]) -> Option<(u64, bool, &[u8])> {
    if e.len() < MEMBER_HEADER {
        return None;
    }
    let offset = u64::from_be_bytes(e[..8].try_into().ok()?);
    let fin = match e[8] {
        0 => false,
        1 => true,
        _ => return None,
    };
    let len = usize::from(u16::from_be_bytes([e[9], e[10]]));
    let payload = e.get(MEMBER_HEADER..MEMBER_HEADER + len)?;
    // The padding beyond the payload must be zero, as every member's was.
    if e[MEMBER_HEADER + len..].iter().any(|b| *b != 0) {
        return None;
    }
    offset.checked_add(len as u64)?;
    Some((offset, fin, payload))
}

/// The sender's group being built.
#[derive(Debug)]
pub(crate) struct ParityBuilder {
    pub(crate) first: u64,
    pub(crate) members: u16,
    pub(crate) size: u16,
    pub(crate) acc: Vec<u8>,
    scratch: Vec<u8>,
}

impl ParityBuilder {
    pub(crate) fn new(first: u64, size: u16) -> Self {
        ParityBuilder {
            first,
            members: 0,
            size,
            acc: Vec::new(),
            scratch: Vec::new(),
        }
    }

    /// Adds a member; whether the group is full.
    pub(crate) fn add(&mut self, offset: u64, fin: bool, payload: &[u8]) -> bool {
        self.scratch.clear();
        encode_member(offset, fin, payload, &mut self.scratch);
        xor_into(&mut self.acc, &self.scratch);
        self.members += 1;
        self.members >= self.size
    }
}

/// Packets numbers below the highest one for which a member's encoding is kept.
const KEPT: u64 = 4096;

/// The receiver's recent members, to rebuild a lost one from a parity packet.
#[derive(Debug, Default)]
pub(crate) struct ParityCache {
    members: BTreeMap<u64, Vec<u8>>,
}

impl ParityCache {
    pub(crate) fn keep(&mut self, number: u64, offset: u64, fin: bool, payload: &[u8]) {
        let mut e = Vec::with_capacity(MEMBER_HEADER + payload.len());
        encode_member(offset, fin, payload, &mut e);
        self.members.insert(number, e);
        if let Some(&last) = self.members.keys().next_back() {
            while let Some(entry) = self.members.first_entry() {
                if entry.key().saturating_add(KEPT) >= last {
                    break;
                }
                entry.remove();
            }
        }
    }

    /// The member of the group `first .. first + count` that `block` (its parity) rebuilds:
    /// its packet number and encoding, if exactly one member is missing and `arrived` says
    /// it did not arrive.
    pub(crate) fn rebuild(
        &self,
        first: u64,
        count: u16,
        block: &[u8],
        arrived: impl Fn(u64) -> bool,
    ) -> Option<(u64, Vec<u8>)> {
        let end = first.checked_add(u64::from(count))?;
        let mut missing = None;
        let mut acc = block.to_vec();
        for n in first..end {
            match self.members.get(&n) {
                Some(e) => xor_into(&mut acc, e),
                None if arrived(n) || missing.is_some() => return None,
                None => missing = Some(n),
            }
        }
        missing.map(|n| (n, acc))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_lost_member_of_a_group_is_rebuilt_whole() {
        let members: Vec<(u64, bool, Vec<u8>)> = (0..5u64)
            .map(|i| {
                (
                    i * 1000,
                    i == 4,
                    vec![i as u8 + 1; 1000 - 300 * (i as usize % 2)],
                )
            })
            .collect();
        let mut b = ParityBuilder::new(10, 5);
        for (o, f, p) in &members {
            b.add(*o, *f, p);
        }
        for lost in 0..5 {
            let mut cache = ParityCache::default();
            for (i, (o, f, p)) in members.iter().enumerate() {
                if i != lost {
                    cache.keep(10 + i as u64, *o, *f, p);
                }
            }
            let (n, e) = cache.rebuild(10, 5, &b.acc, |_| false).unwrap();
            assert_eq!(n, 10 + lost as u64);
            let (o, f, p) = decode_member(&e).unwrap();
            assert_eq!(
                (o, f, p),
                (members[lost].0, members[lost].1, &members[lost].2[..])
            );
        }
        // Two missing: nothing to rebuild.
        let mut cache = ParityCache::default();
        cache.keep(10, 0, false, &members[0].2);
        cache.keep(11, 1000, false, &members[1].2);
        cache.keep(12, 2000, false, &members[2].2);
        assert!(cache.rebuild(10, 5, &b.acc, |_| false).is_none());
    }

    #[test]
    fn group_sizes_follow_the_option_and_the_loss() {
        assert_eq!(Fec::Off.group_size(Some(0.01)), None);
        assert_eq!(Fec::Percent(5).group_size(None), Some(20));
        assert_eq!(Fec::Auto.group_size(None), None);
        assert_eq!(Fec::Auto.group_size(Some(0.0001)), None);
        assert_eq!(Fec::Auto.group_size(Some(0.01)), Some(10));
        assert_eq!(Fec::Auto.group_size(Some(0.001)), Some(64));
        assert!("7".parse::<Fec>().is_ok() && "0".parse::<Fec>().is_err());
        assert!("51".parse::<Fec>().is_err() && "sometimes".parse::<Fec>().is_err());
    }
}
