//! The viewer (`iomatrix serve`, issue 53) in a real browser: headless Chromium driven through
//! Debian's chromedriver by Selenium (tests/viewer/drive.py), over a database made by real runs of
//! every suite (viewer_fixture.rs). Each step reads a page's `pre` and the command line in its
//! `code#cli`, runs that command and checks that the page shows exactly what it prints, takes a
//! screenshot (target/viewer-shots/, and docs/viewer/ with IOMATRIX_SHOTS=docs, for
//! docs/viewer.md) and fails on any error in the browser's console (drive.py).

use crate::helpers::{bounded_child, png_colours, skip, Mount, Sandbox};
use crate::viewer_fixture::{assert_same_text, run_cli_line, Fixture, Serve, SYSTEMS};
use serde_json::{json, Value};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

const PYTHON: &str = "/usr/bin/python3";

/// Can Selenium drive Chromium here? (Debian's chromium, chromium-driver and python3-selenium.)
fn browser_ready() -> bool {
    let missing: Vec<&str> = [("/usr/bin/chromedriver", "chromium-driver"), ("/usr/bin/chromium", "chromium")]
        .into_iter()
        .filter(|(path, _)| !Path::new(path).exists())
        .map(|(_, package)| package)
        .collect();
    let selenium = Command::new(PYTHON).args(["-c", "import selenium"]).output().is_ok_and(|o| o.status.success());
    if missing.is_empty() && selenium {
        return true;
    }
    skip(format!(
        "the viewer's browser tests need Debian's chromium, chromium-driver and python3-selenium \
         (missing: {missing:?}, selenium importable by {PYTHON}: {selenium})"
    ));
    false
}

/// Runs `steps` in one browser session (drive.py) and returns each step's result; fails the
/// test with the driver's error and the console when a step failed or the console had an error.
fn drive(steps: &[Value]) -> Vec<Value> {
    // One browser at a time: each is a few hundred MB and a CPU's worth while it starts, and the
    // rest of the suite runs beside it on CI's 2 cores. A test that failed holding it poisoned it.
    static ONE_BROWSER: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_BROWSER.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/viewer/drive.py");
    let mut cmd = Command::new(PYTHON);
    cmd.arg(script).arg(json!({ "steps": steps, "limit": 200 }).to_string());
    // drive.py kills its browser past 200 s; this is the bound on drive.py itself.
    let out = bounded_child(cmd, Duration::from_secs(240));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "drive.py printed no JSON ({e}):\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        report["ok"] == true && out.status.success(),
        "the browser failed: {}\nconsole: {}\nresults so far: {}",
        report["error"],
        report["console"],
        report["results"]
    );
    if let Some(first_try) = report.get("retried_after") {
        eprintln!("browser: the first page did not load in a first browser, and did in a second: {first_try}");
    }
    eprintln!("browser: {} steps in {} s", steps.len(), report["seconds"]);
    report["results"].as_array().unwrap().clone()
}

/// Where the tests' screenshots go: target/viewer-shots/NAME.png.
fn shot(name: &str) -> String {
    // The binary is target/debug/iomatrix: its folder's parent is the target folder.
    let target = Path::new(env!("CARGO_BIN_EXE_iomatrix")).parent().unwrap().parent().unwrap();
    target.join("viewer-shots").join(format!("{name}.png")).to_str().unwrap().to_string()
}

/// A screenshot the browser took shows a page (its size, more than a few colours: not blank),
/// and is copied to docs/viewer/ when IOMATRIX_SHOTS=docs.
fn check_shot(name: &str) {
    let path = PathBuf::from(shot(name));
    let ((width, height), colours) = png_colours(&path);
    eprintln!("{}: {width}x{height}, {} colours", path.display(), colours.len());
    assert!(width >= 1000 && height >= 600, "{}: {width}x{height}", path.display());
    assert!(colours.len() >= 8, "{} looks blank: {} colours", path.display(), colours.len());
    if std::env::var("IOMATRIX_SHOTS").as_deref() == Ok("docs") {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/viewer");
        std::fs::create_dir_all(&docs).unwrap();
        std::fs::copy(&path, docs.join(format!("{name}.png"))).unwrap();
    }
}

