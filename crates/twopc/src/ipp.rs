//! Inter-party parallelism (IPP): both parties garble and both evaluate at once.
//!
//! Buescher and Katzenbeisser ("Faster Secure Computation through Automatic
//! Parallelization", USENIX Security 2015, §5.1): a functionality of independent
//! sub-functionalities `f = f_0 ‖ f_1` is computed by two executions of Yao's protocol at
//! the same time, the garbler garbling `f_0` for the evaluator and the evaluator garbling
//! `f_1` for the garbler, so that both parties' processors garble and both directions of the
//! link carry tables. [`transputation_circuits::Split`] finds the parts.
//!
//! # Security
//!
//! Each part is an ordinary semi-honest session of this crate, with its own keys, labels,
//! global offset and oblivious transfers; the parts share no wire, label or random value.
//! Part 1 swaps the roles: its garbler is the original evaluator, whose inputs go as
//! garbler's labels, and the original garbler receives its own input labels by oblivious
//! transfer. The parties learn each part's output, which is part of `f`'s output, and
//! nothing else from either part's transcript (each session's simulation-based proof), and
//! the parts are independent functionalities, so by the composition theorem for
//! semi-honest security (Hazay and Lindell, as the paper cites) the pair computes `f`
//! securely. [`IppParty`] refuses an output for the evaluator alone ([`OutputMode::Both`]
//! only): in part 1 the original garbler is that session's evaluator and would learn part
//! 1's output.
//!
//! [`MixedParty`] runs a circuit cut into two regions and the glue that joins them
//! ([`transputation_circuits::Mixed`], the paper's §5.2, "transferring roles"). Each region
//! is a session whose output goes to its evaluator alone and whose every output bit `o` is
//! blinded inside the circuit by a fresh random input bit `r` of the region's garbler: the
//! evaluator learns `o ⊕ r`, uniform to it, the garbler nothing; each party holds one XOR
//! share of each crossing bit. The glue is a third session, garbled by the garbler, whose
//! inputs are those shares (the evaluator's by oblivious transfer) and whose circuit XORs
//! them back before its first gate: no crossing value is seen in the clear, and the glue's
//! output goes as the caller's [`OutputMode`] says. The paper draws the blinding bits at
//! the region's evaluator and shows the blinded output to its garbler; drawing them at the
//! garbler and showing the evaluator is the same construction with the shares' holders
//! exchanged, and the sessions compose as before.
//!
//! # Channels
//!
//! Each part runs on its own channel, in a thread of its own; this module does not open
//! them: the caller connects (one connection per part, or one stream each of one
//! connection) and hands them over in part order.

use std::time::{Duration, Instant};

use rand::Rng;

use transputation_circuits::{Mixed, Party, Split};
use transputation_transport::{ByteCounts, Channel};

use crate::error::Error;
use crate::evaluator::Evaluator;
use crate::garbler::Garbler;
use crate::options::{Options, OutputMode};
use crate::report::{ByteParts, Report};

/// One party's two sessions of an IPP computation, prepared: the part it garbles and the
/// part it evaluates.
pub struct IppParty<'s> {
    role: Party,
    split: &'s Split,
    garbling: Garbler<'s>,
    evaluating: Evaluator<'s>,
}

impl<'s> IppParty<'s> {
    /// Prepares `role`'s sessions of the two parts of `split`; `input` is `role`'s input
    /// bits of the original circuit (in wire order, as for a sequential session).
    ///
    /// # Errors
    /// [`Error::Input`] for a split of other than two parts, or an output the original
    /// garbler would not learn (see the module docs); otherwise as [`Garbler::new`] and
    /// [`Evaluator::new`].
    pub fn new(
        split: &'s Split,
        role: Party,
        options: Options,
        input: &[bool],
    ) -> Result<IppParty<'s>, Error> {
        if split.parts.len() != 2 {
            return Err(Error::Input(format!(
                "inter-party parallelism runs 2 parts, not {}",
                split.parts.len()
            )));
        }
        if options.output != OutputMode::Both {
            return Err(Error::Input(
                "inter-party parallelism needs both parties to learn the output (--output \
                 both): each party garbles a part whose output it learns from the other"
                    .into(),
            ));
        }
        refuse_coarse(&options)?;
        // The part this party garbles, and the one it evaluates.
        let (g, e) = (garbled_by(role), 1 - garbled_by(role));
        let garbling = Garbler::new(
            &split.parts[g].circuit,
            options.clone(),
            &split.parts[g].input_of(role, input),
        )?;
        let evaluating = Evaluator::new(
            &split.parts[e].circuit,
            options,
            &split.parts[e].input_of(role, input),
        )?;
        Ok(IppParty {
            role,
            split,
            garbling,
            evaluating,
        })
    }

    /// Runs both parts at once, `part0` and `part1` the channels of parts 0 and 1, and
    /// returns one report of the whole computation: the output in the original circuit's
    /// order, times from the earlier part's start to the later part's end, bytes of both.
    pub fn run<C0, C1>(self, part0: C0, part1: C1) -> Result<Report, Error>
    where
        C0: Channel,
        C1: Channel,
    {
        let IppParty {
            role,
            split,
            garbling,
            evaluating,
        } = self;
        let called = Instant::now();
        let (garbled, evaluated) = run_both(role, garbling, evaluating, part0, part1)?;
        let by_part = match role {
            Party::Garbler => [&garbled, &evaluated],
            Party::Evaluator => [&evaluated, &garbled],
        };
        let output = match (&by_part[0].output, &by_part[1].output) {
            (Some(a), Some(b)) => Some(split.merge_outputs(&[a.clone(), b.clone()])),
            _ => None,
        };
        Ok(merge(role, output, &by_part, None, called))
    }
}

