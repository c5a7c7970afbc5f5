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
    for entry in std::fs::read_dir(root.join("src/suites")).expect("src/suites") {
        let entry = entry.expect("entry");
        if !entry.path().is_dir() {
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