/// The page's `pre` (result `pre_at`) against the command its `code#cli` (result `cli_at`) names.
fn check_against_cli(what: &str, results: &[Value], pre_at: usize, cli_at: usize) -> String {
    let line = results[cli_at].as_str().unwrap_or_else(|| panic!("{what}: no code#cli text"));
    let page = results[pre_at].as_str().unwrap_or_else(|| panic!("{what}: no pre text"));
    assert_same_text(what, page, &run_cli_line(line));
    line.to_string()
}

/// The ids of the fixture's runs, in the order they were stored (`runs --json`).
fn fixture_ids(db: &Path) -> Vec<i64> {
    let sb_cmd =
        Command::new(env!("CARGO_BIN_EXE_iomatrix")).arg("--db").arg(db).args(["runs", "--json"]).output().unwrap();
    let runs: Value = serde_json::from_slice(&sb_cmd.stdout).expect("runs --json is JSON");
    runs["runs"].as_array().unwrap().iter().map(|r| r["id"].as_i64().unwrap()).collect()
}

#[test]
fn the_runs_page_shows_what_runs_prints_and_filters_as_it_does() {
    if !browser_ready() {
        return;
    }
    let Some(fixture) = Fixture::get() else { return };
    let Some(serve) = Serve::start(&fixture.db(), &[]) else { return };
    let ids = fixture_ids(&fixture.db());
    let results = drive(&[
        json!({"open": serve.page("/runs")}),
        json!({"text": "pre#runs"}),
        json!({"text": "code#cli"}),
        json!({"count": "table#runs tr.run"}),
        json!({"screenshot": shot("runs")}),
        json!({"fill": {"form": "form#filter", "fields": {"suite": "iozone", "label": "sys=a"}}}),
        json!({"click": "button#apply", "navigates": true}),
        json!({"text": "pre#runs"}),
        json!({"text": "code#cli"}),
        json!({"count": "table#runs tr.run"}),
        json!({"screenshot": shot("runs-filtered")}),
    ]);
    check_against_cli("the runs page", &results, 1, 2);
    // A row per run the text lists (the first page of them, if the page is shorter than the list).
    let listed = results[1]
        .as_str()
        .unwrap()
        .lines()
        .filter(|l| l.split_whitespace().next().is_some_and(|w| w.parse::<i64>().is_ok()))
        .count();
    assert_eq!(results[3], listed, "a row per run listed: {}", results[1]);
    assert!(listed >= ids.len().min(20), "{listed} of {} runs on the first page", ids.len());
    check_shot("runs");
    let filtered_url = results[6].as_str().unwrap();
    assert!(filtered_url.contains("suite=iozone") && filtered_url.contains("label=sys%3Da"), "{filtered_url}");
    let line = check_against_cli("the filtered runs page", &results, 7, 8);
    assert!(line.contains("--suite=iozone") && line.contains("sys=a"), "the filter's command line: {line}");
    assert_eq!(results[9], 2, "two iozone runs are labelled sys=a: {}", results[7]);
    check_shot("runs-filtered");
}

#[test]
fn three_runs_picked_on_the_runs_page_open_their_compare() {
    if !browser_ready() {
        return;
    }
    let Some(fixture) = Fixture::get() else { return };
    let Some(serve) = Serve::start(&fixture.db(), &[]) else { return };
    // The fixture's second to fourth runs: IOzone's one plan, labelled sys=a, b and c.
    let ids = fixture_ids(&fixture.db());
    let (a, b, c) = (ids[1], ids[2], ids[3]);
    let pick = |id: i64| json!({"check": format!("form#pick input.pick[name=side][value=\"{id}\"]")});
    let results = drive(&[
        json!({"open": serve.page("/runs?suite=iozone")}),
        pick(a),
        pick(b),
        pick(c),
        json!({"check": format!("form#pick input[name=baseline][value=\"{a}\"]")}),
        json!({"click": "button#compare-picked", "navigates": true}),
        json!({"text": "pre#compare"}),
        json!({"text": "code#cli"}),
        json!({"svg_text_overlaps": "svg"}),
        json!({"screenshot": shot("compare")}),
    ]);
    let url = results[5].as_str().unwrap();
    for part in [format!("side={a}"), format!("side={b}"), format!("side={c}"), format!("baseline={a}")] {
        assert!(url.contains(&part), "the compare page's address {url} lacks {part}");
    }
    let line = check_against_cli("the compare page", &results, 6, 7);
    // The three sides in any order, the baseline named; a side may be written #ID (compare's way
    // to tell a run id from a position).
    let words: Vec<String> = line.replace(['#', '\''], "").split_whitespace().map(str::to_string).collect();
    let compare = words.iter().position(|w| w == "compare").unwrap_or_else(|| panic!("no compare in {line}"));
    let baseline = words.iter().position(|w| w == "--baseline").unwrap_or_else(|| panic!("no --baseline in {line}"));
    let mut sides: Vec<&str> = words[compare + 1..baseline].iter().map(String::as_str).collect();
    sides.sort_unstable();
    let mut picked = [a.to_string(), b.to_string(), c.to_string()];
    picked.sort_unstable();
    assert_eq!(sides, picked, "the sides of {line}");
    assert_eq!(words[baseline + 1], a.to_string(), "the baseline of {line}");
    let overlaps = &results[8];
    eprintln!("compare's charts: {overlaps}");
    assert_eq!(overlaps["overlaps"], json!([]), "labels overlap in compare's charts: {overlaps}");
    check_shot("compare");
}

