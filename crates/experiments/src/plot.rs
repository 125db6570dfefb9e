//! Plots in the shape of the paper's Figures 5–13: protocol time against RTT, loss or rate,
//! one line per transport (as the experiment wrote it: `quic:iw={bdp}` is one line across
//! the conditions) and scheme, each point the mean of the successful runs with an
//! error bar of ± one standard deviation. Written as self-contained SVG (no font or
//! library needed to view it) and, next to it, as PNG: the same SVG rendered by `resvg` at
//! twice its size, its text in the system's fonts (DejaVu Sans, Liberation Sans, Noto Sans
//! or FreeSans, the first installed; without any, the PNG has lines and no text).
//!
//! A figure is drawn for each circuit and axis along which the experiment varies (at least
//! two values with successful runs) while the other two axes stay fixed; an experiment
//! sweeping RTT and loss gets one RTT figure per loss value and one loss figure per RTT. A
//! circuit whose runs vary no axis (a single condition, or conditions that differ in more
//! than one axis at once) gets instead a bar chart per condition: a bar per transport and
//! scheme, its mean time with the same error bar, in the colour its line would have.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};

use resvg::tiny_skia;
use resvg::usvg::{self, fontdb};

use crate::db::{RunRecord, Status};
use crate::stats::{index_or_push, mean_sd};
use crate::Error;

/// An axis of the link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Axis {
    /// Round-trip time, ms.
    Rtt,
    /// Loss, %.
    Loss,
    /// Rate, Mbit/s.
    Rate,
}

impl Axis {
    const ALL: [Axis; 3] = [Axis::Rtt, Axis::Loss, Axis::Rate];

    fn name(self) -> &'static str {
        match self {
            Axis::Rtt => "rtt",
            Axis::Loss => "loss",
            Axis::Rate => "rate",
        }
    }

    fn label(self) -> &'static str {
        match self {
            Axis::Rtt => "round-trip time (ms)",
            Axis::Loss => "loss (%)",
            Axis::Rate => "rate (Mbit/s)",
        }
    }

    /// The run's value on this axis, as a title names it.
    fn describe(self, r: &RunRecord) -> String {
        let v = self.value(r);
        match self {
            Axis::Rtt => format!("RTT {v} ms"),
            Axis::Loss => format!("loss {v} %"),
            Axis::Rate if v == 0.0 => "no rate limit".into(),
            Axis::Rate => format!("{v} Mbit/s"),
        }
    }

    /// The run's value on this axis (an unlimited rate is 0).
    fn value(self, r: &RunRecord) -> f64 {
        match self {
            Axis::Rtt => r.link.rtt_us as f64 / 1e3,
            Axis::Loss => r.link.loss * 100.0,
            Axis::Rate => r.link.rate_bps.unwrap_or(0) as f64 / 1e6,
        }
    }
}

/// One line: (x, mean, sd) sorted by x.
type Series = Vec<(f64, f64, f64)>;

/// A figure: title, axis, and its lines by name.
#[derive(Debug, Clone)]
pub struct Figure {
    /// The title.
    pub title: String,
    /// The x axis; `None` for a bar chart at one condition, whose every series has one
    /// point (its x is 0 and means nothing).
    pub axis: Option<Axis>,
    /// Lines (or bars) by `transport / scheme`.
    pub series: BTreeMap<String, Series>,
}

/// A key for grouping f64 values exactly.
fn k(v: f64) -> u64 {
    v.to_bits()
}

