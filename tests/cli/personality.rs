//! `run personality` on local folders: every built-in at small scale, the
//! same work as `run fileserver` for `netware-2008`, bad files refused with
//! their line, `personalities list|show`, and personality runs through
//! `show`, `compare` and `report` like any suite's.
use crate::helpers::*;
use serde_json::Value;

const BUILTINS: [&str; 5] = ["fileserver", "varmail", "webserver", "homefolders", "netware-2008"];

fn personality(sb: &Sandbox, args: &[&str]) -> Value {
    let target = sb.target();
    let out = sb.run(&[&["run", "personality", "--target", target.to_str().unwrap()][..], args].concat());
    assert_success(&out);
    sb.last_run()
}

fn op<'a>(cell: &'a Value, name: &str) -> &'a Value {
    &cell["metrics"]["ops"][name]
}

#[test]
fn every_builtin_personality_runs_locally_at_small_scale() {
    let sb = Sandbox::new();
    for name in BUILTINS {
        let run = personality(&sb, &[name, "--scale", "small", "--connections", "3", "--duration", "1s"]);
        let c = &run["run"]["conditions"];
        assert_eq!(c["personality"], name, "{c}");
        assert_eq!(c["loop"], "closed");
        let stored = cells(&run);
        assert_eq!(stored.len(), if name == "netware-2008" { 2 } else { 1 }, "{name}");
        for cell in &stored {
            let m = &cell["metrics"];
            assert_eq!(cell["clients"], 3, "{name}: three connections");
            assert!(cell["ops"].as_u64().unwrap() > 0, "{name}: {m}");
            assert_eq!(m["connections_failed"], 0, "{name}: {m}");
            assert_eq!(m["lost_ops"], 0);
            let mut counted = 0;
            for (o, s) in m["ops"].as_object().unwrap() {
                assert!(s["errors"].as_object().unwrap().is_empty(), "{name} {o}: {s}");
                assert!(s["p50_ns"].as_u64().unwrap() <= s["p99_ns"].as_u64().unwrap(), "{name} {o}: {s}");
                counted += s["count"].as_u64().unwrap();
            }
            assert_eq!(counted, cell["ops"].as_u64().unwrap(), "{name}: every operation timed once");
            let f = &m["fairness"];
            let (lo, hi, jain) =
                (f["min_share"].as_f64().unwrap(), f["max_share"].as_f64().unwrap(), f["jain"].as_f64().unwrap());
            assert!(lo <= 1.0 / 3.0 + 1e-9 && hi >= 1.0 / 3.0 - 1e-9 && jain > 0.33 && jain <= 1.0 + 1e-9, "{f}");
            let conns = cell["client_figures"].as_array().unwrap();
            assert_eq!(conns.len(), 3);
            assert_eq!(conns.iter().map(|c| c["ops"].as_u64().unwrap()).sum::<u64>(), cell["ops"].as_u64().unwrap());
        }
    }
    // Timed phases ran for their duration; the folders went with the runs.
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

#[test]
fn netware_2008_does_the_same_work_as_run_fileserver() {
    let sb = Sandbox::new();
    let fs = {
        let target = sb.target();
        let out = sb.run(&[
            "run",
            "fileserver",
            "--target",
            target.to_str().unwrap(),
            "--connections",
            "3",
            "--files-per-connection",
            "12",
            "--record",
            "4k",
            "--clients",
            "2",
        ]);
        assert_success(&out);
        sb.last_run()
    };
    let nw = personality(&sb, &["netware-2008", "--connections", "3", "--files", "12", "--clients", "2"]);
    let (a, b) = (cells(&fs), cells(&nw));
    assert_eq!(a.len(), 2);
    assert_eq!(b.len(), 2);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x["test"], y["test"], "write, then read");
        assert_eq!(x["bytes"], y["bytes"], "{}: the same bytes", x["test"]);
        assert_eq!(x["ops"], y["ops"], "{}: the same operations", x["test"]);
        assert_eq!(x["clients"], y["clients"]);
        for o in ["create", "open", "write", "read", "close"] {
            assert_eq!(op(x, o)["count"], op(y, o)["count"], "{} {o}", x["test"]);
        }
    }
    // 2 clients x 3 connections x 12 files cycling 4k..2m: (4092k + 4k + 8k) each.
    assert_eq!(b[0]["bytes"], 6 * 4104 * 1024);
    assert_eq!(op(&b[1], "read")["count"], 6 * 4104 / 4);
    assert_eq!(b[0]["clients"], 6, "connections over both clients");
    let clients = b[0]["metrics"]["clients"].as_array().unwrap();
    assert_eq!(clients.len(), 2);
    assert_eq!(clients.iter().map(|c| c["bytes"].as_u64().unwrap()).sum::<u64>(), 6 * 4104 * 1024);
    let out = sb.run(&["show", &nw["run"]["id"].to_string()]);
    assert!(text(&out).0.contains("Clients (KB/s)"), "the clients table: {}", text(&out).0);
}

