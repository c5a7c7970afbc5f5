//! What a metadata run does, resolved: the shared vocabulary of the suite
//! (the runner, `iomatrix mdtest`'s front end, the importer of mdtest's
//! output and the IO500 study all speak it).

use iomatrix_core::CurveLoad;
use iomatrix_harness::curve::Curve;
use iomatrix_random::Arrival;
use serde::{Deserialize, Serialize};
use std::time::Duration;

/// One timed phase, between barriers, as mdtest times it (plus `DirReaddir`,
/// iomatrix's own: mdtest measures no directory read and prints no row for it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Phase {
    /// mkdir of every directory item.
    DirCreate,
    /// stat of every directory item.
    DirStat,
    /// iomatrix's addition: readdir of every folder holding items.
    DirReaddir,
    /// rename of every directory item (mdtest's "Directory rename").
    DirRename,
    /// rmdir of every directory item.
    DirRemove,
    /// create (+ `write_bytes` written, + fsync if asked) and close of every file item.
    FileCreate,
    /// iomatrix's addition, IO500's find: client 0 walks the iteration's tree once its files are
    /// made ([`crate::find`]), matching IO500's rule (`-name "*01*"`, `-size` the files'
    /// `write_bytes`, `-newer` the iteration's folder as made); its items are the entries it
    /// examined (IO500's rate), [`crate::PhaseResult::found`] the matches. Local folders only.
    Find,
    /// stat of every file item.
    FileStat,
    /// open, read `read_bytes`, close of every file item.
    FileRead,
    /// unlink of every file item.
    FileRemove,
    /// mkdir of the tree's folders (before the items' phases).
    TreeCreate,
    /// rmdir of the tree's folders (after them).
    TreeRemove,
}

impl Phase {
    /// Every phase, in the order a run performs them when all are chosen (mdtest's order:
    /// tree create; directories create, stat, read, rename, remove; files create, stat,
    /// read, remove; tree remove).
    pub const ALL: [Phase; 12] = [
        Phase::TreeCreate,
        Phase::DirCreate,
        Phase::DirStat,
        Phase::DirReaddir,
        Phase::DirRename,
        Phase::DirRemove,
        Phase::FileCreate,
        Phase::Find,
        Phase::FileStat,
        Phase::FileRead,
        Phase::FileRemove,
        Phase::TreeRemove,
    ];

    /// The row's name in mdtest's SUMMARY table ("Directory creation", "File stat",
    /// "Tree creation", ...); `None` for `DirReaddir`, which mdtest does not print.
    pub fn mdtest_row(self) -> Option<&'static str> {
        Some(match self {
            Phase::DirCreate => "Directory creation",
            Phase::DirStat => "Directory stat",
            Phase::DirReaddir | Phase::Find => return None,
            Phase::DirRename => "Directory rename",
            Phase::DirRemove => "Directory removal",
            Phase::FileCreate => "File creation",
            Phase::FileStat => "File stat",
            Phase::FileRead => "File read",
            Phase::FileRemove => "File removal",
            Phase::TreeCreate => "Tree creation",
            Phase::TreeRemove => "Tree removal",
        })
    }

    /// The cell's name in iomatrix ("dir-create", "file-stat", "tree-remove", ...).
    pub fn name(self) -> &'static str {
        match self {
            Phase::DirCreate => "dir-create",
            Phase::DirStat => "dir-stat",
            Phase::DirReaddir => "dir-readdir",
            Phase::DirRename => "dir-rename",
            Phase::DirRemove => "dir-remove",
            Phase::FileCreate => "file-create",
            Phase::Find => "find",
            Phase::FileStat => "file-stat",
            Phase::FileRead => "file-read",
            Phase::FileRemove => "file-remove",
            Phase::TreeCreate => "tree-create",
            Phase::TreeRemove => "tree-remove",
        }
    }

    /// Whether the phase runs open loop under `--rate` or a curve's point: one operation per
    /// item, each client's items issued one after another, so each item can start at its
    /// arrival. Not the tree's phases (a handful of folders, made by client 0 alone in a shared
    /// tree: too few arrivals to say anything of a rate), nor dir-readdir (one read per folder),
    /// nor find (client 0 alone walks, a folder's entries at a time): those stay closed loop.
    pub fn paced(self) -> bool {
        matches!(
            self,
            Phase::DirCreate
                | Phase::DirStat
                | Phase::DirRename
                | Phase::DirRemove
                | Phase::FileCreate
                | Phase::FileStat
                | Phase::FileRead
                | Phase::FileRemove
        )
    }
}

/// `--rate`: the open loop of the item phases ([`Phase::paced`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct OpenRate {
    /// Items a second, of all clients together (each client offers its even share).
    pub per_sec: u64,
    /// How the arrivals are spaced (`--arrivals`).
    pub arrival: Arrival,
}

/// Which items a run makes: mdtest's -F (files only), -D (directories only), or both (its default).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemKinds {
    /// Files and directories (mdtest's default).
    Both,
    /// Files only (mdtest -F).
    Files,
    /// Directories only (mdtest -D).
    Dirs,
}

/// Where each client's items live.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Layout {
    /// One tree shared by every client (mdtest's default): items of all clients side by side.
    Shared,
    /// A tree per client (mdtest -u).
    PerClient,
}

/// The tree the items live in: `depth` levels below its root, `branch` folders per folder
/// (mdtest -z and -b); a depth of 0 is the root alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeShape {
    /// Levels below the root (mdtest -z).
    pub depth: u32,
    /// Folders in each folder above the leaves (mdtest -b; 1 is a chain).
    pub branch: u32,
    /// Items in the leaves only (mdtest -L), else in every folder.
    pub leaves_only: bool,
}