/// The figures an experiment's runs give.
pub fn figures(runs: &[RunRecord]) -> Vec<(String, Figure)> {
    let ok: Vec<&RunRecord> = runs
        .iter()
        .filter(|r| r.status == Status::Ok && r.total_ms.is_some())
        .collect();
    let mut out = Vec::new();
    let mut circuits: Vec<&str> = Vec::new();
    for r in &ok {
        if !circuits.contains(&r.cell.circuit.as_str()) {
            circuits.push(&r.cell.circuit);
        }
    }
    for circuit in circuits {
        let mine: Vec<&&RunRecord> = ok.iter().filter(|r| r.cell.circuit == circuit).collect();
        let drawn = out.len();
        for axis in Axis::ALL {
            let others: Vec<Axis> = Axis::ALL.into_iter().filter(|&a| a != axis).collect();
            // Group by the other two axes' values.
            let mut groups: BTreeMap<(u64, u64), Vec<&RunRecord>> = BTreeMap::new();
            for r in &mine {
                groups
                    .entry((k(others[0].value(r)), k(others[1].value(r))))
                    .or_default()
                    .push(r);
            }
            let n_groups = groups.len();
            for (gi, (_, rs)) in groups.into_iter().enumerate() {
                let mut xs: Vec<u64> = rs.iter().map(|r| k(axis.value(r))).collect();
                xs.sort_unstable();
                xs.dedup();
                if xs.len() < 2 {
                    continue;
                }
                let mut points: BTreeMap<String, BTreeMap<u64, Vec<f64>>> = BTreeMap::new();
                for r in &rs {
                    points
                        // A transport with `{bdp}` is one line across the conditions.
                        .entry(format!("{} / {}", r.transport_as_written(), r.cell.scheme))
                        .or_default()
                        .entry(k(axis.value(r)))
                        .or_default()
                        .push(r.total_ms.unwrap_or(0.0));
                }
                let series = points
                    .into_iter()
                    .map(|(name, by_x)| {
                        let mut s: Series = by_x
                            .into_iter()
                            .map(|(x, ts)| {
                                let (m, sd) = mean_sd(&ts);
                                (f64::from_bits(x), m.unwrap_or(0.0), sd.unwrap_or(0.0))
                            })
                            .collect();
                        s.sort_by(|a, b| a.0.total_cmp(&b.0));
                        (name, s)
                    })
                    .collect();
                let fixed: Vec<String> = others.iter().map(|a| a.describe(rs[0])).collect();
                let file = if n_groups > 1 {
                    format!("{}-time-vs-{}-{}", slug(circuit), axis.name(), gi + 1)
                } else {
                    format!("{}-time-vs-{}", slug(circuit), axis.name())
                };
                out.push((
                    file,
                    Figure {
                        title: format!(
                            "{circuit}: time against {} ({})",
                            axis.name(),
                            fixed.join(", ")
                        ),
                        axis: Some(axis),
                        series,
                    },
                ));
            }
        }
        if out.len() == drawn {
            out.extend(bar_figures(circuit, &mine));
        }
    }
    out
}

/// Mean and standard deviation of each `transport / scheme` among `runs`, as one-point
/// series at x = 0.
fn by_line(runs: &[&RunRecord]) -> BTreeMap<String, Series> {
    let mut times: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for r in runs {
        times
            .entry(format!("{} / {}", r.transport_as_written(), r.cell.scheme))
            .or_default()
            .push(r.total_ms.unwrap_or(0.0));
    }
    times
        .into_iter()
        .map(|(name, ts)| {
            let (m, sd) = mean_sd(&ts);
            (name, vec![(0.0, m.unwrap_or(0.0), sd.unwrap_or(0.0))])
        })
        .collect()
}

/// The bar charts of a circuit whose runs vary no axis: one per condition, in the order
/// the runs first reach it.
fn bar_figures(circuit: &str, runs: &[&&RunRecord]) -> Vec<(String, Figure)> {
    let mut conditions: Vec<&str> = Vec::new();
    for r in runs {
        index_or_push(&mut conditions, r.cell.condition.as_str());
    }
    let several = conditions.len() > 1;
    conditions
        .iter()
        .enumerate()
        .map(|(i, condition)| {
            let mine: Vec<&RunRecord> = runs
                .iter()
                .filter(|r| r.cell.condition == *condition)
                .map(|r| **r)
                .collect();
            let link: Vec<String> = Axis::ALL.iter().map(|a| a.describe(mine[0])).collect();
            let file = if several {
                format!("{}-time-by-transport-{}", slug(circuit), i + 1)
            } else {
                format!("{}-time-by-transport", slug(circuit))
            };
            let figure = Figure {
                title: format!(
                    "{circuit}: time by transport ({condition}: {})",
                    link.join(", ")
                ),
                axis: None,
                series: by_line(&mine),
            };
            (file, figure)
        })
        .collect()
}

