//! Published tables imported (`import --format published`, docs/import.md) and compared, and
//! seed 003's headline rows in compare (issue 34).
//!
//! The figures below are seed 003's (/work/shared/seeds/003_267494ff4c654efc.txt, "Performance
//! improvements due to better NSS disk storage allocation policies with OES 2015 SP1"), typed in
//! by hand by this test's author from its five tables: "Write Test – Response Time", "Write Test
//! – Throughput", "Read Test – Response Time", "Read Test – Throughput" and "Backup Test". The
//! seed's "% Change w.r.t Without DBA" column is typed in beside them, as the seed prints it.

use crate::helpers::*;
use serde_json::Value;
use std::path::Path;

/// The seed's file sizes, 4KB to 2MB (its "File sizes" line), and its 4KB records.
const SIZES: &str = "4k 8k 16k 32k 64k 128k 256k 512k 1m 2m";

/// (table's phase or test, operation, metric, unit, without DBA, with DBA, the seed's % change).
/// The Backup Test's "Time taken for test completion" gives no unit; minutes, as its file-server
/// tables' completion times are (a % change does not depend on it).
const SEED_003: [(&str, &str, &str, &str, &str, &str, &str); 13] = [
    ("write", "open", "response time", "ms", "36.69", "8.86", "-75.851"),
    ("write", "close", "response time", "ms", "29.82", "11.58", "-61.167"),
    ("write", "create", "response time", "ms", "66.31", "58.17", "-12.275"),
    ("write", "write", "response time", "ms", "76.09", "28.38", "-62.702"),
    ("write", "", "completion time", "min", "140", "55", "-60.714"),
    ("write", "", "throughput per connection", "KB/s", "53.07", "142.42", "168.362"),
    ("read", "open", "response time", "ms", "2720.65", "498.59", "-81.673"),
    ("read", "close", "response time", "ms", "2.71", "2.51", "-7.38"),
    ("read", "read", "response time", "ms", "196.91", "39.16", "-80.112"),
    ("read", "", "completion time", "min", "690", "135", "-80.434"),
    ("read", "", "throughput per connection", "KB/s", "20.24", "101.79", "402.915"),
    ("backup", "", "throughput", "MB/min", "272.45", "1572.13", "477.034"),
    ("backup", "", "completion time", "min", "103", "18", "-82.524"),
];

/// The Backup Test's counts, which have no % change in the seed: files and extents (the seed
/// prints 74,82,988 extents, Indian digit grouping: 7482988).
const SEED_003_COUNTS: [(&str, &str, &str, &str); 2] =
    [("files", "files", "29451", "29101"), ("extents", "extents", "7482988", "67425")];

/// The CSV of seed 003's tables: a line per figure and side.
fn seed_003_csv() -> String {
    let mut csv = String::from(
        "# seed 003 (003_267494ff4c654efc.txt): Write Test, Read Test (response time, throughput) and Backup Test\n\
         # tables, typed in by hand; dba=without is the seed's baseline\n\
         label:dba,suite,test,file_size,record_size,operation,metric,unit,value\n",
    );
    for (test, op, metric, unit, without, with, _) in SEED_003 {
        for (side, value) in [("without", without), ("with", with)] {
            let (suite, sizes, record) =
                if test == "backup" { ("backup", "1m", "") } else { ("fileserver", SIZES, "4k") };
            csv += &format!("{side},{suite},{test},{sizes},{record},{op},{metric},{unit},{value}\n");
        }
    }
    for (metric, unit, without, with) in SEED_003_COUNTS {
        csv += &format!("without,backup,backup,1m,,,{metric},{unit},{without}\n");
        csv += &format!("with,backup,backup,1m,,,{metric},{unit},{with}\n");
    }
    csv
}

