//! Open sessions, what both parties' sides share: the computations after the first in a session the evaluator opened
//! ([`SessionHeader::open`](crate::SessionHeader::open)). The key exchange, the session
//! headers and the base OT are the first computation's; each further computation is one
//! exchange (messages 11 and 6 one way, 7 to 9 the other) and the output (10), on what the
//! session holds: the OT extension, which goes on from where it stood, the free-XOR offset
//! `Δ` (under `ideal` and `circular` the OT's correlation, fixed by the base OT), and the
//! stream of the garbler's seeded input labels.
//!
//! Computation `k` (from 1) garbles with hash tweaks that follow on from those of the
//! computations before it (tweak base `(k − 1) · ANDs`, [`Sizes::tweak_base`], `transputation_garble::GarbleStart`):
//! under one `Δ` no tweak repeats in the session, as if it garbled one circuit, the
//! concatenation of its computations, which is what the half-gates proofs need (ZRE15 §3;
//! GKWY20 §4: a tweak may be used once per `Δ`). Every label but `Δ` is fresh for each
//! computation: the garbler's from the next blocks of the seed's stream
//! ([`SeededLabels`](crate::inputs::SeededLabels)), the evaluator's
//! from the next rows of the OT extension, each uniform and independent of the others.

use std::sync::Arc;

use transputation_circuits::{Circuit, Party, Stats};
use transputation_core::prg::Prg;
use transputation_core::Block;
use transputation_garble::coarse::{CoarseEvaluator, CoarseGarbler};
use transputation_garble::{Evaluate, Garble, GarbleStart, Scheme};

use crate::buffers::touched;
use crate::error::Error;
use crate::messages::LabelTransfer;
use crate::options::{Coarse, Options};
use crate::relay::SEND_QUEUE;

/// What the parties need of the circuit's size, counted once before the session (a pass
/// over every gate, which no computation should wait for).
#[derive(Clone, Copy, Debug)]
pub(crate) struct Sizes {
    /// The AND gates: what each computation advances the tweak base by.
    pub(crate) and_gates: u64,
    /// Bytes of tables and masks under the session's scheme.
    pub(crate) table_bytes: usize,
    /// How the first computation's labels cross.
    pub(crate) transfer: LabelTransfer,
}

impl Sizes {
    /// The sizes of `circuit` under `options` (its scheme, and the pieces' tables under
    /// coarse-grained parallelism: `prf`'s masks are per piece); an error if its tables do
    /// not fit in this machine's address space, or if the coarse layout was cut for another
    /// scheme.
    pub(crate) fn of(circuit: &Circuit, options: &Options) -> Result<Self, Error> {
        let scheme = options.scheme;
        let stats = Stats::counts(circuit);
        let sizes = Sizes {
            and_gates: stats.and,
            table_bytes: usize::try_from(scheme.table_bytes(&stats) + scheme.mask_bytes(&stats))
                .map_err(|_| {
                    Error::Input("the garbled circuit is too large for this machine".into())
                })?,
            transfer: LabelTransfer::first_of(
                scheme,
                &stats,
                circuit.party_input_bits(Party::Evaluator),
            ),
        };
        match &options.coarse {
            None => Ok(sizes),
            Some(c) => sizes.with_frames(circuit, scheme, c),
        }
    }

    /// These sizes with the tables as the frames of `coarse`'s pieces, without another
    /// pass over the circuit; an error if the pieces were cut for another scheme than
    /// `scheme` or from another circuit than `circuit`.
    pub(crate) fn with_frames(
        self,
        circuit: &Circuit,
        scheme: Scheme,
        coarse: &Coarse,
    ) -> Result<Self, Error> {
        let layout = &coarse.layout;
        if layout.scheme() != scheme {
            return Err(Error::Input(format!(
                "the circuit's pieces were cut for {} and the session garbles with {scheme}",
                layout.scheme()
            )));
        }
        if !layout.fits(circuit) {
            return Err(Error::Input(
                "the coarse-grained layout was cut from another circuit".into(),
            ));
        }
        Ok(Sizes {
            table_bytes: usize::try_from(layout.table_bytes()).map_err(|_| {
                Error::Input("the garbled circuit is too large for this machine".into())
            })?,
            ..self
        })
    }

