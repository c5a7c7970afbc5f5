//! mdtest's options as a [`MetadataPlan`], checked by mdtest's own rules (what mdtest refuses,
//! `iomatrix mdtest` refuses, exit 2, before anything runs), and the counts mdtest's header
//! prints (its rule for spreading `-n` over the tree's folders).

use super::options::MdtestArgs;
use crate::layout::Counts;
use crate::plan::{ItemCount, ItemKinds, Layout, MetadataPlan, Neighbour, Phase, TreeShape};
use iomatrix_core::UsageError;
use std::time::Duration;

fn usage(msg: impl Into<String>) -> UsageError {
    UsageError::new(msg.into())
}

/// The plan mdtest's options ask for.
pub fn plan(a: &MdtestArgs) -> Result<MetadataPlan, UsageError> {
    let branch = a.branch.unwrap_or(1);
    check(a, branch)?;
    let items = match (a.items, a.items_per_dir) {
        (Some(n), None) => ItemCount::PerClient(n),
        (None, Some(i)) => ItemCount::PerFolder(i),
        (Some(_), Some(_)) => {
            return Err(usage(
                "-n with -I (mdtest's loops over a folder's items) is not taken: give -n (items per task) or -I \
                 (items per folder)",
            ))
        }
        (None, None) => return Err(usage("give -n N (items per task) or -I N (items per folder), as mdtest needs")),
    };
    if a.items == Some(0) || a.items_per_dir == Some(0) {
        return Err(usage("-n 0 or -I 0: give at least 1 item"));
    }
    let tree = TreeShape { depth: a.depth, branch, leaves_only: a.leaf_only };
    // As run metadata stores it: -n rounded down to a multiple of the folders holding items.
    let counts = Counts::of(&tree, items)
        .map_err(|e| usage(format!("-z {} -b {branch}: {e}; give a larger -n, a smaller tree, or -I", a.depth)))?;
    let items = match items {
        ItemCount::PerClient(_) => ItemCount::PerClient(counts.per_client),
        per_folder @ ItemCount::PerFolder(_) => per_folder,
    };
    let kinds = match (a.files_only, a.dirs_only) {
        (true, false) => ItemKinds::Files,
        (false, true) => ItemKinds::Dirs,
        _ => ItemKinds::Both,
    };
    Ok(MetadataPlan {
        items,
        kinds,
        tree,
        layout: if a.unique_dir { Layout::PerClient } else { Layout::Shared },
        phases: phases(a, kinds),
        write_bytes: a.write_bytes,
        read_bytes: a.read_bytes,
        fsync: a.sync_file,
        sync_after_phase: a.call_sync,
        neighbour: Neighbour { stride: a.stride },
        random_stat_seed: a.random.then(|| a.random_seed.unwrap_or_else(seed_from_clock)),
        iterations: a.iterations.unwrap_or(1),
        stonewall: a.stonewall_secs.filter(|s| *s > 0).map(Duration::from_secs),
        in_place: in_place(a),
        series_interval_ns: iomatrix_stats::series::DEFAULT_INTERVAL_NS,
        open: None,
        curve: None,
        latency_target: None,
    })
}

/// Whether the run works in -d's folder itself, as mdtest does: every run whose phases do not
/// both make and remove the items (IO500's separate -C, -T, -E and -r runs). A run that does
/// both (-C -r, or no phase named) works in a fresh working folder, removed at its end, so a
/// stopped run leaves nothing.
fn in_place(a: &MdtestArgs) -> bool {
    let all = !(a.create || a.stat || a.read || a.remove || a.rename);
    !(all || (a.create && a.remove))
}

/// A run without -C that read `-x`'s count (the count an earlier -C -W run's tasks went on
/// to): its phases work on that many files per task, as mdtest's do. Refused, exit 2, where
/// the count cannot be the earlier run's (0, or more than -n gives).
pub fn with_stonewall_count(plan: MetadataPlan, count: u64, file: &str) -> Result<MetadataPlan, UsageError> {
    let per_task = items_per_client(&plan);
    if count == 0 || count > per_task {
        return Err(usage(format!(
            "-x {file} holds {count}: the files per task an earlier -C run reached, which is 1 to the {per_task} \
             this run's -n gives; give the -n of the run that wrote it, or remove {file} to use -n"
        )));
    }
    if plan.kinds != ItemKinds::Files {
        return Err(usage(format!(
            "-x {file} read back without -F: mdtest's count is of files only, and this run stats, reads or removes \
             directories too; give -F, as IO500's lines do, or leave -x out"
        )));
    }
    let tree = plan.tree;
    let counts = Counts::of(&tree, ItemCount::PerClient(count))
        .map_err(|e| usage(format!("-x {file} holds {count}: {e}; give -L or a smaller tree")))?;
    Ok(MetadataPlan { items: ItemCount::PerClient(counts.per_client), ..plan })
}

