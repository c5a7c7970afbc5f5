//! Runs Bonnie plans on real files in a temporary folder.

use iomatrix_bonnie::{
    client_folder, execute, planned_tests, report_for, BonniePlan, BonnieResult, BonnieTest, PerChar,
    BONNIE_PLUS_PER_CHAR, DATA_FILE, FILES_DIR,
};
use iomatrix_coord::{Ending, Group, Hooks, OnClientError, Setup};
use iomatrix_core::{ByteSize, KIB, MIB};
use std::path::{Path, PathBuf};
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

const SIZE: u64 = 8 * MIB;
const CHUNK: u64 = 8 * KIB;
const FILES: u64 = 200;

fn small_plan() -> BonniePlan {
    let mut plan = BonniePlan::new(ByteSize(SIZE));
    plan.chunk = ByteSize(CHUNK);
    plan.files = FILES;
    plan.seekers = 3;
    plan.seeks = 2000;
    plan.allow_cache = true;
    plan
}

/// Runs `plan` from one client, as `run bonnie` does, in `work/client-0`;
/// `sink` hears each test's figures. Returns the tests accepted and the ending.
fn run_one(
    plan: &BonniePlan,
    work: &Path,
    stop: &AtomicBool,
    mut sink: impl FnMut(&BonnieResult) -> Result<(), String>,
) -> (usize, Ending) {
    let hooks = Hooks::default();
    let setup = Setup {
        cells: planned_tests(plan).len(),
        workdir: Some(work),
        hooks: &hooks,
        on_error: OnClientError::Abort,
        stop,
    };
    execute(plan, &Group::Local(1), &setup, |cell| sink(&cell.total)).unwrap().unwrap()
}

/// The one client's folder.
fn folder(work: &Path) -> PathBuf {
    client_folder(work, 0)
}

fn is_empty(dir: &Path) -> bool {
    std::fs::read_dir(dir).unwrap().next().is_none()
}

#[test]
fn a_full_run_measures_every_test() {
    let work = tempfile::tempdir().unwrap();
    let plan = small_plan();
    plan.validate(u64::MAX).unwrap();
    let data = folder(work.path()).join(DATA_FILE);
    let files_dir = folder(work.path()).join(FILES_DIR);
    let mut results: Vec<BonnieResult> = Vec::new();
    let mut after_write: Option<Vec<u8>> = None;
    let mut rewrite_checked = false;
    let mut sink = |r: &BonnieResult| -> Result<(), String> {
        match r.test {
            BonnieTest::BlockWrite => after_write = Some(std::fs::read(&data).map_err(|e| e.to_string())?),
            BonnieTest::Rewrite => {
                let before = after_write.as_ref().ok_or("no block write before the rewrite")?;
                let after = std::fs::read(&data).map_err(|e| e.to_string())?;
                assert_eq!(after.len() as u64, SIZE, "rewrite changed the file size");
                for (i, (a, b)) in before.chunks(CHUNK as usize).zip(after.chunks(CHUNK as usize)).enumerate() {
                    let dirtied = i % CHUNK as usize;
                    for (k, (x, y)) in a.iter().zip(b).enumerate() {
                        if k == dirtied {
                            assert_eq!(*y, x.wrapping_add(1), "chunk {i}: byte {k} was not dirtied");
                        } else {
                            assert_eq!(x, y, "chunk {i}: byte {k} changed but only byte {dirtied} should");
                        }
                    }
                }
                rewrite_checked = true;
            }
            BonnieTest::SeqDelete | BonnieTest::RandomDelete => {
                assert!(!files_dir.exists(), "{} left the files folder behind", r.test);
            }
            BonnieTest::SeqCreate | BonnieTest::RandomCreate => {
                let n = std::fs::read_dir(&files_dir).map_err(|e| e.to_string())?.count() as u64;
                assert_eq!(n, FILES, "{} made {n} files", r.test);
            }
            _ => {}
        }
        results.push(r.clone());
        Ok(())
    };
    let stop = AtomicBool::new(false);
    assert_eq!(run_one(&plan, work.path(), &stop, &mut sink), (12, Ending::Completed));
    assert!(rewrite_checked);
    assert_eq!(results.iter().map(|r| (r.repeat, r.test)).collect::<Vec<_>>(), planned_tests(&plan));
    for r in &results {
        assert!(r.per_sec > 0.0 && r.per_sec.is_finite(), "{}: {} {}", r.test, r.per_sec, r.unit);
        assert!(r.wall_ns > 0, "{}", r.test);
        assert!(r.cpu_percent > 0.0 && r.cpu_percent.is_finite(), "{}: cpu {}", r.test, r.cpu_percent);
        assert_eq!(r.unit, r.test.unit());
        assert_eq!(r.writes, if r.test == BonnieTest::RandomSeeks { r.writes } else { 0 });
    }
    let get = |t: BonnieTest| results.iter().find(|r| r.test == t).unwrap();
    for t in [BonnieTest::PutcWrite, BonnieTest::GetcRead] {
        assert_eq!(get(t).ops, SIZE, "{t}: one call per byte");
        assert_eq!(get(t).bytes, SIZE);
    }
    for t in [BonnieTest::BlockWrite, BonnieTest::BlockRead, BonnieTest::Rewrite] {
        assert_eq!(get(t).bytes, SIZE, "{t}");
        assert_eq!(get(t).ops, SIZE / CHUNK, "{t}: one call per chunk");
        assert_eq!(get(t).unit, "KB/s");
    }
    let seeks = get(BonnieTest::RandomSeeks);
    assert_eq!(seeks.ops, 2000);
    // Tickets 0, 10, 20, ... write back: exactly one in ten.
    assert_eq!(seeks.writes, 200);
    assert_eq!(seeks.bytes, (2000 + 200) * CHUNK);
    assert_eq!(seeks.unit, "seeks/s");
    for t in BonnieTest::FILES {
        assert_eq!(get(t).ops, FILES, "{t}");
        assert_eq!(get(t).bytes, 0, "{t}: empty files");
        assert_eq!(get(t).unit, "files/s");
    }
    // The data file goes after the seeks, the files folder with the deletes.
    assert!(is_empty(&folder(work.path())));
    // The report has a line for the data tests and one for the file tests.
    let text = report_for("test", &plan, &results);
    assert_eq!(text.lines().count(), 8, "{text}");
    assert!(text.lines().nth(3).unwrap().starts_with("test             8M"), "{text}");
}

