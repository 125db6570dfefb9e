//! Unsigned and two's-complement integers of any width, and their arithmetic.
//!
//! Costs in AND gates for `n`-bit operands with no constant bits: addition and subtraction
//! `n - 1` (one per bit, the last carry is not needed), comparison `n`, equality `n - 1`,
//! multiplexer `n`, truncated multiplication about `n^2`, full multiplication about `2 n^2`.
//! The adder is the usual one-AND full adder: `c' = c XOR ((a XOR c) AND (b XOR c))`.

use super::bits::{Bit, Builder};
use crate::circuit::Party;

/// An unsigned integer, least significant bit first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Uint {
    bits: Vec<Bit>,
}

/// A two's-complement signed integer, least significant bit first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Int {
    bits: Vec<Bit>,
}

/// What [`Uint`] and [`Int`] have in common; lets one generic operation serve both.
pub trait Word: Clone {
    /// Whether comparisons and widening treat the top bit as a sign.
    const SIGNED: bool;
    /// The bits, least significant first.
    fn bits(&self) -> &[Bit];
    /// From bits, least significant first.
    fn from_bits(bits: Vec<Bit>) -> Self;

    /// The width in bits.
    fn width(&self) -> usize {
        self.bits().len()
    }

    /// The value if every bit is constant (two's complement for signed words, as `u128`).
    fn as_const(&self) -> Option<u128> {
        let mut v = 0u128;
        for (i, b) in self.bits().iter().enumerate() {
            if b.as_const()? && i < 128 {
                v |= 1 << i;
            }
        }
        Some(v)
    }

    /// Zero- or sign-extends, or truncates, to `width` bits (free).
    fn resize(&self, width: usize) -> Self {
        let fill = if Self::SIGNED {
            self.bits().last().copied().unwrap_or(Bit::ZERO)
        } else {
            Bit::ZERO
        };
        let mut bits = self.bits().to_vec();
        bits.resize(width, fill);
        Self::from_bits(bits)
    }

    /// The bits most significant first (the order of hex input and output groups).
    fn msb_first(&self) -> Vec<Bit> {
        self.bits().iter().rev().copied().collect()
    }

    /// Logical shift left by `k` (free).
    fn shl(&self, k: usize) -> Self {
        let n = self.width();
        let bits = (0..n)
            .map(|i| if i < k { Bit::ZERO } else { self.bits()[i - k] })
            .collect();
        Self::from_bits(bits)
    }

    /// Shift right by `k` (free): logical for unsigned, arithmetic for signed words.
    fn shr(&self, k: usize) -> Self {
        let n = self.width();
        let fill = if Self::SIGNED {
            self.bits().last().copied().unwrap_or(Bit::ZERO)
        } else {
            Bit::ZERO
        };
        let bits = (0..n)
            .map(|i| self.bits().get(i + k).copied().unwrap_or(fill))
            .collect();
        Self::from_bits(bits)
    }

    /// Rotate right by `k` (free).
    fn rotr(&self, k: usize) -> Self {
        let n = self.width();
        let bits = (0..n).map(|i| self.bits()[(i + k) % n]).collect();
        Self::from_bits(bits)
    }
}

impl Word for Uint {
    const SIGNED: bool = false;
    fn bits(&self) -> &[Bit] {
        &self.bits
    }
    fn from_bits(bits: Vec<Bit>) -> Self {
        Uint { bits }
    }
}

impl Word for Int {
    const SIGNED: bool = true;
    fn bits(&self) -> &[Bit] {
        &self.bits
    }
    fn from_bits(bits: Vec<Bit>) -> Self {
        Int { bits }
    }
}

impl Uint {
    /// From bits, least significant first.
    pub fn new(bits: Vec<Bit>) -> Self {
        Uint { bits }
    }

    /// From bits, most significant first.
    pub fn from_msb_first(bits: &[Bit]) -> Self {
        Uint {
            bits: bits.iter().rev().copied().collect(),
        }
    }

    /// The bits, least significant first.
    pub fn bits(&self) -> &[Bit] {
        &self.bits
    }

    /// The width in bits.
    pub fn width(&self) -> usize {
        self.bits.len()
    }

    /// The value, if every bit is constant.
    pub fn as_const(&self) -> Option<u128> {
        Word::as_const(self)
    }
}

