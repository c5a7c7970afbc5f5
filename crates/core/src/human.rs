//! Numbers for people, written in one place: byte counts, durations,
//! figures to a few significant digits, signed percentages and compact
//! chart figures. Every table,
//! line and message that shows one of these goes through here, so the same
//! count reads the same everywhere.

/// The binary units a byte count is shown in, from KiB up.
const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];

/// `bytes` scaled to the largest binary unit that leaves at least 1.0 once
/// rounded to one decimal, or None below 1 KiB.
///
/// 1023.96 KiB rounds to "1024.0 KiB": such a count moves up a unit first
/// and reads "1.0 MiB".
fn scaled(bytes: u64) -> Option<(f64, &'static str)> {
    if bytes < 1024 {
        return None;
    }
    let mut v = bytes as f64 / 1024.0;
    let mut unit = 0;
    while v >= 1023.95 && unit + 1 < UNITS.len() {
        v /= 1024.0;
        unit += 1;
    }
    Some((v, UNITS[unit]))
}

/// A byte count for tables and lines: `512 B`, `1.5 KiB`, `12.0 MiB`,
/// `3.2 GiB`; always one decimal from KiB up, so a column of them lines up.
pub fn bytes(n: u64) -> String {
    match scaled(n) {
        None => format!("{n} B"),
        Some((v, unit)) => format!("{v:.1} {unit}"),
    }
}

/// A byte count for prose and messages: `1 GiB`, `23.5 GiB`, `512 MiB`,
/// `100 bytes`; the decimal only where it says something.
pub fn bytes_prose(n: u64) -> String {
    match scaled(n) {
        None => format!("{n} bytes"),
        Some((v, unit)) => {
            let text = format!("{v:.1}");
            format!("{} {unit}", text.strip_suffix(".0").unwrap_or(&text))
        }
    }
}