#[test]
fn a_stop_before_the_start_does_nothing() {
    let work = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(true);
    let started = Instant::now();
    let mut calls = 0;
    let outcome = run_one(&small_plan(), work.path(), &stop, |_| {
        calls += 1;
        Ok(())
    });
    assert_eq!(outcome, (0, Ending::Interrupted));
    assert_eq!(calls, 0);
    assert!(started.elapsed() < Duration::from_secs(1));
    assert!(is_empty(&folder(work.path())));
}

#[test]
fn a_stop_during_the_run_keeps_what_finished() {
    let work = tempfile::tempdir().unwrap();
    let stop = AtomicBool::new(false);
    let mut seen = Vec::new();
    let outcome = run_one(&small_plan(), work.path(), &stop, |r| {
        seen.push(r.test);
        if r.test == BonnieTest::BlockWrite {
            stop.store(true, std::sync::atomic::Ordering::SeqCst);
        }
        Ok(())
    });
    assert_eq!(outcome, (2, Ending::Interrupted));
    assert_eq!(seen, [BonnieTest::PutcWrite, BonnieTest::BlockWrite]);
}

#[test]
fn sized_files_synced_and_repeated() {
    let work = tempfile::tempdir().unwrap();
    let mut plan = BonniePlan::new(ByteSize(0));
    plan.files = 50;
    plan.file_max = ByteSize(64 * KIB);
    plan.file_min = ByteSize(KIB);
    plan.sync = true;
    plan.repeats = 2;
    plan.validate(u64::MAX).unwrap();
    let mut results = Vec::new();
    let outcome = run_one(&plan, work.path(), &AtomicBool::new(false), |r| {
        results.push(r.clone());
        Ok(())
    });
    assert_eq!(outcome, (12, Ending::Completed));
    for repeat in 1..=2 {
        let get = |t: BonnieTest| results.iter().find(|r| r.test == t && r.repeat == repeat).unwrap();
        for (create, stat) in
            [(BonnieTest::SeqCreate, BonnieTest::SeqStat), (BonnieTest::RandomCreate, BonnieTest::RandomStat)]
        {
            let made = get(create).bytes;
            assert!((50 * KIB..=50 * 64 * KIB).contains(&made), "{create}: {made} bytes");
            assert_ne!(made, 50 * KIB, "{create}: sizes should vary");
            assert_eq!(get(stat).bytes, made, "{stat} reads what {create} wrote");
            assert_eq!(get(stat).ops, 50);
        }
    }
    assert!(is_empty(&folder(work.path())));
}

