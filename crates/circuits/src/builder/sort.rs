//! Bitonic sorting networks (Batcher 1968), in the variant that sorts any number of values,
//! not only powers of two. A compare-exchange of two `n`-bit words costs `2n` AND gates
//! (`n` for the comparison, `n` for the conditional swap); a network on `m` values has
//! about `m log2(m) (log2(m) + 1) / 4` of them.

use super::bits::Builder;
use super::int::Word;

impl Builder {
    /// Sorts `values` in ascending order (signed or unsigned by the word type).
    pub fn sort<W: Word>(&mut self, values: &[W]) -> Vec<W> {
        let mut v = values.to_vec();
        let n = v.len();
        self.bitonic_sort(&mut v, 0, n, true);
        v
    }

    /// Puts `(v[i], v[j])` in order: ascending leaves the smaller in `v[i]`.
    fn compare_exchange<W: Word>(&mut self, v: &mut [W], i: usize, j: usize, ascending: bool) {
        let swap = if ascending {
            self.lt(&v[j], &v[i])
        } else {
            self.lt(&v[i], &v[j])
        };
        // d = swap AND (a XOR b); a' = a XOR d, b' = b XOR d: one AND per bit.
        let diff = self.xor_bits(v[i].bits(), v[j].bits());
        let d: Vec<_> = diff.iter().map(|&x| self.and(swap, x)).collect();
        let a = self.xor_bits(v[i].bits(), &d);
        let b = self.xor_bits(v[j].bits(), &d);
        v[i] = W::from_bits(a);
        v[j] = W::from_bits(b);
    }

    fn bitonic_sort<W: Word>(&mut self, v: &mut [W], lo: usize, n: usize, ascending: bool) {
        if n > 1 {
            let m = n / 2;
            self.bitonic_sort(v, lo, m, !ascending);
            self.bitonic_sort(v, lo + m, n - m, ascending);
            self.bitonic_merge(v, lo, n, ascending);
        }
    }

    fn bitonic_merge<W: Word>(&mut self, v: &mut [W], lo: usize, n: usize, ascending: bool) {
        if n > 1 {
            // the greatest power of two below n
            let m = 1usize << (usize::BITS - 1 - (n - 1).leading_zeros());
            for i in lo..lo + n - m {
                self.compare_exchange(v, i, i + m, ascending);
            }
            self.bitonic_merge(v, lo, m, ascending);
            self.bitonic_merge(v, lo + m, n - m, ascending);
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::builder::Builder;
    use crate::circuit::Party;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn sorts_any_length(values in proptest::collection::vec(0u8..16, 1..20)) {
            let mut b = Builder::new();
            let ins = b.input_uints(Party::Garbler, "v", values.len(), 4);
            let sorted = b.sort(&ins);
            b.output_uints("sorted", &sorted);
            let c = b.build();
            let hex: String = values.iter().map(|v| format!("{v:x}")).collect();
            let mut want = values.clone();
            want.sort();
            let want: String = want.iter().map(|v| format!("{v:x}")).collect();
            prop_assert_eq!(c.eval_hex(&hex, "").unwrap(), want);
        }
    }
}