fn slug(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// About five round tick values from 0 (or `lo`) to at least `hi`.
fn ticks(lo: f64, hi: f64) -> Vec<f64> {
    let span = (hi - lo).max(1e-9);
    let raw = span / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| span / s <= 6.0)
        .unwrap_or(10.0 * mag);
    let start = (lo / step).floor() * step;
    let mut v = Vec::new();
    let mut t = start;
    while t <= hi + step * 0.999 {
        v.push(t);
        if t >= hi {
            break;
        }
        t += step;
    }
    v
}

fn fmt_tick(v: f64) -> String {
    let s = format!("{v:.3}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

/// One colour per transport.
const COLORS: [&str; 8] = [
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf",
];

/// One dash pattern per scheme (solid first), so that the lines of one transport share
/// its colour and the schemes stay apart.
const DASHES: [&str; 4] = ["none", "7 4", "2 3", "9 3 2 3"];

/// The colour and dash pattern of each line of `names` (`transport / scheme`), in order.
fn styles<'a>(names: impl Iterator<Item = &'a String>) -> Vec<(&'static str, &'static str)> {
    let (mut transports, mut schemes): (Vec<&str>, Vec<&str>) = (Vec::new(), Vec::new());
    names
        .map(|n| {
            let (t, sch) = n.split_once(" / ").unwrap_or((n.as_str(), ""));
            let c = index_or_push(&mut transports, t);
            let d = index_or_push(&mut schemes, sch);
            (COLORS[c % COLORS.len()], DASHES[d % DASHES.len()])
        })
        .collect()
}

/// A figure's size, and the margins around its plot area (the legend in the right one).
const W: f64 = 760.0;
const H: f64 = 460.0;
const LEFT: f64 = 80.0;
const RIGHT: f64 = 200.0;
const TOP: f64 = 40.0;
const BOTTOM: f64 = 60.0;

/// The time axis: its ticks from 0, and where a time is drawn.
struct TimeScale {
    ticks: Vec<f64>,
}

impl TimeScale {
    /// Ticks from 0 to at least the highest mean plus its standard deviation.
    fn of<'a>(series: impl Iterator<Item = &'a Series>) -> TimeScale {
        let ymax = series.flatten().map(|p| p.1 + p.2).fold(0.0, f64::max);
        TimeScale {
            ticks: ticks(0.0, ymax.max(1e-3)),
        }
    }

    fn y(&self, v: f64) -> f64 {
        let top = *self.ticks.last().unwrap_or(&1.0);
        H - BOTTOM - v / top.max(1e-12) * (H - TOP - BOTTOM)
    }
}

/// An error bar of ± one standard deviation at `x`, with its caps.
fn error_bar(s: &mut String, x: f64, top: f64, bot: f64, colour: &str) {
    let _ = writeln!(
        s,
        r#"<line x1="{x:.1}" y1="{top:.1}" x2="{x:.1}" y2="{bot:.1}" stroke="{colour}"/><line x1="{:.1}" y1="{top:.1}" x2="{:.1}" y2="{top:.1}" stroke="{colour}"/><line x1="{:.1}" y1="{bot:.1}" x2="{:.1}" y2="{bot:.1}" stroke="{colour}"/>"#,
        x - 4.0,
        x + 4.0,
        x - 4.0,
        x + 4.0,
    );
}

impl Figure {
    /// The figure as an SVG document.
    pub fn svg(&self) -> String {
        let scale = TimeScale::of(self.series.values());
        let mut s = self.frame(&scale);
        match self.axis {
            Some(_) => self.lines(&mut s, &scale),
            None => self.bars(&mut s, &scale),
        }
        s.push_str("</svg>\n");
        s
    }

