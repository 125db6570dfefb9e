//! The cache file: round trip, freshness, merged evidence, files it did not write, writers
//! at once, and its size bound.

use std::net::SocketAddr;
use std::time::Duration;

use super::*;
use crate::loss::LossEvidence;

/// A measurement whose figures JSON carries exactly (serde_json's default float parsing
/// may be one unit in the last place off for others; irrelevant to a cache, but not to an
/// equality test).
fn measurement(rtt_ms: f64, sent: u64, lost: u64) -> Measurement {
    Measurement {
        rtt_ms_min: rtt_ms,
        rtt_ms_median: rtt_ms + 10.0,
        rtt_ms_max: rtt_ms * 1.5,
        loss_rate: lost as f64 / 1024.0,
        bandwidth_mbps: Some(200.0),
        bandwidth_floor_mbps: Some(150.0),
        pings_sent: 5,
        pings_answered: 5,
        train_sent: sent as u32,
        train_received: (sent - lost) as u32,
        packet_bytes: 1200,
        loss_evidence: LossEvidence::new(sent, lost),
        overflow_packets: 0,
        trains: 2,
        duration_ms: 3.0 * rtt_ms + 10.0,
        rate_kernel_timed: false,
    }
}

fn peer(i: u32) -> SocketAddr {
    SocketAddr::from(([10, 0, (i >> 8) as u8, i as u8], 7000))
}

const HOUR: Duration = Duration::from_secs(3600);

#[test]
fn a_measurement_reads_back_while_fresh_and_not_after() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ProbeCache::at(dir.path().join("sub/dir").join(CACHE_FILE_NAME));
    assert_eq!(cache.get_at(peer(1), HOUR, 1000), None, "no file yet");
    let m = measurement(100.0, 288, 0);
    let put = cache.put_at(peer(1), &m, HOUR, 1000).unwrap();
    assert_eq!((put.measured_at, put.sessions), (1000, 1));
    let got = cache.get_at(peer(1), HOUR, 1000 + 3600).unwrap();
    assert_eq!(got, put);
    assert_eq!(got.measurement, m);
    // Another port of the same host is another peer.
    assert_eq!(
        cache.get_at(SocketAddr::from(([10, 0, 0, 1], 7001)), HOUR, 1000),
        None
    );
    // Expired, or from a clock's future: not fresh.
    assert_eq!(cache.get_at(peer(1), HOUR, 1000 + 3601), None);
    assert_eq!(cache.get_at(peer(1), HOUR, 1000 - 61), None);
    assert!(cache.get_at(peer(1), HOUR, 1000 - 60).is_some());
    // The real clock: a measurement put now is fresh.
    cache.put(peer(2), &m, HOUR).unwrap();
    assert!(cache.get(peer(2), Duration::from_secs(60)).is_some());
}

#[test]
fn a_fresh_entry_gathers_loss_evidence_and_a_stale_one_starts_over() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ProbeCache::at(dir.path().join(CACHE_FILE_NAME));
    cache
        .put_at(peer(1), &measurement(100.0, 288, 0), HOUR, 1000)
        .unwrap();
    let second = cache
        .put_at(peer(1), &measurement(90.0, 1288, 1), HOUR, 2000)
        .unwrap();
    assert_eq!(second.sessions, 2);
    assert_eq!(second.measured_at, 2000);
    assert_eq!(
        second.measurement.rtt_ms_min, 90.0,
        "the latest path figures"
    );
    assert_eq!(second.measurement.loss_evidence, LossEvidence::new(1576, 1));
    assert_eq!(cache.get_at(peer(1), HOUR, 2000), Some(second));
    // The bound sharpens with the merged evidence: 1 of 1576 against 1 of 1288.
    let alone = LossEvidence::new(1288, 1).upper_bound_95();
    let merged = cache.get_at(peer(1), HOUR, 2000).unwrap();
    assert!(merged.measurement.loss_upper_bound_95() < alone);
    // Confirmation counts a session without touching the age.
    assert_eq!(cache.confirm(peer(9), HOUR).unwrap(), None);
    let stale = cache
        .put_at(peer(1), &measurement(80.0, 32, 0), HOUR, 2000 + 3601)
        .unwrap();
    assert_eq!(stale.sessions, 1);
    assert_eq!(stale.measurement.loss_evidence, LossEvidence::new(32, 0));
    assert_eq!(cache.entries().len(), 1);
}

#[test]
fn confirming_counts_a_session() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ProbeCache::at(dir.path().join(CACHE_FILE_NAME));
    let put = cache.put(peer(1), &measurement(10.0, 32, 0), HOUR).unwrap();
    let confirmed = cache.confirm(peer(1), HOUR).unwrap().unwrap();
    assert_eq!(confirmed.sessions, 2);
    assert_eq!(confirmed.measured_at, put.measured_at);
    assert_eq!(cache.get(peer(1), HOUR).unwrap().sessions, 2);
}

