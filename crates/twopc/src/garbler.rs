//! The garbler: everything that needs no peer in [`Garbler::new`], then the message flow of
//! the crate docs in [`Garbler::run`], one step (function) per message or exchange, in the
//! table's order. Each step takes the wire and the state it needs, so that it can be driven
//! on its own against a peer of the test's making.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rand::Rng;
use transputation_circuits::{Circuit, Party};
use transputation_core::prg::Prg;
use transputation_core::Block;
use transputation_garble::{coarse, Garble, GarbleStart};
use transputation_ot::{Sender, SenderSetup};
use transputation_transport::Channel;

use crate::buffers::{filled, touched, touched_vec};
use crate::error::Error;
use crate::header::{SessionHeader, HEADER_LEN};
use crate::inputs::{check_input, over_ranges, wires_of, SeededLabels};
use crate::messages::{
    ot_chunks, BaseOtAnswer, BaseOtPoint, DecodingBits, LabelSeed, LabelTransfer, Message,
    NextComputation, OtExtension, OtReply, OutputBits, OutputContext, TableBatch, TableFrame,
    OT_CHUNK,
};
use crate::options::Options;
use crate::relay::{idle_priority, relay};
use crate::report::Report;
use crate::session::{batch_buffers, garbler_for, lane_offer, prepare, resolve, Sizes};
use crate::wire::{close_after_the_last_message, Snapshot, Wire};

/// The garbler's step while it garbles ahead during the OT (see [`garble_ahead`]).
const AHEAD_STEP: usize = 64 << 10;

/// The labels of the evaluator's input wires, wire order: what the OT transfers or draws.
pub(crate) enum OtLabels {
    /// Both labels of each wire, chosen by the garbler and transferred by ordinary OT
    /// (msg_y): the schemes without a global offset.
    Pairs(Vec<[Block; 2]>),
    /// The 0-label of each wire, chosen by the garbler and transferred by correlated OT
    /// with the scheme's `Δ` (msg_d): [`LabelTransfer::Chosen`].
    Chosen(Vec<Block>),
    /// Labels drawn by the correlated OT with the scheme's `Δ`: the 0-label of each wire is
    /// the OT's row `q_j`, and the evaluator holds `q_j ⊕ r_j·Δ` with no reply
    /// (`transputation-ot`, "Zero labels drawn by the OT"). Filled as the extension
    /// matrices arrive.
    Drawn {
        /// The evaluator's input bits.
        ots: usize,
        /// The 0-labels so far.
        zeros: Vec<Block>,
    },
}

impl OtLabels {
    /// The number of OTs.
    pub(crate) fn len(&self) -> usize {
        match self {
            OtLabels::Pairs(p) => p.len(),
            OtLabels::Chosen(z) => z.len(),
            OtLabels::Drawn { ots, .. } => *ots,
        }
    }
}

/// What the garbler's side of the OT extension transfers, and where its replies go.
pub(crate) struct OtReplies {
    /// What the OT transfers.
    pub(crate) labels: OtLabels,
    /// One buffer per OT chunk for its reply (none when the OT draws the labels),
    /// allocated and touched before the session so that the protocol does not pay for page
    /// faults.
    pub(crate) out: Vec<Vec<u8>>,
}

impl OtReplies {
    /// What the OT transfers for the evaluator's input wires under `transfer` (the labels
    /// read from `garble` where the garbler chose them), and one reply buffer per chunk
    /// where there is a reply.
    pub(crate) fn new(transfer: LabelTransfer, garble: &dyn Garble, circuit: &Circuit) -> Self {
        let wires = wires_of(circuit, Party::Evaluator).into_iter().flatten();
        let ots = circuit.party_input_bits(Party::Evaluator);
        let labels = match transfer {
            // Its pages mapped now, not as the OT fills it.
            LabelTransfer::Drawn => OtLabels::Drawn {
                ots,
                zeros: touched_vec(ots, Block(u128::MAX)),
            },
            LabelTransfer::Chosen => {
                OtLabels::Chosen(wires.map(|w| garble.input_labels(w)[0]).collect())
            }
            LabelTransfer::Ordinary => {
                OtLabels::Pairs(wires.map(|w| garble.input_labels(w)).collect())
            }
        };
        let out = match transfer {
            LabelTransfer::Drawn => Vec::new(),
            _ => ot_chunks(ots)
                .map(|c| touched(transfer.reply_len(c.len())))
                .collect(),
        };
        OtReplies { labels, out }
    }
}

