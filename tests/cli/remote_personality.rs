//! `run personality` on the lab's real servers (nfs-ganesha and Samba in a
//! network namespace, started by `lab/up`) through iomatrix's own NFSv3 and
//! SMB clients, one session per connection: every built-in at small scale,
//! locks refused on NFSv3 before any I/O and done on SMB, shared filesets
//! (varmail's spool; locks on shared files, and conflicts with a lock held
//! on the server counted), and open loop against closed loop on a link
//! shaped to 100 Mbit/s. Skipped with a
//! message where the lab cannot run (not root).

use crate::helpers::*;
use crate::lab_fixture::{left_behind, Lab, Shared};
use serde_json::Value;
use std::path::PathBuf;
use std::process::Output;

const BUILTINS: [&str; 5] = ["fileserver", "varmail", "webserver", "homefolders", "netware-2008"];

fn run_on(sb: &Sandbox, lab: &Lab, target: &str, args: &[&str]) -> Output {
    let mut cmd = sb.cmd();
    cmd.args(["run", "personality", "--target", target]).args(args);
    if target.starts_with("smb://") {
        cmd.env("IOMATRIX_SMB_PASSWORD_FILE", lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE"));
    }
    cmd.output().unwrap()
}

fn read_p99_ms(cell: &Value) -> f64 {
    cell["metrics"]["ops"]["read"]["p99_ns"].as_f64().unwrap() / 1e6
}

#[test]
fn every_builtin_personality_runs_on_the_lab_nfs_and_smb_servers() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    for (target, backend) in [(lab.var("IOMATRIX_LAB_NFS"), "nfs"), (lab.var("IOMATRIX_LAB_SMB"), "smb")] {
        for name in BUILTINS {
            let args = [name, "--scale", "small", "--connections", "2", "--files", "6", "--duration", "1s", "--verify"];
            let out = run_on(&sb, &lab, target, &args);
            assert_success(&out);
            let run = sb.last_run();
            assert!(run["run"]["conditions"]["cache"].as_str().unwrap().starts_with("no client cache"));
            for cell in cells(&run) {
                let m = &cell["metrics"];
                assert_eq!(cell["backend"], backend, "{name}");
                assert!(cell["ops"].as_u64().unwrap() > 0, "{name} on {backend}: {m}");
                assert_eq!(m["connections_failed"], 0, "{name} on {backend}: {}", cell["client_figures"]);
                for (o, s) in m["ops"].as_object().unwrap() {
                    assert!(s["errors"].as_object().unwrap().is_empty(), "{name} on {backend}: {o} {s}");
                }
                let v = &m["verify"];
                for kind in ["wrong_data", "wrong_offset", "stale", "torn"] {
                    assert_eq!(v[kind], 0, "{name} on {backend}: {v}");
                }
                if name == "homefolders" {
                    assert!(m["ops"]["rename"]["count"].as_u64().unwrap_or(0) > 0, "renames on {backend}: {m}");
                }
            }
        }
    }
    assert!(left_behind(&state).is_empty(), "nothing stays on the servers: {:?}", left_behind(&state));
}

#[test]
fn locks_are_refused_on_nfsv3_before_any_io_and_taken_on_smb() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    let file = sb.dir.path().join("locks.toml");
    std::fs::write(
        &file,
        "version = 1\nname = \"locks\"\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 3\nsize = { dist = \"fixed\", size = \"8k\" }\n\
         [[phase]]\nname = \"run\"\n[[phase.flow]]\nname = \"l\"\npick = \"next\"\n\
         ops = [{ op = \"open\" }, { op = \"lock\", size = \"8k\" }, { op = \"read\" }, { op = \"unlock\", size = \"8k\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let out = run_on(&sb, &lab, lab.var("IOMATRIX_LAB_NFS"), &[f, "--connections", "2"]);
    assert_usage_error(&out, "NFSv3 has no locks");
    assert_eq!(sb.runs_json()["runs"].as_array().map_or(0, Vec::len), 0, "refused before the run began");
    let out = run_on(&sb, &lab, lab.var("IOMATRIX_LAB_SMB"), &[f, "--connections", "2"]);
    assert_success(&out);
    let cell = &cells(&sb.last_run())[0];
    let ops = &cell["metrics"]["ops"];
    assert_eq!((ops["lock"]["count"].as_u64(), ops["unlock"]["count"].as_u64()), (Some(6), Some(6)), "{ops}");
    assert_eq!(ops["read"]["count"], 12, "3 files x 2 records x 2 connections");
    assert!(left_behind(&state).is_empty(), "{:?}", left_behind(&state));
}

