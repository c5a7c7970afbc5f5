//! The one reader of a stored run: it turns the JSON a run stores (its environment, the
//! conditions every suite records, each client's rank) into types, so shared code (analysis,
//! the reports, the binary) reads a stored run through these and never by a key into its JSON.
//! A cell's figures read through [`CellRow::figures`](crate::CellRow::figures), declared beside it.
//!
//! Stored runs of any age read: a field that is missing, or holds another type, reads as
//! absent ([`iomatrix_environment::stored::lenient`]), as the string-keyed reads these replace
//! did. What a suite alone records (bonnie's `per_char`, access's `pin`, ...) is not here: each
//! suite's own typed conditions are a later step.

use crate::StoredRun;
use iomatrix_environment::stored::{lenient, lenient_list, lenient_object};
pub use iomatrix_environment::stored::{
    Fact, StoredBlockDevice, StoredClientHost, StoredEnvironment, StoredFolder, StoredHost, StoredNic, StoredServer,
    StoredTarget,
};
use serde::Deserialize;

impl StoredRun {
    /// The run's environment, typed ([`StoredEnvironment`]).
    pub fn environment_facts(&self) -> StoredEnvironment {
        StoredEnvironment::of(&self.environment)
    }

    /// The conditions every suite's run records, typed ([`StoredConditions`]).
    pub fn conditions_facts(&self) -> StoredConditions {
        StoredConditions::of(&self.conditions)
    }

    /// Where a merged run came from, typed; None for a run made here.
    pub fn origin_facts(&self) -> Option<StoredOrigin> {
        self.origin.as_ref().map(|o| lenient_object(o).ok().flatten().unwrap_or_default())
    }

    /// What the run could not measure, typed; None when nothing was lost.
    pub fn lost_facts(&self) -> Option<StoredLost> {
        self.lost.as_ref().map(|l| lenient_object(l).ok().flatten().unwrap_or_default())
    }
}

/// Where a merged run came from: the database merged and the run's id there.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredOrigin {
    #[serde(deserialize_with = "lenient")]
    pub file: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub run_id: Option<i64>,
}

/// What a run could not measure, counted ([`Store::record_lost`](crate::Store::record_lost)).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredLost {
    pub cells_not_stored: Fact,
    pub cells_planned: Fact,
    pub client_cells_failed: Fact,
    /// The cells whose clients failed, each with how many.
    #[serde(deserialize_with = "lenient_list")]
    pub failed: Option<Vec<LostCell>>,
}

/// A cell some of whose clients failed, and how many.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LostCell {
    pub cell: Fact,
    pub clients_failed: Fact,
}

/// The rank a client's stored figures name (each item of a cell's `client_figures`); None
/// where it names none.
pub fn client_rank(figures: &serde_json::Value) -> Option<u64> {
    #[derive(Deserialize)]
    struct Ranked {
        #[serde(default, deserialize_with = "lenient")]
        rank: Option<u64>,
    }
    lenient_object::<_, Ranked>(figures).ok().flatten().and_then(|r| r.rank)
}

/// The conditions the harness records for every suite's run, and an import's source: the
/// target and how it was reached, the backend, cache and clients, the files against RAM, how
/// the files were prepared and the data written, `--verify`, the generator.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredConditions {
    pub target: Fact,
    pub fs_type: Fact,
    pub mount_source: Fact,
    pub backend: Fact,
    pub direct: Fact,
    pub cache: Fact,
    pub clients: Fact,
    /// Null where a suite cannot know its file sizes beforehand (backup).
    pub files_vs_ram: Fact,
    #[serde(deserialize_with = "lenient")]
    pub largest_file_bytes: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub ram_bytes: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub prepare: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub timing: Option<String>,
    /// io_uring's submission and completion modes.
    #[serde(deserialize_with = "lenient")]
    pub submissions: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub completions: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub data: Option<String>,
    pub verify: Fact,
    #[serde(deserialize_with = "lenient")]
    pub verify_scope: Option<String>,
    pub verify_timing: Fact,
    /// Absent in runs stored before the generator was named.
    #[serde(deserialize_with = "lenient")]
    pub generator: Option<String>,
    /// A target on a server reached by iomatrix's own protocol client.
    #[serde(deserialize_with = "lenient_object")]
    pub remote: Option<StoredRemote>,
    /// Where an imported run came from.
    #[serde(deserialize_with = "lenient_object")]
    pub imported: Option<StoredImport>,
    /// A published table's lines as typed.
    #[serde(deserialize_with = "lenient_list")]
    pub published_table: Option<Vec<PublishedLine>>,
}

