//! [`ProbeCache`]: measurements of recent peers kept in one JSON file, so that repeated
//! sessions with the same peer need not probe the path each time (`--probe-cache SECS`
//! gives the freshness).
//!
//! The file lives at `$XDG_CACHE_HOME/transputation/probe-cache.json` (or
//! `$HOME/.cache/transputation/probe-cache.json`; see [`user_cache_file`]) and holds, for
//! each peer socket address (IP and port), the latest measurement, when it was taken (unix
//! seconds) and how many sessions measured or confirmed it. A later measurement of a peer
//! whose entry is still fresh adds its loss evidence to the entry's (lost and sent
//! packets add up, see [`LossEvidence::merged`](crate::LossEvidence::merged)), so the loss estimate sharpens over
//! sessions: 0 losses in one quick probe's 288 packets bound the loss at 1 %, in ten
//! probes' 2880 at 0.1 %. Round trip and rate are the latest measurement's, since they
//! follow the path's current load.
//!
//! Every write replaces the whole file atomically: the new contents go to a temporary
//! file in the same directory, which is synced and renamed over the old one, so a crash
//! leaves the old file or the new one, never a part. Several writers at once (evaluators
//! started together) each read, change and rename; the last rename wins and the others'
//! changes are lost, but the file always parses. A file that does not parse, is larger
//! than 4 MiB or is of another format version reads as empty, and the next write replaces
//! it. At most [`MAX_CACHED_PEERS`] peers are kept, the most recently measured.

use std::ffi::OsStr;
use std::io::{Read, Write};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use crate::error::{io, Error};
use crate::measurement::Measurement;

/// The cache file's name in its directory.
pub const CACHE_FILE_NAME: &str = "probe-cache.json";
/// Peers a cache keeps at most (the most recently measured).
pub const MAX_CACHED_PEERS: usize = 256;
/// What the file's `format` field says.
const FORMAT: &str = "transputation-probe-cache";
/// The file's format version; a file of another version reads as empty.
const VERSION: u32 = 1;
/// A larger file is not read (it is not one this crate wrote).
const MAX_FILE_BYTES: u64 = 4 << 20;
/// An entry stamped further than this in the future (a clock set back) is not fresh.
const CLOCK_SLACK_SECS: u64 = 60;

/// A peer's cached measurement.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CachedMeasurement {
    /// The peer's socket address.
    pub peer: SocketAddr,
    /// The latest measurement, its loss evidence summed over the merged measurements.
    pub measurement: Measurement,
    /// When the latest measurement was taken, unix seconds.
    pub measured_at: u64,
    /// Sessions that measured the peer (and were merged) or confirmed the measurement.
    pub sessions: u32,
    /// What the peer's service last said about itself, kept as it came (for `--transport
    /// auto`: the garbler's card, JSON); it ages with the entry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub service: Option<String>,
}

impl CachedMeasurement {
    /// Whether the entry is at most `ttl` old at `now` (unix seconds).
    pub fn is_fresh(&self, ttl: Duration, now: u64) -> bool {
        self.measured_at <= now.saturating_add(CLOCK_SLACK_SECS)
            && now.saturating_sub(self.measured_at) <= ttl.as_secs()
    }
}

/// The file's contents.
#[derive(Serialize, Deserialize)]
struct CacheFile {
    format: String,
    version: u32,
    peers: Vec<CachedMeasurement>,
}

/// The cache file of the user's cache directory: `$XDG_CACHE_HOME/transputation/` if that
/// is set to an absolute path (the XDG base directory rules ignore a relative one), else
/// `$HOME/.cache/transputation/`; `None` if neither is set usably.
pub fn user_cache_file(xdg_cache_home: Option<&OsStr>, home: Option<&OsStr>) -> Option<PathBuf> {
    fn absolute(v: Option<&OsStr>) -> Option<&Path> {
        v.map(Path::new).filter(|p| p.is_absolute())
    }
    let base = match absolute(xdg_cache_home) {
        Some(xdg) => xdg.to_path_buf(),
        None => absolute(home)?.join(".cache"),
    };
    Some(base.join("transputation").join(CACHE_FILE_NAME))
}

/// Now, in unix seconds (0 if the clock is before 1970).
pub fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Measurements of recent peers in one JSON file (see the [module docs](self)).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeCache {
    path: PathBuf,
}

impl ProbeCache {
    /// A cache in the file at `path` (its directory is created on the first write).
    pub fn at(path: impl Into<PathBuf>) -> Self {
        ProbeCache { path: path.into() }
    }

