//! The built-in circuits, named on the command line as `NAME` or `NAME:key=value,...`.
//!
//! Every built-in documents its input and output encoding (hex, [`BitOrder::MsbFirst`]
//! groups: values big-endian, concatenated, first value first, unless its documentation
//! says otherwise) and has a plain Rust reference implementation, [`Builtin::reference`],
//! that tests compare the circuit against on random inputs.
//!
//! [`load`] resolves a name that is an existing file as a Bristol circuit (with the parallel
//! regions of its `.regions` side file, if it has one: [`bristol::regions_path`]) and
//! anything else as a built-in.
//!
//! [`BitOrder::MsbFirst`]: crate::BitOrder::MsbFirst

use std::collections::BTreeMap;
use std::path::Path;

use crate::bristol;
use crate::circuit::{Circuit, Party};

mod aes128;
mod apps;
mod mincut;
mod sha256;
mod suite;
mod synthetic;

/// A numeric parameter of a built-in.
#[derive(Debug, Clone, Copy)]
pub struct Param {
    /// Its name in `NAME:key=value`.
    pub name: &'static str,
    /// The value when not given.
    pub default: u64,
    /// The smallest accepted value.
    pub min: u64,
    /// The largest accepted value.
    pub max: u64,
    /// What it means.
    pub doc: &'static str,
}

/// The parameter values of one instance of a built-in, all present (defaults filled in).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Params(BTreeMap<&'static str, u64>);

impl Params {
    /// The value of a declared parameter.
    ///
    /// # Panics
    /// If `name` is not one of the built-in's declared parameters (a programming error).
    pub fn get(&self, name: &str) -> u64 {
        *self
            .0
            .get(name)
            .unwrap_or_else(|| panic!("parameter '{name}' is not declared"))
    }

    /// [`Params::get`] as a `usize`.
    pub fn usize(&self, name: &str) -> usize {
        self.get(name) as usize
    }
}

/// A check of a built-in's parameters together: `Err` holds the sentence to show.
pub type ParamsCheck = fn(&Params) -> Result<(), String>;

/// A built-in circuit: how to build it and a plain implementation to check it against.
#[derive(Debug)]
pub struct Builtin {
    /// Its name on the command line.
    pub name: &'static str,
    /// One line on what it computes.
    pub summary: &'static str,
    /// Its parameters, with defaults and bounds.
    pub params: &'static [Param],
    /// The input and output encoding: which party gives what, in which hex form.
    pub encoding: &'static str,
    /// Builds the circuit for checked parameters.
    pub build: fn(&Params) -> Circuit,
    /// Computes the output hex from the parties' hex inputs, without a circuit. Inputs are
    /// assumed to be well-formed for the circuit (tests generate them).
    pub reference: fn(&Params, &str, &str) -> String,
    /// Checks what each parameter's bounds cannot (how parameters limit one another), with
    /// the sentence to show when they do not fit; `None` if the bounds say it all.
    pub check: Option<ParamsCheck>,
}

/// Every built-in, in the order `circuit list` shows them.
pub fn builtins() -> &'static [&'static Builtin] {
    static BUILTINS: [&Builtin; 14] = [
        &aes128::AES128,
        &sha256::SHA256,
        &mincut::MINCUT,
        &synthetic::SYNTHETIC,
        &suite::ADD,
        &suite::MULT,
        &suite::MIN,
        &suite::ARGMIN,
        &suite::MATMUL,
        &suite::SORT,
        &apps::BIOMATCH,
        &apps::MEXP,
        &apps::MVMUL,
        &apps::MILLIONAIRES,
    ];
    &BUILTINS
}

/// Why a circuit name could not be resolved.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// Neither a file nor a built-in.
    #[error("'{0}' is neither a file nor a built-in circuit (built-ins: {1}; see `transputation circuit list`)")]
    Unknown(String, String),
    /// A built-in with a bad parameter list.
    #[error("circuit '{spec}': {problem}")]
    BadParams {
        /// The name as given.
        spec: String,
        /// What is wrong.
        problem: String,
    },
    /// A Bristol file that could not be read.
    #[error("{path}: {source}")]
    File {
        /// The path as given.
        path: String,
        /// What went wrong, with the line.
        source: bristol::ReadError,
    },
    /// A circuit file's `.regions` side file that could not be read or does not fit it.
    #[error("{0}")]
    Regions(#[from] bristol::RegionsError),
}

