//! End-to-end tests of `transputation garble-bench`.

mod common;
use common::run;

/// The error of a `garble-bench` that must fail.
fn refusal(args: &[&str]) -> String {
    let out = run(args);
    assert!(!out.status.success(), "{args:?} succeeded");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[test]
fn reports_every_key_with_exact_table_bytes() {
    for (scheme, table, mask) in [
        ("prf", 32 * 6400 + 16 * 24040, 3200),
        ("glnp15", 32 * 6400 + 16 * 24040, 3200),
        ("circular", 32 * 6400, 0),
        ("ideal", 32 * 6400, 0),
        ("justgarble", 32 * 6400, 0),
    ] {
        let out = run(&[
            "garble-bench",
            "--circuit",
            "aes128",
            "--scheme",
            scheme,
            "--repeat",
            "1",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["and_gates"], 6400, "{scheme}");
        assert_eq!(v["xor_gates"], 24040, "{scheme}");
        assert_eq!(v["table_bytes"], table, "{scheme}");
        assert_eq!(v["mask_bytes"], mask, "{scheme}");
        for key in ["garble_ns_per_and", "eval_ns_per_and"] {
            assert!(v[key].as_f64().is_some_and(|x| x > 0.0), "{scheme}: {key}");
        }
        assert!(v["peak_rss_bytes"].as_u64().is_some(), "{scheme}");
    }
}

/// `--threads` garbles the wide waves on several threads (the output is checked against
/// plain evaluation by the command itself) and reports its layout; a bad window is refused.
#[test]
fn threads_and_window_are_reported() {
    for scheme in ["prf", "ideal"] {
        let out = run(&[
            "garble-bench",
            "--circuit",
            "synthetic:and=20000,xor=0,depth=10,inputs=1024",
            "--scheme",
            scheme,
            "--repeat",
            "1",
            "--threads",
            "2",
            "--fgp-min-wave",
            "64",
            "--fgp-window",
            "65536",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["threads"], 2, "{scheme}");
        assert_eq!(v["min_wave"], 64, "{scheme}");
        assert_eq!(v["window"], 65536, "{scheme}");
        // 10 levels of 2,000 AND gates, each a wave split in two.
        assert_eq!(v["split_and_share"], 1.0, "{scheme}");
    }
    let err = refusal(&[
        "garble-bench",
        "--circuit",
        "aes128",
        "--scheme",
        "ideal",
        "--fgp-window",
        "1000",
    ]);
    assert!(err.contains("multiple of 128"), "{err}");
    let out = run(&[
        "garble-bench",
        "--circuit",
        "aes128",
        "--scheme",
        "ideal",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(
        (v["threads"].as_u64(), v["split_and_share"].as_f64()),
        (Some(1), Some(0.0))
    );
}

/// `--parallel cgp` garbles a circuit's parallel regions a piece per thread (the output is
/// checked against plain evaluation by the command itself) and reports its pieces and
/// frame bytes; a circuit without regions, or `--parallel none` with threads, is refused.
#[test]
fn coarse_grained_parallelism_garbles_by_regions() {
    for scheme in ["prf", "circular", "ideal"] {
        let out = run(&[
            "garble-bench",
            "--circuit",
            "mvmul:m=4,k=4,bits=16",
            "--scheme",
            scheme,
            "--repeat",
            "1",
            "--parallel",
            "cgp",
            "--threads",
            "2",
            "--json",
        ]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(v["parallel"], "cgp", "{scheme}");
        assert_eq!(v["threads"], 2, "{scheme}");
        // Four rows of under 65,536 gates each: one piece of them all.
        assert_eq!(
            (v["stages"].as_u64(), v["pieces"].as_u64()),
            (Some(1), Some(1))
        );
        assert!(v["frame_bytes"]
            .as_u64()
            .is_some_and(|b| b > 0 && b % 8 == 0));
    }
    let err = refusal(&[
        "garble-bench",
        "--circuit",
        "aes128",
        "--scheme",
        "ideal",
        "--parallel",
        "cgp",
    ]);
    assert!(err.contains("no parallel regions"), "{err}");
    let err = refusal(&[
        "garble-bench",
        "--circuit",
        "aes128",
        "--scheme",
        "ideal",
        "--parallel",
        "none",
        "--threads",
        "2",
    ]);
    assert!(err.contains("--parallel none is one thread"), "{err}");
}

#[test]
fn names_a_bad_scheme_or_backend() {
    let err = refusal(&["garble-bench", "--circuit", "aes128", "--scheme", "rot13"]);
    assert!(err.contains("unknown garbling scheme 'rot13'"), "{err}");
    let err = refusal(&[
        "garble-bench",
        "--circuit",
        "aes128",
        "--scheme",
        "ideal",
        "--backend",
        "quantum",
    ]);
    assert!(err.contains("unknown AES backend 'quantum'"), "{err}");
}

/// A backend this CPU cannot run is refused with what it lacks, by `garble-bench` and by
/// the parties: `armv8` on x86 (or an x86 backend on ARM), and `vaes` on an x86 CPU
/// without AVX-512, naming the missing feature.
#[test]
fn a_backend_the_cpu_lacks_is_refused_naming_what_it_lacks() {
    let is_x86 = cfg!(any(target_arch = "x86", target_arch = "x86_64"));
    let (foreign, lack) = if is_x86 {
        ("armv8", "runs only on a 64-bit ARM CPU")
    } else {
        ("aes-ni", "runs only on an x86 CPU")
    };
    let mut cases = vec![(foreign, lack)];
    #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
    if !is_x86_feature_detected!("avx512f") {
        cases.push(("vaes", "avx512f"));
    }
    for (backend, lack) in cases {
        let bench = [
            "garble-bench",
            "--circuit",
            "aes128",
            "--scheme",
            "ideal",
            "--backend",
            backend,
        ];
        let party = [
            "run",
            "--circuit",
            "aes128",
            "--scheme",
            "ideal",
            "--backend",
            backend,
        ];
        for argv in [&bench[..], &party[..]] {
            let out = run(argv);
            let err = String::from_utf8_lossy(&out.stderr);
            assert!(!out.status.success(), "{argv:?}: {err}");
            assert!(
                err.contains(&format!("AES backend '{backend}' cannot run here"))
                    && err.contains(lack),
                "{argv:?}: {err}"
            );
        }
    }
}
