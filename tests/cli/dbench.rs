//! dbench load files replayed (crates/personality/src/dbench): the real `client.txt` of
//! Debian's dbench package on tmpfs and on the lab's Samba and nfs-ganesha.

use crate::helpers::{skip, Mount};
use crate::lab_fixture::{Lab, Shared};
use iomatrix_personality::dbench::{
    cleanup_connection, replay_connection, Live, LoadFile, LocalFs, Pacing, RemoteReplayFs, ReplayFigures,
    ReplayOptions,
};
use std::path::Path;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

/// Debian's dbench package ships it.
const CLIENT_TXT: &str = "/usr/share/dbench/client.txt";

/// The real load file, or its first `lines` lines; None (a skip) without dbench.
fn client_txt(lines: Option<usize>) -> Option<LoadFile> {
    if !Path::new(CLIENT_TXT).is_file() {
        skip(format!("{CLIENT_TXT} is missing (Debian's dbench package)"));
        return None;
    }
    Some(match lines {
        None => LoadFile::read(Path::new(CLIENT_TXT)).unwrap(),
        Some(n) => {
            let text = std::fs::read_to_string(CLIENT_TXT).unwrap();
            let head: String = text.lines().take(n).flat_map(|l| [l, "\n"]).collect();
            LoadFile::parse(&head, CLIENT_TXT).unwrap()
        }
    })
}

fn once(connection: usize) -> ReplayOptions {
    ReplayOptions {
        connection,
        pacing: Pacing::AsFastAsPossible,
        deadline: None,
        stop_on_mismatch: false,
        series_interval_ns: 1_000_000_000,
    }
}

fn summary(f: &ReplayFigures) -> String {
    let ops: Vec<String> = f
        .ops
        .iter()
        .map(|o| format!("{} {} (mismatches {}, errors {:?})", o.name, o.count, o.mismatches, o.errors_by_kind))
        .collect();
    format!("{} ops, {:.1} MB/s, {:?}; first mismatches {:#?}", f.ops_done(), f.mb_per_s(), ops, f.examples)
}

#[test]
fn the_real_client_txt_replays_once_on_tmpfs_with_every_status_as_windows_answered() {
    let Some(load) = client_txt(None) else { return };
    let mnt = match Mount::try_virtual_fs("tmpfs", "size=512m") {
        Ok(m) => m,
        Err(why) => return skip(why),
    };
    let mut files = LocalFs::new(&mnt.point).unwrap();
    let live = Live::default();
    let f = replay_connection(&load, &mut files, &once(0), &live, &AtomicBool::new(false));
    assert_eq!(f.passes, 1);
    assert_eq!(f.ops_done(), load.ops.len() as u64, "{}", summary(&f));
    assert_eq!(live.ops.load(std::sync::atomic::Ordering::Relaxed), f.ops_done());
    assert_eq!(f.mismatches(), 0, "{}", summary(&f));
    // The file's own mix: every operation it names was done, as often as it names it.
    for (name, want) in [("NTCreateX", 79230), ("ReadX", 124199), ("WriteX", 39502), ("LockX", 258), ("Rename", 3355)] {
        let op = f.op(name).unwrap_or_else(|| panic!("{name}: {}", summary(&f)));
        assert_eq!(op.count, want, "{name}");
        assert_eq!(op.latency.count(), want, "{name}: every operation timed");
    }
    let written: u64 = f.op("WriteX").unwrap().bytes;
    assert!(written > 100 << 20, "WriteX moved {written} bytes");
    assert!(f.examples.is_empty());
    cleanup_connection(&mut files, 0).unwrap();
    assert_eq!(std::fs::read_dir(&mnt.point).unwrap().count(), 0, "clients/ removed");
}