/// How much to garble ahead during the OT, and in which steps.
#[derive(Clone, Copy)]
pub(crate) struct AheadLimits {
    /// Bytes of tables per message.
    pub(crate) batch_bytes: usize,
    /// Bytes of tables garbled ahead at most.
    pub(crate) prefetch_bytes: usize,
    /// Whether every table fits in what may be garbled ahead: then garbling ahead waits
    /// while this party answers the base OT (see [`garble_ahead`]).
    pub(crate) all_ahead: bool,
}

impl AheadLimits {
    /// The limits under `options` for `tables` bytes of tables.
    fn of(options: &Options, tables: usize) -> AheadLimits {
        // Under coarse-grained parallelism nothing is garbled ahead: a stage the idle-class
        // thread started would garble to its end on one thread (that thread garbles
        // alone) of the idle class (a thread inherits it from the one that starts it).
        let prefetch = match options.coarse {
            Some(_) => 0,
            None => options.prefetch_bytes,
        };
        AheadLimits {
            batch_bytes: options.batch_bytes,
            prefetch_bytes: prefetch,
            all_ahead: tables <= prefetch,
        }
    }
}

/// The session's options as the two headers resolved them ([`resolve`], `frames`: the
/// tables as coarse-grained frames); a garbler prepared for the tables in order
/// (`--parallel auto`) whose headers agreed on frames turns to its pieces, on what was made:
/// its garbler ([`by_pieces`]), sizes and limits (the batch buffers hold a batch of either;
/// nothing is garbled ahead, so that buffer goes).
fn resolve_tables<'c>(
    (circuit, options, frames): (&'c Circuit, Options, bool),
    garbling_key: Block,
    (garble, sizes, ahead, limits): (
        &mut Box<dyn Garble + 'c>,
        &mut Sizes,
        &mut Vec<u8>,
        &mut AheadLimits,
    ),
) -> Result<Options, Error> {
    let (options, pieces) = resolve(circuit, options, frames, sizes)?;
    if let Some(pieces) = pieces {
        *garble = by_pieces(circuit, &options, &**garble, garbling_key);
        *sizes = pieces;
        *ahead = Vec::new();
        *limits = AheadLimits::of(&options, sizes.table_bytes);
    }
    Ok(options)
}

/// The garbler by pieces under `options` (coarse-grained parallelism) that garbles what
/// `prepared`, a garbler of the tables in order made before the headers crossed, would
/// have: the same offset `Δ` (which the OT's set-up already holds), the same hash key and
/// the same input labels (the seeded ones of the garbler's input, and those the OT
/// transfers, already copied into its replies). Nothing was garbled yet.
fn by_pieces<'c>(
    circuit: &'c Circuit,
    options: &Options,
    prepared: &dyn Garble,
    garbling_key: Block,
) -> Box<dyn Garble + 'c> {
    let start = GarbleStart {
        offset: prepared.global_offset(),
        hash_key: Some(garbling_key),
        ..GarbleStart::default()
    };
    let mut garble = garbler_for(circuit, options, &mut Prg::from_entropy(), start);
    let inputs = circuit.n_inputs() as u32;
    let labels: Vec<[Block; 2]> = (0..inputs).map(|w| prepared.input_labels(w)).collect();
    garble.set_input_labels(0, &labels);
    garble
}

/// The garbler, ready to run once connected.
pub struct Garbler<'c> {
    pub(crate) circuit: &'c Circuit,
    pub(crate) options: Options,
    pub(crate) header: SessionHeader,
    pub(crate) garble: Box<dyn Garble + 'c>,
    /// The seed of the evaluator's labels of the garbler's input (message 5).
    pub(crate) label_seed: Block,
    /// The half of the base OT that needs no message from the evaluator.
    pub(crate) ot_setup: SenderSetup,
    pub(crate) ot: OtReplies,
    /// The tables garbled ahead during the OT, batch after batch, written over in place:
    /// allocated and touched before the session (16 MiB would cost 4,096 page faults).
    pub(crate) ahead: Vec<u8>,
    /// The batch buffers that circulate between garbling and sending after the OT,
    /// touched before the session too.
    pub(crate) batches: Vec<Vec<u8>>,
    /// The receive buffer: room for a chunk's OT extension matrix.
    pub(crate) recv_buf: Vec<u8>,
    pub(crate) limits: AheadLimits,
    /// This party's input: the same for every computation of an open session.
    pub(crate) input: Vec<bool>,
    /// The seed's stream, past this computation's labels: an open session's next ones.
    pub(crate) own_labels: SeededLabels,
    pub(crate) sizes: Sizes,
}

