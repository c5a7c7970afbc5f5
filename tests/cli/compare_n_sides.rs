//! `compare A B C ...` and `report` with N sides (issue 34): one table with every side as a
//! column against the baseline, built from the pairwise compare (each row equal to the
//! two-sided compare's of that pair), the refusals, and seed 002's shape: 4 storage types x 4
//! variants (4 file systems on loop-mounted images x 4 mount-option variants, small Bonnie
//! runs), compared and reported as 16 sides, the HTML checked in headless Chromium.

use crate::helpers::*;
use crate::stored::*;
use serde_json::Value;
use std::process::Command;
use std::time::{Duration, Instant};

/// The verdict words of the two-sided compare, the only ones a cell may carry.
const VERDICTS: [&str; 4] = ["faster", "slower", "within noise", "no verdict"];

/// The two-sided compare's figures of a pair (`compare BASE OTHER --json`), by row name:
/// (A, B, % change, verdict) of every matrix cell and scalar row.
fn pairwise(sb: &Sandbox, base: &str, other: &str) -> std::collections::BTreeMap<String, (f64, f64, f64, String)> {
    let doc = json_of(&sb.run(&["compare", base, other, "--json"]));
    assert_eq!(doc["schema"], "iomatrix.compare/2");
    let c = &doc["comparison"];
    let mut rows = std::collections::BTreeMap::new();
    for s in c["scalars"].as_array().unwrap() {
        rows.insert(
            format!("{} ({})", s["metric"].as_str().unwrap(), s["unit"].as_str().unwrap()),
            (
                s["a"].as_f64().unwrap(),
                s["b"].as_f64().unwrap(),
                s["change_pct"].as_f64().unwrap_or(f64::NAN),
                s["verdict"]["verdict"].as_str().unwrap().to_string(),
            ),
        );
    }
    for (m, verdicts) in c["matrices"].as_array().unwrap().iter().zip(c["matrix_verdicts"].as_array().unwrap()) {
        for (i, f) in m["file_sizes"].as_array().unwrap().iter().enumerate() {
            for (j, r) in m["record_sizes"].as_array().unwrap().iter().enumerate() {
                let Some(ratio) = m["ratios"][i][j].as_f64() else { continue };
                let name = format!(
                    "{} {}/{} ({})",
                    m["test"].as_str().unwrap(),
                    size(f.as_u64().unwrap()),
                    size(r.as_u64().unwrap()),
                    m["unit"].as_str().unwrap()
                );
                let verdict = verdicts[i][j]["verdict"].as_str().unwrap().to_string();
                rows.insert(name, (f64::NAN, f64::NAN, (ratio - 1.0) * 100.0, verdict));
            }
        }
    }
    rows
}

fn size(bytes: u64) -> String {
    match bytes {
        b if b >= 1 << 20 && b % (1 << 20) == 0 => format!("{}m", b >> 20),
        b if b % 1024 == 0 => format!("{}k", b >> 10),
        b => b.to_string(),
    }
}

/// Every row of an N-sided compare's JSON, checked against the pairwise compare of its
/// baseline with each other side: same value, same % change, same verdict.
fn agrees_with_pairwise(sb: &Sandbox, doc: &Value, given: &[&str]) {
    let sides = doc["sides"].as_array().unwrap();
    let base_letter = doc["baseline"].as_str().unwrap();
    let base = sides.iter().position(|s| s["letter"] == base_letter).unwrap();
    let rows = doc["rows"].as_array().unwrap();
    assert!(!rows.is_empty(), "{doc}");
    for (i, _) in sides.iter().enumerate().filter(|(i, _)| *i != base) {
        let pair = pairwise(sb, given[base], given[i]);
        let mut seen = 0;
        for row in rows {
            let name = format!("{} ({})", row["metric"].as_str().unwrap(), row["unit"].as_str().unwrap());
            let cell = &row["cells"][i];
            let Some((a, b, change, verdict)) = pair.get(&name) else {
                assert!(cell.is_null(), "{name}: side {i} has a cell the pairwise compare does not: {cell}");
                continue;
            };
            seen += 1;
            let base_cell = &row["cells"][base];
            assert!(base_cell["change_pct"].is_null() && base_cell["verdict"].is_null(), "{name}: {base_cell}");
            if a.is_finite() {
                assert!(close(base_cell["value"].as_f64().unwrap(), *a), "{name}: baseline {base_cell} vs {a}");
                assert!(close(cell["value"].as_f64().unwrap(), *b), "{name}: {cell} vs {b}");
            }
            let got = cell["change_pct"].as_f64().unwrap_or(f64::NAN);
            assert!(close(got, *change) || (got.is_nan() && change.is_nan()), "{name}: {got} vs {change}");
            assert_eq!(cell["verdict"]["verdict"].as_str().unwrap(), verdict, "{name}");
            assert!(VERDICTS.contains(&verdict.as_str()));
        }
        assert_eq!(seen, pair.len(), "every row of the pair {} against {} is in the table", given[i], given[base]);
    }
}