/// Parses `NAME` or `NAME:key=value,...` into a built-in and its checked parameters.
pub fn parse_spec(spec: &str) -> Result<(&'static Builtin, Params), LoadError> {
    let (name, args) = spec.split_once(':').unwrap_or((spec, ""));
    let builtin = builtins()
        .iter()
        .find(|b| b.name == name.trim())
        .ok_or_else(|| {
            let names: Vec<&str> = builtins().iter().map(|b| b.name).collect();
            LoadError::Unknown(spec.to_string(), names.join(", "))
        })?;
    let bad = |problem: String| LoadError::BadParams {
        spec: spec.to_string(),
        problem,
    };
    let mut values: BTreeMap<&'static str, u64> =
        builtin.params.iter().map(|p| (p.name, p.default)).collect();
    for kv in args.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (key, value) = kv
            .split_once('=')
            .ok_or_else(|| bad(format!("'{kv}' is not of the form key=value")))?;
        let param = builtin
            .params
            .iter()
            .find(|p| p.name == key.trim())
            .ok_or_else(|| {
                let known: Vec<&str> = builtin.params.iter().map(|p| p.name).collect();
                bad(format!(
                    "unknown parameter '{}' (known: {})",
                    key.trim(),
                    if known.is_empty() {
                        "none".to_string()
                    } else {
                        known.join(", ")
                    }
                ))
            })?;
        let v: u64 = value.trim().replace('_', "").parse().map_err(|_| {
            bad(format!(
                "{}={value}: not a non-negative integer",
                param.name
            ))
        })?;
        if v < param.min || v > param.max {
            return Err(bad(format!(
                "{}={v} is outside {}..={}",
                param.name, param.min, param.max
            )));
        }
        values.insert(param.name, v);
    }
    let params = Params(values);
    if let Some(check) = builtin.check {
        check(&params).map_err(bad)?;
    }
    Ok((builtin, params))
}

/// Builds a built-in from `NAME` or `NAME:key=value,...`.
pub fn build(spec: &str) -> Result<Circuit, LoadError> {
    let (builtin, params) = parse_spec(spec)?;
    Ok((builtin.build)(&params))
}

/// Resolves a circuit name: a built-in's name (`NAME` or `NAME:...`) is that built-in, anything
/// else is read as a Bristol file (format detected); write `./aes128` for a file that has a
/// built-in's name. `parties` reassigns the input groups of a file (default: the first
/// group is the garbler's, every other group the evaluator's); built-ins fix their own.
/// A file `X` with a side file `X.regions` has its parallel regions.
///
/// # Errors
/// An unknown name or bad parameters, a file that cannot be read, a side file that cannot
/// be read or does not fit the circuit (never dropped in silence: a garbler would run
/// without the regions it was given), or `parties` that do not fit the groups.
pub fn load_with_parties(name: &str, parties: Option<&[Party]>) -> Result<Circuit, LoadError> {
    let path = Path::new(name);
    let mut circuit = if names_builtin(name) {
        build(name)?
    } else {
        let circuit = bristol::read_file(path).map_err(|source| LoadError::File {
            path: name.to_string(),
            source,
        })?;
        let side = bristol::regions_path(path);
        if side.exists() {
            bristol::attach_regions(circuit, &side)?
        } else {
            circuit
        }
    };
    if let Some(parties) = parties {
        circuit
            .set_input_parties(parties)
            .map_err(|problem| LoadError::BadParams {
                spec: name.to_string(),
                problem,
            })?;
    }
    Ok(circuit)
}

/// Checks a circuit name as [`load_with_parties`] resolves it, without building or reading
/// the circuit: a built-in's parameters, or a file's existence. What only the circuit
/// shows (a file's contents) is left to loading it.
pub fn check(name: &str) -> Result<(), LoadError> {
    if names_builtin(name) {
        parse_spec(name).map(drop)
    } else {
        Ok(())
    }
}

/// Whether [`load_with_parties`] reads `name` as a built-in: a built-in's name (with or
/// without options), or anything that is not an existing file (whose error then names the
/// built-ins).
fn names_builtin(name: &str) -> bool {
    let builtin_name = name.split_once(':').map_or(name, |(n, _)| n);
    builtins().iter().any(|b| b.name == builtin_name) || !Path::new(name).exists()
}