    /// The tweak base of computation `k` (from 1): the AND gates of the computations
    /// before it.
    pub(crate) fn tweak_base(&self, k: u64) -> u64 {
        (k - 1).saturating_mul(self.and_gates)
    }
}

/// What a party prepares before the headers cross: `options` with the tables in order where
/// it only offers frames (`Coarse::if_peer_willing`, `--parallel auto`; [`resolve`] turns it
/// to its pieces once the headers agree), and their sizes. Pieces of another circuit or
/// scheme are refused now, not once the headers cross.
pub(crate) fn prepare(circuit: &Circuit, options: &Options) -> Result<(Options, Sizes), Error> {
    let willing = options.coarse.as_ref().filter(|c| c.if_peer_willing);
    let prepared = options.resolved(options.coarse.is_some() && willing.is_none());
    let sizes = Sizes::of(circuit, &prepared)?;
    if let Some(c) = willing {
        sizes.with_frames(circuit, options.scheme, c)?;
    }
    Ok((prepared, sizes))
}

/// `options` as the two headers resolved them (`frames`: the tables as coarse-grained
/// frames), and, where the party prepared the tables in order ([`prepare`]) and they come as
/// frames, the sizes of its pieces, to which it turns (no pass over the circuit).
pub(crate) fn resolve(
    circuit: &Circuit,
    options: Options,
    frames: bool,
    prepared: &Sizes,
) -> Result<(Options, Option<Sizes>), Error> {
    match (frames, &options.coarse) {
        (true, Some(c)) if c.if_peer_willing => {
            let pieces = prepared.with_frames(circuit, options.scheme, c)?;
            Ok((options.resolved(true), Some(pieces)))
        }
        _ => Ok((options.resolved(frames), None)),
    }
}

/// The lanes this party offers in its header (`SessionHeader::lanes`) for a session on
/// `channel` under `options`: under coarse-grained parallelism one per thread, as many as
/// the channel can open (up to 255); none if that is fewer than 2.
pub(crate) fn lane_offer(options: &Options, channel: &dyn transputation_transport::Channel) -> u8 {
    let Some(c) = &options.coarse else { return 0 };
    let n = c.threads.min(channel.max_lanes()).min(255);
    if n < 2 {
        0
    } else {
        n as u8
    }
}

/// Buffers for a computation's batches of tables: a batch (or all the tables, if fewer)
/// plus a window's slack, touched now.
pub(crate) fn batch_buffers(options: &Options, table_bytes: usize) -> Vec<Vec<u8>> {
    let size = options.batch_bytes.min(table_bytes).saturating_add(1 << 20);
    (0..SEND_QUEUE).map(|_| touched(size)).collect()
}

/// The garbler of a computation of `circuit` under `options` from `start`: the scheme's own
/// (on `options.parallel`), or under coarse-grained parallelism the garbler by pieces.
pub(crate) fn garbler_for<'c>(
    circuit: &'c Circuit,
    options: &Options,
    prg: &mut Prg,
    start: GarbleStart,
) -> Box<dyn Garble + 'c> {
    let backend = options.backend;
    match &options.coarse {
        Some(c) => Box::new(CoarseGarbler::new(
            Arc::clone(&c.layout),
            prg,
            backend,
            start,
            c.threads,
        )),
        None => options
            .scheme
            .garbler_par(circuit, prg, backend, start, &options.parallel),
    }
}

/// The evaluation of a computation of `circuit` under `options`, for tables garbled with
/// `tweak_base`, its input labels still to be set: the scheme's own, or under coarse-grained
/// parallelism the evaluator by pieces.
pub(crate) fn evaluator_for<'c>(
    circuit: &'c Circuit,
    options: &Options,
    tweak_base: u64,
) -> Box<dyn Evaluate + 'c> {
    let placeholder = vec![Block::ZERO; circuit.n_inputs()];
    match &options.coarse {
        Some(c) => Box::new(CoarseEvaluator::new(
            Arc::clone(&c.layout),
            &placeholder,
            options.backend,
            tweak_base,
            c.threads,
        )),
        None => options.scheme.evaluator_par(
            circuit,
            &placeholder,
            options.backend,
            tweak_base,
            &options.parallel,
        ),
    }
}
