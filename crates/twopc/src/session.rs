//! The two parties: set-up without a peer, then the message flow of the crate docs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use transputation_circuits::{Circuit, Party, Stats, WireId};
use transputation_garble::aes::Backend;
use transputation_garble::prg::Prg;
use transputation_garble::{decode, Block, Evaluate, Garble, Scheme};
use transputation_transport::{ByteCounts, Channel, Framed};

use crate::header::{SessionHeader, HEADER_LEN};
use crate::{Error, OutputMode};

/// OTs per chunk of the OT extension (messages 5 and 6 of the crate docs): small enough
/// that the garbler starts on the ciphertexts while the evaluator still extends, large
/// enough that per-message costs vanish.
pub const OT_CHUNK: usize = 8192;

/// The garbler's step while it garbles ahead during the OT (see `Garbler::run`).
const AHEAD_STEP: usize = 64 << 10;

/// Batches of tables in flight between the garbler's garbling and sending threads, and
/// between the evaluator's receiving and evaluating threads, after the OT (see the `run`
/// methods): enough that neither thread waits for the other on a short hiccup.
const SEND_QUEUE: usize = 3;

/// Settings both parties must agree on (checked through the session header), and local
/// tuning.
#[derive(Clone, Debug)]
pub struct Options {
    /// The garbling scheme.
    pub scheme: Scheme,
    /// Who learns the output.
    pub output: OutputMode,
    /// The garbler's batch of tables per message (default 256 KiB): small enough for the
    /// evaluator to start early, large enough to keep per-message costs low. Batches end at
    /// the garbling windows, so a message may be up to one window larger.
    pub batch_bytes: usize,
    /// Tables the garbler produces ahead while it waits for the evaluator's OT message
    /// (default 16 MiB), sent once the OT is done; bounds the memory this costs, which is
    /// allocated and touched when the garbler is made (at most the circuit's tables plus a
    /// batch).
    pub prefetch_bytes: usize,
    /// The AES implementation.
    pub backend: Backend,
}

impl Options {
    /// Default settings for a scheme.
    pub fn new(scheme: Scheme) -> Self {
        Options {
            scheme,
            output: OutputMode::Both,
            batch_bytes: 256 << 10,
            prefetch_bytes: 16 << 20,
            backend: Backend::detect(),
        }
    }
}

/// Bytes of one direction of a session, by part (payload of the messages in the crate
/// docs; `framing` is their 8-byte length prefixes).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ByteParts {
    /// Message 1.
    pub header: u64,
    /// Messages 2–5 of this direction.
    pub ot: u64,
    /// The garbler's input labels (message 3).
    pub labels: u64,
    /// Garbled tables and masks (message 7).
    pub tables: u64,
    /// Decoding bits (message 8).
    pub decoding: u64,
    /// The output sent back (message 9).
    pub output: u64,
    /// 8 bytes per frame.
    pub framing: u64,
}

impl ByteParts {
    /// Every part together: what the framed messages took, before the transport's own
    /// headers.
    pub fn total(&self) -> u64 {
        self.header
            + self.ot
            + self.labels
            + self.tables
            + self.decoding
            + self.output
            + self.framing
    }
}

/// What one party measured in a session.
#[derive(Clone, Debug)]
pub struct Report {
    /// The party.
    pub role: Party,
    /// The output bits, groups in order; `None` for a garbler under
    /// [`OutputMode::Evaluator`].
    pub output: Option<Vec<bool>>,
    /// Protocol time: from the call to `run` on a connected channel until this party holds
    /// its output (the garbler: until the evaluator's last message arrived).
    pub total: Duration,
    /// Oblivious transfer: the evaluator from sending its first OT message until it holds
    /// its labels (the garbler's input labels, which arrive in between, included); the
    /// garbler its own OT computation (answering the base OT, then the
    /// ciphertexts), not the wait in between, in which it garbles ahead.
    pub ot: Duration,
    /// Time inside the garbling scheme (the garbler): wall time of its calls, so it counts
    /// the time the garbling threads waited for a core, too.
    pub garble: Duration,
    /// Time inside evaluation (the evaluator).
    pub eval: Duration,
    /// Bytes this party sent, by part.
    pub sent: ByteParts,
    /// Bytes this party received, by part.
    pub received: ByteParts,
    /// The channel's own counts (framed messages plus any transport headers).
    pub channel: ByteCounts,
}

