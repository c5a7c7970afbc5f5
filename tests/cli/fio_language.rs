//! Issue 52, "fio's language, whole": the same job run by real fio and by `iomatrix fio`, their
//! outputs held side by side: sizes as fio prints them in the job line, slat, clat and lat
//! apart where fio prints them apart (io_uring) and not where it does not (psync), and
//! rate_iops (or rate in bytes) pacing each job as fio paces it.

use crate::helpers::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// A tmpfs for the jobs' files (root), else the sandbox's own target folder.
fn scratch(sb: &Sandbox) -> (Option<Mount>, PathBuf) {
    match Mount::try_virtual_fs("tmpfs", "size=128m") {
        Ok(m) => {
            let p = m.point.clone();
            (Some(m), p)
        }
        Err(_) => (None, sb.target()),
    }
}

/// Real fio's standard output for `args`, its files in `dir` removed after it.
fn real_fio(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("fio").args(args).arg(format!("--directory={}", dir.display())).output().expect("fio runs");
    assert!(out.status.success(), "fio {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let _ = std::fs::remove_file(entry.path());
    }
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `iomatrix fio` for `args` in `dir`: its standard output.
fn our_fio(sb: &Sandbox, dir: &Path, args: &[&str]) -> String {
    let directory = format!("--directory={}", dir.display());
    let mut all = vec!["fio", directory.as_str()];
    all.extend_from_slice(args);
    let out = sb.run(&all);
    assert_success(&out);
    text(&out).0
}

/// The names of a read block's latency lines, in order ("slat", "clat", "lat", "clat
/// percentiles"), from the first `read:` line to the next line that is no latency line.
fn latency_lines(output: &str) -> Vec<String> {
    let names = ["slat (", "clat (", "lat (", "clat percentiles ("];
    output
        .lines()
        .skip_while(|l| !l.trim_start().starts_with("read: IOPS="))
        .skip(1)
        .map(str::trim_start)
        .take_while(|l| {
            let latency =
                names.iter().any(|n| l.starts_with(n)) && (l.contains("): min=") || l.contains("percentiles"));
            latency || l.starts_with('|')
        })
        .filter(|l| !l.starts_with('|'))
        .map(|l| l.split(" (").next().unwrap_or(l).to_string())
        .collect()
}

/// The job line of fio's output: real fio's and iomatrix's are the same line, sizes included
/// (`128KiB-128KiB`, `9.77KiB`, `4096B`: fio's num2str), for every block size here.
#[test]
fn the_job_line_prints_sizes_as_real_fio_does() {
    if !have("fio") {
        return skip("fio is not installed");
    }
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    for bs in ["4k", "10000", "64k", "128k", "1m"] {
        let job = ["--name=t", "--rw=randread", &format!("--bs={bs}"), "--size=1m", "--ioengine=psync"];
        let real = real_fio(&dir, &job);
        let ours = our_fio(&sb, &dir, &job);
        let first = |s: &str| s.lines().next().unwrap_or_default().to_string();
        println!("bs={bs}\n  fio:      {}\n  iomatrix: {}", first(&real), first(&ours));
        assert_eq!(first(&ours), first(&real), "bs={bs}: the job line");
    }
}

/// With io_uring fio prints slat, clat and lat apart, with psync clat and lat only; iomatrix's
/// block has the same lines in the same order. Its JSON holds the three apart: every request
/// counted in each, the mean latency the mean submission plus the mean completion (within the
/// histograms' 3 significant digits), and psync's slat_ns fio's zeros with N 0.
#[test]
fn slat_clat_and_lat_are_printed_apart_where_real_fio_prints_them_apart() {
    if !have("fio") {
        return skip("fio is not installed");
    }
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let base = ["--name=t", "--rw=randread", "--bs=4k", "--size=8m", "--runtime=1", "--time_based"];
    for (engine, expected) in [
        ("--ioengine=io_uring", vec!["slat", "clat", "lat", "clat percentiles"]),
        ("--ioengine=psync", vec!["clat", "lat", "clat percentiles"]),
    ] {
        let mut job = base.to_vec();
        job.push(engine);
        if engine.ends_with("io_uring") {
            job.push("--iodepth=4");
        }
        let real = real_fio(&dir, &job);
        let ours = our_fio(&sb, &dir, &job);
        println!("{engine}: fio {:?}, iomatrix {:?}", latency_lines(&real), latency_lines(&ours));
        assert_eq!(latency_lines(&real), expected, "real fio's lines, {engine}:\n{real}");
        assert_eq!(latency_lines(&ours), expected, "iomatrix's lines, {engine}:\n{ours}");

        job.push("--output-format=json");
        let doc: Value = serde_json::from_str(&our_fio(&sb, &dir, &job)).expect("iomatrix fio's JSON");
        let read = &doc["jobs"][0]["read"];
        let n = |k: &str| read[k]["N"].as_u64().unwrap_or_else(|| panic!("{k}.N in {read}"));
        let mean = |k: &str| read[k]["mean"].as_f64().unwrap();
        let ios = read["total_ios"].as_u64().unwrap();
        assert!(ios > 100, "{read}");
        assert_eq!((n("clat_ns"), n("lat_ns")), (ios, ios), "{read}");
        assert!(read["clat_ns"]["percentile"].is_object() && read["lat_ns"].get("percentile").is_none(), "{read}");
        if engine.ends_with("io_uring") {
            assert_eq!(n("slat_ns"), ios, "every queued request's submission: {read}");
            let sum = mean("slat_ns") + mean("clat_ns");
            println!(
                "io_uring: slat {:.0} + clat {:.0} = {sum:.0} ns, lat {:.0} ns",
                mean("slat_ns"),
                mean("clat_ns"),
                mean("lat_ns")
            );
            assert!((sum - mean("lat_ns")).abs() <= 0.01 * mean("lat_ns") + 10.0, "slat + clat is lat: {read}");
            assert!(mean("slat_ns") > 0.0 && mean("clat_ns") < mean("lat_ns"), "{read}");
        } else {
            assert_eq!(read["slat_ns"], serde_json::json!({"min": 0, "max": 0, "mean": 0.0, "stddev": 0.0, "N": 0}));
            assert_eq!(mean("clat_ns"), mean("lat_ns"), "one call issues and completes: {read}");
        }
    }
}

/// rate_iops=200 and rate=800k (200 requests of 4 KiB) pace a 2-second job at 200 requests a
/// second, as real fio paces the same job (its IOPS printed beside); a rate that is no whole
/// number of blocks is refused with the fix, exit 2.
#[test]
fn rate_iops_and_rate_pace_a_job_as_real_fio_does() {
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let base =
        ["--name=t", "--rw=randread", "--bs=4k", "--size=4m", "--runtime=2", "--time_based", "--output-format=json"];
    for rate in ["--rate_iops=200", "--rate=800k"] {
        let mut job = base.to_vec();
        job.push(rate);
        let doc: Value = serde_json::from_str(&our_fio(&sb, &dir, &job)).expect("iomatrix fio's JSON");
        let iops = doc["jobs"][0]["read"]["iops"].as_f64().unwrap();
        let real = if have("fio") {
            let real: Value = serde_json::from_str(&real_fio(&dir, &job)).expect("fio's JSON");
            real["jobs"][0]["read"]["iops"].as_f64()
        } else {
            None
        };
        println!("{rate}: iomatrix {iops:.1} IOPS, fio {real:?}");
        assert!((190.0..=202.0).contains(&iops), "{rate}: {iops:.1} IOPS, 200 asked");
        if let Some(real) = real {
            assert!((real - iops).abs() <= 0.05 * real, "{rate}: iomatrix {iops:.1}, fio {real:.1}");
        }
    }
    let directory = format!("--directory={}", dir.display());
    let out = sb.run(&["fio", &directory, "--name=t", "--bs=4k", "--size=4m", "--rate=6000"]);
    assert_usage_error(&out, "multiple of bs");
}

/// A `  loop3: ios=R/W, merge=...` line of fio's "Disk stats" section: the device's name and its
/// read and write requests; None where the section has no such line.
fn disk_line(output: &str) -> Option<(String, u64, u64)> {
    let section = output.split("Disk stats (read/write):\n").nth(1)?;
    let line = section.lines().next()?.trim();
    let (name, rest) = line.split_once(": ios=")?;
    let (ios, _) = rest.split_once(',')?;
    let (read, write) = ios.split_once('/')?;
    Some((name.to_string(), read.parse().ok()?, write.parse().ok()?))
}

/// The requests `issued rwts: total=R,W,...` counts.
fn issued_reads(output: &str) -> Option<u64> {
    let line = output.lines().find(|l| l.contains("issued rwts: total="))?;
    line.split("total=").nth(1)?.split(',').next()?.parse().ok()
}

/// On a loop-mounted ext4, iomatrix prints fio's "Disk stats" section for the same device as
/// real fio (on tmpfs, which has no device, neither prints one), its read requests the job's own
/// within 10% (O_DIRECT 4 KiB random reads reach the device one for one; other processes' few
/// requests on a fresh image are the slack), and its JSON's `disk_util` the same figures.
#[test]
fn disk_stats_are_the_target_devices_as_real_fio_prints_them() {
    if !have("fio") {
        return skip("fio is not installed");
    }
    let Some(fs) = Mount::ext4(64) else { return };
    let sb = Sandbox::new();
    let job = ["--name=d", "--rw=randread", "--bs=4k", "--size=8m", "--direct=1", "--runtime=1", "--time_based"];
    let real = real_fio(&fs.point, &job);
    let ours = our_fio(&sb, &fs.point, &job);
    let section = |s: &str| s.split("Disk stats").nth(1).map(str::to_string).unwrap_or_default();
    println!("fio:      Disk stats{}\niomatrix: Disk stats{}", section(&real), section(&ours));
    let (real_name, ..) = disk_line(&real).expect("real fio prints a Disk stats line on a loop device");
    let (name, reads, _) = disk_line(&ours).expect("iomatrix prints a Disk stats line on a loop device");
    assert_eq!(name, real_name, "the same device");
    let issued = issued_reads(&ours).expect("iomatrix prints the issued requests");
    assert!(issued > 100, "the job ran: {issued} reads");
    let share = reads as f64 / issued as f64;
    assert!((0.9..=1.1).contains(&share), "device reads {reads} against the job's {issued}: {share:.3}");

    let json: Value = serde_json::from_str(&our_fio(&sb, &fs.point, &[&job[..], &["--output-format=json"]].concat()))
        .expect("iomatrix fio's JSON parses");
    let disk = &json["disk_util"][0];
    assert_eq!(disk["name"].as_str(), Some(name.as_str()), "{json}");
    let util = disk["util"].as_f64().unwrap_or(-1.0);
    assert!(disk["read_ios"].as_u64().unwrap_or(0) > 100 && (0.0..=100.0).contains(&util), "{disk}");

    let Ok(tmpfs) = Mount::try_virtual_fs("tmpfs", "size=32m") else { return };
    let ours = our_fio(&sb, &tmpfs.point, &job[..5]);
    assert!(!ours.contains("Disk stats"), "tmpfs has no device, so no section, as fio:\n{ours}");
}

/// The `name=` value of one of fio's `bw (...)`/`iops :` lines, as a number.
fn field(line: &str, name: &str) -> Option<f64> {
    line.split(&format!("{name}=")).nth(1)?.split([',', '%']).next()?.trim().parse().ok()
}

/// The bw and iops sample lines of the first block of `direction` ("read" or "write").
fn sample_lines_of(output: &str, direction: &str) -> Option<(String, String)> {
    let block: Vec<&str> =
        output.lines().skip_while(|l| !l.trim_start().starts_with(&format!("{direction}: IOPS="))).collect();
    let bw = block.iter().find(|l| l.trim_start().starts_with("bw ("))?;
    let iops = block.iter().find(|l| l.trim_start().starts_with("iops        :"))?;
    Some((bw.to_string(), iops.to_string()))
}

/// fio's bw and iops sample lines, per direction, as real fio prints them for the same 2 s job:
/// the same fields in the same order, samples taken each 500 ms (fio's bwavgtime; 2 to 4 whole
/// intervals in 2 s), the mean sample within 25% of the job's own IOPS and bandwidth, and the
/// JSON's bw_* and iops_* fields the same figures.
#[test]
fn bw_and_iops_sample_lines_are_printed_per_direction_as_real_fio_prints_them() {
    if !have("fio") {
        return skip("fio is not installed");
    }
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let job = ["--name=s", "--rw=randrw", "--bs=4k", "--size=8m", "--runtime=2", "--time_based"];
    let real = real_fio(&dir, &job);
    let ours = our_fio(&sb, &dir, &job);
    // The fields' names; the bandwidth's unit (KiB or MiB, past 1 GiB/s) is the speed's, not the layout's.
    let names = |line: &str| -> Vec<String> {
        let line = line.replace("MiB/s", "KiB/s");
        line.split(", ").map(|f| f.split('=').next().unwrap_or_default().trim().to_string()).collect()
    };
    for direction in ["read", "write"] {
        let (real_bw, real_iops) = sample_lines_of(&real, direction).expect("real fio prints sample lines");
        let (bw, iops) = sample_lines_of(&ours, direction).unwrap_or_else(|| panic!("no {direction} samples:\n{ours}"));
        println!("{direction}\n  fio:      {real_bw}\n            {real_iops}\n  iomatrix: {bw}\n            {iops}");
        assert_eq!(names(&bw), names(&real_bw), "the bw line's fields");
        assert_eq!(names(&iops), names(&real_iops), "the iops line's fields");
        let samples = field(&iops, "samples").unwrap();
        assert!((2.0..=4.0).contains(&samples), "{samples} samples of 500 ms in a 2 s job: {iops}");
        let (min, avg, max) =
            (field(&iops, "min").unwrap(), field(&iops, "avg").unwrap(), field(&iops, "max").unwrap());
        assert!(min <= avg && avg <= max, "{iops}");
        let per = field(&bw, "per").unwrap();
        assert!((0.0..=100.0).contains(&per), "{bw}");
    }
    let json: Value = serde_json::from_str(&our_fio(&sb, &dir, &[&job[..], &["--output-format=json"]].concat()))
        .expect("JSON parses");
    let read = &json["jobs"][0]["read"];
    let iops = read["iops"].as_f64().unwrap();
    let mean = read["iops_mean"].as_f64().unwrap_or(-1.0);
    assert!((mean / iops - 1.0).abs() < 0.25, "the mean sample {mean} against the job's {iops} IOPS: {read}");
    let bw_mean = read["bw_mean"].as_f64().unwrap_or(-1.0);
    let bw = read["bw"].as_f64().unwrap();
    assert!((bw_mean / bw - 1.0).abs() < 0.25, "the mean sample {bw_mean} KiB/s against the job's {bw}: {read}");
    for key in
        ["bw_min", "bw_max", "bw_agg", "bw_dev", "bw_samples", "iops_min", "iops_max", "iops_stddev", "iops_samples"]
    {
        assert!(read[key].is_number(), "{key} in {read}");
    }
}

/// One of fio's depth lines ("IO depths", "submit", "complete") of `output`: its buckets'
/// names and percents, in order.
fn depth_line(output: &str, head: &str) -> Vec<(String, f64)> {
    let line = output
        .lines()
        .map(str::trim_start)
        .find(|l| l.starts_with(head) && l.contains(": "))
        .unwrap_or_else(|| panic!("no '{head}' line in:\n{output}"));
    let (_, buckets) = line.split_once(": ").unwrap();
    buckets
        .split(", ")
        .map(|b| {
            let (name, pct) = b.rsplit_once('=').unwrap_or_else(|| panic!("'{b}' in '{line}'"));
            (name.to_string(), pct.trim_end_matches('%').parse().unwrap_or_else(|_| panic!("'{b}' in '{line}'")))
        })
        .collect()
}

/// fio's IO depths, submit and complete lines: for io_uring at depth 4 and psync at depth 1,
/// iomatrix prints the three with real fio's buckets, and the share at the job's depth (and of
/// calls that carried 1-4 requests) within 5 points of fio's: both keep the queue full, so
/// nearly every request goes in at the job's depth; 5 points leaves room for a loaded machine's
/// stalls (a round that refills fewer slots) without letting a wrong bucket pass. The JSON holds
/// the same shares under fio's iodepth_level, iodepth_submit and iodepth_complete.
#[test]
fn io_depths_submit_and_complete_are_counted_as_real_fio_counts_them() {
    if !have("fio") {
        return skip("fio is not installed");
    }
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let base = ["--name=t", "--rw=randread", "--bs=4k", "--size=8m", "--runtime=1", "--time_based"];
    for (engine, depth) in [("io_uring", "4"), ("psync", "1")] {
        let (engine_arg, depth_arg) = (format!("--ioengine={engine}"), format!("--iodepth={depth}"));
        let mut job = base.to_vec();
        job.extend([engine_arg.as_str(), depth_arg.as_str()]);
        let real = real_fio(&dir, &job);
        let ours = our_fio(&sb, &dir, &job);
        for (head, at) in [("IO depths", depth), ("submit", "4"), ("complete", "4")] {
            let (theirs, mine) = (depth_line(&real, head), depth_line(&ours, head));
            println!("{engine} {head}:\n  fio:      {theirs:?}\n  iomatrix: {mine:?}");
            let names = |l: &[(String, f64)]| l.iter().map(|(n, _)| n.clone()).collect::<Vec<_>>();
            assert_eq!(names(&mine), names(&theirs), "{engine}, {head}: the buckets");
            let share = |l: &[(String, f64)]| l.iter().find(|(n, _)| n == at).unwrap().1;
            assert!(
                (share(&mine) - share(&theirs)).abs() <= 5.0,
                "{engine}, {head}: {at}={}% against fio's {}%",
                share(&mine),
                share(&theirs)
            );
        }
        assert!(!ours.contains("IO depths, submit, complete"), "no longer named unmeasured:\n{ours}");

        job.push("--output-format=json");
        let doc: Value = serde_json::from_str(&our_fio(&sb, &dir, &job)).expect("iomatrix fio's JSON");
        for (key, head) in
            [("iodepth_level", "IO depths"), ("iodepth_submit", "submit"), ("iodepth_complete", "complete")]
        {
            let map = doc["jobs"][0][key].as_object().unwrap_or_else(|| panic!("{key} in {doc}"));
            // A JSON object's names are a set (serde_json writes them sorted).
            let mut printed: Vec<(String, f64)> = depth_line(&ours, head);
            printed.sort_by(|a, b| a.0.cmp(&b.0));
            let names: Vec<&String> = map.keys().collect();
            assert_eq!(names, printed.iter().map(|(n, _)| n).collect::<Vec<_>>(), "{engine}: {key}'s names");
            let total: f64 = map.values().map(|v| v.as_f64().unwrap()).sum();
            assert!((99.0..=101.0).contains(&total), "{engine}: {key} adds up to {total}: {map:?}");
        }
    }
}

/// bssplit: the job line says the sizes' range as real fio prints it, each request's size is
/// drawn by share (measured over many requests: within 2 points of each share asked), and shares
/// that do not add up to 100 are refused before anything runs, in fio's words and in run access's.
#[test]
fn bssplit_draws_each_size_by_its_share() {
    if !have("fio") {
        return skip("fio is not installed");
    }
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let job =
        ["--name=t", "--rw=randrw", "--bssplit=4k/10:64k/50:32k/40,8k/30:16k/70", "--size=4m", "--ioengine=psync"];
    let real = real_fio(&dir, &job);
    let ours = our_fio(&sb, &dir, &[&job[..], &["--runtime=1", "--time_based"]].concat());
    let first = |s: &str| s.lines().next().unwrap_or_default().to_string();
    println!("  fio:      {}\n  iomatrix: {}", first(&real), first(&ours));
    assert_eq!(first(&ours), first(&real), "the job line");
    assert!(first(&ours).contains("bs=(R) 4096B-64.0KiB, (W) 8192B-16.0KiB"), "{ours}");

    let run = sb.last_run();
    let done = &cells(&run)[0]["metrics"]["block_split"];
    let counts = done["counts"]["sizes"].as_array().unwrap();
    let count = |size: u64, side: usize| -> f64 {
        counts.iter().find(|e| e[0] == size).map_or(0.0, |e| e[side].as_f64().unwrap())
    };
    for (side, asked) in [(1, vec![(4096, 10.0), (65536, 50.0), (32768, 40.0)]), (2, vec![(8192, 30.0), (16384, 70.0)])]
    {
        let total: f64 = counts.iter().map(|e| e[side].as_f64().unwrap()).sum();
        assert!(total > 2000.0, "too few requests to judge shares: {total}");
        for (size, share) in asked {
            let took = 100.0 * count(size, side) / total;
            println!(
                "{} {size}: asked {share}%, took {took:.2}% of {total}",
                if side == 1 { "reads" } else { "writes" }
            );
            assert!((took - share).abs() < 2.0, "{size}: asked {share}%, took {took:.2}%");
        }
    }
    // Sizes the other direction has are no requests of this one.
    assert_eq!((count(8192, 1), count(4096, 2)), (0.0, 0.0));
    let (shown, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    let line = shown.lines().find(|l| l.starts_with("block sizes, ")).unwrap_or_else(|| panic!("{shown}"));
    assert!(line.contains("(bssplit 4k/10:64k/50:32k/40,8k/30:16k/70): reads 4k 10% (took "), "{line}");

    for (args, says) in [
        (vec!["fio", "--name=t", "--bssplit=4k/10:64k/50", "--size=1m"], "add up to 60%, not 100"),
        (vec!["run", "access", "--bssplit", "4k/60:64k/50", "--duration", "1s"], "add up to 110%, not 100"),
        (vec!["run", "access", "--bssplit", "4k/50:64k/50", "--bs", "8k"], "cannot be used with"),
    ] {
        let out = sb.run(&args);
        assert_usage_error(&out, says);
    }
    assert_eq!(stored_cells(&sb), 1, "a refused split runs nothing");
}

/// fio's section prefixes of a job's block and the lines after the jobs, in the order fio prints them.
const SECTIONS: [&str; 18] = [
    "(groupid=",
    "read:",
    "write:",
    "lat (",
    "clat percentiles",
    "bw (",
    "iops",
    "lat (usec)",
    "cpu",
    "IO depths",
    "submit",
    "complete",
    "issued rwts",
    "latency",
    "Run status group",
    "READ:",
    "WRITE:",
    "Disk stats",
];

/// The sections of `SECTIONS` that `output` has a line of.
fn sections_of(output: &str) -> Vec<&'static str> {
    let has = |prefix: &str| {
        output.lines().any(|l| {
            let l = l.trim_start();
            if prefix == "(groupid=" {
                l.contains(": (groupid=")
            } else {
                l.starts_with(prefix)
            }
        })
    };
    SECTIONS.into_iter().filter(|p| has(p)).collect()
}

/// A job file of two jobs without stonewall (a randread and a randwrite, 1 s each): both run at
/// once, as fio runs them: one stored run, a cell per job, each job its own client, their timed
/// parts overlapping; the output has every section real fio's output has for the same file.
#[test]
fn two_jobs_without_stonewall_run_at_once_and_print_every_section_fio_prints() {
    if !have("fio") {
        return skip("fio is not installed");
    }
    let sb = Sandbox::new();
    let (_mount, dir) = scratch(&sb);
    let jobfile = sb.dir.path().join("two.fio");
    std::fs::write(
        &jobfile,
        format!(
            "[global]\ndirectory={}\nsize=8m\nbs=4k\nioengine=psync\nruntime=1\ntime_based\n\n[reader]\nrw=randread\n\n\
             [writer]\nrw=randwrite\n",
            dir.display()
        ),
    )
    .unwrap();
    let real = Command::new("fio").arg(&jobfile).output().expect("fio runs");
    assert!(real.status.success(), "fio: {}", String::from_utf8_lossy(&real.stderr));
    let real = String::from_utf8_lossy(&real.stdout).into_owned();
    for entry in std::fs::read_dir(&dir).unwrap().flatten() {
        let _ = std::fs::remove_file(entry.path());
    }
    let out = sb.run(&["fio", jobfile.to_str().unwrap()]);
    assert_success(&out);
    let ours = text(&out).0;

    let run = sb.last_run();
    let stored = cells(&run);
    assert_eq!(stored.len(), 2, "one run, a cell per job");
    let mut spans = Vec::new();
    for (c, (read, rank)) in stored.iter().zip([(100, 0), (0, 1)]) {
        assert_eq!((c["metrics"]["read_percent"].as_u64(), c["clients"].as_u64()), (Some(read), Some(1)), "{c}");
        let client = &c["client_figures"][0];
        assert_eq!(client["rank"], rank, "each job its own client");
        assert_eq!(c["metrics"]["fio_job"], if rank == 0 { "reader" } else { "writer" });
        let m = &client["measured"];
        spans.push((m["start_ns"].as_u64().unwrap(), m["end_ns"].as_u64().unwrap()));
    }
    println!("timed parts from the common start (ns): reader {:?}, writer {:?}", spans[0], spans[1]);
    let (latest_start, earliest_end) = (spans[0].0.max(spans[1].0), spans[0].1.min(spans[1].1));
    // Both ran 1 s from one barrier: they overlap by most of it (a loaded machine may start one late).
    assert!(earliest_end > latest_start + 500_000_000, "the jobs did not run at once: {spans:?}");

    let (theirs, mine) = (sections_of(&real), sections_of(&ours));
    println!("fio's sections:      {theirs:?}\niomatrix's sections: {mine:?}");
    let missing: Vec<&&str> = theirs.iter().filter(|s| !mine.contains(s)).collect();
    assert!(missing.is_empty(), "sections of fio's output iomatrix fio does not print: {missing:?}\n{ours}");
    assert_eq!(ours.matches(": (groupid=0, jobs=1)").count(), 2, "both jobs in group 0, as fio numbers it: {ours}");
    assert_eq!(ours.matches("Run status group 0 (all jobs):").count(), 1, "{ours}");
}