#[test]
fn a_time_limit_loops_the_file_and_connections_keep_to_their_own_folders() {
    let Some(load) = client_txt(Some(3000)) else { return };
    let dir = tempfile::tempdir().unwrap();
    let deadline = Instant::now() + Duration::from_secs(2);
    let figures: Vec<ReplayFigures> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..2)
            .map(|c| {
                let (load, root) = (&load, dir.path());
                s.spawn(move || {
                    let mut files = LocalFs::new(root).unwrap();
                    let opts = ReplayOptions { deadline: Some(deadline), ..once(c) };
                    replay_connection(load, &mut files, &opts, &Live::default(), &AtomicBool::new(false))
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    assert!(Instant::now() < deadline + Duration::from_secs(5), "ended near the deadline");
    for (c, f) in figures.iter().enumerate() {
        assert!(f.passes >= 2, "connection {c} looped: {} passes", f.passes);
        // Two connections on one folder, each in its own clients/clientN: no status departs.
        assert_eq!(f.mismatches(), 0, "connection {c}: {}", summary(f));
    }
    // Where the deadline stopped them, only their own folders are there.
    let made: Vec<String> = std::fs::read_dir(dir.path().join("clients"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(made.iter().all(|n| n == "client0" || n == "client1"), "{made:?}");
    let mut files = LocalFs::new(dir.path()).unwrap();
    cleanup_connection(&mut files, 0).unwrap();
    cleanup_connection(&mut files, 1).unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn timestamps_pace_the_replay_and_late_operations_are_counted() {
    let dir = tempfile::tempdir().unwrap();
    let text = "0.0 Mkdir \"\\clients\" NT_STATUS_OK\n\
                0.0 NTCreateX \"\\clients\\client1\" 0x1 0x2 1 NT_STATUS_OK\n\
                0.0 NTCreateX \"\\clients\\client1\\f\" 0x40 0x2 2 NT_STATUS_OK\n\
                0.3 WriteX 2 0 4096 4096 NT_STATUS_OK\n\
                0.6 Close 2 NT_STATUS_OK\n\
                0.6 QUERY_PATH_INFORMATION \"\\clients\\client1\\g\" 1004 NT_STATUS_OK\n\
                0.6 Close 1 NT_STATUS_OK\n";
    let load = LoadFile::parse(text, "paced").unwrap();
    let mut files = LocalFs::new(dir.path()).unwrap();
    let started = Instant::now();
    let paced = replay_connection(
        &load,
        &mut files,
        &ReplayOptions { pacing: Pacing::Timestamps, ..once(0) },
        &Live::default(),
        &AtomicBool::new(false),
    );
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(600) && took < Duration::from_secs(3), "{took:?}");
    // The one line whose status cannot hold here: g is not there (the trace's server had it).
    assert_eq!(paced.mismatches(), 1, "{}", summary(&paced));
    let q = paced.op("QUERY_PATH_INFORMATION").unwrap();
    assert_eq!((q.mismatches, q.errors_by_kind.get("ENOENT").copied()), (1, Some(1)));
    assert_eq!(paced.examples[0].line, 6);
    assert_eq!(paced.examples[0].expected, "NT_STATUS_OK");
    assert!(paced.examples[0].got.starts_with("ENOENT"), "{:?}", paced.examples[0]);
    cleanup_connection(&mut files, 0).unwrap();

    let started = Instant::now();
    let fast = replay_connection(&load, &mut files, &once(0), &Live::default(), &AtomicBool::new(false));
    assert!(started.elapsed() < Duration::from_millis(300), "as fast as possible ignores the timestamps");
    assert_eq!(fast.ops_done(), 7);
    cleanup_connection(&mut files, 0).unwrap();

    // Stopping at the first mismatch, when asked.
    let strict = ReplayOptions { stop_on_mismatch: true, ..once(0) };
    let stopped = replay_connection(&load, &mut files, &strict, &Live::default(), &AtomicBool::new(false));
    assert_eq!(stopped.ops_done(), 6, "the Close after line 6 was not done");
    let why = stopped.stopped.unwrap();
    assert!(why.contains("line 6") && why.contains("NT_STATUS_OK"), "{why}");
    cleanup_connection(&mut files, 0).unwrap();
}

#[test]
fn local_byte_range_locks_conflict_between_opens() {
    use iomatrix_personality::dbench::{Disposition, ReplayFs, Want};
    let dir = tempfile::tempdir().unwrap();
    let mut files = LocalFs::new(dir.path()).unwrap();
    let a = files.open("f", Disposition::Create, Want::File).unwrap();
    let b = files.open("f", Disposition::Open, Want::File).unwrap();
    files.lock(a, 0, 10).unwrap();
    assert_eq!(files.lock(b, 5, 1).unwrap_err().kind(), std::io::ErrorKind::WouldBlock);
    files.unlock(a, 0, 10).unwrap();
    files.lock(b, 5, 1).unwrap();
    files.close(a).unwrap();
    files.close(b).unwrap();
}

/// The first lines of client.txt on one protocol session; the figures.
fn replay_remote(fs: &mut dyn iomatrix_backend::RemoteFs, load: &LoadFile) -> ReplayFigures {
    let mut files = RemoteReplayFs::new(fs, "");
    let f = replay_connection(load, &mut files, &once(0), &Live::default(), &AtomicBool::new(false));
    cleanup_connection(&mut files, 0).unwrap();
    f
}

#[test]
fn client_txt_replays_on_the_labs_samba_and_nfs_ganesha_and_what_nfs_cannot_do_is_counted() {
    // Its first 3000 lines: every kind of operation but Deltree's second, each with every flag and
    // status the first 20000 lines give it (the last new one is at line 2785), in seconds over both.
    // The whole file replays on tmpfs (the_real_client_txt_replays_once_on_tmpfs_...).
    let Some(load) = client_txt(Some(3000)) else { return };
    assert_eq!(shapes(3000), shapes(20_000), "the head replayed holds every kind of line of the first 20000");
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let timeout = Duration::from_secs(30);
    let password = std::fs::read_to_string(lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE")).unwrap();
    let smb =
        iomatrix_smb::SmbUrl::parse(lab.var("IOMATRIX_LAB_SMB"), || Ok(Some(password.trim().to_string()))).unwrap();
    let f = replay_remote(&mut iomatrix_smb::SmbFs::connect(&smb, timeout).unwrap(), &load);
    assert_eq!(f.ops_done(), load.ops.len() as u64);
    assert_eq!(f.mismatches(), 0, "Samba answers as Windows did: {}", summary(&f));
    assert!(f.op("LockX").is_some_and(|o| o.count > 0 && o.mismatches == 0), "{}", summary(&f));

    let nfs = iomatrix_nfs::NfsUrl::parse(lab.var("IOMATRIX_LAB_NFS")).unwrap();
    let f = replay_remote(&mut iomatrix_nfs::NfsFs::connect(&nfs, timeout).unwrap(), &load);
    assert_eq!(f.ops_done(), load.ops.len() as u64);
    // NFSv3 has no byte-range locks: every LockX and UnlockX is a mismatch, named; nothing else is.
    let (lock, unlock) = (f.op("LockX").unwrap(), f.op("UnlockX").unwrap());
    assert!(lock.count > 0 && lock.mismatches == lock.count && unlock.mismatches == unlock.count, "{}", summary(&f));
    assert_eq!(lock.errors_by_kind.get("EOPNOTSUPP"), Some(&lock.count));
    assert_eq!(f.mismatches(), lock.count + unlock.count, "{}", summary(&f));
    assert!(crate::lab_fixture::left_behind(Path::new(lab.var("IOMATRIX_LAB_STATE"))).is_empty());
}

/// The kinds of line among client.txt's first `lines`: each operation with the flags (`0x...`) and
/// the status it is traced with; names, handles, offsets and sizes aside.
fn shapes(lines: usize) -> std::collections::BTreeSet<String> {
    let text = std::fs::read_to_string(CLIENT_TXT).unwrap();
    let shape = |line: &str| {
        let mut words = line.split_whitespace();
        let op = words.next().unwrap_or_default();
        let kept = words.filter(|w| w.starts_with("0x") || w.starts_with("NT_STATUS"));
        std::iter::once(op).chain(kept).collect::<Vec<_>>().join(" ")
    };
    text.lines().take(lines).map(shape).collect()
}

/// The first `lines` lines of client.txt as a file in `dir`; None (a skip) without dbench.
fn client_txt_head(dir: &Path, lines: usize) -> Option<std::path::PathBuf> {
    if !Path::new(CLIENT_TXT).is_file() {
        skip(format!("{CLIENT_TXT} is missing (Debian's dbench package)"));
        return None;
    }
    let text = std::fs::read_to_string(CLIENT_TXT).unwrap();
    let head: String = text.lines().take(lines).flat_map(|l| [l, "\n"]).collect();
    let path = dir.join(format!("client-{lines}.txt"));
    std::fs::write(&path, head).unwrap();
    Some(path)
}

/// The stored replay cell of run `run`.
fn replay_cell(sb: &crate::helpers::Sandbox, run: i64) -> serde_json::Value {
    let cells = crate::helpers::cells(&sb.show_json(run));
    assert_eq!(cells.len(), 1, "one replay cell");
    cells[0].clone()
}

#[test]
fn run_personality_replays_a_load_file_through_the_harness_and_compare_reads_it_per_operation() {
    use crate::helpers::{assert_success, text, Sandbox};
    let sb = Sandbox::new();
    let Some(file) = client_txt_head(sb.dir.path(), 5000) else { return };
    // tmpfs where this may mount one; the temporary folder otherwise (the same replay either way).
    let mnt = Mount::try_virtual_fs("tmpfs", "size=256m").ok();
    let target = mnt.as_ref().map_or_else(|| sb.target(), |m| m.point.clone());
    let file = file.to_str().unwrap();
    let args =
        ["run", "personality", "--dbench-loadfile", file, "--target", target.to_str().unwrap(), "--connections", "2"];
    let looped = sb.run(&[&args[..], &["--duration", "2s"]].concat());
    assert_success(&looped);
    let (said, progress) = text(&looped);
    assert!(progress.contains("0 status mismatch(es)"), "the cell's line: {progress}");
    assert!(said.contains("Status mismatches (the load file's status not met) 0"), "{said}");
    let once = sb.run(&[&args[..], &["--as-fast-as-possible"]].concat());
    assert_success(&once);

    let c = replay_cell(&sb, 1);
    let m = &c["metrics"];
    assert_eq!((m["phase"].as_str(), m["loop"].as_str()), (Some("replay"), Some("replay")));
    assert_eq!(m["dbench"]["mismatches"], 0, "{m}");
    assert!(m["dbench"]["mb_per_s"].as_f64().unwrap() > 0.0);
    assert_eq!(c["clients"], 2, "two connections");
    let created = m["ops"]["NTCreateX"]["count"].as_u64().unwrap();
    let once_created = replay_cell(&sb, 2)["metrics"]["ops"]["NTCreateX"]["count"].as_u64().unwrap();
    // 2 connections once through 5000 lines: the file's NTCreateX lines, twice; looped for 2 s: more.
    let in_file = std::fs::read_to_string(file).unwrap().lines().filter(|l| l.starts_with("NTCreateX")).count() as u64;
    assert_eq!(once_created, 2 * in_file);
    assert!(created > once_created, "looped for 2 s: {created} NTCreateX, once through: {once_created}");
    assert!(m["ops"]["ReadX"]["p99_ns"].as_u64().unwrap() > 0, "latency percentiles stored");
    assert!(m["fairness"]["jain"].as_f64().unwrap() > 0.5);
    // Nothing left behind: clients/ and the run's folder removed.
    assert!(crate::helpers::leftovers(&target).is_empty(), "{:?}", crate::helpers::leftovers(&target));

    let (shown, _) = text(&sb.run(&["show", "1"]));
    for needle in
        ["replay phase of dbench client-5000.txt", "QUERY_PATH_INFORMATION", "Status mismatches", "as dbench counts"]
    {
        assert!(shown.contains(needle), "show lacks '{needle}':\n{shown}");
    }
    let compared = sb.run(&["compare", "1", "2"]);
    assert_success(&compared);
    let (compared, _) = text(&compared);
    assert!(compared.contains("NTCreateX rate (ops/s)") && compared.contains("FIND_FIRST p99 (ms)"), "{compared}");
}

#[test]
fn a_bad_load_file_or_flags_that_do_not_go_with_it_are_usage_errors() {
    use crate::helpers::{assert_usage_error, Sandbox};
    let sb = Sandbox::new();
    let bad = sb.dir.path().join("bad.txt");
    std::fs::write(
        &bad,
        "Deltree \"\\clients\\client1\" NT_STATUS_OK\nNTCreatX \"\\clients\\a\" 0x0 0x2 1 NT_STATUS_OK\n",
    )
    .unwrap();
    let target = sb.target();
    let t = target.to_str().unwrap();
    let run = |extra: &[&str]| sb.run(&[&["run", "personality", "--target", t][..], extra].concat());
    assert_usage_error(
        &run(&["--dbench-loadfile", bad.to_str().unwrap()]),
        "line 2: unknown operation 'NTCreatX': did you mean NTCreateX?",
    );
    assert_usage_error(&run(&["--dbench-loadfile", "/nonexistent/client.txt"]), "cannot read it");
    let good = sb.dir.path().join("good.txt");
    std::fs::write(&good, "QUERY_FS_INFORMATION 1 NT_STATUS_OK\n").unwrap();
    let g = good.to_str().unwrap();
    assert_usage_error(&run(&["varmail", "--dbench-loadfile", g]), "not both");
    assert_usage_error(&run(&["--dbench-loadfile", g, "--rate", "10"]), "--rate shapes a personality's flows");
    assert_usage_error(
        &run(&["varmail", "--as-fast-as-possible"]),
        "--as-fast-as-possible goes with --dbench-loadfile",
    );
    assert!(!sb.db().exists() || sb.runs_json()["runs"].as_array().unwrap().is_empty(), "nothing stored");
}

#[test]
fn run_personality_replays_on_the_labs_servers_and_nfs_lock_lines_are_counted_mismatches() {
    use crate::helpers::{assert_success, Sandbox};
    let sb = Sandbox::new();
    // 3000 lines: LockX and UnlockX appear from line 2784.
    let Some(file) = client_txt_head(sb.dir.path(), 3000) else { return };
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let file = file.to_str().unwrap();
    let smb = sb
        .cmd()
        .args(["run", "personality", "--dbench-loadfile", file, "--target", lab.var("IOMATRIX_LAB_SMB")])
        .env("IOMATRIX_SMB_PASSWORD_FILE", lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE"))
        .output()
        .unwrap();
    assert_success(&smb);
    let m = replay_cell(&sb, 1)["metrics"].clone();
    assert_eq!(m["dbench"]["mismatches"], 0, "Samba answers as the traced server did: {}", m["dbench"]);
    assert!(m["ops"]["LockX"]["count"].as_u64().unwrap() > 0);

    let nfs = sb.run(&["run", "personality", "--dbench-loadfile", file, "--target", lab.var("IOMATRIX_LAB_NFS")]);
    assert_success(&nfs);
    let (_, warned) = crate::helpers::text(&nfs);
    assert!(warned.contains("LockX/UnlockX lines will fail") && warned.contains("NLM"), "{warned}");
    let conditions = &sb.show_json(2)["run"]["conditions"];
    assert!(conditions["known_limits"].as_str().is_some_and(|k| k.contains("NFSv3 has no")), "{conditions}");
    let m = replay_cell(&sb, 2)["metrics"].clone();
    let locks = m["ops"]["LockX"]["count"].as_u64().unwrap() + m["ops"]["UnlockX"]["count"].as_u64().unwrap();
    assert!(locks > 0);
    assert_eq!(m["dbench"]["mismatches"], locks, "only the lock lines: NFSv3 has none: {}", m["dbench"]);
    assert_eq!(m["ops"]["LockX"]["errors"]["EOPNOTSUPP"], m["ops"]["LockX"]["count"]);
    let example = m["dbench"]["examples"][0].as_str().unwrap();
    assert!(example.contains("LockX") && example.contains("NLM"), "{example}");
    assert!(crate::lab_fixture::left_behind(Path::new(lab.var("IOMATRIX_LAB_STATE"))).is_empty());
}

#[test]
fn a_stop_is_heard_during_a_long_gap_between_timestamps() {
    let dir = tempfile::tempdir().unwrap();
    let load =
        LoadFile::parse("0.0 QUERY_FS_INFORMATION 1 NT_STATUS_OK\n30.0 QUERY_FS_INFORMATION 1 NT_STATUS_OK\n", "gap")
            .unwrap();
    let mut files = LocalFs::new(dir.path()).unwrap();
    let stop = AtomicBool::new(false);
    let started = Instant::now();
    let f = std::thread::scope(|s| {
        s.spawn(|| {
            std::thread::sleep(Duration::from_millis(200));
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
        });
        let opts = ReplayOptions { pacing: Pacing::Timestamps, ..once(0) };
        replay_connection(&load, &mut files, &opts, &Live::default(), &stop)
    });
    assert!(started.elapsed() < Duration::from_secs(2), "stopped in the gap: {:?}", started.elapsed());
    assert_eq!((f.ops_done(), f.stopped.as_deref()), (1, Some("stopped")));
}

#[test]
fn a_replay_whose_files_cannot_fit_is_refused_before_any_io() {
    use crate::helpers::{assert_usage_error, Sandbox};
    if !Path::new(CLIENT_TXT).is_file() {
        return skip(format!("{CLIENT_TXT} is missing (Debian's dbench package)"));
    }
    let Some(mnt) = Mount::virtual_fs("tmpfs", "size=64m") else { return };
    let sb = Sandbox::new();
    // client.txt writes up to 23 MiB per connection: 50 connections cannot fit in 64 MiB.
    let target = mnt.point.to_str().unwrap();
    let out =
        sb.run(&["run", "personality", "--dbench-loadfile", CLIENT_TXT, "--target", target, "--connections", "50"]);
    assert_usage_error(&out, "free, but this plan needs");
    assert!(crate::helpers::leftovers(&mnt.point).is_empty());
}
