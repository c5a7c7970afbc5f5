use std::time::Duration;

/// Parses `10s`, `500ms`, `2m`, `1h`, `250us` (a bare number is seconds).
/// Zero and negative durations are refused: a cell must run for some time.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    let bad =
        || format!("'{text}' is not a duration: write a whole number with a unit s, ms, us, m or h (e.g. 10s, 500ms)");
    if t.starts_with('-') {
        return Err(format!("'{text}' is negative: durations must be positive"));
    }
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(bad());
    }
    let n: u64 = t[..digits_end].parse().map_err(|_| bad())?;
    let d = match &t[digits_end..] {
        "" | "s" | "sec" => Duration::from_secs(n),
        "ms" => Duration::from_millis(n),
        "us" => Duration::from_micros(n),
        "m" | "min" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        _ => return Err(bad()),
    };
    if d.is_zero() {
        return Err(format!("'{text}' is zero: a duration must be positive"));
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_refusals() {
        assert_eq!(parse_duration("10s").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("10").unwrap(), Duration::from_secs(10));
        assert_eq!(parse_duration("500ms").unwrap(), Duration::from_millis(500));
        assert_eq!(parse_duration("2m").unwrap(), Duration::from_secs(120));
        assert!(parse_duration("0s").unwrap_err().contains("zero"));
        assert!(parse_duration("-1s").unwrap_err().contains("negative"));
        assert!(parse_duration("5 parsecs").unwrap_err().contains("not a duration"));
        assert!(parse_duration("s").is_err());
    }
}
