//! The README's transport table is generated from the registry: this test regenerates it
//! and compares. `TRANSPUTATION_BLESS=1 cargo test -p transputation-transport --test readme`
//! writes the fresh table into README.md.

use std::path::PathBuf;

use transputation_transport::{families, not_built, Family};

const BEGIN: &str =
    "<!-- transports: generated from the registry, see crates/transport/tests/readme.rs -->";
const END: &str = "<!-- end of transports -->";

/// One family's rows: the family, then its aliases.
fn rows(f: &Family) -> Vec<String> {
    let options = f
        .options
        .iter()
        .map(|o| {
            let default = o
                .default_text()
                .map(|d| format!(" (default `{d}`)"))
                .unwrap_or_default();
            format!("`{}={}`: {}{default}", o.key, o.kind.metavar(), o.doc)
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut out = vec![format!("| `{}` | {} | {} |", f.name, f.summary, options)];
    for (alias, preset) in f.aliases {
        out.push(format!("| `{alias}` | `{}:{preset}` | |", f.name));
    }
    out
}

fn table() -> String {
    let mut t = vec![
        "| transport | what | options |".to_string(),
        "|---|---|---|".to_string(),
    ];
    for f in families() {
        t.extend(rows(f));
    }
    t.join("\n")
}

#[test]
fn the_readme_table_is_the_registry() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../README.md");
    let readme = std::fs::read_to_string(&path).unwrap();
    let (Some(b), Some(e)) = (readme.find(BEGIN), readme.find(END)) else {
        panic!("README.md lacks the markers {BEGIN} ... {END}");
    };
    let current = readme[b + BEGIN.len()..e].trim();
    if !not_built().is_empty() {
        // A build without some transports: their rows stay; every built one must be there.
        for f in families() {
            for row in rows(f) {
                assert!(current.contains(&row), "README.md lacks the row {row}");
            }
        }
        return;
    }
    let fresh = table();
    if std::env::var_os("TRANSPUTATION_BLESS").is_some() {
        let updated = format!("{}{BEGIN}\n{fresh}\n{}", &readme[..b], &readme[e..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert_eq!(
        current, fresh,
        "README.md's transport table differs from the registry; \
         run TRANSPUTATION_BLESS=1 cargo test -p transputation-transport --test readme"
    );
}
