//! IOzone 3.471's `-R` report: the parsers the IOzone importer reads it
//! with. The writers are `iomatrix_report::excel_report` and
//! `iomatrix_report::throughput_report`.
//!
//! **Matrix blocks.** After the line `Excel output is below:` IOzone prints
//! one block per test:
//!
//! ```text
//!
//! "Writer report"
//!         "4"  "1024"
//! "65536"   1029178  1775710
//! ```
//!
//! (each row ends with a space). The header is IOzone's record-size list for
//! the run's flags: the `-r` sizes when `-r` is given, else the powers of two
//! from `-y` to `-q` (4 to 16384 by default). A row is one file size and the
//! values of the record sizes that ran for it, ascending, printed from the
//! header's first column on. [`row_records`] puts them back: IOzone runs a
//! record size only if it fits the file, so a row normally holds exactly the
//! header's sizes up to its file size; auto mode (without `-z`) skips records
//! below 64 KiB for files above 32 MiB, whose rows then hold the sizes from
//! 64 KiB up; a row of one value holds the smallest (without `-a` and `-r`
//! IOzone's header is its whole list, but only 4 KiB runs). Any other
//! shorter row is cut short, an error: its values cannot be placed.
//!
//! **Throughput reports.** With `-t N` IOzone prints instead, after the
//! lines `Throughput test with N processes` and `Each process writes a F
//! kByte file in R kByte records`, one line per test:
//!
//! ```text
//! "Throughput report Y-axis is type of test X-axis is number of processes"
//! "Record size = 4 kBytes "
//! "Output is in kBytes/sec"
//!
//! "  Initial write "  246059.19
//! ```
//!
//! read by [`parse_throughput_reports`].

use iomatrix_core::{Matrix, MatrixCell};

/// Unit given to every parsed matrix.
pub const EXCEL_UNIT: &str = "KB/s";

/// Files above this size (KiB) skip records below [`AUTO_SMALL_RECORD_KIB`]
/// in IOzone's auto mode (without `-z`).
pub const AUTO_LARGE_FILE_KIB: u64 = 32 * 1024;
/// See [`AUTO_LARGE_FILE_KIB`].
pub const AUTO_SMALL_RECORD_KIB: u64 = 64;

/// A malformed `-R` report: where and what.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
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

/// One `"... report"` block as printed: its title, header and rows.
#[derive(Debug, Clone, PartialEq)]
pub struct ExcelBlock {
    /// The test's title, without quotes (`Writer report`).
    pub title: String,
    /// The record sizes of the header (KiB), ascending.
    pub header: Vec<u64>,
    /// Its rows, one per file size, in the order printed.
    pub rows: Vec<ExcelRow>,
}

/// One row of an [`ExcelBlock`]: a file size and its values, in order.
#[derive(Debug, Clone, PartialEq)]
pub struct ExcelRow {
    /// 1-based line number.
    pub line: usize,
    /// The file size (KiB).
    pub file_kib: u64,
    /// Its figures (KB/s), from the header's first record size on.
    pub values: Vec<f64>,
}

/// How [`row_records`] placed a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Placement {
    /// One value per header record size up to the file size.
    Whole,
    /// A file above 32 MiB with one value per header size from 64 KiB up to
    /// the file size: auto mode's large-file rule.
    LargeFile,
    /// One value where the header has more sizes up to the file size (and
    /// not the large-file rule): the smallest, the one IOzone ran without
    /// `-a` and `-r`.
    Smallest,
}

/// The record sizes (KiB) of a row of `count` values for `file_kib` under
/// `header`, and how they were found (see the module's text). An error says
/// what does not fit: more values than header sizes up to the file size.
pub fn row_records(header: &[u64], file_kib: u64, count: usize) -> Result<(Vec<u64>, Placement), String> {
    let fitting: Vec<u64> = header.iter().copied().filter(|&r| r <= file_kib).collect();
    if count == fitting.len() {
        return Ok((fitting, Placement::Whole));
    }
    if count > fitting.len() {
        return Err(format!(
            "more values ({count}) than record sizes in the header up to the file size ({}: {})",
            fitting.len(),
            list(&fitting)
        ));
    }
    let large: Vec<u64> = fitting.iter().copied().filter(|&r| r >= AUTO_SMALL_RECORD_KIB).collect();
    if file_kib > AUTO_LARGE_FILE_KIB && large.len() == count {
        return Ok((large, Placement::LargeFile));
    }
    if count == 1 {
        return Ok((fitting[..1].to_vec(), Placement::Smallest));
    }
    Err(format!(
        "{count} values, fewer than the record sizes in the header up to the file size ({}: {}){}: a row cut \
         short? IOzone prints a shorter row only when just its smallest record size ran (one value, without -a or -r)",
        fitting.len(),
        list(&fitting),
        if file_kib > AUTO_LARGE_FILE_KIB { format!(", or from 64 KiB up ({})", large.len()) } else { String::new() }
    ))
}

