//! Backup walks: totals, time by file size class, extents, errors, rebuilt
//! from the stored cell.

use crate::{BackupCellFigures, BackupResult};
use iomatrix_core::{human, ByteSize};
use iomatrix_report::document::marked;
use iomatrix_report::table::{Column, Table};
use iomatrix_store::{CellRow, CellStateKind, StoredRun};
use serde::Deserialize;
use serde_json::Value;
use std::fmt::Write;

/// A stored backup run in words and tables: rates, files by size class, extents, what was
/// skipped and the errors met.
pub fn report(run: &StoredRun) -> String {
    let walks = run.cell_results.len();
    let Some(cell) = run.cell_results.first() else {
        return "\n(no walk stored)\n".into();
    };
    let Ok(r) = serde_json::from_value::<BackupResult>(cell.metrics.clone()) else {
        return "\n(the stored cell is not a backup walk this iomatrix can read)\n".into();
    };
    let fs_type = run.records().conditions["fs_type"].as_str().unwrap_or("unknown").to_string();
    let mut out = String::from("\n");
    if walks > 1 {
        out += &format!("{walks} walks of the tree (--repeat); the first is shown, every walk is in --json\n");
    }
    if r.interrupted {
        let _ = writeln!(out, "interrupted: the figures cover the {} files finished before Ctrl-C", r.files);
    }
    if let Some(why) = &r.server_lost {
        let _ = writeln!(out, "server lost: {why}");
    }
    let _ = writeln!(
        out,
        "read: {} files, {} ({} bytes) in {} reads of {}",
        r.files,
        human::bytes(r.bytes),
        r.bytes,
        r.reads,
        ByteSize(cell.record_size.unwrap_or(0))
    );
    let clients = cell.client_figures.as_array().map_or(0, Vec::len);
    out.push_str(&rates_text(run, cell, &r, clients));
    out.push_str(&notes_text(run, &r, &fs_type));
    out.push_str(&iomatrix_report::text::extents::errors_text(&r.errors));
    if r.failed_bytes > 0 {
        let _ = writeln!(out, "  ({} read from files that then failed, not counted)", human::bytes(r.failed_bytes));
    }

    out.push_str(&clients_text(run, cell));
    out.push_str(&classes_text(cell, &r, clients));
    let _ = writeln!(out, "\nExtents (FIEMAP, counted as filefrag counts them; mapped outside the timing)");
    out.push_str(&iomatrix_report::text::extents::summary_text(&fs_type, &r.extents));
    out
}

/// Nanoseconds as seconds to the millisecond: `1.250`.
fn secs(ns: u64) -> String {
    human::fixed(ns as f64 / 1e9, 3)
}

/// A figure to `decimals` places, marked where the walk is not complete (a partial walk's
/// figures are of the clients that finished).
fn figure(cell: &CellRow, v: f64, decimals: usize) -> String {
    marked(cell.state.kind, || human::fixed(v, decimals))
}

