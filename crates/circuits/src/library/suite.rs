//! The comparison suite of *Choose Wisely* (Ziegeldorf, Metzke, Henze, Wehrle: "Choose
//! Wisely: A Comparison of Secure Two-Party Computation Frameworks", IWPE 2015, IEEE
//! Security and Privacy Workshops; §III-A "Benchmarks"): `add`, `mult`, `min`, `argmin`,
//! `matmul` and `sort`.
//!
//! # Parties
//! The paper writes `[x]` (`[X]`) for the input of the client C and `[y]` (`[Y]`) for the input
//! of the server S, and in its garbled-circuit flow (§II-A, Fig. 1a) the server garbles and the
//! client evaluates. So here the **garbler is the server and holds `y`/`Y`**, the **evaluator
//! is the client and holds `x`/`X`**. Where the order of the two inputs matters (the index of
//! `argmin` in the concatenation `X || Y`, the product `X · Y` of `matmul`) the paper's order is
//! kept: the evaluator's `X` comes first although the garbler's input group is declared first.
//!
//! # Sizes and widths
//! Every input is an unsigned integer of `bits` bits (the paper: "If not stated otherwise, we
//! assume a length of l = 32 bit per input"; it never says signed, so all are unsigned).
//! The paper measures each benchmark at several input sizes `n` ("the number of operations of
//! the individual benchmark", §IV); each default here is the largest size it measured:
//! - `add`, `mult`: `n = 20, 40, 60, 80, 100` operations; default `n = 100`. `ADD([x],[y])` and
//!   `MULT([x],[y])` are one operation on one value of each party, so `n` operations are `n`
//!   element-wise operations on `n` values of each party. Results are reduced modulo
//!   `2^bits` (C semantics of the compiled frameworks, and the same width as the inputs).
//! - `min`, `argmin`: `n = 20, ..., 100`; default `n = 100` values *per party* (the paper
//!   leaves open whether `n` counts both vectors; we read it like `sort`, where it says "client
//!   and server each provided a vector of length n"). `ARGMIN([X, I_X], [Y, I_Y])` takes the
//!   indices as inputs; here the indices are the public positions in `X || Y` and so cost no
//!   input bits.
//! - `matmul`: `3x3, 5x5, 10x10, 15x15`; default `n = 15`, the product reduced modulo
//!   `2^bits`, each `Z[i][j] = sum_k X[i][k] · Y[k][j]` computed separately as in the paper.
//! - `sort`: `n = 8, 16, 32, 64` per party; default `n = 64`; the `2n` values are sorted by a
//!   bitonic network, as in the paper ([`Builder::sort`]).
//!
//! The bounds on `n` keep every circuit, even at `bits=64`, under about 50 million gates
//! (at the maxima: `add` 31.5M, `mult` 48.5M, `min` 41.0M, `argmin` 41.3M, `matmul` 49.7M,
//! `sort` 39.0M gates).
//!
//! All groups are MSB-first hex: the values' big-endian bits concatenated, first value first,
//! written as `ceil(count · bits / 4)` hex digits (the unused low bits of the last digit are
//! zero). Matrices are row-major.

use super::{Builtin, Param, Params};
use crate::builder::{Builder, Uint, Word};
use crate::circuit::{BitOrder, Circuit, Party};
use crate::encoding::{bits_to_hex, hex_to_bits};

/// The integer width, shared by every built-in of the suite.
const BITS: Param = Param {
    name: "bits",
    default: 32,
    min: 1,
    max: 64,
    doc: "width of every input and output value in bits",
};

pub(crate) static ADD: Builtin = Builtin {
    name: "add",
    summary: "n element-wise additions x_i + y_i mod 2^bits (Choose Wisely ADD)",
    params: &[
        Param {
            name: "n",
            default: 100,
            min: 1,
            max: 100_000,
            doc: "number of additions (values per party)",
        },
        BITS,
    ],
    encoding: "garbler (server): y_1..y_n, n unsigned bits-bit values; \
               evaluator (client): x_1..x_n, likewise; \
               output 'x + y': the n values (x_i + y_i) mod 2^bits. \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_add,
    reference: reference_add,
    check: None,
};

