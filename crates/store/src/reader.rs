//! The one reader of a stored run: it turns the JSON a run stores (its environment, the
//! conditions every suite records, each client's rank) into types, so shared code (analysis,
//! the reports, the binary) reads a stored run through these and never by a key into its JSON.
//! A cell's figures read through [`CellRow::figures`](crate::CellRow::figures), declared beside it.
//!
//! Stored runs of any age read: a field that is missing, or holds another type, reads as
//! absent ([`iomatrix_environment::stored::lenient`]), as the string-keyed reads these replace
//! did. What a suite alone records (bonnie's `per_char`, access's `pin`, a file-server plan's
//! sizes) is read by the suite itself, in its own crate, into the suite-neutral [`SuiteFacts`]:
//! the binary registers each suite's reader once ([`register_suites`]) and shared code asks
//! [`StoredRun::suite_facts`].

use crate::{Records, StoredRun};
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

    /// What the run's suite alone records (its own conditions, its plan's size mix), as its
    /// suite's registered reader ([`register_suites`]) types them; nothing for a suite this
    /// build does not know.
    pub fn suite_facts(&self) -> SuiteFacts {
        let readers = SUITE_READERS.get().map_or(&[][..], Vec::as_slice);
        readers
            .iter()
            .find(|r| r.suite == self.summary.suite)
            .map_or_else(SuiteFacts::default, |r| (r.read)(&self.records()))
    }

    /// The run's plan as named facts ("path.to.key" -> the value shown, "none" for a flag not
    /// given): what `compare` lists as differences and what tells repeats of one setup apart.
    pub fn plan_facts(&self) -> Flat {
        flattened(&self.plan, "none")
    }

    /// The plan's facts that make the run's setup: [`Self::plan_facts`] without the keys that do
    /// not ([`NOT_THE_SETUP`]). Two runs with the same setup facts ran the same plan.
    pub fn setup_facts(&self) -> Flat {
        setup_facts_of(&self.plan)
    }

    /// The run's environment as named facts ("unknown" for a fact not read), with the iomatrix
    /// version that recorded it (`iomatrix_version`).
    pub fn environment_facts_flat(&self) -> Flat {
        let mut flat = flattened(&self.environment, "unknown");
        if self.environment.is_object() {
            flat.insert("iomatrix_version".into(), self.summary.iomatrix_version.clone());
        }
        flat
    }

    /// The conditions `compare` names when they differ between sides, in the order it names
    /// them: those every suite records, and after the partition's alignment the suite's own
    /// ([`SuiteFacts::compared`]). Each is absent where the run does not say.
    pub fn compared_conditions(&self) -> Vec<(String, Fact)> {
        let c: ComparedConditions = lenient_object(&self.conditions).ok().flatten().unwrap_or_default();
        let first = [
            ("suite", Fact::Text(self.summary.suite.clone())),
            ("backend", c.backend),
            ("direct", c.direct),
            ("cache", c.cache),
            ("clients", c.clients),
            ("files_vs_ram", c.files_vs_ram),
            ("fs_type", c.fs_type),
            ("partition_alignment_bytes", c.partition_alignment_bytes),
        ];
        let last = [
            ("submissions", c.submissions),
            ("completions", c.completions),
            ("data", c.data),
            ("verify", c.verify),
            ("generator", c.generator),
            ("machine load", self.machine_summary().map_or(Fact::Absent, |m| Fact::Text(m.state()))),
        ];
        let named = |(name, fact): (&str, Fact)| (name.to_string(), fact);
        first.into_iter().map(named).chain(self.suite_facts().compared).chain(last.into_iter().map(named)).collect()
    }

    /// What else the machine did over the run's cells, from each cell's record; None where no
    /// cell recorded it (runs stored before it was, imported runs).
    pub fn machine_summary(&self) -> Option<MachineSummary> {
        let loads: Vec<_> = self.cell_results.iter().filter_map(|c| Some((c, c.machine_load()?))).collect();
        if loads.is_empty() {
            return None;
        }
        let max = |f: fn(&iomatrix_environment::MachineLoad) -> Option<f64>| {
            loads.iter().filter_map(|(_, l)| f(l)).fold(None, |m: Option<f64>, v| Some(m.map_or(v, |m| m.max(v))))
        };
        let averages = loads.iter().flat_map(|(_, l)| [l.load_avg_start, l.load_avg_end]).flatten();
        let load_avg =
            averages.fold(None, |r: Option<(f64, f64)>, v| Some(r.map_or((v, v), |(lo, hi)| (lo.min(v), hi.max(v)))));
        Some(MachineSummary {
            judged: self.conditions_facts().busy_threshold.as_deref() != Some("off"),
            cells: loads.len(),
            busy_cells: loads.iter().filter(|(c, _)| c.state.cause.as_deref().is_some_and(is_machine_busy)).count(),
            other_cpu_max: max(|l| l.other_cpu),
            steal_cpu_max: max(|l| l.steal_cpu),
            load_avg,
        })
    }

    /// What the run could not measure, typed; None when nothing was lost.
    pub fn lost_facts(&self) -> Option<StoredLost> {
        self.lost.as_ref().map(|l| lenient_object(l).ok().flatten().unwrap_or_default())
    }
}

