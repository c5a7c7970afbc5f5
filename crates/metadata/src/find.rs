//! IO500's find phase: walk the trees the mdtest phases left, match each file's name, size and
//! modification time, count the matches, and time the walk. IO500 runs pfind as
//! `pfind DATADIR -newer RESDIR/timestampfile -size 3901c -name "*01*"` and scores the phase as
//! the entries examined over the walk's time, in thousands a second ([`FindResult::rate`] / 1000);
//! [`FindRule::io500`] is that rule.
//!
//! The walk never follows a symbolic link and never crosses into another file system (a mount
//! inside the tree is counted as one entry, not entered); an entry it cannot read is counted in
//! its errors and the walk goes on. Only regular files can match.

use iomatrix_core::walk_errors::ErrorTally;
use serde::{Deserialize, Serialize};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::{Instant, SystemTime};

/// What a file must be to match: all of the given conditions at once, as find's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FindRule {
    /// The name's pattern, as find's `-name`: `*` any run of characters, `?` any one, the rest
    /// itself.
    pub name: Option<String>,
    /// Exactly this many bytes, as find's `-size Nc`.
    pub size: Option<u64>,
    /// Modified after this time, as find's `-newer FILE` with FILE's modification time.
    pub newer_than: Option<SystemTime>,
}

/// Why a rule cannot be made.
#[derive(Debug, thiserror::Error)]
pub enum FindRuleError {
    /// A pattern holding what find's `-name` reads as a class or an escape.
    #[error("-name {0}: only '*' and '?' are read as wildcards here; '[' and '\\' are not taken yet")]
    Pattern(String),
    /// The reference file of `-newer` could not be read.
    #[error("-newer {path}: {error}")]
    Newer {
        /// The reference file.
        path: PathBuf,
        /// What reading its modification time met.
        error: std::io::Error,
    },
}

impl FindRule {
    /// IO500's rule: `-newer timestamp -size 3901c -name "*01*"`.
    pub fn io500(timestamp: &Path) -> Result<FindRule, FindRuleError> {
        FindRule::new(Some("*01*"), Some(3901), Some(timestamp))
    }

    /// A rule of find's three tests; each left out matches every file.
    pub fn new(name: Option<&str>, size: Option<u64>, newer: Option<&Path>) -> Result<FindRule, FindRuleError> {
        if let Some(pattern) = name.filter(|p| p.contains(['[', '\\'])) {
            return Err(FindRuleError::Pattern(pattern.to_string()));
        }
        let newer_than = newer
            .map(|path| {
                std::fs::metadata(path)
                    .and_then(|m| m.modified())
                    .map_err(|error| FindRuleError::Newer { path: path.to_path_buf(), error })
            })
            .transpose()?;
        Ok(FindRule { name: name.map(str::to_string), size, newer_than })
    }

    /// Whether a regular file named `name` with `meta` matches.
    pub fn matches(&self, name: &str, meta: &std::fs::Metadata) -> bool {
        self.size.is_none_or(|size| meta.len() == size)
            && self.newer_than.is_none_or(|t| meta.modified().is_ok_and(|m| m > t))
            && self.name.as_deref().is_none_or(|pattern| glob_matches(pattern.as_bytes(), name.as_bytes()))
    }
}