pub(crate) static MULT: Builtin = Builtin {
    name: "mult",
    summary: "n element-wise multiplications x_i * y_i mod 2^bits (Choose Wisely MULT)",
    params: &[
        Param {
            name: "n",
            default: 100,
            min: 1,
            max: 4_096,
            doc: "number of multiplications (values per party)",
        },
        BITS,
    ],
    encoding: "garbler (server): y_1..y_n, n unsigned bits-bit values; \
               evaluator (client): x_1..x_n, likewise; \
               output 'x * y': the n values (x_i * y_i) mod 2^bits (the low bits of each product). \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_mult,
    reference: reference_mult,
    check: None,
};

pub(crate) static MIN: Builtin = Builtin {
    name: "min",
    summary: "minimum of the 2n values X || Y of both parties (Choose Wisely MIN)",
    params: &[
        Param {
            name: "n",
            default: 100,
            min: 1,
            max: 40_000,
            doc: "values per party",
        },
        BITS,
    ],
    encoding: "garbler (server): Y = y_0..y_{n-1}, n unsigned bits-bit values; \
               evaluator (client): X = x_0..x_{n-1}, likewise; \
               output 'min': the smallest of the 2n values (bits bits). \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_min,
    reference: reference_min,
    check: None,
};

pub(crate) static ARGMIN: Builtin = Builtin {
    name: "argmin",
    summary: "minimum of X || Y and its index, ties to the lowest index (Choose Wisely ARGMIN)",
    params: &[
        Param {
            name: "n",
            default: 100,
            min: 1,
            max: 40_000,
            doc: "values per party",
        },
        BITS,
    ],
    encoding: "garbler (server): Y = y_0..y_{n-1}, n unsigned bits-bit values; \
               evaluator (client): X = x_0..x_{n-1}, likewise; \
               outputs 'min': the smallest of the 2n values (bits bits), and 'index': its first \
               position in the concatenation X || Y (evaluator's values at 0..n-1, garbler's at \
               n..2n-1) as an unsigned integer of ceil(log2(2n)) bits zero-extended to a whole \
               number of hex digits (n=100: 8 bits). \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_argmin,
    reference: reference_argmin,
    check: None,
};

pub(crate) static MATMUL: Builtin = Builtin {
    name: "matmul",
    summary: "n x n matrix product Z = X * Y mod 2^bits (Choose Wisely MATRIXMULT)",
    params: &[
        Param {
            name: "n",
            default: 15,
            min: 1,
            max: 16,
            doc: "matrix dimension (n x n matrices)",
        },
        BITS,
    ],
    encoding: "garbler (server): the n x n matrix Y, row-major, unsigned bits-bit values; \
               evaluator (client): the n x n matrix X, likewise; \
               output 'X * Y': Z[i][j] = sum_k X[i][k] * Y[k][j] mod 2^bits, row-major. \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_matmul,
    reference: reference_matmul,
    check: None,
};

pub(crate) static SORT: Builtin = Builtin {
    name: "sort",
    summary: "bitonic sort of the 2n values X || Y of both parties (Choose Wisely SORT)",
    params: &[
        Param {
            name: "n",
            default: 64,
            min: 1,
            max: 1_024,
            doc: "values per party",
        },
        BITS,
    ],
    encoding: "garbler (server): Y, n unsigned bits-bit values; \
               evaluator (client): X, likewise; \
               output 'sorted': all 2n values in ascending order (2n bits-bit values). \
               Groups are MSB-first hex: the big-endian values concatenated, first value first.",
    build: build_sort,
    reference: reference_sort,
    check: None,
};

// ---------------------------------------------------------------------------------------
// Helpers shared with `apps`.

/// `2^bits - 1` for `bits` in `1..=64`.
pub(super) fn mask(bits: usize) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// Parses an MSB-first hex group of `count` unsigned values of `width` bits (`width <= 64`).
pub(super) fn parse_values(hex: &str, count: usize, width: usize) -> Vec<u64> {
    let bits = hex_to_bits(hex, count * width, BitOrder::MsbFirst)
        .unwrap_or_else(|e| panic!("malformed reference input: {e}"));
    bits.chunks(width)
        .map(|c| c.iter().fold(0u64, |v, &b| (v << 1) | u64::from(b)))
        .collect()
}

