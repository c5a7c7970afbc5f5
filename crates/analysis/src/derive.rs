//! Derived figures, declared: a named figure worked from measured ones by a
//! stated formula (seed 001 estimates the disk's read rate as the network
//! write rate times the local 64K read/write ratio, 2.46; seed 003 the backup
//! window as the week's data over the backup's throughput, 12 h to 2 h). Always
//! printed as derived beside the formula, never stored as a measurement.
//!
//! The formula is deliberately small: `NAME = ROWS * FACTOR` or
//! `NAME = FACTOR / ROWS`. ROWS is `read` or `write` (the rows of that
//! direction) or any other text, which takes the rows whose name contains it
//! (`backup`, `write 64k`). FACTOR is a number or `ratio(RUNS, SIZE)`, the
//! read/write ratio at block size SIZE over the runs RUNS select (mean of reads
//! over mean of writes, as the sweep's per-block ratio). The caller resolves
//! `ratio(...)` to a number; [`derive`] applies it to a sweep's rows,
//! [`derive_compare`] to compare's rows.

use crate::cells::Group;
use crate::compare::Comparison;
use crate::sweep::{Direction, SweepRow};
use crate::BadFlag;
use serde::Serialize;

/// What multiplies the rows.
#[derive(Debug, Clone, PartialEq)]
pub enum Factor {
    /// A number as typed.
    Number(f64),
    /// `ratio(RUNS, SIZE)`: the runs' selector and the block size, as typed.
    Ratio {
        /// The runs whose read over write at `size` is the factor, as typed (`site=local`).
        runs: String,
        /// The block size, as typed ("64k").
        size: String,
    },
}

/// The rows a derivation is worked from.
#[derive(Debug, Clone, PartialEq)]
pub enum Rows {
    /// `read` or `write`: every row of that direction.
    Direction(Direction),
    /// Any other text: the rows whose name contains it.
    Named(String),
}

/// How the factor meets a row's figure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `ROWS * FACTOR`: seed 001's disk estimate.
    Times,
    /// `FACTOR / ROWS`: an amount over a rate, a time (seed 003's backup window).
    Into,
}

/// A parsed `--derive`.
#[derive(Debug, Clone, PartialEq)]
pub struct Derivation {
    /// The derived figure's name, left of the `=`.
    pub name: String,
    /// The rows it is worked from.
    pub rows: Rows,
    /// How the factor meets each row's figure.
    pub operation: Operation,
    /// What the rows are multiplied by or divided into.
    pub factor: Factor,
    /// As typed, for the output.
    pub formula: String,
}

const SHAPE: &str = "write NAME = ROWS * FACTOR or NAME = FACTOR / ROWS, ROWS read, write or part of a row's name, \
                     FACTOR a number or ratio(RUNS, SIZE), e.g. --derive 'disk_read = write * ratio(site=local, 64k)' \
                     or --derive 'window_hours = 58254.2 / backup'";

impl Derivation {
    /// Parses `--derive NAME = ROWS * FACTOR` or `NAME = FACTOR / ROWS`; a text of another shape is a
    /// [`BadFlag`] that shows the shape.
    pub fn parse(text: &str) -> Result<Derivation, BadFlag> {
        let (name, expr) =
            text.split_once('=').ok_or_else(|| BadFlag(format!("--derive '{text}': no '='; {SHAPE}")))?;
        let name = name.trim();
        if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-') {
            return Err(BadFlag(format!(
                "--derive '{text}': the name '{name}' is not a word (letters, digits, _ and -); {SHAPE}"
            )));
        }
        let (rows, factor, operation) = if let Some((rows, factor)) = expr.split_once('*') {
            (rows, factor, Operation::Times)
        } else if let Some((factor, rows)) = expr.rsplit_once('/') {
            (rows, factor, Operation::Into)
        } else {
            return Err(BadFlag(format!("--derive '{text}': no '*' or '/'; {SHAPE}")));
        };
        let rows = match rows.trim().trim_matches(['\'', '"']) {
            "read" | "reads" => Rows::Direction(Direction::Read),
            "write" | "writes" => Rows::Direction(Direction::Write),
            "" => return Err(BadFlag(format!("--derive '{text}': no rows named; {SHAPE}"))),
            other => Rows::Named(other.to_string()),
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
        Ok(Derivation { name: name.to_string(), rows, operation, factor, formula: text.trim().to_string() })
    }

    /// Whether a row named `cell`, of `direction`, is one this derivation is worked from. A
    /// name takes the row of exactly that name where `names` (every row's) has one ("backup",
    /// not "backup extents per file"), else every row containing it.
    fn takes<'a>(&self, cell: &str, direction: Direction, mut names: impl Iterator<Item = &'a str>) -> bool {
        match &self.rows {
            Rows::Direction(d) => *d == direction,
            Rows::Named(part) if names.any(|n| n == part) => cell == part,
            Rows::Named(part) => cell.contains(part.as_str()),
        }
    }

    /// One figure worked out: None where there is none to work from (a rate of 0 to divide by).
    fn apply(&self, factor: f64, v: f64) -> Option<f64> {
        match self.operation {
            Operation::Times => Some(v * factor),
            Operation::Into => (v > 0.0).then(|| factor / v),
        }
    }
}

