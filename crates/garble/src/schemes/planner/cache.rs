//! Plans kept on disk between runs (`--plan-cache`): a circuit planned whole before its
//! session is saved under a key of its digest (of its gates, for a generated circuit too:
//! `Circuit::content_digest`), the scheme's program, the build and the window, and the
//! next garbler or evaluator of the same circuit loads it instead of planning again. A
//! circuit planned as it is garbled is never saved (its plan is as large as the
//! circuit). Whether it pays depends on the machine: on the development VM, reading and
//! checking 24 bytes a gate (and the circuit's digest for the key) took as long as planning
//! (docs/BENCHMARKS.md), so nothing turns it on by default.
//!
//! # Never trusted
//! An entry is used only if its magic, format version, key (the full circuit digest, the
//! program and the window, not only the file name), lengths and CRC-32 of everything
//! before it all match, and its program is whole: every op's slots below the slot count,
//! every wave and window within the arrays, the windows covering the circuit's gates in
//! order. Anything else (a partial write, a bit flip, a file of another circuit or build)
//! is reported as a warning and the plan built again, and saved over it. Entries are
//! written to a temporary file and renamed, so a reader sees a whole entry or none.
//!
//! # Format (little-endian)
//! `MAGIC`; the key (32-byte circuit digest, program name length (u8) and name, window
//! (u32)); the lengths (u64 each): ops, waves, windows, outputs; slots (u32) and the
//! constant slot + 1 (u32, 0 for none); the ops (4 × u32 each), their offsets and extras
//! (u32 each), the waves (3 × u32), the windows (6 × u64: gates, waves, bytes, last AND + 1,
//! and a byte for the final AND), the outputs (u32 each); CRC-32 of all that (u32).

use std::fs;
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use transputation_circuits::Circuit;

use crate::schemes::waves::{Op, OpKind, Schedule, Window};

const MAGIC: &[u8; 8] = b"TPPLAN01";

/// Where one circuit's plan is kept, and the key it must carry.
pub(crate) struct PlanCache {
    path: PathBuf,
    key: Vec<u8>,
    /// What the circuit and program require of a plan.
    shape: Shape,
}

/// What a plan must fit: checked on load beside the checksum, so that a file that passes
/// it (written by hand, or by another build that kept the format) cannot make a garbler
/// index past its tables.
#[derive(Clone, Copy)]
pub(crate) struct Shape {
    pub(crate) gates: u64,
    pub(crate) ands: u64,
    pub(crate) outputs: usize,
    /// The slots the inputs (and the constant) take; the constant's slot, if the program
    /// has one.
    pub(crate) fixed: u32,
    pub(crate) constant: Option<u32>,
    /// The bytes an op's table (and mask byte) takes from its offset, given its offset and
    /// extra ([`Rules::table_end`](super::Rules::table_end)); at most 33.
    pub(crate) table: fn(OpKind, u32, u32) -> usize,
    /// Whether `aux` is the gate index (`prf`) or the AND index (half gates).
    pub(crate) aux_is_gate: bool,
}

impl PlanCache {
    /// The entry of `circuit`'s plan under the program `program` in windows of `window`
    /// gates, in `dir`.
    pub(crate) fn new(
        dir: &Path,
        circuit: &Circuit,
        program: &str,
        window: usize,
        shape: Shape,
    ) -> PlanCache {
        // A generated circuit's own digest names its generator, not its gates: a build
        // that generates other gates under the same name must not find this plan.
        let digest = circuit.content_digest();
        let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
        let mut key = digest.to_vec();
        // The program and the build that planned it (a plan's meaning may change with it).
        let program = format!("{program} {}", env!("CARGO_PKG_VERSION"));
        key.push(program.len() as u8);
        key.extend_from_slice(program.as_bytes());
        key.extend_from_slice(&(window as u32).to_le_bytes());
        let name = program.replace(' ', "-");
        PlanCache {
            path: dir.join(format!("{hex}-{name}-{window}.plan")),
            key,
            shape,
        }
    }

