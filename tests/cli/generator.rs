//! The one pseudo-random generator: a new run names it in its conditions (`show`, `--json`),
//! `compare` names it when the sides drew from different ones, and `rerun` of a run stored
//! before it was named warns that the same seeds will draw other offsets, sizes and data. The
//! older run is a real one: tests/golden/results.sqlite, made by main's binary before the change.

use crate::helpers::*;
use iomatrix_random::GENERATOR;
use std::path::Path;

/// Run #1 of the golden database: `run iozone` with random reads, by main's binary before the
/// generator was named (tests/golden/make.sh).
const OLD_IOZONE_RUN: &str = "1";

fn with_golden_database(sb: &Sandbox) {
    let golden = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/results.sqlite");
    assert!(golden.is_file(), "{} is missing: tests/golden/make.sh makes it", golden.display());
    std::fs::copy(&golden, sb.db()).unwrap();
}

fn last_id(sb: &Sandbox) -> String {
    sb.runs_json()["runs"].as_array().unwrap().iter().filter_map(|r| r["id"].as_i64()).max().unwrap().to_string()
}

#[test]
fn a_new_run_names_its_generator_in_its_conditions_and_in_show() {
    let sb = Sandbox::new();
    sb.iozone_ok(&["--files", "64k", "--records", "4k", "--tests", "write,random-read"]);
    let id = last_id(&sb);
    let run = sb.show_json(id.parse().unwrap());
    assert_eq!(run["run"]["conditions"]["generator"], GENERATOR, "{}", run["run"]["conditions"]);
    let (show, _) = text(&sb.run(&["show", &id]));
    assert!(show.contains(&format!("\nrandom generator: {GENERATOR}\n")), "{show}");
}

#[test]
fn rerun_of_a_run_from_before_the_generator_was_named_warns_that_its_draws_will_differ() {
    let sb = Sandbox::new();
    with_golden_database(&sb);
    let old = sb.show_json(OLD_IOZONE_RUN.parse().unwrap());
    assert!(
        old["run"]["conditions"]["generator"].is_null(),
        "the golden run names no generator: {}",
        old["run"]["conditions"]
    );
    let (old_show, _) = text(&sb.run(&["show", OLD_IOZONE_RUN]));
    assert!(!old_show.contains("random generator"), "an old run's show stays as it was: {old_show}");

    let target = sb.target();
    let out = sb.run(&["rerun", OLD_IOZONE_RUN, "--target", target.to_str().unwrap()]);
    assert_success(&out);
    let (_, err) = text(&out);
    assert!(
        err.contains(&format!("iomatrix: warning: run #{OLD_IOZONE_RUN} was stored before runs named their generator")),
        "{err}"
    );
    assert!(err.contains(&format!("this rerun draws from {GENERATOR}")), "{err}");
    assert!(err.contains("will differ from the original's"), "{err}");

    // The rerun names this binary's generator; running it again repeats its draws, silently.
    let new = last_id(&sb);
    assert_eq!(sb.show_json(new.parse().unwrap())["run"]["conditions"]["generator"], GENERATOR);
    let out = sb.run(&["rerun", &new, "--target", target.to_str().unwrap()]);
    assert_success(&out);
    let (_, err) = text(&out);
    assert!(!err.contains("warning: run #"), "{err}");

    // Compared, the two sides' generators are a condition that differs.
    let out = sb.run(&["compare", OLD_IOZONE_RUN, &new]);
    assert_success(&out);
    let (cmp, _) = text(&out);
    let line = cmp.lines().find(|l| l.trim_start().starts_with("generator:")).unwrap_or_else(|| panic!("{cmp}"));
    assert!(line.contains("unknown, B (") && line.ends_with(GENERATOR), "{line}");
}