/// The walk's state, its rates and its time: one client's own, or the sum of several and the
/// whole walk's.
fn rates_text(run: &StoredRun, cell: &CellRow, r: &BackupResult, clients: usize) -> String {
    let mut out = String::new();
    // A cold walk's preparation, untimed. Runs stored before it moved ahead of the walk have no
    // evict_ns: their walk dropped each file's pages as it went.
    let evicted_within = r.cold && r.evict_ns == 0;
    let before = if !r.cold {
        String::new()
    } else if evicted_within {
        format!("; syncfs before it {} s", secs(r.sync_ns))
    } else {
        format!("; before it, syncfs {} s and cached pages dropped {} s", secs(r.sync_ns), secs(r.evict_ns))
    };
    let included = if run.records().conditions["remote"].is_object() {
        "the server's folder listings included"
    } else if evicted_within {
        "readdir, stat, FIEMAP, eviction included"
    } else {
        "readdir, stat, FIEMAP included"
    };
    let state = cell.state.kind;
    let figure = |v: f64, decimals: usize| figure(cell, v, decimals);
    if state != CellStateKind::Complete {
        let _ = writeln!(
            out,
            "NOT COMPLETE: {}: {}",
            cell.state.describe(),
            if state == CellStateKind::Failed {
                "no client finished the walk, it has no figure"
            } else {
                "the figures marked * are of the clients that finished"
            }
        );
    }
    if state == CellStateKind::Failed {
        let _ = writeln!(out, "rate: failed");
    } else if clients > 1 {
        let _ = writeln!(
            out,
            "rate: {} MiB/min ({} MiB/s, {} files/s), the sum of the {clients} clients' own rates (each its \
             bytes over its open + read + close time)",
            figure(r.mib_per_min, 1),
            figure(r.mib_per_sec, 2),
            figure(r.files_per_sec, 1)
        );
        let _ = writeln!(
            out,
            "overall: {} MiB/min, all bytes over the {} s from the common start to the last client's end",
            figure(figures(cell).map_or(0.0, |f| f.mib_per_min_overall), 1),
            secs(r.wall_ns)
        );
        let _ = writeln!(
            out,
            "walk: {} s from the common start to the last client's end ({included}){before}, CPU {}% (all \
             clients)",
            secs(r.wall_ns),
            human::fixed(r.cpu_percent, 0)
        );
    } else {
        let _ = writeln!(
            out,
            "rate: {} MiB/min ({} MiB/s, {} files/s) over {} s of open + read + close",
            figure(r.mib_per_min, 1),
            figure(r.mib_per_sec, 2),
            figure(r.files_per_sec, 1),
            secs(r.read_ns)
        );
        let _ = writeln!(
            out,
            "walk: {} s elapsed in all ({included}){before}, CPU {}%",
            secs(r.wall_ns),
            human::fixed(r.cpu_percent, 0)
        );
    }
    out
}

/// What a cold walk's drop left cached (counted before the reads), and what that means for the
/// rate; nothing for a warm walk or one stored before it was counted.
fn cached_after_drop(r: &BackupResult) -> String {
    let mut out = String::new();
    let Some(held) = r.cached_at_start.filter(|_| r.cold) else { return out };
    if held.stayed() {
        let _ = writeln!(
            out,
            "after the drop: {} stayed cached (counted with mincore before the reads): pages another \
             process maps or has locked cannot be dropped by POSIX_FADV_DONTNEED, so that part of the rate is \
             the page cache's, not the storage's",
            held.describe()
        );
    } else {
        let _ =
            writeln!(out, "after the drop: {} still cached (counted with mincore before the reads)", held.describe());
    }
    if r.cache_uncounted > 0 {
        let _ = writeln!(
            out,
            "note: the cached pages of {} files were not counted: the kernel counts them only for the file's \
             owner or a process that may write it",
            r.cache_uncounted
        );
    }
    out
}

/// What the reader should know about how the walk went, and what it passed by.
fn notes_text(run: &StoredRun, r: &BackupResult, fs_type: &str) -> String {
    let mut out = String::new();
    if r.cold && matches!(fs_type, "tmpfs" | "ramfs") {
        let _ = writeln!(out, "note: on {fs_type} the page cache is the storage: cold reads are memory reads");
    }
    if r.cold && r.evict_failures > 0 {
        let _ = writeln!(out, "note: cached pages could not be dropped for {} files", r.evict_failures);
    }
    out.push_str(&cached_after_drop(r));
    // A tree on a server: what its walk cannot do as a local one does.
    for note in run.records().conditions["remote_walk"].as_array().into_iter().flatten().filter_map(Value::as_str) {
        let _ = writeln!(out, "note: {note}");
    }
    if r.noatime_refused > 0 {
        let _ = writeln!(
            out,
            "note: {} files were not ours to open with O_NOATIME: their access time may have changed",
            r.noatime_refused
        );
    }
    let s = &r.skipped;
    let mut other = Vec::new();
    for (n, what) in [
        (r.directories, "folders"),
        (s.symlinks, "symlinks (not followed)"),
        (s.fifos + s.sockets + s.devices + s.other, "FIFOs, sockets and devices (not opened)"),
        (r.hard_links, "further names of files already read (hard links)"),
        (r.mount_points, "mount points (not entered)"),
    ] {
        if n > 0 {
            other.push(format!("{what} {n}"));
        }
    }
    if !other.is_empty() {
        let _ = writeln!(out, "also: {}", other.join(", "));
    }
    out
}