impl<'c> Garbler<'c> {
    /// Plans the garbling of `circuit`, draws the labels, and encodes `input` (one bit per
    /// input wire the garbler owns, in wire order).
    pub fn new(circuit: &'c Circuit, options: Options, input: &[bool]) -> Result<Self, Error> {
        check_input(circuit, Party::Garbler, input)?;
        let mut prg = Prg::from_entropy();
        let mut rng = rand::thread_rng();
        // The session's public hash keys, sent in the header (docs/garbling.md §5.3).
        let (garbling_key, ot_key) = (Block(rng.gen()), Block(rng.gen()));
        let start = GarbleStart {
            hash_key: Some(garbling_key),
            ..GarbleStart::default()
        };
        // Under `--parallel auto` the garbler prepares for the tables in order
        // ([`resolve_tables`] turns it to its pieces).
        let (prepared, sizes) = prepare(circuit, &options)?;
        let mut garble = garbler_for(circuit, &prepared, &mut prg, start);
        let label_seed = prg.block();
        let mut own_labels = SeededLabels::new(label_seed, input.len());
        set_own_labels(circuit, &mut *garble, own_labels.next(), input, &mut prg);
        let ot = OtReplies::new(sizes.transfer, &*garble, circuit);
        let setup = match garble.global_offset() {
            Some(delta) => Sender::setup_correlated(delta, &mut rng),
            None => Sender::setup(&mut rng),
        }
        .with_hash_key(ot_key);
        let header = SessionHeader {
            garbling_key,
            ot_key,
            ..SessionHeader::for_options(Party::Garbler, circuit, &options)
        };
        // Room for what can be garbled ahead, where the labels are chosen ahead: the
        // prefetch limit (or all the tables, if fewer) plus the batch that crosses it, which
        // may end up to a window later.
        let tables = sizes.table_bytes;
        let limits = AheadLimits::of(&prepared, tables);
        let ahead_room = limits
            .prefetch_bytes
            .min(tables)
            .saturating_add(options.batch_bytes)
            .saturating_add(1 << 20);
        let batches = batch_buffers(&prepared, tables);
        let recv_buf = touched(transputation_ot::msg_u_len(OT_CHUNK).max(HEADER_LEN));
        let ahead = match ot.labels {
            OtLabels::Pairs(_) | OtLabels::Chosen(_) => filled(ahead_room),
            OtLabels::Drawn { .. } => Vec::new(),
        };
        Ok(Garbler {
            circuit,
            options,
            header,
            garble,
            label_seed,
            ot_setup: setup,
            ot,
            ahead,
            batches,
            recv_buf,
            limits,
            input: input.to_vec(),
            own_labels,
            sizes,
        })
    }

    /// Runs a session of one computation on a connected channel; see the crate docs for
    /// the messages. An evaluator that opens the session for further computations is
    /// refused ([`Garbler::run_session`] serves those).
    pub fn run<C: Channel>(self, ch: C) -> Result<Report, Error> {
        let mut first = None;
        self.drive(ch, false, &mut |r| {
            first = Some(r);
            Ok(())
        })?;
        Ok(first.expect("a session that ends well ran its first computation"))
    }

    /// Runs a session on a connected channel: its first computation and, when the
    /// evaluator opened the session ([`SessionHeader::open`]), every further one it asks
    /// for, each on this garbler's same input, until the evaluator ends the session. Each
    /// computation's report goes to `each` as the computation ends; an error there ends the
    /// session with that error. Returns the number of computations.
    pub fn run_session<C: Channel, E: From<Error>>(
        self,
        ch: C,
        mut each: impl FnMut(Report) -> Result<(), E>,
    ) -> Result<u64, E> {
        let mut stopped = None;
        let served = self.drive(ch, true, &mut |report| {
            each(report).map_err(|e| {
                stopped = Some(e);
                Error::Stopped
            })
        });
        match (served, stopped) {
            (_, Some(e)) => Err(e),
            (served, None) => Ok(served?),
        }
    }

