//! The file-size profile: how many files (and bytes) a real tree holds per
//! power-of-two size class, saved as a small JSON file (`iomatrix.profile/1`,
//! docs/json.md) that loads draw file sizes from.

use crate::classes::{class_max, class_min, class_of, CLASSES};
use iomatrix_random::scramble;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The `"schema"` of a profile file.
pub const PROFILE_SCHEMA: &str = "iomatrix.profile/1";

const HOW_TO_MAKE: &str = "write one with `iomatrix scan PATH --save-profile FILE`";

/// Size classes: class 0 holds only 0-byte files; class k >= 1 holds sizes in [2^(k-1), 2^k - 1].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeClass {
    /// The class's smallest size (bytes): 0, or 2^(k-1).
    pub min_bytes: u64,
    /// The class's largest size (bytes): 0, or 2^k - 1.
    pub max_bytes: u64,
    /// Regular files of a size in the class.
    pub files: u64,
    /// Their apparent sizes, summed (bytes).
    pub bytes: u64,
}

/// File counts and bytes per size class of one scanned tree. Classes are in
/// ascending order; a profile made by `scan` lists every class from 0 up to its
/// largest file's, empty ones included; a loaded one may leave empty classes out.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Profile {
    /// The scanned tree (as given to `scan`).
    pub source: String,
    /// When the scan ran, UTC, RFC 3339 (`2026-11-22T04:11:03Z`); empty if unknown.
    #[serde(default)]
    pub created_at: String,
    /// The size classes, smallest first.
    pub classes: Vec<SizeClass>,
}

/// Why a profile file cannot be used: names the file, the problem and the fix.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ProfileError(pub String);

/// A profile the user named is the user's to fix: exit code 2.
impl From<ProfileError> for iomatrix_core::UsageError {
    fn from(e: ProfileError) -> Self {
        iomatrix_core::UsageError(e.0)
    }
}

/// A size profile as the guarded writer knows one: a JSON file whose `"schema"` is
/// [`PROFILE_SCHEMA`] (a previous profile may be replaced; any other file only with `--force`).
pub struct ProfileKind;

impl iomatrix_guard::Kind for ProfileKind {
    fn describe(&self) -> String {
        format!("an iomatrix size profile (schema {PROFILE_SCHEMA})")
    }

    fn recognises(&self, existing: &mut std::fs::File) -> bool {
        #[derive(Deserialize)]
        struct Head {
            schema: String,
        }
        let bound = iomatrix_guard::Input::PROFILE.max_bytes;
        let reader = std::io::BufReader::new(std::io::Read::take(existing, bound));
        serde_json::from_reader::<_, Head>(reader).is_ok_and(|h| h.schema == PROFILE_SCHEMA)
    }
}

/// The file as written: the profile plus its schema and totals (checked on load
/// when present, for hand-edited files).
#[derive(Serialize, Deserialize)]
struct ProfileFile {
    schema: String,
    source: String,
    #[serde(default)]
    created_at: String,
    #[serde(default)]
    files: Option<u64>,
    #[serde(default)]
    bytes: Option<u64>,
    classes: Vec<SizeClass>,
}

impl Profile {
    /// Reads and checks a profile file (`iomatrix scan --save-profile` writes one from [`Profile::to_json`]).
    pub fn load(path: &Path) -> Result<Profile, ProfileError> {
        let shown = path.display();
        // The one bounded reader: a device, FIFO, huge or binary file is refused before it costs.
        let text = iomatrix_guard::read(path, &iomatrix_guard::Input::PROFILE)
            .map_err(|e| ProfileError(format!("{}; give the path of a profile file ({HOW_TO_MAKE})", e.message)))?;
        Profile::from_json(&text, &shown.to_string())
    }

