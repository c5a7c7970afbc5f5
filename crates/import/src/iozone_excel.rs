//! IOzone 3.471's `-R` "Excel output" text report: the parser the IOzone
//! importer reads it with. The writer is [`iomatrix_report::excel_report`].
//!
//! After the line `Excel output is below:` IOzone prints one block per test:
//!
//! ```text
//!
//! "Writer report"
//!         "4"  "8"  "16"  "32"  "64"  "128"  "256"  "512"  "1024"  "2048"  "4096"  "8192"  "16384"
//! "64"   524487  1638743  2006158  1933893  1879725
//! "128"   1561553  2098744  2027414  2784517  2920861  2660335
//! ```
//!
//! (each row ends with a space). The header always lists every record size
//! IOzone knows, 4 to 16384 KiB. A row carries no record sizes: its values
//! fill the columns from the left, starting at the run's minimum record size.

use iomatrix_report::{Matrix, MatrixCell};
use std::fmt;

/// Minimum record size (KiB) that [`parse_excel_report`] assumes.
pub const DEFAULT_MIN_RECORD_KIB: u64 = 4;

/// Unit given to every parsed matrix.
pub const EXCEL_UNIT: &str = "KB/s";

/// A malformed `-R` report: where and what.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParseError {
    /// 1-based line number in the parsed text.
    pub line: usize,
    /// What was wrong on that line.
    pub message: String,
}

impl ParseError {
    fn new(line: usize, message: impl Into<String>) -> Self {
        ParseError { line, message: message.into() }
    }
}

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}: {}", self.line, self.message)
    }
}

impl std::error::Error for ParseError {}

/// Finds every `"<title> report"` block in `text` (a whole IOzone output or
/// just its `-R` section; everything else is ignored) and returns one
/// [`Matrix`] per block, in order, with unit "KB/s".
///
/// Assumes the run's minimum record size is 4 KiB; see
/// [`parse_excel_report_with_min_record`].
pub fn parse_excel_report(text: &str) -> Result<Vec<Matrix>, ParseError> {
    parse_excel_report_with_min_record(text, DEFAULT_MIN_RECORD_KIB)
}

/// Like [`parse_excel_report`], for a run whose smallest record size was
/// `min_record_kib` (e.g. IOzone's `-y`, or `-r` for a single record size).
///
/// A row with k values maps onto the first k header record sizes that are
/// `>= min_record_kib`, in ascending order.
pub fn parse_excel_report_with_min_record(text: &str, min_record_kib: u64) -> Result<Vec<Matrix>, ParseError> {
    let lines: Vec<&str> = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match report_title(lines[i]) {
            Some(title) => {
                let (matrix, next) = parse_block(&lines, i, title, min_record_kib)?;
                out.push(matrix);
                i = next;
            }
            None => i += 1,
        }
    }
    Ok(out)
}

/// `Some("Writer report")` for the line `"Writer report"`.
fn report_title(line: &str) -> Option<&str> {
    let inner = line.trim().strip_prefix('"')?.strip_suffix('"')?;
    if inner.ends_with(" report") && !inner.contains('"') {
        Some(inner)
    } else {
        None
    }
}

/// `Some(64)` for the token `"64"`.
fn quoted_u64(token: &str) -> Option<u64> {
    let inner = token.strip_prefix('"')?.strip_suffix('"')?;
    if inner.is_empty() || !inner.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    inner.parse().ok()
}

/// Parses the block whose title is on `lines[start]`; returns the matrix and
/// the index of the first line after the block.
fn parse_block(lines: &[&str], start: usize, title: &str, min_record_kib: u64) -> Result<(Matrix, usize), ParseError> {
    let header_idx = start + 1;
    let header_no = header_idx + 1;
    let header_line = lines.get(header_idx).ok_or_else(|| {
        ParseError::new(header_no, format!("end of input where the record-size header of \"{title}\" was expected"))
    })?;
    let mut header = Vec::new();
    for token in header_line.split_whitespace() {
        let r = quoted_u64(token).ok_or_else(|| {
            ParseError::new(
                header_no,
                format!("record-size header of \"{title}\": expected a quoted record size like \"4\", found {token}"),
            )
        })?;
        if header.last().is_some_and(|&prev| prev >= r) {
            return Err(ParseError::new(
                header_no,
                format!("record-size header of \"{title}\": record sizes are not ascending at {token}"),
            ));
        }
        header.push(r);
    }
    if header.is_empty() {
        return Err(ParseError::new(
            header_no,
            format!("expected the record-size header of \"{title}\", found an empty line"),
        ));
    }
    let columns: Vec<u64> = header.into_iter().filter(|&r| r >= min_record_kib).collect();

    let mut matrix = Matrix::new(title, EXCEL_UNIT);
    let mut seen_files: Vec<u64> = Vec::new();
    let mut idx = header_idx + 1;
    while let Some(line) = lines.get(idx) {
        let line_no = idx + 1;
        let mut tokens = line.split_whitespace();
        let Some(first) = tokens.next() else { break };
        if !first.starts_with('"') || report_title(line).is_some() {
            break;
        }
        let file_kib = quoted_u64(first).ok_or_else(|| {
            ParseError::new(line_no, format!("\"{title}\": expected a quoted file size like \"64\", found {first}"))
        })?;
        if seen_files.contains(&file_kib) {
            return Err(ParseError::new(line_no, format!("\"{title}\": second row for file size {file_kib}")));
        }
        seen_files.push(file_kib);
        for (k, token) in tokens.enumerate() {
            let value: f64 = token.parse().ok().filter(|v: &f64| v.is_finite()).ok_or_else(|| {
                ParseError::new(
                    line_no,
                    format!("\"{title}\", file size {file_kib}: value {} is not a number: {token}", k + 1),
                )
            })?;
            let record_kib = *columns.get(k).ok_or_else(|| {
                ParseError::new(
                    line_no,
                    format!(
                        "\"{title}\", file size {file_kib}: more values than record sizes >= {min_record_kib} KiB in the header ({})",
                        columns.len()
                    ),
                )
            })?;
            matrix.cells.push(MatrixCell { file_kib, record_kib, value });
        }
        idx += 1;
    }
    Ok((matrix, idx))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn title_detection() {
        assert_eq!(report_title("\"Writer report\""), Some("Writer report"));
        assert_eq!(report_title("\"Writer\""), None);
        assert_eq!(report_title("Writer report"), None);
        assert_eq!(quoted_u64("\"64\""), Some(64));
        assert_eq!(quoted_u64("\"-64\""), None);
        assert_eq!(quoted_u64("\"\""), None);
        assert_eq!(quoted_u64("\"99999999999999999999999\""), None);
    }
}
