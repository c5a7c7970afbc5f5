//! `--exclude CELL`: a cell left out of a comparison's means at the user's word, as seed 000's
//! author left the backward-read outlier at 512K/64K "out of the averaging" and said so. Its
//! ratio stays in the matrix; the record-size and file-size views, the overall change and the
//! region's are worked again without it, and the matrix names it.

use crate::compare::{Comparison, MatrixComparison, Tally};
use crate::BadFlag;
use iomatrix_core::text::printable;

/// Leaves the cells named (as the tables name them: "backward-read 512k/64k") out of the means
/// of the matrices that hold them. A name that is no matrix cell is refused, naming what is.
pub fn exclude_from_means(c: &mut Comparison, cells: &[String]) -> Result<(), BadFlag> {
    for name in cells {
        let found = c.matrices.iter_mut().find_map(|m| place(m, name).map(|at| (m, at)));
        let Some((m, _)) = found else {
            // The name as the user typed it, a control character escaped: never a raw escape
            // sequence on the terminal.
            let name = printable(name);
            let example =
                c.matrices.first().and_then(|m| Some(cell_name(m, *m.file_sizes.first()?, *m.record_sizes.first()?)));
            return Err(BadFlag(match example {
                Some(e) => format!(
                    "--exclude {name}: no cell of the compared matrices is named that; name one as the matrices \
                     do, test file/record (e.g. --exclude '{}')",
                    printable(&e)
                ),
                None => format!(
                    "--exclude {name}: this comparison has no matrix (IOzone's tests) whose means a cell could be \
                     left out of"
                ),
            }));
        };
        if !m.excluded.contains(name) {
            m.excluded.push(name.clone());
        }
    }
    let region = c.region;
    for m in c.matrices.iter_mut().filter(|m| !m.excluded.is_empty()) {
        let kept = |i: usize, j: usize, m: &MatrixComparison| {
            !m.excluded.contains(&cell_name(m, m.file_sizes[i], m.record_sizes[j]))
        };
        let mean = |v: Vec<f64>| if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) };
        let (mut all, mut in_region) = (Vec::new(), Vec::new());
        for (i, f) in m.file_sizes.iter().enumerate() {
            for (j, r) in m.record_sizes.iter().enumerate() {
                let Some(ratio) = m.ratios[i][j].filter(|_| kept(i, j, m)) else { continue };
                all.push(ratio);
                if region.contains(*f, *r) {
                    in_region.push(ratio);
                }
            }
        }
        let by_record = (0..m.record_sizes.len())
            .filter_map(|j| {
                let column = (0..m.file_sizes.len()).filter(|i| kept(*i, j, m)).filter_map(|i| m.ratios[i][j]);
                mean(column.collect()).map(|v| (m.record_sizes[j], v))
            })
            .collect();
        let by_file = (0..m.file_sizes.len())
            .filter_map(|i| {
                let row = (0..m.record_sizes.len()).filter(|j| kept(i, *j, m)).filter_map(|j| m.ratios[i][j]);
                mean(row.collect()).map(|v| (m.file_sizes[i], v))
            })
            .collect();
        m.by_record = by_record;
        m.by_file = by_file;
        m.overall = Tally::of(&all);
        if m.region.is_some() {
            m.region = Some(Tally::of(&in_region));
        }
    }
    Ok(())
}

/// "write 64k/4k": a matrix cell as the tables and `--exclude` name it.
fn cell_name(m: &MatrixComparison, file: u64, record: u64) -> String {
    format!("{} {}/{}", m.test, crate::cells::size(file), crate::cells::size(record))
}

/// Where the cell named is in this matrix, if it is there with a ratio.
fn place(m: &MatrixComparison, name: &str) -> Option<(usize, usize)> {
    for (i, f) in m.file_sizes.iter().enumerate() {
        for (j, r) in m.record_sizes.iter().enumerate() {
            if cell_name(m, *f, *r) == name && m.ratios[i][j].is_some() {
                return Some((i, j));
            }
        }
    }
    None
}
