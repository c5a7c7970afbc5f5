//! A stored run as text (the header, its conditions, the cells that are not whole, then the
//! suite's tables, verification and noise) and as JSON: what `show` prints and a run prints at
//! its end.

use super::{imported, verify};
use crate::table::{Column, Table};
use iomatrix_core::human;
use iomatrix_core::text::printable;
use iomatrix_store::{CellStateKind, StoredRun};
use serde_json::{json, Value};
use std::fmt::Write;

/// Version of the run document; see docs/json.md.
pub const RUN_SCHEMA: &str = "iomatrix.run/1";

pub fn run_json(run: &StoredRun) -> Value {
    json!({ "schema": RUN_SCHEMA, "run": run })
}

/// A stored run as text: its header, the suite's `tables`, then what every
/// suite may add (verification, noise).
pub fn run_text(run: &StoredRun, tables: &str) -> String {
    let s = &run.summary;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "run #{}  {}  {}  started {}{}  on {}",
        s.id,
        s.suite,
        s.status.as_str(),
        s.started_at,
        s.ended_at.as_deref().map(|e| format!(", ended {e}")).unwrap_or_default(),
        printable(&s.host)
    );
    let _ = writeln!(out, "command: {}", printable(&s.command_line));
    if let Some(origin) = &run.origin {
        let _ = writeln!(
            out,
            "merged from: {} (run #{} there)",
            origin["file"].as_str().unwrap_or("?"),
            origin["run_id"].as_i64().map_or("?".into(), |id| id.to_string())
        );
    }
    for (key, value) in condition_pairs(run) {
        let _ = writeln!(out, "{key}: {value}");
    }
    out.push_str(&super::hosts::hosts_text(&run.environment));
    if !s.labels.is_empty() {
        let labels: Vec<String> = s.labels.iter().map(|(k, v)| format!("{}={}", printable(k), printable(v))).collect();
        let _ = writeln!(out, "labels: {}", labels.join(" "));
    }
    let _ = writeln!(out, "cells: {} of {}", s.cells, s.total_cells);
    out.push_str(&cell_states(run));
    if let Some(error) = &s.error {
        let _ = writeln!(out, "error: {}", printable(error));
    }
    if let Some(lost) = &run.lost {
        let _ = writeln!(
            out,
            "lost: {} of {} cells not stored; {} client figure(s) lost to failures{}",
            lost["cells_not_stored"],
            lost["cells_planned"],
            lost["client_cells_failed"],
            lost["failed"]
                .as_array()
                .into_iter()
                .flatten()
                .map(|c| format!(" [{}: {} client(s) failed]", c["cell"].as_str().unwrap_or("?"), c["clients_failed"]))
                .collect::<String>()
        );
    }
    out.push_str(tables);
    // Said under every table of CPU figures: what 100% is, and the ceiling on this machine.
    if tables.contains("CPU") || tables.contains("%CP") {
        out.push('\n');
        out.push_str(&match imported::source(run) {
            Some(from) => super::summary::imported_cpu_meaning(from.get("tool").and_then(Value::as_str).unwrap_or("?")),
            None => super::summary::cpu_meaning(run.environment["cpu_count"].as_u64()),
        });
    }
    out.push_str(&verify::report(run));
    out.push_str(&noise(run));
    out
}

