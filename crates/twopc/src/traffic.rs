//! What a fresh session carries, as the completion-time model of `--transport auto` needs
//! it (`transputation_model::Workload`): one wait after the connection (messages 1–2 out,
//! 3–5 back), then two bulk messages, strictly one after the other (the garbler reads
//! every extension matrix before it answers): the evaluator's OT extension (message 6)
//! and the garbler's labels, tables and decoding bits (7–9). Bytes are the framed messages
//! (docs/protocol.md §3.1); a protected session adds 36 bytes per record of up to 1 MiB,
//! which the model leaves out.

use transputation_circuits::{Circuit, Party};
use transputation_garble::coarse;
use transputation_model::{Bulk, Sender, Workload};

use crate::error::Error;
use crate::messages::ot_chunks;
use crate::options::Options;
use crate::session::Sizes;

/// Each message's length prefix (the transport crate's framing).
const FRAME_HEADER: usize = 8;

/// The traffic of a fresh session of `circuit` under `options` (its scheme and batches).
/// The evaluator's set-up before it can send is not known here: it is 0, for a caller that
/// measured it to fill in.
pub fn workload(circuit: &Circuit, options: &Options) -> Result<Workload, Error> {
    let sizes = Sizes::of(circuit, options)?;
    let framed = |n: usize| (n + FRAME_HEADER) as u64;
    let m = circuit.party_input_bits(Party::Evaluator);
    let chunks = || ot_chunks(m).map(|r| r.len());
    let matrices: u64 = chunks()
        .map(|k| framed(transputation_ot::msg_u_len(k)))
        .sum();
    let replies: u64 = chunks()
        .map(|k| sizes.transfer.reply_len(k))
        .filter(|&n| n > 0)
        .map(framed)
        .sum();
    // Under coarse-grained parallelism each message is one frame of at most FRAME_MAX
    // bytes of a piece's tables, with its own header; a garbling thread's batch passes
    // FRAME_MAX by up to a window, which then goes in a second frame: about two frames
    // per FRAME_MAX.
    let (batch, per_batch) = match options.coarse {
        None => (options.batch_bytes.max(1), FRAME_HEADER),
        Some(_) => (coarse::FRAME_MAX / 2, FRAME_HEADER + coarse::FRAME_HEADER),
    };
    let batches = sizes.table_bytes.div_ceil(batch) as u64;
    let tables = sizes.table_bytes as u64 + batches * per_batch as u64;
    let decoding = framed(circuit.n_outputs().div_ceil(8));
    Ok(Workload {
        waits: 1,
        bulk: vec![
            Bulk {
                from: Sender::Evaluator,
                bytes: matrices,
                computed: false,
                what: "OT extension".into(),
            },
            Bulk {
                from: Sender::Garbler,
                bytes: replies + tables + decoding,
                computed: true,
                what: "labels and tables".into(),
            },
        ],
        setup: 0.0,
    })
}