    fn drive<C: Channel>(
        self,
        ch: C,
        may_open: bool,
        each: &mut dyn FnMut(Report) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        let Garbler {
            circuit,
            options,
            header,
            mut garble,
            label_seed,
            ot_setup,
            mut ot,
            mut ahead,
            batches,
            recv_buf,
            mut limits,
            input,
            own_labels,
            mut sizes,
        } = self;
        let header = SessionHeader {
            lanes: lane_offer(&options, &ch),
            ..header
        };
        let mut wire = Wire::new(ch, recv_buf);
        let theirs = exchange_headers(&mut wire, &header)?; // 3, 1
        if theirs.open && !may_open {
            return Err(Error::Mismatch {
                field: "computations per session",
                ours: "1 (this garbler runs one)".into(),
                theirs: "several (the evaluator opened the session)".into(),
            });
        }
        // Protocol time from the evaluator's first message: an evaluator that connects
        // while it prepares is not ready at the connection, and its preparation is not the
        // protocol's.
        let start = Instant::now();
        let options = resolve_tables(
            (circuit, options, header.frames_with(&theirs)),
            header.garbling_key,
            (&mut garble, &mut sizes, &mut ahead, &mut limits),
        )?;
        wire.agree_lanes(header.lanes_with(&theirs)); // opened after message 6
        let chosen_ahead = !matches!(ot.labels, OtLabels::Drawn { .. });
        let (ot_time, sender, ahead_batches, mut garble_time) = if chosen_ahead {
            // Labels chosen ahead: the tables can be garbled during the OT.
            let done = ot_while_garbling_ahead(
                &mut wire,
                label_seed,
                ot_setup,
                &mut ot,
                &mut *garble,
                &mut ahead,
                limits,
            )?; // 2, 4–7
            (done.ot_time, done.sender, done.batches, done.garble_time)
        } else {
            // Labels drawn by the OT: the tables need them.
            let (t, sender) = labels_and_ot(
                &mut wire,
                label_seed,
                ot_setup,
                &mut ot,
                &AtomicBool::new(false),
            )?; // 2, 4–6
            set_drawn_labels(circuit, &mut *garble, &ot.labels);
            (t, sender, Vec::new(), Duration::ZERO)
        };
        let ot_end = Instant::now();
        let tables = (&ahead[..], ahead_batches, batches);
        let batching = (limits.batch_bytes, options.coarse.is_some());
        let expect = (batching, output_context(&options, circuit));
        let (output, output_at, time) = tables_to_output(&mut wire, &mut *garble, tables, expect)?; // 8–10
        garble_time += time;
        let report = Report {
            role: Party::Garbler,
            computation: 1,
            output,
            total: output_at - start,
            online: None,
            ot: ot_time,
            paper: output_at - ot_end,
            output_at,
            garble: garble_time,
            eval: Duration::ZERO,
            frames: options.coarse.is_some(),
            lanes: wire.lane_count(),
            round_trips: wire.round_trips,
            sent: wire.sent,
            received: wire.received,
            channel: wire.stats(),
        };
        let delta = garble.global_offset();
        drop((garble, ahead, ot));
        if !theirs.open {
            close_after_the_last_message(&mut wire)?;
            // What the channel moved, this side's close record included.
            each(Report {
                channel: wire.stats(),
                ..report
            })?;
            return Ok(1);
        }
        each(report)?;
        let mut session = GarblerSession {
            circuit,
            options,
            input,
            sender,
            delta,
            garbling_key: header.garbling_key,
            labels: own_labels,
            sizes,
        };
        let computations = session.serve(&mut wire, each)?;
        close_after_the_last_message(&mut wire)?;
        Ok(computations)
    }
}