/// Counts payload and frames while sending and receiving.
struct Wire<C: Channel> {
    ch: Framed<C>,
    sent: ByteParts,
    received: ByteParts,
    buf: Vec<u8>,
}

/// Which part a message belongs to, for [`ByteParts`].
#[derive(Clone, Copy)]
enum Part {
    Header,
    Ot,
    Labels,
    Tables,
    Decoding,
    Output,
}

fn add(parts: &mut ByteParts, part: Part, n: usize) {
    let n = n as u64;
    match part {
        Part::Header => parts.header += n,
        Part::Ot => parts.ot += n,
        Part::Labels => parts.labels += n,
        Part::Tables => parts.tables += n,
        Part::Decoding => parts.decoding += n,
        Part::Output => parts.output += n,
    }
    parts.framing += 8;
}

impl<C: Channel> Wire<C> {
    /// A wire over `ch` that receives into `buf` (a buffer made before the session, large
    /// enough for the messages that are not tables).
    fn new(ch: C, buf: Vec<u8>) -> Self {
        Wire {
            ch: Framed::new(ch),
            sent: ByteParts::default(),
            received: ByteParts::default(),
            buf,
        }
    }

    fn send(&mut self, part: Part, msg: &[u8]) -> Result<(), Error> {
        self.ch.send_message(msg)?;
        add(&mut self.sent, part, msg.len());
        Ok(())
    }

    /// Receives the peer's session header, naming a difference in protection.
    fn recv_header(&mut self) -> Result<(), Error> {
        let r = self.recv_exact(Part::Header, "session header", HEADER_LEN);
        r.map_err(|e| crate::header::name_protection_mismatch(e, self.ch.stats().received))
    }

    /// Receives one message into `self.buf` and checks that it has exactly `len` bytes.
    fn recv_exact(&mut self, part: Part, what: &'static str, len: usize) -> Result<(), Error> {
        self.ch.recv_message_into(&mut self.buf)?;
        add(&mut self.received, part, self.buf.len());
        if self.buf.len() != len {
            return Err(Error::Malformed {
                what,
                problem: format!("{} bytes instead of {len}", self.buf.len()),
            });
        }
        Ok(())
    }
}

/// Bits packed eight to a byte, bit `i` in byte `i / 8` at weight `2^(i % 8)`.
fn pack(bits: &[bool]) -> Vec<u8> {
    let mut out = vec![0u8; bits.len().div_ceil(8)];
    for (i, &b) in bits.iter().enumerate() {
        out[i / 8] |= u8::from(b) << (i % 8);
    }
    out
}

/// The inverse of [`pack`]; padding bits must be zero.
fn unpack(bytes: &[u8], n: usize, what: &'static str) -> Result<Vec<bool>, Error> {
    let bits: Vec<bool> = (0..n).map(|i| bytes[i / 8] >> (i % 8) & 1 == 1).collect();
    if pack(&bits) != bytes {
        return Err(Error::Malformed {
            what,
            problem: "padding bits are not zero".to_string(),
        });
    }
    Ok(bits)
}

/// What the garbler transfers by OT for the evaluator's input wires, wire order.
enum OtLabels {
    /// Both labels of each wire, by ordinary OT (msg_y): schemes without a global offset.
    Pairs(Vec<[Block; 2]>),
    /// The 0-label of each wire, by correlated OT with the scheme's `Δ` (msg_d, half the
    /// bytes): the evaluator gets `W^0 ⊕ r·Δ` (`transputation-ot`, "Correlated OT").
    Zeros(Vec<Block>),
}

impl OtLabels {
    /// The number of OTs.
    fn len(&self) -> usize {
        match self {
            OtLabels::Pairs(p) => p.len(),
            OtLabels::Zeros(z) => z.len(),
        }
    }
}

/// The OTs of each chunk (messages 5 and 6), as ranges of the evaluator's input bits.
fn ot_chunks(m: usize) -> impl Iterator<Item = std::ops::Range<usize>> {
    (0..m)
        .step_by(OT_CHUNK)
        .map(move |start| start..(start + OT_CHUNK).min(m))
}

