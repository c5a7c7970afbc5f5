//! IOzone runs as IOzone shows them: one KB/s matrix per test (file sizes
//! down, record sizes across) and the CPU % matrix under it.

use crate::figures::IozoneFigures;
use crate::{IozoneCellFigures, IozoneTest};
use iomatrix_analysis::median;
use iomatrix_core::figures::CachedAtStart;
use iomatrix_core::{human, ByteSize, Figures};
use iomatrix_report::table::{Column, Table};
use iomatrix_report::{matrix_table, Matrix, MatrixCell, ThroughputReport};
use iomatrix_store::{CellStateKind, StoredRun};
use serde::Deserialize;
use std::collections::BTreeMap;
use std::fmt::Write;

/// A stored IOzone run as IOzone prints its matrices: one table of KB/s per test (file sizes
/// down, record sizes across), with the %CPU tables where measured.
pub fn tables(run: &StoredRun) -> String {
    let mut out = String::new();
    let cpu = cpu_matrices(run);
    for throughput in throughput_matrices(run) {
        let _ = write!(out, "\n{}\n", matrix_table(&throughput, 0));
        // Cells without a CPU figure (an imported IOzone report has none) have no CPU matrix.
        let title = throughput.title.replace(" report", " CPU");
        if let Some(cpu) = cpu.iter().find(|m| m.title == title) {
            let _ = write!(out, "{}", matrix_table(cpu, 0));
        }
    }
    out + &cached_at_start(run) + &iomatrix_report::text::clients::table(run, &CLIENT_COLUMNS)
}

/// How much of each cell's files the page cache held when the cell began, a line per test: the
/// range over its cells (a column per matrix would double every table) and the cell with the
/// least. Nothing for runs that did not record it (a server's files, runs stored before it).
fn cached_at_start(run: &StoredRun) -> String {
    let mut table = Table::new(vec![
        Column::fit_left("test"),
        Column::fit_right("cells"),
        Column::free("cached at start").gap("  "),
    ])
    .trimmed();
    for test in IozoneTest::ALL {
        let cells: Vec<(&iomatrix_store::CellRow, CachedAtStart)> = run
            .cell_results
            .iter()
            .filter(|c| c.test == test.name())
            .filter_map(|c| Some((c, figures(c).own.cached_at_start?)))
            .collect();
        if cells.is_empty() {
            continue;
        }
        let empty = cells.iter().filter(|(_, held)| held.file_bytes == 0).count();
        let sized: Vec<_> = cells.iter().filter(|(_, held)| held.file_bytes > 0).collect();
        let percent = |held: &CachedAtStart| format!("{}%", human::fixed(held.percent(), 0));
        let mut said = match (
            sized.iter().min_by(|a, b| a.1.percent().total_cmp(&b.1.percent())),
            sized.iter().max_by(|a, b| a.1.percent().total_cmp(&b.1.percent())),
        ) {
            (Some((least_cell, least)), Some((_, most))) if percent(least) != percent(most) => {
                let size = |b: Option<u64>| ByteSize(b.unwrap_or(0)).to_string();
                format!(
                    "{}..{} of the file (least: file {} record {})",
                    percent(least),
                    percent(most),
                    size(least_cell.file_size),
                    size(least_cell.record_size)
                )
            }
            (Some((_, least)), _) => format!("{} of the file", percent(least)),
            _ => String::new(),
        };
        if empty > 0 {
            let created = if sized.is_empty() {
                CachedAtStart::CREATED_EMPTY.to_string()
            } else {
                format!("{empty} cell(s) empty")
            };
            said = if said.is_empty() { created } else { format!("{said}; {created}") };
        }
        table.row([test.name().to_string(), cells.len().to_string(), said]);
    }
    if table.is_empty() {
        return String::new();
    }
    format!(
        "\nCached at start (the page cache's share of each cell's files just before it began, by mincore; all \
         clients' files)\n{}",
        table.render()
    )
}

