//! The evaluator: everything that needs no peer in [`Evaluator::new`], then the message flow
//! of the crate docs in [`Evaluator::run`], one step (function) per message or exchange, in
//! the table's order. Each step takes the wire and the state it needs, so that it can be
//! driven on its own against a peer of the test's making.

use std::ops::Range;
use std::time::{Duration, Instant};

use transputation_circuits::{Circuit, Party, WireId};
use transputation_core::Block;
use transputation_garble::{decode, Evaluate};
use transputation_ot::{Receiver, ReceiverExtension};
use transputation_transport::Channel;

use crate::buffers::{touched, touched_vec};
use crate::error::Error;
use crate::header::SessionHeader;
use crate::inputs::{check_input, over_ranges, wires_of, SeededLabels};
use crate::lanes::evaluate_on_lanes;
use crate::messages::{
    BaseOtAnswer, BaseOtPoint, DecodingBits, LabelSeed, LabelTransfer, NextComputation,
    OtExtension, OtReply, OutputBits, TableBatch, TableFrame, OT_CHUNK,
};
use crate::options::{Coarse, Options};
use crate::relay::relay;
use crate::report::Report;
use crate::session::{batch_buffers, evaluator_for, lane_offer, prepare, resolve, Sizes};
use crate::wire::{close_after_the_last_message, Snapshot, Wire};

/// The evaluator, ready to run once connected.
pub struct Evaluator<'c> {
    pub(crate) circuit: &'c Circuit,
    pub(crate) options: Options,
    pub(crate) header: SessionHeader,
    pub(crate) evaluate: Box<dyn Evaluate + 'c>,
    /// The evaluator's input, one bit per input wire it owns, wire order: its OT choices.
    pub(crate) choices: Vec<bool>,
    /// The OT receiver's first step (it needs no message from the garbler).
    pub(crate) ot_start: (Receiver, Vec<u8>),
    /// The message buffers that circulate between receiving and evaluating the tables,
    /// touched before the session.
    pub(crate) batches: Vec<Vec<u8>>,
    /// The receive buffer: room for every OT message.
    pub(crate) recv_buf: Vec<u8>,
    /// Room for one OT chunk's labels.
    pub(crate) ot_labels: Vec<Block>,
    /// Room for one OT chunk's extension matrix.
    pub(crate) ot_matrix: Vec<u8>,
    /// The OT extension's row buffers, one per chunk.
    pub(crate) ot_rows: Vec<Vec<u128>>,
    pub(crate) sizes: Sizes,
}

impl<'c> Evaluator<'c> {
    /// Plans the evaluation of `circuit` for `input` (one bit per input wire the evaluator
    /// owns, in wire order).
    pub fn new(circuit: &'c Circuit, options: Options, input: &[bool]) -> Result<Self, Error> {
        check_input(circuit, Party::Evaluator, input)?;
        // Under `--parallel auto` the evaluator prepares for the tables in order and turns
        // to its pieces once both headers say so.
        let (prepared, sizes) = prepare(circuit, &options)?;
        let evaluate = evaluator_for(circuit, &prepared, 0);
        let header = SessionHeader::for_options(Party::Evaluator, circuit, &options);
        let batches = batch_buffers(&prepared, sizes.table_bytes);
        let n_e = circuit.party_input_bits(Party::Evaluator);
        let recv_buf = touched(
            LabelTransfer::Ordinary
                .reply_len(OT_CHUNK)
                .max(transputation_ot::MSG_B_LEN),
        );
        let ot_rows = input
            .chunks(OT_CHUNK)
            .map(|c| touched_vec(transputation_ot::padded(c.len()), u128::MAX))
            .collect();
        Ok(Evaluator {
            circuit,
            options,
            header,
            evaluate,
            choices: input.to_vec(),
            ot_start: Receiver::start(&mut rand::thread_rng()),
            batches,
            recv_buf,
            ot_labels: touched_vec(OT_CHUNK.min(n_e), Block(u128::MAX)),
            ot_matrix: touched(transputation_ot::msg_u_len(OT_CHUNK.min(n_e))),
            ot_rows,
            sizes,
        })
    }

