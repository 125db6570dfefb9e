//! A connection's record ([`Stats`]): what it sent, repaired and rebuilt, and its rate
//! controller's first epochs, for the transport's `TRANSPUTATION_BLAST_STATS` print-out.

use std::time::Duration;

use crate::{rate, send};

/// A connection's record, from [`Connection::stats`](crate::Connection::stats).
#[derive(Debug, Clone, PartialEq)]
pub struct Stats {
    /// The packets this side sent.
    pub sent: send::SendCounts,
    /// The peer's DATA packets rebuilt from parity.
    pub rebuilt: u64,
    /// Datagrams dropped as damaged, foreign or out of place.
    pub dropped: u64,
    /// The smoothed round trip.
    pub srtt: Option<Duration>,
    /// How often congestion lowered the pace.
    pub cuts: u32,
    /// The rate controller's first epochs.
    pub epochs: Vec<rate::EpochRecord>,
}

impl std::fmt::Display for Stats {
    /// One summary line, then one line per epoch that carried bytes.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let c = &self.sent;
        write!(
            f,
            "sent {} new, {} repairs, {} parity; {} probe timeouts; {} rebuilt, {} dropped; \
             srtt {:?}; {} cuts",
            c.new,
            c.repairs,
            c.parity,
            c.probe_timeouts,
            self.rebuilt,
            self.dropped,
            self.srtt,
            self.cuts
        )?;
        for e in self.epochs.iter().filter(|e| e.counted > 0) {
            write!(
                f,
                "\n  {:>8.1} ms  delivered {:>7.1} Mbit/s  lost {:>4}/{:<6} min rtt {:>7.1} ms  \
                 rate {:>7.1} Mbit/s{}{}",
                e.at.as_secs_f64() * 1e3,
                e.delivery * 8e-6,
                e.lost,
                e.counted,
                e.min_rtt.map_or(f64::NAN, |r| r.as_secs_f64() * 1e3),
                e.rate * 8e-6,
                if e.congested { "  cut" } else { "" },
                if e.competing { "  competing" } else { "" }
            )?;
        }
        Ok(())
    }
}