/// Bytes of message 6 for `k` OTs under `scheme`: correlated OT (16 per OT) for the
/// schemes with a global offset, ordinary OT (32 per OT) for the others. Summed over the
/// chunks, with `k` the evaluator's input bits, it is what the garbler sends for the OT
/// beyond msg_b.
pub fn ot_reply_len(scheme: Scheme, k: usize) -> usize {
    if scheme.has_global_offset() {
        transputation_ot::msg_d_len(k)
    } else {
        transputation_ot::msg_y_len(k)
    }
}

/// Puts the calling thread in Linux's SCHED_IDLE class, where it runs only on a core that
/// has nothing else to run. Best effort: where the call fails the thread keeps its class.
/// A thread may always lower its own class; it cannot return without privilege, so only a
/// thread that ends with its idle work calls this.
#[allow(unsafe_code)]
fn idle_priority() {
    #[cfg(target_os = "linux")]
    {
        let param = libc::sched_param { sched_priority: 0 };
        // SAFETY: `param` is a valid sched_param for the call's duration; pid 0 names the
        // calling thread; the call has no other effect on memory.
        let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_IDLE, &param) };
    }
}

/// An empty buffer of `capacity` bytes whose pages are already mapped.
fn touched(capacity: usize) -> Vec<u8> {
    touched_vec(capacity, TOUCH_BYTE)
}

/// `len` bytes of no meaning whose pages are already mapped, for a buffer that is only
/// ever written over in place and read up to where it was written.
fn filled(len: usize) -> Vec<u8> {
    filled_vec(len, TOUCH_BYTE)
}

/// What [`touched`] and [`filled`] write: not zero (see [`filled_vec`]).
const TOUCH_BYTE: u8 = 0xa5;

/// An empty vector with room for `capacity` values whose pages are already mapped: a
/// session's buffers are made before it starts, since every fresh page costs a fault on
/// first write (about a microsecond here, a thousand per 4 MiB).
fn touched_vec<T: Copy>(capacity: usize, fill: T) -> Vec<T> {
    let mut v = filled_vec(capacity, fill);
    v.clear();
    v
}

/// `len` copies of `fill`, every page written now.
fn filled_vec<T: Copy>(len: usize, fill: T) -> Vec<T> {
    // Not `vec![0; n]`: for zero integers that is a zeroed allocation, whose pages the
    // kernel maps only on first write (in the session: page faults were a fifth of the
    // evaluator's samples while it received the garbler's labels, 2–3 ms of its CPU on the
    // MinCut size). A non-zero fill also keeps the kernel from taking back zero-filled pages
    // of a huge page as unused. The opaque value makes the writes real.
    let mut v = Vec::with_capacity(len);
    v.resize(len, std::hint::black_box(fill));
    v
}

