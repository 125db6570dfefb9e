//! What both ends of a race read and write: the sizes, the evaluator's frames on the
//! first connection and the verdict (the wire format is in the parent module's docs).

use transputation_transport::{Channel, Error, Result};

pub(super) use crate::moving::frame_length;
/// The most bytes of one frame or chunk (the first connection's, as a move's).
pub use crate::moving::MAX_FRAME;
/// The stream bytes of one chunk on a lane.
pub const CHUNK: usize = 64 << 10;
/// The most stream bytes a race's budget may be (the rest of a larger quarter of the
/// tables goes over the winner).
pub const MAX_BUDGET: u64 = 64 << 20;
/// The most stream bytes the evaluator holds ahead of the next it reads: the budget, and
/// what arrives until the verdict's chunks sent again fill the gap a slow lane left, with
/// room to spare. A garbler that sends more is an error.
pub const MAX_HELD: usize = 256 << 20;
/// The most chunk offsets a verdict lists.
pub const MAX_LISTED: usize = 16 << 10;
/// The most bytes a chunk held counts for beyond its own (its map entry and allocation):
/// many small chunks fill the limit as fast as few large ones.
pub(super) const CHUNK_OVERHEAD: usize = 64;
/// The evaluator's frame kinds.
pub(super) const STREAM: u8 = 0;
pub(super) const VERDICT: u8 = 1;
/// Empty: the evaluator lives (sent while it reads the race's chunks, whose connection
/// the garbler's reader would otherwise see silent for the whole transfer).
pub(super) const KEEPALIVE: u8 = 2;

/// What a race came to, for the reports.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RaceOutcome {
    /// Whether the race started (every lane joined before the garbler's last message).
    pub started: bool,
    /// The winner's lane, once named.
    pub winner: Option<usize>,
    /// The stream bytes each lane delivered up to the verdict (the evaluator's count) or
    /// took up to it (the garbler's).
    pub lane_bytes: Vec<u64>,
    /// The chunks the garbler sent again on the winner.
    pub resent_chunks: usize,
}

/// A verdict as sent: the winner, the offset below which all arrived, the chunks held
/// above it.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Verdict {
    pub(super) winner: usize,
    pub(super) below: u64,
    pub(super) held: Vec<u64>,
}

impl Verdict {
    pub(super) fn encode(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(9 + 8 * self.held.len());
        b.push(self.winner as u8);
        b.extend_from_slice(&self.below.to_be_bytes());
        for o in &self.held {
            b.extend_from_slice(&o.to_be_bytes());
        }
        b
    }

    pub(super) fn decode(b: &[u8], lanes: usize) -> Result<Verdict> {
        let bad = |what: String| Error::Malformed {
            what: format!("a race verdict {what}"),
        };
        if b.len() < 9 || !(b.len() - 9).is_multiple_of(8) || (b.len() - 9) / 8 > MAX_LISTED {
            return Err(bad(format!("of {} bytes", b.len())));
        }
        let winner = usize::from(b[0]);
        if winner >= lanes {
            return Err(bad(format!("naming lane {winner} of {lanes}")));
        }
        let word = |at: usize| u64::from_be_bytes(b[at..at + 8].try_into().expect("8 bytes"));
        let held = (9..b.len()).step_by(8).map(word).collect();
        Ok(Verdict {
            winner,
            below: word(1),
            held,
        })
    }
}

/// Reads the evaluator's frames on the first connection: the stream's bytes, and the
/// verdict (`None` before the race, where one is an error).
pub(super) struct EvaluatorFrames {
    pub(super) left: usize,
}

impl EvaluatorFrames {
    /// The next stream bytes from `ch` (at most `max`, within one frame), handing
    /// verdicts to `verdict` on the way.
    pub(super) fn next_bytes(
        &mut self,
        ch: &mut dyn Channel,
        max: usize,
        verdict: &mut dyn FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<Vec<u8>> {
        let mut first = [0u8; 1];
        self.read(ch, &mut first, verdict)?;
        let mut bytes = vec![0u8; 1 + self.left.min(max.saturating_sub(1))];
        bytes[0] = first[0];
        ch.recv(&mut bytes[1..])?;
        self.left -= bytes.len() - 1;
        Ok(bytes)
    }

    /// Fills `buf` with stream bytes from `ch`, handing verdicts to `verdict`.
    pub(super) fn read(
        &mut self,
        ch: &mut dyn Channel,
        buf: &mut [u8],
        verdict: &mut dyn FnMut(Vec<u8>) -> Result<()>,
    ) -> Result<()> {
        let mut filled = 0;
        while filled < buf.len() {
            if self.left == 0 {
                let mut header = [0u8; 5];
                ch.recv(&mut header)?;
                let n = frame_length(header[1..].try_into().expect("4 bytes"), "evaluator")?;
                match header[0] {
                    STREAM => self.left = n,
                    VERDICT => {
                        let mut body = vec![0u8; n];
                        ch.recv(&mut body)?;
                        verdict(body)?;
                    }
                    KEEPALIVE if n == 0 => {}
                    k => {
                        return Err(Error::Malformed {
                            what: format!("a frame of kind {k} from the evaluator"),
                        })
                    }
                }
                continue;
            }
            let k = self.left.min(buf.len() - filled);
            ch.recv(&mut buf[filled..filled + k])?;
            self.left -= k;
            filled += k;
        }
        Ok(())
    }
}
