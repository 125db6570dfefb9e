//! Transports whose settings follow the condition: an experiment may write `{bdp}` (or
//! `{bdp*F}`, F times it) as the value of a transport's option, `quic:cc=bbr,iw={bdp}`,
//! and each condition runs it with that condition's bandwidth-delay product in bytes:
//! RTT × rate / 8, rounded, clamped into the range the transport declares for the option
//! (which must count bytes).
//! This is what an expert writes for a cell: one column of the report, the right window in
//! every condition.
//!
//! The rate is the condition's garbler-to-evaluator rate after the experiment's
//! `max_rate` (the emulator's own cap, which `auto` may pick, is not known when the plan
//! is made: the run's link record notes it). A condition without a rate has no
//! bandwidth-delay product: such a transport is left out of that condition, with a note
//! ([`super::Experiment::left_out`]). A `*` rather than a `:` sets the factor, because a colon in
//! `--transports` starts the next transport.
//!
//! The database keeps the expanded string as the run's `transport` (so a row says exactly
//! what ran) and the string as written in `transport_written`, by which the report, the
//! failure table and the plots group.

use std::time::Duration;

use transputation_transport::family::OptionKind;

/// The placeholder's name.
const BDP: &str = "bdp";

/// The largest factor `{bdp*F}` takes.
const MAX_FACTOR: f64 = 100.0;

/// `auto`: the transport the parties agree on (`--transport auto`), measured with its
/// probing included.
pub const AUTO: &str = "auto";

/// `auto:race`: `auto` whose close candidates race the first part of the tables.
pub const AUTO_RACE: &str = "auto:race";

/// Whether a transport as written is `auto`.
pub fn is_auto(transport: &str) -> bool {
    transport == AUTO
}

/// Whether a transport as written is one the parties agree on before the session: `auto`
/// or `auto:race` (both probe the path, with the probe cache, and need the binary's
/// `--transport auto`).
pub fn is_agreed(transport: &str) -> bool {
    transport == AUTO || transport == AUTO_RACE
}

/// One option whose value is the bandwidth-delay product.
#[derive(Debug, Clone, PartialEq)]
struct Placeholder {
    /// The option's index among the transport's options as written.
    index: usize,
    /// The factor (`{bdp*F}`; 1 for `{bdp}`).
    factor: f64,
    /// The range the transport declares for the option, where this build has it.
    range: Option<(u64, u64)>,
}

/// A transport as written, with its placeholders found and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct TransportTemplate {
    /// The transport's name (before the first `:`).
    name: String,
    /// Its options as written, `key=value` each (the placeholders' values included).
    options: Vec<String>,
    /// Whether it had a `:`.
    has_colon: bool,
    /// The options whose value is a placeholder.
    placeholders: Vec<Placeholder>,
}

/// Reads a placeholder's text (`{bdp}`, `{bdp*0.8}`) into its factor.
fn factor_of(value: &str) -> Result<f64, String> {
    let inner = value
        .strip_prefix('{')
        .and_then(|v| v.strip_suffix('}'))
        .filter(|v| !v.contains(['{', '}']))
        .ok_or_else(|| {
            format!("{value:?}: a placeholder is a whole option value, {{bdp}} or {{bdp*F}}")
        })?;
    let (name, factor) = match inner.split_once('*') {
        Some((n, f)) => (n.trim(), Some(f.trim())),
        None => (inner.trim(), None),
    };
    if name != BDP {
        return Err(format!(
            "{value:?}: unknown placeholder {name:?} (there is {{bdp}}, the condition's \
             bandwidth-delay product in bytes, and {{bdp*F}})"
        ));
    }
    match factor {
        None => Ok(1.0),
        Some(f) => f
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite() && *x > 0.0 && *x <= MAX_FACTOR)
            .ok_or_else(|| {
                format!(
                    "{value:?}: the factor {f:?} is not a number above 0 and up to {MAX_FACTOR}"
                )
            }),
    }
}