#[test]
fn a_bad_personality_is_refused_with_its_line_and_the_nearest_name() {
    let sb = Sandbox::new();
    let file = sb.dir.path().join("p.toml");
    let good = "version = 1\nname = \"p\"\n[[fileset]]\nname = \"f\"\nfiles = 4\nsize = { dist = \"fixed\", size = \"4k\" }\n\
                [[phase]]\nname = \"run\"\n[[phase.flow]]\nname = \"r\"\nops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n";
    let target = sb.target();
    let t = target.to_str().unwrap();
    let f = file.to_str().unwrap();
    std::fs::write(&file, good.replace("op = \"read\"", "op = \"reed\"")).unwrap();
    assert_usage_error(
        &sb.run(&["run", "personality", f, "--target", t]),
        "line 11: flow `r`: unknown op `reed`; did you mean `read`?",
    );
    std::fs::write(&file, good.replace("files = 4", "files = 4\nwidht = 2")).unwrap();
    assert_usage_error(
        &sb.run(&["run", "personality", f, "--target", t]),
        "line 6: unknown key `widht`; did you mean `width`?",
    );
    assert_usage_error(&sb.run(&["run", "personality", "varmial", "--target", t]), "did you mean 'varmail'?");
    assert_usage_error(
        &sb.run(&["run", "personality", "varmail", "--scale", "smal", "--target", t]),
        "did you mean 'small'?",
    );
    assert_usage_error(
        &sb.run(&["run", "personality", "varmail", "--personality", "webserver", "--target", t]),
        "cannot be used with",
    );
    // Nothing ran: no run stored, no folder made.
    assert_eq!(sb.runs_json()["runs"].as_array().map_or(0, Vec::len), 0);
    assert!(sb.leftovers().is_empty());
    // The good file runs: each of its 4 files per connection opened, read and closed once.
    std::fs::write(&file, good).unwrap();
    let run = personality(&sb, &[f, "--connections", "2"]);
    let cell = &cells(&run)[0];
    assert_eq!((op(cell, "open")["count"].as_u64(), op(cell, "read")["count"].as_u64()), (Some(8), Some(8)));
}

#[test]
fn personalities_list_and_show_the_builtins() {
    let sb = Sandbox::new();
    let out = sb.run(&["personalities", "list"]);
    assert_success(&out);
    let (list, _) = text(&out);
    for name in BUILTINS {
        assert!(list.lines().any(|l| l.starts_with(name)), "{name} in:\n{list}");
    }
    let out = sb.run(&["personalities", "show", "netware-2008"]);
    assert_success(&out);
    let (show, _) = text(&out);
    assert!(show.contains("version = 1") && show.contains("590 connections per client"), "{show}");
    assert!(show.contains("create+close, open, write whole, close"), "{show}");
    assert_usage_error(&sb.run(&["personalities", "show", "webservr"]), "did you mean 'webserver'?");
}