/// Moves byte buffers from `produce`, on a thread of its own, to `consume`, on the calling
/// thread, through bounded queues: the `buffers` go round between the two, so memory stays
/// at their number, and neither side waits for the other while a buffer is free.
/// `produce` fills a buffer, which holds what its last round left in it (so that a producer
/// that overwrites it, as a receive does, need not have it zeroed first: 32 MB of tables
/// cost ~1.5 ms of memset), and says whether more follow (it is called at least
/// once, and `consume` then gets at least that buffer); the relay ends after the last
/// buffer, or when a side fails: that closes the queues, and the other side stops at its
/// next buffer. Returns the producer's error, else the consumer's.
fn relay<E: Send>(
    buffers: Vec<Vec<u8>>,
    mut produce: impl FnMut(&mut Vec<u8>) -> Result<bool, E> + Send,
    mut consume: impl FnMut(&[u8]) -> Result<(), E>,
) -> Result<(), E> {
    let (full_tx, full_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(buffers.len());
    let (empty_tx, empty_rx) = std::sync::mpsc::sync_channel::<Vec<u8>>(buffers.len());
    for b in buffers {
        empty_tx.send(b).expect("room for every buffer");
    }
    std::thread::scope(|scope| {
        let producer = scope.spawn(move || -> Result<(), E> {
            while let Ok(mut buf) = empty_rx.recv() {
                let more = produce(&mut buf)?;
                if full_tx.send(buf).is_err() || !more {
                    break;
                }
            }
            Ok(())
        });
        let mut consumed = Ok(());
        while let Ok(buf) = full_rx.recv() {
            consumed = consume(&buf);
            if consumed.is_err() {
                break;
            }
            // The producer may have finished: a buffer nobody takes is dropped.
            let _ = empty_tx.send(buf);
        }
        drop((full_rx, empty_tx));
        producer
            .join()
            .expect("the producing thread does not panic")?;
        consumed
    })
}

/// The input wires of `party`, in wire order, as ranges.
fn wires_of(circuit: &Circuit, party: Party) -> Vec<std::ops::Range<WireId>> {
    circuit
        .input_ranges()
        .filter(|(g, _)| g.party == party)
        .map(|(_, r)| r)
        .collect()
}

/// Writes `labels` straight into the evaluator's slots of a party's input bits
/// `first .. first + labels.len()` (counted over its input wires `ranges`, in wire order).
fn put_labels(
    evaluate: &mut dyn Evaluate,
    ranges: &[std::ops::Range<WireId>],
    mut first: usize,
    mut labels: impl ExactSizeIterator<Item = Block>,
) {
    for r in ranges {
        if labels.len() == 0 {
            break;
        }
        if first >= r.len() {
            first -= r.len();
            continue;
        }
        let n = (r.len() - first).min(labels.len());
        let slots = evaluate.input_labels_mut(r.start + first as WireId, n);
        for (slot, label) in slots.iter_mut().zip(&mut labels) {
            *slot = label;
        }
        first = 0;
    }
    debug_assert!(labels.len() == 0, "labels past the party's last input wire");
}

fn check_input(circuit: &Circuit, party: Party, bits: &[bool]) -> Result<(), Error> {
    let want = circuit.party_input_bits(party);
    if bits.len() != want {
        return Err(Error::Input(format!(
            "the {party} has {want} input bits in this circuit, {} given",
            bits.len()
        )));
    }
    Ok(())
}

/// The garbler, ready to run once connected.
pub struct Garbler<'c> {
    circuit: &'c Circuit,
    options: Options,
    header: SessionHeader,
    garble: Box<dyn Garble + 'c>,
    /// The labels of the garbler's input values, wire order, 16 bytes each.
    own_labels: Vec<u8>,
    /// What the OT transfers for the evaluator's input wires.
    ot_labels: OtLabels,
    /// The half of the base OT that needs no message from the evaluator.
    ot_setup: transputation_ot::SenderSetup,
    /// One buffer per OT chunk for its ciphertexts, allocated and touched before the
    /// session so that the protocol does not pay for page faults.
    ot_out: Vec<Vec<u8>>,
    /// The tables garbled ahead during the OT, batch after batch, written over in place:
    /// allocated and touched before the session (16 MiB would cost 4,096 page faults).
    ahead: Vec<u8>,
    /// The batch buffers that circulate between garbling and sending after the OT,
    /// touched before the session too.
    batches: Vec<Vec<u8>>,
    /// The receive buffer: room for a chunk's OT extension matrix.
    recv_buf: Vec<u8>,
    /// Whether every table fits in what may be garbled ahead: then garbling ahead waits
    /// while this party answers the base OT (see `Garbler::run`).
    all_ahead: bool,
}

impl<'c> Garbler<'c> {
    /// Plans the garbling of `circuit`, draws the labels, and encodes `input` (one bit per
    /// input wire the garbler owns, in wire order).
    pub fn new(circuit: &'c Circuit, options: Options, input: &[bool]) -> Result<Self, Error> {
        check_input(circuit, Party::Garbler, input)?;
        let mut prg = Prg::from_entropy();
        let garble = options.scheme.garbler(circuit, &mut prg, options.backend);
        let mut own_labels = Vec::with_capacity(16 * input.len());
        let mut bits = input.iter();
        for r in wires_of(circuit, Party::Garbler) {
            for w in r {
                let bit = *bits.next().expect("checked length");
                own_labels.extend_from_slice(&garble.input_labels(w)[usize::from(bit)].to_bytes());
            }
        }
        let evaluator_wires = wires_of(circuit, Party::Evaluator).into_iter().flatten();
        let mut rng = rand::thread_rng();
        let (ot_labels, ot_setup) = match garble.global_offset() {
            Some(delta) => (
                OtLabels::Zeros(evaluator_wires.map(|w| garble.input_labels(w)[0]).collect()),
                transputation_ot::Sender::setup_correlated(delta, &mut rng),
            ),
            None => (
                OtLabels::Pairs(evaluator_wires.map(|w| garble.input_labels(w)).collect()),
                transputation_ot::Sender::setup(&mut rng),
            ),
        };
        let header = SessionHeader::new(Party::Garbler, circuit, options.scheme, options.output);
        let ot_out = ot_chunks(ot_labels.len())
            .map(|c| touched(ot_reply_len(options.scheme, c.len())))
            .collect();
        // Room for what can be garbled ahead: the prefetch limit (or all the tables, if
        // fewer) plus the batch that crosses it, which may end up to a window later.
        let stats = Stats::of(circuit);
        let tables = options.scheme.table_bytes(&stats) + options.scheme.mask_bytes(&stats);
        let tables = usize::try_from(tables).unwrap_or(usize::MAX);
        let ahead_room = options
            .prefetch_bytes
            .min(tables)
            .saturating_add(options.batch_bytes)
            .saturating_add(1 << 20);
        let batches = (0..SEND_QUEUE)
            .map(|_| touched(options.batch_bytes.saturating_add(1 << 20)))
            .collect();
        let recv_buf = touched(transputation_ot::msg_u_len(OT_CHUNK).max(HEADER_LEN));
        let all_ahead = tables <= options.prefetch_bytes;
        Ok(Garbler {
            circuit,
            options,
            header,
            garble,
            own_labels,
            ot_labels,
            ot_setup,
            ot_out,
            ahead: filled(ahead_room),
            batches,
            recv_buf,
            all_ahead,
        })
    }