/// A server behind a 100 Mbit/s link, asked for reads faster than the link
/// carries: closed loop waits for each answer and reports the link's
/// service time; open loop keeps the arrivals coming and reports the queue
/// that builds up from each request's intended start.
#[test]
fn open_loop_shows_the_queue_that_closed_loop_hides_on_a_slowed_link() {
    let Some(lab) = Lab::shared(Shared::Link100Mbit) else { return };
    let nfs = lab.var("IOMATRIX_LAB_NFS").to_string();
    let sb = Sandbox::new();
    let file = sb.dir.path().join("reads.toml");
    std::fs::write(
        &file,
        "version = 1\nname = \"reads\"\nrecord = \"64k\"\n[[fileset]]\nname = \"f\"\nfiles = 4\nsize = { dist = \"fixed\", size = \"256k\" }\n\
         [[phase]]\nname = \"run\"\nduration = \"3s\"\n[[phase.flow]]\nname = \"r\"\n\
         ops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    let f = file.to_str().unwrap();
    let started = std::time::Instant::now();
    let out = run_on(&sb, &lab, &nfs, &[f, "--connections", "2"]);
    assert_success(&out);
    let closed = cells(&sb.last_run())[0].clone();
    // 2 x 400 reads of 64 KiB a second: 52 MB/s asked of a 12 MB/s link.
    let out = run_on(&sb, &lab, &nfs, &[f, "--connections", "2", "--rate", "400"]);
    assert_success(&out);
    let open = cells(&sb.last_run())[0].clone();
    assert!(started.elapsed().as_secs() < 60, "both runs within a minute");
    let (c99, o99) = (read_p99_ms(&closed), read_p99_ms(&open));
    eprintln!("read p99: closed loop {c99:.1} ms, open loop at 400/s per connection {o99:.1} ms");
    assert_eq!(closed["metrics"]["loop"], "closed");
    assert_eq!(open["metrics"]["loop"], "open");
    assert_eq!(open["metrics"]["target_rate_per_connection"], 400.0);
    // Closed loop: a read takes its share of the link (64 KiB at 12 MB/s, two at once): milliseconds.
    assert!(c99 < 200.0, "closed-loop read p99 {c99:.1} ms");
    // Open loop: the queue grows all phase long; its reads wait for it.
    assert!(o99 > 500.0 && o99 > 10.0 * c99, "open-loop read p99 {o99:.1} ms vs closed {c99:.1} ms");
    let reads = &open["metrics"]["ops"]["read"];
    assert!(reads["late"].as_u64().unwrap() * 2 > reads["count"].as_u64().unwrap(), "most reads started late: {reads}");
    assert!(open["metrics"]["backlog"].as_u64().unwrap() > 0, "arrivals never issued are counted");
    // Both moved about what the link carries: the difference is in the latency, not the work.
    let (cb, ob) = (closed["kib_per_sec"].as_f64().unwrap(), open["kib_per_sec"].as_f64().unwrap());
    assert!(cb < 14_000.0 && ob < 14_000.0, "{cb} {ob} KB/s over 100 Mbit/s");
}

/// Files named `f*` (the engine's) under `dir`, counted.
fn engine_files(dir: &std::path::Path) -> u64 {
    let mut n = 0;
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            n += engine_files(&p);
        } else if p.file_name().is_some_and(|f| f.to_string_lossy().starts_with('f')) {
            n += 1;
        }
    }
    n
}