/// Writes `values` as an MSB-first hex group of `width`-bit values (the low `width` bits of
/// each).
pub(super) fn format_values(values: &[u64], width: usize) -> String {
    let bits: Vec<bool> = values
        .iter()
        .flat_map(|&v| (0..width).rev().map(move |i| i < 64 && (v >> i) & 1 == 1))
        .collect();
    bits_to_hex(&bits, BitOrder::MsbFirst)
}

// ---------------------------------------------------------------------------------------
// Inputs and references.

/// The declared parameters `(n, bits)`.
fn n_bits(p: &Params) -> (usize, usize) {
    (p.usize("n"), p.usize("bits"))
}

/// Declares the inputs of a suite circuit: the garbler's (server's) `Y` first, then the
/// evaluator's (client's) `X`, `count` values of `bits` bits each. Returns `(X, Y)`.
fn inputs(b: &mut Builder, count: usize, bits: usize) -> (Vec<Uint>, Vec<Uint>) {
    let y = b.input_uints(Party::Garbler, "Y (server)", count, bits);
    let x = b.input_uints(Party::Evaluator, "X (client)", count, bits);
    (x, y)
}

/// Parses the reference inputs: `(X, Y)` from the evaluator's and the garbler's hex.
fn parse_inputs(garbler: &str, evaluator: &str, count: usize, bits: usize) -> (Vec<u64>, Vec<u64>) {
    (
        parse_values(evaluator, count, bits),
        parse_values(garbler, count, bits),
    )
}

/// Width of the `argmin` index output: `ceil(log2(len))` bits (at least one, as
/// [`Builder::argmin`] makes it), rounded up to a whole number of hex digits.
fn index_width(len: usize) -> usize {
    let bits = (usize::BITS - (len - 1).leading_zeros()).max(1) as usize;
    bits.div_ceil(4) * 4
}

// ---------------------------------------------------------------------------------------
// add, mult

fn build_add(p: &Params) -> Circuit {
    let (n, bits) = n_bits(p);
    let mut b = Builder::new();
    let (x, y) = inputs(&mut b, n, bits);
    let z: Vec<Uint> = x.iter().zip(&y).map(|(x, y)| b.add(x, y)).collect();
    b.output_uints("x + y", &z);
    b.build()
}

fn reference_add(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (n, bits) = n_bits(p);
    let (x, y) = parse_inputs(garbler, evaluator, n, bits);
    let z: Vec<u64> = x.iter().zip(&y).map(|(x, y)| x.wrapping_add(*y)).collect();
    format_values(&z, bits)
}

fn build_mult(p: &Params) -> Circuit {
    let (n, bits) = n_bits(p);
    let mut b = Builder::new();
    let (x, y) = inputs(&mut b, n, bits);
    let z: Vec<Uint> = x.iter().zip(&y).map(|(x, y)| b.mul(x, y)).collect();
    b.output_uints("x * y", &z);
    b.build()
}

fn reference_mult(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (n, bits) = n_bits(p);
    let (x, y) = parse_inputs(garbler, evaluator, n, bits);
    let z: Vec<u64> = x.iter().zip(&y).map(|(x, y)| x.wrapping_mul(*y)).collect();
    format_values(&z, bits)
}

// ---------------------------------------------------------------------------------------
// min, argmin

fn build_min(p: &Params) -> Circuit {
    let (n, bits) = n_bits(p);
    let mut b = Builder::new();
    let (x, y) = inputs(&mut b, n, bits);
    let all: Vec<Uint> = x.into_iter().chain(y).collect();
    let m = b.min_of(&all);
    b.output_uint("min", &m);
    b.build()
}

fn reference_min(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (n, bits) = n_bits(p);
    let (x, y) = parse_inputs(garbler, evaluator, n, bits);
    let m = x.iter().chain(&y).copied().min().expect("n >= 1");
    format_values(&[m], bits)
}

fn build_argmin(p: &Params) -> Circuit {
    let (n, bits) = n_bits(p);
    let mut b = Builder::new();
    let (x, y) = inputs(&mut b, n, bits);
    let all: Vec<Uint> = x.into_iter().chain(y).collect();
    let (m, i) = b.argmin(&all);
    b.output_uint("min", &m);
    b.output_uint("index", &i.resize(index_width(2 * n)));
    b.build()
}