/// Whether a disturbed cell's cause names a busy machine (the harness's `machine busy: ...`).
pub fn is_machine_busy(cause: &str) -> bool {
    cause.starts_with(MACHINE_BUSY) || cause.contains(&format!("; {MACHINE_BUSY}"))
}

/// How a disturbed cell's cause begins when the machine was busy.
pub const MACHINE_BUSY: &str = "machine busy:";

/// What else the machine did over a run's cells ([`StoredRun::machine_summary`]).
#[derive(Debug, Clone, PartialEq)]
pub struct MachineSummary {
    /// Whether the cells were judged (`--busy-threshold` was not `off`).
    pub judged: bool,
    /// Cells that recorded the machine's load.
    pub cells: usize,
    /// Of them, those stored disturbed because the machine was busy.
    pub busy_cells: usize,
    /// The busiest cell's other processes' CPU use, in CPUs; None where unknown in every cell.
    pub other_cpu_max: Option<f64>,
    /// The most steal in a cell, in CPUs.
    pub steal_cpu_max: Option<f64>,
    /// The lowest and highest 1-minute load average at a cell's start or end.
    pub load_avg: Option<(f64, f64)>,
}

impl MachineSummary {
    /// The machine's state as `compare` names it: "quiet", "busy in 3 of 8 cell(s)", or "not
    /// judged (--busy-threshold off)".
    pub fn state(&self) -> String {
        if !self.judged {
            "not judged (--busy-threshold off)".into()
        } else if self.busy_cells == 0 {
            "quiet".into()
        } else {
            format!("busy in {} of {} cell(s)", self.busy_cells, self.cells)
        }
    }

    /// The run's line for people: "quiet; other processes up to 12% of a CPU, steal up to 0%,
    /// load average 0.52 to 1.10".
    pub fn shown(&self) -> String {
        format!("{}; {}", self.state(), self.figures())
    }

    /// What was measured, without the state: "other processes up to 12% of a CPU, steal up to
    /// 0%, load average 0.52 to 1.10".
    pub fn figures(&self) -> String {
        let pct = |cpus: f64| format!("{:.0}%", cpus * 100.0);
        let mut parts = Vec::new();
        parts.push(match self.other_cpu_max {
            Some(c) => format!("other processes up to {} of a CPU", pct(c)),
            None => "other processes' CPU unknown".into(),
        });
        if let Some(s) = self.steal_cpu_max {
            parts.push(format!("steal up to {}", pct(s)));
        }
        match self.load_avg {
            Some((lo, hi)) => parts.push(format!("load average {lo:.2} to {hi:.2}")),
            None => parts.push("load average unknown".into()),
        }
        parts.join("; ")
    }
}