/// One derived row: a measured row's values times the factor.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DerivedRow {
    /// "disk_read (from write 1g/64k)".
    pub cell: String,
    /// One derived figure per level of the sweep, None where there was none to work from.
    pub values: Vec<Option<f64>>,
}

/// The derived figures of a sweep, with what they were worked from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Derived {
    /// The derivation's name.
    pub name: String,
    /// The derivation as typed.
    pub formula: String,
    /// The factor's value (a ratio resolved by the caller).
    pub factor: f64,
    /// Always true: the figures are worked out, not measured.
    pub derived: bool,
    /// One row per measured row the derivation takes.
    pub rows: Vec<DerivedRow>,
}

/// Applies the derivation with `factor` to the sweep's rows it names.
pub fn derive(d: &Derivation, factor: f64, rows: &[SweepRow]) -> Derived {
    Derived {
        name: d.name.clone(),
        formula: d.formula.clone(),
        factor,
        derived: true,
        rows: rows
            .iter()
            .filter(|r| d.takes(&r.cell, r.direction, rows.iter().map(|r| r.cell.as_str())))
            .map(|r| DerivedRow {
                cell: format!("{} (from {})", d.name, r.cell),
                values: r.values.iter().map(|v| v.and_then(|v| d.apply(factor, v))).collect(),
            })
            .collect(),
    }
}

/// Applies the derivation with `factor` to compare's rows outside the matrices (each a cell's
/// figure; `read` and `write` take the cells of that direction, a name any row containing it):
/// each derived row holds A's and B's figure worked out.
pub fn derive_compare(d: &Derivation, factor: f64, c: &Comparison, a: &Group) -> Derived {
    let direction = |metric: &str| a.cells.keys().find(|k| k.describe() == metric).map(Direction::of);
    let names = || c.scalars.iter().map(|s| s.metric.as_str());
    Derived {
        name: d.name.clone(),
        formula: d.formula.clone(),
        factor,
        derived: true,
        rows: c
            .scalars
            .iter()
            .filter(|s| match &d.rows {
                Rows::Direction(_) => direction(&s.metric).is_some_and(|dir| d.takes(&s.metric, dir, names())),
                Rows::Named(_) => d.takes(&s.metric, Direction::Other, names()),
            })
            .map(|s| DerivedRow {
                cell: format!("{} (from {} ({}))", d.name, s.metric, s.unit),
                values: vec![d.apply(factor, s.a), d.apply(factor, s.b)],
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
        assert_eq!(d.rows, Rows::Direction(Direction::Write));
        assert_eq!(d.operation, Operation::Times);
        assert_eq!(d.factor, Factor::Ratio { runs: "site=local".into(), size: "64k".into() });
        assert_eq!(Derivation::parse("x=read*2.46").unwrap().factor, Factor::Number(2.46));
        let window = Derivation::parse("window_hours = 58254.2 / backup").unwrap();
        assert_eq!((window.rows, window.operation), (Rows::Named("backup".into()), Operation::Into));
        assert_eq!(Derivation::parse("x = seeks * 2").unwrap().rows, Rows::Named("seeks".into()));
        for bad in ["x", "= write * 2", "x = write + 2", "x = write * two", "x = write * ratio(64k)", "x = * 2"] {
            let e = Derivation::parse(bad).unwrap_err();
            assert!(e.0.contains("NAME = ROWS * FACTOR"), "{bad}: {e}");
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
            mean_over_levels: None,
            excluded: false,
        };
        let d = Derivation::parse("disk_read = write * 2.46").unwrap();
        let out = derive(&d, 2.46, &[row]);
        assert!(out.derived);
        let got: Vec<f64> = out.rows[0].values.iter().map(|v| v.unwrap().round()).collect();
        assert_eq!(got, [81.0, 106.0, 88.0, 92.0, 92.0], "the seed prints 89 for 35.86 * 2.46 = 88.2");
    }

    #[test]
    fn seed_003s_backup_window_is_the_weeks_data_over_the_throughput() {
        // Seed 003: 200 GB a week at 272.45 MB/min (without DBA) and 1572.13 MB/min (with):
        // "around 12 hours ... might take around 2 hours". 200 GB in MB over 60 min: 3413.33.
        let row = SweepRow {
            cell: "backup".into(),
            record_size: None,
            direction: Direction::Other,
            unit: "MB/min".into(),
            values: vec![Some(272.45), Some(1572.13)],
            steps_pct: vec![None],
            first_to_last_pct: None,
            mean_over_levels: None,
            excluded: false,
        };
        let d = Derivation::parse("window_hours = 3413.33 / backup").unwrap();
        let out = derive(&d, 3413.33, &[row]);
        let got: Vec<String> = out.rows[0].values.iter().map(|v| format!("{:.1}", v.unwrap())).collect();
        assert_eq!(got, ["12.5", "2.2"]);
    }
}
