//! The evaluator's side of the lanes: coarse-grained frames read on a thread per lane and
//! fed to the evaluator stage by stage.
//!
//! The garbler sends piece `i`'s frames of each stage on lane `i mod lanes`, stage after
//! stage (a stage's frames all leave before the next stage's first), so each lane carries,
//! per stage, the tables of its pieces, whose sizes both parties know from the layout they
//! agreed on. A lane's reader counts them off: it knows which stage each frame belongs to,
//! refuses a frame of a piece that is not its lane's or longer than what its lane has left
//! of the stage, and never waits for another lane. The evaluator consumes a stage's frames
//! in any order but needs every frame of a stage before the next stage's, while the lanes
//! deliver at their own pace (a packet lost on one holds up only that one): frames of a
//! later stage that arrive before the current stage is whole are held, at most
//! [`HELD_LIMIT`] bytes. An honest garbler's lanes get ahead of each other by about what
//! the path holds (the transport's flow-control window bounds it), so the limit is far
//! above what an honest session holds on any link this project emulates; a garbler that
//! goes beyond it is refused.

use std::collections::BTreeMap;
use std::sync::mpsc::{sync_channel, SyncSender};
use std::sync::Arc;
use std::time::{Duration, Instant};

use transputation_circuits::Circuit;
use transputation_core::Block;
use transputation_garble::Evaluate;
use transputation_transport::Channel;

use crate::error::Error;
use crate::messages::{Message, TableFrame};
use crate::options::Coarse;
use crate::wire::{recv_on_lane, Lane, Wire};

/// Bytes of frames of later stages the evaluator holds at most while a stage is not whole.
pub(crate) const HELD_LIMIT: usize = 256 << 20;

/// Frames each lane's reader may have read and not yet handed over.
const READ_AHEAD: usize = 4;

/// What each lane carries of each stage: `shares[lane][stage]`, the table bytes of the
/// stage's pieces `i` with `i mod lanes == lane` (`pieces[stage][i]`).
fn lane_shares(pieces: &[Vec<u64>], lanes: usize) -> Vec<Vec<u64>> {
    (0..lanes)
        .map(|lane| {
            pieces
                .iter()
                .map(|stage| stage.iter().skip(lane).step_by(lanes).sum())
                .collect()
        })
        .collect()
}

/// Message 8 on the session's lanes (opened after message 6): the frames of every stage
/// read on a thread per lane and fed to `evaluate` stage by stage on this one. Returns the
/// output labels and the time spent evaluating.
///
/// The readers own their lanes while they read and hand them back when the tables are
/// whole. After an error they are not waited for: a reader blocked in its lane's `recv`
/// (a garbler that stopped sending on it) would hold the error back until its I/O
/// timeout. The session ends with the error, which closes the connection under the lanes
/// and so ends such a reader (at the latest, its timeout does).
pub(crate) fn evaluate_on_lanes<C: Channel>(
    wire: &mut Wire<C>,
    evaluate: &mut dyn Evaluate,
    circuit: &Circuit,
    coarse: &Coarse,
) -> Result<(Vec<Block>, Duration), Error> {
    let pieces = Arc::new(coarse.layout.piece_table_bytes());
    let lanes = wire.take_lanes()?;
    let n = lanes.len();
    let shares = lane_shares(&pieces, n);
    let (tx, rx) = sync_channel(READ_AHEAD * n);
    let readers: Vec<_> = lanes
        .into_iter()
        .zip(shares)
        .enumerate()
        .map(|(k, (mut lane, share))| {
            let (tx, pieces) = (tx.clone(), pieces.clone());
            std::thread::Builder::new()
                .name(format!("lane-{k}"))
                .spawn(move || {
                    let received = read_lane(&mut lane, (k, n), &share, &pieces, &tx);
                    (lane, received)
                })
                .expect("a lane's reader starts")
        })
        .collect();
    drop(tx);
    let fed = feed_by_stage(evaluate, &pieces, &rx);
    // Readers blocked on a full queue end once it is gone.
    drop(rx);
    let mut eval = fed?;
    // Every stage whole: each reader has read its lane's share and ended.
    let mut received = 0;
    let mut lanes = Vec::with_capacity(n);
    for r in readers {
        let (lane, bytes) = r.join().expect("a lane's reader does not panic");
        received += bytes;
        lanes.push(lane);
    }
    wire.restore_lanes(lanes);
    wire.count_received::<TableFrame>(received);
    let t = Instant::now();
    evaluate.check_done(circuit)?;
    let labels = evaluate.output_labels()?;
    eval += t.elapsed();
    Ok((labels, eval))
}

