//! Issue 52, "against the physics of a throttled device": a loop device in a blkio cgroup (v1)
//! limited to 2,000 requests a second ([`ThrottledDevice`]), O_DIRECT (the throttle does not hold
//! buffered writeback). Closed loop at depth q such a device completes 2,000 requests a second, so
//! by Little's law each request takes q / 2,000 s on average; the throttle works in slices of
//! about 100 ms, so most requests complete at once and a few wait for the next slice, and the
//! percentiles follow the slices. Real fio 3.33 (io_uring) measures the device first (a check that
//! the fixture is the device the issue measured); then `iomatrix run access` at the same depths
//! must obey the same physics and agree with fio's percentiles. And `--latency-target` finds the
//! depth fio's latency_target finds.

use crate::helpers::*;
use serde_json::Value;
use std::process::{Command, Stdio};

/// The throttle's limit: requests a second.
const LIMIT: u64 = 2_000;
const DEPTHS: [u32; 4] = [1, 2, 4, 8];
/// Each fio point's length: 20 of the throttle's slices. fio measured within 0.5% of the limit
/// at every depth in 2 s.
const SECONDS: u64 = 2;
/// Each iomatrix cell's: 40 slices. A closed-loop cell ends when its last requests complete, and
/// on this device those may wait a slice (100 ms) for their dispatch: over 2 s cells measured
/// 4.2% under to 3.4% over the limit, one slice's worth.
const OUR_SECONDS: u64 = 4;

/// What one tool saw at one depth.
#[derive(Debug, Clone, Copy)]
struct Point {
    depth: u32,
    iops: f64,
    mean_ns: f64,
    p50_ns: u64,
    p99_ns: u64,
    p99_9_ns: u64,
}

/// Reads throttled by read_iops_device, or writes by write_iops_device.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Way {
    Reads,
    Writes,
}

impl Way {
    fn limit(self) -> ThrottleLimit {
        match self {
            Way::Reads => ThrottleLimit::ReadIops,
            Way::Writes => ThrottleLimit::WriteIops,
        }
    }
    /// fio's rw, which `run access --rw` also takes.
    fn rw(self) -> &'static str {
        match self {
            Way::Reads => "randread",
            Way::Writes => "randwrite",
        }
    }
    /// The side of fio's JSON and of the stored cell's figures.
    fn side(self) -> &'static str {
        match self {
            Way::Reads => "read",
            Way::Writes => "write",
        }
    }
}

/// A 64 MiB loop device throttled to [`LIMIT`] requests a second of `way`; None (a skip) where
/// there is no blkio controller, no root or no fio.
fn throttled(way: Way) -> Option<ThrottledDevice> {
    if !have("fio") {
        skip("the throttled device is measured with fio, which is not installed");
        return None;
    }
    let dev = ThrottledDevice::new(64, 0x5a)?;
    dev.set(way.limit(), LIMIT);
    Some(dev)
}

/// `iomatrix` started inside the device's cgroup, with the sandbox's database.
fn iomatrix_in(dev: &ThrottledDevice, sb: &Sandbox) -> Command {
    let mut cmd = dev.command(env!("CARGO_BIN_EXE_iomatrix"));
    cmd.env("IOMATRIX_DB", sb.db()).current_dir(sb.dir.path()).stdin(Stdio::null());
    cmd
}

