//! Presets: the experiments of the two papers the testbed reproduces, by name
//! (`transputation testbed run --preset paper-table4`).
//!
//! A preset is an [`ExperimentFile`] like any other: the command line may override any of
//! its fields (`--runs 1`, `--transports tcp;udt`), and the database keeps the result, so a
//! resumed preset is the experiment that was started, whatever the preset says later.
//!
//! The transport lists name every reliable transport ([`reliable_transports`]);
//! [`crate::launch::prepare`] leaves out, with a note, those the party binary cannot run. The
//! Transputation paper's presets cap every link at [`PAPER_MAX_RATE`]: the userspace emulator
//! (`emu`) should not be asked for more on a 2-core machine, and its 10 Gbit/s `lan` becomes
//! 500 Mbit/s (the report says so). `--max-rate` sets another cap.

use crate::experiment::{ExperimentError, ExperimentFile, SweepFile, DEFAULT_TIMEOUT_SECS};

/// The reliable transports of this build, from the transport registry, as `transputation
/// transports` names them: every family whose delivery is reliable, then its aliases (`udp`
/// loses data on a lossy link by design, so it is in no preset). Every preset takes its
/// transports from here, so a transport added to the registry is in the presets.
pub fn reliable_transports() -> Vec<String> {
    let mut out = Vec::new();
    for f in transputation_transport::families() {
        if f.delivery.is_reliable() {
            out.extend(f.names().map(str::to_string));
        }
    }
    out
}

/// A random circuit with the gate counts of the paper's MinCut (GLNP15: 999,960 AND, 2,524,920
/// XOR) and 250,000 input bits per party.
pub const MINCUT_SIZE: &str = "synthetic:and=999960,xor=2524920,inputs=250000";

/// The circuits of the Transputation paper's Table 4 and Figures 5–13.
pub const PAPER_CIRCUITS: [&str; 3] = ["aes128", "sha256", MINCUT_SIZE];

/// The three garbling schemes the paper compares.
pub const PAPER_SCHEMES: [&str; 3] = ["prf", "circular", "ideal"];

/// The rate cap of the Transputation paper's presets.
pub const PAPER_MAX_RATE: &str = "500mbit";

/// A preset: its name and what it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Preset {
    /// Its name (`--preset NAME`).
    pub name: &'static str,
    /// What it reproduces and how.
    pub description: &'static str,
}

/// Every preset, in the order `testbed presets` lists them.
pub const PRESETS: [Preset; 6] = [
    Preset {
        name: "paper-table4",
        description: "Transputation paper, Table 4: aes128, sha256 and the MinCut-size circuit \
                      × prf, circular, ideal × every reliable transport × lan, eu-us, eu-aus; \
                      3 runs",
    },
    Preset {
        name: "paper-latency",
        description: "Transputation paper, Figures 5-7: the three circuits × three schemes × \
                      every reliable transport at RTT 1, 10, 50, 100, 200, 300 ms, 500 Mbit/s; \
                      3 runs",
    },
    Preset {
        name: "paper-loss",
        description: "Transputation paper, Figures 8-10: the three circuits × three schemes × \
                      every reliable transport at loss 0, 0.01, 0.05, 0.1, 0.5, 1 %, RTT 100 ms, \
                      500 Mbit/s; 3 runs",
    },
    Preset {
        name: "paper-bandwidth",
        description: "Transputation paper, Figures 11-13: the three circuits, ideal scheme, × \
                      every reliable transport at 10, 50, 100, 200, 500 Mbit/s, RTT 1 and \
                      100 ms; 3 runs",
    },
    Preset {
        name: "choose-wisely",
        description: "Choose Wisely (Ziegeldorf et al.): add, mult, min, argmin (n = 20, 40, \
                      60, 80, 100), matmul (3, 5, 10, 15), sort (n = 8, 16, 32, 64), ideal \
                      scheme, over tcp × cw-lan, cw-wifi, cw-wan, cw-3g; 10 runs, 600 s limit",
    },
    Preset {
        name: "blast-long-fat",
        description: "blast against the best case and the others on a long fat path: the \
                      MinCut-size circuit, ideal scheme, over udp paced at 96 % of the link (no \
                      repair: the best case), tcp, tcp-bbr, mtcp:streams=8,cc=bbr, udt, \
                      quic:cc=bbr,iw=18750000 and blast at RTT 300 ms, 500 Mbit/s, loss 0, \
                      0.1 and 1 %; 3 runs",
    },
];