    /// Runs a session of one computation on a connected channel; see the crate docs for
    /// the messages.
    pub fn run<C: Channel>(self, ch: C) -> Result<Report, Error> {
        let (report, mut session) = self.first_computation(ch, false)?;
        // The output went out in full (flushed): a garbler that has it may close first.
        close_after_the_last_message(&mut session.wire)?;
        // What the channel moved, this side's close record included.
        Ok(Report {
            channel: session.wire.stats(),
            ..report
        })
    }

    /// Opens a session on a connected channel and runs its first computation on this
    /// evaluator's input; the session then runs further computations
    /// ([`EvaluatorSession::compute`]), each one exchange with the garbler, on the key
    /// exchange, base OT and OT extension of this one, until
    /// [`EvaluatorSession::close`]. The garbler must serve open sessions
    /// ([`crate::Garbler::run_session`]).
    pub fn open<C: Channel>(self, ch: C) -> Result<(EvaluatorSession<'c, C>, Report), Error> {
        let (report, session) = self.first_computation(ch, true)?;
        Ok((session, report))
    }

    /// Messages 1 to 10: the session's first computation, with `header.open` saying
    /// whether more may follow.
    fn first_computation<C: Channel>(
        self,
        ch: C,
        open: bool,
    ) -> Result<(Report, EvaluatorSession<'c, C>), Error> {
        let start = Instant::now();
        let Evaluator {
            circuit,
            options,
            mut header,
            mut evaluate,
            choices,
            ot_start: (receiver, base_ot_point),
            batches,
            recv_buf,
            mut ot_labels,
            mut ot_matrix,
            ot_rows,
            mut sizes,
        } = self;
        header.open = open;
        header.lanes = lane_offer(&options, &ch);
        let mut wire = Wire::new(ch, recv_buf);
        // The first two messages go together, before anything is read: over a protected
        // channel they ride in the handshake's first message.
        wire.send(&header)?; // 1
        wire.send(&BaseOtPoint(&base_ot_point))?; // 2
        let ot_start = Instant::now();
        let theirs = wire.recv_header()?; // 3
        header.check_peer(&theirs)?;
        let frames = header.frames_with(&theirs);
        wire.agree_lanes(header.lanes_with(&theirs));
        let (options, pieces) = resolve(circuit, options, frames, &sizes)?;
        if let Some(pieces) = pieces {
            // Prepared for the tables in order: the pieces instead (no input label is set
            // yet, they come from here on, messages 5 to 7; the batch buffers hold a batch
            // of either).
            sizes = pieces;
            evaluate = evaluator_for(circuit, &options, 0);
        }
        // The session's hash keys, the garbler's (docs/garbling.md §5.3).
        evaluate.set_hash_key(theirs.garbling_key);
        let BaseOtAnswer(answer) = wire.recv(())?; // 4
        let mut receiver = receiver.with_hash_key(theirs.ot_key).base(answer)?;
        let garbler_labels = recv_label_seed(&mut wire, circuit, &mut *evaluate)?; // 5
        let transfer = sizes.transfer;
        extend_ot(
            &mut wire,
            &mut receiver,
            &choices,
            ot_rows,
            transfer,
            circuit,
            &mut *evaluate,
            &mut ot_labels,
            &mut ot_matrix,
        )?; // 6
            // The lanes: opened now, so that the garbler's end (opened once it read message 6)
            // finds them, whichever end connected.
        wire.lanes()?;
        recv_ot_labels(
            &mut wire,
            &mut receiver,
            transfer,
            circuit,
            &mut *evaluate,
            &mut ot_labels,
        )?; // 7
        let labels_held = Instant::now();
        let ot = labels_held - ot_start;
        let (labels, eval) = evaluate_tables(
            &mut wire,
            &mut *evaluate,
            circuit,
            batches,
            (sizes.table_bytes, options.coarse.as_ref()),
        )?; // 8
        let (output, output_at) = decode_and_send_output(&mut wire, &labels, circuit, &options)?; // 9, 10
        let total = output_at - start;
        let report = Report {
            role: Party::Evaluator,
            computation: 1,
            output: Some(output),
            total,
            online: Some(total),
            ot,
            paper: output_at - labels_held,
            output_at,
            garble: Duration::ZERO,
            eval,
            frames,
            lanes: wire.lane_count(),
            round_trips: wire.round_trips,
            sent: wire.sent,
            received: wire.received,
            channel: wire.stats(),
        };
        let session = EvaluatorSession {
            circuit,
            options,
            wire,
            receiver,
            labels: garbler_labels,
            garbling_key: theirs.garbling_key,
            done: 1,
            sizes,
        };
        Ok((report, session))
    }
}

