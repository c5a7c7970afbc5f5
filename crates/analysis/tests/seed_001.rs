//! Seed 001's own tables, typed from the seed, through `sweep`: its Rate of
//! Change tables (Local I/O Test 2: Microsoft and Polyserve at 16..255
//! outstanding I/Os) with their Total column and the per-direction totals
//! ("reads increased over 500%, while writes increased only 150%"), and its
//! read/write ratio per block size over Local I/O Test 1 (three clusters at
//! five cache levels: "5.63:1" for 2K ... "1.56:1" for 256K).
#![forbid(unsafe_code)]

use iomatrix_analysis::{mean_of_rows, sweep, CellKey, Direction, SweepLevel};
use std::collections::BTreeMap;

const BLOCKS_KIB: [u64; 7] = [2, 4, 8, 32, 64, 128, 256];

/// One block size's figures: each system's five levels, reads then writes.
type Block<const N: usize> = ([[f64; 5]; N], [[f64; 5]; N]);
/// One block size's printed Rate of Change: read steps, read Total, write steps, write Total.
type Printed = ([f64; 4], f64, [f64; 4], f64);

/// Local I/O Test 2, MBps: per block size, (reads, writes), each [Microsoft, Polyserve] x 5 levels.
#[rustfmt::skip]
const TEST2: [Block<2>; 7] = [
    ([[4.56, 5.19, 5.24, 3.89, 21.13], [9.14, 9.58, 11.38, 12.21, 12.80]],
     [[0.95, 1.92, 1.07, 0.95, 1.04], [0.97, 0.91, 0.77, 1.03, 1.02]]),
    ([[8.30, 10.20, 7.51, 7.26, 31.28], [17.44, 18.93, 22.84, 23.15, 24.91]],
     [[1.90, 3.83, 1.80, 2.14, 1.83], [1.85, 1.77, 2.32, 2.00, 2.27]]),
    ([[13.87, 17.92, 14.35, 14.32, 42.22], [31.97, 44.01, 41.57, 36.08, 41.33]],
     [[3.83, 8.23, 4.37, 4.74, 3.76], [4.49, 4.86, 4.34, 4.45, 4.96]]),
    ([[34.15, 49.44, 44.33, 42.63, 96.12], [68.79, 89.66, 62.33, 81.37, 80.79]],
     [[14.87, 29.31, 14.29, 16.72, 15.53], [13.74, 20.67, 16.21, 18.21, 17.10]]),
    ([[75.72, 79.95, 64.80, 85.13, 143.83], [80.11, 111.93, 77.25, 107.90, 118.01]],
     [[31.05, 54.46, 25.00, 33.57, 39.07], [26.76, 35.88, 25.87, 31.73, 30.41]]),
    ([[130.36, 133.19, 119.83, 129.82, 144.92], [91.61, 150.34, 152.14, 152.25, 152.42]],
     [[86.92, 96.40, 83.11, 95.70, 106.47], [16.76, 32.83, 34.59, 37.01, 39.57]]),
    ([[171.68, 163.87, 162.97, 162.62, 178.36], [128.55, 162.02, 167.34, 141.51, 154.57]],
     [[119.80, 126.35, 123.09, 140.66, 152.05], [37.36, 38.30, 40.19, 70.00, 87.37]]),
];

/// The seed's Rate of Change tables: per block size, reads then writes, the
/// "% Change" steps and the Total column, as printed (whole %).
#[rustfmt::skip]
const RATE_OF_CHANGE: [Printed; 7] = [
    ([8.0, 13.0, -3.0, 111.0], 148.0, [48.0, -35.0, 8.0, 4.0], 8.0),
    ([13.0, 4.0, 0.0, 85.0], 118.0, [49.0, -26.0, 0.0, -1.0], 9.0),
    ([35.0, -10.0, -10.0, 66.0], 82.0, [57.0, -33.0, 6.0, -5.0], 5.0),
    ([35.0, -23.0, 16.0, 43.0], 72.0, [75.0, -39.0, 15.0, -7.0], 14.0),
    ([23.0, -26.0, 36.0, 36.0], 68.0, [56.0, -44.0, 28.0, 6.0], 20.0),
    ([28.0, -4.0, 4.0, 5.0], 34.0, [25.0, -9.0, 13.0, 10.0], 41.0),
    // 256K: the seed's rows are shifted one cell left; these are its figures in their places.
    ([9.0, 1.0, -8.0, 9.0], 11.0, [5.0, -1.0, 29.0, 14.0], 52.0),
];