fn list(sizes: &[u64]) -> String {
    if sizes.is_empty() {
        return "none".into();
    }
    sizes.iter().map(u64::to_string).collect::<Vec<_>>().join(", ")
}

/// Finds every `"<title> report"` block in `text` (a whole IOzone output or
/// just its `-R` section; everything else is ignored) and returns them as
/// printed, in order. A line that cannot be read where a row is due (a
/// damaged line with rows after it, a row that is not numbers, a row outside
/// any block) is an error naming it.
pub fn parse_excel_blocks(text: &str) -> Result<Vec<ExcelBlock>, ParseError> {
    parse_excel_blocks_with(text, &mut Err)
}

/// [`parse_excel_blocks`], with `bad` deciding about each unreadable row line:
/// Ok skips it (the caller lists it), Err stops there.
pub fn parse_excel_blocks_with(
    text: &str,
    bad: &mut dyn FnMut(ParseError) -> Result<(), ParseError>,
) -> Result<Vec<ExcelBlock>, ParseError> {
    let lines: Vec<&str> = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        match report_title(lines[i]) {
            Some(title) => {
                let (block, next) = parse_block(&lines, i, title, bad)?;
                out.push(block);
                i = next;
            }
            None => {
                if looks_like_row(lines[i]) {
                    bad(ParseError::new(
                        i + 1,
                        "a row of figures outside any report block: the block's title or record-size header above \
                         it is missing or damaged",
                    ))?;
                }
                i += 1;
            }
        }
    }
    Ok(out)
}

/// A line shaped like a block's row: a quoted file size, then something.
fn looks_like_row(line: &str) -> bool {
    let mut tokens = line.split_whitespace();
    tokens.next().and_then(quoted_u64).is_some() && tokens.next().is_some()
}

/// The blocks of `text` as one [`Matrix`] each (unit "KB/s"), every row's
/// values under the record sizes [`row_records`] gives.
pub fn parse_excel_report(text: &str) -> Result<Vec<Matrix>, ParseError> {
    parse_excel_blocks(text)?.iter().map(|b| b.placed().map(|(m, _)| m)).collect()
}

