//! The applications of *Parallel Yao* (Buescher, Katzenbeisser: "Faster Secure Computation
//! through Automatic Parallelization", USENIX Security 2015): `biomatch`, `mexp` and
//! `mvmul` (§6.2 "Evaluation methodology", Table 2), and `millionaires`, the paper's
//! introductory example (Listing 1).
//!
//! The paper's parties are `P_A` and `P_B`, `P_A` providing the first input; here `P_A` is the
//! garbler and `P_B` the evaluator. Its Table 2 fixes who holds what through the input sizes
//! `P_A / P_B`: BioMatch 131K / 256 bits (`P_A` the 512 x 4 x 64-bit database, `P_B` the 4 x
//! 64-bit sample), MExp 1K / 1K (32 values of 32 bits each), MVMul 17K / 1K (`P_A` the
//! 16 x 16 x 64-bit matrix, `P_B` the 16 x 64-bit vector).
//!
//! - `biomatch` (`n = 512` templates of `d = 4` coordinates, `b = 64` bits): the minimum
//!   squared Euclidean distance `min_j sum_i (s_i - e_{j,i})^2` between the evaluator's
//!   sample and the garbler's templates, as the paper defines it ("the task is to securely
//!   compute the minimal distance"; no index). The paper's prose calls the sample "provided by
//!   the first party" but its formula and Table 2 give the database to `P_A`; we follow
//!   Table 2. Arithmetic is modulo `2^bits` and the minimum is unsigned: the result is the
//!   exact distance whenever the true distances fit in `bits` bits (for `d = 4`, coordinates
//!   below `2^((bits - 2) / 2)`).
//! - `mexp` (`k = 32` modular exponentiations of `b = 32`-bit values): the paper says only
//!   "the number of iterated executions k = 32, as well as the integer width b = 32" with
//!   1K / 1K input bits, so the modulus is not an input there. Here the garbler holds the `k`
//!   bases, the evaluator the `k` exponents and one modulus shared by all exponentiations
//!   (1K / 1K + 32 bits), as in blind signing: the signer keeps the exponent and modulus, the
//!   requester the (blinded) message. Square-and-multiply, MSB first, with
//!   [`Builder::mul_wide`] and [`Builder::rem`]: 401,440 AND gates (1.6M gates) per 32-bit
//!   exponentiation, dominated by the two restoring divisions per exponent bit. The default
//!   is the paper's `k = 32` (12.8M AND, 51M gates in all) and `k <= 40`; `bits <= 32`,
//!   since the cost grows with `bits^3`.
//! - `mvmul` (`16 x 16` matrix times a 16-vector, `b = 64`): the LWE-style product `A · s`
//!   modulo `2^bits`, `A` the garbler's, `s` the evaluator's.
//! - `millionaires` (Listing 1): `INPUT_A_income > INPUT_B_income`, the garbler's value
//!   greater than the evaluator's. The listing declares both `int`, so the comparison is
//!   **signed** (two's complement), `bits = 32` by default.
//!
//! The paper's coarse-grained parallelism (§4.4) is written into the three benchmarks: each
//! template's distance, each exponentiation and each row is a region of one section
//! ([`Builder::parallel`]), which a garbler may garble side by side; `biomatch`'s minimum
//! over the distances is sequential glue after them.
//!
//! The bounds keep every circuit under about 50 million gates: `biomatch` 13.3M gates at its
//! defaults and 52.9M at `n = 1024, d = 8`; `mvmul` 3.1M at its defaults (the paper's "3
//! million gates") and 49.8M at `m = k = 64`.
//!
//! All groups are MSB-first hex: the values' big-endian bits concatenated, first value first,
//! written as `ceil(count · bits / 4)` hex digits (the unused low bits of the last digit are
//! zero). Matrices are row-major.

use super::suite::{format_values, mask, parse_values};
use super::{Builtin, Param, Params};
use crate::builder::{Bit, Builder, Int, Uint};
use crate::circuit::{BitOrder, Circuit, Party};
use crate::encoding::bits_to_hex;

pub(crate) static BIOMATCH: Builtin = Builtin {
    name: "biomatch",
    summary:
        "minimum squared Euclidean distance of a sample to n templates (Parallel Yao BioMatch)",
    params: &[
        Param {
            name: "n",
            default: 512,
            min: 1,
            max: 1_024,
            doc: "number of templates in the garbler's database",
        },
        Param {
            name: "d",
            default: 4,
            min: 1,
            max: 8,
            doc: "coordinates per template and sample",
        },
        Param {
            name: "bits",
            default: 64,
            min: 1,
            max: 64,
            doc: "width of coordinates and distances in bits",
        },
    ],
    encoding: "garbler (P_A): the database e_0..e_{n-1}, template after template, each d \
               unsigned bits-bit coordinates (n*d values); \
               evaluator (P_B): the sample s, d unsigned bits-bit coordinates; \
               output 'min distance': min over j of sum_i (s_i - e_{j,i})^2 mod 2^bits, \
               compared unsigned (bits bits). \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_biomatch,
    reference: reference_biomatch,
    check: None,
};

