//! The launcher's mpirun, bound to the launcher's life: what stops the launcher stops the job.
//!
//! A study stops a step by the step's parent-death signal (SIGHUP), a user by Ctrl-C or SIGTERM.
//! Each reaches only the launcher (mpirun runs in a process group of its own, without the
//! terminal's input), which passes it on once: SIGINT and SIGTERM as they came, SIGHUP as SIGTERM
//! (mpirun ends its job on either). Open MPI then stops every rank, which stops as on Ctrl-C:
//! finished cells kept, the run stored interrupted. A second signal quits the launcher at once,
//! SIGKILLing mpirun's group first; a launcher killed outright takes mpirun with it (SIGTERM as
//! mpirun's parent-death signal). Without this, a launcher that died left mpirun measuring on.

use super::signals;
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Runs `cmd` (mpirun) as the launcher's bound child and waits for it.
pub fn run(mut cmd: Command) -> std::io::Result<ExitStatus> {
    signals::install().map_err(std::io::Error::other)?;
    cmd.stdin(Stdio::null()).process_group(0);
    dies_with_this_process(&mut cmd, libc::SIGTERM, "the launcher that started mpirun is gone");
    let mut child = cmd.spawn()?;
    let pid = child.id() as libc::pid_t;
    signals::end_group_on_quit(pid);
    // Some(pid) while mpirun is unreaped: a signal is passed on only then, so never to a process
    // that took its pid afterwards.
    let unreaped = Arc::new(Mutex::new(Some(pid)));
    // Once only: a signal that arrives while the hook is being registered is seen both by the hook
    // and by the check below, and mpirun takes a second signal as "abort now".
    let passed = Arc::new(AtomicBool::new(false));
    let pass_on = {
        let unreaped = Arc::clone(&unreaped);
        move |signal: i32| {
            if passed.swap(true, Ordering::SeqCst) {
                return;
            }
            let signal = if signal == libc::SIGHUP { libc::SIGTERM } else { signal };
            if let Some(pid) = *unreaped.lock().unwrap_or_else(|e| e.into_inner()) {
                // SAFETY: kill(2) of our own child, not yet reaped (the lock is held).
                unsafe { libc::kill(pid, signal) };
            }
        }
    };
    signals::on_first_signal(pass_on.clone());
    // A signal that came before the hook was registered (it would not run the hook).
    if let Some(signal) = signals::first_number() {
        pass_on(signal);
    }
    wait_unreaped(pid)?;
    *unreaped.lock().unwrap_or_else(|e| e.into_inner()) = None;
    signals::end_group_on_quit(0);
    child.wait()
}

/// The child `cmd` starts gets `signal` when this process dies (its parent-death signal); a child
/// whose parent died before it could ask for that does not start at all.
pub fn dies_with_this_process(cmd: &mut Command, signal: i32, gone: &'static str) {
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: prctl(2) and getppid(2) are async-signal-safe and touch only the new process's own
    // attributes; nothing else runs between fork and exec.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, signal) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                return Err(std::io::Error::other(gone));
            }
            Ok(())
        });
    }
}

/// Waits until `pid` has ended, leaving it unreaped (its pid stays ours).
fn wait_unreaped(pid: libc::pid_t) -> std::io::Result<()> {
    loop {
        // SAFETY: siginfo_t is plain data, for which all zeroes is a valid value.
        let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
        // SAFETY: waitid(2) on our own child with WNOWAIT: it only writes its state into `info`.
        let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
        if r == 0 {
            return Ok(());
        }
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e);
        }
    }
}