/// Gives the garbler its own input wires' labels, such that the label the evaluator derives
/// from the seed, `active[i]` = `S_i` ([`SeededLabels`]), is the one of each bit `x_i` of
/// `input`: for the schemes with a global offset `W^0 = S_i ⊕ x_i·Δ`, for the others
/// `W^{x_i} = S_i` and a fresh `W^{1−x_i}` from `prg` with the other lsb. `S_i` is uniform
/// and independent of `Δ` and of the other label, so the pairs are distributed as freshly
/// drawn ones (see "Security" in the crate docs).
fn set_own_labels(
    circuit: &Circuit,
    garble: &mut dyn Garble,
    active: Vec<Block>,
    input: &[bool],
    prg: &mut Prg,
) {
    let offset = garble.global_offset();
    let pairs: Vec<[Block; 2]> = active
        .into_iter()
        .zip(input)
        .map(|(s, &bit)| {
            let pair = match offset {
                Some(delta) => [s, s ^ delta],
                None => [s, prg.block().with_lsb(!s.lsb())],
            };
            if bit {
                [pair[1], pair[0]]
            } else {
                pair
            }
        })
        .collect();
    over_ranges(&wires_of(circuit, Party::Garbler), 0, &pairs, |w, p| {
        garble.set_input_labels(w, p)
    });
}

/// Input labels set per call of [`set_drawn_labels`]'s loop.
const LABEL_CHUNK: usize = 4096;

/// Hands the labels the OT drew for the evaluator's input wires to the garbler: `[q_j,
/// q_j ⊕ Δ]`.
pub(crate) fn set_drawn_labels(circuit: &Circuit, garble: &mut dyn Garble, labels: &OtLabels) {
    let (OtLabels::Drawn { zeros, .. }, Some(delta)) = (labels, garble.global_offset()) else {
        unreachable!("the OT draws labels only for schemes with a global offset")
    };
    // A chunk of pairs at a time: no buffer the size of the inputs, freshly mapped, in the
    // protocol's time.
    let wires = wires_of(circuit, Party::Evaluator);
    let mut pairs = Vec::with_capacity(LABEL_CHUNK);
    for (k, chunk) in zeros.chunks(LABEL_CHUNK).enumerate() {
        pairs.clear();
        pairs.extend(chunk.iter().map(|&q| [q, q ^ delta]));
        over_ranges(&wires, k * LABEL_CHUNK, &pairs, |w, p| {
            garble.set_input_labels(w, p)
        });
    }
}

/// Messages 3 and 1: sends this party's header, then reads and checks the evaluator's. The
/// header goes first, before anything is read: it costs no wait, and a protected evaluator
/// facing an unprotected garbler reads it where its handshake's answer belongs and names
/// the difference.
pub(crate) fn exchange_headers<C: Channel>(
    wire: &mut Wire<C>,
    ours: &SessionHeader,
) -> Result<SessionHeader, Error> {
    wire.send(ours)?;
    let theirs = wire.recv_header()?;
    ours.check_peer(&theirs)?;
    Ok(theirs)
}

/// What [`ot_while_garbling_ahead`] leaves: the time of this side's OT computation, the
/// OT's sender, the batches garbled ahead (ranges of the buffer) and their garbling time.
struct OtWhileAhead {
    ot_time: Duration,
    sender: Sender,
    batches: Vec<Range<usize>>,
    garble_time: Duration,
}

/// Messages 2 to 6 while a second thread garbles ahead (the batches it garbled are ranges
/// of `ahead`).
///
/// From the header check until the OT is done, the second thread garbles ahead (the tables
/// depend on neither the peer nor any input), holding at most `prefetch_bytes`, which
/// bounds the memory this costs; the tables are sent after the OT. It runs under
/// SCHED_IDLE: the OT is the session's critical path (the evaluator waits for each of this
/// side's OT messages), and on a machine whose cores are all busy (both parties on two
/// cores) a garbling thread of equal weight would take a share of the CPU from it; as an
/// idle-class thread it only fills time in which a core would otherwise wait (for the peer,
/// or the network).
fn ot_while_garbling_ahead<C: Channel>(
    wire: &mut Wire<C>,
    label_seed: Block,
    ot_setup: SenderSetup,
    ot: &mut OtReplies,
    garble: &mut dyn Garble,
    ahead: &mut Vec<u8>,
    limits: AheadLimits,
) -> Result<OtWhileAhead, Error> {
    let ot_done = AtomicBool::new(false);
    let answering = AtomicBool::new(false);
    std::thread::scope(|scope| {
        let (ot_done, answering) = (&ot_done, &answering);
        let ahead_thread =
            scope.spawn(move || garble_ahead(garble, ahead, limits, ot_done, answering));
        let ot_time = labels_and_ot(wire, label_seed, ot_setup, ot, answering);
        ot_done.store(true, Ordering::Release);
        let (batches, garble_time) = ahead_thread
            .join()
            .expect("the garbling thread does not panic");
        ot_time.map(|(ot_time, sender)| OtWhileAhead {
            ot_time,
            sender,
            batches,
            garble_time,
        })
    })
}