    /// The entry's file.
    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// The saved plan: `Ok(None)` if there is none, `Err` with the reason if the entry
    /// cannot be used.
    pub(crate) fn load(&self) -> Result<Option<Schedule>, String> {
        let bytes = match fs::read(&self.path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(format!("cannot read {}: {e}", self.path.display())),
        };
        let bad = |why: &str| Err(format!("{} {why}", self.path.display()));
        if bytes.len() < MAGIC.len() + 4 {
            return bad("is truncated");
        }
        let (body, crc) = bytes.split_at(bytes.len() - 4);
        if crc32fast::hash(body).to_le_bytes() != crc {
            return bad("fails its checksum");
        }
        let mut r = Reader(body);
        if r.take(MAGIC.len()) != Some(&MAGIC[..]) {
            return bad("is no plan of this format");
        }
        if r.take(self.key.len()) != Some(&self.key[..]) {
            return bad("is the plan of another circuit, program or window");
        }
        match read_schedule(&mut r, &self.shape) {
            Ok(s) if r.0.is_empty() => Ok(Some(s)),
            Ok(_) => bad("has bytes after its plan"),
            Err(why) => bad(why),
        }
    }

    /// Saves `s`, the whole plan.
    pub(crate) fn save(&self, s: &Schedule) -> io::Result<()> {
        let mut b = Vec::with_capacity(64 + 24 * s.ops.len() + 12 * s.waves.len());
        b.extend_from_slice(MAGIC);
        b.extend_from_slice(&self.key);
        for n in [s.ops.len(), s.waves.len(), s.windows.len(), s.outputs.len()] {
            b.extend_from_slice(&(n as u64).to_le_bytes());
        }
        put_u32(&mut b, s.slots);
        put_u32(&mut b, s.constant.map_or(0, |c| c as u32 + 1));
        for op in &s.ops {
            for x in op.to_raw() {
                put_u32(&mut b, x);
            }
        }
        s.offset.iter().for_each(|&x| put_u32(&mut b, x));
        s.extra.iter().for_each(|&x| put_u32(&mut b, x));
        for (crypto, end) in &s.waves {
            for x in [crypto.start, crypto.end, *end] {
                put_u32(&mut b, x);
            }
        }
        for w in &s.windows {
            let last = w.last_and.map_or(0, |i| i as u64 + 1);
            let fields = [
                w.gates.start,
                w.gates.end,
                w.waves.start,
                w.waves.end,
                w.bytes,
            ];
            for x in fields.into_iter().map(|x| x as u64).chain([last]) {
                b.extend_from_slice(&x.to_le_bytes());
            }
            b.push(u8::from(w.final_and));
        }
        s.outputs.iter().for_each(|&x| put_u32(&mut b, x));
        let crc = crc32fast::hash(&b);
        b.extend_from_slice(&crc.to_le_bytes());

        let dir = self.path.parent().unwrap_or(Path::new("."));
        fs::create_dir_all(dir)?;
        let tmp = dir.join(format!(
            ".{}.{}.tmp",
            self.path
                .file_name()
                .map_or_else(Default::default, |n| n.to_string_lossy()),
            std::process::id()
        ));
        let written = (|| {
            let mut f = fs::File::create(&tmp)?;
            f.write_all(&b)?;
            f.sync_all()?;
            fs::rename(&tmp, &self.path)
        })();
        if written.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        written
    }
}

fn put_u32(b: &mut Vec<u8>, x: u32) {
    b.extend_from_slice(&x.to_le_bytes());
}

struct Reader<'a>(&'a [u8]);

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (a, b) = self.0.split_at(n);
        self.0 = b;
        Some(a)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }

    fn len(&mut self, each: usize) -> Option<usize> {
        let n = usize::try_from(self.u64()?).ok()?;
        // No length past what the file holds (a corrupt length allocates nothing).
        (n.checked_mul(each)? <= self.0.len()).then_some(n)
    }

    fn u32s(&mut self, n: usize) -> Option<Vec<u32>> {
        let bytes = self.take(n.checked_mul(4)?)?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|c| u32::from_le_bytes(c.try_into().expect("4 bytes")))
                .collect(),
        )
    }
}