/// Lane `k`'s (of `n`) reader: its `share` of each stage's tables read frame by frame and
/// sent to `tx` with the stage, or the first error. Returns the bytes it read.
fn read_lane(
    lane: &mut Lane,
    (k, n): (usize, usize),
    share: &[u64],
    pieces: &[Vec<u64>],
    tx: &SyncSender<Result<(usize, Vec<u8>), Error>>,
) -> usize {
    let mut received = 0;
    for (stage, &due) in share.iter().enumerate() {
        let mut left = due as usize;
        while left > 0 {
            let frame = match read_frame(lane, (k, n), (stage, pieces[stage].len()), left) {
                Ok(frame) => frame,
                Err(e) => {
                    let _ = tx.send(Err(e));
                    return received;
                }
            };
            left -= TableFrame(&frame).tables();
            received += frame.len();
            // The evaluator stopped (an error): nothing more to read.
            if tx.send(Ok((stage, frame))).is_err() {
                return received;
            }
        }
    }
    received
}

/// Reads lane `k`'s (of `n`) next frame of stage `stage` (of `pieces` pieces), which has
/// `left` table bytes left on this lane.
fn read_frame(
    lane: &mut Lane,
    (k, n): (usize, usize),
    (stage, pieces): (usize, usize),
    left: usize,
) -> Result<Vec<u8>, Error> {
    let mut buf = Vec::new();
    recv_on_lane::<TableFrame>(lane, &mut buf, left)?;
    let piece = TableFrame::decode(&buf, left)?.piece();
    if piece % n != k || piece >= pieces {
        return Err(Error::Malformed {
            what: TableFrame::NAME,
            problem: format!(
                "a frame of piece {piece} of stage {stage} ({pieces} pieces) on lane {k} of \
                 {n}, which carries the pieces {k} modulo {n}"
            ),
        });
    }
    Ok(buf)
}

/// Feeds the frames the lanes' readers send (`rx`: a stage and a frame, or a reader's
/// error) to `evaluate`, each stage's whole before the next's (`pieces`: each stage's
/// pieces' table bytes), holding frames of later stages until theirs comes. Returns the
/// time spent evaluating.
fn feed_by_stage(
    evaluate: &mut dyn Evaluate,
    pieces: &[Vec<u64>],
    rx: &std::sync::mpsc::Receiver<Result<(usize, Vec<u8>), Error>>,
) -> Result<Duration, Error> {
    let mut eval = Duration::ZERO;
    let mut feed = |frame: &[u8]| -> Result<(), Error> {
        let t = Instant::now();
        let used = evaluate.feed(frame)?;
        eval += t.elapsed();
        if used != frame.len() {
            return Err(Error::Malformed {
                what: TableFrame::NAME,
                problem: "frames past the circuit's tables".into(),
            });
        }
        Ok(())
    };
    let mut held: BTreeMap<usize, Vec<Vec<u8>>> = BTreeMap::new();
    let mut held_bytes = 0;
    for (stage, due) in pieces.iter().map(|p| p.iter().sum::<u64>()).enumerate() {
        let mut left = due as usize;
        for frame in held.remove(&stage).unwrap_or_default() {
            held_bytes -= frame.len();
            left -= TableFrame(&frame).tables();
            feed(&frame)?;
        }
        while left > 0 {
            let Ok(next) = rx.recv() else {
                // Every reader ended without an error before the stage was whole: their
                // counts cannot fall short of a stage's, so this does not happen.
                return Err(Error::Malformed {
                    what: TableFrame::NAME,
                    problem: format!("the lanes ended with stage {stage} not whole"),
                });
            };
            let (at, frame) = next?;
            if at == stage {
                left -= TableFrame(&frame).tables();
                feed(&frame)?;
            } else {
                held_bytes += frame.len();
                if held_bytes > HELD_LIMIT {
                    return Err(Error::Malformed {
                        what: TableFrame::NAME,
                        problem: format!(
                            "more than {HELD_LIMIT} bytes of frames of later stages arrived \
                             while stage {stage} waits for {left} bytes"
                        ),
                    });
                }
                held.entry(at).or_default().push(frame);
            }
        }
    }
    Ok(eval)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_lane_carries_its_pieces_modulo_the_lanes() {
        let pieces = vec![vec![10], vec![1, 2, 3, 4, 5], vec![], vec![7, 8]];
        assert_eq!(
            lane_shares(&pieces, 2),
            vec![vec![10, 9, 0, 7], vec![0, 6, 0, 8]]
        );
        let three = lane_shares(&pieces, 3);
        assert_eq!(three[2], vec![0, 3, 0, 0]);
        // Every byte is on one lane.
        for lanes in 1..6 {
            let total: u64 = lane_shares(&pieces, lanes).iter().flatten().sum();
            assert_eq!(total, 40);
        }
    }
}