/// A suite's reader of its own stored records, registered by the binary's suite table.
#[derive(Clone, Copy)]
pub struct SuiteReader {
    /// The suite's name, as its runs store it.
    pub suite: &'static str,
    /// Its records, typed by the suite's own types into what shared code reads.
    pub read: fn(&Records<'_>) -> SuiteFacts,
}

static SUITE_READERS: std::sync::OnceLock<Vec<SuiteReader>> = std::sync::OnceLock::new();

/// Registers every suite's reader, once per process (the binary does it at start, from its suite
/// table); a second call changes nothing. Until it is called, [`StoredRun::suite_facts`] is empty.
pub fn register_suites(readers: Vec<SuiteReader>) {
    let _ = SUITE_READERS.set(readers);
}

/// What a suite alone records about a run, typed by the suite and handed to shared code: the
/// lines its conditions add to a run's header, and its plan's mix of file sizes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SuiteFacts {
    /// The lines the suite's own conditions add to the conditions every run shows.
    pub condition_lines: Vec<ConditionLine>,
    /// A plan with files of several sizes, named by their range and count ("4k..1m (3 sizes)")
    /// or their source ("sizes from a profile"): cells of such a run are named by it.
    pub size_mix: Option<String>,
    /// The suite's own conditions `compare` names when they differ between sides (IOzone's
    /// `fsync_timed`), by name, each absent where the run does not say.
    pub compared: Vec<(String, Fact)>,
    /// Figures that move together by construction, each set one effect in compare's verdict
    /// counts (a closed loop's per-operation rates: each is the loop's rate times a constant).
    pub bound_rates: Vec<BoundRates>,
}

/// The per-operation rates of one cell's test that are bound together by construction: in a
/// closed loop of flows every operation's rate is the loop's rate times a constant.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BoundRates {
    /// The cells' test (a personality's phase) whose operations' rates are bound.
    pub test: String,
    /// The operations, as the cells store their summaries.
    pub operations: Vec<String>,
    /// What binds them, for the text: "flow loop".
    pub what: &'static str,
}

/// One line of a run's conditions that its suite alone records ("placement", "per-char").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConditionLine {
    /// Which of the lines every run shows it follows.
    pub after: LineAfter,
    /// The line's name.
    pub name: String,
    /// Its value, in words.
    pub shown: String,
}

/// Where a suite's own condition line goes among the lines every run shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineAfter {
    /// Right after "clients" (where the clients' threads ran).
    Clients,
    /// After what the timed interval holds ("timing").
    Timing,
    /// After the block device.
    BlockDevice,
    /// After how io_uring's requests went in and came back.
    Backend,
}

impl ConditionLine {
    /// The line `name: shown`, placed after `after`.
    pub fn new(after: LineAfter, name: &str, shown: impl Into<String>) -> ConditionLine {
        ConditionLine { after, name: name.to_string(), shown: shown.into() }
    }
}

/// Stored facts by name: "path.to.key" -> the value as shown.
pub type Flat = std::collections::BTreeMap<String, String>;

/// Stored JSON flattened to named facts: objects by "a.b", a list of objects as "a (entries)"
/// and "a[i].b", `null` as `null_shown`, text as itself and anything else as its JSON text.
/// Plan keys that do not make two runs different setups: how many samples a run took
/// (`repeats`), which cells a `--tolerance` pass measured again (`only`, `pass`).
pub const NOT_THE_SETUP: [&str; 3] = ["repeats", "only", "pass"];

/// The top-level key of a flattened fact ("limit" of "limit.duration_ms").
pub fn top_key(flat_key: &str) -> &str {
    flat_key.split(['.', '[', ' ']).next().unwrap_or_default()
}

/// A stored plan's setup facts (see [`StoredRun::setup_facts`]).
pub(crate) fn setup_facts_of(plan: &serde_json::Value) -> Flat {
    let mut flat = flattened(plan, "none");
    flat.retain(|key, _| !NOT_THE_SETUP.contains(&top_key(key)));
    flat
}

fn flattened(v: &serde_json::Value, null_shown: &str) -> Flat {
    fn flatten(prefix: &str, v: &serde_json::Value, null_shown: &str, out: &mut Flat) {
        match v {
            serde_json::Value::Object(map) => {
                for (k, v) in map {
                    let name = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    flatten(&name, v, null_shown, out);
                }
            }
            serde_json::Value::Array(items) if !items.is_empty() && items.iter().all(serde_json::Value::is_object) => {
                out.insert(format!("{prefix} (entries)"), items.len().to_string());
                for (i, item) in items.iter().enumerate() {
                    flatten(&format!("{prefix}[{i}]"), item, null_shown, out);
                }
            }
            serde_json::Value::Null => {
                out.insert(prefix.to_string(), null_shown.to_string());
            }
            serde_json::Value::String(s) => {
                out.insert(prefix.to_string(), s.clone());
            }
            other => {
                out.insert(prefix.to_string(), other.to_string());
            }
        }
    }
    let mut out = Flat::new();
    flatten("", v, null_shown, &mut out);
    out
}