/// Messages 9 and 10: the decoding bits, the output decoded from the output `labels`, and
/// the output sent back, flushed at once (the garbler waits for it, and neither freeing the
/// evaluation's labels, tens of MB on a large circuit, nor an open session's next
/// computation may delay it). Returns the output and when this party held it.
fn decode_and_send_output<C: Channel>(
    wire: &mut Wire<C>,
    labels: &[Block],
    circuit: &Circuit,
    options: &Options,
) -> Result<(Vec<bool>, Instant), Error> {
    let DecodingBits(decoding) = wire.recv(circuit.n_outputs())?; // 9
    let output = decode(labels, &decoding);
    let output_at = Instant::now();
    wire.send(&OutputBits::for_mode(options.output, &output))?; // 10
    wire.flush()?;
    Ok((output, output_at))
}

/// Writes `labels` into the evaluator's slots of a party's input bits
/// `first .. first + labels.len()`, the party's input wires being `wires`.
pub(crate) fn put_labels(
    evaluate: &mut dyn Evaluate,
    wires: &[Range<WireId>],
    first: usize,
    labels: &[Block],
) {
    over_ranges(wires, first, labels, |w, l| evaluate.set_input_labels(w, l));
}

/// Message 5: the seed of the garbler's input labels, expanded into the evaluator's labels
/// of the garbler's input bits; returns the seed's stream past them, an open session's
/// next ones.
pub(crate) fn recv_label_seed<C: Channel>(
    wire: &mut Wire<C>,
    circuit: &Circuit,
    evaluate: &mut dyn Evaluate,
) -> Result<SeededLabels, Error> {
    let LabelSeed(seed) = wire.recv(())?;
    let mut labels = SeededLabels::new(seed, circuit.party_input_bits(Party::Garbler));
    put_labels(
        evaluate,
        &wires_of(circuit, Party::Garbler),
        0,
        &labels.next(),
    );
    Ok(labels)
}

/// Message 6: extends the OT chunk by chunk for the evaluator's `choices`, sending each
/// chunk's matrix as soon as it is made. Where the OT draws the labels
/// ([`LabelTransfer::Drawn`]) they go into the evaluator's input slots as each chunk is
/// extended (through `labels`, a chunk-sized buffer); otherwise they come in message 7.
/// `rows` are the extension's row buffers, one per chunk; `matrix` holds a chunk's matrix.
#[allow(clippy::too_many_arguments)]
pub(crate) fn extend_ot<C: Channel>(
    wire: &mut Wire<C>,
    receiver: &mut ReceiverExtension,
    choices: &[bool],
    rows: Vec<Vec<u128>>,
    transfer: LabelTransfer,
    circuit: &Circuit,
    evaluate: &mut dyn Evaluate,
    labels: &mut Vec<Block>,
    matrix: &mut Vec<u8>,
) -> Result<(), Error> {
    let wires = wires_of(circuit, Party::Evaluator);
    // Reversed: the extension takes its spare buffers from the back, chunk 0's first.
    receiver.add_row_buffers(rows.into_iter().rev());
    let mut done = 0;
    for chunk in choices.chunks(OT_CHUNK) {
        if transfer == LabelTransfer::Drawn {
            labels.clear();
            receiver.extend_cot_into(chunk, matrix, labels);
            put_labels(evaluate, &wires, done, labels);
            done += chunk.len();
        } else {
            receiver.extend_into(chunk, matrix);
        }
        wire.send(&OtExtension(matrix))?;
        // Let the garbler start on this chunk while the next is extended.
        wire.flush()?;
    }
    Ok(())
}