    /// The cache in the user's cache directory ([`user_cache_file`] of the environment);
    /// `None` if neither `XDG_CACHE_HOME` nor `HOME` gives one.
    pub fn in_user_cache() -> Option<Self> {
        let xdg = std::env::var_os("XDG_CACHE_HOME");
        let home = std::env::var_os("HOME");
        user_cache_file(xdg.as_deref(), home.as_deref()).map(Self::at)
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// `peer`'s measurement if it is at most `ttl` old; `None` if it is older, absent, or
    /// the file cannot be read.
    pub fn get(&self, peer: SocketAddr, ttl: Duration) -> Option<CachedMeasurement> {
        self.get_at(peer, ttl, unix_now())
    }

    /// [`get`](Self::get) at `now` (unix seconds).
    pub fn get_at(&self, peer: SocketAddr, ttl: Duration, now: u64) -> Option<CachedMeasurement> {
        self.entries()
            .into_iter()
            .find(|e| e.peer == peer && e.is_fresh(ttl, now))
    }

    /// Every entry the file holds, fresh or not, most recently measured first (none if the
    /// file is missing, unreadable, or not a cache of this version).
    pub fn entries(&self) -> Vec<CachedMeasurement> {
        self.load().unwrap_or_default()
    }

    /// Records `m`, measured just now, as `peer`'s measurement. If `peer` has an entry at
    /// most `ttl` old, the new measurement's loss evidence is added to it and its session
    /// count goes up by one; otherwise the entry starts afresh. Returns the entry written.
    pub fn put(
        &self,
        peer: SocketAddr,
        m: &Measurement,
        ttl: Duration,
    ) -> Result<CachedMeasurement, Error> {
        self.put_at(peer, m, ttl, unix_now())
    }

    /// [`put`](Self::put) of a measurement taken at `now` (unix seconds).
    pub fn put_at(
        &self,
        peer: SocketAddr,
        m: &Measurement,
        ttl: Duration,
        now: u64,
    ) -> Result<CachedMeasurement, Error> {
        if let Some((field, value)) = m.non_finite_field() {
            return Err(Error::Uncacheable {
                path: self.path.clone(),
                field,
                value,
            });
        }
        let mut entries = self.entries();
        let earlier = entries
            .iter()
            .position(|e| e.peer == peer)
            .map(|i| entries.remove(i))
            .filter(|e| e.is_fresh(ttl, now));
        let mut measurement = m.clone();
        let (sessions, service) = match earlier {
            Some(e) => {
                measurement.loss_evidence = e.measurement.loss_evidence.merged(m.loss_evidence);
                (e.sessions.saturating_add(1), e.service)
            }
            None => (1, None),
        };
        let entry = CachedMeasurement {
            peer,
            measurement,
            measured_at: now,
            sessions,
            service,
        };
        entries.insert(0, entry.clone());
        self.store(entries)?;
        Ok(entry)
    }

    /// Counts one more session that ran on `peer`'s measurement and found it held, if the
    /// entry is at most `ttl` old (its age is not reset); the entry written, or `None`
    /// (nothing written) if there is no fresh one.
    pub fn confirm(
        &self,
        peer: SocketAddr,
        ttl: Duration,
    ) -> Result<Option<CachedMeasurement>, Error> {
        let now = unix_now();
        let mut entries = self.entries();
        let Some(e) = entries
            .iter_mut()
            .find(|e| e.peer == peer && e.is_fresh(ttl, now))
        else {
            return Ok(None);
        };
        e.sessions = e.sessions.saturating_add(1);
        let confirmed = e.clone();
        self.store(entries)?;
        Ok(Some(confirmed))
    }

    /// Keeps `service` (what the peer's service said about itself) with `peer`'s entry, if
    /// it has one; returns whether it had.
    pub fn set_service(&self, peer: SocketAddr, service: &str) -> Result<bool, Error> {
        let mut entries = self.entries();
        let Some(e) = entries.iter_mut().find(|e| e.peer == peer) else {
            return Ok(false);
        };
        if e.service.as_deref() == Some(service) {
            return Ok(true);
        }
        e.service = Some(service.to_string());
        self.store(entries)?;
        Ok(true)
    }

    /// The file's entries; `None` if it is missing, unreadable, too large, or not a cache
    /// of this format and version.
    fn load(&self) -> Option<Vec<CachedMeasurement>> {
        let file = std::fs::File::open(&self.path).ok()?;
        let mut text = Vec::new();
        file.take(MAX_FILE_BYTES + 1).read_to_end(&mut text).ok()?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return None;
        }
        let cache: CacheFile = serde_json::from_slice(&text).ok()?;
        if cache.format != FORMAT || cache.version != VERSION {
            return None;
        }
        Some(newest_first(cache.peers))
    }

    /// Writes `entries` (the newest [`MAX_CACHED_PEERS`], one per peer) atomically: a
    /// temporary file in the same directory, synced, renamed over the cache file.
    fn store(&self, entries: Vec<CachedMeasurement>) -> Result<(), Error> {
        let mut entries = newest_first(entries);
        entries.truncate(MAX_CACHED_PEERS);
        let cache = CacheFile {
            format: FORMAT.into(),
            version: VERSION,
            peers: entries,
        };
        let text = serde_json::to_vec_pretty(&cache).map_err(|e| Error::Io {
            context: format!("encoding the probe cache {}", self.path.display()),
            source: e.into(),
        })?;
        let dir = match self.path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        std::fs::create_dir_all(&dir).map_err(io(format!(
            "creating the probe cache's directory {}",
            dir.display()
        )))?;
        let temp = dir.join(temp_name(&self.path));
        let written = write_synced(&temp, &text).and_then(|()| std::fs::rename(&temp, &self.path));
        if let Err(e) = written {
            let _ = std::fs::remove_file(&temp);
            return Err(io(format!(
                "writing the probe cache {}",
                self.path.display()
            ))(e));
        }
        // The rename is durable once the directory is synced (best effort: not every
        // file system lets a directory be opened for it).
        if let Ok(d) = std::fs::File::open(&dir) {
            let _ = d.sync_all();
        }
        Ok(())
    }
}

/// One entry per peer (its most recently measured), most recently measured first; of
/// entries measured in the same second, the earlier in `entries` comes first.
fn newest_first(mut entries: Vec<CachedMeasurement>) -> Vec<CachedMeasurement> {
    entries.sort_by_key(|e| std::cmp::Reverse(e.measured_at));
    let mut seen = std::collections::HashSet::new();
    entries.retain(|e| seen.insert(e.peer));
    entries
}

/// A temporary file name beside `path` that no other writer (process or thread) uses.
fn temp_name(path: &Path) -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let base = path
        .file_name()
        .map_or_else(|| CACHE_FILE_NAME.into(), |n| n.to_string_lossy());
    format!(
        ".{base}.{}.{}.tmp",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// Writes `bytes` to a new file at `path` (readable by its owner alone) and syncs it.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    let mut f = options.open(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

#[cfg(test)]
mod tests;
