//! `--verify` and `--compressible`: what written data holds, the run's
//! conditions that say so, and the exit code when blocks came back wrong.

use clap::Args;
use iomatrix_verify::{new_run_stamp, ContentSpec, UNIT};
use serde_json::{json, Value};

/// What written data holds (`--verify`, `--compressible`).
#[derive(Args, Debug, Default)]
#[command(next_help_heading = "Data")]
pub struct DataArgs {
    /// Write 4k blocks stamped with this run, the file, the offset, the write and a
    /// CRC-32, and check every block read back: mismatches are counted per cell as wrong
    /// data, wrong offset, stale (an earlier run or write) or torn, and the run exits 4.
    /// Stamping and checking happen between the requests, inside the timed pass (each
    /// cell stores its cost as verify_ns). Records must be 4k or a multiple. `run iozone`,
    /// `run access` (files only; the file is laid out as generation 1; a read that
    /// overlapped a write in flight is counted unchecked), `run fileserver` (a file's
    /// last partial 4k block is not stamped), `run personality` (file sizes and appends rounded
    /// up to whole 4k blocks), `run bonnie` (block write stamps, rewrite
    /// checks and restamps as the next write instead of bonnie++'s one-byte change, block
    /// read checks; putc writes stamped blocks but getc and the seek test are not checked;
    /// the chunk must be 4k or a multiple), `iomatrix iozone --verify` and `iomatrix bonnie --verify`
    #[arg(long)]
    pub verify: bool,

    /// PCT % of each written 4k block is zeros, the rest random and unique per block, so
    /// compressing storage saves about PCT % [default: 0, incompressible]. Records must
    /// be 4k or a multiple. `run iozone`, `run access`, `run fileserver`, `run bonnie`
    /// (putc, block write and rewrite; the seek test writes back what it read, one byte
    /// changed), `iomatrix iozone` and `iomatrix bonnie` (--compressible PCT)
    #[arg(long, value_name = "PCT")]
    pub compressible: Option<u8>,
}

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
    cells.iter().filter_map(|c| c.figures().verify).map(|t| t.mismatches()).sum()
}

/// Adds `conditions(content)` to a suite's conditions (an object).
pub fn add_conditions(conditions: &mut Value, content: &ContentSpec) {
    if let (Some(all), Value::Object(data)) = (conditions.as_object_mut(), self::conditions(content)) {
        all.extend(data);
    }
}
