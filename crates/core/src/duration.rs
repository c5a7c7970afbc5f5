use std::time::Duration;

/// The longest duration iomatrix takes anywhere (a cell, a phase, a think
/// time, a timeout, a load file's timestamp): 30 days. A benchmark that
/// runs longer is a typing mistake (`18446744073709551615s`), and every
/// deadline computed from a duration stays far from `Instant`'s overflow.
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);

/// [`MAX_DURATION`] as the user reads it in messages and `--help`.
pub const MAX_DURATION_TEXT: &str = "30 days (720h)";

/// Why a text is not a duration iomatrix takes (each names the text as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DurationError {
    /// Not a whole number with one of the units s, ms, us, m, h.
    #[error("'{0}' is not a duration: write a whole number with a unit s, ms, us, m or h (e.g. 10s, 500ms)")]
    Malformed(String),
    /// A negative duration.
    #[error("'{0}' is negative: durations must be positive")]
    Negative(String),
    /// A zero duration.
    #[error("'{0}' is zero: a duration must be positive")]
    Zero(String),
    /// Longer than [`MAX_DURATION`].
    #[error("'{0}' is longer than iomatrix takes: at most {MAX_DURATION_TEXT}")]
    TooLong(String),
}

/// Parses `10s`, `500ms`, `2m`, `1h`, `250us` (a bare number is seconds).
/// Zero and negative durations are refused: a cell must run for some time;
/// so is anything longer than [`MAX_DURATION`].
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let t = text.trim();
    let bad = || DurationError::Malformed(text.to_string());
    if t.starts_with('-') {
        return Err(DurationError::Negative(text.to_string()));
    }
    let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits_end == 0 {
        return Err(bad());
    }
    let unit_ns: u128 = match &t[digits_end..] {
        "" | "s" | "sec" => 1_000_000_000,
        "ms" => 1_000_000,
        "us" => 1_000,
        "m" | "min" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        _ => return Err(bad()),
    };
    let too_long = || DurationError::TooLong(text.to_string());
    // Digits beyond u64 are a number all the same: too long, not malformed.
    let n: u64 = t[..digits_end].parse().map_err(|_| too_long())?;
    let ns = u128::from(n) * unit_ns;
    if ns > MAX_DURATION.as_nanos() {
        return Err(too_long());
    }
    if ns == 0 {
        return Err(DurationError::Zero(text.to_string()));
    }
    // At most MAX_DURATION, so it fits in u64 nanoseconds.
    Ok(Duration::from_nanos(ns as u64))
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
        assert!(parse_duration("0s").unwrap_err().to_string().contains("zero"));
        assert!(parse_duration("-1s").unwrap_err().to_string().contains("negative"));
        assert!(parse_duration("5 parsecs").unwrap_err().to_string().contains("not a duration"));
        assert!(parse_duration("s").is_err());
    }

    #[test]
    fn durations_stop_at_thirty_days() {
        assert_eq!(parse_duration("720h").unwrap(), MAX_DURATION);
        assert_eq!(parse_duration("2592000s").unwrap(), MAX_DURATION);
        for text in ["721h", "2592001s", "18446744073709551615s", "18446744073709551616", "99999999999999999999999h"] {
            let e = parse_duration(text).unwrap_err();
            assert!(e.to_string().contains("at most 30 days"), "{text}: {e}");
        }
    }
}
