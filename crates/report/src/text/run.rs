//! A stored run as text (the header, its conditions, the cells that are not whole, then the
//! suite's tables, verification and noise) and as JSON: what `show` prints and a run prints at
//! its end.

use super::{imported, verify};
use crate::table::{Column, Table};
use iomatrix_core::human;
use iomatrix_core::text::printable;
use iomatrix_store::reader::{ConditionLine, LineAfter, StoredConditions, StoredEnvironment};
use iomatrix_store::{CellStateKind, StoredRun};
use serde_json::{json, Value};
use std::fmt::Write;

/// Version of the run document; see docs/json.md.
pub const RUN_SCHEMA: &str = "iomatrix.run/1";

/// A stored run as the run document (`show --json`): the schema's version and the run.
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
    if let Some(origin) = run.origin_facts() {
        let _ = writeln!(
            out,
            "merged from: {} (run #{} there)",
            origin.file.as_deref().unwrap_or("?"),
            origin.run_id.map_or("?".into(), |id| id.to_string())
        );
    }
    for (key, value) in condition_pairs(run) {
        let _ = writeln!(out, "{key}: {value}");
    }
    out.push_str(&super::hosts::hosts_text(&run.environment_facts()));
    if !s.labels.is_empty() {
        let labels: Vec<String> = s.labels.iter().map(|(k, v)| format!("{}={}", printable(k), printable(v))).collect();
        let _ = writeln!(out, "labels: {}", labels.join(" "));
    }
    let _ = writeln!(out, "cells: {} of {}", s.cells, s.total_cells);
    out.push_str(&cell_states(run));
    if let Some(error) = &s.error {
        let _ = writeln!(out, "error: {}", printable(error));
    }
    if let Some(lost) = run.lost_facts() {
        let _ = writeln!(
            out,
            "lost: {} of {} cells not stored; {} client figure(s) lost to failures{}",
            lost.cells_not_stored.json(),
            lost.cells_planned.json(),
            lost.client_cells_failed.json(),
            lost.failed
                .into_iter()
                .flatten()
                .map(|c| format!(" [{}: {} client(s) failed]", c.cell.text().unwrap_or("?"), c.clients_failed.json()))
                .collect::<String>()
        );
    }
    out.push_str(tables);
    // Said under every table of CPU figures: what 100% is, and the ceiling on this machine.
    if tables.contains("CPU") || tables.contains("%CP") {
        out.push('\n');
        out.push_str(&match run.conditions_facts().imported {
            Some(from) => super::summary::imported_cpu_meaning(from.tool.as_deref().unwrap_or("?")),
            None => super::summary::cpu_meaning(run.environment_facts().cpu_count.whole()),
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
    let mix = run.suite_facts().size_mix;
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
    let flagged = flagged_lines(&group.flagged);
    if stats.is_empty() {
        return flagged;
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
        let name = key.describe();
        let mut marks: Vec<&str> = group.flagged.iter().filter(|f| f.cell == name).map(|f| f.mark()).collect();
        marks.dedup();
        let marks = if marks.is_empty() { String::new() } else { format!(" {}", marks.concat()) };
        table.row([
            format!("{name} ({}){marks}", s.unit),
            s.values.len().to_string(),
            human::fixed(s.median, 0),
            human::fixed(s.min, 0),
            human::fixed(s.max, 0),
            format!("{}%", human::fixed(s.spread_pct, 1)),
        ]);
    }
    out.push_str(&table.render());
    out.push_str(&flagged);
    out
}

/// The run's flagged samples (outliers among their repeats, descheduled cells), each named with
/// why, under the heading that says what their marks mean; nothing where none is.
fn flagged_lines(flagged: &[iomatrix_analysis::Flagged]) -> String {
    if flagged.is_empty() {
        return String::new();
    }
    let mut out = String::from(super::compare::FLAGGED_HEADING);
    for f in flagged {
        let _ = writeln!(out, "  {} {}: {}", f.mark(), f.cell, f.describe());
    }
    out
}

/// The conditions every figure depends on, as (name, value) lines.
pub fn condition_pairs(run: &StoredRun) -> Vec<(String, String)> {
    let c = run.conditions_facts();
    let e = run.environment_facts();
    let target = target_line(&c, &e);
    let mut pairs = vec![
        ("target".to_string(), target),
        ("backend".into(), c.backend.shown()),
        ("cache".into(), c.cache.shown()),
        ("clients".into(), c.clients.shown()),
        (
            "file size vs RAM".into(),
            format!(
                "{} (largest file {}, RAM {})",
                c.files_vs_ram.shown(),
                human::bytes(c.largest_file_bytes.unwrap_or(0)),
                human::bytes(c.ram_bytes.unwrap_or(0))
            ),
        ),
        (
            "machine".into(),
            format!("{}, {} CPUs, kernel {}", e.cpu_model.shown(), e.cpu_count.shown(), e.kernel.shown()),
        ),
    ];
    // A suite that cannot know its file sizes beforehand (backup) stores files_vs_ram as null.
    pairs.retain(|(key, _)| key != "file size vs RAM" || !c.files_vs_ram.is_null());
    // How the files were prepared, so what the page cache held of them at each cell's start
    // (runs stored before it was said have no line).
    if let Some(prepared) = &c.prepare {
        pairs.insert(3, ("prepared".into(), prepared.clone()));
    }
    let own = run.suite_facts().condition_lines;
    let after_clients = pairs.iter().position(|(key, _)| key == "clients").map_or(pairs.len(), |i| i + 1);
    for (i, (name, shown)) in suite_lines(&own, LineAfter::Clients).enumerate() {
        pairs.insert(after_clients + i, (name, shown));
    }
    if let Some(timing) = &c.timing {
        pairs.push(("timing".into(), timing.clone()));
    }
    pairs.extend(suite_lines(&own, LineAfter::Timing));
    if let Some(dev) = e.target.as_ref().and_then(|t| t.block_device.as_ref()) {
        pairs.push((
            "block device".into(),
            format!(
                "{}{}",
                if dev.name.is_present() { dev.name.shown() } else { String::new() },
                dev.alignment_bytes.map(|a| format!(", partition aligned to {}", human::bytes(a))).unwrap_or_default()
            ),
        ));
    }
    pairs.extend(suite_lines(&own, LineAfter::BlockDevice));
    if c.backend.text() == Some("io_uring") {
        // How the requests went in and how their completions were taken: both change the figures.
        for (key, how) in [("submissions", &c.submissions), ("completions", &c.completions)] {
            if let Some(how) = how {
                pairs.push((key.into(), how.clone()));
            }
        }
    }
    pairs.extend(suite_lines(&own, LineAfter::Backend));
    if let Some(data) = &c.data {
        pairs.push(("data".into(), data.clone()));
    }
    if c.verify.is_true() {
        // A suite that checks only some of its reads (bonnie) says which.
        let checked = c.verify_scope.as_deref().unwrap_or("every block read is checked");
        pairs.push(("verify".into(), format!("{checked}; {}", c.verify_timing.shown())));
    }
    // Runs stored before the generator was named show no line (it was iomatrix's own then).
    if let Some(generator) = &c.generator {
        pairs.push(("random generator".into(), generator.clone()));
    }
    // Runs stored before the machine's load was recorded show no line.
    if let Some(machine) = run.machine_summary() {
        pairs.push(("machine load".into(), machine.shown()));
    }
    imported::adjust_pairs(run, &mut pairs);
    pairs
}

/// The target line: the server and how it was reached, a raw device and its size, or the
/// folder's file system, mount and options.
fn target_line(c: &StoredConditions, e: &StoredEnvironment) -> String {
    let target = e.target.clone().unwrap_or_default();
    if let Some(remote) = &c.remote {
        let mut how = format!("{} {} at {}", remote.protocol.shown(), remote.version.shown(), remote.server.shown());
        if let Some(port) = remote.nfs_port {
            how += &format!(", NFS port {port}");
        }
        if let Some(share) = &remote.share {
            how += &format!(", share {share} as {}", remote.user.shown());
        }
        let size = |bytes: Option<u64>| human::bytes(bytes.unwrap_or(0));
        how += &format!("; reads up to {}, writes up to {}", size(remote.read_max_bytes), size(remote.write_max_bytes));
        if let Some(stability) = &remote.write_stability {
            how += &format!("; {stability}");
        }
        if let Some(limits) = &remote.known_limits {
            how += &format!("; NOTE: {limits}");
        }
        format!("{} ({how})", c.target.shown())
    } else if c.fs_type.text() == Some(iomatrix_environment::RAW_DEVICE) {
        format!("{} (raw block device, {})", c.target.shown(), human::bytes(target.total_bytes.unwrap_or(0)))
    } else {
        format!(
            "{} ({} on {}; {})",
            c.target.shown(),
            c.fs_type.shown(),
            c.mount_source.shown(),
            target.mount_options.shown()
        )
    }
}

/// The lines a suite's own conditions place after `after`, in the suite's order.
fn suite_lines(own: &[ConditionLine], after: LineAfter) -> impl Iterator<Item = (String, String)> + '_ {
    own.iter().filter(move |l| l.after == after).map(|l| (l.name.clone(), l.shown.clone()))
}