    /// The document's opening: the title, the time axis with its grid, the plot area's
    /// box and the x axis's label.
    fn frame(&self, scale: &TimeScale) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">"#
        );
        let _ = writeln!(s, r#"<rect width="{W}" height="{H}" fill="white"/>"#);
        let _ = writeln!(
            s,
            r#"<text x="10" y="22" font-size="13">{}</text>"#,
            esc(&self.title)
        );
        for &v in &scale.ticks {
            let y = scale.y(v);
            let _ = writeln!(
                s,
                r##"<line x1="{LEFT}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}" stroke="#ddd"/><text x="{:.1}" y="{:.1}" text-anchor="end">{}</text>"##,
                W - RIGHT,
                LEFT - 6.0,
                y + 4.0,
                fmt_tick(v)
            );
        }
        let _ = writeln!(
            s,
            r##"<rect x="{LEFT}" y="{TOP}" width="{:.1}" height="{:.1}" fill="none" stroke="#333"/>"##,
            W - LEFT - RIGHT,
            H - TOP - BOTTOM
        );
        let label = self.axis.map_or("transport / scheme", Axis::label);
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}" text-anchor="middle">{label}</text>"#,
            (LEFT + W - RIGHT) / 2.0,
            H - 18.0,
        );
        let _ = writeln!(
            s,
            r#"<text transform="translate(20 {:.1}) rotate(-90)" text-anchor="middle">protocol time (ms)</text>"#,
            (TOP + H - BOTTOM) / 2.0
        );
        s
    }

    /// The x axis's grid, and a line per series with a point and an error bar at each x.
    fn lines(&self, s: &mut String, scale: &TimeScale) {
        let xs = self.series.values().flatten().map(|p| p.0);
        let xmin = xs.clone().fold(f64::INFINITY, f64::min);
        let xmax = xs.fold(f64::NEG_INFINITY, f64::max);
        let xt = ticks(xmin.min(0.0), xmax);
        let (x0, x1) = (xt[0], *xt.last().unwrap_or(&1.0));
        let px = |x: f64| LEFT + (x - x0) / (x1 - x0).max(1e-12) * (W - LEFT - RIGHT);
        for &v in &xt {
            let x = px(v);
            let _ = writeln!(
                s,
                r##"<line x1="{x:.1}" y1="{TOP}" x2="{x:.1}" y2="{:.1}" stroke="#ddd"/><text x="{x:.1}" y="{:.1}" text-anchor="middle">{}</text>"##,
                H - BOTTOM,
                H - BOTTOM + 16.0,
                fmt_tick(v)
            );
        }
        let styles = styles(self.series.keys());
        for (i, (name, pts)) in self.series.iter().enumerate() {
            let (c, dash) = styles[i];
            let path: Vec<String> = pts
                .iter()
                .map(|&(x, m, _)| format!("{:.1},{:.1}", px(x), scale.y(m)))
                .collect();
            let _ = writeln!(
                s,
                r#"<polyline points="{}" fill="none" stroke="{c}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
                path.join(" ")
            );
            for &(x, m, sd) in pts {
                let cx = px(x);
                error_bar(s, cx, scale.y(m + sd), scale.y((m - sd).max(0.0)), c);
                let _ = writeln!(
                    s,
                    r#"<circle cx="{cx:.1}" cy="{:.1}" r="3.5" fill="{c}"/>"#,
                    scale.y(m)
                );
            }
            let ly = TOP + 10.0 + 20.0 * i as f64;
            let _ = writeln!(
                s,
                r#"<line x1="{:.1}" y1="{ly:.1}" x2="{:.1}" y2="{ly:.1}" stroke="{c}" stroke-width="2" stroke-dasharray="{dash}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                W - RIGHT + 12.0,
                W - RIGHT + 36.0,
                W - RIGHT + 42.0,
                ly + 4.0,
                esc(name)
            );
        }
    }

    /// A bar per series (its first point's mean), with its error bar, its mean written
    /// above it and its transport below it where the name fits under the bar.
    fn bars(&self, s: &mut String, scale: &TimeScale) {
        let slot = (W - LEFT - RIGHT) / self.series.len().max(1) as f64;
        let width = (slot * 0.6).min(80.0);
        let base = scale.y(0.0);
        let styles = styles(self.series.keys());
        for (i, (name, pts)) in self.series.iter().enumerate() {
            let (c, dash) = styles[i];
            let Some(&(_, m, sd)) = pts.first() else {
                continue;
            };
            let cx = LEFT + slot * (i as f64 + 0.5);
            let top = scale.y(m);
            let _ = writeln!(
                s,
                r#"<rect x="{:.1}" y="{top:.1}" width="{width:.1}" height="{:.1}" fill="{c}" fill-opacity="0.75" stroke="{c}" stroke-width="2" stroke-dasharray="{dash}"/>"#,
                cx - width / 2.0,
                base - top,
            );
            error_bar(s, cx, scale.y(m + sd), scale.y((m - sd).max(0.0)), "#333");
            let _ = writeln!(
                s,
                r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                scale.y(m + sd) - 6.0,
                fmt_tick((m * 10.0).round() / 10.0)
            );
            let transport = name.split_once(" / ").map_or(name.as_str(), |(t, _)| t);
            // About 7 px a character at this size.
            if transport.chars().count() as f64 * 7.0 <= slot {
                let _ = writeln!(
                    s,
                    r#"<text x="{cx:.1}" y="{:.1}" text-anchor="middle">{}</text>"#,
                    base + 16.0,
                    esc(transport)
                );
            }
            let ly = TOP + 10.0 + 20.0 * i as f64;
            let _ = writeln!(
                s,
                r#"<rect x="{:.1}" y="{:.1}" width="24" height="10" fill="{c}" fill-opacity="0.75" stroke="{c}" stroke-dasharray="{dash}"/><text x="{:.1}" y="{:.1}">{}</text>"#,
                W - RIGHT + 12.0,
                ly - 5.0,
                W - RIGHT + 42.0,
                ly + 4.0,
                esc(name)
            );
        }
    }
}