/// The conditions every suite records that `compare` names when they differ, each as stored.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct ComparedConditions {
    backend: Fact,
    direct: Fact,
    cache: Fact,
    clients: Fact,
    files_vs_ram: Fact,
    fs_type: Fact,
    partition_alignment_bytes: Fact,
    submissions: Fact,
    completions: Fact,
    data: Fact,
    verify: Fact,
    generator: Fact,
}

/// Where a merged run came from: the database merged and the run's id there.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredOrigin {
    /// The database the run was merged from, as its path was given.
    #[serde(deserialize_with = "lenient")]
    pub file: Option<String>,
    /// The run's id in that database.
    #[serde(deserialize_with = "lenient")]
    pub run_id: Option<i64>,
}

/// What a run could not measure, counted ([`Store::record_lost`](crate::Store::record_lost)).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredLost {
    /// Planned cells that were not stored (failed, interrupted or never reached).
    pub cells_not_stored: Fact,
    /// The cells the plan had.
    pub cells_planned: Fact,
    /// Client-and-cell pairs whose figures a failure lost.
    pub client_cells_failed: Fact,
    /// The cells whose clients failed, each with how many.
    #[serde(deserialize_with = "lenient_list")]
    pub failed: Option<Vec<LostCell>>,
}

/// A cell some of whose clients failed, and how many.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct LostCell {
    /// The cell, as the run names it ("write file 256m record 1m").
    pub cell: Fact,
    /// How many of its clients failed.
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
    /// The target as given (a folder, a device or a server's URL).
    pub target: Fact,
    /// The target's file system type, or the protocol client.
    pub fs_type: Fact,
    /// The target mount's source, or the server.
    pub mount_source: Fact,
    /// The backend's name ("psync", "io_uring").
    pub backend: Fact,
    /// Whether the I/O bypassed the page cache (O_DIRECT).
    pub direct: Fact,
    /// What the page cache did, in words ("bypassed (O_DIRECT)", "page cache in use", a cold walk's drop).
    pub cache: Fact,
    /// How many clients ran each cell.
    pub clients: Fact,
    /// Null where a suite cannot know its file sizes beforehand (backup).
    pub files_vs_ram: Fact,
    /// The largest file one client works on, in bytes; None where not stored.
    #[serde(deserialize_with = "lenient")]
    pub largest_file_bytes: Option<u64>,
    /// The machine's RAM in bytes when the run started; None where not stored.
    #[serde(deserialize_with = "lenient")]
    pub ram_bytes: Option<u64>,
    /// How the files came to be before the timed pass, in words; None where the suite says nothing.
    #[serde(deserialize_with = "lenient")]
    pub prepare: Option<String>,
    /// What the timed interval holds, in words (a suite that times only part of its work says so).
    #[serde(deserialize_with = "lenient")]
    pub timing: Option<String>,
    /// io_uring's submission and completion modes.
    #[serde(deserialize_with = "lenient")]
    pub submissions: Option<String>,
    /// How io_uring's completions were waited for; None for other backends.
    #[serde(deserialize_with = "lenient")]
    pub completions: Option<String>,
    /// What the written data holds, in words (stamped blocks, or one reused buffer).
    #[serde(deserialize_with = "lenient")]
    pub data: Option<String>,
    /// Whether `--verify` checked the data read back.
    pub verify: Fact,
    /// What `--verify` covered, where a suite covers only part of its work (Bonnie's tests).
    #[serde(deserialize_with = "lenient")]
    pub verify_scope: Option<String>,
    /// Where stamping and checking ran against the timed pass, in words.
    pub verify_timing: Fact,
    /// Absent in runs stored before the generator was named.
    #[serde(deserialize_with = "lenient")]
    pub generator: Option<String>,
    /// The rule a busy machine's cells were judged by (`--busy-threshold`: "cpu=100%,steal=10%,io=10%"
    /// or "off"); absent in runs stored before it was recorded.
    #[serde(deserialize_with = "lenient")]
    pub busy_threshold: Option<String>,
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
    /// "NFS" or "SMB".
    pub protocol: Fact,
    /// The protocol version agreed with the server.
    pub version: Fact,
    /// The server's host.
    pub server: Fact,
    /// The user the session was made as.
    pub user: Fact,
    /// The NFS server's port; None for SMB.
    #[serde(deserialize_with = "lenient")]
    pub nfs_port: Option<u64>,
    /// The SMB share; None for NFS.
    #[serde(deserialize_with = "lenient")]
    pub share: Option<String>,
    /// The largest read the server takes, in bytes; None where not agreed.
    #[serde(deserialize_with = "lenient")]
    pub read_max_bytes: Option<u64>,
    /// The largest write the server takes, in bytes; None where not agreed.
    #[serde(deserialize_with = "lenient")]
    pub write_max_bytes: Option<u64>,
    /// How writes are made stable on the server (NFS: UNSTABLE writes, COMMIT on flush).
    #[serde(deserialize_with = "lenient")]
    pub write_stability: Option<String>,
    /// What may have held the figures back (e.g. TCP_NODELAY not set), in words; None when nothing.
    #[serde(deserialize_with = "lenient")]
    pub known_limits: Option<String>,
}