#[test]
fn a_compare_of_sixteen_systems_keeps_every_label_apart() {
    if !browser_ready() {
        return;
    }
    let Some(fixture) = Fixture::get() else { return };
    let Some(serve) = Serve::start(&fixture.db(), &[]) else { return };
    let ids = fixture_ids(&fixture.db());
    let systems = &ids[ids.len() - SYSTEMS..];
    let sides: Vec<String> = systems.iter().map(|id| format!("side={id}")).collect();
    let results = drive(&[
        json!({"open": serve.page(&format!("/compare?{}&baseline={}", sides.join("&"), systems[0]))}),
        json!({"text": "pre#compare"}),
        json!({"text": "code#cli"}),
        json!({"svg_text_overlaps": "svg"}),
        json!({"screenshot": shot("compare-16")}),
    ]);
    check_against_cli("the compare of 16 systems", &results, 1, 2);
    let charts = &results[3];
    eprintln!("16 systems' charts: {charts}");
    assert!(charts["charts"].as_u64().unwrap() >= 1, "the compare of 16 systems has no chart: {charts}");
    assert_eq!(charts["overlaps"], json!([]), "labels overlap in the 16 systems' charts: {charts}");
    check_shot("compare-16");
}

#[test]
fn a_runs_page_and_its_history_show_what_show_and_history_print() {
    if !browser_ready() {
        return;
    }
    let Some(fixture) = Fixture::get() else { return };
    let Some(serve) = Serve::start(&fixture.db(), &[]) else { return };
    // The first IOzone run: its plan has four runs (sys=a twice, b, c).
    let run = fixture_ids(&fixture.db())[0];
    let results = drive(&[
        json!({"open": serve.page(&format!("/run/{run}"))}),
        json!({"text": "pre#show"}),
        json!({"text": "code#cli"}),
        json!({"count": "a.download"}),
        json!({"screenshot": shot("run")}),
        json!({"click": "a#history-link", "navigates": true}),
        json!({"text": "pre#history"}),
        json!({"text": "code#cli"}),
        json!({"svg_text_overlaps": "svg#history-chart"}),
        json!({"screenshot": shot("history")}),
    ]);
    let line = check_against_cli("the run's page", &results, 1, 2);
    assert!(line.contains(&format!("show {run}")), "{line}");
    assert!(results[3].as_u64().unwrap() >= 4, "downloads: HTML, XLSX, CSV and JSON: {}", results[3]);
    check_shot("run");
    assert!(results[5].as_str().unwrap().contains(&format!("/history/{run}")), "{}", results[5]);
    let line = check_against_cli("the history page", &results, 6, 7);
    assert!(line.contains(&format!("history {run}")), "{line}");
    let chart = &results[8];
    assert_eq!(chart["charts"], 1, "one svg#history-chart: {chart}");
    assert!(chart["boxes"].as_u64().unwrap() > 0, "the history chart has no text: {chart}");
    assert_eq!(chart["overlaps"], json!([]), "labels overlap in the history chart: {chart}");
    check_shot("history");
}

/// The live run's block sizes: one cell each, "8k" no substring of the others.
const LIVE_SIZES: [&str; 3] = ["8k", "16k", "64k"];

