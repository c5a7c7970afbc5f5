use std::fmt;
use std::str::FromStr;

/// A kibibyte, 1024 bytes: what `k` means in sizes.
pub const KIB: u64 = 1024;
/// A mebibyte, 1024 KiB: what `m` means in sizes.
pub const MIB: u64 = 1024 * KIB;
/// A gibibyte, 1024 MiB: what `g` means in sizes.
pub const GIB: u64 = 1024 * MIB;
const TIB: u64 = 1024 * GIB;

/// A number of bytes. Units are binary, as IOzone and fio read them:
/// `k` = 1024, `m` = 1024², `g` = 1024³, `t` = 1024⁴; `kb`, `kib` and upper case mean the same.
/// A bare number is bytes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(transparent)]
pub struct ByteSize(pub u64);

/// Why a text is not a size, a size range or a size list (each names the text as given).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SizeError {
    /// Not a whole number with an optional unit k, m, g or t.
    #[error("'{0}' is not a size: write a whole number with an optional unit k, m, g or t (e.g. 64k, 512m)")]
    Malformed(String),
    /// A negative size.
    #[error("'{0}' is negative: sizes are counts of bytes")]
    Negative(String),
    /// More bytes than 64 bits hold.
    #[error("'{0}' is too large")]
    Overflow(String),
    /// Not `FROM..TO` with FROM <= TO.
    #[error("'{0}' is not a range: write FROM..TO with FROM <= TO, e.g. 4k..16m")]
    BadRange(String),
    /// A list without a size.
    #[error("'{0}' is an empty list: give at least one size")]
    Empty(String),
}

impl ByteSize {
    /// The size in bytes.
    pub const fn bytes(self) -> u64 {
        self.0
    }
    /// The size in whole KiB, rounded down (IOzone's tables count KiB).
    pub const fn kib(self) -> u64 {
        self.0 / KIB
    }
    /// Parses a size whose bare numbers mean a given unit (IOzone's `-s 512` is 512 KiB).
    pub fn parse_with_default_unit(text: &str, bare_unit: u64) -> Result<ByteSize, SizeError> {
        let t = text.trim();
        if t.starts_with('-') {
            return Err(SizeError::Negative(text.to_string()));
        }
        let digits_end = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        if digits_end == 0 {
            return Err(SizeError::Malformed(text.to_string()));
        }
        let number: u64 = t[..digits_end].parse().map_err(|_| SizeError::Overflow(text.to_string()))?;
        let unit = match t[digits_end..].to_ascii_lowercase().as_str() {
            "" => bare_unit,
            "b" => 1,
            "k" | "kb" | "kib" => KIB,
            "m" | "mb" | "mib" => MIB,
            "g" | "gb" | "gib" => GIB,
            "t" | "tb" | "tib" => TIB,
            _ => return Err(SizeError::Malformed(text.to_string())),
        };
        number.checked_mul(unit).map(ByteSize).ok_or_else(|| SizeError::Overflow(text.to_string()))
    }
}

impl FromStr for ByteSize {
    type Err = SizeError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ByteSize::parse_with_default_unit(s, 1)
    }
}

/// Shortest exact form: `64k`, `1m`, `512m`, `1536k`, `100` (bytes).
impl fmt::Display for ByteSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let b = self.0;
        for (unit, suffix) in [(TIB, "t"), (GIB, "g"), (MIB, "m"), (KIB, "k")] {
            if b >= unit && b % unit == 0 {
                return write!(f, "{}{}", b / unit, suffix);
            }
        }
        write!(f, "{b}")
    }
}

/// Parses `64k,1m,512m` and power-of-two ranges `4k..16m` (every power of two
/// from FROM to TO, both included), mixed freely: `4k..64k,1m`. The result is
/// sorted and without duplicates.
pub fn parse_size_list(text: &str, bare_unit: u64) -> Result<Vec<ByteSize>, SizeError> {
    let mut out = Vec::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        if let Some((from, to)) = part.split_once("..") {
            let from = ByteSize::parse_with_default_unit(from, bare_unit)?;
            let to = ByteSize::parse_with_default_unit(to, bare_unit)?;
            if from.0 == 0 || from > to {
                return Err(SizeError::BadRange(part.to_string()));
            }
            let mut v = from.0;
            while v <= to.0 {
                out.push(ByteSize(v));
                match v.checked_mul(2) {
                    Some(next) => v = next,
                    None => break,
                }
            }
        } else {
            out.push(ByteSize::parse_with_default_unit(part, bare_unit)?);
        }
    }
    if out.is_empty() {
        return Err(SizeError::Empty(text.to_string()));
    }
    out.sort();
    out.dedup();
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_units_case_insensitively() {
        assert_eq!("64k".parse::<ByteSize>().unwrap(), ByteSize(65536));
        assert_eq!("64KiB".parse::<ByteSize>().unwrap(), ByteSize(65536));
        assert_eq!("512M".parse::<ByteSize>().unwrap(), ByteSize(512 * MIB));
        assert_eq!("1g".parse::<ByteSize>().unwrap(), ByteSize(GIB));
        assert_eq!("100".parse::<ByteSize>().unwrap(), ByteSize(100));
        assert_eq!(ByteSize::parse_with_default_unit("512", KIB).unwrap(), ByteSize(512 * KIB));
    }

    #[test]
    fn rejects_malformed_and_negative() {
        assert!(matches!("64q".parse::<ByteSize>(), Err(SizeError::Malformed(_))));
        assert!(matches!("-1k".parse::<ByteSize>(), Err(SizeError::Negative(_))));
        assert!(matches!("k".parse::<ByteSize>(), Err(SizeError::Malformed(_))));
        assert!(matches!("".parse::<ByteSize>(), Err(SizeError::Malformed(_))));
        assert!(matches!("1.5m".parse::<ByteSize>(), Err(SizeError::Malformed(_))));
        assert!(matches!("99999999999t".parse::<ByteSize>(), Err(SizeError::Overflow(_))));
        assert!(matches!("99999999999999999999999".parse::<ByteSize>(), Err(SizeError::Overflow(_))));
        let msg = "64q".parse::<ByteSize>().unwrap_err().to_string();
        assert!(msg.contains("'64q'") && msg.contains("e.g. 64k"), "{msg}");
    }

    #[test]
    fn lists_and_ranges() {
        let v = parse_size_list("4k..64k", 1).unwrap();
        assert_eq!(v.iter().map(|s| s.kib()).collect::<Vec<_>>(), [4, 8, 16, 32, 64]);
        let v = parse_size_list("1m, 64k,1m,4k..8k", 1).unwrap();
        assert_eq!(v.iter().map(|s| s.kib()).collect::<Vec<_>>(), [4, 8, 64, 1024]);
        assert!(matches!(parse_size_list("16m..4k", 1), Err(SizeError::BadRange(_))));
        assert!(matches!(parse_size_list("0..4k", 1), Err(SizeError::BadRange(_))));
        assert!(matches!(parse_size_list(",", 1), Err(SizeError::Empty(_))));
    }

    #[test]
    fn display_round_trips() {
        for s in ["64k", "1m", "512m", "1536k", "100", "2g"] {
            assert_eq!(s.parse::<ByteSize>().unwrap().to_string(), s);
        }
    }
}