#[test]
fn a_file_it_did_not_write_reads_as_empty_and_is_replaced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(CACHE_FILE_NAME);
    let cache = ProbeCache::at(&path);
    let m = measurement(50.0, 32, 0);
    let foreign_version = serde_json::json!({
        "format": "transputation-probe-cache",
        "version": 99,
        "peers": [{"peer": "10.0.0.1:7000", "measured_at": 1000, "sessions": 1,
                   "measurement": serde_json::to_value(&m).unwrap()}],
    })
    .to_string();
    for junk in [
        "{\"format\": \"transputation-probe-cache\", \"version\": 1, \"peers\": [{\"pe",
        "not json at all",
        "[]",
        "",
        &foreign_version,
    ] {
        std::fs::write(&path, junk).unwrap();
        assert_eq!(cache.get_at(peer(1), HOUR, 1000), None, "{junk}");
        assert!(cache.entries().is_empty());
        cache.put_at(peer(2), &m, HOUR, 1000).unwrap();
        assert_eq!(cache.entries().len(), 1, "{junk}");
        assert!(cache.get_at(peer(2), HOUR, 1000).is_some());
    }
    // Binary junk, and a file too large to be a cache.
    std::fs::write(&path, [0xff, 0xfe, 0, 1, 2]).unwrap();
    assert!(cache.entries().is_empty());
    let mut huge = serde_json::to_vec(&CacheFile {
        format: FORMAT.into(),
        version: VERSION,
        peers: Vec::new(),
    })
    .unwrap();
    huge.resize(MAX_FILE_BYTES as usize + 1, b' ');
    std::fs::write(&path, &huge).unwrap();
    assert!(cache.entries().is_empty());
    cache.put_at(peer(3), &m, HOUR, 1000).unwrap();
    assert_eq!(cache.entries().len(), 1);
}

#[test]
fn a_measurement_json_cannot_carry_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ProbeCache::at(dir.path().join(CACHE_FILE_NAME));
    let mut m = measurement(50.0, 32, 0);
    m.rtt_ms_median = f64::NAN;
    let e = cache.put_at(peer(1), &m, HOUR, 1000).unwrap_err();
    assert!(e.to_string().contains("rtt_ms_median = NaN"), "{e}");
    assert!(!cache.path().exists());
}

#[test]
fn the_cache_keeps_the_most_recent_peers() {
    let dir = tempfile::tempdir().unwrap();
    let cache = ProbeCache::at(dir.path().join(CACHE_FILE_NAME));
    let m = measurement(20.0, 32, 0);
    let peers = MAX_CACHED_PEERS as u32 + 10;
    for i in 0..peers {
        cache
            .put_at(peer(i), &m, HOUR, 10_000 + u64::from(i))
            .unwrap();
    }
    let entries = cache.entries();
    assert_eq!(entries.len(), MAX_CACHED_PEERS);
    assert_eq!(entries[0].peer, peer(peers - 1), "newest first");
    let now = 10_000 + u64::from(peers);
    for i in 0..10 {
        assert_eq!(cache.get_at(peer(i), HOUR, now), None, "peer {i} went");
    }
    assert!(cache.get_at(peer(10), HOUR, now).is_some());
    // Re-measuring an old peer brings it back to the front and puts out the oldest.
    cache.put_at(peer(3), &m, HOUR, now).unwrap();
    let entries = cache.entries();
    assert_eq!(entries.len(), MAX_CACHED_PEERS);
    assert_eq!(entries[0].peer, peer(3));
    assert_eq!(cache.get_at(peer(10), HOUR, now), None);
}

#[test]
fn writers_at_once_never_leave_a_file_that_does_not_parse() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join(CACHE_FILE_NAME);
    let cache = ProbeCache::at(&path);
    let writers = 4u32;
    let rounds = 25u32;
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        // A reader that checks every version of the file it sees.
        let reader = s.spawn(|| {
            let mut seen = 0;
            while !done.load(Ordering::Relaxed) {
                if let Ok(text) = std::fs::read(&path) {
                    let parsed: CacheFile = serde_json::from_slice(&text)
                        .unwrap_or_else(|e| panic!("a torn cache file: {e}"));
                    assert_eq!(parsed.version, VERSION);
                    seen += 1;
                }
            }
            seen
        });
        let handles: Vec<_> = (0..writers)
            .map(|w| {
                let cache = cache.clone();
                s.spawn(move || {
                    for r in 0..rounds {
                        let m = measurement(10.0 + f64::from(w), 32, 0);
                        cache
                            .put_at(peer(w * 1000 + r), &m, HOUR, 1000 + u64::from(r))
                            .unwrap();
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
        done.store(true, Ordering::Relaxed);
        assert!(reader.join().unwrap() > 0);
    });
    // Some writes were lost to later renames, but the file holds whole entries, each
    // peer once.
    let entries = cache.entries();
    assert!(!entries.is_empty() && entries.len() <= (writers * rounds) as usize);
    let mut peers: Vec<_> = entries.iter().map(|e| e.peer).collect();
    peers.sort();
    peers.dedup();
    assert_eq!(peers.len(), entries.len());
    // No temporary file is left behind.
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, [CACHE_FILE_NAME]);
}

#[test]
fn the_user_cache_file_follows_the_xdg_rules() {
    let at = |xdg: Option<&str>, home: Option<&str>| {
        user_cache_file(xdg.map(OsStr::new), home.map(OsStr::new))
    };
    assert_eq!(
        at(Some("/x/cache"), Some("/home/u")),
        Some(PathBuf::from("/x/cache/transputation/probe-cache.json"))
    );
    assert_eq!(
        at(None, Some("/home/u")),
        Some(PathBuf::from(
            "/home/u/.cache/transputation/probe-cache.json"
        ))
    );
    // A relative XDG_CACHE_HOME is ignored, as the XDG rules say.
    assert_eq!(
        at(Some("rel"), Some("/home/u")),
        Some(PathBuf::from(
            "/home/u/.cache/transputation/probe-cache.json"
        ))
    );
    assert_eq!(at(Some(""), None), None);
    assert_eq!(at(None, Some("relative")), None);
}