/// Message 7 (where the OT does not draw the labels): each pending chunk's labels for the
/// evaluator's input wires, unmasked by the OT `receiver` from ciphertexts or corrections
/// as `transfer` says, into the evaluator's input slots.
pub(crate) fn recv_ot_labels<C: Channel>(
    wire: &mut Wire<C>,
    receiver: &mut ReceiverExtension,
    transfer: LabelTransfer,
    circuit: &Circuit,
    evaluate: &mut dyn Evaluate,
    labels: &mut Vec<Block>,
) -> Result<(), Error> {
    let wires = wires_of(circuit, Party::Evaluator);
    let mut done = 0;
    while let Some(ots) = receiver.next_pending() {
        labels.clear();
        let OtReply(y) = wire.recv((transfer, ots))?;
        match transfer {
            LabelTransfer::Chosen => receiver.receive_correlated_into(y, labels)?,
            _ => receiver.receive_into(y, labels)?,
        }
        put_labels(evaluate, &wires, done, labels);
        done += labels.len();
    }
    Ok(())
}

/// Message 8: receives the `table_bytes` of tables on one thread while this one evaluates
/// them (the copies out of the kernel need not wait for evaluation), then finishes the
/// evaluation. Returns the output labels and the time spent evaluating.
///
/// Receiving ends with the last table byte; a batch past the tables still due, or a failed
/// receive, ends it with an error. Under coarse-grained parallelism (`coarse`) each
/// message is a frame ([`TableFrame`]) and `table_bytes` counts the frames' tables, not
/// their headers; on the session's lanes, if it has them ([`evaluate_on_lanes`]).
pub(crate) fn evaluate_tables<C: Channel>(
    wire: &mut Wire<C>,
    evaluate: &mut dyn Evaluate,
    circuit: &Circuit,
    buffers: Vec<Vec<u8>>,
    (table_bytes, coarse): (usize, Option<&Coarse>),
) -> Result<(Vec<Block>, Duration), Error> {
    if let Some(c) = coarse.filter(|_| wire.lane_count() > 0) {
        return evaluate_on_lanes(wire, evaluate, circuit, c);
    }
    let coarse = coarse.is_some();
    let mut eval = Duration::ZERO;
    let mut pending: Vec<u8> = Vec::new();
    let mut still_due = table_bytes;
    relay::<Error>(
        buffers,
        |msg| {
            if still_due == 0 {
                // Nothing to receive (a circuit without tables): an empty batch.
                msg.clear();
                return Ok(false);
            }
            still_due -= if coarse {
                wire.recv_into::<TableFrame>(msg, still_due)?.tables()
            } else {
                wire.recv_into::<TableBatch>(msg, still_due)?.0.len()
            };
            Ok(still_due > 0)
        },
        |msg| {
            // Evaluate every complete window; keep the rest for the next batch.
            let t = Instant::now();
            let fed = if pending.is_empty() {
                evaluate
                    .feed(msg)
                    .map(|used| pending.extend_from_slice(&msg[used..]))
            } else {
                pending.extend_from_slice(msg);
                evaluate.feed(&pending).map(|used| {
                    pending.drain(..used);
                })
            };
            eval += t.elapsed();
            Ok(fed?)
        },
    )?;
    let t = Instant::now();
    evaluate.feed(&pending)?;
    evaluate.check_done(circuit)?;
    let labels = evaluate.output_labels()?;
    eval += t.elapsed();
    Ok((labels, eval))
}