/// The garbling-ahead thread's work: garbles into `buf` until the OT is done, the prefetch
/// limit is reached or the tables end, and returns the batches (ranges of `buf`, each of
/// about `batch_bytes`, as garbled after the OT) and the time spent garbling.
pub(crate) fn garble_ahead(
    garble: &mut dyn Garble,
    buf: &mut Vec<u8>,
    limits: AheadLimits,
    ot_done: &AtomicBool,
    answering: &AtomicBool,
) -> (Vec<Range<usize>>, Duration) {
    idle_priority();
    // On this thread alone: the garbler's other threads would run at normal priority.
    garble.set_sequential(true);
    // Small steps, so that the end of the OT finds this thread at most one step from
    // stopping (an idle-class thread may wait long for a core); the steps are joined into
    // messages of about `batch_bytes`.
    let step = limits.batch_bytes.min(AHEAD_STEP);
    let mut batches: Vec<Range<usize>> = Vec::new();
    let (mut time, mut more, mut end) = (Duration::ZERO, true, 0);
    while more && end < limits.prefetch_bytes && !ot_done.load(Ordering::Acquire) {
        // When every table will be garbled ahead anyway, the base OT's answer (on every
        // core, the session's critical path) is left alone: measured on `aes128`, garbling
        // beside it, even in the idle class, delayed it by 1.3–1.9 ms. A larger circuit
        // needs every moment of garbling ahead.
        if limits.all_ahead && answering.load(Ordering::Acquire) {
            std::thread::sleep(Duration::from_micros(50));
            continue;
        }
        let start = end;
        let t = Instant::now();
        (end, more) = garble.garble_at(buf, start, step);
        time += t.elapsed();
        match batches.last_mut() {
            Some(last) if last.len() < limits.batch_bytes => last.end = end,
            _ if end > start => batches.push(start..end),
            _ => {}
        }
    }
    garble.set_sequential(false);
    (batches, time)
}

/// Messages 2 and 4 to 7: the OT, with the seed of this party's input labels in its first
/// flight. Returns the time of this side's OT computation (answering the base
/// OT, then the extension), not the waits in between, and the OT's sender, which an open
/// session extends further. `answering` is set while the base OT is answered.
pub(crate) fn labels_and_ot<C: Channel>(
    wire: &mut Wire<C>,
    label_seed: Block,
    setup: SenderSetup,
    ot: &mut OtReplies,
    answering: &AtomicBool,
) -> Result<(Duration, Sender), Error> {
    let (mut sender, base_time) = answer_base_ot(wire, setup, label_seed, answering)?; // 2, 4, 5
    let ext_time = answer_extension(wire, &mut sender, ot)?; // 6, 7
    Ok((base_time + ext_time, sender))
}

/// Messages 2, 4 and 5: reads the evaluator's base-OT point (sent with its header) and
/// answers it, with the seed of this party's input labels, in one flight.
/// Returns the OT's sender and the time the answer took (until it is flushed). `answering`
/// is set while it is computed.
pub(crate) fn answer_base_ot<C: Channel>(
    wire: &mut Wire<C>,
    setup: SenderSetup,
    label_seed: Block,
    answering: &AtomicBool,
) -> Result<(Sender, Duration), Error> {
    let BaseOtPoint(point) = wire.recv(())?;
    let t = Instant::now();
    answering.store(true, Ordering::Release);
    let answer = setup.respond(point);
    answering.store(false, Ordering::Release);
    let (sender, msg_b) = answer?;
    wire.send(&BaseOtAnswer(&msg_b))?;
    wire.send(&LabelSeed(label_seed))?;
    wire.flush()?;
    Ok((sender, t.elapsed()))
}

