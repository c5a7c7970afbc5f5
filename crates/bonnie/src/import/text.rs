//! The original Bonnie's text report (Tim Bray's Bonnie 1.x, and the later
//! builds that kept its layout), as its `report()` prints it:
//!
//! ```text
//!               -------Sequential Output-------- ---Sequential Input-- --Random--
//!               -Per Char- --Block--- -Rewrite-- -Per Char- --Block--- --Seeks---
//! Machine    MB K/sec %CPU K/sec %CPU K/sec %CPU K/sec %CPU K/sec %CPU  /sec %CPU
//! nss-rdm  1024 31853 97.2 61435 18.3 27145  9.4 29810 93.1 78236 10.2 412.3  3.1
//! ```
//!
//! Each row is `printf("%-8.8s %4d ", machine, MB)` and six figure/%CPU pairs
//! (`%5d %4.1f` for the five sequential tests, `%5.1f %4.1f` for the seeks):
//! the last 13 words of a row are its numbers and what precedes them is the
//! machine (empty without `-m`, cut to 8 characters). Each row is one run:
//! Bonnie prints one row per run, and files are often several outputs
//! pasted together, the headings repeated. K/sec is 1024 bytes a second
//! (Bonnie divides the file's bytes by the time and by 1024).

use crate::{BonnieTest, PerChar};
use iomatrix_core::MIB;
use iomatrix_import::{
    imported_row, line_source, unknown_conditions, BadLines, ImportError, ImportedCell, ImportedRun, Options,
};
use iomatrix_store::CellRow;
use serde_json::{json, Value};

/// The first heading line: seven dashes before "Sequential Output" (bonnie++'s table has six).
const HEADING: &str = "-------Sequential Output--------";

/// The column line under the headings: Bonnie's `Machine    MB K/sec %CPU ...`.
fn is_column_line(line: &str) -> bool {
    let words: Vec<&str> = line.split_whitespace().collect();
    words.first() == Some(&"Machine") && words.get(1) == Some(&"MB") && line.contains("%CPU")
}

/// Whether `text` holds the original Bonnie's report.
pub fn looks_like_report(text: &str) -> bool {
    text.contains(HEADING) && text.lines().any(is_column_line)
}

/// The tests of a row, in Bonnie's column order.
const COLUMNS: [BonnieTest; 6] = [
    BonnieTest::PutcWrite,
    BonnieTest::BlockWrite,
    BonnieTest::Rewrite,
    BonnieTest::GetcRead,
    BonnieTest::BlockRead,
    BonnieTest::RandomSeeks,
];

/// Bonnie's %CPU of a sequential test is one process's CPU over its elapsed time: at most 100,
/// and one clock tick more where the system charged CPU by ticks (1% of a one-second test).
const MAX_ONE_PROCESS_CPU: f64 = 101.0;

pub fn parse(text: &str, options: &Options) -> Result<Vec<ImportedRun>, ImportError> {
    let mut bad = BadLines::new(options);
    let mut rows = Vec::new();
    let mut in_table = false;
    for (i, line) in text.lines().enumerate() {
        let n = i + 1;
        if is_column_line(line) {
            in_table = true;
            continue;
        }
        if !in_table {
            continue;
        }
        let words: Vec<&str> = line.split_whitespace().collect();
        if words.is_empty() || line.contains("Sequential") || line.contains("Per Char") {
            in_table = !line.contains(HEADING) && !words.is_empty();
            continue;
        }
        match row(n, &words) {
            Ok((name, v)) => rows.push((n, name, v)),
            Err(e) => bad.bad(e)?,
        }
    }
    let runs: Vec<ImportedRun> = rows.iter().map(|(n, name, v)| run(*n, name, v, &bad.lines)).collect();
    if runs.is_empty() {
        return Err(ImportError::new(format!(
            "no row of the original Bonnie's table found (a heading '{HEADING}', the line 'Machine    MB K/sec \
             %CPU ...', then one row per run)"
        )));
    }
    Ok(runs)
}

/// One row of the table: the machine, and its 13 numbers.
fn row(n: usize, words: &[&str]) -> Result<(String, Vec<f64>), ImportError> {
    if words.len() < 13 {
        return Err(ImportError::at_line(
            n,
            format!(
                "a row of Bonnie's table has a machine name and 13 numbers (MB, then K/sec and %CPU for putc, \
                 block write, rewrite, getc and block read, then seeks/sec and %CPU); this one has {} words",
                words.len()
            ),
        ));
    }
    let (name, numbers) = words.split_at(words.len() - 13);
    let mut v = Vec::with_capacity(13);
    for (j, w) in numbers.iter().enumerate() {
        let column = name.len() + j + 1;
        let x: f64 =
            w.parse().ok().filter(|x: &f64| x.is_finite() && *x >= 0.0).ok_or_else(|| {
                ImportError::at_line(n, format!("column {column} ('{w}') is not a figure Bonnie prints"))
            })?;
        // Columns 3, 5, ... 11 are the sequential tests' %CPU (MB is column 1 of the numbers).
        if (3..=11).contains(&(j + 1)) && j % 2 == 0 && x > MAX_ONE_PROCESS_CPU {
            return Err(ImportError::at_line(
                n,
                format!(
                    "column {column} ('{w}'): %CPU above {MAX_ONE_PROCESS_CPU}; Bonnie's sequential tests run in one \
                     process, whose CPU cannot pass its elapsed time"
                ),
            ));
        }
        v.push(x);
    }
    let mb = v[0];
    if mb.fract() != 0.0 || mb > (i64::MAX as u64 / MIB) as f64 {
        return Err(ImportError::at_line(
            n,
            format!("column {} ('{}') is not a file size in MB that Bonnie prints", name.len() + 1, numbers[0]),
        ));
    }
    Ok((name.join(" "), v))
}