/// The system's fonts, loaded once, with a sans-serif family that exists.
fn fonts() -> Arc<fontdb::Database> {
    static FONTS: OnceLock<Arc<fontdb::Database>> = OnceLock::new();
    FONTS
        .get_or_init(|| {
            let mut db = fontdb::Database::new();
            db.load_system_fonts();
            let installed = |family: &str| {
                db.faces()
                    .any(|f| f.families.iter().any(|(name, _)| name == family))
            };
            let sans = ["DejaVu Sans", "Liberation Sans", "Noto Sans", "FreeSans"]
                .into_iter()
                .find(|f| installed(f));
            if let Some(f) = sans {
                db.set_sans_serif_family(f);
            }
            Arc::new(db)
        })
        .clone()
}

/// Renders an SVG document as PNG, at `scale` times its size.
pub fn png(svg: &str, scale: f32) -> Result<Vec<u8>, String> {
    let opt = usvg::Options {
        fontdb: fonts(),
        ..usvg::Options::default()
    };
    let tree = usvg::Tree::from_str(svg, &opt).map_err(|e| format!("reading the SVG: {e}"))?;
    let size = tree
        .size()
        .to_int_size()
        .scale_by(scale)
        .ok_or("the picture's size is out of range")?;
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height())
        .ok_or("the picture's size is out of range")?;
    resvg::render(
        &tree,
        tiny_skia::Transform::from_scale(scale, scale),
        &mut pixmap.as_mut(),
    );
    pixmap
        .encode_png()
        .map_err(|e| format!("encoding the PNG: {e}"))
}