pub(crate) static MEXP: Builtin = Builtin {
    name: "mexp",
    summary: "k modular exponentiations base_i^exp_i mod m (Parallel Yao MExp)",
    params: &[
        Param {
            name: "k",
            default: 32,
            min: 1,
            max: 40,
            doc: "number of exponentiations (the paper's k = 32)",
        },
        Param {
            name: "bits",
            default: 32,
            min: 1,
            max: 32,
            doc: "width of bases, exponents, modulus and results in bits",
        },
    ],
    encoding: "garbler (P_A): the bases b_1..b_k, k unsigned bits-bit values; \
               evaluator (P_B): the exponents e_1..e_k followed by the modulus m, k+1 unsigned \
               bits-bit values; \
               output 'b^e mod m': the k values b_i^e_i mod m (bits bits; a modulus of 0 \
               stands for 2^bits; x^0 = 1 mod m). \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_mexp,
    reference: reference_mexp,
    check: None,
};

pub(crate) static MVMUL: Builtin = Builtin {
    name: "mvmul",
    summary: "m x k matrix times k-vector mod 2^bits (Parallel Yao MVMul)",
    params: &[
        Param {
            name: "m",
            default: 16,
            min: 1,
            max: 64,
            doc: "matrix rows (length of the result)",
        },
        Param {
            name: "k",
            default: 16,
            min: 1,
            max: 64,
            doc: "matrix columns (length of the vector)",
        },
        Param {
            name: "bits",
            default: 64,
            min: 1,
            max: 64,
            doc: "width of every value in bits",
        },
    ],
    encoding: "garbler (P_A): the m x k matrix A, row-major, unsigned bits-bit values; \
               evaluator (P_B): the vector s, k unsigned bits-bit values; \
               output 'A * s': the m values sum_j A[i][j] * s[j] mod 2^bits. \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_mvmul,
    reference: reference_mvmul,
    check: None,
};

pub(crate) static MILLIONAIRES: Builtin = Builtin {
    name: "millionaires",
    summary: "Yao's millionaires: is the garbler's signed value greater than the evaluator's?",
    params: &[Param {
        name: "bits",
        default: 32,
        min: 1,
        max: 64,
        doc: "width of the two signed values in bits",
    }],
    encoding: "garbler (P_A): income a, one signed (two's complement) bits-bit value; \
               evaluator (P_B): income b, likewise; \
               output 'a > b': one bit, 1 iff a > b as signed integers: the hex digit 1 if the \
               garbler is richer, 0 otherwise (ties give 0). \
               Groups are MSB-first hex: the big-endian value.",
    build: build_millionaires,
    reference: reference_millionaires,
    check: None,
};

// ---------------------------------------------------------------------------------------
// biomatch

/// `x^2 mod 2^width` with the symmetric partial products counted once:
/// `x^2 = sum_i x_i 2^(2i) + sum_{i<j} x_i x_j 2^(i+j+1)`, one row per `i`. About
/// `width^2 / 2` AND gates, half of [`Builder::mul`] of `x` by itself.
fn square(b: &mut Builder, x: &Uint) -> Uint {
    let w = x.width();
    let xs = x.bits();
    let mut acc = vec![Bit::ZERO; w];
    for i in 0..w.div_ceil(2) {
        // Row i covers positions 2i..w: x_i at 2i, 0 at 2i + 1, x_i x_j at i + j + 1.
        let mut row = vec![xs[i]];
        if 2 * i + 1 < w {
            row.push(Bit::ZERO);
        }
        for j in i + 1..w - i - 1 {
            row.push(b.and(xs[i], xs[j]));
        }
        debug_assert_eq!(row.len(), w - 2 * i);
        let sum = b.add(&Uint::new(acc[2 * i..].to_vec()), &Uint::new(row));
        acc[2 * i..].copy_from_slice(sum.bits());
    }
    Uint::new(acc)
}