impl From<Uint> for Int {
    fn from(u: Uint) -> Int {
        Int { bits: u.bits }
    }
}

impl From<Int> for Uint {
    fn from(i: Int) -> Uint {
        Uint { bits: i.bits }
    }
}

impl Builder {
    /// Declares an input group of `count` unsigned integers of `width` bits, written in hex as
    /// their big-endian values concatenated, first value first.
    pub fn input_uints(
        &mut self,
        party: Party,
        name: &str,
        count: usize,
        width: usize,
    ) -> Vec<Uint> {
        let bits = self.input_bits(party, name, count * width);
        if width == 0 {
            return vec![Uint::default(); count];
        }
        bits.chunks(width).map(Uint::from_msb_first).collect()
    }

    /// Declares an input group holding one unsigned integer of `width` bits.
    pub fn input_uint(&mut self, party: Party, name: &str, width: usize) -> Uint {
        self.input_uints(party, name, 1, width)
            .pop()
            .unwrap_or_default()
    }

    /// Declares an input group of `count` two's-complement integers of `width` bits.
    pub fn input_ints(&mut self, party: Party, name: &str, count: usize, width: usize) -> Vec<Int> {
        self.input_uints(party, name, count, width)
            .into_iter()
            .map(Int::from)
            .collect()
    }

    /// Adds an output group of unsigned integers, written as big-endian hex values
    /// concatenated, first value first.
    pub fn output_uints(&mut self, name: &str, values: &[Uint]) {
        let bits: Vec<Bit> = values.iter().flat_map(|v| v.msb_first()).collect();
        self.output_bits(name, &bits);
    }

    /// Adds an output group holding one unsigned integer.
    pub fn output_uint(&mut self, name: &str, value: &Uint) {
        self.output_uints(name, std::slice::from_ref(value));
    }

    /// A constant unsigned integer of `width` bits (the low `width` bits of `value`).
    pub fn constant_uint(&mut self, value: u128, width: usize) -> Uint {
        Uint::new(
            (0..width)
                .map(|i| Bit::Const(i < 128 && (value >> i) & 1 == 1))
                .collect(),
        )
    }

    /// `a + b + carry_in`, with the carry out: the sum has the operands' width.
    fn add_bits(
        &mut self,
        a: &[Bit],
        b: &[Bit],
        mut carry: Bit,
        want_carry: bool,
    ) -> (Vec<Bit>, Bit) {
        assert_eq!(a.len(), b.len(), "addition of unequal widths");
        let n = a.len();
        let mut sum = Vec::with_capacity(n);
        for i in 0..n {
            let axc = self.xor(a[i], carry);
            let bxc = self.xor(b[i], carry);
            sum.push(self.xor(axc, b[i]));
            if i + 1 < n || want_carry {
                let t = self.and(axc, bxc);
                carry = self.xor(carry, t);
            }
        }
        (sum, carry)
    }

    /// `a + b` modulo `2^n`: `n - 1` AND gates.
    pub fn add<W: Word>(&mut self, a: &W, b: &W) -> W {
        W::from_bits(self.add_bits(a.bits(), b.bits(), Bit::ZERO, false).0)
    }

    /// `a + b` with the carry as an extra top bit (`n + 1` bits): `n` AND gates.
    pub fn add_wide(&mut self, a: &Uint, b: &Uint) -> Uint {
        let (mut s, c) = self.add_bits(a.bits(), b.bits(), Bit::ZERO, true);
        s.push(c);
        Uint::new(s)
    }

    /// `a - b` modulo `2^n`: `n - 1` AND gates.
    pub fn sub<W: Word>(&mut self, a: &W, b: &W) -> W {
        let nb: Vec<Bit> = b.bits().iter().map(|&x| self.not(x)).collect();
        W::from_bits(self.add_bits(a.bits(), &nb, Bit::ONE, false).0)
    }

    /// `-a` modulo `2^n`.
    pub fn neg<W: Word>(&mut self, a: &W) -> W {
        let zero = W::from_bits(vec![Bit::ZERO; a.width()]);
        self.sub(&zero, a)
    }