/// The cells that are not whole, each with its state: their figures measured less than their
/// plan (partial) or nothing of it (failed), so they stand apart from the others.
fn cell_states(run: &StoredRun) -> String {
    let mut out = disturbed_states(run);
    let lines = not_complete_lines(run);
    if lines.is_empty() {
        return out;
    }
    let _ = writeln!(
        out,
        "NOT COMPLETE: {} cell(s) where clients or connections failed; their figures are not whole, and compare, \
         sweep and report leave them out unless --include-partial (failed ones always):",
        lines.len()
    );
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// The cells that did not run for their time, each with its cause: their figures are shown,
/// marked, but are not figures of the storage.
fn disturbed_states(run: &StoredRun) -> String {
    let lines = cell_lines(run, |c| c.state.kind == CellStateKind::Disturbed);
    if lines.is_empty() {
        return String::new();
    }
    let mut out = format!(
        "DISTURBED: {} cell(s) did not run for their time; their figures (marked ~) are not figures of the \
         storage, and compare, sweep and report leave them out unless --include-disturbed:\n",
        lines.len()
    );
    for line in lines {
        let _ = writeln!(out, "  {line}");
    }
    out
}

/// Each cell that is not whole, with its state: "cell 1 read 256k/64k: partial: 1 of 2 clients".
pub fn not_complete_lines(run: &StoredRun) -> Vec<String> {
    cell_lines(run, |c| c.state.kind == CellStateKind::Failed || c.state.is_partial())
}

/// Each cell `which` picks, with its state.
fn cell_lines(run: &StoredRun, which: impl Fn(&iomatrix_store::CellRow) -> bool) -> Vec<String> {
    let mix = iomatrix_analysis::size_mix(&run.plan);
    run.cell_results
        .iter()
        .filter(|c| which(c))
        .map(|c| {
            let key = iomatrix_analysis::CellKey::of(c).named_by_mix(mix.as_deref());
            format!("cell {} {}: {}", c.seq, key.describe(), printable(&c.state.describe()))
        })
        .collect()
}

/// With several samples of a cell (`--repeat`, `--tolerance`, Bonnie's
/// repeats): how far they spread, noisiest first. Tables, compare and
/// reports use each cell's median.
fn noise(run: &StoredRun) -> String {
    // Only the cells' samples are read here, which no suite's shape changes (it lays cells out as
    // matrices and summarises latencies).
    let group = iomatrix_analysis::Group::of("", std::slice::from_ref(run), iomatrix_analysis::SuiteShape::PLAIN);
    let mut stats: Vec<_> = group.cells.iter().filter(|(_, s)| s.values.len() > 1).collect();
    if stats.is_empty() {
        return String::new();
    }
    stats.sort_by(|a, b| b.1.spread_pct.total_cmp(&a.1.spread_pct));
    let counts: Vec<usize> = stats.iter().map(|(_, s)| s.values.len()).collect();
    let mut out = format!(
        "\nNoise: {} to {} samples per repeated cell; medians are what compare and reports use. Spread = the \
         sample furthest from the median, in % of it. Noisiest cells:\n",
        counts.iter().min().unwrap_or(&0),
        counts.iter().max().unwrap_or(&0)
    );
    let mut table = Table::new(vec![
        Column::left("cell", 44),
        Column::right("samples", 8),
        Column::right("median", 14),
        Column::right("min", 14),
        Column::right("max", 14),
        Column::right("spread", 8),
    ]);
    for (key, s) in stats.iter().take(10) {
        table.row([
            format!("{} ({})", key.describe(), s.unit),
            s.values.len().to_string(),
            human::fixed(s.median, 0),
            human::fixed(s.min, 0),
            human::fixed(s.max, 0),
            format!("{}%", human::fixed(s.spread_pct, 1)),
        ]);
    }
    out.push_str(&table.render());
    out
}

/// The conditions every figure depends on, as (name, value) lines.
pub fn condition_pairs(run: &StoredRun) -> Vec<(String, String)> {
    let c = &run.conditions;
    let e = &run.environment;
    let target = target(c, e);
    let mut pairs = vec![
        ("target".to_string(), target),
        ("backend".into(), text(&c["backend"])),
        ("cache".into(), text(&c["cache"])),
        ("clients".into(), text(&c["clients"])),
        (
            "file size vs RAM".into(),
            format!(
                "{} (largest file {}, RAM {})",
                text(&c["files_vs_ram"]),
                human::bytes(c["largest_file_bytes"].as_u64().unwrap_or(0)),
                human::bytes(c["ram_bytes"].as_u64().unwrap_or(0))
            ),
        ),
        (
            "machine".into(),
            format!("{}, {} CPUs, kernel {}", text(&e["cpu_model"]), text(&e["cpu_count"]), text(&e["kernel"])),
        ),
    ];
    // A suite that cannot know its file sizes beforehand (backup) stores files_vs_ram as null.
    pairs.retain(|(key, _)| key != "file size vs RAM" || !c["files_vs_ram"].is_null());
    // How the files were prepared, so what the page cache held of them at each cell's start
    // (runs stored before it was said have no line).
    if let Some(prepared) = c["prepare"].as_str() {
        pairs.insert(3, ("prepared".into(), prepared.to_string()));
    }
    // Where the clients' threads ran (runs stored before it was said have no line).
    if let Some(pin) = c["pin"].as_str() {
        let after_clients = pairs.iter().position(|(key, _)| key == "clients").map_or(pairs.len(), |i| i + 1);
        pairs.insert(after_clients, ("placement".into(), pin.to_string()));
    }
    if let Some(timing) = c["timing"].as_str() {
        pairs.push(("timing".into(), timing.to_string()));
    }
    if !c["fsync_timed"].is_null() {
        pairs.push((
            "timing".into(),
            format!(
                "fsync {}, close {}",
                if c["fsync_timed"] == true { "included" } else { "excluded" },
                if c["close_timed"] == true { "included" } else { "excluded" }
            ),
        ));
    }
    if let Some(dev) = e["target"]["block_device"].as_object() {
        let align = dev.get("alignment_bytes").and_then(Value::as_u64);
        pairs.push((
            "block device".into(),
            format!(
                "{}{}",
                dev.get("name").map(text).unwrap_or_default(),
                align.map(|a| format!(", partition aligned to {}", human::bytes(a))).unwrap_or_default()
            ),
        ));
    }
    if let Some(per_char) = c["per_char"].as_str() {
        pairs.push(("per-char".into(), per_char.to_string()));
    }
    if let Some(user) = c["io_user"].as_str() {
        pairs.push(("I/O as".into(), user.to_string()));
    }
    if c["backend"] == "io_uring" {
        // How the requests went in and how their completions were taken: both change the figures.
        for key in ["submissions", "completions"] {
            if let Some(how) = c[key].as_str() {
                pairs.push((key.into(), how.to_string()));
            }
        }
    }
    // Access specs' warm-up and skewed offsets (`--ramp`, `--distribution`): absent when not asked for.
    for key in ["ramp", "distribution"] {
        if let Some(how) = c[key].as_str() {
            pairs.push((key.into(), how.to_string()));
        }
    }
    if let Some(data) = c["data"].as_str() {
        pairs.push(("data".into(), data.to_string()));
    }
    if c["verify"] == true {
        // A suite that checks only some of its reads (bonnie) says which.
        let checked = c["verify_scope"].as_str().unwrap_or("every block read is checked");
        pairs.push(("verify".into(), format!("{checked}; {}", text(&c["verify_timing"]))));
    }
    // Runs stored before the generator was named show no line (it was iomatrix's own then).
    if let Some(generator) = c["generator"].as_str() {
        pairs.push(("random generator".into(), generator.to_string()));
    }
    imported::adjust_pairs(run, &mut pairs);
    pairs
}

/// A stored condition as text: a string as it is, null as unknown.
fn text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "unknown".into(),
        other => other.to_string(),
    }
}