/// An imported run's source, as its conditions store it (`imported`).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct StoredImport {
    /// The tool whose results were imported ("fio", "bonnie++").
    #[serde(deserialize_with = "lenient")]
    pub tool: Option<String>,
    /// The tool's version, where the file says.
    #[serde(deserialize_with = "lenient")]
    pub version: Option<String>,
    /// The file the results were imported from.
    #[serde(deserialize_with = "lenient")]
    pub source: Option<String>,
    /// When the tool measured, where the file says.
    #[serde(deserialize_with = "lenient")]
    pub measured_at: Option<String>,
    /// A published table (`import --format published`).
    #[serde(deserialize_with = "lenient")]
    pub published: Option<bool>,
    /// What the file did not say, notes, what was skipped: the items that are text.
    #[serde(deserialize_with = "lenient")]
    pub unknown: Vec<Fact>,
    /// Notes on the import (what was read how), the items that are text.
    #[serde(deserialize_with = "lenient")]
    pub notes: Vec<Fact>,
    /// What the import skipped, the items that are text.
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
    /// The line's number in the file imported.
    pub line: Fact,
    /// Why it could not be read.
    pub why: Fact,
}

/// One figure of a published table, as typed.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct PublishedLine {
    /// The line's number in the table.
    pub line: Fact,
    /// The cell the figure belongs to.
    pub cell: Fact,
    /// The operation, where the table names one.
    pub operation: Fact,
    /// The figure's name.
    pub metric: Fact,
    /// The figure, as typed.
    pub value: Fact,
    /// The figure's unit.
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

    #[test]
    fn the_machine_state_is_quiet_or_busy_and_unknown_is_said() {
        let quiet = MachineSummary {
            judged: true,
            cells: 8,
            busy_cells: 0,
            other_cpu_max: Some(0.05),
            steal_cpu_max: None,
            load_avg: None,
        };
        assert_eq!(quiet.state(), "quiet");
        assert_eq!(quiet.shown(), "quiet; other processes up to 5% of a CPU; load average unknown");
        let busy = MachineSummary {
            busy_cells: 3,
            other_cpu_max: None,
            steal_cpu_max: Some(0.02),
            load_avg: Some((0.5, 8.25)),
            ..quiet
        };
        assert_eq!(busy.state(), "busy in 3 of 8 cell(s)");
        assert_eq!(
            busy.shown(),
            "busy in 3 of 8 cell(s); other processes' CPU unknown; steal up to 2%; load average 0.50 to 8.25"
        );
        assert_eq!(MachineSummary { judged: false, ..quiet.clone() }.state(), "not judged (--busy-threshold off)");
        assert!(is_machine_busy("machine busy: other processes 160% of a CPU while 0% was free"));
        assert!(is_machine_busy("the process was stopped for 5.0 s; machine busy: steal"));
        assert!(!is_machine_busy("the process was stopped for 5.0 s"));
    }
}
