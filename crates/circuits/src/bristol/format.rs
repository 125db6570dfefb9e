//! The two circuit file formats, [`Format`]: what the reader detects and the writer is asked
//! for. Its own module so that the reader and the writer share it without importing their
//! parent.

use crate::BitOrder;

/// A circuit file format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// Old Bristol (Nigel Smart's circuits): two inputs, one output, MSB first.
    Bristol,
    /// Bristol Fashion (SCALE-MAMBA): any number of inputs and outputs, LSB first.
    BristolFashion,
}

impl Format {
    /// The bit order of every group in this format.
    pub fn bit_order(self) -> BitOrder {
        match self {
            Format::Bristol => BitOrder::MsbFirst,
            Format::BristolFashion => BitOrder::LsbFirst,
        }
    }

    /// The name used on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Bristol => "bristol",
            Format::BristolFashion => "bristol-fashion",
        }
    }
}

impl std::str::FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "bristol" => Ok(Format::Bristol),
            "bristol-fashion" | "fashion" => Ok(Format::BristolFashion),
            other => Err(format!(
                "unknown format '{other}' (expected bristol or bristol-fashion)"
            )),
        }
    }
}