/// Local I/O Test 1, MBps: per block size, (reads, writes), each [Microsoft, Novell, Polyserve] x 5 levels.
#[rustfmt::skip]
const TEST1: [Block<3>; 7] = [
    ([[4.56, 5.19, 5.24, 3.89, 21.13], [4.06, 5.05, 7.75, 7.73, 9.28], [3.35, 4.69, 3.89, 11.45, 9.14]],
     [[0.95, 1.92, 1.07, 0.95, 1.04], [1.94, 1.96, 1.81, 2.63, 0.77], [0.16, 0.93, 0.80, 0.99, 0.97]]),
    ([[8.30, 10.20, 7.51, 7.26, 31.28], [7.15, 7.03, 7.93, 8.08, 10.13], [3.35, 8.28, 7.43, 20.63, 17.44]],
     [[1.90, 3.83, 1.80, 2.14, 1.83], [2.15, 4.08, 1.00, 0.91, 1.38], [0.44, 1.79, 1.35, 1.78, 1.85]]),
    ([[13.87, 17.92, 14.35, 14.32, 42.22], [6.13, 8.92, 9.5, 10.33, 11.03], [7.38, 16.44, 10.36, 38.41, 31.97]],
     [[3.83, 8.23, 4.37, 4.74, 3.76], [0.53, 0.58, 3.19, 2.94, 1.54], [0.87, 3.29, 3.03, 3.82, 4.49]]),
    ([[34.15, 49.44, 44.33, 42.63, 96.12], [21.75, 27.27, 21.52, 31.48, 38.69], [14.06, 40.80, 37.51, 66.24, 68.79]],
     [[14.87, 29.31, 14.29, 16.72, 15.53], [12.61, 8.01, 8.95, 10.80, 16.59], [5.11, 11.86, 11.24, 15.12, 13.74]]),
    ([[75.72, 79.95, 64.80, 85.13, 143.83], [38.07, 63.79, 79.05, 82.91, 81.04], [45.60, 74.35, 69.36, 79.65, 80.11]],
     [[31.05, 54.46, 25.00, 33.57, 39.07], [17.32, 35.72, 45.06, 40.21, 39.79], [8.92, 21.56, 20.73, 25.85, 26.76]]),
    ([[130.36, 133.19, 119.83, 129.82, 144.92], [65.03, 66.92, 60.8, 66.24, 74.21], [75.24, 114.42, 109.23, 111.76, 91.61]],
     [[86.92, 96.40, 83.11, 95.70, 106.47], [42.22, 61.70, 64.07, 63.72, 69.35], [23.80, 21.10, 19.98, 19.23, 16.76]]),
    ([[171.68, 163.87, 162.97, 162.62, 178.36], [98.39, 122.37, 130.10, 112.74, 125.42], [97.65, 136.63, 150.00, 133.92, 128.55]],
     [[119.80, 126.35, 123.09, 140.66, 152.05], [79.28, 93.41, 92.17, 92.41, 117.10], [45.89, 40.22, 36.96, 37.15, 37.36]]),
];

/// The seed's "Read/Write ratio" per block size, as printed.
const RATIOS: [f64; 7] = [5.63, 5.74, 5.14, 3.1, 2.46, 1.72, 1.56];

fn key(test: &str, kib: u64) -> CellKey {
    // Iometer's test file (its size is not in the seed; 1g stands for it).
    CellKey { test: test.into(), file_size: Some(1 << 30), record_size: Some(kib << 10), variant: String::new() }
}

/// One level per column, every system a sample of the block size's read and write cells.
fn levels<const N: usize>(names: &[&str], data: &[Block<N>; 7]) -> Vec<SweepLevel> {
    names
        .iter()
        .enumerate()
        .map(|(i, name)| {
            let mut cells = BTreeMap::new();
            for (kib, (reads, writes)) in BLOCKS_KIB.iter().zip(data) {
                cells.insert(key("read", *kib), reads.iter().map(|s| s[i]).collect());
                cells.insert(key("write", *kib), writes.iter().map(|s| s[i]).collect());
            }
            SweepLevel { level: name.to_string(), cells }
        })
        .collect()
}

