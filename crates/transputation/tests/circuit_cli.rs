//! End-to-end tests of `transputation circuit ...` on the reference circuits in
//! ../shared/circuits (their README lists the counts and vectors checked here).

mod common;
use common::run;

use std::path::PathBuf;

fn shared(path: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../../shared/circuits")
        .join(path);
    assert!(p.is_file(), "missing reference circuit {}", p.display());
    p.to_string_lossy().into_owned()
}

fn ok(args: &[&str]) -> String {
    let out = run(args);
    assert!(
        out.status.success(),
        "{args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn stats(circuit: &str) -> serde_json::Value {
    serde_json::from_str(&ok(&["circuit", "stats", circuit, "--json"])).unwrap()
}

#[test]
fn stats_match_the_reference_counts() {
    let cases = [
        ("bristol/AES-non-expanded.txt", 6800, 25124, 1692),
        ("bristol/sha-256.txt", 90825, 42029, 103258),
        ("bristol-fashion/aes_128.txt", 6400, 28176, 2087),
        ("bristol-fashion/sha256.txt", 22573, 110644, 1856),
        ("bristol-fashion/adder64.txt", 63, 313, 0),
        ("bristol-fashion/mult64.txt", 4033, 9642, 0),
    ];
    for (file, and, xor, inv) in cases {
        let s = stats(&shared(file));
        assert_eq!(
            (s["and"].as_u64(), s["xor"].as_u64(), s["inv"].as_u64()),
            (Some(and), Some(xor), Some(inv)),
            "{file}"
        );
        for key in ["depth", "and_depth", "inputs", "outputs"] {
            assert!(s[key].as_u64().is_some(), "{file}: {key}");
        }
    }
    let aes = stats(&shared("bristol/AES-non-expanded.txt"));
    assert_eq!(
        (aes["inputs"].as_u64(), aes["outputs"].as_u64()),
        (Some(256), Some(128))
    );
}

const AES_VECTORS: [(&str, &str, &str); 4] = [
    (
        "00000000000000000000000000000000",
        "00000000000000000000000000000000",
        "66e94bd4ef8a2c3b884cfa59ca342b2e",
    ),
    (
        "000102030405060708090a0b0c0d0e0f",
        "00112233445566778899aabbccddeeff",
        "69c4e0d86a7b0430d8cdb78070b4c55a",
    ),
    (
        "2b7e151628aed2a6abf7158809cf4f3c",
        "3243f6a8885a308d313198a2e0370734",
        "3925841d02dc09fbdc118597196a0b32",
    ),
    (
        "ffffffffffffffffffffffffffffffff",
        "00000000000000000000000000000000",
        "a1f6258c877d5fcd8964484538bfc92c",
    ),
];

fn eval(circuit: &str, extra: &[&str], garbler: &str, evaluator: &str) -> String {
    let mut args = vec![
        "circuit",
        "eval",
        circuit,
        "--garbler-input",
        garbler,
        "--evaluator-input",
        evaluator,
    ];
    args.extend_from_slice(extra);
    ok(&args).trim().to_string()
}

#[test]
fn aes_files_reproduce_the_fips_vectors() {
    let old = shared("bristol/AES-non-expanded.txt");
    let fashion = shared("bristol-fashion/aes_128.txt");
    for (key, pt, ct) in AES_VECTORS {
        // Old Bristol: input 1 is the plaintext (the garbler's by default).
        assert_eq!(eval(&old, &[], pt, key), ct);
        // The same with the key given to the garbler, as in the paper.
        assert_eq!(eval(&old, &["--parties", "evaluator,garbler"], key, pt), ct);
        // Bristol Fashion: input 1 is the key.
        assert_eq!(eval(&fashion, &[], key, pt), ct);
    }
}

#[test]
fn sha256_files_reproduce_the_vectors() {
    let mut abc = String::from("6162638");
    abc.push_str(&"0".repeat(128 - 7 - 16));
    abc.push_str("0000000000000018");
    let empty = format!("8{}", "0".repeat(127));
    let counting: String = (0u8..64).map(|b| format!("{b:02x}")).collect();
    let vectors = [
        (
            "0".repeat(128),
            "da5698be17b9b46962335799779fbeca8ce5d491c0d26243bafef9ea1837a9d8",
        ),
        (
            counting,
            "fc99a2df88f42a7a7bb9d18033cdc6a20256755f9d5b9a5044a9cc315abe84a7",
        ),
        (
            "f".repeat(128),
            "ef0c748df4da50a8d6c43c013edc3ce76c9d9fa9a1458ade56eb86c0a64492d2",
        ),
        (
            abc,
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad",
        ),
        (
            empty,
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
        ),
    ];
    let old = shared("bristol/sha-256.txt");
    let fashion = shared("bristol-fashion/sha256.txt");
    let iv = "6a09e667bb67ae853c6ef372a54ff53a510e527f9b05688c1f83d9ab5be0cd19";
    for (block, digest) in &vectors {
        assert_eq!(block.len(), 128);
        // Old Bristol: one 512-bit input (the garbler's); the evaluator's group is empty.
        assert_eq!(&eval(&old, &[], block, ""), digest);
        // Bristol Fashion: block, then the chaining value.
        assert_eq!(&eval(&fashion, &[], block, iv), digest);
    }
}

#[test]
fn small_fashion_arithmetic_files() {
    let adder = shared("bristol-fashion/adder64.txt");
    let mult = shared("bristol-fashion/mult64.txt");
    assert_eq!(eval(&adder, &[], "3", "5"), "0000000000000008");
    assert_eq!(
        eval(&adder, &[], "ffffffffffffffff", "2"),
        "0000000000000001"
    );
    assert_eq!(
        eval(&mult, &[], "100000000", "300000007"),
        "0000000700000000"
    );
}

#[test]
fn bad_inputs_name_the_problem() {
    let old = shared("bristol/AES-non-expanded.txt");
    let out = run(&[
        "circuit",
        "eval",
        &old,
        "--garbler-input",
        "00",
        "--evaluator-input",
        "00",
    ]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("garbler input 1") && err.contains("expected 32 hex digits"),
        "{err}"
    );

    let out = run(&["circuit", "stats", "no-such-circuit"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("neither a file nor a built-in"),
        "{err}"
    );

    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "2 4\n1 1 1\n\n2 1 0 1 3 AND\n").unwrap();
    let out = run(&["circuit", "stats", bad.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("line 5: truncated file"),
        "{err}"
    );

    let out = run(&["circuit", "stats", &old, "--parties", "garbler"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success() && err.contains("2 input groups"),
        "{err}"
    );
}

#[test]
fn export_and_reimport_keeps_the_outputs() {
    let dir = tempfile::tempdir().unwrap();
    let fashion = shared("bristol-fashion/aes_128.txt");
    for format in ["bristol", "bristol-fashion"] {
        let out = dir.path().join(format!("aes.{format}.txt"));
        let out = out.to_str().unwrap();
        ok(&["circuit", "export", &fashion, "--format", format, "-o", out]);
        let (key, pt, ct) = AES_VECTORS[1];
        assert_eq!(eval(out, &[], key, pt), ct, "{format}");
        let s = stats(out);
        assert_eq!(s["and"].as_u64(), Some(6400), "{format}");
    }
}

#[test]
fn export_writes_the_parallel_regions_beside_the_file_and_stats_show_them() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("bio.txt");
    let path = file.to_str().unwrap();
    let side = dir.path().join("bio.txt.regions");
    let out = run(&[
        "circuit",
        "export",
        "biomatch:n=4,d=2,bits=8",
        "--format",
        "bristol-fashion",
        "-o",
        path,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("bio.txt.regions (its parallel regions: 4 in 1 section)"),
        "{err}"
    );
    let text = std::fs::read_to_string(&side).unwrap();
    assert!(
        text.starts_with("# Transputation parallel regions"),
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with("section ")).count(),
        1
    );

    // The file loads with its regions: the same as the built-in's.
    let (from_file, builtin) = (stats(path), stats("biomatch:n=4,d=2,bits=8"));
    for key in ["sections", "regions", "region_and_share", "and"] {
        assert_eq!(from_file[key], builtin[key], "{key}");
    }
    assert_eq!(from_file["sections"].as_u64(), Some(1));
    assert_eq!(from_file["regions"].as_u64(), Some(4));
    let share = from_file["region_and_share"].as_f64().unwrap();
    assert!(share > 0.5 && share < 1.0, "{share}");
    let text = ok(&["circuit", "stats", path]);
    assert!(text.contains("parallel regions"), "{text}");
    assert!(text.contains("4 in 1 section, "), "{text}");
    let table = ok(&[
        "circuit",
        "stats",
        path,
        "aes128",
        "mincut:nodes=5,regions=3",
    ]);
    assert!(table.contains("AND in regions"), "{table}");
    let aes = table.lines().find(|l| l.starts_with("aes128")).unwrap();
    assert!(aes.contains(" - "), "{aes}");
    assert_eq!(stats("aes128")["sections"].as_u64(), Some(0));

    // A circuit without regions exported over it takes the stale side file away.
    let out = run(&[
        "circuit", "export", "aes128", "--format", "bristol", "-o", path,
    ]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("removed"), "{err}");
    assert!(!side.exists());
    assert_eq!(stats(path)["regions"].as_u64(), Some(0));

    // A side file that does not fit the circuit is refused, by its line.
    std::fs::write(&side, "section 0 1 2\nsection 1 2 3\n").unwrap();
    let out = run(&["circuit", "stats", path]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("bio.txt.regions: line 2: section 1 starts at gate 1"),
        "{err}"
    );
}
