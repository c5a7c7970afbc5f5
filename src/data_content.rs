//! `--verify` and `--compressible`: what written data holds, the run's
//! conditions that say so, and the exit code when blocks came back wrong.

use crate::cli::DataArgs;
use iomatrix_verify::{new_run_stamp, ContentSpec, Tally, UNIT};
use serde_json::{json, Value};

/// The run exited normally but read back blocks that were not what it wrote.
pub const EXIT_DATA_MISMATCHES: u8 = 4;

impl DataArgs {
    /// The content spec of a new run, with a fresh random run stamp.
    pub fn content(&self) -> ContentSpec {
        let content = ContentSpec {
            run: 0,
            verify: self.verify,
            compressible: self.compressible.unwrap_or(0),
            unique_blocks: self.compressible.is_some(),
        };
        ContentSpec { run: if content.stamped() { new_run_stamp() } else { 0 }, ..content }
    }
}

/// The conditions a reader needs: whether data was checked, how, and what
/// it cost; how compressible and dedupable the written data is.
pub fn conditions(content: &ContentSpec) -> Value {
    let data = if content.stamped() {
        format!(
            "{UNIT}-byte stamped blocks, unique per block and write (not dedupable), {}% zeros per block",
            content.compressible
        )
    } else {
        "one pseudo-random buffer reused by every write: incompressible, but dedupable".to_string()
    };
    let mut c = json!({ "data": data, "compressible_pct": content.compressible, "verify": content.verify });
    if content.verify {
        c["verify_run_stamp"] = json!(format!("{:016x}", content.run));
        c["verify_timing"] = json!(
            "stamping and checking run between the requests, inside the timed pass; each cell's verify_ns is their cost"
        );
    } else if content.stamped() {
        c["verify_timing"] = json!("stamping runs between the requests, inside the timed pass (verify_ns)");
    }
    c
}

/// Mismatches over a run's stored cells (their `metrics.verify`).
pub fn mismatches(cells: &[iomatrix_store::CellRow]) -> u64 {
    cells
        .iter()
        .filter_map(|c| c.metrics.get("verify"))
        .filter_map(|v| serde_json::from_value::<Tally>(v.clone()).ok())
        .map(|t| t.mismatches())
        .sum()
}

/// The cells' verification tallies as a table, and the first examples of
/// mismatches; empty for a run that did not verify.
pub fn report(run: &iomatrix_store::StoredRun) -> String {
    use std::fmt::Write;
    if run.conditions["verify"] != true {
        return String::new();
    }
    let mut out = String::from(
        "\nVerification (4k blocks read back and checked; unchecked: read while a write to them was in flight):\n",
    );
    let _ = writeln!(
        out,
        "{:<44} {:>10} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10}",
        "cell", "checked", "wrong data", "wrong offset", "stale", "torn", "unchecked", "verify ms"
    );
    let mut examples = Vec::new();
    for c in &run.cell_results {
        let Ok(t) = serde_json::from_value::<Tally>(c.metrics["verify"].clone()) else { continue };
        let cell = describe(c);
        let _ = writeln!(
            out,
            "{cell:<44} {:>10} {:>10} {:>12} {:>8} {:>8} {:>10} {:>10.1}",
            t.checked_blocks,
            t.wrong_data,
            t.wrong_offset,
            t.stale,
            t.torn,
            t.unchecked_blocks,
            t.verify_ns as f64 / 1e6
        );
        examples.extend(t.examples.iter().map(|e| (cell.clone(), e.clone())));
    }
    for (cell, e) in examples.iter().take(iomatrix_verify::MAX_EXAMPLES) {
        let found = if e.found.is_empty() { String::new() } else { format!(" (block holds {})", e.found) };
        let _ = writeln!(out, "{cell}: {} at offset {} of file {}{found}", e.kind.name(), e.offset, e.file);
    }
    out
}

fn describe(c: &iomatrix_store::CellRow) -> String {
    let size = |v: Option<u64>| v.map(|b| format!(" {}", iomatrix_core::ByteSize(b))).unwrap_or_default();
    let mut cell = format!("{}{}{}", c.test, size(c.file_size), size(c.record_size));
    // An access spec is named by its mix too.
    if let (Some(read), Some(random), Some(qd)) =
        (c.metrics["read_percent"].as_u64(), c.metrics["random_percent"].as_u64(), c.metrics["queue_depth"].as_u64())
    {
        cell += &format!(" read {read}% random {random}% qd {qd}");
    }
    cell
}
