//! Numbers for people come from one formatter: a byte count just under a
//! unit reads as the unit above ("1.0 MiB", "1 GiB"), never "1024.0 KiB" or
//! "1024 MiB", in a run's tables and in a front end's messages alike.
use crate::helpers::*;

/// A byte short of 1 MiB, read by a backup walk: its read line says 1.0 MiB.
#[test]
fn a_walk_of_a_byte_under_a_mebibyte_reads_one_mebibyte() {
    let sb = Sandbox::new();
    let tree = sb.target().join("tree");
    std::fs::create_dir(&tree).unwrap();
    std::fs::write(tree.join("almost-a-mebibyte"), vec![0x5a; (1 << 20) - 1]).unwrap();
    let out = sb.run(&["run", "backup", "--target", tree.to_str().unwrap()]);
    assert_success(&out);
    let (stdout, _) = text(&out);
    assert!(stdout.contains("read: 1 files, 1.0 MiB (1048575 bytes)"), "{stdout}");
    assert!(!stdout.contains("1024.0 KiB"), "{stdout}");
}

/// bonnie's messages: 1 GiB less one 8 KiB chunk is "1 GiB", not "1024 MiB".
#[test]
fn a_bonnie_size_a_chunk_under_a_gibibyte_reads_one_gibibyte() {
    let sb = Sandbox::new();
    let target = sb.target();
    let out = sb.run(&["bonnie", "-d", target.to_str().unwrap(), "-s", "1048568k", "-r", "1024"]);
    assert_usage_error(&out, "file size 1 GiB is less than twice the RAM (1 GiB as stated with -r)");
    assert!(!text(&out).1.contains("1024 MiB"), "{}", text(&out).1);
}

/// The format specs in `source` that pad, align or round (`{:>14}`, `{v:<w$}`, `{:.1}`): a
/// table laid out by hand, or a number formatted outside `core::human`. `{}`, `{name}` and
/// `{:?}` are not; a `{ … }` with a space in it is code, not a format spec.
pub(crate) fn hand_formats(source: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    for (n, line) in source.lines().enumerate().take_while(|(_, l)| l.trim() != "#[cfg(test)]") {
        let mut rest = line;
        while let Some(open) = rest.find('{') {
            rest = &rest[open + 1..];
            let Some(close) = rest.find('}') else { break };
            let inside = &rest[..close];
            if let Some((_, spec)) = inside.split_once(':').filter(|_| !inside.contains([' ', '{', '(', '"'])) {
                if !spec.starts_with(':') && spec.contains(|c: char| "<>^.$".contains(c) || c.is_ascii_digit()) {
                    found.push((n + 1, format!("{{{inside}}}")));
                }
            }
        }
    }
    found
}

#[test]
fn the_check_finds_a_hand_padded_column_and_a_rounded_number() {
    let planted = "let a = format!(\"{:>14} {x:<w$}\", 1, 2);\nlet b = format!(\"{v:.1} {} {name} {:?}\", 1, 2);\n\
                   let c = crate::x::{a, b}; let d = |x| { x::y() };\n";
    let found: Vec<String> = hand_formats(planted).into_iter().map(|(_, spec)| spec).collect();
    assert_eq!(found, ["{:>14}", "{x:<w$}", "{v:.1}"]);
}

/// Every suite's tables are laid out by the one table layout (`iomatrix_report::table::Table`)
/// and their numbers written by `core::human`: no suite's crates/NAME/src/render.rs pads a column or rounds a
/// figure by hand, so one suite's table cannot drift from another's.
#[test]
fn the_suites_tables_pad_and_round_nothing_by_hand() {
    let root = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut read = 0;
    for entry in std::fs::read_dir(root.join("crates")).expect("crates") {
        let entry = entry.expect("entry");
        // A suite's crate: the one with a Suite impl (src/cli/suite.rs).
        if !entry.path().join("src/cli/suite.rs").is_file() {
            continue;
        }
        // A suite's tables live in its crate (crates/NAME/src/render.rs).
        let render = root.join("crates").join(entry.file_name()).join("src/render.rs");
        let Ok(source) = std::fs::read_to_string(&render) else { continue };
        read += 1;
        for (n, spec) in hand_formats(&source) {
            found.push(format!("{}:{n}: {spec}", render.strip_prefix(&root).unwrap().display()));
        }
    }
    assert!(read >= 6, "every suite's render.rs was read: {read}");
    assert!(
        found.is_empty(),
        "a suite's table laid out or a figure rounded by hand; use iomatrix_report::table::Table and \
         iomatrix_core::human:\n{}",
        found.join("\n")
    );
}

/// Whether `text` is a figure by the one rule of `core::human::significant`: two decimals from
/// 1 up (issue 34: 130.92, never 131), and below it as many as three significant digits need.
fn follows_the_digits_rule(text: &str) -> bool {
    let Ok(v) = text.parse::<f64>() else { return false };
    if v == 0.0 {
        return text == "0";
    }
    let decimals = text.split_once('.').map_or(0, |(_, d)| d.len());
    if v.abs() >= 1.0 {
        return decimals == 2;
    }
    let digits: String = text.trim_start_matches('-').chars().filter(char::is_ascii_digit).collect();
    digits.trim_start_matches('0').len() == 3
}

/// Issue 32: per-operation tables printed `0.0007366`, `0.0009020` and `28773.8` in one column.
/// Every latency and rate figure of show's and compare's per-operation tables (personality,
/// dbench replay, file-server load, bonnie's files) follows one rule: two decimals, three
/// significant digits below 1.
#[test]
fn per_operation_tables_keep_one_rule_for_significant_digits() {
    let sb = Sandbox::new();
    std::fs::copy(std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/results.sqlite"), sb.db())
        .unwrap();
    let mut checked = 0;
    let mut check = |args: &[&str], is_figure_row: &dyn Fn(&str) -> bool, figures: &dyn Fn(&str) -> Vec<String>| {
        let out = sb.run(args);
        assert_success(&out);
        for line in text(&out).0.lines().filter(|l| is_figure_row(l)) {
            for figure in figures(line) {
                assert!(follows_the_digits_rule(&figure), "{args:?}: {figure} in\n{line}");
                checked += 1;
            }
        }
    };
    // compare's per-operation rows: "<operation> <figure> (<unit>)   A   B   change  verdict".
    for pair in [["5", "10"], ["4", "9"], ["3", "8"]] {
        check(&["compare", pair[0], pair[1]], &|l| l.contains(" (ms) ") || l.contains(" (ops/s) "), &|l| {
            let after = l.split_once(") ").unwrap().1;
            after.split_whitespace().take(2).map(str::to_string).collect()
        });
    }
    // show's per-operation table of a personality run: ops/s and the five latency columns.
    check(
        &["show", "10"],
        &|l| ["create ", "open ", "read ", "append ", "fsync ", "close ", "delete "].iter().any(|p| l.starts_with(p)),
        &|l| {
            let words: Vec<&str> = l.split_whitespace().collect();
            [&words[2..3], &words[4..9]].concat().into_iter().map(str::to_string).collect()
        },
    );
    assert!(checked > 100, "the tables were found: {checked} figures checked");
}
