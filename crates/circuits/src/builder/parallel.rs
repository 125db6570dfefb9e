//! Parallel regions written as a program: [`Builder::parallel`] runs one body per item and
//! records where each body's gates begin and end, so that the built circuit carries them as
//! a section of independent regions ([`Sections`](crate::Sections)) that a garbler may
//! garble side by side. This module owns the recording; `bits` turns what was recorded into
//! the circuit's sections when it builds.

use super::bits::Builder;

impl Builder {
    /// Runs `body` on each item in turn, as [`Iterator::map`] would, and returns the results
    /// in order; the gates each body writes become one *region*, and the regions of this call
    /// one *section* of the built circuit ([`Circuit::sections`](crate::Circuit::sections)):
    /// independent work (one loop iteration each) that a garbler may garble on its own thread.
    /// The gates are the same as without `parallel`, in the same order: it records layout,
    /// nothing else.
    ///
    /// - A body that writes no gate (all its results constant) is no region: the region
    ///   boundaries strictly increase. With fewer than two regions there is no section.
    /// - Only the outermost call records: a `parallel` inside a body runs its bodies as
    ///   part of the outer body's region.
    /// - In a program written in pieces ([`pieces`](super::pieces)) only the held form has
    ///   sections: a generated circuit has none.
    ///
    /// Each body may read whatever was written before the call (the inputs, shared values)
    /// but not what another body of the same call wrote: carrying a result from one body to
    /// the next (a running sum kept in a captured variable) makes the regions dependent. That
    /// is a bug of the program, and [`Builder::build`] panics with the
    /// [`SectionsError`](crate::SectionsError) that names the gate and wire; do such work
    /// after the call, on the returned results (the sequential glue between sections).
    ///
    /// ```
    /// use transputation_circuits::builder::Builder;
    /// use transputation_circuits::Party;
    ///
    /// let mut b = Builder::new();
    /// let xs = b.input_uints(Party::Garbler, "x", 4, 16);
    /// let y = b.input_uint(Party::Evaluator, "y", 16);
    /// // One region per product; their sum is the glue after the section.
    /// let products = b.parallel(&xs, |b, x| b.mul(x, &y));
    /// let sum = b.sum_of(&products);
    /// b.output_uint("sum x_i * y", &sum);
    /// let circuit = b.build();
    ///
    /// let sections = circuit.sections().expect("one section");
    /// assert_eq!(sections.sections().len(), 1);
    /// assert_eq!(sections.regions(), 4);
    /// assert_eq!(
    ///     circuit.eval_hex("0001000200030004", "000a").unwrap(),
    ///     "0064" // (1 + 2 + 3 + 4) * 10 = 100
    /// );
    /// ```
    pub fn parallel<T, R>(
        &mut self,
        items: impl IntoIterator<Item = T>,
        mut body: impl FnMut(&mut Builder, T) -> R,
    ) -> Vec<R> {
        if self.parallel_depth > 0 {
            return items.into_iter().map(|item| body(self, item)).collect();
        }
        self.parallel_depth += 1;
        let mut bounds = vec![self.gate_count() as u64];
        let results = items
            .into_iter()
            .map(|item| {
                let result = body(self, item);
                // A body without gates leaves the boundary where it was: no empty region.
                let end = self.gate_count() as u64;
                if end > *bounds.last().expect("starts with one") {
                    bounds.push(end);
                }
                result
            })
            .collect();
        self.parallel_depth -= 1;
        if bounds.len() >= 3 {
            self.sections.push(bounds);
        }
        results
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::builder::{Bit, Uint};
    use crate::circuit::Party;
    use crate::SectionsError;

    fn bounds(c: &crate::Circuit) -> Vec<Vec<u64>> {
        c.sections().map_or_else(Vec::new, |s| {
            s.sections().iter().map(|s| s.bounds().to_vec()).collect()
        })
    }

    #[test]
    fn each_body_is_a_region_and_the_gates_do_not_change() {
        let program = |b: &mut Builder, parallel: bool| {
            let xs = b.input_uints(Party::Garbler, "x", 3, 8);
            let y = b.input_uint(Party::Evaluator, "y", 8);
            let body = |b: &mut Builder, x: &Uint| b.add(x, &y);
            let sums: Vec<Uint> = if parallel {
                b.parallel(&xs, body)
            } else {
                xs.iter().map(|x| body(b, x)).collect()
            };
            let all = b.sum_of(&sums);
            b.output_uint("sum", &all);
        };
        let (mut with, mut without) = (Builder::new(), Builder::new());
        program(&mut with, true);
        program(&mut without, false);
        let per_add = without.gate_count() as u64;
        let (with, without) = (with.build(), without.build());
        assert_eq!(with.gates(), without.gates());
        assert!(without.sections().is_none());
        let b = &bounds(&with)[0];
        assert_eq!(b.len(), 4);
        assert_eq!(b[0], 0);
        // Three adds of equal cost, then the glue.
        assert_eq!(b[1] * 3, b[3]);
        assert!(b[3] < per_add);
        with.sections().unwrap().check(&with).unwrap();
        assert_eq!(with.eval_hex("010203", "04").unwrap(), "12");
    }

    #[test]
    fn bodies_without_gates_are_no_region() {
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 2);
        // A constant body, then two with gates, then another constant one.
        let out = b.parallel(0..4, |b, i| match i {
            1 => b.and(x[0], x[1]),
            2 => b.xor(x[0], x[1]),
            _ => Bit::ZERO,
        });
        // One region only: no section.
        let one = b.parallel(0..3, |b, i| if i == 1 { b.not(x[0]) } else { x[1] });
        b.output_bits("y", &[out[1], out[2], one[1]]);
        let c = b.build();
        assert_eq!(bounds(&c), vec![vec![0, 1, 2]]);
    }

