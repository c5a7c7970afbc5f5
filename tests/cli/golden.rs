//! What `runs`, `show`, `compare`, `sweep` and `report` print for a fixed database, byte for
//! byte: tests/golden/results.sqlite holds runs of every suite and every importer (and one
//! failed run), made by main's binary before the typed-figures change (tests/golden/make.sh);
//! tests/golden/commands lists the commands; tests/golden/expected/NAME what each printed then.
//!
//! A change to any output shows here as a diff. An intended change is written anew with
//! `IOMATRIX_GOLDEN=write cargo test --test cli golden` and reviewed in `git diff`.
//! The database doubles as "a database made by an older main": every command reads it.
//! golden_fixture.rs runs the same check over main 7a976992's database (issue 49).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub(crate) fn golden() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// Whether the expected outputs are to be written anew (IOMATRIX_GOLDEN=write), not checked.
pub(crate) fn writing() -> bool {
    std::env::var("IOMATRIX_GOLDEN").is_ok_and(|v| v == "write")
}

/// One command's exit code, standard output, standard error and written file, as one text.
/// `made_at`: when the database was made (a later time stamp is when the command ran).
fn capture(db: &Path, out_dir: &Path, made_at: &str, name: &str, args: &str) -> String {
    let mut written = None;
    let args: Vec<String> = args
        .split(' ')
        .map(|a| match a.strip_prefix("@OUT") {
            Some(ext) => {
                let path = out_dir.join(format!("{name}{ext}"));
                written = Some(path.clone());
                path.to_str().unwrap().to_string()
            }
            None => a.to_string(),
        })
        .collect();
    let out = Command::new(env!("CARGO_BIN_EXE_iomatrix"))
        .args(&args)
        .arg("--db")
        .arg(db)
        .env_remove("IOMATRIX_DB")
        .env(crate::helpers::BUSY_VAR, "off")
        .stdin(Stdio::null())
        .output()
        .expect("run iomatrix");
    let mut text = format!("$ iomatrix {}\n# exit {:?}\n", args.join(" "), out.status.code());
    text.push_str(&String::from_utf8_lossy(&out.stdout));
    text.push_str("\n# stderr\n");
    text.push_str(&String::from_utf8_lossy(&out.stderr));
    if let Some(path) = written {
        text.push_str("\n# file\n");
        text.push_str(&file_text(&path));
    }
    // The paths are this test's temporary folder.
    let tmp = db.parent().unwrap();
    after_made_at(&text.replace(out_dir.to_str().unwrap(), "OUT").replace(tmp.to_str().unwrap(), "TMP"), made_at)
}

/// `text` with every time stamp (2026-11-27T01:25:51Z) later than the fixture's making, so the
/// time a command ran, written NOW.
pub(crate) fn after_made_at(text: &str, made_at: &str) -> String {
    let shape = |b: &[u8]| {
        b.len() == 20
            && b.iter().enumerate().all(|(i, c)| match i {
                4 | 7 => *c == b'-',
                10 => *c == b'T',
                13 | 16 => *c == b':',
                19 => *c == b'Z',
                _ => c.is_ascii_digit(),
            })
    };
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(|c: char| c.is_ascii_digit()) {
        out.push_str(&rest[..at]);
        rest = &rest[at..];
        match rest.get(..20) {
            Some(stamp) if shape(stamp.as_bytes()) && stamp > made_at => {
                out.push_str("NOW");
                rest = &rest[20..];
            }
            _ => {
                let digit = rest.chars().next().unwrap();
                out.push(digit);
                rest = &rest[digit.len_utf8()..];
            }
        }
    }
    out.push_str(rest);
    out
}

/// A report file as text; a workbook as its entries, but for the one that holds the time it
/// was written (docProps/core.xml).
fn file_text(path: &Path) -> String {
    if path.extension().is_some_and(|e| e == "xlsx") {
        let mut zip = zip::ZipArchive::new(std::fs::File::open(path).unwrap()).unwrap();
        let mut text = String::new();
        for i in 0..zip.len() {
            let mut entry = zip.by_index(i).unwrap();
            let entry_name = entry.name().unwrap().to_string();
            text.push_str(&format!("## {entry_name}\n"));
            if entry_name != "docProps/core.xml" {
                let mut body = Vec::new();
                entry.read_to_end(&mut body).unwrap();
                text.push_str(&String::from_utf8_lossy(&body));
                text.push('\n');
            }
        }
        text
    } else {
        String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned()
    }
}

#[test]
fn every_output_of_the_golden_database_is_what_it_was() {
    let dir = golden();
    check_commands(&dir.join("results.sqlite"), &dir, 50);
}

/// Runs every command of `set`/commands against a copy of `fixture` (never the fixture itself)
/// and compares each output with `set`/expected/NAME; `set`/made-at is when the fixture was made.
/// With IOMATRIX_GOLDEN=write the outputs are written there instead. At least `least` commands.
pub(crate) fn check_commands(fixture: &Path, set: &Path, least: usize) {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.sqlite");
    std::fs::copy(fixture, &db).unwrap();
    let out_dir = dir.path().join("out");
    std::fs::create_dir(&out_dir).unwrap();
    let made_at = std::fs::read_to_string(set.join("made-at")).unwrap();
    let expected_dir = set.join("expected");
    let write = writing();
    if write {
        std::fs::create_dir_all(&expected_dir).unwrap();
    }
    let commands = std::fs::read_to_string(set.join("commands")).unwrap();
    let mut differing = Vec::new();
    let mut checked = 0;
    for line in commands.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let (name, args) = line.split_once('\t').expect("NAME<TAB>ARGS");
        let got = capture(&db, &out_dir, made_at.trim(), name, args);
        let path = expected_dir.join(name);
        if write {
            std::fs::write(&path, &got).unwrap();
            continue;
        }
        let want = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        checked += 1;
        if let Some(difference) = first_difference(name, &want, &got) {
            differing.push(difference);
        }
    }
    assert!(write || checked > least, "only {checked} commands checked");
    assert!(differing.is_empty(), "{} of {checked} outputs differ:\n{}", differing.len(), differing.join("\n"));
}

/// The first line where `got` is not `want`, both printed, or None when they are the same bytes.
pub(crate) fn first_difference(name: &str, want: &str, got: &str) -> Option<String> {
    if got == want {
        return None;
    }
    let first = got.lines().zip(want.lines()).position(|(g, w)| g != w);
    // Same lines as far as the shorter goes: the first line one of them lacks.
    let first = first.unwrap_or_else(|| got.lines().count().min(want.lines().count()));
    Some(format!(
        "{name}: line {}\n  was: {}\n  now: {}",
        first + 1,
        want.lines().nth(first).unwrap_or("(end)"),
        got.lines().nth(first).unwrap_or("(end)")
    ))
}
