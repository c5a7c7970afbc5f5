//! `run access --pin`: where each client's thread runs is chosen and stated. The threads'
//! affinity is read from /proc while the run is going (what the kernel enforces, not what
//! iomatrix says), and compared with what the run stored and `show` prints.

use crate::helpers::*;
use serde_json::Value;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// `0-1,4` as the CPUs it names.
fn cpu_list(text: &str) -> Vec<usize> {
    let mut cpus = Vec::new();
    for part in text.trim().split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<usize>().unwrap()..=b.parse::<usize>().unwrap()),
            None => cpus.push(part.parse().unwrap()),
        }
    }
    cpus
}

/// The CPUs a task may run on, from its /proc status.
fn allowed_of(status: &str) -> Option<Vec<usize>> {
    status.lines().find_map(|l| l.strip_prefix("Cpus_allowed_list:")).map(cpu_list)
}

/// Each `client-N` thread of `pid` with its allowed CPUs now, sorted by N.
fn client_affinities(pid: u32) -> Vec<(usize, Vec<usize>)> {
    let mut found = Vec::new();
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let comm = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
            let Some(n) = comm.trim().strip_prefix("client-").and_then(|n| n.parse::<usize>().ok()) else {
                continue;
            };
            if let Some(cpus) = std::fs::read_to_string(task.path().join("status")).ok().as_deref().and_then(allowed_of)
            {
                found.push((n, cpus));
            }
        }
    }
    found.sort();
    found
}