/// mdtest's seed for -R without --random-seed: the time (every task the same).
fn seed_from_clock() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_secs())
}

/// What mdtest refuses (its `md_validate_tests`), refused here with its fix.
fn check(a: &MdtestArgs, branch: u32) -> Result<(), UsageError> {
    if a.stonewall_secs.is_some_and(|s| s > 0) && branch > 1 {
        return Err(usage(format!(
            "-W (the stonewall) works only with a branching factor of 1, as in mdtest; -b is {branch}: drop -W or \
             give -b 1"
        )));
    }
    if branch == 0 && a.depth > 0 {
        return Err(usage("-b 0 with -z above 0: give a branching factor of 1 or more"));
    }
    if a.iterations == Some(0) {
        return Err(usage("-i 0: give 1 iteration or more"));
    }
    if a.unique_dir && a.items.is_some() && a.items_per_dir.is_some() {
        return Err(usage("-u with both -n and -I: give only the number of items (-n) or the items per folder (-I)"));
    }
    let all = !(a.create || a.stat || a.read || a.remove || a.rename);
    if (all || (a.create && a.read)) && a.read_bytes > a.write_bytes {
        return Err(usage(format!(
            "-e {} reads more than -w {} writes to each file: give -e at most -w, as mdtest requires",
            a.read_bytes, a.write_bytes
        )));
    }
    Ok(())
}

/// The phases mdtest runs: all without -C, -T, -E, -r, -U; else those named (its rule), of the
/// item kinds chosen. No directory read: mdtest times none.
fn phases(a: &MdtestArgs, kinds: ItemKinds) -> Vec<Phase> {
    let all = !(a.create || a.stat || a.read || a.remove || a.rename);
    let dirs = kinds != ItemKinds::Files;
    let files = kinds != ItemKinds::Dirs;
    Phase::ALL
        .into_iter()
        .filter(|p| match p {
            Phase::TreeCreate => all || a.create,
            Phase::DirCreate => dirs && (all || a.create),
            Phase::DirStat => dirs && (all || a.stat),
            // Neither is one of mdtest's phases: it times no directory read and no find.
            Phase::DirReaddir | Phase::Find => false,
            Phase::DirRename => dirs && (all || a.rename),
            Phase::DirRemove => dirs && (all || a.remove),
            Phase::FileCreate => files && (all || a.create),
            Phase::FileStat => files && (all || a.stat),
            Phase::FileRead => files && (all || a.read),
            Phase::FileRemove => files && (all || a.remove),
            Phase::TreeRemove => all || a.remove,
        })
        .collect()
}

/// Folders in the tree: mdtest's `num_dirs_in_tree` (1 where the tree cannot be counted: a
/// checked plan always can).
pub fn tree_folders(tree: &TreeShape) -> u64 {
    Counts::of(tree, ItemCount::PerFolder(1)).map_or(1, |c| c.folders)
}

/// Items of one task, as mdtest resolves -n and -I: -n is spread evenly over the folders that
/// hold items, rounded down to a multiple of them (`-n 1000 -z 2 -b 4`: 987).
pub fn items_per_client(plan: &MetadataPlan) -> u64 {
    Counts::of(&plan.tree, plan.items).map_or(0, |c| c.per_client)
}

