//! The end of a test binary with skips, seen from outside: this binary runs
//! itself again (its two fixture cases only, with `IOMATRIX_TESTKIT_CHILD`
//! set, so that they skip) and reads what that run printed and how it ended.
//! In this binary's own run the fixture cases do nothing, so it never skips.

use std::fs::File;
use std::path::PathBuf;
use std::process::{Command, ExitStatus};

const CHILD: &str = "IOMATRIX_TESTKIT_CHILD";

/// A fixture: skips, twice, only in the child run.
#[test]
fn fixture_skips_twice() {
    if std::env::var_os(CHILD).is_some() {
        iomatrix_testkit::skip("the child run was asked to skip");
        iomatrix_testkit::skip("and gave a second reason\nover two lines");
    }
}

/// A fixture: skips once, only in the child run, then fails where asked to.
#[test]
fn fixture_skips_once() {
    if let Some(how) = std::env::var_os(CHILD) {
        iomatrix_testkit::skip("needs a tool this run pretends is missing");
        assert_ne!(how, "fail", "this case fails as asked");
    }
}

/// Runs this binary's fixture cases with `CHILD=child` (unless `None`) and
/// `CI=ci` (unless `None`): its exit status and its stdout and stderr as one
/// text, in the order written.
fn child(child: Option<&str>, ci: Option<&str>) -> (ExitStatus, String) {
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("testkit-at-exit-{}-{child:?}-{ci:?}", std::process::id()));
    let file = File::create(&out).unwrap();
    let mut cmd = Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", "fixture_skips_twice", "fixture_skips_once", "--test-threads", "1"])
        .env_remove(CHILD)
        .env_remove("CI")
        .stdout(file.try_clone().unwrap())
        .stderr(file);
    if let Some(value) = child {
        cmd.env(CHILD, value);
    }
    if let Some(value) = ci {
        cmd.env("CI", value);
    }
    let status = cmd.status().unwrap();
    let text = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).unwrap();
    (status, text)
}

const LIST: &str = "\
2 test case(s) SKIPPED in this test binary (";
const CASES: &str = "\
  fixture_skips_once: needs a tool this run pretends is missing
  fixture_skips_twice: the child run was asked to skip; and gave a second reason
      over two lines
";

#[test]
fn skips_are_listed_after_libtests_summary_and_the_run_passes() {
    let (status, text) = child(Some("1"), None);
    assert!(status.success(), "{status}: {text}");
    let summary = text.find("test result: ok. 2 passed").unwrap_or_else(|| panic!("{text}"));
    let list = text.find(LIST).unwrap_or_else(|| panic!("{text}"));
    assert!(summary < list, "the list comes after the summary: {text}");
    assert!(text.ends_with(CASES), "{text}");
    assert!(!text.contains("CI is set"), "{text}");
}

#[test]
fn on_ci_a_skip_fails_the_test_binary_after_listing_it() {
    for ci in ["true", "1"] {
        let (status, text) = child(Some("1"), Some(ci));
        assert_eq!(status.code(), Some(1), "CI={ci}: {text}");
        assert!(text.contains("test result: ok. 2 passed"), "{text}");
        let list = text.find(LIST).unwrap_or_else(|| panic!("{text}"));
        assert!(text[list..].contains(CASES), "{text}");
        assert!(text.ends_with("so no case may skip there; failing this test binary.\n"), "CI={ci}: {text}");
    }
    let (status, text) = child(Some("1"), Some("false"));
    assert!(status.success(), "CI=false is not CI: {text}");
}

#[test]
fn a_failing_run_still_lists_its_skips_and_fails() {
    let (status, text) = child(Some("fail"), None);
    assert_eq!(status.code(), Some(101), "libtest's own failure status: {text}");
    let summary = text.find("test result: FAILED. 1 passed; 1 failed").unwrap_or_else(|| panic!("{text}"));
    assert!(summary < text.find(LIST).unwrap(), "{text}");
    assert!(text.ends_with(CASES), "{text}");
    let (status, text) = child(Some("fail"), Some("true"));
    assert!(!status.success(), "{text}");
    assert!(text.contains(CASES) && text.contains("CI is set"), "{text}");
}

#[test]
fn a_run_without_skips_says_nothing_and_passes_on_ci() {
    let (status, text) = child(None, Some("true"));
    assert!(status.success(), "{status}: {text}");
    assert!(text.contains("test result: ok. 2 passed"), "{text}");
    assert!(!text.contains("SKIPPED") && !text.contains("skipped"), "{text}");
}