/// Runs `role`'s session that garbles and the one that evaluates at once, on the channels
/// of parts 0 and 1 (the garbler garbles part 0); the reports of the one it garbled and of
/// the one it evaluated.
fn run_both<C0: Channel, C1: Channel>(
    role: Party,
    garbling: Garbler<'_>,
    evaluating: Evaluator<'_>,
    part0: C0,
    part1: C1,
) -> Result<(Report, Report), Error> {
    // Each part with the time it ended: a part that fails drops its channel, which the
    // peer's matching part sees at once.
    let timed = |r: Result<Report, Error>| (r, Instant::now());
    let (garbled, evaluated) = std::thread::scope(|scope| match role {
        Party::Garbler => {
            let other = scope.spawn(move || timed(evaluating.run(part1)));
            let mine = timed(garbling.run(part0));
            (mine, join(other))
        }
        Party::Evaluator => {
            let other = scope.spawn(move || timed(garbling.run(part1)));
            let mine = timed(evaluating.run(part0));
            (join(other), mine)
        }
    });
    // The earlier failure is the one to name: the later is often its consequence (the
    // peer, having failed one part, gave up on both).
    match (garbled, evaluated) {
        ((Ok(g), _), (Ok(e), _)) => Ok((g, e)),
        ((Err(a), at), (Err(b), bt)) => Err(if at <= bt { a } else { b }),
        ((Err(e), _), _) | (_, (Err(e), _)) => Err(e),
    }
}

/// The part (or region) `role` garbles; it evaluates the other.
fn garbled_by(role: Party) -> usize {
    match role {
        Party::Garbler => 0,
        Party::Evaluator => 1,
    }
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// One report of a computation's sessions for `role`, with its `output`: `side_by_side`,
/// then `after` (a cut's glue) once they ended. Times run from the earliest session's start
/// to the last output, bytes are of all; OT, the paper's measure and round trips are the
/// longest of the sessions side by side, plus those of the one after.
fn merge(
    role: Party,
    output: Option<Vec<bool>>,
    side_by_side: &[&Report],
    after: Option<&Report>,
    called: Instant,
) -> Report {
    let all: Vec<&Report> = side_by_side.iter().copied().chain(after).collect();
    let start = all
        .iter()
        .map(|r| r.output_at.checked_sub(r.total).unwrap_or(called))
        .min()
        .unwrap_or(called);
    let output_at = all.iter().map(|r| r.output_at).max().unwrap_or(called);
    let total = output_at.saturating_duration_since(start);
    let sum_parts = |f: fn(&Report) -> ByteParts| {
        all.iter()
            .map(|r| f(r))
            .fold(ByteParts::default(), |a, b| ByteParts {
                header: a.header + b.header,
                ot: a.ot + b.ot,
                labels: a.labels + b.labels,
                tables: a.tables + b.tables,
                decoding: a.decoding + b.decoding,
                output: a.output + b.output,
                framing: a.framing + b.framing,
            })
    };
    let longest = |f: fn(&Report) -> Duration| {
        side_by_side.iter().map(|r| f(r)).max().unwrap_or_default()
            + after.map_or(Duration::ZERO, f)
    };
    Report {
        role,
        computation: 1,
        online: (role == Party::Evaluator).then_some(total),
        output,
        total,
        ot: longest(|r| r.ot),
        round_trips: side_by_side
            .iter()
            .map(|r| r.round_trips)
            .max()
            .unwrap_or(0)
            + after.map_or(0, |r| r.round_trips),
        paper: longest(|r| r.paper),
        output_at,
        garble: all.iter().map(|r| r.garble).sum(),
        eval: all.iter().map(|r| r.eval).sum(),
        frames: false,
        lanes: 0,
        sent: sum_parts(|r| r.sent),
        received: sum_parts(|r| r.received),
        channel: ByteCounts {
            sent: all.iter().map(|r| r.channel.sent).sum(),
            received: all.iter().map(|r| r.channel.received).sum(),
        },
    }
}

/// One party's sessions of a computation cut into two regions and the glue
/// ([`transputation_circuits::Mixed`]; the paper's §5.2): it garbles one region and
/// evaluates the other at once, each region's outputs blinded by its garbler's random bits
/// and learned, so blinded, by its evaluator alone; then the garbler garbles the glue,
/// which takes each party's shares as its input and XORs them back.
pub struct MixedParty<'m> {
    role: Party,
    mixed: &'m Mixed,
    options: Options,
    /// This party's input bits of the original circuit.
    own: Vec<bool>,
    /// The random bits blinding the outputs of the region this party garbles.
    blinding: Vec<bool>,
    garbling: Garbler<'m>,
    evaluating: Evaluator<'m>,
}