/// Real fio's JSON for `extra` options on the device, from inside its cgroup.
fn fio_json(dev: &ThrottledDevice, way: Way, extra: &[String]) -> Value {
    let mut cmd = dev.command("fio");
    cmd.args(["--name=throttled", "--direct=1", "--ioengine=io_uring", "--bs=4k", "--output-format=json"])
        .arg(format!("--filename={}", dev.path()))
        .arg(format!("--rw={}", way.rw()))
        .args(extra);
    let out = bounded_child(cmd, std::time::Duration::from_secs(60));
    assert!(out.status.success(), "fio: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("fio's JSON: {e}"))
}

/// fio at `depth` for [`SECONDS`]: its IOPS, and its total latency (lat, as iomatrix's) mean and
/// percentiles.
fn fio_point(dev: &ThrottledDevice, way: Way, depth: u32) -> Point {
    let extra = [
        format!("--iodepth={depth}"),
        format!("--runtime={SECONDS}"),
        "--time_based".into(),
        "--lat_percentiles=1".into(),
    ];
    let doc = fio_json(dev, way, &extra);
    let side = &doc["jobs"][0][way.side()];
    let lat = &side["lat_ns"];
    let at = |p: &str| lat["percentile"][p].as_u64().unwrap_or_else(|| panic!("fio's lat percentile {p}: {lat}"));
    Point {
        depth,
        iops: side["iops"].as_f64().unwrap(),
        mean_ns: lat["mean"].as_f64().unwrap(),
        p50_ns: at("50.000000"),
        p99_ns: at("99.000000"),
        p99_9_ns: at("99.900000"),
    }
}

/// `iomatrix run access` on the device at each of `depths`, one cell each. As fio's
/// threads, the client's is placed by the kernel (`--pin off`): kept on one CPU beside the loop
/// device's worker, its depth-1 p99 here was 1 to 4 ms where unpinned it was 0.04 to 0.1 ms, as
/// fio's. Each cell warms up first (`--ramp`): the throttle keeps, for the rest of its slice, the
/// budget its group left unused, so a cell starting soon after other requests (fio's, the cell
/// before) took it at once and measured 4 to 9% over the limit.
fn iomatrix_points(dev: &ThrottledDevice, sb: &Sandbox, way: Way, depths: &[u32]) -> Vec<Point> {
    let depths = depths.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(",");
    let duration = format!("{OUR_SECONDS}s");
    let d = dev.path();
    let args = ["run", "access", "--device", d, "--destroy-data-on", d, "--rw", way.rw(), "--bs", "4k"];
    let mut cmd = iomatrix_in(dev, sb);
    cmd.args(args).args(["--qd", &depths, "--duration", &duration, "--direct", "--pin", "off", "--ramp", "500ms"]);
    let out = bounded_child(cmd, std::time::Duration::from_secs(120));
    assert_success(&out);
    cells(&sb.last_run())
        .iter()
        .map(|c| {
            let m = &c["metrics"];
            let side = &m[way.side()];
            Point {
                depth: m["queue_depth"].as_u64().unwrap() as u32,
                iops: m["iops"].as_f64().unwrap(),
                mean_ns: side["mean_ns"].as_f64().unwrap(),
                p50_ns: side["p50_ns"].as_u64().unwrap(),
                p99_ns: side["p99_ns"].as_u64().unwrap(),
                p99_9_ns: side["p99_9_ns"].as_u64().unwrap(),
            }
        })
        .collect()
}

/// Where a latency lies among the throttle's slices: dispatched within its slice at once (some
/// 10 to 100 us here), or held for a later dispatch (a few ms up to a slice, some 100 ms).
fn slice_band(ns: u64) -> &'static str {
    if ns < 1_000_000 {
        "dispatched at once"
    } else {
        "held for a later dispatch"
    }
}

/// Two percentiles agree: within 25% of each other, or both in the same slice band.
fn percentiles_agree(ours: u64, fio: u64) -> bool {
    let (low, high) = (ours.min(fio) as f64, ours.max(fio) as f64);
    high <= low * 1.25 || slice_band(ours) == slice_band(fio)
}

fn ms(ns: f64) -> String {
    format!("{:.3} ms", ns / 1e6)
}

fn print_points(way: Way, fio: &[Point], ours: &[Point]) {
    eprintln!(
        "{way:?} throttled to {LIMIT}/s, fio {SECONDS} s and iomatrix {OUR_SECONDS} s a depth (fio's lat | \
         iomatrix's total latency):"
    );
    for (f, o) in fio.iter().zip(ours) {
        eprintln!(
            "  depth {}: fio {:.0} IOPS mean {} p50 {} p99 {} p99.9 {} | iomatrix {:.0} IOPS mean {} p50 {} p99 {} \
             p99.9 {} | Little {}",
            f.depth,
            f.iops,
            ms(f.mean_ns),
            ms(f.p50_ns as f64),
            ms(f.p99_ns as f64),
            ms(f.p99_9_ns as f64),
            o.iops,
            ms(o.mean_ns),
            ms(o.p50_ns as f64),
            ms(o.p99_ns as f64),
            ms(o.p99_9_ns as f64),
            ms(f64::from(o.depth) / LIMIT as f64 * 1e9),
        );
    }
}