/// How the shared clients table shows an IOzone cell: its name and each client's KB/s.
pub const CLIENT_COLUMNS: iomatrix_report::text::clients::ClientColumns =
    iomatrix_report::text::clients::ClientColumns {
        unit: "KB/s",
        describe: |c| figures(c).cell_name(),
        aggregates: |c| {
            let f = figures(c);
            (f.kib_per_sec, f.own.kib_per_sec_overall, f.own.kib_per_sec_stonewalled)
        },
        client_rate: |f| {
            let ns = f["measured"]["end_ns"].as_u64()?.checked_sub(f["measured"]["start_ns"].as_u64()?)?;
            (ns > 0).then(|| f["moved"]["bytes"].as_f64().unwrap_or(0.0) / 1024.0 / (ns as f64 / 1e9))
        },
        kib_per_unit: 1.0,
    };

/// A stored IOzone cell's figures; a row that does not hold them has none of its own.
fn figures(c: &iomatrix_store::CellRow) -> IozoneFigures<'_> {
    IozoneFigures {
        kib_per_sec: c.kib_per_sec,
        test: &c.test,
        file_size: c.file_size.unwrap_or(0),
        record_size: c.record_size.unwrap_or(0),
        own: IozoneCellFigures::deserialize(&c.metrics).unwrap_or_default(),
    }
}

/// One KB/s matrix per test, in IOzone's order.
pub fn throughput_matrices(run: &StoredRun) -> Vec<Matrix> {
    matrices(run, "KB/s", |t| t.report_title().to_string(), |c| Some(c.kib_per_sec))
}

/// IOzone's `-t` reports: one per file/record pair (IOzone's throughput
/// mode has one), a line per test in IOzone's order with the KB/s of all
/// clients (the median of repeats, as in the matrices).
pub fn throughput_reports(run: &StoredRun) -> Vec<ThroughputReport> {
    let matrices = throughput_matrices(run);
    let mut pairs: Vec<(u64, u64)> =
        matrices.iter().flat_map(|m| m.cells.iter().map(|c| (c.file_kib, c.record_kib))).collect();
    pairs.sort_unstable();
    pairs.dedup();
    pairs
        .into_iter()
        .map(|(file_kib, record_kib)| {
            let rows = IozoneTest::THROUGHPUT_ORDER
                .iter()
                .filter_map(|t| {
                    let m = matrices.iter().find(|m| m.title == t.report_title())?;
                    m.cell(file_kib, record_kib).map(|c| (t.throughput_name().to_string(), c.value, c.state))
                })
                .collect();
            let clients = run
                .cell_results
                .iter()
                .filter(|c| c.file_size.map(|b| b / 1024) == Some(file_kib))
                .filter(|c| c.record_size.map(|b| b / 1024) == Some(record_kib))
                .map(|c| c.clients)
                .max()
                .unwrap_or(1);
            ThroughputReport { file_kib, record_kib, clients, rows }
        })
        .collect()
}

fn cpu_matrices(run: &StoredRun) -> Vec<Matrix> {
    matrices(run, "%", |t| t.report_title().replace(" report", " CPU"), |c| c.cpu_percent)
}

fn matrices(
    run: &StoredRun,
    unit: &str,
    title: impl Fn(IozoneTest) -> String,
    value: impl Fn(&iomatrix_store::CellRow) -> Option<f64>,
) -> Vec<Matrix> {
    IozoneTest::ALL
        .iter()
        .filter_map(|&test| {
            // Each cell's samples by state: repeated cells (--repeat) show their median.
            let mut samples: BTreeMap<(u64, u64), BTreeMap<CellStateKind, Vec<f64>>> = BTreeMap::new();
            for c in run.cell_results.iter().filter(|c| c.test == test.name()) {
                let (Some(f), Some(r)) = (c.file_size, c.record_size) else { continue };
                let by_state = samples.entry((f / 1024, r / 1024)).or_default().entry(c.state.kind).or_default();
                if let Some(v) = value(c).filter(|_| c.state.kind != CellStateKind::Failed) {
                    by_state.push(v);
                }
            }
            let cells: Vec<MatrixCell> = samples
                .into_iter()
                .filter_map(|((file_kib, record_kib), by_state)| {
                    let (state, values) = shown_samples(&by_state)?;
                    Some(MatrixCell { file_kib, record_kib, value: values.map_or(0.0, median), state })
                })
                .collect();
            (!cells.is_empty()).then(|| Matrix { title: title(test), unit: unit.to_string(), cells })
        })
        .collect()
}

