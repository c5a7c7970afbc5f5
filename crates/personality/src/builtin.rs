//! The personalities built into iomatrix (`iomatrix personalities list`),
//! each a TOML file under `crates/personality/personalities/`.

use crate::schema::{parse, FileError, Personality};
use std::path::Path;

/// (name, the file's text), in the order `list` shows them.
pub const BUILTIN: [(&str, &str); 5] = [
    ("fileserver", include_str!("../personalities/fileserver.toml")),
    ("varmail", include_str!("../personalities/varmail.toml")),
    ("webserver", include_str!("../personalities/webserver.toml")),
    ("homefolders", include_str!("../personalities/homefolders.toml")),
    ("netware-2008", include_str!("../personalities/netware-2008.toml")),
];

/// The built-in's text, by name.
pub fn text(name: &str) -> Option<&'static str> {
    BUILTIN.iter().find(|(n, _)| *n == name).map(|(_, t)| *t)
}

/// The built-in, checked; None for a name that is not one.
pub fn get(name: &str) -> Option<Result<Personality, FileError>> {
    text(name).map(|t| parse(t, Path::new(".")))
}

/// The built-in personalities' names, as `--personality` takes them.
pub fn names() -> impl Iterator<Item = &'static str> + Clone {
    BUILTIN.iter().map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_builtin_parses_has_a_small_scale_and_its_own_name() {
        for (name, text) in BUILTIN {
            let p = parse(text, Path::new(".")).unwrap_or_else(|e| panic!("{name}: {e}"));
            assert_eq!(p.name, name);
            assert!(p.scales.contains_key("small"), "{name}");
            assert!(!p.description.is_empty());
        }
        // filebench's filesets are shared by its threads, with its sizes; home folders are each user's own.
        let sets = |name: &str| -> Vec<(u64, bool)> {
            get(name).unwrap().unwrap().filesets.iter().map(|f| (f.files, f.shared)).collect()
        };
        assert_eq!(sets("varmail"), [(1000, true)]);
        assert_eq!(sets("webserver"), [(1000, true), (1, true)]);
        assert_eq!(sets("fileserver"), [(10000, true)]);
        assert_eq!(sets("homefolders"), [(200, false)]);
        assert_eq!(sets("netware-2008"), [(1000, false)]);
        let nw = get("netware-2008").unwrap().unwrap();
        assert_eq!((nw.connections, nw.filesets[0].files, nw.record), (590, 1000, 4096));
        assert_eq!(nw.phases.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["write", "read"]);
    }
}