#[test]
fn rate_of_change_tables_come_out_with_their_total_column_and_direction_totals() {
    let s = sweep("qd", "MB/s", levels(&["16", "32", "64", "128", "255"], &TEST2));
    assert_eq!(s.rows.len(), 14);
    // The seed's % figures are whole numbers, worked from raw figures printed to two places.
    let near = |got: Option<f64>, want: f64, what: &str| {
        let got = got.unwrap_or_else(|| panic!("{what}: no figure"));
        assert!((got - want).abs() <= 1.0, "{what}: {got:.2} where the seed prints {want}");
    };
    for (kib, (read_steps, read_total, write_steps, write_total)) in BLOCKS_KIB.iter().zip(RATE_OF_CHANGE) {
        for (test, steps, total) in [("read", read_steps, read_total), ("write", write_steps, write_total)] {
            let row = s.rows.iter().find(|r| r.cell == format!("{test} 1g/{kib}k")).expect("row");
            for (i, want) in steps.iter().enumerate() {
                near(row.steps_pct[i], *want, &format!("{kib}K {test} step {i}"));
            }
            near(row.first_to_last_pct, total, &format!("{kib}K {test} Total"));
            let sum_of_steps: f64 = row.steps_pct.iter().flatten().sum();
            if kib == &2 && test == "read" {
                assert!((sum_of_steps - total).abs() > 15.0, "the seed's Total is first to last, not the steps summed");
            }
        }
    }
    // "Overall, reads increased over 500%, while writes increased only 150%."
    let reads = s.directions.iter().find(|d| d.direction == Direction::Read).unwrap();
    let writes = s.directions.iter().find(|d| d.direction == Direction::Write).unwrap();
    assert_eq!((reads.rows, writes.rows), (7, 7));
    let seed_sum = |f: fn(&Printed) -> f64| RATE_OF_CHANGE.iter().map(f).sum::<f64>();
    let (read_total, write_total) = (reads.total_pct.unwrap(), writes.total_pct.unwrap());
    assert!((read_total - seed_sum(|r| r.1)).abs() <= 2.0 && read_total > 500.0, "reads {read_total:.1}%");
    assert!((write_total - seed_sum(|r| r.3)).abs() <= 2.0 && (write_total - 150.0).abs() < 2.0, "{write_total:.1}");
    // The averages per direction are the means of the direction's rows.
    near(reads.average_total_pct, read_total / 7.0, "reads' average Total");
    assert!(s.directions.iter().all(|d| d.direction != Direction::Other));
}

#[test]
fn read_write_ratio_per_block_size_over_all_levels_is_the_seeds() {
    let s = sweep("cache", "MB/s", levels(&["1", "2", "3", "4", "5"], &TEST1));
    let got: Vec<(String, f64)> = s.read_write_by_block.iter().map(|b| (b.what.clone(), b.mean_ratio)).collect();
    assert_eq!(got.len(), 7, "{got:?}");
    for ((what, ratio), (kib, want)) in got.iter().zip(BLOCKS_KIB.iter().zip(RATIOS)) {
        assert_eq!(what, &format!("{kib}k file 1g"));
        assert!((ratio - want).abs() < 0.005 + 1e-9, "{kib}K: {ratio:.3}:1 where the seed prints {want}:1");
    }
    for b in &s.read_write_by_block {
        assert_eq!((b.reads, b.writes), (15, 15), "three clusters at five levels");
        assert!(b.median_ratio > 1.0);
    }
    // 2K: the medians tell a different story than the means (5.24:1 against 5.63:1).
    assert!((s.read_write_by_block[0].median_ratio - 5.242).abs() < 0.001);
}

#[test]
fn three_clusters_as_rows_average_to_the_seeds_average_row() {
    // Each cluster its own row (its name in the key), then merged: the mean over the clusters.
    let systems = ["Microsoft", "Novell", "Polyserve"];
    let levels: Vec<SweepLevel> = levels(&["1", "2", "3", "4", "5"], &TEST1)
        .into_iter()
        .map(|l| {
            let mut cells = BTreeMap::new();
            for (key, samples) in l.cells {
                for (system, v) in systems.iter().zip(samples) {
                    cells.insert(CellKey { variant: format!("cluster={system}"), ..key.clone() }, vec![v]);
                }
            }
            SweepLevel { level: l.level, cells }
        })
        .collect();
    let per_system = sweep("cache", "MB/s", levels.clone());
    assert_eq!(per_system.rows.len(), 14 * 3);
    let averaged = sweep("cache", "MB/s", mean_of_rows(&levels, |k| CellKey { variant: String::new(), ..k.clone() }));
    assert_eq!(averaged.rows.len(), 14);
    let read_2k = averaged.rows.iter().find(|r| r.cell == "read 1g/2k").unwrap();
    let want = (4.56 + 4.06 + 3.35) / 3.0;
    assert!((read_2k.values[0].unwrap() - want).abs() < 1e-12);
    // The mean of the averages over the mean of the averages is the seed's ratio again.
    assert!((averaged.read_write_by_block[0].mean_ratio - 5.63).abs() < 0.005);
}