    /// Messages 3 to 6: the garbler's input labels and the OT. Returns the time of this
    /// side's OT computation (answering the base OT, then the extension), not the waits in
    /// between.
    /// `answering` is set while the base OT is answered.
    fn labels_and_ot<C: Channel>(
        own_labels: &[u8],
        ot_setup: transputation_ot::SenderSetup,
        ot_labels: &OtLabels,
        ot_out: &mut [Vec<u8>],
        wire: &mut Wire<C>,
        answering: &AtomicBool,
    ) -> Result<Duration, Error> {
        // This party's input labels go first, while the evaluator only reads (it sent its
        // header and base-OT point at once and waits for ours): they cross while the base
        // OT is computed here, and the evaluator holds them when its OT ends. (Later, once
        // the evaluator sends its extension matrix, both parties sending at once could
        // block each on a full buffer the other does not read.)
        wire.send(Part::Labels, own_labels)?;
        wire.ch.flush()?;
        wire.recv_exact(Part::Ot, "OT message", transputation_ot::MSG_A_LEN)?;
        let t = Instant::now();
        answering.store(true, Ordering::Release);
        let answer = ot_setup.respond(&wire.buf);
        answering.store(false, Ordering::Release);
        let (mut sender, msg_b) = answer?;
        wire.send(Part::Ot, &msg_b)?;
        wire.ch.flush()?;
        let mut work = t.elapsed();

        // Every chunk's matrix before any answer: the evaluator sends them all before it
        // reads, so answering early could fill both directions' buffers and deadlock. The
        // work still overlaps: this side answers chunk k while the evaluator extends chunk
        // k + 1.
        for (chunk, out) in ot_chunks(ot_labels.len()).zip(ot_out.iter_mut()) {
            let len = transputation_ot::msg_u_len(chunk.len());
            wire.recv_exact(Part::Ot, "OT extension matrix", len)?;
            let t = Instant::now();
            match ot_labels {
                OtLabels::Pairs(pairs) => sender.extend_into(&wire.buf, &pairs[chunk], out)?,
                OtLabels::Zeros(zeros) => {
                    sender.extend_correlated_into(&wire.buf, &zeros[chunk], out)?;
                }
            }
            work += t.elapsed();
        }
        for out in ot_out.iter() {
            wire.send(Part::Ot, out)?;
        }
        Ok(work)
    }