impl<'m> MixedParty<'m> {
    /// Prepares `role`'s region sessions of `mixed`; `input` is `role`'s input bits of the
    /// original circuit. The glue's output goes as `options.output` says.
    ///
    /// # Errors
    /// As [`Garbler::new`] and [`Evaluator::new`].
    pub fn new(
        mixed: &'m Mixed,
        role: Party,
        options: Options,
        input: &[bool],
    ) -> Result<MixedParty<'m>, Error> {
        refuse_coarse(&options)?;
        let (g, e) = (garbled_by(role), 1 - garbled_by(role));
        // A region's output is its blinded bits, for its evaluator alone.
        let regions = Options {
            output: OutputMode::Evaluator,
            ..options.clone()
        };
        let mut rng = rand::thread_rng();
        let garbled = &mixed.regions[g];
        let blinding: Vec<bool> = (0..garbled.circuit.n_outputs())
            .map(|_| rng.gen())
            .collect();
        let mut garbler_input = garbled.input_of(role, input);
        garbler_input.extend(&blinding);
        let garbling = Garbler::new(&garbled.circuit, regions.clone(), &garbler_input)?;
        let evaluated = &mixed.regions[e];
        let evaluating = Evaluator::new(
            &evaluated.circuit,
            regions,
            &evaluated.input_of(role, input),
        )?;
        Ok(MixedParty {
            role,
            mixed,
            options,
            own: input.to_vec(),
            blinding,
            garbling,
            evaluating,
        })
    }

    /// Runs both regions at once on the channels of parts 0 and 1, then the glue on
    /// `glue`'s; one report of the whole computation, its output the glue's.
    pub fn run<C0, C1, C2>(self, part0: C0, part1: C1, glue: C2) -> Result<Report, Error>
    where
        C0: Channel,
        C1: Channel,
        C2: Channel,
    {
        let MixedParty {
            role,
            mixed,
            options,
            own,
            blinding,
            garbling,
            evaluating,
        } = self;
        let called = Instant::now();
        let (garbled, evaluated) = run_both(role, garbling, evaluating, part0, part1)?;
        let Some(learned) = &evaluated.output else {
            return Err(Error::Input(
                "a region's evaluator learned no output (a region's output is for its \
                 evaluator)"
                    .into(),
            ));
        };
        let mut input = mixed.glue.input_of(role, &own);
        input.extend(mixed.shares(garbled_by(role), &blinding, learned));
        let glued = match role {
            Party::Garbler => Garbler::new(&mixed.glue.circuit, options, &input)?.run(glue)?,
            Party::Evaluator => Evaluator::new(&mixed.glue.circuit, options, &input)?.run(glue)?,
        };
        let output = glued.output.clone();
        Ok(merge(
            role,
            output,
            &[&garbled, &evaluated],
            Some(&glued),
            called,
        ))
    }
}