/// Starts a timed access run of three 2 s cells (about 6 s) writing to `db`, and waits (at most
/// 30 s) until the run is stored: the run and its id.
fn start_live_run(sb: &Sandbox, db: &Path, target: &Path) -> (crate::helpers::Running, i64) {
    let before = fixture_ids(db);
    let mut run = crate::helpers::Running(
        sb.cmd()
            .env("IOMATRIX_DB", db)
            .args(["run", "access", "--target", target.to_str().unwrap(), "--bs", &LIVE_SIZES.join(",")])
            .args(["--read", "100", "--random", "100", "--qd", "1", "--file-size", "1m", "--duration", "2s"])
            .args(["--label", "sys=live"])
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    let begun = Instant::now();
    loop {
        if let Some(id) = fixture_ids(db).into_iter().find(|id| !before.contains(id)) {
            return (run, id);
        }
        assert!(run.0.try_wait().unwrap().is_none(), "the live run ended before it was stored");
        assert!(begun.elapsed() < Duration::from_secs(30), "the live run was not stored within 30 s");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until `path` exists, at most `limit`, while `driver` (the browser's thread) still runs:
/// a driver that ended early is joined, so its failure is the test's.
fn wait_for_browser(path: &Path, driver: &std::thread::JoinHandle<Vec<Value>>, limit: Duration) {
    let begun = Instant::now();
    while !path.exists() {
        assert!(!driver.is_finished(), "the browser ended before it was ready");
        assert!(begun.elapsed() < limit, "the browser was not ready within {limit:?}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_live_run_is_watched_in_the_browser_to_its_end() {
    if !browser_ready() {
        return;
    }
    let Some(fixture) = Fixture::get() else { return };
    // A copy: the run writes to it while the other tests read the shared database.
    let sb = Sandbox::new();
    let db = fixture.copy_into(sb.dir.path());
    let Some(serve) = Serve::start(&db, &[]) else { return };
    let mount = Mount::try_virtual_fs("tmpfs", "size=16m").ok();
    let target = mount.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    // The browser starts first (seconds on a loaded machine), then the run: the page must open
    // while the run runs. The browser says it is up in `ready`; the test writes the page's
    // address into `go` once the run is stored.
    let (ready, go) = (sb.dir.path().join("browser-ready"), sb.dir.path().join("browser-go"));
    let steps = vec![
        json!({"touch": ready}),
        json!({"open_when_written": {"path": go, "timeout": 120}}),
        json!({"text": "#live-state"}),
        json!({"screenshot": shot("live-running")}),
        json!({"wait_text": {"css": "#live-state", "text": "complete", "timeout": 90}}),
        json!({"text": "pre#live-cells"}),
        json!({"text": "code#cli"}),
        json!({"text": "#live-line"}),
        json!({"screenshot": shot("live-complete")}),
    ];
    let driver = std::thread::spawn(move || drive(&steps));
    wait_for_browser(&ready, &driver, Duration::from_secs(120));
    let (mut run, id) = start_live_run(&sb, &db, &target);
    let begun = Instant::now();
    let written = sb.dir.path().join("browser-go.new");
    std::fs::write(&written, serve.page(&format!("/live/{id}"))).unwrap();
    std::fs::rename(&written, &go).unwrap();
    let results = driver.join().unwrap_or_else(|e| std::panic::resume_unwind(e));
    let status = crate::helpers::wait_for_exit(&mut run);
    assert!(status.success(), "the live run: {status:?}");
    eprintln!(
        "live: first state {:?}, complete seen {:.1} s after the page's address",
        results[2],
        begun.elapsed().as_secs_f64()
    );
    assert_eq!(results[2].as_str().map(str::trim), Some("running"), "the page opened while the run ran");
    check_shot("live-running");
    let cells = results[5].as_str().unwrap();
    for size in LIVE_SIZES {
        assert!(cells.contains(size), "pre#live-cells lacks the {size} cell:\n{cells}");
    }
    // The page's cells are those `watch ID --once` prints (its code#cli) now that the run ended.
    let line = results[6].as_str().unwrap();
    assert!(line.contains(&format!("watch {id}")), "{line}");
    let watched = run_cli_line(line);
    assert!(watched.contains(cells.trim_matches('\n')), "pre#live-cells is not in `{line}`:\n{cells}\n---\n{watched}");
    check_shot("live-complete");
    drop(serve);
    drop(mount);
}
