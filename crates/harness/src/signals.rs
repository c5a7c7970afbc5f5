//! Ctrl-C (SIGINT) and SIGTERM: the first asks the run to stop after the
//! requests in flight (finished cells are kept, the working folder
//! removed); a second exits at once (the database stays consistent: every
//! cell is its own transaction). The exit code tells which signal stopped
//! the run, as shells do: 130 for SIGINT, 143 for SIGTERM.
//!
//! SIGHUP (the terminal, or the study that started this run, went away:
//! a study's steps get it as their parent-death signal) stops the run the
//! same way, exit 129, but never quits at once: the kernel sends the
//! parent-death signal again for every thread of the dead parent. Under
//! `nohup` (SIGHUP ignored) a hangup stays ignored; a SIGHUP after the
//! process's parent has gone (a study's step whose study died) still stops it.
//!
//! [`STOP`] is raised by a signal only. A run stops its clients with a flag
//! of its own ([`run_flag`]), which a signal also raises: a client that
//! fails raises that one, and is never taken for a signal (an MPI rank
//! waiting for rank 0 gives up at once on a signal, and would not hear
//! rank 0's word).
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use std::sync::atomic::{AtomicBool, AtomicI32, Ordering};
use std::sync::Mutex;

/// Raised by the first signal, and by nothing else.
pub static STOP: AtomicBool = AtomicBool::new(false);
/// A process group (a study's setup or teardown) that a second signal, which quits at once,
/// ends first (SIGKILL): it would otherwise run on, orphaned. 0: none.
static GROUP_TO_END: AtomicI32 = AtomicI32::new(0);

/// Names the process group a quit at once must end first (0: none any more).
pub fn end_group_on_quit(pgid: i32) {
    GROUP_TO_END.store(pgid, Ordering::SeqCst);
}
/// The first signal received, 0 before any.
static FIRST: AtomicI32 = AtomicI32::new(0);
/// Flags the first signal raises besides [`STOP`] (each run's own).
static RAISE: Mutex<Vec<&'static AtomicBool>> = Mutex::new(Vec::new());
/// What runs, each on a thread of its own, when the first signal comes.
type Hook = Box<dyn FnOnce(i32) + Send>;
static HOOKS: Mutex<Vec<Hook>> = Mutex::new(Vec::new());

/// A run's own stop flag: raised by the first signal (installed here if
/// need be) and by whatever else stops the run (a failed client). One per
/// run, which lives as long as the process.
pub fn run_flag() -> anyhow::Result<&'static AtomicBool> {
    install()?;
    let flag: &'static AtomicBool = Box::leak(Box::new(AtomicBool::new(false)));
    lock(&RAISE).push(flag);
    // A signal that came before the flag was made stops the run all the same.
    if STOP.load(Ordering::SeqCst) {
        flag.store(true, Ordering::SeqCst);
    }
    Ok(flag)
}

/// Runs `hook` with the signal's number, on a thread of its own, when the
/// first signal comes (never if one came already).
#[cfg_attr(not(feature = "mpi"), allow(dead_code))]
pub fn on_first_signal(hook: impl FnOnce(i32) + Send + 'static) {
    if FIRST.load(Ordering::SeqCst) == 0 {
        lock(&HOOKS).push(Box::new(hook));
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

/// Installs the handler once; later calls return the same flag.
pub fn install() -> anyhow::Result<&'static AtomicBool> {
    static INSTALLED: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
    let mut installed = INSTALLED.lock().unwrap_or_else(|e| e.into_inner());
    if *installed {
        return Ok(&STOP);
    }
    // The signals are delivered to this thread, not to a handler: it may print and exit freely.
    // Under nohup (SIGHUP ignored) a hangup stays ignored, but a parent-death SIGHUP (a study's
    // step, whose study died) must still stop the run: it comes after the kernel has given the
    // process a new parent, so a SIGHUP is taken only once the parent it started with is gone.
    // SAFETY: getppid(2) takes no arguments and cannot fail (also below).
    let parent_at_start = ignored(SIGHUP).then(|| unsafe { libc::getppid() });
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])?;
    std::thread::Builder::new().name("signals".into()).spawn(move || {
        for signal in signals.forever() {
            if signal == SIGHUP && parent_at_start.is_some_and(|p| p == unsafe { libc::getppid() }) {
                continue;
            }
            if signal == SIGHUP && FIRST.load(Ordering::SeqCst) != 0 {
                continue;
            }
            if FIRST.compare_exchange(0, signal, Ordering::SeqCst, Ordering::SeqCst).is_ok() {
                STOP.store(true, Ordering::SeqCst);
                for flag in lock(&RAISE).iter() {
                    flag.store(true, Ordering::SeqCst);
                }
                for hook in lock(&HOOKS).drain(..) {
                    let _ = std::thread::Builder::new().name("on-signal".into()).spawn(move || hook(signal));
                }
                eprintln!(
                    "\niomatrix: {}: stopping after the current requests (finished cells are kept); send it again \
                     to quit at once",
                    name(signal)
                );
            } else {
                let group = GROUP_TO_END.load(Ordering::SeqCst);
                if group > 0 {
                    // SAFETY: kill(2) of a process group whose leader is this process's child,
                    // not yet reaped (the study clears it before reaping).
                    unsafe {
                        libc::kill(-group, libc::SIGKILL);
                    }
                }
                std::process::exit(128 + signal);
            }
        }
    })?;
    *installed = true;
    Ok(&STOP)
}

/// The exit code of a run stopped by a signal: 128 + the first signal's number.
pub fn exit_code() -> u8 {
    match FIRST.load(Ordering::SeqCst) {
        0 => crate::exit::INTERRUPTED,
        signal => (128 + signal) as u8,
    }
}

/// Whether `signal` is ignored (SIG_IGN inherited, as under `nohup`).
fn ignored(signal: i32) -> bool {
    // SAFETY: sigaction(2) with a null new action only reads the current one into `old`.
    unsafe {
        let mut old: libc::sigaction = std::mem::zeroed();
        libc::sigaction(signal, std::ptr::null(), &mut old) == 0 && old.sa_sigaction == libc::SIG_IGN
    }
}

/// The first signal's number, or None before any.
pub fn first_number() -> Option<i32> {
    Some(FIRST.load(Ordering::SeqCst)).filter(|&s| s != 0)
}

/// The first signal's name (SIGTERM, SIGINT, SIGHUP), or None before any.
pub fn first() -> Option<&'static str> {
    match FIRST.load(Ordering::SeqCst) {
        SIGHUP => Some("SIGHUP"),
        SIGINT => Some("SIGINT"),
        SIGTERM => Some("SIGTERM"),
        0 => None,
        _ => Some("a signal"),
    }
}

fn name(signal: i32) -> &'static str {
    match signal {
        SIGHUP => "SIGHUP (the terminal or the study that started this run went away)",
        SIGINT => "Ctrl-C (SIGINT)",
        SIGTERM => "SIGTERM",
        _ => "signal",
    }
}