/// What a matrix shows of one cell's samples, as compare and report would: the median of its
/// whole samples; where none is whole, of its partial ones, marked; where none has a figure,
/// failed (no value). None where no sample has this figure at all (no CPU in an import).
fn shown_samples(by_state: &BTreeMap<CellStateKind, Vec<f64>>) -> Option<(CellStateKind, Option<&[f64]>)> {
    let with_figures = |kind| by_state.get(&kind).filter(|v| !v.is_empty()).map(Vec::as_slice);
    match (with_figures(CellStateKind::Complete), with_figures(CellStateKind::Partial)) {
        (Some(whole), _) => Some((CellStateKind::Complete, Some(whole))),
        (None, Some(partial)) => Some((CellStateKind::Partial, Some(partial))),
        (None, None) if by_state.contains_key(&CellStateKind::Failed) => Some((CellStateKind::Failed, None)),
        (None, None) => None,
    }
}

/// IOzone's classic table of the run ([`iomatrix_report::iozone_classic_table`]): a line per
/// file and record size, a column per test, as IOzone prints it by default.
pub fn classic_table(run: &StoredRun) -> String {
    iomatrix_report::iozone_classic_table(&throughput_matrices(run))
}

#[cfg(test)]
mod tests {
    use super::*;
    use iomatrix_store::{CellRow, RunStatus, RunSummary};

    fn cell(test: &str, file: u64, held: Option<(u64, u64)>) -> CellRow {
        let own = IozoneCellFigures {
            cached_at_start: held.map(|(cached_bytes, file_bytes)| CachedAtStart { cached_bytes, file_bytes }),
            ..IozoneCellFigures::default()
        };
        CellRow {
            file_size: Some(file),
            record_size: Some(4096),
            metrics: serde_json::json!(own),
            ..CellRow::blank(test, "psync")
        }
    }

    fn run(cells: Vec<CellRow>) -> StoredRun {
        StoredRun::new(
            RunSummary {
                id: 1,
                suite: "iozone".into(),
                status: RunStatus::Complete,
                started_at: String::new(),
                ended_at: None,
                host: String::new(),
                command_line: String::new(),
                labels: Vec::new(),
                cells: cells.len(),
                total_cells: cells.len(),
                disturbed_cells: 0,
                error: None,
                iomatrix_version: String::new(),
                pid: 0,
                pid_start: None,
            },
            serde_json::Value::Null,
            serde_json::Value::Null,
            serde_json::Value::Null,
            cells,
        )
    }

    #[test]
    fn cached_at_start_is_a_line_per_test_with_its_range_and_least_cell() {
        const MIB: u64 = 1 << 20;
        let shown = cached_at_start(&run(vec![
            cell("write", MIB, Some((0, 0))),
            cell("write", 64 * MIB, Some((0, 0))),
            cell("read", MIB, Some((MIB, MIB))),
            cell("read", 64 * MIB, Some((16 * MIB, 64 * MIB))),
            cell("reread", MIB, Some((MIB, MIB))),
            cell("reread", 64 * MIB, Some((64 * MIB, 64 * MIB))),
            // A cell stored without the figure (a run from before it) is left out, not counted as 0%.
            cell("random-read", MIB, None),
        ]));
        let lines: Vec<&str> = shown.lines().collect();
        assert!(lines[1].starts_with("Cached at start ("), "{shown}");
        assert_eq!(
            &lines[2..],
            [
                "test   cells  cached at start",
                "write      2  empty: the test created its file",
                "read       2  25%..100% of the file (least: file 64m record 4k)",
                "reread     2  100% of the file",
            ]
        );
        // A run that recorded none (a server's, or one stored before it) shows nothing.
        assert_eq!(cached_at_start(&run(vec![cell("read", MIB, None)])), "");
    }
}