/// The transports of `blast-long-fat`: `udp` paced just below the link (the best case, on
/// the clean link only: it fails on loss), the kernel's and the hand-tuned ones, `blast`.
pub const BLAST_TRANSPORTS: [&str; 7] = [
    "udp:rate=480mbit",
    "tcp",
    "tcp-bbr",
    "mtcp:streams=8,cc=bbr",
    "udt",
    "quic:cc=bbr,iw=18750000",
    "blast",
];

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// The Transputation paper's common part: circuits, schemes, transports, 3 runs, the cap.
fn paper(name: &str) -> ExperimentFile {
    ExperimentFile {
        name: Some(name.into()),
        circuits: strings(&PAPER_CIRCUITS),
        schemes: strings(&PAPER_SCHEMES),
        transports: reliable_transports(),
        runs: 3,
        timeout: DEFAULT_TIMEOUT_SECS,
        max_rate: Some(PAPER_MAX_RATE.into()),
        ..ExperimentFile::default()
    }
}

/// The Choose-Wisely benchmarks at that paper's input sizes (its §IV): the built-ins `add`,
/// `mult`, `min`, `argmin` with n = 20, 40, 60, 80, 100 values per party, `matmul` with
/// 3×3 to 15×15 matrices, `sort` with n = 8 to 64 values per party; 32-bit values.
pub fn choose_wisely_circuits() -> Vec<String> {
    let mut c = Vec::new();
    for bench in ["add", "mult", "min", "argmin"] {
        for n in [20, 40, 60, 80, 100] {
            c.push(format!("{bench}:n={n}"));
        }
    }
    for n in [3, 5, 10, 15] {
        c.push(format!("matmul:n={n}"));
    }
    for n in [8, 16, 32, 64] {
        c.push(format!("sort:n={n}"));
    }
    c
}

