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
//! packet per 20 packets); or `auto`, parity where it saves time (see [`Outlook`]):
//!
//! - A packet lost while more than a round trip of the stream is still to be sent costs
//!   no time: its repair (one round trip later) arrives before the stream's end would.
//!   Such packets get no parity; parity there would only take rate from the stream.
//! - In the stream's tail (what is left to send fits in one round trip at the pace) a
//!   loss that parity does not rebuild costs up to a round trip at the end. A group of `g`
//!   packets costs `1/g` of the tail's time and fails to rebuild when two of its `g + 1`
//!   packets are lost. For a tail of `n` packets (one round trip's worth, or the whole
//!   burst if it is smaller: the bytes not yet acknowledged) at a loss `p`, groups of `g`
//!   cost about `n · gap / g + rtt · (1 − e^(−n (g + 1) p² / 2))` and no parity
//!   `rtt · (1 − e^(−n p))`; the sender takes the cheapest. At 0.1 % loss on a 300 ms,
//!   500 Mbit/s path that is a group of about a dozen packets; at 1 % a tail of
//!   thousands of packets loses two of some group whatever `g`, a round of repairs
//!   follows anyway, and the tail goes without parity; for a small burst (an oblivious
//!   transfer's messages, down to a single packet, whose parity is a copy) parity is
//!   cheap insurance against a probe timeout.
//! - The loss `p` is what the receiver reports, with a prior of 0.1 % weighing as much as
//!   1,000 packets: a path whose loss is not yet known is taken as slightly lossy, and a
//!   clean one's estimate falls as its packets arrive.
//!
//! Loss in bursts defeats parity; the repairs by negative acknowledgement still follow.

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

/// What the sender knows when it starts a parity group (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Outlook {
    /// The path's loss as estimated: the share of packets lost.
    pub loss: f64,
    /// Packets still to send, this one included.
    pub remaining: f64,
    /// Packets written and not yet acknowledged, this one included.
    pub outstanding: f64,
    /// Packets the pace sends in one round trip.
    pub per_round_trip: f64,
    /// Seconds between packets at the pace.
    pub gap: f64,
    /// The round trip, seconds.
    pub rtt: f64,
}

/// The group sizes `auto` chooses from.
const AUTO_SIZES: [u16; 11] = [2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64];

impl Outlook {
    /// The expected time lost at the end with groups of `g` packets (`None`: no parity).
    fn cost(&self, g: Option<u16>) -> f64 {
        let (n, p) = (self.outstanding.min(self.per_round_trip), self.loss);
        match g {
            None => self.rtt * (1.0 - (-n * p).exp()),
            Some(g) => {
                let g = f64::from(g);
                n * self.gap / g + self.rtt * (1.0 - (-n * (g + 1.0) * p * p / 2.0).exp())
            }
        }
    }
}

impl Fec {
    /// The members of the next parity group, or `None` for no parity.
    pub fn group_size(self, o: &Outlook) -> Option<u16> {
        match self {
            Fec::Off => None,
            Fec::Percent(p) => Some((100 / u16::from(p.clamp(1, 50))).max(2)),
            Fec::Auto => {
                if o.remaining > o.per_round_trip || o.remaining < 1.0 {
                    return None; // not the tail: a loss is repaired in time
                }
                let mut best = (None, o.cost(None));
                for g in AUTO_SIZES {
                    let c = o.cost(Some(g));
                    if c < best.1 {
                        best = (Some(g), c);
                    }
                }
                best.0
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
        // The tail of a 300 ms, 500 Mbit/s path: 12,700 packets a round trip.
        let tail = |loss: f64, remaining: f64| Outlook {
            loss,
            remaining,
            outstanding: remaining + 12_700.0,
            per_round_trip: 12_700.0,
            gap: 0.3 / 12_700.0,
            rtt: 0.3,
        };
        assert_eq!(Fec::Off.group_size(&tail(0.01, 100.0)), None);
        assert_eq!(Fec::Percent(5).group_size(&tail(0.0, 100.0)), Some(20));
        // More than a round trip left: no parity, whatever the loss.
        assert_eq!(Fec::Auto.group_size(&tail(0.01, 20_000.0)), None);
        // The tail at 0.1 %: a dozen or so per group (the best size hardly depends on
        // what is left while a loss in it stays unlikely).
        let g = Fec::Auto.group_size(&tail(0.001, 12_700.0)).unwrap();
        assert!((8..=16).contains(&g), "{g}");
        // The whole tail at 1 % loses two of some group whatever its size: a round of
        // repairs follows anyway, and parity would only slow the tail.
        assert_eq!(Fec::Auto.group_size(&tail(0.01, 12_700.0)), None);
        // A clean path's estimate (no loss in 20,000 packets, the prior's one in 21,000):
        // large groups, a cost of a percent or two of the tail.
        let clean = Fec::Auto
            .group_size(&tail(1.0 / 21_000.0, 12_700.0))
            .unwrap();
        assert!(clean >= 48, "{clean}");
        // Late in a tail at 1 %: the repairs of the tail's earlier losses come anyway.
        assert_eq!(Fec::Auto.group_size(&tail(0.01, 500.0)), None);
        // A small burst (an oblivious transfer's few packets, or one) at 1 %: parity pays.
        let burst = |n: f64| Outlook {
            outstanding: n,
            ..tail(0.01, n)
        };
        assert!(Fec::Auto.group_size(&burst(20.0)).is_some());
        assert!(Fec::Auto.group_size(&burst(1.0)).is_some());
        assert!("7".parse::<Fec>().is_ok() && "0".parse::<Fec>().is_err());
        assert!("51".parse::<Fec>().is_err() && "sometimes".parse::<Fec>().is_err());
    }
}
