//! Planning as garbling goes (issue 22): a circuit planned a segment at a time, and a
//! circuit generated as it is read, give the input labels, tables, decoding bits and
//! output labels of the same circuit planned whole and held in memory, for every scheme;
//! the evaluator gets the same labels whatever its own segments and the garbler's.

mod common;

use common::run;
use transputation_circuits::{library, Circuit};
use transputation_core::aes::Backend;
use transputation_garble::{Parallel, Scheme};

fn layout(window: usize, segment: Option<usize>) -> Parallel {
    let p = Parallel::none().with_window(window).unwrap();
    match segment {
        Some(gates) => p.with_segment(gates),
        None => p,
    }
}

/// Circuits with INV gates (aes128), `prf`'s degenerate AND gates, levels of every width.
fn circuits() -> Vec<(String, Circuit)> {
    let (gates, outs, _) = common::degenerate_lanes(300);
    let mut cs = vec![
        ("aes128".to_string(), library::load("aes128").unwrap()),
        ("degenerate".to_string(), common::circuit(600, gates, outs)),
        ("lanes(130)".to_string(), common::lanes(130)),
    ];
    for spec in [
        "synthetic:and=3001,xor=7003,inputs=301,depth=13",
        "synthetic:and=20000,xor=50000,inputs=64,depth=400",
    ] {
        cs.push((spec.to_string(), library::load(spec).unwrap()));
    }
    cs
}

#[test]
fn segments_of_any_size_give_the_bytes_and_labels_of_a_whole_plan() {
    let whole = layout(8192, None);
    for scheme in Scheme::ALL {
        for (name, c) in &circuits() {
            let base = run(
                scheme,
                Backend::detect(),
                c,
                (&whole, &whole),
                (1 << 16, 4099),
            );
            for (window, segment) in [(128, 1), (128, 300), (256, 1000), (8192, 8192)] {
                let seg = layout(window, Some(segment));
                let what = format!("{scheme} {name}, windows of {window}, segments of {segment}");
                let got = run(scheme, Backend::detect(), c, (&seg, &seg), (1 << 12, 999));
                assert!(got == base, "{what}: differs from the whole plan");
                // Either side may plan in segments while the other plans whole.
                let mixed = run(scheme, Backend::detect(), c, (&whole, &seg), (1 << 14, 777));
                assert!(mixed == base, "{what}, evaluator only: differs");
            }
        }
    }
}

/// A circuit whose gates fill its last segment exactly: no empty segment follows it.
#[test]
fn segments_that_end_with_the_circuit_are_its_last() {
    let spec = "synthetic:and=256,xor=768,inputs=8,depth=8";
    for c in [
        library::load(spec).unwrap(),
        library::generated(spec).unwrap(),
    ] {
        assert_eq!(c.num_gates(), 1024);
        let whole = layout(8192, None);
        for scheme in Scheme::ALL {
            let base = run(
                scheme,
                Backend::detect(),
                &c,
                (&whole, &whole),
                (1 << 16, 4099),
            );
            for (window, segment) in [(128, 128), (128, 512), (256, 1024), (1024, 1024)] {
                let seg = layout(window, Some(segment));
                let got = run(scheme, Backend::detect(), &c, (&seg, &seg), (1 << 10, 333));
                assert!(
                    got == base,
                    "{scheme}, windows of {window}, segments of {segment}"
                );
            }
        }
    }
}

#[test]
fn a_generated_circuit_garbles_and_evaluates_as_its_held_form() {
    for spec in [
        "synthetic:and=3001,xor=7003,inputs=301,depth=13",
        "synthetic:and=20000,xor=50000,inputs=64,depth=400",
        "synthetic:and=5000,xor=100,inputs=4,depth=5000,outputs=700",
    ] {
        let held = library::load(spec).unwrap();
        let generated = library::generated(spec).unwrap();
        assert!(generated.is_generated() && !held.is_generated());
        for scheme in Scheme::ALL {
            for p in [
                layout(8192, None),
                layout(128, Some(1)),
                layout(1024, Some(4096)),
            ] {
                let what = format!("{scheme} {spec}, windows of {}", p.window());
                let base = run(scheme, Backend::detect(), &held, (&p, &p), (1 << 16, 4099));
                let got = run(
                    scheme,
                    Backend::detect(),
                    &generated,
                    (&p, &p),
                    (1 << 13, 1001),
                );
                assert!(got == base, "{what}: the generated form differs");
            }
        }
    }
}

/// The evaluator of a circuit planned in segments still refuses what does not fit: bytes
/// after the last table, and tables that end early.
#[test]
fn a_segmented_evaluator_refuses_trailing_and_missing_bytes() {
    let c = library::generated("synthetic:and=2000,xor=5000,inputs=16,depth=40").unwrap();
    let seg = layout(128, Some(256));
    for scheme in Scheme::ALL {
        let r = run(scheme, Backend::detect(), &c, (&seg, &seg), (1 << 12, 999));
        let labels: Vec<_> = r.inputs.iter().map(|l| l[0]).collect();
        let mut e = scheme.evaluator_par(&c, &labels, Backend::detect(), 0, &seg);
        let mut long = r.stream.clone();
        long.push(0);
        assert!(e.feed(&long).is_err(), "{scheme}: a trailing byte accepted");
        let mut e = scheme.evaluator_par(&c, &labels, Backend::detect(), 0, &seg);
        e.feed(&r.stream[..r.stream.len() - 1]).unwrap();
        assert!(
            e.gates_done() < c.num_gates() as usize,
            "{scheme}: all gates done"
        );
        assert!(
            e.output_labels().is_err(),
            "{scheme}: truncated tables accepted"
        );
    }
}