impl ExcelBlock {
    /// The block as a [`Matrix`], each row placed by [`row_records`], with
    /// how each file size's row was placed.
    pub fn placed(&self) -> Result<(Matrix, Vec<(u64, Placement)>), ParseError> {
        let mut m = Matrix::new(self.title.clone(), EXCEL_UNIT);
        let mut how = Vec::new();
        for row in &self.rows {
            let (records, placement) = row_records(&self.header, row.file_kib, row.values.len()).map_err(|e| {
                ParseError::new(row.line, format!("\"{}\", file size {}: {e}", self.title, row.file_kib))
            })?;
            m.cells.extend(
                records
                    .into_iter()
                    .zip(&row.values)
                    .map(|(record_kib, &value)| MatrixCell::new(row.file_kib, record_kib, value)),
            );
            how.push((row.file_kib, placement));
        }
        Ok((m, how))
    }
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

/// Parses the block whose title is on `lines[start]`; returns it and the
/// index of the first line after the block.
fn parse_block(
    lines: &[&str],
    start: usize,
    title: &str,
    bad: &mut dyn FnMut(ParseError) -> Result<(), ParseError>,
) -> Result<(ExcelBlock, usize), ParseError> {
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

    let mut block = ExcelBlock { title: title.to_string(), header, rows: Vec::new() };
    let mut idx = header_idx + 1;
    while let Some(line) = lines.get(idx) {
        let line_no = idx + 1;
        let Some(first) = line.split_whitespace().next() else { break };
        if report_title(line).is_some() {
            break;
        }
        if first.starts_with('"') {
            match parse_row(line, line_no, title, &block.rows) {
                Ok(row) => block.rows.push(row),
                Err(e) => bad(e)?,
            }
        } else {
            // Plain text ends a block, but not with rows after it: then it is a damaged row.
            if !lines.get(idx + 1).is_some_and(|next| looks_like_row(next)) {
                break;
            }
            let shown: String = line.trim().chars().take(60).collect();
            bad(ParseError::new(
                line_no,
                format!(
                    "\"{title}\": '{shown}' is not a row (a quoted file size, then its figures), and rows follow it"
                ),
            ))?;
        }
        idx += 1;
    }
    Ok((block, idx))
}

/// One row of a block: `"64"   100  200 `.
fn parse_row(line: &str, line_no: usize, title: &str, before: &[ExcelRow]) -> Result<ExcelRow, ParseError> {
    let mut tokens = line.split_whitespace();
    let first = tokens.next().unwrap_or("");
    let file_kib = quoted_u64(first).ok_or_else(|| {
        ParseError::new(line_no, format!("\"{title}\": expected a quoted file size like \"64\", found {first}"))
    })?;
    if before.iter().any(|r| r.file_kib == file_kib) {
        return Err(ParseError::new(line_no, format!("\"{title}\": second row for file size {file_kib}")));
    }
    let values = tokens
        .enumerate()
        .map(|(k, token)| {
            token.parse().ok().filter(|v: &f64| v.is_finite()).ok_or_else(|| {
                // iomatrix's own -R text marks a cell that is not whole: never taken for a figure.
                let why = if token == "failed" || token.strip_suffix('*').is_some_and(|v| v.parse::<f64>().is_ok()) {
                    " (iomatrix marks a cell where some clients failed with '*' and one where all failed with \
                     'failed': it is no whole figure; db merge copies such a run with its cells' states)"
                } else {
                    ""
                };
                ParseError::new(
                    line_no,
                    format!("\"{title}\", file size {file_kib}: value {} is not a number: {token}{why}", k + 1),
                )
            })
        })
        .collect::<Result<Vec<f64>, _>>()?;
    if values.is_empty() {
        return Err(ParseError::new(line_no, format!("\"{title}\", file size {file_kib}: a row without figures")));
    }
    Ok(ExcelRow { line: line_no, file_kib, values })
}

/// One throughput report of IOzone's `-t` mode, with what the lines above it
/// say.
#[derive(Debug, Clone, PartialEq)]
pub struct ThroughputBlock {
    /// 1-based line number of its title.
    pub line: usize,
    /// Each process's file size (KiB): `Each process writes a F kByte file`.
    pub file_kib: u64,
    /// `Record size = R kBytes`.
    pub record_kib: u64,
    /// `Throughput test with N processes`.
    pub clients: usize,
    /// (IOzone's name of the test, e.g. "Initial write"; KB/s; line).
    pub rows: Vec<(String, f64, usize)>,
}

/// The title of a throughput report, as IOzone prints it between quotes.
const THROUGHPUT_TITLE_START: &str = "Throughput report Y-axis is type of test";

/// Whether `line` is a throughput report's title.
pub fn is_throughput_title(line: &str) -> bool {
    line.trim().strip_prefix('"').is_some_and(|l| l.starts_with(THROUGHPUT_TITLE_START))
}

/// Finds every throughput report in `text` (IOzone's `-R` output of a `-t`
/// run, or iomatrix's) and returns them in order, each with the file size
/// and process count of the latest `Each process writes a ...` and
/// `Throughput test with N ...` lines above it.
pub fn parse_throughput_reports(text: &str) -> Result<Vec<ThroughputBlock>, ParseError> {
    parse_throughput_reports_with(text, &mut Err)
}

/// [`parse_throughput_reports`], with `bad` deciding about each unreadable figure line: Ok skips
/// it (the caller lists it), Err stops there.
pub fn parse_throughput_reports_with(
    text: &str,
    bad: &mut dyn FnMut(ParseError) -> Result<(), ParseError>,
) -> Result<Vec<ThroughputBlock>, ParseError> {
    let lines: Vec<&str> = text.lines().map(|l| l.strip_suffix('\r').unwrap_or(l)).collect();
    let mut out = Vec::new();
    let (mut clients, mut each): (Option<usize>, Option<(u64, Option<u64>)>) = (None, None);
    let mut i = 0;
    while i < lines.len() {
        let line = lines[i].trim();
        if let Some(n) = throughput_clients(line) {
            clients = Some(n);
        } else if let Some(file) = each_writes(line) {
            each = Some(file);
        } else if is_throughput_title(line) {
            let (block, next) = parse_throughput_block(&lines, i, clients, each, bad)?;
            out.push(block);
            i = next;
            continue;
        }
        i += 1;
    }
    Ok(out)
}

/// `Some(2)` for `Throughput test with 2 processes` (or threads).
fn throughput_clients(line: &str) -> Option<usize> {
    let rest = line.strip_prefix("Throughput test with ")?;
    let mut words = rest.split_whitespace();
    let n = words.next()?.parse().ok()?;
    matches!(words.next()?, "process" | "processes" | "thread" | "threads").then_some(n)
}

/// `Some((1024, Some(4)))` for `Each process writes a 1024 kByte file in 4
/// kByte records` (older IOzone: `Kbyte`; `None` record size for telemetry
/// controlled records).
fn each_writes(line: &str) -> Option<(u64, Option<u64>)> {
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["Each", _, "writes", "a", file, unit, "file", "in", rest @ ..] if unit.eq_ignore_ascii_case("kbyte") => {
            let record = match rest {
                [r, unit, "records"] if unit.eq_ignore_ascii_case("kbyte") => r.parse().ok(),
                _ => None,
            };
            Some((file.parse().ok()?, record))
        }
        _ => None,
    }
}

