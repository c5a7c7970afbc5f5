//! The processes a study starts: setup and teardown shell commands (with a
//! time limit, their `KEY=VALUE` output kept as variables) and each step's
//! `iomatrix run`, and the logs they write (through the guarded writer:
//! never the results database, never a file that is not a study log).
//!
//! A setup or teardown runs in a process group of its own. When it runs out
//! of time, or the study is told to stop (SIGTERM, Ctrl-C), the whole group
//! ends: the signal goes to the group, and once the shell has ended (or
//! after a grace) what is left of the group (a background job, which a
//! non-interactive shell starts with SIGINT ignored) gets SIGTERM and then
//! SIGKILL. The shell is reaped only after that, so its process group id
//! cannot be taken by another process meanwhile. A setup that ends by
//! itself may leave daemons running (that is what a setup is for).
//!
//! Both end with the study (SIGHUP as PR_SET_PDEATHSIG): a
//! study killed outright leaves no step running on behind it, and the
//! step's run stops as on Ctrl-C (its finished cells kept, its folder
//! removed), to be run again from its start when the study resumes. SIGHUP
//! because the kernel sends the parent-death signal once per thread of the
//! dying study, and a run quits at once on a second SIGTERM but takes any
//! number of SIGHUPs as one.

use crate::harness::signals;
use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

/// The first line of every study log: how a resumed study tells its own logs, which it
/// appends to, from a file it must not touch.
pub const LOG_MARK: &str = "# iomatrix study log";

/// A study log, as the guarded writer judges an existing file.
pub struct StudyLog;

impl iomatrix_guard::Kind for StudyLog {
    fn describe(&self) -> String {
        "an iomatrix study log".into()
    }

    fn recognises(&self, existing: &mut File) -> bool {
        iomatrix_guard::output::head(existing, LOG_MARK.len()) == LOG_MARK.as_bytes()
    }
}

/// A log of the study at `path`, open for appending, through the guarded writer: never the
/// results database `db` by any name, never a file that is not a study log (unless `force`).
/// A new log begins with [`LOG_MARK`] and what it logs.
pub fn open_log(path: &Path, db: &Path, force: bool, what: &str) -> anyhow::Result<File> {
    let out = iomatrix_guard::Output { path, flag: "study log", kind: &StudyLog, force, database: Some(db) }.check()?;
    let mut file = out.append()?;
    if file.metadata()?.len() == 0 {
        writeln!(file, "{LOG_MARK}: {what}")?;
    }
    Ok(file)
}

/// The most of a setup's standard output read for its `KEY=VALUE` lines (all of it goes to the log).
pub const MAX_EXPORTS: u64 = 1 << 20;

/// How long what is left of a setup's process group gets to end after SIGTERM before SIGKILL.
const GROUP_GRACE: Duration = Duration::from_secs(2);

/// How a process the study started ended.
pub enum Ended {
    /// With this exit status.
    Exited(ExitStatus),
    /// Killed after running out of time.
    TimedOut,
    /// The study was told to stop (Ctrl-C, SIGTERM) and the process has ended.
    Stopped,
}

/// How long a step's run gets to stop by itself after a Ctrl-C (a terminal's reaches it too)
/// before the study passes the signal on.
const GRACE: Duration = Duration::from_secs(3);

/// Runs `sh -c COMMAND` in a process group of its own, its standard error appended to `log`
/// as it comes, its standard output kept aside (an unnamed file in `scratch`, the log's
/// folder) and appended to the log after it; killed (the whole group) after `limit`.
/// Returns how it ended and the first [`MAX_EXPORTS`] bytes of its standard output, for its
/// `KEY=VALUE` lines.
pub fn shell(
    command: &str,
    env: &[(String, String)],
    log: &File,
    scratch: &Path,
    limit: Duration,
) -> std::io::Result<(Ended, String)> {
    let mut out = tempfile::tempfile_in(scratch)?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(out.try_clone()?)
        .stderr(log.try_clone()?);
    cmd.process_group(0);
    dies_with_study(&mut cmd);
    let child = cmd.spawn()?;
    signals::end_group_on_quit(child.id() as i32);
    let ended = wait(child, Some(limit), true)?;
    // The output as the log keeps it, streamed: a setup that printed gigabytes costs no memory.
    out.rewind()?;
    std::io::copy(&mut out, &mut log.try_clone()?)?;
    out.rewind()?;
    let mut head = Vec::new();
    out.take(MAX_EXPORTS).read_to_end(&mut head)?;
    Ok((ended, String::from_utf8_lossy(&head).into_owned()))
}

