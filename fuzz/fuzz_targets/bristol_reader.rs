//! Fuzzes the Bristol reader with arbitrary bytes. Properties: reading never panics; a file
//! that reads as a circuit has consistent statistics, and survives writing in both formats
//! and reading back with the same outputs on an input derived from the data.
#![no_main]

use libfuzzer_sys::fuzz_target;
use transputation_circuits::bristol::{self, Format};
use transputation_circuits::Stats;

fuzz_target!(|data: &[u8]| {
    let Ok(circuit) = bristol::read(data) else {
        return;
    };
    // The reader takes up to 2^31 wires by design; statistics and 64 evaluations need memory
    // per wire, which a header of a billion wires would make exceed the fuzzer's 2 GB (an
    // out-of-memory finding of the harness, not of the reader). Such a circuit is only read.
    if circuit.num_wires() > 1 << 22 {
        return;
    }
    let stats = Stats::of(&circuit);
    assert_eq!(stats.gates() as usize, circuit.gates().len());
    // Inputs from the data's bytes, 64 instances at once.
    let inputs: Vec<u64> = (0..circuit.n_inputs())
        .map(|i| {
            let b = data.get(i % data.len().max(1)).copied().unwrap_or(0);
            u64::from(b)
                .wrapping_mul(0x9e37_79b9_7f4a_7c15)
                .rotate_left(i as u32 % 64)
        })
        .collect();
    let want = circuit.eval_words(&inputs);
    for format in [Format::BristolFashion, Format::Bristol] {
        let mut text = Vec::new();
        if bristol::write(&circuit, format, &mut text).is_err() {
            // Old Bristol refuses more than one input per party.
            assert_eq!(format, Format::Bristol);
            continue;
        }
        let back = bristol::read(&text[..]).expect("a written circuit reads back");
        assert_eq!(back.n_inputs(), circuit.n_inputs());
        assert_eq!(back.n_outputs(), circuit.n_outputs());
        // The reader gives the first group to the garbler and the writer keeps the garbler's
        // groups first, so groups keep their order; the writer bit-reverses each group whose
        // order is not the format's. Undo that on both sides and compare.
        let order = format.bit_order();
        let mut back_inputs = Vec::with_capacity(inputs.len());
        let mut rest = &inputs[..];
        for g in circuit.inputs() {
            let (now, later) = rest.split_at(g.len as usize);
            if g.order == order {
                back_inputs.extend_from_slice(now);
            } else {
                back_inputs.extend(now.iter().rev());
            }
            rest = later;
        }
        let got = back.eval_words(&back_inputs);
        let mut want_in_file_order = Vec::with_capacity(want.len());
        let mut rest = &want[..];
        for o in circuit.outputs() {
            let (now, later) = rest.split_at(o.wires.len());
            if o.order == order {
                want_in_file_order.extend_from_slice(now);
            } else {
                want_in_file_order.extend(now.iter().rev());
            }
            rest = later;
        }
        assert_eq!(got, want_in_file_order);
    }
});