/// The tail percentile compared at depth `q`, one clear of the cliff between the bands. At depth q
/// some q of each slice's 200 requests (q x 0.5%) are held for a later dispatch: from depth 4 (2%)
/// the p99 is one of them for both tools; at depths 1 and 2 (0.5% and 1%, and a few more held a
/// jiffy or two on a busy machine) the p99 falls on either side run to run, for fio as for
/// iomatrix (fio's depth-1 p99 here: 0.07 to 4 ms), so the p99.9 is compared there, held for both.
fn tail_clear_of_the_cliff(q: u32) -> (&'static str, fn(&Point) -> u64) {
    if q >= 4 {
        ("p99", |p| p.p99_ns)
    } else {
        ("p99.9", |p| p.p99_9_ns)
    }
}

/// How far under the limit a loaded machine's measure may fall. The throttle drops what a slice
/// left unused at its end, so requests a starved loop-device worker completed late are not made
/// up: with other builds on this 2-core machine (load 5 to 6) fio measured down to 1,875 at depth
/// 2 (6.3% under) and iomatrix to 1,896 at depth 1 (5.2%), where quiet runs are within 0.5%.
const SHORT_OF_THE_LIMIT: f64 = 0.08;

/// IOPS the throttle gives: never more than 3% over its limit (more would count requests the
/// device did not do), and at most [`SHORT_OF_THE_LIMIT`] under it.
fn at_the_limit(iops: f64) -> bool {
    let limit = LIMIT as f64;
    iops <= limit * 1.03 && iops >= limit * (1.0 - SHORT_OF_THE_LIMIT)
}

/// Every check of the physics for `way` ([`point_holds`]) at every depth of [`DEPTHS`], fio's
/// points and iomatrix's cells measured one after the other.
fn physics_hold(way: Way) {
    let Some(dev) = throttled(way) else { return };
    let sb = Sandbox::new();
    let fio: Vec<Point> = DEPTHS.iter().map(|&q| fio_point(&dev, way, q)).collect();
    let ours = iomatrix_points(&dev, &sb, way, &DEPTHS);
    print_points(way, &fio, &ours);
    assert_eq!(ours.iter().map(|p| p.depth).collect::<Vec<_>>(), DEPTHS, "one cell a depth");
    for (f, o) in fio.iter().zip(&ours) {
        let Err(why) = point_holds(f, o) else { continue };
        // A machine that stalls the loop device's worker for a second (seen here at load 12:
        // 1,152 IOPS and a p99.9 of 918 ms at depth 8, Little's law still holding) measures the
        // machine, not the device: the depth is measured once more by both tools, and must hold.
        let q = o.depth;
        eprintln!("depth {q}: {why}; measured again, by both tools");
        let (f, o) = (fio_point(&dev, way, q), iomatrix_points(&dev, &sb, way, &[q])[0]);
        print_points(way, &[f], &[o]);
        point_holds(&f, &o).unwrap_or_else(|why| panic!("depth {q}, measured twice: {why}"));
    }
}

/// One depth's checks: fio's IOPS at depths 1 and 4 (the fixture is the device);
/// iomatrix's IOPS and Little's law; its p50 and its tail ([`tail_clear_of_the_cliff`]) beside
/// fio's. The first that fails, said.
fn point_holds(f: &Point, o: &Point) -> Result<(), String> {
    let q = o.depth;
    let within = |x: f64, expected: f64, share: f64| (x - expected).abs() <= expected * share;
    if (q == 1 || q == 4) && !at_the_limit(f.iops) {
        return Err(format!("fio at depth {q}: {:.0} IOPS, not the issue's device", f.iops));
    }
    if !at_the_limit(o.iops) {
        return Err(format!("iomatrix at depth {q}: {:.0} IOPS against the limit of {LIMIT}", o.iops));
    }
    // Little's law itself, over what was measured; and over the limit, within the same window.
    let little = f64::from(q) / o.iops * 1e9;
    if !within(o.mean_ns, little, 0.05) {
        return Err(format!("depth {q}: mean {}, Little's law says {}", ms(o.mean_ns), ms(little)));
    }
    let at_limit = f64::from(q) / LIMIT as f64 * 1e9;
    if o.mean_ns < at_limit * 0.97 || o.mean_ns > at_limit / (1.0 - SHORT_OF_THE_LIMIT) {
        return Err(format!("depth {q}: mean {}, q / {LIMIT} s is {}", ms(o.mean_ns), ms(at_limit)));
    }
    let (tail, at) = tail_clear_of_the_cliff(q);
    for (name, a, b) in [("p50", o.p50_ns, f.p50_ns), (tail, at(o), at(f))] {
        if !percentiles_agree(a, b) {
            return Err(format!(
                "depth {q}: iomatrix's {name} {} ({}) and fio's {} ({}) disagree",
                ms(a as f64),
                slice_band(a),
                ms(b as f64),
                slice_band(b)
            ));
        }
    }
    Ok(())
}