/// The generated form of a `synthetic` circuit (its gates written as they are read, wire
/// numbers reused: [`Circuit::generated`]) whatever its size, as [`load`] gives it for
/// circuits of more than 2^20 gates: for tests and benchmarks that compare the two forms.
///
/// # Errors
/// If `spec` is not a valid `synthetic` spec, or its circuit has no generated form (depth
/// 0: every wire may be read to the end).
pub fn generated(spec: &str) -> Result<Circuit, LoadError> {
    let (builtin, params) = parse_spec(spec)?;
    let problem = if builtin.name == "synthetic" {
        "a synthetic circuit of depth 0 has no generated form"
    } else {
        "only synthetic circuits have a generated form"
    };
    synthetic::generated_form(&params).ok_or_else(|| LoadError::BadParams {
        spec: spec.to_string(),
        problem: problem.to_string(),
    })
}

/// [`load_with_parties`] with the default party assignment.
pub fn load(name: &str) -> Result<Circuit, LoadError> {
    load_with_parties(name, None)
}

#[cfg(test)]
pub(crate) mod testing {
    //! Shared checks for every built-in.
    use super::*;
    use crate::encoding::bits_to_hex;
    use crate::Stats;
    use rand::{Rng, SeedableRng};

    /// Random hex inputs for `circuit`: (garbler, evaluator).
    pub fn random_inputs(circuit: &Circuit, rng: &mut impl Rng) -> (String, String) {
        let mut parts = [Vec::new(), Vec::new()];
        for g in circuit.inputs() {
            let bits: Vec<bool> = (0..g.len).map(|_| rng.gen()).collect();
            parts[usize::from(g.party == Party::Evaluator)].push(bits_to_hex(&bits, g.order));
        }
        (parts[0].join(","), parts[1].join(","))
    }

    /// Checks `spec` against its reference on `runs` random inputs; returns the circuit.
    pub fn check_against_reference(spec: &str, runs: usize) -> Circuit {
        let (builtin, params) = parse_spec(spec).unwrap();
        let circuit = (builtin.build)(&params);
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(0x7ea5);
        for _ in 0..runs {
            let (g, e) = random_inputs(&circuit, &mut rng);
            let got = circuit.eval_hex(&g, &e).unwrap();
            let want = (builtin.reference)(&params, &g, &e);
            assert_eq!(got, want, "{spec} on garbler {g}, evaluator {e}");
        }
        circuit
    }

