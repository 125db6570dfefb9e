//! Plans kept on disk (issue 22, item 2): a garbler or evaluator that loads a saved plan
//! gives the bytes and labels of one that plans, and an entry that is corrupt, truncated or
//! another circuit's is planned again and replaced, never used.

mod common;

use std::fs;
use std::path::{Path, PathBuf};

use common::run;
use transputation_circuits::{library, Circuit};
use transputation_core::aes::Backend;
use transputation_garble::{Parallel, Scheme};

/// `c` garbled and evaluated under `scheme`, each side planning afresh.
fn fresh_run(scheme: Scheme, c: &Circuit) -> common::Run {
    let fresh = Parallel::none();
    run(
        scheme,
        Backend::detect(),
        c,
        (&fresh, &fresh),
        (1 << 16, 4099),
    )
}

/// A directory holding `c`'s plan under `scheme`, saved by a garbler: its entry's path and
/// bytes.
fn saved_plan(scheme: Scheme, c: &Circuit) -> (tempfile::TempDir, PathBuf, Vec<u8>) {
    let dir = tempfile::tempdir().unwrap();
    let cached = Parallel::none().with_plan_cache(dir.path());
    let fresh = Parallel::none();
    run(
        scheme,
        Backend::detect(),
        c,
        (&cached, &fresh),
        (1 << 16, 4099),
    );
    let path = entry(dir.path());
    let bytes = fs::read(&path).unwrap();
    (dir, path, bytes)
}

/// The one entry in `dir`.
fn entry(dir: &Path) -> PathBuf {
    let files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "plan"))
        .collect();
    assert_eq!(files.len(), 1, "one plan in {}: {files:?}", dir.display());
    files[0].clone()
}

/// The file's identity and time: a plan saved again (after a refused load) is a new file.
fn identity(path: &Path) -> (u64, std::time::SystemTime) {
    use std::os::unix::fs::MetadataExt;
    let m = fs::metadata(path).unwrap();
    (m.ino(), m.modified().unwrap())
}

#[test]
fn a_saved_plan_gives_the_bytes_and_labels_of_a_fresh_one() {
    // aes128 (INV gates, a few windows), a synthetic circuit of many windows whose last
    // gates follow its last AND gate, and the same circuit generated (planned whole in the
    // fast mode, as the paper-sized circuits are).
    let spec = "synthetic:and=20000,xor=50000,inputs=64,depth=400";
    let circuits = [
        library::load("aes128").unwrap(),
        library::load(spec).unwrap(),
        library::generated(spec).unwrap(),
    ];
    for (c, scheme) in circuits.iter().flat_map(|c| Scheme::ALL.map(|s| (c, s))) {
        let dir = tempfile::tempdir().unwrap();
        let fresh = Parallel::none();
        let cached = Parallel::none().with_plan_cache(dir.path());
        let base = run(
            scheme,
            Backend::detect(),
            c,
            (&fresh, &fresh),
            (1 << 16, 4099),
        );
        // The garbler saves the plan; the evaluator of the same run loads it.
        let first = run(
            scheme,
            Backend::detect(),
            c,
            (&cached, &cached),
            (1 << 12, 999),
        );
        let path = entry(dir.path());
        let saved = identity(&path);
        let again = run(
            scheme,
            Backend::detect(),
            c,
            (&cached, &fresh),
            (1 << 14, 777),
        );
        assert!(
            first == base && again == base,
            "{scheme}: a cached plan differs"
        );
        assert_eq!(
            identity(&path),
            saved,
            "{scheme}: the plan was refused and saved again"
        );
    }
}