    #[test]
    fn only_the_outermost_call_records() {
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 4);
        let rows = b.parallel(0..2, |b, i| {
            let inner = b.parallel(0..2, |b, j| b.and(x[i], x[j + 2]));
            b.xor(inner[0], inner[1])
        });
        let top = b.and(rows[0], rows[1]);
        b.output_bits("y", &[top]);
        let c = b.build();
        assert_eq!(bounds(&c), vec![vec![0, 3, 6]]);
        // Two calls one after the other, glue between them: two sections.
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 2);
        let first = b.parallel(0..2, |b, _| b.and(x[0], x[1]));
        let glue = b.xor(first[0], first[1]);
        let second = b.parallel(0..2, |b, i| b.and(glue, x[i]));
        b.output_bits("y", &second);
        assert_eq!(bounds(&b.build()), vec![vec![0, 1, 2], vec![3, 4, 5]]);
    }

    #[test]
    fn constant_outputs_are_written_after_the_sections() {
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 2);
        let y = b.parallel(0..2, |b, i| b.not(x[i]));
        b.output_bits("y", &[y[0], y[1], Bit::ONE]);
        let c = b.build();
        assert_eq!(c.num_gates(), 4);
        assert_eq!(bounds(&c), vec![vec![0, 1, 2]]);
        assert_eq!(c.eval_bits(&[true, false]), vec![false, true, true]);
    }

    #[test]
    fn a_body_that_reads_another_ones_result_is_refused() {
        let mut b = Builder::new();
        let x = b.input_bits(Party::Garbler, "x", 3);
        // A running AND carried from body to body: the regions are dependent.
        let mut acc = x[0];
        b.parallel(1..3, |b, i| {
            acc = b.and(acc, x[i]);
        });
        b.output_bits("y", &[acc]);
        let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| b.build()))
            .expect_err("dependent bodies");
        let message = panic.downcast_ref::<String>().expect("a formatted panic");
        let want = SectionsError::Dependent {
            section: 0,
            gate: 1,
            reader: 1,
            wire: 3,
            writer: 0,
        };
        assert!(message.contains("must be independent"), "{message}");
        assert!(message.contains(&want.to_string()), "{message}");
    }
}