/// Imports `csv` (written into the sandbox as `name`); the run ids, in order.
fn import(sb: &Sandbox, name: &str, csv: &str) -> Vec<i64> {
    let path = sb.dir.path().join(name);
    std::fs::write(&path, csv).unwrap();
    let out = sb.run(&["import", path.to_str().unwrap()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("imported run #"))
        .map(|l| l.split(':').next().unwrap().parse().unwrap())
        .collect()
}

/// `compare A B --json`'s comparison.
fn compare_json(sb: &Sandbox, a: i64, b: i64) -> Value {
    let out = sb.run(&["compare", &a.to_string(), &b.to_string(), "--json"]);
    assert_success(&out);
    let doc: Value = serde_json::from_slice(&out.stdout).unwrap();
    doc["comparison"].clone()
}

/// The headline row of `cell` (its test: "write", "read", "backup") whose figure starts with
/// the seed's operation and metric.
fn headline_change(c: &Value, test: &str, op: &str, metric: &str) -> f64 {
    let figure = match (op, metric) {
        (op, "response time") => format!("{op} mean response time"),
        (_, "completion time") => "time taken for test completion".to_string(),
        (_, "throughput") => "backup throughput".to_string(),
        (_, other) => other.to_string(),
    };
    let table = c["headline"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["cell"].as_str().unwrap().starts_with(test))
        .unwrap_or_else(|| panic!("no headline table for {test}: {}", c["headline"]));
    let row = table["rows"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["figure"] == figure.as_str())
        .unwrap_or_else(|| panic!("no row '{figure}' in {table}"));
    row["change_pct"].as_f64().unwrap_or_else(|| panic!("no change in {row}"))
}

/// The seed's rule for its % change column: three decimals, cut (not rounded): -75.8517 is
/// printed -75.851, 168.3625 is 168.362.
fn cut_to_3(v: f64) -> f64 {
    (v * 1000.0).trunc() / 1000.0
}

#[test]
fn seed_003s_published_tables_give_back_its_percent_change_column() {
    let sb = Sandbox::new();
    let ids = import(&sb, "seed-003.csv", &seed_003_csv());
    assert_eq!(ids.len(), 4, "file-server and backup, without and with DBA");
    let (fs_without, fs_with, backup_without, backup_with) = (ids[0], ids[1], ids[2], ids[3]);
    let fileserver = compare_json(&sb, fs_without, fs_with);
    let backup = compare_json(&sb, backup_without, backup_with);
    for c in [&fileserver, &backup] {
        let sides: Vec<&str> = c["published"].as_array().unwrap().iter().map(|p| p["side"].as_str().unwrap()).collect();
        assert_eq!(sides, ["A", "B"], "both sides are published tables");
    }
    let mut compared = Vec::new();
    for (test, op, metric, _, _, _, seed) in SEED_003 {
        let c = if test == "backup" { &backup } else { &fileserver };
        let change = headline_change(c, test, op, metric);
        let seed: f64 = seed.parse().unwrap();
        // Every row of the seed's column, by the seed's rule...
        assert_eq!(cut_to_3(change), seed, "{test} {op} {metric}: {change} against the seed's {seed}");
        // ...and within its last printed digit by any rule.
        assert!((change - seed).abs() < 0.001, "{test} {op} {metric}: {change} against {seed}");
        compared.push(format!("{test} {op} {metric}: {change:.4} (seed {seed})"));
    }
    assert_eq!(compared.len(), 13);
    eprintln!("{}", compared.join("\n"));
    // The counts the seed gives without a change: files and extents, and extents per file.
    let row = |figure: &str| -> (f64, f64) {
        let rows = backup["headline"][0]["rows"].as_array().unwrap();
        let r = rows.iter().find(|r| r["figure"] == figure).unwrap();
        (r["a"].as_f64().unwrap(), r["b"].as_f64().unwrap())
    };
    assert_eq!(row("total files"), (29451.0, 29101.0));
    assert_eq!(row("total extents"), (7482988.0, 67425.0));
    assert_eq!(row("extents per file"), (7482988.0 / 29451.0, 67425.0 / 29101.0));
    // The table gives no fragmented files: no row says 0 of them.
    let scalars: Vec<&str> =
        backup["scalars"].as_array().unwrap().iter().map(|r| r["metric"].as_str().unwrap()).collect();
    assert!(!scalars.iter().any(|m| m.contains("fragmented")), "{scalars:?}");
    // The rows in the seed's order: open, close, create, write, then the completion time and
    // the throughput per connection beside the total.
    let figures: Vec<&str> =
        fileserver["headline"][0]["rows"].as_array().unwrap().iter().map(|r| r["figure"].as_str().unwrap()).collect();
    assert_eq!(
        figures,
        [
            "open mean response time",
            "close mean response time",
            "create mean response time",
            "write mean response time",
            "time taken for test completion",
            "throughput per connection",
            "throughput, all connections"
        ]
    );
    assert!(fileserver["headline"][0]["cell"].as_str().unwrap().starts_with("write 4k..2m (10 sizes)/4k"));
    assert!(fileserver["headline"][1]["cell"].as_str().unwrap().starts_with("read"), "write before read, as stored");
    // The total the seed does not give is unknown on both sides, never 0.
    let total = &fileserver["headline"][0]["rows"][6];
    assert!(total["a"].is_null() && total["b"].is_null() && total["change_pct"].is_null(), "{total}");

    // show and compare's text say what a published run is.
    let (shown, _) = text(&sb.run(&["show", &fs_without.to_string()]));
    assert!(shown.contains("imported: published table, "), "{shown}");
    assert!(shown.contains("no environment and no samples"), "{shown}");
    assert!(shown.contains("published table, as typed (11 figures)"), "{shown}");
    assert!(shown.contains("labels: dba=without imported=published"), "{shown}");
    let (said, _) = text(&sb.run(&["compare", &fs_without.to_string(), &fs_with.to_string()]));
    assert!(said.contains("A is a published table (runs #1)"), "{said}");
    assert!(said.contains("B is a published table (runs #2)"), "{said}");
    assert!(said.contains("write 4k..2m (10 sizes)/4k: seed 003's rows"), "{said}");
}

/// Needs helper F's `compare --precision N` (issue 34): until it is in the binary this case is
/// skipped, which CI counts as a failure, so the lead enables it by merging F's package.
/// `--precision 3` rounds; the seed cuts its column at 3 decimals (see `cut_to_3`), so 7 of its
/// 13 figures print as the seed prints them and 6 differ in the last digit (-75.852 where the
/// seed has -75.851): each row is checked against the exact change rounded.
#[test]
fn seed_003s_percent_change_column_prints_to_3_decimals_with_precision_3() {
    // The seed cut its column after the third decimal (-75.8517 printed -75.851): --rounding
    // toward-zero prints it so, digit for digit, where the default rounds to the nearest (-75.852).
    let sb = Sandbox::new();
    let ids = import(&sb, "seed-003.csv", &seed_003_csv());
    let (a, b) = (ids[0].to_string(), ids[1].to_string());
    let out = sb.run(&["compare", &a, &b, "--precision", "3", "--rounding", "toward-zero"]);
    assert_success(&out);
    let (said, _) = text(&out);
    for (test, op, metric, _, _, _, seed) in SEED_003.iter().filter(|r| r.0 != "backup") {
        let expected = format!("{:+.3}%", seed.parse::<f64>().unwrap());
        let figure = if op.is_empty() { metric.to_string() } else { format!("{op} mean response time") };
        let figure = if figure == "completion time" { "time taken for test completion".to_string() } else { figure };
        let in_table = said.split(&format!("{test} 4k..2m")).nth(1).unwrap_or_default();
        let line = in_table.lines().find(|l| l.starts_with(&figure)).unwrap_or_else(|| panic!("{figure}: {said}"));
        assert!(line.contains(&expected), "{test} {figure}: the seed's {expected} in {line}");
    }
    // Rounded to the nearest, the seed's first row reads one digit up.
    let (nearest, _) = text(&sb.run(&["compare", &a, &b, "--precision", "3"]));
    assert!(nearest.contains("-75.852%") && !nearest.contains("-75.851%"), "{nearest}");
}

#[test]
fn a_published_table_compares_with_a_native_run_of_the_same_cells() {
    let sb = Sandbox::new();
    let target = sb.target();
    let args = [
        "run",
        "fileserver",
        "--target",
        target.to_str().unwrap(),
        "--connections",
        "2",
        "--files-per-connection",
        "4",
        "--sizes",
        "4k,8k",
        "--record",
        "4k",
        "--label",
        "side=native",
    ];
    assert_success(&sb.run(&args));
    let native = sb.last_run()["run"]["id"].as_i64().unwrap();
    let csv = "label:side,suite,test,file_size,record_size,operation,metric,unit,value\n\
               published,fileserver,write,4k 8k,4k,open,response time,ms,36.69\n\
               published,fileserver,write,4k 8k,4k,,throughput per connection,KB/s,53.07\n\
               published,fileserver,write,4k 8k,4k,,completion time,min,140\n";
    let ids = import(&sb, "table.csv", csv);
    let c = compare_json(&sb, native, ids[0]);
    assert_eq!(c["published"][0]["side"], "B");
    let table = c["headline"].as_array().unwrap().iter().find(|t| t["cell"] == "write 4k..8k (2 sizes)/4k").unwrap();
    let row = |figure: &str| table["rows"].as_array().unwrap().iter().find(|r| r["figure"] == figure).unwrap().clone();
    // The native side's figures are its own measurements, the published side's as typed.
    for figure in ["open mean response time", "throughput per connection", "time taken for test completion"] {
        let r = row(figure);
        assert!(r["a"].as_f64().is_some_and(|v| v > 0.0), "{figure}: {r}");
        assert!(r["change_pct"].as_f64().is_some(), "{figure}: {r}");
    }
    assert_eq!(row("open mean response time")["b"], 36.69);
    assert_eq!(row("time taken for test completion")["b"], 8400.0);
    // The native side's per-connection rate is the one its run stored.
    let stored = &cells(&sb.show_json(native))[0]["metrics"];
    assert_eq!(row("throughput per connection")["a"], stored["avg_connection_kib_per_sec"]);
    let (said, _) = text(&sb.run(&["compare", &native.to_string(), &ids[0].to_string()]));
    assert!(said.contains("B is a published table"), "{said}");
    assert!(sb.leftovers().is_empty());
}

#[test]
fn a_personality_phase_stores_its_throughput_per_connection_and_compare_gives_it() {
    let sb = Sandbox::new();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let run = |label: &str| {
        let args = [
            "run",
            "personality",
            "fileserver",
            "--target",
            t,
            "--scale",
            "small",
            "--connections",
            "2",
            "--duration",
            "1s",
        ];
        assert_success(&sb.run(&[&args[..], &["--label", label]].concat()));
        sb.last_run()["run"]["id"].as_i64().unwrap()
    };
    let (a, b) = (run("n=1"), run("n=2"));
    let stored = &cells(&sb.show_json(a))[0];
    let per_connection = stored["metrics"]["avg_connection_kib_per_sec"].as_f64().expect("stored");
    assert!(per_connection > 0.0, "{stored}");
    let c = compare_json(&sb, a, b);
    let rows = c["headline"][0]["rows"].as_array().unwrap();
    let r = rows.iter().find(|r| r["figure"] == "throughput per connection").unwrap();
    assert_eq!(r["a"].as_f64(), Some(per_connection));
    assert!(rows.iter().any(|r| r["figure"].as_str().unwrap().ends_with("mean response time")), "{rows:?}");
    assert!(rows.iter().any(|r| r["figure"] == "time taken for test completion" && r["a"].as_f64().is_some()));
}

/// Bad tables: each refused with its line and what to give, exit 2, nothing stored.
#[test]
fn a_bad_published_table_is_refused_with_its_line_and_nothing_is_stored() {
    let sb = Sandbox::new();
    let header = "label:dba,suite,test,file_size,record_size,operation,metric,unit,value\n";
    let cases = [
        ("a,fileserver,write,,4k,open,response time,furlongs,1\n", "line 2: unit 'furlongs' is not a unit of"),
        ("a,fileserver,write,,4k,,speed,KB/s,1\n", "line 2: metric 'speed' is not one"),
        ("a,fileserver,write,,4k,,throughput,KB/s,-1\n", "line 2: value '-1' is negative"),
        ("a,fileserver,write,,4k,,throughput,KB/s,NaN\n", "line 2: value 'NaN' is not a finite number"),
        ("a,fileserver,write,,4k,,throughput,KB/s,1e300\n", "line 2: value '1e300 KB/s' is past any throughput"),
        ("a,backup,backup,,,,extents,extents,0.5\n", "line 2: value '0.5': a count of extents is a whole number"),
    ];
    for (line, needle) in cases {
        let path = sb.dir.path().join("bad.csv");
        std::fs::write(&path, format!("{header}{line}")).unwrap();
        assert_usage_error(&sb.run(&["import", path.to_str().unwrap()]), needle);
    }
    let path = sb.dir.path().join("nounit.csv");
    std::fs::write(&path, "suite,test,metric,value\nfileserver,write,throughput,1\n").unwrap();
    assert_usage_error(&sb.run(&["import", "--format", "published", path.to_str().unwrap()]), "lacks unit");
    assert!(!sb.db().exists(), "a refused table opened the results database");
}

/// /dev/zero and a 10 GiB sparse file given as a published table: refused by the bounded reader
/// before a byte is parsed, exit 2.
#[test]
fn a_published_table_from_dev_zero_or_a_sparse_10_gib_file_is_refused() {
    let sb = Sandbox::new();
    let sparse = sb.dir.path().join("sparse-10g.csv");
    std::fs::File::create(&sparse).unwrap().set_len(10 << 30).unwrap();
    for (input, needle) in [(Path::new("/dev/zero"), "/dev/zero is a device"), (&sparse, "more than the import bound")]
    {
        let started = std::time::Instant::now();
        let out = sb.run(&["import", "--format", "published", input.to_str().unwrap()]);
        assert_usage_error(&out, needle);
        assert!(started.elapsed() < std::time::Duration::from_secs(5), "{input:?} took {:?}", started.elapsed());
    }
    assert!(!sb.db().exists());
}
