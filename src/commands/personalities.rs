//! `iomatrix personalities list|show NAME`: the built-in workload
//! personalities, and what a personality (built-in or file) runs.

use clap::{Args, Subcommand};
use iomatrix_personality::cli::args::load;
use iomatrix_personality::schema::{Amount, FlowOrder, PhaseEnd};
use iomatrix_personality::{builtin, Personality};
use iomatrix_report::table::{Column, Table};
use std::fmt::Write as _;
use std::process::ExitCode;

#[derive(Args, Debug)]
pub struct PersonalitiesArgs {
    #[command(subcommand)]
    command: PersonalitiesCommand,
}

#[derive(Subcommand, Debug)]
enum PersonalitiesCommand {
    /// The built-in personalities, one line each
    List,
    /// A personality's file (a built-in's TOML text), then what it runs: filesets, phases, flows
    Show {
        /// A built-in's name or a personality file
        #[arg(value_name = "NAME|FILE")]
        name: String,
    },
}

pub fn run(args: PersonalitiesArgs) -> anyhow::Result<ExitCode> {
    let mut out = String::new();
    match args.command {
        PersonalitiesCommand::List => {
            let mut table = Table::new(vec![
                Column::left("name", 14),
                Column::right("connections", 11),
                Column::left("phases", 10),
                Column::free("description"),
            ]);
            for (name, _) in builtin::BUILTIN {
                let p = load(name)?;
                table.row([
                    name.to_string(),
                    p.connections.to_string(),
                    p.phases.iter().map(|p| p.name.as_str()).collect::<Vec<_>>().join(","),
                    p.description.clone(),
                ]);
            }
            out.push_str(&table.render());
            writeln!(
                out,
                "\nrun one: iomatrix run personality NAME --target DIR|URL [--scale small]; see it: iomatrix personalities show NAME"
            )?;
        }
        PersonalitiesCommand::Show { name } => {
            let p = load(&name)?;
            if let Some(text) = builtin::text(&name) {
                writeln!(out, "{}\n", text.trim_end())?;
            }
            out += &describe(&p);
        }
    }
    crate::out::print(&out)?;
    Ok(ExitCode::SUCCESS)
}

/// What a checked personality runs, in words.
pub fn describe(p: &Personality) -> String {
    let buffer = match p.memsize {
        Some(m) => format!(
            ", a {} buffer per connection (memsize: each request at a random place in it)",
            iomatrix_core::ByteSize(m)
        ),
        None => String::new(),
    };
    let mut out = format!(
        "{}: {} connections per client, {} records{buffer}, seed {}\n",
        p.name,
        p.connections,
        iomatrix_core::ByteSize(p.record),
        p.seed
    );
    for f in &p.filesets {
        let _ = writeln!(
            out,
            "  fileset {}: {} files {}, {} per folder, {} folder level(s), {:.0}% made before the first phase, sizes {}",
            f.name,
            f.files,
            if f.shared { "per client, shared by its connections" } else { "per connection" },
            f.width,
            f.depth,
            f.prealloc * 100.0,
            serde_json::to_string(&f.size).unwrap_or_default()
        );
    }
    for ph in &p.phases {
        let end = match ph.end {
            PhaseEnd::Duration { ns } => format!("for {:.1} s", ns as f64 / 1e9),
            PhaseEnd::Iterations { count } => format!("{count} iterations per connection"),
            PhaseEnd::EachFile => {
                let shared = p.filesets[ph.flows[0].fileset].shared;
                match (shared, p.iterations_of(ph, 0), p.iterations_of(ph, p.connections.saturating_sub(1))) {
                    (true, Some(most), Some(fewest)) if most != fewest => format!(
                        "{fewest} or {most} iterations per connection (once per file of the shared fileset, shared out)"
                    ),
                    (true, n, _) => format!(
                        "{} iterations per connection (once per file of the shared fileset, shared out)",
                        n.unwrap_or(0)
                    ),
                    _ => format!("{} iterations per connection (once per file)", p.iterations(ph).unwrap_or(0)),
                }
            }
        };
        let order = match ph.order {
            FlowOrder::Random => "each iteration a flow drawn by weight",
            FlowOrder::InTurn => {
                "the flows in turn, each weight times running (as a filebench thread runs its flowops)"
            }
        };
        let _ = writeln!(out, "  phase {}: {end}; {order}", ph.name);
        for fl in &ph.flows {
            let ops: Vec<String> = fl
                .ops
                .iter()
                .map(|s| match (s.amount, s.close) {
                    (_, true) => format!("{}+close", s.op),
                    (Amount::Whole, _) => format!("{} whole", s.op),
                    (Amount::Bytes(n), _) if n > 0 => format!("{} {}", s.op, iomatrix_core::ByteSize(n)),
                    (Amount::UpTo(n), _) => format!("{} 1..{} (uniform)", s.op, iomatrix_core::ByteSize(n)),
                    _ => s.op.to_string(),
                })
                .collect();
            let how = match fl.rate {
                Some(r) => format!("open loop {r} ops/s per connection"),
                None if fl.think_ns > 0 => format!("closed loop, think {:.1} ms", fl.think_ns as f64 / 1e6),
                None => "closed loop".into(),
            };
            let how = if fl.keep_open { format!("{how}, its file kept open after the first iteration") } else { how };
            let _ = writeln!(
                out,
                "    flow {} (weight {}, fileset {}, {:?} file, {how}): {}",
                fl.name,
                fl.weight,
                p.filesets[fl.fileset].name,
                fl.pick,
                ops.join(", ")
            );
        }
    }
    for (name, s) in &p.scales {
        let _ = writeln!(
            out,
            "  --scale {name}: connections {}, files {}, duration {}",
            s.connections.map_or("-".into(), |c| c.to_string()),
            s.files.map_or("-".into(), |c| c.to_string()),
            s.duration_ns.map_or("-".into(), |d| format!("{:.1} s", d as f64 / 1e9))
        );
    }
    out
}