    /// Checks and reads a profile's text; `shown` names it in errors.
    pub fn from_json(text: &[u8], shown: &str) -> Result<Profile, ProfileError> {
        let err = |problem: String| ProfileError(format!("profile {shown}: {problem}"));
        if text.iter().all(u8::is_ascii_whitespace) {
            return Err(err(format!("the file is empty; {HOW_TO_MAKE}")));
        }
        let value: serde_json::Value = serde_json::from_slice(text)
            .map_err(|e| err(format!("not valid JSON ({e}); {HOW_TO_MAKE}, or fix the file")))?;
        match value.get("schema").and_then(|s| s.as_str()) {
            Some(PROFILE_SCHEMA) => {}
            Some(other) => {
                return Err(err(format!(
                    "schema is \"{other}\", not \"{PROFILE_SCHEMA}\": this is not a file-size profile; {HOW_TO_MAKE}"
                )))
            }
            None => {
                return Err(err(format!(
                    "no \"schema\": \"{PROFILE_SCHEMA}\" field: this is not a file-size profile; {HOW_TO_MAKE}"
                )))
            }
        }
        let file: ProfileFile = serde_json::from_value(value).map_err(|e| {
            err(format!("does not follow schema {PROFILE_SCHEMA} ({e}); see docs/json.md, or {HOW_TO_MAKE}"))
        })?;
        let profile = Profile { source: file.source, created_at: file.created_at, classes: file.classes };
        profile.check().map_err(|problem| err(format!("{problem}; {HOW_TO_MAKE}, or fix the file")))?;
        let (files, bytes) = profile.totals();
        if let Some(stated) = file.files.filter(|&n| u128::from(n) != files) {
            return Err(err(format!(
                "\"files\" says {stated} but the classes hold {files}; {HOW_TO_MAKE}, or fix the file"
            )));
        }
        if let Some(stated) = file.bytes.filter(|&n| u128::from(n) != bytes) {
            return Err(err(format!(
                "\"bytes\" says {stated} but the classes hold {bytes}; {HOW_TO_MAKE}, or fix the file"
            )));
        }
        Ok(profile)
    }

    /// The classes' layout and counts, as [`Profile::load`] requires them.
    fn check(&self) -> Result<(), ProfileError> {
        if self.classes.is_empty() {
            return Err(ProfileError(
                "\"classes\" is empty: a profile needs at least one size class with files".to_string(),
            ));
        }
        let mut previous: Option<usize> = None;
        for (i, c) in self.classes.iter().enumerate() {
            let k = class_of(c.min_bytes);
            if c.min_bytes != class_min(k) || c.max_bytes != class_max(k) {
                return Err(ProfileError(format!(
                    "class #{i} ({}..={}) is not a power-of-two size class: class 0 is 0..=0, class k >= 1 is \
                     2^(k-1)..=2^k-1 (e.g. 1024..=2047)",
                    c.min_bytes, c.max_bytes
                )));
            }
            if previous.is_some_and(|p| p >= k) {
                return Err(ProfileError(format!(
                    "class #{i} ({}..={}) is out of order or repeated: list classes once each, smallest first",
                    c.min_bytes, c.max_bytes
                )));
            }
            previous = Some(k);
            let (lo, hi) =
                (u128::from(c.files) * u128::from(c.min_bytes), u128::from(c.files) * u128::from(c.max_bytes));
            let bytes = u128::from(c.bytes);
            if bytes < lo || bytes > hi {
                return Err(ProfileError(format!(
                    "class #{i} ({}..={}) holds {} files but {} bytes: its bytes must lie between files x {} and \
                     files x {} ({lo}..={hi})",
                    c.min_bytes, c.max_bytes, c.files, c.bytes, c.min_bytes, c.max_bytes
                )));
            }
        }
        let (files, _) = self.totals();
        if files == 0 {
            return Err(ProfileError(
                "every class holds 0 files: a profile needs at least one file to draw sizes from".to_string(),
            ));
        }
        if files > u128::from(u64::MAX) {
            return Err(ProfileError(format!("the classes hold {files} files in all, more than a 64-bit count")));
        }
        Ok(())
    }

    /// Files and bytes over all classes, without overflow.
    fn totals(&self) -> (u128, u128) {
        self.classes.iter().fold((0, 0), |(f, b), c| (f + u128::from(c.files), b + u128::from(c.bytes)))
    }