/// The target line of conditions `c` in environment `e`: the server and how it is reached, the
/// raw device, or the file system, its device and mount options.
fn target(c: &Value, e: &Value) -> String {
    let remote = &c["remote"];
    if remote.is_object() {
        let mut how =
            format!("{} {} at {}", text(&remote["protocol"]), text(&remote["version"]), text(&remote["server"]));
        if let Some(port) = remote["nfs_port"].as_u64() {
            how += &format!(", NFS port {port}");
        }
        if let Some(share) = remote["share"].as_str() {
            how += &format!(", share {share} as {}", text(&remote["user"]));
        }
        let size = |key: &str| human::bytes(remote[key].as_u64().unwrap_or(0));
        how += &format!("; reads up to {}, writes up to {}", size("read_max_bytes"), size("write_max_bytes"));
        if let Some(stability) = remote["write_stability"].as_str() {
            how += &format!("; {stability}");
        }
        if let Some(limits) = remote["known_limits"].as_str() {
            how += &format!("; NOTE: {limits}");
        }
        format!("{} ({how})", text(&c["target"]))
    } else if c["fs_type"] == iomatrix_environment::RAW_DEVICE {
        format!(
            "{} (raw block device, {})",
            text(&c["target"]),
            human::bytes(e["target"]["total_bytes"].as_u64().unwrap_or(0))
        )
    } else {
        format!(
            "{} ({} on {}; {})",
            text(&c["target"]),
            text(&c["fs_type"]),
            text(&c["mount_source"]),
            text(&e["target"]["mount_options"])
        )
    }
}