/// Writes every figure of `runs` into `dir` as `CIRCUIT-time-vs-AXIS.svg` and `.png`;
/// returns the paths.
pub fn write_all(runs: &[RunRecord], dir: &Path) -> Result<Vec<PathBuf>, Error> {
    let figs = figures(runs);
    if figs.is_empty() {
        return Ok(Vec::new());
    }
    std::fs::create_dir_all(dir).map_err(|source| Error::Io {
        context: format!("creating {}", dir.display()),
        source,
    })?;
    let mut out = Vec::new();
    for (name, f) in figs {
        let p = dir.join(format!("{name}.svg"));
        std::fs::write(&p, f.svg()).map_err(|source| Error::Io {
            context: format!("writing {}", p.display()),
            source,
        })?;
        out.push(p);
        let p = dir.join(format!("{name}.png"));
        let bytes = png(&f.svg(), 2.0).map_err(|e| Error::Io {
            context: format!("drawing {}", p.display()),
            source: std::io::Error::other(e),
        })?;
        std::fs::write(&p, bytes).map_err(|source| Error::Io {
            context: format!("writing {}", p.display()),
            source,
        })?;
        out.push(p);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::LinkRecord;
    use crate::experiment::Cell;

    fn run(transport: &str, rtt_ms: u64, total: f64) -> RunRecord {
        RunRecord {
            total_ms: Some(total),
            ..RunRecord::ok(
                Cell {
                    circuit: "aes128".into(),
                    scheme: "ideal".into(),
                    transport: transport.into(),
                    condition: format!("rtt {rtt_ms}ms"),
                },
                0,
                LinkRecord {
                    rtt_us: rtt_ms * 1000,
                    rate_bps: Some(100_000_000),
                    ..LinkRecord::default()
                },
            )
        }
    }

    #[test]
    fn a_transport_with_bdp_is_one_line_across_the_conditions() {
        let mut runs = Vec::new();
        for (rtt, iw, total) in [(10, 12_500, 40.0), (100, 125_000, 200.0)] {
            let mut r = run(&format!("quic:iw={iw}"), rtt, total);
            r.transport_written = Some("quic:iw={bdp}".into());
            runs.push(r);
        }
        let figs = figures(&runs);
        assert_eq!(figs.len(), 1, "{figs:?}");
        let series = &figs[0].1.series;
        assert_eq!(series.len(), 1, "{series:?}");
        assert_eq!(
            series["quic:iw={bdp} / ideal"],
            vec![(10.0, 40.0, 0.0), (100.0, 200.0, 0.0)]
        );
    }

    #[test]
    fn a_transport_keeps_its_colour_and_a_scheme_its_dashes() {
        let names: Vec<String> = ["tcp / ideal", "tcp / prf", "udt / ideal", "udt / prf"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let st = styles(names.iter());
        assert_eq!(st[0], (COLORS[0], "none"));
        assert_eq!(st[1], (COLORS[0], DASHES[1]));
        assert_eq!(st[2], (COLORS[1], "none"));
        assert_eq!(st[3], (COLORS[1], DASHES[1]));
    }

    #[test]
    fn one_figure_per_varied_axis_with_a_line_per_transport() {
        let runs = vec![
            run("tcp", 10, 30.0),
            run("tcp", 10, 34.0),
            run("tcp", 100, 300.0),
            run("udt", 10, 50.0),
            run("udt", 100, 150.0),
        ];
        let figs = figures(&runs);
        assert_eq!(figs.len(), 1, "{figs:?}");
        let (name, f) = &figs[0];
        assert_eq!(name, "aes128-time-vs-rtt");
        assert_eq!(f.series.len(), 2);
        assert_eq!(
            f.series["tcp / ideal"],
            vec![(10.0, 32.0, 2.8284271247461903), (100.0, 300.0, 0.0)]
        );
        let svg = f.svg();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        assert_eq!(svg.matches("<polyline").count(), 2);
        assert_eq!(svg.matches("<circle").count(), 4);
        assert!(svg.contains("udt / ideal") && svg.contains("round-trip time (ms)"));
        // The PNG: a valid file of twice the size, with more than a blank page in it.
        let png = png(&svg, 2.0).unwrap();
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        assert_eq!(&png[12..16], b"IHDR");
        let width = u32::from_be_bytes(png[16..20].try_into().unwrap());
        let height = u32::from_be_bytes(png[20..24].try_into().unwrap());
        assert_eq!((width, height), (1520, 920));
        assert!(png.len() > 10_000, "{} bytes", png.len());
        // Text is drawn where a font is installed: the title alone changes the picture.
        if !fonts().is_empty() {
            let mut g = f.clone();
            g.title = "another title".into();
            assert_ne!(super::png(&g.svg(), 2.0).unwrap(), png);
        }
        assert!(super::png("<svg", 1.0).is_err());
        // A single condition varies no axis: a bar chart instead (its own test).
        let bars = figures(&runs[..2]);
        assert_eq!(bars.len(), 1);
        assert_eq!(bars[0].0, "aes128-time-by-transport");
        assert!(bars[0].1.axis.is_none());
        // Nothing succeeded: nothing to draw.
        let mut failed = runs.clone();
        for r in &mut failed {
            r.status = Status::Failed;
        }
        assert!(figures(&failed).is_empty());
        assert_eq!(
            ticks(0.0, 300.0),
            vec![0.0, 50.0, 100.0, 150.0, 200.0, 250.0, 300.0]
        );
        assert_eq!(
            ticks(0.0, 0.9),
            vec![0.0, 0.2, 0.4, 0.6000000000000001, 0.8, 1.0]
        );
    }

    #[test]
    fn a_single_condition_gets_a_bar_per_transport_in_its_lines_colour() {
        let mut runs = vec![
            run("tcp", 50, 100.0),
            run("tcp", 50, 140.0),
            run("udt", 50, 80.0),
        ];
        let mut prf = run("tcp", 50, 300.0);
        prf.cell.scheme = "prf".into();
        runs.push(prf);
        let figs = figures(&runs);
        assert_eq!(figs.len(), 1, "{figs:?}");
        let (name, f) = &figs[0];
        assert_eq!(name, "aes128-time-by-transport");
        assert_eq!(
            f.title,
            "aes128: time by transport (rtt 50ms: RTT 50 ms, loss 0 %, 100 Mbit/s)"
        );
        assert_eq!(f.axis, None);
        assert_eq!(
            f.series.keys().collect::<Vec<_>>(),
            ["tcp / ideal", "tcp / prf", "udt / ideal"]
        );
        assert_eq!(
            f.series["tcp / ideal"],
            vec![(0.0, 120.0, 28.284271247461902)]
        );
        let svg = f.svg();
        assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
        // A bar and a legend swatch per series, in the colour and dashes a line would
        // have; an error bar (three lines) each; no line or point of a line figure.
        assert_eq!(svg.matches("<polyline").count(), 0);
        assert_eq!(svg.matches("<circle").count(), 0);
        for (colour, dash) in [
            (COLORS[0], "none"),
            (COLORS[0], DASHES[1]),
            (COLORS[1], "none"),
        ] {
            let fill = format!("fill=\"{colour}\" fill-opacity=\"0.75\" stroke=\"{colour}\"");
            let bar = format!("{fill} stroke-width=\"2\" stroke-dasharray=\"{dash}\"");
            let swatch = format!("{fill} stroke-dasharray=\"{dash}\"");
            assert_eq!(svg.matches(&bar).count(), 1, "{colour} {dash}: {svg}");
            assert_eq!(svg.matches(&swatch).count(), 1, "{colour} {dash}: {svg}");
        }
        assert_eq!(svg.matches("stroke=\"#333\"/>").count(), 3 * 3 + 1);
        // The means above the bars, the transports below them, the axis named.
        for text in [
            ">120<",
            ">300<",
            ">80<",
            ">tcp<",
            ">udt<",
            "transport / scheme",
        ] {
            assert!(svg.contains(text), "{text}: {svg}");
        }
        // The bars stand on the time axis: the tallest (300, one run) reaches the top
        // tick, the plot area's top, and the one of 80 ms 80/300 of the way up.
        let scale = TimeScale::of(f.series.values());
        assert_eq!(scale.ticks.last(), Some(&300.0));
        assert_eq!(scale.y(300.0), TOP);
        let udt = TOP + (H - TOP - BOTTOM) * (1.0 - 80.0 / 300.0);
        for y in [TOP, udt] {
            let top = format!("y=\"{y:.1}\" width=");
            assert_eq!(svg.matches(&top).count(), 1, "{top}: {svg}");
        }
        assert!(png(&svg, 1.0).unwrap().len() > 5_000);
        // `testbed report --plots` writes it, as SVG and PNG.
        let dir = tempfile::tempdir().unwrap();
        let written = write_all(&runs, dir.path()).unwrap();
        let names: Vec<_> = written.iter().map(|p| p.file_name().unwrap()).collect();
        assert_eq!(
            names,
            [
                "aes128-time-by-transport.svg",
                "aes128-time-by-transport.png"
            ]
        );
        assert_eq!(std::fs::read_to_string(&written[0]).unwrap(), svg);

        // Two conditions that differ in two axes at once vary no one axis: a chart each.
        let mut wan = run("tcp", 100, 400.0);
        wan.cell.condition = "wan".into();
        wan.link.rate_bps = Some(10_000_000);
        runs.push(wan);
        let figs = figures(&runs);
        let names: Vec<&str> = figs.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            ["aes128-time-by-transport-1", "aes128-time-by-transport-2"]
        );
        assert!(figs[1]
            .1
            .title
            .contains("(wan: RTT 100 ms, loss 0 %, 10 Mbit/s)"));
        assert_eq!(figs[1].1.series.len(), 1);
    }
}
