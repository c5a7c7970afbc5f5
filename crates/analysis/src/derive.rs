//! Derived figures, declared: a named figure worked from measured ones by a
//! stated formula (seed 001 estimates the disk's read rate as the network
//! write rate times the local 64K read/write ratio, 2.46). Always printed
//! as derived beside the formula, never stored as a measurement.
//!
//! The formula is deliberately small: `NAME = read|write * FACTOR`, where
//! FACTOR is a number or `ratio(RUNS, SIZE)`, the read/write ratio at block
//! size SIZE over the runs RUNS select (mean of reads over mean of writes,
//! as the sweep's per-block ratio). The caller resolves `ratio(...)` to a
//! number; [`derive`] applies it to the rows of the direction named.

use crate::sweep::{Direction, SweepRow};
use crate::BadFlag;
use serde::Serialize;

/// What multiplies the rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Factor {
    Number(f64),
    /// `ratio(RUNS, SIZE)`: the runs' selector and the block size, as typed.
    Ratio {
        runs: String,
        size: String,
    },
}

/// A parsed `--derive`.
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    pub name: String,
    pub direction: Direction,
    pub factor: Factor,
    /// As typed, for the output.
    pub formula: String,
}

const SHAPE: &str = "write NAME = read|write * FACTOR, FACTOR a number or ratio(RUNS, SIZE), e.g. \
                     --derive 'disk_read = write * ratio(site=local, 64k)'";

impl Derivation {
    pub fn parse(text: &str) -> Result<Derivation, BadFlag> {
        let (name, expr) =
            text.split_once('=').ok_or_else(|| BadFlag(format!("--derive '{text}': no '='; {SHAPE}")))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(BadFlag(format!(
                "--derive '{text}': the name '{name}' is not a word (letters, digits, _ and -); {SHAPE}"
            )));
        }
        let (rows, factor) =
            expr.split_once('*').ok_or_else(|| BadFlag(format!("--derive '{text}': no '*'; {SHAPE}")))?;
        let direction = match rows.trim() {
            "read" | "reads" => Direction::Read,
            "write" | "writes" => Direction::Write,
            other => return Err(BadFlag(format!("--derive '{text}': '{other}' is not read or write; {SHAPE}"))),
        };
        let factor = factor.trim();
        let factor = if let Some(args) = factor.strip_prefix("ratio(").and_then(|r| r.strip_suffix(')')) {
            let (runs, size) = args
                .rsplit_once(',')
                .ok_or_else(|| BadFlag(format!("--derive '{text}': ratio() takes RUNS and a block size; {SHAPE}")))?;
            Factor::Ratio { runs: runs.trim().to_string(), size: size.trim().to_string() }
        } else {
            let n: f64 = factor.parse().ok().filter(|n: &f64| n.is_finite()).ok_or_else(|| {
                BadFlag(format!("--derive '{text}': '{factor}' is neither a number nor ratio(RUNS, SIZE); {SHAPE}"))
            })?;
            Factor::Number(n)
        };
        Ok(Derivation { name: name.to_string(), direction, factor, formula: text.trim().to_string() })
    }
}

/// One derived row: a measured row's values times the factor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DerivedRow {
    /// "disk_read (from write 1g/64k)".
    pub cell: String,
    pub values: Vec<Option<f64>>,
}

/// The derived figures of a sweep, with what they were worked from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derived {
    pub name: String,
    pub formula: String,
    /// The factor's value (a ratio resolved by the caller).
    pub factor: f64,
    /// Always true: the figures are worked out, not measured.
    pub derived: bool,
    pub rows: Vec<DerivedRow>,
}

/// Applies `factor` to the rows of the derivation's direction.
pub fn derive(d: &Derivation, factor: f64, rows: &[SweepRow]) -> Derived {
    Derived {
        name: d.name.clone(),
        formula: d.formula.clone(),
        factor,
        derived: true,
        rows: rows
            .iter()
            .filter(|r| r.direction == d.direction)
            .map(|r| DerivedRow {
                cell: format!("{} (from {})", d.name, r.cell),
                values: r.values.iter().map(|v| v.map(|v| v * factor)).collect(),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formulas_parse_or_say_the_shape() {
        let d = Derivation::parse("disk_read = write * ratio(site=local, 64k)").unwrap();
        assert_eq!(d.name, "disk_read");
        assert_eq!(d.direction, Direction::Write);
        assert_eq!(d.factor, Factor::Ratio { runs: "site=local".into(), size: "64k".into() });
        assert_eq!(Derivation::parse("x=read*2.46").unwrap().factor, Factor::Number(2.46));
        for bad in ["x", "= write * 2", "x = seeks * 2", "x = write + 2", "x = write * two", "x = write * ratio(64k)"] {
            let e = Derivation::parse(bad).unwrap_err();
            assert!(e.0.contains("NAME = read|write * FACTOR"), "{bad}: {e}");
        }
    }

    #[test]
    fn seed_001s_estimate_is_the_network_write_times_the_local_ratio() {
        // Seed 001, Network I/O test, Microsoft's 64K writes at cache levels 1..5, times the local
        // 64K read/write ratio 2.46: its "Estimated Actual Disk Performance" (81, 106, 89, 92, 92).
        let row = SweepRow {
            cell: "write 64k".into(),
            record_size: Some(65536),
            direction: Direction::Write,
            unit: "MB/s".into(),
            values: [32.73, 42.99, 35.86, 37.24, 37.38].into_iter().map(Some).collect(),
            steps_pct: vec![None; 4],
            first_to_last_pct: None,
        };
        let d = Derivation::parse("disk_read = write * 2.46").unwrap();
        let out = derive(&d, 2.46, &[row]);
        assert!(out.derived);
        let got: Vec<f64> = out.rows[0].values.iter().map(|v| v.unwrap().round()).collect();
        assert_eq!(got, [81.0, 106.0, 88.0, 92.0, 92.0], "the seed prints 89 for 35.86 * 2.46 = 88.2");
    }
}