/// Messages 6 and 7: reads every chunk's extension matrix; under ordinary OT answers each
/// into its buffer of `ot.out` as it arrives and then sends the answers, and where the OT
/// draws the labels keeps each chunk's 0-labels. Returns the time this took.
pub(crate) fn answer_extension<C: Channel>(
    wire: &mut Wire<C>,
    sender: &mut Sender,
    ot: &mut OtReplies,
) -> Result<Duration, Error> {
    let OtReplies { labels, out } = ot;
    // Every chunk's matrix before any answer: the evaluator sends them all before it
    // reads, so answering early could fill both directions' buffers and deadlock. The work
    // still overlaps: this side answers chunk k while the evaluator extends chunk k + 1.
    let mut work = Duration::ZERO;
    for (k, chunk) in ot_chunks(labels.len()).enumerate() {
        let OtExtension(matrix) = wire.recv(chunk.len())?;
        let t = Instant::now();
        match labels {
            OtLabels::Pairs(pairs) => sender.extend_into(matrix, &pairs[chunk], &mut out[k])?,
            OtLabels::Chosen(zeros) => {
                sender.extend_correlated_into(matrix, &zeros[chunk], &mut out[k])?
            }
            OtLabels::Drawn { zeros, .. } => {
                sender.extend_cot_zeros_into(matrix, chunk.len(), zeros)?
            }
        }
        work += t.elapsed();
    }
    // The lanes, if the session has them and they are not open yet: the evaluator opened
    // its end right after message 6, so an accepting garbler finds them, and a connecting
    // one's open before message 7 lets an accepting evaluator go on to read it.
    wire.lanes()?;
    for out in out.iter() {
        wire.send(&OtReply(out))?;
    }
    Ok(work)
}

/// Message 8: sends the tables garbled ahead (`ahead_batches`, ranges of `ahead`), then
/// garbles and sends the rest. Returns the time spent garbling.
///
/// One thread garbles while this one sends (the copies into the kernel, and on loopback
/// the peer's side of TCP, cost about a third of what garbling costs, and need not wait
/// for it). Garbling ends with the last table, so a relay that ends well sent them all.
pub(crate) fn send_tables<C: Channel>(
    wire: &mut Wire<C>,
    garble: &mut dyn Garble,
    ahead: &[u8],
    ahead_batches: Vec<Range<usize>>,
    buffers: Vec<Vec<u8>>,
    (batch_bytes, coarse): (usize, bool),
) -> Result<Duration, Error> {
    let mut garble_time = Duration::ZERO;
    let mut ahead_batches = Some(ahead_batches);
    if coarse && wire.lane_count() > 0 {
        // The tables go on the lanes: what waits on the session's channel (message 7) goes
        // first, or an evaluator that waits for it would read no lane, and the lanes' flow
        // control would stop the garbler once their windows are full.
        wire.flush()?;
    }
    relay(
        buffers,
        |batch| {
            // Over the batch's old bytes (no memset); only growth past them is zeroed.
            let t = Instant::now();
            let (end, more) = garble.garble_at(batch, 0, batch_bytes);
            garble_time += t.elapsed();
            batch.truncate(end);
            Ok(more)
        },
        |batch| {
            for range in ahead_batches.take().into_iter().flatten() {
                send_table_bytes(wire, &ahead[range], coarse)?;
            }
            if batch.is_empty() {
                return Ok(());
            }
            send_table_bytes(wire, batch, coarse)?;
            // Each lane's last frames of a stage go now, not with its next frames: the
            // evaluator needs them to finish the stage, and a lane may carry nothing more
            // until the end (a glue stage's one piece is lane 0's).
            wire.flush_lanes()
        },
    )?;
    Ok(garble_time)
}

/// Sends garbled tables as message 8: one [`TableBatch`], or under coarse-grained
/// parallelism a [`TableFrame`] per frame (the coarse garbler writes whole frames only),
/// on the session's channel or, where the session has lanes, piece `i`'s frames of each
/// stage on lane `i mod lanes`.
fn send_table_bytes<C: Channel>(
    wire: &mut Wire<C>,
    tables: &[u8],
    coarse: bool,
) -> Result<(), Error> {
    if !coarse {
        return wire.send(&TableBatch(tables));
    }
    let lanes = wire.lane_count();
    for frame in coarse::frames(tables) {
        let frame = TableFrame(frame);
        if lanes == 0 {
            wire.send(&frame)?;
        } else {
            wire.send_on_lane(frame.piece() % lanes, &frame)?;
        }
    }
    Ok(())
}

