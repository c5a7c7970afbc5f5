//! Test-only (a dev-dependency of the workspace's tests, never of the
//! product): how a test case says that it did not run.
//!
//! A case that cannot run on this machine (a missing tool, not root, no loop
//! devices, a kernel without io_uring) calls [`skip`] with the reason and
//! returns. [`skip`]:
//!
//! - prints `skipped: REASON` to stderr, as the tests always did (libtest
//!   captures it: it shows with `--nocapture`, or when the case fails);
//! - records the case, by its name (libtest names each test's thread after
//!   the test's path, e.g. `mpi::four_ranks_are_four_clients_in_their_own_folders`),
//!   with the reason;
//! - on the first skip, arranges that when the test binary ends (after
//!   libtest's own `test result:` line) it prints to stderr
//!   `N test case(s) SKIPPED in this test binary (NAME):` and a line per case
//!   with its reason;
//! - and, where the environment variable `CI` is `true` or `1`, then fails the
//!   test binary (exit status 1): CI (`.ci/run`) installs everything the tests
//!   need, so a skip there means that something is missing, and a green run
//!   would claim what did not run.
//!
//! `cargo test` runs one binary per test target (a crate's unit tests, each
//! file in a crate's tests/, the `cli` binary in tests/cli), so each binary
//! lists its own skips, right after its own summary; nothing adds them up
//! across binaries.
//!
//! What is not a skip: a branch that the test's own data chooses (a case
//! that does not apply by what the test made), and a test that runs all it
//! names somewhere else (in the temporary folder where it may not mount
//! tmpfs). Call [`skip`] on the test's own thread: a thread the test spawned
//! has no test name, and is listed as `(unnamed thread)`.
//!
//! ```no_run
//! # fn have(_: &str) -> bool { true }
//! fn fio_output_is_imported() {
//!     if !have("fio") {
//!         return iomatrix_testkit::skip("fio is not installed (apt-get install fio)");
//!     }
//!     // ... the test
//! }
//! ```
#![warn(missing_docs)]

use std::fmt::Display;
use std::sync::{Mutex, MutexGuard, Once, PoisonError, TryLockError};
use std::time::Duration;

/// Every case of this test binary that skipped, with its reasons.
static SKIPS: Mutex<Skips> = Mutex::new(Skips::new());
/// What [`at_end`] was given: run when the binary exits, before the list of skipped cases.
static AT_END: Mutex<Vec<fn()>> = Mutex::new(Vec::new());
/// Registers [`at_exit`] once, at the first skip or [`at_end`].
static AT_EXIT: Once = Once::new();

/// Runs `cleanup` when this test binary exits (after libtest's summary, also when tests failed):
/// for a fixture that the binary's tests share, such as a lab started once and taken down at the
/// end. The cleanups run in the reverse order of their registration, before the skipped cases are
/// listed, so a CI run that fails for a skip still cleans up. A cleanup must not panic (it runs
/// inside libc's `exit`); it may start processes and wait for them.
pub fn at_end(cleanup: fn()) {
    AT_END.lock().unwrap_or_else(PoisonError::into_inner).push(cleanup);
    register_at_exit();
}

fn register_at_exit() {
    AT_EXIT.call_once(|| {
        // SAFETY: atexit takes a function without arguments; `at_exit` never
        // unwinds (nothing in it panics) and uses nothing torn down before
        // atexit handlers run (see there).
        let refused = unsafe { libc::atexit(at_exit) } != 0;
        assert!(!refused, "atexit refused the end-of-run cleanups and list of skipped cases");
    });
}

/// This test case did not run (or did not run in full) here, for `reason`:
/// says so now, lists it at the end of the test binary, and fails the binary
/// on CI. The caller returns after it (`return skip(..)` in a test, or
/// `skip(..); return None` in a helper that makes a fixture).
///
/// # Panics
/// If libc's atexit cannot register the end-of-run list (it fails only without memory).
pub fn skip(reason: impl Display) {
    let reason = reason.to_string();
    eprintln!("skipped: {reason}");
    SKIPS.lock().unwrap_or_else(PoisonError::into_inner).record(test_name(), reason);
    register_at_exit();
}