    /// `a < b` (unsigned or signed by the word type): `n` AND gates.
    pub fn lt<W: Word>(&mut self, a: &W, b: &W) -> Bit {
        assert_eq!(a.width(), b.width(), "comparison of unequal widths");
        let (mut a, mut b) = (a.bits().to_vec(), b.bits().to_vec());
        if W::SIGNED {
            // Flipping the sign bits maps two's complement order onto unsigned order.
            if let (Some(x), Some(y)) = (a.last_mut(), b.last_mut()) {
                *x = self.not(*x);
                *y = self.not(*y);
            }
        }
        // a < b  <=>  a - b borrows  <=>  no carry out of a + !b + 1.
        let nb: Vec<Bit> = b.iter().map(|&x| self.not(x)).collect();
        let carry = self.carry_out(&a, &nb, Bit::ONE);
        self.not(carry)
    }

    /// The carry out of `a + b + c`, without the sum: one AND gate per bit.
    fn carry_out(&mut self, a: &[Bit], b: &[Bit], mut carry: Bit) -> Bit {
        for (&x, &y) in a.iter().zip(b) {
            let axc = self.xor(x, carry);
            let bxc = self.xor(y, carry);
            let t = self.and(axc, bxc);
            carry = self.xor(carry, t);
        }
        carry
    }

    /// `a <= b`.
    pub fn le<W: Word>(&mut self, a: &W, b: &W) -> Bit {
        let gt = self.lt(b, a);
        self.not(gt)
    }

    /// `a == b`: `n - 1` AND gates.
    pub fn eq<W: Word>(&mut self, a: &W, b: &W) -> Bit {
        assert_eq!(a.width(), b.width(), "equality of unequal widths");
        let same: Vec<Bit> = a
            .bits()
            .iter()
            .zip(b.bits())
            .map(|(&x, &y)| {
                let d = self.xor(x, y);
                self.not(d)
            })
            .collect();
        self.and_all(&same)
    }

    /// `if sel { if1 } else { if0 }` for integers: `n` AND gates.
    pub fn mux_word<W: Word>(&mut self, sel: Bit, if1: &W, if0: &W) -> W {
        W::from_bits(self.mux_bits(sel, if1.bits(), if0.bits()))
    }

    /// `min(a, b)`: `2n` AND gates.
    pub fn min<W: Word>(&mut self, a: &W, b: &W) -> W {
        let a_lt_b = self.lt(a, b);
        self.mux_word(a_lt_b, a, b)
    }

    /// `max(a, b)`: `2n` AND gates.
    pub fn max<W: Word>(&mut self, a: &W, b: &W) -> W {
        let a_lt_b = self.lt(a, b);
        self.mux_word(a_lt_b, b, a)
    }

    /// The minimum of a non-empty list, by a balanced tree of [`Builder::min`]: `2n` AND
    /// gates per value after the first, logarithmic depth.
    pub fn min_of<W: Word>(&mut self, values: &[W]) -> W {
        self.tree(values, |b, x, y| b.min(x, y))
    }

    /// The sum of a non-empty list modulo `2^n`, by a balanced tree of adders: the AND gates
    /// of a chain, logarithmic depth.
    pub fn sum_of<W: Word>(&mut self, values: &[W]) -> W {
        self.tree(values, |b, x, y| b.add(x, y))
    }