/// Inter-party parallelism runs sessions on parts of a circuit, which coarse-grained
/// parallelism's pieces (cut from the whole circuit) do not fit.
fn refuse_coarse(options: &Options) -> Result<(), Error> {
    match options.coarse {
        Some(_) => Err(Error::Input(
            "inter-party parallelism (ipp) and coarse-grained parallelism (cgp) do not combine: \
             choose one"
                .into(),
        )),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use transputation_circuits::encoding::{decode_outputs, encode_party_input};
    use transputation_circuits::{library, Circuit};
    use transputation_garble::Scheme;
    use transputation_transport::memory_pair;

    /// Both parties' IPP sessions over in-memory channels; their decoded outputs.
    fn ipp(circuit: &Circuit, scheme: Scheme, g_hex: &str, e_hex: &str) -> (Report, Report) {
        let split = Split::of(circuit, 2).unwrap();
        let g_in = encode_party_input(circuit, Party::Garbler, g_hex).unwrap();
        let e_in = encode_party_input(circuit, Party::Evaluator, e_hex).unwrap();
        let (g0, e0) = memory_pair(std::time::Duration::from_secs(20));
        let (g1, e1) = memory_pair(std::time::Duration::from_secs(20));
        let g = IppParty::new(&split, Party::Garbler, Options::new(scheme), &g_in).unwrap();
        let e = IppParty::new(&split, Party::Evaluator, Options::new(scheme), &e_in).unwrap();
        std::thread::scope(|s| {
            let gr = s.spawn(move || g.run(g0, g1));
            let er = e.run(e0, e1).unwrap();
            (gr.join().unwrap().unwrap(), er)
        })
    }

    #[test]
    fn both_parties_get_the_circuits_output_under_every_scheme() {
        let c = library::load("mvmul:m=4,k=3,bits=8").unwrap();
        let (g_hex, e_hex) = ("0102030405060708090a0b0c", "fdfeff");
        let want = c.eval_hex(g_hex, e_hex).unwrap();
        for scheme in [Scheme::Ideal, Scheme::Prf, Scheme::Circular] {
            let (g, e) = ipp(&c, scheme, g_hex, e_hex);
            for r in [&g, &e] {
                assert_eq!(
                    decode_outputs(&c, r.output.as_ref().unwrap()),
                    want,
                    "{scheme:?}"
                );
            }
            // Both directions carried tables: each party garbled a part.
            assert!(g.sent.tables > 0 && e.sent.tables > 0);
            assert_eq!(g.sent.tables, e.received.tables);
            assert!(g.garble > std::time::Duration::ZERO && e.garble > std::time::Duration::ZERO);
        }
    }

    #[test]
    fn mexp_over_ipp_matches_its_reference() {
        let c = library::load("mexp:k=4,bits=8").unwrap();
        let (g_hex, e_hex) = ("03050709", "0a0b0c0d61");
        let (g, e) = ipp(&c, Scheme::Ideal, g_hex, e_hex);
        let want = c.eval_hex(g_hex, e_hex).unwrap();
        assert_eq!(decode_outputs(&c, g.output.as_ref().unwrap()), want);
        assert_eq!(decode_outputs(&c, e.output.as_ref().unwrap()), want);
    }

    /// Every built-in, small: IPP where it splits (and the output equals the circuit's), a
    /// refusal that names the reason where it does not.
    #[test]
    fn every_builtin_runs_under_ipp_or_is_refused_for_its_shape() {
        use rand::{Rng, SeedableRng};
        use transputation_circuits::encoding::bits_to_hex;
        use transputation_circuits::SplitError;
        let mut rng = rand::rngs::StdRng::seed_from_u64(21);
        let mut ran = Vec::new();
        for spec in [
            "aes128",
            "sha256",
            "mincut:nodes=5,bits=4",
            "synthetic:and=200,xor=300,inputs=16",
            "add:n=4,bits=8",
            "mult:n=3,bits=8",
            "min:n=4,bits=8",
            "argmin:n=4,bits=8",
            "matmul:n=2,bits=8",
            "sort:n=4,bits=8",
            "biomatch:n=4,d=2,bits=8",
            "mexp:k=3,bits=6",
            "mvmul:m=3,k=2,bits=8",
            "millionaires:bits=8",
        ] {
            let c = library::load(spec).unwrap();
            match Split::of(&c, 2) {
                Ok(_) => {}
                Err(SplitError::TooFewComponents { .. } | SplitError::Generated) => continue,
                Err(e) => panic!("{spec}: {e}"),
            }
            let mut hex = [Vec::new(), Vec::new()];
            for g in c.inputs() {
                let bits: Vec<bool> = (0..g.len).map(|_| rng.gen()).collect();
                hex[usize::from(g.party == Party::Evaluator)].push(bits_to_hex(&bits, g.order));
            }
            let (gh, eh) = (hex[0].join(","), hex[1].join(","));
            let want = c.eval_hex(&gh, &eh).unwrap();
            let (g, e) = ipp(&c, Scheme::Ideal, &gh, &eh);
            assert_eq!(
                decode_outputs(&c, g.output.as_ref().unwrap()),
                want,
                "{spec}"
            );
            assert_eq!(
                decode_outputs(&c, e.output.as_ref().unwrap()),
                want,
                "{spec}"
            );
            ran.push(spec.split(':').next().unwrap());
        }
        // The paper's parallel applications split.
        for name in ["mexp", "mvmul"] {
            assert!(ran.contains(&name), "{name} did not split: {ran:?}");
        }
    }

    /// Both parties' sessions of a cut circuit (two regions, then the glue) over
    /// in-memory channels.
    fn mixed(circuit: &Circuit, options: Options, g_hex: &str, e_hex: &str) -> (Report, Report) {
        let m = Mixed::of(circuit).unwrap();
        let g_in = encode_party_input(circuit, Party::Garbler, g_hex).unwrap();
        let e_in = encode_party_input(circuit, Party::Evaluator, e_hex).unwrap();
        let t = std::time::Duration::from_secs(20);
        let ((g0, e0), (g1, e1), (g2, e2)) = (memory_pair(t), memory_pair(t), memory_pair(t));
        let g = MixedParty::new(&m, Party::Garbler, options.clone(), &g_in).unwrap();
        let e = MixedParty::new(&m, Party::Evaluator, options, &e_in).unwrap();
        std::thread::scope(|s| {
            let gr = s.spawn(move || g.run(g0, g1, g2));
            let er = e.run(e0, e1, e2).unwrap();
            (gr.join().unwrap().unwrap(), er)
        })
    }

    #[test]
    fn biomatch_cut_in_regions_and_glue_gives_its_output_under_every_scheme() {
        use rand::SeedableRng;
        let c = library::load("biomatch:n=8,d=2,bits=8").unwrap();
        let mut rng = rand::rngs::StdRng::seed_from_u64(5);
        for scheme in [Scheme::Ideal, Scheme::Prf, Scheme::Circular] {
            let g_hex: String = (0..16)
                .map(|_| format!("{:02x}", rng.gen::<u8>() & 0x3f))
                .collect();
            let e_hex: String = (0..2)
                .map(|_| format!("{:02x}", rng.gen::<u8>() & 0x3f))
                .collect();
            let want = c.eval_hex(&g_hex, &e_hex).unwrap();
            let (g, e) = mixed(&c, Options::new(scheme), &g_hex, &e_hex);
            for r in [&g, &e] {
                assert_eq!(
                    decode_outputs(&c, r.output.as_ref().unwrap()),
                    want,
                    "{scheme:?}"
                );
            }
            assert!(g.sent.tables > 0 && e.sent.tables > 0);
        }
        // The glue may keep the output from the garbler, as a sequential session does.
        let options = Options {
            output: OutputMode::Evaluator,
            ..Options::new(Scheme::Ideal)
        };
        let (g, e) = mixed(&c, options, &"01".repeat(16), "0203");
        assert!(g.output.is_none());
        assert_eq!(
            decode_outputs(&c, e.output.as_ref().unwrap()),
            c.eval_hex(&"01".repeat(16), "0203").unwrap()
        );
    }

    #[test]
    fn an_output_for_the_evaluator_alone_is_refused() {
        let c = library::load("mvmul:m=2,k=2,bits=4").unwrap();
        let split = Split::of(&c, 2).unwrap();
        let options = Options {
            output: OutputMode::Evaluator,
            ..Options::new(Scheme::Ideal)
        };
        let input = encode_party_input(&c, Party::Garbler, "1234").unwrap();
        let e = IppParty::new(&split, Party::Garbler, options, &input)
            .err()
            .unwrap();
        assert!(e.to_string().contains("both parties"), "{e}");
    }

    #[test]
    fn a_peer_that_closes_one_part_ends_both_with_an_error() {
        let c = library::load("mvmul:m=2,k=2,bits=4").unwrap();
        let split = Split::of(&c, 2).unwrap();
        let g_in = encode_party_input(&c, Party::Garbler, "1234").unwrap();
        let g = IppParty::new(&split, Party::Garbler, Options::new(Scheme::Ideal), &g_in).unwrap();
        let (g0, e0) = memory_pair(std::time::Duration::from_secs(20));
        let (g1, e1) = memory_pair(std::time::Duration::from_secs(20));
        drop(e0);
        drop(e1);
        assert!(g.run(g0, g1).is_err());
    }
}