impl TransportTemplate {
    /// Reads a transport as written; an error says what is wrong with a placeholder (the
    /// transport itself is checked when the experiment is prepared).
    pub fn parse(written: &str) -> Result<Self, String> {
        let (name, opts, has_colon) = match written.split_once(':') {
            Some((n, o)) => (n, o, true),
            None => (written, "", false),
        };
        if name.contains(['{', '}']) {
            return Err("a placeholder stands for an option's value, not the name".into());
        }
        if is_auto(name.trim()) && has_colon && written.trim() != AUTO_RACE {
            return Err(
                "auto takes no options (auto:race is the one variant): the parties choose \
                        the transport and its settings"
                    .into(),
            );
        }
        let options: Vec<String> = if has_colon {
            opts.split(',').map(str::to_string).collect()
        } else {
            Vec::new()
        };
        let family = transputation_transport::family(name.trim());
        let mut placeholders = Vec::new();
        for (index, option) in options.iter().enumerate() {
            let Some((key, value)) = option.split_once('=') else {
                if option.contains(['{', '}']) {
                    return Err(format!(
                        "{option:?}: a placeholder needs an option, KEY={{bdp}}"
                    ));
                }
                continue;
            };
            if key.contains(['{', '}']) {
                return Err(format!(
                    "{option:?}: a placeholder stands for a value, not a key"
                ));
            }
            let value = value.trim();
            if !value.contains(['{', '}']) {
                continue;
            }
            let factor = factor_of(value)?;
            let key = key.trim();
            // Where this build has the transport, the option must take bytes; one it lacks
            // is left out when the experiment is prepared.
            let range = match family {
                None => None,
                Some(f) => match f.option(key).map(|o| &o.kind) {
                    Some(OptionKind::Integer {
                        min,
                        max,
                        unit: "bytes",
                    }) => Some((*min, *max)),
                    Some(kind) => {
                        return Err(format!(
                            "{option:?}: {{bdp}} is a number of bytes, and {}'s option {key} \
                             takes {}",
                            f.name,
                            kind.describe()
                        ))
                    }
                    None => {
                        return Err(format!(
                            "{option:?}: {} has no option {key} (its options: {})",
                            f.name,
                            f.option_keys()
                        ))
                    }
                },
            };
            placeholders.push(Placeholder {
                index,
                factor,
                range,
            });
        }
        Ok(TransportTemplate {
            name: name.to_string(),
            options,
            has_colon,
            placeholders,
        })
    }

    /// Whether a value follows the condition.
    pub fn has_placeholders(&self) -> bool {
        !self.placeholders.is_empty()
    }

    /// The transport across a link of `rtt` and `rate_bps`; `None` where a placeholder
    /// needs a rate the link does not have.
    pub fn expand(&self, rtt: Duration, rate_bps: Option<u64>) -> Option<String> {
        let mut options = self.options.clone();
        for p in &self.placeholders {
            let rate = rate_bps.filter(|r| *r > 0)?;
            let bdp = (p.factor * rtt.as_secs_f64() * rate as f64 / 8.0).round();
            // `as` saturates: a product beyond u64 (never a real link) is the largest.
            let mut bytes = bdp as u64;
            if let Some((min, max)) = p.range {
                bytes = bytes.clamp(min, max);
            }
            let key = options[p.index]
                .split_once('=')
                .map_or("", |(k, _)| k)
                .to_string();
            options[p.index] = format!("{key}={bytes}");
        }
        Some(if self.has_colon {
            format!("{}:{}", self.name, options.join(","))
        } else {
            self.name.clone()
        })
    }
}