fn reference_argmin(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (n, bits) = n_bits(p);
    let (x, y) = parse_inputs(garbler, evaluator, n, bits);
    let all: Vec<u64> = x.into_iter().chain(y).collect();
    let m = *all.iter().min().expect("n >= 1");
    let i = all.iter().position(|&v| v == m).expect("present");
    format!(
        "{},{}",
        format_values(&[m], bits),
        format_values(&[i as u64], index_width(2 * n))
    )
}

// ---------------------------------------------------------------------------------------
// matmul

fn build_matmul(p: &Params) -> Circuit {
    let (n, bits) = n_bits(p);
    let mut b = Builder::new();
    let (x, y) = inputs(&mut b, n * n, bits);
    let mut z = Vec::with_capacity(n * n);
    for i in 0..n {
        for j in 0..n {
            let products: Vec<Uint> = (0..n)
                .map(|k| b.mul(&x[i * n + k], &y[k * n + j]))
                .collect();
            z.push(b.sum_of(&products));
        }
    }
    b.output_uints("X * Y", &z);
    b.build()
}

fn reference_matmul(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (n, bits) = n_bits(p);
    let (x, y) = parse_inputs(garbler, evaluator, n * n, bits);
    let z: Vec<u64> = (0..n * n)
        .map(|ij| {
            let (i, j) = (ij / n, ij % n);
            (0..n).fold(0u64, |acc, k| {
                acc.wrapping_add(x[i * n + k].wrapping_mul(y[k * n + j]))
            })
        })
        .collect();
    format_values(&z, bits)
}

// ---------------------------------------------------------------------------------------
// sort

fn build_sort(p: &Params) -> Circuit {
    let (n, bits) = n_bits(p);
    let mut b = Builder::new();
    let (x, y) = inputs(&mut b, n, bits);
    let all: Vec<Uint> = x.into_iter().chain(y).collect();
    let sorted = b.sort(&all);
    b.output_uints("sorted", &sorted);
    b.build()
}