/// The preset of that name, as an experiment description; an unknown name is an error
/// that lists the presets.
pub fn preset(name: &str) -> Result<ExperimentFile, ExperimentError> {
    let f = match name {
        "paper-table4" => ExperimentFile {
            conditions: strings(&["lan", "eu-us", "eu-aus"]),
            ..paper(name)
        },
        "paper-latency" => ExperimentFile {
            sweep: SweepFile {
                rtt: strings(&["1ms", "10ms", "50ms", "100ms", "200ms", "300ms"]),
                rate: strings(&[PAPER_MAX_RATE]),
                ..SweepFile::default()
            },
            ..paper(name)
        },
        "paper-loss" => ExperimentFile {
            sweep: SweepFile {
                rtt: strings(&["100ms"]),
                loss: strings(&["0", "0.01%", "0.05%", "0.1%", "0.5%", "1%"]),
                rate: strings(&[PAPER_MAX_RATE]),
                ..SweepFile::default()
            },
            ..paper(name)
        },
        "paper-bandwidth" => ExperimentFile {
            schemes: strings(&["ideal"]),
            sweep: SweepFile {
                rtt: strings(&["1ms", "100ms"]),
                rate: strings(&["10mbit", "50mbit", "100mbit", "200mbit", "500mbit"]),
                ..SweepFile::default()
            },
            ..paper(name)
        },
        "blast-long-fat" => ExperimentFile {
            name: Some(name.into()),
            circuits: strings(&[MINCUT_SIZE]),
            schemes: strings(&["ideal"]),
            transports: strings(&BLAST_TRANSPORTS),
            sweep: SweepFile {
                rtt: strings(&["300ms"]),
                loss: strings(&["0", "0.1%", "1%"]),
                rate: strings(&[PAPER_MAX_RATE]),
                ..SweepFile::default()
            },
            runs: 3,
            timeout: DEFAULT_TIMEOUT_SECS,
            max_rate: Some(PAPER_MAX_RATE.into()),
            ..ExperimentFile::default()
        },
        "choose-wisely" => ExperimentFile {
            name: Some(name.into()),
            circuits: choose_wisely_circuits(),
            schemes: strings(&["ideal"]),
            transports: strings(&["tcp"]),
            conditions: strings(&["cw-lan", "cw-wifi", "cw-wan", "cw-3g"]),
            runs: 10,
            timeout: DEFAULT_TIMEOUT_SECS,
            ..ExperimentFile::default()
        },
        _ => {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.name).collect();
            return Err(ExperimentError {
                key: "preset".into(),
                line: None,
                message: format!("no preset {name:?}; there are {}", names.join(", ")),
            });
        }
    };
    Ok(f)
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::time::Duration;

    use super::*;
    use crate::experiment::PlannedRun;

    #[test]
    fn every_listed_preset_resolves_and_no_other() {
        for p in PRESETS {
            let f = preset(p.name).unwrap();
            assert_eq!(f.name.as_deref(), Some(p.name));
            let e = f.resolve().unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let plan = e.plan();
            let keys: HashSet<_> = plan.iter().map(PlannedRun::key).collect();
            assert_eq!(keys.len(), plan.len(), "{}", p.name);
            assert_eq!(e.timeout, Duration::from_secs(600));
        }
        let e = preset("paper-table5").unwrap_err();
        assert_eq!(e.key, "preset");
        assert!(e.message.contains("paper-table4, paper-latency"), "{e}");
    }

    #[test]
    fn every_reliable_transport_of_the_registry_is_in_the_papers_presets() {
        let e = preset("paper-table4").unwrap().resolve().unwrap();
        for f in transputation_transport::families() {
            for name in f.names() {
                assert_eq!(
                    e.transports.iter().any(|t| t == name),
                    f.delivery.is_reliable(),
                    "{name}"
                );
            }
        }
        // In the registry's order, tcp and its alias first.
        assert_eq!(&e.transports[..3], ["tcp", "tcp-bbr", "mtcp"]);
    }

    #[test]
    fn paper_table4_is_the_papers_matrix() {
        let e = preset("paper-table4").unwrap().resolve().unwrap();
        assert_eq!(e.circuits, PAPER_CIRCUITS);
        assert_eq!(e.schemes, ["prf", "circular", "ideal"]);
        assert_eq!(e.transports, reliable_transports());
        assert!(!e.transports.iter().any(|t| t == "udp"));
        let labels: Vec<_> = e.conditions.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["lan", "eu-us", "eu-aus"]);
        assert_eq!(e.conditions[2].link.rtt(), Duration::from_millis(300));
        assert_eq!(e.runs, 3);
        assert_eq!(e.max_rate_bps, Some(500_000_000));
        let transports = reliable_transports().len();
        assert_eq!(e.plan().len(), 3 * 3 * transports * 3 * 3);
    }

    #[test]
    fn the_sweeps_vary_one_parameter() {
        let rtts = |name: &str| -> Vec<u128> {
            let e = preset(name).unwrap().resolve().unwrap();
            e.conditions
                .iter()
                .map(|c| c.link.rtt().as_millis())
                .collect()
        };
        assert_eq!(rtts("paper-latency"), [1, 10, 50, 100, 200, 300]);
        assert!(rtts("paper-loss").iter().all(|&r| r == 100));

        let e = preset("paper-loss").unwrap().resolve().unwrap();
        let losses: Vec<f64> = e.conditions.iter().map(|c| c.link.a_to_b.loss).collect();
        assert_eq!(losses, [0.0, 0.0001, 0.0005, 0.001, 0.005, 0.01]);
        assert!(e
            .conditions
            .iter()
            .all(|c| c.link.a_to_b.rate_bps == Some(500_000_000)));

        let e = preset("paper-bandwidth").unwrap().resolve().unwrap();
        assert_eq!(e.conditions.len(), 2 * 5);
        let rates: HashSet<_> = e
            .conditions
            .iter()
            .map(|c| c.link.a_to_b.rate_bps)
            .collect();
        assert_eq!(rates.len(), 5);
        assert!(rates.contains(&Some(10_000_000)));
        assert_eq!(e.plan().len(), 3 * reliable_transports().len() * 10 * 3);
    }

    #[test]
    fn choose_wisely_has_its_six_benchmarks_and_settings() {
        let e = preset("choose-wisely").unwrap().resolve().unwrap();
        let benchmarks: HashSet<_> = e
            .circuits
            .iter()
            .map(|c| c.split(':').next().unwrap())
            .collect();
        assert_eq!(
            benchmarks,
            HashSet::from(["add", "mult", "min", "argmin", "matmul", "sort"])
        );
        assert_eq!(e.circuits.len(), 4 * 5 + 4 + 4);
        assert!(e.circuits.contains(&"matmul:n=15".to_string()));
        assert!(e.circuits.contains(&"sort:n=64".to_string()));
        let labels: Vec<_> = e.conditions.iter().map(|c| c.label.as_str()).collect();
        assert_eq!(labels, ["cw-lan", "cw-wifi", "cw-wan", "cw-3g"]);
        assert_eq!(e.runs, 10);
        assert_eq!(e.max_rate_bps, None);
        assert_eq!(e.plan().len(), 28 * 4 * 10);
    }
}