    /// Runs the protocol on a connected channel; see the crate docs for the messages.
    pub fn run<C: Channel>(self, ch: C) -> Result<Report, Error> {
        let start = Instant::now();
        let Garbler {
            circuit,
            options,
            header,
            garble: mut garbler,
            own_labels,
            ot_labels,
            ot_setup,
            mut ot_out,
            ahead: mut ahead_buf,
            batches,
            recv_buf,
            all_ahead,
        } = self;
        let mut wire = Wire::new(ch, recv_buf);
        wire.send(Part::Header, &header.encode())?;
        wire.recv_header()?;
        header.check_peer(&SessionHeader::decode(&wire.buf)?)?;

        // From the header check until the OT is done, a second thread garbles ahead (the
        // tables depend on neither the peer nor any input), holding at most `prefetch_bytes`,
        // which bounds the memory this costs; the tables are sent after the OT. It runs
        // under SCHED_IDLE: the OT is the session's critical path (the evaluator waits for
        // each of this side's OT messages), and on a machine whose cores are all busy (both
        // parties on two cores) a garbling thread of equal weight would take a share of the
        // CPU from it; as an idle-class thread it only fills time in which a core would
        // otherwise wait (for the peer, or the network).
        let ot_done = AtomicBool::new(false);
        let answering = AtomicBool::new(false);
        let (ot, ahead, mut garble) = std::thread::scope(|scope| {
            let (ot_done, answering) = (&ot_done, &answering);
            let garbler = &mut garbler;
            let buf = &mut ahead_buf;
            let (batch_bytes, prefetch_bytes) = (options.batch_bytes, options.prefetch_bytes);
            let ahead_thread = scope.spawn(move || {
                idle_priority();
                // Small steps, so that the end of the OT finds this thread at most one step
                // from stopping (an idle-class thread may wait long for a core); the steps
                // are joined into messages of about `batch_bytes`, as garbled after the OT.
                let step = batch_bytes.min(AHEAD_STEP);
                let mut batches: Vec<std::ops::Range<usize>> = Vec::new();
                let (mut time, mut more, mut end) = (Duration::ZERO, true, 0);
                while more && end < prefetch_bytes && !ot_done.load(Ordering::Acquire) {
                    // When every table will be garbled ahead anyway, the base OT's answer
                    // (on every core, the session's critical path) is left alone: measured
                    // on `aes128`, garbling beside it, even in the idle class, delayed it by
                    // 1.3–1.9 ms. A larger circuit needs every moment of garbling ahead.
                    if all_ahead && answering.load(Ordering::Acquire) {
                        std::thread::sleep(Duration::from_micros(50));
                        continue;
                    }
                    let start = end;
                    let t = Instant::now();
                    (end, more) = garbler.garble_at(buf, start, step);
                    time += t.elapsed();
                    match batches.last_mut() {
                        Some(last) if last.len() < batch_bytes => last.end = end,
                        _ if end > start => batches.push(start..end),
                        _ => {}
                    }
                }
                (batches, time)
            });
            let ot = Self::labels_and_ot(
                &own_labels,
                ot_setup,
                &ot_labels,
                &mut ot_out,
                &mut wire,
                answering,
            );
            ot_done.store(true, Ordering::Release);
            let (ahead, garble) = ahead_thread
                .join()
                .expect("the garbling thread does not panic");
            ot.map(|ot| (ot, ahead, garble))
        })?;

        // The rest of the tables: one thread garbles while this one sends, first the tables
        // garbled ahead, then the rest (the copies into the kernel, and on loopback the
        // peer's side of TCP, cost about a third of what garbling costs, and need not wait
        // for it). Garbling ends with the last table, so a relay that ends well sent them
        // all.
        let batch_bytes = options.batch_bytes;
        let garble_time = &mut garble;
        let mut ahead = Some(ahead);
        relay(
            batches,
            |batch| {
                // Over the batch's old bytes (no memset); only growth past them is zeroed.
                let t = Instant::now();
                let (end, more) = garbler.garble_at(batch, 0, batch_bytes);
                *garble_time += t.elapsed();
                batch.truncate(end);
                Ok(more)
            },
            |batch| {
                for range in ahead.take().into_iter().flatten() {
                    wire.send(Part::Tables, &ahead_buf[range])?;
                }
                if batch.is_empty() {
                    return Ok(());
                }
                wire.send(Part::Tables, batch)
            },
        )?;
        wire.send(Part::Decoding, &pack(&garbler.decoding()))?;

        let n_out = circuit.n_outputs();
        let output = match options.output {
            OutputMode::Both => {
                wire.recv_exact(Part::Output, "output", n_out.div_ceil(8))?;
                Some(unpack(&wire.buf, n_out, "output")?)
            }
            OutputMode::Evaluator => {
                wire.recv_exact(Part::Output, "end of session", 0)?;
                None
            }
        };
        let total = start.elapsed();
        // The evaluator sent the session's last message and may have closed its end
        // already (a `udt` socket then refuses further bytes): a peer that is gone can no
        // longer be told that our stream ends, and it needs nothing more from us.
        match wire.ch.close() {
            Ok(()) | Err(transputation_transport::Error::Closed { .. }) => {}
            Err(e) => return Err(e.into()),
        }
        Ok(Report {
            role: Party::Garbler,
            output,
            total,
            ot,
            garble,
            eval: Duration::ZERO,
            sent: wire.sent,
            received: wire.received,
            channel: wire.ch.stats(),
        })
    }
}