#[test]
fn corrupt_truncated_and_foreign_entries_are_planned_again_and_replaced() {
    let c = library::load("sha256").unwrap();
    let other = library::load("aes128").unwrap();
    let scheme = Scheme::Ideal;
    let base = fresh_run(scheme, &c);
    let (dir, path, good) = saved_plan(scheme, &c);
    let cached = Parallel::none().with_plan_cache(dir.path());
    // aes128's plan under sha256's name: its key is another circuit's.
    let (_other_dir, _, foreign) = saved_plan(scheme, &other);

    let mut flipped = good.clone();
    flipped[good.len() / 2] ^= 0x10;
    let mut bad_slot = good.clone();
    // The first op's first slot, past the header: a CRC-valid file would still be refused,
    // but a bit flip there fails the checksum first.
    bad_slot[100] ^= 0xff;
    let cases: [(&str, Vec<u8>); 5] = [
        ("a flipped bit", flipped),
        ("a flipped byte", bad_slot),
        ("truncated", good[..good.len() / 3].to_vec()),
        ("empty", Vec::new()),
        ("another circuit's", foreign),
    ];
    for (what, bytes) in cases {
        fs::write(&path, &bytes).unwrap();
        let got = run(
            scheme,
            Backend::detect(),
            &c,
            (&cached, &cached),
            (1 << 13, 1001),
        );
        assert!(got == base, "{what} entry: the plan differs");
        assert_eq!(fs::read(&path).unwrap(), good, "{what} entry: not replaced");
    }
}

/// `bytes` with `at..at + 4` set to `value` and the checksum (the last 4 bytes) made right
/// again: an entry no bit flip made, that only the plan's own checks can refuse.
fn with_u32(bytes: &[u8], at: usize, value: u32) -> Vec<u8> {
    let mut b = bytes.to_vec();
    b[at..at + 4].copy_from_slice(&value.to_le_bytes());
    let end = b.len() - 4;
    let crc = crc32fast::hash(&b[..end]);
    b[end..].copy_from_slice(&crc.to_le_bytes());
    b
}

#[test]
fn entries_with_a_right_checksum_but_wrong_fields_are_planned_again() {
    let c = library::load("aes128").unwrap();
    for scheme in [Scheme::Ideal, Scheme::Prf] {
        let base = fresh_run(scheme, &c);
        let (dir, path, good) = saved_plan(scheme, &c);
        let cached = Parallel::none().with_plan_cache(dir.path());
        // After the magic (8), the key (32 + 1 + name + 4) and four lengths (32): slots,
        // the constant, then the first op (a, b, out and kind, aux) and so on.
        let name = format!(
            "{} {}",
            if scheme == Scheme::Prf {
                "prf"
            } else {
                "half-gates"
            },
            env!("CARGO_PKG_VERSION")
        );
        let slots_at = 8 + 32 + 1 + name.len() + 4 + 32;
        let ops_at = slots_at + 8;
        let n_ops = c.num_gates() as usize;
        let offsets_at = ops_at + 16 * n_ops;
        let cases = [
            ("no slots", with_u32(&good, slots_at, 1)),
            ("2^31 slots", with_u32(&good, slots_at, 1 << 31)),
            ("another constant", with_u32(&good, slots_at + 4, 7)),
            ("an input past the slots", with_u32(&good, ops_at, 1 << 28)),
            ("an unknown kind", with_u32(&good, ops_at + 8, 7 << 29)),
            (
                "a table past its window",
                with_u32(&good, offsets_at, 1 << 30),
            ),
        ];
        for (what, bytes) in cases {
            fs::write(&path, &bytes).unwrap();
            let got = run(
                scheme,
                Backend::detect(),
                &c,
                (&cached, &cached),
                (1 << 13, 1001),
            );
            assert!(got == base, "{scheme}, {what}: the plan differs");
            assert_eq!(
                fs::read(&path).unwrap(),
                good,
                "{scheme}, {what}: not replaced"
            );
        }
    }
}

/// A circuit planned as it is garbled (over 2^22 gates, or in segments) is never saved.
#[test]
fn plans_made_in_segments_are_not_kept() {
    let c = library::load("aes128").unwrap();
    let dir = tempfile::tempdir().unwrap();
    let seg = Parallel::none()
        .with_plan_cache(dir.path())
        .with_segment(8192);
    run(
        Scheme::Prf,
        Backend::detect(),
        &c,
        (&seg, &seg),
        (1 << 16, 4099),
    );
    assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 0);
}