/// `*` and `?` over bytes, as fnmatch without classes: iterative, with one point to go back to
/// (the last `*`), so no pattern costs more than pattern x name steps.
fn glob_matches(pattern: &[u8], name: &[u8]) -> bool {
    let (mut p, mut n) = (0, 0);
    let mut back: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some(b'*') => {
                back = Some((p, n));
                p += 1;
            }
            Some(&c) if c == b'?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match back {
                Some((star, taken)) => {
                    p = star + 1;
                    n = taken + 1;
                    back = Some((star, taken + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == b'*')
}

/// What a find walk found, and in what time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FindResult {
    /// Files that matched the rule.
    pub found: u64,
    /// Every entry examined below the root: files, folders and the rest (IO500's total).
    pub examined: u64,
    /// The walk's time, from its first readdir to its last entry's check.
    pub seconds: f64,
    /// Entries that could not be read, by kind; the walk went on after each.
    pub errors: ErrorTally,
}

impl FindResult {
    /// Entries examined a second, the rate IO500 scores find by (0 for no time).
    pub fn rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.examined as f64 / self.seconds
        } else {
            0.0
        }
    }

    /// Matches a second (0 for no time).
    pub fn found_rate(&self) -> f64 {
        if self.seconds > 0.0 {
            self.found as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// Walks `root` (its own entry not counted), timed, checking each regular file against `rule`.
/// It stops early when `stop` says so (a signal): the result then holds what was walked, and
/// `false` as its second part.
pub fn find(root: &Path, rule: &FindRule, stop: &dyn Fn() -> bool) -> std::io::Result<(FindResult, bool)> {
    find_watched(root, rule, stop, &mut |_, _| {})
}

/// [`find`], telling `each_folder` how many entries each folder's walk examined and when that
/// walk began (one clock read a folder: the walk's figures over time count a folder's entries
/// as one batch).
pub fn find_watched(
    root: &Path,
    rule: &FindRule,
    stop: &dyn Fn() -> bool,
    each_folder: &mut dyn FnMut(u64, Instant),
) -> std::io::Result<(FindResult, bool)> {
    let device = std::fs::symlink_metadata(root)?.dev();
    let started = Instant::now();
    let mut result = FindResult { found: 0, examined: 0, seconds: 0.0, errors: ErrorTally::default() };
    let mut folders = vec![root.to_path_buf()];
    let mut whole = true;
    while let Some(folder) = folders.pop() {
        if stop() {
            whole = false;
            break;
        }
        let (before, began) = (result.examined, Instant::now());
        walk_folder(&folder, device, rule, &mut result, &mut folders);
        each_folder(result.examined - before, began);
    }
    result.seconds = started.elapsed().as_secs_f64();
    Ok((result, whole))
}

/// One folder's entries: each counted, each regular file checked, each folder on this file
/// system kept for later.
fn walk_folder(folder: &Path, device: u64, rule: &FindRule, result: &mut FindResult, folders: &mut Vec<PathBuf>) {
    let entries = match std::fs::read_dir(folder) {
        Ok(entries) => entries,
        Err(e) => return result.errors.add("readdir", folder, &e),
    };
    for entry in entries {
        let entry = match entry {
            Ok(entry) => entry,
            Err(e) => {
                result.errors.add("readdir", folder, &e);
                continue;
            }
        };
        result.examined += 1;
        let path = entry.path();
        let meta = match std::fs::symlink_metadata(&path) {
            Ok(meta) => meta,
            Err(e) => {
                result.errors.add("stat", &path, &e);
                continue;
            }
        };
        if meta.is_dir() && meta.dev() == device {
            folders.push(path);
        } else if meta.is_file() && rule.matches(&entry.file_name().to_string_lossy(), &meta) {
            result.found += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;
    use std::time::Duration;

    #[test]
    fn names_match_as_finds_star_and_question_mark() {
        let m = |p: &str, n: &str| glob_matches(p.as_bytes(), n.as_bytes());
        assert!(m("*01*", "file.mdtest.3.01"));
        assert!(m("*01*", "01"));
        assert!(m("*01*", "x010y"));
        assert!(!m("*01*", "file.mdtest.3.10"));
        assert!(!m("*01*", "0_1"));
        assert!(m("a?c", "abc") && !m("a?c", "ac"));
        assert!(m("*", "") && m("**a**", "a") && !m("a*b", "a"));
        assert!(m("*a*a*a*a*b", "aaaaaaaaab") && !m("*a*a*a*a*b", "aaaaaaaaaa"));
        assert!(FindRule::new(Some("[0-9]*"), None, None).is_err(), "a class is refused, not read as letters");
    }

    /// A tree as mdtest-easy and -hard leave it: empty files in a folder per client, 3,901-byte
    /// files in a shared folder, some written before the timestamp file and some after.
    fn tree(root: &Path) -> PathBuf {
        let write = |path: PathBuf, bytes: usize| std::fs::write(path, vec![7u8; bytes]).unwrap();
        let old = root.join("old");
        std::fs::create_dir_all(&old).unwrap();
        // Their names and size match; only -newer leaves them out.
        for i in 95..130 {
            write(old.join(format!("file.mdtest.0.{i}")), 3901);
        }
        let stamp = root.join("timestampfile");
        std::fs::write(&stamp, b"").unwrap();
        // mtimes are as fine as the file system's clock: make sure the rest are after the stamp.
        let then = std::fs::metadata(&stamp).unwrap().modified().unwrap();
        while SystemTime::now() <= then + Duration::from_millis(20) {
            std::thread::sleep(Duration::from_millis(5));
        }
        let data = root.join("data");
        for client in 0..3 {
            let easy = data.join(format!("mdtest-easy/mdtest_tree.{client}.0"));
            std::fs::create_dir_all(&easy).unwrap();
            for i in 0..120 {
                write(easy.join(format!("file.mdtest.{client}.{i}")), 0);
            }
        }
        let hard = data.join("mdtest-hard/mdtest_tree.0");
        std::fs::create_dir_all(&hard).unwrap();
        for client in 0..3 {
            for i in 0..420 {
                write(hard.join(format!("file.mdtest.{client}.{i}")), if i % 7 == 0 { 3900 } else { 3901 });
            }
        }
        std::os::unix::fs::symlink("mdtest_tree.0/file.mdtest.0.101", data.join("mdtest-hard/link.01")).unwrap();
        stamp
    }

    fn count_with_find(args: &[&str]) -> u64 {
        let out = Command::new("find").args(args).output().expect("find runs");
        assert!(out.status.success(), "find {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().lines().count() as u64
    }

    #[test]
    fn the_count_is_finds_on_the_same_tree() {
        let dir = tempfile::tempdir().unwrap();
        let stamp = tree(dir.path());
        let root = dir.path().to_path_buf();
        let rule = FindRule::io500(&stamp).unwrap();
        let (result, whole) = find(&root, &rule, &|| false).unwrap();
        let (r, s) = (root.to_str().unwrap(), stamp.to_str().unwrap());
        let want = count_with_find(&[r, "-xdev", "-type", "f", "-newer", s, "-size", "3901c", "-name", "*01*"]);
        let all = count_with_find(&[r, "-xdev", "-mindepth", "1"]);
        println!(
            "found {} of {} examined in {:.6}s; find: {want} of {all}",
            result.found, result.examined, result.seconds
        );
        assert!(whole);
        assert_eq!(result.found, want);
        assert_eq!(result.examined, all, "every entry below the root, as find lists them");
        // 101, 201 and 401 of each client: 301 is 3,900 bytes, the old folder's 101 is older.
        assert_eq!(want, 9, "the test's tree tells matches from the rest");
        assert_eq!(result.errors.total, 0);
        assert!(result.seconds > 0.0 && result.rate() > 0.0);

        let by_name = FindRule::new(Some("*.1?"), None, None).unwrap();
        let (named, _) = find(&root, &by_name, &|| false).unwrap();
        assert_eq!(named.found, count_with_find(&[r, "-xdev", "-type", "f", "-name", "*.1?"]));
    }

    #[test]
    fn a_stop_ends_the_walk_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        tree(dir.path());
        let (result, whole) = find(dir.path(), &FindRule::new(None, None, None).unwrap(), &|| true).unwrap();
        assert!(!whole);
        assert_eq!(result.examined, 0);
    }
}
