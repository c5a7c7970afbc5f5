//! `iomatrix extents DIR`: every regular file's extents through FIEMAP,
//! counted as filefrag counts them; no data read, nothing stored.

use crate::harness::target::existing_tree;
use crate::harness::Target;
use clap::Args;
use iomatrix_backup::ExtentsWalk;
use iomatrix_core::UsageError;
use iomatrix_extents::{flag_names, FiemapError, FileExtents};
use iomatrix_report::table::{Column, Table};
use iomatrix_report::text::extents::{errors_text, summary_text};
use serde_json::{json, Value};
use std::fmt::Write;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct ExtentsArgs {
    /// The tree whose regular files are mapped (symlinks not followed, one file system)
    #[arg(value_name = "DIR", value_parser = Target::parse_tree)]
    pub dir: Target,

    /// Also list every file with its count, in walk order
    #[arg(long)]
    pub per_file: bool,

    /// Write each file's dirty data out before mapping it (FIEMAP_FLAG_SYNC, filefrag -s)
    #[arg(long)]
    pub sync: bool,

    /// Machine-readable output (schema: docs/json.md, "iomatrix.extents/1")
    #[arg(long)]
    pub json: bool,
}

/// Version of the JSON document; see docs/json.md.
pub const EXTENTS_SCHEMA: &str = "iomatrix.extents/1";

pub fn run(args: ExtentsArgs) -> anyhow::Result<ExitCode> {
    let root = match &args.dir {
        Target::Tree(dir) => existing_tree(dir, "extents:")?,
        other => {
            let url = other.shown();
            return Err(UsageError::new(format!(
                "extents: {url}: {}; `iomatrix run backup --target {url}` walks and reads such a tree",
                iomatrix_backup::NO_EXTENT_MAP
            ))
            .into());
        }
    };
    let fs_type = iomatrix_environment::capture(&root).map(|e| e.target.fs_type).unwrap_or_else(|_| "unknown".into());
    let stop = crate::harness::signals::install()?;
    let mut files: Vec<Value> = Vec::new();
    let walk = iomatrix_backup::extents_of_tree(&root, args.sync, stop, &mut |path, result| {
        if args.per_file {
            files.push(file_json(path, result));
        }
    })
    .map_err(|e| anyhow::anyhow!(e.0))?;
    let fiemap = if walk.extents.files > 0 {
        json!(true)
    } else if walk.extents.files_without_fiemap > 0 {
        json!(false)
    } else {
        Value::Null
    };
    if args.json {
        let mut doc = json!({
            "schema": EXTENTS_SCHEMA,
            "root": root.display().to_string(),
            "fs_type": fs_type,
            "fiemap": fiemap,
            "sync": args.sync,
            "walk": walk,
        });
        if args.per_file {
            doc["files"] = Value::Array(files);
        }
        crate::out::print(&format!("{}\n", serde_json::to_string_pretty(&doc)?))?;
    } else {
        let mut out = String::new();
        if args.per_file {
            let mut table = Table::new(vec![Column::right("", 8), Column::free("").gap("  ")]).without_header();
            for f in &files {
                let count = match f["extents"].as_u64() {
                    Some(n) => n.to_string(),
                    None if f["no_fiemap"] == true => "-".into(),
                    None => "error".into(),
                };
                table.row([count, f["path"].as_str().unwrap_or("").to_string()]);
            }
            out.push_str(&table.render());
            out.push('\n');
        }
        out.push_str(&text(&root.display().to_string(), &fs_type, args.sync, &walk));
        crate::out::print(&out)?;
    }
    if walk.interrupted {
        eprintln!("iomatrix: interrupted: the figures cover the files mapped before Ctrl-C");
        return Ok(ExitCode::from(crate::harness::signals::exit_code()));
    }
    Ok(ExitCode::SUCCESS)
}

fn file_json(path: &std::path::Path, result: &Result<FileExtents, FiemapError>) -> Value {
    let path = path.display().to_string();
    match result {
        Ok(f) => json!({
            "path": path,
            "extents": f.extents,
            "fiemap_extents": f.fiemap_extents,
            "unwritten_extents": f.unwritten_extents,
            "flags": flag_names(f.flags),
        }),
        Err(e) => json!({ "path": path, "no_fiemap": e.is_not_supported(), "error": e.to_string() }),
    }
}

/// The summary as text; also used by the backup report.
pub fn text(root: &str, fs_type: &str, sync: bool, walk: &ExtentsWalk) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "extents of {root} ({fs_type}): {} regular files, counted as filefrag counts them{}",
        walk.files,
        if sync { " (FIEMAP_FLAG_SYNC: dirty data written out first)" } else { "" }
    );
    out.push_str(&summary_text(fs_type, &walk.extents));
    let mut other = Vec::new();
    let s = &walk.skipped;
    for (n, what) in [
        (walk.directories, "folders"),
        (s.symlinks, "symlinks (not followed)"),
        (s.fifos + s.sockets + s.devices + s.other, "FIFOs, sockets and devices (not opened)"),
        (walk.hard_links, "further names of files already mapped (hard links)"),
        (walk.mount_points, "mount points (not entered)"),
    ] {
        if n > 0 {
            other.push(format!("{what} {n}"));
        }
    }
    if !other.is_empty() {
        let _ = writeln!(out, "also: {}", other.join(", "));
    }
    out.push_str(&errors_text(&walk.errors));
    if walk.interrupted {
        out.push_str("interrupted: the figures cover the files mapped before Ctrl-C\n");
    }
    out
}