    /// The profile as `iomatrix.profile/1` JSON, one class a line (written by the binary's
    /// guarded writer, which [`ProfileKind`] tells a previous profile to).
    pub fn to_json(&self) -> std::io::Result<String> {
        let (files, bytes) = self.totals();
        let mut out = String::from("{\n");
        out += &format!("  \"schema\": {},\n", json(PROFILE_SCHEMA)?);
        out += &format!("  \"source\": {},\n", json(&self.source)?);
        out += &format!("  \"created_at\": {},\n", json(&self.created_at)?);
        out += &format!("  \"files\": {},\n", u64::try_from(files).unwrap_or(u64::MAX));
        out += &format!("  \"bytes\": {},\n", u64::try_from(bytes).unwrap_or(u64::MAX));
        out += "  \"classes\": [";
        for (i, c) in self.classes.iter().enumerate() {
            out += if i == 0 { "\n    " } else { ",\n    " };
            out += &json(c)?;
        }
        out += if self.classes.is_empty() { "]\n}\n" } else { "\n  ]\n}\n" };
        Ok(out)
    }

    /// Files in all classes.
    pub fn total_files(&self) -> u64 {
        self.classes.iter().fold(0u64, |n, c| n.saturating_add(c.files))
    }

    /// A file size drawn with probability proportional to each class's file count; within a class, uniform in [min_bytes, max_bytes]. `u` is a uniformly random u64 (the caller's seeded generator); the draw must use it deterministically.
    ///
    /// The high bits of `u` pick the file (so the class), `u` scrambled (a
    /// bijection, so bits the class choice does not fix) the size within the
    /// class. A profile without files draws 0.
    pub fn draw(&self, u: u64) -> u64 {
        let total = self.total_files();
        if total == 0 {
            return 0;
        }
        let pick = ((u128::from(u) * u128::from(total)) >> 64) as u64;
        let mut seen = 0u64;
        for c in &self.classes {
            seen = seen.saturating_add(c.files);
            if pick < seen {
                let (lo, hi) = (c.min_bytes.min(c.max_bytes), c.max_bytes.max(c.min_bytes));
                let width = u128::from(hi - lo) + 1;
                return lo + ((u128::from(scramble(u)) * width) >> 64) as u64;
            }
        }
        // Not reached: pick < total = the last `seen`.
        self.classes.last().map_or(0, |c| c.max_bytes)
    }

    /// Share of files (0..=1) whose size falls in [lo, hi] — for later weighting of IOzone matrix cells by file size; classes partly inside count in proportion.
    pub fn share_of_files_between(&self, lo: u64, hi: u64) -> f64 {
        let total = self.total_files();
        if lo > hi || total == 0 {
            return 0.0;
        }
        let inside: f64 = self
            .classes
            .iter()
            .filter_map(|c| {
                let (a, b) = (lo.max(c.min_bytes), hi.min(c.max_bytes));
                (a <= b && c.min_bytes <= c.max_bytes).then(|| {
                    let part = ((b - a) as f64 + 1.0) / ((c.max_bytes - c.min_bytes) as f64 + 1.0);
                    c.files as f64 * part
                })
            })
            .sum();
        (inside / total as f64).clamp(0.0, 1.0)
    }

    /// The profile's classes as a full table, class k at index k (empty classes
    /// filled in), up to the largest class listed.
    pub fn dense_classes(&self) -> Vec<SizeClass> {
        let top = self.classes.iter().map(|c| class_of(c.min_bytes)).max().map_or(0, |k| k + 1).min(CLASSES);
        let mut out: Vec<SizeClass> = (0..top)
            .map(|k| SizeClass { min_bytes: class_min(k), max_bytes: class_max(k), files: 0, bytes: 0 })
            .collect();
        for c in &self.classes {
            let slot = &mut out[class_of(c.min_bytes)];
            slot.files = slot.files.saturating_add(c.files);
            slot.bytes = slot.bytes.saturating_add(c.bytes);
        }
        out
    }
}

