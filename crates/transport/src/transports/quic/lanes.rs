//! Lanes of a `quic` connection: further bidirectional streams beside its first (the
//! module docs above say how they open).

use std::time::Duration;

use quinn::{RecvStream, SendStream};

use super::endpoint::{accept_stream, open_stream};
use crate::{Error, Result};

/// A lane's hello: these 6 bytes, then the lane's index (2 bytes, big-endian).
const LANE_HELLO: [u8; 6] = *b"TPQL\x01\x00";

/// What a channel may still do about lanes.
#[derive(Debug, Clone, Copy)]
pub(super) enum Lanes {
    /// The connection's first stream, its lanes not opened yet: at most `max`, opened by
    /// the client (`client`) or accepted.
    Unopened { max: usize, client: bool },
    /// The first stream after its lanes were opened, or a lane: none to open.
    None,
}

/// Opens (the client) or accepts (the server) `n` lanes of `conn`, each within `t`, in
/// lane order.
pub(super) async fn lane_streams(
    conn: quinn::Connection,
    n: usize,
    client: bool,
    t: Duration,
) -> Result<Vec<(SendStream, RecvStream)>> {
    let mut lanes: Vec<Option<(SendStream, RecvStream)>> = (0..n).map(|_| None).collect();
    for i in 0..n {
        if client {
            let mut hello = [0u8; 8];
            hello[..6].copy_from_slice(&LANE_HELLO);
            hello[6..].copy_from_slice(&(i as u16).to_be_bytes());
            lanes[i] = Some(open_stream(&conn, &hello, "opening a lane", t).await?);
        } else {
            let (send, recv, hello) =
                accept_stream(&conn, "waiting for the peer's lanes", t).await?;
            let index = usize::from(u16::from_be_bytes([hello[6], hello[7]]));
            if hello[..6] != LANE_HELLO {
                return Err(Error::Malformed {
                    what: "a quic lane's hello has a wrong magic or version".into(),
                });
            }
            match lanes.get_mut(index) {
                Some(slot @ None) => *slot = Some((send, recv)),
                Some(Some(_)) => {
                    return Err(Error::Malformed {
                        what: format!("the peer opened quic lane {index} twice"),
                    })
                }
                None => {
                    return Err(Error::Malformed {
                        what: format!("the peer opened quic lane {index} of {n}"),
                    })
                }
            }
        }
    }
    Ok(lanes.into_iter().flatten().collect())
}