    /// Reduces a non-empty list pairwise, level by level.
    fn tree<W: Word>(&mut self, values: &[W], op: impl Fn(&mut Self, &W, &W) -> W) -> W {
        assert!(!values.is_empty(), "reduction of an empty list");
        let mut level = values.to_vec();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            for pair in level.chunks(2) {
                next.push(match pair {
                    [x, y] => op(self, x, y),
                    [x] => x.clone(),
                    _ => unreachable!("chunks of two"),
                });
            }
            level = next;
        }
        level.pop().expect("one left")
    }

    /// The minimum of a non-empty list and the index of its first occurrence (an unsigned
    /// integer of `ceil(log2(len))` bits, at least one), by a balanced tree: at each node the
    /// right value wins only if it is strictly smaller, so ties go to the lower index.
    pub fn argmin<W: Word>(&mut self, values: &[W]) -> (W, Uint) {
        assert!(!values.is_empty(), "argmin of an empty list");
        let idx_width = (usize::BITS - (values.len() - 1).leading_zeros()).max(1) as usize;
        let mut level: Vec<(W, Uint)> = values
            .iter()
            .enumerate()
            .map(|(i, v)| (v.clone(), self.constant_uint(i as u128, idx_width)))
            .collect();
        while level.len() > 1 {
            let mut next = Vec::with_capacity(level.len().div_ceil(2));
            let mut it = level.into_iter();
            while let Some((lv, li)) = it.next() {
                match it.next() {
                    None => next.push((lv, li)),
                    Some((rv, ri)) => {
                        let right_smaller = self.lt(&rv, &lv);
                        let v = self.mux_word(right_smaller, &rv, &lv);
                        let i = self.mux_word(right_smaller, &ri, &li);
                        next.push((v, i));
                    }
                }
            }
            level = next;
        }
        level.pop().expect("one left")
    }

    /// `a * b` modulo `2^n` (shift-and-add, only the partial products that reach the low `n`
    /// bits): about `n^2` AND gates.
    pub fn mul<W: Word>(&mut self, a: &W, b: &W) -> W {
        assert_eq!(a.width(), b.width(), "multiplication of unequal widths");
        let n = a.width();
        W::from_bits(self.mul_bits(a.bits(), b.bits(), n))
    }

    /// The full `2n`-bit product of unsigned `a` and `b` (or `n + m` bits for unequal
    /// widths).
    pub fn mul_wide(&mut self, a: &Uint, b: &Uint) -> Uint {
        let n = a.width() + b.width();
        let a = a.resize(n);
        Uint::new(self.mul_bits(a.bits(), b.bits(), n))
    }

    /// Low `n` bits of `a * b`, where `a` has at least `n` bits.
    fn mul_bits(&mut self, a: &[Bit], b: &[Bit], n: usize) -> Vec<Bit> {
        let mut acc = vec![Bit::ZERO; n];
        for (i, &bi) in b.iter().enumerate().take(n) {
            // acc[i..] += (a AND b_i)[..n - i]
            let partial: Vec<Bit> = a[..n - i].iter().map(|&x| self.and(x, bi)).collect();
            let (sum, _) = self.add_bits(&acc[i..], &partial, Bit::ZERO, false);
            acc[i..].copy_from_slice(&sum);
        }
        acc
    }

    /// Unsigned `a mod m` by restoring division (`a` of any width, the result has `m`'s
    /// width `w`): `2 (w + 1)` AND gates per bit of `a`. A zero modulus gives `a mod 2^w`
    /// (every trial subtraction of 0 succeeds), which callers may rely on.
    pub fn rem(&mut self, a: &Uint, m: &Uint) -> Uint {
        let w = m.width();
        // r has one more bit than m so that 2r + bit never overflows.
        let m_ext = m.resize(w + 1);
        let mut r = Uint::new(vec![Bit::ZERO; w + 1]);
        for &bit in a.bits().iter().rev() {
            // r = 2r + bit (r < m, so 2r + 1 < 2m fits in w + 1 bits)
            let mut bits = Vec::with_capacity(w + 1);
            bits.push(bit);
            bits.extend_from_slice(&r.bits()[..w]);
            // shifted - m with its carry out: the carry is 1 iff shifted >= m, so the
            // subtraction doubles as the comparison.
            let nm: Vec<Bit> = m_ext.bits().iter().map(|&x| self.not(x)).collect();
            let (diff, fits) = self.add_bits(&bits, &nm, Bit::ONE, true);
            r = Uint::new(self.mux_bits(fits, &diff, &bits));
        }
        r.resize(w)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::circuit::Party;
    use proptest::prelude::*;

    /// Builds `f(x, y)` on `width`-bit inputs and evaluates it on (x, y).
    fn run2(
        width: usize,
        x: u64,
        y: u64,
        f: impl Fn(&mut Builder, &Uint, &Uint) -> Vec<Bit>,
    ) -> u128 {
        let mut b = Builder::new();
        let a = b.input_uint(Party::Garbler, "x", width);
        let c = b.input_uint(Party::Evaluator, "y", width);
        let out = f(&mut b, &a, &c);
        let n_out = out.len();
        b.output_uint("out", &Uint::new(out));
        let circuit = b.build();
        let mut ins: Vec<bool> = (0..width).rev().map(|i| (x >> i) & 1 == 1).collect();
        ins.extend((0..width).rev().map(|i| (y >> i) & 1 == 1));
        let bits = circuit.eval_bits(&ins);
        let mut v = 0u128;
        for (i, &bit) in bits.iter().enumerate() {
            if bit {
                v |= 1 << (n_out - 1 - i);
            }
        }
        v
    }

    fn sx(v: u64, w: u32) -> i64 {
        ((v << (64 - w)) as i64) >> (64 - w)
    }

    proptest! {
        #[test]
        fn arithmetic_matches_u64(x in any::<u64>(), y in any::<u64>(), w in 1u32..=20) {
            let mask = (1u64 << w) - 1;
            let (x, y) = (x & mask, y & mask);
            let wu = w as usize;
            let r = |f: &dyn Fn(&mut Builder, &Uint, &Uint) -> Vec<Bit>| run2(wu, x, y, f);
            prop_assert_eq!(r(&|b, a, c| b.add(a, c).bits().to_vec()), u128::from(x.wrapping_add(y) & mask));
            prop_assert_eq!(r(&|b, a, c| b.add_wide(a, c).bits().to_vec()), u128::from(x + y));
            prop_assert_eq!(r(&|b, a, c| b.sub(a, c).bits().to_vec()), u128::from(x.wrapping_sub(y) & mask));
            prop_assert_eq!(r(&|b, a, c| b.mul(a, c).bits().to_vec()), u128::from(x.wrapping_mul(y) & mask));
            prop_assert_eq!(r(&|b, a, c| b.mul_wide(a, c).bits().to_vec()), u128::from(x) * u128::from(y));
            prop_assert_eq!(r(&|b, a, c| vec![b.lt(a, c)]), u128::from(x < y));
            prop_assert_eq!(r(&|b, a, c| vec![b.le(a, c)]), u128::from(x <= y));
            prop_assert_eq!(r(&|b, a, c| vec![b.eq(a, c)]), u128::from(x == y));
            prop_assert_eq!(r(&|b, a, c| b.min(a, c).bits().to_vec()), u128::from(x.min(y)));
            prop_assert_eq!(r(&|b, a, c| b.max(a, c).bits().to_vec()), u128::from(x.max(y)));
            if y != 0 {
                prop_assert_eq!(r(&|b, a, c| b.rem(a, c).bits().to_vec()), u128::from(x % y));
            }
            let (sx_, sy) = (sx(x, w), sx(y, w));
            prop_assert_eq!(r(&|b, a, c| vec![b.lt(&Int::from(a.clone()), &Int::from(c.clone()))]), u128::from(sx_ < sy));
            prop_assert_eq!(
                r(&|b, a, c| b.min(&Int::from(a.clone()), &Int::from(c.clone())).bits().to_vec()),
                u128::from((sx_.min(sy) as u64) & mask)
            );
        }
    }

    #[test]
    fn gate_costs_are_as_documented() {
        let count = |f: &dyn Fn(&mut Builder, &Uint, &Uint)| {
            let mut b = Builder::new();
            let x = b.input_uint(Party::Garbler, "x", 32);
            let y = b.input_uint(Party::Evaluator, "y", 32);
            f(&mut b, &x, &y);
            b.and_count()
        };
        assert_eq!(
            count(&|b, x, y| {
                b.add(x, y);
            }),
            31
        );
        assert_eq!(
            count(&|b, x, y| {
                b.sub(x, y);
            }),
            31
        );
        assert_eq!(
            count(&|b, x, y| {
                b.lt(x, y);
            }),
            32
        );
        assert_eq!(
            count(&|b, x, y| {
                b.eq(x, y);
            }),
            31
        );
        assert_eq!(
            count(&|b, x, y| {
                b.min(x, y);
            }),
            64
        );
        assert!(
            count(&|b, x, y| {
                b.mul(x, y);
            }) <= 32 * 32
        );
        // Adding a constant costs no more than adding a variable.
        assert!(
            count(&|b, x, _| {
                let k = b.constant_uint(0x428a2f98, 32);
                b.add(x, &k);
            }) <= 31
        );
    }

    #[test]
    fn argmin_prefers_the_first_minimum() {
        let mut b = Builder::new();
        let vals: Vec<Uint> = [5u128, 3, 7, 3, 9]
            .iter()
            .map(|&v| b.constant_uint(v, 8))
            .collect();
        let (m, i) = b.argmin(&vals);
        assert_eq!((m.as_const(), i.as_const()), (Some(3), Some(1)));
    }
}