#[test]
fn compare_with_three_sides_gives_one_table_of_every_side_against_the_baseline() {
    let sb = Sandbox::new();
    for sys in ["sys=a", "sys=b", "sys=c"] {
        iozone_run(&sb, &[sys], "64k");
    }
    let given = ["sys=a", "sys=b", "sys=c"];
    let doc = json_of(&sb.run(&["compare", "sys=a", "sys=b", "sys=c", "--json"]));
    assert_eq!(doc["schema"], "iomatrix.compare/3");
    assert_eq!(doc["baseline"], "A");
    let names: Vec<&str> = doc["sides"].as_array().unwrap().iter().map(|s| s["name"].as_str().unwrap()).collect();
    assert_eq!(names, given);
    assert_eq!(doc["pairs"].as_array().unwrap().len(), 2, "A against B, A against C");
    // 2 tests x 1 file x 2 records, each with its %CPU row: every cell has all three sides.
    let rows = doc["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 8, "{doc}");
    assert_eq!(rows.iter().filter(|r| r["metric"].as_str().unwrap().ends_with("%CPU")).count(), 4, "{doc}");
    assert!(rows.iter().all(|r| r["cells"].as_array().unwrap().iter().all(|c| !c.is_null())));
    agrees_with_pairwise(&sb, &doc, &given);

    // The text: one table, the sides as columns, each with its change against A and a verdict.
    let (stdout, _) = text(&sb.run(&["compare", "sys=a", "sys=b", "sys=c"]));
    assert!(stdout.starts_with("compare (iozone suite), 3 sides against the baseline A;"), "{stdout}");
    assert!(stdout.contains("  A = sys=a (runs #1), the baseline\n  B = sys=b (runs #2)\n  C = sys=c (runs #3)\n"));
    let header = stdout.lines().find(|l| l.starts_with("metric")).expect("the table's header");
    for column in ["A", "B", "vs A", "C", "verdict"] {
        assert!(header.split_whitespace().any(|w| w == column || column.contains(' ')), "{header}");
    }
    assert_eq!(header.matches("vs A").count(), 2, "{header}");
    let table: Vec<&str> = stdout.lines().skip_while(|l| !l.starts_with("metric")).skip(1).take(4).collect();
    for line in &table {
        assert_eq!(line.matches("no verdict").count(), 2, "one sample a side: {line}");
    }
    // Ratio matrices per pair, headed by the pair's names.
    assert!(stdout.contains("== B (sys=b) against the baseline A (sys=a)"), "{stdout}");
    assert!(stdout.contains("== C (sys=c) against the baseline A (sys=a)"), "{stdout}");
    assert!(stdout.contains("read: C/A of KB/s"), "{stdout}");

    // --baseline by name and by position: B is the baseline, A and C against it.
    for baseline in ["sys=b", "2"] {
        let doc = json_of(&sb.run(&["compare", "sys=a", "sys=b", "sys=c", "--baseline", baseline, "--json"]));
        assert_eq!(doc["baseline"], "B");
        agrees_with_pairwise(&sb, &doc, &given);
    }
    // --fail-if-slower holds every side to the baseline; one sample a side checks nothing: exit 6,
    // each side named.
    let out = sb.run(&["compare", "sys=a", "sys=b", "sys=c", "--fail-if-slower", "5%"]);
    assert_eq!(out.status.code(), Some(6), "{}", text(&out).1);
    let (stdout, stderr) = text(&out);
    assert!(stderr.contains("B against A: --fail-if-slower 5%: not checked") && stderr.contains("C against A:"));
    assert!(stdout.contains("\nC against A:\n--fail-if-slower 5%: NOT CHECKED"), "{stdout}");
    // The report with --baseline: every other group against it, and its table of every side.
    let page = sb.dir.path().join("based.json");
    assert_success(&sb.run(&[
        "report",
        "sys=a",
        "sys=b",
        "sys=c",
        "--baseline",
        "sys=c",
        "-o",
        page.to_str().unwrap(),
    ]));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&page).unwrap()).unwrap();
    let pairs: Vec<(&str, &str)> = report["comparisons"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["a"].as_str().unwrap(), c["b"].as_str().unwrap()))
        .collect();
    assert_eq!(pairs, [("sys=c", "sys=a"), ("sys=c", "sys=b")]);
    assert_eq!(report["sides"]["baseline"], "C");
    let doc = json_of(&sb.run(&["compare", "sys=a", "sys=b", "sys=c", "--baseline", "3", "--json"]));
    assert_eq!(report["sides"]["rows"], doc["rows"]);
    // Two sides with --baseline 2 print exactly what the sides given the other way round print.
    let swapped = sb.run(&["compare", "sys=a", "sys=b", "--baseline", "sys=b"]);
    assert_success(&swapped);
    assert_eq!(swapped.stdout, sb.run(&["compare", "sys=b", "sys=a"]).stdout);
}