/// The transport `written` across a link of `rtt` and `rate_bps`: `{bdp}` replaced;
/// `None` where it needs a rate the link lacks. A string that is not a template (never one
/// an experiment accepted) runs as written.
pub fn expand_written(written: &str, rtt: Duration, rate_bps: Option<u64>) -> Option<String> {
    match TransportTemplate::parse(written) {
        Ok(t) => t.expand(rtt, rate_bps),
        Err(_) => Some(written.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn expand(written: &str, rtt_ms: u64, rate: Option<u64>) -> Option<String> {
        TransportTemplate::parse(written)
            .unwrap()
            .expand(Duration::from_millis(rtt_ms), rate)
    }

    #[test]
    fn the_bandwidth_delay_product_replaces_the_placeholder() {
        // 100 ms × 200 Mbit/s = 2.5 MB.
        assert_eq!(
            expand("quic:cc=bbr,iw={bdp}", 100, Some(200_000_000)).unwrap(),
            "quic:cc=bbr,iw=2500000"
        );
        assert_eq!(
            expand("quic:iw={bdp*0.8},cc=bbr", 100, Some(200_000_000)).unwrap(),
            "quic:iw=2000000,cc=bbr"
        );
        assert_eq!(
            expand("quic:iw={ bdp * 2 }", 1, Some(16_000_000)).unwrap(),
            "quic:iw=4000"
        );
        // Rounded to the nearest byte (a transport this build lacks is not clamped):
        // 1 ms × 12,004 bit/s = 1.5005 bytes, × 11,996 bit/s = 1.4995.
        assert_eq!(
            expand("nosuch:w={bdp}", 1, Some(12_004)).unwrap(),
            "nosuch:w=2"
        );
        assert_eq!(
            expand("nosuch:w={bdp}", 1, Some(11_996)).unwrap(),
            "nosuch:w=1"
        );
        // Written out, a transport without a placeholder is itself.
        for plain in ["tcp", "mtcp:streams=8,cc=bbr", "auto"] {
            let t = TransportTemplate::parse(plain).unwrap();
            assert!(!t.has_placeholders());
            assert_eq!(t.expand(Duration::from_millis(5), None).unwrap(), plain);
        }
    }

    #[test]
    fn the_product_is_clamped_into_the_options_range() {
        let iw = transputation_transport::family("quic")
            .and_then(|f| f.option("iw"))
            .map(|o| match o.kind {
                OptionKind::Integer { min, max, .. } => (min, max),
                _ => panic!("quic's iw takes bytes"),
            });
        let Some((min, max)) = iw else {
            eprintln!("skipping: a build without quic");
            return;
        };
        // 0 ms at 1 Mbit/s: 0 bytes, below any initial window.
        let small = expand("quic:iw={bdp}", 0, Some(1_000_000)).unwrap();
        assert_eq!(small, format!("quic:iw={min}"));
        // 100 × (300 ms at 100 Gbit/s): 375 GB, above any.
        let large = expand("quic:iw={bdp*100}", 300, Some(100_000_000_000)).unwrap();
        assert_eq!(large, format!("quic:iw={max}"));
    }

    #[test]
    fn a_link_without_a_rate_has_no_product() {
        assert_eq!(expand("quic:iw={bdp}", 100, None), None);
        assert_eq!(expand("quic:iw={bdp}", 100, Some(0)), None);
        assert_eq!(
            expand("quic:iw=1000", 100, None).as_deref(),
            Some("quic:iw=1000")
        );
    }

    #[test]
    fn a_bad_placeholder_is_named() {
        let bad = |w: &str| TransportTemplate::parse(w).unwrap_err();
        assert!(bad("quic:iw={rtt}").contains("unknown placeholder \"rtt\""));
        assert!(bad("quic:iw={bdp}0").contains("a whole option value"));
        assert!(bad("quic:iw={bdp*0}").contains("the factor \"0\" is not a number"));
        assert!(bad("quic:iw={bdp*x}").contains("the factor \"x\""));
        assert!(bad("quic:iw={bdp*1000}").contains("up to 100"));
        assert!(bad("quic:{bdp}").contains("needs an option"));
        assert!(bad("quic:{bdp}=1").contains("not a key"));
        assert!(bad("{bdp}:iw=1").contains("not the name"));
        assert!(bad("auto:x=1").contains("auto takes no options"));
        if transputation_transport::family("quic").is_some() {
            let e = bad("quic:cc={bdp}");
            assert!(
                e.contains("{bdp} is a number of bytes, and quic's option cc takes"),
                "{e}"
            );
            let e = bad("mtcp:streams={bdp}");
            assert!(
                e.contains("mtcp's option streams takes connections, from 1 to 64"),
                "{e}"
            );
            let e = bad("quic:wnd={bdp}");
            assert!(e.contains("quic has no option wnd (its options: "), "{e}");
        }
        // A transport this build lacks keeps its value unclamped (the experiment leaves the
        // transport out when it is prepared).
        assert_eq!(
            expand("nosuch:w={bdp}", 10, Some(8_000_000)).unwrap(),
            "nosuch:w=10000"
        );
    }
}