/// How many items: per client in all (mdtest -n, spread over the tree's folders) or per folder
/// (mdtest -I).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ItemCount {
    /// Items per client in all (mdtest -n).
    PerClient(u64),
    /// Items per client in each folder that holds items (mdtest -I).
    PerFolder(u64),
}

/// mdtest's -N: a phase after create works on the items of the client `stride` ranks on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Neighbour {
    /// Ranks to step (mdtest -N); 0 is a client's own items.
    pub stride: usize,
}

/// A metadata run, resolved and checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MetadataPlan {
    /// How many items.
    pub items: ItemCount,
    /// Files, directories or both.
    pub kinds: ItemKinds,
    /// The tree.
    pub tree: TreeShape,
    /// Shared tree or a tree per client.
    pub layout: Layout,
    /// The phases chosen, in the order they run ([`Phase::ALL`]'s order).
    pub phases: Vec<Phase>,
    /// Bytes written to each file after its create (mdtest -w).
    pub write_bytes: u64,
    /// Bytes read from each file in the read phase (mdtest -e).
    pub read_bytes: u64,
    /// fsync each file after its write, before close (mdtest -y).
    pub fsync: bool,
    /// sync the file system after each phase, timed with it (mdtest -Y).
    pub sync_after_phase: bool,
    /// Work on a neighbour's items after create (mdtest -N).
    pub neighbour: Neighbour,
    /// Stat in random order, with this seed (mdtest -R[seed]).
    pub random_stat_seed: Option<u64>,
    /// Times the whole set of phases is run (mdtest -i).
    pub iterations: u32,
    /// Stop file creation after this long (mdtest -W); every client then goes on to the
    /// largest count any client reached.
    pub stonewall: Option<Duration>,
    /// Work in the target folder itself, in mdtest's layout (`test-dir.I-0/mdtest_tree...`),
    /// rather than in a fresh working folder removed at the run's end: what the run makes and
    /// does not remove stays for a later run, and a run without a create phase works on what
    /// an earlier run left (IO500's separate mdtest runs). `run metadata --in-place`; under
    /// `iomatrix mdtest`, every run whose phases do not both create and remove.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_place: bool,
    /// The interval of each phase's figures over time (`--interval`), in ns.
    #[serde(
        default = "iomatrix_harness::series::default_interval_ns",
        skip_serializing_if = "iomatrix_harness::series::is_default_interval"
    )]
    pub series_interval_ns: u64,
    /// `--rate`: every paced phase open loop at this rate.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open: Option<OpenRate>,
    /// `--curve`: the run's rounds are a curve's points (the maximum, then open-loop loads),
    /// every phase run at each, each round in a fresh `test-dir.R-0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub curve: Option<MetaCurve>,
    /// `--latency-target`: per item phase, the highest rate whose items meet it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub latency_target: Option<crate::target::MetaTarget>,
}

/// `--curve` of the metadata suite: its points and bound, and how its open-loop points space
/// their arrivals.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct MetaCurve {
    /// The points after the maximum and the bound (`--stop-curve`).
    #[serde(flatten)]
    pub curve: Curve,
    /// `--arrivals` [default: uniform].
    pub arrival: Arrival,
}

impl MetadataPlan {
    /// Whether a phase of the run makes something (the tree, directories or files): a run in
    /// place without one works on what an earlier run left and makes nothing.
    pub fn makes_items(&self) -> bool {
        self.phases.iter().any(|p| matches!(p, Phase::TreeCreate | Phase::DirCreate | Phase::FileCreate))
    }

    /// The open-loop rates (`--rate`, a curve's N/s) checked over `clients`: each client's even
    /// share within what a client schedules (1,000,000 a second), and a phase's arrivals (its
    /// items, each client's) enough to measure. A curve's percentages are shares of a maximum
    /// measured at run time: a client refuses a share past the limit there.
    pub fn check_rates(&self, clients: usize) -> Result<(), iomatrix_core::UsageError> {
        let n = clients.max(1);
        let items = crate::layout::Counts::of(&self.tree, self.items).map_or(0, |c| c.per_client);
        let rates: Vec<(String, u64)> = match (&self.open, &self.curve) {
            (Some(open), _) => vec![(format!("--rate {}", open.per_sec), open.per_sec)],
            (None, Some(c)) => c
                .curve
                .points
                .iter()
                .filter_map(|p| match p {
                    CurveLoad::Rate(r) => Some((format!("--curve {p}"), *r)),
                    _ => None,
                })
                .collect(),
            (None, None) => Vec::new(),
        };
        for (what, total) in rates {
            let per_client = total as f64 / n as f64;
            // A phase takes items/rate seconds: its arrivals are its items, whatever the rate.
            let duration_ms = (items as f64 * 1000.0 / per_client).ceil() as u64;
            iomatrix_harness::curve::check_rate(&format!("{what} over {n} client(s)"), per_client, duration_ms)?;
        }
        Ok(())
    }

    /// Times the chosen phases run one after another, each time in a fresh `test-dir.R-0`: the
    /// iterations (mdtest -i), or a curve's points, its maximum first.
    pub fn rounds(&self) -> u32 {
        if self.latency_target.is_some() {
            // The maximum, the search's rounds, and the round measured at the levels found.
            return 2 + crate::target::MAX_SEARCH_ROUNDS;
        }
        self.curve.as_ref().map_or(self.iterations, |c| 1 + c.curve.points.len() as u32)
    }

    /// The load round `round` offers under `--curve`: its maximum first, then the points; None
    /// without a curve.
    pub fn load_of(&self, round: u32) -> Option<CurveLoad> {
        let curve = self.curve.as_ref()?;
        match round {
            0 => Some(CurveLoad::Max),
            r => curve.curve.points.get(r as usize - 1).copied(),
        }
    }
}