impl StoredConditions {
    /// The conditions of a stored run's JSON; every field absent where it does not read.
    pub fn of(stored: &serde_json::Value) -> StoredConditions {
        lenient_object(stored).ok().flatten().unwrap_or_default()
    }
}

/// A server reached by iomatrix's own NFS or SMB client, as the conditions store it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredRemote {
    pub protocol: Fact,
    pub version: Fact,
    pub server: Fact,
    pub user: Fact,
    #[serde(deserialize_with = "lenient")]
    pub nfs_port: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub share: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub read_max_bytes: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub write_max_bytes: Option<u64>,
    #[serde(deserialize_with = "lenient")]
    pub write_stability: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub known_limits: Option<String>,
}

/// An imported run's source, as its conditions store it (`imported`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredImport {
    #[serde(deserialize_with = "lenient")]
    pub tool: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub version: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub source: Option<String>,
    #[serde(deserialize_with = "lenient")]
    pub measured_at: Option<String>,
    /// A published table (`import --format published`).
    #[serde(deserialize_with = "lenient")]
    pub published: Option<bool>,
    /// What the file did not say, notes, what was skipped: the items that are text.
    #[serde(deserialize_with = "lenient")]
    pub unknown: Vec<Fact>,
    #[serde(deserialize_with = "lenient")]
    pub notes: Vec<Fact>,
    #[serde(deserialize_with = "lenient")]
    pub skipped: Vec<Fact>,
    /// The lines `import --skip-bad-lines` could not read.
    #[serde(deserialize_with = "lenient_list")]
    pub bad_lines: Option<Vec<BadLine>>,
}

/// A line an import skipped, and why.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct BadLine {
    pub line: Fact,
    pub why: Fact,
}

/// One figure of a published table, as typed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PublishedLine {
    pub line: Fact,
    pub cell: Fact,
    pub operation: Fact,
    pub metric: Fact,
    pub value: Fact,
    pub unit: Fact,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn conditions_of_any_age_read_and_a_rank_reads_only_as_a_whole_number() {
        let c = StoredConditions::of(&json!({
            "target": "/mnt", "backend": "io_uring", "verify": true, "largest_file_bytes": "big",
            "remote": {"protocol": "nfs", "nfs_port": 2049},
            "imported": {"tool": "fio", "notes": ["a", 3], "bad_lines": [{"line": 4, "why": "short"}, "x"]}
        }));
        assert_eq!((c.target.text(), c.backend.text()), (Some("/mnt"), Some("io_uring")));
        assert!(c.verify.is_true() && !c.direct.is_true());
        assert_eq!(c.largest_file_bytes, None, "text where a number belongs reads as absent");
        assert_eq!(c.remote.unwrap().nfs_port, Some(2049));
        let imported = c.imported.unwrap();
        assert_eq!(imported.notes.iter().filter_map(Fact::text).collect::<Vec<_>>(), ["a"]);
        let bad = imported.bad_lines.unwrap();
        assert_eq!((bad[0].line.json(), bad[1].line.json()), ("4".into(), "null".into()));
        assert_eq!(StoredConditions::of(&json!(null)), StoredConditions::default());
        assert_eq!(client_rank(&json!({"rank": 3})), Some(3));
        assert_eq!(client_rank(&json!({"rank": "3"})), None);
        assert_eq!(client_rank(&json!(7)), None);
        assert_eq!(client_rank(&json!([3])), None, "only an object names a rank");
    }
}
