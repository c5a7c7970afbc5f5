//! `run access --distribution` draws its random offsets as fio's `random_distribution` does: the
//! same files, the same number of requests, through real fio and through iomatrix, and the shape of
//! the hits (how much of the traffic the hottest blocks take) compared. The offsets iomatrix issued
//! are read from its own system calls (strace on the psync backend), so what is compared is what
//! the runner did, not only what its generator draws.
use crate::helpers::*;
use std::path::Path;
use std::process::Command;

const BLOCK: u64 = 4096;
/// 16 MiB of 4k blocks.
const BLOCKS: u64 = 4096;
const REQUESTS: u64 = 40_000;
/// The largest gap allowed between fio's and iomatrix's cumulative hit shares, at any number of
/// hottest blocks (a Kolmogorov-Smirnov distance on the blocks sorted by hits). Measured here (fio
/// 3.33): 0.003 to 0.005 for every model; scattering the ranks with collisions instead of a
/// permutation gave 0.10 for zipf:0.8, and uniform offsets against fio's zipf:1.2 give about 0.7.
const TOLERANCE: f64 = 0.02;

/// Hits per block, hottest first.
fn sorted_hits(offsets: &[u64]) -> Vec<u64> {
    let mut hits = vec![0u64; BLOCKS as usize];
    for &o in offsets {
        hits[(o / BLOCK) as usize] += 1;
    }
    hits.sort_unstable_by(|a, b| b.cmp(a));
    hits
}

/// The largest gap between two cumulative hit shares, block by block from the hottest.
fn distance(a: &[u64], b: &[u64]) -> f64 {
    let (ta, tb) = (a.iter().sum::<u64>() as f64, b.iter().sum::<u64>() as f64);
    let (mut ca, mut cb, mut worst) = (0.0, 0.0, 0.0f64);
    for (x, y) in a.iter().zip(b) {
        ca += *x as f64 / ta;
        cb += *y as f64 / tb;
        worst = worst.max((ca - cb).abs());
    }
    worst
}

/// The share of all hits on the hottest `fraction` of blocks.
fn hottest(hits: &[u64], fraction: f64) -> f64 {
    let k = (hits.len() as f64 * fraction) as usize;
    hits[..k].iter().sum::<u64>() as f64 / hits.iter().sum::<u64>() as f64
}

/// The offsets real fio reads with `random_distribution=dist` (its I/O log, format 3).
fn fio_offsets(dir: &Path, dist: &str) -> Vec<u64> {
    let log = dir.join("fio.log");
    // fio appends to an I/O log that exists.
    let _ = std::fs::remove_file(&log);
    let out = Command::new("fio")
        .current_dir(dir)
        .args([
            "--name=dist",
            &format!("--filename={}", dir.join("fio.dat").display()),
            "--size=16m",
            "--bs=4k",
            "--rw=randread",
            "--ioengine=psync",
            "--norandommap",
            &format!("--random_distribution={dist}"),
            &format!("--io_size={}", REQUESTS * BLOCK),
            &format!("--number_ios={REQUESTS}"),
            &format!("--write_iolog={}", log.display()),
        ])
        .output()
        .expect("run fio");
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    let text = std::fs::read_to_string(&log).unwrap();
    let offsets: Vec<u64> = text
        .lines()
        .filter_map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            (f.len() == 5 && f[2] == "read").then(|| f[3].parse().unwrap())
        })
        .collect();
    assert_eq!(offsets.len() as u64, REQUESTS, "fio's log holds every request");
    offsets
}