/// A schedule from `r`, checked to be a whole plan of a circuit of `shape`; or what is
/// wrong with it.
fn read_schedule(r: &mut Reader<'_>, shape: &Shape) -> Result<Schedule, &'static str> {
    const SHORT: &str = "ends early";
    let (n_ops, n_waves, n_windows, n_outputs) = (
        r.len(24).ok_or(SHORT)?,
        r.len(12).ok_or(SHORT)?,
        r.len(49).ok_or(SHORT)?,
        r.len(4).ok_or(SHORT)?,
    );
    if n_ops as u64 != shape.gates || n_outputs != shape.outputs {
        return Err("has another number of gates or outputs");
    }
    let slots = r.u32().ok_or(SHORT)?;
    let constant = match r.u32().ok_or(SHORT)? {
        0 => None,
        c => Some(c - 1),
    };
    if constant != shape.constant || slots < shape.fixed || slots > Op::MAX_SLOTS {
        return Err("has another constant slot or slot count");
    }
    let raw = r.u32s(4 * n_ops).ok_or(SHORT)?;
    let ops: Vec<Op> = raw
        .chunks_exact(4)
        .map(|c| Op::from_raw([c[0], c[1], c[2], c[3]]))
        .collect::<Option<_>>()
        .ok_or("has an op of no kind")?;
    if ops
        .iter()
        .any(|op| op.a >= slots || op.b >= slots || op.out() >= slots)
    {
        return Err("has an op past its slots");
    }
    let offset = r.u32s(n_ops).ok_or(SHORT)?;
    let extra = r.u32s(n_ops).ok_or(SHORT)?;
    let w = r.u32s(3 * n_waves).ok_or(SHORT)?;
    let waves: Vec<_> = w.chunks_exact(3).map(|c| (c[0]..c[1], c[2])).collect();
    if waves
        .iter()
        .any(|(c, end)| c.start > c.end || c.end > *end || *end as usize > n_ops)
    {
        return Err("has a wave past its ops");
    }
    let windows = read_windows(r, n_windows, n_ops, n_waves).ok_or("has windows out of order")?;
    // Each window's ops are its waves', in order, and stay within its bytes and gates.
    let mut next_op = 0;
    for win in &windows {
        let start_op = next_op;
        for (c, end) in &waves[win.waves.clone()] {
            if c.start as usize != next_op {
                return Err("has waves out of order");
            }
            next_op = *end as usize;
        }
        if next_op - start_op != win.gates.len() || win.bytes > 33 * win.gates.len() {
            return Err("has a window of other gates or bytes");
        }
        let fits = |i: usize| {
            let (op, off, ext) = (ops[i], offset[i], extra[i]);
            let aux_ok = if shape.aux_is_gate {
                win.gates.contains(&(op.aux as usize))
            } else {
                u64::from(op.aux) <= shape.ands
            };
            let mask_ok = ext == u32::MAX || (ext as usize) < win.bytes.max(1);
            aux_ok && mask_ok && off as usize + (shape.table)(op.kind(), off, ext) <= win.bytes
        };
        let ops_here = start_op..next_op;
        if !ops_here.clone().all(fits) || win.last_and.is_some_and(|i| !ops_here.contains(&i)) {
            return Err("has an op past its window");
        }
    }
    if next_op != n_ops {
        return Err("has ops in no window");
    }
    let outputs = r.u32s(n_outputs).ok_or(SHORT)?;
    if outputs.iter().any(|&o| o >= slots) {
        return Err("has an output past its slots");
    }
    Ok(Schedule {
        ops,
        offset,
        extra,
        waves,
        windows,
        slots,
        constant: constant.map(|c| c as usize),
        outputs,
    })
}

/// The windows from `r`: covering the circuit's gates in order, their waves and last AND
/// gates within the arrays.
fn read_windows(r: &mut Reader<'_>, n: usize, n_ops: usize, n_waves: usize) -> Option<Vec<Window>> {
    let mut windows = Vec::with_capacity(n);
    let mut next_gate = 0;
    let mut next_wave = 0;
    for _ in 0..n {
        let mut f = [0usize; 6];
        for x in &mut f {
            *x = usize::try_from(r.u64()?).ok()?;
        }
        let final_and = match r.take(1)?[0] {
            0 => false,
            1 => true,
            _ => return None,
        };
        let [g0, g1, w0, w1, bytes, last] = f;
        if g0 != next_gate || g1 <= g0 || w0 != next_wave || w1 < w0 || w1 > n_waves {
            return None;
        }
        if last > n_ops {
            return None;
        }
        (next_gate, next_wave) = (g1, w1);
        windows.push(Window {
            gates: g0..g1,
            waves: w0..w1,
            bytes,
            last_and: last.checked_sub(1),
            final_and,
        });
    }
    (next_gate == n_ops && next_wave == n_waves).then_some(windows)
}