fn reference_sort(p: &Params, garbler: &str, evaluator: &str) -> String {
    let (n, bits) = n_bits(p);
    let (x, y) = parse_inputs(garbler, evaluator, n, bits);
    let mut all: Vec<u64> = x.into_iter().chain(y).collect();
    all.sort_unstable();
    format_values(&all, bits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::library::testing::{check_against_reference, check_vector};
    use crate::Stats;

    #[test]
    fn helpers_round_trip() {
        // 101 000 as one 6-bit integer
        assert_eq!(parse_values("28", 2, 3), vec![5, 0]);
        assert_eq!(format_values(&[5, 0], 3), "28");
        assert_eq!(
            format_values(&[u64::MAX, 1], 64),
            format!("{}{:016x}", "f".repeat(16), 1)
        );
        assert_eq!(
            parse_values(&format_values(&[7, 9, 3], 5), 3, 5),
            vec![7, 9, 3]
        );
        assert_eq!(
            (index_width(2), index_width(16), index_width(17)),
            (4, 4, 8)
        );
        assert_eq!(index_width(200), 8);
    }

    #[test]
    fn add_matches_reference() {
        let c = check_against_reference("add", 200);
        assert_eq!(Stats::of(&c).and, 100 * 31);
        for spec in [
            "add:n=3,bits=8",
            "add:n=1,bits=1",
            "add:n=5,bits=64",
            "add:n=4,bits=7",
        ] {
            check_against_reference(spec, 300);
        }
    }

    #[test]
    fn add_vector() {
        // x = (01, ff, 20), y = (ff, 01, 10): sums 100 -> 00, 100 -> 00, 30.
        let s = check_vector("add:n=3,bits=8", "ff0110", "01ff20", "000030");
        assert_eq!(s.and, 3 * 7);
        // 32-bit default width: 0xffffffff + 2 wraps to 1.
        check_vector(
            "add:n=2",
            "ffffffff_00000005",
            "00000002_00000007",
            "000000010000000c",
        );
    }

    #[test]
    fn mult_matches_reference() {
        let c = check_against_reference("mult", 200);
        assert_eq!(Stats::of(&c).and, 99_300);
        for spec in [
            "mult:n=3,bits=8",
            "mult:n=1,bits=1",
            "mult:n=2,bits=64",
            "mult:n=3,bits=13",
        ] {
            check_against_reference(spec, 300);
        }
    }

    #[test]
    fn mult_vector() {
        // 0x10 * 0x11 = 0x110 -> 0x10; 0xff * 0xff = 0xfe01 -> 0x01; 3 * 5 = 0x0f.
        check_vector("mult:n=3,bits=8", "11ff05", "10ff03", "10010f");
        // 65536 * 65537 mod 2^32 = 65536.
        check_vector("mult:n=1", "00010001", "00010000", "00010000");
    }

    #[test]
    fn min_matches_reference() {
        let c = check_against_reference("min", 200);
        assert_eq!(Stats::of(&c).and, 199 * 64);
        for spec in [
            "min:n=1,bits=8",
            "min:n=7,bits=3",
            "min:n=5,bits=64",
            "min:n=1,bits=1",
        ] {
            check_against_reference(spec, 300);
        }
    }

    #[test]
    fn min_vector() {
        // The minimum may sit with either party.
        check_vector("min:n=3,bits=8", "403020", "505060", "20");
        check_vector("min:n=3,bits=8", "403020", "501960", "19");
        check_vector(
            "min:n=2",
            "80000000_00000007",
            "00000009_ffffffff",
            "00000007",
        );
    }

    #[test]
    fn argmin_matches_reference() {
        let c = check_against_reference("argmin", 200);
        assert_eq!(Stats::of(&c).and, 12_930);
        // Few bits make ties common: they go to the lowest index.
        for spec in [
            "argmin:n=1,bits=8",
            "argmin:n=7,bits=2",
            "argmin:n=9,bits=3",
            "argmin:n=3,bits=64",
        ] {
            check_against_reference(spec, 300);
        }
    }

    #[test]
    fn argmin_vector() {
        // X = (50, 30, 60) (evaluator), Y = (40, 30, 20) (garbler): X || Y has its minimum 20
        // at index 5.
        check_vector("argmin:n=3,bits=8", "403020", "503060", "20,5");
        // A tie between X[1] and Y[1] goes to X[1], index 1.
        check_vector("argmin:n=3,bits=8", "403040", "503060", "30,1");
        // n = 1: a one-bit index, shown as one hex digit.
        check_vector("argmin:n=1,bits=4", "3", "3", "3,0");
        check_vector("argmin:n=1,bits=4", "2", "3", "2,1");
    }

    #[test]
    fn matmul_matches_reference() {
        let c = check_against_reference("matmul", 30);
        assert_eq!(Stats::of(&c).and, 3_449_025);
        for spec in [
            "matmul:n=1,bits=8",
            "matmul:n=3,bits=16",
            "matmul:n=2,bits=64",
            "matmul:n=4,bits=5",
        ] {
            check_against_reference(spec, 200);
        }
    }

    #[test]
    fn matmul_vector() {
        // X = [[1, 2], [3, 4]] (evaluator), Y = [[5, 6], [7, 8]] (garbler):
        // X * Y = [[19, 22], [43, 50]]; Y * X would be [[23, 34], [31, 46]].
        check_vector("matmul:n=2,bits=8", "05060708", "01020304", "13162b32");
        // Wrap-around: 0x80 * 2 = 0x100 -> 0.
        check_vector("matmul:n=1,bits=8", "02", "80", "00");
    }

    #[test]
    fn sort_matches_reference() {
        let c = check_against_reference("sort", 200);
        assert_eq!(Stats::of(&c).and, 1_792 * 64);
        for spec in [
            "sort:n=1,bits=8",
            "sort:n=5,bits=3",
            "sort:n=8,bits=16",
            "sort:n=3,bits=64",
            "sort:n=13,bits=4",
        ] {
            check_against_reference(spec, 300);
        }
    }

    #[test]
    fn sort_vector() {
        // Y = (09, ff, 00), X = (7f, 09, 01): duplicates survive.
        check_vector("sort:n=3,bits=8", "09ff00", "7f0901", "000109097fff");
        check_vector("sort:n=1", "00000002", "00000001", "0000000100000002");
    }
}