#[test]
fn show_compare_and_report_read_personality_runs() {
    let sb = Sandbox::new();
    let args = ["varmail", "--scale", "small", "--connections", "2", "--duration", "1s"];
    let a = personality(&sb, &args)["run"]["id"].as_i64().unwrap();
    let b = personality(&sb, &[&args[..], &["--rate", "500"]].concat())["run"]["id"].as_i64().unwrap();
    let out = sb.run(&["show", &b.to_string()]);
    assert_success(&out);
    let (shown, _) = text(&out);
    assert!(shown.contains("open loop at 500 ops/s per connection"), "{shown}");
    assert!(shown.contains("Fairness: Jain's index") && shown.contains("fsync"), "{shown}");
    let out = sb.run(&["compare", &a.to_string(), &b.to_string()]);
    assert_success(&out);
    let (compared, _) = text(&out);
    // The per-operation table of the phase, and the run's differences named.
    assert!(compared.contains("fsync") && compared.contains("append") && compared.contains("p99"), "{compared}");
    assert!(compared.contains("open"), "{compared}");
    // Closed against open loop is named as a difference of conditions, with the target rate.
    assert!(compared.contains("loop: A (") && compared.contains("closed") && compared.contains("open"), "{compared}");
    assert!(compared.contains("target_rate_per_connection: A ("), "{compared}");
    let html = sb.dir.path().join("r.html");
    let out = sb.run(&["report", &a.to_string(), &b.to_string(), "-o", html.to_str().unwrap()]);
    assert_success(&out);
    let page = std::fs::read_to_string(&html).unwrap();
    assert!(page.contains("personality") && page.contains("<svg"), "a report of personality runs");
}

#[test]
fn a_full_file_system_fails_some_connections_and_their_operations_are_counted_lost() {
    let sb = Sandbox::new();
    let file = sb.dir.path().join("fill.toml");
    // 12 connections x 8 files of 128k (1 MiB each) on 8 MiB: some finish, the rest meet ENOSPC.
    std::fs::write(
        &file,
        "version = 1\nname = \"fill\"\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 8\nprealloc = 0.0\n\
         size = { dist = \"fixed\", size = \"128k\" }\n[[phase]]\nname = \"write\"\n[[phase.flow]]\nname = \"w\"\n\
         pick = \"next\"\nops = [{ op = \"create\", close = true }, { op = \"open\" }, { op = \"write\" }, { op = \"close\" }]\n\
         [[phase]]\nname = \"read\"\n[[phase.flow]]\nname = \"r\"\npick = \"next\"\n\
         ops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    // Which connections finish depends on how the 12 interleave: on a loaded machine all 12 can
    // have written part of their megabyte when the space runs out, and then every one fails
    // (the run is "failed", rightly). Up to 3 tries on a fresh file system for a run where some
    // finished; a try where none did must say so plainly.
    let mut partial = None;
    for _ in 0..3 {
        let Some(m) = Mount::virtual_fs("tmpfs", "size=8m") else { return };
        let out = sb.run(&[
            "run",
            "personality",
            file.to_str().unwrap(),
            "--connections",
            "12",
            "--target",
            m.point.to_str().unwrap(),
            "--no-space-check",
            "--on-client-error",
            "continue",
        ]);
        assert_eq!(out.status.code(), Some(3), "some connections failed: {}", text(&out).1);
        let run = sb.last_run();
        if run["run"]["status"] == "partial" {
            partial = Some((out, run));
            break;
        }
        assert_eq!(run["run"]["status"], "failed", "{}", run["run"]);
        let w = &cells(&run)[0]["metrics"];
        assert_eq!(w["connections_failed"], 12, "a failed run: every connection failed: {w}");
    }
    let (out, run) = partial.expect("in 3 tries on a fresh 8 MiB tmpfs, some of 12 connections finished");
    let stored = cells(&run);
    assert_eq!(stored.len(), 2, "the read phase ran after the failures");
    let w = &stored[0]["metrics"];
    let failed = w["connections_failed"].as_u64().unwrap();
    assert!((1..12).contains(&failed), "{w}");
    assert_eq!(w["errors"]["ENOSPC"], failed, "{}", w["errors"]);
    // Planned: 12 connections x 8 files x (create + open + 32 writes + close); done + lost = planned.
    let done = stored[0]["ops"].as_u64().unwrap();
    assert_eq!(done + w["lost_ops"].as_u64().unwrap(), 12 * 8 * 35, "{w}");
    let enospc: u64 = w["ops"].as_object().unwrap().values().filter_map(|s| s["errors"]["ENOSPC"].as_u64()).sum();
    assert_eq!(enospc, failed, "each failed connection's failing operation counted under it");
    // The read phase: the failed connections sit it out, their reads counted lost; the others read all.
    let r = &stored[1]["metrics"];
    let ok = 12 - failed;
    assert_eq!(r["ops"]["read"]["count"], ok * 8 * 32, "{r}");
    assert_eq!(r["lost_ops"], failed * 8 * 34);
    let conns = stored[1]["client_figures"].as_array().unwrap();
    assert_eq!(conns.iter().filter(|c| c["error"].is_object()).count() as u64, failed);
    let (shown, _) = text(&out);
    assert!(shown.contains("Connections failed") && shown.contains("ENOSPC"), "{shown}");
}

#[test]
fn ctrl_c_stops_connections_waiting_for_their_next_arrival_and_keeps_the_finished_phase() {
    let sb = Sandbox::new();
    let file = sb.dir.path().join("slow.toml");
    // A quick phase, then an open-loop one whose connections wait ~20 s for each arrival.
    std::fs::write(
        &file,
        "version = 1\nname = \"slow\"\n[[fileset]]\nname = \"f\"\nfiles = 4\nsize = { dist = \"fixed\", size = \"4k\" }\n\
         [[phase]]\nname = \"quick\"\n[[phase.flow]]\nname = \"s\"\nops = [{ op = \"stat\" }]\n\
         [[phase]]\nname = \"slow\"\nduration = \"60s\"\n[[phase.flow]]\nname = \"s\"\nrate = 0.05\nops = [{ op = \"stat\" }]\n",
    )
    .unwrap();
    let target = sb.target();
    let mut child = Running(
        sb.cmd()
            .args(["run", "personality", file.to_str().unwrap(), "--connections", "3", "--target"])
            .arg(&target)
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for_cells(&sb, &mut child, 1);
    std::thread::sleep(std::time::Duration::from_millis(300));
    let signalled = std::time::Instant::now();
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.0.id() as i32, libc::SIGINT) };
    let status = wait_for_exit(&mut child);
    assert_eq!(status.code(), Some(130));
    assert!(signalled.elapsed().as_secs() < 10, "stopped within seconds, not at the next arrival");
    let runs = sb.runs_json();
    let run = &runs["runs"].as_array().unwrap()[0];
    assert_eq!(run["cells"], 1, "{run}");
    assert_ne!(run["status"], "complete", "{run}");
    assert!(sb.leftovers().is_empty(), "{:?}", sb.leftovers());
}

