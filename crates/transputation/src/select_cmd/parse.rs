//! The path's figures as a user writes them: times with a unit, loss as a fraction or a
//! percentage.

/// `300ms`, `0.5ms`, `1s`, `250us` as seconds.
pub(crate) fn parse_duration(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else {
        return Err(format!("'{s}' has no unit: write e.g. 300ms, 0.5ms or 1s"));
    };
    match num.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && (0.0..=60.0 / scale).contains(&x) => Ok(x * scale),
        _ => Err(format!("'{s}' is not a time from 0 to 60 s")),
    }
}

/// `0.1%` or `0.001` as a fraction below 1.
pub(crate) fn parse_loss(s: &str) -> Result<f64, String> {
    let t = s.trim();
    let (num, scale) = match t.strip_suffix('%') {
        Some(n) => (n, 0.01),
        None => (t, 1.0),
    };
    match num.trim().parse::<f64>() {
        Ok(x) if x.is_finite() && x >= 0.0 && x * scale < 1.0 => Ok(x * scale),
        _ => Err(format!(
            "'{s}' is not a loss rate: a fraction below 1 (0.001) or a percentage (0.1%)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_and_losses_parse_with_their_units() {
        assert_eq!(parse_duration("300ms"), Ok(0.3));
        assert_eq!(parse_duration("1s"), Ok(1.0));
        assert!((parse_duration("250us").unwrap() - 250e-6).abs() < 1e-12);
        assert!(parse_duration("300").unwrap_err().contains("no unit"));
        assert!(parse_duration("-1ms").is_err());
        assert!((parse_loss("0.1%").unwrap() - 0.001).abs() < 1e-12);
        assert_eq!(parse_loss("0.001"), Ok(0.001));
        assert!(parse_loss("100%").is_err());
        assert!(parse_loss("lots").unwrap_err().contains("percentage"));
    }
}