fn build_biomatch(p: &Params) -> Circuit {
    let (n, d, bits) = (p.usize("n"), p.usize("d"), p.usize("bits"));
    let mut b = Builder::new();
    let db = b.input_uints(Party::Garbler, "database", n * d, bits);
    let sample = b.input_uints(Party::Evaluator, "sample", d, bits);
    // One region per template; the minimum over their distances is the glue after them.
    let distances: Vec<Uint> = b.parallel(db.chunks(d), |b, template| {
        let squares: Vec<Uint> = template
            .iter()
            .zip(&sample)
            .map(|(e, s)| {
                let diff = b.sub(s, e);
                square(b, &diff)
            })
            .collect();
        b.sum_of(&squares)
    });
    let m = b.min_of(&distances);
    b.output_uint("min distance", &m);
    b.build()
}

fn reference_biomatch(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (n, d, bits) = (p.usize("n"), p.usize("d"), p.usize("bits"));
    let db = parse_values(garbler, n * d, bits);
    let sample = parse_values(evaluator, d, bits);
    let m = db
        .chunks(d)
        .map(|t| {
            t.iter().zip(&sample).fold(0u64, |acc, (e, s)| {
                let diff = s.wrapping_sub(*e);
                acc.wrapping_add(diff.wrapping_mul(diff))
            }) & mask(bits)
        })
        .min()
        .expect("n >= 1");
    format_values(&[m], bits)
}

// ---------------------------------------------------------------------------------------
// mexp

fn build_mexp(p: &Params) -> Circuit {
    let (k, bits) = (p.usize("k"), p.usize("bits"));
    let mut b = Builder::new();
    let bases = b.input_uints(Party::Garbler, "bases", k, bits);
    let mut ev = b.input_uints(Party::Evaluator, "exponents, modulus", k + 1, bits);
    let m = ev.pop().expect("k + 1 values");
    // One region per exponentiation.
    let results: Vec<Uint> = b.parallel(bases.iter().zip(&ev), |b, (base, exp)| {
        // Left-to-right square-and-multiply; `acc < m` after every reduction. The first
        // reduction makes 1 mod 1 = 0 right; a zero modulus leaves every value mod 2^bits.
        let one = b.constant_uint(1, bits);
        let mut acc = b.rem(&one, &m);
        for &e in exp.bits().iter().rev() {
            let sq = b.mul_wide(&acc, &acc);
            acc = b.rem(&sq, &m);
            let prod = b.mul_wide(&acc, base);
            let t = b.rem(&prod, &m);
            acc = b.mux_word(e, &t, &acc);
        }
        acc
    });
    b.output_uints("b^e mod m", &results);
    b.build()
}

/// `base^exp mod m` with `m = 0` meaning `2^bits`, by the circuit's square-and-multiply.
fn mod_pow(base: u64, exp: u64, m: u64, bits: usize) -> u64 {
    let m = if m == 0 { 1u128 << bits } else { u128::from(m) };
    let mut acc = 1 % m;
    for i in (0..bits).rev() {
        acc = acc * acc % m;
        if (exp >> i) & 1 == 1 {
            acc = acc * u128::from(base) % m;
        }
    }
    acc as u64
}

fn reference_mexp(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (k, bits) = (p.usize("k"), p.usize("bits"));
    let bases = parse_values(garbler, k, bits);
    let ev = parse_values(evaluator, k + 1, bits);
    let m = ev[k];
    let results: Vec<u64> = bases
        .iter()
        .zip(&ev)
        .map(|(&base, &exp)| mod_pow(base, exp, m, bits))
        .collect();
    format_values(&results, bits)
}

// ---------------------------------------------------------------------------------------
// mvmul

fn build_mvmul(p: &Params) -> Circuit {
    let (m, k, bits) = (p.usize("m"), p.usize("k"), p.usize("bits"));
    let mut b = Builder::new();
    let a = b.input_uints(Party::Garbler, "matrix A", m * k, bits);
    let s = b.input_uints(Party::Evaluator, "vector s", k, bits);
    // One region per row.
    let result: Vec<Uint> = b.parallel(a.chunks(k), |b, row| {
        let products: Vec<Uint> = row.iter().zip(&s).map(|(x, y)| b.mul(x, y)).collect();
        b.sum_of(&products)
    });
    b.output_uints("A * s", &result);
    b.build()
}

fn reference_mvmul(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (m, k, bits) = (p.usize("m"), p.usize("k"), p.usize("bits"));
    let a = parse_values(garbler, m * k, bits);
    let s = parse_values(evaluator, k, bits);
    let result: Vec<u64> = a
        .chunks(k)
        .map(|row| {
            row.iter()
                .zip(&s)
                .fold(0u64, |acc, (x, y)| acc.wrapping_add(x.wrapping_mul(*y)))
        })
        .collect();
    format_values(&result, bits)
}