#[test]
fn reads_throttled_to_2000_a_second_obey_littles_law_and_follow_fios_percentiles() {
    physics_hold(Way::Reads);
}

#[test]
fn writes_throttled_to_2000_a_second_obey_littles_law_and_follow_fios_percentiles() {
    physics_hold(Way::Writes);
}

/// Depths a search reaches one step apart: equal, next to each other, or one twice the other
/// (the search doubles while it climbs and halves its way back).
fn within_one_step(a: u32, b: u32) -> bool {
    a.abs_diff(b) <= 1 || a == 2 * b || b == 2 * a
}

/// A p99 target on the 2,000 IOPS device: `run access --latency-target` finds fio's latency_depth
/// within one step, and its IOPS at that depth are fio's within 5%. At depth q about q of each
/// slice's 200 requests wait for the next slice, so the p99 is the slice's wait (some 100 ms) from
/// depth 3 on, and a few ms or less at depths 1 and 2. The 1 ms target sits on depth 1's
/// own p99 on a loaded machine: here fio's p99 at depth 1 measured 0.1 to 4 ms from run to run,
/// and fio's latency_target=1ms found depth 1 in 3 runs of 3 (one never settled), where the
/// issue's quieter machine found depth 2. A 50 ms target stands clear of the slices' waits at
/// depths 1 and 2: fio found depth 2 in 3 runs of 3 (500 ms windows), and depth 1 or 2 with 1 s
/// windows. fio's IOPS under latency_target are its last window's alone, which starts after a
/// drain (the throttle's unused budget then comes at once): 2,012 to 2,096 over 500 ms. So the
/// IOPS are held to fio's at the same depth closed loop (fio 2 s, the cell 3 s), and to the
/// latency_target run's within 10%.
#[test]
fn a_50ms_p99_latency_target_finds_fios_depth_within_one_step_and_fios_iops() {
    let Some(dev) = throttled(Way::Reads) else { return };
    let sb = Sandbox::new();
    // As in the physics tests, a machine that stalls for a second measures the machine: one more try.
    if let Err(why) = target_beside_fio(&dev, &sb) {
        eprintln!("{why}; measured again, by both tools");
        target_beside_fio(&dev, &sb).unwrap_or_else(|why| panic!("measured twice: {why}"));
    }
}

/// fio's latency_target and `run access --latency-target` on the device, one after the other:
/// the depths within one step, the IOPS within 5% of fio's at the depth found and 10% of fio's
/// latency_target run's, and `show`'s line; the first check that fails, said.
fn target_beside_fio(dev: &ThrottledDevice, sb: &Sandbox) -> Result<(), String> {
    let extra = ["--iodepth=8", "--latency_target=50ms", "--latency_percentile=99", "--latency_window=1s"];
    let doc = fio_json(dev, Way::Reads, &extra.map(String::from));
    let job = &doc["jobs"][0];
    let fio_depth = job["latency_depth"].as_u64().unwrap_or_else(|| panic!("fio's latency_depth: {job}")) as u32;
    let fio_window_iops = job["read"]["iops"].as_f64().unwrap();
    let d = dev.path();
    let mut cmd = iomatrix_in(dev, sb);
    cmd.args(["run", "access", "--device", d, "--destroy-data-on", d, "--rw", "randread", "--bs", "4k", "--qd", "8"])
        .args(["--duration", "3s", "--direct", "--pin", "off", "--latency-target", "50ms"])
        .args(["--latency-percentile", "99", "--latency-window", "1s"]);
    let out = bounded_child(cmd, std::time::Duration::from_secs(120));
    assert_success(&out);
    let run = sb.last_run();
    let stored = cells(&run);
    let cell = &stored[0]["metrics"];
    let searched = &cell["latency_target"][0];
    let Some(ours) = searched["depth"].as_u64().map(|d| d as u32) else {
        return Err(format!("no depth found: {searched}"));
    };
    let our_iops = cell["iops"].as_f64().unwrap();
    let fio_at_ours = fio_point(dev, Way::Reads, ours);
    eprintln!(
        "50 ms p99 target, 1 s windows: fio depth {fio_depth} ({fio_window_iops:.0} IOPS in its last window); \
         iomatrix depth {ours} at {our_iops:.0} IOPS (fio at depth {ours}: {:.0}), depths judged (p99): {}",
        fio_at_ours.iops,
        steps_said(searched)
    );
    assert_eq!(searched["measured_depth"].as_u64(), Some(u64::from(ours)), "measured at the depth found");
    let near = |fio: f64, share: f64| (our_iops - fio).abs() <= fio * share;
    if !within_one_step(ours, fio_depth) {
        return Err(format!("iomatrix found depth {ours}, fio {fio_depth}"));
    }
    if !near(fio_at_ours.iops, 0.05) || !near(fio_window_iops, 0.10) {
        return Err(format!(
            "IOPS {our_iops:.0}, fio's at depth {ours} {:.0}, fio's latency_target run's {fio_window_iops:.0}",
            fio_at_ours.iops
        ));
    }
    let id = run["run"]["id"].as_i64().or_else(|| sb.runs_json()["runs"].as_array()?.last()?["id"].as_i64());
    let shown = sb.run(&["show", &id.expect("the run's id").to_string()]);
    assert_success(&shown);
    let (stdout, _) = text(&shown);
    assert!(stdout.contains(&format!("depth {ours} (depths judged")), "show's line:\n{stdout}");
    Ok(())
}