fn parse_throughput_block(
    lines: &[&str],
    start: usize,
    clients: Option<usize>,
    each: Option<(u64, Option<u64>)>,
    bad: &mut dyn FnMut(ParseError) -> Result<(), ParseError>,
) -> Result<(ThroughputBlock, usize), ParseError> {
    let title_no = start + 1;
    let (Some(clients), Some((file_kib, each_record))) = (clients, each) else {
        return Err(ParseError::new(
            title_no,
            "throughput report without its process count and file size: IOzone prints them above its figures \
             (\"Throughput test with N processes\", \"Each process writes a F kByte file in R kByte records\")",
        ));
    };
    let unquoted = |i: usize| lines.get(i).map(|l| l.trim().trim_matches('"').trim());
    let record_kib = unquoted(start + 1)
        .and_then(|l| l.strip_prefix("Record size = "))
        .and_then(|l| l.split_whitespace().next())
        .and_then(|r| r.parse::<u64>().ok())
        .ok_or_else(|| {
            ParseError::new(start + 2, "expected \"Record size = R kBytes \" under the throughput report's title")
        })?;
    if each_record.is_some_and(|r| r != record_kib) {
        return Err(ParseError::new(
            start + 2,
            format!(
                "the throughput report's record size ({record_kib} kB) is not the one above it ({} kB)",
                each_record.unwrap_or_default()
            ),
        ));
    }
    match unquoted(start + 2) {
        Some(u) if u.eq_ignore_ascii_case("Output is in kBytes/sec") => {}
        other => {
            return Err(ParseError::new(
                start + 3,
                format!(
                    "the throughput report is in {}, not kBytes/sec: iomatrix imports KB/s reports only",
                    other.unwrap_or("no unit")
                ),
            ))
        }
    }
    let mut block = ThroughputBlock { line: title_no, file_kib, record_kib, clients, rows: Vec::new() };
    let mut idx = start + 3;
    while let Some(line) = lines.get(idx) {
        let l = line.trim();
        if l.is_empty() {
            idx += 1;
            continue;
        }
        let Some(rest) = l.strip_prefix('"').filter(|_| !is_throughput_title(l)) else { break };
        let line_no = idx + 1;
        match throughput_row(rest, l, line_no, &block.rows) {
            Ok(row) => block.rows.push(row),
            Err(e) => bad(e)?,
        }
        idx += 1;
    }
    Ok((block, idx))
}

