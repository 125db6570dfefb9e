//! The committed header, `include/transputation.h`, is what cbindgen makes of the sources
//! today. `TRANSPUTATION_BLESS_HEADER=1` rewrites it instead of failing.

use std::path::Path;

#[test]
fn committed_header_is_current() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    // From the crate root, whose `mod` items cbindgen follows, rather than `with_crate`:
    // no `cargo metadata` run inside the test.
    let mut generated = Vec::new();
    cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/lib.rs"))
        .generate()
        .expect("cbindgen parses the sources")
        .write(&mut generated);
    let generated = String::from_utf8(generated).unwrap();

    let path = dir.join("include/transputation.h");
    if std::env::var_os("TRANSPUTATION_BLESS_HEADER").is_some() {
        std::fs::write(&path, &generated).unwrap();
        return;
    }
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "{} is stale; regenerate it with\n  TRANSPUTATION_BLESS_HEADER=1 cargo test -p \
         transputation-transport-ffi --test header",
        path.display()
    );
}