/// Runs `program ARGS` (a step's `iomatrix run`) with output to `log`, in the study's process
/// group, so a terminal's Ctrl-C reaches it as it would reach a run started by hand.
pub fn step(program: &Path, args: &[String], env: &[(String, String)], log: &File) -> std::io::Result<(Ended, u32)> {
    let out = log.try_clone()?;
    let err = out.try_clone()?;
    let mut cmd = Command::new(program);
    cmd.args(args).envs(env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null()).stdout(out).stderr(err);
    dies_with_study(&mut cmd);
    let child = cmd.spawn()?;
    let pid = child.id();
    Ok((wait(child, None, false)?, pid))
}

/// The child gets SIGHUP when the study dies (once per thread of the study);
/// a child whose study died before it could ask for that does not start at all.
fn dies_with_study(cmd: &mut Command) {
    crate::harness::dies_with_this_process(cmd, libc::SIGHUP, "the study that started this step is gone");
}

/// Waits for `child`, within `limit` if given. On the study's stop the child gets the same
/// signal (a group: the whole group; a Ctrl-C only after [`GRACE`]), and is then waited for.
/// A group that was stopped or ran out of time is ended whole before the child is reaped.
fn wait(mut child: Child, limit: Option<Duration>, group: bool) -> std::io::Result<Ended> {
    let started = Instant::now();
    let mut stop_seen: Option<Instant> = None;
    let mut passed_on = false;
    let pid = child.id() as i32;
    let signal_to = |sig: i32| {
        // SAFETY: kill(2) with a pid (or process group) of our own child, not yet reaped: neither
        // can belong to another process.
        unsafe {
            libc::kill(if group { -pid } else { pid }, sig);
        }
    };
    // A group's id stays named for a quit at once only while its leader is unreaped.
    let reap = |child: &mut Child| {
        if group {
            signals::end_group_on_quit(0);
        }
        child.wait()
    };
    loop {
        if ended_unreaped(pid)? {
            if group && stop_seen.is_some() {
                end_group(pid);
            }
            let status = reap(&mut child)?;
            return Ok(if stop_seen.is_some() { Ended::Stopped } else { Ended::Exited(status) });
        }
        if signals::STOP.load(Ordering::SeqCst) {
            let since = *stop_seen.get_or_insert_with(Instant::now);
            // A SIGTERM was meant for the study alone: passed on at once. A Ctrl-C reached the
            // whole foreground group, the step too: passed on only if the step is still running.
            let sigterm = signals::exit_code() == 143;
            if !passed_on && (group || sigterm || since.elapsed() >= GRACE) {
                signal_to(if sigterm { libc::SIGTERM } else { libc::SIGINT });
                passed_on = true;
            }
            // A shell that will not end: its group is ended for it.
            if group && since.elapsed() >= GRACE + GROUP_GRACE {
                end_group(pid);
            }
        }
        if limit.is_some_and(|l| started.elapsed() >= l) {
            signal_to(libc::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(5);
            while !ended_unreaped(pid)? && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(50));
            }
            if group {
                end_group(pid);
            } else {
                signal_to(libc::SIGKILL);
            }
            reap(&mut child)?;
            return Ok(Ended::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Whether the child `pid` has ended, without reaping it: while it is unreaped its pid, and
/// so its process group's id, cannot be given to another process.
fn ended_unreaped(pid: i32) -> std::io::Result<bool> {
    let Some(pid) = rustix::process::Pid::from_raw(pid) else { return Ok(true) };
    use rustix::process::{WaitId, WaitIdOptions};
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    Ok(rustix::process::waitid(WaitId::Pid(pid), options)?.is_some())
}

/// Ends what is left of the process group `pgid` (whose leader, our child, is not yet reaped):
/// SIGTERM, up to [`GROUP_GRACE`] for it to go, then SIGKILL.
fn end_group(pgid: i32) {
    let signal = |sig: i32| {
        // SAFETY: kill(2) of a process group whose leader is our unreaped child: the id is ours.
        unsafe { libc::kill(-pgid, sig) }
    };
    signal(libc::SIGCONT);
    signal(libc::SIGTERM);
    let deadline = Instant::now() + GROUP_GRACE;
    while live_members(pgid) != Some(0) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    // Sent whenever /proc cannot prove the group gone (a /proc of another PID namespace shows
    // other processes): to a group of zombies it does nothing.
    if live_members(pgid) != Some(0) {
        signal(libc::SIGKILL);
        // SIGKILL is delivered asynchronously: on a busy machine a member can still be running
        // a moment later. The step counts as ended only once nothing of it runs (or, with no
        // /proc to tell, after a bounded wait).
        let deadline = Instant::now() + GROUP_GRACE;
        while live_members(pgid).is_none_or(|n| n > 0) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
    }
}

/// Processes of group `pgid` that have not ended (zombies not counted), from /proc; `None`
/// when /proc is not this process's PID namespace's (its pids would name other processes).
fn live_members(pgid: i32) -> Option<usize> {
    let ours = std::fs::read_link("/proc/self").ok().and_then(|p| p.to_str().and_then(|s| s.parse::<u32>().ok()))
        == Some(std::process::id());
    if !ours {
        return None;
    }
    let entries = std::fs::read_dir("/proc").ok()?;
    let count = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_str().is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter(|stat| {
            // After the command's name (which may hold anything): state, ppid, pgrp.
            let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
            fields.first().is_some_and(|state| *state != "Z" && *state != "X")
                && fields.get(2).and_then(|g| g.parse::<i32>().ok()) == Some(pgid)
        })
        .count();
    Some(count)
}

/// Makes the study the reaper of its orphans (PR_SET_CHILD_SUBREAPER): a process a setup
/// started in a session of its own (`setsid`), whose parent shell ended, becomes the study's
/// child instead of init's, so [`end_descendants`] still finds it. Err: why it cannot.
pub fn adopt_orphans() -> std::io::Result<()> {
    // SAFETY: prctl(2) with PR_SET_CHILD_SUBREAPER takes an integer flag and touches no memory.
    if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// The processes descending from this one (children, theirs, ...: with [`adopt_orphans`] also
/// what a setup left in a session of its own), zombies not counted; None when /proc is not
/// this process's PID namespace's.
fn descendants() -> Option<Vec<i32>> {
    let me = std::process::id() as i32;
    let ours =
        std::fs::read_link("/proc/self").ok().and_then(|p| p.to_str().and_then(|s| s.parse::<i32>().ok())) == Some(me);
    if !ours {
        return None;
    }
    let mut parent_of: Vec<(i32, i32)> = Vec::new();
    for e in std::fs::read_dir("/proc").ok()?.filter_map(Result::ok) {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<i32>().ok()) else { continue };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else { continue };
        let fields: Vec<&str> = stat.rsplit_once(')').map_or("", |(_, rest)| rest).split_whitespace().collect();
        let live = fields.first().is_some_and(|state| *state != "Z" && *state != "X");
        if let (true, Some(ppid)) = (live, fields.get(1).and_then(|p| p.parse::<i32>().ok())) {
            parent_of.push((pid, ppid));
        }
    }
    let mut found = vec![me];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(parent_of.iter().filter(|(_, pp)| *pp == parent).map(|(pid, _)| *pid));
        i += 1;
    }
    found.remove(0);
    Some(found)
}

/// Ends every process the study still has below it (SIGTERM, up to [`GROUP_GRACE`], then
/// SIGKILL), its own children reaped: what "stopped with every process it started" promises.
/// Returns how many there were; Err: why it cannot tell (/proc of another PID namespace).
pub fn end_descendants() -> Result<usize, String> {
    let Some(first) = descendants() else {
        return Err("/proc shows another PID namespace: processes a setup started in a session of their own \
                    (setsid) cannot be found and may still run"
            .into());
    };
    let signal = |pids: &[i32], sig: i32| {
        for pid in pids {
            // SAFETY: kill(2) of a process found below this one in /proc an instant ago (our own
            // children stay ours until reaped below; a grandchild's pid reused in that instant is
            // the risk every process-tree killer takes).
            unsafe { libc::kill(*pid, sig) };
        }
    };
    signal(&first, libc::SIGCONT);
    signal(&first, libc::SIGTERM);
    let deadline = Instant::now() + GROUP_GRACE;
    // Bounded (5 s): a process that forks as fast as it is killed is left to the SIGKILL rounds.
    for _ in 0..100 {
        reap_children();
        let left = descendants().unwrap_or_default();
        if left.is_empty() {
            return Ok(first.len());
        }
        if Instant::now() >= deadline {
            signal(&left, libc::SIGKILL);
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    reap_children();
    Ok(first.len())
}

/// Reaps the study's children that have ended (orphans it adopted, and those ended above).
fn reap_children() {
    loop {
        let mut status = 0;
        // SAFETY: waitpid(2) on any child, not blocking. Only called when no step's or setup's
        // process is being waited for (they have all ended), so no Child's status is taken.
        let pid = unsafe { libc::waitpid(-1, &mut status, libc::WNOHANG) };
        if pid <= 0 {
            return;
        }
    }
}

/// `KEY=VALUE` lines of a setup command's output (shell quoting undone, as `eval` would).
pub fn exports(stdout: &str) -> Vec<(String, String)> {
    stdout
        .lines()
        .filter_map(|line| {
            let line = line.trim().strip_prefix("export ").unwrap_or(line.trim());
            let (key, value) = line.split_once('=')?;
            let valid = !key.is_empty()
                && !key.starts_with(|c: char| c.is_ascii_digit())
                && key.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !valid {
                return None;
            }
            let value = shell_words::split(value).ok().map(|w| w.join(" ")).unwrap_or_else(|| value.to_string());
            Some((key.to_string(), value))
        })
        .collect()
}

/// The last `n` lines of a log, for a failure message (read from its last 64 KiB: a log may be
/// large).
pub fn tail(log: &Path, n: usize) -> String {
    let mut end = Vec::new();
    if let Ok(mut f) = File::open(log) {
        let len = f.metadata().map(|m| m.len()).unwrap_or(0);
        let _ = f.seek(std::io::SeekFrom::Start(len.saturating_sub(64 * 1024)));
        let _ = f.take(64 * 1024).read_to_end(&mut end);
    }
    let text = String::from_utf8_lossy(&end);
    let lines: Vec<&str> =
        text.lines().filter(|l| !l.trim().is_empty() && !l.contains('\r') && !l.starts_with(LOG_MARK)).collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_take_key_value_lines_and_undo_shell_quoting() {
        let out = "lab/up: starting\nIOMATRIX_LAB_SMB=smb://10.0.0.2/share\nexport B='a b'\nC=x\\ y\n9X=no\n=no\n";
        assert_eq!(
            exports(out),
            [
                ("IOMATRIX_LAB_SMB".to_string(), "smb://10.0.0.2/share".to_string()),
                ("B".into(), "a b".into()),
                ("C".into(), "x y".into()),
            ]
        );
    }

    #[test]
    fn a_shell_command_that_runs_too_long_is_killed_with_its_children() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("log");
        let db = dir.path().join("results.sqlite");
        let log = open_log(&path, &db, false, "test").unwrap();
        let started = Instant::now();
        // The background job ignores SIGTERM: the group's SIGKILL ends it. It keeps adding to a
        // file, so whether it still runs is seen without /proc (which may be another namespace's).
        let beat = dir.path().join("beat");
        let (ended, _) = shell(
            &format!(
                "trap '' TERM; (while :; do echo x >> {b}; sleep 0.05; done) & sleep 30; echo late",
                b = beat.display()
            ),
            &[],
            &log,
            dir.path(),
            Duration::from_millis(300),
        )
        .unwrap();
        assert!(matches!(ended, Ended::TimedOut));
        assert!(started.elapsed() < Duration::from_secs(15));
        let len = |p: &Path| std::fs::metadata(p).map(|m| m.len()).unwrap_or(0);
        let before = len(&beat);
        assert!(before > 0, "the background job never ran");
        std::thread::sleep(Duration::from_millis(500));
        assert_eq!(len(&beat), before, "the background job outlived its group");
        let (ended, out) =
            shell("echo K=v; echo oops >&2; exit 3", &[], &log, dir.path(), Duration::from_secs(10)).unwrap();
        let Ended::Exited(status) = ended else { panic!("not exited") };
        assert_eq!(status.code(), Some(3));
        assert_eq!(exports(&out), [("K".to_string(), "v".to_string())]);
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("# iomatrix study log: test\n") && text.contains("oops\nK=v\n"), "{text}");
        assert_eq!(tail(&path, 1), "K=v");
        assert_eq!(tail(&path, 2), "oops\nK=v");
    }
}