// ---------------------------------------------------------------------------------------
// millionaires

fn build_millionaires(p: &Params) -> Circuit {
    let bits = p.usize("bits");
    let mut b = Builder::new();
    let a: Int = b.input_ints(Party::Garbler, "income a", 1, bits).remove(0);
    let c: Int = b
        .input_ints(Party::Evaluator, "income b", 1, bits)
        .remove(0);
    let a_greater = b.lt(&c, &a);
    b.output_bits("a > b", &[a_greater]);
    b.build()
}

fn reference_millionaires(p: &Params, garbler: &str, evaluator: &str) -> String {
    let bits = p.usize("bits");
    let signed = |hex: &str| {
        let v = parse_values(hex, 1, bits)[0];
        ((v << (64 - bits)) as i64) >> (64 - bits)
    };
    bits_to_hex(&[signed(garbler) > signed(evaluator)], BitOrder::MsbFirst)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::testing::{check_against_reference, check_vector};
    use crate::Stats;

    /// Builds `f(x)` on one `width`-bit input and evaluates it on every value.
    fn exhaustive(
        width: usize,
        f: impl Fn(&mut Builder, &Uint) -> Uint,
        want: impl Fn(u64) -> u64,
    ) {
        let mut b = Builder::new();
        let x = b.input_uint(Party::Garbler, "x", width);
        let y = f(&mut b, &x);
        b.output_uint("y", &y);
        let c = b.build();
        for v in 0..1u64 << width {
            let got = c.eval_hex(&format_values(&[v], width), "").unwrap();
            assert_eq!(
                got,
                format_values(&[want(v)], width),
                "width {width}, x = {v}"
            );
        }
    }

    #[test]
    fn square_is_exact() {
        for w in 1..=9 {
            exhaustive(w, square, |v| v.wrapping_mul(v) & mask(w));
        }
        let mut b = Builder::new();
        let x = b.input_uint(Party::Garbler, "x", 64);
        square(&mut b, &x);
        let squared = b.and_count();
        b.mul(&x, &x);
        let multiplied = b.and_count() - squared;
        assert!(squared <= multiplied / 2 + 64, "{squared} vs {multiplied}");
    }

    /// The number of regions of `circuit`'s one section (0 without one), checked against it.
    fn regions(circuit: &Circuit) -> usize {
        circuit.sections().map_or(0, |s| {
            s.check(circuit).unwrap();
            assert_eq!(s.sections().len(), 1);
            s.regions()
        })
    }

    #[test]
    fn one_region_per_template_exponentiation_and_row() {
        let region = |spec: &str| regions(&crate::library::build(spec).unwrap());
        assert_eq!(region("biomatch:n=5,d=2,bits=8"), 5);
        assert_eq!(region("biomatch:n=1,d=2,bits=8"), 0);
        assert_eq!(region("mexp:k=3,bits=8"), 3);
        assert_eq!(region("mexp:k=1,bits=8"), 0);
        assert_eq!(region("mvmul:m=4,k=3,bits=8"), 4);
        assert_eq!(region("millionaires"), 0);
        // The section ends before the glue: biomatch's minimum, none for the others.
        let c = crate::library::build("biomatch:n=5,d=2,bits=8").unwrap();
        let end = c.sections().unwrap().sections()[0].gates().end;
        assert!(end < c.num_gates());
        let c = crate::library::build("mvmul:m=4,k=3,bits=8").unwrap();
        assert_eq!(
            c.sections().unwrap().sections()[0].gates().end,
            c.num_gates()
        );
    }

    #[test]
    fn biomatch_matches_reference() {
        let c = check_against_reference("biomatch", 10);
        assert_eq!(regions(&c), 512);
        let s = Stats::of(&c);
        assert_eq!(
            (s.garbler_inputs, s.evaluator_inputs, s.outputs),
            (131_072, 256, 64)
        );
        assert_eq!(s.and, 4_289_920);
        for spec in [
            "biomatch:n=1,d=1,bits=8",
            "biomatch:n=5,d=2,bits=4",
            "biomatch:n=9,d=3,bits=16",
            "biomatch:n=4,d=4,bits=64",
            "biomatch:n=3,d=5,bits=1",
        ] {
            check_against_reference(spec, 200);
        }
    }

    #[test]
    fn biomatch_vector() {
        // Sample (1, 2); templates (4, 6): 9 + 16 = 25, (0, 0): 1 + 4 = 5, (1, 3): 0 + 1 = 1.
        check_vector("biomatch:n=3,d=2,bits=8", "040600000103", "0102", "01");
        // A template equal to the sample is at distance 0.
        check_vector("biomatch:n=2,d=1,bits=8", "7f80", "80", "00");
        // 64-bit default width; (s - e) wraps around but its square is the true one.
        let db = format!("{:016x}{:016x}{:016x}{:016x}", 10u64, 20u64, 30u64, 40u64);
        let sample = format!("{:016x}{:016x}", 13u64, 16u64);
        check_vector("biomatch:n=2,d=2", &db, &sample, &format!("{:016x}", 25u64));
    }

    #[test]
    fn mexp_matches_reference() {
        let c = check_against_reference("mexp", 2);
        assert_eq!(regions(&c), 32);
        let s = Stats::of(&c);
        assert_eq!(
            (s.garbler_inputs, s.evaluator_inputs, s.outputs),
            (1024, 1056, 1024)
        );
        assert_eq!(s.and, 32 * 401_440);
        for spec in [
            "mexp:k=1,bits=8",
            "mexp:k=3,bits=4",
            "mexp:k=2,bits=2",
            "mexp:k=1,bits=1",
            "mexp:k=2,bits=13",
        ] {
            check_against_reference(spec, 300);
        }
        check_against_reference("mexp:k=1,bits=32", 30);
    }

    #[test]
    fn mexp_vector() {
        // One modulus for all: 4^13 mod 497 = 445, 2^10 mod 497 = 30; mod 1000: 864, 24.
        check_vector("mexp:k=2,bits=16", "00040002", "000d000a01f1", "01bd001e");
        check_vector("mexp:k=2,bits=16", "00040002", "000d000a03e8", "03600018");
        // 3^0 mod 7 = 1, 3^5 mod 7 = 5; modulus 1 gives 0; modulus 0 means 2^bits.
        check_vector("mexp:k=2,bits=8", "0303", "000507", "0105");
        check_vector("mexp:k=1,bits=8", "05", "0301", "00");
        check_vector("mexp:k=1,bits=8", "03", "0500", "f3");
        // The default width, modulus the prime 2^31 - 1: 2^30, and 7^(2^32 - 1) = 7^3 = 343
        // since 2^32 - 1 = 2 (2^31 - 2) + 3 (Fermat).
        check_vector(
            "mexp:k=2",
            "00000002_00000007",
            "0000001e_ffffffff_7fffffff",
            "4000000000000157",
        );
    }

    #[test]
    fn mvmul_matches_reference() {
        let c = check_against_reference("mvmul", 50);
        assert_eq!(regions(&c), 16);
        let s = Stats::of(&c);
        assert_eq!(
            (s.garbler_inputs, s.evaluator_inputs, s.outputs),
            (16_384, 1_024, 1_024)
        );
        assert_eq!(s.and, 1_047_568);
        for spec in [
            "mvmul:m=1,k=1,bits=8",
            "mvmul:m=3,k=5,bits=16",
            "mvmul:m=4,k=2,bits=64",
            "mvmul:m=2,k=3,bits=3",
        ] {
            check_against_reference(spec, 200);
        }
    }

    #[test]
    fn mvmul_vector() {
        // A = [[1, 2, 3], [4, 5, 6]], s = (7, 8, 9): A s = (50, 122).
        check_vector("mvmul:m=2,k=3,bits=8", "010203040506", "070809", "327a");
        // Wrap-around modulo 2^64.
        let a = format!("{:016x}{:016x}", u64::MAX, 2u64);
        let s = format!("{:016x}{:016x}", 3u64, 1u64);
        check_vector(
            "mvmul:m=1,k=2",
            &a,
            &s,
            &format!("{:016x}", u64::MAX.wrapping_mul(3) + 2),
        );
    }

    #[test]
    fn millionaires_matches_reference() {
        let c = check_against_reference("millionaires", 500);
        assert_eq!(Stats::of(&c).and, 32);
        for spec in [
            "millionaires:bits=1",
            "millionaires:bits=2",
            "millionaires:bits=5",
            "millionaires:bits=64",
        ] {
            check_against_reference(spec, 300);
        }
    }

    #[test]
    fn millionaires_vector() {
        check_vector("millionaires", "00000005", "00000003", "1");
        check_vector("millionaires", "00000003", "00000005", "0");
        check_vector("millionaires", "00000005", "00000005", "0");
        // Signed: -1 < 1 and 1 > -2^31.
        check_vector("millionaires", "ffffffff", "00000001", "0");
        check_vector("millionaires", "00000001", "80000000", "1");
        check_vector("millionaires:bits=8", "7f", "80", "1");
    }
}
