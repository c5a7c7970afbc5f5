//! The processes a study starts: setup and teardown shell commands (with a
//! time limit, their `KEY=VALUE` output kept as variables) and each step's
//! `iomatrix run`. Both end with the study (SIGHUP as PR_SET_PDEATHSIG): a
//! study killed outright leaves no step running on behind it, and the
//! step's run stops as on Ctrl-C (its finished cells kept, its folder
//! removed), to be run again from its start when the study resumes. SIGHUP
//! because the kernel sends the parent-death signal once per thread of the
//! dying study, and a run quits at once on a second SIGTERM but takes any
//! number of SIGHUPs as one.

use crate::harness::signals;
use std::fs::{File, OpenOptions};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::Ordering;
use std::time::{Duration, Instant};

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

/// Runs `sh -c COMMAND` in a process group of its own, output appended to `log` (standard
/// output also to `stdout`, for its `KEY=VALUE` lines), killed (the whole group) after `limit`.
pub fn shell(
    command: &str,
    env: &[(String, String)],
    log: &Path,
    stdout: &Path,
    limit: Duration,
) -> std::io::Result<Ended> {
    let err = append(log)?;
    let out = File::create(stdout)?;
    let mut cmd = Command::new("sh");
    cmd.arg("-c").arg(command).envs(env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null()).stdout(out).stderr(err);
    cmd.process_group(0);
    dies_with_study(&mut cmd);
    let child = cmd.spawn()?;
    wait(child, Some(limit), true)
}

/// Runs `program ARGS` (a step's `iomatrix run`) with output to `log`, in the study's process
/// group, so a terminal's Ctrl-C reaches it as it would reach a run started by hand.
pub fn step(program: &Path, args: &[String], env: &[(String, String)], log: &Path) -> std::io::Result<(Ended, u32)> {
    let out = append(log)?;
    let err = out.try_clone()?;
    let mut cmd = Command::new(program);
    cmd.args(args).envs(env.iter().map(|(k, v)| (k, v))).stdin(Stdio::null()).stdout(out).stderr(err);
    dies_with_study(&mut cmd);
    let child = cmd.spawn()?;
    let pid = child.id();
    Ok((wait(child, None, false)?, pid))
}

fn append(path: &Path) -> std::io::Result<File> {
    OpenOptions::new().create(true).append(true).open(path)
}

/// The child gets SIGHUP when the study dies (once per thread of the study);
/// a child whose study died before it could ask for that does not start at all.
fn dies_with_study(cmd: &mut Command) {
    let study = std::process::id() as libc::pid_t;
    // SAFETY: prctl(2) and getppid(2) are async-signal-safe and touch only the new process's own
    // attributes; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGHUP) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != study {
                return Err(std::io::Error::other("the study that started this step is gone"));
            }
            Ok(())
        });
    }
}

/// Waits for `child`, within `limit` if given. On the study's stop the child gets the same
/// signal (a group: the whole group; a Ctrl-C only after [`GRACE`]), and is then waited for.
fn wait(mut child: Child, limit: Option<Duration>, group: bool) -> std::io::Result<Ended> {
    let started = Instant::now();
    let mut stop_seen: Option<Instant> = None;
    let mut passed_on = false;
    let pid = child.id() as i32;
    let signal_to = |sig: i32| {
        // SAFETY: kill(2) with a pid (or process group) of our own child.
        unsafe {
            libc::kill(if group { -pid } else { pid }, sig);
        }
    };
    loop {
        if let Some(status) = child.try_wait()? {
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
        }
        if limit.is_some_and(|l| started.elapsed() >= l) {
            signal_to(libc::SIGTERM);
            let deadline = Instant::now() + Duration::from_secs(5);
            while child.try_wait()?.is_none() {
                if Instant::now() >= deadline {
                    signal_to(libc::SIGKILL);
                    child.wait()?;
                    break;
                }
                std::thread::sleep(Duration::from_millis(50));
            }
            return Ok(Ended::TimedOut);
        }
        std::thread::sleep(Duration::from_millis(50));
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

/// The last `n` lines of a log, for a failure message.
pub fn tail(log: &Path, n: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty() && !l.contains('\r')).collect();
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
        let (log, out) = (dir.path().join("log"), dir.path().join("out"));
        let started = Instant::now();
        let ended = shell("sleep 30 & sleep 30; echo late", &[], &log, &out, Duration::from_millis(300)).unwrap();
        assert!(matches!(ended, Ended::TimedOut));
        assert!(started.elapsed() < Duration::from_secs(10));
        let ended = shell("echo K=v; echo oops >&2; exit 3", &[], &log, &out, Duration::from_secs(10)).unwrap();
        let Ended::Exited(status) = ended else { panic!("not exited") };
        assert_eq!(status.code(), Some(3));
        assert_eq!(exports(&std::fs::read_to_string(&out).unwrap()), [("K".to_string(), "v".to_string())]);
        assert_eq!(tail(&log, 1), "oops");
    }
}
