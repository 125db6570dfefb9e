//! `transputation`: garbled-circuit 2PC with a measured, pluggable network layer.
//!
//! This binary is the command-line edge of the workspace: it parses flags, calls the library
//! crates and prints text or JSON. Errors are reported here, once, with their cause chain.

/// `println!` for a command's results: writes to standard output through
/// [`output::write()`], and evaluates to a `Result` that is an [`output::StdoutClosed`] error
/// once the reader has gone (`... | head`).
macro_rules! outln {
    () => {
        $crate::output::write(format_args!("\n"))
    };
    ($($arg:tt)*) => {
        $crate::output::write(format_args!("{}\n", format_args!($($arg)*)))
    };
}

/// `print!` for a command's results; see [`outln!`].
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write(format_args!($($arg)*))
    };
}

mod auto_cmd;
mod auto_connect;
mod calibration;
mod capabilities_cmd;
mod circuit_cmd;
mod experiment_cmd;
mod garble_cmd;
mod input_source;
mod ipp_cmd;
mod output;
mod parallel_mode;
mod party_cmd;
mod party_parallel;
mod probe_cmd;
mod report;
mod run_cmd;
mod secure_cmd;
mod select_cmd;
mod serve_cmd;
mod testbed_cmd;
mod transport_cmd;
mod web;

use clap::{Parser, Subcommand};

/// Garbled-circuit secure two-party computation over a pluggable, measured network.
#[derive(Parser, Debug)]
#[command(name = "transputation", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Circuits: list the built-ins, show statistics, evaluate in plaintext, export.
    #[command(subcommand)]
    Circuit(circuit_cmd::CircuitCommand),
    /// Garbling and evaluation speed of a scheme on one thread, in memory.
    GarbleBench(garble_cmd::GarbleBenchArgs),
    /// List the transports with their options and whether they work on this machine.
    Transports(transport_cmd::TransportsArgs),
    /// Time moving N bytes over a transport as 2PC does (one way, many large messages).
    TransportBench(transport_cmd::TransportBenchArgs),
    /// Measure a path with UDP: round-trip time, loss rate, bottleneck bandwidth.
    Probe(probe_cmd::ProbeArgs),
    /// Be the garbler of a 2PC session: listen for the evaluator, compute, print the output.
    Garbler(party_cmd::GarblerArgs),
    /// Be the evaluator of a 2PC session: connect to the garbler, compute, print the output.
    Evaluator(party_cmd::EvaluatorArgs),
    /// Run both parties of a 2PC session as two processes over 127.0.0.1.
    Run(run_cmd::RunArgs),
    /// Emulated links between two network namespaces: check one, run commands or experiments
    /// across them, report the results.
    #[command(subcommand)]
    Testbed(testbed_cmd::TestbedCommand),
    /// Write a static key pair (or with --psk a pre-shared key) for protected sessions.
    Keygen(secure_cmd::KeygenArgs),
    /// What this build can do: version, transports, schemes, protection, party features.
    Capabilities(capabilities_cmd::CapabilitiesArgs),
    /// Predict every transport's time to the output for a circuit on a path and choose
    /// (what --transport auto does), or calibrate that model from testbed runs.
    Select(select_cmd::SelectArgs),
    /// A web UI of the results database: the experiments with their tables and plots,
    /// compared side by side, the model's prediction for given conditions, and experiments
    /// composed, started, watched, cancelled and resumed as `testbed run` children
    /// (http://127.0.0.1:8080/ by default).
    Serve(web::ServeArgs),
}

fn main() {
    // The process's start, as early as `main` can take it: a party reports its time from
    // here to its output (`first_output_ms`) and to its report (`wall_ms`), `run` its own.
    let started = std::time::Instant::now();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Circuit(cmd) => circuit_cmd::run(cmd),
        Command::GarbleBench(args) => garble_cmd::run(args),
        Command::Transports(args) => transport_cmd::list(args),
        Command::TransportBench(args) => transport_cmd::bench(args),
        Command::Probe(args) => probe_cmd::run(args),
        Command::Garbler(args) if args.serve => serve_cmd::garbler(args, started),
        Command::Garbler(args) if args.session.is_ipp() => ipp_cmd::garbler(&args, started),
        Command::Garbler(args) if args.session.is_auto() => auto_cmd::garbler(args, started),
        Command::Garbler(args) => party_cmd::garbler(args, started),
        Command::Evaluator(args) if args.session.is_ipp() => ipp_cmd::evaluator(&args, started),
        Command::Evaluator(args) => party_cmd::evaluator(args, started),
        Command::Run(args) => run_cmd::run(args, started),
        Command::Testbed(cmd) => testbed_cmd::run(cmd),
        Command::Keygen(args) => secure_cmd::keygen(args),
        Command::Capabilities(args) => capabilities_cmd::run(args),
        Command::Select(args) => select_cmd::run(args),
        Command::Serve(args) => web::run(args),
    };
    if let Err(e) = result {
        if output::is_closed(&e) {
            // The reader of the output went away (`... | head`): what it wanted was printed.
            return;
        }
        eprint!("{}", error_report(&e));
        std::process::exit(1);
    }
}

/// The text printed for an error: `error: ` and its message, then one `caused by:` line per
/// cause in its chain. The convention for error types here and in the libraries is that a
/// message may include its source's text (`#[error("{path}: {source}")]`, or an
/// `anyhow` context that repeats it); a cause whose text was printed already is therefore
/// left out, so each text is printed once.
fn error_report(e: &anyhow::Error) -> String {
    let mut printed = format!("error: {e}\n");
    for cause in e.chain().skip(1) {
        let text = cause.to_string();
        if !printed.contains(&text) {
            printed.push_str(&format!("  caused by: {text}\n"));
        }
    }
    printed
}

#[cfg(test)]
mod tests {
    use super::error_report;
    use anyhow::Context;

    /// An error whose message includes its source's, as `#[error("{path}: {source}")]`.
    #[derive(Debug)]
    struct Repeats {
        path: &'static str,
        source: std::io::Error,
    }

    impl std::fmt::Display for Repeats {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            write!(f, "{}: {}", self.path, self.source)
        }
    }

    impl std::error::Error for Repeats {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            Some(&self.source)
        }
    }

    #[test]
    fn each_cause_is_printed_once() {
        let io = || std::io::Error::new(std::io::ErrorKind::NotFound, "no such file");
        let e = anyhow::Error::new(Repeats {
            path: "/k",
            source: io(),
        });
        assert_eq!(error_report(&e), "error: /k: no such file\n");
        // A context that does not repeat its cause keeps it, once.
        let e = Err::<(), _>(io()).context("reading the key").unwrap_err();
        assert_eq!(
            error_report(&e),
            "error: reading the key\n  caused by: no such file\n"
        );
        // A chain of three whose middle link repeats the last.
        let e = Err::<(), _>(Repeats {
            path: "/k",
            source: io(),
        })
        .context("loading")
        .unwrap_err();
        assert_eq!(
            error_report(&e),
            "error: loading\n  caused by: /k: no such file\n"
        );
    }
}