/// One figure line of a throughput report: `"  Initial write "  246059.19`.
fn throughput_row(
    rest: &str,
    l: &str,
    line_no: usize,
    before: &[(String, f64, usize)],
) -> Result<(String, f64, usize), ParseError> {
    let (name, values) = rest.split_once('"').ok_or_else(|| {
        ParseError::new(line_no, format!("throughput report: the test's name has no closing quote: {l}"))
    })?;
    let values: Vec<&str> = values.split_whitespace().collect();
    let name = name.trim();
    let value = match values.as_slice() {
        [v] => v
            .parse::<f64>()
            .ok()
            .filter(|v| v.is_finite())
            .ok_or_else(|| ParseError::new(line_no, format!("throughput report, \"{name}\": not a number: {v}")))?,
        [] => return Err(ParseError::new(line_no, format!("throughput report, \"{name}\": no figure"))),
        several => {
            return Err(ParseError::new(
                line_no,
                format!(
                    "throughput report, \"{name}\": {} figures, one per process count (IOzone's -l/-u); \
                     iomatrix imports reports of one process count (-t N)",
                    several.len()
                ),
            ))
        }
    };
    if before.iter().any(|(n, _, _)| n == name) {
        return Err(ParseError::new(line_no, format!("throughput report: \"{name}\" appears twice")));
    }
    Ok((name.to_string(), value, line_no))
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
        assert!(is_throughput_title("\"Throughput report Y-axis is type of test X-axis is number of processes\""));
        assert_eq!(throughput_clients("Throughput test with 4 processes"), Some(4));
        assert_eq!(throughput_clients("Throughput test with 1 thread"), Some(1));
        assert_eq!(each_writes("Each process writes a 1024 kByte file in 1 kByte records"), Some((1024, Some(1))));
        assert_eq!(
            each_writes("Each thread writes a 2097152 Kbyte file in 128 Kbyte records"),
            Some((2097152, Some(128)))
        );
        assert_eq!(
            each_writes("Each process writes a 64 kByte file in telemetry controlled records"),
            Some((64, None))
        );
        assert_eq!(each_writes("Each process writes a lot"), None);
    }

    #[test]
    fn a_cell_iomatrix_marked_not_whole_is_refused_and_said_so() {
        for marked in ["1638743*", "failed"] {
            let text = format!("\"Writer report\"\n        \"4\"  \"8\"\n\"64\"   524487  {marked} \n");
            let e = parse_excel_report(&text).unwrap_err();
            assert_eq!(e.line, 3);
            assert!(e.message.contains(&format!("value 2 is not a number: {marked} (iomatrix marks")), "{e}");
        }
        let e = parse_excel_report("\"Writer report\"\n        \"4\"\n\"64\"   x \n").unwrap_err();
        assert!(!e.message.contains("iomatrix marks"), "{e}");
    }

    #[test]
    fn rows_are_placed_by_the_header() {
        let all = [4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384];
        // Auto mode: every size up to the file.
        assert_eq!(row_records(&all, 64, 5), Ok((vec![4, 8, 16, 32, 64], Placement::Whole)));
        // -r 4k -r 1m.
        assert_eq!(row_records(&[4, 1024], 65536, 2), Ok((vec![4, 1024], Placement::Whole)));
        assert_eq!(row_records(&[4, 1024], 64, 1), Ok((vec![4], Placement::Whole)));
        // Auto mode's large files: 64k up.
        let large = row_records(&all, 65536, 9).unwrap();
        assert_eq!(large, (vec![64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384], Placement::LargeFile));
        assert_eq!(row_records(&[4, 8, 16, 32, 64, 128], 65536, 2), Ok((vec![64, 128], Placement::LargeFile)));
        // Without -a or -r: IOzone's whole list in the header, 4k ran.
        assert_eq!(row_records(&all, 512, 1), Ok((vec![4], Placement::Smallest)));
        assert_eq!(row_records(&all, 65536, 1), Ok((vec![4], Placement::Smallest)));
        let e = row_records(&[4, 8], 64, 3).unwrap_err();
        assert!(e.contains("more values (3)") && e.contains("(2: 4, 8)"), "{e}");
        assert!(row_records(&[128], 64, 1).unwrap_err().contains("(0: none)"));
    }
}