/// A duration given in nanoseconds: `830 ns`, `12.4 us`, `3.10 ms`, `1.25 s`.
pub fn nanos(ns: f64) -> String {
    if ns < 1e3 {
        format!("{ns:.0} ns")
    } else if ns < 1e6 {
        format!("{:.1} us", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.2} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

/// A duration given in nanoseconds, in milliseconds by the one rule of [`significant`]:
/// `250.50`, `12.35`, `0.123`, `0.00123`; `-` for none (zero or less: no such operation).
pub fn millis(ns: f64) -> String {
    let ms = ns / 1e6;
    if ms.is_nan() || ms <= 0.0 {
        "-".into()
    } else {
        significant(ms)
    }
}

/// A figure with a fixed number of decimals: `fixed(2.345, 1)` is `2.3` (`{:.1}`).
pub fn fixed(v: f64, decimals: usize) -> String {
    format!("{v:.decimals$}")
}

/// How many significant digits a figure keeps at least ([`significant`]).
pub const SIGNIFICANT_DIGITS: i32 = 3;

/// How many decimals a figure keeps at least ([`significant`]): seed 001's MB/s tables print
/// 130.92 and 2964.92, and a table that printed 131 would have cut what the seed measured.
pub const FIGURE_DECIMALS: usize = 2;

/// How many decimals a change in percent keeps by default ([`signed_percent`]).
pub const PERCENT_DECIMALS: usize = 1;

/// How the last decimal shown is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Rounding {
    /// To the nearest (Rust's `{:.N}`): what a reader assumes.
    #[default]
    Nearest,
    /// Toward zero, the digits after the last shown cut off: how seed 003's % change column was
    /// written (its -75.851 is -75.8517..., its 168.362 is 168.3625...), so a table typed in from
    /// it can be printed as it was. Only when asked (`--rounding toward-zero`), never silently.
    TowardZero,
}

thread_local! {
    /// `--precision N` and `--rounding` of the command being rendered.
    static PRECISION: std::cell::Cell<(Option<usize>, Rounding)> =
        const { std::cell::Cell::new((None, Rounding::Nearest)) };
}

/// Renders `f` with every figure ([`significant`]) and change ([`signed_percent`]) written
/// with `decimals` decimals (a command's `--precision N`; seed 003 prints its % change to 3;
/// None keeps the one rule), their last decimal reached by `rounding`. The setting is this
/// thread's, and ends with `f`.
pub fn with_precision<T>(decimals: Option<usize>, rounding: Rounding, f: impl FnOnce() -> T) -> T {
    let before = PRECISION.with(|p| p.replace((decimals, rounding)));
    let out = f();
    PRECISION.with(|p| p.set(before));
    out
}

/// `v` with `decimals` decimals, rounded as [`with_precision`] says (to the nearest unless asked).
fn decimal(v: f64, decimals: usize) -> String {
    if PRECISION.with(|p| p.get().1) == Rounding::Nearest {
        return format!("{v:.decimals$}");
    }
    // Cut from a longer writing, not from v * 10^N: 0.29 * 100 is 28.999999999999996.
    let long = format!("{v:.prec$}", prec = decimals + 9);
    let cut = &long[..long.len() - if decimals == 0 { 10 } else { 9 }];
    match cut.strip_prefix('-') {
        // -0.0001 cut to three decimals is 0.000, without a sign.
        Some(rest) if rest.chars().all(|c| c == '0' || c == '.') => rest.to_string(),
        _ => cut.to_string(),
    }
}

/// The decimals `--precision` asked for, if it did.
pub fn precision() -> Option<usize> {
    PRECISION.with(|p| p.get().0)
}

/// The one rule for a figure in a table (per-operation latencies and rates, compare's figures,
/// sweep's levels): at least [`FIGURE_DECIMALS`] decimals, and more below 1 so that
/// [`SIGNIFICANT_DIGITS`] significant digits show; never an exponent: `0.000737`, `0.0902`,
/// `1.46`, `12.35`, `130.92`, `974.80`, `28773.80`. Nothing measured is cut to fewer digits
/// than the seeds print (issue 34: 130.92 printed 131); a column of them lines up on its
/// decimals. Under [`with_precision`] every figure has exactly that many decimals. Zero is `0`;
/// infinities and NaN are `-`.
pub fn significant(v: f64) -> String {
    if !v.is_finite() {
        return "-".into();
    }
    if let Some(decimals) = precision() {
        return decimal(v, decimals);
    }
    if v == 0.0 {
        return "0".into();
    }
    let magnitude = v.abs().log10().floor() as i32;
    let decimals = ((SIGNIFICANT_DIGITS - 1 - magnitude).max(0) as usize).max(FIGURE_DECIMALS);
    let text = decimal(v, decimals);
    // 0.0009996 rounds up to 0.001000: a digit more than the rule; written again one place up.
    match text.trim_start_matches('-').trim_start_matches(['0', '.']).chars().filter(char::is_ascii_digit).count() {
        n if decimals > FIGURE_DECIMALS && n > SIGNIFICANT_DIGITS as usize => decimal(v, decimals - 1),
        _ => text,
    }
}

/// A change in percent with its sign, `+12.5%`, `-3.0%` ([`PERCENT_DECIMALS`] decimals, or
/// [`with_precision`]'s: `-75.851%`); `-` where there is none to give (a figure that was zero
/// before).
pub fn signed_percent(pct: f64) -> String {
    if pct.is_finite() {
        let text = decimal(pct, precision().unwrap_or(PERCENT_DECIMALS));
        if text.starts_with('-') {
            format!("{text}%")
        } else {
            format!("+{text}%")
        }
    } else {
        "-".into()
    }
}

/// A figure squeezed into a chart's cell or label: `1.23G`, `1.23M`, `12k`,
/// `873`, `0.87`.
pub fn compact(v: f64) -> String {
    let a = v.abs();
    if a >= 1e9 {
        format!("{:.2}G", v / 1e9)
    } else if a >= 1e6 {
        format!("{:.2}M", v / 1e6)
    } else if a >= 1e4 {
        format!("{:.0}k", v / 1e3)
    } else if a >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{GIB, KIB, MIB};

    #[test]
    fn bytes_keep_one_decimal_and_never_print_1024_of_a_unit() {
        assert_eq!(bytes(0), "0 B");
        assert_eq!(bytes(1023), "1023 B");
        assert_eq!(bytes(1024), "1.0 KiB");
        assert_eq!(bytes(1536), "1.5 KiB");
        // 1023.999 KiB: one decimal would say 1024.0 KiB.
        assert_eq!(bytes(MIB - 1), "1.0 MiB");
        assert_eq!(bytes(GIB - 1), "1.0 GiB");
        assert_eq!(bytes(1023 * KIB), "1023.0 KiB");
        assert_eq!(bytes(100 * MIB), "100.0 MiB");
        assert_eq!(bytes(u64::MAX), "16.0 EiB");
    }

    #[test]
    fn prose_drops_a_decimal_that_says_nothing() {
        assert_eq!(bytes_prose(GIB), "1 GiB");
        assert_eq!(bytes_prose(47 * GIB / 2), "23.5 GiB");
        assert_eq!(bytes_prose(1536 * KIB), "1.5 MiB");
        assert_eq!(bytes_prose(3 * MIB), "3 MiB");
        assert_eq!(bytes_prose(100), "100 bytes");
        assert_eq!(bytes_prose(MIB - 1), "1 MiB");
    }

    #[test]
    fn milliseconds_follow_the_one_rule() {
        assert_eq!(millis(250_500_000.0), "250.50");
        assert_eq!(millis(12_346_000.0), "12.35");
        assert_eq!(millis(123_456.0), "0.123");
        assert_eq!(millis(1_234.0), "0.00123");
        assert_eq!(millis(2_500_000_000.0), "2500.00");
        assert_eq!(millis(0.0), "-");
        assert_eq!(millis(-5.0), "-");
        assert_eq!(millis(f64::NAN), "-");
    }

    #[test]
    fn durations_pick_their_unit() {
        assert_eq!(nanos(830.0), "830 ns");
        assert_eq!(nanos(12_400.0), "12.4 us");
        assert_eq!(nanos(3_100_000.0), "3.10 ms");
        assert_eq!(nanos(1_250_000_000.0), "1.25 s");
    }

    #[test]
    fn figures_keep_two_decimals_and_three_significant_digits() {
        // The uneven column: 0.0007366, 0.0009020, 28773.8.
        assert_eq!(significant(0.0007366), "0.000737");
        assert_eq!(significant(0.0009020), "0.000902");
        assert_eq!(significant(28773.8), "28773.80");
        assert_eq!(significant(12.3456), "12.35");
        assert_eq!(significant(1.457), "1.46");
        assert_eq!(significant(974.8), "974.80");
        // Issue 34: seed 001's 130.92 and 351.43 printed 131 and 351.
        assert_eq!(significant(130.92), "130.92");
        assert_eq!(significant(351.43), "351.43");
        assert_eq!(significant(145109.6), "145109.60");
        assert_eq!(significant(-4.5678), "-4.57");
        // Rounding that carries into a new digit keeps three: not 0.001000.
        assert_eq!(significant(0.0009996), "0.00100");
        assert_eq!(significant(0.09996), "0.100");
        assert_eq!(significant(9.996), "10.00");
        assert_eq!(significant(0.0), "0");
        assert_eq!(significant(f64::NAN), "-");
        assert_eq!(significant(f64::INFINITY), "-");
        assert_eq!(significant(1e-12), "0.00000000000100");
        assert_eq!(signed_percent(12.5), "+12.5%");
        assert_eq!(signed_percent(-3.0), "-3.0%");
        assert_eq!(signed_percent(f64::INFINITY), "-");
    }

    #[test]
    fn precision_sets_the_decimals_of_figures_and_changes_while_asked() {
        let three = |f: fn(f64) -> String, v| with_precision(Some(3), Rounding::Nearest, || f(v));
        assert_eq!(three(signed_percent, -61.16700), "-61.167%");
        assert_eq!(three(signed_percent, 168.36254), "+168.363%", "to the nearest");
        assert_eq!(three(significant, 130.92), "130.920");
        assert_eq!(with_precision(Some(0), Rounding::Nearest, || significant(0.000737)), "0");
        assert_eq!(with_precision(Some(1), Rounding::Nearest, || signed_percent(f64::NAN)), "-");
        // Seed 003's % change column, cut toward zero as it was written: (8.86 - 36.69) / 36.69
        // is -75.8517%, printed -75.851; (142.42 - 53.07) / 53.07 is +168.3625%, printed 168.362.
        let cut = |v| with_precision(Some(3), Rounding::TowardZero, || signed_percent(v));
        assert_eq!(cut((8.86 - 36.69) / 36.69 * 100.0), "-75.851%");
        assert_eq!(cut((142.42 - 53.07) / 53.07 * 100.0), "+168.362%");
        assert_eq!(cut((58.17 - 66.31) / 66.31 * 100.0), "-12.275%");
        assert_eq!(cut(-0.0001), "+0.000%");
        assert_eq!(with_precision(Some(2), Rounding::TowardZero, || significant(0.29)), "0.29");
        assert_eq!(with_precision(Some(0), Rounding::TowardZero, || significant(-7.9)), "-7");
        // Only while asked.
        assert_eq!(signed_percent(-75.851), "-75.9%");
        assert_eq!(precision(), None);
    }

    #[test]
    fn compact_figures_fit_a_chart_cell() {
        assert_eq!(compact(1_234_567_890.0), "1.23G");
        assert_eq!(compact(1_234_567.0), "1.23M");
        assert_eq!(compact(12_345.0), "12k");
        assert_eq!(compact(873.4), "873");
        assert_eq!(compact(0.873), "0.87");
    }
}
