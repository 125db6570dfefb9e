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
//! securely. A purely parallel functionality needs no share conversion between parts (the
//! paper's "transferring roles", §5.2, is for regions whose results feed sequential code).
//! Both parties must learn the output ([`OutputMode::Both`]): in part 1 the original
//! evaluator is the garbler, who learns the output only when the evaluator sends it; an
//! evaluator-only output would give the original garbler part 1's result, so it is refused.
//!
//! # Channels
//!
//! Each part runs on its own channel, in a thread of its own; this module does not open
//! them: the caller connects (one connection per part, or one stream each of one
//! connection) and hands them over in part order.

use std::time::Instant;

use transputation_circuits::{Party, Split};
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
        // The part this party garbles, and the one it evaluates.
        let (g, e) = match role {
            Party::Garbler => (0, 1),
            Party::Evaluator => (1, 0),
        };
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
        let (garbled, evaluated) = match (garbled, evaluated) {
            ((Ok(g), _), (Ok(e), _)) => (g, e),
            ((Err(a), at), (Err(b), bt)) => return Err(if at <= bt { a } else { b }),
            ((Err(e), _), _) | (_, (Err(e), _)) => return Err(e),
        };
        let by_part = match role {
            Party::Garbler => [&garbled, &evaluated],
            Party::Evaluator => [&evaluated, &garbled],
        };
        Ok(merge(role, split, by_part, called))
    }
}

fn join<T>(h: std::thread::ScopedJoinHandle<'_, T>) -> T {
    h.join().unwrap_or_else(|p| std::panic::resume_unwind(p))
}

/// One report of both parts (`by_part` in part order) for `role`.
fn merge(role: Party, split: &Split, by_part: [&Report; 2], called: Instant) -> Report {
    let output = match (&by_part[0].output, &by_part[1].output) {
        (Some(a), Some(b)) => Some(split.merge_outputs(&[a.clone(), b.clone()])),
        _ => None,
    };
    let start = by_part
        .iter()
        .map(|r| r.output_at.checked_sub(r.total).unwrap_or(called))
        .min()
        .unwrap_or(called);
    let output_at = by_part.iter().map(|r| r.output_at).max().unwrap_or(called);
    let total = output_at.saturating_duration_since(start);
    let sum_parts = |f: fn(&Report) -> ByteParts| {
        let (a, b) = (f(by_part[0]), f(by_part[1]));
        ByteParts {
            header: a.header + b.header,
            ot: a.ot + b.ot,
            labels: a.labels + b.labels,
            tables: a.tables + b.tables,
            decoding: a.decoding + b.decoding,
            output: a.output + b.output,
            framing: a.framing + b.framing,
        }
    };
    Report {
        role,
        computation: 1,
        online: (role == Party::Evaluator).then_some(total),
        output,
        total,
        // The parts' OTs run side by side: the longer is the wait.
        ot: by_part[0].ot.max(by_part[1].ot),
        round_trips: by_part[0].round_trips.max(by_part[1].round_trips),
        paper: by_part[0].paper.max(by_part[1].paper),
        output_at,
        garble: by_part[0].garble + by_part[1].garble,
        eval: by_part[0].eval + by_part[1].eval,
        sent: sum_parts(|r| r.sent),
        received: sum_parts(|r| r.received),
        channel: ByteCounts {
            sent: by_part[0].channel.sent + by_part[1].channel.sent,
            received: by_part[0].channel.received + by_part[1].channel.received,
        },
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