/// "1 (4.028 ms), 2 (3.930 ms), 4 (98.566 ms)": a stored search's depths and their windows' p99.
fn steps_said(searched: &Value) -> String {
    let steps = searched["steps"].as_array().cloned().unwrap_or_default();
    let said: Vec<String> = steps
        .iter()
        .map(|s| format!("{} ({:.3} ms)", s["depth"], s["at_percentile_ns"].as_f64().unwrap_or(0.0) / 1e6))
        .collect();
    said.join(", ")
}

/// The byte throttles (read_bps_device, write_bps_device) hold their rates too, and Little's law
/// holds at them: 8 MiB/s of 64 KiB reads is 128 requests a second, so at depth 4 each takes
/// 4 / 128 s = 31.25 ms on average; 4 MiB/s of writes, 64 a second, 62.5 ms. One run, two cells.
#[test]
fn byte_throttles_hold_reads_and_writes_to_their_rates_and_littles_law() {
    if !have("fio") {
        // Not for fio's sake: the same fixture as the tests beside it, so the same skip.
        skip("the throttled device is measured with fio, which is not installed");
        return;
    }
    let Some(dev) = ThrottledDevice::new(64, 0x5a) else { return };
    let (read_mib, write_mib) = (8u64, 4u64);
    dev.set(ThrottleLimit::ReadBytesPerSecond, read_mib << 20);
    dev.set(ThrottleLimit::WriteBytesPerSecond, write_mib << 20);
    let sb = Sandbox::new();
    let d = dev.path();
    let mut cmd = iomatrix_in(&dev, &sb);
    cmd.args(["run", "access", "--device", d, "--destroy-data-on", d, "--read", "100,0", "--bs", "64k", "--qd", "4"])
        .args(["--duration", "2s", "--ramp", "500ms", "--direct", "--pin", "off"]);
    let out = bounded_child(cmd, std::time::Duration::from_secs(120));
    assert_success(&out);
    let stored = cells(&sb.last_run());
    assert_eq!(stored.len(), 2, "a read cell and a write cell");
    for (cell, limit_mib, side) in [(&stored[0], read_mib, "read"), (&stored[1], write_mib, "write")] {
        let m = &cell["metrics"];
        let (mib, mean_ns) = (m["mib_per_sec"].as_f64().unwrap(), m[side]["mean_ns"].as_f64().unwrap());
        let little = 4.0 / (limit_mib as f64 * 16.0) * 1e9;
        eprintln!(
            "{side}s throttled to {limit_mib} MiB/s: {mib:.2} MiB/s, mean {}, Little's law {}",
            ms(mean_ns),
            ms(little)
        );
        assert!((mib - limit_mib as f64).abs() <= limit_mib as f64 * 0.03, "{side}s: {mib:.2} MiB/s");
        assert!(
            (mean_ns - little).abs() <= little * 0.05,
            "{side}s: mean {}, Little's law {}",
            ms(mean_ns),
            ms(little)
        );
    }
}
