//! The probe's packets: the 24-byte header every packet starts with, the packet kinds, and
//! the server's report on a train with its optional extension (a span timed by prompt
//! reads, and a map of the packets that arrived).

pub(crate) const MAGIC: &[u8; 4] = b"TPPR";
pub(crate) const PING: u8 = 1;
pub(crate) const PONG: u8 = 2;
pub(crate) const TRAIN: u8 = 3;
pub(crate) const ASK: u8 = 4;
pub(crate) const REPORT: u8 = 5;
pub(crate) const HEADER: usize = 24;
/// The largest UDP payload of a train packet.
pub const MAX_PACKET_BYTES: usize = 65507;

/// A report's fixed part: the header, then packets received (u32), the span (u64 ns) and
/// the bytes that arrived in it (u64).
pub(crate) const REPORT_BYTES: usize = HEADER + 20;
/// A report's flags byte (the header's byte 5), bit 0: the server timed the train's
/// arrivals by the kernel's receive times.
const KERNEL_TIMED: u8 = 1;
/// The tag that opens the extension after a report's fixed part.
const EXT_TAG: &[u8; 4] = b"EXT1";
/// Where the extension's arrival map bits start: after the tag, the prompt-timed span
/// (u64 ns) and its bytes (u64), and the number of packets the map covers (u32).
const MAP_BITS_AT: usize = REPORT_BYTES + 24;
/// The train packets (sequence numbers `0..MAP_MAX_PACKETS`) an arrival map covers at
/// most: 1 KiB of bits, so a report with its map stays one unfragmented datagram on any
/// path that carries 1280-byte packets.
pub const MAP_MAX_PACKETS: u32 = 8192;

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

/// Which of a train's first packets arrived: bit `i` is sequence number `i`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ArrivalMap {
    packets: u32,
    bits: Vec<u8>,
}

impl ArrivalMap {
    /// A map of `packets` packets (at most [`MAP_MAX_PACKETS`]), none arrived.
    pub(crate) fn new(packets: u32) -> Self {
        let packets = packets.min(MAP_MAX_PACKETS);
        ArrivalMap {
            packets,
            bits: vec![0; map_bytes(packets)],
        }
    }

    /// Packets the map covers.
    pub(crate) fn packets(&self) -> u32 {
        self.packets
    }

    /// Marks `seq` arrived (ignored past the map's end).
    pub(crate) fn set(&mut self, seq: u32) {
        if seq < self.packets {
            self.bits[(seq / 8) as usize] |= 0x80 >> (seq % 8);
        }
    }

    /// Whether `seq` arrived.
    pub(crate) fn arrived(&self, seq: u32) -> bool {
        seq < self.packets && self.bits[(seq / 8) as usize] & (0x80 >> (seq % 8)) != 0
    }
}

fn map_bytes(packets: u32) -> usize {
    packets.div_ceil(8) as usize
}

/// What a server reports on a train.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Report {
    /// Train packets received (duplicates included).
    pub(crate) received: u32,
    /// Span of the arrivals from a quarter into the train to the last, as read, ns.
    pub(crate) span_ns: u64,
    /// IP bytes that arrived in the span after its first packet.
    pub(crate) bytes: u64,
    /// Whether the server timed every arrival by the kernel's receive time (the flags
    /// byte's bit 0; a server that predates it sends 0): its spans are then exact to the
    /// kernel's timestamping, however late the server read the packets.
    pub(crate) kernel_timed: bool,
    /// The extension, if the server has it and the request had room for it.
    pub(crate) ext: Option<Extension>,
}

/// A report's extension: the span timed by prompt reads only, and which packets arrived.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Extension {
    /// Span between the first prompt read from a quarter into the train on and the last
    /// prompt read, ns (0: fewer than two such reads).
    pub(crate) timed_span_ns: u64,
    /// IP bytes of the packets after the span's first up to its last.
    pub(crate) timed_bytes: u64,
    /// Which packets arrived.
    pub(crate) map: ArrivalMap,
}

/// The length a request for a report on a train of `train` packets is padded to, so that
/// the report with its extension is no larger than the request (a server must not answer
/// a small datagram, whose source may be forged, with a large one).
pub(crate) fn ask_bytes(train: u32) -> usize {
    MAP_BITS_AT + map_bytes(train.min(MAP_MAX_PACKETS))
}

/// The report packet answering a request of `room` bytes: the fixed part always (as every
/// version of the server sends it), the extension only if it fits in `room`.
pub(crate) fn encode_report(session: u64, seq: u32, report: &Report, room: usize) -> Vec<u8> {
    let ext = report
        .ext
        .as_ref()
        .filter(|e| MAP_BITS_AT + e.map.bits.len() <= room);
    let len = ext.map_or(REPORT_BYTES, |e| MAP_BITS_AT + e.map.bits.len());
    let mut p = packet(REPORT, session, seq, 0, len);
    p[5] = u8::from(report.kernel_timed) * KERNEL_TIMED;
    p[24..28].copy_from_slice(&report.received.to_be_bytes());
    p[28..36].copy_from_slice(&report.span_ns.to_be_bytes());
    p[36..44].copy_from_slice(&report.bytes.to_be_bytes());
    if let Some(e) = ext {
        p[44..48].copy_from_slice(EXT_TAG);
        p[48..56].copy_from_slice(&e.timed_span_ns.to_be_bytes());
        p[56..64].copy_from_slice(&e.timed_bytes.to_be_bytes());
        p[64..68].copy_from_slice(&e.map.packets.to_be_bytes());
        p[MAP_BITS_AT..].copy_from_slice(&e.map.bits);
    }
    p
}

/// The report in a REPORT packet; `None` if it is too short. An extension that is
/// malformed (a foreign tag, a map of more packets than allowed, bits missing) is left
/// out: the report's fixed part still stands.
pub(crate) fn decode_report(p: &[u8]) -> Option<Report> {
    if p.len() < REPORT_BYTES {
        return None;
    }
    let u64_at = |at: usize| u64::from_be_bytes(p[at..at + 8].try_into().expect("8 bytes"));
    let u32_at = |at: usize| u32::from_be_bytes(p[at..at + 4].try_into().expect("4 bytes"));
    let ext = (p.len() >= MAP_BITS_AT && &p[44..48] == EXT_TAG)
        .then(|| u32_at(64))
        .filter(|&n| n <= MAP_MAX_PACKETS && p.len() >= MAP_BITS_AT + map_bytes(n))
        .map(|packets| Extension {
            timed_span_ns: u64_at(48),
            timed_bytes: u64_at(56),
            map: ArrivalMap {
                packets,
                bits: p[MAP_BITS_AT..MAP_BITS_AT + map_bytes(packets)].to_vec(),
            },
        });
    Some(Report {
        received: u32_at(24),
        span_ns: u64_at(28),
        bytes: u64_at(36),
        kernel_timed: p[5] & KERNEL_TIMED != 0,
        ext,
    })
}