    /// Checks that `spec` and its reference both give `want`; returns the circuit's statistics.
    pub fn check_vector(spec: &str, garbler: &str, evaluator: &str, want: &str) -> Stats {
        let circuit = build(spec).unwrap();
        assert_eq!(
            circuit.eval_hex(garbler, evaluator).unwrap(),
            want,
            "{spec}"
        );
        let (builtin, params) = parse_spec(spec).unwrap();
        assert_eq!(
            (builtin.reference)(&params, garbler, evaluator),
            want,
            "{spec} reference"
        );
        Stats::of(&circuit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::BitOrder;

    #[test]
    fn specs_are_parsed_and_checked() {
        let (b, p) = parse_spec("add:n=4,bits=16").unwrap();
        assert_eq!((b.name, p.get("n"), p.get("bits")), ("add", 4, 16));
        let msg = |s: &str| parse_spec(s).unwrap_err().to_string();
        assert!(msg("nosuch").contains("neither a file nor a built-in"));
        assert!(msg("add:q=1").contains("unknown parameter 'q'"));
        assert!(msg("add:n").contains("key=value"));
        assert!(msg("add:n=x").contains("not a non-negative integer"));
        assert!(msg("add:n=0").contains("outside"));
    }

    /// Reverses each group's slice of `words` where the group's order differs from `order`.
    fn to_order(words: &[u64], groups: &[(usize, BitOrder)], order: BitOrder) -> Vec<u64> {
        let mut out = Vec::with_capacity(words.len());
        let mut rest = words;
        for &(len, o) in groups {
            let (now, later) = rest.split_at(len);
            if o == order {
                out.extend_from_slice(now);
            } else {
                out.extend(now.iter().rev());
            }
            rest = later;
        }
        out
    }

    #[test]
    fn every_builtin_survives_bristol_fashion_and_back() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha12Rng::seed_from_u64(2);
        for b in builtins() {
            let circuit = build(b.name).unwrap();
            let mut text = Vec::new();
            bristol::write(&circuit, bristol::Format::BristolFashion, &mut text).unwrap();
            let back = bristol::read(&text[..]).unwrap();
            assert_eq!(
                crate::Stats::of(&back).and,
                crate::Stats::of(&circuit).and,
                "{}",
                b.name
            );
            let ins: Vec<(usize, BitOrder)> = circuit
                .inputs()
                .iter()
                .map(|g| (g.len as usize, g.order))
                .collect();
            let outs: Vec<(usize, BitOrder)> = circuit
                .outputs()
                .iter()
                .map(|g| (g.wires.len(), g.order))
                .collect();
            // 16 batches of 64 random inputs: 1,024 inputs.
            for _ in 0..16 {
                let words: Vec<u64> = (0..circuit.n_inputs()).map(|_| rng.gen()).collect();
                let want = circuit.eval_words(&words);
                let got = back.eval_words(&to_order(&words, &ins, BitOrder::LsbFirst));
                assert_eq!(
                    to_order(&want, &outs, BitOrder::LsbFirst),
                    got,
                    "{}",
                    b.name
                );
            }
        }
    }

    #[test]
    fn a_builtin_name_wins_over_a_file_and_files_load() {
        let aes = load("aes128").unwrap();
        assert_eq!(aes.inputs()[0].name, "key");
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.txt");
        // Two input groups of one bit each (a group of 0 bits would be absent).
        std::fs::write(&path, "2 4\n1 1 1\n1 1 0 2 INV\n2 1 2 1 3 AND\n").unwrap();
        let c = load_with_parties(
            path.to_str().unwrap(),
            Some(&[Party::Evaluator, Party::Garbler]),
        )
        .unwrap();
        assert_eq!(c.inputs()[1].party, Party::Garbler);
        std::fs::write(&path, "1 2\n1 0 1\n1 1 0 9 INV\n").unwrap();
        let e = load(path.to_str().unwrap()).unwrap_err().to_string();
        assert!(e.contains("c.txt: line 3: wire 9 is out of range"), "{e}");
    }

    #[test]
    fn a_files_side_file_gives_its_regions() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bio.txt");
        let name = path.to_str().unwrap();
        let built = build("biomatch:n=3,d=2,bits=4").unwrap();
        bristol::write_file(&built, bristol::Format::BristolFashion, &path).unwrap();
        // Without a side file: no regions.
        let plain = load(name).unwrap();
        assert!(plain.sections().is_none());
        let side = bristol::regions_path(&path);
        bristol::write_regions(&side, built.sections().unwrap()).unwrap();
        let loaded = load_with_parties(name, Some(&[Party::Garbler, Party::Evaluator])).unwrap();
        assert_eq!(loaded.sections(), built.sections());
        assert_eq!(loaded.clone().without_sections(), plain);
        assert_eq!(
            loaded.eval_hex("123456", "ab").unwrap(),
            plain.eval_hex("123456", "ab").unwrap()
        );

        // A side file that does not fit is an error that names it, not dropped.
        std::fs::write(&side, "section 0 1 2\nsection 3 4 99999999\n").unwrap();
        let e = load(name).unwrap_err().to_string();
        assert!(
            e.contains("bio.txt.regions: line 2: boundary 99999999 is past"),
            "{e}"
        );
        std::fs::write(&side, "section 0 1 2\nsection 2 3 4 # x\nsection 5 x\n").unwrap();
        let e = load(name).unwrap_err().to_string();
        assert!(
            e.contains("bio.txt.regions: line 3: 'x' is not a gate index"),
            "{e}"
        );
        // The whole section of the three distances, cut in the middle of the first one.
        let end = built.sections().unwrap().sections()[0].gates().end;
        std::fs::write(&side, format!("section 0 1 {end}\n")).unwrap();
        let e = load(name).unwrap_err().to_string();
        assert!(
            e.contains("bio.txt.regions: line 1: section 0: gate"),
            "{e}"
        );
        assert!(
            e.contains("regions of a section must be independent"),
            "{e}"
        );
    }

    #[test]
    fn every_builtin_has_documented_encoding_and_valid_defaults() {
        for b in builtins() {
            assert!(
                !b.encoding.is_empty() && !b.summary.is_empty(),
                "{}",
                b.name
            );
            for p in b.params {
                assert!(
                    p.min <= p.default && p.default <= p.max,
                    "{}:{}",
                    b.name,
                    p.name
                );
            }
        }
    }
}