/// The offsets `iomatrix run access --distribution dist` reads, seen in its pread64 calls on its file.
fn iomatrix_offsets(sb: &Sandbox, dist: &str) -> Vec<u64> {
    let trace = sb.dir.path().join("trace");
    let out = Command::new("strace")
        .args(["-f", "-y", "-e", "trace=pread64", "-o"])
        .arg(&trace)
        .arg(env!("CARGO_BIN_EXE_iomatrix"))
        .args(["run", "access", "--target"])
        .arg(sb.target())
        .args(["--backend", "psync", "--bs", "4k", "--file-size", "16m", "--read", "100", "--random", "100"])
        .args(["--bytes", &(REQUESTS * BLOCK).to_string(), "--distribution", dist])
        .env("IOMATRIX_DB", sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .output()
        .expect("run strace");
    assert_success(&out);
    let text = std::fs::read_to_string(&trace).unwrap();
    let offsets: Vec<u64> = text
        .lines()
        .filter(|l| l.contains("access.dat>") && l.contains("pread64("))
        .filter_map(|l| {
            // pread64(5</path/access.dat>, "..."..., 4096, 12345) = 4096
            let args = l.rsplit_once(')')?.0;
            let offset = args.rsplit(", ").next()?.trim();
            offset.parse().ok()
        })
        .collect();
    assert_eq!(offsets.len() as u64, REQUESTS, "one pread64 per request");
    offsets
}

#[test]
fn skewed_offsets_take_the_same_shares_as_fios() {
    if !have("fio") || !have("strace") {
        skip("fio and strace are needed to compare offsets with fio's");
        return;
    }
    let sb = Sandbox::new();
    let fio_dir = sb.dir.path().join("fio");
    std::fs::create_dir(&fio_dir).unwrap();
    let mut results = Vec::new();
    // Each model's hits, kept for the check below that the comparison can fail.
    let mut measured = std::collections::HashMap::new();
    for dist in ["zipf:1.2", "zipf:0.8", "pareto:0.9", "pareto:0.7", "normal:10", "random"] {
        let fio = sorted_hits(&fio_offsets(&fio_dir, dist));
        let ours = sorted_hits(&iomatrix_offsets(&sb, dist));
        let d = distance(&fio, &ours);
        results.push(format!(
            "{dist}: distance {d:.3}; hottest 1% fio {:.3} iomatrix {:.3}; hottest 10% fio {:.3} iomatrix {:.3}",
            hottest(&fio, 0.01),
            hottest(&ours, 0.01),
            hottest(&fio, 0.1),
            hottest(&ours, 0.1)
        ));
        assert!(d < TOLERANCE, "{}", results.join("\n"));
        measured.insert(dist, (fio, ours));
    }
    // The check can fail: fio's zipf against iomatrix's uniform offsets (both measured above, not
    // run again) is far apart.
    let (fio_zipf, uniform) = (&measured["zipf:1.2"].0, &measured["random"].1);
    assert!(distance(fio_zipf, uniform) > 5.0 * TOLERANCE, "{}", results.join("\n"));
    println!("{}", results.join("\n"));
}

#[test]
fn the_distribution_is_stored_in_the_plan_and_said_in_the_conditions() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&[
        "run",
        "access",
        "--target",
        target.to_str().unwrap(),
        "--file-size",
        "4m",
        "--bytes",
        "1m",
        "--random_distribution",
        "zipf:1.2",
    ]);
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["plan"]["distribution"], "zipf:1.2", "{}", run["run"]["plan"]);
    let said = run["run"]["conditions"]["distribution"].as_str().unwrap_or_default().to_string();
    assert!(said.contains("zipf:1.2"), "{}", run["run"]["conditions"]);
    let (shown, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    assert!(shown.contains("\ndistribution: random offsets drawn by fio's zipf:1.2"), "{shown}");
    // A uniform run stores fio's name for it, so compare sets it against a skewed one.
    let out = sb.run(&["run", "access", "--target", target.to_str().unwrap(), "--file-size", "4m", "--bytes", "1m"]);
    assert_success(&out);
    let run = sb.last_run();
    assert_eq!(run["run"]["plan"]["distribution"], "random", "{}", run["run"]["plan"]);
}

#[test]
fn bad_distributions_are_refused_with_the_rule() {
    let sb = Sandbox::new();
    let target = sb.target();
    let cases = [
        ("zipf:0", "above 0 and not 1"),
        ("zipf:-1", "above 0 and not 1"),
        ("zipf:1", "not 1"),
        ("pareto:1.5", "between 0 and 1"),
        ("normal:100", "below 100"),
        ("normal:-1", "below 100"),
        ("zoned:60/10:30/20:8/30:2/40", "zoned distributions are not supported"),
        ("zipf:1.2:0.25", "centre"),
        ("lognormal:2", "not a distribution"),
    ];
    for (dist, needle) in cases {
        let out = sb.run(&["run", "access", "--target", target.to_str().unwrap(), "--distribution", dist]);
        assert_usage_error(&out, needle);
        assert!(text(&out).1.contains("--distribution"), "the error names the flag: {}", text(&out).1);
    }
    // Sequential requests follow no distribution: said, not ignored.
    let out =
        sb.run(&["run", "access", "--target", target.to_str().unwrap(), "--distribution", "zipf:1.2", "--rw", "read"]);
    assert_usage_error(&out, "--random 0 makes every request sequential");
    assert!(sb.leftovers().is_empty());
}

/// A one-block file has one place to go: every skewed model lands there, nothing fails.
#[test]
fn a_distribution_on_a_one_block_file_reads_that_block() {
    let sb = Sandbox::new();
    let target = sb.target();
    for dist in ["zipf:1.2", "pareto:0.9", "normal:0", "normal:50"] {
        let out = sb.run(&[
            "run",
            "access",
            "--target",
            target.to_str().unwrap(),
            "--bs",
            "4k",
            "--file-size",
            "4k",
            "--bytes",
            "400k",
            "--distribution",
            dist,
        ]);
        assert_success(&out);
        let cell = &cells(&sb.last_run())[0];
        assert_eq!(cell["ops"].as_u64(), Some(100), "{dist}: {cell}");
    }
}