/// The running test's name: libtest runs each test on a thread named after
/// the test's path.
fn test_name() -> String {
    std::thread::current().name().unwrap_or("(unnamed thread)").to_string()
}

/// One skipped case and what it said (each reason once, in order).
#[derive(Debug, PartialEq)]
struct Case {
    test: String,
    reasons: Vec<String>,
}

/// The skipped cases of one test binary.
#[derive(Debug)]
struct Skips {
    cases: Vec<Case>,
}

impl Skips {
    const fn new() -> Skips {
        Skips { cases: Vec::new() }
    }

    /// One case per test; a test that skips twice (one file system of three,
    /// then another) keeps both reasons.
    fn record(&mut self, test: String, reason: String) {
        match self.cases.iter_mut().find(|c| c.test == test) {
            Some(case) if case.reasons.contains(&reason) => {}
            Some(case) => case.reasons.push(reason),
            None => self.cases.push(Case { test, reasons: vec![reason] }),
        }
    }

    /// The list printed at the end, by test name; `None` when nothing
    /// skipped. A case's reasons share its line (`; ` between them); a
    /// reason of several lines goes on below it, indented.
    fn report(&self, binary: &str) -> Option<String> {
        if self.cases.is_empty() {
            return None;
        }
        let mut cases: Vec<&Case> = self.cases.iter().collect();
        cases.sort_by(|a, b| a.test.cmp(&b.test));
        let mut text = format!("\n{} test case(s) SKIPPED in this test binary ({binary}):\n", cases.len());
        for case in cases {
            let reasons: Vec<&str> = case.reasons.iter().map(|r| r.trim()).filter(|r| !r.is_empty()).collect();
            let said = if reasons.is_empty() { "(no reason given)".to_string() } else { reasons.join("; ") };
            for (i, line) in said.lines().enumerate() {
                if i == 0 {
                    text.push_str(&format!("  {}: {line}\n", case.test));
                } else {
                    text.push_str(&format!("      {line}\n"));
                }
            }
        }
        Some(text)
    }
}

