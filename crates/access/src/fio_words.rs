//! fio's words for an access spec, in iomatrix's terms: the one mapping from
//! fio's `rw`/`readwrite` names (with `rwmixread`/`rwmixwrite`) to the read
//! and random percentages an [`AccessPlan`](crate::AccessPlan) sweeps, for
//! `run access --rw` and for anything else that reads fio's options.

use iomatrix_core::UsageError;
use std::time::Duration;

/// fio's default `rwmixread` for the mixed names (`rw`, `readwrite`, `randrw`).
pub const DEFAULT_RWMIXREAD: u8 = 50;

/// fio's `rw` name as (read %, random %). `rwmixread` is the mixed names'
/// read share (fio's default 50); the pure names ignore it, as fio does.
/// Names iomatrix cannot run (trim, and fio's `rw:N` holes) are refused with
/// what to use instead.
pub fn rw_mix(name: &str, rwmixread: Option<u8>) -> Result<(u8, u8), UsageError> {
    let mix = rwmixread.unwrap_or(DEFAULT_RWMIXREAD);
    if mix > 100 {
        return Err(UsageError::new(format!("rwmixread {mix}: a percentage from 0 to 100")));
    }
    let name = name.trim();
    if let Some((base, _)) = name.split_once(':') {
        return Err(UsageError::new(format!(
            "rw {name}: fio's holes between sequential requests (:N) are not supported; use rw {base}, or --align \
             to set where random requests may start"
        )));
    }
    match name.to_ascii_lowercase().as_str() {
        "read" => Ok((100, 0)),
        "write" => Ok((0, 0)),
        "randread" => Ok((100, 100)),
        "randwrite" => Ok((0, 100)),
        "rw" | "readwrite" => Ok((mix, 0)),
        "randrw" => Ok((mix, 100)),
        "trim" | "randtrim" | "trimwrite" | "randtrimwrite" => Err(UsageError::new(format!(
            "rw {name}: iomatrix issues reads and writes only, no trims (discards); use read, write, randread, \
             randwrite, rw or randrw"
        ))),
        _ => Err(UsageError::new(format!(
            "rw {name}: not one of fio's names; use read, write, randread, randwrite, rw (readwrite) or randrw"
        ))),
    }
}

/// Whether fio's `rw` name mixes reads and writes (`rw`, `readwrite`, `randrw`), so that
/// `rwmixread` applies to it.
pub fn is_mixed(name: &str) -> bool {
    matches!(name.trim().to_ascii_lowercase().as_str(), "rw" | "readwrite" | "randrw")
}

/// fio's `rwmixwrite` as the read share `rwmixread` (100 minus it).
pub fn rwmixread_of_rwmixwrite(rwmixwrite: u8) -> Result<u8, UsageError> {
    100u8
        .checked_sub(rwmixwrite)
        .ok_or_else(|| UsageError::new(format!("rwmixwrite {rwmixwrite}: a percentage from 0 to 100")))
}

/// fio's time option (runtime, ramp_time, timeout) as fio reads it: a whole number in
/// seconds unless a unit follows (us, ms, s, m, h, d).
pub fn time(text: &str) -> Result<Duration, String> {
    let t = text.trim().to_ascii_lowercase();
    let digits = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
    if digits == 0 {
        return Err(format!("'{text}' is not a time; give e.g. 30 (seconds), 500ms, 2m"));
    }
    let n: u64 = t[..digits].parse().map_err(|_| format!("'{text}' is too large"))?;
    let d = match t[digits..].trim() {
        "us" | "usec" => Duration::from_micros(n),
        "ms" | "msec" => Duration::from_millis(n),
        "" | "s" | "sec" => Duration::from_secs(n),
        "m" | "min" => Duration::from_secs(n.saturating_mul(60)),
        "h" => Duration::from_secs(n.saturating_mul(3600)),
        "d" => Duration::from_secs(n.saturating_mul(86400)),
        unit => return Err(format!("'{text}': unknown unit '{unit}'; give us, ms, s, m, h or d")),
    };
    Ok(d)
}

/// fio's time option that counts microseconds unless a unit follows (latency_target,
/// latency_window); with a unit, as [`time`] reads it.
pub fn time_us(text: &str) -> Result<Duration, String> {
    let t = text.trim();
    match t.parse::<u64>() {
        Ok(us) => Ok(Duration::from_micros(us)),
        Err(_) => time(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_fio_name_maps_to_its_mix() {
        let cases = [
            ("read", (100, 0)),
            ("write", (0, 0)),
            ("randread", (100, 100)),
            ("randwrite", (0, 100)),
            ("rw", (50, 0)),
            ("readwrite", (50, 0)),
            ("randrw", (50, 100)),
            ("RandRead", (100, 100)),
        ];
        for (name, mix) in cases {
            assert_eq!(rw_mix(name, None).unwrap(), mix, "{name}");
        }
        assert_eq!(rw_mix("randrw", Some(70)).unwrap(), (70, 100));
        assert_eq!(rw_mix("randread", Some(70)).unwrap(), (100, 100), "a pure name ignores the mix, as fio does");
        assert_eq!(rwmixread_of_rwmixwrite(30).unwrap(), 70);
        assert!(is_mixed("randrw") && is_mixed("ReadWrite") && !is_mixed("randread"));
    }

    #[test]
    fn what_iomatrix_cannot_run_is_refused_with_the_alternative() {
        let err = |n: &str, m: Option<u8>| rw_mix(n, m).unwrap_err().to_string();
        assert!(err("trim", None).contains("no trims"));
        assert!(err("randtrimwrite", None).contains("no trims"));
        assert!(err("rw:8", None).contains("holes"));
        assert!(err("randomread", None).contains("not one of fio's names"));
        assert!(err("rw", Some(101)).contains("0 to 100"));
        assert!(rwmixread_of_rwmixwrite(101).is_err());
    }
}
