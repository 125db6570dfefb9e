//! Where the completion-time model's calibration lives (`select --calibrate` writes it) and
//! reading it: what `select` and both parties under `--transport auto` predict with.

use std::path::{Path as FsPath, PathBuf};

use anyhow::{Context, Result};
use transputation_model::Calibration;

/// Where the calibration lives unless --calibration says: `$XDG_CONFIG_HOME/transputation/
/// calibration.json`, else `~/.config/transputation/calibration.json`.
pub(crate) fn calibration_file() -> Option<PathBuf> {
    let non_empty = |k: &str| std::env::var_os(k).filter(|v| !v.is_empty());
    if let Some(d) = non_empty("XDG_CONFIG_HOME") {
        return Some(FsPath::new(&d).join("transputation/calibration.json"));
    }
    non_empty("HOME").map(|h| FsPath::new(&h).join(".config/transputation/calibration.json"))
}

/// The calibration to predict with, and where it came from: `explicit` (which must
/// exist), else the default file if it exists, else the transports' declared defaults.
pub(crate) fn load_calibration(explicit: Option<&FsPath>) -> Result<(Calibration, String)> {
    let file = match explicit {
        Some(f) => f.to_path_buf(),
        None => match calibration_file().filter(|f| f.exists()) {
            Some(f) => f,
            None => return Ok((Calibration::default(), "the transports' defaults".into())),
        },
    };
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("reading the calibration {}", file.display()))?;
    let cal: Calibration = serde_json::from_str(&text).with_context(|| {
        format!(
            "{} is not a calibration (write one with `transputation select --calibrate`)",
            file.display()
        )
    })?;
    Ok((cal, file.display().to_string()))
}