/// The evaluator, ready to run once connected.
pub struct Evaluator<'c> {
    circuit: &'c Circuit,
    options: Options,
    header: SessionHeader,
    evaluate: Box<dyn Evaluate + 'c>,
    /// The evaluator's input, one bit per input wire it owns, wire order: its OT choices.
    choices: Vec<bool>,
    /// Bytes of tables and masks the garbler will send.
    table_bytes: usize,
    /// The OT receiver's first step (it needs no message from the garbler).
    ot_start: (transputation_ot::Receiver, Vec<u8>),
    /// The message buffers that circulate between receiving and evaluating the tables,
    /// touched before the session.
    batches: Vec<Vec<u8>>,
    /// The receive buffer: room for the garbler's input labels and every OT message.
    recv_buf: Vec<u8>,
    /// Room for one OT chunk's labels.
    ot_labels: Vec<Block>,
    /// The OT extension's row buffers, one per chunk.
    ot_rows: Vec<Vec<u128>>,
}

impl<'c> Evaluator<'c> {
    /// Plans the evaluation of `circuit` for `input` (one bit per input wire the evaluator
    /// owns, in wire order).
    pub fn new(circuit: &'c Circuit, options: Options, input: &[bool]) -> Result<Self, Error> {
        check_input(circuit, Party::Evaluator, input)?;
        let placeholder = vec![Block::ZERO; circuit.n_inputs()];
        let evaluate = options
            .scheme
            .evaluator(circuit, &placeholder, options.backend);
        let header = SessionHeader::new(Party::Evaluator, circuit, options.scheme, options.output);
        let stats = Stats::of(circuit);
        let table_bytes = options.scheme.table_bytes(&stats) + options.scheme.mask_bytes(&stats);
        let batches = (0..SEND_QUEUE)
            .map(|_| touched(options.batch_bytes.saturating_add(1 << 20)))
            .collect();
        let (n_g, n_e) = (
            circuit.party_input_bits(Party::Garbler),
            circuit.party_input_bits(Party::Evaluator),
        );
        let recv_buf = touched(
            (16 * n_g)
                .max(ot_reply_len(options.scheme, OT_CHUNK))
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
            ot_start: transputation_ot::Receiver::start(&mut rand::thread_rng()),
            batches,
            recv_buf,
            ot_labels: touched_vec(OT_CHUNK.min(n_e), Block(u128::MAX)),
            ot_rows,
            table_bytes: usize::try_from(table_bytes).map_err(|_| {
                Error::Input("the garbled circuit is too large for this machine".into())
            })?,
        })
    }

    /// Runs the protocol on a connected channel; see the crate docs for the messages.
    pub fn run<C: Channel>(mut self, ch: C) -> Result<Report, Error> {
        let start = Instant::now();
        let mut wire = Wire::new(ch, std::mem::take(&mut self.recv_buf));
        wire.send(Part::Header, &self.header.encode())?;
        let (receiver, msg_a) = self.ot_start;
        wire.send(Part::Ot, &msg_a)?;
        let ot_start = Instant::now();
        wire.recv_header()?;
        self.header.check_peer(&SessionHeader::decode(&wire.buf)?)?;

        let n_g = self.circuit.party_input_bits(Party::Garbler);
        wire.recv_exact(Part::Labels, "garbler's input labels", 16 * n_g)?;
        // Decoded straight into the evaluator's input slots (a copy through a vector of
        // labels first cost ~0.5 ms of memory traffic on the MinCut size).
        let garbler_wires = wires_of(self.circuit, Party::Garbler);
        let labels = wire.buf.chunks_exact(16).map(Block::read);
        put_labels(&mut *self.evaluate, &garbler_wires, 0, labels);

        wire.recv_exact(Part::Ot, "OT message", transputation_ot::MSG_B_LEN)?;
        let mut receiver = receiver.base(&wire.buf)?;
        // Reversed: the extension takes its spare buffers from the back, chunk 0's first.
        receiver.add_row_buffers(self.ot_rows.drain(..).rev());
        let mut msg_u = Vec::new();
        for choices in self.choices.chunks(OT_CHUNK) {
            receiver.extend_into(choices, &mut msg_u);
            wire.send(Part::Ot, &msg_u)?;
            // Let the garbler start on this chunk while the next is extended.
            wire.ch.flush()?;
        }

        // Each chunk's labels through a chunk-sized buffer (hot in the cache) into the
        // evaluator's input slots.
        let mut labels = std::mem::take(&mut self.ot_labels);
        let (ranges, mut done) = (wires_of(self.circuit, Party::Evaluator), 0);
        let correlated = self.options.scheme.has_global_offset();
        while let Some(k) = receiver.next_pending() {
            let len = ot_reply_len(self.options.scheme, k);
            labels.clear();
            if correlated {
                wire.recv_exact(Part::Ot, "OT label corrections", len)?;
                receiver.receive_correlated_into(&wire.buf, &mut labels)?;
            } else {
                wire.recv_exact(Part::Ot, "OT ciphertexts", len)?;
                receiver.receive_into(&wire.buf, &mut labels)?;
            }
            put_labels(&mut *self.evaluate, &ranges, done, labels.iter().copied());
            done += labels.len();
        }
        let ot = ot_start.elapsed();

        // One thread receives the batches while this one evaluates them (the copies out of
        // the kernel need not wait for evaluation). Receiving ends with the last table
        // byte; more bytes than the circuit has, or a failed receive, end it with an error.
        let expected = self.table_bytes;
        let mut eval = Duration::ZERO;
        let mut pending: Vec<u8> = Vec::new();
        let mut received = 0usize;
        let evaluate = &mut self.evaluate;
        let wire_ref = &mut wire;
        relay(
            std::mem::take(&mut self.batches),
            |msg| {
                if received == expected {
                    // Nothing to receive (a circuit without tables): an empty batch.
                    msg.clear();
                    return Ok(false);
                }
                wire_ref.ch.recv_message_into(msg)?;
                add(&mut wire_ref.received, Part::Tables, msg.len());
                received += msg.len();
                if received > expected {
                    return Err(Error::Malformed {
                        what: "garbled tables",
                        problem: format!(
                            "more than the {expected} bytes this circuit and scheme have"
                        ),
                    });
                }
                Ok(received < expected)
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
        self.evaluate.feed(&pending)?;
        self.evaluate.check_done(self.circuit)?;
        let labels = self.evaluate.output_labels()?;
        eval += t.elapsed();

        let n_out = self.circuit.n_outputs();
        wire.recv_exact(Part::Decoding, "decoding bits", n_out.div_ceil(8))?;
        let decoding = unpack(&wire.buf, n_out, "decoding bits")?;
        let output = decode(&labels, &decoding);
        let total = start.elapsed();
        match self.options.output {
            OutputMode::Both => wire.send(Part::Output, &pack(&output))?,
            OutputMode::Evaluator => wire.send(Part::Output, &[])?,
        }
        wire.ch.close()?;
        Ok(Report {
            role: Party::Evaluator,
            output: Some(output),
            total,
            ot,
            garble: Duration::ZERO,
            eval,
            sent: wire.sent,
            received: wire.received,
            channel: wire.ch.stats(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Minor page faults of the calling thread so far.
    #[cfg(target_os = "linux")]
    #[allow(unsafe_code)]
    fn thread_faults() -> i64 {
        // SAFETY: `usage` is a valid, writable rusage for the call's duration.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        // SAFETY: as above; RUSAGE_THREAD reads the calling thread's counters.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_THREAD, &mut usage) };
        assert_eq!(rc, 0, "getrusage");
        usage.ru_minflt
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn touched_buffers_do_not_fault_when_filled() {
        const BYTES: usize = 32 << 20; // 8,192 pages
        let mut bytes = touched(BYTES);
        let mut words = touched_vec(BYTES / 16, u128::MAX);
        let before = thread_faults();
        bytes.resize(BYTES, 1);
        words.resize(BYTES / 16, 1);
        let faults = thread_faults() - before;
        // A lazily mapped buffer faults once per page written (8,192 per buffer here).
        assert!(
            faults < 64,
            "{faults} page faults filling pre-touched buffers"
        );
    }
}