/// An open session, the evaluator's side: its first computation ran
/// ([`crate::Evaluator::open`]); [`EvaluatorSession::compute`] runs each further one and
/// [`EvaluatorSession::close`] ends the session.
///
/// Each computation's waits are bounded by the channel's I/O timeout, and so is the
/// garbler's wait for the next computation: a session left idle longer than the garbler's
/// timeout is closed by the garbler, and the next computation fails with a clear error.
/// A session dropped without [`EvaluatorSession::close`] leaves the garbler to that
/// timeout too.
pub struct EvaluatorSession<'c, C: Channel> {
    pub(crate) circuit: &'c Circuit,
    pub(crate) options: Options,
    pub(crate) wire: Wire<C>,
    pub(crate) receiver: ReceiverExtension,
    pub(crate) labels: SeededLabels,
    /// The session's key of the garbling scheme's hash, the garbler's.
    pub(crate) garbling_key: Block,
    /// Computations run so far.
    pub(crate) done: u64,
    pub(crate) sizes: Sizes,
}

impl<'c, C: Channel> EvaluatorSession<'c, C> {
    /// Runs the next computation on `input` (one bit per input wire the evaluator owns, in
    /// wire order): one exchange with the garbler and the output. The report's `online`
    /// is the time from this call to the output.
    pub fn compute(&mut self, input: &[bool]) -> Result<Report, Error> {
        check_input(self.circuit, Party::Evaluator, input)?;
        let start = Instant::now();
        let before = Snapshot::of(&self.wire);
        let k = self.done + 1;
        let (circuit, options) = (self.circuit, &self.options);
        let wire = &mut self.wire;
        wire.send(&NextComputation(k))?; // 11
        let mut evaluate = evaluator_for(circuit, options, self.sizes.tweak_base(k));
        evaluate.set_hash_key(self.garbling_key);
        put_labels(
            &mut *evaluate,
            &wires_of(circuit, Party::Garbler),
            0,
            &self.labels.next(),
        );
        let ot_start = Instant::now();
        let mut chunk_labels = Vec::with_capacity(OT_CHUNK.min(input.len()));
        let transfer = LabelTransfer::further(options.scheme);
        extend_ot(
            wire,
            &mut self.receiver,
            input,
            Vec::new(),
            transfer,
            circuit,
            &mut *evaluate,
            &mut chunk_labels,
            &mut Vec::new(),
        )?; // 6
        recv_ot_labels(
            wire,
            &mut self.receiver,
            transfer,
            circuit,
            &mut *evaluate,
            &mut chunk_labels,
        )?; // 7
        let labels_held = Instant::now();
        let tables = self.sizes.table_bytes;
        let (labels, eval) = evaluate_tables(
            wire,
            &mut *evaluate,
            circuit,
            batch_buffers(options, tables),
            (tables, options.coarse.as_ref()),
        )?; // 8
        let (output, output_at) = decode_and_send_output(wire, &labels, circuit, options)?; // 9, 10
        self.done = k;
        let counted = before.until_now(wire);
        Ok(Report {
            role: Party::Evaluator,
            computation: k,
            output: Some(output),
            total: output_at - start,
            online: Some(output_at - start),
            ot: labels_held - ot_start,
            paper: output_at - labels_held,
            output_at,
            garble: Duration::ZERO,
            eval,
            frames: options.coarse.is_some(),
            lanes: wire.lane_count(),
            round_trips: counted.round_trips,
            sent: counted.sent,
            received: counted.received,
            channel: counted.channel,
        })
    }

    /// The channel underneath, to read what it measured (such as a protected channel's
    /// handshake time).
    pub fn channel(&self) -> &C {
        self.wire.channel()
    }

    /// The computations run in this session so far, the first included.
    pub fn computations(&self) -> u64 {
        self.done
    }

    /// Ends the session: tells the garbler (message 11 with 0) and closes this side.
    pub fn close(mut self) -> Result<(), Error> {
        self.wire.send(&NextComputation::END)?;
        self.wire.flush()?;
        // The end went out in full: a garbler that has it may close first.
        close_after_the_last_message(&mut self.wire)
    }
}
