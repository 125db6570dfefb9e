//! Warming the memory a run's parties will take, on a virtual machine that hands freed
//! memory back to its host.
//!
//! A VM whose balloon device reports free pages (virtio-balloon's free page reporting,
//! which Firecracker and QEMU offer) tells the host of every large block of memory that has
//! stayed free for about two seconds; the host drops the block's backing, and the next
//! process to touch it waits while the host faults it in again. On the testbed's 2-vCPU
//! Firecracker VM (2026-11-30), touching 800 MiB advised for huge pages took 1.74-1.81 s
//! after eight idle seconds and 0.09-0.15 s right after the same amount had been freed (on
//! 4 KiB pages 0.32-0.41 s either way). The parties back their large buffers with huge
//! pages (`transputation_core::memory`), so the first large run after a stretch of small
//! ones paid for it in its set-up: in the grid of issue 17 on 6ba912c (2026-11-29), the
//! evaluator of the first MinCut-size run on 21 of the 24 links took 200-415 ms to set up,
//! where the other MinCut-size runs took a median of 105 ms, and that run was always
//! `auto`'s, the first transport of each cell. So that every run starts with memory in
//! the same state, the runner touches as much memory as the parties of a run of that
//! circuit took at most so far (before the first, [`BYTES_PER_GATE`] for each of its
//! gates) right before starting them, and frees it: the freed blocks are the first the
//! kernel hands out again, to parties that start within milliseconds, before any is
//! reported. Elsewhere (no such device) it does nothing.

use std::path::Path;

/// What is warmed before a circuit's first run, bytes per gate: a little more than both
/// parties of the MinCut-size circuit (3.5 million gates) held at most under either scheme
/// (about 330-370 MB together), 451 MB for it.
const BYTES_PER_GATE: u64 = 128;

/// What is warmed before the first run of a circuit whose size is not known (a user
/// program's), bytes.
const UNKNOWN_SIZE: u64 = 64 << 20;

/// The most warmed at once, as a share of the memory available: warming never pushes the
/// host into reclaim.
const AT_MOST_OF_AVAILABLE: f64 = 0.5;

/// virtio's device id of a memory balloon.
const BALLOON_DEVICE: &str = "0x0005";

/// The balloon's feature bit for free page reporting (`VIRTIO_BALLOON_F_REPORTING`).
const REPORTING_FEATURE: usize = 5;

/// Warms memory before runs where this machine returns freed memory to its host.
#[derive(Debug, Default)]
pub(crate) struct Warmer {
    /// Whether to warm at all.
    on: bool,
    /// Per circuit, the most memory both parties of one run held together, bytes.
    seen: Vec<(String, u64)>,
}

impl Warmer {
    /// A warmer for this machine: on where a balloon device reports free pages.
    pub(crate) fn here() -> Self {
        Warmer {
            on: reports_free_pages(Path::new("/sys/bus/virtio/devices")),
            seen: Vec::new(),
        }
    }

    /// Whether it warms.
    pub(crate) fn is_on(&self) -> bool {
        self.on
    }

    /// What to warm before a run of `circuit` of `gates` gates (if known), bytes (0 where
    /// it does not warm).
    fn bytes_for(&self, circuit: &str, gates: Option<u64>) -> u64 {
        if !self.on {
            return 0;
        }
        let first = gates.map_or(UNKNOWN_SIZE, |g| g.saturating_mul(BYTES_PER_GATE));
        self.seen
            .iter()
            .find(|(c, _)| c == circuit)
            .map_or(first, |(_, b)| *b)
    }

    /// Warms what a run of `circuit` of `gates` gates (if known) needs.
    pub(crate) fn before(&self, circuit: &str, gates: Option<u64>) {
        let want = self.bytes_for(circuit, gates);
        if want == 0 {
            return;
        }
        let cap = available_bytes().map_or(want, |a| (a as f64 * AT_MOST_OF_AVAILABLE) as u64);
        touch(want.min(cap) as usize);
    }

    /// Takes in what the parties of a run of `circuit` held (their peak resident sizes).
    pub(crate) fn saw(&mut self, circuit: &str, garbler: Option<u64>, evaluator: Option<u64>) {
        let (Some(g), Some(e)) = (garbler, evaluator) else {
            return;
        };
        let both = g.saturating_add(e);
        match self.seen.iter_mut().find(|(c, _)| c == circuit) {
            Some((_, most)) => *most = (*most).max(both),
            None => self.seen.push((circuit.to_string(), both)),
        }
    }
}

/// Writes `bytes` of memory advised for huge pages (as the parties' large buffers are),
/// then frees it.
fn touch(bytes: usize) {
    let mut block: Vec<u8> = Vec::with_capacity(bytes);
    transputation_core::memory::prefer_huge_pages(&mut block);
    block.resize(bytes, 1);
    std::hint::black_box(&block);
}

/// Whether a virtio balloon under `devices` (the sysfs directory of virtio devices) has
/// free page reporting among its negotiated features.
fn reports_free_pages(devices: &Path) -> bool {
    let Ok(entries) = std::fs::read_dir(devices) else {
        return false;
    };
    entries.flatten().any(|device| {
        let read = |name: &str| std::fs::read_to_string(device.path().join(name));
        let is_balloon = read("device").is_ok_and(|id| id.trim() == BALLOON_DEVICE);
        // `features` is one character per bit, bit 0 first.
        is_balloon
            && read("features")
                .is_ok_and(|bits| bits.trim().as_bytes().get(REPORTING_FEATURE) == Some(&b'1'))
    })
}

/// The memory available to new processes (`MemAvailable`), bytes.
fn available_bytes() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn device(root: &Path, name: &str, id: &str, features: &str) {
        let dir = root.join(name);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("device"), format!("{id}\n")).unwrap();
        std::fs::write(dir.join("features"), format!("{features}\n")).unwrap();
    }

    #[test]
    fn a_balloon_that_reports_free_pages_is_found_among_other_devices() {
        let root = tempfile::tempdir().unwrap();
        device(root.path(), "virtio0", "0x0002", "0000010000");
        assert!(
            !reports_free_pages(root.path()),
            "a block device is no balloon"
        );
        device(root.path(), "virtio1", "0x0005", "0110000100");
        assert!(!reports_free_pages(root.path()), "a balloon without bit 5");
        device(root.path(), "virtio2", "0x0005", "0110010100");
        assert!(reports_free_pages(root.path()));
    }

    #[test]
    fn no_virtio_devices_means_no_warming() {
        let root = tempfile::tempdir().unwrap();
        assert!(!reports_free_pages(&root.path().join("absent")));
        assert_eq!(Warmer::default().bytes_for("aes128", Some(36_663)), 0);
    }

    #[test]
    fn a_circuit_is_warmed_by_the_most_its_parties_held_together() {
        let mut w = Warmer {
            on: true,
            seen: Vec::new(),
        };
        let big = Some(3_524_880);
        assert_eq!(w.bytes_for("big", big), 3_524_880 * BYTES_PER_GATE);
        assert_eq!(w.bytes_for("program", None), UNKNOWN_SIZE);
        w.saw("big", Some(150 << 20), Some(170 << 20));
        w.saw("big", Some(100 << 20), Some(100 << 20));
        w.saw("big", None, Some(900 << 20));
        assert_eq!(w.bytes_for("big", big), 320 << 20);
        w.saw("small", Some(16 << 20), Some(17 << 20));
        assert_eq!(w.bytes_for("small", Some(36_663)), 33 << 20);
        assert_eq!(w.bytes_for("big", big), 320 << 20);
    }
}