/// Messages 8 to 10: the tables (those garbled ahead, ranges of the first slice, first;
/// then the rest through the batch buffers, batches of `batch_bytes`), the decoding bits,
/// then the evaluator's output. Returns the output, when it arrived and the time spent
/// garbling.
fn tables_to_output<C: Channel>(
    wire: &mut Wire<C>,
    garble: &mut dyn Garble,
    (ahead, ahead_batches, buffers): (&[u8], Vec<Range<usize>>, Vec<Vec<u8>>),
    (batching, output): ((usize, bool), OutputContext),
) -> Result<(Option<Vec<bool>>, Instant, Duration), Error> {
    let garble_time = send_tables(wire, garble, ahead, ahead_batches, buffers, batching)?; // 8
    wire.send(&DecodingBits(garble.decoding()))?; // 9
    let OutputBits(output) = wire.recv(output)?; // 10
    Ok((output, Instant::now(), garble_time))
}

/// What the evaluator's message 10 holds under `options` for `circuit`.
fn output_context(options: &Options, circuit: &Circuit) -> OutputContext {
    OutputContext {
        mode: options.output,
        bits: circuit.n_outputs(),
    }
}

/// The garbler's side of an open session after its first computation.
pub(crate) struct GarblerSession<'c> {
    pub(crate) circuit: &'c Circuit,
    pub(crate) options: Options,
    /// This party's input, the same for every computation.
    pub(crate) input: Vec<bool>,
    /// The OT extension's sender, as the last computation left it.
    pub(crate) sender: Sender,
    /// The session's `Δ` (schemes with a global offset).
    pub(crate) delta: Option<Block>,
    /// The session's key of the garbling scheme's hash.
    pub(crate) garbling_key: Block,
    pub(crate) labels: SeededLabels,
    pub(crate) sizes: Sizes,
}

impl GarblerSession<'_> {
    /// Serves computations until the evaluator ends the session (message 11 with 0), each
    /// report to `each`; returns the number of computations, the first included.
    pub(crate) fn serve<C: Channel>(
        &mut self,
        wire: &mut Wire<C>,
        each: &mut dyn FnMut(Report) -> Result<(), Error>,
    ) -> Result<u64, Error> {
        let mut done = 1;
        loop {
            let before = Snapshot::of(wire);
            let NextComputation(k) = wire.recv(())?; // 11
            if k == 0 {
                return Ok(done);
            }
            if k != done + 1 {
                return Err(Error::Malformed {
                    what: NextComputation::NAME,
                    problem: format!("computation {k} announced where {} is next", done + 1),
                });
            }
            let report = self.compute(wire, k, before)?;
            done = k;
            each(report)?;
        }
    }

    /// Computation `k`, its message 11 read: messages 6 to 10.
    fn compute<C: Channel>(
        &mut self,
        wire: &mut Wire<C>,
        k: u64,
        before: Snapshot,
    ) -> Result<Report, Error> {
        let start = Instant::now();
        let (circuit, options) = (self.circuit, &self.options);
        let mut prg = Prg::from_entropy();
        let from = GarbleStart {
            offset: self.delta,
            tweak_base: self.sizes.tweak_base(k),
            hash_key: Some(self.garbling_key),
        };
        let mut garble = garbler_for(circuit, options, &mut prg, from);
        set_own_labels(
            circuit,
            &mut *garble,
            self.labels.next(),
            &self.input,
            &mut prg,
        );
        let mut ot = OtReplies::new(LabelTransfer::further(options.scheme), &*garble, circuit);
        let ot_time = answer_extension(wire, &mut self.sender, &mut ot)?; // 6, 7
        if let OtLabels::Drawn { .. } = ot.labels {
            set_drawn_labels(circuit, &mut *garble, &ot.labels);
        }
        let ot_end = Instant::now();
        let tables = (
            &[][..],
            Vec::new(),
            batch_buffers(options, self.sizes.table_bytes),
        );
        let batching = (options.batch_bytes, options.coarse.is_some());
        let expect = (batching, output_context(options, circuit));
        let (output, output_at, garble_time) =
            tables_to_output(wire, &mut *garble, tables, expect)?; // 8–10
        let counted = before.until_now(wire);
        Ok(Report {
            role: Party::Garbler,
            computation: k,
            output,
            total: output_at - start,
            online: None,
            ot: ot_time,
            paper: output_at - ot_end,
            output_at,
            garble: garble_time,
            eval: Duration::ZERO,
            frames: options.coarse.is_some(),
            lanes: wire.lane_count(),
            round_trips: counted.round_trips,
            sent: counted.sent,
            received: counted.received,
            channel: counted.channel,
        })
    }
}
