//! A dbench load file replayed on a local folder, printed as dbench prints
//! its run: for `bench/dbench-replay-vs-dbench.sh`, beside dbench itself on
//! the same folder (the harness's `run personality --dbench-loadfile` stores
//! a replay like any cell; this prints one and stores nothing).
//!
//! ```text
//! cargo run --release -p iomatrix-dbench --example replay -- LOADFILE DIR [-t SECONDS] [CLIENTS] [--as-fast-as-possible]
//! ```
//!
//! Output: dbench's table (Operation, Count, AvgLat, MaxLat in ms), then
//! `Throughput X MB/sec N clients`, then `mismatches N`.

use iomatrix_dbench::{cleanup_connection, replay_connection, Live, LoadFile, LocalFs, Pacing, ReplayOptions};
use iomatrix_personality::{merge_ops, OpFigures};
use std::process::ExitCode;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let mut positional = Vec::new();
    let mut seconds = None;
    let mut pacing = Pacing::Timestamps;
    let mut i = 0;
    while i < args.len() {
        match args[i].as_str() {
            "-t" => {
                i += 1;
                match args.get(i).and_then(|s| s.parse::<u64>().ok()) {
                    Some(s) if s > 0 => seconds = Some(s),
                    _ => return usage("-t takes whole seconds, at least 1"),
                }
            }
            "--as-fast-as-possible" => pacing = Pacing::AsFastAsPossible,
            a if a.starts_with('-') => return usage(&format!("unknown flag {a}")),
            a => positional.push(a.to_string()),
        }
        i += 1;
    }
    let (file, dir, clients) = match positional.as_slice() {
        [f, d] => (f, d, 1),
        [f, d, n] => match n.parse::<usize>() {
            Ok(n) if (1..=1000).contains(&n) => (f, d, n),
            _ => return usage("CLIENTS is a whole number from 1 to 1000"),
        },
        _ => return usage("name the load file and the folder"),
    };
    let load = match LoadFile::read(std::path::Path::new(file)) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("replay: {e}");
            return ExitCode::from(2);
        }
    };
    let deadline = seconds.map(|s| Instant::now() + Duration::from_secs(s));
    let results: Vec<Result<iomatrix_dbench::ReplayFigures, String>> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..clients)
            .map(|c| {
                let load = &load;
                s.spawn(move || {
                    let mut files = LocalFs::new(dir).map_err(|e| e.to_string())?;
                    let opts = ReplayOptions { connection: c, pacing, deadline, stop_on_mismatch: false };
                    let f = replay_connection(load, &mut files, &opts, &Live::default(), &AtomicBool::new(false));
                    cleanup_connection(&mut files, c).map_err(|e| e.to_string())?;
                    Ok(f)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap_or_else(|_| Err("a client thread panicked".into()))).collect()
    });
    let mut ops: Vec<OpFigures> = Vec::new();
    let mut wall_ns = 0;
    let mut mismatches = 0;
    for r in results {
        match r {
            Ok(f) => {
                merge_ops(&mut ops, &f.ops);
                wall_ns = wall_ns.max(f.wall_ns);
                mismatches += f.mismatches();
            }
            Err(e) => {
                eprintln!("replay: {dir}: {e}");
                return ExitCode::from(1);
            }
        }
    }
    println!(" Operation                Count    AvgLat    MaxLat");
    println!(" --------------------------------------------------");
    for o in &ops {
        let s = o.latency.summary();
        println!(" {:<22} {:>8} {:>9.3} {:>9.3}", o.name, o.count, s.mean_ns / 1e6, s.max_ns as f64 / 1e6);
    }
    let bytes: u64 = ops.iter().map(|o| o.bytes).sum();
    let secs = wall_ns as f64 / 1e9;
    println!();
    println!("Throughput {:.2} MB/sec  {clients} clients", if secs > 0.0 { bytes as f64 / 1e6 / secs } else { 0.0 });
    println!("mismatches {mismatches}");
    ExitCode::SUCCESS
}

fn usage(why: &str) -> ExitCode {
    eprintln!(
        "replay: {why}\nusage: replay LOADFILE DIR [-t SECONDS] [CLIENTS] [--as-fast-as-possible]\n\
         (LOADFILE: a dbench load file, e.g. /usr/share/dbench/client.txt; DIR: an existing folder)"
    );
    ExitCode::from(2)
}