fn run(line: usize, machine: &str, v: &[f64], bad_lines: &[iomatrix_import::BadLine]) -> ImportedRun {
    let size = (v[0] as u64).saturating_mul(MIB);
    let cells = COLUMNS
        .iter()
        .enumerate()
        .map(|(i, test)| {
            let (per_sec, cpu) = (v[1 + 2 * i], v[2 + 2 * i]);
            let metrics = super::csv::imported_metrics(*test, 1, per_sec, cpu);
            ImportedCell {
                line: Some(line),
                source: line_source(line),
                row: CellRow {
                    test: test.name().to_string(),
                    file_size: Some(size),
                    record_size: None,
                    clients: 1,
                    kib_per_sec: if test.unit() == "KB/s" { per_sec } else { 0.0 },
                    cpu_percent: Some(cpu),
                    metrics,
                    ..imported_row()
                },
            }
        })
        .collect();
    let mut conditions = unknown_conditions(super::BONNIE_TEXT.suite);
    conditions.insert("clients".into(), Value::from(1));
    conditions.insert("largest_file_bytes".into(), Value::from(size));
    conditions.insert(
        "per_char".into(),
        Value::from("bonnie: the original Bonnie's putc/getc through stdio, over the whole file"),
    );
    ImportedRun {
        labels: Vec::new(),
        format: super::BONNIE_TEXT,
        tool_version: None,
        host: (!machine.is_empty()).then(|| machine.to_string()),
        measured_at: None,
        plan: json!({
            "tool": "bonnie",
            "size": size,
            "chunk": Value::Null,
            "per_char": PerChar::Bonnie,
            "files": 0,
            "repeats": 1,
            "lines": [line],
        }),
        environment: if machine.is_empty() { json!({}) } else { json!({ "host": machine }) },
        conditions,
        unknown: vec![
            "Bonnie's version (its table does not print it)".into(),
            "chunk size (16k in Tim Bray's source, other builds differ)".into(),
            "the seek test's processes and seeks (3 x 4000 in Tim Bray's source; seed 002's build says 4 x 4000)"
                .into(),
            "backend; direct/cached; RAM, so file size vs RAM; file system and mount".into(),
        ],
        notes: if machine.chars().count() == 8 {
            vec!["the machine name may be cut: Bonnie prints at most 8 characters of -m".into()]
        } else {
            Vec::new()
        },
        cells,
        unmeasured: Vec::new(),
        skipped: Vec::new(),
        bad_lines: bad_lines.to_vec(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_become_runs_and_bad_rows_say_where() {
        let text = include_str!("../../../import/tests/data/bonnie-1.x-two-runs.txt");
        assert!(looks_like_report(text));
        let runs = parse(text, &Options::default()).unwrap();
        assert_eq!(runs.len(), 2);
        let r = &runs[0];
        assert_eq!(r.host.as_deref(), Some("nss-rdm"));
        assert_eq!(r.plan["size"], 1024 * MIB);
        let names: Vec<&str> = r.cells.iter().map(|c| c.test.as_str()).collect();
        assert_eq!(names, ["putc", "write", "rewrite", "getc", "read", "seeks"]);
        assert_eq!(r.cells[1].kib_per_sec, 61435.0);
        assert_eq!(r.cells[1].cpu_percent, Some(18.3));
        assert_eq!(r.cells[5].kib_per_sec, 0.0);
        assert_eq!(r.cells[5].metrics["per_sec"], 412.3);
        assert_eq!(r.cells[5].metrics["unit"], "seeks/s");
        assert_eq!(runs[1].host, None, "Bonnie without -m prints no machine");
        let bad = text.replace("61435", "6l435");
        let e = parse(&bad, &Options::default()).unwrap_err().to_string();
        assert!(e.starts_with("line 11: column 5 ('6l435')"), "{e}");
        assert!(e.ends_with("give --skip-bad-lines to store the rest and record the lines skipped)"), "{e}");
        let skipped = parse(&bad, &Options { skip_bad_lines: true, ..Options::default() }).unwrap();
        assert_eq!(skipped.len(), 1, "the other row is stored");
        assert_eq!(skipped[0].bad_lines.len(), 1);
        assert_eq!(skipped[0].bad_lines[0].line, 11);
        assert!(skipped[0].bad_lines[0].why.contains("'6l435'"), "{:?}", skipped[0].bad_lines);
        // %CPU above one process's, and a size no Bonnie prints.
        let e = parse(&text.replace("61435 18.3", "61435 9999.9"), &Options::default()).unwrap_err().to_string();
        assert!(e.starts_with("line 11: column 6 ('9999.9'): %CPU above 101"), "{e}");
        let e = parse(&text.replace("nss-rdm  1024", "nss-rdm  99999999999999999999999"), &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("line 11: column 2 ('99999999999999999999999') is not a file size"), "{e}");
        let e = parse("              -------Sequential Output-------- x\nnothing\n", &Options::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("no row of the original Bonnie's table"), "{e}");
    }
}