fn json<T: Serialize + ?Sized>(value: &T) -> std::io::Result<String> {
    serde_json::to_string(value).map_err(std::io::Error::other)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn class(k: usize, files: u64, bytes: u64) -> SizeClass {
        SizeClass { min_bytes: class_min(k), max_bytes: class_max(k), files, bytes }
    }

    fn profile(classes: Vec<SizeClass>) -> Profile {
        Profile { source: "/data".into(), created_at: "2026-11-22T04:11:03Z".into(), classes }
    }

    /// Writes `text` to a profile file and loads it; the error's message.
    fn load_err(text: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, text).unwrap();
        let msg = Profile::load(&path).unwrap_err().to_string();
        assert!(msg.contains(&path.display().to_string()), "names the file: {msg}");
        msg
    }

    fn file_with(classes: &str) -> String {
        format!(r#"{{"schema": "iomatrix.profile/1", "source": "/data", "created_at": "", "classes": [{classes}]}}"#)
    }

    #[test]
    fn saves_and_loads_back() {
        let p = profile(vec![class(0, 3, 0), class(1, 0, 0), class(2, 2, 5), class(13, 10, 50_000)]);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, p.to_json().unwrap()).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains(r#""schema": "iomatrix.profile/1""#), "{text}");
        assert!(text.contains(r#""files": 15,"#) && text.contains(r#""bytes": 50005,"#), "{text}");
        assert!(text.lines().count() < 20, "one class a line: {text}");
        assert_eq!(Profile::load(&path).unwrap(), p);
        assert_eq!(p.total_files(), 15);
        // Classes may be left out (sparse); a dense table fills them in.
        let sparse = load_ok(&file_with(r#"{"min_bytes": 4, "max_bytes": 7, "files": 1, "bytes": 5}"#));
        assert_eq!(sparse.created_at, "");
        let dense = sparse.dense_classes();
        assert_eq!(dense.len(), 4);
        assert_eq!((dense[3].files, dense[0].files), (1, 0));
    }

    fn load_ok(text: &str) -> Profile {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p.json");
        std::fs::write(&path, text).unwrap();
        Profile::load(&path).unwrap()
    }

    #[test]
    fn each_bad_file_is_refused_with_its_reason() {
        let missing = Profile::load(Path::new("/no/such/profile.json")).unwrap_err();
        let usage: iomatrix_core::UsageError = missing.clone().into();
        assert_eq!(usage.0, missing.0);
        let missing = missing.to_string();
        assert!(missing.contains("/no/such/profile.json") && missing.contains("--save-profile"), "{missing}");
        assert!(load_err("").contains("empty"));
        assert!(load_err(" \n").contains("empty"));
        assert!(load_err("{\"schema\": ").contains("not valid JSON"));
        assert!(load_err("[1, 2]").contains("no \"schema\""));
        assert!(
            load_err(r#"{"schema": "iomatrix.scan/1"}"#).contains("\"iomatrix.scan/1\", not \"iomatrix.profile/1\"")
        );
        let m = load_err(r#"{"schema": "iomatrix.profile/1", "source": "/x"}"#);
        assert!(m.contains("does not follow schema") && m.contains("classes"), "{m}");
        let m = load_err(&file_with(r#"{"min_bytes": 4, "max_bytes": 7, "files": "many", "bytes": 5}"#));
        assert!(m.contains("does not follow schema"), "{m}");
        assert!(load_err(&file_with("")).contains("\"classes\" is empty"));
        let m = load_err(&file_with(r#"{"min_bytes": 0, "max_bytes": 0, "files": 0, "bytes": 0}"#));
        assert!(m.contains("0 files"), "{m}");
        let m = load_err(&file_with(r#"{"min_bytes": 4, "max_bytes": 8, "files": 1, "bytes": 5}"#));
        assert!(m.contains("not a power-of-two size class"), "{m}");
        let m = load_err(&file_with(r#"{"min_bytes": 5, "max_bytes": 7, "files": 1, "bytes": 5}"#));
        assert!(m.contains("not a power-of-two size class"), "{m}");
        let two = r#"{"min_bytes": 4, "max_bytes": 7, "files": 1, "bytes": 5}, {"min_bytes": 2, "max_bytes": 3, "files": 1, "bytes": 2}"#;
        assert!(load_err(&file_with(two)).contains("out of order or repeated"));
        let twice = r#"{"min_bytes": 4, "max_bytes": 7, "files": 1, "bytes": 5}, {"min_bytes": 4, "max_bytes": 7, "files": 1, "bytes": 5}"#;
        assert!(load_err(&file_with(twice)).contains("out of order or repeated"));
        let m = load_err(&file_with(r#"{"min_bytes": 4, "max_bytes": 7, "files": 2, "bytes": 7}"#));
        assert!(m.contains("must lie between") && m.contains("8..=14"), "{m}");
        assert!(load_err(&file_with(r#"{"min_bytes": 4, "max_bytes": 7, "files": 2, "bytes": 15}"#))
            .contains("must lie between"));
        let m = load_err(
            r#"{"schema": "iomatrix.profile/1", "source": "/d", "files": 3, "classes": [{"min_bytes": 4, "max_bytes": 7, "files": 2, "bytes": 8}]}"#,
        );
        assert!(m.contains("\"files\" says 3 but the classes hold 2"), "{m}");
        let big = format!(
            r#"{{"min_bytes": 0, "max_bytes": 0, "files": {max}, "bytes": 0}}, {{"min_bytes": 1, "max_bytes": 1, "files": {max}, "bytes": {max}}}"#,
            max = u64::MAX
        );
        assert!(load_err(&file_with(&big)).contains("more than a 64-bit count"));
    }

    /// The seeded generator a caller would use.
    fn generator(seed: u64) -> impl FnMut() -> u64 {
        let mut g = iomatrix_random::Generator::seeded(seed);
        move || g.next_u64()
    }

    #[test]
    fn draws_follow_the_file_counts() {
        // 70% 0-byte, 20% in 1k-2k, 10% in 1m-2m.
        let p = profile(vec![class(0, 700, 0), class(11, 200, 200 * 1500), class(21, 100, 100 * 1_500_000)]);
        let mut next = generator(42);
        let n = 200_000;
        let mut counts = [0u64; 3];
        let (mut lo_seen, mut hi_seen) = (u64::MAX, 0);
        for _ in 0..n {
            let size = p.draw(next());
            match class_of(size) {
                0 => counts[0] += 1,
                11 => {
                    counts[1] += 1;
                    lo_seen = lo_seen.min(size);
                    hi_seen = hi_seen.max(size);
                }
                21 => counts[2] += 1,
                other => panic!("size {size} in class {other}, which has no files"),
            }
        }
        for (got, want) in counts.iter().zip([0.7, 0.2, 0.1]) {
            let share = *got as f64 / f64::from(n);
            assert!((share - want).abs() < 0.005, "share {share}, want {want}");
        }
        // Uniform within the class: both ends are reached.
        assert!(lo_seen < 1024 + 20 && hi_seen > 2047 - 20, "{lo_seen}..{hi_seen}");
        // Deterministic in u; the ends of u's range stay inside the profile.
        assert_eq!(p.draw(12345), p.draw(12345));
        assert_eq!(p.draw(0), 0);
        assert_eq!(class_of(p.draw(u64::MAX)), 21);
        assert_eq!(profile(vec![]).draw(7), 0);
        // The largest class draws without overflow.
        let top = profile(vec![class(64, 1, u64::MAX)]);
        assert!(top.draw(u64::MAX) >= 1 << 63);
    }

    #[test]
    fn shares_between_sizes() {
        let p = profile(vec![class(0, 10, 0), class(11, 30, 30 * 1500), class(21, 60, 60 * 1_500_000)]);
        let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
        assert!(close(p.share_of_files_between(0, u64::MAX), 1.0));
        assert!(close(p.share_of_files_between(0, 0), 0.1));
        assert!(close(p.share_of_files_between(1024, 2047), 0.3));
        // Half of class 11 (1024..=1535) holds half its files.
        assert!(close(p.share_of_files_between(1, 1535), 0.15));
        assert!(close(
            p.share_of_files_between(1 << 20, 3 << 19),
            0.6 * (f64::from(1 << 19) + 1.0) / (1u64 << 20) as f64
        ));
        assert!(close(p.share_of_files_between(3000, 4000), 0.0));
        assert!(close(p.share_of_files_between(10, 5), 0.0));
        assert!(close(profile(vec![]).share_of_files_between(0, 10), 0.0));
    }
}