#[test]
fn compare_refuses_an_unknown_baseline_a_run_on_two_sides_and_a_side_alone() {
    let sb = Sandbox::new();
    for sys in ["sys=a", "sys=b", "sys=c"] {
        iozone_run(&sb, &[sys], "64k");
    }
    let out = sb.run(&["compare", "sys=a", "sys=b", "sys=c", "--baseline", "sys=d"]);
    assert_usage_error(&out, "--baseline sys=d: no side is given as 'sys=d'");
    let (_, stderr) = text(&out);
    assert!(stderr.contains("1 (sys=a), 2 (sys=b), 3 (sys=c)"), "the message names the sides: {stderr}");
    for nothing in ["4", "0", "", "99999999999999999999999"] {
        let out = sb.run(&["compare", "sys=a", "sys=b", "sys=c", "--baseline", nothing]);
        assert_usage_error(&out, &format!("--baseline {nothing}: no side is given as '{nothing}'"));
    }
    // The report takes --baseline alike, and refuses alike.
    let page = sb.dir.path().join("r.md");
    let out = sb.run(&["report", "sys=a", "sys=b", "-o", page.to_str().unwrap(), "--baseline", "sys=d"]);
    assert_usage_error(&out, "--baseline sys=d: no side is given as 'sys=d'");
    assert!(!page.exists());
    // "3" is both the run given as 3 and the side at position 3: ambiguous.
    assert_usage_error(&sb.run(&["compare", "3", "sys=a", "sys=b", "--baseline", "3"]), "both the side given as '3'");
    // Run #1 is sys=a and on a side of its own.
    assert_usage_error(&sb.run(&["compare", "sys=a", "1,2", "sys=c"]), "run #1 is on two sides, 1 ('sys=a') and 2");
    assert_usage_error(&sb.run(&["compare", "1", "2", "1"]), "run #1 is on two sides");
    assert_usage_error(&sb.run(&["compare", "sys=a"]), "compare needs two sides or more, got 1");
    // Two sides keep today's meaning: a run against itself is all noise, not refused.
    assert_success(&sb.run(&["compare", "1", "1"]));
}