/// varmail's shared spool over NFS and SMB: every connection with its own
/// session, all in the client's one flat folder on the server; and on SMB
/// a flow that locks one of two shared files from four connections: the
/// claims keep any two from holding one file, so no lock is refused; with
/// one file locked on the server, its locks are counted as conflicts.
#[test]
fn shared_filesets_run_on_the_lab_nfs_and_smb_servers_and_their_locks_never_conflict() {
    let Some(lab) = Lab::shared(Shared::Unshaped) else { return };
    let state = PathBuf::from(lab.var("IOMATRIX_LAB_STATE"));
    let sb = Sandbox::new();
    for (target, dir) in [
        (lab.var("IOMATRIX_LAB_NFS"), lab.var("IOMATRIX_LAB_NFS_EXPORT_DIR")),
        (lab.var("IOMATRIX_LAB_SMB"), lab.var("IOMATRIX_LAB_SMB_SHARE_DIR")),
    ] {
        let args = ["varmail", "--scale", "small", "--files", "40", "--duration", "2s", "--verify", "--keep"];
        let out = run_on(&sb, &lab, target, &args);
        assert_success(&out);
        let cell = &cells(&sb.last_run())[0];
        let m = &cell["metrics"];
        assert_eq!(m["connections_failed"], 0, "{target}: {}", cell["client_figures"]);
        assert_eq!(cell["clients"], 4, "{target}");
        for (o, s) in m["ops"].as_object().unwrap() {
            assert!(s["errors"].as_object().unwrap().is_empty(), "{target}: {o} {s}");
        }
        for kind in ["wrong_data", "wrong_offset", "stale", "torn"] {
            assert_eq!(m["verify"][kind], 0, "{target}: {}", m["verify"]);
        }
        let count = |op: &str| m["ops"][op]["count"].as_u64().unwrap_or(0);
        assert!(count("create") > 0 && count("delete") > 0, "{target}: {m}");
        // On the server: the one spool, with what was made first + created - deleted.
        let kept = left_behind(std::path::Path::new(dir));
        assert_eq!(kept.len(), 1, "{kept:?}");
        let spool = kept[0].join("client-0/shared/r0/spool");
        assert_eq!(engine_files(&spool), 32 + count("create") - count("delete"), "{target}: {spool:?}");
        assert_eq!(engine_files(&kept[0]), engine_files(&spool), "{target}: no file outside the spool");
        std::fs::remove_dir_all(&kept[0]).unwrap();
    }
    let file = sb.dir.path().join("shared-locks.toml");
    std::fs::write(
        &file,
        "version = 1\nname = \"shared-locks\"\nconnections = 4\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 2\n\
         shared = true\nsize = { dist = \"fixed\", size = \"8k\" }\n[[phase]]\nname = \"run\"\nduration = \"1s\"\n\
         [[phase.flow]]\nname = \"l\"\n\
         ops = [{ op = \"open\" }, { op = \"lock\", size = \"8k\" }, { op = \"read\" }, { op = \"unlock\", size = \"8k\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    let out = run_on(&sb, &lab, lab.var("IOMATRIX_LAB_SMB"), &[file.to_str().unwrap()]);
    assert_success(&out);
    let cell = &cells(&sb.last_run())[0];
    let m = &cell["metrics"];
    let ops = &m["ops"];
    assert_eq!(m["connections_failed"], 0, "{}", cell["client_figures"]);
    assert!(ops["lock"]["errors"].as_object().unwrap().is_empty(), "{ops}");
    assert_eq!(m["lock_conflicts"], 0, "claims keep the connections' locks apart: {ops}");
    let locks = ops["lock"]["count"].as_u64().unwrap();
    // Every lock released, but where the phase ended between the two.
    let unlocks = ops["unlock"]["count"].as_u64().unwrap();
    assert!(locks > 4 && unlocks <= locks && unlocks + 4 >= locks, "{ops}");
    // Four connections on two files: some iterations found both claimed.
    assert!(m["idle_iterations"].as_u64().unwrap() > 0, "{m}");

    // A lock held on the server (a local OFD lock on the share's file, which Samba's POSIX
    // locking honours): the connections' locks of that file are refused, counted as conflicts,
    // not errors, and they go on with the other file.
    let share = PathBuf::from(lab.var("IOMATRIX_LAB_SMB_SHARE_DIR"));
    let mut cmd = sb.cmd();
    cmd.args([
        "run",
        "personality",
        "--target",
        lab.var("IOMATRIX_LAB_SMB"),
        file.to_str().unwrap(),
        "--duration",
        "3s",
    ])
    .env("IOMATRIX_SMB_PASSWORD_FILE", lab.var("IOMATRIX_LAB_SMB_PASSWORD_FILE"))
    .stdout(std::process::Stdio::null())
    .stderr(std::process::Stdio::piped());
    let mut child = Running(cmd.spawn().unwrap());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut holder: Option<std::fs::File> = None;
    while child.0.try_wait().unwrap().is_none() {
        assert!(std::time::Instant::now() < deadline, "the run went on past 60 s");
        if holder.is_none() {
            let first = left_behind(&share).first().map(|d| d.join("client-0/shared/r0/f/f000000"));
            // Once made before the phase (whole: 8k), not while it is being written.
            let made = first.filter(|p| std::fs::metadata(p).is_ok_and(|m| m.len() == 8192));
            if let Some(f) = made.and_then(|p| std::fs::OpenOptions::new().read(true).write(true).open(p).ok()) {
                if ofd_write_lock(&f) {
                    holder = Some(f);
                }
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    let status = wait_for_exit(&mut child);
    let mut said = String::new();
    if let Some(mut e) = child.0.stderr.take() {
        let _ = std::io::Read::read_to_string(&mut e, &mut said);
    }
    assert!(status.success(), "{status}: {said}");
    assert!(holder.is_some(), "the file was locked on the server during the run");
    drop(holder);
    let cell = &cells(&sb.last_run())[0];
    let m = &cell["metrics"];
    let ops = &m["ops"];
    assert_eq!(m["connections_failed"], 0, "{}", cell["client_figures"]);
    assert!(ops["lock"]["errors"].as_object().unwrap().is_empty(), "{ops}");
    assert!(ops["lock"]["conflicts"].as_u64().unwrap_or(0) > 0, "{ops}");
    assert_eq!(m["lock_conflicts"], ops["lock"]["conflicts"]);
    let shown = sb.run(&["show", &sb.last_run()["run"]["id"].to_string()]);
    assert!(text(&shown).0.contains("Lock conflicts (range held elsewhere)"), "{}", text(&shown).0);
    assert!(ops["lock"]["count"].as_u64().unwrap() > 0, "the other file still locked: {ops}");
    assert!(left_behind(&state).is_empty(), "{:?}", left_behind(&state));
}

/// An exclusive OFD lock on bytes 0..8k of `f`, without waiting: whether it was taken.
fn ofd_write_lock(f: &std::fs::File) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: a zeroed flock is a valid value; the fields used are set below.
    let mut fl: libc::flock = unsafe { std::mem::zeroed() };
    fl.l_type = libc::F_WRLCK as libc::c_short;
    fl.l_whence = libc::SEEK_SET as libc::c_short;
    fl.l_len = 8192;
    // SAFETY: the descriptor is open for the call; fcntl reads the flock passed.
    unsafe { libc::fcntl(f.as_raw_fd(), libc::F_OFD_SETLK, &fl) == 0 }
}
