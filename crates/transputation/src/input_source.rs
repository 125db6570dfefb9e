//! Where the evaluator's computations take their inputs from: `--input` once (a session of
//! one computation) or `--repeat N` times, or `--inputs FILE|-`, one line per computation,
//! read as the computations go (so that each output is printed before the next line is
//! read, for a user who types them). A bad line is named by its source and number.

use std::io::{BufRead, BufReader};

use anyhow::{Context, Result};
use transputation_circuits::encoding::encode_party_input;
use transputation_circuits::{Circuit, Party};

/// Where the evaluator's computations take their inputs from: --input once or --repeat
/// times, or --inputs, one line each.
pub(crate) enum InputSource {
    Repeat {
        text: String,
        left: u64,
    },
    Lines {
        name: String,
        lines: Box<dyn BufRead>,
        line: u64,
    },
}

impl InputSource {
    /// From the flags: `--input`'s text, `--repeat`'s count and `--inputs`' source.
    pub(crate) fn new(input: &str, repeat: u64, inputs: Option<&str>) -> Result<Self> {
        Ok(match inputs {
            None => InputSource::Repeat {
                text: input.to_string(),
                left: repeat,
            },
            Some("-") => InputSource::Lines {
                name: "standard input".into(),
                lines: Box::new(BufReader::new(std::io::stdin())),
                line: 0,
            },
            Some(path) => InputSource::Lines {
                name: path.into(),
                lines: Box::new(BufReader::new(
                    std::fs::File::open(path)
                        .with_context(|| format!("opening --inputs file {path}"))?,
                )),
                line: 0,
            },
        })
    }

    /// Whether the session is open, asked once the first computation's input was taken:
    /// whether more computations may come.
    pub(crate) fn opens_session(&self) -> bool {
        match self {
            // Counts what is left after the first: `--repeat 2` leaves 1.
            InputSource::Repeat { left, .. } => *left > 0,
            InputSource::Lines { .. } => true,
        }
    }

    /// The next computation's input, encoded, or `None` when there are no more.
    pub(crate) fn next(&mut self, circuit: &Circuit) -> Result<Option<Vec<bool>>> {
        match self {
            InputSource::Repeat { left: 0, .. } => Ok(None),
            InputSource::Repeat { text, left } => {
                *left -= 1;
                Ok(Some(encode_party_input(circuit, Party::Evaluator, text)?))
            }
            InputSource::Lines { name, lines, line } => {
                let mut text = String::new();
                if lines
                    .read_line(&mut text)
                    .with_context(|| format!("reading inputs from {name}"))?
                    == 0
                {
                    return Ok(None);
                }
                *line += 1;
                let bits = encode_party_input(circuit, Party::Evaluator, text.trim_end())
                    .with_context(|| format!("{name}, line {line}"))?;
                Ok(Some(bits))
            }
        }
    }

    /// Where the inputs come from, for a message that there are none.
    pub(crate) fn name(&self) -> &str {
        match self {
            InputSource::Repeat { .. } => "--input",
            InputSource::Lines { name, .. } => name,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeat_opens_a_session_for_more_than_one_computation() {
        let circuit = transputation_circuits::library::load_with_parties("aes128", None).unwrap();
        let input = "00112233445566778899aabbccddeeff";
        for (repeat, computations) in [(1, 1), (2, 2), (3, 3)] {
            let mut source = InputSource::new(input, repeat, None).unwrap();
            assert!(source.next(&circuit).unwrap().is_some());
            assert_eq!(source.opens_session(), repeat > 1, "--repeat {repeat}");
            let mut n = 1;
            while source.next(&circuit).unwrap().is_some() {
                n += 1;
            }
            assert_eq!(n, computations);
        }
    }
}