/// Time by file size class: files, bytes, time and its share, rate, extents.
fn classes_text(cell: &CellRow, r: &BackupResult, clients: usize) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "\nTime by file size (bytes; [a, b) holds sizes from a to b - 1){}",
        if clients > 1 { "; all clients' files, times summed" } else { "" }
    );
    let mut table = Table::new(vec![
        Column::right("size", 22),
        Column::right("files", 9),
        Column::right("bytes", 11),
        Column::right("time s", 10),
        Column::right("time %", 7),
        Column::right("MiB/s", 10),
        Column::right("extents", 9),
    ]);
    for c in &r.classes {
        let size = if c.class == 0 {
            "0".to_string()
        } else {
            format!("[{}, {})", ByteSize(c.min), ByteSize(c.max.saturating_add(1)))
        };
        let share = if r.read_ns == 0 { 0.0 } else { c.read_ns as f64 * 100.0 / r.read_ns as f64 };
        table.row([
            size,
            c.files.to_string(),
            human::bytes(c.bytes),
            secs(c.read_ns),
            format!("{}%", human::fixed(share, 1)),
            figure(cell, c.mib_per_sec, 2),
            c.extents.to_string(),
        ]);
    }
    out + &table.render()
}

/// How the shared clients table shows a backup walk: its name and each client's MiB/min.
pub const CLIENT_COLUMNS: iomatrix_report::text::clients::ClientColumns =
    iomatrix_report::text::clients::ClientColumns {
        unit: "MiB/min",
        describe: |_| "backup walk".into(),
        aggregates: |c| {
            figures(c).map_or((0.0, 0.0, None), |f| (f.mib_per_min_sum_of_clients, f.mib_per_min_overall, None))
        },
        client_rate: |f| f["mib_per_min"].as_f64(),
        kib_per_unit: 1024.0 / 60.0,
    };

/// A stored backup walk's figures; None for a row that does not hold them.
fn figures(c: &CellRow) -> Option<BackupCellFigures> {
    BackupCellFigures::deserialize(&c.metrics).ok()
}

/// With more than one client (or a failed one): each client's own walk,
/// then the aggregates side by side and the failures.
fn clients_text(run: &StoredRun, cell: &CellRow) -> String {
    let figures = cell.client_figures.as_array().map(Vec::as_slice).unwrap_or_default();
    let failed = cell.figures().failed_clients.len();
    if figures.len() < 2 && failed == 0 {
        return String::new();
    }
    let mut out = String::from(
        "\nEach client's walk (MiB/min: its bytes over its own open + read + close time; walk: from the common start)\n",
    );
    let mut table = Table::new(vec![
        Column::right("client", 6),
        Column::right("files", 9),
        Column::right("bytes", 11),
        Column::right("read s", 10),
        Column::right("walk s", 10),
        Column::right("MiB/min", 12),
        Column::right("errors", 8),
        Column::right("extents", 9),
        Column::free("tree").gap("  "),
    ]);
    let n = |f: &Value, key: &str| f[key].as_u64().unwrap_or(0);
    for f in figures {
        let extents = &f["extents"];
        let mapped = if extents["files"].as_u64().unwrap_or(0) == 0 && n(extents, "files_without_fiemap") > 0 {
            "no FIEMAP".to_string()
        } else {
            n(extents, "total_extents").to_string()
        };
        table.row([
            n(f, "rank").to_string(),
            n(f, "files").to_string(),
            human::bytes(n(f, "bytes")),
            secs(n(f, "read_ns")),
            secs(n(f, "wall_ns")),
            human::fixed(f["mib_per_min"].as_f64().unwrap_or(0.0), 1),
            n(&f["errors"], "total").to_string(),
            mapped,
            f["root"].as_str().unwrap_or("?").to_string(),
        ]);
    }
    out.push_str(&table.render());
    out.push_str(&iomatrix_report::text::clients::table(run, &CLIENT_COLUMNS));
    out
}