#[test]
fn verify_checks_every_builtins_reads_and_sees_a_damaged_block() {
    let sb = Sandbox::new();
    // Every built-in stamps what it writes and checks what it reads: no mismatch on a sound file system.
    for name in BUILTINS {
        let run = personality(&sb, &[name, "--scale", "small", "--connections", "2", "--duration", "1s", "--verify"]);
        assert_eq!(run["run"]["conditions"]["verify"], true);
        for cell in cells(&run) {
            let v = &cell["metrics"]["verify"];
            assert!(v.is_object(), "{name}: {}", cell["metrics"]);
            for kind in ["wrong_data", "wrong_offset", "stale", "torn"] {
                assert_eq!(v[kind], 0, "{name} {kind}: {v}");
            }
            if cell["metrics"]["ops"]["read"]["count"].as_u64().unwrap_or(0) > 0 {
                assert!(v["checked_blocks"].as_u64().unwrap() > 0, "{name}: {v}");
            }
        }
    }
    // netware-2008's third file in name order damaged between the write and the read phase.
    let hook = "f=$(find . -type f | sort | sed -n 3p); printf 'not what was written' | dd of=$f bs=4096 seek=1 \
                conv=notrunc status=none";
    let target = sb.target();
    let out = sb.run(&[
        "run",
        "personality",
        "netware-2008",
        "--connections",
        "2",
        "--files",
        "3",
        "--verify",
        "--between-cells",
        hook,
        "--target",
        target.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(4), "{}", text(&out).1);
    let read = cells(&sb.last_run()).into_iter().find(|c| c["test"] == "read").unwrap();
    // 2 connections x (4k + 8k + 16k): 7 blocks each.
    assert_eq!(read["metrics"]["verify"]["checked_blocks"], 14, "{}", read["metrics"]["verify"]);
    assert_eq!(read["metrics"]["verify"]["wrong_data"], 1, "{}", read["metrics"]["verify"]);
    // Stamped blocks need records of whole 4k blocks.
    let file = sb.dir.path().join("odd.toml");
    std::fs::write(
        &file,
        "version = 1\nname = \"odd\"\nrecord = \"6k\"\n[[fileset]]\nname = \"f\"\nfiles = 2\n\
         size = { dist = \"fixed\", size = \"12k\" }\n[[phase]]\nname = \"run\"\n[[phase.flow]]\nname = \"r\"\n\
         ops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    assert_usage_error(
        &sb.run(&["run", "personality", file.to_str().unwrap(), "--verify", "--target", target.to_str().unwrap()]),
        "record of 4k or a multiple",
    );
}

#[test]
fn repeats_and_tolerance_passes_work_on_fresh_files() {
    let sb = Sandbox::new();
    // A tolerance no run meets: every pass after the first measures again, on files of its own.
    let out = {
        let target = sb.target();
        sb.run(&[
            "run",
            "personality",
            "netware-2008",
            "--connections",
            "2",
            "--files",
            "4",
            "--repeat",
            "2",
            "--tolerance",
            "0.001",
            "--max-repeats",
            "3",
            "--target",
            target.to_str().unwrap(),
        ])
    };
    assert_success(&out);
    let stored = cells(&sb.last_run());
    assert_eq!(stored.len(), 6, "write and read, three samples each");
    for cell in &stored {
        assert_eq!(cell["metrics"]["connections_failed"], 0, "{}", cell["metrics"]);
        // 2 connections x (4k + 8k + 16k + 32k) in 4k records, plus create/open/close or open/close.
        let per_file = if cell["test"] == "write" { 3 } else { 2 };
        assert_eq!(cell["ops"], 2 * (15 + 4 * per_file), "{}", cell["test"]);
    }
    assert!(sb.leftovers().is_empty());
}

/// All the paths under `dir` whose last part is `name`.
fn find_named(dir: &std::path::Path, name: &str, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap().flatten() {
        let p = e.path();
        if p.file_name().is_some_and(|n| n == name) {
            out.push(p.clone());
        }
        if p.is_dir() {
            find_named(&p, name, out);
        }
    }
}

#[test]
fn a_shared_fileset_is_one_folder_per_client_that_all_its_connections_work_in() {
    let sb = Sandbox::new();
    let file = sb.dir.path().join("spool.toml");
    // 6 connections deliver, read, rename and delete in one flat spool of 30 files per client.
    std::fs::write(
        &file,
        "version = 1\nname = \"spool\"\nconnections = 6\nrecord = \"4k\"\n[[fileset]]\nname = \"spool\"\nfiles = 30\n\
         shared = true\nprealloc = 0.5\nsize = { dist = \"gamma\", mean = \"8k\", shape = 1.5 }\n\
         [[phase]]\nname = \"run\"\nduration = \"1s\"\n\
         [[phase.flow]]\nname = \"delete\"\nops = [{ op = \"delete\" }]\n\
         [[phase.flow]]\nname = \"deliver\"\nops = [{ op = \"create\" }, { op = \"append\", size = \"4k\" }, { op = \"fsync\" }, { op = \"close\" }]\n\
         [[phase.flow]]\nname = \"read\"\nops = [{ op = \"open\" }, { op = \"read\" }, { op = \"append\", size = \"4k\" }, { op = \"close\" }]\n\
         [[phase.flow]]\nname = \"move\"\nops = [{ op = \"rename\" }, { op = \"stat\" }]\n",
    )
    .unwrap();
    let run = personality(&sb, &[file.to_str().unwrap(), "--clients", "2", "--keep", "--verify"]);
    let cell = &cells(&run)[0];
    let m = &cell["metrics"];
    assert_eq!(m["connections_failed"], 0, "{}", cell["client_figures"]);
    // Claims keep connections off each other's files: no NotFound or AlreadyExists from a race.
    for (o, s) in m["ops"].as_object().unwrap() {
        assert!(s["errors"].as_object().unwrap().is_empty(), "{o}: {s}");
    }
    for kind in ["wrong_data", "wrong_offset", "stale", "torn"] {
        assert_eq!(m["verify"][kind], 0, "{}", m["verify"]);
    }
    assert!(m["verify"]["checked_blocks"].as_u64().unwrap() > 0);
    let count = |op: &str| m["ops"][op]["count"].as_u64().unwrap();
    assert!(count("create") > 0 && count("delete") > 0 && count("rename") > 0, "{m}");
    // One spool folder per client, holding every file its connections left.
    let mut spools = Vec::new();
    find_named(&sb.target(), "spool", &mut spools);
    spools.sort();
    assert_eq!(spools.len(), 2, "{spools:?}");
    let mut left = 0;
    for (k, spool) in spools.iter().enumerate() {
        assert!(spool.ends_with(format!("client-{k}/shared/r0/spool")), "{spool:?}");
        let files: Vec<_> = std::fs::read_dir(spool).unwrap().flatten().collect();
        assert!(files.iter().all(|f| f.path().is_file()), "flat: {files:?}");
        left += files.len() as u64;
    }
    assert_eq!(left, 2 * 15 + count("create") - count("delete"), "made first + created - deleted");
    // The connections' own folders hold none of them.
    let mut conns = Vec::new();
    find_named(&sb.target(), "r0", &mut conns);
    for c in conns.iter().filter(|c| c.parent().unwrap().file_name().unwrap().to_str().unwrap().starts_with("conn-")) {
        assert_eq!(std::fs::read_dir(c).unwrap().count(), 0, "{c:?}");
    }
    assert_eq!(conns.len(), 2 * 6 + 2, "6 connections' folders and the shared one, per client: {conns:?}");
}

#[test]
fn a_phase_once_per_file_of_a_shared_fileset_shares_the_files_out_exactly() {
    let sb = Sandbox::new();
    let file = sb.dir.path().join("once.toml");
    // 3 connections, 10 shared files: 4 + 3 + 3 iterations, each file written once, then read once.
    std::fs::write(
        &file,
        "version = 1\nname = \"once\"\nconnections = 3\nrecord = \"4k\"\n[[fileset]]\nname = \"f\"\nfiles = 10\nshared = true\n\
         prealloc = 0.0\nsize = { dist = \"fixed\", size = \"8k\" }\n\
         [[phase]]\nname = \"write\"\n[[phase.flow]]\nname = \"w\"\npick = \"next\"\n\
         ops = [{ op = \"create\" }, { op = \"write\" }, { op = \"close\" }]\n\
         [[phase]]\nname = \"read\"\n[[phase.flow]]\nname = \"r\"\npick = \"next\"\n\
         ops = [{ op = \"open\" }, { op = \"read\" }, { op = \"close\" }]\n",
    )
    .unwrap();
    // Repeats and passes of --tolerance each on fresh shared files.
    let f = file.to_str().unwrap();
    let run = personality(&sb, &[f, "--clients", "2", "--repeat", "2", "--tolerance", "0.001", "--max-repeats", "3"]);
    let stored = cells(&run);
    assert_eq!(stored.len(), 6, "write and read, three samples each");
    for cell in &stored {
        let m = &cell["metrics"];
        assert_eq!((m["connections_failed"].as_u64(), m["idle_iterations"].as_u64()), (Some(0), Some(0)), "{m}");
        // 2 clients x 10 files x (create or open, 2 records, close).
        assert_eq!(cell["ops"], 2 * 10 * 4, "{}", cell["test"]);
        assert_eq!(cell["bytes"], 2 * 10 * 8192, "{}", cell["test"]);
        let conns: Vec<u64> =
            cell["client_figures"].as_array().unwrap().iter().map(|c| c["ops"].as_u64().unwrap() / 4).collect();
        assert_eq!(conns.iter().sum::<u64>(), 20, "{conns:?}");
        assert_eq!(conns.iter().filter(|&&n| n == 4).count(), 2, "the first connection of each client does one more");
    }
    assert!(sb.leftovers().is_empty());
}
