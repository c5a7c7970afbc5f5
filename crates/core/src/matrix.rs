//! A test's figures by file size and record size, as IOzone shows them: what the reports'
//! writers take and what the importer of IOzone's `-R` report reads back.

use crate::CellStateKind;
use serde::{Deserialize, Serialize};

/// One test's results as IOzone shows them: file sizes down, record sizes
/// across, in KiB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Matrix {
    /// IOzone's report name, e.g. "Writer report", "Re-writer report",
    /// "Reader report", "Re-Reader report", "Random read report",
    /// "Random write report", "Backward read report", "Record rewrite report",
    /// "Stride read report", "Fwrite report", "Re-Fwrite report",
    /// "Fread report", "Re-Fread report", "Mixed workload report".
    pub title: String,
    /// Unit of every value, e.g. "KB/s" or "CPU %".
    pub unit: String,
    /// The measured cells, in any order.
    pub cells: Vec<MatrixCell>,
}

/// One measured value of a [`Matrix`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MatrixCell {
    /// File size in KiB.
    pub file_kib: u64,
    /// Record (transfer) size in KiB.
    pub record_kib: u64,
    /// The value, in the matrix's unit.
    pub value: f64,
    /// Whether the value is whole: every table marks a partial one (some clients or
    /// connections failed the cell: the value is of those that finished) and shows a failed one
    /// (none finished) as no value (`iomatrix_report::document::marked`).
    #[serde(default = "complete", skip_serializing_if = "is_complete")]
    pub state: CellStateKind,
}

fn complete() -> CellStateKind {
    CellStateKind::Complete
}

fn is_complete(state: &CellStateKind) -> bool {
    *state == CellStateKind::Complete
}

impl MatrixCell {
    /// A whole value.
    pub fn new(file_kib: u64, record_kib: u64, value: f64) -> MatrixCell {
        MatrixCell { file_kib, record_kib, value, state: CellStateKind::Complete }
    }
}

impl Matrix {
    /// An empty matrix with the given title and unit.
    pub fn new(title: impl Into<String>, unit: impl Into<String>) -> Self {
        Matrix { title: title.into(), unit: unit.into(), cells: Vec::new() }
    }

    /// Every file size present, sorted ascending, without duplicates.
    pub fn file_sizes(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.cells.iter().map(|c| c.file_kib).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Every record size present, sorted ascending, without duplicates.
    pub fn record_sizes(&self) -> Vec<u64> {
        let mut v: Vec<u64> = self.cells.iter().map(|c| c.record_kib).collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// The value at (file size, record size); the first such cell if there
    /// are several.
    pub fn get(&self, file_kib: u64, record_kib: u64) -> Option<f64> {
        self.cells.iter().find(|c| c.file_kib == file_kib && c.record_kib == record_kib).map(|c| c.value)
    }

    /// The cell at (file size, record size); the first such cell if there are several.
    pub fn cell(&self, file_kib: u64, record_kib: u64) -> Option<&MatrixCell> {
        self.cells.iter().find(|c| c.file_kib == file_kib && c.record_kib == record_kib)
    }

    /// Whether any value is not whole.
    pub fn any_not_complete(&self) -> bool {
        self.cells.iter().any(|c| c.state != CellStateKind::Complete)
    }

    /// The record sizes present for one file size, ascending, with values.
    pub fn row(&self, file_kib: u64) -> Vec<(u64, f64)> {
        self.record_sizes().into_iter().filter_map(|r| self.get(file_kib, r).map(|v| (r, v))).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cell(f: u64, r: u64, v: f64) -> MatrixCell {
        MatrixCell::new(f, r, v)
    }

    #[test]
    fn sizes_sorted_unique_and_get() {
        let m = Matrix {
            title: "Writer report".into(),
            unit: "KB/s".into(),
            cells: vec![cell(128, 8, 3.0), cell(64, 4, 1.0), cell(128, 4, 2.0), cell(64, 8, 4.0)],
        };
        assert_eq!(m.file_sizes(), vec![64, 128]);
        assert_eq!(m.record_sizes(), vec![4, 8]);
        assert_eq!(m.get(128, 4), Some(2.0));
        assert_eq!(m.get(64, 16), None);
        assert_eq!(m.row(64), vec![(4, 1.0), (8, 4.0)]);
    }

    #[test]
    fn serde_round_trip() {
        let mut m = Matrix::new("Reader report", "KB/s");
        m.cells.push(cell(64, 4, 6271021.0));
        m.cells.push(MatrixCell { state: CellStateKind::Partial, ..cell(64, 8, 1.0) });
        assert!(m.any_not_complete());
        let json = serde_json::to_string(&m).expect("serialize");
        let back: Matrix = serde_json::from_str(&json).expect("deserialize");
        assert_eq!(back, m);
    }
}
