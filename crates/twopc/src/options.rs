//! What a session is run with: the settings both parties must agree on (checked through the
//! session header) and each party's local tuning.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use transputation_core::aes::Backend;
use transputation_garble::coarse::Layout;
use transputation_garble::{Parallel, Scheme};

/// Who learns the output.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum OutputMode {
    /// Both parties: the evaluator decodes and sends the output to the garbler.
    #[default]
    Both,
    /// The evaluator only.
    Evaluator,
}

impl fmt::Display for OutputMode {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            OutputMode::Both => "both",
            OutputMode::Evaluator => "evaluator",
        })
    }
}

impl FromStr for OutputMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "both" => Ok(OutputMode::Both),
            "evaluator" => Ok(OutputMode::Evaluator),
            other => Err(format!(
                "unknown output mode '{other}' (expected both or evaluator)"
            )),
        }
    }
}

/// Settings both parties must agree on (checked through the session header), and local
/// tuning.
#[derive(Clone, Debug)]
pub struct Options {
    /// The garbling scheme.
    pub scheme: Scheme,
    /// Who learns the output.
    pub output: OutputMode,
    /// The garbler's batch of tables per message (default 256 KiB): small enough for the
    /// evaluator to start early, large enough to keep per-message costs low. Batches end at
    /// the garbling windows, so a message may be up to one window larger.
    pub batch_bytes: usize,
    /// Tables the garbler produces ahead while it waits for the evaluator's OT message
    /// (default 16 MiB), sent once the OT is done; bounds the memory this costs, which is
    /// allocated and touched when the garbler is made (at most the circuit's tables plus a
    /// batch).
    pub prefetch_bytes: usize,
    /// The AES implementation.
    pub backend: Backend,
    /// Threads and window of the garbling or evaluation (local tuning like `backend`, not
    /// in the header: the tables are the same bytes under every setting).
    pub parallel: Parallel,
    /// Coarse-grained parallelism: the tables come as the frames of
    /// `transputation_garble::coarse`, which both parties must agree on (the header says
    /// so); `parallel` is then not used. With [`Coarse::if_peer_willing`], only if the
    /// peer's header does not ask for the tables in order; they then come in order on
    /// `parallel`.
    pub coarse: Option<Coarse>,
}

/// Coarse-grained parallelism (`--parallel cgp`): the circuit's parallel regions garbled and
/// evaluated by pieces, side by side on threads of their own
/// (`transputation_garble::coarse`).
#[derive(Clone)]
pub struct Coarse {
    /// The circuit cut into pieces, for the session's scheme.
    pub layout: Arc<Layout>,
    /// Threads that garble or evaluate pieces at once (at least 1).
    pub threads: usize,
    /// Frames only if the peer takes them too (`--parallel auto`), else the tables in the
    /// circuit's order: the header says [`crate::TableOrder::FramesIfPeer`] instead of
    /// requiring frames ([`crate::TableOrder::Frames`]).
    pub if_peer_willing: bool,
}

impl fmt::Debug for Coarse {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Coarse")
            .field("stages", &self.layout.stages())
            .field("pieces", &self.layout.pieces())
            .field("threads", &self.threads)
            .field("if_peer_willing", &self.if_peer_willing)
            .finish()
    }
}

impl Options {
    /// These options as the session resolved them from the two headers: the tables as
    /// frames (`frames`) or in the circuit's order (coarse-grained parallelism dropped).
    pub(crate) fn resolved(&self, frames: bool) -> Options {
        match (&self.coarse, frames) {
            (Some(c), true) => Options {
                coarse: Some(Coarse {
                    if_peer_willing: false,
                    ..c.clone()
                }),
                ..self.clone()
            },
            _ => Options {
                coarse: None,
                ..self.clone()
            },
        }
    }

    /// Default settings for a scheme.
    pub fn new(scheme: Scheme) -> Self {
        Options {
            scheme,
            output: OutputMode::Both,
            batch_bytes: 256 << 10,
            prefetch_bytes: 16 << 20,
            backend: Backend::detect(),
            parallel: Parallel::none(),
            coarse: None,
        }
    }
}