/// Whether `CI` (its value) says this is CI: `true` (any case) or `1`.
fn is_ci(value: Option<&str>) -> bool {
    value.is_some_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

const CI_FAILS: &str = "CI is set (CI=true or 1): CI installs everything the tests need (.ci/run), so no case may \
                        skip there; failing this test binary.\n";

/// Runs when the test binary exits: after libtest printed its summary and
/// flushed stdout (both a return from `main` and `std::process::exit` end in
/// libc's `exit`, which runs this), after thread-local storage is gone. So it
/// writes with `write(2)` rather than through `std::io`, and never unwinds.
extern "C" fn at_exit() {
    run_cleanups();
    let binary = std::env::current_exe()
        .ok()
        .and_then(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
        .unwrap_or_else(|| "?".to_string());
    let text = match lock_briefly() {
        Some(skips) => skips.report(&binary),
        // A thread left running by a test holds the list: say so rather than wait forever.
        None => {
            Some(format!("\ntest cases SKIPPED in this test binary ({binary}), but the list is held by a thread\n"))
        }
    };
    let Some(mut text) = text else { return };
    let ci = is_ci(std::env::var("CI").ok().as_deref());
    if ci {
        text.push_str(CI_FAILS);
    }
    write_stderr(&text);
    if ci {
        // SAFETY: ends the process at once with status 1. Calling `exit`
        // inside an atexit handler would be undefined; `_exit` is not.
        unsafe { libc::_exit(1) }
    }
}

/// The [`at_end`] cleanups, last registered first (a lock held by a thread left running is waited
/// for at most about a second, then the cleanups run anyway).
fn run_cleanups() {
    let mut cleanups = Vec::new();
    for _ in 0..200 {
        match AT_END.try_lock() {
            Ok(mut list) => {
                cleanups = std::mem::take(&mut *list);
                break;
            }
            Err(TryLockError::Poisoned(p)) => {
                cleanups = std::mem::take(&mut *p.into_inner());
                break;
            }
            Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    for cleanup in cleanups.into_iter().rev() {
        cleanup();
    }
}

/// The list, waiting at most about a second for a thread that holds it.
fn lock_briefly() -> Option<MutexGuard<'static, Skips>> {
    for _ in 0..200 {
        match SKIPS.try_lock() {
            Ok(skips) => return Some(skips),
            Err(TryLockError::Poisoned(p)) => return Some(p.into_inner()),
            Err(TryLockError::WouldBlock) => std::thread::sleep(Duration::from_millis(5)),
        }
    }
    None
}

fn write_stderr(text: &str) {
    let mut rest = text.as_bytes();
    while !rest.is_empty() {
        // SAFETY: writes from a live buffer of `rest.len()` bytes to fd 2.
        let n = unsafe { libc::write(2, rest.as_ptr().cast(), rest.len()) };
        if n > 0 {
            rest = &rest[n as usize..];
        } else if n == 0 || std::io::Error::last_os_error().kind() != std::io::ErrorKind::Interrupted {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn skips(said: &[(&str, &str)]) -> Skips {
        let mut s = Skips::new();
        for (test, reason) in said {
            s.record(test.to_string(), reason.to_string());
        }
        s
    }

    #[test]
    fn a_case_is_recorded_once_with_each_of_its_reasons() {
        let s = skips(&[
            ("bonnie::on_ext4_and_xfs", "a loop-mounted ext4 needs root"),
            ("report::in_chromium", "no chromium"),
            ("bonnie::on_ext4_and_xfs", "a loop-mounted xfs needs root"),
            ("bonnie::on_ext4_and_xfs", "a loop-mounted ext4 needs root"),
        ]);
        assert_eq!(
            s.cases,
            [
                Case {
                    test: "bonnie::on_ext4_and_xfs".into(),
                    reasons: vec!["a loop-mounted ext4 needs root".into(), "a loop-mounted xfs needs root".into()],
                },
                Case { test: "report::in_chromium".into(), reasons: vec!["no chromium".into()] },
            ]
        );
    }

    #[test]
    fn nothing_skipped_prints_nothing() {
        assert_eq!(Skips::new().report("cli-0123"), None);
    }

    #[test]
    fn the_report_counts_cases_and_gives_a_line_to_each_by_name() {
        let s = skips(&[
            ("mpi::four_ranks", "MPI tests need mpirun"),
            ("lab::serves", "lab/up failed: smbd did not answer\n  log line 1\nlog line 2\n"),
            ("mpi::four_ranks", "and ssh"),
            ("import::fio", "  "),
        ]);
        assert_eq!(
            s.report("cli-0123").unwrap(),
            "\n3 test case(s) SKIPPED in this test binary (cli-0123):\n\
             \x20 import::fio: (no reason given)\n\
             \x20 lab::serves: lab/up failed: smbd did not answer\n\
             \x20       log line 1\n\
             \x20     log line 2\n\
             \x20 mpi::four_ranks: MPI tests need mpirun; and ssh\n"
        );
    }

    #[test]
    fn ci_is_true_or_1() {
        for yes in ["true", "TRUE", "True", "1"] {
            assert!(is_ci(Some(yes)), "{yes}");
        }
        for no in [None, Some(""), Some("0"), Some("false"), Some("yes"), Some(" true")] {
            assert!(!is_ci(no), "{no:?}");
        }
    }

    #[test]
    fn a_case_is_named_by_its_test_thread() {
        assert_eq!(test_name(), "tests::a_case_is_named_by_its_test_thread");
        let unnamed = std::thread::spawn(test_name).join().unwrap();
        assert_eq!(unnamed, "(unnamed thread)");
    }
}