/// What mdtest's header calls the items: `files/directories`, `files` or `directories`.
pub fn item_words(kinds: ItemKinds) -> &'static str {
    match kinds {
        ItemKinds::Both => "files/directories",
        ItemKinds::Files => "files",
        ItemKinds::Dirs => "directories",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::front::options::parse;

    fn plan_of(line: &str) -> Result<MetadataPlan, UsageError> {
        let args: Vec<String> = line.split_whitespace().map(str::to_string).collect();
        plan(&parse(&args).unwrap())
    }

    #[test]
    fn io500s_mdtest_lines_become_plans() {
        let easy = plan_of("-n 1000 -u -L -F -P -G 270669 -N 1 -d d -x f -C -W 300 -a POSIX").unwrap();
        assert_eq!((easy.kinds, easy.layout, easy.neighbour.stride), (ItemKinds::Files, Layout::PerClient, 1));
        assert_eq!(easy.phases, [Phase::TreeCreate, Phase::FileCreate]);
        assert_eq!(easy.stonewall, Some(Duration::from_secs(300)));
        let hard = plan_of("-n 1000 -t -w 3901 -e 3901 -P -G 7 -N 1 -F -d d -x f -C -E -a POSIX").unwrap();
        assert_eq!((hard.write_bytes, hard.read_bytes, hard.layout), (3901, 3901, Layout::Shared));
        assert_eq!(hard.phases, [Phase::TreeCreate, Phase::FileCreate, Phase::FileRead]);
        let all = plan_of("-n 1000").unwrap();
        assert_eq!(all.phases.len(), 10, "every phase but the directory read: {:?}", all.phases);
        assert_eq!(
            plan_of("-n 10 -D -C -r").unwrap().phases,
            [Phase::TreeCreate, Phase::DirCreate, Phase::DirRemove, Phase::TreeRemove]
        );
    }

    #[test]
    fn io500s_separate_runs_work_in_place() {
        let write = plan_of("-n 200 -u -L -F -d d -x f -C -W 5").unwrap();
        assert!(write.in_place, "-C alone leaves its items");
        let stat = plan_of("-n 200 -u -L -F -d d -x f -T").unwrap();
        assert_eq!((stat.in_place, stat.phases.as_slice()), (true, &[Phase::FileStat][..]));
        let remove = plan_of("-n 200 -u -L -F -d d -x f -r").unwrap();
        assert_eq!(remove.phases, [Phase::FileRemove, Phase::TreeRemove]);
        assert!(remove.in_place && !remove.makes_items());
        let read = plan_of("-n 200 -t -w 3901 -e 3901 -N 1 -F -d d -x f -E").unwrap();
        assert_eq!((read.phases.as_slice(), read.read_bytes), (&[Phase::FileRead][..], 3901));
        assert!(!plan_of("-n 10 -C -T -r").unwrap().in_place, "makes and removes: a working folder");
        assert!(!plan_of("-n 10").unwrap().in_place);
        // -x's count read back: the phases work on that many files.
        let counted = with_stonewall_count(stat.clone(), 57, "f").unwrap();
        assert_eq!(counted.items, ItemCount::PerClient(57));
        for (count, says) in [(0, "holds 0"), (201, "1 to the 200")] {
            let e = with_stonewall_count(stat.clone(), count, "f").unwrap_err().to_string();
            assert!(e.contains(says), "{count}: {e}");
        }
        let both = plan_of("-n 200 -d d -x f -T").unwrap();
        assert!(with_stonewall_count(both, 5, "f").unwrap_err().to_string().contains("give -F"));
    }

    #[test]
    fn mdtests_counts_and_refusals() {
        let p = plan_of("-z 2 -b 4 -I 10 -L").unwrap();
        assert_eq!((tree_folders(&p.tree), items_per_client(&p)), (21, 160), "as mdtest's fixture prints");
        let rounded = plan_of("-n 1000 -z 2 -b 4").unwrap();
        assert_eq!((items_per_client(&rounded), rounded.items), (987, ItemCount::PerClient(987)), "stored rounded");
        assert_eq!(items_per_client(&plan_of("-n 1000 -z 3 -b 1 -L").unwrap()), 1000);
        for (line, says) in [
            ("-n 10 -z 2 -b 4 -W 5", "-W (the stonewall) works only with a branching factor of 1"),
            ("-n 10 -I 5", "-n with -I"),
            ("-u -n 10 -I 5", "-u with both -n and -I"),
            ("-F", "give -n N"),
            ("-n 10 -e 8", "-e 8 reads more than -w 0"),
            ("-n 10 -i 0", "-i 0"),
            ("-n 3 -z 2 -b 4", "-z 2 -b 4: 3 items per client over 21 folders leave none per folder"),
            ("-n 10 -z 40 -b 9", "more folders than can be counted"),
            ("-n 0", "-n 0 or -I 0"),
        ] {
            let e = plan_of(line).unwrap_err().to_string();
            assert!(e.contains(says), "{line}: {e}");
        }
    }
}
