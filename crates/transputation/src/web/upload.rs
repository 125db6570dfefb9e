//! Circuits uploaded with the composing form (`multipart/form-data`, read by
//! [`mod@super::run`]), and the reading of a form's field within a limit, which the
//! registering of programs shares.
//!
//! An uploaded circuit is at most [`LIMIT_BYTES`]; it is read by the circuits crate's
//! reader (Bristol or Bristol Fashion, detected) before it is kept, and a file it refuses
//! is answered beside the field with the reader's message and line. A file it reads is
//! stored in `circuits/` beside the results database, named by its SHA-256
//! (`sha256-HEX.bristol`), so the same file is stored once, and the experiment names it by
//! that path, which a resumed experiment finds again. The form then carries the stored name
//! (never a path), so a form answered with a message elsewhere keeps its upload; a stored
//! name is only ever looked up in that directory.

use std::path::{Path, PathBuf};

use axum::extract::multipart::Field;

use sha2::{Digest, Sha256};
use transputation_circuits::bristol;

/// The largest circuit file accepted.
pub(super) const LIMIT_BYTES: usize = 64 << 20;

/// The directory of uploads for the results database at `db`.
pub(super) fn circuits_dir(db: &Path) -> PathBuf {
    beside_db(db, "circuits")
}

/// The directory `name` beside the results database at `db`.
pub(super) fn beside_db(db: &Path, name: &str) -> PathBuf {
    db.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .join(name)
}

/// Checks `bytes` as a circuit and stores it in `dir`; returns its stored name, or the
/// message for the field (the reader's, with its line, after the file's name).
pub(super) fn store(bytes: &[u8], dir: &Path, file_name: &str) -> Result<String, String> {
    let shown = if file_name.is_empty() {
        "the file"
    } else {
        file_name
    };
    if bytes.is_empty() {
        return Err(format!("{shown} is empty"));
    }
    let name = format!("sha256-{:x}.bristol", Sha256::digest(bytes));
    let path = dir.join(&name);
    if path.is_file() {
        // Read and kept before.
        return Ok(name);
    }
    bristol::read(bytes).map_err(|e| format!("{shown}: {e}"))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let mut kept = tempfile::NamedTempFile::new_in(dir)
        .map_err(|e| format!("storing the upload in {}: {e}", dir.display()))?;
    std::io::Write::write_all(&mut kept, bytes)
        .map_err(|e| format!("storing the upload in {}: {e}", dir.display()))?;
    kept.persist(&path)
        .map_err(|e| format!("storing the upload as {}: {e}", path.display()))?;
    Ok(name)
}

/// The path of the upload stored as `name` in `dir`, as the experiment names it; a name not
/// of the form [`store`] gives, or one not stored, is refused. The path may hold no `;` or
/// `,`, which separate `--circuits`.
pub(super) fn stored_path(dir: &Path, name: &str) -> Result<String, String> {
    let hex = name
        .strip_prefix("sha256-")
        .and_then(|n| n.strip_suffix(".bristol"))
        .filter(|h| h.len() == 64 && h.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
        .ok_or_else(|| format!("'{name}' is not the name of an upload; upload the file again"))?;
    let path = dir.join(format!("sha256-{hex}.bristol"));
    if !path.is_file() {
        return Err(format!(
            "the upload {name} is no longer stored; upload the file again"
        ));
    }
    let text = path
        .to_str()
        .filter(|p| !p.contains([';', ',']))
        .ok_or_else(|| {
            format!(
                "the uploads' directory {} has a name --circuits cannot carry (not UTF-8, or \
                 with ; or ,)",
                dir.display()
            )
        })?;
    Ok(text.to_string())
}

/// A field's bytes, at most `limit` of them.
pub(super) async fn read_limited(mut field: Field<'_>, limit: usize) -> Result<Vec<u8>, String> {
    let most = if limit >= 1 << 20 {
        format!("{} MiB", limit >> 20)
    } else {
        format!("{} KiB", limit >> 10)
    };
    let name = field.name().unwrap_or("").to_string();
    let mut bytes = Vec::new();
    loop {
        match field.chunk().await {
            Ok(Some(chunk)) => {
                if bytes.len() + chunk.len() > limit {
                    return Err(format!(
                        "the field {name:?} is larger than the {most} it may be"
                    ));
                }
                bytes.extend_from_slice(&chunk);
            }
            Ok(None) => return Ok(bytes),
            Err(e) => {
                return Err(format!(
                    "the field {name:?} could not be read whole (at most {most}): {e}"
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-gate Bristol Fashion circuit: 1 AND of two 1-bit inputs.
    const AND: &str = "1 3\n2 1 1\n1 1\n\n2 1 0 1 2 AND\n";

    #[test]
    fn a_circuit_is_stored_once_under_its_digest_and_found_by_that_name_alone() {
        let dir = tempfile::tempdir().unwrap();
        let up = dir.path().join("circuits");
        let name = store(AND.as_bytes(), &up, "and.txt").unwrap();
        assert!(
            name.starts_with("sha256-") && name.ends_with(".bristol"),
            "{name}"
        );
        assert_eq!(store(AND.as_bytes(), &up, "again.txt").unwrap(), name);
        assert_eq!(std::fs::read_dir(&up).unwrap().count(), 1);
        let path = stored_path(&up, &name).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), AND);
        for bad in [
            "../results.sqlite",
            "sha256-x.bristol",
            &name.replace('a', "A"),
        ] {
            assert!(
                stored_path(&up, bad).unwrap_err().contains("not the name"),
                "{bad}"
            );
        }
        let other = format!("sha256-{}.bristol", "0".repeat(64));
        assert!(stored_path(&up, &other)
            .unwrap_err()
            .contains("no longer stored"));
    }

    #[test]
    fn a_malformed_circuit_is_refused_with_its_line() {
        let dir = tempfile::tempdir().unwrap();
        let bad = "1 3\n2 1 1\n1 1\n\n2 1 0 7 2 AND\n";
        let e = store(bad.as_bytes(), dir.path(), "bad.txt").unwrap_err();
        assert!(e.starts_with("bad.txt: line 5: wire 7"), "{e}");
        assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
        assert_eq!(store(b"", dir.path(), "").unwrap_err(), "the file is empty");
    }
}
