//! PLACEHOLDER: to be written.
use crate::circuit::Circuit;
use std::path::Path;

/// Placeholder.
#[derive(Debug, thiserror::Error)]
#[error("placeholder")]
pub struct ReadError;

/// Placeholder.
pub fn read_file(_: &Path) -> Result<Circuit, ReadError> {
    todo!()
}