#[test]
fn direct_block_tests_where_the_file_system_allows() {
    let work = tempfile::tempdir().unwrap();
    if iomatrix_backend::probe_direct(work.path()).is_err() {
        return iomatrix_testkit::skip(format!("{} refuses O_DIRECT", work.path().display()));
    }
    let mut plan = small_plan();
    plan.size = ByteSize(4 * MIB);
    plan.chunk = ByteSize(64 * KIB);
    plan.direct = true;
    plan.skip_per_char = true;
    plan.files = 0;
    plan.seeks = 100;
    plan.validate(0).unwrap();
    let mut results = Vec::new();
    let outcome = run_one(&plan, work.path(), &AtomicBool::new(false), |r| {
        results.push(r.clone());
        Ok(())
    });
    assert_eq!(outcome, (4, Ending::Completed));
    assert_eq!(
        results.iter().map(|r| r.test).collect::<Vec<_>>(),
        [BonnieTest::BlockWrite, BonnieTest::Rewrite, BonnieTest::BlockRead, BonnieTest::RandomSeeks]
    );
    assert!(results.iter().all(|r| r.per_sec > 0.0));
    assert_eq!(results[3].writes, 10);
}

#[test]
fn failures_say_what_and_where() {
    let work = tempfile::tempdir().unwrap();
    // The data file's name taken by a folder: the first test cannot open it.
    let data = folder(work.path()).join(DATA_FILE);
    std::fs::create_dir_all(&data).unwrap();
    let failed = |outcome: (usize, Ending)| match outcome {
        (0, Ending::ClientFailed { cell: 0, failures }) => failures[0].message.clone(),
        other => panic!("expected the first test to fail, got {other:?}"),
    };
    let err = failed(run_one(&small_plan(), work.path(), &AtomicBool::new(false), |_| Ok(())));
    assert!(err.starts_with("putc open") && err.contains(&data.display().to_string()), "{err}");
    assert!(err.contains("Is a directory"), "{err}");
    std::fs::remove_dir(&data).unwrap();
    let outcome = run_one(&small_plan(), work.path(), &AtomicBool::new(false), |_| Err("disk full".into()));
    assert_eq!(outcome, (0, Ending::SinkFailed("disk full".into())));
    let mut bad = small_plan();
    bad.chunk = ByteSize(0);
    let err = failed(run_one(&bad, work.path(), &AtomicBool::new(false), |_| Ok(())));
    assert!(err.contains("chunk size 0"), "{err}");
}

/// bonnie++ 2.00a's per-char tests: its first 3 MiB, one byte per system
/// call (byte j & 0x7f at offset j of each chunk), then fsync; Bonnie's go
/// over the whole file.
#[test]
fn per_char_styles_cover_what_they_say() {
    let work = tempfile::tempdir().unwrap();
    let mut plan = small_plan();
    plan.files = 0;
    plan.set_per_char(PerChar::BonniePlus);
    assert_eq!(plan.per_char_size, Some(BONNIE_PLUS_PER_CHAR));
    let data = folder(work.path()).join(DATA_FILE);
    let mut after_putc = None;
    let mut results = Vec::new();
    let stop = AtomicBool::new(false);
    run_one(&plan, work.path(), &stop, |r| {
        if r.test == BonnieTest::PutcWrite {
            after_putc = Some(std::fs::read(&data).map_err(|e| e.to_string())?);
        }
        results.push(r.clone());
        Ok(())
    });
    let written = after_putc.expect("no putc result");
    assert_eq!(written.len() as u64, 3 * MIB, "bonnie++ writes its first 3 MiB per char");
    assert!(written.iter().enumerate().all(|(i, &b)| b == ((i as u64 % CHUNK) & 0x7f) as u8));
    for test in [BonnieTest::PutcWrite, BonnieTest::GetcRead] {
        let r = results.iter().find(|r| r.test == test).unwrap();
        assert_eq!((r.bytes, r.ops), (3 * MIB, 3 * MIB), "{test}");
    }
    // Smaller than 3 MiB: the whole file; Bonnie's style: the whole file too.
    let mut plan = small_plan();
    plan.size = ByteSize(MIB);
    plan.files = 0;
    plan.set_per_char(PerChar::BonniePlus);
    assert_eq!(plan.per_char_bytes(), MIB);
    plan.set_per_char(PerChar::Bonnie);
    plan.per_char_size = None;
    assert_eq!(plan.per_char_bytes(), MIB);
    let work = tempfile::tempdir().unwrap();
    let mut bytes = Vec::new();
    run_one(&plan, work.path(), &stop, |r| {
        if r.test.is_per_char() {
            bytes.push(r.bytes);
        }
        Ok(())
    });
    assert_eq!(bytes, [MIB, MIB]);
}