/// Each `client-N` thread of `pid` with its allowed CPUs, once all `clients` are there and have
/// started their first cell (a kept thread is narrowed at its first cell, before the lay-out;
/// the run's cells are long enough to be seen). At most 30 s.
fn client_threads(pid: u32, clients: usize, narrowed: bool) -> Vec<(usize, Vec<usize>)> {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let found = client_affinities(pid);
        if found.len() == clients && (!narrowed || found.iter().all(|(_, cpus)| cpus.len() == 1)) {
            return found;
        }
        assert!(
            Instant::now() < deadline,
            "no {clients} client threads{} within 30 s: {found:?}",
            if narrowed { " kept on one CPU each" } else { "" }
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Runs `run access` with two clients for one 3 s cell under `prefix` (e.g. taskset), watches
/// its client threads, and returns them with the stored run.
fn watch(sb: &Sandbox, prefix: &[&str], extra: &[&str], narrowed: bool) -> (Vec<(usize, Vec<usize>)>, Value) {
    let bin = env!("CARGO_BIN_EXE_iomatrix");
    let mut cmd = if let Some((first, rest)) = prefix.split_first() {
        let mut c = Command::new(first);
        c.args(rest).arg(bin);
        c
    } else {
        Command::new(bin)
    };
    let target = sb.target();
    std::fs::create_dir_all(&target).unwrap();
    cmd.args(["run", "access", "--target"])
        .arg(&target)
        .arg("--db")
        .arg(sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .args(["--clients", "2", "--file-size", "4m", "--bs", "4k", "--qd", "1", "--duration", "3s"])
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = Running(cmd.spawn().expect("iomatrix starts"));
    let threads = client_threads(child.0.id(), 2, narrowed);
    let status = wait_for_exit(&mut child);
    assert!(status.success(), "the run failed: {status}");
    (threads, sb.last_run())
}

fn stored_cpus(run: &Value) -> Vec<Option<u64>> {
    let cell = cells(run).pop().expect("one cell");
    cell["client_figures"].as_array().unwrap().iter().map(|c| c["cpu"].as_u64()).collect()
}

fn this_process_may_use() -> Vec<usize> {
    allowed_of(&std::fs::read_to_string("/proc/self/status").unwrap()).unwrap()
}

#[test]
fn by_default_a_depth_1_client_is_kept_on_the_ith_cpu_and_stores_where() {
    let sb = Sandbox::new();
    let (threads, run) = watch(&sb, &[], &[], true);
    let allowed = this_process_may_use();
    for (client, cpus) in &threads {
        assert_eq!(cpus, &[allowed[client % allowed.len()]], "client {client} kept on the {client}-th allowed CPU");
    }
    let stored = stored_cpus(&run);
    assert_eq!(stored, threads.iter().map(|(_, cpus)| Some(cpus[0] as u64)).collect::<Vec<_>>());
    assert_eq!(run["run"]["plan"]["pin"], "shallow");
    let shown = sb.run(&["show", &run["run"]["id"].to_string()]);
    let (stdout, _) = text(&shown);
    assert!(
        stdout.contains(
            "placement: shallow: in cells of up to 8 requests in flight each client's thread kept on one CPU"
        ),
        "{stdout}"
    );
}

#[test]
fn spread_keeps_client_i_on_the_ith_cpu_and_stores_where() {
    let sb = Sandbox::new();
    let (threads, run) = watch(&sb, &[], &["--pin", "spread"], true);
    let allowed = this_process_may_use();
    for (client, cpus) in &threads {
        assert_eq!(cpus, &[allowed[client % allowed.len()]], "client {client} kept on the {client}-th allowed CPU");
    }
    assert_eq!(stored_cpus(&run), threads.iter().map(|(_, cpus)| Some(cpus[0] as u64)).collect::<Vec<_>>());
    assert_eq!(run["run"]["plan"]["pin"], "spread");
    let (stdout, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    assert!(stdout.contains("placement: spread: each client's thread kept on one CPU"), "{stdout}");
}

/// The allowed CPUs of `pid`'s `client-0` thread, each set once in the order seen, sampled every
/// 2 ms until the process ends (at most 60 s).
fn affinity_history(child: &mut Running) -> Vec<Vec<usize>> {
    let pid = child.0.id();
    let deadline = Instant::now() + Duration::from_secs(60);
    let mut seen: Vec<Vec<usize>> = Vec::new();
    while child.0.try_wait().unwrap().is_none() {
        assert!(Instant::now() < deadline, "the run did not end within 60 s; seen so far {seen:?}");
        for (_, cpus) in client_affinities(pid).into_iter().filter(|(n, _)| *n == 0) {
            if seen.last() != Some(&cpus) {
                seen.push(cpus);
            }
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    seen
}

/// Under the default, one run with a cell at depth 1, one at 32 and one at 8 (io_uring): the
/// client's thread is kept on its CPU for the first, let go to every CPU it may use for the
/// second, kept again for the third, as /proc shows while it runs; the stored cells say the same.
#[test]
fn shallow_keeps_a_client_at_depth_8_and_below_and_lets_it_go_deeper() {
    let allowed = this_process_may_use();
    if allowed.len() < 2 {
        skip("a process that may use 2 CPUs or more (a kept thread and a free one look the same on one)");
        return;
    }
    let sb = Sandbox::new();
    let target = sb.target();
    std::fs::create_dir_all(&target).unwrap();
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_iomatrix"));
    cmd.args(["run", "access", "--target"])
        .arg(&target)
        .arg("--db")
        .arg(sb.db())
        .env(crate::helpers::BUSY_VAR, "off")
        .args(["--backend", "io_uring", "--file-size", "4m", "--bs", "4k", "--qd", "1,32,8", "--duration", "1s"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let mut child = Running(cmd.spawn().expect("iomatrix starts"));
    let seen = affinity_history(&mut child);
    let status = wait_for_exit(&mut child);
    assert!(status.success(), "the run failed: {status}");
    let kept = vec![allowed[0]];
    // The thread starts with every CPU (before its first cell), so the history may begin there.
    let from_first_keep: Vec<_> = seen.iter().skip_while(|cpus| **cpus != kept).cloned().collect();
    assert_eq!(from_first_keep, [kept.clone(), allowed.clone(), kept.clone()], "kept, let go, kept again: {seen:?}");
    let run = sb.last_run();
    let by_depth: Vec<(u64, Option<u64>)> = cells(&run)
        .iter()
        .map(|c| (c["metrics"]["queue_depth"].as_u64().unwrap(), c["client_figures"][0]["cpu"].as_u64()))
        .collect();
    assert_eq!(by_depth, [(1, Some(allowed[0] as u64)), (32, None), (8, Some(allowed[0] as u64))]);
}

#[test]
fn spread_stays_inside_the_cpus_the_process_was_given() {
    if !have("taskset") {
        skip("taskset (util-linux) is needed to narrow the run's CPUs");
        return;
    }
    let last = *this_process_may_use().last().unwrap();
    let only = last.to_string();
    let sb = Sandbox::new();
    let (threads, run) = watch(&sb, &["taskset", "-c", &only], &[], true);
    assert!(threads.iter().all(|(_, cpus)| cpus == &[last]), "both clients on CPU {last}: {threads:?}");
    assert_eq!(stored_cpus(&run), [Some(last as u64), Some(last as u64)]);
}

#[test]
fn pin_off_leaves_the_threads_where_the_kernel_may_put_them() {
    let sb = Sandbox::new();
    let (threads, run) = watch(&sb, &[], &["--pin", "off"], false);
    let allowed = this_process_may_use();
    assert!(threads.iter().all(|(_, cpus)| cpus == &allowed), "every client may run anywhere: {threads:?}");
    assert_eq!(stored_cpus(&run), [None, None], "no CPU stored where none was kept");
    assert_eq!(run["run"]["plan"]["pin"], "off");
    let (stdout, _) = text(&sb.run(&["show", &run["run"]["id"].to_string()]));
    assert!(stdout.contains("placement: off: the kernel placed each client's thread"), "{stdout}");
}

#[test]
fn an_unknown_placement_is_refused_before_anything_runs() {
    let sb = Sandbox::new();
    let target = sb.target();
    std::fs::create_dir_all(&target).unwrap();
    let out =
        sb.run(&["run", "access", "--target", target.to_str().unwrap(), "--pin", "everywhere", "--duration", "1s"]);
    assert_usage_error(
        &out,
        "--pin everywhere: 'everywhere' is not a placement of the clients' threads; give shallow, spread or off",
    );
    assert_eq!(stored_cells(&sb), 0);
}