/// Seed 002's shape: its 4 storage types x 4 file-system variants (EXT3, NSS, NSS aligned, NSS
/// VMI kernel on local, VMFS/iSCSI, NFS and RDM/iSCSI storage) as 4 file systems on
/// loop-mounted images x 4 mount-option variants, one small Bonnie run each; compare and report
/// the 16 as sides.
#[test]
fn sixteen_sides_in_seed_002s_shape_compare_in_one_table_and_report_in_every_chart() {
    const STORAGE: [&str; 4] = ["ext3", "ext4", "xfs", "btrfs"];
    // Each variant remounts with the options named, and undoes the others'.
    const VARIANTS: [(&str, &str); 4] = [
        ("relatime", "relatime,nolazytime"),
        ("noatime", "noatime,nolazytime"),
        ("strictatime", "strictatime,nolazytime"),
        ("lazytime", "relatime,lazytime"),
    ];
    let begun = Instant::now();
    let sb = Sandbox::new();
    let mut sides = Vec::new();
    for storage in STORAGE {
        // xfs needs 300 MiB at least; the images are sparse.
        let Some(fs) = Mount::image(storage, 300) else { return };
        let point = fs.point.to_str().unwrap().to_string();
        for (variant, options) in VARIANTS {
            let remount = Command::new("mount").args(["-o", &format!("remount,{options}"), &point]).output().unwrap();
            assert!(remount.status.success(), "{storage} {options}: {}", String::from_utf8_lossy(&remount.stderr));
            let label = format!("storage={storage},variant={variant}");
            let out = sb.run(&[
                "run",
                "bonnie",
                "--target",
                &point,
                "--size",
                "4m",
                "--ram",
                "2m",
                "--files",
                "1",
                "--fast",
                "--repeat",
                "4",
                "--label",
                &format!("storage={storage}"),
                "--label",
                &format!("variant={variant}"),
            ]);
            assert_success(&out);
            sides.push(label);
        }
    }
    let given: Vec<&str> = sides.iter().map(String::as_str).collect();
    let mut args = vec!["compare"];
    args.extend(&given);
    let doc = json_of(&sb.run(&[args.as_slice(), &["--json"]].concat()));
    assert_eq!(doc["schema"], "iomatrix.compare/3");
    assert_eq!(doc["sides"].as_array().unwrap().len(), 16);
    let letters: Vec<&str> = doc["sides"].as_array().unwrap().iter().map(|s| s["letter"].as_str().unwrap()).collect();
    assert_eq!(letters.concat(), "ABCDEFGHIJKLMNOP");
    // Bonnie --fast: 10 tests, every one measured on every side.
    let rows = doc["rows"].as_array().unwrap();
    assert!(rows.len() >= 10, "{} rows", rows.len());
    for row in rows {
        let cells = row["cells"].as_array().unwrap();
        assert_eq!(cells.len(), 16);
        for c in &cells[1..] {
            let verdict = c["verdict"]["verdict"].as_str().unwrap_or_else(|| panic!("{row}"));
            // Four samples a side: the rank test can reach its level in every cell.
            assert!(VERDICTS[..3].contains(&verdict), "{verdict}: {row}");
            assert!(c["change_pct"].is_number() || c["change_pct"].is_null(), "{c}");
        }
    }
    agrees_with_pairwise(&sb, &doc, &given);
    // Each pair names what differs: the mount options, and for other storage the file system.
    let pairs = doc["pairs"].as_array().unwrap();
    let differs = |k: usize, name: &str| {
        pairs[k]["comparison"]["environment_differences"].as_array().unwrap().iter().any(|d| d["name"] == name)
    };
    assert!(differs(0, "target.mount_options"), "{}", pairs[0]["comparison"]["environment_differences"]);
    assert!(differs(14, "target.fs_type"), "{}", pairs[14]["comparison"]["environment_differences"]);

    // --fail-if-slower: every side against the baseline; the outcome is the worst pair's.
    let gate = sb.run(&[args.as_slice(), &["--fail-if-slower", "5%", "--json"]].concat());
    let gated: Value = serde_json::from_slice(&gate.stdout).unwrap();
    let outcomes: Vec<&str> =
        gated["pairs"].as_array().unwrap().iter().map(|p| p["fail_if_slower"]["outcome"].as_str().unwrap()).collect();
    assert_eq!(outcomes.len(), 15);
    let (worst, code) = match () {
        _ if outcomes.contains(&"slower") => ("slower", 5),
        _ if outcomes.contains(&"not checked") => ("not checked", 6),
        _ => ("passed", 0),
    };
    assert_eq!(gated["fail_if_slower"]["outcome"], worst, "{outcomes:?}");
    assert_eq!(gate.status.code(), Some(code), "{outcomes:?}");

    let (stdout, _) = text(&sb.run(&args));
    assert!(stdout.starts_with("compare (bonnie suite), 16 sides against the baseline A;"), "{stdout}");
    let header = stdout.lines().find(|l| l.starts_with("metric")).expect("one table");
    assert_eq!(header.matches("vs A").count(), 15, "{header}");
    for (letter, name) in letters.iter().zip(&given) {
        assert!(stdout.contains(&format!("  {letter} = {name} (runs ")), "{letter} = {name}");
    }
    assert_eq!(stdout.lines().filter(|l| l.starts_with("metric")).count(), 1, "one table of every side");

    // The report's other formats take the same 16 groups: the table of every side in Markdown
    // and JSON, and in the workbook a chart per figure with a bar per side.
    let path = |name: &str| sb.dir.path().join(name).to_str().unwrap().to_string();
    let made = |file: &str| {
        assert_success(&sb.run(&[&["report"], given.as_slice(), &["-o", &path(file)]].concat()));
        path(file)
    };
    let md = std::fs::read_to_string(made("sixteen.md")).unwrap();
    let header = md.lines().find(|l| l.starts_with("| metric |")).expect("the table of every side");
    assert_eq!(header.matches(" | vs A | verdict").count(), 15, "{header}");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(made("sixteen.json")).unwrap()).unwrap();
    assert_eq!(json["sides"]["rows"], doc["rows"], "the report's table is compare's");
    assert_eq!(json["comparisons"].as_array().unwrap().len(), 15);
    let mut zip = zip::ZipArchive::new(std::fs::File::open(made("sixteen.xlsx")).unwrap()).unwrap();
    let charts: Vec<String> = (0..zip.len())
        .filter_map(|i| {
            let mut entry = zip.by_index(i).unwrap();
            let name = entry.name().unwrap().to_string();
            name.starts_with("xl/charts/chart").then(|| {
                let mut xml = String::new();
                std::io::Read::read_to_string(&mut entry, &mut xml).unwrap();
                xml
            })
        })
        // The cells' figures over time have charts of their own ("over time" sheet).
        .filter(|xml| !xml.contains("ops/s over time"))
        .collect();
    // The workbook charts the figures; their %CPU rows are in its tables.
    let figures = rows.iter().filter(|r| !r["metric"].as_str().unwrap().ends_with("%CPU")).count();
    assert_eq!(charts.len(), figures, "one chart per figure");
    for xml in &charts {
        // Categories: the 16 group names of the figures sheet's header (C1:R1).
        assert!(xml.contains("<c:f>figures!$C$1:$R$1</c:f>"), "{xml}");
        assert_eq!(xml.matches("<c:ser>").count(), 1, "one series, a bar per side");
    }

    // The HTML report of the same 16 sides: every system's name in every side-by-side chart,
    // as Chromium renders the page.
    if !have("chromium") {
        return skip("the 16-side HTML report check needs Debian's chromium (apt-get install chromium)");
    }
    let page = sb.dir.path().join("sixteen.html");
    let mut report = vec!["report"];
    report.extend(&given);
    report.extend(["-o", page.to_str().unwrap()]);
    assert_success(&sb.run(&report));
    let profile = sb.dir.path().join("chromium-profile");
    let mut dump = Command::new("chromium");
    dump.args(["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--dump-dom"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .arg(format!("file://{}", page.display()));
    let out = bounded_child(dump, Duration::from_secs(90));
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let dom = String::from_utf8_lossy(&out.stdout);
    let side_by_side = dom.split("Configurations side by side").nth(1).expect("the side-by-side charts");
    let side_by_side = side_by_side.split("<h2>").next().unwrap();
    let charts: Vec<&str> = side_by_side.split("<svg").skip(1).map(|c| c.split("</svg>").next().unwrap()).collect();
    assert!(charts.len() >= 10, "one chart per Bonnie figure: {}", charts.len());
    for chart in &charts {
        let title = chart.split("font-weight=\"bold\">").nth(1).and_then(|t| t.split('<').next()).unwrap_or("");
        for name in &given {
            assert!(chart.contains(&format!(">{name}<")), "{name} is not in the chart {title}");
        }
    }
    assert!(begun.elapsed() < Duration::from_secs(300), "{:?}: the test is meant to be quick", begun.elapsed());
}

/// `sweep --rows cluster` names its systems `cluster=x`; compare and report name the same runs'
/// sides by the same words where the sides are given as run ids.
#[test]
fn sweep_rows_and_compare_name_the_systems_alike() {
    let sb = Sandbox::new();
    let mut level_1 = Vec::new();
    for cluster in ["x", "y", "z"] {
        for level in ["1", "2"] {
            let id = iozone_run(&sb, &[&format!("cluster={cluster}"), &format!("level={level}")], "64k");
            if level == "1" {
                level_1.push(id.to_string());
            }
        }
    }
    let sweep =
        json_of(&sb.run(&["sweep", "1", "2", "3", "4", "5", "6", "--by", "level", "--rows", "cluster", "--json"]));
    let swept: std::collections::BTreeSet<String> = sweep["systems"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["cell"].as_str().unwrap().split(' ').find(|w| w.starts_with("cluster=")).map(str::to_string))
        .collect();
    assert_eq!(swept.iter().map(String::as_str).collect::<Vec<_>>(), ["cluster=x", "cluster=y", "cluster=z"]);
    let ids: Vec<&str> = level_1.iter().map(String::as_str).collect();
    let doc = json_of(&sb.run(&[&["compare"], ids.as_slice(), &["--json"]].concat()));
    let named: std::collections::BTreeSet<String> = doc["sides"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            let labels = s["labels"].as_array().unwrap();
            assert_eq!(labels.len(), 1, "level=1 is every side's: not a name: {s}");
            labels[0].as_str().unwrap().to_string()
        })
        .collect();
    assert_eq!(named, swept);
    let (stdout, _) = text(&sb.run(&[&["compare"], ids.as_slice()].concat()));
    assert!(stdout.contains(&format!("  A = {} (runs #{}), the baseline: cluster=x\n", ids[0], ids[0])), "{stdout}");
    assert!(stdout.contains(&format!("  C = {} (runs #{}): cluster=z\n", ids[2], ids[2])), "{stdout}");
    // Given by those labels, a side is named by them alone.
    let (stdout, _) = text(&sb.run(&["compare", "cluster=x,level=1", "cluster=y,level=1", "cluster=z,level=1"]));
    assert!(stdout.contains("  B = cluster=y,level=1 (runs #3)\n"), "{stdout}");
    // The report's table of every side names them alike.
    let md = sb.dir.path().join("sides.md");
    assert_success(&sb.run(&[&["report"], ids.as_slice(), &["-o", md.to_str().unwrap()]].concat()));
    let md = std::fs::read_to_string(&md).unwrap();
    let header = md.lines().find(|l| l.starts_with("| metric |")).expect("the table of every side");
    for (letter, (id, cluster)) in ["A", "B", "C"].iter().zip(ids.iter().zip(["x", "y", "z"])) {
        assert!(header.contains(&format!("{letter} = {id} (cluster={cluster})")), "{header}");
    }
}
